/* Skinning kernels, portable C: the reference the SIMD paths (skin_simd.h) are tested
 * against. One vertex at a time, the same formulas in the same order; the SIMD paths differ
 * only in rounding (fused multiply-adds, a refined reciprocal square root), within 1e-5.
 * The vector math is cglm's (math_cglm.h: routines that keep that order).
 */
#include "math_cglm.h"

#include <math.h>
#include <string.h>

#include "skin_internal.h"

/* ---- reading the streams -------------------------------------------------------------------- */

static void kiln__read_position(const kiln__skin_in *s, uint32_t k, float p[3])
{
    const unsigned char *e = s->data + (size_t)k * s->stride;
    if (s->format == KILN_FORMAT_UNORM16x4) {
        uint16_t q[3];
        memcpy(q, e, sizeof q);
        float qf[3] = {(float)q[0], (float)q[1], (float)q[2]};
        glm_vec3_mul(KILN__GLM(s->scale), qf, p); /* offset + scale · q */
        glm_vec3_add(KILN__GLM(s->offset), p, p);
    } else {
        memcpy(p, e, 3 * sizeof(float));
    }
}

/* A direction: float, or octahedral without the final normalisation (skin_internal.h). */
static void kiln__read_direction(const kiln__skin_in *s, uint32_t k, float n[3])
{
    const unsigned char *e = s->data + (size_t)k * s->stride;
    if (s->format == KILN_FORMAT_OCT16x2) {
        int16_t q[2];
        memcpy(q, e, sizeof q);
        float x = fmaxf((float)q[0] * KILN__OCT_INV, -1.0f), y = fmaxf((float)q[1] * KILN__OCT_INV, -1.0f);
        float z = 1.0f - fabsf(x) - fabsf(y);
        float t = fmaxf(-z, 0.0f);
        n[0] = x - copysignf(t, x), n[1] = y - copysignf(t, y), n[2] = z;
    } else {
        memcpy(n, e, 3 * sizeof(float));
    }
}

static void kiln__write(const kiln__skin_out *o, uint32_t k, const float v[3])
{
    memcpy((unsigned char *)o->data + (size_t)k * o->stride, v, 3 * sizeof(float));
}

/* v / |v|, or 0 for a zero vector (each zero keeping its sign, as in the SIMD kernels, where
 * glm_vec3_normalize writes +0); `sign` -1 flips it. */
static void kiln__normalise(float v[3], float sign)
{
    float len2 = glm_vec3_norm2(v);
    glm_vec3_scale(v, len2 > 0.0f ? sign / sqrtf(len2) : 0.0f, v);
}

/* Cofactor matrix of a column-major 3x3 (a[c * 3 + r]), and the determinant; n' = cof · n is
 * det · A^-T n. Its columns are a1 × a2, a2 × a0, a0 × a1; the determinant is A's first row
 * times C's, summed left to right as the SIMD kernels do. */
static float kiln__cofactor(const float *a, float c[9])
{
    glm_vec3_cross(KILN__GLM(a + 3), KILN__GLM(a + 6), c);
    glm_vec3_cross(KILN__GLM(a + 6), KILN__GLM(a), c + 3);
    glm_vec3_cross(KILN__GLM(a), KILN__GLM(a + 3), c + 6);
    return a[0] * c[0] + a[3] * c[3] + a[6] * c[6];
}

/* r = A v for a column-major 3x3, summed as a0 v0 + (a1 v1 + a2 v2); r is not a or v. */
static void kiln__mul3(const float *a, const float v[3], float r[3])
{
    glm_vec3_scale(KILN__GLM(a + 3), v[1], r);
    glm_vec3_muladds(KILN__GLM(a + 6), v[2], r);
    glm_vec3_muladds(KILN__GLM(a), v[0], r);
}

/* The vertex's influences: joints clamped, weights as stored. Returns how many. */
static uint32_t kiln__influences(const kiln__skin_job *job, uint32_t k, uint32_t *joint, float *weight)
{
    const unsigned char *jp = job->joints + (size_t)k * job->joint_stride;
    const unsigned char *wp = job->weights + (size_t)k * job->weight_stride;
    for (uint32_t i = 0; i < job->influences; i++) {
        uint16_t j;
        memcpy(&j, jp + 2 * i, 2);
        memcpy(&weight[i], wp + 4 * i, 4);
        joint[i] = j <= job->max_joint ? j : job->max_joint;
    }
    return job->influences;
}

/* ---- linear blend ----------------------------------------------------------------------------- */

void kiln__skin_lbs_scalar(const kiln__skin_job *job)
{
    for (uint32_t k = 0; k < job->count; k++) {
        uint32_t joint[KILN__SKIN_MAX_INFLUENCES];
        float weight[KILN__SKIN_MAX_INFLUENCES];
        uint32_t n = job->influences ? kiln__influences(job, k, joint, weight) : 0;
        /* M = Σ w K as a 3x4 (m[c * 3 + r]); all-zero weights (or no skin) take the root */
        const float *src = n && weight[0] != 0.0f ? job->matrices + (size_t)joint[0] * 16u : job->root;
        float w = n && weight[0] != 0.0f ? weight[0] : 1.0f;
        float m[12];
        for (int c = 0; c < 4; c++) glm_vec3_scale(KILN__GLM(src + c * 4), w, m + c * 3);
        for (uint32_t i = 1; i < n; i++) {
            const float *kb = job->matrices + (size_t)joint[i] * 16u;
            for (int c = 0; c < 4; c++) glm_vec3_muladds(KILN__GLM(kb + c * 4), weight[i], m + c * 3);
        }
        if (job->out_pos.data) {
            /* m0 p0 + (m1 p1 + (m2 p2 + m3)) */
            float p[3], o[3];
            kiln__read_position(&job->pos, k, p);
            glm_vec3_copy(m + 9, o);
            glm_vec3_muladds(m + 6, p[2], o);
            glm_vec3_muladds(m + 3, p[1], o);
            glm_vec3_muladds(m, p[0], o);
            kiln__write(&job->out_pos, k, o);
        }
        if (job->out_nrm.data) {
            float c[9], nv[3], o[3];
            float det = kiln__cofactor(m, c);
            kiln__read_direction(&job->nrm, k, nv);
            kiln__mul3(c, nv, o);
            kiln__normalise(o, signbit(det) ? -1.0f : 1.0f);
            kiln__write(&job->out_nrm, k, o);
        }
        if (job->out_tan.data) {
            float tv[3], o[3];
            kiln__read_direction(&job->tan, k, tv);
            kiln__mul3(m, tv, o);
            kiln__normalise(o, 1.0f);
            kiln__write(&job->out_tan, k, o);
        }
    }
}

/* ---- dual quaternion blend --------------------------------------------------------------------- */

/* v rotated by the unit quaternion r: v + 2 r.xyz × (r.xyz × v + r.w v). (glm_quat_rotatev
 * spells the rotation differently; this is the SIMD kernels' order.) */
static void kiln__rotate(const float r[4], float v[3], float o[3])
{
    float c[3], t[3];
    glm_vec3_cross(KILN__GLM(r), v, c);
    glm_vec3_muladds(v, r[3], c);
    glm_vec3_cross(KILN__GLM(r), c, t);
    glm_vec3_copy(v, o);
    glm_vec3_muladds(t, 2.0f, o);
}

void kiln__skin_dqs_scalar(const kiln__skin_job *job)
{
    const int stretched = job->stretched != 0;
    for (uint32_t k = 0; k < job->count; k++) {
        uint32_t joint[KILN__SKIN_MAX_INFLUENCES];
        float weight[KILN__SKIN_MAX_INFLUENCES];
        uint32_t n = job->influences ? kiln__influences(job, k, joint, weight) : 0;
        const kiln_skin_dual_quat *b0 = n && weight[0] != 0.0f ? &job->dual_quats[joint[0]] : job->root_dq;
        float w = n && weight[0] != 0.0f ? weight[0] : 1.0f;
        float q[8], s[9];
        glm_vec4_scale(KILN__GLM(b0->real), w, q);
        glm_vec4_scale(KILN__GLM(b0->dual), w, q + 4);
        if (stretched)
            for (int c = 0; c < 3; c++) glm_vec3_scale(KILN__GLM(b0->stretch + c * 4), w, s + c * 3);
        for (uint32_t i = 1; i < n; i++) {
            const kiln_skin_dual_quat *b = &job->dual_quats[joint[i]];
            /* on the heaviest influence's hemisphere: q and -q are the same transform (the dot
             * product paired as the SIMD kernels pair it) */
            float dot = (b0->real[0] * b->real[0] + b0->real[2] * b->real[2]) +
                        (b0->real[1] * b->real[1] + b0->real[3] * b->real[3]);
            float ws = signbit(dot) ? -weight[i] : weight[i];
            glm_vec4_muladds(KILN__GLM(b->real), ws, q);
            glm_vec4_muladds(KILN__GLM(b->dual), ws, q + 4);
            if (stretched)
                for (int c = 0; c < 3; c++) glm_vec3_muladds(KILN__GLM(b->stretch + c * 4), weight[i], s + c * 3);
        }
        float len2 = q[0] * q[0] + q[1] * q[1] + (q[2] * q[2] + q[3] * q[3]);
        float inv = 1.0f / sqrtf(fmaxf(len2, 1e-30f));
        glm_vec4_scale(q, inv, q);
        glm_vec4_scale(q + 4, inv, q + 4);
        float *r = q, *d = q + 4;
        if (job->out_pos.data) {
            float p[3], ps[3], o[3];
            kiln__read_position(&job->pos, k, p);
            if (stretched) kiln__mul3(s, p, ps);
            else memcpy(ps, p, sizeof ps);
            kiln__rotate(r, ps, o);
            /* translation 2 (r.w d.xyz - d.w r.xyz + r.xyz × d.xyz) */
            float tr[3], rd[3], dr[3];
            glm_vec3_scale(d, r[3], tr);
            glm_vec3_scale(r, d[3], dr);
            glm_vec3_sub(tr, dr, tr);
            glm_vec3_cross(r, d, rd);
            glm_vec3_add(tr, rd, tr);
            glm_vec3_muladds(tr, 2.0f, o);
            kiln__write(&job->out_pos, k, o);
        }
        if (job->out_nrm.data) {
            float nv[3], ns[3], o[3], sign = 1.0f;
            kiln__read_direction(&job->nrm, k, nv);
            if (stretched) {
                float c[9];
                sign = signbit(kiln__cofactor(s, c)) ? -1.0f : 1.0f;
                kiln__mul3(c, nv, ns);
            } else {
                memcpy(ns, nv, sizeof ns);
            }
            kiln__rotate(r, ns, o);
            kiln__normalise(o, sign);
            kiln__write(&job->out_nrm, k, o);
        }
        if (job->out_tan.data) {
            float tv[3], ts[3], o[3];
            kiln__read_direction(&job->tan, k, tv);
            if (stretched) kiln__mul3(s, tv, ts);
            else memcpy(ts, tv, sizeof ts);
            kiln__rotate(r, ts, o);
            kiln__normalise(o, 1.0f);
            kiln__write(&job->out_tan, k, o);
        }
    }
}
