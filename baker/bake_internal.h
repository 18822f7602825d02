/* Private: the intermediate products of baking one input ("unit"), and the interfaces between
 * the bake stages.
 *
 *   stage 1, one unit per input, may run on several threads:
 *       parse -> typed accessors -> bake_skeleton / bake_mesh / bake_material / bake_instance
 *       -> kiln__bake_unit (plain C data, owned by the unit)
 *   stage 2, serial, input order:   units -> kiln__blob_builder (records, strings, streams)
 *   stage 3:                        builder -> laid-out blob bytes with CRC (blob_write.c)
 *
 * Indices inside a unit are local to it (model 0 is the unit's first model); stage 2 adds
 * the running offsets. Nothing in a unit points into another unit.
 */
#ifndef KILN_BAKER_BAKE_INTERNAL_H
#define KILN_BAKER_BAKE_INTERNAL_H

#include "kiln/bake.h"
#include "kiln/blob_format.h"
#include "kiln/cast.h"
#include "kiln/cast_scene.h"

/* Everything a stage-1 function needs besides its node. */
typedef struct kiln__bake_ctx {
    const kiln_cast_doc     *doc;
    const kiln_bake_input   *input;
    const kiln_bake_options *options;
    const kiln_allocator    *allocator;   /* never NULL functions inside: use kiln__realloc */
    kiln_diag_sink           sink;        /* forwards to options->diag with the input path prefixed, counts */
    kiln_bake_stats         *stats;       /* this unit's counters (merged in stage 2) */
} kiln__bake_ctx;

/* A finished stream: the descriptor (offset filled at layout) and its payload. */
typedef struct kiln__stream {
    kiln_blob_stream desc;
    void            *data;      /* owned, `desc.count * desc.stride` bytes */
} kiln__stream;

typedef struct kiln__skeleton {
    uint32_t        bone_count;
    uint32_t        depth;
    char          **names;          /* bone_count owned strings, sorted order */
    int32_t        *parents;        /* sorted order, parent < index */
    uint32_t       *source_index;   /* sorted -> Cast bone index */
    uint32_t       *sorted_index;   /* Cast bone index -> sorted */
    uint32_t       *flags;          /* KILN_BONE_* */
    float         (*local_t)[3];    /* rest locals, sorted order */
    float         (*local_r)[4];
    float         (*local_s)[3];
    float         (*inverse_bind)[16]; /* column-major, inverse of the world rest (with SSC) */
} kiln__skeleton;

typedef struct kiln__mesh {
    char           *name;
    uint32_t        model;          /* unit-local model index */
    uint32_t        material;       /* unit-local material index (within the unit) or KILN_BLOB_NONE */
    uint32_t        skinned;        /* joints refer to the model's skeleton */
    kiln_blob_mesh  rec;            /* counts, influences, skinning, layers, bounds (indices fixed in stage 2) */
    kiln__stream   *streams;        /* stream_count entries */
    uint32_t        stream_count;
    uint64_t        input_bytes;    /* Cast payload bytes that fed this mesh */
} kiln__mesh;

typedef struct kiln__hair {
    char           *name;
    uint32_t        model, material;
    uint32_t        strand_count, particle_count;
    kiln__stream    strands;        /* KILN_ATTR_HAIR_STRANDS */
    kiln__stream    particles;      /* KILN_ATTR_HAIR_PARTICLES */
} kiln__hair;

typedef struct kiln__slot {
    char                   *name;
    char                   *path;   /* KILN_SLOT_FILE */
    kiln_blob_material_slot rec;    /* kind, color_space, rgba, rgba_linear */
} kiln__slot;

typedef struct kiln__material {
    char       *name;
    char       *type;
    uint32_t    model;
    uint64_t    cast_hash;          /* NodeHash, to link meshes */
    uint32_t    cast_node;
    kiln__slot *slots;
    uint32_t    slot_count;
} kiln__material;

typedef struct kiln__model {
    char           *name;
    float           position[3], rotation[4], scale[3];
    int32_t         skeleton;       /* unit-local skeleton index or -1 */
} kiln__model;

typedef struct kiln__instance {
    char    *name;
    char    *path;                  /* File p as written */
    char    *resolved_path;         /* joined with the scene root, normalised */
    uint32_t source_index;
    float    position[3], rotation[4], scale[3];
} kiln__instance;

typedef struct kiln__bake_unit {
    const kiln_bake_input *input;
    uint32_t        source;          /* input index */
    kiln__model    *models;    uint32_t model_count;
    kiln__skeleton *skeletons; uint32_t skeleton_count;
    kiln__mesh     *meshes;    uint32_t mesh_count;
    kiln__hair     *hairs;     uint32_t hair_count;
    kiln__material *materials; uint32_t material_count;
    kiln__instance *instances; uint32_t instance_count;
    char           *author, *software, *scene_root;
    uint32_t        up_axis;         /* KILN_UP_* */
    kiln_bake_stats stats;
} kiln__bake_unit;

/* ---- stage 1 ------------------------------------------------------------------------------ */

/* Bakes the Skeleton node `skel` of a model: topological sort (parents first, Cast order kept
 * among siblings), rest locals (local from lp/lr/s, derived from wp/wr where only world is
 * given), inverse binds with segment scale compensation. Fails on a cycle. */
kiln_result kiln__bake_skeleton(const kiln__bake_ctx *ctx, uint32_t skel, kiln__skeleton *out);

/* Bakes one Mesh node. `skeleton` (NULL when the model has none) supplies the bone remap for
 * joints. Output streams (in this order, absent ones skipped): POSITION, NORMAL, TANGENT,
 * TEXCOORD 0.., COLOR 0.., JOINTS, WEIGHTS, INDICES. Drops bad faces (counted), normalises
 * weights (top max_influences, heaviest first, sum 1), runs meshoptimizer unless
 * KILN_BAKE_NO_OPTIMIZE, quantises per the flags. */
kiln_result kiln__bake_mesh(const kiln__bake_ctx *ctx, uint32_t mesh_node, const kiln__skeleton *skeleton,
                            kiln__mesh *out);

/* Bakes one Hair node: strand offsets + particles. */
kiln_result kiln__bake_hair(const kiln__bake_ctx *ctx, uint32_t hair_node, kiln__hair *out);

/* Releases what the bake functions allocated (safe on zeroed structs). */
void kiln__skeleton_free(const kiln_allocator *a, kiln__skeleton *s);
void kiln__mesh_free(const kiln_allocator *a, kiln__mesh *m);
void kiln__hair_free(const kiln_allocator *a, kiln__hair *h);

/* Copies a string with the allocator (NULL stays NULL). Returns NULL on allocation failure
 * only when s is not NULL. */
char *kiln__strdup(const kiln_allocator *a, const char *s);

#endif
