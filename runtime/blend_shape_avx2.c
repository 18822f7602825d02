/* Blend-shape kernels, AVX2 + FMA (blend_shape_simd.h). Compiled for that target per function
 * (simd.h) and chosen at run time by the kernel table (simd_table.h), like every other kernel. */
#include "blend_shape_internal.h"

#if KILN__SIMD_AVX2
#define KILN__OPS_AVX2 1
#include "blend_shape_simd.h"
#endif
