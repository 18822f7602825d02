/* kiln/blob.h - load a baked blob in place and read it through typed views.
 *
 *   const kiln_blob *blob;
 *   kiln_diag err;
 *   if (kiln_blob_load(mem, size, 0, &blob, &err) != KILN_OK) { ... err.message ... }
 *   uint32_t mesh_count;
 *   const kiln_blob_mesh *meshes = kiln_blob_meshes(blob, &mesh_count);
 *
 * Loading never allocates and never copies: `mem` (64-byte aligned, owned by the caller) is
 * verified and then used as it is; `blob` points into it and stays valid as long as `mem`
 * does. Full verification checks the header, the CRC-32C of the whole blob, every
 * section's bounds and alignment, every record's indices (parent < own index, joint < bone
 * count, triangle index < vertex count, ranges inside their tables, strings inside the string
 * table) and that every float is finite, so that after KILN_OK no accessor can read out of
 * bounds. KILN_BLOB_LOAD_TRUSTED checks only the header (O(1)) for content the caller has
 * verified before (a shipping build's own files).
 *
 * Thread safety: loading only reads `mem`, so threads may load the same bytes at once; a
 * loaded blob is read-only, and every view and lookup here may be called from any number of
 * threads together, as may kiln_crc32c. A kiln_blob_file belongs to its opener: close it once,
 * after every thread has finished with the blob it holds.
 */
#ifndef KILN_BLOB_H
#define KILN_BLOB_H

#include <stddef.h>
#include <stdint.h>
#include "alloc.h"
#include "blob_format.h"
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An opaque handle: the verified blob memory itself. */
typedef struct kiln_blob kiln_blob;

/* Load flags */
#define KILN_BLOB_LOAD_TRUSTED  0x1u /* header checks only */
#define KILN_BLOB_LOAD_NO_CRC   0x2u /* full structural verification, checksum skipped */

/* Verifies `size` bytes at `mem` (aligned to KILN_BLOB_ALIGN) and sets *out to the blob.
 * On failure *out is NULL and err (optional) names the check, the section and the byte
 * offset. Errors: ERR_BLOB_* codes, ERR_BLOB_MISALIGNED (mem not 64-byte aligned), ERR_INVALID_ARGUMENT (NULL
 * pointers, unknown flags). */
KILN_API kiln_result kiln_blob_load(const void *mem, size_t size, uint32_t flags,
                                    const kiln_blob **out, kiln_diag *err);

/* A blob opened from a file: mapped read-only where the platform allows, otherwise read into
 * memory from `allocator` (NULL: libc) with one read. */
typedef struct kiln_blob_file {
    const kiln_blob *blob;
    void            *memory;    /* mapping or allocation */
    size_t           size;
    uint32_t         mapped;    /* 1 when memory is a mapping */
    kiln_allocator   allocator;
} kiln_blob_file;

/* Opens, maps (or reads) and loads `path` with `flags`. On failure nothing is left open. */
KILN_API kiln_result kiln_blob_open_file(const char *path, uint32_t flags, const kiln_allocator *allocator,
                                         kiln_blob_file *out, kiln_diag *err);
/* Unmaps or frees. Safe on a zeroed struct. */
KILN_API void kiln_blob_close_file(kiln_blob_file *file);

/* ---- header and sections ---------------------------------------------------------------- */
KILN_API const kiln_blob_header *kiln_blob_header_of(const kiln_blob *blob);
/* The section table: *count entries. */
KILN_API const kiln_blob_section *kiln_blob_sections(const kiln_blob *blob, uint32_t *count);
/* The first section of `kind`, or NULL. */
KILN_API const kiln_blob_section *kiln_blob_find_section(const kiln_blob *blob, uint32_t kind);
/* A four-letter name for a section kind ("MESH"), in a static buffer per call site: buf[5]. */
KILN_API const char *kiln_blob_kind_name(uint32_t kind, char buf[5]);

/* ---- typed views: pointer to the first record and its count (0 and NULL when absent) ----- */
KILN_API const kiln_blob_metadata     *kiln_blob_metadata_of(const kiln_blob *blob);
KILN_API const kiln_blob_model        *kiln_blob_models(const kiln_blob *blob, uint32_t *count);
KILN_API const kiln_blob_skeleton     *kiln_blob_skeletons(const kiln_blob *blob, uint32_t *count);
KILN_API const kiln_blob_bone         *kiln_blob_bones(const kiln_blob *blob, uint32_t *count);
KILN_API const kiln_soa_xform         *kiln_blob_rest_pose(const kiln_blob *blob, uint32_t *count);
KILN_API const float                  *kiln_blob_inverse_binds(const kiln_blob *blob, uint32_t *count); /* 16 floats each */
KILN_API const kiln_blob_mesh         *kiln_blob_meshes(const kiln_blob *blob, uint32_t *count);
KILN_API const kiln_blob_hair         *kiln_blob_hairs(const kiln_blob *blob, uint32_t *count);
KILN_API const kiln_blob_stream       *kiln_blob_streams(const kiln_blob *blob, uint32_t *count);
KILN_API const kiln_blob_material     *kiln_blob_materials(const kiln_blob *blob, uint32_t *count);
KILN_API const kiln_blob_material_slot *kiln_blob_material_slots(const kiln_blob *blob, uint32_t *count);
KILN_API const kiln_blob_instance     *kiln_blob_instances(const kiln_blob *blob, uint32_t *count);
KILN_API const kiln_blob_reference    *kiln_blob_references(const kiln_blob *blob, uint32_t *count);
KILN_API const kiln_blob_name_entry   *kiln_blob_name_index(const kiln_blob *blob, uint32_t *count);

/* The string at `offset` in the string table ("" for 0 or out of range). */
KILN_API const char *kiln_blob_string(const kiln_blob *blob, uint32_t offset);

/* A stream's payload: `count` elements of `stride` bytes, 16-byte aligned. */
KILN_API const void *kiln_blob_stream_data(const kiln_blob *blob, const kiln_blob_stream *stream);
/* The stream of a mesh with `semantic` and `set`, or NULL. */
KILN_API const kiln_blob_stream *kiln_blob_mesh_stream(const kiln_blob *blob, const kiln_blob_mesh *mesh,
                                                       uint32_t semantic, uint32_t set);

/* Looks up a record by name: `kind` is the section kind (KILN_SECTION_MODELS, MESHES,
 * MATERIALS, BONES, REFERENCES, ...). Returns the record index, or KILN_BLOB_NONE. For bones
 * the index is global (into kiln_blob_bones); use kiln_blob_find_bone for one skeleton. */
KILN_API uint32_t kiln_blob_find(const kiln_blob *blob, uint32_t kind, const char *name);
/* Index of the bone named `name` within skeleton `skeleton` (0-based in that skeleton), or
 * KILN_BLOB_NONE. */
KILN_API uint32_t kiln_blob_find_bone(const kiln_blob *blob, uint32_t skeleton, const char *name);

/* FNV-1a 32-bit hash of a NUL-terminated UTF-8 name, as stored in kiln_blob_name_entry. */
KILN_API uint32_t kiln_name_hash(const char *name);

/* CRC-32C (Castagnoli, reflected, init/xorout 0xFFFFFFFF) of `size` bytes, continuing from
 * `crc` (start with 0). Uses the SSE4.2 instruction when the CPU has it. */
KILN_API uint32_t kiln_crc32c(uint32_t crc, const void *data, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* KILN_BLOB_H */
