/* The Cast importer, animations: Animation nodes with their Curves, CurveModeOverrides and
 * NotificationTracks, keys copied as stored (the bake conditions them). */
#include <string.h>

#include "cast_import.h"

static kiln_source_mode kiln__mode(kiln_cast_mode m)
{
    return m == KILN_CAST_RELATIVE ? KILN_SOURCE_RELATIVE : m == KILN_CAST_ADDITIVE ? KILN_SOURCE_ADDITIVE
                                                                                    : KILN_SOURCE_ABSOLUTE;
}

static kiln_result kiln__curve(kiln__cast_import *im, uint32_t node, const kiln_cast_curve *cc, kiln_source_curve *c)
{
    kiln_source_scene *s = im->scene;
    kiln_result r = kiln__cast_loc(im, node, &c->loc);
    if (r != KILN_OK) return r;
    /* The curve enums share their order with the source channels (rq, tx..sz, bs, vb). */
    c->channel = (kiln_source_channel)cc->property;
    c->mode = kiln__mode(cc->mode);
    c->additive_weight = cc->additive_weight;
    c->target = kiln_source_strdup(s, cc->node_name);
    uint32_t n = cc->key_count, comps = cc->property == KILN_CAST_CURVE_RQ ? 4 : 1;
    uint32_t *frames = kiln_source_alloc(s, n, sizeof *frames);
    float *values = kiln_source_alloc(s, (uint64_t)n * comps, sizeof *values);
    if (!c->target || !frames || !values) return KILN_ERR_OUT_OF_MEMORY;
    if (n) {
        kiln_cast_array_read_u32(&cc->key_frames, 0, n, frames);
        kiln_cast_array_read_f32(&cc->key_values, 0, n, values);
    }
    c->key_count = n;
    c->frames = frames;
    c->values = values;
    return KILN_OK;
}

kiln_result kiln__cast_import_animation(kiln__cast_import *im, uint32_t node, kiln_source_animation *out)
{
    const kiln_cast_doc *doc = im->doc;
    kiln_source_scene *s = im->scene;
    kiln_cast_animation ca;
    kiln_result r = kiln_cast_get_animation(doc, node, &ca, im->sink);
    if (r != KILN_OK) return r;
    r = kiln__cast_loc(im, node, &out->loc);
    if (r != KILN_OK) return r;
    out->name = kiln_source_strdup(s, ca.name);
    if (ca.name && !out->name) return KILN_ERR_OUT_OF_MEMORY;
    out->framerate = ca.framerate;
    out->looping = ca.looping;
    out->curves = kiln_source_alloc(s, ca.curve_count, sizeof *out->curves);
    out->overrides = kiln_source_alloc(s, ca.override_count, sizeof *out->overrides);
    out->notifications = kiln_source_alloc(s, ca.notification_count, sizeof *out->notifications);
    if (!out->curves || !out->overrides || !out->notifications) return KILN_ERR_OUT_OF_MEMORY;
    for (uint32_t c = kiln_cast_node_at(doc, node)->first_child; c != KILN_CAST_NONE;
         c = kiln_cast_node_at(doc, c)->next_sibling) {
        uint32_t id = kiln_cast_node_at(doc, c)->id;
        if (id == KILN_CAST_ID_CURVE && out->curve_count < ca.curve_count) {
            kiln_cast_curve cc;
            if (kiln_cast_get_curve(doc, c, &cc, im->sink) != KILN_OK) continue; /* reported: dropped */
            r = kiln__curve(im, c, &cc, &out->curves[out->curve_count]);
            if (r != KILN_OK) return r;
            out->curve_count++;
        } else if (id == KILN_CAST_ID_CURVE_MODE_OVERRIDE && out->override_count < ca.override_count) {
            kiln_cast_mode_override co;
            if (kiln_cast_get_mode_override(doc, c, &co, im->sink) != KILN_OK) continue;
            kiln_source_mode_override *o = &out->overrides[out->override_count];
            r = kiln__cast_loc(im, c, &o->loc);
            if (r != KILN_OK) return r;
            o->target = kiln_source_strdup(s, co.node_name);
            if (!o->target) return KILN_ERR_OUT_OF_MEMORY;
            o->mode = kiln__mode(co.mode);
            o->translation = co.translation;
            o->rotation = co.rotation;
            o->scale = co.scale;
            out->override_count++;
        } else if (id == KILN_CAST_ID_NOTIFICATION_TRACK && out->notification_count < ca.notification_count) {
            kiln_cast_notification cn;
            if (kiln_cast_get_notification(doc, c, &cn, im->sink) != KILN_OK) continue;
            kiln_source_notification *t = &out->notifications[out->notification_count];
            r = kiln__cast_loc(im, c, &t->loc);
            if (r != KILN_OK) return r;
            uint32_t n = cn.key_frames.count;
            uint32_t *frames = kiln_source_alloc(s, n, sizeof *frames);
            t->name = kiln_source_strdup(s, cn.name);
            if (!frames || !t->name) return KILN_ERR_OUT_OF_MEMORY;
            if (n) kiln_cast_array_read_u32(&cn.key_frames, 0, n, frames);
            t->key_count = n;
            t->frames = frames;
            out->notification_count++;
        }
    }
    return KILN_OK;
}
