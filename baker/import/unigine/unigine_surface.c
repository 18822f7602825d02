/* Unigine surface geometry (spec 1.5, 1.6, 3, 5.1, 5.3): morph targets, weights, UV sets,
 * colours and the two index buffers, flattened to one Kiln mesh.
 *
 * Each corner has a coordinate index c (position, weights, morph positions) and a triangle
 * index t (normal, UVs, colour); the Kiln vertex is the pair (c, t), numbered in order of
 * first appearance over the kept corners (3.1). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "unigine_internal.h"

typedef struct kiln__ug_target {
    uint32_t    vertex_count, tangent_count;
    size_t      positions, tangents;  /* file offsets */
} kiln__ug_target;

typedef struct kiln__ug_geom {
    uint32_t         nc, t;            /* coordinate / triangle vertex counts */
    kiln__ug_target *targets;
    uint32_t         weight_count;
    uint64_t        *weight_at;        /* per coordinate vertex: its weight record */
    uint32_t         uv_count[2], color_count;
    size_t           uv_at[2], color_at;
    uint32_t         index_count;
    unsigned         cw, tw;           /* index widths */
    size_t           ci_at, ti_at;
} kiln__ug_geom;

static unsigned kiln__ug_width(uint32_t count)
{
    return count < 256u ? 1u : count < 65536u ? 2u : 4u;
}

/* Index k of a buffer of width w; negative i32 values come back >= 2^31 (out of range). */
static uint32_t kiln__ug_index(const kiln__ug *ctx, size_t at, unsigned w, uint32_t k)
{
    if (w == 1) return ctx->data[at + k];
    if (w == 2) return kiln__ug_u16_at(ctx, at + (size_t)k * 2u);
    return (uint32_t)kiln__ug_i32_at(ctx, at + (size_t)k * 4u);
}

/* A raw i32 count at the cursor: V3 when cut, V4 when negative. */
static kiln_result kiln__ug_raw_count(kiln__ug *ctx, const char *what, uint32_t *out)
{
    kiln_result r = kiln__ug_need(ctx, 4, what);
    if (r != KILN_OK) return r;
    int32_t v = kiln__ug_i32_at(ctx, ctx->pos);
    if (v < 0) return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V4", ctx->pos, "%s is negative (%d)", what, v);
    ctx->pos += 4;
    *out = (uint32_t)v;
    return KILN_OK;
}

/* V9: `count` elements of `comps` floats at `at`, all finite. */
static kiln_result kiln__ug_finite_floats(kiln__ug *ctx, size_t at, uint64_t count, unsigned comps, const char *what)
{
    for (uint64_t i = 0; i < count * comps; i++)
        if (!isfinite(kiln__ug_f32_at(ctx, at + (size_t)i * 4u)))
            return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V9", at + (size_t)i * 4u,
                                 "%s %llu component %u is not finite", what, (unsigned long long)(i / comps),
                                 (unsigned)(i % comps));
    return KILN_OK;
}

static kiln_result kiln__ug_read_targets(kiln__ug *ctx, const kiln__ug_surface_header *sh, uint32_t si, kiln__ug_geom *g)
{
    for (uint32_t k = 0; k < sh->target_count; k++) {
        kiln__ug_target *tg = &g->targets[k];
        kiln__ug_at(ctx, "surface[%u]/target[%u]", si, k);
        uint64_t at = ctx->pos;
        kiln_result r = kiln__ug_raw_count(ctx, "vertex count", &tg->vertex_count);
        if (r != KILN_OK) return r;
        if (k > 0 && tg->vertex_count != g->nc)
            return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V13", at,
                                 "morph target '%s' has %u vertices, target 0 has %u", sh->target_names[k],
                                 tg->vertex_count, g->nc);
        if (k == 0) g->nc = tg->vertex_count;
        kiln__ug_at(ctx, "surface[%u]/target[%u]/positions", si, k);
        r = kiln__ug_array(ctx, "vertices", tg->vertex_count, 12, &tg->positions);
        if (r == KILN_OK) r = kiln__ug_finite_floats(ctx, tg->positions, tg->vertex_count, 3, "position");
        if (r != KILN_OK) return r;
        kiln__ug_at(ctx, "surface[%u]/target[%u]/tangents", si, k);
        r = kiln__ug_count(ctx, "tangent count", 7, &tg->tangent_count);
        if (r == KILN_OK) r = kiln__ug_array(ctx, "tangent records", tg->tangent_count, 7, &tg->tangents);
        if (r != KILN_OK) return r;
    }
    return KILN_OK;
}

/* Weight records (5.3): V13 count, V16 influence count and bones; V21 zero sums warn. */
static kiln_result kiln__ug_read_weights(kiln__ug *ctx, const kiln__ug_file *f, uint32_t si, kiln__ug_geom *g)
{
    kiln__ug_at(ctx, "surface[%u]/weights", si);
    uint64_t at = ctx->pos;
    kiln_result r = kiln__ug_count(ctx, "weight count", 1, &g->weight_count);
    if (r != KILN_OK) return r;
    if (g->weight_count != 0 && g->weight_count != g->nc)
        return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V13", at,
                             "weight count %u is neither 0 nor the %u coordinate vertices", g->weight_count, g->nc);
    if (!g->weight_count) return KILN_OK;
    g->weight_at = kiln__ug_tmp(ctx, g->weight_count, sizeof *g->weight_at);
    if (!g->weight_at) return kiln__ug_oom(ctx);
    uint32_t zero = 0;
    uint64_t first_zero = 0;
    for (uint32_t v = 0; v < g->weight_count; v++) {
        g->weight_at[v] = ctx->pos;
        uint64_t vat = ctx->pos;
        uint8_t n;
        r = kiln__ug_u8(ctx, "influence count", &n);
        if (r != KILN_OK) return r;
        if (n > 4)
            return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V16", vat, "vertex %u lists %u influences (at most 4)",
                                 v, n);
        r = kiln__ug_need(ctx, (uint64_t)n * 4u, "influences");
        if (r != KILN_OK) return r;
        uint32_t sum = 0;
        for (uint32_t i = 0; i < n; i++) {
            size_t o = ctx->pos + (size_t)i * 4u;
            int16_t bone = kiln__ug_i16_at(ctx, o);
            if (bone < 0 || (uint32_t)bone >= f->bone_count)
                return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_REFERENCE, "V16", o,
                                     "vertex %u influence %u names bone %d (%u bones)", v, i, bone, f->bone_count);
            sum += kiln__ug_u16_at(ctx, o + 2u);
        }
        ctx->pos += (size_t)n * 4u;
        if (sum == 0 && zero++ == 0) first_zero = vat;
    }
    if (zero)
        kiln__ug_warn(ctx, "V21", first_zero, "%u vertex(es) with weights summing to 0 (first: byte %llu) are unskinned",
                      zero, (unsigned long long)first_zero);
    return KILN_OK;
}

static kiln_result kiln__ug_read_layers(kiln__ug *ctx, uint32_t si, kiln__ug_geom *g)
{
    static const char *const names[2] = {"uv0", "uv1"};
    for (int l = 0; l < 2; l++) {
        kiln__ug_at(ctx, "surface[%u]/%s", si, names[l]);
        kiln_result r = kiln__ug_count(ctx, "UV count", 8, &g->uv_count[l]);
        if (r == KILN_OK) r = kiln__ug_array(ctx, "UVs", g->uv_count[l], 8, &g->uv_at[l]);
        if (r == KILN_OK) r = kiln__ug_finite_floats(ctx, g->uv_at[l], g->uv_count[l], 2, "UV");
        if (r != KILN_OK) return r;
    }
    kiln__ug_at(ctx, "surface[%u]/colors", si);
    kiln_result r = kiln__ug_count(ctx, "colour count", 4, &g->color_count);
    if (r == KILN_OK) r = kiln__ug_array(ctx, "colours", g->color_count, 4, &g->color_at);
    if (r != KILN_OK) return r;

    /* T (1.6): the triangle vertex count; every non-empty per-triangle-vertex array has T. */
    uint32_t tc = g->targets ? g->targets[0].tangent_count : 0;
    uint32_t counts[4] = {tc, g->uv_count[0], g->uv_count[1], g->color_count};
    static const char *const what[4] = {"tangent", "uv0", "uv1", "colour"};
    g->t = 0;
    for (int i = 0; i < 4; i++)
        if (counts[i] > g->t) g->t = counts[i];
    for (int i = 0; i < 4; i++)
        if (counts[i] != 0 && counts[i] != g->t) {
            kiln__ug_at(ctx, "surface[%u]", si);
            return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V13", ctx->pos,
                                 "%s count %u differs from the %u triangle vertices", what[i], counts[i], g->t);
        }
    return KILN_OK;
}

static kiln_result kiln__ug_read_indices(kiln__ug *ctx, uint32_t si, kiln__ug_geom *g)
{
    g->cw = kiln__ug_width(g->nc);
    g->tw = kiln__ug_width(g->t);
    kiln__ug_at(ctx, "surface[%u]/coordinate_indices", si);
    uint64_t at = ctx->pos;
    kiln_result r = kiln__ug_raw_count(ctx, "coordinate index count", &g->index_count);
    if (r != KILN_OK) return r;
    if (g->index_count % 3u)
        return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V14", at,
                             "coordinate index count %u is not a multiple of 3", g->index_count);
    r = kiln__ug_array(ctx, "coordinate indices", g->index_count, g->cw, &g->ci_at);
    if (r != KILN_OK) return r;
    for (uint32_t k = 0; k < g->index_count; k++) {
        uint32_t c = kiln__ug_index(ctx, g->ci_at, g->cw, k);
        if (c >= g->nc)
            return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_REFERENCE, "V15", g->ci_at + (size_t)k * g->cw,
                                 "coordinate index %u is %d (%u coordinate vertices)", k, (int32_t)c, g->nc);
    }
    kiln__ug_at(ctx, "surface[%u]/triangle_indices", si);
    at = ctx->pos;
    uint32_t nti = 0;
    r = kiln__ug_raw_count(ctx, "triangle index count", &nti);
    if (r != KILN_OK) return r;
    if (nti != g->index_count)
        return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V14", at,
                             "triangle index count %u differs from the coordinate index count %u", nti, g->index_count);
    r = kiln__ug_array(ctx, "triangle indices", nti, g->tw, &g->ti_at);
    if (r != KILN_OK) return r;
    if (g->t > 0)
        for (uint32_t k = 0; k < nti; k++) {
            uint32_t t = kiln__ug_index(ctx, g->ti_at, g->tw, k);
            if (t >= g->t)
                return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_REFERENCE, "V15", g->ti_at + (size_t)k * g->tw,
                                     "triangle index %u is %d (%u triangle vertices)", k, (int32_t)t, g->t);
        }
    return KILN_OK;
}

/* ---- building the mesh --------------------------------------------------------------------- */

static uint32_t kiln__ug_material(kiln__ug *ctx, kiln_source_model *model, kiln__ug_materials *mats, const char *name,
                                  uint64_t offset)
{
    uint32_t h = 2166136261u;
    for (const char *s = name; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    for (h &= mats->cap - 1;; h = (h + 1) & (mats->cap - 1)) {
        uint32_t slot = mats->slots[h];
        if (slot && strcmp(model->materials[slot - 1].name, name) == 0) return slot - 1;
        if (slot) continue;
        kiln_source_material *m = &model->materials[model->material_count];
        memset(m, 0, sizeof *m);
        m->loc.path = kiln__ug_path(ctx);
        m->loc.offset = offset;
        m->name = name;
        if (!m->loc.path) return KILN_SOURCE_NONE;
        mats->slots[h] = ++model->material_count;
        return model->material_count - 1;
    }
}

typedef struct kiln__ug_influence {
    uint32_t bone, order;
    uint64_t u;
} kiln__ug_influence;

/* Influences of coordinate vertex c: duplicates merged, zeros dropped, heaviest first (ties in
 * file order). Returns how many. */
static uint32_t kiln__ug_influences(const kiln__ug *ctx, const kiln__ug_geom *g, uint32_t c, kiln__ug_influence inf[4],
                                    uint64_t *sum)
{
    size_t at = (size_t)g->weight_at[c];
    uint32_t n = ctx->data[at], kept = 0;
    *sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t o = at + 1u + (size_t)i * 4u;
        uint32_t bone = (uint32_t)kiln__ug_i16_at(ctx, o);
        uint64_t u = kiln__ug_u16_at(ctx, o + 2u);
        *sum += u;
        uint32_t j = 0;
        while (j < kept && inf[j].bone != bone) j++;
        if (j == kept) inf[kept].bone = bone, inf[kept].order = kept, inf[kept].u = 0, kept++;
        inf[j].u += u;
    }
    uint32_t out = 0;
    for (uint32_t i = 0; i < kept; i++)
        if (inf[i].u) inf[out++] = inf[i];
    for (uint32_t i = 1; i < out; i++) /* insertion sort: stable, at most 4 */
        for (uint32_t j = i; j > 0 && inf[j].u > inf[j - 1].u; j--) {
            kiln__ug_influence tmp = inf[j];
            inf[j] = inf[j - 1];
            inf[j - 1] = tmp;
        }
    return out;
}

static void kiln__ug_normal(kiln__ug *ctx, const kiln__ug_geom *g, uint32_t t, float *n, float *sign, uint32_t *bad)
{
    size_t at = g->targets[0].tangents + (size_t)t * 7u;
    double v[3], len2 = 0.0;
    for (int c = 0; c < 3; c++) {
        float u = (float)kiln__ug_u16_at(ctx, at + (size_t)c * 2u);
        v[c] = (double)((u / 65535.0f) * 2.0f - 1.0f);
        len2 += v[c] * v[c];
    }
    if (len2 < 0.25) {
        n[0] = n[1] = 0.0f, n[2] = 1.0f;
        (*bad)++;
    } else {
        double inv = 1.0 / sqrt(len2);
        for (int c = 0; c < 3; c++) n[c] = (float)(v[c] * inv);
    }
    *sign = (int8_t)ctx->data[at + 6u] < 0 ? -1.0f : 1.0f;
}

typedef struct kiln__ug_build {
    uint32_t *corner_vertex;  /* kept corner -> unified vertex */
    uint32_t *vertex_c, *vertex_t;
    uint32_t  vertex_count, corner_count, degenerate;
    uint64_t *keys;           /* hash: (c << 32 | t) + 1, 0 = empty */
    uint32_t *values;
} kiln__ug_build;

static kiln_result kiln__ug_unify(kiln__ug *ctx, const kiln__ug_geom *g, kiln__ug_build *b)
{
    uint32_t tris = g->index_count / 3u;
    uint64_t cap = 16;
    while (cap < 2u * (uint64_t)g->index_count) cap *= 2;
    b->keys = kiln__ug_tmp(ctx, cap, sizeof *b->keys);
    b->values = kiln__ug_tmp(ctx, cap, sizeof *b->values);
    b->corner_vertex = kiln__ug_tmp(ctx, g->index_count, sizeof *b->corner_vertex);
    b->vertex_c = kiln__ug_tmp(ctx, g->index_count, sizeof *b->vertex_c);
    b->vertex_t = kiln__ug_tmp(ctx, g->index_count, sizeof *b->vertex_t);
    if (!b->keys || !b->values || !b->corner_vertex || !b->vertex_c || !b->vertex_t) return kiln__ug_oom(ctx);
    memset(b->keys, 0, (size_t)cap * sizeof *b->keys);
    uint64_t first_degenerate = 0;
    for (uint32_t tri = 0; tri < tris; tri++) {
        uint32_t c[3], t[3];
        for (int k = 0; k < 3; k++) {
            c[k] = kiln__ug_index(ctx, g->ci_at, g->cw, tri * 3u + (uint32_t)k);
            t[k] = g->t ? kiln__ug_index(ctx, g->ti_at, g->tw, tri * 3u + (uint32_t)k) : 0u;
        }
        if (c[0] == c[1] || c[1] == c[2] || c[0] == c[2]) {
            if (b->degenerate++ == 0) first_degenerate = g->ci_at + (size_t)tri * 3u * g->cw;
            continue;
        }
        for (int k = 0; k < 3; k++) {
            uint64_t key = ((uint64_t)c[k] << 32 | t[k]) + 1u;
            uint64_t h = (key * 0x9E3779B97F4A7C15ull) >> 20;
            for (h &= cap - 1; b->keys[h] && b->keys[h] != key; h = (h + 1) & (cap - 1)) {}
            if (!b->keys[h]) {
                b->keys[h] = key;
                b->values[h] = b->vertex_count;
                b->vertex_c[b->vertex_count] = c[k];
                b->vertex_t[b->vertex_count] = t[k];
                b->vertex_count++;
            }
            b->corner_vertex[b->corner_count++] = b->values[h];
        }
    }
    if (b->degenerate)
        kiln__ug_warn(ctx, "V22", first_degenerate, "%u degenerate triangle(s) dropped (first: byte %llu)",
                      b->degenerate, (unsigned long long)first_degenerate);
    return KILN_OK;
}

static kiln_result kiln__ug_fill_mesh(kiln__ug *ctx, const kiln__ug_geom *g, const kiln__ug_build *b,
                                      kiln_source_mesh *m, uint32_t *signs_negative)
{
    kiln_source_scene *sc = ctx->scene;
    uint32_t n = b->vertex_count;
    m->vertex_count = n;
    m->face_count = b->corner_count / 3u;
    float *pos = kiln_source_alloc(sc, (uint64_t)n * 3u, sizeof(float));
    uint32_t *faces = kiln_source_alloc(sc, b->corner_count, sizeof(uint32_t));
    if (!pos || !faces) return kiln__ug_oom(ctx);
    memcpy(faces, b->corner_vertex, (size_t)b->corner_count * sizeof *faces);
    for (uint32_t v = 0; v < n; v++)
        for (int c = 0; c < 3; c++)
            pos[v * 3u + (uint32_t)c] = kiln__ug_f32_at(ctx, g->targets[0].positions + (size_t)b->vertex_c[v] * 12u + (size_t)c * 4u);
    m->positions = pos;
    m->faces = faces;

    if (g->t && g->targets[0].tangent_count) {
        float *nrm = kiln_source_alloc(sc, (uint64_t)n * 3u, sizeof(float));
        float *sg = kiln_source_alloc(sc, n, sizeof(float));
        if (!nrm || !sg) return kiln__ug_oom(ctx);
        uint32_t bad = 0;
        for (uint32_t v = 0; v < n; v++) {
            kiln__ug_normal(ctx, g, b->vertex_t[v], &nrm[v * 3u], &sg[v], &bad);
            if (sg[v] < 0.0f) (*signs_negative)++;
        }
        if (bad)
            kiln__ug_warn(ctx, "V20", g->targets[0].tangents,
                          "%u normal(s) decode shorter than 0.5; (0, 0, 1) used", bad);
        m->normals = nrm;
        m->tangent_signs = sg;
    }
    for (int l = 0; l < 2; l++) {
        if (!g->uv_count[l]) continue;
        float *uv = kiln_source_alloc(sc, (uint64_t)n * 2u, sizeof(float));
        if (!uv) return kiln__ug_oom(ctx);
        for (uint32_t v = 0; v < n; v++)
            for (int c = 0; c < 2; c++)
                uv[v * 2u + (uint32_t)c] = kiln__ug_f32_at(ctx, g->uv_at[l] + (size_t)b->vertex_t[v] * 8u + (size_t)c * 4u);
        m->uv[l] = uv;
        m->uv_layer_count = (uint32_t)l + 1u;
    }
    if (g->color_count) {
        uint32_t *col = kiln_source_alloc(sc, n, sizeof(uint32_t));
        if (!col) return kiln__ug_oom(ctx);
        for (uint32_t v = 0; v < n; v++) {
            const uint8_t *p = ctx->data + g->color_at + (size_t)b->vertex_t[v] * 4u;
            col[v] = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        }
        m->color[0].rgba8 = col;
        m->color_layer_count = 1;
    }
    if (g->weight_count) {
        kiln__ug_influence inf[4];
        uint64_t sum;
        uint32_t mi = 0, unskinned = 0;
        for (uint32_t v = 0; v < n; v++) {
            uint32_t k = kiln__ug_influences(ctx, g, b->vertex_c[v], inf, &sum);
            if (k > mi) mi = k;
            if (!k) unskinned = 1;
        }
        /* One influence would read as rigid (weight 1): an unskinned vertex needs a zero slot. */
        if (unskinned && mi < 2) mi = 2;
        uint32_t *wb = kiln_source_alloc(sc, (uint64_t)n * mi, sizeof(uint32_t));
        float *wv = kiln_source_alloc(sc, (uint64_t)n * mi, sizeof(float));
        if (!wb || !wv) return kiln__ug_oom(ctx);
        for (uint32_t v = 0; v < n; v++) {
            uint32_t k = kiln__ug_influences(ctx, g, b->vertex_c[v], inf, &sum);
            for (uint32_t i = 0; i < k; i++) {
                wb[v * mi + i] = inf[i].bone;
                wv[v * mi + i] = (float)((double)inf[i].u / (double)sum);
            }
        }
        m->max_influence = mi;
        m->weight_bones = wb;
        m->weight_values = wv;
    }
    return KILN_OK;
}

static kiln_result kiln__ug_blend_shapes(kiln__ug *ctx, const kiln__ug_geom *g, const kiln__ug_build *b,
                                         const kiln__ug_surface_header *sh, uint32_t si, kiln_source_model *model)
{
    for (uint32_t k = 1; k < sh->target_count; k++) {
        kiln_source_blend_shape *bs = &model->blend_shapes[model->blend_shape_count];
        memset(bs, 0, sizeof *bs);
        kiln__ug_at(ctx, "surface[%u]/target[%u]", si, k);
        bs->loc.path = kiln__ug_path(ctx);
        bs->loc.offset = g->targets[k].positions;
        bs->name = sh->target_names[k];
        bs->mesh = model->mesh_count;
        bs->target_scale = 1.0f;
        bs->pair_count = b->vertex_count;
        uint32_t *idx = kiln_source_alloc(ctx->scene, b->vertex_count, sizeof(uint32_t));
        float *tg = kiln_source_alloc(ctx->scene, (uint64_t)b->vertex_count * 3u, sizeof(float));
        if (!bs->loc.path || !idx || !tg) return kiln__ug_oom(ctx);
        for (uint32_t v = 0; v < b->vertex_count; v++) {
            idx[v] = v;
            for (int c = 0; c < 3; c++)
                tg[v * 3u + (uint32_t)c] =
                    kiln__ug_f32_at(ctx, g->targets[k].positions + (size_t)b->vertex_c[v] * 12u + (size_t)c * 4u);
        }
        bs->indices = idx;
        bs->targets = tg;
        model->blend_shape_count++;
        if (g->targets[k].tangent_count) {
            char detail[96];
            snprintf(detail, sizeof detail, "%u tangent record(s) of the morph target dropped", g->targets[k].tangent_count);
            kiln__ug_at(ctx, "surface[%u]/target[%u]/tangents", si, k);
            kiln_result r = kiln__ug_extra(ctx, g->targets[k].tangents, "morph-tangents", sh->target_names[k], detail);
            if (r != KILN_OK) return r;
        }
    }
    return KILN_OK;
}

static kiln_result kiln__ug_emit(kiln__ug *ctx, const kiln__ug_geom *g, const kiln__ug_surface_header *sh, uint32_t si,
                                 uint64_t offset, kiln_source_model *model, kiln__ug_materials *mats)
{
    kiln__ug_build b;
    memset(&b, 0, sizeof b);
    kiln__ug_at(ctx, "surface[%u]", si);
    kiln_result r = g->index_count ? kiln__ug_unify(ctx, g, &b) : KILN_OK;
    char detail[256];
    uint32_t negative = 0;
    if (r == KILN_OK && b.corner_count) {
        kiln_source_mesh *m = &model->meshes[model->mesh_count];
        memset(m, 0, sizeof *m);
        kiln__ug_at(ctx, "surface[%u]", si);
        m->loc.path = kiln__ug_path(ctx);
        m->loc.offset = offset;
        m->loc.size = ctx->pos - offset;
        m->name = sh->name;
        m->material = kiln__ug_material(ctx, model, mats, sh->name, sh->offset);
        if (!m->loc.path || m->material == KILN_SOURCE_NONE) r = kiln__ug_oom(ctx);
        if (r == KILN_OK) r = kiln__ug_fill_mesh(ctx, g, &b, m, &negative);
        if (r == KILN_OK) r = kiln__ug_blend_shapes(ctx, g, &b, sh, si, model);
        if (r == KILN_OK) model->mesh_count++;
    }
    if (r == KILN_OK) {
        kiln__ug_at(ctx, "surface[%u]", si);
        snprintf(detail, sizeof detail,
                 "%u coordinate vertices (%u-byte indices), %u triangle vertices (%u-byte indices), %u of %u "
                 "triangles kept (%u degenerate), %u Kiln vertices%s",
                 g->nc, g->cw, g->t, g->tw, b.corner_count / 3u, g->index_count / 3u, b.degenerate, b.vertex_count,
                 b.corner_count ? "" : "; no kept triangle: no mesh");
        r = kiln__ug_extra(ctx, offset, "surface", sh->name, detail);
    }
    if (r == KILN_OK && b.corner_count && g->t && g->targets[0].tangent_count) {
        snprintf(detail, sizeof detail, "tangent-frame handedness: %u vertex(es) +1, %u vertex(es) -1",
                 b.vertex_count - negative, negative);
        kiln__ug_at(ctx, "surface[%u]/target[0]/tangents", si);
        r = kiln__ug_extra(ctx, g->targets[0].tangents, "tangent-signs", sh->name, detail);
    }
    if (r == KILN_OK && sh->target_count && sh->target_names[0][0]) {
        kiln__ug_at(ctx, "surface[%u]/target[0]", si);
        r = kiln__ug_extra(ctx, g->targets[0].positions, "morph-target-0", sh->target_names[0],
                           "base positions of the surface (the name is not used)");
    }
    kiln__ug_tmp_free(ctx, b.keys);
    kiln__ug_tmp_free(ctx, b.values);
    kiln__ug_tmp_free(ctx, b.corner_vertex);
    kiln__ug_tmp_free(ctx, b.vertex_c);
    kiln__ug_tmp_free(ctx, b.vertex_t);
    return r;
}

kiln_result kiln__ug_read_surface(kiln__ug *ctx, const kiln__ug_file *f, const kiln__ug_surface_header *sh,
                                  uint32_t index, kiln_source_model *model, kiln__ug_materials *mats)
{
    kiln__ug_geom g;
    memset(&g, 0, sizeof g);
    uint64_t offset = ctx->pos;
    g.targets = kiln__ug_tmp(ctx, sh->target_count, sizeof *g.targets);
    if (!g.targets) return kiln__ug_oom(ctx);
    memset(g.targets, 0, (size_t)(sh->target_count ? sh->target_count : 1) * sizeof *g.targets);
    kiln_result r = kiln__ug_read_targets(ctx, sh, index, &g);
    if (r == KILN_OK) r = kiln__ug_read_weights(ctx, f, index, &g);
    if (r == KILN_OK) r = kiln__ug_read_layers(ctx, index, &g);
    if (r == KILN_OK) r = kiln__ug_read_indices(ctx, index, &g);
    if (r == KILN_OK && sh->target_count) {
        r = kiln__ug_emit(ctx, &g, sh, index, offset, model, mats);
    } else if (r == KILN_OK) {
        kiln__ug_at(ctx, "surface[%u]", index);
        r = kiln__ug_extra(ctx, offset, "surface", sh->name, "no morph target: no mesh");
    }
    kiln__ug_tmp_free(ctx, g.targets);
    kiln__ug_tmp_free(ctx, g.weight_at);
    return r;
}
