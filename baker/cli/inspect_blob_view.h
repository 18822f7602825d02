/* Private: the view of a verified blob that `kiln inspect` prints (inspect_blob.c), and what
 * its text and JSON printers (inspect_blob_text.c, inspect_blob_json.c) both derive from it. */
#ifndef KILN_BAKER_INSPECT_BLOB_VIEW_H
#define KILN_BAKER_INSPECT_BLOB_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/anim.h"
#include "kiln/blob.h"

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

void kiln__bview_init(kiln__bview *v, const kiln_blob *blob, const char *path, size_t size);

/* The string at `offset` of the string table. */
const char *kiln__bview_str(const kiln__bview *v, uint32_t offset);

/* Bones of the skeleton without a parent. */
uint32_t kiln__bview_root_count(const kiln__bview *v, const kiln_blob_skeleton *sk);

/* True when the model's transform is the identity. */
int kiln__bview_default_transform(const kiln_blob_model *m);

/* Names of enumerated values; "?" (NULL for the up axis) when out of range. */
const char *kiln__bview_semantic_name(uint32_t s);
const char *kiln__bview_format_name(uint32_t f);
const char *kiln__bview_up_name(uint32_t up);
const char *kiln__bview_mode_name(uint32_t mode);
const char *kiln__bview_scalar_kind_name(uint32_t kind, int json);  /* json: "blend_shape" */
extern const char kiln__bview_channel_letters[3];                   /* 't', 'r', 's' */

#define KILN__MAX_WIDTH 32u   /* bits per lane: quantised widths are below, 32 is a raw float */


/* What a clip's records and track table say about its storage, counted once for both printers. */
typedef struct kiln__clip_facts {
    double   duration_s;
    uint32_t named, placeholders;          /* joint slots with a bone name / without (name offset 0) */
    uint32_t widths[KILN__MAX_WIDTH + 1];  /* stored tracks by bits per lane */
    uint32_t constant;                     /* (block, component) pairs with a curve, stored once */
    uint32_t rebuilt_qw;                   /* lossy: blocks whose qw is rebuilt from qx, qy, qz */
    uint64_t scalar_bytes;
} kiln__clip_facts;

void kiln__bview_clip_facts(const kiln__bview *v, uint32_t index, kiln__clip_facts *f);

/* The printers, on stdout. */
void kiln__bview_print_text(const kiln__bview *v);  /* inspect_blob_text.c */
void kiln__bview_print_json(const kiln__bview *v);  /* inspect_blob_json.c */

#endif
