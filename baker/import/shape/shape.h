/* Private: the *.Shape importer's entry points (shared/spec/shape-format.md). */
#ifndef KILN_IMPORT_SHAPE_H
#define KILN_IMPORT_SHAPE_H

#include <stddef.h>

#include "kiln/bake/source.h"

/* Non-zero when the leading bytes are a *.Shape header (05 'SHAPE'). */
int kiln__detect_shape(const void *data, size_t size);
/* Fills `scene` (initialised by the caller, freed by it on failure) from a *.Shape file. */
kiln_result kiln__import_shape(const void *data, size_t size, const char *path, const kiln_import_options *opt,
                               kiln_source_scene *scene, kiln_diag *err);
extern const kiln_importer kiln__importer_shape;

#endif /* KILN_IMPORT_SHAPE_H */
