/* The *.Shape node tree (spec 4.13, 6.1, 6.2): read with an explicit stack (V13 limits), then
 * turned into the model's skeleton, one bone per node in pre-order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape_internal.h"

#define TRY(x) do { kiln_result r_ = (x); if (r_ != KILN_OK) return r_; } while (0)

static kiln_result kiln__read_node(kiln__shape *ctx, uint32_t index, int32_t parent, uint32_t depth, uint8_t *children)
{
    kiln__shape_node *n = &ctx->nodes[index];
    kiln__shape_where(ctx, "Node[%u]", index);
    n->offset = ctx->pos;
    n->parent = parent;
    n->depth = depth;
    TRY(kiln__shape_string(ctx, "Name", &n->name));
    if (n->name[0]) kiln__shape_where(ctx, "Node[%u](%.100s)", index, n->name);
    float m[16];
    TRY(kiln__shape_floats(ctx, 16, "Transformation", "V14", m));
    for (int k = 0; k < 16; k++) n->matrix[k] = m[k];
    uint8_t flags[4], geometry_count;
    TRY(kiln__shape_u32(ctx, "LODLevel", &n->lod));
    TRY(kiln__shape_floats(ctx, 2, "Distance", NULL, n->distance));
    static const char *const flag_names[4] = {"HasOpacity", "NoShadow", "IsHidden", "RenderBeforeChildren"};
    for (int k = 0; k < 4; k++) TRY(kiln__shape_bool(ctx, flag_names[k], &flags[k]));
    n->hidden = flags[2];
    TRY(kiln__shape_floats(ctx, 3, "NullPosition", NULL, NULL));
    TRY(kiln__shape_floats(ctx, 10, "Volume", NULL, NULL));
    TRY(kiln__shape_u8(ctx, "NumGeometries", &geometry_count));
    TRY(kiln__shape_u8(ctx, "NumChildren", children));
    n->geometry_count = geometry_count;
    TRY(kiln__shape_check_count(ctx, geometry_count, 42, "GeometryIndex"));
    TRY(kiln__shape_take(ctx, (size_t)geometry_count * 2u, "GeometryIndex", &n->geometry_refs));
    for (uint32_t g = 0; g < geometry_count; g++) {
        uint16_t ref = kiln__shape_rd_u16(n->geometry_refs + 2 * g);
        if (ref < ctx->geometry_count) ctx->geometries[ref].references++;
    }
    TRY(kiln__shape_floats(ctx, 10u * geometry_count, "GeometryVolume", NULL, NULL));
    if (n->lod || flags[0] || flags[1] || flags[2] || flags[3]) {
        kiln_source_loc loc = kiln__shape_loc(ctx, n->offset, ctx->pos - n->offset, NULL);
        TRY(kiln__shape_extra(ctx, "node_flags", n->name, loc,
                              "LOD %u (distance %g-%g m), opacity %u, no shadow %u, hidden %u, render before children %u",
                              n->lod, (double)n->distance[0], (double)n->distance[1], flags[0], flags[1], flags[2],
                              flags[3]));
    }
    return KILN_OK;
}

static int kiln__name_cmp(const void *a, const void *b, const kiln__shape_node *nodes)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(nodes[x].name, nodes[y].name);
    return c ? c : (x > y) - (x < y);
}

/* qsort has no user pointer: the comparison reads the nodes through this (one import at a time
 * per thread). */
static _Thread_local const kiln__shape_node *kiln__sort_nodes;
static int kiln__name_qsort(const void *a, const void *b) { return kiln__name_cmp(a, b, kiln__sort_nodes); }

int32_t kiln__shape_find_node(const kiln__shape *ctx, const char *name)
{
    if (!name || !name[0]) return -1;
    size_t lo = 0, hi = ctx->node_count;
    while (lo < hi) { /* first entry >= name */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(ctx->nodes[ctx->name_order[mid]].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < ctx->node_count && strcmp(ctx->nodes[ctx->name_order[lo]].name, name) == 0)
        return (int32_t)ctx->name_order[lo];
    return -1;
}

kiln_result kiln__shape_read_nodes(kiln__shape *ctx)
{
    uint64_t left = ctx->size - ctx->pos;
    uint64_t cap = left / 135u;
    if (cap > KILN__SHAPE_MAX_NODES) cap = KILN__SHAPE_MAX_NODES;
    if (cap == 0) cap = 1; /* the read of the root reports the truncation */
    ctx->nodes = kiln_source_alloc(ctx->scene, cap, sizeof *ctx->nodes);
    if (!ctx->nodes) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, ctx->pos, "RootNode", "nodes");

    struct { uint32_t node; uint32_t left; } stack[KILN__SHAPE_MAX_DEPTH];
    uint32_t sp = 0, count = 0;
    uint8_t children;
    TRY(kiln__read_node(ctx, 0, -1, 1, &children));
    count = 1;
    if (children) {
        stack[0].node = 0;
        stack[0].left = children;
        sp = 1;
    }
    while (sp) {
        if (stack[sp - 1].left == 0) {
            sp--;
            continue;
        }
        stack[sp - 1].left--;
        uint32_t depth = sp + 1;
        if (depth > KILN__SHAPE_MAX_DEPTH)
            return kiln__shape_fail(ctx, KILN_ERR_IMPORT_NESTING, "V13", ctx->pos, NULL,
                                    "node tree deeper than %u levels", KILN__SHAPE_MAX_DEPTH);
        if (count >= cap) {
            if (count >= KILN__SHAPE_MAX_NODES)
                return kiln__shape_fail(ctx, KILN_ERR_IMPORT_NESTING, "V13", ctx->pos, NULL,
                                        "more than %u nodes", KILN__SHAPE_MAX_NODES);
            return kiln__shape_fail(ctx, KILN_ERR_IMPORT_TRUNCATED, "V7", ctx->pos, NULL,
                                    "node %u does not fit in the %llu bytes left", count,
                                    (unsigned long long)(ctx->size - ctx->pos));
        }
        uint32_t index = count++;
        TRY(kiln__read_node(ctx, index, (int32_t)stack[sp - 1].node, depth, &children));
        if (children) {
            /* depth <= 256 here, so sp == depth - 1 < 256: in bounds. */
            stack[sp].node = index;
            stack[sp].left = children;
            sp++;
        }
    }
    ctx->node_count = count;

    ctx->name_order = kiln_source_alloc(ctx->scene, count, sizeof *ctx->name_order);
    if (!ctx->name_order) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, KILN_NO_OFFSET, NULL, "nodes");
    for (uint32_t i = 0; i < count; i++) ctx->name_order[i] = i;
    kiln__sort_nodes = ctx->nodes;
    qsort(ctx->name_order, count, sizeof *ctx->name_order, kiln__name_qsort);
    for (uint32_t k = 1; k < count; k++) {
        const kiln__shape_node *a = &ctx->nodes[ctx->name_order[k - 1]], *b = &ctx->nodes[ctx->name_order[k]];
        if (a->name[0] && strcmp(a->name, b->name) == 0 &&
            (k < 2 || strcmp(ctx->nodes[ctx->name_order[k - 2]].name, a->name) != 0)) {
            kiln__shape_where(ctx, "Node[%u]", ctx->name_order[k]);
            kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W12", b->offset, "Name",
                             "duplicate node name \"%.100s\" (also node %u); tracks and skins bind to the first",
                             b->name, ctx->name_order[k - 1]);
        }
    }
    return KILN_OK;
}

kiln_result kiln__shape_build_skeleton(kiln__shape *ctx)
{
    kiln_source_scene *sc = ctx->scene;
    kiln_source_skeleton *skel = kiln_source_alloc(sc, 1, sizeof *skel);
    kiln_source_bone *bones = kiln_source_alloc(sc, ctx->node_count, sizeof *bones);
    if (!skel || !bones) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, KILN_NO_OFFSET, NULL, "skeleton");
    kiln__shape_where(ctx, "RootNode");
    skel->loc = kiln__shape_loc(ctx, ctx->nodes[0].offset, 0, NULL);
    skel->bones = bones;
    skel->bone_count = ctx->node_count;
    for (uint32_t i = 0; i < ctx->node_count; i++) {
        kiln__shape_node *n = &ctx->nodes[i];
        kiln_source_bone *b = &bones[i];
        kiln__shape_where(ctx, "Node[%u]", i);
        b->loc = kiln__shape_loc(ctx, n->offset, 0, NULL);
        b->name = n->name[0] ? n->name : kiln_source_strfmt(sc, "node%u", i);
        b->parent = n->parent;
        double t[3], q[4], s[3], local[16];
        unsigned repairs = kiln__shape_decompose(n->matrix, t, q, s);
        if (repairs)
            kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W11", n->offset, "Transformation",
                             "node \"%.100s\" matrix has%s%s%s; decomposition repaired", n->name,
                             repairs & 1u ? " a projective row" : "", repairs & 2u ? " shear" : "",
                             repairs & 4u ? " a zero scale" : "");
        b->has_local_position = b->has_local_rotation = b->has_scale = 1;
        for (int k = 0; k < 3; k++) {
            b->local_position[k] = (float)t[k];
            b->scale[k] = (float)s[k];
        }
        for (int k = 0; k < 4; k++) b->local_rotation[k] = (float)q[k];
        /* Finite floats can still overflow: a column length, or its float, past FLT_MAX. */
        for (int k = 0; k < 4; k++)
            if (!isfinite(b->local_rotation[k]) || (k < 3 && (!isfinite(b->local_position[k]) || !isfinite(b->scale[k]))))
                return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V14", n->offset, "Transformation",
                                        "node \"%.100s\" matrix overflows when decomposed", n->name);
        kiln__shape_mat_from_trs(t, q, s, local);
        if (n->parent < 0)
            memcpy(n->rest_model, local, sizeof local);
        else
            kiln__shape_mat_mul(ctx->nodes[n->parent].rest_model, local, n->rest_model);
    }
    ctx->model->skeleton = skel;
    return KILN_OK;
}
