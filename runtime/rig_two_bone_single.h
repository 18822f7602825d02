/* runtime/rig_two_bone_single.h - the single two-bone IK solve (kiln__ik_two_bone_solve of
 * rig_internal.h) as a template, compiled once for the x86-64 baseline (rig_two_bone.c) and
 * once for AVX2 (rig_two_bone_avx2.c, kiln__ik_two_bone_solve_avx2): the same operations, which
 * the VEX encoding runs with fewer register copies. Private.
 *
 * Include after rig_math_f32.h and rig_internal.h with KILN__IK3S(name) (the entry point's
 * name in this variant) and KILN__IK3S_FN / KILN__IK3S_KERNEL (the declaration specifiers of
 * the static helpers and of the entry point) defined. Products and sums are never fused (GCC
 * does not contract in C11 mode; Clang's default contraction is off in the whole AVX2 file),
 * so every variant gives the same bits (tests/runtime/test_rig_simd.c compares them).
 *
 * The steps are those of the general solver of rig_ik.c (bend about the hinge, aim at the
 * goal, turn to the pole plus the twist; out of reach through the point just inside it), on
 * float positions and rotations and without transcendental functions: each rotation is built
 * from the cosine and sine of its angle (rig_math_f32.h), which the law of cosines and the dot
 * and cross products give directly. Each position and rotation is one four-lane vector
 * (kiln__f4); the batch kernels (rig_two_bone_simd.h) do the same operations in the same order
 * per lane, so a handle's result is the same bits on every path. What only a fallback reads
 * (a straight chain's hinge, opposite directions) goes through the routines of rig_math_f32.h.
 *
 * Square roots and divisions are spent only where a length is not known otherwise
 * (kiln__ik3_toward): the bend's hinge is the triangle's normal unnormalised, the opening's
 * |(cos, sin)| is l1 l2, and the bent end is dg from the start, so 1 / dg, taken once per goal
 * (kiln__ik3_goal), scales it for the aim. No model rotation is built: the solve carries the
 * start's turn t0 and the middle joint's bend x, in model space, and re-expresses them in the
 * frames only at the end, the start's local (F^T t0.xyz, t0.w) ⊗ local0 with F^T the parent
 * frame's orthonormalised columns transposed (conj(F) ⊗ t0 ⊗ F without a Shepperd step for
 * F), the middle joint's its bend in the start's axes, conj(local0) ⊗ (F^T x.xyz, x.w) ⊗
 * local0 ⊗ local1, and the end's, with the target rotation, conj(F q0 q1) ⊗ R(target) from
 * the one 3x3 F^T R(target). None is normalised on the way (the pole's and the twist's turns
 * are scaled by 1 / h instead, kiln__f4_qaxis_cs_u); the two or three locals are normalised
 * once, side by side in one vector, when written back.
 */

/* The steps inlined into the solve: its chain state then stays in registers. */
#if defined(__GNUC__) || defined(__clang__)
#define KILN__IK3S_INLINE inline __attribute__((always_inline))
#else
#define KILN__IK3S_INLINE inline
#endif

typedef struct kiln__ik3 {
    kiln__f4 p[3];   /* model-space joint positions */
    kiln__f4 t0;     /* the start's turn so far, in model space (unnormalised) */
    kiln__f4 x;      /* the middle joint's bend relative to the start, in the model space of the
                      * pose as given: its model rotation is t0 ⊗ x ⊗ (its rotation as given) */
    kiln__f4 fk[2];  /* the start's and middle joint's local rotations as stored (kiln__f4_qvalid) */
    const float *fc; /* the parent frame's orthonormalised columns (kiln__f4_rot_cols) */
    float l1, l2;    /* bone lengths */
} kiln__ik3;

/* The middle joint's hinge for a straight or folded chain: the middle bone's model X axis made
 * perpendicular to the upper bone, or any perpendicular (kiln/rig.h). */
KILN__IK3S_FN kiln__f4 kiln__ik3_hinge_fallback(const kiln__ik3 *c, kiln__f4 ba)
{
    static const vec3 x = {1.0f, 0.0f, 0.0f};
    float rot1[4], vba[4];
    vec3 hx, u, axis;
    kiln__f4 m1 = kiln__f4_qmul(kiln__f4_shepperd(c->fc), kiln__f4_qmul(c->fk[0], c->fk[1]));
    kiln__f4_st(rot1, kiln__f4_qnorm(kiln__f4_qmul(c->t0, kiln__f4_qmul(c->x, m1)))), kiln__f4_st(vba, ba);
    kiln__qrot_f(rot1, x, hx);
    if (kiln__unit3f(vba, u) == 0.0f) u[0] = 0.0f, u[1] = 1.0f, u[2] = 0.0f;
    glm_vec3_muladds(u, -glm_vec3_dot(hx, u), hx);
    if (!(kiln__unit3f(hx, axis) > 1e-6f)) kiln__any_perpendicular_f(u, axis);
    return kiln__f4_set(axis[0], axis[1], axis[2], 0.0f);
}

/* The goal of one solve as seen from the start: ag = g - start, dg = |ag|, and the unit
 * direction ug (kiln__unit3f of ag: ok = 0 and ug zero when dg is (near) zero). */
typedef struct kiln__ik3_goal {
    kiln__f4 ag, ug;
    float dg, inv_dg;
    int ok;
} kiln__ik3_goal;

KILN__IK3S_FN inline kiln__ik3_goal kiln__ik3_goal_of(kiln__f4 g, kiln__f4 p0)
{
    kiln__ik3_goal r;
    r.ag = kiln__f4_sub(g, p0);
    float n2 = kiln__f4_dot3(r.ag, r.ag);
    r.dg = kiln__sqrt1f(n2);
    r.ok = n2 > KILN__RIG_EPS2_F;
    r.inv_dg = 1.0f / (r.ok ? r.dg : 1.0f);
    r.ug = r.ok ? kiln__f4_scale(r.ag, r.inv_dg) : kiln__f4_set(0.0f, 0.0f, 0.0f, 0.0f);
    return r;
}

/* Analytic solve toward the goal: the middle joint opens from its angle to the law of
 * cosines' (both as cosine and sine: the current ones from the dot and cross products, the
 * wanted ones from the factored forms of 1 ± cos, which keep their accuracy near straight and
 * folded), then the start aims the end at the goal. The end's position is brought along only
 * when `move_end` (after the last solve the pole's turn reads it only for a goal on the start).
 *
 * Fewer square roots and divisions than the rotations spelled out (kiln__f4_qaxis_cs,
 * kiln__f4_qfrom_to) take, on the same formulas: the hinge is the triangle's normal cr
 * unnormalised, its length |cr| moved onto the cosine part of the half-angle quaternion; the
 * opening's |(cos, sin)|, which both factors' lengths make l1 l2, is taken as l1 l2; and once
 * bent to the law of cosines' angle the end is dg from the start, so 1 / dg scales it to the
 * aim's unit direction (a length off by δ moves the half-way quaternion by δ² only).
 * With `aim` the aim's rotation is returned there for the pole's turn to compose with, and
 * not applied to the start's turn (the positions take it); `first`: no turn yet (t0 and x
 * the identity). */
KILN__IK3S_FN KILN__IK3S_INLINE void kiln__ik3_toward(kiln__ik3 *c, const kiln__ik3_goal *t, int move_end,
                                                      kiln__f4 *aim, int first)
{
    kiln__f4 axis = kiln__f4_set(0.0f, 0.0f, 0.0f, 0.0f);
    float l1 = c->l1, l2 = c->l2, dg = t->dg, k = 1.0f, inv_len = 0.0f;
    if (l1 > 1e-9f && l2 > 1e-9f) {
        kiln__f4 ba = kiln__f4_sub(c->p[0], c->p[1]), bc = kiln__f4_sub(c->p[2], c->p[1]);
        kiln__f4 cr = kiln__f4_cross(ba, bc);
        float l1l2 = l1 * l2, inv = 1.0f / (2.0f * l1l2);
        float cr2 = kiln__f4_dot3(cr, cr), cur_c = kiln__f4_dot3(ba, bc), cur_s = kiln__sqrt1f(cr2);
        /* 1 + cos = ((l1 + l2)^2 - dg^2) / 2 l1 l2, 1 - cos = (dg^2 - (l1 - l2)^2) / 2 l1 l2 */
        float op = (l1 + l2 - dg) * (l1 + l2 + dg) * inv, om = (dg - l1 + l2) * (dg + l1 - l2) * inv;
        float want_c, want_s;
        if (!(op > 0.0f)) want_c = -1.0f, want_s = 0.0f;     /* out of reach: straight */
        else if (!(om > 0.0f)) want_c = 1.0f, want_s = 0.0f; /* too close: folded */
        else want_c = 0.5f * (op - om), want_s = kiln__sqrt1f(op * om), inv_len = t->inv_dg;
        /* the hinge: the normal of the (start, middle, end) triangle, of length k */
        if (cr2 > 1e-12f * l1l2 * l1l2 && cr2 > KILN__RIG_EPS2_F) axis = cr, k = cur_s;
        else axis = kiln__ik3_hinge_fallback(c, ba);
        /* the opening angle acos(want) - acos(cur), cur taken unnormalised (both factors
         * carry l1 l2); its half-angle as kiln__qaxis_cs_f takes it, with h = l1 l2 */
        float cc = want_c * cur_c + want_s * cur_s, ss = want_s * cur_c - want_c * cur_s, hs, hc;
        if (cc >= 0.0f) hs = ss, hc = l1l2 + cc;
        else hs = l1l2 - cc, hc = ss;
        kiln__f4 q = hs != 0.0f ? kiln__f4_qnorm(kiln__f4_with_w(kiln__f4_scale(axis, hs), hc * k))
                                : kiln__f4_set(0.0f, 0.0f, 0.0f, 1.0f);
        c->p[2] = kiln__f4_add(c->p[1], kiln__f4_qrot(q, bc));
        /* the bend, carried relative to the start: conj(t0) ⊗ q ⊗ t0 (q itself before any turn) */
        c->x = first ? q : kiln__f4_qmul(kiln__f4_qmul(kiln__f4_qconj(c->t0), q), kiln__f4_qmul(c->t0, c->x));
    }
    /* the aim: kiln__f4_qfrom_to from the end's direction to the goal's */
    kiln__f4 ac = kiln__f4_sub(c->p[2], c->p[0]), q = kiln__f4_set(0.0f, 0.0f, 0.0f, 1.0f);
    float n2 = kiln__f4_dot3(ac, ac);
    if (n2 > KILN__RIG_EPS2_F && t->ok) {
        if (inv_len == 0.0f) inv_len = 1.0f / kiln__sqrt1f(n2);
        kiln__f4 ua = kiln__f4_scale(ac, inv_len), ub = t->ug;
        kiln__f4 cr = kiln__f4_cross(ua, ub), sum = kiln__f4_add(ua, ub);
        cr = kiln__f4_muladds(cr, ua, -kiln__f4_dot3(cr, ua));
        float w = 0.5f * kiln__f4_dot3(sum, sum);
        if (w < 1e-12f && kiln__f4_dot3(cr, cr) < 1e-12f) {
            /* opposite directions: a half turn about the hinge (unit), or any perpendicular */
            float va[4], vb[4], fb[4];
            versor r;
            kiln__f4_st(va, ac), kiln__f4_st(vb, t->ag), kiln__f4_st(fb, kiln__f4_scale(axis, 1.0f / k));
            kiln__qfrom_to_f(va, vb, fb, r);
            q = kiln__f4_ld(r);
        } else {
            q = kiln__f4_qnorm(kiln__f4_with_w(cr, w));
        }
    }
    c->p[1] = kiln__f4_add(c->p[0], kiln__f4_qrot(q, kiln__f4_sub(c->p[1], c->p[0])));
    if (move_end) c->p[2] = kiln__f4_add(c->p[0], kiln__f4_qrot(q, ac));
    if (aim) {
        *aim = q;
        return;
    }
    c->t0 = kiln__f4_qmul(q, c->t0);
}

/* Turns the chain about the start->goal axis: the middle joint into the half-plane of the pole
 * direction (with a pole vector bone), plus the twist given as (cos, sin) (kiln__ik_pole).
 * The positions turn too when `move` (by the turn normalised); the start's first turn is that
 * turn after `aim` (the aim that kiln__ik3_toward left to it), as one product. */
KILN__IK3S_FN KILN__IK3S_INLINE void kiln__ik3_pole(kiln__ik3 *c, const kiln__rig *r, const kiln_blob_ik_handle *h,
                                                    const kiln__ik3_goal *t, const float twist_cs[2], int move,
                                                    kiln__f4 aim)
{
    kiln__f4 u = t->ug, q = kiln__f4_set(0.0f, 0.0f, 0.0f, 1.0f);
    int turn = 0, axis = t->ok || kiln__f4_unit3(kiln__f4_sub(c->p[2], c->p[0]), &u) != 0.0f;
    if (axis && h->pole_vector_bone != KILN_BLOB_NONE) {
        kiln__f4 vp = kiln__f4_sub(kiln__f4_ld(r->model + (size_t)h->pole_vector_bone * 16u + 12u), c->p[0]);
        kiln__f4 vb = kiln__f4_sub(c->p[1], c->p[0]);
        vp = kiln__f4_muladds(vp, u, -kiln__f4_dot3(vp, u));
        vb = kiln__f4_muladds(vb, u, -kiln__f4_dot3(vb, u));
        /* a pole on the axis, or a straight chain, defines no plane: keep the one FK gave */
        float scale = c->l1 + c->l2, eps2 = 1e-10f * scale * scale;
        if (kiln__f4_dot3(vp, vp) > eps2 && kiln__f4_dot3(vb, vb) > eps2) {
            kiln__f4 cr = kiln__f4_cross(vb, vp);
            q = kiln__f4_qaxis_cs_u(u, kiln__f4_dot3(vb, vp), kiln__f4_dot3(cr, u));
            turn = 1;
        }
    }
    if (axis && twist_cs) {
        q = kiln__f4_qmul(kiln__f4_qaxis_cs_u(u, twist_cs[0], twist_cs[1]), q);
        turn = 1;
    }
    if (turn) {
        if (move) {
            kiln__f4 qn = kiln__f4_qnorm(q);
            c->p[1] = kiln__f4_add(c->p[0], kiln__f4_qrot(qn, kiln__f4_sub(c->p[1], c->p[0])));
            c->p[2] = kiln__f4_add(c->p[0], kiln__f4_qrot(qn, kiln__f4_sub(c->p[2], c->p[0])));
        }
        aim = kiln__f4_qmul(q, aim);
    }
    c->t0 = aim; /* the first turn of the start */
}

/* The X angle of the XYZ Euler decomposition of q (kiln__qto_euler_xyz) as (cos, sin) up to
 * a positive factor: atan2(R21, R22), or atan2(-R12, R11) at cos(Y) = 0, from q as stored
 * (kiln__f4_qvalid: the entries of its matrix times |q|², so with no normalisation). */
KILN__IK3S_FN void kiln__euler_x_cs(kiln__f4 sq, float cs[2])
{
    sq = kiln__f4_qvalid(sq);
    float n2 = kiln__f4_norm2(sq), q[4];
    kiln__f4_st(q, sq);
    float x = q[0], y = q[1], z = q[2], w = q[3];
    float r00 = n2 - 2.0f * (y * y + z * z), r10 = 2.0f * (x * y + w * z);
    if (r00 * r00 + r10 * r10 > 1e-12f * n2 * n2) cs[0] = n2 - 2.0f * (x * x + y * y), cs[1] = 2.0f * (y * z + w * x);
    else cs[0] = n2 - 2.0f * (x * x + z * z), cs[1] = -2.0f * (y * z - w * x);
}

/* Whether a goal dg from the start is within the chain's reach: from |l1 - l2| (folded) to
 * l1 + l2 (straight), with 1e-9 of l1 + l2 to spare (rig_ik.c's bounds, in float: 2 max -
 * (l1 + l2) is exact, and the upper bound's slack is below half an ulp of l1 + l2). */
static inline int kiln__ik3_reachable(float l1, float l2, float dg)
{
    float total = l1 + l2, longest = l1 > l2 ? l1 : l2;
    return dg <= total && !(2.0f * longest - total - dg > 1e-9f * total);
}

/* Bone b's local rotation as stored (not normalised). */
KILN__IK3S_FN kiln__f4 kiln__local_rotation_f4(const kiln__rig *r, uint32_t b)
{
    const kiln_soa_xform *x = &r->local[b / KILN_SOA_WIDTH];
    unsigned l = b % KILN_SOA_WIDTH;
    return kiln__f4_set(x->qx[l], x->qy[l], x->qz[l], x->qw[l]);
}

/* Writes bone b's local rotation: the unit q, or slerp(fk, q, w) with bone b's unit local
 * rotation fk for w < 1. */
KILN__IK3S_FN inline void kiln__set_rotation_f(kiln__rig *r, uint32_t b, kiln__f4 uq, float w)
{
    if (w < 1.0f) {
        versor fk, q;
        kiln__f4_st(q, uq);
        kiln__f4_st(fk, kiln__f4_qnorm(kiln__local_rotation_f4(r, b)));
        kiln__qslerp_f(fk, q, w, q);
        uq = kiln__f4_ld(q);
    }
    float q[4];
    kiln__f4_st(q, uq);
    kiln_soa_xform *x = &r->local[b / KILN_SOA_WIDTH];
    unsigned l = b % KILN_SOA_WIDTH;
    x->qx[l] = q[0], x->qy[l] = q[1], x->qz[l] = q[2], x->qw[l] = q[3];
}

KILN__IK3S_KERNEL void KILN__IK3S(kiln__ik_two_bone_solve)(kiln__rig *r, const kiln_blob_ik_handle *h, const uint32_t chain[3], double weight)
{
    kiln_rig_report *rep = r->report;
    float w = (float)weight;
    /* goal = W(target) · to */
    const float *tm = r->model + (size_t)h->target_bone * 16u;
    kiln__f4 g = kiln__f4_muladds(kiln__f4_scale(kiln__f4_ld(tm), h->target_offset[0]), kiln__f4_ld(tm + 4),
                                  h->target_offset[1]);
    g = kiln__f4_add(kiln__f4_muladds(g, kiln__f4_ld(tm + 8), h->target_offset[2]), kiln__f4_ld(tm + 12));
    kiln__ik3 c;
    const float *p0 = kiln__rig_parent_matrix(r, chain[0]);
    float fc[12];
    kiln__f4 frows[3];
    kiln__f4_rot_cols(p0, fc);
    c.fc = fc;
    for (int i = 0; i < 3; i++) c.p[i] = kiln__f4_ld(r->model + (size_t)chain[i] * 16u + 12u);
    /* The turns are carried in model space and only re-expressed in the frames at the end, as
     * products of them and the locals as stored, normalised when written: none of their
     * lengths needs normalising before. */
    c.fk[0] = kiln__f4_qvalid(kiln__local_rotation_f4(r, chain[0]));
    c.fk[1] = kiln__f4_qvalid(kiln__local_rotation_f4(r, chain[1]));
    c.t0 = c.x = kiln__f4_set(0.0f, 0.0f, 0.0f, 1.0f);
    kiln__f4 d = kiln__f4_sub(c.p[1], c.p[0]);
    c.l1 = kiln__sqrt1f(kiln__f4_dot3(d, d));
    d = kiln__f4_sub(c.p[2], c.p[1]);
    c.l2 = kiln__sqrt1f(kiln__f4_dot3(d, d));
    kiln__ik3_goal goal = kiln__ik3_goal_of(g, c.p[0]);
    kiln__f4 ag = goal.ag;
    float dg = goal.dg, total = c.l1 + c.l2;

    float twist[2], *tw = NULL;
    if (h->pole_bone != KILN_BLOB_NONE) {
        kiln__euler_x_cs(kiln__local_rotation_f4(r, h->pole_bone), twist);
        tw = twist;
    }
    float limit = total * (float)(1.0 - KILN__RIG_IK_REACH_INSET);
    kiln__f4 aim;
    if (dg > limit && total > 1e-9f) {
        /* Out of reach (or so close to it that the chain is straight to float precision, where
         * the pole defines no plane): solved toward the point of the line 1e-4 of the reach
         * inside it, turned into the pole's plane there, then straightened (or bent the last
         * bit) within that plane, as rig_ik.c does beyond the reach. Inside the band the
         * result is the one the direct solve would give, the same plane and the same bend. */
        kiln__ik3_goal in = kiln__ik3_goal_of(kiln__f4_muladds(c.p[0], ag, limit / dg), c.p[0]);
        kiln__ik3_toward(&c, &in, 1, &aim, 1);
        kiln__ik3_pole(&c, r, h, &in, tw, 1, aim);
        kiln__ik3_toward(&c, &goal, 0, NULL, 0);
    } else {
        kiln__ik3_toward(&c, &goal, !goal.ok, &aim, 1);
        kiln__ik3_pole(&c, r, h, &goal, tw, 0, aim);
    }
    float *m0 = r->model + (size_t)chain[0] * 16u, *m1 = r->model + (size_t)chain[1] * 16u;
    /* the locals: the start's is its turn in the frame's axes, conj(F) ⊗ t0 ⊗ F, composed with
     * its local; the middle's is the bend in the start's axes, conj(F fk0) ⊗ x ⊗ F fk0, composed
     * with its local; the end's (target rotation) conj(F q0 q1) ⊗ R(target), whose F^T R(target)
     * is one 3x3 (kiln__f4_qrel) */
    kiln__f4_rows3(fc, frows);
    kiln__f4 q0 = kiln__f4_qmul(kiln__f4_rows_mul_q(frows, c.t0), c.fk[0]);
    kiln__f4 q1 = kiln__f4_qmul(kiln__f4_qmul(kiln__f4_qconj(c.fk[0]), kiln__f4_rows_mul_q(frows, c.x)),
                                kiln__f4_qmul(c.fk[0], c.fk[1]));
    int use_target = (h->flags & KILN_IK_USE_TARGET_ROTATION) != 0;
    kiln__f4 q2 = q1;
    if (use_target) {
        float tc[12], prow[12];
        kiln__f4_rot_cols(tm, tc);
        for (int k = 0; k < 3; k++) kiln__f4_st(prow + k * 4, frows[k]);
        q2 = kiln__f4_qmul(kiln__f4_qconj(kiln__f4_qmul(q0, q1)), kiln__f4_qrel(prow, tc));
    }
    /* normalised side by side: one square root and one division for all (kiln__f4_qnorm's
     * bits; its fallbacks one by one) */
    kiln__f4 inv;
    if (kiln__f4_inv_len4(kiln__f4_norm2_4(q0, q1, q2, q2), &inv)) {
        q0 = kiln__f4_scale(q0, kiln__f4_x(inv)), q1 = kiln__f4_scale(q1, kiln__f4_y(inv));
        q2 = kiln__f4_scale(q2, kiln__f4_z(inv));
    } else {
        q0 = kiln__f4_qnorm(q0), q1 = kiln__f4_qnorm(q1), q2 = kiln__f4_qnorm(q2);
    }
    kiln__set_rotation_f(r, chain[0], q0, w);
    kiln__set_rotation_f(r, chain[1], q1, w);
    if (use_target) kiln__set_rotation_f(r, chain[2], q2, w);
    /* the chain's model matrices from those locals, as kiln__rig_update makes them (the start
     * keeping its position bit for bit when no translation moved; pose_bone_model.h, inlined),
     * then the bones below */
    kiln__bone_to_model_cols(r->local, r->bones, chain[0], p0, m0, r->moved);
    kiln__bone_to_model_cols(r->local, r->bones, chain[1], m0, m1, 1);
    kiln__bone_to_model_cols(r->local, r->bones, chain[2], m1, r->model + (size_t)chain[2] * 16u, 1);
    for (int i = 0; i < 3; i++) r->stamp[chain[i]] = r->epoch;
    kiln__rig_update_chain(r, chain);

    rep->ik_solved++;
    /* reach: the end can be from |l1 - l2| (folded) to l1 + l2 (straight) from the start */
    if (!kiln__ik3_reachable(c.l1, c.l2, dg)) {
        rep->ik_unreachable++;
    } else if (w >= 1.0f) {
        float e[4];
        kiln__f4_st(e, kiln__f4_sub(kiln__f4_ld(r->model + (size_t)chain[2] * 16u + 12u), g));
        float err = kiln__sqrt1f(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
        if (err > rep->ik_max_error_m) rep->ik_max_error_m = err;
    }
}
