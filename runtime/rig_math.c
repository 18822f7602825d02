/* Double-precision rotation helpers of the IK and constraint solver (rig_internal.h).
 *
 * The solver runs once per handle or constraint on a handful of joints, so it favours exact,
 * branchy code with explicit degenerate cases over SIMD: every function here returns a unit
 * quaternion for any finite input.
 */
#include <math.h>

#include "rig_internal.h"

void kiln__qfrom_to(const double a[3], const double b[3], const double *fallback, double q[4])
{
    double ua[3], ub[3];
    q[0] = q[1] = q[2] = 0.0, q[3] = 1.0;
    if (kiln__unit3(a, ua) <= KILN__RIG_EPS || kiln__unit3(b, ub) <= KILN__RIG_EPS) return;
    double d = kiln__dot3(ua, ub);
    if (d < -1.0 + 1e-12) {
        /* Opposite: any axis perpendicular to a works; prefer the caller's (a hinge axis keeps
         * a bent chain in its plane). */
        double axis[3];
        int have = 0;
        if (fallback) {
            double f[3] = {fallback[0], fallback[1], fallback[2]}, along = kiln__dot3(f, ua);
            f[0] -= along * ua[0], f[1] -= along * ua[1], f[2] -= along * ua[2];
            have = kiln__unit3(f, axis) > 1e-6;
        }
        if (!have) kiln__any_perpendicular(ua, axis);
        q[0] = axis[0], q[1] = axis[1], q[2] = axis[2], q[3] = 0.0;
        return;
    }
    /* The half-way quaternion: (a × b, 1 + a·b), normalised, is exact and stable away from -1. */
    double c[3];
    kiln__cross3(ua, ub, c);
    q[0] = c[0], q[1] = c[1], q[2] = c[2], q[3] = 1.0 + d;
    kiln__qnorm(q);
}

void kiln__qslerp(const double a[4], const double b[4], double t, double r[4]) { kiln__qslerp_eps(a, b, t, 1e-9, r); }

/* R = Rz(c) · Ry(b) · Rx(a): R20 = -sin b, R21 = cos b sin a, R22 = cos b cos a,
 * R10 = cos b sin c, R00 = cos b cos c; at cos b = 0 only a - c (or a + c) is defined, and c = 0
 * is chosen: then R11 = cos a, R12 = -sin a. */
void kiln__qto_euler_xyz(const double q[4], double e[3])
{
    double m[9];
    kiln__qto_mat3(q, m);
    double r00 = m[0], r10 = m[1], r20 = m[2], r21 = m[5], r22 = m[8], r11 = m[4], r12 = m[7];
    double cb = sqrt(r00 * r00 + r10 * r10);
    e[1] = atan2(-r20, cb);
    if (cb > 1e-9) {
        e[0] = atan2(r21, r22);
        e[2] = atan2(r10, r00);
    } else {
        e[0] = atan2(-r12, r11);
        e[2] = 0.0;
    }
}

void kiln__qfrom_euler_xyz(const double e[3], double q[4])
{
    static const double ax[3] = {1, 0, 0}, ay[3] = {0, 1, 0}, az[3] = {0, 0, 1};
    double qx[4], qy[4], qz[4], t[4];
    kiln__qaxis(ax, e[0], qx);
    kiln__qaxis(ay, e[1], qy);
    kiln__qaxis(az, e[2], qz);
    kiln__qmul(qz, qy, t);
    kiln__qmul(t, qx, q);
    kiln__qnorm(q);
}

void kiln__qfrom_matrix(const float m[16], double q[4])
{
    double c0[3] = {m[0], m[1], m[2]}, c1[3] = {m[4], m[5], m[6]};
    kiln__qfrom_columns(c0, c1, q);
}
