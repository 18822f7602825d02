/* Runtime animation throughput on the performance anchor (bench/README.md in the shared
 * corpus): 80 joints, 301 frames at 30 fps, every channel animated, the skeleton and keys of
 * anchor_n80_{model,anim}.cast when the corpus is present (else a synthetic clip of the same
 * shape). Every case runs on every SIMD path this machine has; "kernels" names the kernels that
 * ran (the AVX-512 path runs the AVX2 animation kernels).
 *
 * Cases (one JSON line each on stdout; a summary on stderr):
 *   sample_forward  kiln_sample stepping 1/60 s, 256 instances round-robin, each with its own
 *                   context and start time (staggered over the clip), looping
 *   sample_random   kiln_sample at uniform random t in [0, 10 s], 256 instances round-robin
 *                   (each with its own context)
 *     both on two clips: "lossless" (raw float rows) and "lossy16" (16-bit range-reduced)
 *   sample_forward_nocontext  the lossy16 forward case without contexts (decode every call)
 *   local_to_model  kiln_pose_local_to_object, one pose, warm cache
 *   blend2          kiln_pose_blend of two poses, warm cache
 *   frame           per instance: 2 forward samples (the lossless and the lossy clip) + blend2
 *                   + local_to_model, 256 instances round-robin
 *   frame_threads   the frame case on 1 and on 2 threads (more with --threads N), each thread
 *                   playing its own share of the 256 instances (its own contexts, poses and
 *                   matrices) from the one blob and the two bindings they all share; best path
 *                   only. The threads are started once and released together for each
 *                   repetition, as a job system's workers are, so thread start and wake-up are
 *                   not timed. "ns_per_joint" is wall time per instance frame / 80, "speedup" the
 *                   1-thread wall time over this one for the same work (target: >= 1.8 on 2
 *                   threads, on a machine with 2 idle cores)
 * Figures are ns per joint (ns per call / 80), best of 40 short repetitions (5 with --quick),
 * so that other processes on the machine do not inflate them.
 * Usage: kiln_bench_anim [--quick] [--simd scalar|sse2|avx2|avx512] [--threads N]
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/anim_fixture.h"
#include "bench_util.h"
#include "kiln/anim.h"
#include "kiln/bake/cast.h"
#include "kiln/bake/cast_scene.h"

#define J 80
#define F 301
#define INSTANCES 256

static volatile float bench_sink;

/* ---- data: the anchor files, or a synthetic clip of the same shape ---------------------------- */
typedef struct anchor {
    af_bone bones[J];
    char names[J][16];
    float *values; /* F x J x 10 */
    int from_corpus;
} anchor;

static int load_corpus(anchor *a)
{
    char dir[512], path[600];
    if (!bench_corpus_dir(dir, sizeof dir)) return 0;
    size_t msize, asize;
    snprintf(path, sizeof path, "%s/bench/anchor_n80_model.cast", dir);
    void *mdata = bench_load(path, &msize);
    snprintf(path, sizeof path, "%s/bench/anchor_n80_anim.cast", dir);
    void *adata = bench_load(path, &asize);
    kiln_cast_doc *md = NULL, *ad = NULL;
    int ok = mdata && adata && kiln_cast_parse(mdata, msize, NULL, &md, NULL) == KILN_OK &&
             kiln_cast_parse(adata, asize, NULL, &ad, NULL) == KILN_OK;
    uint32_t nb = 0;
    for (uint32_t n = 0; ok && n < kiln_cast_node_count(md); n++) {
        if (kiln_cast_node_at(md, n)->id != KILN_CAST_ID_SKELETON) continue;
        int32_t parents[J];
        kiln_cast_skeleton sk;
        if (kiln_cast_get_skeleton(md, n, &sk, NULL) != KILN_OK || sk.bone_count != J ||
            kiln_cast_skeleton_parents(md, n, parents, J, NULL) != KILN_OK) {
            ok = 0;
            break;
        }
        for (uint32_t k = 0; k < J; k++) {
            kiln_cast_bone bone;
            if (kiln_cast_get_bone(md, kiln_cast_skeleton_bone(md, n, k), &bone, NULL) != KILN_OK || !bone.name) {
                ok = 0;
                break;
            }
            snprintf(a->names[k], 16, "%s", bone.name);
            af_bone *b = &a->bones[k];
            b->name = a->names[k];
            b->parent = parents[k];
            b->ssc = bone.segment_scale_compensate;
            memcpy(b->t, bone.local_position, sizeof b->t);
            memcpy(b->r, bone.local_rotation, sizeof b->r);
            memcpy(b->s, bone.scale, sizeof b->s);
        }
        nb = J;
        break;
    }
    ok = ok && nb == J;
    uint32_t filled = 0;
    for (uint32_t n = 0; ok && n < kiln_cast_node_count(ad); n++) {
        if (kiln_cast_node_at(ad, n)->id != KILN_CAST_ID_CURVE) continue;
        kiln_cast_curve c;
        if (kiln_cast_get_curve(ad, n, &c, NULL) != KILN_OK) continue;
        uint32_t j = 0;
        while (j < J && strcmp(a->names[j], c.node_name) != 0) j++;
        if (j == J) continue;
        static const int comp[KILN_CAST_CURVE_PROP_COUNT_] = {3, 0, 1, 2, 7, 8, 9, -1, -1};
        int cc = comp[c.property];
        if (cc < 0) continue;
        for (uint32_t k = 0; k < c.key_count; k++) {
            uint32_t f = kiln_cast_array_u32(&c.key_frames, k);
            if (f >= F) continue;
            float *dst = a->values + ((size_t)f * J + j) * 10 + cc;
            if (cc == 3) memcpy(dst, (const unsigned char *)c.key_values.data + 16u * k, 16);
            else dst[0] = kiln_cast_array_f32(&c.key_values, k);
        }
        filled++;
    }
    ok = ok && filled == J * 7;
    kiln_cast_free(md);
    kiln_cast_free(ad);
    free(mdata);
    free(adata);
    return ok;
}

/* A humanoid-like tree: a spine chain off the root, then chains of 3-6 bones hanging off
 * spine and upper bones (parents before children). */
static void synthesize(anchor *a)
{
    uint32_t st = 12345;
    for (uint32_t k = 0; k < J; k++) {
        snprintf(a->names[k], 16, "j%u", k);
        af_bone *b = &a->bones[k];
        b->name = a->names[k];
        b->parent = k == 0 ? -1 : (k < 7 ? (int32_t)k - 1 : -2);
        b->t[1] = 0.1f, b->r[3] = 1, b->s[0] = b->s[1] = b->s[2] = 1;
    }
    uint32_t k = 7;
    while (k < J) {
        uint32_t len = 3 + af_lcg(&st) % 4, from = af_lcg(&st) % k;
        for (uint32_t i = 0; i < len && k < J; i++, k++) a->bones[k].parent = i == 0 ? (int32_t)from : (int32_t)k - 1;
    }
    af_motion(F, J, 7, 30, a->values);
}

/* ---- timing ------------------------------------------------------------------------------------ */
typedef struct result {
    double ns_per_call;
    long iters;
} result;

static void emit(const char *name, const char *clip, const char *cache, kiln_simd simd, result r, int corpus)
{
    printf("{\"bench\":\"anim\",\"case\":\"%s\",\"clip\":\"%s\",\"joints\":%d,\"simd\":\"%s\",\"kernels\":\"%s\","
           "\"cache\":\"%s\",\"data\":\"%s\",\"ns_per_joint\":%.3f,\"ns_per_call\":%.1f,\"iters\":%ld}\n",
           name, clip, J, kiln_simd_name(simd), bench_case_kernels(name, simd), cache,
           corpus ? "anchor_n80" : "synthetic", r.ns_per_call / J, r.ns_per_call, r.iters);
    fprintf(stderr, "  %-6s %-15s %-9s %7.2f ns/joint  (%7.1f ns/call)\n", kiln_simd_name(simd), name, clip,
            r.ns_per_call / J, r.ns_per_call);
    fflush(stdout);
}

typedef struct instances {
    const kiln_anim_binding *bind[2];
    void *ctx[2][INSTANCES];
    kiln_soa_xform (*pose)[3][J / 8]; /* per instance: 2 sampled + 1 blended */
    float (*model)[J * 16];
    double *start;
    double *random_t;
    size_t random_count;
} instances;

static result run_sample(instances *in, int clip, int random, int use_context, int steps, int reps)
{
    result best = {1e30, 0};
    kiln_sample_desc d;
    memset(&d, 0, sizeof d);
    d.binding = in->bind[clip];
    d.loop = KILN_LOOP_WRAP;
    d.out_count = J / 8;
    size_t ri = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (int s = 0; s < steps; s++)
            for (int i = 0; i < INSTANCES; i++) {
                d.time_s = random ? in->random_t[ri++ % in->random_count] : in->start[i] + (r * steps + s) / 60.0;
                d.out = in->pose[i][clip];
                d.context = use_context ? in->ctx[clip][i] : NULL;
                kiln_sample(&d);
            }
        double ns = (bench_now() - t0) * 1e9 / ((double)steps * INSTANCES);
        if (ns < best.ns_per_call) best.ns_per_call = ns;
        best.iters += (long)steps * INSTANCES;
    }
    bench_sink += in->pose[0][clip][0].tx[0];
    return best;
}

static result run_frame(instances *in, const kiln_blob *skel, const kiln_soa_xform *rest, int steps, int reps)
{
    result best = {1e30, 0};
    kiln_sample_desc d;
    memset(&d, 0, sizeof d);
    d.loop = KILN_LOOP_WRAP;
    d.out_count = J / 8;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (int s = 0; s < steps; s++)
            for (int i = 0; i < INSTANCES; i++) {
                double t = in->start[i] + (r * steps + s) / 60.0;
                for (int c = 0; c < 2; c++) {
                    d.binding = in->bind[c], d.time_s = t * (c ? 0.9 : 1.0), d.out = in->pose[i][c];
                    d.context = in->ctx[c][i];
                    kiln_sample(&d);
                }
                kiln_blend_layer layers[2] = {{in->pose[i][0], 0.7f, NULL}, {in->pose[i][1], 0.3f, NULL}};
                kiln_pose_blend(layers, 2, rest, 0.1f, in->pose[i][2], J / 8);
                kiln_pose_local_to_object(skel, 0, in->pose[i][2], NULL, in->model[i], J);
            }
        double ns = (bench_now() - t0) * 1e9 / ((double)steps * INSTANCES);
        if (ns < best.ns_per_call) best.ns_per_call = ns;
        best.iters += (long)steps * INSTANCES;
    }
    bench_sink += in->model[0][12];
    return best;
}

/* ---- frame_threads ------------------------------------------------------------------------------ */
typedef struct frame_worker {
    instances *in;
    const kiln_blob *skel;
    const kiln_soa_xform *rest;
    int first, count; /* instances [first, first + count) */
    int steps, rep;
    double cpu_ns; /* the thread's CPU time for its share */
} frame_worker;

static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One thread's share of a repetition of the frame case: only its own instances' contexts,
 * poses and matrices are written; the blob, the bindings and the rest pose are shared. */
static void frame_worker_run(frame_worker *w)
{
    instances *in = w->in;
    double c0 = thread_cpu_ns();
    kiln_sample_desc d;
    memset(&d, 0, sizeof d);
    d.loop = KILN_LOOP_WRAP;
    d.out_count = J / 8;
    for (int s = 0; s < w->steps; s++)
        for (int i = w->first; i < w->first + w->count; i++) {
            double t = in->start[i] + (w->rep * w->steps + s) / 60.0;
            for (int c = 0; c < 2; c++) {
                d.binding = in->bind[c], d.time_s = t * (c ? 0.9 : 1.0), d.out = in->pose[i][c];
                d.context = in->ctx[c][i];
                kiln_sample(&d);
            }
            kiln_blend_layer layers[2] = {{in->pose[i][0], 0.7f, NULL}, {in->pose[i][1], 0.3f, NULL}};
            kiln_pose_blend(layers, 2, w->rest, 0.1f, in->pose[i][2], J / 8);
            kiln_pose_local_to_object(w->skel, 0, in->pose[i][2], NULL, in->model[i], J);
        }
    w->cpu_ns = thread_cpu_ns() - c0;
}

/* The worker threads, started once for all repetitions and released together for each, as
 * an engine's job workers are: thread start and wake-up stay outside the timed region. The
 * workers wait spinning (yielding to anything else runnable), so that each keeps its own core
 * between repetitions. A repetition announces itself (`generation`, `active` threads, the
 * calling thread playing the first share), waits until its workers are ready, starts the clock
 * and releases them (`go`); the clock stops when the last share is done. */
typedef struct frame_pool {
    atomic_int generation; /* of the current repetition; -1 stops the workers */
    atomic_int active, ready, done, go; /* ready/done: workers of this repetition; go: its generation */
    frame_worker *w;       /* one per thread; w[0] the calling thread's */
    pthread_t *threads;    /* threads[k - 1] plays w[k] */
    int started;           /* worker threads running */
} frame_pool;

typedef struct frame_pool_slot {
    frame_pool *pool;
    int index;
} frame_pool_slot;

static void *frame_pool_worker(void *arg)
{
    frame_pool_slot *slot = (frame_pool_slot *)arg;
    frame_pool *p = slot->pool;
    int seen = 0;
    for (;;) {
        int g;
        while ((g = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen) sched_yield();
        if (g < 0) return NULL;
        seen = g;
        if (slot->index >= atomic_load(&p->active)) continue;
        atomic_fetch_add(&p->ready, 1);
        while (atomic_load_explicit(&p->go, memory_order_acquire) != seen) sched_yield();
        frame_worker_run(&p->w[slot->index]);
        atomic_fetch_add_explicit(&p->done, 1, memory_order_release);
    }
}

/* Starts up to `threads` - 1 workers; p->started says how many run. 0 when nothing could be
 * set up at all. */
static int frame_pool_start(frame_pool *p, int threads, frame_pool_slot *slots)
{
    memset(p, 0, sizeof *p);
    atomic_init(&p->generation, 0), atomic_init(&p->active, 0);
    atomic_init(&p->ready, 0), atomic_init(&p->done, 0), atomic_init(&p->go, 0);
    p->w = calloc((size_t)threads, sizeof *p->w);
    p->threads = calloc((size_t)threads, sizeof *p->threads);
    if (!p->w || !p->threads) return free(p->w), free(p->threads), 0;
    for (int k = 1; k < threads; k++) {
        slots[k] = (frame_pool_slot){p, k};
        if (pthread_create(&p->threads[k - 1], NULL, frame_pool_worker, &slots[k]) != 0) break;
        p->started = k;
    }
    return 1;
}

static void frame_pool_stop(frame_pool *p)
{
    atomic_store(&p->generation, -1);
    for (int k = 0; k < p->started; k++) pthread_join(p->threads[k], NULL);
    free(p->w), free(p->threads);
}

/* One repetition of the frame case split over `threads` threads: wall time per instance
 * frame from the release to the end of the last share, NaN when the pool lacks the threads;
 * *cpu_out: the threads' CPU time per instance frame, added up. */
static double frame_threads_rep(frame_pool *p, instances *in, const kiln_blob *skel, const kiln_soa_xform *rest,
                                int threads, int steps, int rep, double *cpu_out)
{
    if (threads - 1 > p->started) return NAN;
    for (int k = 0; k < threads; k++) {
        int first = INSTANCES * k / threads;
        p->w[k] = (frame_worker){in, skel, rest, first, INSTANCES * (k + 1) / threads - first, steps, rep, 0};
    }
    atomic_store(&p->ready, 0), atomic_store(&p->done, 0), atomic_store(&p->active, threads);
    int generation = atomic_load(&p->generation) + 1;
    atomic_store_explicit(&p->generation, generation, memory_order_release);
    while (atomic_load(&p->ready) < threads - 1) sched_yield();
    double t0 = bench_now();
    atomic_store_explicit(&p->go, generation, memory_order_release);
    frame_worker_run(&p->w[0]);
    while (atomic_load_explicit(&p->done, memory_order_acquire) < threads - 1) sched_yield();
    double wall = (bench_now() - t0) * 1e9 / ((double)steps * INSTANCES), cpu = 0;
    for (int k = 0; k < threads; k++) cpu += p->w[k].cpu_ns;
    *cpu_out = cpu / ((double)steps * INSTANCES);
    return wall;
}

/* The frame case on 1..max_threads threads, the thread counts interleaved within each
 * repetition so that all of them meet the same load from other processes; best repetition
 * per count in out[n - 1], the CPU time of that repetition in cpu[n - 1]. */
static void run_frame_threads(instances *in, const kiln_blob *skel, const kiln_soa_xform *rest, int max_threads,
                              int steps, int reps, result *out, double *cpu)
{
    frame_pool pool;
    frame_pool_slot *slots = calloc((size_t)max_threads, sizeof *slots);
    int ok = slots && frame_pool_start(&pool, max_threads, slots);
    for (int n = 0; n < max_threads; n++) out[n] = (result){ok ? 1e30 : NAN, 0};
    if (!ok) return free(slots);
    for (int r = 0; r < reps; r++)
        for (int n = 1; n <= max_threads; n++) {
            double c = NAN, ns = frame_threads_rep(&pool, in, skel, rest, n, steps, r, &c);
            if (!(ns >= out[n - 1].ns_per_call)) out[n - 1].ns_per_call = ns, cpu[n - 1] = c; /* NaN sticks */
            out[n - 1].iters += (long)steps * INSTANCES;
        }
    bench_sink += in->model[0][12];
    frame_pool_stop(&pool);
    free(slots);
}

/* `one`: the 1-thread wall time; `cpu`, `cpu_one`: CPU time per instance frame, all threads
 * together, here and on one thread. "cpu_scaling" = threads x cpu_one / cpu is the speedup
 * the split would give with `threads` idle cores: below `threads` only by what the threads
 * cost each other (shared caches, memory bandwidth, a shared core's other hyperthread). */
static void emit_threads(kiln_simd simd, int threads, result r, double one, double cpu, double cpu_one, int corpus)
{
    double speedup = one / r.ns_per_call, scaling = threads * cpu_one / cpu;
    printf("{\"bench\":\"anim\",\"case\":\"frame_threads\",\"clip\":\"lossless+lossy16\",\"joints\":%d,"
           "\"simd\":\"%s\",\"kernels\":\"%s\",\"threads\":%d,\"cache\":\"256 instances\",\"data\":\"%s\","
           "\"ns_per_joint\":%.3f,\"ns_per_call\":%.1f,\"speedup\":%.3f,\"cpu_ns_per_call\":%.1f,"
           "\"cpu_scaling\":%.3f,\"iters\":%ld}\n",
           J, kiln_simd_name(simd), bench_case_kernels("frame", simd), threads, corpus ? "anchor_n80" : "synthetic",
           r.ns_per_call / J, r.ns_per_call, speedup, cpu, scaling, r.iters);
    fprintf(stderr,
            "  %-6s %-15s %d thread%s  %7.2f ns/joint wall (%7.1f ns per instance frame), %.2fx one thread; "
            "cpu %.1f ns per frame, %.2fx with idle cores",
            kiln_simd_name(simd), "frame_threads", threads, threads == 1 ? " " : "s", r.ns_per_call / J, r.ns_per_call,
            speedup, cpu, scaling);
    if (threads == 2) fprintf(stderr, "  target >= 1.8x: %s", speedup >= 1.8 ? "met" : "MISSED");
    fputc('\n', stderr);
    fflush(stdout);
}

static result run_l2m(const kiln_blob *skel, const kiln_soa_xform *pose, float *model, long calls, int reps)
{
    result best = {1e30, 0};
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (long i = 0; i < calls; i++) kiln_pose_local_to_object(skel, 0, pose, NULL, model, J);
        double ns = (bench_now() - t0) * 1e9 / (double)calls;
        if (ns < best.ns_per_call) best.ns_per_call = ns;
        best.iters += calls;
    }
    bench_sink += model[12];
    return best;
}

static result run_blend(const kiln_soa_xform *a, const kiln_soa_xform *b, const kiln_soa_xform *rest,
                        kiln_soa_xform *out, long calls, int reps)
{
    result best = {1e30, 0};
    kiln_blend_layer layers[2] = {{a, 0.6f, NULL}, {b, 0.4f, NULL}};
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (long i = 0; i < calls; i++) kiln_pose_blend(layers, 2, rest, 0.1f, out, J / 8);
        double ns = (bench_now() - t0) * 1e9 / (double)calls;
        if (ns < best.ns_per_call) best.ns_per_call = ns;
        best.iters += calls;
    }
    bench_sink += out[0].tx[0];
    return best;
}

int main(int argc, char **argv)
{
    int quick = bench_quick(argc, argv);
    kiln_simd only = KILN_SIMD_AUTO;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--simd") == 0) {
            const kiln_simd all[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
            for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
                if (strcmp(argv[i + 1], kiln_simd_name(all[k])) == 0) only = all[k];
        }
    int max_threads = 2;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--threads") == 0) max_threads = atoi(argv[i + 1]) > 1 ? atoi(argv[i + 1]) : 2;
    if (max_threads > INSTANCES) max_threads = INSTANCES;

    anchor *a = calloc(1, sizeof *a);
    a->values = calloc((size_t)F * J * 10, sizeof(float));
    if (!a || !a->values) return 1;
    a->from_corpus = load_corpus(a);
    if (!a->from_corpus) synthesize(a);

    af_joint joints[J];
    for (int j = 0; j < J; j++) joints[j] = (af_joint){a->names[j], AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}};
    af_skel skel = {J, a->bones};
    af_clip clips[2] = {
        {.name = "lossless", .framerate = 30, .frame_count = F, .joint_count = J, .joints = joints, .values = a->values,
         .width = 32, .all_tracks = 1},
        {.name = "lossy16", .framerate = 30, .frame_count = F, .joint_count = J, .joints = joints, .values = a->values,
         .width = 16, .all_tracks = 1},
    };
    size_t size;
    unsigned char *mem = af_build(&skel, clips, 2, &size);
    const kiln_blob *blob = af_load(mem, size);
    if (!blob) return 1;
    const kiln_soa_xform *rest = kiln_blob_rest_pose(blob, NULL);
    fprintf(stderr, "bench_anim: %s; data %s; clip sizes: lossless %llu B, lossy16 %llu B\n", kiln_build_info(),
            a->from_corpus ? "anchor_n80 (corpus)" : "synthetic anchor shape",
            (unsigned long long)kiln_blob_animations(blob, NULL)[0].data_size,
            (unsigned long long)kiln_blob_animations(blob, NULL)[1].data_size);

    instances in;
    memset(&in, 0, sizeof in);
    kiln_anim_bind_report rep;
    for (int c = 0; c < 2; c++) {
        in.bind[c] = af_bind(blob, (uint32_t)c, blob, 0, &rep);
        if (!in.bind[c] || !rep.identity_map) return 1;
        for (int i = 0; i < INSTANCES; i++) in.ctx[c][i] = af_context(in.bind[c]);
    }
    in.pose = aligned_alloc(64, sizeof *in.pose * INSTANCES);
    in.model = aligned_alloc(64, sizeof *in.model * INSTANCES);
    in.start = malloc(sizeof(double) * INSTANCES);
    in.random_count = 1u << 16;
    in.random_t = malloc(sizeof(double) * in.random_count);
    uint32_t st = 99;
    for (int i = 0; i < INSTANCES; i++) in.start[i] = 10.0 * i / INSTANCES;
    for (size_t i = 0; i < in.random_count; i++) in.random_t[i] = 10.0 * af_lcg(&st) / 16777216.0;

    /* Many short repetitions, best one reported: robust to other processes on the machine. */
    const int steps = quick ? 8 : 16, reps = quick ? 5 : 40;
    const long calls = quick ? 2000 : 5000;
    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int p = 0; p < np; p++) {
        if (only != KILN_SIMD_AUTO && paths[p] != only) continue;
        kiln_simd_force(paths[p]);
        bench_note_kernels("bench_anim", paths[p]);
        const char *clip_name[2] = {"lossless", "lossy16"};
        for (int c = 0; c < 2; c++) {
            emit("sample_forward", clip_name[c], "256 instances", paths[p], run_sample(&in, c, 0, 1, steps, reps),
                 a->from_corpus);
            emit("sample_random", clip_name[c], "256 instances", paths[p], run_sample(&in, c, 1, 1, steps, reps),
                 a->from_corpus);
        }
        /* the decoded-row cache against decoding every call, many instances in flight */
        emit("sample_forward_nocontext", "lossy16", "256 instances", paths[p], run_sample(&in, 1, 0, 0, steps, reps),
             a->from_corpus);
        kiln_soa_xform *pa = in.pose[0][0], *pb = in.pose[1][0];
        emit("local_to_model", "-", "warm", paths[p], run_l2m(blob, pa, in.model[0], calls, reps), a->from_corpus);
        emit("blend2", "-", "warm", paths[p], run_blend(pa, pb, rest, in.pose[2][2], calls, reps), a->from_corpus);
        emit("frame", "lossless+lossy16", "256 instances", paths[p], run_frame(&in, blob, rest, steps / 2, reps),
             a->from_corpus);
    }
    /* threads: the best path (or the one asked for); no path change while they run */
    kiln_simd tp = kiln_simd_force(only);
    result *tr = calloc((size_t)max_threads, sizeof *tr);
    double *tc = calloc((size_t)max_threads, sizeof *tc);
    if (!tr || !tc) return 1;
    run_frame_threads(&in, blob, rest, max_threads, steps, reps, tr, tc);
    for (int n = 1; n <= max_threads; n++)
        emit_threads(tp, n, tr[n - 1], tr[0].ns_per_call, tc[n - 1], tc[0], a->from_corpus);
    free(tr), free(tc);
    kiln_simd_force(KILN_SIMD_AUTO);
    for (int c = 0; c < 2; c++) {
        for (int i = 0; i < INSTANCES; i++) free(in.ctx[c][i]);
        free((void *)in.bind[c]);
    }
    free(in.pose), free(in.model), free(in.start), free(in.random_t);
    free(mem), free(a->values), free(a);
    return 0;
}
