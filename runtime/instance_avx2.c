/* Instance world matrices, AVX2 + FMA: 8 instances per block, records g and g + 4 in the two
 * 128-bit lanes of one vector, so every transpose stays inside a lane (no cross-lane
 * shuffles). Compiled for that target per function (simd.h) and selected at run time. */
#include <string.h>

#include "anim_internal.h" /* simd_ops.h's shared pieces need it */
#include "instance_internal.h"

#if KILN__SIMD_AVX2
#define KILN__OPS_AVX2 1
#include "simd_ops.h"

KILN__FN kv kiln__unpacklo(kv a, kv b) { return _mm256_unpacklo_ps(a, b); }
KILN__FN kv kiln__unpackhi(kv a, kv b) { return _mm256_unpackhi_ps(a, b); }
KILN__FN kv kiln__lohalves(kv a, kv b) { return _mm256_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 1, 0)); }
KILN__FN kv kiln__hihalves(kv a, kv b) { return _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 2, 3, 2)); }

/* Group g is records g (low lane) and g + 4 (high lane). */
KILN__FN kv kiln__ld_group(const float *rec, unsigned g, unsigned off)
{
    __m128 lo = _mm_loadu_ps(rec + g * KILN__INST_FLOATS + off);
    __m128 hi = _mm_loadu_ps(rec + (g + 4) * KILN__INST_FLOATS + off);
    return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
}

KILN__FN void kiln__st_group(float *out, uint32_t stride, unsigned g, unsigned off, kv v)
{
    _mm_storeu_ps(out + (size_t)g * stride + off, _mm256_castps256_ps128(v));
    _mm_storeu_ps(out + (size_t)(g + 4) * stride + off, _mm256_extractf128_ps(v, 1));
}

#include "instance_simd.h"
#endif /* KILN__SIMD_AVX2 */
