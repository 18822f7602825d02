/* Private: the blob builder (bake stage 3 and the tables stage 2 fills).
 *
 * Stage 2 appends records to the builder's tables in their final order and interns strings;
 * kiln__builder_finish then lays the blob out (blob_format.h): header, section table, then the
 * sections in one fixed order, each 64-byte aligned, DATA last; zero bytes in every gap and
 * reserved field; name index sorted; CRC-32C over the whole blob (its own field as zero). Identical
 * tables give identical bytes.
 *
 * The tables are stb_ds arrays, so every call that adds to them (strings, names, streams,
 * stbds_arrput on the tables) must run inside a kiln__ds_enter region with a setjmp on its
 * `oom` (see ds.h). kiln__builder_free and kiln__builder_finish need no such region.
 */
#ifndef KILN_BAKER_BLOB_WRITE_H
#define KILN_BAKER_BLOB_WRITE_H

#include "bake_internal.h"

/* A stream payload, referenced (not copied) until the blob is written: the unit that owns it
 * outlives the builder. */
typedef struct kiln__blob_chunk {
    const void *data;
    uint64_t    size;
    uint64_t    offset;   /* within DATA, 16-byte aligned */
} kiln__blob_chunk;

typedef struct kiln__string_slot {
    char    *key;
    uint32_t value;       /* offset in the string table */
} kiln__string_slot;

typedef struct kiln__mat16 {
    float m[16];
} kiln__mat16;

/* The section kinds a 1.3 blob can hold, in blob order. */
#define KILN__SECTION_KINDS 25

typedef struct kiln__blob_builder {
    char                    *strings;      /* "\0" then every interned string, NUL-terminated */
    kiln__string_slot       *string_map;   /* stb_ds string hash map (arena keys) */
    kiln_blob_metadata       metadata;
    kiln_blob_name_entry    *names;        /* unsorted until finish */
    kiln_blob_model         *models;
    kiln_blob_skeleton      *skeletons;
    kiln_blob_bone          *bones;
    kiln_soa_xform          *rest;
    kiln__mat16             *inverse_binds;
    kiln_blob_mesh          *meshes;
    kiln_blob_hair          *hairs;
    kiln_blob_stream        *streams;      /* offset: within DATA until finish */
    kiln__blob_chunk        *chunks;       /* one per stream */
    uint64_t                 data_size;
    kiln_blob_material      *materials;
    kiln_blob_material_slot *slots;
    kiln_blob_instance      *instances;
    kiln_blob_reference     *references;
    kiln_blob_animation     *animations;   /* data_offset: within DATA until finish */
    kiln_blob_anim_joint    *anim_joints;
    kiln_blob_anim_scalar   *anim_scalars; /* data_offset: within DATA until finish */
    kiln_blob_anim_override *anim_overrides;
    kiln_blob_anim_event    *anim_events;
    kiln_blob_blend_shape   *blend_shapes; /* indices/deltas offsets: within DATA until finish */
    kiln_blob_constraint    *constraints;
    kiln_blob_ik_handle     *ik_handles;
    kiln_blob_reference_model *reference_models; /* empty, or one per reference */
    uint64_t                 input_bytes[KILN__SECTION_KINDS]; /* per kind, for the statistics */
} kiln__blob_builder;

/* A zeroed builder whose string table holds "". Needs a ds region. */
void kiln__builder_init(kiln__blob_builder *b);
/* Releases every table (no ds region needed). Safe on a zeroed builder. */
void kiln__builder_free(kiln__blob_builder *b, const kiln_allocator *a);

/* Offset of `s` in the string table, adding it once. NULL and "" are 0. Needs a ds region. */
uint32_t kiln__builder_string(kiln__blob_builder *b, const char *s);

/* Interns `name` and, when it is not empty, adds a name index entry (kind, hash, index).
 * Returns the string offset. Needs a ds region. */
uint32_t kiln__builder_name(kiln__blob_builder *b, uint32_t kind, uint32_t index, const char *name);

/* Appends a stream descriptor and its payload (desc->count * desc->stride bytes at `data`,
 * referenced until finish). Returns the stream index. Needs a ds region. */
uint32_t kiln__builder_stream(kiln__blob_builder *b, const kiln_blob_stream *desc, const void *data);

/* Appends `size` bytes at `data` (referenced until finish) to DATA on a 16-byte boundary and
 * returns their offset within DATA. Needs a ds region. */
uint64_t kiln__builder_data(kiln__blob_builder *b, const void *data, uint64_t size);

/* Adds `bytes` of Cast input to the statistics of section `kind`. */
void kiln__builder_count_input(kiln__blob_builder *b, uint32_t kind, uint64_t bytes);

/* Lays out and writes the blob into a new KILN_BLOB_ALIGN-aligned block from `a` (free it with
 * kiln__aligned_free). Fills stats->sections, section_count and output_bytes. The builder's
 * name index is sorted in place; nothing else changes. Fails with ERR_OUT_OF_MEMORY or
 * ERR_LIMIT (a table too large for the format's 32-bit counts). */
kiln_result kiln__builder_finish(kiln__blob_builder *b, const kiln_allocator *a, void **blob, size_t *size,
                                 kiln_bake_stats *stats);

#endif
