/* kiln/cast.h - zero-copy reader for Cast files (the container by DTZxPorter).
 *
 * Overview
 *   kiln_cast_doc *doc;
 *   kiln_diag err;
 *   kiln_result r = kiln_cast_parse(bytes, size, NULL, &doc, &err);
 *   if (r != KILN_OK) { fprintf(stderr, "%s: %s\n", err.path, err.message); ... }
 *   for (uint32_t n = 0; n < kiln_cast_node_count(doc); n++) { const kiln_cast_node *node = ...; }
 *   kiln_cast_free(doc);
 *
 * The parser makes one pass over the caller's buffer and keeps it: properties point into it,
 * nothing is copied, and the buffer must outlive the document. Every size, count and offset is
 * checked before use (64-bit arithmetic, no allocation sized from an unchecked count), nesting
 * is walked with an explicit stack, and a structural fault rejects the file with a specific
 * kiln_result plus the node path and byte offset in the kiln_diag.
 *
 * What is structural (the file is rejected) and what is semantic (one node is dropped and
 * reported) follows the Cast format reference, section F:
 *   - rejected: short header, bad magic, truncation, NodeSize < 24 or past its parent, a known
 *     node whose contents do not add up to NodeSize, impossible counts, names/arrays/strings
 *     that run past their node;
 *   - skipped with a warning: unknown node ids (by NodeSize, children and all), and any node
 *     holding a property of unknown type (it cannot be sized, so the whole node is skipped by
 *     its NodeSize, reported with severity ERROR because its data is lost);
 *   - everything about values (missing or mistyped properties, ranges, references) is checked
 *     by the typed accessors in kiln/cast_scene.h, which apply the format's defaults.
 *
 * Node storage is depth-first pre-order: node 0 is the first root, a node's children follow
 * it. Unknown and skipped nodes are kept as opaque nodes (KILN_CAST_NODE_OPAQUE) with their raw
 * byte range so that a round trip through the writer preserves them.
 */
#ifndef KILN_CAST_H
#define KILN_CAST_H

#include <stddef.h>
#include <stdint.h>
#include "../alloc.h"
#include "../result.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_CAST_NONE UINT32_MAX /* "no node" / "no property" index */

/* Node identifiers (the u32 read little-endian from the node header). */
#define KILN_CAST_ID_ROOT         0x746F6F72u /* "root" */
#define KILN_CAST_ID_MODEL        0x6C646F6Du /* "modl" */
#define KILN_CAST_ID_MESH         0x6873656Du /* "mesh" */
#define KILN_CAST_ID_HAIR         0x72696168u /* "hair" */
#define KILN_CAST_ID_BLENDSHAPE   0x68736C62u /* "blsh" */
#define KILN_CAST_ID_SKELETON     0x6C656B73u /* "skel" */
#define KILN_CAST_ID_BONE         0x656E6F62u /* "bone" */
#define KILN_CAST_ID_IKHANDLE     0x64686B69u /* "ikhd" */
#define KILN_CAST_ID_CONSTRAINT   0x74736E63u /* "cnst" */
#define KILN_CAST_ID_ANIMATION    0x6D696E61u /* "anim" */
#define KILN_CAST_ID_CURVE        0x76727563u /* "curv" */
#define KILN_CAST_ID_CURVE_MODE_OVERRIDE 0x564F4D43u /* "CMOV" */
#define KILN_CAST_ID_NOTIFICATION_TRACK  0x6669746Eu /* "ntif" */
#define KILN_CAST_ID_MATERIAL     0x6C74616Du /* "matl" */
#define KILN_CAST_ID_FILE         0x656C6966u /* "file" */
#define KILN_CAST_ID_COLOR        0x726C6F63u /* "colr" */
#define KILN_CAST_ID_INSTANCE     0x74736E69u /* "inst" */
#define KILN_CAST_ID_METADATA     0x6174656Du /* "meta" */

/* Property type ids (the u16 from the property header). */
#define KILN_CAST_TYPE_BYTE    0x0062u /* 'b'  u8 */
#define KILN_CAST_TYPE_SHORT   0x0068u /* 'h'  u16 */
#define KILN_CAST_TYPE_INT     0x0069u /* 'i'  u32 */
#define KILN_CAST_TYPE_LONG    0x006Cu /* 'l'  u64 */
#define KILN_CAST_TYPE_FLOAT   0x0066u /* 'f'  f32 */
#define KILN_CAST_TYPE_DOUBLE  0x0064u /* 'd'  f64 */
#define KILN_CAST_TYPE_STRING  0x0073u /* 's'  NUL-terminated UTF-8 */
#define KILN_CAST_TYPE_VEC2    0x7632u /* 'v2' f32 x2 (bytes "2v" on disk) */
#define KILN_CAST_TYPE_VEC3    0x7633u /* 'v3' f32 x3 */
#define KILN_CAST_TYPE_VEC4    0x7634u /* 'v4' f32 x4 */

#define KILN_CAST_MAGIC       0x74736163u /* "cast" */
#define KILN_CAST_HEADER_SIZE 16u
#define KILN_CAST_NODE_HEADER_SIZE 24u
#define KILN_CAST_PROP_HEADER_SIZE 8u

/* Node flags. */
#define KILN_CAST_NODE_OPAQUE 0x1u /* unknown id or unparseable: kept as raw bytes, no props or children */
#define KILN_CAST_NODE_KNOWN  0x2u /* the id is one of KILN_CAST_ID_* */

typedef struct kiln_cast_node {
    uint32_t id;          /* KILN_CAST_ID_* or an unknown id */
    uint32_t flags;       /* KILN_CAST_NODE_* */
    uint64_t hash;        /* NodeHash */
    uint64_t offset;      /* byte offset of the node header in the buffer */
    uint32_t size;        /* NodeSize, header included */
    uint32_t parent;      /* node index of the parent, KILN_CAST_NONE for top-level nodes */
    uint32_t first_prop;  /* index into the property table */
    uint32_t prop_count;
    uint32_t first_child; /* node index, KILN_CAST_NONE when there are no children */
    uint32_t next_sibling;/* node index, KILN_CAST_NONE for the last child */
    uint32_t child_count; /* stored children (opaque ones included) */
    uint32_t ordinal;     /* position among the siblings with the same id (Bone index for bones) */
    uint32_t depth;       /* 0 for top-level nodes */
} kiln_cast_node;

typedef struct kiln_cast_prop {
    const char *name;     /* points into the buffer; NOT NUL-terminated, see name_len */
    const void *data;     /* payload in the buffer, unaligned; strings include their NUL */
    uint64_t    offset;   /* byte offset of the property header */
    uint32_t    count;    /* ArrayLength: elements (1 for strings, whatever the file says) */
    uint32_t    bytes;    /* payload size in bytes */
    uint16_t    type;     /* KILN_CAST_TYPE_* */
    uint16_t    name_len;
    uint32_t    node;     /* owning node index */
} kiln_cast_prop;

typedef struct kiln_cast_parse_options {
    const kiln_allocator *allocator; /* NULL: libc */
    kiln_diag_sink        diag;      /* warnings and skipped nodes; fn NULL: discarded */
    uint32_t              max_depth; /* 0: 256. Deeper nesting is rejected (ERR_LIMIT). */
} kiln_cast_parse_options;

typedef struct kiln_cast_doc kiln_cast_doc;

/* Parses `size` bytes at `data` (any alignment). On success *out_doc owns the node and
 * property tables and points into `data`, which must stay valid and unchanged until
 * kiln_cast_free(). On failure *out_doc is NULL, nothing is leaked, and `err` (if not NULL)
 * describes the first structural fault. `options` may be NULL. */
KILN_API kiln_result kiln_cast_parse(const void *data, size_t size,
                                     const kiln_cast_parse_options *options,
                                     kiln_cast_doc **out_doc, kiln_diag *err);

/* Releases the document (not the buffer). NULL is allowed. */
KILN_API void kiln_cast_free(kiln_cast_doc *doc);

/* Header fields and the buffer the document reads. */
KILN_API uint32_t kiln_cast_version(const kiln_cast_doc *doc);
KILN_API uint32_t kiln_cast_root_count(const kiln_cast_doc *doc);   /* top-level nodes stored */
KILN_API const void *kiln_cast_data(const kiln_cast_doc *doc);
KILN_API size_t   kiln_cast_size(const kiln_cast_doc *doc);

/* Nodes: index in [0, kiln_cast_node_count). kiln_cast_node_at returns NULL when out of range. */
KILN_API uint32_t kiln_cast_node_count(const kiln_cast_doc *doc);
KILN_API const kiln_cast_node *kiln_cast_node_at(const kiln_cast_doc *doc, uint32_t node);

/* The k-th top-level node (k < kiln_cast_root_count), or KILN_CAST_NONE. */
KILN_API uint32_t kiln_cast_root(const kiln_cast_doc *doc, uint32_t k);

/* The k-th child of `node` whose id is `id` (id 0: any id), or KILN_CAST_NONE. Iterating all
 * children this way is O(children^2); prefer first_child/next_sibling for loops. */
KILN_API uint32_t kiln_cast_child(const kiln_cast_doc *doc, uint32_t node, uint32_t id, uint32_t k);
/* How many children of `node` have id `id` (0: all). */
KILN_API uint32_t kiln_cast_child_count(const kiln_cast_doc *doc, uint32_t node, uint32_t id);

/* The first child of `scope` whose NodeHash is `hash` (the format's reference rule: every hash
 * reference is resolved among the children of one node, first match wins). O(1) through the
 * hash index. KILN_CAST_NONE when absent. */
KILN_API uint32_t kiln_cast_find_hash(const kiln_cast_doc *doc, uint32_t scope, uint64_t hash);
/* How many children of `scope` share `hash` (1 = unique), for duplicate warnings. */
KILN_API uint32_t kiln_cast_hash_count(const kiln_cast_doc *doc, uint32_t scope, uint64_t hash);

/* Properties of a node: index in [0, node->prop_count). NULL when out of range. */
KILN_API const kiln_cast_prop *kiln_cast_prop_at(const kiln_cast_doc *doc, uint32_t node, uint32_t k);
/* The property named `name` (exact, case-sensitive). When a name occurs more than once the
 * last one wins (the reference reader's dict semantics); *dup_count, if not NULL, receives the
 * number of occurrences. NULL when absent. */
KILN_API const kiln_cast_prop *kiln_cast_find_prop(const kiln_cast_doc *doc, uint32_t node,
                                                   const char *name, uint32_t *dup_count);

/* Size of one element of a property type (strings: 0, unknown types: 0). */
KILN_API uint32_t kiln_cast_type_size(uint16_t type);
/* Short names: "b" "h" "i" "l" "f" "d" "s" "v2" "v3" "v4", "?" for unknown types. */
KILN_API const char *kiln_cast_type_name(uint16_t type);
/* Readable node kind: "Root", "Model", ... "Metadata"; "Unknown" for other ids. */
KILN_API const char *kiln_cast_id_name(uint32_t id);

/* Element readers for a property's payload (unaligned, little-endian). Index must be < count.
 * _u64 widens b/h/i/l; _f64 reads f/d and widens integer types; _vec reads `comps` floats of
 * element i of a v2/v3/v4 (or comps==1 from f/d/integers) into out. */
KILN_API uint64_t kiln_cast_prop_u64(const kiln_cast_prop *p, uint32_t i);
KILN_API double   kiln_cast_prop_f64(const kiln_cast_prop *p, uint32_t i);
KILN_API void     kiln_cast_prop_vec(const kiln_cast_prop *p, uint32_t i, uint32_t comps, float *out);
/* The string payload (NUL-terminated inside the buffer) or NULL if the property is no string. */
KILN_API const char *kiln_cast_prop_str(const kiln_cast_prop *p);

/* Writes the node's path ("Root[0]/Model[0]/Mesh[1]") into buf (always NUL-terminated,
 * truncated to cap). Returns buf. */
KILN_API char *kiln_cast_node_path(const kiln_cast_doc *doc, uint32_t node, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* KILN_CAST_H */
