/* Private: the blend-shape part of stage 1 (bake_blend_shape.c), called from the model walk in
 * bake_unit.c:
 *
 *   kiln__model_shapes shapes;
 *   kiln__blend_shapes_begin(ctx, model->blend_shapes, model->blend_shape_count, &shapes);
 *   for each mesh k:  kiln__bake_mesh_shaped(ctx, &model->meshes[k], k, skeleton, &shapes, unit, mesh_index, &mesh);
 *   kiln__blend_shapes_end(ctx, &shapes, report);                // always, once
 *
 * A shape can only be expressed in its base mesh's baked vertex order, which the mesh bake
 * decides (dedup, cache and fetch reordering); and the dedup must not merge two vertices a
 * shape moves differently. So the shapes are read before the meshes, and each mesh is baked
 * together with the shapes on it.
 */
#ifndef KILN_BAKER_BAKE_BLEND_SHAPE_H
#define KILN_BAKER_BAKE_BLEND_SHAPE_H

#include "bake_internal.h"

/* One blend shape of the model being baked. */
typedef struct kiln__shape_src {
    const kiln_source_blend_shape *src;
    int                   baked;       /* its base mesh was baked and the shape is in the unit */
    uint32_t              out_of_range, nonfinite, duplicates; /* pairs dropped or overridden */
} kiln__shape_src;

typedef struct kiln__model_shapes {
    kiln__shape_src *shapes;
    uint32_t         count;
} kiln__model_shapes;

/* Takes the model's blend shapes (`count`, in source order; they must outlive `out`).
 * u->blend_shapes has room for them already (kiln__reserve_unit counts every model's).
 * `out` is always initialised, so that kiln__blend_shapes_end may follow any failure. Fails
 * only with ERR_OUT_OF_MEMORY. */
kiln_result kiln__blend_shapes_begin(const kiln__bake_ctx *ctx, const kiln_source_blend_shape *shapes, uint32_t count,
                                     kiln__model_shapes *out);

/* Bakes `mesh`, the mesh_source-th of its model (kiln__bake_mesh's contract) and, when it
 * succeeds, appends the shapes whose base it is to u->blend_shapes with mesh index `mesh_index` (the caller makes the mesh
 * that index): sparse deltas target - base in the baked vertex order, indices ascending and
 * distinct, zero deltas dropped; pairs with vi >= the vertex count or a non-finite target are
 * dropped (ERROR), a vi listed twice keeps its last pair (WARNING). The dedup merges two
 * vertices only when every shape moves them by the same delta. On failure `out` is released. */
kiln_result kiln__bake_mesh_shaped(const kiln__bake_ctx *ctx, const kiln_source_mesh *mesh, uint32_t mesh_source,
                                   const kiln__skeleton *skeleton,
                                   kiln__model_shapes *shapes, kiln__bake_unit *u, uint32_t mesh_index,
                                   kiln__mesh *out);

/* With `report`, every shape whose base mesh was not baked is reported dropped. Frees `s`. */
void kiln__blend_shapes_end(const kiln__bake_ctx *ctx, kiln__model_shapes *s, int report);

#endif
