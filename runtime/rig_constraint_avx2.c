/* Constraint steps compiled for AVX2 (rig_constraint_step.h): the constraint steps'
 * operations VEX-encoded, selected with the AVX2 path (kiln_rig_solve), the same bits; and the
 * desired rotations of a prepared plan's early orient constraints, eight at a time in lanes
 * (kiln__orient_lanes_avx2): every lane does kiln__orient_want's float operations in its order,
 * and a lane that meets one of its fallbacks is computed by kiln__orient_want itself. */
/* No product is fused into a sum, here nor in the inline helpers of the headers below, which
 * the step inlines: the target is AVX2 without FMA (KILN__TARGET_AVX2_NOFMA, simd.h), and
 * Clang's contraction is off besides. */
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
#include "rig_math_f32.h"

#include <string.h>

#include "anim_internal.h"
#include "pose_bone_model.h"
#include "rig_internal.h"

#if KILN__SIMD_AVX2
#include <immintrin.h>

#define KILN__CN(name) name##_avx2
#define KILN__CN_FN static KILN__TARGET_AVX2_NOFMA
#define KILN__CN_ENTRY KILN__TARGET_AVX2_NOFMA
#define KILN__CN_LANES 8
#define KILN__CN_LANES_MIN 3 /* callgrind: two in lanes cost more than two one at a time */
static KILN__TARGET_AVX2_NOFMA void kiln__orient_lanes_avx2(kiln__rig *r, const kiln_blob_constraint *c,
                                                           const kiln__constraint_plan *p, const uint32_t *idx,
                                                           uint32_t n);
#include "rig_constraint_step.h"

typedef __m256 kiln__v8;

/* (a0 b0 + a1 b1) + a2 b2, as kiln__f4_dot3 */
static inline KILN__TARGET_AVX2_NOFMA kiln__v8 kiln__v8_dot3(const kiln__v8 *a, const kiln__v8 *b)
{
    return _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(a[0], b[0]), _mm256_mul_ps(a[1], b[1])),
                         _mm256_mul_ps(a[2], b[2]));
}

/* kiln__f4_rot_cols in lanes: m holds columns 0 and 1 (m[0..2], m[3..5]); into x, y, z; ok
 * cleared where kiln__f4_unit3 would find a (near) zero length */
static inline KILN__TARGET_AVX2_NOFMA void kiln__v8_rot_cols(const kiln__v8 *m, kiln__v8 *x, kiln__v8 *y, kiln__v8 *z,
                                                             kiln__v8 *ok)
{
    const kiln__v8 eps = _mm256_set1_ps(KILN__RIG_EPS2_F), one = _mm256_set1_ps(1.0f);
    kiln__v8 n2 = kiln__v8_dot3(m, m);
    *ok = _mm256_and_ps(*ok, _mm256_cmp_ps(n2, eps, _CMP_GT_OQ));
    kiln__v8 inv = _mm256_div_ps(one, _mm256_sqrt_ps(n2));
    for (int k = 0; k < 3; k++) x[k] = _mm256_mul_ps(m[k], inv);
    kiln__v8 nd = _mm256_xor_ps(kiln__v8_dot3(x, m + 3), _mm256_set1_ps(-0.0f));
    for (int k = 0; k < 3; k++) y[k] = _mm256_add_ps(m[3 + k], _mm256_mul_ps(x[k], nd));
    n2 = kiln__v8_dot3(y, y);
    *ok = _mm256_and_ps(*ok, _mm256_cmp_ps(n2, eps, _CMP_GT_OQ));
    inv = _mm256_div_ps(one, _mm256_sqrt_ps(n2));
    for (int k = 0; k < 3; k++) y[k] = _mm256_mul_ps(y[k], inv);
    z[0] = _mm256_sub_ps(_mm256_mul_ps(x[1], y[2]), _mm256_mul_ps(x[2], y[1]));
    z[1] = _mm256_sub_ps(_mm256_mul_ps(x[2], y[0]), _mm256_mul_ps(x[0], y[2]));
    z[2] = _mm256_sub_ps(_mm256_mul_ps(x[0], y[1]), _mm256_mul_ps(x[1], y[0]));
}

/* ((p0 t0 + p1 t1) + p2 t2): an entry of Rp^T · Rt as kiln__f4_mul_rows sums it */
static inline KILN__TARGET_AVX2_NOFMA kiln__v8 kiln__v8_pt(const kiln__v8 *pc, const kiln__v8 *tc)
{
    return kiln__v8_dot3(pc, tc);
}

/* kiln__orient_want of the n (2..8) early orient constraints idx[] into r->tq, in lanes. */
static KILN__TARGET_AVX2_NOFMA void kiln__orient_lanes_avx2(kiln__rig *r, const kiln_blob_constraint *c,
                                                           const kiln__constraint_plan *p, const uint32_t *idx,
                                                           uint32_t n)
{
    /* the inputs, a lane per constraint (the lanes past n an identity): the target's and the
     * frame's columns 0 and 1 and the offset, four floats each, transposed into 8 lanes */
    __m128 g[5][8];
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = idx[i];
        const float *tm = r->model + (size_t)c[j].target * 16u;
        const float *pm = kiln__constraint_frame(r, &p[j]);
        g[0][i] = _mm_loadu_ps(tm), g[1][i] = _mm_loadu_ps(tm + 4);
        g[2][i] = _mm_loadu_ps(pm), g[3][i] = _mm_loadu_ps(pm + 4);
        g[4][i] = _mm_loadu_ps(p[j].off);
    }
    for (uint32_t i = n; i < 8; i++) {
        g[0][i] = g[2][i] = _mm_setr_ps(1.0f, 0.0f, 0.0f, 0.0f);
        g[1][i] = g[3][i] = _mm_setr_ps(0.0f, 1.0f, 0.0f, 0.0f);
        g[4][i] = _mm_setr_ps(0.0f, 0.0f, 0.0f, 1.0f);
    }
    kiln__v8 v[20];
    for (int k = 0; k < 5; k++) {
        kiln__v8 r0 = _mm256_insertf128_ps(_mm256_castps128_ps256(g[k][0]), g[k][4], 1);
        kiln__v8 r1 = _mm256_insertf128_ps(_mm256_castps128_ps256(g[k][1]), g[k][5], 1);
        kiln__v8 r2 = _mm256_insertf128_ps(_mm256_castps128_ps256(g[k][2]), g[k][6], 1);
        kiln__v8 r3 = _mm256_insertf128_ps(_mm256_castps128_ps256(g[k][3]), g[k][7], 1);
        kiln__v8 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
        kiln__v8 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
        v[k * 4] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
        v[k * 4 + 1] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
        v[k * 4 + 2] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
        v[k * 4 + 3] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    }
    /* columns as rot_cols takes them: x, y of the target, then of the frame */
    kiln__v8 tm6[6] = {v[0], v[1], v[2], v[4], v[5], v[6]}, pm6[6] = {v[8], v[9], v[10], v[12], v[13], v[14]};
    kiln__v8 ok = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    kiln__v8 tc[3][3], pc[3][3];
    kiln__v8_rot_cols(tm6, tc[0], tc[1], tc[2], &ok);
    kiln__v8_rot_cols(pm6, pc[0], pc[1], pc[2], &ok);
    /* Rp^T · Rt: column j, row i = p_i · t_j; X, Y, Z its columns */
    kiln__v8 M[3][3]; /* [column][row] */
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) M[j][i] = kiln__v8_pt(pc[i], tc[j]);
    const kiln__v8 *X = M[0], *Y = M[1], *Z = M[2];
    /* kiln__f4_shepperd: its four cases, the first that holds chosen per lane */
    const kiln__v8 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
    kiln__v8 tr = _mm256_add_ps(_mm256_add_ps(X[0], Y[1]), Z[2]);
    kiln__v8 c0 = _mm256_cmp_ps(tr, zero, _CMP_GT_OQ);
    kiln__v8 c1 = _mm256_and_ps(_mm256_cmp_ps(X[0], Y[1], _CMP_GT_OQ), _mm256_cmp_ps(X[0], Z[2], _CMP_GT_OQ));
    kiln__v8 c2 = _mm256_cmp_ps(Y[1], Z[2], _CMP_GT_OQ);
    kiln__v8 a3 = _mm256_sub_ps(_mm256_sub_ps(_mm256_add_ps(one, Z[2]), X[0]), Y[1]);
    kiln__v8 a2 = _mm256_sub_ps(_mm256_sub_ps(_mm256_add_ps(one, Y[1]), X[0]), Z[2]);
    kiln__v8 a1 = _mm256_sub_ps(_mm256_sub_ps(_mm256_add_ps(one, X[0]), Y[1]), Z[2]);
    kiln__v8 arg = _mm256_blendv_ps(_mm256_blendv_ps(_mm256_blendv_ps(a3, a2, c2), a1, c1), _mm256_add_ps(one, tr), c0);
    kiln__v8 s = _mm256_mul_ps(_mm256_set1_ps(2.0f), _mm256_sqrt_ps(arg)), inv = _mm256_div_ps(one, s);
    kiln__v8 qs = _mm256_mul_ps(_mm256_set1_ps(0.25f), s);
    kiln__v8 A = _mm256_mul_ps(_mm256_sub_ps(Y[2], Z[1]), inv), B = _mm256_mul_ps(_mm256_sub_ps(Z[0], X[2]), inv);
    kiln__v8 C = _mm256_mul_ps(_mm256_sub_ps(X[1], Y[0]), inv), D = _mm256_mul_ps(_mm256_add_ps(Y[0], X[1]), inv);
    kiln__v8 E = _mm256_mul_ps(_mm256_add_ps(Z[0], X[2]), inv), F = _mm256_mul_ps(_mm256_add_ps(Z[1], Y[2]), inv);
    /* (x, y, z, w) per case: 0 (A, B, C, qs), 1 (qs, D, E, A), 2 (D, qs, F, B), 3 (E, F, qs, C) */
    kiln__v8 q[4];
    q[0] = _mm256_blendv_ps(_mm256_blendv_ps(_mm256_blendv_ps(E, D, c2), qs, c1), A, c0);
    q[1] = _mm256_blendv_ps(_mm256_blendv_ps(_mm256_blendv_ps(F, qs, c2), D, c1), B, c0);
    q[2] = _mm256_blendv_ps(_mm256_blendv_ps(_mm256_blendv_ps(qs, F, c2), E, c1), C, c0);
    q[3] = _mm256_blendv_ps(_mm256_blendv_ps(_mm256_blendv_ps(C, B, c2), A, c1), qs, c0);
    /* ⊗ offset (kiln__f4_qmul's sums), then kiln__f4_qnorm */
    const kiln__v8 *o = v + 16;
#define KILN__M(a, b) _mm256_mul_ps(a, b)
    kiln__v8 w[4];
    w[0] = _mm256_sub_ps(_mm256_add_ps(_mm256_add_ps(KILN__M(q[3], o[0]), KILN__M(q[0], o[3])), KILN__M(q[1], o[2])),
                         KILN__M(q[2], o[1]));
    w[1] = _mm256_add_ps(_mm256_add_ps(_mm256_sub_ps(KILN__M(q[3], o[1]), KILN__M(q[0], o[2])), KILN__M(q[1], o[3])),
                         KILN__M(q[2], o[0]));
    w[2] = _mm256_add_ps(_mm256_sub_ps(_mm256_add_ps(KILN__M(q[3], o[2]), KILN__M(q[0], o[1])), KILN__M(q[1], o[0])),
                         KILN__M(q[2], o[3]));
    w[3] = _mm256_sub_ps(_mm256_sub_ps(_mm256_sub_ps(KILN__M(q[3], o[3]), KILN__M(q[0], o[0])), KILN__M(q[1], o[1])),
                         KILN__M(q[2], o[2]));
    kiln__v8 n2 = _mm256_add_ps(_mm256_add_ps(KILN__M(w[0], w[0]), KILN__M(w[1], w[1])),
                                _mm256_add_ps(KILN__M(w[2], w[2]), KILN__M(w[3], w[3])));
#undef KILN__M
    ok = _mm256_and_ps(ok, _mm256_cmp_ps(n2, _mm256_set1_ps(KILN__RIG_EPS2_F), _CMP_GT_OQ));
    ok = _mm256_and_ps(ok, _mm256_cmp_ps(n2, _mm256_set1_ps(INFINITY), _CMP_LT_OQ));
    kiln__v8 ni = _mm256_div_ps(one, _mm256_sqrt_ps(n2));
    float out[4][8];
    for (int k = 0; k < 4; k++) _mm256_storeu_ps(out[k], _mm256_mul_ps(w[k], ni));
    unsigned good = (unsigned)_mm256_movemask_ps(ok);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = idx[i];
        if (good & (1u << i)) {
            for (int k = 0; k < 4; k++) r->tq[j][k] = out[k][i];
        } else {
            /* a fallback of kiln__f4_rot_cols or kiln__f4_qnorm */
            kiln__orient_early_avx2(r, c, p, j);
        }
    }
}
#endif
