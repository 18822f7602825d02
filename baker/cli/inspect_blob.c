/* `kiln inspect` on a baked blob: what the runtime will see, read only through the public
 * loader and views (kiln/blob.h), so the summary doubles as a check of those views. This file
 * loads the blob and gathers the view (inspect_blob_view.h); inspect_blob_text.c and
 * inspect_blob_json.c print it. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "inspect_blob.h"
#include "inspect_blob_view.h"

int kiln__is_blob(const void *data, size_t size)
{
    uint32_t magic;
    if (size < sizeof magic) return 0;
    memcpy(&magic, data, sizeof magic);
    return magic == KILN_BLOB_MAGIC;
}

const char *kiln__bview_semantic_name(uint32_t s)
{
    static const char *const names[] = {"?",        "POSITION", "NORMAL",  "TANGENT",       "TEXCOORD",      "COLOR",
                                        "JOINTS",   "WEIGHTS",  "INDICES", "HAIR_STRANDS",  "HAIR_PARTICLES"};
    return s < sizeof names / sizeof names[0] ? names[s] : "?";
}

const char *kiln__bview_format_name(uint32_t f)
{
    static const char *const names[] = {"?",     "F32x1", "F32x2",     "F32x3",    "F32x4",   "U8x4_UNORM", "U16x1",
                                        "U32x1", "U16xN", "F32xN", "UNORM16x4", "OCT16x2", "UNORM16x2"};
    return f < sizeof names / sizeof names[0] ? names[f] : "?";
}

const char *kiln__bview_up_name(uint32_t up)
{
    static const char *const names[] = {NULL, "x", "y", "z"};
    return up < 4 ? names[up] : NULL;
}

void kiln__bview_init(kiln__bview *v, const kiln_blob *blob, const char *path, size_t size)
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

const char *kiln__bview_str(const kiln__bview *v, uint32_t offset) { return kiln_blob_string(v->blob, offset); }

uint32_t kiln__bview_root_count(const kiln__bview *v, const kiln_blob_skeleton *sk)
{
    uint32_t roots = 0;
    for (uint32_t b = 0; b < sk->bone_count; b++) roots += v->bones[sk->first_bone + b].parent < 0;
    return roots;
}

/* ---- animation clips ----------------------------------------------------------------------- */

#define KILN__QW_COMPONENT 6u
#define KILN__QXYZ_MASK    0x38u /* components 3, 4, 5 */

/* The track table follows the clip's constant blocks (see the clip data layout in
 * kiln/blob_format.h); the loader has checked that it lies inside DATA. */
static const kiln_blob_anim_track *kiln__clip_tracks(const kiln__bview *v, const kiln_blob_animation *a)
{
    const unsigned char *base = (const unsigned char *)v->header;
    return (const kiln_blob_anim_track *)(const void *)(base + a->data_offset +
                                                        (uint64_t)a->block_count * sizeof(kiln_soa_xform));
}

void kiln__bview_clip_facts(const kiln__bview *v, uint32_t index, kiln__clip_facts *f)
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

const char *kiln__bview_mode_name(uint32_t mode)
{
    static const char *const names[] = {"none", "absolute", "relative", "additive"};
    return mode < 4 ? names[mode] : "?";
}

const char *kiln__bview_scalar_kind_name(uint32_t kind, int json)
{
    if (kind == KILN_SCALAR_BLEND_SHAPE) return json ? "blend_shape" : "blend shape";
    if (kind == KILN_SCALAR_VISIBILITY) return "visibility";
    return "?";
}

const char kiln__bview_channel_letters[3] = {'t', 'r', 's'};

int kiln__bview_default_transform(const kiln_blob_model *m)
{
    static const float p[3] = {0, 0, 0}, r[4] = {0, 0, 0, 1}, s[3] = {1, 1, 1};
    return !memcmp(m->position, p, sizeof p) && !memcmp(m->rotation, r, sizeof r) && !memcmp(m->scale, s, sizeof s);
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
        if (json) kiln__bview_print_json(&v);
        else kiln__bview_print_text(&v);
    }
    free(mem);
    return status;
}
