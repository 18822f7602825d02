/* Pose kernels at 16 lanes, AVX-512 F/VL/DQ/BW: the blend (one vector per component of two SoA
 * blocks) and local -> model (R·S of 16 bones per vector; the bone-by-bone products keep their
 * 4-float columns, and with AVX-512VL the broadcast elements fold into the multiply-adds).
 * Compiled for that target per function (simd.h) and selected at run time (the kernel table,
 * simd_table.h). The additive layer and the skinning matrices run the AVX2 kernels. */
#include "anim_internal.h"

#if KILN__SIMD_AVX512
#define KILN__OPS_AVX512 1
#include "simd_ops.h"
#include "pose_simd.h"
#endif
