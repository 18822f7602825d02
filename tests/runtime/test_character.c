/* The character instance (kiln/character.h) against the staged calls it stands for, on the
 * bundled sample character and its walk; the blend of scalar values and visibility tracks
 * against hand-computed values; the argument errors and their detail.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/bake/bake.h"
#include "kiln.h"
#include "test_util.h"

/* ---- the sample character, baked ------------------------------------------------------------ */
typedef struct baked {
    kiln_bake_result res;
    const kiln_blob *blob;
    file_bytes model, walk;
} baked;

static void read_sample(const char *name, file_bytes *f)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/samples/%s", KILN_SOURCE_DIR, name);
    cr_assert(read_file(path, f), "cannot read %s", path);
}

/* The character and the walk twice (two clips of one skeleton), lossless or lossy. */
static void bake_sample(baked *b, uint32_t flags)
{
    memset(b, 0, sizeof *b);
    read_sample("character.cast", &b->model);
    read_sample("character_walk.cast", &b->walk);
    kiln_bake_input in[3] = {{"character.cast", b->model.data, b->model.size, NULL},
                             {"walk.cast", b->walk.data, b->walk.size, NULL},
                             {"walk2.cast", b->walk.data, b->walk.size, NULL}};
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.flags = flags;
    kiln_diag err;
    cr_assert_eq(kiln_bake(in, 3, &o, &b->res, &err), KILN_OK, "bake: %s: %s", err.path, err.message);
    cr_assert_eq(kiln_blob_load(b->res.blob, b->res.size, 0, &b->blob, &err), KILN_OK, "%s", err.message);
}

static void baked_free(baked *b)
{
    kiln_bake_result_free(&b->res);
    file_bytes_free(&b->model);
    file_bytes_free(&b->walk);
}

static void *alloc64(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);
    cr_assert(p);
    memset(p, 0, (n + 63) & ~(size_t)63);
    return p;
}

/* ---- the staged calls, written out as a game would without kiln/character.h ----------------- */
typedef struct staged {
    const kiln_blob *blob;
    uint32_t skel, bones, soa, mesh, verts, nshapes, nclips;
    kiln_anim_binding *bind[2];
    void *ctx[3];
    kiln_soa_xform *layer_pose[3], *pose;
    float scalars[3][16], shape_w[3][8], weights[8], vis[3], *model, *skin, *shaped, *pos, *nrm;
    uint32_t shapes[8], tracks[2][8], vis_track[2];
    void *rig;
    size_t rig_size;
} staged;

static void staged_init(staged *s, const kiln_blob *blob, const uint32_t clips[2])
{
    memset(s, 0, sizeof *s);
    s->blob = blob;
    const kiln_blob_model *m = kiln_blob_models(blob, NULL);
    s->skel = m->skeleton;
    s->bones = kiln_blob_skeletons(blob, NULL)[s->skel].bone_count;
    s->soa = kiln_blob_skeletons(blob, NULL)[s->skel].soa_count;
    s->mesh = m->first_mesh;
    s->verts = kiln_blob_meshes(blob, NULL)[s->mesh].vertex_count;
    s->nshapes = kiln_blob_mesh_blend_shapes(blob, s->mesh, s->shapes, 8);
    cr_assert_leq(s->nshapes, 8u);
    for (int c = 0; c < 2; c++) {
        size_t bs = kiln_anim_binding_size(blob, clips[c], blob, s->skel);
        cr_assert_eq(kiln_anim_bind(blob, clips[c], blob, s->skel, alloc64(bs), bs, &s->bind[c], NULL), KILN_OK);
        cr_assert_eq(kiln_blend_shape_bind_clip(blob, clips[c], blob, s->shapes, s->nshapes, s->tracks[c]), KILN_OK);
        cr_assert_eq(kiln_visibility_bind_clip(blob, clips[c], blob, &s->mesh, 1, &s->vis_track[c]), KILN_OK);
    }
    for (int l = 0; l < 3; l++) {
        size_t cs = kiln_sample_context_size(s->bind[l == 1]);
        s->ctx[l] = alloc64(cs);
        cr_assert_eq(kiln_sample_context_init(s->ctx[l], cs, s->bind[l == 1]), KILN_OK);
        s->layer_pose[l] = alloc64(sizeof(kiln_soa_xform) * s->soa);
    }
    s->pose = alloc64(sizeof(kiln_soa_xform) * s->soa);
    s->model = alloc64(64u * s->bones);
    s->skin = alloc64(64u * s->bones);
    s->shaped = alloc64(12u * s->verts);
    s->pos = alloc64(12u * s->verts);
    s->nrm = alloc64(12u * s->verts);
    s->rig_size = kiln_rig_scratch_size(blob, s->skel);
    s->rig = alloc64(s->rig_size);
}

static void staged_free(staged *s)
{
    for (int c = 0; c < 2; c++) free(s->bind[c]);
    for (int l = 0; l < 3; l++) free(s->ctx[l]), free(s->layer_pose[l]);
    free(s->pose), free(s->model), free(s->skin), free(s->shaped), free(s->pos), free(s->nrm), free(s->rig);
}

/* Layers 0 and 1 blended (clip slots 0 and 1), layer 2 additive (slot 0). */
static void staged_eval(staged *s, const kiln_character_layer ly[3], const float root[16])
{
    for (int l = 0; l < 3; l++) {
        kiln_sample_desc d;
        memset(&d, 0, sizeof d);
        d.binding = s->bind[ly[l].clip];
        d.time_s = ly[l].time_s;
        d.loop = ly[l].loop;
        if (ly[l].additive) kiln_pose_identity(s->layer_pose[l], s->soa), d.base = s->layer_pose[l];
        d.out = s->layer_pose[l];
        d.out_count = s->soa;
        d.context = s->ctx[l];
        d.scalars = s->scalars[l];
        d.scalar_count = 16;
        cr_assert_eq(kiln_sample(&d), KILN_OK);
        uint32_t nsc = kiln_blob_animations(s->blob, NULL)[ly[l].clip].scalar_count;
        kiln_blend_shape_weights(s->tracks[ly[l].clip], s->nshapes, s->scalars[l], nsc, s->shape_w[l]);
        kiln_visibility_values(&s->vis_track[ly[l].clip], 1, s->scalars[l], nsc, &s->vis[l]);
    }
    kiln_blend_layer bl[2] = {{s->layer_pose[0], ly[0].weight, ly[0].joint_weights},
                              {s->layer_pose[1], ly[1].weight, ly[1].joint_weights}};
    uint32_t nrest;
    const kiln_soa_xform *rest = kiln_skeleton_rest_pose(s->blob, s->skel, &nrest);
    cr_assert_eq(nrest, s->soa);
    cr_assert_eq(kiln_pose_blend(bl, 2, rest, KILN_BLEND_THRESHOLD, s->pose, s->soa), KILN_OK);
    cr_assert_eq(kiln_pose_add(s->pose, s->layer_pose[2], ly[2].weight, ly[2].joint_weights, s->soa), KILN_OK);
    kiln_value_layer vl[2] = {{s->shape_w[0], ly[0].weight}, {s->shape_w[1], ly[1].weight}};
    cr_assert_eq(kiln_pose_blend_values(vl, 2, 0.0f, KILN_BLEND_THRESHOLD, s->weights, s->nshapes), KILN_OK);
    float wa = ly[2].weight < 1.0f ? ly[2].weight : 1.0f;
    for (uint32_t i = 0; i < s->nshapes; i++) s->weights[i] += wa * s->shape_w[2][i];
    cr_assert_eq(kiln_pose_local_to_object(s->blob, s->skel, s->pose, root, s->model, s->bones), KILN_OK);
    kiln_rig_desc r;
    memset(&r, 0, sizeof r);
    r.blob = s->blob, r.skeleton = s->skel, r.local = s->pose, r.soa_count = s->soa, r.object = s->model;
    r.bone_count = s->bones, r.root = root, r.scratch = s->rig, r.scratch_size = s->rig_size;
    /* unprepared (the plan derived in the call): the character solves with the plan its init
     * prepared, so the comparisons below also hold prepared against unprepared solves */
    r.prepared = 0;
    cr_assert_eq(kiln_rig_solve(&r), KILN_OK);
    cr_assert_eq(kiln_pose_skin_matrices(s->blob, s->skel, s->model, s->skin, s->bones), KILN_OK);
    kiln_blend_shapes_desc b = {s->blob, s->mesh, s->shapes, s->weights, s->nshapes, s->shaped, 0, s->verts};
    cr_assert_eq(kiln_blend_shapes_apply(&b), KILN_OK);
    kiln_skin_desc k;
    memset(&k, 0, sizeof k);
    k.blob = s->blob, k.mesh = s->mesh, k.skin_matrices = s->skin, k.bone_count = s->bones, k.root = root;
    k.vertex_count = s->verts, k.positions = s->pos, k.normals = s->nrm, k.source_positions = s->shaped;
    cr_assert_eq(kiln_skin_mesh(&k), KILN_OK);
}

static kiln_character *make_character(const kiln_blob *blob, const uint32_t *clips, uint32_t nclips, uint32_t layers,
                                      uint32_t flags, void **mem)
{
    kiln_character_desc d;
    memset(&d, 0, sizeof d);
    d.blob = blob, d.clips = clips, d.clip_count = nclips, d.max_layers = layers, d.flags = flags;
    size_t size = kiln_character_size(&d);
    cr_assert_gt(size, 0u, "%s", kiln_error_detail()->message);
    *mem = alloc64(size);
    kiln_character *ch = NULL;
    cr_assert_eq(kiln_character_init(&d, *mem, size, &ch), KILN_OK, "%s: %s", kiln_error_detail()->path,
                 kiln_error_detail()->message);
    return ch;
}

static void one_call_matches_staged(uint32_t bake_flags)
{
    baked b;
    bake_sample(&b, bake_flags);
    uint32_t nclips;
    kiln_blob_animations(b.blob, &nclips);
    cr_assert_eq(nclips, 2u, "the walk baked twice gives two clips");
    const uint32_t clips[2] = {0, 1};
    staged s;
    staged_init(&s, b.blob, clips);
    void *mem;
    kiln_character *ch = make_character(b.blob, clips, 2, 3, KILN_CHARACTER_VERTICES | KILN_CHARACTER_NORMALS, &mem);
    cr_assert_eq(kiln_character_bone_count(ch), s.bones);
    cr_assert_eq(kiln_character_mesh_count(ch), 1u);

    float mask[64];
    cr_assert_leq(s.soa * 8u, 64u);
    for (uint32_t i = 0; i < 64; i++) mask[i] = (i % 3) ? 1.0f : 0.25f;
    const float root[16] = {0, 0, -1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 2.5f, 0.0f, -1.0f, 1}; /* yaw 90°, moved */
    static const double times[] = {0.0, 0.1, 0.37, 0.5, 0.9833, 1.7, 2.25};
    float max_weight = 0.0f;
    for (size_t k = 0; k < sizeof times / sizeof times[0]; k++) {
        double t = times[k];
        kiln_character_layer ly[3];
        memset(ly, 0, sizeof ly);
        /* every other time the layers add up to less than the threshold: the rest pose fills in */
        float fade = (k % 2) ? 0.1f : 1.0f;
        ly[0].clip = 0, ly[0].time_s = t, ly[0].weight = 0.6f * fade;
        ly[1].clip = 1, ly[1].time_s = 1.3 * t + 0.25, ly[1].weight = 0.4f * fade, ly[1].joint_weights = mask;
        ly[1].loop = KILN_LOOP_WRAP;
        ly[2].clip = 0, ly[2].time_s = t + 0.1, ly[2].weight = 0.5f, ly[2].additive = 1;
        staged_eval(&s, ly, root);
        cr_assert_eq(kiln_character_evaluate(ch, ly, 3, root, NULL), KILN_OK, "%s", kiln_error_detail()->message);
        cr_expect_eq(memcmp(kiln_character_pose(ch), s.pose, sizeof(kiln_soa_xform) * s.soa), 0, "pose at %g", t);
        cr_expect_eq(memcmp(kiln_character_object_matrices(ch), s.model, 64u * s.bones), 0, "model at %g", t);
        cr_expect_eq(memcmp(kiln_character_skin_matrices(ch), s.skin, 64u * s.bones), 0, "skin at %g", t);
        kiln_character_mesh m;
        cr_assert_eq(kiln_character_mesh_get(ch, 0, &m), KILN_OK);
        cr_assert_eq(m.mesh, s.mesh);
        cr_assert_eq(m.vertex_count, s.verts);
        cr_assert(m.positions && m.normals);
        cr_expect_eq(m.visible, 1u, "the walk keeps the body visible");
        cr_assert_eq(m.shape_count, s.nshapes);
        cr_expect_eq(memcmp(m.shape_weights, s.weights, 4u * s.nshapes), 0, "shape weights at %g", t);
        for (uint32_t i = 0; i < m.shape_count; i++) max_weight = fmaxf(max_weight, m.shape_weights[i]);
        cr_expect_eq(memcmp(m.positions, s.pos, 12u * s.verts), 0, "positions at %g", t);
        cr_expect_eq(memcmp(m.normals, s.nrm, 12u * s.verts), 0, "normals at %g", t);
    }
    /* the walk breathes: the blended weight moved away from 0 (not a vacuous match) */
    cr_expect_gt(s.nshapes, 0u);
    cr_expect_gt(max_weight, 0.01f, "chest_breathe weight %g", (double)max_weight);
    cr_expect_gt(kiln_character_rig_report(ch)->ik_solved + kiln_character_rig_report(ch)->constraints_applied, 0u,
                 "the sample's IK handle and constraint ran");
    staged_free(&s);
    free(mem);
    baked_free(&b);
}

/* On every SIMD path this CPU and build have (the character and the staged calls on the same
 * path must agree bit for bit). */
static void on_every_path(uint32_t bake_flags)
{
    static const kiln_simd paths[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        if (kiln_simd_force(paths[i]) != paths[i]) continue;
        one_call_matches_staged(bake_flags);
    }
    kiln_simd_force(KILN_SIMD_AUTO);
}

Test(character, one_call_matches_the_staged_calls_lossless) { on_every_path(0); }
Test(character, one_call_matches_the_staged_calls_lossy) { on_every_path(KILN_BAKE_LOSSY_ANIMATION); }

Test(character, no_layers_give_the_rest_pose)
{
    baked b;
    bake_sample(&b, 0);
    const uint32_t clips[1] = {0};
    void *mem;
    /* without the rig, which would move the IK chain and the constrained head */
    kiln_character *ch = make_character(b.blob, clips, 1, 1, KILN_CHARACTER_NO_RIG, &mem);
    cr_assert_eq(kiln_character_evaluate(ch, NULL, 0, NULL, NULL), KILN_OK);
    cr_expect_eq(kiln_character_rig_report(ch)->ik_solved, 0u);
    uint32_t n;
    const kiln_soa_xform *rest = kiln_skeleton_rest_pose(b.blob, kiln_character_skeleton(ch), &n);
    uint32_t all;
    const kiln_soa_xform *table = kiln_blob_rest_pose(b.blob, &all);
    cr_assert_eq(rest, table + kiln_blob_skeletons(b.blob, NULL)[kiln_character_skeleton(ch)].first_soa);
    cr_assert_eq(n, kiln_character_soa_count(ch));
    const float *p = (const float *)(const void *)kiln_character_pose(ch), *r = (const float *)(const void *)rest;
    for (size_t i = 0; i < (size_t)n * sizeof(kiln_soa_xform) / sizeof(float); i++)
        cr_assert_float_eq(p[i], r[i], 1e-6, "component %zu", i);
    cr_assert_null(kiln_skeleton_rest_pose(b.blob, 99, &n));
    cr_assert_eq(n, 0u);
    free(mem);
    baked_free(&b);
}

Test(character, reports_the_events_passed_since_the_last_call)
{
    baked b;
    bake_sample(&b, 0);
    const uint32_t clips[2] = {0, 1};
    void *mem;
    kiln_character *ch = make_character(b.blob, clips, 2, 2, 0, &mem);
    kiln_character_event out[8];
    kiln_character_events ev = {out, 8, 0};
    kiln_character_layer ly[2];
    memset(ly, 0, sizeof ly);
    ly[0].weight = 1.0f, ly[0].time_s = 0.1;
    ly[1].clip = 1, ly[1].weight = 0.5f, ly[1].time_s = 0.9;
    cr_assert_eq(kiln_character_evaluate(ch, ly, 2, NULL, &ev), KILN_OK);
    cr_expect_eq(ev.count, 0u, "nothing before a previous time exists");
    /* layer 0: 0.1 -> 0.6 s passes footstep_right (frame 15 = 0.5 s); layer 1: 0.9 -> 1.2 s
     * wraps the 1 s loop and passes footstep_left (frame 0) */
    ly[0].time_s = 0.6, ly[1].time_s = 1.2;
    cr_assert_eq(kiln_character_evaluate(ch, ly, 2, NULL, &ev), KILN_OK);
    cr_assert_eq(ev.count, 2u);
    cr_expect_eq(out[0].layer, 0u);
    cr_expect_str_eq(kiln_blob_string(b.blob, out[0].event.name), "footstep_right");
    cr_expect_float_eq(out[0].event.time_s, 0.5, 1e-12);
    cr_expect_eq(out[1].layer, 1u);
    cr_expect_str_eq(kiln_blob_string(b.blob, out[1].event.name), "footstep_left");
    cr_expect_float_eq(out[1].event.time_s, 0.0, 1e-12);
    /* a clip change on a layer restarts its cursor; capacity 1 keeps the count honest */
    ly[0].clip = 1, ly[0].time_s = 0.0, ly[1].time_s = 2.3;
    ev.capacity = 1;
    cr_assert_eq(kiln_character_evaluate(ch, ly, 2, NULL, &ev), KILN_OK);
    cr_expect_eq(ev.count, 2u, "layer 1 passed both footsteps from 1.2 to 2.3 s");
    cr_expect_eq(out[0].layer, 1u);
    free(mem);
    baked_free(&b);
}

Test(character, argument_errors_say_which_argument)
{
    baked b;
    bake_sample(&b, 0);
    const uint32_t clips[1] = {0}, bad_clip[1] = {7};
    kiln_character_desc d;
    memset(&d, 0, sizeof d);
    d.blob = b.blob, d.clips = clips, d.clip_count = 1, d.max_layers = 1;
    size_t size = kiln_character_size(&d);
    unsigned char *mem = alloc64(size + 64);
    kiln_character *ch;
    cr_expect_eq(kiln_character_init(&d, mem + 16, size, &ch), KILN_ERR_BLOB_MISALIGNED);
    cr_expect_null(ch);
    cr_expect_str_eq(kiln_error_detail()->path, "kiln_character_init: mem");
    cr_expect_eq(kiln_character_init(&d, mem, size - 1, &ch), KILN_ERR_BUFFER_TOO_SMALL);
    cr_expect_str_eq(kiln_error_detail()->path, "kiln_character_init: size");
    d.clips = bad_clip;
    cr_expect_eq(kiln_character_size(&d), 0u);
    cr_expect_eq(kiln_error_detail()->code, KILN_ERR_INVALID_ARGUMENT);
    cr_expect_str_eq(kiln_error_detail()->path, "kiln_character_init: desc->clips");
    cr_expect(strstr(kiln_error_detail()->message, "clip 7") != NULL, "%s", kiln_error_detail()->message);
    d.clips = clips, d.max_layers = 0;
    cr_expect_eq(kiln_character_size(&d), 0u);
    cr_expect_str_eq(kiln_error_detail()->path, "kiln_character_init: desc->max_layers");
    d.max_layers = 1;
    cr_assert_eq(kiln_character_init(&d, mem, size, &ch), KILN_OK);
    kiln_character_layer ly[2];
    memset(ly, 0, sizeof ly);
    cr_expect_eq(kiln_character_evaluate(ch, ly, 2, NULL, NULL), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_str_eq(kiln_error_detail()->path, "kiln_character_evaluate: layer_count");
    ly[0].clip = 1;
    cr_expect_eq(kiln_character_evaluate(ch, ly, 1, NULL, NULL), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_str_eq(kiln_error_detail()->path, "kiln_character_evaluate: layers[].clip");
    /* a success leaves the detail of the last failure alone */
    ly[0].clip = 0;
    cr_expect_eq(kiln_character_evaluate(ch, ly, 1, NULL, NULL), KILN_OK);
    cr_expect_str_eq(kiln_error_detail()->path, "kiln_character_evaluate: layers[].clip");
    free(mem);
    baked_free(&b);
}
