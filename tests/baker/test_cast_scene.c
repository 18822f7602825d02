/* Typed Cast accessors (kiln/cast_scene.h): defaults, repairs and failures on files built with
 * the writer, and the hand-checked values of the shared corpus when it is present. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/bake/cast.h"
#include "kiln/bake/cast_scene.h"
#include "kiln/bake/cast_write.h"
#include "test_util.h"

/* ---- building documents with the writer ------------------------------------------------- */

typedef struct scene {
    kiln_cast_writer *w;
    uint32_t          root;   /* writer handle of the first Root */
    unsigned char    *bytes;
    size_t            size;
    kiln_cast_doc    *doc;
    diag_log          log;    /* reports of the accessors (not of the parser) */
    kiln_diag_sink    sink;
    uint64_t          next_hash;
} scene;

static void scene_begin(scene *s)
{
    memset(s, 0, sizeof *s);
    s->w = kiln_cast_writer_create(NULL);
    cr_assert_not_null(s->w);
    s->root = kiln_cast_writer_node(s->w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    s->sink.fn = diag_log_push;
    s->sink.user = &s->log;
}

/* Serialises the writer's tree and parses it back. */
static void scene_parse(scene *s)
{
    uint64_t size = kiln_cast_writer_size(s->w);
    cr_assert_gt(size, 0, "the writer reported an error");
    s->size = (size_t)size;
    s->bytes = malloc(s->size);
    cr_assert_eq(kiln_cast_writer_write(s->w, s->bytes, size), KILN_OK);
    kiln_cast_writer_destroy(s->w);
    s->w = NULL;
    kiln_diag err;
    kiln_result r = kiln_cast_parse(s->bytes, s->size, NULL, &s->doc, &err);
    cr_assert_eq(r, KILN_OK, "parse failed: %s: %s", err.path, err.message);
}

static void scene_end(scene *s)
{
    kiln_cast_writer_destroy(s->w);
    kiln_cast_free(s->doc);
    free(s->bytes);
    memset(s, 0, sizeof *s);
}

/* A hash no test refers to on purpose. */
static uint64_t fresh_hash(scene *s) { return 1000 + s->next_hash++; }

static uint32_t add(scene *s, uint32_t parent, uint32_t id, uint64_t hash)
{
    uint32_t n = kiln_cast_writer_node(s->w, parent, id, hash);
    cr_assert_neq(n, KILN_CAST_NONE);
    return n;
}

static void put_str(scene *s, uint32_t node, const char *name, const char *value)
{
    cr_assert_eq(kiln_cast_writer_string(s->w, node, name, value), KILN_OK);
}

static void put(scene *s, uint32_t node, const char *name, uint16_t type, const void *data, uint32_t count)
{
    cr_assert_eq(kiln_cast_writer_prop(s->w, node, name, type, data, count), KILN_OK);
}

static void put_u8(scene *s, uint32_t node, const char *name, uint8_t v) { put(s, node, name, KILN_CAST_TYPE_BYTE, &v, 1); }
static void put_u16(scene *s, uint32_t node, const char *name, uint16_t v) { put(s, node, name, KILN_CAST_TYPE_SHORT, &v, 1); }
static void put_u32(scene *s, uint32_t node, const char *name, uint32_t v) { put(s, node, name, KILN_CAST_TYPE_INT, &v, 1); }
static void put_u64(scene *s, uint32_t node, const char *name, uint64_t v) { put(s, node, name, KILN_CAST_TYPE_LONG, &v, 1); }
static void put_f32(scene *s, uint32_t node, const char *name, float v) { put(s, node, name, KILN_CAST_TYPE_FLOAT, &v, 1); }
static void put_f64(scene *s, uint32_t node, const char *name, double v) { put(s, node, name, KILN_CAST_TYPE_DOUBLE, &v, 1); }

static void put_v3(scene *s, uint32_t node, const char *name, float x, float y, float z)
{
    float v[3] = {x, y, z};
    put(s, node, name, KILN_CAST_TYPE_VEC3, v, 1);
}

static void put_v4(scene *s, uint32_t node, const char *name, float x, float y, float z, float w)
{
    float v[4] = {x, y, z, w};
    put(s, node, name, KILN_CAST_TYPE_VEC4, v, 1);
}

/* The k-th node of kind `id` in file order. */
static uint32_t nth(const kiln_cast_doc *doc, uint32_t id, uint32_t k)
{
    for (uint32_t n = 0; n < kiln_cast_node_count(doc); n++) {
        if (kiln_cast_node_at(doc, n)->id == id && k-- == 0) return n;
    }
    cr_assert_fail("no node %u of kind %s", k, kiln_cast_id_name(id));
    return KILN_CAST_NONE;
}

static const kiln_diag *find_diag(const diag_log *log, kiln_result code)
{
    for (int i = 0; i < log->count && i < 32; i++)
        if (log->items[i].code == code) return &log->items[i];
    return NULL;
}

static int all_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i]) return 0;
    return 1;
}

#define EPS 1e-5f
#define assert_vec(v, n, ...)                                                                     \
    do {                                                                                          \
        const float want_[] = {__VA_ARGS__};                                                      \
        for (int i_ = 0; i_ < (n); i_++)                                                          \
            cr_assert_float_eq((v)[i_], want_[i_], EPS, "component %d: %g, expected %g", i_,     \
                               (double)(v)[i_], (double)want_[i_]);                               \
    } while (0)

static const float tri_vp[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};

/* Root > Model(hash 2) > Mesh(hash 3) with a 3-vertex triangle; returns the mesh handle. */
static uint32_t triangle_mesh(scene *s, uint32_t *model)
{
    *model = add(s, s->root, KILN_CAST_ID_MODEL, 2);
    uint32_t mesh = add(s, *model, KILN_CAST_ID_MESH, 3);
    put(s, mesh, "vp", KILN_CAST_TYPE_VEC3, tri_vp, 3);
    uint32_t f[3] = {0, 1, 2};
    cr_assert_eq(kiln_cast_writer_ints(s->w, mesh, "f", f, 3), KILN_OK);
    return mesh;
}

/* ---- arrays ------------------------------------------------------------------------------ */

Test(cast_array, widens_every_integer_width)
{
    /* One stray byte first so that every payload is misaligned. */
    unsigned char buf[1 + 16];
    const uint8_t b[3] = {7, 200, 255};
    memcpy(buf + 1, b, 3);
    kiln_cast_array a = {buf + 1, 3, KILN_CAST_TYPE_BYTE, 1};
    cr_assert_eq(kiln_cast_array_u32(&a, 1), 200);
    cr_assert_float_eq(kiln_cast_array_f32(&a, 2), 255.0f, 0);

    const uint8_t h[4] = {0x34, 0x12, 0xFF, 0xFF}; /* 0x1234, 0xFFFF */
    memcpy(buf + 1, h, 4);
    a = (kiln_cast_array){buf + 1, 2, KILN_CAST_TYPE_SHORT, 1};
    cr_assert_eq(kiln_cast_array_u32(&a, 0), 0x1234);
    cr_assert_eq(kiln_cast_array_u32(&a, 1), 0xFFFF);

    const uint8_t l[16] = {5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}; /* 5, 2^32 * 2^32... */
    memcpy(buf + 1, l, 16);
    a = (kiln_cast_array){buf + 1, 2, KILN_CAST_TYPE_LONG, 1};
    cr_assert_eq(kiln_cast_array_u32(&a, 0), 5);
    cr_assert_eq(kiln_cast_array_u32(&a, 1), UINT32_MAX, "u64 values past 32 bits saturate");
    cr_assert_eq(kiln_cast_array_u32(&a, 2), 0, "out of range reads 0");
}

Test(cast_array, bulk_reads_match_element_reads)
{
    unsigned char buf[1 + 4 * 12];
    const uint32_t i32[12] = {0, 1, 2, 70000, 5, 6, 7, 8, 9, 10, 11, 0xFFFFFFFFu};
    memcpy(buf + 1, i32, sizeof i32);
    kiln_cast_array a = {buf + 1, 12, KILN_CAST_TYPE_INT, 1};
    uint32_t out[12];
    kiln_cast_array_read_u32(&a, 2, 10, out);
    for (uint32_t k = 0; k < 10; k++) cr_assert_eq(out[k], i32[k + 2]);

    const float v3[6] = {1.5f, -2, 3, 4, 5, 6.25f};
    memcpy(buf + 1, v3, sizeof v3);
    kiln_cast_array v = {buf + 1, 2, KILN_CAST_TYPE_VEC3, 3};
    float f[6];
    kiln_cast_array_read_f32(&v, 0, 2, f);
    for (int k = 0; k < 6; k++) cr_assert_float_eq(f[k], v3[k], 0);
    kiln_cast_array_read_f32(&v, 1, 1, f);
    for (int k = 0; k < 3; k++) cr_assert_float_eq(f[k], v3[3 + k], 0, "element 1 starts at scalar 3");
    cr_assert_float_eq(kiln_cast_array_f32(&v, 1), 4.0f, 0, "scalar read of a vector: component 0");

    const double d[2] = {0.5, -7.25};
    memcpy(buf + 1, d, sizeof d);
    kiln_cast_array da = {buf + 1, 2, KILN_CAST_TYPE_DOUBLE, 1};
    kiln_cast_array_read_f32(&da, 0, 2, f);
    cr_assert_float_eq(f[1], -7.25f, 0);
    cr_assert_eq(kiln_cast_array_u32(&da, 1), 0, "negative floats read as u32 give 0");

    const uint16_t hs[3] = {9, 8, 7};
    memcpy(buf + 1, hs, sizeof hs);
    kiln_cast_array ha = {buf + 1, 3, KILN_CAST_TYPE_SHORT, 1};
    kiln_cast_array_read_f32(&ha, 1, 2, f);
    cr_assert_float_eq(f[0], 8.0f, 0);
    cr_assert_float_eq(f[1], 7.0f, 0);
}

Test(cast_array, bulk_read_out_of_range_writes_nothing)
{
    const uint8_t b[3] = {1, 2, 3};
    kiln_cast_array a = {b, 3, KILN_CAST_TYPE_BYTE, 1};
    uint32_t out[4] = {99, 99, 99, 99};
    kiln_cast_array_read_u32(&a, 2, 2, out);
    cr_assert_eq(out[0], 99);
    kiln_cast_array_read_u32(&a, 3, 0, out); /* empty range at the end is fine */
    cr_assert_eq(out[0], 99);
}

/* ---- common behaviour ------------------------------------------------------------------- */

Test(cast_scene, wrong_kind_and_null_arguments_are_invalid)
{
    scene s;
    scene_begin(&s);
    uint32_t model;
    triangle_mesh(&s, &model);
    scene_parse(&s);
    kiln_cast_mesh mesh;
    memset(&mesh, 0xAB, sizeof mesh);
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MODEL, 0), &mesh, &s.sink), KILN_ERR_INVALID_ARGUMENT);
    cr_assert(all_zero(&mesh, sizeof mesh), "out is zeroed on failure");
    cr_assert_eq(kiln_cast_get_mesh(s.doc, 999, &mesh, &s.sink), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_cast_get_mesh(NULL, 0, &mesh, NULL), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), NULL, NULL), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(s.log.count, 0);
    scene_end(&s);
}

Test(cast_scene, failure_names_node_path_property_and_offset)
{
    scene s;
    scene_begin(&s);
    uint32_t model = add(&s, s.root, KILN_CAST_ID_MODEL, 2);
    add(&s, model, KILN_CAST_ID_MESH, 3);
    uint32_t mesh = add(&s, model, KILN_CAST_ID_MESH, 4);
    put_f32(&s, mesh, "vp", 1.0f); /* vp as a float: the wrong type */
    uint32_t f[3] = {0, 0, 0};
    kiln_cast_writer_ints(s.w, mesh, "f", f, 3);
    scene_parse(&s);

    kiln_cast_mesh m;
    uint32_t node = nth(s.doc, KILN_CAST_ID_MESH, 1);
    cr_assert_eq(kiln_cast_get_mesh(s.doc, node, &m, &s.sink), KILN_ERR_CAST_WRONG_TYPE);
    const kiln_diag *d = find_diag(&s.log, KILN_ERR_CAST_WRONG_TYPE);
    cr_assert_not_null(d);
    cr_assert_eq(d->severity, KILN_SEVERITY_ERROR);
    cr_assert_str_eq(d->path, "Root[0]/Model[0]/Mesh[1].vp");
    cr_assert_eq(d->offset, kiln_cast_find_prop(s.doc, node, "vp", NULL)->offset);

    s.log.count = 0;
    node = nth(s.doc, KILN_CAST_ID_MESH, 0);
    cr_assert_eq(kiln_cast_get_mesh(s.doc, node, &m, &s.sink), KILN_ERR_CAST_MISSING_PROPERTY);
    cr_assert_eq(s.log.count, 2, "both missing required properties are reported");
    cr_assert_str_eq(s.log.items[0].path, "Root[0]/Model[0]/Mesh[0].vp");
    cr_assert_str_eq(s.log.items[1].path, "Root[0]/Model[0]/Mesh[0].f");
    cr_assert_eq(s.log.items[0].offset, kiln_cast_node_at(s.doc, node)->offset, "absent: the node's offset");
    scene_end(&s);
}

Test(cast_scene, unexpected_parent_warns_but_reads)
{
    scene s;
    scene_begin(&s);
    uint32_t mesh = add(&s, s.root, KILN_CAST_ID_MESH, 3); /* a Mesh straight under the Root */
    put(&s, mesh, "vp", KILN_CAST_TYPE_VEC3, tri_vp, 3);
    uint32_t f[3] = {0, 1, 2};
    kiln_cast_writer_ints(s.w, mesh, "f", f, 3);
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.vertex_count, 3);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_UNEXPECTED_PARENT, KILN_SEVERITY_WARNING));
    scene_end(&s);
}

Test(cast_scene, node_skipped_by_the_parser_fails)
{
    /* A Mesh holding a property of unknown type 'zz': the parser keeps it opaque. */
    static const unsigned char raw[38] = {
        'm', 'e', 's', 'h', 38, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
        'z', 'z', 2, 0, 1, 0, 0, 0, 'v', 'p', 1, 2, 3, 4};
    scene s;
    scene_begin(&s);
    uint32_t model = add(&s, s.root, KILN_CAST_ID_MODEL, 2);
    cr_assert_eq(kiln_cast_writer_raw(s.w, model, raw, sizeof raw), KILN_OK);
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink),
                 KILN_ERR_CAST_UNKNOWN_PROPERTY_TYPE);
    scene_end(&s);
}

/* ---- model -------------------------------------------------------------------------------- */

Test(cast_model, defaults_without_properties)
{
    scene s;
    scene_begin(&s);
    add(&s, s.root, KILN_CAST_ID_MODEL, 2);
    scene_parse(&s);
    kiln_cast_model m;
    cr_assert_eq(kiln_cast_get_model(s.doc, nth(s.doc, KILN_CAST_ID_MODEL, 0), &m, &s.sink), KILN_OK);
    cr_assert_null(m.name);
    assert_vec(m.position, 3, 0, 0, 0);
    assert_vec(m.rotation, 4, 0, 0, 0, 1);
    assert_vec(m.scale, 3, 1, 1, 1);
    cr_assert_eq(m.skeleton, KILN_CAST_NONE);
    cr_assert_eq(m.mesh_count + m.hair_count + m.blend_shape_count + m.material_count, 0);
    cr_assert_eq(s.log.count, 0);
    scene_end(&s);
}

Test(cast_model, transform_counts_and_first_skeleton)
{
    scene s;
    scene_begin(&s);
    uint32_t model = add(&s, s.root, KILN_CAST_ID_MODEL, 2);
    put_str(&s, model, "n", "hero");
    put_v3(&s, model, "p", 1, 2, 3);
    put_v4(&s, model, "r", 0, 0, 2, 0); /* not unit: normalised with a warning */
    put_v3(&s, model, "s", 2, 2, 2);
    add(&s, model, KILN_CAST_ID_MATERIAL, 10);
    add(&s, model, KILN_CAST_ID_SKELETON, 11);
    add(&s, model, KILN_CAST_ID_SKELETON, 12);
    add(&s, model, KILN_CAST_ID_MESH, 13);
    add(&s, model, KILN_CAST_ID_MESH, 14);
    add(&s, model, KILN_CAST_ID_HAIR, 15);
    add(&s, model, KILN_CAST_ID_BLENDSHAPE, 16);
    scene_parse(&s);
    kiln_cast_model m;
    cr_assert_eq(kiln_cast_get_model(s.doc, nth(s.doc, KILN_CAST_ID_MODEL, 0), &m, &s.sink), KILN_OK);
    cr_assert_str_eq(m.name, "hero");
    assert_vec(m.position, 3, 1, 2, 3);
    assert_vec(m.rotation, 4, 0, 0, 1, 0);
    assert_vec(m.scale, 3, 2, 2, 2);
    cr_assert_eq(m.skeleton, nth(s.doc, KILN_CAST_ID_SKELETON, 0));
    cr_assert_eq(m.mesh_count, 2);
    cr_assert_eq(m.hair_count, 1);
    cr_assert_eq(m.blend_shape_count, 1);
    cr_assert_eq(m.material_count, 1);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_DUPLICATE, KILN_SEVERITY_WARNING), "second skeleton reported");
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING), "non-unit rotation reported");
    scene_end(&s);
}

Test(cast_model, bad_transforms_fall_back_to_defaults)
{
    scene s;
    scene_begin(&s);
    uint32_t model = add(&s, s.root, KILN_CAST_ID_MODEL, 2);
    put_v3(&s, model, "p", NAN, 0, 0);
    put_v4(&s, model, "r", 0, 0, 0, 0);
    put_v4(&s, model, "s", 1, 1, 1, 1); /* wrong type: ignored */
    scene_parse(&s);
    kiln_cast_model m;
    cr_assert_eq(kiln_cast_get_model(s.doc, nth(s.doc, KILN_CAST_ID_MODEL, 0), &m, &s.sink), KILN_OK);
    assert_vec(m.position, 3, 0, 0, 0);
    assert_vec(m.rotation, 4, 0, 0, 0, 1);
    assert_vec(m.scale, 3, 1, 1, 1);
    cr_assert_eq(s.log.count, 3);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_WRONG_TYPE, KILN_SEVERITY_WARNING));
    const kiln_diag *d = find_diag(&s.log, KILN_ERR_CAST_BAD_VALUE);
    cr_assert_str_eq(d->path, "Root[0]/Model[0].p");
    scene_end(&s);
}

Test(cast_model, single_value_with_several_elements_uses_the_first)
{
    scene s;
    scene_begin(&s);
    uint32_t model = add(&s, s.root, KILN_CAST_ID_MODEL, 2);
    const float p[6] = {4, 5, 6, 7, 8, 9};
    put(&s, model, "p", KILN_CAST_TYPE_VEC3, p, 2);
    put(&s, model, "s", KILN_CAST_TYPE_VEC3, p, 0); /* empty: the default */
    scene_parse(&s);
    kiln_cast_model m;
    cr_assert_eq(kiln_cast_get_model(s.doc, nth(s.doc, KILN_CAST_ID_MODEL, 0), &m, &s.sink), KILN_OK);
    assert_vec(m.position, 3, 4, 5, 6);
    assert_vec(m.scale, 3, 1, 1, 1);
    cr_assert_eq(s.log.count, 2);
    cr_assert_eq(s.log.items[0].code, KILN_ERR_CAST_LENGTH_MISMATCH);
    cr_assert_eq(s.log.items[0].severity, KILN_SEVERITY_WARNING);
    cr_assert_eq(s.log.items[1].code, KILN_ERR_CAST_EMPTY);
    scene_end(&s);
}

/* ---- mesh --------------------------------------------------------------------------------- */

Test(cast_mesh, minimal_triangle)
{
    scene s;
    scene_begin(&s);
    uint32_t model;
    triangle_mesh(&s, &model);
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_null(m.name);
    cr_assert_eq(m.vertex_count, 3);
    cr_assert_eq(m.face_count, 1);
    cr_assert_eq(m.positions.type, KILN_CAST_TYPE_VEC3);
    cr_assert_eq(m.positions.comps, 3);
    cr_assert_eq(m.faces.type, KILN_CAST_TYPE_BYTE);
    cr_assert_eq(m.normals.count + m.tangents.count, 0);
    cr_assert_eq(m.uv_layer_count + m.color_layer_count + m.max_influence, 0);
    cr_assert_eq(m.bad_index_face_count + m.degenerate_face_count, 0);
    cr_assert_eq(m.skinning, KILN_CAST_SKIN_LINEAR);
    cr_assert_eq(m.material, KILN_CAST_NONE);
    cr_assert_eq(m.material_hash, 0);
    cr_assert_eq(s.log.count, 0);
    scene_end(&s);
}

Test(cast_mesh, per_vertex_attribute_of_wrong_length_is_dropped)
{
    scene s;
    scene_begin(&s);
    uint32_t model, mesh = triangle_mesh(&s, &model);
    put(&s, mesh, "vn", KILN_CAST_TYPE_VEC3, tri_vp, 2);
    put(&s, mesh, "vt", KILN_CAST_TYPE_VEC3, tri_vp, 3);
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.normals.count, 0);
    cr_assert_null(m.normals.data);
    cr_assert_eq(m.tangents.count, 3);
    const kiln_diag *d = find_diag(&s.log, KILN_ERR_CAST_LENGTH_MISMATCH);
    cr_assert_not_null(d);
    cr_assert_eq(d->severity, KILN_SEVERITY_ERROR, "data is lost: ERROR");
    cr_assert_str_eq(d->path, "Root[0]/Model[0]/Mesh[0].vn");
    scene_end(&s);
}

Test(cast_mesh, uv_layers_follow_ul)
{
    scene s;
    scene_begin(&s);
    uint32_t model, mesh = triangle_mesh(&s, &model);
    const float uv[6] = {0, 0, 1, 0, 0, 1};
    put_u16(&s, mesh, "ul", 3);
    put(&s, mesh, "u0", KILN_CAST_TYPE_VEC2, uv, 3);
    put(&s, mesh, "u2", KILN_CAST_TYPE_VEC2, uv, 2); /* u1 missing, u2 short */
    put(&s, mesh, "u3", KILN_CAST_TYPE_VEC2, uv, 3); /* beyond ul: not a layer */
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.uv_layer_count, 3);
    cr_assert_eq(m.uv[0].count, 3);
    cr_assert_eq(m.uv[0].comps, 2);
    cr_assert_eq(m.uv[1].count, 0);
    cr_assert_eq(m.uv[2].count, 0);
    cr_assert_eq(m.uv[3].count, 0);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_MISSING_PROPERTY, KILN_SEVERITY_WARNING));
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_LENGTH_MISMATCH, KILN_SEVERITY_ERROR));
    scene_end(&s);
}

Test(cast_mesh, uvs_without_ul_are_not_layers)
{
    scene s;
    scene_begin(&s);
    uint32_t model, mesh = triangle_mesh(&s, &model);
    const float uv[6] = {0, 0, 1, 0, 0, 1};
    put(&s, mesh, "u0", KILN_CAST_TYPE_VEC2, uv, 3);
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.uv_layer_count, 0);
    cr_assert_eq(s.log.count, 1);
    scene_end(&s);
}

Test(cast_mesh, layer_counts_are_capped)
{
    scene s;
    scene_begin(&s);
    uint32_t model, mesh = triangle_mesh(&s, &model);
    put_u8(&s, mesh, "ul", 40);
    put_u32(&s, mesh, "cl", 17);
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, NULL), KILN_OK);
    cr_assert_eq(m.uv_layer_count, KILN_CAST_MAX_LAYERS);
    cr_assert_eq(m.color_layer_count, KILN_CAST_MAX_LAYERS);
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    const kiln_diag *d = find_diag(&s.log, KILN_ERR_LIMIT);
    cr_assert_not_null(d);
    cr_assert_eq(d->severity, KILN_SEVERITY_ERROR);
    cr_assert_str_eq(d->path, "Root[0]/Model[0]/Mesh[0].ul");
    scene_end(&s);
}

Test(cast_mesh, color_layers_per_cl)
{
    scene s;
    scene_begin(&s);
    uint32_t model, mesh = triangle_mesh(&s, &model);
    const uint32_t packed[3] = {0xFF0000FFu, 0xFF00FF00u, 0xFFFF0000u};
    const float rgba[12] = {1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1};
    put_u8(&s, mesh, "cl", 2);
    put(&s, mesh, "c0", KILN_CAST_TYPE_INT, packed, 3);
    put(&s, mesh, "c1", KILN_CAST_TYPE_VEC4, rgba, 3);
    put(&s, mesh, "vc", KILN_CAST_TYPE_INT, packed, 3); /* ignored: cl is present */
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.color_layer_count, 2);
    cr_assert_eq(m.color[0].type, KILN_CAST_TYPE_INT);
    cr_assert_eq(kiln_cast_array_u32(&m.color[0], 0), 0xFF0000FFu);
    cr_assert_eq(m.color[1].type, KILN_CAST_TYPE_VEC4);
    cr_assert_eq(m.color[1].count, 3);
    cr_assert_eq(s.log.count, 0);
    scene_end(&s);
}

Test(cast_mesh, legacy_vc_is_the_only_layer_without_cl)
{
    scene s;
    scene_begin(&s);
    uint32_t model, mesh = triangle_mesh(&s, &model);
    const uint32_t packed[3] = {1, 2, 3};
    put(&s, mesh, "vc", KILN_CAST_TYPE_INT, packed, 3);
    put(&s, mesh, "c1", KILN_CAST_TYPE_INT, packed, 3); /* no cl: not read */
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.color_layer_count, 1);
    cr_assert_eq(kiln_cast_array_u32(&m.color[0], 2), 3);
    scene_end(&s);
}

Test(cast_mesh, layer_zero_falls_back_to_vc)
{
    scene s;
    scene_begin(&s);
    uint32_t model, mesh = triangle_mesh(&s, &model);
    const uint32_t packed[3] = {4, 5, 6};
    put_u8(&s, mesh, "cl", 1);
    put(&s, mesh, "vc", KILN_CAST_TYPE_INT, packed, 3);
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.color_layer_count, 1);
    cr_assert_eq(kiln_cast_array_u32(&m.color[0], 0), 4);
    cr_assert_eq(s.log.count, 0);
    scene_end(&s);
}

Test(cast_mesh, skin_with_four_influences)
{
    scene s;
    scene_begin(&s);
    uint32_t model, mesh = triangle_mesh(&s, &model);
    uint16_t wb[12] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
    float wv[12] = {0.25f, 0.25f, 0.25f, 0.25f, 1, 0, 0, 0, 0.5f, 0.5f, 0, 0};
    put_u8(&s, mesh, "mi", 4);
    put(&s, mesh, "wb", KILN_CAST_TYPE_SHORT, wb, 12);
    put(&s, mesh, "wv", KILN_CAST_TYPE_FLOAT, wv, 12);
    put_str(&s, mesh, "sm", "quaternion");
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.max_influence, 4);
    cr_assert_eq(m.weight_bones.count, 12);
    cr_assert_eq(m.weight_bones.type, KILN_CAST_TYPE_SHORT);
    cr_assert_float_eq(kiln_cast_array_f32(&m.weight_values, 8), 0.5f, 0);
    cr_assert_eq(m.skinning, KILN_CAST_SKIN_DUAL_QUAT);
    cr_assert_eq(s.log.count, 0);
    scene_end(&s);
}

Test(cast_mesh, skin_of_wrong_length_is_dropped)
{
    scene s;
    scene_begin(&s);
    uint32_t model, mesh = triangle_mesh(&s, &model);
    uint32_t wb[5] = {0, 1, 0, 1, 0};
    float wv[6] = {1, 0, 1, 0, 1, 0};
    put_u8(&s, mesh, "mi", 2);
    cr_assert_eq(kiln_cast_writer_ints(s.w, mesh, "wb", wb, 5), KILN_OK);
    put(&s, mesh, "wv", KILN_CAST_TYPE_FLOAT, wv, 6);
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.max_influence, 0);
    cr_assert_eq(m.weight_bones.count + m.weight_values.count, 0);
    const kiln_diag *d = find_diag(&s.log, KILN_ERR_CAST_LENGTH_MISMATCH);
    cr_assert_not_null(d);
    cr_assert_eq(d->severity, KILN_SEVERITY_ERROR);
    cr_assert_str_eq(d->path, "Root[0]/Model[0]/Mesh[0].wb");
    scene_end(&s);
}

Test(cast_mesh, one_influence_is_rigid_without_weights)
{
    scene s;
    scene_begin(&s);
    uint32_t model, mesh = triangle_mesh(&s, &model);
    uint32_t wb[3] = {0, 1, 1};
    put_u8(&s, mesh, "mi", 1);
    kiln_cast_writer_ints(s.w, mesh, "wb", wb, 3);
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.max_influence, 1);
    cr_assert_eq(m.weight_bones.count, 3);
    cr_assert_eq(m.weight_values.count, 0);
    cr_assert_eq(s.log.count, 0);
    scene_end(&s);
}

Test(cast_mesh, one_influence_ignores_weights_of_the_wrong_length)
{
    scene s;
    scene_begin(&s);
    uint32_t model, mesh = triangle_mesh(&s, &model);
    uint32_t wb[3] = {0, 1, 1};
    float wv[2] = {1, 1};
    put_u8(&s, mesh, "mi", 1);
    kiln_cast_writer_ints(s.w, mesh, "wb", wb, 3);
    put(&s, mesh, "wv", KILN_CAST_TYPE_FLOAT, wv, 2);
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.max_influence, 1, "a rigid bind needs no weights: the skin stays");
    cr_assert_eq(m.weight_bones.count, 3);
    cr_assert_eq(m.weight_values.count, 0);
    cr_assert_eq(s.log.count, 1);
    cr_assert_eq(s.log.items[0].code, KILN_ERR_CAST_LENGTH_MISMATCH);
    cr_assert_eq(s.log.items[0].severity, KILN_SEVERITY_WARNING);
    scene_end(&s);
}

Test(cast_mesh, several_influences_without_weights_are_not_skinned)
{
    scene s;
    scene_begin(&s);
    uint32_t model, mesh = triangle_mesh(&s, &model);
    uint32_t wb[6] = {0, 1, 0, 1, 0, 1};
    put_u8(&s, mesh, "mi", 2);
    kiln_cast_writer_ints(s.w, mesh, "wb", wb, 6);
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.max_influence, 0);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_MISSING_PROPERTY, KILN_SEVERITY_WARNING));
    scene_end(&s);
}

Test(cast_mesh, bad_and_degenerate_faces_are_counted_not_dropped)
{
    scene s;
    scene_begin(&s);
    uint32_t model = add(&s, s.root, KILN_CAST_ID_MODEL, 2);
    uint32_t mesh = add(&s, model, KILN_CAST_ID_MESH, 3);
    put(&s, mesh, "vp", KILN_CAST_TYPE_VEC3, tri_vp, 3);
    /* good, degenerate, bad index, bad and degenerate (counted as bad), then 2 stray indices */
    uint32_t f[14] = {0, 1, 2, 0, 0, 1, 0, 1, 5, 7, 7, 1, 1, 2};
    put(&s, mesh, "f", KILN_CAST_TYPE_INT, f, 14);
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.face_count, 4);
    cr_assert_eq(m.faces.count, 14, "faces stay as stored");
    cr_assert_eq(m.bad_index_face_count, 2);
    cr_assert_eq(m.degenerate_face_count, 1);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_INDEX_RANGE, KILN_SEVERITY_ERROR));
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING), "degenerate faces");
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_LENGTH_MISMATCH, KILN_SEVERITY_WARNING), "partial triangle");
    scene_end(&s);
}

Test(cast_mesh, face_scan_covers_every_chunk)
{
    enum { FACES = 5000 };
    static uint32_t f[3 * FACES];
    for (uint32_t i = 0; i < 3 * FACES; i += 3) {
        f[i] = 0;
        f[i + 1] = 1;
        f[i + 2] = 2;
    }
    f[3 * 4321 + 1] = 3;     /* past the 3 vertices */
    f[3 * (FACES - 1)] = 2;  /* the very last face degenerate */
    scene s;
    scene_begin(&s);
    uint32_t model = add(&s, s.root, KILN_CAST_ID_MODEL, 2);
    uint32_t mesh = add(&s, model, KILN_CAST_ID_MESH, 3);
    put(&s, mesh, "vp", KILN_CAST_TYPE_VEC3, tri_vp, 3);
    kiln_cast_writer_ints(s.w, mesh, "f", f, 3 * FACES);
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.face_count, FACES);
    cr_assert_eq(m.bad_index_face_count, 1);
    cr_assert_eq(m.degenerate_face_count, 1);
    scene_end(&s);
}

Test(cast_mesh, long_face_indices_are_accepted)
{
    scene s;
    scene_begin(&s);
    uint32_t model = add(&s, s.root, KILN_CAST_ID_MODEL, 2);
    uint32_t mesh = add(&s, model, KILN_CAST_ID_MESH, 3);
    put(&s, mesh, "vp", KILN_CAST_TYPE_VEC3, tri_vp, 3);
    uint64_t f[3] = {0, 1, 0x100000000ull};
    put(&s, mesh, "f", KILN_CAST_TYPE_LONG, f, 3);
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.face_count, 1);
    cr_assert_eq(m.bad_index_face_count, 1, "a 64-bit index saturates, never wraps into range");
    scene_end(&s);
}

Test(cast_mesh, unknown_skinning_method_is_linear)
{
    scene s;
    scene_begin(&s);
    uint32_t model, mesh = triangle_mesh(&s, &model);
    put_str(&s, mesh, "sm", "cubic");
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.skinning, KILN_CAST_SKIN_LINEAR);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING));
    scene_end(&s);
}

Test(cast_mesh, material_resolves_in_the_owning_model_only)
{
    scene s;
    scene_begin(&s);
    uint32_t model, mesh = triangle_mesh(&s, &model);
    put_u64(&s, mesh, "m", 70);
    add(&s, model, KILN_CAST_ID_MATERIAL, 70);
    add(&s, model, KILN_CAST_ID_MATERIAL, 70); /* duplicate hash: the first wins */
    uint32_t other = add(&s, s.root, KILN_CAST_ID_MODEL, 5);
    uint32_t mesh2 = add(&s, other, KILN_CAST_ID_MESH, 6);
    put(&s, mesh2, "vp", KILN_CAST_TYPE_VEC3, tri_vp, 3);
    uint32_t f[3] = {0, 1, 2};
    kiln_cast_writer_ints(s.w, mesh2, "f", f, 3);
    put_u8(&s, mesh2, "m", 70); /* the material lives in the other model */
    scene_parse(&s);

    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.material_hash, 70);
    cr_assert_eq(m.material, nth(s.doc, KILN_CAST_ID_MATERIAL, 0));
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_DUPLICATE, KILN_SEVERITY_WARNING));

    s.log.count = 0;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 1), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.material_hash, 70);
    cr_assert_eq(m.material, KILN_CAST_NONE);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_UNRESOLVED, KILN_SEVERITY_WARNING));
    scene_end(&s);
}

Test(cast_mesh, empty_mesh_is_returned_with_a_warning)
{
    scene s;
    scene_begin(&s);
    uint32_t model = add(&s, s.root, KILN_CAST_ID_MODEL, 2);
    uint32_t mesh = add(&s, model, KILN_CAST_ID_MESH, 3);
    put(&s, mesh, "vp", KILN_CAST_TYPE_VEC3, tri_vp, 0);
    put(&s, mesh, "f", KILN_CAST_TYPE_INT, tri_vp, 0);
    put(&s, mesh, "vn", KILN_CAST_TYPE_VEC3, tri_vp, 0);
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.vertex_count, 0);
    cr_assert_eq(m.face_count, 0);
    cr_assert_eq(s.log.count, 1);
    cr_assert_eq(s.log.items[0].code, KILN_ERR_CAST_EMPTY);
    cr_assert_eq(s.log.items[0].severity, KILN_SEVERITY_WARNING);
    scene_end(&s);
}

Test(cast_mesh, duplicate_property_last_wins)
{
    scene s;
    scene_begin(&s);
    uint32_t model = add(&s, s.root, KILN_CAST_ID_MODEL, 2);
    uint32_t mesh = add(&s, model, KILN_CAST_ID_MESH, 3);
    put(&s, mesh, "vp", KILN_CAST_TYPE_VEC3, tri_vp, 2);
    put(&s, mesh, "vp", KILN_CAST_TYPE_VEC3, tri_vp, 3);
    uint32_t f[3] = {0, 1, 2};
    kiln_cast_writer_ints(s.w, mesh, "f", f, 3);
    put_str(&s, mesh, "n", "a");
    put_str(&s, mesh, "n", "b");
    scene_parse(&s);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(s.doc, nth(s.doc, KILN_CAST_ID_MESH, 0), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.vertex_count, 3);
    cr_assert_str_eq(m.name, "b");
    cr_assert_eq(s.log.count, 2);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_DUPLICATE, KILN_SEVERITY_WARNING));
    scene_end(&s);
}

/* ---- hair and blend shapes ------------------------------------------------------------------ */

static uint32_t hair_node(scene *s, uint32_t particles)
{
    uint32_t model = add(s, s->root, KILN_CAST_ID_MODEL, 2);
    uint32_t hair = add(s, model, KILN_CAST_ID_HAIR, 3);
    uint32_t se[2] = {2, 3};
    float pt[3 * 8] = {0};
    kiln_cast_writer_ints(s->w, hair, "se", se, 2);
    put(s, hair, "pt", KILN_CAST_TYPE_VEC3, pt, particles);
    return hair;
}

Test(cast_hair, strands_and_particles)
{
    scene s;
    scene_begin(&s);
    hair_node(&s, 7);
    scene_parse(&s);
    kiln_cast_hair h;
    cr_assert_eq(kiln_cast_get_hair(s.doc, nth(s.doc, KILN_CAST_ID_HAIR, 0), &h, &s.sink), KILN_OK);
    cr_assert_eq(h.strand_count, 2);
    cr_assert_eq(h.particle_count, 7);
    cr_assert_eq(kiln_cast_array_u32(&h.segments, 1), 3);
    cr_assert_eq(h.material, KILN_CAST_NONE);
    cr_assert_eq(s.log.count, 0);
    scene_end(&s);
}

Test(cast_hair, particle_count_mismatch_drops_the_hair)
{
    scene s;
    scene_begin(&s);
    hair_node(&s, 8);
    scene_parse(&s);
    kiln_cast_hair h;
    cr_assert_eq(kiln_cast_get_hair(s.doc, nth(s.doc, KILN_CAST_ID_HAIR, 0), &h, &s.sink), KILN_ERR_CAST_LENGTH_MISMATCH);
    cr_assert(all_zero(&h, sizeof h));
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_LENGTH_MISMATCH, KILN_SEVERITY_ERROR));
    scene_end(&s);
}

/* Model(2) > Mesh(3) + Material(4) + BlendShape(5) with b = base, vi 3 entries, vp `targets`. */
static uint32_t blend_shape_node(scene *s, uint64_t base, uint32_t targets)
{
    uint32_t model;
    triangle_mesh(s, &model);
    add(s, model, KILN_CAST_ID_MATERIAL, 4);
    uint32_t shape = add(s, model, KILN_CAST_ID_BLENDSHAPE, 5);
    uint32_t vi[3] = {0, 1, 2};
    put_str(s, shape, "n", "smile");
    put_u64(s, shape, "b", base);
    kiln_cast_writer_ints(s->w, shape, "vi", vi, 3);
    put(s, shape, "vp", KILN_CAST_TYPE_VEC3, tri_vp, targets);
    return shape;
}

Test(cast_blend_shape, pairs_and_default_scale)
{
    scene s;
    scene_begin(&s);
    blend_shape_node(&s, 3, 2);
    scene_parse(&s);
    kiln_cast_blend_shape b;
    cr_assert_eq(kiln_cast_get_blend_shape(s.doc, nth(s.doc, KILN_CAST_ID_BLENDSHAPE, 0), &b, &s.sink), KILN_OK);
    cr_assert_str_eq(b.name, "smile");
    cr_assert_eq(b.base_hash, 3);
    cr_assert_eq(b.base_mesh, nth(s.doc, KILN_CAST_ID_MESH, 0));
    cr_assert_eq(b.pair_count, 2);
    cr_assert_eq(b.indices.count, 3);
    cr_assert_float_eq(b.target_scale, 1.0f, 0);
    const kiln_diag *d = find_diag(&s.log, KILN_ERR_CAST_LENGTH_MISMATCH);
    cr_assert_not_null(d);
    cr_assert_eq(d->severity, KILN_SEVERITY_ERROR);
    scene_end(&s);
}

Test(cast_blend_shape, target_scale_rules)
{
    const struct { int type; double value; float want; int warns; } cases[] = {
        {KILN_CAST_TYPE_FLOAT, 2.0, 2.0f, 0},  {KILN_CAST_TYPE_DOUBLE, 0.5, 0.5f, 0},
        {KILN_CAST_TYPE_FLOAT, 0.0, 1.0f, 1},  {KILN_CAST_TYPE_FLOAT, -3.0, 1.0f, 1},
        {KILN_CAST_TYPE_FLOAT, NAN, 1.0f, 1},  {KILN_CAST_TYPE_DOUBLE, INFINITY, 1.0f, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        scene s;
        scene_begin(&s);
        uint32_t shape = blend_shape_node(&s, 3, 3);
        if (cases[i].type == KILN_CAST_TYPE_FLOAT) put_f32(&s, shape, "ts", (float)cases[i].value);
        else put_f64(&s, shape, "ts", cases[i].value);
        scene_parse(&s);
        kiln_cast_blend_shape b;
        cr_assert_eq(kiln_cast_get_blend_shape(s.doc, nth(s.doc, KILN_CAST_ID_BLENDSHAPE, 0), &b, &s.sink), KILN_OK);
        cr_assert_float_eq(b.target_scale, cases[i].want, 0, "case %zu: %g", i, (double)b.target_scale);
        cr_assert_eq(s.log.count, cases[i].warns, "case %zu", i);
        scene_end(&s);
    }
}

Test(cast_blend_shape, base_must_be_a_mesh_of_the_model)
{
    scene s;
    scene_begin(&s);
    blend_shape_node(&s, 4, 3); /* hash 4 is the Material */
    scene_parse(&s);
    kiln_cast_blend_shape b;
    cr_assert_eq(kiln_cast_get_blend_shape(s.doc, nth(s.doc, KILN_CAST_ID_BLENDSHAPE, 0), &b, &s.sink),
                 KILN_ERR_CAST_UNRESOLVED);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_UNRESOLVED, KILN_SEVERITY_ERROR));
    scene_end(&s);
}

Test(cast_blend_shape, missing_name_fails)
{
    scene s;
    scene_begin(&s);
    uint32_t model;
    triangle_mesh(&s, &model);
    uint32_t shape = add(&s, model, KILN_CAST_ID_BLENDSHAPE, 5);
    put_u64(&s, shape, "b", 3);
    scene_parse(&s);
    kiln_cast_blend_shape b;
    cr_assert_eq(kiln_cast_get_blend_shape(s.doc, nth(s.doc, KILN_CAST_ID_BLENDSHAPE, 0), &b, &s.sink),
                 KILN_ERR_CAST_MISSING_PROPERTY);
    cr_assert_eq(s.log.count, 3, "n, vi and vp are all reported");
    scene_end(&s);
}

/* ---- skeleton and bones ----------------------------------------------------------------------- */

/* A Skeleton (hash 3) under Model (hash 2); bones get hashes 100 + index. */
static uint32_t skeleton_node(scene *s)
{
    uint32_t model = add(s, s->root, KILN_CAST_ID_MODEL, 2);
    return add(s, model, KILN_CAST_ID_SKELETON, 3);
}

static uint32_t bone(scene *s, uint32_t skel, uint32_t index, const char *name, int64_t parent)
{
    uint32_t b = add(s, skel, KILN_CAST_ID_BONE, 100 + index);
    if (name) put_str(s, b, "n", name);
    if (parent != INT64_MIN) put_u32(s, b, "p", (uint32_t)parent);
    return b;
}

Test(cast_skeleton, parents_are_sanitised_and_shape_computed)
{
    scene s;
    scene_begin(&s);
    uint32_t skel = skeleton_node(&s);
    bone(&s, skel, 0, "root", -1);
    bone(&s, skel, 1, "a", 0);
    add(&s, skel, KILN_CAST_ID_IKHANDLE, 50); /* not a bone: does not shift the indices */
    bone(&s, skel, 2, "b", 1);
    bone(&s, skel, 3, "c", INT64_MIN); /* no p: root */
    bone(&s, skel, 4, "d", 99);        /* out of range: root */
    bone(&s, skel, 5, "e", 5);         /* itself: root */
    bone(&s, skel, 6, "f", 7);         /* parent listed after the child */
    bone(&s, skel, 7, "g", 0);
    add(&s, skel, KILN_CAST_ID_CONSTRAINT, 51);
    scene_parse(&s);

    uint32_t node = nth(s.doc, KILN_CAST_ID_SKELETON, 0);
    int32_t parents[8];
    cr_assert_eq(kiln_cast_skeleton_parents(s.doc, node, parents, 8, &s.sink), KILN_OK);
    const int32_t want[8] = {-1, 0, 1, -1, -1, -1, 7, 0};
    for (int i = 0; i < 8; i++) cr_assert_eq(parents[i], want[i], "bone %d: %d", i, parents[i]);
    cr_assert_eq(s.log.count, 2);
    cr_assert_eq(s.log.items[0].code, KILN_ERR_CAST_INDEX_RANGE);
    cr_assert_str_eq(s.log.items[0].path, "Root[0]/Model[0]/Skeleton[0]/Bone[4].p");

    kiln_cast_skeleton k;
    cr_assert_eq(kiln_cast_get_skeleton(s.doc, node, &k, NULL), KILN_OK);
    cr_assert_eq(k.bone_count, 8);
    cr_assert_eq(k.ik_count, 1);
    cr_assert_eq(k.constraint_count, 1);
    cr_assert_eq(k.root_count, 4);
    cr_assert_eq(k.depth, 3);
    cr_assert_eq(kiln_cast_skeleton_bone(s.doc, node, 2), nth(s.doc, KILN_CAST_ID_BONE, 2));
    cr_assert_eq(kiln_cast_skeleton_bone(s.doc, node, 8), KILN_CAST_NONE);
    cr_assert_eq(kiln_cast_skeleton_bone(s.doc, nth(s.doc, KILN_CAST_ID_MODEL, 0), 0), KILN_CAST_NONE);
    scene_end(&s);
}

Test(cast_skeleton, cycle_is_rejected)
{
    scene s;
    scene_begin(&s);
    uint32_t skel = skeleton_node(&s);
    bone(&s, skel, 0, "r", -1);
    bone(&s, skel, 1, "a", 3);
    bone(&s, skel, 2, "b", 1);
    bone(&s, skel, 3, "c", 2);
    scene_parse(&s);
    uint32_t node = nth(s.doc, KILN_CAST_ID_SKELETON, 0);
    int32_t parents[4];
    cr_assert_eq(kiln_cast_skeleton_parents(s.doc, node, parents, 4, &s.sink), KILN_ERR_CAST_BONE_CYCLE);
    const int32_t want[4] = {-1, 3, 1, 2};
    for (int i = 0; i < 4; i++) cr_assert_eq(parents[i], want[i], "parents[] stay readable after a cycle");
    const kiln_diag *d = find_diag(&s.log, KILN_ERR_CAST_BONE_CYCLE);
    cr_assert_not_null(d);
    cr_assert_eq(d->severity, KILN_SEVERITY_ERROR);
    cr_assert(strstr(d->path, "Skeleton[0]/Bone[") != NULL, "names a bone: %s", d->path);

    kiln_cast_skeleton k;
    memset(&k, 0xFF, sizeof k);
    cr_assert_eq(kiln_cast_get_skeleton(s.doc, node, &k, NULL), KILN_ERR_CAST_BONE_CYCLE);
    cr_assert(all_zero(&k, sizeof k));
    scene_end(&s);
}

Test(cast_skeleton, small_buffer_and_empty_skeleton)
{
    scene s;
    scene_begin(&s);
    uint32_t skel = skeleton_node(&s);
    bone(&s, skel, 0, "r", -1);
    bone(&s, skel, 1, "a", 0);
    uint32_t model2 = add(&s, s.root, KILN_CAST_ID_MODEL, 8);
    add(&s, model2, KILN_CAST_ID_SKELETON, 9);
    scene_parse(&s);
    int32_t parents[1];
    cr_assert_eq(kiln_cast_skeleton_parents(s.doc, nth(s.doc, KILN_CAST_ID_SKELETON, 0), parents, 1, &s.sink),
                 KILN_ERR_BUFFER_TOO_SMALL);
    kiln_cast_skeleton k;
    cr_assert_eq(kiln_cast_get_skeleton(s.doc, nth(s.doc, KILN_CAST_ID_SKELETON, 1), &k, &s.sink), KILN_OK);
    cr_assert_eq(k.bone_count + k.root_count + k.depth, 0);
    cr_assert_eq(kiln_cast_skeleton_parents(s.doc, nth(s.doc, KILN_CAST_ID_SKELETON, 1), NULL, 0, &s.sink), KILN_OK);
    cr_assert_eq(s.log.count, 0);
    scene_end(&s);
}

/* Chains listed child first: a walk from every bone to the root would be quadratic. */
static void long_chain(int cycle)
{
    enum { BONES = 100000 };
    scene s;
    scene_begin(&s);
    uint32_t skel = skeleton_node(&s);
    for (uint32_t i = 0; i < BONES; i++) {
        uint32_t b = add(&s, skel, KILN_CAST_ID_BONE, 100 + i);
        uint32_t p = i + 1 < BONES ? i + 1 : (cycle ? 0 : UINT32_MAX);
        put_u32(&s, b, "p", p);
    }
    scene_parse(&s);
    kiln_cast_skeleton k;
    kiln_result r = kiln_cast_get_skeleton(s.doc, nth(s.doc, KILN_CAST_ID_SKELETON, 0), &k, &s.sink);
    if (cycle) {
        cr_assert_eq(r, KILN_ERR_CAST_BONE_CYCLE);
    } else {
        cr_assert_eq(r, KILN_OK);
        cr_assert_eq(k.bone_count, BONES);
        cr_assert_eq(k.root_count, 1);
        cr_assert_eq(k.depth, BONES);
    }
    scene_end(&s);
}

Test(cast_skeleton, long_chain_depth_is_linear, .timeout = 60) { long_chain(0); }
Test(cast_skeleton, long_cycle_is_found, .timeout = 60) { long_chain(1); }

Test(cast_bone, defaults_without_properties)
{
    scene s;
    scene_begin(&s);
    uint32_t skel = skeleton_node(&s);
    bone(&s, skel, 0, "r", -1);
    add(&s, skel, KILN_CAST_ID_BONE, 101);
    scene_parse(&s);
    kiln_cast_bone b;
    cr_assert_eq(kiln_cast_get_bone(s.doc, nth(s.doc, KILN_CAST_ID_BONE, 1), &b, &s.sink), KILN_OK);
    cr_assert_null(b.name);
    cr_assert_eq(b.index, 1);
    cr_assert_eq(b.parent, -1);
    cr_assert_eq(b.segment_scale_compensate, 1, "ssc defaults to true");
    cr_assert_eq(b.has_local_position + b.has_local_rotation + b.has_world_position + b.has_world_rotation +
                 b.has_scale, 0);
    assert_vec(b.local_position, 3, 0, 0, 0);
    assert_vec(b.local_rotation, 4, 0, 0, 0, 1);
    assert_vec(b.world_rotation, 4, 0, 0, 0, 1);
    assert_vec(b.scale, 3, 1, 1, 1);
    cr_assert_eq(s.log.count, 1, "the missing name is reported");
    cr_assert_eq(s.log.items[0].code, KILN_ERR_CAST_MISSING_PROPERTY);
    cr_assert_eq(s.log.items[0].severity, KILN_SEVERITY_WARNING);
    scene_end(&s);
}

Test(cast_bone, stored_values_and_repairs)
{
    scene s;
    scene_begin(&s);
    uint32_t skel = skeleton_node(&s);
    uint32_t b0 = bone(&s, skel, 0, "hips", -1);
    put_u16(&s, b0, "ssc", 0);
    put_v3(&s, b0, "lp", 1, 2, 3);
    put_v4(&s, b0, "lr", 0, 3, 0, 4); /* length 5 */
    put_v3(&s, b0, "wp", 4, 5, 6);
    put_v4(&s, b0, "wr", 0, 0, 0, 0); /* zero: identity, counts as absent */
    put_v3(&s, b0, "s", INFINITY, 1, 1);
    uint32_t b1 = add(&s, skel, KILN_CAST_ID_BONE, 101);
    put_str(&s, b1, "n", "spine");
    put_u64(&s, b1, "p", 0);
    uint32_t b2 = add(&s, skel, KILN_CAST_ID_BONE, 102);
    put_u64(&s, b2, "p", UINT64_MAX); /* a long -1 */
    scene_parse(&s);

    kiln_cast_bone b;
    cr_assert_eq(kiln_cast_get_bone(s.doc, nth(s.doc, KILN_CAST_ID_BONE, 0), &b, &s.sink), KILN_OK);
    cr_assert_str_eq(b.name, "hips");
    cr_assert_eq(b.parent, -1, "0xFFFFFFFF as i is -1");
    cr_assert_eq(b.segment_scale_compensate, 0);
    cr_assert(b.has_local_position && b.has_local_rotation && b.has_world_position);
    cr_assert(!b.has_world_rotation && !b.has_scale);
    assert_vec(b.local_position, 3, 1, 2, 3);
    assert_vec(b.local_rotation, 4, 0, 0.6f, 0, 0.8f);
    assert_vec(b.world_position, 3, 4, 5, 6);
    assert_vec(b.world_rotation, 4, 0, 0, 0, 1);
    assert_vec(b.scale, 3, 1, 1, 1);
    cr_assert_eq(s.log.count, 3, "non-unit lr, zero wr, infinite s");

    cr_assert_eq(kiln_cast_get_bone(s.doc, nth(s.doc, KILN_CAST_ID_BONE, 1), &b, NULL), KILN_OK);
    cr_assert_eq(b.index, 1);
    cr_assert_eq(b.parent, 0);
    cr_assert_eq(kiln_cast_get_bone(s.doc, nth(s.doc, KILN_CAST_ID_BONE, 2), &b, NULL), KILN_OK);
    cr_assert_eq(b.parent, -1);
    scene_end(&s);
}

/* ---- IK handles and constraints -------------------------------------------------------------- */

/* Skeleton with bones 0..4 (hashes 100..104); returns the skeleton handle. */
static uint32_t rig(scene *s)
{
    uint32_t skel = skeleton_node(s);
    bone(s, skel, 0, "root", -1);
    for (uint32_t i = 1; i < 5; i++) bone(s, skel, i, "b", 0);
    return skel;
}

Test(cast_ik, resolves_bones_to_indices)
{
    scene s;
    scene_begin(&s);
    uint32_t skel = rig(&s);
    uint32_t ik = add(&s, skel, KILN_CAST_ID_IKHANDLE, 50);
    put_str(&s, ik, "n", "leg");
    put_u64(&s, ik, "sb", 101);
    put_u64(&s, ik, "eb", 103);
    put_u64(&s, ik, "tb", 104);
    put_u64(&s, ik, "pv", 100);
    put_u8(&s, ik, "tr", 1);
    scene_parse(&s);
    kiln_cast_ik_handle h;
    cr_assert_eq(kiln_cast_get_ik_handle(s.doc, nth(s.doc, KILN_CAST_ID_IKHANDLE, 0), &h, &s.sink), KILN_OK);
    cr_assert_str_eq(h.name, "leg");
    cr_assert_eq(h.start_bone, 1);
    cr_assert_eq(h.end_bone, 3);
    cr_assert_eq(h.target_bone, 4);
    cr_assert_eq(h.pole_vector_bone, 0);
    cr_assert_eq(h.pole_bone, -1);
    assert_vec(h.target_offset, 3, 0, 0, 0);
    cr_assert_eq(h.use_target_rotation, 1);
    cr_assert_eq(s.log.count, 0);
    scene_end(&s);
}

Test(cast_ik, required_references_must_resolve)
{
    scene s;
    scene_begin(&s);
    uint32_t skel = rig(&s);
    uint32_t ik = add(&s, skel, KILN_CAST_ID_IKHANDLE, 50);
    put_u64(&s, ik, "sb", 101);
    put_u64(&s, ik, "eb", 50); /* the handle itself, not a bone */
    uint32_t ik2 = add(&s, skel, KILN_CAST_ID_IKHANDLE, 51);
    put_u64(&s, ik2, "eb", 101);
    put_u64(&s, ik2, "tb", 999); /* optional: reported, -1 */
    uint32_t ik3 = add(&s, skel, KILN_CAST_ID_IKHANDLE, 52);
    put_u64(&s, ik3, "sb", 101);
    put_u64(&s, ik3, "eb", 102);
    put_u64(&s, ik3, "pb", 999);
    scene_parse(&s);
    kiln_cast_ik_handle h;
    cr_assert_eq(kiln_cast_get_ik_handle(s.doc, nth(s.doc, KILN_CAST_ID_IKHANDLE, 0), &h, &s.sink),
                 KILN_ERR_CAST_UNRESOLVED);
    cr_assert_eq(kiln_cast_get_ik_handle(s.doc, nth(s.doc, KILN_CAST_ID_IKHANDLE, 1), &h, &s.sink),
                 KILN_ERR_CAST_MISSING_PROPERTY);
    s.log.count = 0;
    cr_assert_eq(kiln_cast_get_ik_handle(s.doc, nth(s.doc, KILN_CAST_ID_IKHANDLE, 2), &h, &s.sink), KILN_OK);
    cr_assert_eq(h.pole_bone, -1);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_UNRESOLVED, KILN_SEVERITY_WARNING));
    scene_end(&s);
}

static uint32_t constraint(scene *s, uint32_t skel, const char *ct, uint64_t cb, uint64_t tb)
{
    uint32_t c = add(s, skel, KILN_CAST_ID_CONSTRAINT, fresh_hash(s));
    if (ct) put_str(s, c, "ct", ct);
    if (cb) put_u64(s, c, "cb", cb);
    if (tb) put_u64(s, c, "tb", tb);
    return c;
}

Test(cast_constraint, offset_defaults_per_type)
{
    scene s;
    scene_begin(&s);
    uint32_t skel = rig(&s);
    constraint(&s, skel, "pt", 101, 102);
    constraint(&s, skel, "or", 101, 102);
    constraint(&s, skel, "sc", 101, 102);
    scene_parse(&s);
    kiln_cast_constraint c;
    cr_assert_eq(kiln_cast_get_constraint(s.doc, nth(s.doc, KILN_CAST_ID_CONSTRAINT, 0), &c, &s.sink), KILN_OK);
    cr_assert_eq(c.type, KILN_CAST_CONSTRAINT_POINT);
    cr_assert_eq(c.constrained_bone, 1);
    cr_assert_eq(c.target_bone, 2);
    cr_assert_eq(c.has_custom_offset, 0);
    assert_vec(c.custom_offset, 4, 0, 0, 0, 0);
    cr_assert_float_eq(c.weight, 1.0f, 0);
    cr_assert_eq(c.maintain_offset + c.skip[0] + c.skip[1] + c.skip[2], 0);
    cr_assert_eq(kiln_cast_get_constraint(s.doc, nth(s.doc, KILN_CAST_ID_CONSTRAINT, 1), &c, &s.sink), KILN_OK);
    cr_assert_eq(c.type, KILN_CAST_CONSTRAINT_ORIENT);
    assert_vec(c.custom_offset, 4, 0, 0, 0, 1);
    cr_assert_eq(kiln_cast_get_constraint(s.doc, nth(s.doc, KILN_CAST_ID_CONSTRAINT, 2), &c, &s.sink), KILN_OK);
    cr_assert_eq(c.type, KILN_CAST_CONSTRAINT_SCALE);
    assert_vec(c.custom_offset, 4, 1, 1, 1, 0);
    cr_assert_eq(s.log.count, 0);
    scene_end(&s);
}

Test(cast_constraint, stored_offset_weight_and_flags)
{
    scene s;
    scene_begin(&s);
    uint32_t skel = rig(&s);
    uint32_t c0 = constraint(&s, skel, "or", 101, 102);
    put_v4(&s, c0, "co", 0, 0, 0, 2);
    put_f64(&s, c0, "wt", 1.5);
    put_u8(&s, c0, "mo", 1);
    put_u32(&s, c0, "sy", 7);
    uint32_t c1 = constraint(&s, skel, "sc", 101, 102);
    put_v4(&s, c1, "co", 2, 2, 2, 2); /* a scale offset is a v3: ignored */
    put_f32(&s, c1, "wt", -0.5f);
    scene_parse(&s);
    kiln_cast_constraint c;
    cr_assert_eq(kiln_cast_get_constraint(s.doc, nth(s.doc, KILN_CAST_ID_CONSTRAINT, 0), &c, &s.sink), KILN_OK);
    cr_assert_eq(c.has_custom_offset, 1);
    assert_vec(c.custom_offset, 4, 0, 0, 0, 1);
    cr_assert_float_eq(c.weight, 1.0f, 0);
    cr_assert_eq(c.maintain_offset, 1);
    cr_assert_eq(c.skip[1], 1);
    cr_assert_eq(c.skip[0] + c.skip[2], 0);
    cr_assert_eq(kiln_cast_get_constraint(s.doc, nth(s.doc, KILN_CAST_ID_CONSTRAINT, 1), &c, &s.sink), KILN_OK);
    cr_assert_eq(c.has_custom_offset, 0);
    assert_vec(c.custom_offset, 3, 1, 1, 1);
    cr_assert_float_eq(c.weight, 0.0f, 0);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_WRONG_TYPE, KILN_SEVERITY_WARNING));
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING));
    scene_end(&s);
}

Test(cast_constraint, failures)
{
    scene s;
    scene_begin(&s);
    uint32_t skel = rig(&s);
    constraint(&s, skel, "aim", 101, 102);
    constraint(&s, skel, "pt", 101, 101);
    constraint(&s, skel, "pt", 101, 0);
    constraint(&s, skel, "pt", 101, 777);
    scene_parse(&s);
    const kiln_result want[4] = {KILN_ERR_CAST_BAD_VALUE, KILN_ERR_CAST_BAD_VALUE, KILN_ERR_CAST_MISSING_PROPERTY,
                                 KILN_ERR_CAST_UNRESOLVED};
    for (uint32_t i = 0; i < 4; i++) {
        kiln_cast_constraint c;
        s.log.count = 0;
        cr_assert_eq(kiln_cast_get_constraint(s.doc, nth(s.doc, KILN_CAST_ID_CONSTRAINT, i), &c, &s.sink), want[i],
                     "constraint %u", i);
        cr_assert(diag_log_has(&s.log, want[i], KILN_SEVERITY_ERROR), "constraint %u reported", i);
    }
    scene_end(&s);
}

/* ---- animation ---------------------------------------------------------------------------- */

Test(cast_animation, framerate_rules_and_counts)
{
    const struct { int type; double fr; float want; int warns; } cases[] = {
        {0, 0, 30.0f, 1},
        {KILN_CAST_TYPE_FLOAT, 24.0, 24.0f, 0},
        {KILN_CAST_TYPE_DOUBLE, 60.0, 60.0f, 0},
        {KILN_CAST_TYPE_FLOAT, 0.0, 30.0f, 1},
        {KILN_CAST_TYPE_FLOAT, -5.0, 30.0f, 1},
        {KILN_CAST_TYPE_FLOAT, NAN, 30.0f, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        scene s;
        scene_begin(&s);
        uint32_t anim = add(&s, s.root, KILN_CAST_ID_ANIMATION, 2);
        if (cases[i].type == KILN_CAST_TYPE_FLOAT) put_f32(&s, anim, "fr", (float)cases[i].fr);
        if (cases[i].type == KILN_CAST_TYPE_DOUBLE) put_f64(&s, anim, "fr", cases[i].fr);
        put_u8(&s, anim, "lo", 1);
        add(&s, anim, KILN_CAST_ID_CURVE, 3);
        add(&s, anim, KILN_CAST_ID_CURVE, 4);
        add(&s, anim, KILN_CAST_ID_NOTIFICATION_TRACK, 5);
        scene_parse(&s);
        kiln_cast_animation a;
        cr_assert_eq(kiln_cast_get_animation(s.doc, nth(s.doc, KILN_CAST_ID_ANIMATION, 0), &a, &s.sink), KILN_OK);
        cr_assert_float_eq(a.framerate, cases[i].want, 0, "case %zu", i);
        cr_assert_eq(s.log.count, cases[i].warns, "case %zu", i);
        cr_assert_eq(a.looping, 1);
        cr_assert_eq(a.curve_count, 2);
        cr_assert_eq(a.override_count, 0);
        cr_assert_eq(a.notification_count, 1);
        scene_end(&s);
    }
}

static uint32_t curve(scene *s, uint32_t anim, const char *kp, const char *mode, uint32_t frames, uint32_t values)
{
    uint32_t c = add(s, anim, KILN_CAST_ID_CURVE, fresh_hash(s));
    uint32_t kb[8] = {0, 10, 20, 30, 40, 50, 60, 70};
    float kv[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    put_str(s, c, "nn", "hips");
    if (kp) put_str(s, c, "kp", kp);
    kiln_cast_writer_ints(s->w, c, "kb", kb, frames);
    put(s, c, "kv", kp && strcmp(kp, "rq") == 0 ? KILN_CAST_TYPE_VEC4 : KILN_CAST_TYPE_FLOAT, kv, values);
    if (mode) put_str(s, c, "m", mode);
    return c;
}

Test(cast_curve, reads_keys_and_mode)
{
    scene s;
    scene_begin(&s);
    uint32_t anim = add(&s, s.root, KILN_CAST_ID_ANIMATION, 2);
    uint32_t c0 = curve(&s, anim, "tx", "additive", 3, 3);
    put_f32(&s, c0, "ab", 0.25f);
    curve(&s, anim, "rq", NULL, 2, 2);
    scene_parse(&s);
    kiln_cast_curve c;
    cr_assert_eq(kiln_cast_get_curve(s.doc, nth(s.doc, KILN_CAST_ID_CURVE, 0), &c, &s.sink), KILN_OK);
    cr_assert_str_eq(c.node_name, "hips");
    cr_assert_eq(c.property, KILN_CAST_CURVE_TX);
    cr_assert_eq(c.mode, KILN_CAST_ADDITIVE);
    cr_assert_float_eq(c.additive_weight, 0.25f, 0);
    cr_assert_eq(c.key_count, 3);
    cr_assert_eq(kiln_cast_array_u32(&c.key_frames, 2), 20);
    cr_assert_float_eq(kiln_cast_array_f32(&c.key_values, 1), 2.0f, 0);
    cr_assert_eq(kiln_cast_get_curve(s.doc, nth(s.doc, KILN_CAST_ID_CURVE, 1), &c, &s.sink), KILN_OK);
    cr_assert_eq(c.property, KILN_CAST_CURVE_RQ);
    cr_assert_eq(c.mode, KILN_CAST_ABSOLUTE, "a missing mode is absolute");
    cr_assert_float_eq(c.additive_weight, 1.0f, 0);
    cr_assert_eq(c.key_values.comps, 4);
    cr_assert_eq(s.log.count, 0);
    scene_end(&s);
}

Test(cast_curve, key_count_is_the_shorter_array)
{
    scene s;
    scene_begin(&s);
    uint32_t anim = add(&s, s.root, KILN_CAST_ID_ANIMATION, 2);
    curve(&s, anim, "ty", "absolute", 5, 3);
    curve(&s, anim, "ty", "absolute", 0, 0);
    scene_parse(&s);
    kiln_cast_curve c;
    cr_assert_eq(kiln_cast_get_curve(s.doc, nth(s.doc, KILN_CAST_ID_CURVE, 0), &c, &s.sink), KILN_OK);
    cr_assert_eq(c.key_count, 3);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_LENGTH_MISMATCH, KILN_SEVERITY_ERROR));
    s.log.count = 0;
    cr_assert_eq(kiln_cast_get_curve(s.doc, nth(s.doc, KILN_CAST_ID_CURVE, 1), &c, &s.sink), KILN_OK);
    cr_assert_eq(c.key_count, 0);
    cr_assert_eq(s.log.count, 0);
    scene_end(&s);
}

Test(cast_curve, failures)
{
    scene s;
    scene_begin(&s);
    uint32_t anim = add(&s, s.root, KILN_CAST_ID_ANIMATION, 2);
    curve(&s, anim, "tw", NULL, 2, 2);          /* unknown kp */
    curve(&s, anim, "tx", "sideways", 2, 2);    /* unknown m */
    curve(&s, anim, NULL, NULL, 2, 2);          /* no kp */
    uint32_t c3 = curve(&s, anim, "sx", NULL, 2, 0);
    (void)c3;
    uint32_t c4 = add(&s, anim, KILN_CAST_ID_CURVE, 90); /* rq with float keys */
    put_str(&s, c4, "nn", "hips");
    put_str(&s, c4, "kp", "rq");
    uint32_t kb[2] = {0, 1};
    float kv[2] = {0, 1};
    kiln_cast_writer_ints(s.w, c4, "kb", kb, 2);
    put(&s, c4, "kv", KILN_CAST_TYPE_FLOAT, kv, 2);
    scene_parse(&s);
    const kiln_result want[5] = {KILN_ERR_CAST_BAD_VALUE, KILN_ERR_CAST_BAD_VALUE, KILN_ERR_CAST_MISSING_PROPERTY,
                                 KILN_OK, KILN_ERR_CAST_WRONG_TYPE};
    for (uint32_t i = 0; i < 5; i++) {
        kiln_cast_curve c;
        cr_assert_eq(kiln_cast_get_curve(s.doc, nth(s.doc, KILN_CAST_ID_CURVE, i), &c, &s.sink), want[i], "curve %u", i);
    }
    scene_end(&s);
}

Test(cast_curve, mode_override_and_notification)
{
    scene s;
    scene_begin(&s);
    uint32_t anim = add(&s, s.root, KILN_CAST_ID_ANIMATION, 2);
    uint32_t o0 = add(&s, anim, KILN_CAST_ID_CURVE_MODE_OVERRIDE, 3);
    put_str(&s, o0, "nn", "spine");
    put_str(&s, o0, "m", "relative");
    put_u8(&s, o0, "ot", 1);
    put_u32(&s, o0, "os", 1);
    uint32_t o1 = add(&s, anim, KILN_CAST_ID_CURVE_MODE_OVERRIDE, 4);
    put_str(&s, o1, "nn", "spine");
    put_str(&s, o1, "m", "additive");
    uint32_t o2 = add(&s, anim, KILN_CAST_ID_CURVE_MODE_OVERRIDE, 5);
    put_str(&s, o2, "nn", "spine");
    uint32_t t0 = add(&s, anim, KILN_CAST_ID_NOTIFICATION_TRACK, 6);
    put_str(&s, t0, "n", "footstep");
    uint32_t kb[3] = {30, 10, 10};
    kiln_cast_writer_ints(s.w, t0, "kb", kb, 3);
    uint32_t t1 = add(&s, anim, KILN_CAST_ID_NOTIFICATION_TRACK, 7);
    put_str(&s, t1, "n", "nothing");
    scene_parse(&s);

    kiln_cast_mode_override o;
    cr_assert_eq(kiln_cast_get_mode_override(s.doc, nth(s.doc, KILN_CAST_ID_CURVE_MODE_OVERRIDE, 0), &o, &s.sink),
                 KILN_OK);
    cr_assert_str_eq(o.node_name, "spine");
    cr_assert_eq(o.mode, KILN_CAST_RELATIVE);
    cr_assert(o.translation && !o.rotation && o.scale);
    cr_assert_eq(s.log.count, 0);
    cr_assert_eq(kiln_cast_get_mode_override(s.doc, nth(s.doc, KILN_CAST_ID_CURVE_MODE_OVERRIDE, 1), &o, &s.sink),
                 KILN_OK);
    cr_assert_eq(s.log.count, 1, "an override without flags does nothing: reported");
    cr_assert_eq(kiln_cast_get_mode_override(s.doc, nth(s.doc, KILN_CAST_ID_CURVE_MODE_OVERRIDE, 2), &o, &s.sink),
                 KILN_ERR_CAST_MISSING_PROPERTY);

    kiln_cast_notification n;
    cr_assert_eq(kiln_cast_get_notification(s.doc, nth(s.doc, KILN_CAST_ID_NOTIFICATION_TRACK, 0), &n, &s.sink),
                 KILN_OK);
    cr_assert_str_eq(n.name, "footstep");
    cr_assert_eq(n.key_frames.count, 3);
    cr_assert_eq(kiln_cast_array_u32(&n.key_frames, 0), 30);
    cr_assert_eq(kiln_cast_get_notification(s.doc, nth(s.doc, KILN_CAST_ID_NOTIFICATION_TRACK, 1), &n, &s.sink),
                 KILN_ERR_CAST_MISSING_PROPERTY);
    scene_end(&s);
}

Test(cast_names, enum_names)
{
    cr_assert_str_eq(kiln_cast_curve_prop_name(KILN_CAST_CURVE_RQ), "rq");
    cr_assert_str_eq(kiln_cast_curve_prop_name(KILN_CAST_CURVE_SZ), "sz");
    cr_assert_str_eq(kiln_cast_curve_prop_name(KILN_CAST_CURVE_VB), "vb");
    cr_assert_str_eq(kiln_cast_curve_prop_name(KILN_CAST_CURVE_PROP_COUNT_), "?");
    cr_assert_str_eq(kiln_cast_mode_name(KILN_CAST_ABSOLUTE), "absolute");
    cr_assert_str_eq(kiln_cast_mode_name(KILN_CAST_ADDITIVE), "additive");
    cr_assert_str_eq(kiln_cast_mode_name((kiln_cast_mode)7), "?");
    cr_assert_str_eq(kiln_cast_constraint_type_name(KILN_CAST_CONSTRAINT_ORIENT), "or");
    cr_assert_str_eq(kiln_cast_constraint_type_name((kiln_cast_constraint_type)3), "?");
}

/* ---- materials ---------------------------------------------------------------------------- */

Test(cast_material, slots_resolve_to_file_and_color_children)
{
    scene s;
    scene_begin(&s);
    uint32_t model = add(&s, s.root, KILN_CAST_ID_MODEL, 2);
    uint32_t mat = add(&s, model, KILN_CAST_ID_MATERIAL, 3);
    put_str(&s, mat, "n", "skin");
    put_u64(&s, mat, "albedo", 10);
    put_str(&s, mat, "t", "pbr");
    put_u64(&s, mat, "emissive", 11);
    put_u64(&s, mat, "normal", 12); /* no such child */
    put_u8(&s, mat, "metal", 13);   /* any integer width */
    put_u64(&s, mat, "albedo", 13); /* the last albedo wins */
    uint32_t file = add(&s, mat, KILN_CAST_ID_FILE, 10);
    put_str(&s, file, "p", "skin.png");
    uint32_t color = add(&s, mat, KILN_CAST_ID_COLOR, 11);
    put_v4(&s, color, "rgba", 1, 0.5f, 0.25f, 1);
    put_str(&s, color, "cs", "linear");
    uint32_t file2 = add(&s, mat, KILN_CAST_ID_FILE, 13);
    put_str(&s, file2, "p", "metal.png");
    scene_parse(&s);

    uint32_t node = nth(s.doc, KILN_CAST_ID_MATERIAL, 0);
    kiln_cast_material m;
    cr_assert_eq(kiln_cast_get_material(s.doc, node, &m, &s.sink), KILN_OK);
    cr_assert_str_eq(m.name, "skin");
    cr_assert_str_eq(m.type, "pbr");
    cr_assert_eq(m.slot_count, 4);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_DUPLICATE, KILN_SEVERITY_WARNING));

    const struct { const char *name; uint64_t hash; uint32_t id; } want[4] = {
        {"emissive", 11, KILN_CAST_ID_COLOR}, {"normal", 12, 0}, {"metal", 13, KILN_CAST_ID_FILE},
        {"albedo", 13, KILN_CAST_ID_FILE}};
    for (uint32_t k = 0; k < 4; k++) {
        kiln_cast_material_slot slot;
        s.log.count = 0;
        cr_assert_eq(kiln_cast_get_material_slot(s.doc, node, k, &slot, &s.sink), KILN_OK);
        cr_assert_eq(slot.name_len, strlen(want[k].name));
        cr_assert(memcmp(slot.name, want[k].name, slot.name_len) == 0, "slot %u", k);
        cr_assert_eq(slot.hash, want[k].hash);
        cr_assert_eq(slot.id, want[k].id, "slot %u", k);
        cr_assert_eq(slot.node == KILN_CAST_NONE, want[k].id == 0);
        cr_assert_eq(s.log.count, want[k].id == 0, "only the unresolved slot is reported");
    }
    kiln_cast_material_slot slot;
    cr_assert_eq(kiln_cast_get_material_slot(s.doc, node, 4, &slot, &s.sink), KILN_ERR_NOT_FOUND);
    cr_assert_eq(kiln_cast_get_material_slot(s.doc, node, 2, &slot, NULL), KILN_OK);
    kiln_cast_file f;
    cr_assert_eq(kiln_cast_get_file(s.doc, slot.node, &f, &s.sink), KILN_OK);
    cr_assert_str_eq(f.path, "metal.png");

    kiln_cast_color c;
    cr_assert_eq(kiln_cast_get_color(s.doc, nth(s.doc, KILN_CAST_ID_COLOR, 0), &c, &s.sink), KILN_OK);
    assert_vec(c.rgba, 4, 1, 0.5f, 0.25f, 1);
    cr_assert_eq(c.color_space, KILN_CAST_COLOR_LINEAR);
    cr_assert_null(c.name);
    scene_end(&s);
}

Test(cast_material, missing_and_bad_values)
{
    scene s;
    scene_begin(&s);
    uint32_t model = add(&s, s.root, KILN_CAST_ID_MODEL, 2);
    uint32_t mat = add(&s, model, KILN_CAST_ID_MATERIAL, 3);
    put_str(&s, mat, "albedo", "not a hash");
    add(&s, mat, KILN_CAST_ID_FILE, 10); /* no p */
    uint32_t c0 = add(&s, mat, KILN_CAST_ID_COLOR, 11);
    put_v4(&s, c0, "rgba", 0, 0, 0, 1);
    put_str(&s, c0, "cs", "aces");
    add(&s, mat, KILN_CAST_ID_COLOR, 12); /* no rgba */
    scene_parse(&s);

    uint32_t node = nth(s.doc, KILN_CAST_ID_MATERIAL, 0);
    kiln_cast_material m;
    cr_assert_eq(kiln_cast_get_material(s.doc, node, &m, &s.sink), KILN_OK);
    cr_assert_null(m.name);
    cr_assert_null(m.type);
    cr_assert_eq(m.slot_count, 1);
    cr_assert_eq(s.log.count, 2, "missing n and t are warnings");
    kiln_cast_material_slot slot;
    cr_assert_eq(kiln_cast_get_material_slot(s.doc, node, 0, &slot, &s.sink), KILN_ERR_CAST_WRONG_TYPE);
    kiln_cast_file f;
    cr_assert_eq(kiln_cast_get_file(s.doc, nth(s.doc, KILN_CAST_ID_FILE, 0), &f, &s.sink), KILN_ERR_CAST_MISSING_PROPERTY);
    kiln_cast_color c;
    s.log.count = 0;
    cr_assert_eq(kiln_cast_get_color(s.doc, nth(s.doc, KILN_CAST_ID_COLOR, 0), &c, &s.sink), KILN_OK);
    cr_assert_eq(c.color_space, KILN_CAST_COLOR_SRGB);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING));
    cr_assert_eq(kiln_cast_get_color(s.doc, nth(s.doc, KILN_CAST_ID_COLOR, 1), &c, &s.sink), KILN_ERR_CAST_MISSING_PROPERTY);
    scene_end(&s);
}

/* ---- instances and metadata ----------------------------------------------------------------- */

Test(cast_instance, reference_resolves_among_its_own_children)
{
    scene s;
    scene_begin(&s);
    uint32_t i0 = add(&s, s.root, KILN_CAST_ID_INSTANCE, 2);
    put_str(&s, i0, "n", "crate");
    put_u64(&s, i0, "rf", 20);
    put_v3(&s, i0, "p", 1, 2, 3);
    uint32_t f0 = add(&s, i0, KILN_CAST_ID_FILE, 20);
    put_str(&s, f0, "p", "crate.cast");
    uint32_t i1 = add(&s, s.root, KILN_CAST_ID_INSTANCE, 3);
    put_u64(&s, i1, "rf", 20); /* the File of the other instance: out of scope */
    uint32_t i2 = add(&s, s.root, KILN_CAST_ID_INSTANCE, 4);
    put_u64(&s, i2, "rf", 21);
    add(&s, i2, KILN_CAST_ID_FILE, 21); /* without a path */
    add(&s, s.root, KILN_CAST_ID_INSTANCE, 5);
    scene_parse(&s);

    kiln_cast_instance inst;
    cr_assert_eq(kiln_cast_get_instance(s.doc, nth(s.doc, KILN_CAST_ID_INSTANCE, 0), &inst, &s.sink), KILN_OK);
    cr_assert_str_eq(inst.name, "crate");
    cr_assert_eq(inst.reference_hash, 20);
    cr_assert_eq(inst.file, nth(s.doc, KILN_CAST_ID_FILE, 0));
    cr_assert_str_eq(inst.path, "crate.cast");
    assert_vec(inst.position, 3, 1, 2, 3);
    assert_vec(inst.rotation, 4, 0, 0, 0, 1);
    assert_vec(inst.scale, 3, 1, 1, 1);
    cr_assert_eq(s.log.count, 0);
    cr_assert_eq(kiln_cast_get_instance(s.doc, nth(s.doc, KILN_CAST_ID_INSTANCE, 1), &inst, &s.sink),
                 KILN_ERR_CAST_UNRESOLVED);
    cr_assert_eq(kiln_cast_get_instance(s.doc, nth(s.doc, KILN_CAST_ID_INSTANCE, 2), &inst, &s.sink),
                 KILN_ERR_CAST_MISSING_PROPERTY);
    cr_assert_eq(kiln_cast_get_instance(s.doc, nth(s.doc, KILN_CAST_ID_INSTANCE, 3), &inst, &s.sink),
                 KILN_ERR_CAST_MISSING_PROPERTY);
    scene_end(&s);
}

Test(cast_metadata, first_metadata_of_the_first_root_that_has_one)
{
    scene s;
    scene_begin(&s);
    add(&s, s.root, KILN_CAST_ID_MODEL, 2);
    uint32_t root2 = add(&s, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 3);
    uint32_t m0 = add(&s, root2, KILN_CAST_ID_METADATA, 4);
    put_str(&s, m0, "a", "someone");
    put_str(&s, m0, "s", "tool");
    put_str(&s, m0, "sr", "../scenes");
    put_str(&s, m0, "up", "y");
    uint32_t m1 = add(&s, root2, KILN_CAST_ID_METADATA, 5);
    put_str(&s, m1, "up", "w");
    scene_parse(&s);

    uint32_t node = kiln_cast_find_metadata(s.doc);
    cr_assert_eq(node, nth(s.doc, KILN_CAST_ID_METADATA, 0));
    kiln_cast_metadata m;
    cr_assert_eq(kiln_cast_get_metadata(s.doc, node, &m, &s.sink), KILN_OK);
    cr_assert_str_eq(m.author, "someone");
    cr_assert_str_eq(m.software, "tool");
    cr_assert_str_eq(m.scene_root, "../scenes");
    cr_assert_eq(m.up_axis, KILN_CAST_UP_Y);
    cr_assert_eq(kiln_cast_get_metadata(s.doc, nth(s.doc, KILN_CAST_ID_METADATA, 1), &m, &s.sink), KILN_OK);
    cr_assert_eq(m.up_axis, KILN_CAST_UP_NONE);
    cr_assert_null(m.author);
    cr_assert(diag_log_has(&s.log, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING));
    scene_end(&s);
}

Test(cast_metadata, none_in_the_file)
{
    scene s;
    scene_begin(&s);
    add(&s, s.root, KILN_CAST_ID_MODEL, 2);
    scene_parse(&s);
    cr_assert_eq(kiln_cast_find_metadata(s.doc), KILN_CAST_NONE);
    cr_assert_eq(kiln_cast_find_metadata(NULL), KILN_CAST_NONE);
    scene_end(&s);
}

/* ---- corpus -------------------------------------------------------------------------------- */

typedef struct corpus_doc {
    file_bytes     file;
    kiln_cast_doc *doc;
    diag_log       log;
    kiln_diag_sink sink;
} corpus_doc;

static void corpus_open(corpus_doc *c, const char *name)
{
    char dir[1024];
    memset(c, 0, sizeof *c);
    if (!corpus_dir(dir, sizeof dir)) cr_skip("corpus not found at %s: skipping", dir);
    cr_assert(corpus_read(dir, name, &c->file), "cannot read %s/%s", dir, name);
    kiln_diag err;
    cr_assert_eq(kiln_cast_parse(c->file.data, c->file.size, NULL, &c->doc, &err), KILN_OK, "%s: %s", name,
                 err.message);
    c->sink.fn = diag_log_push;
    c->sink.user = &c->log;
}

static void corpus_close(corpus_doc *c)
{
    kiln_cast_free(c->doc);
    file_bytes_free(&c->file);
}

/* Bone index of the bone named `name` in the doc's first skeleton, -1 if none. */
static int32_t bone_index(const kiln_cast_doc *doc, const char *name)
{
    uint32_t skel = nth(doc, KILN_CAST_ID_SKELETON, 0);
    for (uint32_t k = 0;; k++) {
        uint32_t node = kiln_cast_skeleton_bone(doc, skel, k);
        if (node == KILN_CAST_NONE) return -1;
        kiln_cast_bone b;
        cr_assert_eq(kiln_cast_get_bone(doc, node, &b, NULL), KILN_OK);
        if (b.name && strcmp(b.name, name) == 0) return (int32_t)b.index;
    }
}

Test(cast_corpus, skel_chain3_local)
{
    corpus_doc c;
    corpus_open(&c, "skel_chain3_local.cast");
    kiln_cast_skeleton k;
    cr_assert_eq(kiln_cast_get_skeleton(c.doc, nth(c.doc, KILN_CAST_ID_SKELETON, 0), &k, &c.sink), KILN_OK);
    cr_assert_eq(k.bone_count, 3);
    cr_assert_eq(k.root_count, 1);
    cr_assert_eq(k.depth, 3);
    kiln_cast_bone b;
    cr_assert_eq(kiln_cast_get_bone(c.doc, nth(c.doc, KILN_CAST_ID_BONE, 0), &b, &c.sink), KILN_OK);
    cr_assert_str_eq(b.name, "root");
    cr_assert(b.has_local_rotation);
    const float h = 0.70710678f;
    assert_vec(b.local_rotation, 4, 0, 0, h, h); /* 90 degrees about Z */
    cr_assert_eq(kiln_cast_get_bone(c.doc, nth(c.doc, KILN_CAST_ID_BONE, 1), &b, &c.sink), KILN_OK);
    cr_assert_str_eq(b.name, "mid");
    cr_assert_eq(b.parent, 0);
    cr_assert(b.has_local_position);
    assert_vec(b.local_position, 3, 1, 0, 0);
    cr_assert_eq(kiln_cast_get_bone(c.doc, nth(c.doc, KILN_CAST_ID_BONE, 2), &b, &c.sink), KILN_OK);
    assert_vec(b.local_position, 3, 0, 2, 0);
    cr_assert_eq(b.parent, 1);
    cr_assert_eq(c.log.count, 0);
    corpus_close(&c);
}

Test(cast_corpus, skel_chain3_world_has_only_world_transforms)
{
    corpus_doc c;
    corpus_open(&c, "skel_chain3_world.cast");
    for (uint32_t i = 0; i < 3; i++) {
        kiln_cast_bone b;
        cr_assert_eq(kiln_cast_get_bone(c.doc, nth(c.doc, KILN_CAST_ID_BONE, i), &b, &c.sink), KILN_OK);
        cr_assert(!b.has_local_position && !b.has_local_rotation, "bone %u", i);
        cr_assert(b.has_world_position && b.has_world_rotation, "bone %u", i);
        if (i == 1) assert_vec(b.world_rotation, 4, -0.2705981f, 0.2705981f, 0.6532815f, 0.6532815f);
        if (i == 2) assert_vec(b.world_position, 3, -2, 1, 0);
    }
    cr_assert_eq(c.log.count, 0);
    corpus_close(&c);
}

Test(cast_corpus, mesh_attributes)
{
    corpus_doc c;
    corpus_open(&c, "mesh_attributes.cast");
    kiln_cast_model model;
    cr_assert_eq(kiln_cast_get_model(c.doc, nth(c.doc, KILN_CAST_ID_MODEL, 0), &model, &c.sink), KILN_OK);
    const float h = 0.70710678f;
    assert_vec(model.position, 3, 1, 2, 3);
    assert_vec(model.rotation, 4, 0, 0, h, h);
    assert_vec(model.scale, 3, 2, 2, 2);
    cr_assert_eq(model.mesh_count, 2);
    cr_assert_eq(model.hair_count, 1);
    cr_assert_eq(model.material_count, 1);

    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(c.doc, nth(c.doc, KILN_CAST_ID_MESH, 0), &m, &c.sink), KILN_OK);
    cr_assert_eq(m.vertex_count, 4);
    cr_assert_eq(m.face_count, 2);
    cr_assert_eq(m.faces.type, KILN_CAST_TYPE_SHORT);
    cr_assert_eq(m.normals.count, 4);
    cr_assert_eq(m.tangents.count, 4);
    cr_assert_eq(m.uv_layer_count, 2);
    cr_assert_eq(m.uv[0].count, 4);
    cr_assert_eq(m.uv[1].count, 4);
    cr_assert_eq(m.color_layer_count, 2);
    cr_assert_eq(m.color[0].type, KILN_CAST_TYPE_INT);
    uint32_t red = kiln_cast_array_u32(&m.color[0], 0);
    cr_assert_eq(red, 0xFF0000FFu);
    cr_assert_eq(red & 0xFF, 0xFF, "R in bits 0-7");
    cr_assert_eq(m.color[1].type, KILN_CAST_TYPE_VEC4);
    cr_assert_eq(m.color[1].count, 4);
    cr_assert_eq(m.skinning, KILN_CAST_SKIN_LINEAR);
    cr_assert_eq(m.material, nth(c.doc, KILN_CAST_ID_MATERIAL, 0));

    cr_assert_eq(kiln_cast_get_mesh(c.doc, nth(c.doc, KILN_CAST_ID_MESH, 1), &m, &c.sink), KILN_OK);
    cr_assert_eq(m.color_layer_count, 1, "legacy vc without cl");
    cr_assert_eq(m.color[0].count, 3);
    cr_assert_eq(m.faces.type, KILN_CAST_TYPE_INT);

    kiln_cast_hair hair;
    cr_assert_eq(kiln_cast_get_hair(c.doc, nth(c.doc, KILN_CAST_ID_HAIR, 0), &hair, &c.sink), KILN_OK);
    cr_assert_eq(hair.strand_count, 2);
    cr_assert_eq(hair.particle_count, 7);
    cr_assert_eq(hair.material, nth(c.doc, KILN_CAST_ID_MATERIAL, 0));

    uint32_t mat = nth(c.doc, KILN_CAST_ID_MATERIAL, 0);
    kiln_cast_material material;
    cr_assert_eq(kiln_cast_get_material(c.doc, mat, &material, &c.sink), KILN_OK);
    cr_assert_str_eq(material.type, "pbr");
    cr_assert_eq(material.slot_count, 6);
    uint32_t files = 0, colors = 0;
    for (uint32_t k = 0; k < material.slot_count; k++) {
        kiln_cast_material_slot slot;
        cr_assert_eq(kiln_cast_get_material_slot(c.doc, mat, k, &slot, &c.sink), KILN_OK);
        files += slot.id == KILN_CAST_ID_FILE;
        colors += slot.id == KILN_CAST_ID_COLOR;
        if (slot.id != KILN_CAST_ID_COLOR) continue;
        kiln_cast_color color;
        cr_assert_eq(kiln_cast_get_color(c.doc, slot.node, &color, &c.sink), KILN_OK);
        int emissive = slot.name_len == 8 && memcmp(slot.name, "emissive", 8) == 0;
        cr_assert_eq(color.color_space, emissive ? KILN_CAST_COLOR_LINEAR : KILN_CAST_COLOR_SRGB);
    }
    cr_assert_eq(files, 4);
    cr_assert_eq(colors, 2);

    kiln_cast_metadata meta;
    cr_assert_eq(kiln_cast_get_metadata(c.doc, kiln_cast_find_metadata(c.doc), &meta, &c.sink), KILN_OK);
    cr_assert_eq(meta.up_axis, KILN_CAST_UP_Z);
    cr_assert_not_null(meta.author);
    cr_assert_not_null(meta.software);
    cr_assert_eq(c.log.count, 0);
    corpus_close(&c);
}

static void check_weights(const char *file, uint32_t mi, uint16_t type, kiln_cast_skinning sm)
{
    corpus_doc c;
    corpus_open(&c, file);
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(c.doc, nth(c.doc, KILN_CAST_ID_MESH, 0), &m, &c.sink), KILN_OK);
    cr_assert_eq(m.vertex_count, 40);
    cr_assert_eq(m.max_influence, mi);
    cr_assert_eq(m.weight_bones.type, type);
    cr_assert_eq(m.faces.type, type);
    cr_assert_eq(m.weight_bones.count, 40 * mi);
    cr_assert_eq(m.skinning, sm);
    if (mi > 1) cr_assert_eq(m.weight_values.count, 40 * mi);
    kiln_cast_skeleton k;
    cr_assert_eq(kiln_cast_get_skeleton(c.doc, nth(c.doc, KILN_CAST_ID_SKELETON, 0), &k, &c.sink), KILN_OK);
    cr_assert_eq(k.bone_count, 10);
    cr_assert_eq(c.log.count, 0);
    corpus_close(&c);
}

Test(cast_corpus, weights_mi1_b) { check_weights("weights_mi1_b.cast", 1, KILN_CAST_TYPE_BYTE, KILN_CAST_SKIN_LINEAR); }
Test(cast_corpus, weights_mi4_h) { check_weights("weights_mi4_h.cast", 4, KILN_CAST_TYPE_SHORT, KILN_CAST_SKIN_LINEAR); }
Test(cast_corpus, weights_mi8_i) { check_weights("weights_mi8_i.cast", 8, KILN_CAST_TYPE_INT, KILN_CAST_SKIN_DUAL_QUAT); }

Test(cast_corpus, blendshape_model)
{
    corpus_doc c;
    corpus_open(&c, "blendshape_model.cast");
    const struct { const char *name; float ts; uint16_t vi_type; } want[3] = {
        {"smile", 1.0f, KILN_CAST_TYPE_BYTE}, {"blink", 2.0f, KILN_CAST_TYPE_SHORT}, {"puff", 1.0f, KILN_CAST_TYPE_INT}};
    for (uint32_t i = 0; i < 3; i++) {
        kiln_cast_blend_shape b;
        cr_assert_eq(kiln_cast_get_blend_shape(c.doc, nth(c.doc, KILN_CAST_ID_BLENDSHAPE, i), &b, &c.sink), KILN_OK);
        cr_assert_str_eq(b.name, want[i].name);
        cr_assert_float_eq(b.target_scale, want[i].ts, 0, "%s", b.name);
        cr_assert_eq(b.indices.type, want[i].vi_type);
        cr_assert_eq(b.base_mesh, nth(c.doc, KILN_CAST_ID_MESH, 0));
        cr_assert_eq(b.pair_count, b.indices.count);
    }
    cr_assert_eq(c.log.count, 0);
    corpus_close(&c);
}

Test(cast_corpus, ik_polevec_model)
{
    corpus_doc c;
    corpus_open(&c, "ik_polevec_model.cast");
    kiln_cast_ik_handle h;
    cr_assert_eq(kiln_cast_get_ik_handle(c.doc, nth(c.doc, KILN_CAST_ID_IKHANDLE, 0), &h, &c.sink), KILN_OK);
    cr_assert_eq(h.start_bone, bone_index(c.doc, "thigh"));
    cr_assert_eq(h.end_bone, bone_index(c.doc, "foot"));
    cr_assert_eq(h.target_bone, bone_index(c.doc, "ik_target"));
    cr_assert_eq(h.pole_vector_bone, bone_index(c.doc, "ik_pole"));
    cr_assert_eq(h.pole_bone, -1);
    cr_assert_eq(h.use_target_rotation, 1);
    assert_vec(h.target_offset, 3, 0, 0, 0);
    cr_assert_geq(h.start_bone, 0);
    cr_assert_eq(c.log.count, 0);
    corpus_close(&c);
}

Test(cast_corpus, ik_polebone_model)
{
    corpus_doc c;
    corpus_open(&c, "ik_polebone_model.cast");
    kiln_cast_ik_handle h;
    cr_assert_eq(kiln_cast_get_ik_handle(c.doc, nth(c.doc, KILN_CAST_ID_IKHANDLE, 0), &h, &c.sink), KILN_OK);
    cr_assert_eq(h.start_bone, bone_index(c.doc, "thigh"));
    cr_assert_eq(h.end_bone, bone_index(c.doc, "foot"));
    cr_assert_eq(h.target_bone, bone_index(c.doc, "ik_target"));
    cr_assert_eq(h.pole_bone, bone_index(c.doc, "ik_pole"));
    cr_assert_eq(h.pole_vector_bone, -1);
    cr_assert_eq(h.use_target_rotation, 0);
    assert_vec(h.target_offset, 3, 0, 0, 0.01f);
    cr_assert_eq(c.log.count, 0);
    corpus_close(&c);
}

Test(cast_corpus, constraints_model)
{
    corpus_doc c;
    corpus_open(&c, "constraints_model.cast");
    /* MANIFEST: pt (no offset), pt (mo=1, skip y), or (wt=1), or (mo=1), sc (mo=0),
     * sc (co=(1.5,1.5,1.5) v3, skip z), pt (wt=0.5, skip x). */
    const struct {
        kiln_cast_constraint_type type;
        uint32_t mo, has_co, skip[3];
        float co, wt;
    } want[7] = {
        {KILN_CAST_CONSTRAINT_POINT, 0, 0, {0, 0, 0}, 0.0f, 1.0f},
        {KILN_CAST_CONSTRAINT_POINT, 1, 0, {0, 1, 0}, 0.0f, 1.0f},
        {KILN_CAST_CONSTRAINT_ORIENT, 0, 0, {0, 0, 0}, 0.0f, 1.0f},
        {KILN_CAST_CONSTRAINT_ORIENT, 1, 0, {0, 0, 0}, 0.0f, 1.0f},
        {KILN_CAST_CONSTRAINT_SCALE, 0, 0, {0, 0, 0}, 1.0f, 1.0f},
        {KILN_CAST_CONSTRAINT_SCALE, 0, 1, {0, 0, 1}, 1.5f, 1.0f},
        {KILN_CAST_CONSTRAINT_POINT, 0, 0, {1, 0, 0}, 0.0f, 0.5f},
    };
    kiln_cast_skeleton k;
    uint32_t skel = nth(c.doc, KILN_CAST_ID_SKELETON, 0);
    cr_assert_eq(kiln_cast_get_skeleton(c.doc, skel, &k, &c.sink), KILN_OK);
    cr_assert_eq(k.constraint_count, 7);
    int32_t drv_a = bone_index(c.doc, "drv_a"), drv_b = bone_index(c.doc, "drv_b");
    for (uint32_t i = 0; i < 7; i++) {
        kiln_cast_constraint cn;
        cr_assert_eq(kiln_cast_get_constraint(c.doc, nth(c.doc, KILN_CAST_ID_CONSTRAINT, i), &cn, &c.sink), KILN_OK);
        cr_assert_eq(cn.type, want[i].type, "constraint %u", i);
        cr_assert_eq(cn.maintain_offset, want[i].mo, "constraint %u", i);
        cr_assert_eq(cn.has_custom_offset, want[i].has_co, "constraint %u", i);
        for (int a = 0; a < 3; a++) {
            cr_assert_eq(cn.skip[a], want[i].skip[a], "constraint %u axis %d", i, a);
            if (cn.type != KILN_CAST_CONSTRAINT_ORIENT) cr_assert_float_eq(cn.custom_offset[a], want[i].co, EPS);
        }
        cr_assert_float_eq(cn.weight, want[i].wt, 0, "constraint %u", i);
        cr_assert(cn.target_bone == drv_a || cn.target_bone == drv_b, "constraint %u targets a driver", i);
        cr_assert(cn.constrained_bone != drv_a && cn.constrained_bone != drv_b && cn.constrained_bone > 0);
    }
    cr_assert_eq(c.log.count, 0);
    corpus_close(&c);
}

Test(cast_corpus, bad_bone_parent_cycle)
{
    corpus_doc c;
    corpus_open(&c, "bad/bone_parent_cycle.cast");
    kiln_cast_skeleton k;
    cr_assert_eq(kiln_cast_get_skeleton(c.doc, nth(c.doc, KILN_CAST_ID_SKELETON, 0), &k, &c.sink),
                 KILN_ERR_CAST_BONE_CYCLE);
    cr_assert(diag_log_has(&c.log, KILN_ERR_CAST_BONE_CYCLE, KILN_SEVERITY_ERROR));
    cr_assert(diag_log_has(&c.log, KILN_ERR_CAST_INDEX_RANGE, KILN_SEVERITY_WARNING), "parent 57 reported");
    corpus_close(&c);
}

Test(cast_corpus, bad_curve_kb_kv_mismatch)
{
    corpus_doc c;
    corpus_open(&c, "bad/curve_kb_kv_mismatch.cast");
    kiln_cast_curve cv;
    cr_assert_eq(kiln_cast_get_curve(c.doc, nth(c.doc, KILN_CAST_ID_CURVE, 0), &cv, &c.sink), KILN_OK);
    cr_assert_eq(cv.key_count, 3);
    cr_assert_eq(cv.key_frames.count, 5);
    cr_assert(diag_log_has(&c.log, KILN_ERR_CAST_LENGTH_MISMATCH, KILN_SEVERITY_ERROR));
    corpus_close(&c);
}

Test(cast_corpus, bad_face_index_out_of_range)
{
    corpus_doc c;
    corpus_open(&c, "bad/face_index_out_of_range.cast");
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(c.doc, nth(c.doc, KILN_CAST_ID_MESH, 0), &m, &c.sink), KILN_OK);
    cr_assert_eq(m.face_count, 2);
    cr_assert_eq(m.bad_index_face_count, 1);
    cr_assert_eq(m.degenerate_face_count, 0);
    corpus_close(&c);
}

Test(cast_corpus, bad_wrong_vector_prop_type)
{
    corpus_doc c;
    corpus_open(&c, "bad/wrong_vector_prop_type.cast");
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(c.doc, nth(c.doc, KILN_CAST_ID_MESH, 0), &m, &c.sink), KILN_ERR_CAST_WRONG_TYPE);
    const kiln_diag *d = find_diag(&c.log, KILN_ERR_CAST_WRONG_TYPE);
    cr_assert_not_null(d);
    cr_assert(strstr(d->path, "Mesh[0].vp") != NULL, "%s", d->path);
    corpus_close(&c);
}

Test(cast_corpus, bad_zero_length_arrays)
{
    corpus_doc c;
    corpus_open(&c, "bad/zero_length_arrays.cast");
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(c.doc, nth(c.doc, KILN_CAST_ID_MESH, 0), &m, &c.sink), KILN_OK);
    cr_assert_eq(m.vertex_count + m.face_count, 0);
    cr_assert(diag_log_has(&c.log, KILN_ERR_CAST_EMPTY, KILN_SEVERITY_WARNING));
    kiln_cast_skeleton k;
    cr_assert_eq(kiln_cast_get_skeleton(c.doc, nth(c.doc, KILN_CAST_ID_SKELETON, 0), &k, &c.sink), KILN_OK);
    cr_assert_eq(k.bone_count + k.depth, 0);
    kiln_cast_curve cv;
    cr_assert_eq(kiln_cast_get_curve(c.doc, nth(c.doc, KILN_CAST_ID_CURVE, 0), &cv, &c.sink), KILN_OK);
    cr_assert_eq(cv.key_count, 0);
    corpus_close(&c);
}

/* Runs the accessor of its kind on every node; returns how many failed. */
static uint32_t read_every_node(const kiln_cast_doc *doc, const kiln_diag_sink *sink)
{
    union {
        kiln_cast_model model; kiln_cast_mesh mesh; kiln_cast_hair hair; kiln_cast_blend_shape shape;
        kiln_cast_skeleton skel; kiln_cast_bone bone; kiln_cast_ik_handle ik; kiln_cast_constraint cnst;
        kiln_cast_animation anim; kiln_cast_curve curve; kiln_cast_mode_override cmov;
        kiln_cast_notification note; kiln_cast_material mat; kiln_cast_file file; kiln_cast_color color;
        kiln_cast_instance inst; kiln_cast_metadata meta;
    } u;
    uint32_t failed = 0;
    for (uint32_t n = 0; n < kiln_cast_node_count(doc); n++) {
        kiln_result r = KILN_OK;
        switch (kiln_cast_node_at(doc, n)->id) {
        case KILN_CAST_ID_MODEL: r = kiln_cast_get_model(doc, n, &u.model, sink); break;
        case KILN_CAST_ID_MESH: r = kiln_cast_get_mesh(doc, n, &u.mesh, sink); break;
        case KILN_CAST_ID_HAIR: r = kiln_cast_get_hair(doc, n, &u.hair, sink); break;
        case KILN_CAST_ID_BLENDSHAPE: r = kiln_cast_get_blend_shape(doc, n, &u.shape, sink); break;
        case KILN_CAST_ID_SKELETON: r = kiln_cast_get_skeleton(doc, n, &u.skel, sink); break;
        case KILN_CAST_ID_BONE: r = kiln_cast_get_bone(doc, n, &u.bone, sink); break;
        case KILN_CAST_ID_IKHANDLE: r = kiln_cast_get_ik_handle(doc, n, &u.ik, sink); break;
        case KILN_CAST_ID_CONSTRAINT: r = kiln_cast_get_constraint(doc, n, &u.cnst, sink); break;
        case KILN_CAST_ID_ANIMATION: r = kiln_cast_get_animation(doc, n, &u.anim, sink); break;
        case KILN_CAST_ID_CURVE: r = kiln_cast_get_curve(doc, n, &u.curve, sink); break;
        case KILN_CAST_ID_CURVE_MODE_OVERRIDE: r = kiln_cast_get_mode_override(doc, n, &u.cmov, sink); break;
        case KILN_CAST_ID_NOTIFICATION_TRACK: r = kiln_cast_get_notification(doc, n, &u.note, sink); break;
        case KILN_CAST_ID_MATERIAL: {
            r = kiln_cast_get_material(doc, n, &u.mat, sink);
            uint32_t slots = u.mat.slot_count;
            for (uint32_t k = 0; r == KILN_OK && k < slots; k++) {
                kiln_cast_material_slot slot;
                r = kiln_cast_get_material_slot(doc, n, k, &slot, sink);
            }
            break;
        }
        case KILN_CAST_ID_FILE: r = kiln_cast_get_file(doc, n, &u.file, sink); break;
        case KILN_CAST_ID_COLOR: r = kiln_cast_get_color(doc, n, &u.color, sink); break;
        case KILN_CAST_ID_INSTANCE: r = kiln_cast_get_instance(doc, n, &u.inst, sink); break;
        case KILN_CAST_ID_METADATA: r = kiln_cast_get_metadata(doc, n, &u.meta, sink); break;
        default: break;
        }
        failed += r != KILN_OK;
    }
    return failed;
}

Test(cast_corpus, every_node_of_every_good_file_reads_cleanly, .timeout = 600)
{
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip("corpus not found at %s: skipping", dir);
    char **names;
    size_t count = corpus_list(dir, &names);
    cr_assert_geq(count, 30);
    for (size_t i = 0; i < count; i++) {
        corpus_doc c;
        corpus_open(&c, names[i]);
        uint32_t failed = read_every_node(c.doc, &c.sink);
        cr_assert_eq(failed, 0, "%s: %u nodes failed (first report: %s %s)", names[i], failed,
                     c.log.count ? c.log.items[0].path : "", c.log.count ? c.log.items[0].message : "");
        cr_assert_eq(c.log.count, 0, "%s: %d reports, first: %s: %s", names[i], c.log.count, c.log.items[0].path,
                     c.log.items[0].message);
        corpus_close(&c);
    }
    corpus_list_free(names, count);
}

Test(cast_corpus, every_bad_file_that_parses_reads_without_crashing)
{
    static const char *const bad[] = {"bad/unknown_node_skip.cast", "bad/unknown_prop_type.cast",
                                      "bad/zero_length_arrays.cast", "bad/face_index_out_of_range.cast",
                                      "bad/curve_kb_kv_mismatch.cast", "bad/bone_parent_cycle.cast",
                                      "bad/wrong_vector_prop_type.cast"};
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip("corpus not found at %s: skipping", dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        file_bytes f;
        cr_assert(corpus_read(dir, bad[i], &f));
        kiln_cast_doc *doc = NULL;
        if (kiln_cast_parse(f.data, f.size, NULL, &doc, NULL) == KILN_OK) {
            diag_log log = {0};
            kiln_diag_sink sink = {diag_log_push, &log};
            read_every_node(doc, &sink);
            for (int k = 0; k < log.count && k < 32; k++) {
                cr_assert_neq(log.items[k].path[0], 0, "%s: every report names a node", bad[i]);
            }
            kiln_cast_free(doc);
        }
        file_bytes_free(&f);
    }
}
