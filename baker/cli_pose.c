/* `kiln pose`: sample an animation clip on a skeleton at chosen frames and print the pose.
 *
 * The verb goes through the same path a game does: Cast inputs are baked in memory (both in one
 * kiln_bake call, so that a lossy clip is bounded through the skeleton it plays on), blobs are
 * loaded with full verification, then kiln_anim_bind, kiln_sample and kiln_pose_local_to_model
 * produce the numbers. What it prints is therefore what the runtime computes, which makes the
 * verb a debugging tool for both the baker and the runtime. docs/pose-json.md describes the
 * output.
 *
 * Bones are printed in the Cast file's order (kiln_blob_bone.source_index), not the blob's
 * parent-first order, so that the output lines up with what an artist sees in the DCC.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inspect_blob.h"
#include "json.h"
#include "kiln/anim.h"
#include "kiln/bake.h"
#include "kiln/blob.h"
#include "kiln/cast.h"
#include "kiln/cast_scene.h"

#define KILN__POSE_VERB "pose"
/* More frames than anyone reads, few enough that a typo cannot fill the disk for an hour. */
#define KILN__POSE_MAX_FRAMES 1000000u

enum { OPT_FRAMES, OPT_JSON, OPT_CLIP, OPT_LOOP, OPT_LOSSY, OPT_ANIM_ERROR, OPT_ANIM_DISTANCE, OPT_SIMD, OPT_HELP };

static const kiln__cli_opt kiln__pose_opts[] = {
    {"frames", 'f', "LIST", OPT_FRAMES, "frames to sample, e.g. 0,5,7.5,10-20,0-30:3 (required)"},
    {"json", 0, NULL, OPT_JSON, "print one JSON document (docs/pose-json.md) instead of text"},
    {"clip", 'c', "NAME|INDEX", OPT_CLIP, "the clip to sample (default: the first of ANIM)"},
    {"loop", 0, "MODE", OPT_LOOP, "clip (default: wrap when authored looping), clamp or wrap"},
    {"lossy-anim", 0, NULL, OPT_LOSSY, "bake Cast animation with quantised rows (lossy, bounded)"},
    {"anim-error", 0, "M", OPT_ANIM_ERROR, "with --lossy-anim: largest model-space error in metres (0.0001)"},
    {"anim-distance", 0, "M", OPT_ANIM_DISTANCE, "with --lossy-anim: its distance from each joint in metres (0.1)"},
    {"simd", 0, "PATH", OPT_SIMD, "auto (default), scalar, sse2 or avx2"},
    {"help", 'h', NULL, OPT_HELP, "show this help"},
};
#define KILN__POSE_OPT_COUNT (sizeof kiln__pose_opts / sizeof kiln__pose_opts[0])

static void kiln__pose_help(FILE *out)
{
    fputs("Usage: " KILN_CLI_NAME " pose [options] MODEL [ANIM] --frames LIST\n"
          "\n"
          "Samples an animation clip on a skeleton with the runtime (bind, sample, local to model)\n"
          "and prints, for every frame and every bone in the Cast file's bone order, the local\n"
          "translation, rotation (x, y, z, w) and scale and the model-space transform, then the\n"
          "clip's blend shape weights and visibility values.\n"
          "\n"
          "MODEL and ANIM are Cast files or baked blobs. Cast files are baked in memory, both in\n"
          "one bake, so that --lossy-anim bounds the error through MODEL's skeleton. The skeleton is\n"
          "that of the first model in MODEL that has one. The clip is the first one in ANIM (in\n"
          "MODEL when ANIM is omitted), or the one --clip names (a name, else a 0-based index\n"
          "among that file's clips).\n"
          "\n"
          "Frame f is sampled at time f / framerate; fractional frames interpolate. Model space\n"
          "is the space of the Cast file's skeleton: the Model node's transform (p, r, s) is not\n"
          "applied. Text output shows each bone's model-space position; --json gives the full\n"
          "matrices (column-major). Blend shape weights are clamped to [0, ts] when MODEL is a\n"
          "Cast file with a BlendShape of that name; visibility prints 1 for any nonzero value.\n"
          "\n"
          "LIST is comma-separated frames and ranges: F, A-B (both ends included, step 1) or\n"
          "A-B:STEP, with decimals allowed (0,5,7.5,10-20,0-30:3). At most 1000000 frames.\n"
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
          "     clip (or none that --clip names); a sampled value was not finite\n"
          "  4  the output could not be written\n",
          out);
}

/* ---- command line ---------------------------------------------------------------------------- */

typedef struct kiln__pose_args {
    const char *model_path, *anim_path; /* anim_path NULL: the clip comes from MODEL */
    const char *clip;                   /* --clip, or NULL */
    double     *frames;                 /* parsed --frames, frame_count values */
    uint32_t    frame_count;
    int         json, lossy, simd_set;
    kiln_loop   loop;
    kiln_simd   simd;
    float       anim_error_m, anim_distance_m; /* 0: the baker's defaults */
} kiln__pose_args;

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
            else status = kiln__cli_usage_error(KILN__POSE_VERB, "--simd takes auto, scalar, sse2 or avx2, not '%s'", p.value);
            break;
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

/* ---- inputs ---------------------------------------------------------------------------------- */

/* A blob the pose reads: baked here from Cast inputs, or loaded from a file. */
typedef struct kiln__pose_blob {
    const kiln_blob  *blob;
    void             *mem;        /* aligned copy of a file (NULL for a bake) */
    kiln_bake_result  baked;      /* blob == NULL when not baked */
} kiln__pose_blob;

/* One input: its bytes, and where its records ended up. */
typedef struct kiln__pose_input {
    const char     *path;
    kiln__cli_file  file;
    int             is_blob;
    kiln__pose_blob *where;       /* the blob holding its records */
    uint32_t        source;       /* its input index in that bake; KILN_BLOB_NONE: all records */
} kiln__pose_input;

typedef struct kiln__pose_bs {
    const char *name;             /* points into MODEL's bytes */
    float       ts;
} kiln__pose_bs;

typedef struct kiln__pose {
    kiln__pose_args   args;
    kiln__pose_input  in[2];      /* MODEL, ANIM */
    uint32_t          input_count;
    kiln__pose_blob   baked, loaded[2];
    /* the skeleton */
    const kiln_blob  *skel_blob;
    uint32_t          model, skeleton, bone_count;
    const kiln_blob_bone *bones;  /* the skeleton's, parent-first */
    uint32_t         *order;      /* order[k]: skeleton bone printed k-th (Cast order) */
    int32_t          *cast_parent;/* Cast parent index of the k-th printed bone, -1 for roots */
    /* the clip */
    const kiln_blob  *anim_blob;
    uint32_t          clip;
    const kiln_blob_animation *anim;
    const kiln_blob_anim_scalar *scalars;
    float            *ts;         /* per scalar: blend shape clamp, or < 0 for none */
    uint8_t          *shown;      /* per scalar: 0 when a later track of the same kind and name wins */
    kiln__pose_bs    *shapes;     /* BlendShapes of MODEL's model (Cast MODEL only) */
    uint32_t          shape_count;
    /* runtime memory */
    void             *binding_mem, *context_mem;
    kiln_anim_binding *binding;
    kiln_soa_xform   *pose;
    float            *matrices, *values;
    uint64_t          non_finite; /* values printed as null / "-" */
} kiln__pose;

/* Bake diagnostics carry "path:node" in their path; print them as `kiln bake` does, file first. */
static void kiln__pose_sink(void *user, const kiln_diag *d)
{
    const kiln__pose *p = user;
    for (uint32_t i = 0; i < p->input_count; i++) {
        const char *path = p->in[i].path;
        size_t n = strlen(path);
        if (strncmp(d->path, path, n) != 0 || (d->path[n] != ':' && d->path[n] != 0)) continue;
        kiln_diag local = *d;
        const char *rest = d->path + n + (d->path[n] == ':');
        memmove(local.path, rest, strlen(rest) + 1);
        kiln__cli_print_diag(stderr, path, &local);
        return;
    }
    kiln__cli_print_diag(stderr, NULL, d);
}

/* Reads every input, bakes the Cast ones together and loads the blobs. */
static int kiln__pose_load(kiln__pose *p)
{
    p->in[0].path = p->args.model_path;
    p->in[1].path = p->args.anim_path;
    p->input_count = p->args.anim_path ? 2u : 1u;
    kiln_bake_input bake_in[2];
    uint32_t bake_count = 0;
    for (uint32_t i = 0; i < p->input_count; i++) {
        kiln__pose_input *in = &p->in[i];
        if (!kiln__cli_file_load(in->path, &in->file)) return KILN_EXIT_INPUT;
        in->is_blob = kiln__is_blob(in->file.data, in->file.size);
        if (in->is_blob) {
            kiln__pose_blob *b = &p->loaded[i];
            /* The loader reads in place and needs KILN_BLOB_ALIGN; the CLI's buffers are malloc'd. */
            if (posix_memalign(&b->mem, KILN_BLOB_ALIGN, in->file.size ? in->file.size : 1) != 0) {
                b->mem = NULL;
                fprintf(stderr, KILN_CLI_NAME ": " KILN__POSE_VERB ": out of memory\n");
                return KILN_EXIT_INPUT;
            }
            memcpy(b->mem, in->file.data, in->file.size);
            kiln_diag err;
            memset(&err, 0, sizeof err);
            if (kiln_blob_load(b->mem, in->file.size, 0, &b->blob, &err) != KILN_OK) {
                kiln__cli_print_diag(stderr, in->path, &err);
                return KILN_EXIT_INPUT;
            }
            in->where = b;
            in->source = KILN_BLOB_NONE;
            continue;
        }
        in->where = &p->baked;
        in->source = bake_count;
        bake_in[bake_count].path = in->path;
        bake_in[bake_count].data = in->file.data;
        bake_in[bake_count].size = in->file.size;
        bake_count++;
    }
    if (p->args.lossy && !bake_count)
        fprintf(stderr, KILN_CLI_NAME ": " KILN__POSE_VERB ": warning: --lossy-anim has no effect: no input is a Cast file\n");
    if (!bake_count) return KILN_EXIT_OK;

    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.diag.fn = kiln__pose_sink;
    o.diag.user = p;
    if (p->args.lossy) {
        o.flags |= KILN_BAKE_LOSSY_ANIMATION;
        o.anim_error_m = p->args.anim_error_m;
        o.anim_distance_m = p->args.anim_distance_m;
    }
    kiln_diag err;
    memset(&err, 0, sizeof err);
    if (kiln_bake(bake_in, bake_count, &o, &p->baked.baked, &err) != KILN_OK) {
        kiln__pose_sink(p, &err);
        fprintf(stderr, KILN_CLI_NAME ": " KILN__POSE_VERB ": the bake failed\n");
        return KILN_EXIT_INPUT;
    }
    memset(&err, 0, sizeof err);
    if (kiln_blob_load(p->baked.baked.blob, p->baked.baked.size, 0, &p->baked.blob, &err) != KILN_OK) {
        kiln__cli_print_diag(stderr, NULL, &err);
        return KILN_EXIT_INPUT;
    }
    return KILN_EXIT_OK;
}

/* ---- skeleton -------------------------------------------------------------------------------- */

typedef struct kiln__pose_rank {
    uint32_t source, bone; /* Cast index, skeleton bone index */
} kiln__pose_rank;

static int kiln__pose_cmp_rank(const void *a, const void *b)
{
    const kiln__pose_rank *x = a, *y = b;
    if (x->source != y->source) return x->source < y->source ? -1 : 1;
    return x->bone < y->bone ? -1 : x->bone > y->bone; /* equal sources (a hand-made blob): stable */
}

/* Fills order[k] with the skeleton bone printed k-th: ascending source_index. */
static int kiln__pose_sort_order(uint32_t *order, uint32_t n, const kiln_blob_bone *bones)
{
    kiln__pose_rank *r = malloc((n ? n : 1) * sizeof *r);
    if (!r) return 0;
    for (uint32_t i = 0; i < n; i++) r[i].source = bones[i].source_index, r[i].bone = i;
    qsort(r, n, sizeof *r, kiln__pose_cmp_rank);
    for (uint32_t k = 0; k < n; k++) order[k] = r[k].bone;
    free(r);
    return 1;
}

/* The first model of MODEL with a skeleton, and the Cast order of its bones. */
static int kiln__pose_find_skeleton(kiln__pose *p)
{
    const kiln__pose_input *in = &p->in[0];
    const kiln_blob *blob = in->where->blob;
    uint32_t model_count = 0, skel_count = 0, bone_total = 0;
    const kiln_blob_model *models = kiln_blob_models(blob, &model_count);
    const kiln_blob_skeleton *skels = kiln_blob_skeletons(blob, &skel_count);
    const kiln_blob_bone *bones = kiln_blob_bones(blob, &bone_total);
    for (uint32_t m = 0; m < model_count; m++) {
        if (in->source != KILN_BLOB_NONE && models[m].source != in->source) continue;
        if (models[m].skeleton == KILN_BLOB_NONE || models[m].skeleton >= skel_count) continue;
        p->skel_blob = blob;
        p->model = m;
        p->skeleton = models[m].skeleton;
        break;
    }
    if (!p->skel_blob) {
        fputs(KILN_CLI_NAME ": " KILN__POSE_VERB ": ", stderr);
        kiln__cli_put_text(stderr, in->path, "");
        fputs(": no model with a skeleton\n", stderr);
        return KILN_EXIT_INPUT;
    }
    const kiln_blob_skeleton *sk = &skels[p->skeleton];
    p->bone_count = sk->bone_count;
    p->bones = bones + sk->first_bone; /* in range: the loader checked it */
    uint32_t n = p->bone_count;
    p->order = malloc((n ? n : 1) * sizeof *p->order);
    p->cast_parent = malloc((n ? n : 1) * sizeof *p->cast_parent);
    uint32_t *rank = malloc((n ? n : 1) * sizeof *rank);
    if (!p->order || !p->cast_parent || !rank || !kiln__pose_sort_order(p->order, n, p->bones)) {
        free(rank);
        fprintf(stderr, KILN_CLI_NAME ": " KILN__POSE_VERB ": out of memory\n");
        return KILN_EXIT_INPUT;
    }
    for (uint32_t k = 0; k < n; k++) rank[p->order[k]] = k;
    /* Parents as positions in the printed order: the Cast index when the bones are the Cast
     * file's, 0..n-1, which they are for every skeleton the baker writes. */
    for (uint32_t k = 0; k < n; k++) {
        int32_t parent = p->bones[p->order[k]].parent;
        p->cast_parent[k] = parent < 0 ? -1 : (int32_t)rank[parent];
    }
    free(rank);
    return KILN_EXIT_OK;
}

/* ---- clip ------------------------------------------------------------------------------------ */

static const char *kiln__pose_clip_name(const kiln_blob *blob, const kiln_blob_animation *a)
{
    return kiln_blob_string(blob, a->name);
}

/* Lists the clips of the animation input on stderr, after a failed --clip. */
static void kiln__pose_list_clips(const kiln__pose_input *in, const kiln_blob_animation *anims, uint32_t count)
{
    fputs(KILN_CLI_NAME ": " KILN__POSE_VERB ": clips in '", stderr);
    kiln__cli_put_text(stderr, in->path, "");
    fputs("':", stderr);
    uint32_t index = 0;
    for (uint32_t c = 0; c < count; c++) {
        if (in->source != KILN_BLOB_NONE && anims[c].source != in->source) continue;
        fprintf(stderr, " %u '", index++);
        kiln__cli_put_text(stderr, kiln__pose_clip_name(in->where->blob, &anims[c]), "");
        fputc('\'', stderr);
    }
    fputs(index ? "\n" : " none\n", stderr);
}

/* A whole-string unsigned decimal index. */
static int kiln__pose_parse_index(const char *s, uint32_t *out)
{
    if (!*s || strlen(s) > 9) return 0;
    for (const char *c = s; *c; c++)
        if (*c < '0' || *c > '9') return 0;
    *out = (uint32_t)strtoul(s, NULL, 10);
    return 1;
}

/* The clip: --clip by name (exact), else by index among the input's clips; default the first. */
static int kiln__pose_find_clip(kiln__pose *p)
{
    const kiln__pose_input *in = &p->in[p->args.anim_path ? 1 : 0];
    const kiln_blob *blob = in->where->blob;
    uint32_t count = 0;
    const kiln_blob_animation *anims = kiln_blob_animations(blob, &count);
    uint32_t want_index = 0, found = KILN_BLOB_NONE, index = 0;
    int by_index = !p->args.clip;
    if (p->args.clip) {
        for (uint32_t c = 0; c < count && found == KILN_BLOB_NONE; c++)
            if ((in->source == KILN_BLOB_NONE || anims[c].source == in->source) &&
                strcmp(kiln__pose_clip_name(blob, &anims[c]), p->args.clip) == 0)
                found = c;
        by_index = found == KILN_BLOB_NONE && kiln__pose_parse_index(p->args.clip, &want_index);
    }
    for (uint32_t c = 0; by_index && c < count && found == KILN_BLOB_NONE; c++) {
        if (in->source != KILN_BLOB_NONE && anims[c].source != in->source) continue;
        if (index++ == want_index) found = c;
    }
    if (found == KILN_BLOB_NONE) {
        fputs(KILN_CLI_NAME ": " KILN__POSE_VERB ": ", stderr);
        kiln__cli_put_text(stderr, in->path, "");
        if (!p->args.clip) {
            fputs(": no animation clip\n", stderr);
            return KILN_EXIT_INPUT;
        }
        fputs(": no clip named '", stderr);
        kiln__cli_put_text(stderr, p->args.clip, "");
        fputs("'\n", stderr);
        kiln__pose_list_clips(in, anims, count);
        return KILN_EXIT_INPUT;
    }
    p->anim_blob = blob;
    p->clip = found;
    p->anim = &anims[found];
    return KILN_EXIT_OK;
}

/* ---- blend shape clamps ---------------------------------------------------------------------- */

/* The Model node of MODEL's Cast document that matches the blob model: the first with a
 * skeleton and the same name, else the first with a skeleton. */
static uint32_t kiln__pose_cast_model(const kiln_cast_doc *doc, const char *name)
{
    uint32_t first = KILN_CAST_NONE;
    uint32_t n = kiln_cast_node_count(doc);
    for (uint32_t i = 0; i < n; i++) {
        if (kiln_cast_node_at(doc, i)->id != KILN_CAST_ID_MODEL) continue;
        kiln_cast_model m;
        if (kiln_cast_get_model(doc, i, &m, NULL) != KILN_OK || m.skeleton == KILN_CAST_NONE) continue;
        if (first == KILN_CAST_NONE) first = i;
        if (m.name && strcmp(m.name, name) == 0) return i;
    }
    return first;
}

/* Collects the BlendShapes (name, ts) of MODEL's animated model, when MODEL is a Cast file.
 * Their names point into MODEL's bytes, which outlive the pose. Diagnostics were printed by the
 * bake already, so this pass reads silently. */
static int kiln__pose_collect_shapes(kiln__pose *p)
{
    const kiln__pose_input *in = &p->in[0];
    if (in->is_blob) return KILN_EXIT_OK;
    kiln_cast_doc *doc = NULL;
    if (kiln_cast_parse(in->file.data, in->file.size, NULL, &doc, NULL) != KILN_OK) return KILN_EXIT_OK;
    const char *name = kiln_blob_string(p->skel_blob, kiln_blob_models(p->skel_blob, NULL)[p->model].name);
    uint32_t model = kiln__pose_cast_model(doc, name);
    uint32_t count = model == KILN_CAST_NONE ? 0 : kiln_cast_child_count(doc, model, KILN_CAST_ID_BLENDSHAPE);
    p->shapes = malloc((count ? count : 1) * sizeof *p->shapes);
    if (!p->shapes) {
        kiln_cast_free(doc);
        fprintf(stderr, KILN_CLI_NAME ": " KILN__POSE_VERB ": out of memory\n");
        return KILN_EXIT_INPUT;
    }
    for (uint32_t c = model == KILN_CAST_NONE ? KILN_CAST_NONE : kiln_cast_node_at(doc, model)->first_child;
         c != KILN_CAST_NONE; c = kiln_cast_node_at(doc, c)->next_sibling) {
        if (kiln_cast_node_at(doc, c)->id != KILN_CAST_ID_BLENDSHAPE) continue;
        kiln_cast_blend_shape bs;
        if (kiln_cast_get_blend_shape(doc, c, &bs, NULL) != KILN_OK || !bs.name) continue; /* skipped by the baker too */
        p->shapes[p->shape_count].name = bs.name;
        p->shapes[p->shape_count].ts = bs.target_scale;
        p->shape_count++;
    }
    kiln_cast_free(doc);
    return KILN_EXIT_OK;
}

/* Per scalar track: the clamp (C.5: a weight is clamped to [0, ts]; the first BlendShape of that
 * name in file order supplies ts) and whether a later track of the same kind and name
 * overrides it (the last curve of a channel wins, D.4). */
static int kiln__pose_prepare_scalars(kiln__pose *p)
{
    uint32_t total = 0, n = p->anim->scalar_count;
    const kiln_blob_anim_scalar *all = kiln_blob_anim_scalars(p->anim_blob, &total);
    p->scalars = n ? all + p->anim->first_scalar : NULL; /* in range: the loader checked it */
    p->ts = malloc((n ? n : 1) * sizeof *p->ts);
    p->shown = malloc(n ? n : 1);
    if (!p->ts || !p->shown) {
        fprintf(stderr, KILN_CLI_NAME ": " KILN__POSE_VERB ": out of memory\n");
        return KILN_EXIT_INPUT;
    }
    for (uint32_t i = 0; i < n; i++) {
        const kiln_blob_anim_scalar *s = &p->scalars[i];
        const char *name = kiln_blob_string(p->anim_blob, s->name);
        p->ts[i] = -1.0f;
        for (uint32_t k = 0; s->kind == KILN_SCALAR_BLEND_SHAPE && k < p->shape_count; k++)
            if (strcmp(p->shapes[k].name, name) == 0) {
                p->ts[i] = p->shapes[k].ts;
                break;
            }
        p->shown[i] = 1;
        for (uint32_t j = i + 1; j < n && p->shown[i]; j++)
            if (p->scalars[j].kind == s->kind && p->scalars[j].name_hash == s->name_hash &&
                strcmp(kiln_blob_string(p->anim_blob, p->scalars[j].name), name) == 0)
                p->shown[i] = 0;
    }
    return KILN_EXIT_OK;
}

/* ---- runtime --------------------------------------------------------------------------------- */

static void *kiln__pose_aligned(size_t size)
{
    void *mem = NULL;
    size = (size + 63u) & ~(size_t)63u;
    if (posix_memalign(&mem, 64, size ? size : 64) != 0) return NULL;
    memset(mem, 0, size ? size : 64);
    return mem;
}

/* Binds the clip to the skeleton, reports missing bones, and allocates what sampling writes. */
static int kiln__pose_bind(kiln__pose *p)
{
    size_t bsize = kiln_anim_binding_size(p->anim_blob, p->clip, p->skel_blob, p->skeleton);
    p->binding_mem = bsize ? kiln__pose_aligned(bsize) : NULL;
    kiln_anim_bind_report report;
    memset(&report, 0, sizeof report);
    kiln_result r = p->binding_mem ? kiln_anim_bind(p->anim_blob, p->clip, p->skel_blob, p->skeleton, p->binding_mem,
                                                    bsize, &p->binding, &report)
                                   : KILN_ERR_OUT_OF_MEMORY;
    if (r != KILN_OK) {
        fprintf(stderr, KILN_CLI_NAME ": " KILN__POSE_VERB ": cannot bind the clip to the skeleton: %s\n",
                kiln_result_str(r));
        return KILN_EXIT_INPUT;
    }
    if (report.missing_joints) {
        uint32_t jcount = 0;
        const kiln_blob_anim_joint *joints = kiln_blob_anim_joints(p->anim_blob, &jcount);
        uint32_t slot = p->anim->first_joint + report.first_missing;
        int one = report.missing_joints == 1;
        fprintf(stderr, KILN_CLI_NAME ": " KILN__POSE_VERB ": warning: %u bone%s animated by the clip %s not in the skeleton",
                report.missing_joints, one ? "" : "s", one ? "is" : "are");
        if (report.first_missing != KILN_BLOB_NONE && slot < jcount) {
            fputs(one ? " ('" : " (first: '", stderr);
            kiln__cli_put_text(stderr, kiln_blob_string(p->anim_blob, joints[slot].name), "");
            fputs("')", stderr);
        }
        fputs(one ? "; its curves are ignored\n" : "; their curves are ignored\n", stderr);
    }
    uint32_t soa = kiln_anim_binding_soa_count(p->binding);
    size_t csize = kiln_sample_context_size(p->binding);
    p->context_mem = kiln__pose_aligned(csize);
    p->pose = kiln__pose_aligned((size_t)(soa ? soa : 1) * sizeof *p->pose);
    p->matrices = kiln__pose_aligned((size_t)(p->bone_count ? p->bone_count : 1) * 16u * sizeof(float));
    p->values = kiln__pose_aligned((size_t)(p->anim->scalar_count ? p->anim->scalar_count : 1) * sizeof(float));
    if (!p->context_mem || !p->pose || !p->matrices || !p->values ||
        kiln_sample_context_init(p->context_mem, (csize + 63u) & ~(size_t)63u, p->binding) != KILN_OK) {
        fprintf(stderr, KILN_CLI_NAME ": " KILN__POSE_VERB ": out of memory\n");
        return KILN_EXIT_INPUT;
    }
    return KILN_EXIT_OK;
}

/* Samples one frame into p->pose, p->matrices and p->values. */
static int kiln__pose_sample(kiln__pose *p, double frame)
{
    kiln_sample_desc s;
    memset(&s, 0, sizeof s);
    s.binding = p->binding;
    s.time_s = frame / (double)p->anim->framerate;
    s.loop = p->args.loop;
    s.out = p->pose;
    s.out_count = kiln_anim_binding_soa_count(p->binding);
    s.context = p->context_mem;
    s.scalars = p->values;
    s.scalar_count = p->anim->scalar_count;
    kiln_result r = kiln_sample(&s);
    if (r == KILN_OK)
        r = kiln_pose_local_to_model(p->skel_blob, p->skeleton, p->pose, NULL, p->matrices, p->bone_count);
    if (r != KILN_OK) {
        fprintf(stderr, KILN_CLI_NAME ": " KILN__POSE_VERB ": sampling frame %.9g failed: %s\n", frame,
                kiln_result_str(r));
        return KILN_EXIT_INPUT;
    }
    return KILN_EXIT_OK;
}

/* Bone b's 10 local components (tx ty tz qx qy qz qw sx sy sz) from the SoA pose. */
static void kiln__pose_local(const kiln__pose *p, uint32_t bone, float out[10])
{
    const float *block = (const float *)(const void *)&p->pose[bone / KILN_SOA_WIDTH];
    for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) out[c] = block[c * KILN_SOA_WIDTH + bone % KILN_SOA_WIDTH];
}

/* The value printed for scalar track i: a clamped blend shape weight, or visibility 0/1. */
static float kiln__pose_scalar(const kiln__pose *p, uint32_t i)
{
    float v = p->values[i];
    if (!isfinite(v)) return v;
    if (p->scalars[i].kind == KILN_SCALAR_VISIBILITY) return v != 0.0f ? 1.0f : 0.0f;
    if (p->ts[i] >= 0.0f) v = v < 0.0f ? 0.0f : (v > p->ts[i] ? p->ts[i] : v);
    return v;
}

/* Counts the non-finite values of a frame (printed as null or "-"). */
static void kiln__pose_count_non_finite(kiln__pose *p)
{
    for (uint32_t b = 0; b < p->bone_count; b++) {
        float l[10];
        kiln__pose_local(p, b, l);
        for (int c = 0; c < 10; c++) p->non_finite += !isfinite(l[c]);
        for (int c = 0; c < 16; c++) p->non_finite += !isfinite(p->matrices[(size_t)b * 16u + (size_t)c]);
    }
    for (uint32_t i = 0; i < p->anim->scalar_count; i++) p->non_finite += p->shown[i] && !isfinite(p->values[i]);
}

/* ---- JSON output ----------------------------------------------------------------------------- */

static void kiln__pose_json_scalars(const kiln__pose *p, kiln__json *j, uint32_t kind)
{
    kiln__json_begin_object_inline(j);
    for (uint32_t i = 0; i < p->anim->scalar_count; i++) {
        if (p->scalars[i].kind != kind || !p->shown[i]) continue;
        kiln__json_key(j, kiln_blob_string(p->anim_blob, p->scalars[i].name));
        float v = kiln__pose_scalar(p, i);
        if (kind == KILN_SCALAR_VISIBILITY && isfinite(v)) kiln__json_u64(j, v != 0.0f);
        else kiln__json_f64(j, v);
    }
    kiln__json_end_object(j);
}

static void kiln__pose_json_frame(const kiln__pose *p, kiln__json *j, double frame)
{
    kiln__json_begin_object(j);
    kiln__json_key_f64(j, "frame", frame);
    kiln__json_key_f64(j, "time", frame / (double)p->anim->framerate);
    kiln__json_key(j, "local");
    kiln__json_begin_array(j);
    for (uint32_t k = 0; k < p->bone_count; k++) {
        float l[10];
        kiln__pose_local(p, p->order[k], l);
        kiln__json_f32_array(j, l, 10);
    }
    kiln__json_end_array(j);
    kiln__json_key(j, "model");
    kiln__json_begin_array(j);
    for (uint32_t k = 0; k < p->bone_count; k++) kiln__json_f32_array(j, p->matrices + (size_t)p->order[k] * 16u, 16);
    kiln__json_end_array(j);
    kiln__json_key(j, "shapes");
    kiln__pose_json_scalars(p, j, KILN_SCALAR_BLEND_SHAPE);
    kiln__json_key(j, "visible");
    kiln__pose_json_scalars(p, j, KILN_SCALAR_VISIBILITY);
    kiln__json_end_object(j);
}

static int kiln__pose_run_json(kiln__pose *p)
{
    kiln__json j;
    kiln__json_init(&j, stdout, 2);
    kiln__json_begin_object(&j);
    const kiln_blob_model *model = &kiln_blob_models(p->skel_blob, NULL)[p->model];
    kiln__json_key_string(&j, "model", kiln_blob_string(p->skel_blob, model->name));
    kiln__json_key_string(&j, "clip", kiln__pose_clip_name(p->anim_blob, p->anim));
    kiln__json_key_f64(&j, "fps", p->anim->framerate);
    kiln__json_key(&j, "frame_range");
    kiln__json_begin_array_inline(&j);
    kiln__json_i64(&j, p->anim->first_frame);
    kiln__json_i64(&j, p->anim->last_frame);
    kiln__json_end_array(&j);
    kiln__json_key_bool(&j, "looping", (p->anim->flags & KILN_ANIM_LOOPING) != 0);
    kiln__json_key(&j, "joints");
    kiln__json_begin_array_inline(&j);
    for (uint32_t k = 0; k < p->bone_count; k++) kiln__json_string(&j, kiln_blob_string(p->skel_blob, p->bones[p->order[k]].name));
    kiln__json_end_array(&j);
    kiln__json_key(&j, "parents");
    kiln__json_begin_array_inline(&j);
    for (uint32_t k = 0; k < p->bone_count; k++) kiln__json_i64(&j, p->cast_parent[k]);
    kiln__json_end_array(&j);
    kiln__json_key(&j, "frames");
    kiln__json_begin_array(&j);
    int status = KILN_EXIT_OK;
    for (uint32_t f = 0; f < p->args.frame_count && status == KILN_EXIT_OK; f++) {
        status = kiln__pose_sample(p, p->args.frames[f]);
        if (status != KILN_EXIT_OK) break;
        kiln__pose_count_non_finite(p);
        kiln__pose_json_frame(p, &j, p->args.frames[f]);
        if (ferror(stdout)) status = KILN_EXIT_OUTPUT; /* a closed pipe: stop sampling */
    }
    kiln__json_end_array(&j);
    kiln__json_end_object(&j);
    if (kiln__json_finish(&j) != 0 && status == KILN_EXIT_OK) {
        fprintf(stderr, KILN_CLI_NAME ": " KILN__POSE_VERB ": internal error: malformed JSON\n");
        status = KILN_EXIT_OUTPUT;
    }
    return status;
}

/* ---- text output ----------------------------------------------------------------------------- */

/* A fixed-width number; tiny values print as 0 (not -0.000000), non-finite ones as "-". */
static void kiln__pose_put_num(float v)
{
    if (!isfinite(v)) {
        printf(" %10s", "-");
        return;
    }
    printf(" %10.6f", fabsf(v) < 5e-7f ? 0.0 : (double)v);
}

/* Writes a name padded to `width` columns (bytes: multi-byte UTF-8 names may misalign). */
static void kiln__pose_put_name(const char *name, size_t width)
{
    kiln__cli_put_text(stdout, name, "");
    for (size_t n = strlen(name); n < width; n++) fputc(' ', stdout);
}

static void kiln__pose_text_scalars(const kiln__pose *p, uint32_t kind, const char *label)
{
    int any = 0;
    for (uint32_t i = 0; i < p->anim->scalar_count; i++) {
        if (p->scalars[i].kind != kind || !p->shown[i]) continue;
        if (!any) printf("  %s:", label);
        any = 1;
        fputc(' ', stdout);
        kiln__cli_put_text(stdout, kiln_blob_string(p->anim_blob, p->scalars[i].name), "");
        float v = kiln__pose_scalar(p, i);
        if (isfinite(v)) printf(" %.6g", (double)v);
        else fputs(" -", stdout);
    }
    if (any) fputc('\n', stdout);
}

static void kiln__pose_text_header(const kiln__pose *p, size_t width)
{
    const kiln_blob_model *model = &kiln_blob_models(p->skel_blob, NULL)[p->model];
    static const char *const loop_names[] = {"clip", "clamp", "wrap"};
    fputs("model '", stdout);
    kiln__cli_put_text(stdout, kiln_blob_string(p->skel_blob, model->name), "");
    printf("' (%u bones), clip '", p->bone_count);
    kiln__cli_put_text(stdout, kiln__pose_clip_name(p->anim_blob, p->anim), "");
    printf("': %.9g fps, frames %lld to %lld%s%s; loop mode %s\n", (double)p->anim->framerate,
           (long long)p->anim->first_frame, (long long)p->anim->last_frame,
           (p->anim->flags & KILN_ANIM_LOOPING) ? ", looping" : "",
           (p->anim->flags & KILN_ANIM_LOSSY) ? ", lossy" : "", loop_names[p->args.loop]);
    if (p->anim->flags & KILN_ANIM_LOSSY)
        printf("lossy bound: %.3g m at %.3g m from each joint\n", (double)p->anim->error_bound_m,
               (double)p->anim->error_distance_m);
    puts("local: translation, rotation (x y z w), scale; model: position in the Cast file's model space\n"
         "(the Model node's transform is not applied)");
    printf("  ");
    kiln__pose_put_name("bone", width);
    static const char *const cols[] = {"tx", "ty", "tz", "qx", "qy", "qz", "qw", "sx", "sy", "sz",
                                       "model x", "model y", "model z"};
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) printf(" %10s", cols[c]);
    fputc('\n', stdout);
}

static int kiln__pose_run_text(kiln__pose *p)
{
    size_t width = 4;
    for (uint32_t b = 0; b < p->bone_count; b++) {
        size_t n = strlen(kiln_blob_string(p->skel_blob, p->bones[b].name));
        width = n > width ? n : width;
    }
    if (width > 32) width = 32; /* longer names push their own line out, not every line */
    kiln__pose_text_header(p, width);
    for (uint32_t f = 0; f < p->args.frame_count; f++) {
        double frame = p->args.frames[f];
        int status = kiln__pose_sample(p, frame);
        if (status != KILN_EXIT_OK) return status;
        kiln__pose_count_non_finite(p);
        printf("\nframe %.9g, time %.9g s\n", frame, frame / (double)p->anim->framerate);
        for (uint32_t k = 0; k < p->bone_count; k++) {
            uint32_t b = p->order[k];
            float l[10];
            kiln__pose_local(p, b, l);
            printf("  ");
            kiln__pose_put_name(kiln_blob_string(p->skel_blob, p->bones[b].name), width);
            for (int c = 0; c < 10; c++) kiln__pose_put_num(l[c]);
            for (int c = 0; c < 3; c++) kiln__pose_put_num(p->matrices[(size_t)b * 16u + 12u + (size_t)c]);
            fputc('\n', stdout);
        }
        kiln__pose_text_scalars(p, KILN_SCALAR_BLEND_SHAPE, "shapes");
        kiln__pose_text_scalars(p, KILN_SCALAR_VISIBILITY, "visible");
        if (ferror(stdout)) return KILN_EXIT_OUTPUT; /* a closed pipe: stop sampling */
    }
    return KILN_EXIT_OK;
}

/* ---- the verb -------------------------------------------------------------------------------- */

static void kiln__pose_free(kiln__pose *p)
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
    free(p->binding_mem);
    free(p->context_mem);
    free(p->pose);
    free(p->matrices);
    free(p->values);
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
