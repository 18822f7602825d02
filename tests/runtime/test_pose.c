/* Pose blending, additive layers, local -> model (with segment scale compensate) and skinning
 * matrices against double-precision references, on every SIMD path the machine has. */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim_fixture.h"
#include "kiln/anim.h"
#include "pose_ref.h"

/* ---- helpers ------------------------------------------------------------------------------ */

/* Random local transforms for n bones (identity padding lanes). */
static void random_pose(kiln_soa_xform *pose, uint32_t n, uint32_t seed, float smin, float smax)
{
    uint32_t st = seed;
    kiln_pose_identity(pose, (n + 7) / 8);
    for (uint32_t b = 0; b < n; b++) {
        float q[4];
        af_axis_angle(af_rand(&st, -1, 1), af_rand(&st, -1, 1), af_rand(&st, -1, 1) + 0.01, af_rand(&st, -3, 3), q);
        for (unsigned c = 0; c < 3; c++) {
            set_lane(pose, b, c, af_rand(&st, -1, 1));
            set_lane(pose, b, 7 + c, af_rand(&st, smin, smax));
        }
        for (unsigned c = 0; c < 4; c++) set_lane(pose, b, 3 + c, q[c]);
    }
}

typedef struct skel_blob {
    unsigned char *mem;
    const kiln_blob *blob;
    af_bone *bones;
    int32_t *parents;
    uint32_t *ssc;
    uint32_t n;
} skel_blob;

/* A random tree of n bones (parent < index), ssc on each bone with probability ssc_pct/100. */
static skel_blob make_skeleton(uint32_t n, uint32_t seed, int ssc_pct)
{
    skel_blob s;
    memset(&s, 0, sizeof s);
    s.n = n;
    s.bones = calloc(n, sizeof *s.bones);
    s.parents = calloc(n, sizeof *s.parents);
    s.ssc = calloc(n, sizeof *s.ssc);
    static char names[256][16];
    uint32_t st = seed;
    for (uint32_t i = 0; i < n; i++) {
        snprintf(names[i], 16, "b%u", i);
        af_bone *b = &s.bones[i];
        b->name = names[i];
        b->parent = i == 0 ? -1 : (i < 3 ? 0 : (int32_t)(af_lcg(&st) % i));
        if (i > 4 && af_lcg(&st) % 5 == 0) b->parent = -1; /* a few extra roots */
        b->ssc = (uint32_t)((int)(af_lcg(&st) % 100) < ssc_pct);
        for (int k = 0; k < 3; k++) b->t[k] = af_rand(&st, -1, 1), b->s[k] = af_rand(&st, 0.6f, 1.6f);
        af_axis_angle(af_rand(&st, -1, 1), af_rand(&st, -1, 1), af_rand(&st, -1, 1) + 0.01, af_rand(&st, -3, 3), b->r);
        s.parents[i] = b->parent;
        s.ssc[i] = b->ssc;
    }
    af_skel sk = {n, s.bones};
    size_t size;
    s.mem = af_build(&sk, NULL, 0, &size);
    s.blob = af_load(s.mem, size);
    cr_assert_not_null(s.blob);
    return s;
}

static void skeleton_free(skel_blob *s)
{
    free(s->mem), free(s->bones), free(s->parents), free(s->ssc);
}

/* Model matrices of `pose` in double. */
static void model_ref(const skel_blob *s, const kiln_soa_xform *pose, const double *root, double (*out)[16])
{
    double(*local)[10] = calloc(s->n, sizeof *local);
    for (uint32_t b = 0; b < s->n; b++)
        for (unsigned c = 0; c < 10; c++) local[b][c] = lane(pose, b, c);
    af_model_ref(s->n, s->parents, s->ssc, (const double(*)[10])local, root, out);
    free(local);
}

static double matrix_diff(const float *m, const double *e)
{
    double d = 0;
    for (int i = 0; i < 16; i++) d = fmax(d, fabs(m[i] - e[i]) / (1.0 + fabs(e[i])));
    return d;
}

/* ---- local -> model ---------------------------------------------------------------------- */
static void check_l2m(int ssc_pct, int with_root)
{
    enum { N = 75 };
    skel_blob s = make_skeleton(N, 7 + (uint32_t)ssc_pct, ssc_pct);
    kiln_soa_xform pose[(N + 7) / 8];
    float *model = malloc(sizeof(float) * 16 * N);
    double(*ref)[16] = malloc(sizeof *ref * N);
    double root_d[16];
    float root_f[16];
    {
        double t[3] = {0.5, -2, 3}, q[4] = {0.1, 0.2, 0.3, 0.927361849549570}, sc[3] = {1.5, 1.5, 1.5};
        af_trs(t, q, sc, root_d);
        for (int i = 0; i < 16; i++) root_f[i] = (float)root_d[i];
        for (int i = 0; i < 16; i++) root_d[i] = root_f[i];
    }
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        for (uint32_t seed = 1; seed < 6; seed++) {
            random_pose(pose, N, seed, 0.5f, 2.0f);
            model_ref(&s, pose, with_root ? root_d : NULL, ref);
            cr_assert_eq(kiln_pose_local_to_object(s.blob, 0, pose, with_root ? root_f : NULL, model, N), KILN_OK);
            for (uint32_t b = 0; b < N; b++) {
                double d = matrix_diff(model + 16 * b, ref[b]);
                cr_assert_lt(d, 2e-5, "%s ssc=%d%% root=%d bone %u: %g", kiln_simd_name(paths[p]), ssc_pct, with_root, b, d);
            }
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    free(model), free(ref);
    skeleton_free(&s);
}

Test(pose_model, matches_double_reference_without_ssc) { check_l2m(0, 0); }
Test(pose_model, matches_double_reference_with_ssc) { check_l2m(100, 0); }
Test(pose_model, matches_double_reference_mixed_ssc_with_root) { check_l2m(50, 1); }

Test(pose_model, ssc_scales_child_translation_but_not_its_rotation_or_scale)
{
    /* root (scale 2,1,1) -> child (t = (1,1,0), 90° about z) -> grandchild (t = (1,0,0)) */
    for (int ssc = 0; ssc < 2; ssc++) {
        float rz[4];
        af_axis_angle(0, 0, 1, 1.5707963267948966, rz);
        af_bone bones[3] = {{"root", -1, {0, 0, 0}, {0, 0, 0, 1}, {2, 1, 1}, 0},
                            {"child", 0, {1, 1, 0}, {rz[0], rz[1], rz[2], rz[3]}, {1, 1, 1}, (uint32_t)ssc},
                            {"grand", 1, {1, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}, (uint32_t)ssc}};
        af_skel sk = {3, bones};
        size_t size;
        unsigned char *mem = af_build(&sk, NULL, 0, &size);
        const kiln_blob *blob = af_load(mem, size);
        const kiln_soa_xform *rest = kiln_blob_rest_pose(blob, NULL);
        kiln_simd paths[AF_PATH_COUNT];
        int np = af_paths(paths);
        for (int p = 0; p < np; p++) {
            kiln_simd_force(paths[p]);
            float m[3][16];
            cr_assert_eq(kiln_pose_local_to_object(blob, 0, rest, NULL, m[0], 3), KILN_OK);
            /* child translation (1,1,0) goes through the parent's scale either way */
            cr_assert_float_eq(m[1][12], 2.0f, 1e-6);
            cr_assert_float_eq(m[1][13], 1.0f, 1e-6);
            /* child's x axis: R(90° z)·(1,0,0) = (0,1,0); y axis: (-1,0,0), scaled by 2 without ssc */
            cr_assert_float_eq(m[1][4], ssc ? -1.0f : -2.0f, 1e-6, "%s ssc=%d", kiln_simd_name(paths[p]), ssc);
            cr_assert_float_eq(m[1][1], 1.0f, 1e-6);
            /* grandchild at child-local (1,0,0): (2,1,0) + child x axis = (2,2,0) either way here */
            cr_assert_float_eq(m[2][12], 2.0f, 1e-6);
            cr_assert_float_eq(m[2][13], 2.0f, 1e-6);
            /* its y axis keeps the inherited x scale without ssc only */
            cr_assert_float_eq(m[2][4], ssc ? -1.0f : -2.0f, 1e-6);
        }
        kiln_simd_force(KILN_SIMD_AUTO);
        free(mem);
    }
}

Test(pose_model, skin_matrices_are_identity_at_rest_and_w_times_ib_otherwise)
{
    enum { N = 41 };
    skel_blob s = make_skeleton(N, 3, 50);
    const kiln_soa_xform *rest = kiln_blob_rest_pose(s.blob, NULL);
    const float *ib = kiln_blob_inverse_binds(s.blob, NULL);
    float *model = malloc(sizeof(float) * 16 * N), *skin = malloc(sizeof(float) * 16 * N);
    kiln_soa_xform pose[(N + 7) / 8];
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        kiln_pose_local_to_object(s.blob, 0, rest, NULL, model, N);
        cr_assert_eq(kiln_pose_skin_matrices(s.blob, 0, model, skin, N), KILN_OK);
        double id[16];
        af_identity(id);
        for (uint32_t b = 0; b < N; b++)
            cr_assert_lt(matrix_diff(skin + 16 * b, id), 2e-5, "%s bone %u at rest", kiln_simd_name(paths[p]), b);
        random_pose(pose, N, 9, 0.7f, 1.3f);
        kiln_pose_local_to_object(s.blob, 0, pose, NULL, model, N);
        cr_assert_eq(kiln_pose_skin_matrices(s.blob, 0, model, skin, N), KILN_OK);
        for (uint32_t b = 0; b < N; b++) {
            double w[16], i[16], e[16];
            for (int k = 0; k < 16; k++) w[k] = model[16 * b + k], i[k] = ib[16 * b + k];
            af_mul(w, i, e);
            cr_assert_lt(matrix_diff(skin + 16 * b, e), 1e-5, "%s bone %u", kiln_simd_name(paths[p]), b);
        }
        /* in place */
        float *copy = malloc(sizeof(float) * 16 * N);
        memcpy(copy, model, sizeof(float) * 16 * N);
        kiln_pose_skin_matrices(s.blob, 0, copy, copy, N);
        cr_assert(memcmp(copy, skin, sizeof(float) * 16 * N) == 0);
        free(copy);
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    free(model), free(skin);
    skeleton_free(&s);
}

Test(pose_model, rejects_small_outputs_and_bad_skeletons)
{
    skel_blob s = make_skeleton(10, 1, 0);
    kiln_soa_xform pose[2];
    float m[16 * 10];
    kiln_pose_identity(pose, 2);
    cr_assert_eq(kiln_pose_local_to_object(s.blob, 0, pose, NULL, m, 9), KILN_ERR_BUFFER_TOO_SMALL);
    cr_assert_eq(kiln_pose_local_to_object(s.blob, 1, pose, NULL, m, 10), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_pose_local_to_object(NULL, 0, pose, NULL, m, 10), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_pose_local_to_object(s.blob, 0, NULL, NULL, m, 10), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_pose_skin_matrices(s.blob, 0, m, m, 9), KILN_ERR_BUFFER_TOO_SMALL);
    cr_assert_eq(kiln_pose_skin_matrices(s.blob, 0, NULL, m, 10), KILN_ERR_INVALID_ARGUMENT);
    skeleton_free(&s);
}

/* ---- blend --------------------------------------------------------------------------------- */
/* Largest |pose - e| over a joint's components; infinity when one is NaN (fmax would drop it). */
static double joint_diff(const kiln_soa_xform *pose, uint32_t b, const double e[10])
{
    double d = 0;
    for (unsigned c = 0; c < 10; c++) {
        double x = fabs(lane(pose, b, c) - e[c]);
        if (isnan(x)) return INFINITY;
        d = fmax(d, x);
    }
    return d;
}

/* The two layer poses and the rest pose of the blend tests, n joints, from seeds seed,
 * seed + 1 and seed + 2. */
static void blend_poses(kiln_soa_xform *a, kiln_soa_xform *b, kiln_soa_xform *rest, uint32_t n, uint32_t seed)
{
    random_pose(a, n, seed, 0.5f, 2);
    random_pose(b, n, seed + 1, 0.5f, 2);
    random_pose(rest, n, seed + 2, 0.5f, 2);
}

/* Asserts that joints [0, count) of `out` are, within 2e-6, blend_ref's blend of the n (<= 2)
 * poses ps with layer weights w[i] times joint weights masks[i][j] (masks or masks[i] NULL: 1)
 * under `threshold`. `path` and `what` lead the failure message. */
static void expect_blend(const kiln_soa_xform *out, uint32_t count, const kiln_soa_xform *const *ps, int n,
                         const double *w, const float *const *masks, const kiln_soa_xform *rest, double threshold,
                         const char *path, const char *what)
{
    for (uint32_t j = 0; j < count; j++) {
        double e[10], wj[2];
        for (int i = 0; i < n; i++) wj[i] = masks && masks[i] ? w[i] * masks[i][j] : w[i];
        blend_ref(ps, wj, n, rest, threshold, j, e);
        double d = joint_diff(out, j, e);
        cr_assert_lt(d, 2e-6, "%s %s joint %u: %g", path, what, j, d);
    }
}

Test(pose_blend, weights_masks_and_threshold)
{
    enum { N = 21, S = (N + 7) / 8 };
    kiln_soa_xform a[S], b[S], rest[S], out[S];
    blend_poses(a, b, rest, N, 1);
    /* put some of b's rotations on the far hemisphere: the blend must not care */
    for (uint32_t j = 0; j < N; j += 3)
        for (unsigned c = 3; c < 7; c++) set_lane(b, j, c, -lane(b, j, c));
    float mask[S * 8];
    for (uint32_t j = 0; j < S * 8; j++) mask[j] = j % 4 == 0 ? 0.0f : (j % 4 == 1 ? 0.5f : 1.0f);
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        /* two layers 0.25 / 0.75 */
        kiln_blend_layer layers[3] = {{a, 0.25f, NULL}, {b, 0.75f, NULL}, {rest, -1.0f, NULL}};
        const char *path = kiln_simd_name(paths[p]);
        cr_assert_eq(kiln_pose_blend(layers, 3, rest, 0.1f, out, S), KILN_OK);
        const kiln_soa_xform *ps[2] = {a, b};
        const double w[2] = {0.25, 0.75};
        expect_blend(out, N, ps, 2, w, NULL, rest, 0.1, path, "two layers");
        /* masked second layer; below the threshold the rest pose fills in */
        layers[1].joint_weights = mask;
        layers[2].weight = NAN;
        cr_assert_eq(kiln_pose_blend(layers, 3, rest, 1.0f, out, S), KILN_OK);
        const float *masks[2] = {NULL, mask};
        expect_blend(out, N, ps, 2, w, masks, rest, 1.0, path, "masked");
        /* a single layer of weight 0.2 under threshold 1: 0.2 layer + 0.8 rest */
        kiln_blend_layer one = {a, 0.2f, NULL};
        kiln_pose_blend(&one, 1, rest, 1.0f, out, S);
        const double w1[1] = {0.2};
        expect_blend(out, N, ps, 1, w1, NULL, rest, 1.0, path, "threshold");
        /* no layers: the rest pose (NULL rest: identity) */
        kiln_pose_blend(NULL, 0, rest, 0.5f, out, S);
        for (uint32_t j = 0; j < N; j++)
            for (unsigned c = 0; c < 10; c++) cr_assert_float_eq(lane(out, j, c), lane(rest, j, c), 2e-6);
        kiln_pose_blend(NULL, 0, NULL, 0.5f, out, S);
        for (uint32_t j = 0; j < N; j++) cr_assert_float_eq(lane(out, j, 6), 1.0f, 1e-6);
        /* out aliasing a layer */
        kiln_soa_xform copy[S], sep[S];
        memcpy(copy, a, sizeof a);
        kiln_blend_layer al[2] = {{copy, 0.6f, NULL}, {b, 0.4f, NULL}};
        kiln_pose_blend(al, 2, rest, 0.1f, copy, S);
        al[0].pose = a;
        kiln_pose_blend(al, 2, rest, 0.1f, sep, S);
        cr_assert(memcmp(copy, sep, sizeof sep) == 0, "blending into a layer differs");
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    kiln_blend_layer bad = {NULL, 1, NULL};
    cr_assert_eq(kiln_pose_blend(&bad, 1, NULL, 0.1f, out, S), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_pose_blend(NULL, 0, NULL, 0.0f, out, S), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_pose_blend(NULL, 0, NULL, 0.1f, NULL, S), KILN_ERR_INVALID_ARGUMENT);
}

/* Only the ratios of the weights and the threshold matter: scaling them all by one factor,
 * from deep in the denormals to near FLT_MAX, gives the pose of the unscaled weights. (Sums
 * below ~1e-38 used to give inf/NaN, and on SSE2/AVX2 sums above ~1e19 NaN rotations.) */
Test(pose_blend, weights_and_threshold_of_any_finite_magnitude)
{
    enum { N = 21, S = (N + 7) / 8 };
    kiln_soa_xform a[S], b[S], rest[S], out[S];
    blend_poses(a, b, rest, N, 31);
    float mask[S * 8];
    for (uint32_t j = 0; j < S * 8; j++) mask[j] = j % 3 == 0 ? 0.0f : (j % 3 == 1 ? 0.5f : 1.0f);
    /* powers of two: the scaled weights are exact, denormals included */
    static const int exps[] = {-140, -130, -126, -100, -20, -16, 0, 16, 20, 62, 64, 100, 126};
    static const float thrs[2] = {1.0f, 0.25f};
    const kiln_soa_xform *ps[2] = {a, b};
    const double w[2] = {0.25, 0.5};
    const float *masks[2] = {NULL, mask};
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        for (size_t i = 0; i < sizeof exps / sizeof exps[0]; i++)
            for (int t = 0; t < 2; t++) {
                float k = ldexpf(1.0f, exps[i]);
                kiln_blend_layer layers[2] = {{a, 0.25f * k, NULL}, {b, 0.5f * k, mask}};
                cr_assert_eq(kiln_pose_blend(layers, 2, rest, thrs[t] * k, out, S), KILN_OK);
                char what[64];
                snprintf(what, sizeof what, "scale 2^%d threshold %g", exps[i], thrs[t]);
                expect_blend(out, N, ps, 2, w, masks, rest, thrs[t], kiln_simd_name(paths[p]), what);
            }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
}

/* The documented edges: thresholds down to the smallest denormal and up to FLT_MAX, a
 * threshold below 1e-12 of the largest layer weight acting as that, +inf layer weights as
 * FLT_MAX, and joint weights of any value (at most 65536 times the largest weight). */
Test(pose_blend, extreme_thresholds_joint_weights_and_infinite_layer_weights)
{
    enum { N = 21, S = (N + 7) / 8 };
    kiln_soa_xform a[S], b[S], rest[S], out[S];
    blend_poses(a, b, rest, N, 41);
    const kiln_soa_xform *ps[2] = {a, b};
    float mask[S * 8], tiny[S * 8], huge[S * 8];
    static const float huge_values[4] = {1e30f, FLT_MAX, INFINITY, 0.5f};
    for (uint32_t j = 0; j < S * 8; j++) {
        mask[j] = j % 3 == 0 ? 0.0f : 1.0f;
        tiny[j] = j % 3 == 0 ? 0.0f : (j % 3 == 1 ? 1e-14f : 1.0f);
        huge[j] = huge_values[j % 4];
    }
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        const char *path = kiln_simd_name(paths[p]);
        /* smallest threshold: the joints the mask leaves empty are the rest pose */
        static const double w1[1] = {1}, even[2] = {1, 1};
        const float *by_mask[1] = {mask}, *by_tiny[1] = {tiny};
        kiln_blend_layer one = {a, 1.0f, mask};
        cr_assert_eq(kiln_pose_blend(&one, 1, rest, FLT_TRUE_MIN, out, S), KILN_OK);
        expect_blend(out, N, ps, 1, w1, by_mask, rest, FLT_TRUE_MIN, path, "threshold FLT_TRUE_MIN");
        /* a threshold under 1e-12 x the largest weight acts as that: a joint weight of 1e-14
         * is then mostly the rest pose */
        kiln_blend_layer faint = {a, 1.0f, tiny};
        cr_assert_eq(kiln_pose_blend(&faint, 1, rest, 1e-40f, out, S), KILN_OK);
        expect_blend(out, N, ps, 1, w1, by_tiny, rest, 1e-12, path, "threshold floor");
        /* largest threshold: the rest pose fills almost everything */
        cr_assert_eq(kiln_pose_blend(&one, 1, rest, FLT_MAX, out, S), KILN_OK);
        expect_blend(out, N, ps, 1, w1, by_mask, rest, FLT_MAX, path, "threshold FLT_MAX");
        /* FLT_MAX + FLT_MAX: an even blend; +inf counts as FLT_MAX */
        for (int inf = 0; inf < 2; inf++) {
            kiln_blend_layer two[2] = {{a, inf ? INFINITY : FLT_MAX, NULL}, {b, FLT_MAX, NULL}};
            cr_assert_eq(kiln_pose_blend(two, 2, rest, 1.0f, out, S), KILN_OK);
            expect_blend(out, N, ps, 2, even, NULL, rest, 1e-30, path,
                         inf ? "FLT_MAX weights (inf 1)" : "FLT_MAX weights (inf 0)");
        }
        /* joint weights of 1e30, FLT_MAX, +inf: b outweighs a 65536 to 1 */
        kiln_blend_layer masked[2] = {{a, 1.0f, NULL}, {b, 1.0f, huge}};
        cr_assert_eq(kiln_pose_blend(masked, 2, rest, 0.1f, out, S), KILN_OK);
        for (uint32_t j = 0; j < N; j++) {
            double e[10], w[2] = {1, huge[j] > 65536.0f ? 65536.0 : huge[j]};
            blend_ref(ps, w, 2, rest, 0.1, j, e);
            cr_assert_lt(joint_diff(out, j, e), 2e-6, "%s joint weight %g joint %u", path, huge[j], j);
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    /* only non-finite and non-positive thresholds are rejected */
    cr_assert_eq(kiln_pose_blend(NULL, 0, NULL, INFINITY, out, S), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_pose_blend(NULL, 0, NULL, NAN, out, S), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_pose_blend(NULL, 0, NULL, -FLT_TRUE_MIN, out, S), KILN_ERR_INVALID_ARGUMENT);
}

/* Rotations far from unit length normalise (a caller's pose or a raw key need not be unit):
 * the squared length used to overflow above |q| ~ 1.8e19 (NaN on SSE2/AVX2, zero on scalar),
 * and kiln_pose_add's slerp correction overflowed for deltas far from unit length (NaN). One
 * operand of each product is unit here: two lengths whose product overflows are beyond what
 * the blend's hemisphere test and the additive product can represent. Both blend kernels: the
 * general one (the rest pose fills up to the threshold) and the two-layer one. */
Test(pose, rotations_far_from_unit_length)
{
    enum { N = 21, S = (N + 7) / 8 }; /* an odd block count: the two-layer kernel's last block alone */
    kiln_soa_xform a[S], b[S], rest[S], out[S];
    blend_poses(a, b, rest, N, 51);
    static const float lengths[4] = {1e3f, 1e10f, 1e25f, 1e37f};
    for (uint32_t j = 0; j < N; j++)
        for (unsigned c = 3; c < 7; c++) set_lane(a, j, c, lane(a, j, c) * lengths[j % 4]);
    const kiln_soa_xform *ps[2] = {a, b};
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        const char *path = kiln_simd_name(paths[p]);
        kiln_blend_layer layers[2] = {{a, 0.3f, NULL}, {b, 0.4f, NULL}};
        cr_assert_eq(kiln_pose_blend(layers, 2, rest, 1.0f, out, S), KILN_OK);
        const double w[2] = {0.3, 0.4};
        expect_blend(out, N, ps, 2, w, NULL, rest, 1.0, path, "blend (rotations 1e3 to 1e37 long)");
        /* the layers reaching the threshold: the two-layer kernel, which redoes overflowing lanes */
        cr_assert_eq(kiln_pose_blend(layers, 2, rest, 0.5f, out, S), KILN_OK);
        expect_blend(out, N, ps, 2, w, NULL, rest, 0.5, path, "two-layer blend (rotations 1e3 to 1e37 long)");
        /* delta far from unit length: the plain nlerp, R ⊗ (w·dR + (1 - w)·I) normalised */
        memcpy(out, rest, sizeof rest);
        cr_assert_eq(kiln_pose_add(out, a, 0.6f, NULL, S), KILN_OK);
        for (uint32_t j = 0; j < N; j++) {
            double e[10], r[4], k[4], kp[4], n = 0;
            for (unsigned c = 0; c < 3; c++) {
                e[c] = lane(rest, j, c) + 0.6 * lane(a, j, c);
                e[7 + c] = lane(rest, j, 7 + c) * (1 + 0.6 * (lane(a, j, 7 + c) - 1));
            }
            for (unsigned c = 0; c < 4; c++) r[c] = lane(rest, j, 3 + c), k[c] = lane(a, j, 3 + c);
            double sgn = k[3] < 0 ? -1 : 1;
            for (unsigned c = 0; c < 4; c++) kp[c] = 0.6 * sgn * k[c] + (c == 3 ? 0.4 : 0.0);
            af_qmul(r, kp, e + 3);
            for (unsigned c = 3; c < 7; c++) n += e[c] * e[c];
            for (unsigned c = 3; c < 7; c++) e[c] /= sqrt(n);
            cr_assert_lt(joint_diff(out, j, e), 2e-6, "%s add, |q| %g joint %u", path, lengths[j % 4], j);
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
}

Test(pose_add, applies_a_weighted_delta)
{
    enum { N = 13, S = (N + 7) / 8 };
    kiln_soa_xform pose[S], delta[S], out[S];
    random_pose(pose, N, 4, 0.5f, 2);
    random_pose(delta, N, 5, 0.8f, 1.2f);
    float mask[S * 8];
    for (uint32_t j = 0; j < S * 8; j++) mask[j] = (float)(j % 5) * 0.5f - 0.5f; /* -0.5 .. 1.5: clamped */
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        for (int m = 0; m < 2; m++) {
            memcpy(out, pose, sizeof pose);
            cr_assert_eq(kiln_pose_add(out, delta, 0.8f, m ? mask : NULL, S), KILN_OK);
            for (uint32_t j = 0; j < N; j++) {
                double w = 0.8 * (m ? mask[j] : 1.0);
                w = w < 0 ? 0 : (w > 1 ? 1 : w);
                double e[10], r[4], k[4], part[4];
                for (unsigned c = 0; c < 3; c++) {
                    e[c] = lane(pose, j, c) + w * lane(delta, j, c);
                    e[7 + c] = lane(pose, j, 7 + c) * (1 + w * (lane(delta, j, 7 + c) - 1));
                }
                double id[4] = {0, 0, 0, 1};
                for (unsigned c = 0; c < 4; c++) r[c] = lane(pose, j, 3 + c), k[c] = lane(delta, j, 3 + c);
                af_slerp(id, k, w, part);
                af_qmul(r, part, e + 3);
                double d = joint_diff(out, j, e);
                cr_assert_lt(d, 2e-6, "%s mask=%d joint %u: %g", kiln_simd_name(paths[p]), m, j, d);
            }
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    cr_assert_eq(kiln_pose_add(NULL, delta, 1, NULL, S), KILN_ERR_INVALID_ARGUMENT);
}

Test(pose, identity_fills_every_lane)
{
    kiln_soa_xform p[3];
    memset(p, 0x7F, sizeof p);
    kiln_pose_identity(p, 3);
    for (uint32_t j = 0; j < 24; j++)
        for (unsigned c = 0; c < 10; c++) cr_assert_eq(lane(p, j, c), c >= 6 ? 1.0f : 0.0f);
}

/* ---- SIMD agreement --------------------------------------------------------------------------- */
Test(simd, pose_kernels_agree_across_paths)
{
    enum { N = 200, S = (N + 7) / 8 };
    skel_blob s = make_skeleton(N, 11, 40);
    kiln_soa_xform *a = malloc(sizeof *a * S), *b = malloc(sizeof *b * S), *ref = malloc(sizeof *ref * S),
                   *out = malloc(sizeof *out * S);
    float *mref = malloc(sizeof(float) * 16 * N), *mout = malloc(sizeof(float) * 16 * N);
    float *mask = malloc(sizeof(float) * S * 8);
    random_pose(a, N, 21, 0.5f, 2);
    random_pose(b, N, 22, 0.5f, 2);
    uint32_t st = 5;
    for (uint32_t j = 0; j < S * 8; j++) mask[j] = af_rand(&st, 0, 1);
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    kiln_blend_layer layers[2] = {{a, 0.3f, mask}, {b, 0.6f, NULL}};
    for (int k = 0; k < 4; k++) {
        for (int p = 0; p < np; p++) {
            kiln_simd_force(paths[p]);
            kiln_soa_xform *dst = p == 0 ? ref : out;
            float *mdst = p == 0 ? mref : mout;
            switch (k) {
            case 0: kiln_pose_blend(layers, 2, kiln_blob_rest_pose(s.blob, NULL), 1.0f, dst, S); break;
            case 1:
                memcpy(dst, a, sizeof *a * S);
                kiln_pose_add(dst, b, 0.7f, mask, S);
                break;
            case 2: kiln_pose_local_to_object(s.blob, 0, a, NULL, mdst, N); break;
            default:
                kiln_pose_local_to_object(s.blob, 0, a, NULL, mdst, N);
                kiln_pose_skin_matrices(s.blob, 0, mdst, mdst, N);
                break;
            }
            if (p == 0) continue;
            if (k < 2) {
                for (uint32_t j = 0; j < N; j++)
                    for (unsigned c = 0; c < 10; c++)
                        cr_assert_float_eq(lane(out, j, c), lane(ref, j, c), 1e-5, "%s kernel %d joint %u comp %u",
                                           kiln_simd_name(paths[p]), k, j, c);
            } else {
                for (uint32_t i = 0; i < 16 * N; i++)
                    cr_assert(fabsf(mout[i] - mref[i]) <= 1e-5f * (1.0f + fabsf(mref[i])), "%s kernel %d float %u: %g vs %g",
                              kiln_simd_name(paths[p]), k, i, mout[i], mref[i]);
            }
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    free(a), free(b), free(ref), free(out), free(mref), free(mout), free(mask);
    skeleton_free(&s);
}
