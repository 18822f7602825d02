/* `kiln inspect` on a baked blob: the text form of its view (inspect_blob_view.h), on stdout. */
#include <string.h>

#include "cli.h"
#include "inspect_blob_view.h"
#include "kiln/instance.h"

static void kiln__t_name(const char *s)
{
    fputc('\'', stdout);
    kiln__cli_put_text(stdout, s, "");
    fputc('\'', stdout);
}

static void kiln__t_vec(const float *f, int n)
{
    fputc('(', stdout);
    for (int i = 0; i < n; i++) printf("%s%g", i ? ", " : "", (double)f[i]);
    fputc(')', stdout);
}

static void kiln__t_material_ref(const kiln__bview *v, uint32_t material)
{
    if (material == KILN_BLOB_NONE) return;
    fputs(", material ", stdout);
    kiln__t_name(kiln__bview_str(v, v->materials[material].name));
}

static void kiln__t_mesh(const kiln__bview *v, const kiln_blob_mesh *m)
{
    fputs("  mesh ", stdout);
    kiln__t_name(kiln__bview_str(v, m->name));
    printf(": %u vertices, %u indices (%u triangles), %u streams", m->vertex_count, m->index_count,
           m->index_count / 3, m->stream_count);
    if (m->influences) printf(", skin %u influences %s", m->influences, m->skinning == KILN_SKIN_DUAL_QUAT ? "quaternion" : "linear");
    else fputs(", no skin", stdout);
    kiln__t_material_ref(v, m->material);
    fputs("\n    streams:", stdout);
    for (uint32_t s = 0; s < m->stream_count; s++) {
        const kiln_blob_stream *st = &v->streams[m->first_stream + s];
        printf("%s %s", s ? "," : "", kiln__bview_semantic_name(st->semantic));
        if (st->semantic == KILN_ATTR_TEXCOORD || st->semantic == KILN_ATTR_COLOR) printf("%u", st->set);
        printf(" %s", kiln__bview_format_name(st->format));
        if (st->format == KILN_FORMAT_U16xN || st->format == KILN_FORMAT_F32xN) printf("(%u)", st->components);
    }
    fputc('\n', stdout);
}

static void kiln__t_material(const kiln__bview *v, const kiln_blob_material *m)
{
    fputs("  material ", stdout);
    kiln__t_name(kiln__bview_str(v, m->name));
    fputs(" (type ", stdout);
    kiln__cli_put_text(stdout, m->type ? kiln__bview_str(v, m->type) : "none", "");
    printf("), %u slot%s\n", m->slot_count, m->slot_count == 1 ? "" : "s");
    for (uint32_t k = 0; k < m->slot_count; k++) {
        const kiln_blob_material_slot *s = &v->slots[m->first_slot + k];
        const char *name = kiln__bview_str(v, s->name);
        fputs("    ", stdout);
        kiln__cli_put_text(stdout, name, "");
        for (size_t pad = strlen(name); pad < 12; pad++) fputc(' ', stdout);
        if (s->kind == KILN_SLOT_FILE) {
            fputs(" file ", stdout);
            kiln__t_name(kiln__bview_str(v, s->path));
        } else {
            fputs(" color ", stdout);
            kiln__t_vec(s->rgba, 4);
            fputs(s->color_space ? " linear" : " srgb, linear ", stdout);
            if (!s->color_space) kiln__t_vec(s->rgba_linear, 4);
        }
        fputc('\n', stdout);
    }
}

/* " position (x, y, z), rotation xyzw (...), scale (...)" of a model or instance transform. */
static void kiln__t_transform(const float position[3], const float rotation[4], const float scale[3])
{
    fputs(" position ", stdout);
    kiln__t_vec(position, 3);
    fputs(", rotation xyzw ", stdout);
    kiln__t_vec(rotation, 4);
    fputs(", scale ", stdout);
    kiln__t_vec(scale, 3);
}


static void kiln__t_model(const kiln__bview *v, const kiln_blob_model *m)
{
    fputs("model ", stdout);
    kiln__t_name(kiln__bview_str(v, m->name));
    printf(" (source %u)\n", m->source);
    if (!kiln__bview_default_transform(m)) {
        fputs("  transform:", stdout);
        kiln__t_transform(m->position, m->rotation, m->scale);
        fputc('\n', stdout);
    }
    if (m->skeleton != KILN_BLOB_NONE) {
        const kiln_blob_skeleton *sk = &v->skeletons[m->skeleton];
        uint32_t roots = kiln__bview_root_count(v, sk);
        printf("  skeleton: %u bone%s, depth %u, %u root%s, %u rest-pose block%s\n", sk->bone_count,
               sk->bone_count == 1 ? "" : "s", sk->depth, roots, roots == 1 ? "" : "s", sk->soa_count,
               sk->soa_count == 1 ? "" : "s");
    }
    for (uint32_t i = 0; i < m->mesh_count; i++) kiln__t_mesh(v, &v->meshes[m->first_mesh + i]);
    for (uint32_t i = 0; i < m->hair_count; i++) {
        const kiln_blob_hair *h = &v->hairs[m->first_hair + i];
        fputs("  hair ", stdout);
        kiln__t_name(kiln__bview_str(v, h->name));
        printf(": %u strand%s, %u particles", h->strand_count, h->strand_count == 1 ? "" : "s", h->particle_count);
        kiln__t_material_ref(v, h->material);
        fputc('\n', stdout);
    }
    for (uint32_t i = 0; i < m->material_count; i++) kiln__t_material(v, &v->materials[m->first_material + i]);
}

/* Events listed per clip in the text output; the rest are counted. */
#define KILN__TEXT_EVENTS 20u

static void kiln__t_anim(const kiln__bview *v, uint32_t index)
{
    const kiln_blob_animation *a = &v->anims[index];
    kiln__clip_facts f;
    kiln__bview_clip_facts(v, index, &f);
    fputs("animation ", stdout);
    kiln__t_name(kiln__bview_str(v, a->name));
    printf(" (source %u): %g fps, frames [%lld, %lld], %u frame%s, %g s, %s, ", a->source, (double)a->framerate,
           (long long)a->first_frame, (long long)a->last_frame, a->frame_count, a->frame_count == 1 ? "" : "s",
           f.duration_s, (a->flags & KILN_ANIM_LOOPING) ? "looping" : "not looping");
    if (a->flags & KILN_ANIM_LOSSY)
        printf("lossy (error %g mm at %g cm)\n", (double)a->error_bound_m * 1e3, (double)a->error_distance_m * 1e2);
    else
        fputs("lossless\n", stdout);
    printf("  joints: %u slot%s in %u block%s (%u named, %u placeholder%s)\n", a->joint_count,
           a->joint_count == 1 ? "" : "s", a->block_count, a->block_count == 1 ? "" : "s", f.named, f.placeholders,
           f.placeholders == 1 ? "" : "s");
    printf("  tracks: %u per frame", a->animated_count);
    const char *sep = " (";
    for (unsigned w = 0; w <= KILN__MAX_WIDTH; w++) {
        if (!f.widths[w]) continue;
        printf("%s%u-bit %u", sep, w, f.widths[w]);
        sep = ", ";
    }
    if (sep[0] == ',') fputc(')', stdout);
    printf(", %u constant", f.constant);
    if (a->flags & KILN_ANIM_LOSSY) printf(", qw rebuilt in %u block%s", f.rebuilt_qw, f.rebuilt_qw == 1 ? "" : "s");
    printf("\n  data: %u bytes per frame, %llu bytes + %llu scalar bytes\n", a->row_stride,
           (unsigned long long)a->data_size, (unsigned long long)f.scalar_bytes);
    if (a->scalar_count) {
        fputs("  scalars:", stdout);
        for (uint32_t i = 0; i < a->scalar_count; i++) {
            const kiln_blob_anim_scalar *sc = &v->anim_scalars[a->first_scalar + i];
            fputs(i ? ", " : " ", stdout);
            kiln__t_name(kiln__bview_str(v, sc->name));
            printf(" %s", kiln__bview_scalar_kind_name(sc->kind, 0));
        }
        fputc('\n', stdout);
    }
    if (a->override_count) {
        fputs("  mode overrides:", stdout);
        for (uint32_t i = 0; i < a->override_count; i++) {
            const kiln_blob_anim_override *o = &v->anim_overrides[a->first_override + i];
            fputs(i ? ", " : " ", stdout);
            kiln__t_name(kiln__bview_str(v, o->name));
            printf(" %s on ", kiln__bview_mode_name(o->mode));
            int any = 0;
            for (unsigned g = 0; g < 3; g++)
                if (o->channels >> g & 1u) printf("%s%c", any++ ? "," : "", kiln__bview_channel_letters[g]);
            if (!any) fputs("nothing", stdout);
        }
        fputc('\n', stdout);
    }
    if (a->event_count) {
        uint32_t shown = a->event_count < KILN__TEXT_EVENTS ? a->event_count : KILN__TEXT_EVENTS;
        fputs("  events:", stdout);
        for (uint32_t i = 0; i < shown; i++) {
            const kiln_blob_anim_event *e = &v->anim_events[a->first_event + i];
            fputs(i ? ", " : " ", stdout);
            kiln__t_name(kiln__bview_str(v, e->name));
            printf(" @ %lld", (long long)e->frame);
        }
        if (shown < a->event_count) printf(", ... %u more", a->event_count - shown);
        fputc('\n', stdout);
    }
}

/* Instances listed per reference in the text output; the rest are counted. */
#define KILN__TEXT_INSTANCES 3u

void kiln__bview_print_text(const kiln__bview *v)
{
    const kiln_blob_header *h = v->header;
    kiln__cli_put_text(stdout, v->path, "");
    printf(": %zu bytes, kiln blob %u.%u, %u sections, %s, crc32c %08x\n", v->size, h->version_major,
           h->version_minor, v->section_count, (h->flags & KILN_BLOB_FLAG_QUANTIZED) ? "quantized" : "lossless",
           h->crc32c);
    printf("records: %u models, %u skeletons, %u bones, %u meshes, %u hairs, %u streams, %u materials, %u slots, "
           "%u instances, %u references, %u animations\n",
           v->model_count, v->skeleton_count, v->bone_count, v->mesh_count, v->hair_count, v->stream_count,
           v->material_count, v->slot_count, v->instance_count, v->reference_count, v->anim_count);
    fputs("metadata:", stdout);
    if (v->meta) {
        printf(" %u source%s", v->meta->source_count, v->meta->source_count == 1 ? "" : "s");
        if (v->meta->author) { fputs(", author ", stdout); kiln__t_name(kiln__bview_str(v, v->meta->author)); }
        if (v->meta->software) { fputs(", software ", stdout); kiln__t_name(kiln__bview_str(v, v->meta->software)); }
        if (kiln__bview_up_name(v->meta->up_axis)) printf(", up %s", kiln__bview_up_name(v->meta->up_axis));
        if (v->meta->scene_root) { fputs(", scene root ", stdout); kiln__t_name(kiln__bview_str(v, v->meta->scene_root)); }
    }
    fputc('\n', stdout);
    for (uint32_t i = 0; i < v->model_count; i++) kiln__t_model(v, &v->models[i]);
    for (uint32_t i = 0; i < v->anim_count; i++) kiln__t_anim(v, i);
    if (v->reference_count) {
        printf("instances: %u of %u reference%s\n", v->instance_count, v->reference_count,
               v->reference_count == 1 ? "" : "s");
        for (uint32_t r = 0; r < v->reference_count; r++) {
            const kiln_blob_reference *ref = &v->references[r];
            printf("  %6u  ", ref->instance_count);
            kiln__t_name(kiln__bview_str(v, ref->path));
            fputs(" -> ", stdout);
            kiln__t_name(kiln__bview_str(v, ref->resolved_path));
            kiln_reference_info info; /* baked with the file it places: that file's models */
            if (kiln_reference_get(v->blob, r, &info) == KILN_OK && info.model_count)
                printf(", models %u..%u", info.first_model, info.first_model + info.model_count - 1);
            fputc('\n', stdout);
            /* a few of its instances with their transforms; --json lists them all */
            uint32_t shown = ref->instance_count < KILN__TEXT_INSTANCES ? ref->instance_count : KILN__TEXT_INSTANCES;
            for (uint32_t k = 0; k < shown; k++) {
                const kiln_blob_instance *in = &v->instances[ref->first_instance + k];
                fputs("          ", stdout);
                kiln__t_name(kiln__bview_str(v, in->name));
                kiln__t_transform(in->position, in->rotation, in->scale);
                fputc('\n', stdout);
            }
            if (shown < ref->instance_count) printf("          ... %u more\n", ref->instance_count - shown);
        }
    }
    printf("sections:\n  kind  %10s  %12s  %8s  %6s\n", "offset", "size", "count", "stride");
    for (uint32_t s = 0; s < v->section_count; s++) {
        char kind[5];
        const kiln_blob_section *sec = &v->sections[s];
        printf("  %s  %10llu  %12llu  %8u  %6u\n", kiln_blob_kind_name(sec->kind, kind),
               (unsigned long long)sec->offset, (unsigned long long)sec->size, sec->count, sec->stride);
    }
}

