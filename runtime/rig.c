/* IK handles and constraints: the views, the per-skeleton ranges, the scratch layout, the
 * solver entry point and the pose/model bookkeeping the two stages share.
 *
 * Every step (one handle, one constraint) writes its bones' locals and then recomputes the
 * model matrices of those bones and of their descendants before the next step reads anything,
 * so that each step sees exactly the pose the previous ones produced (D.10: a constraint may
 * target a bone an IK handle just moved). Descendants are found with one forward scan in
 * parent-first order from the first changed bone to the last bone of its subtree (subtrees
 * need not be contiguous, but none extends past its last descendant, found once per call): a
 * bone is recomputed when it or its parent is stale. Staleness is an epoch stamp per bone, so
 * nothing is cleared between steps, nor between the solves of one plan (the plan carries the
 * epoch on; the stamps are cleared when it is written and when the epoch would wrap).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "anim_internal.h"
#include "blob_internal.h"
#include "rig_internal.h"
#include "error_detail.h"
#include "simd_table.h"

/* ---- views ---------------------------------------------------------------------------------- */
KILN__RECORDS_VIEW(kiln_blob_constraints, kiln_blob_constraint, KILN_SECTION_CONSTRAINTS)
KILN__RECORDS_VIEW(kiln_blob_ik_handles, kiln_blob_ik_handle, KILN_SECTION_IK_HANDLES)

/* The records of `skeleton` in a table grouped by skeleton: two binary searches over the
 * `skeleton` field, read at `field_offset` in records of `stride` bytes. */
static const void *kiln__skeleton_range(const void *table, uint32_t n, size_t stride, size_t field_offset,
                                        uint32_t skeleton, uint32_t *count)
{
    const unsigned char *base = (const unsigned char *)table;
    uint32_t bound[2];
    for (int k = 0; k < 2; k++) {
        uint32_t lo = 0, hi = n;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2, s;
            memcpy(&s, base + (size_t)mid * stride + field_offset, sizeof s);
            if (s < skeleton + (uint32_t)k || (k == 1 && skeleton == UINT32_MAX)) lo = mid + 1;
            else hi = mid;
        }
        bound[k] = lo;
    }
    *count = bound[1] - bound[0];
    return *count ? base + (size_t)bound[0] * stride : NULL;
}

const kiln_blob_ik_handle *kiln_rig_ik_handles(const kiln_blob *blob, uint32_t skeleton, uint32_t *count)
{
    uint32_t n, dummy;
    if (!count) count = &dummy;
    const kiln_blob_ik_handle *t = kiln_blob_ik_handles(blob, &n);
    *count = 0;
    if (!t) return NULL;
    return (const kiln_blob_ik_handle *)kiln__skeleton_range(t, n, sizeof *t, offsetof(kiln_blob_ik_handle, skeleton),
                                                             skeleton, count);
}

const kiln_blob_constraint *kiln_rig_constraints(const kiln_blob *blob, uint32_t skeleton, uint32_t *count)
{
    uint32_t n, dummy;
    if (!count) count = &dummy;
    const kiln_blob_constraint *t = kiln_blob_constraints(blob, &n);
    *count = 0;
    if (!t) return NULL;
    return (const kiln_blob_constraint *)kiln__skeleton_range(
        t, n, sizeof *t, offsetof(kiln_blob_constraint, skeleton), skeleton, count);
}

/* ---- scratch -------------------------------------------------------------------------------- */
static size_t kiln__round8(size_t n) { return (n + 7u) & ~(size_t)7u; }

/* Byte offsets of the scratch arrays for `bones` bones, chains of up to `depth` joints, `nik`
 * IK handles and `ncn` constraints. */
typedef struct kiln__rig_layout {
    size_t stamp, last, chain, pos, work, bend, rot, len, batch, batch_chain, cn, tq, early, size;
} kiln__rig_layout;

/* What kiln_rig_prepare derives from the blob once and kiln_rig_solve reads (at the start of
 * the scratch): the skeleton's records, the scratch layout, every bone's subtree end (the
 * `last` array), for every IK handle the two-bone batch that starts at it when every weight
 * is 1, and every constraint's checks and constants (kiln__constraint_plan). */
#define KILN__RIG_PLAN_MAGIC 0x4b524750u /* "PGRK" */
typedef struct kiln__rig_plan {
    uint32_t magic, skeleton, bone_count, soa_count, depth, nik, ncn;
    uint32_t early; /* constraints planned `early` (0 or at least 2) */
    uint32_t epoch; /* the next solve's first epoch: every bone's stamp is below it */
    uint32_t epoch_limit; /* above it, a solve's steps (one epoch each) could wrap it */
    uint32_t iks_own; /* 1: every IK handle record is the skeleton's (so with no weights, all 1) */
    const kiln_blob *blob;
    const kiln_blob_bone *bones;
    const kiln_blob_ik_handle *iks;
    const kiln_blob_constraint *cns;
    kiln__rig_layout layout;
    /* the solver state, its skeleton and scratch fields filled when the plan is written
     * (kiln__rig_bind) and again when a solve finds the scratch at another address (a copied
     * buffer); a solve sets only the fields of its call */
    kiln__rig rig;
} kiln__rig_plan;

_Static_assert(sizeof(kiln__constraint_plan) + 16 + 4 == 52,
               "kiln_rig_scratch_size's documentation counts 52 bytes per constraint");
_Static_assert(sizeof(kiln__rig_plan) == 576 || sizeof(void *) != 8,
               "kiln_rig_scratch_size's documentation counts 576 bytes for the plan on 64-bit targets");

static kiln__rig_layout kiln__layout(uint32_t bones, uint32_t depth, uint32_t nik, uint32_t ncn)
{
    kiln__rig_layout l;
    l.stamp = kiln__round8(sizeof(kiln__rig_plan));
    l.last = l.stamp + kiln__round8((size_t)bones * 4u);
    l.chain = l.last + kiln__round8((size_t)bones * 4u);
    l.pos = l.chain + kiln__round8((size_t)depth * 4u);
    l.work = l.pos + (size_t)depth * 24u;
    l.bend = l.work + (size_t)depth * 24u;
    l.rot = l.bend + (size_t)depth * sizeof(kiln__ik_bend);
    l.len = l.rot + (size_t)depth * 32u;
    l.batch = l.len + (size_t)depth * 8u;
    l.batch_chain = l.batch + kiln__round8((size_t)nik * 4u);
    l.cn = kiln__round8(l.batch_chain + (size_t)nik * 12u);
    l.tq = l.cn + (size_t)ncn * sizeof(kiln__constraint_plan);
    l.early = l.tq + (size_t)ncn * 16u;
    l.size = (l.early + (size_t)ncn * 4u + 63u) & ~(size_t)63u;
    return l;
}

size_t kiln_rig_scratch_size(const kiln_blob *blob, uint32_t skeleton)
{
    const kiln_blob_skeleton *sk;
    const kiln_blob_bone *bones;
    if (kiln__skeleton_bones(blob, skeleton, UINT32_MAX, &sk, &bones) != KILN_OK) return 0;
    uint32_t depth = sk->depth < sk->bone_count ? sk->depth : sk->bone_count, nik = 0, ncn = 0;
    kiln_rig_ik_handles(blob, skeleton, &nik);
    kiln_rig_constraints(blob, skeleton, &ncn);
    return kiln__layout(sk->bone_count, depth, nik, ncn).size;
}

/* ---- pose access ---------------------------------------------------------------------------- */
void kiln__rig_get_local(const kiln__rig *r, uint32_t b, double t[3], double q[4], double s[3])
{
    const kiln_soa_xform *x = &r->local[b / KILN_SOA_WIDTH];
    unsigned l = b % KILN_SOA_WIDTH;
    if (t) t[0] = x->tx[l], t[1] = x->ty[l], t[2] = x->tz[l];
    if (q) {
        q[0] = x->qx[l], q[1] = x->qy[l], q[2] = x->qz[l], q[3] = x->qw[l];
        kiln__qnorm(q);
    }
    if (s) s[0] = x->sx[l], s[1] = x->sy[l], s[2] = x->sz[l];
}

void kiln__rig_set_local(kiln__rig *r, uint32_t b, const double *t, const double *q, const double *s)
{
    kiln_soa_xform *x = &r->local[b / KILN_SOA_WIDTH];
    unsigned l = b % KILN_SOA_WIDTH;
    if (t) x->tx[l] = (float)t[0], x->ty[l] = (float)t[1], x->tz[l] = (float)t[2];
    if (q) {
        double u[4] = {q[0], q[1], q[2], q[3]};
        kiln__qnorm(u);
        x->qx[l] = (float)u[0], x->qy[l] = (float)u[1], x->qz[l] = (float)u[2], x->qw[l] = (float)u[3];
    }
    if (s) x->sx[l] = (float)s[0], x->sy[l] = (float)s[1], x->sz[l] = (float)s[2];
    r->stamp[b] = r->epoch;
    r->moved |= t != NULL;
}

void kiln__rig_position(const kiln__rig *r, uint32_t b, double p[3])
{
    const float *m = r->model + (size_t)b * 16u;
    p[0] = m[12], p[1] = m[13], p[2] = m[14];
}

void kiln__rig_rotation(const kiln__rig *r, uint32_t b, double q[4]) { kiln__qfrom_matrix(r->model + (size_t)b * 16u, q); }

void kiln__rig_frame(const kiln__rig *r, uint32_t b, double q[4]) { kiln__qfrom_matrix(kiln__rig_parent_matrix(r, b), q); }

/* The model matrix of bone b from its local and its parent's matrix: the per-bone step of the
 * scalar reference kernel of kiln_pose_local_to_object (pose_model.c) itself, so that an updated
 * bone matches what a full recomputation of the pose gives. */
static void kiln__rig_compose(kiln__rig *r, uint32_t b)
{
    kiln__bone_to_model(r->local, r->bones, b, kiln__rig_parent_matrix(r, b), r->model + (size_t)b * 16u);
}

void kiln__rig_update(kiln__rig *r, uint32_t first)
{
    const uint32_t e = r->epoch;
    if (r->last[first] == first) {
        /* a leaf (a constraint's owner, typically): only its own matrix, when it changed */
        if (r->stamp[first] == e) {
            /* its position stays bit for bit unless its translation was written (see below) */
            float *m = r->model + (size_t)first * 16u;
            if (r->moved) kiln__rig_compose(r, first);
            else kiln__bone_to_model_linear(r->local, r->bones, first, kiln__rig_parent_matrix(r, first), m);
        }
        r->epoch++;
        r->moved = 0;
        return;
    }
    /* `first`'s parent did not change: unless its translation was written, its position is the
     * one it had, bit for bit (recomposing could round it differently from the kernel that
     * produced it, e.g. with FMA), so that an IK start never moves. */
    float keep[3];
    memcpy(keep, r->model + (size_t)first * 16u + 12u, sizeof keep);
    for (uint32_t b = first; b <= r->last[first]; b++) {
        int32_t p = r->bones[b].parent;
        if (r->stamp[b] != e && !(p >= 0 && (uint32_t)p < b && r->stamp[p] == e)) continue;
        r->stamp[b] = e;
        kiln__rig_compose(r, b);
        if (b == first && !r->moved) memcpy(r->model + (size_t)first * 16u + 12u, keep, sizeof keep);
    }
    r->epoch++; /* every stamp is now in the past */
    r->moved = 0;
}

void kiln__rig_update_below(kiln__rig *r, const uint32_t chain[3])
{
    const uint32_t e = r->epoch, first = chain[0], end = r->last[first];
    uint32_t b = first;
    /* a chain of consecutive bones (the usual limb): the bones below it come after it */
    if (chain[1] == first + 1u && chain[2] == first + 2u) b = first + 3u;
    for (; b <= end; b++) {
        if (b == chain[0] || b == chain[1] || b == chain[2]) continue;
        int32_t p = r->bones[b].parent;
        if (r->stamp[b] != e && !(p >= 0 && (uint32_t)p < b && r->stamp[p] == e)) continue;
        r->stamp[b] = e;
        kiln__rig_compose(r, b);
    }
    r->epoch++;
    r->moved = 0;
}

/* ---- entry point ---------------------------------------------------------------------------- */
static double kiln__weight(const float *weights, uint32_t count, uint32_t i, double own)
{
    double w = own * (weights && i < count ? (double)weights[i] : 1.0);
    if (!(w > 0.0)) return 0.0; /* also NaN */
    return w < 1.0 ? w : 1.0;
}

/* How many handles from i on one batch kernel call can solve when their weights are 1 (their
 * chains into r->batch_chain): consecutive two-bone handles none of which reads a bone
 * another one moves (its chain, the chain start's parent, its target, pole vector and pole
 * bones) and whose moved subtrees are apart. Solving them side by side then gives what solving
 * them in order gives, whichever of them the batch kernel leaves to the scalar code (that one
 * runs after the kernel wrote the others' matrices, so it must not read them either). Stops at
 * the first handle that does not qualify; the solve stops earlier at a handle of weight below
 * 1, which the conditions between the handles before it do not depend on. A subtree is tested
 * as the index range [start, last[start]] that holds it (a superset when subtrees interleave,
 * which only stops a batch early). */
static uint32_t kiln__ik_plan_batch(kiln__rig *r, uint32_t skeleton, const kiln_blob_ik_handle *iks, uint32_t nik,
                                    uint32_t i)
{
    uint32_t n = 0, lo[KILN__IK3_LANES], span[KILN__IK3_LANES], reads[KILN__IK3_LANES][4];
    for (uint32_t j = i; j < nik && n < KILN__IK3_LANES; j++) {
        const kiln_blob_ik_handle *h = &iks[j];
        if (h->skeleton != skeleton || h->target_bone == KILN_BLOB_NONE ||
            !kiln__ik3_batchable(r, h, r->batch_chain[j]))
            break;
        const uint32_t *c = r->batch_chain[j];
        int32_t parent = r->bones[c[0]].parent;
        /* c[1] and c[2] lie in c[0]'s range: outside the others' when c[0] is and theirs
         * starts are outside c[0]'s */
        uint32_t *rd = reads[n];
        rd[0] = parent >= 0 ? (uint32_t)parent : c[0], rd[1] = h->target_bone;
        rd[2] = h->pole_vector_bone != KILN_BLOB_NONE ? h->pole_vector_bone : c[0];
        rd[3] = h->pole_bone != KILN_BLOB_NONE ? h->pole_bone : c[0];
        uint32_t own_lo = c[0], own_span = r->last[c[0]] - c[0];
        int ok = 1;
        for (uint32_t m = 0; m < n; m++) {
            /* b in [lo, lo + span] as one unsigned comparison; the ranges apart */
            ok &= own_lo - lo[m] > span[m] && lo[m] - own_lo > own_span;
            for (int k = 0; k < 4; k++) ok &= rd[k] - lo[m] > span[m] && reads[m][k] - own_lo > own_span;
        }
        if (!ok) break;
        lo[n] = own_lo, span[n] = own_span;
        n++;
    }
    return n;
}

/* The skeleton's records the plan refers to (found by kiln__rig_scratch_check). */
typedef struct kiln__rig_records {
    const kiln_blob_skeleton *sk;
    const kiln_blob_bone *bones;
    const kiln_blob_ik_handle *iks;
    const kiln_blob_constraint *cns;
    uint32_t nik, ncn;
} kiln__rig_records;

/* The checks of kiln_rig_solve and kiln_rig_prepare on the skeleton and the scratch; finds the
 * skeleton's records (rec) and lays out the scratch (l). */
static kiln_result kiln__rig_scratch_check(const char *where, const char *where_size, const kiln_blob *blob,
                                           uint32_t skeleton, void *scratch, size_t scratch_size, kiln__rig_records *rec,
                                           kiln__rig_layout *l)
{
    if ((uintptr_t)scratch % 8u)
        return kiln__fail(KILN_ERR_BLOB_MISALIGNED, where, "scratch %p is not 8-byte aligned", scratch);
    kiln_result res = kiln__skeleton_bones(blob, skeleton, UINT32_MAX, &rec->sk, &rec->bones);
    if (res != KILN_OK) return res;
    const kiln_blob_skeleton *sk = rec->sk;
    uint32_t depth = sk->depth < sk->bone_count ? sk->depth : sk->bone_count;
    rec->iks = kiln_rig_ik_handles(blob, skeleton, &rec->nik);
    rec->cns = kiln_rig_constraints(blob, skeleton, &rec->ncn);
    *l = kiln__layout(sk->bone_count, depth, rec->nik, rec->ncn);
    if (scratch_size < l->size)
        return kiln__fail(KILN_ERR_BUFFER_TOO_SMALL, where_size,
                          "scratch_size %zu is below kiln_rig_scratch_size() = %zu", scratch_size, (size_t)l->size);
    return KILN_OK;
}

/* The fields of the plan's solver state that point into the scratch s (at the plan's layout)
 * or repeat the plan's. */
static void kiln__rig_bind(kiln__rig_plan *plan, unsigned char *s)
{
    const kiln__rig_layout *l = &plan->layout;
    kiln__rig *r = &plan->rig;
    r->bones = plan->bones, r->bone_count = plan->bone_count, r->max_chain = plan->depth;
    r->stamp = (uint32_t *)(void *)(s + l->stamp);
    r->last = (uint32_t *)(void *)(s + l->last);
    r->chain = (uint32_t *)(void *)(s + l->chain);
    r->pos = (double(*)[3])(void *)(s + l->pos);
    r->work = (double(*)[3])(void *)(s + l->work);
    r->bend = (kiln__ik_bend *)(void *)(s + l->bend);
    r->rot = (double(*)[4])(void *)(s + l->rot);
    r->len = (double *)(void *)(s + l->len);
    r->batch = (uint32_t *)(void *)(s + l->batch);
    r->batch_chain = (uint32_t(*)[3])(void *)(s + l->batch_chain);
    r->tq = (float(*)[4])(void *)(s + l->tq);
}

/* Writes the plan of the skeleton (sk, bones) of `blob` into the scratch (layout l): its
 * records, every bone's subtree end, the constraints' plans, and the batches (derived now when
 * `batches`, else marked KILN__RIG_UNPLANNED). */
static void kiln__rig_plan_write(unsigned char *s, const kiln__rig_layout *l, const kiln_blob *blob, uint32_t skeleton,
                                 const kiln__rig_records *rec, int batches)
{
    const kiln_blob_skeleton *sk = rec->sk;
    const kiln_blob_bone *bones = rec->bones;
    kiln__rig_plan *plan = (kiln__rig_plan *)(void *)s;
    memset(plan, 0, sizeof *plan);
    plan->magic = KILN__RIG_PLAN_MAGIC;
    plan->blob = blob, plan->skeleton = skeleton, plan->bones = bones;
    plan->bone_count = sk->bone_count, plan->soa_count = sk->soa_count;
    plan->depth = sk->depth < sk->bone_count ? sk->depth : sk->bone_count;
    plan->iks = rec->iks, plan->nik = rec->nik;
    plan->cns = rec->cns, plan->ncn = rec->ncn;
    plan->layout = *l;
    /* the stamps start in the past; solves carry the epoch on (kiln_rig_solve) */
    memset(s + l->stamp, 0, (size_t)sk->bone_count * 4u);
    plan->epoch = 1;
    uint64_t steps = 2u * ((uint64_t)rec->nik + rec->ncn) + 2u;
    plan->epoch_limit = steps < UINT32_MAX ? (uint32_t)(UINT32_MAX - steps) : 0;
    /* last descendant of every bone: children come after their parent, so one backward pass
     * carries each subtree's end up to its root */
    const uint32_t nb = sk->bone_count; /* a local: the stores below cannot change it */
    uint32_t *last = (uint32_t *)(void *)(s + l->last);
    for (uint32_t b = 0; b < nb; b++) last[b] = b;
    for (uint32_t b = nb; b-- > 1;) {
        /* as unsigned, a root's -1 is never below b */
        uint32_t p = (uint32_t)bones[b].parent, lb = last[b];
        if (p < b && lb > last[p]) last[p] = lb;
    }
    kiln__rig_bind(plan, s);
    kiln__rig *r = &plan->rig;
    plan->iks_own = 1;
    for (uint32_t i = 0; i < plan->nik; i++) {
        r->batch[i] = batches ? kiln__ik_plan_batch(r, skeleton, plan->iks, plan->nik, i) : KILN__RIG_UNPLANNED;
        plan->iks_own &= plan->iks[i].skeleton == skeleton;
    }
    kiln__constraint_plan *cp = (kiln__constraint_plan *)(void *)(s + l->cn);
    const kiln_blob_constraint *cns = plan->cns;
    uint32_t nearly = 0;
    for (uint32_t i = 0; i < plan->ncn; i++) {
        kiln__constraint_plan_of(&cns[i], bones, nb, &cp[i]);
        /* a record of another skeleton only turns up in unverified (trusted) blobs */
        if (cns[i].skeleton != skeleton) cp[i].own = 0.0;
        if (!batches || cp[i].kind != KILN_CONSTRAINT_ORIENT) continue;
        /* an orient constraint's desired rotation can be taken before the first step when no
         * earlier step recomputes the matrices it reads: its target and its owner's parent (a
         * root owner's frame, the root matrix, never changes) lie outside every earlier owner's
         * subtree range (the prepared plan only: quadratic in the constraints) */
        uint32_t t = cns[i].target, p = cp[i].parent >= 0 ? (uint32_t)cp[i].parent : t;
        int early = 1;
        for (uint32_t j = 0; j < i && early; j++)
            if (cp[j].kind != KILN__CONSTRAINT_INVALID) {
                uint32_t o = cns[j].bone;
                early = !(t >= o && t <= last[o]) && !(p >= o && p <= last[o]);
            }
        cp[i].early = (uint16_t)early;
        nearly += (uint32_t)early;
    }
    /* one alone has nothing to overlap with: it is taken in its step, as without a plan */
    if (nearly == 1)
        for (uint32_t i = 0; i < plan->ncn; i++) cp[i].early = 0;
    plan->early = nearly > 1 ? nearly : 0;
    /* their indices, for kiln__constraint_targets to take without a scan */
    uint32_t *early_idx = (uint32_t *)(void *)(s + l->early), k = 0;
    for (uint32_t i = 0; i < plan->ncn && plan->early; i++)
        if (cp[i].early) early_idx[k++] = i;
}

kiln_result kiln_rig_prepare(const kiln_blob *blob, uint32_t skeleton, void *scratch, size_t scratch_size)
{
    if (!blob || !scratch)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_rig_prepare", "blob or scratch is NULL");
    kiln__rig_records rec;
    kiln__rig_layout l;
    kiln_result res = kiln__rig_scratch_check("kiln_rig_prepare: scratch", "kiln_rig_prepare: scratch_size", blob,
                                              skeleton, scratch, scratch_size, &rec, &l);
    if (res != KILN_OK) return res;
    kiln__rig_plan_write((unsigned char *)scratch, &l, blob, skeleton, &rec, 1);
    return KILN_OK;
}

kiln_result kiln_rig_solve(const kiln_rig_desc *d)
{
    if (!d || !d->blob || !d->local || !d->object || !d->scratch)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_rig_solve: desc",
                          "desc, or its blob, local, model or scratch, is NULL");
    if (d->stages & ~(KILN_RIG_IK | KILN_RIG_CONSTRAINTS))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_rig_solve: desc->stages", "unknown stage bits 0x%x", d->stages);
    if ((!d->ik_weights && d->ik_weight_count) || (!d->constraint_weights && d->constraint_weight_count))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_rig_solve: desc->ik_weights, constraint_weights",
                          "a weight array is NULL with a nonzero count");
    unsigned char *s = (unsigned char *)d->scratch;
    kiln__rig_plan *plan = (kiln__rig_plan *)(void *)s;
    if (d->prepared) {
        if ((uintptr_t)d->scratch % 8u)
            return kiln__fail(KILN_ERR_BLOB_MISALIGNED, "kiln_rig_solve: desc->scratch", "scratch %p is not 8-byte aligned",
                              d->scratch);
        if (plan->magic != KILN__RIG_PLAN_MAGIC || plan->blob != d->blob || plan->skeleton != d->skeleton)
            return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_rig_solve: desc->prepared",
                              "the scratch holds no kiln_rig_prepare plan of this blob and skeleton %u", d->skeleton);
        if (d->scratch_size < plan->layout.size)
            return kiln__fail(KILN_ERR_BUFFER_TOO_SMALL, "kiln_rig_solve: desc->scratch_size",
                              "scratch_size %zu is below kiln_rig_scratch_size() = %zu", d->scratch_size,
                              (size_t)plan->layout.size);
    } else {
        kiln__rig_records rec;
        kiln__rig_layout lw;
        kiln_result res = kiln__rig_scratch_check("kiln_rig_solve: desc->scratch", "kiln_rig_solve: desc->scratch_size",
                                                  d->blob, d->skeleton, d->scratch, d->scratch_size, &rec, &lw);
        if (res != KILN_OK) return res;
        kiln__rig_plan_write(s, &lw, d->blob, d->skeleton, &rec, 0);
    }
    const kiln__rig_layout *l = &plan->layout; /* written by either */
    const uint32_t nb = plan->bone_count;
    if (d->soa_count < plan->soa_count || d->bone_count < nb || (uint64_t)d->soa_count * KILN_SOA_WIDTH < nb)
        return kiln__fail(KILN_ERR_BUFFER_TOO_SMALL, "kiln_rig_solve: desc->soa_count, bone_count",
                          "soa_count %u / bone_count %u are below the skeleton's %u / %u", d->soa_count, d->bone_count,
                          plan->soa_count, nb);

    uint32_t stages = d->stages ? d->stages : KILN_RIG_IK | KILN_RIG_CONSTRAINTS;
    uint32_t nik = (stages & KILN_RIG_IK) ? plan->nik : 0, ncn = (stages & KILN_RIG_CONSTRAINTS) ? plan->ncn : 0;
    const kiln_blob_ik_handle *iks = plan->iks;
    const kiln_blob_constraint *cns = plan->cns;

    /* counted in place: the caller's report, else a local one */
    kiln_rig_report local_report, *rep = d->report ? d->report : &local_report;
    memset(rep, 0, sizeof *rep);
    if (!nik && !ncn) return KILN_OK;
    kiln__rig *r = &plan->rig;
    if (r->stamp != (uint32_t *)(void *)(s + l->stamp)) kiln__rig_bind(plan, s); /* a copied scratch */
    r->local = d->local;
    r->model = d->object;
    r->root = d->root ? d->root : kiln__identity16;
    r->report = rep;
    /* a solve advances the epoch once per step: the stamps are cleared only when the epoch
     * would wrap, not on every call */
    if (plan->epoch > plan->epoch_limit) {
        memset(r->stamp, 0, (size_t)nb * sizeof *r->stamp);
        plan->epoch = 1;
    }
    r->epoch = plan->epoch;
    r->moved = 0;
    r->frame.bone = UINT32_MAX;
    const kiln__simd_table *simd = kiln__simd_get();
    kiln__ik3_batch_fn batch = nik > 1 ? simd->rig.two_bone_batch : NULL;
    r->two_bone = simd->rig.two_bone;
    /* every weight 1 and every batch planned: no weight to work out per handle */
    const int ones = d->prepared && !d->ik_weights && plan->iks_own;
    for (uint32_t i = 0; i < nik; i++) {
        /* a record of another skeleton only turns up in unverified (trusted) blobs */
        double w = ones ? 1.0
               : iks[i].skeleton == d->skeleton ? kiln__weight(d->ik_weights, d->ik_weight_count, i, 1.0)
                                                 : 0.0;
        if (!(w > 0.0)) {
            rep->ik_skipped++;
            continue;
        }
        uint32_t n = 0;
        if (batch && w >= 1.0) {
            if (r->batch[i] == KILN__RIG_UNPLANNED) r->batch[i] = kiln__ik_plan_batch(r, d->skeleton, iks, nik, i);
            n = r->batch[i];
            if (d->ik_weights)
                for (uint32_t k = 1; k < n; k++)
                    if (i + k < d->ik_weight_count && !(d->ik_weights[i + k] >= 1.0f)) n = k;
        }
        if (n < 2) {
            /* a planned two-bone handle: its chain is known */
            if (r->batch[i] != KILN__RIG_UNPLANNED && r->batch[i] >= 1)
                r->two_bone(r, &iks[i], r->batch_chain[i], w);
            else
                kiln__ik_solve(r, &iks[i], w);
            continue;
        }
        for (uint32_t k = 0; k < n; k++) r->batch_handles[k] = &iks[i + k];
        kiln__ik3_batch lanes;
        kiln__ik_two_bone_batch(r, r->batch_handles, (const uint32_t(*)[3])(r->batch_chain + i), n, batch, &lanes);
        i += n - 1;
    }
    const kiln__constraint_plan *cp = (const kiln__constraint_plan *)(const void *)(s + l->cn);
    if (ncn && plan->early)
        simd->rig.constraint_targets(r, cns, cp, (const uint32_t *)(const void *)(s + l->early), plan->early);
    /* in locals: the steps cannot change them, so they are not read again per constraint */
    const kiln__constraint_step_fn step[3] = {simd->rig.constraint_step[0], simd->rig.constraint_step[1],
                                              simd->rig.constraint_step[2]};
    const float *cw = d->constraint_weights;
    const uint32_t cwn = d->constraint_weight_count;
    float(*tq)[4] = r->tq;
    for (uint32_t i = 0; i < ncn; i++) {
        const kiln__constraint_plan *p = &cp[i];
        /* own is clamped already, and own * 1.0 is own */
        double w = cw ? kiln__weight(cw, cwn, i, p->own) : p->own;
        if (w > 0.0 && p->kind != KILN__CONSTRAINT_INVALID)
            step[p->kind](r, &cns[i], p, p->early ? tq[i] : NULL, w);
        else
            rep->constraints_skipped++;
    }
    /* past every stamp this solve wrote */
    plan->epoch = r->epoch + 1u;
    return KILN_OK;
}
