/* kiln/anim.h - bind, sample and blend animation clips in caller memory.
 *
 *   // once per (clip, skeleton):
 *   size_t bsize = kiln_anim_binding_size(anim_blob, clip, skel_blob, skeleton);
 *   kiln_anim_binding *bind;
 *   kiln_anim_bind(anim_blob, clip, skel_blob, skeleton, aligned_mem, bsize, &bind, &report);
 *   // once per playback cursor, i.e. per playing layer of each character (optional, speeds
 *   // up forward playback of quantised clips):
 *   kiln_sample_context_init(ctx_mem, kiln_sample_context_size(bind), bind);
 *   // every frame:
 *   kiln_sample_desc s = {0};
 *   s.binding = bind;  s.time_s = t;  s.out = pose;  s.out_count = soa_count;  s.context = ctx_mem;
 *   kiln_sample(&s);                                   // local pose, SoA, 8 joints per block
 *   kiln_pose_local_to_object(skel_blob, skeleton, pose, NULL, object_matrices, bone_count);
 *   kiln_pose_skin_matrices(skel_blob, skeleton, object_matrices, skin_matrices, bone_count);
 *
 * Nothing here allocates. Bindings, sampling contexts and poses live in memory the caller
 * provides, sized by the *_size() queries: bindings and contexts 16-byte aligned (64
 * recommended), poses and matrices at least float-aligned (16 or 64 recommended; the kernels
 * use unaligned loads, aligned memory is merely faster). Poses are arrays of kiln_soa_xform in
 * the skeleton's (parent-first) bone order, soa_count = ceil(bone_count / 8) blocks; lanes
 * past the bone count are padding (the identity when produced here). Matrices are float[16],
 * column-major, one per bone.
 *
 * Semantics follow the Cast reference (section D): frame f is time f / framerate; between
 * integer frames translation and scale interpolate linearly and rotation along the shortest
 * arc (slerp, evaluated as an nlerp with a corrected parameter: within 1e-7 rad of the exact
 * slerp for keys up to 90° apart, plus float rounding; the correction assumes unit keys, and
 * keys far from unit length, which only blobs not written by the baker can hold, get the plain
 * nlerp, normalised); before the first and after the last frame the first/last value holds. Modes
 * per channel, after CurveModeOverride resolution against the bound skeleton: absolute (T = k),
 * relative to the rest pose (T0 + k, R0 ⊗ k, S0 · k) and additive on the pose underneath
 * (Tc + a·k, Rc ⊗ slerp(I, k, a), Sc · (1 + a·(k − 1))). A channel without a curve passes the
 * pose underneath through: the rest pose, or `base` when the caller layers the clip on one.
 *
 * SIMD: every entry point runs the AVX-512 path when the CPU has AVX-512 F/VL/DQ/BW (mesh
 * skinning, kiln/skin.h, has 16-lane kernels there; the functions here run their AVX2 kernels
 * on it),
 * otherwise AVX2+FMA when it has that, otherwise SSE2 (on x86-64), otherwise the scalar
 * reference; kiln_simd_force() selects one for testing. The paths agree within 1e-5. Building
 * with KILN_FORCE_SCALAR compiles the scalar path alone.
 *
 * Thread safety: a loaded blob (clips, skeletons, rest poses) and a binding (read-only once
 * kiln_anim_bind returns) may be shared by any number of threads; many characters can play
 * the same clip through one binding. A sampling context belongs to one playback cursor (one
 * playing clip of one character): give each its own, used by one thread at a time. Poses,
 * matrices and scalar tracks are the caller's memory: calls run together safely as long as
 * none writes what another reads or writes. kiln_simd_force switches every thread's path at
 * once: call it only while no other thread evaluates. kiln_simd_active and kiln_simd_name may
 * be called at any time.
 */
#ifndef KILN_ANIM_H
#define KILN_ANIM_H

#include <stddef.h>
#include <stdint.h>
#include "blob.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- SIMD path selection ------------------------------------------------------------------ */
typedef enum kiln_simd {
    KILN_SIMD_AUTO = 0,   /* best available (default) */
    KILN_SIMD_SCALAR = 1,
    KILN_SIMD_SSE2 = 2,
    KILN_SIMD_AVX2 = 3,
    KILN_SIMD_AVX512 = 4  /* AVX-512 F/VL/DQ/BW (with AVX2+FMA): blending, local -> model and
                             mesh skinning have 16-lane kernels; every other entry point runs
                             its AVX2 kernels */
} kiln_simd;
/* Forces a path for the whole process (tests, benchmarks): every module's kernels follow it
 * (sampling, pose math, skinning, blend shapes, instance matrices, and blob loading's payload
 * scans and CRC, which has no SSE2 form and runs the portable one on the scalar and SSE2
 * paths). Returns the path now in use: a path the CPU (or build) lacks falls back to the best
 * available one; KILN_SIMD_AUTO restores the default. Not thread-safe against concurrent
 * evaluation on other threads. */
KILN_EXPERIMENTAL kiln_simd kiln_simd_force(kiln_simd simd);
/* The path the kernels use now (never KILN_SIMD_AUTO). */
KILN_EXPERIMENTAL kiln_simd kiln_simd_active(void);
/* "auto", "scalar", "sse2", "avx2", "avx512" ("unknown" otherwise). Never NULL. */
KILN_API const char *kiln_simd_name(kiln_simd simd);

/* ---- clips -------------------------------------------------------------------------------- */
/* Views of the 1.1 animation sections (NULL and *count 0 when absent). A clip's joints are
 * kiln_blob_anim_joints()[first_joint .. first_joint + joint_count), and likewise for scalars,
 * overrides and events. */
KILN_API const kiln_blob_animation *kiln_blob_animations(const kiln_blob *blob, uint32_t *count);
KILN_API const kiln_blob_anim_joint *kiln_blob_anim_joints(const kiln_blob *blob, uint32_t *count);
KILN_API const kiln_blob_anim_scalar *kiln_blob_anim_scalars(const kiln_blob *blob, uint32_t *count);
KILN_API const kiln_blob_anim_override *kiln_blob_anim_overrides(const kiln_blob *blob, uint32_t *count);
KILN_API const kiln_blob_anim_event *kiln_blob_anim_events(const kiln_blob *blob, uint32_t *count);
/* Clip duration in seconds: (last_frame - first_frame) / framerate, the period kiln_sample and
 * kiln_anim_events wrap by. The clip plays from first_frame / framerate (time 0 when its first
 * key is on frame 0) to last_frame / framerate; kiln_anim_start_time gives the start. 0 for a
 * bad clip index or a single-frame clip. */
KILN_API double kiln_anim_duration(const kiln_blob *blob, uint32_t clip);
/* The time of the clip's first frame in seconds: first_frame / framerate (0 for a bad index). */
KILN_API double kiln_anim_start_time(const kiln_blob *blob, uint32_t clip);

/* ---- binding ------------------------------------------------------------------------------ */
typedef struct kiln_anim_binding kiln_anim_binding;

typedef struct kiln_anim_bind_report {
    uint32_t bound_joints;     /* clip joint slots that drive a bone */
    uint32_t missing_joints;   /* slots whose bone name is not in the skeleton (ignored) */
    uint32_t first_missing;    /* index of the first missing slot, KILN_BLOB_NONE if none */
    uint32_t inexact_matches;  /* bound case-insensitively or after sanitising the name */
    uint32_t duplicate_joints; /* slots ignored because another slot drives the same bone
                                  (the better name match wins, then the later slot) */
    uint32_t identity_map;     /* 1 when every bound slot j drives bone j: sampling writes the
                                  pose blocks in place (the fast path); 0: per-lane scatter */
} kiln_anim_bind_report;

/* Bytes of caller memory kiln_anim_bind needs for this (clip, skeleton) pair; 0 when an index
 * is out of range. Roughly 1.3 KB per 8 joint slots. */
KILN_API size_t kiln_anim_binding_size(const kiln_blob *anim_blob, uint32_t clip,
                                       const kiln_blob *skel_blob, uint32_t skeleton);
/* Maps the clip's joint slots onto the skeleton's bones by name (exact, then case-insensitive,
 * then with characters outside [A-Za-z0-9_] replaced by '_' and case ignored; the first bone
 * of a duplicated name), resolves stored CurveModeOverrides against the skeleton's hierarchy
 * (for each channel walk the bone, its parent, ..., the root; at each node the first override
 * in file order naming that node and flagging that channel gives the mode; bs/vb and channels
 * without a curve are never overridden), and precomputes per-lane mode coefficients and row
 * sources. Missing bones are counted in `report` (optional), not fatal. The clip and the
 * skeleton may come from different blobs.
 * `mem` must hold kiln_anim_binding_size() bytes, 16-byte aligned, and outlive the binding;
 * both blobs must outlive it too. The binding points into `mem` (do not move or copy it).
 * Errors: ERR_INVALID_ARGUMENT (NULL, index out of range), ERR_BLOB_MISALIGNED (mem),
 * ERR_BUFFER_TOO_SMALL, ERR_BLOB_BAD_RECORD (clip or skeleton records inconsistent: only
 * possible for blobs loaded with KILN_BLOB_LOAD_TRUSTED). *out is NULL on failure. */
KILN_API kiln_result kiln_anim_bind(const kiln_blob *anim_blob, uint32_t clip,
                                    const kiln_blob *skel_blob, uint32_t skeleton,
                                    void *mem, size_t size, kiln_anim_binding **out,
                                    kiln_anim_bind_report *report);
/* The skeleton's SoA block count (ceil(bones / 8)): the length of a pose. 0 for NULL. */
KILN_API uint32_t kiln_anim_binding_soa_count(const kiln_anim_binding *binding);

/* ---- sampling ----------------------------------------------------------------------------- */
typedef enum kiln_loop {
    KILN_LOOP_CLIP = 0,   /* wrap when the clip was authored looping (`lo`), else clamp */
    KILN_LOOP_CLAMP = 1,  /* hold the first/last frame outside the range */
    KILN_LOOP_WRAP = 2    /* wrap modulo (last - first) frames into [first, last) */
} kiln_loop;

/* A sampling context caches the decoded frame rows of the last calls, so that playback moving
 * forward by less than a frame decodes nothing new and a step to the next frame decodes one
 * row (the old row i+1 becomes row i). Only quantised (lossy) rows are cached: lossless rows
 * are read in place. A jump (random access) is decoded without touching the cache. Optional:
 * pass NULL to decode every call; the samples are bit-identical either way.
 * kiln_sample_context_size: bytes for `binding`: 64, plus 2 rows of decoded blocks (640 bytes
 * per 8 joint slots) when the clip has blocks worth caching; 0 for NULL.
 * kiln_sample_context_init: `mem` 16-byte aligned (64 recommended), `size` >=
 * kiln_sample_context_size(binding). A context may be reused for another binding whose size
 * fits: kiln_sample notices the change and refills it. Errors: ERR_INVALID_ARGUMENT,
 * ERR_BLOB_MISALIGNED (mem), ERR_BUFFER_TOO_SMALL.
 * A context belongs to one playback cursor (one clip playing forward at one place in one
 * character), not to the character: a character playing two layers needs two contexts, and
 * two layers sharing one would evict each other's rows (still correct, only slower). */
KILN_API size_t kiln_sample_context_size(const kiln_anim_binding *binding);
KILN_API kiln_result kiln_sample_context_init(void *mem, size_t size, const kiln_anim_binding *binding);

typedef struct kiln_sample_desc {
    const kiln_anim_binding *binding;
    double                   time_s;       /* any value: NaN samples the first frame, ±inf the
                                              last/first, huge values clamp or wrap exactly */
    kiln_loop                loop;
    const kiln_soa_xform    *base;         /* the pose underneath (additive channels and channels
                                              without a curve); NULL = the rest pose */
    kiln_soa_xform          *out;          /* out_count blocks; may equal base (not overlap it otherwise) */
    uint32_t                 out_count;    /* >= kiln_anim_binding_soa_count() */
    void                    *context;      /* from kiln_sample_context_init, or NULL */
    float                   *scalars;      /* optional: receives the clip's scalar tracks (bs, vb) */
    uint32_t                 scalar_count; /* capacity of `scalars` */
} kiln_sample_desc;

/* Samples the clip into `out` (soa_count blocks): every bone gets a value, bones without a
 * track the rest (or `base`) value. `scalars` receives the first min(scalar_count, clip's
 * scalar tracks) values in clip order: blend shape weights interpolate linearly, visibility is
 * the value of the frame at or before the time. Errors: ERR_INVALID_ARGUMENT (NULL binding or
 * out, scalars NULL with scalar_count > 0, a context not from kiln_sample_context_init or
 * damaged), ERR_BUFFER_TOO_SMALL
 * (out_count < soa_count, or a context too small for this binding). On error `out` is not
 * written. */
KILN_API kiln_result kiln_sample(const kiln_sample_desc *desc);

/* ---- visibility tracks (Cast reference D.7) --------------------------------------------------- */
/* For each of `mesh_count` meshes of `mesh_blob` (indices into kiln_blob_meshes; NULL: meshes 0 ..
 * mesh_count - 1), the index within clip `clip` of `anim_blob` of the visibility scalar track
 * (KILN_SCALAR_VISIBILITY) that drives it, in the order kiln_sample writes the clip's scalars,
 * or KILN_BLOB_NONE: the track named exactly like the mesh, else one named like the mesh's
 * model (which shows or hides all its meshes); of several tracks with one name the last wins
 * (D.4). The counterpart of kiln_blend_shape_bind_clip (kiln/blend_shape.h), done once per
 * (clip, mesh list). Errors: ERR_INVALID_ARGUMENT (NULL blobs, track NULL with mesh_count > 0, a
 * bad clip or mesh index); kiln_error_detail() says which. */
KILN_API kiln_result kiln_visibility_bind_clip(const kiln_blob *anim_blob, uint32_t clip, const kiln_blob *mesh_blob,
                                               const uint32_t *meshes, uint32_t mesh_count, uint32_t *track);
/* visible[i] = 1 when the sampled value scalars[track[i]] is nonzero (a step curve: 0 hidden),
 * 0 when it is zero, and 1 for a mesh the clip does not animate or a track at or past
 * scalar_count (D.7: unanimated nodes are visible). Values are floats so that layers blend with
 * kiln_pose_blend_values. */
KILN_API void kiln_visibility_values(const uint32_t *track, uint32_t mesh_count, const float *scalars,
                                     uint32_t scalar_count, float *visible);

/* ---- poses -------------------------------------------------------------------------------- */
typedef struct kiln_blend_layer {
    const kiln_soa_xform *pose;          /* soa_count blocks */
    float                 weight;        /* layer weight; <= 0 or NaN: the layer is ignored; +inf
                                            counts as FLT_MAX */
    const float          *joint_weights; /* optional per-bone mask, in SoA lane order: soa_count * 8
                                            floats (bone i at [i]; padding lanes ignored); the
                                            weight of bone i is weight × joint_weights[i] (<= 0 or
                                            NaN: none) */
} kiln_blend_layer;

/* The threshold to pass to kiln_pose_blend and kiln_pose_blend_values when in doubt (ozz's
 * BlendingJob default): a joint whose layers add up to less than 0.1 is filled with the rest
 * pose up to 0.1, so a single layer fading out blends into the rest pose instead of holding
 * its last pose at a vanishing weight. */
#define KILN_BLEND_THRESHOLD 0.1f

/* Weighted blend of `count` poses into `out` (soa_count blocks): translations and scales are
 * the weighted means, rotations the normalised weighted sum with each layer brought onto the
 * hemisphere of the sum so far (shortest arc). Per joint, when the summed weight is below
 * `threshold` (> 0; KILN_BLEND_THRESHOLD is the usual choice), the pose `rest` fills the
 * remainder with weight threshold - sum (as ozz's BlendingJob does). `rest` is the pose a joint
 * falls back to where the layers do not reach the threshold, soa_count blocks: normally the
 * skeleton's rest pose, kiln_skeleton_rest_pose(); NULL means the identity transform (T = 0,
 * R = I, S = 1), which is not the rest pose. `out` may equal one of the layers' poses.
 * Blend shape weights and visibility, which kiln_sample writes to `scalars` and not into the
 * pose, are blended by kiln_pose_blend_values (below) with the same weights and threshold.
 * Only the ratios of the weights and the threshold matter (multiplying all of them by one factor
 * gives the same pose), and any finite magnitudes work, denormals and FLT_MAX included, within
 * two bounds relative to m, the largest of the threshold and the layer weights: a threshold
 * below 1e-12·m acts as 1e-12·m (a joint whose weights add up to less is then mostly the rest
 * pose), and a bone weight (layer weight × joint weight) above 65536·m counts as 65536·m. The
 * outputs are finite for poses whose components stay within ±1e12, whatever the weights and
 * the threshold.
 * Errors: ERR_INVALID_ARGUMENT (NULL out, layers NULL with count > 0, a layer without a pose,
 * threshold not a finite number > 0). */
KILN_API kiln_result kiln_pose_blend(const kiln_blend_layer *layers, uint32_t count, const kiln_soa_xform *rest,
                                     float threshold, kiln_soa_xform *out, uint32_t soa_count);
/* Blends per-layer scalar values the way kiln_pose_blend blends a joint: out[i] = (Σ w_l ·
 * values_l[i] + r · rest_value) / (Σ w_l + r), with r = max(0, threshold - Σ w_l) the share the
 * rest fills (layer weights <= 0 or NaN ignored, +inf as FLT_MAX). Each layer's `values` hold
 * value_count entries in one common order, e.g. a mesh's shapes (kiln_blend_shape_weights with
 * that clip's tracks) or meshes (kiln_visibility_values). For blend shape weights pass
 * rest_value 0 (an unanimated shape has weight 0); for visibility pass 1 (an unanimated mesh is
 * visible) and read out[i] >= 0.5 as visible: the weighted majority of the layers decides.
 * `out` may equal one layer's values. Errors: ERR_INVALID_ARGUMENT (out NULL with value_count
 * > 0, layers NULL with count > 0, a layer without values, threshold not a finite number > 0,
 * rest_value not finite). */
typedef struct kiln_value_layer {
    const float *values;   /* value_count values */
    float        weight;
} kiln_value_layer;
KILN_API kiln_result kiln_pose_blend_values(const kiln_value_layer *layers, uint32_t count, float rest_value,
                                            float threshold, float *out, uint32_t value_count);

/* The rest pose of skeleton `skeleton` (the pose a bone has without animation, the `rest` of
 * kiln_pose_blend): a pointer to its soa_count blocks in the blob (*soa_count receives the
 * count; optional), or NULL and 0 for a bad index. */
KILN_API const kiln_soa_xform *kiln_skeleton_rest_pose(const kiln_blob *blob, uint32_t skeleton, uint32_t *soa_count);

/* Applies an additive delta pose (sampled from an additive clip over kiln_pose_identity) on top
 * of `pose`: with w = clamp(weight × joint_weights[i], 0, 1) per joint,
 * T += w·dT, R = R ⊗ slerp(I, dR, w), S ·= 1 + w·(dS − 1), R normalised (slerp as in sampling:
 * the corrected nlerp, the plain one for a dR far from unit length). joint_weights is optional,
 * in SoA lane order (soa_count * 8 floats). Errors: ERR_INVALID_ARGUMENT (NULL pose or delta). */
KILN_API kiln_result kiln_pose_add(kiln_soa_xform *pose, const kiln_soa_xform *delta, float weight,
                                   const float *joint_weights, uint32_t soa_count);
/* Fills `pose` (soa_count blocks) with the identity transform: the base for sampling additive
 * deltas. */
KILN_API void kiln_pose_identity(kiln_soa_xform *pose, uint32_t soa_count);

/* Object-space matrices of every bone of skeleton `skeleton` from a local pose, parent-first
 * (the space of the model's meshes, times `root`):
 * roots W = root · L, children W = W_parent · L, with L = T · R · S, or with segment scale
 * compensate L = T · S(s_parent)^-1 · R · S, s_parent the parent's local scale (C.1).
 * `local` holds the skeleton's soa_count blocks; `root` (optional, 16 floats column-major, e.g.
 * the model's transform, kiln_model_transform) is applied on top of the roots; `object`
 * receives 16 floats per bone and
 * holds `bone_count` matrices (at least the skeleton's bone count). Errors:
 * ERR_INVALID_ARGUMENT (NULL, bad skeleton index), ERR_BUFFER_TOO_SMALL (bone_count below the
 * skeleton's), ERR_BLOB_BAD_RECORD (skeleton records out of range: trusted loads only). */
KILN_API kiln_result kiln_pose_local_to_object(const kiln_blob *skel_blob, uint32_t skeleton,
                                              const kiln_soa_xform *local, const float *root,
                                              float *object, uint32_t bone_count);
/* Skinning matrices K = object × inverse bind, for every bone of the skeleton: `object` and
 * `skin` hold bone_count matrices of 16 floats (at least the skeleton's bone count); they may
 * be the same array. Errors as kiln_pose_local_to_object. */
KILN_API kiln_result kiln_pose_skin_matrices(const kiln_blob *skel_blob, uint32_t skeleton,
                                             const float *object, float *skin, uint32_t bone_count);

/* ---- events -------------------------------------------------------------------------------- */
typedef struct kiln_anim_event {
    uint32_t name;      /* string offset in the clip's blob (kiln_blob_string) */
    uint32_t index;     /* event index within the clip */
    double   time_s;    /* the event's own time in the clip, frame / framerate */
} kiln_anim_event;
/* Writes the notification events with time in [t0_s, t1_s) into out (up to cap, in playback
 * order) and returns how many there are in total (which may exceed cap). Without wrapping,
 * t1 < t0 or a NaN bound gives 0. With KILN_LOOP_WRAP (or a looping clip and KILN_LOOP_CLIP)
 * times are taken modulo the loop (last - first frames): an interval that crosses the loop end
 * reports the events from t0 to the end and then those from the start up to t1; t1 < t0 is
 * read as such a crossing; an interval of a whole period or more reports every event once.
 * An event on last_frame is the same instant as first_frame there and is reported once per
 * loop, at the start. time_s is always the event's own time (frame / framerate). `out` may be
 * NULL when cap is 0. */
KILN_API uint32_t kiln_anim_events(const kiln_blob *blob, uint32_t clip, double t0_s, double t1_s, kiln_loop loop,
                                   kiln_anim_event *out, uint32_t cap);

#ifdef __cplusplus
}
#endif

#endif /* KILN_ANIM_H */
