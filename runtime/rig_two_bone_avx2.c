/* Two-bone IK handles, KV_W = 8 independent ones at a time, AVX2 + FMA. Compiled for that
 * target per function (simd.h) and selected at run time by cpuid (simd_dispatch.c). */
#include "anim_internal.h"
#include "rig_math_f32.h"
#include "rig_internal.h"

#if KILN__SIMD_AVX2
#define KILN__OPS_AVX2 1
#include "simd_ops.h"
#include "rig_two_bone_simd.h"
#endif
