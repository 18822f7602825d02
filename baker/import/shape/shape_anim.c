/* *.Shape animation layers (spec 4.14, section 7): each layer becomes a clip at 1000 /
 * KeyFrameTime fps. The source curves (keys in milliseconds, linear / shortest-arc slerp,
 * constant outside the keys) are evaluated at the integer frames Kiln stores: frame 0, the last
 * frame F and the integer frames at or next to every key, which reproduces the source curve
 * exactly when the keys lie on integer frames. Event keys become notifications. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape_internal.h"

#define TRY(x) do { kiln_result r_ = (x); if (r_ != KILN_OK) return r_; } while (0)

enum { KILN__CH_T, KILN__CH_S, KILN__CH_R, KILN__CH_COUNT };

typedef struct kiln__track {
    const char    *node_name;
    uint64_t       offset;
    int32_t        node;
    uint16_t       counts[4];  /* position, scale, rotation, event keys */
    const uint8_t *keys[3];    /* position, scale, rotation key records */
    uint64_t       keys_at[3];
    double        *event_times;
    const char   **event_names;
} kiln__track;

typedef struct kiln__key {
    double   t;
    uint32_t order;
    float    v[4];
} kiln__key;

typedef struct kiln__event {
    const char *name;
    uint64_t    offset;    /* its track */
    uint32_t    track;
    double      frame;
    uint32_t    order;
    uint32_t    seq;
} kiln__event;

static double kiln__rd_f64(const uint8_t *p)
{
    uint64_t u = (uint64_t)kiln__shape_rd_u32(p) | ((uint64_t)kiln__shape_rd_u32(p + 4) << 32);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static int kiln__key_cmp(const void *a, const void *b)
{
    const kiln__key *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static int kiln__event_frame_cmp(const void *a, const void *b)
{
    const kiln__event *x = a, *y = b;
    if (x->frame != y->frame) return x->frame < y->frame ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static int kiln__event_name_cmp(const void *a, const void *b)
{
    const kiln__event *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static int kiln__u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static kiln_result kiln__read_track(kiln__shape *ctx, uint32_t layer, uint32_t t, kiln__track *tr)
{
    kiln__shape_where(ctx, "Animation[%u].Track[%u]", layer, t);
    tr->offset = ctx->pos;
    TRY(kiln__shape_string(ctx, "NodeName", &tr->node_name));
    static const char *const count_names[4] = {"NumPositionKeys", "NumScaleKeys", "NumRotationKeys", "NumEventKeys"};
    for (int k = 0; k < 4; k++) TRY(kiln__shape_u16(ctx, count_names[k], &tr->counts[k]));
    uint64_t need = (uint64_t)tr->counts[0] * 20u + (uint64_t)tr->counts[1] * 20u + (uint64_t)tr->counts[2] * 24u +
                    (uint64_t)tr->counts[3] * 9u;
    TRY(kiln__shape_check_count(ctx, 1, need, "Keys"));
    static const char *const key_names[3] = {"PositionKeys", "ScaleKeys", "RotationKeys"};
    for (int c = 0; c < 3; c++) {
        uint32_t size = c == 2 ? 24u : 20u, comps = c == 2 ? 4u : 3u;
        tr->keys_at[c] = ctx->pos;
        TRY(kiln__shape_take(ctx, (size_t)tr->counts[c] * size, key_names[c], &tr->keys[c]));
        for (uint32_t k = 0; k < tr->counts[c]; k++) {
            const uint8_t *p = tr->keys[c] + (size_t)k * size;
            double time = kiln__rd_f64(p);
            if (!isfinite(time))
                return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V14", tr->keys_at[c] + (uint64_t)k * size,
                                        key_names[c], "key %u time is not finite (%g)", k, time);
            for (uint32_t j = 0; j < comps; j++)
                if (!isfinite(kiln__shape_rd_f32(p + 8 + 4 * j)))
                    return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V14",
                                            tr->keys_at[c] + (uint64_t)k * size + 8 + 4 * j, key_names[c],
                                            "key %u value component %u is not finite", k, j);
        }
    }
    tr->event_times = kiln_source_alloc(ctx->scene, tr->counts[3], sizeof *tr->event_times);
    tr->event_names = kiln_source_alloc(ctx->scene, tr->counts[3], sizeof *tr->event_names);
    if (!tr->event_times || !tr->event_names)
        return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, ctx->pos, "EventKeys", "events");
    for (uint32_t k = 0; k < tr->counts[3]; k++) {
        uint64_t at = ctx->pos;
        TRY(kiln__shape_f64(ctx, "EventKeys", &tr->event_times[k]));
        if (!isfinite(tr->event_times[k]))
            return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V14", at, "EventKeys",
                                    "event key %u time is not finite (%g)", k, tr->event_times[k]);
        TRY(kiln__shape_string(ctx, "EventKeys", &tr->event_names[k]));
    }
    return KILN_OK;
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

typedef struct kiln__layer {
    uint32_t index;
    double   kft;       /* ms per frame */
    double   duration;
    uint32_t last;      /* F */
    uint32_t warned;    /* W14 reasons already reported (bits) */
} kiln__layer;

static void kiln__w14(kiln__shape *ctx, kiln__layer *ly, unsigned bit, uint64_t at, const char *field, const char *what)
{
    if (ly->warned & bit) return;
    ly->warned |= bit;
    kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W14", at, field, "%s", what);
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
        keys[k].t = kiln__rd_f64(p);
        keys[k].order = k;
        for (uint32_t c = 0; c < (ch == KILN__CH_R ? 4u : 3u); c++) keys[k].v[c] = kiln__shape_rd_f32(p + 8 + 4 * c);
        if (k && keys[k].t <= keys[k - 1].t) unsorted = 1;
        double frame = keys[k].t / ly->kft;
        if (fabs(frame - nearbyint(frame)) > 1e-3)
            kiln__w14(ctx, ly, 1u, at, key_names[ch], "key between integer frames: honoured through the neighbouring frames");
        if (keys[k].t < 0.0) kiln__w14(ctx, ly, 2u, at, key_names[ch], "key before 0 ms");
        if (keys[k].t / ly->kft > ly->duration / ly->kft + 1e-6) kiln__w14(ctx, ly, 4u, at, key_names[ch], "key after Duration; the clip grows");
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
        kiln__w14(ctx, ly, 8u, tr->keys_at[ch], key_names[ch], "keys not in ascending time order (stable sort, last of equal times wins)");
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
static kiln_result kiln__emit_channel(kiln__shape *ctx, kiln__layer *ly, const kiln__track *tr, int ch,
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

static kiln_result kiln__notifications(kiln__shape *ctx, kiln__layer *ly, kiln__track *tracks, uint32_t track_count,
                                       kiln_source_animation *anim)
{
    uint64_t total = 0;
    for (uint32_t t = 0; t < track_count; t++) total += tracks[t].counts[3];
    if (!total) return KILN_OK;
    kiln__event *ev = kiln_source_alloc(ctx->scene, total, sizeof *ev);
    if (!ev) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, KILN_NO_OFFSET, NULL, "events");
    uint32_t n = 0;
    for (uint32_t t = 0; t < track_count; t++)
        for (uint32_t k = 0; k < tracks[t].counts[3]; k++) {
            ev[n].name = tracks[t].event_names[k];
            ev[n].offset = tracks[t].offset;
            ev[n].track = t;
            ev[n].frame = tracks[t].event_times[k] / ly->kft;
            ev[n].order = n;
            if (tracks[t].event_times[k] < 0.0)
                kiln__w14(ctx, ly, 2u, tracks[t].offset, "EventKeys", "event key before 0 ms");
            if (tracks[t].event_times[k] / ly->kft > ly->duration / ly->kft + 1e-6)
                kiln__w14(ctx, ly, 4u, tracks[t].offset, "EventKeys", "event key after Duration; the clip grows");
            if (fabs(ev[n].frame - nearbyint(ev[n].frame)) > 1e-3)
                kiln__w14(ctx, ly, 16u, tracks[t].offset, "EventKeys",
                          "event key between integer frames: rounded to the nearest frame");
            n++;
        }
    qsort(ev, n, sizeof *ev, kiln__event_frame_cmp);
    for (uint32_t k = 0; k < n; k++) ev[k].seq = k;
    qsort(ev, n, sizeof *ev, kiln__event_name_cmp);
    uint32_t groups = 0;
    for (uint32_t k = 0; k < n; k++)
        if (!k || strcmp(ev[k - 1].name, ev[k].name)) groups++;
    anim->notifications = kiln_source_alloc(ctx->scene, groups, sizeof *anim->notifications);
    uint32_t *firsts = kiln_source_alloc(ctx->scene, groups, sizeof *firsts);
    uint32_t *frames = kiln_source_alloc(ctx->scene, n, sizeof *frames);
    if (!anim->notifications || !firsts || !frames)
        return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, KILN_NO_OFFSET, NULL, "notifications");
    kiln__shape_where(ctx, "Animation[%u]", ly->index);
    uint32_t g = 0;
    for (uint32_t k = 0; k < n; k++) {
        double f = floor(ev[k].frame + 0.5); /* nearest, halves up */
        frames[k] = f <= 0.0 ? 0u : (f >= ly->last ? ly->last : (uint32_t)f);
        if (!k || strcmp(ev[k - 1].name, ev[k].name)) {
            kiln_source_notification *no = &anim->notifications[g];
            no->name = ev[k].name;
            no->frames = frames + k;
            kiln__shape_where(ctx, "Animation[%u].Track[%u]", ly->index, ev[k].track);
            no->loc = kiln__shape_loc(ctx, ev[k].offset, 0, "EventKeys");
            firsts[g] = ev[k].seq;
            g++;
        }
        anim->notifications[g - 1].key_count++;
    }
    /* groups in the order of their first event (insertion sort on a permutation: groups are few
     * compared with events, but stay safe with a qsort-free bound by sorting pairs). */
    typedef struct { uint32_t first; uint32_t index; } pair;
    pair *order = kiln_source_alloc(ctx->scene, groups, sizeof *order);
    kiln_source_notification *sorted = kiln_source_alloc(ctx->scene, groups, sizeof *sorted);
    if (!order || !sorted) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, KILN_NO_OFFSET, NULL, "notifications");
    for (uint32_t k = 0; k < groups; k++) { order[k].first = firsts[k]; order[k].index = k; }
    qsort(order, groups, sizeof *order, kiln__u32_cmp); /* `first` leads the pair and is unique */
    for (uint32_t k = 0; k < groups; k++) sorted[k] = anim->notifications[order[k].index];
    anim->notifications = sorted;
    anim->notification_count = groups;
    return KILN_OK;
}

static kiln_result kiln__read_layer(kiln__shape *ctx, uint32_t index, kiln_source_animation *anim, int32_t *winner)
{
    kiln__shape_where(ctx, "Animation[%u]", index);
    uint64_t at = ctx->pos;
    const char *name;
    uint8_t processing;
    uint16_t track_count;
    kiln__layer ly = {index, 0, 0, 0, 0};
    TRY(kiln__shape_string(ctx, "LayerName", &name));
    uint64_t fixed_at = ctx->pos;
    TRY(kiln__shape_u8(ctx, "Processing", &processing));
    TRY(kiln__shape_f64(ctx, "Duration", &ly.duration));
    TRY(kiln__shape_f64(ctx, "KeyFrameTime", &ly.kft));
    TRY(kiln__shape_u16(ctx, "NumTracks", &track_count));
    TRY(kiln__shape_check_count(ctx, track_count, 9, "Tracks"));
    kiln__track *tracks = kiln_source_alloc(ctx->scene, track_count, sizeof *tracks);
    if (!tracks) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, ctx->pos, "Tracks", "tracks");
    for (uint32_t t = 0; t < track_count; t++) TRY(kiln__read_track(ctx, index, t, &tracks[t]));
    kiln__shape_where(ctx, "Animation[%u]", index);

    if (!(ly.kft > 0.0) || !isfinite(ly.kft)) {
        kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W16", fixed_at + 9, "KeyFrameTime",
                         "KeyFrameTime %g ms is not positive and finite; 1000/30 ms used", ly.kft);
        ly.kft = 1000.0 / 30.0;
    }
    if (!(ly.duration >= 0.0) || !isfinite(ly.duration)) {
        kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W16", fixed_at + 1, "Duration",
                         "Duration %g ms is negative or not finite; 0 used", ly.duration);
        ly.duration = 0.0;
    }
    if (processing > 3) {
        kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W17", fixed_at, "Processing",
                         "Processing %u is not 0-3; treated as NONE", processing);
        processing = 0;
    }
    double end = ly.duration;
    for (uint32_t t = 0; t < track_count; t++) {
        for (int c = 0; c < 3; c++) {
            uint32_t size = c == 2 ? 24u : 20u;
            for (uint32_t k = 0; k < tracks[t].counts[c]; k++) end = fmax(end, kiln__rd_f64(tracks[t].keys[c] + (size_t)k * size));
        }
        for (uint32_t k = 0; k < tracks[t].counts[3]; k++) end = fmax(end, tracks[t].event_times[k]);
    }
    double last = ceil(end / ly.kft - 1e-6);
    if (!(last <= (double)KILN__SHAPE_MAX_FRAME))
        return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V16", at, NULL,
                                "last frame %g (%g ms at %g ms per frame) exceeds %u", last, end, ly.kft,
                                KILN__SHAPE_MAX_FRAME);
    ly.last = last < 0.0 ? 0u : (uint32_t)last;

    anim->loc = kiln__shape_loc(ctx, at, ctx->pos - at, NULL);
    anim->name = name[0] ? name : kiln_source_strfmt(ctx->scene, "layer%u", index);
    anim->framerate = (float)(1000.0 / ly.kft);
    anim->looping = processing == 2;
    anim->curves = kiln_source_alloc(ctx->scene, (uint64_t)track_count * 7u + 1u, sizeof *anim->curves);
    if (!anim->curves) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, at, NULL, "curves");

    /* Bind tracks; per node and channel the last track with keys wins (W12). */
    for (uint32_t t = 0; t < track_count; t++) {
        kiln__track *tr = &tracks[t];
        tr->node = kiln__shape_find_node(ctx, tr->node_name);
        int has_keys = tr->counts[0] || tr->counts[1] || tr->counts[2];
        if (tr->node < 0) {
            if (has_keys) {
                kiln__shape_where(ctx, "Animation[%u].Track[%u]", index, t);
                kiln__shape_warn(ctx, KILN_SEVERITY_ERROR, "W13", tr->offset, "NodeName",
                                 "no node is named \"%.100s\"; its position, scale and rotation keys are ignored",
                                 tr->node_name);
            }
            continue;
        }
        for (int c = 0; c < 3; c++) {
            if (!tr->counts[c]) continue;
            int32_t *w = &winner[(size_t)tr->node * 3u + (size_t)c];
            if (*w >= 0) {
                kiln__shape_where(ctx, "Animation[%u].Track[%u]", index, t);
                kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W12", tr->offset, "NodeName",
                                 "node \"%.100s\" already animated by track %d; the last track wins", tr->node_name, *w);
            }
            *w = (int32_t)t;
        }
    }
    for (uint32_t t = 0; t < track_count; t++) {
        kiln__track *tr = &tracks[t];
        if (tr->node < 0) continue;
        for (int c = 0; c < 3; c++) {
            int32_t *w = &winner[(size_t)tr->node * 3u + (size_t)c];
            if (*w == (int32_t)t) {
                TRY(kiln__emit_channel(ctx, &ly, tr, c, anim, t));
                *w = -1; /* reset for the next layer */
            }
        }
    }
    /* A layer without curves keeps its length (Duration) through a curve holding the root's
     * rest rotation at frames 0 and F: Kiln clips span their keys. */
    if (!anim->curve_count && ly.last > 0) {
        uint32_t *frames = kiln_source_alloc(ctx->scene, 2, sizeof *frames);
        float *values = kiln_source_alloc(ctx->scene, 8, sizeof *values);
        if (!frames || !values) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, at, NULL, "curves");
        const kiln_source_bone *root = &ctx->model->skeleton->bones[0];
        frames[1] = ly.last;
        memcpy(values, root->local_rotation, 4 * sizeof *values);
        memcpy(values + 4, root->local_rotation, 4 * sizeof *values);
        kiln_source_curve *cv = &anim->curves[0];
        kiln__shape_where(ctx, "Animation[%u]", index);
        cv->loc = kiln__shape_loc(ctx, at, 0, "Duration");
        cv->target = root->name;
        cv->channel = KILN_SOURCE_CHANNEL_ROTATION;
        cv->mode = KILN_SOURCE_ABSOLUTE;
        cv->additive_weight = 1.0f;
        cv->key_count = 2;
        cv->frames = frames;
        cv->values = values;
        anim->curve_count = 1;
    }
    return kiln__notifications(ctx, &ly, tracks, track_count, anim);
}

kiln_result kiln__shape_read_animations(kiln__shape *ctx)
{
    uint16_t count;
    kiln__shape_where(ctx, "%s", "");
    TRY(kiln__shape_u16(ctx, "NumAnimations", &count));
    TRY(kiln__shape_check_count(ctx, count, 20, "Animations"));
    kiln_source_scene *sc = ctx->scene;
    sc->animations = kiln_source_alloc(sc, count, sizeof *sc->animations);
    int32_t *winner = kiln_source_alloc(sc, (uint64_t)ctx->node_count * 3u, sizeof *winner);
    if (!sc->animations || !winner) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, ctx->pos, "Animations", "clips");
    for (uint64_t k = 0; k < (uint64_t)ctx->node_count * 3u; k++) winner[k] = -1;
    for (uint32_t i = 0; i < count; i++) {
        TRY(kiln__read_layer(ctx, i, &sc->animations[i], winner));
        sc->animation_count = i + 1;
    }
    return KILN_OK;
}
