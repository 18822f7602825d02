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
#include "simd_table.h"
#include "error_detail.h"
#include "pose_bone_model.h"

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
