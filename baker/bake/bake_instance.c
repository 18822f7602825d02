/* Instances, their scene root, and the input's Metadata (Cast reference C.8, C.10).
 *
 * The baker records what each Instance places (the referenced path, written and resolved) and
 * where; it does not open the referenced files, which are baked on their own and found at run
 * time through the REFERENCES section. Because nothing is followed, a chain of files that
 * instance each other cannot make the baker loop: cycles are a matter for whatever loads the
 * references, which has the resolved paths to detect them.
 *
 * Resolution is lexical (util.h): the scene root is not checked against the file system. The
 * blob stores no path of the build machine: each referenced path relative to the scene root,
 * and the scene root itself as "." (the frame the references are in; where it lies on disk
 * is a matter of the build, not of the blob), so the same inputs baked from any directory,
 * through absolute or relative paths, give the same bytes. The absolute spellings
 * (resolved_path, input_key) only group references and find a referenced file among the
 * inputs of the same bake.
 */
#include <string.h>

#include "bake_scene.h"
#include "util.h"
#include "bake_report.h"
#include "ds.h"

kiln_result kiln__scene_root(const kiln__bake_ctx *ctx, const char *metadata_sr, char **out)
{
    const kiln_allocator *a = ctx->allocator;
    *out = NULL;
    if (metadata_sr) {
        char *dir = kiln__path_dirname(a, ctx->input->path);
        if (!dir) return KILN_ERR_OUT_OF_MEMORY;
        *out = kiln__path_join(a, dir, metadata_sr);
        kiln__free(a, dir);
    } else if (ctx->options->scene_root && ctx->options->scene_root[0]) {
        *out = kiln__path_normalise(a, ctx->options->scene_root);
    } else {
        return KILN_OK;
    }
    return *out ? KILN_OK : KILN_ERR_OUT_OF_MEMORY;
}

void kiln__instance_free(const kiln_allocator *a, kiln__instance *inst)
{
    if (!inst) return;
    kiln__free(a, inst->name);
    kiln__free(a, inst->path);
    kiln__free(a, inst->resolved_path);
    kiln__free(a, inst->root_path);
    memset(inst, 0, sizeof *inst);
}

kiln_result kiln__bake_instance(const kiln__bake_ctx *ctx, const kiln_source_instance *ci, uint32_t source_index,
                                const char *scene_root, kiln__instance *out)
{
    memset(out, 0, sizeof *out);
    if (!scene_root && !kiln__path_is_absolute(ci->path)) {
        kiln__bake_report(&ctx->sink, KILN_ERR_NOT_FOUND, KILN_SEVERITY_ERROR, &ci->path_loc, "p", KILN_NO_OFFSET,
                          "no scene root to resolve '%s' against (no Metadata sr and no scene root option); "
                          "instance dropped", ci->path);
        return KILN_ERR_NOT_FOUND;
    }
    const kiln_allocator *a = ctx->allocator;
    out->name = ci->name ? kiln__strdup(a, ci->name) : kiln__path_stem(a, ci->path);
    out->path = kiln__strdup(a, ci->path);
    char *joined = kiln__path_join(a, scene_root, ci->path);
    out->resolved_path = joined ? kiln__path_absolute(a, joined) : NULL;
    kiln__free(a, joined);
    out->root_path = kiln__path_normalise(a, ci->path);
    if (!out->name || !out->path || !out->resolved_path || !out->root_path) {
        kiln__instance_free(a, out);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    out->source_index = source_index;
    memcpy(out->position, ci->position, sizeof out->position);
    memcpy(out->rotation, ci->rotation, sizeof out->rotation);
    memcpy(out->scale, ci->scale, sizeof out->scale);
    return KILN_OK;
}

kiln_result kiln__bake_metadata(const kiln__bake_ctx *ctx, const kiln_source_metadata *md, kiln__bake_unit *unit)
{
    static const uint32_t up[] = {KILN_UP_NONE, KILN_UP_X, KILN_UP_Y, KILN_UP_Z};
    unit->up_axis = (unsigned)md->up_axis < 4u ? up[md->up_axis] : KILN_UP_NONE;
    const kiln_allocator *a = ctx->allocator;
    if (md->author && !(unit->author = kiln__strdup(a, md->author))) return KILN_ERR_OUT_OF_MEMORY;
    if (md->software && !(unit->software = kiln__strdup(a, md->software))) return KILN_ERR_OUT_OF_MEMORY;
    if (!(unit->input_key = kiln__path_absolute(a, ctx->input->path ? ctx->input->path : "")))
        return KILN_ERR_OUT_OF_MEMORY;
    kiln_result r = kiln__scene_root(ctx, md->scene_root, &unit->scene_root);
    if (r == KILN_OK && unit->scene_root) { /* absolute once, so instances need no getcwd each */
        char *abs = kiln__path_absolute(a, unit->scene_root);
        kiln__free(a, unit->scene_root);
        unit->scene_root = abs;
        if (!abs) r = KILN_ERR_OUT_OF_MEMORY;
    }
    /* resolved paths are relative to the scene root: the blob names it as "." */
    if (r == KILN_OK && unit->scene_root && !(unit->scene_root_rel = kiln__strdup(a, ".")))
        r = KILN_ERR_OUT_OF_MEMORY;
    return r;
}
