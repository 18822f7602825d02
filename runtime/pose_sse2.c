/* Pose kernels (blend, additive layer, local -> model, skinning), SSE2: the x86-64 baseline. */
#include "anim_internal.h"

#if KILN__SIMD_SSE2
#define KILN__OPS_SSE2 1
#include "simd_ops.h"
#include "pose_simd.h"
#endif
