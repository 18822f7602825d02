/* Sampling kernels, portable C: the reference the SIMD paths are tested against.
 *
 * The same formulas as the SIMD paths (anim_sample_simd.h), which differ only in rounding: AVX2
 * fuses multiply-adds and both use a refined reciprocal square root where this divides by a
 * square root; results agree within 1e-5 (tests/test_anim_sample.c). Quantised rows decode
 * bit-identically on every path. Per lane, the quaternion math is cglm's (math_cglm.h).
 */
#include "math_cglm.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "anim_internal.h"

/* One row of a block: every component, so that interpolation reads plain SoA blocks. */
static void kiln__decode_one(const kiln_anim_binding *b, uint32_t block, const unsigned char *row, kiln_soa_xform *dst)
{
    const kiln__clip_block *cb = &b->blocks[block];
    const kiln_soa_xform *cst = (const kiln_soa_xform *)(const void *)b->constants + block;
    for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) {
        float *d = kiln__soa_comp_mut(dst, c);
        if (cb->kind[c] == KILN__SRC_CONST) {
            memcpy(d, kiln__soa_comp(cst, c), KILN__LANES * sizeof(float));
        } else if (cb->kind[c] == KILN__SRC_RAW) {
            memcpy(d, row + cb->offset[c], KILN__LANES * sizeof(float));
        } else if (cb->width[c]) {
            const kiln_blob_anim_track *tr = &b->tracks[cb->track[c]];
            for (unsigned l = 0; l < KILN__LANES; l++)
                d[l] = kiln__clip_dequant(kiln__clip_lane_bits(row + cb->offset[c], cb->width[c], l), tr->range_min[l],
                                          kiln__clip_step(tr->range_extent[l], cb->width[c]));
        }
    }
    if (cb->flags & KILN__BLK_QW)
        for (unsigned l = 0; l < KILN__LANES; l++) dst->qw[l] = kiln__clip_rebuild_qw(dst->qx[l], dst->qy[l], dst->qz[l]);
}

void kiln__decode_block_scalar(const kiln_anim_binding *b, uint32_t block, const unsigned char *row0,
                               const unsigned char *row1, kiln_soa_xform *d0, kiln_soa_xform *d1)
{
    kiln__decode_one(b, block, row0, d0);
    if (d1) kiln__decode_one(b, block, row1, d1);
}

/* Normalised a + t·(b - a) for one lane; the caller has put b on a's hemisphere. */
static void kiln__nlerp_lane(float a[4], float bq[4], float t, float r[4])
{
    glm_vec4_lerp(a, bq, t, r);
    kiln__qnormalize(r);
}

/* slerp(I, k, a) for a in (0, 1), shortest arc, by the corrected nlerp. */
static void kiln__slerp_identity_lane(const float k[4], float a, float r[4])
{
    float s = k[3] < 0.0f ? -1.0f : 1.0f, q[KILN__SLERP_DEG];
    float kk[4], id[4];
    glm_vec4_scale(KILN__GLM(k), s, kk);
    glm_quat_identity(id);
    kiln__slerp_coeffs(a, q);
    kiln__nlerp_lane(id, kk, kiln__corrected(a, 1.0f - kk[3], q), r);
}

static void kiln__interp(const float *p0[KILN_ANIM_COMPONENTS], const float *p1[KILN_ANIM_COMPONENTS],
                         const kiln__sample_job *job, kiln_soa_xform *k)
{
    static const unsigned lin[6] = {KILN__TX, KILN__TY, KILN__TZ, KILN__SX, KILN__SY, KILN__SZ};
    float u = job->u;
    for (unsigned i = 0; i < 6; i++) {
        unsigned c = lin[i];
        float *d = kiln__soa_comp_mut(k, c);
        for (unsigned l = 0; l < KILN__LANES; l++) d[l] = p0[c][l] + u * (p1[c][l] - p0[c][l]);
    }
    for (unsigned l = 0; l < KILN__LANES; l++) {
        float a[4], bq[4], r[4];
        for (int i = 0; i < 4; i++) a[i] = p0[KILN__QX + i][l], bq[i] = p1[KILN__QX + i][l];
        if (job->u_zero) {
            memcpy(r, a, sizeof r);
        } else {
            float d = a[0] * bq[0] + a[1] * bq[1] + a[2] * bq[2] + a[3] * bq[3]; /* the SIMD kernels' order */
            if (d < 0.0f) {
                d = -d;
                glm_vec4_negate(bq);
            }
            kiln__nlerp_lane(a, bq, kiln__corrected(u, 1.0f - d, job->slerp_q), r);
        }
        k->qx[l] = r[0], k->qy[l] = r[1], k->qz[l] = r[2], k->qw[l] = r[3];
    }
}

/* base ⊗ k per lane; out may alias base (each lane is read before it is written). */
static void kiln__compose(const kiln_soa_xform *k, const kiln__modes *m, uint32_t flags, const kiln_soa_xform *rest,
                          const kiln_soa_xform *base, kiln_soa_xform *out)
{
    for (unsigned l = 0; l < KILN__LANES; l++) {
        float t[3], s[3], q[4];
        for (unsigned c = 0; c < 3; c++) {
            float t0 = kiln__soa_comp(rest, KILN__TX + c)[l], tc = kiln__soa_comp(base, KILN__TX + c)[l];
            t[c] = m->ta[c][l] * t0 + m->tb[c][l] * tc + m->tc[c][l] * kiln__soa_comp(k, KILN__TX + c)[l];
            float s0 = kiln__soa_comp(rest, KILN__SX + c)[l], sc = kiln__soa_comp(base, KILN__SX + c)[l];
            s[c] = (m->sa[c][l] * s0 + m->sb[c][l] * sc + m->sz[c][l]) *
                   (m->sc[c][l] * kiln__soa_comp(k, KILN__SX + c)[l] + m->sd[c][l]);
        }
        /* q = (ra R + rb B + (0, 0, 0, rz)) ⊗ (rk K + (0, 0, 0, 1 - rk)), or the fractional slerp */
        float kp[4], bq[4];
        float kq[4] = {k->qx[l], k->qy[l], k->qz[l], k->qw[l]};
        if ((flags & KILN__BLK_FRAC) && m->frac_mask[l]) {
            kiln__slerp_identity_lane(kq, m->frac_a[l], kp);
        } else {
            float rk = m->rk[l];
            glm_vec4_scale(kq, rk, kp);
            kp[3] += 1.0f - rk;
        }
        float rq[4] = {rest->qx[l], rest->qy[l], rest->qz[l], rest->qw[l]};
        float cq[4] = {base->qx[l], base->qy[l], base->qz[l], base->qw[l]};
        glm_vec4_scale(rq, m->ra[l], bq);
        glm_vec4_muladds(cq, m->rb[l], bq);
        bq[3] += m->rz[l];
        glm_quat_mul(bq, kp, q);
        out->tx[l] = t[0], out->ty[l] = t[1], out->tz[l] = t[2];
        out->qx[l] = q[0], out->qy[l] = q[1], out->qz[l] = q[2], out->qw[l] = q[3];
        out->sx[l] = s[0], out->sy[l] = s[1], out->sz[l] = s[2];
    }
}

void kiln__sample_blocks_scalar(const kiln__sample_job *job, uint32_t b0, uint32_t b1, const kiln_soa_xform *rest,
                                const kiln_soa_xform *base, kiln_soa_xform *out)
{
    const kiln_anim_binding *b = job->binding;
    for (uint32_t blk = b0; blk < b1; blk++, rest++, base++, out++) {
        const kiln__clip_block *cb = &b->blocks[blk];
        kiln_soa_xform d0, d1, k;
        const float *p0[KILN_ANIM_COMPONENTS], *p1[KILN_ANIM_COMPONENTS];
        if (cb->flags & KILN__BLK_DECODE) {
            int cached = job->dec0 && (cb->flags & KILN__BLK_CACHE);
            const kiln_soa_xform *dec0 = cached ? job->dec0 + blk : &d0, *dec1 = cached ? job->dec1 + blk : &d1;
            if (!cached) kiln__decode_block_scalar(b, blk, job->row0, job->row1, &d0, &d1);
            else if (job->fill1) kiln__decode_one(b, blk, job->row1, job->fill1 + blk);
            for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) p0[c] = kiln__soa_comp(dec0, c), p1[c] = kiln__soa_comp(dec1, c);
        } else {
            kiln__block_sources(b, blk, job->row0, job->row1, p0, p1);
        }
        kiln__interp(p0, p1, job, &k);
        if (cb->flags & KILN__BLK_EXACT) kiln__fix_exact(&b->modes[blk], &k);
        if (cb->flags & KILN__BLK_ABSOLUTE) *out = k;
        else kiln__compose(&k, &b->modes[blk], cb->flags, rest, base, out);
    }
}
