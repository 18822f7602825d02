/* `kiln inspect --json` on a baked blob: the JSON form of its view (inspect_blob_view.h), on
 * stdout. Schema: docs/inspect-json.md. */
#include "cli.h"
#include "inspect_blob_view.h"
#include "kiln/instance.h"
#include "json.h"

/* The keys "position", "rotation" and "scale" of a model or instance transform. */
static void kiln__j_transform(kiln__json *j, const float position[3], const float rotation[4], const float scale[3])
{
    kiln__json_key(j, "position");
    kiln__json_f32_array(j, position, 3);
    kiln__json_key(j, "rotation");
    kiln__json_f32_array(j, rotation, 4);
    kiln__json_key(j, "scale");
    kiln__json_f32_array(j, scale, 3);
}

static void kiln__j_str(kiln__json *j, const kiln__bview *v, const char *key, uint32_t offset)
{
    kiln__json_key_string(j, key, kiln__bview_str(v, offset));
}

static void kiln__j_index(kiln__json *j, const char *key, uint32_t index)
{
    if (index == KILN_BLOB_NONE) kiln__json_key_null(j, key);
    else kiln__json_key_u64(j, key, index);
}

static void kiln__j_mesh(kiln__json *j, const kiln__bview *v, const kiln_blob_mesh *m)
{
    kiln__json_begin_object(j);
    kiln__j_str(j, v, "name", m->name);
    kiln__json_key_u64(j, "vertices", m->vertex_count);
    kiln__json_key_u64(j, "indices", m->index_count);
    kiln__json_key_u64(j, "influences", m->influences);
    kiln__json_key_string(j, "skinning", m->skinning == KILN_SKIN_DUAL_QUAT ? "quaternion" : "linear");
    kiln__j_index(j, "material", m->material);
    kiln__j_index(j, "skeleton", m->skeleton);
    kiln__json_key(j, "streams");
    kiln__json_begin_array(j);
    for (uint32_t s = 0; s < m->stream_count; s++) {
        const kiln_blob_stream *st = &v->streams[m->first_stream + s];
        kiln__json_begin_object_inline(j);
        kiln__json_key_string(j, "semantic", kiln__bview_semantic_name(st->semantic));
        kiln__json_key_u64(j, "set", st->set);
        kiln__json_key_string(j, "format", kiln__bview_format_name(st->format));
        kiln__json_key_u64(j, "components", st->components);
        kiln__json_key_u64(j, "count", st->count);
        kiln__json_key_u64(j, "stride", st->stride);
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);
    kiln__json_end_object(j);
}

static void kiln__j_material(kiln__json *j, const kiln__bview *v, const kiln_blob_material *m)
{
    kiln__json_begin_object(j);
    kiln__j_str(j, v, "name", m->name);
    kiln__j_str(j, v, "type", m->type);
    kiln__json_key(j, "slots");
    kiln__json_begin_array(j);
    for (uint32_t k = 0; k < m->slot_count; k++) {
        const kiln_blob_material_slot *s = &v->slots[m->first_slot + k];
        kiln__json_begin_object_inline(j);
        kiln__j_str(j, v, "name", s->name);
        if (s->kind == KILN_SLOT_FILE) {
            kiln__j_str(j, v, "file", s->path);
        } else {
            kiln__json_key_string(j, "color_space", s->color_space ? "linear" : "srgb");
            kiln__json_key(j, "rgba");
            kiln__json_f32_array(j, s->rgba, 4);
            kiln__json_key(j, "rgba_linear");
            kiln__json_f32_array(j, s->rgba_linear, 4);
        }
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);
    kiln__json_end_object(j);
}

static void kiln__j_model(kiln__json *j, const kiln__bview *v, const kiln_blob_model *m)
{
    kiln__json_begin_object(j);
    kiln__j_str(j, v, "name", m->name);
    kiln__json_key_u64(j, "source", m->source);
    kiln__j_transform(j, m->position, m->rotation, m->scale);
    kiln__json_key(j, "skeleton");
    if (m->skeleton == KILN_BLOB_NONE) {
        kiln__json_null(j);
    } else {
        const kiln_blob_skeleton *sk = &v->skeletons[m->skeleton];
        kiln__json_begin_object_inline(j);
        kiln__json_key_u64(j, "bones", sk->bone_count);
        kiln__json_key_u64(j, "depth", sk->depth);
        kiln__json_key_u64(j, "roots", kiln__bview_root_count(v, sk));
        kiln__json_end_object(j);
    }
    kiln__json_key(j, "meshes");
    kiln__json_begin_array(j);
    for (uint32_t i = 0; i < m->mesh_count; i++) kiln__j_mesh(j, v, &v->meshes[m->first_mesh + i]);
    kiln__json_end_array(j);
    kiln__json_key(j, "hairs");
    kiln__json_begin_array(j);
    for (uint32_t i = 0; i < m->hair_count; i++) {
        const kiln_blob_hair *h = &v->hairs[m->first_hair + i];
        kiln__json_begin_object_inline(j);
        kiln__j_str(j, v, "name", h->name);
        kiln__json_key_u64(j, "strands", h->strand_count);
        kiln__json_key_u64(j, "particles", h->particle_count);
        kiln__j_index(j, "material", h->material);
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);
    kiln__json_key(j, "materials");
    kiln__json_begin_array(j);
    for (uint32_t i = 0; i < m->material_count; i++) kiln__j_material(j, v, &v->materials[m->first_material + i]);
    kiln__json_end_array(j);
    kiln__json_end_object(j);
}

static void kiln__j_anim(kiln__json *j, const kiln__bview *v, uint32_t index)
{
    const kiln_blob_animation *a = &v->anims[index];
    kiln__clip_facts f;
    kiln__bview_clip_facts(v, index, &f);
    int lossy = (a->flags & KILN_ANIM_LOSSY) != 0;
    kiln__json_begin_object(j);
    kiln__j_str(j, v, "name", a->name);
    kiln__json_key_u64(j, "source", a->source);
    kiln__json_key_f64(j, "framerate", a->framerate);
    kiln__json_key(j, "frame_range");
    kiln__json_begin_array_inline(j);
    kiln__json_i64(j, a->first_frame);
    kiln__json_i64(j, a->last_frame);
    kiln__json_end_array(j);
    kiln__json_key_u64(j, "frames", a->frame_count);
    kiln__json_key_f64(j, "duration_s", f.duration_s);
    kiln__json_key_bool(j, "looping", (a->flags & KILN_ANIM_LOOPING) != 0);
    kiln__json_key_bool(j, "lossy", lossy);
    if (lossy) {
        kiln__json_key_f64(j, "error_bound_m", a->error_bound_m);
        kiln__json_key_f64(j, "error_distance_m", a->error_distance_m);
    } else {
        kiln__json_key_null(j, "error_bound_m");
        kiln__json_key_null(j, "error_distance_m");
    }
    kiln__json_key_u64(j, "joint_slots", a->joint_count);
    kiln__json_key_u64(j, "placeholder_slots", f.placeholders);
    kiln__json_key_u64(j, "blocks", a->block_count);
    kiln__json_key_u64(j, "tracks", a->animated_count);
    kiln__json_key(j, "track_widths");
    kiln__json_begin_array_inline(j);
    for (unsigned w = 0; w <= KILN__MAX_WIDTH; w++) {
        if (!f.widths[w]) continue;
        kiln__json_begin_object_inline(j);
        kiln__json_key_u64(j, "bits", w);
        kiln__json_key_u64(j, "tracks", f.widths[w]);
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);
    kiln__json_key_u64(j, "constant_pairs", f.constant);
    kiln__json_key_u64(j, "rebuilt_qw_blocks", f.rebuilt_qw);
    kiln__json_key_u64(j, "row_stride", a->row_stride);
    kiln__json_key_u64(j, "data_bytes", a->data_size);
    kiln__json_key_u64(j, "scalar_bytes", f.scalar_bytes);
    kiln__json_key(j, "scalars");
    kiln__json_begin_array(j);
    for (uint32_t i = 0; i < a->scalar_count; i++) {
        const kiln_blob_anim_scalar *sc = &v->anim_scalars[a->first_scalar + i];
        kiln__json_begin_object_inline(j);
        kiln__j_str(j, v, "name", sc->name);
        kiln__json_key_string(j, "kind", kiln__bview_scalar_kind_name(sc->kind, 1));
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);
    kiln__json_key(j, "mode_overrides");
    kiln__json_begin_array(j);
    for (uint32_t i = 0; i < a->override_count; i++) {
        const kiln_blob_anim_override *o = &v->anim_overrides[a->first_override + i];
        kiln__json_begin_object_inline(j);
        kiln__j_str(j, v, "bone", o->name);
        kiln__json_key_string(j, "mode", kiln__bview_mode_name(o->mode));
        kiln__json_key(j, "channels");
        kiln__json_begin_array_inline(j);
        for (unsigned g = 0; g < 3; g++) {
            char letter[2] = {kiln__bview_channel_letters[g], 0};
            if (o->channels >> g & 1u) kiln__json_string(j, letter);
        }
        kiln__json_end_array(j);
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);
    kiln__json_key(j, "events");
    kiln__json_begin_array(j);
    for (uint32_t i = 0; i < a->event_count; i++) {
        const kiln_blob_anim_event *e = &v->anim_events[a->first_event + i];
        kiln__json_begin_object_inline(j);
        kiln__j_str(j, v, "name", e->name);
        kiln__json_key_i64(j, "frame", e->frame);
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);
    kiln__json_end_object(j);
}

void kiln__bview_print_json(const kiln__bview *v)
{
    kiln__json j;
    kiln__json_init(&j, stdout, 2);
    kiln__json_begin_object(&j);
    kiln__json_key_u64(&j, "schema", 1);
    kiln__json_key_string(&j, "kind", "blob");
    kiln__json_key_string(&j, "path", v->path);
    kiln__json_key_u64(&j, "bytes", v->size);
    kiln__json_key_u64(&j, "version_major", v->header->version_major);
    kiln__json_key_u64(&j, "version_minor", v->header->version_minor);
    kiln__json_key_bool(&j, "quantized", (v->header->flags & KILN_BLOB_FLAG_QUANTIZED) != 0);
    kiln__json_key_u64(&j, "crc32c", v->header->crc32c);
    kiln__json_key(&j, "metadata");
    kiln__json_begin_object(&j);
    kiln__json_key_u64(&j, "sources", v->meta ? v->meta->source_count : 0);
    kiln__j_str(&j, v, "author", v->meta ? v->meta->author : 0);
    kiln__j_str(&j, v, "software", v->meta ? v->meta->software : 0);
    kiln__json_key_string(&j, "up", v->meta ? kiln__bview_up_name(v->meta->up_axis) : NULL);
    kiln__j_str(&j, v, "scene_root", v->meta ? v->meta->scene_root : 0);
    kiln__json_end_object(&j);
    kiln__json_key(&j, "models");
    kiln__json_begin_array(&j);
    for (uint32_t i = 0; i < v->model_count; i++) kiln__j_model(&j, v, &v->models[i]);
    kiln__json_end_array(&j);
    kiln__json_key(&j, "animations");
    kiln__json_begin_array(&j);
    for (uint32_t i = 0; i < v->anim_count; i++) kiln__j_anim(&j, v, i);
    kiln__json_end_array(&j);
    kiln__json_key(&j, "references");
    kiln__json_begin_array(&j);
    for (uint32_t r = 0; r < v->reference_count; r++) {
        const kiln_blob_reference *ref = &v->references[r];
        kiln__json_begin_object_inline(&j);
        kiln__j_str(&j, v, "path", ref->path);
        kiln__j_str(&j, v, "resolved", ref->resolved_path);
        kiln__json_key_u64(&j, "instances", ref->instance_count);
        kiln_reference_info info; /* baked with the file it places: that file's models */
        if (kiln_reference_get(v->blob, r, &info) == KILN_OK && info.model_count) {
            kiln__json_key_u64(&j, "first_model", info.first_model);
            kiln__json_key_u64(&j, "model_count", info.model_count);
        }
        kiln__json_end_object(&j);
    }
    kiln__json_end_array(&j);
    kiln__json_key(&j, "instances");
    kiln__json_begin_array(&j);
    for (uint32_t i = 0; i < v->instance_count; i++) {
        const kiln_blob_instance *in = &v->instances[i];
        kiln__json_begin_object_inline(&j);
        kiln__j_str(&j, v, "name", in->name);
        kiln__json_key_u64(&j, "reference", in->reference);
        kiln__json_key_u64(&j, "source", in->source);
        kiln__json_key_u64(&j, "source_index", in->source_index);
        kiln__j_transform(&j, in->position, in->rotation, in->scale);
        kiln__json_end_object(&j);
    }
    kiln__json_end_array(&j);
    kiln__json_key(&j, "sections");
    kiln__json_begin_array(&j);
    for (uint32_t s = 0; s < v->section_count; s++) {
        char kind[5];
        const kiln_blob_section *sec = &v->sections[s];
        kiln__json_begin_object_inline(&j);
        kiln__json_key_string(&j, "kind", kiln_blob_kind_name(sec->kind, kind));
        kiln__json_key_u64(&j, "offset", sec->offset);
        kiln__json_key_u64(&j, "size", sec->size);
        kiln__json_key_u64(&j, "count", sec->count);
        kiln__json_key_u64(&j, "stride", sec->stride);
        kiln__json_end_object(&j);
    }
    kiln__json_end_array(&j);
    kiln__json_end_object(&j);
    kiln__json_finish(&j);
}
