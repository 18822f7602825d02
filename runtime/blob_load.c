/* kiln_blob_load: verify a blob in place.
 *
 * Verification runs in three steps, none of which allocates:
 *  1. the header (the only step of a trusted load, O(1));
 *  2. the section table and every record table: bounds, kinds, versions, strides, indices,
 *     ranges, strings, hashes, record floats (the 1.1 animation sections in
 *     blob_verify_anim.c). Record tables are small next to the payload;
 *  3. the bulk: REST_POSE, INVERSE_BIND and the stream payloads, walked in ascending offset
 *     order in cache-sized chunks. The CRC runs one chunk ahead of the payload checks, so each
 *     chunk is checked while it is still in L1/L2 and the blob streams through the cache once.
 *
 * With the checksum enabled, a structural error is only reported once the CRC has been found
 * to match: damaged bytes are reported as damage (ERR_BLOB_CHECKSUM), not as whatever record
 * they happened to break.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "blob_internal.h"
#include "blob_verify_anim.h"
#include "blob_verify_blend.h"
#include "blob_verify_refs.h"
#include "blob_verify_rig.h"
#include "kiln/blob.h"

/* ---- layout assertions: the format header is normative, these pin it ----------------------- */
_Static_assert(sizeof(kiln_blob_header) == 64, "header is 64 bytes");
_Static_assert(offsetof(kiln_blob_header, total_size) == 16, "header.total_size");
_Static_assert(offsetof(kiln_blob_header, section_count) == 24, "header.section_count");
_Static_assert(offsetof(kiln_blob_header, section_table_offset) == 28, "header.section_table_offset");
_Static_assert(offsetof(kiln_blob_header, crc32c) == 32, "header.crc32c");
_Static_assert(offsetof(kiln_blob_header, reserved) == 36, "header.reserved");
_Static_assert(sizeof(kiln_blob_section) == 32, "section entry is 32 bytes");
_Static_assert(offsetof(kiln_blob_section, offset) == 8, "section.offset");
_Static_assert(offsetof(kiln_blob_section, size) == 16, "section.size");
_Static_assert(offsetof(kiln_blob_section, count) == 24, "section.count");
_Static_assert(sizeof(kiln_blob_metadata) == 32, "metadata");
_Static_assert(sizeof(kiln_blob_name_entry) == 16, "name entry");
_Static_assert(sizeof(kiln_blob_model) == 80, "model");
_Static_assert(offsetof(kiln_blob_model, position) == 32, "model.position");
_Static_assert(sizeof(kiln_blob_skeleton) == 32, "skeleton");
_Static_assert(sizeof(kiln_blob_bone) == 32, "bone");
_Static_assert(offsetof(kiln_blob_bone, parent) == 8, "bone.parent");
_Static_assert(sizeof(kiln_soa_xform) == 320, "soa xform: 10 x 8 floats");
_Static_assert(sizeof(kiln_soa_xform) % 64 == 0, "soa blocks stay 64-byte aligned");
_Static_assert(sizeof(kiln_blob_stream) == 72, "stream");
_Static_assert(offsetof(kiln_blob_stream, offset) == 24, "stream.offset (8-aligned)");
_Static_assert(offsetof(kiln_blob_stream, decode_offset) == 32, "stream.decode_offset");
_Static_assert(sizeof(kiln_blob_stream) % 8 == 0, "stream.offset stays 8-aligned in the table");
_Static_assert(sizeof(kiln_blob_mesh) == 72, "mesh");
_Static_assert(offsetof(kiln_blob_mesh, bounds_min) == 48, "mesh.bounds_min");
_Static_assert(sizeof(kiln_blob_hair) == 32, "hair");
_Static_assert(sizeof(kiln_blob_material) == 32, "material");
_Static_assert(sizeof(kiln_blob_material_slot) == 48, "material slot");
_Static_assert(offsetof(kiln_blob_material_slot, rgba) == 16, "slot.rgba");
_Static_assert(sizeof(kiln_blob_instance) == 64, "instance");
_Static_assert(offsetof(kiln_blob_instance, position) == 16, "instance.position");
_Static_assert(sizeof(kiln_blob_reference) == 16, "reference");
_Static_assert(sizeof(float) == 4 && sizeof(uint32_t) == 4, "32-bit floats");

/* Bytes the CRC and the payload checks advance by. One long CRC round (3 lanes x 8 KiB), and
 * small enough that a chunk checked right after its CRC is still in L1. */
#define KILN__CHUNK 24576u
/* Streams whose owner bounds (vertex count, bone count) are gathered per pass, on the stack. */
#define KILN__WINDOW 512u

typedef struct kiln__verify {
    const unsigned char     *base;
    uint64_t                 size;
    kiln_diag               *err;
    const kiln_blob_header  *header;
    const kiln_blob_section *table;
    uint32_t                 section_count;
    const kiln_blob_section *sec[KILN__S_COUNT];
    uint32_t                 sec_index[KILN__S_COUNT];
    uint32_t                 count[KILN__S_COUNT];   /* records; 0 when absent */
    uint64_t                 strings_size;
    int                      crc_on;
    uint32_t                 crc;
    uint64_t                 crc_pos;
} kiln__verify;

/* ---- diagnostics ------------------------------------------------------------------------ */
static void kiln__vfail(kiln__verify *v, kiln_result code, uint64_t offset, const char *fmt, va_list ap)
{
    kiln_diag *d = v->err;
    if (!d) return;
    d->code = code;
    d->severity = KILN_SEVERITY_ERROR;
    d->offset = offset;
    int n = vsnprintf(d->message, sizeof d->message, fmt, ap);
    if (n >= 0 && (size_t)n < sizeof d->message && offset != KILN_NO_OFFSET)
        snprintf(d->message + n, sizeof d->message - (size_t)n, " (byte offset %llu)", (unsigned long long)offset);
}

static kiln_result kiln__fail(kiln__verify *v, kiln_result code, uint64_t offset, const char *path, const char *fmt, ...)
{
    if (v->err) snprintf(v->err->path, sizeof v->err->path, "%s", path);
    va_list ap;
    va_start(ap, fmt);
    kiln__vfail(v, code, offset, fmt, ap);
    va_end(ap);
    return code;
}

/* A record failure: path "BONE[7].parent", message "BONE[7].parent: <text> (section 5 BONE,
 * record 7, byte offset N)". */
static kiln_result kiln__rec_fail(kiln__verify *v, kiln_result code, int slot, uint64_t index, size_t field_offset,
                                  const char *field, const char *fmt, ...)
{
    if (!v->err) return code;
    char kind[5];
    kiln_blob_kind_name(kiln__slot_kind(slot), kind);
    const kiln_blob_section *s = v->sec[slot];
    uint64_t offset = s ? s->offset + index * s->stride + field_offset : KILN_NO_OFFSET;
    snprintf(v->err->path, sizeof v->err->path, "%s[%llu].%s", kind, (unsigned long long)index, field);
    char text[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    v->err->code = code;
    v->err->severity = KILN_SEVERITY_ERROR;
    v->err->offset = offset;
    snprintf(v->err->message, sizeof v->err->message, "%.64s: %.200s (section %u %s, record %llu, byte offset %llu)",
             v->err->path, text, v->sec_index[slot], kind, (unsigned long long)index, (unsigned long long)offset);
    return code;
}

#define KILN__REC_FAIL(v, code, slot, type, index, field, ...)                                  \
    kiln__rec_fail((v), (code), (slot), (index), offsetof(type, field), #field, __VA_ARGS__)

#define KILN__TRY(expr)                     \
    do {                                    \
        kiln_result kiln__r_ = (expr);      \
        if (kiln__r_ != KILN_OK) return kiln__r_; \
    } while (0)

/* ---- CRC cursor ------------------------------------------------------------------------- */
/* The checksum covers the whole blob with its own field read as zero. */
static uint32_t kiln__crc_header(const unsigned char *base)
{
    unsigned char h[sizeof(kiln_blob_header)];
    memcpy(h, base, sizeof h);
    memset(h + offsetof(kiln_blob_header, crc32c), 0, 4);
    return kiln__crc32c_hw(0, h, sizeof h);
}

/* Advances the CRC to at least `end`, in whole grid chunks (it may run one chunk ahead). */
static void kiln__crc_upto(kiln__verify *v, uint64_t end)
{
    if (!v->crc_on || end <= v->crc_pos) return;
    if (v->crc_pos == 0) {
        v->crc = kiln__crc_header(v->base);
        v->crc_pos = sizeof(kiln_blob_header);
    }
    while (v->crc_pos < end) {
        uint64_t stop = (v->crc_pos / KILN__CHUNK + 1) * KILN__CHUNK;
        if (stop > v->size) stop = v->size;
        v->crc = kiln__crc32c_hw(v->crc, v->base + v->crc_pos, (size_t)(stop - v->crc_pos));
        v->crc_pos = stop;
    }
}

static uint32_t kiln__crc_full(const unsigned char *base, uint64_t size)
{
    uint32_t crc = kiln__crc_header(base);
    return kiln__crc32c_hw(crc, base + sizeof(kiln_blob_header), (size_t)(size - sizeof(kiln_blob_header)));
}

/* ---- small helpers ---------------------------------------------------------------------- */
static int kiln__finite(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return (b & 0x7F800000u) != 0x7F800000u;
}

/* Index of the first non-finite of n floats, or n. */
static size_t kiln__first_nonfinite(const float *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!kiln__finite(f[i])) return i;
    return n;
}

static const void *kiln__at(const kiln__verify *v, int slot) { return v->base + v->sec[slot]->offset; }

static int kiln__str_ok(const kiln__verify *v, uint32_t offset) { return offset == 0 || offset < v->strings_size; }

static const char *kiln__str(const kiln__verify *v, uint32_t offset)
{
    return offset && offset < v->strings_size ? (const char *)kiln__at(v, KILN__S_STRINGS) + offset : "";
}

/* [first, first + count) inside [0, total), without overflow. */
static int kiln__range_ok(uint32_t first, uint32_t count, uint32_t total)
{
    return first <= total && count <= total - first;
}

#define KILN__CHECK_STR(v, slot, type, i, rec, field)                                                       \
    do {                                                                                                    \
        if (!kiln__str_ok((v), (rec)->field))                                                               \
            return KILN__REC_FAIL((v), KILN_ERR_BLOB_BAD_RECORD, (slot), type, (i), field,                  \
                                  "string offset %u is outside the %llu-byte string table", (rec)->field,    \
                                  (unsigned long long)(v)->strings_size);                                   \
    } while (0)

#define KILN__CHECK_FLOATS(v, slot, type, i, rec, field, n)                                                 \
    do {                                                                                                    \
        size_t kiln__k_ = kiln__first_nonfinite((rec)->field, (n));                                         \
        if (kiln__k_ < (n))                                                                                 \
            return kiln__rec_fail((v), KILN_ERR_BLOB_NOT_FINITE, (slot), (i),                               \
                                  offsetof(type, field) + 4 * kiln__k_, #field,                             \
                                  "component %u is NaN or infinite", (unsigned)kiln__k_);                   \
    } while (0)

#define KILN__CHECK_INDEX(v, slot, type, i, rec, field, target_slot, allow_none)                             \
    do {                                                                                                    \
        uint32_t kiln__x_ = (rec)->field;                                                                   \
        if (!((allow_none) && kiln__x_ == KILN_BLOB_NONE) && kiln__x_ >= (v)->count[target_slot]) {          \
            char kiln__kn_[5];                                                                              \
            return KILN__REC_FAIL((v), KILN_ERR_BLOB_BAD_RECORD, (slot), type, (i), field,                  \
                                  "index %u is outside %s (%u records)", kiln__x_,                          \
                                  kiln_blob_kind_name(kiln__slot_kind(target_slot), kiln__kn_),             \
                                  (v)->count[target_slot]);                                                 \
        }                                                                                                   \
    } while (0)

#define KILN__CHECK_RANGE(v, slot, type, i, rec, first, cnt, target_slot)                                    \
    do {                                                                                                    \
        if (!kiln__range_ok((rec)->first, (rec)->cnt, (v)->count[target_slot])) {                           \
            char kiln__kn_[5];                                                                              \
            return KILN__REC_FAIL((v), KILN_ERR_BLOB_BAD_RECORD, (slot), type, (i), first,                  \
                                  "range [%u, +%u) is outside %s (%u records)", (rec)->first, (rec)->cnt,   \
                                  kiln_blob_kind_name(kiln__slot_kind(target_slot), kiln__kn_),             \
                                  (v)->count[target_slot]);                                                 \
        }                                                                                                   \
    } while (0)

/* ---- step 1: header --------------------------------------------------------------------- */
static kiln_result kiln__check_header(kiln__verify *v)
{
    const kiln_blob_header *h = v->header;
    if (v->size < sizeof *h)
        return kiln__fail(v, KILN_ERR_BLOB_TRUNCATED, 0, "header", "header: the blob is %llu bytes, shorter than the 64-byte header",
                          (unsigned long long)v->size);
    if (h->magic != KILN_BLOB_MAGIC)
        return kiln__fail(v, KILN_ERR_BLOB_BAD_MAGIC, offsetof(kiln_blob_header, magic), "header.magic",
                          "header.magic: 0x%08X is not the kiln blob magic 0x%08X", h->magic, KILN_BLOB_MAGIC);
    if (h->version_major != KILN_BLOB_VERSION_MAJOR)
        return kiln__fail(v, KILN_ERR_BLOB_BAD_VERSION, offsetof(kiln_blob_header, version_major), "header.version_major",
                          "header.version_major: format %u.%u, this runtime reads %u.x", h->version_major,
                          h->version_minor, KILN_BLOB_VERSION_MAJOR);
    if (h->header_size != sizeof *h)
        return kiln__fail(v, KILN_ERR_BLOB_BAD_HEADER, offsetof(kiln_blob_header, header_size), "header.header_size",
                          "header.header_size: %u, expected 64", h->header_size);
    if (h->total_size > v->size)
        return kiln__fail(v, KILN_ERR_BLOB_TRUNCATED, offsetof(kiln_blob_header, total_size), "header.total_size",
                          "header.total_size: the header says %llu bytes, only %llu were given",
                          (unsigned long long)h->total_size, (unsigned long long)v->size);
    if (h->total_size != v->size)
        return kiln__fail(v, KILN_ERR_BLOB_BAD_HEADER, offsetof(kiln_blob_header, total_size), "header.total_size",
                          "header.total_size: the header says %llu bytes, %llu were given",
                          (unsigned long long)h->total_size, (unsigned long long)v->size);
    if (h->total_size % KILN_BLOB_ALIGN != 0)
        return kiln__fail(v, KILN_ERR_BLOB_BAD_HEADER, offsetof(kiln_blob_header, total_size), "header.total_size",
                          "header.total_size: %llu is not a multiple of 64", (unsigned long long)h->total_size);
    if (h->section_table_offset != sizeof *h)
        return kiln__fail(v, KILN_ERR_BLOB_BAD_HEADER, offsetof(kiln_blob_header, section_table_offset),
                          "header.section_table_offset", "header.section_table_offset: %u, expected 64",
                          h->section_table_offset);
    uint64_t table_end = sizeof *h + (uint64_t)h->section_count * sizeof(kiln_blob_section);
    if (table_end > h->total_size)
        return kiln__fail(v, KILN_ERR_BLOB_TRUNCATED, offsetof(kiln_blob_header, section_count), "header.section_count",
                          "header.section_count: %u sections need %llu bytes, the blob has %llu", h->section_count,
                          (unsigned long long)table_end, (unsigned long long)h->total_size);
    if (h->flags & ~KILN_BLOB_FLAG_QUANTIZED)
        return kiln__fail(v, KILN_ERR_BLOB_BAD_HEADER, offsetof(kiln_blob_header, flags), "header.flags",
                          "header.flags: unknown bits 0x%X", h->flags & ~KILN_BLOB_FLAG_QUANTIZED);
    for (size_t i = 0; i < sizeof h->reserved; i++)
        if (h->reserved[i])
            return kiln__fail(v, KILN_ERR_BLOB_BAD_HEADER, offsetof(kiln_blob_header, reserved) + i, "header.reserved",
                              "header.reserved: byte %u is not zero", (unsigned)i);
    v->table = (const kiln_blob_section *)(v->base + sizeof *h);
    v->section_count = h->section_count;
    return KILN_OK;
}

/* ---- step 2a: section table ------------------------------------------------------------- */
static kiln_result kiln__section_fail(kiln__verify *v, kiln_result code, uint32_t i, size_t field_offset,
                                      const char *field, const char *fmt, ...)
{
    if (!v->err) return code;
    char kind[5], text[240];
    kiln_blob_kind_name(v->table[i].kind, kind);
    snprintf(v->err->path, sizeof v->err->path, "section[%u].%s", i, field);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    uint64_t offset = sizeof(kiln_blob_header) + (uint64_t)i * sizeof(kiln_blob_section) + field_offset;
    v->err->code = code;
    v->err->severity = KILN_SEVERITY_ERROR;
    v->err->offset = offset;
    snprintf(v->err->message, sizeof v->err->message, "section %u (%s).%s: %.200s (byte offset %llu)", i, kind, field, text,
             (unsigned long long)offset);
    return code;
}

#define KILN__SEC_FAIL(v, code, i, field, ...) \
    kiln__section_fail((v), (code), (i), offsetof(kiln_blob_section, field), #field, __VA_ARGS__)

static kiln_result kiln__check_sections(kiln__verify *v)
{
    uint64_t prev_end = sizeof(kiln_blob_header) + (uint64_t)v->section_count * sizeof(kiln_blob_section);
    uint64_t total = v->size;
    for (uint32_t i = 0; i < v->section_count; i++) {
        const kiln_blob_section *s = &v->table[i];
        if (s->offset % KILN_BLOB_ALIGN != 0)
            return KILN__SEC_FAIL(v, KILN_ERR_BLOB_MISALIGNED, i, offset, "offset %llu is not a multiple of 64",
                                  (unsigned long long)s->offset);
        if (s->offset < prev_end)
            return KILN__SEC_FAIL(v, KILN_ERR_BLOB_BAD_SECTION, i, offset,
                                  "offset %llu overlaps the section table or the previous section (which ends at %llu)",
                                  (unsigned long long)s->offset, (unsigned long long)prev_end);
        if (s->offset > total || s->size > total - s->offset)
            return KILN__SEC_FAIL(v, KILN_ERR_BLOB_TRUNCATED, i, size, "[%llu, +%llu) extends past the blob end %llu",
                                  (unsigned long long)s->offset, (unsigned long long)s->size,
                                  (unsigned long long)total);
        for (uint64_t b = prev_end; b < s->offset; b++)
            if (v->base[b])
                return kiln__fail(v, KILN_ERR_BLOB_BAD_SECTION, b, "padding",
                                  "padding: non-zero byte before section %u", i);
        prev_end = s->offset + s->size;

        int slot = kiln__kind_slot(s->kind);
        if (slot < 0) {
            if (s->flags & KILN_SECTION_FLAG_REQUIRED)
                return KILN__SEC_FAIL(v, KILN_ERR_BLOB_BAD_VERSION, i, kind,
                                      "unknown kind 0x%08X is flagged REQUIRED: a newer runtime is needed", s->kind);
            continue; /* skipped by its size */
        }
        if (v->sec[slot])
            return KILN__SEC_FAIL(v, KILN_ERR_BLOB_BAD_SECTION, i, kind, "second section of this kind (first: section %u)",
                                  v->sec_index[slot]);
        if (s->version != KILN__SECTION_VERSION)
            return KILN__SEC_FAIL(v, KILN_ERR_BLOB_BAD_VERSION, i, version, "layout version %u, this runtime reads %u",
                                  s->version, KILN__SECTION_VERSION);
        if (s->flags & ~KILN_SECTION_FLAG_REQUIRED)
            return KILN__SEC_FAIL(v, KILN_ERR_BLOB_BAD_SECTION, i, flags, "unknown flag bits 0x%X",
                                  s->flags & ~KILN_SECTION_FLAG_REQUIRED);
        uint32_t stride = kiln__slot_stride(slot);
        if (s->stride != stride)
            return KILN__SEC_FAIL(v, KILN_ERR_BLOB_BAD_SECTION, i, stride, "stride %u, expected %u", s->stride, stride);
        if (stride == 0 ? s->count != 0 : (uint64_t)s->count * stride != s->size)
            return KILN__SEC_FAIL(v, KILN_ERR_BLOB_BAD_SECTION, i, count,
                                  "count %u with stride %u does not match size %llu", s->count, s->stride,
                                  (unsigned long long)s->size);
        if (slot == KILN__S_METADATA && s->count != 1)
            return KILN__SEC_FAIL(v, KILN_ERR_BLOB_BAD_SECTION, i, count, "metadata holds %u records, expected 1",
                                  s->count);
        v->sec[slot] = s;
        v->sec_index[slot] = i;
        v->count[slot] = s->count;
    }
    for (uint64_t b = prev_end; b < total; b++)
        if (v->base[b])
            return kiln__fail(v, KILN_ERR_BLOB_BAD_SECTION, b, "padding", "padding: non-zero byte after the last section");

    if (v->sec[KILN__S_STRINGS]) {
        const kiln_blob_section *s = v->sec[KILN__S_STRINGS];
        const unsigned char *p = v->base + s->offset;
        if (s->size == 0 || p[0] != 0 || p[s->size - 1] != 0)
            return kiln__fail(v, KILN_ERR_BLOB_BAD_SECTION, s->offset, "STRS",
                              "STRS: the string table must start and end with a NUL byte (%llu bytes)",
                              (unsigned long long)s->size);
        v->strings_size = s->size;
    }
    return KILN_OK;
}

/* ---- step 2b: records ------------------------------------------------------------------- */
static kiln_result kiln__check_metadata(kiln__verify *v)
{
    if (!v->sec[KILN__S_METADATA]) return KILN_OK;
    const kiln_blob_metadata *m = kiln__at(v, KILN__S_METADATA);
    const int S = KILN__S_METADATA;
    KILN__CHECK_STR(v, S, kiln_blob_metadata, 0, m, author);
    KILN__CHECK_STR(v, S, kiln_blob_metadata, 0, m, software);
    KILN__CHECK_STR(v, S, kiln_blob_metadata, 0, m, scene_root);
    if (m->up_axis > KILN_UP_Z)
        return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_metadata, 0, up_axis, "unknown up axis %u",
                              m->up_axis);
    return KILN_OK;
}

static kiln_result kiln__check_models(kiln__verify *v)
{
    const int S = KILN__S_MODELS;
    const kiln_blob_model *r = v->count[S] ? kiln__at(v, S) : NULL;
    for (uint32_t i = 0; i < v->count[S]; i++, r++) {
        KILN__CHECK_STR(v, S, kiln_blob_model, i, r, name);
        KILN__CHECK_INDEX(v, S, kiln_blob_model, i, r, skeleton, KILN__S_SKELETONS, 1);
        KILN__CHECK_RANGE(v, S, kiln_blob_model, i, r, first_mesh, mesh_count, KILN__S_MESHES);
        KILN__CHECK_RANGE(v, S, kiln_blob_model, i, r, first_hair, hair_count, KILN__S_HAIRS);
        KILN__CHECK_RANGE(v, S, kiln_blob_model, i, r, first_material, material_count, KILN__S_MATERIALS);
        KILN__CHECK_FLOATS(v, S, kiln_blob_model, i, r, position, 3);
        KILN__CHECK_FLOATS(v, S, kiln_blob_model, i, r, rotation, 4);
        KILN__CHECK_FLOATS(v, S, kiln_blob_model, i, r, scale, 3);
    }
    return KILN_OK;
}

static kiln_result kiln__check_skeletons(kiln__verify *v)
{
    const int S = KILN__S_SKELETONS;
    const kiln_blob_skeleton *r = v->count[S] ? kiln__at(v, S) : NULL;
    const kiln_blob_bone *bones = v->count[KILN__S_BONES] ? kiln__at(v, KILN__S_BONES) : NULL;
    for (uint32_t i = 0; i < v->count[S]; i++, r++) {
        KILN__CHECK_INDEX(v, S, kiln_blob_skeleton, i, r, model, KILN__S_MODELS, 0);
        KILN__CHECK_RANGE(v, S, kiln_blob_skeleton, i, r, first_bone, bone_count, KILN__S_BONES);
        if (!kiln__range_ok(r->first_bone, r->bone_count, v->count[KILN__S_INVERSE_BIND]))
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_skeleton, i, first_bone,
                                  "range [%u, +%u) is outside IBND (%u records)", r->first_bone, r->bone_count,
                                  v->count[KILN__S_INVERSE_BIND]);
        uint32_t soa = r->bone_count / KILN_SOA_WIDTH + (r->bone_count % KILN_SOA_WIDTH != 0);
        if (r->soa_count != soa)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_skeleton, i, soa_count,
                                  "soa_count %u, expected %u for %u bones", r->soa_count, soa, r->bone_count);
        KILN__CHECK_RANGE(v, S, kiln_blob_skeleton, i, r, first_soa, soa_count, KILN__S_REST_POSE);
        if (r->depth > r->bone_count)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_skeleton, i, depth,
                                  "depth %u exceeds the bone count %u", r->depth, r->bone_count);
        /* Parent-first order: one forward pass computes model-space transforms. */
        for (uint32_t b = 0; b < r->bone_count; b++) {
            int32_t parent = bones[r->first_bone + b].parent;
            if (parent < -1 || parent >= (int64_t)b)
                return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, KILN__S_BONES, kiln_blob_bone,
                                      (uint64_t)r->first_bone + b, parent,
                                      "parent %d must be -1 or lower than the bone's index %u in skeleton %u",
                                      parent, b, i);
        }
    }
    return KILN_OK;
}

static kiln_result kiln__check_bones(kiln__verify *v)
{
    const int S = KILN__S_BONES;
    const kiln_blob_bone *r = v->count[S] ? kiln__at(v, S) : NULL;
    for (uint32_t i = 0; i < v->count[S]; i++, r++) {
        KILN__CHECK_STR(v, S, kiln_blob_bone, i, r, name);
        uint32_t hash = kiln_name_hash(kiln__str(v, r->name));
        if (r->name_hash != hash)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_bone, i, name_hash,
                                  "0x%08X is not the hash of \"%.64s\" (0x%08X)", r->name_hash, kiln__str(v, r->name),
                                  hash);
    }
    return KILN_OK;
}

static kiln_result kiln__check_streams(kiln__verify *v)
{
    const int S = KILN__S_STREAMS;
    const kiln_blob_stream *r = v->count[S] ? kiln__at(v, S) : NULL;
    const kiln_blob_section *data = v->sec[KILN__S_DATA];
    for (uint32_t i = 0; i < v->count[S]; i++, r++) {
        if (r->semantic < KILN_ATTR_POSITION || r->semantic > KILN_ATTR_HAIR_PARTICLES)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_stream, i, semantic, "unknown semantic %u",
                                  r->semantic);
        const kiln__format_info *f = kiln__format(r->format);
        if (!f)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_stream, i, format, "unknown format %u",
                                  r->format);
        /* The integer formats carry indices, joints and strand offsets, whose bounds are
         * checked; they are reserved to those semantics and those semantics to them. */
        uint32_t want = r->semantic == KILN_ATTR_INDICES       ? 1
                      : r->semantic == KILN_ATTR_JOINTS        ? 2
                      : r->semantic == KILN_ATTR_WEIGHTS       ? 3
                      : r->semantic == KILN_ATTR_HAIR_STRANDS  ? 4
                      : r->semantic == KILN_ATTR_HAIR_PARTICLES ? 5 : 0;
        int fmt_ok;
        switch (want) {
        case 1: fmt_ok = r->format == KILN_FORMAT_U16x1 || r->format == KILN_FORMAT_U32x1; break;
        case 2: fmt_ok = r->format == KILN_FORMAT_U16xN; break;
        case 3: fmt_ok = r->format == KILN_FORMAT_F32xN; break;
        case 4: fmt_ok = r->format == KILN_FORMAT_U32x1; break;
        case 5: fmt_ok = r->format == KILN_FORMAT_F32x3; break;
        default:
            fmt_ok = r->format != KILN_FORMAT_U16x1 && r->format != KILN_FORMAT_U32x1 && r->format != KILN_FORMAT_U16xN &&
                     r->format != KILN_FORMAT_F32xN;
        }
        if (!fmt_ok)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_stream, i, format,
                                  "format %u does not fit semantic %u", r->format, r->semantic);
        if (!f->fixed_bytes && r->components == 0)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_stream, i, components,
                                  "zero components per element");
        uint64_t elem = kiln__element_bytes(f, r->components);
        if (r->stride < elem || r->stride % f->scalar_bytes != 0)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_stream, i, stride,
                                  "stride %u for %llu-byte elements (a multiple of %u at least that large)", r->stride,
                                  (unsigned long long)elem, f->scalar_bytes);
        if (r->offset % KILN_BLOB_DATA_ALIGN != 0)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_MISALIGNED, S, kiln_blob_stream, i, offset,
                                  "offset %llu is not 16-byte aligned", (unsigned long long)r->offset);
        uint64_t bytes = (uint64_t)r->count * r->stride;
        if (!data || r->offset < data->offset || r->offset - data->offset > data->size ||
            bytes > data->size - (r->offset - data->offset))
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_stream, i, offset,
                                  "[%llu, +%llu) is not inside the DATA section", (unsigned long long)r->offset,
                                  (unsigned long long)bytes);
        KILN__CHECK_FLOATS(v, S, kiln_blob_stream, i, r, decode_offset, 4);
        KILN__CHECK_FLOATS(v, S, kiln_blob_stream, i, r, decode_scale, 4);
    }
    return KILN_OK;
}

static const kiln_blob_stream *kiln__stream(const kiln__verify *v, uint32_t index)
{
    return (const kiln_blob_stream *)kiln__at(v, KILN__S_STREAMS) + index;
}

static kiln_result kiln__check_meshes(kiln__verify *v)
{
    const int S = KILN__S_MESHES;
    const kiln_blob_mesh *r = v->count[S] ? kiln__at(v, S) : NULL;
    for (uint32_t i = 0; i < v->count[S]; i++, r++) {
        KILN__CHECK_STR(v, S, kiln_blob_mesh, i, r, name);
        KILN__CHECK_INDEX(v, S, kiln_blob_mesh, i, r, model, KILN__S_MODELS, 0);
        KILN__CHECK_INDEX(v, S, kiln_blob_mesh, i, r, material, KILN__S_MATERIALS, 1);
        KILN__CHECK_INDEX(v, S, kiln_blob_mesh, i, r, skeleton, KILN__S_SKELETONS, 1);
        KILN__CHECK_RANGE(v, S, kiln_blob_mesh, i, r, first_stream, stream_count, KILN__S_STREAMS);
        if (r->index_count % 3 != 0)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_mesh, i, index_count,
                                  "%u indices do not make whole triangles", r->index_count);
        if (r->skinning > KILN_SKIN_DUAL_QUAT)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_mesh, i, skinning,
                                  "unknown skinning method %u", r->skinning);
        if (r->influences && r->skeleton == KILN_BLOB_NONE)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_mesh, i, influences,
                                  "%u influences per vertex but no skeleton", r->influences);
        KILN__CHECK_FLOATS(v, S, kiln_blob_mesh, i, r, bounds_min, 3);
        KILN__CHECK_FLOATS(v, S, kiln_blob_mesh, i, r, bounds_max, 3);
        for (uint32_t k = 0; k < r->stream_count; k++) {
            uint32_t si = r->first_stream + k;
            const kiln_blob_stream *s = kiln__stream(v, si);
            uint32_t sem = s->semantic;
            if (sem == KILN_ATTR_HAIR_STRANDS || sem == KILN_ATTR_HAIR_PARTICLES)
                return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_mesh, i, first_stream,
                                      "stream %u is a hair stream (semantic %u)", si, sem);
            uint32_t want = sem == KILN_ATTR_INDICES ? r->index_count : r->vertex_count;
            if (s->count != want)
                return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_mesh, i, first_stream,
                                      "stream %u (semantic %u) has %u elements, the mesh needs %u", si, sem, s->count,
                                      want);
            if ((sem == KILN_ATTR_JOINTS || sem == KILN_ATTR_WEIGHTS) &&
                (s->components != r->influences || r->skeleton == KILN_BLOB_NONE))
                return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_mesh, i, influences,
                                      "stream %u (semantic %u) has %u components for %u influences%s", si, sem,
                                      s->components, r->influences,
                                      r->skeleton == KILN_BLOB_NONE ? " and the mesh has no skeleton" : "");
        }
    }
    return KILN_OK;
}

static kiln_result kiln__check_hairs(kiln__verify *v)
{
    const int S = KILN__S_HAIRS;
    const kiln_blob_hair *r = v->count[S] ? kiln__at(v, S) : NULL;
    for (uint32_t i = 0; i < v->count[S]; i++, r++) {
        KILN__CHECK_STR(v, S, kiln_blob_hair, i, r, name);
        KILN__CHECK_INDEX(v, S, kiln_blob_hair, i, r, model, KILN__S_MODELS, 0);
        KILN__CHECK_INDEX(v, S, kiln_blob_hair, i, r, material, KILN__S_MATERIALS, 1);
        KILN__CHECK_INDEX(v, S, kiln_blob_hair, i, r, strands_stream, KILN__S_STREAMS, 0);
        KILN__CHECK_INDEX(v, S, kiln_blob_hair, i, r, particles_stream, KILN__S_STREAMS, 0);
        const kiln_blob_stream *st = kiln__stream(v, r->strands_stream);
        if (st->semantic != KILN_ATTR_HAIR_STRANDS || (uint64_t)st->count != (uint64_t)r->strand_count + 1)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_hair, i, strands_stream,
                                  "stream %u is not a strand table of %u + 1 entries", r->strands_stream, r->strand_count);
        const kiln_blob_stream *pt = kiln__stream(v, r->particles_stream);
        if (pt->semantic != KILN_ATTR_HAIR_PARTICLES || pt->count != r->particle_count)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_hair, i, particles_stream,
                                  "stream %u is not a particle stream of %u entries", r->particles_stream,
                                  r->particle_count);
        /* Monotonic offsets are checked with the payload; the last one is read here. The
         * stream record was verified (inside DATA, 4-aligned stride), so this is in bounds. */
        uint32_t last;
        memcpy(&last, v->base + st->offset + (uint64_t)r->strand_count * st->stride, 4);
        if (last != r->particle_count)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_hair, i, particle_count,
                                  "the strand table ends at %u, not at the particle count %u", last, r->particle_count);
    }
    return KILN_OK;
}

static kiln_result kiln__check_materials(kiln__verify *v)
{
    int S = KILN__S_MATERIALS;
    const kiln_blob_material *m = v->count[S] ? kiln__at(v, S) : NULL;
    for (uint32_t i = 0; i < v->count[S]; i++, m++) {
        KILN__CHECK_STR(v, S, kiln_blob_material, i, m, name);
        KILN__CHECK_STR(v, S, kiln_blob_material, i, m, type);
        KILN__CHECK_INDEX(v, S, kiln_blob_material, i, m, model, KILN__S_MODELS, 0);
        KILN__CHECK_RANGE(v, S, kiln_blob_material, i, m, first_slot, slot_count, KILN__S_MATERIAL_SLOTS);
    }
    S = KILN__S_MATERIAL_SLOTS;
    const kiln_blob_material_slot *r = v->count[S] ? kiln__at(v, S) : NULL;
    for (uint32_t i = 0; i < v->count[S]; i++, r++) {
        KILN__CHECK_STR(v, S, kiln_blob_material_slot, i, r, name);
        KILN__CHECK_STR(v, S, kiln_blob_material_slot, i, r, path);
        if (r->kind != KILN_SLOT_FILE && r->kind != KILN_SLOT_COLOR)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_material_slot, i, kind,
                                  "unknown slot kind %u", r->kind);
        if (r->color_space > 1)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_material_slot, i, color_space,
                                  "unknown colour space %u", r->color_space);
        KILN__CHECK_FLOATS(v, S, kiln_blob_material_slot, i, r, rgba, 4);
        KILN__CHECK_FLOATS(v, S, kiln_blob_material_slot, i, r, rgba_linear, 4);
    }
    return KILN_OK;
}

static kiln_result kiln__check_instances(kiln__verify *v)
{
    int S = KILN__S_INSTANCES;
    const kiln_blob_instance *inst = v->count[S] ? kiln__at(v, S) : NULL;
    for (uint32_t i = 0; i < v->count[S]; i++) {
        const kiln_blob_instance *r = &inst[i];
        KILN__CHECK_STR(v, S, kiln_blob_instance, i, r, name);
        KILN__CHECK_INDEX(v, S, kiln_blob_instance, i, r, reference, KILN__S_REFERENCES, 0);
        KILN__CHECK_FLOATS(v, S, kiln_blob_instance, i, r, position, 3);
        KILN__CHECK_FLOATS(v, S, kiln_blob_instance, i, r, rotation, 4);
        KILN__CHECK_FLOATS(v, S, kiln_blob_instance, i, r, scale, 3);
    }
    /* References partition INSTANCES in order: reference r owns the next instance_count
     * instances, and each of those names r back. */
    S = KILN__S_REFERENCES;
    const kiln_blob_reference *r = v->count[S] ? kiln__at(v, S) : NULL;
    uint32_t next = 0;
    for (uint32_t i = 0; i < v->count[S]; i++, r++) {
        KILN__CHECK_STR(v, S, kiln_blob_reference, i, r, path);
        KILN__CHECK_STR(v, S, kiln_blob_reference, i, r, resolved_path);
        if (r->first_instance != next || !kiln__range_ok(r->first_instance, r->instance_count, v->count[KILN__S_INSTANCES]))
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_reference, i, first_instance,
                                  "instances [%u, +%u) do not continue the partition at %u (of %u)", r->first_instance,
                                  r->instance_count, next, v->count[KILN__S_INSTANCES]);
        for (uint32_t k = 0; k < r->instance_count; k++)
            if (inst[next + k].reference != i)
                return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, KILN__S_INSTANCES, kiln_blob_instance,
                                      (uint64_t)next + k, reference, "refers to %u, but lies in the range of reference %u",
                                      inst[next + k].reference, i);
        next += r->instance_count;
    }
    if (next != v->count[KILN__S_INSTANCES])
        return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, KILN__S_INSTANCES, kiln_blob_instance, next, reference,
                              "instances from %u on belong to no reference", next);
    return KILN_OK;
}

static kiln_result kiln__check_name_index(kiln__verify *v)
{
    const int S = KILN__S_NAME_INDEX;
    const kiln_blob_name_entry *r = v->count[S] ? kiln__at(v, S) : NULL;
    for (uint32_t i = 0; i < v->count[S]; i++, r++) {
        int slot = kiln__kind_slot(r->kind);
        if (slot >= 0) {
            /* Unknown kinds come from newer minors and are left alone; byte sections and the
             * single metadata record have no names. */
            uint32_t stride = kiln__slot_stride(slot);
            if (stride == 0 || slot == KILN__S_METADATA)
                return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_name_entry, i, kind,
                                      "kind 0x%08X has no named records", r->kind);
            KILN__CHECK_INDEX(v, S, kiln_blob_name_entry, i, r, index, slot, 0);
        }
        KILN__CHECK_STR(v, S, kiln_blob_name_entry, i, r, name);
        uint32_t hash = kiln_name_hash(kiln__str(v, r->name));
        if (r->hash != hash)
            return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_name_entry, i, hash,
                                  "0x%08X is not the hash of \"%.64s\" (0x%08X)", r->hash, kiln__str(v, r->name), hash);
        if (i > 0) {
            const kiln_blob_name_entry *p = r - 1;
            int ascending = p->kind != r->kind   ? p->kind < r->kind
                          : p->hash != r->hash   ? p->hash < r->hash
                                                 : p->index < r->index;
            if (!ascending)
                return KILN__REC_FAIL(v, KILN_ERR_BLOB_BAD_RECORD, S, kiln_blob_name_entry, i, kind,
                                      "not sorted after entry %u by (kind, hash, index)", i - 1);
        }
    }
    return KILN_OK;
}

/* ---- step 3: payload, fused with the CRC ------------------------------------------------- */
static kiln_result kiln__check_float_section(kiln__verify *v, int slot)
{
    const kiln_blob_section *s = v->sec[slot];
    if (!s) return KILN_OK;
    uint64_t end = s->offset + s->size;
    for (uint64_t pos = s->offset; pos < end;) {
        uint64_t stop = pos + KILN__CHUNK < end ? pos + KILN__CHUNK : end;
        kiln__crc_upto(v, stop);
        size_t n = (size_t)(stop - pos) / 4;
        if (!kiln__scan_finite_f32(v->base + pos, n)) {
            uint64_t at = pos + 4 * kiln__first_nonfinite((const float *)(v->base + pos), n);
            uint64_t rec = (at - s->offset) / s->stride;
            return kiln__rec_fail(v, KILN_ERR_BLOB_NOT_FINITE, slot, rec, (size_t)((at - s->offset) % s->stride),
                                  slot == KILN__S_REST_POSE ? "xform" : "matrix", "float %u is NaN or infinite",
                                  (unsigned)(((at - s->offset) % s->stride) / 4));
        }
        pos = stop;
    }
    return KILN_OK;
}

/* What a stream's payload must satisfy. */
enum { KILN__P_NONE, KILN__P_FLOAT, KILN__P_BELOW, KILN__P_MONOTONIC };

static kiln_result kiln__payload_fail(kiln__verify *v, kiln_result code, uint32_t si, uint64_t element, uint64_t at,
                                      const char *fmt, ...)
{
    if (!v->err) return code;
    char text[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    snprintf(v->err->path, sizeof v->err->path, "STRM[%u].data[%llu]", si, (unsigned long long)element);
    v->err->code = code;
    v->err->severity = KILN_SEVERITY_ERROR;
    v->err->offset = at;
    snprintf(v->err->message, sizeof v->err->message, "%.64s: %.180s (stream %u in section %u STRM, element %llu, byte offset %llu)",
             v->err->path, text, si, v->sec_index[KILN__S_STREAMS], (unsigned long long)element,
             (unsigned long long)at);
    return code;
}

/* Checks elements [e0, e1) of stream si. `values` per element of `vbytes` bytes each. */
static kiln_result kiln__check_elements(kiln__verify *v, uint32_t si, const kiln_blob_stream *s, int kind,
                                        uint32_t values, uint32_t vbytes, uint32_t bound, uint32_t owner,
                                        uint32_t *prev, uint64_t e0, uint64_t e1)
{
    const unsigned char *p = v->base + s->offset + e0 * s->stride;
    uint64_t n = e1 - e0;
    int flat = (uint64_t)values * vbytes == s->stride;
    if (kind == KILN__P_FLOAT) {
        if (flat && kiln__scan_finite_f32(p, (size_t)(n * values))) return KILN_OK;
        /* Strided elements (or locating the failure): element by element. */
        for (uint64_t e = 0; e < n; e++) {
            size_t k = kiln__first_nonfinite((const float *)(p + e * s->stride), values);
            if (k < values)
                return kiln__payload_fail(v, KILN_ERR_BLOB_NOT_FINITE, si, e0 + e, s->offset + (e0 + e) * s->stride + 4 * k,
                                          "value %u is NaN or infinite", (unsigned)k);
        }
        return KILN_OK;
    }
    if (kind == KILN__P_BELOW) {
        if (flat) {
            int ok = vbytes == 4 ? kiln__scan_below_u32(p, (size_t)(n * values), bound)
                                 : kiln__scan_below_u16(p, (size_t)(n * values), bound);
            if (ok) return KILN_OK;
        }
        for (uint64_t e = 0; e < n; e++)
            for (uint32_t k = 0; k < values; k++) {
                const unsigned char *q = p + e * s->stride + (uint64_t)k * vbytes;
                uint32_t x;
                if (vbytes == 4) memcpy(&x, q, 4);
                else {
                    uint16_t h;
                    memcpy(&h, q, 2);
                    x = h;
                }
                if (x >= bound)
                    return kiln__payload_fail(v, KILN_ERR_BLOB_BAD_RECORD, si, e0 + e, s->offset + (e0 + e) * s->stride + (uint64_t)k * vbytes,
                                              "%s %u is not below %u (mesh %u)",
                                              s->semantic == KILN_ATTR_INDICES ? "vertex index" : "joint", x, bound, owner);
            }
        return KILN_OK;
    }
    /* KILN__P_MONOTONIC: strand offsets, u32 */
    for (uint64_t e = 0; e < n; e++) {
        uint32_t x;
        memcpy(&x, p + e * s->stride, 4);
        if (x < *prev)
            return kiln__payload_fail(v, KILN_ERR_BLOB_BAD_RECORD, si, e0 + e, s->offset + (e0 + e) * s->stride,
                                      "strand offset %u is lower than the previous %u", x, *prev);
        *prev = x;
    }
    return KILN_OK;
}

static kiln_result kiln__check_payload(kiln__verify *v, uint32_t si, uint32_t bound, uint32_t owner)
{
    const kiln_blob_stream *s = kiln__stream(v, si);
    const kiln__format_info *f = kiln__format(s->format);
    int kind = KILN__P_NONE;
    uint32_t values = f->fixed_bytes ? f->fixed_values : s->components;
    if (f->is_float) kind = KILN__P_FLOAT;
    else if (s->semantic == KILN_ATTR_INDICES || s->semantic == KILN_ATTR_JOINTS)
        kind = bound == UINT32_MAX ? KILN__P_NONE : KILN__P_BELOW; /* no owner: nothing to be below */
    else if (s->semantic == KILN_ATTR_HAIR_STRANDS) kind = KILN__P_MONOTONIC;
    if (kind == KILN__P_NONE || s->count == 0) return KILN_OK;

    uint64_t per_chunk = KILN__CHUNK / s->stride ? KILN__CHUNK / s->stride : 1;
    uint32_t prev = 0;
    for (uint64_t e0 = 0; e0 < s->count;) {
        uint64_t e1 = e0 + per_chunk < s->count ? e0 + per_chunk : s->count;
        kiln__crc_upto(v, s->offset + e1 * s->stride);
        KILN__TRY(kiln__check_elements(v, si, s, kind, values, f->scalar_bytes, bound, owner, &prev, e0, e1));
        e0 = e1;
    }
    return KILN_OK;
}

/* Stream payloads in STRM order (the baker writes DATA in that order, so the walk ascends),
 * a window at a time: first the owner bounds of the window's index and joint streams are
 * gathered from the meshes (the tightest bound wins when meshes share a stream), then each
 * stream is scanned once. */
static kiln_result kiln__check_streams_payload(kiln__verify *v)
{
    const uint32_t S = v->count[KILN__S_STREAMS];
    const kiln_blob_mesh *meshes = v->count[KILN__S_MESHES] ? kiln__at(v, KILN__S_MESHES) : NULL;
    const kiln_blob_skeleton *skels = v->count[KILN__S_SKELETONS] ? kiln__at(v, KILN__S_SKELETONS) : NULL;
    uint32_t bound[KILN__WINDOW], owner[KILN__WINDOW];
    for (uint32_t w0 = 0; w0 < S; w0 += KILN__WINDOW) {
        uint32_t wn = S - w0 < KILN__WINDOW ? S - w0 : KILN__WINDOW;
        int bounded = 0;
        for (uint32_t k = 0; k < wn; k++) {
            uint32_t sem = kiln__stream(v, w0 + k)->semantic;
            bound[k] = UINT32_MAX;
            owner[k] = KILN_BLOB_NONE;
            bounded |= sem == KILN_ATTR_INDICES || sem == KILN_ATTR_JOINTS;
        }
        for (uint32_t m = 0; bounded && m < v->count[KILN__S_MESHES]; m++) {
            const kiln_blob_mesh *mesh = &meshes[m];
            uint32_t lo = mesh->first_stream > w0 ? mesh->first_stream : w0;
            uint64_t hi = (uint64_t)mesh->first_stream + mesh->stream_count;
            if (hi > (uint64_t)w0 + wn) hi = (uint64_t)w0 + wn;
            for (uint32_t si = lo; si < hi; si++) {
                uint32_t sem = kiln__stream(v, si)->semantic, b;
                if (sem == KILN_ATTR_INDICES) b = mesh->vertex_count;
                else if (sem == KILN_ATTR_JOINTS) b = skels[mesh->skeleton].bone_count; /* skeleton checked */
                else continue;
                if (b < bound[si - w0]) {
                    bound[si - w0] = b;
                    owner[si - w0] = m;
                }
            }
        }
        for (uint32_t k = 0; k < wn; k++) KILN__TRY(kiln__check_payload(v, w0 + k, bound[k], owner[k]));
    }
    return KILN_OK;
}

static kiln_result kiln__check_bulk(kiln__verify *v)
{
    /* Ascending offset order keeps the CRC cursor and the checks together. */
    struct {
        uint64_t offset;
        int      what;
    } step[3];
    int n = 0;
    if (v->sec[KILN__S_REST_POSE]) step[n].offset = v->sec[KILN__S_REST_POSE]->offset, step[n++].what = KILN__S_REST_POSE;
    if (v->sec[KILN__S_INVERSE_BIND])
        step[n].offset = v->sec[KILN__S_INVERSE_BIND]->offset, step[n++].what = KILN__S_INVERSE_BIND;
    if (v->sec[KILN__S_DATA]) step[n].offset = v->sec[KILN__S_DATA]->offset, step[n++].what = KILN__S_DATA;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && step[j].offset < step[j - 1].offset; j--) {
            uint64_t o = step[j].offset;
            int w = step[j].what;
            step[j] = step[j - 1];
            step[j - 1].offset = o;
            step[j - 1].what = w;
        }
    for (int i = 0; i < n; i++) {
        if (step[i].what == KILN__S_DATA) KILN__TRY(kiln__check_streams_payload(v));
        else KILN__TRY(kiln__check_float_section(v, step[i].what));
    }
    return KILN_OK;
}

/* ---- driver ----------------------------------------------------------------------------- */
static kiln_result kiln__verify_all(kiln__verify *v)
{
    KILN__TRY(kiln__check_sections(v));
    KILN__TRY(kiln__check_metadata(v));
    KILN__TRY(kiln__check_models(v));
    KILN__TRY(kiln__check_skeletons(v));
    KILN__TRY(kiln__check_bones(v));
    KILN__TRY(kiln__check_streams(v));
    KILN__TRY(kiln__check_meshes(v));
    KILN__TRY(kiln__check_hairs(v));
    KILN__TRY(kiln__check_materials(v));
    KILN__TRY(kiln__check_instances(v));
    KILN__TRY(kiln__check_name_index(v));
    /* The 1.1 animation sections: skipped by size above (unknown to the 1.0 tables), verified
     * by their own module, which relies on the section-table checks done here. */
    KILN__TRY(kiln__verify_animation(v->base, v->size, v->err));
    KILN__TRY(kiln__verify_rig(v->base, v->size, v->err));
    KILN__TRY(kiln__verify_blend_shapes(v->base, v->size, v->err));
    KILN__TRY(kiln__verify_reference_models(v->base, v->size, v->err));
    KILN__TRY(kiln__check_bulk(v));
    if (v->crc_on) {
        kiln__crc_upto(v, v->size);
        if (v->crc != v->header->crc32c)
            return kiln__fail(v, KILN_ERR_BLOB_CHECKSUM, offsetof(kiln_blob_header, crc32c), "header.crc32c",
                              "header.crc32c: stored 0x%08X, computed 0x%08X", v->header->crc32c, v->crc);
    }
    return KILN_OK;
}

kiln_result kiln_blob_load(const void *mem, size_t size, uint32_t flags, const kiln_blob **out, kiln_diag *err)
{
    kiln__verify v;
    memset(&v, 0, sizeof v);
    v.base = (const unsigned char *)mem;
    v.size = size;
    v.err = err;
    v.header = (const kiln_blob_header *)mem;
    if (err) {
        memset(err, 0, sizeof *err);
        err->offset = KILN_NO_OFFSET;
    }
    if (out) *out = NULL;
    if (!mem || !out)
        return kiln__fail(&v, KILN_ERR_INVALID_ARGUMENT, KILN_NO_OFFSET, "", "kiln_blob_load: %s is NULL",
                          mem ? "out" : "mem");
    if (flags & ~(KILN_BLOB_LOAD_TRUSTED | KILN_BLOB_LOAD_NO_CRC))
        return kiln__fail(&v, KILN_ERR_INVALID_ARGUMENT, KILN_NO_OFFSET, "", "kiln_blob_load: unknown flags 0x%X",
                          flags & ~(KILN_BLOB_LOAD_TRUSTED | KILN_BLOB_LOAD_NO_CRC));
    if ((uintptr_t)mem % KILN_BLOB_ALIGN != 0)
        return kiln__fail(&v, KILN_ERR_BLOB_MISALIGNED, KILN_NO_OFFSET, "",
                          "kiln_blob_load: memory at %p is not 64-byte aligned", mem);

    kiln_result r = kiln__check_header(&v);
    if (r == KILN_OK && !(flags & KILN_BLOB_LOAD_TRUSTED)) {
        v.crc_on = !(flags & KILN_BLOB_LOAD_NO_CRC);
        r = kiln__verify_all(&v);
        if (r != KILN_OK && r != KILN_ERR_BLOB_CHECKSUM && v.crc_on) {
            uint32_t crc = kiln__crc_full(v.base, v.size);
            if (crc != v.header->crc32c) r = KILN_ERR_BLOB_CHECKSUM;
            if (r == KILN_ERR_BLOB_CHECKSUM && err) {
                char first[sizeof err->message];
                memcpy(first, err->message, sizeof first);
                err->code = r;
                err->offset = offsetof(kiln_blob_header, crc32c);
                snprintf(err->path, sizeof err->path, "header.crc32c");
                snprintf(err->message, sizeof err->message,
                         "header.crc32c: stored 0x%08X, computed 0x%08X; the content was modified or damaged "
                         "(first error found: %.200s)",
                         v.header->crc32c, crc, first);
            }
        }
    }
    if (r == KILN_OK) *out = (const kiln_blob *)mem;
    return r;
}
