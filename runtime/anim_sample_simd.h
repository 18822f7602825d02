/* runtime/anim_sample_simd.h - the sampling kernels, written once in the simd_ops.h
 * vocabulary and compiled per path (anim_sample_sse2.c, anim_sample_avx2.c).
 *
 * Private template: include after simd_ops.h and after defining
 *   KILN__FN kvi kiln__unpack_half(const unsigned char *src, uint32_t width, unsigned h);
 * which widens lanes [h·KV_W, (h + 1)·KV_W) of one quantised track to 32-bit integers.
 *
 * Per clip block: read rows i and i+1 (raw rows in place; quantised blocks from the context
 * cache in forward playback, or decoded straight into registers, with a dispatch-free path
 * for packed blocks), interpolate (lerp T and S, shortest-arc corrected nlerp R), then compose
 * the key k against the rest pose and the pose underneath with the binding's per-lane
 * coefficients. kiln__sample_blocks runs the two lossy cases (cached rows, packed rows in
 * place) in lean loops of their own and every other kind of block in the general loop; in
 * the first, a row i+1 the context does not hold yet (job->fill1) is decoded into it there.
 * Absolute blocks store each component as soon as it is ready. Everything stays in registers (kv_xf) between the loads and the stores; all
 * loads of a block's rest/base lanes happen before its stores, so `out` may alias `base`.
 *
 * Own layout, not cglm's: a register holds one component (tx, qx, ...) of KV_W joints, as the
 * clip rows and kiln_soa_xform store them, so the dot products, quaternion products and
 * normalisations are plain lane-wise arithmetic on KV_W joints at once. cglm's versor and vec4
 * hold one joint per register: its glm_quat_mul and glm_vec4_dot would need a transpose of
 * every block in and out and horizontal adds and shuffles inside (the scalar reference in
 * anim_sample_scalar.c uses them one lane at a time).
 */

/* The quaternion chain in shorter dependent steps (Estrin's polynomial, tree-summed dot
 * products) where multiply-adds are fused: without FMA (SSE2) the extra operations cost more
 * than the shorter chain saves (measured), so that path keeps Horner's and sequential sums. */
#if defined(KILN__OPS_SSE2)
#define KILN__SHORT_CHAINS 0
#else
#define KILN__SHORT_CHAINS 1
#endif

/* Lanes [o, o + KV_W) of component c of one row: a constant, raw lanes, or a quantised track
 * decoded as range_min + (range_extent · inv) · q, the register form of kiln__clip_dequant
 * (contract/clip_codec.h). The decode is unfused on purpose: decoded rows are bit-identical on
 * every path and to the values the baker measured (the scalar decode rounds the product),
 * which keeps the ill-conditioned qw rebuild from amplifying a last-bit difference. */
KILN__FN kv KILN__SFX(kiln__fetch)(const kiln_anim_binding *b, const kiln__clip_block *cb, const kiln_soa_xform *cst,
                                   unsigned c, unsigned h, const unsigned char *row)
{
    unsigned o = h * KV_W;
    switch (cb->kind[c]) {
    case KILN__SRC_CONST: return kv_ld(kiln__soa_comp(cst, c) + o);
    case KILN__SRC_RAW: return kv_ld((const float *)(const void *)(row + cb->offset[c]) + o);
    default: {
        if (!cb->width[c]) return kv_set1(1.0f); /* the rebuilt qw: see kiln__rebuild_qw */
        const kiln_blob_anim_track *tr = &b->tracks[cb->track[c]];
        kv scale = kv_mul(kv_ld(tr->range_extent + o), kv_set1(kiln__clip_quant_inv(cb->width[c])));
        return kv_add(kv_mul(scale, kv_cvt_u(kiln__unpack_half(row + cb->offset[c], cb->width[c], h))),
                      kv_ld(tr->range_min + o));
    }
    }
}

/* qw = sqrt(max(0, 1 - qx² - qy² - qz²)), unfused like kiln__clip_rebuild_qw. */
KILN__FN kv KILN__SFX(kiln__rebuild_qw)(kv x, kv y, kv z)
{
    kv w2 = kv_sub(kv_sub(kv_sub(kv_set1(1.0f), kv_mul(x, x)), kv_mul(y, y)), kv_mul(z, z));
    return kv_sqrt(kv_max(w2, kv_zero()));
}

/* Lane group h of one row of a quantised block, every component. */
KILN__FN kv_xf KILN__SFX(kiln__fetch_xf)(const kiln_anim_binding *b, const kiln__clip_block *cb,
                                         const kiln_soa_xform *cst, unsigned h, const unsigned char *row)
{
    kv_xf r;
    r.tx = KILN__SFX(kiln__fetch)(b, cb, cst, KILN__TX, h, row);
    r.ty = KILN__SFX(kiln__fetch)(b, cb, cst, KILN__TY, h, row);
    r.tz = KILN__SFX(kiln__fetch)(b, cb, cst, KILN__TZ, h, row);
    r.q.x = KILN__SFX(kiln__fetch)(b, cb, cst, KILN__QX, h, row);
    r.q.y = KILN__SFX(kiln__fetch)(b, cb, cst, KILN__QY, h, row);
    r.q.z = KILN__SFX(kiln__fetch)(b, cb, cst, KILN__QZ, h, row);
    r.q.w = (cb->flags & KILN__BLK_QW) ? KILN__SFX(kiln__rebuild_qw)(r.q.x, r.q.y, r.q.z)
                                       : KILN__SFX(kiln__fetch)(b, cb, cst, KILN__QW, h, row);
    r.sx = KILN__SFX(kiln__fetch)(b, cb, cst, KILN__SX, h, row);
    r.sy = KILN__SFX(kiln__fetch)(b, cb, cst, KILN__SY, h, row);
    r.sz = KILN__SFX(kiln__fetch)(b, cb, cst, KILN__SZ, h, row);
    return r;
}

/* Lane group h of a w-bit track: kiln__unpack_narrow where the path has one and the block's
 * widths allow it (`narrow`, a constant after inlining), else kiln__unpack_half. */
KILN__FN kvi KILN__SFX(kiln__unpack_w)(const unsigned char *src, unsigned w, unsigned h, int narrow)
{
#if defined(KILN__UNPACK_NARROW)
    if (narrow) return kiln__unpack_narrow(src, w);
#else
    (void)narrow;
#endif
    return kiln__unpack_half(src, w, h);
}

/* One stored component of a packed block (KILN__BLK_PACKED: the 9 stored components back to
 * back at their own widths, their tracks consecutive, their scales precomputed at bind time). */
KILN__FN kv KILN__SFX(kiln__fetch_p)(const float *scale, const float *min, unsigned w, unsigned h,
                                     const unsigned char *src, int narrow)
{
    unsigned o = h * KV_W;
    return kv_add(kv_mul(kv_ld(scale + o), kv_cvt_u(KILN__SFX(kiln__unpack_w)(src, w, h, narrow))), kv_ld(min + o));
}

/* Both rows of a quantised block, lane group h (packed blocks go through kiln__interp_packed). */
KILN__FN void KILN__SFX(kiln__fetch_rows)(const kiln_anim_binding *b, const kiln__clip_block *cb,
                                          const kiln_soa_xform *cst, unsigned h, const unsigned char *row0,
                                          const unsigned char *row1, kv_xf *a, kv_xf *bb)
{
    *a = KILN__SFX(kiln__fetch_xf)(b, cb, cst, h, row0);
    *bb = KILN__SFX(kiln__fetch_xf)(b, cb, cst, h, row1);
}

/* The stored components of a KILN__BLK_PACKED block in one row (s0) or two (s0, s1): their
 * widths, tracks, precomputed steps and row offsets (the binding's offset[] of each component:
 * one load per component, not a running sum of the widths before it). */
typedef struct KILN__SFX(kiln__packed_cursor) {
    const kiln_blob_anim_track *tr;
    const float *scale;
    const uint8_t *w;
    const uint32_t *at;
    const unsigned char *s0, *s1;
    unsigned h;
} KILN__SFX(kiln__packed_cursor);

/* Where stored component q (qw is not stored: 6 and up are sx, sy, sz) starts in a row. */
KILN__FN uint32_t KILN__SFX(kiln__packed_off)(const KILN__SFX(kiln__packed_cursor) *c, unsigned q)
{
    return c->at[q < KILN__QW ? q : q + 1u];
}

/* The binding's arrays the packed decoders read, copied out of it once per kernel call: the
 * kernels' vector stores may alias the binding as far as the compiler knows, so read through
 * the binding these pointers would be reloaded for every block. */
typedef struct KILN__SFX(kiln__packed_view) {
    const kiln__clip_block *blocks;
    const kiln_blob_anim_track *tracks;
    const float *scale;
} KILN__SFX(kiln__packed_view);

KILN__FN KILN__SFX(kiln__packed_view) KILN__SFX(kiln__packed_view_of)(const kiln_anim_binding *b)
{
    KILN__SFX(kiln__packed_view) v = {b->blocks, b->tracks, b->packed_scale};
    return v;
}

KILN__FN KILN__SFX(kiln__packed_cursor) KILN__SFX(kiln__packed_at)(const KILN__SFX(kiln__packed_view) *v, uint32_t blk,
                                                                     unsigned h, const unsigned char *row0,
                                                                     const unsigned char *row1)
{
    const kiln__clip_block *cb = &v->blocks[blk];
    KILN__SFX(kiln__packed_cursor) c = {&v->tracks[cb->track[0]], v->scale + (size_t)blk * (KILN_ANIM_COMPONENTS - 1) * KILN__LANES,
                                        cb->packed_width, cb->offset, row0, row1, h};
    return c;
}

/* Stored component q of row 0 alone (decoding one row). */
KILN__FN kv KILN__SFX(kiln__packed_one)(KILN__SFX(kiln__packed_cursor) *c, unsigned q, int narrow)
{
    return KILN__SFX(kiln__fetch_p)(c->scale + q * KILN__LANES, c->tr[q].range_min, c->w[q], c->h,
                                    c->s0 + KILN__SFX(kiln__packed_off)(c, q), narrow);
}

/* Lane group h of one row of packed block blk decoded into d, each component stored as soon
 * as it is decoded (qx, qy, qz stay for the rebuilt qw). */
KILN__FN void KILN__SFX(kiln__decode_packed)(const KILN__SFX(kiln__packed_view) *pv, uint32_t blk, unsigned h,
                                             const unsigned char *row, kiln_soa_xform *d, int narrow)
{
    KILN__SFX(kiln__packed_cursor) c = KILN__SFX(kiln__packed_at)(pv, blk, h, row, row);
    unsigned o = h * KV_W;
    kv_st(d->tx + o, KILN__SFX(kiln__packed_one)(&c, 0, narrow));
    kv_st(d->ty + o, KILN__SFX(kiln__packed_one)(&c, 1, narrow));
    kv_st(d->tz + o, KILN__SFX(kiln__packed_one)(&c, 2, narrow));
    kv qx = KILN__SFX(kiln__packed_one)(&c, 3, narrow), qy = KILN__SFX(kiln__packed_one)(&c, 4, narrow);
    kv qz = KILN__SFX(kiln__packed_one)(&c, 5, narrow);
    kv_st(d->qx + o, qx), kv_st(d->qy + o, qy), kv_st(d->qz + o, qz);
    kv_st(d->qw + o, KILN__SFX(kiln__rebuild_qw)(qx, qy, qz));
    kv_st(d->sx + o, KILN__SFX(kiln__packed_one)(&c, 6, narrow));
    kv_st(d->sy + o, KILN__SFX(kiln__packed_one)(&c, 7, narrow));
    kv_st(d->sz + o, KILN__SFX(kiln__packed_one)(&c, 8, narrow));
}

KILN__KERNEL void KILN__SFX(kiln__decode_block)(const kiln_anim_binding *b, uint32_t block, const unsigned char *row0,
                                                const unsigned char *row1, kiln_soa_xform *d0, kiln_soa_xform *d1)
{
    const KILN__SFX(kiln__packed_view) pv = KILN__SFX(kiln__packed_view_of)(b);
    const kiln__clip_block *cb = &b->blocks[block];
    const kiln_soa_xform *cst = (const kiln_soa_xform *)(const void *)b->constants + block;
    if (cb->flags & KILN__BLK_PACKED) {
        for (unsigned h = 0; h < KV_PER_BLOCK; h++) {
            if (cb->flags & KILN__BLK_NARROW) KILN__SFX(kiln__decode_packed)(&pv, block, h, row0, d0, 1);
            else KILN__SFX(kiln__decode_packed)(&pv, block, h, row0, d0, 0);
            if (d1 && (cb->flags & KILN__BLK_NARROW)) KILN__SFX(kiln__decode_packed)(&pv, block, h, row1, d1, 1);
            else if (d1) KILN__SFX(kiln__decode_packed)(&pv, block, h, row1, d1, 0);
        }
        return;
    }
    for (unsigned h = 0; h < KV_PER_BLOCK; h++) {
        kv_xf_store(d0, h * KV_W, KILN__SFX(kiln__fetch_xf)(b, cb, cst, h, row0));
        if (d1) kv_xf_store(d1, h * KV_W, KILN__SFX(kiln__fetch_xf)(b, cb, cst, h, row1));
    }
}

/* The corrected nlerp parameter t' = u + x·(q0 + x·(q1 + ...)) (KILN__SLERP_DEG == 6), x
 * clamped to [0, 1] as in kv_slerp_t: lossless rows may hold keys far from unit length. */
KILN__FN kv KILN__SFX(kiln__slerp_param)(kv x, kv u, const kv *sq)
{
    x = kv_max(x, kv_zero());
#if KILN__SHORT_CHAINS
    /* Estrin's scheme (pairs, then x² and x⁴), not Horner's: the same polynomial in a chain of
     * 3 dependent operations instead of 6. The quaternion path is one long dependency chain per
     * block (decode, qw, dot, t', lerp, normalise), and its latency is what the sampler waits on. */
    kv x2 = kv_mul(x, x), x4 = kv_mul(x2, x2);
    kv p01 = kv_fma(x, sq[1], sq[0]), p23 = kv_fma(x, sq[3], sq[2]), p45 = kv_fma(x, sq[5], sq[4]);
    kv poly = kv_fma(x4, p45, kv_fma(x2, p23, p01));
#else
    kv poly = kv_fma(x, kv_fma(x, kv_fma(x, kv_fma(x, kv_fma(x, sq[5], sq[4]), sq[3]), sq[2]), sq[1]), sq[0]);
#endif
    return kv_fma(x, poly, u);
}

/* Shortest-arc corrected nlerp of two lane groups of quaternions. */
#if KILN__SHORT_CHAINS
/* a·b summed as a tree, (xx + yy) + (zz + ww): 3 dependent operations instead of 4. */
KILN__FN kv KILN__SFX(kiln__qdot_tree)(kv_quat a, kv_quat b)
{
    return kv_add(kv_fma(a.x, b.x, kv_mul(a.y, b.y)), kv_fma(a.z, b.z, kv_mul(a.w, b.w)));
}

/* a / |a| as kv_qnormalize, with the squared length summed as a tree. */
KILN__FN kv_quat KILN__SFX(kiln__qnormalize_tree)(kv_quat a)
{
    kv len2 = KILN__SFX(kiln__qdot_tree)(a, a);
    if (KILN__UNLIKELY(kv_any(kv_gt(len2, kv_set1(FLT_MAX))))) return kv_qnormalize(a); /* non-unit data only */
    return kv_qscale(a, kv_rsqrt(kv_max(len2, kv_set1(FLT_MIN))));
}
#else
KILN__FN kv KILN__SFX(kiln__qdot_tree)(kv_quat a, kv_quat b) { return kv_qdot(a, b); }
KILN__FN kv_quat KILN__SFX(kiln__qnormalize_tree)(kv_quat a) { return kv_qnormalize(a); }
#endif

KILN__FN kv_quat KILN__SFX(kiln__qinterp)(kv_quat a, kv_quat b, kv u, const kv *sq)
{
    kv d = KILN__SFX(kiln__qdot_tree)(a, b);
    kv s = kv_neg_mask(d); /* flip b when a·b < 0 */
    b.x = kv_xor(b.x, s), b.y = kv_xor(b.y, s), b.z = kv_xor(b.z, s), b.w = kv_xor(b.w, s);
    kv t = KILN__SFX(kiln__slerp_param)(kv_sub(kv_set1(1.0f), kv_xor(d, s)), u, sq);
    kv_quat r = {kv_fma(t, kv_sub(b.x, a.x), a.x), kv_fma(t, kv_sub(b.y, a.y), a.y), kv_fma(t, kv_sub(b.z, a.z), a.z),
                 kv_fma(t, kv_sub(b.w, a.w), a.w)};
    return KILN__SFX(kiln__qnormalize_tree)(r);
}

/* Stored component q of both rows. */
KILN__FN void KILN__SFX(kiln__packed_pair)(KILN__SFX(kiln__packed_cursor) *c, unsigned q, int narrow, kv *a, kv *bq)
{
    unsigned w = c->w[q];
    uint32_t off = KILN__SFX(kiln__packed_off)(c, q);
    *a = KILN__SFX(kiln__fetch_p)(c->scale + q * KILN__LANES, c->tr[q].range_min, w, c->h, c->s0 + off, narrow);
    *bq = KILN__SFX(kiln__fetch_p)(c->scale + q * KILN__LANES, c->tr[q].range_min, w, c->h, c->s1 + off, narrow);
}

KILN__FN kv KILN__SFX(kiln__packed_lerp)(KILN__SFX(kiln__packed_cursor) *c, unsigned q, kv u, int narrow)
{
    kv a, bq;
    KILN__SFX(kiln__packed_pair)(c, q, narrow, &a, &bq);
    return kv_fma(u, kv_sub(bq, a), a);
}

/* The rotation keys of both rows (stored components 3 to 5, qw rebuilt). */
KILN__FN void KILN__SFX(kiln__packed_rot_keys)(KILN__SFX(kiln__packed_cursor) *c, int narrow, kv_quat *qa, kv_quat *qb)
{
    KILN__SFX(kiln__packed_pair)(c, 3, narrow, &qa->x, &qb->x);
    KILN__SFX(kiln__packed_pair)(c, 4, narrow, &qa->y, &qb->y);
    KILN__SFX(kiln__packed_pair)(c, 5, narrow, &qa->z, &qb->z);
    qa->w = KILN__SFX(kiln__rebuild_qw)(qa->x, qa->y, qa->z);
    qb->w = KILN__SFX(kiln__rebuild_qw)(qb->x, qb->y, qb->z);
}

/* The rotation of both rows, interpolated. */
KILN__FN kv_quat KILN__SFX(kiln__packed_rot)(KILN__SFX(kiln__packed_cursor) *c, kv u, const kv *sq, int narrow)
{
    kv_quat qa, qb;
    KILN__SFX(kiln__packed_rot_keys)(c, narrow, &qa, &qb);
    return KILN__SFX(kiln__qinterp)(qa, qb, u, sq);
}

/* The key of packed block blk, lane group h, in registers (for composing): each component
 * decoded from both rows and interpolated at once, the same arithmetic as fetch_rows +
 * interp_xf, but with two rows of nine components never live together, so nothing spills. */
KILN__FN kv_xf KILN__SFX(kiln__interp_packed)(const KILN__SFX(kiln__packed_view) *pv, uint32_t blk, unsigned h,
                                              const unsigned char *row0, const unsigned char *row1, kv u, const kv *sq,
                                              int narrow)
{
    KILN__SFX(kiln__packed_cursor) c = KILN__SFX(kiln__packed_at)(pv, blk, h, row0, row1);
    kv_xf k;
    k.tx = KILN__SFX(kiln__packed_lerp)(&c, 0, u, narrow);
    k.ty = KILN__SFX(kiln__packed_lerp)(&c, 1, u, narrow);
    k.tz = KILN__SFX(kiln__packed_lerp)(&c, 2, u, narrow);
    k.q = KILN__SFX(kiln__packed_rot)(&c, u, sq, narrow);
    k.sx = KILN__SFX(kiln__packed_lerp)(&c, 6, u, narrow);
    k.sy = KILN__SFX(kiln__packed_lerp)(&c, 7, u, narrow);
    k.sz = KILN__SFX(kiln__packed_lerp)(&c, 8, u, narrow);
    return k;
}

/* Lane group h of an ABSOLUTE packed block decoded from both rows (for kiln__abs_run): the
 * translation and scale interpolated and stored to out as each component is ready, the
 * rotation keys of both rows decoded into qa and qb. */
KILN__FN void KILN__SFX(kiln__packed_abs_keys)(const KILN__SFX(kiln__packed_view) *pv, uint32_t blk, unsigned h,
                                               const unsigned char *row0, const unsigned char *row1, kv u, int narrow,
                                               kiln_soa_xform *out, kv_quat *qa, kv_quat *qb)
{
    KILN__SFX(kiln__packed_cursor) c = KILN__SFX(kiln__packed_at)(pv, blk, h, row0, row1);
    unsigned o = h * KV_W;
    kv_st(out->tx + o, KILN__SFX(kiln__packed_lerp)(&c, 0, u, narrow));
    kv_st(out->ty + o, KILN__SFX(kiln__packed_lerp)(&c, 1, u, narrow));
    kv_st(out->tz + o, KILN__SFX(kiln__packed_lerp)(&c, 2, u, narrow));
    KILN__SFX(kiln__packed_rot_keys)(&c, narrow, qa, qb);
    kv_st(out->sx + o, KILN__SFX(kiln__packed_lerp)(&c, 6, u, narrow));
    kv_st(out->sy + o, KILN__SFX(kiln__packed_lerp)(&c, 7, u, narrow));
    kv_st(out->sz + o, KILN__SFX(kiln__packed_lerp)(&c, 8, u, narrow));
}

/* Up to this many ABSOLUTE packed blocks at a time in kiln__abs_run and kiln__abs_fill_run. */
#define KILN__ABS_RUN 8u

/* How many blocks from b0 on (at most KILN__ABS_RUN, none from b1 on) have exactly the flags
 * `want` among want | KILN__BLK_EXACT. */
KILN__FN uint32_t KILN__SFX(kiln__run_of)(const KILN__SFX(kiln__packed_view) *pv, uint32_t b0, uint32_t b1, uint32_t want)
{
    uint32_t n = 0;
    while (n < KILN__ABS_RUN && b0 + n < b1 && (pv->blocks[b0 + n].flags & (want | KILN__BLK_EXACT)) == want) n++;
    return n;
}

/* ABSOLUTE packed blocks [b0, b0 + n) (n <= KILN__ABS_RUN) from the rows in place (random
 * access), in two passes: the translations, scales and rotation keys of every block, then
 * every block's rotation. A rotation (dot, t', lerp, normalise) is one dependent chain of some
 * 60 cycles in some 50 instructions; after the decode of a whole block (some 270
 * instructions) the next one started beyond what the core keeps in flight, so the chains ran
 * one after the other. Back to back they overlap. */
KILN__FN void KILN__SFX(kiln__abs_run)(const KILN__SFX(kiln__packed_view) *pv, uint32_t b0, uint32_t n,
                                       const unsigned char *row0, const unsigned char *row1, kv u, const kv *sq,
                                       kiln_soa_xform *out)
{
    kv_quat qa[KILN__ABS_RUN * KV_PER_BLOCK], qb[KILN__ABS_RUN * KV_PER_BLOCK];
    for (uint32_t i = 0; i < n; i++)
        for (unsigned h = 0; h < KV_PER_BLOCK; h++) {
            unsigned g = i * KV_PER_BLOCK + h;
            if (pv->blocks[b0 + i].flags & KILN__BLK_NARROW)
                KILN__SFX(kiln__packed_abs_keys)(pv, b0 + i, h, row0, row1, u, 1, out + i, &qa[g], &qb[g]);
            else
                KILN__SFX(kiln__packed_abs_keys)(pv, b0 + i, h, row0, row1, u, 0, out + i, &qa[g], &qb[g]);
        }
    for (uint32_t i = 0; i < n; i++)
        for (unsigned h = 0; h < KV_PER_BLOCK; h++) {
            unsigned g = i * KV_PER_BLOCK, o = h * KV_W;
            kv_quat r = KILN__SFX(kiln__qinterp)(qa[g + h], qb[g + h], u, sq);
            kv_st(out[i].qx + o, r.x), kv_st(out[i].qy + o, r.y), kv_st(out[i].qz + o, r.z), kv_st(out[i].qw + o, r.w);
        }
}

/* Lanes [o, o + KV_W) of a row whose component c is at p[c]. */
KILN__FN kv_xf KILN__SFX(kiln__load_ptrs)(const float *const *p, unsigned o)
{
    kv_xf r;
    r.tx = kv_ld(p[KILN__TX] + o), r.ty = kv_ld(p[KILN__TY] + o), r.tz = kv_ld(p[KILN__TZ] + o);
    r.q.x = kv_ld(p[KILN__QX] + o), r.q.y = kv_ld(p[KILN__QY] + o), r.q.z = kv_ld(p[KILN__QZ] + o);
    r.q.w = kv_ld(p[KILN__QW] + o);
    r.sx = kv_ld(p[KILN__SX] + o), r.sy = kv_ld(p[KILN__SY] + o), r.sz = kv_ld(p[KILN__SZ] + o);
    return r;
}

/* The key between two rows already in registers. */
KILN__FN kv_xf KILN__SFX(kiln__interp_xf)(kv_xf a, kv_xf b, kv u, const kv *sq, int u_zero)
{
    kv_xf k;
    k.tx = kv_fma(u, kv_sub(b.tx, a.tx), a.tx);
    k.ty = kv_fma(u, kv_sub(b.ty, a.ty), a.ty);
    k.tz = kv_fma(u, kv_sub(b.tz, a.tz), a.tz);
    k.sx = kv_fma(u, kv_sub(b.sx, a.sx), a.sx);
    k.sy = kv_fma(u, kv_sub(b.sy, a.sy), a.sy);
    k.sz = kv_fma(u, kv_sub(b.sz, a.sz), a.sz);
    k.q = u_zero ? a.q : KILN__SFX(kiln__qinterp)(a.q, b.q, u, sq);
    return k;
}

/* interp_xf of two rows in memory for an ABSOLUTE block, each component stored as soon as it
 * is interpolated (the key is not held across the rotation: nothing spills). */
KILN__FN void KILN__SFX(kiln__interp_abs)(const kiln_soa_xform *x0, const kiln_soa_xform *x1, unsigned o, kv u,
                                          const kv *sq, int u_zero, kiln_soa_xform *out)
{
#define KILN__LERP_ST(comp)                                                                               \
    do {                                                                                                  \
        kv a_ = kv_ld(x0->comp + o);                                                                      \
        kv_st(out->comp + o, kv_fma(u, kv_sub(kv_ld(x1->comp + o), a_), a_));                             \
    } while (0)
    KILN__LERP_ST(tx);
    KILN__LERP_ST(ty);
    KILN__LERP_ST(tz);
    kv_quat a = {kv_ld(x0->qx + o), kv_ld(x0->qy + o), kv_ld(x0->qz + o), kv_ld(x0->qw + o)};
    kv_quat r = a;
    if (!u_zero) {
        kv_quat bq = {kv_ld(x1->qx + o), kv_ld(x1->qy + o), kv_ld(x1->qz + o), kv_ld(x1->qw + o)};
        r = KILN__SFX(kiln__qinterp)(a, bq, u, sq);
    }
    kv_st(out->qx + o, r.x), kv_st(out->qy + o, r.y), kv_st(out->qz + o, r.z), kv_st(out->qw + o, r.w);
    KILN__LERP_ST(sx);
    KILN__LERP_ST(sy);
    KILN__LERP_ST(sz);
#undef KILN__LERP_ST
}

/* Row 1 of an ABSOLUTE packed block that the context does not hold yet (forward playback
 * stepping to the next frame pair) decoded into the context (d1, qw rebuilt), its translation
 * and scale interpolated against row 0 (x0, from the context) and stored to out as each
 * component is decoded. kiln__abs_rot then interpolates the rotation from x0 and d1. */
KILN__FN void KILN__SFX(kiln__abs_fill_keys)(const KILN__SFX(kiln__packed_view) *pv, uint32_t blk, unsigned h,
                                             const kiln_soa_xform *x0, const unsigned char *row1, kiln_soa_xform *d1,
                                             kv u, int narrow, kiln_soa_xform *out)
{
    KILN__SFX(kiln__packed_cursor) c = KILN__SFX(kiln__packed_at)(pv, blk, h, row1, row1);
    unsigned o = h * KV_W;
#define KILN__FILL_ST(comp, q)                                                                            \
    do {                                                                                                  \
        kv a_ = kv_ld(x0->comp + o), b_ = KILN__SFX(kiln__packed_one)(&c, q, narrow);                     \
        kv_st(d1->comp + o, b_);                                                                          \
        kv_st(out->comp + o, kv_fma(u, kv_sub(b_, a_), a_));                                              \
    } while (0)
    KILN__FILL_ST(tx, 0);
    KILN__FILL_ST(ty, 1);
    KILN__FILL_ST(tz, 2);
    kv_quat bq;
    bq.x = KILN__SFX(kiln__packed_one)(&c, 3, narrow);
    bq.y = KILN__SFX(kiln__packed_one)(&c, 4, narrow);
    bq.z = KILN__SFX(kiln__packed_one)(&c, 5, narrow);
    bq.w = KILN__SFX(kiln__rebuild_qw)(bq.x, bq.y, bq.z);
    kv_st(d1->qx + o, bq.x), kv_st(d1->qy + o, bq.y), kv_st(d1->qz + o, bq.z), kv_st(d1->qw + o, bq.w);
    KILN__FILL_ST(sx, 6);
    KILN__FILL_ST(sy, 7);
    KILN__FILL_ST(sz, 8);
#undef KILN__FILL_ST
}

/* The rotation of an ABSOLUTE block between two decoded rows in memory, stored to out. */
KILN__FN void KILN__SFX(kiln__abs_rot)(const kiln_soa_xform *x0, const kiln_soa_xform *x1, unsigned o, kv u,
                                       const kv *sq, kiln_soa_xform *out)
{
    kv_quat a = {kv_ld(x0->qx + o), kv_ld(x0->qy + o), kv_ld(x0->qz + o), kv_ld(x0->qw + o)};
    kv_quat bq = {kv_ld(x1->qx + o), kv_ld(x1->qy + o), kv_ld(x1->qz + o), kv_ld(x1->qw + o)};
    kv_quat r = KILN__SFX(kiln__qinterp)(a, bq, u, sq);
    kv_st(out->qx + o, r.x), kv_st(out->qy + o, r.y), kv_st(out->qz + o, r.z), kv_st(out->qw + o, r.w);
}

/* kiln__interp_abs for an ABSOLUTE packed block whose row 1 the context does not hold yet:
 * row 1 decoded into the context (d1) with its translation and scale, then the rotation. */
KILN__FN void KILN__SFX(kiln__interp_abs_fill)(const KILN__SFX(kiln__packed_view) *pv, uint32_t blk, unsigned h,
                                               const kiln_soa_xform *x0, const unsigned char *row1,
                                               kiln_soa_xform *d1, kv u, const kv *sq, int narrow,
                                               kiln_soa_xform *out)
{
    KILN__SFX(kiln__abs_fill_keys)(pv, blk, h, x0, row1, d1, u, narrow, out);
    KILN__SFX(kiln__abs_rot)(x0, d1, h * KV_W, u, sq, out);
}

/* kiln__abs_run for ABSOLUTE packed blocks [b0, b0 + n) whose row 1 the context does not hold
 * yet: row 1 decoded into the context (f1) with the translations and scales, interpolated
 * against row 0 from the context (d0), then the rotations back to back. */
KILN__FN void KILN__SFX(kiln__abs_fill_run)(const KILN__SFX(kiln__packed_view) *pv, uint32_t b0, uint32_t n,
                                            const kiln_soa_xform *d0, const unsigned char *row1, kiln_soa_xform *f1,
                                            kv u, const kv *sq, kiln_soa_xform *out)
{
    for (uint32_t i = 0; i < n; i++)
        for (unsigned h = 0; h < KV_PER_BLOCK; h++) {
            if (pv->blocks[b0 + i].flags & KILN__BLK_NARROW)
                KILN__SFX(kiln__abs_fill_keys)(pv, b0 + i, h, d0 + b0 + i, row1, f1 + b0 + i, u, 1, out + i);
            else
                KILN__SFX(kiln__abs_fill_keys)(pv, b0 + i, h, d0 + b0 + i, row1, f1 + b0 + i, u, 0, out + i);
        }
    for (uint32_t i = 0; i < n; i++)
        for (unsigned h = 0; h < KV_PER_BLOCK; h++)
            KILN__SFX(kiln__abs_rot)(d0 + b0 + i, f1 + b0 + i, h * KV_W, u, sq, out + i);
}

/* Lanes [o, o + KV_W): T = ta·T0 + tb·Tc + tc·k, S = (sa·S0 + sb·Sc + sz)·(sc·k + sd),
 * R = (ra·R0 + rb·Rc + rz·I) ⊗ k'. Every load precedes every store (out may alias base). */
KILN__FN void KILN__SFX(kiln__compose)(kv_xf k, const kiln__modes *m, uint32_t flags, unsigned o,
                                       const kiln_soa_xform *rest, const kiln_soa_xform *base, kiln_soa_xform *out)
{
    kv_xf r;
#define KILN__T(dst, c, comp)                                                                             \
    (dst) = kv_fma(kv_ld(m->tc[c] + o), k.comp,                                                           \
                   kv_fma(kv_ld(m->tb[c] + o), kv_ld(base->comp + o), kv_mul(kv_ld(m->ta[c] + o), kv_ld(rest->comp + o))))
#define KILN__S(dst, c, comp)                                                                             \
    (dst) = kv_mul(kv_fma(kv_ld(m->sa[c] + o), kv_ld(rest->comp + o),                                     \
                          kv_fma(kv_ld(m->sb[c] + o), kv_ld(base->comp + o), kv_ld(m->sz[c] + o))),       \
                   kv_fma(kv_ld(m->sc[c] + o), k.comp, kv_ld(m->sd[c] + o)))
    KILN__T(r.tx, 0, tx);
    KILN__T(r.ty, 1, ty);
    KILN__T(r.tz, 2, tz);
    KILN__S(r.sx, 0, sx);
    KILN__S(r.sy, 1, sy);
    KILN__S(r.sz, 2, sz);
#undef KILN__T
#undef KILN__S
    kv rk = kv_ld(m->rk + o);
    kv_quat kp = {kv_mul(rk, k.q.x), kv_mul(rk, k.q.y), kv_mul(rk, k.q.z), kv_fma(rk, k.q.w, kv_sub(kv_set1(1.0f), rk))};
    if (flags & KILN__BLK_FRAC) {
        kv fm = kv_ldmask(m->frac_mask + o);
        kv_quat kf = kv_slerp_identity(k.q, kv_ld(m->frac_a + o), kiln__slerp_fit);
        kp.x = kv_sel(fm, kf.x, kp.x), kp.y = kv_sel(fm, kf.y, kp.y);
        kp.z = kv_sel(fm, kf.z, kp.z), kp.w = kv_sel(fm, kf.w, kp.w);
    }
    kv ra = kv_ld(m->ra + o), rb = kv_ld(m->rb + o);
    kv_quat bq;
    bq.x = kv_fma(ra, kv_ld(rest->qx + o), kv_mul(rb, kv_ld(base->qx + o)));
    bq.y = kv_fma(ra, kv_ld(rest->qy + o), kv_mul(rb, kv_ld(base->qy + o)));
    bq.z = kv_fma(ra, kv_ld(rest->qz + o), kv_mul(rb, kv_ld(base->qz + o)));
    bq.w = kv_fma(ra, kv_ld(rest->qw + o), kv_fma(rb, kv_ld(base->qw + o), kv_ld(m->rz + o)));
    r.q = kv_qmul(bq, kp);
    kv_xf_store(out, o, r);
}

/* Where a block's interpolated key goes: kept for the scalar fix-up (EXACT), stored (absolute)
 * or composed with the rest or the pose underneath. */
KILN__FN void KILN__SFX(kiln__emit_key)(kv_xf k, const kiln__modes *m, uint32_t flags, unsigned o, kiln_soa_xform *kt,
                                        const kiln_soa_xform *rest, const kiln_soa_xform *base, kiln_soa_xform *out)
{
    if (KILN__UNLIKELY(flags & KILN__BLK_EXACT)) kv_xf_store(kt, o, k);
    else if (flags & KILN__BLK_ABSOLUTE) kv_xf_store(out, o, k);
    else KILN__SFX(kiln__compose)(k, m, flags, o, rest, base, out);
}

KILN__KERNEL void KILN__SFX(kiln__sample_blocks)(const kiln__sample_job *job, uint32_t b0, uint32_t b1,
                                                 const kiln_soa_xform *rest, const kiln_soa_xform *base,
                                                 kiln_soa_xform *out)
{
    const kiln_anim_binding *b = job->binding;
    const KILN__SFX(kiln__packed_view) pv = KILN__SFX(kiln__packed_view_of)(b);
    const kv u = kv_set1(job->u);
    kv sq[KILN__SLERP_DEG];
    for (int i = 0; i < KILN__SLERP_DEG; i++) sq[i] = kv_set1(job->slerp_q[i]);
    /* The lossy clips' common cases first, each in a loop with nothing else to track: blocks
     * whose two rows the context holds decoded (forward playback), then packed blocks decoded
     * from the rows in place (random access), when they need no scalar fix-up. The first block
     * of another kind goes on in the general loop below. */
    if (job->dec0 && !job->u_zero) {
        /* absolute cached blocks alone first: no rest or base to track */
        const kiln_soa_xform *d0 = job->dec0, *d1 = job->dec1;
        uint32_t start = b0;
        if (job->fill1) {
            /* row 1 decoded into the context as it is interpolated, up to KILN__ABS_RUN blocks at
             * a time (kiln__abs_fill_run) */
            const unsigned char *row1 = job->row1;
            kiln_soa_xform *f1 = job->fill1;
            const uint32_t want = KILN__BLK_CACHE | KILN__BLK_ABSOLUTE | KILN__BLK_PACKED;
            for (uint32_t n; (n = KILN__SFX(kiln__run_of)(&pv, b0, b1, want)) != 0; b0 += n, out += n)
                KILN__SFX(kiln__abs_fill_run)(&pv, b0, n, d0, row1, f1, u, sq, out);
        } else {
            for (; b0 < b1; b0++, out++) {
                uint32_t flags = pv.blocks[b0].flags;
                if ((flags & (KILN__BLK_CACHE | KILN__BLK_ABSOLUTE | KILN__BLK_EXACT)) != (KILN__BLK_CACHE | KILN__BLK_ABSOLUTE)) break;
                for (unsigned h = 0; h < KV_PER_BLOCK; h++) KILN__SFX(kiln__interp_abs)(d0 + b0, d1 + b0, h * KV_W, u, sq, 0, out);
            }
        }
        rest += b0 - start, base += b0 - start;
    }
    if (job->dec0) {
        for (; b0 < b1; b0++, rest++, base++, out++) {
            uint32_t flags = pv.blocks[b0].flags;
            if ((flags & (KILN__BLK_CACHE | KILN__BLK_EXACT)) != KILN__BLK_CACHE) break;
            if (job->fill1) {
                /* row 1 into the context first, unless decoded below as it is interpolated */
                if ((flags & (KILN__BLK_ABSOLUTE | KILN__BLK_PACKED)) == (KILN__BLK_ABSOLUTE | KILN__BLK_PACKED) &&
                    !job->u_zero) {
                    for (unsigned h = 0; h < KV_PER_BLOCK; h++) {
                        if (flags & KILN__BLK_NARROW)
                            KILN__SFX(kiln__interp_abs_fill)(&pv, b0, h, job->dec0 + b0, job->row1, job->fill1 + b0, u, sq, 1, out);
                        else
                            KILN__SFX(kiln__interp_abs_fill)(&pv, b0, h, job->dec0 + b0, job->row1, job->fill1 + b0, u, sq, 0, out);
                    }
                    continue;
                }
                KILN__SFX(kiln__decode_block)(b, b0, job->row1, NULL, job->fill1 + b0, NULL);
            }
            for (unsigned h = 0; h < KV_PER_BLOCK; h++) {
                if (flags & KILN__BLK_ABSOLUTE) {
                    KILN__SFX(kiln__interp_abs)(job->dec0 + b0, job->dec1 + b0, h * KV_W, u, sq, job->u_zero, out);
                    continue;
                }
                kv_xf k = KILN__SFX(kiln__interp_xf)(kv_xf_load(job->dec0 + b0, h * KV_W), kv_xf_load(job->dec1 + b0, h * KV_W),
                                                     u, sq, job->u_zero);
                KILN__SFX(kiln__compose)(k, &b->modes[b0], flags, h * KV_W, rest, base, out);
            }
        }
    }
    if (!job->dec0) {
        /* absolute packed blocks alone first: no rest or base to track */
        const uint32_t want = KILN__BLK_PACKED | KILN__BLK_ABSOLUTE;
        for (uint32_t n; (n = KILN__SFX(kiln__run_of)(&pv, b0, b1, want)) != 0; b0 += n, out += n, rest += n, base += n)
            KILN__SFX(kiln__abs_run)(&pv, b0, n, job->row0, job->row1, u, sq, out);
    }
    for (; b0 < b1; b0++, rest++, base++, out++) {
        const kiln__clip_block *cb = &pv.blocks[b0];
        uint32_t flags = cb->flags;
        if ((flags & (KILN__BLK_PACKED | KILN__BLK_EXACT)) != KILN__BLK_PACKED || (job->dec0 && (flags & KILN__BLK_CACHE))) break;
        if (flags & KILN__BLK_ABSOLUTE) {
            KILN__SFX(kiln__abs_run)(&pv, b0, 1, job->row0, job->row1, u, sq, out);
            continue;
        }
        for (unsigned h = 0; h < KV_PER_BLOCK; h++) {
            kv_xf k = (flags & KILN__BLK_NARROW) ? KILN__SFX(kiln__interp_packed)(&pv, b0, h, job->row0, job->row1, u, sq, 1)
                                                 : KILN__SFX(kiln__interp_packed)(&pv, b0, h, job->row0, job->row1, u, sq, 0);
            KILN__SFX(kiln__compose)(k, &b->modes[b0], flags, h * KV_W, rest, base, out);
        }
    }
    for (uint32_t blk = b0; blk < b1; blk++, rest++, base++, out++) {
        const kiln__clip_block *cb = &pv.blocks[blk];
        const kiln__modes *m = &b->modes[blk];
        uint32_t flags = cb->flags;
        /* Rows as SoA blocks: in place (dense raw), in the context cache, decoded straight into
         * registers (quantised, no cache), or per-component pointers (constants mixed with raw
         * lanes). */
        kiln_soa_xform kt; /* EXACT blocks: keys for the scalar fix-up */
        if (!(flags & (KILN__BLK_DENSE | KILN__BLK_DECODE))) {
            const float *p0[KILN_ANIM_COMPONENTS], *p1[KILN_ANIM_COMPONENTS];
            kiln__block_sources(b, blk, job->row0, job->row1, p0, p1);
            for (unsigned h = 0; h < KV_PER_BLOCK; h++) {
                kv_xf k = KILN__SFX(kiln__interp_xf)(KILN__SFX(kiln__load_ptrs)(p0, h * KV_W),
                                                     KILN__SFX(kiln__load_ptrs)(p1, h * KV_W), u, sq, job->u_zero);
                KILN__SFX(kiln__emit_key)(k, m, flags, h * KV_W, &kt, rest, base, out);
            }
        } else {
            const kiln_soa_xform *x0 = NULL, *x1 = NULL;
            const kiln_soa_xform *cst = (const kiln_soa_xform *)(const void *)b->constants + blk;
            if (flags & KILN__BLK_DENSE) {
                x0 = (const kiln_soa_xform *)(const void *)(job->row0 + cb->offset[0]);
                x1 = (const kiln_soa_xform *)(const void *)(job->row1 + cb->offset[0]);
            } else if (job->dec0 && (flags & KILN__BLK_CACHE)) {
                if (job->fill1) KILN__SFX(kiln__decode_block)(b, blk, job->row1, NULL, job->fill1 + blk, NULL);
                x0 = job->dec0 + blk, x1 = job->dec1 + blk;
            }
            for (unsigned h = 0; h < KV_PER_BLOCK; h++) {
                kv_xf k;
                if (x0 && (flags & (KILN__BLK_ABSOLUTE | KILN__BLK_EXACT)) == KILN__BLK_ABSOLUTE) {
                    KILN__SFX(kiln__interp_abs)(x0, x1, h * KV_W, u, sq, job->u_zero, out);
                    continue;
                }
                if (x0) {
                    k = KILN__SFX(kiln__interp_xf)(kv_xf_load(x0, h * KV_W), kv_xf_load(x1, h * KV_W), u, sq,
                                                   job->u_zero);
                } else if (flags & KILN__BLK_PACKED) {
                    k = KILN__SFX(kiln__interp_packed)(&pv, blk, h, job->row0, job->row1, u, sq, 0);
                } else {
                    kv_xf a, bb;
                    KILN__SFX(kiln__fetch_rows)(b, cb, cst, h, job->row0, job->row1, &a, &bb);
                    k = KILN__SFX(kiln__interp_xf)(a, bb, u, sq, job->u_zero);
                }
                KILN__SFX(kiln__emit_key)(k, m, flags, h * KV_W, &kt, rest, base, out);
            }
        }
        if (KILN__UNLIKELY(flags & KILN__BLK_EXACT)) {
            /* additive weights outside [0, 1]: exact slerp(I, k, a) per lane in scalar code */
            kiln__fix_exact(m, &kt);
            for (unsigned h = 0; h < KV_PER_BLOCK; h++)
                KILN__SFX(kiln__compose)(kv_xf_load(&kt, h * KV_W), m, flags, h * KV_W, rest, base, out);
        }
    }
}
