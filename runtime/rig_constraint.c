/* Constraints (Cast reference E.2, the recommended Maya-like semantics in model space): each
 * computes the owner's desired local channel from the target's current model transform and
 * the offset the baker resolved, keeps the FK value on skipped axes, blends with FK by weight
 * and writes the local back. See kiln/rig.h for the formulas.
 *
 * Single precision on cglm (rig_math_f32.h): rotations come from the model matrices' columns
 * (Gram-Schmidt). An ORIENT's local rotation conj(R(frame)) ⊗ R(target) is that of the one 3x3
 * Rp^T · Rt (the frame's orthonormal columns against the target's: one Shepperd step,
 * kiln__f4_qrel, no normalisation), times the offset, normalised once; at weight 1 its sign is
 * set to the FK rotation's side and nothing else is done to it. The Euler round trip of an
 * ORIENT with skipped axes carries each angle as its (cos, sin) pair and rebuilds the half
 * angles from them (square roots only), so the only transcendental functions left are those of
 * a slerp with a weight below 1. A POINT maps the target's position through the frame's
 * inverse 3x3 (its cofactors times one reciprocal of the determinant, kiln__frame_inverse).
 *
 * Owners under one parent (props under a character's root, typically) share what is derived
 * from its matrix: the rows of Rp^T, the inverse (kiln__rig_frame_cache), re-derived once the
 * parent's stamp shows a later step changed it. A prepared plan's orient constraints whose
 * target and owner's parent no earlier step moves take their desired rotations before the
 * first step (kiln__constraint_targets; on the AVX2 path eight at a time in lanes, the same
 * operations per lane). A leaf owner's matrix is updated in place: recomposed from its local
 * (kiln__rig_update's leaf case) after an orient or scale, only its translation column after a
 * point (the linear columns do not change), so every step reads what eager updates after each
 * step would give, bit for bit.
 */
#include "rig_math_f32.h"

#include <string.h>

#include "anim_internal.h"
#include "pose_bone_model.h"
#include "rig_internal.h"

#define KILN__CN(name) name
#define KILN__CN_FN static
#define KILN__CN_ENTRY
#include "rig_constraint_step.h"

void kiln__constraint_plan_of(const kiln_blob_constraint *c, const kiln_blob_bone *bones, uint32_t bone_count,
                              kiln__constraint_plan *p)
{
    p->kind = (uint16_t)c->type, p->early = 0, p->parent = -1;
    if (c->bone >= bone_count || c->target >= bone_count || c->bone == c->target || c->type > KILN_CONSTRAINT_SCALE)
        p->kind = KILN__CONSTRAINT_INVALID;
    else if (bones[c->bone].parent >= 0 && (uint32_t)bones[c->bone].parent < c->bone)
        p->parent = bones[c->bone].parent; /* anything else is a root, as kiln__rig_parent_matrix has it */
    p->own = c->weight > 0.0f ? (c->weight < 1.0f ? (double)c->weight : 1.0) : 0.0;
    memcpy(p->off, c->offset, sizeof p->off);
    if (p->kind == KILN_CONSTRAINT_ORIENT) kiln__qnorm_f(p->off);
}
