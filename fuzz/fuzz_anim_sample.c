/* libFuzzer target for the animation runtime: binding, sampling, blending, pose matrices and
 * events, on hostile blobs and at hostile times.
 *
 * Input: a 24-byte header of knobs, then the blob.
 *   in[0] & 3        0: the rest of the input is a blob, loaded as it is (copied into exact-size
 *                    64-byte-aligned memory, so a read past the end is an ASan error);
 *                    else: the rest is a list of 4-byte patches (24-bit offset, xor byte)
 *                    applied to built-in blob (in[0] >> 2 & 15) % count, so that mutations start
 *                    from valid clips whatever the corpus holds; in[0] & 0x80 then recomputes the
 *                    checksum, so the patched blob also reaches full verification
 *   in[1] & 3        SIMD path: best, scalar, SSE2, AVX2 (a missing one falls back; the best
 *                    is AVX-512 on CPUs with it, which runs the AVX2 kernels of this target)
 *   in[2]            bit 0 sample over a base pose, bit 1 sample in place (out == base),
 *                    bit 2 read scalars, bit 3 also bind to the skeleton of a built-in blob,
 *                    bit 4 bind the blob loaded with KILN_BLOB_LOAD_TRUSTED too
 *   in[3]            blend threshold (an index into a table, hostile values included)
 *   in[4..7]         float: a layer weight
 *   in[8..15], in[16..23]  doubles t0, t1: the caller's own times (and event interval)
 * The blob is loaded with KILN_BLOB_LOAD_NO_CRC (mutations are judged on structure) and with
 * full verification (which must never accept what the structural pass rejected). Every clip
 * (up to 3) is bound to every skeleton (up to 2) and sampled at fixed hostile times (NaN, ±inf,
 * ±0, denormals, ±1e300, exactly on and next to the first and last frames, ...) and at t0, t1,
 * with every kiln_loop mode (and an out-of-range one), with and without a sampling context,
 * then blended, layered (kiln_pose_add), taken to model and skinning matrices, and queried for
 * events over hostile intervals.
 *
 * Checks, beyond the sanitizers:
 *   - documented errors come back as documented (misaligned or short binding memory, short
 *     pose, NULL scalars, damaged context, bad threshold) and leave the outputs unwritten;
 *   - kiln_anim_bind succeeds on every verified (clip, skeleton) pair, with a consistent report;
 *   - samples with and without a context are bit-identical, as are in-place and out-of-place
 *     sampling and blending;
 *   - outputs are finite whenever the exact result is far from overflow: every float the
 *     sampler reads (constants, ranges, raw rows, rest pose, additive weights, scalars) within
 *     ±1e6, rotation components included (keys need not be unit quaternions); blends and
 *     additive layers of poses within ±1e12 for any layer weight (finite, infinite or NaN) and
 *     any finite threshold, denormals and FLT_MAX included; and for the matrices an a-priori
 *     bound on every product under 1e30;
 *   - events: at most one report per event, indices and times that match the clip's records,
 *     and (without wrapping) only times inside the interval.
 *
 * Seeds: run with KILN_FUZZ_WRITE_SEEDS=dir once to write the built-in blobs (raw and as patch
 * lists) into dir.
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/anim_fixture.h"
#include "kiln/anim.h"
#include "kiln/bake/bake.h"
#include "kiln/blob.h"
#include "kiln/bake/cast_write.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEADER 24
#define MAX_CLIPS 3
#define MAX_SKELETONS 2
#define MAX_BLOCKS 512      /* larger skeletons are bound but not sampled (time per input) */
#define TAME 1e6            /* data magnitude under which sampled outputs must be finite */
#define BOUND 1e30          /* a-priori matrix magnitude under which products must be finite */

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "fuzz_anim_sample: check failed at line %d: %s\n", __LINE__, #cond); \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

typedef struct knobs {
    uint8_t source, simd, flags, threshold;
    float weight;
    double t0, t1;
} knobs;

enum { K_BASE = 1, K_IN_PLACE = 2, K_SCALARS = 4, K_CROSS = 8, K_TRUSTED = 16 };

/* ---- built-in blobs ------------------------------------------------------------------------ */
typedef struct builtin {
    unsigned char *mem;
    size_t size;
    const kiln_blob *blob;
} builtin;

static builtin builtins[6];
static uint32_t builtin_count;

static void add_builtin(unsigned char *mem, size_t size)
{
    const kiln_blob *b = NULL;
    if (!mem) return;
    if (builtin_count == sizeof builtins / sizeof builtins[0] || kiln_blob_load(mem, size, 0, &b, NULL) != KILN_OK) {
        free(mem);
        return;
    }
    builtins[builtin_count++] = (builtin){mem, size, b};
}

/* A 10-bone skeleton with segment scale compensation on some bones, and 3 clips: lossless
 * looping with every mode, scalars, an override and events on the first and last frames;
 * 12-bit lossy with the slots out of the skeleton's order, a missing and an inexact name;
 * 24-bit lossy with a single frame. */
static void build_fixture_rich(void)
{
    static const char *names[10] = {"root", "hips", "spine", "chest", "neck", "head", "arm_l", "hand_l", "arm_r", "hand_r"};
    static const int32_t parents[10] = {-1, 0, 1, 2, 3, 4, 3, 6, 3, 8};
    af_bone bones[10];
    for (int i = 0; i < 10; i++) {
        af_bone *b = &bones[i];
        memset(b, 0, sizeof *b);
        b->name = names[i], b->parent = parents[i], b->ssc = i % 3 == 1;
        b->t[1] = 0.1f + 0.01f * (float)i;
        af_axis_angle(1, 0.5, 0.2, 0.1 * i, b->r);
        b->s[0] = b->s[1] = b->s[2] = 1.0f + 0.05f * (float)(i % 4);
    }
    af_skel skel = {10, bones};
    enum { F0 = 31, F1 = 17, J = 10 };
    float *v0 = malloc(sizeof(float) * F0 * J * 10), *v1 = malloc(sizeof(float) * F1 * J * 10);
    if (!v0 || !v1) abort();
    af_motion(F0, J, 3, 30, v0);
    af_motion(F1, J, 5, 24, v1);
    af_joint j0[J], j1[J], j2[J];
    for (int i = 0; i < J; i++) {
        uint32_t m = i < 3 ? KILN_MODE_ABSOLUTE : (i < 6 ? KILN_MODE_RELATIVE : KILN_MODE_ADDITIVE);
        j0[i] = (af_joint){names[i], AF_MODES_ALL(m), {0.5f, 0.75f, 1.0f}};
        j1[i] = (af_joint){names[J - 1 - i], AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}};
        j2[i] = (af_joint){names[i], AF_MODES_ALL(KILN_MODE_ABSOLUTE) & ~AF_MODE(7, 3), {1, 1, 1}};
    }
    j1[2].name = "no_such_bone";
    j1[4].name = "SPINE"; /* case-insensitive match */
    static const char *scalar_names[2] = {"breathe", "body"};
    static const uint32_t scalar_kinds[2] = {KILN_SCALAR_BLEND_SHAPE, KILN_SCALAR_VISIBILITY};
    float scalars[2 * F0];
    for (int f = 0; f < F0; f++) scalars[f] = (float)f / (F0 - 1), scalars[F0 + f] = (float)(f % 2);
    static const af_override ov[1] = {{"chest", KILN_MODE_RELATIVE, 2u, 0}};
    static const char *ev_names[3] = {"start", "step", "end"};
    static const int64_t ev_frames[3] = {2, 17, 2 + F0 - 1};
    af_clip clips[3] = {
        {.name = "walk", .framerate = 30, .flags = KILN_ANIM_LOOPING, .first_frame = 2, .frame_count = F0,
         .joint_count = J, .joints = j0, .values = v0, .width = 32, .scalar_count = 2, .scalar_names = scalar_names,
         .scalar_kinds = scalar_kinds, .scalar_values = scalars, .override_count = 1, .overrides = ov,
         .event_count = 3, .event_names = ev_names, .event_frames = ev_frames},
        {.name = "shuffled", .framerate = 24, .frame_count = F1, .joint_count = J, .joints = j1, .values = v1,
         .width = 12, .scramble_rows = 1},
        {.name = "still", .framerate = 60, .first_frame = -4, .frame_count = 1, .joint_count = J, .joints = j2,
         .values = v0, .width = 24, .all_tracks = 1},
    };
    size_t size;
    unsigned char *mem = af_build(&skel, clips, 3, &size);
    free(v0), free(v1);
    add_builtin(mem, size);
}

/* 3 bones and a 17-slot 16-bit clip (3 blocks, most slots unbound), 8-bit on a second clip. */
static void build_fixture_wide(void)
{
    static const char *bone_names[3] = {"Root", "spine.1", "tail"};
    af_bone bones[3] = {{bone_names[0], -1, {0, 1, 0}, {0, 0, 0, 1}, {1, 1, 1}, 0},
                        {bone_names[1], 0, {0, 0.2f, 0}, {0, 0, 0, 1}, {1, 1, 1}, 1},
                        {bone_names[2], 0, {0, 0, -0.3f}, {0, 0, 0, 1}, {2, 2, 2}, 1}};
    af_skel skel = {3, bones};
    enum { F = 9, J = 17 };
    float *v = malloc(sizeof(float) * F * J * 10);
    if (!v) abort();
    af_motion(F, J, 11, 15, v);
    char names[J][16];
    af_joint joints[J];
    for (int i = 0; i < J; i++) {
        snprintf(names[i], sizeof names[i], "slot%d", i);
        joints[i] = (af_joint){names[i], AF_MODES_ALL(i % 2 ? KILN_MODE_ADDITIVE : KILN_MODE_ABSOLUTE), {2.0f, -1.0f, 0.5f}};
    }
    joints[0].name = "ROOT", joints[9].name = "spine_1", joints[16].name = "tail";
    af_clip clips[2] = {
        {.name = "wide16", .framerate = 15, .flags = KILN_ANIM_LOOPING, .frame_count = F, .joint_count = J,
         .joints = joints, .values = v, .width = 16},
        {.name = "wide8", .framerate = 1e-3f, .frame_count = F, .joint_count = J, .joints = joints, .values = v,
         .width = 8, .all_tracks = 1},
    };
    size_t size;
    unsigned char *mem = af_build(&skel, clips, 2, &size);
    free(v);
    add_builtin(mem, size);
}

/* A model and a walk as Cast files, written in memory and baked by kiln_bake (lossless and
 * lossy): whatever layout the baker chooses is in the corpus too. */
static void *cast_bytes(kiln_cast_writer *w, size_t *size)
{
    *size = (size_t)kiln_cast_writer_size(w);
    void *p = malloc(*size ? *size : 1);
    if (!p || kiln_cast_writer_write(w, p, *size) != KILN_OK) {
        free(p);
        return NULL;
    }
    return p;
}

static void *write_model(size_t *size)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    if (!w) return NULL;
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    kiln_cast_writer_string(w, model, "n", "fuzz_model");
    uint32_t skel = kiln_cast_writer_node(w, model, KILN_CAST_ID_SKELETON, 3);
    static const char *names[6] = {"root", "pelvis", "spine", "head", "arm", "hand"};
    static const uint32_t parents[6] = {0xFFFFFFFFu, 0, 1, 2, 2, 4};
    for (uint32_t i = 0; i < 6; i++) {
        uint32_t b = kiln_cast_writer_node(w, skel, KILN_CAST_ID_BONE, 10 + i);
        float lp[3] = {0, 0.15f * (float)i, 0.01f * (float)i}, lr[4], s[3] = {1, 1, 1.0f + 0.1f * (float)(i == 2)};
        af_axis_angle(0, 1, 0, 0.2 * i, lr);
        kiln_cast_writer_string(w, b, "n", names[i]);
        kiln_cast_writer_prop(w, b, "p", KILN_CAST_TYPE_INT, &parents[i], 1);
        kiln_cast_writer_byte(w, b, "ssc", (uint8_t)(i % 2));
        kiln_cast_writer_floats(w, b, "lp", KILN_CAST_TYPE_VEC3, lp, 1);
        kiln_cast_writer_floats(w, b, "lr", KILN_CAST_TYPE_VEC4, lr, 1);
        kiln_cast_writer_floats(w, b, "s", KILN_CAST_TYPE_VEC3, s, 1);
    }
    void *p = cast_bytes(w, size);
    kiln_cast_writer_destroy(w);
    return p;
}

static void write_curve(kiln_cast_writer *w, uint32_t anim, uint64_t hash, const char *bone, const char *prop,
                        const char *mode, const uint32_t *kb, uint32_t n, const float *kv)
{
    uint32_t c = kiln_cast_writer_node(w, anim, KILN_CAST_ID_CURVE, hash);
    kiln_cast_writer_string(w, c, "nn", bone);
    kiln_cast_writer_string(w, c, "kp", prop);
    kiln_cast_writer_ints(w, c, "kb", kb, n);
    kiln_cast_writer_floats(w, c, "kv", strcmp(prop, "rq") == 0 ? KILN_CAST_TYPE_VEC4 : KILN_CAST_TYPE_FLOAT, kv, n);
    kiln_cast_writer_string(w, c, "m", mode);
}

static void *write_anim(size_t *size)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    if (!w) return NULL;
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t anim = kiln_cast_writer_node(w, root, KILN_CAST_ID_ANIMATION, 2);
    kiln_cast_writer_string(w, anim, "n", "fuzz_walk");
    float fr = 30;
    kiln_cast_writer_floats(w, anim, "fr", KILN_CAST_TYPE_FLOAT, &fr, 1);
    kiln_cast_writer_byte(w, anim, "lo", 1);
    enum { K = 7 };
    uint32_t kb[K] = {0, 3, 6, 10, 15, 16, 24};
    float tx[K], q[K * 4], s[K];
    for (int k = 0; k < K; k++) {
        tx[k] = 0.05f * sinf((float)k);
        s[k] = 1.0f + 0.02f * cosf((float)k);
        af_axis_angle(1, 0.2, 0.1, 0.4 * sin(k * 0.7), q + 4 * k);
    }
    uint64_t h = 100;
    write_curve(w, anim, h++, "root", "tx", "absolute", kb, K, tx);
    write_curve(w, anim, h++, "root", "tz", "relative", kb, K, tx);
    write_curve(w, anim, h++, "pelvis", "rq", "absolute", kb, K, q);
    write_curve(w, anim, h++, "spine", "rq", "relative", kb + 1, K - 1, q);
    write_curve(w, anim, h++, "head", "rq", "additive", kb, K, q);
    write_curve(w, anim, h++, "head", "sy", "additive", kb, K, s);
    write_curve(w, anim, h++, "arm", "sx", "absolute", kb, 3, s);
    write_curve(w, anim, h++, "hand", "ty", "absolute", kb + 2, 1, tx);
    write_curve(w, anim, h++, "missing", "tx", "absolute", kb, K, tx);
    uint32_t cmov = kiln_cast_writer_node(w, anim, KILN_CAST_ID_CURVE_MODE_OVERRIDE, h++);
    kiln_cast_writer_string(w, cmov, "nn", "spine");
    kiln_cast_writer_string(w, cmov, "m", "additive");
    kiln_cast_writer_byte(w, cmov, "or", 1);
    uint32_t ev = kiln_cast_writer_node(w, anim, KILN_CAST_ID_NOTIFICATION_TRACK, h++);
    const uint32_t ev_frames[2] = {0, 24};
    kiln_cast_writer_string(w, ev, "n", "footstep");
    kiln_cast_writer_ints(w, ev, "kb", ev_frames, 2);
    void *p = cast_bytes(w, size);
    kiln_cast_writer_destroy(w);
    return p;
}

static void build_baked(void)
{
    size_t ms = 0, as = 0;
    void *model = write_model(&ms), *anim = write_anim(&as);
    for (int lossy = 0; lossy < 2 && model && anim; lossy++) {
        kiln_bake_input in[2] = {{"fuzz_model.cast", model, ms, NULL}, {"fuzz_walk.cast", anim, as, NULL}};
        kiln_bake_options opt;
        memset(&opt, 0, sizeof opt);
        if (lossy) opt.flags |= KILN_BAKE_LOSSY_ANIMATION;
        kiln_bake_result res;
        if (kiln_bake(in, 2, &opt, &res, NULL) != KILN_OK) continue;
        /* own copy: kiln_bake_result_free goes through the result's allocator */
        unsigned char *mem = aligned_alloc(KILN_BLOB_ALIGN, (res.size + KILN_BLOB_ALIGN - 1) & ~(size_t)(KILN_BLOB_ALIGN - 1));
        if (mem) memcpy(mem, res.blob, res.size);
        add_builtin(mem, res.size);
        kiln_bake_result_free(&res);
    }
    free(model), free(anim);
}

/* ---- seeds ------------------------------------------------------------------------------------ */
static void put_knobs(uint8_t *h, uint8_t source, uint8_t simd, uint8_t flags, uint8_t thr, float w, double t0, double t1)
{
    h[0] = source, h[1] = simd, h[2] = flags, h[3] = thr;
    memcpy(h + 4, &w, 4);
    memcpy(h + 8, &t0, 8);
    memcpy(h + 16, &t1, 8);
}

static void write_file(const char *dir, const char *name, const uint8_t *h, const void *body, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(h, 1, HEADER, f);
    if (n) fwrite(body, 1, n, f);
    fclose(f);
}

static void write_seeds(const char *dir)
{
    for (uint32_t i = 0; i < builtin_count; i++) {
        uint8_t h[HEADER];
        char name[64];
        put_knobs(h, 0, (uint8_t)i, (uint8_t)(i * 5 + 1), (uint8_t)i, 0.6f, 0.25 * i, 0.75 + i);
        snprintf(name, sizeof name, "builtin%u.raw", i);
        write_file(dir, name, h, builtins[i].mem, builtins[i].size);
        /* patch lists: one byte in the clip record area, one in the data; then with the CRC fixed */
        uint8_t patches[8] = {0, 1, 0, 0x01, 0, 0, 0, 0x40};
        uint32_t a = (uint32_t)(builtins[i].size / 3), b = (uint32_t)(builtins[i].size * 2 / 3);
        memcpy(patches, &a, 3), memcpy(patches + 4, &b, 3);
        put_knobs(h, (uint8_t)(1 | i << 2), 3, 0x1F, 2, 0.3f, 1.0 / 3.0, -2.5);
        snprintf(name, sizeof name, "builtin%u.patch", i);
        write_file(dir, name, h, patches, sizeof patches);
        h[0] |= 0x80;
        snprintf(name, sizeof name, "builtin%u.patch_crc", i);
        write_file(dir, name, h, patches, sizeof patches);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    build_fixture_rich();
    build_fixture_wide();
    build_baked();
    const char *dir = getenv("KILN_FUZZ_WRITE_SEEDS");
    if (dir && dir[0]) write_seeds(dir);
    return 0;
}

/* ---- helpers ------------------------------------------------------------------------------------ */
static void *alloc64(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 1) != 0) abort();
    return p;
}

static int all_finite(const float *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(f[i])) return 0;
    return 1;
}

static int within(const float *f, size_t n, double bound)
{
    for (size_t i = 0; i < n; i++)
        if (!(fabs((double)f[i]) <= bound)) return 0;
    return 1;
}

/* The largest magnitude; infinity when a value is NaN. */
static double max_abs(const float *f, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        if (f[i] != f[i]) return INFINITY;
        m = fabs((double)f[i]) > m ? fabs((double)f[i]) : m;
    }
    return m;
}

#define POSE_FLOATS(soa) ((size_t)(soa) * sizeof(kiln_soa_xform) / sizeof(float))

/* `n` SoA blocks (every component, 8 lanes each) within TAME. */
static int blocks_tame(const kiln_soa_xform *x, uint32_t n)
{
    return within((const float *)x, (size_t)n * KILN_ANIM_COMPONENTS * KILN_SOA_WIDTH, TAME);
}

/* Every float the sampler reads for this clip within TAME (the blob passed verification, so
 * the offsets are inside it). Quantised lanes decode inside [range_min, range_min +
 * range_extent]. */
static int clip_tame(const kiln_blob *blob, uint32_t clip)
{
    const kiln_blob_animation *a = &kiln_blob_animations(blob, NULL)[clip];
    const unsigned char *base = (const unsigned char *)kiln_blob_header_of(blob);
    uint64_t tracks_at = a->data_offset + (uint64_t)a->block_count * sizeof(kiln_soa_xform);
    uint64_t rows_at = (tracks_at + (uint64_t)a->animated_count * sizeof(kiln_blob_anim_track) + 15u) & ~(uint64_t)15u;
    if (!blocks_tame((const kiln_soa_xform *)(const void *)(base + a->data_offset), a->block_count)) return 0;
    const kiln_blob_anim_track *t = (const kiln_blob_anim_track *)(const void *)(base + tracks_at);
    for (uint32_t k = 0; k < a->animated_count; k++) {
        if (t[k].width != 32) {
            for (unsigned l = 0; l < KILN_SOA_WIDTH; l++)
                if (!(fabs((double)t[k].range_min[l]) <= TAME &&
                      fabs((double)t[k].range_min[l] + t[k].range_extent[l]) <= TAME))
                    return 0;
            continue;
        }
        for (uint32_t r = 0; r < a->frame_count; r++) {
            float v[KILN_SOA_WIDTH];
            memcpy(v, base + rows_at + (uint64_t)r * a->row_stride + t[k].row_offset, sizeof v);
            if (!within(v, KILN_SOA_WIDTH, TAME)) return 0;
        }
    }
    const kiln_blob_anim_joint *j = kiln_blob_anim_joints(blob, NULL);
    for (uint32_t i = 0; i < a->joint_count; i++)
        if (!within(j[a->first_joint + i].additive_weight, 4, TAME)) return 0;
    const kiln_blob_anim_scalar *s = kiln_blob_anim_scalars(blob, NULL);
    for (uint32_t i = 0; i < a->scalar_count; i++)
        if (!within((const float *)(const void *)(base + s[a->first_scalar + i].data_offset), a->frame_count, TAME))
            return 0;
    return 1;
}

static const kiln_soa_xform *skeleton_rest(const kiln_blob *blob, uint32_t skeleton)
{
    const kiln_blob_skeleton *sk = &kiln_blob_skeletons(blob, NULL)[skeleton];
    const kiln_soa_xform *rest = kiln_blob_rest_pose(blob, NULL);
    return sk->soa_count ? rest + sk->first_soa : NULL;
}

/* A-priori bound on every entry (and every partial sum) of the model matrices that
 * kiln_pose_local_to_object computes from `pose`, or infinity. Per bone: 4 · |parent| · |local|
 * with |local| the largest entry of T·R·S (rotation entries of a non-unit quaternion up to
 * 1 + 2|q|²) and segment scale compensation's 1 / parent scale. */
static double model_bound(const kiln_blob *blob, uint32_t skeleton, const kiln_soa_xform *pose, const float *root,
                          double *bounds)
{
    const kiln_blob_skeleton *sk = &kiln_blob_skeletons(blob, NULL)[skeleton];
    const kiln_blob_bone *bones = kiln_blob_bones(blob, NULL) + sk->first_bone;
    double rb = root ? max_abs(root, 16) : 1.0, worst = 0;
    for (uint32_t i = 0; i < sk->bone_count; i++) {
        const kiln_soa_xform *x = &pose[i / KILN_SOA_WIDTH];
        unsigned l = i % KILN_SOA_WIDTH;
        const float *comps = (const float *)x;
        for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++)
            if (!isfinite(comps[c * KILN_SOA_WIDTH + l])) return INFINITY; /* fmax would hide a NaN */
        double q2 = (double)x->qx[l] * x->qx[l] + (double)x->qy[l] * x->qy[l] + (double)x->qz[l] * x->qz[l] +
                    (double)x->qw[l] * x->qw[l];
        double s = fmax(fabs(x->sx[l]), fmax(fabs(x->sy[l]), fabs(x->sz[l])));
        double t = fmax(fabs(x->tx[l]), fmax(fabs(x->ty[l]), fabs(x->tz[l])));
        double local = fmax(fmax((1 + 2 * q2) * s, t), 1.0);
        int32_t p = bones[i].parent;
        int has_parent = p >= 0 && (uint32_t)p < i;
        double parent = has_parent ? bounds[p] : rb;
        if (has_parent && (bones[i].flags & KILN_BONE_SEGMENT_SCALE_COMPENSATE)) {
            const kiln_soa_xform *px = &pose[(uint32_t)p / KILN_SOA_WIDTH];
            unsigned pl = (uint32_t)p % KILN_SOA_WIDTH;
            double m = fmin(fabs(px->sx[pl]), fmin(fabs(px->sy[pl]), fabs(px->sz[pl])));
            local = m > 0 ? local * fmax(1.0, 1.0 / m) : INFINITY;
        }
        bounds[i] = 4.0 * parent * local;
        if (bounds[i] != bounds[i]) return INFINITY; /* a NaN in the pose */
        worst = bounds[i] > worst ? bounds[i] : worst;
    }
    return worst;
}

/* ---- sampling ------------------------------------------------------------------------------------- */
typedef struct pair {
    const kiln_blob *anim, *skel;
    uint32_t clip, skeleton;
    const kiln_blob_animation *a;
    kiln_anim_binding *bind;
    uint32_t soa, bones;
    int tame;                 /* sampled outputs must be finite */
    kiln_soa_xform *out, *ref, *base, *tmp;   /* soa + 1 blocks each: the last is a canary */
    void *ctx;
} pair;

static const unsigned char canary_byte = 0xA5;

static void set_canary(kiln_soa_xform *p, uint32_t soa) { memset(&p[soa], canary_byte, sizeof *p); }
static void check_canary(const kiln_soa_xform *p, uint32_t soa)
{
    const unsigned char *c = (const unsigned char *)&p[soa];
    for (size_t i = 0; i < sizeof *p; i++) CHECK(c[i] == canary_byte);
}

static void fill_pose(kiln_soa_xform *p, uint32_t soa, float v)
{
    kiln_pose_identity(p, soa);
    for (uint32_t b = 0; b < soa; b++)
        for (unsigned l = 0; l < KILN_SOA_WIDTH; l++) {
            p[b].tx[l] = v * (float)l, p[b].ty[l] = -v, p[b].tz[l] = 0.5f;
            p[b].qx[l] = 0.6f, p[b].qw[l] = 0.8f;
            p[b].sx[l] = 1.0f + v;
        }
}

static kiln_result sample(pair *p, double t, kiln_loop loop, const kiln_soa_xform *base, kiln_soa_xform *out, void *ctx,
                          float *scalars, uint32_t scalar_count)
{
    kiln_sample_desc d;
    memset(&d, 0, sizeof d);
    d.binding = p->bind, d.time_s = t, d.loop = loop, d.base = base, d.out = out, d.out_count = p->soa;
    d.context = ctx, d.scalars = scalars, d.scalar_count = scalar_count;
    return kiln_sample(&d);
}

/* One time and loop mode: without a context, with one (bit-identical), finite when tame. */
static void sample_once(pair *p, const knobs *k, double t, kiln_loop loop)
{
    const kiln_soa_xform *base = (k->flags & K_BASE) ? p->base : NULL;
    CHECK(sample(p, t, loop, base, p->ref, NULL, NULL, 0) == KILN_OK);
    CHECK(sample(p, t, loop, base, p->out, p->ctx, NULL, 0) == KILN_OK);
    CHECK(memcmp(p->ref, p->out, sizeof *p->out * p->soa) == 0);
    check_canary(p->out, p->soa);
    check_canary(p->ref, p->soa);
    if (p->tame) CHECK(all_finite((const float *)p->out, POSE_FLOATS(p->soa)));
    if (k->flags & K_IN_PLACE) {
        /* out == base: the same result as out of place over the same base */
        if (base) memcpy(p->tmp, p->base, sizeof *p->tmp * p->soa);
        else memcpy(p->tmp, skeleton_rest(p->skel, p->skeleton), sizeof *p->tmp * p->soa);
        CHECK(sample(p, t, loop, p->tmp, p->tmp, p->ctx, NULL, 0) == KILN_OK);
        kiln_soa_xform *ref = p->ref;
        if (!base) CHECK(sample(p, t, loop, skeleton_rest(p->skel, p->skeleton), ref, NULL, NULL, 0) == KILN_OK);
        CHECK(memcmp(ref, p->tmp, sizeof *p->tmp * p->soa) == 0);
        check_canary(p->tmp, p->soa);
    }
}

/* Fixed hostile times plus the clip's own boundaries and the caller's t0, t1. */
static uint32_t times_of(const pair *p, const knobs *k, double *t)
{
    uint32_t n = 0;
    static const double fixed[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, DBL_MIN, 4.9406564584124654e-324,
                                   -4.9406564584124654e-324, 1e-310, 1e300, -1e300, DBL_MAX, -DBL_MAX,
                                   9007199254740993.0, 9.3e18, -1.0, 0.5};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) t[n++] = fixed[i];
    double fr = p->a->framerate, first = (double)p->a->first_frame, last = (double)p->a->last_frame;
    const double frames[] = {first, first + 1, last - 1, last, last + 1, 0.5 * (first + last)};
    for (size_t i = 0; i < sizeof frames / sizeof frames[0]; i++) t[n++] = frames[i] / fr;
    t[n++] = nextafter(last / fr, INFINITY);
    t[n++] = nextafter(last / fr, -INFINITY);
    t[n++] = nextafter(first / fr, -INFINITY);
    t[n++] = k->t0, t[n++] = k->t1, t[n++] = -k->t0, t[n++] = k->t0 * fr;
    return n;
}

static void sample_all(pair *p, const knobs *k)
{
    static const kiln_loop loops[4] = {KILN_LOOP_CLIP, KILN_LOOP_CLAMP, KILN_LOOP_WRAP, (kiln_loop)7};
    double t[40];
    uint32_t n = times_of(p, k, t);
    /* each fixed time under one loop mode (rotating, so every pairing comes up across inputs),
     * the caller's t0 and t1 (the last times of the list) under all of them: a quarter of the
     * calls of every pairing, for 4 times the executions per second */
    for (uint32_t i = 0; i < n; i++)
        for (int l = 0; l < 4; l++)
            if (i + 4 >= n || (i + (uint32_t)l + k->threshold) % 4 == 0) sample_once(p, k, t[i], loops[l]);
    /* forward playback from t0: the context's cached rows must not change a bit */
    for (int s = 0; s < 10; s++) sample_once(p, k, k->t0 + s / 60.0, (kiln_loop)(s % 3));
}

/* Scalars: exactly min(capacity, tracks) written, finite when tame. */
static void sample_scalars(pair *p, const knobs *k)
{
    uint32_t n = p->a->scalar_count;
    float *s = malloc(sizeof(float) * (n + 2));
    if (!s) abort();
    for (uint32_t cap = 0; cap <= n + 1; cap += n + 1 > 4 ? n / 2 + 1 : 1) {
        memset(s, 0xA5, sizeof(float) * (n + 2));
        CHECK(sample(p, k->t1, KILN_LOOP_WRAP, NULL, p->out, NULL, cap ? s : NULL, cap) == KILN_OK);
        uint32_t written = cap < n ? cap : n;
        if (p->tame) CHECK(all_finite(s, written));
        for (uint32_t i = written; i < n + 2; i++) {
            uint32_t bits;
            memcpy(&bits, &s[i], 4);
            CHECK(bits == 0xA5A5A5A5u);
        }
    }
    free(s);
}

/* Documented errors leave the output unwritten. */
static void sample_errors(pair *p)
{
    memset(p->tmp, 0x5A, sizeof *p->tmp * (p->soa + 1));
    kiln_sample_desc d;
    memset(&d, 0, sizeof d);
    d.binding = p->bind, d.out = p->tmp, d.out_count = p->soa;
    d.scalar_count = 1;
    CHECK(kiln_sample(&d) == KILN_ERR_INVALID_ARGUMENT);
    d.scalar_count = 0;
    if (p->soa) {
        d.out_count = p->soa - 1;
        CHECK(kiln_sample(&d) == KILN_ERR_BUFFER_TOO_SMALL);
        d.out_count = p->soa;
    }
    /* a context that never went through kiln_sample_context_init */
    void *junk = alloc64(256);
    memset(junk, 0x33, 256);
    d.context = junk;
    CHECK(kiln_sample(&d) == KILN_ERR_INVALID_ARGUMENT);
    free(junk);
    const unsigned char *b = (const unsigned char *)p->tmp;
    for (size_t i = 0; i < sizeof *p->tmp * (p->soa + 1); i++) CHECK(b[i] == 0x5A);
    /* context memory too small, misaligned */
    size_t need = kiln_sample_context_size(p->bind);
    void *c = alloc64(need + 64);
    CHECK(kiln_sample_context_init(c, need - 1, p->bind) == KILN_ERR_BUFFER_TOO_SMALL);
    CHECK(kiln_sample_context_init((unsigned char *)c + 8, need, p->bind) == KILN_ERR_BLOB_MISALIGNED);
    free(c);
}

/* ---- poses ------------------------------------------------------------------------------------------- */
static const float thresholds[] = {0.1f, 1.0f, 1e-30f, 1e6f, 1e-45f, 1e-39f, 3e38f, 2e19f, FLT_MAX, 1.2e-38f};

static void check_blend(pair *p, const knobs *k, const kiln_soa_xform *a, const kiln_soa_xform *b)
{
    float thr = thresholds[k->threshold % (sizeof thresholds / sizeof thresholds[0])];
    static const float mask_values[8] = {1.0f, 0.0f, 0.5f, -1.0f, NAN, 2.0f, 1e-40f, 0.25f};
    float *mask = malloc(sizeof(float) * KILN_SOA_WIDTH * (p->soa ? p->soa : 1));
    if (!mask) abort();
    for (uint32_t i = 0; i < KILN_SOA_WIDTH * p->soa; i++) mask[i] = mask_values[(i + k->source) % 8];
    kiln_blend_layer layers[3] = {{a, k->weight, NULL}, {b, 1.0f - k->weight, mask}, {a, 0.25f, NULL}};
    const kiln_soa_xform *rest = skeleton_rest(p->skel, p->skeleton);
    double m = fmax(max_abs((const float *)a, POSE_FLOATS(p->soa)), max_abs((const float *)b, POSE_FLOATS(p->soa)));
    if (rest) m = fmax(m, max_abs((const float *)rest, POSE_FLOATS(p->soa)));
    int finite = m <= 1e12; /* any weights and threshold */
    for (uint32_t count = 0; count <= 3; count++) {
        set_canary(p->out, p->soa);
        CHECK(kiln_pose_blend(layers, count, count == 1 ? NULL : rest, thr, p->out, p->soa) == KILN_OK);
        check_canary(p->out, p->soa);
        if (finite) CHECK(all_finite((const float *)p->out, POSE_FLOATS(p->soa)));
    }
    /* out aliasing a layer: the same result */
    memcpy(p->tmp, a, sizeof *p->tmp * p->soa);
    kiln_blend_layer alias[3] = {{p->tmp, k->weight, NULL}, {b, 1.0f - k->weight, mask}, {p->tmp, 0.25f, NULL}};
    CHECK(kiln_pose_blend(alias, 3, rest, thr, p->tmp, p->soa) == KILN_OK);
    CHECK(memcmp(p->tmp, p->out, sizeof *p->tmp * p->soa) == 0);
    /* rejected thresholds write nothing */
    static const float bad[4] = {0.0f, -1.0f, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        memset(p->tmp, 0x5A, sizeof *p->tmp * p->soa);
        CHECK(kiln_pose_blend(layers, 2, rest, bad[i], p->tmp, p->soa) == KILN_ERR_INVALID_ARGUMENT);
        CHECK(((const unsigned char *)p->tmp)[0] == 0x5A);
    }
    /* additive layer: w clamped to [0, 1] per joint */
    for (int use_mask = 0; use_mask < 2; use_mask++) {
        memcpy(p->tmp, a, sizeof *p->tmp * p->soa);
        CHECK(kiln_pose_add(p->tmp, b, k->weight, use_mask ? mask : NULL, p->soa) == KILN_OK);
        if (m <= 1e12) CHECK(all_finite((const float *)p->tmp, POSE_FLOATS(p->soa)));
    }
    free(mask);
}

static void check_matrices(const kiln_blob *skel, uint32_t skeleton, const kiln_soa_xform *pose, uint32_t bones)
{
    static const float roots[2][16] = {{2, 0, 0, 0, 0, 0, 2, 0, 0, -2, 0, 0, 1, 2, 3, 1},
                                       {1, 0, 0, 0.5f, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 2}};
    size_t n = (size_t)(bones ? bones : 1) * 16;
    float *model = alloc64(sizeof(float) * n), *skin = alloc64(sizeof(float) * n);
    double *bounds = malloc(sizeof(double) * (bones ? bones : 1));
    const kiln_blob_skeleton *sk = &kiln_blob_skeletons(skel, NULL)[skeleton];
    const float *ib = kiln_blob_inverse_binds(skel, NULL);
    if (!bounds) abort();
    for (int r = 0; r < 3; r++) {
        const float *root = r ? roots[r - 1] : NULL;
        CHECK(kiln_pose_local_to_object(skel, skeleton, pose, root, model, bones) == KILN_OK);
        double worst = model_bound(skel, skeleton, pose, root, bounds);
        if (worst < BOUND) CHECK(all_finite(model, (size_t)bones * 16));
        CHECK(kiln_pose_skin_matrices(skel, skeleton, model, skin, bones) == KILN_OK);
        double ibm = ib && bones ? max_abs(ib + (size_t)sk->first_bone * 16, (size_t)bones * 16) : 0;
        if (worst * 4 * fmax(ibm, 1.0) < BOUND) CHECK(all_finite(skin, (size_t)bones * 16));
        /* in place: skin == model */
        CHECK(kiln_pose_skin_matrices(skel, skeleton, model, model, bones) == KILN_OK);
        CHECK(memcmp(model, skin, sizeof(float) * bones * 16) == 0);
    }
    if (bones) CHECK(kiln_pose_local_to_object(skel, skeleton, pose, NULL, model, bones - 1) == KILN_ERR_BUFFER_TOO_SMALL);
    free(model), free(skin), free(bounds);
}

/* ---- events ----------------------------------------------------------------------------------------- */
static void check_events(const kiln_blob *blob, uint32_t clip, const knobs *k)
{
    const kiln_blob_animation *a = &kiln_blob_animations(blob, NULL)[clip];
    const kiln_blob_anim_event *ev = kiln_blob_anim_events(blob, NULL);
    double fr = a->framerate, first = (double)a->first_frame / fr, last = (double)a->last_frame / fr;
    const double t[] = {NAN, -INFINITY, INFINITY, 0.0, -0.0, first, last, nextafter(last, -INFINITY),
                        0.5 * (first + last), 1e300, -1e300, 4.9406564584124654e-324, k->t0, k->t1,
                        first - 3 * (last - first), last + 7.25 * (last - first)};
    const size_t nt = sizeof t / sizeof t[0];
    kiln_anim_event out[8];
    for (size_t i = 0; i < nt; i++)
        for (size_t j = 0; j < nt; j += 1 + (i % 3)) {
            for (int loop = 0; loop < 4; loop++) {
                uint32_t cap = (uint32_t)((i + j) % 9);
                uint32_t n = kiln_anim_events(blob, clip, t[i], t[j], (kiln_loop)loop, cap ? out : NULL, cap);
                CHECK(n <= a->event_count);
                int wraps = loop == KILN_LOOP_WRAP || (loop == KILN_LOOP_CLIP && (a->flags & KILN_ANIM_LOOPING));
                for (uint32_t e = 0; e < n && e < cap; e++) {
                    CHECK(out[e].index < a->event_count);
                    const kiln_blob_anim_event *r = &ev[a->first_event + out[e].index];
                    CHECK(out[e].name == r->name);
                    CHECK(out[e].time_s == (double)r->frame / fr);
                    if (!wraps || a->last_frame == a->first_frame) CHECK(out[e].time_s >= t[i] && out[e].time_s < t[j]);
                }
            }
        }
    CHECK(kiln_anim_events(blob, 0xFFFFFFFFu, 0, 1, KILN_LOOP_CLAMP, out, 8) == 0);
}

/* ---- one (clip, skeleton) pair ------------------------------------------------------------------------ */
static void check_bind_errors(const kiln_blob *anim, uint32_t clip, const kiln_blob *skel, uint32_t skeleton, size_t size)
{
    unsigned char *mem = alloc64(size + 64);
    kiln_anim_binding *b = (kiln_anim_binding *)(void *)mem;
    CHECK(kiln_anim_bind(anim, clip, skel, skeleton, mem + 8, size, &b, NULL) == KILN_ERR_BLOB_MISALIGNED && !b);
    b = (kiln_anim_binding *)(void *)mem;
    CHECK(kiln_anim_bind(anim, clip, skel, skeleton, mem, size - 1, &b, NULL) == KILN_ERR_BUFFER_TOO_SMALL && !b);
    free(mem);
}

static void run_pair(const kiln_blob *anim, uint32_t clip, const kiln_blob *skel, uint32_t skeleton, const knobs *k)
{
    pair p;
    memset(&p, 0, sizeof p);
    p.anim = anim, p.skel = skel, p.clip = clip, p.skeleton = skeleton;
    p.a = &kiln_blob_animations(anim, NULL)[clip];
    const kiln_blob_skeleton *sk = &kiln_blob_skeletons(skel, NULL)[skeleton];
    size_t size = kiln_anim_binding_size(anim, clip, skel, skeleton);
    CHECK(size > 0);
    check_bind_errors(anim, clip, skel, skeleton, size);
    void *mem = alloc64(size);
    kiln_anim_bind_report rep;
    CHECK(kiln_anim_bind(anim, clip, skel, skeleton, mem, size, &p.bind, &rep) == KILN_OK && p.bind);
    CHECK((uint64_t)rep.bound_joints + rep.missing_joints + rep.duplicate_joints <= p.a->joint_count);
    CHECK(rep.bound_joints <= sk->bone_count && rep.inexact_matches <= rep.bound_joints && rep.identity_map <= 1);
    CHECK(rep.missing_joints ? rep.first_missing < p.a->joint_count : rep.first_missing == KILN_BLOB_NONE);
    p.soa = kiln_anim_binding_soa_count(p.bind);
    p.bones = sk->bone_count;
    CHECK(p.soa == sk->soa_count);
    if (p.soa > MAX_BLOCKS) {
        free(mem);
        return;
    }
    const kiln_soa_xform *rest = skeleton_rest(skel, skeleton);
    p.tame = clip_tame(anim, clip) && (!rest || blocks_tame(rest, p.soa));
    size_t pose_bytes = sizeof(kiln_soa_xform) * (p.soa + 1);
    p.out = alloc64(pose_bytes), p.ref = alloc64(pose_bytes), p.base = alloc64(pose_bytes), p.tmp = alloc64(pose_bytes);
    set_canary(p.out, p.soa), set_canary(p.ref, p.soa), set_canary(p.tmp, p.soa);
    fill_pose(p.base, p.soa, 0.25f);
    size_t csize = kiln_sample_context_size(p.bind);
    p.ctx = alloc64(csize);
    CHECK(kiln_sample_context_init(p.ctx, csize, p.bind) == KILN_OK);

    sample_all(&p, k);
    if (k->flags & K_SCALARS) sample_scalars(&p, k);
    sample_errors(&p);

    /* two sampled poses for the pose functions */
    kiln_soa_xform *a = alloc64(pose_bytes), *b = alloc64(pose_bytes);
    CHECK(sample(&p, k->t0, KILN_LOOP_CLIP, NULL, a, p.ctx, NULL, 0) == KILN_OK);
    CHECK(sample(&p, k->t1, KILN_LOOP_WRAP, (k->flags & K_BASE) ? p.base : NULL, b, NULL, NULL, 0) == KILN_OK);
    if (p.tame) CHECK(all_finite((const float *)a, POSE_FLOATS(p.soa)) && all_finite((const float *)b, POSE_FLOATS(p.soa)));
    check_blend(&p, k, a, b);
    check_matrices(skel, skeleton, a, p.bones);
    free(a), free(b);
    free(p.out), free(p.ref), free(p.base), free(p.tmp), free(p.ctx), free(mem);
}

/* Skeletons without a clip: the matrix functions on the rest pose and on a made-up pose. */
static void run_skeleton(const kiln_blob *skel, uint32_t skeleton)
{
    const kiln_blob_skeleton *sk = &kiln_blob_skeletons(skel, NULL)[skeleton];
    if (sk->soa_count > MAX_BLOCKS) return;
    kiln_soa_xform *pose = alloc64(sizeof *pose * (sk->soa_count + 1));
    const kiln_soa_xform *rest = skeleton_rest(skel, skeleton);
    if (rest) memcpy(pose, rest, sizeof *pose * sk->soa_count);
    check_matrices(skel, skeleton, pose, sk->bone_count);
    fill_pose(pose, sk->soa_count, 3.0f);
    check_matrices(skel, skeleton, pose, sk->bone_count);
    free(pose);
}

static void exercise(const kiln_blob *blob, const knobs *k)
{
    uint32_t nclips = 0, nskel = 0;
    kiln_blob_animations(blob, &nclips);
    kiln_blob_skeletons(blob, &nskel);
    const kiln_blob *other = builtin_count ? builtins[k->source % builtin_count].blob : NULL;
    uint32_t nother = 0;
    if (other) kiln_blob_skeletons(other, &nother);
    for (uint32_t s = 0; s < nskel && s < MAX_SKELETONS; s++) run_skeleton(blob, s);
    for (uint32_t c = 0; c < nclips && c < MAX_CLIPS; c++) {
        check_events(blob, c, k);
        for (uint32_t s = 0; s < nskel && s < MAX_SKELETONS; s++) run_pair(blob, c, blob, s, k);
        if ((k->flags & K_CROSS) && nother) run_pair(blob, c, other, 0, k);
    }
    /* this blob's skeleton under a built-in clip */
    uint32_t nother_clips = 0;
    if (other) kiln_blob_animations(other, &nother_clips);
    if ((k->flags & K_CROSS) && nskel && nother_clips) run_pair(other, 0, blob, 0, k);
}

/* KILN_BLOB_LOAD_TRUSTED promises nothing about the records, but binding checks them
 * (kiln_anim_bind: ERR_BLOB_BAD_RECORD) and the matrix functions check the skeleton range. */
static void probe_trusted(const kiln_blob *blob)
{
    uint32_t nclips = 0, nskel = 0;
    kiln_blob_animations(blob, &nclips);
    kiln_blob_skeletons(blob, &nskel);
    for (uint32_t c = 0; c < nclips && c < MAX_CLIPS; c++)
        for (uint32_t s = 0; s < nskel && s < MAX_SKELETONS; s++) {
            size_t size = kiln_anim_binding_size(blob, c, blob, s);
            if (!size || size > (64u << 20)) continue;
            void *mem = alloc64(size);
            kiln_anim_binding *b = NULL;
            kiln_result r = kiln_anim_bind(blob, c, blob, s, mem, size, &b, NULL);
            CHECK((r == KILN_OK) == (b != NULL));
            free(mem);
        }
}

/* ---- entry ------------------------------------------------------------------------------------------- */
static unsigned char *make_blob(const knobs *k, const uint8_t *body, size_t n, size_t *size)
{
    if (!(k->source & 3) || !builtin_count) {
        unsigned char *mem = alloc64(n);
        if (n) memcpy(mem, body, n);
        *size = n;
        return mem;
    }
    const builtin *b = &builtins[(k->source >> 2 & 15u) % builtin_count];
    unsigned char *mem = alloc64(b->size);
    memcpy(mem, b->mem, b->size);
    for (size_t i = 0; i + 4 <= n && i < 4 * 64; i += 4) {
        uint32_t off = (uint32_t)body[i] | (uint32_t)body[i + 1] << 8 | (uint32_t)body[i + 2] << 16;
        mem[off % b->size] ^= body[i + 3];
    }
    if ((k->source & 0x80) && b->size >= sizeof(kiln_blob_header)) af_fix_crc(mem, b->size);
    *size = b->size;
    return mem;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HEADER) return 0;
    knobs k;
    k.source = data[0], k.simd = data[1], k.flags = data[2], k.threshold = data[3];
    memcpy(&k.weight, data + 4, 4);
    memcpy(&k.t0, data + 8, 8);
    memcpy(&k.t1, data + 16, 8);
    size_t n;
    unsigned char *mem = make_blob(&k, data + HEADER, size - HEADER, &n);

    const kiln_blob *blob = NULL, *full_blob = NULL;
    kiln_result structural = kiln_blob_load(mem, n, KILN_BLOB_LOAD_NO_CRC, &blob, NULL);
    kiln_result full = kiln_blob_load(mem, n, 0, &full_blob, NULL);
    CHECK(!(full == KILN_OK && structural != KILN_OK));
    static const kiln_simd paths[4] = {KILN_SIMD_AUTO, KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2};
    kiln_simd_force(paths[k.simd & 3]);
    if (structural == KILN_OK) exercise(blob, &k);
    if ((k.flags & K_TRUSTED) && kiln_blob_load(mem, n, KILN_BLOB_LOAD_TRUSTED, &blob, NULL) == KILN_OK)
        probe_trusted(blob);
    kiln_simd_force(KILN_SIMD_AUTO);
    free(mem);
    return 0;
}
