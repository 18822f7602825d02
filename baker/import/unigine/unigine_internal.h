/* Private: the Unigine .mesh ("ms10") and .anim ("an10") importer (../shared/spec/unigine-mesh.md).
 *
 * One reader serves both file kinds. It walks the file strictly in order (spec 9: the first
 * failure decides) through a cursor that never reads past the end: every fixed-size field is
 * checked against the bytes left (V3), every count in 64-bit against count x its element's
 * minimum size (V5) before anything is allocated. Errors carry the rule id (V1..V26), the
 * path inside the file ("surface[2]/target[0]/positions") and the byte offset.
 *
 * Files: unigine_reader.c (cursor, strings, diagnostics), unigine_import.c (file layouts,
 * detection, the importer entries), unigine_skeleton.c (bones, bind pose), unigine_surface.c
 * (surfaces: dual indices flattened, normals, weights, morph targets), unigine_anim.c (frame
 * records to curves).
 */
#ifndef KILN_IMPORT_UNIGINE_INTERNAL_H
#define KILN_IMPORT_UNIGINE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/bake/source.h"

#define KILN__UG_MS10 0x3031736Du /* "ms10" */
#define KILN__UG_AN10 0x30316E61u /* "an10" */
#define KILN__UG_MAX_BONES 32767
#define KILN__UG_MAX_STRING 65535
#define KILN__UG_FPS 30.0f

typedef struct kiln__ug {
    const uint8_t *data;
    size_t         size, pos;
    const char    *file;           /* the input path (the model is named after it) */
    const kiln_import_options *opt;
    kiln_source_scene *scene;
    kiln_diag     *err;
    int            is_anim;        /* .anim file */
    char           where[160];     /* path inside the file of what is being read */
    float          fps;
} kiln__ug;

/* One bone as read (file order). */
typedef struct kiln__ug_bone {
    const char *name;              /* after V23/V25 repairs */
    const char *file_name;         /* as stored (after V23): what clips bind by, first match */
    int32_t     parent;
    uint64_t    offset;            /* of the bone's header */
    uint64_t    bind_offset;       /* of its bind transform */
    float       t[3], r[4], s[3];  /* bind transform (local) */
} kiln__ug_bone;

/* The file's header part shared by both kinds. */
typedef struct kiln__ug_file {
    kiln__ug_bone *bones;     uint32_t bone_count;
    const char   **anim_names; uint32_t anim_count;
    uint64_t      *anim_name_offsets;
    kiln_source_rest_bone *rest;   /* .anim: the bind pose its clips were authored against */
} kiln__ug_file;

/* ---- reader (unigine_reader.c) ------------------------------------------------------------- */
/* Sets ctx->where (printf). */
void kiln__ug_at(kiln__ug *ctx, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Fills ctx->err (code, rule, offset, path = ctx->where) and returns code. */
kiln_result kiln__ug_fail(kiln__ug *ctx, kiln_result code, const char *rule, uint64_t offset, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* A warning through opt->diag (path = ctx->where). */
void kiln__ug_warn(kiln__ug *ctx, const char *rule, uint64_t offset, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
kiln_result kiln__ug_oom(kiln__ug *ctx);
/* A path in scene memory: "<where>" or "<where>/<suffix>"; NULL on allocation failure. */
const char *kiln__ug_path(kiln__ug *ctx);

/* V3: `n` bytes of a fixed-size field must be left. */
kiln_result kiln__ug_need(kiln__ug *ctx, uint64_t n, const char *what);
/* Unchecked reads at an absolute offset (the caller checked the range). */
uint16_t kiln__ug_u16_at(const kiln__ug *ctx, size_t at);
int16_t  kiln__ug_i16_at(const kiln__ug *ctx, size_t at);
int32_t  kiln__ug_i32_at(const kiln__ug *ctx, size_t at);
float    kiln__ug_f32_at(const kiln__ug *ctx, size_t at);
/* Checked reads at the cursor (V3 when cut). */
kiln_result kiln__ug_u8(kiln__ug *ctx, const char *what, uint8_t *out);
kiln_result kiln__ug_i16(kiln__ug *ctx, const char *what, int16_t *out);
kiln_result kiln__ug_f32s(kiln__ug *ctx, const char *what, uint32_t n, float *out);
/* An i32 count: V3 when cut, V4 when negative, V5 when count x min_size > bytes left. */
kiln_result kiln__ug_count(kiln__ug *ctx, const char *what, uint64_t min_size, uint32_t *out);
/* V5 for an array of count x elem bytes at the cursor; advances past it. */
kiln_result kiln__ug_array(kiln__ug *ctx, const char *what, uint64_t count, uint64_t elem, size_t *at);
/* A string (V3, V5, V6; V23 repairs): a copy in scene memory. */
kiln_result kiln__ug_string(kiln__ug *ctx, const char *what, const char **out);
/* An identifier: V3 when cut, V7 when not `magic`. */
kiln_result kiln__ug_magic(kiln__ug *ctx, const char *what, uint32_t magic);
/* The 40-byte bounding volume (box, sphere) at the cursor: V3; V24 warns; an extra for inspect. */
kiln_result kiln__ug_bounds(kiln__ug *ctx, const char *kind, const char *name);
/* Adds an extra (kind, name, detail) at loc (where, offset). */
kiln_result kiln__ug_extra(kiln__ug *ctx, uint64_t offset, const char *kind, const char *name, const char *detail);

/* ---- skeleton (unigine_skeleton.c) ------------------------------------------------------- */
/* Bone count, bone headers (V4, V5, V6, V8, V25), animation names. */
kiln_result kiln__ug_read_bones(kiln__ug *ctx, kiln__ug_file *f);
kiln_result kiln__ug_read_anim_names(kiln__ug *ctx, kiln__ug_file *f);
/* Bind transforms (V5, V9, V19). */
kiln_result kiln__ug_read_bind(kiln__ug *ctx, kiln__ug_file *f);
/* The model's skeleton from the bones. */
kiln_result kiln__ug_build_skeleton(kiln__ug *ctx, const kiln__ug_file *f, kiln_source_model *model);

/* ---- surfaces (unigine_surface.c) --------------------------------------------------------- */
typedef struct kiln__ug_surface_header {
    const char *name;
    uint64_t    offset;
    uint32_t    target_count;
    const char **target_names;
} kiln__ug_surface_header;

/* The model's materials by name (one per distinct surface name that yields a Mesh). */
typedef struct kiln__ug_materials {
    uint32_t *slots;               /* material index + 1, 0 = empty */
    uint32_t  cap;                 /* power of two */
} kiln__ug_materials;

/* Reads the geometry of one surface and appends its Mesh (and blend shapes) to the model,
 * whose meshes, materials and blend_shapes arrays have room for every surface and target. */
kiln_result kiln__ug_read_surface(kiln__ug *ctx, const kiln__ug_file *f, const kiln__ug_surface_header *sh,
                                  uint32_t index, kiln_source_model *model, kiln__ug_materials *mats);

/* Scratch memory from the scene's allocator (not the arena): NULL on overflow or failure. */
void *kiln__ug_tmp(kiln__ug *ctx, uint64_t count, size_t size);
void  kiln__ug_tmp_free(kiln__ug *ctx, void *p);

/* ---- animation (unigine_anim.c) ----------------------------------------------------------- */
/* Reads animation `index` (embedded or .anim) into scene->animations[index]. */
kiln_result kiln__ug_read_animation(kiln__ug *ctx, const kiln__ug_file *f, uint32_t index);

#endif /* KILN_IMPORT_UNIGINE_INTERNAL_H */
