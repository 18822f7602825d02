/* Blending scalar values (blend shape weights, visibility) as poses blend, visibility tracks
 * bound to meshes by name, and a skeleton's rest pose: hand-computed values and the bundled
 * sample character with its walk.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/bake/bake.h"
#include "kiln.h"
#include "test_util.h"

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

static void bake_sample(baked *b)
{
    memset(b, 0, sizeof *b);
    read_sample("character.cast", &b->model);
    read_sample("character_walk.cast", &b->walk);
    kiln_bake_input in[2] = {{"character.cast", b->model.data, b->model.size, NULL},
                             {"walk.cast", b->walk.data, b->walk.size, NULL}};
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    kiln_diag err;
    cr_assert_eq(kiln_bake(in, 2, &o, &b->res, &err), KILN_OK, "bake: %s: %s", err.path, err.message);
    cr_assert_eq(kiln_blob_load(b->res.blob, b->res.size, 0, &b->blob, &err), KILN_OK, "%s", err.message);
}

static void baked_free(baked *b)
{
    kiln_bake_result_free(&b->res);
    file_bytes_free(&b->model);
    file_bytes_free(&b->walk);
}

Test(skeleton, rest_pose_is_the_skeletons_range_of_the_rest_table)
{
    baked b;
    bake_sample(&b);
    uint32_t n, all;
    const kiln_soa_xform *rest = kiln_skeleton_rest_pose(b.blob, 0, &n);
    const kiln_soa_xform *table = kiln_blob_rest_pose(b.blob, &all);
    const kiln_blob_skeleton *sk = kiln_blob_skeletons(b.blob, NULL);
    cr_assert_eq(rest, table + sk->first_soa);
    cr_assert_eq(n, 1u, "8 bones: one block");
    cr_expect_float_eq(rest->ty[1], 0.95f, 1e-6, "the pelvis sits 0.95 above the root");
    cr_assert_null(kiln_skeleton_rest_pose(b.blob, 99, &n));
    cr_assert_eq(n, 0u);
    cr_assert_null(kiln_skeleton_rest_pose(NULL, 0, NULL));
    baked_free(&b);
}

/* ---- blending values and visibility tracks ---------------------------------------------------- */
Test(pose_blend_values, weighted_mean_with_the_rest_filling_the_threshold)
{
    const float a[3] = {1.0f, 0.0f, 0.5f}, bv[3] = {0.0f, 1.0f, 0.5f};
    kiln_value_layer l[2] = {{a, 0.3f}, {bv, 0.1f}};
    float out[3];
    cr_assert_eq(kiln_pose_blend_values(l, 2, 0.0f, KILN_BLEND_THRESHOLD, out, 3), KILN_OK);
    cr_expect_float_eq(out[0], 0.75f, 1e-7);
    cr_expect_float_eq(out[1], 0.25f, 1e-7);
    cr_expect_float_eq(out[2], 0.5f, 1e-7);
    /* one layer at 0.05 < 0.1: the rest value fills the other 0.05 */
    l[0].weight = 0.05f;
    cr_assert_eq(kiln_pose_blend_values(l, 1, 1.0f, KILN_BLEND_THRESHOLD, out, 3), KILN_OK);
    cr_expect_float_eq(out[0], 1.0f, 1e-7);
    cr_expect_float_eq(out[1], 0.5f, 1e-7);
    cr_expect_float_eq(out[2], 0.75f, 1e-7);
    /* NaN and negative weights are ignored; no layers give the rest value */
    l[0].weight = NAN, l[1].weight = -1.0f;
    cr_assert_eq(kiln_pose_blend_values(l, 2, 0.25f, KILN_BLEND_THRESHOLD, out, 3), KILN_OK);
    cr_expect_float_eq(out[1], 0.25f, 1e-7);
    cr_expect_eq(kiln_pose_blend_values(l, 2, 0.0f, 0.0f, out, 3), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_str_eq(kiln_error_detail()->path, "kiln_pose_blend_values: threshold");
    l[1].values = NULL;
    cr_expect_eq(kiln_pose_blend_values(l, 2, 0.0f, 0.1f, out, 3), KILN_ERR_INVALID_ARGUMENT);
}

Test(visibility, tracks_bind_to_meshes_by_name)
{
    baked b;
    bake_sample(&b);
    uint32_t body = kiln_blob_find(b.blob, KILN_SECTION_MESHES, "body"), track = 0;
    cr_assert_neq(body, KILN_BLOB_NONE);
    cr_assert_eq(kiln_visibility_bind_clip(b.blob, 0, b.blob, &body, 1, &track), KILN_OK);
    const kiln_blob_animation *a = kiln_blob_animations(b.blob, NULL);
    cr_assert_lt(track, a->scalar_count, "the walk's vb curve names the mesh 'body'");
    const kiln_blob_anim_scalar *sc = kiln_blob_anim_scalars(b.blob, NULL) + a->first_scalar + track;
    cr_expect_eq(sc->kind, KILN_SCALAR_VISIBILITY);
    cr_expect_str_eq(kiln_blob_string(b.blob, sc->name), "body");
    /* values: nonzero visible, zero hidden, unanimated visible */
    const uint32_t tr[3] = {0, 1, KILN_BLOB_NONE};
    const float scal[2] = {0.0f, 3.0f};
    float vis[3];
    kiln_visibility_values(tr, 3, scal, 2, vis);
    cr_expect(vis[0] == 0.0f && vis[1] == 1.0f && vis[2] == 1.0f);
    cr_expect_eq(kiln_visibility_bind_clip(b.blob, 5, b.blob, &body, 1, &track), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_str_eq(kiln_error_detail()->path, "kiln_visibility_bind_clip: clip");
    const uint32_t bad = 1000;
    cr_expect_eq(kiln_visibility_bind_clip(b.blob, 0, b.blob, &bad, 1, &track), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_str_eq(kiln_error_detail()->path, "kiln_visibility_bind_clip: meshes");
    baked_free(&b);
}
