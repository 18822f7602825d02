/* Matrix and quaternion helpers of the *.Shape importer, in doubles: 4x4 matrices are
 * column-major for column vectors (m[c * 4 + r]), quaternions x, y, z, w (spec section 0). */
#include <math.h>
#include <string.h>

#include "math_f64.h"
#include "shape_internal.h"

#define M(m, r, c) (m)[(c) * 4 + (r)]

void kiln__shape_mat_mul(const double *a, const double *b, double *out)
{
    double t[16];
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++) {
            double s = 0.0;
            for (int k = 0; k < 4; k++) s += M(a, r, k) * M(b, k, c);
            M(t, r, c) = s;
        }
    memcpy(out, t, sizeof t);
}

void kiln__shape_mat_from_trs(const double *t, const double *q, const double *s, double *out)
{
    double r3[9]; /* column-major */
    kiln__qto_mat3(q, r3);
    for (int c = 0; c < 3; c++) {
        for (int r = 0; r < 3; r++) M(out, r, c) = r3[c * 3 + r] * s[c];
        M(out, 3, c) = 0.0;
    }
    for (int r = 0; r < 3; r++) M(out, r, 3) = t[r];
    M(out, 3, 3) = 1.0;
}

static double kiln__det3(const double a[3][3])
{
    return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
           a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
}

/* Inverse transpose of a 3x3; 0 when singular. */
static int kiln__inv_t3(const double a[3][3], double o[3][3])
{
    double det = kiln__det3(a);
    if (!(fabs(det) > 1e-30)) return 0;
    double inv = 1.0 / det;
    /* cofactor matrix / det = inverse transpose */
    o[0][0] = (a[1][1] * a[2][2] - a[1][2] * a[2][1]) * inv;
    o[0][1] = -(a[1][0] * a[2][2] - a[1][2] * a[2][0]) * inv;
    o[0][2] = (a[1][0] * a[2][1] - a[1][1] * a[2][0]) * inv;
    o[1][0] = -(a[0][1] * a[2][2] - a[0][2] * a[2][1]) * inv;
    o[1][1] = (a[0][0] * a[2][2] - a[0][2] * a[2][0]) * inv;
    o[1][2] = -(a[0][0] * a[2][1] - a[0][1] * a[2][0]) * inv;
    o[2][0] = (a[0][1] * a[1][2] - a[0][2] * a[1][1]) * inv;
    o[2][1] = -(a[0][0] * a[1][2] - a[0][2] * a[1][0]) * inv;
    o[2][2] = (a[0][0] * a[1][1] - a[0][1] * a[1][0]) * inv;
    return 1;
}

int kiln__shape_normal_matrix(const double *m, double *out3x3)
{
    double a[3][3], o[3][3];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) a[r][c] = M(m, r, c);
    if (!kiln__inv_t3(a, o)) return 0;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) out3x3[r * 3 + c] = o[r][c];
    return 1;
}

void kiln__shape_transform_point(const double *m, const float *p, float *out)
{
    double v[3];
    for (int r = 0; r < 3; r++) v[r] = M(m, r, 0) * p[0] + M(m, r, 1) * p[1] + M(m, r, 2) * p[2] + M(m, r, 3);
    for (int r = 0; r < 3; r++) out[r] = (float)v[r];
}

void kiln__shape_transform_normal(const double *n3, const float *n, float *out)
{
    double v[3];
    for (int r = 0; r < 3; r++) v[r] = n3[r * 3 + 0] * n[0] + n3[r * 3 + 1] * n[1] + n3[r * 3 + 2] * n[2];
    double len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (len > 1e-20)
        for (int r = 0; r < 3; r++) v[r] /= len;
    for (int r = 0; r < 3; r++) out[r] = (float)v[r];
}

/* Shepperd's method (contract/math_f64.h), then normalised with w >= 0. */
static void kiln__mat3_to_quat(const double a[3][3], double *q)
{
    const double x[3] = {a[0][0], a[1][0], a[2][0]}, y[3] = {a[0][1], a[1][1], a[2][1]}, z[3] = {a[0][2], a[1][2], a[2][2]};
    kiln__qfrom_basis(x, y, z, q);
    double len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(len > 1e-12)) {
        q[0] = q[1] = q[2] = 0.0;
        q[3] = 1.0;
        return;
    }
    double sign = q[3] < 0.0 ? -1.0 : 1.0;
    for (int i = 0; i < 4; i++) q[i] *= sign / len;
}

unsigned kiln__shape_decompose(const double *m, double *t, double *q, double *s)
{
    unsigned repairs = 0;
    if (M(m, 3, 0) != 0.0 || M(m, 3, 1) != 0.0 || M(m, 3, 2) != 0.0 || M(m, 3, 3) != 1.0) repairs |= 1u;
    for (int r = 0; r < 3; r++) t[r] = M(m, r, 3);
    double a[3][3];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) a[r][c] = M(m, r, c);
    int zero = 0;
    for (int c = 0; c < 3; c++) {
        s[c] = sqrt(a[0][c] * a[0][c] + a[1][c] * a[1][c] + a[2][c] * a[2][c]);
        if (s[c] < 1e-8) zero = 1;
    }
    if (zero) {
        for (int c = 0; c < 3; c++)
            if (s[c] < 1e-8) s[c] = 0.0;
        if (kiln__det3(a) < 0.0 && s[0] > 0.0) s[0] = -s[0];
        q[0] = q[1] = q[2] = 0.0;
        q[3] = 1.0;
        return repairs | 4u;
    }
    if (kiln__det3(a) < 0.0) s[0] = -s[0];
    for (int c = 0; c < 3; c++)
        for (int r = 0; r < 3; r++) a[r][c] /= s[c];
    int shear = 0;
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++) {
            double d = a[0][i] * a[0][j] + a[1][i] * a[1][j] + a[2][i] * a[2][j];
            if (fabs(d) > 1e-4) shear = 1;
        }
    if (shear) {
        /* Polar decomposition by the averaged inverse-transpose iteration: converges to the
         * nearest rotation of a non-singular matrix. */
        for (int it = 0; it < 64; it++) {
            double o[3][3];
            if (!kiln__inv_t3(a, o)) break;
            double delta = 0.0;
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) {
                    double v = 0.5 * (a[r][c] + o[r][c]);
                    delta = fmax(delta, fabs(v - a[r][c]));
                    a[r][c] = v;
                }
            if (delta < 1e-15) break;
        }
        repairs |= 2u;
    }
    kiln__mat3_to_quat(a, q);
    return repairs;
}

void kiln__shape_quat_from_ypr(double yaw, double pitch, double roll, double *q)
{
    double qy[4] = {0.0, sin(yaw * 0.5), 0.0, cos(yaw * 0.5)};
    double qx[4] = {sin(pitch * 0.5), 0.0, 0.0, cos(pitch * 0.5)};
    double qz[4] = {0.0, 0.0, sin(roll * 0.5), cos(roll * 0.5)};
    double t[4];
    kiln__qmul(qy, qx, t);
    kiln__qmul(t, qz, q);
}
