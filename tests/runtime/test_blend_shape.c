/* Blend shapes end to end (Cast reference C.5, D.7): the baker's sparse deltas in the baked
 * vertex order (dedup, reordering and quantisation included), the loader's checks of the BSHP
 * section, and kiln_blend_shapes_apply on every SIMD path, checked against values computed here
 * from the Cast inputs:
 *   - hand-computed weighted sums (overlapping shapes, clamping to [0, ts], ts = 2, missing ts,
 *     negative and NaN weights), exact in binary;
 *   - the dedup: duplicate vertices merge only when every shape moves them alike;
 *   - after the remap, base + delta is the authored target of every listed vertex and every
 *     baked triangle is an authored triangle under every shape;
 *   - quantised positions: the same float deltas, results within the quantisation error;
 *   - corrupted records rejected with the specific error and path;
 *   - the scalar, SSE2, AVX2 and AVX-512 paths within 1e-6 relative of each other, AVX-512
 *     bit-identical to AVX2 (it runs the AVX2 kernels);
 *   - clip weights by name (D.7), the bundled samples, the corpus (skipped when absent).
 * Cast inputs are written in memory with the writer. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim_fixture.h"
#include "blob_build.h"
#include "json_read.h"
#include "kiln/bake/bake.h"
#include "kiln/blend_shape.h"
#include "kiln/blob.h"
#include "kiln/rig.h"
#include "kiln/skin.h"
#include "kiln/bake/cast_scene.h"
#include "kiln/bake/cast_write.h"
#include "test_util.h"

#define MESH_HASH 100u
#define TOL 1e-6

/* ---- Cast inputs ------------------------------------------------------------------------------ */
typedef struct shape_in {
    const char     *name;
    const uint32_t *vi;
    const float    *vp;
    uint32_t        vi_count, vp_count;
    float           ts;        /* < 0: no ts property */
    uint64_t        base;      /* mesh hash; 0: MESH_HASH */
} shape_in;

typedef struct model_in {
    uint32_t        vertex_count;
    const float    *vp;
    const float    *uv;        /* optional, one layer */
    const uint32_t *f;
    uint32_t        index_count;
    const shape_in *shapes;
    uint32_t        shape_count;
} model_in;

typedef struct cast_bytes {
    void    *data;
    uint64_t size;
} cast_bytes;

static void write_shape(kiln_cast_writer *w, uint32_t model, const shape_in *s, uint64_t hash)
{
    uint32_t node = kiln_cast_writer_node(w, model, KILN_CAST_ID_BLENDSHAPE, hash);
    kiln_cast_writer_string(w, node, "n", s->name);
    kiln_cast_writer_u64(w, node, "b", s->base ? s->base : MESH_HASH);
    kiln_cast_writer_ints(w, node, "vi", s->vi, s->vi_count);
    kiln_cast_writer_floats(w, node, "vp", KILN_CAST_TYPE_VEC3, s->vp, s->vp_count);
    if (s->ts >= 0.0f) kiln_cast_writer_floats(w, node, "ts", KILN_CAST_TYPE_FLOAT, &s->ts, 1);
}

static uint32_t write_model(kiln_cast_writer *w, uint32_t root, const model_in *m)
{
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    kiln_cast_writer_string(w, model, "n", "model");
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, MESH_HASH);
    kiln_cast_writer_string(w, mesh, "n", "mesh");
    kiln_cast_writer_prop(w, mesh, "vp", KILN_CAST_TYPE_VEC3, m->vp, m->vertex_count);
    if (m->uv) {
        const uint32_t one = 1;
        kiln_cast_writer_ints(w, mesh, "ul", &one, 1);
        kiln_cast_writer_prop(w, mesh, "u0", KILN_CAST_TYPE_VEC2, m->uv, m->vertex_count);
    }
    kiln_cast_writer_ints(w, mesh, "f", m->f, m->index_count);
    for (uint32_t i = 0; i < m->shape_count; i++) write_shape(w, model, &m->shapes[i], 1000u + i);
    return model;
}

static cast_bytes finish_cast(kiln_cast_writer *w)
{
    cast_bytes c;
    c.size = kiln_cast_writer_size(w);
    cr_assert_gt(c.size, 0, "writer failed");
    c.data = malloc((size_t)c.size);
    cr_assert_eq(kiln_cast_writer_write(w, c.data, c.size), KILN_OK);
    kiln_cast_writer_destroy(w);
    return c;
}

static cast_bytes cast_of(const model_in *m)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    write_model(w, root, m);
    return finish_cast(w);
}

/* ---- baking and loading ---------------------------------------------------------------------- */
typedef struct baked {
    kiln_bake_result res;
    const kiln_blob *blob;
    diag_log         log;
} baked;

static kiln_result bake_bytes(const cast_bytes *const *inputs, uint32_t count, uint32_t flags, baked *b)
{
    memset(b, 0, sizeof *b);
    kiln_bake_input in[4];
    cr_assert_leq(count, 4);
    for (uint32_t i = 0; i < count; i++) {
        in[i].path = i ? "anim.cast" : "model.cast";
        in[i].data = inputs[i]->data;
        in[i].size = (size_t)inputs[i]->size;
        in[i].format = NULL;
    }
    kiln_bake_options opt;
    memset(&opt, 0, sizeof opt);
    opt.flags = flags;
    opt.diag.fn = diag_log_push;
    opt.diag.user = &b->log;
    kiln_diag err;
    kiln_result r = kiln_bake(in, count, &opt, &b->res, &err);
    if (r != KILN_OK) return r;
    r = kiln_blob_load(b->res.blob, b->res.size, 0, &b->blob, &err);
    cr_assert_eq(r, KILN_OK, "the baked blob does not load: %s", err.message);
    return r;
}

static void bake_model(const model_in *m, uint32_t flags, baked *b)
{
    cast_bytes c = cast_of(m);
    const cast_bytes *in[1] = {&c};
    cr_assert_eq(bake_bytes(in, 1, flags, b), KILN_OK, "bake failed");
    free(c.data);
}

static void baked_free(baked *b) { kiln_bake_result_free(&b->res); }

static const kiln_blob_mesh *mesh0(const baked *b)
{
    uint32_t n;
    const kiln_blob_mesh *m = kiln_blob_meshes(b->blob, &n);
    cr_assert_eq(n, 1u, "one mesh expected, got %u", n);
    return m;
}

static int has_diag(const baked *b, kiln_result code, kiln_severity sev) { return diag_log_has(&b->log, code, sev); }

/* kiln_blend_shapes_apply with packed output. */
static kiln_result apply(const kiln_blob *blob, uint32_t mesh, const uint32_t *shapes, const float *w, uint32_t n,
                         float *out, uint32_t out_count)
{
    kiln_blend_shapes_desc d;
    memset(&d, 0, sizeof d);
    d.blob = blob;
    d.mesh = mesh;
    d.shapes = shapes;
    d.weights = w;
    d.shape_count = n;
    d.out = out;
    d.out_count = out_count;
    return kiln_blend_shapes_apply(&d);
}

static int near(double a, double b, double tol) { return fabs(a - b) <= tol; }

/* ---- hand-computed sums ------------------------------------------------------------------------ */

/* A unit quad; shape "a" (ts 2) moves v1 by (0, 2, 0) and v2 by (0, 0, 4); shape "b" (no ts)
 * moves v2 by (0.5, 0, 0) and v3 by (0, 0, -2); shape "c" (ts 0, read as 1) moves v0 by
 * (0.25, 0, 0). */
static const float quad_vp[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
static const uint32_t quad_f[6] = {0, 1, 2, 0, 2, 3};
static const uint32_t a_vi[2] = {1, 2}, b_vi[2] = {2, 3}, c_vi[1] = {0};
static const float a_vp[6] = {1, 2, 0, 1, 1, 4}, b_vp[6] = {1.5f, 1, 0, 0, 1, -2}, c_vp[3] = {0.25f, 0, 0};

static void bake_quad(uint32_t flags, baked *b)
{
    const shape_in shapes[3] = {{"a", a_vi, a_vp, 2, 2, 2.0f, 0}, {"b", b_vi, b_vp, 2, 2, -1.0f, 0},
                                {"c", c_vi, c_vp, 1, 1, 0.0f, 0}};
    const model_in m = {4, quad_vp, NULL, quad_f, 6, shapes, 3};
    bake_model(&m, flags, b);
}

Test(blend_shape, records_of_hand_made_shapes)
{
    baked b;
    bake_quad(KILN_BAKE_NO_OPTIMIZE, &b);
    uint32_t n;
    const kiln_blob_blend_shape *s = kiln_blob_blend_shapes(b.blob, &n);
    cr_assert_eq(n, 3u);
    const char *names[3] = {"a", "b", "c"};
    const float ts[3] = {2.0f, 1.0f, 1.0f}; /* missing and 0 both read as 1 (C.5) */
    const uint32_t idx[3][2] = {{1, 2}, {2, 3}, {0, 0}};
    const float d[3][6] = {{0, 2, 0, 0, 0, 4}, {0.5f, 0, 0, 0, 0, -2}, {0.25f, 0, 0}};
    for (uint32_t i = 0; i < 3; i++) {
        cr_expect_str_eq(kiln_blob_string(b.blob, s[i].name), names[i]);
        cr_expect_eq(s[i].mesh, 0u);
        cr_expect_eq(s[i].target_scale, ts[i], "shape %s ts %g", names[i], (double)s[i].target_scale);
        cr_expect_eq(s[i].delta_count, i == 2 ? 1u : 2u);
        const uint32_t *ix = kiln_blend_shape_indices(b.blob, &s[i]);
        const float *dd = kiln_blend_shape_deltas(b.blob, &s[i]);
        cr_assert(ix && dd);
        for (uint32_t k = 0; k < s[i].delta_count; k++) {
            cr_expect_eq(ix[k], idx[i][k]);
            for (int c = 0; c < 3; c++)
                cr_expect_eq(dd[3 * k + c], d[i][3 * k + c], "shape %s delta %u.%d", names[i], k, c);
        }
        cr_expect_eq(kiln_blob_find_blend_shape(b.blob, 0, names[i]), i);
        cr_expect_eq(kiln_blob_find(b.blob, KILN_SECTION_BLEND_SHAPES, names[i]), i);
    }
    cr_expect_eq(kiln_blob_find_blend_shape(b.blob, 0, "nope"), KILN_BLOB_NONE);
    cr_expect_eq(kiln_blob_find_blend_shape(b.blob, 1, "a"), KILN_BLOB_NONE);
    uint32_t list[4];
    cr_expect_eq(kiln_blob_mesh_blend_shapes(b.blob, 0, list, 2), 3u);
    cr_expect(list[0] == 0 && list[1] == 1);
    cr_expect_eq(kiln_blob_mesh_blend_shapes(b.blob, 1, NULL, 0), 0u);
    /* no shape is reported skipped any more */
    for (int i = 0; i < b.log.count && i < 32; i++)
        cr_expect(strstr(b.log.items[i].message, "BlendShape") == NULL, "%s", b.log.items[i].message);
    baked_free(&b);
}

Test(blend_shape, effective_weight)
{
    cr_expect_eq(kiln_blend_shape_weight(0.5f, 1.0f), 0.5f);
    cr_expect_eq(kiln_blend_shape_weight(3.0f, 2.0f), 2.0f);
    cr_expect_eq(kiln_blend_shape_weight(1.5f, 2.0f), 1.5f);
    cr_expect_eq(kiln_blend_shape_weight(-1.0f, 2.0f), 0.0f);
    cr_expect_eq(kiln_blend_shape_weight(NAN, 2.0f), 0.0f);
    cr_expect_eq(kiln_blend_shape_weight(INFINITY, 2.0f), 2.0f);
}

Test(blend_shape, weighted_sums_on_every_path)
{
    baked b;
    bake_quad(KILN_BAKE_NO_OPTIMIZE, &b);
    const uint32_t shapes[4] = {0, 1, 2, 2};
    /* weights (a, b, c, c again) and the expected quad; every value is exact in binary */
    static const struct {
        float w[4];
        float p[12];
    } cases[] = {
        {{1, 1, 0, 0}, {0, 0, 0, 1, 2, 0, 1.5f, 1, 4, 0, 1, -2}},
        {{1.5f, 0.5f, 0, 0}, {0, 0, 0, 1, 3, 0, 1.25f, 1, 6, 0, 1, -1}},
        {{3, 2, 0, 0}, {0, 0, 0, 1, 4, 0, 1.5f, 1, 8, 0, 1, -2}},             /* clamped to ts: 2 and 1 */
        {{2, 1, 0, 0}, {0, 0, 0, 1, 4, 0, 1.5f, 1, 8, 0, 1, -2}},             /* ts = 2 reached exactly */
        {{-1, -0.5f, -3, 0}, {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0}},           /* negative: 0 */
        {{NAN, 0.25f, 0, 0}, {0, 0, 0, 1, 0, 0, 1.125f, 1, 0, 0, 1, -0.5f}},  /* NaN: 0 */
        {{0, 0, 0.5f, 0.5f}, {0.25f, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0}},       /* listed twice: adds */
        {{0, 0, 2, 0}, {0.25f, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0}},             /* ts 0 in the file: 1 */
    };
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            float out[12];
            memset(out, 0xFF, sizeof out);
            cr_assert_eq(apply(b.blob, 0, shapes, cases[c].w, 4, out, 4), KILN_OK);
            for (int i = 0; i < 12; i++)
                cr_expect(near(out[i], cases[c].p[i], TOL), "%s case %zu value %d: %g, expected %g",
                          kiln_simd_name(paths[p]), c, i, (double)out[i], (double)cases[c].p[i]);
        }
        /* no shapes: the base */
        float out[12];
        cr_assert_eq(apply(b.blob, 0, NULL, NULL, 0, out, 4), KILN_OK);
        cr_expect_arr_eq(out, quad_vp, sizeof out);
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    baked_free(&b);
}

Test(blend_shape, apply_arguments)
{
    baked b;
    bake_quad(KILN_BAKE_NO_OPTIMIZE, &b);
    const uint32_t shapes[1] = {0}, bad[1] = {3};
    const float w[1] = {1};
    float out[20];
    cr_expect_eq(kiln_blend_shapes_apply(NULL), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(apply(b.blob, 0, shapes, w, 1, out, 3), KILN_ERR_BUFFER_TOO_SMALL);
    cr_expect_eq(apply(b.blob, 1, NULL, NULL, 0, out, 4), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(apply(b.blob, 0, bad, w, 1, out, 4), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(apply(b.blob, 0, NULL, w, 1, out, 4), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(apply(b.blob, 0, shapes, NULL, 1, out, 4), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(apply(NULL, 0, shapes, w, 1, out, 4), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(apply(b.blob, 0, shapes, w, 1, NULL, 4), KILN_ERR_INVALID_ARGUMENT);
    kiln_blend_shapes_desc d = {b.blob, 0, shapes, w, 1, out, 10, 4};
    cr_expect_eq(kiln_blend_shapes_apply(&d), KILN_ERR_INVALID_ARGUMENT, "stride below 12");
    d.out_stride = 14;
    cr_expect_eq(kiln_blend_shapes_apply(&d), KILN_ERR_INVALID_ARGUMENT, "stride not a multiple of 4");
    /* a strided output: only x, y, z of each element are written */
    for (int i = 0; i < 20; i++) out[i] = -7.0f;
    d.out_stride = 20;
    cr_assert_eq(kiln_blend_shapes_apply(&d), KILN_OK);
    const float want[4][3] = {{0, 0, 0}, {1, 2, 0}, {1, 1, 4}, {0, 1, 0}};
    for (int v = 0; v < 4; v++) {
        for (int c = 0; c < 3; c++) cr_expect_eq(out[5 * v + c], want[v][c]);
        if (v < 3) cr_expect(out[5 * v + 3] == -7.0f && out[5 * v + 4] == -7.0f, "padding of element %d written", v);
    }
    baked_free(&b);
}

/* ---- pair resolution and reports ---------------------------------------------------------------- */
Test(blend_shape, pairs_resolved_and_reported)
{
    /* vi 7 is past the 4 vertices; v1 is listed twice (the last pair wins); v0 is listed at its
     * own position (a zero delta, dropped); a NaN target drops its pair; vi has one entry more
     * than vp (min of the two) */
    static const uint32_t vi[6] = {1, 7, 1, 0, 3, 2};
    static const float vp[15] = {9, 9, 9, 5, 5, 5, 1, 0, 5, 0, 0, 0, NAN, 0, 0};
    const shape_in shapes[1] = {{"s", vi, vp, 6, 5, -1.0f, 0}};
    const model_in m = {4, quad_vp, NULL, quad_f, 6, shapes, 1};
    baked b;
    bake_model(&m, KILN_BAKE_NO_OPTIMIZE, &b);
    uint32_t n;
    const kiln_blob_blend_shape *s = kiln_blob_blend_shapes(b.blob, &n);
    cr_assert_eq(n, 1u);
    cr_assert_eq(s->delta_count, 1u, "only v1 moves, got %u deltas", s->delta_count);
    cr_expect_eq(kiln_blend_shape_indices(b.blob, s)[0], 1u);
    const float *d = kiln_blend_shape_deltas(b.blob, s);
    cr_expect(d[0] == 0 && d[1] == 0 && d[2] == 5, "last pair wins: (%g %g %g)", (double)d[0], (double)d[1],
              (double)d[2]);
    cr_expect(has_diag(&b, KILN_ERR_CAST_INDEX_RANGE, KILN_SEVERITY_ERROR), "vi past the vertex count not reported");
    cr_expect(has_diag(&b, KILN_ERR_CAST_DUPLICATE, KILN_SEVERITY_WARNING), "repeated vi not reported");
    cr_expect(has_diag(&b, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_ERROR), "NaN target not reported");
    cr_expect(has_diag(&b, KILN_ERR_CAST_LENGTH_MISMATCH, KILN_SEVERITY_ERROR), "vi/vp lengths not reported");
    baked_free(&b);
}

Test(blend_shape, shape_without_baked_base_is_dropped)
{
    /* the base mesh has no valid face, so it is dropped; its shape goes with it (reported) */
    static const uint32_t f_bad[3] = {0, 0, 1}, vi[1] = {1};
    static const float vp[3] = {1, 1, 1};
    static const float tri_vp[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    static const uint32_t tri_f[3] = {0, 1, 2};
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    const shape_in good = {"kept", vi, vp, 1, 1, -1.0f, 300};
    const model_in m = {3, tri_vp, NULL, tri_f, 3, NULL, 0};
    uint32_t model = write_model(w, root, &m);
    uint32_t dropped = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 300);
    kiln_cast_writer_prop(w, dropped, "vp", KILN_CAST_TYPE_VEC3, tri_vp, 3);
    kiln_cast_writer_ints(w, dropped, "f", f_bad, 3);
    write_shape(w, model, &good, 400);
    const shape_in unresolved = {"nowhere", vi, vp, 1, 1, -1.0f, 12345};
    write_shape(w, model, &unresolved, 401);
    cast_bytes c = finish_cast(w);
    const cast_bytes *in[1] = {&c};
    baked b;
    cr_assert_eq(bake_bytes(in, 1, 0, &b), KILN_OK);
    uint32_t n;
    kiln_blob_blend_shapes(b.blob, &n);
    cr_expect_eq(n, 0u, "shapes of a dropped mesh must be dropped");
    cr_expect(has_diag(&b, KILN_ERR_CAST_UNRESOLVED, KILN_SEVERITY_ERROR), "dropped shapes not reported");
    int dropped_reported = 0;
    for (int i = 0; i < b.log.count && i < 32; i++)
        dropped_reported |= strstr(b.log.items[i].message, "'kept' dropped") != NULL;
    cr_expect(dropped_reported, "the shape on the dropped mesh is not named in a report");
    baked_free(&b);
    free(c.data);
}

/* ---- the dedup ------------------------------------------------------------------------------------ */

/* v3 is an exact copy of v0, used by the second face: the dedup merges them unless a shape
 * moves them apart. */
static const float dup_vp[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0};
static const uint32_t dup_f[6] = {0, 1, 2, 3, 2, 1};

static uint32_t index_at(const kiln_blob *blob, const kiln_blob_mesh *m, uint32_t i)
{
    const kiln_blob_stream *s = kiln_blob_mesh_stream(blob, m, KILN_ATTR_INDICES, 0);
    const void *p = kiln_blob_stream_data(blob, s);
    return s->format == KILN_FORMAT_U16x1 ? ((const uint16_t *)p)[i] : ((const uint32_t *)p)[i];
}

static uint32_t dedup_vertices(const shape_in *shapes, uint32_t count, baked *b)
{
    const model_in m = {4, dup_vp, NULL, dup_f, 6, shapes, count};
    bake_model(&m, 0, b);
    return mesh0(b)->vertex_count;
}

Test(blend_shape, dedup_keeps_vertices_moved_differently)
{
    static const uint32_t only3[1] = {3}, both[2] = {0, 3}, only0[1] = {0};
    static const float up1[3] = {0, 0, 1}, up2[6] = {0, 0, 1, 0, 0, 1};
    baked b;
    cr_expect_eq(dedup_vertices(NULL, 0, &b), 3u, "control: without shapes the copies merge");
    baked_free(&b);

    const shape_in s_only3[1] = {{"lift", only3, up1, 1, 1, -1.0f, 0}};
    cr_assert_eq(dedup_vertices(s_only3, 1, &b), 4u, "a shape moving one copy must keep the copies apart");
    {
        const kiln_blob_mesh *m = mesh0(&b);
        uint32_t n;
        const kiln_blob_blend_shape *s = kiln_blob_blend_shapes(b.blob, &n);
        cr_assert_eq(s->delta_count, 1u);
        const uint32_t sh[1] = {0};
        const float w[1] = {1};
        float out[12];
        cr_assert_eq(apply(b.blob, 0, sh, w, 1, out, 4), KILN_OK);
        /* the lifted vertex belongs to the second face (3, 2, 1) only, with its winding */
        uint32_t lifted_faces = 0;
        for (uint32_t t = 0; t < m->index_count / 3; t++) {
            for (uint32_t k = 0; k < 3; k++) {
                const float *p = out + 3 * index_at(b.blob, m, 3 * t + k);
                if (!(p[0] == 0 && p[1] == 0 && p[2] == 1)) continue;
                lifted_faces++;
                const float *next = out + 3 * index_at(b.blob, m, 3 * t + (k + 1) % 3);
                const float *prev = out + 3 * index_at(b.blob, m, 3 * t + (k + 2) % 3);
                cr_expect(next[0] == 0 && next[1] == 1 && prev[0] == 1 && prev[1] == 0,
                          "the lifted vertex is in the wrong face");
            }
        }
        cr_expect_eq(lifted_faces, 1u);
    }
    baked_free(&b);

    const shape_in s_both[1] = {{"lift", both, up2, 2, 2, -1.0f, 0}};
    cr_expect_eq(dedup_vertices(s_both, 1, &b), 3u, "copies moved alike still merge");
    cr_expect_eq(kiln_blob_blend_shapes(b.blob, NULL)->delta_count, 1u, "a merged vertex has one delta");
    baked_free(&b);

    /* the same delta, from two different shapes: not alike under every weight */
    const shape_in s_two[2] = {{"a", only0, up1, 1, 1, -1.0f, 0}, {"b", only3, up1, 1, 1, -1.0f, 0}};
    cr_expect_eq(dedup_vertices(s_two, 2, &b), 4u, "copies moved by different shapes must stay apart");
    baked_free(&b);

    const shape_in s_mixed[2] = {{"a", both, up2, 2, 2, -1.0f, 0}, {"b", only3, up1, 1, 1, -1.0f, 0}};
    cr_expect_eq(dedup_vertices(s_mixed, 2, &b), 4u, "alike in one shape, not in the other: apart");
    baked_free(&b);
}

/* ---- generated meshes: a grid with copies, several shapes ----------------------------------------- */
#define GEN_MAX_SHAPES 80

typedef struct gen_mesh {
    uint32_t  vc, ic, cast_ic;
    float    *vp, *uv;
    uint32_t *f;
    uint32_t  shape_count;
    shape_in  shapes[GEN_MAX_SHAPES];
    char      names[GEN_MAX_SHAPES][16];
    uint32_t *vi[GEN_MAX_SHAPES];
    float    *tp[GEN_MAX_SHAPES];
    float    *target;         /* shape_count x vc x 3: each vertex's position under each shape at weight 1 */
} gen_mesh;

/* side x side grid (uv = grid coordinates), then `copies` exact copies of random vertices that
 * take over one face corner each, then one vertex no face uses. Each shape lists about
 * `coverage` of the vertices (random deltas, some zero), moves a copy with its original half
 * of the time, repeats a few vi (the last pair wins) and adds one vi past the end. */
static void gen(gen_mesh *g, uint32_t side, uint32_t copies, uint32_t shapes, double coverage, uint32_t seed)
{
    memset(g, 0, sizeof *g);
    uint32_t grid = side * side;
    g->vc = grid + copies + 1;
    g->vp = calloc((size_t)g->vc * 3, sizeof(float));
    g->uv = calloc((size_t)g->vc * 2, sizeof(float));
    g->ic = (side - 1) * (side - 1) * 6;
    g->f = malloc((size_t)g->ic * sizeof *g->f);
    uint32_t *src = malloc((size_t)g->vc * sizeof *src); /* original of each vertex */
    cr_assert(g->vp && g->uv && g->f && src);
    uint32_t st = seed;
    for (uint32_t y = 0; y < side; y++)
        for (uint32_t x = 0; x < side; x++) {
            uint32_t v = y * side + x;
            g->vp[3 * v] = (float)x * 0.125f;
            g->vp[3 * v + 1] = (float)y * 0.125f;
            g->vp[3 * v + 2] = af_rand(&st, -0.25f, 0.25f);
            g->uv[2 * v] = (float)x / (float)side;
            g->uv[2 * v + 1] = (float)y / (float)side;
            src[v] = v;
        }
    uint32_t k = 0;
    for (uint32_t y = 0; y + 1 < side; y++)
        for (uint32_t x = 0; x + 1 < side; x++) {
            uint32_t a = y * side + x, b = a + 1, c = a + side, d = c + 1;
            g->f[k++] = a, g->f[k++] = b, g->f[k++] = d;
            g->f[k++] = a, g->f[k++] = d, g->f[k++] = c;
        }
    for (uint32_t i = 0; i < copies; i++) {
        uint32_t v = grid + i, corner = af_lcg(&st) % g->ic, o = g->f[corner];
        while (o >= grid) o = src[o];
        memcpy(g->vp + 3 * v, g->vp + 3 * o, 3 * sizeof(float));
        memcpy(g->uv + 2 * v, g->uv + 2 * o, 2 * sizeof(float));
        src[v] = o;
        g->f[corner] = v;
    }
    uint32_t unused = g->vc - 1;
    g->vp[3 * unused] = 5, g->vp[3 * unused + 1] = 5, g->vp[3 * unused + 2] = 5;
    src[unused] = unused;

    g->shape_count = shapes;
    g->target = malloc((size_t)shapes * g->vc * 3 * sizeof(float));
    cr_assert(g->target);
    for (uint32_t s = 0; s < shapes; s++) {
        float *t = g->target + (size_t)s * g->vc * 3;
        memcpy(t, g->vp, (size_t)g->vc * 3 * sizeof(float));
        uint32_t cap = g->vc * 2 + 4, n = 0;
        g->vi[s] = malloc(cap * sizeof(uint32_t));
        g->tp[s] = malloc((size_t)cap * 3 * sizeof(float));
        cr_assert(g->vi[s] && g->tp[s]);
        for (uint32_t v = 0; v < g->vc; v++) {
            int copy = src[v] != v;
            if (copy && (af_lcg(&st) & 1u)) { /* moved exactly like its original (listed or not) */
                memcpy(t + 3 * v, t + 3 * src[v], 3 * sizeof(float));
                if (t[3 * v] != g->vp[3 * v] || t[3 * v + 1] != g->vp[3 * v + 1] || t[3 * v + 2] != g->vp[3 * v + 2]) {
                    g->vi[s][n] = v;
                    memcpy(g->tp[s] + 3 * n++, t + 3 * v, 3 * sizeof(float));
                }
                continue;
            }
            if (af_rand(&st, 0, 1) >= coverage) continue;
            if (af_rand(&st, 0, 1) < 0.1f) { /* listed at its own position: no delta */
                g->vi[s][n] = v;
                memcpy(g->tp[s] + 3 * n++, g->vp + 3 * v, 3 * sizeof(float));
                continue;
            }
            if (af_rand(&st, 0, 1) < 0.1f) { /* listed twice: the first pair is overridden */
                g->vi[s][n] = v;
                g->tp[s][3 * n] = 9, g->tp[s][3 * n + 1] = 9, g->tp[s][3 * n + 2] = 9;
                n++;
            }
            for (int c = 0; c < 3; c++) t[3 * v + c] = g->vp[3 * v + c] + af_rand(&st, -0.5f, 0.5f);
            g->vi[s][n] = v;
            memcpy(g->tp[s] + 3 * n++, t + 3 * v, 3 * sizeof(float));
        }
        g->vi[s][n] = g->vc + 3; /* past the end: dropped */
        g->tp[s][3 * n] = g->tp[s][3 * n + 1] = g->tp[s][3 * n + 2] = 0;
        n++;
        snprintf(g->names[s], sizeof g->names[s], "shape%u", s);
        g->shapes[s].name = g->names[s];
        g->shapes[s].vi = g->vi[s];
        g->shapes[s].vp = g->tp[s];
        g->shapes[s].vi_count = g->shapes[s].vp_count = n;
        g->shapes[s].ts = s % 3 == 0 ? -1.0f : 1.0f + (float)(s % 4);
        g->shapes[s].base = 0;
    }
    free(src);
}

static void gen_free(gen_mesh *g)
{
    for (uint32_t s = 0; s < g->shape_count; s++) free(g->vi[s]), free(g->tp[s]);
    free(g->vp), free(g->uv), free(g->f), free(g->target);
}

static void bake_gen(const gen_mesh *g, uint32_t flags, baked *b)
{
    const model_in m = {g->vc, g->vp, g->uv, g->f, g->ic, g->shapes, g->shape_count};
    bake_model(&m, flags, b);
}

/* Every vertex's position under each shape alone at weight 1, and the base: [shape + 1][v][3]
 * (slot 0 the base). */
static float *shape_positions(const kiln_blob *blob, uint32_t mesh, uint32_t vc, uint32_t shapes)
{
    float *p = malloc((size_t)(shapes + 1) * vc * 3 * sizeof(float));
    cr_assert(p);
    cr_assert_eq(apply(blob, mesh, NULL, NULL, 0, p, vc), KILN_OK);
    for (uint32_t s = 0; s < shapes; s++) {
        const float w = 1.0f;
        cr_assert_eq(apply(blob, mesh, &s, &w, 1, p + (size_t)(s + 1) * vc * 3, vc), KILN_OK);
    }
    return p;
}

/* Vertex signature: base then its position under each shape. */
static int same_vertex(const float *a, size_t a_stride, const float *b, size_t b_stride, uint32_t slots, double tol)
{
    for (uint32_t s = 0; s < slots; s++)
        for (int c = 0; c < 3; c++)
            if (!near(a[s * a_stride + c], b[s * b_stride + c], tol)) return 0;
    return 1;
}

/* Every authored face is a baked triangle (same winding, any rotation) whose corners have the
 * authored base and the authored position under every shape, and the other way round. */
static void check_triangles(const gen_mesh *g, const baked *b, const float *pos, double tol)
{
    const kiln_blob_mesh *m = mesh0(b);
    uint32_t slots = g->shape_count + 1, bt = m->index_count / 3, ct = g->ic / 3;
    cr_assert_eq(bt, ct, "%u baked triangles, %u authored", bt, ct);
    float *ref = malloc((size_t)slots * g->vc * 3 * sizeof(float));
    cr_assert(ref);
    memcpy(ref, g->vp, (size_t)g->vc * 3 * sizeof(float));
    memcpy(ref + (size_t)g->vc * 3, g->target, (size_t)g->shape_count * g->vc * 3 * sizeof(float));
    uint8_t *used = calloc(bt, 1);
    cr_assert(used);
    size_t rs = (size_t)g->vc * 3, bs = (size_t)m->vertex_count * 3;
    for (uint32_t t = 0; t < ct; t++) {
        int found = 0;
        for (uint32_t u = 0; u < bt && !found; u++) {
            if (used[u]) continue;
            for (uint32_t rot = 0; rot < 3 && !found; rot++) {
                int ok = 1;
                for (uint32_t k = 0; k < 3 && ok; k++) {
                    uint32_t cv = g->f[3 * t + k], bv = index_at(b->blob, m, 3 * u + (k + rot) % 3);
                    ok = same_vertex(ref + 3 * (size_t)cv, rs, pos + 3 * (size_t)bv, bs, slots, tol);
                }
                if (ok) used[u] = 1, found = 1;
            }
        }
        cr_expect(found, "authored face %u (%u %u %u) has no baked triangle", t, g->f[3 * t], g->f[3 * t + 1],
                  g->f[3 * t + 2]);
        if (!found) break;
    }
    free(used);
    free(ref);
}

Test(blend_shape, remapped_deltas_reach_the_authored_targets)
{
    gen_mesh g;
    gen(&g, 12, 40, 6, 0.3, 7u);
    baked b;
    bake_gen(&g, 0, &b);
    const kiln_blob_mesh *m = mesh0(&b);
    /* the copies moved like their originals merge, the others stay: fewer than all vertices,
     * more than the grid; the unused vertex is gone */
    cr_expect_lt(m->vertex_count, g.vc - 1);
    cr_expect_gt(m->vertex_count, 12u * 12u);
    uint32_t n;
    const kiln_blob_blend_shape *s = kiln_blob_blend_shapes(b.blob, &n);
    cr_assert_eq(n, g.shape_count);
    float *pos = shape_positions(b.blob, 0, m->vertex_count, g.shape_count);
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t *ix = kiln_blend_shape_indices(b.blob, &s[i]);
        const float *d = kiln_blend_shape_deltas(b.blob, &s[i]);
        cr_assert(ix && d);
        /* ascending, and exactly the vertices that move */
        uint32_t moving = 0;
        for (uint32_t v = 0; v < m->vertex_count; v++) {
            const float *p0 = pos + 3 * (size_t)v, *p1 = pos + (size_t)(i + 1) * m->vertex_count * 3 + 3 * v;
            moving += p0[0] != p1[0] || p0[1] != p1[1] || p0[2] != p1[2];
        }
        cr_expect_eq(s[i].delta_count, moving, "shape %u: %u deltas, %u vertices move", i, s[i].delta_count, moving);
        for (uint32_t k = 0; k < s[i].delta_count; k++) {
            if (k) cr_expect_gt(ix[k], ix[k - 1], "shape %u: indices not ascending at %u", i, k);
            cr_expect(d[3 * k] != 0 || d[3 * k + 1] != 0 || d[3 * k + 2] != 0, "shape %u stores a zero delta", i);
        }
    }
    /* base + delta is the authored target of the authored vertex each baked vertex came from */
    check_triangles(&g, &b, pos, TOL);
    cr_expect(has_diag(&b, KILN_ERR_CAST_INDEX_RANGE, KILN_SEVERITY_ERROR));
    cr_expect(has_diag(&b, KILN_ERR_CAST_DUPLICATE, KILN_SEVERITY_WARNING));
    free(pos);
    baked_free(&b);

    /* without meshoptimizer the order is the authored one: check the arrays directly */
    bake_gen(&g, KILN_BAKE_NO_OPTIMIZE, &b);
    m = mesh0(&b);
    cr_assert_eq(m->vertex_count, g.vc);
    s = kiln_blob_blend_shapes(b.blob, &n);
    const float *base = kiln_blob_stream_data(b.blob, kiln_blob_mesh_stream(b.blob, m, KILN_ATTR_POSITION, 0));
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t *ix = kiln_blend_shape_indices(b.blob, &s[i]);
        const float *d = kiln_blend_shape_deltas(b.blob, &s[i]);
        const float *t = g.target + (size_t)i * g.vc * 3;
        uint32_t moving = 0;
        for (uint32_t v = 0; v < g.vc; v++) moving += memcmp(t + 3 * v, g.vp + 3 * v, 12) != 0;
        cr_expect_eq(s[i].delta_count, moving);
        for (uint32_t k = 0; k < s[i].delta_count; k++)
            for (int c = 0; c < 3; c++)
                cr_expect(near(base[3 * ix[k] + c] + d[3 * k + c], t[3 * ix[k] + c], TOL), "shape %u vertex %u", i,
                          ix[k]);
    }
    baked_free(&b);
    gen_free(&g);
}

Test(blend_shape, bake_is_deterministic)
{
    gen_mesh g;
    gen(&g, 10, 20, 5, 0.4, 11u);
    baked a, b;
    bake_gen(&g, 0, &a);
    bake_gen(&g, 0, &b);
    cr_assert_eq(a.res.size, b.res.size);
    cr_expect(memcmp(a.res.blob, b.res.blob, a.res.size) == 0, "two bakes of the same input differ");
    baked_free(&a);
    baked_free(&b);
    gen_free(&g);
}

Test(blend_shape, quantised_positions_keep_float_deltas)
{
    gen_mesh g;
    gen(&g, 12, 30, 5, 0.35, 23u);
    baked f, q;
    bake_gen(&g, 0, &f);
    bake_gen(&g, KILN_BAKE_QUANTIZE_POSITIONS, &q);
    const kiln_blob_mesh *mf = mesh0(&f), *mq = mesh0(&q);
    cr_assert_eq(mf->vertex_count, mq->vertex_count);
    const kiln_blob_stream *ps = kiln_blob_mesh_stream(q.blob, mq, KILN_ATTR_POSITION, 0);
    cr_assert_eq(ps->format, KILN_FORMAT_UNORM16x4);
    uint32_t nf, nq;
    const kiln_blob_blend_shape *sf = kiln_blob_blend_shapes(f.blob, &nf), *sq = kiln_blob_blend_shapes(q.blob, &nq);
    cr_assert_eq(nf, nq);
    for (uint32_t i = 0; i < nf; i++) {
        cr_assert_eq(sf[i].delta_count, sq[i].delta_count);
        cr_expect(memcmp(kiln_blend_shape_indices(f.blob, &sf[i]), kiln_blend_shape_indices(q.blob, &sq[i]),
                         4u * sf[i].delta_count) == 0);
        cr_expect(memcmp(kiln_blend_shape_deltas(f.blob, &sf[i]), kiln_blend_shape_deltas(q.blob, &sq[i]),
                         12u * sf[i].delta_count) == 0, "deltas must stay the float ones");
    }
    /* every shape at weight 1 (and a mix), on every path: within the quantisation step */
    double tol[3];
    for (int c = 0; c < 3; c++) tol[c] = ps->decode_scale[c] / 65535.0 + 1e-6;
    uint32_t vc = mf->vertex_count;
    float *want = malloc((size_t)vc * 3 * sizeof(float)), *got = malloc((size_t)vc * 4 * sizeof(float));
    cr_assert(want && got);
    uint32_t all[GEN_MAX_SHAPES];
    float w[GEN_MAX_SHAPES];
    for (uint32_t i = 0; i < nf; i++) all[i] = i, w[i] = 0.25f + 0.5f * (float)i;
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        for (uint32_t i = 0; i <= nf; i++) {
            const uint32_t *sh = i < nf ? &all[i] : all;
            const float one = 1.0f, *ww = i < nf ? &one : w;
            uint32_t count = i < nf ? 1 : nf;
            cr_assert_eq(apply(f.blob, 0, sh, ww, count, want, vc), KILN_OK);
            kiln_blend_shapes_desc d = {q.blob, 0, sh, ww, count, got, 16, vc}; /* strided, too */
            cr_assert_eq(kiln_blend_shapes_apply(&d), KILN_OK);
            for (uint32_t v = 0; v < vc; v++)
                for (int c = 0; c < 3; c++)
                    cr_expect(near(got[4 * v + c], want[3 * v + c], tol[c]), "%s shape %u vertex %u: %g vs %g",
                              kiln_simd_name(paths[p]), i, v, (double)got[4 * v + c], (double)want[3 * v + c]);
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    free(want);
    free(got);
    baked_free(&f);
    baked_free(&q);
    gen_free(&g);
}

/* ---- SIMD paths ---------------------------------------------------------------------------------- */

/* All shapes with weights in [-0.5, 2.5] (clamping included), on every path and a few output
 * strides, against the scalar path (1e-6 relative to the magnitudes summed) and a double
 * reference. More than KILN__BS_GROUP (64) shapes, and a vertex count that is no multiple of
 * the chunk, so that the second pass and the last partial chunk are covered. */
static void check_paths(uint32_t flags)
{
    gen_mesh g;
    gen(&g, 52, 200, 70, 0.3, 99u);
    baked b;
    bake_gen(&g, flags, &b);
    const kiln_blob_mesh *m = mesh0(&b);
    uint32_t vc = m->vertex_count, n;
    const kiln_blob_blend_shape *s = kiln_blob_blend_shapes(b.blob, &n);
    cr_assert_eq(n, 70u);
    uint32_t shapes[70];
    float w[70];
    uint32_t st = 5;
    for (uint32_t i = 0; i < n; i++) shapes[i] = i, w[i] = af_rand(&st, -0.5f, 2.5f);
    /* double reference from the records */
    double *ref = calloc((size_t)vc * 3, sizeof(double)), *mag = calloc((size_t)vc * 3, sizeof(double));
    float *base = malloc((size_t)vc * 3 * sizeof(float));
    cr_assert(ref && mag && base);
    kiln_simd_force(KILN_SIMD_SCALAR);
    cr_assert_eq(apply(b.blob, 0, NULL, NULL, 0, base, vc), KILN_OK);
    for (size_t i = 0; i < (size_t)vc * 3; i++) ref[i] = base[i], mag[i] = fabs(base[i]);
    for (uint32_t i = 0; i < n; i++) {
        double we = kiln_blend_shape_weight(w[i], s[i].target_scale);
        const uint32_t *ix = kiln_blend_shape_indices(b.blob, &s[i]);
        const float *d = kiln_blend_shape_deltas(b.blob, &s[i]);
        for (uint32_t k = 0; k < s[i].delta_count; k++)
            for (int c = 0; c < 3; c++) {
                ref[3 * (size_t)ix[k] + c] += we * d[3 * k + c];
                mag[3 * (size_t)ix[k] + c] += fabs(we * d[3 * k + c]);
            }
    }
    const uint32_t strides[3] = {12, 16, 20};
    float *scalar = malloc((size_t)vc * 3 * sizeof(float)), *out = malloc((size_t)vc * 5 * sizeof(float));
    cr_assert(scalar && out);
    cr_assert_eq(apply(b.blob, 0, shapes, w, n, scalar, vc), KILN_OK);
    double worst_ref = 0;
    for (size_t i = 0; i < (size_t)vc * 3; i++) {
        double e = fabs(scalar[i] - ref[i]) / (mag[i] > 1 ? mag[i] : 1);
        if (e > worst_ref) worst_ref = e;
    }
    cr_expect_leq(worst_ref, 4e-6, "scalar path vs double reference: %g relative", worst_ref);
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        for (int k = 0; k < 3; k++) {
            uint32_t fl = strides[k] / 4;
            kiln_blend_shapes_desc d = {b.blob, 0, shapes, w, n, out, strides[k], vc};
            cr_assert_eq(kiln_blend_shapes_apply(&d), KILN_OK);
            double worst = 0;
            for (uint32_t v = 0; v < vc; v++)
                for (int c = 0; c < 3; c++) {
                    size_t i = 3 * (size_t)v + c;
                    double e = fabs(out[fl * v + c] - scalar[i]) / (mag[i] > 1 ? mag[i] : 1);
                    if (e > worst) worst = e;
                }
            cr_expect_leq(worst, 1e-6, "%s stride %u vs scalar: %g relative", kiln_simd_name(paths[p]), strides[k],
                          worst);
            fprintf(stderr, "blend_shape paths%s: %s stride %u: %.3g relative to scalar (scalar vs double %.3g)\n",
                    flags ? " (quantised)" : "", kiln_simd_name(paths[p]), strides[k], worst, worst_ref);
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    free(ref), free(mag), free(base), free(scalar), free(out);
    baked_free(&b);
    gen_free(&g);
}

Test(blend_shape, simd_paths_agree) { check_paths(0); }
Test(blend_shape, simd_paths_agree_quantised) { check_paths(KILN_BAKE_QUANTIZE_POSITIONS); }

/* The AVX-512 path has no blend-shape kernels of its own and runs the AVX2 ones: bit-identical
 * positions. SSE2 and scalar round each product, which AVX2 fuses, so a fall back to either
 * would show (checked: SSE2 differs from AVX2 somewhere on the same data). */
Test(blend_shape, avx512_runs_the_avx2_kernels)
{
    int have = kiln_simd_force(KILN_SIMD_AVX512) == KILN_SIMD_AVX512;
    kiln_simd_force(KILN_SIMD_AUTO);
    if (!have) cr_skip_test("no AVX-512 path here: skipping");
    gen_mesh g;
    gen(&g, 52, 200, 70, 0.3, 99u);
    baked b;
    bake_gen(&g, 0, &b);
    uint32_t vc = mesh0(&b)->vertex_count, shapes[70];
    float w[70];
    uint32_t st = 5;
    for (uint32_t i = 0; i < 70; i++) shapes[i] = i, w[i] = af_rand(&st, -0.5f, 2.5f);
    const kiln_simd order[3] = {KILN_SIMD_AVX2, KILN_SIMD_AVX512, KILN_SIMD_SSE2};
    float *got[3];
    for (int k = 0; k < 3; k++) {
        got[k] = malloc((size_t)vc * 3 * sizeof(float));
        cr_assert(got[k]);
        cr_assert_eq(kiln_simd_force(order[k]), order[k]);
        cr_assert_eq(apply(b.blob, 0, shapes, w, 70, got[k], vc), KILN_OK);
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    cr_expect(memcmp(got[0], got[1], (size_t)vc * 3 * sizeof(float)) == 0, "avx512 differs from avx2");
    cr_expect(memcmp(got[0], got[2], (size_t)vc * 3 * sizeof(float)) != 0, "sse2 equals avx2: the check above proves nothing");
    for (int k = 0; k < 3; k++) free(got[k]);
    baked_free(&b);
    gen_free(&g);
}

/* ---- allocation failures ---------------------------------------------------------------------------- */
typedef struct stage1_probe {
    counting_alloc ca;
    int            calls_at_end; /* allocations made when the last input's stage 1 ended */
} stage1_probe;

static void count_stage1(void *user, uint32_t done, uint32_t total, const char *path)
{
    (void)path;
    stage1_probe *p = user;
    if (done == total) p->calls_at_end = p->ca.calls;
}

/* Every allocation of stage 1 (where blend shapes are baked) fails once: the bake reports
 * ERR_OUT_OF_MEMORY and nothing leaks. Stage 2 is left out: a failure inside stb_ds's hash-map
 * creation there (two allocations, the second jumping out) orphans the first, independently of
 * blend shapes. */
Test(blend_shape, every_allocation_failure_is_clean)
{
    gen_mesh g;
    gen(&g, 6, 6, 3, 0.5, 3u);
    const model_in mi = {g.vc, g.vp, g.uv, g.f, g.ic, g.shapes, g.shape_count};
    cast_bytes c = cast_of(&mi);
    kiln_bake_input in = {"model.cast", c.data, (size_t)c.size, NULL};
    stage1_probe probe = {{INT_MAX, 0, 0}, 0}; /* counts, never fails */
    kiln_allocator pa = counting_allocator(&probe.ca);
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.allocator = &pa;
    o.progress = count_stage1;
    o.progress_user = &probe;
    kiln_bake_result res;
    kiln_diag err;
    cr_assert_eq(kiln_bake(&in, 1, &o, &res, &err), KILN_OK, "%s", err.message);
    kiln_bake_result_free(&res);
    cr_assert_gt(probe.calls_at_end, 20, "stage 1 made %d allocations", probe.calls_at_end);
    o.progress = NULL;
    for (int fail_at = 0; fail_at < probe.calls_at_end; fail_at++) {
        counting_alloc ca = {fail_at, 0, 0};
        kiln_allocator a = counting_allocator(&ca);
        o.allocator = &a;
        kiln_result r = kiln_bake(&in, 1, &o, &res, &err);
        if (r == KILN_OK) kiln_bake_result_free(&res);
        cr_expect_eq(r, KILN_ERR_OUT_OF_MEMORY, "allocation %d: %s", fail_at, err.message);
        cr_expect_eq(ca.live, 0, "allocation %d failed: %d blocks leaked", fail_at, ca.live);
    }
    free(c.data);
    gen_free(&g);
}

/* ---- the loader ---------------------------------------------------------------------------------- */
typedef struct corrupt_case {
    const char *what;
    kiln_result code;
    const char *path;   /* expected err.path prefix */
} corrupt_case;

typedef struct blob_copy {
    unsigned char         *mem;
    size_t                 size;
    kiln_blob_section     *bshp, *nidx;
    kiln_blob_blend_shape *rec;   /* record 0 (shape "a": vertices 1 and 2) */
    uint32_t              *idx;
    float                 *d;
    uint32_t               bshp_entry, nidx_bshp; /* section index of BSHP; first NIDX entry of kind BSHP */
} blob_copy;

static void copy_blob(const baked *b, blob_copy *c)
{
    memset(c, 0, sizeof *c);
    c->size = b->res.size;
    c->mem = aligned_alloc(64, (c->size + 63) & ~(size_t)63);
    cr_assert(c->mem);
    memcpy(c->mem, b->res.blob, c->size);
    kiln_blob_header h;
    memcpy(&h, c->mem, sizeof h);
    kiln_blob_section *t = (kiln_blob_section *)(void *)(c->mem + h.section_table_offset);
    for (uint32_t i = 0; i < h.section_count; i++) {
        if (t[i].kind == KILN_SECTION_BLEND_SHAPES) c->bshp = &t[i], c->bshp_entry = i;
        if (t[i].kind == KILN_SECTION_NAME_INDEX) c->nidx = &t[i];
    }
    cr_assert(c->bshp && c->nidx);
    c->rec = (kiln_blob_blend_shape *)(void *)(c->mem + c->bshp->offset);
    c->idx = (uint32_t *)(void *)(c->mem + c->rec->indices_offset);
    c->d = (float *)(void *)(c->mem + c->rec->deltas_offset);
    const kiln_blob_name_entry *e = (const kiln_blob_name_entry *)(const void *)(c->mem + c->nidx->offset);
    c->nidx_bshp = UINT32_MAX;
    for (uint32_t i = 0; i < c->nidx->count && c->nidx_bshp == UINT32_MAX; i++)
        if (e[i].kind == KILN_SECTION_BLEND_SHAPES) c->nidx_bshp = i;
    cr_assert_neq(c->nidx_bshp, UINT32_MAX);
}

/* Applies corruption k; returns 0 past the last one. */
static int corrupt(blob_copy *c, int k, corrupt_case *cc)
{
    kiln_blob_name_entry *e = (kiln_blob_name_entry *)(void *)(c->mem + c->nidx->offset);
    switch (k) {
    case 0:
        c->rec->mesh = 1;
        *cc = (corrupt_case){"mesh past the meshes", KILN_ERR_BLOB_BAD_RECORD, "BSHP[0].mesh"};
        break;
    case 1:
        c->rec->name = 0x7FFFFFF;
        *cc = (corrupt_case){"name outside STRS", KILN_ERR_BLOB_BAD_RECORD, "BSHP[0].name"};
        break;
    case 2:
        c->rec->target_scale = 0;
        *cc = (corrupt_case){"ts 0", KILN_ERR_BLOB_BAD_RECORD, "BSHP[0].target_scale"};
        break;
    case 3:
        c->rec->target_scale = -2;
        *cc = (corrupt_case){"ts < 0", KILN_ERR_BLOB_BAD_RECORD, "BSHP[0].target_scale"};
        break;
    case 4:
        c->rec->target_scale = NAN;
        *cc = (corrupt_case){"ts NaN", KILN_ERR_BLOB_NOT_FINITE, "BSHP[0].target_scale"};
        break;
    case 5:
        c->rec->target_scale = INFINITY;
        *cc = (corrupt_case){"ts inf", KILN_ERR_BLOB_NOT_FINITE, "BSHP[0].target_scale"};
        break;
    case 6:
        c->rec->reserved[1] = 5;
        *cc = (corrupt_case){"reserved", KILN_ERR_BLOB_BAD_RECORD, "BSHP[0].reserved"};
        break;
    case 7:
        c->rec->indices_offset += 4;
        *cc = (corrupt_case){"indices misaligned", KILN_ERR_BLOB_BAD_RECORD, "BSHP[0].indices_offset"};
        break;
    case 8:
        c->rec->deltas_offset += 4;
        *cc = (corrupt_case){"deltas misaligned", KILN_ERR_BLOB_BAD_RECORD, "BSHP[0].deltas_offset"};
        break;
    case 9:
        c->rec->indices_offset = 64;
        *cc = (corrupt_case){"indices before DATA", KILN_ERR_BLOB_BAD_RECORD, "BSHP[0].indices_offset"};
        break;
    case 10:
        c->rec->deltas_offset = c->size;
        *cc = (corrupt_case){"deltas past the blob", KILN_ERR_BLOB_BAD_RECORD, "BSHP[0].deltas_offset"};
        break;
    case 11:
        c->rec->delta_count = 1u << 30;
        *cc = (corrupt_case){"count past DATA", KILN_ERR_BLOB_BAD_RECORD, "BSHP[0].indices_offset"};
        break;
    case 12:
        c->idx[0] = 2, c->idx[1] = 1;
        *cc = (corrupt_case){"descending", KILN_ERR_BLOB_BAD_RECORD, "BSHP[0].indices"};
        break;
    case 13:
        c->idx[0] = 2;
        *cc = (corrupt_case){"repeated index", KILN_ERR_BLOB_BAD_RECORD, "BSHP[0].indices"};
        break;
    case 14:
        c->idx[1] = 4;
        *cc = (corrupt_case){"index = vertex count", KILN_ERR_BLOB_BAD_RECORD, "BSHP[0].indices"};
        break;
    case 15:
        c->d[4] = NAN;
        *cc = (corrupt_case){"delta NaN", KILN_ERR_BLOB_NOT_FINITE, "BSHP[0].deltas"};
        break;
    case 16:
        c->d[0] = -INFINITY;
        *cc = (corrupt_case){"delta inf", KILN_ERR_BLOB_NOT_FINITE, "BSHP[0].deltas"};
        break;
    case 17:
        c->bshp->version = 2;
        *cc = (corrupt_case){"section version", KILN_ERR_BLOB_BAD_VERSION, NULL};
        break;
    case 18:
        c->bshp->stride = 36;
        *cc = (corrupt_case){"section stride", KILN_ERR_BLOB_BAD_SECTION, NULL};
        break;
    case 19:
        c->bshp->flags = 2;
        *cc = (corrupt_case){"section flags", KILN_ERR_BLOB_BAD_SECTION, NULL};
        break;
    case 20:
        c->bshp->count = 4;
        *cc = (corrupt_case){"section count", KILN_ERR_BLOB_BAD_SECTION, NULL};
        break;
    case 21:
        e[c->nidx_bshp].index = 3;
        *cc = (corrupt_case){"name index entry", KILN_ERR_BLOB_BAD_RECORD, "NIDX["};
        break;
    default: return 0;
    }
    return 1;
}

Test(blend_shape, loader_rejects_corrupt_records)
{
    baked b;
    bake_quad(KILN_BAKE_NO_OPTIMIZE, &b);
    for (int k = 0;; k++) {
        blob_copy c;
        copy_blob(&b, &c);
        corrupt_case cc;
        if (!corrupt(&c, k, &cc)) {
            free(c.mem);
            break;
        }
        const kiln_blob *blob = NULL;
        kiln_diag err;
        /* unfixed: reported as damage */
        cr_expect_eq(kiln_blob_load(c.mem, c.size, 0, &blob, &err), KILN_ERR_BLOB_CHECKSUM, "%s", cc.what);
        /* without the checksum, and with a matching one: the specific check */
        for (int pass = 0; pass < 2; pass++) {
            if (pass) bb_fix_crc(c.mem, c.size);
            kiln_result r = kiln_blob_load(c.mem, c.size, pass ? 0 : KILN_BLOB_LOAD_NO_CRC, &blob, &err);
            cr_expect_eq(r, cc.code, "%s: %s, expected %s (%s)", cc.what, kiln_result_str(r), kiln_result_str(cc.code),
                         err.message);
            cr_expect_null(blob);
            if (cc.path)
                cr_expect(strncmp(err.path, cc.path, strlen(cc.path)) == 0, "%s: path '%s', expected '%s'", cc.what,
                          err.path, cc.path);
            else
                cr_expect(strncmp(err.path, "section[", 8) == 0, "%s: path '%s'", cc.what, err.path);
        }
        free(c.mem);
    }
    /* the untouched copy loads, and so does a trusted load of a corrupt one, whose evaluation
     * stays inside its buffers */
    blob_copy c;
    copy_blob(&b, &c);
    const kiln_blob *blob;
    cr_expect_eq(kiln_blob_load(c.mem, c.size, 0, &blob, NULL), KILN_OK);
    c.idx[0] = 2, c.idx[1] = 1; /* descending */
    c.rec[1].delta_count = 1u << 30;
    cr_assert_eq(kiln_blob_load(c.mem, c.size, KILN_BLOB_LOAD_TRUSTED, &blob, NULL), KILN_OK);
    const uint32_t sh[2] = {0, 1};
    const float w[2] = {1, 1};
    float out[12];
    cr_expect_eq(apply(blob, 0, sh, w, 1, out, 4), KILN_OK);
    cr_expect_eq(apply(blob, 0, sh, w, 2, out, 4), KILN_ERR_BLOB_BAD_RECORD);
    free(c.mem);
    baked_free(&b);
}

/* ---- weights from clips (D.7) ------------------------------------------------------------------------ */

/* Two meshes with a shape "smile" each and a "frown" on the first; one bone; a clip whose bs
 * curve "smile" goes 0 -> 2 over frames 0..10 and a curve on the bone. */
static cast_bytes d7_cast(void)
{
    static const float lp[3] = {0, 0, 0};
    static const uint32_t vi[1] = {2}, kb[2] = {0, 10};
    static const float up[3] = {1, 1, 1}, kv[2] = {0, 2}, tx[2] = {0, 1}, fr = 30;
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    kiln_cast_writer_string(w, model, "n", "faces");
    uint32_t skel = kiln_cast_writer_node(w, model, KILN_CAST_ID_SKELETON, 3);
    uint32_t bone = kiln_cast_writer_node(w, skel, KILN_CAST_ID_BONE, 4);
    kiln_cast_writer_string(w, bone, "n", "root");
    kiln_cast_writer_prop(w, bone, "lp", KILN_CAST_TYPE_VEC3, lp, 1);
    for (uint32_t k = 0; k < 2; k++) {
        uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, MESH_HASH + k);
        kiln_cast_writer_string(w, mesh, "n", k ? "m2" : "m1");
        kiln_cast_writer_prop(w, mesh, "vp", KILN_CAST_TYPE_VEC3, quad_vp, 4);
        kiln_cast_writer_ints(w, mesh, "f", quad_f, 6);
    }
    const shape_in s1 = {"smile", vi, up, 1, 1, -1.0f, MESH_HASH}, s2 = {"smile", vi, up, 1, 1, 2.0f, MESH_HASH + 1},
                   s3 = {"frown", vi, up, 1, 1, -1.0f, MESH_HASH};
    write_shape(w, model, &s1, 10);
    write_shape(w, model, &s2, 11);
    write_shape(w, model, &s3, 12);
    uint32_t anim = kiln_cast_writer_node(w, root, KILN_CAST_ID_ANIMATION, 20);
    kiln_cast_writer_floats(w, anim, "fr", KILN_CAST_TYPE_FLOAT, &fr, 1);
    uint32_t c0 = kiln_cast_writer_node(w, anim, KILN_CAST_ID_CURVE, 21);
    kiln_cast_writer_string(w, c0, "nn", "root");
    kiln_cast_writer_string(w, c0, "kp", "tx");
    kiln_cast_writer_ints(w, c0, "kb", kb, 2);
    kiln_cast_writer_floats(w, c0, "kv", KILN_CAST_TYPE_FLOAT, tx, 2);
    kiln_cast_writer_string(w, c0, "m", "absolute");
    uint32_t c1 = kiln_cast_writer_node(w, anim, KILN_CAST_ID_CURVE, 22);
    kiln_cast_writer_string(w, c1, "nn", "smile");
    kiln_cast_writer_string(w, c1, "kp", "bs");
    kiln_cast_writer_ints(w, c1, "kb", kb, 2);
    kiln_cast_writer_floats(w, c1, "kv", KILN_CAST_TYPE_FLOAT, kv, 2);
    kiln_cast_writer_string(w, c1, "m", "absolute");
    /* the same channel again, same keys (D.4: the later curve applies; the baker keeps one) */
    uint32_t c2 = kiln_cast_writer_node(w, anim, KILN_CAST_ID_CURVE, 23);
    kiln_cast_writer_string(w, c2, "nn", "smile");
    kiln_cast_writer_string(w, c2, "kp", "bs");
    kiln_cast_writer_ints(w, c2, "kb", kb, 2);
    kiln_cast_writer_floats(w, c2, "kv", KILN_CAST_TYPE_FLOAT, kv, 2);
    kiln_cast_writer_string(w, c2, "m", "absolute");
    /* a track no shape of the model has: later_track_of_a_name_wins renames it */
    const float grin[2] = {0.25f, 0.25f};
    uint32_t c3 = kiln_cast_writer_node(w, anim, KILN_CAST_ID_CURVE, 24);
    kiln_cast_writer_string(w, c3, "nn", "grin");
    kiln_cast_writer_string(w, c3, "kp", "bs");
    kiln_cast_writer_ints(w, c3, "kb", kb, 2);
    kiln_cast_writer_floats(w, c3, "kv", KILN_CAST_TYPE_FLOAT, grin, 2);
    kiln_cast_writer_string(w, c3, "m", "absolute");
    return finish_cast(w);
}

/* Two bs tracks of one name, which the baker never writes (it keeps one per channel), made
 * by renaming d7_cast's "grin" track to "smile" in a baked blob: whichever of the two comes
 * later drives the shape (D.4: the last curve on a channel wins). */
Test(blend_shape, later_track_of_a_name_wins)
{
    cast_bytes c = d7_cast();
    const cast_bytes *in[1] = {&c};
    baked b;
    cr_assert_eq(bake_bytes(in, 1, KILN_BAKE_NO_OPTIMIZE, &b), KILN_OK);
    size_t size = b.res.size;
    unsigned char *mem = aligned_alloc(KILN_BLOB_ALIGN, (size + KILN_BLOB_ALIGN - 1) / KILN_BLOB_ALIGN * KILN_BLOB_ALIGN);
    cr_assert_not_null(mem);
    memcpy(mem, b.res.blob, size);
    const kiln_blob *blob;
    cr_assert_eq(kiln_blob_load(mem, size, 0, &blob, NULL), KILN_OK);
    const kiln_blob_animation *a = kiln_blob_animations(blob, NULL);
    kiln_blob_anim_scalar *sc = (kiln_blob_anim_scalar *)(uintptr_t)(kiln_blob_anim_scalars(blob, NULL) + a->first_scalar);
    uint32_t smile = KILN_BLOB_NONE, grin = KILN_BLOB_NONE;
    for (uint32_t k = 0; k < a->scalar_count; k++) {
        const char *name = kiln_blob_string(blob, sc[k].name);
        if (strcmp(name, "smile") == 0) smile = k;
        if (strcmp(name, "grin") == 0) grin = k;
    }
    cr_assert(smile != KILN_BLOB_NONE && grin != KILN_BLOB_NONE, "tracks smile %u, grin %u", smile, grin);
    uint32_t first = smile < grin ? smile : grin, later = smile < grin ? grin : smile;
    sc[grin].name = sc[smile].name, sc[grin].name_hash = sc[smile].name_hash; /* two "smile" tracks now */
    bb_fix_crc(mem, size);
    cr_assert_eq(kiln_blob_load(mem, size, 0, &blob, NULL), KILN_OK, "the edited blob does not verify");
    uint32_t shape = kiln_blob_find_blend_shape(blob, 0, "smile"), track = KILN_BLOB_NONE;
    cr_assert_neq(shape, KILN_BLOB_NONE);
    cr_assert_eq(kiln_blend_shape_bind_clip(blob, 0, blob, &shape, 1, &track), KILN_OK);
    cr_expect_eq(track, later, "smile is driven by track %u, expected the later one, %u (the earlier is %u)", track, later,
                 first);
    free(mem);
    baked_free(&b);
    free(c.data);
}

Test(blend_shape, clip_weights_by_name)
{
    cast_bytes c = d7_cast();
    const cast_bytes *in[1] = {&c};
    baked b;
    cr_assert_eq(bake_bytes(in, 1, KILN_BAKE_NO_OPTIMIZE, &b), KILN_OK);
    uint32_t n;
    const kiln_blob_blend_shape *s = kiln_blob_blend_shapes(b.blob, &n);
    cr_assert_eq(n, 3u);
    /* records: the shapes of m1 in file order, then m2's */
    cr_expect_str_eq(kiln_blob_string(b.blob, s[0].name), "smile");
    cr_expect_str_eq(kiln_blob_string(b.blob, s[1].name), "frown");
    cr_expect_str_eq(kiln_blob_string(b.blob, s[2].name), "smile");
    cr_expect(s[0].mesh == 0 && s[1].mesh == 0 && s[2].mesh == 1);
    cr_expect_eq(kiln_blob_find_blend_shape(b.blob, 1, "smile"), 2u);

    uint32_t track[3];
    cr_assert_eq(kiln_blend_shape_bind_clip(b.blob, 0, b.blob, NULL, 3, track), KILN_OK);
    uint32_t clips;
    const kiln_blob_animation *a = kiln_blob_animations(b.blob, &clips);
    cr_assert_eq(clips, 1u);
    cr_expect_eq(track[0], track[2], "one bs curve drives every shape of its name");
    cr_expect_neq(track[0], KILN_BLOB_NONE);
    cr_expect_lt(track[0], a->scalar_count);
    cr_expect_eq(track[1], KILN_BLOB_NONE, "an unanimated shape has no track");
    uint32_t last_smile = KILN_BLOB_NONE, smiles = 0;
    const kiln_blob_anim_scalar *sc = kiln_blob_anim_scalars(b.blob, NULL) + a->first_scalar;
    for (uint32_t k = 0; k < a->scalar_count; k++)
        if (sc[k].kind == KILN_SCALAR_BLEND_SHAPE && strcmp(kiln_blob_string(b.blob, sc[k].name), "smile") == 0)
            last_smile = k, smiles++;
    cr_expect_eq(smiles, 1u, "the baker keeps one track per channel, not %u", smiles);
    cr_expect_eq(track[0], last_smile);
    const uint32_t only_m2[1] = {2};
    uint32_t t2;
    cr_assert_eq(kiln_blend_shape_bind_clip(b.blob, 0, b.blob, only_m2, 1, &t2), KILN_OK);
    cr_expect_eq(t2, track[0]);
    cr_expect_eq(kiln_blend_shape_bind_clip(b.blob, 1, b.blob, NULL, 3, track), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_blend_shape_bind_clip(b.blob, 0, b.blob, NULL, 4, track), KILN_ERR_INVALID_ARGUMENT);

    /* sampled at frame 5 (weight 1) and 10 (weight 2: clamped to 1 on m1, kept on m2, ts 2) */
    kiln_anim_binding *bind = af_bind(b.blob, 0, b.blob, 0, NULL);
    cr_assert_not_null(bind);
    kiln_soa_xform pose[1];
    float scalars[4];
    for (int f = 5; f <= 10; f += 5) {
        kiln_sample_desc sd;
        memset(&sd, 0, sizeof sd);
        sd.binding = bind;
        sd.time_s = f / 30.0;
        sd.out = pose;
        sd.out_count = 1;
        sd.scalars = scalars;
        sd.scalar_count = 4;
        cr_assert_eq(kiln_sample(&sd), KILN_OK);
        float w[3];
        kiln_blend_shape_weights(track, 3, scalars, a->scalar_count, w);
        float expect = f == 5 ? 1.0f : 2.0f;
        cr_expect(near(w[0], expect, 1e-6) && near(w[2], expect, 1e-6) && w[1] == 0.0f, "frame %d: %g %g %g", f,
                  (double)w[0], (double)w[1], (double)w[2]);
        float out[12];
        const uint32_t m1[2] = {0, 1};
        cr_assert_eq(apply(b.blob, 0, m1, w, 2, out, 4), KILN_OK);
        /* vertex 2 moves along z: by min(w, 1) on m1 (frown has weight 0), by w on m2 */
        cr_expect(near(out[8], 1.0, 1e-6) && out[6] == 1.0f, "m1 clamped to ts 1: z %g", (double)out[8]);
        cr_assert_eq(apply(b.blob, 1, only_m2, &w[2], 1, out, 4), KILN_OK);
        cr_expect(near(out[8], expect, 1e-6), "m2 with ts 2: z %g", (double)out[8]);
    }
    /* a track index at or past the count of sampled scalars reads as unanimated */
    float w[3];
    kiln_blend_shape_weights(track, 3, scalars, 0, w);
    cr_expect(w[0] == 0 && w[2] == 0);
    free(bind);
    baked_free(&b);
    free(c.data);
}

/* ---- the bundled samples ---------------------------------------------------------------------------- */
static cast_bytes read_sample(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/samples/%s", KILN_SOURCE_DIR, name);
    file_bytes f;
    cr_assert(read_file(path, &f), "cannot read %s", path);
    cast_bytes c = {f.data, f.size};
    return c;
}

/* Every authored pair of every BlendShape of the first Model: base + delta is the target
 * (baked without meshoptimizer, so baked vertex i is authored vertex i; the model has one
 * mesh per shape base, baked in file order). Returns the number of pairs checked. */
static uint32_t check_authored_pairs(const cast_bytes *c, const baked *b)
{
    kiln_cast_doc *doc;
    kiln_diag err;
    cr_assert_eq(kiln_cast_parse(c->data, (size_t)c->size, NULL, &doc, &err), KILN_OK, "%s", err.message);
    uint32_t checked = 0, meshes;
    const kiln_blob_mesh *bm = kiln_blob_meshes(b->blob, &meshes);
    for (uint32_t node = 0; node < kiln_cast_node_count(doc); node++) {
        if (kiln_cast_node_at(doc, node)->id != KILN_CAST_ID_BLENDSHAPE) continue;
        kiln_cast_blend_shape cs;
        cr_assert_eq(kiln_cast_get_blend_shape(doc, node, &cs, NULL), KILN_OK);
        kiln_cast_mesh cm;
        cr_assert_eq(kiln_cast_get_mesh(doc, cs.base_mesh, &cm, NULL), KILN_OK);
        uint32_t mesh = kiln_blob_find(b->blob, KILN_SECTION_MESHES, cm.name);
        cr_assert_lt(mesh, meshes, "mesh '%s' not baked", cm.name);
        uint32_t si = kiln_blob_find_blend_shape(b->blob, mesh, cs.name);
        cr_assert_neq(si, KILN_BLOB_NONE, "shape '%s' not baked", cs.name);
        const kiln_blob_blend_shape *s = &kiln_blob_blend_shapes(b->blob, NULL)[si];
        cr_expect_eq(s->target_scale, cs.target_scale);
        const kiln_blob_stream *ps = kiln_blob_mesh_stream(b->blob, &bm[mesh], KILN_ATTR_POSITION, 0);
        const float *base = kiln_blob_stream_data(b->blob, ps);
        const uint32_t *ix = kiln_blend_shape_indices(b->blob, s);
        const float *d = kiln_blend_shape_deltas(b->blob, s);
        for (uint32_t k = 0; k < cs.pair_count; k++) {
            uint32_t v = kiln_cast_array_u32(&cs.indices, k);
            if (v >= cm.vertex_count) continue;
            float t[3];
            kiln_cast_array_read_f32(&cs.targets, k, 1, t);
            uint32_t j = 0;
            while (j < s->delta_count && ix[j] < v) j++;
            for (int q = 0; q < 3; q++) {
                float got = base[3 * v + q] + (j < s->delta_count && ix[j] == v ? d[3 * j + q] : 0.0f);
                cr_expect(near(got, t[q], TOL), "shape '%s' vertex %u: %g, authored %g", cs.name, v, (double)got,
                          (double)t[q]);
            }
            checked++;
        }
    }
    kiln_cast_free(doc);
    return checked;
}

Test(blend_shape, sample_character_breathes)
{
    cast_bytes model = read_sample("character.cast"), anim = read_sample("character_walk.cast");
    const cast_bytes *in[2] = {&model, &anim};
    baked b;
    cr_assert_eq(bake_bytes(in, 1, KILN_BAKE_NO_OPTIMIZE, &b), KILN_OK);
    cr_expect_gt(check_authored_pairs(&model, &b), 10u);
    baked_free(&b);

    /* optimised, with the walk: the clip's bs track drives chest_breathe */
    cr_assert_eq(bake_bytes(in, 2, 0, &b), KILN_OK);
    uint32_t body = kiln_blob_find(b.blob, KILN_SECTION_MESHES, "body");
    cr_assert_neq(body, KILN_BLOB_NONE);
    uint32_t shape = kiln_blob_find_blend_shape(b.blob, body, "chest_breathe"), track;
    cr_assert_neq(shape, KILN_BLOB_NONE);
    uint32_t clips;
    const kiln_blob_animation *a = kiln_blob_animations(b.blob, &clips);
    cr_assert_eq(clips, 1u);
    cr_assert_eq(kiln_blend_shape_bind_clip(b.blob, 0, b.blob, &shape, 1, &track), KILN_OK);
    cr_expect_lt(track, a->scalar_count, "chest_breathe is animated by the walk");
    const kiln_blob_mesh *m = &kiln_blob_meshes(b.blob, NULL)[body];
    float *out = malloc((size_t)m->vertex_count * 12), *base = malloc((size_t)m->vertex_count * 12);
    cr_assert(out && base);
    const float w = 1.0f;
    cr_assert_eq(apply(b.blob, body, &shape, &w, 1, out, m->vertex_count), KILN_OK);
    cr_assert_eq(apply(b.blob, body, NULL, NULL, 0, base, m->vertex_count), KILN_OK);
    uint32_t moved = 0;
    for (uint32_t v = 0; v < m->vertex_count; v++) moved += memcmp(out + 3 * v, base + 3 * v, 12) != 0;
    cr_expect_eq(moved, kiln_blob_blend_shapes(b.blob, NULL)[shape].delta_count);
    free(out);
    free(base);
    baked_free(&b);
    free(model.data);
    free(anim.data);
}

/* ---- the shared corpus ------------------------------------------------------------------------------- */
Test(blend_shape, corpus_blendshape_model)
{
    char dir[1024];
    corpus_dir_or_skip(dir, sizeof dir);
    file_bytes f;
    if (!corpus_read(dir, "blendshape_model.cast", &f))
        cr_skip_test("%s/blendshape_model.cast is missing: skipping", dir);
    cast_bytes c = {f.data, f.size};
    const cast_bytes *in[1] = {&c};
    baked b;
    cr_assert_eq(bake_bytes(in, 1, KILN_BAKE_NO_OPTIMIZE, &b), KILN_OK);
    cr_expect_eq(check_authored_pairs(&c, &b), 11u);
    /* MANIFEST.md: smile (ts 1), blink (ts 2), puff (no ts -> 1); every target is base + (0, 0.1, 0.2) */
    static const char *const names[3] = {"smile", "blink", "puff"};
    static const float ts[3] = {1, 2, 1};
    static const uint32_t counts[3] = {3, 5, 3};
    uint32_t n;
    const kiln_blob_blend_shape *s = kiln_blob_blend_shapes(b.blob, &n);
    cr_assert_eq(n, 3u);
    for (uint32_t i = 0; i < 3; i++) {
        cr_expect_str_eq(kiln_blob_string(b.blob, s[i].name), names[i]);
        cr_expect_eq(s[i].target_scale, ts[i]);
        cr_expect_eq(s[i].delta_count, counts[i]);
        const float *d = kiln_blend_shape_deltas(b.blob, &s[i]);
        for (uint32_t k = 0; k < s[i].delta_count; k++)
            cr_expect(near(d[3 * k], 0, TOL) && near(d[3 * k + 1], 0.1, TOL) && near(d[3 * k + 2], 0.2, TOL),
                      "%s delta %u: (%g %g %g)", names[i], k, (double)d[3 * k], (double)d[3 * k + 1],
                      (double)d[3 * k + 2]);
    }
    baked_free(&b);

    /* optimised: vertices follow the remap; positions are distinct on this grid, so each
     * authored vertex is found by its base position. Weights: smile -1 (0), blink 3 (ts 2),
     * puff 1.5 (ts 1). */
    cr_assert_eq(bake_bytes(in, 1, 0, &b), KILN_OK);
    kiln_cast_doc *doc;
    kiln_diag err;
    cr_assert_eq(kiln_cast_parse(c.data, (size_t)c.size, NULL, &doc, &err), KILN_OK);
    kiln_cast_mesh cm;
    uint32_t mesh_node = 0;
    while (kiln_cast_node_at(doc, mesh_node)->id != KILN_CAST_ID_MESH) mesh_node++;
    cr_assert_eq(kiln_cast_get_mesh(doc, mesh_node, &cm, NULL), KILN_OK);
    float authored[25 * 3];
    cr_assert_eq(cm.vertex_count, 25u);
    kiln_cast_array_read_f32(&cm.positions, 0, 25, authored);
    kiln_cast_free(doc);
    const kiln_blob_mesh *m = mesh0(&b);
    cr_assert_eq(m->vertex_count, 25u);
    const uint32_t all[3] = {0, 1, 2};
    const float w[3] = {-1, 3, 1.5f};
    float base[75], out[75];
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        kiln_simd_force(paths[p]);
        cr_assert_eq(apply(b.blob, 0, NULL, NULL, 0, base, 25), KILN_OK);
        cr_assert_eq(apply(b.blob, 0, all, w, 3, out, 25), KILN_OK);
        for (uint32_t v = 0; v < 25; v++) {
            uint32_t a = 0;
            while (a < 25 && memcmp(authored + 3 * a, base + 3 * v, 12) != 0) a++;
            cr_assert_lt(a, 25u, "baked vertex %u is no authored vertex", v);
            double scale = a >= 20 ? 2.0 : (a == 6 || a == 7 || a == 8) ? 1.0 : 0.0; /* blink; puff; smile is 0 */
            cr_expect(near(out[3 * v], authored[3 * a], TOL) &&
                          near(out[3 * v + 1], authored[3 * a + 1] + 0.1 * scale, 1e-5) &&
                          near(out[3 * v + 2], authored[3 * a + 2] + 0.2 * scale, 1e-5),
                      "%s vertex %u (authored %u): (%g %g %g)", kiln_simd_name(paths[p]), v, a, (double)out[3 * v],
                      (double)out[3 * v + 1], (double)out[3 * v + 2]);
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    baked_free(&b);
    file_bytes_free(&f);
}

/* Expected outputs (expected/README.md): `mesh_vertices_model_space` holds the skinned and
 * shape-keyed vertices of small meshes, in the authored vertex order. Every case whose model
 * has BlendShapes is baked without meshoptimizer (baked order = authored order), sampled at
 * each listed frame, its shape weights taken from the clip by name (D.7) and applied; skinned
 * meshes are then skinned from the shaped positions (kiln_skin_desc.source_positions) by their
 * own method. Skinned meshes of rigs with IK handles or constraints are counted and left out:
 * their expected vertices come from Blender's solvers, not the spec's (test_rig). */
static uint32_t cast_blend_shapes(const file_bytes *f)
{
    kiln_cast_doc *doc;
    if (kiln_cast_parse(f->data, f->size, NULL, &doc, NULL) != KILN_OK) return 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < kiln_cast_node_count(doc); i++)
        n += kiln_cast_node_at(doc, i)->id == KILN_CAST_ID_BLENDSHAPE;
    kiln_cast_free(doc);
    return n;
}

/* The skinning inputs of one skeleton at the sampled pose: matrices, and dual quaternions. */
typedef struct frame_skin {
    uint32_t bones;
    float *model, *skin;
    kiln_skin_dual_quat *dq;
} frame_skin;

static void frame_skin_eval(const kiln_blob *blob, uint32_t skeleton, const kiln_soa_xform *pose, frame_skin *f)
{
    uint32_t bones = kiln_blob_skeletons(blob, NULL)[skeleton].bone_count;
    if (f->bones < bones) {
        free(f->model), free(f->skin), free(f->dq);
        f->model = malloc((size_t)bones * 16 * sizeof(float)), f->skin = malloc((size_t)bones * 16 * sizeof(float));
        f->dq = malloc((size_t)bones * sizeof *f->dq);
        cr_assert(f->model && f->skin && f->dq);
        f->bones = bones;
    }
    cr_assert_eq(kiln_pose_local_to_object(blob, skeleton, pose, NULL, f->model, bones), KILN_OK);
    cr_assert_eq(kiln_pose_skin_matrices(blob, skeleton, f->model, f->skin, bones), KILN_OK);
    cr_assert_eq(kiln_pose_skin_dual_quats(f->skin, f->dq, bones), KILN_OK);
}

/* Skins the blend-shaped positions `shaped` of a skinned mesh into out (kiln_skin_desc's
 * source positions), by the mesh's own method. */
static void skin_shaped(const kiln_blob *blob, uint32_t mesh, const frame_skin *f, const float *shaped, float *out)
{
    const kiln_blob_mesh *m = &kiln_blob_meshes(blob, NULL)[mesh];
    kiln_skin_desc d;
    memset(&d, 0, sizeof d);
    d.blob = blob, d.mesh = mesh, d.skin_matrices = f->skin, d.dual_quats = f->dq, d.bone_count = f->bones;
    d.vertex_count = m->vertex_count, d.positions = out, d.source_positions = shaped;
    cr_assert_eq(kiln_skin_mesh(&d), KILN_OK);
}

typedef struct vertex_run {
    uint32_t frames, vertices, skinned, rigged_frames_left;
    double worst;
} vertex_run;

static void compare_case(const char *dir, const char *name, const char *model, const char *anim, vertex_run *o)
{
    char ename[512];
    snprintf(ename, sizeof ename, "expected/%s.json", name);
    jr_value *doc = corpus_json(dir, ename);
    if (!doc) {
        fprintf(stderr, "blend_shape corpus %s: no %s/%s: skipped\n", name, dir, ename);
        return;
    }
    file_bytes fm, fa;
    cr_assert(corpus_read(dir, model, &fm) && corpus_read(dir, anim, &fa), "case %s: cannot read its Cast files", name);
    cast_bytes cm = {fm.data, fm.size}, ca = {fa.data, fa.size};
    const cast_bytes *in[2] = {&cm, &ca};
    baked b;
    cr_assert_eq(bake_bytes(in, 2, KILN_BAKE_NO_OPTIMIZE, &b), KILN_OK, "case %s does not bake", name);
    uint32_t clips, skels;
    kiln_blob_animations(b.blob, &clips);
    kiln_blob_skeletons(b.blob, &skels);
    cr_assert(clips >= 1 && skels >= 1, "case %s: no clip or no skeleton", name);
    kiln_anim_binding *bind = af_bind(b.blob, 0, b.blob, 0, NULL);
    cr_assert_not_null(bind);
    uint32_t soa = kiln_anim_binding_soa_count(bind);
    kiln_soa_xform *pose = aligned_alloc(64, soa * sizeof *pose);
    const kiln_blob_animation *clip = kiln_blob_animations(b.blob, NULL);
    float *scalars = calloc(clip->scalar_count + 1, sizeof(float));
    cr_assert(pose && scalars);
    double fps = jr_num_or(jr_get(doc, "fps"), clip->framerate);
    uint32_t ik_count, constraint_count;
    kiln_blob_ik_handles(b.blob, &ik_count), kiln_blob_constraints(b.blob, &constraint_count);
    const int rigged = ik_count || constraint_count;
    frame_skin fs = {0, NULL, NULL, NULL};
    const jr_value *frames = jr_get(doc, "frames");
    for (size_t fi = 0; fi < jr_len(frames); fi++) {
        const jr_value *entry = jr_at(frames, fi), *meshes = jr_get(entry, "mesh_vertices_model_space");
        if (!jr_len(meshes)) continue;
        kiln_sample_desc sd;
        memset(&sd, 0, sizeof sd);
        sd.binding = bind;
        sd.time_s = jr_num_or(jr_get(entry, "time"), jr_num(jr_get(entry, "frame")) / fps);
        sd.out = pose;
        sd.out_count = soa;
        sd.scalars = scalars;
        sd.scalar_count = clip->scalar_count;
        cr_assert_eq(kiln_sample(&sd), KILN_OK);
        uint32_t skinned_for = KILN_BLOB_NONE; /* the skeleton fs holds this frame's matrices of */
        for (size_t mi = 0; mi < jr_len(meshes); mi++) {
            const jr_value *verts = jr_at(meshes, mi);
            uint32_t mesh = kiln_blob_find(b.blob, KILN_SECTION_MESHES, jr_key(meshes, mi));
            cr_assert_neq(mesh, KILN_BLOB_NONE, "case %s: mesh '%s' not baked", name, jr_key(meshes, mi));
            const kiln_blob_mesh *m = &kiln_blob_meshes(b.blob, NULL)[mesh];
            if (m->influences && rigged) {
                o->rigged_frames_left++; /* IK and constraints: Blender's solvers, not ours (test_rig) */
                continue;
            }
            if (m->influences && m->skeleton != skinned_for) /* once per frame and skeleton */
                frame_skin_eval(b.blob, m->skeleton, pose, &fs), skinned_for = m->skeleton;
            cr_assert_eq(jr_len(verts), m->vertex_count, "case %s mesh %s: vertex counts differ", name,
                         jr_key(meshes, mi));
            uint32_t shapes[256], track[256];
            float w[256];
            uint32_t n = kiln_blob_mesh_blend_shapes(b.blob, mesh, shapes, 256);
            cr_assert_leq(n, 256u);
            cr_assert_eq(kiln_blend_shape_bind_clip(b.blob, 0, b.blob, shapes, n, track), KILN_OK);
            kiln_blend_shape_weights(track, n, scalars, clip->scalar_count, w);
            float *out = malloc((size_t)m->vertex_count * 12), *shaped = malloc((size_t)m->vertex_count * 12);
            cr_assert(out && shaped);
            cr_assert_eq(apply(b.blob, mesh, shapes, w, n, m->influences ? shaped : out, m->vertex_count), KILN_OK);
            if (m->influences) skin_shaped(b.blob, mesh, &fs, shaped, out), o->skinned += m->vertex_count;
            for (uint32_t v = 0; v < m->vertex_count; v++)
                for (int c = 0; c < 3; c++) {
                    double e = fabs(out[3 * v + c] - jr_num(jr_at(jr_at(verts, v), (size_t)c)));
                    if (!(e <= o->worst)) o->worst = e; /* NaN counts as the worst */
                    cr_expect_leq(e, 1e-4, "case %s frame %zu mesh %s vertex %u: %g vs %g", name, fi, jr_key(meshes, mi),
                                  v, (double)out[3 * v + c], jr_num(jr_at(jr_at(verts, v), (size_t)c)));
                }
            o->vertices += m->vertex_count;
            free(out), free(shaped);
        }
        o->frames++;
    }
    free(fs.model), free(fs.skin), free(fs.dq);
    free(scalars);
    free(pose);
    free(bind);
    baked_free(&b);
    file_bytes_free(&fm);
    file_bytes_free(&fa);
    jr_free(doc);
}

Test(blend_shape, corpus_expected_vertices)
{
    char dir[1024];
    corpus_dir_or_skip(dir, sizeof dir);
    jr_value *cases = corpus_json(dir, "cases.json");
    if (!cases) cr_skip_test("%s/cases.json is missing: skipping", dir);
    uint32_t used = 0;
    vertex_run o = {0, 0, 0, 0, 0.0};
    for (size_t i = 0; i < jr_len(cases); i++) {
        const jr_value *c = jr_at(cases, i);
        const char *name = jr_str(jr_get(c, "case")), *model = jr_str(jr_get(c, "model"));
        const char *anim = jr_str(jr_get(c, "anim"));
        if (!name || !model || !anim) continue;
        file_bytes fm;
        if (!corpus_read(dir, model, &fm)) continue;
        uint32_t shapes = cast_blend_shapes(&fm);
        file_bytes_free(&fm);
        if (!shapes) continue;
        used++;
        compare_case(dir, name, model, anim, &o);
    }
    jr_free(cases);
    if (!used)
        cr_skip_test("no case of %s/cases.json uses a model with BlendShapes (the public set has none): skipping", dir);
    fprintf(stderr,
            "blend_shape corpus: %u case(s), %u frames, %u vertices compared (%u of them shaped then skinned), worst %.3g; "
            "%u skinned mesh frames of rigs with IK or constraints left out (Blender's solvers)\n",
            used, o.frames, o.vertices, o.skinned, o.worst, o.rigged_frames_left);
}
