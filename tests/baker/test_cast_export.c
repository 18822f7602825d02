/* kiln_cast_export: source scenes built here by hand, written as Cast, parsed back with
 * kiln_cast_parse and read with the typed accessors (kiln/cast_scene.h). Every value must come
 * back bit for bit (floats compared as bytes, so NaN payloads, negative zeros and denormals
 * count), every reference must resolve to the right node, and the layout must be the
 * documented one. Also: the errors, determinism, atomic saving and allocation failures, and
 * every good corpus file imported, exported and imported again into the same source scene. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kiln/bake/cast_export.h"
#include "kiln/bake/source.h"
#include "kiln/bake/cast.h"
#include "kiln/bake/cast_scene.h"
#include "test_util.h"

/* ---- helpers ---------------------------------------------------------------------------------- */

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

#define SAME_BITS(a, b, n, ...) cr_expect(memcmp((a), (b), (n)) == 0, __VA_ARGS__)

static void *dup_mem(kiln_source_scene *s, const void *src, size_t bytes)
{
    void *p = kiln_source_alloc(s, bytes ? bytes : 1, 1);
    cr_assert_not_null(p);
    memcpy(p, src, bytes);
    return p;
}
#define DUP(s, arr) dup_mem((s), (arr), sizeof(arr))

static kiln_source_loc loc_of(kiln_source_scene *s, const char *path)
{
    kiln_source_loc l = {kiln_source_strdup(s, path), 100, 10};
    return l;
}

/* The normalisation Cast readers apply to stored rotations (cast-format.md F; kiln's reader
 * computes the length in double precision and rounds each quotient to float). */
static void reader_normalise(float q[4])
{
    double len = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2] + (double)q[3] * q[3]);
    for (int c = 0; c < 4; c++) q[c] = (float)(q[c] / len);
}

/* A unit quaternion (as a reader produces it) that the reader's normalisation does not leave
 * unchanged, so writing it as it is would not read back: the `k`-th such one in a fixed
 * pseudo-random sequence of near-unit quaternions. */
static void unstable_quat(int k, float out[4])
{
    uint32_t state = 12345u;
    for (;;) {
        double d[4], len = 0;
        for (int c = 0; c < 4; c++) {
            state = state * 1664525u + 1013904223u;
            d[c] = (double)(state >> 8) / (double)(1u << 24) * 2.0 - 1.0;
            len += d[c] * d[c];
        }
        len = sqrt(len);
        float q[4], again[4];
        for (int c = 0; c < 4; c++) q[c] = (float)(d[c] / len);
        reader_normalise(q);
        memcpy(again, q, sizeof q);
        reader_normalise(again);
        if (memcmp(again, q, sizeof q) != 0 && k-- == 0) {
            memcpy(out, q, sizeof q);
            return;
        }
    }
}

typedef struct parsed {
    kiln_cast_export_result out;
    kiln_cast_doc          *doc;
} parsed;

static parsed export_and_parse(const kiln_source_scene *const *scenes, uint32_t n, const kiln_cast_export_options *o)
{
    parsed p;
    kiln_diag err;
    cr_assert_eq(kiln_cast_export(scenes, n, o, &p.out, &err), KILN_OK, "%s: %s", err.path, err.message);
    cr_assert_eq(kiln_cast_parse(p.out.data, p.out.size, NULL, &p.doc, &err), KILN_OK, "%s: %s", err.path, err.message);
    return p;
}

/* The same, the export's warnings kept in `log`. */
static parsed export_logged(const kiln_source_scene *const *scenes, uint32_t n, diag_log *log)
{
    kiln_cast_export_options o = {0};
    o.diag.fn = diag_log_push;
    o.diag.user = log;
    return export_and_parse(scenes, n, &o);
}

static void parsed_free(parsed *p)
{
    kiln_cast_free(p->doc);
    kiln_cast_export_result_free(&p->out);
}

static uint32_t child(const kiln_cast_doc *doc, uint32_t node, uint32_t id, uint32_t k)
{
    uint32_t c = kiln_cast_child(doc, node, id, k);
    cr_assert_neq(c, KILN_CAST_NONE, "%s %u missing", kiln_cast_id_name(id), k);
    return c;
}

static void expect_str(const char *got, const char *want, const char *what)
{
    if (!want) {
        cr_expect_null(got, "%s: expected absent, got '%s'", what, got ? got : "");
        return;
    }
    cr_expect_not_null(got, "%s: expected '%s', got absent", what, want);
    if (got) cr_expect_str_eq(got, want, "%s", what);
}

static void expect_f32_array(const kiln_cast_array *a, const float *want, uint32_t count, uint32_t comps,
                             uint16_t type, const char *what)
{
    cr_expect_eq(a->count, count, "%s count", what);
    cr_expect_eq(a->type, type, "%s type", what);
    if (a->count != count || !count) return;
    float *got = malloc((size_t)count * comps * sizeof *got);
    kiln_cast_array_read_f32(a, 0, count, got);
    SAME_BITS(got, want, (size_t)count * comps * sizeof *got, "%s values", what);
    free(got);
}

static void expect_u32_array(const kiln_cast_array *a, const uint32_t *want, uint32_t count, uint16_t type,
                             const char *what)
{
    cr_expect_eq(a->count, count, "%s count", what);
    cr_expect_eq(a->type, type, "%s type %s", what, kiln_cast_type_name(a->type));
    if (a->count != count || !count) return;
    uint32_t *got = malloc((size_t)count * sizeof *got);
    kiln_cast_array_read_u32(a, 0, count, got);
    cr_expect(memcmp(got, want, count * sizeof *got) == 0, "%s values", what);
    free(got);
}

/* ---- the hand-built scenes -------------------------------------------------------------------- */

/* Edge values used in float arrays: NaN with a payload, -0, the smallest denormal, FLT_MAX,
 * -infinity. */
#define NAN_P  __builtin_nanf("0x123") /* quiet NaN, payload 0x123 (GCC and Clang) */
#define NEG0   (-0.0f)
#define DENORM 0x1p-149f

static const float k_positions[12] = {0, 0, 0, 1, NEG0, 0, DENORM, 1, FLT_MAX, NAN_P, -INFINITY, 2.5f};
static const float k_normals[12] = {0, 0, 1, 0, 0, -1, 1, 0, 0, 0.6f, 0.8f, 0};
static const float k_tangents[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, NEG0, 1, 0};
static const float k_signs[4] = {1, -1, 1, -1};
static const float k_uv0[8] = {0, 0, 1, 0, 1, 1, NAN_P, 0.25f};
static const float k_uv2[8] = {0.5f, 0.5f, 0.125f, 0.75f, 1e-30f, -1, 3, 4};
static const uint32_t k_c0[4] = {0xFF0000FFu, 0x00FF00FFu, 0x0000FFFFu, 0x80808080u};
static const float k_c1[16] = {1, 0, 0, 1, 0, 1, 0, 0.5f, 0, 0, 1, 0, NEG0, 2, -1, DENORM};
static const uint32_t k_wb[8] = {0, 1, 2, 300, 1, 0, 2, 2};
static const float k_wv[8] = {0.75f, 0.25f, 1, 0, 0.5f, 0.5f, NAN_P, NEG0};
static const uint32_t k_faces[9] = {0, 1, 2, 0, 2, 3, 3, 3, 70000};
static const float k_pos1[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
static const uint32_t k_wb1[3] = {0, 1, 2};
static const uint32_t k_faces1[3] = {2, 1, 0};
static const uint32_t k_segments[2] = {2, 3};
static const float k_particles[21] = {0, 0, 0, 0, 1, 0, 0, 2, 0, 1, 0, 0, 1, 1, 0, 1, 2, 0, 1, 3, NEG0};
static const uint32_t k_shape_vi[2] = {0, 3};
static const float k_shape_vp[6] = {0, 0.1f, 0.2f, 1, 1.1f, NAN_P};
static const uint32_t k_shape1_vi[1] = {256};
static const float k_shape1_vp[3] = {9, 8, 7};
static const uint32_t k_rq_frames[3] = {0, 10, 5};
static const float k_rq_values[12] = {0, 0, 0, 2, 0, 0.70710677f, 0, 0.70710677f, NEG0, 0, 1, 0};
static const uint32_t k_tx_frames[2] = {0, 70000};
static const float k_tx_values[2] = {NEG0, 1e38f};
static const uint32_t k_bs_frames[2] = {1, 2};
static const float k_bs_values[2] = {0, 1};
static const uint32_t k_vb_frames[3] = {0, 1, 300};
static const float k_vb_values[3] = {0, 1, 255};
static const float k_vbf_values[3] = {0, 0.5f, 1};
static const uint32_t k_sx_frames[1] = {4};
static const float k_sx_values[1] = {1.5f};
static const uint32_t k_note_frames[3] = {3, 3, 1};

static void build_full(kiln_source_scene *s)
{
    kiln_source_scene_init(s, NULL);
    s->format = "test";
    s->metadata.loc = loc_of(s, "Root[0]/Metadata[0]");
    s->metadata.author = kiln_source_strdup(s, "ann");
    s->metadata.software = kiln_source_strdup(s, "kiln tests \xC3\xA9");
    s->metadata.scene_root = kiln_source_strdup(s, "assets/../assets");
    s->metadata.up_axis = KILN_SOURCE_UP_Z;

    s->model_count = 2;
    s->models = kiln_source_alloc(s, 2, sizeof *s->models);
    kiln_source_model *m = &s->models[0];
    m->loc = loc_of(s, "Root[0]/Model[0]");
    m->name = kiln_source_strdup(s, "hero");
    const float mp[3] = {1, -2, 3.5f}, ms[3] = {2, 0.5f, -1};
    memcpy(m->position, mp, sizeof mp);
    unstable_quat(0, m->rotation);
    memcpy(m->scale, ms, sizeof ms);

    /* skeleton: three bones, two IK handles, three constraints */
    kiln_source_skeleton *sk = kiln_source_alloc(s, 1, sizeof *sk);
    m->skeleton = sk;
    sk->loc = loc_of(s, "Root[0]/Model[0]/Skeleton[0]");
    sk->bone_count = 3;
    sk->bones = kiln_source_alloc(s, 3, sizeof *sk->bones);
    kiln_source_bone *b = sk->bones;
    b[0].name = kiln_source_strdup(s, "root");
    b[0].parent = -1;
    b[0].segment_scale_compensate = 1;
    b[0].has_local_position = b[0].has_local_rotation = b[0].has_scale = 1;
    const float lp0[3] = {0, NEG0, DENORM}, lr0[4] = {0, 0, 0, 1}, s0[3] = {1, 2, FLT_MAX};
    memcpy(b[0].local_position, lp0, sizeof lp0);
    memcpy(b[0].local_rotation, lr0, sizeof lr0);
    memcpy(b[0].scale, s0, sizeof s0);
    b[1].name = kiln_source_strdup(s, "mid");
    b[1].parent = 0;
    b[1].has_world_position = b[1].has_world_rotation = 1;
    const float wp1[3] = {0, 1, 0};
    memcpy(b[1].world_position, wp1, sizeof wp1);
    unstable_quat(1, b[1].world_rotation);
    b[2].name = NULL;
    b[2].parent = 1;
    b[2].segment_scale_compensate = 1;
    b[2].has_local_position = b[2].has_local_rotation = b[2].has_world_position = b[2].has_world_rotation =
        b[2].has_scale = 1;
    const float lp2[3] = {0, 2, 0}, wp2[3] = {-2, 1, 0}, s2[3] = {0.5f, 0.5f, 0.5f};
    memcpy(b[2].local_position, lp2, sizeof lp2);
    unstable_quat(2, b[2].local_rotation);
    memcpy(b[2].world_position, wp2, sizeof wp2);
    const float wr2[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    memcpy(b[2].world_rotation, wr2, sizeof wr2);
    memcpy(b[2].scale, s2, sizeof s2);
    for (int i = 0; i < 3; i++) {
        b[i].loc.path = kiln_source_strfmt(s, "Root[0]/Model[0]/Skeleton[0]/Bone[%d]", i);
        b[i].loc.offset = KILN_NO_OFFSET;
    }

    sk->ik_handle_count = 2;
    sk->ik_handles = kiln_source_alloc(s, 2, sizeof *sk->ik_handles);
    kiln_source_ik_handle *ik = sk->ik_handles;
    ik[0].name = kiln_source_strdup(s, "leg");
    ik[0].start_bone = 0;
    ik[0].end_bone = 2;
    ik[0].target_bone = 1;
    ik[0].pole_vector_bone = -1;
    ik[0].pole_bone = 2;
    const float to[3] = {0, 0, 0.01f};
    memcpy(ik[0].target_offset, to, sizeof to);
    ik[0].use_target_rotation = 1;
    ik[1].start_bone = 0;
    ik[1].end_bone = 1;
    ik[1].target_bone = ik[1].pole_vector_bone = ik[1].pole_bone = -1;

    sk->constraint_count = 3;
    sk->constraints = kiln_source_alloc(s, 3, sizeof *sk->constraints);
    kiln_source_constraint *c = sk->constraints;
    c[0].name = kiln_source_strdup(s, "follow");
    c[0].type = KILN_SOURCE_CONSTRAINT_POINT;
    c[0].constrained_bone = 2;
    c[0].target_bone = 0;
    c[0].maintain_offset = 1;
    c[0].has_custom_offset = 1;
    const float co0[4] = {0.5f, NEG0, 2, 0};
    memcpy(c[0].custom_offset, co0, sizeof co0);
    c[0].weight = 0.25f;
    c[0].skip[1] = 1;
    c[1].type = KILN_SOURCE_CONSTRAINT_ORIENT;
    c[1].constrained_bone = 1;
    c[1].target_bone = 2;
    c[1].has_custom_offset = 1;
    unstable_quat(3, c[1].custom_offset);
    c[1].weight = 1;
    c[2].type = KILN_SOURCE_CONSTRAINT_SCALE;
    c[2].constrained_bone = 0;
    c[2].target_bone = 1;
    c[2].weight = 0;
    c[2].skip[0] = c[2].skip[2] = 1;

    /* materials: a full one, and one whose slot names a Cast reader could not tell apart */
    m->material_count = 2;
    m->materials = kiln_source_alloc(s, 2, sizeof *m->materials);
    kiln_source_material *mat = m->materials;
    mat[0].loc = loc_of(s, "Root[0]/Model[0]/Material[0]");
    mat[0].name = kiln_source_strdup(s, "skin");
    mat[0].type = kiln_source_strdup(s, "pbr");
    mat[0].slot_count = 4;
    mat[0].slots = kiln_source_alloc(s, 4, sizeof *mat[0].slots);
    kiln_source_material_slot *sl = mat[0].slots;
    sl[0].name = "albedo";
    sl[0].kind = KILN_SOURCE_SLOT_FILE;
    sl[0].path = "tex/skin.png";
    sl[1].name = "emissive";
    sl[1].kind = KILN_SOURCE_SLOT_COLOR;
    const float e[4] = {1, 0.5f, NEG0, DENORM};
    memcpy(sl[1].rgba, e, sizeof e);
    sl[1].color_space = KILN_SOURCE_COLOR_LINEAR;
    sl[2].name = "normal";
    sl[2].kind = KILN_SOURCE_SLOT_FILE;
    sl[2].path = "/abs/n.png";
    sl[3].name = "specular";
    sl[3].kind = KILN_SOURCE_SLOT_COLOR;
    const float sp[4] = {0.2f, 0.2f, 0.2f, 1};
    memcpy(sl[3].rgba, sp, sizeof sp);
    mat[1].loc = loc_of(s, "Root[0]/Model[0]/Material[1]");
    mat[1].slot_count = 4;
    mat[1].slots = kiln_source_alloc(s, 4, sizeof *mat[1].slots);
    sl = mat[1].slots;
    sl[0].name = "n";
    sl[0].kind = KILN_SOURCE_SLOT_FILE;
    sl[0].path = "a.png";
    sl[1].name = "albedo";
    sl[1].kind = KILN_SOURCE_SLOT_FILE;
    sl[1].path = "b.png";
    sl[2].name = NULL;
    sl[2].kind = KILN_SOURCE_SLOT_FILE;
    sl[2].path = "c.png";
    sl[3].name = "albedo";
    sl[3].kind = KILN_SOURCE_SLOT_COLOR;
    const float d[4] = {0, 0, 0, 1};
    memcpy(sl[3].rgba, d, sizeof d);

    /* meshes */
    m->mesh_count = 2;
    m->meshes = kiln_source_alloc(s, 2, sizeof *m->meshes);
    kiln_source_mesh *me = &m->meshes[0];
    me->loc = loc_of(s, "Root[0]/Model[0]/Mesh[0]");
    me->name = kiln_source_strdup(s, "body");
    me->vertex_count = 4;
    me->face_count = 3;
    me->positions = DUP(s, k_positions);
    me->normals = DUP(s, k_normals);
    me->tangents = DUP(s, k_tangents);
    me->tangent_signs = DUP(s, k_signs);
    me->uv_layer_count = 3;
    me->uv[0] = DUP(s, k_uv0);
    me->uv[2] = DUP(s, k_uv2);
    me->color_layer_count = 2;
    me->color[0].rgba8 = DUP(s, k_c0);
    me->color[1].rgba = DUP(s, k_c1);
    me->max_influence = 2;
    me->weight_bones = DUP(s, k_wb);
    me->weight_values = DUP(s, k_wv);
    me->skinning = KILN_SOURCE_SKIN_DUAL_QUAT;
    me->faces = DUP(s, k_faces);
    me->material = 0;
    me = &m->meshes[1];
    me->loc = loc_of(s, "Root[0]/Model[0]/Mesh[1]");
    me->vertex_count = 3;
    me->face_count = 1;
    me->positions = DUP(s, k_pos1);
    me->max_influence = 1;
    me->weight_bones = DUP(s, k_wb1);
    me->faces = DUP(s, k_faces1);
    me->material = KILN_SOURCE_NONE;

    m->hair_count = 1;
    m->hairs = kiln_source_alloc(s, 1, sizeof *m->hairs);
    m->hairs[0].name = kiln_source_strdup(s, "fuzz");
    m->hairs[0].strand_count = 2;
    m->hairs[0].particle_count = 7;
    m->hairs[0].segments = DUP(s, k_segments);
    m->hairs[0].particles = DUP(s, k_particles);
    m->hairs[0].material = 1;

    m->blend_shape_count = 2;
    m->blend_shapes = kiln_source_alloc(s, 2, sizeof *m->blend_shapes);
    kiln_source_blend_shape *bs = m->blend_shapes;
    bs[0].name = kiln_source_strdup(s, "smile");
    bs[0].mesh = 0;
    bs[0].pair_count = 2;
    bs[0].indices = DUP(s, k_shape_vi);
    bs[0].targets = DUP(s, k_shape_vp);
    bs[0].target_scale = 2;
    bs[1].name = kiln_source_strdup(s, "puff");
    bs[1].mesh = 1;
    bs[1].pair_count = 1;
    bs[1].indices = DUP(s, k_shape1_vi);
    bs[1].targets = DUP(s, k_shape1_vp);
    bs[1].target_scale = 1;

    /* a second model: no name, nothing but an empty mesh */
    m = &s->models[1];
    m->loc = loc_of(s, "Root[0]/Model[1]");
    const float id[4] = {0, 0, 0, 1}, one[3] = {1, 1, 1};
    memcpy(m->rotation, id, sizeof id);
    memcpy(m->scale, one, sizeof one);
    m->mesh_count = 1;
    m->meshes = kiln_source_alloc(s, 1, sizeof *m->meshes);
    m->meshes[0].material = KILN_SOURCE_NONE;

    /* instances */
    s->instance_count = 2;
    s->instances = kiln_source_alloc(s, 2, sizeof *s->instances);
    kiln_source_instance *in = s->instances;
    in[0].name = kiln_source_strdup(s, "lamp");
    in[0].path = kiln_source_strdup(s, "props/lamp.cast");
    const float ip[3] = {10, 0, NEG0};
    memcpy(in[0].position, ip, sizeof ip);
    memcpy(in[0].rotation, id, sizeof id);
    memcpy(in[0].scale, one, sizeof one);
    in[1].path = kiln_source_strdup(s, "x.cast");
    unstable_quat(4, in[1].rotation);
    const float is[3] = {3, 3, 3};
    memcpy(in[1].scale, is, sizeof is);

    /* animation */
    s->animation_count = 1;
    s->animations = kiln_source_alloc(s, 1, sizeof *s->animations);
    kiln_source_animation *a = s->animations;
    a->loc = loc_of(s, "Root[0]/Animation[0]");
    a->name = kiln_source_strdup(s, "walk");
    a->framerate = 29.97f;
    a->looping = 1;
    a->curve_count = 7;
    a->curves = kiln_source_alloc(s, 7, sizeof *a->curves);
    kiln_source_curve *cv = a->curves;
    cv[0] = (kiln_source_curve){loc_of(s, "c0"), "root", KILN_SOURCE_CHANNEL_ROTATION, KILN_SOURCE_ABSOLUTE, 1, 3,
                                DUP(s, k_rq_frames), DUP(s, k_rq_values), NULL};
    cv[1] = (kiln_source_curve){loc_of(s, "c1"), "mid", KILN_SOURCE_CHANNEL_TX, KILN_SOURCE_RELATIVE, 1, 2,
                                DUP(s, k_tx_frames), DUP(s, k_tx_values), NULL};
    cv[2] = (kiln_source_curve){loc_of(s, "c2"), "smile", KILN_SOURCE_CHANNEL_BLEND_SHAPE, KILN_SOURCE_ADDITIVE, 0.5f,
                                2, DUP(s, k_bs_frames), DUP(s, k_bs_values), NULL};
    cv[3] = (kiln_source_curve){loc_of(s, "c3"), "body", KILN_SOURCE_CHANNEL_VISIBILITY, KILN_SOURCE_ABSOLUTE, 1, 3,
                                DUP(s, k_vb_frames), DUP(s, k_vb_values), NULL};
    cv[4] = (kiln_source_curve){loc_of(s, "c4"), "mid", KILN_SOURCE_CHANNEL_VISIBILITY, KILN_SOURCE_ABSOLUTE, 1, 3,
                                DUP(s, k_vb_frames), DUP(s, k_vbf_values), NULL};
    cv[5] = (kiln_source_curve){loc_of(s, "c5"), "root", KILN_SOURCE_CHANNEL_SX, KILN_SOURCE_ABSOLUTE, 1, 1,
                                DUP(s, k_sx_frames), DUP(s, k_sx_values), NULL};
    cv[6] = (kiln_source_curve){loc_of(s, "c6"), "root", KILN_SOURCE_CHANNEL_TZ, KILN_SOURCE_RELATIVE, NEG0, 0, NULL,
                                NULL, NULL};
    a->override_count = 2;
    a->overrides = kiln_source_alloc(s, 2, sizeof *a->overrides);
    a->overrides[0] = (kiln_source_mode_override){loc_of(s, "o0"), "mid", KILN_SOURCE_RELATIVE, 1, 0, 1};
    a->overrides[1] = (kiln_source_mode_override){loc_of(s, "o1"), "root", KILN_SOURCE_ADDITIVE, 0, 1, 0};
    a->notification_count = 1;
    a->notifications = kiln_source_alloc(s, 1, sizeof *a->notifications);
    a->notifications[0] = (kiln_source_notification){loc_of(s, "n0"), "step", 3, DUP(s, k_note_frames)};

    s->extra_count = 1;
    s->extras = kiln_source_alloc(s, 1, sizeof *s->extras);
    s->extras[0] = (kiln_source_extra){loc_of(s, "LIGHT[0]"), "light", "sun", "directional, 3 lux"};
}

static const uint32_t k_run_frames[2] = {0, 24};
static const float k_run_values[2] = {0, 1};

/* What a `.anim`-like input gives: one unnamed clip and nothing else. */
static void build_clip(kiln_source_scene *s)
{
    kiln_source_scene_init(s, NULL);
    s->format = "test-anim";
    s->animation_count = 1;
    s->animations = kiln_source_alloc(s, 1, sizeof *s->animations);
    kiln_source_animation *a = s->animations;
    a->framerate = 24;
    a->curve_count = 1;
    a->curves = kiln_source_alloc(s, 1, sizeof *a->curves);
    a->curves[0] = (kiln_source_curve){loc_of(s, "BONE[0]"), "root", KILN_SOURCE_CHANNEL_TY, KILN_SOURCE_ABSOLUTE, 1,
                                       2, DUP(s, k_run_frames), DUP(s, k_run_values), NULL};
}

/* ---- the checks ------------------------------------------------------------------------------- */

static void check_bone(const kiln_cast_doc *doc, uint32_t node, const kiln_source_bone *want, uint32_t index)
{
    kiln_cast_bone b;
    cr_assert_eq(kiln_cast_get_bone(doc, node, &b, NULL), KILN_OK);
    expect_str(b.name, want->name, "bone name");
    cr_expect_eq(b.index, index);
    cr_expect_eq(b.parent, want->parent, "bone %u parent", index);
    cr_expect_eq(b.segment_scale_compensate, want->segment_scale_compensate, "bone %u ssc", index);
    cr_expect_eq(b.has_local_position, want->has_local_position);
    cr_expect_eq(b.has_local_rotation, want->has_local_rotation);
    cr_expect_eq(b.has_world_position, want->has_world_position);
    cr_expect_eq(b.has_world_rotation, want->has_world_rotation);
    cr_expect_eq(b.has_scale, want->has_scale);
    if (want->has_local_position) SAME_BITS(b.local_position, want->local_position, 12, "bone %u lp", index);
    if (want->has_local_rotation) SAME_BITS(b.local_rotation, want->local_rotation, 16, "bone %u lr", index);
    if (want->has_world_position) SAME_BITS(b.world_position, want->world_position, 12, "bone %u wp", index);
    if (want->has_world_rotation) SAME_BITS(b.world_rotation, want->world_rotation, 16, "bone %u wr", index);
    if (want->has_scale) SAME_BITS(b.scale, want->scale, 12, "bone %u s", index);
}

static void check_skeleton(const kiln_cast_doc *doc, uint32_t skel, const kiln_source_skeleton *sk)
{
    kiln_cast_skeleton cs;
    cr_assert_eq(kiln_cast_get_skeleton(doc, skel, &cs, NULL), KILN_OK);
    cr_expect_eq(cs.bone_count, sk->bone_count);
    cr_expect_eq(cs.ik_count, sk->ik_handle_count);
    cr_expect_eq(cs.constraint_count, sk->constraint_count);
    for (uint32_t i = 0; i < sk->bone_count; i++) check_bone(doc, kiln_cast_skeleton_bone(doc, skel, i), &sk->bones[i], i);
    for (uint32_t i = 0; i < sk->ik_handle_count; i++) {
        const kiln_source_ik_handle *w = &sk->ik_handles[i];
        kiln_cast_ik_handle ik;
        cr_assert_eq(kiln_cast_get_ik_handle(doc, child(doc, skel, KILN_CAST_ID_IKHANDLE, i), &ik, NULL), KILN_OK);
        expect_str(ik.name, w->name, "IK name");
        cr_expect_eq(ik.start_bone, w->start_bone);
        cr_expect_eq(ik.end_bone, w->end_bone);
        cr_expect_eq(ik.target_bone, w->target_bone);
        cr_expect_eq(ik.pole_vector_bone, w->pole_vector_bone);
        cr_expect_eq(ik.pole_bone, w->pole_bone);
        SAME_BITS(ik.target_offset, w->target_offset, 12, "IK %u to", i);
        cr_expect_eq(ik.use_target_rotation, w->use_target_rotation);
    }
    /* `to` is left out where it is the default (Blender warns about any `to`). */
    cr_expect_null(kiln_cast_find_prop(doc, child(doc, skel, KILN_CAST_ID_IKHANDLE, 1), "to", NULL));
    for (uint32_t i = 0; i < sk->constraint_count; i++) {
        const kiln_source_constraint *w = &sk->constraints[i];
        kiln_cast_constraint c;
        cr_assert_eq(kiln_cast_get_constraint(doc, child(doc, skel, KILN_CAST_ID_CONSTRAINT, i), &c, NULL), KILN_OK);
        expect_str(c.name, w->name, "constraint name");
        cr_expect_eq((int)c.type, (int)w->type);
        cr_expect_eq(c.constrained_bone, w->constrained_bone);
        cr_expect_eq(c.target_bone, w->target_bone);
        cr_expect_eq(c.maintain_offset, w->maintain_offset);
        cr_expect_eq(c.has_custom_offset, w->has_custom_offset);
        if (w->has_custom_offset)
            SAME_BITS(c.custom_offset, w->custom_offset, w->type == KILN_SOURCE_CONSTRAINT_ORIENT ? 16 : 12,
                      "constraint %u co", i);
        SAME_BITS(&c.weight, &w->weight, 4, "constraint %u wt", i);
        cr_expect(memcmp(c.skip, w->skip, sizeof c.skip) == 0, "constraint %u skips", i);
    }
}

/* Slot k of a material: its name as written, and the File path or Color it resolves to. */
static void check_slot(const kiln_cast_doc *doc, uint32_t matl, uint32_t k, const char *name,
                       const kiln_source_material_slot *w)
{
    kiln_cast_material_slot s;
    cr_assert_eq(kiln_cast_get_material_slot(doc, matl, k, &s, NULL), KILN_OK, "slot %u", k);
    cr_expect_eq(s.name_len, strlen(name), "slot %u name '%.*s'", k, (int)s.name_len, s.name);
    cr_expect(strncmp(s.name, name, s.name_len) == 0, "slot %u name '%.*s', want '%s'", k, (int)s.name_len, s.name,
              name);
    cr_assert_neq(s.node, KILN_CAST_NONE, "slot %u does not resolve", k);
    if (w->kind == KILN_SOURCE_SLOT_FILE) {
        cr_expect_eq(s.id, KILN_CAST_ID_FILE);
        kiln_cast_file f;
        cr_assert_eq(kiln_cast_get_file(doc, s.node, &f, NULL), KILN_OK);
        expect_str(f.path, w->path, "slot file path");
    } else {
        cr_expect_eq(s.id, KILN_CAST_ID_COLOR);
        kiln_cast_color c;
        cr_assert_eq(kiln_cast_get_color(doc, s.node, &c, NULL), KILN_OK);
        SAME_BITS(c.rgba, w->rgba, 16, "slot %u rgba", k);
        cr_expect_eq((int)c.color_space, (int)w->color_space);
    }
}

static void check_mesh(const kiln_cast_doc *doc, uint32_t node, const kiln_source_mesh *w, uint32_t material_node)
{
    kiln_cast_mesh m;
    cr_assert_eq(kiln_cast_get_mesh(doc, node, &m, NULL), KILN_OK);
    expect_str(m.name, w->name, "mesh name");
    cr_expect_eq(m.vertex_count, w->vertex_count);
    cr_expect_eq(m.face_count, w->face_count);
    expect_f32_array(&m.positions, w->positions, w->vertex_count, 3, KILN_CAST_TYPE_VEC3, "vp");
    if (w->normals) expect_f32_array(&m.normals, w->normals, w->vertex_count, 3, KILN_CAST_TYPE_VEC3, "vn");
    else cr_expect_eq(m.normals.count, 0);
    if (w->tangents) expect_f32_array(&m.tangents, w->tangents, w->vertex_count, 3, KILN_CAST_TYPE_VEC3, "vt");
    else cr_expect_eq(m.tangents.count, 0);
    const kiln_cast_prop *vts = kiln_cast_find_prop(doc, node, "vts", NULL);
    if (w->tangent_signs) {
        cr_assert_not_null(vts);
        cr_expect_eq(vts->type, KILN_CAST_TYPE_FLOAT);
        cr_expect_eq(vts->count, w->vertex_count);
        SAME_BITS(vts->data, w->tangent_signs, w->vertex_count * sizeof(float), "vts");
    } else {
        cr_expect_null(vts);
    }
    cr_expect_eq(m.uv_layer_count, w->uv_layer_count);
    for (uint32_t i = 0; i < w->uv_layer_count; i++) {
        if (w->uv[i]) expect_f32_array(&m.uv[i], w->uv[i], w->vertex_count, 2, KILN_CAST_TYPE_VEC2, "uv");
        else cr_expect_eq(m.uv[i].count, 0, "uv layer %u stays dropped", i);
    }
    cr_expect_eq(m.color_layer_count, w->color_layer_count);
    for (uint32_t i = 0; i < w->color_layer_count; i++) {
        if (w->color[i].rgba8) {
            expect_u32_array(&m.color[i], w->color[i].rgba8, w->vertex_count, KILN_CAST_TYPE_INT, "packed colour");
        } else {
            expect_f32_array(&m.color[i], w->color[i].rgba, w->vertex_count, 4, KILN_CAST_TYPE_VEC4, "float colour");
        }
    }
    cr_expect_eq(m.max_influence, w->max_influence);
    uint32_t weights = w->vertex_count * w->max_influence;
    if (w->max_influence) {
        uint32_t max = 0;
        for (uint32_t i = 0; i < weights; i++) max = w->weight_bones[i] > max ? w->weight_bones[i] : max;
        expect_u32_array(&m.weight_bones, w->weight_bones, weights,
                         max <= 0xFF ? KILN_CAST_TYPE_BYTE : max <= 0xFFFF ? KILN_CAST_TYPE_SHORT : KILN_CAST_TYPE_INT,
                         "wb");
        if (w->weight_values) expect_f32_array(&m.weight_values, w->weight_values, weights, 1, KILN_CAST_TYPE_FLOAT, "wv");
        else cr_expect_eq(m.weight_values.count, 0, "wv stays absent");
    }
    cr_expect_eq((int)m.skinning, (int)w->skinning);
    uint32_t max = 0;
    for (uint32_t i = 0; i < w->face_count * 3; i++) max = w->faces[i] > max ? w->faces[i] : max;
    expect_u32_array(&m.faces, w->faces, w->face_count * 3,
                     max <= 0xFF ? KILN_CAST_TYPE_BYTE : max <= 0xFFFF ? KILN_CAST_TYPE_SHORT : KILN_CAST_TYPE_INT, "f");
    cr_expect_eq(m.material, material_node);
}

static void check_animation(const kiln_cast_doc *doc, uint32_t node, const kiln_source_animation *w)
{
    kiln_cast_animation a;
    cr_assert_eq(kiln_cast_get_animation(doc, node, &a, NULL), KILN_OK);
    expect_str(a.name, w->name, "animation name");
    SAME_BITS(&a.framerate, &w->framerate, 4, "fr");
    cr_expect_eq(a.looping, w->looping);
    cr_expect_eq(a.curve_count, w->curve_count);
    cr_expect_eq(a.override_count, w->override_count);
    cr_expect_eq(a.notification_count, w->notification_count);
    for (uint32_t i = 0; i < w->curve_count; i++) {
        const kiln_source_curve *wc = &w->curves[i];
        uint32_t cn = child(doc, node, KILN_CAST_ID_CURVE, i);
        kiln_cast_curve c;
        cr_assert_eq(kiln_cast_get_curve(doc, cn, &c, NULL), KILN_OK, "curve %u", i);
        expect_str(c.node_name, wc->target, "nn");
        cr_expect_eq((int)c.property, (int)wc->channel, "curve %u kp", i);
        cr_expect_eq((int)c.mode, (int)wc->mode, "curve %u m", i);
        SAME_BITS(&c.additive_weight, &wc->additive_weight, 4, "curve %u ab", i);
        cr_expect_eq(c.key_count, wc->key_count);
        uint32_t max = 0;
        for (uint32_t k = 0; k < wc->key_count; k++) max = wc->frames[k] > max ? wc->frames[k] : max;
        expect_u32_array(&c.key_frames, wc->frames, wc->key_count,
                         max <= 0xFF ? KILN_CAST_TYPE_BYTE : max <= 0xFFFF ? KILN_CAST_TYPE_SHORT : KILN_CAST_TYPE_INT,
                         "kb");
        uint32_t comps = wc->channel == KILN_SOURCE_CHANNEL_ROTATION ? 4 : 1;
        if (c.key_values.count == wc->key_count && wc->key_count) {
            float got[16];
            cr_assert_leq(wc->key_count * comps, 16);
            kiln_cast_array_read_f32(&c.key_values, 0, wc->key_count, got);
            SAME_BITS(got, wc->values, wc->key_count * comps * sizeof(float), "curve %u kv", i);
        } else {
            cr_expect_eq(c.key_values.count, wc->key_count, "curve %u kv count", i);
        }
    }
    for (uint32_t i = 0; i < w->override_count; i++) {
        kiln_cast_mode_override o;
        cr_assert_eq(kiln_cast_get_mode_override(doc, child(doc, node, KILN_CAST_ID_CURVE_MODE_OVERRIDE, i), &o, NULL),
                     KILN_OK);
        expect_str(o.node_name, w->overrides[i].target, "override nn");
        cr_expect_eq((int)o.mode, (int)w->overrides[i].mode);
        cr_expect_eq(o.translation, w->overrides[i].translation);
        cr_expect_eq(o.rotation, w->overrides[i].rotation);
        cr_expect_eq(o.scale, w->overrides[i].scale);
    }
    for (uint32_t i = 0; i < w->notification_count; i++) {
        kiln_cast_notification t;
        cr_assert_eq(kiln_cast_get_notification(doc, child(doc, node, KILN_CAST_ID_NOTIFICATION_TRACK, i), &t, NULL),
                     KILN_OK);
        expect_str(t.name, w->notifications[i].name, "notification name");
        expect_u32_array(&t.key_frames, w->notifications[i].frames, w->notifications[i].key_count, KILN_CAST_TYPE_BYTE,
                         "notification kb");
    }
}

/* ---- tests ------------------------------------------------------------------------------------ */

Test(cast_export, every_field_reads_back_bit_for_bit)
{
    /* the edge values are what they claim to be */
    cr_assert_eq(bits_of(k_positions[9]), 0x7FC00123u);
    cr_assert_eq(bits_of(k_positions[4]), 0x80000000u);
    cr_assert_eq(bits_of(k_positions[6]), 0x00000001u);
    kiln_source_scene full, clip;
    build_full(&full);
    build_clip(&clip);
    const kiln_source_scene *scenes[2] = {&full, &clip};
    diag_log log = {0};
    parsed p = export_logged(scenes, 2, &log);
    const kiln_cast_doc *doc = p.doc;

    /* layout: one Root per scene */
    cr_assert_eq(kiln_cast_root_count(doc), 2);
    uint32_t root = kiln_cast_root(doc, 0), root1 = kiln_cast_root(doc, 1);
    cr_expect_eq(kiln_cast_node_at(doc, root)->id, KILN_CAST_ID_ROOT);
    cr_expect_eq(kiln_cast_child_count(doc, root, 0), 6, "Metadata, 2 Models, 2 Instances, 1 Animation");
    cr_expect_eq(kiln_cast_child_count(doc, root1, 0), 1);
    cr_expect_eq(kiln_cast_child_count(doc, root1, KILN_CAST_ID_ANIMATION), 1);
    /* hashes: 1, 2, 3, ... in file order */
    for (uint32_t i = 0; i < kiln_cast_node_count(doc); i++)
        cr_expect_eq(kiln_cast_node_at(doc, i)->hash, (uint64_t)i + 1, "node %u", i);

    /* metadata */
    kiln_cast_metadata md;
    cr_assert_eq(kiln_cast_get_metadata(doc, kiln_cast_find_metadata(doc), &md, NULL), KILN_OK);
    expect_str(md.author, "ann", "author");
    expect_str(md.software, full.metadata.software, "software");
    expect_str(md.scene_root, "assets/../assets", "sr");
    cr_expect_eq(md.up_axis, KILN_CAST_UP_Z);

    /* model 0 */
    const kiln_source_model *sm = &full.models[0];
    uint32_t model = child(doc, root, KILN_CAST_ID_MODEL, 0);
    kiln_cast_model cm;
    cr_assert_eq(kiln_cast_get_model(doc, model, &cm, NULL), KILN_OK);
    expect_str(cm.name, "hero", "model name");
    SAME_BITS(cm.position, sm->position, 12, "model p");
    SAME_BITS(cm.rotation, sm->rotation, 16, "model r (a rotation the reader's normalisation moves)");
    SAME_BITS(cm.scale, sm->scale, 12, "model s");
    cr_expect_eq(cm.mesh_count, 2);
    cr_expect_eq(cm.hair_count, 1);
    cr_expect_eq(cm.blend_shape_count, 2);
    cr_expect_eq(cm.material_count, 2);
    cr_assert_neq(cm.skeleton, KILN_CAST_NONE);
    check_skeleton(doc, cm.skeleton, sm->skeleton);

    /* materials */
    uint32_t m0 = child(doc, model, KILN_CAST_ID_MATERIAL, 0), m1 = child(doc, model, KILN_CAST_ID_MATERIAL, 1);
    kiln_cast_material mat;
    cr_assert_eq(kiln_cast_get_material(doc, m0, &mat, NULL), KILN_OK);
    expect_str(mat.name, "skin", "material name");
    expect_str(mat.type, "pbr", "material type");
    cr_expect_eq(mat.slot_count, 4);
    static const char *const names0[4] = {"albedo", "emissive", "normal", "specular"};
    for (uint32_t k = 0; k < 4; k++) check_slot(doc, m0, k, names0[k], &sm->materials[0].slots[k]);
    cr_assert_eq(kiln_cast_get_material(doc, m1, &mat, NULL), KILN_OK);
    expect_str(mat.name, NULL, "unnamed material");
    expect_str(mat.type, NULL, "untyped material");
    cr_expect_eq(mat.slot_count, 4, "no slot lost");
    static const char *const names1[4] = {"n_2", "albedo_2", "extra0", "albedo"};
    for (uint32_t k = 0; k < 4; k++) check_slot(doc, m1, k, names1[k], &sm->materials[1].slots[k]);
    cr_expect_eq(log.count, 4, "three slot renames and one extra");
    int renames = 0, extras = 0;
    for (int i = 0; i < log.count && i < 32; i++) {
        cr_expect_eq(log.items[i].severity, KILN_SEVERITY_WARNING);
        renames += log.items[i].code == KILN_ERR_CAST_DUPLICATE;
        if (log.items[i].code == KILN_ERR_IMPORT_UNSUPPORTED) {
            extras++;
            cr_expect(strstr(log.items[i].message, "light 'sun'") != NULL, "%s", log.items[i].message);
            cr_expect_str_eq(log.items[i].path, "scene[0]:LIGHT[0]");
            cr_expect_eq(log.items[i].offset, 100);
        }
    }
    cr_expect_eq(renames, 3);
    cr_expect_eq(extras, 1);

    /* meshes, hair, blend shapes */
    uint32_t mesh0 = child(doc, model, KILN_CAST_ID_MESH, 0), mesh1 = child(doc, model, KILN_CAST_ID_MESH, 1);
    check_mesh(doc, mesh0, &sm->meshes[0], m0);
    check_mesh(doc, mesh1, &sm->meshes[1], KILN_CAST_NONE);
    cr_expect_not_null(kiln_cast_find_prop(doc, mesh1, "sm", NULL), "sm written for a skinned mesh");
    cr_expect_null(kiln_cast_find_prop(doc, mesh1, "wv", NULL), "mi 1 without weights keeps wv absent");
    kiln_cast_hair h;
    cr_assert_eq(kiln_cast_get_hair(doc, child(doc, model, KILN_CAST_ID_HAIR, 0), &h, NULL), KILN_OK);
    expect_str(h.name, "fuzz", "hair name");
    expect_u32_array(&h.segments, k_segments, 2, KILN_CAST_TYPE_BYTE, "se");
    expect_f32_array(&h.particles, k_particles, 7, 3, KILN_CAST_TYPE_VEC3, "pt");
    cr_expect_eq(h.material, m1);
    for (uint32_t i = 0; i < 2; i++) {
        const kiln_source_blend_shape *w = &sm->blend_shapes[i];
        kiln_cast_blend_shape b;
        cr_assert_eq(kiln_cast_get_blend_shape(doc, child(doc, model, KILN_CAST_ID_BLENDSHAPE, i), &b, NULL), KILN_OK);
        expect_str(b.name, w->name, "shape name");
        cr_expect_eq(b.base_mesh, i == 0 ? mesh0 : mesh1);
        cr_expect_eq(b.pair_count, w->pair_count);
        expect_u32_array(&b.indices, w->indices, w->pair_count, i == 0 ? KILN_CAST_TYPE_BYTE : KILN_CAST_TYPE_SHORT,
                         "vi");
        expect_f32_array(&b.targets, w->targets, w->pair_count, 3, KILN_CAST_TYPE_VEC3, "shape vp");
        SAME_BITS(&b.target_scale, &w->target_scale, 4, "ts");
    }

    /* model 1: unnamed, one empty mesh */
    uint32_t model1 = child(doc, root, KILN_CAST_ID_MODEL, 1);
    cr_assert_eq(kiln_cast_get_model(doc, model1, &cm, NULL), KILN_OK);
    cr_expect_null(cm.name);
    cr_expect_eq(cm.skeleton, KILN_CAST_NONE);
    kiln_cast_mesh em;
    cr_expect_eq(kiln_cast_get_mesh(doc, child(doc, model1, KILN_CAST_ID_MESH, 0), &em, NULL), KILN_OK);
    cr_expect_eq(em.vertex_count, 0);
    cr_expect_eq(em.face_count, 0);
    cr_expect_null(kiln_cast_find_prop(doc, child(doc, model1, KILN_CAST_ID_MESH, 0), "sm", NULL),
                   "no sm for an unskinned linear mesh");

    /* instances */
    for (uint32_t i = 0; i < 2; i++) {
        const kiln_source_instance *w = &full.instances[i];
        kiln_cast_instance in;
        cr_assert_eq(kiln_cast_get_instance(doc, child(doc, root, KILN_CAST_ID_INSTANCE, i), &in, NULL), KILN_OK);
        expect_str(in.name, w->name, "instance name");
        expect_str(in.path, w->path, "instance path");
        SAME_BITS(in.position, w->position, 12, "instance %u p", i);
        SAME_BITS(in.rotation, w->rotation, 16, "instance %u r", i);
        SAME_BITS(in.scale, w->scale, 12, "instance %u s", i);
    }

    /* animations */
    check_animation(doc, child(doc, root, KILN_CAST_ID_ANIMATION, 0), &full.animations[0]);
    uint32_t anim = child(doc, root, KILN_CAST_ID_ANIMATION, 0);
    const kiln_cast_prop *kv = kiln_cast_find_prop(doc, child(doc, anim, KILN_CAST_ID_CURVE, 3), "kv", NULL);
    cr_expect_eq(kv->type, KILN_CAST_TYPE_BYTE, "whole visibility keys as integers");
    kv = kiln_cast_find_prop(doc, child(doc, anim, KILN_CAST_ID_CURVE, 4), "kv", NULL);
    cr_expect_eq(kv->type, KILN_CAST_TYPE_FLOAT, "fractional visibility keys stay floats");
    cr_expect_null(kiln_cast_find_prop(doc, child(doc, anim, KILN_CAST_ID_CURVE, 5), "ab", NULL),
                   "ab left out when it is the default of a non-additive curve");
    check_animation(doc, child(doc, root1, KILN_CAST_ID_ANIMATION, 0), &clip.animations[0]);

    /* the same scenes give the same bytes */
    kiln_cast_export_result again;
    kiln_diag err;
    cr_assert_eq(kiln_cast_export(scenes, 2, NULL, &again, &err), KILN_OK);
    cr_expect_eq(again.size, p.out.size);
    cr_expect(again.size == p.out.size && memcmp(again.data, p.out.data, again.size) == 0, "deterministic");
    kiln_cast_export_result_free(&again);

    parsed_free(&p);
    kiln_source_scene_free(&full);
    kiln_source_scene_free(&clip);
}

/* The Cast reader normalises stored rotations; the exporter writes a value whose
 * normalisation is the source's exactly, for rotations that normalising would otherwise move. */
Test(cast_export, rotations_survive_the_readers_normalisation)
{
    enum { N = 200 };
    kiln_source_scene s;
    kiln_source_scene_init(&s, NULL);
    s.model_count = 1;
    s.models = kiln_source_alloc(&s, 1, sizeof *s.models);
    kiln_source_skeleton *sk = kiln_source_alloc(&s, 1, sizeof *sk);
    s.models[0].skeleton = sk;
    s.models[0].rotation[3] = 1;
    s.models[0].scale[0] = s.models[0].scale[1] = s.models[0].scale[2] = 1;
    sk->bone_count = N;
    sk->bones = kiln_source_alloc(&s, N, sizeof *sk->bones);
    for (int i = 0; i < N; i++) {
        sk->bones[i].parent = -1;
        sk->bones[i].has_local_rotation = 1;
        unstable_quat(i, sk->bones[i].local_rotation);
    }
    const kiln_source_scene *scenes[1] = {&s};
    parsed p = export_and_parse(scenes, 1, NULL);
    uint32_t skel = kiln_cast_child(p.doc, kiln_cast_child(p.doc, kiln_cast_root(p.doc, 0), KILN_CAST_ID_MODEL, 0),
                                    KILN_CAST_ID_SKELETON, 0);
    int moved = 0;
    for (uint32_t i = 0; i < N; i++) {
        uint32_t bone = kiln_cast_skeleton_bone(p.doc, skel, i);
        kiln_cast_bone b;
        cr_assert_eq(kiln_cast_get_bone(p.doc, bone, &b, NULL), KILN_OK);
        SAME_BITS(b.local_rotation, sk->bones[i].local_rotation, 16, "bone %u", i);
        float stored[4];
        kiln_cast_prop_vec(kiln_cast_find_prop(p.doc, bone, "lr", NULL), 0, 4, stored);
        moved += memcmp(stored, sk->bones[i].local_rotation, sizeof stored) != 0;
    }
    cr_expect_eq(moved, N, "each of these needed a stored value other than itself");
    parsed_free(&p);
    kiln_source_scene_free(&s);
}

Test(cast_export, an_empty_scene_is_one_empty_root)
{
    kiln_source_scene s;
    kiln_source_scene_init(&s, NULL);
    const kiln_source_scene *scenes[1] = {&s};
    parsed p = export_and_parse(scenes, 1, NULL);
    cr_expect_eq(p.out.size, 16 + 24);
    cr_expect_eq(kiln_cast_root_count(p.doc), 1);
    cr_expect_eq(kiln_cast_node_count(p.doc), 1);
    parsed_free(&p);
    kiln_source_scene_free(&s);
}

static kiln_result export_fails(const kiln_source_scene *s, kiln_diag *err)
{
    const kiln_source_scene *scenes[1] = {s};
    const char *inputs[1] = {"in.mesh"};
    kiln_cast_export_options o = {0};
    o.input_paths = inputs;
    kiln_cast_export_result out;
    memset(&out, 0xAB, sizeof out);
    kiln_result r = kiln_cast_export(scenes, 1, &o, &out, err);
    cr_expect_null(out.data, "nothing handed out on failure");
    cr_expect_eq(out.size, 0);
    return r;
}

Test(cast_export, bad_indices_and_arrays_fail_naming_the_item)
{
    kiln_source_scene s;
    build_full(&s);
    kiln_diag err;
    kiln_source_mesh *mesh = &s.models[0].meshes[0];

    mesh->material = 2;
    cr_expect_eq(export_fails(&s, &err), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_str_eq(err.path, "in.mesh:Root[0]/Model[0]/Mesh[0]");
    cr_expect_eq(err.offset, 100);
    cr_expect(strstr(err.message, "material 2") != NULL, "%s", err.message);
    mesh->material = 0;

    const float *normals = mesh->normals;
    mesh->positions = NULL;
    cr_expect_eq(export_fails(&s, &err), KILN_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(err.message, "vp") != NULL, "%s", err.message);
    mesh->positions = normals;

    s.models[0].skeleton->ik_handles[0].end_bone = 3;
    cr_expect_eq(export_fails(&s, &err), KILN_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(err.message, "eb") != NULL, "%s", err.message);
    s.models[0].skeleton->ik_handles[0].end_bone = 2;

    s.models[0].blend_shapes[1].mesh = 7;
    cr_expect_eq(export_fails(&s, &err), KILN_ERR_INVALID_ARGUMENT);
    s.models[0].blend_shapes[1].mesh = 1;

    s.animations[0].curves[0].channel = KILN_SOURCE_CHANNEL_COUNT_;
    cr_expect_eq(export_fails(&s, &err), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_str_eq(err.path, "in.mesh:c0");
    s.animations[0].curves[0].channel = KILN_SOURCE_CHANNEL_ROTATION;

    /* More slots than a Cast reader reads (n and t count among its first 256 properties). */
    kiln_source_material *mat = &s.models[0].materials[0];
    kiln_source_material_slot *slots = mat->slots;
    uint32_t slot_count = mat->slot_count;
    mat->slot_count = 255;
    mat->slots = kiln_source_alloc(&s, 255, sizeof *mat->slots);
    for (uint32_t k = 0; k < 255; k++) {
        mat->slots[k].name = kiln_source_strfmt(&s, "extra%u", k);
        mat->slots[k].path = "x.png";
    }
    cr_expect_eq(export_fails(&s, &err), KILN_ERR_LIMIT);
    cr_expect_str_eq(err.path, "in.mesh:Root[0]/Model[0]/Material[0]");
    mat->slot_count = 254;
    const kiln_source_scene *one[1] = {&s};
    kiln_cast_export_result fits;
    cr_assert_eq(kiln_cast_export(one, 1, NULL, &fits, &err), KILN_OK, "%s", err.message);
    kiln_cast_doc *doc;
    cr_assert_eq(kiln_cast_parse(fits.data, fits.size, NULL, &doc, &err), KILN_OK);
    uint32_t matl = kiln_cast_child(doc, kiln_cast_child(doc, kiln_cast_root(doc, 0), KILN_CAST_ID_MODEL, 0),
                                    KILN_CAST_ID_MATERIAL, 0);
    kiln_cast_material cm;
    cr_assert_eq(kiln_cast_get_material(doc, matl, &cm, NULL), KILN_OK);
    cr_expect_eq(cm.slot_count, 254, "every slot within the reader's reach");
    kiln_cast_free(doc);
    kiln_cast_export_result_free(&fits);
    mat->slots = slots;
    mat->slot_count = slot_count;

    /* More faces than a Cast array can count. */
    mesh->face_count = 0x60000000u;
    cr_expect_eq(export_fails(&s, &err), KILN_ERR_LIMIT);
    mesh->face_count = 3;

    const kiln_source_scene *none[1] = {NULL};
    kiln_cast_export_result out;
    cr_expect_eq(kiln_cast_export(none, 1, NULL, &out, &err), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_cast_export(none, 0, NULL, &out, &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_source_scene_free(&s);
}

/* ---- saving ----------------------------------------------------------------------------------- */

static void temp_dir(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/kiln_cast_export_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static int dir_count(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

Test(cast_export, save_is_atomic)
{
    kiln_source_scene s;
    build_full(&s);
    const kiln_source_scene *scenes[1] = {&s};
    char dir[64], path[128], missing[160];
    temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/out.cast", dir);
    snprintf(missing, sizeof missing, "%s/no/such/dir/out.cast", dir);

    /* the saved file holds exactly the in-memory export */
    kiln_diag err;
    cr_assert_eq(kiln_cast_export_save(scenes, 1, NULL, path, &err), KILN_OK, "%s", err.message);
    kiln_cast_export_result mem;
    cr_assert_eq(kiln_cast_export(scenes, 1, NULL, &mem, &err), KILN_OK);
    file_bytes fb;
    cr_assert(read_file(path, &fb));
    cr_expect(fb.size == mem.size && memcmp(fb.data, mem.data, fb.size) == 0);
    file_bytes_free(&fb);
    cr_expect_eq(dir_count(dir), 1, "no temporary file left");

    /* a failing export leaves the existing file as it was, and no temporary file */
    s.models[0].meshes[0].material = 9;
    cr_expect_eq(kiln_cast_export_save(scenes, 1, NULL, path, &err), KILN_ERR_INVALID_ARGUMENT);
    cr_assert(read_file(path, &fb));
    cr_expect(fb.size == mem.size && memcmp(fb.data, mem.data, fb.size) == 0, "old file untouched");
    file_bytes_free(&fb);
    cr_expect_eq(dir_count(dir), 1);
    s.models[0].meshes[0].material = 0;

    /* an unwritable place: ERR_IO naming the path, nothing created */
    cr_expect_eq(kiln_cast_export_save(scenes, 1, NULL, missing, &err), KILN_ERR_IO);
    cr_expect(strstr(err.message, missing) != NULL, "%s", err.message);
    cr_expect_eq(dir_count(dir), 1);

    /* a directory where the file should go: the rename fails, the temporary file is removed */
    char target[160];
    snprintf(target, sizeof target, "%s/target", dir);
    cr_assert_eq(mkdir(target, 0700), 0);
    cr_expect_eq(kiln_cast_export_save(scenes, 1, NULL, target, &err), KILN_ERR_IO);
    cr_expect_eq(dir_count(dir), 2, "out.cast and the directory only");
    cr_expect_eq(dir_count(target), 0);
    rmdir(target);

    kiln_cast_export_result_free(&mem);
    unlink(path);
    rmdir(dir);
    kiln_source_scene_free(&s);
}

Test(cast_export, allocation_failures_are_reported_and_leak_nothing)
{
    kiln_source_scene s;
    build_full(&s);
    const kiln_source_scene *scenes[1] = {&s};
    int failures = 0;
    for (int fail_at = 0;; fail_at++) {
        counting_alloc ca = {fail_at, 0, 0};
        kiln_allocator a = counting_allocator(&ca);
        kiln_cast_export_options o = {0};
        o.allocator = &a;
        kiln_cast_export_result out;
        kiln_diag err;
        kiln_result r = kiln_cast_export(scenes, 1, &o, &out, &err);
        if (r == KILN_OK) {
            cr_expect_eq(ca.live, 1, "only the result is live");
            kiln_cast_export_result_free(&out);
            cr_expect_eq(ca.live, 0);
            break;
        }
        failures++;
        cr_expect_eq(r, KILN_ERR_OUT_OF_MEMORY, "allocation %d: %s", fail_at, err.message);
        cr_expect_eq(ca.live, 0, "allocation %d leaks %d blocks", fail_at, ca.live);
        cr_assert_lt(fail_at, 10000);
    }
    cr_expect_gt(failures, 3);
    kiln_source_scene_free(&s);
}

/* ---- the corpus: import -> export -> import gives the same source scene ---------------------- */

#define SAME_STR(a, b, what) cr_expect(((a) == NULL) == ((b) == NULL) && (!(a) || strcmp((a), (b)) == 0), \
                                       "%s: '%s' vs '%s'", what, (a) ? (a) : "(absent)", (b) ? (b) : "(absent)")
#define SAME_ARR(a, b, bytes, what) \
    cr_expect(((a) == NULL) == ((b) == NULL) && (!(a) || memcmp((a), (b), (bytes)) == 0), "%s", what)
#define SAME_VAL(a, b, what) SAME_BITS(&(a), &(b), sizeof(a), "%s", what)

static void same_skeleton(const kiln_source_skeleton *a, const kiln_source_skeleton *b)
{
    cr_assert_eq(a->bone_count, b->bone_count);
    for (uint32_t i = 0; i < a->bone_count; i++) {
        const kiln_source_bone *x = &a->bones[i], *y = &b->bones[i];
        SAME_STR(x->name, y->name, "bone name");
        cr_expect_eq(x->parent, y->parent);
        cr_expect_eq(x->segment_scale_compensate, y->segment_scale_compensate);
        cr_expect(x->has_local_position == y->has_local_position && x->has_local_rotation == y->has_local_rotation &&
                  x->has_world_position == y->has_world_position && x->has_world_rotation == y->has_world_rotation &&
                  x->has_scale == y->has_scale, "bone %u: parts present", i);
        if (x->has_local_position) SAME_VAL(x->local_position, y->local_position, "lp");
        if (x->has_local_rotation) SAME_VAL(x->local_rotation, y->local_rotation, "lr");
        if (x->has_world_position) SAME_VAL(x->world_position, y->world_position, "wp");
        if (x->has_world_rotation) SAME_VAL(x->world_rotation, y->world_rotation, "wr");
        if (x->has_scale) SAME_VAL(x->scale, y->scale, "s");
    }
    cr_assert_eq(a->ik_handle_count, b->ik_handle_count);
    for (uint32_t i = 0; i < a->ik_handle_count; i++) {
        const kiln_source_ik_handle *x = &a->ik_handles[i], *y = &b->ik_handles[i];
        SAME_STR(x->name, y->name, "IK name");
        cr_expect(x->start_bone == y->start_bone && x->end_bone == y->end_bone && x->target_bone == y->target_bone &&
                  x->pole_vector_bone == y->pole_vector_bone && x->pole_bone == y->pole_bone, "IK %u bones", i);
        SAME_VAL(x->target_offset, y->target_offset, "to");
        cr_expect_eq(x->use_target_rotation, y->use_target_rotation);
    }
    cr_assert_eq(a->constraint_count, b->constraint_count);
    for (uint32_t i = 0; i < a->constraint_count; i++) {
        const kiln_source_constraint *x = &a->constraints[i], *y = &b->constraints[i];
        SAME_STR(x->name, y->name, "constraint name");
        cr_expect(x->type == y->type && x->constrained_bone == y->constrained_bone && x->target_bone == y->target_bone &&
                  x->maintain_offset == y->maintain_offset && x->has_custom_offset == y->has_custom_offset,
                  "constraint %u", i);
        SAME_VAL(x->custom_offset, y->custom_offset, "co");
        SAME_VAL(x->weight, y->weight, "wt");
        cr_expect(memcmp(x->skip, y->skip, sizeof x->skip) == 0, "constraint %u skips", i);
    }
}

static void same_mesh(const kiln_source_mesh *a, const kiln_source_mesh *b)
{
    SAME_STR(a->name, b->name, "mesh name");
    cr_assert_eq(a->vertex_count, b->vertex_count);
    cr_assert_eq(a->face_count, b->face_count);
    size_t v3 = (size_t)a->vertex_count * 12;
    SAME_ARR(a->positions, b->positions, v3, "positions");
    SAME_ARR(a->normals, b->normals, v3, "normals");
    SAME_ARR(a->tangents, b->tangents, v3, "tangents");
    SAME_ARR(a->tangent_signs, b->tangent_signs, (size_t)a->vertex_count * 4, "tangent signs");
    cr_assert_eq(a->uv_layer_count, b->uv_layer_count);
    for (uint32_t i = 0; i < a->uv_layer_count; i++) SAME_ARR(a->uv[i], b->uv[i], (size_t)a->vertex_count * 8, "uv");
    cr_assert_eq(a->color_layer_count, b->color_layer_count);
    for (uint32_t i = 0; i < a->color_layer_count; i++) {
        SAME_ARR(a->color[i].rgba8, b->color[i].rgba8, (size_t)a->vertex_count * 4, "packed colours");
        SAME_ARR(a->color[i].rgba, b->color[i].rgba, (size_t)a->vertex_count * 16, "float colours");
    }
    cr_assert_eq(a->max_influence, b->max_influence);
    size_t w = (size_t)a->vertex_count * a->max_influence * 4;
    SAME_ARR(a->weight_bones, b->weight_bones, w, "weight bones");
    SAME_ARR(a->weight_values, b->weight_values, w, "weight values");
    cr_expect_eq(a->skinning, b->skinning);
    SAME_ARR(a->faces, b->faces, (size_t)a->face_count * 12, "faces");
    cr_expect_eq(a->material, b->material);
}

static void same_model(const kiln_source_model *a, const kiln_source_model *b)
{
    SAME_STR(a->name, b->name, "model name");
    SAME_VAL(a->position, b->position, "model p");
    SAME_VAL(a->rotation, b->rotation, "model r");
    SAME_VAL(a->scale, b->scale, "model s");
    cr_assert_eq(a->skeleton == NULL, b->skeleton == NULL);
    if (a->skeleton) same_skeleton(a->skeleton, b->skeleton);
    cr_assert_eq(a->material_count, b->material_count);
    for (uint32_t i = 0; i < a->material_count; i++) {
        const kiln_source_material *x = &a->materials[i], *y = &b->materials[i];
        SAME_STR(x->name, y->name, "material name");
        SAME_STR(x->type, y->type, "material type");
        cr_assert_eq(x->slot_count, y->slot_count);
        for (uint32_t k = 0; k < x->slot_count; k++) {
            SAME_STR(x->slots[k].name, y->slots[k].name, "slot name");
            cr_expect_eq(x->slots[k].kind, y->slots[k].kind);
            SAME_STR(x->slots[k].path, y->slots[k].path, "slot path");
            if (x->slots[k].kind == KILN_SOURCE_SLOT_COLOR) {
                SAME_VAL(x->slots[k].rgba, y->slots[k].rgba, "slot rgba");
                cr_expect_eq(x->slots[k].color_space, y->slots[k].color_space);
            }
        }
    }
    cr_assert_eq(a->mesh_count, b->mesh_count);
    for (uint32_t i = 0; i < a->mesh_count; i++) same_mesh(&a->meshes[i], &b->meshes[i]);
    cr_assert_eq(a->hair_count, b->hair_count);
    for (uint32_t i = 0; i < a->hair_count; i++) {
        const kiln_source_hair *x = &a->hairs[i], *y = &b->hairs[i];
        SAME_STR(x->name, y->name, "hair name");
        cr_assert(x->strand_count == y->strand_count && x->particle_count == y->particle_count);
        SAME_ARR(x->segments, y->segments, (size_t)x->strand_count * 4, "segments");
        SAME_ARR(x->particles, y->particles, (size_t)x->particle_count * 12, "particles");
        cr_expect_eq(x->material, y->material);
    }
    cr_assert_eq(a->blend_shape_count, b->blend_shape_count);
    for (uint32_t i = 0; i < a->blend_shape_count; i++) {
        const kiln_source_blend_shape *x = &a->blend_shapes[i], *y = &b->blend_shapes[i];
        SAME_STR(x->name, y->name, "shape name");
        cr_assert(x->mesh == y->mesh && x->pair_count == y->pair_count);
        SAME_ARR(x->indices, y->indices, (size_t)x->pair_count * 4, "shape indices");
        SAME_ARR(x->targets, y->targets, (size_t)x->pair_count * 12, "shape targets");
        SAME_VAL(x->target_scale, y->target_scale, "ts");
    }
}

static void same_animation(const kiln_source_animation *a, const kiln_source_animation *b)
{
    SAME_STR(a->name, b->name, "clip name");
    SAME_VAL(a->framerate, b->framerate, "fr");
    cr_expect_eq(a->looping, b->looping);
    cr_assert_eq(a->curve_count, b->curve_count);
    for (uint32_t i = 0; i < a->curve_count; i++) {
        const kiln_source_curve *x = &a->curves[i], *y = &b->curves[i];
        SAME_STR(x->target, y->target, "curve target");
        cr_expect(x->channel == y->channel && x->mode == y->mode, "curve %u channel and mode", i);
        SAME_VAL(x->additive_weight, y->additive_weight, "ab");
        cr_assert_eq(x->key_count, y->key_count);
        uint32_t comps = x->channel == KILN_SOURCE_CHANNEL_ROTATION ? 4 : 1;
        SAME_ARR(x->frames, y->frames, (size_t)x->key_count * 4, "key frames");
        SAME_ARR(x->values, y->values, (size_t)x->key_count * comps * 4, "key values");
    }
    cr_assert_eq(a->override_count, b->override_count);
    for (uint32_t i = 0; i < a->override_count; i++) {
        const kiln_source_mode_override *x = &a->overrides[i], *y = &b->overrides[i];
        SAME_STR(x->target, y->target, "override target");
        cr_expect(x->mode == y->mode && x->translation == y->translation && x->rotation == y->rotation &&
                  x->scale == y->scale, "override %u", i);
    }
    cr_assert_eq(a->notification_count, b->notification_count);
    for (uint32_t i = 0; i < a->notification_count; i++) {
        SAME_STR(a->notifications[i].name, b->notifications[i].name, "notification name");
        cr_assert_eq(a->notifications[i].key_count, b->notifications[i].key_count);
        SAME_ARR(a->notifications[i].frames, b->notifications[i].frames, (size_t)a->notifications[i].key_count * 4,
                 "notification frames");
    }
}

static void same_scene(const kiln_source_scene *a, const kiln_source_scene *b)
{
    SAME_STR(a->metadata.author, b->metadata.author, "author");
    SAME_STR(a->metadata.software, b->metadata.software, "software");
    SAME_STR(a->metadata.scene_root, b->metadata.scene_root, "scene root");
    cr_expect_eq(a->metadata.up_axis, b->metadata.up_axis);
    cr_assert_eq(a->model_count, b->model_count);
    for (uint32_t i = 0; i < a->model_count; i++) same_model(&a->models[i], &b->models[i]);
    cr_assert_eq(a->instance_count, b->instance_count);
    for (uint32_t i = 0; i < a->instance_count; i++) {
        const kiln_source_instance *x = &a->instances[i], *y = &b->instances[i];
        SAME_STR(x->name, y->name, "instance name");
        SAME_STR(x->path, y->path, "instance path");
        SAME_VAL(x->position, y->position, "instance p");
        SAME_VAL(x->rotation, y->rotation, "instance r");
        SAME_VAL(x->scale, y->scale, "instance s");
    }
    cr_assert_eq(a->animation_count, b->animation_count);
    for (uint32_t i = 0; i < a->animation_count; i++) same_animation(&a->animations[i], &b->animations[i]);
}

/* Every good corpus file (the top-level *.cast but the 65 MB one): the scene imported from the
 * file and the one imported from its export agree in every value, bit for bit. */
Test(cast_export, corpus_scenes_survive_export_and_import, .timeout = 300)
{
    char dir[512];
    corpus_dir_or_skip(dir, sizeof dir);
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int files = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".cast") != 0 || strcmp(e->d_name, "large_500k.cast") == 0) continue;
        file_bytes fb;
        if (!corpus_read(dir, e->d_name, &fb)) continue;
        kiln_source_scene a, b;
        kiln_diag err;
        cr_assert_eq(kiln_source_import(fb.data, fb.size, e->d_name, NULL, NULL, &a, &err), KILN_OK, "%s: %s",
                     e->d_name, err.message);
        file_bytes_free(&fb);
        const kiln_source_scene *scenes[1] = {&a};
        kiln_cast_export_result out;
        cr_assert_eq(kiln_cast_export(scenes, 1, NULL, &out, &err), KILN_OK, "%s: %s", e->d_name, err.message);
        cr_assert_eq(kiln_source_import(out.data, out.size, e->d_name, NULL, NULL, &b, &err), KILN_OK, "%s: %s",
                     e->d_name, err.message);
        same_scene(&a, &b);
        kiln_cast_export_result_free(&out);
        kiln_source_scene_free(&a);
        kiln_source_scene_free(&b);
        files++;
    }
    closedir(d);
    cr_expect_gt(files, 10);
}

/* ---- rest keys: the bound skeleton's rest is written (Unigine .anim, V26) -------------------- */

static const uint32_t k_bind_frames[2] = {0, 4};
static const uint8_t  k_bind_flags[2] = {1, 0};
static const float    k_bind_tx[2] = {5, 2};              /* key 0: the rest the clip's file knew */
static const float    k_bind_rq[8] = {0, 0, 0, -1, 0, 0, 0.6f, 0.8f};

/* A model whose skeleton has "hip" (local rest) and "arm" under it (world rest only), and a clip
 * in another scene flagging key 0 of its "hip" tx and "arm" rq curves as rest, driving a
 * "ghost" bone the skeleton lacks, and authored against a "hip" rest 5 m off. */
static void build_bind(kiln_source_scene *model, kiln_source_scene *clip)
{
    kiln_source_scene_init(model, NULL);
    model->model_count = 1;
    model->models = kiln_source_alloc(model, 1, sizeof *model->models);
    kiln_source_skeleton *sk = kiln_source_alloc(model, 1, sizeof *sk);
    model->models[0].skeleton = sk;
    sk->bone_count = 2;
    sk->bones = kiln_source_alloc(model, 2, sizeof *sk->bones);
    kiln_source_bone *b = sk->bones;
    b[0].name = kiln_source_strdup(model, "hip");
    b[0].parent = -1;
    b[0].has_local_position = b[0].has_local_rotation = 1;
    const float hp[3] = {0.5f, 1, 0}, hr[4] = {0, 0, 0.70710677f, 0.70710677f};
    memcpy(b[0].local_position, hp, sizeof hp);
    memcpy(b[0].local_rotation, hr, sizeof hr);
    b[1].name = kiln_source_strdup(model, "arm");
    b[1].parent = 0;
    b[1].has_world_position = b[1].has_world_rotation = 1;
    const float ap[3] = {0.5f, 3, 0}, ar[4] = {0, 0, 1, 0};
    memcpy(b[1].world_position, ap, sizeof ap);
    memcpy(b[1].world_rotation, ar, sizeof ar);

    kiln_source_scene_init(clip, NULL);
    clip->animation_count = 1;
    clip->animations = kiln_source_alloc(clip, 1, sizeof *clip->animations);
    kiln_source_animation *a = clip->animations;
    a->name = kiln_source_strdup(clip, "run");
    a->framerate = 30;
    a->bind_rule = "V26";
    a->curve_count = 3;
    a->curves = kiln_source_alloc(clip, 3, sizeof *a->curves);
    kiln_source_curve *cv = a->curves;
    cv[0] = (kiln_source_curve){loc_of(clip, "c0"), "hip", KILN_SOURCE_CHANNEL_TX, KILN_SOURCE_ABSOLUTE, 1, 2,
                                DUP(clip, k_bind_frames), DUP(clip, k_bind_tx), DUP(clip, k_bind_flags)};
    cv[1] = (kiln_source_curve){loc_of(clip, "c1"), "ghost", KILN_SOURCE_CHANNEL_TX, KILN_SOURCE_ABSOLUTE, 1, 2,
                                DUP(clip, k_bind_frames), DUP(clip, k_bind_tx), DUP(clip, k_bind_flags)};
    cv[2] = (kiln_source_curve){loc_of(clip, "c2"), "arm", KILN_SOURCE_CHANNEL_ROTATION, KILN_SOURCE_ABSOLUTE, 1, 2,
                                DUP(clip, k_bind_frames), DUP(clip, k_bind_rq), DUP(clip, k_bind_flags)};
    a->authored_rest_count = 1;
    a->authored_rest = kiln_source_alloc(clip, 1, sizeof *a->authored_rest);
    a->authored_rest[0] = (kiln_source_rest_bone){loc_of(clip, "BIND[0]"), "hip", {5.5f, 1, 0}, {0, 0, 0.70710677f, 0.70710677f}, {1, 1, 1}};
}

static int diag_log_rule(const diag_log *log, kiln_result code, const char *rule)
{
    for (int i = 0; i < log->count && i < 32; i++)
        if (log->items[i].code == code && log->items[i].severity == KILN_SEVERITY_WARNING &&
            strcmp(log->items[i].rule, rule) == 0)
            return 1;
    return 0;
}

Test(cast_export, rest_keys_take_the_bound_skeletons_rest)
{
    kiln_source_scene model, clip;
    build_bind(&model, &clip);
    const kiln_source_scene *scenes[2] = {&model, &clip};
    diag_log log = {0};
    parsed p = export_logged(scenes, 2, &log);

    uint32_t anim = child(p.doc, kiln_cast_root(p.doc, 1), KILN_CAST_ID_ANIMATION, 0);
    cr_assert_eq(kiln_cast_child_count(p.doc, anim, KILN_CAST_ID_CURVE), 2, "the ghost's curve is not written");
    kiln_cast_curve c;
    float got[8];
    /* hip tx: key 0 is the skeleton's local rest x, key 1 as authored */
    cr_assert_eq(kiln_cast_get_curve(p.doc, child(p.doc, anim, KILN_CAST_ID_CURVE, 0), &c, NULL), KILN_OK);
    expect_str(c.node_name, "hip", "nn");
    kiln_cast_array_read_f32(&c.key_values, 0, 2, got);
    cr_expect_eq(got[0], 0.5f);
    cr_expect_eq(got[1], 2.0f);
    /* arm rq: key 0 is the local rest derived from the world rests, conj(hip) * arm = a 90 degree
     * turn about z, on the hemisphere of the value it replaces (w < 0); key 1 as authored */
    cr_assert_eq(kiln_cast_get_curve(p.doc, child(p.doc, anim, KILN_CAST_ID_CURVE, 1), &c, NULL), KILN_OK);
    expect_str(c.node_name, "arm", "nn");
    kiln_cast_array_read_f32(&c.key_values, 0, 2, got);
    const float want0[4] = {0, 0, -0.70710677f, -0.70710677f};
    for (int k = 0; k < 4; k++) cr_expect_float_eq(got[k], want0[k], 1e-6f, "rq key 0 [%d] = %g", k, (double)got[k]);
    SAME_BITS(got + 4, k_bind_rq + 4, 4 * sizeof(float), "rq key 1");

    cr_expect(diag_log_rule(&log, KILN_ERR_IMPORT_BAD_REFERENCE, "V26"), "the ghost bone is reported");
    cr_expect(diag_log_rule(&log, KILN_ERR_IMPORT_BAD_VALUE, "V26"), "the authored hip rest is reported");
    cr_expect_eq(log.count, 2);
    parsed_free(&p);
    kiln_source_scene_free(&model);
    kiln_source_scene_free(&clip);
}
