/* `kiln inspect`: a readable (or JSON) summary of one Cast file, baked blob or imported source
 * scene, plus every diagnostic the reader, the typed accessors or the importer produce.
 *
 * This file holds the verb: its options, its help and the dispatch by the file's leading bytes.
 * A Cast file is read into a summary by the walk (inspect_walk.c, inspect_summary.h) and printed
 * by inspect_text.c or inspect_json.c; a blob is summarised by inspect_blob.c.
 */
#define _POSIX_C_SOURCE 200809L

#include <string.h>

#include "cli.h"
#include "inspect_blob.h"
#include "inspect_source.h"
#include "inspect_summary.h"
#include "kiln/bake/source.h"
#include "kiln/bake/cast.h"

/* The command line. */
typedef struct kiln__inspect {
    const char *path;
    const char *format;           /* --format: an importer's name, NULL: found from the bytes */
    int         json, quiet, source;
} kiln__inspect;

/* ---- the verb -------------------------------------------------------------------------------- */

enum { OPT_JSON, OPT_QUIET, OPT_SOURCE, OPT_FORMAT, OPT_HELP };

static const kiln__cli_opt kiln__inspect_opts[] = {
    {"json", 'j', NULL, OPT_JSON, "print one JSON document instead of text (docs/inspect-json.md)"},
    {"quiet", 'q', NULL, OPT_QUIET, "do not print warnings on stderr (errors are always printed)"},
    {"source", 0, NULL, OPT_SOURCE, "show what the importer hands the bake (the source scene), for any format"},
    {"format", 0, "NAME", OPT_FORMAT, "read FILE as NAME (an importer of `kiln --version`) whatever its bytes; 'cast' shows the Cast reader's view"},
    {"help", 'h', NULL, OPT_HELP, "show this help"},
};

static void kiln__inspect_help(FILE *out)
{
    fputs("Usage: " KILN_CLI_NAME " inspect [options] FILE\n"
          "\n"
          "Reads a Cast file the way the baker does and prints a summary: size, version, root\n"
          "count, node counts by kind; per model its transform, skeleton, meshes (vertices,\n"
          "faces, layers, skin, material, faces the baker will drop), hair, blend shapes and\n"
          "materials; per animation its rate, looping, frame range, curves by property and mode,\n"
          "mode overrides and notification tracks; instances grouped by referenced file; metadata.\n"
          "A blob is summarised likewise; a file in another format an importer reads (found\n"
          "from its bytes, or named by --format) and --source show the imported source scene.\n"
          "Bytes no importer recognises fail, naming the formats this build reads.\n"
          "Diagnostics go to stderr as 'FILE: severity: node-path: message (byte offset N)'.\n"
          "FILE may be '-' for standard input.\n"
          "\n"
          "Options:\n",
          out);
    kiln__cli_print_options(out, kiln__inspect_opts, sizeof kiln__inspect_opts / sizeof kiln__inspect_opts[0]);
    fputs("\n"
          "Exit status:\n"
          "  0  the file reads cleanly (warnings allowed)\n"
          "  1  usage error\n"
          "  2  the file cannot be read or parsed, or reading it drops data (any error\n"
          "     diagnostic: a node rejected, faces with bad indices, a curve cut short, ...)\n"
          "  4  the output could not be written\n",
          out);
}

static void kiln__inspect_print_diags(const kiln__inspect *o, const kiln__insp_summary *s)
{
    for (size_t i = 0; i < s->diag_count; i++) {
        if (o->quiet && s->diags[i].severity != KILN_SEVERITY_ERROR) continue;
        kiln__cli_print_diag(stderr, o->path, &s->diags[i]);
    }
    uint64_t total = kiln__insp_diag_total(s);
    if (total > s->diag_count)
        fprintf(stderr, "%s: note: %llu more diagnostics not shown\n", o->path, (unsigned long long)(total - s->diag_count));
}

/* Parses, walks and prints a Cast file. */
static int kiln__inspect_cast(const kiln__inspect *o, kiln__insp_summary *s, const kiln__cli_file *file)
{
    kiln_cast_parse_options opt;
    memset(&opt, 0, sizeof opt);
    opt.diag = s->sink;
    kiln_cast_doc *doc = NULL;
    kiln_diag err;
    kiln_result r = kiln_cast_parse(file->data, file->size, &opt, &doc, &err);
    if (r != KILN_OK) {
        /* Structural failure: nothing to summarise. The fault joins the diagnostics so that
         * JSON consumers find it in the same place as every other problem. */
        if (err.code == KILN_OK) err.code = r;
        err.severity = KILN_SEVERITY_ERROR;
        kiln__insp_add_diag(s, &err);
        if (o->json) kiln__insp_print_json_failure(s, &err, KILN_EXIT_INPUT);
        kiln__inspect_print_diags(o, s);
        return KILN_EXIT_INPUT;
    }

    int status = KILN_EXIT_OK;
    if (!kiln__insp_walk(s, doc)) {
        fprintf(stderr, KILN_CLI_NAME ": out of memory while summarising '%s'\n", o->path);
        status = KILN_EXIT_INPUT;
    } else {
        if (s->by_severity[KILN_SEVERITY_ERROR]) status = KILN_EXIT_INPUT;
        if (o->json) kiln__insp_print_json(s, status);
        else kiln__insp_print_text(s);
    }
    kiln__inspect_print_diags(o, s);
    kiln_cast_free(doc);
    return status;
}

static int kiln__inspect_file(const kiln__inspect *o)
{
    kiln__cli_file file;
    if (!kiln__cli_file_load(o->path, &file)) return KILN_EXIT_INPUT;
    int status;
    /* A blob; Cast (found by its bytes or named) in its node view unless --source; any other
     * format, or --source: the source scene. Bytes no importer recognises fail there with
     * ERR_FORMAT_UNKNOWN naming the formats this build reads. */
    const kiln_importer *imp = o->format ? kiln_importer_find(o->format) : kiln_importer_detect(file.data, file.size);
    int cast = imp && strcmp(imp->name, "cast") == 0;
    if (!o->format && !imp && kiln__is_blob(file.data, file.size)) {
        status = kiln__inspect_blob(o->path, file.data, file.size, o->json);
    } else if (o->source || !cast) {
        status = kiln__inspect_source(o->path, file.data, file.size, o->format, o->json, o->quiet);
    } else {
        kiln__insp_summary s;
        kiln__insp_init(&s, o->path, file.size);
        status = kiln__inspect_cast(o, &s, &file);
        kiln__insp_free(&s);
    }
    kiln__cli_file_free(&file);
    return status;
}

static int kiln__inspect_run(int argc, char **argv)
{
    kiln__inspect s;
    memset(&s, 0, sizeof s);
    kiln__cli_args a;
    kiln__cli_args_init(&a, "inspect", argc, argv, kiln__inspect_opts,
                        sizeof kiln__inspect_opts / sizeof kiln__inspect_opts[0]);
    for (int k; (k = kiln__cli_args_next(&a)) != KILN_CLI_ARGS_END;) {
        if (k == KILN_CLI_ARGS_ERROR) return KILN_EXIT_USAGE;
        if (k == KILN_CLI_ARGS_POSITIONAL) {
            if (s.path) return kiln__cli_usage_error("inspect", "one input file expected, got '%s' and '%s'", s.path, a.value);
            s.path = a.value;
            continue;
        }
        switch (kiln__inspect_opts[k].key) {
        case OPT_JSON: s.json = 1; break;
        case OPT_QUIET: s.quiet = 1; break;
        case OPT_SOURCE: s.source = 1; break;
        case OPT_FORMAT: s.format = a.value; break;
        case OPT_HELP: kiln__inspect_help(stdout); return KILN_EXIT_OK;
        default: break;
        }
    }
    if (!s.path) return kiln__cli_usage_error("inspect", "missing input file");
    return kiln__inspect_file(&s);
}

const kiln__cli_verb kiln__cli_verb_inspect = {
    "inspect",
    "summarise a Cast file: nodes, models, animations, instances, diagnostics",
    kiln__inspect_run,
    kiln__inspect_help,
};
