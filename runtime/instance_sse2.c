/* Instance world matrices, SSE2 (the x86-64 baseline): 4 instances per block. */
#include <string.h>

#include "anim_internal.h" /* simd_ops.h's shared pieces need it */
#include "instance_internal.h"

#if KILN__SIMD_SSE2
#define KILN__OPS_SSE2 1
#include "simd_ops.h"

KILN__FN kv kiln__unpacklo(kv a, kv b) { return _mm_unpacklo_ps(a, b); }
KILN__FN kv kiln__unpackhi(kv a, kv b) { return _mm_unpackhi_ps(a, b); }
KILN__FN kv kiln__lohalves(kv a, kv b) { return _mm_movelh_ps(a, b); }
KILN__FN kv kiln__hihalves(kv a, kv b) { return _mm_movehl_ps(b, a); }

/* Group g is record g. */
KILN__FN kv kiln__ld_group(const float *rec, unsigned g, unsigned off)
{
    return _mm_loadu_ps(rec + g * KILN__INST_FLOATS + off);
}

KILN__FN void kiln__st_group(float *out, uint32_t stride, unsigned g, unsigned off, kv v)
{
    _mm_storeu_ps(out + (size_t)g * stride + off, v);
}

#include "instance_simd.h"
#endif /* KILN__SIMD_SSE2 */
