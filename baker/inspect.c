/* `kiln inspect`: a readable (or JSON) summary of one Cast file, plus every diagnostic the
 * reader and the typed accessors produce.
 *
 * Every node is visited once, in file order, and read with its typed accessor so that the
 * diagnostics are exactly those a bake would see. The summary keeps only small records (counts
 * and pointers into the file buffer), never per-vertex data: the accessors already scan what
 * needs scanning (faces, hair segments), and inspect adds only the key frames of curves and
 * notification tracks, which it needs for the frame range.
 *
 * Records of a Model's parts and of an Animation's tracks are chained to their owner as they are
 * met; owners always come first because storage is depth-first pre-order. Parts found under an
 * unexpected parent (reported by the accessor) are chained to an "unattached" owner instead of
 * being lost from the summary.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inspect_blob.h"
#include "inspect_source.h"
#include "kiln/bake/source.h"
#include "json.h"
#include "kiln/cast.h"
#include "kiln/cast_scene.h"

#define NONE KILN_CAST_NONE

/* Diagnostics kept for printing; more are counted, not stored (a hostile file can raise one
 * per node). */
#define KILN__INSPECT_MAX_DIAGS 10000u

/* Node kinds in the order they are listed, with MANIFEST.md's names (kiln_cast_id_name). */
static const uint32_t kiln__kind_ids[] = {
    KILN_CAST_ID_ROOT, KILN_CAST_ID_MODEL, KILN_CAST_ID_MESH, KILN_CAST_ID_HAIR, KILN_CAST_ID_BLENDSHAPE,
    KILN_CAST_ID_SKELETON, KILN_CAST_ID_BONE, KILN_CAST_ID_IKHANDLE, KILN_CAST_ID_CONSTRAINT,
    KILN_CAST_ID_ANIMATION, KILN_CAST_ID_CURVE, KILN_CAST_ID_CURVE_MODE_OVERRIDE,
    KILN_CAST_ID_NOTIFICATION_TRACK, KILN_CAST_ID_MATERIAL, KILN_CAST_ID_FILE, KILN_CAST_ID_COLOR,
    KILN_CAST_ID_INSTANCE, KILN_CAST_ID_METADATA,
};
#define KILN__KINDS (sizeof kiln__kind_ids / sizeof kiln__kind_ids[0])
#define KILN__KIND_UNKNOWN KILN__KINDS /* one more slot for every unknown id */

enum { PART_MESH, PART_HAIR, PART_BLEND, PART_SKELETON, PART_MATERIAL, PART_KINDS };

enum { COLOR_MISSING = 0, COLOR_PACKED = 1, COLOR_FLOAT = 2 };

typedef struct kiln__insp_mesh_rec {
    const char *name;
    uint32_t    vertices, faces, uv_layers, color_layers, max_influence;
    uint32_t    bad_index_faces, degenerate_faces;
    uint8_t     uv_present[KILN_CAST_MAX_LAYERS];
    uint8_t     color_type[KILN_CAST_MAX_LAYERS];   /* COLOR_* */
    uint8_t     normals, tangents, dual_quat;
    uint64_t    material_hash;
    uint32_t    material;                           /* node or NONE */
} kiln__insp_mesh_rec;

typedef struct kiln__insp_hair_rec {
    const char *name;
    uint32_t    strands, particles, material;
    uint64_t    material_hash;
} kiln__insp_hair_rec;

typedef struct kiln__insp_blend_rec {
    const char *name;
    uint32_t    base_mesh, pairs;
    float       target_scale;
} kiln__insp_blend_rec;

typedef struct kiln__insp_material_rec {
    const char *name, *type;
    uint32_t    first_slot, slot_count;
} kiln__insp_material_rec;

/* A part of a Model. `ok` is 0 when the accessor rejected the node (it is then dropped by the
 * baker; the summary still lists it so that the count matches the node table). */
typedef struct kiln__insp_part {
    uint32_t node, next, kind, ok;
    union {
        kiln__insp_mesh_rec     mesh;
        kiln__insp_hair_rec     hair;
        kiln__insp_blend_rec    blend;
        kiln_cast_skeleton  skeleton;
        kiln__insp_material_rec material;
    } u;
} kiln__insp_part;

typedef struct kiln__insp_slot {
    const char *name;
    uint32_t    name_len, id, node;
    uint64_t    hash;
    const char *path;                 /* File */
    float       rgba[4];              /* Color */
    uint32_t    linear;
} kiln__insp_slot;

typedef struct kiln__insp_model {
    uint32_t        node;             /* NONE: holder of parts found outside any Model */
    uint32_t        ok;
    kiln_cast_model m;
    uint32_t        first[PART_KINDS], last[PART_KINDS];
} kiln__insp_model;

typedef struct kiln__insp_track {
    const char *name;
    uint32_t    keys, next;
} kiln__insp_track;

typedef struct kiln__insp_anim {
    uint32_t            node;         /* NONE: holder of tracks found outside any Animation */
    uint32_t            ok;
    kiln_cast_animation a;
    uint32_t            has_keys, min_frame, max_frame;
    uint32_t            curves, curves_dropped, overrides, skeletons;
    uint32_t            by_prop[KILN_CAST_CURVE_PROP_COUNT_];
    uint32_t            by_mode[3];
    uint32_t            first_track, last_track;
} kiln__insp_anim;

typedef struct kiln__inspect {
    const char          *path;
    const kiln_cast_doc *doc;
    size_t               file_size;
    int                  json, quiet, source;
    kiln_diag_sink       sink;

    kiln_diag *diags;
    size_t     diag_count, diag_cap;
    uint64_t   by_severity[3];   /* every diagnostic received, stored or not */

    uint64_t kind_count[KILN__KINDS + 1];
    uint32_t opaque;             /* known-kind nodes the parser skipped */

    uint32_t *owner;             /* per node: model or animation record of Model/Animation nodes */
    kiln__insp_model *models;   size_t model_count, model_cap;
    kiln__insp_part  *parts;    size_t part_count, part_cap;
    kiln__insp_slot  *slots;    size_t slot_count, slot_cap;
    kiln__insp_anim  *anims;    size_t anim_count, anim_cap;
    kiln__insp_track *tracks;   size_t track_count, track_cap;
    const char      **instances; size_t instance_count, instance_cap;
    uint32_t          instances_dropped;
    uint32_t          loose_model, loose_anim;
    int               oom;
} kiln__inspect;

/* ---- diagnostics ---------------------------------------------------------------------------- */

static void kiln__insp_sink(void *user, const kiln_diag *d)
{
    kiln__inspect *s = user;
    s->by_severity[d->severity <= KILN_SEVERITY_ERROR ? d->severity : KILN_SEVERITY_ERROR]++;
    if (s->diag_count >= KILN__INSPECT_MAX_DIAGS) return;
    if (!kiln__cli_reserve((void **)&s->diags, &s->diag_cap, s->diag_count + 1, sizeof *s->diags)) {
        s->oom = 1;
        return;
    }
    s->diags[s->diag_count++] = *d;
}

/* An accessor that fails drops its node, which must show as an ERROR even if the accessor
 * said nothing (a contract the accessors keep, checked here rather than assumed). */
static int kiln__insp_check(kiln__inspect *s, kiln_result r, uint32_t node, uint64_t errors_before)
{
    if (r == KILN_OK) return 1;
    if (s->by_severity[KILN_SEVERITY_ERROR] == errors_before) {
        kiln_diag d;
        memset(&d, 0, sizeof d);
        d.code = r;
        d.severity = KILN_SEVERITY_ERROR;
        d.offset = kiln_cast_node_at(s->doc, node)->offset;
        kiln_cast_node_path(s->doc, node, d.path, sizeof d.path);
        snprintf(d.message, sizeof d.message, "%s: the %s node is dropped", kiln_result_str(r),
                 kiln_cast_id_name(kiln_cast_node_at(s->doc, node)->id));
        kiln__insp_sink(s, &d);
    }
    return 0;
}

/* ---- helpers -------------------------------------------------------------------------------- */

static const char *kiln__insp_node_name(const kiln_cast_doc *doc, uint32_t node)
{
    if (node == NONE) return NULL;
    const kiln_cast_prop *p = kiln_cast_find_prop(doc, node, "n", NULL);
    return p ? kiln_cast_prop_str(p) : NULL;
}

static uint32_t kiln__insp_parent_id(const kiln_cast_doc *doc, const kiln_cast_node *n)
{
    return n->parent == NONE ? 0 : kiln_cast_node_at(doc, n->parent)->id;
}

static size_t kiln__insp_kind_index(uint32_t id)
{
    for (size_t k = 0; k < KILN__KINDS; k++)
        if (kiln__kind_ids[k] == id) return k;
    return KILN__KIND_UNKNOWN;
}

static const char *kiln__insp_kind_name(size_t k)
{
    return k < KILN__KINDS ? kiln_cast_id_name(kiln__kind_ids[k]) : "Unknown";
}

#define KILN__INSP_PUSH(s, arr, count, cap)                                                      \
    (kiln__cli_reserve((void **)&(s)->arr, &(s)->cap, (s)->count + 1, sizeof *(s)->arr)          \
         ? (memset(&(s)->arr[(s)->count], 0, sizeof *(s)->arr), (s)->count++)                    \
         : ((s)->oom = 1, (size_t)-1))

static uint32_t kiln__insp_new_model(kiln__inspect *s, uint32_t node)
{
    size_t i = KILN__INSP_PUSH(s, models, model_count, model_cap);
    if (i == (size_t)-1) return NONE;
    s->models[i].node = node;
    for (int k = 0; k < PART_KINDS; k++) s->models[i].first[k] = s->models[i].last[k] = NONE;
    return (uint32_t)i;
}

static uint32_t kiln__insp_new_anim(kiln__inspect *s, uint32_t node)
{
    size_t i = KILN__INSP_PUSH(s, anims, anim_count, anim_cap);
    if (i == (size_t)-1) return NONE;
    s->anims[i].node = node;
    s->anims[i].first_track = s->anims[i].last_track = NONE;
    return (uint32_t)i;
}

/* The model record owning a part node: its parent Model, else the "unattached" holder. */
static uint32_t kiln__insp_model_of(kiln__inspect *s, const kiln_cast_node *n)
{
    if (kiln__insp_parent_id(s->doc, n) == KILN_CAST_ID_MODEL && s->owner[n->parent] != NONE)
        return s->owner[n->parent];
    if (s->loose_model == NONE) s->loose_model = kiln__insp_new_model(s, NONE);
    return s->loose_model;
}

static uint32_t kiln__insp_anim_of(kiln__inspect *s, const kiln_cast_node *n)
{
    if (kiln__insp_parent_id(s->doc, n) == KILN_CAST_ID_ANIMATION && s->owner[n->parent] != NONE)
        return s->owner[n->parent];
    if (s->loose_anim == NONE) s->loose_anim = kiln__insp_new_anim(s, NONE);
    return s->loose_anim;
}

/* Appends a part record of `kind` for `node` to its model's chain. */
static kiln__insp_part *kiln__insp_new_part(kiln__inspect *s, uint32_t node, int kind)
{
    uint32_t model = kiln__insp_model_of(s, kiln_cast_node_at(s->doc, node));
    if (model == NONE) return NULL;
    size_t i = KILN__INSP_PUSH(s, parts, part_count, part_cap);
    if (i == (size_t)-1) return NULL;
    kiln__insp_part *p = &s->parts[i];
    p->node = node;
    p->kind = (uint32_t)kind;
    p->next = NONE;
    kiln__insp_model *m = &s->models[model];
    if (m->last[kind] == NONE) m->first[kind] = (uint32_t)i;
    else s->parts[m->last[kind]].next = (uint32_t)i;
    m->last[kind] = (uint32_t)i;
    return p;
}

/* Widens the animation's frame range by the first `count` entries of a key frame array. Reads
 * in chunks through the bulk reader: curves are the only per-key work inspect does. */
static void kiln__insp_frames(kiln__insp_anim *a, const kiln_cast_array *kb, uint32_t count)
{
    uint32_t buf[1024];
    if (count > kb->count) count = kb->count;
    for (uint32_t i0 = 0; i0 < count; i0 += 1024) {
        uint32_t n = count - i0 < 1024 ? count - i0 : 1024;
        kiln_cast_array_read_u32(kb, i0, n, buf);
        for (uint32_t i = 0; i < n; i++) {
            if (!a->has_keys) {
                a->min_frame = a->max_frame = buf[i];
                a->has_keys = 1;
            }
            if (buf[i] < a->min_frame) a->min_frame = buf[i];
            if (buf[i] > a->max_frame) a->max_frame = buf[i];
        }
    }
}

/* ---- the walk: one accessor call per node ---------------------------------------------------- */

static void kiln__insp_mesh(kiln__inspect *s, uint32_t node)
{
    kiln_cast_mesh m;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_mesh(s->doc, node, &m, &s->sink);
    kiln__insp_part *p = kiln__insp_new_part(s, node, PART_MESH);
    if (!p) return;
    p->ok = (uint32_t)kiln__insp_check(s, r, node, before);
    kiln__insp_mesh_rec *o = &p->u.mesh;
    o->name = p->ok ? m.name : kiln__insp_node_name(s->doc, node);
    if (!p->ok) return;
    o->vertices = m.vertex_count;
    o->faces = m.face_count;
    o->uv_layers = m.uv_layer_count;
    o->color_layers = m.color_layer_count;
    for (uint32_t k = 0; k < KILN_CAST_MAX_LAYERS; k++) {
        o->uv_present[k] = m.uv[k].count > 0;
        o->color_type[k] = m.color[k].count == 0 ? COLOR_MISSING
                           : m.color[k].type == KILN_CAST_TYPE_INT ? COLOR_PACKED : COLOR_FLOAT;
    }
    o->normals = m.normals.count > 0;
    o->tangents = m.tangents.count > 0;
    o->max_influence = m.max_influence;
    o->dual_quat = m.skinning == KILN_CAST_SKIN_DUAL_QUAT;
    o->material_hash = m.material_hash;
    o->material = m.material;
    o->bad_index_faces = m.bad_index_face_count;
    o->degenerate_faces = m.degenerate_face_count;
}

static void kiln__insp_hair(kiln__inspect *s, uint32_t node)
{
    kiln_cast_hair h;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_hair(s->doc, node, &h, &s->sink);
    kiln__insp_part *p = kiln__insp_new_part(s, node, PART_HAIR);
    if (!p) return;
    p->ok = (uint32_t)kiln__insp_check(s, r, node, before);
    p->u.hair.name = p->ok ? h.name : kiln__insp_node_name(s->doc, node);
    p->u.hair.strands = h.strand_count;
    p->u.hair.particles = h.particle_count;
    p->u.hair.material = p->ok ? h.material : NONE;
    p->u.hair.material_hash = h.material_hash;
}

static void kiln__insp_blend(kiln__inspect *s, uint32_t node)
{
    kiln_cast_blend_shape b;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_blend_shape(s->doc, node, &b, &s->sink);
    kiln__insp_part *p = kiln__insp_new_part(s, node, PART_BLEND);
    if (!p) return;
    p->ok = (uint32_t)kiln__insp_check(s, r, node, before);
    p->u.blend.name = p->ok ? b.name : kiln__insp_node_name(s->doc, node);
    p->u.blend.base_mesh = p->ok ? b.base_mesh : NONE;
    p->u.blend.pairs = b.pair_count;
    p->u.blend.target_scale = b.target_scale;
}

static void kiln__insp_skeleton(kiln__inspect *s, uint32_t node)
{
    kiln_cast_skeleton k;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_skeleton(s->doc, node, &k, &s->sink);
    int ok = kiln__insp_check(s, r, node, before);
    const kiln_cast_node *n = kiln_cast_node_at(s->doc, node);
    /* A Skeleton may also sit under an Animation (importers ignore it): count it there. */
    if (kiln__insp_parent_id(s->doc, n) == KILN_CAST_ID_ANIMATION) {
        uint32_t a = kiln__insp_anim_of(s, n);
        if (a != NONE) s->anims[a].skeletons++;
        return;
    }
    kiln__insp_part *p = kiln__insp_new_part(s, node, PART_SKELETON);
    if (!p) return;
    p->ok = (uint32_t)ok;
    p->u.skeleton = k;
    if (!ok) {
        /* The counts still describe the node; only the bone hierarchy was rejected. */
        p->u.skeleton.bone_count = kiln_cast_child_count(s->doc, node, KILN_CAST_ID_BONE);
        p->u.skeleton.ik_count = kiln_cast_child_count(s->doc, node, KILN_CAST_ID_IKHANDLE);
        p->u.skeleton.constraint_count = kiln_cast_child_count(s->doc, node, KILN_CAST_ID_CONSTRAINT);
    }
}

static void kiln__insp_material(kiln__inspect *s, uint32_t node)
{
    kiln_cast_material m;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_material(s->doc, node, &m, &s->sink);
    kiln__insp_part *p = kiln__insp_new_part(s, node, PART_MATERIAL);
    if (!p) return;
    p->ok = (uint32_t)kiln__insp_check(s, r, node, before);
    kiln__insp_material_rec *o = &p->u.material;
    o->name = p->ok ? m.name : kiln__insp_node_name(s->doc, node);
    o->type = m.type;
    o->first_slot = (uint32_t)s->slot_count;
    if (!p->ok) return;
    for (uint32_t k = 0; k < m.slot_count; k++) {
        kiln_cast_material_slot slot;
        if (kiln_cast_get_material_slot(s->doc, node, k, &slot, &s->sink) != KILN_OK) continue;
        size_t i = KILN__INSP_PUSH(s, slots, slot_count, slot_cap);
        if (i == (size_t)-1) return;
        kiln__insp_slot *o_slot = &s->slots[i];
        o_slot->name = slot.name;
        o_slot->name_len = slot.name_len;
        o_slot->hash = slot.hash;
        o_slot->node = slot.node;
        o_slot->id = slot.node == NONE ? 0 : slot.id;
        /* Secondary reads: these nodes get their own accessor call (with the sink) when the
         * walk reaches them, so reports here would be duplicates. */
        if (o_slot->id == KILN_CAST_ID_FILE) {
            kiln_cast_file f;
            if (kiln_cast_get_file(s->doc, slot.node, &f, NULL) == KILN_OK) o_slot->path = f.path;
        } else if (o_slot->id == KILN_CAST_ID_COLOR) {
            kiln_cast_color c;
            if (kiln_cast_get_color(s->doc, slot.node, &c, NULL) == KILN_OK) {
                memcpy(o_slot->rgba, c.rgba, sizeof o_slot->rgba);
                o_slot->linear = c.color_space == KILN_CAST_COLOR_LINEAR;
            } else {
                o_slot->id = 0;
            }
        }
        o->slot_count++;
    }
}

static void kiln__insp_animation(kiln__inspect *s, uint32_t node)
{
    kiln_cast_animation a;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_animation(s->doc, node, &a, &s->sink);
    uint32_t i = kiln__insp_new_anim(s, node);
    if (i == NONE) return;
    s->owner[node] = i;
    s->anims[i].ok = (uint32_t)kiln__insp_check(s, r, node, before);
    s->anims[i].a = a;
    if (!s->anims[i].ok) s->anims[i].a.name = kiln__insp_node_name(s->doc, node);
}

static void kiln__insp_curve(kiln__inspect *s, uint32_t node)
{
    kiln_cast_curve c;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_curve(s->doc, node, &c, &s->sink);
    uint32_t i = kiln__insp_anim_of(s, kiln_cast_node_at(s->doc, node));
    int ok = kiln__insp_check(s, r, node, before);
    if (i == NONE) return;
    kiln__insp_anim *a = &s->anims[i];
    a->curves++;
    if (!ok) {
        a->curves_dropped++;
        return;
    }
    if ((unsigned)c.property < KILN_CAST_CURVE_PROP_COUNT_) a->by_prop[c.property]++;
    if ((unsigned)c.mode < 3) a->by_mode[c.mode]++;
    kiln__insp_frames(a, &c.key_frames, c.key_count);
}

static void kiln__insp_override(kiln__inspect *s, uint32_t node)
{
    kiln_cast_mode_override o;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_mode_override(s->doc, node, &o, &s->sink);
    uint32_t i = kiln__insp_anim_of(s, kiln_cast_node_at(s->doc, node));
    if (kiln__insp_check(s, r, node, before) && i != NONE) s->anims[i].overrides++;
}

static void kiln__insp_notification(kiln__inspect *s, uint32_t node)
{
    kiln_cast_notification t;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_notification(s->doc, node, &t, &s->sink);
    uint32_t i = kiln__insp_anim_of(s, kiln_cast_node_at(s->doc, node));
    if (!kiln__insp_check(s, r, node, before) || i == NONE) return;
    size_t k = KILN__INSP_PUSH(s, tracks, track_count, track_cap);
    if (k == (size_t)-1) return;
    s->tracks[k].name = t.name;
    s->tracks[k].keys = t.key_frames.count;
    s->tracks[k].next = NONE;
    kiln__insp_anim *a = &s->anims[i];
    if (a->last_track == NONE) a->first_track = (uint32_t)k;
    else s->tracks[a->last_track].next = (uint32_t)k;
    a->last_track = (uint32_t)k;
    kiln__insp_frames(a, &t.key_frames, t.key_frames.count);
}

static void kiln__insp_instance(kiln__inspect *s, uint32_t node)
{
    kiln_cast_instance inst;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_instance(s->doc, node, &inst, &s->sink);
    if (!kiln__insp_check(s, r, node, before)) {
        s->instances_dropped++;
        return;
    }
    size_t k = KILN__INSP_PUSH(s, instances, instance_count, instance_cap);
    if (k != (size_t)-1) s->instances[k] = inst.path ? inst.path : "";
}

/* Nodes whose accessor only validates (their content is summarised by their owner). */
static void kiln__insp_validate(kiln__inspect *s, uint32_t node, uint32_t id)
{
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = KILN_OK;
    switch (id) {
    case KILN_CAST_ID_BONE: { kiln_cast_bone b; r = kiln_cast_get_bone(s->doc, node, &b, &s->sink); break; }
    case KILN_CAST_ID_IKHANDLE: { kiln_cast_ik_handle h; r = kiln_cast_get_ik_handle(s->doc, node, &h, &s->sink); break; }
    case KILN_CAST_ID_CONSTRAINT: { kiln_cast_constraint c; r = kiln_cast_get_constraint(s->doc, node, &c, &s->sink); break; }
    case KILN_CAST_ID_FILE: { kiln_cast_file f; r = kiln_cast_get_file(s->doc, node, &f, &s->sink); break; }
    case KILN_CAST_ID_COLOR: { kiln_cast_color c; r = kiln_cast_get_color(s->doc, node, &c, &s->sink); break; }
    case KILN_CAST_ID_METADATA: { kiln_cast_metadata m; r = kiln_cast_get_metadata(s->doc, node, &m, &s->sink); break; }
    default: break;
    }
    kiln__insp_check(s, r, node, before);
}

static void kiln__insp_walk(kiln__inspect *s)
{
    uint32_t count = kiln_cast_node_count(s->doc);
    for (uint32_t i = 0; i < count && !s->oom; i++) {
        const kiln_cast_node *n = kiln_cast_node_at(s->doc, i);
        s->kind_count[kiln__insp_kind_index(n->id)]++;
        if (n->flags & KILN_CAST_NODE_OPAQUE) {
            /* Unknown ids and skipped nodes were reported by the parser; nothing to read. */
            if (n->flags & KILN_CAST_NODE_KNOWN) s->opaque++;
            continue;
        }
        switch (n->id) {
        case KILN_CAST_ID_MODEL: {
            kiln_cast_model m;
            uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
            kiln_result r = kiln_cast_get_model(s->doc, i, &m, &s->sink);
            uint32_t k = kiln__insp_new_model(s, i);
            if (k == NONE) break;
            s->owner[i] = k;
            s->models[k].ok = (uint32_t)kiln__insp_check(s, r, i, before);
            s->models[k].m = m;
            if (!s->models[k].ok) s->models[k].m.name = kiln__insp_node_name(s->doc, i);
            break;
        }
        case KILN_CAST_ID_MESH: kiln__insp_mesh(s, i); break;
        case KILN_CAST_ID_HAIR: kiln__insp_hair(s, i); break;
        case KILN_CAST_ID_BLENDSHAPE: kiln__insp_blend(s, i); break;
        case KILN_CAST_ID_SKELETON: kiln__insp_skeleton(s, i); break;
        case KILN_CAST_ID_MATERIAL: kiln__insp_material(s, i); break;
        case KILN_CAST_ID_ANIMATION: kiln__insp_animation(s, i); break;
        case KILN_CAST_ID_CURVE: kiln__insp_curve(s, i); break;
        case KILN_CAST_ID_CURVE_MODE_OVERRIDE: kiln__insp_override(s, i); break;
        case KILN_CAST_ID_NOTIFICATION_TRACK: kiln__insp_notification(s, i); break;
        case KILN_CAST_ID_INSTANCE: kiln__insp_instance(s, i); break;
        case KILN_CAST_ID_ROOT: break;
        default: kiln__insp_validate(s, i, n->id); break;
        }
    }
}

/* ---- shared output helpers ------------------------------------------------------------------ */

static int kiln__insp_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int kiln__insp_default_transform(const kiln_cast_model *m)
{
    return m->position[0] == 0 && m->position[1] == 0 && m->position[2] == 0 && m->rotation[0] == 0 &&
           m->rotation[1] == 0 && m->rotation[2] == 0 && m->rotation[3] == 1 && m->scale[0] == 1 &&
           m->scale[1] == 1 && m->scale[2] == 1;
}

static const char *kiln__insp_up_name(kiln_cast_up_axis up)
{
    switch (up) {
    case KILN_CAST_UP_X: return "x";
    case KILN_CAST_UP_Y: return "y";
    case KILN_CAST_UP_Z: return "z";
    default: return NULL;
    }
}

static const char *const kiln__insp_mode_names[3] = {"absolute", "relative", "additive"};

/* The playback range of reference D.1: [min kb, max kb] over curves and notification tracks,
 * [0, 1] without keys; duration = max frame / fps (the clip starts at frame 0). */
static void kiln__insp_range(const kiln__insp_anim *a, uint32_t *lo, uint32_t *hi, double *duration_s)
{
    *lo = a->has_keys ? a->min_frame : 0;
    *hi = a->has_keys ? a->max_frame : 1;
    *duration_s = a->a.framerate > 0 ? *hi / (double)a->a.framerate : 0.0;
}

/* ---- text output ----------------------------------------------------------------------------- */

static void kiln__txt_name(const char *name)
{
    if (!name) {
        fputs("(unnamed)", stdout);
        return;
    }
    fputc('\'', stdout);
    kiln__cli_put_text(stdout, name, "");
    fputc('\'', stdout);
}

static void kiln__txt_vec(const float *v, int n)
{
    fputc('(', stdout);
    for (int i = 0; i < n; i++) printf("%s%g", i ? ", " : "", (double)v[i]);
    fputc(')', stdout);
}

static void kiln__txt_path(const kiln_cast_doc *doc, uint32_t node)
{
    char path[192];
    if (node == NONE) return;
    fputs(" [", stdout);
    kiln__cli_put_text(stdout, kiln_cast_node_path(doc, node, path, sizeof path), "");
    fputc(']', stdout);
}

static void kiln__txt_material_ref(const kiln__inspect *s, uint64_t hash, uint32_t node)
{
    if (!hash) return;
    fputs(", material ", stdout);
    if (node == NONE) printf("unresolved (hash 0x%llx)", (unsigned long long)hash);
    else kiln__txt_name(kiln__insp_node_name(s->doc, node));
}

static void kiln__txt_mesh(const kiln__inspect *s, const kiln__insp_part *p)
{
    const kiln__insp_mesh_rec *m = &p->u.mesh;
    fputs("  mesh ", stdout);
    kiln__txt_name(m->name);
    if (!p->ok) {
        fputs(": dropped (see diagnostics)\n", stdout);
        return;
    }
    printf(": %u vertices, %u face%s\n", m->vertices, m->faces, m->faces == 1 ? "" : "s");
    printf("    attributes: normals %s, tangents %s, %u UV layer%s", m->normals ? "yes" : "no",
           m->tangents ? "yes" : "no", m->uv_layers, m->uv_layers == 1 ? "" : "s");
    printf(", %u color layer%s", m->color_layers, m->color_layers == 1 ? "" : "s");
    if (m->color_layers) {
        fputs(" (", stdout);
        for (uint32_t k = 0; k < m->color_layers && k < KILN_CAST_MAX_LAYERS; k++) {
            static const char *const types[] = {"dropped", "packed", "float"};
            printf("%s%s", k ? ", " : "", types[m->color_type[k]]);
        }
        fputc(')', stdout);
    }
    fputc('\n', stdout);
    if (m->max_influence) printf("    skin: max influence %u, %s\n", m->max_influence, m->dual_quat ? "quaternion" : "linear");
    else fputs("    skin: none\n", stdout);
    if (m->material_hash) {
        fputs("    material: ", stdout);
        if (m->material == NONE) printf("unresolved (hash 0x%llx)", (unsigned long long)m->material_hash);
        else kiln__txt_name(kiln__insp_node_name(s->doc, m->material));
        fputc('\n', stdout);
    }
    if (m->bad_index_faces || m->degenerate_faces)
        printf("    faces dropped: %u with a bad index, %u degenerate\n", m->bad_index_faces, m->degenerate_faces);
}

static void kiln__txt_material(const kiln__inspect *s, const kiln__insp_part *p)
{
    const kiln__insp_material_rec *m = &p->u.material;
    fputs("  material ", stdout);
    kiln__txt_name(m->name);
    if (!p->ok) {
        fputs(": dropped (see diagnostics)\n", stdout);
        return;
    }
    fputs(" (type ", stdout);
    kiln__cli_put_text(stdout, m->type, "none");
    printf("), %u slot%s\n", m->slot_count, m->slot_count == 1 ? "" : "s");
    for (uint32_t k = 0; k < m->slot_count; k++) {
        const kiln__insp_slot *sl = &s->slots[m->first_slot + k];
        char name[64];
        size_t len = sl->name_len < sizeof name - 1 ? sl->name_len : sizeof name - 1;
        memcpy(name, sl->name, len);
        name[len] = 0;
        fputs("    ", stdout);
        kiln__cli_put_text(stdout, name, "");
        for (size_t pad = len; pad < 12; pad++) fputc(' ', stdout);
        if (sl->id == KILN_CAST_ID_FILE) {
            fputs(" file ", stdout);
            kiln__txt_name(sl->path);
        } else if (sl->id == KILN_CAST_ID_COLOR) {
            fputs(" color ", stdout);
            kiln__txt_vec(sl->rgba, 4);
            fputs(sl->linear ? " linear" : " srgb", stdout);
        } else {
            printf(" unresolved (hash 0x%llx)", (unsigned long long)sl->hash);
        }
        fputc('\n', stdout);
    }
}

static void kiln__txt_model(const kiln__inspect *s, const kiln__insp_model *mo)
{
    if (mo->node == NONE) {
        fputs("nodes outside any Model\n", stdout);
    } else {
        fputs("model ", stdout);
        kiln__txt_name(mo->m.name);
        kiln__txt_path(s->doc, mo->node);
        fputs(mo->ok ? "\n" : ": dropped (see diagnostics)\n", stdout);
        if (mo->ok && !kiln__insp_default_transform(&mo->m)) {
            fputs("  transform: position ", stdout);
            kiln__txt_vec(mo->m.position, 3);
            fputs(", rotation xyzw ", stdout);
            kiln__txt_vec(mo->m.rotation, 4);
            fputs(", scale ", stdout);
            kiln__txt_vec(mo->m.scale, 3);
            fputc('\n', stdout);
        }
    }
    for (uint32_t i = mo->first[PART_SKELETON]; i != NONE; i = s->parts[i].next) {
        const kiln_cast_skeleton *k = &s->parts[i].u.skeleton;
        printf("  skeleton: %u bone%s", k->bone_count, k->bone_count == 1 ? "" : "s");
        if (s->parts[i].ok) printf(", depth %u, %u root%s", k->depth, k->root_count, k->root_count == 1 ? "" : "s");
        else fputs(" (hierarchy rejected, see diagnostics)", stdout);
        printf(", %u IK handle%s, %u constraint%s\n", k->ik_count, k->ik_count == 1 ? "" : "s",
               k->constraint_count, k->constraint_count == 1 ? "" : "s");
    }
    for (uint32_t i = mo->first[PART_MESH]; i != NONE; i = s->parts[i].next) kiln__txt_mesh(s, &s->parts[i]);
    for (uint32_t i = mo->first[PART_HAIR]; i != NONE; i = s->parts[i].next) {
        const kiln__insp_part *p = &s->parts[i];
        fputs("  hair ", stdout);
        kiln__txt_name(p->u.hair.name);
        if (!p->ok) {
            fputs(": dropped (see diagnostics)\n", stdout);
            continue;
        }
        printf(": %u strand%s, %u particles", p->u.hair.strands, p->u.hair.strands == 1 ? "" : "s", p->u.hair.particles);
        kiln__txt_material_ref(s, p->u.hair.material_hash, p->u.hair.material);
        fputc('\n', stdout);
    }
    for (uint32_t i = mo->first[PART_BLEND]; i != NONE; i = s->parts[i].next) {
        const kiln__insp_part *p = &s->parts[i];
        fputs("  blend shape ", stdout);
        kiln__txt_name(p->u.blend.name);
        if (!p->ok) {
            fputs(": dropped (see diagnostics)\n", stdout);
            continue;
        }
        fputs(": base mesh ", stdout);
        kiln__txt_name(kiln__insp_node_name(s->doc, p->u.blend.base_mesh));
        printf(", %u pair%s, target scale %g\n", p->u.blend.pairs, p->u.blend.pairs == 1 ? "" : "s",
               (double)p->u.blend.target_scale);
    }
    for (uint32_t i = mo->first[PART_MATERIAL]; i != NONE; i = s->parts[i].next) kiln__txt_material(s, &s->parts[i]);
}

static void kiln__txt_anim(const kiln__inspect *s, const kiln__insp_anim *a)
{
    if (a->node == NONE) {
        fputs("tracks outside any Animation\n", stdout);
    } else {
        fputs("animation ", stdout);
        kiln__txt_name(a->a.name);
        kiln__txt_path(s->doc, a->node);
        if (!a->ok) {
            fputs(": dropped (see diagnostics)\n", stdout);
        } else {
            uint32_t lo, hi;
            double duration;
            kiln__insp_range(a, &lo, &hi, &duration);
            printf(": %g fps, %s, frames [%u, %u]%s, duration %g s\n", (double)a->a.framerate,
                   a->a.looping ? "looping" : "not looping", lo, hi, a->has_keys ? "" : " (no keys)", duration);
        }
    }
    printf("  curves: %u", a->curves);
    if (a->curves_dropped) printf(" (%u dropped)", a->curves_dropped);
    const char *sep = "; by property: ";
    for (int k = 0; k < KILN_CAST_CURVE_PROP_COUNT_; k++) {
        if (!a->by_prop[k]) continue;
        printf("%s%s %u", sep, kiln_cast_curve_prop_name((kiln_cast_curve_prop)k), a->by_prop[k]);
        sep = ", ";
    }
    sep = "; by mode: ";
    for (int k = 0; k < 3; k++) {
        if (!a->by_mode[k]) continue;
        printf("%s%s %u", sep, kiln__insp_mode_names[k], a->by_mode[k]);
        sep = ", ";
    }
    printf("\n  mode overrides: %u\n", a->overrides);
    if (a->skeletons) printf("  skeletons: %u (ignored by importers)\n", a->skeletons);
    for (uint32_t t = a->first_track; t != NONE; t = s->tracks[t].next) {
        fputs("  notification track ", stdout);
        kiln__txt_name(s->tracks[t].name);
        printf(": %u key%s\n", s->tracks[t].keys, s->tracks[t].keys == 1 ? "" : "s");
    }
}

static void kiln__txt_instances(const kiln__inspect *s)
{
    if (!s->instance_count && !s->instances_dropped) return;
    printf("instances: %zu", s->instance_count);
    if (s->instances_dropped) printf(" (%u more dropped)", s->instances_dropped);
    fputc('\n', stdout);
    for (size_t i = 0; i < s->instance_count;) {
        size_t j = i + 1;
        while (j < s->instance_count && strcmp(s->instances[j], s->instances[i]) == 0) j++;
        printf("  %6zu  ", j - i);
        kiln__txt_name(s->instances[i]);
        fputc('\n', stdout);
        i = j;
    }
}

static void kiln__txt_meta_field(const char **sep, const char *label, const char *value, int quoted)
{
    if (!value) return;
    printf("%s%s ", *sep, label);
    if (quoted) kiln__txt_name(value);
    else kiln__cli_put_text(stdout, value, "");
    *sep = ", ";
}

static void kiln__txt_metadata(const kiln__inspect *s)
{
    uint32_t node = kiln_cast_find_metadata(s->doc);
    kiln_cast_metadata m;
    if (node == NONE || kiln_cast_get_metadata(s->doc, node, &m, NULL) != KILN_OK) return;
    const char *sep = " ";
    fputs("metadata:", stdout);
    kiln__txt_meta_field(&sep, "author", m.author, 1);
    kiln__txt_meta_field(&sep, "software", m.software, 1);
    kiln__txt_meta_field(&sep, "up", kiln__insp_up_name(m.up_axis), 0);
    kiln__txt_meta_field(&sep, "scene root", m.scene_root, 1);
    if (sep[0] == ' ') fputs(" (empty)", stdout);
    fputc('\n', stdout);
}

static void kiln__txt_print(const kiln__inspect *s)
{
    kiln__cli_put_text(stdout, s->path, "");
    printf(": %zu bytes, Cast version %u, %u root%s\n", s->file_size, kiln_cast_version(s->doc),
           kiln_cast_root_count(s->doc), kiln_cast_root_count(s->doc) == 1 ? "" : "s");
    uint64_t total = 0;
    fputs("nodes:", stdout);
    const char *sep = " ";
    for (size_t k = 0; k <= KILN__KINDS; k++) {
        if (!s->kind_count[k]) continue;
        printf("%s%s %llu", sep, kiln__insp_kind_name(k), (unsigned long long)s->kind_count[k]);
        sep = ", ";
        total += s->kind_count[k];
    }
    printf(" (%llu total", (unsigned long long)total);
    if (s->opaque) printf(", %u skipped", s->opaque);
    fputs(")\n", stdout);
    kiln__txt_metadata(s);
    /* The unattached holders are created when first needed; they are listed last. */
    for (size_t i = 0; i < s->model_count; i++)
        if (i != s->loose_model) kiln__txt_model(s, &s->models[i]);
    if (s->loose_model != NONE) kiln__txt_model(s, &s->models[s->loose_model]);
    for (size_t i = 0; i < s->anim_count; i++)
        if (i != s->loose_anim) kiln__txt_anim(s, &s->anims[i]);
    if (s->loose_anim != NONE) kiln__txt_anim(s, &s->anims[s->loose_anim]);
    kiln__txt_instances(s);
    printf("diagnostics: %llu error%s, %llu warning%s\n", (unsigned long long)s->by_severity[KILN_SEVERITY_ERROR],
           s->by_severity[KILN_SEVERITY_ERROR] == 1 ? "" : "s",
           (unsigned long long)s->by_severity[KILN_SEVERITY_WARNING],
           s->by_severity[KILN_SEVERITY_WARNING] == 1 ? "" : "s");
}

/* ---- JSON output (schema: docs/inspect-json.md) ----------------------------------------------- */

static void kiln__js_node(kiln__json *j, const kiln_cast_doc *doc, uint32_t node)
{
    char path[192];
    kiln__json_key(j, "node");
    if (node == NONE) kiln__json_null(j);
    else kiln__json_string(j, kiln_cast_node_path(doc, node, path, sizeof path));
}

/* Hashes are u64 and often above 2^53, which many JSON readers cannot hold in a number. */
static void kiln__js_hash(kiln__json *j, const char *key, uint64_t hash)
{
    char hex[24];
    snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)hash);
    kiln__json_key_string(j, key, hex);
}

static void kiln__js_material_ref(kiln__json *j, const kiln__inspect *s, uint64_t hash, uint32_t node)
{
    kiln__json_key(j, "material");
    if (!hash) {
        kiln__json_null(j);
        return;
    }
    kiln__json_begin_object_inline(j);
    kiln__js_hash(j, "hash", hash);
    kiln__json_key_bool(j, "resolved", node != NONE);
    kiln__json_key_string(j, "name", kiln__insp_node_name(s->doc, node));
    kiln__json_end_object(j);
}

static void kiln__js_part_head(kiln__json *j, const kiln__inspect *s, const kiln__insp_part *p, const char *name)
{
    kiln__json_begin_object(j);
    kiln__js_node(j, s->doc, p->node);
    kiln__json_key_string(j, "name", name);
    kiln__json_key_bool(j, "ok", (int)p->ok);
}

static void kiln__js_mesh(kiln__json *j, const kiln__inspect *s, const kiln__insp_part *p)
{
    const kiln__insp_mesh_rec *m = &p->u.mesh;
    kiln__js_part_head(j, s, p, m->name);
    if (p->ok) {
        kiln__json_key_u64(j, "vertices", m->vertices);
        kiln__json_key_u64(j, "faces", m->faces);
        kiln__json_key_bool(j, "normals", m->normals);
        kiln__json_key_bool(j, "tangents", m->tangents);
        kiln__json_key_u64(j, "uv_layers", m->uv_layers);
        kiln__json_key(j, "color_layers");
        kiln__json_begin_array_inline(j);
        for (uint32_t k = 0; k < m->color_layers && k < KILN_CAST_MAX_LAYERS; k++) {
            static const char *const types[] = {"dropped", "packed", "float"};
            kiln__json_string(j, types[m->color_type[k]]);
        }
        kiln__json_end_array(j);
        kiln__json_key_u64(j, "max_influence", m->max_influence);
        kiln__json_key_string(j, "skinning", m->max_influence ? (m->dual_quat ? "quaternion" : "linear") : NULL);
        kiln__js_material_ref(j, s, m->material_hash, m->material);
        kiln__json_key_u64(j, "bad_index_faces", m->bad_index_faces);
        kiln__json_key_u64(j, "degenerate_faces", m->degenerate_faces);
    }
    kiln__json_end_object(j);
}

static void kiln__js_material(kiln__json *j, const kiln__inspect *s, const kiln__insp_part *p)
{
    const kiln__insp_material_rec *m = &p->u.material;
    kiln__js_part_head(j, s, p, m->name);
    if (p->ok) {
        kiln__json_key_string(j, "type", m->type);
        kiln__json_key(j, "slots");
        kiln__json_begin_array(j);
        for (uint32_t k = 0; k < m->slot_count; k++) {
            const kiln__insp_slot *sl = &s->slots[m->first_slot + k];
            kiln__json_begin_object_inline(j);
            kiln__json_key(j, "name");
            kiln__json_string_n(j, sl->name, sl->name_len);
            if (sl->id == KILN_CAST_ID_FILE) {
                kiln__json_key_string(j, "kind", "file");
                kiln__json_key_string(j, "path", sl->path);
            } else if (sl->id == KILN_CAST_ID_COLOR) {
                kiln__json_key_string(j, "kind", "color");
                kiln__json_key(j, "rgba");
                kiln__json_f32_array(j, sl->rgba, 4);
                kiln__json_key_string(j, "color_space", sl->linear ? "linear" : "srgb");
            } else {
                kiln__json_key_string(j, "kind", "unresolved");
                kiln__js_hash(j, "hash", sl->hash);
            }
            kiln__json_end_object(j);
        }
        kiln__json_end_array(j);
    }
    kiln__json_end_object(j);
}

/* Opens the object of a model or animation entry: node, name and status. The holder of
 * misplaced nodes (node NONE) has no name and counts as ok. */
static void kiln__js_owner_head(kiln__json *j, const kiln_cast_doc *doc, uint32_t node, const char *name, int ok)
{
    kiln__json_begin_object(j);
    kiln__js_node(j, doc, node);
    kiln__json_key_string(j, "name", node == NONE ? NULL : name);
    kiln__json_key_bool(j, "ok", node == NONE || ok);
    kiln__json_key_bool(j, "unattached", node == NONE);
}

static void kiln__js_model(kiln__json *j, const kiln__inspect *s, const kiln__insp_model *mo)
{
    kiln__js_owner_head(j, s->doc, mo->node, mo->m.name, mo->ok);
    kiln__json_key(j, "transform");
    if (mo->node == NONE || !mo->ok || kiln__insp_default_transform(&mo->m)) {
        kiln__json_null(j);
    } else {
        kiln__json_begin_object(j);
        kiln__json_key(j, "position");
        kiln__json_f32_array(j, mo->m.position, 3);
        kiln__json_key(j, "rotation");
        kiln__json_f32_array(j, mo->m.rotation, 4);
        kiln__json_key(j, "scale");
        kiln__json_f32_array(j, mo->m.scale, 3);
        kiln__json_end_object(j);
    }

    kiln__json_key(j, "skeletons");
    kiln__json_begin_array(j);
    for (uint32_t i = mo->first[PART_SKELETON]; i != NONE; i = s->parts[i].next) {
        const kiln__insp_part *p = &s->parts[i];
        kiln__json_begin_object(j);
        kiln__js_node(j, s->doc, p->node);
        kiln__json_key_bool(j, "ok", (int)p->ok);
        kiln__json_key_u64(j, "bones", p->u.skeleton.bone_count);
        if (p->ok) {
            kiln__json_key_u64(j, "depth", p->u.skeleton.depth);
            kiln__json_key_u64(j, "roots", p->u.skeleton.root_count);
        } else {
            kiln__json_key_null(j, "depth");
            kiln__json_key_null(j, "roots");
        }
        kiln__json_key_u64(j, "ik_handles", p->u.skeleton.ik_count);
        kiln__json_key_u64(j, "constraints", p->u.skeleton.constraint_count);
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);

    kiln__json_key(j, "meshes");
    kiln__json_begin_array(j);
    for (uint32_t i = mo->first[PART_MESH]; i != NONE; i = s->parts[i].next) kiln__js_mesh(j, s, &s->parts[i]);
    kiln__json_end_array(j);

    kiln__json_key(j, "hairs");
    kiln__json_begin_array(j);
    for (uint32_t i = mo->first[PART_HAIR]; i != NONE; i = s->parts[i].next) {
        const kiln__insp_part *p = &s->parts[i];
        kiln__js_part_head(j, s, p, p->u.hair.name);
        if (p->ok) {
            kiln__json_key_u64(j, "strands", p->u.hair.strands);
            kiln__json_key_u64(j, "particles", p->u.hair.particles);
            kiln__js_material_ref(j, s, p->u.hair.material_hash, p->u.hair.material);
        }
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);

    kiln__json_key(j, "blend_shapes");
    kiln__json_begin_array(j);
    for (uint32_t i = mo->first[PART_BLEND]; i != NONE; i = s->parts[i].next) {
        const kiln__insp_part *p = &s->parts[i];
        kiln__js_part_head(j, s, p, p->u.blend.name);
        if (p->ok) {
            kiln__json_key_string(j, "base_mesh", kiln__insp_node_name(s->doc, p->u.blend.base_mesh));
            kiln__json_key_u64(j, "pairs", p->u.blend.pairs);
            kiln__json_key_f64(j, "target_scale", p->u.blend.target_scale);
        }
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);

    kiln__json_key(j, "materials");
    kiln__json_begin_array(j);
    for (uint32_t i = mo->first[PART_MATERIAL]; i != NONE; i = s->parts[i].next) kiln__js_material(j, s, &s->parts[i]);
    kiln__json_end_array(j);
    kiln__json_end_object(j);
}

static void kiln__js_anim(kiln__json *j, const kiln__inspect *s, const kiln__insp_anim *a)
{
    kiln__js_owner_head(j, s->doc, a->node, a->a.name, a->ok);
    if (a->node != NONE && a->ok) {
        uint32_t lo, hi;
        double duration;
        kiln__insp_range(a, &lo, &hi, &duration);
        kiln__json_key_f64(j, "framerate", a->a.framerate);
        kiln__json_key_bool(j, "looping", (int)a->a.looping);
        kiln__json_key(j, "frame_range");
        kiln__json_begin_array_inline(j);
        kiln__json_u64(j, lo);
        kiln__json_u64(j, hi);
        kiln__json_end_array(j);
        kiln__json_key_bool(j, "has_keys", (int)a->has_keys);
        kiln__json_key_f64(j, "duration_s", duration);
    }
    kiln__json_key(j, "curves");
    kiln__json_begin_object(j);
    kiln__json_key_u64(j, "total", a->curves);
    kiln__json_key_u64(j, "dropped", a->curves_dropped);
    kiln__json_key(j, "by_property");
    kiln__json_begin_object_inline(j);
    for (int k = 0; k < KILN_CAST_CURVE_PROP_COUNT_; k++)
        kiln__json_key_u64(j, kiln_cast_curve_prop_name((kiln_cast_curve_prop)k), a->by_prop[k]);
    kiln__json_end_object(j);
    kiln__json_key(j, "by_mode");
    kiln__json_begin_object_inline(j);
    for (int k = 0; k < 3; k++) kiln__json_key_u64(j, kiln__insp_mode_names[k], a->by_mode[k]);
    kiln__json_end_object(j);
    kiln__json_end_object(j);
    kiln__json_key_u64(j, "mode_overrides", a->overrides);
    kiln__json_key_u64(j, "skeletons", a->skeletons);
    kiln__json_key(j, "notification_tracks");
    kiln__json_begin_array(j);
    for (uint32_t t = a->first_track; t != NONE; t = s->tracks[t].next) {
        kiln__json_begin_object_inline(j);
        kiln__json_key_string(j, "name", s->tracks[t].name);
        kiln__json_key_u64(j, "keys", s->tracks[t].keys);
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);
    kiln__json_end_object(j);
}

static void kiln__js_diag(kiln__json *j, const kiln_diag *d)
{
    kiln__json_begin_object_inline(j);
    kiln__json_key_string(j, "severity", kiln__cli_severity_name(d->severity));
    kiln__json_key_string(j, "code", kiln_result_name(d->code));
    kiln__json_key_string(j, "path", d->path);
    kiln__json_key(j, "offset");
    if (d->offset == KILN_NO_OFFSET) kiln__json_null(j);
    else kiln__json_u64(j, d->offset);
    kiln__json_key_string(j, "message", d->message);
    kiln__json_end_object(j);
}

static void kiln__js_file(kiln__json *j, const kiln__inspect *s)
{
    kiln__json_key(j, "file");
    kiln__json_begin_object(j);
    kiln__json_key_string(j, "path", s->path);
    kiln__json_key_u64(j, "bytes", s->file_size);
    if (s->doc) {
        kiln__json_key_u64(j, "version", kiln_cast_version(s->doc));
        kiln__json_key_u64(j, "roots", kiln_cast_root_count(s->doc));
    }
    kiln__json_end_object(j);
}

static void kiln__js_tail(kiln__json *j, const kiln__inspect *s, int status)
{
    kiln__json_key(j, "diagnostics");
    kiln__json_begin_array(j);
    for (size_t i = 0; i < s->diag_count; i++) kiln__js_diag(j, &s->diags[i]);
    kiln__json_end_array(j);
    kiln__json_key(j, "summary");
    kiln__json_begin_object(j);
    kiln__json_key_u64(j, "errors", s->by_severity[KILN_SEVERITY_ERROR]);
    kiln__json_key_u64(j, "warnings", s->by_severity[KILN_SEVERITY_WARNING]);
    kiln__json_key_u64(j, "diagnostics_omitted",
                       s->by_severity[0] + s->by_severity[1] + s->by_severity[2] - s->diag_count);
    kiln__json_key_u64(j, "exit_status", (uint64_t)status);
    kiln__json_end_object(j);
}

static void kiln__js_print(const kiln__inspect *s, int status)
{
    kiln__json j;
    kiln__json_init(&j, stdout, 2);
    kiln__json_begin_object(&j);
    kiln__json_key_u64(&j, "schema", 1);
    kiln__json_key_string(&j, "kind", "cast");
    kiln__js_file(&j, s);

    kiln__json_key(&j, "nodes");
    kiln__json_begin_object(&j);
    for (size_t k = 0; k <= KILN__KINDS; k++)
        if (s->kind_count[k]) kiln__json_key_u64(&j, kiln__insp_kind_name(k), s->kind_count[k]);
    kiln__json_end_object(&j);
    kiln__json_key_u64(&j, "skipped_nodes", s->opaque);

    kiln__json_key(&j, "models");
    kiln__json_begin_array(&j);
    for (size_t i = 0; i < s->model_count; i++)
        if (i != s->loose_model) kiln__js_model(&j, s, &s->models[i]);
    if (s->loose_model != NONE) kiln__js_model(&j, s, &s->models[s->loose_model]);
    kiln__json_end_array(&j);

    kiln__json_key(&j, "animations");
    kiln__json_begin_array(&j);
    for (size_t i = 0; i < s->anim_count; i++)
        if (i != s->loose_anim) kiln__js_anim(&j, s, &s->anims[i]);
    if (s->loose_anim != NONE) kiln__js_anim(&j, s, &s->anims[s->loose_anim]);
    kiln__json_end_array(&j);

    kiln__json_key(&j, "instances");
    kiln__json_begin_object(&j);
    kiln__json_key_u64(&j, "count", s->instance_count);
    kiln__json_key_u64(&j, "dropped", s->instances_dropped);
    kiln__json_key(&j, "by_path");
    kiln__json_begin_array(&j);
    for (size_t i = 0; i < s->instance_count;) {
        size_t e = i + 1;
        while (e < s->instance_count && strcmp(s->instances[e], s->instances[i]) == 0) e++;
        kiln__json_begin_object_inline(&j);
        kiln__json_key_string(&j, "path", s->instances[i]);
        kiln__json_key_u64(&j, "count", e - i);
        kiln__json_end_object(&j);
        i = e;
    }
    kiln__json_end_array(&j);
    kiln__json_end_object(&j);

    kiln__json_key(&j, "metadata");
    uint32_t meta = kiln_cast_find_metadata(s->doc);
    kiln_cast_metadata m;
    if (meta != NONE && kiln_cast_get_metadata(s->doc, meta, &m, NULL) == KILN_OK) {
        kiln__json_begin_object(&j);
        kiln__js_node(&j, s->doc, meta);
        kiln__json_key_string(&j, "author", m.author);
        kiln__json_key_string(&j, "software", m.software);
        kiln__json_key_string(&j, "up", kiln__insp_up_name(m.up_axis));
        kiln__json_key_string(&j, "scene_root", m.scene_root);
        kiln__json_end_object(&j);
    } else {
        kiln__json_null(&j);
    }

    kiln__js_tail(&j, s, status);
    kiln__json_end_object(&j);
    kiln__json_finish(&j);
}

/* ---- the verb -------------------------------------------------------------------------------- */

enum { OPT_JSON, OPT_QUIET, OPT_SOURCE, OPT_HELP };

static const kiln__cli_opt kiln__inspect_opts[] = {
    {"json", 'j', NULL, OPT_JSON, "print one JSON document instead of text (docs/inspect-json.md)"},
    {"quiet", 'q', NULL, OPT_QUIET, "do not print warnings on stderr (errors are always printed)"},
    {"source", 0, NULL, OPT_SOURCE, "show what the importer hands the bake (the source scene), for any format"},
    {"help", 'h', NULL, OPT_HELP, "show this help"},
};

static void kiln__inspect_help(FILE *out)
{
    fputs("Usage: " KILN_CLI_NAME " inspect [options] FILE.cast\n"
          "\n"
          "Reads a Cast file the way the baker does and prints a summary: size, version, root\n"
          "count, node counts by kind; per model its transform, skeleton, meshes (vertices,\n"
          "faces, layers, skin, material, faces the baker will drop), hair, blend shapes and\n"
          "materials; per animation its rate, looping, frame range, curves by property and mode,\n"
          "mode overrides and notification tracks; instances grouped by referenced file; metadata.\n"
          "Diagnostics go to stderr as 'FILE: severity: node-path: message (byte offset N)'.\n"
          "FILE may be '-' for standard input.\n"
          "\n"
          "Options:\n",
          out);
    kiln__cli_print_options(out, kiln__inspect_opts, sizeof kiln__inspect_opts / sizeof kiln__inspect_opts[0]);
    fputs("\n"
          "Exit status:\n"
          "  0  the file reads cleanly (warnings allowed)\n"
          "  1  usage error\n"
          "  2  the file cannot be read or parsed, or reading it drops data (any error\n"
          "     diagnostic: a node rejected, faces with bad indices, a curve cut short, ...)\n"
          "  4  the output could not be written\n",
          out);
}

static void kiln__inspect_print_diags(const kiln__inspect *s)
{
    for (size_t i = 0; i < s->diag_count; i++) {
        if (s->quiet && s->diags[i].severity != KILN_SEVERITY_ERROR) continue;
        kiln__cli_print_diag(stderr, s->path, &s->diags[i]);
    }
    uint64_t total = s->by_severity[0] + s->by_severity[1] + s->by_severity[2];
    if (total > s->diag_count)
        fprintf(stderr, "%s: note: %llu more diagnostics not shown\n", s->path, (unsigned long long)(total - s->diag_count));
}

static void kiln__inspect_free(kiln__inspect *s)
{
    free(s->diags);
    free(s->owner);
    free(s->models);
    free(s->parts);
    free(s->slots);
    free(s->anims);
    free(s->tracks);
    free((void *)s->instances);
}

static int kiln__inspect_file(kiln__inspect *s)
{
    kiln__cli_file file;
    if (!kiln__cli_file_load(s->path, &file)) return KILN_EXIT_INPUT;
    s->file_size = file.size;
    if (kiln__is_blob(file.data, file.size)) { /* a baked blob: inspect_blob.c */
        int status = kiln__inspect_blob(s->path, file.data, file.size, s->json);
        kiln__cli_file_free(&file);
        return status;
    }
    /* Formats other than Cast (found by their bytes), or any with --source: the source scene.
     * Cast keeps its node view; bytes nothing recognises go to the Cast reader, which names
     * what it found. */
    const kiln_importer *imp = kiln_importer_detect(file.data, file.size);
    if (s->source || (imp && strcmp(imp->name, "cast") != 0)) {
        int status = kiln__inspect_source(s->path, file.data, file.size, NULL, s->json, s->quiet);
        kiln__cli_file_free(&file);
        return status;
    }

    kiln_cast_parse_options opt;
    memset(&opt, 0, sizeof opt);
    opt.diag = s->sink;
    kiln_cast_doc *doc = NULL;
    kiln_diag err;
    kiln_result r = kiln_cast_parse(file.data, file.size, &opt, &doc, &err);
    if (r != KILN_OK) {
        /* Structural failure: nothing to summarise. The fault joins the diagnostics so that
         * JSON consumers find it in the same place as every other problem. */
        if (err.code == KILN_OK) err.code = r;
        err.severity = KILN_SEVERITY_ERROR;
        kiln__insp_sink(s, &err);
        if (s->json) {
            kiln__json j;
            kiln__json_init(&j, stdout, 2);
            kiln__json_begin_object(&j);
            kiln__json_key_u64(&j, "schema", 1);
            kiln__json_key_string(&j, "kind", "cast");
            kiln__js_file(&j, s);
            kiln__json_key(&j, "error");
            kiln__js_diag(&j, &err);
            kiln__js_tail(&j, s, KILN_EXIT_INPUT);
            kiln__json_end_object(&j);
            kiln__json_finish(&j);
        }
        kiln__inspect_print_diags(s);
        kiln__cli_file_free(&file);
        return KILN_EXIT_INPUT;
    }

    s->doc = doc;
    uint32_t count = kiln_cast_node_count(doc);
    s->owner = malloc((count ? count : 1) * sizeof *s->owner);
    if (!s->owner) s->oom = 1;
    else for (uint32_t i = 0; i < count; i++) s->owner[i] = NONE;
    s->loose_model = s->loose_anim = NONE;
    if (!s->oom) kiln__insp_walk(s);
    int status = KILN_EXIT_OK;
    if (s->oom) {
        fprintf(stderr, KILN_CLI_NAME ": out of memory while summarising '%s'\n", s->path);
        status = KILN_EXIT_INPUT;
    } else {
        if (s->instance_count > 1) qsort((void *)s->instances, s->instance_count, sizeof *s->instances, kiln__insp_cmp_str);
        if (s->by_severity[KILN_SEVERITY_ERROR]) status = KILN_EXIT_INPUT;
        if (s->json) kiln__js_print(s, status);
        else kiln__txt_print(s);
    }
    kiln__inspect_print_diags(s);
    kiln_cast_free(doc);
    s->doc = NULL;
    kiln__cli_file_free(&file);
    return status;
}

static int kiln__inspect_run(int argc, char **argv)
{
    kiln__inspect s;
    memset(&s, 0, sizeof s);
    kiln__cli_args a;
    kiln__cli_args_init(&a, "inspect", argc, argv, kiln__inspect_opts,
                        sizeof kiln__inspect_opts / sizeof kiln__inspect_opts[0]);
    for (int k; (k = kiln__cli_args_next(&a)) != KILN_CLI_ARGS_END;) {
        if (k == KILN_CLI_ARGS_ERROR) return KILN_EXIT_USAGE;
        if (k == KILN_CLI_ARGS_POSITIONAL) {
            if (s.path) return kiln__cli_usage_error("inspect", "one input file expected, got '%s' and '%s'", s.path, a.value);
            s.path = a.value;
            continue;
        }
        switch (kiln__inspect_opts[k].key) {
        case OPT_JSON: s.json = 1; break;
        case OPT_QUIET: s.quiet = 1; break;
        case OPT_SOURCE: s.source = 1; break;
        case OPT_HELP: kiln__inspect_help(stdout); return KILN_EXIT_OK;
        default: break;
        }
    }
    if (!s.path) return kiln__cli_usage_error("inspect", "missing input file");
    s.sink.fn = kiln__insp_sink;
    s.sink.user = &s;
    int status = kiln__inspect_file(&s);
    kiln__inspect_free(&s);
    return status;
}

const kiln__cli_verb kiln__cli_verb_inspect = {
    "inspect",
    "summarise a Cast file: nodes, models, animations, instances, diagnostics",
    kiln__inspect_run,
    kiln__inspect_help,
};
