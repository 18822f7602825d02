/* Skinning kernels, AVX2 + FMA: 8 vertices per iteration. Compiled for that target per
 * function (simd.h) and selected at run time (the kernel table, simd_table.h).
 *
 * The linear blend (and the dual quaternions' stretch) blends the influences of each vertex in
 * AoS form: a column-major skinning matrix is two 256-bit rows ([c0|c1], [c2|c3]), so each
 * influence costs two loads and two FMAs with a broadcast weight, and no gathers (which are
 * slow on most x86 cores). The 8 blended matrices are then transposed into SoA rows (in-lane
 * unpack/shuffle, one cross-lane permute per row). The dual quaternions, whose hemisphere test
 * would cost a horizontal dot product per vertex and influence in AoS, are transposed per
 * influence instead and blended in SoA (see there). Everything after that, positions, cofactor
 * normals, tangents, dual quaternion algebra, is plain vertical SIMD shared with SSE2
 * (skin_simd.h). Positions and normals stream in and out as packed float3, 96 bytes per 8
 * vertices, deinterleaved with 5 shuffles and interleaved with 6.
 */
#include <string.h>

#include "anim_internal.h" /* simd_ops.h builds on its constants */
#include "skin_internal.h"

#if KILN__SIMD_AVX2
#define KILN__OPS_AVX2 1
#include "simd_ops.h"

/* ---- packed streams ---------------------------------------------------------------------------- */

/* Within each 128-bit lane: a = [x0 y0 z0 x1], b = [y1 z1 x2 y2], c = [z2 x3 y3 z3] -> x, y, z. */
KILN__FN void kiln__deinterleave3(kv a, kv b, kv c, kv *x, kv *y, kv *z)
{
    kv t = _mm256_shuffle_ps(b, c, _MM_SHUFFLE(2, 1, 3, 2)); /* x2 y2 x3 y3 */
    kv s = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 2, 1)); /* y0 z0 y1 z1 */
    *x = _mm256_shuffle_ps(a, t, _MM_SHUFFLE(2, 0, 3, 0));
    *y = _mm256_shuffle_ps(s, t, _MM_SHUFFLE(3, 1, 2, 0));
    *z = _mm256_shuffle_ps(s, c, _MM_SHUFFLE(3, 0, 3, 1));
}

KILN__FN void kiln__skin_ld3(const float *p, kv *x, kv *y, kv *z)
{
    kv l0 = _mm256_loadu_ps(p), l1 = _mm256_loadu_ps(p + 8), l2 = _mm256_loadu_ps(p + 16);
    /* vertices 0-3 in the low lanes, 4-7 in the high lanes */
    kv a = _mm256_blend_ps(l0, l1, 0xF0);         /* x0 y0 z0 x1 | x4 y4 z4 x5 */
    kv b = _mm256_permute2f128_ps(l0, l2, 0x21);  /* y1 z1 x2 y2 | y5 z5 x6 y6 */
    kv c = _mm256_blend_ps(l1, l2, 0xF0);         /* z2 x3 y3 z3 | z6 x7 y7 z7 */
    kiln__deinterleave3(a, b, c, x, y, z);
}

KILN__FN void kiln__skin_st3(float *p, kv x, kv y, kv z)
{
    kv xy = _mm256_shuffle_ps(x, y, _MM_SHUFFLE(2, 0, 2, 0)); /* x0 x2 y0 y2 */
    kv yz = _mm256_shuffle_ps(y, z, _MM_SHUFFLE(3, 1, 3, 1)); /* y1 y3 z1 z3 */
    kv zx = _mm256_shuffle_ps(z, x, _MM_SHUFFLE(3, 1, 2, 0)); /* z0 z2 x1 x3 */
    kv a = _mm256_shuffle_ps(xy, zx, _MM_SHUFFLE(2, 0, 2, 0)); /* x0 y0 z0 x1 */
    kv b = _mm256_shuffle_ps(yz, xy, _MM_SHUFFLE(3, 1, 2, 0)); /* y1 z1 x2 y2 */
    kv c = _mm256_shuffle_ps(zx, yz, _MM_SHUFFLE(3, 1, 3, 1)); /* z2 x3 y3 z3 */
    _mm256_storeu_ps(p, _mm256_permute2f128_ps(a, b, 0x20));
    _mm256_storeu_ps(p + 8, _mm256_blend_ps(c, a, 0xF0));
    _mm256_storeu_ps(p + 16, _mm256_permute2f128_ps(b, c, 0x31));
}

/* In-lane 4x4 transpose of r0..r3 (lane i of rows = vertex i in the low half, i + 4 in the
 * high half): rows 0-2. */
KILN__FN void kiln__transpose4x3(kv r0, kv r1, kv r2, kv r3, kv *x, kv *y, kv *z)
{
    kv t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    kv t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    *x = _mm256_shuffle_ps(t0, t2, 0x44);
    *y = _mm256_shuffle_ps(t0, t2, 0xEE);
    *z = _mm256_shuffle_ps(t1, t3, 0x44);
}

KILN__FN void kiln__skin_ld_unorm(const unsigned char *p, kv q[3])
{
    kv r[4];
    KILN__UNROLL
    for (int i = 0; i < 4; i++) {
        __m128i v = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(const void *)(p + 8 * i)),
                                       _mm_loadl_epi64((const __m128i *)(const void *)(p + 8 * (i + 4))));
        r[i] = _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(v)); /* vertex i | vertex i + 4 */
    }
    kiln__transpose4x3(r[0], r[1], r[2], r[3], &q[0], &q[1], &q[2]);
}

KILN__FN void kiln__skin_ld_oct(const unsigned char *p, kv *x, kv *y)
{
    __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);
    *x = _mm256_cvtepi32_ps(_mm256_srai_epi32(_mm256_slli_epi32(v, 16), 16));
    *y = _mm256_cvtepi32_ps(_mm256_srai_epi32(v, 16));
}

/* ---- gathers: blend per vertex, transpose to SoA rows ------------------------------------------ */

/* 8 registers of two 4-float columns each (A in the low lanes, B in the high lanes), lane l =
 * vertex l, into SoA rows: A's rows 0..rows-1 at out[r * 8], B's at out[(rows + r) * 8]. */
KILN__FN void kiln__transpose8(const kv *x, float *out, const int rows)
{
    kv t0 = _mm256_unpacklo_ps(x[0], x[1]), t1 = _mm256_unpackhi_ps(x[0], x[1]);
    kv t2 = _mm256_unpacklo_ps(x[2], x[3]), t3 = _mm256_unpackhi_ps(x[2], x[3]);
    kv u0 = _mm256_unpacklo_ps(x[4], x[5]), u1 = _mm256_unpackhi_ps(x[4], x[5]);
    kv u2 = _mm256_unpacklo_ps(x[6], x[7]), u3 = _mm256_unpackhi_ps(x[6], x[7]);
    kv lo[4], hi[4]; /* row r of A for vertices 0-3 | row r of B for vertices 0-3; hi: 4-7 */
    lo[0] = _mm256_shuffle_ps(t0, t2, 0x44), hi[0] = _mm256_shuffle_ps(u0, u2, 0x44);
    lo[1] = _mm256_shuffle_ps(t0, t2, 0xEE), hi[1] = _mm256_shuffle_ps(u0, u2, 0xEE);
    lo[2] = _mm256_shuffle_ps(t1, t3, 0x44), hi[2] = _mm256_shuffle_ps(u1, u3, 0x44);
    lo[3] = _mm256_shuffle_ps(t1, t3, 0xEE), hi[3] = _mm256_shuffle_ps(u1, u3, 0xEE);
    KILN__UNROLL
    for (int r = 0; r < rows; r++) {
        _mm256_storeu_ps(out + r * 8, _mm256_permute2f128_ps(lo[r], hi[r], 0x20));
        _mm256_storeu_ps(out + (rows + r) * 8, _mm256_permute2f128_ps(lo[r], hi[r], 0x31));
    }
}

/* ---- joints as record offsets ---------------------------------------------------------------- */

/* Byte offsets of joints j in an array of `size`-byte records (64: matrices, 96: dual
 * quaternions), by shifts: 32-bit multiplies are slow on some cores. */
KILN__FN __m256i kiln__record_offsets(__m256i j, const uint32_t size)
{
    __m256i o = _mm256_slli_epi32(j, 6);
    return size == 96u ? _mm256_add_epi32(o, _mm256_slli_epi32(j, 5)) : o;
}

/* The joints of the 8 vertices from v0 as byte offsets of their records, off[l * JS(N) + i]
 * for vertex v0 + l, influence i (padding u16s included): widening 16 joints per instruction
 * costs less than an address computation per influence. 1 when the batch may take this fast
 * path: whole, laid out as the baker writes joints and weights (joint stride JS(N) u16s,
 * weight stride N floats: every lane address is then a constant offset), and every u16 of its
 * joint block, padding included, at most max_joint. */
KILN__FN int kiln__fast_batch(const kiln__skin_job *job, uint32_t v0, uint32_t n, const uint32_t N,
                              const uint32_t size, uint32_t *off)
{
    if (n != 8u) return 0;
    if (N == 0) return 1;
    const uint32_t bytes = 8u * 2u * KILN__SKIN_JS(N); /* a multiple of 32 for every N */
    if (job->joint_stride != 2u * KILN__SKIN_JS(N) || job->weight_stride != 4u * N) return 0;
    const unsigned char *p = job->joints + (size_t)v0 * job->joint_stride;
    const __m256i max = _mm256_set1_epi16((short)job->max_joint);
    __m256i over = _mm256_setzero_si256();
    KILN__UNROLL
    for (uint32_t at = 0; at < bytes; at += 32) {
        __m256i j = _mm256_loadu_si256((const __m256i *)(const void *)(p + at));
        over = _mm256_or_si256(over, _mm256_subs_epu16(j, max));
        __m256i lo = kiln__record_offsets(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(j)), size);
        __m256i hi = kiln__record_offsets(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(j, 1)), size);
        _mm256_storeu_si256((__m256i *)(void *)(off + at / 2u), lo);
        _mm256_storeu_si256((__m256i *)(void *)(off + at / 2u + 8u), hi);
    }
    return _mm256_testz_si256(over, over);
}

/* ---- linear blend: M = Σ w K per vertex, then SoA ---------------------------------------------- */

/* One vertex: M as [c0|c1], [c2|c3]; all-zero weights (and N = 0: no skin) take the root. */
KILN__FN void kiln__lbs_lane(const unsigned char *mats, const uint32_t *off, const float *wp, const float *root,
                             const uint32_t N, kv *lo, kv *hi)
{
    const float *k = root;
    kv wv = _mm256_set1_ps(1.0f);
    if (N > 0) {
        /* all-zero weights (heaviest first: the first is 0) take the root, branch-free */
        int none = kiln__unweighted(wp);
        k = none ? root : (const float *)(const void *)(mats + off[0]);
        wv = _mm256_broadcast_ss(none ? &kiln__one : wp);
    }
    kv a = _mm256_mul_ps(wv, _mm256_loadu_ps(k)), b = _mm256_mul_ps(wv, _mm256_loadu_ps(k + 8));
    KILN__UNROLL
    for (uint32_t i = 1; i < N; i++) {
        const float *ki = (const float *)(const void *)(mats + off[i]);
        wv = _mm256_broadcast_ss(wp + i);
        a = _mm256_fmadd_ps(wv, _mm256_loadu_ps(ki), a);
        b = _mm256_fmadd_ps(wv, _mm256_loadu_ps(ki + 8), b);
    }
    *lo = a, *hi = b;
}

/* The blended matrices of a batch as 12 SoA rows m[c * 3 + r]: lane l's weights at w + l * N,
 * its record offsets at off + l * JS(N) (kiln__fast_batch, or staged by kiln__stage_batch). */
KILN__FN void kiln__lbs_gather(const kiln__skin_job *job, const float *w, const uint32_t N, const uint32_t *off, float *m)
{
    kv lo[8], hi[8];
    const unsigned char *mats = (const unsigned char *)job->matrices;
    KILN__UNROLL
    for (uint32_t l = 0; l < 8; l++)
        kiln__lbs_lane(mats, off + l * KILN__SKIN_JS(N), N ? w + l * N : NULL, job->root, N, &lo[l],
                       &hi[l]);
    kiln__transpose8(lo, m, 3);      /* columns 0, 1: m[0..5] */
    kiln__transpose8(hi, m + 48, 3); /* columns 2, 3: m[6..11] */
}

/* ---- dual quaternion blend: in SoA, one influence of 8 vertices at a time -------------------- */

/* The hemisphere test needs each influence's dot product with the vertex's heaviest one: per
 * vertex in AoS that is a horizontal sum and a broadcast of its sign per influence (about as
 * much work again as the blend). So each influence of the 8 vertices is transposed to SoA rows
 * (4 floats of 8 records: 4 loads, 4 inserts, 8 in-lane shuffles), and the dot products, signs
 * and blend are plain vertical FMAs that leave the blended rows ready for the outputs. */

/* In-lane 4x4 transpose: r[l] holds 4 floats of vertex l (low lane) and vertex l + 4 (high
 * lane); out[c] = element c of vertices 0-7. */
KILN__FN void kiln__transpose4x4(const kv *r, kv *out)
{
    kv t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    kv t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    out[0] = _mm256_shuffle_ps(t0, t2, 0x44);
    out[1] = _mm256_shuffle_ps(t0, t2, 0xEE);
    out[2] = _mm256_shuffle_ps(t1, t3, 0x44);
    out[3] = _mm256_shuffle_ps(t1, t3, 0xEE);
}

KILN__FN kv kiln__ld_pair(const float *lo, const float *hi)
{
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(lo)), _mm_loadu_ps(hi), 1);
}

/* The 4 floats at byte `at` of the records of one influence of 8 vertices (record offsets
 * off[l * js]) as SoA rows. */
KILN__FN void kiln__record_rows(const unsigned char *recs, const uint32_t *off, const uint32_t js, const uint32_t at,
                                kv *rows)
{
    kv r[4];
    KILN__UNROLL
    for (uint32_t l = 0; l < 4; l++)
        r[l] = kiln__ld_pair((const float *)(const void *)(recs + off[l * js] + at),
                             (const float *)(const void *)(recs + off[(l + 4) * js] + at));
    kiln__transpose4x4(r, rows);
}

/* The weights of 8 vertices (N each, packed from w) as SoA rows ws[i * 8 + l]. Other counts than
 * 4 and 8 load with masks: the last vertex's weights end at w + 8N, maybe the stream's end. */
KILN__FN void kiln__weight_rows(const float *w, const uint32_t N, float *ws)
{
    if (N <= 4) {
        const __m128i m = _mm_cmpgt_epi32(_mm_set1_epi32((int)N), _mm_setr_epi32(0, 1, 2, 3));
        kv r[4], rows[4];
        KILN__UNROLL
        for (uint32_t l = 0; l < 4; l++)
            r[l] = N == 4 ? kiln__ld_pair(w + l * N, w + (l + 4) * N)
                          : _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_maskload_ps(w + l * N, m)),
                                                 _mm_maskload_ps(w + (l + 4) * N, m), 1);
        kiln__transpose4x4(r, rows);
        KILN__UNROLL
        for (uint32_t i = 0; i < N; i++) _mm256_storeu_ps(ws + i * 8, rows[i]);
    } else {
        const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)N), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        kv r[8];
        KILN__UNROLL
        for (uint32_t l = 0; l < 8; l++) r[l] = N == 8 ? _mm256_loadu_ps(w + l * N) : _mm256_maskload_ps(w + l * N, m);
        kiln__transpose8(r, ws, 4);
    }
}

/* One vertex's stretch blended with the plain weights (no hemisphere: no horizontal work, so
 * per vertex in AoS as the linear blend, which loads a record once per influence where SoA rows
 * take a load and an insert per 4 floats): columns [s0|s1], s2; all-zero weights take the
 * root's. */
KILN__FN void kiln__stretch_lane(const unsigned char *dqs, const uint32_t *off, const float *wp,
                                 const kiln_skin_dual_quat *root, const uint32_t N, kv *s01, __m128 *s2)
{
    int none = kiln__unweighted(wp);
    const float *b = none ? root->stretch : (const float *)(const void *)(dqs + off[0] + 32u);
    kv wv = _mm256_broadcast_ss(none ? &kiln__one : wp);
    kv a01 = _mm256_mul_ps(wv, _mm256_loadu_ps(b));
    __m128 a2 = _mm_mul_ps(_mm256_castps256_ps128(wv), _mm_loadu_ps(b + 8));
    KILN__UNROLL
    for (uint32_t i = 1; i < N; i++) {
        b = (const float *)(const void *)(dqs + off[i] + 32u);
        wv = _mm256_broadcast_ss(wp + i);
        a01 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(b), a01);
        a2 = _mm_fmadd_ps(_mm256_castps256_ps128(wv), _mm_loadu_ps(b + 8), a2);
    }
    *s01 = a01, *s2 = a2;
}

/* The stretches of a batch as 9 SoA rows s[c * 3 + r] (N > 0). */
KILN__FN void kiln__dqs_stretch(const unsigned char *dqs, const uint32_t *off, const float *w, const uint32_t N,
                                const kiln_skin_dual_quat *root, float *s)
{
    kv s01[8];
    __m128 s2[8];
    kiln__reload(&off);
    KILN__UNROLL
    for (uint32_t l = 0; l < 8; l++) kiln__stretch_lane(dqs, off + l * KILN__SKIN_JS(N), w + l * N, root, N, &s01[l], &s2[l]);
    kiln__transpose8(s01, s, 3); /* columns 0, 1: s[0..5] */
    kv x, y, z;
    kiln__transpose4x3(_mm256_set_m128(s2[4], s2[0]), _mm256_set_m128(s2[5], s2[1]), _mm256_set_m128(s2[6], s2[2]),
                       _mm256_set_m128(s2[7], s2[3]), &x, &y, &z);
    _mm256_storeu_ps(s + 48, x), _mm256_storeu_ps(s + 56, y), _mm256_storeu_ps(s + 64, z);
}

/* Lanes in `none` (all-ones) take the root's 4 floats in SoA rows r; mostly there are none. */
KILN__FN void kiln__root_rows(kv *r, const float *root, kv none)
{
    if (_mm256_testz_ps(none, none)) return;
    KILN__UNROLL
    for (int c = 0; c < 4; c++) r[c] = _mm256_blendv_ps(r[c], _mm256_broadcast_ss(&root[c]), none);
}

/* The blended dual quaternions of a batch, normalised, as 8 SoA rows (real xyzw, dual xyzw) and
 * (S) the stretches as 9 rows s[c * 3 + r]: lane l's weights at w + l * N, its record offsets at
 * off + l * JS(N). All-zero weights (and N = 0: no skin) take the root. */
KILN__FN void kiln__dqs_gather(const kiln__skin_job *job, const float *w, const uint32_t N, const int S,
                               const uint32_t *off, float *q, float *s)
{
    const kiln_skin_dual_quat *root = job->root_dq;
    const unsigned char *dqs = (const unsigned char *)job->dual_quats;
    const uint32_t js = KILN__SKIN_JS(N);
    _Alignas(32) float ws[KILN__SKIN_MAX_INFLUENCES * 8], sw[KILN__SKIN_MAX_INFLUENCES * 8];
    kv acc[8], r0[4], none = _mm256_castsi256_ps(_mm256_set1_epi32(-1)), w0 = _mm256_set1_ps(1.0f);
    if (N > 0) {
        kiln__weight_rows(w, N, ws);
        w0 = _mm256_loadu_ps(ws);
        none = _mm256_cmp_ps(w0, _mm256_setzero_ps(), _CMP_EQ_OQ); /* also -0, as the scalar test */
        w0 = _mm256_blendv_ps(w0, _mm256_set1_ps(1.0f), none);
        kiln__record_rows(dqs, off, js, 0, r0);
        kiln__root_rows(r0, root->real, none);
    } else {
        KILN__UNROLL
        for (int c = 0; c < 4; c++) r0[c] = _mm256_broadcast_ss(&root->real[c]);
    }
    /* Two passes, so that the live rows fit the 16 registers: the real parts, which give the
     * signed weights (sw), then the dual parts with them. */
    KILN__UNROLL
    for (int c = 0; c < 4; c++) acc[c] = _mm256_mul_ps(w0, r0[c]);
    const kv sign = _mm256_set1_ps(-0.0f);
    KILN__UNROLL
    for (uint32_t i = 1; i < N; i++) {
        kv r[4];
        kiln__record_rows(dqs, off + i, js, 0, r);
        /* on the heaviest influence's hemisphere; summed as the scalar path does: (x + z) + (y + w) */
        kv dot = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(r0[0], r[0]), _mm256_mul_ps(r0[2], r[2])),
                               _mm256_add_ps(_mm256_mul_ps(r0[1], r[1]), _mm256_mul_ps(r0[3], r[3])));
        kv wi = _mm256_xor_ps(_mm256_loadu_ps(ws + i * 8), _mm256_and_ps(dot, sign));
        _mm256_storeu_ps(sw + i * 8, wi);
        KILN__UNROLL
        for (int c = 0; c < 4; c++) acc[c] = _mm256_fmadd_ps(wi, r[c], acc[c]);
    }
    kiln__reload(&off);
    if (N > 0) {
        kiln__record_rows(dqs, off, js, 16, &acc[4]);
        kiln__root_rows(&acc[4], root->dual, none);
        KILN__UNROLL
        for (int c = 4; c < 8; c++) acc[c] = _mm256_mul_ps(w0, acc[c]);
    } else {
        KILN__UNROLL
        for (int c = 0; c < 4; c++) acc[4 + c] = _mm256_broadcast_ss(&root->dual[c]);
    }
    KILN__UNROLL
    for (uint32_t i = 1; i < N; i++) {
        kv d[4], wi = _mm256_loadu_ps(sw + i * 8);
        kiln__record_rows(dqs, off + i, js, 16, d);
        KILN__UNROLL
        for (int c = 0; c < 4; c++) acc[4 + c] = _mm256_fmadd_ps(wi, d[c], acc[4 + c]);
    }
    /* one refined reciprocal square root of |real|² scales both parts */
    kv len2 = kv_fma(acc[0], acc[0], kv_fma(acc[2], acc[2], kv_fma(acc[1], acc[1], kv_mul(acc[3], acc[3]))));
    kv inv = kv_rsqrt(kv_max(len2, kv_set1(1e-30f)));
    KILN__UNROLL
    for (int c = 0; c < 8; c++) _mm256_storeu_ps(q + c * 8, _mm256_mul_ps(acc[c], inv));
    if (!S) return;
    if (N > 0) {
        kiln__dqs_stretch(dqs, off, w, N, root, s);
    } else {
        KILN__UNROLL
        for (int c = 0; c < 3; c++)
            KILN__UNROLL
            for (int r = 0; r < 3; r++) _mm256_storeu_ps(s + (c * 3 + r) * 8, _mm256_broadcast_ss(&root->stretch[c * 4 + r]));
    }
}

#include "skin_simd.h"

#endif /* KILN__SIMD_AVX2 */
