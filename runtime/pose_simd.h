/* runtime/pose_simd.h - blend, additive layer, local -> model and skinning kernels, written
 * once in the simd_ops.h vocabulary and compiled per path (pose_sse2.c, pose_avx2.c). The lane
 * groups (kv_grp) also cover 16 lanes, two SoA blocks per vector; no path compiles them so yet.
 *
 * Private template: include after simd_ops.h. The reference semantics are the scalar kernels
 * in pose_blend.c and pose_model.c.
 *
 * Own layout, not cglm's: blend, additive layers and the local matrices work on the SoA pose, a
 * register holding one component of KV_W joints (see anim_sample_simd.h), where cglm holds one
 * joint's vec4 or versor per register. The bone-by-bone products (local -> model, skinning
 * matrices) are cglm's glm_mat4_mul algorithm, columns as k4 vectors (on SSE2 the skinning
 * product is glm_mat4_mul_sse2 operation for operation), spelled in the k4 vocabulary so that the
 * AVX2 kernels fuse their multiply-adds: cglm fuses only when the whole translation unit is
 * built with -mfma, which these per-function targets do not imply.
 */
#include <float.h>
#include <math.h>

/* ---- blend --------------------------------------------------------------------------------- */

/* acc += w·x for one lane group of one pose; rotations on the hemisphere of the sum so far. */
KILN__FN void KILN__SFX(kiln__blend_accumulate)(kv_xf *acc, kv w, const kiln_soa_xform *x, kv_grp g)
{
    kv_xf v = kv_xf_gload(x, g);
    acc->tx = kv_fma(w, v.tx, acc->tx), acc->ty = kv_fma(w, v.ty, acc->ty), acc->tz = kv_fma(w, v.tz, acc->tz);
    acc->sx = kv_fma(w, v.sx, acc->sx), acc->sy = kv_fma(w, v.sy, acc->sy), acc->sz = kv_fma(w, v.sz, acc->sz);
    kv ws = kv_xor(w, kv_neg_mask(kv_qdot(acc->q, v.q)));
    acc->q.x = kv_fma(ws, v.q.x, acc->q.x), acc->q.y = kv_fma(ws, v.q.y, acc->q.y);
    acc->q.z = kv_fma(ws, v.q.z, acc->q.z), acc->q.w = kv_fma(ws, v.q.w, acc->q.w);
}

/* The blend with the layer weights scaled by s, or as they are (`scaled`, a constant after
 * inlining: the common case keeps the loop it had before scaling existed). One lane group at a
 * time (kv_grp: 4 or 8 lanes of a block, or 16 lanes of two blocks on AVX-512). */
KILN__FN void KILN__SFX(kiln__blend_run)(const kiln__blend_job *job, int scaled, double s, float thr_s, float cap_s)
{
    const kv thr = kv_set1(thr_s), cap = kv_set1(cap_s), zero = kv_zero();
    const kiln_blend_layer *layers = job->layers;
    const uint32_t count = job->layer_count, groups = KV_GROUPS(job->soa_count);
    for (uint32_t gi = 0; gi < groups; gi++) {
        kv_grp g = kv_grp_at(gi, job->soa_count);
        kv_xf acc = {zero, zero, zero, {zero, zero, zero, zero}, zero, zero, zero};
        kv sum = zero;
        int first = 1;
        for (uint32_t i = 0; i < count; i++) {
            const kiln_blend_layer *ly = &layers[i];
            if (!(ly->weight > 0.0f)) continue; /* NaN and non-positive layers add nothing */
            /* +inf counts as FLT_MAX (only in the scaled case: the others are below 2^16) */
            kv w = kv_set1(scaled ? (float)((ly->weight < FLT_MAX ? ly->weight : FLT_MAX) * s) : ly->weight);
            if (ly->joint_weights) w = kv_min(kv_max(kv_mul(w, kv_gldf(ly->joint_weights, g)), zero), cap);
            if (first) {
                /* the first layer sets the hemisphere: no dot product against a zero sum */
                kv_xf v = kv_xf_gload(ly->pose, g);
                acc.tx = kv_mul(w, v.tx), acc.ty = kv_mul(w, v.ty), acc.tz = kv_mul(w, v.tz);
                acc.q = kv_qscale(v.q, w);
                acc.sx = kv_mul(w, v.sx), acc.sy = kv_mul(w, v.sy), acc.sz = kv_mul(w, v.sz);
                first = 0;
            } else {
                KILN__SFX(kiln__blend_accumulate)(&acc, w, ly->pose, g);
            }
            sum = kv_add(sum, w);
        }
        /* the rest pose where the sum falls short; the remainder is computed only then (sum is
         * never NaN: weights are > 0 and finite, masked ones clamped to [0, cap]) */
        if (kv_any(kv_lt(sum, thr))) {
            kv rw = kv_max(kv_sub(thr, sum), zero);
            if (job->rest) {
                KILN__SFX(kiln__blend_accumulate)(&acc, rw, job->rest, g);
            } else {
                kv_grp id = {0, 0, g.o}; /* the identity block, in every lane */
                KILN__SFX(kiln__blend_accumulate)(&acc, rw, &kiln__soa_identity_block, id);
            }
            sum = kv_add(sum, rw);
        }
        kv inv = kv_rcp(sum); /* sum >= thr: no denormal, no inf */
        acc.tx = kv_mul(acc.tx, inv), acc.ty = kv_mul(acc.ty, inv), acc.tz = kv_mul(acc.tz, inv);
        acc.sx = kv_mul(acc.sx, inv), acc.sy = kv_mul(acc.sy, inv), acc.sz = kv_mul(acc.sz, inv);
        acc.q = kv_qnormalize(acc.q);
        kv_xf_gstore(job->out, g, acc); /* after every layer's lanes were read */
    }
}

/* The uniform-weight loop (job->flat, see kiln__blend below): k poses and their normalised
 * weights. Each T and S component is summed over the layers and stored at once; only the
 * rotation sum stays in registers. */
KILN__FN void KILN__SFX(kiln__blend_flat_run)(const kiln__blend_job *job, const kiln_soa_xform *const *pose,
                                              const float *w, unsigned k)
{
    const uint32_t groups = KV_GROUPS(job->soa_count);
    kiln_soa_xform *out = job->out;
    for (uint32_t gi = 0; gi < groups; gi++) {
        kv_grp g = kv_grp_at(gi, job->soa_count);
        /* rotations first: each layer brought onto the hemisphere of the sum so far */
        kv w0 = kv_set1(w[0]);
        kv_quat q = {kv_mul(w0, kv_gld(pose[0], g, KILN__QX)), kv_mul(w0, kv_gld(pose[0], g, KILN__QY)),
                     kv_mul(w0, kv_gld(pose[0], g, KILN__QZ)), kv_mul(w0, kv_gld(pose[0], g, KILN__QW))};
        for (unsigned i = 1; i < k; i++) {
            kv_quat v = {kv_gld(pose[i], g, KILN__QX), kv_gld(pose[i], g, KILN__QY), kv_gld(pose[i], g, KILN__QZ),
                         kv_gld(pose[i], g, KILN__QW)};
            kv ws = kv_xor(kv_set1(w[i]), kv_neg_mask(kv_qdot(q, v)));
            q.x = kv_fma(ws, v.x, q.x), q.y = kv_fma(ws, v.y, q.y), q.z = kv_fma(ws, v.z, q.z), q.w = kv_fma(ws, v.w, q.w);
        }
        /* translations and scales: every layer's component c is read before it is stored (out
         * may be one of the layers) */
        static const unsigned ts[6] = {KILN__TX, KILN__TY, KILN__TZ, KILN__SX, KILN__SY, KILN__SZ};
        for (unsigned c = 0; c < 6; c++) {
            kv v = kv_mul(w0, kv_gld(pose[0], g, ts[c]));
            for (unsigned i = 1; i < k; i++) v = kv_fma(kv_set1(w[i]), kv_gld(pose[i], g, ts[c]), v);
            kv_gst(out, g, ts[c], v);
        }
        q = kv_qnormalize(q);
        kv_gst(out, g, KILN__QX, q.x), kv_gst(out, g, KILN__QY, q.y), kv_gst(out, g, KILN__QZ, q.z);
        kv_gst(out, g, KILN__QW, q.w);
    }
}

#if KV_W <= 8
/* kiln__blend_flat_run for the usual two layers, spelled out: the rotation sum of a lane group
 * (g relative to the blocks at a and b), */
KILN__FN kv_quat KILN__SFX(kiln__blend2_q)(const kiln_soa_xform *a, const kiln_soa_xform *b, kv wa, kv wb, kv_grp g)
{
    kv_quat q = {kv_mul(wa, kv_gld(a, g, KILN__QX)), kv_mul(wa, kv_gld(a, g, KILN__QY)),
                 kv_mul(wa, kv_gld(a, g, KILN__QZ)), kv_mul(wa, kv_gld(a, g, KILN__QW))};
    kv_quat v = {kv_gld(b, g, KILN__QX), kv_gld(b, g, KILN__QY), kv_gld(b, g, KILN__QZ), kv_gld(b, g, KILN__QW)};
    kv ws = kv_xor(wb, kv_neg_mask(kv_qdot(q, v)));
    q.x = kv_fma(ws, v.x, q.x), q.y = kv_fma(ws, v.y, q.y), q.z = kv_fma(ws, v.z, q.z), q.w = kv_fma(ws, v.w, q.w);
    return q;
}

/* its translation and scale, stored (each component of both layers read before it is stored:
 * out may be a or b), */
KILN__FN void KILN__SFX(kiln__blend2_ts)(kiln_soa_xform *out, const kiln_soa_xform *a, const kiln_soa_xform *b, kv wa,
                                         kv wb, kv_grp g)
{
    kv_gst(out, g, KILN__TX, kv_fma(wb, kv_gld(b, g, KILN__TX), kv_mul(wa, kv_gld(a, g, KILN__TX))));
    kv_gst(out, g, KILN__TY, kv_fma(wb, kv_gld(b, g, KILN__TY), kv_mul(wa, kv_gld(a, g, KILN__TY))));
    kv_gst(out, g, KILN__TZ, kv_fma(wb, kv_gld(b, g, KILN__TZ), kv_mul(wa, kv_gld(a, g, KILN__TZ))));
    kv_gst(out, g, KILN__SX, kv_fma(wb, kv_gld(b, g, KILN__SX), kv_mul(wa, kv_gld(a, g, KILN__SX))));
    kv_gst(out, g, KILN__SY, kv_fma(wb, kv_gld(b, g, KILN__SY), kv_mul(wa, kv_gld(a, g, KILN__SY))));
    kv_gst(out, g, KILN__SZ, kv_fma(wb, kv_gld(b, g, KILN__SZ), kv_mul(wa, kv_gld(a, g, KILN__SZ))));
}

/* and the sum normalised: kv_qnormalize's arithmetic without its overflow branch, whose lanes
 * (|q|² above FLT_MAX, never on real data) come back in *big, */
KILN__FN kv_quat KILN__SFX(kiln__blend2_norm)(kv_quat q, kv *big)
{
    kv len2 = kv_qdot(q, q);
    *big = kv_gt(len2, kv_set1(FLT_MAX));
    return kv_qscale(q, kv_rsqrt(kv_max(len2, kv_set1(FLT_MIN))));
}

KILN__FN void KILN__SFX(kiln__blend2_qst)(kiln_soa_xform *out, kv_grp g, kv_quat r)
{
    kv_gst(out, g, KILN__QX, r.x), kv_gst(out, g, KILN__QY, r.y), kv_gst(out, g, KILN__QZ, r.z);
    kv_gst(out, g, KILN__QW, r.w);
}

/* where the rotation of a group is summed again (the layers' rotations are not yet overwritten)
 * and normalised by kv_qnormalize itself, out of line so that the loop keeps its registers. */
#ifndef KILN__BLEND2_COLD
#if defined(__GNUC__) || defined(__clang__)
#define KILN__BLEND2_COLD __attribute__((noinline, cold))
#define KILN__BLEND2_NOINLINE __attribute__((noinline))
#else
#define KILN__BLEND2_COLD
#define KILN__BLEND2_NOINLINE
#endif
#endif
static KILN__KERNEL KILN__BLEND2_COLD void KILN__SFX(kiln__blend2_big)(kiln_soa_xform *out, const kiln_soa_xform *a,
                                                                      const kiln_soa_xform *b, float wa_s, float wb_s,
                                                                      kv_grp g)
{
    kv_quat q = KILN__SFX(kiln__blend2_q)(a, b, kv_set1(wa_s), kv_set1(wb_s), g);
    KILN__SFX(kiln__blend2_qst)(out, g, kv_qnormalize(q));
}

/* Two lane groups per iteration (two blocks of 8 lanes, or a block's two halves of 4), their
 * independent chains (sum, hemisphere test, length, rsqrt, Newton step) overlapping and one
 * test covering both groups' overflow; the pointers step by blocks, so that every load and store
 * is a constant offset from them. */
#define KILN__BLEND2_BLOCKS (2u / KV_PER_BLOCK)
KILN__KERNEL KILN__BLEND2_NOINLINE void KILN__SFX(kiln__blend_flat2)(kiln_soa_xform *out, uint32_t n,
                                                                             const kiln_soa_xform *a,
                                                                             const kiln_soa_xform *b, float wa_s,
                                                                             float wb_s)
{
    const kv wa = kv_set1(wa_s), wb = kv_set1(wb_s);
    /* g1 relative to the same pointers: the next block, or the second half of the block */
    const kv_grp g0 = {0, 0, 0}, g1 = {KILN__BLEND2_BLOCKS - 1u, KILN__BLEND2_BLOCKS - 1u, (KV_PER_BLOCK - 1u) * KV_W};
    for (uint32_t i = n / KILN__BLEND2_BLOCKS; i; i--) {
        kv_quat q0 = KILN__SFX(kiln__blend2_q)(a, b, wa, wb, g0);
        KILN__SFX(kiln__blend2_ts)(out, a, b, wa, wb, g0);
        kv_quat q1 = KILN__SFX(kiln__blend2_q)(a, b, wa, wb, g1);
        KILN__SFX(kiln__blend2_ts)(out, a, b, wa, wb, g1);
        kv big0, big1;
        kv_quat r0 = KILN__SFX(kiln__blend2_norm)(q0, &big0), r1 = KILN__SFX(kiln__blend2_norm)(q1, &big1);
        if (KILN__UNLIKELY(kv_any(kv_or(big0, big1)))) {
            KILN__SFX(kiln__blend2_big)(out, a, b, wa_s, wb_s, g0);
            KILN__SFX(kiln__blend2_big)(out, a, b, wa_s, wb_s, g1);
        } else {
            KILN__SFX(kiln__blend2_qst)(out, g0, r0);
            KILN__SFX(kiln__blend2_qst)(out, g1, r1);
        }
        a += KILN__BLEND2_BLOCKS, b += KILN__BLEND2_BLOCKS, out += KILN__BLEND2_BLOCKS;
    }
    if (n % KILN__BLEND2_BLOCKS) { /* an odd last block (8 lanes) */
        kv_quat q = KILN__SFX(kiln__blend2_q)(a, b, wa, wb, g0);
        KILN__SFX(kiln__blend2_ts)(out, a, b, wa, wb, g0);
        kv big;
        kv_quat r = KILN__SFX(kiln__blend2_norm)(q, &big);
        if (KILN__UNLIKELY(kv_any(big))) KILN__SFX(kiln__blend2_big)(out, a, b, wa_s, wb_s, g0);
        else KILN__SFX(kiln__blend2_qst)(out, g0, r);
    }
}
#undef KILN__BLEND2_BLOCKS
#endif /* KV_W <= 8 */

/* The blend when no layer masks its bones (the common case: whole-pose layers): every joint then
 * has the same weights, so the sum, whether the rest pose fills up to the threshold and the
 * normalising 1/sum are worked out once per call (kiln_pose_blend, into job->flat_pose and
 * flat_w), and each lane group is a stream of multiply-adds of the layers' components by the
 * normalised weights w_i / sum (the general loop divides the sums instead; the results agree to
 * a few ulp). */
KILN__KERNEL void KILN__SFX(kiln__blend)(const kiln__blend_job *job)
{
#if KV_W <= 8
    if (job->flat == 2) /* its own function, outside the general loops' stack frame */
        KILN__SFX(kiln__blend_flat2)(job->out, job->soa_count, job->flat_pose[0], job->flat_pose[1], job->flat_w[0],
                                     job->flat_w[1]);
    else
#endif
    if (job->flat) KILN__SFX(kiln__blend_flat_run)(job, job->flat_pose, job->flat_w, job->flat);
    else if (job->scale == 1.0) KILN__SFX(kiln__blend_run)(job, 0, 1.0, job->thr, job->cap);
    else KILN__SFX(kiln__blend_run)(job, 1, job->scale, job->thr, job->cap);
}

#if KV_W <= 8 /* the AVX-512 row runs the AVX2 additive-layer kernel */
/* ---- additive layer -------------------------------------------------------------------------- */
KILN__KERNEL void KILN__SFX(kiln__add)(kiln_soa_xform *pose, const kiln_soa_xform *delta, float weight,
                                       const float *joint_weights, uint32_t soa_count)
{
    const kv one = kv_set1(1.0f), zero = kv_zero();
    for (uint32_t blk = 0; blk < soa_count; blk++) {
        kiln_soa_xform *p = &pose[blk];
        const kiln_soa_xform *d = &delta[blk];
        for (unsigned h = 0; h < KV_PER_BLOCK; h++) {
            unsigned o = h * KV_W;
            kv w = kv_set1(weight);
            if (joint_weights) w = kv_mul(w, kv_ld(joint_weights + blk * KILN__LANES + o));
            w = kv_min(kv_max(w, zero), one);
            for (unsigned c = 0; c < 3; c++) {
                float *t = kiln__soa_comp_mut(p, KILN__TX + c), *s = kiln__soa_comp_mut(p, KILN__SX + c);
                kv_st(t + o, kv_fma(w, kv_ld(kiln__soa_comp(d, KILN__TX + c) + o), kv_ld(t + o)));
                kv_st(s + o, kv_mul(kv_ld(s + o), kv_fma(w, kv_ld(kiln__soa_comp(d, KILN__SX + c) + o), kv_sub(one, w))));
            }
            /* R ⊗ nlerp(I, ±dR, t'), normalised once after the product */
            kv_quat k = {kv_ld(d->qx + o), kv_ld(d->qy + o), kv_ld(d->qz + o), kv_ld(d->qw + o)};
            kv sign = kv_neg_mask(k.w);
            kv t = kv_slerp_t(w, kv_sub(one, kv_abs(k.w)), kiln__slerp_fit);
            kv ts = kv_xor(t, sign);
            kv_quat kp = {kv_mul(ts, k.x), kv_mul(ts, k.y), kv_mul(ts, k.z), kv_fma(ts, k.w, kv_sub(one, t))};
            kv_quat a = {kv_ld(p->qx + o), kv_ld(p->qy + o), kv_ld(p->qz + o), kv_ld(p->qw + o)};
            kv_quat r = kv_qnormalize(kv_qmul(a, kp));
            kv_st(p->qx + o, r.x), kv_st(p->qy + o, r.y), kv_st(p->qz + o, r.z), kv_st(p->qw + o, r.w);
        }
    }
}

#endif /* KV_W <= 8 */

/* ---- local -> model ------------------------------------------------------------------------- */

/* Phase 1 builds the 3x3 R·S of a span of bones at once from the SoA pose (m[element][lane];
 * a span is one block of 8 bones, or two on AVX-512, one 16-lane group); phase 2 walks the
 * bones parent-first, one 4x4 product per bone: each column of W is three (four for the
 * translation) multiply-adds of the parent's columns by broadcast elements, which keeps every
 * operand a plain or broadcast load and needs no transposition.
 *
 * Phase 1 runs a span ahead of phase 2 (two buffers), and phase 2 spells out a whole block's
 * eight bones: per bone two loads and two tests of its record, 12 broadcast loads, 16 products
 * and 4 stores (~38 instructions; AVX2, anchor_n80, 55 per bone with the call and phase 1).
 *
 * What bounds it (AVX2, Zen 3, the anchor skeletons): the issue of phase 2's 12 broadcast loads
 * and 16 products per bone (12 of them on the two multiply pipes, bit for bit the reference's
 * operations: ~7 cycles per bone with phase 1's), more than the parent-to-child latency
 * (10 cycles per link, overlapped across the anchor's short chains). Measured before the
 * unrolling and the second buffer: the same loop on a skeleton
 * of roots only (no chain at all) is ~4 % faster than on the anchor's, on a pure chain ~5 %
 * slower; without the broadcasts (constants instead) it is ~40 % faster on the roots (~13 % on
 * the anchor's, where the chain then shows). Three layouts that cut the latency were measured
 * slower: two bone streams interleaved in 128-bit registers (their columns spill), two streams
 * in the halves of 256-bit registers ([a|b] factors: two broadcasts and an insert each), and a
 * matrix as [W0|W1], [W2|W3] with seven 256-bit products per bone (their [a|b] factors a load
 * and a permute each, from per-block tables). Measured after them, also slower: two streams of
 * whole blocks (the skeleton's first and second half, a block of each per step once the second
 * one's parents in the first are done, their lanes alternating) — 25 % more instructions (the
 * second stream's columns spill, eight more copies of a bone's general path) and ~50 % more
 * time on anchor_n80. */
#define KILN__L2M_SPAN (KV_W > 8 ? KV_W : 8)
#if defined(__GNUC__) || defined(__clang__)
#define KILN__L2M_BARRIER(m) __asm__ volatile("" : : "r"(m) : "memory")
#else
#define KILN__L2M_BARRIER(m) ((void)(m))
#endif

/* Phase 2 for bone i, lane l of its block x (its R·S elements at mb[k][l]): c0..c3 hold the
 * previous bone's matrix (the root's before bone 0) and receive this one's. */
KILN__FN void KILN__SFX(kiln__l2m_bone)(const kiln_blob_bone *bb, uint32_t i0, const kiln_soa_xform *local,
                                        const float *root, float *model, const float (*mb)[KILN__L2M_SPAN],
                                        const kiln_soa_xform *x, unsigned l, __m128 *c0, __m128 *c1, __m128 *c2,
                                        __m128 *c3)
{
    const uint32_t i = i0 + l;
    uint32_t parent = (uint32_t)bb[l].parent, flags = bb[l].flags;
    __m128 p0 = *c0, p1 = *c1, p2 = *c2, p3 = *c3;
    /* the previous bone (most bones in depth-first order), or bone 0 a root: its parent's matrix
     * is still in registers, which keeps a store-to-load forwarding off the chain's latency */
    if (KILN__UNLIKELY(parent + 1u != i || (flags & KILN_BONE_SEGMENT_SCALE_COMPENSATE))) {
        /* a root when -1, or (bad data) not before the bone */
        const float *p = parent < i ? model + (size_t)parent * 16u : root;
        p0 = _mm_loadu_ps(p), p1 = _mm_loadu_ps(p + 4), p2 = _mm_loadu_ps(p + 8), p3 = _mm_loadu_ps(p + 12);
        if (parent < i && (flags & KILN_BONE_SEGMENT_SCALE_COMPENSATE)) {
            const kiln_soa_xform *px = &local[parent / KILN__LANES];
            unsigned pl = parent % KILN__LANES;
            /* the translation column below takes P as it is, the others P / s_parent */
            *c3 = _mm_add_ps(k4_fma(p0, _mm_set1_ps(x->tx[l]), p3),
                             k4_fma(p2, _mm_set1_ps(x->tz[l]), _mm_mul_ps(p1, _mm_set1_ps(x->ty[l]))));
            p0 = _mm_div_ps(p0, _mm_set1_ps(px->sx[pl]));
            p1 = _mm_div_ps(p1, _mm_set1_ps(px->sy[pl]));
            p2 = _mm_div_ps(p2, _mm_set1_ps(px->sz[pl]));
            goto linear;
        }
    }
    /* two products in parallel and one add per column: 10 cycles from the parent's columns to
     * the bone's instead of 12 for a chain of three multiply-adds */
    *c3 = _mm_add_ps(k4_fma(p0, _mm_set1_ps(x->tx[l]), p3),
                     k4_fma(p2, _mm_set1_ps(x->tz[l]), _mm_mul_ps(p1, _mm_set1_ps(x->ty[l]))));
linear:
    *c0 = _mm_add_ps(k4_fma(p1, _mm_set1_ps(mb[1][l]), _mm_mul_ps(p0, _mm_set1_ps(mb[0][l]))),
                     _mm_mul_ps(p2, _mm_set1_ps(mb[2][l])));
    *c1 = _mm_add_ps(k4_fma(p1, _mm_set1_ps(mb[4][l]), _mm_mul_ps(p0, _mm_set1_ps(mb[3][l]))),
                     _mm_mul_ps(p2, _mm_set1_ps(mb[5][l])));
    *c2 = _mm_add_ps(k4_fma(p1, _mm_set1_ps(mb[7][l]), _mm_mul_ps(p0, _mm_set1_ps(mb[6][l]))),
                     _mm_mul_ps(p2, _mm_set1_ps(mb[8][l])));
    float *w = model + (size_t)i0 * 16u + l * 16u;
    _mm_storeu_ps(w, *c0), _mm_storeu_ps(w + 4, *c1), _mm_storeu_ps(w + 8, *c2), _mm_storeu_ps(w + 12, *c3);
}

/* Phase 1 for span sp: the R·S elements m[element][lane] of its bones. */
KILN__FN void KILN__SFX(kiln__l2m_rs)(const kiln_soa_xform *local, uint32_t sp, uint32_t blocks,
                                      float (*m)[KILN__L2M_SPAN])
{
    for (unsigned h = 0; h < KILN__L2M_SPAN / KV_W; h++) {
        kv_grp g = kv_grp_at(sp * (KILN__L2M_SPAN / KV_W) + h, blocks);
        unsigned o = h * KV_W;
        kv qx = kv_gld(local, g, KILN__QX), qy = kv_gld(local, g, KILN__QY), qz = kv_gld(local, g, KILN__QZ);
        kv qw = kv_gld(local, g, KILN__QW);
        kv x2 = kv_add(qx, qx), y2 = kv_add(qy, qy), z2 = kv_add(qz, qz);
        kv xx = kv_mul(qx, x2), yy = kv_mul(qy, y2), zz = kv_mul(qz, z2);
        kv xy = kv_mul(qx, y2), xz = kv_mul(qx, z2), yz = kv_mul(qy, z2);
        kv wx = kv_mul(qw, x2), wy = kv_mul(qw, y2), wz = kv_mul(qw, z2);
        kv sx = kv_gld(local, g, KILN__SX), sy = kv_gld(local, g, KILN__SY), sz = kv_gld(local, g, KILN__SZ);
        kv one = kv_set1(1.0f);
        kv_st(m[0] + o, kv_mul(kv_sub(one, kv_add(yy, zz)), sx));
        kv_st(m[1] + o, kv_mul(kv_add(xy, wz), sx));
        kv_st(m[2] + o, kv_mul(kv_sub(xz, wy), sx));
        kv_st(m[3] + o, kv_mul(kv_sub(xy, wz), sy));
        kv_st(m[4] + o, kv_mul(kv_sub(one, kv_add(xx, zz)), sy));
        kv_st(m[5] + o, kv_mul(kv_add(yz, wx), sy));
        kv_st(m[6] + o, kv_mul(kv_add(xz, wy), sz));
        kv_st(m[7] + o, kv_mul(kv_sub(yz, wx), sz));
        kv_st(m[8] + o, kv_mul(kv_sub(one, kv_add(xx, yy)), sz));
    }
}

KILN__KERNEL void KILN__SFX(kiln__local_to_model)(const kiln__model_job *job)
{
    /* phase 1 runs a span ahead, into the other half: phase 2's broadcast loads then read
     * elements whose vector stores left the store queue long before, rather than wait on them
     * (a narrow load from part of a wide store in flight is not forwarded) */
    float m[2][9][KILN__L2M_SPAN];
    /* locals: the vector stores below may alias anything, so fields read through `job` would
     * be reloaded after every store */
    const kiln_blob_bone *bones = job->bones;
    const kiln_soa_xform *local = job->local;
    const float *root = job->root;
    float *model = job->model;
    const uint32_t n = job->bone_count, blocks = (n + KILN__LANES - 1) / KILN__LANES;
    const uint32_t spans = (n + KILN__L2M_SPAN - 1) / KILN__L2M_SPAN;
    /* the previous bone's matrix; the root's before bone 0 */
    __m128 c0 = _mm_loadu_ps(root), c1 = _mm_loadu_ps(root + 4), c2 = _mm_loadu_ps(root + 8);
    __m128 c3 = _mm_loadu_ps(root + 12);
    KILN__SFX(kiln__l2m_rs)(local, 0, blocks, m[0]);
    for (uint32_t sp = 0; sp < spans; sp++) {
        if (sp + 1 < spans) KILN__SFX(kiln__l2m_rs)(local, sp + 1, blocks, m[(sp + 1) & 1]);
        /* phase 2 reads m back by broadcast loads: keeps the compiler from forwarding the stored
         * vectors through registers, a permute and a lane swap per element */
        KILN__L2M_BARRIER(m);
        for (unsigned bb = 0; bb < KILN__L2M_SPAN / KILN__LANES; bb++) {
            uint32_t blk = sp * (KILN__L2M_SPAN / KILN__LANES) + bb;
            if (blk >= blocks) break;
            const kiln_soa_xform *x = &local[blk];
            const float (*mb)[KILN__L2M_SPAN] =
                (const float (*)[KILN__L2M_SPAN])(const void *)&m[sp & 1][0][bb * KILN__LANES];
            uint32_t i0 = blk * KILN__LANES;
            if (n - i0 >= KILN__LANES) { /* a whole block: the lanes spelled out, constant offsets */
#define KILN__L2M_LANE(l)                                                                                   \
    KILN__SFX(kiln__l2m_bone)(bones + i0, i0, local, root, model, mb, x, (l), &c0, &c1, &c2, &c3)
                KILN__L2M_LANE(0), KILN__L2M_LANE(1), KILN__L2M_LANE(2), KILN__L2M_LANE(3);
                KILN__L2M_LANE(4), KILN__L2M_LANE(5), KILN__L2M_LANE(6), KILN__L2M_LANE(7);
#undef KILN__L2M_LANE
            } else {
                for (unsigned l = 0; l < n - i0; l++)
                    KILN__SFX(kiln__l2m_bone)(bones + i0, i0, local, root, model, mb, x, l, &c0, &c1, &c2, &c3);
            }
        }
    }
}
#undef KILN__L2M_SPAN
#undef KILN__L2M_BARRIER

#if KV_W <= 8 /* the AVX-512 row runs the AVX2 skinning-matrix kernel */
/* ---- skinning matrices -------------------------------------------------------------------- */
KILN__KERNEL void KILN__SFX(kiln__skin)(const float *model, const float *inverse_binds, float *skin, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        const float *w = model + (size_t)i * 16u, *ib = inverse_binds + (size_t)i * 16u;
        __m128 w0 = _mm_loadu_ps(w), w1 = _mm_loadu_ps(w + 4), w2 = _mm_loadu_ps(w + 8), w3 = _mm_loadu_ps(w + 12);
        __m128 c[4];
        for (unsigned k = 0; k < 4; k++)
            c[k] = k4_fma(w3, _mm_set1_ps(ib[4 * k + 3]),
                          k4_fma(w2, _mm_set1_ps(ib[4 * k + 2]),
                                 k4_fma(w1, _mm_set1_ps(ib[4 * k + 1]), _mm_mul_ps(w0, _mm_set1_ps(ib[4 * k])))));
        float *s = skin + (size_t)i * 16u; /* may be `model`: every load above precedes these */
        _mm_storeu_ps(s, c[0]), _mm_storeu_ps(s + 4, c[1]), _mm_storeu_ps(s + 8, c[2]), _mm_storeu_ps(s + 12, c[3]);
    }
}
#endif /* KV_W <= 8 */
