/* kiln_sample: time -> frame rows, the sampling context (decoded row cache), the gather and
 * scatter for clips whose slots are not the skeleton's bone order, and the scalar tracks.
 *
 * The per-block work (decode, interpolate, compose) is in the path kernels
 * (anim_sample_scalar.c, anim_sample_sse2.c, anim_sample_avx2.c); this file decides which rows
 * and scratch they read and where they write.
 */
#include <math.h>
#include <string.h>

#include "anim_internal.h"
#include "simd_table.h"
#if KILN__SIMD_SSE2
#include <emmintrin.h>
#endif
#include "math_f64.h"
#include "error_detail.h"

/* ---- slerp correction (see anim_internal.h) ----------------------------------------------- */
const float kiln__slerp_fit[KILN__SLERP_DEG][4] = {
    {0.66664079f, -0.000265858716f, 0.000789040295f, -0.0126387583f},
    {0.133840151f, 0.538526377f, -0.0151319965f, 0.244964295f},
    {0.0348492906f, 0.16377165f, 0.525211471f, -1.54437942f},
    {0.0219617225f, 0.165994383f, -0.0201915627f, 4.65415535f},
    {-0.00799772013f, -0.0959757305f, 0.397228642f, -5.26839022f},
    {0.00905832134f, 0.0817286691f, -0.117016589f, 3.28338099f},
};

/* Per call, so kept short: on SSE2 the 6 rows go 4 and 2 to a vector, with the scalar loop's
 * multiplies and adds in its order (the same values). */
void kiln__slerp_coeffs(float t, float q[KILN__SLERP_DEG])
{
    float h = t - 0.5f, y = h * h, g = t * h * (t - 1.0f);
#if KILN__SIMD_SSE2
    /* kiln__slerp_fit by column (rows 0-5, then 2 zero rows) */
    static const float col[4][8] = {
        {0.66664079f, 0.133840151f, 0.0348492906f, 0.0219617225f, -0.00799772013f, 0.00905832134f, 0.0f, 0.0f},
        {-0.000265858716f, 0.538526377f, 0.16377165f, 0.165994383f, -0.0959757305f, 0.0817286691f, 0.0f, 0.0f},
        {0.000789040295f, -0.0151319965f, 0.525211471f, -0.0201915627f, 0.397228642f, -0.117016589f, 0.0f, 0.0f},
        {-0.0126387583f, 0.244964295f, -1.54437942f, 4.65415535f, -5.26839022f, 3.28338099f, 0.0f, 0.0f},
    };
    __m128 vy = _mm_set1_ps(y), vg = _mm_set1_ps(g), p[2];
    for (int k = 0; k < 2; k++) {
        p[k] = _mm_add_ps(_mm_loadu_ps(col[2] + 4 * k), _mm_mul_ps(vy, _mm_loadu_ps(col[3] + 4 * k)));
        p[k] = _mm_add_ps(_mm_loadu_ps(col[1] + 4 * k), _mm_mul_ps(vy, p[k]));
        p[k] = _mm_mul_ps(vg, _mm_add_ps(_mm_loadu_ps(col[0] + 4 * k), _mm_mul_ps(vy, p[k])));
    }
    _Static_assert(KILN__SLERP_DEG == 6, "rows 0-3 and 4-5");
    _mm_storeu_ps(q, p[0]);
    _mm_storel_pi((__m64 *)(void *)(q + 4), p[1]);
#else
    for (int i = 0; i < KILN__SLERP_DEG; i++) {
        const float *c = kiln__slerp_fit[i];
        q[i] = g * (c[0] + y * (c[1] + y * (c[2] + y * c[3])));
    }
#endif
}

void kiln__slerp_identity_exact(const float k[4], float a, float out[4])
{
    double kd[4] = {k[0], k[1], k[2], k[3]}, r[4];
    kiln__qpow(kd, a, r);
    for (int i = 0; i < 4; i++) out[i] = (float)r[i];
}

void kiln__fix_exact(const kiln__modes *m, kiln_soa_xform *k)
{
    for (unsigned l = 0; l < KILN__LANES; l++) {
        if (!m->exact_mask[l]) continue;
        float q[4] = {k->qx[l], k->qy[l], k->qz[l], k->qw[l]}, r[4];
        kiln__slerp_identity_exact(q, m->exact_a[l], r);
        k->qx[l] = r[0], k->qy[l] = r[1], k->qz[l] = r[2], k->qw[l] = r[3];
    }
}

#define KILN__ONES8 {1, 1, 1, 1, 1, 1, 1, 1}
const kiln_soa_xform kiln__soa_identity_block = {
    .qw = KILN__ONES8, .sx = KILN__ONES8, .sy = KILN__ONES8, .sz = KILN__ONES8};
#undef KILN__ONES8

void kiln__soa_identity(kiln_soa_xform *x)
{
    memset(x, 0, sizeof *x);
    for (unsigned l = 0; l < KILN__LANES; l++) x->qw[l] = x->sx[l] = x->sy[l] = x->sz[l] = 1.0f;
}

void kiln_pose_identity(kiln_soa_xform *pose, uint32_t soa_count)
{
    if (!pose) return;
    for (uint32_t i = 0; i < soa_count; i++) kiln__soa_identity(&pose[i]);
}

/* ---- time -> rows ------------------------------------------------------------------------ */
typedef struct kiln__frame_pos {
    uint32_t row0, row1;   /* rows i and i+1 (equal at the end) */
    float    u;            /* fraction in [0, 1] */
} kiln__frame_pos;

static int kiln__wraps(const kiln_anim_binding *b, kiln_loop loop)
{
    return loop == KILN_LOOP_WRAP || (loop == KILN_LOOP_CLIP && (b->clip_flags & KILN_ANIM_LOOPING));
}

/* Time in frames (f = time_s · framerate) -> position in frames relative to first_frame, in
 * [0, period = frame_count - 1]. Double precision throughout: 1e7 frames keep sub-1e-8
 * fractions. fmod is exact, so huge times wrap to the exact phase their double value has. */
static double kiln__rel_frame_slow(double f, double period, int64_t first, int wrap)
{
    if (f != f) return 0.0;                 /* NaN: the first frame */
    if (f == INFINITY) return period;
    if (f == -INFINITY) return 0.0;
    double rel = f - (double)first;
    if (wrap && period > 0.0) {
        /* The first two periods without the fmod call: there fmod(rel, period) is rel, or
         * rel - period, which is exact (Sterbenz: period <= rel < 2·period). */
        if (rel >= 0.0 && rel < period) return rel;
        if (rel >= period && rel < 2.0 * period) return rel - period;
        rel = fmod(rel, period);
        if (rel < 0.0) rel += period;
        if (!(rel < period)) rel = 0.0;     /* -tiny + period rounding up to period */
        return rel;
    }
    return rel < 0.0 ? 0.0 : (rel > period ? period : rel);
}

/* The common case first: a time inside the clip's first period is its own position whatever
 * the loop mode (wrapping: the first period; clamping: inside the range), and NaN, ±inf and
 * every time outside fail the test; those, and a single-frame clip (period 0), take the rest of
 * kiln__rel_frame_slow. The same double operations as there, so the same position. */
static double kiln__rel_frame(const kiln_anim_binding *b, double time_s, kiln_loop loop)
{
    double f = time_s * b->framerate; /* may overflow to ±inf: handled in the slow part */
    double rel = f - (double)b->first_frame;
    if (KILN__LIKELY(rel >= 0.0 && rel < b->period)) return rel;
    return kiln__rel_frame_slow(f, b->period, b->first_frame, kiln__wraps(b, loop));
}

static kiln__frame_pos kiln__frame_of(const kiln_anim_binding *b, double time_s, kiln_loop loop)
{
    kiln__frame_pos p;
    double rel = kiln__rel_frame(b, time_s, loop);
    uint32_t last = b->frame_count - 1u;
    /* rel is in [0, last] (last < 2^32): truncation is floor, without the libm call; fabs
     * keeps u = +0 for rel = -0 (time -0), as rel - floor(rel) gives */
    p.row0 = (uint32_t)rel;
    p.u = (float)fabs(rel - (double)p.row0);
    /* A fraction just below 1 rounds to 1.0f: that is the next frame, sampled exactly. */
    if (!(p.u < 1.0f)) p.row0++, p.u = 0.0f;
    if (p.row0 >= last) p.row0 = last, p.u = 0.0f;
    p.row1 = p.row0 < last ? p.row0 + 1u : last;
    return p;
}

/* ---- sampling context ---------------------------------------------------------------------- */
#define KILN__CONTEXT_MAGIC 0x58544353u /* "SCTX" */
#define KILN__NO_ROW 0xFFFFFFFFu
#define KILN__CONTEXT_HEADER 64u

typedef struct kiln__context {
    uint32_t magic;
    uint32_t capacity;                 /* decoded blocks per row slot */
    const kiln_anim_binding *binding;  /* what the cache holds rows of */
    const kiln_blob_animation *clip;
    const kiln__kernels *kernels;      /* paths round differently: a path change refills */
    uint32_t row[2];                   /* row index held by each slot, KILN__NO_ROW */
    uint32_t missed;                   /* row i of the last call that found neither row cached */
} kiln__context;
_Static_assert(sizeof(kiln__context) <= KILN__CONTEXT_HEADER, "context header fits its 64 bytes");

size_t kiln_sample_context_size(const kiln_anim_binding *binding)
{
    if (!binding || binding->magic != KILN__BINDING_MAGIC) return 0;
    size_t rows = (binding->flags & KILN__BIND_CACHE) ? 2u * (size_t)binding->block_count * KILN__SOA_BYTES : 0;
    return KILN__CONTEXT_HEADER + rows;
}

kiln_result kiln_sample_context_init(void *mem, size_t size, const kiln_anim_binding *binding)
{
    if (!mem) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_sample_context_init: mem", "mem is NULL");
    if ((uintptr_t)mem & 15u)
        return kiln__fail(KILN_ERR_BLOB_MISALIGNED, "kiln_sample_context_init: mem", "mem %p is not 16-byte aligned", mem);
    if (!binding || binding->magic != KILN__BINDING_MAGIC)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_sample_context_init: binding", "not a binding from kiln_anim_bind");
    if (size < kiln_sample_context_size(binding))
        return kiln__fail(KILN_ERR_BUFFER_TOO_SMALL, "kiln_sample_context_init: size",
                          "size %zu is below kiln_sample_context_size() = %zu", size, kiln_sample_context_size(binding));
    kiln__context *c = (kiln__context *)mem;
    memset(c, 0, sizeof *c);
    c->magic = KILN__CONTEXT_MAGIC;
    c->capacity = (uint32_t)((size - KILN__CONTEXT_HEADER) / (2u * KILN__SOA_BYTES));
    c->row[0] = c->row[1] = c->missed = KILN__NO_ROW;
    return KILN_OK;
}

static kiln_soa_xform *kiln__context_rows(kiln__context *c, unsigned slot)
{
    return (kiln_soa_xform *)(void *)((unsigned char *)c + KILN__CONTEXT_HEADER) + (size_t)slot * c->capacity;
}

static void kiln__decode_row(const kiln__kernels *k, const kiln_anim_binding *b, uint32_t row, kiln_soa_xform *dst)
{
    const unsigned char *r = b->rows + (size_t)row * b->row_stride;
    for (uint32_t blk = 0; blk < b->block_count; blk++)
        if (b->blocks[blk].flags & KILN__BLK_CACHE) k->decode_block(b, blk, r, NULL, &dst[blk], NULL);
}

/* Makes the context hold decoded rows p.row0 and p.row1 and points the job at them. Forward
 * playback re-decodes only when the pair changes, and a step to the next frame reuses the
 * slot holding the old row i+1 as the new row i. When neither row is cached and the pair does
 * not follow the previous miss (a jump, or random access), nothing is cached: the sampler
 * decodes block by block on the stack, as without a context. Filling the cache there would
 * only add 2 rows of stores and reloads (6.4 KB for 80 joints) per call, which with hundreds
 * of instances is traffic to L3 (measured: 2x slower random access). With `fill`, a new row
 * i+1 is not decoded here but left to the kernel (job->fill1), which decodes it block by
 * block as it interpolates, saving a pass over the row and its reload. */
static kiln_result kiln__context_prepare(kiln__context *c, const kiln__kernels *k, const kiln_anim_binding *b,
                                         kiln__frame_pos p, int fill, kiln__sample_job *job)
{
    if (c->magic != KILN__CONTEXT_MAGIC)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_sample: desc->context",
                          "not a context from kiln_sample_context_init (or damaged)");
    if (!(b->flags & KILN__BIND_CACHE)) return KILN_OK; /* nothing worth caching */
    if (c->capacity < b->block_count)
        return kiln__fail(KILN_ERR_BUFFER_TOO_SMALL, "kiln_sample: desc->context",
                          "the context holds rows of %u blocks; this binding has %u", c->capacity, b->block_count);
    if (c->binding != b || c->clip != b->clip || c->kernels != k) {
        c->binding = b, c->clip = b->clip, c->kernels = k;
        c->row[0] = c->row[1] = c->missed = KILN__NO_ROW;
    }
    int s0 = c->row[0] == p.row0 ? 0 : (c->row[1] == p.row0 ? 1 : -1);
    int s1 = c->row[0] == p.row1 ? 0 : (c->row[1] == p.row1 ? 1 : -1);
    if (p.row1 == p.row0) s1 = s0;
    if (s0 < 0 && s1 < 0) {
        uint32_t prev = c->missed;
        c->missed = p.row0;
        if (prev != p.row0 && prev + 1u != p.row0) return KILN_OK;
    }
    if (s0 < 0) {
        s0 = s1 >= 0 ? 1 - s1 : 0;
        kiln__decode_row(k, b, p.row0, kiln__context_rows(c, (unsigned)s0));
        c->row[s0] = p.row0;
        if (p.row1 == p.row0) s1 = s0;
    }
    if (s1 < 0) {
        s1 = 1 - s0;
        if (fill) job->fill1 = kiln__context_rows(c, (unsigned)s1); /* the kernel decodes it as it samples */
        else kiln__decode_row(k, b, p.row1, kiln__context_rows(c, (unsigned)s1));
        c->row[s1] = p.row1;
    }
    job->dec0 = kiln__context_rows(c, (unsigned)s0);
    job->dec1 = kiln__context_rows(c, (unsigned)s1);
    return KILN_OK;
}

/* ---- scatter path: clip slots in their own order ------------------------------------------ */
static void kiln__lane_copy(kiln_soa_xform *dst, unsigned dl, const kiln_soa_xform *src, unsigned sl)
{
    for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) kiln__soa_comp_mut(dst, c)[dl] = kiln__soa_comp(src, c)[sl];
}

static void kiln__sample_scatter(const kiln__kernels *k, const kiln__sample_job *job, const kiln_soa_xform *rest,
                                 const kiln_soa_xform *base, kiln_soa_xform *out)
{
    const kiln_anim_binding *b = job->binding;
    for (uint32_t blk = 0; blk < b->block_count; blk++) {
        kiln_soa_xform r, c, o;
        int any = 0;
        for (unsigned l = 0; l < KILN__LANES; l++) {
            uint32_t j = blk * KILN__LANES + l;
            uint32_t bone = j < b->joint_count ? b->slot_bone[j] : KILN_BLOB_NONE;
            if (bone == KILN_BLOB_NONE) {
                /* dropped lane: any finite input will do */
                static const float id[KILN_ANIM_COMPONENTS] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1};
                for (unsigned q = 0; q < KILN_ANIM_COMPONENTS; q++)
                    kiln__soa_comp_mut(&r, q)[l] = kiln__soa_comp_mut(&c, q)[l] = id[q];
                continue;
            }
            any = 1;
            kiln__lane_copy(&r, l, &rest[bone / KILN__LANES], bone % KILN__LANES);
            kiln__lane_copy(&c, l, &base[bone / KILN__LANES], bone % KILN__LANES);
        }
        if (!any) continue;
        k->sample_blocks(job, blk, blk + 1, &r, &c, &o);
        for (unsigned l = 0; l < KILN__LANES; l++) {
            uint32_t j = blk * KILN__LANES + l;
            uint32_t bone = j < b->joint_count ? b->slot_bone[j] : KILN_BLOB_NONE;
            if (bone != KILN_BLOB_NONE) kiln__lane_copy(&out[bone / KILN__LANES], bone % KILN__LANES, &o, l);
        }
    }
}

/* ---- kiln_sample ----------------------------------------------------------------------------- */
static void kiln__sample_scalars(const kiln_anim_binding *b, kiln__frame_pos p, float *dst, uint32_t cap)
{
    uint32_t n = cap < b->scalar_count ? cap : b->scalar_count;
    const unsigned char *base = (const unsigned char *)b->anim_blob;
    for (uint32_t i = 0; i < n; i++) {
        const float *v = (const float *)(const void *)(base + b->scalars[i].data_offset);
        float v0 = v[p.row0], v1 = v[p.row1];
        dst[i] = b->scalars[i].kind == KILN_SCALAR_VISIBILITY ? v0 : v0 + p.u * (v1 - v0);
    }
}

/* The checks of kiln_sample, in their documented order: the first that fails. Out of line:
 * kiln_sample tests them all at once and comes here only when one fails. */
static KILN__NOINLINE kiln_result kiln__sample_fail(const kiln_sample_desc *desc)
{
    if (!desc) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_sample: desc", "desc is NULL");
    if (!desc->binding || desc->binding->magic != KILN__BINDING_MAGIC)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_sample: desc->binding", "not a binding from kiln_anim_bind");
    if (!desc->out) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_sample: desc->out", "out is NULL");
    const kiln_anim_binding *b = desc->binding;
    if (desc->out_count < b->soa_count)
        return kiln__fail(KILN_ERR_BUFFER_TOO_SMALL, "kiln_sample: desc->out_count",
                          "out_count %u is below the binding's soa_count %u", desc->out_count, b->soa_count);
    return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_sample: desc->scalars", "scalars is NULL with scalar_count %u",
                      desc->scalar_count);
}

kiln_result kiln_sample(const kiln_sample_desc *desc)
{
    const kiln_anim_binding *b = desc ? desc->binding : NULL;
    if (KILN__UNLIKELY(!b || b->magic != KILN__BINDING_MAGIC || !desc->out || desc->out_count < b->soa_count ||
                       (desc->scalar_count && !desc->scalars)))
        return kiln__sample_fail(desc);

    const kiln__kernels *k = kiln__kernels_get();
    kiln__frame_pos p = kiln__frame_of(b, desc->time_s, desc->loop);
    kiln__sample_job job;
    job.binding = b;
    job.row0 = b->rows + (size_t)p.row0 * b->row_stride;
    job.row1 = b->rows + (size_t)p.row1 * b->row_stride;
    job.dec0 = job.dec1 = NULL;
    job.fill1 = NULL;
    job.u = p.u;
    job.u_zero = p.u == 0.0f && !(b->flags & KILN__BIND_LOSSY);
    if (p.u != 0.0f) kiln__slerp_coeffs(p.u, job.slerp_q);
    else memset(job.slerp_q, 0, sizeof job.slerp_q); /* t' = 0 */
    if (desc->context) {
        /* row 1 may be left to the kernel when it samples every block (it fills the blocks it
         * samples; the scatter path skips blocks that drive no bone) */
        kiln_result r = kiln__context_prepare((kiln__context *)desc->context, k, b, p, b->flags & KILN__BIND_FILL, &job);
        if (r != KILN_OK) return r;
    }

    const kiln_soa_xform *rest = b->rest;
    const kiln_soa_xform *base = desc->base ? desc->base : rest;
    kiln_soa_xform *out = desc->out;
    if (b->flags & KILN__BIND_IDENTITY) {
        uint32_t n = b->sampled;
        if (n) k->sample_blocks(&job, 0, n, rest, base, out);
        if (out != base && b->soa_count > n) memmove(out + n, base + n, (size_t)(b->soa_count - n) * sizeof *out);
    } else {
        if (out != base && b->soa_count) memmove(out, base, (size_t)b->soa_count * sizeof *out);
        kiln__sample_scatter(k, &job, rest, base, out);
    }
    if (desc->scalar_count) kiln__sample_scalars(b, p, desc->scalars, desc->scalar_count);
    return KILN_OK;
}
