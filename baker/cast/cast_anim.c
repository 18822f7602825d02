/* Typed views of Animation, Curve, CurveModeOverride and NotificationTrack nodes (Cast
 * reference B, D). */
#include "cast_scene_util.h"

static const char *const kiln__curve_prop_names[KILN_CAST_CURVE_PROP_COUNT_] = {
    "rq", "tx", "ty", "tz", "sx", "sy", "sz", "bs", "vb"};
static const char *const kiln__mode_names[] = {"absolute", "relative", "additive"};

const char *kiln_cast_curve_prop_name(kiln_cast_curve_prop p)
{
    return (unsigned)p < KILN_CAST_CURVE_PROP_COUNT_ ? kiln__curve_prop_names[p] : "?";
}

const char *kiln_cast_mode_name(kiln_cast_mode m)
{
    return (unsigned)m < 3 ? kiln__mode_names[m] : "?";
}

static kiln_result kiln__read_animation(const kiln__rd *rd, kiln_cast_animation *a)
{
    static const uint32_t kinds[] = {KILN_CAST_ID_CURVE, KILN_CAST_ID_CURVE_MODE_OVERRIDE,
                                     KILN_CAST_ID_NOTIFICATION_TRACK};
    uint32_t counts[3];
    kiln__str(rd, "n", KILN__OPTIONAL, &a->name);
    /* fr is required by the spec, but both importers play a clip without it: 30 fps. */
    a->framerate = kiln__positive(rd, "fr", 30.0f, 1);
    a->looping = kiln__flag(rd, "lo", 0);
    kiln__count_kinds(rd->doc, rd->node, kinds, counts, 3);
    a->curve_count = counts[0];
    a->override_count = counts[1];
    a->notification_count = counts[2];
    return KILN_OK;
}

kiln_result kiln_cast_get_animation(const kiln_cast_doc *doc, uint32_t node, kiln_cast_animation *out,
                                    const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_ANIMATION, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_animation(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}

/* Key value types per channel: rotations are quaternions, visibility is an integer (a float
 * is tolerated), everything else a number of any width. */
static uint32_t kiln__key_types(kiln_cast_curve_prop p)
{
    switch (p) {
    case KILN_CAST_CURVE_RQ: return KILN__TV4;
    case KILN_CAST_CURVE_VB: return KILN__T_INT | KILN__T_FLOAT;
    default: return KILN__T_FLOAT | KILN__T_INT;
    }
}

static kiln_result kiln__read_curve(const kiln__rd *rd, kiln_cast_curve *c)
{
    int prop = 0, mode = KILN_CAST_ABSOLUTE;
    kiln_result r = kiln__str(rd, "nn", KILN__REQUIRED, &c->node_name);
    r = kiln__first(r, kiln__enum(rd, "kp", kiln__curve_prop_names, KILN_CAST_CURVE_PROP_COUNT_, KILN__REQUIRED, -1,
                                  &prop));
    r = kiln__first(r, kiln__array(rd, "kb", KILN__T_INT, KILN__REQUIRED, &c->key_frames));
    /* Both importers read a missing mode as absolute; an unknown one is skipped by Blender and
     * an error in Maya, so the curve is dropped. */
    r = kiln__first(r, kiln__enum(rd, "m", kiln__mode_names, 3, KILN__OPTIONAL, -1, &mode));
    if (r != KILN_OK) return r;
    c->property = (kiln_cast_curve_prop)prop;
    c->mode = (kiln_cast_mode)mode;
    r = kiln__array(rd, "kv", kiln__key_types(c->property), KILN__REQUIRED, &c->key_values);
    if (r != KILN_OK) return r;
    c->key_count = c->key_frames.count < c->key_values.count ? c->key_frames.count : c->key_values.count;
    if (c->key_frames.count != c->key_values.count) {
        kiln__report(rd, "kv", kiln_cast_find_prop(rd->doc, rd->node, "kv", NULL), KILN_ERR_CAST_LENGTH_MISMATCH,
                     KILN_SEVERITY_ERROR, "%u key frames but %u key values; the first %u keys are used",
                     c->key_frames.count, c->key_values.count, c->key_count);
    }
    c->additive_weight = kiln__float(rd, "ab", 1.0f);
    return KILN_OK;
}

kiln_result kiln_cast_get_curve(const kiln_cast_doc *doc, uint32_t node, kiln_cast_curve *out,
                                const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_CURVE, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_curve(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}

static kiln_result kiln__read_mode_override(const kiln__rd *rd, kiln_cast_mode_override *o)
{
    int mode = 0;
    kiln_result r = kiln__str(rd, "nn", KILN__REQUIRED, &o->node_name);
    r = kiln__first(r, kiln__enum(rd, "m", kiln__mode_names, 3, KILN__REQUIRED, -1, &mode));
    if (r != KILN_OK) return r;
    o->mode = (kiln_cast_mode)mode;
    o->translation = kiln__flag(rd, "ot", 0);
    o->rotation = kiln__flag(rd, "or", 0);
    o->scale = kiln__flag(rd, "os", 0);
    if (!o->translation && !o->rotation && !o->scale) {
        kiln__report(rd, NULL, NULL, KILN_ERR_CAST_MISSING_PROPERTY, KILN_SEVERITY_WARNING,
                     "none of ot/or/os is set: the override has no effect");
    }
    return KILN_OK;
}

kiln_result kiln_cast_get_mode_override(const kiln_cast_doc *doc, uint32_t node, kiln_cast_mode_override *out,
                                        const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_CURVE_MODE_OVERRIDE, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_mode_override(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}

static kiln_result kiln__read_notification(const kiln__rd *rd, kiln_cast_notification *t)
{
    kiln_result r = kiln__str(rd, "n", KILN__REQUIRED, &t->name);
    return kiln__first(r, kiln__array(rd, "kb", KILN__T_INT, KILN__REQUIRED, &t->key_frames));
}

kiln_result kiln_cast_get_notification(const kiln_cast_doc *doc, uint32_t node, kiln_cast_notification *out,
                                       const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_NOTIFICATION_TRACK, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_notification(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}
