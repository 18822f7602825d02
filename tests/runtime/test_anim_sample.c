/* Clip binding and sampling against hand-computed values (Cast reference section D), on clips
 * laid out in memory by tests/anim_fixture.h. Behaviour tests run on every SIMD path the
 * machine has; the agreement tests compare the paths on random clips. */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim_fixture.h"
#include "../runtime/blob_verify_anim.h"
#include "kiln/anim.h"

/* ---- helpers ------------------------------------------------------------------------------ */
typedef struct scene {
    unsigned char *mem;
    const kiln_blob *blob;
    kiln_anim_binding *bind;
    kiln_anim_bind_report report;
} scene;

static scene scene_make(const af_skel *skel, const af_clip *clips, uint32_t n)
{
    scene s;
    memset(&s, 0, sizeof s);
    size_t size;
    s.mem = af_build(skel, clips, n, &size);
    cr_assert_eq(kiln__verify_animation(s.mem, size, NULL), KILN_OK, "fixture blob fails animation verification");
    s.blob = af_load(s.mem, size);
    cr_assert_not_null(s.blob);
    s.bind = af_bind(s.blob, 0, s.blob, 0, &s.report);
    cr_assert_not_null(s.bind);
    return s;
}

static void scene_free(scene *s)
{
    free(s->bind);
    free(s->mem);
}

static float lane(const kiln_soa_xform *pose, uint32_t bone, unsigned c)
{
    const float *x = (const float *)(const void *)&pose[bone / 8];
    return x[c * 8 + bone % 8];
}

static void set_lane(kiln_soa_xform *pose, uint32_t bone, unsigned c, float v)
{
    float *x = (float *)(void *)&pose[bone / 8];
    x[c * 8 + bone % 8] = v;
}

static kiln_result sample(const kiln_anim_binding *b, double t, kiln_loop loop, const kiln_soa_xform *base,
                          kiln_soa_xform *out, uint32_t n, void *ctx)
{
    kiln_sample_desc d;
    memset(&d, 0, sizeof d);
    d.binding = b, d.time_s = t, d.loop = loop, d.base = base, d.out = out, d.out_count = n, d.context = ctx;
    return kiln_sample(&d);
}

static void random_unit(uint32_t *st, float q[4])
{
    af_axis_angle(af_rand(st, -1, 1), af_rand(st, -1, 1), af_rand(st, -1, 1) + 0.01, af_rand(st, -3.1f, 3.1f), q);
}

/* A chain (or fan when fan != 0) of n bones named <prefix><i> with random rest values. */
static af_bone *make_bones(uint32_t n, const char *prefix, uint32_t seed, int fan, char names[][16])
{
    af_bone *b = calloc(n, sizeof *b);
    uint32_t st = seed;
    for (uint32_t i = 0; i < n; i++) {
        snprintf(names[i], 16, "%s%u", prefix, i);
        b[i].name = names[i];
        b[i].parent = i == 0 ? -1 : (fan ? 0 : (int32_t)i - 1);
        for (int k = 0; k < 3; k++) b[i].t[k] = af_rand(&st, -1, 1), b[i].s[k] = af_rand(&st, 0.5f, 1.5f);
        random_unit(&st, b[i].r);
    }
    return b;
}

/* D.5 in double: key k (already interpolated) against rest r and base c, per component modes. */
static void ref_compose(const uint32_t modes[10], const float ab[3], const double r[10], const double c[10],
                        const double k[10], double out[10])
{
    for (int i = 0; i < 3; i++) {
        switch (modes[i]) {
        case KILN_MODE_ABSOLUTE: out[i] = k[i]; break;
        case KILN_MODE_RELATIVE: out[i] = r[i] + k[i]; break;
        case KILN_MODE_ADDITIVE: out[i] = c[i] + ab[0] * k[i]; break;
        default: out[i] = c[i]; break;
        }
        switch (modes[7 + i]) {
        case KILN_MODE_ABSOLUTE: out[7 + i] = k[7 + i]; break;
        case KILN_MODE_RELATIVE: out[7 + i] = r[7 + i] * k[7 + i]; break;
        case KILN_MODE_ADDITIVE: out[7 + i] = c[7 + i] * (1 + ab[2] * (k[7 + i] - 1)); break;
        default: out[7 + i] = c[7 + i]; break;
        }
    }
    double q[4];
    switch (modes[3]) {
    case KILN_MODE_ABSOLUTE: memcpy(q, k + 3, sizeof q); break;
    case KILN_MODE_RELATIVE: af_qmul(r + 3, k + 3, q); break;
    case KILN_MODE_ADDITIVE: {
        double id[4] = {0, 0, 0, 1}, part[4];
        /* slerp(I, k, a) for any a: exact, via the angle */
        double kk[4] = {k[3], k[4], k[5], k[6]};
        if (kk[3] < 0)
            for (int i = 0; i < 4; i++) kk[i] = -kk[i];
        double s = sqrt(kk[0] * kk[0] + kk[1] * kk[1] + kk[2] * kk[2]), th = atan2(s, kk[3]);
        if (s < 1e-12) memcpy(part, id, sizeof part);
        else {
            double f = sin(ab[1] * th) / s;
            part[0] = kk[0] * f, part[1] = kk[1] * f, part[2] = kk[2] * f, part[3] = cos(ab[1] * th);
        }
        af_qmul(c + 3, part, q);
        break;
    }
    default: memcpy(q, c + 3, sizeof q); break;
    }
    memcpy(out + 3, q, sizeof q);
}

/* Largest |a - b| over a joint's 10 components, quaternions compared up to sign. */
static double joint_diff(const kiln_soa_xform *pose, uint32_t bone, const double e[10])
{
    double d = 0, dq = 0, dqn = 0;
    for (unsigned c = 0; c < 10; c++) {
        double x = lane(pose, bone, c);
        if (c >= 3 && c <= 6) {
            dq = fmax(dq, fabs(x - e[c]));
            dqn = fmax(dqn, fabs(x + e[c]));
        } else {
            d = fmax(d, fabs(x - e[c]));
        }
    }
    return fmax(d, fmin(dq, dqn));
}

/* ---- exactness and interpolation ------------------------------------------------------------ */
Test(sample, absolute_keys_at_integer_frames_are_the_stored_values)
{
    char names[3][16];
    af_bone *bones = make_bones(3, "b", 1, 0, names);
    af_skel skel = {3, bones};
    enum { F = 7 };
    float v[F * 3 * 10];
    af_motion(F, 3, 5, 30, v);
    af_joint joints[3];
    for (int j = 0; j < 3; j++) joints[j] = (af_joint){names[j], AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}};
    af_clip clip = {.framerate = 30, .frame_count = F, .joint_count = 3, .joints = joints, .values = v, .width = 32};
    scene s = scene_make(&skel, &clip, 1);
    cr_assert_eq(s.report.bound_joints, 3);
    cr_assert_eq(s.report.identity_map, 1);
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        for (int f = 0; f < F; f++) {
            kiln_soa_xform out[1];
            cr_assert_eq(sample(s.bind, f / 30.0, KILN_LOOP_CLAMP, NULL, out, 1, NULL), KILN_OK);
            for (uint32_t j = 0; j < 3; j++)
                for (unsigned c = 0; c < 10; c++)
                    cr_assert_eq(lane(out, j, c), v[(f * 3 + j) * 10 + c], "%s frame %d joint %u comp %u: %.9g != %.9g",
                                 kiln_simd_name(paths[p]), f, j, c, lane(out, j, c), v[(f * 3 + j) * 10 + c]);
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    scene_free(&s);
    free(bones);
}

Test(sample, translation_and_scale_lerp_rotation_slerps_between_frames)
{
    char names[2][16];
    af_bone *bones = make_bones(2, "b", 2, 0, names);
    af_skel skel = {2, bones};
    enum { F = 5 };
    float v[F * 2 * 10];
    af_motion(F, 2, 9, 30, v);
    af_joint joints[2] = {{names[0], AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}},
                          {names[1], AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}}};
    af_clip clip = {.framerate = 30, .frame_count = F, .joint_count = 2, .joints = joints, .values = v, .width = 32};
    scene s = scene_make(&skel, &clip, 1);
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        for (double u = 0.05; u < 1.0; u += 0.1) {
            double fr = 2 + u;
            kiln_soa_xform out[1];
            cr_assert_eq(sample(s.bind, fr / 30.0, KILN_LOOP_CLAMP, NULL, out, 1, NULL), KILN_OK);
            for (uint32_t j = 0; j < 2; j++) {
                const float *a = v + (2 * 2 + j) * 10, *b = v + (3 * 2 + j) * 10;
                double e[10], qa[4], qb[4];
                for (int c = 0; c < 10; c++) e[c] = a[c] + u * (b[c] - a[c]);
                for (int c = 0; c < 4; c++) qa[c] = a[3 + c], qb[c] = b[3 + c];
                af_slerp(qa, qb, u, e + 3);
                cr_assert_lt(joint_diff(out, j, e), 1.5e-6, "%s u=%g joint %u diff %g", kiln_simd_name(paths[p]), u, j,
                             joint_diff(out, j, e));
            }
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    scene_free(&s);
    free(bones);
}

Test(sample, rotation_takes_the_shortest_arc_across_q_and_minus_q_keys)
{
    af_bone bone = {"r", -1, {0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}, 0};
    af_skel skel = {1, &bone};
    float v[2 * 10] = {0};
    float q0[4], q1[4];
    af_axis_angle(0, 0, 1, 0.3, q0);
    af_axis_angle(0, 0, 1, 0.5, q1);
    for (int f = 0; f < 2; f++) v[f * 10 + 7] = v[f * 10 + 8] = v[f * 10 + 9] = 1;
    memcpy(v + 3, q0, sizeof q0);
    for (int i = 0; i < 4; i++) v[10 + 3 + i] = -q1[i]; /* the same rotation, other hemisphere */
    af_joint j = {"r", AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}};
    af_clip clip = {.framerate = 10, .frame_count = 2, .joint_count = 1, .joints = &j, .values = v, .width = 32};
    scene s = scene_make(&skel, &clip, 1);
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        kiln_soa_xform out[1];
        sample(s.bind, 0.05, KILN_LOOP_CLAMP, NULL, out, 1, NULL);
        float e[4];
        af_axis_angle(0, 0, 1, 0.4, e); /* half-way on the short arc, q0's hemisphere */
        for (int c = 0; c < 4; c++)
            cr_assert_float_eq(lane(out, 0, 3 + c), e[c], 1e-6, "%s comp %d: %g vs %g", kiln_simd_name(paths[p]), c,
                               lane(out, 0, 3 + c), e[c]);
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    scene_free(&s);
}

Test(sample, corrected_nlerp_stays_within_6e7_rad_of_slerp_up_to_120_degrees)
{
    /* one clip, 8 joints per block, keys 1..60 degrees apart about random axes */
    enum { J = 64 };
    char names[J][16];
    af_bone *bones = make_bones(J, "j", 3, 1, names);
    af_skel skel = {J, bones};
    float v[2 * J * 10];
    af_joint joints[J];
    uint32_t st = 77;
    for (uint32_t j = 0; j < J; j++) {
        joints[j] = (af_joint){names[j], AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}};
        float a[4], d[4];
        random_unit(&st, a);
        double ang = (1.0 + 119.0 * j / (J - 1)) * 3.14159265358979 / 180.0; /* rotation angle up to 120° */
        af_axis_angle(af_rand(&st, -1, 1), af_rand(&st, -1, 1), af_rand(&st, -1, 1) + 0.01, ang, d);
        double ad[4] = {a[0], a[1], a[2], a[3]}, dd[4] = {d[0], d[1], d[2], d[3]}, b[4];
        af_qmul(ad, dd, b);
        for (int f = 0; f < 2; f++) {
            float *x = v + (f * J + j) * 10;
            memset(x, 0, 10 * sizeof(float));
            x[7] = x[8] = x[9] = 1;
            for (int i = 0; i < 4; i++) x[3 + i] = f ? (float)b[i] : a[i];
        }
    }
    af_clip clip = {.framerate = 1, .frame_count = 2, .joint_count = J, .joints = joints, .values = v, .width = 32};
    scene s = scene_make(&skel, &clip, 1);
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    double worst = 0, small = 0;
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        for (int k = 1; k < 64; k++) {
            double u = k / 64.0;
            kiln_soa_xform out[J / 8];
            sample(s.bind, u, KILN_LOOP_CLAMP, NULL, out, J / 8, NULL);
            for (uint32_t j = 0; j < J; j++) {
                double a[4], b[4], e[4], o[4], n = 0, dot = 0, chord = 0;
                for (int i = 0; i < 4; i++) a[i] = v[j * 10 + 3 + i], b[i] = v[(J + j) * 10 + 3 + i];
                af_slerp(a, b, u, e);
                for (int i = 0; i < 4; i++) o[i] = lane(out, j, 3 + (unsigned)i), n += o[i] * o[i], dot += o[i] * e[i];
                /* rotation angle between the two, from the chord (acos is ill-conditioned near 1) */
                for (int i = 0; i < 4; i++) {
                    double c = o[i] / sqrt(n) - (dot < 0 ? -e[i] : e[i]);
                    chord += c * c;
                }
                double err = 4 * asin(sqrt(chord) / 2), deg = 1.0 + 119.0 * j / (J - 1);
                if (deg <= 40.0) small = fmax(small, err);
                worst = fmax(worst, err);
            }
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    /* rotation-angle error: the fit (1e-7 up to 90 degrees) plus float rounding */
    fprintf(stderr, "corrected nlerp: worst %.3g rad up to 120 degrees apart, %.3g up to 40\n", worst, small);
    cr_assert_lt(worst, 6e-7, "largest angle error %g rad (keys up to 120 degrees apart)", worst);
    cr_assert_lt(small, 4e-7, "largest angle error %g rad (keys up to 40 degrees apart)", small);
    scene_free(&s);
    free(bones);
}

/* Lossless rows may hold finite quaternions far from unit length: the loader accepts any finite
 * key, and blobs need not come from the baker (which normalises). Between such keys the slerp
 * correction, a polynomial in x = 1 - |q0·q1|, used to be evaluated far outside [0, 1] and
 * overflowed (NaN on SSE2/AVX2, (0, 0, 0, 0) on scalar), as did the additive slerp(I, k, a) of
 * a raw key. Between frames the paths now give the normalised plain nlerp of the stored keys
 * (the correction assumes unit keys); at frames, the stored keys, and finite unit additive
 * rotations on which the paths agree. Lengths over ~1.8e19 (whose squared length overflows) are
 * held constant: the dot product of two such keys overflows too. */
Test(sample, rows_with_quaternions_far_from_unit_length)
{
    enum { J = 16, F = 3 };
    char names[J][16];
    af_bone *bones = make_bones(J, "n", 5, 1, names);
    af_skel skel = {J, bones};
    static const float lengths[8] = {100, 1e3f, 1e5f, 6e5f, 1e10f, 1e18f, 1e25f, 1e37f};
    float v[F * J * 10];
    af_joint joints[J];
    uint32_t st = 91;
    for (uint32_t j = 0; j < J; j++) {
        joints[j] = (af_joint){names[j], AF_MODES_ALL(j < 8 ? KILN_MODE_ABSOLUTE : KILN_MODE_ADDITIVE), {1, 0.5f, 1}};
        float len = lengths[j % 8], q[4];
        random_unit(&st, q);
        for (uint32_t f = 0; f < F; f++) {
            float *x = v + (f * J + j) * 10;
            if (len < 1e19f) random_unit(&st, q); /* a new random key per frame */
            for (int c = 0; c < 3; c++) x[c] = af_rand(&st, -1, 1), x[7 + c] = af_rand(&st, 0.5f, 1.5f);
            float sign = j % 8 == 3 && f == 1 ? -1.0f : 1.0f; /* a key on the far hemisphere */
            for (int c = 0; c < 4; c++) x[3 + c] = sign * len * q[c];
        }
    }
    af_clip clip = {.framerate = 10, .frame_count = F, .joint_count = J, .joints = joints, .values = v, .width = 32};
    scene s = scene_make(&skel, &clip, 1);
    static const double frames[] = {0.25, 0.5, 0.8, 1.25, 1.5, 1.8, 0, 1, 2};
    enum { T = sizeof frames / sizeof frames[0] };
    kiln_soa_xform ref[T][2]; /* the scalar path's samples */
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        const char *path = kiln_simd_name(paths[p]);
        for (int i = 0; i < T; i++) {
            kiln_soa_xform out[2];
            cr_assert_eq(sample(s.bind, frames[i] / 10.0, KILN_LOOP_CLAMP, NULL, out, 2, NULL), KILN_OK);
            if (p == 0) memcpy(ref[i], out, sizeof out);
            int f = (int)frames[i];
            double u = frames[i] - f;
            for (uint32_t j = 0; j < J; j++) {
                double len = lengths[j % 8], n = 0;
                for (unsigned c = 0; c < 10; c++)
                    cr_assert(isfinite(lane(out, j, c)), "%s frame %g joint %u (|q| %g) comp %u: %g", path, frames[i], j,
                              len, c, lane(out, j, c));
                for (unsigned c = 3; c < 7; c++) n += (double)lane(out, j, c) * lane(out, j, c);
                if (u == 0 && j < 8) {
                    for (unsigned c = 0; c < 10; c++)
                        cr_assert_eq(lane(out, j, c), v[(f * J + j) * 10 + c], "%s frame %d joint %u comp %u", path, f, j, c);
                    continue;
                }
                cr_assert_float_eq(sqrt(n), 1.0, 1e-5, "%s frame %g joint %u (|q| %g): |q| = %g", path, frames[i], j, len,
                                   sqrt(n));
                double diff = 0;
                for (unsigned c = 0; c < 10; c++) diff = fmax(diff, fabs(lane(out, j, c) - lane(ref[i], j, c)));
                cr_assert_lt(diff, 1e-5, "%s vs scalar, frame %g joint %u (|q| %g): %g", path, frames[i], j, len, diff);
                if (u == 0) continue;
                /* between frames: T and S lerp, R the normalised nlerp of the stored keys */
                double a[10], b[10], k[10], r[10], e[10], dot = 0, qn = 0;
                uint32_t modes[10];
                for (int c = 0; c < 10; c++) {
                    a[c] = v[(f * J + j) * 10 + c], b[c] = v[((f + 1) * J + j) * 10 + c];
                    modes[c] = joints[j].modes >> (2 * c) & 3u;
                    r[c] = c < 3 ? bones[j].t[c] : (c < 7 ? bones[j].r[c - 3] : bones[j].s[c - 7]);
                }
                for (int c = 3; c < 7; c++) dot += a[c] * b[c];
                for (int c = 0; c < 10; c++) {
                    double bc = c >= 3 && c < 7 && dot < 0 ? -b[c] : b[c];
                    k[c] = a[c] + u * (bc - a[c]);
                }
                for (int c = 3; c < 7; c++) qn += k[c] * k[c];
                for (int c = 3; c < 7; c++) k[c] /= sqrt(qn);
                ref_compose(modes, joints[j].ab, r, r, k, e);
                double d = joint_diff(out, j, e);
                cr_assert_lt(d, 3e-6, "%s frame %g joint %u (|q| %g): diff %g", path, frames[i], j, len, d);
            }
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    scene_free(&s);
    free(bones);
}

/* ---- modes ---------------------------------------------------------------------------------- */
static void check_modes(int with_base)
{
    enum { J = 10, F = 3 };
    char names[J][16];
    af_bone *bones = make_bones(J, "m", 11, 1, names);
    af_skel skel = {J, bones};
    float v[F * J * 10];
    af_motion(F, J, 21, 30, v);
    const uint32_t A = KILN_MODE_ABSOLUTE, R = KILN_MODE_RELATIVE, D = KILN_MODE_ADDITIVE;
    af_joint joints[J] = {
        {names[0], AF_MODES_ALL(A), {1, 1, 1}},
        {names[1], AF_MODES_ALL(R), {1, 1, 1}},
        {names[2], AF_MODES_ALL(D), {0.5f, 0.3f, 0.7f}},  /* fractional: SIMD slerp(I, k, a) */
        {names[3], AF_MODES_ALL(D), {1, 1, 1}},
        {names[4], AF_MODES_ALL(D), {2.0f, 1.5f, -0.5f}}, /* outside [0, 1]: exact fix-up */
        {names[5], AF_MODES_ALL(D), {0, 0, 0}},
        {names[6], AF_MODE(0, A), {1, 1, 1}},             /* tx only: every other channel keeps the base */
        {names[7], AF_MODE(0, R) | AF_MODE(1, R) | AF_MODE(2, R) | AF_MODE(3, D) | AF_MODE(4, D) | AF_MODE(5, D) |
                       AF_MODE(6, D) | AF_MODE(7, A) | AF_MODE(8, A) | AF_MODE(9, A),
         {1, 0.25f, 1}},
        {names[8], AF_MODE(3, R) | AF_MODE(4, R) | AF_MODE(5, R) | AF_MODE(6, R), {1, 1, 1}},
        {names[9], AF_MODE(0, A) | AF_MODE(1, R) | AF_MODE(2, D) | AF_MODE(8, R), {0.5f, 1, 1}}, /* mixed in a group */
    };
    af_clip clip = {.framerate = 30, .frame_count = F, .joint_count = J, .joints = joints, .values = v, .width = 32};
    scene s = scene_make(&skel, &clip, 1);
    cr_assert_eq(s.report.identity_map, 1);
    kiln_soa_xform base[2];
    uint32_t st = 99;
    for (uint32_t b = 0; b < 16; b++) {
        float q[4];
        random_unit(&st, q);
        for (int c = 0; c < 3; c++) set_lane(base, b, c, af_rand(&st, -1, 1)), set_lane(base, b, 7 + c, af_rand(&st, 0.5f, 2));
        for (int c = 0; c < 4; c++) set_lane(base, b, 3 + c, q[c]);
    }
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    const double u = 0.37;
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        kiln_soa_xform out[2];
        cr_assert_eq(sample(s.bind, (1 + u) / 30.0, KILN_LOOP_CLAMP, with_base ? base : NULL, out, 2, NULL), KILN_OK);
        for (uint32_t j = 0; j < J; j++) {
            double r[10], c[10], k[10], e[10];
            uint32_t modes[10];
            for (int i = 0; i < 10; i++) {
                modes[i] = joints[j].modes >> (2 * i) & 3u;
                r[i] = i < 3 ? bones[j].t[i] : (i < 7 ? bones[j].r[i - 3] : bones[j].s[i - 7]);
                c[i] = with_base ? lane(base, j, (unsigned)i) : r[i];
            }
            /* the key between rows 1 and 2 */
            double a[10], b[10];
            for (int i = 0; i < 10; i++) a[i] = v[(1 * J + j) * 10 + i], b[i] = v[(2 * J + j) * 10 + i];
            for (int i = 0; i < 10; i++) k[i] = a[i] + u * (b[i] - a[i]);
            af_slerp(a + 3, b + 3, u, k + 3);
            ref_compose(modes, joints[j].ab, r, c, k, e);
            double d = joint_diff(out, j, e);
            cr_assert_lt(d, 3e-6, "%s base=%d joint %u: diff %g", kiln_simd_name(paths[p]), with_base, j, d);
        }
        /* bones past the clip's joints keep the base: none here, but padding lanes hold identity */
        for (uint32_t b = J; b < 16; b++) {
            double id[10] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1}, e[10];
            for (int i = 0; i < 10; i++) e[i] = with_base ? lane(base, b, (unsigned)i) : id[i];
            cr_assert_lt(joint_diff(out, b, e), 1e-7, "padding lane %u", b);
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    scene_free(&s);
    free(bones);
}

Test(sample, modes_follow_the_d5_table_over_the_rest_pose) { check_modes(0); }
Test(sample, modes_follow_the_d5_table_over_a_base_pose) { check_modes(1); }

Test(sample, bones_without_a_track_keep_the_rest_or_the_base)
{
    char names[12][16];
    af_bone *bones = make_bones(12, "k", 5, 1, names);
    af_skel skel = {12, bones};
    float v[2 * 2 * 10];
    af_motion(2, 2, 3, 30, v);
    /* the clip drives bones 0 and 1 only; bones 2..11 (second block included) keep rest/base */
    af_joint joints[2] = {{names[0], AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}},
                          {names[1], AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}}};
    af_clip clip = {.framerate = 30, .frame_count = 2, .joint_count = 2, .joints = joints, .values = v, .width = 32};
    scene s = scene_make(&skel, &clip, 1);
    kiln_soa_xform base[2], out[2];
    uint32_t st = 4;
    for (uint32_t b = 0; b < 16; b++)
        for (unsigned c = 0; c < 10; c++) set_lane(base, b, c, af_rand(&st, 0.5f, 1.0f));
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        for (int wb = 0; wb < 2; wb++) {
            sample(s.bind, 0.01, KILN_LOOP_CLAMP, wb ? base : NULL, out, 2, NULL);
            for (uint32_t b = 2; b < 12; b++)
                for (unsigned c = 0; c < 10; c++) {
                    float rest = c < 3 ? bones[b].t[c] : (c < 7 ? bones[b].r[c - 3] : bones[b].s[c - 7]);
                    cr_assert_eq(lane(out, b, c), wb ? lane(base, b, c) : rest, "bone %u comp %u", b, c);
                }
        }
        /* out == base: layering in place */
        kiln_soa_xform inplace[2];
        memcpy(inplace, base, sizeof base);
        sample(s.bind, 0.01, KILN_LOOP_CLAMP, inplace, inplace, 2, NULL);
        sample(s.bind, 0.01, KILN_LOOP_CLAMP, base, out, 2, NULL);
        cr_assert(memcmp(inplace, out, sizeof out) == 0, "sampling onto the base in place differs");
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    scene_free(&s);
    free(bones);
}

/* ---- time ------------------------------------------------------------------------------------ */
/* One joint whose tx is 10 * row (rows 0..3 at frames 2..5, 10 fps), so tx reads the row. */
static scene row_scene(uint32_t flags)
{
    static af_bone bone = {"r", -1, {0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}, 0};
    static af_skel skel = {1, &bone};
    static float v[4 * 10];
    for (int f = 0; f < 4; f++) {
        memset(v + f * 10, 0, 10 * sizeof(float));
        v[f * 10] = 10.0f * (float)f;
        v[f * 10 + 6] = v[f * 10 + 7] = v[f * 10 + 8] = v[f * 10 + 9] = 1;
    }
    static af_joint j = {"r", AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}};
    af_clip clip = {.framerate = 10, .flags = flags, .first_frame = 2, .frame_count = 4, .joint_count = 1,
                    .joints = &j, .values = v, .width = 32};
    return scene_make(&skel, &clip, 1);
}

static float tx_at(const scene *s, double t, kiln_loop loop)
{
    kiln_soa_xform out[1];
    cr_assert_eq(sample(s->bind, t, loop, NULL, out, 1, NULL), KILN_OK);
    for (unsigned c = 0; c < 10; c++) cr_assert(isfinite(lane(out, 0, c)), "t=%g comp %u not finite", t, c);
    return out[0].tx[0];
}

Test(sample, time_clamps_to_the_first_and_last_frame)
{
    scene s = row_scene(0);
    cr_assert_float_eq(tx_at(&s, 0.0, KILN_LOOP_CLAMP), 0.0f, 1e-6);   /* before frame 2 */
    cr_assert_float_eq(tx_at(&s, 0.2, KILN_LOOP_CLAMP), 0.0f, 1e-6);   /* frame 2 = row 0 */
    cr_assert_float_eq(tx_at(&s, 0.35, KILN_LOOP_CLAMP), 15.0f, 1e-4); /* frame 3.5 */
    cr_assert_float_eq(tx_at(&s, 0.5, KILN_LOOP_CLAMP), 30.0f, 1e-6);  /* last frame */
    cr_assert_float_eq(tx_at(&s, 9.0, KILN_LOOP_CLAMP), 30.0f, 1e-6);
    cr_assert_float_eq(tx_at(&s, -3.0, KILN_LOOP_CLAMP), 0.0f, 1e-6);
    cr_assert_float_eq(tx_at(&s, 9.0, KILN_LOOP_CLIP), 30.0f, 1e-6); /* not authored looping: clamps */
    /* frames 2..5 at 10 fps: the clip plays from 0.2 s for 0.3 s */
    cr_assert_float_eq(kiln_anim_duration(s.blob, 0), 0.3, 1e-12);
    cr_assert_float_eq(kiln_anim_start_time(s.blob, 0), 0.2, 1e-12);
    scene_free(&s);
}

Test(sample, looping_wraps_into_first_last)
{
    scene s = row_scene(KILN_ANIM_LOOPING);
    /* period 3 frames (0.3 s); frame 5 (the last) is frame 2 again */
    cr_assert_float_eq(tx_at(&s, 0.5, KILN_LOOP_CLIP), 0.0f, 1e-5);
    cr_assert_float_eq(tx_at(&s, 0.55, KILN_LOOP_CLIP), 5.0f, 1e-4);  /* frame 5.5 -> 2.5 */
    cr_assert_float_eq(tx_at(&s, 0.1, KILN_LOOP_WRAP), 20.0f, 1e-4);  /* frame 1 -> 4 (row 2) */
    cr_assert_float_eq(tx_at(&s, -0.05, KILN_LOOP_WRAP), 5.0f, 1e-4); /* frame -0.5 -> 2.5 */
    cr_assert_float_eq(tx_at(&s, 0.49, KILN_LOOP_WRAP), 29.0f, 1e-3); /* interpolates to the last row */
    cr_assert_float_eq(tx_at(&s, 0.5 + 3 * 100.0, KILN_LOOP_WRAP), 0.0f, 1e-3);
    cr_assert_float_eq(tx_at(&s, 9.0, KILN_LOOP_CLAMP), 30.0f, 1e-6); /* clamp overrides the clip's flag */
    /* the duration is the wrap period: a time and that time plus the duration sample alike */
    double d = kiln_anim_duration(s.blob, 0);
    cr_assert_float_eq(d, 0.3, 1e-12);
    for (int k = 0; k < 6; k++) {
        double t = 0.2 + 0.05 * k;
        cr_assert_float_eq(tx_at(&s, t + d, KILN_LOOP_WRAP), tx_at(&s, t, KILN_LOOP_WRAP), 1e-3, "t %g", t);
    }
    scene_free(&s);
}

Test(sample, nan_infinite_huge_and_negative_times_are_safe)
{
    for (int looping = 0; looping < 2; looping++) {
        scene s = row_scene(looping ? KILN_ANIM_LOOPING : 0);
        kiln_simd paths[AF_PATH_COUNT];
        int np = af_paths(paths);
        for (int p = 0; p < np; p++) {
            kiln_simd_force(paths[p]);
            const kiln_loop loops[3] = {KILN_LOOP_CLIP, KILN_LOOP_CLAMP, KILN_LOOP_WRAP};
            for (int l = 0; l < 3; l++) {
                cr_assert_float_eq(tx_at(&s, NAN, loops[l]), 0.0f, 1e-6);
                cr_assert_float_eq(tx_at(&s, INFINITY, loops[l]), 30.0f, 1e-6);
                cr_assert_float_eq(tx_at(&s, -INFINITY, loops[l]), 0.0f, 1e-6);
                const double odd[] = {1e30, -1e30, 1.7e308, -1.7e308, 4e9, -4e9, -1e-300, 5e-324};
                for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
                    float x = tx_at(&s, odd[i], loops[l]);
                    cr_assert(x >= 0.0f && x <= 30.0f, "t=%g gives %g", odd[i], x);
                }
            }
            cr_assert_float_eq(tx_at(&s, 1e30, KILN_LOOP_CLAMP), 30.0f, 1e-6);
            cr_assert_float_eq(tx_at(&s, -1e30, KILN_LOOP_CLAMP), 0.0f, 1e-6);
        }
        kiln_simd_force(KILN_SIMD_AUTO);
        scene_free(&s);
    }
}

/* ---- lossy ----------------------------------------------------------------------------------- */
Test(sample, lossy_tracks_decode_as_min_plus_extent_q_over_2w_minus_1)
{
    const uint32_t widths[] = {8, 12, 16, 24, 1, 5, 10, 14, 19, 20};
    enum { J = 10, F = 6 };
    char names[J][16];
    af_bone *bones = make_bones(J, "q", 8, 1, names);
    af_skel skel = {J, bones};
    float v[F * J * 10];
    af_motion(F, J, 31, 30, v);
    for (size_t i = 0; i < (size_t)F * J; i++)
        if (v[i * 10 + 6] < 0)
            for (int c = 3; c < 7; c++) v[i * 10 + c] = -v[i * 10 + c]; /* the baker's qw >= 0 */
    af_joint joints[J];
    for (int j = 0; j < J; j++) joints[j] = (af_joint){names[j], AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}};
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        af_clip clip = {.framerate = 30, .frame_count = F, .joint_count = J, .joints = joints, .values = v,
                        .width = widths[w]};
        scene s = scene_make(&skel, &clip, 1);
        const double maxq = (double)((1u << widths[w]) - 1u);
        for (int p = 0; p < np; p++) {
            kiln_simd_force(paths[p]);
            for (int f = 0; f < F; f++) {
                kiln_soa_xform out[2];
                sample(s.bind, f / 30.0, KILN_LOOP_CLAMP, NULL, out, 2, NULL);
                for (uint32_t j = 0; j < J; j++) {
                    double e[10];
                    for (int c = 0; c < 10; c++) {
                        if (c == 6) continue;
                        float lo = v[j * 10 + c], hi = lo;
                        for (int g = 1; g < F; g++) {
                            float x = v[(g * J + j) * 10 + c];
                            lo = x < lo ? x : lo, hi = x > hi ? x : hi;
                        }
                        double ext = (double)(hi - lo);
                        double q = ext > 0 ? (double)lround((v[(f * J + j) * 10 + c] - lo) / ext * maxq) : 0;
                        e[c] = lo + ext * q / maxq; /* the format's formula, in double */
                        if (c < 3 || c >= 7) {
                            double tol = 3e-7 * (fabs(lo) + fabs(ext)) + 1e-7;
                            cr_assert(fabs(lane(out, j, (unsigned)c) - e[c]) <= tol,
                                      "%s w=%u frame %d joint %u comp %d: %.9g vs %.9g", kiln_simd_name(paths[p]),
                                      widths[w], f, j, c, lane(out, j, (unsigned)c), e[c]);
                        }
                    }
                    /* qw rebuilt, then the rotation normalised */
                    double w2 = 1 - e[3] * e[3] - e[4] * e[4] - e[5] * e[5], n = 0;
                    e[6] = sqrt(w2 > 0 ? w2 : 0);
                    for (int c = 3; c < 7; c++) n += e[c] * e[c];
                    for (int c = 3; c < 7; c++) {
                        double x = e[c] / sqrt(n);
                        cr_assert(fabs(lane(out, j, (unsigned)c) - x) <= 2e-6, "%s w=%u rot comp %d: %.9g vs %.9g",
                                  kiln_simd_name(paths[p]), widths[w], c, lane(out, j, (unsigned)c), x);
                    }
                }
            }
        }
        scene_free(&s);
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    free(bones);
}

/* ---- binding ---------------------------------------------------------------------------------- */
Test(bind, matches_names_exactly_then_case_insensitively_then_sanitized)
{
    af_bone bones[7] = {{"Root", -1, {0}, {0, 0, 0, 1}, {1, 1, 1}, 0},  {"Spine", 0, {0}, {0, 0, 0, 1}, {1, 1, 1}, 0},
                        {"arm.L", 1, {0}, {0, 0, 0, 1}, {1, 1, 1}, 0},  {"Hand_R", 1, {0}, {0, 0, 0, 1}, {1, 1, 1}, 0},
                        {"dup", 1, {0}, {0, 0, 0, 1}, {1, 1, 1}, 0},    {"dup", 1, {0}, {0, 0, 0, 1}, {1, 1, 1}, 0},
                        {"extra", 1, {0}, {0, 0, 0, 1}, {1, 1, 1}, 0}};
    af_skel skel = {7, bones};
    const char *jn[7] = {"Root", "spine", "ARM_l", "Hand R", "dup", "missing1", "missing2"};
    af_joint joints[7];
    float v[2 * 7 * 10];
    for (int f = 0; f < 2; f++)
        for (int j = 0; j < 7; j++) {
            float *x = v + (f * 7 + j) * 10;
            memset(x, 0, 40);
            x[0] = 100.0f + (float)j;
            x[6] = x[7] = x[8] = x[9] = 1;
        }
    for (int j = 0; j < 7; j++) joints[j] = (af_joint){jn[j], AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}};
    af_clip clip = {.framerate = 30, .frame_count = 2, .joint_count = 7, .joints = joints, .values = v, .width = 32};
    scene s = scene_make(&skel, &clip, 1);
    cr_assert_eq(s.report.bound_joints, 5);
    cr_assert_eq(s.report.missing_joints, 2);
    cr_assert_eq(s.report.first_missing, 5);
    cr_assert_eq(s.report.inexact_matches, 3);
    cr_assert_eq(s.report.duplicate_joints, 0);
    cr_assert_eq(s.report.identity_map, 1, "slot j drives bone j (or nothing) for every j");
    kiln_soa_xform out[1];
    sample(s.bind, 0, KILN_LOOP_CLAMP, NULL, out, 1, NULL);
    for (uint32_t b = 0; b < 5; b++) cr_assert_eq(out[0].tx[b], 100.0f + (float)b, "bone %u", b);
    cr_assert_eq(out[0].tx[5], 0.0f, "second 'dup' bone is not bound"); /* curves bind to the first */
    cr_assert_eq(out[0].tx[6], 0.0f, "unbound bone keeps its rest");
    scene_free(&s);
}

Test(bind, reordered_slots_scatter_into_bone_order)
{
    enum { J = 19 };
    char names[J][16];
    af_bone *bones = make_bones(J, "s", 12, 1, names);
    af_skel skel = {J, bones};
    /* the clip lists the bones in reverse, with one unknown name and one bone left out */
    af_joint joints[J];
    float v[2 * J * 10];
    af_motion(2, J, 6, 30, v);
    for (int j = 0; j < J; j++) {
        int b = J - 1 - j;
        joints[j] = (af_joint){j == 4 ? "nobody" : names[b], AF_MODES_ALL(KILN_MODE_RELATIVE), {1, 1, 1}};
    }
    af_clip clip = {.framerate = 30, .frame_count = 2, .joint_count = J, .joints = joints, .values = v, .width = 32};
    scene s = scene_make(&skel, &clip, 1);
    cr_assert_eq(s.report.identity_map, 0);
    cr_assert_eq(s.report.missing_joints, 1);
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        kiln_soa_xform out[3];
        sample(s.bind, 0, KILN_LOOP_CLAMP, NULL, out, 3, NULL);
        for (int j = 0; j < J; j++) {
            uint32_t b = (uint32_t)(J - 1 - j);
            double r[10], k[10], e[10];
            uint32_t modes[10];
            for (int i = 0; i < 10; i++) {
                modes[i] = j == 4 ? KILN_MODE_NONE : KILN_MODE_RELATIVE;
                r[i] = i < 3 ? bones[b].t[i] : (i < 7 ? bones[b].r[i - 3] : bones[b].s[i - 7]);
                k[i] = v[j * 10 + i];
            }
            float ab[3] = {1, 1, 1};
            ref_compose(modes, ab, r, r, k, e);
            cr_assert_lt(joint_diff(out, b, e), 2e-6, "%s slot %d -> bone %u", kiln_simd_name(paths[p]), j, b);
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    scene_free(&s);
    free(bones);
}

Test(bind, duplicate_slots_keep_the_better_match)
{
    af_bone bones[2] = {{"Root", -1, {0}, {0, 0, 0, 1}, {1, 1, 1}, 0}, {"Spine", 0, {0}, {0, 0, 0, 1}, {1, 1, 1}, 0}};
    af_skel skel = {2, bones};
    const char *jn[3] = {"Spine", "Root", "spine"};
    af_joint joints[3];
    float v[1 * 3 * 10] = {0};
    for (int j = 0; j < 3; j++) {
        joints[j] = (af_joint){jn[j], AF_MODE(0, KILN_MODE_ABSOLUTE), {1, 1, 1}};
        v[j * 10] = (float)(j + 1);
    }
    af_clip clip = {.framerate = 30, .frame_count = 1, .joint_count = 3, .joints = joints, .values = v, .width = 32};
    scene s = scene_make(&skel, &clip, 1);
    cr_assert_eq(s.report.bound_joints, 2);
    cr_assert_eq(s.report.duplicate_joints, 1);
    kiln_soa_xform out[1];
    sample(s.bind, 0, KILN_LOOP_CLAMP, NULL, out, 1, NULL);
    cr_assert_eq(out[0].tx[1], 1.0f, "the exact match 'Spine' wins over the later 'spine'");
    cr_assert_eq(out[0].tx[0], 2.0f);
    scene_free(&s);
}

Test(bind, overrides_resolve_nearest_ancestor_self_included_ties_by_file_order)
{
    /* root -> hips -> spine -> head; hips -> leg */
    af_bone bones[5] = {{"root", -1, {0.1f, 0.2f, 0.3f}, {0, 0, 0.3826834f, 0.9238795f}, {1.5f, 1, 1}, 0},
                        {"hips", 0, {0.4f, 0.5f, 0.6f}, {0.3826834f, 0, 0, 0.9238795f}, {1, 2, 1}, 0},
                        {"spine", 1, {0.7f, 0.8f, 0.9f}, {0, 0.3826834f, 0, 0.9238795f}, {1, 1, 0.5f}, 0},
                        {"head", 2, {1.0f, 1.1f, 1.2f}, {0, 0, 0.3826834f, 0.9238795f}, {2, 1, 1}, 0},
                        {"leg", 1, {1.3f, 1.4f, 1.5f}, {0.3826834f, 0, 0, 0.9238795f}, {1, 1, 3}, 0}};
    af_skel skel = {5, bones};
    const char *jn[5] = {"root", "hips", "spine", "head", "leg"};
    af_joint joints[5];
    float v[2 * 5 * 10];
    af_motion(2, 5, 17, 30, v);
    for (int j = 0; j < 5; j++) joints[j] = (af_joint){jn[j], AF_MODES_ALL(KILN_MODE_RELATIVE), {0.5f, 0.5f, 0.5f}};
    /* records out of file order on purpose: `order` decides ties */
    af_override ov[4] = {{"spine", KILN_MODE_ADDITIVE, 1u, 2},         /* loses to the ABSOLUTE one (order 1) */
                         {"hips", KILN_MODE_ADDITIVE, 1u, 0},
                         {"spine", KILN_MODE_ABSOLUTE, 1u | 2u, 1},
                         {"head", KILN_MODE_ABSOLUTE, 4u, 3}};
    af_clip clip = {.framerate = 30, .frame_count = 2, .joint_count = 5, .joints = joints, .values = v, .width = 32,
                    .override_count = 4, .overrides = ov};
    scene s = scene_make(&skel, &clip, 1);
    const uint32_t A = KILN_MODE_ABSOLUTE, R = KILN_MODE_RELATIVE, D = KILN_MODE_ADDITIVE;
    /* expected (T, R, S) per bone */
    const uint32_t expect[5][3] = {{R, R, R}, {D, R, R}, {A, A, R}, {A, A, A}, {D, R, R}};
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        kiln_soa_xform out[1];
        sample(s.bind, 0, KILN_LOOP_CLAMP, NULL, out, 1, NULL);
        for (uint32_t b = 0; b < 5; b++) {
            uint32_t modes[10];
            double r[10], k[10], e[10];
            for (int i = 0; i < 10; i++) {
                modes[i] = expect[b][i < 3 ? 0 : (i < 7 ? 1 : 2)];
                r[i] = i < 3 ? bones[b].t[i] : (i < 7 ? bones[b].r[i - 3] : bones[b].s[i - 7]);
                k[i] = v[b * 10 + i];
            }
            ref_compose(modes, joints[b].ab, r, r, k, e);
            cr_assert_lt(joint_diff(out, b, e), 2e-6, "%s bone %u (%s)", kiln_simd_name(paths[p]), b, jn[b]);
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    scene_free(&s);
}

/* ---- scalars ---------------------------------------------------------------------------------- */
Test(sample, blend_shape_weights_interpolate_and_visibility_steps)
{
    af_bone bone = {"r", -1, {0}, {0, 0, 0, 1}, {1, 1, 1}, 0};
    af_skel skel = {1, &bone};
    float v[4 * 10] = {0};
    af_joint j = {"r", 0, {1, 1, 1}};
    const char *sn[2] = {"smile", "hat"};
    const uint32_t sk[2] = {KILN_SCALAR_BLEND_SHAPE, KILN_SCALAR_VISIBILITY};
    const float sv[2 * 4] = {0, 1, 0.5f, 0.25f, 1, 0, 0, 1};
    af_clip clip = {.framerate = 10, .frame_count = 4, .joint_count = 1, .joints = &j, .values = v, .width = 32,
                    .scalar_count = 2, .scalar_names = sn, .scalar_kinds = sk, .scalar_values = sv};
    scene s = scene_make(&skel, &clip, 1);
    float out_s[3] = {-1, -1, -1};
    kiln_soa_xform out[1];
    kiln_sample_desc d = {0};
    d.binding = s.bind, d.out = out, d.out_count = 1, d.scalars = out_s, d.scalar_count = 3;
    d.time_s = 0.15;
    cr_assert_eq(kiln_sample(&d), KILN_OK);
    cr_assert_float_eq(out_s[0], 0.75f, 1e-6);
    cr_assert_eq(out_s[1], 0.0f);
    cr_assert_eq(out_s[2], -1.0f, "capacity past the clip's scalars is left alone");
    d.time_s = 0.2999;
    kiln_sample(&d);
    cr_assert_eq(out_s[1], 0.0f, "step: the frame at or before t");
    d.time_s = 0.3;
    kiln_sample(&d);
    cr_assert_eq(out_s[1], 1.0f);
    cr_assert_float_eq(out_s[0], 0.25f, 1e-6);
    d.scalar_count = 1;
    out_s[1] = -1;
    kiln_sample(&d);
    cr_assert_eq(out_s[1], -1.0f);
    scene_free(&s);
}

/* ---- context ---------------------------------------------------------------------------------- */
static void check_context_modes(uint32_t width, int scramble, int reorder, int absolute)
{
    enum { J = 37, F = 61 };
    char names[J][16];
    af_bone *bones = make_bones(J, "c", 14, 1, names);
    af_skel skel = {J, bones};
    float *v = malloc(sizeof(float) * F * J * 10);
    af_motion(F, J, 41, 30, v);
    af_joint joints[J];
    for (int j = 0; j < J; j++)
        joints[j] = (af_joint){names[reorder ? J - 1 - j : j],
                               AF_MODES_ALL(j % 3 == 0 && !absolute ? KILN_MODE_RELATIVE : KILN_MODE_ABSOLUTE), {1, 1, 1}};
    af_clip clip = {.framerate = 30, .frame_count = F, .joint_count = J, .joints = joints, .values = v, .width = width,
                    .scramble_rows = scramble};
    scene s = scene_make(&skel, &clip, 1);
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        void *ctx = af_context(s.bind);
        cr_assert_not_null(ctx);
        kiln_soa_xform a[5], b[5];
        uint32_t st = 3;
        for (int i = 0; i < 200; i++) {
            /* forward at 60 Hz, then random jumps and backwards steps */
            double t = i < 140 ? i / 60.0 : af_rand(&st, -0.5f, 2.5f);
            cr_assert_eq(sample(s.bind, t, KILN_LOOP_CLIP, NULL, a, 5, ctx), KILN_OK);
            cr_assert_eq(sample(s.bind, t, KILN_LOOP_CLIP, NULL, b, 5, NULL), KILN_OK);
            cr_assert(memcmp(a, b, sizeof a) == 0, "%s w=%u t=%g: context and no-context samples differ",
                      kiln_simd_name(paths[p]), width, t);
        }
        free(ctx);
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    scene_free(&s);
    free(v);
    free(bones);
}

static void check_context(uint32_t width, int scramble, int reorder) { check_context_modes(width, scramble, reorder, 0); }

Test(context, forward_playback_equals_sampling_without_context_lossless) { check_context(32, 0, 0); }
Test(context, forward_playback_equals_sampling_without_context_lossy16) { check_context(16, 0, 0); }
Test(context, forward_playback_equals_sampling_without_context_lossy12_scrambled) { check_context(12, 1, 1); }
Test(context, forward_playback_equals_sampling_without_context_lossy8_24) {
    check_context(8, 1, 0);
    check_context(24, 0, 1);
}

/* Every block absolute: forward steps decode the new row inside the sampling pass (packed
 * blocks of up to 16 bits and wider), the other calls interpolate the context's rows. */
Test(context, forward_playback_equals_sampling_without_context_lossy_absolute)
{
    check_context_modes(16, 0, 0, 1);
    check_context_modes(11, 0, 0, 1);
    check_context_modes(20, 0, 0, 1);
    check_context_modes(13, 1, 0, 1);
    check_context_modes(9, 0, 1, 1);
}

Test(context, follows_a_new_binding_and_rejects_one_too_large)
{
    enum { J = 9, F = 4 };
    char names[J][16];
    af_bone *bones = make_bones(J, "n", 2, 1, names);
    af_skel skel = {J, bones};
    float v[F * J * 10];
    af_motion(F, J, 1, 30, v);
    af_joint joints[J];
    for (int j = 0; j < J; j++) joints[j] = (af_joint){names[j], AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}};
    /* both clips' rows are cached by the context: its size follows the block count */
    af_clip clips[2] = {{.framerate = 30, .frame_count = F, .joint_count = J, .joints = joints, .values = v, .width = 12},
                        {.framerate = 30, .frame_count = 2, .joint_count = 1, .joints = joints, .values = v, .width = 8}};
    size_t size;
    unsigned char *mem = af_build(&skel, clips, 2, &size);
    const kiln_blob *blob = af_load(mem, size);
    kiln_anim_binding *big = af_bind(blob, 0, blob, 0, NULL), *small = af_bind(blob, 1, blob, 0, NULL);
    cr_assert(big && small);
    void *ctx = af_context(small);
    kiln_soa_xform a[2], b[2];
    cr_assert_eq(sample(small, 0.01, KILN_LOOP_CLAMP, NULL, a, 2, ctx), KILN_OK);
    cr_assert_eq(sample(big, 0.01, KILN_LOOP_CLAMP, NULL, a, 2, ctx), KILN_ERR_BUFFER_TOO_SMALL);
    free(ctx);
    ctx = af_context(big);
    cr_assert_eq(sample(small, 0.02, KILN_LOOP_CLAMP, NULL, a, 2, ctx), KILN_OK);
    cr_assert_eq(sample(big, 0.05, KILN_LOOP_CLAMP, NULL, a, 2, ctx), KILN_OK);
    cr_assert_eq(sample(big, 0.05, KILN_LOOP_CLAMP, NULL, b, 2, NULL), KILN_OK);
    cr_assert(memcmp(a, b, sizeof a) == 0);
    memset(ctx, 0, 8); /* damaged */
    cr_assert_eq(sample(big, 0.05, KILN_LOOP_CLAMP, NULL, a, 2, ctx), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_sample_context_init(ctx, 10, big), KILN_ERR_BUFFER_TOO_SMALL);
    free(ctx);
    free(big), free(small), free(mem), free(bones);
}

/* ---- argument checks ---------------------------------------------------------------------------- */
/* The scene of the argument checks: nine bones (two blocks), every channel keyed over two frames. */
static scene two_block_scene(char names[9][16], af_bone **bones)
{
    *bones = make_bones(9, "e", 2, 1, names);
    af_skel skel = {9, *bones};
    float v[2 * 9 * 10];
    af_motion(2, 9, 2, 30, v);
    af_joint joints[9];
    for (int j = 0; j < 9; j++) joints[j] = (af_joint){names[j], AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}};
    af_clip clip = {.framerate = 30, .frame_count = 2, .joint_count = 9, .joints = joints, .values = v, .width = 32};
    return scene_make(&skel, &clip, 1);
}

/* Several bad arguments at once: the first in the documented order is the one reported. */
Test(sample, reports_the_first_bad_argument)
{
    char names[9][16];
    af_bone *bones;
    scene s = two_block_scene(names, &bones);
    kiln_soa_xform out[2];
    kiln_sample_desc d;
    memset(&d, 0, sizeof d);
    d.out_count = 1, d.scalar_count = 3; /* no binding, no out, out_count short, scalars NULL */
    cr_assert_eq(kiln_sample(&d), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_str_eq(kiln_error_detail()->path, "kiln_sample: desc->binding");
    d.binding = s.bind;
    cr_assert_eq(kiln_sample(&d), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_str_eq(kiln_error_detail()->path, "kiln_sample: desc->out");
    d.out = out;
    cr_assert_eq(kiln_sample(&d), KILN_ERR_BUFFER_TOO_SMALL);
    cr_assert_str_eq(kiln_error_detail()->path, "kiln_sample: desc->out_count");
    cr_assert_str_eq(kiln_error_detail()->message, "out_count 1 is below the binding's soa_count 2");
    d.out_count = 2;
    cr_assert_eq(kiln_sample(&d), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_str_eq(kiln_error_detail()->path, "kiln_sample: desc->scalars");
    cr_assert_str_eq(kiln_error_detail()->message, "scalars is NULL with scalar_count 3");
    d.scalar_count = 0;
    cr_assert_eq(kiln_sample(&d), KILN_OK);
    scene_free(&s);
    free(bones);
}

Test(sample, rejects_short_outputs_and_bad_arguments)
{
    char names[9][16];
    af_bone *bones;
    scene s = two_block_scene(names, &bones);
    kiln_soa_xform out[2];
    cr_assert_eq(kiln_anim_binding_soa_count(s.bind), 2);
    cr_assert_eq(sample(s.bind, 0, KILN_LOOP_CLAMP, NULL, out, 1, NULL), KILN_ERR_BUFFER_TOO_SMALL);
    cr_assert_eq(sample(NULL, 0, KILN_LOOP_CLAMP, NULL, out, 2, NULL), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(sample(s.bind, 0, KILN_LOOP_CLAMP, NULL, NULL, 2, NULL), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_sample(NULL), KILN_ERR_INVALID_ARGUMENT);
    size_t need = kiln_anim_binding_size(s.blob, 0, s.blob, 0);
    void *mem = aligned_alloc(64, (need + 63) & ~(size_t)63);
    kiln_anim_binding *b;
    cr_assert_eq(kiln_anim_bind(s.blob, 0, s.blob, 0, mem, need - 1, &b, NULL), KILN_ERR_BUFFER_TOO_SMALL);
    cr_assert_eq(kiln_anim_bind(s.blob, 1, s.blob, 0, mem, need, &b, NULL), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_anim_bind(s.blob, 0, s.blob, 1, mem, need, &b, NULL), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_anim_bind(s.blob, 0, s.blob, 0, (char *)mem + 4, need, &b, NULL), KILN_ERR_BLOB_MISALIGNED);
    cr_assert_str_eq(kiln_error_detail()->path, "kiln_anim_bind: mem");
    cr_assert_null(b);
    cr_assert_eq(kiln_anim_binding_size(s.blob, 3, s.blob, 0), 0);
    free(mem);
    scene_free(&s);
    free(bones);
}

/* ---- SIMD agreement ------------------------------------------------------------------------------ */
static void check_agreement(uint32_t J, uint32_t width, int reorder, uint32_t seed)
{
    enum { F = 24 };
    char(*names)[16] = malloc(sizeof(*names) * J);
    af_bone *bones = make_bones(J, "g", seed, 0, names);
    for (uint32_t i = 1; i < J; i++) bones[i].parent = (int32_t)((i - 1) / 2); /* a binary tree */
    af_skel skel = {J, bones};
    float *v = malloc(sizeof(float) * F * J * 10);
    af_motion(F, J, seed + 1, 30, v);
    af_joint *joints = malloc(sizeof *joints * J);
    uint32_t st = seed;
    for (uint32_t j = 0; j < J; j++) {
        uint32_t modes = 0;
        for (int g = 0; g < 3; g++) {
            uint32_t m = af_lcg(&st) % 4;
            const int first[3] = {0, 3, 7}, count[3] = {3, 4, 3};
            for (int c = first[g]; c < first[g] + count[g]; c++)
                modes |= AF_MODE(c, (g == 1 || af_lcg(&st) % 4) ? m : 0); /* some lone components */
        }
        float ab[3] = {af_rand(&st, -0.5f, 1.5f), af_rand(&st, -0.5f, 1.5f), af_rand(&st, -0.5f, 1.5f)};
        if (af_lcg(&st) % 2) ab[1] = af_rand(&st, 0.0f, 1.0f);
        joints[j] = (af_joint){names[reorder ? (j * 7) % J : j], modes, {ab[0], ab[1], ab[2]}};
    }
    af_clip clip = {.framerate = 30, .frame_count = F, .joint_count = J, .joints = joints, .values = v, .width = width,
                    .scramble_rows = (int)(seed & 1)};
    scene s = scene_make(&skel, &clip, 1);
    uint32_t soa = (J + 7) / 8;
    kiln_soa_xform *ref = malloc(sizeof *ref * soa), *out = malloc(sizeof *out * soa), *base = malloc(sizeof *base * soa);
    for (uint32_t b = 0; b < J; b++) {
        float q[4];
        random_unit(&st, q);
        for (int c = 0; c < 3; c++) set_lane(base, b, c, af_rand(&st, -1, 1)), set_lane(base, b, 7 + c, af_rand(&st, 0.5f, 2));
        for (int c = 0; c < 4; c++) set_lane(base, b, 3 + c, q[c]);
    }
    for (uint32_t b = J; b < soa * 8; b++)
        for (unsigned c = 0; c < 10; c++) set_lane(base, b, c, c >= 6 ? 1.0f : 0.0f);
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    double worst = 0;
    for (int i = 0; i < 40; i++) {
        double t = af_rand(&st, -0.1f, (F + 1) / 30.0f);
        const kiln_soa_xform *bp = i % 2 ? base : NULL;
        kiln_simd_force(KILN_SIMD_SCALAR);
        sample(s.bind, t, KILN_LOOP_CLAMP, bp, ref, soa, NULL);
        for (int p = 1; p < np; p++) {
            kiln_simd_force(paths[p]);
            sample(s.bind, t, KILN_LOOP_CLAMP, bp, out, soa, NULL);
            for (uint32_t b = 0; b < J; b++) {
                double e[10];
                for (unsigned c = 0; c < 10; c++) e[c] = lane(ref, b, c);
                double d = joint_diff(out, b, e);
                worst = fmax(worst, d);
                cr_assert_lt(d, 1e-5, "%s J=%u w=%u t=%g bone %u: %g", kiln_simd_name(paths[p]), J, width, t, b, d);
            }
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    free(ref), free(out), free(base), free(joints), free(v), free(bones), free(names);
    scene_free(&s);
}

Test(simd, paths_agree_on_random_clips_of_20_80_200_joints)
{
    const uint32_t sizes[3] = {20, 80, 200};
    for (int i = 0; i < 3; i++) {
        check_agreement(sizes[i], 32, 0, 100 + (uint32_t)i);
        check_agreement(sizes[i], 16, 0, 200 + (uint32_t)i);
        check_agreement(sizes[i], 12, 1, 301 + (uint32_t)i);
        check_agreement(sizes[i], 32, 1, 401 + (uint32_t)i);
    }
}

/* ---- verification -------------------------------------------------------------------------------- */
Test(verify, rejects_damaged_clip_records_and_data)
{
    char names[9][16];
    af_bone *bones = make_bones(9, "v", 2, 1, names);
    af_skel skel = {9, bones};
    float v[3 * 9 * 10];
    af_motion(3, 9, 2, 30, v);
    af_joint joints[9];
    for (int j = 0; j < 9; j++) joints[j] = (af_joint){names[j], AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}};
    const char *en[2] = {"step", "step"};
    const int64_t ef[2] = {0, 2};
    af_clip clip = {.framerate = 30, .frame_count = 3, .joint_count = 9, .joints = joints, .values = v, .width = 32,
                    .event_count = 2, .event_names = en, .event_frames = ef};
    size_t size;
    unsigned char *good = af_build(&skel, &clip, 1, &size);
    cr_assert_eq(kiln__verify_animation(good, size, NULL), KILN_OK);
    const kiln_blob *blob = af_load(good, size);
    cr_assert_not_null(blob);
    uint32_t n;
    const kiln_blob_animation *a = kiln_blob_animations(blob, &n);
    cr_assert_eq(n, 1);
    size_t anim_off = (size_t)((const unsigned char *)a - good);
    const kiln_blob_anim_event *ev = kiln_blob_anim_events(blob, &n);
    size_t ev_off = (size_t)((const unsigned char *)ev - good);
    uint64_t rows = ((a->data_offset + a->block_count * 320u + a->animated_count * 72u) + 15u) & ~(uint64_t)15u;
    uint64_t tracks = a->data_offset + a->block_count * 320u;

    struct {
        const char *what;
        size_t at;
        uint32_t value;
        int as_float;
        kiln_result code;
    } cases[] = {
        {"framerate 0", anim_off + offsetof(kiln_blob_animation, framerate), 0, 1, KILN_ERR_BLOB_BAD_RECORD},
        {"frame_count", anim_off + offsetof(kiln_blob_animation, frame_count), 4, 0, KILN_ERR_BLOB_BAD_RECORD},
        {"row_stride", anim_off + offsetof(kiln_blob_animation, row_stride), 8, 0, KILN_ERR_BLOB_BAD_RECORD},
        {"block_count", anim_off + offsetof(kiln_blob_animation, block_count), 3, 0, KILN_ERR_BLOB_BAD_RECORD},
        {"flags", anim_off + offsetof(kiln_blob_animation, flags), 8, 0, KILN_ERR_BLOB_BAD_RECORD},
        {"joint range", anim_off + offsetof(kiln_blob_animation, first_joint), 5, 0, KILN_ERR_BLOB_BAD_RECORD},
        {"data size", anim_off + offsetof(kiln_blob_animation, data_size), 64, 0, KILN_ERR_BLOB_BAD_RECORD},
        {"track width", (size_t)tracks + offsetof(kiln_blob_anim_track, width), 16, 0, KILN_ERR_BLOB_BAD_RECORD},
        {"track order", (size_t)tracks + 72 + offsetof(kiln_blob_anim_track, component), 0, 0, KILN_ERR_BLOB_BAD_RECORD},
        {"track row offset", (size_t)tracks + offsetof(kiln_blob_anim_track, row_offset), 1u << 20, 0, KILN_ERR_BLOB_BAD_RECORD},
        {"NaN in a row", (size_t)rows + 4, 0x7FC00000u, 0, KILN_ERR_BLOB_NOT_FINITE},
        {"inf in constants", (size_t)a->data_offset, 0x7F800000u, 0, KILN_ERR_BLOB_NOT_FINITE},
        {"event order", ev_off + 16 + offsetof(kiln_blob_anim_event, frame), 0xFFFFFFFFu, 0, KILN_ERR_BLOB_BAD_RECORD},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char *bad = aligned_alloc(64, size);
        memcpy(bad, good, size);
        if (cases[i].as_float) {
            float f = (float)cases[i].value;
            memcpy(bad + cases[i].at, &f, 4);
        } else if (cases[i].at % 2 == 0 && strcmp(cases[i].what, "track width") != 0 &&
                   strcmp(cases[i].what, "track order") != 0) {
            memcpy(bad + cases[i].at, &cases[i].value, 4);
        } else {
            bad[cases[i].at] = (unsigned char)cases[i].value;
        }
        kiln_diag err;
        memset(&err, 0, sizeof err);
        kiln_result r = kiln__verify_animation(bad, size, &err);
        cr_assert_eq(r, cases[i].code, "%s: got %s (%s)", cases[i].what, kiln_result_name(r), err.message);
        cr_assert(err.message[0] != '\0', "%s: no message", cases[i].what);
        /* a trusted load skips that verification: binding must refuse what sampling cannot
         * read safely, and whatever it accepts must sample inside the blob (ASan runs check) */
        const kiln_blob *tb = NULL;
        cr_assert_eq(kiln_blob_load(bad, size, KILN_BLOB_LOAD_TRUSTED, &tb, NULL), KILN_OK);
        size_t bsize = kiln_anim_binding_size(tb, 0, tb, 0);
        void *bmem = aligned_alloc(64, (bsize + 63) & ~(size_t)63);
        kiln_anim_binding *bb = NULL;
        if (bsize && kiln_anim_bind(tb, 0, tb, 0, bmem, bsize, &bb, NULL) == KILN_OK) {
            kiln_soa_xform out[2];
            const double times[4] = {0.0, 0.05, 1e9, NAN};
            for (int t = 0; t < 4; t++) sample(bb, times[t], KILN_LOOP_WRAP, NULL, out, 2, NULL);
            kiln_anim_event got[4];
            kiln_anim_events(tb, 0, 0.0, 1.0, KILN_LOOP_WRAP, got, 4);
        }
        free(bmem);
        free(bad);
    }
    free(good);
    free(bones);
}

/* ---- events ---------------------------------------------------------------------------------------- */
Test(events, report_the_interval_with_wrapping)
{
    af_bone bone = {"r", -1, {0}, {0, 0, 0, 1}, {1, 1, 1}, 0};
    af_skel skel = {1, &bone};
    float v[10 * 10] = {0};
    af_joint j = {"r", 0, {1, 1, 1}};
    const char *en[5] = {"a", "b", "c", "d", "e"};
    const int64_t ef[5] = {0, 2, 2, 5, 9};
    af_clip clip = {.framerate = 10, .frame_count = 10, .joint_count = 1, .joints = &j, .values = v, .width = 32,
                    .event_count = 5, .event_names = en, .event_frames = ef};
    scene s = scene_make(&skel, &clip, 1);
    kiln_anim_event out[8];
    cr_assert_eq(kiln_anim_events(s.blob, 0, 0.0, 0.25, KILN_LOOP_CLAMP, out, 8), 3);
    cr_assert_eq(out[1].index, 1);
    cr_assert_str_eq(kiln_blob_string(s.blob, out[2].name), "c");
    cr_assert_float_eq(out[2].time_s, 0.2, 1e-12);
    cr_assert_eq(kiln_anim_events(s.blob, 0, 0.2, 0.5, KILN_LOOP_CLAMP, out, 8), 2, "[t0, t1): 0.5 excluded");
    cr_assert_eq(kiln_anim_events(s.blob, 0, 0.5, 0.2, KILN_LOOP_CLAMP, out, 8), 0);
    cr_assert_eq(kiln_anim_events(s.blob, 0, NAN, 0.2, KILN_LOOP_WRAP, out, 8), 0);
    /* wrapping: the loop is frames [0, 9); frame 9 is frame 0 again */
    cr_assert_eq(kiln_anim_events(s.blob, 0, 0.8, 1.1, KILN_LOOP_WRAP, out, 8), 2);
    cr_assert_eq(out[0].index, 0);
    cr_assert_eq(out[1].index, 4);
    cr_assert_eq(kiln_anim_events(s.blob, 0, 0.8, 0.1, KILN_LOOP_WRAP, out, 8), 2, "t1 < t0 crosses the loop end");
    cr_assert_eq(kiln_anim_events(s.blob, 0, 0.3, 5.0, KILN_LOOP_WRAP, out, 8), 5, "a whole period: each event once");
    cr_assert_eq(out[0].index, 3, "playback order from t0");
    cr_assert_eq(kiln_anim_events(s.blob, 0, 1.05, 1.25, KILN_LOOP_WRAP, out, 8), 2, "later loops map back");
    cr_assert_eq(kiln_anim_events(s.blob, 0, 0.0, 0.85, KILN_LOOP_WRAP, out, 1), 5, "total returned past the cap");
    cr_assert_eq(out[0].index, 0);
    cr_assert_eq(kiln_anim_events(s.blob, 0, 0.1, 0.85, KILN_LOOP_WRAP, NULL, 0), 3);
    cr_assert_eq(kiln_anim_events(s.blob, 0, 0.8, 1.1, KILN_LOOP_CLIP, out, 8), 1, "not looping: clamps");
    scene_free(&s);
}

Test(verify, single_byte_damage_is_rejected_or_samples_safely)
{
    /* every byte of the records and the clip's constants and track table, xor 0x41: either
     * the animation verification rejects the blob, or binding and sampling it stay inside
     * it (checked by the sanitizer builds) */
    char names[9][16];
    af_bone *bones = make_bones(9, "f", 4, 0, names);
    af_skel skel = {9, bones};
    float v[3 * 9 * 10];
    af_motion(3, 9, 8, 30, v);
    af_joint joints[9];
    for (int j = 0; j < 9; j++) joints[j] = (af_joint){names[j], AF_MODES_ALL(j % 4), {0.5f, 2.0f, 1}};
    const char *sn[1] = {"s"};
    const uint32_t sk[1] = {KILN_SCALAR_BLEND_SHAPE};
    const float sv[3] = {0, 1, 0};
    const char *en[2] = {"e", "e"};
    const int64_t ef[2] = {0, 2};
    af_override ov[1] = {{names[1], KILN_MODE_ADDITIVE, 3, 0}};
    af_clip clip = {.framerate = 30, .frame_count = 3, .joint_count = 9, .joints = joints, .values = v, .width = 12,
                    .scalar_count = 1, .scalar_names = sn, .scalar_kinds = sk, .scalar_values = sv,
                    .override_count = 1, .overrides = ov, .event_count = 2, .event_names = en, .event_frames = ef};
    size_t size;
    unsigned char *good = af_build(&skel, &clip, 1, &size);
    cr_assert_eq(kiln__verify_animation(good, size, NULL), KILN_OK);
    const kiln_blob *blob = af_load(good, size);
    uint32_t n;
    const kiln_blob_animation *a = kiln_blob_animations(blob, &n);
    /* ranges to damage: the section table, the animation record sections, constants + tracks */
    struct {
        size_t lo, hi;
    } ranges[8];
    int nr = 0;
    ranges[nr].lo = 64, ranges[nr++].hi = 64 + 32 * (size_t)kiln_blob_header_of(blob)->section_count;
    const uint32_t kinds[5] = {KILN_SECTION_ANIMATIONS, KILN_SECTION_ANIM_JOINTS, KILN_SECTION_ANIM_SCALARS,
                               KILN_SECTION_ANIM_OVERRIDES, KILN_SECTION_ANIM_EVENTS};
    for (int k = 0; k < 5; k++) {
        const kiln_blob_section *s = kiln_blob_find_section(blob, kinds[k]);
        ranges[nr].lo = (size_t)s->offset, ranges[nr++].hi = (size_t)(s->offset + s->size);
    }
    ranges[nr].lo = (size_t)a->data_offset;
    ranges[nr++].hi = (size_t)(a->data_offset + a->block_count * 320u + a->animated_count * 72u);
    unsigned char *bad = aligned_alloc(64, size);
    size_t bsize_max = 1 << 20;
    void *bmem = aligned_alloc(64, bsize_max);
    unsigned accepted = 0, total = 0;
    for (int r = 0; r < nr; r++)
        for (size_t at = ranges[r].lo; at < ranges[r].hi; at++) {
            memcpy(bad, good, size);
            bad[at] ^= 0x41;
            total++;
            if (kiln__verify_animation(bad, size, NULL) != KILN_OK) continue;
            const kiln_blob *tb = NULL;
            if (kiln_blob_load(bad, size, KILN_BLOB_LOAD_TRUSTED, &tb, NULL) != KILN_OK) continue;
            size_t bsize = kiln_anim_binding_size(tb, 0, tb, 0);
            kiln_anim_binding *bb = NULL;
            if (!bsize || bsize > bsize_max || kiln_anim_bind(tb, 0, tb, 0, bmem, bsize, &bb, NULL) != KILN_OK) continue;
            accepted++;
            kiln_soa_xform out[2];
            float sc[2];
            kiln_sample_desc d = {0};
            d.binding = bb, d.out = out, d.out_count = 2, d.scalars = sc, d.scalar_count = 2, d.loop = KILN_LOOP_WRAP;
            const double times[3] = {0.04, -7.0, INFINITY};
            for (int t = 0; t < 3; t++) d.time_s = times[t], kiln_sample(&d);
            kiln_anim_event got[4];
            kiln_anim_events(tb, 0, 0.0, 0.2, KILN_LOOP_WRAP, got, 4);
        }
    cr_assert_gt(total, 500);
    cr_log_info("%u of %u damaged blobs passed verification and sampled", accepted, total);
    free(bad), free(bmem), free(good), free(bones);
}
