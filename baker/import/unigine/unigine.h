/* Private: the Unigine .mesh ("ms10") and .anim ("an10") importers (../shared/spec/unigine-mesh.md).
 *
 * Two importer entries share one reader: "unigine-mesh" detects the "ms"/"sk" identifier
 * families, "unigine-anim" the "an" family; kiln__import_unigine reads either kind (the
 * leading identifier decides), rejecting later versions of a known family (V2). A .mesh gives
 * one model (skeleton, one mesh per surface with kept triangles, one material per surface
 * name, morph targets as blend shapes) and its embedded animations; an .anim gives clips
 * only, whose curves name bones, to be bound to a model's skeleton by name. Clips run at
 * options->framerate when > 0, else 30 fps. */
#ifndef KILN_IMPORT_UNIGINE_H
#define KILN_IMPORT_UNIGINE_H

#include <stddef.h>

#include "kiln/bake/source.h"

/* Non-zero when the leading bytes hold a Unigine identifier of any version ("ms..", "an..",
 * "sk.." followed by two digits). */
int kiln__detect_unigine(const void *data, size_t size);
int kiln__detect_unigine_mesh(const void *data, size_t size);
int kiln__detect_unigine_anim(const void *data, size_t size);

kiln_result kiln__import_unigine(const void *data, size_t size, const char *path, const kiln_import_options *opt,
                                 kiln_source_scene *scene, kiln_diag *err);

extern const kiln_importer kiln__importer_unigine_mesh;
extern const kiln_importer kiln__importer_unigine_anim;

#endif /* KILN_IMPORT_UNIGINE_H */
