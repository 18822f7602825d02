/* Pose kernels (blend, additive layer, local -> model, skinning), AVX2 + FMA. Compiled for
 * that target per function (simd.h) and selected at run time by cpuid (simd_dispatch.c). */
#include "anim_internal.h"

#if KILN__SIMD_AVX2
#define KILN__OPS_AVX2 1
#include "simd_ops.h"
#include "pose_simd.h"
#endif
