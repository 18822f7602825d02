/* Animation nodes (Cast reference D): curves -> conditioned keys -> one value per frame.
 *
 * Every curve is read, its bad keys dropped (non-finite values, F), its keys sorted with the
 * last of equal frames kept (D.2), rotations normalised and put on one hemisphere key to key
 * (D.3), then resampled at every integer frame of the clip's range: linearly for t/s/bs,
 * along the shortest arc for rq, stepwise for vb. Keys sit on integer frames, so linear and
 * slerp segments are reproduced exactly by interpolating the per-frame samples again at run
 * time: nothing is lost by the resampling, and at key frames the samples are the keys.
 *
 * Curves name bones; the skeleton is not known here (an animation file stands alone), so
 * modes and CurveModeOverrides are kept as authored and resolved when a clip is bound.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bake_anim.h"
#include "util.h"
#include "bake_report.h"
#include "ds.h"
#include "math_f64.h"

/* Frames a clip may span, and dense samples it may hold (components x frames): beyond these a
 * clip is refused rather than allocating gigabytes (F: frames near 2^32 are legal on disk). */
#define KILN__ANIM_MAX_FRAMES  (1u << 24)
#define KILN__ANIM_MAX_SAMPLES ((uint64_t)1 << 28)

typedef struct kiln__keys {
    int64_t *frames;    /* ascending, distinct */
    float   *values;    /* count x comps */
    uint8_t *rest;      /* NULL, or count flags: the key stands for the bound skeleton's rest */
    uint32_t count, comps;
} kiln__keys;

typedef struct kiln__curve_in {
    const char          *name;
    kiln_source_channel  prop;
    uint32_t             mode;  /* KILN_MODE_* */
    float                ab;
    kiln__keys           keys;
} kiln__curve_in;

typedef struct kiln__anim_build {
    const kiln__bake_ctx *ctx;
    const kiln_source_animation *src;
    kiln__anim           *out;
    kiln__curve_in       *curves;
    uint32_t              curve_count;
    uint32_t             *map;       /* open addressing: joint/scalar index + 1, 0 = empty */
    uint32_t              map_mask;
} kiln__anim_build;

static const float kiln__identity10[KILN_ANIM_COMPONENTS] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1};

static const kiln_allocator *kiln__alloc_of(const kiln__anim_build *b) { return b->ctx->allocator; }

static void *kiln__alloc_array(const kiln_allocator *a, uint64_t count, size_t elem)
{
    if (count == 0) count = 1;
    if (count > SIZE_MAX / elem) return NULL;
    return kiln__realloc(a, NULL, (size_t)count * elem);
}

/* ---- keys -------------------------------------------------------------------------------- */

typedef struct kiln__key_order {
    int64_t  frame;
    uint32_t index;
} kiln__key_order;

static int kiln__cmp_key_order(const void *pa, const void *pb)
{
    const kiln__key_order *a = pa, *b = pb;
    if (a->frame != b->frame) return a->frame < b->frame ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Unit quaternion from a key (F): unchanged when already unit to float precision, so that
 * lossless clips give back the authored bits; identity when too short to have a direction. */
static void kiln__condition_quat(float *q, uint64_t *renormalised)
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double len2 = x * x + y * y + z * z + w * w;
    if (fabs(len2 - 1.0) <= 4e-7) return;
    if (!(len2 > 1e-16)) {
        q[0] = q[1] = q[2] = 0.0f, q[3] = 1.0f;
    } else {
        double inv = 1.0 / sqrt(len2);
        q[0] = (float)(x * inv), q[1] = (float)(y * inv), q[2] = (float)(z * inv), q[3] = (float)(w * inv);
    }
    (*renormalised)++;
}

/* Whether the keys need none of kiln__filter_keys: every value finite, the frames strictly
 * ascending (the usual case). */
static int kiln__keys_clean(const uint32_t *frames, const float *values, uint32_t n, uint32_t comps)
{
    uint32_t bad = 0;
    for (size_t i = 0; i < (size_t)n * comps; i++) bad += !(fabsf(values[i]) <= FLT_MAX);
    for (uint32_t i = 1; i < n; i++) bad += frames[i - 1] >= frames[i];
    return bad == 0;
}

/* Filters, sorts and de-duplicates the keys of one curve (read into frames and values) into k,
 * using `order` (key_count entries) as scratch. */
static void kiln__filter_keys(kiln__anim_build *b, const kiln_source_curve *c, const uint32_t *frames,
                              const float *values, kiln__key_order *order, kiln__keys *k)
{
    const kiln_source_loc *loc = &c->loc;
    uint32_t n = c->key_count, comps = k->comps;

    /* Non-finite values: the key is dropped (F). */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++) {
        int ok = 1;
        for (uint32_t q = 0; q < comps; q++) ok &= isfinite(values[(size_t)i * comps + q]) != 0;
        if (ok) order[kept].frame = frames[i], order[kept].index = i, kept++;
    }
    if (kept < n)
        kiln__bake_report(&b->ctx->sink, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING, loc, "kv", KILN_NO_OFFSET,
                          "%u key(s) with NaN or infinite values dropped", n - kept);

    /* Sorted by frame, file order among equal frames; the last of equal frames wins (D.2).
     * The order is total, so keys already in it need no sort. */
    uint32_t sorted = 1;
    while (sorted < kept && kiln__cmp_key_order(&order[sorted - 1], &order[sorted]) < 0) sorted++;
    if (sorted < kept) qsort(order, kept, sizeof *order, kiln__cmp_key_order);
    uint32_t out = 0, duplicates = 0;
    for (uint32_t i = 0; i < kept; i++) {
        if (i + 1 < kept && order[i + 1].frame == order[i].frame) {
            duplicates++;
            continue;
        }
        k->frames[out] = order[i].frame;
        if (k->rest) k->rest[out] = c->rest_keys[order[i].index] != 0;
        memcpy(&k->values[(size_t)out * comps], &values[(size_t)order[i].index * comps], comps * sizeof(float));
        out++;
    }
    if (duplicates)
        kiln__bake_report(&b->ctx->sink, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING, loc, "kb", KILN_NO_OFFSET,
                          "%u key(s) share a frame with a later key; the later value is used", duplicates);
    k->count = out;
}

/* Reads the keys of one curve: as they are when clean, else filtered, sorted and
 * de-duplicated; rotations conditioned. Returns ERR_OUT_OF_MEMORY or KILN_OK (an empty result
 * is legal: the curve has no effect). */
static kiln_result kiln__read_keys(kiln__anim_build *b, const kiln_source_curve *c, kiln__keys *k)
{
    const kiln_allocator *a = kiln__alloc_of(b);
    const kiln_source_loc *loc = &c->loc;
    uint32_t n = c->key_count, comps = c->channel == KILN_SOURCE_CHANNEL_ROTATION ? 4u : 1u;
    memset(k, 0, sizeof *k);
    k->comps = comps;
    if (n == 0) return KILN_OK;
    uint32_t *frames = kiln__alloc_array(a, n, sizeof *frames);
    float *values = kiln__alloc_array(a, (uint64_t)n * comps, sizeof *values);
    kiln__key_order *order = kiln__alloc_array(a, n, sizeof *order);
    k->frames = kiln__alloc_array(a, n, sizeof *k->frames);
    k->values = kiln__alloc_array(a, (uint64_t)n * comps, sizeof *k->values);
    if (c->rest_keys) k->rest = kiln__alloc_array(a, n, sizeof *k->rest);
    kiln_result r = KILN_ERR_OUT_OF_MEMORY;
    if (!frames || !values || !order || !k->frames || !k->values || (c->rest_keys && !k->rest)) goto done;
    memcpy(frames, c->frames, (size_t)n * sizeof *frames);
    memcpy(values, c->values, (size_t)n * comps * sizeof *values);
    if (kiln__keys_clean(frames, values, n, comps)) {
        for (uint32_t i = 0; i < n; i++) k->frames[i] = frames[i];
        for (uint32_t i = 0; k->rest && i < n; i++) k->rest[i] = c->rest_keys[i] != 0;
        memcpy(k->values, values, (size_t)n * comps * sizeof *values);
        k->count = n;
    } else {
        kiln__filter_keys(b, c, frames, values, order, k);
    }

    if (comps == 4) {
        uint64_t renormalised = 0;
        for (uint32_t i = 0; i < k->count; i++) {
            float *q = &k->values[(size_t)i * 4];
            kiln__condition_quat(q, &renormalised);
            /* Consecutive keys on one hemisphere, so the segment between them is the short arc. */
            if (i > 0) {
                const float *p = q - 4;
                if ((double)p[0] * q[0] + (double)p[1] * q[1] + (double)p[2] * q[2] + (double)p[3] * q[3] < 0.0)
                    q[0] = -q[0], q[1] = -q[1], q[2] = -q[2], q[3] = -q[3];
            }
        }
        if (renormalised)
            kiln__bake_report(&b->ctx->sink, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_INFO, loc, "kv",
                              KILN_NO_OFFSET, "%llu rotation key(s) were not unit quaternions and were normalised",
                              (unsigned long long)renormalised);
    }
    r = KILN_OK;
done:
    kiln__free(a, frames);
    kiln__free(a, values);
    kiln__free(a, order);
    return r;
}

static void kiln__keys_free(const kiln_allocator *a, kiln__keys *k)
{
    kiln__free(a, k->frames);
    kiln__free(a, k->values);
    kiln__free(a, k->rest);
    memset(k, 0, sizeof *k);
}

/* ---- resampling ---------------------------------------------------------------------------- */

/* Index of the last key at or before frame f (0 before the first key), advancing from *at. */
static uint32_t kiln__segment(const kiln__keys *k, int64_t f, uint32_t *at)
{
    while (*at + 1 < k->count && k->frames[*at + 1] <= f) (*at)++;
    return *at;
}

/* Whether the keys sit on every frame of the range, first to last: each sample is its key. */
static int kiln__keys_every_frame(const kiln__keys *k, int64_t first, uint32_t frames)
{
    return k->count == frames && frames > 0 && k->frames[0] == first && k->frames[frames - 1] == first + frames - 1;
}

static void kiln__resample_linear(const kiln__keys *k, int64_t first, uint32_t frames, int step, float *dst)
{
    if (kiln__keys_every_frame(k, first, frames)) { /* ascending and distinct: consecutive */
        memcpy(dst, k->values, (size_t)frames * sizeof *dst);
        return;
    }
    uint32_t at = 0;
    for (uint32_t r = 0; r < frames; r++) {
        int64_t f = first + r;
        uint32_t i = kiln__segment(k, f, &at);
        if (f <= k->frames[0] || i + 1 >= k->count || f == k->frames[i] || step) {
            dst[r] = f < k->frames[0] ? k->values[0] : k->values[i];
            continue;
        }
        double t = (double)(f - k->frames[i]) / (double)(k->frames[i + 1] - k->frames[i]);
        double v0 = k->values[i], v1 = k->values[i + 1];
        dst[r] = (float)(v0 + (v1 - v0) * t);
    }
}

/* slerp(a, b, t) in double; a and b are unit and on one hemisphere. */
static void kiln__slerp(const float *a, const float *b, double t, double out[4])
{
    double ad[4] = {a[0], a[1], a[2], a[3]}, bd[4] = {b[0], b[1], b[2], b[3]};
    kiln__qslerp_eps(ad, bd, t, 1e-12, out);
}

/* Rotation samples into dst[c * frames + r] for c = qx, qy, qz, qw. */
static void kiln__resample_rotation(const kiln__keys *k, int64_t first, uint32_t frames, float *dst)
{
    if (kiln__keys_every_frame(k, first, frames)) {
        for (uint32_t r = 0; r < frames; r++)
            for (int c = 0; c < 4; c++) dst[(size_t)c * frames + r] = k->values[(size_t)r * 4 + c];
        return;
    }
    uint32_t at = 0;
    for (uint32_t r = 0; r < frames; r++) {
        int64_t f = first + r;
        uint32_t i = kiln__segment(k, f, &at);
        const float *q = &k->values[(size_t)i * 4];
        if (f <= k->frames[0] || i + 1 >= k->count || f == k->frames[i]) {
            if (f < k->frames[0]) q = k->values;
            for (int c = 0; c < 4; c++) dst[(size_t)c * frames + r] = q[c];
            continue;
        }
        double t = (double)(f - k->frames[i]) / (double)(k->frames[i + 1] - k->frames[i]), s[4];
        kiln__slerp(q, q + 4, t, s);
        for (int c = 0; c < 4; c++) dst[(size_t)c * frames + r] = (float)s[c];
    }
}

/* Sets `bits` in mask[r] for the frames whose sample is a rest key's value: at a rest key, and
 * between two of them (both hold the same rest value), before the first key when it is one and
 * after the last when it is one. */
static void kiln__mark_rest(const kiln__keys *k, int64_t first, uint32_t frames, uint16_t bits, uint16_t *mask)
{
    uint32_t at = 0;
    for (uint32_t r = 0; r < frames; r++) {
        int64_t f = first + r;
        uint32_t i = kiln__segment(k, f, &at);
        int rest = f <= k->frames[0] || i + 1 >= k->count || f == k->frames[i] ? k->rest[f < k->frames[0] ? 0 : i]
                                                                             : k->rest[i] && k->rest[i + 1];
        if (rest) mask[r] |= bits;
        else mask[r] &= (uint16_t)~bits;
    }
}

/* ---- joints and scalars by name -------------------------------------------------------------- */

static uint32_t kiln__name_hash(uint32_t kind, const char *s)
{
    uint32_t h = 2166136261u ^ kind;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Kind 0: joints; KILN_SCALAR_*: scalars. Returns the index, adding an entry when new, or
 * UINT32_MAX when out of memory. */
static uint32_t kiln__lookup(kiln__anim_build *b, uint32_t kind, const char *name)
{
    kiln__anim *an = b->out;
    const kiln_allocator *a = kiln__alloc_of(b);
    for (uint32_t h = kiln__name_hash(kind, name) & b->map_mask;; h = (h + 1) & b->map_mask) {
        uint32_t slot = b->map[h];
        if (slot == 0) {
            uint32_t idx;
            char *copy = kiln__strdup(a, name);
            if (!copy) return UINT32_MAX;
            if (kind == 0) {
                idx = an->joint_count++;
                kiln__anim_joint *j = &an->joints[idx];
                memset(j, 0, sizeof *j);
                j->name = copy;
                j->ab[0] = j->ab[1] = j->ab[2] = 1.0f;
            } else {
                idx = an->scalar_count++;
                memset(&an->scalars[idx], 0, sizeof an->scalars[idx]);
                an->scalars[idx].name = copy;
                an->scalars[idx].kind = kind;
            }
            b->map[h] = (idx + 1) | (kind << 30);
            return idx;
        }
        uint32_t idx = (slot & 0x3FFFFFFFu) - 1, k = slot >> 30;
        const char *have = k == 0 ? an->joints[idx].name : an->scalars[idx].name;
        if (k == kind && strcmp(have, name) == 0) return idx;
    }
}

/* Component range and channel group of a t/r/s curve property. */
static void kiln__components_of(kiln_source_channel p, unsigned *c0, unsigned *n, unsigned *group)
{
    switch (p) {
    case KILN_SOURCE_CHANNEL_ROTATION: *c0 = 3, *n = 4, *group = 1; return;
    case KILN_SOURCE_CHANNEL_TX: case KILN_SOURCE_CHANNEL_TY: case KILN_SOURCE_CHANNEL_TZ:
        *c0 = (unsigned)(p - KILN_SOURCE_CHANNEL_TX), *n = 1, *group = 0; return;
    default: *c0 = 7u + (unsigned)(p - KILN_SOURCE_CHANNEL_SX), *n = 1, *group = 2; return;
    }
}

/* ---- the clip ----------------------------------------------------------------------------- */

static kiln_result kiln__read_curves(kiln__anim_build *b)
{
    for (uint32_t c = 0; c < b->src->curve_count; c++) {
        const kiln_source_curve *cc = &b->src->curves[c];
        kiln__curve_in *in = &b->curves[b->curve_count];
        memset(in, 0, sizeof *in);
        kiln_result r = kiln__read_keys(b, cc, &in->keys);
        if (r != KILN_OK) {
            kiln__keys_free(kiln__alloc_of(b), &in->keys);
            return r;
        }
        if (in->keys.count == 0) {
            kiln__bake_report(&b->ctx->sink, KILN_ERR_CAST_EMPTY, KILN_SEVERITY_WARNING, &cc->loc, NULL, KILN_NO_OFFSET,
                              "curve has no usable keys; it has no effect");
            kiln__keys_free(kiln__alloc_of(b), &in->keys);
            continue;
        }
        in->name = cc->target;
        in->prop = cc->channel;
        in->mode = KILN_MODE_ABSOLUTE + (uint32_t)cc->mode;
        in->ab = cc->additive_weight;
        b->out->key_count += in->keys.count;
        b->curve_count++;
    }
    return KILN_OK;
}

static kiln_result kiln__read_overrides_and_events(kiln__anim_build *b, uint32_t overrides, uint64_t events)
{
    const kiln_allocator *a = kiln__alloc_of(b);
    kiln__anim *an = b->out;
    an->overrides = kiln__alloc_array(a, overrides, sizeof *an->overrides);
    an->events = kiln__alloc_array(a, events, sizeof *an->events);
    if (!an->overrides || !an->events) return KILN_ERR_OUT_OF_MEMORY;
    uint32_t order = 0;
    for (uint32_t c = 0; c < b->src->override_count; c++) {
        const kiln_source_mode_override *o = &b->src->overrides[c];
        uint32_t channels = (o->translation ? 1u : 0u) | (o->rotation ? 2u : 0u) | (o->scale ? 4u : 0u);
        if (!channels) continue; /* no effect (D.6); the importer said so */
        kiln__anim_override *ov = &an->overrides[an->override_count];
        ov->name = kiln__strdup(a, o->target);
        if (!ov->name) return KILN_ERR_OUT_OF_MEMORY;
        ov->mode = KILN_MODE_ABSOLUTE + (uint32_t)o->mode;
        ov->channels = channels;
        ov->order = order++;
        an->override_count++;
    }
    for (uint32_t c = 0; c < b->src->notification_count; c++) {
        const kiln_source_notification *t = &b->src->notifications[c];
        for (uint32_t i = 0; i < t->key_count; i++) {
            kiln__anim_event *e = &an->events[an->event_count];
            e->name = kiln__strdup(a, t->name);
            if (!e->name) return KILN_ERR_OUT_OF_MEMORY;
            e->frame = t->frames[i];
            e->order = an->event_count++;
        }
    }
    return KILN_OK;
}

static int kiln__cmp_event(const void *pa, const void *pb)
{
    const kiln__anim_event *a = pa, *b = pb;
    if (a->frame != b->frame) return a->frame < b->frame ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* Playback range (D.1): [min, max] key frame over curves and notification tracks, [0, 1]
 * without keys. */
static kiln_result kiln__range(kiln__anim_build *b)
{
    kiln__anim *an = b->out;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t i = 0; i < b->curve_count; i++) {
        const kiln__keys *k = &b->curves[i].keys;
        if (k->frames[0] < lo) lo = k->frames[0];
        if (k->frames[k->count - 1] > hi) hi = k->frames[k->count - 1];
    }
    for (uint32_t i = 0; i < an->event_count; i++) {
        if (an->events[i].frame < lo) lo = an->events[i].frame;
        if (an->events[i].frame > hi) hi = an->events[i].frame;
    }
    if (lo > hi) lo = 0, hi = 1;
    uint64_t frames = (uint64_t)(hi - lo) + 1u;
    uint64_t tracks = (uint64_t)b->curve_count * KILN_ANIM_COMPONENTS + 1u;
    if (frames > KILN__ANIM_MAX_FRAMES || frames * tracks > KILN__ANIM_MAX_SAMPLES) {
        kiln__bake_report(&b->ctx->sink, KILN_ERR_LIMIT, KILN_SEVERITY_ERROR, &b->src->loc, NULL,
                          KILN_NO_OFFSET,
                          "keys span frames %lld to %lld (%llu frames for %u curves): more than the %u frames "
                          "and %llu samples a clip may hold; the animation is dropped",
                          (long long)lo, (long long)hi, (unsigned long long)frames, b->curve_count,
                          KILN__ANIM_MAX_FRAMES, (unsigned long long)KILN__ANIM_MAX_SAMPLES);
        return KILN_ERR_LIMIT;
    }
    an->first_frame = lo;
    an->last_frame = hi;
    an->frame_count = (uint32_t)frames;
    return KILN_OK;
}

/* Resamples every curve into its joint or scalar, in file order: a later curve on the same
 * channel replaces an earlier one (D.4). */
static kiln_result kiln__resample_all(kiln__anim_build *b)
{
    kiln__anim *an = b->out;
    const kiln_allocator *a = kiln__alloc_of(b);
    uint32_t n = an->frame_count;
    uint32_t cap = 16;
    while (cap < 2u * b->curve_count + 2u) cap *= 2;
    b->map = kiln__alloc_array(a, cap, sizeof *b->map);
    an->joints = kiln__alloc_array(a, b->curve_count, sizeof *an->joints);
    an->scalars = kiln__alloc_array(a, b->curve_count, sizeof *an->scalars);
    if (!b->map || !an->joints || !an->scalars) return KILN_ERR_OUT_OF_MEMORY;
    memset(b->map, 0, (size_t)cap * sizeof *b->map);
    b->map_mask = cap - 1;

    for (uint32_t i = 0; i < b->curve_count; i++) {
        const kiln__curve_in *in = &b->curves[i];
        if (in->prop == KILN_SOURCE_CHANNEL_BLEND_SHAPE || in->prop == KILN_SOURCE_CHANNEL_VISIBILITY) {
            int vis = in->prop == KILN_SOURCE_CHANNEL_VISIBILITY;
            uint32_t s = kiln__lookup(b, vis ? KILN_SCALAR_VISIBILITY : KILN_SCALAR_BLEND_SHAPE, in->name);
            if (s == UINT32_MAX) return KILN_ERR_OUT_OF_MEMORY;
            kiln__anim_scalar *sc = &an->scalars[s];
            if (!sc->values && !(sc->values = kiln__alloc_array(a, n, sizeof(float)))) return KILN_ERR_OUT_OF_MEMORY;
            /* Modes do not apply to scalars (D.7, D.8). Visibility steps: 0 hides. */
            kiln__resample_linear(&in->keys, an->first_frame, n, vis, sc->values);
            continue;
        }
        uint32_t j = kiln__lookup(b, 0, in->name);
        if (j == UINT32_MAX) return KILN_ERR_OUT_OF_MEMORY;
        kiln__anim_joint *jt = &an->joints[j];
        if (!jt->values) {
            jt->values = kiln__alloc_array(a, (uint64_t)n * KILN_ANIM_COMPONENTS, sizeof(float));
            if (!jt->values) return KILN_ERR_OUT_OF_MEMORY;
            for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++)
                for (uint32_t r = 0; r < n; r++) jt->values[(size_t)c * n + r] = kiln__identity10[c];
        }
        unsigned c0, count, group;
        kiln__components_of(in->prop, &c0, &count, &group);
        if (count == 4) kiln__resample_rotation(&in->keys, an->first_frame, n, jt->values + (size_t)c0 * n);
        else kiln__resample_linear(&in->keys, an->first_frame, n, 0, jt->values + (size_t)c0 * n);
        uint16_t bits = (uint16_t)(((1u << count) - 1u) << c0);
        if (in->keys.rest) {
            if (!jt->rest_mask) {
                if (!(jt->rest_mask = kiln__alloc_array(a, n, sizeof *jt->rest_mask))) return KILN_ERR_OUT_OF_MEMORY;
                memset(jt->rest_mask, 0, (size_t)n * sizeof *jt->rest_mask);
            }
            kiln__mark_rest(&in->keys, an->first_frame, n, bits, jt->rest_mask);
        } else if (jt->rest_mask) {
            for (uint32_t r = 0; r < n; r++) jt->rest_mask[r] &= (uint16_t)~bits;
        }
        for (unsigned c = c0; c < c0 + count; c++) {
            jt->modes &= ~(3u << (2 * c));
            jt->modes |= in->mode << (2 * c);
        }
        /* One additive weight per channel group is stored; curves of a group normally agree. */
        if (in->mode == KILN_MODE_ADDITIVE) {
            if (jt->ab[group] != 1.0f && jt->ab[group] != in->ab)
                kiln__bake_report(&b->ctx->sink, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING, &b->src->loc,
                                  NULL, KILN_NO_OFFSET,
                                  "bone '%s': additive curves of one channel have different weights (ab %g and %g); "
                                  "%g is used for all of them",
                                  in->name, (double)jt->ab[group], (double)in->ab, (double)in->ab);
            jt->ab[group] = in->ab;
        }
    }
    return KILN_OK;
}

/* The rest transform each joint's clip was authored against (the first authored bone of its
 * name), and the rule for a mismatch, for kiln__anim_bind_rest. */
static void kiln__authored_rest(kiln__anim_build *b)
{
    const kiln_source_animation *src = b->src;
    kiln__anim *an = b->out;
    if (src->bind_rule) snprintf(an->bind_rule, sizeof an->bind_rule, "%s", src->bind_rule);
    for (uint32_t j = 0; j < an->joint_count; j++) {
        kiln__anim_joint *jt = &an->joints[j];
        for (uint32_t i = 0; i < src->authored_rest_count; i++) {
            const kiln_source_rest_bone *rb = &src->authored_rest[i];
            if (strcmp(rb->name, jt->name) != 0) continue;
            memcpy(jt->authored, rb->position, sizeof rb->position);
            memcpy(jt->authored + 3, rb->rotation, sizeof rb->rotation);
            memcpy(jt->authored + 7, rb->scale, sizeof rb->scale);
            jt->has_authored = 1;
            jt->authored_offset = rb->loc.offset;
            break;
        }
    }
}

static char *kiln__anim_name(const kiln__bake_ctx *ctx, const char *name, uint32_t ordinal)
{
    if (name) return kiln__strdup(ctx->allocator, name);
    /* Like the importers, an unnamed action is named after its file. */
    const char *path = ctx->input && ctx->input->path && ctx->input->path[0] ? ctx->input->path : "animation";
    char *stem = kiln__path_stem(ctx->allocator, path);
    if (!stem || ordinal == 0) return stem;
    char *numbered = kiln__strfmt(ctx->allocator, "%s_%u", stem, ordinal);
    kiln__free(ctx->allocator, stem);
    return numbered;
}

static kiln_result kiln__build(kiln__anim_build *b, uint32_t index)
{
    const kiln_source_animation *src = b->src;
    kiln__anim *an = b->out;
    an->input_bytes = src->loc.size;
    an->name = kiln__anim_name(b->ctx, src->name, index);
    if (!an->name) return KILN_ERR_OUT_OF_MEMORY;
    an->framerate = src->framerate;
    an->looping = src->looping;

    uint64_t events = 0;
    for (uint32_t c = 0; c < src->notification_count; c++) events += src->notifications[c].key_count;
    b->curves = kiln__alloc_array(kiln__alloc_of(b), src->curve_count, sizeof *b->curves);
    if (!b->curves) return KILN_ERR_OUT_OF_MEMORY;
    kiln_result r = kiln__read_curves(b);
    if (r == KILN_OK) r = kiln__read_overrides_and_events(b, src->override_count, events);
    if (r != KILN_OK) return r;
    /* Sorted by frame; duplicates are kept, in file order (D.9). */
    if (an->event_count > 1) qsort(an->events, an->event_count, sizeof *an->events, kiln__cmp_event);
    if (b->curve_count == 0 && an->event_count == 0)
        kiln__bake_report(&b->ctx->sink, KILN_ERR_CAST_EMPTY, KILN_SEVERITY_WARNING, &src->loc, NULL, KILN_NO_OFFSET,
                          "animation has no usable curves or notification keys; baked as an empty clip");
    r = kiln__range(b);
    if (r == KILN_OK) r = kiln__resample_all(b);
    if (r == KILN_OK) kiln__authored_rest(b);
    return r;
}

kiln_result kiln__bake_anim(const kiln__bake_ctx *ctx, const kiln_source_animation *anim, uint32_t index,
                            kiln__anim *out)
{
    memset(out, 0, sizeof *out);
    kiln__anim_build b;
    memset(&b, 0, sizeof b);
    b.ctx = ctx;
    b.src = anim;
    b.out = out;
    kiln_result r = kiln__build(&b, index);
    for (uint32_t i = 0; i < b.curve_count; i++) kiln__keys_free(ctx->allocator, &b.curves[i].keys);
    kiln__free(ctx->allocator, b.curves);
    kiln__free(ctx->allocator, b.map);
    if (r != KILN_OK) kiln__anim_free(ctx->allocator, out);
    return r;
}

void kiln__anim_free(const kiln_allocator *a, kiln__anim *anim)
{
    if (!anim) return;
    for (uint32_t i = 0; i < anim->joint_count; i++) {
        kiln__free(a, anim->joints[i].name);
        kiln__free(a, anim->joints[i].values);
        kiln__free(a, anim->joints[i].rest_mask);
    }
    for (uint32_t i = 0; i < anim->scalar_count; i++) {
        kiln__free(a, anim->scalars[i].name);
        kiln__free(a, anim->scalars[i].values);
    }
    for (uint32_t i = 0; i < anim->override_count; i++) kiln__free(a, anim->overrides[i].name);
    for (uint32_t i = 0; i < anim->event_count; i++) kiln__free(a, anim->events[i].name);
    kiln__free(a, anim->joints);
    kiln__free(a, anim->scalars);
    kiln__free(a, anim->overrides);
    kiln__free(a, anim->events);
    kiln__free(a, anim->name);
    kiln__free(a, anim->data);
    memset(anim, 0, sizeof *anim);
}
