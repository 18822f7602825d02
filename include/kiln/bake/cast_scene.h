/* kiln/cast_scene.h - typed views of Cast nodes, with the format's defaults applied.
 *
 * Each kiln_cast_get_<kind>() reads one node of a parsed document (kiln/cast.h) into a plain
 * struct. Arrays stay zero-copy (kiln_cast_array points into the file buffer); scalars are
 * decoded, defaulted and sanitised following the Cast format reference (sections B, C and F):
 *
 *   - a missing or mistyped *required* property makes the call fail with a specific code
 *     (ERR_CAST_MISSING_PROPERTY, ERR_CAST_WRONG_TYPE, ...): the caller drops that node;
 *   - anything that can be repaired is repaired and reported through the diag sink with
 *     severity WARNING (defaults for non-finite transforms, normalised quaternions, duplicate
 *     names), or ERROR when data is lost (an attribute whose length is wrong is dropped, a
 *     curve is cut to min(kb, kv), ...);
 *   - integer arrays accept b/h/i (widened to u32), float fields accept f or d, booleans
 *     accept any integer type (nonzero = true).
 *
 * The `out` struct is fully written on success (and zeroed on failure). Strings are the
 * NUL-terminated payloads inside the file buffer, NULL when absent.
 *
 * Every failure is also reported through the sink (severity ERROR), naming the node path, the
 * property and its byte offset. Passing a node of another kind (or NULL doc/out) returns
 * ERR_INVALID_ARGUMENT without a report. A node the parser skipped (KILN_CAST_NODE_OPAQUE,
 * e.g. it held a property of unknown type) fails with ERR_CAST_UNKNOWN_PROPERTY_TYPE without a
 * second report. A node under a parent that cannot hold it is still read, with an
 * ERR_CAST_UNEXPECTED_PARENT warning. Duplicate property names warn (the last one wins); a
 * single-value property holding several elements warns and element 0 is used.
 */
#ifndef KILN_CAST_SCENE_H
#define KILN_CAST_SCENE_H

#include "cast.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A zero-copy array view. `count` elements of `type`; each element has `comps` components
 * (v2: 2, v3: 3, v4: 4, scalars: 1). count == 0 means absent, empty or dropped. */
typedef struct kiln_cast_array {
    const void *data;
    uint32_t    count;
    uint16_t    type;
    uint16_t    comps;
} kiln_cast_array;

/* Element i (< count) widened: integer types to u32 (u64 values above 0xFFFFFFFF saturate),
 * float types to float. Reading an integer array as float converts the value; reading a float
 * array as u32 truncates (NaN and negatives give 0, large values saturate). For vector arrays
 * these read component 0 of element i. Out of range: 0. */
KILN_API uint32_t kiln_cast_array_u32(const kiln_cast_array *a, uint32_t i);
KILN_API float    kiln_cast_array_f32(const kiln_cast_array *a, uint32_t i);
/* Bulk forms: `n` elements starting at `first`, each `comps` values, packed into dst
 * (dst holds n*comps values). first + n must be <= count; otherwise nothing is written.
 * Same-type reads (i to u32, f/v2/v3/v4 to float) are straight copies. */
KILN_API void kiln_cast_array_read_u32(const kiln_cast_array *a, uint32_t first, uint32_t n, uint32_t *dst);
KILN_API void kiln_cast_array_read_f32(const kiln_cast_array *a, uint32_t first, uint32_t n, float *dst);

#define KILN_CAST_MAX_LAYERS 16 /* UV and color layers read per mesh; more are reported (ERR_LIMIT) */

typedef enum kiln_cast_skinning { KILN_CAST_SKIN_LINEAR = 0, KILN_CAST_SKIN_DUAL_QUAT = 1 } kiln_cast_skinning;
typedef enum kiln_cast_up_axis { KILN_CAST_UP_NONE = 0, KILN_CAST_UP_X, KILN_CAST_UP_Y, KILN_CAST_UP_Z } kiln_cast_up_axis;
typedef enum kiln_cast_color_space { KILN_CAST_COLOR_SRGB = 0, KILN_CAST_COLOR_LINEAR = 1 } kiln_cast_color_space;
typedef enum kiln_cast_constraint_type {
    KILN_CAST_CONSTRAINT_POINT = 0, KILN_CAST_CONSTRAINT_ORIENT = 1, KILN_CAST_CONSTRAINT_SCALE = 2
} kiln_cast_constraint_type;
typedef enum kiln_cast_curve_prop {
    KILN_CAST_CURVE_RQ = 0, KILN_CAST_CURVE_TX, KILN_CAST_CURVE_TY, KILN_CAST_CURVE_TZ,
    KILN_CAST_CURVE_SX, KILN_CAST_CURVE_SY, KILN_CAST_CURVE_SZ,
    KILN_CAST_CURVE_BS, KILN_CAST_CURVE_VB, KILN_CAST_CURVE_PROP_COUNT_
} kiln_cast_curve_prop;
typedef enum kiln_cast_mode { KILN_CAST_ABSOLUTE = 0, KILN_CAST_RELATIVE = 1, KILN_CAST_ADDITIVE = 2 } kiln_cast_mode;

/* Model (`modl`). Transform defaults: p (0,0,0), r (0,0,0,1) normalised, s (1,1,1). */
typedef struct kiln_cast_model {
    const char *name;
    float       position[3];
    float       rotation[4];     /* x, y, z, w */
    float       scale[3];
    uint32_t    skeleton;        /* first Skeleton child (more are reported), or KILN_CAST_NONE */
    uint32_t    mesh_count, hair_count, blend_shape_count, material_count;
} kiln_cast_model;
KILN_API kiln_result kiln_cast_get_model(const kiln_cast_doc *doc, uint32_t node, kiln_cast_model *out, const kiln_diag_sink *sink);

/* Mesh (`mesh`). vp and f are required. Per-vertex arrays whose length differs from
 * vertex_count are dropped (count 0, reported). UV layers u0..u(ul-1); colour layers per the
 * `cl`/legacy `vc` rule. Skin: mi > 0 with wb (and wv, except mi == 1 where weights are 1.0)
 * of vertex_count*mi entries; otherwise max_influence is 0. Faces with an index >= vertex_count
 * or with two equal indices are counted (the baker drops them); a trailing partial triangle is
 * ignored (warning). A mesh with no vertices or no faces is returned (KILN_OK) with an
 * ERR_CAST_EMPTY warning: the baker drops it. Positions, normals and UVs are not scanned for
 * NaN here (they stay zero-copy); the baker checks them while converting. */
typedef struct kiln_cast_mesh {
    const char     *name;
    uint32_t        vertex_count;
    uint32_t        face_count;            /* len(f) / 3 */
    kiln_cast_array positions;             /* v3 */
    kiln_cast_array normals;               /* v3 */
    kiln_cast_array tangents;              /* v3, no handedness sign */
    uint32_t        uv_layer_count;        /* layers stored below (a missing layer has count 0) */
    kiln_cast_array uv[KILN_CAST_MAX_LAYERS];     /* v2, V origin top-left as in the file */
    uint32_t        color_layer_count;
    kiln_cast_array color[KILN_CAST_MAX_LAYERS];  /* i: packed RGBA8 (R in bits 0-7), or v4 floats */
    uint32_t        max_influence;         /* mi; 0 = not skinned */
    kiln_cast_array weight_bones;          /* b/h/i, vertex_count * mi */
    kiln_cast_array weight_values;         /* f, vertex_count * mi; count 0 when mi == 1 without wv */
    kiln_cast_array faces;                 /* b/h/i; the first face_count*3 entries are triangles */
    uint32_t        bad_index_face_count;  /* faces referencing a vertex >= vertex_count */
    uint32_t        degenerate_face_count; /* faces with two equal indices (and valid indices) */
    kiln_cast_skinning skinning;           /* sm: linear (default, unknown values) or quaternion */
    uint64_t        material_hash;         /* m, 0 when absent */
    uint32_t        material;              /* Material node in the owning Model, or KILN_CAST_NONE */
} kiln_cast_mesh;
KILN_API kiln_result kiln_cast_get_mesh(const kiln_cast_doc *doc, uint32_t node, kiln_cast_mesh *out, const kiln_diag_sink *sink);

/* Hair (`hair`): strand i has se[i] + 1 consecutive particles. Σ(se+1) must equal len(pt). */
typedef struct kiln_cast_hair {
    const char     *name;
    uint32_t        strand_count;
    uint32_t        particle_count;
    kiln_cast_array segments;   /* b/h/i per strand */
    kiln_cast_array particles;  /* v3, model space */
    uint64_t        material_hash;
    uint32_t        material;
} kiln_cast_hair;
KILN_API kiln_result kiln_cast_get_hair(const kiln_cast_doc *doc, uint32_t node, kiln_cast_hair *out, const kiln_diag_sink *sink);

/* BlendShape (`blsh`). n, b, vi, vp required; b must name a Mesh of the same Model. vp are
 * absolute target positions; pair_count = min(len vi, len vp). target_scale: ts, where a
 * missing, non-positive or non-finite value is 1.0. */
typedef struct kiln_cast_blend_shape {
    const char     *name;
    uint64_t        base_hash;
    uint32_t        base_mesh;      /* Mesh node */
    uint32_t        pair_count;
    kiln_cast_array indices;        /* vi, b/h/i */
    kiln_cast_array targets;        /* vp, v3 */
    float           target_scale;
} kiln_cast_blend_shape;
KILN_API kiln_result kiln_cast_get_blend_shape(const kiln_cast_doc *doc, uint32_t node, kiln_cast_blend_shape *out, const kiln_diag_sink *sink);

/* Skeleton (`skel`). Fails with ERR_CAST_BONE_CYCLE when the parent indices form a cycle.
 * A parent index >= bone_count or equal to the bone itself makes that bone a root (warning).
 * Runs kiln_cast_skeleton_parents internally (O(bone_count); scratch of 8 bytes per bone on
 * the stack up to 1024 bones, from malloc above, ERR_OUT_OF_MEMORY if that fails), so its
 * reports repeat if the caller then calls kiln_cast_skeleton_parents with the same sink. */
typedef struct kiln_cast_skeleton {
    uint32_t bone_count, ik_count, constraint_count;
    uint32_t root_count;       /* bones without a (valid) parent */
    uint32_t depth;            /* levels of the deepest chain (1 = only roots), 0 when empty */
} kiln_cast_skeleton;
KILN_API kiln_result kiln_cast_get_skeleton(const kiln_cast_doc *doc, uint32_t node, kiln_cast_skeleton *out, const kiln_diag_sink *sink);

/* The k-th Bone child of a Skeleton (the bone with index k), or KILN_CAST_NONE. O(1) after the
 * first call on a skeleton is not promised; iterate with first_child/next_sibling for bulk. */
KILN_API uint32_t kiln_cast_skeleton_bone(const kiln_cast_doc *doc, uint32_t skeleton, uint32_t k);

/* Writes the sanitised parent index of every bone (-1 for roots) into parents[0..bone_count)
 * and returns KILN_OK, or ERR_CAST_BONE_CYCLE (naming a bone on the cycle; parents[] then
 * still holds the sanitised indices), or ERR_BUFFER_TOO_SMALL when cap < bone_count (no
 * report). Allocation-free and O(bone_count): the cycle check keeps its state in parents[].
 * A bone the parser skipped (opaque) has no `p` and counts as a root. */
KILN_API kiln_result kiln_cast_skeleton_parents(const kiln_cast_doc *doc, uint32_t skeleton, int32_t *parents, uint32_t cap, const kiln_diag_sink *sink);

/* Bone (`bone`). `index` is the bone's position among the Skeleton's Bone children. The raw
 * parent (`p`, u32 read as int32, any negative value = -1) is not range-checked here; use
 * kiln_cast_skeleton_parents. has_* say which transform properties were present (and finite);
 * absent ones hold the defaults. Quaternions are normalised (warning when the stored length
 * is off by more than 1e-3); one of length < 1e-8 becomes identity and counts as absent. A
 * missing name warns (callers name it "bone<index>"). */
typedef struct kiln_cast_bone {
    const char *name;           /* NULL when absent (callers name it "bone<index>") */
    uint32_t    index;
    int32_t     parent;
    uint32_t    segment_scale_compensate; /* ssc, default 1 */
    uint32_t    has_local_position, has_local_rotation, has_world_position, has_world_rotation, has_scale;
    float       local_position[3];
    float       local_rotation[4];
    float       world_position[3];
    float       world_rotation[4];
    float       scale[3];
} kiln_cast_bone;
KILN_API kiln_result kiln_cast_get_bone(const kiln_cast_doc *doc, uint32_t node, kiln_cast_bone *out, const kiln_diag_sink *sink);

/* IKHandle (`ikhd`). Bone references are resolved among the owning Skeleton's children and
 * given as bone indices (-1 when absent). sb and eb are required; an unresolved optional
 * reference is reported and becomes -1. */
typedef struct kiln_cast_ik_handle {
    const char *name;
    int32_t     start_bone, end_bone, target_bone, pole_vector_bone, pole_bone;
    float       target_offset[3];
    uint32_t    use_target_rotation;
} kiln_cast_ik_handle;
KILN_API kiln_result kiln_cast_get_ik_handle(const kiln_cast_doc *doc, uint32_t node, kiln_cast_ik_handle *out, const kiln_diag_sink *sink);

/* Constraint (`cnst`). ct, cb, tb required; cb == tb or an unknown ct fails. custom_offset is
 * (0,0,0,-) for point, a normalised quaternion for orient, (1,1,1,-) for scale when co is
 * absent. weight is wt clamped to [0, 1]. */
typedef struct kiln_cast_constraint {
    const char *name;
    kiln_cast_constraint_type type;
    int32_t     constrained_bone, target_bone;
    uint32_t    maintain_offset;
    uint32_t    has_custom_offset;
    float       custom_offset[4];
    float       weight;
    uint32_t    skip[3];      /* sx, sy, sz */
} kiln_cast_constraint;
KILN_API kiln_result kiln_cast_get_constraint(const kiln_cast_doc *doc, uint32_t node, kiln_cast_constraint *out, const kiln_diag_sink *sink);

/* Animation (`anim`). framerate: fr, 30 when missing, <= 0 or not finite (warning). */
typedef struct kiln_cast_animation {
    const char *name;
    float       framerate;
    uint32_t    looping;
    uint32_t    curve_count, override_count, notification_count;
} kiln_cast_animation;
KILN_API kiln_result kiln_cast_get_animation(const kiln_cast_doc *doc, uint32_t node, kiln_cast_animation *out, const kiln_diag_sink *sink);

/* Curve (`curv`). nn, kp, kb, kv required; unknown kp or m fails (ERR_CAST_BAD_VALUE); a
 * missing m is absolute. ab: non-finite gives 1 (warning).
 * key_count = min(len kb, len kv) (a mismatch is reported). kv types: rq v4; t*, s*, bs f or
 * d or integers; vb b/h/i (or f). Keys are as stored (unsorted, not normalised): the baker
 * sorts and conditions them. */
typedef struct kiln_cast_curve {
    const char          *node_name;
    kiln_cast_curve_prop property;
    kiln_cast_mode       mode;
    float                additive_weight;   /* ab, default 1 */
    uint32_t             key_count;
    kiln_cast_array      key_frames;        /* b/h/i */
    kiln_cast_array      key_values;
} kiln_cast_curve;
KILN_API kiln_result kiln_cast_get_curve(const kiln_cast_doc *doc, uint32_t node, kiln_cast_curve *out, const kiln_diag_sink *sink);

/* CurveModeOverride (`CMOV`). nn and m required. */
typedef struct kiln_cast_mode_override {
    const char    *node_name;
    kiln_cast_mode mode;
    uint32_t       translation, rotation, scale;   /* ot, or, os */
} kiln_cast_mode_override;
KILN_API kiln_result kiln_cast_get_mode_override(const kiln_cast_doc *doc, uint32_t node, kiln_cast_mode_override *out, const kiln_diag_sink *sink);

/* NotificationTrack (`ntif`). n and kb required. */
typedef struct kiln_cast_notification {
    const char     *name;
    kiln_cast_array key_frames;
} kiln_cast_notification;
KILN_API kiln_result kiln_cast_get_notification(const kiln_cast_doc *doc, uint32_t node, kiln_cast_notification *out, const kiln_diag_sink *sink);

/* Material (`matl`). n (missing: NULL, caller names it "material<index>", warning) and t. Every
 * other property is a slot. */
typedef struct kiln_cast_material {
    const char *name;
    const char *type;        /* "pbr", ...; NULL when absent */
    uint32_t    slot_count;
} kiln_cast_material;
KILN_API kiln_result kiln_cast_get_material(const kiln_cast_doc *doc, uint32_t node, kiln_cast_material *out, const kiln_diag_sink *sink);

typedef struct kiln_cast_material_slot {
    const char *name;        /* not NUL-terminated: name_len bytes */
    uint32_t    name_len;
    uint64_t    hash;
    uint32_t    node;        /* File or Color child of the material, KILN_CAST_NONE if unresolved */
    uint32_t    id;          /* KILN_CAST_ID_FILE, KILN_CAST_ID_COLOR, or 0 */
} kiln_cast_material_slot;
/* Slot k (< slot_count; else ERR_NOT_FOUND) in property order. When a slot name occurs twice
 * only its last occurrence is a slot. A value that is not an integer fails
 * (ERR_CAST_WRONG_TYPE); a hash that names no File/Color child is reported (warning) and
 * leaves node KILN_CAST_NONE, id 0. Only the first 256 properties of a material are read as
 * slots (ERR_LIMIT reported by kiln_cast_get_material). */
KILN_API kiln_result kiln_cast_get_material_slot(const kiln_cast_doc *doc, uint32_t material, uint32_t k, kiln_cast_material_slot *out, const kiln_diag_sink *sink);

/* File (`file`): p required. */
typedef struct kiln_cast_file { const char *path; } kiln_cast_file;
KILN_API kiln_result kiln_cast_get_file(const kiln_cast_doc *doc, uint32_t node, kiln_cast_file *out, const kiln_diag_sink *sink);

/* Color (`colr`): rgba required; cs srgb (default, unknown values) or linear. rgba as stored. */
typedef struct kiln_cast_color {
    const char           *name;
    float                 rgba[4];
    kiln_cast_color_space color_space;
} kiln_cast_color;
KILN_API kiln_result kiln_cast_get_color(const kiln_cast_doc *doc, uint32_t node, kiln_cast_color *out, const kiln_diag_sink *sink);

/* Instance (`inst`): rf required and must resolve to a File child with a path. */
typedef struct kiln_cast_instance {
    const char *name;
    uint64_t    reference_hash;
    uint32_t    file;          /* File node */
    const char *path;          /* the File's p */
    float       position[3];
    float       rotation[4];
    float       scale[3];
} kiln_cast_instance;
KILN_API kiln_result kiln_cast_get_instance(const kiln_cast_doc *doc, uint32_t node, kiln_cast_instance *out, const kiln_diag_sink *sink);

/* Metadata (`meta`). All optional. An unknown `up` is reported and reads as none. */
typedef struct kiln_cast_metadata {
    const char       *author, *software, *scene_root;
    kiln_cast_up_axis up_axis;
} kiln_cast_metadata;
KILN_API kiln_result kiln_cast_get_metadata(const kiln_cast_doc *doc, uint32_t node, kiln_cast_metadata *out, const kiln_diag_sink *sink);
/* The Metadata node that supplies the file's hints: the first Metadata child of the first Root
 * that has one. KILN_CAST_NONE when there is none. */
KILN_API uint32_t kiln_cast_find_metadata(const kiln_cast_doc *doc);

/* Names for printing: "rq", "tx", ... ; "absolute"/"relative"/"additive"; "pt"/"or"/"sc".
 * Values out of range give "?". */
KILN_API const char *kiln_cast_curve_prop_name(kiln_cast_curve_prop p);
KILN_API const char *kiln_cast_mode_name(kiln_cast_mode m);
KILN_API const char *kiln_cast_constraint_type_name(kiln_cast_constraint_type t);

#ifdef __cplusplus
}
#endif

#endif /* KILN_CAST_SCENE_H */
