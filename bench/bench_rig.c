/* IK and constraint solving ("a constraint + IK frame"): kiln_rig_solve on a sampled pose whose
 * model matrices are up to date, as a game runs it after sampling and blending.
 *
 * Rigs (one JSON line per rig and stage on stdout; a summary on stderr):
 *   ik_polevec    corpus ik_polevec_model + anim_ik_polevec: one two-bone leg with a pole vector
 *                 bone and the target rotation, 6 bones, poses sampled over the clip
 *   constraints   corpus constraints_model + anim_constraints: 7 constraints (pt, or, sc, with
 *                 mo, co, skips, weights), 10 bones, poses sampled over the clip
 *   character     samples/character.cast: a 3-joint spine IK and an orient constraint with mo,
 *                 8 bones, the IK target and the head driver moved per pose
 *   legs8         synthetic: 8 two-bone legs with pole vectors + 16 constraints (pt, or, sc on
 *                 props following the ankles and knees), 57 bones, targets moved per pose
 *   tails4        synthetic: 4 chains of 6 joints (FABRIK), a moving target each, 29 bones
 * Stages: "all" (IK then constraints), and "ik" / "constraints" alone where the rig has both.
 * A solve changes its pose in place, so every call starts from a fresh copy of one of 32
 * prepared poses (local pose and model matrices); the copy is timed alone and its best time
 * subtracted from the best time with the solve, and printed (ns_copy) together with the time
 * a plain copy of that traffic takes at memory speed (bench_bandwidth_seconds). Figures are
 * ns per solve, best of 40 repetitions (5 with --quick).
 * The corpus rigs are left out (with a note) when the corpus is absent.
 * Each line names the SIMD path that ran ("simd"): it decides how many independent two-bone
 * handles are solved at once (scalar: one; SSE2: 4; AVX2: 8). The summary compares the IK
 * stage's ns per handle with the target of 120 and the constraint stage's ns per constraint
 * with the target of 40 (JSON: "target_ns", "meets").
 * The scratch is prepared once per rig and stage (kiln_rig_prepare, as a game does per
 * character) unless --unprepared is given, which times solves that derive the plan each call.
 * --digest prints a digest of the solves' results (pose and model matrices) per rig and stage,
 * to compare builds.
 * Usage: kiln_bench_rig [--quick] [--unprepared] [--digest] [--rig NAME] [--simd best|all|scalar|sse2|avx2|avx512]
 *   --rig: only that rig (e.g. for callgrind); --simd: the path to force, or every path the CPU
 *   has in turn (default: the best).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/rig_fixture.h"
#include "bench_util.h"
#include "kiln/anim.h"
#include "kiln/bake/bake.h"
#include "kiln/rig.h"

#define POSES 32
#define TARGET_NS_IK 120.0        /* per two-bone handle, the result written into the pose */
#define TARGET_NS_CONSTRAINT 40.0 /* per constraint */

static volatile float bench_sink;
static int bench_prepared = 1; /* kiln_rig_prepare once per run, desc.prepared set */
static int bench_digest;       /* --digest: print an FNV-1a digest of every solve's output */

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

typedef struct rig_case {
    const char *name, *data;
    void *mem;                /* af/rf-built blob (free), or NULL */
    kiln_bake_result baked;   /* baked blob, or zeroed */
    const kiln_blob *blob;
    uint32_t bones, soa, nik, ncn;
    int two_bone;             /* every IK handle has a three-joint chain */
    kiln_soa_xform *poses;    /* POSES x soa */
    float *models;            /* POSES x bones x 16 */
} rig_case;

static void case_alloc(rig_case *c)
{
    uint32_t ns = 0;
    const kiln_blob_skeleton *sk = kiln_blob_skeletons(c->blob, &ns);
    c->bones = sk[0].bone_count, c->soa = sk[0].soa_count;
    const kiln_blob_ik_handle *ik = kiln_rig_ik_handles(c->blob, 0, &c->nik);
    c->two_bone = 1;
    for (uint32_t i = 0; i < c->nik; i++) c->two_bone &= ik[i].chain_length == 3;
    kiln_rig_constraints(c->blob, 0, &c->ncn);
    c->poses = aligned_alloc(64, sizeof *c->poses * c->soa * POSES);
    c->models = aligned_alloc(64, (sizeof(float) * 16 * c->bones * POSES + 63) & ~(size_t)63);
    if (!c->poses || !c->models) exit(1);
}

static void case_free(rig_case *c)
{
    free(c->poses), free(c->models), free(c->mem);
    if (c->baked.blob) kiln_bake_result_free(&c->baked);
    memset(c, 0, sizeof *c);
}

/* The model matrices of pose k. */
static void case_forward(rig_case *c, uint32_t k)
{
    kiln_pose_local_to_object(c->blob, 0, c->poses + (size_t)k * c->soa, NULL, c->models + (size_t)k * 16 * c->bones,
                             c->bones);
}

/* ---- rigs from files ------------------------------------------------------------------------------ */
static int bake_files(rig_case *c, const char *const *paths, uint32_t n)
{
    void *data[2] = {NULL, NULL};
    size_t size[2] = {0, 0};
    kiln_bake_input in[2];
    int ok = 1;
    for (uint32_t i = 0; i < n; i++) {
        data[i] = bench_load(paths[i], &size[i]);
        ok &= data[i] != NULL;
        in[i] = (kiln_bake_input){paths[i], data[i], size[i], NULL};
    }
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    ok = ok && kiln_bake(in, n, &o, &c->baked, NULL) == KILN_OK &&
         kiln_blob_load(c->baked.blob, c->baked.size, 0, &c->blob, NULL) == KILN_OK;
    for (uint32_t i = 0; i < n; i++) free(data[i]);
    return ok;
}

/* A corpus model + animation: POSES poses sampled evenly over the clip. */
static int corpus_case(rig_case *c, const char *name, const char *model, const char *anim)
{
    char dir[512], mp[700], ap[700];
    memset(c, 0, sizeof *c);
    if (!bench_corpus_dir(dir, sizeof dir)) return 0;
    snprintf(mp, sizeof mp, "%s/%s", dir, model);
    snprintf(ap, sizeof ap, "%s/%s", dir, anim);
    const char *paths[2] = {mp, ap};
    if (!bake_files(c, paths, 2)) {
        case_free(c);
        return 0;
    }
    c->name = name, c->data = "corpus";
    case_alloc(c);
    kiln_anim_binding *bind = af_bind(c->blob, 0, c->blob, 0, NULL);
    if (!bind) exit(1);
    double duration = kiln_anim_duration(c->blob, 0);
    for (uint32_t k = 0; k < POSES; k++) {
        kiln_sample_desc d;
        memset(&d, 0, sizeof d);
        d.binding = bind, d.time_s = duration * k / POSES, d.out = c->poses + (size_t)k * c->soa, d.out_count = c->soa;
        kiln_sample(&d);
        case_forward(c, k);
    }
    free(bind);
    return 1;
}

/* Moves bone `b` of every pose by a random offset of up to `amp` per axis from the rest. */
static void jitter(rig_case *c, uint32_t b, float amp, uint32_t *st)
{
    for (uint32_t k = 0; k < POSES; k++)
        for (unsigned a = 0; a < 3; a++) *rf_lane(c->poses + (size_t)k * c->soa, b, a) += af_rand(st, -amp, amp);
}

static void rest_poses(rig_case *c)
{
    const kiln_soa_xform *rest = kiln_blob_rest_pose(c->blob, NULL);
    for (uint32_t k = 0; k < POSES; k++) memcpy(c->poses + (size_t)k * c->soa, rest, sizeof *rest * c->soa);
}

static int character_case(rig_case *c)
{
    memset(c, 0, sizeof *c);
    const char *paths[1] = {KILN_SOURCE_DIR "/samples/character.cast"};
    if (!bake_files(c, paths, 1)) {
        case_free(c);
        return 0;
    }
    c->name = "character", c->data = "sample";
    case_alloc(c);
    rest_poses(c);
    uint32_t st = 7;
    jitter(c, kiln_blob_find_bone(c->blob, 0, "ik_target"), 0.08f, &st);
    jitter(c, kiln_blob_find_bone(c->blob, 0, "head_driver"), 0.3f, &st);
    for (uint32_t k = 0; k < POSES; k++) case_forward(c, k);
    return 1;
}

/* ---- synthetic rigs ------------------------------------------------------------------------------- */
static void synthetic_finish(rig_case *c, const af_bone *bones, uint32_t nb, const kiln_blob_constraint *cn,
                             uint32_t ncn, const kiln_blob_ik_handle *ik, uint32_t nik, const uint32_t *movers,
                             uint32_t nmovers, float amp)
{
    size_t size;
    af_skel skel = {nb, bones};
    c->mem = rf_build(&skel, cn, ncn, ik, nik, &size);
    c->blob = af_load(c->mem, size);
    if (!c->blob) exit(1);
    case_alloc(c);
    rest_poses(c);
    uint32_t st = 11;
    for (uint32_t i = 0; i < nmovers; i++) jitter(c, movers[i], amp, &st);
    for (uint32_t k = 0; k < POSES; k++) case_forward(c, k);
}

/* 8 legs (hip, knee, ankle, target, pole) and 16 props constrained to the ankles and knees. */
static void legs_case(rig_case *c)
{
    enum { LEGS = 8, PROPS = 16, N = 1 + LEGS * 5 + PROPS };
    static char names[N][16];
    af_bone b[N];
    kiln_blob_ik_handle ik[LEGS];
    kiln_blob_constraint cn[PROPS];
    uint32_t movers[LEGS], n = 0;
    memset(c, 0, sizeof *c);
    c->name = "legs8", c->data = "synthetic";
    snprintf(names[n], 16, "root");
    b[n] = af_bone_at(names[n], -1, 0, 0, 0), n++;
    for (uint32_t i = 0; i < LEGS; i++) {
        float x = (float)i - 3.5f;
        uint32_t hip = n;
        snprintf(names[n], 16, "hip%u", i), b[n] = af_bone_at(names[n], 0, x, 1, 0), n++;
        snprintf(names[n], 16, "knee%u", i), b[n] = af_bone_at(names[n], (int32_t)hip, 0, -0.5f, 0);
        af_axis_angle(1, 0, 0, 0.3, b[n].r), n++;
        snprintf(names[n], 16, "ankle%u", i), b[n] = af_bone_at(names[n], (int32_t)hip + 1, 0, -0.5f, 0), n++;
        snprintf(names[n], 16, "target%u", i), b[n] = af_bone_at(names[n], 0, x, 0.3f, 0.1f), n++;
        snprintf(names[n], 16, "pole%u", i), b[n] = af_bone_at(names[n], 0, x, 0.5f, 2), n++;
        ik[i] = rf_ik(0, hip, hip + 2, 3, hip + 3);
        ik[i].pole_vector_bone = hip + 4, ik[i].order = i;
        ik[i].flags = i % 2 ? KILN_IK_USE_TARGET_ROTATION : 0u;
        movers[i] = hip + 3;
    }
    for (uint32_t j = 0; j < PROPS; j++) {
        snprintf(names[n], 16, "prop%u", j), b[n] = af_bone_at(names[n], 0, 0, 2, (float)j);
        uint32_t leg = 1 + (j % LEGS) * 5, type = j % 3;
        cn[j] = rf_constraint(type, 0, n, leg + (j < LEGS ? 2 : 1));
        cn[j].order = j;
        if (j % 4 == 1) cn[j].flags = KILN_CONSTRAINT_SKIP_Y;
        if (j % 5 == 2) cn[j].weight = 0.5f;
        n++;
    }
    synthetic_finish(c, b, n, cn, PROPS, ik, LEGS, movers, LEGS, 0.25f);
}

/* 4 tails of 6 joints each (FABRIK), with a target and a pole each. */
static void tails_case(rig_case *c)
{
    enum { TAILS = 4, JOINTS = 6, N = 1 + TAILS * (JOINTS + 1) };
    static char names[N][16];
    af_bone b[N];
    kiln_blob_ik_handle ik[TAILS];
    uint32_t movers[TAILS], n = 0;
    memset(c, 0, sizeof *c);
    c->name = "tails4", c->data = "synthetic";
    snprintf(names[n], 16, "root");
    b[n] = af_bone_at(names[n], -1, 0, 0, 0), n++;
    for (uint32_t i = 0; i < TAILS; i++) {
        uint32_t first = n;
        for (uint32_t j = 0; j < JOINTS; j++) {
            snprintf(names[n], 16, "t%uj%u", i, j);
            b[n] = j ? af_bone_at(names[n], (int32_t)n - 1, 0, -0.2f, 0) : af_bone_at(names[n], 0, (float)i, 1.5f, 0);
            if (j) af_axis_angle(1, 0.2, 0, 0.15, b[n].r);
            n++;
        }
        snprintf(names[n], 16, "target%u", i), b[n] = af_bone_at(names[n], 0, (float)i + 0.3f, 0.8f, 0.4f);
        ik[i] = rf_ik(0, first, first + JOINTS - 1, JOINTS, n);
        ik[i].order = i;
        movers[i] = n++;
    }
    synthetic_finish(c, b, n, NULL, 0, ik, TAILS, movers, TAILS, 0.3f);
}

/* ---- timing --------------------------------------------------------------------------------------- */
typedef struct timing {
    double ns_solve, ns_copy;
    long iters;
    uint64_t digest; /* of the first repetition's results (--digest) */
} timing;

static timing run(rig_case *c, uint32_t stages, int reps, int calls)
{
    kiln_soa_xform *local = aligned_alloc(64, sizeof *local * c->soa);
    float *model = aligned_alloc(64, (sizeof(float) * 16 * c->bones + 63) & ~(size_t)63);
    size_t ssize = kiln_rig_scratch_size(c->blob, 0);
    void *scratch = aligned_alloc(64, ssize);
    if (!local || !model || !scratch) exit(1);
    kiln_rig_desc d;
    memset(&d, 0, sizeof d);
    d.blob = c->blob, d.local = local, d.soa_count = c->soa, d.object = model, d.bone_count = c->bones;
    d.stages = stages, d.scratch = scratch, d.scratch_size = ssize;
    if (bench_prepared) {
        if (kiln_rig_prepare(c->blob, 0, scratch, ssize) != KILN_OK) exit(1);
        d.prepared = 1;
    }
    size_t pbytes = sizeof *local * c->soa, mbytes = sizeof(float) * 16 * c->bones;
    timing best = {1e30, 1e30, 0, 0xcbf29ce484222325ull};
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (int i = 0; i < calls; i++) {
            uint32_t k = (uint32_t)i % POSES;
            memcpy(local, c->poses + (size_t)k * c->soa, pbytes);
            memcpy(model, c->models + (size_t)k * 16 * c->bones, mbytes);
            kiln_rig_solve(&d);
            if (bench_digest && r == 0) {
                best.digest = fnv1a(best.digest, local, pbytes);
                best.digest = fnv1a(best.digest, model, mbytes);
            }
        }
        double t1 = bench_now();
        for (int i = 0; i < calls; i++) {
            uint32_t k = (uint32_t)i % POSES;
            memcpy(local, c->poses + (size_t)k * c->soa, pbytes);
            memcpy(model, c->models + (size_t)k * 16 * c->bones, mbytes);
            bench_sink += model[12];
        }
        double t2 = bench_now();
        /* best of each loop on its own: a preemption in either cannot make the difference
         * negative or inflate it */
        double total = (t1 - t0) * 1e9 / calls, copy = (t2 - t1) * 1e9 / calls;
        if (total < best.ns_solve) best.ns_solve = total;
        if (copy < best.ns_copy) best.ns_copy = copy;
        best.iters += calls;
        bench_sink += model[12] + local[0].tx[0];
    }
    free(local), free(model), free(scratch);
    best.ns_solve = best.ns_solve > best.ns_copy ? best.ns_solve - best.ns_copy : 0.0;
    return best;
}

static void emit(rig_case *c, const char *stage, uint32_t stages, int reps, int calls)
{
    timing t = run(c, stages, reps, calls);
    size_t bytes = sizeof(kiln_soa_xform) * c->soa + sizeof(float) * 16 * c->bones;
    double bw_ns = bench_bandwidth_seconds(bytes, bytes, 50) * 1e9;
    uint32_t all = stages ? stages : KILN_RIG_IK | KILN_RIG_CONSTRAINTS;
    uint32_t nik = all & KILN_RIG_IK ? c->nik : 0, ncn = all & KILN_RIG_CONSTRAINTS ? c->ncn : 0;
    double per = t.ns_solve / (nik + ncn ? nik + ncn : 1);
    /* a target applies to a stage that runs one kind of item (FABRIK rigs have none) */
    double target = !ncn && nik && c->two_bone ? TARGET_NS_IK : !nik && ncn ? TARGET_NS_CONSTRAINT : 0.0;
    const char *simd = kiln_simd_name(kiln_simd_active());
    printf("{\"bench\":\"rig\",\"case\":\"solve\",\"rig\":\"%s\",\"data\":\"%s\",\"stage\":\"%s\",\"bones\":%u,"
           "\"ik_handles\":%u,\"constraints\":%u,\"simd\":\"%s\",\"prepared\":%s,\"ns_per_solve\":%.1f,\"ns_per_item\":%.1f,"
           "\"target_ns\":%.0f,\"meets\":%s,\"ns_copy\":%.1f,\"ns_copy_bandwidth\":%.1f,\"iters\":%ld}\n",
           c->name, c->data, stage, c->bones, nik, ncn, simd, bench_prepared ? "true" : "false", t.ns_solve, per, target,
           target > 0.0 ? (per <= target ? "true" : "false") : "null", t.ns_copy, bw_ns, t.iters);
    char verdict[48] = "";
    if (target > 0.0)
        snprintf(verdict, sizeof verdict, "  %s target %.0f", per <= target ? "meets" : "misses", target);
    fprintf(stderr, "  %-6s %-12s %-11s %3u bones %2u IK %2u constraints  %9.1f ns/solve  %7.1f ns/item%s  (reset copy %.1f ns)\n",
            simd, c->name, stage, c->bones, nik, ncn, t.ns_solve, per, verdict, t.ns_copy);
    if (bench_digest)
        fprintf(stderr, "  %-6s %-12s %-11s digest %016llx\n", simd, c->name, stage, (unsigned long long)t.digest);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int quick = bench_quick(argc, argv);
    const char *only = NULL, *simd = "best";
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--unprepared") == 0) bench_prepared = 0;
        else if (strcmp(argv[i], "--digest") == 0) bench_digest = 1;
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--rig") == 0) only = argv[i + 1];
        if (strcmp(argv[i], "--simd") == 0) simd = argv[i + 1];
    }
    static const kiln_simd every[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
    kiln_simd paths[4];
    int npaths = 0;
    if (strcmp(simd, "best") == 0) {
        paths[npaths++] = KILN_SIMD_AUTO;
    } else {
        for (int p = 0; p < 4; p++)
            if (strcmp(simd, "all") == 0 || strcmp(simd, kiln_simd_name(every[p])) == 0) {
                if (kiln_simd_force(every[p]) == every[p]) paths[npaths++] = every[p];
                else fprintf(stderr, "  (%s: not available on this CPU or build; skipped)\n", kiln_simd_name(every[p]));
            }
        kiln_simd_force(KILN_SIMD_AUTO);
        if (!npaths) {
            fprintf(stderr, "usage: kiln_bench_rig [--quick] [--unprepared] [--digest] [--rig NAME] [--simd best|all|scalar|sse2|avx2|avx512]\n");
            return 2;
        }
    }
    const int reps = quick ? 5 : 40, calls = quick ? 256 : 2048;
    fprintf(stderr, "bench_rig: %s; two-bone IK (independent handles side by side in SIMD lanes) and constraints "
                    "in float, FABRIK in double; targets: %.0f ns per two-bone handle, %.0f ns per constraint\n",
            kiln_build_info(), TARGET_NS_IK, TARGET_NS_CONSTRAINT);
    rig_case cases[5];
    int n = 0;
    if (corpus_case(&cases[n], "ik_polevec", "ik_polevec_model.cast", "anim_ik_polevec.cast")) n++;
    else fprintf(stderr, "  (corpus ik_polevec rig not found: set KILN_SHARED_DIR; skipped)\n");
    if (corpus_case(&cases[n], "constraints", "constraints_model.cast", "anim_constraints.cast")) n++;
    else fprintf(stderr, "  (corpus constraints rig not found: skipped)\n");
    if (character_case(&cases[n])) n++;
    legs_case(&cases[n++]);
    tails_case(&cases[n++]);
    for (int p = 0; p < npaths; p++) {
        kiln_simd_force(paths[p]);
        for (int i = 0; i < n; i++) {
            rig_case *c = &cases[i];
            if (only && strcmp(only, c->name) != 0) continue;
            emit(c, "all", 0, reps, calls);
            if (c->nik && c->ncn) {
                emit(c, "ik", KILN_RIG_IK, reps, calls);
                emit(c, "constraints", KILN_RIG_CONSTRAINTS, reps, calls);
            }
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    for (int i = 0; i < n; i++) case_free(&cases[i]);
    return 0;
}
