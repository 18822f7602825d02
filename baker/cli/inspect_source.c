/* `kiln inspect` on an input read through an importer other than Cast's node view (or on any
 * importable input with --source): the imported source scene (kiln/bake/source.h) as text or
 * as one JSON document (docs/inspect-json.md, kind "source"), and the importer's diagnostics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inspect_source.h"
#include "json.h"
#include "kiln/bake/source.h"

#define KILN__SRC_DIAG_KEEP 1000u

typedef struct kiln__src_diags {
    kiln_diag *items;
    uint32_t   count, cap;
    uint64_t   total, errors, warnings;
} kiln__src_diags;

static void kiln__src_sink(void *user, const kiln_diag *d)
{
    kiln__src_diags *s = user;
    s->total++;
    s->errors += d->severity == KILN_SEVERITY_ERROR;
    s->warnings += d->severity == KILN_SEVERITY_WARNING;
    if (s->count >= KILN__SRC_DIAG_KEEP) return;
    if (s->count == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 16;
        kiln_diag *grown = realloc(s->items, cap * sizeof *grown);
        if (!grown) return;
        s->items = grown;
        s->cap = cap;
    }
    s->items[s->count++] = *d;
}

static const char *kiln__src_name(const char *name) { return name ? name : "(unnamed)"; }

/* ---- text ------------------------------------------------------------------------------------ */

static void kiln__src_text_model(const kiln_source_model *m, uint32_t index)
{
    printf("model %u '", index);
    kiln__cli_put_text(stdout, kiln__src_name(m->name), "");
    printf("'\n");
    if (m->skeleton) {
        const kiln_source_skeleton *sk = m->skeleton;
        printf("  skeleton: %u bones, %u IK handles, %u constraints\n", sk->bone_count, sk->ik_handle_count,
               sk->constraint_count);
        for (uint32_t b = 0; b < sk->bone_count; b++) {
            printf("    bone %u '", b);
            kiln__cli_put_text(stdout, sk->bones[b].name ? sk->bones[b].name : "", "");
            printf("' parent %d\n", (int)sk->bones[b].parent);
        }
    }
    for (uint32_t i = 0; i < m->mesh_count; i++) {
        const kiln_source_mesh *me = &m->meshes[i];
        printf("  mesh %u '", i);
        kiln__cli_put_text(stdout, kiln__src_name(me->name), "");
        printf("': %u vertices, %u faces, %u UV layers, %u colour layers%s%s", me->vertex_count, me->face_count,
               me->uv_layer_count, me->color_layer_count, me->normals ? ", normals" : "",
               me->tangents ? ", tangents" : "");
        if (me->max_influence)
            printf(", skinned (%u influences, %s)", me->max_influence,
                   me->skinning == KILN_SOURCE_SKIN_DUAL_QUAT ? "dual quaternion" : "linear");
        if (me->material != KILN_SOURCE_NONE) printf(", material %u", me->material);
        printf("\n");
    }
    for (uint32_t i = 0; i < m->hair_count; i++)
        printf("  hair %u: %u strands, %u particles\n", i, m->hairs[i].strand_count, m->hairs[i].particle_count);
    for (uint32_t i = 0; i < m->blend_shape_count; i++) {
        printf("  blend shape %u '", i);
        kiln__cli_put_text(stdout, kiln__src_name(m->blend_shapes[i].name), "");
        printf("' on mesh %u: %u vertices\n", m->blend_shapes[i].mesh, m->blend_shapes[i].pair_count);
    }
    for (uint32_t i = 0; i < m->material_count; i++) {
        const kiln_source_material *mat = &m->materials[i];
        printf("  material %u '", i);
        kiln__cli_put_text(stdout, kiln__src_name(mat->name), "");
        printf("'%s%s: %u slots\n", mat->type ? " type " : "", mat->type ? mat->type : "", mat->slot_count);
        for (uint32_t k = 0; k < mat->slot_count; k++) {
            const kiln_source_material_slot *sl = &mat->slots[k];
            printf("    %s: ", sl->name ? sl->name : "?");
            if (sl->kind == KILN_SOURCE_SLOT_FILE) kiln__cli_put_text(stdout, sl->path ? sl->path : "", "");
            else
                printf("colour (%g, %g, %g, %g) %s", (double)sl->rgba[0], (double)sl->rgba[1], (double)sl->rgba[2],
                       (double)sl->rgba[3], sl->color_space == KILN_SOURCE_COLOR_LINEAR ? "linear" : "sRGB");
            printf("\n");
        }
    }
}

static void kiln__src_text(const char *path, const kiln_source_scene *s)
{
    printf("file: ");
    kiln__cli_put_text(stdout, path, "");
    printf("\nformat: %s\n", s->format ? s->format : "?");
    printf("models: %u, instances: %u, animations: %u, extras: %u\n", s->model_count, s->instance_count,
           s->animation_count, s->extra_count);
    for (uint32_t i = 0; i < s->model_count; i++) kiln__src_text_model(&s->models[i], i);
    for (uint32_t i = 0; i < s->instance_count; i++) {
        printf("instance %u '", i);
        kiln__cli_put_text(stdout, kiln__src_name(s->instances[i].name), "");
        printf("': ");
        kiln__cli_put_text(stdout, s->instances[i].path ? s->instances[i].path : "", "");
        printf("\n");
    }
    for (uint32_t i = 0; i < s->animation_count; i++) {
        const kiln_source_animation *a = &s->animations[i];
        uint64_t keys = 0;
        for (uint32_t c = 0; c < a->curve_count; c++) keys += a->curves[c].key_count;
        printf("animation %u '", i);
        kiln__cli_put_text(stdout, kiln__src_name(a->name), "");
        printf("': %g fps, %s, %u channels, %llu keys, %u overrides, %u notification tracks\n", (double)a->framerate,
               a->looping ? "looping" : "not looping", a->curve_count, (unsigned long long)keys, a->override_count,
               a->notification_count);
        for (uint32_t c = 0; c < a->curve_count; c++) {
            const kiln_source_curve *cv = &a->curves[c];
            printf("  ");
            kiln__cli_put_text(stdout, cv->target ? cv->target : "", "");
            printf(".%s %s: %u keys\n", kiln_source_channel_name(cv->channel), kiln_source_mode_name(cv->mode),
                   cv->key_count);
        }
    }
    for (uint32_t i = 0; i < s->extra_count; i++) {
        const kiln_source_extra *e = &s->extras[i];
        printf("extra %s '", e->kind ? e->kind : "?");
        kiln__cli_put_text(stdout, kiln__src_name(e->name), "");
        printf("'%s", e->detail ? ": " : "");
        if (e->detail) kiln__cli_put_text(stdout, e->detail, "");
        printf("\n");
    }
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void kiln__src_json_diag(kiln__json *j, const kiln_diag *d)
{
    kiln__json_begin_object(j);
    kiln__json_key_string(j, "severity", d->severity == KILN_SEVERITY_ERROR     ? "error"
                                         : d->severity == KILN_SEVERITY_WARNING ? "warning"
                                                                                : "info");
    kiln__json_key_string(j, "code", kiln_result_name(d->code));
    kiln__json_key_string(j, "path", d->path);
    kiln__json_key(j, "offset");
    if (d->offset == KILN_NO_OFFSET) kiln__json_null(j);
    else kiln__json_u64(j, d->offset);
    kiln__json_key_string(j, "rule", d->rule);
    kiln__json_key_string(j, "message", d->message);
    kiln__json_end_object(j);
}

static void kiln__src_json_model(kiln__json *j, const kiln_source_model *m)
{
    kiln__json_begin_object(j);
    kiln__json_key_string(j, "name", m->name);
    kiln__json_key(j, "bones");
    kiln__json_begin_array(j);
    for (uint32_t b = 0; m->skeleton && b < m->skeleton->bone_count; b++) {
        kiln__json_begin_object_inline(j);
        kiln__json_key_string(j, "name", m->skeleton->bones[b].name);
        kiln__json_key_i64(j, "parent", m->skeleton->bones[b].parent);
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);
    kiln__json_key_u64(j, "ik_handles", m->skeleton ? m->skeleton->ik_handle_count : 0);
    kiln__json_key_u64(j, "constraints", m->skeleton ? m->skeleton->constraint_count : 0);
    kiln__json_key(j, "meshes");
    kiln__json_begin_array(j);
    for (uint32_t i = 0; i < m->mesh_count; i++) {
        const kiln_source_mesh *me = &m->meshes[i];
        kiln__json_begin_object(j);
        kiln__json_key_string(j, "name", me->name);
        kiln__json_key_u64(j, "vertices", me->vertex_count);
        kiln__json_key_u64(j, "faces", me->face_count);
        kiln__json_key_u64(j, "uv_layers", me->uv_layer_count);
        kiln__json_key_u64(j, "color_layers", me->color_layer_count);
        kiln__json_key_u64(j, "influences", me->max_influence);
        kiln__json_key_string(j, "skinning", me->skinning == KILN_SOURCE_SKIN_DUAL_QUAT ? "dual_quaternion" : "linear");
        kiln__json_key(j, "material");
        if (me->material == KILN_SOURCE_NONE) kiln__json_null(j);
        else kiln__json_u64(j, me->material);
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);
    kiln__json_key_u64(j, "hairs", m->hair_count);
    kiln__json_key_u64(j, "blend_shapes", m->blend_shape_count);
    kiln__json_key(j, "materials");
    kiln__json_begin_array(j);
    for (uint32_t i = 0; i < m->material_count; i++) {
        const kiln_source_material *mat = &m->materials[i];
        kiln__json_begin_object(j);
        kiln__json_key_string(j, "name", mat->name);
        kiln__json_key_string(j, "type", mat->type);
        kiln__json_key(j, "slots");
        kiln__json_begin_array(j);
        for (uint32_t k = 0; k < mat->slot_count; k++) {
            const kiln_source_material_slot *sl = &mat->slots[k];
            kiln__json_begin_object_inline(j);
            kiln__json_key_string(j, "name", sl->name);
            if (sl->kind == KILN_SOURCE_SLOT_FILE) {
                kiln__json_key_string(j, "file", sl->path);
            } else {
                kiln__json_key(j, "rgba");
                kiln__json_f32_array(j, sl->rgba, 4);
            }
            kiln__json_end_object(j);
        }
        kiln__json_end_array(j);
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);
    kiln__json_end_object(j);
}

static void kiln__src_json(const char *path, size_t size, const kiln_source_scene *s, const kiln_diag *err,
                           const kiln__src_diags *d, int status)
{
    kiln__json j;
    kiln__json_init(&j, stdout, 2);
    kiln__json_begin_object(&j);
    kiln__json_key_u64(&j, "schema", 1);
    kiln__json_key_string(&j, "kind", "source");
    kiln__json_key(&j, "file");
    kiln__json_begin_object(&j);
    kiln__json_key_string(&j, "path", path);
    kiln__json_key_u64(&j, "bytes", size);
    kiln__json_end_object(&j);
    if (err) {
        kiln__json_key(&j, "error");
        kiln__src_json_diag(&j, err);
    } else {
        kiln__json_key_string(&j, "format", s->format);
        kiln__json_key(&j, "models");
        kiln__json_begin_array(&j);
        for (uint32_t i = 0; i < s->model_count; i++) kiln__src_json_model(&j, &s->models[i]);
        kiln__json_end_array(&j);
        kiln__json_key(&j, "instances");
        kiln__json_begin_array(&j);
        for (uint32_t i = 0; i < s->instance_count; i++) {
            kiln__json_begin_object_inline(&j);
            kiln__json_key_string(&j, "name", s->instances[i].name);
            kiln__json_key_string(&j, "path", s->instances[i].path);
            kiln__json_end_object(&j);
        }
        kiln__json_end_array(&j);
        kiln__json_key(&j, "animations");
        kiln__json_begin_array(&j);
        for (uint32_t i = 0; i < s->animation_count; i++) {
            const kiln_source_animation *a = &s->animations[i];
            kiln__json_begin_object(&j);
            kiln__json_key_string(&j, "name", a->name);
            kiln__json_key_f64(&j, "fps", a->framerate);
            kiln__json_key(&j, "looping");
            kiln__json_bool(&j, a->looping != 0);
            kiln__json_key(&j, "channels");
            kiln__json_begin_array(&j);
            for (uint32_t c = 0; c < a->curve_count; c++) {
                kiln__json_begin_object_inline(&j);
                kiln__json_key_string(&j, "target", a->curves[c].target);
                kiln__json_key_string(&j, "channel", kiln_source_channel_name(a->curves[c].channel));
                kiln__json_key_string(&j, "mode", kiln_source_mode_name(a->curves[c].mode));
                kiln__json_key_u64(&j, "keys", a->curves[c].key_count);
                kiln__json_end_object(&j);
            }
            kiln__json_end_array(&j);
            kiln__json_key_u64(&j, "overrides", a->override_count);
            kiln__json_key_u64(&j, "notification_tracks", a->notification_count);
            kiln__json_end_object(&j);
        }
        kiln__json_end_array(&j);
        kiln__json_key(&j, "extras");
        kiln__json_begin_array(&j);
        for (uint32_t i = 0; i < s->extra_count; i++) {
            kiln__json_begin_object_inline(&j);
            kiln__json_key_string(&j, "kind", s->extras[i].kind);
            kiln__json_key_string(&j, "name", s->extras[i].name);
            kiln__json_key_string(&j, "detail", s->extras[i].detail);
            kiln__json_end_object(&j);
        }
        kiln__json_end_array(&j);
    }
    kiln__json_key(&j, "diagnostics");
    kiln__json_begin_array(&j);
    for (uint32_t i = 0; i < d->count; i++) kiln__src_json_diag(&j, &d->items[i]);
    kiln__json_end_array(&j);
    kiln__json_key_u64(&j, "errors", d->errors);
    kiln__json_key_u64(&j, "warnings", d->warnings);
    kiln__json_key_u64(&j, "exit_status", (uint64_t)status);
    kiln__json_end_object(&j);
    kiln__json_finish(&j);
}

int kiln__inspect_source(const char *path, const void *data, size_t size, const char *format, int json, int quiet)
{
    kiln__src_diags d;
    memset(&d, 0, sizeof d);
    kiln_import_options o;
    memset(&o, 0, sizeof o);
    o.diag.fn = kiln__src_sink;
    o.diag.user = &d;
    kiln_source_scene scene;
    kiln_diag err;
    memset(&err, 0, sizeof err);
    kiln_result r = kiln_source_import(data, size, path, format, &o, &scene, &err);
    int status = r == KILN_OK ? KILN_EXIT_OK : KILN_EXIT_INPUT;
    if (json) kiln__src_json(path, size, &scene, r == KILN_OK ? NULL : &err, &d, status);
    else if (r == KILN_OK) kiln__src_text(path, &scene);
    for (uint32_t i = 0; i < d.count; i++)
        if (!quiet || d.items[i].severity == KILN_SEVERITY_ERROR) kiln__cli_print_diag(stderr, path, &d.items[i]);
    if (r != KILN_OK) kiln__cli_print_diag(stderr, NULL, &err);
    if (r == KILN_OK) kiln_source_scene_free(&scene);
    free(d.items);
    return status;
}
