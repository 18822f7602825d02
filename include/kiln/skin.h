/* kiln/skin.h - CPU skinning of baked meshes into caller memory.
 *
 *   // once per frame and skeleton (kiln/anim.h):
 *   kiln_pose_local_to_object(blob, skel, pose, root, object, bones);
 *   kiln_pose_skin_matrices(blob, skel, object, skin, bones);
 *   kiln_pose_skin_dual_quats(skin, dual_quats, bones);   // only for dual quaternion meshes
 *   // per mesh, whole or in vertex ranges (one per thread, say):
 *   kiln_skin_desc d = {0};
 *   d.blob = blob;  d.mesh = m;  d.skin_matrices = skin;  d.dual_quats = dual_quats;
 *   d.bone_count = bones;  d.root = root;
 *   d.first_vertex = 0;  d.vertex_count = mesh->vertex_count;
 *   d.positions = out_p;  d.normals = out_n;                   // 3 floats per vertex
 *   d.source_positions = shaped;     // optional: kiln_blend_shapes_apply's output (kiln/blend_shape.h)
 *   kiln_skin_mesh(&d);
 *
 * The mesh's streams are read in place from the blob: float positions, normals and tangents,
 * or their quantised forms (UNORM16x4 positions, OCT16x2 directions), decoded on the fly; the
 * joints and weights (up to 8 influences per vertex, heaviest first) as baked. Nothing here
 * allocates.
 *
 * Thread safety: the blob's meshes and the skinning matrices or dual quaternions are only
 * read, so calls may run on any number of threads at once as long as their outputs do not
 * overlap: a mesh can be split into vertex ranges skinned in parallel, and characters sharing
 * a mesh each skin into their own buffers. kiln_simd_force (kiln/anim.h) must not run
 * meanwhile.
 *
 * Methods (per mesh, kiln_blob_mesh.skinning, from the Cast `sm` property; flags can force one):
 *   linear (LBS)     M = Σ w_i K_i;  p' = M p,  n' = normalise(M^-T n),  t' = normalise(M t).
 *   dual quaternion  each K_i = [R_i | t_i] · S_i is split into a rigid part, a unit dual
 *     (DQS)          quaternion q_i, and a stretch S_i in bind space (kiln_pose_skin_dual_quats).
 *                    The stretches blend linearly, the dual quaternions on the hemisphere of the
 *                    heaviest influence, then normalised: with q = (r, d) = normalise(Σ ±w_i q_i)
 *                    and S = Σ w_i S_i,  p' = q · (S p),  n' = normalise(R(r) · S^-T n),
 *                    t' = normalise(R(r) · S t). Rigid skeletons (every S_i the identity) skip
 *                    the stretch entirely. This is the scheme of Kavan et al.'s "Geometric
 *                    skinning with approximate dual quaternion blending" (scale and shear applied
 *                    before the rigid blend), which Blender's "preserve volume" and Maya's dual
 *                    quaternion skinning also use, so a scaled bone scales its vertices as LBS
 *                    would while its rotation blends without the LBS volume loss.
 * Normals use the inverse transpose (the cofactor matrix, which keeps a mirroring matrix's
 * normals facing the same side), tangents the matrix itself: the two stay perpendicular under
 * non-uniform scale. Both come out unit length (a zero input stays zero). Vertices whose
 * weights are all zero (the baker's "follows the model only") are transformed by `root`.
 *
 * SIMD: the AVX-512 path (F/VL/DQ/BW) processes 16 vertices per iteration, AVX2+FMA 8, SSE2
 * 4, next to the scalar reference; kiln_simd_force() and kiln_simd_active() (kiln/anim.h)
 * govern them too, and the paths agree within 1e-5. Splitting a mesh into ranges gives the
 * same bytes as one call. Fastest with the baker's layouts (packed float3 streams, joints and
 * weights as baked) and packed outputs; other strides are staged through a small buffer, one
 * iteration's vertices at a time.
 */
#ifndef KILN_SKIN_H
#define KILN_SKIN_H

#include <stddef.h>
#include <stdint.h>
#include "blob.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One bone's skinning matrix K = [A | t] as a dual quaternion and a bind-space stretch:
 * A = R · S with R a rotation (the polar decomposition of A; a mirroring A puts its reflection
 * into S), so that K p = R (S p) + t. 96 bytes; float alignment is enough, 32 bytes is faster. */
typedef struct kiln_skin_dual_quat {
    float    real[4];     /* R as a unit quaternion x, y, z, w (w >= 0) */
    float    dual[4];     /* 0.5 · (t, 0) ⊗ real */
    float    stretch[12]; /* S, column-major, each column padded to 4 floats (pads 0); the
                             identity exactly when `stretched` is 0 */
    uint32_t stretched;   /* 1 when S differs from the identity by more than 1e-5 somewhere
                             (below that it is float noise of K = W · IB, and S is stored as I) */
    uint32_t reserved[3]; /* 0 */
} kiln_skin_dual_quat;

/* Converts `bone_count` skinning matrices (16 floats each, column-major, the last row 0 0 0 1
 * as kiln_pose_skin_matrices makes them) into dual quaternions and stretches, for meshes
 * skinned with KILN_SKIN_DUAL_QUAT. The rotation is the polar decomposition of each 3x3 part
 * (Higham's iteration in double), so scale, non-uniform scale and mirroring are all kept in the
 * stretch; a singular matrix (a zero scale) takes the rotation of its Gram-Schmidt
 * orthonormalised columns. Costs a few hundred nanoseconds per bone: do it once per frame and
 * skeleton, not per mesh or vertex range. Errors: ERR_INVALID_ARGUMENT (NULL with a nonzero
 * count). */
KILN_EXPERIMENTAL kiln_result kiln_pose_skin_dual_quats(const float *skin, kiln_skin_dual_quat *out,
                                                        uint32_t bone_count);

/* kiln_skin_desc.flags */
#define KILN_SKIN_FORCE_LINEAR    0x1u /* linear blend whatever the mesh says */
#define KILN_SKIN_FORCE_DUAL_QUAT 0x2u /* dual quaternion blend whatever the mesh says */

typedef struct kiln_skin_desc {
    const kiln_blob *blob;
    uint32_t         mesh;          /* index into kiln_blob_meshes */
    uint32_t         flags;         /* KILN_SKIN_FORCE_*; 0: the mesh's own method */
    /* Linear meshes read skin_matrices (kiln_pose_skin_matrices: 16 floats per bone), dual
     * quaternion meshes dual_quats (kiln_pose_skin_dual_quats); the other may be NULL. Both
     * are indexed by the bone index of the mesh's skeleton and hold bone_count entries (at
     * least the skeleton's bone count). */
    const float               *skin_matrices;
    const kiln_skin_dual_quat *dual_quats;
    uint32_t                   bone_count;
    /* Where vertices without weights go (and every vertex of an unskinned mesh): the matrix
     * given as `root` to kiln_pose_local_to_object, 16 floats column-major; NULL: the identity
     * (they keep their bind position). */
    const float *root;
    /* Vertices [first_vertex, first_vertex + vertex_count) of the mesh. Output element k is
     * vertex first_vertex + k: to split a mesh, offset the output pointers with the range. */
    uint32_t first_vertex, vertex_count;
    /* Outputs, each optional (NULL: not computed): 3 floats per vertex, stride_bytes apart
     * (0: 12, tightly packed; otherwise at least 12 and a multiple of 4, e.g. an interleaved
     * vertex buffer). Only the 12 bytes of each element are written. Normals and tangents need
     * the mesh to have them. Outputs must not overlap each other or the blob. */
    float   *positions;
    uint32_t position_stride_bytes;
    float   *normals;
    uint32_t normal_stride_bytes;
    float   *tangents;
    uint32_t tangent_stride_bytes;
    /* Optional base positions to skin instead of the mesh's own stream: 3 floats per vertex of
     * the range (element k is vertex first_vertex + k, like the outputs), stride as for the
     * outputs (0: 12). This is how blend shapes feed skinning: kiln_blend_shapes_apply writes
     * the deformed bind positions, this skins them. NULL: the mesh's positions. May not
     * overlap the outputs (positions in place are not supported: the kernels read ahead). */
    const float *source_positions;
    uint32_t     source_position_stride_bytes;
} kiln_skin_desc;

/* Skins the vertex range of the mesh into the outputs, by the method the mesh (or flags) asks
 * for. Joint indices are clamped to bone_count - 1, so even a blob loaded with
 * KILN_BLOB_LOAD_TRUSTED cannot make this read past the arrays. Errors: ERR_INVALID_ARGUMENT
 * (NULL desc or blob, mesh index out of range, a range outside the mesh, both FORCE flags, a bad
 * output or source stride, source positions overlapping an output, no skin_matrices /
 * dual_quats for a skinned mesh of that method), ERR_BUFFER_TOO_SMALL (bone_count below the
 * skeleton's bone count), ERR_NOT_FOUND (an output asks for normals or tangents the mesh does
 * not have, or positions are wanted from a mesh without them and no source is given),
 * ERR_LIMIT (more than 8 influences, or a stream format these kernels do not read: positions
 * must be F32x3, F32x4 or UNORM16x4, normals and tangents F32x3, F32x4 or OCT16x2),
 * ERR_BLOB_BAD_RECORD (the mesh's records are inconsistent: only possible for trusted loads).
 * On error nothing is written. */
KILN_API kiln_result kiln_skin_mesh(const kiln_skin_desc *desc);

#ifdef __cplusplus
}
#endif

#endif /* KILN_SKIN_H */
