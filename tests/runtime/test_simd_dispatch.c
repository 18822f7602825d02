/* One kernel table (runtime/simd_table.h): forcing a path with kiln_simd_force switches every
 * module to that path's kernels, and only to kernels the CPU has.
 *   - per path: the row in use is that path's (or, when the CPU lacks it, the best one it has,
 *     as kiln_simd_force reports), and every module's column holds the kernels of the path
 *     they are written for (the AVX-512 row: its own pose and mesh-skinning kernels, the AVX2
 *     ones elsewhere); the blob scanners and the CRC report the path they run;
 *   - behaviour: instance matrices computed through the public entry point under a forced path
 *     are bit-identical to that path's kernel called directly, and the paths with and without
 *     FMA give different bits on the same input, so the comparison tells the paths apart;
 *   - the blob CRC and scanners give the same answers on every path (known CRC-32C value).
 * Under valgrind, whose CPU has no AVX-512, forcing AVX-512 falls back to AVX2.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h> /* RUNNING_ON_VALGRIND: a client request, a no-op natively */
#define HAVE_VALGRIND_H 1
#endif
#endif

#include "kiln/anim.h"
#include "kiln/blob.h"
#include "kiln/instance.h"
#include "../../runtime/simd_table.h"

static const kiln_simd paths[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
#define PATH_COUNT 4

static void restore_auto(void) { kiln_simd_force(KILN_SIMD_AUTO); }

/* What kiln_simd_force(p) must give: p when built and on this CPU, else the widest path that
 * is (independent of the table: the narrower rows, widest first). */
static kiln_simd expected_path(kiln_simd p)
{
    if (kiln__simd_for(p)) return p;
    for (int i = PATH_COUNT - 1; i >= 0; i--)
        if (kiln__simd_for(paths[i])) return paths[i];
    return KILN_SIMD_SCALAR;
}

Test(simd_dispatch, scalar_and_baseline_rows_always_exist)
{
    cr_assert_not_null(kiln__simd_for(KILN_SIMD_SCALAR));
#if KILN__SIMD_SSE2
    cr_assert_not_null(kiln__simd_for(KILN_SIMD_SSE2), "every x86-64 CPU has SSE2");
#endif
    cr_assert_null(kiln__simd_for(KILN_SIMD_AUTO), "AUTO is no row");
    cr_assert_null(kiln__simd_for((kiln_simd)99));
    if (kiln__simd_for(KILN_SIMD_AVX512))
        cr_assert_not_null(kiln__simd_for(KILN_SIMD_AVX2), "the AVX-512 row runs AVX2 kernels too");
    else
        cr_log_info("no AVX-512 on this CPU (or under valgrind): its kernels are not run here");
#ifdef HAVE_VALGRIND_H
    /* valgrind's CPU has no AVX-512: the row must not be offered, or its kernels would fault */
    if (RUNNING_ON_VALGRIND) {
        cr_assert_null(kiln__simd_for(KILN_SIMD_AVX512), "AVX-512 offered under valgrind");
        cr_assert_neq(kiln_simd_force(KILN_SIMD_AVX512), KILN_SIMD_AVX512);
        kiln_simd_force(KILN_SIMD_AUTO);
    }
#endif
}

Test(simd_dispatch, forcing_a_path_switches_every_module, .fini = restore_auto)
{
    for (int i = 0; i < PATH_COUNT; i++) {
        kiln_simd want = expected_path(paths[i]);
        kiln_simd got = kiln_simd_force(paths[i]);
        const char *pn = kiln_simd_name(paths[i]);
        cr_assert_eq(got, want, "force %s gave %s", pn, kiln_simd_name(got));
        const kiln__simd_table *t = kiln__simd_get();
        cr_assert_eq(t, kiln__simd_for(got), "%s: the row in use", pn);
        cr_assert_eq(kiln_simd_active(), got, "%s", pn);
        cr_assert_eq(t->path, got, "%s", pn);
        cr_assert_eq(t->anim.path, got, "%s: sampling and pose", pn);
        cr_assert_eq(kiln__kernels_get(), &t->anim, "%s", pn);
        cr_assert_str_eq(t->name, kiln_simd_name(got));

        /* every column: the kernels written for this path */
        switch (got) {
        case KILN_SIMD_SCALAR:
            cr_expect_eq(t->anim.sample_blocks, kiln__sample_blocks_scalar);
            cr_expect_eq(t->anim.decode_block, kiln__decode_block_scalar);
            cr_expect_eq(t->anim.blend, kiln__blend_scalar);
            cr_expect_eq(t->anim.local_to_model, kiln__local_to_model_scalar);
            cr_expect_eq(t->anim.skin, kiln__skin_scalar);
            cr_expect_eq(t->skin_lbs, kiln__skin_lbs_scalar);
            cr_expect_eq(t->skin_dqs, kiln__skin_dqs_scalar);
            cr_expect_eq(t->blend_shape.add, kiln__bs_add_scalar);
            cr_expect_eq(t->instance_world, kiln__instance_world_scalar);
            cr_expect_eq(t->crc32c, kiln__crc32c_sw);
            cr_expect_str_eq(kiln__scan_path(), "scalar");
            cr_expect_eq(kiln__crc32c_hw_available(), 0);
            break;
#if KILN__SIMD_SSE2
        case KILN_SIMD_SSE2:
            cr_expect_eq(t->anim.sample_blocks, kiln__sample_blocks_sse2);
            cr_expect_eq(t->anim.decode_block, kiln__decode_block_sse2);
            cr_expect_eq(t->anim.blend, kiln__blend_sse2);
            cr_expect_eq(t->anim.local_to_model, kiln__local_to_model_sse2);
            cr_expect_eq(t->anim.skin, kiln__skin_sse2);
            cr_expect_eq(t->skin_lbs, kiln__skin_lbs_sse2);
            cr_expect_eq(t->skin_dqs, kiln__skin_dqs_sse2);
            cr_expect_eq(t->blend_shape.add, kiln__bs_add_sse2);
            cr_expect_eq(t->instance_world, kiln__instance_world_sse2);
            cr_expect_eq(t->crc32c, kiln__crc32c_sw, "SSE2 has no crc32 instruction");
#if KILN__X86_DISPATCH
            cr_expect_str_eq(kiln__scan_path(), "sse2");
#endif
            break;
#endif
#if KILN__SIMD_AVX2
        case KILN_SIMD_AVX2:
            cr_expect_eq(t->anim.sample_blocks, kiln__sample_blocks_avx2);
            cr_expect_eq(t->anim.decode_block, kiln__decode_block_avx2);
            cr_expect_eq(t->anim.blend, kiln__blend_avx2);
            cr_expect_eq(t->anim.local_to_model, kiln__local_to_model_avx2);
            cr_expect_eq(t->anim.skin, kiln__skin_avx2);
            cr_expect_eq(t->skin_lbs, kiln__skin_lbs_avx2);
            cr_expect_eq(t->skin_dqs, kiln__skin_dqs_avx2);
            cr_expect_eq(t->blend_shape.add, kiln__bs_add_avx2);
            cr_expect_eq(t->instance_world, kiln__instance_world_avx2);
#if KILN__X86_DISPATCH
            cr_expect_eq(t->crc32c, kiln__crc32c_sse42);
            cr_expect_str_eq(kiln__scan_path(), "avx2");
            cr_expect_eq(kiln__crc32c_hw_available(), 1);
#endif
            break;
#endif
#if KILN__SIMD_AVX512
        case KILN_SIMD_AVX512:
            cr_expect_eq(t->anim.sample_blocks, kiln__sample_blocks_avx2, "no 16-lane sampler");
            cr_expect_eq(t->anim.decode_block, kiln__decode_block_avx2);
            cr_expect_eq(t->anim.blend, kiln__blend_avx2, "no 16-lane blend");
            cr_expect_eq(t->anim.local_to_model, kiln__local_to_model_avx2, "no 16-lane local -> model");
            cr_expect_eq(t->anim.add, kiln__add_avx2, "no 16-lane additive layer");
            cr_expect_eq(t->anim.skin, kiln__skin_avx2, "no 16-lane skinning matrices");
            cr_expect_eq(t->skin_lbs, kiln__skin_lbs_avx512);
            cr_expect_eq(t->skin_dqs, kiln__skin_dqs_avx512);
            cr_expect_eq(t->blend_shape.add, kiln__bs_add_avx2);
            cr_expect_eq(t->instance_world, kiln__instance_world_avx2);
#if KILN__X86_DISPATCH
            cr_expect_eq(t->crc32c, kiln__crc32c_sse42);
            cr_expect_str_eq(kiln__scan_path(), "avx2");
#endif
            break;
#endif
        default: cr_assert_fail("force %s gave %s, which this build has no row for", pn, kiln_simd_name(got));
        }
    }
    cr_assert_eq(kiln_simd_force(KILN_SIMD_AUTO), expected_path(KILN_SIMD_AVX512), "AUTO: the best row");
}

/* ---- behaviour: the instance module runs the forced path's kernel -------------------------- */

static uint32_t rng(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}
static float frand(uint32_t *s, float lo, float hi) { return lo + (hi - lo) * (float)rng(s) / 16777216.0f; }

#define INST_N 257u

static void random_instances(kiln_blob_instance *in, uint32_t n, uint32_t seed)
{
    memset(in, 0, n * sizeof *in);
    for (uint32_t i = 0; i < n; i++) {
        float q[4], len = 0;
        for (int k = 0; k < 3; k++) in[i].position[k] = frand(&seed, -100, 100);
        for (int k = 0; k < 4; k++) q[k] = frand(&seed, -1, 1), len += q[k] * q[k];
        len = sqrtf(len);
        for (int k = 0; k < 4; k++) in[i].rotation[k] = q[k] / len;
        for (int k = 0; k < 3; k++) in[i].scale[k] = frand(&seed, 0.3f, 3.0f);
    }
}

/* The job kiln_instance_matrices builds for an affine parent P and no model matrix
 * (instance_internal.h): W = P · [R·S | p], c[r][j] = P[r][3] · M[3][j] with M = I. */
static void parent_job(kiln__instance_job *job, const kiln_blob_instance *in, uint32_t n, const float P[16], float *out)
{
    memset(job, 0, sizeof *job);
    job->inst = in, job->count = n, job->flags = KILN__INST_PARENT;
    job->layout = KILN_INSTANCE_4X4, job->stride = 16;
    for (int k = 0; k < 4; k++) job->model[k * 5] = 1.0f;
    memcpy(job->parent, P, sizeof job->parent);
    for (int r = 0; r < 4; r++) job->c[r][3] = P[KILN__CM(r, 3)];
    job->out = out;
}

Test(simd_dispatch, instance_matrices_run_the_forced_paths_kernel, .fini = restore_auto)
{
    kiln_blob_instance *in = malloc(INST_N * sizeof *in);
    float *got = malloc(INST_N * 16 * sizeof *got), *direct = malloc(INST_N * 16 * sizeof *direct);
    float *scalar = malloc(INST_N * 16 * sizeof *scalar);
    cr_assert(in && got && direct && scalar);
    random_instances(in, INST_N, 7u);
    float P[16] = {0};
    uint32_t seed = 11u;
    for (int j = 0; j < 4; j++)
        for (int r = 0; r < 3; r++) P[KILN__CM(r, j)] = frand(&seed, -2, 2);
    P[15] = 1.0f;
    kiln__instance_job job;
    int fused_differs = 0;
    for (int i = 0; i < PATH_COUNT; i++) {
        kiln_simd p = kiln_simd_force(paths[i]);
        cr_assert_eq(kiln_instance_matrices(in, INST_N, P, NULL, KILN_INSTANCE_4X4, got), KILN_OK);
        parent_job(&job, in, INST_N, P, direct);
        kiln__simd_for(p)->instance_world(&job);
        cr_assert_eq(memcmp(got, direct, INST_N * 16 * sizeof *got), 0, "%s: not the %s kernel's bits",
                     kiln_simd_name(paths[i]), kiln_simd_name(p));
        if (p == KILN_SIMD_SCALAR) memcpy(scalar, got, INST_N * 16 * sizeof *got);
        else if (p >= KILN_SIMD_AVX2) fused_differs |= memcmp(scalar, got, INST_N * 16 * sizeof *got) != 0;
        for (uint32_t k = 0; k < INST_N * 16; k++) /* and every path is right to float precision */
            cr_assert(fabsf(got[k] - scalar[k]) <= 1e-4f * (1.0f + fabsf(scalar[k])), "%s m[%u]", kiln_simd_name(p), k);
    }
    if (kiln__simd_for(KILN_SIMD_AVX2))
        cr_expect(fused_differs, "the FMA path gave the scalar bits: this check cannot tell the paths apart");
    free(in), free(got), free(direct), free(scalar);
}

/* ---- the CRC and scanners: same answers on every path ----------------------------------------- */
Test(simd_dispatch, crc_and_scanners_agree_on_every_path, .fini = restore_auto)
{
    enum { N = 100000 };
    unsigned char *buf = malloc(N);
    cr_assert_not_null(buf);
    uint32_t s = 99u;
    for (int i = 0; i < N; i++) buf[i] = (unsigned char)rng(&s);
    kiln_simd_force(KILN_SIMD_SCALAR);
    uint32_t want = kiln_crc32c(0, buf, N);
    float f[64];
    for (int i = 0; i < 64; i++) f[i] = (float)i;
    for (int i = 0; i < PATH_COUNT; i++) {
        kiln_simd p = kiln_simd_force(paths[i]);
        cr_assert_eq(kiln_crc32c(0, "123456789", 9), 0xE3069283u, "%s", kiln_simd_name(p));
        cr_assert_eq(kiln_crc32c(0, buf, N), want, "%s", kiln_simd_name(p));
        cr_assert_eq(kiln__scan_finite_f32(f, 64), 1, "%s", kiln_simd_name(p));
        f[37] = INFINITY;
        cr_assert_eq(kiln__scan_finite_f32(f, 64), 0, "%s", kiln_simd_name(p));
        f[37] = 37.0f;
    }
    free(buf);
}
