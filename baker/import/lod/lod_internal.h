/* Private: the LODka3D *.lod importer (shared/spec/lod-format.md), split by what each file
 * reads: lod_reader.c (bounded reads, diagnostics, CP1251 names), lod_chunks.c (the chunk tree
 * and the importer entry), lod_material.c (MAT1, TXTR, SHDR), lod_skeleton.c (SKL1),
 * lod_mesh.c and lod_mesh_skin.c (MSH1), lod_anim.c (ANM1), lod_extras.c (the chunks the
 * runtime does not use) and lod_finish.c (names resolved after the whole file is read). */
#ifndef KILN_IMPORT_LOD_INTERNAL_H
#define KILN_IMPORT_LOD_INTERNAL_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "kiln/bake/source.h"

#if defined(__GNUC__) || defined(__clang__)
#define KILN__LOD_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define KILN__LOD_PRINTF(a, b)
#endif

#define KILN__LOD_MAX_BONES 32768u

/* One chunk: its 12-byte header at `off`, data in [data, end). */
typedef struct kiln__lod_chunk {
    char        id[5];
    int32_t     size, count;
    uint64_t    off, data, end;
    const char *path;   /* "LOD1/MSL1[5]/MSH1[0]" */
} kiln__lod_chunk;

/* A bounded cursor over one chunk (or one record of it). Reads past `end` fail with
 * `overrun_rule` (R7, or R17 inside a shader record); with `soft` set nothing is reported and
 * the caller turns the failure into a repair (out-of-scope chunks, W13). */
typedef struct kiln__lod_rd {
    const uint8_t *data;   /* the whole input */
    uint64_t       pos, end;
    const char    *path;
    const char    *overrun_rule;
    int            soft;
    const char    *failed_field; /* soft mode: the field that did not fit */
} kiln__lod_rd;

/* A material as read, before the bump shaders and the slots are resolved. */
typedef struct kiln__lod_material {
    kiln_source_loc loc;
    const char *name;
    const char *textures[2];          /* NULL when absent */
    float       ambient[4], diffuse[4], emission[4], specular[4], env[4];
    uint8_t     shininess, blending, image_alpha, texture_mode, texture_wrap, texture_format;
    uint8_t     texture_enabled, enabled, mapping;
    float       brightness, gamma, normal_map_scale;
    const char *normal_map, *specular_map; /* from the first bump shader naming this material */
    int         has_bump;
    int         nonfinite;            /* a colour component was not finite (default kept) */
    float       bump_light_power, bump_specular_power;
} kiln__lod_material;

typedef struct kiln__lod_shader {
    kiln_source_loc loc;
    const char *target, *normal, *specular;
    float       light_power, specular_power;
} kiln__lod_shader;

/* A mesh (one face group) with what is resolved after the whole file is read. */
typedef struct kiln__lod_mesh {
    kiln_source_mesh mesh;
    const char      *material_name, *second_material_name;
    int              visible;         /* mesh AND face group */
    const char      *layout;          /* "position normal uv0" */
} kiln__lod_mesh;

/* The importer's state. Every array lives in the scene's arena. */
typedef struct kiln__lod {
    const uint8_t      *data;
    uint64_t            size;
    const char         *input_path;
    kiln_source_scene  *scene;
    kiln_diag_sink      sink;
    kiln_diag          *err;

    /* skeleton (SKL1) */
    int                 has_skeleton;
    uint32_t            bones_cnt;
    uint32_t           *id_to_index;   /* BoneID -> SKL1 file index */
    uint32_t           *index_to_id;   /* SKL1 file index -> BoneID */
    uint8_t            *bone_name_dup; /* 1: an earlier bone has the same name (W12) */
    kiln_source_skeleton *skeleton;
    int                 rest_set;      /* the first usable ANM1 gave the rest pose */

    /* order state */
    uint32_t            singletons;    /* bit per singleton ID seen in LOD1 */
    int                 msl_seen;

    kiln__lod_material *materials;  uint32_t material_count, material_cap;
    kiln__lod_shader   *shaders;    uint32_t shader_count, shader_cap;
    kiln__lod_mesh     *meshes;     uint32_t mesh_count, mesh_cap;
    kiln_source_animation *anims;   uint32_t anim_count, anim_cap;
    kiln_source_extra  *extras;     uint32_t extra_count, extra_cap;
} kiln__lod;

/* ---- lod_reader.c ---------------------------------------------------------------------------- */

void kiln__lod_rd_init(kiln__lod_rd *rd, const kiln__lod *c, uint64_t pos, uint64_t end, const char *path);
uint64_t kiln__lod_left(const kiln__lod_rd *rd);

/* Reject: fills c->err (code, ERROR, rule, path, offset, message) and returns `code`. */
kiln_result kiln__lod_fail(kiln__lod *c, kiln_result code, const char *rule, const char *path, uint64_t offset,
                           const char *fmt, ...) KILN__LOD_PRINTF(6, 7);
/* Repair or drop: hands a diagnostic to the options' sink. */
void kiln__lod_warn(kiln__lod *c, kiln_severity sev, const char *rule, const char *path, uint64_t offset,
                    const char *fmt, ...) KILN__LOD_PRINTF(6, 7);

/* Bounded reads: return KILN_OK or the reject (R7 overrun); `what` names the field. */
kiln_result kiln__lod_u8(kiln__lod *c, kiln__lod_rd *rd, const char *what, uint8_t *out);
kiln_result kiln__lod_i16(kiln__lod *c, kiln__lod_rd *rd, const char *what, int16_t *out);
kiln_result kiln__lod_i32(kiln__lod *c, kiln__lod_rd *rd, const char *what, int32_t *out);
kiln_result kiln__lod_f32(kiln__lod *c, kiln__lod_rd *rd, const char *what, float *out);
/* A non-negative int32 count or length (R8 when negative). */
kiln_result kiln__lod_count(kiln__lod *c, kiln__lod_rd *rd, const char *what, uint32_t *out);
/* Reserves count * elem bytes (64-bit arithmetic) and returns their offset (R7 when they do not fit). */
kiln_result kiln__lod_span(kiln__lod *c, kiln__lod_rd *rd, const char *what, uint64_t count, uint64_t elem,
                           uint64_t *offset);
/* An LStr decoded from CP1251 to UTF-8 (W8 for 0x98 and embedded NULs). */
kiln_result kiln__lod_lstr(kiln__lod *c, kiln__lod_rd *rd, const char *what, const char **out);
/* `len` raw bytes at `offset` decoded from CP1251 (W8 reported at `path`). NULL: out of memory. */
const char *kiln__lod_decode(kiln__lod *c, uint64_t offset, uint64_t len, const char *path, const char *what);

/* Little-endian loads from the input at an offset the caller has bounds-checked. */
uint16_t kiln__lod_ld_u16(const kiln__lod *c, uint64_t off);
uint32_t kiln__lod_ld_u32(const kiln__lod *c, uint64_t off);
float    kiln__lod_ld_f32(const kiln__lod *c, uint64_t off);
/* Index of width 1, 2 or 4 bytes. */
uint32_t kiln__lod_ld_index(const kiln__lod *c, uint64_t off, uint32_t width);

/* Checks `count` f32 values at `off` are finite (R9 names the first that is not). */
kiln_result kiln__lod_finite(kiln__lod *c, const char *path, uint64_t off, uint64_t count, const char *what);

kiln_result kiln__lod_oom(kiln__lod *c, const char *path, uint64_t offset);
/* "<base>/<label>[<index>]" in scene memory; NULL when out of memory. */
const char *kiln__lod_path(kiln__lod *c, const char *base, const char *label, uint32_t index);

/* Grows an arena array to hold count + 1 elements (doubling; the old block stays in the arena
 * until the scene is freed). Returns the array to use, NULL when out of memory. */
void *kiln__lod_grow(kiln__lod *c, void *array, uint32_t count, uint32_t *cap, size_t elem);
/* Appends one zeroed element to `arr` and points `out` at it (NULL when out of memory). */
#define KILN__LOD_PUSH(c, arr, count, cap, out)                                         \
    do {                                                                                \
        void *kiln__g = kiln__lod_grow((c), (arr), (count), &(cap), sizeof *(arr));     \
        (out) = NULL;                                                                   \
        if (kiln__g) {                                                                  \
            (arr) = kiln__g;                                                            \
            (out) = &(arr)[(count)++];                                                  \
            memset((out), 0, sizeof *(out));                                            \
        }                                                                               \
    } while (0)
/* Adds an extra (kind, name, detail) for `kiln inspect`. */
kiln_result kiln__lod_extra(kiln__lod *c, const char *kind, const char *name, const char *path, uint64_t offset,
                            uint64_t size, const char *detail);

/* ---- per chunk ------------------------------------------------------------------------------- */

kiln_result kiln__lod_read_mat1(kiln__lod *c, const kiln__lod_chunk *ch);
kiln_result kiln__lod_read_txtr(kiln__lod *c, const kiln__lod_chunk *ch);
kiln_result kiln__lod_read_shdr(kiln__lod *c, const kiln__lod_chunk *ch);
kiln_result kiln__lod_read_skl1(kiln__lod *c, const kiln__lod_chunk *ch);
kiln_result kiln__lod_read_msh1(kiln__lod *c, const kiln__lod_chunk *ch);
kiln_result kiln__lod_read_anm1(kiln__lod *c, const kiln__lod_chunk *ch);

/* Out-of-scope chunks: never reject (their container structure is checked by the walk). */
kiln_result kiln__lod_read_inf1(kiln__lod *c, const kiln__lod_chunk *ch);
kiln_result kiln__lod_read_phs1(kiln__lod *c, const kiln__lod_chunk *ch);
kiln_result kiln__lod_read_lig1(kiln__lod *c, const kiln__lod_chunk *ch, const char **name);
kiln_result kiln__lod_read_pxi1(kiln__lod *c, const kiln__lod_chunk *ch);
kiln_result kiln__lod_read_col1(kiln__lod *c, const kiln__lod_chunk *ch);
kiln_result kiln__lod_read_img1(kiln__lod *c, const kiln__lod_chunk *ch);
kiln_result kiln__lod_read_morph(kiln__lod *c, const kiln__lod_chunk *ch);

/* Weighted and rigid skin of one MSH1, per LOD vertex (lod_mesh_skin.c). */
typedef struct kiln__lod_skin {
    uint32_t  vertex_count;
    uint8_t  *count;       /* influences per vertex (0..8), NULL when the mesh has no skin */
    uint32_t *bones;       /* 8 per vertex: skeleton file indices, heaviest first */
    float    *weights;     /* 8 per vertex, normalised */
    int       unweighted;  /* some vertex has no influence */
} kiln__lod_skin;

kiln_result kiln__lod_read_skin(kiln__lod *c, kiln__lod_rd *rd, uint32_t vertex_count, kiln__lod_skin *skin);

/* Resolves material names and bump shaders, and builds the model (lod_finish.c). */
kiln_result kiln__lod_finish(kiln__lod *c, const kiln__lod_chunk *lod1);

#endif
