/* `kiln pose`: sample an animation clip on a skeleton at chosen frames and print the pose.
 *
 * The verb goes through the same path a game does: Cast inputs are baked in memory (both in one
 * kiln_bake call, so that a lossy clip is bounded through the skeleton it plays on), blobs are
 * loaded with full verification, then kiln_anim_bind, kiln_sample, kiln_pose_local_to_object,
 * kiln_rig_solve and (for --skin) kiln_blend_shapes_apply and kiln_skin_mesh produce the
 * numbers. This file holds the options and the order of the stages (cli_pose.h lists the
 * others). What it prints is therefore what the runtime computes, which makes the
 * verb a debugging tool for both the baker and the runtime. docs/pose-json.md describes the
 * output.
 *
 * Bones are printed in the Cast file's order (kiln_blob_bone.source_index), not the blob's
 * parent-first order, so that the output lines up with what an artist sees in the DCC.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_pose.h"

enum { OPT_FRAMES, OPT_JSON, OPT_CLIP, OPT_LOOP, OPT_LOSSY, OPT_ANIM_ERROR, OPT_ANIM_DISTANCE, OPT_SIMD, OPT_NO_RIG, OPT_SKIN, OPT_HELP };

static const kiln__cli_opt kiln__pose_opts[] = {
    {"frames", 'f', "LIST", OPT_FRAMES, "frames to sample, e.g. 0,5,7.5,10-20,0-30:3 (required)"},
    {"json", 0, NULL, OPT_JSON, "print one JSON document (docs/pose-json.md) instead of text"},
    {"clip", 'c', "NAME|INDEX", OPT_CLIP, "the clip to sample (default: the first of ANIM)"},
    {"loop", 0, "MODE", OPT_LOOP, "clip (default: wrap when authored looping), clamp or wrap"},
    {"lossy-anim", 0, NULL, OPT_LOSSY, "bake Cast animation with quantised rows (lossy, bounded)"},
    {"anim-error", 0, "M", OPT_ANIM_ERROR, "with --lossy-anim: largest model-space error in metres (0.0001)"},
    {"anim-distance", 0, "M", OPT_ANIM_DISTANCE, "with --lossy-anim: its distance from each joint in metres (0.1)"},
    {"simd", 0, "PATH", OPT_SIMD, "auto (default), scalar, sse2, avx2 or avx512"},
    {"no-rig", 0, NULL, OPT_NO_RIG, "forward kinematics only: skip IK handles and constraints"},
    {"skin", 's', "MESH", OPT_SKIN, "also print MESH's skinned vertices (a name, else an index)"},
    {"help", 'h', NULL, OPT_HELP, "show this help"},
};
#define KILN__POSE_OPT_COUNT (sizeof kiln__pose_opts / sizeof kiln__pose_opts[0])

static void kiln__pose_help(FILE *out)
{
    fputs("Usage: " KILN_CLI_NAME " pose [options] MODEL [ANIM] --frames LIST\n"
          "\n"
          "Samples an animation clip on a skeleton with the runtime (bind, sample, local to model,\n"
          "then the skeleton's IK handles and constraints) and prints, for every frame and every\n"
          "bone in the Cast file's bone order, the local translation, rotation (x, y, z, w) and\n"
          "scale and the model-space transform, then the clip's blend shape weights and\n"
          "visibility values. With --skin, also the skinned position of every vertex of MESH\n"
          "(its blend shapes applied first, at the clip's weights).\n"
          "\n"
          "MODEL and ANIM are source files (Cast, or any format `kiln --version` lists) or baked\n"
          "blobs. Source files are baked in memory, both in one bake, so that --lossy-anim bounds\n"
          "the error through MODEL's skeleton; MODEL may be given again as ANIM. The skeleton is\n"
          "that of the first model in MODEL that has one. The clip is the first one in ANIM (in\n"
          "MODEL when ANIM is omitted), or the one --clip names (a name, else a 0-based index\n"
          "among that file's clips).\n"
          "\n"
          "Frame f is sampled at time f / framerate; fractional frames interpolate. Model space\n"
          "is the space of the Cast file's skeleton: the Model node's transform (p, r, s) is not\n"
          "applied. Text output shows each bone's model-space position; --json gives the full\n"
          "matrices (column-major). Blend shape weights are clamped to [0, ts] when MODEL has a\n"
          "BlendShape of that name; visibility prints 1 for any nonzero value.\n"
          "\n"
          "LIST is comma-separated frames and ranges: F, A-B (both ends included, step 1) or\n"
          "A-B:STEP, with decimals allowed (0,5,7.5,10-20,0-30:3). At most 1000000 frames.\n"
          "\n"
          "MESH is a mesh of the posed model: its name, else a 0-based index among the model's\n"
          "meshes. Cast inputs are then baked without vertex reordering, so vertex i is the Cast\n"
          "file's vertex i; a blob keeps the order it was baked in. Positions are in the same\n"
          "model space as the bones.\n"
          "Bones the clip animates but the skeleton lacks are reported as a warning.\n"
          "\n"
          "Options:\n",
          out);
    kiln__cli_print_options(out, kiln__pose_opts, KILN__POSE_OPT_COUNT);
    fputs("\n"
          "Exit status:\n"
          "  0  the pose was printed (warnings allowed)\n"
          "  1  usage error, including a bad --frames list\n"
          "  2  an input cannot be read, parsed, baked or verified; no model with a skeleton; no\n"
          "     clip (or none that --clip names); no mesh that --skin names; a sampled value was\n"
          "     not finite\n"
          "  4  the output could not be written\n",
          out);
}

/* ---- command line ---------------------------------------------------------------------------- */

/* One decimal number at s[0..len): [-]digits[.digits] or [-].digits, nothing else (no
 * exponent, no inf or nan, no '+'). Returns the characters used, 0 when there is no number. */
static size_t kiln__pose_number(const char *s, size_t len, double *out)
{
    size_t i = 0, digits = 0;
    if (i < len && s[i] == '-') i++;
    while (i < len && s[i] >= '0' && s[i] <= '9') i++, digits++;
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && s[i] >= '0' && s[i] <= '9') i++, digits++;
    }
    if (!digits || i > 63) return 0;
    char buf[64];
    memcpy(buf, s, i);
    buf[i] = 0;
    *out = strtod(buf, NULL);
    return isfinite(*out) ? i : 0;
}

/* Appends one value to the frame array, growing it. 0 when out of memory. */
static int kiln__pose_push(kiln__pose_args *a, size_t *cap, double f)
{
    if (!kiln__cli_reserve((void **)&a->frames, cap, (size_t)a->frame_count + 1, sizeof *a->frames)) return 0;
    a->frames[a->frame_count++] = f;
    return 1;
}

static int kiln__pose_item_error(const char *item, size_t len, const char *why)
{
    return kiln__cli_usage_error(KILN__POSE_VERB, "--frames: bad item '%.*s': %s", (int)len, item, why);
}

/* One item of a frame list: F, A-B or A-B:STEP. Returns KILN_EXIT_OK or a usage error. */
static int kiln__pose_parse_item(kiln__pose_args *a, size_t *cap, const char *item, size_t len)
{
    static const char *const shape = "expected a frame F, a range A-B or A-B:STEP (decimals allowed)";
    double lo, hi, step = 1.0;
    size_t n = kiln__pose_number(item, len, &lo);
    if (!n) return kiln__pose_item_error(item, len, shape);
    if (n == len) {
        if (a->frame_count >= KILN__POSE_MAX_FRAMES) goto too_many;
        return kiln__pose_push(a, cap, lo) ? KILN_EXIT_OK : kiln__pose_item_error(item, len, "out of memory");
    }
    if (item[n] != '-') return kiln__pose_item_error(item, len, shape);
    size_t m = kiln__pose_number(item + n + 1, len - n - 1, &hi);
    if (!m) return kiln__pose_item_error(item, len, shape);
    size_t used = n + 1 + m;
    if (used < len) {
        if (item[used] != ':') return kiln__pose_item_error(item, len, shape);
        size_t k = kiln__pose_number(item + used + 1, len - used - 1, &step);
        if (!k || used + 1 + k != len) return kiln__pose_item_error(item, len, shape);
        if (!(step > 0)) return kiln__pose_item_error(item, len, "the step must be greater than 0");
    }
    if (hi < lo) return kiln__pose_item_error(item, len, "the range runs backwards (A-B needs A <= B)");
    /* The count in double first: a tiny step over a long range must fail here, not after
     * filling memory. The slack keeps B when (B - A) / STEP is an integer up to rounding. */
    double span = (hi - lo) / step;
    if (!(span < (double)KILN__POSE_MAX_FRAMES)) goto too_many;
    uint32_t count = (uint32_t)floor(span + 1e-9) + 1u;
    if (count > KILN__POSE_MAX_FRAMES - a->frame_count) goto too_many;
    for (uint32_t i = 0; i < count; i++) {
        /* lo + i * step, not a running sum, so that rounding does not accumulate; the last
         * value snaps to B when it is B up to rounding. */
        double f = lo + (double)i * step;
        if (i + 1 == count && fabs(f - hi) <= 1e-9 * (fabs(hi) + 1.0)) f = hi;
        if (!kiln__pose_push(a, cap, f)) return kiln__pose_item_error(item, len, "out of memory");
    }
    return KILN_EXIT_OK;
too_many:
    return kiln__cli_usage_error(KILN__POSE_VERB, "--frames: more than %u frames (at item '%.*s')",
                                 KILN__POSE_MAX_FRAMES, (int)len, item);
}

/* Parses a whole LIST into a->frames (appending: --frames may be repeated). */
static int kiln__pose_parse_frames(kiln__pose_args *a, size_t *cap, const char *list)
{
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (!len) /* an empty item has nothing to quote: show the whole list */
            return kiln__cli_usage_error(KILN__POSE_VERB, "--frames: empty item at offset %zu of '%s'",
                                         (size_t)(p - list), list);
        int status = kiln__pose_parse_item(a, cap, p, len);
        if (status != KILN_EXIT_OK) return status;
        if (!comma) return KILN_EXIT_OK;
        p = comma + 1;
    }
}

static int kiln__pose_args_parse(kiln__pose_args *a, int argc, char **argv)
{
    kiln__cli_args p;
    kiln__cli_args_init(&p, KILN__POSE_VERB, argc, argv, kiln__pose_opts, KILN__POSE_OPT_COUNT);
    size_t cap = 0;
    int have_frames = 0, have_error = 0;
    for (int k; (k = kiln__cli_args_next(&p)) != KILN_CLI_ARGS_END;) {
        if (k == KILN_CLI_ARGS_ERROR) return KILN_EXIT_USAGE;
        if (k == KILN_CLI_ARGS_POSITIONAL) {
            if (!a->model_path) a->model_path = p.value;
            else if (!a->anim_path) a->anim_path = p.value;
            else return kiln__cli_usage_error(KILN__POSE_VERB, "unexpected argument '%s' (MODEL [ANIM] expected)", p.value);
            continue;
        }
        int status = KILN_EXIT_OK;
        switch (kiln__pose_opts[k].key) {
        case OPT_FRAMES:
            have_frames = 1;
            status = kiln__pose_parse_frames(a, &cap, p.value);
            break;
        case OPT_JSON: a->json = 1; break;
        case OPT_CLIP: a->clip = p.value; break;
        case OPT_LOOP:
            if (!strcmp(p.value, "clip")) a->loop = KILN_LOOP_CLIP;
            else if (!strcmp(p.value, "clamp")) a->loop = KILN_LOOP_CLAMP;
            else if (!strcmp(p.value, "wrap")) a->loop = KILN_LOOP_WRAP;
            else status = kiln__cli_usage_error(KILN__POSE_VERB, "--loop takes clip, clamp or wrap, not '%s'", p.value);
            break;
        case OPT_LOSSY: a->lossy = 1; break;
        case OPT_ANIM_ERROR:
        case OPT_ANIM_DISTANCE: {
            float *dst = kiln__pose_opts[k].key == OPT_ANIM_ERROR ? &a->anim_error_m : &a->anim_distance_m;
            if (!kiln__cli_parse_metres(p.value, dst))
                status = kiln__cli_usage_error(KILN__POSE_VERB, "--%s takes a length in metres > 0, not '%s'",
                                               kiln__pose_opts[k].long_name, p.value);
            have_error = 1;
            break;
        }
        case OPT_SIMD:
            a->simd_set = 1;
            if (!strcmp(p.value, "auto")) a->simd = KILN_SIMD_AUTO;
            else if (!strcmp(p.value, "scalar")) a->simd = KILN_SIMD_SCALAR;
            else if (!strcmp(p.value, "sse2")) a->simd = KILN_SIMD_SSE2;
            else if (!strcmp(p.value, "avx2")) a->simd = KILN_SIMD_AVX2;
            else if (!strcmp(p.value, "avx512")) a->simd = KILN_SIMD_AVX512;
            else status = kiln__cli_usage_error(KILN__POSE_VERB, "--simd takes auto, scalar, sse2, avx2 or avx512, not '%s'",
                                                p.value);
            break;
        case OPT_NO_RIG: a->no_rig = 1; break;
        case OPT_SKIN: a->skin_mesh = p.value; break;
        default: break;
        }
        if (status != KILN_EXIT_OK) return status;
    }
    if (!a->model_path) return kiln__cli_usage_error(KILN__POSE_VERB, "missing MODEL file");
    if (!have_frames) return kiln__cli_usage_error(KILN__POSE_VERB, "missing --frames LIST");
    if (have_error && !a->lossy)
        return kiln__cli_usage_error(KILN__POSE_VERB, "--anim-error and --anim-distance need --lossy-anim");
    return KILN_EXIT_OK;
}
/* ---- the verb -------------------------------------------------------------------------------- */

void kiln__pose_free(kiln__pose *p)
{
    free(p->args.frames);
    for (int i = 0; i < 2; i++) {
        kiln__cli_file_free(&p->in[i].file);
        free(p->loaded[i].mem);
    }
    if (p->baked.baked.blob) kiln_bake_result_free(&p->baked.baked);
    free(p->order);
    free(p->cast_parent);
    free(p->ts);
    free(p->shown);
    free(p->shapes);
    kiln_source_scene_free(&p->shape_scene);
    free(p->binding_mem);
    free(p->context_mem);
    free(p->pose);
    free(p->matrices);
    free(p->values);
    kiln__pose_deform_free(p);
}

static int kiln__pose_run(int argc, char **argv)
{
    kiln__pose p;
    memset(&p, 0, sizeof p);
    int status = kiln__pose_args_parse(&p.args, argc, argv);
    if (status == KILN_EXIT_OK) status = kiln__pose_load(&p);
    if (status == KILN_EXIT_OK) status = kiln__pose_find_skeleton(&p);
    if (status == KILN_EXIT_OK) status = kiln__pose_find_clip(&p);
    if (status == KILN_EXIT_OK) status = kiln__pose_collect_shapes(&p);
    if (status == KILN_EXIT_OK) status = kiln__pose_prepare_scalars(&p);
    if (status == KILN_EXIT_OK) status = kiln__pose_bind(&p);
    if (status == KILN_EXIT_OK) status = kiln__pose_deform_prepare(&p);
    if (status == KILN_EXIT_OK && p.args.simd_set) {
        kiln_simd got = kiln_simd_force(p.args.simd);
        if (p.args.simd != KILN_SIMD_AUTO && got != p.args.simd)
            fprintf(stderr, KILN_CLI_NAME ": " KILN__POSE_VERB ": warning: %s is not available here, using %s\n",
                    kiln_simd_name(p.args.simd), kiln_simd_name(got));
    }
    if (status == KILN_EXIT_OK) status = p.args.json ? kiln__pose_run_json(&p) : kiln__pose_run_text(&p);
    if (status == KILN_EXIT_OK && p.non_finite) {
        fprintf(stderr, KILN_CLI_NAME ": " KILN__POSE_VERB ": %llu sampled values were not finite (printed as %s)\n",
                (unsigned long long)p.non_finite, p.args.json ? "null" : "-");
        status = KILN_EXIT_INPUT;
    }
    kiln__pose_free(&p);
    return status;
}

const kiln__cli_verb kiln__cli_verb_pose = {
    KILN__POSE_VERB,
    "sample an animation clip on a skeleton at given frames and print the pose",
    kiln__pose_run,
    kiln__pose_help,
};
