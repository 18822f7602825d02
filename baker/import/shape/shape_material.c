/* *.Shape materials (spec 4.3, 6.6): maps become File slots, Vector4 values Color slots
 * (linear); the other typed values and the render state are listed as scene extras. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "shape_internal.h"

#define TRY(x) do { kiln_result r_ = (x); if (r_ != KILN_OK) return r_; } while (0)

enum { KILN__MV_DEFINITION, KILN__MV_BOOL, KILN__MV_INT, KILN__MV_UINT, KILN__MV_FLOAT, KILN__MV_VEC2,
       KILN__MV_VEC3, KILN__MV_VEC4, KILN__MV_MAP, KILN__MV_KINDS };

static const char *const kiln__mv_names[KILN__MV_KINDS] = {
    "Definition", "Boolean", "Integer", "UnsignedInteger", "Float", "Vector2", "Vector3", "Vector4", "Map"};
/* Minimum record size of each list (string name + value), for the count check. */
static const uint8_t kiln__mv_min[KILN__MV_KINDS] = {2, 2, 5, 5, 5, 9, 13, 17, 3};

/* One value that no slot holds: an extra "material_value" named "<material>.<value>". */
static kiln_result kiln__material_value(kiln__shape *ctx, const char *material, int kind, uint32_t k,
                                        uint64_t at, uint64_t *slot_count, kiln_source_material_slot *slots)
{
    const char *name;
    char field[48];
    snprintf(field, sizeof field, "%s[%u]", kiln__mv_names[kind], k);
    TRY(kiln__shape_string(ctx, field, &name));
    const char *text = NULL, *file = NULL;
    uint8_t b = 0, index = 0;
    uint32_t u = 0;
    float f[4] = {0, 0, 0, 0};
    static const uint8_t comps[KILN__MV_KINDS] = {0, 0, 0, 0, 1, 2, 3, 4, 0};
    switch (kind) {
    case KILN__MV_DEFINITION: TRY(kiln__shape_string(ctx, field, &text)); break;
    case KILN__MV_BOOL: TRY(kiln__shape_bool(ctx, field, &b)); break;
    case KILN__MV_INT: case KILN__MV_UINT: TRY(kiln__shape_u32(ctx, field, &u)); break;
    case KILN__MV_MAP:
        TRY(kiln__shape_string(ctx, field, &file));
        TRY(kiln__shape_u8(ctx, field, &index));
        break;
    default: TRY(kiln__shape_floats(ctx, comps[kind], field, NULL, f)); break;
    }
    kiln_source_loc loc = kiln__shape_loc(ctx, at, ctx->pos - at, field);
    if (kind == KILN__MV_MAP || kind == KILN__MV_VEC4) {
        kiln_source_material_slot *s = &slots[(*slot_count)++];
        s->loc = loc;
        s->name = name;
        if (kind == KILN__MV_MAP) {
            s->kind = KILN_SOURCE_SLOT_FILE;
            s->path = file;
        } else {
            s->kind = KILN_SOURCE_SLOT_COLOR;
            memcpy(s->rgba, f, sizeof s->rgba);
            s->color_space = KILN_SOURCE_COLOR_LINEAR;
        }
        return KILN_OK;
    }
    const char *full = kiln_source_strfmt(ctx->scene, "%s.%s", material, name);
    switch (kind) {
    case KILN__MV_DEFINITION: return kiln__shape_extra(ctx, "material_value", full, loc, "definition \"%s\"", text);
    case KILN__MV_BOOL: return kiln__shape_extra(ctx, "material_value", full, loc, "bool %s", b ? "true" : "false");
    case KILN__MV_INT: return kiln__shape_extra(ctx, "material_value", full, loc, "int %" PRId32, (int32_t)u);
    case KILN__MV_UINT: return kiln__shape_extra(ctx, "material_value", full, loc, "uint %" PRIu32, u);
    case KILN__MV_FLOAT: return kiln__shape_extra(ctx, "material_value", full, loc, "float %g", (double)f[0]);
    case KILN__MV_VEC2:
        return kiln__shape_extra(ctx, "material_value", full, loc, "float2 (%g, %g)", (double)f[0], (double)f[1]);
    default:
        return kiln__shape_extra(ctx, "material_value", full, loc, "float3 (%g, %g, %g)", (double)f[0], (double)f[1],
                                 (double)f[2]);
    }
}

static kiln_result kiln__read_material(kiln__shape *ctx, uint32_t i, kiln_source_material *m)
{
    uint64_t at = ctx->pos;
    const char *name, *effect;
    kiln__shape_where(ctx, "Material[%u]", i);
    TRY(kiln__shape_string(ctx, "Name", &name));
    TRY(kiln__shape_string(ctx, "SpecialEffect", &effect));
    uint8_t st[13], counts[KILN__MV_KINDS];
    static const char *const st_names[13] = {
        "HasOpacity", "NoShadow", "FillMode", "CullMode", "ConservativeRaster", "PrimitiveTopologyType",
        "ForcedSampleCount", "FrontCounterClockwise", "DepthClipEnable", "MultisampleEnable",
        "AntialiasedLineEnable", "DepthEnable", "DepthBoundsTestEnable"};
    for (int k = 0; k < 13; k++) {
        int is_bool = k < 2 || k >= 7;
        TRY(is_bool ? kiln__shape_bool(ctx, st_names[k], &st[k]) : kiln__shape_u8(ctx, st_names[k], &st[k]));
    }
    ctx->materials[i].front_ccw = st[7];
    uint64_t min_total = 0;
    for (int k = 0; k < KILN__MV_KINDS; k++) {
        char field[32];
        snprintf(field, sizeof field, "Num%ss", kiln__mv_names[k]);
        TRY(kiln__shape_u8(ctx, field, &counts[k]));
        min_total += (uint64_t)counts[k] * kiln__mv_min[k];
    }
    TRY(kiln__shape_check_count(ctx, 1, min_total + 42u, "Values"));

    m->name = name;
    m->type = effect[0] ? effect : "Standard";
    uint64_t slot_cap = (uint64_t)counts[KILN__MV_VEC4] + counts[KILN__MV_MAP];
    kiln_source_material_slot *slots = kiln_source_alloc(ctx->scene, slot_cap, sizeof *slots);
    if (!slots) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, at, "Values", "material slots");
    uint64_t slot_count = 0;
    for (int k = 0; k < KILN__MV_KINDS; k++)
        for (uint32_t v = 0; v < counts[k]; v++)
            TRY(kiln__material_value(ctx, name, k, v, ctx->pos, &slot_count, slots));
    m->slots = slots;
    m->slot_count = (uint32_t)slot_count;

    uint8_t sampler[5], aniso, blend[8];
    float border[4], lod[3];
    for (int k = 0; k < 5; k++) TRY(kiln__shape_u8(ctx, "Sampler", &sampler[k]));
    TRY(kiln__shape_floats(ctx, 4, "BorderColor", NULL, border));
    TRY(kiln__shape_u8(ctx, "MaxAnisotropy", &aniso));
    TRY(kiln__shape_floats(ctx, 3, "LOD", NULL, lod));
    for (int k = 0; k < 8; k++) TRY(kiln__shape_u8(ctx, "Blend", &blend[k]));
    m->loc = kiln__shape_loc(ctx, at, ctx->pos - at, NULL);
    /* The seed wants AntialiasedLineEnable off with MultisampleEnable on: reported, not validated. */
    return kiln__shape_extra(ctx, "render_state", name, m->loc,
                             "%sopacity %u, no shadow %u, fill %u, cull %u, conservative %u, topology type %u, "
                             "samples %u, front ccw %u, depth clip %u, multisample %u, aa lines %u, depth %u, "
                             "depth bounds %u; sampler filter 0x%02x, address %u/%u/%u, compare %u, border "
                             "(%g, %g, %g, %g), anisotropy %u, lod bias %g [%g, %g]; blend %u %u %u / %u %u %u, "
                             "logic %u, alpha to coverage %u",
                             st[9] && st[10] ? "antialiased lines with multisampling (seed: not allowed); " : "", st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7], st[8], st[9], st[10], st[11],
                             st[12], sampler[0], sampler[1], sampler[2], sampler[3], sampler[4], (double)border[0],
                             (double)border[1], (double)border[2], (double)border[3], aniso, (double)lod[0],
                             (double)lod[1], (double)lod[2], blend[0], blend[1], blend[2], blend[3], blend[4],
                             blend[5], blend[6], blend[7]);
}

kiln_result kiln__shape_read_materials(kiln__shape *ctx)
{
    uint16_t count;
    kiln__shape_where(ctx, "%s", "");
    TRY(kiln__shape_u16(ctx, "NumMaterials", &count));
    TRY(kiln__shape_check_count(ctx, count, 66, "Materials"));
    kiln_source_model *model = ctx->model;
    model->materials = kiln_source_alloc(ctx->scene, count, sizeof *model->materials);
    ctx->materials = kiln_source_alloc(ctx->scene, count, sizeof *ctx->materials);
    if (!model->materials || !ctx->materials)
        return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, ctx->pos, "Materials", "materials");
    ctx->material_count = count;
    model->material_count = count;
    for (uint32_t i = 0; i < count; i++) TRY(kiln__read_material(ctx, i, &model->materials[i]));
    return KILN_OK;
}
