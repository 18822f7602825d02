/* *.Shape meshes (spec 5, 6.3-6.5): one Kiln mesh per (LOD 0 node, geometry) reference, with
 * triangles from lists or strips in Kiln winding, vertices in model space, and the skin (rigid
 * geometry: one influence on its node; skinned geometry: its bones, at most 4 per vertex). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shape_internal.h"

#define TRY(x) do { kiln_result r_ = (x); if (r_ != KILN_OK) return r_; } while (0)

/* Index k of a geometry (non-indexed: k itself). */
static uint32_t kiln__index(const kiln__shape_geometry *g, uint32_t k)
{
    if (g->index_format == 57) return kiln__shape_rd_u16(g->indices + 2u * k);
    if (g->index_format == 42) return kiln__shape_rd_u32(g->indices + 4u * k);
    return k;
}

/* Triangles of a geometry into faces (capacity: index count, or vertex count when
 * non-indexed, times 3). Returns the face count. */
static uint32_t kiln__triangles(kiln__shape *ctx, const kiln__shape_geometry *g, int swap, uint32_t *faces)
{
    uint32_t n = g->index_format ? g->index_count : g->vertex_count;
    uint32_t count = 0, out_of_range = 0, degenerate = 0, remainder = 0;
    if (g->topology == 4) {
        for (uint32_t k = 0; k + 2 < n; k += 3) {
            uint32_t a = kiln__index(g, k), b = kiln__index(g, k + 1), c = kiln__index(g, k + 2);
            if (a >= g->vertex_count || b >= g->vertex_count || c >= g->vertex_count) { out_of_range++; continue; }
            if (a == b || b == c || a == c) { degenerate++; continue; }
            faces[3 * count] = a;
            faces[3 * count + 1] = swap ? c : b;
            faces[3 * count + 2] = swap ? b : c;
            count++;
        }
        remainder = n % 3u;
    } else {
        uint32_t cut = g->index_format == 57 ? 0xFFFFu : 0xFFFFFFFFu;
        uint32_t run = 0, r0 = 0, r1 = 0; /* position in the run, the two previous indices */
        for (uint32_t k = 0; k < n; k++) {
            uint32_t i = kiln__index(g, k);
            if (g->index_format && i == cut) { run = 0; continue; }
            if (run >= 2) {
                uint32_t a = r0, b = (run & 1u) ? i : r1, c = (run & 1u) ? r1 : i;
                if (a >= g->vertex_count || b >= g->vertex_count || c >= g->vertex_count)
                    out_of_range++;
                else if (a != b && b != c && a != c) { /* degenerate strip triangles join strips: silent */
                    faces[3 * count] = a;
                    faces[3 * count + 1] = swap ? c : b;
                    faces[3 * count + 2] = swap ? b : c;
                    count++;
                }
            }
            r0 = r1;
            r1 = i;
            run++;
        }
    }
    if (out_of_range || degenerate || remainder)
        kiln__shape_warn(ctx, KILN_SEVERITY_ERROR, "W6", g->index_offset, "Indices",
                         "%u triangle(s) with an index >= %u, %u degenerate triangle(s) and %u trailing index(es) dropped",
                         out_of_range, g->vertex_count, degenerate, remainder);
    return count;
}

/* One skinned geometry's bones bound to nodes: unique nodes in first-slot order. */
typedef struct kiln__skin_bind {
    int32_t  slot_node[256];   /* per geometry bone: node or -1 */
    uint32_t slot_unique[256]; /* per geometry bone: index into unique[] */
    int32_t  unique[256];
    double   g[256][16];       /* bind space W_rest(b) * Offset_b per unique bone */
    double   gn[256][9];       /* its normal matrix */
    uint32_t unique_count;
    int      consistent;
} kiln__skin_bind;

static void kiln__bind_bones(kiln__shape *ctx, const kiln__shape_geometry *g, kiln__skin_bind *sb)
{
    sb->unique_count = 0;
    sb->consistent = 1;
    for (uint32_t b = 0; b < g->bone_count; b++) {
        const kiln__shape_bone *bone = &g->bones[b];
        int32_t node = kiln__shape_find_node(ctx, bone->name);
        sb->slot_node[b] = node;
        if (node < 0) {
            kiln__shape_warn(ctx, KILN_SEVERITY_ERROR, "W9", bone->offset, "BoneName",
                             "bone \"%.100s\" names no node; its weights are dropped", bone->name);
            continue;
        }
        uint32_t u = 0;
        while (u < sb->unique_count && sb->unique[u] != node) u++;
        if (u < sb->unique_count) {
            kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W9", bone->offset, "BoneName",
                             "bone \"%.100s\" appears twice; its weights are added", bone->name);
        } else {
            sb->unique[u] = node;
            kiln__shape_mat_mul(ctx->nodes[node].rest_model, bone->offset_matrix, sb->g[u]);
            if (!kiln__shape_normal_matrix(sb->g[u], sb->gn[u])) memset(sb->gn[u], 0, sizeof sb->gn[u]);
            if (u > 0)
                for (int k = 0; k < 16; k++)
                    if (fabs(sb->g[u][k] - sb->g[0][k]) > 1e-4) sb->consistent = 0;
            sb->unique_count++;
        }
        sb->slot_unique[b] = u;
    }
}

/* Per vertex influences of a skinned geometry (6.4), and vertices in model space. */
static kiln_result kiln__skin(kiln__shape *ctx, const kiln__shape_geometry *g, uint32_t node, kiln_source_mesh *m,
                              float *pos, float *nrm)
{
    static _Thread_local kiln__skin_bind sb;
    kiln__bind_bones(ctx, g, &sb);
    uint32_t vc = g->vertex_count;
    if (!sb.consistent)
        kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W10", g->offset, "Bones",
                         "offset matrices disagree with the node rest pose; vertices baked at rest per vertex");
    double rigid[16], rigid_n[9];
    memcpy(rigid, sb.unique_count ? sb.g[0] : ctx->nodes[node].rest_model, sizeof rigid);
    if (!kiln__shape_normal_matrix(rigid, rigid_n)) memset(rigid_n, 0, sizeof rigid_n);

    uint32_t *bones = kiln_source_alloc(ctx->scene, (uint64_t)vc * KILN__SHAPE_MAX_INFLUENCES, sizeof *bones);
    float *weights = kiln_source_alloc(ctx->scene, (uint64_t)vc * KILN__SHAPE_MAX_INFLUENCES, sizeof *weights);
    if (!bones || !weights) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, g->offset, NULL, "skin");
    uint32_t negative = 0, over = 0, zero = 0, max_inf = 1;
    for (uint32_t v = 0; v < vc; v++) {
        double w[256];
        for (uint32_t u = 0; u < sb.unique_count; u++) w[u] = 0.0;
        for (uint32_t b = 0; b < g->bone_count; b++) {
            if (sb.slot_node[b] < 0) continue;
            double x = kiln__shape_rd_f32(g->bones[b].weights + 4u * v);
            if (x < 0.0) { negative++; x = 0.0; }
            w[sb.slot_unique[b]] += x;
        }
        /* the 4 heaviest, ties to the earlier slot, heaviest first */
        uint32_t pick[KILN__SHAPE_MAX_INFLUENCES], n = 0, nonzero = 0;
        for (uint32_t u = 0; u < sb.unique_count; u++) {
            if (!(w[u] > 0.0)) continue;
            nonzero++;
            uint32_t at = n < KILN__SHAPE_MAX_INFLUENCES ? n : KILN__SHAPE_MAX_INFLUENCES;
            while (at > 0 && w[pick[at - 1]] < w[u]) at--;
            if (at >= KILN__SHAPE_MAX_INFLUENCES) continue;
            uint32_t last = n < KILN__SHAPE_MAX_INFLUENCES ? n : KILN__SHAPE_MAX_INFLUENCES - 1;
            for (uint32_t k = last; k > at; k--) pick[k] = pick[k - 1];
            pick[at] = u;
            if (n < KILN__SHAPE_MAX_INFLUENCES) n++;
        }
        if (nonzero > KILN__SHAPE_MAX_INFLUENCES) over++;
        double sum = 0.0;
        for (uint32_t k = 0; k < n; k++) sum += w[pick[k]];
        float pv[3], nv[3] = {0, 0, 0};
        for (int k = 0; k < 3; k++) pv[k] = kiln__shape_rd_f32(g->positions + 12u * v + 4u * (uint32_t)k);
        if (g->normals)
            for (int k = 0; k < 3; k++) nv[k] = kiln__shape_rd_f32(g->normals + 12u * v + 4u * (uint32_t)k);
        uint32_t *vb = bones + (size_t)v * KILN__SHAPE_MAX_INFLUENCES;
        float *vw = weights + (size_t)v * KILN__SHAPE_MAX_INFLUENCES;
        if (sum < 1e-6) {
            zero++;
            vb[0] = node;
            vw[0] = 1.0f;
            for (uint32_t k = 1; k < KILN__SHAPE_MAX_INFLUENCES; k++) { vb[k] = node; vw[k] = 0.0f; }
            kiln__shape_transform_point(rigid, pv, pos + 3u * v);
            if (nrm) kiln__shape_transform_normal(rigid_n, nv, nrm + 3u * v);
            continue;
        }
        if (n > max_inf) max_inf = n;
        for (uint32_t k = 0; k < KILN__SHAPE_MAX_INFLUENCES; k++) {
            vb[k] = (uint32_t)sb.unique[pick[k < n ? k : 0]];
            vw[k] = k < n ? (float)(w[pick[k]] / sum) : 0.0f;
        }
        if (sb.consistent) {
            kiln__shape_transform_point(sb.g[0], pv, pos + 3u * v);
            if (nrm) kiln__shape_transform_normal(sb.gn[0], nv, nrm + 3u * v);
        } else {
            double acc[3] = {0, 0, 0}, nacc[3] = {0, 0, 0};
            for (uint32_t k = 0; k < n; k++) {
                float tp[3], tn[3];
                double wk = w[pick[k]] / sum;
                kiln__shape_transform_point(sb.g[pick[k]], pv, tp);
                kiln__shape_transform_normal(sb.gn[pick[k]], nv, tn);
                for (int c = 0; c < 3; c++) { acc[c] += wk * tp[c]; nacc[c] += wk * tn[c]; }
            }
            double len = sqrt(nacc[0] * nacc[0] + nacc[1] * nacc[1] + nacc[2] * nacc[2]);
            for (int c = 0; c < 3; c++) {
                pos[3u * v + (uint32_t)c] = (float)acc[c];
                if (nrm) nrm[3u * v + (uint32_t)c] = (float)(len > 1e-20 ? nacc[c] / len : nacc[c]);
            }
        }
    }
    if (negative || over || zero)
        kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W9", g->offset, "Bones",
                         "%u negative weight(s) read as 0, %u vertex(es) with more than 4 influences cut to the 4 "
                         "heaviest, %u vertex(es) without weight bound rigidly to the node",
                         negative, over, zero);
    /* Compact to max_inf influences per vertex. */
    if (max_inf < KILN__SHAPE_MAX_INFLUENCES)
        for (uint32_t v = 0; v < vc; v++)
            for (uint32_t k = 0; k < max_inf; k++) {
                bones[(size_t)v * max_inf + k] = bones[(size_t)v * KILN__SHAPE_MAX_INFLUENCES + k];
                weights[(size_t)v * max_inf + k] = weights[(size_t)v * KILN__SHAPE_MAX_INFLUENCES + k];
            }
    m->max_influence = max_inf;
    m->weight_bones = bones;
    m->weight_values = weights;
    return KILN_OK;
}

static kiln_result kiln__build_mesh(kiln__shape *ctx, uint32_t node, uint32_t gi, kiln_source_mesh *m, int *made)
{
    const kiln__shape_geometry *g = &ctx->geometries[gi];
    const kiln__shape_node *nd = &ctx->nodes[node];
    kiln_source_scene *sc = ctx->scene;
    *made = 0;
    kiln__shape_where(ctx, "Node[%u]/Geometry[%u]", node, gi);
    int swap = g->material != KILN__SHAPE_NO_MATERIAL && ctx->materials[g->material].front_ccw;
    uint64_t max_faces = g->index_format ? g->index_count : g->vertex_count;
    uint32_t *faces = kiln_source_alloc(sc, max_faces ? max_faces * 3u : 3u, sizeof *faces);
    if (!faces) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, g->offset, NULL, "faces");
    uint32_t face_count = g->vertex_count ? kiln__triangles(ctx, g, swap, faces) : 0;
    if (!face_count) {
        kiln__shape_warn(ctx, KILN_SEVERITY_ERROR, "W4", g->offset, NULL,
                         "geometry %u has %u vertices and no triangle; not imported", gi, g->vertex_count);
        return KILN_OK;
    }
    uint32_t vc = g->vertex_count;
    float *pos = kiln_source_alloc(sc, (uint64_t)vc * 3u, sizeof *pos);
    float *nrm = g->normals ? kiln_source_alloc(sc, (uint64_t)vc * 3u, sizeof *nrm) : NULL;
    if (!pos || (g->normals && !nrm)) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, g->offset, NULL, "vertices");
    m->loc = kiln__shape_loc(ctx, g->offset, 0, NULL);
    m->name = kiln_source_strfmt(sc, "%s#%u", nd->name[0] ? nd->name : kiln_source_strfmt(sc, "node%u", node), gi);
    m->vertex_count = vc;
    m->face_count = face_count;
    m->faces = faces;
    m->positions = pos;
    m->normals = nrm;
    m->material = g->material == KILN__SHAPE_NO_MATERIAL ? KILN_SOURCE_NONE : g->material;
    m->uv_layer_count = 0;
    for (int k = 0; k < 2; k++) {
        if (!g->uv[k]) continue;
        float *uv = kiln_source_alloc(sc, (uint64_t)vc * 2u, sizeof *uv);
        if (!uv) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, g->offset, NULL, "uv");
        for (uint64_t i = 0; i < (uint64_t)vc * 2u; i++) uv[i] = kiln__shape_rd_f32(g->uv[k] + 4u * i);
        m->uv[m->uv_layer_count++] = uv;
    }
    if (g->bone_count) {
        TRY(kiln__skin(ctx, g, node, m, pos, nrm));
    } else {
        double nm[9];
        if (!kiln__shape_normal_matrix(nd->rest_model, nm)) memset(nm, 0, sizeof nm);
        uint32_t *bones = kiln_source_alloc(sc, vc, sizeof *bones);
        if (!bones) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, g->offset, NULL, "skin");
        for (uint32_t v = 0; v < vc; v++) {
            float p[3];
            for (int k = 0; k < 3; k++) p[k] = kiln__shape_rd_f32(g->positions + 12u * v + 4u * (uint32_t)k);
            kiln__shape_transform_point(nd->rest_model, p, pos + 3u * v);
            if (nrm) {
                for (int k = 0; k < 3; k++) p[k] = kiln__shape_rd_f32(g->normals + 12u * v + 4u * (uint32_t)k);
                kiln__shape_transform_normal(nm, p, nrm + 3u * v);
            }
            bones[v] = node;
        }
        m->max_influence = 1;
        m->weight_bones = bones;
        m->weight_values = NULL;
    }
    /* Finite inputs can still overflow through large node matrices. */
    for (uint64_t k = 0; k < (uint64_t)vc * 3u; k++)
        if (!isfinite(pos[k]) || (nrm && !isfinite(nrm[k])))
            return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V14", g->offset, "Positions",
                                    "vertex %llu is not finite once moved to model space",
                                    (unsigned long long)(k / 3u));
    TRY(kiln__shape_tangents(ctx, m));
    *made = 1;
    return KILN_OK;
}

kiln_result kiln__shape_build_meshes(kiln__shape *ctx)
{
    uint64_t refs = 0;
    for (uint32_t i = 0; i < ctx->node_count; i++) refs += ctx->nodes[i].geometry_count;
    kiln_source_model *model = ctx->model;
    model->meshes = kiln_source_alloc(ctx->scene, refs, sizeof *model->meshes);
    if (!model->meshes) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, KILN_NO_OFFSET, NULL, "meshes");
    for (uint32_t i = 0; i < ctx->node_count; i++) {
        const kiln__shape_node *n = &ctx->nodes[i];
        for (uint32_t k = 0; k < n->geometry_count; k++) {
            uint16_t gi = kiln__shape_rd_u16(n->geometry_refs + 2u * k);
            if (gi >= ctx->geometry_count) {
                kiln__shape_where(ctx, "Node[%u]", i);
                kiln__shape_warn(ctx, KILN_SEVERITY_ERROR, "W8", n->offset, "GeometryIndex",
                                 "reference %u to geometry %u (of %u) dropped", k, gi, ctx->geometry_count);
                continue;
            }
            if (n->lod || ctx->geometries[gi].dropped) continue; /* LOD > 0: listed with the node's extras */
            int made;
            TRY(kiln__build_mesh(ctx, i, gi, &model->meshes[model->mesh_count], &made));
            model->mesh_count += (uint32_t)made;
        }
    }
    for (uint32_t gi = 0; gi < ctx->geometry_count; gi++)
        if (!ctx->geometries[gi].references) {
            kiln__shape_where(ctx, "Geometry[%u]", gi);
            kiln__shape_warn(ctx, KILN_SEVERITY_ERROR, "W8", ctx->geometries[gi].offset, NULL,
                             "no node references geometry %u; not imported", gi);
        }
    return KILN_OK;
}
