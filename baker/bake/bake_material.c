/* Materials and their slots (Cast reference C.6).
 *
 * A slot keeps what the file says: a File slot its path exactly as written (resolving it is
 * the asset pipeline's business, against the directory of the Cast file), a Color slot its
 * authored RGBA and colour space, plus the linear decode so the runtime never has to know
 * which space a colour was authored in.
 */
#include <string.h>

#include "bake_geom.h"
#include "bake_scene.h"
#include "util.h"
#include "ds.h"

void kiln__material_free(const kiln_allocator *a, kiln__material *m)
{
    if (!m) return;
    for (uint32_t i = 0; i < m->slot_count; i++) {
        kiln__free(a, m->slots[i].name);
        kiln__free(a, m->slots[i].path);
    }
    kiln__free(a, m->slots);
    kiln__free(a, m->name);
    kiln__free(a, m->type);
    memset(m, 0, sizeof *m);
}

/* One slot as the runtime stores it: a File keeps its path, a Color its authored value and
 * a linear copy. */
static kiln_result kiln__bake_slot(const kiln__bake_ctx *ctx, const kiln_source_material_slot *src, kiln__slot *slot)
{
    memset(slot, 0, sizeof *slot);
    if (src->kind == KILN_SOURCE_SLOT_COLOR) {
        slot->rec.kind = KILN_SLOT_COLOR;
        slot->rec.color_space = src->color_space == KILN_SOURCE_COLOR_LINEAR ? 1u : 0u;
        for (int i = 0; i < 4; i++) {
            slot->rec.rgba[i] = src->rgba[i];
            /* Alpha is coverage, never gamma encoded. */
            slot->rec.rgba_linear[i] =
                i < 3 && slot->rec.color_space == 0 ? kiln__srgb_to_linear(src->rgba[i]) : src->rgba[i];
        }
    } else {
        slot->rec.kind = KILN_SLOT_FILE;
        slot->path = kiln__strdup(ctx->allocator, src->path);
        if (!slot->path) return KILN_ERR_OUT_OF_MEMORY;
    }
    slot->name = kiln__strdup(ctx->allocator, src->name);
    return slot->name ? KILN_OK : KILN_ERR_OUT_OF_MEMORY;
}

kiln_result kiln__bake_material(const kiln__bake_ctx *ctx, const kiln_source_material *m, uint32_t index,
                                uint32_t model, kiln__material *out)
{
    memset(out, 0, sizeof *out);
    const kiln_allocator *a = ctx->allocator;
    out->name = m->name ? kiln__strdup(a, m->name) : kiln__strfmt(a, "material%u", index);
    out->type = kiln__strdup(a, m->type ? m->type : "");
    out->model = model;
    out->cast_node = KILN_BLOB_NONE;
    if (m->slot_count) out->slots = kiln__realloc(a, NULL, (size_t)m->slot_count * sizeof *out->slots);
    if (!out->name || !out->type || (m->slot_count && !out->slots)) {
        kiln__material_free(a, out);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t k = 0; k < m->slot_count; k++) {
        kiln_result r = kiln__bake_slot(ctx, &m->slots[k], &out->slots[out->slot_count]);
        out->slot_count++;
        if (r != KILN_OK) {
            kiln__material_free(a, out);
            return r;
        }
    }
    return KILN_OK;
}
