/* runtime/rig_two_bone_simd.h - the two-bone IK solve of rig_two_bone.c for KV_W independent
 * handles at once, SoA (one handle per lane), written in the simd_ops.h vocabulary and compiled
 * per path (rig_two_bone_sse2.c, rig_two_bone_avx2.c).
 *
 * Private template: include after simd_ops.h. The same steps and operations, in the same order,
 * as the single solve of rig_two_bone_single.h (bend about the unnormalised hinge, aim the end
 * scaled by 1 / dg at the goal, turn to the pole plus the twist composed with the aim, both
 * scaled by 1 / h and not normalised; the start's turn and the middle joint's bend carried in
 * model space and re-expressed in the parent frame's orthonormalised axes, with the stored
 * locals, only when written back and normalised there; out of reach through the point just
 * inside it, both ways computed and the lane's one selected), so every lane is that solve's
 * result bit for bit. What the scalar solve settles with a fallback (a straight
 * chain's hinge, opposite directions, zero-length bones, a goal on the start, a zero rotation)
 * is not repeated here: such a lane is flagged (kiln__ik3_batch.redo) and the caller solves it
 * with the scalar code instead, so every lane's result is the one the scalar rules define.
 */
#include <math.h>

/* a·b + c and c - a·b, never fused: the scalar solve's operations are cglm's SSE2 ones, which do
 * not fuse, and rounding each product keeps every path's lanes bit for bit those of the scalar
 * code (the out-of-reach plane and the descendants' poses amplify last-bit differences). */
#define kiln__rig_ma(a, b, c) kv_add(kv_mul(a, b), c)
#define kiln__rig_nma(a, b, c) kv_sub(c, kv_mul(a, b))

typedef struct kv3 {
    kv x, y, z;
} kv3;

KILN__FN kv3 KILN__SFX(kiln__v3ld)(const float (*v)[KILN__IK3_LANES], unsigned o)
{
    kv3 r = {kv_ld(v[0] + o), kv_ld(v[1] + o), kv_ld(v[2] + o)};
    return r;
}
KILN__FN kv3 KILN__SFX(kiln__v3add)(kv3 a, kv3 b)
{
    kv3 r = {kv_add(a.x, b.x), kv_add(a.y, b.y), kv_add(a.z, b.z)};
    return r;
}
KILN__FN kv3 KILN__SFX(kiln__v3sub)(kv3 a, kv3 b)
{
    kv3 r = {kv_sub(a.x, b.x), kv_sub(a.y, b.y), kv_sub(a.z, b.z)};
    return r;
}
KILN__FN kv3 KILN__SFX(kiln__v3scale)(kv3 a, kv s)
{
    kv3 r = {kv_mul(a.x, s), kv_mul(a.y, s), kv_mul(a.z, s)};
    return r;
}
/* a + b·s */
KILN__FN kv3 KILN__SFX(kiln__v3muladds)(kv3 a, kv3 b, kv s)
{
    kv3 r = {kiln__rig_ma(b.x, s, a.x), kiln__rig_ma(b.y, s, a.y), kiln__rig_ma(b.z, s, a.z)};
    return r;
}
/* 1 / a, per component (divisions, as kiln__bone_to_model's). */
KILN__FN kv3 KILN__SFX(kiln__v3inv)(kv3 a)
{
    kv one = kv_set1(1.0f);
    kv3 r = {kv_div(one, a.x), kv_div(one, a.y), kv_div(one, a.z)};
    return r;
}
KILN__FN kv KILN__SFX(kiln__v3dot)(kv3 a, kv3 b) { return kiln__rig_ma(a.z, b.z, kiln__rig_ma(a.y, b.y, kv_mul(a.x, b.x))); }
KILN__FN kv3 KILN__SFX(kiln__v3cross)(kv3 a, kv3 b)
{
    kv3 r = {kiln__rig_nma(a.z, b.y, kv_mul(a.y, b.z)), kiln__rig_nma(a.x, b.z, kv_mul(a.z, b.x)),
             kiln__rig_nma(a.y, b.x, kv_mul(a.x, b.y))};
    return r;
}
KILN__FN kv3 KILN__SFX(kiln__v3sel)(kv m, kv3 a, kv3 b)
{
    kv3 r = {kv_sel(m, a.x, b.x), kv_sel(m, a.y, b.y), kv_sel(m, a.z, b.z)};
    return r;
}
KILN__FN kv_quat KILN__SFX(kiln__qsel)(kv m, kv_quat a, kv_quat b)
{
    kv_quat r = {kv_sel(m, a.x, b.x), kv_sel(m, a.y, b.y), kv_sel(m, a.z, b.z), kv_sel(m, a.w, b.w)};
    return r;
}
KILN__FN kv_quat KILN__SFX(kiln__qident)(void)
{
    kv_quat r = {kv_zero(), kv_zero(), kv_zero(), kv_set1(1.0f)};
    return r;
}
KILN__FN kv KILN__SFX(kiln__not)(kv m) { return kv_xor(m, kv_gt(kv_set1(1.0f), kv_zero())); }

/* a ⊗ b (Hamilton, glm_quat_mul's formula). */
KILN__FN kv_quat KILN__SFX(kiln__qmulv)(kv_quat a, kv_quat b)
{
    kv_quat r;
    r.x = kiln__rig_nma(a.z, b.y, kiln__rig_ma(a.y, b.z, kiln__rig_ma(a.x, b.w, kv_mul(a.w, b.x))));
    r.y = kiln__rig_ma(a.z, b.x, kiln__rig_ma(a.y, b.w, kiln__rig_nma(a.x, b.z, kv_mul(a.w, b.y))));
    r.z = kiln__rig_ma(a.z, b.w, kiln__rig_nma(a.y, b.x, kiln__rig_ma(a.x, b.y, kv_mul(a.w, b.z))));
    r.w = kiln__rig_nma(a.z, b.z, kiln__rig_nma(a.y, b.y, kiln__rig_nma(a.x, b.x, kv_mul(a.w, b.w))));
    return r;
}
KILN__FN kv_quat KILN__SFX(kiln__qconjv)(kv_quat a)
{
    kv n = kv_set1(-0.0f);
    kv_quat r = {kv_xor(a.x, n), kv_xor(a.y, n), kv_xor(a.z, n), a.w};
    return r;
}
/* v' = q ⊗ v ⊗ q* (kiln__qrot_f). */
KILN__FN kv3 KILN__SFX(kiln__qrotv)(kv_quat q, kv3 v)
{
    kv3 qv = {q.x, q.y, q.z};
    kv3 t = KILN__SFX(kiln__v3cross)(qv, v);
    t = KILN__SFX(kiln__v3add)(t, t);
    kv3 u = KILN__SFX(kiln__v3cross)(qv, t);
    return KILN__SFX(kiln__v3add)(KILN__SFX(kiln__v3muladds)(v, t, q.w), u);
}

/* q / |q|; lanes whose |q|^2 is not above KILN__RIG_EPS2_F (or not finite) set `bad`. */
KILN__FN kv_quat KILN__SFX(kiln__qnormv)(kv_quat q, kv *bad)
{
    /* glm_vec4_norm2's order on SSE: (x² + y²) + (z² + w²) */
    kv n2 = kv_add(kv_add(kv_mul(q.x, q.x), kv_mul(q.y, q.y)), kv_add(kv_mul(q.z, q.z), kv_mul(q.w, q.w)));
    kv ok = kv_and(kv_gt(n2, kv_set1(KILN__RIG_EPS2_F)), kv_lt(n2, kv_set1(INFINITY)));
    *bad = kv_or(*bad, KILN__SFX(kiln__not)(ok));
    kv inv = kv_div(kv_set1(1.0f), kv_sqrt(kv_sel(ok, n2, kv_set1(1.0f))));
    kv_quat r = {kv_mul(q.x, inv), kv_mul(q.y, inv), kv_mul(q.z, inv), kv_mul(q.w, inv)};
    return r;
}

/* q itself; lanes whose length is outside (1/2, 2) set `bad` (kiln__f4_qvalid normalises
 * them). */
KILN__FN kv_quat KILN__SFX(kiln__qvalidv)(kv_quat q, kv *bad)
{
    kv n2 = kv_add(kv_add(kv_mul(q.x, q.x), kv_mul(q.y, q.y)), kv_add(kv_mul(q.z, q.z), kv_mul(q.w, q.w)));
    kv ok = kv_and(kv_gt(n2, kv_set1(0.25f)), kv_lt(n2, kv_set1(4.0f)));
    *bad = kv_or(*bad, KILN__SFX(kiln__not)(ok));
    return q;
}

/* a / |a| and |a|; lanes with |a|^2 <= KILN__RIG_EPS2_F set `bad` (kiln__unit3f's zero). */
KILN__FN kv3 KILN__SFX(kiln__unit3v)(kv3 a, kv *len, kv *bad)
{
    kv n2 = KILN__SFX(kiln__v3dot)(a, a);
    kv ok = kv_gt(n2, kv_set1(KILN__RIG_EPS2_F));
    *bad = kv_or(*bad, KILN__SFX(kiln__not)(ok));
    kv n = kv_sqrt(kv_sel(ok, n2, kv_set1(1.0f)));
    if (len) *len = n;
    return KILN__SFX(kiln__v3scale)(a, kv_div(kv_set1(1.0f), n));
}

/* kiln__f4_qaxis_cs_u: the rotation about the unit axis by the angle of (c, s), up to a positive
 * factor; a zero half-angle sine (or h not above 0) gives the identity, as there. */
KILN__FN kv_quat KILN__SFX(kiln__qaxis_csv)(kv3 axis, kv c, kv s)
{
    kv h = kv_sqrt(kiln__rig_ma(s, s, kv_mul(c, c)));
    kv pos = kv_lt(c, kv_zero());
    pos = KILN__SFX(kiln__not)(pos); /* c >= 0 (NaN lanes fail later) */
    kv hs = kv_sel(pos, s, kv_sub(h, c)), hc = kv_sel(pos, kv_add(h, c), s);
    kv zero = KILN__SFX(kiln__not)(kv_and(kv_or(kv_lt(hs, kv_zero()), kv_gt(hs, kv_zero())), kv_gt(h, kv_zero())));
    kv ih = kv_div(kv_set1(1.0f), kv_sel(zero, kv_set1(1.0f), h));
    hs = kv_mul(hs, ih);
    kv_quat q = {kv_mul(axis.x, hs), kv_mul(axis.y, hs), kv_mul(axis.z, hs), kv_mul(hc, ih)};
    return KILN__SFX(kiln__qsel)(zero, KILN__SFX(kiln__qident)(), q);
}

/* kiln__qfrom_to_f without its fallbacks, from a = ac scaled by inv_len toward the unit b:
 * zero or opposite directions set `bad` (the aim of kiln__ik3_toward). */
KILN__FN kv_quat KILN__SFX(kiln__qaimv)(kv3 ua, kv3 ub, kv *bad)
{
    kv3 c = KILN__SFX(kiln__v3cross)(ua, ub);
    c = KILN__SFX(kiln__v3muladds)(c, ua, kv_xor(KILN__SFX(kiln__v3dot)(c, ua), kv_set1(-0.0f)));
    kv3 sum = KILN__SFX(kiln__v3add)(ua, ub);
    kv w = kv_mul(kv_set1(0.5f), KILN__SFX(kiln__v3dot)(sum, sum));
    kv tiny = kv_set1(1e-12f);
    *bad = kv_or(*bad, kv_and(kv_lt(w, tiny), kv_lt(KILN__SFX(kiln__v3dot)(c, c), tiny)));
    kv_quat q = {c.x, c.y, c.z, w};
    return KILN__SFX(kiln__qnormv)(q, bad);
}

/* kiln__f4_rot_cols on columns c0, c1: Gram-Schmidt into x, y, z. Zero columns set `bad`. */
KILN__FN void KILN__SFX(kiln__colsv)(kv3 c0, kv3 c1, kv3 f[3], kv *bad)
{
    kv3 x = KILN__SFX(kiln__unit3v)(c0, NULL, bad);
    kv3 y = KILN__SFX(kiln__v3muladds)(c1, x, kv_xor(KILN__SFX(kiln__v3dot)(x, c1), kv_set1(-0.0f)));
    y = KILN__SFX(kiln__unit3v)(y, NULL, bad);
    f[0] = x, f[1] = y, f[2] = KILN__SFX(kiln__v3cross)(x, y);
}

/* F^T · v for F's columns f (kiln__f4_mul_rows' sums). */
KILN__FN kv3 KILN__SFX(kiln__v3tmul)(const kv3 f[3], kv3 v)
{
    kv3 r = {KILN__SFX(kiln__v3dot)(f[0], v), KILN__SFX(kiln__v3dot)(f[1], v), KILN__SFX(kiln__v3dot)(f[2], v)};
    return r;
}

/* kiln__f4_rows_mul_q: (F^T · q.xyz, q.w). */
KILN__FN kv_quat KILN__SFX(kiln__qinframev)(const kv3 f[3], kv_quat q)
{
    kv3 v = {q.x, q.y, q.z};
    v = KILN__SFX(kiln__v3tmul)(f, v);
    kv_quat r = {v.x, v.y, v.z, q.w};
    return r;
}

/* kiln__f4_shepperd on the columns x, y, z: its four cases selected per lane, not normalised. */
KILN__FN kv_quat KILN__SFX(kiln__shepperdv)(kv3 x, kv3 y, kv3 z)
{
    kv one = kv_set1(1.0f);
    kv tr = kv_add(kv_add(x.x, y.y), z.z);
    kv m0 = kv_gt(tr, kv_zero());
    kv m1 = kv_andnot(m0, kv_and(kv_gt(x.x, y.y), kv_gt(x.x, z.z)));
    kv m2 = kv_andnot(kv_or(m0, m1), kv_gt(y.y, z.z));
    kv rad = kv_sel(m0, kv_add(one, tr),
                    kv_sel(m1, kv_sub(kv_sub(kv_add(one, x.x), y.y), z.z),
                           kv_sel(m2, kv_sub(kv_sub(kv_add(one, y.y), x.x), z.z),
                                  kv_sub(kv_sub(kv_add(one, z.z), x.x), y.y))));
    kv s = kv_mul(kv_set1(2.0f), kv_sqrt(rad)), inv = kv_div(one, s), h = kv_mul(kv_set1(0.25f), s);
    kv a = kv_mul(kv_sub(y.z, z.y), inv), b = kv_mul(kv_sub(z.x, x.z), inv), c = kv_mul(kv_sub(x.y, y.x), inv);
    kv d = kv_mul(kv_add(y.x, x.y), inv), e = kv_mul(kv_add(z.x, x.z), inv), f = kv_mul(kv_add(z.y, y.z), inv);
    kv_quat q;
    q.x = kv_sel(m0, a, kv_sel(m1, h, kv_sel(m2, d, e)));
    q.y = kv_sel(m0, b, kv_sel(m1, d, kv_sel(m2, h, f)));
    q.z = kv_sel(m0, c, kv_sel(m1, e, kv_sel(m2, f, h)));
    q.w = kv_sel(m0, h, kv_sel(m1, a, kv_sel(m2, b, c)));
    return q;
}

/* The chain of KV_W lanes (kiln__ik3 of rig_two_bone.c). */
typedef struct KILN__SFX(kiln__ik3v) {
    kv3 p0, p1, p2;
    kv_quat t0, x; /* kiln__ik3's turn of the start and bend of the middle joint */
    kv l1, l2;
} KILN__SFX(kiln__ik3v);

/* kiln__ik3_toward: bend the middle joint to the law of cosines' angle, aim the end at g (the
 * same shortcuts: the unnormalised hinge, h = l1 l2, the bent end scaled by 1 / dg); with
 * `aim`, the aim's rotation is left there for the pole's turn. */
KILN__FN void KILN__SFX(kiln__ik3v_toward)(KILN__SFX(kiln__ik3v) *c, kv3 g, kv_quat *aim, int first, kv *bad)
{
    kv3 ag = KILN__SFX(kiln__v3sub)(g, c->p0);
    kv n2g = KILN__SFX(kiln__v3dot)(ag, ag), okg = kv_gt(n2g, kv_set1(KILN__RIG_EPS2_F));
    *bad = kv_or(*bad, KILN__SFX(kiln__not)(okg));
    kv dg = kv_sqrt(n2g), l1 = c->l1, l2 = c->l2;
    kv inv_dg = kv_div(kv_set1(1.0f), kv_sqrt(kv_sel(okg, n2g, kv_set1(1.0f))));
    kv3 ba = KILN__SFX(kiln__v3sub)(c->p0, c->p1), bc = KILN__SFX(kiln__v3sub)(c->p2, c->p1);
    kv3 cr = KILN__SFX(kiln__v3cross)(ba, bc);
    kv l1l2 = kv_mul(l1, l2), inv = kv_div(kv_set1(1.0f), kv_add(l1l2, l1l2));
    kv cur_c = KILN__SFX(kiln__v3dot)(ba, bc), cr2 = KILN__SFX(kiln__v3dot)(cr, cr), cur_s = kv_sqrt(cr2);
    kv sum = kv_add(l1, l2);
    kv op = kv_mul(kv_mul(kv_sub(sum, dg), kv_add(sum, dg)), inv);
    kv om = kv_mul(kv_mul(kv_add(kv_sub(dg, l1), l2), kv_sub(kv_add(dg, l1), l2)), inv);
    kv opp = kv_gt(op, kv_zero()), omp = kv_gt(om, kv_zero()), regular = kv_and(opp, omp);
    kv want_c = kv_sel(opp, kv_sel(omp, kv_mul(kv_set1(0.5f), kv_sub(op, om)), kv_set1(1.0f)), kv_set1(-1.0f));
    kv want_s = kv_and(regular, kv_sqrt(kv_max(kv_mul(op, om), kv_zero())));
    /* the hinge: the triangle's normal; a straight or folded chain is the scalar code's */
    kv straight = kv_or(KILN__SFX(kiln__not)(kv_gt(cr2, kv_mul(kv_mul(kv_set1(1e-12f), l1l2), l1l2))),
                        KILN__SFX(kiln__not)(kv_gt(cr2, kv_set1(KILN__RIG_EPS2_F))));
    *bad = kv_or(*bad, straight);
    kv cc = kiln__rig_ma(want_s, cur_s, kv_mul(want_c, cur_c)), ss = kiln__rig_nma(want_c, cur_s, kv_mul(want_s, cur_c));
    /* the half angle of (cc, ss) as kiln__qaxis_csv takes it, with h = l1 l2 */
    kv pos = KILN__SFX(kiln__not)(kv_lt(cc, kv_zero()));
    kv hs = kv_sel(pos, ss, kv_sub(l1l2, cc)), hc = kv_sel(pos, kv_add(l1l2, cc), ss);
    kv zero = KILN__SFX(kiln__not)(kv_or(kv_lt(hs, kv_zero()), kv_gt(hs, kv_zero())));
    kv_quat q = {kv_mul(cr.x, hs), kv_mul(cr.y, hs), kv_mul(cr.z, hs), kv_mul(hc, cur_s)};
    kv nb = kv_zero();
    q = KILN__SFX(kiln__qnormv)(q, &nb);
    *bad = kv_or(*bad, kv_andnot(zero, nb));
    q = KILN__SFX(kiln__qsel)(zero, KILN__SFX(kiln__qident)(), q);
    c->p2 = KILN__SFX(kiln__v3add)(c->p1, KILN__SFX(kiln__qrotv)(q, bc));
    c->x = first ? q
                 : KILN__SFX(kiln__qmulv)(KILN__SFX(kiln__qmulv)(KILN__SFX(kiln__qconjv)(c->t0), q),
                                          KILN__SFX(kiln__qmulv)(c->t0, c->x));
    kv3 ac = KILN__SFX(kiln__v3sub)(c->p2, c->p0);
    kv n2 = KILN__SFX(kiln__v3dot)(ac, ac), ok = kv_gt(n2, kv_set1(KILN__RIG_EPS2_F));
    *bad = kv_or(*bad, KILN__SFX(kiln__not)(ok));
    kv inv_len = kv_sel(regular, inv_dg, kv_div(kv_set1(1.0f), kv_sqrt(kv_sel(ok, n2, kv_set1(1.0f)))));
    q = KILN__SFX(kiln__qaimv)(KILN__SFX(kiln__v3scale)(ac, inv_len), KILN__SFX(kiln__v3scale)(ag, inv_dg), bad);
    c->p1 = KILN__SFX(kiln__v3add)(c->p0, KILN__SFX(kiln__qrotv)(q, KILN__SFX(kiln__v3sub)(c->p1, c->p0)));
    c->p2 = KILN__SFX(kiln__v3add)(c->p0, KILN__SFX(kiln__qrotv)(q, ac));
    if (aim) {
        *aim = q;
        return;
    }
    c->t0 = KILN__SFX(kiln__qmulv)(q, c->t0);
}

/* kiln__ik3_pole: the turn about the start->g axis to the pole's half-plane, then the twist. */
KILN__FN void KILN__SFX(kiln__ik3v_pole)(KILN__SFX(kiln__ik3v) *c, kv3 g, kv3 pv, kv has_pv, kv tw_c, kv tw_s,
                                         kv has_tw, int move, kv_quat aim, kv *bad)
{
    kv3 u = KILN__SFX(kiln__unit3v)(KILN__SFX(kiln__v3sub)(g, c->p0), NULL, bad);
    kv3 vp = KILN__SFX(kiln__v3sub)(pv, c->p0), vb = KILN__SFX(kiln__v3sub)(c->p1, c->p0);
    vp = KILN__SFX(kiln__v3muladds)(vp, u, kv_xor(KILN__SFX(kiln__v3dot)(vp, u), kv_set1(-0.0f)));
    vb = KILN__SFX(kiln__v3muladds)(vb, u, kv_xor(KILN__SFX(kiln__v3dot)(vb, u), kv_set1(-0.0f)));
    kv scale = kv_add(c->l1, c->l2), eps2 = kv_mul(kv_mul(kv_set1(1e-10f), scale), scale);
    kv plane = kv_and(has_pv, kv_and(kv_gt(KILN__SFX(kiln__v3dot)(vp, vp), eps2),
                                     kv_gt(KILN__SFX(kiln__v3dot)(vb, vb), eps2)));
    kv3 cr = KILN__SFX(kiln__v3cross)(vb, vp);
    kv_quat q = KILN__SFX(kiln__qaxis_csv)(u, KILN__SFX(kiln__v3dot)(vb, vp), KILN__SFX(kiln__v3dot)(cr, u));
    q = KILN__SFX(kiln__qsel)(plane, q, KILN__SFX(kiln__qident)());
    kv_quat t = KILN__SFX(kiln__qaxis_csv)(u, tw_c, tw_s);
    q = KILN__SFX(kiln__qsel)(has_tw, KILN__SFX(kiln__qmulv)(t, q), q);
    if (move) {
        /* the positions turn by q normalised (a lane it fails on fails at the end as well) */
        kv_quat qn = KILN__SFX(kiln__qnormv)(q, bad);
        c->p1 = KILN__SFX(kiln__v3add)(c->p0, KILN__SFX(kiln__qrotv)(qn, KILN__SFX(kiln__v3sub)(c->p1, c->p0)));
        c->p2 = KILN__SFX(kiln__v3add)(c->p0, KILN__SFX(kiln__qrotv)(qn, KILN__SFX(kiln__v3sub)(c->p2, c->p0)));
    }
    /* the turn after the aim, as one product (the aim alone where there is no turn) */
    c->t0 = KILN__SFX(kiln__qsel)(kv_or(plane, has_tw), KILN__SFX(kiln__qmulv)(q, aim), aim);
}

KILN__FN kv_quat KILN__SFX(kiln__qldv)(const float (*v)[KILN__IK3_LANES], unsigned o)
{
    kv_quat r = {kv_ld(v[0] + o), kv_ld(v[1] + o), kv_ld(v[2] + o), kv_ld(v[3] + o)};
    return r;
}
KILN__FN void KILN__SFX(kiln__qstv)(float (*v)[KILN__IK3_LANES], unsigned o, kv_quat q)
{
    kv_st(v[0] + o, q.x), kv_st(v[1] + o, q.y), kv_st(v[2] + o, q.z), kv_st(v[3] + o, q.w);
}

/* The model matrix of a bone (16 vectors, column-major) from the matrix p it is composed with,
 * its local t, unit q, s and the segment scale compensation inv: kiln__bone_to_model's
 * arithmetic, operation for operation (pose_model.c), so that the result is the matrix
 * kiln__rig_update would compute. */
KILN__FN void KILN__SFX(kiln__ik3v_compose)(const kv p[16], kv3 t, kv_quat q, kv3 s, kv3 inv, kv out[16])
{
    kv one = kv_set1(1.0f), two = kv_set1(2.0f);
    kv xx = kv_mul(q.x, q.x), yy = kv_mul(q.y, q.y), zz = kv_mul(q.z, q.z);
    kv xy = kv_mul(q.x, q.y), xz = kv_mul(q.x, q.z), yz = kv_mul(q.y, q.z);
    kv wx = kv_mul(q.w, q.x), wy = kv_mul(q.w, q.y), wz = kv_mul(q.w, q.z);
    kv m[9];
    m[0] = kv_mul(kv_sub(one, kv_mul(two, kv_add(yy, zz))), s.x);
    m[1] = kv_mul(kv_mul(two, kv_add(xy, wz)), s.x);
    m[2] = kv_mul(kv_mul(two, kv_sub(xz, wy)), s.x);
    m[3] = kv_mul(kv_mul(two, kv_sub(xy, wz)), s.y);
    m[4] = kv_mul(kv_sub(one, kv_mul(two, kv_add(xx, zz))), s.y);
    m[5] = kv_mul(kv_mul(two, kv_add(yz, wx)), s.y);
    m[6] = kv_mul(kv_mul(two, kv_add(xz, wy)), s.z);
    m[7] = kv_mul(kv_mul(two, kv_sub(yz, wx)), s.z);
    m[8] = kv_mul(kv_sub(one, kv_mul(two, kv_add(xx, yy))), s.z);
    kv ps[12];
    const kv iv[3] = {inv.x, inv.y, inv.z};
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 4; k++) ps[c * 4 + k] = kv_mul(p[c * 4 + k], iv[c]);
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 4; k++)
            out[c * 4 + k] = kv_add(kv_add(kv_mul(ps[k], m[c * 3]), kv_mul(ps[4 + k], m[c * 3 + 1])),
                                    kv_mul(ps[8 + k], m[c * 3 + 2]));
    for (int k = 0; k < 4; k++)
        out[12 + k] = kv_add(kv_add(kv_add(kv_mul(p[k], t.x), kv_mul(p[4 + k], t.y)), kv_mul(p[8 + k], t.z)), p[12 + k]);
}

/* Writes the 16 rows of m (one matrix per lane) to dst[l] for the lanes whose bit is set in
 * `lanes`: KV_W x KV_W transposes, each lane's matrix as whole vectors. */
KILN__FN void KILN__SFX(kiln__ik3v_store)(const kv m[16], float *const *dst, unsigned lanes)
{
#if KV_W == 8
    for (int j = 0; j < 2; j++) {
        const kv *r = m + 8 * j;
        kv t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
        kv t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
        kv t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
        kv t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
        kv u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0)), u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
        kv u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0)), u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
        kv u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0)), u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
        kv u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0)), u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
        kv v[8] = {_mm256_permute2f128_ps(u0, u4, 0x20), _mm256_permute2f128_ps(u1, u5, 0x20),
                   _mm256_permute2f128_ps(u2, u6, 0x20), _mm256_permute2f128_ps(u3, u7, 0x20),
                   _mm256_permute2f128_ps(u0, u4, 0x31), _mm256_permute2f128_ps(u1, u5, 0x31),
                   _mm256_permute2f128_ps(u2, u6, 0x31), _mm256_permute2f128_ps(u3, u7, 0x31)};
        for (unsigned l = 0; l < 8; l++)
            if (lanes >> l & 1u) kv_st(dst[l] + 8 * j, v[l]);
    }
#elif KV_W == 4
    for (int j = 0; j < 4; j++) {
        kv a = m[4 * j], b = m[4 * j + 1], c = m[4 * j + 2], d = m[4 * j + 3];
        _MM_TRANSPOSE4_PS(a, b, c, d);
        const kv v[4] = {a, b, c, d};
        for (unsigned l = 0; l < 4; l++)
            if (lanes >> l & 1u) kv_st(dst[l] + 4 * j, v[l]);
    }
#else
#error "rig_two_bone_simd.h: 4 or 8 lanes"
#endif
}

/* Solves lanes [0, lanes) of b (rig_internal.h), KV_W at a time. */
KILN__KERNEL void KILN__SFX(kiln__ik3_batch)(kiln__ik3_batch *b, uint32_t lanes)
{
    for (unsigned o = 0; o < lanes; o += KV_W) {
        kv bad = kv_zero();
        kv half = kv_set1(0.5f);
        kv has_pv = kv_gt(kv_ld(b->has_pv + o), half), has_tw = kv_gt(kv_ld(b->has_tw + o), half);
        kv use_target = kv_gt(kv_ld(b->use_target + o), half);
        kv3 g = KILN__SFX(kiln__v3ld)(b->g, o), pv = KILN__SFX(kiln__v3ld)(b->pv, o);
        /* the twist: kiln__euler_x_cs of the pole bone's local rotation as stored */
        kv tb = kv_zero();
        kv_quat pq = KILN__SFX(kiln__qvalidv)(KILN__SFX(kiln__qldv)(b->tw, o), &tb);
        bad = kv_or(bad, kv_and(has_tw, tb));
        kv two = kv_set1(2.0f);
        kv n2 = kv_add(kv_add(kv_mul(pq.x, pq.x), kv_mul(pq.y, pq.y)), kv_add(kv_mul(pq.z, pq.z), kv_mul(pq.w, pq.w)));
        kv r00 = kv_sub(n2, kv_mul(two, kv_add(kv_mul(pq.y, pq.y), kv_mul(pq.z, pq.z))));
        kv r10 = kv_mul(two, kv_add(kv_mul(pq.x, pq.y), kv_mul(pq.w, pq.z)));
        kv regular = kv_gt(kv_add(kv_mul(r00, r00), kv_mul(r10, r10)), kv_mul(kv_mul(kv_set1(1e-12f), n2), n2));
        kv tw_c = kv_sel(regular, kv_sub(n2, kv_mul(two, kv_add(kv_mul(pq.x, pq.x), kv_mul(pq.y, pq.y)))),
                         kv_sub(n2, kv_mul(two, kv_add(kv_mul(pq.x, pq.x), kv_mul(pq.z, pq.z)))));
        kv tw_s = kv_sel(regular, kv_mul(two, kv_add(kv_mul(pq.y, pq.z), kv_mul(pq.w, pq.x))),
                         kv_mul(kv_set1(-2.0f), kv_sub(kv_mul(pq.y, pq.z), kv_mul(pq.w, pq.x))));
        kv3 fc[3], tc[3];
        KILN__SFX(kiln__colsv)(KILN__SFX(kiln__v3ld)(b->pm, o), KILN__SFX(kiln__v3ld)(b->pm + 4, o), fc, &bad);
        KILN__SFX(kiln__ik3v) c;
        c.p0 = KILN__SFX(kiln__v3ld)(b->p[0], o), c.p1 = KILN__SFX(kiln__v3ld)(b->p[1], o);
        c.p2 = KILN__SFX(kiln__v3ld)(b->p[2], o);
        kv_quat fk0 = KILN__SFX(kiln__qvalidv)(KILN__SFX(kiln__qldv)(b->fk[0], o), &bad);
        kv_quat fk1 = KILN__SFX(kiln__qvalidv)(KILN__SFX(kiln__qldv)(b->fk[1], o), &bad);
        c.t0 = c.x = KILN__SFX(kiln__qident)();
        kv3 d = KILN__SFX(kiln__v3sub)(c.p1, c.p0);
        c.l1 = kv_sqrt(KILN__SFX(kiln__v3dot)(d, d));
        d = KILN__SFX(kiln__v3sub)(c.p2, c.p1);
        c.l2 = kv_sqrt(KILN__SFX(kiln__v3dot)(d, d));
        kv tiny = kv_set1(1e-9f);
        bad = kv_or(bad, KILN__SFX(kiln__not)(kv_and(kv_gt(c.l1, tiny), kv_gt(c.l2, tiny))));
        kv3 ag = KILN__SFX(kiln__v3sub)(g, c.p0);
        kv dg = kv_sqrt(KILN__SFX(kiln__v3dot)(ag, ag)), total = kv_add(c.l1, c.l2);
        kv_st(b->len[0] + o, c.l1), kv_st(b->len[1] + o, c.l2), kv_st(b->len[2] + o, dg);
        kv limit = kv_mul(total, kv_set1((float)(1.0 - KILN__RIG_IK_REACH_INSET)));
        kv out = kv_and(kv_gt(dg, limit), kv_gt(total, tiny));
        /* out of reach: toward the inset point, the pole there, then straightened toward g */
        kv3 inside = KILN__SFX(kiln__v3muladds)(c.p0, ag, kv_div(limit, kv_sel(out, dg, kv_set1(1.0f))));
        kv3 t1 = KILN__SFX(kiln__v3sel)(out, inside, g);
        kv_quat aim;
        KILN__SFX(kiln__ik3v_toward)(&c, t1, &aim, 1, &bad);
        KILN__SFX(kiln__ik3v_pole)(&c, t1, pv, has_pv, tw_c, tw_s, has_tw, kv_any(out), aim, &bad);
        if (kv_any(out)) {
            KILN__SFX(kiln__ik3v) s = c;
            kv sb = kv_zero();
            KILN__SFX(kiln__ik3v_toward)(&s, g, NULL, 0, &sb);
            bad = kv_or(bad, kv_and(out, sb));
            c.t0 = KILN__SFX(kiln__qsel)(out, s.t0, c.t0);
            c.x = KILN__SFX(kiln__qsel)(out, s.x, c.x);
        }
        /* the locals from the turns re-expressed in the frames (kiln__ik_two_bone_solve) */
        kv_quat q0 = KILN__SFX(kiln__qmulv)(KILN__SFX(kiln__qinframev)(fc, c.t0), fk0);
        kv_quat q1 = KILN__SFX(kiln__qmulv)(
            KILN__SFX(kiln__qmulv)(KILN__SFX(kiln__qconjv)(fk0), KILN__SFX(kiln__qinframev)(fc, c.x)),
            KILN__SFX(kiln__qmulv)(fk0, fk1));
        tb = kv_zero();
        KILN__SFX(kiln__colsv)(KILN__SFX(kiln__v3ld)(b->tc0, o), KILN__SFX(kiln__v3ld)(b->tc1, o), tc, &tb);
        kv_quat rel = KILN__SFX(kiln__shepperdv)(KILN__SFX(kiln__v3tmul)(fc, tc[0]), KILN__SFX(kiln__v3tmul)(fc, tc[1]),
                                                 KILN__SFX(kiln__v3tmul)(fc, tc[2]));
        kv_quat q2 = KILN__SFX(kiln__qmulv)(KILN__SFX(kiln__qconjv)(KILN__SFX(kiln__qmulv)(q0, q1)), rel);
        q0 = KILN__SFX(kiln__qnormv)(q0, &bad), q1 = KILN__SFX(kiln__qnormv)(q1, &bad);
        q2 = KILN__SFX(kiln__qsel)(use_target, KILN__SFX(kiln__qnormv)(q2, &tb), KILN__SFX(kiln__qldv)(b->q2, o));
        bad = kv_or(bad, kv_and(use_target, tb));
        KILN__SFX(kiln__qstv)(b->q[0], o, q0);
        KILN__SFX(kiln__qstv)(b->q[1], o, q1);
        KILN__SFX(kiln__qstv)(b->q[2], o, q2);
        /* the model matrices: the start keeps its position bit for bit (kiln__rig_update) */
        kv m[3][16], pm[16];
        for (int k = 0; k < 16; k++) pm[k] = kv_ld(b->pm[k] + o);
        const kv_quat qs[3] = {q0, q1, q2};
        /* the lanes to write: solved here (no redo) and below `lanes` (not padding) */
        float badv[KV_W];
        unsigned store = 0;
        kv_st(badv, bad); /* all-one bits (a NaN) where bad */
        for (unsigned l = 0; l < KV_W; l++) store |= (o + l < lanes && badv[l] == 0.0f ? 1u : 0u) << l;
        for (int i = 0; i < 3; i++) {
            KILN__SFX(kiln__ik3v_compose)(i ? m[i - 1] : pm, KILN__SFX(kiln__v3ld)(b->t[i], o), qs[i],
                                          KILN__SFX(kiln__v3ld)(b->s[i], o),
                                          KILN__SFX(kiln__v3inv)(KILN__SFX(kiln__v3ld)(b->ps[i], o)), m[i]);
            if (i == 0) m[0][12] = kv_ld(b->p[0][0] + o), m[0][13] = kv_ld(b->p[0][1] + o), m[0][14] = kv_ld(b->p[0][2] + o);
            KILN__SFX(kiln__ik3v_store)(m[i], b->dst[i] + o, store);
        }
        kv_st(b->redo + o, kv_and(bad, kv_set1(1.0f)));
    }
}
