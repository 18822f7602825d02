/* The two-bone IK handle (three joints, Cast reference E.1) in single precision: the same
 * steps as the general solver of rig_ik.c (bend about the hinge, aim at the goal, turn to the
 * pole plus the twist; out of reach through the point just inside it), on float positions and
 * rotations and without transcendental functions: each rotation is built from the cosine and
 * sine of its angle (rig_math_f32.h), which the law of cosines and the dot and cross products
 * give directly.
 *
 * Only the model-space rotations of the start and middle joints are carried: the end joint's
 * local rotation changes only with the target rotation, which replaces its model rotation.
 */
#include "rig_math_f32.h"

#include <stddef.h>
#include <string.h>

#include "rig_internal.h"

typedef struct kiln__ik3 {
    vec3 p[3];      /* model-space joint positions */
    versor rot[2];  /* model-space rotations of the start and middle joints */
    float l1, l2;   /* bone lengths */
} kiln__ik3;

/* Turns joint `from` (0 or 1) and the joints after it by q about the joint's own position;
 * the positions only when `move` (the last turn of a solve needs the rotations alone). */
static void kiln__ik3_turn(kiln__ik3 *c, int from, const versor q, int move)
{
    for (int j = from + 1; move && j < 3; j++) {
        vec3 d;
        glm_vec3_sub(c->p[j], c->p[from], d);
        kiln__qrot_f(q, d, d);
        glm_vec3_add(c->p[from], d, c->p[j]);
    }
    for (int j = from; j < 2; j++) kiln__qmul_f(q, c->rot[j], c->rot[j]);
}

/* The middle joint's hinge: the normal of the (start, middle, end) triangle, or for a straight
 * or folded chain the middle bone's model X axis made perpendicular to the upper bone, or any
 * perpendicular (kiln/rig.h). */
static void kiln__ik3_hinge(const kiln__ik3 *c, const vec3 ba, const vec3 cr, float l1l2, vec3 axis)
{
    if (glm_vec3_norm2(KILN__GLM(cr)) > 1e-12f * l1l2 * l1l2 && kiln__unit3f(cr, axis) > 0.0f) return;
    static const vec3 x = {1.0f, 0.0f, 0.0f};
    vec3 hx, u;
    kiln__qrot_f(c->rot[1], x, hx);
    if (kiln__unit3f(ba, u) == 0.0f) u[0] = 0.0f, u[1] = 1.0f, u[2] = 0.0f;
    glm_vec3_muladds(u, -glm_vec3_dot(hx, u), hx);
    if (kiln__unit3f(hx, axis) > 1e-6f) return;
    kiln__any_perpendicular_f(u, axis);
}

/* Analytic solve toward g: the middle joint opens from its angle to the law of cosines' (both
 * as cosine and sine: the current ones from the dot and cross products, the wanted ones from
 * the factored forms of 1 ± cos, which keep their accuracy near straight and folded), then the
 * start aims the end at g. */
static void kiln__ik3_toward(kiln__ik3 *c, const vec3 g)
{
    vec3 ag, hinge = {0.0f, 0.0f, 0.0f};
    glm_vec3_sub(KILN__GLM(g), c->p[0], ag);
    float dg = glm_vec3_norm(ag), l1 = c->l1, l2 = c->l2;
    if (l1 > 1e-9f && l2 > 1e-9f) {
        vec3 ba, bc, cr;
        glm_vec3_sub(c->p[0], c->p[1], ba);
        glm_vec3_sub(c->p[2], c->p[1], bc);
        glm_vec3_cross(ba, bc, cr);
        float l1l2 = l1 * l2, inv = 1.0f / (2.0f * l1l2);
        float cur_c = glm_vec3_dot(ba, bc), cur_s = glm_vec3_norm(cr);
        /* 1 + cos = ((l1 + l2)^2 - dg^2) / 2 l1 l2, 1 - cos = (dg^2 - (l1 - l2)^2) / 2 l1 l2 */
        float op = (l1 + l2 - dg) * (l1 + l2 + dg) * inv, om = (dg - l1 + l2) * (dg + l1 - l2) * inv;
        float want_c, want_s;
        if (!(op > 0.0f)) want_c = -1.0f, want_s = 0.0f;     /* out of reach: straight */
        else if (!(om > 0.0f)) want_c = 1.0f, want_s = 0.0f; /* too close: folded */
        else want_c = 0.5f * (op - om), want_s = sqrtf(op * om); /* ((1 + cos) - (1 - cos)) / 2 */
        kiln__ik3_hinge(c, ba, cr, l1l2, hinge);
        /* the opening angle acos(want) - acos(cur), cur taken unnormalised (both factors
         * carry l1 l2) */
        float cc = want_c * cur_c + want_s * cur_s, ss = want_s * cur_c - want_c * cur_s;
        versor q;
        kiln__qaxis_cs_f(hinge, cc, ss, q);
        kiln__ik3_turn(c, 1, q, 1);
    }
    vec3 ac;
    versor q;
    glm_vec3_sub(c->p[2], c->p[0], ac);
    kiln__qfrom_to_f(ac, ag, hinge, q);
    kiln__ik3_turn(c, 0, q, 1);
}

/* Turns the chain about the start->g axis: the middle joint into the half-plane of the pole
 * direction (with a pole vector bone), plus the twist given as (cos, sin) (kiln__ik_pole). */
static void kiln__ik3_pole(kiln__ik3 *c, const kiln__rig *r, const kiln_blob_ik_handle *h, const vec3 g,
                           const float twist_cs[2], int move)
{
    vec3 a, u;
    glm_vec3_sub(KILN__GLM(g), c->p[0], a);
    if (kiln__unit3f(a, u) == 0.0f) {
        glm_vec3_sub(c->p[2], c->p[0], a);
        if (kiln__unit3f(a, u) == 0.0f) return;
    }
    versor q, t;
    int turn = 0;
    glm_quat_identity(q);
    if (h->pole_vector_bone != KILN_BLOB_NONE) {
        const float *pm = r->model + (size_t)h->pole_vector_bone * 16u;
        vec3 vp = {pm[12] - c->p[0][0], pm[13] - c->p[0][1], pm[14] - c->p[0][2]}, vb;
        glm_vec3_muladds(u, -glm_vec3_dot(vp, u), vp);
        glm_vec3_sub(c->p[1], c->p[0], vb);
        glm_vec3_muladds(u, -glm_vec3_dot(vb, u), vb);
        /* a pole on the axis, or a straight chain, defines no plane: keep the one FK gave */
        float scale = c->l1 + c->l2, eps2 = 1e-10f * scale * scale;
        if (glm_vec3_norm2(vp) > eps2 && glm_vec3_norm2(vb) > eps2) {
            vec3 cr;
            glm_vec3_cross(vb, vp, cr);
            kiln__qaxis_cs_f(u, glm_vec3_dot(vb, vp), glm_vec3_dot(cr, u), q);
            turn = 1;
        }
    }
    if (twist_cs) {
        kiln__qaxis_cs_f(u, twist_cs[0], twist_cs[1], t);
        kiln__qmul_f(t, q, q);
        turn = 1;
    }
    if (turn) kiln__ik3_turn(c, 0, q, move);
}

/* The X angle of the XYZ Euler decomposition of q (kiln__qto_euler_xyz) as (cos, sin) up to
 * a positive factor: atan2(R21, R22), or atan2(-R12, R11) at cos(Y) = 0. */
static void kiln__euler_x_cs(const versor q, float cs[2])
{
    float x = q[0], y = q[1], z = q[2], w = q[3];
    float r00 = 1.0f - 2.0f * (y * y + z * z), r10 = 2.0f * (x * y + w * z);
    if (r00 * r00 + r10 * r10 > 1e-12f) cs[0] = 1.0f - 2.0f * (x * x + y * y), cs[1] = 2.0f * (y * z + w * x);
    else cs[0] = 1.0f - 2.0f * (x * x + z * z), cs[1] = -2.0f * (y * z - w * x);
}

static void kiln__local_rotation_f(const kiln__rig *r, uint32_t b, versor q)
{
    const kiln_soa_xform *x = &r->local[b / KILN_SOA_WIDTH];
    unsigned l = b % KILN_SOA_WIDTH;
    q[0] = x->qx[l], q[1] = x->qy[l], q[2] = x->qz[l], q[3] = x->qw[l];
    kiln__qnorm_f(q);
}

/* Writes bone b's local rotation: q (normalised), or slerp(fk, q, w) for w < 1. */
static void kiln__set_rotation_f(kiln__rig *r, uint32_t b, versor q, const versor fk, float w)
{
    if (w < 1.0f) kiln__qslerp_f(fk, q, w, q);
    else kiln__qnorm_f(q);
    kiln_soa_xform *x = &r->local[b / KILN_SOA_WIDTH];
    unsigned l = b % KILN_SOA_WIDTH;
    x->qx[l] = q[0], x->qy[l] = q[1], x->qz[l] = q[2], x->qw[l] = q[3];
    r->stamp[b] = r->epoch;
}

void kiln__ik_two_bone_solve(kiln__rig *r, const kiln_blob_ik_handle *h, double weight)
{
    kiln_rig_report *rep = r->report;
    const uint32_t *chain = r->chain;
    float w = (float)weight;
    /* goal = W(target) · to */
    const float *tm = r->model + (size_t)h->target_bone * 16u;
    vec3 g;
    for (int k = 0; k < 3; k++)
        g[k] = tm[k] * h->target_offset[0] + tm[4 + k] * h->target_offset[1] + tm[8 + k] * h->target_offset[2] +
               tm[12 + k];
    kiln__ik3 c;
    versor frame, fk[3];
    kiln__qfrom_matrix_f(kiln__rig_parent_matrix(r, chain[0]), frame);
    for (int i = 0; i < 3; i++) {
        const float *m = r->model + (size_t)chain[i] * 16u;
        c.p[i][0] = m[12], c.p[i][1] = m[13], c.p[i][2] = m[14];
    }
    int use_target = (h->flags & KILN_IK_USE_TARGET_ROTATION) != 0;
    for (int i = 0; i < 2 + use_target; i++) kiln__local_rotation_f(r, chain[i], fk[i]);
    /* products of unit quaternions: renormalised once, when written back */
    kiln__qmul_f(frame, fk[0], c.rot[0]);
    kiln__qmul_f(c.rot[0], fk[1], c.rot[1]);
    vec3 d, ag;
    glm_vec3_sub(c.p[1], c.p[0], d);
    c.l1 = glm_vec3_norm(d);
    glm_vec3_sub(c.p[2], c.p[1], d);
    c.l2 = glm_vec3_norm(d);
    glm_vec3_sub(g, c.p[0], ag);
    float dg = glm_vec3_norm(ag), total = c.l1 + c.l2;
    /* reach: the end can be from |l1 - l2| (folded) to l1 + l2 (straight) from the start */
    double slack = 1e-9 * total, longest = c.l1 > c.l2 ? c.l1 : c.l2;
    int reachable = dg <= total + slack && dg >= 2.0 * longest - total - slack;

    float twist[2], *tw = NULL;
    if (h->pole_bone != KILN_BLOB_NONE) {
        versor pq;
        kiln__local_rotation_f(r, h->pole_bone, pq);
        kiln__euler_x_cs(pq, twist);
        tw = twist;
    }
    float limit = total * (float)(1.0 - KILN__RIG_IK_REACH_INSET);
    if (dg > limit && total > 1e-9f) {
        /* Out of reach (or so close to it that the chain is straight to float precision, where
         * the pole defines no plane): solved toward the point of the line 1e-4 of the reach
         * inside it, turned into the pole's plane there, then straightened (or bent the last
         * bit) within that plane, as rig_ik.c does beyond the reach. Inside the band the
         * result is the one the direct solve would give, the same plane and the same bend. */
        vec3 inside;
        float s = limit / dg;
        glm_vec3_copy(c.p[0], inside);
        glm_vec3_muladds(ag, s, inside);
        kiln__ik3_toward(&c, inside);
        kiln__ik3_pole(&c, r, h, inside, tw, 1);
        kiln__ik3_toward(&c, g);
    } else {
        kiln__ik3_toward(&c, g);
        kiln__ik3_pole(&c, r, h, g, tw, 0);
    }
    versor q;
    kiln__qconj_mul_f(frame, c.rot[0], q);
    kiln__set_rotation_f(r, chain[0], q, fk[0], w);
    kiln__qconj_mul_f(c.rot[0], c.rot[1], q);
    kiln__set_rotation_f(r, chain[1], q, fk[1], w);
    if (use_target) {
        versor rt;
        kiln__qfrom_matrix_f(tm, rt);
        kiln__qconj_mul_f(c.rot[1], rt, q);
        kiln__set_rotation_f(r, chain[2], q, fk[2], w);
    }
    kiln__rig_update(r, chain[0]);

    rep->ik_solved++;
    if (!reachable) {
        rep->ik_unreachable++;
    } else if (w >= 1.0f) {
        const float *e = r->model + (size_t)chain[2] * 16u;
        float err = sqrtf((e[12] - g[0]) * (e[12] - g[0]) + (e[13] - g[1]) * (e[13] - g[1]) +
                          (e[14] - g[2]) * (e[14] - g[2]));
        if (err > rep->ik_max_error_m) rep->ik_max_error_m = err;
    }
}

/* ---- batches of independent handles (the SIMD kernels of rig_two_bone_simd.h) ------------- */
int kiln__ik3_batchable(const kiln__rig *r, const kiln_blob_ik_handle *h, uint32_t chain[3])
{
    uint32_t nb = r->bone_count;
    if (h->chain_length != 3 || r->max_chain < 3 || h->target_bone >= nb || h->start_bone >= nb ||
        h->end_bone >= nb || (h->pole_vector_bone != KILN_BLOB_NONE && h->pole_vector_bone >= nb) ||
        (h->pole_bone != KILN_BLOB_NONE && h->pole_bone >= nb))
        return 0;
    uint32_t b = h->end_bone;
    for (int i = 2; i >= 0; i--) {
        chain[i] = b;
        if (i == 0) break;
        int32_t p = r->bones[b].parent;
        if (p < 0 || (uint32_t)p >= b) return 0;
        b = (uint32_t)p;
    }
    return chain[0] == h->start_bone;
}

/* Lane `l` of b from handle h: what kiln__ik_two_bone_solve reads, in the same float form. */
static void kiln__ik3_gather(const kiln__rig *r, const kiln_blob_ik_handle *h, const uint32_t chain[3],
                             kiln__ik3_batch *b, unsigned l)
{
    const float *tm = r->model + (size_t)h->target_bone * 16u, *fm = kiln__rig_parent_matrix(r, chain[0]);
    for (int k = 0; k < 3; k++) {
        b->g[k][l] = tm[k] * h->target_offset[0] + tm[4 + k] * h->target_offset[1] + tm[8 + k] * h->target_offset[2] +
                     tm[12 + k];
        b->tc0[k][l] = tm[k], b->tc1[k][l] = tm[4 + k];
    }
    for (int i = 0; i < 3; i++) {
        const float *m = r->model + (size_t)chain[i] * 16u;
        b->p[i][0][l] = m[12], b->p[i][1][l] = m[13], b->p[i][2][l] = m[14];
    }
    for (int i = 0; i < 2; i++) {
        const kiln_soa_xform *x = &r->local[chain[i] / KILN_SOA_WIDTH];
        unsigned s = chain[i] % KILN_SOA_WIDTH;
        b->fk[i][0][l] = x->qx[s], b->fk[i][1][l] = x->qy[s], b->fk[i][2][l] = x->qz[s], b->fk[i][3][l] = x->qw[s];
    }
    b->has_pv[l] = h->pole_vector_bone != KILN_BLOB_NONE ? 1.0f : 0.0f;
    if (h->pole_vector_bone != KILN_BLOB_NONE) {
        const float *pm = r->model + (size_t)h->pole_vector_bone * 16u;
        b->pv[0][l] = pm[12], b->pv[1][l] = pm[13], b->pv[2][l] = pm[14];
    } else {
        b->pv[0][l] = b->pv[1][l] = b->pv[2][l] = 0.0f;
    }
    b->has_tw[l] = h->pole_bone != KILN_BLOB_NONE ? 1.0f : 0.0f;
    /* without a pole bone, any unit quaternion (its twist is not used) */
    const kiln_soa_xform *px = h->pole_bone != KILN_BLOB_NONE ? &r->local[h->pole_bone / KILN_SOA_WIDTH] : NULL;
    unsigned pl = h->pole_bone % KILN_SOA_WIDTH;
    b->tw[0][l] = px ? px->qx[pl] : 0.0f, b->tw[1][l] = px ? px->qy[pl] : 0.0f;
    b->tw[2][l] = px ? px->qz[pl] : 0.0f, b->tw[3][l] = px ? px->qw[pl] : 1.0f;
    b->use_target[l] = (h->flags & KILN_IK_USE_TARGET_ROTATION) ? 1.0f : 0.0f;
    for (int k = 0; k < 16; k++) b->pm[k][l] = fm[k];
    for (int i = 0; i < 3; i++) {
        const kiln_soa_xform *x = &r->local[chain[i] / KILN_SOA_WIDTH];
        unsigned s = chain[i] % KILN_SOA_WIDTH;
        b->t[i][0][l] = x->tx[s], b->t[i][1][l] = x->ty[s], b->t[i][2][l] = x->tz[s];
        b->s[i][0][l] = x->sx[s], b->s[i][1][l] = x->sy[s], b->s[i][2][l] = x->sz[s];
        /* kiln__bone_to_model's segment scale compensation: 1 / the parent's local scale */
        int32_t p = r->bones[chain[i]].parent;
        int ssc = p >= 0 && (uint32_t)p < chain[i] && (r->bones[chain[i]].flags & KILN_BONE_SEGMENT_SCALE_COMPENSATE);
        const kiln_soa_xform *sx = ssc ? &r->local[(uint32_t)p / KILN_SOA_WIDTH] : NULL;
        unsigned sl = (uint32_t)p % KILN_SOA_WIDTH;
        b->ps[i][0][l] = ssc ? sx->sx[sl] : 1.0f;
        b->ps[i][1][l] = ssc ? sx->sy[sl] : 1.0f;
        b->ps[i][2][l] = ssc ? sx->sz[sl] : 1.0f;
        b->dst[i][l] = r->model + (size_t)chain[i] * 16u;
        if (i == 2) b->q2[0][l] = x->qx[s], b->q2[1][l] = x->qy[s], b->q2[2][l] = x->qz[s], b->q2[3][l] = x->qw[s];
    }
}

/* Copies lane `from` to lane `to` (the padding of a partly filled kernel width). */
static void kiln__ik3_copy_lane(kiln__ik3_batch *b, unsigned from, unsigned to)
{
    float(*f)[KILN__IK3_LANES] = (float(*)[KILN__IK3_LANES])(void *)b;
    size_t rows = offsetof(kiln__ik3_batch, q) / sizeof *f;
    for (size_t i = 0; i < rows; i++) f[i][to] = f[i][from];
}

void kiln__ik_two_bone_batch(kiln__rig *r, const kiln_blob_ik_handle *const *hs, const uint32_t (*chains)[3],
                             uint32_t n, kiln__ik3_batch_fn fn, kiln__ik3_batch *b)
{
    for (uint32_t l = 0; l < n; l++) kiln__ik3_gather(r, hs[l], chains[l], b, l);
    /* the kernel reads whole vectors: the lanes past n repeat lane 0 */
    for (uint32_t l = n; l < KILN__IK3_LANES; l++) kiln__ik3_copy_lane(b, 0, l);
    fn(b, n);
    kiln_rig_report *rep = r->report;
    for (uint32_t l = 0; l < n; l++) {
        const kiln_blob_ik_handle *h = hs[l];
        const uint32_t *chain = chains[l];
        if (b->redo[l] != 0.0f) {
            /* a fallback case: the scalar solve, on the state this lane was gathered from
             * (no other handle of the batch moved what it reads) */
            memcpy(r->chain, chain, 3 * sizeof *chain);
            kiln__ik_two_bone_solve(r, h, 1.0);
            continue;
        }
        int use_target = (h->flags & KILN_IK_USE_TARGET_ROTATION) != 0;
        for (int i = 0; i < 3; i++) {
            kiln_soa_xform *x = &r->local[chain[i] / KILN_SOA_WIDTH];
            unsigned s = chain[i] % KILN_SOA_WIDTH;
            if (i < 2 + use_target)
                x->qx[s] = b->q[i][0][l], x->qy[s] = b->q[i][1][l], x->qz[s] = b->q[i][2][l], x->qw[s] = b->q[i][3][l];
            r->stamp[chain[i]] = r->epoch;
        }
        /* the reach, as kiln__ik_two_bone_solve classifies it (the kernel's lengths are its) */
        float l1 = b->len[0][l], l2 = b->len[1][l], dg = b->len[2][l], total = l1 + l2;
        double slack = 1e-9 * total, longest = l1 > l2 ? l1 : l2;
        int reachable = dg <= total + slack && dg >= 2.0 * longest - total - slack;
        kiln__rig_update_below(r, chain);
        rep->ik_solved++;
        if (!reachable) {
            rep->ik_unreachable++;
        } else {
            const float *e = r->model + (size_t)chain[2] * 16u, g[3] = {b->g[0][l], b->g[1][l], b->g[2][l]};
            float err = sqrtf((e[12] - g[0]) * (e[12] - g[0]) + (e[13] - g[1]) * (e[13] - g[1]) +
                              (e[14] - g[2]) * (e[14] - g[2]));
            if (err > rep->ik_max_error_m) rep->ik_max_error_m = err;
        }
    }
}
