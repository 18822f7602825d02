/* runtime/rig_internal.h - the solver state shared by rig.c (entry point, model updates),
 * rig_ik.c and rig_constraint.c, and the double-precision vector/quaternion helpers they use.
 * Private; nothing here is part of the ABI.
 *
 * Conventions: vectors are double[3], quaternions double[4] as (x, y, z, w), Hamilton product,
 * active rotations of column vectors (v' = q ⊗ v ⊗ q*), a ⊗ b applies b first; matrices are the
 * pose's float[16], column-major (m[col * 4 + row]).
 */
#ifndef KILN_RIG_INTERNAL_H
#define KILN_RIG_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "kiln/rig.h"

/* Below this a length or a sine counts as zero: directions are not taken from shorter
 * vectors, and the solver falls back to a defined choice instead. */
#define KILN__RIG_EPS 1e-9
/* FABRIK passes after the first KILN_RIG_IK_ITERATIONS when the exact-distance polish finds no
 * bracket (rig_ik.c): goals near a chain's folded reach, where FABRIK converges linearly. */
#define KILN__RIG_IK_EXTRA_ITERATIONS 240

/* One bone of a FABRIK shape (rig_ik.c): its direction and the bend onto it. */
typedef struct kiln__ik_bend {
    double d[3], axis[3], angle, conj[4], pad;
} kiln__ik_bend;

typedef struct kiln__rig {
    const kiln_blob_bone *bones;   /* the skeleton's, parent-first */
    uint32_t              bone_count;
    uint32_t              max_chain; /* joints the chain buffers hold (the skeleton's depth) */
    kiln_soa_xform       *local;
    float                *model;
    const float          *root;    /* never NULL (the identity) */
    /* scratch */
    uint32_t             *stamp;   /* bone_count: == epoch when the bone's matrix is stale */
    uint32_t             *last;    /* bone_count: the highest index in the bone's subtree */
    uint32_t              epoch;
    int                   moved;   /* a translation was written since the last update */
    uint32_t             *chain;   /* max_chain: bone indices, start first */
    double              (*pos)[3]; /* max_chain: model-space joint positions */
    double              (*work)[3];/* max_chain: FABRIK positions */
    kiln__ik_bend        *bend;    /* max_chain: the FABRIK shape's bends (polish) */
    double              (*rot)[4]; /* max_chain: model-space joint rotations */
    double               *len;     /* max_chain - 1: bone lengths */
    kiln_rig_report      *report;  /* never NULL (a local when the caller passed none) */
} kiln__rig;

/* ---- pose access (rig.c) ------------------------------------------------------------------ */
/* Local translation, rotation and scale of bone b. */
void kiln__rig_get_local(const kiln__rig *r, uint32_t b, double t[3], double q[4], double s[3]);
/* Writes any of t, q (normalised here), s that is not NULL, and marks the bone stale. */
void kiln__rig_set_local(kiln__rig *r, uint32_t b, const double *t, const double *q, const double *s);
/* Model-space position of bone b. */
void kiln__rig_position(const kiln__rig *r, uint32_t b, double p[3]);
/* Model-space rotation of bone b: its model matrix with orthonormalised columns. */
void kiln__rig_rotation(const kiln__rig *r, uint32_t b, double q[4]);
/* The rotation of the frame bone b's local rotation lives in: its parent's model rotation, or
 * the root matrix's for a root bone. */
void kiln__rig_frame(const kiln__rig *r, uint32_t b, double q[4]);
/* The matrix bone b's local transform is composed with: the parent's model matrix or the root. */
const float *kiln__rig_parent_matrix(const kiln__rig *r, uint32_t b);
/* Recomputes the model matrices of the bones marked stale since the last call and of all
 * their descendants, scanning bone `first`'s subtree range (every stale bone must lie in
 * `first`'s subtree). */
void kiln__rig_update(kiln__rig *r, uint32_t first);

/* ---- the two stages ------------------------------------------------------------------------ */
/* Solves one handle with weight w in (0, 1] and updates the model matrices. */
void kiln__ik_solve(kiln__rig *r, const kiln_blob_ik_handle *h, double w);
/* Applies one constraint with total weight w in (0, 1] and updates the model matrices. */
void kiln__constraint_apply(kiln__rig *r, const kiln_blob_constraint *c, double w);

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
/* r = a / |a| (r may be a); returns |a|. When |a| <= KILN__RIG_EPS, r is zero: callers test
 * the length and pick a fallback direction. */
static inline double kiln__unit3(const double a[3], double r[3])
{
    double n = kiln__len3(a);
    if (n > KILN__RIG_EPS) {
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
    if (!(n > KILN__RIG_EPS) || !isfinite(n)) {
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
/* The shortest rotation taking direction a to direction b (any lengths); the identity when
 * either is (near) zero. Opposite directions turn by pi about `fallback` when it is not NULL
 * and perpendicular enough, else about any perpendicular axis. */
void kiln__qfrom_to(const double a[3], const double b[3], const double *fallback, double q[4]);
/* Spherical interpolation along the shorter arc, t in [0, 1]; the result is unit length. */
void kiln__qslerp(const double a[4], const double b[4], double t, double r[4]);
/* XYZ Euler angles (R = Rz(e[2]) · Ry(e[1]) · Rx(e[0])) of a unit quaternion, and back. */
void kiln__qto_euler_xyz(const double q[4], double e[3]);
void kiln__qfrom_euler_xyz(const double e[3], double q[4]);
/* The rotation of a 3x3 (columns c0 c1 c2, column-major inside a float[16]) after Gram-Schmidt
 * orthonormalisation of its columns (x, then y; z = x × y), as a unit quaternion. Degenerate
 * columns fall back to the identity axes. */
void kiln__qfrom_matrix(const float m[16], double q[4]);

#endif /* KILN_RIG_INTERNAL_H */
