/* IK handles (Cast reference E.1): the chain's joints are gathered into model-space positions
 * and rotations (double), turned by the solver, and written back as local rotations. Chains
 * of three joints go to the single-precision analytic solve of rig_two_bone.c instead; this
 * file solves the others (two joints: aim; four or more: FABRIK).
 *
 * Everything the solver does is a rotation of one joint about its own position, applied to
 * that joint and every joint after it in the chain (kiln__ik_turn; kiln__ik_apply does all of a
 * FABRIK solution's in one pass). Positions therefore move
 * rigidly: bone lengths and the start position are kept by construction, up to rounding, and
 * the new local rotation of joint i is conj(R(joint i-1)) ⊗ R(joint i) (the start's parent
 * frame for i = 0), which reproduces the turned positions through the normal FK composition.
 */
#include <math.h>
#include <string.h>

#include "rig_internal.h"

/* Turns joint `from` (and all joints after it) by q about the joint's own position. */
static void kiln__ik_turn(kiln__rig *r, uint32_t n, uint32_t from, const double q[4])
{
    const double *pivot = r->pos[from];
    for (uint32_t j = from; j < n; j++) {
        if (j > from) {
            double d[3], m[3];
            kiln__sub3(r->pos[j], pivot, d);
            kiln__qrot(q, d, m);
            r->pos[j][0] = pivot[0] + m[0], r->pos[j][1] = pivot[1] + m[1], r->pos[j][2] = pivot[2] + m[2];
        }
        kiln__qmul(q, r->rot[j], r->rot[j]); /* unit times unit: renormalised once, when written back */
    }
}

static void kiln__ik_turn_axis(kiln__rig *r, uint32_t n, uint32_t from, const double axis[3], double angle)
{
    if (angle == 0.0 || !isfinite(angle)) return;
    double q[4];
    kiln__qaxis(axis, angle, q);
    kiln__ik_turn(r, n, from, q);
}

/* Gathers the chain of h into r->chain (start first). 0 when the record does not describe a
 * chain of this skeleton (checked by the loader; trusted loads may not have been). */
static uint32_t kiln__ik_chain(kiln__rig *r, const kiln_blob_ik_handle *h)
{
    uint32_t n = h->chain_length, nb = r->bone_count;
    if (n < 2 || n > r->max_chain || h->start_bone >= nb || h->end_bone >= nb || h->target_bone >= nb ||
        (h->pole_vector_bone != KILN_BLOB_NONE && h->pole_vector_bone >= nb) ||
        (h->pole_bone != KILN_BLOB_NONE && h->pole_bone >= nb))
        return 0;
    uint32_t b = h->end_bone;
    for (uint32_t i = n; i-- > 0;) {
        r->chain[i] = b;
        if (i == 0) break;
        int32_t p = r->bones[b].parent;
        if (p < 0 || (uint32_t)p >= b) return 0;
        b = (uint32_t)p;
    }
    return r->chain[0] == h->start_bone ? n : 0;
}

/* The unit direction from b to a; for coincident points the direction the bone had before
 * the solve (fa - fb), and for a zero-length bone +y (its length makes the choice moot). */
static void kiln__fabrik_dir(const double a[3], const double b[3], const double fa[3], const double fb[3], double d[3])
{
    kiln__sub3(a, b, d);
    if (kiln__unit3(d, d) > KILN__RIG_EPS) return;
    kiln__sub3(fa, fb, d);
    if (kiln__unit3(d, d) > KILN__RIG_EPS) return;
    d[0] = 0, d[1] = 1, d[2] = 0;
}

/* The bends of the FABRIK shape in r->work, once per polish: each bone's direction and the
 * shortest rotation onto it from the previous (non-degenerate) bone's direction, as an axis,
 * an angle and the conjugate rotation. Zero-length bones get angle -1 (skipped). */
static void kiln__ik_bends(kiln__rig *r, uint32_t n)
{
    const double *prev = NULL;
    for (uint32_t i = 0; i + 1 < n; i++) {
        kiln__ik_bend *b = &r->bend[i];
        kiln__sub3(r->work[i + 1], r->work[i], b->d);
        b->conj[0] = b->conj[1] = b->conj[2] = 0.0, b->conj[3] = 1.0, b->angle = 0.0;
        if (kiln__unit3(b->d, b->d) <= KILN__RIG_EPS) {
            b->angle = -1.0;
            continue;
        }
        if (prev) {
            double q[4];
            kiln__qfrom_to(prev, b->d, NULL, q);
            double sn = kiln__unit3(q, b->axis);
            if (sn > 1e-15) {
                b->angle = 2.0 * atan2(sn, q[3]);
                kiln__qconj(q, b->conj);
            }
        }
        prev = b->d;
    }
}

/* Positions (into `out`, may be NULL; out[0] is the start) of the chain whose bend angles are
 * the shape's scaled by s (0: straight, 1: the shape itself); returns the start-to-end
 * distance. Each bend is carried along by the rotations applied before it (t), so the family is
 * smooth in s and keeps every length. */
static double kiln__ik_bent(const kiln__rig *r, uint32_t n, double s, double (*out)[3])
{
    double t[4] = {0, 0, 0, 1}, end[3] = {0, 0, 0};
    for (uint32_t i = 0; i + 1 < n; i++) {
        const kiln__ik_bend *b = &r->bend[i];
        double dd[3] = {0, 0, 0};
        if (b->angle > 0.0) {
            double sb[4], tmp[4];
            kiln__qaxis(b->axis, s * b->angle, sb);
            kiln__qmul(t, sb, tmp);
            kiln__qmul(tmp, b->conj, t);
        }
        if (b->angle >= 0.0) kiln__qrot(t, b->d, dd);
        for (int k = 0; k < 3; k++) end[k] += r->len[i] * dd[k];
        if (out)
            for (int k = 0; k < 3; k++) out[i + 1][k] = out[i][k] + r->len[i] * dd[k];
    }
    return kiln__len3(end);
}

/* FABRIK closes in slowly when the goal is near full extension (5 mm short after 32 iterations
 * at 99.5% of the reach, for 6 joints). Its shape is right, only its spread is not, so the
 * distance is solved exactly in one dimension instead: the bends scaled by the s that makes the
 * start-to-end distance dg, then the shape aimed at g. For small bends the distance is close to
 * total - c·s², so the root is sought in u = s² (regula falsi, Illinois), where it is nearly
 * linear: two or three evaluations. Without a bracket (a shape that cannot fold enough) it
 * returns 0 and leaves FABRIK's result. */
static int kiln__ik_polish(kiln__rig *r, uint32_t n, const double g[3], double dg, double tol)
{
    kiln__ik_bends(r, n);
    double lo = 0.0, flo = kiln__ik_bent(r, n, 0.0, NULL) - dg; /* straight: >= 0 */
    double hi = 1.0, fhi = kiln__ik_bent(r, n, 1.0, NULL) - dg;
    while (fhi > 0.0 && hi < 9.0) { /* the shape itself is too open: bend further */
        lo = hi, flo = fhi, hi *= 2.0;
        fhi = kiln__ik_bent(r, n, sqrt(hi), NULL) - dg;
    }
    if (fhi > 0.0 || flo < 0.0) return 0;
    double u = hi;
    int side = 0;
    for (int it = 0; it < 40 && fhi < -0.25 * tol; it++) {
        u = (lo * fhi - hi * flo) / (fhi - flo);
        double fu = kiln__ik_bent(r, n, sqrt(u), NULL) - dg;
        if (fabs(fu) <= 0.25 * tol) break;
        if (fu < 0.0) {
            hi = u, fhi = fu;
            if (side == -1) flo *= 0.5;
            side = -1;
        } else {
            lo = u, flo = fu;
            if (side == 1) fhi *= 0.5;
            side = 1;
        }
    }
    double(*w)[3] = r->work; /* the bends hold the shape now: w becomes the result */
    kiln__ik_bent(r, n, sqrt(u), w);
    double from[3], to[3], q[4];
    kiln__sub3(w[n - 1], w[0], from);
    kiln__sub3(g, w[0], to);
    kiln__qfrom_to(from, to, NULL, q);
    for (uint32_t i = 1; i < n; i++) {
        double d[3], m[3];
        kiln__sub3(w[i], w[0], d);
        kiln__qrot(q, d, m);
        for (int k = 0; k < 3; k++) w[i][k] = w[0][k] + m[k];
    }
    return 1;
}

/* Turns the chain onto the positions in r->work in one pass: bone i turns by the shortest
 * rotation from its direction (after the turns of the bones above it) to its solved direction,
 * and every joint from i down takes that turn, so joint i's rotation is the product of the
 * turns of bones 0..i. The positions become r->work's (equal up to rounding, as the lengths
 * match). */
static void kiln__ik_apply(kiln__rig *r, uint32_t n)
{
    double acc[4] = {0, 0, 0, 1};
    for (uint32_t i = 0; i + 1 < n; i++) {
        double old[3], from[3], to[3], q[4];
        kiln__sub3(r->pos[i + 1], r->pos[i], old);
        kiln__qrot(acc, old, from);
        kiln__sub3(r->work[i + 1], r->work[i], to);
        kiln__qfrom_to(from, to, NULL, q);
        kiln__qmul(q, acc, acc);
        kiln__qnorm(acc);
        kiln__qmul(acc, r->rot[i], r->rot[i]);
        kiln__qnorm(r->rot[i]);
    }
    kiln__qmul(acc, r->rot[n - 1], r->rot[n - 1]);
    kiln__qnorm(r->rot[n - 1]);
    memcpy(r->pos + 1, r->work + 1, (size_t)(n - 1) * sizeof *r->pos);
}

/* Up to `iterations` FABRIK passes on r->work toward g, from where r->work stands; stops once
 * the end is within tol. Returns the end's distance from g. */
static double kiln__ik_fabrik_passes(kiln__rig *r, uint32_t n, const double g[3], int iterations, double tol)
{
    double (*w)[3] = r->work, e[3];
    kiln__sub3(w[n - 1], g, e);
    for (int it = 0; it < iterations && kiln__len3(e) > tol; it++) {
        memcpy(w[n - 1], g, sizeof w[n - 1]);
        for (uint32_t i = n - 1; i-- > 0;) {
            double d[3];
            kiln__fabrik_dir(w[i], w[i + 1], r->pos[i], r->pos[i + 1], d);
            for (int k = 0; k < 3; k++) w[i][k] = w[i + 1][k] + r->len[i] * d[k];
        }
        memcpy(w[0], r->pos[0], sizeof w[0]);
        for (uint32_t i = 0; i + 1 < n; i++) {
            double d[3];
            kiln__fabrik_dir(w[i + 1], w[i], r->pos[i + 1], r->pos[i], d);
            for (int k = 0; k < 3; k++) w[i + 1][k] = w[i][k] + r->len[i] * d[k];
        }
        kiln__sub3(w[n - 1], g, e);
    }
    return kiln__len3(e);
}

/* FABRIK from the current positions, polished to the exact distance, then each joint turned
 * onto its solved position. Where the polish finds no bracket (goals near the chain's folded
 * reach, where FABRIK closes in linearly: 2 cm short after 16 passes on a 12 m chain, halving
 * every 30 or so) more passes run before a second polish: KILN__RIG_IK_EXTRA_ITERATIONS, spent
 * only on those goals. */
static void kiln__ik_fabrik(kiln__rig *r, uint32_t n, const double g[3], double total)
{
    double (*w)[3] = r->work;
    memcpy(w, r->pos, (size_t)n * sizeof *w);
    double ag[3], u[3];
    kiln__sub3(g, r->pos[0], ag);
    double dg = kiln__len3(ag);
    if (dg >= total) {
        /* out of reach: straight toward g (or along the first bone when g is on the start) */
        if (kiln__unit3(ag, u) <= KILN__RIG_EPS) return;
        for (uint32_t i = 0; i + 1 < n; i++)
            for (int k = 0; k < 3; k++) w[i + 1][k] = w[i][k] + r->len[i] * u[k];
    } else {
        double tol = KILN_RIG_IK_TOLERANCE * total;
        if (kiln__ik_fabrik_passes(r, n, g, KILN_RIG_IK_ITERATIONS, tol) > tol && !kiln__ik_polish(r, n, g, dg, tol) &&
            kiln__ik_fabrik_passes(r, n, g, KILN__RIG_IK_EXTRA_ITERATIONS, tol) > tol)
            kiln__ik_polish(r, n, g, dg, tol);
    }
    kiln__ik_apply(r, n);
}


/* Turns the whole chain about the start->goal axis: the joint farthest from that axis into the
 * half-plane of the pole direction (when the handle has a pole vector bone), plus the twist. */
static void kiln__ik_pole(kiln__rig *r, uint32_t n, const kiln_blob_ik_handle *h, const double g[3], double twist)
{
    double u[3], a[3];
    kiln__sub3(g, r->pos[0], a);
    if (kiln__unit3(a, u) <= KILN__RIG_EPS) {
        kiln__sub3(r->pos[n - 1], r->pos[0], a);
        if (kiln__unit3(a, u) <= KILN__RIG_EPS) return;
    }
    double angle = twist;
    if (h->pole_vector_bone != KILN_BLOB_NONE && n >= 3) {
        double p[3], vp[3], vb[3] = {0, 0, 0}, best = 0;
        kiln__rig_position(r, h->pole_vector_bone, p);
        kiln__sub3(p, r->pos[0], p);
        double along = kiln__dot3(p, u);
        for (int k = 0; k < 3; k++) vp[k] = p[k] - along * u[k];
        for (uint32_t i = 1; i + 1 < n; i++) {
            double v[3];
            kiln__sub3(r->pos[i], r->pos[0], v);
            double t = kiln__dot3(v, u);
            for (int k = 0; k < 3; k++) v[k] -= t * u[k];
            double d = kiln__len3(v);
            if (d > best) best = d, memcpy(vb, v, sizeof vb);
        }
        double lp = kiln__len3(vp);
        /* a pole on the axis, or a straight chain, defines no plane: keep the one FK gave */
        if (lp > KILN__RIG_EPS && best > KILN__RIG_EPS) {
            double c[3];
            kiln__cross3(vb, vp, c);
            angle += atan2(kiln__dot3(c, u), kiln__dot3(vb, vp));
        }
    }
    kiln__ik_turn_axis(r, n, 0, u, angle);
}

void kiln__ik_solve(kiln__rig *r, const kiln_blob_ik_handle *h, double w)
{
    kiln_rig_report *rep = r->report;
    uint32_t n = h->target_bone == KILN_BLOB_NONE ? 0 : kiln__ik_chain(r, h);
    if (!n) {
        rep->ik_skipped++;
        return;
    }
    if (n == 3) {
        r->two_bone(r, h, r->chain, w);
        return;
    }
    /* goal = W(target) · to */
    const float *tm = r->model + (size_t)h->target_bone * 16u;
    double g[3];
    for (int k = 0; k < 3; k++)
        g[k] = (double)tm[k] * h->target_offset[0] + (double)tm[4 + k] * h->target_offset[1] +
               (double)tm[8 + k] * h->target_offset[2] + (double)tm[12 + k];
    double frame[4], total = 0;
    kiln__rig_frame(r, r->chain[0], frame);
    for (uint32_t i = 0; i < n; i++) {
        double q[4];
        kiln__rig_position(r, r->chain[i], r->pos[i]);
        kiln__rig_get_local(r, r->chain[i], NULL, q, NULL);
        kiln__qmul(i ? r->rot[i - 1] : frame, q, r->rot[i]);
        kiln__qnorm(r->rot[i]);
        if (i) {
            double d[3];
            kiln__sub3(r->pos[i], r->pos[i - 1], d);
            total += r->len[i - 1] = kiln__len3(d);
        }
    }
    /* the end can reach distances from the start between the longest bone minus all the others
     * (folded) and the sum of the lengths (straight) */
    double ag[3], longest = 0;
    for (uint32_t i = 0; i + 1 < n; i++) longest = r->len[i] > longest ? r->len[i] : longest;
    kiln__sub3(g, r->pos[0], ag);
    double dg = kiln__len3(ag), slack = 1e-9 * total;
    int reachable = dg <= total + slack && dg >= 2.0 * longest - total - slack;

    double twist = 0.0;
    if (h->pole_bone != KILN_BLOB_NONE) {
        double q[4], e[3];
        kiln__rig_get_local(r, h->pole_bone, NULL, q, NULL);
        kiln__qto_euler_xyz(q, e);
        twist = e[0];
    }
    if (n == 2) {
        double from[3], q[4];
        kiln__sub3(r->pos[1], r->pos[0], from);
        kiln__qfrom_to(from, ag, NULL, q);
        kiln__ik_turn(r, n, 0, q);
        kiln__ik_pole(r, n, h, g, twist);
    } else if (dg > total && total > KILN__RIG_EPS) {
        /* Out of reach the chain lies straight toward the goal, where the pole defines no bend
         * plane by itself. It is solved toward the point of the same line just inside the
         * reach, turned into the pole's plane there, then straightened within that plane (the
         * straightening turns each bone about the plane's normal): the pose is continuous
         * across the reach limit and follows the pole beyond it. */
        double inside[3], s = total * (1.0 - KILN__RIG_IK_REACH_INSET) / dg;
        for (int k = 0; k < 3; k++) inside[k] = r->pos[0][k] + ag[k] * s;
        kiln__ik_fabrik(r, n, inside, total);
        kiln__ik_pole(r, n, h, inside, twist);
        kiln__ik_fabrik(r, n, g, total);
    } else {
        kiln__ik_fabrik(r, n, g, total);
        kiln__ik_pole(r, n, h, g, twist);
    }
    int use_target = (h->flags & KILN_IK_USE_TARGET_ROTATION) != 0;
    if (use_target) kiln__rig_rotation(r, h->target_bone, r->rot[n - 1]);

    /* locals: the end bone's only changes with the target rotation (otherwise it turned with
     * its parent, so its local is what it was) */
    for (uint32_t i = 0; i < n; i++) {
        if (i == n - 1 && !use_target) break;
        double inv[4], q[4];
        kiln__qconj(i ? r->rot[i - 1] : frame, inv);
        kiln__qmul(inv, r->rot[i], q);
        if (w < 1.0) {
            double fk[4];
            kiln__rig_get_local(r, r->chain[i], NULL, fk, NULL);
            kiln__qslerp(fk, q, w, q);
        }
        kiln__rig_set_local(r, r->chain[i], NULL, q, NULL);
    }
    kiln__rig_update(r, r->chain[0]);

    rep->ik_solved++;
    if (!reachable) {
        rep->ik_unreachable++;
    } else if (w >= 1.0) {
        double e[3];
        kiln__rig_position(r, r->chain[n - 1], e);
        kiln__sub3(e, g, e);
        float err = (float)kiln__len3(e);
        if (err > rep->ik_max_error_m) rep->ik_max_error_m = err;
    }
}
