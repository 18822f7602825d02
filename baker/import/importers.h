/* Private: the importers compiled into this build (one per folder under baker/import/). */
#ifndef KILN_BAKER_IMPORTERS_H
#define KILN_BAKER_IMPORTERS_H

#include "kiln/bake/source.h"

extern const kiln_importer kiln__importer_cast;
extern const kiln_importer kiln__importer_unigine_mesh;
extern const kiln_importer kiln__importer_unigine_anim;
extern const kiln_importer kiln__importer_lod;

#endif
