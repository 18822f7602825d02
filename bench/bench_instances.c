/* Instance world matrices (kiln/instance.h) for a level of 10,000 instances: the corpus world
 * world_10k_instances.cast baked here (4 referenced assets), else 10,000 synthetic records of
 * the same kind when the corpus is absent. Every case runs on every SIMD path this machine has
 * (AVX-512 aside: it runs the AVX2 kernels).
 *
 * Cases (one JSON line each on stdout; a summary on stderr):
 *   identity      every instance's T·R·S alone (no model, no parent), 4x4
 *   model_parent  each reference's own model transform and a parent transform on top, 4x4
 *                 (kiln_instance_world_matrices_all)
 *   model_parent_3x4  the same into the 3x4 row-major layout (48 bytes per matrix)
 * Figures are ns per instance, best of many repetitions, printed beside the memory-bandwidth
 * bound of the same traffic (the 64-byte records read, the matrices written), measured here as a
 * plain copy of that many bytes (bench_bandwidth_seconds); bandwidth_fraction is bound / time,
 * 1.0 meaning the kernel runs at the speed of memory. The data stays in cache between
 * repetitions, for the kernel and for the copy alike.
 * Usage: kiln_bench_instances [--quick]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "kiln/anim.h"
#include "kiln/bake/bake.h"
#include "kiln/blob.h"
#include "kiln/instance.h"

#define SYNTHETIC_COUNT 10000u
#define MAX_REFS 64u

static volatile float bench_sink;

typedef struct level {
    kiln_bake_result res;          /* the baked corpus world, or zeroed */
    const kiln_blob *blob;         /* NULL: synthetic */
    kiln_blob_instance *synthetic; /* SYNTHETIC_COUNT records */
    const kiln_blob_instance *inst;
    uint32_t count, ref_count;
} level;

static int load_corpus(level *lv)
{
    char dir[512], path[600];
    if (!bench_corpus_dir(dir, sizeof dir)) return 0;
    snprintf(path, sizeof path, "%s/world_10k_instances.cast", dir);
    size_t size;
    void *data = bench_load(path, &size);
    if (!data) return 0;
    kiln_bake_input in = {path, data, size, NULL};
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    kiln_diag err;
    int ok = kiln_bake(&in, 1, &o, &lv->res, &err) == KILN_OK &&
             kiln_blob_load(lv->res.blob, lv->res.size, 0, &lv->blob, &err) == KILN_OK;
    free(data);
    if (!ok) {
        fprintf(stderr, "bench_instances: %s: %s; using synthetic instances\n", path, err.message);
        kiln_bake_result_free(&lv->res);
        lv->blob = NULL;
        return 0;
    }
    lv->inst = kiln_blob_instances(lv->blob, &lv->count);
    lv->ref_count = kiln_reference_count(lv->blob);
    return lv->count > 0 && lv->ref_count <= MAX_REFS;
}

static uint32_t lcg(uint32_t *s) { return (*s = *s * 1664525u + 1013904223u) >> 8; } /* 24 bits */
static float unit(uint32_t *s) { return (float)lcg(s) / 16777216.0f; }

static void synthesize(level *lv)
{
    uint32_t st = 7;
    lv->synthetic = calloc(SYNTHETIC_COUNT, sizeof *lv->synthetic);
    for (uint32_t i = 0; i < SYNTHETIC_COUNT; i++) {
        kiln_blob_instance *in = &lv->synthetic[i];
        float q[4], len = 0;
        for (int c = 0; c < 4; c++) q[c] = unit(&st) * 2 - 1, len += q[c] * q[c];
        len = sqrtf(len) + 1e-6f;
        for (int c = 0; c < 4; c++) in->rotation[c] = q[c] / len;
        for (int c = 0; c < 3; c++) in->position[c] = unit(&st) * 1000 - 500, in->scale[c] = 0.5f + unit(&st);
    }
    lv->inst = lv->synthetic;
    lv->count = SYNTHETIC_COUNT;
    lv->ref_count = 1;
}

/* One call: every instance of the level into `out`. */
static void run_once(const level *lv, const float *parent, const float *const *models, uint32_t layout, float *out)
{
    kiln_result r = lv->blob ? kiln_instance_world_matrices_all(lv->blob, parent, models, layout, out, lv->count)
                             : kiln_instance_matrices(lv->inst, lv->count, parent, models ? models[0] : NULL, layout, out);
    if (r != KILN_OK) {
        fprintf(stderr, "bench_instances: %s\n", kiln_result_name(r));
        exit(1);
    }
}

/* Best of `reps` repetitions of `calls` calls, in ns per instance. */
static double time_case(const level *lv, const float *parent, const float *const *models, uint32_t layout, float *out,
                        int calls, int reps)
{
    double best = 1e30;
    run_once(lv, parent, models, layout, out); /* warm */
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (int c = 0; c < calls; c++) run_once(lv, parent, models, layout, out);
        double t = (bench_now() - t0) / calls;
        if (t < best) best = t;
        bench_sink += out[(size_t)(r % lv->count) * KILN_INSTANCE_FLOATS(layout)];
    }
    return best * 1e9 / lv->count;
}

int main(int argc, char **argv)
{
    int quick = bench_quick(argc, argv);
    const int reps = quick ? 10 : 200, calls = quick ? 5 : 20;
    level lv;
    memset(&lv, 0, sizeof lv);
    int corpus = load_corpus(&lv);
    if (!corpus) synthesize(&lv);
    const char *data = corpus ? "world_10k_instances" : "synthetic";
    fprintf(stderr, "bench_instances: %s; data %s: %u instances of %u reference%s\n", kiln_build_info(),
            corpus ? "world_10k_instances.cast (corpus, baked)" : "synthetic", lv.count, lv.ref_count,
            lv.ref_count == 1 ? "" : "s");

    /* a model transform per reference (a scale, a turn and an offset, as assets carry) and a
     * parent placing the whole level */
    float model[MAX_REFS][16], parent[16];
    const float *models[MAX_REFS];
    for (uint32_t r = 0; r < lv.ref_count; r++) {
        float p[3] = {0.0f, 0.1f * (float)r, 0.0f}, q[4] = {0, 0.38268343f, 0, 0.92387953f}, s[3] = {0.01f, 0.01f, 0.01f};
        kiln_transform_matrix(p, q, s, model[r]);
        models[r] = model[r];
    }
    static const float lp[3] = {100, 0, -50}, lq[4] = {0, 0, 0.70710678f, 0.70710678f}, ls[3] = {1, 1, 1};
    kiln_transform_matrix(lp, lq, ls, parent);

    float *out = NULL;
    if (posix_memalign((void **)&out, 64, (size_t)lv.count * 16 * sizeof(float)) != 0) return 1;
    static const struct {
        const char *name;
        int with_model_parent;
        uint32_t layout;
    } cases[] = {{"identity", 0, KILN_INSTANCE_4X4},
                 {"model_parent", 1, KILN_INSTANCE_4X4},
                 {"model_parent_3x4", 1, KILN_INSTANCE_3X4}};
    /* no AVX-512 entry: that path runs the AVX2 instance kernels, timed already */
    static const kiln_simd paths[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t read_bytes = (size_t)lv.count * sizeof(kiln_blob_instance);
        size_t write_bytes = (size_t)lv.count * KILN_INSTANCE_FLOATS(cases[c].layout) * sizeof(float);
        double bound_ns = bench_bandwidth_seconds(read_bytes, write_bytes, reps) * 1e9 / lv.count;
        for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
            if (kiln_simd_force(paths[p]) != paths[p]) continue;
            const int mp = cases[c].with_model_parent;
            double ns = time_case(&lv, mp ? parent : NULL, mp ? models : NULL, cases[c].layout, out, calls, reps);
            printf("{\"bench\":\"instances\",\"case\":\"%s\",\"data\":\"%s\",\"instances\":%u,\"references\":%u,"
                   "\"simd\":\"%s\",\"layout\":\"%s\",\"ns_per_instance\":%.3f,\"bandwidth_ns_per_instance\":%.3f,"
                   "\"bandwidth_fraction\":%.3f,\"read_bytes\":%zu,\"write_bytes\":%zu,\"reps\":%d}\n",
                   cases[c].name, data, lv.count, lv.ref_count, kiln_simd_name(paths[p]),
                   cases[c].layout == KILN_INSTANCE_3X4 ? "3x4" : "4x4", ns, bound_ns, ns > 0 ? bound_ns / ns : 0.0,
                   read_bytes, write_bytes, reps);
            fflush(stdout);
            fprintf(stderr, "  %-6s %-17s %7.3f ns/instance  (memory bound %6.3f ns: %3.0f%%)\n", kiln_simd_name(paths[p]),
                    cases[c].name, ns, bound_ns, ns > 0 ? 100.0 * bound_ns / ns : 0.0);
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    free(out);
    free(lv.synthetic);
    kiln_bake_result_free(&lv.res);
    return 0;
}
