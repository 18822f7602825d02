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
#include "bake_util.h"
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

/* Fills a Color slot. */
static kiln_result kiln__color_slot(const kiln__bake_ctx *ctx, uint32_t node, kiln__slot *slot)
{
    kiln_cast_color c;
    kiln_result r = kiln_cast_get_color(ctx->doc, node, &c, &ctx->sink);
    if (r != KILN_OK) return r;
    slot->rec.kind = KILN_SLOT_COLOR;
    slot->rec.color_space = c.color_space == KILN_CAST_COLOR_LINEAR ? 1u : 0u;
    for (int i = 0; i < 4; i++) {
        slot->rec.rgba[i] = c.rgba[i];
        /* Alpha is coverage, never gamma encoded. */
        slot->rec.rgba_linear[i] = i < 3 && slot->rec.color_space == 0 ? kiln__srgb_to_linear(c.rgba[i]) : c.rgba[i];
    }
    return KILN_OK;
}

/* Fills a File slot. */
static kiln_result kiln__file_slot(const kiln__bake_ctx *ctx, uint32_t node, kiln__slot *slot)
{
    kiln_cast_file f;
    kiln_result r = kiln_cast_get_file(ctx->doc, node, &f, &ctx->sink);
    if (r != KILN_OK) return r;
    slot->rec.kind = KILN_SLOT_FILE;
    slot->path = kiln__strdup(ctx->allocator, f.path);
    return slot->path ? KILN_OK : KILN_ERR_OUT_OF_MEMORY;
}

/* Slot k of the material at `node` into *slot. Returns OK with slot->rec.kind == 0 when the
 * slot is dropped: its target is unresolved or unreadable, which the accessors report (a
 * warning for a hash that names no File or Color, an error for a File or Color that cannot
 * be read). The material itself stays. */
static kiln_result kiln__bake_slot(const kiln__bake_ctx *ctx, uint32_t node, uint32_t k, kiln__slot *slot)
{
    memset(slot, 0, sizeof *slot);
    kiln_cast_material_slot ms;
    kiln_result r = kiln_cast_get_material_slot(ctx->doc, node, k, &ms, &ctx->sink);
    if (r == KILN_OK && ms.id == KILN_CAST_ID_COLOR) r = kiln__color_slot(ctx, ms.node, slot);
    else if (r == KILN_OK && ms.id == KILN_CAST_ID_FILE) r = kiln__file_slot(ctx, ms.node, slot);
    else if (r == KILN_OK) r = KILN_ERR_CAST_UNRESOLVED;
    if (r == KILN_OK) {
        slot->name = kiln__strndup(ctx->allocator, ms.name, ms.name_len);
        if (slot->name) return KILN_OK;
        r = KILN_ERR_OUT_OF_MEMORY;
    }
    kiln__free(ctx->allocator, slot->path);
    memset(slot, 0, sizeof *slot);
    return r == KILN_ERR_OUT_OF_MEMORY ? r : KILN_OK;
}

kiln_result kiln__bake_material(const kiln__bake_ctx *ctx, uint32_t node, uint32_t model, kiln__material *out)
{
    memset(out, 0, sizeof *out);
    kiln_cast_material m;
    kiln_result r = kiln_cast_get_material(ctx->doc, node, &m, &ctx->sink);
    if (r != KILN_OK) return r;

    const kiln_allocator *a = ctx->allocator;
    out->name = kiln__node_name(ctx, node, m.name, "material"); /* ordinal among the Materials */
    out->type = kiln__strdup(a, m.type ? m.type : "");
    out->model = model;
    out->cast_node = node;
    out->cast_hash = kiln_cast_node_at(ctx->doc, node)->hash;
    if (m.slot_count) out->slots = kiln__realloc(a, NULL, (size_t)m.slot_count * sizeof *out->slots);
    if (!out->name || !out->type || (m.slot_count && !out->slots)) {
        kiln__material_free(a, out);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t k = 0; k < m.slot_count; k++) {
        kiln__slot *slot = &out->slots[out->slot_count];
        r = kiln__bake_slot(ctx, node, k, slot);
        if (r != KILN_OK) {
            kiln__material_free(a, out);
            return r;
        }
        if (slot->rec.kind) out->slot_count++;
    }
    return KILN_OK;
}

uint32_t kiln__material_index(const kiln__material *materials, uint32_t first, uint32_t count, uint32_t node)
{
    if (node == KILN_CAST_NONE) return KILN_BLOB_NONE;
    for (uint32_t i = first; i < first + count; i++)
        if (materials[i].cast_node == node) return i;
    return KILN_BLOB_NONE;
}
