/* Skinning kernels, SSE2 (the x86-64 baseline): 4 vertices per iteration. The same scheme as
 * skin_avx2.c with one matrix column per register: blend per vertex, 4x4 transposes into SoA
 * rows, then the shared vertical code of skin_simd.h.
 */
#include <string.h>

#include "anim_internal.h" /* simd_ops.h builds on its constants */
#include "skin_internal.h"

#if KILN__SIMD_SSE2
#define KILN__OPS_SSE2 1
#include "simd_ops.h"

/* ---- packed streams ---------------------------------------------------------------------------- */

KILN__FN void kiln__skin_ld3(const float *p, kv *x, kv *y, kv *z)
{
    kv a = _mm_loadu_ps(p), b = _mm_loadu_ps(p + 4), c = _mm_loadu_ps(p + 8); /* x0y0z0x1 y1z1x2y2 z2x3y3z3 */
    kv t = _mm_shuffle_ps(b, c, _MM_SHUFFLE(2, 1, 3, 2)); /* x2 y2 x3 y3 */
    kv s = _mm_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 2, 1)); /* y0 z0 y1 z1 */
    *x = _mm_shuffle_ps(a, t, _MM_SHUFFLE(2, 0, 3, 0));
    *y = _mm_shuffle_ps(s, t, _MM_SHUFFLE(3, 1, 2, 0));
    *z = _mm_shuffle_ps(s, c, _MM_SHUFFLE(3, 0, 3, 1));
}

KILN__FN void kiln__skin_st3(float *p, kv x, kv y, kv z)
{
    kv xy = _mm_shuffle_ps(x, y, _MM_SHUFFLE(2, 0, 2, 0)); /* x0 x2 y0 y2 */
    kv yz = _mm_shuffle_ps(y, z, _MM_SHUFFLE(3, 1, 3, 1)); /* y1 y3 z1 z3 */
    kv zx = _mm_shuffle_ps(z, x, _MM_SHUFFLE(3, 1, 2, 0)); /* z0 z2 x1 x3 */
    _mm_storeu_ps(p, _mm_shuffle_ps(xy, zx, _MM_SHUFFLE(2, 0, 2, 0)));
    _mm_storeu_ps(p + 4, _mm_shuffle_ps(yz, xy, _MM_SHUFFLE(3, 1, 2, 0)));
    _mm_storeu_ps(p + 8, _mm_shuffle_ps(zx, yz, _MM_SHUFFLE(3, 1, 3, 1)));
}

/* 4x4 transpose: element i of register r -> element r of row i; rows 0..rows-1 stored 4 floats
 * apart from out. */
KILN__FN void kiln__transpose4(kv r0, kv r1, kv r2, kv r3, float *out, const int rows)
{
    kv t0 = _mm_unpacklo_ps(r0, r1), t1 = _mm_unpacklo_ps(r2, r3);
    kv t2 = _mm_unpackhi_ps(r0, r1), t3 = _mm_unpackhi_ps(r2, r3);
    _mm_storeu_ps(out, _mm_movelh_ps(t0, t1));
    _mm_storeu_ps(out + 4, _mm_movehl_ps(t1, t0));
    _mm_storeu_ps(out + 8, _mm_movelh_ps(t2, t3));
    if (rows > 3) _mm_storeu_ps(out + 12, _mm_movehl_ps(t3, t2));
}

KILN__FN void kiln__skin_ld_unorm(const unsigned char *p, kv q[3])
{
    const __m128i zero = _mm_setzero_si128();
    __m128i v01 = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i v23 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
    kv r0 = _mm_cvtepi32_ps(_mm_unpacklo_epi16(v01, zero)), r1 = _mm_cvtepi32_ps(_mm_unpackhi_epi16(v01, zero));
    kv r2 = _mm_cvtepi32_ps(_mm_unpacklo_epi16(v23, zero)), r3 = _mm_cvtepi32_ps(_mm_unpackhi_epi16(v23, zero));
    kv t0 = _mm_unpacklo_ps(r0, r1), t1 = _mm_unpacklo_ps(r2, r3);
    kv t2 = _mm_unpackhi_ps(r0, r1), t3 = _mm_unpackhi_ps(r2, r3);
    q[0] = _mm_movelh_ps(t0, t1), q[1] = _mm_movehl_ps(t1, t0), q[2] = _mm_movelh_ps(t2, t3);
}

KILN__FN void kiln__skin_ld_oct(const unsigned char *p, kv *x, kv *y)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    *x = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_slli_epi32(v, 16), 16));
    *y = _mm_cvtepi32_ps(_mm_srai_epi32(v, 16));
}

/* ---- gathers ------------------------------------------------------------------------------------ */

/* ---- joints as record offsets (skin_avx2.c explains the fast and clamping paths) ------------ */

KILN__FN __m128i kiln__record_offsets(__m128i j, const uint32_t size)
{
    __m128i o = _mm_slli_epi32(j, 6);
    return size == 96u ? _mm_add_epi32(o, _mm_slli_epi32(j, 5)) : o;
}

KILN__FN int kiln__fast_batch(const kiln__skin_job *job, uint32_t v0, uint32_t n, const uint32_t N,
                              const uint32_t size, uint32_t *off)
{
    if (n != 4u) return 0;
    if (N == 0) return 1;
    const uint32_t bytes = 4u * 2u * KILN__SKIN_JS(N); /* a multiple of 16 for every N */
    if (job->joint_stride != 2u * KILN__SKIN_JS(N) || job->weight_stride != 4u * N) return 0;
    const unsigned char *p = job->joints + (size_t)v0 * job->joint_stride;
    const __m128i max = _mm_set1_epi16((short)job->max_joint), zero = _mm_setzero_si128();
    __m128i over = zero;
    KILN__UNROLL
    for (uint32_t at = 0; at < bytes; at += 16) {
        __m128i j = _mm_loadu_si128((const __m128i *)(const void *)(p + at));
        over = _mm_or_si128(over, _mm_subs_epu16(j, max));
        _mm_storeu_si128((__m128i *)(void *)(off + at / 2u), kiln__record_offsets(_mm_unpacklo_epi16(j, zero), size));
        _mm_storeu_si128((__m128i *)(void *)(off + at / 2u + 4u), kiln__record_offsets(_mm_unpackhi_epi16(j, zero), size));
    }
    return _mm_movemask_epi8(_mm_cmpeq_epi8(over, zero)) == 0xFFFF;
}

/* ---- linear blend ------------------------------------------------------------------------------- */

/* One vertex: M = Σ w K, one column per register; all-zero weights (N = 0: no skin) take the root. */
KILN__FN void kiln__lbs_lane(const unsigned char *mats, const uint32_t *off, const float *wp, const float *root,
                             const uint32_t N, kv c[4])
{
    const float *k = root;
    kv wv = _mm_set1_ps(1.0f);
    if (N > 0) {
        int none = kiln__unweighted(wp);
        k = none ? root : (const float *)(const void *)(mats + off[0]);
        wv = _mm_load1_ps(none ? &kiln__one : wp);
    }
    KILN__UNROLL
    for (int i = 0; i < 4; i++) c[i] = _mm_mul_ps(wv, _mm_loadu_ps(k + 4 * i));
    KILN__UNROLL
    for (uint32_t j = 1; j < N; j++) {
        const float *kj = (const float *)(const void *)(mats + off[j]);
        wv = _mm_set1_ps(wp[j]);
        KILN__UNROLL
        for (int i = 0; i < 4; i++) c[i] = kv_fma(wv, _mm_loadu_ps(kj + 4 * i), c[i]);
    }
}

KILN__FN void kiln__lbs_gather(const kiln__skin_job *job, const float *w, const uint32_t N, const uint32_t *off, float *m)
{
    kv c[4][4];
    const unsigned char *mats = (const unsigned char *)job->matrices;
    KILN__UNROLL
    for (uint32_t l = 0; l < 4; l++)
        kiln__lbs_lane(mats, off + l * KILN__SKIN_JS(N), N ? w + l * N : NULL, job->root, N, c[l]);
    KILN__UNROLL
    for (int col = 0; col < 4; col++) kiln__transpose4(c[0][col], c[1][col], c[2][col], c[3][col], m + col * 12, 3);
}

/* ---- dual quaternion blend ------------------------------------------------------------------- */

/* One vertex: (real, dual) on the hemisphere of its heaviest influence, and (S) the stretch
 * columns. */
KILN__FN void kiln__dqs_lane(const unsigned char *dqs, const uint32_t *off, const float *wp,
                             const kiln_skin_dual_quat *root, const uint32_t N, const int S, kv q[2], kv s[3])
{
    const float *b = root->real;
    kv wv = _mm_set1_ps(1.0f);
    if (N > 0) {
        int none = kiln__unweighted(wp);
        b = none ? root->real : (const float *)(const void *)(dqs + off[0]);
        wv = _mm_load1_ps(none ? &kiln__one : wp);
    }
    /* record layout: real at 0, dual at 4, stretch columns at 8, 12, 16 (kiln_skin_dual_quat) */
    const kv r0 = _mm_loadu_ps(b), sign = _mm_set1_ps(-0.0f);
    q[0] = _mm_mul_ps(wv, r0), q[1] = _mm_mul_ps(wv, _mm_loadu_ps(b + 4));
    KILN__UNROLL
    for (int i = 0; i < 3; i++) s[i] = S ? _mm_mul_ps(wv, _mm_loadu_ps(b + 8 + 4 * i)) : _mm_setzero_ps();
    KILN__UNROLL
    for (uint32_t j = 1; j < N; j++) {
        b = (const float *)(const void *)(dqs + off[j]);
        kv ri = _mm_loadu_ps(b);
        /* dot(r0, r_i) in every lane, summed as the scalar path does: (x + z) + (y + w) */
        kv d = _mm_mul_ps(r0, ri);
        d = _mm_add_ps(d, _mm_shuffle_ps(d, d, _MM_SHUFFLE(1, 0, 3, 2)));
        d = _mm_add_ps(d, _mm_shuffle_ps(d, d, _MM_SHUFFLE(2, 3, 0, 1)));
        wv = _mm_set1_ps(wp[j]);
        kv ws = _mm_xor_ps(wv, _mm_and_ps(d, sign));
        q[0] = kv_fma(ws, ri, q[0]), q[1] = kv_fma(ws, _mm_loadu_ps(b + 4), q[1]);
        if (S)
            KILN__UNROLL
            for (int i = 0; i < 3; i++) s[i] = kv_fma(wv, _mm_loadu_ps(b + 8 + 4 * i), s[i]);
    }
}

KILN__FN void kiln__dqs_gather(const kiln__skin_job *job, const float *w, const uint32_t N, const int S,
                               const uint32_t *off, float *q, float *s)
{
    kv dq[4][2], st[4][3];
    const unsigned char *dqs = (const unsigned char *)job->dual_quats;
    KILN__UNROLL
    for (uint32_t l = 0; l < 4; l++)
        kiln__dqs_lane(dqs, off + l * KILN__SKIN_JS(N), N ? w + l * N : NULL, job->root_dq, N, S, dq[l],
                       st[l]);
    KILN__UNROLL
    for (int i = 0; i < 2; i++) kiln__transpose4(dq[0][i], dq[1][i], dq[2][i], dq[3][i], q + i * 16, 4);
    /* normalised by |real| (one refined reciprocal square root for both parts) */
    kv qx = _mm_loadu_ps(q), qy = _mm_loadu_ps(q + 4), qz = _mm_loadu_ps(q + 8), qw = _mm_loadu_ps(q + 12);
    kv inv = kv_rsqrt(kv_max(kv_fma(qx, qx, kv_fma(qz, qz, kv_fma(qy, qy, kv_mul(qw, qw)))), kv_set1(1e-30f)));
    KILN__UNROLL
    for (int i = 0; i < 8; i++) _mm_storeu_ps(q + 4 * i, _mm_mul_ps(_mm_loadu_ps(q + 4 * i), inv));
    if (S)
        KILN__UNROLL
        for (int col = 0; col < 3; col++) kiln__transpose4(st[0][col], st[1][col], st[2][col], st[3][col], s + col * 12, 3);
}

#include "skin_simd.h"

#endif /* KILN__SIMD_SSE2 */
