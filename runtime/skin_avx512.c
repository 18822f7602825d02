/* Skinning kernels, AVX-512 (F, VL, DQ, BW): 16 vertices per iteration. Compiled for that
 * target per function (simd.h) and selected at run time (the kernel table, simd_table.h).
 *
 * The scheme of skin_avx2.c at twice the width, where the wider registers pay:
 *   - a bone's skinning matrix (16 floats, one column per 128-bit lane) is one register, so the
 *     linear blend costs one load and one FMA per vertex and influence (two of each on AVX2);
 *   - 16 blended matrices become 12 SoA rows by in-lane 4x4 transposes, then a 4x4 transpose
 *     of 128-bit blocks (shuffle_f32x4);
 *   - the dual quaternions are transposed per influence as on AVX2, but a register takes two
 *     whole records (real and dual part, 256 bits each), so 16 loads and 8 inserts feed the
 *     8 rows where AVX2 spends 32 of each; 32 registers hold the real and dual accumulators
 *     together, so one pass over the influences does both;
 *   - packed float3 streams are (de)interleaved with two-source permutes, 2 per 16 floats.
 * Everything after the gathers is the vertical code of skin_simd.h, 16 lanes wide.
 */
#include <string.h>

#include "anim_internal.h" /* simd_ops.h builds on its constants */
#include "skin_internal.h"

#if KILN__SIMD_AVX512
#define KILN__OPS_AVX512 1
#include "simd_ops.h"

/* KILN__UNROLL (skin_internal.h) for the loops over the 16 lanes. Every loop here must unroll
 * completely: a rolled one keeps its arrays of vectors (accumulators, rows) on the stack and
 * runs at half speed. */
#if defined(__clang__)
#define KILN__UNROLL16 _Pragma("unroll 16")
#elif defined(__GNUC__)
#define KILN__UNROLL16 _Pragma("GCC unroll 16")
#else
#define KILN__UNROLL16
#endif

/* ---- packed streams ---------------------------------------------------------------------------- */

/* 16 packed float3 (3 registers) -> x, y, z: each component takes what the first two registers
 * hold of it, then the rest from the third. */
KILN__FN void kiln__skin_ld3(const float *p, kv *x, kv *y, kv *z)
{
    const __m512i x1 = _mm512_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 0, 0, 0, 0, 0);
    const __m512i x2 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 17, 20, 23, 26, 29);
    const __m512i y1 = _mm512_setr_epi32(1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 0, 0, 0, 0, 0);
    const __m512i y2 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 18, 21, 24, 27, 30);
    const __m512i z1 = _mm512_setr_epi32(2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 0, 0, 0, 0, 0, 0);
    const __m512i z2 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 19, 22, 25, 28, 31);
    kv a = _mm512_loadu_ps(p), b = _mm512_loadu_ps(p + 16), c = _mm512_loadu_ps(p + 32);
    *x = _mm512_permutex2var_ps(_mm512_permutex2var_ps(a, x1, b), x2, c);
    *y = _mm512_permutex2var_ps(_mm512_permutex2var_ps(a, y1, b), y2, c);
    *z = _mm512_permutex2var_ps(_mm512_permutex2var_ps(a, z1, b), z2, c);
}

/* The inverse: each 16-float block of the output takes its x and y, then its z. */
KILN__FN void kiln__skin_st3(float *p, kv x, kv y, kv z)
{
    const __m512i a1 = _mm512_setr_epi32(0, 16, 0, 1, 17, 0, 2, 18, 0, 3, 19, 0, 4, 20, 0, 5);
    const __m512i a2 = _mm512_setr_epi32(0, 1, 16, 3, 4, 17, 6, 7, 18, 9, 10, 19, 12, 13, 20, 15);
    const __m512i b1 = _mm512_setr_epi32(21, 0, 6, 22, 0, 7, 23, 0, 8, 24, 0, 9, 25, 0, 10, 26);
    const __m512i b2 = _mm512_setr_epi32(0, 21, 2, 3, 22, 5, 6, 23, 8, 9, 24, 11, 12, 25, 14, 15);
    const __m512i c1 = _mm512_setr_epi32(0, 11, 27, 0, 12, 28, 0, 13, 29, 0, 14, 30, 0, 15, 31, 0);
    const __m512i c2 = _mm512_setr_epi32(26, 1, 2, 27, 4, 5, 28, 7, 8, 29, 10, 11, 30, 13, 14, 31);
    _mm512_storeu_ps(p, _mm512_permutex2var_ps(_mm512_permutex2var_ps(x, a1, y), a2, z));
    _mm512_storeu_ps(p + 16, _mm512_permutex2var_ps(_mm512_permutex2var_ps(x, b1, y), b2, z));
    _mm512_storeu_ps(p + 32, _mm512_permutex2var_ps(_mm512_permutex2var_ps(x, c1, y), c2, z));
}

/* 16 UNORM16x4: component c of vertex v is u16 4v + c of the 128 bytes. */
KILN__FN void kiln__skin_ld_unorm(const unsigned char *p, kv q[3])
{
    __m512i a = _mm512_loadu_si512((const void *)p), b = _mm512_loadu_si512((const void *)(p + 64));
    KILN__UNROLL
    for (int c = 0; c < 3; c++) {
        __m512i idx = _mm512_add_epi16(_mm512_set1_epi16((short)c),
                                       _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 60, 56, 52,
                                                        48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0));
        __m256i u = _mm512_castsi512_si256(_mm512_permutex2var_epi16(a, idx, b));
        q[c] = _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(u));
    }
}

KILN__FN void kiln__skin_ld_oct(const unsigned char *p, kv *x, kv *y)
{
    __m512i v = _mm512_loadu_si512((const void *)p);
    *x = _mm512_cvtepi32_ps(_mm512_srai_epi32(_mm512_slli_epi32(v, 16), 16));
    *y = _mm512_cvtepi32_ps(_mm512_srai_epi32(v, 16));
}

/* ---- transposes -------------------------------------------------------------------------------- */

/* In-lane 4x4 transpose: r[l] holds 4 floats per 128-bit lane; out[c] element l of each lane =
 * element c of r[l]'s lane. */
KILN__FN void kiln__transpose4x4(const kv *r, kv *out, const int rows)
{
    kv t0 = _mm512_unpacklo_ps(r[0], r[1]), t1 = _mm512_unpackhi_ps(r[0], r[1]);
    kv t2 = _mm512_unpacklo_ps(r[2], r[3]), t3 = _mm512_unpackhi_ps(r[2], r[3]);
    out[0] = _mm512_shuffle_ps(t0, t2, 0x44);
    if (rows > 1) out[1] = _mm512_shuffle_ps(t0, t2, 0xEE);
    if (rows > 2) out[2] = _mm512_shuffle_ps(t1, t3, 0x44);
    if (rows > 3) out[3] = _mm512_shuffle_ps(t1, t3, 0xEE);
}

/* 16 registers of 4 columns each (lane c = column c, element r = row r), register l = vertex l,
 * into SoA rows out[(c * 3 + r) * 16] for columns c < cols and rows r < 3: in-lane transposes
 * per group of 4 vertices, then a 4x4 transpose of the 128-bit blocks of the 4 groups. */
KILN__FN void kiln__transpose16(const kv *x, float *out, const int cols)
{
    kv g[4][3]; /* g[group][row]: lane c = column c of row `row`, vertices 4 group .. 4 group + 3 */
    KILN__UNROLL
    for (int k = 0; k < 4; k++) kiln__transpose4x4(x + 4 * k, g[k], 3);
    KILN__UNROLL
    for (int r = 0; r < 3; r++) {
        kv u0 = _mm512_shuffle_f32x4(g[0][r], g[1][r], 0x44), u1 = _mm512_shuffle_f32x4(g[0][r], g[1][r], 0xEE);
        kv u2 = _mm512_shuffle_f32x4(g[2][r], g[3][r], 0x44), u3 = _mm512_shuffle_f32x4(g[2][r], g[3][r], 0xEE);
        _mm512_storeu_ps(out + r * 16, _mm512_shuffle_f32x4(u0, u2, 0x88));
        _mm512_storeu_ps(out + (3 + r) * 16, _mm512_shuffle_f32x4(u0, u2, 0xDD));
        _mm512_storeu_ps(out + (6 + r) * 16, _mm512_shuffle_f32x4(u1, u3, 0x88));
        if (cols > 3) _mm512_storeu_ps(out + (9 + r) * 16, _mm512_shuffle_f32x4(u1, u3, 0xDD));
    }
}

/* ---- joints as record offsets ---------------------------------------------------------------- */

/* Byte offsets of joints j in `size`-byte records (64: matrices, 96: dual quaternions). */
KILN__FN __m512i kiln__record_offsets(__m512i j, const uint32_t size)
{
    __m512i o = _mm512_slli_epi32(j, 6);
    return size == 96u ? _mm512_add_epi32(o, _mm512_slli_epi32(j, 5)) : o;
}

/* As on AVX2 (skin_avx2.c): the 16 vertices' joints as record offsets off[l * JS(N) + i], 1
 * when the batch is whole, at the baker's strides, with every joint u16 at most max_joint. */
KILN__FN int kiln__fast_batch(const kiln__skin_job *job, uint32_t v0, uint32_t n, const uint32_t N,
                              const uint32_t size, uint32_t *off)
{
    if (n != 16u) return 0;
    if (N == 0) return 1;
    const uint32_t bytes = 16u * 2u * KILN__SKIN_JS(N); /* a multiple of 64 for every N */
    if (job->joint_stride != 2u * KILN__SKIN_JS(N) || job->weight_stride != 4u * N) return 0;
    const unsigned char *p = job->joints + (size_t)v0 * job->joint_stride;
    const __m256i max = _mm256_set1_epi16((short)job->max_joint);
    __m256i over = _mm256_setzero_si256();
    KILN__UNROLL
    for (uint32_t at = 0; at < bytes; at += 32) {
        __m256i j = _mm256_loadu_si256((const __m256i *)(const void *)(p + at));
        over = _mm256_or_si256(over, _mm256_subs_epu16(j, max));
        _mm512_storeu_si512((void *)(off + at / 2u), kiln__record_offsets(_mm512_cvtepu16_epi32(j), size));
    }
    return _mm256_testz_si256(over, over);
}

/* ---- linear blend: M = Σ w K per vertex, then SoA ---------------------------------------------- */

/* One vertex's blended matrix, one column per lane; all-zero weights (and N = 0) take the root. */
KILN__FN kv kiln__lbs_lane(const unsigned char *mats, const uint32_t *off, const float *wp, const float *root,
                           const uint32_t N)
{
    const float *k = root;
    float w0 = 1.0f;
    if (N > 0) {
        int none = kiln__unweighted(wp);
        k = none ? root : (const float *)(const void *)(mats + off[0]);
        w0 = none ? 1.0f : wp[0];
    }
    kv a = _mm512_mul_ps(_mm512_set1_ps(w0), _mm512_loadu_ps(k));
    KILN__UNROLL
    for (uint32_t i = 1; i < N; i++)
        a = _mm512_fmadd_ps(_mm512_set1_ps(wp[i]), _mm512_loadu_ps((const float *)(const void *)(mats + off[i])), a);
    return a;
}

/* The blended matrices of a batch as 12 SoA rows m[c * 3 + r] (the template's contract). */
KILN__FN void kiln__lbs_gather(const kiln__skin_job *job, const float *w, const uint32_t N, const uint32_t *off, float *m)
{
    kv x[16];
    const unsigned char *mats = (const unsigned char *)job->matrices;
    KILN__UNROLL16
    for (uint32_t l = 0; l < 16; l++)
        x[l] = kiln__lbs_lane(mats, off + l * KILN__SKIN_JS(N), N ? w + l * N : NULL, job->root, N);
    kiln__transpose16(x, m, 4);
}

/* ---- dual quaternion blend: in SoA, one influence of 16 vertices at a time ------------------- */

/* The real and dual parts (8 floats at byte 0) of the records of one influence of 16 vertices
 * as 8 SoA rows: real xyzw, dual xyzw. A register holds two records, vertex k with 4 + k (k <
 * 4) or 8 + k with 12 + k, so that after the in-lane transposes of each group of 4 registers
 * the 128-bit blocks gather in vertex order. */
KILN__FN void kiln__dual_quat_rows(const unsigned char *recs, const uint32_t *off, const uint32_t js, kv *rows)
{
#define KILN__DQ_(v) ((const float *)(const void *)(recs + off[(v) * js]))
    kv z[8], g[2][4];
    KILN__UNROLL
    for (uint32_t k = 0; k < 4; k++) {
        z[k] = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(KILN__DQ_(k))), _mm256_loadu_ps(KILN__DQ_(4 + k)), 1);
        z[4 + k] = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(KILN__DQ_(8 + k))),
                                      _mm256_loadu_ps(KILN__DQ_(12 + k)), 1);
    }
#undef KILN__DQ_
    kiln__transpose4x4(z, g[0], 4); /* lanes: real, dual of vertices 0-3, real, dual of 4-7 */
    kiln__transpose4x4(z + 4, g[1], 4);
    KILN__UNROLL
    for (int c = 0; c < 4; c++) {
        rows[c] = _mm512_shuffle_f32x4(g[0][c], g[1][c], 0x88);
        rows[4 + c] = _mm512_shuffle_f32x4(g[0][c], g[1][c], 0xDD);
    }
}

/* Weights first .. first + 3 of the 16 vertices (N each, packed from w) as SoA rows: register l
 * takes vertices l, l + 4, l + 8, l + 12 in its lanes, so that after the in-lane transpose
 * element l of lane j is vertex 4j + l. Fewer than 4 weights load with a mask: nothing past the
 * stream's last weight is read. */
KILN__FN void kiln__weight_quad(const float *w, const uint32_t N, const uint32_t first, kv *rows)
{
    const uint32_t count = N - first < 4u ? N - first : 4u;
    const __m128i m = _mm_cmpgt_epi32(_mm_set1_epi32((int)count), _mm_setr_epi32(0, 1, 2, 3));
    kv r[4];
    KILN__UNROLL
    for (uint32_t l = 0; l < 4; l++) {
        const float *p = w + l * N + first;
        __m512 z = _mm512_castps128_ps512(count == 4u ? _mm_loadu_ps(p) : _mm_maskload_ps(p, m));
        z = _mm512_insertf32x4(z, count == 4u ? _mm_loadu_ps(p + 4 * N) : _mm_maskload_ps(p + 4 * N, m), 1);
        z = _mm512_insertf32x4(z, count == 4u ? _mm_loadu_ps(p + 8 * N) : _mm_maskload_ps(p + 8 * N, m), 2);
        r[l] = _mm512_insertf32x4(z, count == 4u ? _mm_loadu_ps(p + 12 * N) : _mm_maskload_ps(p + 12 * N, m), 3);
    }
    kiln__transpose4x4(r, rows, 4);
}

/* One vertex's stretch blended with the plain weights (per vertex, as the linear blend): 3
 * columns of 4 floats (the record's flag and padding after them are masked off). */
KILN__FN kv kiln__stretch_lane(const unsigned char *dqs, const uint32_t *off, const float *wp,
                               const kiln_skin_dual_quat *root, const uint32_t N)
{
    int none = kiln__unweighted(wp);
    const float *b = none ? root->stretch : (const float *)(const void *)(dqs + off[0] + 32u);
    kv a = _mm512_mul_ps(_mm512_set1_ps(none ? 1.0f : wp[0]), _mm512_maskz_loadu_ps(0x0FFF, b));
    KILN__UNROLL
    for (uint32_t i = 1; i < N; i++) {
        b = (const float *)(const void *)(dqs + off[i] + 32u);
        a = _mm512_fmadd_ps(_mm512_set1_ps(wp[i]), _mm512_maskz_loadu_ps(0x0FFF, b), a);
    }
    return a;
}

/* The blended dual quaternions of a batch, normalised, as 8 SoA rows (real xyzw, dual xyzw) and
 * (S) the stretches as 9 rows s[c * 3 + r]; all-zero weights (and N = 0) take the root. */
KILN__FN void kiln__dqs_gather(const kiln__skin_job *job, const float *w, const uint32_t N, const int S,
                               const uint32_t *off, float *q, float *s)
{
    const kiln_skin_dual_quat *root = job->root_dq;
    const unsigned char *dqs = (const unsigned char *)job->dual_quats;
    const uint32_t js = KILN__SKIN_JS(N);
    kv acc[8], r0[4], ws[KILN__SKIN_MAX_INFLUENCES];
    if (N > 0) {
        kiln__weight_quad(w, N, 0, ws);
        if (N > 4) kiln__weight_quad(w, N, 4, ws + 4);
        kv rd[8];
        kiln__dual_quat_rows(dqs, off, js, rd);
        KILN__UNROLL
        for (int c = 0; c < 4; c++) r0[c] = rd[c], acc[4 + c] = rd[4 + c];
        /* all-zero weights (also -0, as the scalar test) take the root with weight 1 */
        __mmask16 none = _mm512_cmp_ps_mask(ws[0], _mm512_setzero_ps(), _CMP_EQ_OQ);
        if (none) {
            ws[0] = _mm512_mask_blend_ps(none, ws[0], _mm512_set1_ps(1.0f));
            KILN__UNROLL
            for (int c = 0; c < 4; c++) {
                r0[c] = _mm512_mask_blend_ps(none, r0[c], _mm512_set1_ps(root->real[c]));
                acc[4 + c] = _mm512_mask_blend_ps(none, acc[4 + c], _mm512_set1_ps(root->dual[c]));
            }
        }
        KILN__UNROLL
        for (int c = 0; c < 4; c++) acc[c] = _mm512_mul_ps(ws[0], r0[c]), acc[4 + c] = _mm512_mul_ps(ws[0], acc[4 + c]);
    } else {
        KILN__UNROLL
        for (int c = 0; c < 4; c++) acc[c] = _mm512_set1_ps(root->real[c]), acc[4 + c] = _mm512_set1_ps(root->dual[c]);
    }
    const kv sign = _mm512_set1_ps(-0.0f);
    KILN__UNROLL
    for (uint32_t i = 1; i < N; i++) {
        kv rd[8], *r = rd, *d = rd + 4;
        kiln__dual_quat_rows(dqs, off + i, js, rd);
        /* on the heaviest influence's hemisphere; summed as the scalar path does: (x + z) + (y + w) */
        kv dot = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(r0[0], r[0]), _mm512_mul_ps(r0[2], r[2])),
                               _mm512_add_ps(_mm512_mul_ps(r0[1], r[1]), _mm512_mul_ps(r0[3], r[3])));
        kv wi = _mm512_xor_ps(ws[i], _mm512_and_ps(dot, sign));
        KILN__UNROLL
        for (int c = 0; c < 4; c++) acc[c] = _mm512_fmadd_ps(wi, r[c], acc[c]), acc[4 + c] = _mm512_fmadd_ps(wi, d[c], acc[4 + c]);
    }
    /* one refined reciprocal square root of |real|² scales both parts */
    kv len2 = kv_fma(acc[0], acc[0], kv_fma(acc[2], acc[2], kv_fma(acc[1], acc[1], kv_mul(acc[3], acc[3]))));
    kv inv = kv_rsqrt(kv_max(len2, kv_set1(1e-30f)));
    KILN__UNROLL
    for (int c = 0; c < 8; c++) _mm512_storeu_ps(q + c * 16, _mm512_mul_ps(acc[c], inv));
    if (!S) return;
    if (N > 0) {
        kiln__reload(&off); /* skin_internal.h */
        kv x[16];
        KILN__UNROLL16
        for (uint32_t l = 0; l < 16; l++) x[l] = kiln__stretch_lane(dqs, off + l * js, w + l * N, root, N);
        kiln__transpose16(x, s, 3);
    } else {
        KILN__UNROLL
        for (int c = 0; c < 3; c++)
            KILN__UNROLL
            for (int r = 0; r < 3; r++) _mm512_storeu_ps(s + (c * 3 + r) * 16, _mm512_set1_ps(root->stretch[c * 4 + r]));
    }
}

#include "skin_simd.h"

#endif /* KILN__SIMD_AVX512 */
