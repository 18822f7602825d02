/* runtime/simd_ops.h - the vector vocabulary the SIMD kernel templates are written in.
 *
 * Private. A kernel file defines KILN__OPS_AVX512, KILN__OPS_AVX2 or KILN__OPS_SSE2 and includes
 * this header, then a template (anim_sample_simd.h, pose_simd.h, skin_simd.h). Two widths:
 *   kv   one SoA vector: 16 lanes (AVX-512: the skinning template only), 8 (AVX2) or 4 (SSE2,
 *        two vectors per 8-lane block);
 *   k4   4 floats, for per-bone 4x4 matrix columns (both paths).
 * kv_fma(a, b, c) = a·b + c, fused on AVX2+FMA. Loads and stores are unaligned (same speed on
 * aligned data; callers only promise float alignment). Every function carries KILN__FN so the
 * AVX2 variants are compiled for that target without a global -mavx2.
 */
#ifndef KILN_SIMD_OPS_H
#define KILN_SIMD_OPS_H

#include <float.h>
#include <immintrin.h>
#include <stdint.h>

#include "kiln/blob_format.h"

/* Helpers must inline into the kernels: vectors passed through a call live in memory. */
#if defined(__GNUC__) || defined(__clang__)
#define KILN__INLINE static inline __attribute__((always_inline))
#else
#define KILN__INLINE static inline
#endif

#if defined(KILN__OPS_AVX2)
#define KILN__FN KILN__TARGET_AVX2 KILN__INLINE
#define KILN__KERNEL KILN__TARGET_AVX2
#define KILN__SFX(name) name##_avx2
#define KV_W 8

typedef __m256 kv;
typedef __m256i kvi;
KILN__FN kv kv_ld(const float *p) { return _mm256_loadu_ps(p); }
KILN__FN void kv_st(float *p, kv v) { _mm256_storeu_ps(p, v); }
KILN__FN kv kv_set1(float f) { return _mm256_set1_ps(f); }
KILN__FN kv kv_zero(void) { return _mm256_setzero_ps(); }
KILN__FN kv kv_add(kv a, kv b) { return _mm256_add_ps(a, b); }
KILN__FN kv kv_sub(kv a, kv b) { return _mm256_sub_ps(a, b); }
KILN__FN kv kv_mul(kv a, kv b) { return _mm256_mul_ps(a, b); }
KILN__FN kv kv_fma(kv a, kv b, kv c) { return _mm256_fmadd_ps(a, b, c); }
KILN__FN kv kv_fnma(kv a, kv b, kv c) { return _mm256_fnmadd_ps(a, b, c); } /* c - a·b */
KILN__FN kv kv_and(kv a, kv b) { return _mm256_and_ps(a, b); }
KILN__FN kv kv_andnot(kv a, kv b) { return _mm256_andnot_ps(a, b); } /* ~a & b */
KILN__FN kv kv_or(kv a, kv b) { return _mm256_or_ps(a, b); }
KILN__FN kv kv_xor(kv a, kv b) { return _mm256_xor_ps(a, b); }
KILN__FN kv kv_max(kv a, kv b) { return _mm256_max_ps(a, b); }
KILN__FN kv kv_min(kv a, kv b) { return _mm256_min_ps(a, b); }
KILN__FN kv kv_div(kv a, kv b) { return _mm256_div_ps(a, b); }
KILN__FN kv kv_sqrt(kv a) { return _mm256_sqrt_ps(a); }
KILN__FN kv kv_rsqrt0(kv a) { return _mm256_rsqrt_ps(a); }
KILN__FN kv kv_rcp0(kv a) { return _mm256_rcp_ps(a); }
KILN__FN kv kv_lt(kv a, kv b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
KILN__FN kv kv_gt(kv a, kv b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
KILN__FN kv kv_sel(kv mask, kv a, kv b) { return _mm256_blendv_ps(b, a, mask); } /* mask ? a : b */
KILN__FN kv kv_ldmask(const uint32_t *p) { return _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(const void *)p)); }
KILN__FN int kv_any(kv mask) { return _mm256_movemask_ps(mask) != 0; }
KILN__FN kv kv_cvt_u(kvi q) { return _mm256_cvtepi32_ps(q); } /* lanes < 2^31 */

typedef __m128 k4;
KILN__FN k4 k4_fma(k4 a, k4 b, k4 c) { return _mm_fmadd_ps(a, b, c); }

#elif defined(KILN__OPS_AVX512)
#define KILN__FN KILN__TARGET_AVX512 KILN__INLINE
#define KILN__KERNEL KILN__TARGET_AVX512
#define KILN__SFX(name) name##_avx512
#define KV_W 16

/* Comparisons give vector masks (all-ones lanes), as on the other paths, so that the
 * templates read the same; they cost a mask move each, and only cold code uses them. */
typedef __m512 kv;
typedef __m512i kvi;
KILN__FN kv kv_ld(const float *p) { return _mm512_loadu_ps(p); }
KILN__FN void kv_st(float *p, kv v) { _mm512_storeu_ps(p, v); }
KILN__FN kv kv_set1(float f) { return _mm512_set1_ps(f); }
KILN__FN kv kv_zero(void) { return _mm512_setzero_ps(); }
KILN__FN kv kv_add(kv a, kv b) { return _mm512_add_ps(a, b); }
KILN__FN kv kv_sub(kv a, kv b) { return _mm512_sub_ps(a, b); }
KILN__FN kv kv_mul(kv a, kv b) { return _mm512_mul_ps(a, b); }
KILN__FN kv kv_fma(kv a, kv b, kv c) { return _mm512_fmadd_ps(a, b, c); }
KILN__FN kv kv_fnma(kv a, kv b, kv c) { return _mm512_fnmadd_ps(a, b, c); } /* c - a·b */
KILN__FN kv kv_and(kv a, kv b) { return _mm512_and_ps(a, b); }
KILN__FN kv kv_andnot(kv a, kv b) { return _mm512_andnot_ps(a, b); } /* ~a & b */
KILN__FN kv kv_or(kv a, kv b) { return _mm512_or_ps(a, b); }
KILN__FN kv kv_xor(kv a, kv b) { return _mm512_xor_ps(a, b); }
KILN__FN kv kv_max(kv a, kv b) { return _mm512_max_ps(a, b); }
KILN__FN kv kv_min(kv a, kv b) { return _mm512_min_ps(a, b); }
KILN__FN kv kv_div(kv a, kv b) { return _mm512_div_ps(a, b); }
KILN__FN kv kv_sqrt(kv a) { return _mm512_sqrt_ps(a); }
KILN__FN kv kv_rsqrt0(kv a) { return _mm512_rsqrt14_ps(a); }
KILN__FN kv kv_rcp0(kv a) { return _mm512_rcp14_ps(a); }
KILN__FN kv kv_lt(kv a, kv b) { return _mm512_castsi512_ps(_mm512_movm_epi32(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ))); }
KILN__FN kv kv_gt(kv a, kv b) { return _mm512_castsi512_ps(_mm512_movm_epi32(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ))); }
KILN__FN kv kv_sel(kv mask, kv a, kv b) /* mask ? a : b */
{
    return _mm512_mask_blend_ps(_mm512_movepi32_mask(_mm512_castps_si512(mask)), b, a);
}
KILN__FN kv kv_ldmask(const uint32_t *p) { return _mm512_castsi512_ps(_mm512_loadu_si512((const void *)p)); }
KILN__FN int kv_any(kv mask) { return _mm512_movepi32_mask(_mm512_castps_si512(mask)) != 0; }
KILN__FN kv kv_cvt_u(kvi q) { return _mm512_cvtepi32_ps(q); } /* lanes < 2^31 */
/* 8 lanes from a and 8 from b (one component of two SoA blocks), and back. With a == b the
 * upper lanes repeat the lower ones, and storing both halves writes the same values twice. */
KILN__FN kv kv_ld2(const float *a, const float *b)
{
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(a)), _mm256_loadu_ps(b), 1);
}
KILN__FN void kv_st2(float *a, float *b, kv v)
{
    _mm256_storeu_ps(a, _mm512_castps512_ps256(v));
    _mm256_storeu_ps(b, _mm512_extractf32x8_ps(v, 1));
}

typedef __m128 k4;
KILN__FN k4 k4_fma(k4 a, k4 b, k4 c) { return _mm_fmadd_ps(a, b, c); }

#elif defined(KILN__OPS_SSE2)
#define KILN__FN KILN__INLINE
#define KILN__KERNEL
#define KILN__SFX(name) name##_sse2
#define KV_W 4

typedef __m128 kv;
typedef __m128i kvi;
KILN__FN kv kv_ld(const float *p) { return _mm_loadu_ps(p); }
KILN__FN void kv_st(float *p, kv v) { _mm_storeu_ps(p, v); }
KILN__FN kv kv_set1(float f) { return _mm_set1_ps(f); }
KILN__FN kv kv_zero(void) { return _mm_setzero_ps(); }
KILN__FN kv kv_add(kv a, kv b) { return _mm_add_ps(a, b); }
KILN__FN kv kv_sub(kv a, kv b) { return _mm_sub_ps(a, b); }
KILN__FN kv kv_mul(kv a, kv b) { return _mm_mul_ps(a, b); }
KILN__FN kv kv_fma(kv a, kv b, kv c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
KILN__FN kv kv_fnma(kv a, kv b, kv c) { return _mm_sub_ps(c, _mm_mul_ps(a, b)); }
KILN__FN kv kv_and(kv a, kv b) { return _mm_and_ps(a, b); }
KILN__FN kv kv_andnot(kv a, kv b) { return _mm_andnot_ps(a, b); }
KILN__FN kv kv_or(kv a, kv b) { return _mm_or_ps(a, b); }
KILN__FN kv kv_xor(kv a, kv b) { return _mm_xor_ps(a, b); }
KILN__FN kv kv_max(kv a, kv b) { return _mm_max_ps(a, b); }
KILN__FN kv kv_min(kv a, kv b) { return _mm_min_ps(a, b); }
KILN__FN kv kv_div(kv a, kv b) { return _mm_div_ps(a, b); }
KILN__FN kv kv_sqrt(kv a) { return _mm_sqrt_ps(a); }
KILN__FN kv kv_rsqrt0(kv a) { return _mm_rsqrt_ps(a); }
KILN__FN kv kv_rcp0(kv a) { return _mm_rcp_ps(a); }
KILN__FN kv kv_lt(kv a, kv b) { return _mm_cmplt_ps(a, b); }
KILN__FN kv kv_gt(kv a, kv b) { return _mm_cmpgt_ps(a, b); }
KILN__FN kv kv_sel(kv mask, kv a, kv b) { return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b)); }
KILN__FN kv kv_ldmask(const uint32_t *p) { return _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)(const void *)p)); }
KILN__FN int kv_any(kv mask) { return _mm_movemask_ps(mask) != 0; }
KILN__FN kv kv_cvt_u(kvi q) { return _mm_cvtepi32_ps(q); }

typedef __m128 k4;
KILN__FN k4 k4_fma(k4 a, k4 b, k4 c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }

#else
#error "define KILN__OPS_AVX512, KILN__OPS_AVX2 or KILN__OPS_SSE2 before including simd_ops.h"
#endif

#if KV_W <= 8
#define KV_PER_BLOCK (8 / KV_W) /* vectors per 8-lane SoA component (the animation templates) */
#endif

/* A lane group of a SoA pose: the KV_W lanes one vector holds. Up to 8 lanes: part o of block
 * b0 (KV_PER_BLOCK parts per block). 16 lanes: blocks b0 and b1 = b0 + 1, or b1 = b0 for an
 * odd last block, whose lanes are then computed twice and stored twice, identically. */
typedef struct kv_grp {
    uint32_t b0, b1;
    unsigned o;
} kv_grp;

#if KV_W == 16
#define KV_GROUPS(blocks) (((blocks) + 1u) / 2u)
KILN__FN kv_grp kv_grp_at(uint32_t g, uint32_t blocks)
{
    kv_grp r = {2u * g, 2u * g + 1u < blocks ? 2u * g + 1u : 2u * g, 0};
    return r;
}
/* Component c of group g of a pose; a per-lane float array with 8 floats per block. */
KILN__FN kv kv_gld(const kiln_soa_xform *x, kv_grp g, unsigned c)
{
    return kv_ld2((const float *)(const void *)&x[g.b0] + 8u * c, (const float *)(const void *)&x[g.b1] + 8u * c);
}
KILN__FN void kv_gst(kiln_soa_xform *x, kv_grp g, unsigned c, kv v)
{
    kv_st2((float *)(void *)&x[g.b0] + 8u * c, (float *)(void *)&x[g.b1] + 8u * c, v);
}
KILN__FN kv kv_gldf(const float *lanes, kv_grp g) { return kv_ld2(lanes + 8u * g.b0, lanes + 8u * g.b1); }
#else
#define KV_GROUPS(blocks) ((blocks) * (uint32_t)KV_PER_BLOCK)
KILN__FN kv_grp kv_grp_at(uint32_t g, uint32_t blocks)
{
    kv_grp r = {g / KV_PER_BLOCK, g / KV_PER_BLOCK, (g % KV_PER_BLOCK) * KV_W};
    (void)blocks;
    return r;
}
KILN__FN kv kv_gld(const kiln_soa_xform *x, kv_grp g, unsigned c)
{
    return kv_ld((const float *)(const void *)&x[g.b0] + 8u * c + g.o);
}
KILN__FN void kv_gst(kiln_soa_xform *x, kv_grp g, unsigned c, kv v) { kv_st((float *)(void *)&x[g.b0] + 8u * c + g.o, v); }
KILN__FN kv kv_gldf(const float *lanes, kv_grp g) { return kv_ld(lanes + 8u * g.b0 + g.o); }
#endif



/* 1/sqrt(a) to ~23 bits: the estimate plus one Newton-Raphson step. */
KILN__FN kv kv_rsqrt(kv a)
{
    kv y = kv_rsqrt0(a);
    kv hy = kv_mul(kv_set1(0.5f), y);
    return kv_fma(kv_fnma(kv_mul(a, y), y, kv_set1(1.0f)), hy, y); /* y + y/2·(1 - a·y²) */
}

/* 1/a to ~23 bits. */
KILN__FN kv kv_rcp(kv a)
{
    kv y = kv_rcp0(a);
    return kv_fma(kv_fnma(a, y, kv_set1(1.0f)), y, y); /* y + y·(1 - a·y) */
}

KILN__FN kv kv_neg_mask(kv a) { return kv_and(a, kv_set1(-0.0f)); } /* sign bits */
KILN__FN kv kv_abs(kv a) { return kv_andnot(kv_set1(-0.0f), a); }

/* Shared quaternion pieces, per lane vector. */
typedef struct kv_quat {
    kv x, y, z, w;
} kv_quat;

/* One lane group of a SoA block, in registers. */
typedef struct kv_xf {
    kv tx, ty, tz;
    kv_quat q;
    kv sx, sy, sz;
} kv_xf;

KILN__FN kv_xf kv_xf_load(const kiln_soa_xform *x, unsigned o)
{
    kv_xf r;
    r.tx = kv_ld(x->tx + o), r.ty = kv_ld(x->ty + o), r.tz = kv_ld(x->tz + o);
    r.q.x = kv_ld(x->qx + o), r.q.y = kv_ld(x->qy + o), r.q.z = kv_ld(x->qz + o), r.q.w = kv_ld(x->qw + o);
    r.sx = kv_ld(x->sx + o), r.sy = kv_ld(x->sy + o), r.sz = kv_ld(x->sz + o);
    return r;
}

KILN__FN void kv_xf_store(kiln_soa_xform *x, unsigned o, kv_xf r)
{
    kv_st(x->tx + o, r.tx), kv_st(x->ty + o, r.ty), kv_st(x->tz + o, r.tz);
    kv_st(x->qx + o, r.q.x), kv_st(x->qy + o, r.q.y), kv_st(x->qz + o, r.q.z), kv_st(x->qw + o, r.q.w);
    kv_st(x->sx + o, r.sx), kv_st(x->sy + o, r.sy), kv_st(x->sz + o, r.sz);
}

/* One lane group (kv_grp) of a SoA pose, in registers, and back. */
KILN__FN kv_xf kv_xf_gload(const kiln_soa_xform *x, kv_grp g)
{
    kv_xf r;
    r.tx = kv_gld(x, g, 0), r.ty = kv_gld(x, g, 1), r.tz = kv_gld(x, g, 2);
    r.q.x = kv_gld(x, g, 3), r.q.y = kv_gld(x, g, 4), r.q.z = kv_gld(x, g, 5), r.q.w = kv_gld(x, g, 6);
    r.sx = kv_gld(x, g, 7), r.sy = kv_gld(x, g, 8), r.sz = kv_gld(x, g, 9);
    return r;
}

KILN__FN void kv_xf_gstore(kiln_soa_xform *x, kv_grp g, kv_xf r)
{
    kv_gst(x, g, 0, r.tx), kv_gst(x, g, 1, r.ty), kv_gst(x, g, 2, r.tz);
    kv_gst(x, g, 3, r.q.x), kv_gst(x, g, 4, r.q.y), kv_gst(x, g, 5, r.q.z), kv_gst(x, g, 6, r.q.w);
    kv_gst(x, g, 7, r.sx), kv_gst(x, g, 8, r.sy), kv_gst(x, g, 9, r.sz);
}

/* a ⊗ b, Hamilton product (x, y, z, w). */
KILN__FN kv_quat kv_qmul(kv_quat a, kv_quat b)
{
    kv_quat r;
    r.x = kv_fma(a.w, b.x, kv_fma(a.x, b.w, kv_fnma(a.z, b.y, kv_mul(a.y, b.z))));
    r.y = kv_fma(a.w, b.y, kv_fma(a.y, b.w, kv_fnma(a.x, b.z, kv_mul(a.z, b.x))));
    r.z = kv_fma(a.w, b.z, kv_fma(a.z, b.w, kv_fnma(a.y, b.x, kv_mul(a.x, b.y))));
    r.w = kv_fnma(a.x, b.x, kv_fnma(a.y, b.y, kv_fnma(a.z, b.z, kv_mul(a.w, b.w))));
    return r;
}

KILN__FN kv kv_qdot(kv_quat a, kv_quat b) { return kv_fma(a.x, b.x, kv_fma(a.y, b.y, kv_fma(a.z, b.z, kv_mul(a.w, b.w)))); }

KILN__FN kv_quat kv_qscale(kv_quat a, kv s)
{
    kv_quat r = {kv_mul(a.x, s), kv_mul(a.y, s), kv_mul(a.z, s), kv_mul(a.w, s)};
    return r;
}

/* a / |a| for any finite a; a zero quaternion stays (finite) zero, and so does one whose
 * squared length is denormal. When |a| exceeds ~1.8e19 (only non-unit data gets there: raw
 * clip rows, a caller's pose) the squared length overflows, and rsqrt(inf) = 0 would make the
 * Newton step 0·inf = NaN; those lanes are divided by their largest component first (a
 * division: 1/m may be denormal, flushed under FTZ). The check costs a compare per call, and
 * the branch is never taken on real data. */
KILN__FN kv_quat kv_qnormalize(kv_quat a)
{
    kv len2 = kv_qdot(a, a);
    kv_quat r = kv_qscale(a, kv_rsqrt(kv_max(len2, kv_set1(FLT_MIN))));
    kv big = kv_gt(len2, kv_set1(FLT_MAX));
    if (KILN__UNLIKELY(kv_any(big))) {
        kv m = kv_max(kv_max(kv_abs(a.x), kv_abs(a.y)), kv_max(kv_abs(a.z), kv_abs(a.w)));
        kv_quat s = {kv_div(a.x, m), kv_div(a.y, m), kv_div(a.z, m), kv_div(a.w, m)}; /* |s| in [1, 2] */
        s = kv_qscale(s, kv_rsqrt(kv_qdot(s, s)));
        r.x = kv_sel(big, s.x, r.x), r.y = kv_sel(big, s.y, r.y), r.z = kv_sel(big, s.z, r.z), r.w = kv_sel(big, s.w, r.w);
    }
    return r;
}

/* Corrected-nlerp parameter t' for per-lane t (kiln__slerp_fit, KILN__SLERP_DEG rows of 4),
 * x = 1 - |dot|. The fit holds for x in [0, 1], which unit keys guarantee (up to rounding); keys
 * far from unit length (finite, so accepted by the loader) put x far below 0, where the
 * degree-6 polynomial overflows. x is clamped to [0, 1] (1 - |dot| <= 1 already; max also maps
 * NaN to 0): such keys get the plain nlerp, t' = t. */
KILN__FN kv kv_slerp_t(kv t, kv x, const float (*fit)[4])
{
    x = kv_max(x, kv_zero());
    kv h = kv_sub(t, kv_set1(0.5f));
    kv y = kv_mul(h, h);
    kv g = kv_mul(kv_mul(t, h), kv_sub(t, kv_set1(1.0f)));
    kv acc = kv_zero();
    for (int i = KILN__SLERP_DEG - 1; i >= 0; i--) {
        kv c = kv_fma(y, kv_fma(y, kv_fma(y, kv_set1(fit[i][3]), kv_set1(fit[i][2])), kv_set1(fit[i][1])),
                      kv_set1(fit[i][0]));
        acc = kv_fma(acc, x, kv_mul(g, c));
    }
    return kv_fma(x, acc, t);
}

/* slerp(I, k, t) on the shortest arc for per-lane t in [0, 1], normalised. */
KILN__FN kv_quat kv_slerp_identity(kv_quat k, kv t, const float (*fit)[4])
{
    kv sign = kv_neg_mask(k.w);
    kv x = kv_sub(kv_set1(1.0f), kv_abs(k.w));
    kv tt = kv_slerp_t(t, x, fit);
    kv ts = kv_xor(tt, sign); /* ±t': brings k onto the identity's hemisphere */
    kv_quat r = {kv_mul(ts, k.x), kv_mul(ts, k.y), kv_mul(ts, k.z), kv_fma(ts, k.w, kv_sub(kv_set1(1.0f), tt))};
    return kv_qnormalize(r);
}

#endif /* KILN_SIMD_OPS_H */
