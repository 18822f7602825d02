/* Private: the LODka3D *.lod importer (shared/spec/lod-format.md). */
#ifndef KILN_IMPORT_LOD_H
#define KILN_IMPORT_LOD_H

#include <stddef.h>

#include "kiln/bake/source.h"

/* Non-zero when the data starts with the signature "LODka3D1". */
int kiln__detect_lod(const void *data, size_t size);

/* Fills `scene` (initialised by the caller, freed by the caller on failure) from a whole .lod
 * file: one model named after `path`'s stem (skeleton, one mesh per face group, materials),
 * one animation per ANM1, and an extra per item the runtime does not use. Repairs go to
 * opt->diag with the spec's W rule; a reject returns a KILN_ERR_IMPORT_* code with `err` naming
 * the R rule, the chunk path and the byte offset. */
kiln_result kiln__import_lod(const void *data, size_t size, const char *path, const kiln_import_options *opt,
                             kiln_source_scene *scene, kiln_diag *err);

extern const kiln_importer kiln__importer_lod;

#endif
