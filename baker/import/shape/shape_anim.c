/* *.Shape animation layers (spec 4.14, section 7): each layer becomes a clip at 1000 /
 * KeyFrameTime fps. Tracks bind to nodes by name; per node and channel the last track with
 * keys wins. Curves: shape_curve.c; events: shape_events.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape_anim.h"

#define TRY(x) do { kiln_result r_ = (x); if (r_ != KILN_OK) return r_; } while (0)

double kiln__shape_rd_f64(const uint8_t *p)
{
    uint64_t u = (uint64_t)kiln__shape_rd_u32(p) | ((uint64_t)kiln__shape_rd_u32(p + 4) << 32);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
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
            double time = kiln__shape_rd_f64(p);
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

void kiln__shape_w14(kiln__shape *ctx, kiln__layer *ly, unsigned bit, uint64_t at, const char *field, const char *what)
{
    if (ly->warned & bit) return;
    ly->warned |= bit;
    kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W14", at, field, "%s", what);
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

    /* A rate that a float cannot hold (KeyFrameTime near 0 or huge) is repaired like a
     * non-positive one: the source layer needs a finite rate > 0. */
    float fps = (float)(1000.0 / ly.kft);
    if (!(ly.kft > 0.0) || !isfinite(ly.kft) || !(fps > 0.0f) || !isfinite(fps)) {
        kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W16", fixed_at + 9, "KeyFrameTime",
                         "KeyFrameTime %g ms is not positive and finite, or gives no usable frame rate; "
                         "1000/30 ms used", ly.kft);
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
            for (uint32_t k = 0; k < tracks[t].counts[c]; k++) end = fmax(end, kiln__shape_rd_f64(tracks[t].keys[c] + (size_t)k * size));
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
                TRY(kiln__shape_emit_channel(ctx, &ly, tr, c, anim, t));
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
    return kiln__shape_notifications(ctx, &ly, tracks, track_count, anim);
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
