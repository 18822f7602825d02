/* kiln/bake.h - flatten source files (Cast, and whatever importers this build has: see
 * kiln_importer_at in kiln/bake/source.h) into one runtime blob.
 *
 *   kiln_bake_input in = {"hero.cast", bytes, size, NULL};     // NULL format: from the bytes
 *   kiln_bake_options opt;  memset(&opt, 0, sizeof opt);   // zero = defaults
 *   kiln_bake_result res;
 *   kiln_diag err;
 *   if (kiln_bake(&in, 1, &opt, &res, &err) == KILN_OK) {
 *       kiln_bake_save(&res, "hero.kiln", &err);            // atomic: temp file + rename
 *       kiln_bake_result_free(&res);
 *   }
 *
 * Baking is deterministic: the same inputs (bytes and order) and options give the same blob,
 * byte for byte, whatever the thread count. Each input is imported into the source layer
 * (kiln/bake/source.h) and baked on its own (optionally on several threads), then the results
 * are merged in input order. An input whose leading bytes no importer recognises is read as
 * Cast, whose reader then names what it found (ERR_CAST_BAD_MAGIC); a `format` no importer has
 * fails with ERR_FORMAT_UNKNOWN naming the formats this build reads.
 *
 * Semantic problems follow the Cast reference (section F) and the importers' own rules: the smallest unit that holds them
 * is dropped (a mesh, a face, an influence, an instance) and reported through the diag sink;
 * with KILN_BAKE_STRICT any ERROR-severity report fails the bake instead.
 */
#ifndef KILN_BAKE_H
#define KILN_BAKE_H

#include <stddef.h>
#include <stdint.h>
#include "../alloc.h"
#include "../result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_bake_input {
    const char *path;   /* for messages, relative paths (materials, instances) and the report */
    const void *data;   /* the source bytes; must stay valid during kiln_bake */
    size_t      size;
    const char *format; /* importer name ("cast", ...; kiln_importer_find in kiln/bake/source.h);
                           NULL: found from the leading bytes, never from the path */
} kiln_bake_input;

/* Bake flags */
#define KILN_BAKE_STRICT             0x01u /* ERROR-severity reports fail the bake */
#define KILN_BAKE_QUANTIZE_POSITIONS 0x02u /* 16-bit positions with per-mesh bounds */
#define KILN_BAKE_QUANTIZE_NORMALS   0x04u /* octahedral 2x16-bit normals and tangents */
#define KILN_BAKE_QUANTIZE_UVS       0x08u /* 16-bit UVs with per-layer bounds */
#define KILN_BAKE_NO_OPTIMIZE        0x10u /* keep vertex and index order (no meshoptimizer passes) */
#define KILN_BAKE_SRGB_VERTEX_COLORS 0x20u /* decode vertex colours from sRGB to linear */
#define KILN_BAKE_LOSSY_ANIMATION    0x40u /* quantise animation rows within anim_error_m (below) */

/* Animation defaults: 0.1 mm at a virtual vertex 10 cm from each joint. */
#define KILN_BAKE_ANIM_ERROR_M    0.0001f
#define KILN_BAKE_ANIM_DISTANCE_M 0.1f
/* Skin influences kept per vertex: the most, and the default (max_influences = 0). */
#define KILN_BAKE_MAX_INFLUENCES  8u

typedef struct kiln_bake_options {
    const kiln_allocator *allocator;  /* NULL: libc. Must be thread-safe when threads > 1 */
    kiln_diag_sink        diag;       /* warnings and dropped data, tagged with the input path */
    uint32_t              flags;      /* KILN_BAKE_* */
    uint32_t              max_influences; /* kept per vertex, 1..8; 0 = KILN_BAKE_MAX_INFLUENCES (8) */
    uint32_t              threads;    /* inputs, then animation clips, baked in parallel; 0 or
                                         1 = serial. Diagnostics and progress are replayed on the
                                         calling thread in input order, whatever the thread
                                         count. */
    const char           *scene_root; /* directory for instance paths when Metadata has no sr */
    /* Progress: called after each input is baked (done of total), from the calling thread. */
    void (*progress)(void *user, uint32_t done, uint32_t total, const char *path);
    void                 *progress_user;
    /* Lossy animation (KILN_BAKE_LOSSY_ANIMATION): the largest model-space distance allowed
     * between the lossless and the quantised pose, for every joint at every frame, measured at
     * the joint's origin and at virtual vertices anim_distance_m along its local x, y and z
     * axes. 0 = the defaults above. The bound is enforced through the bone hierarchy of a
     * skeleton baked in the same call whose bones the clip names (rest pose and segment scale
     * compensation included); a clip baked without one is bounded per joint in its parent's
     * space instead, which cannot see the error add up along a chain. A clip whose bound cannot
     * be met is stored lossless (reported). */
    float                 anim_error_m;
    float                 anim_distance_m;
    /* Frames per second for the clips of formats that store no rate of their own (passed to the
     * importers as kiln_import_options.framerate); 0 = each format's default. */
    float                 framerate;
} kiln_bake_options;

/* Per-section statistics for `-v` and `--report`. */
typedef struct kiln_bake_section_stats {
    uint32_t kind;         /* KILN_SECTION_* */
    uint32_t count;        /* records */
    uint64_t input_bytes;  /* Cast payload bytes that fed it (0 when not meaningful) */
    uint64_t output_bytes; /* section size in the blob */
} kiln_bake_section_stats;

typedef struct kiln_bake_stats {
    uint64_t input_bytes;           /* sum of input file sizes */
    uint64_t output_bytes;          /* blob size */
    uint32_t models, meshes, hairs, skeletons, bones, materials, instances;
    uint32_t animations;                    /* clips baked */
    uint64_t anim_keys;                     /* Cast keys read (after dropping bad ones) */
    uint64_t anim_bytes;                    /* clip sample data in the blob (constants, tracks, rows, scalars) */
    float    anim_max_error_m;              /* lossy: the largest error measured over all clips */
    uint64_t vertices_in, vertices_out;     /* before/after remap and dedup */
    uint64_t triangles_in, triangles_out;
    uint64_t degenerate_faces_dropped, bad_index_faces_dropped;
    uint64_t influences_dropped;            /* beyond max_influences, invalid bones or weights */
    uint64_t warnings, errors;              /* reports sent to the sink */
    uint32_t section_count;
    kiln_bake_section_stats sections[32];
} kiln_bake_stats;

typedef struct kiln_bake_result {
    void          *blob;      /* KILN_BLOB_ALIGN-aligned, from the options' allocator */
    size_t         size;
    kiln_bake_stats stats;
    kiln_allocator allocator; /* to free `blob` */
} kiln_bake_result;

/* Bakes `count` inputs into one blob. On failure *out is zeroed and err names the input,
 * node path and offset. The blob is verified with kiln_blob_load before returning.
 * The bytes depend on the inputs' bytes, their paths relative to each other (a world's
 * references find their models among the inputs by path) and the options, never on where the
 * inputs lie: no absolute path of this machine is stored, so the same inputs baked from any
 * directory, named by absolute or relative paths, give the same blob. */
KILN_API kiln_result kiln_bake(const kiln_bake_input *inputs, uint32_t count, const kiln_bake_options *options,
                               kiln_bake_result *out, kiln_diag *err);

/* Writes the blob to `path` atomically (temporary file in the same directory, fsync, rename).
 * On failure no file is left behind (ERR_OUTPUT with the reason). */
KILN_API kiln_result kiln_bake_save(const kiln_bake_result *res, const char *path, kiln_diag *err);

KILN_API void kiln_bake_result_free(kiln_bake_result *res);

#ifdef __cplusplus
}
#endif

#endif /* KILN_BAKE_H */
