/* `kiln inspect`: the walk that reads a Cast document into the summary (inspect_summary.h). */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inspect_summary.h"

#define NONE KILN_CAST_NONE

/* Node kinds in the order they are listed, with MANIFEST.md's names (kiln_cast_id_name). */
static const uint32_t kiln__kind_ids[] = {
    KILN_CAST_ID_ROOT, KILN_CAST_ID_MODEL, KILN_CAST_ID_MESH, KILN_CAST_ID_HAIR, KILN_CAST_ID_BLENDSHAPE,
    KILN_CAST_ID_SKELETON, KILN_CAST_ID_BONE, KILN_CAST_ID_IKHANDLE, KILN_CAST_ID_CONSTRAINT,
    KILN_CAST_ID_ANIMATION, KILN_CAST_ID_CURVE, KILN_CAST_ID_CURVE_MODE_OVERRIDE,
    KILN_CAST_ID_NOTIFICATION_TRACK, KILN_CAST_ID_MATERIAL, KILN_CAST_ID_FILE, KILN_CAST_ID_COLOR,
    KILN_CAST_ID_INSTANCE, KILN_CAST_ID_METADATA,
};
_Static_assert(sizeof kiln__kind_ids / sizeof kiln__kind_ids[0] == KILN__INSP_KINDS, "kind table size");

const char *kiln__insp_kind_name(size_t k)
{
    return k < KILN__INSP_KINDS ? kiln_cast_id_name(kiln__kind_ids[k]) : "Unknown";
}

static size_t kiln__insp_kind_index(uint32_t id)
{
    for (size_t k = 0; k < KILN__INSP_KINDS; k++)
        if (kiln__kind_ids[k] == id) return k;
    return KILN__INSP_KINDS;
}

/* ---- the summary's life ----------------------------------------------------------------------- */

static void kiln__insp_sink(void *user, const kiln_diag *d) { kiln__insp_add_diag(user, d); }

void kiln__insp_init(kiln__insp_summary *s, const char *path, size_t file_size)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    s->file_size = file_size;
    s->meta_node = s->loose_model = s->loose_anim = NONE;
    s->sink.fn = kiln__insp_sink;
    s->sink.user = s;
}

void kiln__insp_free(kiln__insp_summary *s)
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

void kiln__insp_add_diag(kiln__insp_summary *s, const kiln_diag *d)
{
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
static int kiln__insp_check(kiln__insp_summary *s, kiln_result r, uint32_t node, uint64_t errors_before)
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
        kiln__insp_add_diag(s, &d);
    }
    return 0;
}

/* ---- records ---------------------------------------------------------------------------------- */

static const char *kiln__insp_node_name(const kiln_cast_doc *doc, uint32_t node)
{
    if (node == NONE) return NULL;
    const kiln_cast_prop *p = kiln_cast_find_prop(doc, node, "n", NULL);
    return p ? kiln_cast_prop_str(p) : NULL;
}

/* The name a record shows: the accessor's, or for a node the accessor rejected (`ok` 0), the
 * node's own "n" property if it has one. */
static const char *kiln__insp_name(const kiln__insp_summary *s, uint32_t ok, const char *name, uint32_t node)
{
    return ok ? name : kiln__insp_node_name(s->doc, node);
}

static uint32_t kiln__insp_parent_id(const kiln_cast_doc *doc, const kiln_cast_node *n)
{
    return n->parent == NONE ? 0 : kiln_cast_node_at(doc, n->parent)->id;
}

#define KILN__INSP_PUSH(s, arr, count, cap)                                                      \
    (kiln__cli_reserve((void **)&(s)->arr, &(s)->cap, (s)->count + 1, sizeof *(s)->arr)          \
         ? (memset(&(s)->arr[(s)->count], 0, sizeof *(s)->arr), (s)->count++)                    \
         : ((s)->oom = 1, (size_t)-1))

static uint32_t kiln__insp_new_model(kiln__insp_summary *s, uint32_t node)
{
    size_t i = KILN__INSP_PUSH(s, models, model_count, model_cap);
    if (i == (size_t)-1) return NONE;
    s->models[i].node = node;
    if (node != NONE) s->owner[node] = (uint32_t)i;
    for (int k = 0; k < KILN__INSP_PART_KINDS; k++) s->models[i].first[k] = s->models[i].last[k] = NONE;
    return (uint32_t)i;
}

static uint32_t kiln__insp_new_anim(kiln__insp_summary *s, uint32_t node)
{
    size_t i = KILN__INSP_PUSH(s, anims, anim_count, anim_cap);
    if (i == (size_t)-1) return NONE;
    s->anims[i].node = node;
    if (node != NONE) s->owner[node] = (uint32_t)i;
    s->anims[i].first_track = s->anims[i].last_track = NONE;
    return (uint32_t)i;
}

/* The model record owning a part node: its parent Model, else the "unattached" holder. */
static uint32_t kiln__insp_model_of(kiln__insp_summary *s, const kiln_cast_node *n)
{
    if (kiln__insp_parent_id(s->doc, n) == KILN_CAST_ID_MODEL && s->owner[n->parent] != NONE)
        return s->owner[n->parent];
    if (s->loose_model == NONE) s->loose_model = kiln__insp_new_model(s, NONE);
    return s->loose_model;
}

static uint32_t kiln__insp_anim_of(kiln__insp_summary *s, const kiln_cast_node *n)
{
    if (kiln__insp_parent_id(s->doc, n) == KILN_CAST_ID_ANIMATION && s->owner[n->parent] != NONE)
        return s->owner[n->parent];
    if (s->loose_anim == NONE) s->loose_anim = kiln__insp_new_anim(s, NONE);
    return s->loose_anim;
}

/* Appends a part record of `kind` for `node` to its model's chain. */
static kiln__insp_part *kiln__insp_new_part(kiln__insp_summary *s, uint32_t node, int kind)
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

static void kiln__insp_material_ref_of(const kiln__insp_summary *s, kiln__insp_material_ref *ref, uint64_t hash,
                                       uint32_t node)
{
    ref->hash = hash;
    ref->node = node;
    ref->name = kiln__insp_node_name(s->doc, node);
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

/* ---- one accessor call per node ----------------------------------------------------------------
 * Each reader takes the error count before its accessor call, so that kiln__insp_check can tell
 * whether the accessor reported the failure itself. */

/* Appends the part record of an accessor's result; NULL when out of memory. */
static kiln__insp_part *kiln__insp_read_part(kiln__insp_summary *s, uint32_t node, int kind, kiln_result r,
                                             uint64_t errors_before)
{
    kiln__insp_part *p = kiln__insp_new_part(s, node, kind);
    if (p) p->ok = (uint32_t)kiln__insp_check(s, r, node, errors_before);
    return p;
}

static void kiln__insp_read_mesh(kiln__insp_summary *s, uint32_t node)
{
    kiln_cast_mesh m;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_mesh(s->doc, node, &m, &s->sink);
    kiln__insp_part *p = kiln__insp_read_part(s, node, KILN__INSP_MESH, r, before);
    if (!p) return;
    kiln__insp_mesh_rec *o = &p->u.mesh;
    o->name = kiln__insp_name(s, p->ok, m.name, node);
    if (!p->ok) return;
    o->vertices = m.vertex_count;
    o->faces = m.face_count;
    o->uv_layers = m.uv_layer_count;
    o->color_layers = m.color_layer_count;
    for (uint32_t k = 0; k < KILN_CAST_MAX_LAYERS; k++) {
        o->uv_present[k] = m.uv[k].count > 0;
        o->color_type[k] = m.color[k].count == 0                   ? KILN__INSP_COLOR_MISSING
                           : m.color[k].type == KILN_CAST_TYPE_INT ? KILN__INSP_COLOR_PACKED
                                                                   : KILN__INSP_COLOR_FLOAT;
    }
    o->normals = m.normals.count > 0;
    o->tangents = m.tangents.count > 0;
    o->max_influence = m.max_influence;
    o->dual_quat = m.skinning == KILN_CAST_SKIN_DUAL_QUAT;
    kiln__insp_material_ref_of(s, &o->material, m.material_hash, m.material);
    o->bad_index_faces = m.bad_index_face_count;
    o->degenerate_faces = m.degenerate_face_count;
}

static void kiln__insp_read_hair(kiln__insp_summary *s, uint32_t node)
{
    kiln_cast_hair h;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_hair(s->doc, node, &h, &s->sink);
    kiln__insp_part *p = kiln__insp_read_part(s, node, KILN__INSP_HAIR, r, before);
    if (!p) return;
    p->u.hair.name = kiln__insp_name(s, p->ok, h.name, node);
    p->u.hair.strands = h.strand_count;
    p->u.hair.particles = h.particle_count;
    kiln__insp_material_ref_of(s, &p->u.hair.material, h.material_hash, p->ok ? h.material : NONE);
}

static void kiln__insp_read_blend(kiln__insp_summary *s, uint32_t node)
{
    kiln_cast_blend_shape b;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_blend_shape(s->doc, node, &b, &s->sink);
    kiln__insp_part *p = kiln__insp_read_part(s, node, KILN__INSP_BLEND, r, before);
    if (!p) return;
    p->u.blend.name = kiln__insp_name(s, p->ok, b.name, node);
    p->u.blend.base_mesh = p->ok ? kiln__insp_node_name(s->doc, b.base_mesh) : NULL;
    p->u.blend.pairs = b.pair_count;
    p->u.blend.target_scale = b.target_scale;
}

static void kiln__insp_read_skeleton(kiln__insp_summary *s, uint32_t node)
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
    kiln__insp_part *p = kiln__insp_new_part(s, node, KILN__INSP_SKELETON);
    if (!p) return;
    p->ok = (uint32_t)ok;
    p->u.skeleton = k;
    if (!p->ok) {
        /* The counts still describe the node; only the bone hierarchy was rejected. */
        p->u.skeleton.bone_count = kiln_cast_child_count(s->doc, node, KILN_CAST_ID_BONE);
        p->u.skeleton.ik_count = kiln_cast_child_count(s->doc, node, KILN_CAST_ID_IKHANDLE);
        p->u.skeleton.constraint_count = kiln_cast_child_count(s->doc, node, KILN_CAST_ID_CONSTRAINT);
    }
}

/* Reads slot `k` of a valid material into a new slot record. Returns 0 when out of memory. */
static int kiln__insp_read_slot(kiln__insp_summary *s, uint32_t node, uint32_t k, kiln__insp_material_rec *o)
{
    kiln_cast_material_slot slot;
    if (kiln_cast_get_material_slot(s->doc, node, k, &slot, &s->sink) != KILN_OK) return 1;
    size_t i = KILN__INSP_PUSH(s, slots, slot_count, slot_cap);
    if (i == (size_t)-1) return 0;
    kiln__insp_slot *o_slot = &s->slots[i];
    o_slot->name = slot.name;
    o_slot->name_len = slot.name_len;
    o_slot->hash = slot.hash;
    o_slot->node = slot.node;
    o_slot->id = slot.node == NONE ? 0 : slot.id;
    /* Secondary reads: these nodes get their own accessor call (with the sink) when the walk
     * reaches them, so reports here would be duplicates. */
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
    return 1;
}

static void kiln__insp_read_material(kiln__insp_summary *s, uint32_t node)
{
    kiln_cast_material m;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_material(s->doc, node, &m, &s->sink);
    kiln__insp_part *p = kiln__insp_read_part(s, node, KILN__INSP_MATERIAL, r, before);
    if (!p) return;
    kiln__insp_material_rec *o = &p->u.material;
    o->name = kiln__insp_name(s, p->ok, m.name, node);
    o->type = m.type;
    o->first_slot = (uint32_t)s->slot_count;
    if (!p->ok) return;
    for (uint32_t k = 0; k < m.slot_count; k++)
        if (!kiln__insp_read_slot(s, node, k, o)) return;
}

static void kiln__insp_read_model(kiln__insp_summary *s, uint32_t node)
{
    kiln_cast_model m;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_model(s->doc, node, &m, &s->sink);
    uint32_t i = kiln__insp_new_model(s, node);
    if (i == NONE) return;
    kiln__insp_model *o = &s->models[i];
    o->ok = (uint32_t)kiln__insp_check(s, r, node, before);
    o->m = m;
    o->m.name = kiln__insp_name(s, o->ok, m.name, node);
}

static void kiln__insp_read_animation(kiln__insp_summary *s, uint32_t node)
{
    kiln_cast_animation a;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_animation(s->doc, node, &a, &s->sink);
    uint32_t i = kiln__insp_new_anim(s, node);
    if (i == NONE) return;
    kiln__insp_anim *o = &s->anims[i];
    o->ok = (uint32_t)kiln__insp_check(s, r, node, before);
    o->a = a;
    o->a.name = kiln__insp_name(s, o->ok, a.name, node);
}

static void kiln__insp_read_curve(kiln__insp_summary *s, uint32_t node)
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

static void kiln__insp_read_override(kiln__insp_summary *s, uint32_t node)
{
    kiln_cast_mode_override o;
    uint64_t before = s->by_severity[KILN_SEVERITY_ERROR];
    kiln_result r = kiln_cast_get_mode_override(s->doc, node, &o, &s->sink);
    uint32_t i = kiln__insp_anim_of(s, kiln_cast_node_at(s->doc, node));
    if (kiln__insp_check(s, r, node, before) && i != NONE) s->anims[i].overrides++;
}

static void kiln__insp_read_notification(kiln__insp_summary *s, uint32_t node)
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

static void kiln__insp_read_instance(kiln__insp_summary *s, uint32_t node)
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
static void kiln__insp_read_validate(kiln__insp_summary *s, uint32_t node, uint32_t id)
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

static void kiln__insp_read_node(kiln__insp_summary *s, uint32_t node, uint32_t id)
{
    switch (id) {
    case KILN_CAST_ID_MODEL: kiln__insp_read_model(s, node); break;
    case KILN_CAST_ID_MESH: kiln__insp_read_mesh(s, node); break;
    case KILN_CAST_ID_HAIR: kiln__insp_read_hair(s, node); break;
    case KILN_CAST_ID_BLENDSHAPE: kiln__insp_read_blend(s, node); break;
    case KILN_CAST_ID_SKELETON: kiln__insp_read_skeleton(s, node); break;
    case KILN_CAST_ID_MATERIAL: kiln__insp_read_material(s, node); break;
    case KILN_CAST_ID_ANIMATION: kiln__insp_read_animation(s, node); break;
    case KILN_CAST_ID_CURVE: kiln__insp_read_curve(s, node); break;
    case KILN_CAST_ID_CURVE_MODE_OVERRIDE: kiln__insp_read_override(s, node); break;
    case KILN_CAST_ID_NOTIFICATION_TRACK: kiln__insp_read_notification(s, node); break;
    case KILN_CAST_ID_INSTANCE: kiln__insp_read_instance(s, node); break;
    case KILN_CAST_ID_ROOT: break;
    default: kiln__insp_read_validate(s, node, id); break;
    }
}

/* ---- the walk --------------------------------------------------------------------------------- */

static int kiln__insp_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Moves record `i` of an array of `count` records of `size` bytes to the end, keeping the
 * order of the others; `tmp` holds one record. */
static void kiln__insp_move_last(void *records, size_t count, size_t size, size_t i, void *tmp)
{
    unsigned char *base = records;
    memcpy(tmp, base + i * size, size);
    memmove(base + i * size, base + (i + 1) * size, (count - 1 - i) * size);
    memcpy(base + (count - 1) * size, tmp, size);
}

int kiln__insp_walk(kiln__insp_summary *s, const kiln_cast_doc *doc)
{
    s->doc = doc;
    s->version = kiln_cast_version(doc);
    s->roots = kiln_cast_root_count(doc);
    uint32_t count = kiln_cast_node_count(doc);
    s->owner = malloc((count ? count : 1) * sizeof *s->owner);
    if (!s->owner) s->oom = 1;
    else for (uint32_t i = 0; i < count; i++) s->owner[i] = NONE;
    for (uint32_t i = 0; i < count && !s->oom; i++) {
        const kiln_cast_node *n = kiln_cast_node_at(doc, i);
        s->kind_count[kiln__insp_kind_index(n->id)]++;
        if (n->flags & KILN_CAST_NODE_OPAQUE) {
            /* Unknown ids and skipped nodes were reported by the parser; nothing to read. */
            if (n->flags & KILN_CAST_NODE_KNOWN) s->opaque++;
            continue;
        }
        kiln__insp_read_node(s, i, n->id);
    }
    if (s->oom) return 0;

    /* The holders of unattached parts and tracks are created when first needed; they are
     * listed last. */
    kiln__insp_model model;
    kiln__insp_anim anim;
    if (s->loose_model != NONE) kiln__insp_move_last(s->models, s->model_count, sizeof model, s->loose_model, &model);
    if (s->loose_anim != NONE) kiln__insp_move_last(s->anims, s->anim_count, sizeof anim, s->loose_anim, &anim);
    if (s->instance_count > 1) qsort((void *)s->instances, s->instance_count, sizeof *s->instances, kiln__insp_cmp_str);
    /* Secondary read, as for material slots: the walk has already read the node with the sink. */
    s->meta_node = kiln_cast_find_metadata(doc);
    if (s->meta_node != NONE && kiln_cast_get_metadata(doc, s->meta_node, &s->meta, NULL) != KILN_OK)
        s->meta_node = NONE;
    return 1;
}
