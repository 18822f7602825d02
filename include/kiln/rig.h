/* kiln/rig.h - IK handles and constraints (blob 1.2): views and the solver, in caller memory.
 *
 *   // once per skeleton:
 *   size_t ssize = kiln_rig_scratch_size(blob, skeleton);      // a few bytes per bone
 *   // once per scratch buffer (optional: saves deriving the plan on every solve):
 *   kiln_rig_prepare(blob, skeleton, scratch, ssize);
 *   // every frame, after sampling and blending:
 *   kiln_pose_local_to_object(blob, skeleton, pose, root, object, bone_count);
 *   kiln_rig_desc r = {0};
 *   r.blob = blob;  r.skeleton = skeleton;  r.root = root;
 *   r.local = pose;  r.soa_count = soa_count;  r.object = object;  r.bone_count = bone_count;
 *   r.scratch = scratch;  r.scratch_size = ssize;  r.prepared = 1;
 *   kiln_rig_solve(&r);          // IK handles, then constraints; pose and object matrices updated
 *   kiln_pose_skin_matrices(blob, skeleton, object, skin, bone_count);
 *
 * Thread safety: the blob's IK handles and constraints are only read; a solve writes only the
 * pose, model matrices and scratch it is given. Threads may solve at once from one blob, each
 * with its own pose, matrices and scratch (one scratch buffer per thread or per character).
 *
 * Semantics (the Cast reference, section E, as its "Rec." column recommends; D.10 for the
 * order): Maya-like, in object space, after FK. The skeleton's IK handles are solved first, in
 * file order, then its constraints are applied, in file order; each one sees the pose the
 * previous ones left. Every step writes its result back into the local pose (so that the pose
 * stays the single source of truth, e.g. for skinning or for blending with another pose) and
 * recomputes the object matrices of the bones it moved and of all their descendants.
 *
 * IK handle (kiln_blob_ik_handle), chain start..end (chain_length joints):
 *   goal       G = W(target) · target_offset (a point in the target bone's space).
 *   3 joints   analytic two-bone solve: the middle joint bends about its current hinge axis
 *              (the normal of the start, middle, end triangle; for a straight chain the middle
 *              bone's object X axis) to the angle the law of cosines gives, the start joint then
 *              aims the end at G, and finally the whole chain turns
 *              about the start->G axis so that the middle joint lies in the half-plane of the
 *              pole direction P(pole_vector_bone) - P(start) (when the handle has one; without
 *              it the plane FK gives is kept), plus the twist: the X angle of the pole bone's
 *              local rotation in XYZ Euler order (R = Rz · Ry · Rx), right-handed about the
 *              start->G axis. Solved in single precision with no transcendental function
 *              (each turn is built from its angle's cosine and sine); goals within 1e-4 of
 *              the reach go through the same inset point as goals beyond it (below), since
 *              the chain there is straight to float precision and the pole alone sets the
 *              plane. Reachable goals: end within 1e-5 m, bone lengths within 1e-5 relative.
 *   4+ joints  FABRIK from the current positions, at most KILN_RIG_IK_ITERATIONS iterations,
 *              stopping once the end is within KILN_RIG_IK_TOLERANCE × (chain length) of G.
 *              FABRIK closes in slowly near full extension, so when it has not converged its
 *              shape is kept and its bend angles are scaled by the one factor that gives the
 *              exact start-to-G distance (regula falsi), and the shape is aimed at G. Where no
 *              factor gives it (G near the chain's folded reach, where FABRIK also closes in
 *              slowly), up to 240 more FABRIK iterations run before scaling again. Then the
 *              same pole alignment (on the joint farthest from the start->G axis) and twist.
 *   2 joints   the start bone aims at G (plus the twist).
 *   Bend plane without a pole vector: the one FK gives (the plane of start, middle and end
 *   joints; for a straight chain, the plane normal to the middle bone's object X axis).
 *   Targets out of reach give the chain straight toward G, keeping its bend plane: the chain
 *   is solved toward the point of the start->G line 1e-4 of its reach short of the limit,
 *   turned to the pole (and twist) there, then straightened within that plane, so the pose is
 *   continuous across the limit and the pole still sets the roll beyond it. Targets closer
 *   than the chain can fold give the folded chain. Bone lengths are never changed (joints only rotate), the start
 *   joint never moves, and degenerate input (zero-length bones, G on the start, a pole on the
 *   start->G line, a straight chain) falls back to a defined choice, never NaN. With
 *   KILN_IK_USE_TARGET_ROTATION the end bone's object-space rotation becomes the target's.
 *   A handle whose target is KILN_BLOB_NONE is inactive and skipped. A weight below 1 slerps
 *   each chain bone's local rotation from FK toward the solution.
 * Constraint (kiln_blob_constraint), owner bone o with parent p, target bone tb, weight w:
 *   POINT   t_des = inverse(W(p)) · P(tb) + offset.xyz           (o's parent space)
 *   ORIENT  q_des = conj(R(p)) ⊗ R(tb) ⊗ offset                   (o's local rotation)
 *   SCALE   s_des = s_local(tb) ∘ offset.xyz                      (o's local scale)
 *   then t = lerp(t_fk, t_des, w), q = slerp(q_fk, q_des, w) (shortest arc), s = lerp(s, s_des,
 *   w). Skipped axes keep the FK value: the local translation or scale component, or for ORIENT
 *   the XYZ Euler angle of the local rotation (both rotations decomposed, FK angles kept on the
 *   skipped axes, recomposed). W(p) is the root matrix for a root owner. The baker resolved the
 *   offset (custom, "maintain offset" from the rest pose, or the default).
 * Rotations in object space are those of the object matrices with their columns orthonormalised
 * (scale removed); a bone's new local rotation is conj(R(parent frame)) ⊗ R(bone), which is
 * exact with segment scale compensation or uniform parent scale, and the rotation part
 * otherwise (a non-uniformly scaled parent without SSC shears its children: no rotation can
 * reproduce that, and IK cannot keep such a chain's lengths either). Local translations and scales keep the pose's meaning (SSC included),
 * because the object matrices are recomputed from the locals exactly as
 * kiln_pose_local_to_object does (the scalar reference kernel; a point constraint's owner with
 * no children gets its translation column only, its other columns being the caller's, which a
 * translation does not change).
 *
 * Cost: O(chain length) per handle (two-bone: constant; FABRIK: at most
 * KILN_RIG_IK_ITERATIONS passes, and a few more evaluations of the chain when it polishes; 240
 * more passes at most for goals near the folded reach) plus
 * the object matrix update, which scans from the chain start (or the constraint's owner) to the last
 * bone of its subtree in index order; one O(bones) pass finds those subtree ends, once in
 * kiln_rig_prepare or else on every call.
 * Serial by nature (each step reads the previous one's result), except that consecutive
 * two-bone handles of weight 1 that are independent (none reads a bone another one moves:
 * its chain, the chain start's parent, its target, pole vector and pole bones; their subtrees
 * apart) are solved side by side, one per SIMD lane (SSE2: 4, AVX2: 8; the path
 * kiln_simd_force selects; the scalar path solves them one at a time), which gives the same
 * result bit for bit: the lanes do the scalar code's float operations in its order, and a lane
 * that needs one of the fallbacks above is solved by the scalar code. Likewise, with a prepared
 * plan, the desired rotations of orient constraints whose target and owner's parent no earlier
 * constraint moves are computed before the first constraint (on the AVX2 path, three or more
 * of them eight at a time in lanes), with the results of computing each in its step. An orient
 * constraint's rotation conj(R(p)) ⊗ R(tb) is taken as that of the one 3x3 product of the two
 * orthonormalised matrices (one conversion to a quaternion). Two-bone handles and
 * constraints compute in single precision (cglm's float routines, which use SSE2 on x86-64),
 * FABRIK chains and one- and four-or-more-joint chains in double. Nothing allocates (the
 * lanes of a batch, about 3.5 KB, live on the stack). The solver is thread-safe on distinct
 * poses and scratch buffers.
 */
#ifndef KILN_RIG_H
#define KILN_RIG_H

#include <stddef.h>
#include <stdint.h>
#include "blob.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- views --------------------------------------------------------------------------------- */
/* The 1.2 CONSTRAINTS and IK_HANDLES sections (NULL and *count 0 when absent). Records are
 * grouped by skeleton (ascending) and, within a skeleton, in file order (ascending `order`):
 * the loader verifies it. */
KILN_API const kiln_blob_constraint *kiln_blob_constraints(const kiln_blob *blob, uint32_t *count);
KILN_API const kiln_blob_ik_handle *kiln_blob_ik_handles(const kiln_blob *blob, uint32_t *count);

/* The IK handles (constraints) of one skeleton, in evaluation order: a pointer into the section
 * and their count (NULL and 0 when it has none, or for a bad index). The per-handle weights of
 * kiln_rig_desc follow this order. O(log records). */
KILN_API const kiln_blob_ik_handle *kiln_rig_ik_handles(const kiln_blob *blob, uint32_t skeleton, uint32_t *count);
KILN_API const kiln_blob_constraint *kiln_rig_constraints(const kiln_blob *blob, uint32_t skeleton, uint32_t *count);

/* ---- solving ------------------------------------------------------------------------------- */
#define KILN_RIG_IK_ITERATIONS 16      /* FABRIK iterations at most (chains of 4+ joints) */
#define KILN_RIG_IK_TOLERANCE  1e-6    /* |end - goal| allowed, times the chain's length */

/* Stages (kiln_rig_desc.stages); 0 means both. */
#define KILN_RIG_IK          0x1u
#define KILN_RIG_CONSTRAINTS 0x2u

/* What one kiln_rig_solve did (optional). */
typedef struct kiln_rig_report {
    uint32_t ik_solved;          /* handles solved (weight > 0, target set, chain valid) */
    uint32_t ik_unreachable;     /* of those, goals out of the chain's reach (farther than the
                                    straight chain, or closer than the folded one) */
    uint32_t ik_skipped;         /* handles not solved: inactive, weight 0, or an invalid chain
                                    (only possible in blobs loaded with KILN_BLOB_LOAD_TRUSTED) */
    uint32_t constraints_applied;
    uint32_t constraints_skipped;/* weight 0, or a singular parent matrix (a zero scale) */
    float    ik_max_error_m;     /* largest |end - goal| over the reachable solved handles, after
                                    the object matrix update (0 when none) */
} kiln_rig_report;

typedef struct kiln_rig_desc {
    const kiln_blob      *blob;          /* holds the skeleton and its IK handles and constraints */
    uint32_t              skeleton;
    kiln_soa_xform       *local;         /* the local pose, soa_count blocks: read and updated */
    uint32_t              soa_count;     /* >= the skeleton's soa_count */
    float                *object;        /* bone_count matrices (16 floats, column-major) that
                                            kiln_pose_local_to_object computed from `local`: read
                                            and updated */
    uint32_t              bone_count;    /* >= the skeleton's bone count */
    const float          *root;          /* the `root` given to kiln_pose_local_to_object (16
                                            floats), NULL for none (the identity) */
    uint32_t              stages;        /* KILN_RIG_IK | KILN_RIG_CONSTRAINTS; 0: both */
    const float          *ik_weights;    /* optional: one weight per IK handle of the skeleton
                                            (kiln_rig_ik_handles order), clamped to [0, 1];
                                            0 skips the handle, fractions slerp each chain
                                            bone's local rotation from FK toward the solution;
                                            NULL: all 1 */
    uint32_t              ik_weight_count;        /* entries of ik_weights; handles past it use 1 */
    const float          *constraint_weights;     /* optional: multiplies each constraint's own
                                                     weight (kiln_rig_constraints order), result
                                                     clamped to [0, 1]; 0 skips it; NULL: all 1 */
    uint32_t              constraint_weight_count;/* entries; constraints past it use 1 */
    void                 *scratch;       /* kiln_rig_scratch_size() bytes, 8-byte aligned (16 or
                                            64 recommended); contents need no initialisation
                                            (unless `prepared`) and are meaningless
                                            afterwards, except the plan */
    size_t                scratch_size;
    kiln_rig_report      *report;        /* optional */
    int                   prepared;      /* nonzero: `scratch` holds the plan kiln_rig_prepare
                                            wrote for this blob and skeleton, which the solve
                                            reads and keeps; 0: the solve derives it each call */
} kiln_rig_desc;

/* Bytes of scratch kiln_rig_solve needs for skeleton `skeleton` of `blob`: 8 per bone, 188 per
 * level of the skeleton's depth (the longest chain a handle can have), 16 per IK handle, 52 per
 * constraint and 576 for the plan's header, rounded up; 0 for a bad index. */
KILN_API size_t kiln_rig_scratch_size(const kiln_blob *blob, uint32_t skeleton);

/* Optional, once per scratch buffer (e.g. per character): writes into `scratch` (at least
 * kiln_rig_scratch_size() bytes, 8-byte aligned) the plan every solve of this skeleton
 * otherwise derives anew: where its records are, the end of every bone's subtree (an O(bones)
 * pass) and which consecutive two-bone handles one SIMD batch can solve. Solves with
 * desc->prepared set then read it (writing only their own bookkeeping beside it), which saves
 * that work per call and gives the same results. The plan points into `blob`: it is valid
 * while the blob stays loaded, for this blob and skeleton only; a byte copy of the scratch
 * (8-byte aligned, at least as large) holds it too. Errors: ERR_INVALID_ARGUMENT (NULL blob or
 * scratch, a bad skeleton index), ERR_BLOB_MISALIGNED, ERR_BUFFER_TOO_SMALL (scratch_size),
 * ERR_BLOB_BAD_RECORD (skeleton records out of range: trusted loads only). */
KILN_API kiln_result kiln_rig_prepare(const kiln_blob *blob, uint32_t skeleton, void *scratch, size_t scratch_size);

/* Solves the skeleton's IK handles, then applies its constraints (per `stages`), each in file
 * order, updating `local` and `object` in place (see the top of this header). A skeleton
 * without handles or constraints returns KILN_OK at once, leaving everything as it was.
 * Errors (nothing is written): ERR_INVALID_ARGUMENT (NULL desc, blob, local, object or
 * scratch; a bad skeleton index; unknown stage bits; a NULL weight array with a non-zero count),
 * ERR_BLOB_MISALIGNED (scratch not 8-byte aligned), ERR_BUFFER_TOO_SMALL (soa_count, bone_count or scratch_size below what
 * the skeleton needs), with desc->prepared also ERR_INVALID_ARGUMENT when the scratch holds
 * no plan of this blob and skeleton, ERR_BLOB_BAD_RECORD (skeleton records out of range: trusted loads
 * only). Records with out-of-range bones or inconsistent chains (possible only in blobs loaded
 * with KILN_BLOB_LOAD_TRUSTED) are skipped and counted in the report. */
KILN_API kiln_result kiln_rig_solve(const kiln_rig_desc *desc);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RIG_H */
