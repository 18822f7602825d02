/* kiln/character.h - one skinned model of a blob, evaluated per frame in one call.
 *
 *   // once per character:
 *   kiln_character_desc d = {0};
 *   d.blob = blob;  d.model = 0;  d.clips = clips;  d.clip_count = 2;  d.max_layers = 2;
 *   d.flags = KILN_CHARACTER_VERTICES;
 *   size_t size = kiln_character_size(&d);
 *   void *mem = aligned_alloc(KILN_CHARACTER_ALIGN, size);
 *   kiln_character *ch;
 *   kiln_character_init(&d, mem, size, &ch);
 *   // every frame:
 *   kiln_character_layer layers[2] = {{0, t, 0.7f}, {1, t, 0.3f}};   // clip slot, time, weight
 *   kiln_character_evaluate(ch, layers, 2, world_matrix, NULL);
 *   kiln_character_mesh m;
 *   kiln_character_mesh_get(ch, 0, &m);        // m.positions: skinned, 3 floats per vertex
 *
 * A character is the staged calls of kiln/anim.h, kiln/rig.h, kiln/blend_shape.h and
 * kiln/skin.h run in their usual order over one caller-provided block that holds everything
 * they need: the clips' bindings, one sampling context, pose and scalar buffer per layer, the
 * blended pose, blend shape weights and visibility per mesh, rig scratch, object-space and
 * skinning matrices and, when asked, the skinned vertices of every mesh of the model. Each
 * evaluation runs
 *
 *   sample every layer (kiln_sample; additive layers over the identity)
 *   → kiln_pose_blend of the non-additive layers (rest: the skeleton's rest pose)
 *   → kiln_pose_add of each additive layer, in the order given
 *   → kiln_pose_local_to_object with `root` → kiln_rig_solve (IK, then constraints)
 *   → kiln_pose_skin_matrices (and kiln_pose_skin_dual_quats for dual quaternion meshes)
 *   → per visible mesh: blend shapes (kiln_blend_shapes_apply) → kiln_skin_mesh with `root`
 *
 * so its outputs are those of the staged calls bit for bit (on one SIMD path). The rig's plan
 * (kiln_rig_prepare) is derived once by kiln_character_init into the block's rig scratch and
 * every evaluation solves with it (kiln_rig_desc.prepared): the caller provides nothing more,
 * and the result is the same as an unprepared kiln_rig_solve's. The stages stay public for
 * callers who want another order, shared bindings or their own buffers.
 *
 * Memory: kiln_character_size gives the exact figure, a multiple of KILN_CHARACTER_ALIGN (so it
 * can go straight to aligned_alloc). Its parts, each rounded up to 64 bytes:
 *   fixed      about 1.3 KB (the character record and its small tables)
 *   per clip   its binding (kiln_anim_binding_size: about 1.3 KB per 8 joint slots), 4 bytes
 *              per blend shape and per mesh of the model
 *   per layer  a pose (40 bytes per joint), a sampling context (64 bytes; lossy clips 640 more
 *              per 8 joint slots), 4 bytes per scalar track, per blend shape and per mesh
 *   per joint  40 bytes of blended pose + 64 of object-space + 64 of skinning matrices (+ 96
 *              of dual quaternions when a mesh uses them; + 8 of rig scratch, and 188 per level
 *              of the skeleton's depth, when it has IK handles or constraints)
 *   per vertex with KILN_CHARACTER_VERTICES: 12 bytes of skinned positions (+ 12 of normals
 *              with KILN_CHARACTER_NORMALS, for meshes that have them), plus 12 per vertex of
 *              the largest mesh with blend shapes (its shaped bind positions)
 * So per joint 168 + 40 × layers bytes plus the bindings, per vertex 12 to 36 bytes. The
 * sample character (8 bones, one clip, two layers, 342 vertices) takes 14,656 bytes; an
 * 80-joint character with one lossless clip, two layers and a 1000-vertex mesh with skinned
 * positions and normals 57,024 (kiln_bench_character).
 *
 * Nothing here allocates; evaluation is thread-safe across characters (one character per
 * thread at a time). The blobs must outlive the character; the block must not move (the
 * character points into it).
 */
#ifndef KILN_CHARACTER_H
#define KILN_CHARACTER_H

#include <stddef.h>
#include <stdint.h>
#include "anim.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Alignment of the character block (a cache line). */
#define KILN_CHARACTER_ALIGN 64u

/* kiln_character_desc.flags: the outputs wanted beyond the matrices, which are always made. */
#define KILN_CHARACTER_VERTICES 0x1u /* skinned positions of every mesh of the model */
#define KILN_CHARACTER_NORMALS  0x2u /* with VERTICES: skinned normals of the meshes that have them */
#define KILN_CHARACTER_NO_RIG   0x4u /* skip the skeleton's IK handles and constraints */

typedef struct kiln_character_desc {
    const kiln_blob *blob;       /* holds the model, its skeleton and meshes */
    uint32_t         model;      /* index into kiln_blob_models; the model must have a skeleton */
    const kiln_blob *anim_blob;  /* holds the clips; NULL: `blob` */
    const uint32_t  *clips;      /* clip_count clip indices of anim_blob: the clips the character
                                    can play; a layer names one by its position in this list */
    uint32_t         clip_count;
    uint32_t         max_layers; /* layers an evaluation may have, >= 1 */
    uint32_t         flags;      /* KILN_CHARACTER_* */
    float            threshold;  /* the blend threshold; 0: KILN_BLEND_THRESHOLD */
} kiln_character_desc;

typedef struct kiln_character kiln_character;

/* Bytes of memory kiln_character_init needs for `desc` (see "Memory" above), or 0 when the
 * description is invalid (kiln_error_detail() says why). */
KILN_API size_t kiln_character_size(const kiln_character_desc *desc);

/* Builds the character in `mem` (KILN_CHARACTER_ALIGN-aligned, `size` >= kiln_character_size
 * bytes, owned by the caller, not moved while the character is used): binds every clip to the
 * model's skeleton (clip joints missing from the skeleton are ignored, as in kiln_anim_bind),
 * binds each mesh's blend shapes and visibility to every clip, and sets the pose to the rest
 * pose. Errors: ERR_INVALID_ARGUMENT (NULL desc, blob, mem or out; clips NULL with clip_count
 * > 0; a bad model or clip index; a model without a skeleton; max_layers 0; unknown flags; a
 * negative or non-finite threshold), ERR_BLOB_MISALIGNED (mem), ERR_BUFFER_TOO_SMALL (size),
 * and the errors of kiln_anim_bind. kiln_error_detail() names the argument. *out is NULL on
 * failure. */
KILN_API kiln_result kiln_character_init(const kiln_character_desc *desc, void *mem, size_t size,
                                         kiln_character **out);

/* One playing clip. Zero-initialised fields mean: clip slot 0, time 0, weight 0 (ignored),
 * KILN_LOOP_CLIP, no mask, not additive. */
typedef struct kiln_character_layer {
    uint32_t     clip;          /* position in kiln_character_desc.clips */
    double       time_s;        /* playback time, as kiln_sample_desc.time_s */
    float        weight;        /* blend weight (kiln_pose_blend), or additive weight clamped to
                                   [0, 1] (kiln_pose_add); <= 0 or NaN: sampled, not applied */
    kiln_loop    loop;
    const float *joint_weights; /* optional per-bone mask in SoA lane order:
                                   kiln_character_soa_count() * 8 floats (bone i at [i]) */
    uint32_t     additive;      /* nonzero: the clip is sampled over the identity and added on top
                                   of the blended pose; blend shape weights add too (× the
                                   clamped weight), visibility is left to the blended layers */
} kiln_character_layer;

/* An event reported by an evaluation: which layer's clip crossed it. */
typedef struct kiln_character_event {
    uint32_t        layer;  /* index in the layers of that evaluation */
    kiln_anim_event event;
} kiln_character_event;

typedef struct kiln_character_events {
    kiln_character_event *out;      /* capacity entries (NULL when capacity is 0) */
    uint32_t              capacity;
    uint32_t              count;    /* set by the evaluation: events that passed, which may exceed
                                       capacity (only the first `capacity` are written) */
} kiln_character_events;

/* Evaluates the character for this frame (the pipeline at the top of this header) with the
 * `layer_count` layers (<= max_layers; 0 gives the rest pose) and `root` (16 floats,
 * column-major: where the model is, given once for local-to-object, the rig and skinning; NULL:
 * the identity). Events: for each layer i, the events of its clip in [the time layer i had at
 * the previous evaluation, its time now) (kiln_anim_events, with the layer's loop mode), when
 * layer i played the same clip then; nothing on the first evaluation or after a clip change.
 * `events` is optional. Meshes whose blended visibility is below 0.5 are not skinned (their
 * vertex buffers keep the previous frame's values). Allocates nothing.
 * Errors (the character's outputs are then unspecified, its event times unchanged):
 * ERR_INVALID_ARGUMENT (NULL character, layers NULL with layer_count > 0, layer_count above
 * max_layers, a clip slot out of range, events->out NULL with a capacity), and the errors of
 * the stages (kiln_rig_solve, kiln_skin_mesh, ...) for blobs loaded with
 * KILN_BLOB_LOAD_TRUSTED. kiln_error_detail() names the argument or the stage. */
KILN_API kiln_result kiln_character_evaluate(kiln_character *character, const kiln_character_layer *layers,
                                             uint32_t layer_count, const float *root, kiln_character_events *events);

/* ---- outputs (pointers into the block, valid until the next evaluation) ----------------------- */
/* The skeleton (index in the blob), its bone count and its SoA block count; 0 for NULL. */
KILN_API uint32_t kiln_character_skeleton(const kiln_character *character);
KILN_API uint32_t kiln_character_bone_count(const kiln_character *character);
KILN_API uint32_t kiln_character_soa_count(const kiln_character *character);
/* The local pose after blending and the rig: kiln_character_soa_count() blocks. */
KILN_API const kiln_soa_xform *kiln_character_pose(const kiln_character *character);
/* Object-space matrices (root included) and skinning matrices: bone_count × 16 floats each. */
KILN_API const float *kiln_character_object_matrices(const kiln_character *character);
KILN_API const float *kiln_character_skin_matrices(const kiln_character *character);
/* What the last kiln_rig_solve reported (zeros without a rig or with KILN_CHARACTER_NO_RIG). */
KILN_API const kiln_rig_report *kiln_character_rig_report(const kiln_character *character);

/* One mesh of the model, as the last evaluation left it. */
typedef struct kiln_character_mesh {
    uint32_t        mesh;          /* index into kiln_blob_meshes */
    uint32_t        vertex_count;
    uint32_t        visible;       /* 1 unless the blended visibility is below 0.5 */
    uint32_t        shape_count;   /* the mesh's blend shapes */
    const uint32_t *shapes;        /* shape_count indices into kiln_blob_blend_shapes, ascending */
    const float    *shape_weights; /* shape_count blended weights, as sampled (not yet clamped) */
    const float    *positions;     /* vertex_count × 3 floats, skinned; NULL without VERTICES */
    const float    *normals;       /* vertex_count × 3 floats; NULL without NORMALS or mesh normals */
} kiln_character_mesh;

/* The number of meshes of the model (0 for NULL). */
KILN_API uint32_t kiln_character_mesh_count(const kiln_character *character);
/* Fills *out for mesh `index` of the model (0 .. mesh_count - 1). Errors: ERR_INVALID_ARGUMENT
 * (NULL), ERR_NOT_FOUND (index out of range). */
KILN_API kiln_result kiln_character_mesh_get(const kiln_character *character, uint32_t index,
                                             kiln_character_mesh *out);

#ifdef __cplusplus
}
#endif

#endif /* KILN_CHARACTER_H */
