/* `kiln inspect` on a baked blob: what the runtime will see, read only through the public
 * loader and views (kiln/blob.h), so the summary doubles as a check of those views. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inspect_blob.h"
#include "json.h"
#include "kiln/anim.h"
#include "kiln/blob.h"

int kiln__is_blob(const void *data, size_t size)
{
    uint32_t magic;
    if (size < sizeof magic) return 0;
    memcpy(&magic, data, sizeof magic);
    return magic == KILN_BLOB_MAGIC;
}

static const char *kiln__semantic_name(uint32_t s)
{
    static const char *const names[] = {"?",        "POSITION", "NORMAL",  "TANGENT",       "TEXCOORD",      "COLOR",
                                        "JOINTS",   "WEIGHTS",  "INDICES", "HAIR_STRANDS",  "HAIR_PARTICLES"};
    return s < sizeof names / sizeof names[0] ? names[s] : "?";
}

static const char *kiln__format_name(uint32_t f)
{
    static const char *const names[] = {"?",     "F32x1", "F32x2",     "F32x3",    "F32x4",   "U8x4_UNORM", "U16x1",
                                        "U32x1", "U16xN", "F32xN", "UNORM16x4", "OCT16x2", "UNORM16x2"};
    return f < sizeof names / sizeof names[0] ? names[f] : "?";
}

static const char *kiln__up_name(uint32_t up)
{
    static const char *const names[] = {NULL, "x", "y", "z"};
    return up < 4 ? names[up] : NULL;
}

/* Everything the printers need, fetched once. */
typedef struct kiln__bview {
    const kiln_blob               *blob;
    const char                    *path;
    size_t                         size;
    const kiln_blob_header        *header;
    const kiln_blob_section       *sections;
    const kiln_blob_metadata      *meta;
    const kiln_blob_model         *models;
    const kiln_blob_skeleton      *skeletons;
    const kiln_blob_bone          *bones;
    const kiln_blob_mesh          *meshes;
    const kiln_blob_hair          *hairs;
    const kiln_blob_stream        *streams;
    const kiln_blob_material      *materials;
    const kiln_blob_material_slot *slots;
    const kiln_blob_instance      *instances;
    const kiln_blob_reference     *references;
    const kiln_blob_animation     *anims;
    const kiln_blob_anim_joint    *anim_joints;
    const kiln_blob_anim_scalar   *anim_scalars;
    const kiln_blob_anim_override *anim_overrides;
    const kiln_blob_anim_event    *anim_events;
    uint32_t section_count, model_count, skeleton_count, bone_count, mesh_count, hair_count, stream_count,
        material_count, slot_count, instance_count, reference_count, anim_count, anim_joint_count,
        anim_scalar_count, anim_override_count, anim_event_count;
} kiln__bview;

static void kiln__bview_init(kiln__bview *v, const kiln_blob *blob, const char *path, size_t size)
{
    memset(v, 0, sizeof *v);
    v->blob = blob;
    v->path = path;
    v->size = size;
    v->header = kiln_blob_header_of(blob);
    v->sections = kiln_blob_sections(blob, &v->section_count);
    v->meta = kiln_blob_metadata_of(blob);
    v->models = kiln_blob_models(blob, &v->model_count);
    v->skeletons = kiln_blob_skeletons(blob, &v->skeleton_count);
    v->bones = kiln_blob_bones(blob, &v->bone_count);
    v->meshes = kiln_blob_meshes(blob, &v->mesh_count);
    v->hairs = kiln_blob_hairs(blob, &v->hair_count);
    v->streams = kiln_blob_streams(blob, &v->stream_count);
    v->materials = kiln_blob_materials(blob, &v->material_count);
    v->slots = kiln_blob_material_slots(blob, &v->slot_count);
    v->instances = kiln_blob_instances(blob, &v->instance_count);
    v->references = kiln_blob_references(blob, &v->reference_count);
    v->anims = kiln_blob_animations(blob, &v->anim_count);
    v->anim_joints = kiln_blob_anim_joints(blob, &v->anim_joint_count);
    v->anim_scalars = kiln_blob_anim_scalars(blob, &v->anim_scalar_count);
    v->anim_overrides = kiln_blob_anim_overrides(blob, &v->anim_override_count);
    v->anim_events = kiln_blob_anim_events(blob, &v->anim_event_count);
}

static const char *kiln__str(const kiln__bview *v, uint32_t offset) { return kiln_blob_string(v->blob, offset); }

static uint32_t kiln__root_count(const kiln__bview *v, const kiln_blob_skeleton *sk)
{
    uint32_t roots = 0;
    for (uint32_t b = 0; b < sk->bone_count; b++) roots += v->bones[sk->first_bone + b].parent < 0;
    return roots;
}

/* ---- animation clips ----------------------------------------------------------------------- */

#define KILN__QW_COMPONENT 6u
#define KILN__QXYZ_MASK    0x38u /* components 3, 4, 5 */
#define KILN__MAX_WIDTH    32u   /* bits per lane: quantised widths are below, 32 is a raw float */

/* What a clip's records and track table say about its storage, counted once for both printers. */
typedef struct kiln__clip_facts {
    double   duration_s;
    uint32_t named, placeholders;          /* joint slots with a bone name / without (name offset 0) */
    uint32_t widths[KILN__MAX_WIDTH + 1];  /* stored tracks by bits per lane */
    uint32_t constant;                     /* (block, component) pairs with a curve, stored once */
    uint32_t rebuilt_qw;                   /* lossy: blocks whose qw is rebuilt from qx, qy, qz */
    uint64_t scalar_bytes;
} kiln__clip_facts;

/* The track table follows the clip's constant blocks (see the clip data layout in
 * kiln/blob_format.h); the loader has checked that it lies inside DATA. */
static const kiln_blob_anim_track *kiln__clip_tracks(const kiln__bview *v, const kiln_blob_animation *a)
{
    const unsigned char *base = (const unsigned char *)v->header;
    return (const kiln_blob_anim_track *)(const void *)(base + a->data_offset +
                                                        (uint64_t)a->block_count * sizeof(kiln_soa_xform));
}

static void kiln__clip_facts_of(const kiln__bview *v, uint32_t index, kiln__clip_facts *f)
{
    const kiln_blob_animation *a = &v->anims[index];
    const kiln_blob_anim_joint *joints = &v->anim_joints[a->first_joint];
    const kiln_blob_anim_track *tracks = kiln__clip_tracks(v, a);
    memset(f, 0, sizeof *f);
    f->duration_s = kiln_anim_duration(v->blob, index);
    for (uint32_t j = 0; j < a->joint_count; j++) {
        if (joints[j].name) f->named++;
        else f->placeholders++;
    }
    for (uint32_t k = 0; k < a->animated_count; k++)
        if (tracks[k].width <= KILN__MAX_WIDTH) f->widths[tracks[k].width]++;
    /* Tracks are sorted by (block, component): walk them alongside every pair. */
    uint32_t t = 0;
    for (uint32_t blk = 0; blk < a->block_count; blk++) {
        uint32_t stored = 0, lanes = a->joint_count - blk * KILN_SOA_WIDTH;
        if (lanes > KILN_SOA_WIDTH) lanes = KILN_SOA_WIDTH;
        for (; t < a->animated_count && tracks[t].block == blk; t++)
            if (tracks[t].component < KILN_ANIM_COMPONENTS) stored |= 1u << tracks[t].component;
        int rebuilt = (a->flags & KILN_ANIM_LOSSY) && (stored & KILN__QXYZ_MASK);
        f->rebuilt_qw += (uint32_t)rebuilt;
        for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) {
            if (stored >> c & 1u || (rebuilt && c == KILN__QW_COMPONENT)) continue;
            int curve = 0;
            for (uint32_t l = 0; l < lanes; l++) curve |= (joints[blk * KILN_SOA_WIDTH + l].modes >> (2 * c) & 3u) != 0;
            f->constant += (uint32_t)curve;
        }
    }
    f->scalar_bytes = (uint64_t)a->scalar_count * a->frame_count * sizeof(float);
}

static const char *kiln__anim_mode_name(uint32_t mode)
{
    static const char *const names[] = {"none", "absolute", "relative", "additive"};
    return mode < 4 ? names[mode] : "?";
}

static const char *kiln__scalar_kind_name(uint32_t kind, int json)
{
    if (kind == KILN_SCALAR_BLEND_SHAPE) return json ? "blend_shape" : "blend shape";
    if (kind == KILN_SCALAR_VISIBILITY) return "visibility";
    return "?";
}

static const char kiln__channel_letters[3] = {'t', 'r', 's'};

/* ---- text ---------------------------------------------------------------------------------------- */

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
    kiln__t_name(kiln__str(v, v->materials[material].name));
}

static void kiln__t_mesh(const kiln__bview *v, const kiln_blob_mesh *m)
{
    fputs("  mesh ", stdout);
    kiln__t_name(kiln__str(v, m->name));
    printf(": %u vertices, %u indices (%u triangles), %u streams", m->vertex_count, m->index_count,
           m->index_count / 3, m->stream_count);
    if (m->influences) printf(", skin %u influences %s", m->influences, m->skinning == KILN_SKIN_DUAL_QUAT ? "quaternion" : "linear");
    else fputs(", no skin", stdout);
    kiln__t_material_ref(v, m->material);
    fputs("\n    streams:", stdout);
    for (uint32_t s = 0; s < m->stream_count; s++) {
        const kiln_blob_stream *st = &v->streams[m->first_stream + s];
        printf("%s %s", s ? "," : "", kiln__semantic_name(st->semantic));
        if (st->semantic == KILN_ATTR_TEXCOORD || st->semantic == KILN_ATTR_COLOR) printf("%u", st->set);
        printf(" %s", kiln__format_name(st->format));
        if (st->format == KILN_FORMAT_U16xN || st->format == KILN_FORMAT_F32xN) printf("(%u)", st->components);
    }
    fputc('\n', stdout);
}

static void kiln__t_material(const kiln__bview *v, const kiln_blob_material *m)
{
    fputs("  material ", stdout);
    kiln__t_name(kiln__str(v, m->name));
    fputs(" (type ", stdout);
    kiln__cli_put_text(stdout, m->type ? kiln__str(v, m->type) : "none", "");
    printf("), %u slot%s\n", m->slot_count, m->slot_count == 1 ? "" : "s");
    for (uint32_t k = 0; k < m->slot_count; k++) {
        const kiln_blob_material_slot *s = &v->slots[m->first_slot + k];
        const char *name = kiln__str(v, s->name);
        fputs("    ", stdout);
        kiln__cli_put_text(stdout, name, "");
        for (size_t pad = strlen(name); pad < 12; pad++) fputc(' ', stdout);
        if (s->kind == KILN_SLOT_FILE) {
            fputs(" file ", stdout);
            kiln__t_name(kiln__str(v, s->path));
        } else {
            fputs(" color ", stdout);
            kiln__t_vec(s->rgba, 4);
            fputs(s->color_space ? " linear" : " srgb, linear ", stdout);
            if (!s->color_space) kiln__t_vec(s->rgba_linear, 4);
        }
        fputc('\n', stdout);
    }
}

static int kiln__default_transform(const kiln_blob_model *m)
{
    static const float p[3] = {0, 0, 0}, r[4] = {0, 0, 0, 1}, s[3] = {1, 1, 1};
    return !memcmp(m->position, p, sizeof p) && !memcmp(m->rotation, r, sizeof r) && !memcmp(m->scale, s, sizeof s);
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

static void kiln__t_model(const kiln__bview *v, const kiln_blob_model *m)
{
    fputs("model ", stdout);
    kiln__t_name(kiln__str(v, m->name));
    printf(" (source %u)\n", m->source);
    if (!kiln__default_transform(m)) {
        fputs("  transform:", stdout);
        kiln__t_transform(m->position, m->rotation, m->scale);
        fputc('\n', stdout);
    }
    if (m->skeleton != KILN_BLOB_NONE) {
        const kiln_blob_skeleton *sk = &v->skeletons[m->skeleton];
        uint32_t roots = kiln__root_count(v, sk);
        printf("  skeleton: %u bone%s, depth %u, %u root%s, %u rest-pose block%s\n", sk->bone_count,
               sk->bone_count == 1 ? "" : "s", sk->depth, roots, roots == 1 ? "" : "s", sk->soa_count,
               sk->soa_count == 1 ? "" : "s");
    }
    for (uint32_t i = 0; i < m->mesh_count; i++) kiln__t_mesh(v, &v->meshes[m->first_mesh + i]);
    for (uint32_t i = 0; i < m->hair_count; i++) {
        const kiln_blob_hair *h = &v->hairs[m->first_hair + i];
        fputs("  hair ", stdout);
        kiln__t_name(kiln__str(v, h->name));
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
    kiln__clip_facts_of(v, index, &f);
    fputs("animation ", stdout);
    kiln__t_name(kiln__str(v, a->name));
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
            kiln__t_name(kiln__str(v, sc->name));
            printf(" %s", kiln__scalar_kind_name(sc->kind, 0));
        }
        fputc('\n', stdout);
    }
    if (a->override_count) {
        fputs("  mode overrides:", stdout);
        for (uint32_t i = 0; i < a->override_count; i++) {
            const kiln_blob_anim_override *o = &v->anim_overrides[a->first_override + i];
            fputs(i ? ", " : " ", stdout);
            kiln__t_name(kiln__str(v, o->name));
            printf(" %s on ", kiln__anim_mode_name(o->mode));
            int any = 0;
            for (unsigned g = 0; g < 3; g++)
                if (o->channels >> g & 1u) printf("%s%c", any++ ? "," : "", kiln__channel_letters[g]);
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
            kiln__t_name(kiln__str(v, e->name));
            printf(" @ %lld", (long long)e->frame);
        }
        if (shown < a->event_count) printf(", ... %u more", a->event_count - shown);
        fputc('\n', stdout);
    }
}

/* Instances listed per reference in the text output; the rest are counted. */
#define KILN__TEXT_INSTANCES 3u

static void kiln__t_print(const kiln__bview *v)
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
        if (v->meta->author) { fputs(", author ", stdout); kiln__t_name(kiln__str(v, v->meta->author)); }
        if (v->meta->software) { fputs(", software ", stdout); kiln__t_name(kiln__str(v, v->meta->software)); }
        if (kiln__up_name(v->meta->up_axis)) printf(", up %s", kiln__up_name(v->meta->up_axis));
        if (v->meta->scene_root) { fputs(", scene root ", stdout); kiln__t_name(kiln__str(v, v->meta->scene_root)); }
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
            kiln__t_name(kiln__str(v, ref->path));
            fputs(" -> ", stdout);
            kiln__t_name(kiln__str(v, ref->resolved_path));
            fputc('\n', stdout);
            /* a few of its instances with their transforms; --json lists them all */
            uint32_t shown = ref->instance_count < KILN__TEXT_INSTANCES ? ref->instance_count : KILN__TEXT_INSTANCES;
            for (uint32_t k = 0; k < shown; k++) {
                const kiln_blob_instance *in = &v->instances[ref->first_instance + k];
                fputs("          ", stdout);
                kiln__t_name(kiln__str(v, in->name));
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

/* ---- JSON ---------------------------------------------------------------------------------------- */

static void kiln__j_str(kiln__json *j, const kiln__bview *v, const char *key, uint32_t offset)
{
    kiln__json_key_string(j, key, kiln__str(v, offset));
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
        kiln__json_key_string(j, "semantic", kiln__semantic_name(st->semantic));
        kiln__json_key_u64(j, "set", st->set);
        kiln__json_key_string(j, "format", kiln__format_name(st->format));
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
        kiln__json_key_u64(j, "roots", kiln__root_count(v, sk));
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
    kiln__clip_facts_of(v, index, &f);
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
        kiln__json_key_string(j, "kind", kiln__scalar_kind_name(sc->kind, 1));
        kiln__json_end_object(j);
    }
    kiln__json_end_array(j);
    kiln__json_key(j, "mode_overrides");
    kiln__json_begin_array(j);
    for (uint32_t i = 0; i < a->override_count; i++) {
        const kiln_blob_anim_override *o = &v->anim_overrides[a->first_override + i];
        kiln__json_begin_object_inline(j);
        kiln__j_str(j, v, "bone", o->name);
        kiln__json_key_string(j, "mode", kiln__anim_mode_name(o->mode));
        kiln__json_key(j, "channels");
        kiln__json_begin_array_inline(j);
        for (unsigned g = 0; g < 3; g++) {
            char letter[2] = {kiln__channel_letters[g], 0};
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

static void kiln__j_print(const kiln__bview *v)
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
    kiln__json_key_string(&j, "up", v->meta ? kiln__up_name(v->meta->up_axis) : NULL);
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

int kiln__inspect_blob(const char *path, const void *data, size_t size, int json)
{
    /* The loader reads in place and needs KILN_BLOB_ALIGN; the CLI's buffers are malloc'd. */
    void *mem = NULL;
    if (posix_memalign(&mem, KILN_BLOB_ALIGN, size ? size : 1) != 0) {
        fprintf(stderr, KILN_CLI_NAME ": out of memory while reading '%s'\n", path);
        return KILN_EXIT_INPUT;
    }
    memcpy(mem, data, size);
    const kiln_blob *blob = NULL;
    kiln_diag err;
    memset(&err, 0, sizeof err);
    int status = KILN_EXIT_OK;
    if (kiln_blob_load(mem, size, 0, &blob, &err) != KILN_OK) {
        kiln__cli_print_blob_diag(stderr, path, &err);
        status = KILN_EXIT_INPUT;
    } else {
        kiln__bview v;
        kiln__bview_init(&v, blob, path, size);
        if (json) kiln__j_print(&v);
        else kiln__t_print(&v);
    }
    free(mem);
    return status;
}
