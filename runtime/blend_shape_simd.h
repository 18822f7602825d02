/* runtime/blend_shape_simd.h - the blend-shape kernels (blend_shape_internal.h) written once on
 * 4-float vectors and compiled per path: blend_shape_sse2.c and blend_shape_avx2.c define
 * KILN__OPS_SSE2 or KILN__OPS_AVX2 and include this file.
 *
 * Private template. A position is one __m128 (x, y, z, 0) read and written as 8 + 4 bytes, so
 * the scatter-add is two loads, a multiply-add and two stores per delta, and neighbouring
 * vertices never share an access. The AVX2 path fuses the multiply-add (FMA) and decodes
 * quantised positions two vertices per 256-bit register. The reference semantics are the
 * scalar kernels in blend_shape_scalar.c.
 *
 * Own layout, not cglm's: the positions are packed float3 in the caller's buffer, so a vertex
 * is loaded and stored as exactly 12 bytes (8 + 4) into a 4-float register. cglm's vec3
 * routines are scalar, and its vec4 ones would read and write 16 bytes: past the end of the
 * last vertex, and into the 4 bytes after each element, which the API promises not to write
 * (an interleaved vertex buffer, or the next vertex another thread is deforming).
 */
#include <immintrin.h>
#include <string.h>

#include "blend_shape_internal.h"

#if !defined(KILN__OPS_AVX2) && !defined(KILN__OPS_SSE2)
#error "define KILN__OPS_AVX2 or KILN__OPS_SSE2 before including blend_shape_simd.h"
#endif
#include "anim_internal.h" /* simd_ops.h builds on its constants */
#include "simd_ops.h"      /* KILN__FN, KILN__KERNEL, KILN__SFX, k4_fma per path */

/* Three floats into lanes 0-2 (lane 3 zero), reading exactly 12 bytes. */
KILN__FN __m128 kiln__bs_load3(const float *p)
{
    __m128 xy = _mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)(const void *)p);
    return _mm_movelh_ps(xy, _mm_load_ss(p + 2));
}

/* Lanes 0-2 to three floats, writing exactly 12 bytes. */
KILN__FN void kiln__bs_store3(float *p, __m128 v)
{
    _mm_storel_pi((__m64 *)(void *)p, v);
    _mm_store_ss(p + 2, _mm_movehl_ps(v, v));
}

/* ---- base ------------------------------------------------------------------------------------ */

/* 4 vertices (x, y, z, unused) into 48 packed bytes. */
KILN__FN void kiln__bs_pack4(float *p, __m128 s0, __m128 s1, __m128 s2, __m128 s3)
{
    __m128 t0 = _mm_shuffle_ps(s0, s1, _MM_SHUFFLE(0, 0, 2, 2));                 /* z0 z0 x1 x1 */
    __m128 t2 = _mm_shuffle_ps(s2, s3, _MM_SHUFFLE(0, 0, 2, 2));                 /* z2 z2 x3 x3 */
    _mm_storeu_ps(p, _mm_shuffle_ps(s0, t0, _MM_SHUFFLE(2, 0, 1, 0)));          /* x0 y0 z0 x1 */
    _mm_storeu_ps(p + 4, _mm_shuffle_ps(s1, s2, _MM_SHUFFLE(1, 0, 2, 1)));      /* y1 z1 x2 y2 */
    _mm_storeu_ps(p + 8, _mm_shuffle_ps(t2, s3, _MM_SHUFFLE(2, 1, 2, 0)));      /* z2 x3 y3 z3 */
}

/* Quantised positions (4 u16 per vertex: x, y, z, 0), decoded. */
KILN__FN void kiln__bs_dequantize(const kiln__bs_job *job, uint32_t c0, uint32_t m)
{
    const uint16_t *q = (const uint16_t *)job->base + 4 * (size_t)c0;
    unsigned char *out = job->out + (size_t)c0 * job->stride;
    const __m128 sc = _mm_loadu_ps(job->dq_scale), of = _mm_loadu_ps(job->dq_offset);
    const __m128i zero = _mm_setzero_si128();
    uint32_t i = 0;
    if (job->stride == 12u) {
#if defined(KILN__OPS_AVX2)
        /* two vertices per register: 16 bytes of u16 widened to 8 x i32 */
        const __m256 sc2 = _mm256_broadcast_ps((const __m128 *)(const void *)job->dq_scale);
        const __m256 of2 = _mm256_broadcast_ps((const __m128 *)(const void *)job->dq_offset);
        for (; i + 4 <= m; i += 4) {
            const __m128i *qi = (const __m128i *)(const void *)(q + 4 * (size_t)i);
            __m256 a = _mm256_fmadd_ps(sc2, _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(_mm_loadu_si128(qi))), of2);
            __m256 b = _mm256_fmadd_ps(sc2, _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(_mm_loadu_si128(qi + 1))), of2);
            kiln__bs_pack4((float *)(void *)(out + 12 * (size_t)i), _mm256_castps256_ps128(a),
                           _mm256_extractf128_ps(a, 1), _mm256_castps256_ps128(b), _mm256_extractf128_ps(b, 1));
        }
#else
        for (; i + 4 <= m; i += 4) {
            const __m128i *qi = (const __m128i *)(const void *)(q + 4 * (size_t)i);
            __m128i a = _mm_loadu_si128(qi), b = _mm_loadu_si128(qi + 1);
            __m128 s0 = k4_fma(sc, _mm_cvtepi32_ps(_mm_unpacklo_epi16(a, zero)), of);
            __m128 s1 = k4_fma(sc, _mm_cvtepi32_ps(_mm_unpackhi_epi16(a, zero)), of);
            __m128 s2 = k4_fma(sc, _mm_cvtepi32_ps(_mm_unpacklo_epi16(b, zero)), of);
            __m128 s3 = k4_fma(sc, _mm_cvtepi32_ps(_mm_unpackhi_epi16(b, zero)), of);
            kiln__bs_pack4((float *)(void *)(out + 12 * (size_t)i), s0, s1, s2, s3);
        }
#endif
    }
    for (; i < m; i++) {
        __m128i v = _mm_unpacklo_epi16(_mm_loadl_epi64((const __m128i *)(const void *)(q + 4 * (size_t)i)), zero);
        kiln__bs_store3((float *)(void *)(out + (size_t)i * job->stride), k4_fma(sc, _mm_cvtepi32_ps(v), of));
    }
}

KILN__KERNEL void KILN__SFX(kiln__bs_base)(const kiln__bs_job *job, uint32_t c0, uint32_t m)
{
    if (job->quantized) {
        kiln__bs_dequantize(job, c0, m);
        return;
    }
    const float *p = (const float *)job->base + 3 * (size_t)c0;
    unsigned char *out = job->out + (size_t)c0 * job->stride;
    if (job->stride == 12u) {
        memcpy(out, p, (size_t)m * 12u);
        return;
    }
    for (uint32_t i = 0; i < m; i++)
        kiln__bs_store3((float *)(void *)(out + (size_t)i * job->stride), kiln__bs_load3(p + 3 * (size_t)i));
}

/* ---- add ---------------------------------------------------------------------------------------- */

/* out[v] += w · d for one vertex: 8 + 4 byte accesses, so that neighbouring vertices never
 * share a load or store (no store-forwarding stalls when consecutive vertices are listed). */
KILN__FN void kiln__bs_add1(unsigned char *out, uint32_t stride, uint32_t v, __m128 d, __m128 wv)
{
    float *o = (float *)(void *)(out + (size_t)v * stride);
    kiln__bs_store3(o, k4_fma(d, wv, kiln__bs_load3(o)));
}

KILN__KERNEL void KILN__SFX(kiln__bs_add)(const kiln__bs_job *job, const uint32_t *idx, const float *d,
                                                uint32_t count, uint32_t c0, uint32_t m, float w, int tail)
{
    unsigned char *out = job->out;
    const uint32_t stride = job->stride;
    /* lane 3 of the weight is 0: a 16-byte load of a delta takes the next delta's x there,
     * which must not reach the sum (deltas are finite, so 0 · x = 0) */
    const __m128 wv = _mm_set_ps(0.0f, w, w, w);
    /* 16-byte loads of d + 3j read 4 bytes past delta j: fine except for the shape's last */
    uint32_t wide = tail && count ? count - 1u : count;
    uint32_t j = 0;
    /* four vertices per step (indices are distinct): the loads are issued before the stores,
     * so the adds of different vertices overlap */
    for (; j + 4 <= wide; j += 4) {
        uint32_t v0 = idx[j], v1 = idx[j + 1], v2 = idx[j + 2], v3 = idx[j + 3];
        if (KILN__UNLIKELY((v0 - c0 >= m) | (v1 - c0 >= m) | (v2 - c0 >= m) | (v3 - c0 >= m))) break;
        float *o0 = (float *)(void *)(out + (size_t)v0 * stride), *o1 = (float *)(void *)(out + (size_t)v1 * stride);
        float *o2 = (float *)(void *)(out + (size_t)v2 * stride), *o3 = (float *)(void *)(out + (size_t)v3 * stride);
        const float *dj = d + 3 * (size_t)j;
        __m128 r0 = k4_fma(_mm_loadu_ps(dj), wv, kiln__bs_load3(o0));
        __m128 r1 = k4_fma(_mm_loadu_ps(dj + 3), wv, kiln__bs_load3(o1));
        __m128 r2 = k4_fma(_mm_loadu_ps(dj + 6), wv, kiln__bs_load3(o2));
        __m128 r3 = k4_fma(_mm_loadu_ps(dj + 9), wv, kiln__bs_load3(o3));
        kiln__bs_store3(o0, r0), kiln__bs_store3(o1, r1), kiln__bs_store3(o2, r2), kiln__bs_store3(o3, r3);
    }
    for (; j < count; j++) { /* the rest, and any step above that met an index outside the chunk */
        uint32_t v = idx[j];
        if (KILN__UNLIKELY(v - c0 >= m)) continue;
        __m128 dj = j < wide ? _mm_loadu_ps(d + 3 * (size_t)j) : kiln__bs_load3(d + 3 * (size_t)j);
        kiln__bs_add1(out, stride, v, dj, wv);
    }
}
