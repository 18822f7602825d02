/* kiln_bench_blend: blend-shape evaluation (kiln_blend_shapes_apply) throughput.
 *
 * Input: a generated 100,000-vertex grid mesh (400 x 250, z jittered) with 64 BlendShapes,
 * baked once with the default options (meshoptimizer order): shapes 0-31 list a random 5 % of
 * the vertices each, shapes 32-63 a random 30 %, every listed vertex with a nonzero delta.
 *
 * Cases (one JSON object per line on stdout, per SIMD path):
 *   s8_c5, s32_c5, s8_c30, s32_c30   8 or 32 shapes of 5 % or 30 % coverage, every weight 0.7
 *   naive_*                           the same work done the obvious way in this file (copy the
 *                                    base, then one scatter-add pass over the output per shape,
 *                                    scalar C), for scale
 * Fields: "ms" (median of the repetitions), "ms_min", "vertex_shapes_per_s" (vertices x shapes
 * / median time), "deltas_per_s", "bytes" (traffic of one evaluation: base and deltas read,
 * positions written), "bandwidth_ms" (bench_bandwidth_seconds: a plain copy of that traffic
 * here) and "bandwidth_fraction" (bandwidth_ms / ms: 1 = as fast as memory allows).
 *
 * Usage: kiln_bench_blend [--quick]   (--quick or KILN_BENCH_QUICK=1: the best SIMD path only,
 * fewer repetitions)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "kiln/anim.h"
#include "kiln/bake/bake.h"
#include "kiln/blend_shape.h"
#include "kiln/blob.h"
#include "kiln/bake/cast.h"
#include "kiln/bake/cast_write.h"

#define COLS 400u
#define ROWS 250u
#define VERTS (COLS * ROWS)
#define SHAPES_PER_GROUP 32u
#define WEIGHT 0.7f

static volatile float bench_sink;

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static float frand(uint32_t *s, float lo, float hi) { return lo + (hi - lo) * (float)lcg(s) / 16777216.0f; }

/* The grid and its 64 shapes as Cast bytes. */
static void *make_cast(uint64_t *size)
{
    float *vp = malloc((size_t)VERTS * 3 * sizeof(float));
    uint32_t *f = malloc((size_t)(COLS - 1) * (ROWS - 1) * 6 * sizeof(uint32_t));
    uint32_t *vi = malloc((size_t)VERTS * sizeof(uint32_t));
    float *tp = malloc((size_t)VERTS * 3 * sizeof(float));
    if (!vp || !f || !vi || !tp) return NULL;
    uint32_t st = 12345u;
    for (uint32_t y = 0; y < ROWS; y++)
        for (uint32_t x = 0; x < COLS; x++) {
            float *p = vp + 3 * (size_t)(y * COLS + x);
            p[0] = (float)x * 0.01f, p[1] = (float)y * 0.01f, p[2] = frand(&st, -0.01f, 0.01f);
        }
    uint32_t k = 0;
    for (uint32_t y = 0; y + 1 < ROWS; y++)
        for (uint32_t x = 0; x + 1 < COLS; x++) {
            uint32_t a = y * COLS + x, b = a + 1, c = a + COLS, d = c + 1;
            f[k++] = a, f[k++] = b, f[k++] = d, f[k++] = a, f[k++] = d, f[k++] = c;
        }
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 3);
    kiln_cast_writer_string(w, mesh, "n", "grid");
    kiln_cast_writer_prop(w, mesh, "vp", KILN_CAST_TYPE_VEC3, vp, VERTS);
    kiln_cast_writer_ints(w, mesh, "f", f, k);
    for (uint32_t s = 0; s < 2 * SHAPES_PER_GROUP; s++) {
        float coverage = s < SHAPES_PER_GROUP ? 0.05f : 0.30f;
        uint32_t n = 0;
        for (uint32_t v = 0; v < VERTS; v++) {
            if (frand(&st, 0, 1) >= coverage) continue;
            vi[n] = v;
            for (int c = 0; c < 3; c++) tp[3 * (size_t)n + c] = vp[3 * (size_t)v + c] + frand(&st, 0.001f, 0.02f);
            n++;
        }
        char name[16];
        snprintf(name, sizeof name, "shape%u", s);
        uint32_t node = kiln_cast_writer_node(w, model, KILN_CAST_ID_BLENDSHAPE, 100u + s);
        kiln_cast_writer_string(w, node, "n", name);
        kiln_cast_writer_u64(w, node, "b", 3);
        kiln_cast_writer_ints(w, node, "vi", vi, n);
        kiln_cast_writer_floats(w, node, "vp", KILN_CAST_TYPE_VEC3, tp, n);
    }
    *size = kiln_cast_writer_size(w);
    void *bytes = *size ? malloc((size_t)*size) : NULL;
    if (bytes && kiln_cast_writer_write(w, bytes, *size) != KILN_OK) {
        free(bytes);
        bytes = NULL;
    }
    kiln_cast_writer_destroy(w);
    free(vp), free(f), free(vi), free(tp);
    return bytes;
}

/* The obvious evaluation, for scale: copy, then one scatter-add pass per shape. */
static void naive(const kiln_blob *blob, const float *base, uint32_t vc, const uint32_t *shapes, uint32_t n, float *out)
{
    const kiln_blob_blend_shape *bs = kiln_blob_blend_shapes(blob, NULL);
    memcpy(out, base, (size_t)vc * 12);
    for (uint32_t i = 0; i < n; i++) {
        const kiln_blob_blend_shape *s = &bs[shapes[i]];
        const uint32_t *ix = kiln_blend_shape_indices(blob, s);
        const float *d = kiln_blend_shape_deltas(blob, s);
        float w = kiln_blend_shape_weight(WEIGHT, s->target_scale);
        for (uint32_t k = 0; k < s->delta_count; k++) {
            float *o = out + 3 * (size_t)ix[k];
            o[0] += w * d[3 * k], o[1] += w * d[3 * k + 1], o[2] += w * d[3 * k + 2];
        }
    }
}

typedef struct bench_case {
    const char *name;
    uint32_t    first, count; /* shapes */
    double      coverage;
} bench_case;

int main(int argc, char **argv)
{
    int quick = bench_quick(argc, argv);
    int reps = quick ? 5 : 21, warmup = quick ? 1 : 3;
    uint64_t cast_size;
    void *cast = make_cast(&cast_size);
    if (!cast) {
        fprintf(stderr, "kiln_bench_blend: cannot build the input\n");
        return 1;
    }
    kiln_bake_input in = {"grid.cast", cast, (size_t)cast_size, NULL};
    kiln_bake_options opt;
    memset(&opt, 0, sizeof opt);
    kiln_bake_result res;
    kiln_diag err;
    double t0 = bench_now();
    if (kiln_bake(&in, 1, &opt, &res, &err) != KILN_OK) {
        fprintf(stderr, "kiln_bench_blend: bake failed: %s\n", err.message);
        return 1;
    }
    fprintf(stderr, "kiln_bench_blend: baked %u vertices, %u shapes in %.0f ms\n", VERTS, 2 * SHAPES_PER_GROUP,
            (bench_now() - t0) * 1e3);
    free(cast);
    const kiln_blob *blob;
    if (kiln_blob_load(res.blob, res.size, 0, &blob, &err) != KILN_OK) {
        fprintf(stderr, "kiln_bench_blend: load failed: %s\n", err.message);
        return 1;
    }
    uint32_t mesh_count, shape_count;
    const kiln_blob_mesh *mesh = kiln_blob_meshes(blob, &mesh_count);
    const kiln_blob_blend_shape *bs = kiln_blob_blend_shapes(blob, &shape_count);
    if (mesh_count != 1 || shape_count != 2 * SHAPES_PER_GROUP) {
        fprintf(stderr, "kiln_bench_blend: %u meshes and %u shapes baked, expected 1 and %u\n", mesh_count, shape_count,
                2 * SHAPES_PER_GROUP);
        return 1;
    }
    uint32_t vc = mesh->vertex_count;
    float *out = NULL, *base = NULL;
    if (posix_memalign((void **)&out, 64, (size_t)vc * 12) || posix_memalign((void **)&base, 64, (size_t)vc * 12))
        return 1;
    kiln_blend_shapes_desc none = {blob, 0, NULL, NULL, 0, base, 0, vc};
    kiln_blend_shapes_apply(&none);

    const bench_case cases[] = {
        {"s8_c5", 0, 8, 0.05}, {"s32_c5", 0, 32, 0.05}, {"s8_c30", 32, 8, 0.30}, {"s32_c30", 32, 32, 0.30}};
    kiln_simd paths[3];
    int np = 0;
    /* best first; no AVX-512 entry: that path runs the AVX2 blend-shape kernels */
    const kiln_simd all[3] = {KILN_SIMD_AVX2, KILN_SIMD_SSE2, KILN_SIMD_SCALAR};
    for (int i = 0; i < 3; i++)
        if (kiln_simd_force(all[i]) == all[i] && (!quick || np == 0)) paths[np++] = all[i];
    double *times = malloc((size_t)reps * sizeof *times);
    if (!times) return 1;

    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const bench_case *bc = &cases[c];
        uint32_t shapes[SHAPES_PER_GROUP];
        float w[SHAPES_PER_GROUP];
        uint64_t deltas = 0;
        for (uint32_t i = 0; i < bc->count; i++) {
            shapes[i] = bc->first + i, w[i] = WEIGHT;
            deltas += bs[shapes[i]].delta_count;
        }
        size_t read = (size_t)vc * 12 + (size_t)deltas * 16, write = (size_t)vc * 12;
        double bound = bench_bandwidth_seconds(read, write, reps);
        for (int p = -1; p < np; p++) { /* -1: the naive baseline */
            if (p >= 0) kiln_simd_force(paths[p]);
            kiln_blend_shapes_desc d = {blob, 0, shapes, w, bc->count, out, 0, vc};
            for (int r = -warmup; r < reps; r++) {
                double t = bench_now();
                if (p < 0) naive(blob, base, vc, shapes, bc->count, out);
                else kiln_blend_shapes_apply(&d);
                t = bench_now() - t;
                bench_sink += out[(size_t)(r + warmup) % vc * 3];
                if (r >= 0) times[r] = t;
            }
            qsort(times, (size_t)reps, sizeof *times, bench_cmp_double);
            double med = times[reps / 2], best = times[0];
            const char *simd = p < 0 ? "naive-scalar" : kiln_simd_name(paths[p]);
            printf("{\"bench\":\"blend_shapes\",\"case\":\"%s%s\",\"simd\":\"%s\",\"vertices\":%u,\"shapes\":%u,"
                   "\"coverage\":%.2f,\"deltas\":%llu,\"ms\":%.3f,\"ms_min\":%.3f,\"vertex_shapes_per_s\":%.4g,"
                   "\"deltas_per_s\":%.4g,\"bytes\":%zu,\"bandwidth_ms\":%.3f,\"bandwidth_fraction\":%.2f}\n",
                   p < 0 ? "naive_" : "", bc->name, simd, vc, bc->count, bc->coverage, (unsigned long long)deltas,
                   med * 1e3, best * 1e3, (double)vc * bc->count / med, (double)deltas / med, read + write,
                   bound * 1e3, med > 0 ? bound / med : 0.0);
            fprintf(stderr, "  %-8s %-12s %7.3f ms (min %7.3f)  %6.2f G vertex-shapes/s  %6.1f M deltas/s  "
                            "bandwidth bound %6.3f ms (%3.0f %%)\n",
                    bc->name, simd, med * 1e3, best * 1e3, (double)vc * bc->count / med * 1e-9, (double)deltas / med * 1e-6,
                    bound * 1e3, med > 0 ? 100.0 * bound / med : 0.0);
            fflush(stdout);
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    free(times), free(out), free(base);
    kiln_bake_result_free(&res);
    return 0;
}
