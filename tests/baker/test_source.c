/* The source layer: its arena, kiln_source_validate (every rule can fail), importer detection
 * and kiln_source_import, and the Cast importer on corpus files (expectations from the
 * corpus MANIFEST). */
#include <math.h>

#include "kiln/bake/bake.h"
#include "kiln/bake/source.h"
#include "test_util.h"

/* ---- arena ---------------------------------------------------------------------------------- */

Test(source_arena, zeroed_aligned_and_freed_at_once)
{
    counting_alloc ca;
    memset(&ca, 0, sizeof ca);
    ca.fail_at = -1;
    kiln_allocator a = counting_allocator(&ca);
    kiln_source_scene s;
    kiln_source_scene_init(&s, &a);
    for (int i = 0; i < 100; i++) {
        unsigned char *p = kiln_source_alloc(&s, (uint64_t)i * 37 + 1, 3);
        cr_assert_not_null(p);
        cr_assert_eq((uintptr_t)p % _Alignof(max_align_t), 0);
        for (int k = 0; k < i * 37 + 1; k++) cr_assert_eq(p[k * 3], 0);
        memset(p, 0xAB, (size_t)(i * 37 + 1) * 3);
    }
    void *big = kiln_source_alloc(&s, 1u << 20, 1); /* its own block */
    cr_assert_not_null(big);
    cr_assert_null(kiln_source_alloc(&s, UINT64_MAX / 2, 4), "an overflowing count is refused");
    cr_assert_str_eq(kiln_source_strdup(&s, "bone"), "bone");
    cr_assert_null(kiln_source_strdup(&s, NULL));
    cr_assert_str_eq(kiln_source_strndup(&s, "abcdef", 3), "abc");
    cr_assert_str_eq(kiln_source_strndup(&s, "ab\0cd", 5), "ab");
    cr_assert_str_eq(kiln_source_strfmt(&s, "Root[%d]/Model[%u]", 0, 7u), "Root[0]/Model[7]");
    cr_assert(ca.live > 0);
    kiln_source_scene_free(&s);
    cr_assert_eq(ca.live, 0, "every block returned");
    cr_assert_null(s.blocks);
}

/* ---- validate --------------------------------------------------------------------------------- */

/* A small consistent scene: one model with a 3-bone chain, an IK handle, a constraint, one
 * material with a file slot, a skinned triangle, a hair, a blend shape; an instance; a clip. */
typedef struct fixture {
    kiln_source_scene   s;
    kiln_source_model  *m;
    kiln_source_skeleton *sk;
    kiln_source_animation *anim;
} fixture;

static kiln_source_loc loc_of(kiln_source_scene *s, const char *path, uint64_t offset)
{
    kiln_source_loc l = {kiln_source_strdup(s, path), offset, 0};
    return l;
}

static void fixture_init(fixture *f)
{
    kiln_source_scene *s = &f->s;
    kiln_source_scene_init(s, NULL);
    s->model_count = 1;
    s->models = kiln_source_alloc(s, 1, sizeof *s->models);
    kiln_source_model *m = f->m = &s->models[0];
    m->loc = loc_of(s, "model", 10);
    m->rotation[3] = 1;
    m->scale[0] = m->scale[1] = m->scale[2] = 1;
    kiln_source_skeleton *sk = f->sk = m->skeleton = kiln_source_alloc(s, 1, sizeof *sk);
    sk->bone_count = 3;
    sk->bones = kiln_source_alloc(s, 3, sizeof *sk->bones);
    for (int i = 0; i < 3; i++) {
        sk->bones[i].loc = loc_of(s, i == 0 ? "bone0" : i == 1 ? "bone1" : "bone2", 100u + (unsigned)i);
        sk->bones[i].parent = i - 1;
        sk->bones[i].local_rotation[3] = sk->bones[i].world_rotation[3] = 1;
        sk->bones[i].scale[0] = sk->bones[i].scale[1] = sk->bones[i].scale[2] = 1;
    }
    sk->ik_handle_count = 1;
    sk->ik_handles = kiln_source_alloc(s, 1, sizeof *sk->ik_handles);
    sk->ik_handles[0] = (kiln_source_ik_handle){loc_of(s, "ik", 200), "leg", 0, 2, -1, -1, -1, {0, 0, 0}, 0};
    sk->constraint_count = 1;
    sk->constraints = kiln_source_alloc(s, 1, sizeof *sk->constraints);
    sk->constraints[0].loc = loc_of(s, "cnst", 300);
    sk->constraints[0].constrained_bone = 2;
    sk->constraints[0].target_bone = 0;
    sk->constraints[0].weight = 1;
    m->material_count = 1;
    m->materials = kiln_source_alloc(s, 1, sizeof *m->materials);
    m->materials[0].loc = loc_of(s, "mat", 400);
    m->materials[0].slot_count = 1;
    m->materials[0].slots = kiln_source_alloc(s, 1, sizeof *m->materials[0].slots);
    m->materials[0].slots[0] = (kiln_source_material_slot){loc_of(s, "slot", 410), "albedo", KILN_SOURCE_SLOT_FILE,
                                                           "a.png", {0, 0, 0, 0}, KILN_SOURCE_COLOR_SRGB};
    static const float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    static const uint32_t faces[3] = {0, 1, 2}, bones[3] = {0, 1, 2};
    m->mesh_count = 1;
    m->meshes = kiln_source_alloc(s, 1, sizeof *m->meshes);
    kiln_source_mesh *me = &m->meshes[0];
    me->loc = loc_of(s, "mesh", 500);
    me->vertex_count = 3;
    me->face_count = 1;
    me->positions = pos;
    me->faces = faces;
    me->max_influence = 1;
    me->weight_bones = bones;
    me->material = 0;
    static const uint32_t segments[2] = {1, 2};
    static const float particles[15] = {0};
    m->hair_count = 1;
    m->hairs = kiln_source_alloc(s, 1, sizeof *m->hairs);
    m->hairs[0] = (kiln_source_hair){loc_of(s, "hair", 600), NULL, 2, 5, segments, particles, KILN_SOURCE_NONE};
    static const uint32_t vi[1] = {1};
    static const float vp[3] = {1, 1, 0};
    m->blend_shape_count = 1;
    m->blend_shapes = kiln_source_alloc(s, 1, sizeof *m->blend_shapes);
    m->blend_shapes[0] = (kiln_source_blend_shape){loc_of(s, "shape", 700), "smile", 0, 1, vi, vp, 1.0f};
    s->instance_count = 1;
    s->instances = kiln_source_alloc(s, 1, sizeof *s->instances);
    s->instances[0].loc = loc_of(s, "inst", 800);
    s->instances[0].path = "tri_mesh.cast";
    s->instances[0].rotation[3] = 1;
    s->animation_count = 1;
    s->animations = kiln_source_alloc(s, 1, sizeof *s->animations);
    kiln_source_animation *an = f->anim = &s->animations[0];
    an->loc = loc_of(s, "anim", 900);
    an->framerate = 30;
    static const uint32_t frames[2] = {0, 10};
    static const float values[8] = {0, 0, 0, 1, 0, 0, 0, 1};
    an->curve_count = 1;
    an->curves = kiln_source_alloc(s, 1, sizeof *an->curves);
    an->curves[0] = (kiln_source_curve){loc_of(s, "curve", 910), "bone1", KILN_SOURCE_CHANNEL_ROTATION,
                                        KILN_SOURCE_ABSOLUTE, 1, 2, frames, values, NULL};
    an->authored_rest_count = 1;
    an->authored_rest = kiln_source_alloc(s, 1, sizeof *an->authored_rest);
    an->authored_rest[0] = (kiln_source_rest_bone){loc_of(s, "rest", 920), "bone1", {0, 1, 0}, {0, 0, 0, 1}, {1, 1, 1}};
    an->bind_rule = "V26";
}

/* Validates f, expecting failure at `path` with `offset`; frees f. */
static void expect_invalid(fixture *f, const char *path, uint64_t offset)
{
    kiln_diag err;
    memset(&err, 0, sizeof err);
    kiln_result r = kiln_source_validate(&f->s, &err);
    cr_assert_eq(r, KILN_ERR_SOURCE_INVALID, "%s: got %s", path, kiln_result_str(r));
    cr_assert_str_eq(err.path, path);
    cr_assert_eq(err.offset, offset, "%s: offset %llu", path, (unsigned long long)err.offset);
    cr_assert_eq(err.severity, KILN_SEVERITY_ERROR);
    cr_assert(strstr(err.message, kiln_result_str(KILN_ERR_SOURCE_INVALID)) == err.message, "%s", err.message);
    kiln_source_scene_free(&f->s);
}

Test(source_validate, consistent_scene_passes)
{
    fixture f;
    fixture_init(&f);
    kiln_diag err;
    cr_assert_eq(kiln_source_validate(&f.s, &err), KILN_OK, "%s %s", err.path, err.message);
    kiln_source_scene_free(&f.s);
}

Test(source_validate, each_rule_fails)
{
    fixture f;
#define CASE(mutation, path, offset) \
    fixture_init(&f);                \
    mutation;                        \
    expect_invalid(&f, path, offset);
    CASE(f.s.model_count = 2; f.s.models = NULL, "", KILN_NO_OFFSET)
    CASE(f.sk->bones[1].parent = 3, "bone1.parent", 101)
    CASE(f.sk->bones[1].parent = 1, "bone1.parent", 101)
    CASE(f.sk->bones[1].parent = -2, "bone1.parent", 101)
    CASE(f.sk->bones[0].parent = 2, "bone0.parent", 100) /* 0 -> 2 -> 1 -> 0 */
    CASE(f.sk->bones[2].local_position[1] = NAN, "bone2", 102)
    CASE(f.sk->bones[2].world_rotation[0] = INFINITY, "bone2", 102)
    CASE(f.sk->bone_count = 4; f.sk->bones = NULL, "", 0)
    CASE(f.sk->ik_handles[0].end_bone = 3, "ik", 200)
    CASE(f.sk->ik_handles[0].start_bone = -1, "ik", 200)
    CASE(f.sk->ik_handles[0].pole_bone = 5, "ik", 200)
    CASE(f.sk->ik_handles[0].target_offset[2] = NAN, "ik.target_offset", 200)
    CASE(f.sk->constraints[0].target_bone = 3, "cnst", 300)
    CASE(f.sk->constraints[0].type = (kiln_source_constraint_type)7, "cnst.type", 300)
    CASE(f.sk->constraints[0].weight = NAN, "cnst", 300)
    CASE(f.m->position[0] = NAN, "model", 10)
    CASE(f.m->materials[0].slots[0].path = NULL, "slot.path", 410)
    CASE(f.m->materials[0].slots[0].name = NULL, "slot.name", 410)
    CASE(f.m->materials[0].slot_count = 2; f.m->materials[0].slots = NULL, "mat", 400)
    CASE(f.m->meshes[0].material = 1, "mesh.material", 500)
    CASE(f.m->meshes[0].positions = NULL, "mesh.positions", 500)
    CASE(f.m->meshes[0].faces = NULL, "mesh", 500)
    CASE(f.m->meshes[0].uv_layer_count = KILN_SOURCE_MAX_LAYERS + 1, "mesh.uv_layer_count", 500)
    CASE(f.m->meshes[0].color_layer_count = KILN_SOURCE_MAX_LAYERS + 1, "mesh.color_layer_count", 500)
    CASE(f.m->meshes[0].max_influence = KILN_SOURCE_MAX_INFLUENCES + 1, "mesh.max_influence", 500)
    CASE(f.m->meshes[0].max_influence = 2, "mesh.weight_values", 500)
    CASE(f.m->meshes[0].weight_bones = NULL, "mesh.weight_bones", 500)
    CASE(f.m->meshes[0].skinning = (kiln_source_skinning)9, "mesh.skinning", 500)
    CASE(f.m->hairs[0].particle_count = 6, "hair.segments", 600)
    CASE(f.m->hairs[0].material = 1, "hair.material", 600)
    CASE(f.m->hairs[0].segments = NULL, "hair", 600)
    CASE(f.m->blend_shapes[0].mesh = 1, "shape.mesh", 700)
    CASE(f.m->blend_shapes[0].target_scale = 0, "shape.target_scale", 700)
    CASE(f.m->blend_shapes[0].targets = NULL, "shape", 700)
    CASE(f.s.instances[0].path = NULL, "inst.path", 800)
    CASE(f.s.instances[0].scale[1] = NAN, "inst", 800)
    CASE(f.anim->framerate = 0, "anim.framerate", 900)
    CASE(f.anim->framerate = NAN, "anim.framerate", 900)
    CASE(f.anim->curves[0].values = NULL, "curve", 910)
    CASE(f.anim->curves[0].target = NULL, "curve.target", 910)
    CASE(f.anim->curves[0].channel = KILN_SOURCE_CHANNEL_COUNT_, "curve.channel", 910)
    CASE(f.anim->curves[0].mode = (kiln_source_mode)3, "curve.mode", 910)
    CASE(f.anim->authored_rest = NULL, "anim", 900)
    CASE(f.anim->authored_rest[0].name = NULL, "rest.name", 920)
    CASE(f.anim->authored_rest[0].rotation[3] = NAN, "rest", 920)
    CASE(f.anim->bind_rule = "a rule name longer than a diag holds", "anim.bind_rule", 900)
    CASE(f.s.metadata.up_axis = (kiln_source_up_axis)4; f.s.metadata.loc.offset = 5, "up_axis", 5)
#undef CASE
}

Test(source_validate, long_chain_is_linear_and_valid)
{
    kiln_source_scene s;
    kiln_source_scene_init(&s, NULL);
    kiln_source_skeleton sk;
    memset(&sk, 0, sizeof sk);
    sk.bone_count = 200000;
    sk.bones = kiln_source_alloc(&s, sk.bone_count, sizeof *sk.bones);
    for (uint32_t i = 0; i < sk.bone_count; i++) sk.bones[i].parent = (int32_t)i - 1;
    kiln_source_model m;
    memset(&m, 0, sizeof m);
    m.skeleton = &sk;
    s.models = &m;
    s.model_count = 1;
    cr_assert_eq(kiln_source_validate(&s, NULL), KILN_OK);
    sk.bones[0].parent = (int32_t)sk.bone_count - 1; /* one big cycle */
    cr_assert_eq(kiln_source_validate(&s, NULL), KILN_ERR_SOURCE_INVALID);
    kiln_source_scene_free(&s);
}

Test(source_names, channels_and_modes)
{
    cr_assert_str_eq(kiln_source_channel_name(KILN_SOURCE_CHANNEL_ROTATION), "rq");
    cr_assert_str_eq(kiln_source_channel_name(KILN_SOURCE_CHANNEL_SZ), "sz");
    cr_assert_str_eq(kiln_source_channel_name(KILN_SOURCE_CHANNEL_VISIBILITY), "vb");
    cr_assert_str_eq(kiln_source_channel_name(KILN_SOURCE_CHANNEL_COUNT_), "?");
    cr_assert_str_eq(kiln_source_mode_name(KILN_SOURCE_ADDITIVE), "additive");
    cr_assert_str_eq(kiln_source_mode_name((kiln_source_mode)5), "?");
}

/* ---- importers ------------------------------------------------------------------------------ */

Test(source_import, detect_by_bytes_not_names)
{
    cr_assert_geq(kiln_importer_count(), 1);
    const kiln_importer *cast = kiln_importer_find("cast");
    cr_assert_not_null(cast);
    cr_assert_not_null(cast->description);
    cr_assert_null(kiln_importer_find("nope"));
    cr_assert_null(kiln_importer_find(NULL));
    cr_assert_null(kiln_importer_at(kiln_importer_count()));
    cr_assert_eq(kiln_importer_detect("cast\1\0\0\0", 8), cast);
    cr_assert_null(kiln_importer_detect("cas", 3));
    cr_assert_null(kiln_importer_detect("\x89PNG\r\n\x1a\n", 8));
    cr_assert_null(kiln_importer_detect(NULL, 0));
}

Test(source_import, unknown_input_names_the_formats)
{
    kiln_source_scene s;
    kiln_diag err;
    kiln_result r = kiln_source_import("GIF89a..", 8, "x.cast", NULL, NULL, &s, &err);
    cr_assert_eq(r, KILN_ERR_FORMAT_UNKNOWN);
    cr_assert_str_eq(err.path, "x.cast");
    cr_assert(strstr(err.message, "cast") != NULL, "%s", err.message);
    r = kiln_source_import("cast", 4, "y", "gltf", NULL, &s, &err);
    cr_assert_eq(r, KILN_ERR_FORMAT_UNKNOWN);
    cr_assert(strstr(err.message, "'gltf'") && strstr(err.message, "cast"), "%s", err.message);
    cr_assert_null(s.blocks);
}

Test(source_import, cast_failure_frees_the_scene)
{
    counting_alloc ca;
    memset(&ca, 0, sizeof ca);
    ca.fail_at = -1;
    kiln_allocator a = counting_allocator(&ca);
    kiln_import_options o;
    memset(&o, 0, sizeof o);
    o.allocator = &a;
    kiln_source_scene s;
    kiln_diag err;
    static const unsigned char bad[] = {'c', 'a', 's', 't', 9, 9, 9, 9};
    cr_assert_neq(kiln_source_import(bad, sizeof bad, "bad.cast", NULL, &o, &s, &err), KILN_OK);
    cr_assert_eq(ca.live, 0);
}

static void import_corpus(const char *name, kiln_source_scene *s)
{
    char dir[1024];
    corpus_dir_or_skip(dir, sizeof dir);
    file_bytes f;
    cr_assert(corpus_read(dir, name, &f), "cannot read %s", name);
    kiln_diag err;
    kiln_result r = kiln_source_import(f.data, f.size, name, NULL, NULL, s, &err);
    file_bytes_free(&f); /* the scene holds copies */
    cr_assert_eq(r, KILN_OK, "%s: %s %s", name, err.path, err.message);
    cr_assert_str_eq(s->format, "cast");
}

Test(source_cast, mesh_attributes)
{
    kiln_source_scene s;
    import_corpus("mesh_attributes.cast", &s);
    cr_assert_eq(s.metadata.up_axis, KILN_SOURCE_UP_Z);
    cr_assert_eq(s.model_count, 1);
    const kiln_source_model *m = &s.models[0];
    cr_assert_float_eq(m->position[2], 3.0f, 1e-6);
    cr_assert_float_eq(m->scale[0], 2.0f, 1e-6);
    cr_assert_null(m->skeleton);
    cr_assert_eq(m->material_count, 1);
    cr_assert_str_eq(m->materials[0].type, "pbr");
    cr_assert_eq(m->materials[0].slot_count, 6);
    uint32_t files = 0, colors = 0;
    for (uint32_t i = 0; i < 6; i++) {
        files += m->materials[0].slots[i].kind == KILN_SOURCE_SLOT_FILE;
        colors += m->materials[0].slots[i].kind == KILN_SOURCE_SLOT_COLOR;
        if (!strcmp(m->materials[0].slots[i].name, "emissive"))
            cr_assert_eq(m->materials[0].slots[i].color_space, KILN_SOURCE_COLOR_LINEAR);
    }
    cr_assert_eq(files, 4);
    cr_assert_eq(colors, 2);
    cr_assert_eq(m->mesh_count, 2);
    const kiln_source_mesh *q = &m->meshes[0];
    cr_assert_eq(q->vertex_count, 4);
    cr_assert_eq(q->face_count, 2);
    cr_assert_not_null(q->normals);
    cr_assert_eq(q->uv_layer_count, 2);
    cr_assert_not_null(q->uv[1]);
    cr_assert_eq(q->color_layer_count, 2);
    cr_assert_eq(q->color[0].rgba8[0], 0xFF0000FFu);
    cr_assert_not_null(q->color[1].rgba);
    cr_assert_eq(q->material, 0);
    cr_assert_eq(q->max_influence, 0);
    cr_assert(strstr(q->loc.path, "Mesh[0]") != NULL, "%s", q->loc.path);
    cr_assert_neq(q->loc.offset, KILN_NO_OFFSET);
    cr_assert_gt(q->loc.size, 0);
    cr_assert_eq(m->meshes[1].color_layer_count, 1, "legacy vc reads as one layer");
    cr_assert_eq(m->hair_count, 1);
    cr_assert_eq(m->hairs[0].strand_count, 2);
    cr_assert_eq(m->hairs[0].particle_count, 7);
    cr_assert_eq(m->hairs[0].segments[0], 2);
    cr_assert_eq(m->hairs[0].segments[1], 3);
    kiln_source_scene_free(&s);
}

Test(source_cast, skeleton_rig_and_shapes)
{
    kiln_source_scene s;
    import_corpus("skel_chain3_local.cast", &s);
    const kiln_source_skeleton *sk = s.models[0].skeleton;
    cr_assert_not_null(sk);
    cr_assert_eq(sk->bone_count, 3);
    cr_assert_eq(sk->bones[0].parent, -1);
    cr_assert_eq(sk->bones[1].parent, 0);
    cr_assert_eq(sk->bones[2].parent, 1);
    cr_assert_float_eq(sk->bones[1].local_position[0], 1.0f, 1e-6);
    cr_assert_float_eq(sk->bones[2].local_position[1], 2.0f, 1e-6);
    kiln_source_scene_free(&s);

    import_corpus("ik_polevec_model.cast", &s);
    sk = s.models[0].skeleton;
    cr_assert_eq(sk->bone_count, 6);
    cr_assert_eq(sk->ik_handle_count, 1);
    cr_assert_geq(sk->ik_handles[0].pole_vector_bone, 0);
    cr_assert_eq(sk->ik_handles[0].pole_bone, -1);
    cr_assert_eq(sk->ik_handles[0].use_target_rotation, 1);
    kiln_source_scene_free(&s);

    import_corpus("constraints_model.cast", &s);
    cr_assert_eq(s.models[0].skeleton->constraint_count, 7);
    kiln_source_scene_free(&s);

    import_corpus("blendshape_model.cast", &s);
    const kiln_source_model *m = &s.models[0];
    cr_assert_eq(m->blend_shape_count, 3);
    cr_assert_float_eq(m->blend_shapes[1].target_scale, 2.0f, 1e-6);
    cr_assert_float_eq(m->blend_shapes[2].target_scale, 1.0f, 1e-6);
    cr_assert_eq(m->blend_shapes[0].mesh, 0);
    cr_assert_eq(m->meshes[0].vertex_count, 25);
    cr_assert_eq(m->meshes[0].max_influence, 1);
    kiln_source_scene_free(&s);
}

Test(source_cast, instances_and_animation)
{
    kiln_source_scene s;
    import_corpus("instances_small.cast", &s);
    cr_assert_eq(s.instance_count, 6);
    cr_assert_eq(s.metadata.up_axis, KILN_SOURCE_UP_Y);
    cr_assert_str_eq(s.metadata.scene_root, ".");
    cr_assert_eq(s.model_count, 0);
    kiln_source_scene_free(&s);

    import_corpus("anim_abs_all.cast", &s);
    cr_assert_eq(s.animation_count, 1);
    const kiln_source_animation *a = &s.animations[0];
    cr_assert_eq(a->curve_count, 35);
    cr_assert_gt(a->framerate, 0.0f);
    uint32_t rq = 0;
    for (uint32_t i = 0; i < a->curve_count; i++) {
        cr_assert_eq(a->curves[i].key_count, 11, "keys every 3 frames 0..30");
        cr_assert_eq(a->curves[i].frames[10], 30);
        cr_assert_eq(a->curves[i].mode, KILN_SOURCE_ABSOLUTE);
        rq += a->curves[i].channel == KILN_SOURCE_CHANNEL_ROTATION;
    }
    cr_assert_eq(rq, 5);
    kiln_source_scene_free(&s);
}

/* Every good corpus file imports and validates; the bad ones fail cleanly or import (the Cast
 * reader repairs many), never crash, and never leak. */
Test(source_cast, every_good_corpus_file_imports, .timeout = 120)
{
    char dir[1024];
    corpus_dir_or_skip(dir, sizeof dir);
    char **names;
    size_t count = corpus_list(dir, &names);
    cr_assert_gt(count, 10);
    for (size_t i = 0; i < count; i++) {
        file_bytes f;
        cr_assert(corpus_read(dir, names[i], &f));
        kiln_source_scene s;
        kiln_diag err;
        kiln_result r = kiln_source_import(f.data, f.size, names[i], NULL, NULL, &s, &err);
        cr_assert_eq(r, KILN_OK, "%s: %s %s", names[i], err.path, err.message);
        cr_assert_gt(s.model_count + s.instance_count + s.animation_count, 0, "%s", names[i]);
        kiln_source_scene_free(&s);
        file_bytes_free(&f);
    }
    corpus_list_free(names, count);
}

/* ---- the job: import, then bake ------------------------------------------------------------- */

/* Bakes `count` corpus files into *out (free with free()); `format` is every input's format
 * field (NULL: found from the bytes). */
static int bake_files(const char *dir, const char *const *names, uint32_t count, const char *format, file_bytes *out,
                      kiln_bake_stats *stats)
{
    file_bytes f[2];
    kiln_bake_input in[2];
    for (uint32_t i = 0; i < count; i++) {
        cr_assert(corpus_read(dir, names[i], &f[i]));
        in[i] = (kiln_bake_input){names[i], f[i].data, f[i].size, format};
    }
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    kiln_bake_result res;
    kiln_diag err;
    kiln_result r = kiln_bake(in, count, &o, &res, &err);
    for (uint32_t i = 0; i < count; i++) file_bytes_free(&f[i]);
    cr_assert_eq(r, KILN_OK, "%s: %s %s", names[0], err.path, err.message);
    out->size = res.size;
    out->data = malloc(res.size);
    memcpy(out->data, res.blob, res.size);
    *stats = res.stats;
    kiln_bake_result_free(&res);
    return 1;
}

/* Every good corpus file, alone and the animation cases with their model: naming the format
 * ("cast") bakes the same blob and statistics as finding it from the leading bytes. */
Test(source_walk, named_format_same_as_detected, .timeout = 300)
{
    char dir[1024];
    corpus_dir_or_skip(dir, sizeof dir);
    char **names;
    size_t count = corpus_list(dir, &names);
    for (size_t i = 0; i <= count; i++) {
        const char *pair[2] = {i < count ? names[i] : "anim_rig_model.cast", "anim_abs_all.cast"};
        uint32_t n = i < count ? 1 : 2;
        if (i < count && strncmp(names[i], "bench/", 6) == 0) continue; /* large; covered by the reference blobs */
        file_bytes a, b;
        kiln_bake_stats sa, sb;
        bake_files(dir, pair, n, NULL, &a, &sa);
        bake_files(dir, pair, n, "cast", &b, &sb);
        cr_assert_eq(a.size, b.size, "%s: %zu bytes, %zu with the format named", pair[0], a.size, b.size);
        cr_assert_eq(memcmp(a.data, b.data, a.size), 0, "%s: the blobs differ", pair[0]);
        cr_assert_eq(sa.warnings, sb.warnings, "%s", pair[0]);
        cr_assert_eq(sa.errors, sb.errors, "%s", pair[0]);
        free(a.data);
        free(b.data);
    }
    corpus_list_free(names, count);
}

/* Bytes no importer reads: kiln_bake fails with ERR_FORMAT_UNKNOWN naming the formats this
 * build reads (the Cast reader is not asked for its view of them). */
Test(source_walk, unknown_bytes_fail_naming_the_formats)
{
    static const char png[] = "\x89PNG\r\n\x1a\n0000";
    kiln_bake_input in = {"pic.cast", png, sizeof png - 1, NULL};
    kiln_bake_result res;
    kiln_diag err;
    kiln_result r = kiln_bake(&in, 1, NULL, &res, &err);
    cr_assert_eq(r, KILN_ERR_FORMAT_UNKNOWN, "%s", kiln_result_str(r));
    cr_assert_str_eq(err.path, "pic.cast");
    cr_assert(strstr(err.message, "cast") && strstr(err.message, "match none"), "%s", err.message);
    in.format = "gltf";
    in.data = "cast\1\0\0\0";
    in.size = 8;
    r = kiln_bake(&in, 1, NULL, &res, &err);
    cr_assert_eq(r, KILN_ERR_FORMAT_UNKNOWN);
    cr_assert(strstr(err.message, "'gltf'"), "%s", err.message);
}

typedef struct report_log {
    uint32_t count;
    kiln_diag items[16];
} report_log;

static void report_sink(void *user, const kiln_diag *d)
{
    report_log *l = user;
    if (l->count < 16) l->items[l->count] = *d;
    l->count++;
}

/* What the Cast importer drops is reported once, in file order, as the node walk did: an empty
 * mesh (its accessor's warning, no second "dropped"), an empty skeleton (before the mesh),
 * a node its accessor failed silently ("Mesh dropped"). */
Test(source_walk, cast_drops_reported_once_in_file_order)
{
    char dir[1024];
    corpus_dir_or_skip(dir, sizeof dir);
    static const struct {
        const char *file;
        uint32_t    count, errors;
        const char *first_path, *last_message;
    } cases[] = {
        {"bad/zero_length_arrays.cast", 4, 0, "zero_length_arrays.cast:Root[0]/Model[0]/Skeleton[0]",
         "baked as an empty clip"},
        {"bad/unknown_prop_type.cast", 2, 2, "unknown_prop_type.cast:Root[0]/Model[0]/Mesh[0].xx", "Mesh dropped"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        file_bytes f;
        cr_assert(corpus_read(dir, cases[i].file, &f));
        kiln_bake_input in = {cases[i].file + 4, f.data, f.size, NULL};
        report_log log;
        memset(&log, 0, sizeof log);
        kiln_bake_options o;
        memset(&o, 0, sizeof o);
        o.diag.fn = report_sink;
        o.diag.user = &log;
        kiln_bake_result res;
        kiln_diag err;
        cr_assert_eq(kiln_bake(&in, 1, &o, &res, &err), KILN_OK, "%s: %s", cases[i].file, err.message);
        cr_expect_eq(log.count, cases[i].count, "%s: %u reports", cases[i].file, log.count);
        cr_expect_eq(res.stats.errors, cases[i].errors, "%s", cases[i].file);
        cr_expect_str_eq(log.items[0].path, cases[i].first_path, "%s", cases[i].file);
        const char *last = log.items[(log.count < 16 ? log.count : 16) - 1].message;
        size_t n = strlen(last), m = strlen(cases[i].last_message);
        cr_expect(n >= m && strcmp(last + n - m, cases[i].last_message) == 0, "%s: last report '%s'", cases[i].file, last);
        kiln_bake_result_free(&res);
        file_bytes_free(&f);
    }
}
