/* Lossy clips: per-track bit allocation against a model-space error bound.
 *
 * The bound (kiln_bake_options.anim_error_m at anim_distance_m) is a distance between the
 * lossless and the quantised pose, at every joint's origin and at three virtual vertices along
 * its local axes, in model space, at every frame. Every candidate encoding is measured exactly
 * as the runtime will decode it (the same float arithmetic, qw rebuilt from qx, qy, qz) and
 * composed through the bone hierarchy of the skeleton baked with the clip (rest pose, modes,
 * CurveModeOverrides and segment scale compensation as the runtime applies them).
 *
 *   1. a first allocation from sensitivities: a track's error moves the joint's subtree by at
 *      most (error × reach), reach being how far the subtree extends from the joint; the bound
 *      is shared over the joints of the longest chain through the joint, in quadrature;
 *   2. measure; widen the tracks of joints (and their ancestors) that miss the target;
 *   3. greedy: try each track one width narrower, keep it when the measured error of the
 *      joints it moves stays within the target; repeat while something narrows.
 *
 * Step 3 dominates the bake. The raw worlds are computed once; the decoded locals of the
 * encoding as it stands are kept per frame, and its worlds where they are needed (the parents a
 * block's subtrees hang from, made again from the locals when stale), so a candidate width
 * recomputes only its own block's locals and the worlds below them, frame by frame in a scratch
 * that stays in cache. A candidate is decoded frame by frame as it is measured (eight lanes at
 * once with AVX2) and stops at the first frame over an allowance, trying first the last frames
 * its block's candidates failed at, then the frames by the margin the block's last passing
 * candidate left, the tightest first (before any passed: by the errors of the last full
 * measurement in its subtrees); one that passes leaves the parts of its locals it changed in
 * the cache at once (the next, narrower candidate recomputes all it changes).
 * Every number is the one a plain evaluation of every frame computes, so the encoding does
 * not depend on any of this.
 *
 * Widths: 0 (constant: the midpoint of each lane's range), 3 to 24 bits with per-lane ranges,
 * or 32 (raw float). The target is 97 % of the bound, leaving room for the runtime's
 * float composition, which differs from the double precision used here by up to a few ulps of
 * the largest translation.
 */
#include <math.h>
#include <string.h>

#include "bake_anim_lossy.h"
#include "bake_report.h"
#include "ds.h"
#include "math_f64.h"

/* ---- setup --------------------------------------------------------------------------------- */

/* D.6 at bake time, against the skeleton the error is measured on (exact names). */
static uint32_t kiln__resolved_modes(const kiln__anim *an, const kiln__skeleton *sk, const kiln__node *node,
                                     uint32_t nd, uint32_t joint)
{
    uint32_t own = an->joints[joint].modes, out = 0;
    for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) {
        uint32_t m = own >> (2 * c) & 3u, g = c < 3 ? 0u : c < 7 ? 1u : 2u;
        if (m != KILN_MODE_NONE && an->override_count) {
            for (int32_t at = (int32_t)nd; at >= 0; at = node[at].parent) {
                const char *name = sk && (uint32_t)at < sk->bone_count ? sk->names[at] : an->joints[joint].name;
                uint32_t best = UINT32_MAX, mode = 0;
                for (uint32_t o = 0; o < an->override_count; o++)
                    if ((an->overrides[o].channels >> g & 1u) && name && strcmp(an->overrides[o].name, name) == 0 &&
                        an->overrides[o].order < best)
                        best = an->overrides[o].order, mode = an->overrides[o].mode;
                if (best != UINT32_MAX) {
                    m = mode;
                    break;
                }
                if (!sk || (uint32_t)at >= sk->bone_count) break;
            }
        }
        out |= m << (2 * c);
    }
    return out;
}

/* Nodes: the skeleton's bones (parent-first), then one root per clip joint that drives none. */
static kiln_result kiln__nodes(kiln__lossy *L, const kiln__skeleton *sk)
{
    const kiln__anim *an = L->an;
    uint32_t nb = sk ? sk->bone_count : 0, extra = 0;
    for (uint32_t j = 0; j < L->nj; j++) {
        L->joint_node[j] = UINT32_MAX;
        if (!an->joints[j].name) continue;
        for (uint32_t i = 0; i < nb && L->joint_node[j] == UINT32_MAX; i++)
            if (strcmp(sk->names[i], an->joints[j].name) == 0) L->joint_node[j] = i;
        if (L->joint_node[j] == UINT32_MAX) L->joint_node[j] = nb + extra++;
        else for (uint32_t k = 0; k < j; k++) /* a bone drives one joint: the first */
            if (L->joint_node[k] == L->joint_node[j]) { L->joint_node[j] = nb + extra++; break; }
    }
    L->nodes = nb + extra;
    L->node = kiln__realloc(L->a, NULL, (size_t)L->nodes * sizeof *L->node + 1);
    if (!L->node) return KILN_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < L->nodes; i++) {
        kiln__node *N = &L->node[i];
        memset(N, 0, sizeof *N);
        N->joint = UINT32_MAX;
        N->parent = i < nb ? sk->parents[i] : -1;
        N->ssc = i < nb ? (sk->flags[i] & KILN_BONE_SEGMENT_SCALE_COMPENSATE) != 0 : 0;
        for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) N->rest[c] = kiln__anim_identity(c);
        if (i < nb) {
            for (int c = 0; c < 3; c++) N->rest[c] = sk->local_t[i][c], N->rest[7 + c] = sk->local_s[i][c];
            for (int c = 0; c < 4; c++) N->rest[3 + c] = sk->local_r[i][c];
        }
        N->depth = N->parent >= 0 ? L->node[N->parent].depth + 1 : 0;
    }
    for (uint32_t i = L->nodes; i-- > 0;) {
        int32_t p = L->node[i].parent;
        if (p >= 0 && L->node[p].height < L->node[i].height + 1) L->node[p].height = L->node[i].height + 1;
    }
    for (uint32_t j = 0; j < L->nj; j++)
        if (L->joint_node[j] != UINT32_MAX) {
            L->node[L->joint_node[j]].joint = j;
            L->modes[j] = kiln__resolved_modes(an, sk, L->node, L->joint_node[j], j);
        }
    return KILN_OK;
}

/* ---- the first allocation ---------------------------------------------------------------- */

/* The four points of node i at one frame (the origin and the three vertices), by coordinate:
 * p[row][k] = t[row] + (k ? distance · column k - 1 : 0). */
static inline void kiln__stat_points(const kiln__lossy *L, const kiln__wxf *w, double p[3][4])
{
    for (int k = 0; k < 4; k++)
        for (int row = 0; row < 3; row++) p[row][k] = w->t[row] + (k ? L->distance * w->m[(k - 1) * 3 + row] : 0.0);
}

#if KILN__WORLD_AVX2
/* One frame of kiln__stats' squared distances, the four points of a node side by side: the same
 * operations ((dx² + dy²) + dz², no fused multiply-add), and far4 takes a lane's square when it
 * is larger, as the scalar comparison does. */
KILN__AVX2 static void kiln__stats_frame_avx2(const kiln__lossy *L, const kiln__wxf *rw, double *far4)
{
    for (uint32_t i = 0; i < L->nodes; i++) {
        double p[3][4];
        kiln__stat_points(L, &rw[i], p);
        __m256d px = _mm256_loadu_pd(p[0]), py = _mm256_loadu_pd(p[1]), pz = _mm256_loadu_pd(p[2]);
        for (int32_t at = (int32_t)i; at >= 0; at = L->node[at].parent) {
            const double *o = rw[at].t;
            __m256d dx = _mm256_sub_pd(px, _mm256_broadcast_sd(o)), dy = _mm256_sub_pd(py, _mm256_broadcast_sd(o + 1));
            __m256d dz = _mm256_sub_pd(pz, _mm256_broadcast_sd(o + 2));
            __m256d d2 = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(dx, dx), _mm256_mul_pd(dy, dy)), _mm256_mul_pd(dz, dz));
            double *f = far4 + (size_t)at * 4;
            _mm256_storeu_pd(f, _mm256_max_pd(d2, _mm256_loadu_pd(f))); /* d2 > f ? d2 : f */
        }
    }
}
#endif

/* Per node: how far its subtree (origins and virtual vertices) reaches from its origin, and
 * the largest scale its parent applies, over a subset of frames (raw values). */
static kiln_result kiln__stats(kiln__lossy *L, double *reach, double *pscale)
{
    uint32_t step = L->n > KILN__STAT_FRAMES ? L->n / KILN__STAT_FRAMES : 1u;
    /* per node, the largest square of each of the four points' distances */
    double *far4 = kiln__realloc(L->a, NULL, (size_t)L->nodes * 4 * sizeof *far4 + 1);
    if (!far4) return KILN_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < L->nodes; i++) reach[i] = L->distance, pscale[i] = 1.0, L->need[i] = 1;
    for (size_t k = 0; k < (size_t)L->nodes * 4; k++) far4[k] = 0.0;
    for (uint32_t r = 0; r < L->n; r += step) {
        const kiln__wxf *rw = L->raw_world + (size_t)r * L->nodes;
        for (uint32_t i = 0; i < L->nodes; i++) {
            if (L->node[i].parent < 0) continue;
            const double *m = rw[L->node[i].parent].m;
            for (int col = 0; col < 3; col++) {
                double n = sqrt(m[col * 3] * m[col * 3] + m[col * 3 + 1] * m[col * 3 + 1] + m[col * 3 + 2] * m[col * 3 + 2]);
                if (n > pscale[i]) pscale[i] = n;
            }
        }
#if KILN__WORLD_AVX2
        if (L->avx2) {
            kiln__stats_frame_avx2(L, rw, far4);
            continue;
        }
#endif
        for (uint32_t i = 0; i < L->nodes; i++) {
            double p[3][4];
            kiln__stat_points(L, &rw[i], p);
            for (int32_t at = (int32_t)i; at >= 0; at = L->node[at].parent) {
                const double *o = rw[at].t;
                double *f = far4 + (size_t)at * 4;
                for (int k = 0; k < 4; k++) {
                    double d2 = (p[0][k] - o[0]) * (p[0][k] - o[0]) + (p[1][k] - o[1]) * (p[1][k] - o[1]) +
                                (p[2][k] - o[2]) * (p[2][k] - o[2]);
                    if (d2 > f[k]) f[k] = d2;
                }
            }
        }
    }
    /* the largest distance is the root of the largest square (sqrt is monotonic) */
    for (uint32_t i = 0; i < L->nodes; i++) {
        const double *f = far4 + (size_t)i * 4;
        double big = f[0];
        for (int k = 1; k < 4; k++)
            if (f[k] > big) big = f[k];
        double d = sqrt(big);
        if (d > reach[i]) reach[i] = d;
    }
    kiln__free(L->a, far4);
    return KILN_OK;
}

static void kiln__first_allocation(kiln__lossy *L, const double *reach, const double *pscale)
{
    for (uint32_t blk = 0; blk < L->blocks; blk++)
        for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) {
            unsigned best = 0;
            if (c == 6) { /* qw is never stored in a lossy clip: rebuilt, or a constant */
                kiln__lossy_apply(L, blk, c, 0);
                continue;
            }
            for (unsigned l = 0; l < KILN_SOA_WIDTH; l++) {
                uint32_t j = blk * KILN_SOA_WIDTH + l;
                const float *v = kiln__anim_track(L->an, j, c);
                if (!v || j >= L->nj || L->joint_node[j] == UINT32_MAX) continue;
                uint32_t nd = L->joint_node[j];
                const kiln__node *N = &L->node[nd];
                double lo = v[0], hi = v[0], big = 0.0, qfac = 1.0;
                for (uint32_t r = 0; r < L->n; r++) {
                    lo = v[r] < lo ? v[r] : lo, hi = v[r] > hi ? v[r] : hi;
                    if (fabs(v[r]) > big) big = fabs(v[r]);
                    if (c >= 3 && c <= 5) {
                        double w = kiln__anim_track(L->an, j, 6)[r], f = fabs(v[r]) / (w > 0.02 ? w : 0.02);
                        if (sqrt(1 + f * f) > qfac) qfac = sqrt(1 + f * f);
                    }
                }
                const float *ab = L->an->joints[j].ab;
                double sens = c < 3 ? pscale[nd] * fmax(1.0, fabs(ab[0]))
                            : c < 7 ? 2.0 * reach[nd] * qfac * fmax(1.0, fabs(ab[1]))
                                    : reach[nd] / fmax(fmin(fabs(lo), fabs(hi)), 1e-3) * fmax(1.0, fabs(ab[2]));
                double budget = 0.6 * L->target / sqrt(9.0 * (N->depth + N->height + 1));
                double delta = budget / fmax(sens, 1e-12) - 2e-7 * big; /* minus float rounding */
                unsigned s = 0;
                while (s < KILN__STEPS - 1) {
                    uint32_t w = kiln__widths[s];
                    double half = w == 0 ? 0.5 * (hi - lo) : 0.5 * (hi - lo) / (double)((1u << w) - 1u);
                    if (half <= delta) break;
                    s++;
                }
                if (s > best) best = s;
            }
            kiln__lossy_apply(L, blk, c, best);
        }
}

/* The blocks' first frame orders, before any candidate of theirs passed: by the errors of the
 * full measurement in L->frame_err, each node's relative to the larger of its largest error and
 * the first share of the target (its first allowance), the largest in the block's subtrees
 * first. Only how soon a failing candidate fails depends on it. */
static void kiln__first_orders(kiln__lossy *L, double share, double *sub, double *score)
{
    for (uint32_t r = 0; r < L->n; r++) {
        const double *e2 = L->frame_err + (size_t)r * L->nodes;
        for (uint32_t i = 0; i < L->nodes; i++) {
            double d = L->node_err[i] > share * L->target ? L->node_err[i] : share * L->target;
            sub[i] = d > 0.0 ? e2[i] / (d * d) : 0.0;
        }
        for (uint32_t i = L->nodes; i-- > 0;) { /* children follow their parents */
            int32_t p = L->node[i].parent;
            if (p >= 0 && sub[i] > sub[p]) sub[p] = sub[i];
        }
        for (uint32_t blk = 0; blk < L->blocks; blk++) score[(size_t)blk * L->n + r] = 0.0;
        for (uint32_t i = 0; i < L->nodes; i++) {
            uint32_t blk = L->node_block[i];
            if (blk != UINT32_MAX && sub[i] > score[(size_t)blk * L->n + r]) score[(size_t)blk * L->n + r] = sub[i];
        }
    }
    for (uint32_t blk = 0; blk < L->blocks; blk++) {
        uint32_t *order = L->block_order + (size_t)blk * L->n;
        for (uint32_t f = 0; f < L->n; f++) order[f] = f;
        kiln__lossy_sort_frames(order, L->n, score + (size_t)blk * L->n);
    }
}

/* Widens every track of the blocks driving nodes that miss the target, and their ancestors'.
 * Returns 0 when nothing could be widened. */
static int kiln__widen(kiln__lossy *L)
{
    uint8_t *hit = L->need; /* reused as a per-block flag array (blocks <= nodes + joints) */
    memset(hit, 0, L->blocks);
    for (uint32_t i = 0; i < L->nodes; i++) {
        if (L->node_err[i] <= L->target) continue;
        for (int32_t at = (int32_t)i; at >= 0; at = L->node[at].parent)
            if (L->node[at].joint != UINT32_MAX) hit[L->node[at].joint / KILN_SOA_WIDTH] = 1;
    }
    int any = 0;
    for (uint32_t blk = 0; blk < L->blocks; blk++) {
        if (!hit[blk]) continue;
        for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) {
            unsigned s = L->step[blk * KILN_ANIM_COMPONENTS + c];
            if (c == 6 || s + 1 >= KILN__STEPS) continue;
            kiln__lossy_apply(L, blk, c, s + 1);
            any = 1;
        }
    }
    return any;
}

/* One pass of narrowing. A track narrows when no joint it moves ends above `share` of the
 * target, or above its current error if that is higher already: so every track is judged on
 * what it adds itself, not on the budget earlier tracks have used, and rising shares hand
 * the bound out evenly. Returns how many tracks narrowed. */
static uint32_t kiln__narrow(kiln__lossy *L, double share, double *cur, double *allowed)
{
    uint32_t narrowed = 0;
    for (uint32_t blk = 0; blk < L->blocks; blk++) {
        kiln__lossy_select(L, blk);
        for (uint32_t i = 0; i < L->nodes; i++) {
            double own = cur[i] * (1.0 + 1e-6) + 1e-12, base = share * L->target;
            allowed[i] = own > base ? own : base;
            if (allowed[i] > L->target) allowed[i] = L->target;
        }
        for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) {
            unsigned s = L->step[blk * KILN_ANIM_COMPONENTS + c];
            if (c == 6 || s == 0) continue;
            /* The narrowest width that passes, by bisection over the widths below the current
             * one (the error grows as the width shrinks). */
            kiln__anim_plan kept = L->plan[blk * KILN_ANIM_COMPONENTS + c];
            for (unsigned l = 0; l < KILN_SOA_WIDTH && blk * KILN_SOA_WIDTH + l < L->nj; l++)
                memcpy(L->backup + (size_t)l * L->n, kiln__dec(L, blk * KILN_SOA_WIDTH + l, c), L->n * sizeof(float));
            unsigned lo = 0, hi = s, best = s;
            L->lazy = 1, L->lazy_blk = blk, L->lazy_c = c;
            while (lo < hi) {
                unsigned mid = (lo + hi) / 2;
                kiln__lossy_apply_plan(L, blk, c, mid);
                kiln__lossy_lazy_lanes(L, blk, c);
                memset(L->lazy_done, 0, L->n);
                if (kiln__lossy_measure(L, blk, allowed, 0) <= L->target) {
                    /* every frame was measured, so decoded */
                    kiln__lossy_keep(L, blk); /* the cache follows the new encoding */
                    if (kiln__widths[mid] == KILN__CLIP_RAW) {
                        kiln__anim_plan *pl = &L->plan[blk * KILN_ANIM_COMPONENTS + c];
                        memset(pl->range_min, 0, sizeof pl->range_min), memset(pl->range_extent, 0, sizeof pl->range_extent);
                    }
                    best = hi = mid;
                    kept = L->plan[blk * KILN_ANIM_COMPONENTS + c];
                    for (unsigned l = 0; l < KILN_SOA_WIDTH && blk * KILN_SOA_WIDTH + l < L->nj; l++)
                        memcpy(L->backup + (size_t)l * L->n, kiln__dec(L, blk * KILN_SOA_WIDTH + l, c),
                               L->n * sizeof(float));
                    for (uint32_t i = 0; i < L->nodes; i++)
                        if (L->measure[i]) cur[i] = L->node_err[i];
                } else {
                    lo = mid + 1;
                }
            }
            /* restore the best passing state (or the original one) */
            L->plan[blk * KILN_ANIM_COMPONENTS + c] = kept;
            L->step[blk * KILN_ANIM_COMPONENTS + c] = (uint8_t)best;
            for (unsigned l = 0; l < KILN_SOA_WIDTH && blk * KILN_SOA_WIDTH + l < L->nj; l++)
                memcpy(kiln__dec(L, blk * KILN_SOA_WIDTH + l, c), L->backup + (size_t)l * L->n, L->n * sizeof(float));
            L->lazy = 0;
            if (best < s && c >= 3 && c <= 6) memset(L->rot_done + (size_t)blk * L->n, 0, L->n);
            narrowed += best < s;
        }
    }
    return narrowed;
}

/* ---- entry ----------------------------------------------------------------------------------- */

/* `size` bytes from a 64-byte boundary (so that a 96-byte transform at a multiple of 32 bytes
 * spans two cache lines, not three), the allocation itself in *block (NULL when it failed). */
static void *kiln__alloc_lines(const kiln_allocator *a, size_t size, void **block)
{
    *block = kiln__realloc(a, NULL, size + 64);
    return *block ? (void *)(((uintptr_t)*block + 63u) & ~(uintptr_t)63u) : NULL;
}

static kiln_result kiln__allocate(kiln__lossy *L, const kiln__skeleton *sk, double *max_error, int *met)
{
    size_t dense = (size_t)L->nj * KILN_ANIM_COMPONENTS * L->n;
    L->joint_node = kiln__realloc(L->a, NULL, (size_t)L->nj * sizeof *L->joint_node + 1);
    L->modes = kiln__realloc(L->a, NULL, (size_t)L->nj * sizeof *L->modes + 1);
    L->plan = kiln__realloc(L->a, NULL, (size_t)L->blocks * KILN_ANIM_COMPONENTS * sizeof *L->plan + 1);
    L->step = kiln__realloc(L->a, NULL, (size_t)L->blocks * KILN_ANIM_COMPONENTS + 1);
    L->dec = kiln__realloc(L->a, NULL, dense * sizeof(float) + 1);
    L->backup = kiln__realloc(L->a, NULL, (size_t)KILN_SOA_WIDTH * L->n * sizeof(float));
    if (!L->joint_node || !L->modes || !L->plan || !L->step || !L->dec || !L->backup) return KILN_ERR_OUT_OF_MEMORY;
    memset(L->plan, 0, (size_t)L->blocks * KILN_ANIM_COMPONENTS * sizeof *L->plan);
    L->range = kiln__realloc(L->a, NULL, (size_t)L->blocks * KILN_ANIM_COMPONENTS * KILN_SOA_WIDTH * 2 * sizeof(float));
    if (!L->range) return KILN_ERR_OUT_OF_MEMORY;
    for (uint32_t blk = 0; blk < L->blocks; blk++)
        for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++)
            for (unsigned l = 0; l < KILN_SOA_WIDTH; l++) {
                const float *v = kiln__anim_track(L->an, blk * KILN_SOA_WIDTH + l, c);
                float lo = v ? v[0] : kiln__anim_identity(c), hi = lo;
                for (uint32_t r = 1; v && r < L->n; r++) lo = v[r] < lo ? v[r] : lo, hi = v[r] > hi ? v[r] : hi;
                float *range = L->range + ((size_t)(blk * KILN_ANIM_COMPONENTS + c) * KILN_SOA_WIDTH + l) * 2;
                range[0] = lo, range[1] = hi;
            }
    memset(L->step, 0, (size_t)L->blocks * KILN_ANIM_COMPONENTS);
    kiln_result r = kiln__nodes(L, sk);
    if (r != KILN_OK) return r;
    /* The caches: four transforms per node and frame. Too large for the limit or for memory,
     * the clip is not quantised (*met stays 0, L->cache_nodes says why). */
    size_t frames_nodes = (size_t)L->n * L->nodes;
    L->cache_nodes = frames_nodes;
    if (L->cache_nodes > KILN__CACHE_LIMIT) return KILN_OK;
    L->raw_world = kiln__alloc_lines(L->a, frames_nodes * sizeof(kiln__wxf), &L->blocks_of[0]);
    L->world = kiln__alloc_lines(L->a, frames_nodes * sizeof(kiln__wxf), &L->blocks_of[1]);
    L->local = kiln__alloc_lines(L->a, frames_nodes * sizeof(kiln__loc), &L->blocks_of[2]);
    L->scale = kiln__alloc_lines(L->a, frames_nodes * sizeof(kiln__scl), &L->blocks_of[3]);
    L->cand_lanes = L->nj < KILN_SOA_WIDTH ? L->nj : KILN_SOA_WIDTH; /* lanes: joint index % KILN_SOA_WIDTH */
    size_t cand = (size_t)L->n * L->cand_lanes > L->nodes ? (size_t)L->n * L->cand_lanes : L->nodes;
    L->cand = kiln__realloc(L->a, NULL, cand * sizeof(kiln__loc) + 1);
    L->cand_scale = kiln__realloc(L->a, NULL, cand * sizeof(kiln__scl) + 1);
    L->scratch = kiln__realloc(L->a, NULL, (size_t)L->nodes * sizeof(kiln__wxf) + 1);
    L->path = kiln__realloc(L->a, NULL, (size_t)L->nodes * sizeof *L->path + 1);
    L->w_valid = kiln__realloc(L->a, NULL, (size_t)L->nodes + 1);
    L->block_stale = kiln__realloc(L->a, NULL, (size_t)L->blocks + 1);
    L->order = kiln__realloc(L->a, NULL, (size_t)L->n * sizeof *L->order + 1);
    L->block_order = kiln__realloc(L->a, NULL, (size_t)L->blocks * L->n * sizeof *L->block_order + 1);
    L->score = kiln__realloc(L->a, NULL, (size_t)L->n * sizeof *L->score + 1);
    L->steps = kiln__realloc(L->a, NULL, (size_t)L->nodes * sizeof *L->steps + 1);
    L->lazy_done = kiln__realloc(L->a, NULL, (size_t)L->n + 1);
    L->rot_done = kiln__realloc(L->a, NULL, (size_t)L->blocks * L->n + 1);
    L->tried = kiln__realloc(L->a, NULL, (size_t)L->n * sizeof *L->tried + 1);
    L->frame_err = kiln__realloc(L->a, NULL, frames_nodes * sizeof *L->frame_err + 1); /* may be NULL */
    L->rot = kiln__realloc(L->a, NULL, (size_t)L->blocks * L->n * KILN_SOA_WIDTH * 9 * sizeof(double) + 1);
    L->hot = kiln__realloc(L->a, NULL, (size_t)L->blocks * KILN__HOT * sizeof *L->hot + 1);
    L->node_block = kiln__realloc(L->a, NULL, (size_t)L->nodes * sizeof *L->node_block + 1);
    if (!L->node_block) return KILN_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < L->nodes; i++)
        L->node_block[i] = L->node[i].joint == UINT32_MAX ? UINT32_MAX : L->node[i].joint / KILN_SOA_WIDTH;
    if (!L->order || !L->lazy_done || !L->hot || !L->block_order || !L->score || !L->steps || !L->rot_done || !L->rot || !L->tried)
        return KILN_ERR_OUT_OF_MEMORY;
    if (!L->w_valid || !L->scratch || !L->path) return KILN_ERR_OUT_OF_MEMORY;
    if (!L->block_stale) return KILN_ERR_OUT_OF_MEMORY;
    memset(L->w_valid, 0, L->nodes);
    memset(L->block_stale, 1, L->blocks);
    if (!L->raw_world || !L->world || !L->local || !L->scale || !L->cand || !L->cand_scale) {
        L->cache_nodes = UINT64_MAX; /* no memory for them */
        return KILN_OK;
    }
    memset(L->rot_done, 0, (size_t)L->blocks * L->n);
    memset(L->tried, 0, (size_t)L->n * sizeof *L->tried);
    memset(L->hot, 0xff, (size_t)L->blocks * KILN__HOT * sizeof *L->hot);
    for (uint32_t blk = 0; blk < L->blocks; blk++) L->block_order[(size_t)blk * L->n] = UINT32_MAX;
    for (uint32_t k = 0, s = 0; s < 4; s++)
        for (uint32_t f = s; f < L->n; f += 4) L->order[k++] = f;
    uint32_t cap = L->nodes > L->blocks ? L->nodes : L->blocks;
    size_t per_node = 7 * sizeof(double) + sizeof(uint32_t) + 2;
    unsigned char *scratch = kiln__realloc(L->a, NULL, (size_t)cap * per_node + 1);
    if (!scratch) return KILN_ERR_OUT_OF_MEMORY;
    L->node_err = (double *)(void *)scratch;
    double *reach = L->node_err + cap, *pscale = reach + cap, *cur = pscale + cap, *allowed = cur + cap;
    L->limit2 = allowed + cap;
    L->limit_of = L->limit2 + cap;
    for (uint32_t i = 0; i < cap; i++) L->limit_of[i] = -1.0; /* no allowance is negative */
    L->list = (uint32_t *)(void *)(L->limit_of + cap);
    L->need = (uint8_t *)(L->list + cap);
    L->measure = L->need + cap;

    kiln__lossy_raw_worlds(L);
    r = kiln__stats(L, reach, pscale);
    if (r == KILN_OK) kiln__first_allocation(L, reach, pscale);
    double err = INFINITY;
    if (r == KILN_OK) {
        kiln__lossy_select(L, UINT32_MAX);
        err = kiln__lossy_measure(L, UINT32_MAX, NULL, 1);
    }
    while (r == KILN_OK && err > L->target) {
        if (!kiln__widen(L)) break;
        kiln__lossy_select(L, UINT32_MAX);
        err = kiln__lossy_measure(L, UINT32_MAX, NULL, 1);
    }
    *met = r == KILN_OK && err <= L->target;
    if (*met) {
        static const double share[] = {0.25, 0.5, 0.7, 0.85, 1.0};
        /* the first orders need the last full measurement's errors (without memory for them,
         * the blocks start from every 4th frame) */
        double *first = L->frame_err ? kiln__realloc(L->a, NULL, ((size_t)L->nodes + (size_t)L->blocks * L->n) *
                                                                     sizeof(double) + 1) : NULL;
        if (first) kiln__first_orders(L, share[0], first, first + L->nodes);
        kiln__free(L->a, first);
        kiln__free(L->a, L->frame_err), L->frame_err = NULL;
        memcpy(cur, L->node_err, L->nodes * sizeof *cur);
        for (unsigned k = 0; k < sizeof share / sizeof share[0]; k++)
            for (int pass = 0; pass < 3 && kiln__narrow(L, share[k], cur, allowed); pass++) {}
        kiln__lossy_select(L, UINT32_MAX);
        err = kiln__lossy_measure(L, UINT32_MAX, NULL, 1);
    }
    *max_error = err;
    kiln__free(L->a, scratch);
    L->need = L->measure = NULL;
    L->list = NULL;
    L->node_err = L->limit2 = L->limit_of = NULL;
    return r;
}

kiln_result kiln__encode_lossy(const kiln_allocator *a, const kiln_bake_options *o, const kiln_diag_sink *sink,
                               kiln__anim *an, const kiln__skeleton *skeleton, int *met)
{
    *met = 0;
    double bound = o->anim_error_m, distance = o->anim_distance_m; /* normalised by kiln_bake */
    /* Stored rotations have qw >= 0: the runtime rebuilds qw as a non-negative root. */
    for (uint32_t j = 0; j < an->joint_count; j++) {
        float *v = an->joints[j].values;
        if (!v) continue;
        for (uint32_t r = 0; r < an->frame_count; r++)
            if (v[(size_t)6 * an->frame_count + r] < 0.0f)
                for (unsigned c = 3; c < 7; c++) v[(size_t)c * an->frame_count + r] = -v[(size_t)c * an->frame_count + r];
    }
    kiln__lossy L;
    memset(&L, 0, sizeof L);
    L.an = an;
    L.a = a;
    L.n = an->frame_count;
    L.nj = an->joint_count;
    L.blocks = (an->joint_count + KILN_SOA_WIDTH - 1) / KILN_SOA_WIDTH;
    L.steps_blk = UINT32_MAX;
    L.target = 0.97 * bound;
    L.distance = distance;
#if KILN__WORLD_AVX2
    L.avx2 = kiln__world_avx2_ok();
#endif
    double err = 0.0;
    kiln_result r = kiln__allocate(&L, skeleton, &err, met);
    if (r == KILN_OK && *met) r = kiln__anim_layout(a, an, L.plan, 1);
    if (r == KILN_OK && *met) {
        an->flags |= KILN_ANIM_LOSSY;
        an->error_bound_m = (float)bound;
        an->error_distance_m = (float)distance;
        an->max_error_m = (float)err;
    } else if (r == KILN_OK && L.cache_nodes > KILN__CACHE_LIMIT) {
        kiln__bake_report(sink, KILN_ERR_LIMIT, KILN_SEVERITY_WARNING, NULL, NULL, KILN_NO_OFFSET,
                          "animation '%s': %u joints x %u frames is too long for the lossy encoder (%s); stored lossless",
                          an->name, an->joint_count, an->frame_count,
                          L.cache_nodes == UINT64_MAX ? "out of memory" : "too many joints x frames for its evaluation caches");
    } else if (r == KILN_OK) {
        kiln__bake_report(sink, KILN_ERR_LIMIT, KILN_SEVERITY_WARNING, NULL, NULL, KILN_NO_OFFSET,
                          "animation '%s': no quantisation meets %g m at %g m (best %g m); stored lossless", an->name,
                          bound, distance, err);
    }
    kiln__free(a, L.joint_node);
    kiln__free(a, L.modes);
    kiln__free(a, L.plan);
    kiln__free(a, L.step);
    kiln__free(a, L.dec);
    kiln__free(a, L.backup);
    kiln__free(a, L.node);
    for (int b = 0; b < 4; b++) kiln__free(a, L.blocks_of[b]);
    kiln__free(a, L.cand);
    kiln__free(a, L.cand_scale);
    kiln__free(a, L.scratch);
    kiln__free(a, L.path);
    kiln__free(a, L.w_valid);
    kiln__free(a, L.block_stale);
    kiln__free(a, L.order);
    kiln__free(a, L.node_block);
    kiln__free(a, L.hot);
    kiln__free(a, L.block_order);
    kiln__free(a, L.score);
    kiln__free(a, L.steps);
    kiln__free(a, L.range);
    kiln__free(a, L.lazy_done);
    kiln__free(a, L.rot_done);
    kiln__free(a, L.tried);
    kiln__free(a, L.frame_err);
    kiln__free(a, L.rot);
    return r;
}
