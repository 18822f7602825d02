/* runtime/instance_internal.h - the instance world-matrix job and its per-path kernels.
 * Private; nothing here is part of the ABI.
 *
 * Every path evaluates the same expression in the same order (per instance, per element):
 *   A = [R·S | p] (3x4, R from the quaternion as 1 - (yy + zz) ..., with yy = y·2y)
 *   L[r][j] = A[r][2]·M[2][j] + (A[r][1]·M[1][j] + (A[r][0]·M[0][j] + p[r]·M[3][j]))   (MODEL)
 *   W[r][j] = P[r][2]·L[2][j] + (P[r][1]·L[1][j] + (P[r][0]·L[0][j] + c[r][j]))        (PARENT)
 * with c[r][j] = P[r][3]·M[3][j] computed once per call (L's last row is M's last row).
 * Without MODEL, L = A; without PARENT, W's top rows are L's; W's last row is c[3][j] unless
 * P has a projective last row (PROJECTIVE), which takes the PARENT formula for r = 3. With
 * an affine M the SIMD paths leave out the exact p·0 and p·1 terms (the same values, up to
 * the sign of a zero). The scalar and SSE2 paths round every product and sum alike; AVX2 fuses
 * them (FMA), which is where the paths may differ, by an ulp or so per step.
 */
#ifndef KILN_INSTANCE_INTERNAL_H
#define KILN_INSTANCE_INTERNAL_H

#include <stdint.h>

#include "kiln/instance.h"
#include "simd.h"

/* Job flags */
#define KILN__INST_MODEL      0x1u /* M is not the identity */
#define KILN__INST_PARENT     0x2u /* P is not the identity */
#define KILN__INST_PROJECTIVE 0x4u /* P's last row is not (0, 0, 0, x): W's last row varies */
#define KILN__INST_MODEL_GENERAL 0x8u /* M's last row is not (0, 0, 0, 1) (with MODEL) */

typedef struct kiln__instance_job {
    const kiln_blob_instance *inst;  /* count records */
    uint32_t count;
    uint32_t flags;                  /* KILN__INST_* */
    uint32_t layout;                 /* KILN_INSTANCE_4X4 or _3X4 */
    uint32_t stride;                 /* floats per output matrix: 16 or 12 */
    float    model[16];              /* M, column-major (the identity when the caller gave none) */
    float    parent[16];             /* P, column-major */
    float    c[4][4];                /* c[r][j] = P[r][3] · M[3][j] */
    float   *out;
} kiln__instance_job;

/* The position of 4x4 element (row r, column j) in a column-major float[16]. */
#define KILN__CM(r, j) ((j) * 4 + (r))

/* Record floats: the transform is 10 consecutive floats from float index 4 of the 16-float
 * record (position, rotation, scale), checked by static assertions in instance.c. */
#define KILN__INST_FLOATS     16u
#define KILN__INST_FIRST      4u

void kiln__instance_world_scalar(const kiln__instance_job *job);
#if KILN__SIMD_SSE2
void kiln__instance_world_sse2(const kiln__instance_job *job);
#endif
#if KILN__SIMD_AVX2
void kiln__instance_world_avx2(const kiln__instance_job *job);
#endif

#endif /* KILN_INSTANCE_INTERNAL_H */
