/* Skinning kernels, portable C: the reference the SIMD paths (skin_simd.h) are tested
 * against. One vertex at a time, the same formulas in the same order; the SIMD paths differ
 * only in rounding (fused multiply-adds, a refined reciprocal square root), within 1e-5.
 */
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
        for (int c = 0; c < 3; c++) p[c] = s->offset[c] + s->scale[c] * (float)q[c];
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

/* v / |v|, or 0 for a zero vector; `sign` -1 flips it. */
static void kiln__normalise(float v[3], float sign)
{
    float len2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    float s = len2 > 0.0f ? sign / sqrtf(len2) : 0.0f;
    v[0] *= s, v[1] *= s, v[2] *= s;
}

/* Cofactor matrix of a column-major 3x3 (a[c * 3 + r]), and the determinant; n' = cof · n is
 * det · A^-T n. */
static float kiln__cofactor(const float *a, float c[9])
{
#define A_(r, col) a[(col) * 3 + (r)]
#define C_(r, col) c[(col) * 3 + (r)]
    C_(0, 0) = A_(1, 1) * A_(2, 2) - A_(1, 2) * A_(2, 1);
    C_(0, 1) = A_(1, 2) * A_(2, 0) - A_(1, 0) * A_(2, 2);
    C_(0, 2) = A_(1, 0) * A_(2, 1) - A_(1, 1) * A_(2, 0);
    C_(1, 0) = A_(0, 2) * A_(2, 1) - A_(0, 1) * A_(2, 2);
    C_(1, 1) = A_(0, 0) * A_(2, 2) - A_(0, 2) * A_(2, 0);
    C_(1, 2) = A_(0, 1) * A_(2, 0) - A_(0, 0) * A_(2, 1);
    C_(2, 0) = A_(0, 1) * A_(1, 2) - A_(0, 2) * A_(1, 1);
    C_(2, 1) = A_(0, 2) * A_(1, 0) - A_(0, 0) * A_(1, 2);
    C_(2, 2) = A_(0, 0) * A_(1, 1) - A_(0, 1) * A_(1, 0);
    return A_(0, 0) * C_(0, 0) + A_(0, 1) * C_(0, 1) + A_(0, 2) * C_(0, 2);
#undef A_
#undef C_
}

/* r = A v for a column-major 3x3 */
static void kiln__mul3(const float *a, const float v[3], float r[3])
{
    for (int i = 0; i < 3; i++) r[i] = a[i] * v[0] + (a[3 + i] * v[1] + a[6 + i] * v[2]);
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
        for (int c = 0; c < 4; c++)
            for (int r = 0; r < 3; r++) m[c * 3 + r] = w * src[c * 4 + r];
        for (uint32_t i = 1; i < n; i++) {
            const float *kb = job->matrices + (size_t)joint[i] * 16u;
            for (int c = 0; c < 4; c++)
                for (int r = 0; r < 3; r++) m[c * 3 + r] = weight[i] * kb[c * 4 + r] + m[c * 3 + r];
        }
        if (job->out_pos.data) {
            float p[3], o[3];
            kiln__read_position(&job->pos, k, p);
            for (int r = 0; r < 3; r++) o[r] = m[r] * p[0] + (m[3 + r] * p[1] + (m[6 + r] * p[2] + m[9 + r]));
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

/* v rotated by the unit quaternion r: v + 2 r.xyz × (r.xyz × v + r.w v). */
static void kiln__rotate(const float r[4], const float v[3], float o[3])
{
    float c[3] = {r[1] * v[2] - r[2] * v[1] + r[3] * v[0], r[2] * v[0] - r[0] * v[2] + r[3] * v[1],
                  r[0] * v[1] - r[1] * v[0] + r[3] * v[2]};
    o[0] = v[0] + 2.0f * (r[1] * c[2] - r[2] * c[1]);
    o[1] = v[1] + 2.0f * (r[2] * c[0] - r[0] * c[2]);
    o[2] = v[2] + 2.0f * (r[0] * c[1] - r[1] * c[0]);
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
        for (int i = 0; i < 4; i++) q[i] = w * b0->real[i], q[4 + i] = w * b0->dual[i];
        if (stretched)
            for (int c = 0; c < 3; c++)
                for (int r = 0; r < 3; r++) s[c * 3 + r] = w * b0->stretch[c * 4 + r];
        for (uint32_t i = 1; i < n; i++) {
            const kiln_skin_dual_quat *b = &job->dual_quats[joint[i]];
            /* on the heaviest influence's hemisphere: q and -q are the same transform */
            float dot = (b0->real[0] * b->real[0] + b0->real[2] * b->real[2]) +
                        (b0->real[1] * b->real[1] + b0->real[3] * b->real[3]);
            float ws = signbit(dot) ? -weight[i] : weight[i];
            for (int c = 0; c < 4; c++) q[c] = ws * b->real[c] + q[c], q[4 + c] = ws * b->dual[c] + q[4 + c];
            if (stretched)
                for (int c = 0; c < 3; c++)
                    for (int r = 0; r < 3; r++) s[c * 3 + r] = weight[i] * b->stretch[c * 4 + r] + s[c * 3 + r];
        }
        float len2 = q[0] * q[0] + q[1] * q[1] + (q[2] * q[2] + q[3] * q[3]);
        float inv = 1.0f / sqrtf(fmaxf(len2, 1e-30f));
        for (int i = 0; i < 8; i++) q[i] *= inv;
        const float *r = q, *d = q + 4;
        if (job->out_pos.data) {
            float p[3], ps[3], o[3];
            kiln__read_position(&job->pos, k, p);
            if (stretched) kiln__mul3(s, p, ps);
            else memcpy(ps, p, sizeof ps);
            kiln__rotate(r, ps, o);
            /* translation 2 (r.w d.xyz - d.w r.xyz + r.xyz × d.xyz) */
            o[0] += 2.0f * (r[3] * d[0] - d[3] * r[0] + (r[1] * d[2] - r[2] * d[1]));
            o[1] += 2.0f * (r[3] * d[1] - d[3] * r[1] + (r[2] * d[0] - r[0] * d[2]));
            o[2] += 2.0f * (r[3] * d[2] - d[3] * r[2] + (r[0] * d[1] - r[1] * d[0]));
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
