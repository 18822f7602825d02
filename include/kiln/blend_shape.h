/* kiln/blend_shape.h - blend shapes (format 1.2): sparse position deltas on baked meshes,
 * evaluated in caller memory.
 *
 *   // once: the shapes of a mesh, and which clip track drives each (Cast reference D.7)
 *   uint32_t shapes[64];
 *   uint32_t n = kiln_blob_mesh_blend_shapes(blob, mesh, shapes, 64);
 *   uint32_t track[64];
 *   kiln_blend_shape_bind_clip(anim_blob, clip, blob, shapes, n, track);
 *   // every frame:
 *   kiln_sample(&sample);                                   // sample.scalars = scalars
 *   float w[64];
 *   kiln_blend_shape_weights(track, n, scalars, scalar_count, w);
 *   kiln_blend_shapes_desc d = {blob, mesh, shapes, w, n, positions, 0, vertex_count};
 *   kiln_blend_shapes_apply(&d);                            // positions = base + Σ w_eff · delta
 *
 * Semantics (Cast reference C.5): a shape moves `delta_count` vertices of one mesh by
 * delta = target - base (the mesh's bind space, before skinning) per unit of effective
 * weight w_eff = clamp(w, 0, target_scale) (a NaN weight counts as 0). Shapes stack as a
 * linear sum: P = P_base + Σ w_eff · delta. Normals and tangents are left unchanged (C.5
 * allows it: shapes carry no normals); recompute them from the deformed positions if needed.
 *
 * Nothing here allocates. Deltas are floats even when the mesh's positions are quantised
 * (UNORM16x4): base positions are decoded (decode_offset + decode_scale · q / 65535) and the
 * float deltas added, so a shape at full weight reaches its authored target up to the
 * positions' quantisation error.
 *
 * SIMD: kiln_blend_shapes_apply runs the path kiln_simd_active() names (kiln/anim.h:
 * AVX2+FMA, whose kernels the AVX-512 path runs too, SSE2 or the scalar reference;
 * kiln_simd_force selects one). The paths agree within 1e-6 relative to the magnitudes summed.
 *
 * Thread safety: the blob's shapes and the weights are only read, so any number of threads
 * may apply shapes at once, each to an output no other call reads or writes (one mesh, or one
 * vertex range, per thread). kiln_simd_force (kiln/anim.h) must not run meanwhile.
 */
#ifndef KILN_BLEND_SHAPE_H
#define KILN_BLEND_SHAPE_H

#include <stdint.h>
#include "blob.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- views -------------------------------------------------------------------------------- */
/* The BSHP records (NULL and *count 0 when absent). For one mesh they are stored in the order
 * of the Cast file's BlendShape nodes; records of different meshes may interleave. */
KILN_API const kiln_blob_blend_shape *kiln_blob_blend_shapes(const kiln_blob *blob, uint32_t *count);
/* Index of the blend shape named `name` (exact, case-sensitive) on mesh `mesh`, or
 * KILN_BLOB_NONE. O(shape count). */
KILN_API uint32_t kiln_blob_find_blend_shape(const kiln_blob *blob, uint32_t mesh, const char *name);
/* Writes the indices of mesh `mesh`'s shapes, ascending, into out[0 .. min(total, cap)) and
 * returns the total (out may be NULL when cap is 0). O(shape count). */
KILN_API uint32_t kiln_blob_mesh_blend_shapes(const kiln_blob *blob, uint32_t mesh, uint32_t *out, uint32_t cap);
/* A shape's sparse arrays: delta_count vertex indices (ascending, distinct, below the mesh's
 * vertex_count, in the baked vertex order) and delta_count float[3] deltas. NULL when the shape
 * has no deltas or its arrays lie outside the blob. */
KILN_API const uint32_t *kiln_blend_shape_indices(const kiln_blob *blob, const kiln_blob_blend_shape *shape);
KILN_API const float *kiln_blend_shape_deltas(const kiln_blob *blob, const kiln_blob_blend_shape *shape);

/* The effective weight of C.5: clamp(w, 0, target_scale), 0 for a NaN w. */
KILN_API float kiln_blend_shape_weight(float w, float target_scale);

/* ---- weights from a clip (Cast reference D.7) ----------------------------------------------- */
/* For each of `shape_count` shapes of `shape_blob` (indices into its BSHP records; NULL: records
 * 0 .. shape_count - 1, e.g. all of them), the index within clip `clip` of `anim_blob` of the blend-shape
 * scalar track (KILN_SCALAR_BLEND_SHAPE) named exactly like the shape, in the order kiln_sample
 * writes the clip's scalars (0 .. the clip's scalar_count), or KILN_BLOB_NONE when the clip
 * does not animate it. A bs track drives every shape of that name, on every mesh; when several
 * tracks share a name the last wins (D.4: the last curve on a channel, in file order). `track` receives shape_count entries. Done once per
 * (clip, shape list). Errors: ERR_INVALID_ARGUMENT (NULL blobs or track, a bad clip or shape
 * index). */
KILN_API kiln_result kiln_blend_shape_bind_clip(const kiln_blob *anim_blob, uint32_t clip, const kiln_blob *shape_blob,
                                                const uint32_t *shapes, uint32_t shape_count, uint32_t *track);
/* weights[i] = scalars[track[i]], or 0 for a shape the clip does not animate (D.7: unanimated
 * shapes have weight 0) or a track at or past scalar_count. The weights are the sampled curve
 * values; kiln_blend_shapes_apply clamps them per shape. */
KILN_API void kiln_blend_shape_weights(const uint32_t *track, uint32_t shape_count, const float *scalars,
                                       uint32_t scalar_count, float *weights);

/* ---- evaluation ----------------------------------------------------------------------------- */
typedef struct kiln_blend_shapes_desc {
    const kiln_blob *blob;
    uint32_t         mesh;          /* index into kiln_blob_meshes */
    const uint32_t  *shapes;        /* shape_count indices into kiln_blob_blend_shapes, each on `mesh`;
                                       a shape may be listed more than once (its weights add) */
    const float     *weights;       /* shape_count weights as authored (clamped here to [0, ts]) */
    uint32_t         shape_count;
    float           *out;           /* out_count positions x, y, z (floats), `out_stride` bytes apart */
    uint32_t         out_stride;    /* 0: 12 (packed); else >= 12 and a multiple of 4: only x, y, z of
                                       each element are written */
    uint32_t         out_count;     /* >= the mesh's vertex_count */
} kiln_blend_shapes_desc;

/* Writes every vertex of the mesh: out[v] = base[v] + Σ_i w_eff(i) · delta_i[v] in the order
 * listed (shapes with w_eff = 0 are skipped; with none left this decodes the base positions).
 * The base is the mesh's POSITION stream, F32x3 or UNORM16x4 decoded. Cost: one pass over the
 * base and the output, plus each listed shape's deltas once; the output is built in place in
 * L2-sized vertex chunks, each visited by every shape before the next, so that it goes to
 * memory once however many shapes are listed. `out` must not overlap the blob.
 * Errors: ERR_INVALID_ARGUMENT (NULL desc, blob or out; shapes or weights NULL with
 * shape_count > 0; a bad mesh or shape index; a shape of another mesh; a bad stride),
 * ERR_BUFFER_TOO_SMALL (out_count below the vertex count), ERR_BLOB_BAD_RECORD (no POSITION
 * stream, an unsupported position format, arrays outside the blob: only possible for blobs
 * loaded with KILN_BLOB_LOAD_TRUSTED). On error `out` is not written. */
KILN_API kiln_result kiln_blend_shapes_apply(const kiln_blend_shapes_desc *desc);

#ifdef __cplusplus
}
#endif

#endif /* KILN_BLEND_SHAPE_H */
