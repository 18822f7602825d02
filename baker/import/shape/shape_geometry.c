/* *.Shape geometries (spec 4.11, 5): attribute streams, indices and skin bones, checked and
 * kept as views into the decoded stream until the meshes are built. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shape_internal.h"

#define TRY(x) do { kiln_result r_ = (x); if (r_ != KILN_OK) return r_; } while (0)

enum { KILN__DXGI_UNKNOWN = 0, KILN__DXGI_RGB32F = 6, KILN__DXGI_RG32F = 16, KILN__DXGI_R32U = 42,
       KILN__DXGI_R16U = 57 };

/* Bytes per element of a DXGI format of the table in 4.11, -1 outside it. */
static int kiln__dxgi_size(uint8_t f)
{
    switch (f) {
    case 0: return 0;
    case 2: return 16;
    case 6: return 12;
    case 10: return 8;
    case 16: return 8;
    case 34: return 4;
    case 41: return 4;
    case 42: return 4;
    case 57: return 2;
    default: return -1;
    }
}

/* One attribute: ui8 Format, ui32 Count, data. `want` is the decodable format (0 for indices:
 * 42 or 57); `expect` the count it must have (V12), UINT32_MAX for none. Sets *data NULL when
 * the format is sized but not decodable (W4, reported by the caller through *undecodable). */
static kiln_result kiln__read_attribute(kiln__shape *ctx, const char *field, uint8_t want, uint32_t expect,
                                        uint8_t *format, uint32_t *count, const uint8_t **data, int *undecodable)
{
    uint64_t at = ctx->pos;
    TRY(kiln__shape_u8(ctx, field, format));
    TRY(kiln__shape_u32(ctx, field, count));
    int size = kiln__dxgi_size(*format);
    if (size < 0 || (*format == KILN__DXGI_UNKNOWN && *count))
        return kiln__shape_fail(ctx, KILN_ERR_IMPORT_UNSUPPORTED, "V11", at, field,
                                "format %u%s", *format,
                                size < 0 ? " is not a DXGI format of the size table" : " (UNKNOWN) with a nonzero count");
    if (expect != UINT32_MAX && *count != expect)
        return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V12", at + 1, field,
                                "count %u differs from NumPositions %u", *count, expect);
    TRY(kiln__shape_check_count(ctx, *count, (uint64_t)size, field));
    uint64_t data_at = ctx->pos;
    TRY(kiln__shape_take(ctx, (size_t)*count * (size_t)size, field, data));
    int decodable = want ? *format == want
                         : (*format == KILN__DXGI_R32U || *format == KILN__DXGI_R16U || *format == KILN__DXGI_UNKNOWN);
    *undecodable = !decodable;
    if (!decodable) {
        *data = NULL;
        return KILN_OK;
    }
    if (want == KILN__DXGI_RGB32F || want == KILN__DXGI_RG32F) {
        uint64_t n = (uint64_t)*count * (uint64_t)(want == KILN__DXGI_RGB32F ? 3 : 2);
        for (uint64_t k = 0; k < n; k++) {
            float f = kiln__shape_rd_f32(*data + 4 * k);
            if (!isfinite(f))
                return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V14", data_at + 4 * k, field,
                                        "element %llu component %llu is not finite (%g)",
                                        (unsigned long long)(k / (want == KILN__DXGI_RGB32F ? 3 : 2)),
                                        (unsigned long long)(k % (want == KILN__DXGI_RGB32F ? 3 : 2)), (double)f);
        }
    }
    return KILN_OK;
}

static kiln_result kiln__read_bones(kiln__shape *ctx, kiln__shape_geometry *g)
{
    TRY(kiln__shape_check_count(ctx, g->bone_count, 69, "Bones"));
    g->bones = kiln_source_alloc(ctx->scene, g->bone_count, sizeof *g->bones);
    if (!g->bones) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, ctx->pos, "Bones", "bones");
    for (uint32_t b = 0; b < g->bone_count; b++) {
        kiln__shape_bone *bone = &g->bones[b];
        char field[48];
        bone->offset = ctx->pos;
        snprintf(field, sizeof field, "Bone[%u].BoneName", b);
        TRY(kiln__shape_string(ctx, field, &bone->name));
        float m[16];
        snprintf(field, sizeof field, "Bone[%u].OffsetMatrix", b);
        TRY(kiln__shape_floats(ctx, 16, field, "V14", m));
        for (int k = 0; k < 16; k++) bone->offset_matrix[k] = m[k];
        uint32_t n;
        uint64_t at = ctx->pos;
        snprintf(field, sizeof field, "Bone[%u].NumWeights", b);
        TRY(kiln__shape_u32(ctx, field, &n));
        if (n != g->vertex_count)
            return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V12", at, field,
                                    "%u weights for %u positions", n, g->vertex_count);
        snprintf(field, sizeof field, "Bone[%u].Weights", b);
        TRY(kiln__shape_check_count(ctx, n, 4, field));
        at = ctx->pos;
        TRY(kiln__shape_take(ctx, (size_t)n * 4u, field, &bone->weights));
        for (uint32_t v = 0; v < n; v++)
            if (!isfinite(kiln__shape_rd_f32(bone->weights + 4u * v)))
                return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V14", at + 4u * v, field,
                                        "weight of vertex %u is not finite", v);
    }
    return KILN_OK;
}

static kiln_result kiln__read_geometry(kiln__shape *ctx, uint32_t i, kiln__shape_geometry *g)
{
    kiln__shape_where(ctx, "Geometry[%u]", i);
    g->offset = ctx->pos;
    uint8_t has_normals, has_uv0, has_uv1, format;
    TRY(kiln__shape_u32(ctx, "Topology", &g->topology));
    TRY(kiln__shape_u16(ctx, "MaterialIndex", &g->material));
    TRY(kiln__shape_bool(ctx, "HasNormals", &has_normals));
    TRY(kiln__shape_bool(ctx, "HasUVChannel0", &has_uv0));
    TRY(kiln__shape_bool(ctx, "HasUVChannel1", &has_uv1));
    TRY(kiln__shape_u8(ctx, "NumBones", &g->bone_count));

    int undecodable = 0;
    uint64_t at = ctx->pos;
    TRY(kiln__read_attribute(ctx, "Positions", KILN__DXGI_RGB32F, UINT32_MAX, &format, &g->vertex_count,
                             &g->positions, &undecodable));
    if (undecodable) {
        kiln__shape_warn(ctx, KILN_SEVERITY_ERROR, "W4", at, "Positions",
                         "position format %u cannot be decoded; geometry not imported", format);
        g->dropped = 1;
    }
    static const char *const names[3] = {"Normals", "UVCoords0", "UVCoords1"};
    const uint8_t **dst[3] = {&g->normals, &g->uv[0], &g->uv[1]};
    uint8_t has[3] = {has_normals, has_uv0, has_uv1};
    for (int k = 0; k < 3; k++) {
        if (!has[k]) continue;
        uint32_t count;
        at = ctx->pos;
        TRY(kiln__read_attribute(ctx, names[k], k ? KILN__DXGI_RG32F : KILN__DXGI_RGB32F, g->vertex_count, &format,
                                 &count, dst[k], &undecodable));
        if (undecodable)
            kiln__shape_warn(ctx, KILN_SEVERITY_ERROR, "W4", at, names[k],
                             "format %u cannot be decoded; attribute dropped", format);
    }
    g->index_offset = ctx->pos;
    TRY(kiln__read_attribute(ctx, "Indices", 0, UINT32_MAX, &g->index_format, &g->index_count, &g->indices,
                             &undecodable));
    if (undecodable && !g->dropped) {
        kiln__shape_warn(ctx, KILN_SEVERITY_ERROR, "W4", g->index_offset, "Indices",
                         "index format %u cannot be decoded; geometry not imported", g->index_format);
        g->dropped = 1;
    }
    if (g->bone_count) TRY(kiln__read_bones(ctx, g));

    if (g->topology != 4 && g->topology != 5 && !g->dropped) {
        kiln__shape_warn(ctx, KILN_SEVERITY_ERROR, "W5", g->offset, "Topology",
                         "topology %u is not a triangle list (4) or strip (5); geometry not imported", g->topology);
        g->dropped = 1;
    }
    if (g->material != KILN__SHAPE_NO_MATERIAL && g->material >= ctx->material_count) {
        kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W7", g->offset + 4, "MaterialIndex",
                         "material %u does not exist (%u materials); no material", g->material, ctx->material_count);
        g->material = KILN__SHAPE_NO_MATERIAL;
    }
    return KILN_OK;
}

kiln_result kiln__shape_read_geometries(kiln__shape *ctx)
{
    uint16_t count;
    kiln__shape_where(ctx, "%s", "");
    TRY(kiln__shape_u16(ctx, "NumGeometries", &count));
    TRY(kiln__shape_check_count(ctx, count, 20, "Geometries"));
    ctx->geometries = kiln_source_alloc(ctx->scene, count, sizeof *ctx->geometries);
    if (!ctx->geometries) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, ctx->pos, "Geometries", "geometries");
    ctx->geometry_count = count;
    for (uint32_t i = 0; i < count; i++) TRY(kiln__read_geometry(ctx, i, &ctx->geometries[i]));
    return KILN_OK;
}
