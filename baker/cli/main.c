/* The `kiln` command: dispatches `kiln VERB [args]` to the verb table below. Each verb lives in
 * its own file and is described by a kiln__cli_verb (cli.h). */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <string.h>

#include "cli.h"
#include "kiln/bake/source.h"
#include "kiln/version.h"

static const kiln__cli_verb *const kiln__verbs[] = {
    &kiln__cli_verb_inspect,
    &kiln__cli_verb_bake,
    &kiln__cli_verb_verify,
    &kiln__cli_verb_pose,
    &kiln__cli_verb_convert,
    &kiln__cli_verb_view,
    &kiln__cli_verb_plot,
};
#define KILN__VERB_COUNT (sizeof kiln__verbs / sizeof kiln__verbs[0])

static const kiln__cli_verb *kiln__find_verb(const char *name)
{
    for (size_t i = 0; i < KILN__VERB_COUNT; i++)
        if (strcmp(kiln__verbs[i]->name, name) == 0) return kiln__verbs[i];
    return NULL;
}

static void kiln__main_help(FILE *out)
{
    fputs("Usage: " KILN_CLI_NAME " COMMAND [options] [args]\n"
          "       " KILN_CLI_NAME " help COMMAND | " KILN_CLI_NAME " COMMAND --help\n"
          "       " KILN_CLI_NAME " --version\n"
          "\n"
          "Reads Cast, Unigine .mesh/.anim, *.Shape and LODka3D *.lod files (any format an importer\n"
          "of this build reads: --version lists them) and prepares them for the kiln runtime.\n"
          "\n"
          "Commands:\n",
          out);
    for (size_t i = 0; i < KILN__VERB_COUNT; i++) fprintf(out, "  %-10s %s\n", kiln__verbs[i]->name, kiln__verbs[i]->summary);
    fputs("\n"
          "Options:\n"
          "  -h, --help     show this help (with a command: that command's help)\n"
          "  --version      print the version and build configuration\n"
          "\n"
          "Exit status:\n"
          "  0  success (warnings may have been printed)\n"
          "  1  usage error: unknown command or option, missing or extra argument\n"
          "  2  bad input: a file cannot be read, is malformed, or reading it drops data\n"
          "  4  output failure: the output could not be written\n",
          out);
}

static int kiln__main(int argc, char **argv)
{
    if (argc < 2) {
        kiln__main_help(stderr);
        return KILN_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        if (argc > 2) return kiln__cli_usage_error(NULL, "unexpected argument '%s'", argv[2]);
        kiln__main_help(stdout);
        return KILN_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        if (argc > 2) return kiln__cli_usage_error(NULL, "unexpected argument '%s'", argv[2]);
        printf("%s\n", kiln_build_info());
        printf("importers:\n");
        for (uint32_t i = 0; i < kiln_importer_count(); i++) {
            const kiln_importer *imp = kiln_importer_at(i);
            printf("  %-14s %s\n", imp->name, imp->description);
        }
        return KILN_EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0) {
        if (argc == 2) {
            kiln__main_help(stdout);
            return KILN_EXIT_OK;
        }
        if (argc > 3) return kiln__cli_usage_error(NULL, "help takes one command name");
        const kiln__cli_verb *v = kiln__find_verb(argv[2]);
        if (!v) return kiln__cli_usage_error(NULL, "unknown command '%s'", argv[2]);
        v->help(stdout);
        return KILN_EXIT_OK;
    }
    if (cmd[0] == '-') return kiln__cli_usage_error(NULL, "unknown option '%s'", cmd);
    const kiln__cli_verb *v = kiln__find_verb(cmd);
    if (!v) return kiln__cli_usage_error(NULL, "unknown command '%s'", cmd);
    if (kiln__cli_wants_help(argc - 1, argv + 1)) {
        v->help(stdout);
        return KILN_EXIT_OK;
    }
    return v->run(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
    /* A closed pipe must surface as a write error (exit 4), not kill the process silently. */
    signal(SIGPIPE, SIG_IGN);
    int status = kiln__main(argc, argv);
    return kiln__cli_finish_stdout(status);
}
