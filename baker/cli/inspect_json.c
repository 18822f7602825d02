/* `kiln inspect --json`: the JSON form of a Cast file's summary (inspect_summary.h), on stdout.
 * Schema: docs/inspect-json.md. */
#include <stdio.h>

#include "cli.h"
#include "inspect_summary.h"
#include "json.h"

#define NONE KILN_CAST_NONE

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

static void kiln__js_material_ref(kiln__json *j, const kiln__insp_material_ref *ref)
{
    kiln__json_key(j, "material");
    if (!ref->hash) {
        kiln__json_null(j);
        return;
    }
    kiln__json_begin_object_inline(j);
    kiln__js_hash(j, "hash", ref->hash);
    kiln__json_key_bool(j, "resolved", ref->node != NONE);
    kiln__json_key_string(j, "name", ref->name);
    kiln__json_end_object(j);
}

/* Opens the object of a part: node, name and status. */
static void kiln__js_part_head(kiln__json *j, const kiln__insp_summary *s, const kiln__insp_part *p, const char *name)
{
    kiln__json_begin_object(j);
    kiln__js_node(j, s->doc, p->node);
    kiln__json_key_string(j, "name", name);
    kiln__json_key_bool(j, "ok", (int)p->ok);
}

static void kiln__js_skeleton(kiln__json *j, const kiln__insp_summary *s, const kiln__insp_part *p)
{
    const kiln_cast_skeleton *k = &p->u.skeleton;
    kiln__json_begin_object(j);
    kiln__js_node(j, s->doc, p->node);
    kiln__json_key_bool(j, "ok", (int)p->ok);
    kiln__json_key_u64(j, "bones", k->bone_count);
    if (p->ok) {
        kiln__json_key_u64(j, "depth", k->depth);
        kiln__json_key_u64(j, "roots", k->root_count);
    } else {
        kiln__json_key_null(j, "depth");
        kiln__json_key_null(j, "roots");
    }
    kiln__json_key_u64(j, "ik_handles", k->ik_count);
    kiln__json_key_u64(j, "constraints", k->constraint_count);
    kiln__json_end_object(j);
}

static void kiln__js_mesh(kiln__json *j, const kiln__insp_summary *s, const kiln__insp_part *p)
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
        for (uint32_t k = 0; k < m->color_layers && k < KILN_CAST_MAX_LAYERS; k++)
            kiln__json_string(j, kiln__insp_color_names[m->color_type[k]]);
        kiln__json_end_array(j);
        kiln__json_key_u64(j, "max_influence", m->max_influence);
        kiln__json_key_string(j, "skinning", m->max_influence ? (m->dual_quat ? "quaternion" : "linear") : NULL);
        kiln__js_material_ref(j, &m->material);
        kiln__json_key_u64(j, "bad_index_faces", m->bad_index_faces);
        kiln__json_key_u64(j, "degenerate_faces", m->degenerate_faces);
    }
    kiln__json_end_object(j);
}

static void kiln__js_hair(kiln__json *j, const kiln__insp_summary *s, const kiln__insp_part *p)
{
    const kiln__insp_hair_rec *h = &p->u.hair;
    kiln__js_part_head(j, s, p, h->name);
    if (p->ok) {
        kiln__json_key_u64(j, "strands", h->strands);
        kiln__json_key_u64(j, "particles", h->particles);
        kiln__js_material_ref(j, &h->material);
    }
    kiln__json_end_object(j);
}

static void kiln__js_blend(kiln__json *j, const kiln__insp_summary *s, const kiln__insp_part *p)
{
    const kiln__insp_blend_rec *b = &p->u.blend;
    kiln__js_part_head(j, s, p, b->name);
    if (p->ok) {
        kiln__json_key_string(j, "base_mesh", b->base_mesh);
        kiln__json_key_u64(j, "pairs", b->pairs);
        kiln__json_key_f64(j, "target_scale", b->target_scale);
    }
    kiln__json_end_object(j);
}

static void kiln__js_slot(kiln__json *j, const kiln__insp_slot *sl)
{
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

static void kiln__js_material(kiln__json *j, const kiln__insp_summary *s, const kiln__insp_part *p)
{
    const kiln__insp_material_rec *m = &p->u.material;
    kiln__js_part_head(j, s, p, m->name);
    if (p->ok) {
        kiln__json_key_string(j, "type", m->type);
        kiln__json_key(j, "slots");
        kiln__json_begin_array(j);
        for (uint32_t k = 0; k < m->slot_count; k++) kiln__js_slot(j, &s->slots[m->first_slot + k]);
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

typedef void (*kiln__js_part_fn)(kiln__json *j, const kiln__insp_summary *s, const kiln__insp_part *p);

/* `key`: the array of a model's parts of one kind. */
static void kiln__js_parts(kiln__json *j, const kiln__insp_summary *s, const kiln__insp_model *mo, const char *key,
                           int kind, kiln__js_part_fn fn)
{
    kiln__json_key(j, key);
    kiln__json_begin_array(j);
    for (uint32_t i = mo->first[kind]; i != NONE; i = s->parts[i].next) fn(j, s, &s->parts[i]);
    kiln__json_end_array(j);
}

static void kiln__js_model(kiln__json *j, const kiln__insp_summary *s, const kiln__insp_model *mo)
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
    kiln__js_parts(j, s, mo, "skeletons", KILN__INSP_SKELETON, kiln__js_skeleton);
    kiln__js_parts(j, s, mo, "meshes", KILN__INSP_MESH, kiln__js_mesh);
    kiln__js_parts(j, s, mo, "hairs", KILN__INSP_HAIR, kiln__js_hair);
    kiln__js_parts(j, s, mo, "blend_shapes", KILN__INSP_BLEND, kiln__js_blend);
    kiln__js_parts(j, s, mo, "materials", KILN__INSP_MATERIAL, kiln__js_material);
    kiln__json_end_object(j);
}

static void kiln__js_curves(kiln__json *j, const kiln__insp_anim *a)
{
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
}

static void kiln__js_anim(kiln__json *j, const kiln__insp_summary *s, const kiln__insp_anim *a)
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
    kiln__js_curves(j, a);
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

static void kiln__js_instances(kiln__json *j, const kiln__insp_summary *s)
{
    kiln__json_key(j, "instances");
    kiln__json_begin_object(j);
    kiln__json_key_u64(j, "count", s->instance_count);
    kiln__json_key_u64(j, "dropped", s->instances_dropped);
    kiln__json_key(j, "by_path");
    kiln__json_begin_array(j);
    for (size_t i = 0, e; i < s->instance_count; i = e) {
        e = kiln__insp_instance_run(s, i);
        kiln__json_begin_object_inline(j);
        kiln__json_key_string(j, "path", s->instances[i]);
        kiln__json_key_u64(j, "count", e - i);
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);
    kiln__json_end_object(j);
}

static void kiln__js_metadata(kiln__json *j, const kiln__insp_summary *s)
{
    kiln__json_key(j, "metadata");
    if (s->meta_node == NONE) {
        kiln__json_null(j);
        return;
    }
    kiln__json_begin_object(j);
    kiln__js_node(j, s->doc, s->meta_node);
    kiln__json_key_string(j, "author", s->meta.author);
    kiln__json_key_string(j, "software", s->meta.software);
    kiln__json_key_string(j, "up", kiln__insp_up_name(s->meta.up_axis));
    kiln__json_key_string(j, "scene_root", s->meta.scene_root);
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

/* Opens the document: schema, kind and the "file" object. */
static void kiln__js_head(kiln__json *j, const kiln__insp_summary *s)
{
    kiln__json_init(j, stdout, 2);
    kiln__json_begin_object(j);
    kiln__json_key_u64(j, "schema", 1);
    kiln__json_key_string(j, "kind", "cast");
    kiln__json_key(j, "file");
    kiln__json_begin_object(j);
    kiln__json_key_string(j, "path", s->path);
    kiln__json_key_u64(j, "bytes", s->file_size);
    if (s->doc) {
        kiln__json_key_u64(j, "version", s->version);
        kiln__json_key_u64(j, "roots", s->roots);
    }
    kiln__json_end_object(j);
}

/* Closes the document: the diagnostics and the summary. */
static void kiln__js_tail(kiln__json *j, const kiln__insp_summary *s, int status)
{
    kiln__json_key(j, "diagnostics");
    kiln__json_begin_array(j);
    for (size_t i = 0; i < s->diag_count; i++) kiln__js_diag(j, &s->diags[i]);
    kiln__json_end_array(j);
    kiln__json_key(j, "summary");
    kiln__json_begin_object(j);
    kiln__json_key_u64(j, "errors", s->by_severity[KILN_SEVERITY_ERROR]);
    kiln__json_key_u64(j, "warnings", s->by_severity[KILN_SEVERITY_WARNING]);
    kiln__json_key_u64(j, "diagnostics_omitted", kiln__insp_diag_total(s) - s->diag_count);
    kiln__json_key_u64(j, "exit_status", (uint64_t)status);
    kiln__json_end_object(j);
    kiln__json_end_object(j);
    kiln__json_finish(j);
}

void kiln__insp_print_json_failure(const kiln__insp_summary *s, const kiln_diag *fault, int exit_status)
{
    kiln__json j;
    kiln__js_head(&j, s);
    kiln__json_key(&j, "error");
    kiln__js_diag(&j, fault);
    kiln__js_tail(&j, s, exit_status);
}

void kiln__insp_print_json(const kiln__insp_summary *s, int exit_status)
{
    kiln__json j;
    kiln__js_head(&j, s);

    kiln__json_key(&j, "nodes");
    kiln__json_begin_object(&j);
    for (size_t k = 0; k <= KILN__INSP_KINDS; k++)
        if (s->kind_count[k]) kiln__json_key_u64(&j, kiln__insp_kind_name(k), s->kind_count[k]);
    kiln__json_end_object(&j);
    kiln__json_key_u64(&j, "skipped_nodes", s->opaque);

    kiln__json_key(&j, "models");
    kiln__json_begin_array(&j);
    for (size_t i = 0; i < s->model_count; i++) kiln__js_model(&j, s, &s->models[i]);
    kiln__json_end_array(&j);

    kiln__json_key(&j, "animations");
    kiln__json_begin_array(&j);
    for (size_t i = 0; i < s->anim_count; i++) kiln__js_anim(&j, s, &s->anims[i]);
    kiln__json_end_array(&j);

    kiln__js_instances(&j, s);
    kiln__js_metadata(&j, s);
    kiln__js_tail(&j, s, exit_status);
}
