/* Two-bone IK handles, KV_W = 4 independent ones at a time, SSE2: the x86-64 baseline. */
#include "anim_internal.h"
#include "rig_math_f32.h"
#include "rig_internal.h"

#if KILN__SIMD_SSE2
#define KILN__OPS_SSE2 1
#include "simd_ops.h"
#include "rig_two_bone_simd.h"
#endif
