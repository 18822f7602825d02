/* Private: stage-1 bakers for the scene-level nodes (materials, instances, metadata).
 *
 * Same contract as the bakers in bake_internal.h: KILN_OK fills `out`; ERR_OUT_OF_MEMORY
 * fails the bake; any other code means the node was dropped and already reported (ERROR)
 * through ctx->sink, and `out` is zeroed.
 */
#ifndef KILN_BAKER_BAKE_SCENE_H
#define KILN_BAKER_BAKE_SCENE_H

#include "bake_internal.h"

/* Material `m`, the index-th of unit-local model `model`. A missing name becomes
 * "material<index>". File paths are kept as written; Colours keep their authored values and
 * get a linear copy (sRGB decode for srgb). Fails only with ERR_OUT_OF_MEMORY. */
kiln_result kiln__bake_material(const kiln__bake_ctx *ctx, const kiln_source_material *m, uint32_t index,
                                uint32_t model, kiln__material *out);
void kiln__material_free(const kiln_allocator *a, kiln__material *m);


/* The directory Instance paths of this input resolve against (Cast reference C.8): the first
 * Metadata's sr taken relative to the input's directory, else options->scene_root, both
 * normalised; *out is NULL when there is neither. */
kiln_result kiln__scene_root(const kiln__bake_ctx *ctx, const char *metadata_sr, char **out);

/* Instance `in`, the source_index-th Instance of the input, resolved against scene_root
 * (may be NULL: then only absolute paths resolve, others are dropped with an ERROR). */
kiln_result kiln__bake_instance(const kiln__bake_ctx *ctx, const kiln_source_instance *in, uint32_t source_index,
                                const char *scene_root, kiln__instance *out);
void kiln__instance_free(const kiln_allocator *a, kiln__instance *inst);

/* The input's metadata (author, software, up axis) into the unit, its scene root resolved
 * (unit->scene_root, unit->scene_root_rel) and the input's absolute path (unit->input_key). */
kiln_result kiln__bake_metadata(const kiln__bake_ctx *ctx, const kiln_source_metadata *md, kiln__bake_unit *unit);

#endif
