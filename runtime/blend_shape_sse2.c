/* Blend-shape kernels, SSE2: the x86-64 baseline (blend_shape_simd.h). */
#include "blend_shape_internal.h"

#if KILN__SIMD_SSE2
#define KILN__OPS_SSE2 1
#include "blend_shape_simd.h"
#endif
