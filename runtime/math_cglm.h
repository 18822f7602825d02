/* runtime/math_cglm.h - the runtime's one way in to cglm, for the float vector, quaternion and
 * matrix math of the scalar kernels. Private; cglm types never appear in a public header.
 *
 * The runtime uses only cglm's inline routines (cglm/cglm.h, not the glmc_ functions of
 * libcglm), so they compile into libkiln: building it needs cglm's headers, linking it or a
 * program against it needs nothing from cglm.
 *
 * CGLM_ALL_UNALIGNED: on x86 cglm's vec4 and mat4 routines otherwise load and store their
 * arguments with aligned SSE instructions, and the runtime hands them caller buffers, blob
 * records and AoS locals that are 4-byte aligned at best. With it they use unaligned loads and
 * stores (as fast on aligned data) and cglm's types lose their alignment attribute. It must be
 * defined before any cglm header: the build defines it for every runtime file, and this header
 * defines it for builds that do not; no runtime file includes cglm but through this one.
 *
 * Which routines: the scalar kernels are the reference the SIMD kernels are compared with, and
 * spell each sum in the SIMD kernels' order. They use the routines that round in that order on
 * both of cglm's x86 paths (plain C and SSE): element-wise vec3/vec4 ones (scale, mul, add,
 * adds, sub, muladds, negate, lerp), glm_vec3_norm2 and glm_vec3_cross, glm_quat_mul and
 * glm_mat4_mul (products summed left to right, each rounded) and glm_mat4_transpose_to.
 * glm_vec3_normalize writes +0 for a zero vector where the SIMD kernels keep each zero's
 * sign, so kernels scale by the reciprocal length themselves. cglm's vec4 dot product pairs
 * (x + y) + (z + w) on SSE and sums left to right in plain C, so dot products whose order the
 * SIMD kernels fix stay spelled out. (cglm's NEON path fuses its multiply-adds, as the AVX2
 * kernels do.)
 *
 * cglm's parameters are not const; KILN__GLM(p) passes a read-only float array to a routine that
 * only reads it.
 */
#ifndef KILN_MATH_CGLM_H
#define KILN_MATH_CGLM_H

#ifdef cglm_h
#error "math_cglm.h must come before any other cglm include (CGLM_ALL_UNALIGNED)"
#endif
#ifndef CGLM_ALL_UNALIGNED
#define CGLM_ALL_UNALIGNED
#endif
#include <cglm/cglm.h>

#define KILN__GLM(p) ((float *)(p))

#endif /* KILN_MATH_CGLM_H */
