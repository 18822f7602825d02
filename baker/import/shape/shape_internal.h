/* Private to the *.Shape importer (shared/spec/shape-format.md): the reading context, the
 * records parsed from the stream, and the helpers the importer's files share.
 *
 * The stream is read front to back by one cursor. Every read checks the bytes left (V7) and
 * every count is checked in 64-bit arithmetic against the whole stream (V10) before anything is
 * allocated from it. Parsed records point into the decoded stream, which lives until the import
 * returns; everything handed to the scene is copied into the scene's arena. */
#ifndef KILN_IMPORT_SHAPE_INTERNAL_H
#define KILN_IMPORT_SHAPE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/bake/source.h"

#define KILN__SHAPE_HEADER_SIZE  17u
#define KILN__SHAPE_MAX_DECODED  (1u << 30)
#define KILN__SHAPE_MAX_DEPTH    256u
#define KILN__SHAPE_MAX_NODES    65535u
#define KILN__SHAPE_MAX_FRAME    (1u << 20)
#define KILN__SHAPE_NO_MATERIAL  0xFFFFu
#define KILN__SHAPE_MAX_INFLUENCES 4u

/* One geometry's bone: name, offset matrix (column-major, column vectors) and its weights. */
typedef struct kiln__shape_bone {
    const char    *name;
    uint64_t       offset;        /* stream offset of the record */
    double         offset_matrix[16];
    const uint8_t *weights;       /* NumPositions floats */
} kiln__shape_bone;

typedef struct kiln__shape_geometry {
    uint64_t       offset;
    uint32_t       topology;
    uint16_t       material;
    uint8_t        bone_count;
    int            dropped;       /* W4/W5: parsed, not imported */
    uint32_t       vertex_count;
    const uint8_t *positions;     /* 3 floats per vertex */
    const uint8_t *normals;       /* or NULL */
    const uint8_t *uv[2];         /* or NULL */
    uint8_t        index_format;  /* 0 (non-indexed), 42 (R32) or 57 (R16) */
    uint32_t       index_count;
    const uint8_t *indices;
    uint64_t       index_offset;
    kiln__shape_bone *bones;
    uint32_t       references;    /* node references (any LOD) */
} kiln__shape_geometry;

typedef struct kiln__shape_node {
    const char    *name;          /* decoded, never NULL */
    uint64_t       offset;
    int32_t        parent;
    uint32_t       depth;         /* root = 1 */
    double         matrix[16];    /* local, as stored (column-major for column vectors) */
    uint32_t       lod;
    float          distance[2];
    uint8_t        hidden;
    uint32_t       geometry_count;
    const uint8_t *geometry_refs; /* ui16 per reference */
    /* derived */
    double         rest_model[16];
} kiln__shape_node;

typedef struct kiln__shape_material {
    int front_ccw;
} kiln__shape_material;

/* The import context: the cursor over the decoded stream plus what was parsed so far. */
typedef struct kiln__shape {
    kiln_source_scene         *scene;
    const kiln_import_options *opt;
    kiln_diag                 *err;
    const uint8_t *s;             /* decoded stream */
    size_t         size;          /* DecodedSize */
    size_t         pos;
    uint64_t       base;          /* input offset of stream byte 0 (17 for RAW; 0 for ZLIB: offsets
                                     are then decoded-stream offsets) */
    int            unicode;       /* HasUnicodeStrings */
    char           where[160];    /* the record being read, for messages ("Geometry[2]") */
    /* parsed */
    uint32_t               material_count;
    kiln__shape_material  *materials;
    uint32_t               lens_flare_count;
    uint32_t               geometry_count;
    kiln__shape_geometry  *geometries;
    uint32_t               node_count;
    kiln__shape_node      *nodes;
    uint32_t              *name_order; /* node indices sorted by (name, index) */
    kiln_source_model     *model;
} kiln__shape;

/* ---- diagnostics (shape_reader.c) -------------------------------------------------------- */
/* Fills ctx->err (severity ERROR) and returns `code`. `field` is appended to ctx->where. */
kiln_result kiln__shape_fail(kiln__shape *ctx, kiln_result code, const char *rule, uint64_t stream_offset,
                             const char *field, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
/* Reports a repair through opt->diag. */
void kiln__shape_warn(kiln__shape *ctx, kiln_severity severity, const char *rule, uint64_t stream_offset,
                      const char *field, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
/* A source loc for the record at `stream_offset`: path "<where>[.field]". */
kiln_source_loc kiln__shape_loc(kiln__shape *ctx, uint64_t stream_offset, uint64_t size, const char *field);
void kiln__shape_where(kiln__shape *ctx, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- the cursor (shape_reader.c) --------------------------------------------------------- */
/* n bytes at the cursor, or V7. */
kiln_result kiln__shape_take(kiln__shape *ctx, size_t n, const char *field, const uint8_t **out);
kiln_result kiln__shape_u8(kiln__shape *ctx, const char *field, uint8_t *out);
kiln_result kiln__shape_u16(kiln__shape *ctx, const char *field, uint16_t *out);
kiln_result kiln__shape_u32(kiln__shape *ctx, const char *field, uint32_t *out);
kiln_result kiln__shape_f64(kiln__shape *ctx, const char *field, double *out);
/* A bool: values > 1 are true with W2. */
kiln_result kiln__shape_bool(kiln__shape *ctx, const char *field, uint8_t *out);
/* `count` floats; `finite_rule` non-NULL: a NaN or infinity rejects with that rule (V14); NULL:
 * W18 once (out-of-scope data). `out` may be NULL (skip). */
kiln_result kiln__shape_floats(kiln__shape *ctx, uint32_t count, const char *field, const char *finite_rule, float *out);
/* A string in the stream's form (section 3), decoded to UTF-8 in the scene's arena. */
kiln_result kiln__shape_string(kiln__shape *ctx, const char *field, const char **out);
/* V10 / V7 check of `count` records of at least `min_size` bytes each, before reading them. */
kiln_result kiln__shape_check_count(kiln__shape *ctx, uint64_t count, uint64_t min_size, const char *field);

float kiln__shape_rd_f32(const uint8_t *p);
uint16_t kiln__shape_rd_u16(const uint8_t *p);
uint32_t kiln__shape_rd_u32(const uint8_t *p);

/* ---- the stream's parts ------------------------------------------------------------------ */
kiln_result kiln__shape_read_properties(kiln__shape *ctx);
kiln_result kiln__shape_read_materials(kiln__shape *ctx);
kiln_result kiln__shape_read_lights_to_sounds(kiln__shape *ctx); /* items 10-16 of 4.1 */
kiln_result kiln__shape_read_geometries(kiln__shape *ctx);
kiln_result kiln__shape_read_nodes(kiln__shape *ctx);
kiln_result kiln__shape_build_skeleton(kiln__shape *ctx);
kiln_result kiln__shape_build_meshes(kiln__shape *ctx);
kiln_result kiln__shape_read_animations(kiln__shape *ctx);
/* Tangents and signs of a mesh with normals and UV0 (shape_tangent.c); no-op otherwise. */
kiln_result kiln__shape_tangents(kiln__shape *ctx, kiln_source_mesh *m);
/* Adds one out-of-scope item to scene->extras. */
kiln_result kiln__shape_extra(kiln__shape *ctx, const char *kind, const char *name, kiln_source_loc loc,
                              const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* The first node in pre-order named `name`, or -1. */
int32_t kiln__shape_find_node(const kiln__shape *ctx, const char *name);

/* ---- maths (shape_math.c): 4x4 matrices column-major, doubles ----------------------------- */
void kiln__shape_mat_mul(const double *a, const double *b, double *out);
void kiln__shape_mat_from_trs(const double *t, const double *q, const double *s, double *out);
/* Inverse of the 3x3 part, transposed (for normals); 0 when singular. */
int kiln__shape_normal_matrix(const double *m, double *out3x3);
void kiln__shape_transform_point(const double *m, const float *p, float *out);
void kiln__shape_transform_normal(const double *n3, const float *n, float *out);
/* Section 6.2: rest TRS of a node matrix; returns a bit set of the W11 repairs made
 * (1 projective row, 2 shear, 4 zero scale). */
unsigned kiln__shape_decompose(const double *m, double *t, double *q, double *s);
/* Yaw, pitch, roll (radians) to the quaternion q_Y(yaw) * q_X(pitch) * q_Z(roll). */
void kiln__shape_quat_from_ypr(double yaw, double pitch, double roll, double *q);

#endif /* KILN_IMPORT_SHAPE_INTERNAL_H */
