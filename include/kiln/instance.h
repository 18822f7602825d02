/* kiln/instance.h - where a world blob places its referenced assets: references, instance
 * ranges, and the world matrices of instances, in bulk, in caller memory.
 *
 *   // once per referenced asset:
 *   kiln_reference_info ref;    // (same blob: ref.first_model is the crate's model, below)
 *   if (kiln_reference_get(world, kiln_reference_find(world, "props/crate.cast"), &ref) == KILN_OK) {
 *       float asset[16];
 *       kiln_model_transform(crate_blob, 0, asset);          // the asset's Model p/r/s (C.9)
 *       kiln_reference_world_matrices(world, ref.index, level, asset,
 *                                     KILN_INSTANCE_4X4, matrices, capacity);
 *   }
 *
 * A world blob holds one kiln_blob_reference per referenced file and its kiln_blob_instance
 * records grouped by reference (blob_format.h). Instance i of a reference becomes
 *
 *   world_i = P · T(p_i) · R(r_i) · S(s_i) · M
 *
 * (Cast reference C.8 and C.9): T·R·S is the instance's own transform (rotation a unit
 * quaternion x, y, z, w), M the referenced asset's transform (its Model record's p/r/s
 * of that asset's blob, kiln_model_transform, or the identity) and P an optional transform on top
 * (where the whole level sits, or a view matrix). P and M are column-major float[16] and may
 * be any 4x4 matrices; NULL means the identity.
 *
 * Nothing here allocates. The matrix functions run the AVX2+FMA kernels when the CPU has them
 * (on the AVX2 and AVX-512 paths alike), otherwise SSE2 (x86-64), otherwise the scalar
 * reference, like the animation kernels (kiln_simd_force and kiln_simd_active in anim.h govern
 * them too); the paths agree within 1e-6 of each matrix column's magnitude. `out` needs float
 * alignment only (16 or 64 bytes is faster).
 *
 * Thread safety: instances, references and the parent and model matrices are only read, so
 * threads may compute world matrices from one blob at once, each into its own `out` (ranges of
 * one array that do not overlap are fine). kiln_simd_force (kiln/anim.h) must not run meanwhile.
 */
#ifndef KILN_INSTANCE_H
#define KILN_INSTANCE_H

#include <stddef.h>
#include <stdint.h>
#include "blob.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Output layouts of the world matrices */
#define KILN_INSTANCE_4X4 0u /* float[16] column-major, m[col * 4 + row]: every matrix in Kiln */
#define KILN_INSTANCE_3X4 1u /* float[12], the top three rows row-major, m[row * 4 + col]: the
                                usual GPU instance-buffer layout (three float4 rows). The last row
                                is left out; it is (0, 0, 0, 1) whenever P and M are affine. */
/* Floats per matrix in a layout (16 or 12). */
#define KILN_INSTANCE_FLOATS(layout) ((layout) == KILN_INSTANCE_3X4 ? 12u : 16u)

/* ---- references ------------------------------------------------------------------------ */
typedef struct kiln_reference_info {
    uint32_t    index;           /* the reference's index in kiln_blob_references */
    uint32_t    first_instance;  /* its instances: kiln_blob_instances()[first .. first + count) */
    uint32_t    instance_count;
    const char *path;            /* the File path as written in the Cast file */
    const char *resolved_path;   /* normalised, relative to the blob's scene root (never a path
                                    of the machine that baked it, unless written absolute) */
    uint32_t    first_model;     /* when the referenced file was baked into this blob too: its
                                    models, kiln_blob_models()[first .. first + count); else
                                    KILN_BLOB_NONE and 0 (format 1.3, REFERENCE_MODELS) */
    uint32_t    model_count;
} kiln_reference_info;

/* Number of referenced files in `blob` (0 for NULL or a blob without instances). Iterate with
 * kiln_reference_get(blob, r, &info) for r in [0, count). */
KILN_API uint32_t kiln_reference_count(const kiln_blob *blob);

/* Index of the reference whose path as written equals `path` (byte for byte), else of the
 * first whose resolved path does, or KILN_BLOB_NONE. A file written in several spellings is
 * one reference, stored with the spelling met first; its resolved path always matches. */
KILN_API uint32_t kiln_reference_find(const kiln_blob *blob, const char *path);

/* Fills *out for reference `reference`. A world baked with the files it places (`kiln bake
 * world.cast props/crate.cast -o level.kiln`) gets each reference's models in first_model and
 * model_count, so the game finds the crate's model without matching paths:
 *
 *   kiln_model_transform(level, ref.first_model, model);   // when ref.model_count > 0
 *
 Errors: ERR_INVALID_ARGUMENT (NULL), ERR_NOT_FOUND
 * (reference out of range, KILN_BLOB_NONE included, so kiln_reference_find can be passed
 * straight in), ERR_BLOB_BAD_RECORD (its range lies outside INSTANCES: trusted loads only). */
KILN_API kiln_result kiln_reference_get(const kiln_blob *blob, uint32_t reference, kiln_reference_info *out);

/* ---- transforms ------------------------------------------------------------------------ */
/* T(position) · R(rotation) · S(scale) as a column-major float[16]; rotation is a unit
 * quaternion x, y, z, w. */
KILN_API void kiln_transform_matrix(const float position[3], const float rotation[4], const float scale[3],
                                    float out[16]);

/* The transform (C.9: p/r/s) of model `model` of `blob` as a column-major float[16]: the M of a
 * referenced asset. Errors: ERR_INVALID_ARGUMENT (NULL), ERR_NOT_FOUND (no such model). */
KILN_API kiln_result kiln_model_transform(const kiln_blob *blob, uint32_t model, float out[16]);

/* ---- world matrices -------------------------------------------------------------------- */
/* world_i = parent · T·R·S(instances[i]) · asset_transform for i in [0, count), into `out` (count matrices
 * of KILN_INSTANCE_FLOATS(layout) floats, back to back). `instances` may be any array of
 * records (a blob's, or the caller's own); parent and asset_transform NULL mean the identity. Errors:
 * ERR_INVALID_ARGUMENT (NULL instances or out with count > 0, unknown layout). */
KILN_API kiln_result kiln_instance_matrices(const kiln_blob_instance *instances, uint32_t count, const float *parent,
                                            const float *asset_transform, uint32_t layout, float *out);

/* The same for instances [first, first + count) of `blob` in blob order. Errors:
 * ERR_INVALID_ARGUMENT (NULL blob, NULL out with count > 0, unknown layout, a range past the
 * instance count). */
KILN_API kiln_result kiln_instance_world_matrices(const kiln_blob *blob, uint32_t first, uint32_t count,
                                                  const float *parent, const float *asset_transform, uint32_t layout,
                                                  float *out);

/* Every instance of reference `reference` (asset_transform: that asset's M), into `out`, which holds
 * `capacity` matrices. Errors: those of kiln_reference_get, ERR_INVALID_ARGUMENT (NULL out
 * with instances to write, unknown layout), ERR_BUFFER_TOO_SMALL (capacity below the
 * reference's instance count). */
KILN_API kiln_result kiln_reference_world_matrices(const kiln_blob *blob, uint32_t reference, const float *parent,
                                                   const float *asset_transform, uint32_t layout, float *out,
                                                   uint32_t capacity);

/* Every instance of `blob`, in blob order (grouped by reference), each with the asset transform
 * of its own reference: `asset_transforms` holds kiln_reference_count(blob) pointers, each NULL (identity)
 * or 16 floats; `asset_transforms` NULL: identity for all. `out` holds `capacity` matrices. Errors:
 * ERR_INVALID_ARGUMENT (NULL blob, NULL out with instances to write, unknown layout),
 * ERR_BUFFER_TOO_SMALL (capacity below the instance count), ERR_BLOB_BAD_RECORD (a reference's
 * range outside INSTANCES: trusted loads only). */
KILN_API kiln_result kiln_instance_world_matrices_all(const kiln_blob *blob, const float *parent,
                                                      const float *const *asset_transforms, uint32_t layout, float *out,
                                                      uint32_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* KILN_INSTANCE_H */
