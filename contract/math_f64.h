/* contract/math_f64.h - the double-precision vector, quaternion and matrix helpers the baker and
 * the runtime share: the runtime's IK and constraint solver (rig_*.c) works with them, and the
 * baker computes with the same ones what the runtime will recompute (the constraint offsets
 * that reproduce the rest pose in bake_rig.c, the error of a lossy clip in bake_anim_lossy.c).
 *
 * Private to the two libraries and never installed: header-only, every function static inline.
 *
 * Conventions: vectors are double[3], quaternions double[4] as (x, y, z, w), Hamilton product,
 * active rotations of column vectors (v' = q ⊗ v ⊗ q*), a ⊗ b applies b first; 3x3 matrices
 * are double[9], column-major (m[col * 3 + row]); an affine transform is double[12], its 3x3
 * then its translation in m[9..11].
 */
#ifndef KILN_CONTRACT_MATH_F64_H
#define KILN_CONTRACT_MATH_F64_H

#include <math.h>

/* Below this a length or a sine counts as zero: directions are not taken from shorter vectors,
 * and callers fall back to a defined choice instead. */
#define KILN__F64_EPS 1e-9

/* ---- vectors -------------------------------------------------------------------------------- */
static inline double kiln__dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static inline double kiln__len3(const double a[3]) { return sqrt(kiln__dot3(a, a)); }
static inline void kiln__sub3(const double a[3], const double b[3], double r[3])
{
    r[0] = a[0] - b[0], r[1] = a[1] - b[1], r[2] = a[2] - b[2];
}
static inline void kiln__cross3(const double a[3], const double b[3], double r[3])
{
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    r[0] = x, r[1] = y, r[2] = z;
}
/* r = a / |a| (r may be a); returns |a|. When |a| <= KILN__F64_EPS, r is zero: callers test
 * the length and pick a fallback direction. */
static inline double kiln__unit3(const double a[3], double r[3])
{
    double n = kiln__len3(a);
    if (n > KILN__F64_EPS) {
        double inv = 1.0 / n; /* one division: FABRIK's passes are a chain of these */
        r[0] = a[0] * inv, r[1] = a[1] * inv, r[2] = a[2] * inv;
    } else {
        r[0] = r[1] = r[2] = 0.0;
    }
    return n;
}
/* A unit vector perpendicular to the unit vector u. */
static inline void kiln__any_perpendicular(const double u[3], double r[3])
{
    /* cross with the axis u is least aligned with: never shorter than sqrt(2/3) */
    double ax = fabs(u[0]), ay = fabs(u[1]), az = fabs(u[2]);
    double e[3] = {0, 0, 0};
    e[ax <= ay && ax <= az ? 0 : (ay <= az ? 1 : 2)] = 1.0;
    double c[3];
    kiln__cross3(u, e, c);
    kiln__unit3(c, r);
}

/* ---- quaternions ---------------------------------------------------------------------------- */
static inline void kiln__qmul(const double a[4], const double b[4], double r[4])
{
    double x = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    double y = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    double z = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    double w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
    r[0] = x, r[1] = y, r[2] = z, r[3] = w;
}
static inline void kiln__qconj(const double q[4], double r[4]) { r[0] = -q[0], r[1] = -q[1], r[2] = -q[2], r[3] = q[3]; }
/* Normalises q in place; a (near) zero quaternion becomes the identity. */
static inline void kiln__qnorm(double q[4])
{
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(n > KILN__F64_EPS) || !isfinite(n)) {
        q[0] = q[1] = q[2] = 0.0, q[3] = 1.0;
        return;
    }
    double inv = 1.0 / n;
    q[0] *= inv, q[1] *= inv, q[2] *= inv, q[3] *= inv;
}
/* v' = q ⊗ v ⊗ q* for a unit q. */
static inline void kiln__qrot(const double q[4], const double v[3], double r[3])
{
    double t[3], u[3];
    kiln__cross3(q, v, t);
    t[0] *= 2, t[1] *= 2, t[2] *= 2;
    kiln__cross3(q, t, u);
    r[0] = v[0] + q[3] * t[0] + u[0], r[1] = v[1] + q[3] * t[1] + u[1], r[2] = v[2] + q[3] * t[2] + u[2];
}
/* Rotation by `angle` radians about the unit axis. */
static inline void kiln__qaxis(const double axis[3], double angle, double q[4])
{
    double s = sin(0.5 * angle);
    q[0] = axis[0] * s, q[1] = axis[1] * s, q[2] = axis[2] * s, q[3] = cos(0.5 * angle);
}
/* Spherical interpolation from a to b (unit quaternions) along the shorter arc, t in [0, 1],
 * normalised as kiln__qnorm normalises; r may alias a. Where a·b (of the shorter arc) is above
 * 1 - lerp_eps, sin θ is too small to divide by and the weights are 1 - t and t. The runtime's
 * solver takes lerp_eps = 1e-9 (kiln__qslerp); the baker resamples rotation keys with 1e-12. */
static inline void kiln__qslerp_eps(const double a[4], const double b[4], double t, double lerp_eps, double r[4])
{
    double d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    double sb = 1.0;
    if (d < 0.0) d = -d, sb = -1.0; /* shorter arc */
    double wa = 1.0 - t, wb = t;
    if (d <= 1.0 - lerp_eps) {
        double th = acos(d > 1.0 ? 1.0 : d), s = sin(th);
        wa = sin(wa * th) / s, wb = sin(wb * th) / s;
    }
    for (int i = 0; i < 4; i++) r[i] = wa * a[i] + sb * wb * b[i];
    kiln__qnorm(r);
}
/* slerp(I, k, a) along the shorter arc, for a unit k and any real a: k^a. Exact (no nlerp
 * approximation): the runtime's fix-up for additive rotation weights outside [0, 1], and the
 * baker's reference for additive rotations when it measures a lossy clip. */
static inline void kiln__qpow(const double k[4], double a, double out[4])
{
    double x = k[0], y = k[1], z = k[2], w = k[3];
    if (w < 0) x = -x, y = -y, z = -z, w = -w; /* shortest arc */
    double s = sqrt(x * x + y * y + z * z);
    if (!(s > 1e-12)) {
        out[0] = out[1] = out[2] = 0.0, out[3] = 1.0;
        return;
    }
    double theta = atan2(s, w), f = sin(a * theta) / s;
    out[0] = x * f, out[1] = y * f, out[2] = z * f, out[3] = cos(a * theta);
}

/* ---- rotation matrices ---------------------------------------------------------------------- */
/* The rotation matrix of a unit quaternion (3x3, column-major). */
static inline void kiln__qto_mat3(const double q[4], double r[9])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    r[0] = 1 - 2 * (y * y + z * z), r[1] = 2 * (x * y + w * z), r[2] = 2 * (x * z - w * y);
    r[3] = 2 * (x * y - w * z), r[4] = 1 - 2 * (x * x + z * z), r[5] = 2 * (y * z + w * x);
    r[6] = 2 * (x * z + w * y), r[7] = 2 * (y * z - w * x), r[8] = 1 - 2 * (x * x + y * y);
}

/* The quaternion of a rotation given by its orthonormal columns x, y, z (Shepperd's method:
 * the square root is taken of the largest of 4w², 4x², 4y², 4z²). Not normalised. */
static inline void kiln__qfrom_basis(const double x[3], const double y[3], const double z[3], double q[4])
{
    double tr = x[0] + y[1] + z[2];
    if (tr > 0.0) {
        double s = 2.0 * sqrt(1.0 + tr);
        q[3] = 0.25 * s, q[0] = (y[2] - z[1]) / s, q[1] = (z[0] - x[2]) / s, q[2] = (x[1] - y[0]) / s;
    } else if (x[0] > y[1] && x[0] > z[2]) {
        double s = 2.0 * sqrt(1.0 + x[0] - y[1] - z[2]);
        q[3] = (y[2] - z[1]) / s, q[0] = 0.25 * s, q[1] = (y[0] + x[1]) / s, q[2] = (z[0] + x[2]) / s;
    } else if (y[1] > z[2]) {
        double s = 2.0 * sqrt(1.0 + y[1] - x[0] - z[2]);
        q[3] = (z[0] - x[2]) / s, q[0] = (y[0] + x[1]) / s, q[1] = 0.25 * s, q[2] = (z[1] + y[2]) / s;
    } else {
        double s = 2.0 * sqrt(1.0 + z[2] - x[0] - y[1]);
        q[3] = (x[1] - y[0]) / s, q[0] = (z[0] + x[2]) / s, q[1] = (z[1] + y[2]) / s, q[2] = 0.25 * s;
    }
}

/* The rotation of a 3x3 whose first two columns are c0 and c1, as the runtime takes rotations
 * from model matrices: Gram-Schmidt on the columns (x = c0 normalised, then y = c1 without its
 * x part, normalised; z = x × y), then Shepperd, as a unit quaternion. Degenerate columns fall
 * back to the x axis, and to any axis perpendicular to x. */
static inline void kiln__qfrom_columns(const double c0[3], const double c1[3], double q[4])
{
    double x[3] = {c0[0], c0[1], c0[2]}, y[3] = {c1[0], c1[1], c1[2]}, z[3];
    if (kiln__unit3(x, x) <= KILN__F64_EPS) x[0] = 1, x[1] = 0, x[2] = 0;
    double along = kiln__dot3(x, y);
    y[0] -= along * x[0], y[1] -= along * x[1], y[2] -= along * x[2];
    if (kiln__unit3(y, y) <= KILN__F64_EPS) kiln__any_perpendicular(x, y);
    kiln__cross3(x, y, z);
    kiln__qfrom_basis(x, y, z, q);
    kiln__qnorm(q);
}

/* x = inverse(m) · p for an affine m (double[12]); 0 when m's 3x3 is singular (a zero scale,
 * or a determinant below 1e-12 of the cube of its entries' sum) or not finite. */
static inline int kiln__affine_solve(const double m[12], const double p[3], double x[3])
{
    double a = m[0], b = m[3], c = m[6], d = m[1], e = m[4], f = m[7], g = m[2], h = m[5], i = m[8];
    double c00 = e * i - f * h, c01 = c * h - b * i, c02 = b * f - c * e;
    double det = a * c00 + b * (f * g - d * i) + c * (d * h - e * g);
    double scale = fabs(a) + fabs(b) + fabs(c) + fabs(d) + fabs(e) + fabs(f) + fabs(g) + fabs(h) + fabs(i);
    if (!(fabs(det) > 1e-12 * scale * scale * scale) || !isfinite(det)) return 0;
    double v[3] = {p[0] - m[9], p[1] - m[10], p[2] - m[11]};
    x[0] = (c00 * v[0] + c01 * v[1] + c02 * v[2]) / det;
    x[1] = ((f * g - d * i) * v[0] + (a * i - c * g) * v[1] + (c * d - a * f) * v[2]) / det;
    x[2] = ((d * h - e * g) * v[0] + (b * g - a * h) * v[1] + (a * e - b * d) * v[2]) / det;
    return 1;
}

#endif /* KILN_CONTRACT_MATH_F64_H */
