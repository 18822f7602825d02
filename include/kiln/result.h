/* kiln/result.h - result codes and diagnostics shared by the runtime and the baker.
 *
 * Every fallible call returns a kiln_result. KILN_OK is 0; every other value names one
 * specific failure and has a fixed, human-readable description (kiln_result_str). Codes are
 * only ever appended, never renumbered, so they are stable across versions.
 *
 * Calls that read files also fill a kiln_diag with the place of the failure: the byte offset
 * in the input and, for Cast files, the node path (for example `Root[0]/Model[0]/Mesh[1].vp`).
 *
 * Thread safety: the descriptions are static strings, safe to read from any thread; a
 * kiln_diag is written by the one call it is passed to.
 */
#ifndef KILN_RESULT_H
#define KILN_RESULT_H

#include <stdint.h>
#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, description). The list is the single source of both the enum and the strings. */
#define KILN_RESULTS(X)                                                                           \
    X(OK,                     "ok")                                                               \
    X(ERR_INVALID_ARGUMENT,   "invalid argument")                                                 \
    X(ERR_OUT_OF_MEMORY,      "out of memory")                                                    \
    X(ERR_IO,                 "file could not be read or written")                                \
    X(ERR_BUFFER_TOO_SMALL,   "caller buffer is smaller than required")                           \
    X(ERR_NOT_FOUND,          "no such item")                                                     \
    X(ERR_LIMIT,              "input exceeds an implementation limit")                            \
    /* Cast structure: the file (or the containing node) cannot be parsed */                      \
    X(ERR_CAST_TRUNCATED_HEADER, "file is shorter than the 16-byte Cast header")                  \
    X(ERR_CAST_BAD_MAGIC,     "not a Cast file (magic mismatch)")                                 \
    X(ERR_CAST_TRUNCATED,     "unexpected end of file")                                           \
    X(ERR_CAST_ROOT_COUNT,    "fewer root nodes than the header declares")                        \
    X(ERR_CAST_NODE_TOO_SMALL, "node size is smaller than the 24-byte node header")               \
    X(ERR_CAST_NODE_OVERRUN,  "node extends past its parent or the end of the file")              \
    X(ERR_CAST_NODE_SIZE_MISMATCH, "node contents do not add up to its declared size")            \
    X(ERR_CAST_COUNT_IMPOSSIBLE, "property or child count cannot fit in the bytes left")          \
    X(ERR_CAST_NAME_OVERRUN,  "property name extends past the end of its node")                   \
    X(ERR_CAST_ARRAY_OVERRUN, "property data extends past the end of its node")                   \
    X(ERR_CAST_STRING_UNTERMINATED, "string property has no NUL terminator inside its node")      \
    X(ERR_CAST_UNKNOWN_PROPERTY_TYPE, "property has an unknown type id and cannot be sized")      \
    /* Cast semantics: one node (or unit of data) is dropped */                                   \
    X(ERR_CAST_MISSING_PROPERTY, "required property is missing")                                  \
    X(ERR_CAST_WRONG_TYPE,    "property has a type that this field does not accept")             \
    X(ERR_CAST_BAD_VALUE,     "property value is out of range or not finite")                     \
    X(ERR_CAST_LENGTH_MISMATCH, "array lengths that must agree do not")                           \
    X(ERR_CAST_INDEX_RANGE,   "index refers past the end of its array")                           \
    X(ERR_CAST_BONE_CYCLE,    "bone parent indices form a cycle")                                 \
    X(ERR_CAST_UNRESOLVED,    "hash reference does not resolve in its scope")                     \
    X(ERR_CAST_UNEXPECTED_PARENT, "node appears under a parent that cannot hold it")              \
    X(ERR_CAST_DUPLICATE,     "duplicate name, hash or property")                                 \
    X(ERR_CAST_UNKNOWN_NODE,  "unknown node id (skipped by its size)")                            \
    X(ERR_CAST_VERSION,       "unexpected Cast version or flags")                                 \
    X(ERR_CAST_TRAILING_BYTES, "bytes after the last root node")                                  \
    X(ERR_CAST_EMPTY,         "empty array")                                                      \
    /* Blob loading */                                                                            \
    X(ERR_BLOB_TRUNCATED,     "blob is shorter than its header or a section says")                \
    X(ERR_BLOB_BAD_MAGIC,     "not a kiln blob (magic mismatch)")                                 \
    X(ERR_BLOB_BAD_VERSION,   "blob format version not supported by this runtime")                \
    X(ERR_BLOB_BAD_HEADER,    "blob header field is invalid")                                     \
    X(ERR_BLOB_MISALIGNED,    "blob, caller memory or a section is not aligned as required")     \
    X(ERR_BLOB_CHECKSUM,      "blob checksum mismatch (the content was modified or damaged)")     \
    X(ERR_BLOB_BAD_SECTION,   "blob section table entry is invalid")                              \
    X(ERR_BLOB_BAD_RECORD,    "blob record refers outside its tables")                            \
    X(ERR_BLOB_NOT_FINITE,    "blob holds a NaN or infinite value")                               \
    X(ERR_CAST_INSTANCE_CYCLE, "instance references form a cycle")                                \
    X(ERR_OUTPUT,             "output could not be written")                                      \
    /* Importers and the source layer (every format but Cast's own structure codes) */            \
    X(ERR_FORMAT_UNKNOWN,     "input is in no format this build reads")                           \
    X(ERR_SOURCE_INVALID,     "imported data breaks an invariant of the source layer")            \
    X(ERR_IMPORT_TRUNCATED,   "unexpected end of data in a source file")                          \
    X(ERR_IMPORT_BAD_HEADER,  "source file header, identifier or version is invalid")             \
    X(ERR_IMPORT_BAD_COUNT,   "a count or size in a source file cannot fit in the bytes left")    \
    X(ERR_IMPORT_BAD_VALUE,   "a value in a source file is out of range or not finite")           \
    X(ERR_IMPORT_BAD_REFERENCE, "an index or name in a source file refers to nothing")            \
    X(ERR_IMPORT_UNSUPPORTED, "a source file uses a feature this importer does not read")         \
    X(ERR_IMPORT_DECOMPRESS,  "a compressed stream in a source file cannot be decoded")           \
    X(ERR_IMPORT_NESTING,     "a source file nests deeper than the importer allows")              \
    X(ERR_IMPORT_REPAIRED,    "a source file needed a repair (the data was kept)")

typedef enum kiln_result {
#define KILN_RESULT_ENUM_(name, desc) KILN_##name,
    KILN_RESULTS(KILN_RESULT_ENUM_)
#undef KILN_RESULT_ENUM_
    KILN_RESULT_COUNT_
} kiln_result;

/* The fixed description of a result code, e.g. "unexpected end of file". Never NULL; unknown
 * values give "unknown result". */
KILN_API const char *kiln_result_str(kiln_result r);

/* The enumerator's name without the prefix, e.g. "ERR_CAST_TRUNCATED", for logs and JSON. */
KILN_API const char *kiln_result_name(kiln_result r);

typedef enum kiln_severity {
    KILN_SEVERITY_INFO = 0,    /* nothing wrong; a fact worth telling (e.g. version) */
    KILN_SEVERITY_WARNING = 1, /* data kept, a default or repair applied */
    KILN_SEVERITY_ERROR = 2    /* data dropped (a node, a face, a key) or the input rejected */
} kiln_severity;

#define KILN_NO_OFFSET UINT64_MAX

/* One diagnostic: what went wrong, where, and a sentence for a person. `path` and `message`
 * are always NUL-terminated (empty when unknown). */
typedef struct kiln_diag {
    kiln_result   code;
    kiln_severity severity;
    uint64_t      offset;      /* byte offset in the input, KILN_NO_OFFSET when not applicable */
    char          path[192];   /* node path, e.g. "Root[0]/Model[0]/Mesh[1].vp" */
    char          message[320];/* full sentence including the specifics */
    char          rule[16];    /* the numbered rule of the format's reference that applies
                                  (e.g. "V7", "R3", "9.4"), empty when none */
} kiln_diag;

/* Receives warnings and dropped-data errors while a file is read. `user` is the sink's. The
 * diag is only valid during the call. */
typedef void (*kiln_diag_fn)(void *user, const kiln_diag *diag);

typedef struct kiln_diag_sink {
    kiln_diag_fn fn;   /* NULL: diagnostics are discarded */
    void        *user;
} kiln_diag_sink;

/* Which argument a failed runtime call rejected, and why. A runtime call that returns an error
 * for its arguments (ERR_INVALID_ARGUMENT, ERR_BUFFER_TOO_SMALL, ERR_BLOB_MISALIGNED) also
 * records the detail in a per-thread kiln_diag: `code` the result returned, `path` the function
 * and the argument (e.g. "kiln_sample: desc->out_count"), `message` a sentence with the values
 * involved (e.g. "out_count 2 is below the binding's soa_count 10"), `offset` KILN_NO_OFFSET.
 * The record stays until the next failure on the same thread (successful calls leave it), so
 * read it right after the call that failed. Never NULL; all fields empty or zero before any
 * failure. Runtime evaluation functions that cannot fail do not touch it. */
KILN_API const kiln_diag *kiln_error_detail(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RESULT_H */
