/* runtime/rig_internal.h - the solver state shared by rig.c (entry point, model updates),
 * rig_ik.c and rig_constraint.c, and the double-precision rotation helpers only the solver uses
 * (the ones the baker shares are in contract/math_f64.h). Private; nothing here is part of the
 * ABI.
 *
 * Conventions (math_f64.h's): vectors are double[3], quaternions double[4] as (x, y, z, w),
 * Hamilton product, active rotations of column vectors (v' = q ⊗ v ⊗ q*), a ⊗ b applies b
 * first; matrices are the pose's float[16], column-major (m[col * 4 + row]).
 */
#ifndef KILN_RIG_INTERNAL_H
#define KILN_RIG_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "kiln/rig.h"
#include "math_f64.h"

/* Below this a length or a sine counts as zero: directions are not taken from shorter
 * vectors, and the solver falls back to a defined choice instead (the helpers' threshold). */
#define KILN__RIG_EPS KILN__F64_EPS
/* FABRIK passes after the first KILN_RIG_IK_ITERATIONS when the exact-distance polish finds no
 * bracket (rig_ik.c): goals near a chain's folded reach, where FABRIK converges linearly. */
#define KILN__RIG_IK_EXTRA_ITERATIONS 240
/* A goal beyond a chain's reach is first solved at this fraction of the reach short of it, on
 * the same line, to fix the bend plane from the pole (rig_ik.c). 1e-4 of a 1 m two-bone leg
 * leaves the knee 7 mm off the line: a well-defined plane. */
#define KILN__RIG_IK_REACH_INSET 1e-4

/* Two-bone handles one SIMD batch holds: the widest path's lanes (kiln__ik3_batch). */
#define KILN__IK3_LANES 8
/* kiln__rig.batch entry of a handle whose batch is derived when first needed. */
#define KILN__RIG_UNPLANNED UINT32_MAX

/* One bone of a FABRIK shape (rig_ik.c): its direction and the bend onto it. */
typedef struct kiln__ik_bend {
    double d[3], axis[3], angle, conj[4], pad;
} kiln__ik_bend;

/* The inverse of an affine float[16] m for the points a constraint maps into m's space: the
 * inverse of its 3x3 (kiln__affine_solve's cofactors times 1 / det, row-major: row i gives
 * coordinate i) and its translation. */
typedef struct kiln__frame_inv {
    double m[9], t[3];
    int ok; /* 0: m is singular (kiln__affine_solve's test) */
} kiln__frame_inv;

/* What the constraints read from their owners' parent matrices (rig_constraint.c), kept while
 * the matrix stays as it was: the parent bone, the epoch it was read in, and what was derived. */
typedef struct kiln__rig_frame_cache {
    uint32_t bone;           /* UINT32_MAX: empty */
    uint32_t epoch;          /* valid while the bone's stamp is below it */
    int has_rows, has_inv;
    float rows[12];          /* kiln__f4_rows_of the matrix's kiln__f4_rot_cols */
    kiln__frame_inv inv;     /* the matrix's inverse (kiln__frame_inverse, rig_constraint_step.h) */
} kiln__rig_frame_cache;

typedef struct kiln__rig kiln__rig;
/* kiln__ik_two_bone_solve or a variant of it for the SIMD path in use. */
typedef void (*kiln__ik3_single_fn)(kiln__rig *r, const kiln_blob_ik_handle *h, const uint32_t chain[3], double w);

struct kiln__rig {
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
    /* two-bone batches (rig.c), per IK handle of the skeleton: the handles the batch starting at
     * it can hold when their weights are 1 (KILN__RIG_UNPLANNED: not derived yet), and its
     * chain, start first (valid once a batch holding it was derived) */
    uint32_t             *batch;
    uint32_t            (*batch_chain)[3];
    const kiln_blob_ik_handle *batch_handles[KILN__IK3_LANES];
    kiln__rig_frame_cache frame; /* the constraints' (bone UINT32_MAX at the start of a solve) */
    float               (*tq)[4];  /* per constraint: an `early` ORIENT's desired rotation */
    kiln__ik3_single_fn   two_bone; /* the single two-bone solve of the SIMD path in use */
};

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
static inline const float *kiln__rig_parent_matrix(const kiln__rig *r, uint32_t b)
{
    int32_t p = r->bones[b].parent;
    /* parent < b for verified blobs; anything else is a root, as in kiln_pose_local_to_object */
    return p >= 0 && (uint32_t)p < b ? r->model + (size_t)p * 16u : r->root;
}
/* Recomputes the model matrices of the bones marked stale since the last call and of all
 * their descendants, scanning bone `first`'s subtree range (every stale bone must lie in
 * `first`'s subtree). */
void kiln__rig_update(kiln__rig *r, uint32_t first);

/* ---- the two stages ------------------------------------------------------------------------ */
/* Solves one handle with weight w in (0, 1] and updates the model matrices. */
void kiln__ik_solve(kiln__rig *r, const kiln_blob_ik_handle *h, double w);
/* The same for a chain of three joints (start first; gathered by kiln__ik_solve or planned by
 * kiln__ik3_batchable): the analytic two-bone solve in single precision (rig_two_bone.c). */
void kiln__ik_two_bone_solve(kiln__rig *r, const kiln_blob_ik_handle *h, const uint32_t chain[3], double w);
/* The same solve compiled for AVX2 (rig_two_bone_avx2.c): the same results, bit for bit. */
void kiln__ik_two_bone_solve_avx2(kiln__rig *r, const kiln_blob_ik_handle *h, const uint32_t chain[3], double w);
/* ---- two-bone handles in SIMD lanes (rig_two_bone.c, rig_two_bone_{sse2,avx2}.c) ---------- */

/* The inputs and outputs of up to KILN__IK3_LANES two-bone solves, SoA (one handle per lane;
 * [component][lane]). Filled by kiln__ik_two_bone_batch, solved by a path's kernel. */
typedef struct kiln__ik3_batch {
    float g[3][KILN__IK3_LANES];        /* goal */
    float p[3][3][KILN__IK3_LANES];     /* joint positions [joint][xyz] */
    float tc0[3][KILN__IK3_LANES];      /* the target matrix's columns 0 and 1 */
    float tc1[3][KILN__IK3_LANES];
    float pv[3][KILN__IK3_LANES];       /* pole vector bone position */
    float tw[4][KILN__IK3_LANES];       /* the pole bone's local rotation as stored (twist) */
    float fk[2][4][KILN__IK3_LANES];    /* local rotations of the start and middle joints, as
                                            stored (normalised in the kernel) */
    float has_pv[KILN__IK3_LANES];      /* 1 or 0 */
    float has_tw[KILN__IK3_LANES];
    float use_target[KILN__IK3_LANES];
    /* for the chain's model matrices (kiln__bone_to_model's arithmetic) */
    float pm[16][KILN__IK3_LANES];      /* the matrix the start's local is composed with (its
                                            columns 0 and 1 give the frame rotation) */
    float t[3][3][KILN__IK3_LANES];     /* local translations of the three joints */
    float s[3][3][KILN__IK3_LANES];     /* local scales */
    float ps[3][3][KILN__IK3_LANES];    /* the parent's local scale with segment scale
                                            compensation, else 1 (divided by in the kernel) */
    float q2[4][KILN__IK3_LANES];       /* the end's local rotation as stored */
    float q[3][4][KILN__IK3_LANES];     /* out: unit local rotations of the three joints (the
                                            end's only with use_target) */
    float *dst[3][KILN__IK3_LANES];     /* where the kernel writes the three joints' model
                                            matrices (as kiln__rig_update computes them from
                                            those locals): lanes [0, lanes) without redo */
    float len[3][KILN__IK3_LANES];      /* out: the two bone lengths and the start-goal distance */
    float redo[KILN__IK3_LANES];        /* out: nonzero where a fallback of the scalar solve applies */
} kiln__ik3_batch;

/* A path's batch kernel: solves lanes [0, lanes) of b, a whole vector at a time (so up to the
 * next multiple of its width: every KILN__IK3_LANES lanes must be filled). NULL in the scalar
 * row: one handle at a time. */
typedef void (*kiln__ik3_batch_fn)(kiln__ik3_batch *b, uint32_t lanes);
void kiln__ik3_batch_sse2(kiln__ik3_batch *b, uint32_t lanes);
void kiln__ik3_batch_avx2(kiln__ik3_batch *b, uint32_t lanes);

/* Like kiln__rig_update, for a two-bone chain whose three model matrices the caller wrote
 * already (marked stale, so that their descendants are recomputed, but not recomputed). */
void kiln__rig_update_below(kiln__rig *r, const uint32_t chain[3]);
/* The same, with the commonest case inline: a chain of consecutive bones and nothing below. */
static inline void kiln__rig_update_chain(kiln__rig *r, const uint32_t chain[3])
{
    uint32_t first = chain[0];
    if (chain[1] == first + 1u && chain[2] == first + 2u && r->last[first] == first + 2u) {
        r->epoch++;
        r->moved = 0;
    } else {
        kiln__rig_update_below(r, chain);
    }
}

/* Whether handle h (weight 1) can join a batch: an active, valid three-joint chain (written to
 * chain[], start first). */
int kiln__ik3_batchable(const kiln__rig *r, const kiln_blob_ik_handle *h, uint32_t chain[3]);
/* Solves the n (2..KILN__IK3_LANES) handles hs, whose chains are given in chains, with the
 * batch kernel fn, as n successive kiln__ik_solve calls with weight 1 would: the caller made
 * sure that no handle reads a bone an earlier one of them moves (nor moves the same bones). */
void kiln__ik_two_bone_batch(kiln__rig *r, const kiln_blob_ik_handle *const *hs, const uint32_t (*chains)[3],
                             uint32_t n, kiln__ik3_batch_fn fn, kiln__ik3_batch *b);

/* What the plan (rig.c) keeps of one constraint record, derived once by kiln__constraint_plan
 * (rig_constraint.c) so that a solve neither checks nor converts it again. */
#define KILN__CONSTRAINT_INVALID 0xffffu
typedef struct kiln__constraint_plan {
    float off[4];   /* ORIENT: the offset quaternion normalised (kiln__qnorm_f); else as recorded */
    double own;     /* the record's weight clamped to [0, 1] (NaN: 0) */
    uint16_t kind;  /* the record's KILN_CONSTRAINT_* type, or KILN__CONSTRAINT_INVALID: a bone out
                       of range, the target the owner, or an unknown type (never applied) */
    uint16_t early; /* 1: an ORIENT whose target's and owner's parent's model matrices no earlier
                       constraint can change (kiln_rig_prepare's plans only): its desired
                       rotation is taken before the first step (kiln__constraint_targets) */
    int32_t parent; /* the owner's parent, or -1 when the owner is a root (the root matrix is its
                       frame, as kiln__rig_parent_matrix has it) */
} kiln__constraint_plan;
void kiln__constraint_plan_of(const kiln_blob_constraint *c, const kiln_blob_bone *bones, uint32_t bone_count,
                              kiln__constraint_plan *p);
/* A planned constraint's frame: its owner's parent's model matrix, or the root matrix for a
 * root owner (kiln__rig_parent_matrix with the parent the plan checked). */
static inline const float *kiln__constraint_frame(const kiln__rig *r, const kiln__constraint_plan *p)
{
    return p->parent >= 0 ? r->model + (size_t)p->parent * 16u : r->root;
}

/* Applies constraint c (planned as p, not KILN__CONSTRAINT_INVALID) with total weight w in
 * (0, 1] and updates the model matrices (rig_constraint.c); tr: the desired rotation (before
 * skipped axes and weight) as kiln__constraint_targets took it for an `early` ORIENT, else
 * NULL. One function per kind (KILN_CONSTRAINT_POINT, ORIENT, SCALE: the index into
 * kiln__rig_kernels.constraint_step); point and scale ignore tr. */
typedef void (*kiln__constraint_step_fn)(kiln__rig *r, const kiln_blob_constraint *c, const kiln__constraint_plan *p,
                                         const float *tr, double w);
void kiln__constraint_point(kiln__rig *r, const kiln_blob_constraint *c, const kiln__constraint_plan *p,
                            const float *tr, double w);
void kiln__constraint_orient(kiln__rig *r, const kiln_blob_constraint *c, const kiln__constraint_plan *p,
                             const float *tr, double w);
void kiln__constraint_scale(kiln__rig *r, const kiln_blob_constraint *c, const kiln__constraint_plan *p,
                            const float *tr, double w);
/* The desired rotations conj(R(parent frame)) ⊗ R(target) ⊗ offset of the n constraints
 * c[idx[0..n)] planned `early` in p (their indices in order, as the plan lists them), into
 * r->tq, before the first step: they do not depend on one another, so their chains of square
 * roots and divisions overlap. */
void kiln__constraint_targets(kiln__rig *r, const kiln_blob_constraint *c, const kiln__constraint_plan *p,
                              const uint32_t *idx, uint32_t n);
/* The same compiled for AVX2 (rig_constraint_avx2.c): the same results, bit for bit. */
void kiln__constraint_point_avx2(kiln__rig *r, const kiln_blob_constraint *c, const kiln__constraint_plan *p,
                                 const float *tr, double w);
void kiln__constraint_orient_avx2(kiln__rig *r, const kiln_blob_constraint *c, const kiln__constraint_plan *p,
                                  const float *tr, double w);
void kiln__constraint_scale_avx2(kiln__rig *r, const kiln_blob_constraint *c, const kiln__constraint_plan *p,
                                 const float *tr, double w);
void kiln__constraint_targets_avx2(kiln__rig *r, const kiln_blob_constraint *c, const kiln__constraint_plan *p,
                                   const uint32_t *idx, uint32_t n);

/* A path's rig kernels (its column of the kernel table, simd_table.h). */
typedef struct kiln__rig_kernels {
    kiln__ik3_batch_fn two_bone_batch; /* independent two-bone handles in lanes; NULL: one at a time */
    kiln__ik3_single_fn two_bone;      /* one two-bone handle (kiln__ik_two_bone_solve) */
    kiln__constraint_step_fn constraint_step[3]; /* by kind: point, orient, scale */
    void (*constraint_targets)(kiln__rig *r, const kiln_blob_constraint *c, const kiln__constraint_plan *p,
                               const uint32_t *idx, uint32_t n);
} kiln__rig_kernels;

/* ---- vectors and quaternions: contract/math_f64.h ------------------------------------------ */
/* The shortest rotation taking direction a to direction b (any lengths); the identity when
 * either is (near) zero. Opposite directions turn by pi about `fallback` when it is not NULL
 * and perpendicular enough, else about any perpendicular axis. */
void kiln__qfrom_to(const double a[3], const double b[3], const double *fallback, double q[4]);
/* Spherical interpolation along the shorter arc, t in [0, 1]; the result is unit length
 * (kiln__qslerp_eps with the solver's 1e-9). */
void kiln__qslerp(const double a[4], const double b[4], double t, double r[4]);
/* XYZ Euler angles (R = Rz(e[2]) · Ry(e[1]) · Rx(e[0])) of a unit quaternion, and back. */
void kiln__qto_euler_xyz(const double q[4], double e[3]);
void kiln__qfrom_euler_xyz(const double e[3], double q[4]);
/* The rotation of a 3x3 (columns c0 c1 c2, column-major inside a float[16]) as
 * kiln__qfrom_columns takes it: Gram-Schmidt on the columns, Shepperd, a unit quaternion. */
void kiln__qfrom_matrix(const float m[16], double q[4]);

#endif /* KILN_RIG_INTERNAL_H */
