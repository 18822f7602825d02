/* Constraints (Cast reference E.2, the recommended Maya-like semantics in model space): each
 * computes the owner's desired local channel from the target's current model transform and
 * the offset the baker resolved, keeps the FK value on skipped axes, blends with FK by weight
 * and writes the local back. See kiln/rig.h for the formulas.
 */
#include <math.h>

#include "rig_internal.h"

/* Orient: q_des = conj(R(parent frame)) ⊗ R(target) ⊗ offset, skipped XYZ Euler angles from FK. */
static void kiln__orient(const kiln__rig *r, const kiln_blob_constraint *c, const double fk[4], double out[4])
{
    double frame[4], inv[4], tr[4], off[4] = {c->offset[0], c->offset[1], c->offset[2], c->offset[3]}, t[4];
    kiln__rig_frame(r, c->bone, frame);
    kiln__rig_rotation(r, c->target, tr);
    kiln__qnorm(off);
    kiln__qconj(frame, inv);
    kiln__qmul(inv, tr, t);
    kiln__qmul(t, off, out);
    kiln__qnorm(out);
    uint32_t skip = c->flags & (KILN_CONSTRAINT_SKIP_X | KILN_CONSTRAINT_SKIP_Y | KILN_CONSTRAINT_SKIP_Z);
    if (!skip) return; /* no round trip through angles when nothing is skipped */
    double ef[3], ed[3];
    kiln__qto_euler_xyz(fk, ef);
    kiln__qto_euler_xyz(out, ed);
    for (int k = 0; k < 3; k++)
        if (skip & (1u << k)) ed[k] = ef[k];
    kiln__qfrom_euler_xyz(ed, out);
}

void kiln__constraint_apply(kiln__rig *r, const kiln_blob_constraint *c, double w)
{
    kiln_rig_report *rep = r->report;
    if (c->bone >= r->bone_count || c->target >= r->bone_count || c->bone == c->target ||
        c->type > KILN_CONSTRAINT_SCALE) {
        rep->constraints_skipped++;
        return;
    }
    double t[3], q[4], s[3];
    kiln__rig_get_local(r, c->bone, t, q, s);
    if (c->type == KILN_CONSTRAINT_ORIENT) {
        double want[4];
        kiln__orient(r, c, q, want);
        kiln__qslerp(q, want, w, q);
        kiln__rig_set_local(r, c->bone, NULL, q, NULL);
    } else {
        double want[3];
        if (c->type == KILN_CONSTRAINT_POINT) {
            /* the target's position in the owner's parent space: the local translation that puts
             * the owner there, whatever the parent's scale and the owner's SSC (translation is
             * composed before either) */
            double p[3];
            kiln__rig_position(r, c->target, p);
            if (!kiln__affine_solve_f(kiln__rig_parent_matrix(r, c->bone), p, want)) {
                rep->constraints_skipped++;
                return;
            }
            for (int k = 0; k < 3; k++) want[k] += c->offset[k];
        } else {
            double ts[3];
            kiln__rig_get_local(r, c->target, NULL, NULL, ts);
            for (int k = 0; k < 3; k++) want[k] = ts[k] * c->offset[k];
        }
        double *fk = c->type == KILN_CONSTRAINT_POINT ? t : s;
        for (int k = 0; k < 3; k++)
            if (!(c->flags & (1u << k))) fk[k] += w * (want[k] - fk[k]);
        if (c->type == KILN_CONSTRAINT_POINT) kiln__rig_set_local(r, c->bone, t, NULL, NULL);
        else kiln__rig_set_local(r, c->bone, NULL, NULL, s);
    }
    kiln__rig_update(r, c->bone);
    rep->constraints_applied++;
}
