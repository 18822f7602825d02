/* The importer table: detection order and lookup by name. */
#include <string.h>

#include "importers.h"

/* Detection looks at leading bytes only; identifiers do not overlap, so the order only decides
 * which importer is asked first. */
static const kiln_importer *const kiln__importers[] = {
    &kiln__importer_cast,
    &kiln__importer_unigine_mesh,
    &kiln__importer_unigine_anim,
    &kiln__importer_lod,
};

uint32_t kiln_importer_count(void)
{
    return (uint32_t)(sizeof kiln__importers / sizeof kiln__importers[0]);
}

const kiln_importer *kiln_importer_at(uint32_t index)
{
    return index < kiln_importer_count() ? kiln__importers[index] : NULL;
}

const kiln_importer *kiln_importer_find(const char *name)
{
    if (!name) return NULL;
    for (uint32_t i = 0; i < kiln_importer_count(); i++)
        if (strcmp(kiln__importers[i]->name, name) == 0) return kiln__importers[i];
    return NULL;
}

const kiln_importer *kiln_importer_detect(const void *data, size_t size)
{
    for (uint32_t i = 0; i < kiln_importer_count(); i++)
        if (kiln__importers[i]->detect(data, size)) return kiln__importers[i];
    return NULL;
}
