/* Blend shapes (Cast reference C.5; F for the repairs): every BlendShape of a Model becomes
 * sparse position deltas on its base mesh, in the mesh's baked vertex order.
 *
 * For each mesh, before it is baked:
 *   1. the deltas d = vp[k] - base.vp[vi[k]] of every shape on it, against the Cast positions
 *      (non-finite ones read as 0, as the mesh bake reads them), pairs resolved (vi out of
 *      range or a non-finite target dropped, the last pair of a repeated vi kept), zero deltas
 *      dropped: a vertex not listed does not move;
 *   2. a merge key per vertex: 0 for vertices no shape moves, otherwise the rank of the
 *      vertex's exact tuple of (shape, delta bits) over all those shapes. Two vertices get the
 *      same key only when every shape moves them identically, so the mesh dedup, which
 *      compares the keys with the other streams, merges exactly the vertices that stay
 *      identical under any weights. Ranks come from a sort of the tuples (a total order on
 *      bytes), so the keys and hence the bake are deterministic;
 *   3. the mesh is baked with those keys and its Cast -> baked vertex map; each shape's deltas
 *      follow the map (vertices no face uses are gone with their deltas; merged vertices carry
 *      equal deltas, kept once) and are sorted by baked index.
 * Deltas stay float whatever the quantisation options: they are differences of the authored
 * positions, so base + delta reaches the authored target up to float rounding when positions
 * are lossless, and up to the position quantisation error when they are not.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bake_blend_shape.h"
#include "bake_geom.h"
#include "bake_report.h"
#include "ds.h"

/* ---- reading the shapes --------------------------------------------------------------------- */

kiln_result kiln__blend_shapes_begin(const kiln__bake_ctx *ctx, const kiln_source_blend_shape *shapes, uint32_t count,
                                     kiln__model_shapes *out)
{
    memset(out, 0, sizeof *out);
    if (!count) return KILN_OK;
    out->shapes = kiln__realloc(ctx->allocator, NULL, (size_t)count * sizeof *out->shapes);
    if (!out->shapes) return KILN_ERR_OUT_OF_MEMORY;
    memset(out->shapes, 0, (size_t)count * sizeof *out->shapes);
    for (uint32_t i = 0; i < count; i++) out->shapes[i].src = &shapes[i];
    out->count = count;
    return KILN_OK;
}

void kiln__blend_shapes_end(const kiln__bake_ctx *ctx, kiln__model_shapes *s, int report)
{
    for (uint32_t i = 0; report && i < s->count; i++) {
        const kiln__shape_src *src = &s->shapes[i];
        if (src->baked) continue;
        kiln__bake_report(&ctx->sink, KILN_ERR_CAST_UNRESOLVED, KILN_SEVERITY_ERROR, &src->src->loc, "b",
                          KILN_NO_OFFSET, "blend shape '%s' dropped: its base mesh was not baked",
                          src->src->name ? src->src->name : "");
    }
    kiln__free(ctx->allocator, s->shapes);
    memset(s, 0, sizeof *s);
}

/* ---- step 1: deltas against the Cast positions -------------------------------------------------- */

/* One nonzero delta of one shape, on a Cast vertex (then on a baked one). */
typedef struct kiln__delta {
    uint32_t vertex;
    float    d[3];
} kiln__delta;

/* The deltas of the shapes on one mesh, and the scratch to build them. */
typedef struct kiln__mesh_shapes {
    const kiln__bake_ctx *ctx;
    uint32_t              vertex_count;   /* Cast vertices */
    float                *base;           /* vertex_count x 3, non-finite read as 0 */
    uint32_t             *slot;           /* per Cast vertex: its entry in the shape being read */
    kiln__shape_src     **src;            /* the shapes on this mesh, file order */
    kiln__delta         **deltas;         /* per shape, in no particular order */
    uint32_t             *delta_count;
    uint32_t              count;          /* shapes */
} kiln__mesh_shapes;

static const kiln_allocator *kiln__alloc_of(const kiln__mesh_shapes *m) { return m->ctx->allocator; }

static void kiln__mesh_shapes_free(kiln__mesh_shapes *m)
{
    const kiln_allocator *a = kiln__alloc_of(m);
    for (uint32_t i = 0; m->deltas && i < m->count; i++) kiln__free(a, m->deltas[i]);
    kiln__free(a, m->deltas);
    kiln__free(a, m->delta_count);
    kiln__free(a, m->src);
    kiln__free(a, m->base);
    kiln__free(a, m->slot);
}

static int kiln__finite3(const float *v) { return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]); }

/* Step 1 for shape j: resolves its pairs against the base and keeps the nonzero deltas. */
static kiln_result kiln__read_deltas(kiln__mesh_shapes *m, uint32_t j)
{
    const kiln_allocator *a = kiln__alloc_of(m);
    kiln__shape_src *s = m->src[j];
    uint32_t n = s->src->pair_count;
    uint32_t *vi = kiln__realloc(a, NULL, ((size_t)n + 1) * sizeof *vi);
    float *vp = kiln__realloc(a, NULL, ((size_t)n + 1) * 3 * sizeof *vp);
    kiln__delta *out = kiln__realloc(a, NULL, ((size_t)n + 1) * sizeof *out);
    m->deltas[j] = out;
    if (!vi || !vp || !out) {
        kiln__free(a, vi);
        kiln__free(a, vp);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    if (n) {
        memcpy(vi, s->src->indices, (size_t)n * sizeof *vi);
        memcpy(vp, s->src->targets, (size_t)n * 3 * sizeof *vp);
    }
    uint32_t kept = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t v = vi[k];
        const float *t = vp + 3 * (size_t)k;
        if (v >= m->vertex_count) {
            s->out_of_range++;
            continue;
        }
        if (!kiln__finite3(t)) {
            s->nonfinite++;
            continue;
        }
        uint32_t e = m->slot[v];
        if (e == KILN_BLOB_NONE) {
            e = m->slot[v] = kept++;
            out[e].vertex = v;
        } else {
            s->duplicates++; /* F: the last pair wins */
        }
        for (int c = 0; c < 3; c++) out[e].d[c] = t[c] - m->base[3 * (size_t)v + c];
    }
    /* The slots go back to NONE for the next shape, and zero deltas (a vertex listed at its
     * own position, possibly by its last pair only) are dropped. */
    uint32_t nonzero = 0;
    for (uint32_t e = 0; e < kept; e++) {
        m->slot[out[e].vertex] = KILN_BLOB_NONE;
        if (out[e].d[0] != 0.0f || out[e].d[1] != 0.0f || out[e].d[2] != 0.0f) out[nonzero++] = out[e];
    }
    m->delta_count[j] = nonzero;
    kiln__free(a, vi);
    kiln__free(a, vp);
    return KILN_OK;
}

/* Collects the shapes whose base is `mesh_node` and reads the base positions. Returns KILN_OK
 * with m->count 0 when there are none or the mesh cannot be read (the mesh bake reports that). */
static kiln_result kiln__collect(kiln__mesh_shapes *m, const kiln_source_mesh *mesh, uint32_t mesh_index,
                                 kiln__model_shapes *shapes)
{
    const kiln_allocator *a = kiln__alloc_of(m);
    uint32_t on_mesh = 0;
    for (uint32_t i = 0; i < shapes->count; i++) on_mesh += shapes->shapes[i].src->mesh == mesh_index;
    if (!on_mesh || !mesh->vertex_count || !mesh->positions) return KILN_OK;
    uint32_t vc = m->vertex_count = mesh->vertex_count;
    m->src = kiln__realloc(a, NULL, on_mesh * sizeof *m->src);
    m->deltas = kiln__realloc(a, NULL, on_mesh * sizeof *m->deltas);
    m->delta_count = kiln__realloc(a, NULL, on_mesh * sizeof *m->delta_count);
    m->base = kiln__realloc(a, NULL, (size_t)vc * 3 * sizeof *m->base);
    m->slot = kiln__realloc(a, NULL, (size_t)vc * sizeof *m->slot);
    if (!m->src || !m->deltas || !m->delta_count || !m->base || !m->slot) return KILN_ERR_OUT_OF_MEMORY;
    memset(m->deltas, 0, on_mesh * sizeof *m->deltas);
    for (uint32_t i = 0; i < shapes->count; i++)
        if (shapes->shapes[i].src->mesh == mesh_index) m->src[m->count++] = &shapes->shapes[i];
    memcpy(m->base, mesh->positions, (size_t)vc * 3 * sizeof *m->base);
    for (size_t i = 0; i < (size_t)vc * 3; i++)
        if (!isfinite(m->base[i])) m->base[i] = 0.0f;
    memset(m->slot, 0xFF, (size_t)vc * sizeof *m->slot);
    for (uint32_t j = 0; j < m->count; j++) {
        kiln_result r = kiln__read_deltas(m, j);
        if (r != KILN_OK) return r;
    }
    return KILN_OK;
}

/* ---- step 2: merge keys ------------------------------------------------------------------------- */

/* One (shape, delta) of a vertex's tuple: 16 bytes without padding, compared as bytes. */
typedef struct kiln__tuple_entry {
    uint32_t shape;
    float    d[3];
} kiln__tuple_entry;

typedef struct kiln__tuple {
    const kiln__tuple_entry *e;
    uint32_t                 len, vertex;
} kiln__tuple;

/* A total order on tuples (length, then bytes): equal exactly when every shape moves the two
 * vertices by bit-identical deltas. */
static int kiln__cmp_tuple(const void *pa, const void *pb)
{
    const kiln__tuple *a = pa, *b = pb;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    return memcmp(a->e, b->e, (size_t)a->len * sizeof *a->e);
}

/* keys[v] (vertex_count entries): 0 for vertices no shape moves, else 1 + the rank of the
 * vertex's tuple among the distinct tuples. */
static kiln_result kiln__merge_keys(const kiln__mesh_shapes *m, uint32_t *keys)
{
    const kiln_allocator *a = kiln__alloc_of(m);
    const uint32_t vc = m->vertex_count;
    uint64_t total = 0;
    for (uint32_t j = 0; j < m->count; j++) total += m->delta_count[j];
    if (total > UINT32_MAX) return KILN_ERR_LIMIT;
    /* Tuples as one array grouped by vertex (counting sort); within a vertex, shape order. */
    uint32_t *first = kiln__realloc(a, NULL, ((size_t)vc + 1) * sizeof *first);
    kiln__tuple_entry *entries = kiln__realloc(a, NULL, ((size_t)total + 1) * sizeof *entries);
    kiln__tuple *tuples = kiln__realloc(a, NULL, ((size_t)total + 1) * sizeof *tuples);
    kiln_result r = KILN_ERR_OUT_OF_MEMORY;
    if (!first || !entries || !tuples) goto done;
    memset(first, 0, ((size_t)vc + 1) * sizeof *first);
    for (uint32_t j = 0; j < m->count; j++)
        for (uint32_t k = 0; k < m->delta_count[j]; k++) first[m->deltas[j][k].vertex + 1]++;
    for (uint32_t v = 0; v < vc; v++) first[v + 1] += first[v];
    uint32_t *fill = m->slot; /* all NONE between shapes: borrowed as the fill cursors */
    for (uint32_t v = 0; v < vc; v++) fill[v] = first[v];
    for (uint32_t j = 0; j < m->count; j++)
        for (uint32_t k = 0; k < m->delta_count[j]; k++) {
            const kiln__delta *d = &m->deltas[j][k];
            kiln__tuple_entry *e = &entries[fill[d->vertex]++];
            e->shape = j;
            memcpy(e->d, d->d, sizeof e->d);
        }
    memset(fill, 0xFF, (size_t)vc * sizeof *fill);

    uint32_t moved = 0;
    for (uint32_t v = 0; v < vc; v++) {
        keys[v] = 0;
        if (first[v + 1] == first[v]) continue;
        tuples[moved].e = &entries[first[v]];
        tuples[moved].len = first[v + 1] - first[v];
        tuples[moved].vertex = v;
        moved++;
    }
    qsort(tuples, moved, sizeof *tuples, kiln__cmp_tuple);
    uint32_t rank = 0;
    for (uint32_t i = 0; i < moved; i++) {
        if (i == 0 || kiln__cmp_tuple(&tuples[i - 1], &tuples[i]) != 0) rank++;
        keys[tuples[i].vertex] = rank;
    }
    r = KILN_OK;
done:
    kiln__free(a, first);
    kiln__free(a, entries);
    kiln__free(a, tuples);
    return r;
}

/* ---- step 3: into the baked order ---------------------------------------------------------------- */

static int kiln__cmp_delta(const void *pa, const void *pb)
{
    const kiln__delta *a = pa, *b = pb;
    return a->vertex < b->vertex ? -1 : a->vertex > b->vertex;
}

/* Shape j's deltas through the vertex map, appended to the unit as mesh `mesh_index`. */
static kiln_result kiln__emit_shape(kiln__mesh_shapes *m, uint32_t j, const uint32_t *map, kiln__bake_unit *u,
                                    uint32_t mesh_index)
{
    const kiln_allocator *a = kiln__alloc_of(m);
    kiln__delta *d = m->deltas[j];
    uint32_t n = 0;
    for (uint32_t k = 0; k < m->delta_count[j]; k++) {
        uint32_t v = map[d[k].vertex];
        if (v == KILN_BLOB_NONE) continue; /* a vertex no kept face uses: not in the mesh */
        d[n] = d[k];
        d[n++].vertex = v;
    }
    qsort(d, n, sizeof *d, kiln__cmp_delta);
    uint32_t distinct = 0;
    for (uint32_t k = 0; k < n; k++) /* merged vertices: equal deltas by construction */
        if (distinct == 0 || d[distinct - 1].vertex != d[k].vertex) d[distinct++] = d[k];

    kiln__blend_shape *bs = &u->blend_shapes[u->blend_shape_count];
    memset(bs, 0, sizeof *bs);
    bs->name = kiln__strdup(a, m->src[j]->src->name ? m->src[j]->src->name : "");
    bs->indices = kiln__realloc(a, NULL, ((size_t)distinct + 1) * sizeof *bs->indices);
    bs->deltas = kiln__realloc(a, NULL, ((size_t)distinct + 1) * 3 * sizeof *bs->deltas);
    u->blend_shape_count++; /* owned by the unit from here, even half-built */
    if (!bs->name || !bs->indices || !bs->deltas) return KILN_ERR_OUT_OF_MEMORY;
    bs->mesh = mesh_index;
    bs->target_scale = m->src[j]->src->target_scale > 0.0f ? m->src[j]->src->target_scale : 1.0f;
    bs->delta_count = distinct;
    for (uint32_t k = 0; k < distinct; k++) {
        bs->indices[k] = d[k].vertex;
        memcpy(bs->deltas + 3 * (size_t)k, d[k].d, sizeof d[k].d);
    }
    m->src[j]->baked = 1;
    return KILN_OK;
}

/* The pair problems of shape j, reported once its mesh is baked (a shape whose mesh is dropped
 * is reported as a whole instead). */
static void kiln__report_pairs(const kiln__mesh_shapes *m, uint32_t j)
{
    const kiln__shape_src *s = m->src[j];
    const kiln__bake_ctx *ctx = m->ctx;
    const char *name = s->src->name ? s->src->name : "";
    if (s->out_of_range)
        kiln__bake_report(&ctx->sink, KILN_ERR_CAST_INDEX_RANGE, KILN_SEVERITY_ERROR, &s->src->loc, "vi",
                          KILN_NO_OFFSET, "blend shape '%s': %u of %u pairs index past the base mesh's %u vertices; "
                          "they are dropped", name, s->out_of_range, s->src->pair_count, m->vertex_count);
    if (s->nonfinite)
        kiln__bake_report(&ctx->sink, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_ERROR, &s->src->loc, "vp",
                          KILN_NO_OFFSET, "blend shape '%s': %u target positions are NaN or infinite; their pairs "
                          "are dropped", name, s->nonfinite);
    if (s->duplicates)
        kiln__bake_report(&ctx->sink, KILN_ERR_CAST_DUPLICATE, KILN_SEVERITY_WARNING, &s->src->loc, "vi",
                          KILN_NO_OFFSET, "blend shape '%s': %u vertex indices are listed more than once; the last "
                          "pair wins", name, s->duplicates);
}

kiln_result kiln__bake_mesh_shaped(const kiln__bake_ctx *ctx, const kiln_source_mesh *mesh, uint32_t mesh_source,
                                   const kiln__skeleton *skeleton,
                                   kiln__model_shapes *shapes, kiln__bake_unit *u, uint32_t mesh_index,
                                   kiln__mesh *out)
{
    const kiln_allocator *a = ctx->allocator;
    kiln__mesh_shapes m;
    memset(&m, 0, sizeof m);
    m.ctx = ctx;
    uint32_t *keys = NULL, *map = NULL;
    memset(out, 0, sizeof *out);
    kiln_result r = kiln__collect(&m, mesh, mesh_source, shapes);
    if (r == KILN_OK && m.count == 0) {
        kiln__mesh_shapes_free(&m);
        return kiln__bake_mesh(ctx, mesh, mesh_source, skeleton, out);
    }
    if (r == KILN_OK && !(ctx->options->flags & KILN_BAKE_NO_OPTIMIZE)) { /* only the merge reads keys */
        keys = kiln__realloc(a, NULL, (size_t)m.vertex_count * sizeof *keys);
        r = keys ? kiln__merge_keys(&m, keys) : KILN_ERR_OUT_OF_MEMORY;
    }
    if (r == KILN_OK) r = kiln__bake_mesh_keyed(ctx, mesh, mesh_source, skeleton, keys, m.vertex_count, &map, out);
    if (r == KILN_OK) {
        for (uint32_t j = 0; j < m.count; j++) kiln__report_pairs(&m, j);
        for (uint32_t j = 0; j < m.count && r == KILN_OK; j++) r = kiln__emit_shape(&m, j, map, u, mesh_index);
        if (r != KILN_OK) kiln__mesh_free(a, out);
    }
    kiln__free(a, keys);
    kiln__free(a, map);
    kiln__mesh_shapes_free(&m);
    return r;
}
