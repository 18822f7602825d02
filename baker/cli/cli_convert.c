/* `kiln convert`: any importable inputs in, one Cast file out (kiln_source_import, then
 * kiln_cast_export_save). The output is written atomically: a failed conversion never leaves
 * a partial or an empty file, and an existing output is replaced only by a complete one.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "cli.h"
#include "kiln/bake/cast_export.h"
#include "kiln/bake/source.h"

enum { OPT_OUTPUT, OPT_STRICT, OPT_FRAMERATE, OPT_HELP };

static const kiln__cli_opt kiln__convert_opts[] = {
    {"output", 'o', "FILE", OPT_OUTPUT, "the Cast file to write (required)"},
    {"strict", 0, NULL, OPT_STRICT, "fail when an importer drops any data (any error diagnostic)"},
    {"framerate", 0, "FPS", OPT_FRAMERATE, "frames per second for clips of formats that store none"},
    {"help", 'h', NULL, OPT_HELP, "show this help"},
};
#define KILN__CONVERT_OPT_COUNT (sizeof kiln__convert_opts / sizeof kiln__convert_opts[0])

static void kiln__convert_help(FILE *out)
{
    fputs("Usage: " KILN_CLI_NAME " convert [options] IN [MORE ...] -o OUT.cast\n"
          "\n"
          "Writes source files of any format this build imports (listed by '" KILN_CLI_NAME " --version';\n"
          "each file's format is found from its leading bytes) as one Cast file, which the\n"
          "official Cast plug-ins open in Blender and Maya. Everything the importers read goes\n"
          "through unchanged: meshes with every attribute, skins, blend shapes, hair, materials,\n"
          "skeletons with their IK handles and constraints, instances, metadata, and animation\n"
          "as curves at the source's own keys. Importing the written file gives back the same\n"
          "values, bit for bit. What Cast has no node for (lights, cameras, ...) is reported and\n"
          "left out.\n"
          "\n"
          "Each input becomes one Root of the output, in the order given, so several models stay\n"
          "distinct and a clip-only input adds Animation nodes. A relative Metadata scene root\n"
          "(sr) is rewritten for the output's directory so instances still find their files;\n"
          "a Cast reader takes its hints from the first input's Metadata.\n"
          "\n"
          "Options:\n",
          out);
    kiln__cli_print_options(out, kiln__convert_opts, KILN__CONVERT_OPT_COUNT);
    fputs("\n"
          "Exit status:\n"
          "  0  the Cast file was written (warnings, and without --strict dropped data, allowed)\n"
          "  1  usage error\n"
          "  2  an input cannot be read or imported, or (--strict) data was dropped; nothing written\n"
          "  4  the output could not be written (no partial file is left)\n",
          out);
}

typedef struct kiln__convert_cli {
    const char       **inputs;
    uint32_t           input_count;
    const char        *output;
    int                strict;
    float              framerate;
    kiln_source_scene *scenes;
    uint32_t           scene_count;  /* imported so far (freed at the end) */
    uint64_t           errors;       /* ERROR diagnostics: data dropped */
    const char        *current;      /* the input being imported, for the sink */
} kiln__convert_cli;

/* ---- diagnostics ------------------------------------------------------------------------------ */

/* Prints `d` for input `file`, without the "file:" that some diagnostics already put in front
 * of their path. */
static void kiln__convert_print(const char *file, const kiln_diag *d)
{
    size_t n = file ? strlen(file) : 0;
    if (file && strncmp(d->path, file, n) == 0 && (d->path[n] == ':' || d->path[n] == 0)) {
        kiln_diag local = *d;
        const char *rest = d->path + n + (d->path[n] == ':');
        memmove(local.path, rest, strlen(rest) + 1);
        kiln__cli_print_diag(stderr, file, &local);
        return;
    }
    kiln__cli_print_diag(stderr, file, d);
}

static void kiln__convert_import_sink(void *user, const kiln_diag *d)
{
    kiln__convert_cli *c = user;
    c->errors += d->severity == KILN_SEVERITY_ERROR;
    kiln__convert_print(c->current, d);
}

/* The exporter names the input in front of the path ("in.mesh:SURFACE[2]"). */
static void kiln__convert_export_sink(void *user, const kiln_diag *d)
{
    kiln__convert_cli *c = user;
    c->errors += d->severity == KILN_SEVERITY_ERROR;
    const char *file = NULL;
    size_t best = 0;
    for (uint32_t i = 0; i < c->input_count; i++) {
        size_t n = strlen(c->inputs[i]);
        if (n > best && strncmp(d->path, c->inputs[i], n) == 0 && (d->path[n] == ':' || d->path[n] == 0)) {
            file = c->inputs[i];
            best = n;
        }
    }
    kiln__convert_print(file, d);
}

/* ---- scene roots ------------------------------------------------------------------------------ */

/* A relative scene root means "relative to the file that holds it": rewrite it for the
 * output's directory when that differs from the input's. Returns 0 when out of memory. */
static int kiln__rebase_scene_root(kiln_source_scene *s, const char *input, const char *output)
{
    const char *sr = s->metadata.scene_root;
    if (!sr || kiln__path_is_absolute(sr)) return 1;
    char *in_dir = kiln__path_dirname(NULL, strcmp(input, "-") == 0 ? "./-" : input);
    char *out_dir = kiln__path_dirname(NULL, output);
    char *in_abs = in_dir ? kiln__path_absolute(NULL, in_dir) : NULL;
    char *out_abs = out_dir ? kiln__path_absolute(NULL, out_dir) : NULL;
    char *target = in_abs ? kiln__path_join(NULL, in_abs, sr) : NULL;
    int ok = in_abs && out_abs && target;
    if (ok && strcmp(in_abs, out_abs) != 0) {
        char *rel = kiln__path_relative(NULL, out_abs, target);
        const char *kept = rel ? kiln_source_strdup(s, rel) : NULL;
        if (kept) s->metadata.scene_root = kept;
        ok = kept != NULL;
        free(rel);
    }
    free(in_dir);
    free(out_dir);
    free(in_abs);
    free(out_abs);
    free(target);
    return ok;
}

/* ---- the verb --------------------------------------------------------------------------------- */

static int kiln__convert_args(kiln__convert_cli *c, int argc, char **argv)
{
    kiln__cli_args a;
    kiln__cli_args_init(&a, "convert", argc, argv, kiln__convert_opts, KILN__CONVERT_OPT_COUNT);
    c->inputs = calloc((size_t)argc, sizeof *c->inputs);
    if (!c->inputs) return kiln__cli_usage_error("convert", "out of memory");
    for (int k; (k = kiln__cli_args_next(&a)) != KILN_CLI_ARGS_END;) {
        if (k == KILN_CLI_ARGS_ERROR) return KILN_EXIT_USAGE;
        if (k == KILN_CLI_ARGS_POSITIONAL) {
            c->inputs[c->input_count++] = a.value;
            continue;
        }
        switch (kiln__convert_opts[k].key) {
        case OPT_OUTPUT: c->output = a.value; break;
        case OPT_STRICT: c->strict = 1; break;
        case OPT_FRAMERATE: {
            char *end = NULL;
            errno = 0;
            double fps = strtod(a.value, &end);
            if (errno || !end || *end || end == a.value || !(fps > 0 && fps <= 1e6))
                return kiln__cli_usage_error("convert", "--framerate takes frames per second > 0, not '%s'", a.value);
            c->framerate = (float)fps;
            break;
        }
        default: break;
        }
    }
    if (!c->input_count) return kiln__cli_usage_error("convert", "missing input file");
    if (!c->output) return kiln__cli_usage_error("convert", "missing output file (-o OUT.cast)");
    return KILN_EXIT_OK;
}

/* Reads and imports every input; the scenes are kept, the file bytes are not. */
static int kiln__convert_import(kiln__convert_cli *c)
{
    c->scenes = calloc(c->input_count, sizeof *c->scenes);
    if (!c->scenes) {
        fprintf(stderr, KILN_CLI_NAME ": convert: out of memory\n");
        return KILN_EXIT_INPUT;
    }
    kiln_import_options o;
    memset(&o, 0, sizeof o);
    o.diag.fn = kiln__convert_import_sink;
    o.diag.user = c;
    o.framerate = c->framerate;
    for (uint32_t i = 0; i < c->input_count; i++) {
        kiln__cli_file f;
        if (!kiln__cli_file_load(c->inputs[i], &f)) return KILN_EXIT_INPUT;
        kiln_diag err;
        memset(&err, 0, sizeof err);
        c->current = c->inputs[i];
        kiln_result r = kiln_source_import(f.data, f.size, c->inputs[i], NULL, &o, &c->scenes[i], &err);
        kiln__cli_file_free(&f);
        if (r != KILN_OK) {
            if (!err.message[0]) snprintf(err.message, sizeof err.message, "%s", kiln_result_str(r));
            err.severity = KILN_SEVERITY_ERROR;
            kiln__convert_print(c->inputs[i], &err);
            fprintf(stderr, KILN_CLI_NAME ": convert: nothing written\n");
            return KILN_EXIT_INPUT;
        }
        c->scene_count++;
        if (!kiln__rebase_scene_root(&c->scenes[i], c->inputs[i], c->output)) {
            fprintf(stderr, KILN_CLI_NAME ": convert: cannot rewrite the scene root of '%s' for '%s'\n",
                    c->inputs[i], c->output);
            return KILN_EXIT_INPUT;
        }
    }
    return KILN_EXIT_OK;
}

/* A Cast reader takes its hints from the first Metadata in the file only. */
static void kiln__convert_warn_hints(const kiln__convert_cli *c)
{
    const char *first = NULL;
    uint32_t first_index = 0;
    for (uint32_t i = 0; i < c->scene_count; i++) {
        const kiln_source_metadata *md = &c->scenes[i].metadata;
        int has = md->author || md->software || md->scene_root || md->up_axis != KILN_SOURCE_UP_NONE;
        if (!has) continue;
        if (!first) {
            first = md->scene_root ? md->scene_root : "";
            first_index = i;
            continue;
        }
        const char *sr = md->scene_root ? md->scene_root : "";
        if (c->scenes[i].instance_count && strcmp(sr, first) != 0) {
            kiln__cli_put_text(stderr, c->inputs[i], "");
            fputs(": warning: its instances will resolve against the scene root of '", stderr);
            kiln__cli_put_text(stderr, c->inputs[first_index], "");
            fputs("' (a Cast reader takes its hints from the first Metadata only)\n", stderr);
        }
    }
}

static int kiln__convert_write(kiln__convert_cli *c)
{
    const kiln_source_scene **list = calloc(c->scene_count, sizeof *list);
    if (!list) {
        fprintf(stderr, KILN_CLI_NAME ": convert: out of memory\n");
        return KILN_EXIT_INPUT;
    }
    for (uint32_t i = 0; i < c->scene_count; i++) list[i] = &c->scenes[i];
    kiln_cast_export_options o;
    memset(&o, 0, sizeof o);
    o.diag.fn = kiln__convert_export_sink;
    o.diag.user = c;
    o.input_paths = c->inputs;
    kiln__convert_warn_hints(c);

    int status = KILN_EXIT_OK;
    kiln_diag err;
    memset(&err, 0, sizeof err);
    if (c->strict && c->errors) {
        fprintf(stderr, KILN_CLI_NAME ": convert: %llu error%s (data dropped while importing); nothing written (--strict)\n",
                (unsigned long long)c->errors, c->errors == 1 ? "" : "s");
        status = KILN_EXIT_INPUT;
    } else {
        kiln_result r = kiln_cast_export_save(list, c->scene_count, &o, c->output, &err);
        if (r != KILN_OK) {
            err.severity = KILN_SEVERITY_ERROR;
            if (r == KILN_ERR_IO) {
                kiln__cli_print_diag(stderr, NULL, &err);
                status = KILN_EXIT_OUTPUT;
            } else {
                kiln__convert_export_sink(c, &err);
                fprintf(stderr, KILN_CLI_NAME ": convert: nothing written\n");
                status = KILN_EXIT_INPUT;
            }
        }
    }
    free((void *)list);
    return status;
}

static int kiln__convert_run(int argc, char **argv)
{
    kiln__convert_cli c;
    memset(&c, 0, sizeof c);
    int status = kiln__convert_args(&c, argc, argv);
    if (status == KILN_EXIT_OK) status = kiln__convert_import(&c);
    if (status == KILN_EXIT_OK) status = kiln__convert_write(&c);
    for (uint32_t i = 0; i < c.scene_count; i++) kiln_source_scene_free(&c.scenes[i]);
    free(c.scenes);
    free((void *)c.inputs);
    return status;
}

const kiln__cli_verb kiln__cli_verb_convert = {
    "convert",
    "write source files of any importable format as one Cast file, losslessly",
    kiln__convert_run,
    kiln__convert_help,
};
