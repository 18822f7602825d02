/* `kiln bake`: Cast files in, one verified blob out (kiln_bake + kiln_bake_save).
 *
 * The output is written atomically, so a failed or interrupted bake never leaves a partial
 * file; the JSON report is written the same way. Diagnostics go to stderr as they are handed
 * over by kiln_bake (input order), split back into "file: severity: node-path: message".
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_cache.h"
#include "cli_depfile.h"
#include "file_atomic.h"
#include "json.h"
#include "kiln/bake/bake.h"
#include "kiln/blob.h"

enum {
    OPT_OUTPUT, OPT_JOBS, OPT_VERBOSE, OPT_REPORT, OPT_STRICT, OPT_MAX_INFLUENCES, OPT_QPOS, OPT_QNRM, OPT_QUV,
    OPT_NO_OPTIMIZE, OPT_SCENE_ROOT, OPT_LOSSY_ANIM, OPT_ANIM_ERROR, OPT_ANIM_DISTANCE, OPT_DEPFILE, OPT_CACHE, OPT_HELP
};

static const kiln__cli_opt kiln__bake_opts[] = {
    {"output", 'o', "FILE", OPT_OUTPUT, "the blob to write (required)"},
    {"jobs", 'j', "N", OPT_JOBS, "bake N inputs, then N animation clips, in parallel, with progress on stderr"},
    {"verbose", 'v', NULL, OPT_VERBOSE, "print input/output statistics per section (and cache hits) on stderr"},
    {"report", 0, "FILE", OPT_REPORT, "write the statistics as JSON to FILE"},
    {"strict", 0, NULL, OPT_STRICT, "fail when any data would be dropped (any error diagnostic)"},
    {"max-influences", 0, "K", OPT_MAX_INFLUENCES, "skin influences kept per vertex, 1..8 (default 8)"},
    {"quantize-positions", 0, NULL, OPT_QPOS, "16-bit positions within each mesh's bounds (lossy)"},
    {"quantize-normals", 0, NULL, OPT_QNRM, "octahedral 2x16-bit normals and tangents (lossy)"},
    {"quantize-uvs", 0, NULL, OPT_QUV, "16-bit UVs within each layer's bounds (lossy)"},
    {"no-optimize", 0, NULL, OPT_NO_OPTIMIZE, "keep the vertex and index order of the input"},
    {"lossy-anim", 0, NULL, OPT_LOSSY_ANIM, "quantise animation rows within an error bound (lossy)"},
    {"anim-error", 0, "M", OPT_ANIM_ERROR, "with --lossy-anim: largest error in metres (default 0.0001)"},
    {"anim-distance", 0, "M", OPT_ANIM_DISTANCE, "with --lossy-anim: its distance from each joint in metres (0.1)"},
    {"scene-root", 0, "DIR", OPT_SCENE_ROOT, "directory for instance paths when a file's Metadata has no sr"},
    {"depfile", 0, "FILE", OPT_DEPFILE, "write a Make-style depfile naming every input read (Ninja, Make)"},
    {"cache", 0, "DIR", OPT_CACHE, "reuse a blob baked before from the same inputs and options (DIR is shared)"},
    {"help", 'h', NULL, OPT_HELP, "show this help"},
};
#define KILN__BAKE_OPT_COUNT (sizeof kiln__bake_opts / sizeof kiln__bake_opts[0])

static void kiln__bake_help(FILE *out)
{
    fputs("Usage: " KILN_CLI_NAME " bake [options] IN [MORE ...] -o OUT.kiln\n"
          "\n"
          "Bakes source files into one runtime blob. An input may be in any format this build\n"
          "imports (listed by '" KILN_CLI_NAME " --version'; each file's format is found from its leading\n"
          "bytes, never from its name), and inputs of different formats mix freely.\n"
          "The blob holds models with their skeletons (parent-first, rest pose, inverse binds,\n"
          "IK handles and constraints), meshes (optimised, skinned, with their blend shapes,\n"
          "optionally quantised), hair, materials, instances grouped by referenced file,\n"
          "animation clips (one sample per frame, lossless unless --lossy-anim, with blend shape\n"
          "weight, visibility and notification tracks) and metadata. The blob is verified before\n"
          "it is written, and written atomically.\n"
          "Baking is deterministic: the same inputs and options give the same bytes, whatever -j.\n"
          "\n"
          "--lossy-anim stores animation rows as 8- to 24-bit integers where the bound allows:\n"
          "every joint stays within --anim-error metres of its lossless pose, in model space, at\n"
          "its origin and at points --anim-distance metres along its axes. The error is followed\n"
          "down the bone chains of a skeleton baked in the same call whose bones the clip names\n"
          "(else it is bounded per joint). A clip that cannot meet the bound is stored lossless,\n"
          "with a warning.\n"
          "\n"
          "No path of the baking machine is stored: each referenced file is kept relative to the\n"
          "scene root, and the scene root is named \".\", so the same inputs give the same bytes\n"
          "from any directory, named by absolute or relative paths. A referenced file baked in\n"
          "the same call is resolved to its models (kiln/instance.h, kiln_reference_get).\n"
          "\n"
          "--depfile writes 'OUT: IN...' for Ninja and Make (docs/pipeline.md). --cache DIR keys\n"
          "each blob by the SHA-256 of the inputs' bytes and relative paths, the options and the\n"
          "tool's version, and copies a verified blob from DIR instead of baking; -v says 'cache\n"
          "hit' or 'cache miss'. A corrupt entry is reported and baked again. A hit prints none of\n"
          "the bake's warnings.\n"
          "\n"
          "Options:\n",
          out);
    kiln__cli_print_options(out, kiln__bake_opts, KILN__BAKE_OPT_COUNT);
    fputs("\n"
          "Exit status:\n"
          "  0  the blob was written (warnings, and without --strict dropped data, allowed)\n"
          "  1  usage error\n"
          "  2  an input cannot be read or parsed, or (--strict) data would be dropped\n"
          "  4  the blob or the report could not be written (no partial file is left)\n",
          out);
}

typedef struct kiln__bake_cli {
    const char     **inputs;
    uint32_t         input_count;
    const char      *output, *report, *scene_root, *depfile, *cache_dir;
    uint32_t         jobs, max_influences, flags;
    float            anim_error_m, anim_distance_m; /* 0: the baker's defaults */
    int              verbose;
    kiln__cli_file  *files;
    kiln_bake_input *bake_inputs;
} kiln__bake_cli;

/* ---- diagnostics and progress ---------------------------------------------------------------- */

/* kiln_bake prefixes node paths with the input path ("in.cast:Root[0]/..."); printing puts
 * the input first, as every other verb does. */
static void kiln__bake_sink(void *user, const kiln_diag *d)
{
    const kiln__bake_cli *c = user;
    const char *file = NULL;
    size_t best = 0;
    for (uint32_t i = 0; i < c->input_count; i++) {
        size_t n = strlen(c->inputs[i]);
        if (n > best && strncmp(d->path, c->inputs[i], n) == 0 && (d->path[n] == ':' || d->path[n] == 0)) {
            file = c->inputs[i];
            best = n;
        }
    }
    if (!file) {
        kiln__cli_print_diag(stderr, NULL, d);
        return;
    }
    kiln_diag local = *d;
    const char *rest = d->path + best + (d->path[best] == ':');
    memmove(local.path, rest, strlen(rest) + 1);
    kiln__cli_print_diag(stderr, file, &local);
}

static void kiln__bake_progress(void *user, uint32_t done, uint32_t total, const char *path)
{
    (void)user;
    fprintf(stderr, KILN_CLI_NAME ": bake: [%u/%u] ", done, total);
    kiln__cli_put_text(stderr, path, "");
    fputc('\n', stderr);
}

/* ---- statistics ------------------------------------------------------------------------------ */

static double kiln__now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double kiln__percent(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* gltfpack-style summary lines, then one line per section. */
static void kiln__print_stats(const kiln__bake_cli *c, const kiln_bake_stats *s, double seconds)
{
    fprintf(stderr, "input: %u file%s, %llu bytes\n", c->input_count, c->input_count == 1 ? "" : "s",
            (unsigned long long)s->input_bytes);
    fprintf(stderr, "input: %llu vertices, %llu triangles\n", (unsigned long long)s->vertices_in,
            (unsigned long long)s->triangles_in);
    fprintf(stderr,
            "output: %u models, %u skeletons (%u bones), %u meshes (%llu vertices, %llu triangles), %u hairs, "
            "%u materials, %u instances\n",
            s->models, s->skeletons, s->bones, s->meshes, (unsigned long long)s->vertices_out,
            (unsigned long long)s->triangles_out, s->hairs, s->materials, s->instances);
    if (s->animations || (c->flags & KILN_BAKE_LOSSY_ANIMATION)) {
        fprintf(stderr, "output: %u animation%s, %llu bytes of clip data", s->animations, s->animations == 1 ? "" : "s",
                (unsigned long long)s->anim_bytes);
        if (c->flags & KILN_BAKE_LOSSY_ANIMATION)
            fprintf(stderr, ", max measured error %g mm", (double)s->anim_max_error_m * 1e3);
        fputc('\n', stderr);
    }
    fprintf(stderr, "output: dropped %llu faces with bad indices, %llu degenerate faces, %llu influences\n",
            (unsigned long long)s->bad_index_faces_dropped, (unsigned long long)s->degenerate_faces_dropped,
            (unsigned long long)s->influences_dropped);
    fprintf(stderr, "output: %llu bytes (%.1f%% of input) in %.3f s; %llu warnings, %llu errors\n",
            (unsigned long long)s->output_bytes, kiln__percent(s->output_bytes, s->input_bytes), seconds,
            (unsigned long long)s->warnings, (unsigned long long)s->errors);
    fprintf(stderr, "sections:\n  kind  %10s  %12s  %12s  %6s\n", "records", "input bytes", "output bytes", "share");
    for (uint32_t i = 0; i < s->section_count; i++) {
        const kiln_bake_section_stats *ss = &s->sections[i];
        char kind[5];
        fprintf(stderr, "  %s  %10u  %12llu  %12llu  %5.1f%%\n", kiln_blob_kind_name(ss->kind, kind), ss->count,
                (unsigned long long)ss->input_bytes, (unsigned long long)ss->output_bytes,
                kiln__percent(ss->output_bytes, s->output_bytes));
    }
}

typedef struct kiln__report_ctx {
    const kiln__bake_cli   *cli;
    const kiln_bake_stats  *stats;   /* NULL: a cache hit, nothing was baked */
    double                  seconds;
    uint64_t                output_bytes;
} kiln__report_ctx;

static int kiln__emit_report(void *user, FILE *f)
{
    const kiln__report_ctx *r = user;
    const kiln_bake_stats *s = r->stats;
    kiln__json j;
    kiln__json_init(&j, f, 2);
    kiln__json_begin_object(&j);
    kiln__json_key_u64(&j, "schema", 1);
    kiln__json_key_string(&j, "output", r->cli->output);
    kiln__json_key(&j, "inputs");
    kiln__json_begin_array(&j);
    for (uint32_t i = 0; i < r->cli->input_count; i++) {
        kiln__json_begin_object_inline(&j);
        kiln__json_key_string(&j, "path", r->cli->inputs[i]);
        kiln__json_key_u64(&j, "bytes", r->cli->files[i].size);
        kiln__json_end_object(&j);
    }
    kiln__json_end_array(&j);
    if (r->cli->cache_dir) kiln__json_key_string(&j, "cache", s ? "miss" : "hit");
    kiln__json_key_f64(&j, "seconds", r->seconds);
    if (!s) { /* a cache hit has the blob and nothing else */
        kiln__json_key_u64(&j, "output_bytes", r->output_bytes);
        kiln__json_end_object(&j);
        return kiln__json_finish(&j) == 0 && !ferror(f);
    }
    kiln__json_key_u64(&j, "input_bytes", s->input_bytes);
    kiln__json_key_u64(&j, "output_bytes", s->output_bytes);
    kiln__json_key_u64(&j, "models", s->models);
    kiln__json_key_u64(&j, "skeletons", s->skeletons);
    kiln__json_key_u64(&j, "bones", s->bones);
    kiln__json_key_u64(&j, "meshes", s->meshes);
    kiln__json_key_u64(&j, "hairs", s->hairs);
    kiln__json_key_u64(&j, "materials", s->materials);
    kiln__json_key_u64(&j, "instances", s->instances);
    kiln__json_key_u64(&j, "animations", s->animations);
    kiln__json_key_u64(&j, "anim_bytes", s->anim_bytes);
    kiln__json_key_f64(&j, "anim_max_error_m", s->anim_max_error_m);
    kiln__json_key_u64(&j, "vertices_in", s->vertices_in);
    kiln__json_key_u64(&j, "vertices_out", s->vertices_out);
    kiln__json_key_u64(&j, "triangles_in", s->triangles_in);
    kiln__json_key_u64(&j, "triangles_out", s->triangles_out);
    kiln__json_key_u64(&j, "degenerate_faces_dropped", s->degenerate_faces_dropped);
    kiln__json_key_u64(&j, "bad_index_faces_dropped", s->bad_index_faces_dropped);
    kiln__json_key_u64(&j, "influences_dropped", s->influences_dropped);
    kiln__json_key_u64(&j, "warnings", s->warnings);
    kiln__json_key_u64(&j, "errors", s->errors);
    kiln__json_key(&j, "sections");
    kiln__json_begin_array(&j);
    for (uint32_t i = 0; i < s->section_count; i++) {
        char kind[5];
        kiln__json_begin_object_inline(&j);
        kiln__json_key_string(&j, "kind", kiln_blob_kind_name(s->sections[i].kind, kind));
        kiln__json_key_u64(&j, "count", s->sections[i].count);
        kiln__json_key_u64(&j, "input_bytes", s->sections[i].input_bytes);
        kiln__json_key_u64(&j, "output_bytes", s->sections[i].output_bytes);
        kiln__json_end_object(&j);
    }
    kiln__json_end_array(&j);
    kiln__json_end_object(&j);
    if (kiln__json_finish(&j) != 0) {
        errno = EINVAL;
        return 0;
    }
    return !ferror(f);
}

/* ---- the verb -------------------------------------------------------------------------------- */

static int kiln__parse_count(const char *text, uint32_t lo, uint32_t hi, uint32_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (errno || !end || *end || end == text || text[0] == '-' || v < lo || v > hi) return 0;
    *out = (uint32_t)v;
    return 1;
}

static int kiln__bake_args(kiln__bake_cli *c, int argc, char **argv)
{
    kiln__cli_args a;
    kiln__cli_args_init(&a, "bake", argc, argv, kiln__bake_opts, KILN__BAKE_OPT_COUNT);
    c->inputs = calloc((size_t)argc, sizeof *c->inputs);
    if (!c->inputs) return kiln__cli_usage_error("bake", "out of memory");
    for (int k; (k = kiln__cli_args_next(&a)) != KILN_CLI_ARGS_END;) {
        if (k == KILN_CLI_ARGS_ERROR) return KILN_EXIT_USAGE;
        if (k == KILN_CLI_ARGS_POSITIONAL) {
            c->inputs[c->input_count++] = a.value;
            continue;
        }
        switch (kiln__bake_opts[k].key) {
        case OPT_OUTPUT: c->output = a.value; break;
        case OPT_JOBS:
            if (!kiln__parse_count(a.value, 1, 256, &c->jobs))
                return kiln__cli_usage_error("bake", "-j takes a thread count from 1 to 256, not '%s'", a.value);
            break;
        case OPT_VERBOSE: c->verbose = 1; break;
        case OPT_REPORT: c->report = a.value; break;
        case OPT_STRICT: c->flags |= KILN_BAKE_STRICT; break;
        case OPT_MAX_INFLUENCES:
            if (!kiln__parse_count(a.value, 1, KILN_BAKE_MAX_INFLUENCES, &c->max_influences))
                return kiln__cli_usage_error("bake", "--max-influences takes 1 to 8, not '%s'", a.value);
            break;
        case OPT_QPOS: c->flags |= KILN_BAKE_QUANTIZE_POSITIONS; break;
        case OPT_QNRM: c->flags |= KILN_BAKE_QUANTIZE_NORMALS; break;
        case OPT_QUV: c->flags |= KILN_BAKE_QUANTIZE_UVS; break;
        case OPT_NO_OPTIMIZE: c->flags |= KILN_BAKE_NO_OPTIMIZE; break;
        case OPT_SCENE_ROOT: c->scene_root = a.value; break;
        case OPT_DEPFILE: c->depfile = a.value; break;
        case OPT_CACHE: c->cache_dir = a.value; break;
        case OPT_LOSSY_ANIM: c->flags |= KILN_BAKE_LOSSY_ANIMATION; break;
        case OPT_ANIM_ERROR:
        case OPT_ANIM_DISTANCE: {
            float *dst = kiln__bake_opts[k].key == OPT_ANIM_ERROR ? &c->anim_error_m : &c->anim_distance_m;
            if (!kiln__cli_parse_metres(a.value, dst))
                return kiln__cli_usage_error("bake", "--%s takes a length in metres > 0, not '%s'",
                                             kiln__bake_opts[k].long_name, a.value);
            break;
        }
        default: break;
        }
    }
    if ((c->anim_error_m > 0 || c->anim_distance_m > 0) && !(c->flags & KILN_BAKE_LOSSY_ANIMATION))
        return kiln__cli_usage_error("bake", "--anim-error and --anim-distance need --lossy-anim");
    if (!c->input_count) return kiln__cli_usage_error("bake", "missing input file");
    if (!c->output) return kiln__cli_usage_error("bake", "missing output file (-o OUT.kiln)");
    return KILN_EXIT_OK;
}

static int kiln__bake_files(kiln__bake_cli *c)
{
    c->files = calloc(c->input_count, sizeof *c->files);
    c->bake_inputs = calloc(c->input_count, sizeof *c->bake_inputs);
    if (!c->files || !c->bake_inputs) {
        fprintf(stderr, KILN_CLI_NAME ": bake: out of memory\n");
        return KILN_EXIT_INPUT;
    }
    for (uint32_t i = 0; i < c->input_count; i++) {
        if (!kiln__cli_file_load(c->inputs[i], &c->files[i])) return KILN_EXIT_INPUT;
        c->bake_inputs[i].path = c->inputs[i];
        c->bake_inputs[i].data = c->files[i].data;
        c->bake_inputs[i].size = c->files[i].size;
        c->bake_inputs[i].format = NULL; /* from the leading bytes */
    }
    return KILN_EXIT_OK;
}

/* The depfile and the report, after the blob is in place (baked or from the cache). */
static int kiln__bake_outputs(const kiln__bake_cli *c, const kiln__report_ctx *rc)
{
    kiln_diag err;
    int status = KILN_EXIT_OK;
    if (c->depfile && kiln__depfile_write(c->depfile, c->output, c->inputs, c->input_count, &err) != KILN_OK) {
        kiln__cli_print_diag(stderr, NULL, &err);
        status = KILN_EXIT_OUTPUT;
    }
    if (status == KILN_EXIT_OK && c->report &&
        kiln__file_save_atomic(c->report, kiln__emit_report, (void *)rc, NULL, KILN_ERR_OUTPUT, &err) != KILN_OK) {
        kiln__cli_print_diag(stderr, NULL, &err);
        status = KILN_EXIT_OUTPUT;
    }
    return status;
}

static int kiln__bake_run_loaded(kiln__bake_cli *c)
{
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.diag.fn = kiln__bake_sink;
    o.diag.user = c;
    o.flags = c->flags;
    o.max_influences = c->max_influences;
    o.threads = c->jobs;
    o.scene_root = c->scene_root;
    o.anim_error_m = c->anim_error_m;
    o.anim_distance_m = c->anim_distance_m;
    if (c->jobs > 1) o.progress = kiln__bake_progress;

    kiln__bake_cache cache;
    memset(&cache, 0, sizeof cache);
    cache.dir = c->cache_dir;
    cache.verbose = c->verbose;
    double start = kiln__now_s();
    if (c->cache_dir) {
        if (!kiln__cache_key(&cache, c->bake_inputs, c->input_count, &o)) {
            fprintf(stderr, KILN_CLI_NAME ": bake: out of memory\n");
            return KILN_EXIT_INPUT;
        }
        uint64_t size = 0;
        int hit = kiln__cache_fetch(&cache, c->output, &size);
        if (hit != 0) {
            kiln__report_ctx rc = {c, NULL, kiln__now_s() - start, size};
            int status = hit < 0 ? KILN_EXIT_OUTPUT : kiln__bake_outputs(c, &rc);
            kiln__cache_free(&cache);
            return status;
        }
    }

    kiln_bake_result res;
    kiln_diag err;
    kiln_result r = kiln_bake(c->bake_inputs, c->input_count, &o, &res, &err);
    double seconds = kiln__now_s() - start;
    if (r != KILN_OK) {
        kiln__bake_sink(c, &err);
        fprintf(stderr, KILN_CLI_NAME ": bake: nothing written\n");
        kiln__cache_free(&cache);
        return KILN_EXIT_INPUT;
    }
    int status = KILN_EXIT_OK;
    if (kiln_bake_save(&res, c->output, &err) != KILN_OK) {
        kiln__cli_print_diag(stderr, NULL, &err);
        status = KILN_EXIT_OUTPUT;
    }
    if (status == KILN_EXIT_OK && c->cache_dir) kiln__cache_store(&cache, res.blob, res.size);
    if (status == KILN_EXIT_OK && c->verbose) kiln__print_stats(c, &res.stats, seconds);
    if (status == KILN_EXIT_OK) {
        kiln__report_ctx rc = {c, &res.stats, seconds, res.size};
        status = kiln__bake_outputs(c, &rc);
    }
    kiln_bake_result_free(&res);
    kiln__cache_free(&cache);
    return status;
}

static int kiln__bake_run(int argc, char **argv)
{
    kiln__bake_cli c;
    memset(&c, 0, sizeof c);
    int status = kiln__bake_args(&c, argc, argv);
    if (status == KILN_EXIT_OK) status = kiln__bake_files(&c);
    if (status == KILN_EXIT_OK) status = kiln__bake_run_loaded(&c);
    for (uint32_t i = 0; c.files && i < c.input_count; i++) kiln__cli_file_free(&c.files[i]);
    free(c.files);
    free(c.bake_inputs);
    free((void *)c.inputs);
    return status;
}

const kiln__cli_verb kiln__cli_verb_bake = {
    "bake",
    "bake source files (any importable format) into one verified runtime blob",
    kiln__bake_run,
    kiln__bake_help,
};
