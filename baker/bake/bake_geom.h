/* Private: the pieces the mesh and hair bakers share (bake_mesh.c, bake_skin.c,
 * bake_quantize.c, bake_hair.c). Streams here are kiln__stream values whose payload is
 * allocated with the bake allocator. */
#ifndef KILN_BAKER_BAKE_GEOM_H
#define KILN_BAKER_BAKE_GEOM_H

#include "bake_internal.h"

/* ---- streams ----------------------------------------------------------------------------- */

/* Sets s->desc for `count` elements (decode fields zero, offset 0) and allocates a zeroed
 * payload of count * stride bytes rounded up to a multiple of 4, so index streams and joint
 * streams end on a 4-byte boundary with zero padding. */
kiln_result kiln__stream_alloc(const kiln_allocator *a, kiln__stream *s, uint32_t semantic, uint32_t format,
                               uint32_t set, uint32_t components, uint32_t count, uint32_t stride);
void kiln__stream_free(const kiln_allocator *a, kiln__stream *s);

/* Copies `count` elements of `comps` floats (src may be NULL when count is 0) into a new F32xN
 * stream. Values that are not finite become 0; *nonfinite is increased by how many did. */
kiln_result kiln__stream_copy_f32(const kiln_allocator *a, const float *src, uint32_t count, uint32_t semantic,
                                  uint32_t set, uint32_t format, uint32_t comps, kiln__stream *out,
                                  uint64_t *nonfinite);

/* kiln__bake_mesh with what the blend-shape stage needs (bake_blend_shape.c):
 *   keys        optional, `key_count` u32 per Cast vertex: two vertices merge only when their
 *               keys are equal too (ignored unless key_count is the mesh's vertex count);
 *   vertex_map  optional: receives an array (bake allocator, the caller frees it) with, per Cast
 *               vertex, its index in the baked vertex order, KILN_BLOB_NONE for a vertex no kept
 *               face uses; vertices merged by the dedup share an index.
 * Without keys the mesh is the one kiln__bake_mesh makes, byte for byte. */
kiln_result kiln__bake_mesh_keyed(const kiln__bake_ctx *ctx, const kiln_source_mesh *mesh, uint32_t index,
                                  const kiln__skeleton *skeleton, const uint32_t *keys, uint32_t key_count,
                                  uint32_t **vertex_map, kiln__mesh *out);

/* ---- skinning (bake_skin.c) ---------------------------------------------------------------- */

typedef struct kiln__skin_counts {
    uint64_t bad_bone;      /* influences whose bone is >= the bone count (weight ignored) */
    uint64_t bad_weight;    /* NaN, infinite or negative weights */
    uint64_t pruned;        /* nonzero influences beyond max_influences, or too light to normalise */
} kiln__skin_counts;

/* Builds the JOINTS (U16xN, bones in skeleton sorted order) and WEIGHTS (F32xN) streams of a
 * mesh (Cast reference C.3): per vertex the mi slots are gathered, bones out of range and
 * weights that are zero, negative or not finite are dropped, duplicate bones are merged (their
 * weights add), the `max_influences` (1..KILN_BAKE_MAX_INFLUENCES, as kiln_bake normalises the
 * option) heaviest are kept (ties: lower joint first), heaviest
 * first, normalised to sum 1. A vertex whose kept weights sum to <= 1e-6 is unweighted: all
 * its weights are 0, meaning it follows the model transform only. `components` of both
 * streams is the largest influence count any vertex keeps; when it is 0 no stream is made
 * (*influences = 0, the mesh is not skinned). */
kiln_result kiln__bake_skin(const kiln_allocator *a, const kiln_source_mesh *mesh, const kiln__skeleton *skeleton,
                            uint32_t max_influences, kiln__stream *joints, kiln__stream *weights,
                            uint32_t *influences, kiln__skin_counts *counts);

/* ---- quantisation and colour (bake_quantize.c) ---------------------------------------------- */

/* Component-wise bounds of `count` elements of `comps` floats (count > 0). */
void kiln__bounds_f32(const float *v, uint32_t count, uint32_t comps, float *min, float *max);

/* Replace an F32x3 POSITION stream by UNORM16x4 (x, y, z, 0) and an F32x2 TEXCOORD stream by
 * UNORM16x2: q = round((v - min) / extent * 65535), decode_offset = min, decode_scale = extent
 * (an axis of zero extent stores q = 0, decoding to min exactly). The error of a decoded value
 * is at most extent / 65535 / 2 per axis, plus float rounding in the decode. Fail with
 * ERR_LIMIT, leaving the stream unchanged, when an extent is not finite in float. */
kiln_result kiln__quantize_positions(const kiln_allocator *a, kiln__stream *s);
kiln_result kiln__quantize_uvs(const kiln_allocator *a, kiln__stream *s);

/* Replaces an F32x3 NORMAL or TANGENT stream by OCT16x2: the direction is projected onto the
 * octahedron, unfolded, and stored as two snorm16 values; of the four neighbouring grid points
 * the one whose decode is closest in angle is chosen (error well below 1e-4 rad). Decode:
 *   x = max(s0 / 32767, -1), y = max(s1 / 32767, -1), z = 1 - |x| - |y|,
 *   t = max(-z, 0), x -= (x >= 0 ? t : -t), y -= (y >= 0 ? t : -t), normalise (x, y, z).
 * A zero vector is stored as (0, 0), which decodes to +Z. decode_offset 0, decode_scale 1 for
 * the two components (the generic decode gives the octahedral coordinates). */
kiln_result kiln__quantize_octahedral(const kiln_allocator *a, kiln__stream *s);

/* The sRGB transfer function, inverted: 8-bit-style sRGB channel value in [0, 1] to linear. */
float kiln__srgb_to_linear(float c);

#endif
