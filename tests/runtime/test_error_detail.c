/* kiln_error_detail: runtime calls rejecting an argument say which one and why, per thread,
 * and misaligned caller memory gives ERR_BLOB_MISALIGNED. On the bundled sample character.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/bake/bake.h"
#include "kiln.h"
#include "test_util.h"

static kiln_bake_result res;
static const kiln_blob *blob;
static file_bytes model, walk;

static void setup(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/samples/character.cast", KILN_SOURCE_DIR);
    cr_assert(read_file(path, &model));
    snprintf(path, sizeof path, "%s/samples/character_walk.cast", KILN_SOURCE_DIR);
    cr_assert(read_file(path, &walk));
    kiln_bake_input in[2] = {{"character.cast", model.data, model.size, NULL}, {"walk.cast", walk.data, walk.size, NULL}};
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    kiln_diag err;
    cr_assert_eq(kiln_bake(in, 2, &o, &res, &err), KILN_OK, "%s", err.message);
    cr_assert_eq(kiln_blob_load(res.blob, res.size, 0, &blob, &err), KILN_OK, "%s", err.message);
}

static void teardown(void)
{
    kiln_bake_result_free(&res);
    file_bytes_free(&model);
    file_bytes_free(&walk);
}

static void expect_detail(kiln_result got, kiln_result want, const char *path, const char *words)
{
    cr_expect_eq(got, want, "%s: %s, expected %s", path, kiln_result_name(got), kiln_result_name(want));
    const kiln_diag *d = kiln_error_detail();
    cr_expect_eq(d->code, want);
    cr_expect_str_eq(d->path, path);
    cr_expect(strstr(d->message, words) != NULL, "%s: message '%s' lacks '%s'", path, d->message, words);
    cr_expect_eq(d->offset, KILN_NO_OFFSET);
}

Test(error_detail, names_the_argument_and_the_values, .init = setup, .fini = teardown)
{
    size_t bs = kiln_anim_binding_size(blob, 0, blob, 0);
    unsigned char *mem = aligned_alloc(64, (bs + 127) & ~(size_t)63);
    cr_assert(mem);
    kiln_anim_binding *b;
    expect_detail(kiln_anim_bind(blob, 0, blob, 0, mem + 8, bs, &b, NULL), KILN_ERR_BLOB_MISALIGNED, "kiln_anim_bind: mem",
                  "16-byte");
    expect_detail(kiln_anim_bind(blob, 0, blob, 0, mem, bs - 1, &b, NULL), KILN_ERR_BUFFER_TOO_SMALL, "kiln_anim_bind: size",
                  "kiln_anim_binding_size");
    expect_detail(kiln_anim_bind(blob, 3, blob, 0, mem, bs, &b, NULL), KILN_ERR_INVALID_ARGUMENT,
                  "kiln_anim_bind: clip, skeleton", "no clip 3");
    cr_assert_eq(kiln_anim_bind(blob, 0, blob, 0, mem, bs, &b, NULL), KILN_OK);

    unsigned char ctx[256] __attribute__((aligned(64)));
    expect_detail(kiln_sample_context_init(ctx + 4, 200, b), KILN_ERR_BLOB_MISALIGNED, "kiln_sample_context_init: mem",
                  "aligned");
    kiln_soa_xform pose[2];
    kiln_sample_desc s;
    memset(&s, 0, sizeof s);
    s.binding = b, s.out = pose, s.out_count = 0;
    expect_detail(kiln_sample(&s), KILN_ERR_BUFFER_TOO_SMALL, "kiln_sample: desc->out_count", "out_count 0 is below");
    s.out_count = 1, s.scalar_count = 3;
    expect_detail(kiln_sample(&s), KILN_ERR_INVALID_ARGUMENT, "kiln_sample: desc->scalars", "scalar_count 3");

    kiln_blend_layer ly = {pose, 1.0f, NULL};
    expect_detail(kiln_pose_blend(&ly, 1, NULL, -1.0f, pose, 1), KILN_ERR_INVALID_ARGUMENT, "kiln_pose_blend: threshold",
                  "-1");
    float model_m[16 * 8], skin_m[16 * 8];
    expect_detail(kiln_pose_local_to_object(blob, 0, pose, NULL, model_m, 3), KILN_ERR_BUFFER_TOO_SMALL, "bone_count",
                  "bone_count 3 is below the skeleton's 8");

    size_t rs = kiln_rig_scratch_size(blob, 0);
    unsigned char *scratch = aligned_alloc(64, (rs + 127) & ~(size_t)63);
    cr_assert(scratch);
    kiln_rig_desc r;
    memset(&r, 0, sizeof r);
    r.blob = blob, r.local = pose, r.soa_count = 1, r.object = model_m, r.bone_count = 8, r.scratch = scratch + 4;
    r.scratch_size = rs;
    expect_detail(kiln_rig_solve(&r), KILN_ERR_BLOB_MISALIGNED, "kiln_rig_solve: desc->scratch", "8-byte");
    r.scratch = scratch, r.scratch_size = rs - 1;
    expect_detail(kiln_rig_solve(&r), KILN_ERR_BUFFER_TOO_SMALL, "kiln_rig_solve: desc->scratch_size", "kiln_rig_scratch_size");

    kiln_skin_desc k;
    memset(&k, 0, sizeof k);
    k.blob = blob, k.skin_matrices = skin_m, k.bone_count = 2, k.vertex_count = 1;
    float out[3];
    k.positions = out;
    expect_detail(kiln_skin_mesh(&k), KILN_ERR_BUFFER_TOO_SMALL, "kiln_skin_mesh: desc->bone_count", "bone_count 2");
    k.bone_count = 8, k.mesh = 42;
    expect_detail(kiln_skin_mesh(&k), KILN_ERR_INVALID_ARGUMENT, "kiln_skin_mesh: desc->mesh", "no mesh 42");
    k.mesh = 0, k.position_stride_bytes = 6;
    expect_detail(kiln_skin_mesh(&k), KILN_ERR_INVALID_ARGUMENT, "kiln_skin_mesh: desc->*_stride_bytes", "stride");

    uint32_t track;
    const uint32_t shape = 0;
    expect_detail(kiln_blend_shape_bind_clip(blob, 9, blob, &shape, 1, &track), KILN_ERR_INVALID_ARGUMENT,
                  "kiln_blend_shape_bind_clip: clip", "no clip 9");
    kiln_blob_instance inst;
    memset(&inst, 0, sizeof inst);
    expect_detail(kiln_instance_matrices(&inst, 1, NULL, NULL, 7u, model_m), KILN_ERR_INVALID_ARGUMENT,
                  "kiln_instance_matrices: layout", "unknown layout 7");
    /* a blob without instances: success, and the last failure's detail stays */
    cr_expect_eq(kiln_instance_world_matrices_all(blob, NULL, NULL, KILN_INSTANCE_4X4, NULL, 0), KILN_OK);
    cr_expect_str_eq(kiln_error_detail()->path, "kiln_instance_matrices: layout");
    free(scratch);
    free(mem);
}

static void *fail_on_another_thread(void *arg)
{
    (void)arg;
    kiln_pose_add(NULL, NULL, 1.0f, NULL, 0);
    return (void *)kiln_error_detail();
}

Test(error_detail, is_per_thread)
{
    float w = 0.0f;
    kiln_value_layer l = {NULL, 1.0f};
    cr_assert_eq(kiln_pose_blend_values(&l, 1, 0.0f, 0.1f, &w, 1), KILN_ERR_INVALID_ARGUMENT);
    pthread_t t;
    void *other;
    cr_assert_eq(pthread_create(&t, NULL, fail_on_another_thread, NULL), 0);
    cr_assert_eq(pthread_join(t, &other), 0);
    cr_expect_neq(other, (void *)kiln_error_detail(), "each thread has its own record");
    cr_expect_str_eq(kiln_error_detail()->path, "kiln_pose_blend_values: layers[].values",
                     "another thread's failure leaves this thread's detail alone");
}
