/* runtime/pose_bone_model.h - one bone's model matrix from its local and its parent's matrix:
 * the per-bone step of the scalar reference of local_to_model, kiln__bone_to_model and
 * kiln__bone_to_model_linear (pose_model.c). Private.
 *
 * Inline, so that the rig's constraint step (rig_constraint_step.h) recomposes its owner without
 * a call and its AVX2 copy runs these same operations VEX-encoded (no product is fused into a
 * sum: rig_constraint_avx2.c's target has no FMA), which gives the same bits.
 */
#ifndef KILN_POSE_BONE_MODEL_H
#define KILN_POSE_BONE_MODEL_H

#include "math_cglm.h"

#include <string.h>

#include "anim_internal.h"

#if defined(__GNUC__) || defined(__clang__)
#define KILN__BONE_MODEL_INLINE static inline __attribute__((always_inline))
#else
#define KILN__BONE_MODEL_INLINE static inline
#endif

/* The local matrix of lane l as 12 floats: the 3x3 R·S column-major, then t. Spelled out, not
 * glm_quat_mat3: that one divides by |q| (2 / |q| rather than the 2 used here for the unit
 * quaternions of a pose) and sums the squares in another order. */
KILN__BONE_MODEL_INLINE void kiln__local_matrix(const kiln_soa_xform *x, unsigned l, float m[12])
{
    float qx = x->qx[l], qy = x->qy[l], qz = x->qz[l], qw = x->qw[l];
    float xx = qx * qx, yy = qy * qy, zz = qz * qz, xy = qx * qy, xz = qx * qz, yz = qy * qz;
    float wx = qw * qx, wy = qw * qy, wz = qw * qz;
    float sx = x->sx[l], sy = x->sy[l], sz = x->sz[l];
    m[0] = (1.0f - 2.0f * (yy + zz)) * sx, m[1] = 2.0f * (xy + wz) * sx, m[2] = 2.0f * (xz - wy) * sx;
    m[3] = 2.0f * (xy - wz) * sy, m[4] = (1.0f - 2.0f * (xx + zz)) * sy, m[5] = 2.0f * (yz + wx) * sy;
    m[6] = 2.0f * (xz + wy) * sz, m[7] = 2.0f * (yz - wx) * sz, m[8] = (1.0f - 2.0f * (xx + yy)) * sz;
    m[9] = x->tx[l], m[10] = x->ty[l], m[11] = x->tz[l];
}

/* kiln__bone_to_model, with its translation column when `translation`, else leaving its
 * x, y, z (out[12..14]) as they were. */
KILN__BONE_MODEL_INLINE void kiln__bone_to_model_cols(const kiln_soa_xform *local, const kiln_blob_bone *bones,
                                                      uint32_t i, const float *p, float out[16], int translation)
{
    float m[12];
    kiln__local_matrix(&local[i / KILN__LANES], i % KILN__LANES, m);
    int32_t parent = bones[i].parent;
    /* parent < i for verified blobs; anything else is treated as a root */
    int has_parent = parent >= 0 && (uint32_t)parent < i;
    float inv[3] = {1.0f, 1.0f, 1.0f};
    if (has_parent && (bones[i].flags & KILN_BONE_SEGMENT_SCALE_COMPENSATE)) {
        const kiln_soa_xform *px = &local[(uint32_t)parent / KILN__LANES];
        unsigned pl = (uint32_t)parent % KILN__LANES;
        inv[0] = 1.0f / px->sx[pl], inv[1] = 1.0f / px->sy[pl], inv[2] = 1.0f / px->sz[pl];
    }
    /* P's columns, the first three divided by the parent's scale; every sum left to right */
    mat4 ps, r;
    for (unsigned c = 0; c < 3; c++) glm_vec4_scale(KILN__GLM(p + c * 4), inv[c], ps[c]);
    for (unsigned c = 0; c < 3; c++) {
        glm_vec4_scale(ps[0], m[c * 3], r[c]);
        glm_vec4_muladds(ps[1], m[c * 3 + 1], r[c]);
        glm_vec4_muladds(ps[2], m[c * 3 + 2], r[c]);
    }
    if (!translation) {
        /* the column's last row all the same (a projective root's), as the lanes below sum it */
        float w = p[3] * m[9];
        w = w + p[7] * m[10];
        w = w + p[11] * m[11];
        memcpy(out, r, 3 * sizeof r[0]);
        out[15] = w + p[15];
        return;
    }
    glm_vec4_scale(KILN__GLM(p), m[9], r[3]);
    glm_vec4_muladds(KILN__GLM(p + 4), m[10], r[3]);
    glm_vec4_muladds(KILN__GLM(p + 8), m[11], r[3]);
    glm_vec4_add(r[3], KILN__GLM(p + 12), r[3]);
    memcpy(out, r, sizeof r);
}

#endif /* KILN_POSE_BONE_MODEL_H */
