/* runtime/rig_math_f32.h - the single-precision rotation helpers of the two-bone IK solver
 * (rig_two_bone.c) and the constraints (rig_constraint.c), on cglm's vec3 and versor. Private.
 *
 * Conventions as in rig_internal.h: quaternions (x, y, z, w), Hamilton product (glm_quat_mul),
 * active rotations of column vectors, a ⊗ b applies b first.
 *
 * No transcendental functions: a rotation by an angle is built from the angle's cosine and sine
 * (or any positive multiple of them) through the half-angle identities, so a solve costs square
 * roots and divisions only. Every function returns a unit quaternion for any finite input,
 * but for kiln__f4_qfrom_matrix_u (unit to rounding) and kiln__f4_qvalid (the length it was
 * given, within (1/2, 2)), whose results enter products that are normalised once at the end.
 */
#ifndef KILN_RIG_MATH_F32_H
#define KILN_RIG_MATH_F32_H

#include "math_cglm.h"

#include <float.h>
#include <math.h>

#include "simd.h"

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

/* ---- four lanes: x, y, z, w in one vector (the single two-bone solve, rig_two_bone.c) ------
 * Every function computes each lane as the cglm routine it stands for does on cglm's x86 paths
 * (each product rounded, sums in the same order), so a solve written with them gives the bits
 * the routines above give: glm_vec3_dot sums (x + y) + z, glm_vec4_norm2 (x + y) + (z + w),
 * glm_quat_mul is cglm's SSE2 formula. SSE2 where the build has that path (simd.h), else plain
 * C. The fourth lane of a 3-vector is carried along and never read. */
#if KILN__SIMD_SSE2
#include <emmintrin.h>
typedef __m128 kiln__f4;
static inline kiln__f4 kiln__f4_ld(const float *p) { return _mm_loadu_ps(p); }
/* sqrtf without the errno check (the same correctly rounded root) */
static inline float kiln__sqrt1f(float x) { return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x))); }
static inline void kiln__f4_st(float *p, kiln__f4 a) { _mm_storeu_ps(p, a); }
static inline kiln__f4 kiln__f4_set(float x, float y, float z, float w) { return _mm_setr_ps(x, y, z, w); }
static inline kiln__f4 kiln__f4_add(kiln__f4 a, kiln__f4 b) { return _mm_add_ps(a, b); }
static inline kiln__f4 kiln__f4_sub(kiln__f4 a, kiln__f4 b) { return _mm_sub_ps(a, b); }
static inline kiln__f4 kiln__f4_mul(kiln__f4 a, kiln__f4 b) { return _mm_mul_ps(a, b); }
static inline kiln__f4 kiln__f4_scale(kiln__f4 a, float s) { return _mm_mul_ps(a, _mm_set1_ps(s)); }
static inline float kiln__f4_x(kiln__f4 a) { return _mm_cvtss_f32(a); }
static inline float kiln__f4_y(kiln__f4 a) { return _mm_cvtss_f32(glmm_splat(a, 1)); }
static inline float kiln__f4_z(kiln__f4 a) { return _mm_cvtss_f32(_mm_movehl_ps(a, a)); }
static inline float kiln__f4_w(kiln__f4 a) { return _mm_cvtss_f32(glmm_splat(a, 3)); }
/* (a0 b0 + a1 b1) + a2 b2 */
static inline float kiln__f4_dot3(kiln__f4 a, kiln__f4 b)
{
    __m128 p = _mm_mul_ps(a, b);
    return _mm_cvtss_f32(_mm_add_ss(_mm_add_ss(p, glmm_splat(p, 1)), _mm_movehl_ps(p, p)));
}
/* (a0² + a1²) + (a2² + a3²) */
static inline float kiln__f4_norm2(kiln__f4 a) { return _mm_cvtss_f32(glmm_vhadds(_mm_mul_ps(a, a))); }
static inline kiln__f4 kiln__f4_cross(kiln__f4 a, kiln__f4 b)
{
    __m128 a1 = glmm_shuff1(a, 3, 0, 2, 1), b1 = glmm_shuff1(b, 3, 1, 0, 2);
    __m128 a2 = glmm_shuff1(a, 3, 1, 0, 2), b2 = glmm_shuff1(b, 3, 0, 2, 1);
    return _mm_sub_ps(_mm_mul_ps(a1, b1), _mm_mul_ps(a2, b2));
}
static inline kiln__f4 kiln__f4_qconj(kiln__f4 a) { return _mm_xor_ps(a, _mm_setr_ps(-0.0f, -0.0f, -0.0f, 0.0f)); }
/* (a0, a1, a2, w) */
static inline kiln__f4 kiln__f4_with_w(kiln__f4 a, float w)
{
    return _mm_shuffle_ps(a, _mm_unpackhi_ps(a, _mm_set1_ps(w)), _MM_SHUFFLE(1, 0, 1, 0));
}
/* glm_quat_mul_sse2(p, q) */
static inline kiln__f4 kiln__f4_qmul(kiln__f4 p, kiln__f4 q)
{
    __m128 x1 = _mm_set_ps(-0.f, 0.f, -0.f, 0.f), x2 = _mm_unpackhi_ps(x1, x1), x3 = glmm_shuff1(x1, 3, 2, 0, 1);
    __m128 r = _mm_mul_ps(glmm_splat(p, 3), q);
    r = _mm_add_ps(r, _mm_mul_ps(_mm_xor_ps(glmm_splat(p, 0), x1), glmm_shuff1(q, 0, 1, 2, 3)));
    r = _mm_add_ps(r, _mm_mul_ps(_mm_xor_ps(glmm_splat(p, 1), x2), glmm_shuff1(q, 1, 0, 3, 2)));
    return _mm_add_ps(r, _mm_mul_ps(_mm_xor_ps(glmm_splat(p, 2), x3), glmm_shuff1(q, 2, 3, 0, 1)));
}
#else
typedef struct kiln__f4 {
    float v[4];
} kiln__f4;
static inline float kiln__sqrt1f(float x) { return sqrtf(x); }
static inline kiln__f4 kiln__f4_ld(const float *p)
{
    kiln__f4 r = {{p[0], p[1], p[2], p[3]}};
    return r;
}
static inline void kiln__f4_st(float *p, kiln__f4 a) { p[0] = a.v[0], p[1] = a.v[1], p[2] = a.v[2], p[3] = a.v[3]; }
static inline kiln__f4 kiln__f4_set(float x, float y, float z, float w)
{
    kiln__f4 r = {{x, y, z, w}};
    return r;
}
static inline kiln__f4 kiln__f4_add(kiln__f4 a, kiln__f4 b)
{
    for (int i = 0; i < 4; i++) a.v[i] = a.v[i] + b.v[i];
    return a;
}
static inline kiln__f4 kiln__f4_sub(kiln__f4 a, kiln__f4 b)
{
    for (int i = 0; i < 4; i++) a.v[i] = a.v[i] - b.v[i];
    return a;
}
static inline kiln__f4 kiln__f4_mul(kiln__f4 a, kiln__f4 b)
{
    for (int i = 0; i < 4; i++) a.v[i] = a.v[i] * b.v[i];
    return a;
}
static inline kiln__f4 kiln__f4_scale(kiln__f4 a, float s)
{
    for (int i = 0; i < 4; i++) a.v[i] = a.v[i] * s;
    return a;
}
static inline float kiln__f4_x(kiln__f4 a) { return a.v[0]; }
static inline float kiln__f4_y(kiln__f4 a) { return a.v[1]; }
static inline float kiln__f4_z(kiln__f4 a) { return a.v[2]; }
static inline float kiln__f4_w(kiln__f4 a) { return a.v[3]; }
static inline float kiln__f4_dot3(kiln__f4 a, kiln__f4 b)
{
    float p0 = a.v[0] * b.v[0], p1 = a.v[1] * b.v[1], p2 = a.v[2] * b.v[2];
    return (p0 + p1) + p2;
}
static inline float kiln__f4_norm2(kiln__f4 a)
{
    float p0 = a.v[0] * a.v[0], p1 = a.v[1] * a.v[1], p2 = a.v[2] * a.v[2], p3 = a.v[3] * a.v[3];
    return (p0 + p1) + (p2 + p3);
}
static inline kiln__f4 kiln__f4_cross(kiln__f4 a, kiln__f4 b)
{
    kiln__f4 r = {{a.v[1] * b.v[2] - a.v[2] * b.v[1], a.v[2] * b.v[0] - a.v[0] * b.v[2],
                   a.v[0] * b.v[1] - a.v[1] * b.v[0], 0.0f}};
    return r;
}
static inline kiln__f4 kiln__f4_qconj(kiln__f4 a)
{
    a.v[0] = -a.v[0], a.v[1] = -a.v[1], a.v[2] = -a.v[2];
    return a;
}
static inline kiln__f4 kiln__f4_with_w(kiln__f4 a, float w)
{
    a.v[3] = w;
    return a;
}
static inline kiln__f4 kiln__f4_qmul(kiln__f4 p, kiln__f4 q)
{
    const float *a = p.v, *b = q.v;
    kiln__f4 r = {{a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
                   a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
                   a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
                   a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]}};
    return r;
}
#endif

/* a + b·s, per lane (glm_vec3_muladds(b, s, a)) */
static inline kiln__f4 kiln__f4_muladds(kiln__f4 a, kiln__f4 b, float s)
{
    return kiln__f4_add(a, kiln__f4_scale(b, s));
}

/* kiln__unit3f */
static inline float kiln__f4_unit3(kiln__f4 a, kiln__f4 *r)
{
    float n2 = kiln__f4_dot3(a, a);
    if (!(n2 > KILN__RIG_EPS2_F)) {
        *r = kiln__f4_set(0.0f, 0.0f, 0.0f, 0.0f);
        return 0.0f;
    }
    float n = kiln__sqrt1f(n2);
    *r = kiln__f4_scale(a, 1.0f / n);
    return n;
}

/* kiln__qnorm_f */
static inline kiln__f4 kiln__f4_qnorm(kiln__f4 q)
{
    float n2 = kiln__f4_norm2(q);
    if (!(n2 > KILN__RIG_EPS2_F) || !isfinite(n2)) return kiln__f4_set(0.0f, 0.0f, 0.0f, 1.0f);
    return kiln__f4_scale(q, 1.0f / kiln__sqrt1f(n2));
}

/* kiln__qrot_f */
static inline kiln__f4 kiln__f4_qrot(kiln__f4 q, kiln__f4 v)
{
    kiln__f4 t = kiln__f4_scale(kiln__f4_cross(q, v), 2.0f), u = kiln__f4_cross(q, t);
    return kiln__f4_add(kiln__f4_muladds(v, t, kiln__f4_w(q)), u);
}

/* kiln__qaxis_cs_f */
static inline kiln__f4 kiln__f4_qaxis_cs(kiln__f4 axis, float c, float s)
{
    float h = kiln__sqrt1f(c * c + s * s), hs, hc;
    if (c >= 0.0f) hs = s, hc = h + c;
    else hs = h - c, hc = s;
    if (!(hs != 0.0f)) return kiln__f4_set(0.0f, 0.0f, 0.0f, 1.0f);
    return kiln__f4_qnorm(kiln__f4_with_w(kiln__f4_scale(axis, hs), hc));
}

/* kiln__qfrom_to_f (its fallback for opposite directions through it) */
static inline kiln__f4 kiln__f4_qfrom_to(kiln__f4 a, kiln__f4 b, const float *fallback)
{
    kiln__f4 ua, ub;
    if (kiln__f4_unit3(a, &ua) == 0.0f || kiln__f4_unit3(b, &ub) == 0.0f) return kiln__f4_set(0.0f, 0.0f, 0.0f, 1.0f);
    kiln__f4 c = kiln__f4_cross(ua, ub), sum = kiln__f4_add(ua, ub);
    c = kiln__f4_muladds(c, ua, -kiln__f4_dot3(c, ua));
    float w = 0.5f * kiln__f4_dot3(sum, sum);
    if (w < 1e-12f && kiln__f4_dot3(c, c) < 1e-12f) {
        float va[4], vb[4];
        versor q;
        kiln__f4_st(va, a), kiln__f4_st(vb, b);
        kiln__qfrom_to_f(va, vb, fallback, q);
        return kiln__f4_ld(q);
    }
    return kiln__f4_qnorm(kiln__f4_with_w(c, w));
}

/* ---- one rotation relative to another (the constraints, rig_constraint_step.h) ---------------
 * conj(R(P)) ⊗ R(T) for two matrices P and T as the rotation of ONE 3x3, Rp^T · Rt (Rp, Rt:
 * their orthonormalised columns as kiln__f4_qfrom_matrix_u takes them): one Shepperd step instead
 * of two, a product and a normalisation. */

/* The orthonormalised rotation columns of m (kiln__qfrom_columns' Gram-Schmidt: x from
 * column 0, y from column 1 made perpendicular to it, z = x × y) into c[0..3], c[4..7],
 * c[8..11] (fourth lanes 0). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline void kiln__f4_rot_cols(const float m[16], float c[12])
{
    kiln__f4 x, y;
    if (kiln__f4_unit3(kiln__f4_ld(m), &x) == 0.0f) x = kiln__f4_set(1.0f, 0.0f, 0.0f, 0.0f);
    y = kiln__f4_ld(m + 4);
    y = kiln__f4_muladds(y, x, -kiln__f4_dot3(x, y));
    if (kiln__f4_unit3(y, &y) == 0.0f) {
        float vx[4], vy[4];
        kiln__f4_st(vx, x);
        kiln__any_perpendicular_f(vx, vy);
        vy[3] = 0.0f;
        y = kiln__f4_ld(vy);
    }
    kiln__f4_st(c, x), kiln__f4_st(c + 4, y), kiln__f4_st(c + 8, kiln__f4_cross(x, y));
}

/* The rows of the 3x3 whose columns c (kiln__f4_rot_cols) holds: row k = the k-th components of
 * the three columns (its transpose's columns), fourth lanes 0. */
static inline void kiln__f4_rows_of(const float c[12], float rows[12])
{
    for (int k = 0; k < 3; k++) rows[k * 4] = c[k], rows[k * 4 + 1] = c[4 + k], rows[k * 4 + 2] = c[8 + k], rows[k * 4 + 3] = 0.0f;
}

/* Column j of Rp^T · Rt: the dot products of Rp's columns with Rt's column t, computed as
 * (a0·t0 + a1·t1) + a2·t2 over the rows a of Rp^T (each lane a dot product summed as
 * kiln__f4_dot3 sums). */
static inline kiln__f4 kiln__f4_mul_rows(const float rows[12], const float t[3])
{
    kiln__f4 v = kiln__f4_scale(kiln__f4_ld(rows), t[0]);
    v = kiln__f4_muladds(v, kiln__f4_ld(rows + 4), t[1]);
    return kiln__f4_muladds(v, kiln__f4_ld(rows + 8), t[2]);
}

/* Shepperd's method on a rotation's columns X, Y, Z (c[0..2], c[4..6], c[8..10]) as
 * kiln__f4_qfrom_matrix_u has it, without the final normalisation: a quaternion of length 1 up
 * to the rounding of the columns, for the caller to normalise after its own products. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline kiln__f4 kiln__f4_shepperd(const float c[12])
{
    const float *X = c, *Y = c + 4, *Z = c + 8;
    float tr = X[0] + Y[1] + Z[2], s, inv;
    if (tr > 0.0f) {
        s = 2.0f * kiln__sqrt1f(1.0f + tr), inv = 1.0f / s;
        return kiln__f4_set((Y[2] - Z[1]) * inv, (Z[0] - X[2]) * inv, (X[1] - Y[0]) * inv, 0.25f * s);
    }
    if (X[0] > Y[1] && X[0] > Z[2]) {
        s = 2.0f * kiln__sqrt1f(1.0f + X[0] - Y[1] - Z[2]), inv = 1.0f / s;
        return kiln__f4_set(0.25f * s, (Y[0] + X[1]) * inv, (Z[0] + X[2]) * inv, (Y[2] - Z[1]) * inv);
    }
    if (Y[1] > Z[2]) {
        s = 2.0f * kiln__sqrt1f(1.0f + Y[1] - X[0] - Z[2]), inv = 1.0f / s;
        return kiln__f4_set((Y[0] + X[1]) * inv, 0.25f * s, (Z[1] + Y[2]) * inv, (Z[0] - X[2]) * inv);
    }
    s = 2.0f * kiln__sqrt1f(1.0f + Z[2] - X[0] - Y[1]), inv = 1.0f / s;
    return kiln__f4_set((Z[0] + X[2]) * inv, (Z[1] + Y[2]) * inv, 0.25f * s, (X[1] - Y[0]) * inv);
}

/* conj(R(P)) ⊗ R(T), unnormalised, from prow (kiln__f4_rows_of of P's kiln__f4_rot_cols) and
 * tcol (T's kiln__f4_rot_cols): Shepperd on the product Rp^T · Rt. */
static inline kiln__f4 kiln__f4_qrel(const float prow[12], const float tcol[12])
{
    float m[12];
    for (int j = 0; j < 3; j++) kiln__f4_st(m + j * 4, kiln__f4_mul_rows(prow, tcol + j * 4));
    return kiln__f4_shepperd(m);
}

/* q itself when its length is within (1/2, 2), else kiln__f4_qnorm(q) (the identity for a
 * (near) zero or non-finite q): for a rotation only ever composed with others and normalised
 * at the end, which such a length does not change, while a product of a few of them stays far
 * from float's limits. */
static inline kiln__f4 kiln__f4_qvalid(kiln__f4 q)
{
    float n2 = kiln__f4_norm2(q);
    if (n2 > 0.25f && n2 < 4.0f) return q;
    return kiln__f4_qnorm(q);
}

/* The rotation of m (kiln__qfrom_columns' Gram-Schmidt on its first two columns, then
 * Shepperd's method) up to its last normalisation (kiln__f4_qvalid instead): unit to rounding. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline kiln__f4 kiln__f4_qfrom_matrix_u(const float m[16])
{
    float c[12];
    kiln__f4_rot_cols(m, c);
    return kiln__f4_qvalid(kiln__f4_shepperd(c));
}

/* The rows of the 3x3 whose columns c (kiln__f4_rot_cols) holds, as kiln__f4_rows_of gives
 * them, in vectors. */
static inline void kiln__f4_rows3(const float c[12], kiln__f4 rows[3])
{
#if KILN__SIMD_SSE2
    __m128 x = _mm_loadu_ps(c), y = _mm_loadu_ps(c + 4), z = _mm_loadu_ps(c + 8), w = _mm_setzero_ps();
    _MM_TRANSPOSE4_PS(x, y, z, w);
    rows[0] = x, rows[1] = y, rows[2] = z;
#else
    for (int k = 0; k < 3; k++) rows[k] = kiln__f4_set(c[k], c[4 + k], c[8 + k], 0.0f);
#endif
}

/* (R^T · q.xyz, q.w) for the rows of R (kiln__f4_rows3 of its kiln__f4_rot_cols): a rotation
 * given in model space re-expressed in R's frame, conj(R) ⊗ q ⊗ R for the quaternion of R, with
 * no Shepperd step; each lane summed as kiln__f4_mul_rows sums it. */
static inline kiln__f4 kiln__f4_rows_mul_q(const kiln__f4 rows[3], kiln__f4 q)
{
    kiln__f4 v = kiln__f4_scale(rows[0], kiln__f4_x(q));
    v = kiln__f4_muladds(v, rows[1], kiln__f4_y(q));
    v = kiln__f4_muladds(v, rows[2], kiln__f4_z(q));
    return kiln__f4_with_w(v, kiln__f4_w(q));
}

/* kiln__f4_qaxis_cs up to a positive factor, (axis · hs, hc) / h with |q|² in [2, 4], for a
 * rotation only composed with others and normalised at the end: one division instead of the
 * normalisation's square root and division. The identity where kiln__f4_qaxis_cs gives it, and
 * for h not above 0 (a (c, s) whose squares underflow). */
static inline kiln__f4 kiln__f4_qaxis_cs_u(kiln__f4 axis, float c, float s)
{
    float h = kiln__sqrt1f(c * c + s * s), hs, hc;
    if (c >= 0.0f) hs = s, hc = h + c;
    else hs = h - c, hc = s;
    if (!(hs != 0.0f) || !(h > 0.0f)) return kiln__f4_set(0.0f, 0.0f, 0.0f, 1.0f);
    float ih = 1.0f / h;
    return kiln__f4_with_w(kiln__f4_scale(axis, hs * ih), hc * ih);
}

/* kiln__f4_norm2 of a, b, c and d in lanes 0 to 3 (the same sums, (x² + y²) + (z² + w²)). */
static inline kiln__f4 kiln__f4_norm2_4(kiln__f4 a, kiln__f4 b, kiln__f4 c, kiln__f4 d)
{
#if KILN__SIMD_SSE2
    a = _mm_mul_ps(a, a), b = _mm_mul_ps(b, b), c = _mm_mul_ps(c, c), d = _mm_mul_ps(d, d);
    _MM_TRANSPOSE4_PS(a, b, c, d);
    return _mm_add_ps(_mm_add_ps(a, b), _mm_add_ps(c, d));
#else
    return kiln__f4_set(kiln__f4_norm2(a), kiln__f4_norm2(b), kiln__f4_norm2(c), kiln__f4_norm2(d));
#endif
}

/* 1 / sqrt(n2) per lane into *inv (a correctly rounded square root, then a division: per lane
 * the bits of kiln__f4_qnorm's factor); returns whether every lane's n2 is above
 * KILN__RIG_EPS2_F and finite (kiln__f4_qnorm's test), so that they all apply. */
static inline int kiln__f4_inv_len4(kiln__f4 n2, kiln__f4 *inv)
{
#if KILN__SIMD_SSE2
    __m128 ok = _mm_and_ps(_mm_cmpgt_ps(n2, _mm_set1_ps(KILN__RIG_EPS2_F)), _mm_cmple_ps(n2, _mm_set1_ps(FLT_MAX)));
    *inv = _mm_div_ps(_mm_set1_ps(1.0f), _mm_sqrt_ps(n2));
    return _mm_movemask_ps(ok) == 0xF;
#else
    int ok = 1;
    for (int k = 0; k < 4; k++) {
        ok &= n2.v[k] > KILN__RIG_EPS2_F && n2.v[k] <= FLT_MAX;
        inv->v[k] = 1.0f / sqrtf(n2.v[k]);
    }
    return ok;
#endif
}

#endif /* KILN_RIG_MATH_F32_H */
