/* Mesh baking (Cast reference C.2-C.4): typed view -> float streams -> skin -> valid faces ->
 * meshoptimizer -> optional quantisation -> kiln__mesh.
 *
 * Vertex data is kept as separate streams (one per attribute) from the start, so every
 * reordering step is "apply this remap to every stream" and the stream list is the output.
 */
#include <math.h>
#include <meshoptimizer.h>
#include <string.h>

#include "bake_geom.h"
#include "util.h"
#include "bake_report.h"
#include "ds.h"

/* POSITION, NORMAL, TANGENT, the UV and colour layers, JOINTS, WEIGHTS. */
#define KILN__MAX_VERTEX_STREAMS (3u + 2u * KILN_SOURCE_MAX_LAYERS + 2u)
#define KILN__OVERDRAW_THRESHOLD 1.05f /* vertex cache efficiency traded for less overdraw */

/* ---- streams ------------------------------------------------------------------------------ */

kiln_result kiln__stream_alloc(const kiln_allocator *a, kiln__stream *s, uint32_t semantic, uint32_t format,
                               uint32_t set, uint32_t components, uint32_t count, uint32_t stride)
{
    memset(s, 0, sizeof *s);
    size_t bytes = ((size_t)count * stride + 3u) & ~(size_t)3u;
    s->data = kiln__realloc(a, NULL, bytes ? bytes : 4u);
    if (!s->data) return KILN_ERR_OUT_OF_MEMORY;
    memset(s->data, 0, bytes);
    s->desc.semantic = semantic;
    s->desc.format = format;
    s->desc.set = set;
    s->desc.components = components;
    s->desc.count = count;
    s->desc.stride = stride;
    return KILN_OK;
}

void kiln__stream_free(const kiln_allocator *a, kiln__stream *s)
{
    kiln__free(a, s->data);
    memset(s, 0, sizeof *s);
}

static uint64_t zero_nonfinite(float *v, size_t n)
{
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i])) {
            v[i] = 0.0f;
            bad++;
        }
    }
    return bad;
}

kiln_result kiln__stream_copy_f32(const kiln_allocator *a, const float *src, uint32_t count, uint32_t semantic,
                                  uint32_t set, uint32_t format, uint32_t comps, kiln__stream *out,
                                  uint64_t *nonfinite)
{
    kiln_result r = kiln__stream_alloc(a, out, semantic, format, set, comps, count, comps * (uint32_t)sizeof(float));
    if (r != KILN_OK) return r;
    if (count) memcpy(out->data, src, (size_t)count * comps * sizeof(float));
    *nonfinite += zero_nonfinite(out->data, (size_t)count * comps);
    return KILN_OK;
}

/* ---- the mesh under construction -------------------------------------------------------------- */

typedef struct mesh_build {
    const kiln__bake_ctx *ctx;
    const kiln_source_mesh *cm;
    uint32_t        index;          /* among the model's meshes, for the default name */
    kiln__stream    vs[KILN__MAX_VERTEX_STREAMS]; /* vertex streams in output order */
    uint32_t        vs_count;
    uint32_t        vertex_count;
    uint32_t       *indices;
    uint32_t        index_count;
    uint32_t        uv_layers, color_layers, influences;
    uint64_t        nonfinite;
    kiln__skin_counts skin;
    const uint32_t *keys;           /* optional merge keys, one per Cast vertex */
    uint32_t       *vertex_map;     /* optional: Cast vertex -> current vertex (KILN_BLOB_NONE: gone) */
    uint32_t        cast_vertex_count;
} mesh_build;

static const kiln_allocator *alloc_of(const mesh_build *b) { return b->ctx->allocator; }

static void build_free(mesh_build *b)
{
    for (uint32_t i = 0; i < b->vs_count; i++) kiln__stream_free(alloc_of(b), &b->vs[i]);
    kiln__free(alloc_of(b), b->indices);
    b->vs_count = 0;
    b->indices = NULL;
}

/* A per-vertex array is usable when present (the source layer holds vertex_count elements). */
static int per_vertex(const mesh_build *b, const void *arr)
{
    return arr != NULL && b->vertex_count != 0;
}

static kiln_result add_f32(mesh_build *b, const float *src, uint32_t semantic, uint32_t set, uint32_t format,
                           uint32_t comps)
{
    kiln__stream *s = &b->vs[b->vs_count];
    kiln_result r = kiln__stream_copy_f32(alloc_of(b), src, b->vertex_count, semantic, set, format, comps, s,
                                          &b->nonfinite);
    if (r == KILN_OK) b->vs_count++;
    return r;
}

/* ---- faces -------------------------------------------------------------------------------- */

typedef struct face_counts {
    uint32_t bad_index, degenerate;
} face_counts;

/* Reads the triangle list and keeps the faces whose three indices are distinct vertices.
 * A face with an index out of range counts as bad even when it is also degenerate, as the
 * accessor counts them. */
static kiln_result read_faces(mesh_build *b, face_counts *fc)
{
    uint32_t n = b->cm->face_count * 3u, kept = 0;
    b->indices = kiln__realloc(alloc_of(b), NULL, (n ? n : 1u) * sizeof *b->indices);
    if (!b->indices) return KILN_ERR_OUT_OF_MEMORY;
    if (n) memcpy(b->indices, b->cm->faces, (size_t)n * sizeof *b->indices);
    uint32_t vc = b->vertex_count, *f = b->indices;
    for (uint32_t i = 0; i < n; i += 3) {
        uint32_t x = f[i], y = f[i + 1], z = f[i + 2];
        if (x >= vc || y >= vc || z >= vc) fc->bad_index++;
        else if (x == y || y == z || x == z) fc->degenerate++;
        else {
            f[kept] = x;
            f[kept + 1] = y;
            f[kept + 2] = z;
            kept += 3;
        }
    }
    b->index_count = kept;
    return KILN_OK;
}

/* The accessor has already reported both kinds of faces (with their counts); only the
 * statistics are kept here, so a dropped face is never reported twice. */
static void count_faces(const mesh_build *b, const face_counts *fc)
{
    b->ctx->stats->bad_index_faces_dropped += fc->bad_index;
    b->ctx->stats->degenerate_faces_dropped += fc->degenerate;
}

/* ---- attributes ----------------------------------------------------------------------------- */

/* Packed colours (R in bits 0-7) become bytes R, G, B, A whatever the host byte order; with
 * `linear` they are decoded from sRGB to F32x4. */
static void unpack_colors(const uint32_t *src, uint32_t count, void *dst, int linear)
{
    for (uint32_t first = 0; first < count; first += 256) {
        uint32_t n = count - first < 256 ? count - first : 256;
        const uint32_t *tmp = src + first;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t v = tmp[i];
            if (linear) {
                float *o = (float *)dst + (size_t)(first + i) * 4;
                for (int c = 0; c < 3; c++) o[c] = kiln__srgb_to_linear((float)((v >> (8 * c)) & 0xFFu) / 255.0f);
                o[3] = (float)(v >> 24) / 255.0f;
            } else {
                uint8_t *o = (uint8_t *)dst + (size_t)(first + i) * 4;
                for (int c = 0; c < 4; c++) o[c] = (uint8_t)(v >> (8 * c));
            }
        }
    }
}

static kiln_result add_color(mesh_build *b, const kiln_source_color_layer *src, uint32_t set)
{
    int linear = (b->ctx->options->flags & KILN_BAKE_SRGB_VERTEX_COLORS) != 0;
    uint32_t count = b->vertex_count;
    if (src->rgba) {
        kiln_result r = add_f32(b, src->rgba, KILN_ATTR_COLOR, set, KILN_FORMAT_F32x4, 4);
        if (r != KILN_OK || !linear) return r;
        float *c = b->vs[b->vs_count - 1].data;
        for (size_t i = 0; i < (size_t)count * 4; i++)
            if (i % 4 != 3) c[i] = kiln__srgb_to_linear(c[i]);
        return KILN_OK;
    }
    kiln__stream *s = &b->vs[b->vs_count];
    kiln_result r = kiln__stream_alloc(alloc_of(b), s, KILN_ATTR_COLOR, linear ? KILN_FORMAT_F32x4 : KILN_FORMAT_U8x4_UNORM,
                                       set, 4, count, linear ? 16u : 4u);
    if (r != KILN_OK) return r;
    unpack_colors(src->rgba8, count, s->data, linear);
    b->vs_count++;
    return KILN_OK;
}

/* Layers that were dropped leave no gap: `set` numbers the stored layers densely. */
static kiln_result read_attributes(mesh_build *b)
{
    const kiln_source_mesh *m = b->cm;
    kiln_result r = add_f32(b, m->positions, KILN_ATTR_POSITION, 0, KILN_FORMAT_F32x3, 3);
    if (r == KILN_OK && per_vertex(b, m->normals)) r = add_f32(b, m->normals, KILN_ATTR_NORMAL, 0, KILN_FORMAT_F32x3, 3);
    if (r == KILN_OK && per_vertex(b, m->tangents))
        r = add_f32(b, m->tangents, KILN_ATTR_TANGENT, 0, KILN_FORMAT_F32x3, 3);
    for (uint32_t l = 0; r == KILN_OK && l < m->uv_layer_count && l < KILN_SOURCE_MAX_LAYERS; l++)
        if (per_vertex(b, m->uv[l])) r = add_f32(b, m->uv[l], KILN_ATTR_TEXCOORD, b->uv_layers++, KILN_FORMAT_F32x2, 2);
    for (uint32_t l = 0; r == KILN_OK && l < m->color_layer_count && l < KILN_SOURCE_MAX_LAYERS; l++)
        if (per_vertex(b, m->color[l].rgba ? (const void *)m->color[l].rgba : (const void *)m->color[l].rgba8))
            r = add_color(b, &m->color[l], b->color_layers++);
    if (r == KILN_OK && b->nonfinite)
        kiln__bake_report(&b->ctx->sink, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING, &m->loc, NULL,
                          KILN_NO_OFFSET, "%llu non-finite vertex attribute values set to 0",
                          (unsigned long long)b->nonfinite);
    return r;
}

static void report_skin(const mesh_build *b)
{
    const kiln__skin_counts *c = &b->skin;
    b->ctx->stats->influences_dropped += c->bad_bone + c->bad_weight + c->pruned;
    /* Pruning to max_influences is what the options asked for; only invalid input is reported. */
    if (!c->bad_bone && !c->bad_weight) return;
    kiln__bake_report(&b->ctx->sink, c->bad_bone ? KILN_ERR_CAST_INDEX_RANGE : KILN_ERR_CAST_BAD_VALUE,
                      KILN_SEVERITY_ERROR, &b->cm->loc, c->bad_bone ? "wb" : "wv", KILN_NO_OFFSET,
                      "dropped %llu influences with a bone index >= the bone count and %llu with a NaN, "
                      "infinite or negative weight",
                      (unsigned long long)c->bad_bone, (unsigned long long)c->bad_weight);
}

static kiln_result read_skin(mesh_build *b, const kiln__skeleton *skeleton)
{
    if (b->cm->max_influence == 0) return KILN_OK;
    if (!skeleton) {
        kiln__bake_report(&b->ctx->sink, KILN_ERR_NOT_FOUND, KILN_SEVERITY_WARNING, &b->cm->loc, "mi",
                          KILN_NO_OFFSET, "skin weights ignored: the model has no skeleton");
        return KILN_OK;
    }
    kiln__stream *j = &b->vs[b->vs_count], *w = &b->vs[b->vs_count + 1];
    kiln_result r = kiln__bake_skin(alloc_of(b), b->cm, skeleton, b->ctx->options->max_influences, j, w,
                                    &b->influences, &b->skin);
    if (r != KILN_OK) return r;
    if (b->influences) b->vs_count += 2;
    report_skin(b);
    return KILN_OK;
}

/* ---- meshoptimizer ------------------------------------------------------------------------- */

/* Applies `remap` (old vertex -> new, ~0u = unused) to every vertex stream, and to the Cast ->
 * baked vertex map when one is kept (composing the remaps is what tells a later stage where
 * each authored vertex ended up). */
static kiln_result remap_streams(mesh_build *b, const unsigned int *remap, uint32_t new_count)
{
    for (uint32_t i = 0; b->vertex_map && i < b->cast_vertex_count; i++) {
        uint32_t v = b->vertex_map[i];
        b->vertex_map[i] = v == KILN_BLOB_NONE || remap[v] == ~0u ? KILN_BLOB_NONE : (uint32_t)remap[v];
    }
    for (uint32_t i = 0; i < b->vs_count; i++) {
        kiln__stream *s = &b->vs[i], n;
        kiln_result r = kiln__stream_alloc(alloc_of(b), &n, s->desc.semantic, s->desc.format, s->desc.set,
                                           s->desc.components, new_count, s->desc.stride);
        if (r != KILN_OK) return r;
        n.desc = s->desc;
        n.desc.count = new_count;
        meshopt_remapVertexBuffer(n.data, s->data, b->vertex_count, s->desc.stride, remap);
        kiln__free(alloc_of(b), s->data);
        *s = n;
    }
    b->vertex_count = new_count;
    return KILN_OK;
}

/* Merges vertices that are identical in every stream (bit for bit), then orders triangles for
 * the post-transform cache and overdraw, then vertices for fetch locality. Merge keys, when
 * given, take part in the comparison as one more stream that is not output: vertices that the
 * streams cannot tell apart but a later stage must (blend shapes moving them differently) are
 * kept apart. */
static kiln_result optimize(mesh_build *b)
{
    struct meshopt_Stream ms[KILN__MAX_VERTEX_STREAMS + 1];
    uint32_t ms_count = b->vs_count;
    for (uint32_t i = 0; i < b->vs_count; i++) {
        ms[i].data = b->vs[i].data;
        ms[i].size = ms[i].stride = b->vs[i].desc.stride;
    }
    if (b->keys) {
        ms[ms_count].data = b->keys;
        ms[ms_count].size = ms[ms_count].stride = sizeof *b->keys;
        ms_count++;
    }
    unsigned int *remap = kiln__realloc(alloc_of(b), NULL, (size_t)b->vertex_count * sizeof *remap);
    if (!remap) return KILN_ERR_OUT_OF_MEMORY;
    unsigned int *idx = b->indices;
    size_t ic = b->index_count;

    size_t unique = meshopt_generateVertexRemapMulti(remap, idx, ic, b->vertex_count, ms, ms_count);
    meshopt_remapIndexBuffer(idx, idx, ic, remap);
    kiln_result r = remap_streams(b, remap, (uint32_t)unique);
    if (r == KILN_OK) {
        meshopt_optimizeVertexCache(idx, idx, ic, unique);
        meshopt_optimizeOverdraw(idx, idx, ic, b->vs[0].data, unique, 3 * sizeof(float), KILN__OVERDRAW_THRESHOLD);
        size_t used = meshopt_optimizeVertexFetchRemap(remap, idx, ic, unique);
        meshopt_remapIndexBuffer(idx, idx, ic, remap);
        r = remap_streams(b, remap, (uint32_t)used);
    }
    kiln__free(alloc_of(b), remap);
    return r;
}

/* ---- quantisation -------------------------------------------------------------------------- */

static kiln_result quantize(mesh_build *b)
{
    uint32_t flags = b->ctx->options->flags;
    for (uint32_t i = 0; i < b->vs_count; i++) {
        kiln__stream *s = &b->vs[i];
        kiln_result r = KILN_OK;
        switch (s->desc.semantic) {
        case KILN_ATTR_POSITION:
            if (flags & KILN_BAKE_QUANTIZE_POSITIONS) r = kiln__quantize_positions(alloc_of(b), s);
            break;
        case KILN_ATTR_NORMAL:
        case KILN_ATTR_TANGENT:
            if (flags & KILN_BAKE_QUANTIZE_NORMALS) r = kiln__quantize_octahedral(alloc_of(b), s);
            break;
        case KILN_ATTR_TEXCOORD:
            if (flags & KILN_BAKE_QUANTIZE_UVS) r = kiln__quantize_uvs(alloc_of(b), s);
            break;
        default:
            break;
        }
        /* A range that overflows float cannot be encoded; that stream stays lossless. */
        if (r == KILN_ERR_LIMIT)
            kiln__bake_report(&b->ctx->sink, r, KILN_SEVERITY_WARNING, &b->cm->loc,
                              s->desc.semantic == KILN_ATTR_POSITION ? "vp" : "u", KILN_NO_OFFSET,
                              "%s %u kept as float: its range is too large to quantise",
                              s->desc.semantic == KILN_ATTR_POSITION ? "positions" : "UV layer", s->desc.set);
        else if (r != KILN_OK) return r;
    }
    return KILN_OK;
}

/* ---- output --------------------------------------------------------------------------------- */

/* u16 indices when every vertex fits (65535 vertices at most, so the all-ones restart value
 * never occurs). The payload is padded to 4 bytes. */
static kiln_result make_index_stream(mesh_build *b, kiln__stream *s)
{
    int small = b->vertex_count <= 65535u;
    kiln_result r = kiln__stream_alloc(alloc_of(b), s, KILN_ATTR_INDICES, small ? KILN_FORMAT_U16x1 : KILN_FORMAT_U32x1,
                                       0, 1, b->index_count, small ? 2u : 4u);
    if (r != KILN_OK) return r;
    if (small) {
        uint16_t *d = s->data;
        for (uint32_t i = 0; i < b->index_count; i++) d[i] = (uint16_t)b->indices[i];
    } else {
        memcpy(s->data, b->indices, (size_t)b->index_count * sizeof(uint32_t));
    }
    return KILN_OK;
}

/* Moves the finished streams into *out; the build keeps nothing afterwards. */
static kiln_result finish(mesh_build *b, kiln__mesh *out)
{
    const kiln_allocator *a = alloc_of(b);
    out->name = b->cm->name ? kiln__strdup(a, b->cm->name) : kiln__strfmt(a, "mesh%u", b->index);
    out->streams = kiln__realloc(a, NULL, (size_t)(b->vs_count + 1) * sizeof *out->streams);
    if (!out->name || !out->streams) return KILN_ERR_OUT_OF_MEMORY;
    kiln_result r = make_index_stream(b, &out->streams[b->vs_count]);
    if (r != KILN_OK) return r;
    memcpy(out->streams, b->vs, b->vs_count * sizeof *out->streams);
    out->stream_count = b->vs_count + 1;
    b->vs_count = 0;

    kiln_blob_mesh *rec = &out->rec;
    /* name, model and first_stream are stage 2's; material and skeleton are linked there too. */
    rec->material = rec->skeleton = KILN_BLOB_NONE;
    rec->stream_count = out->stream_count;
    rec->vertex_count = b->vertex_count;
    rec->index_count = b->index_count;
    rec->influences = b->influences;
    rec->skinning = b->cm->skinning == KILN_SOURCE_SKIN_DUAL_QUAT ? KILN_SKIN_DUAL_QUAT : KILN_SKIN_LINEAR;
    rec->uv_layers = b->uv_layers;
    rec->color_layers = b->color_layers;
    out->material = KILN_BLOB_NONE;
    out->skinned = b->influences != 0;
    out->input_bytes = b->cm->loc.size;
    return KILN_OK;
}

static kiln_result bake(mesh_build *b, const kiln__skeleton *skeleton, kiln__mesh *out, int want_map)
{
    const kiln__bake_ctx *ctx = b->ctx;
    kiln_result r;
    b->vertex_count = b->cm->vertex_count;
    if (!b->vertex_count || !per_vertex(b, b->cm->positions)) return KILN_ERR_CAST_EMPTY;
    if (b->cast_vertex_count != b->vertex_count) b->keys = NULL; /* not this mesh's: ignored */
    b->cast_vertex_count = b->vertex_count;
    if (want_map) {
        b->vertex_map = kiln__realloc(alloc_of(b), NULL, (size_t)b->vertex_count * sizeof *b->vertex_map);
        if (!b->vertex_map) return KILN_ERR_OUT_OF_MEMORY;
        for (uint32_t i = 0; i < b->vertex_count; i++) b->vertex_map[i] = i;
    }

    face_counts fc = {0, 0};
    r = read_faces(b, &fc);
    if (r != KILN_OK) return r;
    ctx->stats->vertices_in += b->vertex_count;
    ctx->stats->triangles_in += b->cm->face_count;
    count_faces(b, &fc);
    if (!b->index_count) return KILN_ERR_CAST_EMPTY;

    r = read_attributes(b);
    if (r == KILN_OK) r = read_skin(b, skeleton);
    if (r == KILN_OK && !(ctx->options->flags & KILN_BAKE_NO_OPTIMIZE)) r = optimize(b);
    if (r != KILN_OK) return r;
    kiln__bounds_f32(b->vs[0].data, b->vertex_count, 3, out->rec.bounds_min, out->rec.bounds_max);
    r = quantize(b);
    if (r == KILN_OK) r = finish(b, out);
    if (r != KILN_OK) return r;
    ctx->stats->vertices_out += b->vertex_count;
    ctx->stats->triangles_out += b->index_count / 3;
    return KILN_OK;
}

kiln_result kiln__bake_mesh(const kiln__bake_ctx *ctx, const kiln_source_mesh *mesh, uint32_t index,
                            const kiln__skeleton *skeleton, kiln__mesh *out)
{
    return kiln__bake_mesh_keyed(ctx, mesh, index, skeleton, NULL, 0, NULL, out);
}

kiln_result kiln__bake_mesh_keyed(const kiln__bake_ctx *ctx, const kiln_source_mesh *mesh, uint32_t index,
                                  const kiln__skeleton *skeleton, const uint32_t *keys, uint32_t key_count,
                                  uint32_t **vertex_map, kiln__mesh *out)
{
    memset(out, 0, sizeof *out);
    if (vertex_map) *vertex_map = NULL;
    mesh_build b;
    memset(&b, 0, sizeof b);
    b.ctx = ctx;
    b.cm = mesh;
    b.index = index;
    b.keys = keys;
    b.cast_vertex_count = key_count;
    kiln_result r = bake(&b, skeleton, out, vertex_map != NULL);
    build_free(&b);
    if (r != KILN_OK) {
        kiln__mesh_free(ctx->allocator, out);
        kiln__free(ctx->allocator, b.vertex_map);
    } else if (vertex_map) {
        *vertex_map = b.vertex_map;
    }
    return r;
}

void kiln__mesh_free(const kiln_allocator *a, kiln__mesh *m)
{
    if (!m) return;
    for (uint32_t i = 0; i < m->stream_count; i++) kiln__stream_free(a, &m->streams[i]);
    kiln__free(a, m->streams);
    kiln__free(a, m->name);
    memset(m, 0, sizeof *m);
}
