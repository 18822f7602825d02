/* kiln_bench_skin: CPU skinning throughput against the memory-bandwidth bound of its data.
 *
 * A synthetic mesh (tests/skin_fixture.h) of 100,000 vertices on an 80-bone skeleton: float
 * positions and normals, 4 or 8 influences per vertex (the baker's joint and weight layouts),
 * random skinning matrices. Cases, on every SIMD path this machine has (--quick: the best one):
 *   lbs          linear blend, rigid matrices
 *   dqs          dual quaternion blend, rigid matrices (no stretch)
 *   dqs_scaled   dual quaternion blend, scaled bones (the stretch is blended and applied too)
 * each with outputs "pos+nrm" (positions and normals) and "pos" (positions only), 4 and 8
 * influences. The dual quaternions are built once per frame (kiln_pose_skin_dual_quats,
 * timed separately as "dq_build").
 *
 * Each JSON line carries "ns_per_vertex" (median repetition) and "ns_per_vertex_min", millions
 * of vertices per second, the bytes a pass reads (positions, normals, joints, weights) and
 * writes (the outputs), "bound_ns_per_vertex": the time a plain copy of that much traffic takes
 * on this machine (bench_bandwidth_seconds, best of the same number of repetitions), and
 * "bandwidth_fraction" = bound / fastest repetition: 1 would mean skinning runs at the speed of
 * a memcpy of its data. A 100k-vertex mesh (5-10 MB) stays in a large last-level cache between
 * repetitions, and so do the copy's buffers: that is the "warm" figure, against cache
 * bandwidth. The "cold" figures ("ns_per_vertex_cold", "bound_ns_per_vertex_cold",
 * "bandwidth_fraction_cold") evict the caches before every repetition (writing and reading a
 * 256 MB buffer) for both the kernel and the copy, whose repetitions alternate: data coming
 * from DRAM, as a mesh skinned once per frame among other work does.
 *
 * Usage: kiln_bench_skin [--quick] [--simd best|all|scalar|sse2|avx2|avx512] [--vertices N] [--no-cold]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/skin_fixture.h"
#include "bench_util.h"
#include "kiln/anim.h"
#include "kiln/skin.h"

#define BONES 80

static volatile float bench_sink;

typedef struct options {
    int quick, all_paths, cold;
    kiln_simd only;
    uint32_t vertices;
    int reps, cold_reps;
} options;

static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->quick = bench_quick(argc, argv);
    o->all_paths = !o->quick;
    o->vertices = 100000;
    o->cold = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) continue;
        if (strcmp(argv[i], "--no-cold") == 0) {
            o->cold = 0;
            continue;
        }
        if (strcmp(argv[i], "--simd") == 0 && i + 1 < argc) {
            if (!bench_parse_simd(argv[++i], &o->all_paths, &o->only)) return 0;
        } else if (strcmp(argv[i], "--vertices") == 0 && i + 1 < argc) {
            long v = strtol(argv[++i], NULL, 10);
            if (v < 1 || v > 10000000) return 0;
            o->vertices = (uint32_t)v;
        } else {
            return 0;
        }
    }
    o->reps = o->quick ? 9 : 41;
    o->cold_reps = o->quick ? 3 : 7;
    return 1;
}

typedef struct timing {
    double median_s, min_s;
} timing;

/* Evicts every cache level: writes, then reads, a buffer well past any last-level cache. */
#define FLUSH_BYTES ((size_t)256 << 20)
static void flush_caches(void *p)
{
    static unsigned char round;
    unsigned char *buf = p;
    memset(buf, ++round, FLUSH_BYTES);
    unsigned long long sum = 0;
    for (size_t i = 0; i < FLUSH_BYTES; i += 64) sum += buf[i];
    bench_sink += (float)sum;
}

/* Median and best of `reps` calls, caches warm. */
static timing time_skin(const kiln_skin_desc *d, int reps)
{
    double t[64];
    for (int w = 0; w < 2; w++) kiln_skin_mesh(d); /* warm caches and page tables */
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        kiln_skin_mesh(d);
        t[r] = bench_now() - t0;
    }
    bench_sink += d->positions[0];
    qsort(t, (size_t)reps, sizeof t[0], bench_cmp_double);
    timing out = {t[reps / 2], t[0]};
    return out;
}

/* The cold figures, side by side: before each repetition of the copy that gives the bound,
 * this evicts the caches, times one skinning call and evicts them again; so the kernel and its
 * bound alternate and see the same state of the machine (a VM's speed can change between two
 * runs of 7 repetitions). */
typedef struct cold_run {
    const kiln_skin_desc *d;
    unsigned char *flush;
    double best_s;
} cold_run;

static void cold_skin_then_flush(void *user)
{
    cold_run *c = user;
    flush_caches(c->flush);
    double t0 = bench_now();
    kiln_skin_mesh(c->d);
    double t = bench_now() - t0;
    c->best_s = t < c->best_s ? t : c->best_s;
    flush_caches(c->flush);
}

typedef struct mesh_case {
    uint32_t influences;
    unsigned char *mem;
    const kiln_blob *blob;
    uint32_t joint_stride, weight_stride;
} mesh_case;

int main(int argc, char **argv)
{
    options o;
    if (!parse_options(argc, argv, &o)) {
        fprintf(stderr, "usage: kiln_bench_skin [--quick] [--simd best|all|scalar|sse2|avx2|avx512] [--vertices N] [--no-cold]\n");
        return 1;
    }
    const uint32_t n = o.vertices;
    mesh_case meshes[2] = {{4, NULL, NULL, 0, 0}, {8, NULL, NULL, 0, 0}};
    for (int i = 0; i < 2; i++) {
        sf_mesh_opts mo = sf_defaults(n, meshes[i].influences);
        mo.bones = BONES;
        mo.seed = 3u + (uint32_t)i;
        size_t size;
        meshes[i].mem = sf_build(&mo, &size);
        meshes[i].blob = sf_load(meshes[i].mem, size);
        const kiln_blob_mesh *m = kiln_blob_meshes(meshes[i].blob, NULL);
        meshes[i].joint_stride = kiln_blob_mesh_stream(meshes[i].blob, m, KILN_ATTR_JOINTS, 0)->stride;
        meshes[i].weight_stride = kiln_blob_mesh_stream(meshes[i].blob, m, KILN_ATTR_WEIGHTS, 0)->stride;
    }
    float *rigid = sf_matrices(BONES, 5, 0), *scaled = sf_matrices(BONES, 6, 1);
    kiln_skin_dual_quat *dq_rigid = malloc(sizeof *dq_rigid * BONES), *dq_scaled = malloc(sizeof *dq_scaled * BONES);
    float *out_p = NULL, *out_n = NULL;
    unsigned char *flush = NULL;
    if (o.cold && posix_memalign((void **)&flush, 64, FLUSH_BYTES)) flush = NULL, o.cold = 0;
    if (posix_memalign((void **)&out_p, 64, sizeof(float) * 3 * n) ||
        posix_memalign((void **)&out_n, 64, sizeof(float) * 3 * n) || !dq_rigid || !dq_scaled) {
        fprintf(stderr, "kiln_bench_skin: out of memory\n");
        return 1;
    }

    /* the per-frame conversion to dual quaternions */
    {
        double best = 1e30;
        for (int r = 0; r < o.reps; r++) {
            double t0 = bench_now();
            kiln_pose_skin_dual_quats(scaled, dq_scaled, BONES);
            double t = bench_now() - t0;
            best = t < best ? t : best;
        }
        kiln_pose_skin_dual_quats(rigid, dq_rigid, BONES);
        printf("{\"bench\":\"skin\",\"case\":\"dq_build\",\"bones\":%d,\"ns_per_bone\":%.1f}\n", BONES, best * 1e9 / BONES);
        fprintf(stderr, "dq_build: %.1f ns/bone (%d bones)\n", best * 1e9 / BONES, BONES);
    }

    /* AVX-512 has skinning kernels of its own (16 vertices per iteration): a path of its own */
    const kiln_simd all[4] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
    kiln_simd paths[4];
    int np = 0;
    if (o.all_paths) {
        for (int i = 0; i < 4; i++)
            if (kiln_simd_force(all[i]) == all[i]) paths[np++] = all[i];
    } else {
        paths[np++] = kiln_simd_force(o.only);
    }

    static const char *const methods[3] = {"lbs", "dqs", "dqs_scaled"};
    fprintf(stderr, "skinning %u vertices, %d bones (median / best ns per vertex; bound = memcpy of the same bytes; "
                    "fraction = bound / best)\n", n, BONES);
    for (int p = 0; p < np; p++) {
        kiln_simd path = kiln_simd_force(paths[p]);
        for (int method = 0; method < 3; method++)
            for (int mi = 0; mi < 2; mi++)
                for (int normals = 1; normals >= 0; normals--) {
                    const mesh_case *mc = &meshes[mi];
                    kiln_skin_desc d;
                    memset(&d, 0, sizeof d);
                    d.blob = mc->blob;
                    d.flags = method == 0 ? KILN_SKIN_FORCE_LINEAR : KILN_SKIN_FORCE_DUAL_QUAT;
                    d.skin_matrices = method == 2 ? scaled : rigid;
                    d.dual_quats = method == 2 ? dq_scaled : dq_rigid;
                    d.bone_count = BONES;
                    d.vertex_count = n;
                    d.positions = out_p;
                    d.normals = normals ? out_n : NULL;
                    kiln_result r = kiln_skin_mesh(&d);
                    if (r != KILN_OK) {
                        fprintf(stderr, "kiln_skin_mesh: %s\n", kiln_result_name(r));
                        return 1;
                    }
                    timing t = time_skin(&d, o.reps);
                    size_t read = (size_t)n * (12u + (normals ? 12u : 0u) + mc->joint_stride + mc->weight_stride);
                    size_t written = (size_t)n * (12u + (normals ? 12u : 0u));
                    double bound = bench_bandwidth_seconds(read, written, o.reps);
                    double ns = t.median_s * 1e9 / n, ns_min = t.min_s * 1e9 / n, bound_ns = bound * 1e9 / n;
                    double fraction = t.min_s > 0 ? bound / t.min_s : 0.0;
                    double cold_ns = 0, cold_bound_ns = 0, cold_fraction = 0;
                    if (o.cold) {
                        cold_run c = {&d, flush, 1e30};
                        double cb = bench_bandwidth_seconds_ex(read, written, o.cold_reps, cold_skin_then_flush, &c);
                        cold_ns = c.best_s * 1e9 / n, cold_bound_ns = cb * 1e9 / n;
                        cold_fraction = c.best_s > 0 ? cb / c.best_s : 0.0;
                    }
                    const char *outputs = normals ? "pos+nrm" : "pos";
                    printf("{\"bench\":\"skin\",\"case\":\"%s\",\"influences\":%u,\"outputs\":\"%s\",\"simd\":\"%s\","
                           "\"vertices\":%u,\"bones\":%d,\"ns_per_vertex\":%.3f,\"ns_per_vertex_min\":%.3f,"
                           "\"mverts_per_s\":%.1f,\"bytes_read\":%zu,\"bytes_written\":%zu,\"bound_ns_per_vertex\":%.3f,"
                           "\"bandwidth_fraction\":%.3f,\"ns_per_vertex_cold\":%.3f,\"bound_ns_per_vertex_cold\":%.3f,"
                           "\"bandwidth_fraction_cold\":%.3f}\n",
                           methods[method], mc->influences, outputs, kiln_simd_name(path), n, BONES, ns, ns_min,
                           1e3 / ns_min, read, written, bound_ns, fraction, cold_ns, cold_bound_ns, cold_fraction);
                    fprintf(stderr, "  %-6s %-10s %u infl %-7s %6.2f / %6.2f ns/vertex %6.1f Mvert/s | warm bound %5.2f ns, "
                            "fraction %.2f | cold %6.2f ns, bound %5.2f ns, fraction %.2f\n",
                            kiln_simd_name(path), methods[method], mc->influences, outputs, ns, ns_min, 1e3 / ns_min,
                            bound_ns, fraction, cold_ns, cold_bound_ns, cold_fraction);
                    fflush(stdout);
                }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    for (int i = 0; i < 2; i++) free(meshes[i].mem);
    free(rigid), free(scaled), free(dq_rigid), free(dq_scaled), free(out_p), free(out_n), free(flush);
    return 0;
}
