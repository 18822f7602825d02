/* kiln_pose_blend with whole-pose layers (no joint weights), the case the kernels run with one
 * weight set for every joint: 1 to 9 layers (9 is past the kernels' uniform-weight limit),
 * layers that reach the threshold or fall short of it with and without a rest pose, rotations on
 * either hemisphere, and `out` equal to a layer, against a double-precision blend on every SIMD
 * path the machine has. */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "anim_fixture.h"
#include "kiln/anim.h"
#include "pose_ref.h"

enum { N = 21, S = (N + 7) / 8, LAYERS = 9 };

/* Random local transforms; every third joint's rotation negated on odd seeds (the other
 * hemisphere, the same rotation). */
static void random_pose(kiln_soa_xform *pose, uint32_t seed)
{
    uint32_t st = seed;
    kiln_pose_identity(pose, S);
    for (uint32_t b = 0; b < N; b++) {
        float q[4];
        af_axis_angle(af_rand(&st, -1, 1), af_rand(&st, -1, 1), af_rand(&st, -1, 1) + 0.01, af_rand(&st, -3, 3), q);
        for (unsigned c = 0; c < 3; c++) {
            set_lane(pose, b, c, af_rand(&st, -2, 2));
            set_lane(pose, b, 7 + c, af_rand(&st, 0.5f, 2));
        }
        float sign = seed % 2 && b % 3 == 0 ? -1.0f : 1.0f;
        for (unsigned c = 0; c < 4; c++) set_lane(pose, b, 3 + c, sign * q[c]);
    }
}

/* One blend of n layers on the active path, checked joint by joint; in_place blends into
 * layer 0's pose (a copy of it stands in for the layer in the reference). */
static void check(int n, const float *w, int with_rest, float thr, int in_place, uint32_t seed, const char *path)
{
    kiln_soa_xform poses[LAYERS][S], keep[LAYERS][S], rest[S], out[S];
    const kiln_soa_xform *ref_poses[LAYERS];
    double ref_w[LAYERS];
    kiln_blend_layer layers[LAYERS];
    for (int i = 0; i < n; i++) {
        random_pose(poses[i], seed + (uint32_t)i);
        memcpy(keep[i], poses[i], sizeof keep[i]);
        ref_poses[i] = keep[i], ref_w[i] = w[i];
        layers[i].pose = poses[i], layers[i].weight = w[i], layers[i].joint_weights = NULL;
    }
    random_pose(rest, seed + 100);
    kiln_soa_xform *dst = in_place ? poses[0] : out;
    cr_assert_eq(kiln_pose_blend(layers, (uint32_t)n, with_rest ? rest : NULL, thr, dst, S), KILN_OK);
    for (uint32_t j = 0; j < N; j++) {
        double e[10];
        blend_ref(ref_poses, ref_w, n, with_rest ? rest : NULL, thr, j, e);
        for (unsigned c = 0; c < 10; c++)
            cr_assert(fabs(lane(dst, j, c) - e[c]) < 2e-6, "%s, %d layers, rest %d, threshold %g, in place %d: joint %u component %u: %.9g, expected %.9g",
                      path, n, with_rest, (double)thr, in_place, j, c, (double)lane(dst, j, c), e[c]);
    }
}

Test(blend_uniform, matches_the_double_blend_for_one_to_nine_layers)
{
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        const char *path = kiln_simd_name(paths[p]);
        for (int n = 1; n <= LAYERS; n++) {
            float w[LAYERS];
            uint32_t st = 40u + (uint32_t)n;
            for (int i = 0; i < n; i++) w[i] = af_rand(&st, 0.05f, 1.0f);
            if (n > 2) w[1] = 0.0f, w[2] = -1.0f; /* layers that add nothing, as in the general loop */
            for (int in_place = 0; in_place < 2; in_place++) {
                check(n, w, 1, 0.1f, in_place, 7u * (uint32_t)n, path);   /* the layers reach the threshold */
                check(n, w, 1, 12.0f, in_place, 7u * (uint32_t)n, path);  /* the rest pose fills up */
                check(n, w, 0, 12.0f, in_place, 7u * (uint32_t)n, path);  /* ... the identity does */
            }
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
}

Test(blend_uniform, two_layers_agree_with_the_scalar_path_within_1e_5)
{
    kiln_soa_xform a[S], b[S], ref[S], out[S];
    random_pose(a, 3);
    random_pose(b, 4);
    kiln_blend_layer layers[2] = {{a, 0.7f, NULL}, {b, 0.3f, NULL}};
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    cr_assert_eq(paths[0], KILN_SIMD_SCALAR);
    kiln_simd_force(KILN_SIMD_SCALAR);
    cr_assert_eq(kiln_pose_blend(layers, 2, NULL, 0.1f, ref, S), KILN_OK);
    for (int p = 1; p < np; p++) {
        kiln_simd_force(paths[p]);
        cr_assert_eq(kiln_pose_blend(layers, 2, NULL, 0.1f, out, S), KILN_OK);
        for (uint32_t j = 0; j < N; j++)
            for (unsigned c = 0; c < 10; c++)
                cr_assert_float_eq(lane(out, j, c), lane(ref, j, c), 1e-5, "%s joint %u component %u",
                                   kiln_simd_name(paths[p]), j, c);
    }
    kiln_simd_force(KILN_SIMD_AUTO);
}

/* kiln_pose_blend takes two unmasked layers with unscaled weights straight to the two-layer
 * kernel; with a third layer of weight 0 (which adds nothing) the same blend goes through the
 * general entry. Both must give the same bytes, on every path, for weights on either side of
 * every condition of the two-layer entry: m at 2^-16 and just below 2^16 (no scale) and at 2^16
 * (scaled), a sum equal to the threshold and below it (the rest pose or the identity fills
 * up), a layer with weight 0, a negative one, NaN, and a masked layer. */
Test(blend_uniform, two_layers_give_the_bytes_of_the_general_blend)
{
    static const struct {
        float wa, wb, thr;
        int masked;
    } cases[] = {
        {0.7f, 0.3f, 0.1f, 0},          {0.6f, 0.4f, 0.1f, 0},        {0.5f, 0.5f, 1.0f, 0},
        {0x1p-16f, 0x1p-16f, 1e-9f, 0}, {0x1.fffffep15f, 1.0f, 0.1f, 0}, {0x1p16f, 1.0f, 0.1f, 0},
        {0.2f, 0.3f, 0.6f, 0},          {0.0f, 0.3f, 0.1f, 0},        {0.5f, -1.0f, 0.1f, 0},
        {NAN, 0.5f, 0.1f, 0},           {0.3f, 0.1f, 0x1p-17f, 0},    {0.7f, 0.3f, 0.1f, 1},
        {1.3f, 0.45f, 0.1f, 0},         {0.41f, 0.33f, 0.1f, 0}, /* w·(1/sum) is not w/sum here */
    };
    kiln_soa_xform a[S], b[S], c[S], rest[S], two[S], three[S];
    float mask[S * 8];
    random_pose(a, 5);
    random_pose(b, 6);
    random_pose(c, 7);
    random_pose(rest, 8);
    for (unsigned j = 0; j < S * 8; j++) mask[j] = (float)(j % 3) * 0.5f;
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++)
            for (int with_rest = 0; with_rest < 2; with_rest++) {
                kiln_blend_layer layers[3] = {{a, cases[i].wa, NULL},
                                              {b, cases[i].wb, cases[i].masked ? mask : NULL},
                                              {c, 0.0f, NULL}};
                memset(two, 0xA5, sizeof two), memset(three, 0x5A, sizeof three);
                const kiln_soa_xform *r = with_rest ? rest : NULL;
                cr_assert_eq(kiln_pose_blend(layers, 2, r, cases[i].thr, two, S), KILN_OK);
                cr_assert_eq(kiln_pose_blend(layers, 3, r, cases[i].thr, three, S), KILN_OK);
                cr_assert(memcmp(two, three, sizeof two) == 0, "%s, case %u, rest %d: the two-layer blend differs",
                          kiln_simd_name(paths[p]), i, with_rest);
            }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
}

/* Two-layer calls with a bad argument report it as every other call does. */
Test(blend_uniform, two_layer_calls_report_bad_arguments)
{
    kiln_soa_xform a[S], out[S];
    random_pose(a, 9);
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        kiln_blend_layer layers[2] = {{a, 0.5f, NULL}, {NULL, 0.5f, NULL}};
        cr_assert_eq(kiln_pose_blend(layers, 2, NULL, 0.1f, out, S), KILN_ERR_INVALID_ARGUMENT);
        cr_assert_str_eq(kiln_error_detail()->path, "kiln_pose_blend: layers[].pose");
        cr_assert_str_eq(kiln_error_detail()->message, "layer 1 has no pose");
        layers[1].pose = a;
        cr_assert_eq(kiln_pose_blend(layers, 2, NULL, 0.1f, NULL, S), KILN_ERR_INVALID_ARGUMENT);
        cr_assert_str_eq(kiln_error_detail()->path, "kiln_pose_blend: out");
        cr_assert_eq(kiln_pose_blend(NULL, 2, NULL, 0.1f, out, S), KILN_ERR_INVALID_ARGUMENT);
        cr_assert_str_eq(kiln_error_detail()->path, "kiln_pose_blend: layers");
        const float thr[3] = {0.0f, NAN, INFINITY};
        for (int t = 0; t < 3; t++) {
            cr_assert_eq(kiln_pose_blend(layers, 2, NULL, thr[t], out, S), KILN_ERR_INVALID_ARGUMENT);
            cr_assert_str_eq(kiln_error_detail()->path, "kiln_pose_blend: threshold");
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
}
