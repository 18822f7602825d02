/* runtime/rig_constraint_step.h - one constraint step (kiln__constraint_point, _orient and
 * _scale of rig_internal.h) as a template, compiled once for the x86-64 baseline
 * (rig_constraint.c) and once for AVX2 (rig_constraint_avx2.c, their _avx2 copies): the same
 * operations, which
 * the VEX encoding runs with fewer register copies, so the same bits (products are never fused:
 * the AVX2 file's target has no FMA). The arithmetic is described at the top of
 * rig_constraint.c: an orient's desired rotation from one Shepperd step on Rp^T · Rt
 * (kiln__orient_want), a point through the frame's cached inverse 3x3, a leaf point owner's
 * translation column alone. Each kind of constraint has its own step function
 * (kiln__constraint_point, _orient, _scale: the kernel table's constraint_step, by kind).
 * Private.
 *
 * Include after rig_math_f32.h, rig_internal.h and pose_bone_model.h with KILN__CN(name) (a
 * function's name in this variant) and KILN__CN_FN / KILN__CN_ENTRY (the declaration
 * specifiers of the static helpers and of the entry point) defined; with KILN__CN_LANES (and
 * KILN__CN_LANES_MIN) defined, kiln__constraint_targets hands groups of early orients to the
 * variant's KILN__CN(kiln__orient_lanes), declared before the include.
 */

/* XYZ Euler angles (R = Rz(c) · Ry(b) · Rx(a)) of a unit quaternion, each as the (cos, sin)
 * pair atan2 would take (any positive multiple): R20 = -sin b, R21 = cos b sin a,
 * R22 = cos b cos a, R10 = cos b sin c, R00 = cos b cos c; at cos b = 0 only a - c (or a + c)
 * is defined, and c = 0 is chosen: then R11 = cos a, R12 = -sin a (kiln__qto_euler_xyz, which
 * returns the atan2 of these pairs). */
KILN__CN_FN void KILN__CN(kiln__qto_euler_cs_f)(const versor q, float cs[3][2])
{
    float x = q[0], y = q[1], z = q[2], w = q[3];
    float r00 = 1.0f - 2.0f * (y * y + z * z), r10 = 2.0f * (x * y + w * z), r20 = 2.0f * (x * z - w * y);
    float cb = sqrtf(r00 * r00 + r10 * r10);
    cs[1][0] = cb, cs[1][1] = -r20;
    if (cb > 1e-6f) {
        cs[0][0] = 1.0f - 2.0f * (x * x + y * y), cs[0][1] = 2.0f * (y * z + w * x);
        cs[2][0] = r00, cs[2][1] = r10;
    } else {
        cs[0][0] = 1.0f - 2.0f * (x * x + z * z), cs[0][1] = -2.0f * (y * z - w * x);
        cs[2][0] = 1.0f, cs[2][1] = 0.0f;
    }
}

/* (sin, cos) of half the angle atan2(s, c), or of that angle plus 2 pi (the same rotation up to
 * the quaternion's sign), times a positive factor, without cancellation: (s, h + c) or
 * (h - c, s), h = |(c, s)|; (0, 0) gives the zero angle (as atan2 does). Left unnormalised: the
 * quaternion built from three of them is normalised once (kiln__qfrom_euler_cs_f). */
KILN__CN_FN void KILN__CN(kiln__half_angle_f)(const float cs[2], float *sh, float *ch)
{
    float c = cs[0], s = cs[1], h = sqrtf(c * c + s * s), a, b;
    if (c >= 0.0f) a = s, b = h + c;
    else a = h - c, b = s;
    if (!(a * a + b * b > 0.0f)) {
        *sh = 0.0f, *ch = 1.0f;
        return;
    }
    *sh = a, *ch = b;
}

/* The unit quaternion of XYZ Euler angles given as (cos, sin) pairs (kiln__qfrom_euler_xyz): the
 * product of the three unnormalised half-angle rotations, normalised. */
KILN__CN_FN void KILN__CN(kiln__qfrom_euler_cs_f)(const float cs[3][2], versor q)
{
    float sa, ca, sb, cb, sc, cc;
    KILN__CN(kiln__half_angle_f)(cs[0], &sa, &ca);
    KILN__CN(kiln__half_angle_f)(cs[1], &sb, &cb);
    KILN__CN(kiln__half_angle_f)(cs[2], &sc, &cc);
    /* Rz ⊗ Ry ⊗ Rx multiplied out */
    q[0] = cc * cb * sa - sc * sb * ca;
    q[1] = cc * sb * ca + sc * cb * sa;
    q[2] = sc * cb * ca - cc * sb * sa;
    q[3] = cc * cb * ca + sc * sb * sa;
    kiln__qnorm_f(q);
}

/* The owner's parent frame as the cache holds it for parent bone p (>= 0), refreshed when the
 * parent matrix changed since it was read (its stamp reached the epoch of the reading); a root
 * owner has none (its frame is the root matrix, read each time). */
KILN__CN_FN kiln__rig_frame_cache *KILN__CN(kiln__frame_of)(kiln__rig *r, int32_t p)
{
    if (p < 0) return NULL;
    kiln__rig_frame_cache *f = &r->frame;
    if (f->bone != (uint32_t)p || r->stamp[p] >= f->epoch) {
        f->bone = (uint32_t)p, f->epoch = r->epoch;
        f->has_rows = f->has_inv = 0;
    }
    return f;
}

/* The inverse of the owner's frame matrix pm for a point constraint: kiln__affine_solve's
 * (contract/math_f64.h) cofactors, determinant and singularity test, its terms named as there,
 * then the cofactors times the determinant's reciprocal (one division per frame, not three per
 * point). Out of line: once per frame, and its locals would have the step realign its stack. */
#if defined(__GNUC__) && !defined(__clang__)
/* GCC's straight-line vectorisation packs the nine conversions into double vectors through
 * shuffles that cost more than the conversions (the same operations either way) */
__attribute__((noinline, optimize("no-tree-slp-vectorize")))
#elif defined(__clang__)
__attribute__((noinline))
#endif
KILN__CN_FN void KILN__CN(kiln__frame_inverse)(const float *pm, kiln__frame_inv *inv)
{
    double a = pm[0], b = pm[4], c = pm[8], d = pm[1], e = pm[5], f = pm[9], g = pm[2], h = pm[6], i = pm[10];
    double k[9];
    k[0] = e * i - f * h, k[1] = c * h - b * i, k[2] = b * f - c * e;
    k[3] = f * g - d * i, k[4] = a * i - c * g, k[5] = c * d - a * f;
    k[6] = d * h - e * g, k[7] = b * g - a * h, k[8] = a * e - b * d;
    double det = a * k[0] + b * k[3] + c * k[6];
    double scale = fabs(a) + fabs(b) + fabs(c) + fabs(d) + fabs(e) + fabs(f) + fabs(g) + fabs(h) + fabs(i);
    inv->ok = fabs(det) > 1e-12 * scale * scale * scale && isfinite(det);
    double rd = 1.0 / det;
    for (int n = 0; n < 9; n++) inv->m[n] = k[n] * rd;
    inv->t[0] = pm[12], inv->t[1] = pm[13], inv->t[2] = pm[14];
}

/* Orient: q_des = conj(R(parent frame)) ⊗ R(target) ⊗ offset, normalised, as the rotation of the
 * one 3x3 Rp^T · Rt (kiln__f4_qrel) times the offset. pm: the owner's frame matrix. */
KILN__CN_FN kiln__f4 KILN__CN(kiln__orient_want)(kiln__rig *r, const kiln_blob_constraint *c,
                                                 const kiln__constraint_plan *pl, const float *pm)
{
    float own[12], tc[12];
    const float *rows = own;
    kiln__rig_frame_cache *f = KILN__CN(kiln__frame_of)(r, pl->parent);
    if (f && f->has_rows) {
        rows = f->rows;
    } else {
        float pc[12];
        kiln__f4_rot_cols(pm, pc);
        if (f) kiln__f4_rows_of(pc, f->rows), f->has_rows = 1, rows = f->rows;
        else kiln__f4_rows_of(pc, own);
    }
    kiln__f4_rot_cols(r->model + (size_t)c->target * 16u, tc);
    return kiln__f4_qnorm(kiln__f4_qmul(kiln__f4_qrel(rows, tc), kiln__f4_ld(pl->off)));
}

/* The skipped XYZ Euler angles of want (unit) replaced by those of the FK rotation fk (unit). */
KILN__CN_FN void KILN__CN(kiln__orient_skip)(uint32_t skip, const versor fk, versor want)
{
    float ef[3][2], ed[3][2];
    KILN__CN(kiln__qto_euler_cs_f)(fk, ef);
    KILN__CN(kiln__qto_euler_cs_f)(want, ed);
    for (int k = 0; k < 3; k++)
        if (skip & (1u << k)) ed[k][0] = ef[k][0], ed[k][1] = ef[k][1];
    KILN__CN(kiln__qfrom_euler_cs_f)(ed, want);
}

/* The desired rotation of early orient constraint i into r->tq[i]. */
KILN__CN_FN void KILN__CN(kiln__orient_early)(kiln__rig *r, const kiln_blob_constraint *c, const kiln__constraint_plan *p,
                                             uint32_t i)
{
    kiln__f4_st(r->tq[i], KILN__CN(kiln__orient_want)(r, &c[i], &p[i], kiln__constraint_frame(r, &p[i])));
}

KILN__CN_ENTRY void KILN__CN(kiln__constraint_targets)(kiln__rig *r, const kiln_blob_constraint *c,
                                                       const kiln__constraint_plan *p, const uint32_t *idx, uint32_t n)
{
#ifdef KILN__CN_LANES
    /* KILN__CN_LANES at a time in lanes (kiln__orient_lanes of the variant); a last group of
     * fewer than KILN__CN_LANES_MIN one at a time (the lanes' fixed cost exceeds theirs) */
    uint32_t m = 0;
    for (; n - m >= KILN__CN_LANES; m += KILN__CN_LANES) KILN__CN(kiln__orient_lanes)(r, c, p, idx + m, KILN__CN_LANES);
    if (n - m >= KILN__CN_LANES_MIN) {
        KILN__CN(kiln__orient_lanes)(r, c, p, idx + m, n - m);
        return;
    }
#else
    uint32_t m = 0;
#endif
    for (; m < n; m++) KILN__CN(kiln__orient_early)(r, c, p, idx[m]);
}

/* The end of every step: the owner's matrix (and its subtree's) from its new local. moved: a
 * point constraint wrote its translation only. */
KILN__BONE_MODEL_INLINE void KILN__CN(kiln__constraint_done)(kiln__rig *r, uint32_t b, const kiln_soa_xform *x,
                                                             unsigned l, const float *pm, int moved)
{
    r->stamp[b] = r->epoch;
    if (r->last[b] == b) {
        /* a leaf, as most owners are: kiln__rig_update's first case without the call */
        float *m = r->model + (size_t)b * 16u;
        if (moved) {
            /* a point constraint changed the translation only: the linear columns, composed from
             * the rotation and scale it kept and the frame, which has not changed since they were
             * (a changed frame recomposes its subtree), stay; the translation column as
             * kiln__bone_to_model sums it (P0 tx + P1 ty) + P2 tz + P3 */
            float t0 = x->tx[l], t1 = x->ty[l], t2 = x->tz[l];
            kiln__f4 v = kiln__f4_scale(kiln__f4_ld(pm), t0);
            v = kiln__f4_muladds(v, kiln__f4_ld(pm + 4), t1);
            v = kiln__f4_muladds(v, kiln__f4_ld(pm + 8), t2);
            kiln__f4_st(m + 12, kiln__f4_add(v, kiln__f4_ld(pm + 12)));
        } else {
            kiln__bone_to_model_cols(r->local, r->bones, b, pm, m, 0);
        }
        r->epoch++;
    } else {
        r->moved = moved;
        kiln__rig_update(r, b);
    }
    r->report->constraints_applied++;
}

/* fk + weight (want - fk) in double, into the float fk, unless the axis is skipped */
#define KILN__CN_BLEND(flags, k, fk, want, weight)                                                  \
    do {                                                                                            \
        if (!((flags) & (1u << (k)))) (fk) = (float)((fk) + (weight) * ((want) - (fk)));           \
    } while (0)

/* The three kinds of step, each on its own (the kernel table's constraint_step, by kind): the
 * smaller functions save and restore fewer registers than one that holds all three. */
KILN__CN_ENTRY void KILN__CN(kiln__constraint_orient)(kiln__rig *r, const kiln_blob_constraint *c,
                                                     const kiln__constraint_plan *pl, const float *tr, double weight)
{
    kiln_soa_xform *x = &r->local[c->bone / KILN_SOA_WIDTH];
    unsigned l = c->bone % KILN_SOA_WIDTH;
    float w = (float)weight;
    const float *pm = kiln__constraint_frame(r, pl);
    versor q = {x->qx[l], x->qy[l], x->qz[l], x->qw[l]}, want;
    kiln__f4_st(want, tr ? kiln__f4_ld(tr) : KILN__CN(kiln__orient_want)(r, c, pl, pm));
    uint32_t skip = c->flags & (KILN_CONSTRAINT_SKIP_X | KILN_CONSTRAINT_SKIP_Y | KILN_CONSTRAINT_SKIP_Z);
    if (skip || w < 1.0f) {
        kiln__qnorm_f(q);
        if (skip) KILN__CN(kiln__orient_skip)(skip, q, want);
    }
    if (w < 1.0f) {
        kiln__qslerp_f(q, want, w, q);
    } else {
        /* slerp at 1: the target on the FK rotation's side of the sphere (the FK rotation's
         * sign is its normalised one's; a degenerate one stands for the identity) */
        float n2 = glm_vec4_norm2(q), d = n2 > KILN__RIG_EPS2_F && isfinite(n2) ? glm_vec4_dot(q, want) : want[3];
        glm_vec4_scale(want, d < 0.0f ? -1.0f : 1.0f, q);
    }
    x->qx[l] = q[0], x->qy[l] = q[1], x->qz[l] = q[2], x->qw[l] = q[3];
    KILN__CN(kiln__constraint_done)(r, c->bone, x, l, pm, 0);
}

KILN__CN_ENTRY void KILN__CN(kiln__constraint_point)(kiln__rig *r, const kiln_blob_constraint *c,
                                                    const kiln__constraint_plan *pl, const float *tr, double weight)
{
    (void)tr;
    kiln_soa_xform *x = &r->local[c->bone / KILN_SOA_WIDTH];
    unsigned l = c->bone % KILN_SOA_WIDTH;
    const float *pm = kiln__constraint_frame(r, pl);
    /* the target's position in the owner's parent space: the local translation that puts the
     * owner there, whatever the parent's scale and the owner's SSC (translation is composed
     * before either) */
    const float *tm = r->model + (size_t)c->target * 16u;
    double p[3] = {tm[12], tm[13], tm[14]};
    kiln__rig_frame_cache *f = KILN__CN(kiln__frame_of)(r, pl->parent);
    kiln__frame_inv own;
    const kiln__frame_inv *inv = &own;
    if (!f) {
        KILN__CN(kiln__frame_inverse)(pm, &own);
    } else {
        if (!f->has_inv) KILN__CN(kiln__frame_inverse)(pm, &f->inv), f->has_inv = 1;
        inv = &f->inv;
    }
    if (!inv->ok) {
        r->report->constraints_skipped++;
        return;
    }
    const double *im = inv->m, v[3] = {p[0] - inv->t[0], p[1] - inv->t[1], p[2] - inv->t[2]};
    double want[3];
    for (int k = 0; k < 3; k++) want[k] = im[k * 3] * v[0] + im[k * 3 + 1] * v[1] + im[k * 3 + 2] * v[2];
    for (int k = 0; k < 3; k++) want[k] += c->offset[k];
    uint32_t flags = c->flags;
    KILN__CN_BLEND(flags, 0, x->tx[l], want[0], weight);
    KILN__CN_BLEND(flags, 1, x->ty[l], want[1], weight);
    KILN__CN_BLEND(flags, 2, x->tz[l], want[2], weight);
    KILN__CN(kiln__constraint_done)(r, c->bone, x, l, pm, 1);
}

KILN__CN_ENTRY void KILN__CN(kiln__constraint_scale)(kiln__rig *r, const kiln_blob_constraint *c,
                                                    const kiln__constraint_plan *pl, const float *tr, double weight)
{
    (void)tr;
    kiln_soa_xform *x = &r->local[c->bone / KILN_SOA_WIDTH];
    unsigned l = c->bone % KILN_SOA_WIDTH;
    const float *pm = kiln__constraint_frame(r, pl);
    const kiln_soa_xform *tx = &r->local[c->target / KILN_SOA_WIDTH];
    unsigned tl = c->target % KILN_SOA_WIDTH;
    double want[3] = {(double)tx->sx[tl] * c->offset[0], (double)tx->sy[tl] * c->offset[1],
                      (double)tx->sz[tl] * c->offset[2]};
    uint32_t flags = c->flags;
    KILN__CN_BLEND(flags, 0, x->sx[l], want[0], weight);
    KILN__CN_BLEND(flags, 1, x->sy[l], want[1], weight);
    KILN__CN_BLEND(flags, 2, x->sz[l], want[2], weight);
    KILN__CN(kiln__constraint_done)(r, c->bone, x, l, pm, 0);
}

#undef KILN__CN_BLEND
