/* *.Shape event keys (spec 7.4) as clip notifications: sorted by frame stably (equal frames keep
 * file order, track by track), rounded to the nearest integer frame (W14 when that moves them),
 * one notification per event name in the order of its first event. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shape_anim.h"

typedef struct kiln__event {
    const char *name;
    uint64_t    offset;    /* its track */
    uint32_t    track;
    double      frame;
    uint32_t    order;
    uint32_t    seq;
} kiln__event;

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

kiln_result kiln__shape_notifications(kiln__shape *ctx, kiln__layer *ly, kiln__track *tracks, uint32_t track_count,
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
                kiln__shape_w14(ctx, ly, 2u, tracks[t].offset, "EventKeys", "event key before 0 ms");
            if (tracks[t].event_times[k] / ly->kft > ly->duration / ly->kft + 1e-6)
                kiln__shape_w14(ctx, ly, 4u, tracks[t].offset, "EventKeys", "event key after Duration; the clip grows");
            if (fabs(ev[n].frame - nearbyint(ev[n].frame)) > 1e-3)
                kiln__shape_w14(ctx, ly, 16u, tracks[t].offset, "EventKeys",
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
    /* the groups in the order of their first event */
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

