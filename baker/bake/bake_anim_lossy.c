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
 * Step 3 dominates the bake. The raw worlds are computed once; the decoded locals and worlds of
 * the encoding as it stands are kept per frame, so a candidate width recomputes only its own
 * block's locals and the worlds below them. A candidate is decoded frame by frame as it is
 * measured and stops at the first frame over an allowance, trying first the last frames its
 * block's candidates failed at, then the frames by the margin the block's last passing
 * candidate left, the tightest first (before any passed: every 4th frame); the one that passes
 * keeps its transforms for the cache. A translation candidate recomposes translations only.
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

#include "bake_anim.h"
#include "bake_anim_world.h"
#include "bake_report.h"
#include "ds.h"
#include "math_f64.h"

/* The error evaluation's SSE2 paths (x86-64 always has SSE2): the same IEEE operations in the
 * same order as the portable code, two doubles at a time. */
#if defined(__SSE2__) && !defined(KILN_FORCE_SCALAR)
#include <emmintrin.h>
#define KILN__SSE2 1
#else
#define KILN__SSE2 0
#endif

#define KILN__STEPS 24
static const uint32_t kiln__widths[KILN__STEPS] = {0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 32};

/* Frames used for the sensitivity statistics (every frame is used for measuring). */
#define KILN__STAT_FRAMES 512u
/* The most the per-frame caches may take (960 bytes per node and frame); a longer clip is
 * stored lossless, with a warning. */
#define KILN__CACHE_LIMIT ((uint64_t)1 << 31)
/* Failing frames remembered per block. */
#define KILN__HOT 16u

typedef struct kiln__node {
    int32_t  parent;       /* node index (lower), -1 for roots */
    uint32_t ssc;
    uint32_t joint;        /* clip joint driving it, or UINT32_MAX */
    uint32_t depth, height;
    double   rest[KILN_ANIM_COMPONENTS];
} kiln__node;

/* A local transform ready to compose: the rotation's columns scaled by s (before any segment
 * scale compensation), the translation and the scale. */
typedef struct kiln__loc {
    double rs[9];
    double t[3];
    double s[3];
    double r[9];           /* the rotation alone */
} kiln__loc;

/* A measured node as a measurement visits it: whether its block's and its parent's locals are
 * the candidate's, and whether its parent's world is. */
typedef struct kiln__step {
    uint32_t node;
    int32_t  parent;
    uint8_t  own, ssc;
    /* banks (kiln__lossy.world, .local): the node's world as cached and as measured, its
     * local as cached and as measured (own only), its parent's world and local as read */
    uint8_t  w_dec, w_new, l_dec, l_new, pw, pl;
} kiln__step;

typedef struct kiln__lossy {
    const kiln__anim *an;
    const kiln_allocator *a;
    uint32_t n, nj, blocks, nodes;
    kiln__node *node;
    uint32_t *joint_node;
    uint32_t *node_block;  /* per node: the block of its joint, UINT32_MAX for none */
    uint32_t *modes;       /* per joint, overrides resolved */
    kiln__anim_plan *plan; /* blocks x KILN_ANIM_COMPONENTS */
    uint8_t *step;         /* index into kiln__widths, per plan */
    float *range;          /* per plan and lane: the lowest and the highest value (2 floats) */
    float *dec;            /* decoded values, joint-major like the raw ones */
    float *backup;         /* one track's lanes: KILN_SOA_WIDTH x n */
    uint8_t *need, *measure;
    uint32_t *list, listed; /* the nodes flagged in measure, in order */
    kiln__step *steps;     /* per listed node, during a measurement */
    double *node_err;      /* per node: largest error of the last measurement */
    double *limit2;        /* per node: the largest squared error within its allowance */
    double target, distance;
    int avx2;              /* the AVX2 kernels of bake_anim_world_avx2.c run on this CPU */
    uint64_t cache_bytes;  /* what the caches need; above KILN__CACHE_LIMIT none are made */
    /* Per frame and node (frame-major): the raw world transforms, and three banks of decoded
     * local and world transforms. Per node, one bank holds the encoding as it stands (the
     * cache: w_bank, l_bank), one the narrowest candidate that passed (w_best, l_best), the
     * third the candidate being measured; the cache takes the passing candidate by swapping
     * the node's bank numbers, without copying. A candidate for one block recomputes the
     * locals of that block's joints and the worlds of their subtrees only; everything else is
     * read from the cache, the same doubles the full evaluation computes. */
    kiln__wxf *raw_world, *world[3];
    kiln__loc *local[3];
    uint8_t *w_bank, *w_best, *l_bank, *l_best; /* per node */
    uint32_t *hot;         /* per block: the KILN__HOT frames its candidates last failed at, the
                            * latest first (UINT32_MAX: none), tried first */
    uint32_t *order;       /* frames, every 4th first: a failing candidate fails early */
    uint32_t *block_order; /* per block (n frames each, UINT32_MAX first when unset): the frames
                            * by the margin its last passing candidate left, the tightest first */
    double *score;         /* per frame: the tightest margin of the measurement under way */
    /* A candidate's track is decoded frame by frame as it is measured (a failing one is
     * usually rejected after a few frames): lazy_done flags the decoded frames. */
    int lazy;
    uint32_t lazy_blk;
    unsigned lazy_c;
    struct {                /* the candidate's lanes, resolved once (kiln__lazy_lanes) */
        const float *v;    /* the raw track, NULL for none */
        float *d;          /* its decoded values in L->dec */
        float lo, extent, step, constant;
    } lazy_lane[KILN_SOA_WIDTH];
    unsigned lazy_lanes;
    uint8_t *lazy_done;
} kiln__lossy;

/* ---- quantisation ------------------------------------------------------------------------ */

/* kiln__anim_quantize with the lane's step (kiln__clip_step(extent, width)) given. */
static uint32_t kiln__quantize_step(float x, float min, float extent, uint32_t width, float step)
{
    uint32_t top = (1u << width) - 1u;
    if (!(extent > 0.0f)) return 0;
    double f = ((double)x - min) / extent * top;
    uint32_t q = f <= 0.0 ? 0u : f >= top ? top : (uint32_t)(f + 0.5);
    uint32_t best = q;
    float err = fabsf(kiln__clip_dequant(q, min, step) - x);
    for (int d = -1; d <= 1; d += 2) {
        if ((d < 0 && q == 0) || (d > 0 && q == top)) continue;
        uint32_t c = q + (uint32_t)d;
        float e = fabsf(kiln__clip_dequant(c, min, step) - x);
        if (e < err) err = e, best = c;
    }
    return best;
}

uint32_t kiln__anim_quantize_step(float x, float min, float extent, uint32_t width, float step)
{
    return kiln__quantize_step(x, min, extent, width, step);
}

uint32_t kiln__anim_quantize(float x, float min, float extent, uint32_t width)
{
    return kiln__quantize_step(x, min, extent, width, kiln__clip_step(extent, width));
}

/* ---- plans and decoded values ----------------------------------------------------------------- */

static float *kiln__dec(kiln__lossy *L, uint32_t joint, unsigned c)
{
    return L->dec + ((size_t)joint * KILN_ANIM_COMPONENTS + c) * L->n;
}

/* Sets the plan of (blk, c) to width index `step`: its width and per-lane ranges. */
static void kiln__apply_plan(kiln__lossy *L, uint32_t blk, unsigned c, unsigned step)
{
    kiln__anim_plan *pl = &L->plan[blk * KILN_ANIM_COMPONENTS + c];
    L->step[blk * KILN_ANIM_COMPONENTS + c] = (uint8_t)step;
    pl->width = kiln__widths[step];
    for (unsigned l = 0; l < KILN_SOA_WIDTH; l++) {
        const float *range = L->range + ((size_t)(blk * KILN_ANIM_COMPONENTS + c) * KILN_SOA_WIDTH + l) * 2;
        float lo = range[0], hi = range[1];
        pl->range_min[l] = lo;
        pl->range_extent[l] = hi - lo;
        pl->constant[l] = (float)(0.5 * ((double)lo + hi));
    }
}

/* Resolves the lanes of (blk, c) by its plan as it stands, for kiln__decode_lazy. */
static void kiln__lazy_lanes(kiln__lossy *L, uint32_t blk, unsigned c)
{
    L->lazy_blk = blk, L->lazy_c = c;
    const kiln__anim_plan *pl = &L->plan[blk * KILN_ANIM_COMPONENTS + c];
    L->lazy_lanes = 0;
    for (unsigned l = 0; l < KILN_SOA_WIDTH && blk * KILN_SOA_WIDTH + l < L->nj; l++) {
        uint32_t j = blk * KILN_SOA_WIDTH + l;
        L->lazy_lane[l].v = kiln__anim_track(L->an, j, c);
        L->lazy_lane[l].d = kiln__dec(L, j, c);
        L->lazy_lane[l].lo = pl->range_min[l];
        L->lazy_lane[l].extent = pl->range_extent[l];
        L->lazy_lane[l].step = kiln__clip_step(pl->range_extent[l], pl->width);
        L->lazy_lane[l].constant = pl->constant[l];
        L->lazy_lanes = l + 1;
    }
}

/* Decodes frame r of the track kiln__lazy_lanes resolved into L->dec: the value the runtime
 * reads back. */
static void kiln__decode_lazy(kiln__lossy *L, uint32_t r)
{
    uint32_t w = L->plan[L->lazy_blk * KILN_ANIM_COMPONENTS + L->lazy_c].width;
    for (unsigned l = 0; l < L->lazy_lanes; l++) {
        const float *v = L->lazy_lane[l].v;
        float lo = L->lazy_lane[l].lo, x = v ? v[r] : lo;
        if (w == 0) {
            L->lazy_lane[l].d[r] = L->lazy_lane[l].constant;
        } else if (w == KILN__CLIP_RAW) {
            L->lazy_lane[l].d[r] = x;
        } else {
            float step = L->lazy_lane[l].step;
            L->lazy_lane[l].d[r] = kiln__clip_dequant(kiln__quantize_step(x, lo, L->lazy_lane[l].extent, w, step), lo, step);
        }
    }
}

/* Sets the plan of (blk, c) to width index `step` and decodes it into L->dec. */
static void kiln__apply(kiln__lossy *L, uint32_t blk, unsigned c, unsigned step)
{
    kiln__apply_plan(L, blk, c, step);
    kiln__lazy_lanes(L, blk, c);
    for (uint32_t r = 0; r < L->n; r++) kiln__decode_lazy(L, r);
    kiln__anim_plan *pl = &L->plan[blk * KILN_ANIM_COMPONENTS + c];
    if (pl->width == KILN__CLIP_RAW) memset(pl->range_min, 0, sizeof pl->range_min), memset(pl->range_extent, 0, sizeof pl->range_extent);
}

/* Whether the runtime rebuilds qw in this block (a width-0 plan stores no track). */
static int kiln__qw_rebuilt(const kiln__lossy *L, uint32_t blk)
{
    const uint8_t *s = &L->step[blk * KILN_ANIM_COMPONENTS];
    return kiln__clip_rebuilds_qw(1, s[3] || s[4] || s[5]);
}

/* ---- evaluation -------------------------------------------------------------------------------- */

/* A translation or scale component by its mode over the rest value v0 (key k; ab: the
 * joint's additive weights, read for ADDITIVE only). */
static double kiln__translation(uint32_t mode, double v0, double k, const float *ab)
{
    return mode == KILN_MODE_ABSOLUTE ? k : mode == KILN_MODE_RELATIVE ? v0 + k
         : mode == KILN_MODE_ADDITIVE ? v0 + ab[0] * k : v0;
}

static double kiln__scale(uint32_t mode, double v0, double k, const float *ab)
{
    return mode == KILN_MODE_ABSOLUTE ? k : mode == KILN_MODE_RELATIVE ? v0 * k
         : mode == KILN_MODE_ADDITIVE ? v0 * (1.0 + ab[2] * (k - 1.0)) : v0;
}

static void kiln__rotation(uint32_t mr, const double *rest, const double kq[4], const float *ab, double q[4]);

/* The local transform of `nd` at frame r from raw (dec == 0) or decoded values, composed with
 * the rest pose by the joint's modes (the runtime's table, with the rest pose underneath). */
static void kiln__local(const kiln__lossy *L, uint32_t nd, uint32_t r, int dec, double t[3], double q[4], double s[3],
                        int rot)
{
    const kiln__node *N = &L->node[nd];
    const double *rest = N->rest;
    double k[KILN_ANIM_COMPONENTS];
    uint32_t j = N->joint, modes = j == UINT32_MAX ? 0u : L->modes[j];
    if (j != UINT32_MAX && dec) {
        const float *d = L->dec + (size_t)j * KILN_ANIM_COMPONENTS * L->n + r;
        for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) k[c] = d[(size_t)c * L->n];
    } else {
        for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) {
            const float *v = j == UINT32_MAX ? NULL : kiln__anim_track(L->an, j, c);
            k[c] = v ? v[r] : kiln__anim_identity(c);
        }
    }
    if (dec && j != UINT32_MAX && kiln__qw_rebuilt(L, j / KILN_SOA_WIDTH))
        k[6] = kiln__clip_rebuild_qw((float)k[3], (float)k[4], (float)k[5]);
    const float *ab = j == UINT32_MAX ? NULL : L->an->joints[j].ab;
    for (unsigned c = 0; c < 3; c++) {
        t[c] = kiln__translation(modes >> (2 * c) & 3u, rest[c], k[c], ab);
        s[c] = kiln__scale(modes >> (2 * (7 + c)) & 3u, rest[7 + c], k[7 + c], ab);
    }
    if (!rot) return;
    double kq[4] = {k[3], k[4], k[5], k[6]};
    kiln__rotation(modes >> 6 & 3u, rest, kq, ab, q);
}

/* The rotation by its mode mr over the rest rotation rest[3..6] (key kq). */
static void kiln__rotation(uint32_t mr, const double *rest, const double kq[4], const float *ab, double q[4])
{
    double r0[4] = {rest[3], rest[4], rest[5], rest[6]};
    if (mr == KILN_MODE_ABSOLUTE) {
        memcpy(q, kq, 4 * sizeof *kq);
    } else if (mr == KILN_MODE_RELATIVE) {
        kiln__qmul(r0, kq, q);
    } else if (mr == KILN_MODE_ADDITIVE) {
        double p[4];
        kiln__qpow(kq, ab[1], p);
        kiln__qmul(r0, p, q);
    } else {
        memcpy(q, r0, sizeof r0);
    }
}

/* out's rotation and scaled rotation from the rotation q and out->s. */
static void kiln__local_finish(const double q[4], kiln__loc *out)
{
    double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    double inv = n2 > 0 ? 1.0 / sqrt(n2) : 0.0;
    double x = q[0] * inv, y = q[1] * inv, z = q[2] * inv, ww = q[3] * inv;
    double unit[4] = {x, y, z, ww};
    kiln__qto_mat3(unit, out->r);
    for (int col = 0; col < 3; col++)
        for (int row = 0; row < 3; row++) out->rs[col * 3 + row] = out->r[col * 3 + row] * out->s[col];
}

/* The local transform of nd at frame r, ready to compose (kiln__compose). */
static void kiln__local_xf(const kiln__lossy *L, uint32_t nd, uint32_t r, int dec, kiln__loc *out)
{
    double q[4];
    kiln__local(L, nd, r, dec, out->t, q, out->s, 1);
    kiln__local_finish(q, out);
}

/* kiln__local_xf from the decoded values when only rotation components differ from `same`,
 * the node's local at this frame as the cache holds it: its translation and scale, the
 * rotation recomputed, the same doubles. */
static void kiln__local_xf_rot(const kiln__lossy *L, uint32_t nd, uint32_t r, const kiln__loc *same, kiln__loc *out)
{
    const kiln__node *N = &L->node[nd];
    uint32_t j = N->joint;
    const float *d = L->dec + (size_t)j * KILN_ANIM_COMPONENTS * L->n + r;
    double kq[4] = {d[(size_t)3 * L->n], d[(size_t)4 * L->n], d[(size_t)5 * L->n], d[(size_t)6 * L->n]};
    if (kiln__qw_rebuilt(L, j / KILN_SOA_WIDTH)) kq[3] = kiln__clip_rebuild_qw((float)kq[0], (float)kq[1], (float)kq[2]);
    memcpy(out->t, same->t, sizeof out->t);
    memcpy(out->s, same->s, sizeof out->s);
    double q[4];
    kiln__rotation(L->modes[j] >> 6 & 3u, N->rest, kq, L->an->joints[j].ab, q);
    kiln__local_finish(q, out);
}

/* The same when only translation or scale component c (not a rotation one) differs from
 * `same`, the node's local at this frame as the cache holds it: `same` with that component
 * recomputed from the decoded value, the same doubles as kiln__local_xf. */
static void kiln__local_xf_one(const kiln__lossy *L, uint32_t nd, uint32_t r, unsigned c, const kiln__loc *same,
                               kiln__loc *out)
{
    const kiln__node *N = &L->node[nd];
    uint32_t j = N->joint, modes = L->modes[j];
    const float *ab = L->an->joints[j].ab;
    double k = L->dec[((size_t)j * KILN_ANIM_COMPONENTS + c) * L->n + r];
    *out = *same;
    if (c < 3) {
        out->t[c] = kiln__translation(modes >> (2 * c) & 3u, N->rest[c], k, ab);
        return;
    }
    unsigned col = c - 7;
    out->s[col] = kiln__scale(modes >> (2 * c) & 3u, N->rest[c], k, ab);
    for (int row = 0; row < 3; row++) out->rs[col * 3 + row] = out->r[col * 3 + row] * out->s[col];
}

/* World transform of nd from its local and its parent's world and local (C.1, segment scale
 * compensate); parent NULL for roots. Element (row, col) of the product is
 * (p[row]·l0 + p[3+row]·l1) + p[6+row]·l2, each product rounded; the SSE2 path computes rows
 * 0 and 1 of a column in one register with the same operations in the same order, so both
 * paths give the same doubles. */
static void kiln__compose(const kiln__lossy *L, uint32_t nd, const kiln__loc *lc, const kiln__wxf *pw,
                          const kiln__loc *pl, kiln__wxf *w)
{
    if (!pw) {
        memcpy(w->m, lc->rs, sizeof w->m);
        memcpy(w->t, lc->t, sizeof w->t);
        return;
    }
    double buf[9];
    const double *lm = lc->rs;
    if (L->node[nd].ssc) {
        for (int col = 0; col < 3; col++)
            for (int row = 0; row < 3; row++)
                buf[col * 3 + row] = lc->rs[col * 3 + row] / (pl->s[row] != 0.0 ? pl->s[row] : 1.0);
        lm = buf;
    }
#if KILN__WORLD_AVX2
    if (L->avx2) {
        kiln__world_mul_avx2(pw, lm, lc->t, w);
        return;
    }
#endif
    const double *p = pw->m;
#if KILN__SSE2
    __m128d p0 = _mm_loadu_pd(p), p1 = _mm_loadu_pd(p + 3), p2 = _mm_loadu_pd(p + 6);
    for (int col = 0; col < 3; col++) {
        const double *l = lm + col * 3;
        __m128d acc = _mm_add_pd(_mm_mul_pd(p0, _mm_set1_pd(l[0])), _mm_mul_pd(p1, _mm_set1_pd(l[1])));
        _mm_storeu_pd(w->m + col * 3, _mm_add_pd(acc, _mm_mul_pd(p2, _mm_set1_pd(l[2]))));
        w->m[col * 3 + 2] = p[2] * l[0] + p[5] * l[1] + p[8] * l[2];
    }
    __m128d t = _mm_add_pd(_mm_mul_pd(p0, _mm_set1_pd(lc->t[0])), _mm_mul_pd(p1, _mm_set1_pd(lc->t[1])));
    t = _mm_add_pd(_mm_add_pd(t, _mm_mul_pd(p2, _mm_set1_pd(lc->t[2]))), _mm_loadu_pd(pw->t));
    _mm_storeu_pd(w->t, t);
    w->t[2] = p[2] * lc->t[0] + p[5] * lc->t[1] + p[8] * lc->t[2] + pw->t[2];
#else
    for (int col = 0; col < 3; col++)
        for (int row = 0; row < 3; row++)
            w->m[col * 3 + row] = p[row] * lm[col * 3] + p[3 + row] * lm[col * 3 + 1] + p[6 + row] * lm[col * 3 + 2];
    for (int row = 0; row < 3; row++)
        w->t[row] = p[row] * lc->t[0] + p[3 + row] * lc->t[1] + p[6 + row] * lc->t[2] + pw->t[row];
#endif
}

/* kiln__compose when only the local translation differs from the one the cached world `same`
 * was composed with (the parent's world matrix and the local rotation and scale are the
 * cached ones): the matrix is the cached one, the translation is recomputed. */
static void kiln__compose_t(const kiln__lossy *L, const kiln__loc *lc, const kiln__wxf *pw, const kiln__wxf *same,
                            kiln__wxf *w)
{
    memcpy(w->m, same->m, sizeof w->m);
    if (!pw) {
        memcpy(w->t, lc->t, sizeof w->t);
        return;
    }
#if KILN__WORLD_AVX2
    if (L->avx2) {
        kiln__world_mul_t_avx2(pw, lc->t, w);
        return;
    }
#else
    (void)L;
#endif
    const double *p = pw->m;
    for (int row = 0; row < 3; row++)
        w->t[row] = p[row] * lc->t[0] + p[3 + row] * lc->t[1] + p[6 + row] * lc->t[2] + pw->t[row];
}

/* Largest squared distance between the raw and decoded positions of the origin and the three
 * virtual vertices of nd (its square root is the error: sqrt is monotonic, so the largest root
 * is the root of the largest square). A vertex's square is (d0² + d1²) + d2², with
 * d = dt + distance · (column difference); the SSE2 path forms the nine d² two at a time with
 * the same operations, then sums them in that order. */
static double kiln__point_error2(const kiln__lossy *L, const kiln__wxf *a, const kiln__wxf *b)
{
#if KILN__WORLD_AVX2
    if (L->avx2) return kiln__point_error2_avx2(a, b, L->distance);
#endif
    double dt[3] = {b->t[0] - a->t[0], b->t[1] - a->t[1], b->t[2] - a->t[2]};
    double worst = dt[0] * dt[0] + dt[1] * dt[1] + dt[2] * dt[2];
#if KILN__SSE2
    double sq[10]; /* (dt + distance · (b - a))² for the nine elements, column-major */
    __m128d dist = _mm_set1_pd(L->distance), d01 = _mm_loadu_pd(dt), d20 = _mm_set_pd(dt[0], dt[2]);
    __m128d d12 = _mm_loadu_pd(dt + 1);
    const __m128d pat[4] = {d01, d20, d12, d01};
    for (int k = 0; k < 4; k++) {
        __m128d d = _mm_sub_pd(_mm_loadu_pd(b->m + 2 * k), _mm_loadu_pd(a->m + 2 * k));
        d = _mm_add_pd(pat[k], _mm_mul_pd(dist, d));
        _mm_storeu_pd(sq + 2 * k, _mm_mul_pd(d, d));
    }
    double d8 = dt[2] + L->distance * (b->m[8] - a->m[8]);
    sq[8] = d8 * d8;
    for (int col = 0; col < 3; col++) {
        double e2 = sq[col * 3] + sq[col * 3 + 1];
        e2 += sq[col * 3 + 2];
        if (e2 > worst) worst = e2;
    }
#else
    for (int col = 0; col < 3; col++) {
        double e2 = 0;
        for (int row = 0; row < 3; row++) {
            double d = dt[row] + L->distance * (b->m[col * 3 + row] - a->m[col * 3 + row]);
            e2 += d * d;
        }
        if (e2 > worst) worst = e2;
    }
#endif
    return worst;
}

/* The largest double whose square root is at most a: sqrt(x) > a exactly when x is above it. */
static double kiln__square_limit(double a)
{
    double t = a * a;
    while (t > 0.0 && sqrt(t) > a) t = nextafter(t, 0.0);
    while (sqrt(nextafter(t, INFINITY)) <= a) t = nextafter(t, INFINITY);
    return t;
}

/* Sorts frames by score, highest first (ties: lower frame first); a shell sort, in place. */
static void kiln__sort_frames(uint32_t *f, uint32_t n, const double *score)
{
    static const uint32_t gaps[] = {701, 301, 132, 57, 23, 10, 4, 1};
    for (unsigned g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
        uint32_t gap = gaps[g];
        for (uint32_t i = gap; i < n; i++) {
            uint32_t v = f[i], j = i;
            while (j >= gap && (score[f[j - gap]] < score[v] || (score[f[j - gap]] == score[v] && f[j - gap] > v))) {
                f[j] = f[j - gap];
                j -= gap;
            }
            f[j] = v;
        }
    }
}

/* Measures the nodes flagged in L->measure, every frame, into L->node_err: the locals of the
 * joints of block `blk` (every block when UINT32_MAX) from L->dec, the other locals and the
 * worlds of unflagged nodes from the cache. With `allowed` (per node), stops as soon as a node
 * exceeds its allowance and returns INFINITY (trying the block's last failing frame first, then
 * L->order); otherwise returns the largest error. With `commit`, the cache takes what was
 * computed, else the candidate buffers do. */
static double kiln__measure(kiln__lossy *L, uint32_t blk, const double *allowed, int commit)
{
    double worst = 0.0;
    int early = allowed && blk != UINT32_MAX;
    /* a translation or scale candidate leaves the cached rotations of its block as they are */
    int keep_rot = !commit && L->lazy && blk == L->lazy_blk && (L->lazy_c < 3 || L->lazy_c > 6);
    /* a translation candidate leaves every world matrix as it is: only translations move */
    int keep_m = keep_rot && L->lazy_c < 3;
    /* a rotation candidate leaves the cached translations and scales of its block */
    int keep_ts = !commit && L->lazy && blk == L->lazy_blk && L->lazy_c >= 3 && L->lazy_c <= 6;
    uint32_t *hot = early ? L->hot + (size_t)blk * KILN__HOT : NULL;
    /* A failing candidate fails at the same frames whatever their order, and a passing one
     * measures them all: the order only decides how soon a failure is seen. */
    uint32_t *border = early ? L->block_order + (size_t)blk * L->n : NULL;
    const uint32_t *order = border && border[0] != UINT32_MAX ? border : L->order;
    double *err2 = L->node_err, *limit2 = L->limit2; /* squared until the end */
    for (uint32_t i = 0; i < L->nodes; i++) {
        err2[i] = 0.0;
        if (allowed && L->measure[i]) limit2[i] = kiln__square_limit(allowed[i]);
    }
    for (uint32_t m = 0; m < L->listed; m++) {
        kiln__step *st = &L->steps[m];
        uint32_t i = L->list[m];
        int32_t p = L->node[i].parent;
        st->node = i;
        st->parent = p;
        st->own = (uint8_t)(blk == UINT32_MAX || L->node_block[i] == blk);
        st->ssc = (uint8_t)(L->node[i].ssc != 0);
        st->w_dec = L->w_bank[i];
        st->w_new = commit ? st->w_dec : (uint8_t)(3 - L->w_bank[i] - L->w_best[i]);
        st->l_dec = L->l_bank[i];
        st->l_new = commit || !st->own ? st->l_dec : (uint8_t)(3 - L->l_bank[i] - L->l_best[i]);
        st->pw = st->pl = 0;
        if (p >= 0) { /* listed before i: its step is set */
            int own_p = blk == UINT32_MAX || L->node_block[p] == blk;
            st->pw = L->measure[p] ? (uint8_t)(commit ? L->w_bank[p] : 3 - L->w_bank[p] - L->w_best[p]) : L->w_bank[p];
            st->pl = own_p && !commit ? (uint8_t)(3 - L->l_bank[p] - L->l_best[p]) : L->l_bank[p];
        }
    }
    for (uint32_t k = 0; k < L->n + (early ? KILN__HOT : 0u); k++) {
        uint32_t r;
        if (!early) {
            r = k;
        } else if (k < KILN__HOT) {
            r = hot[k];
            if (r == UINT32_MAX) continue;
        } else {
            r = order[k - KILN__HOT];
            unsigned h = 0;
            while (h < KILN__HOT && hot[h] != r) h++;
            if (h < KILN__HOT) continue; /* tried already */
        }
        if (L->lazy && !L->lazy_done[r]) kiln__decode_lazy(L, r), L->lazy_done[r] = 1;
        double score = 0.0; /* L->score[r]: every frame is visited once, a pass sets them all */
        size_t at = (size_t)r * L->nodes;
        kiln__loc *lb[3] = {L->local[0] + at, L->local[1] + at, L->local[2] + at};
        kiln__wxf *wb[3] = {L->world[0] + at, L->world[1] + at, L->world[2] + at};
        const kiln__wxf *rw = L->raw_world + at;
        for (uint32_t m = 0; m < L->listed; m++) {
            const kiln__step *st = &L->steps[m];
            uint32_t i = st->node;
            const kiln__loc *lc = &lb[st->l_dec][i];
            if (st->own) {
                kiln__loc *out = &lb[st->l_new][i];
                if (keep_rot) kiln__local_xf_one(L, i, r, L->lazy_c, lc, out);
                else if (keep_ts) kiln__local_xf_rot(L, i, r, lc, out);
                else kiln__local_xf(L, i, r, 1, out);
                lc = out;
            }
            const kiln__wxf *pw = NULL;
            const kiln__loc *pl = NULL;
            if (st->parent >= 0) {
                uint32_t p = (uint32_t)st->parent;
                pw = &wb[st->pw][p];
                pl = &lb[st->pl][p];
            }
            kiln__wxf *w = &wb[st->w_new][i];
            if (keep_m) kiln__compose_t(L, lc, pw, &wb[st->w_dec][i], w);
#if KILN__WORLD_AVX2
            else if (L->avx2 && pw && !st->ssc) kiln__world_mul_avx2(pw, lc->rs, lc->t, w);
#endif
            else kiln__compose(L, i, lc, pw, pl, w);
            double e2 = kiln__point_error2(L, &rw[i], w);
            if (e2 > err2[i]) err2[i] = e2;
            if (early && e2 > score * limit2[i]) score = limit2[i] > 0.0 ? e2 / limit2[i] : 1.0;
            if (allowed && e2 > limit2[i]) {
                if (early) { /* to the front of the list */
                    unsigned h = 0;
                    while (h + 1 < KILN__HOT && hot[h] != r) h++;
                    for (; h > 0; h--) hot[h] = hot[h - 1];
                    hot[0] = r;
                }
                return INFINITY;
            }
        }
        if (early) L->score[r] = score;
    }
    for (uint32_t i = 0; i < L->nodes; i++) {
        err2[i] = sqrt(err2[i]);
        if (err2[i] > worst) worst = err2[i];
    }
    if (early) { /* passed: the block's next candidates try the tightest frames first */
        for (uint32_t f = 0; f < L->n; f++) border[f] = f;
        kiln__sort_frames(border, L->n, L->score);
    }
    return worst;
}

/* The cache takes the locals of block blk's joints and the worlds of the measured nodes from
 * the best candidate's banks: the node's bank numbers swap. */
static void kiln__commit_best(kiln__lossy *L, uint32_t blk)
{
    for (uint32_t m = 0; m < L->listed; m++) {
        uint32_t i = L->list[m];
        uint8_t t = L->w_bank[i];
        L->w_bank[i] = L->w_best[i], L->w_best[i] = t;
        if (L->node_block[i] != blk) continue;
        t = L->l_bank[i];
        L->l_bank[i] = L->l_best[i], L->l_best[i] = t;
    }
}

/* A measured candidate passed: its banks become the best ones (kiln__measure's w_new and
 * l_new), the previous best ones take the next candidate. */
static void kiln__keep_best(kiln__lossy *L, uint32_t blk)
{
    for (uint32_t m = 0; m < L->listed; m++) {
        uint32_t i = L->list[m];
        L->w_best[i] = (uint8_t)(3 - L->w_bank[i] - L->w_best[i]);
        if (L->node_block[i] == blk) L->l_best[i] = (uint8_t)(3 - L->l_bank[i] - L->l_best[i]);
    }
}

/* The raw world transforms of every node at every frame, into the cache. */
static void kiln__raw_worlds(kiln__lossy *L)
{
    for (uint32_t r = 0; r < L->n; r++) {
        kiln__wxf *rw = L->raw_world + (size_t)r * L->nodes;
        for (uint32_t i = 0; i < L->nodes; i++) {
            int32_t p = L->node[i].parent;
            kiln__loc *scratch = L->local[1]; /* free before the first measurement */
            kiln__local_xf(L, i, r, 0, &scratch[i]);
            kiln__compose(L, i, &scratch[i], p >= 0 ? &rw[p] : NULL, p >= 0 ? &scratch[p] : NULL, &rw[i]);
        }
    }
}

/* Flags the nodes driven by block `blk` (every node when blk is UINT32_MAX), their
 * descendants (measured) and ancestors (evaluated). */
static void kiln__select(kiln__lossy *L, uint32_t blk)
{
    L->listed = 0;
    for (uint32_t i = 0; i < L->nodes; i++) {
        uint32_t j = L->node[i].joint;
        int own = blk == UINT32_MAX || (j != UINT32_MAX && j / KILN_SOA_WIDTH == blk);
        int32_t p = L->node[i].parent;
        L->measure[i] = (uint8_t)(own || (p >= 0 && L->measure[p]));
        L->need[i] = L->measure[i];
        if (L->measure[i]) L->list[L->listed++] = i;
    }
    for (uint32_t i = L->nodes; i-- > 0;)
        if (L->need[i] && L->node[i].parent >= 0) L->need[L->node[i].parent] = 1;
}

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

/* Per node: how far its subtree (origins and virtual vertices) reaches from its origin, and
 * the largest scale its parent applies, over a subset of frames (raw values). */
static void kiln__stats(kiln__lossy *L, double *reach, double *pscale)
{
    uint32_t step = L->n > KILN__STAT_FRAMES ? L->n / KILN__STAT_FRAMES : 1u;
    for (uint32_t i = 0; i < L->nodes; i++) reach[i] = L->distance, pscale[i] = 1.0, L->need[i] = 1;
    for (uint32_t r = 0; r < L->n; r += step) {
        const kiln__wxf *rw = L->raw_world + (size_t)r * L->nodes;
        for (uint32_t i = 0; i < L->nodes; i++) {
            const kiln__wxf *w = &rw[i];
            if (L->node[i].parent >= 0) {
                const double *m = rw[L->node[i].parent].m;
                for (int col = 0; col < 3; col++) {
                    double n = sqrt(m[col * 3] * m[col * 3] + m[col * 3 + 1] * m[col * 3 + 1] + m[col * 3 + 2] * m[col * 3 + 2]);
                    if (n > pscale[i]) pscale[i] = n;
                }
            }
            for (int k = 0; k < 4; k++) {
                double p[3];
                for (int row = 0; row < 3; row++) p[row] = w->t[row] + (k ? L->distance * w->m[(k - 1) * 3 + row] : 0.0);
                for (int32_t at = (int32_t)i; at >= 0; at = L->node[at].parent) {
                    const double *o = rw[at].t;
                    double d = sqrt((p[0] - o[0]) * (p[0] - o[0]) + (p[1] - o[1]) * (p[1] - o[1]) + (p[2] - o[2]) * (p[2] - o[2]));
                    if (d > reach[at]) reach[at] = d;
                }
            }
        }
    }
}

static void kiln__first_allocation(kiln__lossy *L, const double *reach, const double *pscale)
{
    for (uint32_t blk = 0; blk < L->blocks; blk++)
        for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) {
            unsigned best = 0;
            if (c == 6) { /* qw is never stored in a lossy clip: rebuilt, or a constant */
                kiln__apply(L, blk, c, 0);
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
            kiln__apply(L, blk, c, best);
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
            kiln__apply(L, blk, c, s + 1);
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
        kiln__select(L, blk);
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
                kiln__apply_plan(L, blk, c, mid);
                kiln__lazy_lanes(L, blk, c);
                memset(L->lazy_done, 0, L->n);
                if (kiln__measure(L, blk, allowed, 0) <= L->target) {
                    /* every frame was measured, so decoded */
                    kiln__keep_best(L, blk);
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
            if (best < s) kiln__commit_best(L, blk); /* the cache follows the new encoding */
            narrowed += best < s;
        }
    }
    return narrowed;
}

/* ---- entry ----------------------------------------------------------------------------------- */

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
    /* The caches: seven transforms per node and frame. Too large for the limit or for memory,
     * the clip is not quantised (*met stays 0, L->cache_bytes says why). */
    size_t frames_nodes = (size_t)L->n * L->nodes;
    L->cache_bytes = (uint64_t)frames_nodes * (4 * sizeof(kiln__wxf) + 3 * sizeof(kiln__loc));
    if (L->cache_bytes > KILN__CACHE_LIMIT || L->cache_bytes > SIZE_MAX / 2) return KILN_OK;
    L->raw_world = kiln__realloc(L->a, NULL, frames_nodes * sizeof(kiln__wxf) + 1);
    for (int b = 0; b < 3; b++) {
        L->world[b] = kiln__realloc(L->a, NULL, frames_nodes * sizeof(kiln__wxf) + 1);
        L->local[b] = kiln__realloc(L->a, NULL, frames_nodes * sizeof(kiln__loc) + 1);
    }
    L->w_bank = kiln__realloc(L->a, NULL, (size_t)L->nodes * 4 + 1);
    L->order = kiln__realloc(L->a, NULL, (size_t)L->n * sizeof *L->order + 1);
    L->block_order = kiln__realloc(L->a, NULL, (size_t)L->blocks * L->n * sizeof *L->block_order + 1);
    L->score = kiln__realloc(L->a, NULL, (size_t)L->n * sizeof *L->score + 1);
    L->steps = kiln__realloc(L->a, NULL, (size_t)L->nodes * sizeof *L->steps + 1);
    L->lazy_done = kiln__realloc(L->a, NULL, (size_t)L->n + 1);
    L->hot = kiln__realloc(L->a, NULL, (size_t)L->blocks * KILN__HOT * sizeof *L->hot + 1);
    L->node_block = kiln__realloc(L->a, NULL, (size_t)L->nodes * sizeof *L->node_block + 1);
    if (!L->node_block) return KILN_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < L->nodes; i++)
        L->node_block[i] = L->node[i].joint == UINT32_MAX ? UINT32_MAX : L->node[i].joint / KILN_SOA_WIDTH;
    if (!L->order || !L->lazy_done || !L->hot || !L->block_order || !L->score || !L->steps)
        return KILN_ERR_OUT_OF_MEMORY;
    if (!L->w_bank) return KILN_ERR_OUT_OF_MEMORY;
    L->w_best = L->w_bank + L->nodes, L->l_bank = L->w_best + L->nodes, L->l_best = L->l_bank + L->nodes;
    memset(L->w_bank, 0, L->nodes), memset(L->l_bank, 0, L->nodes);
    memset(L->w_best, 1, L->nodes), memset(L->l_best, 1, L->nodes);
    if (!L->raw_world || !L->world[0] || !L->world[1] || !L->world[2] || !L->local[0] || !L->local[1] ||
        !L->local[2]) {
        L->cache_bytes = UINT64_MAX; /* no memory for them */
        return KILN_OK;
    }
    memset(L->hot, 0xff, (size_t)L->blocks * KILN__HOT * sizeof *L->hot);
    for (uint32_t blk = 0; blk < L->blocks; blk++) L->block_order[(size_t)blk * L->n] = UINT32_MAX;
    for (uint32_t k = 0, s = 0; s < 4; s++)
        for (uint32_t f = s; f < L->n; f += 4) L->order[k++] = f;
    uint32_t cap = L->nodes > L->blocks ? L->nodes : L->blocks;
    size_t per_node = 6 * sizeof(double) + sizeof(uint32_t) + 2;
    unsigned char *scratch = kiln__realloc(L->a, NULL, (size_t)cap * per_node + 1);
    if (!scratch) return KILN_ERR_OUT_OF_MEMORY;
    L->node_err = (double *)(void *)scratch;
    double *reach = L->node_err + cap, *pscale = reach + cap, *cur = pscale + cap, *allowed = cur + cap;
    L->limit2 = allowed + cap;
    L->list = (uint32_t *)(void *)(L->limit2 + cap);
    L->need = (uint8_t *)(L->list + cap);
    L->measure = L->need + cap;

    kiln__raw_worlds(L);
    kiln__stats(L, reach, pscale);
    kiln__first_allocation(L, reach, pscale);
    kiln__select(L, UINT32_MAX);
    double err = kiln__measure(L, UINT32_MAX, NULL, 1);
    while (err > L->target) {
        if (!kiln__widen(L)) break;
        kiln__select(L, UINT32_MAX);
        err = kiln__measure(L, UINT32_MAX, NULL, 1);
    }
    *met = err <= L->target;
    if (*met) {
        static const double share[] = {0.25, 0.5, 0.7, 0.85, 1.0};
        memcpy(cur, L->node_err, L->nodes * sizeof *cur);
        for (unsigned k = 0; k < sizeof share / sizeof share[0]; k++)
            for (int pass = 0; pass < 3 && kiln__narrow(L, share[k], cur, allowed); pass++) {}
        kiln__select(L, UINT32_MAX);
        err = kiln__measure(L, UINT32_MAX, NULL, 1);
    }
    *max_error = err;
    kiln__free(L->a, scratch);
    L->need = L->measure = NULL;
    L->list = NULL;
    L->node_err = L->limit2 = NULL;
    return KILN_OK;
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
    } else if (r == KILN_OK && L.cache_bytes > KILN__CACHE_LIMIT) {
        kiln__bake_report(sink, KILN_ERR_LIMIT, KILN_SEVERITY_WARNING, NULL, NULL, KILN_NO_OFFSET,
                          "animation '%s': %u joints x %u frames is too long for the lossy encoder (%s); stored lossless",
                          an->name, an->joint_count, an->frame_count,
                          L.cache_bytes == UINT64_MAX ? "out of memory" : "over 2 GiB of evaluation caches");
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
    kiln__free(a, L.raw_world);
    for (int b = 0; b < 3; b++) kiln__free(a, L.world[b]), kiln__free(a, L.local[b]);
    kiln__free(a, L.w_bank);
    kiln__free(a, L.order);
    kiln__free(a, L.node_block);
    kiln__free(a, L.hot);
    kiln__free(a, L.block_order);
    kiln__free(a, L.score);
    kiln__free(a, L.steps);
    kiln__free(a, L.range);
    kiln__free(a, L.lazy_done);
    return r;
}
