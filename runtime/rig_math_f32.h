/* runtime/rig_math_f32.h - the single-precision rotation helpers of the two-bone IK solver
 * (rig_two_bone.c) and the constraints (rig_constraint.c), on cglm's vec3 and versor. Private.
 *
 * Conventions as in rig_internal.h: quaternions (x, y, z, w), Hamilton product (glm_quat_mul),
 * active rotations of column vectors, a ⊗ b applies b first.
 *
 * No transcendental functions: a rotation by an angle is built from the angle's cosine and sine
 * (or any positive multiple of them) through the half-angle identities, so a solve costs square
 * roots and divisions only. Every function returns a unit quaternion for any finite input.
 */
#ifndef KILN_RIG_MATH_F32_H
#define KILN_RIG_MATH_F32_H

#include "math_cglm.h"

#include <math.h>

/* Below this a squared length counts as zero (a length of 1e-9 m, as KILN__RIG_EPS). */
#define KILN__RIG_EPS2_F 1e-18f

/* r = a / |a| (r may be a); returns |a|. r is zero when |a|^2 <= KILN__RIG_EPS2_F. */
static inline float kiln__unit3f(const vec3 a, vec3 r)
{
    float n2 = glm_vec3_norm2(KILN__GLM(a));
    if (!(n2 > KILN__RIG_EPS2_F)) {
        glm_vec3_zero(r);
        return 0.0f;
    }
    float n = sqrtf(n2);
    glm_vec3_scale(KILN__GLM(a), 1.0f / n, r);
    return n;
}

/* A unit vector perpendicular to the unit vector u (the cross with the least aligned axis). */
static inline void kiln__any_perpendicular_f(const vec3 u, vec3 r)
{
    float ax = fabsf(u[0]), ay = fabsf(u[1]), az = fabsf(u[2]);
    vec3 e = {0.0f, 0.0f, 0.0f};
    e[ax <= ay && ax <= az ? 0 : (ay <= az ? 1 : 2)] = 1.0f;
    glm_vec3_cross(KILN__GLM(u), e, r);
    kiln__unit3f(r, r);
}

/* v' = q ⊗ v ⊗ q* for a unit q (r may be v). */
static inline void kiln__qrot_f(const versor q, const vec3 v, vec3 r)
{
    vec3 t, u;
    glm_vec3_cross(KILN__GLM(q), KILN__GLM(v), t);
    glm_vec3_scale(t, 2.0f, t);
    glm_vec3_cross(KILN__GLM(q), t, u);
    r[0] = v[0] + q[3] * t[0] + u[0], r[1] = v[1] + q[3] * t[1] + u[1], r[2] = v[2] + q[3] * t[2] + u[2];
}

/* Normalises q in place; a (near) zero or non-finite quaternion becomes the identity. */
static inline void kiln__qnorm_f(versor q)
{
    float n2 = glm_vec4_norm2(q);
    if (!(n2 > KILN__RIG_EPS2_F) || !isfinite(n2)) {
        glm_quat_identity(q);
        return;
    }
    glm_vec4_scale(q, 1.0f / sqrtf(n2), q);
}

/* The rotation about the unit axis by the angle whose cosine and sine are proportional to
 * (c, s) (any positive factor; atan2's convention, so (0, 0) is the identity). Half-angle:
 * (sin, cos)(angle / 2) ∝ (s, h + c) ∝ (h - c, s) with h = |(c, s)|; the form without
 * cancellation is taken. */
static inline void kiln__qaxis_cs_f(const vec3 axis, float c, float s, versor q)
{
    float h = sqrtf(c * c + s * s), hs, hc;
    if (c >= 0.0f) hs = s, hc = h + c;
    else hs = h - c, hc = s; /* the negated quaternion when s < 0: the same rotation */
    if (!(hs != 0.0f)) {
        glm_quat_identity(q);
        return;
    }
    q[0] = axis[0] * hs, q[1] = axis[1] * hs, q[2] = axis[2] * hs, q[3] = hc;
    kiln__qnorm_f(q);
}

/* The shortest rotation taking direction a to direction b (any lengths); the identity when
 * either is (near) zero. Directions opposite to within float resolution turn by pi about
 * `fallback` (when not NULL and perpendicular enough) or about any perpendicular axis.
 * The half-way quaternion (a × b, 1 + a·b) is formed with 1 + a·b = |a + b|^2 / 2 and the
 * cross product made exactly perpendicular to a, so nearly opposite directions keep their
 * accuracy: the image of a misses b by the rounding of the inputs only. */
static inline void kiln__qfrom_to_f(const vec3 a, const vec3 b, const float *fallback, versor q)
{
    vec3 ua, ub, c, sum;
    glm_quat_identity(q);
    if (kiln__unit3f(a, ua) == 0.0f || kiln__unit3f(b, ub) == 0.0f) return;
    glm_vec3_cross(ua, ub, c);
    glm_vec3_muladds(ua, -glm_vec3_dot(c, ua), c);
    glm_vec3_add(ua, ub, sum);
    float w = 0.5f * glm_vec3_norm2(sum);
    if (w < 1e-12f && glm_vec3_norm2(c) < 1e-12f) {
        vec3 axis;
        int have = 0;
        if (fallback) {
            vec3 f = {fallback[0], fallback[1], fallback[2]};
            glm_vec3_muladds(ua, -glm_vec3_dot(f, ua), f);
            have = kiln__unit3f(f, axis) > 1e-6f;
        }
        if (!have) kiln__any_perpendicular_f(ua, axis);
        q[0] = axis[0], q[1] = axis[1], q[2] = axis[2], q[3] = 0.0f;
        return;
    }
    q[0] = c[0], q[1] = c[1], q[2] = c[2], q[3] = w;
    kiln__qnorm_f(q);
}

/* The rotation of a matrix whose first two columns are c0 and c1 (float[16], column-major), as
 * kiln__qfrom_columns takes it: Gram-Schmidt on the columns, then Shepperd's method. */
static inline void kiln__qfrom_matrix_f(const float m[16], versor q)
{
    vec3 x = {m[0], m[1], m[2]}, y = {m[4], m[5], m[6]}, z;
    if (kiln__unit3f(x, x) == 0.0f) x[0] = 1.0f, x[1] = 0.0f, x[2] = 0.0f;
    glm_vec3_muladds(x, -glm_vec3_dot(x, y), y);
    if (kiln__unit3f(y, y) == 0.0f) kiln__any_perpendicular_f(x, y);
    glm_vec3_cross(x, y, z);
    /* Shepperd: the largest of 4w², 4x², 4y², 4z² gives the component to divide by */
    float tr = x[0] + y[1] + z[2], s, inv;
    if (tr > 0.0f) {
        s = 2.0f * sqrtf(1.0f + tr), inv = 1.0f / s;
        q[3] = 0.25f * s, q[0] = (y[2] - z[1]) * inv, q[1] = (z[0] - x[2]) * inv, q[2] = (x[1] - y[0]) * inv;
    } else if (x[0] > y[1] && x[0] > z[2]) {
        s = 2.0f * sqrtf(1.0f + x[0] - y[1] - z[2]), inv = 1.0f / s;
        q[3] = (y[2] - z[1]) * inv, q[0] = 0.25f * s, q[1] = (y[0] + x[1]) * inv, q[2] = (z[0] + x[2]) * inv;
    } else if (y[1] > z[2]) {
        s = 2.0f * sqrtf(1.0f + y[1] - x[0] - z[2]), inv = 1.0f / s;
        q[3] = (z[0] - x[2]) * inv, q[0] = (y[0] + x[1]) * inv, q[1] = 0.25f * s, q[2] = (z[1] + y[2]) * inv;
    } else {
        s = 2.0f * sqrtf(1.0f + z[2] - x[0] - y[1]), inv = 1.0f / s;
        q[3] = (x[1] - y[0]) * inv, q[0] = (z[0] + x[2]) * inv, q[1] = (z[1] + y[2]) * inv, q[2] = 0.25f * s;
    }
    kiln__qnorm_f(q);
}

/* r = a ⊗ b (r may be a or b: cglm's plain C path writes as it reads). */
static inline void kiln__qmul_f(const versor a, const versor b, versor r)
{
    versor t;
    glm_quat_mul(KILN__GLM(a), KILN__GLM(b), t);
    glm_vec4_copy(t, r);
}

/* conj(a) ⊗ b. */
static inline void kiln__qconj_mul_f(const versor a, const versor b, versor r)
{
    versor c = {-a[0], -a[1], -a[2], a[3]};
    kiln__qmul_f(c, b, r);
}

/* Spherical interpolation from a to b (unit) along the shorter arc, t in [0, 1]; a normalised
 * linear blend within 1e-6 of parallel. The result is unit length. */
static inline void kiln__qslerp_f(const versor a, const versor b, float t, versor r)
{
    float d = glm_vec4_dot(KILN__GLM(a), KILN__GLM(b)), sb = 1.0f;
    if (d < 0.0f) d = -d, sb = -1.0f;
    float wa = 1.0f - t, wb = t;
    if (d <= 1.0f - 1e-6f) {
        float th = acosf(d), s = sinf(th);
        wa = sinf(wa * th) / s, wb = sinf(wb * th) / s;
    }
    for (int i = 0; i < 4; i++) r[i] = wa * a[i] + sb * wb * b[i];
    kiln__qnorm_f(r);
}

#endif /* KILN_RIG_MATH_F32_H */
