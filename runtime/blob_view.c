/* Typed views into a loaded blob, strings, streams and name lookups.
 *
 * A kiln_blob is the verified memory itself; every accessor finds its section in the table
 * (a dozen entries, scanned linearly) and re-checks the entry's bounds before returning a
 * pointer. Full verification already guarantees those bounds; repeating the O(1) check keeps
 * views inside the blob also for KILN_BLOB_LOAD_TRUSTED loads of content that was not what
 * the caller believed it to be.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "blob_internal.h"
#include "kiln/blob.h"

/* ---- kinds and formats ------------------------------------------------------------------ */
static const struct {
    uint32_t kind;
    uint32_t stride;
} kiln__kinds[KILN__S_COUNT] = {
    [KILN__S_STRINGS] = {KILN_SECTION_STRINGS, 0},
    [KILN__S_METADATA] = {KILN_SECTION_METADATA, sizeof(kiln_blob_metadata)},
    [KILN__S_NAME_INDEX] = {KILN_SECTION_NAME_INDEX, sizeof(kiln_blob_name_entry)},
    [KILN__S_MODELS] = {KILN_SECTION_MODELS, sizeof(kiln_blob_model)},
    [KILN__S_SKELETONS] = {KILN_SECTION_SKELETONS, sizeof(kiln_blob_skeleton)},
    [KILN__S_BONES] = {KILN_SECTION_BONES, sizeof(kiln_blob_bone)},
    [KILN__S_REST_POSE] = {KILN_SECTION_REST_POSE, sizeof(kiln_soa_xform)},
    [KILN__S_INVERSE_BIND] = {KILN_SECTION_INVERSE_BIND, 16 * sizeof(float)},
    [KILN__S_MESHES] = {KILN_SECTION_MESHES, sizeof(kiln_blob_mesh)},
    [KILN__S_HAIRS] = {KILN_SECTION_HAIRS, sizeof(kiln_blob_hair)},
    [KILN__S_STREAMS] = {KILN_SECTION_STREAMS, sizeof(kiln_blob_stream)},
    [KILN__S_DATA] = {KILN_SECTION_DATA, 0},
    [KILN__S_MATERIALS] = {KILN_SECTION_MATERIALS, sizeof(kiln_blob_material)},
    [KILN__S_MATERIAL_SLOTS] = {KILN_SECTION_MATERIAL_SLOTS, sizeof(kiln_blob_material_slot)},
    [KILN__S_INSTANCES] = {KILN_SECTION_INSTANCES, sizeof(kiln_blob_instance)},
    [KILN__S_REFERENCES] = {KILN_SECTION_REFERENCES, sizeof(kiln_blob_reference)},
};

int kiln__kind_slot(uint32_t kind)
{
    for (int i = 0; i < KILN__S_COUNT; i++)
        if (kiln__kinds[i].kind == kind) return i;
    return -1;
}

uint32_t kiln__slot_kind(int slot) { return kiln__kinds[slot].kind; }
uint32_t kiln__slot_stride(int slot) { return kiln__kinds[slot].stride; }

/* Indexed by KILN_FORMAT_*: fixed bytes, value bytes (also the stride alignment), values, float. */
static const kiln__format_info kiln__formats[] = {
    [KILN_FORMAT_F32x1] = {4, 4, 1, 1},
    [KILN_FORMAT_F32x2] = {8, 4, 2, 1},
    [KILN_FORMAT_F32x3] = {12, 4, 3, 1},
    [KILN_FORMAT_F32x4] = {16, 4, 4, 1},
    [KILN_FORMAT_U8x4_UNORM] = {4, 4, 1, 0}, /* one packed 32-bit value */
    [KILN_FORMAT_U16x1] = {2, 2, 1, 0},
    [KILN_FORMAT_U32x1] = {4, 4, 1, 0},
    [KILN_FORMAT_U16xN] = {0, 2, 0, 0},
    [KILN_FORMAT_F32xN] = {0, 4, 0, 1},
    [KILN_FORMAT_UNORM16x4] = {8, 2, 4, 0},
    [KILN_FORMAT_OCT16x2] = {4, 2, 2, 0},
    [KILN_FORMAT_UNORM16x2] = {4, 2, 2, 0},
};

const kiln__format_info *kiln__format(uint32_t format)
{
    if (format == 0 || format >= sizeof kiln__formats / sizeof kiln__formats[0]) return NULL;
    return &kiln__formats[format];
}

uint64_t kiln__element_bytes(const kiln__format_info *info, uint32_t components)
{
    return info->fixed_bytes ? info->fixed_bytes : (uint64_t)info->scalar_bytes * components;
}

/* ---- sections --------------------------------------------------------------------------- */
static const unsigned char *kiln__base(const kiln_blob *blob) { return (const unsigned char *)blob; }

const kiln_blob_header *kiln_blob_header_of(const kiln_blob *blob) { return (const kiln_blob_header *)blob; }

const kiln_blob_section *kiln_blob_sections(const kiln_blob *blob, uint32_t *count)
{
    if (count) *count = 0;
    if (!blob) return NULL;
    const kiln_blob_header *h = kiln_blob_header_of(blob);
    if ((uint64_t)h->section_table_offset + (uint64_t)h->section_count * sizeof(kiln_blob_section) > h->total_size ||
        h->section_table_offset % 8 != 0)
        return NULL;
    if (count) *count = h->section_count;
    return (const kiln_blob_section *)(kiln__base(blob) + h->section_table_offset);
}

const kiln_blob_section *kiln_blob_find_section(const kiln_blob *blob, uint32_t kind)
{
    uint32_t n;
    const kiln_blob_section *s = kiln_blob_sections(blob, &n);
    for (uint32_t i = 0; i < n; i++)
        if (s[i].kind == kind) return &s[i];
    return NULL;
}

const void *kiln__records(const kiln_blob *blob, uint32_t kind, uint32_t stride, uint32_t *count, uint64_t *bytes)
{
    if (count) *count = 0;
    if (bytes) *bytes = 0;
    const kiln_blob_section *s = kiln_blob_find_section(blob, kind);
    if (!s) return NULL;
    uint64_t total = kiln_blob_header_of(blob)->total_size;
    if (s->version != KILN__SECTION_VERSION || s->stride != stride || s->offset % KILN_BLOB_ALIGN != 0 ||
        s->offset > total || s->size > total - s->offset || (uint64_t)s->count * stride != (stride ? s->size : 0))
        return NULL;
    if (count) *count = s->count;
    if (bytes) *bytes = s->size;
    return kiln__base(blob) + s->offset;
}

const char *kiln_blob_kind_name(uint32_t kind, char buf[5])
{
    for (int i = 0; i < 4; i++) {
        unsigned char c = (unsigned char)(kind >> (8 * i));
        buf[i] = (c >= 0x20 && c < 0x7F) ? (char)c : '?';
    }
    buf[4] = '\0';
    return buf;
}

/* ---- typed views ----------------------------------------------------------------------- */
KILN__RECORDS_VIEW(kiln_blob_models, kiln_blob_model, KILN_SECTION_MODELS)
KILN__RECORDS_VIEW(kiln_blob_skeletons, kiln_blob_skeleton, KILN_SECTION_SKELETONS)
KILN__RECORDS_VIEW(kiln_blob_bones, kiln_blob_bone, KILN_SECTION_BONES)
KILN__RECORDS_VIEW(kiln_blob_rest_pose, kiln_soa_xform, KILN_SECTION_REST_POSE)
KILN__RECORDS_VIEW(kiln_blob_meshes, kiln_blob_mesh, KILN_SECTION_MESHES)
KILN__RECORDS_VIEW(kiln_blob_hairs, kiln_blob_hair, KILN_SECTION_HAIRS)
KILN__RECORDS_VIEW(kiln_blob_streams, kiln_blob_stream, KILN_SECTION_STREAMS)
KILN__RECORDS_VIEW(kiln_blob_materials, kiln_blob_material, KILN_SECTION_MATERIALS)
KILN__RECORDS_VIEW(kiln_blob_material_slots, kiln_blob_material_slot, KILN_SECTION_MATERIAL_SLOTS)
KILN__RECORDS_VIEW(kiln_blob_instances, kiln_blob_instance, KILN_SECTION_INSTANCES)
KILN__RECORDS_VIEW(kiln_blob_references, kiln_blob_reference, KILN_SECTION_REFERENCES)
KILN__RECORDS_VIEW(kiln_blob_name_index, kiln_blob_name_entry, KILN_SECTION_NAME_INDEX)

const float *kiln_blob_inverse_binds(const kiln_blob *blob, uint32_t *count)
{
    uint32_t n;
    const float *p = (const float *)kiln__records(blob, KILN_SECTION_INVERSE_BIND, 16 * sizeof(float), &n, NULL);
    if (count) *count = n;
    return n ? p : NULL;
}

const kiln_blob_metadata *kiln_blob_metadata_of(const kiln_blob *blob)
{
    uint32_t n;
    const kiln_blob_metadata *m =
        (const kiln_blob_metadata *)kiln__records(blob, KILN_SECTION_METADATA, sizeof(kiln_blob_metadata), &n, NULL);
    return n ? m : NULL;
}

/* ---- strings and streams ---------------------------------------------------------------- */
const char *kiln_blob_string(const kiln_blob *blob, uint32_t offset)
{
    uint64_t size;
    const char *s = (const char *)kiln__records(blob, KILN_SECTION_STRINGS, 0, NULL, &size);
    /* The last byte is NUL (verified, and re-checked here), so any offset below the size
     * starts a string that ends inside the table. */
    if (!s || offset >= size || s[size - 1] != '\0') return "";
    return s + offset;
}

const void *kiln_blob_stream_data(const kiln_blob *blob, const kiln_blob_stream *stream)
{
    if (!blob || !stream) return NULL;
    uint64_t total = kiln_blob_header_of(blob)->total_size;
    uint64_t bytes = (uint64_t)stream->count * stream->stride;
    if (stream->offset % KILN_BLOB_DATA_ALIGN != 0 || stream->offset > total || bytes > total - stream->offset)
        return NULL;
    return kiln__base(blob) + stream->offset;
}

const kiln_blob_stream *kiln_blob_mesh_stream(const kiln_blob *blob, const kiln_blob_mesh *mesh, uint32_t semantic,
                                              uint32_t set)
{
    uint32_t n;
    const kiln_blob_stream *streams = kiln_blob_streams(blob, &n);
    if (!mesh || !streams || mesh->first_stream > n || mesh->stream_count > n - mesh->first_stream) return NULL;
    for (uint32_t i = 0; i < mesh->stream_count; i++) {
        const kiln_blob_stream *s = &streams[mesh->first_stream + i];
        if (s->semantic == semantic && s->set == set) return s;
    }
    return NULL;
}

/* ---- names ------------------------------------------------------------------------------ */
uint32_t kiln_name_hash(const char *name)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 16777619u;
    return h;
}

/* Number of records of a known kind, for the defensive index check in lookups; unknown kinds
 * (from newer minors) pass through. */
static int kiln__index_ok(const kiln_blob *blob, uint32_t kind, uint32_t index)
{
    int slot = kiln__kind_slot(kind);
    if (slot < 0) return 1;
    uint32_t n;
    if (!kiln__records(blob, kind, kiln__slot_stride(slot), &n, NULL)) return 0;
    return index < n;
}

/* First entry with (kind, hash) >= the key, by binary search. */
static uint32_t kiln__lower_bound(const kiln_blob_name_entry *e, uint32_t n, uint32_t kind, uint32_t hash)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (e[mid].kind < kind || (e[mid].kind == kind && e[mid].hash < hash)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

uint32_t kiln_blob_find(const kiln_blob *blob, uint32_t kind, const char *name)
{
    uint32_t n;
    const kiln_blob_name_entry *e = kiln_blob_name_index(blob, &n);
    if (!e || !name) return KILN_BLOB_NONE;
    uint32_t hash = kiln_name_hash(name);
    for (uint32_t i = kiln__lower_bound(e, n, kind, hash); i < n && e[i].kind == kind && e[i].hash == hash; i++)
        if (strcmp(kiln_blob_string(blob, e[i].name), name) == 0 && kiln__index_ok(blob, kind, e[i].index))
            return e[i].index;
    return KILN_BLOB_NONE;
}

uint32_t kiln_blob_find_bone(const kiln_blob *blob, uint32_t skeleton, const char *name)
{
    uint32_t ns, n;
    const kiln_blob_skeleton *sk = kiln_blob_skeletons(blob, &ns);
    const kiln_blob_name_entry *e = kiln_blob_name_index(blob, &n);
    if (!sk || !e || !name || skeleton >= ns) return KILN_BLOB_NONE;
    uint32_t first = sk[skeleton].first_bone, count = sk[skeleton].bone_count;
    uint32_t hash = kiln_name_hash(name);
    for (uint32_t i = kiln__lower_bound(e, n, KILN_SECTION_BONES, hash);
         i < n && e[i].kind == KILN_SECTION_BONES && e[i].hash == hash; i++) {
        uint32_t index = e[i].index;
        if (index >= first && index - first < count && strcmp(kiln_blob_string(blob, e[i].name), name) == 0 &&
            kiln__index_ok(blob, KILN_SECTION_BONES, index))
            return index - first;
    }
    return KILN_BLOB_NONE;
}
