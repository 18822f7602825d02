/* The two-bone IK handle (three joints, Cast reference E.1) in single precision: the single
 * solve (rig_two_bone_single.h, compiled here for the x86-64 baseline) and the batches of
 * independent handles that the SIMD kernels of rig_two_bone_simd.h solve side by side.
 */
#include "rig_math_f32.h"

#include <stddef.h>
#include <string.h>

#include "anim_internal.h"
#include "pose_bone_model.h"
#include "rig_internal.h"

#define KILN__IK3S(name) name
#define KILN__IK3S_FN static
#define KILN__IK3S_KERNEL
#include "rig_two_bone_single.h"

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
            r->two_bone(r, h, chain, 1.0);
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
        int reachable = kiln__ik3_reachable(b->len[0][l], b->len[1][l], b->len[2][l]);
        kiln__rig_update_chain(r, chain);
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
