/* Constraint steps compiled for AVX2 (rig_constraint_step.h): kiln__constraint_apply's
 * operations VEX-encoded, selected with the AVX2 path (kiln_rig_solve), the same bits. */
/* No product is fused into a sum, here nor in the inline helpers of the headers below, which
 * the step inlines: the target is AVX2 without FMA (KILN__TARGET_AVX2_NOFMA, simd.h), and
 * Clang's contraction is off besides. */
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
#include "rig_math_f32.h"

#include <string.h>

#include "anim_internal.h"
#include "pose_bone_model.h"
#include "rig_internal.h"

#if KILN__SIMD_AVX2
#define KILN__CN(name) name##_avx2
#define KILN__CN_FN static KILN__TARGET_AVX2_NOFMA
#define KILN__CN_ENTRY KILN__TARGET_AVX2_NOFMA
#include "rig_constraint_step.h"
#endif
