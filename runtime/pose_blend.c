/* Pose blending and additive layers: the public entry points and the scalar reference kernels.
 *
 * Blending follows ozz's BlendingJob: per joint the weighted sum of every layer, each
 * rotation first brought onto the hemisphere of the sum so far, the rest pose filling up to
 * `threshold` where the layers' weights do not reach it, then T and S divided by the summed
 * weight and R normalised.
 *
 * The result depends only on the ratios of the weights and the threshold, and two float limits
 * sit at either end of their range: a summed weight below FLT_MIN (thresholds or weights under
 * ~1e-38) has an infinite reciprocal, and inf·0 = NaN; weighted quaternion sums above ~1e19
 * square to inf. So the kernels work on scaled weights (kiln__blend_prepare here, once per call
 * for every kernel, scalar and SIMD): when m, the largest of the threshold and the layer weights,
 * is outside [2^-16, 2^16), every weight and the threshold are multiplied by the power of two s
 * that brings m into [1, 2) (exact: the sums are those of the unscaled weights wherever these
 * neither overflow nor underflow); inside, s = 1 and the SIMD kernels run the loop they had
 * before.
 * Two clamps relative to m then bound every joint's sum:
 *   - the threshold is at least KILN__BLEND_MIN_THRESHOLD · m (a joint whose layers add up to
 *     less is mostly the rest pose), so sum >= 1e-12 · 2^-16 and the squared length of the
 *     quaternion sum, at least sum² / (layers + 1) for unit rotations, stays a normal float
 *     (for up to ~19000 layers): no 1/sum scaling is needed before normalising;
 *   - a masked bone weight is at most KILN__BLEND_MAX_JOINT_WEIGHT · m, so any finite joint
 *     weights give finite sums, and poses within ±1e12 finite hemisphere dot products.
 */
#include "math_cglm.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "anim_internal.h"
#include "simd_table.h"
#include "error_detail.h"

/* Both relative to m (see above); documented in kiln/anim.h. */
#define KILN__BLEND_MIN_THRESHOLD 1e-12f
#define KILN__BLEND_MAX_JOINT_WEIGHT 65536.0f

/* The threshold t floored at KILN__BLEND_MIN_THRESHOLD · m, in the units of both. */
static inline float kiln__blend_floor(float t, float m)
{
    float lo = KILN__BLEND_MIN_THRESHOLD * m;
    return t > lo ? t : lo;
}

/* The weight scale s of the job, from m, the largest of the threshold and the layer weights:
 * 1 when m is in [2^-16, 2^16) (+inf counting as FLT_MAX), else the power of two that brings m
 * into [1, 2) (a double: up to 2^149); with it the scaled threshold, floored, and the bound on
 * masked bone weights, both in scaled units. Then, for s = 1 and `uniform` (no layer with a
 * weight masks its bones; the k of them, at most KILN__BLEND_FLAT_MAX, already in job->flat_pose
 * and flat_w), the uniform blend's weights: the rest pose's share where the layers fall short of
 * the threshold (without a rest pose, the general loop), every weight divided by the sum. */
static void kiln__blend_prepare(kiln__blend_job *job, float m, int uniform, unsigned k, float sum)
{
    m = m < FLT_MAX ? m : FLT_MAX;
    double s = 1.0;
    float ms = m, t = job->threshold;
    if (KILN__UNLIKELY(!(m >= 0x1p-16f && m < 0x1p16f))) {
        int e;
        (void)frexp(m, &e); /* m = f·2^e, f in [0.5, 1) */
        s = ldexp(1.0, 1 - e);
        ms = (float)(m * s), t = (float)(job->threshold * s);
        uniform = 0;
    }
    job->scale = s;
    job->thr = kiln__blend_floor(t, ms);
    job->cap = KILN__BLEND_MAX_JOINT_WEIGHT * ms;
    job->flat = 0;
    if (!uniform) return;
    if (sum < job->thr) { /* the rest pose fills up to the threshold, in every joint alike */
        if (!job->rest) return;
        float rw = job->thr - sum;
        job->flat_pose[k] = job->rest, job->flat_w[k++] = rw;
        sum += rw;
    }
    const float inv = 1.0f / sum; /* sum >= thr >= 2^-16 · 1e-12: no inf */
    for (unsigned i = 0; i < k; i++) job->flat_w[i] *= inv;
    job->flat = k;
}

/* Every call but the two-layer fast one below: the checks, one pass over the layers, the
 * weights of the job (kiln__blend_prepare) and the path's blend kernel. Out of line, so that the
 * fast path keeps a small frame. */
static KILN__NOINLINE kiln_result kiln__blend_general(const kiln_blend_layer *layers, uint32_t count,
                                                      const kiln_soa_xform *rest, float threshold, kiln_soa_xform *out,
                                                      uint32_t soa_count);

/* The two-layer call of every frame, when its weights are what kiln__blend_prepare would make
 * flat without scaling: both poses given, both weights > 0 and unmasked, m (the largest of them
 * and the threshold) in [2^-16, 2^16), so that s = 1, and a sum reaching the floored threshold
 * (no rest pose share). The same float operations in the same order as the general path
 * (sum = 0 + wa + wb, then each weight times 1/sum) give the same weights, and the path's
 * blend2 is the kernel its blend runs for them (job->flat == 2). Every other call, bad
 * arguments included, goes to the general path. */
kiln_result kiln_pose_blend(const kiln_blend_layer *layers, uint32_t count, const kiln_soa_xform *rest, float threshold,
                            kiln_soa_xform *out, uint32_t soa_count)
{
    const kiln__kernels *k = kiln__kernels_get();
    if (count != 2 || !layers || !out || !k->blend2)
        return kiln__blend_general(layers, count, rest, threshold, out, soa_count);
    const kiln_blend_layer *a = &layers[0], *b = &layers[1];
    float wa = a->weight, wb = b->weight;
    float m = threshold;
    if (wa > m) m = wa;
    if (wb > m) m = wb;
    if (!(a->pose && b->pose && !a->joint_weights && !b->joint_weights && wa > 0.0f && wb > 0.0f &&
          threshold > 0.0f && m >= 0x1p-16f && m < 0x1p16f))
        return kiln__blend_general(layers, count, rest, threshold, out, soa_count);
    const float thr = kiln__blend_floor(threshold, m);
    float sum = 0.0f;
    sum += wa;
    sum += wb;
    if (sum < thr) return kiln__blend_general(layers, count, rest, threshold, out, soa_count);
    const float inv = 1.0f / sum;
    k->blend2(out, soa_count, a->pose, b->pose, wa * inv, wb * inv);
    return KILN_OK;
}

static kiln_result kiln__blend_general(const kiln_blend_layer *layers, uint32_t count, const kiln_soa_xform *rest,
                                       float threshold, kiln_soa_xform *out, uint32_t soa_count)
{
    if (!out) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_pose_blend: out", "out is NULL");
    if (count && !layers)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_pose_blend: layers", "layers is NULL with count %u", count);
    if (!(threshold > 0.0f) || !(threshold <= FLT_MAX))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_pose_blend: threshold",
                          "threshold %g is not a finite number > 0", (double)threshold);
    kiln__blend_job job;
    job.layers = layers, job.layer_count = count, job.rest = rest, job.threshold = threshold;
    job.out = out, job.soa_count = soa_count;
    /* one pass: the pose check, m, and the uniform blend's k layers (uniform until a weighted
     * layer masks its bones or there are too many) */
    float m = threshold, sum = 0.0f;
    unsigned k = 0;
    int uniform = 1;
    for (uint32_t i = 0; i < count; i++) {
        const kiln_blend_layer *ly = &layers[i];
        if (KILN__UNLIKELY(!ly->pose))
            return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_pose_blend: layers[].pose", "layer %u has no pose", i);
        float w = ly->weight;
        if (w > m) m = w;
        if (!(w > 0.0f) || !uniform) continue; /* NaN and non-positive layers add nothing */
        if (ly->joint_weights || k == KILN__BLEND_FLAT_MAX) {
            uniform = 0;
            continue;
        }
        job.flat_pose[k] = ly->pose, job.flat_w[k++] = w;
        sum += w; /* in the general loop's order */
    }
    kiln__blend_prepare(&job, m, uniform, k, sum);
    kiln__kernels_get()->blend(&job);
    return KILN_OK;
}

kiln_result kiln_pose_add(kiln_soa_xform *pose, const kiln_soa_xform *delta, float weight, const float *joint_weights,
                          uint32_t soa_count)
{
    if (!pose || !delta)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, !pose ? "kiln_pose_add: pose" : "kiln_pose_add: delta",
                          "%s is NULL", !pose ? "pose" : "delta");
    kiln__kernels_get()->add(pose, delta, weight, joint_weights, soa_count);
    return KILN_OK;
}

/* ---- scalar kernels ------------------------------------------------------------------------ */
static float kiln__weight(float w) { return w > 0.0f ? w : 0.0f; } /* NaN and negatives: 0 */

void kiln__blend_scalar(const kiln__blend_job *job)
{
    kiln_soa_xform id;
    kiln__soa_identity(&id);
    const float thr = job->thr, cap = job->cap;
    const double s = job->scale;
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
                    w = kiln__weight(ly->weight);
                    if (s != 1.0) w = (float)((w < FLT_MAX ? w : FLT_MAX) * s); /* +inf: FLT_MAX */
                    if (ly->joint_weights) {
                        w = kiln__weight(w * ly->joint_weights[blk * KILN__LANES + l]);
                        w = w < cap ? w : cap;
                    }
                } else {
                    x = rest; /* the rest pose fills up to the threshold */
                    w = kiln__weight(thr - sum);
                }
                float v[KILN_ANIM_COMPONENTS], d = 0.0f; /* lane l of x: t, q, s */
                for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) v[c] = kiln__soa_comp(x, c)[l];
                for (unsigned c = KILN__QX; c <= KILN__QW; c++) d += acc[c] * v[c]; /* the SIMD kernels' order */
                float ws = d < 0.0f ? -w : w;
                glm_vec3_muladds(v + KILN__TX, w, acc + KILN__TX);
                glm_vec4_muladds(v + KILN__QX, ws, acc + KILN__QX);
                glm_vec3_muladds(v + KILN__SX, w, acc + KILN__SX);
                sum += w;
            }
            float inv = 1.0f / sum; /* sum >= thr: no denormal, no inf */
            glm_vec3_scale(acc + KILN__TX, inv, acc + KILN__TX);
            glm_vec3_scale(acc + KILN__SX, inv, acc + KILN__SX);
            kiln__qnormalize(acc + KILN__QX);
            for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) kiln__soa_comp_mut(&r, c)[l] = acc[c];
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
            float pt[3] = {p->tx[l], p->ty[l], p->tz[l]}, ps[3] = {p->sx[l], p->sy[l], p->sz[l]};
            float dt[3] = {d->tx[l], d->ty[l], d->tz[l]}, ds[3] = {d->sx[l], d->sy[l], d->sz[l]};
            glm_vec3_muladds(dt, w, pt);           /* t += w dt */
            glm_vec3_scale(ds, w, ds);             /* s *= w ds + (1 - w) */
            glm_vec3_adds(ds, 1.0f - w, ds);
            glm_vec3_mul(ps, ds, ps);
            p->tx[l] = pt[0], p->ty[l] = pt[1], p->tz[l] = pt[2];
            p->sx[l] = ps[0], p->sy[l] = ps[1], p->sz[l] = ps[2];
            /* R ⊗ slerp(I, dR, w), slerp by the corrected nlerp on the shortest arc. */
            /* k' = nlerp(I, ±dR, t') unnormalised; the product is normalised instead. */
            float q[KILN__SLERP_DEG];
            kiln__slerp_coeffs(w, q);
            float t = kiln__corrected(w, 1.0f - fabsf(d->qw[l]), q);
            float ts = d->qw[l] < 0.0f ? -t : t;
            float k[4] = {d->qx[l], d->qy[l], d->qz[l], d->qw[l]}, a[4] = {p->qx[l], p->qy[l], p->qz[l], p->qw[l]};
            float rq[4];
            glm_vec4_scale(k, ts, k);
            k[3] += 1.0f - t;
            glm_quat_mul(a, k, rq);
            kiln__qnormalize(rq);
            p->qx[l] = rq[0], p->qy[l] = rq[1], p->qz[l] = rq[2], p->qw[l] = rq[3];
        }
    }
}
