/* Notification events in a time interval, with loop wrapping.
 *
 * Without wrapping the test is done in seconds (frame / framerate, the same double the
 * caller gets back), so an interval that starts exactly at an event's reported time includes
 * it. With wrapping everything is a phase in frames relative to first_frame, in [0, period):
 * event frames are integers there, exact, and an event on last_frame has phase 0: it is the
 * same instant as first_frame, reported once per loop.
 */
#include <math.h>

#include "anim_internal.h"

typedef struct kiln__event_out {
    kiln_anim_event *out;
    uint32_t cap, n;
} kiln__event_out;

static void kiln__emit(kiln__event_out *o, const kiln_blob_anim_event *e, uint32_t index, double framerate)
{
    if (o->n < o->cap) {
        o->out[o->n].name = e->name;
        o->out[o->n].index = index;
        o->out[o->n].time_s = (double)e->frame / framerate;
    }
    o->n++;
}

/* Events whose phase is in [p0, p1), in order of phase. */
static void kiln__emit_phase(kiln__event_out *o, const kiln_blob_anim_event *ev, uint32_t count, int64_t first,
                             double period, double p0, double p1, double framerate)
{
    /* phase 0 first (last_frame events included), then ascending: events are sorted by frame */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < count; i++) {
            double ph = (double)ev[i].frame - (double)first; /* (no int64 overflow on bad data) */
            if (ph >= period) ph = 0.0;
            if ((pass == 0) != (ph == 0.0)) continue;
            if (ph >= p0 && ph < p1) kiln__emit(o, &ev[i], i, framerate);
        }
}

uint32_t kiln_anim_events(const kiln_blob *blob, uint32_t clip, double t0_s, double t1_s, kiln_loop loop,
                          kiln_anim_event *out, uint32_t cap)
{
    uint32_t na, ne;
    const kiln_blob_animation *a = kiln_blob_animations(blob, &na);
    const kiln_blob_anim_event *all = kiln_blob_anim_events(blob, &ne);
    if (!a || clip >= na) return 0;
    a += clip;
    if (!a->event_count || !all || a->first_event > ne || a->event_count > ne - a->first_event) return 0;
    if (!(a->framerate > 0.0f) || a->framerate > 3.0e38f || t0_s != t0_s || t1_s != t1_s) return 0;
    const kiln_blob_anim_event *ev = all + a->first_event;
    kiln__event_out o = {out, out ? cap : 0, 0};
    double fr = (double)a->framerate;
    double period = a->last_frame > a->first_frame ? (double)a->last_frame - (double)a->first_frame : 0.0;
    int wrap = loop == KILN_LOOP_WRAP || (loop == KILN_LOOP_CLIP && (a->flags & KILN_ANIM_LOOPING));

    if (!wrap || period <= 0.0) {
        if (!(t1_s > t0_s)) return 0;
        for (uint32_t i = 0; i < a->event_count; i++) {
            double t = (double)ev[i].frame / fr;
            if (t >= t0_s && t < t1_s) kiln__emit(&o, &ev[i], i, fr);
        }
        return o.n;
    }

    /* phases in frames relative to first_frame */
    double f0 = t0_s * fr - (double)a->first_frame, f1 = t1_s * fr - (double)a->first_frame;
    if (!isfinite(f0) || !isfinite(f1)) {
        /* an infinite interval covers every event once */
        kiln__emit_phase(&o, ev, a->event_count, a->first_frame, period, 0.0, period, fr);
        return o.n;
    }
    double p0 = fmod(f0, period);
    if (p0 < 0.0) p0 += period;
    if (!(p0 < period)) p0 = 0.0;
    double len;
    if (t1_s >= t0_s) {
        len = f1 - f0;
    } else {
        double p1 = fmod(f1, period);
        if (p1 < 0.0) p1 += period;
        len = p1 >= p0 ? period : p1 + period - p0; /* "crossed the loop end" */
    }
    if (len >= period) {
        kiln__emit_phase(&o, ev, a->event_count, a->first_frame, period, p0, period, fr);
        kiln__emit_phase(&o, ev, a->event_count, a->first_frame, period, 0.0, p0, fr);
    } else if (p0 + len <= period) {
        kiln__emit_phase(&o, ev, a->event_count, a->first_frame, period, p0, p0 + len, fr);
        /* an interval ending exactly on the loop end reaches phase 0 of the next loop only by
         * its (excluded) end point: nothing more */
    } else {
        kiln__emit_phase(&o, ev, a->event_count, a->first_frame, period, p0, period, fr);
        kiln__emit_phase(&o, ev, a->event_count, a->first_frame, period, 0.0, p0 + len - period, fr);
    }
    return o.n;
}
