/* Local pose -> model-space matrices -> skinning matrices: the public entry points and the
 * scalar reference kernels.
 *
 * Matrices are column-major float[16] (m[col * 4 + row]). A local transform is affine, so
 * W = P · L needs 3 products per column plus P's translation column, for any P (the root
 * matrix may be projective; nothing assumes P's last row). Segment scale compensate divides
 * the parent's local scale out of the 3x3 part only:
 *   W = P · T(t) · S(s_p)^-1 · R · S  =>  W_j = Σ_r (P_r / s_p[r]) · (R·S)[r][j] for j < 3,
 *                                         W_3 = Σ_r P_r · t[r] + P_3.
 */
#include "math_cglm.h"

#include <string.h>

#include "anim_internal.h"
#include "error_detail.h"

const float kiln__identity16[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

kiln_result kiln__skeleton_bones(const kiln_blob *blob, uint32_t skeleton, uint32_t capacity,
                                 const kiln_blob_skeleton **out_sk, const kiln_blob_bone **out_bones)
{
    uint32_t ns, nb;
    const kiln_blob_skeleton *sk = blob ? kiln_blob_skeletons(blob, &ns) : NULL;
    if (!sk || skeleton >= ns)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "skeleton", "no skeleton %u in the blob (it has %u)", skeleton,
                          sk ? ns : 0u);
    sk += skeleton;
    if (capacity < sk->bone_count)
        return kiln__fail(KILN_ERR_BUFFER_TOO_SMALL, "bone_count",
                          "bone_count %u is below the skeleton's %u bones", capacity, sk->bone_count);
    const kiln_blob_bone *bones = kiln_blob_bones(blob, &nb);
    if (sk->bone_count && (!bones || sk->first_bone > nb || sk->bone_count > nb - sk->first_bone))
        return KILN_ERR_BLOB_BAD_RECORD;
    *out_sk = sk;
    *out_bones = sk->bone_count ? bones + sk->first_bone : NULL;
    return KILN_OK;
}

kiln_result kiln_pose_local_to_object(const kiln_blob *skel_blob, uint32_t skeleton, const kiln_soa_xform *local,
                                     const float *root, float *object, uint32_t bone_count)
{
    if (!local || !object)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT,
                          !local ? "kiln_pose_local_to_object: local" : "kiln_pose_local_to_object: object", "%s is NULL",
                          !local ? "local" : "object");
    const kiln_blob_skeleton *sk = NULL;
    const kiln_blob_bone *bones = NULL;
    kiln_result r = kiln__skeleton_bones(skel_blob, skeleton, bone_count, &sk, &bones);
    if (r != KILN_OK) return r;
    kiln__model_job job = {bones, sk->bone_count, local, root ? root : kiln__identity16, object};
    if (sk->bone_count) kiln__kernels_get()->local_to_model(&job);
    return KILN_OK;
}

kiln_result kiln_pose_skin_matrices(const kiln_blob *skel_blob, uint32_t skeleton, const float *object, float *skin,
                                    uint32_t bone_count)
{
    if (!object || !skin)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT,
                          !object ? "kiln_pose_skin_matrices: object" : "kiln_pose_skin_matrices: skin", "%s is NULL",
                          !object ? "object" : "skin");
    const kiln_blob_skeleton *sk = NULL;
    const kiln_blob_bone *bones = NULL;
    kiln_result r = kiln__skeleton_bones(skel_blob, skeleton, bone_count, &sk, &bones);
    if (r != KILN_OK) return r;
    uint32_t ni;
    const float *ib = kiln_blob_inverse_binds(skel_blob, &ni);
    if (sk->bone_count && (!ib || sk->first_bone > ni || sk->bone_count > ni - sk->first_bone))
        return KILN_ERR_BLOB_BAD_RECORD;
    if (sk->bone_count) kiln__kernels_get()->skin(object, ib + (size_t)sk->first_bone * 16u, skin, sk->bone_count);
    return KILN_OK;
}

/* ---- scalar kernels ------------------------------------------------------------------------ */

/* The local matrix of lane l as 12 floats: the 3x3 R·S column-major, then t. Spelled out, not
 * glm_quat_mat3: that one divides by |q| (2 / |q| rather than the 2 used here for the unit
 * quaternions of a pose) and sums the squares in another order. */
static void kiln__local_matrix(const kiln_soa_xform *x, unsigned l, float m[12])
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
static inline void kiln__bone_to_model_cols(const kiln_soa_xform *local, const kiln_blob_bone *bones, uint32_t i,
                                            const float *p, float out[16], int translation)
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

void kiln__bone_to_model(const kiln_soa_xform *local, const kiln_blob_bone *bones, uint32_t i, const float *p,
                         float out[16])
{
    kiln__bone_to_model_cols(local, bones, i, p, out, 1);
}

void kiln__bone_to_model_linear(const kiln_soa_xform *local, const kiln_blob_bone *bones, uint32_t i, const float *p,
                                float out[16])
{
    kiln__bone_to_model_cols(local, bones, i, p, out, 0);
}

void kiln__local_to_model_scalar(const kiln__model_job *job)
{
    for (uint32_t i = 0; i < job->bone_count; i++) {
        int32_t parent = job->bones[i].parent;
        const float *p = parent >= 0 && (uint32_t)parent < i ? job->model + (size_t)parent * 16u : job->root;
        kiln__bone_to_model(job->local, job->bones, i, p, job->model + (size_t)i * 16u);
    }
}

void kiln__skin_scalar(const float *model, const float *inverse_binds, float *skin, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        const float *w = model + (size_t)i * 16u, *ib = inverse_binds + (size_t)i * 16u;
        mat4 r; /* W · IB, each element summed left to right (on cglm's plain C and SSE paths) */
        glm_mat4_mul((vec4 *)KILN__GLM(w), (vec4 *)KILN__GLM(ib), r);
        memcpy(skin + (size_t)i * 16u, r, sizeof r);
    }
}
