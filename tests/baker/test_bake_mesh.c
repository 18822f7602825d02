/* Mesh and hair baking (kiln__bake_mesh, kiln__bake_hair) checked against expectations computed
 * here from the input arrays:
 *   - triangle sets: every triangle as the rotation-normalised triple of its vertices' full
 *     attribute tuples (winding kept), so the comparison does not depend on vertex or index
 *     order; compared as sorted 64-bit hashes;
 *   - skin weights normalised by hand per vertex;
 *   - quantisation error bounds decoded with the documented formulas;
 *   - an allocation failure at every allocation the bake makes.
 * Cast inputs are written in memory with the writer and parsed back. */
#include <criterion/criterion.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bake_geom.h"
#include "bake_options.h"
#include "cast_import.h"
#include "kiln/bake/cast_write.h"
#include "test_util.h"

/* ---- input description ---------------------------------------------------------------------- */

#define MAX_LAYERS 4

typedef struct mesh_in {
    const char     *name;
    uint32_t        vertex_count;
    const float    *vp, *vn, *vt;
    uint32_t        uv_layers;
    const float    *uv[MAX_LAYERS];
    uint32_t        color_layers;
    const uint32_t *packed[MAX_LAYERS]; /* a layer is packed (i) when this is set, else rgba (v4) */
    const float    *rgba[MAX_LAYERS];
    uint32_t        mi;
    const uint32_t *wb;
    const float    *wv;
    const uint32_t *f;
    uint32_t        index_count;
    const char     *sm;
} mesh_in;

typedef struct built {
    unsigned char *bytes;
    kiln_cast_doc *doc;
    uint32_t       mesh, hair;
} built;

static uint32_t first_node(const kiln_cast_doc *doc, uint32_t id)
{
    for (uint32_t n = 0; n < kiln_cast_node_count(doc); n++)
        if (kiln_cast_node_at(doc, n)->id == id) return n;
    return KILN_CAST_NONE;
}

static void write_mesh(kiln_cast_writer *w, uint32_t model, const mesh_in *m)
{
    char name[16];
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 3);
    if (m->name) kiln_cast_writer_string(w, mesh, "n", m->name);
    kiln_cast_writer_prop(w, mesh, "vp", KILN_CAST_TYPE_VEC3, m->vp, m->vertex_count);
    if (m->vn) kiln_cast_writer_prop(w, mesh, "vn", KILN_CAST_TYPE_VEC3, m->vn, m->vertex_count);
    if (m->vt) kiln_cast_writer_prop(w, mesh, "vt", KILN_CAST_TYPE_VEC3, m->vt, m->vertex_count);
    if (m->uv_layers) kiln_cast_writer_ints(w, mesh, "ul", &m->uv_layers, 1);
    for (uint32_t l = 0; l < m->uv_layers; l++) {
        snprintf(name, sizeof name, "u%u", l);
        kiln_cast_writer_prop(w, mesh, name, KILN_CAST_TYPE_VEC2, m->uv[l], m->vertex_count);
    }
    if (m->color_layers) kiln_cast_writer_ints(w, mesh, "cl", &m->color_layers, 1);
    for (uint32_t l = 0; l < m->color_layers; l++) {
        snprintf(name, sizeof name, "c%u", l);
        if (m->packed[l]) kiln_cast_writer_prop(w, mesh, name, KILN_CAST_TYPE_INT, m->packed[l], m->vertex_count);
        else kiln_cast_writer_prop(w, mesh, name, KILN_CAST_TYPE_VEC4, m->rgba[l], m->vertex_count);
    }
    if (m->mi) {
        kiln_cast_writer_ints(w, mesh, "mi", &m->mi, 1);
        kiln_cast_writer_ints(w, mesh, "wb", m->wb, m->vertex_count * m->mi);
        if (m->wv) kiln_cast_writer_floats(w, mesh, "wv", KILN_CAST_TYPE_FLOAT, m->wv, m->vertex_count * m->mi);
    }
    if (m->sm) kiln_cast_writer_string(w, mesh, "sm", m->sm);
    kiln_cast_writer_ints(w, mesh, "f", m->f, m->index_count);
}

static void finish_build(kiln_cast_writer *w, built *out)
{
    uint64_t size = kiln_cast_writer_size(w);
    cr_assert_gt(size, 0, "writer failed");
    out->bytes = malloc((size_t)size);
    cr_assert_eq(kiln_cast_writer_write(w, out->bytes, size), KILN_OK);
    kiln_cast_writer_destroy(w);
    kiln_diag err;
    cr_assert_eq(kiln_cast_parse(out->bytes, (size_t)size, NULL, &out->doc, &err), KILN_OK, "%s", err.message);
    out->mesh = first_node(out->doc, KILN_CAST_ID_MESH);
    out->hair = first_node(out->doc, KILN_CAST_ID_HAIR);
}

static void build(const mesh_in *m, built *out)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    write_mesh(w, model, m);
    finish_build(w, out);
}

static void built_free(built *b)
{
    kiln_cast_free(b->doc);
    free(b->bytes);
}

static int diag_count(const diag_log *log, kiln_result code, kiln_severity sev)
{
    int n = 0;
    for (int i = 0; i < log->count && i < 32; i++) n += log->items[i].code == code && log->items[i].severity == sev;
    return n;
}

/* ---- calling the baker ------------------------------------------------------------------------ */

typedef struct harness {
    kiln_bake_options opt;
    kiln_bake_stats   stats;
    diag_log          log;
    kiln_bake_input   input;
    kiln__bake_ctx    ctx;
} harness;

/* What the Cast importer makes of the built file's nodes (libc memory, so the counting
 * allocators see only the bake's); one per process, released at the next harness_init. */
static kiln_source_scene source_scene;
static kiln__cast_import source_import;

static void harness_init(harness *h, const built *b, uint32_t flags, uint32_t max_influences, const kiln_allocator *a)
{
    memset(h, 0, sizeof *h);
    kiln_source_scene_free(&source_scene);
    kiln_source_scene_init(&source_scene, NULL);
    source_import.doc = b->doc;
    source_import.scene = &source_scene;
    source_import.sink = &h->ctx.sink;
    h->opt.flags = flags;
    h->opt.max_influences = max_influences;
    h->opt.allocator = a;
    kiln__bake_options_normalise(&h->opt, &h->opt); /* as kiln_bake hands them to the stages */
    h->input.path = "test.cast";
    h->ctx.input = &h->input;
    h->ctx.options = &h->opt;
    h->ctx.allocator = a;
    h->ctx.sink.fn = diag_log_push;
    h->ctx.sink.user = &h->log;
    h->ctx.stats = &h->stats;
}

/* The hair at `node` as the Cast importer hands it to the bake. */
static const kiln_source_hair *source_hair(uint32_t node)
{
    kiln_source_hair *sh = kiln_source_alloc(&source_scene, 1, sizeof *sh);
    cr_assert_not_null(sh);
    cr_assert_eq(kiln__cast_import_hair(&source_import, node, sh), KILN_OK);
    return sh;
}

/* kiln__bake_mesh on the mesh at `node` as the Cast importer hands it over; a node the
 * importer drops fails with the importer's code, as the bake's walk does. */
static kiln_result bake_node_mesh(const kiln__bake_ctx *ctx, uint32_t node, const kiln__skeleton *skeleton,
                                  kiln__mesh *out)
{
    kiln_source_mesh *sm = kiln_source_alloc(&source_scene, 1, sizeof *sm);
    cr_assert_not_null(sm);
    kiln_result r = kiln__cast_import_mesh(&source_import, node, sm);
    if (r != KILN_OK) {
        memset(out, 0, sizeof *out);
        return r;
    }
    return kiln__bake_mesh(ctx, sm, kiln_cast_node_at(source_import.doc, node)->ordinal, skeleton, out);
}

/* Skeletons are built by hand: only the bone count and the Cast -> sorted remap matter here. */
typedef struct test_skeleton {
    kiln__skeleton s;
    uint32_t       sorted[256];
} test_skeleton;

static void skeleton_init(test_skeleton *t, uint32_t bones, const uint32_t *perm)
{
    memset(t, 0, sizeof *t);
    cr_assert_leq(bones, 256);
    for (uint32_t i = 0; i < bones; i++) t->sorted[i] = perm ? perm[i] : i;
    t->s.bone_count = bones;
    t->s.sorted_index = t->sorted;
}

static kiln_result bake(const mesh_in *in, uint32_t flags, uint32_t max_influences, const kiln__skeleton *skel,
                        harness *h, built *b, kiln__mesh *out)
{
    build(in, b);
    harness_init(h, b, flags, max_influences, NULL);
    return bake_node_mesh(&h->ctx, b->mesh, skel, out);
}

/* ---- reading the output ----------------------------------------------------------------------- */

static const kiln__stream *stream_of(const kiln__mesh *m, uint32_t semantic, uint32_t set)
{
    for (uint32_t i = 0; i < m->stream_count; i++)
        if (m->streams[i].desc.semantic == semantic && m->streams[i].desc.set == set) return &m->streams[i];
    return NULL;
}

static uint32_t index_at(const kiln__mesh *m, uint32_t i)
{
    const kiln__stream *s = stream_of(m, KILN_ATTR_INDICES, 0);
    if (s->desc.format == KILN_FORMAT_U16x1) return ((const uint16_t *)s->data)[i];
    return ((const uint32_t *)s->data)[i];
}

static const float *f32_at(const kiln__stream *s, uint32_t v)
{
    return (const float *)((const uint8_t *)s->data + (size_t)v * s->desc.stride);
}

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* ---- attribute tuples and triangle sets ----------------------------------------------------- */

#define MAX_WORDS 96

/* The expected tuple of input vertex v: float bits (non-finite values zeroed, as the baker
 * does), packed colours as their four byte values. */
static uint32_t input_tuple(const mesh_in *m, uint32_t v, uint32_t *out)
{
    uint32_t n = 0;
#define PUT_FLOATS(arr, k)                                                                      \
    for (uint32_t c_ = 0; c_ < (k); c_++) {                                                     \
        float x_ = (arr)[(size_t)v * (k) + c_];                                                 \
        out[n++] = isfinite(x_) ? bits(x_) : 0u;                                                \
    }
    PUT_FLOATS(m->vp, 3);
    if (m->vn) { PUT_FLOATS(m->vn, 3); }
    if (m->vt) { PUT_FLOATS(m->vt, 3); }
    for (uint32_t l = 0; l < m->uv_layers; l++) { PUT_FLOATS(m->uv[l], 2); }
    for (uint32_t l = 0; l < m->color_layers; l++) {
        if (m->packed[l]) {
            for (uint32_t c = 0; c < 4; c++) out[n++] = (m->packed[l][v] >> (8 * c)) & 0xFFu;
        } else {
            PUT_FLOATS(m->rgba[l], 4);
        }
    }
#undef PUT_FLOATS
    return n;
}

/* The same tuple read back from lossless output streams (skin streams excluded). */
static uint32_t output_tuple(const kiln__mesh *m, uint32_t v, uint32_t *out)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->stream_count; i++) {
        const kiln__stream *s = &m->streams[i];
        const uint8_t *e = (const uint8_t *)s->data + (size_t)v * s->desc.stride;
        switch (s->desc.format) {
        case KILN_FORMAT_F32x2: case KILN_FORMAT_F32x3: case KILN_FORMAT_F32x4:
            if (s->desc.semantic == KILN_ATTR_WEIGHTS) break;
            for (uint32_t c = 0; c < s->desc.components; c++) memcpy(&out[n++], e + 4 * c, 4);
            break;
        case KILN_FORMAT_U8x4_UNORM:
            for (uint32_t c = 0; c < 4; c++) out[n++] = e[c];
            break;
        default:
            break;
        }
    }
    return n;
}

static uint64_t mix(uint64_t h, uint32_t w)
{
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 31);
}

static int tuple_cmp(const uint32_t *a, const uint32_t *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* Hash of the triangle rotated so that its vertex sequence is lexicographically smallest. */
static uint64_t triangle_hash(uint32_t t[3][MAX_WORDS], uint32_t n)
{
    int best = 0;
    for (int r = 1; r < 3; r++) {
        for (int k = 0; k < 3; k++) {
            int c = tuple_cmp(t[(r + k) % 3], t[(best + k) % 3], n);
            if (c < 0) best = r;
            if (c) break;
        }
    }
    uint64_t h = 0x243F6A8885A308D3ull;
    for (int k = 0; k < 3; k++)
        for (uint32_t i = 0; i < n; i++) h = mix(h, t[(best + k) % 3][i]);
    return h;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Hashes of the input triangles that should survive: all indices in range and distinct. */
static size_t input_triangles(const mesh_in *m, uint64_t *out)
{
    static uint32_t t[3][MAX_WORDS];
    size_t k = 0;
    for (uint32_t i = 0; i + 2 < m->index_count; i += 3) {
        uint32_t a = m->f[i], b = m->f[i + 1], c = m->f[i + 2];
        if (a >= m->vertex_count || b >= m->vertex_count || c >= m->vertex_count) continue;
        if (a == b || b == c || a == c) continue;
        uint32_t n = input_tuple(m, a, t[0]);
        input_tuple(m, b, t[1]);
        input_tuple(m, c, t[2]);
        out[k++] = triangle_hash(t, n);
    }
    return k;
}

static size_t output_triangles(const kiln__mesh *m, uint64_t *out)
{
    static uint32_t t[3][MAX_WORDS];
    size_t k = 0;
    for (uint32_t i = 0; i < m->rec.index_count; i += 3) {
        uint32_t n = 0;
        for (int j = 0; j < 3; j++) {
            uint32_t v = index_at(m, i + (uint32_t)j);
            cr_assert_lt(v, m->rec.vertex_count, "index %u out of range", v);
            n = output_tuple(m, v, t[j]);
        }
        out[k++] = triangle_hash(t, n);
    }
    return k;
}

static void assert_same_triangles(const mesh_in *in, const kiln__mesh *out)
{
    uint64_t *a = malloc((in->index_count / 3 + 1) * sizeof *a);
    uint64_t *b = malloc((out->rec.index_count / 3 + 1) * sizeof *b);
    size_t na = input_triangles(in, a), nb = output_triangles(out, b);
    cr_assert_eq(nb, na, "triangles: %zu out, %zu expected", nb, na);
    qsort(a, na, sizeof *a, cmp_u64);
    qsort(b, nb, sizeof *b, cmp_u64);
    size_t diff = 0;
    for (size_t i = 0; i < na; i++) diff += a[i] != b[i];
    free(a);
    free(b);
    cr_assert_eq(diff, 0, "%zu triangles differ from the input", diff);
}

/* ---- expected skin ---------------------------------------------------------------------------- */

typedef struct skin_set {
    uint32_t n;
    uint32_t joint[8];
    float    weight[8];
} skin_set;

/* C.3 by hand: sum duplicate bones in slot order, ignore unusable slots, take the k heaviest
 * (ties: lower joint), normalise when the sum is > 1e-6. */
static skin_set expected_skin(const mesh_in *m, uint32_t v, uint32_t k, const kiln__skeleton *s)
{
    uint32_t bone[64];
    double w[64];
    uint32_t n = 0;
    cr_assert_leq(m->mi, 64);
    for (uint32_t j = 0; j < m->mi; j++) {
        uint32_t b = m->wb[v * m->mi + j];
        float x = m->mi == 1 ? 1.0f : m->wv[v * m->mi + j];
        if (!(x > 0.0f) || !isfinite(x) || b >= s->bone_count) continue;
        uint32_t joint = s->sorted_index[b], at = 0;
        while (at < n && bone[at] != joint) at++;
        if (at == n) { bone[n] = joint; w[n++] = 0.0; }
        w[at] += x;
    }
    skin_set out;
    memset(&out, 0, sizeof out);
    int taken[64] = {0};
    double sum = 0.0;
    double picked[8];
    for (uint32_t i = 0; i < k && i < n; i++) {
        int best = -1;
        for (uint32_t j = 0; j < n; j++) {
            if (taken[j]) continue;
            if (best < 0 || w[j] > w[best] || (w[j] == w[best] && bone[j] < bone[best])) best = (int)j;
        }
        taken[best] = 1;
        out.joint[out.n] = bone[best];
        picked[out.n++] = w[best];
        sum += w[best];
    }
    if (!(sum > 1e-6)) {
        memset(&out, 0, sizeof out);
        return out;
    }
    for (uint32_t i = 0; i < out.n; i++) out.weight[i] = (float)(picked[i] / sum);
    return out;
}

static skin_set output_skin(const kiln__mesh *m, uint32_t v)
{
    skin_set out;
    memset(&out, 0, sizeof out);
    const kiln__stream *js = stream_of(m, KILN_ATTR_JOINTS, 0), *ws = stream_of(m, KILN_ATTR_WEIGHTS, 0);
    if (!js) return out;
    const uint16_t *j = (const uint16_t *)((const uint8_t *)js->data + (size_t)v * js->desc.stride);
    const float *w = f32_at(ws, v);
    for (uint32_t i = 0; i < ws->desc.components; i++) {
        if (w[i] == 0.0f) {
            cr_assert_eq(j[i], 0, "unused slot %u of vertex %u has joint %u", i, v, j[i]);
            continue;
        }
        cr_assert_eq(i, out.n, "vertex %u: weight after an empty slot", v);
        out.joint[out.n] = j[i];
        out.weight[out.n++] = w[i];
    }
    return out;
}

static int same_skin(const skin_set *a, const skin_set *b)
{
    if (a->n != b->n) return 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->joint[i] != b->joint[i] || fabsf(a->weight[i] - b->weight[i]) > 1e-6f) return 0;
    return 1;
}

/* ---- fixtures ----------------------------------------------------------------------------------- */

/* A grid of nx * ny vertices in the z = 0 plane, two CCW triangles per cell. Arrays are malloc'd
 * and freed with grid_free. */
typedef struct grid {
    float    *vp, *vn, *vt, *uv0, *uv1, *rgba;
    uint32_t *packed, *f;
    uint32_t  n, index_count;
} grid;

static void grid_make(grid *g, uint32_t nx, uint32_t ny)
{
    g->n = nx * ny;
    g->vp = malloc(g->n * 12);
    g->vn = malloc(g->n * 12);
    g->vt = malloc(g->n * 12);
    g->uv0 = malloc(g->n * 8);
    g->uv1 = malloc(g->n * 8);
    g->rgba = malloc(g->n * 16);
    g->packed = malloc(g->n * 4);
    g->f = malloc((nx - 1) * (ny - 1) * 6 * 4);
    for (uint32_t y = 0; y < ny; y++) {
        for (uint32_t x = 0; x < nx; x++) {
            uint32_t v = y * nx + x;
            float fx = (float)x * 0.25f - 3.0f, fy = (float)y * 0.5f + 1.0f;
            float p[3] = {fx, fy, sinf(fx) * 0.1f};
            memcpy(g->vp + v * 3, p, 12);
            float len = sqrtf(1.0f + p[2] * p[2]);
            g->vn[v * 3] = -p[2] / len; g->vn[v * 3 + 1] = 0.0f; g->vn[v * 3 + 2] = 1.0f / len;
            g->vt[v * 3] = 1.0f; g->vt[v * 3 + 1] = 0.0f; g->vt[v * 3 + 2] = 0.0f;
            g->uv0[v * 2] = (float)x / (float)(nx - 1); g->uv0[v * 2 + 1] = (float)y / (float)(ny - 1);
            g->uv1[v * 2] = (float)x * 2.0f; g->uv1[v * 2 + 1] = -(float)y;
            for (int c = 0; c < 4; c++) g->rgba[v * 4 + (uint32_t)c] = (float)((v + (uint32_t)c) % 7) / 6.0f;
            g->packed[v] = (v * 2654435761u) | 0xFF000000u;
        }
    }
    uint32_t k = 0;
    for (uint32_t y = 0; y + 1 < ny; y++) {
        for (uint32_t x = 0; x + 1 < nx; x++) {
            uint32_t a = y * nx + x, b = a + 1, c = a + nx, d = c + 1;
            uint32_t tri[6] = {a, b, d, a, d, c};
            memcpy(g->f + k, tri, sizeof tri);
            k += 6;
        }
    }
    g->index_count = k;
}

static void grid_free(grid *g)
{
    free(g->vp); free(g->vn); free(g->vt); free(g->uv0); free(g->uv1); free(g->rgba); free(g->packed); free(g->f);
}

static mesh_in grid_mesh(const grid *g)
{
    mesh_in m;
    memset(&m, 0, sizeof m);
    m.vertex_count = g->n;
    m.vp = g->vp; m.vn = g->vn; m.vt = g->vt;
    m.uv_layers = 2; m.uv[0] = g->uv0; m.uv[1] = g->uv1;
    m.color_layers = 2; m.packed[0] = g->packed; m.rgba[1] = g->rgba;
    m.f = g->f;
    m.index_count = g->index_count;
    return m;
}

/* Positions and faces only; tests add attributes to the result. */
static mesh_in plain_mesh(const float *vp, uint32_t vertex_count, const uint32_t *f, uint32_t index_count)
{
    mesh_in m;
    memset(&m, 0, sizeof m);
    m.vertex_count = vertex_count;
    m.vp = vp;
    m.f = f;
    m.index_count = index_count;
    return m;
}

/* A deterministic pseudo-random source for the skin and quantisation fixtures. */
static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static float frand(uint32_t *s, float lo, float hi)
{
    return lo + (hi - lo) * (float)(lcg(s) & 0xFFFFFF) / 16777215.0f;
}

/* ---- lossless attributes and faces --------------------------------------------------------- */

Test(bake_mesh, lossless_keeps_every_triangle_and_exact_attribute_bits)
{
    grid g;
    grid_make(&g, 9, 7);
    g.vp[0] = -0.0f;               /* the sign of zero survives */
    g.uv0[3] = -0.0f;
    mesh_in in = grid_mesh(&g);
    in.name = "body";
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, 0, 0, NULL, &h, &b, &m), KILN_OK);

    assert_same_triangles(&in, &m);
    cr_assert_str_eq(m.name, "body");
    cr_assert_eq(m.material, KILN_BLOB_NONE);
    cr_assert_eq(m.skinned, 0);
    cr_assert_eq(m.rec.vertex_count, g.n);
    cr_assert_eq(m.rec.index_count, g.index_count);
    cr_assert_eq(m.rec.uv_layers, 2);
    cr_assert_eq(m.rec.color_layers, 2);
    cr_assert_eq(m.rec.influences, 0);
    cr_assert_eq(m.rec.stream_count, m.stream_count);

    static const uint32_t order[][3] = {
        {KILN_ATTR_POSITION, 0, KILN_FORMAT_F32x3}, {KILN_ATTR_NORMAL, 0, KILN_FORMAT_F32x3},
        {KILN_ATTR_TANGENT, 0, KILN_FORMAT_F32x3}, {KILN_ATTR_TEXCOORD, 0, KILN_FORMAT_F32x2},
        {KILN_ATTR_TEXCOORD, 1, KILN_FORMAT_F32x2}, {KILN_ATTR_COLOR, 0, KILN_FORMAT_U8x4_UNORM},
        {KILN_ATTR_COLOR, 1, KILN_FORMAT_F32x4}, {KILN_ATTR_INDICES, 0, KILN_FORMAT_U16x1},
    };
    cr_assert_eq(m.stream_count, 8);
    for (uint32_t i = 0; i < 8; i++) {
        cr_assert_eq(m.streams[i].desc.semantic, order[i][0], "stream %u", i);
        cr_assert_eq(m.streams[i].desc.set, order[i][1], "stream %u", i);
        cr_assert_eq(m.streams[i].desc.format, order[i][2], "stream %u", i);
    }
    cr_assert_eq(stream_of(&m, KILN_ATTR_INDICES, 0)->desc.stride, 2);

    /* -0.0 kept: some output vertex holds the exact bit pattern. */
    const kiln__stream *pos = stream_of(&m, KILN_ATTR_POSITION, 0);
    int found = 0;
    for (uint32_t v = 0; v < m.rec.vertex_count; v++) found |= bits(f32_at(pos, v)[0]) == 0x80000000u;
    cr_assert(found, "-0.0 lost");

    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t v = 0; v < g.n; v++)
        for (int c = 0; c < 3; c++) {
            lo[c] = fminf(lo[c], g.vp[v * 3 + (uint32_t)c]);
            hi[c] = fmaxf(hi[c], g.vp[v * 3 + (uint32_t)c]);
        }
    for (int c = 0; c < 3; c++) {
        cr_assert_eq(m.rec.bounds_min[c], lo[c]);
        cr_assert_eq(m.rec.bounds_max[c], hi[c]);
    }
    cr_assert_eq(h.stats.vertices_in, g.n);
    cr_assert_eq(h.stats.vertices_out, g.n);
    cr_assert_eq(h.stats.triangles_in, g.index_count / 3);
    cr_assert_eq(h.stats.triangles_out, g.index_count / 3);
    cr_assert_eq(h.log.count, 0);
    uint64_t payload = (uint64_t)g.n * (12 * 3 + 8 * 2 + 4 + 16) + g.index_count * 1u;
    cr_assert_eq(m.input_bytes, payload, "input bytes %llu", (unsigned long long)m.input_bytes);

    kiln__mesh_free(NULL, &m);
    built_free(&b);
    grid_free(&g);
}

Test(bake_mesh, no_optimize_keeps_vertex_and_index_order)
{
    grid g;
    grid_make(&g, 6, 5);
    mesh_in in = grid_mesh(&g);
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, KILN_BAKE_NO_OPTIMIZE, 0, NULL, &h, &b, &m), KILN_OK);
    cr_assert_eq(m.rec.vertex_count, g.n);
    cr_assert_eq(memcmp(stream_of(&m, KILN_ATTR_POSITION, 0)->data, g.vp, g.n * 12), 0);
    cr_assert_eq(memcmp(stream_of(&m, KILN_ATTR_NORMAL, 0)->data, g.vn, g.n * 12), 0);
    cr_assert_eq(memcmp(stream_of(&m, KILN_ATTR_TEXCOORD, 1)->data, g.uv1, g.n * 8), 0);
    cr_assert_eq(memcmp(stream_of(&m, KILN_ATTR_COLOR, 1)->data, g.rgba, g.n * 16), 0);
    const uint8_t *c0 = stream_of(&m, KILN_ATTR_COLOR, 0)->data;
    for (uint32_t v = 0; v < g.n; v++)
        for (uint32_t c = 0; c < 4; c++) cr_assert_eq(c0[v * 4 + c], (g.packed[v] >> (8 * c)) & 0xFF);
    for (uint32_t i = 0; i < g.index_count; i++) cr_assert_eq(index_at(&m, i), g.f[i]);
    kiln__mesh_free(NULL, &m);
    built_free(&b);
    grid_free(&g);
}

Test(bake_mesh, drops_and_counts_bad_and_degenerate_faces)
{
    static const float vp[] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    static const uint32_t f[] = {
        0, 1, 2,     /* kept */
        0, 2, 3,     /* kept */
        0, 1, 9,     /* index out of range */
        2, 2, 3,     /* degenerate */
        7, 7, 1,     /* out of range and degenerate: counted as out of range */
        3, 0, 3,     /* degenerate */
        1, 2,        /* trailing partial triangle: ignored */
    };
    mesh_in in = plain_mesh(vp, 4, f, sizeof f / sizeof f[0]);
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, 0, 0, NULL, &h, &b, &m), KILN_OK);
    cr_assert_eq(m.rec.index_count, 6);
    assert_same_triangles(&in, &m);
    cr_assert_eq(h.stats.bad_index_faces_dropped, 2);
    cr_assert_eq(h.stats.degenerate_faces_dropped, 2);
    cr_assert_eq(h.stats.triangles_in, 6);
    cr_assert_eq(h.stats.triangles_out, 2);
    /* reported once each (by the accessor, which counts them), not again by the baker */
    cr_assert_eq(diag_count(&h.log, KILN_ERR_CAST_INDEX_RANGE, KILN_SEVERITY_ERROR), 1);
    cr_assert_eq(diag_count(&h.log, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING), 1);
    kiln__mesh_free(NULL, &m);
    built_free(&b);
}

Test(bake_mesh, degenerate_faces_alone_are_a_warning)
{
    static const float vp[] = {0, 0, 0, 1, 0, 0, 1, 1, 0};
    static const uint32_t f[] = {0, 1, 2, 1, 1, 2};
    mesh_in in = plain_mesh(vp, 3, f, 6);
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, 0, 0, NULL, &h, &b, &m), KILN_OK);
    cr_assert_eq(m.rec.index_count, 3);
    cr_assert_eq(h.stats.degenerate_faces_dropped, 1);
    cr_assert_eq(diag_count(&h.log, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING), 1);
    cr_assert_eq(diag_count(&h.log, KILN_ERR_CAST_INDEX_RANGE, KILN_SEVERITY_ERROR), 0);
    kiln__mesh_free(NULL, &m);
    built_free(&b);
}

Test(bake_mesh, mesh_without_valid_faces_is_empty)
{
    static const float vp[] = {0, 0, 0, 1, 0, 0, 1, 1, 0};
    static const uint32_t f[] = {0, 1, 5, 2, 2, 2};
    mesh_in in = plain_mesh(vp, 3, f, 6);
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, 0, 0, NULL, &h, &b, &m), KILN_ERR_CAST_EMPTY);
    cr_assert_null(m.streams);
    cr_assert_null(m.name);
    cr_assert_eq(h.stats.bad_index_faces_dropped, 1);
    cr_assert_eq(h.stats.degenerate_faces_dropped, 1);
    built_free(&b);
}

Test(bake_mesh, merges_only_fully_identical_vertices)
{
    /* Vertices 0 and 3 are identical in every attribute; 1 and 4 share the position but not
     * the UV. Output: 5 vertices (0/3 merged). */
    static const float vp[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 0};
    static const float uv[] = {0, 0, 1, 0, 0, 1, 0, 0, 0.5f, 0, 1, 1};
    static const uint32_t f[] = {0, 1, 2, 3, 4, 5};
    mesh_in in = plain_mesh(vp, 6, f, 6);
    in.uv_layers = 1;
    in.uv[0] = uv;
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, 0, 0, NULL, &h, &b, &m), KILN_OK);
    cr_assert_eq(m.rec.vertex_count, 5);
    cr_assert_eq(h.stats.vertices_in, 6);
    cr_assert_eq(h.stats.vertices_out, 5);
    assert_same_triangles(&in, &m);
    kiln__mesh_free(NULL, &m);
    built_free(&b);
}

Test(bake_mesh, unnamed_mesh_gets_its_ordinal)
{
    static const float vp[] = {0, 0, 0, 1, 0, 0, 1, 1, 0};
    static const uint32_t f[] = {0, 1, 2};
    mesh_in in = plain_mesh(vp, 3, f, 3);
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, 0, 0, NULL, &h, &b, &m), KILN_OK);
    cr_assert_str_eq(m.name, "mesh0");
    /* Three indices in u16 are 6 bytes; the payload is padded with zeros to 8. */
    const kiln__stream *is = stream_of(&m, KILN_ATTR_INDICES, 0);
    cr_assert_eq(is->desc.count, 3);
    cr_assert_eq(((const uint16_t *)is->data)[3], 0);
    kiln__mesh_free(NULL, &m);
    built_free(&b);
}

Test(bake_mesh, non_finite_values_become_zero_with_one_warning)
{
    float vp[] = {0, 0, 0, 1, NAN, 0, 1, 1, 0};
    float vn[] = {0, 0, 1, INFINITY, 0, 1, 0, 0, 1};
    float uv[] = {0, -INFINITY, 1, 0, 1, 1};
    static const uint32_t f[] = {0, 1, 2};
    mesh_in in = plain_mesh(vp, 3, f, 3);
    in.vn = vn;
    in.uv_layers = 1;
    in.uv[0] = uv;
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, 0, 0, NULL, &h, &b, &m), KILN_OK);
    assert_same_triangles(&in, &m); /* the expected tuples zero non-finite values too */
    cr_assert_eq(h.log.count, 1);
    cr_assert(diag_log_has(&h.log, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING));
    cr_assert(strstr(h.log.items[0].message, "3 non-finite") != NULL, "%s", h.log.items[0].message);
    kiln__mesh_free(NULL, &m);
    built_free(&b);
}

/* n vertices at distinct positions, covered by triangles (3k, 3k+1, 3k+2) plus one closing
 * triangle when n is not a multiple of 3. */
static void index_width_case(uint32_t n, uint32_t format, uint32_t stride)
{
    float *vp = malloc(n * 12);
    uint32_t *f = malloc((n + 3) * 4);
    for (uint32_t v = 0; v < n; v++) {
        vp[v * 3] = (float)(v % 256);
        vp[v * 3 + 1] = (float)(v / 256);
        vp[v * 3 + 2] = (float)(v % 3);
    }
    uint32_t k = 0;
    for (uint32_t v = 0; v + 2 < n; v += 3) { f[k++] = v; f[k++] = v + 1; f[k++] = v + 2; }
    if (n % 3) { f[k++] = n - 3; f[k++] = n - 2; f[k++] = n - 1; }
    mesh_in in = plain_mesh(vp, n, f, k);
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, 0, 0, NULL, &h, &b, &m), KILN_OK);
    cr_assert_eq(m.rec.vertex_count, n);
    const kiln__stream *is = stream_of(&m, KILN_ATTR_INDICES, 0);
    cr_assert_eq(is->desc.format, format);
    cr_assert_eq(is->desc.stride, stride);
    cr_assert_eq(is->desc.count, k);
    assert_same_triangles(&in, &m);
    kiln__mesh_free(NULL, &m);
    built_free(&b);
    free(vp);
    free(f);
}

Test(bake_mesh, u16_indices_up_to_65535_vertices)
{
    index_width_case(65535, KILN_FORMAT_U16x1, 2);
}

Test(bake_mesh, u32_indices_from_65536_vertices)
{
    index_width_case(65536, KILN_FORMAT_U32x1, 4);
}

Test(bake_mesh, bakes_are_byte_identical)
{
    grid g;
    grid_make(&g, 12, 10);
    mesh_in in = grid_mesh(&g);
    built b;
    build(&in, &b);
    kiln__mesh m[2];
    for (int i = 0; i < 2; i++) {
        harness h;
        harness_init(&h, &b, KILN_BAKE_QUANTIZE_NORMALS, 0, NULL);
        cr_assert_eq(bake_node_mesh(&h.ctx, b.mesh, NULL, &m[i]), KILN_OK);
    }
    cr_assert_eq(m[0].stream_count, m[1].stream_count);
    for (uint32_t s = 0; s < m[0].stream_count; s++) {
        const kiln__stream *x = &m[0].streams[s], *y = &m[1].streams[s];
        cr_assert_eq(memcmp(&x->desc, &y->desc, sizeof x->desc), 0, "stream %u descriptor", s);
        cr_assert_eq(memcmp(x->data, y->data, (size_t)x->desc.count * x->desc.stride), 0, "stream %u data", s);
    }
    cr_assert_eq(memcmp(&m[0].rec, &m[1].rec, sizeof m[0].rec), 0);
    kiln__mesh_free(NULL, &m[0]);
    kiln__mesh_free(NULL, &m[1]);
    built_free(&b);
    grid_free(&g);
}

/* ---- skinning ------------------------------------------------------------------------------- */

/* Three vertices, one triangle, the given skin; baked in input order. */
typedef struct skin_case {
    float    vp[9];
    uint32_t f[3];
    mesh_in  in;
    built    b;
    harness  h;
    kiln__mesh m;
} skin_case;

static void skin_setup(skin_case *c, uint32_t mi, const uint32_t *wb, const float *wv)
{
    static const float vp[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    memcpy(c->vp, vp, sizeof vp);
    c->f[0] = 0; c->f[1] = 1; c->f[2] = 2;
    c->in = plain_mesh(c->vp, 3, c->f, 3);
    c->in.mi = mi;
    c->in.wb = wb;
    c->in.wv = wv;
}

static kiln_result skin_bake(skin_case *c, uint32_t mi, const uint32_t *wb, const float *wv, uint32_t max_influences,
                             const kiln__skeleton *skel)
{
    skin_setup(c, mi, wb, wv);
    return bake(&c->in, KILN_BAKE_NO_OPTIMIZE, max_influences, skel, &c->h, &c->b, &c->m);
}

static void skin_case_free(skin_case *c)
{
    kiln__mesh_free(NULL, &c->m);
    built_free(&c->b);
}

static void assert_skin(const skin_case *c, uint32_t v, uint32_t n, const uint32_t *joints, const float *weights)
{
    skin_set s = output_skin(&c->m, v);
    cr_assert_eq(s.n, n, "vertex %u: %u influences, expected %u", v, s.n, n);
    for (uint32_t i = 0; i < n; i++) {
        cr_assert_eq(s.joint[i], joints[i], "vertex %u slot %u", v, i);
        cr_assert_float_eq(s.weight[i], weights[i], 1e-6, "vertex %u slot %u: %g", v, i, (double)s.weight[i]);
    }
}

Test(bake_skin, same_bone_twice_adds_up)
{
    static const uint32_t wb[] = {3, 3, 0, 0, 1, 2, 0, 0, 4, 0, 0, 0};
    static const float wv[] = {0.5f, 0.5f, 0, 0, 0.25f, 0.25f, 0, 0, 2.0f, 0, 0, 0};
    test_skeleton sk;
    skeleton_init(&sk, 5, NULL);
    skin_case c;
    cr_assert_eq(skin_bake(&c, 4, wb, wv, 0, &sk.s), KILN_OK);
    cr_assert(c.m.skinned);
    cr_assert_eq(c.m.rec.influences, 2);
    assert_skin(&c, 0, 1, (uint32_t[]){3}, (float[]){1.0f});
    assert_skin(&c, 1, 2, (uint32_t[]){1, 2}, (float[]){0.5f, 0.5f}); /* tie: lower joint first */
    assert_skin(&c, 2, 1, (uint32_t[]){4}, (float[]){1.0f});           /* normalised */
    cr_assert_eq(c.h.stats.influences_dropped, 0);
    cr_assert_eq(c.h.log.count, 0);
    skin_case_free(&c);
}

Test(bake_skin, keeps_the_heaviest_and_renormalises)
{
    /* mi = 8 with three nonzero weights, max_influences 2. */
    static const uint32_t wb[24] = {5, 0, 2, 0, 0, 7, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0};
    static const float wv[24] = {0.2f, 0, 0.5f, 0, 0, 0.3f, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
    test_skeleton sk;
    skeleton_init(&sk, 8, NULL);
    skin_case c;
    cr_assert_eq(skin_bake(&c, 8, wb, wv, 2, &sk.s), KILN_OK);
    cr_assert_eq(c.m.rec.influences, 2);
    assert_skin(&c, 0, 2, (uint32_t[]){2, 7}, (float[]){0.625f, 0.375f});
    assert_skin(&c, 1, 1, (uint32_t[]){1}, (float[]){1.0f});
    cr_assert_eq(c.h.stats.influences_dropped, 1);
    cr_assert_eq(c.h.log.count, 0, "pruning to max_influences is not reported");
    const kiln__stream *js = stream_of(&c.m, KILN_ATTR_JOINTS, 0), *ws = stream_of(&c.m, KILN_ATTR_WEIGHTS, 0);
    cr_assert_eq(js->desc.format, KILN_FORMAT_U16xN);
    cr_assert_eq(js->desc.components, 2);
    cr_assert_eq(js->desc.stride, 4);
    cr_assert_eq(ws->desc.format, KILN_FORMAT_F32xN);
    cr_assert_eq(ws->desc.stride, 8);
    skin_case_free(&c);
}

Test(bake_skin, components_are_the_most_influences_any_vertex_keeps)
{
    static const uint32_t wb[] = {1, 2, 3, 0, 1, 0, 0, 0, 2, 0, 0, 0};
    static const float wv[] = {0.5f, 0.3f, 0.2f, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    test_skeleton sk;
    skeleton_init(&sk, 4, NULL);
    skin_case c;
    cr_assert_eq(skin_bake(&c, 4, wb, wv, 0, &sk.s), KILN_OK);
    cr_assert_eq(c.m.rec.influences, 3);
    const kiln__stream *js = stream_of(&c.m, KILN_ATTR_JOINTS, 0), *ws = stream_of(&c.m, KILN_ATTR_WEIGHTS, 0);
    cr_assert_eq(js->desc.components, 3);
    cr_assert_eq(js->desc.stride, 8);  /* 6 bytes rounded up to 4 */
    cr_assert_eq(ws->desc.components, 3);
    cr_assert_eq(ws->desc.stride, 12);
    const uint16_t *j = js->data;
    cr_assert_eq(j[3], 0, "padding after the joints is zero");
    assert_skin(&c, 0, 3, (uint32_t[]){1, 2, 3}, (float[]){0.5f, 0.3f, 0.2f});
    assert_skin(&c, 1, 1, (uint32_t[]){1}, (float[]){1.0f});
    skin_case_free(&c);
}

Test(bake_skin, invalid_influences_are_dropped_and_reported)
{
    /* vertex 0: bone 9 is out of range (4 bones); vertex 1: NaN and negative weights;
     * vertex 2: infinite weight only -> unweighted. */
    static const uint32_t wb[] = {9, 1, 2, 0, 1, 2, 3, 0, 1, 0, 0, 0};
    static const float wv[] = {0.5f, 0.25f, 0.25f, 0, NAN, -0.5f, 0.4f, 0, INFINITY, 0, 0, 0};
    test_skeleton sk;
    skeleton_init(&sk, 4, NULL);
    skin_case c;
    cr_assert_eq(skin_bake(&c, 4, wb, wv, 0, &sk.s), KILN_OK);
    assert_skin(&c, 0, 2, (uint32_t[]){1, 2}, (float[]){0.5f, 0.5f});
    assert_skin(&c, 1, 1, (uint32_t[]){3}, (float[]){1.0f});
    assert_skin(&c, 2, 0, NULL, NULL);
    cr_assert_eq(c.h.stats.influences_dropped, 4);
    cr_assert_eq(c.h.log.count, 1);
    cr_assert(diag_log_has(&c.h.log, KILN_ERR_CAST_INDEX_RANGE, KILN_SEVERITY_ERROR));
    skin_case_free(&c);
}

Test(bake_skin, mi_1_is_rigid_whatever_wv_says)
{
    static const uint32_t wb[] = {2, 0, 1};
    static const float wv[] = {0.3f, 0.0f, 7.0f};
    test_skeleton sk;
    skeleton_init(&sk, 3, NULL);
    skin_case c;
    cr_assert_eq(skin_bake(&c, 1, wb, wv, 0, &sk.s), KILN_OK);
    cr_assert_eq(c.m.rec.influences, 1);
    for (uint32_t v = 0; v < 3; v++) assert_skin(&c, v, 1, (uint32_t[]){wb[v]}, (float[]){1.0f});
    skin_case_free(&c);
}

Test(bake_skin, unweighted_vertex_has_all_zero_weights)
{
    static const uint32_t wb[] = {1, 2, 0, 0, 1, 0};
    static const float wv[] = {0.5f, 0.5f, 0, 0, 1e-9f, 0};
    test_skeleton sk;
    skeleton_init(&sk, 3, NULL);
    skin_case c;
    cr_assert_eq(skin_bake(&c, 2, wb, wv, 0, &sk.s), KILN_OK);
    assert_skin(&c, 0, 2, (uint32_t[]){1, 2}, (float[]){0.5f, 0.5f});
    assert_skin(&c, 1, 0, NULL, NULL);
    assert_skin(&c, 2, 0, NULL, NULL); /* 1e-9 alone cannot be normalised */
    const float *w = f32_at(stream_of(&c.m, KILN_ATTR_WEIGHTS, 0), 2);
    cr_assert(w[0] == 0.0f && w[1] == 0.0f);
    skin_case_free(&c);
}

Test(bake_skin, joints_use_the_sorted_bone_order)
{
    static const uint32_t perm[4] = {2, 0, 3, 1}; /* Cast bone b is sorted bone perm[b] */
    static const uint32_t wb[] = {0, 3, 1, 2, 2, 0};
    static const float wv[] = {0.75f, 0.25f, 0.5f, 0.5f, 1, 0};
    test_skeleton sk;
    skeleton_init(&sk, 4, perm);
    skin_case c;
    cr_assert_eq(skin_bake(&c, 2, wb, wv, 0, &sk.s), KILN_OK);
    assert_skin(&c, 0, 2, (uint32_t[]){2, 1}, (float[]){0.75f, 0.25f});
    assert_skin(&c, 1, 2, (uint32_t[]){0, 3}, (float[]){0.5f, 0.5f}); /* tie broken on the sorted index */
    assert_skin(&c, 2, 1, (uint32_t[]){3}, (float[]){1.0f});
    skin_case_free(&c);
}

Test(bake_skin, weights_without_skeleton_are_ignored)
{
    static const uint32_t wb[] = {0, 1, 2};
    skin_case c;
    cr_assert_eq(skin_bake(&c, 1, wb, NULL, 0, NULL), KILN_OK);
    cr_assert_eq(c.m.skinned, 0);
    cr_assert_eq(c.m.rec.influences, 0);
    cr_assert_null(stream_of(&c.m, KILN_ATTR_JOINTS, 0));
    cr_assert_null(stream_of(&c.m, KILN_ATTR_WEIGHTS, 0));
    cr_assert(diag_log_has(&c.h.log, KILN_ERR_NOT_FOUND, KILN_SEVERITY_WARNING));
    skin_case_free(&c);
}

Test(bake_skin, dual_quaternion_method_is_kept)
{
    static const uint32_t wb[] = {0, 1, 2};
    test_skeleton sk;
    skeleton_init(&sk, 3, NULL);
    skin_case c;
    skin_setup(&c, 1, wb, NULL);
    c.in.sm = "quaternion";
    cr_assert_eq(bake(&c.in, 0, 0, &sk.s, &c.h, &c.b, &c.m), KILN_OK);
    cr_assert_eq(c.m.rec.skinning, KILN_SKIN_DUAL_QUAT);
    skin_case_free(&c);
}

/* Skin streams follow the vertices through meshoptimizer's reordering. */
Test(bake_skin, optimised_skin_matches_hand_normalised_input)
{
    grid g;
    grid_make(&g, 10, 8);
    mesh_in in = grid_mesh(&g);
    uint32_t *wb = malloc(g.n * 6 * 4);
    float *wv = malloc(g.n * 6 * 4);
    uint32_t seed = 7;
    for (uint32_t i = 0; i < g.n * 6; i++) {
        wb[i] = lcg(&seed) % 12;
        wv[i] = (lcg(&seed) % 4 == 0) ? 0.0f : frand(&seed, 0.0f, 1.0f);
    }
    in.mi = 6;
    in.wb = wb;
    in.wv = wv;
    test_skeleton sk;
    skeleton_init(&sk, 10, NULL); /* bones 10 and 11 are out of range */
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, 0, 3, &sk.s, &h, &b, &m), KILN_OK);
    assert_same_triangles(&in, &m);
    const kiln__stream *pos = stream_of(&m, KILN_ATTR_POSITION, 0);
    for (uint32_t v = 0; v < m.rec.vertex_count; v++) {
        /* grid positions are distinct: find the input vertex by position */
        uint32_t src = UINT32_MAX;
        for (uint32_t u = 0; u < g.n && src == UINT32_MAX; u++)
            if (memcmp(g.vp + u * 3, f32_at(pos, v), 12) == 0) src = u;
        cr_assert_neq(src, UINT32_MAX);
        skin_set want = expected_skin(&in, src, 3, &sk.s), got = output_skin(&m, v);
        cr_assert(same_skin(&want, &got), "vertex %u (input %u)", v, src);
    }
    kiln__mesh_free(NULL, &m);
    built_free(&b);
    free(wb);
    free(wv);
    grid_free(&g);
}

/* ---- quantisation ------------------------------------------------------------------------------ */

static void quantize_fixture(grid *g, uint32_t seed)
{
    grid_make(g, 16, 16);
    for (uint32_t v = 0; v < g->n; v++) {
        g->vp[v * 3] = frand(&seed, -40.0f, 25.0f);
        g->vp[v * 3 + 1] = frand(&seed, 100.0f, 101.0f);
        g->vp[v * 3 + 2] = frand(&seed, -0.001f, 0.001f);
        float n[3] = {frand(&seed, -1, 1), frand(&seed, -1, 1), frand(&seed, -1, 1)};
        float l = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int c = 0; c < 3; c++) g->vn[v * 3 + (uint32_t)c] = n[c] / l;
        g->uv1[v * 2] = frand(&seed, -3.0f, 5.0f);
        g->uv1[v * 2 + 1] = frand(&seed, 0.25f, 0.5f);
    }
    /* the axes and the octahedron's folds */
    static const float axes[][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1},
                                    {0.70710678f, 0, -0.70710678f}, {0, -0.70710678f, -0.70710678f}};
    memcpy(g->vn, axes, sizeof axes);
}

static double angle_between(const double a[3], const double b[3])
{
    double c[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    return atan2(sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]), a[0] * b[0] + a[1] * b[1] + a[2] * b[2]);
}

/* The decode documented for OCT16x2. */
static void oct_decode_ref(const int16_t q[2], double out[3])
{
    double x = fmax(q[0] / 32767.0, -1.0), y = fmax(q[1] / 32767.0, -1.0);
    double z = 1.0 - fabs(x) - fabs(y), t = fmax(-z, 0.0);
    x -= x >= 0 ? t : -t;
    y -= y >= 0 ? t : -t;
    double l = sqrt(x * x + y * y + z * z);
    out[0] = x / l;
    out[1] = y / l;
    out[2] = z / l;
}

Test(bake_quantize, positions_within_half_a_step)
{
    grid g;
    quantize_fixture(&g, 11);
    mesh_in in = grid_mesh(&g);
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, KILN_BAKE_NO_OPTIMIZE | KILN_BAKE_QUANTIZE_POSITIONS, 0, NULL, &h, &b, &m), KILN_OK);
    const kiln__stream *s = stream_of(&m, KILN_ATTR_POSITION, 0);
    cr_assert_eq(s->desc.format, KILN_FORMAT_UNORM16x4);
    cr_assert_eq(s->desc.stride, 8);
    cr_assert_eq(s->desc.components, 4);
    for (int c = 0; c < 3; c++) {
        cr_assert_eq(s->desc.decode_offset[c], m.rec.bounds_min[c]);
        cr_assert_float_eq(s->desc.decode_scale[c], m.rec.bounds_max[c] - m.rec.bounds_min[c], 1e-6);
    }
    const uint16_t *q = s->data;
    for (uint32_t v = 0; v < g.n; v++) {
        cr_assert_eq(q[v * 4 + 3], 0);
        for (uint32_t c = 0; c < 3; c++) {
            float ext = s->desc.decode_scale[c], off = s->desc.decode_offset[c];
            float dec = off + ext * ((float)q[v * 4 + c] / 65535.0f);
            float mag = fmaxf(fabsf(m.rec.bounds_min[c]), fabsf(m.rec.bounds_max[c]));
            double bound = ext / 65535.0 / 2.0 + 4.0 * FLT_EPSILON * mag;
            cr_assert_leq(fabs((double)dec - g.vp[v * 3 + c]), bound, "vertex %u axis %u", v, c);
        }
    }
    kiln__mesh_free(NULL, &m);
    built_free(&b);
    grid_free(&g);
}

Test(bake_quantize, flat_axis_decodes_exactly)
{
    grid g;
    grid_make(&g, 5, 5);
    for (uint32_t v = 0; v < g.n; v++) g.vp[v * 3 + 2] = 2.5f;
    mesh_in in = grid_mesh(&g);
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, KILN_BAKE_QUANTIZE_POSITIONS, 0, NULL, &h, &b, &m), KILN_OK);
    const kiln__stream *s = stream_of(&m, KILN_ATTR_POSITION, 0);
    cr_assert_eq(s->desc.decode_offset[2], 2.5f);
    cr_assert_eq(s->desc.decode_scale[2], 0.0f);
    for (uint32_t v = 0; v < m.rec.vertex_count; v++) cr_assert_eq(((const uint16_t *)s->data)[v * 4 + 2], 0);
    cr_assert_eq(m.rec.index_count, g.index_count);
    kiln__mesh_free(NULL, &m);
    built_free(&b);
    grid_free(&g);
}

Test(bake_quantize, octahedral_normals_and_tangents_within_1e4_rad)
{
    grid g;
    quantize_fixture(&g, 23);
    mesh_in in = grid_mesh(&g);
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, KILN_BAKE_NO_OPTIMIZE | KILN_BAKE_QUANTIZE_NORMALS, 0, NULL, &h, &b, &m), KILN_OK);
    const uint32_t sems[2] = {KILN_ATTR_NORMAL, KILN_ATTR_TANGENT};
    const float *srcs[2] = {g.vn, g.vt};
    double worst = 0.0;
    for (int k = 0; k < 2; k++) {
        const kiln__stream *s = stream_of(&m, sems[k], 0);
        cr_assert_eq(s->desc.format, KILN_FORMAT_OCT16x2);
        cr_assert_eq(s->desc.stride, 4);
        cr_assert_eq(s->desc.components, 2);
        const int16_t *q = s->data;
        for (uint32_t v = 0; v < g.n; v++) {
            double want[3], got[3];
            for (int c = 0; c < 3; c++) want[c] = srcs[k][v * 3 + (uint32_t)c];
            oct_decode_ref(q + v * 2, got);
            double e = angle_between(want, got);
            if (e > worst) worst = e;
        }
    }
    cr_assert_lt(worst, 1e-4, "worst angle %g rad", worst);
    fprintf(stderr, "octahedral 16-bit: worst error %.3g rad\n", worst);
    /* positions stay lossless */
    cr_assert_eq(stream_of(&m, KILN_ATTR_POSITION, 0)->desc.format, KILN_FORMAT_F32x3);
    kiln__mesh_free(NULL, &m);
    built_free(&b);
    grid_free(&g);
}

/* The encoder directly, on many random directions plus the zero vector. */
Test(bake_quantize, octahedral_worst_case_over_many_directions)
{
    const uint32_t n = 200000;
    kiln__stream s;
    cr_assert_eq(kiln__stream_alloc(NULL, &s, KILN_ATTR_NORMAL, KILN_FORMAT_F32x3, 0, 3, n, 12), KILN_OK);
    float *v = s.data;
    float *copy = malloc((size_t)n * 12);
    uint32_t seed = 1234;
    for (uint32_t i = 1; i < n; i++) {
        float d[3], l;
        do {
            for (int c = 0; c < 3; c++) d[c] = frand(&seed, -1, 1);
            l = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        } while (l < 1e-3f || l > 1.0f);
        for (int c = 0; c < 3; c++) v[i * 3 + (uint32_t)c] = d[c] / l;
    }
    memcpy(copy, v, (size_t)n * 12);
    cr_assert_eq(kiln__quantize_octahedral(NULL, &s), KILN_OK);
    cr_assert_eq(s.desc.format, KILN_FORMAT_OCT16x2);
    const int16_t *q = s.data;
    cr_assert(q[0] == 0 && q[1] == 0, "the zero vector is stored as (0, 0)");
    double worst = 0.0;
    for (uint32_t i = 1; i < n; i++) {
        double want[3] = {copy[i * 3], copy[i * 3 + 1], copy[i * 3 + 2]}, got[3];
        oct_decode_ref(q + i * 2, got);
        double e = angle_between(want, got);
        if (e > worst) worst = e;
    }
    cr_assert_lt(worst, 1e-4, "worst angle %g rad", worst);
    fprintf(stderr, "octahedral 16-bit over %u directions: worst error %.3g rad\n", n, worst);
    kiln__stream_free(NULL, &s);
    free(copy);
}

Test(bake_quantize, uvs_use_per_layer_bounds)
{
    grid g;
    quantize_fixture(&g, 5);
    mesh_in in = grid_mesh(&g);
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, KILN_BAKE_NO_OPTIMIZE | KILN_BAKE_QUANTIZE_UVS, 0, NULL, &h, &b, &m), KILN_OK);
    const float *srcs[2] = {g.uv0, g.uv1};
    for (uint32_t l = 0; l < 2; l++) {
        const kiln__stream *s = stream_of(&m, KILN_ATTR_TEXCOORD, l);
        cr_assert_eq(s->desc.format, KILN_FORMAT_UNORM16x2);
        cr_assert_eq(s->desc.stride, 4);
        float lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
        for (uint32_t v = 0; v < g.n; v++)
            for (int c = 0; c < 2; c++) {
                lo[c] = fminf(lo[c], srcs[l][v * 2 + (uint32_t)c]);
                hi[c] = fmaxf(hi[c], srcs[l][v * 2 + (uint32_t)c]);
            }
        const uint16_t *q = s->data;
        for (int c = 0; c < 2; c++) {
            cr_assert_eq(s->desc.decode_offset[c], lo[c]);
            cr_assert_float_eq(s->desc.decode_scale[c], hi[c] - lo[c], 1e-6);
        }
        for (uint32_t v = 0; v < g.n; v++)
            for (uint32_t c = 0; c < 2; c++) {
                float dec = s->desc.decode_offset[c] + s->desc.decode_scale[c] * ((float)q[v * 2 + c] / 65535.0f);
                double bound = (hi[c] - lo[c]) / 65535.0 / 2.0 + 4.0 * FLT_EPSILON * fmax(fabs(lo[c]), fabs(hi[c]));
                cr_assert_leq(fabs((double)dec - srcs[l][v * 2 + c]), bound, "layer %u vertex %u", l, v);
            }
    }
    kiln__mesh_free(NULL, &m);
    built_free(&b);
    grid_free(&g);
}

Test(bake_quantize, all_flags_with_optimisation_keep_the_topology)
{
    grid g;
    quantize_fixture(&g, 99);
    mesh_in in = grid_mesh(&g);
    built b;
    harness h;
    kiln__mesh m;
    uint32_t flags = KILN_BAKE_QUANTIZE_POSITIONS | KILN_BAKE_QUANTIZE_NORMALS | KILN_BAKE_QUANTIZE_UVS;
    cr_assert_eq(bake(&in, flags, 0, NULL, &h, &b, &m), KILN_OK);
    cr_assert_eq(m.rec.index_count, g.index_count);
    cr_assert_eq(m.rec.vertex_count, g.n);
    /* positions decode to their input vertex's position within the bound, via the (lossless)
     * packed colour, which is unique per vertex here */
    const kiln__stream *pos = stream_of(&m, KILN_ATTR_POSITION, 0);
    const uint8_t *col = stream_of(&m, KILN_ATTR_COLOR, 0)->data;
    for (uint32_t v = 0; v < m.rec.vertex_count; v++) {
        uint32_t packed = (uint32_t)col[v * 4] | (uint32_t)col[v * 4 + 1] << 8 | (uint32_t)col[v * 4 + 2] << 16 |
                          (uint32_t)col[v * 4 + 3] << 24;
        uint32_t src = UINT32_MAX;
        for (uint32_t u = 0; u < g.n && src == UINT32_MAX; u++)
            if (g.packed[u] == packed) src = u;
        cr_assert_neq(src, UINT32_MAX);
        const uint16_t *q = (const uint16_t *)pos->data + v * 4;
        for (uint32_t c = 0; c < 3; c++) {
            float dec = pos->desc.decode_offset[c] + pos->desc.decode_scale[c] * ((float)q[c] / 65535.0f);
            cr_assert_leq(fabs((double)dec - g.vp[src * 3 + c]), pos->desc.decode_scale[c] / 65535.0 + 1e-4);
        }
    }
    kiln__mesh_free(NULL, &m);
    built_free(&b);
    grid_free(&g);
}

Test(bake_quantize, range_beyond_float_stays_lossless)
{
    static const float vp[] = {-3e38f, 0, 0, 3e38f, 1, 0, 0, 2, 1};
    static const float uv[] = {0, 0, 1, 0, 0, 1};
    static const uint32_t f[] = {0, 1, 2};
    mesh_in in = plain_mesh(vp, 3, f, 3);
    in.uv_layers = 1;
    in.uv[0] = uv;
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, KILN_BAKE_QUANTIZE_POSITIONS | KILN_BAKE_QUANTIZE_UVS, 0, NULL, &h, &b, &m), KILN_OK);
    cr_assert_eq(stream_of(&m, KILN_ATTR_POSITION, 0)->desc.format, KILN_FORMAT_F32x3);
    cr_assert_eq(stream_of(&m, KILN_ATTR_TEXCOORD, 0)->desc.format, KILN_FORMAT_UNORM16x2);
    cr_assert(diag_log_has(&h.log, KILN_ERR_LIMIT, KILN_SEVERITY_WARNING));
    cr_assert_eq(m.rec.bounds_min[0], -3e38f);
    cr_assert_eq(m.rec.bounds_max[0], 3e38f);
    kiln__mesh_free(NULL, &m);
    built_free(&b);
}

/* ---- colours ---------------------------------------------------------------------------------- */

static float srgb_ref(float c)
{
    return c <= 0.04045f ? c / 12.92f : powf((c + 0.055f) / 1.055f, 2.4f);
}

Test(bake_color, srgb_flag_decodes_rgb_to_linear_floats)
{
    static const float vp[] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    static const uint32_t f[] = {0, 1, 2};
    static const uint32_t packed[] = {0xFF0000FFu, 0x80808080u, 0x00FF0A00u};
    static const float rgba[] = {0.5f, 0.25f, 1.0f, 0.5f, 0, 0, 0, 0, 1, 1, 1, 1};
    mesh_in in = plain_mesh(vp, 3, f, 3);
    in.color_layers = 2;
    in.packed[0] = packed;
    in.rgba[1] = rgba;
    built b;
    harness h;
    kiln__mesh m;
    cr_assert_eq(bake(&in, KILN_BAKE_NO_OPTIMIZE | KILN_BAKE_SRGB_VERTEX_COLORS, 0, NULL, &h, &b, &m), KILN_OK);
    const kiln__stream *c0 = stream_of(&m, KILN_ATTR_COLOR, 0), *c1 = stream_of(&m, KILN_ATTR_COLOR, 1);
    cr_assert_eq(c0->desc.format, KILN_FORMAT_F32x4);
    cr_assert_eq(c0->desc.stride, 16);
    cr_assert_eq(c1->desc.format, KILN_FORMAT_F32x4);
    for (uint32_t v = 0; v < 3; v++) {
        const float *o = f32_at(c0, v);
        for (uint32_t c = 0; c < 3; c++)
            cr_assert_float_eq(o[c], srgb_ref((float)((packed[v] >> (8 * c)) & 0xFF) / 255.0f), 1e-6);
        cr_assert_float_eq(o[3], (float)(packed[v] >> 24) / 255.0f, 1e-7, "alpha is linear already");
        const float *p = f32_at(c1, v);
        for (uint32_t c = 0; c < 3; c++) cr_assert_float_eq(p[c], srgb_ref(rgba[v * 4 + c]), 1e-6);
        cr_assert_eq(p[3], rgba[v * 4 + 3]);
    }
    /* 0xFF0000FF is opaque red */
    cr_assert_float_eq(f32_at(c0, 0)[0], 1.0f, 1e-6);
    cr_assert_eq(f32_at(c0, 0)[1], 0.0f);
    kiln__mesh_free(NULL, &m);
    built_free(&b);
}

/* ---- allocation failure ---------------------------------------------------------------------- */

static void check_every_allocation_failure(const mesh_in *in, uint32_t flags, uint32_t max_influences,
                                           const kiln__skeleton *skel)
{
    built b;
    build(in, &b);
    counting_alloc probe = {INT_MAX, 0, 0};
    kiln_allocator pa = counting_allocator(&probe);
    harness h;
    harness_init(&h, &b, flags, max_influences, &pa);
    kiln__mesh m;
    cr_assert_eq(bake_node_mesh(&h.ctx, b.mesh, skel, &m), KILN_OK);
    kiln__mesh_free(&pa, &m);
    cr_assert_eq(probe.live, 0);
    cr_assert_gt(probe.calls, 5);
    for (int fail = 0; fail < probe.calls; fail++) {
        counting_alloc ca = {fail, 0, 0};
        kiln_allocator a = counting_allocator(&ca);
        harness_init(&h, &b, flags, max_influences, &a);
        kiln_result r = bake_node_mesh(&h.ctx, b.mesh, skel, &m);
        /* a refused shrink is not a failure: the larger block is kept */
        cr_assert(r == KILN_OK || r == KILN_ERR_OUT_OF_MEMORY, "fail_at %d: %s", fail, kiln_result_name(r));
        if (r == KILN_OK) kiln__mesh_free(&a, &m);
        else cr_assert_null(m.streams, "fail_at %d leaves output", fail);
        cr_assert_eq(ca.live, 0, "fail_at %d leaks %d blocks", fail, ca.live);
    }
    built_free(&b);
}

static mesh_in skinned_grid(grid *g, uint32_t **wb, float **wv)
{
    grid_make(g, 7, 6);
    mesh_in in = grid_mesh(g);
    *wb = malloc(g->n * 4 * 4);
    *wv = malloc(g->n * 4 * 4);
    uint32_t seed = 3;
    for (uint32_t i = 0; i < g->n * 4; i++) {
        (*wb)[i] = lcg(&seed) % 6;
        (*wv)[i] = frand(&seed, 0.0f, 1.0f);
    }
    in.mi = 4;
    in.wb = *wb;
    in.wv = *wv;
    return in;
}

Test(bake_mesh, every_allocation_failure_is_clean)
{
    grid g;
    uint32_t *wb;
    float *wv;
    mesh_in in = skinned_grid(&g, &wb, &wv);
    test_skeleton sk;
    skeleton_init(&sk, 6, NULL);
    check_every_allocation_failure(&in, 0, 2, &sk.s);
    check_every_allocation_failure(&in, KILN_BAKE_QUANTIZE_POSITIONS | KILN_BAKE_QUANTIZE_NORMALS |
                                            KILN_BAKE_QUANTIZE_UVS | KILN_BAKE_SRGB_VERTEX_COLORS, 0, &sk.s);
    check_every_allocation_failure(&in, KILN_BAKE_NO_OPTIMIZE, 8, &sk.s);
    free(wb);
    free(wv);
    grid_free(&g);
}

/* ---- hair ------------------------------------------------------------------------------------ */

static void build_hair(const uint32_t *se, uint32_t strands, const float *pt, uint32_t particles, built *out)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    uint32_t hair = kiln_cast_writer_node(w, model, KILN_CAST_ID_HAIR, 3);
    kiln_cast_writer_prop(w, hair, "se", KILN_CAST_TYPE_INT, se, strands);
    kiln_cast_writer_prop(w, hair, "pt", KILN_CAST_TYPE_VEC3, pt, particles);
    finish_build(w, out);
}

Test(bake_hair, strand_offsets_and_particles)
{
    static const uint32_t se[] = {2, 3};
    float pt[21];
    for (int i = 0; i < 21; i++) pt[i] = (float)i * 0.5f - 2.0f;
    built b;
    build_hair(se, 2, pt, 7, &b);
    harness h;
    harness_init(&h, &b, 0, 0, NULL);
    kiln__hair hr;
    cr_assert_eq(kiln__bake_hair(&h.ctx, source_hair(b.hair), 0, &hr), KILN_OK);
    cr_assert_str_eq(hr.name, "hair0");
    cr_assert_eq(hr.material, KILN_BLOB_NONE);
    cr_assert_eq(hr.strand_count, 2);
    cr_assert_eq(hr.particle_count, 7);
    cr_assert_eq(hr.strands.desc.semantic, KILN_ATTR_HAIR_STRANDS);
    cr_assert_eq(hr.strands.desc.format, KILN_FORMAT_U32x1);
    cr_assert_eq(hr.strands.desc.count, 3);
    cr_assert_eq(hr.strands.desc.stride, 4);
    const uint32_t *off = hr.strands.data;
    cr_assert(off[0] == 0 && off[1] == 3 && off[2] == 7);
    cr_assert_eq(hr.particles.desc.semantic, KILN_ATTR_HAIR_PARTICLES);
    cr_assert_eq(hr.particles.desc.format, KILN_FORMAT_F32x3);
    cr_assert_eq(hr.particles.desc.count, 7);
    cr_assert_eq(hr.particles.desc.stride, 12);
    cr_assert_eq(memcmp(hr.particles.data, pt, sizeof pt), 0);
    kiln__hair_free(NULL, &hr);
    built_free(&b);
}

Test(bake_hair, non_finite_particles_become_zero)
{
    static const uint32_t se[] = {1};
    float pt[6] = {1, 2, 3, NAN, 5, -INFINITY};
    built b;
    build_hair(se, 1, pt, 2, &b);
    harness h;
    harness_init(&h, &b, 0, 0, NULL);
    kiln__hair hr;
    cr_assert_eq(kiln__bake_hair(&h.ctx, source_hair(b.hair), 0, &hr), KILN_OK);
    const float *p = hr.particles.data;
    cr_assert(p[0] == 1 && p[3] == 0 && p[4] == 5 && p[5] == 0);
    cr_assert(diag_log_has(&h.log, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING));
    kiln__hair_free(NULL, &hr);
    built_free(&b);
}

Test(bake_hair, hair_without_strands_is_dropped)
{
    static const uint32_t se[1] = {0};
    static const float pt[3] = {0};
    built b;
    build_hair(se, 0, pt, 0, &b); /* empty arrays */
    counting_alloc ca = {-1, 0, 0};
    kiln_allocator a = counting_allocator(&ca);
    harness h;
    harness_init(&h, &b, 0, 0, &a);
    kiln__hair hr;
    cr_assert_neq(kiln__bake_hair(&h.ctx, source_hair(b.hair), 0, &hr), KILN_OK);
    cr_assert_null(hr.name);
    cr_assert_eq(ca.live, 0);
    built_free(&b);
}

Test(bake_hair, every_allocation_failure_is_clean)
{
    static const uint32_t se[] = {1, 0, 4};
    float pt[24] = {0};
    built b;
    build_hair(se, 3, pt, 8, &b);
    for (int fail = 0;; fail++) {
        counting_alloc ca = {fail, 0, 0};
        kiln_allocator a = counting_allocator(&ca);
        harness h;
        harness_init(&h, &b, 0, 0, &a);
        kiln__hair hr;
        kiln_result r = kiln__bake_hair(&h.ctx, source_hair(b.hair), 0, &hr);
        if (r == KILN_OK) {
            kiln__hair_free(&a, &hr);
            cr_assert_eq(ca.live, 0);
            cr_assert_geq(fail, 3);
            break;
        }
        cr_assert_eq(r, KILN_ERR_OUT_OF_MEMORY);
        cr_assert_eq(ca.live, 0, "fail_at %d leaks", fail);
    }
    built_free(&b);
}

/* ---- the shared corpus ---------------------------------------------------------------------- */

/* A copy of the accessor's arrays as plain input (what the file says, independent of the
 * baker). */
typedef struct owned_mesh {
    mesh_in   in;
    float    *vp, *vn, *vt, *uv[MAX_LAYERS], *rgba[MAX_LAYERS], *wv;
    uint32_t *packed[MAX_LAYERS], *wb, *f;
} owned_mesh;

static float *copy_f32(const kiln_cast_array *a, uint32_t comps)
{
    if (!a->count) return NULL;
    float *p = malloc((size_t)a->count * comps * sizeof *p);
    kiln_cast_array_read_f32(a, 0, a->count, p);
    return p;
}

static uint32_t *copy_u32(const kiln_cast_array *a, uint32_t count)
{
    if (!count) return NULL;
    uint32_t *p = malloc((size_t)count * sizeof *p);
    kiln_cast_array_read_u32(a, 0, count, p);
    return p;
}

static void owned_from_cast(const kiln_cast_mesh *cm, owned_mesh *o)
{
    memset(o, 0, sizeof *o);
    mesh_in *in = &o->in;
    in->vertex_count = cm->vertex_count;
    in->vp = o->vp = copy_f32(&cm->positions, 3);
    in->vn = o->vn = copy_f32(&cm->normals, 3);
    in->vt = o->vt = copy_f32(&cm->tangents, 3);
    cr_assert_leq(cm->uv_layer_count, MAX_LAYERS);
    cr_assert_leq(cm->color_layer_count, MAX_LAYERS);
    for (uint32_t l = 0; l < cm->uv_layer_count; l++) {
        cr_assert_eq(cm->uv[l].count, cm->vertex_count);
        in->uv[in->uv_layers++] = o->uv[l] = copy_f32(&cm->uv[l], 2);
    }
    for (uint32_t l = 0; l < cm->color_layer_count; l++) {
        cr_assert_eq(cm->color[l].count, cm->vertex_count);
        if (cm->color[l].type == KILN_CAST_TYPE_VEC4) in->rgba[l] = o->rgba[l] = copy_f32(&cm->color[l], 4);
        else in->packed[l] = o->packed[l] = copy_u32(&cm->color[l], cm->vertex_count);
        in->color_layers++;
    }
    in->mi = cm->max_influence;
    in->wb = o->wb = copy_u32(&cm->weight_bones, cm->weight_bones.count);
    in->wv = o->wv = copy_f32(&cm->weight_values, 1);
    in->index_count = cm->face_count * 3;
    in->f = o->f = copy_u32(&cm->faces, in->index_count);
}

static void owned_free(owned_mesh *o)
{
    free(o->vp); free(o->vn); free(o->vt); free(o->wv); free(o->wb); free(o->f);
    for (int l = 0; l < MAX_LAYERS; l++) { free(o->uv[l]); free(o->rgba[l]); free(o->packed[l]); }
}

typedef struct tuple_key {
    uint64_t hash;
    uint32_t vertex;
} tuple_key;

static int cmp_key(const void *a, const void *b)
{
    const tuple_key *x = a, *y = b;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    return x->vertex < y->vertex ? -1 : x->vertex > y->vertex;
}

static uint64_t tuple_hash(const uint32_t *t, uint32_t n)
{
    uint64_t h = 0x13198A2E03707344ull;
    for (uint32_t i = 0; i < n; i++) h = mix(h, t[i]);
    return h;
}

/* Every output vertex's skin equals the hand-normalised skin of an input vertex with the same
 * attributes. */
static void assert_skin_matches(const mesh_in *in, const kiln__mesh *m, uint32_t k, const kiln__skeleton *skel)
{
    static uint32_t t[MAX_WORDS];
    tuple_key *keys = malloc((size_t)in->vertex_count * sizeof *keys);
    for (uint32_t v = 0; v < in->vertex_count; v++) {
        keys[v].hash = tuple_hash(t, input_tuple(in, v, t));
        keys[v].vertex = v;
    }
    qsort(keys, in->vertex_count, sizeof *keys, cmp_key);
    for (uint32_t v = 0; v < m->rec.vertex_count; v++) {
        uint64_t want = tuple_hash(t, output_tuple(m, v, t));
        size_t lo = 0, hi = in->vertex_count; /* first key with this hash */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (keys[mid].hash < want) lo = mid + 1;
            else hi = mid;
        }
        skin_set got = output_skin(m, v);
        int ok = 0;
        for (size_t i = lo; i < in->vertex_count && keys[i].hash == want && !ok; i++) {
            skin_set exp = expected_skin(in, keys[i].vertex, k, skel);
            ok = same_skin(&exp, &got);
        }
        cr_assert(ok, "output vertex %u: skin does not match its input vertex", v);
    }
    free(keys);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Bakes every mesh of a corpus file with an identity bone remap and checks triangles, counts
 * and skin against the file's own arrays. Returns the number of meshes. */
static uint32_t bake_corpus_file(const char *name, uint32_t flags, int time_it)
{
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip("corpus not found at %s: skipping", dir);
    file_bytes fb;
    cr_assert(corpus_read(dir, name, &fb), "cannot read %s", name);
    kiln_cast_doc *doc;
    kiln_diag err;
    cr_assert_eq(kiln_cast_parse(fb.data, fb.size, NULL, &doc, &err), KILN_OK, "%s: %s", name, err.message);
    built b = {NULL, doc, KILN_CAST_NONE, KILN_CAST_NONE};
    uint32_t meshes = 0;
    for (uint32_t node = 0; node < kiln_cast_node_count(doc); node++) {
        if (kiln_cast_node_at(doc, node)->id != KILN_CAST_ID_MESH) continue;
        uint32_t model = kiln_cast_node_at(doc, node)->parent;
        uint32_t skel_node = kiln_cast_child(doc, model, KILN_CAST_ID_SKELETON, 0);
        test_skeleton sk;
        skeleton_init(&sk, skel_node == KILN_CAST_NONE ? 0 : kiln_cast_child_count(doc, skel_node, KILN_CAST_ID_BONE),
                      NULL);
        kiln_cast_mesh cm;
        cr_assert_eq(kiln_cast_get_mesh(doc, node, &cm, NULL), KILN_OK);
        owned_mesh o;
        owned_from_cast(&cm, &o);

        harness h;
        harness_init(&h, &b, flags, 0, NULL);
        kiln__mesh m;
        double t0 = now_ms();
        kiln_result r = bake_node_mesh(&h.ctx, node, skel_node == KILN_CAST_NONE ? NULL : &sk.s, &m);
        double t1 = now_ms();
        cr_assert_eq(r, KILN_OK, "%s mesh node %u: %s", name, node, kiln_result_name(r));
        if (time_it)
            fprintf(stderr, "%s: mesh %u: %u vertices, %u triangles -> %u vertices: %.1f ms (%s)\n", name, node,
                    cm.vertex_count, cm.face_count, m.rec.vertex_count, t1 - t0,
                    flags & KILN_BAKE_NO_OPTIMIZE ? "no optimisation" : "meshoptimizer");
        assert_same_triangles(&o.in, &m);
        cr_assert_eq(h.stats.triangles_out, m.rec.index_count / 3);
        cr_assert_eq(h.stats.triangles_in, cm.face_count);
        cr_assert_eq(h.stats.triangles_in - h.stats.triangles_out,
                     (uint64_t)cm.bad_index_face_count + cm.degenerate_face_count);
        if (o.in.mi && skel_node != KILN_CAST_NONE) {
            cr_assert(m.skinned);
            assert_skin_matches(&o.in, &m, 8, &sk.s);
        }
        kiln__mesh_free(NULL, &m);
        owned_free(&o);
        meshes++;
    }
    kiln_cast_free(doc);
    file_bytes_free(&fb);
    return meshes;
}

Test(bake_corpus, mesh_attributes)
{
    cr_assert_eq(bake_corpus_file("mesh_attributes.cast", 0, 0), 2);
    cr_assert_eq(bake_corpus_file("mesh_attributes.cast", KILN_BAKE_NO_OPTIMIZE, 0), 2);
}

Test(bake_corpus, mesh_attributes_layers_and_colours)
{
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip("corpus not found at %s: skipping", dir);
    file_bytes fb;
    cr_assert(corpus_read(dir, "mesh_attributes.cast", &fb));
    built b = {NULL, NULL, KILN_CAST_NONE, KILN_CAST_NONE};
    cr_assert_eq(kiln_cast_parse(fb.data, fb.size, NULL, &b.doc, NULL), KILN_OK);
    uint32_t mesh0 = first_node(b.doc, KILN_CAST_ID_MESH);
    uint32_t mesh1 = kiln_cast_node_at(b.doc, mesh0)->next_sibling;
    while (kiln_cast_node_at(b.doc, mesh1)->id != KILN_CAST_ID_MESH) mesh1 = kiln_cast_node_at(b.doc, mesh1)->next_sibling;
    harness h;
    harness_init(&h, &b, KILN_BAKE_NO_OPTIMIZE, 0, NULL);
    kiln__mesh m;
    cr_assert_eq(bake_node_mesh(&h.ctx, mesh0, NULL, &m), KILN_OK);
    cr_assert_eq(m.rec.vertex_count, 4);
    cr_assert_eq(m.rec.index_count, 6);
    cr_assert_eq(m.rec.uv_layers, 2);
    cr_assert_eq(m.rec.color_layers, 2);
    const kiln__stream *c0 = stream_of(&m, KILN_ATTR_COLOR, 0);
    cr_assert_eq(c0->desc.format, KILN_FORMAT_U8x4_UNORM);
    const uint8_t *red = c0->data;
    cr_assert(red[0] == 255 && red[1] == 0 && red[2] == 0 && red[3] == 255, "c0[0] is opaque red");
    cr_assert_eq(stream_of(&m, KILN_ATTR_COLOR, 1)->desc.format, KILN_FORMAT_F32x4);
    kiln__mesh_free(NULL, &m);
    cr_assert_eq(bake_node_mesh(&h.ctx, mesh1, NULL, &m), KILN_OK);
    cr_assert_eq(m.rec.color_layers, 1, "legacy vc is one colour layer");
    kiln__mesh_free(NULL, &m);
    kiln_cast_free(b.doc);
    file_bytes_free(&fb);
}

Test(bake_corpus, weights_files)
{
    static const char *files[] = {"weights_mi1_b.cast", "weights_mi4_h.cast", "weights_mi8_i.cast"};
    for (int i = 0; i < 3; i++) cr_assert_eq(bake_corpus_file(files[i], 0, 0), 1, "%s", files[i]);
}

Test(bake_corpus, weights_mi8_same_bone_twice)
{
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip("corpus not found at %s: skipping", dir);
    file_bytes fb;
    cr_assert(corpus_read(dir, "weights_mi8_i.cast", &fb));
    built b = {NULL, NULL, KILN_CAST_NONE, KILN_CAST_NONE};
    cr_assert_eq(kiln_cast_parse(fb.data, fb.size, NULL, &b.doc, NULL), KILN_OK);
    b.mesh = first_node(b.doc, KILN_CAST_ID_MESH);
    kiln_cast_mesh cm;
    cr_assert_eq(kiln_cast_get_mesh(b.doc, b.mesh, &cm, NULL), KILN_OK);
    cr_assert_eq(cm.max_influence, 8);
    uint32_t wb[8];
    kiln_cast_array_read_u32(&cm.weight_bones, 0, 8, wb);
    test_skeleton sk;
    skeleton_init(&sk, 10, NULL);
    harness h;
    harness_init(&h, &b, KILN_BAKE_NO_OPTIMIZE, 0, NULL);
    kiln__mesh m;
    cr_assert_eq(bake_node_mesh(&h.ctx, b.mesh, &sk.s, &m), KILN_OK);
    cr_assert_eq(m.rec.skinning, KILN_SKIN_DUAL_QUAT);
    skin_set s = output_skin(&m, 0);
    cr_assert_eq(s.n, 1, "vertex 0: one bone with 0.5 + 0.5");
    cr_assert_eq(s.joint[0], wb[0]);
    cr_assert_float_eq(s.weight[0], 1.0f, 1e-6);
    kiln__mesh_free(NULL, &m);
    kiln_cast_free(b.doc);
    file_bytes_free(&fb);
}

Test(bake_corpus, large_500k, .timeout = 600)
{
    cr_assert_eq(bake_corpus_file("large_500k.cast", 0, 1), 1);
    cr_assert_eq(bake_corpus_file("large_500k.cast", KILN_BAKE_NO_OPTIMIZE, 1), 1);
}
