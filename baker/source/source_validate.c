/* kiln_source_validate: the invariants the bake stages rely on, checked once so that a bug in
 * an importer is a clean ERR_SOURCE_INVALID naming the item, never a crash in a stage. Also the
 * channel and mode names. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kiln/bake/source.h"

/* Fills err with ERR_SOURCE_INVALID at `loc` (its path plus ".field" when field is not NULL,
 * its offset) and the broken rule. */
static kiln_result kiln__invalid(kiln_diag *err, const kiln_source_loc *loc, const char *field, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static kiln_result kiln__invalid(kiln_diag *err, const kiln_source_loc *loc, const char *field, const char *fmt, ...)
{
    if (!err) return KILN_ERR_SOURCE_INVALID;
    memset(err, 0, sizeof *err);
    err->code = KILN_ERR_SOURCE_INVALID;
    err->severity = KILN_SEVERITY_ERROR;
    err->offset = loc ? loc->offset : KILN_NO_OFFSET;
    const char *path = loc && loc->path ? loc->path : "";
    if (field)
        snprintf(err->path, sizeof err->path, "%s%s%s", path, path[0] ? "." : "", field);
    else
        snprintf(err->path, sizeof err->path, "%s", path);
    int n = snprintf(err->message, sizeof err->message, "%s: ", kiln_result_str(KILN_ERR_SOURCE_INVALID));
    if (n > 0 && (size_t)n < sizeof err->message) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return KILN_ERR_SOURCE_INVALID;
}

static int kiln__finite(const float *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

/* A count with a NULL array is the one inconsistency every owner can have. */
#define KILN__ARRAY(loc, arr, count, what)                                                                  \
    do {                                                                                                    \
        if ((count) && !(arr))                                                                              \
            return kiln__invalid(err, (loc), NULL, "%s count is %u but the array is missing", (what),      \
                                 (unsigned)(count));                                                        \
    } while (0)

#define KILN__TRY(expr)                             \
    do {                                            \
        kiln_result kiln__r = (expr);               \
        if (kiln__r != KILN_OK) return kiln__r;     \
    } while (0)

static int kiln__bone_ok(int32_t bone, uint32_t count, int optional)
{
    if (bone == -1) return optional;
    return bone >= 0 && (uint32_t)bone < count;
}

static kiln_result kiln__validate_skeleton(const kiln_source_skeleton *sk, const kiln_allocator *a, kiln_diag *err)
{
    KILN__ARRAY(&sk->loc, sk->bones, sk->bone_count, "bone");
    KILN__ARRAY(&sk->loc, sk->ik_handles, sk->ik_handle_count, "IK handle");
    KILN__ARRAY(&sk->loc, sk->constraints, sk->constraint_count, "constraint");
    for (uint32_t i = 0; i < sk->bone_count; i++) {
        const kiln_source_bone *b = &sk->bones[i];
        if (b->parent != -1 && (b->parent < 0 || (uint32_t)b->parent >= sk->bone_count || (uint32_t)b->parent == i))
            return kiln__invalid(err, &b->loc, "parent", "bone %u has parent %d, not -1 or another of the %u bones",
                                 i, (int)b->parent, (unsigned)sk->bone_count);
        if (!kiln__finite(b->local_position, 3) || !kiln__finite(b->local_rotation, 4) ||
            !kiln__finite(b->world_position, 3) || !kiln__finite(b->world_rotation, 4) || !kiln__finite(b->scale, 3))
            return kiln__invalid(err, &b->loc, NULL, "bone %u has a transform that is not finite", i);
    }
    /* Acyclic, in linear time: state 1 marks the bones of the chain being walked, 2 the bones
     * known to reach a root. Meeting a 1 again is a cycle. */
    if (sk->bone_count) {
        unsigned char *state = a->realloc_fn(a->user, NULL, sk->bone_count);
        if (!state) return KILN_ERR_OUT_OF_MEMORY;
        memset(state, 0, sk->bone_count);
        for (uint32_t i = 0; i < sk->bone_count; i++) {
            int32_t p = (int32_t)i;
            while (p != -1 && state[p] == 0) {
                state[p] = 1;
                p = sk->bones[p].parent;
            }
            if (p != -1 && state[p] == 1) {
                a->free_fn(a->user, state);
                return kiln__invalid(err, &sk->bones[p].loc, "parent", "bone %d lies on a parent cycle", (int)p);
            }
            for (p = (int32_t)i; p != -1 && state[p] == 1; p = sk->bones[p].parent) state[p] = 2;
        }
        a->free_fn(a->user, state);
    }
    for (uint32_t i = 0; i < sk->ik_handle_count; i++) {
        const kiln_source_ik_handle *h = &sk->ik_handles[i];
        uint32_t n = sk->bone_count;
        if (!kiln__bone_ok(h->start_bone, n, 0) || !kiln__bone_ok(h->end_bone, n, 0) ||
            !kiln__bone_ok(h->target_bone, n, 1) || !kiln__bone_ok(h->pole_vector_bone, n, 1) ||
            !kiln__bone_ok(h->pole_bone, n, 1))
            return kiln__invalid(err, &h->loc, NULL, "IK handle %u refers to a bone outside the %u bones", i,
                                 (unsigned)n);
        if (!kiln__finite(h->target_offset, 3))
            return kiln__invalid(err, &h->loc, "target_offset", "IK handle %u has a target offset that is not finite",
                                 i);
    }
    for (uint32_t i = 0; i < sk->constraint_count; i++) {
        const kiln_source_constraint *c = &sk->constraints[i];
        if (!kiln__bone_ok(c->constrained_bone, sk->bone_count, 0) || !kiln__bone_ok(c->target_bone, sk->bone_count, 0))
            return kiln__invalid(err, &c->loc, NULL, "constraint %u refers to a bone outside the %u bones", i,
                                 (unsigned)sk->bone_count);
        if ((unsigned)c->type > KILN_SOURCE_CONSTRAINT_SCALE)
            return kiln__invalid(err, &c->loc, "type", "constraint %u has an unknown type %u", i, (unsigned)c->type);
        if (!kiln__finite(c->custom_offset, 4) || !isfinite(c->weight))
            return kiln__invalid(err, &c->loc, NULL, "constraint %u has an offset or weight that is not finite", i);
    }
    return KILN_OK;
}

static kiln_result kiln__validate_mesh(const kiln_source_mesh *m, uint32_t material_count,
                                       kiln_diag *err)
{
    const kiln_source_loc *loc = &m->loc;
    if (m->vertex_count && !m->positions)
        return kiln__invalid(err, loc, "positions", "mesh has %u vertices but no positions", (unsigned)m->vertex_count);
    KILN__ARRAY(loc, m->faces, m->face_count, "face");
    if (m->uv_layer_count > KILN_SOURCE_MAX_LAYERS)
        return kiln__invalid(err, loc, "uv_layer_count", "%u UV layers, more than %u", (unsigned)m->uv_layer_count,
                             KILN_SOURCE_MAX_LAYERS);
    if (m->color_layer_count > KILN_SOURCE_MAX_LAYERS)
        return kiln__invalid(err, loc, "color_layer_count", "%u colour layers, more than %u",
                             (unsigned)m->color_layer_count, KILN_SOURCE_MAX_LAYERS);
    for (uint32_t l = 0; l < m->color_layer_count; l++)
        if (m->color[l].rgba8 && m->color[l].rgba)
            return kiln__invalid(err, loc, "color", "colour layer %u sets both its RGBA8 and its float array", l);
    if (m->max_influence > KILN_SOURCE_MAX_INFLUENCES)
        return kiln__invalid(err, loc, "max_influence", "%u influences per vertex, more than %u",
                             (unsigned)m->max_influence, KILN_SOURCE_MAX_INFLUENCES);
    if (m->max_influence) {
        if (m->vertex_count && !m->weight_bones)
            return kiln__invalid(err, loc, "weight_bones", "mesh is skinned (%u influences) without bone indices",
                                 (unsigned)m->max_influence);
        if (m->vertex_count && !m->weight_values && m->max_influence != 1)
            return kiln__invalid(err, loc, "weight_values",
                                 "mesh has %u influences per vertex but no weights (only 1 influence may omit them)",
                                 (unsigned)m->max_influence);
    }
    if ((unsigned)m->skinning > KILN_SOURCE_SKIN_DUAL_QUAT)
        return kiln__invalid(err, loc, "skinning", "unknown skinning method %u", (unsigned)m->skinning);
    if (m->material != KILN_SOURCE_NONE && m->material >= material_count)
        return kiln__invalid(err, loc, "material", "material %u is not one of the model's %u materials",
                             (unsigned)m->material, (unsigned)material_count);
    return KILN_OK;
}

static kiln_result kiln__validate_hair(const kiln_source_hair *h, uint32_t material_count, kiln_diag *err)
{
    KILN__ARRAY(&h->loc, h->segments, h->strand_count, "strand");
    KILN__ARRAY(&h->loc, h->particles, h->particle_count, "particle");
    uint64_t sum = 0;
    for (uint32_t i = 0; i < h->strand_count; i++) sum += (uint64_t)h->segments[i] + 1;
    if (sum != h->particle_count)
        return kiln__invalid(err, &h->loc, "segments", "the strands hold %llu particles, the hair %u",
                             (unsigned long long)sum, (unsigned)h->particle_count);
    if (h->material != KILN_SOURCE_NONE && h->material >= material_count)
        return kiln__invalid(err, &h->loc, "material", "material %u is not one of the model's %u materials",
                             (unsigned)h->material, (unsigned)material_count);
    return KILN_OK;
}

static kiln_result kiln__validate_model(const kiln_source_model *m, const kiln_allocator *a, kiln_diag *err)
{
    KILN__ARRAY(&m->loc, m->materials, m->material_count, "material");
    KILN__ARRAY(&m->loc, m->meshes, m->mesh_count, "mesh");
    KILN__ARRAY(&m->loc, m->hairs, m->hair_count, "hair");
    KILN__ARRAY(&m->loc, m->blend_shapes, m->blend_shape_count, "blend shape");
    if (!kiln__finite(m->position, 3) || !kiln__finite(m->rotation, 4) || !kiln__finite(m->scale, 3))
        return kiln__invalid(err, &m->loc, NULL, "model transform is not finite");
    if (m->skeleton) KILN__TRY(kiln__validate_skeleton(m->skeleton, a, err));
    for (uint32_t i = 0; i < m->material_count; i++) {
        const kiln_source_material *mat = &m->materials[i];
        KILN__ARRAY(&mat->loc, mat->slots, mat->slot_count, "slot");
        for (uint32_t s = 0; s < mat->slot_count; s++) {
            const kiln_source_material_slot *slot = &mat->slots[s];
            if (!slot->name) return kiln__invalid(err, &slot->loc, "name", "material slot %u has no name", s);
            if ((unsigned)slot->kind > KILN_SOURCE_SLOT_COLOR)
                return kiln__invalid(err, &slot->loc, "kind", "material slot %u has an unknown kind %u", s,
                                     (unsigned)slot->kind);
            if (slot->kind == KILN_SOURCE_SLOT_FILE && !slot->path)
                return kiln__invalid(err, &slot->loc, "path", "file slot %u has no path", s);
            if (slot->kind == KILN_SOURCE_SLOT_COLOR && !kiln__finite(slot->rgba, 4))
                return kiln__invalid(err, &slot->loc, "rgba", "colour slot %u is not finite", s);
        }
    }
    for (uint32_t i = 0; i < m->mesh_count; i++)
        KILN__TRY(kiln__validate_mesh(&m->meshes[i], m->material_count, err));
    for (uint32_t i = 0; i < m->hair_count; i++) KILN__TRY(kiln__validate_hair(&m->hairs[i], m->material_count, err));
    for (uint32_t i = 0; i < m->blend_shape_count; i++) {
        const kiln_source_blend_shape *b = &m->blend_shapes[i];
        if (b->mesh >= m->mesh_count)
            return kiln__invalid(err, &b->loc, "mesh", "blend shape names mesh %u of the model's %u",
                                 (unsigned)b->mesh, (unsigned)m->mesh_count);
        KILN__ARRAY(&b->loc, b->indices, b->pair_count, "vertex index");
        KILN__ARRAY(&b->loc, b->targets, b->pair_count, "target");
        if (!isfinite(b->target_scale) || b->target_scale <= 0.0f)
            return kiln__invalid(err, &b->loc, "target_scale", "target scale %g is not > 0", (double)b->target_scale);
    }
    return KILN_OK;
}

static kiln_result kiln__validate_animation(const kiln_source_animation *a, kiln_diag *err)
{
    if (!isfinite(a->framerate) || a->framerate <= 0.0f)
        return kiln__invalid(err, &a->loc, "framerate", "frame rate %g is not > 0", (double)a->framerate);
    KILN__ARRAY(&a->loc, a->curves, a->curve_count, "curve");
    KILN__ARRAY(&a->loc, a->overrides, a->override_count, "mode override");
    KILN__ARRAY(&a->loc, a->notifications, a->notification_count, "notification");
    for (uint32_t i = 0; i < a->curve_count; i++) {
        const kiln_source_curve *c = &a->curves[i];
        if ((unsigned)c->channel >= KILN_SOURCE_CHANNEL_COUNT_)
            return kiln__invalid(err, &c->loc, "channel", "curve %u has an unknown channel %u", i, (unsigned)c->channel);
        if ((unsigned)c->mode > KILN_SOURCE_ADDITIVE)
            return kiln__invalid(err, &c->loc, "mode", "curve %u has an unknown mode %u", i, (unsigned)c->mode);
        if (!c->target) return kiln__invalid(err, &c->loc, "target", "curve %u has no target", i);
        if (c->key_count && (!c->frames || !c->values))
            return kiln__invalid(err, &c->loc, NULL, "curve %u has %u keys but no frame or value array", i,
                                 (unsigned)c->key_count);
    }
    for (uint32_t i = 0; i < a->override_count; i++) {
        const kiln_source_mode_override *o = &a->overrides[i];
        if (!o->target) return kiln__invalid(err, &o->loc, "target", "mode override %u has no target", i);
        if ((unsigned)o->mode > KILN_SOURCE_ADDITIVE)
            return kiln__invalid(err, &o->loc, "mode", "mode override %u has an unknown mode %u", i, (unsigned)o->mode);
    }
    for (uint32_t i = 0; i < a->notification_count; i++) {
        const kiln_source_notification *n = &a->notifications[i];
        KILN__ARRAY(&n->loc, n->frames, n->key_count, "notification key");
    }
    KILN__ARRAY(&a->loc, a->authored_rest, a->authored_rest_count, "authored rest bone");
    for (uint32_t i = 0; i < a->authored_rest_count; i++) {
        const kiln_source_rest_bone *b = &a->authored_rest[i];
        if (!b->name) return kiln__invalid(err, &b->loc, "name", "authored rest bone %u has no name", i);
        if (!kiln__finite(b->position, 3) || !kiln__finite(b->rotation, 4) || !kiln__finite(b->scale, 3))
            return kiln__invalid(err, &b->loc, NULL, "authored rest bone '%s' has a non-finite transform", b->name);
    }
    if (a->bind_rule && strlen(a->bind_rule) >= sizeof(((kiln_diag *)0)->rule))
        return kiln__invalid(err, &a->loc, "bind_rule", "bind rule '%s' is longer than %u characters", a->bind_rule,
                             (unsigned)sizeof(((kiln_diag *)0)->rule) - 1u);
    return KILN_OK;
}

kiln_result kiln_source_validate(const kiln_source_scene *scene, kiln_diag *err)
{
    if (!scene) return KILN_ERR_INVALID_ARGUMENT;
    static const kiln_source_loc whole = {NULL, KILN_NO_OFFSET, 0};
    KILN__ARRAY(&whole, scene->models, scene->model_count, "model");
    KILN__ARRAY(&whole, scene->instances, scene->instance_count, "instance");
    KILN__ARRAY(&whole, scene->animations, scene->animation_count, "animation");
    KILN__ARRAY(&whole, scene->extras, scene->extra_count, "extra");
    if ((unsigned)scene->metadata.up_axis > KILN_SOURCE_UP_Z)
        return kiln__invalid(err, &scene->metadata.loc, "up_axis", "unknown up axis %u",
                             (unsigned)scene->metadata.up_axis);
    for (uint32_t i = 0; i < scene->model_count; i++) KILN__TRY(kiln__validate_model(&scene->models[i], &scene->allocator, err));
    for (uint32_t i = 0; i < scene->instance_count; i++) {
        const kiln_source_instance *in = &scene->instances[i];
        if (!in->path) return kiln__invalid(err, &in->loc, "path", "instance %u has no path", i);
        if (!kiln__finite(in->position, 3) || !kiln__finite(in->rotation, 4) || !kiln__finite(in->scale, 3))
            return kiln__invalid(err, &in->loc, NULL, "instance %u has a transform that is not finite", i);
    }
    for (uint32_t i = 0; i < scene->animation_count; i++)
        KILN__TRY(kiln__validate_animation(&scene->animations[i], err));
    for (uint32_t i = 0; i < scene->extra_count; i++)
        if (!scene->extras[i].kind) return kiln__invalid(err, &scene->extras[i].loc, "kind", "extra %u has no kind", i);
    return KILN_OK;
}

const char *kiln_source_channel_name(kiln_source_channel c)
{
    static const char *const names[KILN_SOURCE_CHANNEL_COUNT_] = {"rq", "tx", "ty", "tz", "sx",
                                                                  "sy", "sz", "bs", "vb"};
    return (unsigned)c < KILN_SOURCE_CHANNEL_COUNT_ ? names[c] : "?";
}

const char *kiln_source_mode_name(kiln_source_mode m)
{
    switch (m) {
    case KILN_SOURCE_ABSOLUTE: return "absolute";
    case KILN_SOURCE_RELATIVE: return "relative";
    case KILN_SOURCE_ADDITIVE: return "additive";
    }
    return "?";
}
