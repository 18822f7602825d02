/* Constraints (Cast reference E.2, the recommended Maya-like semantics in model space): each
 * computes the owner's desired local channel from the target's current model transform and
 * the offset the baker resolved, keeps the FK value on skipped axes, blends with FK by weight
 * and writes the local back. See kiln/rig.h for the formulas.
 *
 * Single precision on cglm (rig_math_f32.h): rotations come from the model matrices' columns
 * (Gram-Schmidt); an ORIENT's local rotation is that of the one 3x3 Rp^T · Rt (the parent
 * frame's columns against the target's: one Shepperd step, kiln__f4_qrel), times the offset,
 * normalised once; the Euler round trip of an ORIENT with skipped axes carries each
 * angle as its (cos, sin) pair and rebuilds the half angles from them (square roots only), so
 * the only transcendental functions left are those of a slerp with a weight below 1.
 *
 * Owners under one parent (props under a character's root, typically) share what is derived
 * from its matrix: its rotation columns (as rows of Rp^T), its affine inverse (kiln__rig_frame_cache), re-derived once
 * the parent's stamp shows a later step changed it. A leaf owner's matrix is recomposed in
 * place, its translation column only when a point constraint wrote it (kiln__rig_update's
 * leaf case), so every step reads what eager updates after each step would give, bit for bit.
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
