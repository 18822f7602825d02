/* The lossy clip encoder's error measurement: quantisation, the candidate plans and their
 * frame-by-frame decode, the local and world transforms in double precision (SSE2 and, where
 * the CPU has it, the AVX2 kernels of bake_anim_world_avx2.c), and the measurement of a
 * candidate against its allowances with the per-frame caches (bake_anim_lossy.c has the
 * method and the allocation that drives it).
 */
#include <math.h>
#include <string.h>

#include "bake_anim_lossy.h"
#include "math_f64.h"

/* The error evaluation's SSE2 paths (x86-64 always has SSE2): the same IEEE operations in the
 * same order as the portable code, two doubles at a time. */
#if defined(__SSE2__) && !defined(KILN_FORCE_SCALAR)
#include <emmintrin.h>
#define KILN__SSE2 1
#else
#define KILN__SSE2 0
#endif

_Static_assert(KILN_SOA_WIDTH <= 8, "kiln__lossy.rot_done has a bit per lane");

const uint32_t kiln__widths[KILN__STEPS] = {0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 32};

/* ---- quantisation ------------------------------------------------------------------------ */

/* kiln__anim_quantize with the lane's step (kiln__clip_step(extent, width)) given. */
static inline uint32_t kiln__quantize_step(float x, float min, float extent, uint32_t width, float step)
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

/* Sets the plan of (blk, c) to width index `step`: its width and per-lane ranges. */
void kiln__lossy_apply_plan(kiln__lossy *L, uint32_t blk, unsigned c, unsigned step)
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
void kiln__lossy_lazy_lanes(kiln__lossy *L, uint32_t blk, unsigned c)
{
    L->lazy_blk = blk, L->lazy_c = c;
    const kiln__anim_plan *pl = &L->plan[blk * KILN_ANIM_COMPONENTS + c];
    L->lazy_lanes = 0;
    memset(L->lazy_lo, 0, sizeof L->lazy_lo), memset(L->lazy_extent, 0, sizeof L->lazy_extent);
    memset(L->lazy_step, 0, sizeof L->lazy_step);
    for (unsigned l = 0; l < KILN_SOA_WIDTH && blk * KILN_SOA_WIDTH + l < L->nj; l++) {
        uint32_t j = blk * KILN_SOA_WIDTH + l;
        L->lazy_lane[l].v = kiln__anim_track(L->an, j, c);
        L->lazy_lane[l].d = kiln__dec(L, j, c);
        L->lazy_lane[l].lo = pl->range_min[l];
        L->lazy_lane[l].extent = pl->range_extent[l];
        L->lazy_lane[l].step = kiln__clip_step(pl->range_extent[l], pl->width);
        L->lazy_lane[l].constant = pl->constant[l];
        L->lazy_lo[l] = L->lazy_lane[l].lo;
        L->lazy_extent[l] = L->lazy_lane[l].extent;
        L->lazy_step[l] = L->lazy_lane[l].step;
        L->lazy_lanes = l + 1;
    }
    L->lazy_full = 1;
    for (unsigned l = 0; l < KILN_SOA_WIDTH; l++) {
        int track = l < L->lazy_lanes && L->lazy_lane[l].v;
        L->lazy_full &= track;
        L->lazy_v[l] = track ? L->lazy_lane[l].v : &L->lazy_lo[l];
        L->lazy_vmask[l] = track ? UINT32_MAX : 0u;
        L->lazy_d[l] = l < L->lazy_lanes ? L->lazy_lane[l].d : &L->lazy_sink[l];
        L->lazy_dmask[l] = l < L->lazy_lanes ? UINT32_MAX : 0u;
    }
}

#if KILN__WORLD_AVX2
_Static_assert(KILN_SOA_WIDTH == 8, "one AVX2 register of lanes");

/* kiln__quantize_step(x, lo, extent, width, step) for the eight lanes (as floats), with the
 * same operations: q from the same double f (rounded by truncating f + 0.5,
 * 0 where the extent is not positive), then q - 1 and q + 1 where they exist, each taken when
 * its error is strictly lower, in that order. q + 1 <= 2^24 and q - 1 are exact in float. */
KILN__AVX2 static inline __m256 kiln__quantize8_avx2(const float x[8], const float lo[8], const float extent[8],
                                                     const float step[8], uint32_t width)
{
    uint32_t top = (1u << width) - 1u;
    __m256 xf = _mm256_loadu_ps(x), lof = _mm256_loadu_ps(lo), exf = _mm256_loadu_ps(extent);
    __m256 stf = _mm256_loadu_ps(step), topf = _mm256_set1_ps((float)top), one = _mm256_set1_ps(1.0f);
    __m256 zf = _mm256_setzero_ps(), abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256d topd = _mm256_set1_pd((double)top), half = _mm256_set1_pd(0.5), zd = _mm256_setzero_pd();
    __m128i q4[2];
    for (int h = 0; h < 2; h++) {
        __m128 xh = h ? _mm256_extractf128_ps(xf, 1) : _mm256_castps256_ps128(xf);
        __m128 loh = h ? _mm256_extractf128_ps(lof, 1) : _mm256_castps256_ps128(lof);
        __m128 exh = h ? _mm256_extractf128_ps(exf, 1) : _mm256_castps256_ps128(exf);
        __m256d exd = _mm256_cvtps_pd(exh);
        __m256d f = _mm256_mul_pd(_mm256_div_pd(_mm256_sub_pd(_mm256_cvtps_pd(xh), _mm256_cvtps_pd(loh)), exd), topd);
        __m256d q = _mm256_round_pd(_mm256_add_pd(f, half), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        q = _mm256_blendv_pd(q, topd, _mm256_cmp_pd(f, topd, _CMP_GE_OQ));
        q = _mm256_blendv_pd(q, zd, _mm256_cmp_pd(f, zd, _CMP_LE_OQ));
        q = _mm256_and_pd(q, _mm256_cmp_pd(exd, zd, _CMP_GT_OQ));
        q4[h] = _mm256_cvttpd_epi32(q);
    }
    __m256 pos = _mm256_cmp_ps(exf, zf, _CMP_GT_OQ);
    __m256 qf = _mm256_cvtepi32_ps(_mm256_insertf128_si256(_mm256_castsi128_si256(q4[0]), q4[1], 1));
    __m256 err = _mm256_and_ps(_mm256_sub_ps(_mm256_add_ps(lof, _mm256_mul_ps(stf, qf)), xf), abs_mask), best = qf;
    __m256 qm = _mm256_sub_ps(qf, one), qp = _mm256_add_ps(qf, one);
    __m256 em = _mm256_and_ps(_mm256_sub_ps(_mm256_add_ps(lof, _mm256_mul_ps(stf, qm)), xf), abs_mask);
    __m256 take = _mm256_and_ps(_mm256_and_ps(pos, _mm256_cmp_ps(qf, zf, _CMP_GT_OQ)), _mm256_cmp_ps(em, err, _CMP_LT_OQ));
    err = _mm256_blendv_ps(err, em, take), best = _mm256_blendv_ps(best, qm, take);
    __m256 ep = _mm256_and_ps(_mm256_sub_ps(_mm256_add_ps(lof, _mm256_mul_ps(stf, qp)), xf), abs_mask);
    take = _mm256_and_ps(_mm256_and_ps(pos, _mm256_cmp_ps(qf, topf, _CMP_LT_OQ)), _mm256_cmp_ps(ep, err, _CMP_LT_OQ));
    return _mm256_blendv_ps(best, qp, take); /* integers below 2^24, exact */
}

KILN__AVX2 static void kiln__decode8_avx2(const float x[8], const float lo[8], const float extent[8],
                                          const float step[8], uint32_t width, float out[8])
{
    __m256 q = kiln__quantize8_avx2(x, lo, extent, step, width);
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_loadu_ps(lo), _mm256_mul_ps(_mm256_loadu_ps(step), q)));
}

KILN__AVX2 static void kiln__quantize8_store(const float x[8], const float lo[8], const float extent[8],
                                             const float step[8], uint32_t width, uint32_t q[8])
{
    _mm256_storeu_si256((__m256i *)(void *)q, _mm256_cvttps_epi32(kiln__quantize8_avx2(x, lo, extent, step, width)));
}
#endif

int kiln__anim_quantize8(const float x[8], const float lo[8], const float extent[8], const float step[8],
                         uint32_t width, uint32_t q[8])
{
#if KILN__WORLD_AVX2
    if (!kiln__world_avx2_ok()) return 0;
    kiln__quantize8_store(x, lo, extent, step, width, q);
    return 1;
#else
    (void)x, (void)lo, (void)extent, (void)step, (void)width, (void)q;
    return 0;
#endif
}

int kiln__lossy_decode_avx2(const float x[8], const float lo[8], const float extent[8], const float step[8],
                            uint32_t width, float out[8])
{
#if KILN__WORLD_AVX2
    if (!kiln__world_avx2_ok()) return 0;
    kiln__decode8_avx2(x, lo, extent, step, width, out);
    return 1;
#else
    (void)x, (void)lo, (void)extent, (void)step, (void)width, (void)out;
    return 0;
#endif
}

#if KILN__WORLD_AVX2
/* kiln__decode_lazy's eight lanes at frame r (width w, 3 to 24 bits) with AVX2, unrolled. */
KILN__AVX2 __attribute__((flatten)) static void kiln__decode_lazy_avx2(kiln__lossy *L, uint32_t r, uint32_t w)
{
    const float *const *v = L->lazy_v;
    float *const *o = L->lazy_d;
    float x[KILN_SOA_WIDTH], d[KILN_SOA_WIDTH];
    if (L->lazy_full) { /* eight lanes with tracks: no masks */
        x[0] = v[0][r], x[1] = v[1][r], x[2] = v[2][r], x[3] = v[3][r];
        x[4] = v[4][r], x[5] = v[5][r], x[6] = v[6][r], x[7] = v[7][r];
        kiln__decode8_avx2(x, L->lazy_lo, L->lazy_extent, L->lazy_step, w, d);
        o[0][r] = d[0], o[1][r] = d[1], o[2][r] = d[2], o[3][r] = d[3];
        o[4][r] = d[4], o[5][r] = d[5], o[6][r] = d[6], o[7][r] = d[7];
        return;
    }
    const uint32_t *vm = L->lazy_vmask, *dm = L->lazy_dmask;
    x[0] = v[0][r & vm[0]], x[1] = v[1][r & vm[1]], x[2] = v[2][r & vm[2]], x[3] = v[3][r & vm[3]];
    x[4] = v[4][r & vm[4]], x[5] = v[5][r & vm[5]], x[6] = v[6][r & vm[6]], x[7] = v[7][r & vm[7]];
    kiln__decode8_avx2(x, L->lazy_lo, L->lazy_extent, L->lazy_step, w, d);
    o[0][r & dm[0]] = d[0], o[1][r & dm[1]] = d[1], o[2][r & dm[2]] = d[2], o[3][r & dm[3]] = d[3];
    o[4][r & dm[4]] = d[4], o[5][r & dm[5]] = d[5], o[6][r & dm[6]] = d[6], o[7][r & dm[7]] = d[7];
}
#endif

/* Decodes frame r of the track kiln__lazy_lanes resolved into L->dec: the value the runtime
 * reads back. */
static void kiln__decode_lazy(kiln__lossy *L, uint32_t r)
{
    uint32_t w = L->plan[L->lazy_blk * KILN_ANIM_COMPONENTS + L->lazy_c].width;
    if (w == 0) {
        for (unsigned l = 0; l < L->lazy_lanes; l++) L->lazy_lane[l].d[r] = L->lazy_lane[l].constant;
        return;
    }
#if KILN__WORLD_AVX2
    if (L->avx2 && w != KILN__CLIP_RAW) {
        kiln__decode_lazy_avx2(L, r, w);
        return;
    }
#endif
    for (unsigned l = 0; l < L->lazy_lanes; l++) {
        const float *v = L->lazy_lane[l].v;
        float lo = L->lazy_lane[l].lo, x = v ? v[r] : lo;
        if (w == KILN__CLIP_RAW) {
            L->lazy_lane[l].d[r] = x;
        } else {
            float step = L->lazy_lane[l].step;
            L->lazy_lane[l].d[r] = kiln__clip_dequant(kiln__quantize_step(x, lo, L->lazy_lane[l].extent, w, step), lo, step);
        }
    }
}

/* Sets the plan of (blk, c) to width index `step` and decodes it into L->dec. */
void kiln__lossy_apply(kiln__lossy *L, uint32_t blk, unsigned c, unsigned step)
{
    if (L->block_stale) L->block_stale[blk] = 1;
    kiln__lossy_apply_plan(L, blk, c, step);
    kiln__lossy_lazy_lanes(L, blk, c);
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

/* The rotation matrix of the rotation q, normalised. */
static void kiln__rot_mat(const double q[4], double m[9])
{
    double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    double inv = n2 > 0 ? 1.0 / sqrt(n2) : 0.0;
    double x = q[0] * inv, y = q[1] * inv, z = q[2] * inv, ww = q[3] * inv;
    double unit[4] = {x, y, z, ww};
    kiln__qto_mat3(unit, m);
}

/* The scaled rotation rs from the rotation q and the scale s. */
static void kiln__local_finish(const double q[4], const double s[3], double rs[9])
{
    double m[9];
    kiln__rot_mat(q, m);
    for (int col = 0; col < 3; col++)
        for (int row = 0; row < 3; row++) rs[col * 3 + row] = m[col * 3 + row] * s[col];
}

/* The local transform of nd at frame r, ready to compose (kiln__compose). */
static void kiln__local_xf(const kiln__lossy *L, uint32_t nd, uint32_t r, int dec, kiln__loc *out, kiln__scl *out_s)
{
    double q[4];
    kiln__local(L, nd, r, dec, out->t, q, out_s->s, 1);
    kiln__local_finish(q, out_s->s, out->rs);
}

/* The rotation of joint node nd at frame r from the decoded values, by its mode. */
static void kiln__local_q(const kiln__lossy *L, uint32_t nd, uint32_t r, double q[4])
{
    const kiln__node *N = &L->node[nd];
    uint32_t j = N->joint;
    const float *d = L->dec + (size_t)j * KILN_ANIM_COMPONENTS * L->n + r;
    double kq[4] = {d[(size_t)3 * L->n], d[(size_t)4 * L->n], d[(size_t)5 * L->n], d[(size_t)6 * L->n]};
    if (kiln__qw_rebuilt(L, j / KILN_SOA_WIDTH)) kq[3] = kiln__clip_rebuild_qw((float)kq[0], (float)kq[1], (float)kq[2]);
    kiln__rotation(L->modes[j] >> 6 & 3u, N->rest, kq, L->an->joints[j].ab, q);
}

/* kiln__local_xf's scaled rotation from the decoded values when only rotation components
 * differ from the node's local at this frame as the cache holds it (its scale: same_s): out->rs
 * alone, the same doubles. */
static void kiln__local_xf_rot(const kiln__lossy *L, uint32_t nd, uint32_t r, const kiln__scl *same_s, kiln__loc *out)
{
    double q[4];
    kiln__local_q(L, nd, r, q);
    kiln__local_finish(q, same_s->s, out->rs);
}

/* kiln__local_xf's translation when only translation component c differs from `same`, the
 * node's local at this frame as the cache holds it: out->t alone, the same doubles. */
static void kiln__local_xf_t(const kiln__lossy *L, uint32_t nd, uint32_t r, unsigned c, const kiln__loc *same,
                             kiln__loc *out)
{
    const kiln__node *N = &L->node[nd];
    uint32_t j = N->joint;
    double k = L->dec[((size_t)j * KILN_ANIM_COMPONENTS + c) * L->n + r];
    memcpy(out->t, same->t, sizeof out->t);
    out->t[c] = kiln__translation(L->modes[j] >> (2 * c) & 3u, N->rest[c], k, L->an->joints[j].ab);
}

/* kiln__local_xf's scaled rotation and scale when only scale component c differs from `same`
 * and `same_s`, the node's local at this frame as the cache holds it: out->rs and out_s, that
 * component recomputed from the decoded value, the same doubles. */
static void kiln__local_xf_s(const kiln__lossy *L, uint32_t nd, uint32_t r, unsigned c, const kiln__loc *same,
                             const kiln__scl *same_s, kiln__loc *out, kiln__scl *out_s)
{
    const kiln__node *N = &L->node[nd];
    uint32_t j = N->joint, modes = L->modes[j];
    const float *ab = L->an->joints[j].ab;
    double k = L->dec[((size_t)j * KILN_ANIM_COMPONENTS + c) * L->n + r];
    memcpy(out->rs, same->rs, sizeof out->rs);
    memcpy(out_s->s, same_s->s, sizeof out_s->s);
    /* the rotation, from the decoded values, which the candidate leaves as they are */
    unsigned col = c - 7;
    size_t at = (size_t)(j / KILN_SOA_WIDTH) * L->n + r;
    out_s->s[col] = kiln__scale(modes >> (2 * c) & 3u, N->rest[c], k, ab);
    double *m = L->rot + (at * KILN_SOA_WIDTH + j % KILN_SOA_WIDTH) * 9;
    uint8_t lane = (uint8_t)(1u << (j % KILN_SOA_WIDTH));
    if (!(L->rot_done[at] & lane)) {
        double q[4];
        kiln__local_q(L, nd, r, q);
        kiln__rot_mat(q, m);
        L->rot_done[at] |= lane;
    }
    for (int row = 0; row < 3; row++) out->rs[col * 3 + row] = m[col * 3 + row] * out_s->s[col];
}

/* World transform of nd from its local (lm, lt) and its parent's world and scale (C.1, segment
 * scale compensate); pw and ps NULL for roots. Element (row, col) of the product is
 * (p[row]·l0 + p[3+row]·l1) + p[6+row]·l2, each product rounded; the SSE2 path computes rows
 * 0 and 1 of a column in one register with the same operations in the same order, so both
 * paths give the same doubles. */
static void kiln__compose(const kiln__lossy *L, uint32_t nd, const double *lm, const double *lt, const kiln__wxf *pw,
                          const double *ps, kiln__wxf *w)
{
    if (!pw) {
        memcpy(w->m, lm, sizeof w->m);
        memcpy(w->t, lt, sizeof w->t);
        return;
    }
    double buf[9];
    if (L->node[nd].ssc) {
        for (int col = 0; col < 3; col++)
            for (int row = 0; row < 3; row++)
                buf[col * 3 + row] = lm[col * 3 + row] / (ps[row] != 0.0 ? ps[row] : 1.0);
        lm = buf;
    }
#if KILN__WORLD_AVX2
    if (L->avx2) {
        kiln__world_mul_avx2(pw, lm, lt, w);
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
    __m128d t = _mm_add_pd(_mm_mul_pd(p0, _mm_set1_pd(lt[0])), _mm_mul_pd(p1, _mm_set1_pd(lt[1])));
    t = _mm_add_pd(_mm_add_pd(t, _mm_mul_pd(p2, _mm_set1_pd(lt[2]))), _mm_loadu_pd(pw->t));
    _mm_storeu_pd(w->t, t);
    w->t[2] = p[2] * lt[0] + p[5] * lt[1] + p[8] * lt[2] + pw->t[2];
#else
    for (int col = 0; col < 3; col++)
        for (int row = 0; row < 3; row++)
            w->m[col * 3 + row] = p[row] * lm[col * 3] + p[3 + row] * lm[col * 3 + 1] + p[6 + row] * lm[col * 3 + 2];
    for (int row = 0; row < 3; row++)
        w->t[row] = p[row] * lt[0] + p[3 + row] * lt[1] + p[6 + row] * lt[2] + pw->t[row];
#endif
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
void kiln__lossy_sort_frames(uint32_t *f, uint32_t n, const double *score)
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

/* Makes the cached worlds of nd and of its ancestors that are stale, every frame, from the
 * cached locals: what the measurement computes for them. */
static void kiln__world_fill(kiln__lossy *L, uint32_t nd)
{
    uint32_t depth = 0;
    for (int32_t at = (int32_t)nd; at >= 0 && !L->w_valid[at]; at = L->node[at].parent) L->path[depth++] = (uint32_t)at;
    for (uint32_t r = 0; r < L->n; r++) {
        size_t at = (size_t)r * L->nodes;
        kiln__wxf *wc = L->world + at;
        for (uint32_t k = depth; k-- > 0;) {
            uint32_t i = L->path[k];
            int32_t p = L->node[i].parent;
            const kiln__loc *lc = &L->local[at + i];
            kiln__compose(L, i, lc->rs, lc->t, p >= 0 ? &wc[p] : NULL, p >= 0 ? L->scale[at + (uint32_t)p].s : NULL,
                          &wc[i]);
        }
    }
    for (uint32_t k = 0; k < depth; k++) L->w_valid[L->path[k]] = 1;
}

#if KILN__WORLD_AVX2
/* The rotation matrices of the lanes in L->rot_lanes.mask at frame r, four lanes at a time, lane
 * l's nine doubles at out + l x lane_stride: with `scaled`, kiln__local_xf_rot's scaled rotations
 * (the columns times the cached scale), else kiln__rot_mat's matrices; kiln__local_q's and their
 * operations in their order (qw rebuilt in float, the relative mode's product with the rest
 * rotation, the normalisation, kiln__qto_mat3), the same doubles. */
KILN__AVX2 static inline void kiln__rot_lanes_avx2(kiln__lossy *L, uint32_t r, double *out, size_t lane_stride, int scaled)
{
    size_t n = L->n, at = (size_t)r * L->nodes;
    for (unsigned g = 0; g < KILN_SOA_WIDTH; g += 4) {
        uint32_t mask = L->rot_lanes.mask >> g & 15u;
        if (!mask) continue;
        /* lanes off: the identity rotation and unit scale (of no node: nothing reads them) */
        static const float unit_q[4] = {0.0f, 0.0f, 0.0f, 1.0f};
        static const double unit_s[3] = {1.0, 1.0, 1.0};
        const float *q[4];
        const double *sv[4];
        size_t stride[4];
        for (unsigned l = 0; l < 4; l++) {
            int on = mask >> l & 1u;
            q[l] = on ? L->rot_lanes.q[g + l] + r : unit_q;
            stride[l] = on ? n : 1u;
            sv[l] = on && scaled ? L->scale[at + L->rot_lanes.node[g + l]].s : unit_s;
        }
        __m128 fx = _mm_set_ps(q[3][0], q[2][0], q[1][0], q[0][0]);
        __m128 fy = _mm_set_ps(q[3][stride[3]], q[2][stride[2]], q[1][stride[1]], q[0][stride[0]]);
        __m128 fz = _mm_set_ps(q[3][2 * stride[3]], q[2][2 * stride[2]], q[1][2 * stride[1]], q[0][2 * stride[0]]);
        __m128 fw = _mm_set_ps(q[3][3 * stride[3]], q[2][3 * stride[2]], q[1][3 * stride[1]], q[0][3 * stride[0]]);
        if (L->rot_lanes.qw_rebuilt) { /* kiln__clip_rebuild_qw */
            __m128 w2 = _mm_sub_ps(_mm_set1_ps(1.0f), _mm_mul_ps(fx, fx));
            w2 = _mm_sub_ps(w2, _mm_mul_ps(fy, fy));
            w2 = _mm_sub_ps(w2, _mm_mul_ps(fz, fz));
            fw = _mm_sqrt_ps(_mm_max_ps(w2, _mm_setzero_ps())); /* w2 > 0 ? w2 : 0 */
        }
        __m256d x = _mm256_cvtps_pd(fx), y = _mm256_cvtps_pd(fy), z = _mm256_cvtps_pd(fz), w = _mm256_cvtps_pd(fw);
        uint32_t rel = L->rot_lanes.relative >> g & mask;
        if (rel) { /* kiln__qmul(rest, k) where relative */
            __m256d a0 = _mm256_loadu_pd(L->rot_lanes.rest[0] + g), a1 = _mm256_loadu_pd(L->rot_lanes.rest[1] + g);
            __m256d a2 = _mm256_loadu_pd(L->rot_lanes.rest[2] + g), a3 = _mm256_loadu_pd(L->rot_lanes.rest[3] + g);
            __m256d qx = _mm256_sub_pd(_mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(a3, x), _mm256_mul_pd(a0, w)),
                                                     _mm256_mul_pd(a1, z)), _mm256_mul_pd(a2, y));
            __m256d qy = _mm256_add_pd(_mm256_add_pd(_mm256_sub_pd(_mm256_mul_pd(a3, y), _mm256_mul_pd(a0, z)),
                                                     _mm256_mul_pd(a1, w)), _mm256_mul_pd(a2, x));
            __m256d qz = _mm256_add_pd(_mm256_sub_pd(_mm256_add_pd(_mm256_mul_pd(a3, z), _mm256_mul_pd(a0, y)),
                                                     _mm256_mul_pd(a1, x)), _mm256_mul_pd(a2, w));
            __m256d qw = _mm256_sub_pd(_mm256_sub_pd(_mm256_sub_pd(_mm256_mul_pd(a3, w), _mm256_mul_pd(a0, x)),
                                                     _mm256_mul_pd(a1, y)), _mm256_mul_pd(a2, z));
            __m256d sel = _mm256_castsi256_pd(_mm256_set_epi64x(rel & 8u ? -1 : 0, rel & 4u ? -1 : 0, rel & 2u ? -1 : 0,
                                                                rel & 1u ? -1 : 0));
            x = _mm256_blendv_pd(x, qx, sel), y = _mm256_blendv_pd(y, qy, sel);
            z = _mm256_blendv_pd(z, qz, sel), w = _mm256_blendv_pd(w, qw, sel);
        }
        /* kiln__rot_mat */
        __m256d n2 = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(x, x), _mm256_mul_pd(y, y)), _mm256_mul_pd(z, z)),
                                   _mm256_mul_pd(w, w));
        __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0), two = _mm256_set1_pd(2.0);
        __m256d inv = _mm256_and_pd(_mm256_div_pd(one, _mm256_sqrt_pd(n2)), _mm256_cmp_pd(n2, zero, _CMP_GT_OQ));
        x = _mm256_mul_pd(x, inv), y = _mm256_mul_pd(y, inv), z = _mm256_mul_pd(z, inv), w = _mm256_mul_pd(w, inv);
        __m256d xx = _mm256_mul_pd(x, x), yy = _mm256_mul_pd(y, y), zz = _mm256_mul_pd(z, z);
        __m256d xy = _mm256_mul_pd(x, y), xz = _mm256_mul_pd(x, z), yz = _mm256_mul_pd(y, z);
        __m256d wx = _mm256_mul_pd(w, x), wy = _mm256_mul_pd(w, y), wz = _mm256_mul_pd(w, z);
        __m256d m[9];
        m[0] = _mm256_sub_pd(one, _mm256_mul_pd(two, _mm256_add_pd(yy, zz)));
        m[1] = _mm256_mul_pd(two, _mm256_add_pd(xy, wz)), m[2] = _mm256_mul_pd(two, _mm256_sub_pd(xz, wy));
        m[3] = _mm256_mul_pd(two, _mm256_sub_pd(xy, wz));
        m[4] = _mm256_sub_pd(one, _mm256_mul_pd(two, _mm256_add_pd(xx, zz)));
        m[5] = _mm256_mul_pd(two, _mm256_add_pd(yz, wx));
        m[6] = _mm256_mul_pd(two, _mm256_add_pd(xz, wy)), m[7] = _mm256_mul_pd(two, _mm256_sub_pd(yz, wx));
        m[8] = _mm256_sub_pd(one, _mm256_mul_pd(two, _mm256_add_pd(xx, yy)));
        __m256d rs[9];
        for (int col = 0; col < 3; col++) {
            __m256d scol = _mm256_set_pd(sv[3][col], sv[2][col], sv[1][col], sv[0][col]);
            for (int row = 0; row < 3; row++)
                rs[col * 3 + row] = scaled ? _mm256_mul_pd(m[col * 3 + row], scol) : m[col * 3 + row];
        }
        double *o[4];
        for (unsigned l = 0; l < 4; l++) o[l] = out + (g + l) * lane_stride;
        if (mask == 15u) { /* the four lanes' [0..3] and [4..7] by 4x4 transposes, then [8] */
            for (int k = 0; k < 8; k += 4) {
                __m256d t0 = _mm256_unpacklo_pd(rs[k], rs[k + 1]), t1 = _mm256_unpackhi_pd(rs[k], rs[k + 1]);
                __m256d t2 = _mm256_unpacklo_pd(rs[k + 2], rs[k + 3]), t3 = _mm256_unpackhi_pd(rs[k + 2], rs[k + 3]);
                _mm256_storeu_pd(o[0] + k, _mm256_permute2f128_pd(t0, t2, 0x20));
                _mm256_storeu_pd(o[1] + k, _mm256_permute2f128_pd(t1, t3, 0x20));
                _mm256_storeu_pd(o[2] + k, _mm256_permute2f128_pd(t0, t2, 0x31));
                _mm256_storeu_pd(o[3] + k, _mm256_permute2f128_pd(t1, t3, 0x31));
            }
            __m128d lo = _mm256_castpd256_pd128(rs[8]), hi = _mm256_extractf128_pd(rs[8], 1);
            _mm_storel_pd(o[0] + 8, lo), _mm_storeh_pd(o[1] + 8, lo), _mm_storel_pd(o[2] + 8, hi), _mm_storeh_pd(o[3] + 8, hi);
        } else { /* only the lanes in the mask: the others may hold what the node by node path made */
            double v[9][4];
            for (int k = 0; k < 9; k++) _mm256_storeu_pd(v[k], rs[k]);
            for (unsigned l = 0; l < 4; l++)
                if (mask >> l & 1u)
                    for (int k = 0; k < 9; k++) o[l][k] = v[k][l];
        }
    }
}
#endif

/* What a measurement does at every frame (kiln__frame). */
typedef struct kiln__pass {
    int keep_rot, keep_ts, early, allowed, commit;
} kiln__pass;

/* The listed nodes at frame r: their locals (own) and worlds, and their errors into
 * L->node_err (squared) and *score. Returns 1 as soon as a node exceeds its allowance. With
 * avx2 (a constant where inlined), the kernels of bake_anim_world.h; early and allowed are
 * P's (constants where inlined: kiln__frame_by). */
static inline int kiln__frame(kiln__lossy *L, const kiln__pass *P, uint32_t r, double *score_out, int avx2, int early,
                              int allowed)
{
    double score = *score_out;
    const double distance = L->distance; /* in a register: the stores below may alias L */
    size_t at = (size_t)r * L->nodes, at_cand = (size_t)r * L->cand_lanes;
    int keep_rot = P->keep_rot, keep_ts = P->keep_ts, commit = P->commit;
    unsigned lazy_c = L->lazy_c;
    kiln__step *steps = L->steps;
#if KILN__WORLD_AVX2
    if (avx2 && L->rot_lanes.mask) {
        if (keep_ts) {
            kiln__rot_lanes_avx2(L, r, L->cand[(size_t)r * L->cand_lanes].rs, sizeof(kiln__loc) / sizeof(double), 1);
        } else { /* a scale candidate: the rotations kiln__local_xf_s reads, where not made yet */
            size_t at_rot = (size_t)L->lazy_blk * L->n + r;
            if ((L->rot_done[at_rot] & L->rot_lanes.mask) != L->rot_lanes.mask) {
                kiln__rot_lanes_avx2(L, r, L->rot + at_rot * KILN_SOA_WIDTH * 9, 9, 0);
                L->rot_done[at_rot] |= (uint8_t)L->rot_lanes.mask;
            }
        }
    }
#endif
    for (uint32_t m = 0, listed = L->listed; m < listed; m++) {
        kiln__step *st = &steps[m];
        uint32_t i = st->node;
        const kiln__loc *lc = st->lc + at;
        const double *lm = lc->rs, *lt = lc->t;
        if (st->own) {
            size_t at_out = !early && commit ? at : at_cand; /* a candidate's (early) in L->cand */
            kiln__loc *out = st->out + at_out;
            if (keep_rot && lazy_c < 3) {
                kiln__local_xf_t(L, i, r, lazy_c, lc, out);
                lt = out->t;
            } else if (keep_rot) {
                kiln__local_xf_s(L, i, r, lazy_c, lc, st->sc + at, out, st->out_s + at_out);
                lm = out->rs;
            } else if (keep_ts) {
                if (!(avx2 && st->lanes_rot)) kiln__local_xf_rot(L, i, r, st->sc + at, out);
                lm = out->rs;
            } else {
                kiln__local_xf(L, i, r, 1, out, st->out_s + at_out);
                lm = out->rs, lt = out->t;
            }
        }
        const kiln__wxf *pw = NULL;
        const double *ps = NULL;
        if (st->pw) {
            pw = st->pw + (at & st->pw_frames);
            if (st->ssc) ps = st->ps[st->ps_cand ? at_cand : at].s;
        }
        kiln__wxf *w = early ? st->w : st->w + (at & st->w_frames); /* a candidate's: the scratch */
        const kiln__wxf *raw = st->raw + at;
        double e2, limit2 = st->limit2;
#if KILN__WORLD_AVX2
        if (avx2) {
            if (pw && !st->ssc) {
                e2 = kiln__world_mul_error_avx2(pw, lm, lt, w, raw, distance);
            } else {
                kiln__compose(L, i, lm, lt, pw, ps, w);
                e2 = kiln__point_error2_avx2(raw, w, distance);
            }
        } else
#endif
        {
            (void)avx2, (void)distance;
            kiln__compose(L, i, lm, lt, pw, ps, w);
            e2 = kiln__point_error2(L, raw, w);
        }
        if (e2 > st->err2) st->err2 = e2;
        if (!early && L->frame_err) L->frame_err[at + i] = e2;
        if (early && e2 > score * limit2) score = limit2 > 0.0 ? e2 / limit2 : 1.0;
        if (allowed && e2 > limit2) return 1;
    }
    *score_out = score;
    return 0;
}

/* kiln__frame with early and allowed as constants for a candidate (both) and a full
 * measurement (neither). */
static inline int kiln__frame_by(kiln__lossy *L, const kiln__pass *P, uint32_t r, double *score, int avx2)
{
    if (P->early && P->allowed) return kiln__frame(L, P, r, score, avx2, 1, 1);
    if (!P->early && !P->allowed) return kiln__frame(L, P, r, score, avx2, 0, 0);
    return kiln__frame(L, P, r, score, avx2, P->early, P->allowed);
}

/* kiln__frame without the AVX2 kernels, and with them, each with everything it calls inlined. */
__attribute__((flatten)) static int kiln__frame_sse2(kiln__lossy *L, const kiln__pass *P, uint32_t r, double *score)
{
    return kiln__frame_by(L, P, r, score, 0);
}

#if KILN__WORLD_AVX2
KILN__AVX2 __attribute__((flatten)) static int kiln__frame_avx2(kiln__lossy *L, const kiln__pass *P, uint32_t r,
                                                                double *score)
{
    return kiln__frame_by(L, P, r, score, 1);
}
#endif

/* Measures the nodes flagged in L->measure, every frame, into L->node_err: the locals of the
 * joints of block `blk` (every block when UINT32_MAX) from L->dec, the other locals and the
 * worlds of unflagged nodes from the cache. With `allowed` (per node), stops as soon as a node
 * exceeds its allowance and returns INFINITY (trying the block's last failing frames first,
 * then its tightest ones); otherwise returns the largest error. With `commit`, the cache takes
 * what was computed (and every cached world is made), else (a candidate of one block) the parts
 * of its locals it recomputes go to L->cand and its worlds to the scratch. */
double kiln__lossy_measure(kiln__lossy *L, uint32_t blk, const double *allowed, int commit)
{
    double worst = 0.0;
    int early = allowed && blk != UINT32_MAX && !commit; /* a candidate's measurement */
    /* a translation or scale candidate leaves the cached rotations of its block as they are */
    int keep_rot = !commit && L->lazy && blk == L->lazy_blk && (L->lazy_c < 3 || L->lazy_c > 6);
    /* a rotation candidate leaves the cached translations and scales of its block */
    int keep_ts = !commit && L->lazy && blk == L->lazy_blk && L->lazy_c >= 3 && L->lazy_c <= 6;
    uint32_t *hot = early ? L->hot + (size_t)blk * KILN__HOT : NULL;
    /* A failing candidate fails at the same frames whatever their order, and a passing one
     * measures them all: the order only decides how soon a failure is seen. */
    uint32_t *border = early ? L->block_order + (size_t)blk * L->n : NULL;
    const uint32_t *order = border && border[0] != UINT32_MAX ? border : L->order;
    double *err2 = L->node_err, *limit2 = L->limit2; /* squared until the end */
    kiln__pass pass = {keep_rot, keep_ts, early, allowed != NULL, commit};
    L->cand_kind = keep_rot ? (L->lazy_c < 3 ? KILN__CAND_T : KILN__CAND_RS_S) : keep_ts ? KILN__CAND_RS : KILN__CAND_ALL;
    L->rot_lanes.mask = 0;
    int rot_lanes = L->avx2 && (keep_ts || (keep_rot && L->lazy_c >= 7));
    if (rot_lanes) {
        L->rot_lanes.relative = 0;
        L->rot_lanes.qw_rebuilt = (uint32_t)kiln__qw_rebuilt(L, blk);
    }
    /* the candidate's parents' scales where it changes them */
    int cand_s = !commit && (L->cand_kind == KILN__CAND_ALL || L->cand_kind == KILN__CAND_RS_S);
    if (++L->measured == 0) { /* wrapped: no frame may look tried */
        memset(L->tried, 0, (size_t)L->n * sizeof *L->tried);
        L->measured = 1;
    }
    memset(err2, 0, (size_t)L->nodes * sizeof *err2);
    for (uint32_t m = 0; allowed && m < L->listed; m++) {
        uint32_t i = L->list[m];
        if (allowed[i] != L->limit_of[i]) /* a block's candidates share them */
            limit2[i] = kiln__square_limit(allowed[i]), L->limit_of[i] = allowed[i];
    }
    /* The steps' places stay as they are for the next candidates of the same block (until the
     * next kiln__lossy_select or full measurement): the cached worlds they read stay made. */
    int same_steps = !commit && blk != UINT32_MAX && L->steps_blk == blk;
    L->steps_blk = commit || blk == UINT32_MAX ? UINT32_MAX : blk;
    for (uint32_t m = 0; m < L->listed; m++) {
        kiln__step *st = &L->steps[m];
        uint32_t i = L->list[m];
        int32_t p = L->node[i].parent;
        int own = blk == UINT32_MAX || L->node_block[i] == blk;
        if (commit && L->locals_made && (L->node_block[i] == UINT32_MAX || !L->block_stale[L->node_block[i]]))
            own = 0; /* its cached local is what its decoded values make */
        st->err2 = 0.0;
        st->limit2 = allowed ? limit2[i] : 0.0;
        st->lanes_rot = 0;
        if (!same_steps) {
            st->node = i;
            st->own = (uint8_t)own;
            st->ssc = (uint8_t)(L->node[i].ssc != 0);
            st->lc = L->local + i, st->sc = L->scale + i;
            st->out = commit ? L->local + i : own ? L->cand + L->node[i].joint % KILN_SOA_WIDTH : NULL;
            st->out_s = commit ? L->scale + i : own ? L->cand_scale + L->node[i].joint % KILN_SOA_WIDTH : NULL;
            st->raw = L->raw_world + i;
            st->w = commit ? L->world + i : L->scratch + m;
            st->w_frames = commit ? SIZE_MAX : 0;
            st->ps = NULL, st->pw = NULL, st->pw_frames = SIZE_MAX, st->ps_cand = 0;
        }
        uint32_t j = L->node[i].joint, mr = j == UINT32_MAX ? 0u : L->modes[j] >> 6 & 3u;
        if (own && rot_lanes && (mr == KILN_MODE_ABSOLUTE || mr == KILN_MODE_RELATIVE)) {
            unsigned l = j % KILN_SOA_WIDTH;
            st->lanes_rot = (uint8_t)keep_ts;
            L->rot_lanes.mask |= 1u << l;
            if (mr == KILN_MODE_RELATIVE) L->rot_lanes.relative |= 1u << l;
            L->rot_lanes.q[l] = kiln__dec(L, j, 3);
            L->rot_lanes.node[l] = i;
            for (int c = 0; c < 4; c++) L->rot_lanes.rest[c][l] = L->node[i].rest[3 + c];
        }
        if (p >= 0) { /* listed before i: its step is set */
            int own_p = blk == UINT32_MAX || L->node_block[p] == blk;
            st->ps_cand = (uint8_t)(own_p && cand_s);
            st->ps = st->ps_cand ? L->cand_scale + L->node[p].joint % KILN_SOA_WIDTH : L->scale + p;
            if (same_steps) continue;
            st->pw = L->world + p;
            if (L->measure[p] && !commit) { /* its place: the list is in node order */
                uint32_t lo = 0, hi = m;
                while (lo < hi) {
                    uint32_t mid = (lo + hi) / 2;
                    if (L->list[mid] < (uint32_t)p) lo = mid + 1;
                    else hi = mid;
                }
                st->pw = L->scratch + lo, st->pw_frames = 0;
            } else if (!L->measure[p] && !L->w_valid[p]) {
                kiln__world_fill(L, (uint32_t)p);
            }
        }
    }
    for (uint32_t k = 0; k < L->n + (early ? KILN__HOT : 0u); k++) {
        uint32_t r;
        if (!early) {
            r = k;
        } else if (k < KILN__HOT) {
            r = hot[k];
            if (r == UINT32_MAX) continue;
            L->tried[r] = L->measured;
        } else {
            r = order[k - KILN__HOT];
            if (L->tried[r] == L->measured) continue; /* tried already */
        }
        if (L->lazy && !L->lazy_done[r]) kiln__decode_lazy(L, r), L->lazy_done[r] = 1;
        double score = 0.0; /* L->score[r]: every frame is visited once, a pass sets them all */
        int over;
#if KILN__WORLD_AVX2
        if (L->avx2) over = kiln__frame_avx2(L, &pass, r, &score);
        else
#endif
        over = kiln__frame_sse2(L, &pass, r, &score);
        if (over) {
            if (early) { /* to the front of the list */
                unsigned h = 0;
                while (h + 1 < KILN__HOT && hot[h] != r) h++;
                for (; h > 0; h--) hot[h] = hot[h - 1];
                hot[0] = r;
            }
            return INFINITY;
        }
        if (early) L->score[r] = score;
    }
    for (uint32_t m = 0; m < L->listed; m++) { /* the others stay 0 */
        double e = sqrt(L->steps[m].err2);
        err2[L->steps[m].node] = e;
        if (e > worst) worst = e;
    }
    if (commit) {
        for (uint32_t m = 0; m < L->listed; m++) L->w_valid[L->list[m]] = 1;
        if (blk == UINT32_MAX) L->locals_made = 1, memset(L->block_stale, 0, L->blocks);
    }
    if (early) { /* passed: the block's next candidates try the tightest frames first */
        /* the order is total (ties by frame), so sorting the last one, nearly in order already,
         * gives the same frames as sorting 0..n-1 */
        if (border[0] == UINT32_MAX)
            for (uint32_t f = 0; f < L->n; f++) border[f] = f;
        kiln__lossy_sort_frames(border, L->n, L->score);
    }
    return worst;
}

/* A measured candidate passed: the cache takes the parts of the locals of block blk's joints it
 * recomputed (cand_kind); the cached worlds of the measured nodes are stale. */
void kiln__lossy_keep(kiln__lossy *L, uint32_t blk)
{
    for (uint32_t m = 0; m < L->listed; m++) {
        uint32_t i = L->list[m];
        L->w_valid[i] = 0;
        if (L->node_block[i] != blk) continue;
        const kiln__loc *from = L->cand + L->node[i].joint % KILN_SOA_WIDTH;
        kiln__loc *to = L->local + i;
        size_t fs = L->cand_lanes, ts = L->nodes;
        uint32_t n = L->n;
        const kiln__scl *from_s = L->cand_scale + (from - L->cand);
        kiln__scl *to_s = L->scale + i;
        if (L->cand_kind == KILN__CAND_ALL)
            for (uint32_t r = 0; r < n; r++) to[r * ts] = from[r * fs], to_s[r * ts] = from_s[r * fs];
        else if (L->cand_kind == KILN__CAND_T)
            for (uint32_t r = 0; r < n; r++) memcpy(to[r * ts].t, from[r * fs].t, sizeof to->t);
        else if (L->cand_kind == KILN__CAND_RS)
            for (uint32_t r = 0; r < n; r++) memcpy(to[r * ts].rs, from[r * fs].rs, sizeof to->rs);
        else
            for (uint32_t r = 0; r < n; r++) {
                memcpy(to[r * ts].rs, from[r * fs].rs, sizeof to->rs);
                to_s[r * ts] = from_s[r * fs];
            }
    }
}

/* The raw world transforms of every node at every frame, into the cache. */
void kiln__lossy_raw_worlds(kiln__lossy *L)
{
    for (uint32_t r = 0; r < L->n; r++) {
        kiln__wxf *rw = L->raw_world + (size_t)r * L->nodes;
        for (uint32_t i = 0; i < L->nodes; i++) {
            int32_t p = L->node[i].parent;
            kiln__loc *scratch = L->cand; /* free before the first measurement, at least nodes */
            kiln__scl *scratch_s = L->cand_scale;
            kiln__local_xf(L, i, r, 0, &scratch[i], &scratch_s[i]);
            kiln__compose(L, i, scratch[i].rs, scratch[i].t, p >= 0 ? &rw[p] : NULL, p >= 0 ? scratch_s[p].s : NULL,
                          &rw[i]);
        }
    }
}

/* Flags the nodes driven by block `blk` (every node when blk is UINT32_MAX), their
 * descendants (measured) and ancestors (evaluated). */
void kiln__lossy_select(kiln__lossy *L, uint32_t blk)
{
    L->listed = 0;
    L->steps_blk = UINT32_MAX; /* the steps are made again */
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
