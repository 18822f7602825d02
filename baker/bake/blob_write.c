/* The blob builder: interned strings, record tables, and the final layout (blob_format.h). */
#include <stdlib.h>
#include <string.h>

#include "blob_write.h"
#include "util.h"
#include "ds.h"
#include "kiln/blob.h"

void kiln__builder_init(kiln__blob_builder *b)
{
    memset(b, 0, sizeof *b);
    stbds_sh_new_arena(b->string_map);
    stbds_arrput(b->strings, '\0');
}

void kiln__builder_free(kiln__blob_builder *b, const kiln_allocator *a)
{
    kiln__ds_ctx ds;
    kiln__ds_enter(&ds, a); /* frees never jump */
    stbds_arrfree(b->strings);
    stbds_shfree(b->string_map);
    stbds_arrfree(b->names);
    stbds_arrfree(b->models);
    stbds_arrfree(b->skeletons);
    stbds_arrfree(b->bones);
    stbds_arrfree(b->rest);
    stbds_arrfree(b->inverse_binds);
    stbds_arrfree(b->meshes);
    stbds_arrfree(b->hairs);
    stbds_arrfree(b->streams);
    stbds_arrfree(b->chunks);
    stbds_arrfree(b->materials);
    stbds_arrfree(b->slots);
    stbds_arrfree(b->instances);
    stbds_arrfree(b->references);
    stbds_arrfree(b->reference_models);
    stbds_arrfree(b->animations);
    stbds_arrfree(b->anim_joints);
    stbds_arrfree(b->anim_scalars);
    stbds_arrfree(b->anim_overrides);
    stbds_arrfree(b->anim_events);
    stbds_arrfree(b->blend_shapes);
    stbds_arrfree(b->constraints);
    stbds_arrfree(b->ik_handles);
    kiln__ds_leave(&ds);
    memset(b, 0, sizeof *b);
}

uint32_t kiln__builder_string(kiln__blob_builder *b, const char *s)
{
    if (!s || !s[0]) return 0;
    ptrdiff_t at = stbds_shgeti(b->string_map, s);
    if (at >= 0) return b->string_map[at].value;
    size_t len = strlen(s) + 1;
    uint32_t offset = (uint32_t)stbds_arrlenu(b->strings);
    memcpy(stbds_arraddnptr(b->strings, len), s, len);
    /* The arena copies the key, so the map never points into the growing table. */
    stbds_shput(b->string_map, (char *)s, offset);
    return offset;
}

uint32_t kiln__builder_name(kiln__blob_builder *b, uint32_t kind, uint32_t index, const char *name)
{
    uint32_t offset = kiln__builder_string(b, name);
    if (offset) {
        kiln_blob_name_entry e;
        memset(&e, 0, sizeof e);
        e.kind = kind;
        e.hash = kiln_name_hash(name);
        e.index = index;
        e.name = offset;
        stbds_arrput(b->names, e);
    }
    return offset;
}

uint64_t kiln__builder_data(kiln__blob_builder *b, const void *data, uint64_t size)
{
    kiln__blob_chunk chunk;
    chunk.data = data;
    chunk.size = size;
    chunk.offset = (b->data_size + (KILN_BLOB_DATA_ALIGN - 1)) & ~(uint64_t)(KILN_BLOB_DATA_ALIGN - 1);
    b->data_size = chunk.offset + chunk.size;
    stbds_arrput(b->chunks, chunk);
    return chunk.offset;
}

uint32_t kiln__builder_stream(kiln__blob_builder *b, const kiln_blob_stream *desc, const void *data)
{
    kiln_blob_stream s = *desc;
    s.offset = kiln__builder_data(b, data, (uint64_t)desc->count * desc->stride);
    memset(s.reserved, 0, sizeof s.reserved);
    stbds_arrput(b->streams, s);
    return (uint32_t)stbds_arrlenu(b->streams) - 1;
}

/* ---- layout ----------------------------------------------------------------------------------- */

/* The fixed section order: small records first, in the order blob_format.h lists them, and
 * the bulk DATA last so that loading the records touches one contiguous prefix. */
static const uint32_t kiln__section_order[KILN__SECTION_KINDS] = {
    KILN_SECTION_STRINGS,   KILN_SECTION_METADATA,  KILN_SECTION_NAME_INDEX,   KILN_SECTION_MODELS,
    KILN_SECTION_SKELETONS, KILN_SECTION_BONES,     KILN_SECTION_REST_POSE,    KILN_SECTION_INVERSE_BIND,
    KILN_SECTION_MESHES,    KILN_SECTION_HAIRS,     KILN_SECTION_STREAMS,      KILN_SECTION_MATERIALS,
    KILN_SECTION_MATERIAL_SLOTS, KILN_SECTION_INSTANCES, KILN_SECTION_REFERENCES, KILN_SECTION_ANIMATIONS,
    KILN_SECTION_ANIM_JOINTS, KILN_SECTION_ANIM_SCALARS, KILN_SECTION_ANIM_OVERRIDES, KILN_SECTION_ANIM_EVENTS,
    KILN_SECTION_BLEND_SHAPES, KILN_SECTION_CONSTRAINTS, KILN_SECTION_IK_HANDLES, KILN_SECTION_REFERENCE_MODELS,
    KILN_SECTION_DATA,
};

static int kiln__section_slot(uint32_t kind)
{
    for (int i = 0; i < KILN__SECTION_KINDS; i++)
        if (kiln__section_order[i] == kind) return i;
    return -1;
}

void kiln__builder_count_input(kiln__blob_builder *b, uint32_t kind, uint64_t bytes)
{
    int slot = kiln__section_slot(kind);
    if (slot >= 0) b->input_bytes[slot] += bytes;
}

typedef struct kiln__section_src {
    const void *data;   /* NULL for DATA (written from the chunks) */
    uint64_t    count;  /* records; bytes for byte sections */
    uint32_t    stride; /* 0: byte section */
} kiln__section_src;

static kiln__section_src kiln__src(const void *data, size_t count, size_t stride)
{
    kiln__section_src s = {data, count, (uint32_t)stride};
    return s;
}

static void kiln__sources(const kiln__blob_builder *b, kiln__section_src *src)
{
    src[0] = kiln__src(b->strings, stbds_arrlenu(b->strings), 0);
    src[1] = kiln__src(&b->metadata, 1, sizeof b->metadata);
    src[2] = kiln__src(b->names, stbds_arrlenu(b->names), sizeof *b->names);
    src[3] = kiln__src(b->models, stbds_arrlenu(b->models), sizeof *b->models);
    src[4] = kiln__src(b->skeletons, stbds_arrlenu(b->skeletons), sizeof *b->skeletons);
    src[5] = kiln__src(b->bones, stbds_arrlenu(b->bones), sizeof *b->bones);
    src[6] = kiln__src(b->rest, stbds_arrlenu(b->rest), sizeof *b->rest);
    src[7] = kiln__src(b->inverse_binds, stbds_arrlenu(b->inverse_binds), sizeof *b->inverse_binds);
    src[8] = kiln__src(b->meshes, stbds_arrlenu(b->meshes), sizeof *b->meshes);
    src[9] = kiln__src(b->hairs, stbds_arrlenu(b->hairs), sizeof *b->hairs);
    src[10] = kiln__src(b->streams, stbds_arrlenu(b->streams), sizeof *b->streams);
    src[11] = kiln__src(b->materials, stbds_arrlenu(b->materials), sizeof *b->materials);
    src[12] = kiln__src(b->slots, stbds_arrlenu(b->slots), sizeof *b->slots);
    src[13] = kiln__src(b->instances, stbds_arrlenu(b->instances), sizeof *b->instances);
    src[14] = kiln__src(b->references, stbds_arrlenu(b->references), sizeof *b->references);
    src[15] = kiln__src(b->animations, stbds_arrlenu(b->animations), sizeof *b->animations);
    src[16] = kiln__src(b->anim_joints, stbds_arrlenu(b->anim_joints), sizeof *b->anim_joints);
    src[17] = kiln__src(b->anim_scalars, stbds_arrlenu(b->anim_scalars), sizeof *b->anim_scalars);
    src[18] = kiln__src(b->anim_overrides, stbds_arrlenu(b->anim_overrides), sizeof *b->anim_overrides);
    src[19] = kiln__src(b->anim_events, stbds_arrlenu(b->anim_events), sizeof *b->anim_events);
    src[20] = kiln__src(b->blend_shapes, stbds_arrlenu(b->blend_shapes), sizeof *b->blend_shapes);
    src[21] = kiln__src(b->constraints, stbds_arrlenu(b->constraints), sizeof *b->constraints);
    src[22] = kiln__src(b->ik_handles, stbds_arrlenu(b->ik_handles), sizeof *b->ik_handles);
    src[23] = kiln__src(b->reference_models, stbds_arrlenu(b->reference_models), sizeof *b->reference_models);
    src[24] = kiln__src(NULL, b->data_size, 0);
}

static int kiln__cmp_name_entry(const void *pa, const void *pb)
{
    const kiln_blob_name_entry *a = pa, *b = pb;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    if (a->hash != b->hash) return a->hash < b->hash ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static uint64_t kiln__align64(uint64_t v) { return (v + (KILN_BLOB_ALIGN - 1)) & ~(uint64_t)(KILN_BLOB_ALIGN - 1); }

static int kiln__lossy(uint32_t format)
{
    return format == KILN_FORMAT_UNORM16x4 || format == KILN_FORMAT_OCT16x2 || format == KILN_FORMAT_UNORM16x2;
}

kiln_result kiln__builder_finish(kiln__blob_builder *b, const kiln_allocator *a, void **blob, size_t *size,
                                 kiln_bake_stats *stats)
{
    *blob = NULL;
    *size = 0;
    if (stbds_arrlenu(b->names)) qsort(b->names, stbds_arrlenu(b->names), sizeof *b->names, kiln__cmp_name_entry);

    kiln__section_src src[KILN__SECTION_KINDS];
    kiln__sources(b, src);
    kiln_blob_section table[KILN__SECTION_KINDS];
    int slot_of[KILN__SECTION_KINDS];
    uint32_t n = 0;
    for (int i = 0; i < KILN__SECTION_KINDS; i++) {
        uint32_t kind = kiln__section_order[i];
        /* STRS and META are always present, so a reader can rely on them. */
        if (src[i].count == 0 && kind != KILN_SECTION_STRINGS && kind != KILN_SECTION_METADATA) continue;
        if (src[i].stride && src[i].count > UINT32_MAX) return KILN_ERR_LIMIT;
        memset(&table[n], 0, sizeof table[n]);
        table[n].kind = kind;
        table[n].version = 1;
        table[n].count = src[i].stride ? (uint32_t)src[i].count : 0;
        table[n].stride = src[i].stride;
        table[n].size = src[i].stride ? src[i].count * src[i].stride : src[i].count;
        slot_of[n++] = i;
    }
    uint64_t at = kiln__align64(sizeof(kiln_blob_header) + (uint64_t)n * sizeof(kiln_blob_section));
    uint64_t data_offset = 0;
    for (uint32_t k = 0; k < n; k++) {
        table[k].offset = at;
        if (table[k].kind == KILN_SECTION_DATA) data_offset = at;
        at = kiln__align64(at + table[k].size);
    }
    if (at > SIZE_MAX - KILN_BLOB_ALIGN) return KILN_ERR_LIMIT;
    uint8_t *out = kiln__aligned_alloc(a, (size_t)at, KILN_BLOB_ALIGN);
    if (!out) return KILN_ERR_OUT_OF_MEMORY;

    uint32_t flags = 0;
    for (size_t i = 0; i < stbds_arrlenu(b->streams); i++) {
        if (kiln__lossy(b->streams[i].format)) flags |= KILN_BLOB_FLAG_QUANTIZED;
    }
    for (size_t i = 0; i < stbds_arrlenu(b->animations); i++)
        if (b->animations[i].flags & KILN_ANIM_LOSSY) flags |= KILN_BLOB_FLAG_QUANTIZED;
    for (uint32_t k = 0; k < n; k++) {
        const kiln__section_src *s = &src[slot_of[k]];
        if (table[k].kind == KILN_SECTION_DATA) {
            for (size_t c = 0; c < stbds_arrlenu(b->chunks); c++)
                if (b->chunks[c].size) memcpy(out + data_offset + b->chunks[c].offset, b->chunks[c].data, b->chunks[c].size);
        } else if (table[k].kind == KILN_SECTION_STREAMS) {
            kiln_blob_stream *dst = (kiln_blob_stream *)(out + table[k].offset);
            memcpy(dst, s->data, table[k].size);
            for (uint32_t i = 0; i < table[k].count; i++) dst[i].offset += data_offset;
        } else if (table[k].kind == KILN_SECTION_ANIMATIONS) {
            kiln_blob_animation *dst = (kiln_blob_animation *)(out + table[k].offset);
            memcpy(dst, s->data, table[k].size);
            for (uint32_t i = 0; i < table[k].count; i++) dst[i].data_offset += data_offset;
        } else if (table[k].kind == KILN_SECTION_BLEND_SHAPES) {
            kiln_blob_blend_shape *dst = (kiln_blob_blend_shape *)(out + table[k].offset);
            memcpy(dst, s->data, table[k].size);
            for (uint32_t i = 0; i < table[k].count; i++) {
                dst[i].indices_offset += data_offset;
                dst[i].deltas_offset += data_offset;
            }
        } else if (table[k].kind == KILN_SECTION_ANIM_SCALARS) {
            kiln_blob_anim_scalar *dst = (kiln_blob_anim_scalar *)(out + table[k].offset);
            memcpy(dst, s->data, table[k].size);
            for (uint32_t i = 0; i < table[k].count; i++) dst[i].data_offset += data_offset;
        } else if (table[k].size) {
            memcpy(out + table[k].offset, s->data, table[k].size);
        }
    }
    memcpy(out + sizeof(kiln_blob_header), table, (size_t)n * sizeof *table);

    kiln_blob_header h;
    memset(&h, 0, sizeof h);
    h.magic = KILN_BLOB_MAGIC;
    h.version_major = KILN_BLOB_VERSION_MAJOR;
    /* The lowest minor that describes the blob: 1.3 added only REFERENCE_MODELS. */
    h.version_minor = stbds_arrlenu(b->reference_models) ? KILN_BLOB_VERSION_MINOR : 2;
    h.flags = flags;
    h.header_size = sizeof h;
    h.total_size = at;
    h.section_count = n;
    h.section_table_offset = sizeof h;
    /* The checksum covers the whole blob, the header included with this field read as zero
     * (blob_format.h): h.crc32c is still 0 here. */
    h.crc32c = kiln_crc32c(kiln_crc32c(0, &h, sizeof h), out + sizeof h, (size_t)(at - sizeof h));
    memcpy(out, &h, sizeof h);

    stats->section_count = 0;
    for (uint32_t k = 0; k < n && k < sizeof stats->sections / sizeof stats->sections[0]; k++) {
        kiln_bake_section_stats *ss = &stats->sections[stats->section_count++];
        ss->kind = table[k].kind;
        ss->count = table[k].count;
        ss->input_bytes = b->input_bytes[slot_of[k]];
        ss->output_bytes = table[k].size;
    }
    stats->output_bytes = at;
    *blob = out;
    *size = (size_t)at;
    return KILN_OK;
}
