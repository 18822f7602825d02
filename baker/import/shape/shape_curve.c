/* *.Shape animation curves (spec 7.1, 7.3): one channel's keys sorted, de-duplicated and
 * normalised, then evaluated (linear, shortest-arc slerp, constant outside the keys) at frame 0,
 * the last frame F and the integer frames at or next to every key. The runtime interpolates
 * between those samples, which reproduces the source curve exactly when the keys lie on
 * integer frames. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shape_anim.h"

#define TRY(x) do { kiln_result r_ = (x); if (r_ != KILN_OK) return r_; } while (0)

typedef struct kiln__key {
    double   t;
    uint32_t order;
    float    v[4];
} kiln__key;

static int kiln__key_cmp(const void *a, const void *b)
{
    const kiln__key *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static int kiln__u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The channel's value at time t (keys sorted, unique times, n >= 1). */
static void kiln__eval(const kiln__key *keys, uint32_t n, int rotation, double t, uint32_t *cursor, double *out)
{
    uint32_t comps = rotation ? 4u : 3u;
    if (t <= keys[0].t || n == 1) {
        for (uint32_t c = 0; c < comps; c++) out[c] = keys[0].v[c];
        return;
    }
    if (t >= keys[n - 1].t) {
        for (uint32_t c = 0; c < comps; c++) out[c] = keys[n - 1].v[c];
        return;
    }
    uint32_t j = *cursor;
    while (j + 1 < n && keys[j + 1].t <= t) j++;
    *cursor = j;
    const kiln__key *a = &keys[j], *b = &keys[j + 1];
    double u = (t - a->t) / (b->t - a->t);
    if (!rotation) {
        for (uint32_t c = 0; c < 3; c++) out[c] = a->v[c] + (b->v[c] - a->v[c]) * u;
        return;
    }
    double qa[4], qb[4], dot = 0.0;
    for (int c = 0; c < 4; c++) {
        qa[c] = a->v[c];
        qb[c] = b->v[c];
        dot += qa[c] * qb[c];
    }
    if (dot < 0.0) {
        dot = -dot;
        for (int c = 0; c < 4; c++) qb[c] = -qb[c];
    }
    double wa, wb;
    if (dot > 0.9995) {
        wa = 1.0 - u;
        wb = u;
    } else {
        double th = acos(dot), sn = sin(th);
        wa = sin((1.0 - u) * th) / sn;
        wb = sin(u * th) / sn;
    }
    double len = 0.0;
    for (int c = 0; c < 4; c++) {
        out[c] = wa * qa[c] + wb * qb[c];
        len += out[c] * out[c];
    }
    len = sqrt(len);
    for (int c = 0; c < 4; c++) out[c] /= len;
}

/* Sorted, de-duplicated keys of one channel of a track. */
static kiln_result kiln__channel_keys(kiln__shape *ctx, kiln__layer *ly, const kiln__track *tr, int ch,
                                      kiln__key **out, uint32_t *count)
{
    static const char *const key_names[3] = {"PositionKeys", "ScaleKeys", "RotationKeys"};
    uint32_t n = tr->counts[ch], size = ch == KILN__CH_R ? 24u : 20u;
    kiln__key *keys = kiln_source_alloc(ctx->scene, n, sizeof *keys);
    if (!keys) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, tr->keys_at[ch], key_names[ch], "keys");
    int unsorted = 0;
    for (uint32_t k = 0; k < n; k++) {
        const uint8_t *p = tr->keys[ch] + (size_t)k * size;
        uint64_t at = tr->keys_at[ch] + (uint64_t)k * size;
        keys[k].t = kiln__shape_rd_f64(p);
        keys[k].order = k;
        for (uint32_t c = 0; c < (ch == KILN__CH_R ? 4u : 3u); c++) keys[k].v[c] = kiln__shape_rd_f32(p + 8 + 4 * c);
        if (k && keys[k].t <= keys[k - 1].t) unsorted = 1;
        double frame = keys[k].t / ly->kft;
        if (fabs(frame - nearbyint(frame)) > 1e-3)
            kiln__shape_w14(ctx, ly, 1u, at, key_names[ch], "key between integer frames: honoured through the neighbouring frames");
        if (keys[k].t < 0.0) kiln__shape_w14(ctx, ly, 2u, at, key_names[ch], "key before 0 ms");
        if (keys[k].t / ly->kft > ly->duration / ly->kft + 1e-6) kiln__shape_w14(ctx, ly, 4u, at, key_names[ch], "key after Duration; the clip grows");
        if (ch == KILN__CH_R) {
            double len = sqrt((double)keys[k].v[0] * keys[k].v[0] + (double)keys[k].v[1] * keys[k].v[1] +
                              (double)keys[k].v[2] * keys[k].v[2] + (double)keys[k].v[3] * keys[k].v[3]);
            if (len < 1e-8) {
                kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W15", at, key_names[ch],
                                 "rotation key %u has length %g; identity used", k, len);
                keys[k].v[0] = keys[k].v[1] = keys[k].v[2] = 0.0f;
                keys[k].v[3] = 1.0f;
            } else {
                if (fabs(len - 1.0) > 1e-3)
                    kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W15", at, key_names[ch],
                                     "rotation key %u has length %g; normalised", k, len);
                for (int c = 0; c < 4; c++) keys[k].v[c] = (float)(keys[k].v[c] / len);
            }
        }
    }
    if (unsorted) {
        kiln__shape_w14(ctx, ly, 8u, tr->keys_at[ch], key_names[ch], "keys not in ascending time order (stable sort, last of equal times wins)");
        qsort(keys, n, sizeof *keys, kiln__key_cmp);
    }
    uint32_t m = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (m && keys[m - 1].t == keys[k].t)
            keys[m - 1] = keys[k];
        else
            keys[m++] = keys[k];
    }
    *out = keys;
    *count = m;
    return KILN_OK;
}

/* Curves of one channel: TX..TZ, SX..SZ or ROTATION, sampled at integer frames. */
kiln_result kiln__shape_emit_channel(kiln__shape *ctx, kiln__layer *ly, const kiln__track *tr, int ch,
                                     kiln_source_animation *anim, uint32_t track_index)
{
    kiln__key *keys = NULL;
    uint32_t n = 0;
    TRY(kiln__channel_keys(ctx, ly, tr, ch, &keys, &n));
    uint32_t *frames = kiln_source_alloc(ctx->scene, (uint64_t)n * 2u + 2u, sizeof *frames);
    if (!frames) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, tr->offset, NULL, "frames");
    uint32_t fc = 0;
    frames[fc++] = 0;
    frames[fc++] = ly->last;
    for (uint32_t k = 0; k < n; k++) {
        double f = keys[k].t / ly->kft;
        double lo = fabs(f - nearbyint(f)) <= 1e-3 ? nearbyint(f) : floor(f);
        double hi = fabs(f - nearbyint(f)) <= 1e-3 ? nearbyint(f) : ceil(f);
        lo = lo < 0.0 ? 0.0 : (lo > ly->last ? ly->last : lo);
        hi = hi < 0.0 ? 0.0 : (hi > ly->last ? ly->last : hi);
        frames[fc++] = (uint32_t)lo;
        if (hi != lo) frames[fc++] = (uint32_t)hi;
    }
    qsort(frames, fc, sizeof *frames, kiln__u32_cmp);
    uint32_t u = 0;
    for (uint32_t k = 0; k < fc; k++)
        if (!u || frames[u - 1] != frames[k]) frames[u++] = frames[k];
    fc = u;

    int rot = ch == KILN__CH_R;
    uint32_t comps = rot ? 4u : 3u, curves = rot ? 1u : 3u;
    float *values = kiln_source_alloc(ctx->scene, (uint64_t)fc * comps, sizeof *values);
    if (!values) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, tr->offset, NULL, "values");
    uint32_t cursor = 0;
    for (uint32_t k = 0; k < fc; k++) {
        double v[4];
        kiln__eval(keys, n, rot, (double)frames[k] * ly->kft, &cursor, v);
        for (uint32_t c = 0; c < comps; c++) values[(size_t)k * comps + c] = (float)v[c];
    }
    kiln__shape_where(ctx, "Animation[%u].Track[%u]", ly->index, track_index);
    kiln_source_loc loc = kiln__shape_loc(ctx, tr->keys_at[ch], (uint64_t)tr->counts[ch] * (rot ? 24u : 20u),
                                          rot ? "RotationKeys" : (ch == KILN__CH_T ? "PositionKeys" : "ScaleKeys"));
    const char *target = ctx->model->skeleton->bones[tr->node].name;
    for (uint32_t c = 0; c < curves; c++) {
        kiln_source_curve *cv = &anim->curves[anim->curve_count++];
        cv->loc = loc;
        cv->target = target;
        cv->mode = KILN_SOURCE_ABSOLUTE;
        cv->additive_weight = 1.0f;
        cv->key_count = fc;
        cv->frames = frames;
        if (rot) {
            cv->channel = KILN_SOURCE_CHANNEL_ROTATION;
            cv->values = values;
        } else {
            float *comp = kiln_source_alloc(ctx->scene, fc, sizeof *comp);
            if (!comp) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, tr->offset, NULL, "values");
            for (uint32_t k = 0; k < fc; k++) comp[k] = values[(size_t)k * 3u + c];
            cv->channel = (kiln_source_channel)((ch == KILN__CH_T ? KILN_SOURCE_CHANNEL_TX : KILN_SOURCE_CHANNEL_SX) + c);
            cv->values = comp;
        }
    }
    return KILN_OK;
}

