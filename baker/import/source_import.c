/* kiln_source_import: find the importer (by name, or from the leading bytes), run it, validate
 * what it produced. */
#include <stdio.h>
#include <string.h>

#include "importers.h"

/* "cast, unigine-mesh, ..." into buf. */
static void kiln__format_list(char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < kiln_importer_count() && n < cap; i++) {
        int w = snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", kiln_importer_at(i)->name);
        if (w < 0) break;
        n += (size_t)w;
    }
}

static kiln_result kiln__unknown(kiln_diag *err, const char *path, const char *format)
{
    if (!err) return KILN_ERR_FORMAT_UNKNOWN;
    char list[128];
    kiln__format_list(list, sizeof list);
    memset(err, 0, sizeof *err);
    err->code = KILN_ERR_FORMAT_UNKNOWN;
    err->severity = KILN_SEVERITY_ERROR;
    err->offset = format ? KILN_NO_OFFSET : 0;
    snprintf(err->path, sizeof err->path, "%s", path ? path : "");
    if (format)
        snprintf(err->message, sizeof err->message, "%s: no importer is named '%s' (this build reads: %s)",
                 kiln_result_str(KILN_ERR_FORMAT_UNKNOWN), format, list);
    else
        snprintf(err->message, sizeof err->message, "%s: its leading bytes match none of: %s",
                 kiln_result_str(KILN_ERR_FORMAT_UNKNOWN), list);
    return KILN_ERR_FORMAT_UNKNOWN;
}

kiln_result kiln_source_import(const void *data, size_t size, const char *path, const char *format,
                               const kiln_import_options *options, kiln_source_scene *scene, kiln_diag *err)
{
    if (!scene || (!data && size)) return KILN_ERR_INVALID_ARGUMENT;
    kiln_import_options defaults;
    if (!options) {
        memset(&defaults, 0, sizeof defaults);
        options = &defaults;
    }
    kiln_source_scene_init(scene, options->allocator);
    const kiln_importer *imp = format ? kiln_importer_find(format) : kiln_importer_detect(data, size);
    if (!imp) return kiln__unknown(err, path, format);
    scene->format = imp->name;
    kiln_result r = imp->import(data, size, path, options, scene, err);
    if (r == KILN_OK) r = kiln_source_validate(scene, err);
    if (r != KILN_OK) kiln_source_scene_free(scene);
    return r;
}
