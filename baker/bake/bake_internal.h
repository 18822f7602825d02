/* Private: the intermediate products of baking one input ("unit"), and the interfaces between
 * the bake stages.
 *
 *   stage 1, one unit per input, may run on several threads:
 *       source layer (kiln/bake/source.h, filled by an importer) -> bake_skeleton / bake_mesh /
 *       bake_material / bake_instance / bake_anim -> kiln__bake_unit (plain C data, owned by
 *       the unit). The stages read only the source layer and report by kiln_source_loc
 *       (bake_report.h); no stage includes a Cast header.
 *   stage 2, serial, input order:   units -> kiln__blob_builder (records, strings, streams)
 *   stage 3:                        builder -> laid-out blob bytes with CRC (blob_write.c)
 *
 * Indices inside a unit are local to it (model 0 is the unit's first model); stage 2 adds
 * the running offsets. Nothing in a unit points into another unit.
 */
#ifndef KILN_BAKER_BAKE_INTERNAL_H
#define KILN_BAKER_BAKE_INTERNAL_H

#include "kiln/bake/bake.h"
#include "util.h"
#include "kiln/bake/source.h"
#include "kiln/blob_format.h"

/* Everything a stage-1 function needs besides its node. */
typedef struct kiln__bake_ctx {
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
    uint64_t        input_bytes;    /* input bytes that fed this mesh (its loc.size) */
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
    char    *resolved_path;         /* joined with the scene root, normalised, made absolute: the
                                       build machine's spelling, never stored in the blob */
    char    *root_path;             /* normalised, relative to the scene root: what the blob stores */
    uint32_t source_index;
    float    position[3], rotation[4], scale[3];
} kiln__instance;

/* One baked Animation node (stage 1), then its encoded sample data (kiln__anim_encode).
 *
 * Curves are resampled at every integer frame of [first_frame, last_frame] (D.1, D.3): one
 * dense float track per (joint, component) and per scalar, so that everything after this
 * point works on uniform frames. Components without a curve hold the identity value and
 * mode KILN_MODE_NONE. */
typedef struct kiln__anim_joint {
    char    *name;                  /* bone the curves target (NULL: a placeholder slot) */
    uint32_t modes;                 /* 2 bits per component, KILN_MODE_* */
    float    ab[3];                 /* additive weight of the T, R and S curves */
    float   *values;                /* KILN_ANIM_COMPONENTS x frame_count, component-major */
    uint16_t *rest_mask;            /* NULL, or frame_count masks: bit c = component c holds the
                                       rest of the skeleton the clip binds to (kiln__anim_bind_rest) */
    uint32_t has_authored;          /* the clip names the rest it was authored against: */
    float    authored[KILN_ANIM_COMPONENTS]; /* t, r (x y z w), s */
    uint64_t authored_offset;       /* where the input stores it */
} kiln__anim_joint;

typedef struct kiln__anim_scalar {
    char    *name;
    uint32_t kind;                  /* KILN_SCALAR_* */
    float   *values;                /* frame_count */
} kiln__anim_scalar;

typedef struct kiln__anim_override {
    char    *name;
    uint32_t mode, channels, order; /* as kiln_blob_anim_override */
} kiln__anim_override;

typedef struct kiln__anim_event {
    char    *name;
    int64_t  frame;
    uint32_t order;                 /* file order, to keep equal frames stable when sorting */
} kiln__anim_event;

typedef struct kiln__anim {
    char                *name;
    float                framerate;
    uint32_t             looping;
    int64_t              first_frame, last_frame;
    uint32_t             frame_count;
    kiln__anim_joint    *joints;    uint32_t joint_count;
    kiln__anim_scalar   *scalars;   uint32_t scalar_count;
    kiln__anim_override *overrides; uint32_t override_count;
    kiln__anim_event    *events;    uint32_t event_count;
    char                 bind_rule[16]; /* the input format's rule for a clip that does not fit its skeleton */
    uint64_t             key_count;     /* keys read, after dropping bad ones */
    uint64_t             input_bytes;   /* input bytes of the clip (its loc.size) */
    /* encoded (kiln__anim_encode) */
    unsigned char       *data;          /* constants, track table, rows (blob_format.h) */
    uint64_t             data_size;
    uint32_t             row_stride, animated_count, flags; /* KILN_ANIM_* */
    float                error_bound_m, error_distance_m;
    float                max_error_m;   /* lossy: the largest error measured */
} kiln__anim;

/* One BlendShape (C.5) on a baked mesh of this unit: sparse deltas in the mesh's baked vertex
 * order. */
typedef struct kiln__blend_shape {
    char     *name;
    uint32_t  mesh;                 /* unit-local mesh index */
    float     target_scale;
    uint32_t  delta_count;
    uint32_t *indices;              /* delta_count, ascending, distinct */
    float    *deltas;               /* delta_count x 3 */
} kiln__blend_shape;

/* One Constraint or IKHandle of a skeleton of this unit: the blob record with its skeleton
 * index unit-local (made global in stage 2) and its name outside. */
typedef struct kiln__constraint {
    char                *name;
    kiln_blob_constraint rec;
} kiln__constraint;

typedef struct kiln__ik_handle {
    char               *name;
    kiln_blob_ik_handle rec;
} kiln__ik_handle;

typedef struct kiln__bake_unit {
    const kiln_bake_input *input;
    uint32_t        source;          /* input index */
    kiln__model    *models;    uint32_t model_count;
    kiln__skeleton *skeletons; uint32_t skeleton_count;
    kiln__mesh     *meshes;    uint32_t mesh_count;
    kiln__hair     *hairs;     uint32_t hair_count;
    kiln__material *materials; uint32_t material_count;
    kiln__instance *instances; uint32_t instance_count;
    kiln__anim     *anims;     uint32_t anim_count;
    kiln__blend_shape *blend_shapes; uint32_t blend_shape_count;
    kiln__constraint  *constraints;  uint32_t constraint_count;
    kiln__ik_handle   *ik_handles;   uint32_t ik_handle_count;
    char           *author, *software;
    char           *scene_root;      /* instance paths resolve against it (the build machine's spelling) */
    char           *scene_root_rel;  /* "." when there is a scene root: what the blob stores */
    char           *input_key;       /* the input's path normalised and made absolute (kiln__path_absolute) */
    uint32_t        up_axis;         /* KILN_UP_* */
    kiln_bake_stats stats;
} kiln__bake_unit;

/* ---- stage 1 ------------------------------------------------------------------------------ */

/* Bakes a model's skeleton: topological sort (parents first, source order kept among
 * siblings), rest locals (local from the local parts, derived from the world parts where only
 * those are given), inverse binds with segment scale compensation. */
kiln_result kiln__bake_skeleton(const kiln__bake_ctx *ctx, const kiln_source_skeleton *skel, kiln__skeleton *out);

/* Bakes the IK handles and constraints of `skel`, already baked as unit-local skeleton
 * `skeleton` (`sk`), appending to unit->ik_handles and unit->constraints (reserved by the
 * caller) in source order, bone indices in sk's sorted order; `order` is the item's position
 * among its kind. Constraint offsets are resolved (custom, else the rest-keeping offset for
 * maintain_offset, else the default); constraints whose bones are not two distinct bones and
 * handles whose end bone does not descend from the start bone are dropped and reported
 * (ERROR); a handle without a target is kept inactive (WARNING). Fail only with
 * ERR_OUT_OF_MEMORY. kiln__bake_rig does all of them (IK handles first). */
typedef struct kiln__rig_cache kiln__rig_cache;
kiln_result kiln__bake_ik_handle(const kiln__bake_ctx *ctx, const kiln_source_ik_handle *h, uint32_t skeleton,
                                 const kiln__skeleton *sk, uint32_t order, kiln__bake_unit *unit);
kiln_result kiln__bake_constraint(const kiln__bake_ctx *ctx, const kiln_source_constraint *c, uint32_t skeleton,
                                  const kiln__skeleton *sk, uint32_t order, kiln__rig_cache **cache,
                                  kiln__bake_unit *unit);
void kiln__rig_cache_free(const kiln_allocator *a, kiln__rig_cache *cache);
kiln_result kiln__bake_rig(const kiln__bake_ctx *ctx, const kiln_source_skeleton *skel, uint32_t skeleton,
                           const kiln__skeleton *sk, kiln__bake_unit *unit);

/* Bakes one mesh, the index-th of its model (names a nameless one "mesh<index>"). `skeleton`
 * (NULL when the model has none) supplies the bone remap for joints. Output streams (in this
 * order, absent ones skipped): POSITION, NORMAL, TANGENT, TEXCOORD 0.., COLOR 0.., JOINTS,
 * WEIGHTS, INDICES. Drops bad faces (counted), normalises weights (top max_influences,
 * heaviest first, sum 1), runs meshoptimizer unless KILN_BAKE_NO_OPTIMIZE, quantises per the
 * flags. ERR_CAST_EMPTY when no vertex or no valid face is left. */
kiln_result kiln__bake_mesh(const kiln__bake_ctx *ctx, const kiln_source_mesh *mesh, uint32_t index,
                            const kiln__skeleton *skeleton, kiln__mesh *out);

/* Bakes one hair, the index-th of its model (names a nameless one "hair<index>"): strand
 * offsets + particles. ERR_CAST_EMPTY when it has no strands. */
kiln_result kiln__bake_hair(const kiln__bake_ctx *ctx, const kiln_source_hair *hair, uint32_t index, kiln__hair *out);

/* Bakes one clip, the index-th of its input (a nameless one is named after the input file,
 * "<stem>_<index>" from the second on): curves conditioned (D.2: bad keys dropped, sorted,
 * last duplicate kept, quaternions normalised and hemisphere-aligned) and resampled per frame;
 * overrides and notification events kept. The clip is not encoded yet (see kiln__anim_encode). */
kiln_result kiln__bake_anim(const kiln__bake_ctx *ctx, const kiln_source_animation *anim, uint32_t index,
                            kiln__anim *out);

/* Fits a clip to the skeleton it is bound to (NULL: no skeleton, nothing to do): the frames a
 * joint holds at the rest pose (rest keys) take the skeleton's rest locals, and, when the clip
 * names a bind rule, each joint whose bone the skeleton lacks (it is dropped) and each authored
 * rest transform differing from the skeleton's by more than 1e-4 is reported under that rule.
 * Reports through `sink`. */
void kiln__anim_bind_rest(const kiln_allocator *a, kiln__anim *anim, const kiln__skeleton *skeleton,
                          const kiln_diag_sink *sink);

/* Reorders the joints of `anim` so that slot j drives bone j of `skeleton` where the names
 * match exactly (placeholder slots fill small gaps), which gives the runtime its identity-map
 * fast path; unmatched joints follow in their own order. No-op when too few names match. */
kiln_result kiln__anim_align(const kiln_allocator *a, kiln__anim *anim, const kiln__skeleton *skeleton);

/* Encodes the sample data: lossless, or quantised within the options' bound (measured
 * against `skeleton` when not NULL). Reports through `sink`. */
kiln_result kiln__anim_encode(const kiln_allocator *a, const kiln_bake_options *o, const kiln_diag_sink *sink,
                              kiln__anim *anim, const kiln__skeleton *skeleton);

/* Releases what the bake functions allocated (safe on zeroed structs). */
void kiln__skeleton_free(const kiln_allocator *a, kiln__skeleton *s);
void kiln__mesh_free(const kiln_allocator *a, kiln__mesh *m);
void kiln__hair_free(const kiln_allocator *a, kiln__hair *h);
void kiln__anim_free(const kiln_allocator *a, kiln__anim *anim);


#endif
