/* kiln/bake/source.h - the source layer: what every importer produces and every bake stage reads.
 *
 *   source bytes ─importer─▶ kiln_source_scene ─kiln_source_validate─▶ bake stages ─▶ blob
 *
 * An importer (Cast, Unigine .mesh/.anim, *.Shape, LODka3D *.lod, ...) decodes one input into
 * plain C data: arrays with counts, UTF-8 names, float transforms, with the format's defaults
 * and repairs already applied and reported. Nothing here refers to a file format: a bake stage
 * never sees where the data came from except through `kiln_source_loc`, which names a place in
 * the input for diagnostics.
 *
 * Conventions (the same for every importer):
 *   - units are the source's (Cast: as stored; the bake does not rescale);
 *   - quaternions are x, y, z, w; matrices column-major; positions model space;
 *   - arrays are owned by the scene's arena (kiln_source_alloc) and are never NULL when their
 *     count is non-zero, except where a field says "NULL when absent";
 *   - indices are 0-based into the arrays of the same owner (a mesh's material indexes its
 *     model's materials, a blend shape's mesh its model's meshes, a bone's parent its
 *     skeleton's bones); KILN_SOURCE_NONE means "none";
 *   - names may be NULL where a field says so (the bake then names the item); they are
 *     NUL-terminated UTF-8.
 *
 * kiln_source_validate checks every invariant the bake stages rely on (counts against arrays,
 * index ranges, finite transforms, acyclic parents, key arrays); an importer runs it before
 * handing a scene on, so a bug in one importer is a clean error, never a crash in a stage.
 *
 * Thread-safety: a scene is built and read by one thread at a time; scenes share nothing.
 */
#ifndef KILN_BAKE_SOURCE_H
#define KILN_BAKE_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include "../alloc.h"
#include "../result.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_SOURCE_NONE       0xFFFFFFFFu
#define KILN_SOURCE_MAX_LAYERS 16u /* UV and colour layers per mesh */
#define KILN_SOURCE_MAX_INFLUENCES 255u /* influences stored per vertex in a source mesh */

/* Where an item came from, for diagnostics: `path` is a path inside the input, in the format's
 * own terms ("Root[0]/Model[0]/Mesh[1]", "surface[2]", "SKELETON/BONE[4]"); offset the byte
 * offset of its start in the input (KILN_NO_OFFSET when unknown); size the bytes of the input
 * that fed it (statistics; 0 when not meaningful). A bake diagnostic about the item names
 * "<input path>:<loc.path>[.<field>]" and loc.offset. */
typedef struct kiln_source_loc {
    const char *path;   /* NULL: the whole input */
    uint64_t    offset;
    uint64_t    size;
} kiln_source_loc;

/* ---- skeletons ------------------------------------------------------------------------------ */

/* One bone. The rest transform is given as a local transform (relative to the parent), as a
 * world transform (model space), or both; has_* say which parts are present. Where only the
 * world part is present the bake derives the local one through the parent. Absent parts are the
 * identity (scale (1,1,1)). Rotations are unit quaternions. */
typedef struct kiln_source_bone {
    kiln_source_loc loc;
    const char *name;                     /* NULL: named "bone<index>" */
    int32_t     parent;                   /* index of the parent bone, -1 for a root */
    uint32_t    segment_scale_compensate; /* 1: the parent's scale does not reach this bone's
                                             rotation and scale, only its translation */
    uint32_t    has_local_position, has_local_rotation, has_world_position, has_world_rotation, has_scale;
    float       local_position[3];
    float       local_rotation[4];
    float       world_position[3];
    float       world_rotation[4];
    float       scale[3];                 /* local scale */
} kiln_source_bone;

typedef enum kiln_source_constraint_type {
    KILN_SOURCE_CONSTRAINT_POINT = 0,
    KILN_SOURCE_CONSTRAINT_ORIENT = 1,
    KILN_SOURCE_CONSTRAINT_SCALE = 2
} kiln_source_constraint_type;

/* A constraint between two bones of the same skeleton (Maya-like point/orient/scale). */
typedef struct kiln_source_constraint {
    kiln_source_loc loc;
    const char *name;                 /* may be NULL */
    kiln_source_constraint_type type;
    int32_t     constrained_bone, target_bone;
    uint32_t    maintain_offset;
    uint32_t    has_custom_offset;
    float       custom_offset[4];     /* point: xyz; orient: quaternion; scale: xyz */
    float       weight;               /* 0..1 */
    uint32_t    skip[3];              /* skip x, y, z */
} kiln_source_constraint;

/* A two-bone or longer IK chain from start_bone down to end_bone. Optional bones are -1. */
typedef struct kiln_source_ik_handle {
    kiln_source_loc loc;
    const char *name;                 /* may be NULL */
    int32_t     start_bone, end_bone, target_bone, pole_vector_bone, pole_bone;
    float       target_offset[3];
    uint32_t    use_target_rotation;
} kiln_source_ik_handle;

typedef struct kiln_source_skeleton {
    kiln_source_loc         loc;
    kiln_source_bone       *bones;       uint32_t bone_count;
    kiln_source_ik_handle  *ik_handles;  uint32_t ik_handle_count;
    kiln_source_constraint *constraints; uint32_t constraint_count;
} kiln_source_skeleton;

/* ---- meshes --------------------------------------------------------------------------------- */

typedef enum kiln_source_skinning {
    KILN_SOURCE_SKIN_LINEAR = 0,
    KILN_SOURCE_SKIN_DUAL_QUAT = 1
} kiln_source_skinning;

/* One colour layer: exactly one of the two arrays is set. */
typedef struct kiln_source_color_layer {
    const uint32_t *rgba8;    /* packed RGBA8, R in bits 0-7, one per vertex; or NULL */
    const float    *rgba;     /* 4 floats per vertex; or NULL */
} kiln_source_color_layer;

/* A triangle mesh. Per-vertex arrays hold vertex_count entries; absent optional arrays are NULL.
 * Faces are index triples; a face with an index >= vertex_count or with two equal indices is
 * allowed here (the bake drops it and counts it). Skin: max_influence > 0 gives
 * vertex_count * max_influence bone indices (into the model's skeleton) and weights; a bone
 * index outside the skeleton or a weight that is not finite and >= 0 is dropped by the bake.
 * weight_values NULL with max_influence == 1 means every weight is 1. */
typedef struct kiln_source_mesh {
    kiln_source_loc loc;
    const char     *name;                  /* may be NULL */
    uint32_t        vertex_count;
    uint32_t        face_count;
    const float    *positions;             /* 3 per vertex */
    const float    *normals;               /* 3 per vertex, or NULL */
    const float    *tangents;              /* 3 per vertex, or NULL */
    const float    *tangent_signs;         /* 1 per vertex (+1/-1 handedness), or NULL */
    uint32_t        uv_layer_count;
    const float    *uv[KILN_SOURCE_MAX_LAYERS];   /* 2 per vertex, V origin top-left; a layer may be NULL (dropped) */
    uint32_t        color_layer_count;
    kiln_source_color_layer color[KILN_SOURCE_MAX_LAYERS]; /* a layer with both NULL is dropped */
    uint32_t        max_influence;         /* 0 = not skinned */
    const uint32_t *weight_bones;          /* vertex_count * max_influence */
    const float    *weight_values;         /* vertex_count * max_influence, or NULL (see above) */
    kiln_source_skinning skinning;
    const uint32_t *faces;                 /* 3 per face */
    uint32_t        material;              /* index into the model's materials, or KILN_SOURCE_NONE */
} kiln_source_mesh;

/* Hair: strand i has segments[i] + 1 consecutive particles; the sum equals particle_count. */
typedef struct kiln_source_hair {
    kiln_source_loc loc;
    const char     *name;                  /* may be NULL */
    uint32_t        strand_count, particle_count;
    const uint32_t *segments;
    const float    *particles;             /* 3 per particle, model space */
    uint32_t        material;              /* index into the model's materials, or KILN_SOURCE_NONE */
} kiln_source_hair;

/* A blend shape of a mesh of the same model: `pair_count` (vertex index, absolute target
 * position) pairs; the shape's delta is (target - base) * target_scale at full weight. */
typedef struct kiln_source_blend_shape {
    kiln_source_loc loc;
    const char     *name;
    uint32_t        mesh;                  /* index into the model's meshes */
    uint32_t        pair_count;
    const uint32_t *indices;
    const float    *targets;               /* 3 per pair */
    float           target_scale;          /* > 0 */
} kiln_source_blend_shape;

/* ---- materials ------------------------------------------------------------------------------ */

typedef enum kiln_source_slot_kind {
    KILN_SOURCE_SLOT_FILE = 0,   /* a texture or other file, by path as written */
    KILN_SOURCE_SLOT_COLOR = 1   /* a constant colour */
} kiln_source_slot_kind;

typedef enum kiln_source_color_space {
    KILN_SOURCE_COLOR_SRGB = 0,
    KILN_SOURCE_COLOR_LINEAR = 1
} kiln_source_color_space;

typedef struct kiln_source_material_slot {
    kiln_source_loc         loc;
    const char             *name;         /* "albedo", "normal", "diffuse", ... */
    kiln_source_slot_kind   kind;
    const char             *path;         /* FILE */
    float                   rgba[4];      /* COLOR: as authored */
    kiln_source_color_space color_space;  /* COLOR */
} kiln_source_material_slot;

typedef struct kiln_source_material {
    kiln_source_loc            loc;
    const char                *name;      /* NULL: named "material<index>" */
    const char                *type;      /* "pbr", ...; may be NULL */
    kiln_source_material_slot *slots;
    uint32_t                   slot_count;
} kiln_source_material;

/* ---- models, instances, metadata ------------------------------------------------------------ */

typedef struct kiln_source_model {
    kiln_source_loc          loc;
    const char              *name;        /* NULL: named after the input file */
    float                    position[3], rotation[4], scale[3];
    kiln_source_skeleton    *skeleton;    /* NULL when the model has none */
    kiln_source_material    *materials;    uint32_t material_count;
    kiln_source_mesh        *meshes;       uint32_t mesh_count;
    kiln_source_hair        *hairs;        uint32_t hair_count;
    kiln_source_blend_shape *blend_shapes; uint32_t blend_shape_count;
} kiln_source_model;

/* A placed reference to another source file (a world's instance). */
typedef struct kiln_source_instance {
    kiln_source_loc loc;
    const char *name;                     /* may be NULL */
    const char *path;                     /* the referenced file as written (relative to the scene root) */
    float       position[3], rotation[4], scale[3];
    kiln_source_loc path_loc;             /* where `path` is written (diagnostics about it); may equal loc */
} kiln_source_instance;

typedef enum kiln_source_up_axis {
    KILN_SOURCE_UP_NONE = 0, KILN_SOURCE_UP_X, KILN_SOURCE_UP_Y, KILN_SOURCE_UP_Z
} kiln_source_up_axis;

typedef struct kiln_source_metadata {
    kiln_source_loc     loc;
    const char         *author, *software;    /* may be NULL */
    const char         *scene_root;           /* directory for instance paths, relative to the input; may be NULL */
    kiln_source_up_axis up_axis;
} kiln_source_metadata;

/* ---- animation ------------------------------------------------------------------------------ */

typedef enum kiln_source_channel {
    KILN_SOURCE_CHANNEL_ROTATION = 0,     /* quaternion keys, 4 floats */
    KILN_SOURCE_CHANNEL_TX, KILN_SOURCE_CHANNEL_TY, KILN_SOURCE_CHANNEL_TZ,
    KILN_SOURCE_CHANNEL_SX, KILN_SOURCE_CHANNEL_SY, KILN_SOURCE_CHANNEL_SZ,
    KILN_SOURCE_CHANNEL_BLEND_SHAPE,      /* target = blend shape name, weight keys */
    KILN_SOURCE_CHANNEL_VISIBILITY,       /* target = mesh or bone name, 0/1 keys */
    KILN_SOURCE_CHANNEL_COUNT_
} kiln_source_channel;

typedef enum kiln_source_mode {
    KILN_SOURCE_ABSOLUTE = 0,             /* the value replaces the rest value */
    KILN_SOURCE_RELATIVE = 1,             /* the value is applied on top of the rest value */
    KILN_SOURCE_ADDITIVE = 2              /* added on top of the current value, times additive_weight */
} kiln_source_mode;

/* One animated channel: keys at integer frames (any order; the bake sorts them, keeps the last
 * of equal frames, normalises and hemisphere-aligns rotations, drops non-finite values and
 * interpolates linearly, slerp for rotations, holding the first and last key outside them). */
typedef struct kiln_source_curve {
    kiln_source_loc     loc;
    const char         *target;           /* bone, blend shape or mesh name */
    kiln_source_channel channel;
    kiln_source_mode    mode;
    float               additive_weight;  /* ADDITIVE: 1 by default */
    uint32_t            key_count;
    const uint32_t     *frames;           /* key_count */
    const float        *values;           /* key_count x (4 for ROTATION, else 1) */
    /* NULL, or key_count flags: a key flagged 1 stands for the rest value of the skeleton the
     * clip is bound to (a channel held at the rest pose before its first stored frame). Its
     * `values` carry the rest the file knew; where the bake binds the clip to a skeleton it
     * substitutes that skeleton's rest value, and frames between two flagged keys hold it. */
    const uint8_t      *rest_keys;
} kiln_source_curve;

/* Overrides the mode of the curves of `target` and every bone below it, per transform part. */
typedef struct kiln_source_mode_override {
    kiln_source_loc  loc;
    const char      *target;
    kiln_source_mode mode;
    uint32_t         translation, rotation, scale;
} kiln_source_mode_override;

/* Named events at integer frames. */
typedef struct kiln_source_notification {
    kiln_source_loc loc;
    const char     *name;
    uint32_t        key_count;
    const uint32_t *frames;
} kiln_source_notification;

/* A bone of the skeleton a clip was authored against, as the file stores it: name and local
 * rest transform (rotation x, y, z, w). */
typedef struct kiln_source_rest_bone {
    kiln_source_loc loc;
    const char     *name;
    float           position[3], rotation[4], scale[3];
} kiln_source_rest_bone;

typedef struct kiln_source_animation {
    kiln_source_loc            loc;
    const char                *name;      /* NULL: named after the input file */
    float                      framerate; /* frames per second, > 0 */
    uint32_t                   looping;   /* 1: the clip wraps from its last frame to its first */
    kiln_source_curve         *curves;        uint32_t curve_count;
    kiln_source_mode_override *overrides;     uint32_t override_count;
    kiln_source_notification  *notifications; uint32_t notification_count;
    /* The skeleton the clip was authored against, when the file stores one (NULL/0 otherwise),
     * and the rule of the format's reference for a clip that does not fit the skeleton it is
     * bound to (NULL: none; at most 15 characters). Where the bake binds the clip to a
     * skeleton, it reports under `bind_rule` each curve naming a bone the skeleton lacks (the
     * curve is ignored) and each authored rest transform of a driven bone that differs from the
     * skeleton's by more than 1e-4 in any component (the skeleton's is used: see rest_keys). */
    kiln_source_rest_bone     *authored_rest; uint32_t authored_rest_count;
    const char                *bind_rule;
} kiln_source_animation;

/* ---- what the runtime does not use ---------------------------------------------------------- */

/* Something the importer read and the bake leaves out (a light, a camera, a script, a physics
 * body, a render state, ...): listed by `kiln inspect` so nothing is lost silently. */
typedef struct kiln_source_extra {
    kiln_source_loc loc;
    const char *kind;                     /* "light", "camera", "bounds", ... */
    const char *name;                     /* may be NULL */
    const char *detail;                   /* one line for a person; may be NULL */
} kiln_source_extra;

/* ---- the scene ------------------------------------------------------------------------------ */

typedef struct kiln_source_block kiln_source_block;

/* Everything one input holds. Initialise with kiln_source_scene_init; every array and string is
 * allocated from the scene (kiln_source_alloc) and released by kiln_source_scene_free. */
typedef struct kiln_source_scene {
    const char             *format;       /* importer name: "cast", "unigine-mesh", ... */
    kiln_source_metadata    metadata;
    kiln_source_model      *models;        uint32_t model_count;
    kiln_source_instance   *instances;     uint32_t instance_count;
    kiln_source_animation  *animations;    uint32_t animation_count;
    kiln_source_extra      *extras;        uint32_t extra_count;
    /* memory */
    kiln_allocator          allocator;    /* resolved (never NULL functions) */
    kiln_source_block      *blocks;
    uint64_t                allocated;    /* bytes handed out */
} kiln_source_scene;

/* NULL allocator: libc. */
KILN_API void kiln_source_scene_init(kiln_source_scene *scene, const kiln_allocator *allocator);
KILN_API void kiln_source_scene_free(kiln_source_scene *scene);

/* `count` zeroed elements of `size` bytes, aligned for any fundamental type, owned by the scene.
 * NULL when count * size overflows or memory runs out (count 0 gives a valid empty block). An
 * importer checks every count read from a file against the bytes left before calling this. */
KILN_API void *kiln_source_alloc(kiln_source_scene *scene, uint64_t count, size_t size);
/* Copies of a string (NULL stays NULL; NULL also on allocation failure of a non-NULL string). */
KILN_API char *kiln_source_strdup(kiln_source_scene *scene, const char *s);
KILN_API char *kiln_source_strndup(kiln_source_scene *scene, const char *s, size_t n);
/* printf into scene memory (paths for kiln_source_loc). */
KILN_API char *kiln_source_strfmt(kiln_source_scene *scene, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Checks the invariants the bake relies on; returns KILN_OK or ERR_SOURCE_INVALID with `err`
 * naming the item (its loc) and the broken rule. Reports nothing else; changes nothing. */
KILN_API kiln_result kiln_source_validate(const kiln_source_scene *scene, kiln_diag *err);

/* Name of a channel for printing ("rq", "tx", ..., "bs", "vb") and of a mode. */
KILN_API const char *kiln_source_channel_name(kiln_source_channel c);
KILN_API const char *kiln_source_mode_name(kiln_source_mode m);

/* ---- importers ------------------------------------------------------------------------------ */

/* Options every importer understands. Zero = defaults. */
typedef struct kiln_import_options {
    const kiln_allocator *allocator;      /* NULL: libc */
    kiln_diag_sink        diag;           /* warnings and repairs (path = the loc's path) */
    float                 framerate;      /* clips of formats without a rate of their own; 0 = the format's default */
} kiln_import_options;

/* An importer: `detect` looks only at the leading bytes (never at the file name) and returns
 * non-zero when the input is in its format; `import` fills a scene initialised by the caller
 * (on failure the caller frees it) and returns KILN_OK, or an error with `err` set. */
typedef struct kiln_importer {
    const char *name;                     /* "cast", "unigine-mesh", "unigine-anim", "shape", "lod" */
    const char *description;              /* one line for --version and messages */
    int (*detect)(const void *data, size_t size);
    kiln_result (*import)(const void *data, size_t size, const char *path, const kiln_import_options *options,
                          kiln_source_scene *scene, kiln_diag *err);
} kiln_importer;

/* The importers this build has, in detection order. */
KILN_API uint32_t kiln_importer_count(void);
KILN_API const kiln_importer *kiln_importer_at(uint32_t index);
/* The importer with this name, or NULL. */
KILN_API const kiln_importer *kiln_importer_find(const char *name);
/* The first importer whose detect accepts the bytes, or NULL. */
KILN_API const kiln_importer *kiln_importer_detect(const void *data, size_t size);

/* Detects (or uses `format`, an importer name; NULL = detect), imports into `scene` (initialised
 * here) and validates. An input no importer recognises fails with ERR_FORMAT_UNKNOWN, naming
 * the formats this build reads. On failure the scene is already freed. */
KILN_API kiln_result kiln_source_import(const void *data, size_t size, const char *path, const char *format,
                                        const kiln_import_options *options, kiln_source_scene *scene,
                                        kiln_diag *err);

#ifdef __cplusplus
}
#endif

#endif /* KILN_BAKE_SOURCE_H */
