/* The Cast importer: parses with kiln_cast_parse and walks every Root with the typed accessors
 * (kiln/cast_scene.h), copying what the bake reads into the source layer: Models (skeleton with
 * IK handles and constraints, materials, meshes, hair, blend shapes), Instances, Metadata and
 * Animations (cast_import_anim.c). A node whose accessor fails is reported by the accessor and
 * left out. Locations are the node paths the Cast diagnostics use. */
#include <stdio.h>
#include <string.h>

#include "../import/importers.h"
#include "diag.h"
#include "cast_import.h"

static int kiln__cast_detect(const void *data, size_t size)
{
    const unsigned char *p = data;
    return size >= 4 && p[0] == 'c' && p[1] == 'a' && p[2] == 's' && p[3] == 't';
}

kiln_result kiln__cast_loc(kiln__cast_import *im, uint32_t node, kiln_source_loc *loc)
{
    char path[sizeof ((kiln_diag *)0)->path];
    const kiln_cast_node *n = kiln_cast_node_at(im->doc, node);
    kiln_cast_node_path(im->doc, node, path, sizeof path);
    loc->path = kiln_source_strdup(im->scene, path);
    loc->offset = n->offset;
    loc->size = n->size;
    return loc->path ? KILN_OK : KILN_ERR_OUT_OF_MEMORY;
}

#define KILN__TRY(expr)                         \
    do {                                        \
        kiln_result kiln__r = (expr);           \
        if (kiln__r != KILN_OK) return kiln__r; \
    } while (0)

/* Index of `node` in nodes[0..count), or KILN_SOURCE_NONE. */
static uint32_t kiln__index_of(const uint32_t *nodes, uint32_t count, uint32_t node)
{
    if (node == KILN_CAST_NONE) return KILN_SOURCE_NONE;
    for (uint32_t i = 0; i < count; i++)
        if (nodes[i] == node) return i;
    return KILN_SOURCE_NONE;
}

static const uint32_t *kiln__copy_u32(kiln__cast_import *im, const kiln_cast_array *a, uint32_t n)
{
    if (!n || a->count < n) return NULL;
    uint32_t *d = kiln_source_alloc(im->scene, n, sizeof *d);
    if (d) kiln_cast_array_read_u32(a, 0, n, d);
    return d;
}

/* n elements of a->comps floats each; NULL when absent (or out of memory: *oom set). */
static const float *kiln__copy_f32(kiln__cast_import *im, const kiln_cast_array *a, uint32_t n, int *oom)
{
    if (!n || a->count < n) return NULL;
    float *d = kiln_source_alloc(im->scene, (uint64_t)n * a->comps, sizeof *d);
    if (!d) {
        *oom = 1;
        return NULL;
    }
    kiln_cast_array_read_f32(a, 0, n, d);
    return d;
}

/* Payload bytes of a property, 0 when absent (the bytes that fed an item, for statistics). */
static uint64_t kiln__prop_bytes(const kiln_cast_doc *doc, uint32_t node, const char *name)
{
    const kiln_cast_prop *p = kiln_cast_find_prop(doc, node, name, NULL);
    return p ? p->bytes : 0;
}

/* The name, or the Cast default "<kind><ordinal>" (ordinal among the siblings of that kind). */
static const char *kiln__default_name(kiln__cast_import *im, uint32_t node, const char *name, const char *kind)
{
    if (name) return kiln_source_strdup(im->scene, name);
    return kiln_source_strfmt(im->scene, "%s%u", kind, kiln_cast_node_at(im->doc, node)->ordinal);
}

/* ---- skeletons ---------------------------------------------------------------------------- */

/* Counts the ERROR reports passing through to the import's sink. */
typedef struct kiln__counting_sink {
    const kiln_diag_sink *next;
    uint64_t              errors;
} kiln__counting_sink;

static void kiln__counting_fn(void *user, const kiln_diag *d)
{
    kiln__counting_sink *c = user;
    c->errors += d->severity == KILN_SEVERITY_ERROR;
    if (c->next && c->next->fn) c->next->fn(c->next->user, d);
}

kiln_result kiln__cast_import_skeleton(kiln__cast_import *im, uint32_t skel, kiln_source_skeleton *sk)
{
    const kiln_cast_doc *doc = im->doc;
    uint32_t count = kiln_cast_child_count(doc, skel, KILN_CAST_ID_BONE);
    KILN__TRY(kiln__cast_loc(im, skel, &sk->loc));
    sk->bones = kiln_source_alloc(im->scene, count, sizeof *sk->bones);
    int32_t *parents = kiln_source_alloc(im->scene, count, sizeof *parents);
    if (!sk->bones || !parents) return KILN_ERR_OUT_OF_MEMORY;
    if (!count) return KILN_OK;
    KILN__TRY(kiln_cast_skeleton_parents(doc, skel, parents, count, im->sink));
    uint32_t k = 0;
    for (uint32_t c = kiln_cast_node_at(doc, skel)->first_child; c != KILN_CAST_NONE && k < count;
         c = kiln_cast_node_at(doc, c)->next_sibling) {
        /* Opaque bones (skipped by the parser) still hold their index, as in every reader. */
        if (kiln_cast_node_at(doc, c)->id != KILN_CAST_ID_BONE) continue;
        kiln_source_bone *b = &sk->bones[k];
        kiln_cast_bone cb;
        kiln_result r = kiln_cast_get_bone(doc, c, &cb, im->sink);
        if (r == KILN_ERR_OUT_OF_MEMORY) return r;
        if (r != KILN_OK) {
            /* Dropping the bone would renumber its siblings and break every weight, so it
             * stays, at the identity. */
            kiln__diag_report(im->sink, r, KILN_SEVERITY_WARNING, doc, c, NULL, KILN_NO_OFFSET,
                              "bone %u unreadable; kept with the identity rest pose", k);
            memset(&cb, 0, sizeof cb);
            cb.segment_scale_compensate = 1;
        }
        KILN__TRY(kiln__cast_loc(im, c, &b->loc));
        b->name = kiln_source_strdup(im->scene, cb.name);
        if (cb.name && !b->name) return KILN_ERR_OUT_OF_MEMORY;
        b->parent = parents[k];
        b->segment_scale_compensate = cb.segment_scale_compensate;
        b->has_local_position = cb.has_local_position;
        b->has_local_rotation = cb.has_local_rotation;
        b->has_world_position = cb.has_world_position;
        b->has_world_rotation = cb.has_world_rotation;
        b->has_scale = cb.has_scale;
        memcpy(b->local_position, cb.local_position, sizeof b->local_position);
        memcpy(b->local_rotation, cb.local_rotation, sizeof b->local_rotation);
        memcpy(b->world_position, cb.world_position, sizeof b->world_position);
        memcpy(b->world_rotation, cb.world_rotation, sizeof b->world_rotation);
        memcpy(b->scale, cb.scale, sizeof b->scale);
        k++;
    }
    sk->bone_count = k;
    return KILN_OK;
}

static int kiln__bone_in(int32_t bone, uint32_t count)
{
    return bone >= 0 && (uint32_t)bone < count;
}

kiln_result kiln__cast_import_ik_handle(kiln__cast_import *im, uint32_t node, uint32_t bone_count,
                                        kiln_source_ik_handle *h)
{
    kiln__counting_sink counting = {im->sink, 0};
    kiln_diag_sink sink = {kiln__counting_fn, &counting};
    kiln_cast_ik_handle ch;
    kiln_result r = kiln_cast_get_ik_handle(im->doc, node, &ch, &sink);
    if (r == KILN_ERR_OUT_OF_MEMORY) return r;
    if (r != KILN_OK || !kiln__bone_in(ch.start_bone, bone_count) || !kiln__bone_in(ch.end_bone, bone_count)) {
        if (!counting.errors) /* the accessor reports what it rejects; anything else is reported here */
            kiln__diag_report(im->sink, r != KILN_OK ? r : KILN_ERR_CAST_UNRESOLVED, KILN_SEVERITY_ERROR, im->doc,
                              node, NULL, KILN_NO_OFFSET, "IK handle start or end bone does not resolve; dropped");
        return r != KILN_OK ? r : KILN_ERR_CAST_UNRESOLVED;
    }
    KILN__TRY(kiln__cast_loc(im, node, &h->loc));
    h->name = kiln_source_strdup(im->scene, ch.name);
    if (ch.name && !h->name) return KILN_ERR_OUT_OF_MEMORY;
    h->start_bone = ch.start_bone;
    h->end_bone = ch.end_bone;
    /* optional references outside the skeleton read as absent */
    h->target_bone = kiln__bone_in(ch.target_bone, bone_count) ? ch.target_bone : -1;
    h->pole_vector_bone = kiln__bone_in(ch.pole_vector_bone, bone_count) ? ch.pole_vector_bone : -1;
    h->pole_bone = kiln__bone_in(ch.pole_bone, bone_count) ? ch.pole_bone : -1;
    memcpy(h->target_offset, ch.target_offset, sizeof h->target_offset);
    h->use_target_rotation = ch.use_target_rotation;
    return KILN_OK;
}

kiln_result kiln__cast_import_constraint(kiln__cast_import *im, uint32_t node, uint32_t bone_count,
                                         kiln_source_constraint *o)
{
    kiln__counting_sink counting = {im->sink, 0};
    kiln_diag_sink sink = {kiln__counting_fn, &counting};
    kiln_cast_constraint cc;
    kiln_result r = kiln_cast_get_constraint(im->doc, node, &cc, &sink);
    if (r == KILN_ERR_OUT_OF_MEMORY) return r;
    if (r != KILN_OK || !kiln__bone_in(cc.constrained_bone, bone_count) || !kiln__bone_in(cc.target_bone, bone_count) ||
        cc.constrained_bone == cc.target_bone) {
        if (!counting.errors)
            kiln__diag_report(im->sink, r != KILN_OK ? r : KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_ERROR, im->doc, node,
                              NULL, KILN_NO_OFFSET, "constraint bones do not resolve to two distinct bones; dropped");
        return r != KILN_OK ? r : KILN_ERR_CAST_BAD_VALUE;
    }
    KILN__TRY(kiln__cast_loc(im, node, &o->loc));
    o->name = kiln_source_strdup(im->scene, cc.name);
    if (cc.name && !o->name) return KILN_ERR_OUT_OF_MEMORY;
    o->type = (kiln_source_constraint_type)cc.type;
    o->constrained_bone = cc.constrained_bone;
    o->target_bone = cc.target_bone;
    o->maintain_offset = cc.maintain_offset;
    o->has_custom_offset = cc.has_custom_offset;
    memcpy(o->custom_offset, cc.custom_offset, sizeof o->custom_offset);
    o->weight = cc.weight;
    memcpy(o->skip, cc.skip, sizeof o->skip);
    return KILN_OK;
}

/* The model's Skeleton with its IK handles and constraints: NULL (nothing kept) when its bones
 * form a cycle. */
static kiln_result kiln__skeleton(kiln__cast_import *im, uint32_t skel, kiln_source_model *m)
{
    const kiln_cast_doc *doc = im->doc;
    kiln_source_skeleton *sk = kiln_source_alloc(im->scene, 1, sizeof *sk);
    if (!sk) return KILN_ERR_OUT_OF_MEMORY;
    kiln_result r = kiln__cast_import_skeleton(im, skel, sk);
    if (r != KILN_OK) return r == KILN_ERR_OUT_OF_MEMORY ? r : KILN_OK; /* reported: no skeleton */
    uint32_t iks = kiln_cast_child_count(doc, skel, KILN_CAST_ID_IKHANDLE);
    uint32_t cns = kiln_cast_child_count(doc, skel, KILN_CAST_ID_CONSTRAINT);
    sk->ik_handles = kiln_source_alloc(im->scene, iks, sizeof *sk->ik_handles);
    sk->constraints = kiln_source_alloc(im->scene, cns, sizeof *sk->constraints);
    if (!sk->ik_handles || !sk->constraints) return KILN_ERR_OUT_OF_MEMORY;
    for (uint32_t c = kiln_cast_node_at(doc, skel)->first_child; c != KILN_CAST_NONE;
         c = kiln_cast_node_at(doc, c)->next_sibling) {
        const kiln_cast_node *n = kiln_cast_node_at(doc, c);
        if (n->flags & KILN_CAST_NODE_OPAQUE) continue; /* reported by the parser */
        if (n->id == KILN_CAST_ID_IKHANDLE && sk->ik_handle_count < iks) {
            r = kiln__cast_import_ik_handle(im, c, sk->bone_count, &sk->ik_handles[sk->ik_handle_count]);
            if (r == KILN_OK) sk->ik_handle_count++;
        } else if (n->id == KILN_CAST_ID_CONSTRAINT && sk->constraint_count < cns) {
            r = kiln__cast_import_constraint(im, c, sk->bone_count, &sk->constraints[sk->constraint_count]);
            if (r == KILN_OK) sk->constraint_count++;
        }
        if (r == KILN_ERR_OUT_OF_MEMORY) return r;
    }
    m->skeleton = sk;
    return KILN_OK;
}

/* ---- materials, meshes, hair, blend shapes ------------------------------------------------ */

kiln_result kiln__cast_import_material(kiln__cast_import *im, uint32_t node, kiln_source_material *out)
{
    const kiln_cast_doc *doc = im->doc;
    kiln_cast_material cm;
    KILN__TRY(kiln_cast_get_material(doc, node, &cm, im->sink));
    KILN__TRY(kiln__cast_loc(im, node, &out->loc));
    out->name = kiln__default_name(im, node, cm.name, "material");
    out->type = kiln_source_strdup(im->scene, cm.type);
    out->slots = kiln_source_alloc(im->scene, cm.slot_count, sizeof *out->slots);
    if (!out->name || (cm.type && !out->type) || !out->slots) return KILN_ERR_OUT_OF_MEMORY;
    for (uint32_t k = 0; k < cm.slot_count; k++) {
        kiln_cast_material_slot ms;
        if (kiln_cast_get_material_slot(doc, node, k, &ms, im->sink) != KILN_OK || ms.node == KILN_CAST_NONE)
            continue;
        kiln_source_material_slot *s = &out->slots[out->slot_count];
        if (ms.id == KILN_CAST_ID_FILE) {
            kiln_cast_file f;
            if (kiln_cast_get_file(doc, ms.node, &f, im->sink) != KILN_OK) continue;
            s->kind = KILN_SOURCE_SLOT_FILE;
            s->path = kiln_source_strdup(im->scene, f.path);
            if (!s->path) return KILN_ERR_OUT_OF_MEMORY;
        } else if (ms.id == KILN_CAST_ID_COLOR) {
            kiln_cast_color c;
            if (kiln_cast_get_color(doc, ms.node, &c, im->sink) != KILN_OK) continue;
            s->kind = KILN_SOURCE_SLOT_COLOR;
            memcpy(s->rgba, c.rgba, sizeof s->rgba);
            s->color_space = c.color_space == KILN_CAST_COLOR_LINEAR ? KILN_SOURCE_COLOR_LINEAR : KILN_SOURCE_COLOR_SRGB;
        } else {
            continue;
        }
        KILN__TRY(kiln__cast_loc(im, ms.node, &s->loc));
        s->name = kiln_source_strndup(im->scene, ms.name, ms.name_len);
        if (!s->name) return KILN_ERR_OUT_OF_MEMORY;
        out->slot_count++;
    }
    return KILN_OK;
}

static kiln_result kiln__mesh(kiln__cast_import *im, uint32_t node, const kiln_cast_mesh *cm, kiln_source_mesh *out)
{
    kiln_source_scene *s = im->scene;
    int oom = 0;
    uint32_t vc = cm->vertex_count;
    KILN__TRY(kiln__cast_loc(im, node, &out->loc));
    out->name = kiln_source_strdup(s, cm->name);
    if (cm->name && !out->name) return KILN_ERR_OUT_OF_MEMORY;
    out->vertex_count = vc;
    out->face_count = cm->face_count;
    out->positions = kiln__copy_f32(im, &cm->positions, vc, &oom);
    out->normals = kiln__copy_f32(im, &cm->normals, vc, &oom);
    out->tangents = kiln__copy_f32(im, &cm->tangents, vc, &oom);
    out->uv_layer_count = cm->uv_layer_count;
    for (uint32_t l = 0; l < cm->uv_layer_count; l++) out->uv[l] = kiln__copy_f32(im, &cm->uv[l], vc, &oom);
    out->color_layer_count = cm->color_layer_count;
    for (uint32_t l = 0; l < cm->color_layer_count; l++) {
        const kiln_cast_array *a = &cm->color[l];
        if (a->count < vc || !vc) continue;
        if (a->type == KILN_CAST_TYPE_VEC4) {
            out->color[l].rgba = kiln__copy_f32(im, a, vc, &oom);
        } else {
            out->color[l].rgba8 = kiln__copy_u32(im, a, vc);
            oom |= !out->color[l].rgba8;
        }
    }
    if (cm->max_influence && vc) {
        uint64_t n = (uint64_t)vc * cm->max_influence;
        out->max_influence = cm->max_influence;
        out->weight_bones = kiln__copy_u32(im, &cm->weight_bones, (uint32_t)n);
        oom |= !out->weight_bones;
        if (cm->weight_values.count) {
            out->weight_values = kiln__copy_f32(im, &cm->weight_values, (uint32_t)n, &oom);
            oom |= !out->weight_values;
        }
    }
    out->skinning = cm->skinning == KILN_CAST_SKIN_DUAL_QUAT ? KILN_SOURCE_SKIN_DUAL_QUAT : KILN_SOURCE_SKIN_LINEAR;
    if (cm->face_count) {
        out->faces = kiln__copy_u32(im, &cm->faces, cm->face_count * 3u);
        oom |= !out->faces;
    }
    return oom ? KILN_ERR_OUT_OF_MEMORY : KILN_OK;
}

static uint64_t kiln__array_bytes(const kiln_cast_array *a)
{
    return (uint64_t)a->count * kiln_cast_type_size(a->type);
}

kiln_result kiln__cast_import_mesh(kiln__cast_import *im, uint32_t node, kiln_source_mesh *out)
{
    kiln_cast_mesh cm;
    KILN__TRY(kiln_cast_get_mesh(im->doc, node, &cm, im->sink));
    KILN__TRY(kiln__mesh(im, node, &cm, out));
    out->name = kiln__default_name(im, node, cm.name, "mesh");
    if (!out->name) return KILN_ERR_OUT_OF_MEMORY;
    out->material = KILN_SOURCE_NONE;
    /* The payload bytes that fed the mesh, for the statistics. */
    uint64_t n = kiln__array_bytes(&cm.positions) + kiln__array_bytes(&cm.normals) + kiln__array_bytes(&cm.tangents) +
                 kiln__array_bytes(&cm.weight_bones) + kiln__array_bytes(&cm.weight_values) +
                 kiln__array_bytes(&cm.faces);
    for (uint32_t l = 0; l < cm.uv_layer_count && l < KILN_CAST_MAX_LAYERS; l++) n += kiln__array_bytes(&cm.uv[l]);
    for (uint32_t l = 0; l < cm.color_layer_count && l < KILN_CAST_MAX_LAYERS; l++)
        n += kiln__array_bytes(&cm.color[l]);
    out->loc.size = n;
    return KILN_OK;
}

static kiln_result kiln__hair(kiln__cast_import *im, uint32_t node, const kiln_cast_hair *ch, kiln_source_hair *out)
{
    int oom = 0;
    KILN__TRY(kiln__cast_loc(im, node, &out->loc));
    out->loc.size = kiln__prop_bytes(im->doc, node, "se") + kiln__prop_bytes(im->doc, node, "pt");
    out->material = KILN_SOURCE_NONE;
    out->name = kiln__default_name(im, node, ch->name, "hair");
    if (!out->name) return KILN_ERR_OUT_OF_MEMORY;
    out->strand_count = ch->strand_count;
    out->particle_count = ch->particle_count;
    out->segments = kiln__copy_u32(im, &ch->segments, ch->strand_count);
    out->particles = kiln__copy_f32(im, &ch->particles, ch->particle_count, &oom);
    if ((ch->strand_count && !out->segments) || oom || (ch->particle_count && !out->particles))
        return KILN_ERR_OUT_OF_MEMORY;
    return KILN_OK;
}

kiln_result kiln__cast_import_hair(kiln__cast_import *im, uint32_t node, kiln_source_hair *out)
{
    kiln_cast_hair ch;
    KILN__TRY(kiln_cast_get_hair(im->doc, node, &ch, im->sink));
    return kiln__hair(im, node, &ch, out);
}

static kiln_result kiln__blend_shape(kiln__cast_import *im, uint32_t node, const kiln_cast_blend_shape *cb,
                                     uint32_t mesh, kiln_source_blend_shape *out)
{
    int oom = 0;
    KILN__TRY(kiln__cast_loc(im, node, &out->loc));
    out->name = kiln_source_strdup(im->scene, cb->name);
    out->mesh = mesh;
    out->pair_count = cb->pair_count;
    out->indices = kiln__copy_u32(im, &cb->indices, cb->pair_count);
    out->targets = kiln__copy_f32(im, &cb->targets, cb->pair_count, &oom);
    out->target_scale = cb->target_scale;
    if ((cb->name && !out->name) || oom || (cb->pair_count && (!out->indices || !out->targets)))
        return KILN_ERR_OUT_OF_MEMORY;
    return KILN_OK;
}

/* Counts the ERROR reports passing through to the import's sink. */
kiln_result kiln__cast_import_blend_shape(kiln__cast_import *im, uint32_t node, kiln_source_blend_shape *out,
                                          uint32_t *base_node)
{
    kiln__counting_sink counting = {im->sink, 0};
    kiln_diag_sink sink = {kiln__counting_fn, &counting};
    kiln_cast_blend_shape cb;
    kiln_result r = kiln_cast_get_blend_shape(im->doc, node, &cb, &sink);
    if (r == KILN_ERR_OUT_OF_MEMORY) return r;
    if (r != KILN_OK || cb.base_mesh == KILN_CAST_NONE) {
        if (!counting.errors) /* a drop the accessor did not report */
            kiln__diag_report(im->sink, r == KILN_OK ? KILN_ERR_CAST_UNRESOLVED : r, KILN_SEVERITY_ERROR, im->doc,
                              node, NULL, KILN_NO_OFFSET, "BlendShape dropped");
        return r == KILN_OK ? KILN_ERR_CAST_UNRESOLVED : r;
    }
    *base_node = cb.base_mesh;
    return kiln__blend_shape(im, node, &cb, KILN_SOURCE_NONE, out);
}

/* Materials first (meshes and hair link to them), then meshes, hair and blend shapes, each in
 * file order. `nodes` is scratch for the Cast node of every kept material or mesh. */
static kiln_result kiln__model_parts(kiln__cast_import *im, uint32_t node, const kiln_cast_model *cm,
                                     kiln_source_model *m)
{
    const kiln_cast_doc *doc = im->doc;
    kiln_source_scene *s = im->scene;
    m->materials = kiln_source_alloc(s, cm->material_count, sizeof *m->materials);
    m->meshes = kiln_source_alloc(s, cm->mesh_count, sizeof *m->meshes);
    m->hairs = kiln_source_alloc(s, cm->hair_count, sizeof *m->hairs);
    m->blend_shapes = kiln_source_alloc(s, cm->blend_shape_count, sizeof *m->blend_shapes);
    uint32_t *material_nodes = kiln_source_alloc(s, cm->material_count, sizeof *material_nodes);
    uint32_t *mesh_nodes = kiln_source_alloc(s, cm->mesh_count, sizeof *mesh_nodes);
    if (!m->materials || !m->meshes || !m->hairs || !m->blend_shapes || !material_nodes || !mesh_nodes)
        return KILN_ERR_OUT_OF_MEMORY;
    for (uint32_t c = kiln_cast_node_at(doc, node)->first_child; c != KILN_CAST_NONE;
         c = kiln_cast_node_at(doc, c)->next_sibling) {
        if (kiln_cast_node_at(doc, c)->id != KILN_CAST_ID_MATERIAL || m->material_count >= cm->material_count) continue;
        kiln_result r = kiln__cast_import_material(im, c, &m->materials[m->material_count]);
        if (r == KILN_ERR_OUT_OF_MEMORY) return r;
        if (r == KILN_OK) material_nodes[m->material_count++] = c;
    }
    for (uint32_t c = kiln_cast_node_at(doc, node)->first_child; c != KILN_CAST_NONE;
         c = kiln_cast_node_at(doc, c)->next_sibling) {
        uint32_t id = kiln_cast_node_at(doc, c)->id;
        if (id == KILN_CAST_ID_MESH && m->mesh_count < cm->mesh_count) {
            kiln_source_mesh *out = &m->meshes[m->mesh_count];
            kiln_result r = kiln__cast_import_mesh(im, c, out);
            if (r == KILN_ERR_OUT_OF_MEMORY) return r;
            if (r != KILN_OK) continue; /* reported */
            kiln_cast_mesh me; /* again, silently, for the Material it resolved */
            uint32_t mat = kiln_cast_get_mesh(doc, c, &me, NULL) == KILN_OK ? me.material : KILN_CAST_NONE;
            out->material = kiln__index_of(material_nodes, m->material_count, mat);
            mesh_nodes[m->mesh_count++] = c;
        } else if (id == KILN_CAST_ID_HAIR && m->hair_count < cm->hair_count) {
            kiln_source_hair *out = &m->hairs[m->hair_count];
            kiln_result r = kiln__cast_import_hair(im, c, out);
            if (r == KILN_ERR_OUT_OF_MEMORY) return r;
            if (r != KILN_OK) continue; /* reported */
            kiln_cast_hair ch;
            uint32_t mat = kiln_cast_get_hair(doc, c, &ch, NULL) == KILN_OK ? ch.material : KILN_CAST_NONE;
            out->material = kiln__index_of(material_nodes, m->material_count, mat);
            m->hair_count++;
        }
    }
    for (uint32_t c = kiln_cast_node_at(doc, node)->first_child; c != KILN_CAST_NONE;
         c = kiln_cast_node_at(doc, c)->next_sibling) {
        if (kiln_cast_node_at(doc, c)->id != KILN_CAST_ID_BLENDSHAPE || m->blend_shape_count >= cm->blend_shape_count)
            continue;
        kiln_source_blend_shape *out = &m->blend_shapes[m->blend_shape_count];
        uint32_t base = KILN_CAST_NONE;
        kiln_result r = kiln__cast_import_blend_shape(im, c, out, &base);
        if (r == KILN_ERR_OUT_OF_MEMORY) return r;
        if (r != KILN_OK) continue; /* reported */
        out->mesh = kiln__index_of(mesh_nodes, m->mesh_count, base);
        if (out->mesh == KILN_SOURCE_NONE) {
            kiln__diag_report(im->sink, KILN_ERR_CAST_UNRESOLVED, KILN_SEVERITY_ERROR, doc, c, "b", KILN_NO_OFFSET,
                              "blend shape '%s' dropped: its base mesh was not baked", out->name ? out->name : "");
            continue;
        }
        m->blend_shape_count++;
    }
    return KILN_OK;
}

static kiln_result kiln__model(kiln__cast_import *im, uint32_t node, kiln_source_model *m)
{
    kiln_cast_model cm;
    KILN__TRY(kiln_cast_get_model(im->doc, node, &cm, im->sink));
    KILN__TRY(kiln__cast_loc(im, node, &m->loc));
    m->name = kiln_source_strdup(im->scene, cm.name);
    if (cm.name && !m->name) return KILN_ERR_OUT_OF_MEMORY;
    memcpy(m->position, cm.position, sizeof m->position);
    memcpy(m->rotation, cm.rotation, sizeof m->rotation);
    memcpy(m->scale, cm.scale, sizeof m->scale);
    if (cm.skeleton != KILN_CAST_NONE) KILN__TRY(kiln__skeleton(im, cm.skeleton, m));
    return kiln__model_parts(im, node, &cm, m);
}

/* ---- the scene ---------------------------------------------------------------------------- */

kiln_result kiln__cast_import_instance(kiln__cast_import *im, uint32_t node, kiln_source_instance *out)
{
    kiln_cast_instance ci;
    KILN__TRY(kiln_cast_get_instance(im->doc, node, &ci, im->sink));
    KILN__TRY(kiln__cast_loc(im, node, &out->loc));
    KILN__TRY(kiln__cast_loc(im, ci.file, &out->path_loc)); /* the File child's p */
    out->name = kiln_source_strdup(im->scene, ci.name);
    out->path = kiln_source_strdup(im->scene, ci.path);
    if ((ci.name && !out->name) || !out->path) return KILN_ERR_OUT_OF_MEMORY;
    memcpy(out->position, ci.position, sizeof out->position);
    memcpy(out->rotation, ci.rotation, sizeof out->rotation);
    memcpy(out->scale, ci.scale, sizeof out->scale);
    return KILN_OK;
}

kiln_result kiln__cast_import_metadata(kiln__cast_import *im)
{
    uint32_t node = kiln_cast_find_metadata(im->doc);
    kiln_source_metadata *md = &im->scene->metadata;
    md->loc.offset = KILN_NO_OFFSET;
    if (node == KILN_CAST_NONE) return KILN_OK;
    kiln_cast_metadata cm;
    kiln_result r = kiln_cast_get_metadata(im->doc, node, &cm, im->sink);
    if (r == KILN_ERR_OUT_OF_MEMORY) return r;
    if (r != KILN_OK) return KILN_OK; /* reported; the hints are simply absent */
    KILN__TRY(kiln__cast_loc(im, node, &md->loc));
    md->author = kiln_source_strdup(im->scene, cm.author);
    md->software = kiln_source_strdup(im->scene, cm.software);
    md->scene_root = kiln_source_strdup(im->scene, cm.scene_root);
    if ((cm.author && !md->author) || (cm.software && !md->software) || (cm.scene_root && !md->scene_root))
        return KILN_ERR_OUT_OF_MEMORY;
    md->up_axis = (kiln_source_up_axis)cm.up_axis; /* same order: none, x, y, z */
    return KILN_OK;
}

/* Counts the Root children by kind, for the scene's arrays. */
static kiln_result kiln__reserve(kiln__cast_import *im)
{
    const kiln_cast_doc *doc = im->doc;
    uint32_t models = 0, instances = 0, anims = 0;
    for (uint32_t k = 0; k < kiln_cast_root_count(doc); k++) {
        uint32_t root = kiln_cast_root(doc, k);
        if (kiln_cast_node_at(doc, root)->id != KILN_CAST_ID_ROOT) continue;
        models += kiln_cast_child_count(doc, root, KILN_CAST_ID_MODEL);
        instances += kiln_cast_child_count(doc, root, KILN_CAST_ID_INSTANCE);
        anims += kiln_cast_child_count(doc, root, KILN_CAST_ID_ANIMATION);
    }
    kiln_source_scene *s = im->scene;
    s->models = kiln_source_alloc(s, models, sizeof *s->models);
    s->instances = kiln_source_alloc(s, instances, sizeof *s->instances);
    s->animations = kiln_source_alloc(s, anims, sizeof *s->animations);
    return s->models && s->instances && s->animations ? KILN_OK : KILN_ERR_OUT_OF_MEMORY;
}

static kiln_result kiln__roots(kiln__cast_import *im)
{
    const kiln_cast_doc *doc = im->doc;
    kiln_source_scene *s = im->scene;
    for (uint32_t k = 0; k < kiln_cast_root_count(doc); k++) {
        uint32_t root = kiln_cast_root(doc, k);
        if (kiln_cast_node_at(doc, root)->id != KILN_CAST_ID_ROOT) continue; /* reported by the parser */
        for (uint32_t c = kiln_cast_node_at(doc, root)->first_child; c != KILN_CAST_NONE;
             c = kiln_cast_node_at(doc, c)->next_sibling) {
            const kiln_cast_node *n = kiln_cast_node_at(doc, c);
            if (n->flags & KILN_CAST_NODE_OPAQUE) continue; /* reported by the parser */
            kiln_result r = KILN_OK;
            if (n->id == KILN_CAST_ID_MODEL) {
                r = kiln__model(im, c, &s->models[s->model_count]);
                if (r == KILN_OK) s->model_count++;
            } else if (n->id == KILN_CAST_ID_INSTANCE) {
                r = kiln__cast_import_instance(im, c, &s->instances[s->instance_count]);
                if (r == KILN_OK) s->instance_count++;
            } else if (n->id == KILN_CAST_ID_ANIMATION) {
                r = kiln__cast_import_animation(im, c, &s->animations[s->animation_count]);
                if (r == KILN_OK) s->animation_count++;
            }
            if (r == KILN_ERR_OUT_OF_MEMORY) return r; /* other failures: reported, node dropped */
        }
    }
    return KILN_OK;
}

static kiln_result kiln__cast_import_run(const void *data, size_t size, const char *path,
                                     const kiln_import_options *options, kiln_source_scene *scene, kiln_diag *err)
{
    (void)path;
    kiln_cast_parse_options popts;
    memset(&popts, 0, sizeof popts);
    popts.allocator = options ? options->allocator : NULL;
    if (options) popts.diag = options->diag;
    kiln_cast_doc *doc = NULL;
    kiln_result r = kiln_cast_parse(data, size, &popts, &doc, err);
    if (r != KILN_OK) return r;
    kiln__cast_import im = {doc, scene, options ? &options->diag : NULL};
    r = kiln__reserve(&im);
    if (r == KILN_OK) r = kiln__cast_import_metadata(&im);
    if (r == KILN_OK) r = kiln__roots(&im);
    kiln_cast_free(doc);
    if (r != KILN_OK && err) {
        memset(err, 0, sizeof *err);
        err->code = r;
        err->severity = KILN_SEVERITY_ERROR;
        err->offset = KILN_NO_OFFSET;
        snprintf(err->message, sizeof err->message, "%s: while importing", kiln_result_str(r));
    }
    return r;
}

const kiln_importer kiln__importer_cast = {
    "cast",
    "Cast (.cast): models, skeletons, meshes, materials, animations, instances",
    kiln__cast_detect,
    kiln__cast_import_run,
};
