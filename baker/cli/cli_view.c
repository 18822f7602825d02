/* `kiln view`: one self-contained HTML page showing what was baked - meshes shaded with their
 * normals, the skeleton, materials, every clip played from poses, blend shape weights and
 * skinned vertices the runtime computed frame by frame, and the instances of a world at their
 * world matrices. cli_view.h lists the stages; docs/view.md describes the page.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "cli_pose.h"
#include "cli_view.h"
#include "file_atomic.h"

enum { OPT_OUTPUT, OPT_TITLE, OPT_MAX_VERTICES, OPT_MAX_FRAMES, OPT_MAX_INSTANCES, OPT_MAX_SKINNED, OPT_HELP };

static const kiln__cli_opt kiln__view_opts[] = {
    {"output", 'o', "FILE", OPT_OUTPUT, "the page to write (required), replaced atomically"},
    {"title", 0, "TEXT", OPT_TITLE, "the page's heading (default: the input names)"},
    {"max-vertices", 0, "N", OPT_MAX_VERTICES, "vertices drawn over all meshes (200000)"},
    {"max-frames", 0, "N", OPT_MAX_FRAMES, "frames embedded per clip (120); longer clips are stepped"},
    {"max-instances", 0, "N", OPT_MAX_INSTANCES, "instances placed (10000)"},
    {"max-skinned", 0, "N", OPT_MAX_SKINNED, "skinned vertices over all embedded frames (1000000)"},
    {"help", 'h', NULL, OPT_HELP, "show this help"},
};
#define KILN__VIEW_OPT_COUNT (sizeof kiln__view_opts / sizeof kiln__view_opts[0])

static void kiln__view_help(FILE *out)
{
    fputs("Usage: " KILN_CLI_NAME " view [options] INPUT... -o PAGE.html\n"
          "\n"
          "Writes one self-contained HTML page (scripts and data inline, no network) that shows\n"
          "the inputs with WebGL2: meshes shaded with their normals, the skeleton over them, the\n"
          "materials; every clip playing, paused or stepped frame by frame; the instances of a\n"
          "world at their world matrices (the referenced asset's meshes when it is among the\n"
          "inputs, else a unit box), picked by clicking. Drag to orbit, shift-drag or right-drag\n"
          "to pan, wheel to zoom.\n"
          "\n"
          "INPUTs are source files (Cast, or any format `kiln --version` lists), baked together in\n"
          "memory as `kiln bake` would, or baked blobs. Every moving number on the page comes from\n"
          "the runtime, through the calls `kiln pose` makes: bone matrices, blend shape weights and\n"
          "skinned vertices are sampled per frame and embedded, never recomputed by the page.\n"
          "A clip plays on the first model with a skeleton of its own input, else of its blob.\n"
          "\n"
          "Large inputs are capped (options below); the page lists everything a cap left out.\n"
          "\n"
          "Options:\n",
          out);
    kiln__cli_print_options(out, kiln__view_opts, KILN__VIEW_OPT_COUNT);
    fputs("\n"
          "Exit status:\n"
          "  0  the page was written (warnings allowed)\n"
          "  1  usage error\n"
          "  2  an input cannot be read, baked or verified, or the runtime failed on it\n"
          "  4  the page could not be written (nothing is left behind)\n",
          out);
}

/* A cap: a whole decimal in [1, 100000000]. */
static int kiln__view_parse_cap(const char *opt, const char *text, uint32_t *out)
{
    char *end = NULL;
    unsigned long n = strtoul(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end || n < 1 || n > 100000000ul)
        return kiln__cli_usage_error(KILN__VIEW_VERB, "--%s takes a whole number from 1 to 100000000, not '%s'", opt, text);
    *out = (uint32_t)n;
    return KILN_EXIT_OK;
}

static int kiln__view_args_parse(kiln__view_args *a, int argc, char **argv)
{
    kiln__cli_args p;
    kiln__cli_args_init(&p, KILN__VIEW_VERB, argc, argv, kiln__view_opts, KILN__VIEW_OPT_COUNT);
    a->max_vertices = KILN__VIEW_MAX_VERTICES;
    a->max_frames = KILN__VIEW_MAX_FRAMES;
    a->max_instances = KILN__VIEW_MAX_INSTANCES;
    a->max_skinned = KILN__VIEW_MAX_SKINNED;
    for (int k; (k = kiln__cli_args_next(&p)) != KILN_CLI_ARGS_END;) {
        if (k == KILN_CLI_ARGS_ERROR) return KILN_EXIT_USAGE;
        if (k == KILN_CLI_ARGS_POSITIONAL) {
            if (a->input_count == KILN__VIEW_MAX_INPUTS)
                return kiln__cli_usage_error(KILN__VIEW_VERB, "more than %u inputs", KILN__VIEW_MAX_INPUTS);
            a->inputs[a->input_count++] = p.value;
            continue;
        }
        int status = KILN_EXIT_OK;
        const char *name = kiln__view_opts[k].long_name;
        switch (kiln__view_opts[k].key) {
        case OPT_OUTPUT: a->out_path = p.value; break;
        case OPT_TITLE: a->title = p.value; break;
        case OPT_MAX_VERTICES: status = kiln__view_parse_cap(name, p.value, &a->max_vertices); break;
        case OPT_MAX_FRAMES: status = kiln__view_parse_cap(name, p.value, &a->max_frames); break;
        case OPT_MAX_INSTANCES: status = kiln__view_parse_cap(name, p.value, &a->max_instances); break;
        case OPT_MAX_SKINNED: status = kiln__view_parse_cap(name, p.value, &a->max_skinned); break;
        default: break;
        }
        if (status != KILN_EXIT_OK) return status;
    }
    if (!a->input_count) return kiln__cli_usage_error(KILN__VIEW_VERB, "missing INPUT file");
    if (!a->out_path) return kiln__cli_usage_error(KILN__VIEW_VERB, "missing -o PAGE.html");
    return KILN_EXIT_OK;
}

static int kiln__view_run(int argc, char **argv)
{
    kiln__pose_verb = KILN__VIEW_VERB;
    kiln__view *v = calloc(1, sizeof *v);
    if (!v) {
        fprintf(stderr, KILN_CLI_NAME ": " KILN__VIEW_VERB ": out of memory\n");
        return KILN_EXIT_INPUT;
    }
    int status = kiln__view_args_parse(&v->args, argc, argv);
    if (status == KILN_EXIT_OK) status = kiln__view_load(v);
    if (status == KILN_EXIT_OK) {
        kiln_diag err;
        memset(&err, 0, sizeof err);
        kiln_result r = kiln__file_save_atomic(v->args.out_path, kiln__view_write_page, v, NULL, KILN_ERR_OUTPUT, &err);
        if (r != KILN_OK) {
            /* the data failed (printed already; nothing was written), or the file did */
            if (v->data_failed) status = KILN_EXIT_INPUT;
            else kiln__cli_print_diag(stderr, NULL, &err), status = KILN_EXIT_OUTPUT;
        }
    }
    kiln__view_free(v);
    free(v);
    return status;
}

const kiln__cli_verb kiln__cli_verb_view = {
    KILN__VIEW_VERB,
    "write one self-contained HTML page of the inputs: meshes, skeletons, clips, instances",
    kiln__view_run,
    kiln__view_help,
};
