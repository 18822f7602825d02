/* kiln/cast_write.h - build a Cast tree in memory and write it as a valid file.
 *
 *   kiln_cast_writer *w = kiln_cast_writer_create(NULL);
 *   uint32_t root  = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 0);
 *   uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 1);
 *   kiln_cast_writer_string(w, model, "n", "hero");
 *   uint32_t mesh  = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 2);
 *   kiln_cast_writer_prop(w, mesh, "vp", KILN_CAST_TYPE_VEC3, positions, vertex_count);
 *   kiln_cast_writer_ints(w, mesh, "f", indices, index_count);   // smallest of b/h/i
 *   kiln_cast_writer_save(w, "hero.cast", &err);
 *   kiln_cast_writer_destroy(w);
 *
 * Node sizes are computed by the writer (NodeSize includes the 24-byte header). Property data is
 * copied when added, unless added with kiln_cast_writer_prop_ref, whose memory the caller keeps
 * alive until the writer is destroyed. Children are written in the order they were added, all
 * properties of a node before its children, as the format requires. Errors (out of memory, a
 * node or property over 4 GiB) are sticky: the first one is returned by every later call and
 * by save.
 *
 * Details:
 *   - Node handles are indices in the order nodes were added; a node may gain properties and
 *     children at any time, in any order relative to other nodes.
 *   - Invalid arguments (an unknown node handle, a NULL name, an unknown property type,
 *     properties or children on a raw node) are sticky errors too (ERR_INVALID_ARGUMENT), so a
 *     chain of calls can be checked once, at save.
 *   - Each NodeSize is kept up to date as properties and nodes are added (a walk up the parent
 *     chain, O(depth) per call), so ERR_LIMIT comes from the call that makes a node exceed
 *     0xFFFFFFFF bytes. The file as a whole may exceed 4 GiB (sizes are 64-bit).
 *   - Values given to _prop, _prop_ref and the convenience forms are in host byte order; the
 *     file is little-endian on every host. kiln_cast_writer_raw and kiln_cast_writer_add_doc
 *     reference bytes that are already in file order.
 *   - _size, _write and _save do not modify the writer (_save only allocates its temporary
 *     path), so a complete writer can be written any number of times.
 *   - Allocations (the writer, its tables, copied payloads and names, save's temporary path) go
 *     through the allocator given to _create (NULL: libc).
 */
#ifndef KILN_CAST_WRITE_H
#define KILN_CAST_WRITE_H

#include "cast.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_cast_writer kiln_cast_writer;

/* NULL on allocation failure. */
KILN_API kiln_cast_writer *kiln_cast_writer_create(const kiln_allocator *allocator);
KILN_API void kiln_cast_writer_destroy(kiln_cast_writer *w);

/* Adds a node under `parent` (KILN_CAST_NONE: a top-level node) and returns its handle, or
 * KILN_CAST_NONE after an error. */
KILN_API uint32_t kiln_cast_writer_node(kiln_cast_writer *w, uint32_t parent, uint32_t id, uint64_t hash);

/* Adds a property with `count` elements of `type` read from `data` (count * element size
 * bytes; for KILN_CAST_TYPE_STRING, `data` is a NUL-terminated string, the payload is
 * strlen + 1 bytes and count is written as given, normally 1). The name is copied. Vector
 * types take count vectors (3 floats each for KILN_CAST_TYPE_VEC3). */
KILN_API kiln_result kiln_cast_writer_prop(kiln_cast_writer *w, uint32_t node, const char *name,
                                           uint16_t type, const void *data, uint32_t count);
/* Same, referencing `data` instead of copying it. */
KILN_API kiln_result kiln_cast_writer_prop_ref(kiln_cast_writer *w, uint32_t node, const char *name,
                                               uint16_t type, const void *data, uint32_t count);
/* Convenience forms. _ints picks the smallest of b/h/i that holds the largest value, as the
 * reference writer does (<= 0xFF: b, <= 0xFFFF: h, else i; no values: b). _floats accepts
 * KILN_CAST_TYPE_FLOAT/VEC2/VEC3/VEC4 with count elements of that type. */
KILN_API kiln_result kiln_cast_writer_string(kiln_cast_writer *w, uint32_t node, const char *name, const char *value);
KILN_API kiln_result kiln_cast_writer_ints(kiln_cast_writer *w, uint32_t node, const char *name, const uint32_t *values, uint32_t count);
KILN_API kiln_result kiln_cast_writer_floats(kiln_cast_writer *w, uint32_t node, const char *name, uint16_t type, const float *values, uint32_t count);
KILN_API kiln_result kiln_cast_writer_u64(kiln_cast_writer *w, uint32_t node, const char *name, uint64_t value);
KILN_API kiln_result kiln_cast_writer_byte(kiln_cast_writer *w, uint32_t node, const char *name, uint8_t value);

/* Adds a complete node verbatim (header, properties, children) as a child of `parent`
 * (KILN_CAST_NONE: top level), e.g. an unknown node kept by the reader. `bytes` must hold a
 * node whose NodeSize equals `size` (>= 24), else ERR_INVALID_ARGUMENT. Referenced, not
 * copied. A raw node takes no properties or children. */
KILN_API kiln_result kiln_cast_writer_raw(kiln_cast_writer *w, uint32_t parent, const void *bytes, uint32_t size);

/* Appends every node and property of a parsed document (opaque nodes verbatim), referencing
 * its buffer, which must outlive the writer. read -> add_doc -> write reproduces a well-formed
 * input byte for byte. */
KILN_API kiln_result kiln_cast_writer_add_doc(kiln_cast_writer *w, const kiln_cast_doc *doc);

/* Size of the file that would be written. 0 after an error. */
KILN_API uint64_t kiln_cast_writer_size(const kiln_cast_writer *w);
/* Writes the file into dst (cap >= kiln_cast_writer_size()). */
KILN_API kiln_result kiln_cast_writer_write(const kiln_cast_writer *w, void *dst, uint64_t cap);
/* Writes the file to `path` atomically: a temporary file in the same directory (mkstemp),
 * fsync, then rename over `path`; on failure the temporary file is removed and an existing
 * `path` is left untouched. A replaced file keeps its permission bits; a new one gets 0644.
 * I/O failures return ERR_IO with err->message naming `path` and the system's reason; a
 * writer that failed earlier returns its sticky error and creates nothing. err may be NULL. */
KILN_API kiln_result kiln_cast_writer_save(const kiln_cast_writer *w, const char *path, kiln_diag *err);

#ifdef __cplusplus
}
#endif

#endif /* KILN_CAST_WRITE_H */
