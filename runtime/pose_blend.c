/* Pose blending and additive layers: the public entry points and the scalar reference kernels.
 *
 * Blending follows ozz's BlendingJob: per joint the weighted sum of every layer, each
 * rotation first brought onto the hemisphere of the sum so far, the rest pose filling up to
 * `threshold` where the layers' weights do not reach it, then T and S divided by the summed
 * weight and R normalised.
 */
#include <math.h>
#include <string.h>

#include "anim_internal.h"

kiln_result kiln_pose_blend(const kiln_blend_layer *layers, uint32_t count, const kiln_soa_xform *rest, float threshold,
                            kiln_soa_xform *out, uint32_t soa_count)
{
    if (!out || (count && !layers) || !(threshold > 0.0f) || threshold > 3.0e38f) return KILN_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < count; i++)
        if (!layers[i].pose) return KILN_ERR_INVALID_ARGUMENT;
    kiln__blend_job job = {layers, count, rest, threshold, out, soa_count};
    kiln__kernels_get()->blend(&job);
    return KILN_OK;
}

kiln_result kiln_pose_add(kiln_soa_xform *pose, const kiln_soa_xform *delta, float weight, const float *joint_weights,
                          uint32_t soa_count)
{
    if (!pose || !delta) return KILN_ERR_INVALID_ARGUMENT;
    kiln__kernels_get()->add(pose, delta, weight, joint_weights, soa_count);
    return KILN_OK;
}

/* ---- scalar kernels ------------------------------------------------------------------------ */
static float kiln__weight(float w) { return w > 0.0f ? w : 0.0f; } /* NaN and negatives: 0 */

void kiln__blend_scalar(const kiln__blend_job *job)
{
    kiln_soa_xform id;
    kiln__soa_identity(&id);
    for (uint32_t blk = 0; blk < job->soa_count; blk++) {
        const kiln_soa_xform *rest = job->rest ? &job->rest[blk] : &id;
        kiln_soa_xform r;
        for (unsigned l = 0; l < KILN__LANES; l++) {
            float acc[KILN_ANIM_COMPONENTS] = {0}, sum = 0.0f;
            for (uint32_t i = 0; i <= job->layer_count; i++) {
                const kiln_soa_xform *x;
                float w;
                if (i < job->layer_count) {
                    const kiln_blend_layer *ly = &job->layers[i];
                    x = &ly->pose[blk];
                    w = ly->weight * (ly->joint_weights ? ly->joint_weights[blk * KILN__LANES + l] : 1.0f);
                    w = kiln__weight(w);
                } else {
                    x = rest; /* the rest pose fills up to the threshold */
                    w = kiln__weight(job->threshold - sum);
                }
                float d = 0.0f;
                for (unsigned c = KILN__QX; c <= KILN__QW; c++) d += acc[c] * kiln__soa_comp(x, c)[l];
                float ws = d < 0.0f ? -w : w;
                for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++)
                    acc[c] += (c >= KILN__QX && c <= KILN__QW ? ws : w) * kiln__soa_comp(x, c)[l];
                sum += w;
            }
            float inv = 1.0f / sum, len2 = 0.0f;
            for (unsigned c = KILN__QX; c <= KILN__QW; c++) len2 += acc[c] * acc[c];
            float qinv = 1.0f / sqrtf(len2 > 1e-30f ? len2 : 1e-30f);
            for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++)
                kiln__soa_comp_mut(&r, c)[l] = acc[c] * (c >= KILN__QX && c <= KILN__QW ? qinv : inv);
        }
        job->out[blk] = r; /* after every layer was read: out may be one of them */
    }
}

void kiln__add_scalar(kiln_soa_xform *pose, const kiln_soa_xform *delta, float weight, const float *joint_weights,
                      uint32_t soa_count)
{
    for (uint32_t blk = 0; blk < soa_count; blk++) {
        kiln_soa_xform *p = &pose[blk];
        const kiln_soa_xform *d = &delta[blk];
        for (unsigned l = 0; l < KILN__LANES; l++) {
            float w = weight * (joint_weights ? joint_weights[blk * KILN__LANES + l] : 1.0f);
            w = w > 0.0f ? (w < 1.0f ? w : 1.0f) : 0.0f;
            for (unsigned c = 0; c < 3; c++) {
                kiln__soa_comp_mut(p, KILN__TX + c)[l] += w * kiln__soa_comp(d, KILN__TX + c)[l];
                kiln__soa_comp_mut(p, KILN__SX + c)[l] *= w * kiln__soa_comp(d, KILN__SX + c)[l] + (1.0f - w);
            }
            /* R ⊗ slerp(I, dR, w), slerp by the corrected nlerp on the shortest arc. */
            /* k' = nlerp(I, ±dR, t') unnormalised; the product is normalised instead. */
            float q[KILN__SLERP_DEG];
            kiln__slerp_coeffs(w, q);
            float x = 1.0f - fabsf(d->qw[l]), poly = q[KILN__SLERP_DEG - 1];
            for (int i = KILN__SLERP_DEG - 2; i >= 0; i--) poly = poly * x + q[i];
            float t = w + x * poly;
            float ts = d->qw[l] < 0.0f ? -t : t;
            float kx = ts * d->qx[l], ky = ts * d->qy[l], kz = ts * d->qz[l], kw = ts * d->qw[l] + (1.0f - t);
            float ax = p->qx[l], ay = p->qy[l], az = p->qz[l], aw = p->qw[l];
            float rx = aw * kx + ax * kw + ay * kz - az * ky;
            float ry = aw * ky - ax * kz + ay * kw + az * kx;
            float rz = aw * kz + ax * ky - ay * kx + az * kw;
            float rw = aw * kw - ax * kx - ay * ky - az * kz;
            float len2 = rx * rx + ry * ry + rz * rz + rw * rw;
            float inv = 1.0f / sqrtf(len2 > 1e-30f ? len2 : 1e-30f);
            p->qx[l] = rx * inv, p->qy[l] = ry * inv, p->qz[l] = rz * inv, p->qw[l] = rw * inv;
        }
    }
}
