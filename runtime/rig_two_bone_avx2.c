/* Two-bone IK handles, KV_W = 8 independent ones at a time, AVX2 + FMA, and the single solve
 * for that path. Compiled for that target per function (simd.h) and selected at run time by
 * cpuid (simd_dispatch.c). */
/* No product is fused into a sum, here nor in the inline helpers of the headers below, which
 * the single solve inlines: Clang fuses within an expression by default once FMA is enabled,
 * hence its pragma; the single solve targets AVX2 without FMA (KILN__TARGET_AVX2_NOFMA, simd.h). */
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
#include "anim_internal.h"
#include "pose_bone_model.h"
#include "rig_math_f32.h"
#include "rig_internal.h"

#if KILN__SIMD_AVX2
#define KILN__OPS_AVX2 1
#include "simd_ops.h"
#include "rig_two_bone_simd.h"
#endif

/* The single solve, VEX-encoded: the baseline's operations, so the same bits (no contraction,
 * see above). */
#if KILN__SIMD_AVX2
#define KILN__IK3S(name) name##_avx2
#define KILN__IK3S_FN static KILN__TARGET_AVX2_NOFMA
#define KILN__IK3S_KERNEL KILN__TARGET_AVX2_NOFMA
#include "rig_two_bone_single.h"
#endif
