/* The two-bone IK handles solved side by side in SIMD lanes (SSE2: 4, AVX2: 8) against the
 * scalar path, which solves them one at a time in file order (the reference): every path the
 * CPU has (kiln_simd_force) gives the same local rotations, model matrices and report within
 * 1e-5, reaches reachable goals within 1e-5 m and keeps the bone lengths within 1e-5 relative.
 *
 * The rig mixes what decides whether handles may share a batch and what sends a lane back to
 * the scalar code: legs with and without pole vectors, pole bones (twist) and the target
 * rotation; goals inside, near and beyond the reach; a straight leg (the hinge fallback); a
 * leg whose target is another leg's ankle (it must see that leg's result), a leg hanging
 * under another's ankle (it moves with it), scaled hips with and without segment scale
 * compensation (the model matrices the batch writes are kiln__bone_to_model's). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rig_fixture.h"
#include "kiln/anim.h"

#define TOL_PATH 1e-5  /* paths against the scalar one: rotation components, positions (m) */
#define TOL_REACH 1e-5 /* end effector on a reachable goal (m) */
#define TOL_LEN 1e-5   /* bone lengths, relative */

enum { LEGS = 21, PER_LEG = 5, N = 1 + LEGS * PER_LEG, POSES = 24 };

/* Bones of leg i: hip, knee, ankle, target, pole (the hip under the root, or for leg 9 under
 * leg 8's ankle; leg 5's target is leg 4's ankle). */
static uint32_t hip_of(uint32_t i) { return 1 + i * PER_LEG; }

typedef struct legs {
    unsigned char *mem;
    const kiln_blob *blob;
    rf_pose pose;
    kiln_blob_ik_handle ik[LEGS];
    kiln_soa_xform *start_local;  /* POSES poses */
    float *start_model;
} legs;

static void legs_make(legs *L)
{
    static char names[N][16];
    af_bone b[N];
    uint32_t n = 0;
    snprintf(names[n], 16, "root");
    b[n] = af_bone_at(names[n], -1, 0, 0, 0), n++;
    for (uint32_t i = 0; i < LEGS; i++) {
        uint32_t hip = n;
        float x = (float)i - 10.0f;
        int32_t parent = i == 9 ? (int32_t)(hip_of(8) + 2) : 0;
        snprintf(names[n], 16, "hip%u", i);
        b[n] = i == 9 ? af_bone_at(names[n], parent, 0, -0.1f, 0) : af_bone_at(names[n], 0, x, 1, 0);
        if (i % 7 == 4) b[n].s[0] = 1.3f, b[n].s[1] = 0.8f, b[n].s[2] = 1.1f; /* the knee compensates (SSC) */
        if (i % 7 == 6) b[n].s[0] = b[n].s[1] = b[n].s[2] = 1.25f, b[n].ssc = 0;
        n++;
        snprintf(names[n], 16, "knee%u", i), b[n] = af_bone_at(names[n], (int32_t)hip, 0, -0.5f, 0);
        if (i != 3) af_axis_angle(1, 0.1 * (i % 3), 0, 0.2 + 0.05 * i, b[n].r); /* leg 3 straight */
        n++;
        snprintf(names[n], 16, "ankle%u", i), b[n] = af_bone_at(names[n], (int32_t)hip + 1, 0, -0.4f - 0.01f * (float)i, 0);
        n++;
        snprintf(names[n], 16, "target%u", i), b[n] = af_bone_at(names[n], 0, x, 0.3f, 0.1f);
        af_axis_angle(0, 1, 0.2, 0.3 * i, b[n].r), n++;
        snprintf(names[n], 16, "pole%u", i), b[n] = af_bone_at(names[n], 0, x + 0.2f, 0.5f, 2), n++;
        L->ik[i] = rf_ik(0, hip, hip + 2, 3, i == 5 ? hip_of(4) + 2 : hip + 3);
        L->ik[i].order = i;
        if (i % 4 != 1) L->ik[i].pole_vector_bone = hip + 4;
        if (i % 3 == 2) L->ik[i].pole_bone = hip + 4; /* its local X angle twists the plane */
        L->ik[i].flags = i % 2 ? KILN_IK_USE_TARGET_ROTATION : 0u;
        for (int k = 0; k < 3; k++) L->ik[i].target_offset[k] = i % 6 == 0 ? 0.05f * (float)(k + 1) : 0.0f;
    }
    size_t size;
    af_skel skel = {N, b};
    L->mem = rf_build(&skel, NULL, 0, L->ik, LEGS, &size);
    kiln_diag err;
    cr_assert_eq(kiln_blob_load(L->mem, size, 0, &L->blob, &err), KILN_OK, "%s: %s", err.path, err.message);
    rf_pose_init(&L->pose, L->blob, 0);
    /* poses: targets and poles moved, goals from folded to beyond the reach */
    uint32_t soa = L->pose.soa_count, st = 99;
    L->start_local = malloc(sizeof *L->start_local * soa * POSES);
    L->start_model = malloc(sizeof(float) * 16 * N * POSES);
    cr_assert(L->start_local && L->start_model);
    kiln_soa_xform *rest = malloc(sizeof *rest * soa);
    memcpy(rest, L->pose.local, sizeof *rest * soa);
    for (uint32_t k = 0; k < POSES; k++) {
        memcpy(L->pose.local, rest, sizeof *rest * soa);
        for (uint32_t i = 0; i < LEGS; i++) {
            uint32_t t = hip_of(i) + 3, p = hip_of(i) + 4;
            float reach = k % 4 == 3 ? 1.3f : 0.75f; /* every fourth pose: goals out of reach */
            for (unsigned a = 0; a < 3; a++) {
                *rf_lane(L->pose.local, t, a) += af_rand(&st, -reach, reach) * (a == 1 ? 1.0f : 0.5f);
                *rf_lane(L->pose.local, p, a) += af_rand(&st, -0.5f, 0.5f);
            }
            float tw[4];
            af_axis_angle(1, 0, 0, af_rand(&st, -2, 2), tw);
            for (unsigned a = 0; a < 4; a++) *rf_lane(L->pose.local, p, 3 + a) = tw[a];
        }
        /* leg 7's goal just inside its reach, in the band where the chain is straight to float
         * precision (hip (x, 1, 0), reach 0.5 + 0.47 = 0.97) */
        uint32_t t7 = hip_of(7) + 3;
        *rf_lane(L->pose.local, t7, 0) = -3.0f, *rf_lane(L->pose.local, t7, 1) = 1.0f - 0.97f * (1.0f - 0.5e-4f * (float)(k % 3));
        *rf_lane(L->pose.local, t7, 2) = 0.0f;
        cr_assert_eq(rf_forward(&L->pose), KILN_OK);
        memcpy(L->start_local + (size_t)k * soa, L->pose.local, sizeof *rest * soa);
        memcpy(L->start_model + (size_t)k * 16 * N, L->pose.model, sizeof(float) * 16 * N);
    }
    free(rest);
}

static void legs_free(legs *L)
{
    rf_pose_free(&L->pose);
    free(L->start_local), free(L->start_model), free(L->mem);
}

static void legs_reset(legs *L, uint32_t k)
{
    memcpy(L->pose.local, L->start_local + (size_t)k * L->pose.soa_count, sizeof *L->pose.local * L->pose.soa_count);
    memcpy(L->pose.model, L->start_model + (size_t)k * 16 * N, sizeof(float) * 16 * N);
}

static double qdist(const float *a, const float *b)
{
    double d = 0, s = 0;
    for (int k = 0; k < 4; k++) d += (double)a[k] * b[k];
    s = d < 0 ? -1.0 : 1.0;
    double worst = 0;
    for (int k = 0; k < 4; k++) worst = fmax(worst, fabs(a[k] - s * b[k]));
    return worst;
}

static void local_q(const rf_pose *p, uint32_t b, float q[4])
{
    for (unsigned k = 0; k < 4; k++) q[k] = *rf_lane(p->local, b, 3 + k);
}

/* Bones b0..b(n-1) under `parent`, each at a random offset with a random rotation (seed). */
static void random_bones(af_bone *b, char (*names)[16], const int32_t *parent, uint32_t n, uint32_t seed)
{
    uint32_t st = seed;
    for (uint32_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "b%u", i);
        b[i] = af_bone_at(names[i], parent[i], (float)af_rand(&st, -1, 1), (float)af_rand(&st, -1, 1),
                          (float)af_rand(&st, -1, 1));
        af_axis_angle(af_rand(&st, -1, 1), af_rand(&st, -1, 1), af_rand(&st, -1, 1) + 0.01, af_rand(&st, -3, 3), b[i].r);
    }
}

Test(rig_simd, every_path_matches_the_serial_scalar_solve)
{
    legs L;
    legs_make(&L);
    const uint32_t soa = L.pose.soa_count;
    kiln_soa_xform *ref_local = malloc(sizeof *ref_local * soa * POSES);
    float *ref_model = malloc(sizeof(float) * 16 * N * POSES);
    kiln_rig_report ref_rep[POSES];
    cr_assert(ref_local && ref_model);
    cr_assert_eq(kiln_simd_force(KILN_SIMD_SCALAR), KILN_SIMD_SCALAR);
    for (uint32_t k = 0; k < POSES; k++) {
        legs_reset(&L, k);
        cr_assert_eq(rf_solve(&L.pose, &ref_rep[k]), KILN_OK);
        memcpy(ref_local + (size_t)k * soa, L.pose.local, sizeof *ref_local * soa);
        memcpy(ref_model + (size_t)k * 16 * N, L.pose.model, sizeof(float) * 16 * N);
        cr_assert_eq(ref_rep[k].ik_solved, LEGS);
    }
    static const kiln_simd paths[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
    uint32_t unreachable = 0, tested = 0;
    for (size_t pi = 0; pi < sizeof paths / sizeof *paths; pi++) {
        if (kiln_simd_force(paths[pi]) != paths[pi]) {
            fprintf(stderr, "rig simd: %s not available here, skipped\n", kiln_simd_name(paths[pi]));
            continue;
        }
        tested++;
        double worst_q = 0, worst_p = 0, worst_end = 0, worst_len = 0, worst_m = 0;
        static float fresh[16 * N];
        for (uint32_t k = 0; k < POSES; k++) {
            legs_reset(&L, k);
            kiln_rig_report rep;
            cr_assert_eq(rf_solve(&L.pose, &rep), KILN_OK);
            cr_assert_eq(rep.ik_solved, ref_rep[k].ik_solved, "%s pose %u", kiln_simd_name(paths[pi]), k);
            cr_assert_eq(rep.ik_unreachable, ref_rep[k].ik_unreachable, "%s pose %u", kiln_simd_name(paths[pi]), k);
            cr_assert(fabs(rep.ik_max_error_m - ref_rep[k].ik_max_error_m) <= TOL_PATH);
            if (pi == 0) unreachable += rep.ik_unreachable;
            const kiln_soa_xform *rl = ref_local + (size_t)k * soa;
            const float *rm = ref_model + (size_t)k * 16 * N;
            for (uint32_t b = 0; b < N; b++) {
                float q[4], r[4];
                local_q(&L.pose, b, q);
                for (unsigned c = 0; c < 4; c++) r[c] = ((const float *)(const void *)&rl[b / 8])[(3 + c) * 8 + b % 8];
                worst_q = fmax(worst_q, qdist(q, r));
                for (unsigned c = 0; c < 16; c++) {
                    cr_assert(isfinite(L.pose.model[b * 16 + c]));
                    worst_p = fmax(worst_p, fabs(L.pose.model[b * 16 + c] - rm[b * 16 + c]));
                }
            }
            /* the model matrices are what a full recomputation of the local pose gives */
            cr_assert_eq(kiln_pose_local_to_object(L.blob, 0, L.pose.local, NULL, fresh, N), KILN_OK);
            for (uint32_t x = 0; x < 16 * N; x++) worst_m = fmax(worst_m, fabs(fresh[x] - L.pose.model[x]));
            /* accuracy on this path: reachable goals met, lengths kept */
            const float *m0 = L.start_model + (size_t)k * 16 * N;
            for (uint32_t i = 0; i < LEGS; i++) {
                const kiln_blob_ik_handle *h = &L.ik[i];
                uint32_t c[3] = {h->start_bone, h->start_bone + 1, h->end_bone};
                double a[3][3], s[3][3], g[3];
                for (int j = 0; j < 3; j++) {
                    rf_position(&L.pose, c[j], a[j]);
                    for (int x = 0; x < 3; x++) s[j][x] = m0[c[j] * 16 + 12 + x];
                }
                for (int j = 0; j < 2; j++)
                    worst_len = fmax(worst_len, fabs(rf_dist(a[j], a[j + 1]) / rf_dist(s[j], s[j + 1]) - 1.0));
                /* the goal as the solve saw it: targets under the root are not moved by IK,
                 * leg 5's (leg 4's ankle) is where leg 4 left it */
                const float *tm = L.pose.model + (size_t)h->target_bone * 16;
                for (int x = 0; x < 3; x++)
                    g[x] = tm[x] * h->target_offset[0] + tm[4 + x] * h->target_offset[1] + tm[8 + x] * h->target_offset[2] +
                           tm[12 + x];
                double l = rf_dist(s[0], s[1]) + rf_dist(s[1], s[2]), dg = rf_dist(a[0], g);
                double fold = fabs(rf_dist(s[0], s[1]) - rf_dist(s[1], s[2]));
                if (dg < l * (1.0 - 2e-4) && dg > fold + 1e-3) worst_end = fmax(worst_end, rf_dist(a[2], g));
            }
        }
        fprintf(stderr, "rig simd %-6s %u poses x %u legs: against scalar, rotation %.2e, matrix %.2e; against a full "
                        "recomputation %.2e; end error %.2e m, bone length %.2e relative\n",
                kiln_simd_name(paths[pi]), POSES, LEGS, worst_q, worst_p, worst_m, worst_end, worst_len);
        cr_assert(worst_m <= TOL_PATH, "%s: model matrices %.3g from a full recomputation", kiln_simd_name(paths[pi]), worst_m);
        cr_assert(worst_q <= TOL_PATH, "%s: local rotations %.3g from the scalar path", kiln_simd_name(paths[pi]), worst_q);
        cr_assert(worst_p <= TOL_PATH, "%s: model matrices %.3g from the scalar path", kiln_simd_name(paths[pi]), worst_p);
        cr_assert(worst_end <= TOL_REACH, "%s: end %.3g m from a reachable goal", kiln_simd_name(paths[pi]), worst_end);
        cr_assert(worst_len <= TOL_LEN, "%s: a bone length changed by %.3g", kiln_simd_name(paths[pi]), worst_len);
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    cr_assert(unreachable > 0, "the poses should put some goals out of reach");
    cr_assert(tested >= 1);
    free(ref_local), free(ref_model);
    legs_free(&L);
}

/* A pose the batch must not change: handles that depend on each other solved together would
 * leave leg 5 aiming at where leg 4's ankle was before leg 4's solve. */
Test(rig_simd, a_handle_sees_the_previous_handles_result)
{
    legs L;
    legs_make(&L);
    static const kiln_simd paths[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2};
    for (size_t pi = 0; pi < sizeof paths / sizeof *paths; pi++) {
        if (kiln_simd_force(paths[pi]) != paths[pi]) continue;
        for (uint32_t k = 0; k < POSES; k += 4) { /* reachable poses */
            legs_reset(&L, k);
            kiln_rig_report rep;
            cr_assert_eq(rf_solve(&L.pose, &rep), KILN_OK);
            double ankle4[3], ankle5[3], hip5[3], knee5[3];
            rf_position(&L.pose, hip_of(4) + 2, ankle4);
            rf_position(&L.pose, hip_of(5), hip5);
            rf_position(&L.pose, hip_of(5) + 1, knee5);
            rf_position(&L.pose, hip_of(5) + 2, ankle5);
            double reach = rf_dist(hip5, knee5) + rf_dist(knee5, ankle5);
            if (rf_dist(hip5, ankle4) < reach * 0.999)
                cr_assert(rf_dist(ankle5, ankle4) <= TOL_REACH, "%s pose %u: leg 5's end is %.3g from leg 4's ankle",
                          kiln_simd_name(paths[pi]), k, rf_dist(ankle5, ankle4));
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    legs_free(&L);
}

/* The degenerate two-bone inputs of test_rig.c's degenerate_inputs_never_give_nan, nine legs
 * side by side: the lanes that need the scalar code's fallbacks (straight chains, the goal on
 * the start, a zero-length bone) give its result, every float is finite, and every path
 * matches the scalar one. The first leg aims at the fifth's ankle: it must see that ankle
 * before the fifth handle moves it, whichever code solves it. */
Test(rig_simd, degenerate_lanes_match_the_scalar_fallbacks)
{
    static const struct {
        double bend; /* knee bend (degrees) */
        float knee_len, goal[3], pole[3];
        int use_pole;
    } cases[] = {
        {0, 0.5f, {0, 0.4f, 0.1f}, {0, 0, 0}, 0},      /* straight chain, no pole */
        {0, 0.5f, {0, 0.4f, 0}, {0, 0.5f, 2}, 1},      /* straight chain, pole in front */
        {20, 0.5f, {0, 1, 0}, {0, 0.5f, 2}, 1},        /* goal on the start */
        {0, 0.5f, {0, 1, 0}, {0, 0.5f, 2}, 1},         /* goal on the start, straight */
        {20, 0.5f, {0, 0.4f, 0}, {0, -1, 0}, 1},       /* pole on the start->goal line */
        {20, 0.5f, {0, 0.4f, 0}, {0, 1, 0}, 1},        /* pole on the start */
        {20, 0.0f, {0, 0.4f, 0.3f}, {0, 0.5f, 2}, 1},  /* zero-length upper bone */
        {20, 0.2f, {0, 0.95f, 0}, {0, 0.5f, 2}, 1},    /* goal closer than folded */
        {20, 0.5f, {0, 2.5f, 0}, {0, 0.5f, 2}, 1},     /* beyond the reach, straight up */
    };
    enum { NC = sizeof cases / sizeof cases[0], NB = 1 + NC * PER_LEG };
    static char names[NB][16];
    af_bone b[NB];
    kiln_blob_ik_handle ik[NC];
    uint32_t n = 0;
    snprintf(names[n], 16, "root");
    b[n] = af_bone_at(names[n], -1, 0, 0, 0), n++;
    for (uint32_t i = 0; i < NC; i++) {
        float x = 3.0f * (float)i;
        uint32_t hip = n;
        snprintf(names[n], 16, "hip%u", i), b[n] = af_bone_at(names[n], 0, x, 1, 0), n++;
        snprintf(names[n], 16, "knee%u", i), b[n] = af_bone_at(names[n], (int32_t)hip, 0, -cases[i].knee_len, 0);
        af_axis_angle(1, 0, 0, cases[i].bend * 3.14159265358979323846 / 180.0, b[n].r), n++;
        snprintf(names[n], 16, "ankle%u", i), b[n] = af_bone_at(names[n], (int32_t)hip + 1, 0, -0.5f, 0), n++;
        snprintf(names[n], 16, "target%u", i);
        b[n] = af_bone_at(names[n], 0, x + cases[i].goal[0], cases[i].goal[1], cases[i].goal[2]), n++;
        snprintf(names[n], 16, "pole%u", i);
        b[n] = af_bone_at(names[n], 0, x + cases[i].pole[0], cases[i].pole[1], cases[i].pole[2]), n++;
        /* the first leg (a straight chain: the scalar fallback) aims at the fifth leg's
         * ankle, which the fifth handle moves after it in file order */
        ik[i] = rf_ik(0, hip, hip + 2, 3, i == 0 ? hip + 4 * PER_LEG + 2 : hip + 3);
        ik[i].order = i;
        if (cases[i].use_pole) ik[i].pole_vector_bone = hip + 4;
    }
    size_t size;
    af_skel skel = {NB, b};
    unsigned char *mem = rf_build(&skel, NULL, 0, ik, NC, &size);
    const kiln_blob *blob;
    cr_assert_eq(kiln_blob_load(mem, size, 0, &blob, NULL), KILN_OK);
    rf_pose pose;
    rf_pose_init(&pose, blob, 0);
    const size_t lbytes = sizeof *pose.local * pose.soa_count;
    kiln_soa_xform *start = malloc(lbytes), *ref_local = malloc(lbytes);
    static float ref_model[16 * NB];
    cr_assert(start && ref_local);
    memcpy(start, pose.local, lbytes);
    static const kiln_simd paths[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2};
    for (size_t pi = 0; pi < sizeof paths / sizeof *paths; pi++) {
        if (kiln_simd_force(paths[pi]) != paths[pi]) continue;
        memcpy(pose.local, start, lbytes);
        cr_assert_eq(rf_forward(&pose), KILN_OK);
        kiln_rig_report rep;
        cr_assert_eq(rf_solve(&pose, &rep), KILN_OK);
        cr_assert_eq(rep.ik_solved, NC);
        const float *l = (const float *)(const void *)pose.local;
        for (size_t k = 0; k < lbytes / sizeof(float); k++) cr_assert(isfinite(l[k]), "%s: local float %zu", kiln_simd_name(paths[pi]), k);
        for (uint32_t k = 0; k < 16 * NB; k++) cr_assert(isfinite(pose.model[k]), "%s: model float %u", kiln_simd_name(paths[pi]), k);
        if (pi == 0) {
            memcpy(ref_local, pose.local, lbytes);
            memcpy(ref_model, pose.model, sizeof ref_model);
            continue;
        }
        double worst = 0;
        const float *r = (const float *)(const void *)ref_local;
        for (size_t k = 0; k < lbytes / sizeof(float); k++) worst = fmax(worst, fabs(l[k] - r[k]));
        for (uint32_t k = 0; k < 16 * NB; k++) worst = fmax(worst, fabs(pose.model[k] - ref_model[k]));
        fprintf(stderr, "rig simd %-6s degenerate lanes: %.2e from the scalar path\n", kiln_simd_name(paths[pi]), worst);
        cr_assert(worst <= TOL_PATH, "%s: %.3g from the scalar path", kiln_simd_name(paths[pi]), worst);
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    free(start), free(ref_local);
    rf_pose_free(&pose);
    free(mem);
}

/* kiln_rig_prepare: solves that read the prepared plan give, bit for bit, what solves that
 * derive it each call give, on every path, with weights that cut batches short (a handle of
 * weight 0.5 in the middle of a batch, one of weight 0); the plan survives the solves; a
 * scratch without a plan of this blob and skeleton is refused. */
Test(rig_simd, a_prepared_scratch_gives_the_same_results)
{
    legs L;
    legs_make(&L);
    const uint32_t soa = L.pose.soa_count;
    size_t ssize = L.pose.scratch_size;
    void *prep = aligned_alloc(64, ssize);
    kiln_soa_xform *ref_local = malloc(sizeof *ref_local * soa);
    float *ref_model = malloc(sizeof(float) * 16 * N);
    cr_assert(prep && ref_local && ref_model);
    memset(prep, 0, ssize);
    kiln_rig_desc d;
    memset(&d, 0, sizeof d);
    d.blob = L.blob, d.local = L.pose.local, d.soa_count = soa, d.object = L.pose.model, d.bone_count = N;
    d.scratch = prep, d.scratch_size = ssize, d.prepared = 1;
    /* no plan yet (zeroed scratch), then errors of the prepare call itself */
    cr_assert_eq(kiln_rig_solve(&d), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_rig_prepare(L.blob, 0, prep, ssize - 1), KILN_ERR_BUFFER_TOO_SMALL);
    cr_assert_eq(kiln_rig_prepare(L.blob, 0, (char *)prep + 4, ssize), KILN_ERR_BLOB_MISALIGNED);
    cr_assert_eq(kiln_rig_prepare(L.blob, 1, prep, ssize), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_rig_prepare(NULL, 0, prep, ssize), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_rig_prepare(L.blob, 0, prep, ssize), KILN_OK);
    d.skeleton = 1; /* a plan of another skeleton */
    cr_assert_eq(kiln_rig_solve(&d), KILN_ERR_INVALID_ARGUMENT);
    d.skeleton = 0, d.scratch_size = ssize - 1;
    cr_assert_eq(kiln_rig_solve(&d), KILN_ERR_BUFFER_TOO_SMALL);
    d.scratch_size = ssize;

    float w[LEGS];
    for (uint32_t i = 0; i < LEGS; i++) w[i] = 1.0f;
    w[3] = 0.5f, w[12] = 0.0f;
    static const kiln_simd paths[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
    uint32_t compared = 0;
    for (size_t pi = 0; pi < sizeof paths / sizeof *paths; pi++) {
        if (kiln_simd_force(paths[pi]) != paths[pi]) continue;
        for (uint32_t k = 0; k < POSES; k++) {
            for (int weighted = 0; weighted < 2; weighted++) {
                kiln_rig_report rep_ref, rep;
                legs_reset(&L, k);
                cr_assert_eq(rf_solve_ex(&L.pose, 0, weighted ? w : NULL, weighted ? LEGS : 0, NULL, 0, &rep_ref),
                             KILN_OK);
                memcpy(ref_local, L.pose.local, sizeof *ref_local * soa);
                memcpy(ref_model, L.pose.model, sizeof(float) * 16 * N);
                legs_reset(&L, k);
                d.ik_weights = weighted ? w : NULL, d.ik_weight_count = weighted ? LEGS : 0, d.report = &rep;
                cr_assert_eq(kiln_rig_solve(&d), KILN_OK);
                cr_assert(memcmp(ref_local, L.pose.local, sizeof *ref_local * soa) == 0, "%s pose %u local",
                          kiln_simd_name(paths[pi]), k);
                cr_assert(memcmp(ref_model, L.pose.model, sizeof(float) * 16 * N) == 0, "%s pose %u model",
                          kiln_simd_name(paths[pi]), k);
                cr_assert_eq(rep.ik_solved, rep_ref.ik_solved);
                cr_assert_eq(rep.ik_skipped, rep_ref.ik_skipped);
                cr_assert_eq(rep.ik_solved, weighted ? LEGS - 1 : LEGS);
                compared++;
            }
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    cr_assert(compared >= 2 * POSES);
    free(prep), free(ref_local), free(ref_model);
    legs_free(&L);
}

/* A handle solved alone (the others weighted 0), with weight 1 and with a blend from FK: the
 * single solve of every path (the baseline one, the AVX2 one) gives the scalar path's local
 * rotations and model matrices bit for bit; so does solving every handle at once, where the
 * batch kernels' lanes stand in for the single solves. */
Test(rig_simd, the_single_solve_gives_the_same_bits_on_every_path)
{
    legs L;
    legs_make(&L);
    const uint32_t soa = L.pose.soa_count;
    static const float weights[] = {1.0f, 0.6f};
    /* [pose][leg][weight], then [pose] for all legs at once */
    const size_t nref = (size_t)POSES * LEGS * 2 + POSES;
    kiln_soa_xform *ref_local = malloc(sizeof *ref_local * soa * nref);
    float *ref_model = malloc(sizeof(float) * 16 * N * nref);
    cr_assert(ref_local && ref_model);
    static const kiln_simd paths[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
    uint32_t compared = 0, others = 0;
    for (size_t pi = 0; pi < sizeof paths / sizeof *paths; pi++) {
        if (kiln_simd_force(paths[pi]) != paths[pi]) continue;
        others += pi > 0;
        size_t at = 0;
        for (uint32_t k = 0; k < POSES; k++) {
            for (uint32_t i = 0; i <= LEGS; i++) {
                for (size_t wi = 0; wi < (i < LEGS ? 2u : 1u); wi++, at++) {
                    float w[LEGS];
                    for (uint32_t j = 0; j < LEGS; j++) w[j] = i == LEGS ? 1.0f : (j == i ? weights[wi] : 0.0f);
                    kiln_rig_report rep;
                    legs_reset(&L, k);
                    cr_assert_eq(rf_solve_ex(&L.pose, 0, w, LEGS, NULL, 0, &rep), KILN_OK);
                    cr_assert_eq(rep.ik_solved, i == LEGS ? LEGS : 1u);
                    kiln_soa_xform *rl = ref_local + at * soa;
                    float *rm = ref_model + at * 16 * N;
                    if (pi == 0) {
                        memcpy(rl, L.pose.local, sizeof *rl * soa);
                        memcpy(rm, L.pose.model, sizeof(float) * 16 * N);
                        continue;
                    }
                    cr_assert(memcmp(rl, L.pose.local, sizeof *rl * soa) == 0, "%s pose %u leg %u weight %g: local",
                              kiln_simd_name(paths[pi]), k, i, (double)w[i < LEGS ? i : 0]);
                    cr_assert(memcmp(rm, L.pose.model, sizeof(float) * 16 * N) == 0, "%s pose %u leg %u weight %g: model",
                              kiln_simd_name(paths[pi]), k, i, (double)w[i < LEGS ? i : 0]);
                    compared++;
                }
            }
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    /* a KILN_FORCE_SCALAR build has the scalar path alone */
    cr_assert_eq(compared, others * nref);
    if (!others) fprintf(stderr, "rig simd: the scalar path alone, nothing to compare\n");
    free(ref_local), free(ref_model);
    legs_free(&L);
}

/* Constraint steps of every type, with skipped axes, offsets and weights below 1, on leaf and
 * non-leaf owners under a scaled parent (with and without segment scale compensation) and under
 * the root, over poses whose drivers move: every path (the AVX2 one runs the step's
 * VEX-compiled copy), unprepared and from a prepared plan, gives the unprepared scalar solve's
 * local pose and model matrices bit for bit. */
Test(rig_simd, constraint_steps_give_the_same_bits_on_every_path)
{
    enum { CB = 16, CN = 14, CPOSES = 24 };
    static char names[CB][8];
    af_bone b[CB];
    for (uint32_t i = 0; i < CB; i++) snprintf(names[i], sizeof names[i], "b%u", i);
    uint32_t st = 7;
    b[0] = af_bone_at(names[0], -1, 0, 0, 0);
    b[1] = af_bone_at(names[1], 0, 1.0f, 0.5f, 0.0f); /* a scaled parent */
    b[1].s[0] = 1.5f, b[1].s[1] = 0.75f, b[1].s[2] = 2.0f;
    af_axis_angle(0.3, 1, 0.2, 0.7, b[1].r);
    for (uint32_t i = 2; i < CB; i++) {
        /* 2..4 drivers under the root; 5..9 under the scaled parent (7 without compensation);
         * 10 under the root with a child (11); the rest under the root */
        int32_t parent = i >= 5 && i <= 9 ? 1 : i == 11 ? 10 : 0;
        b[i] = af_bone_at(names[i], parent, (float)af_rand(&st, -1, 1), (float)af_rand(&st, -1, 1),
                          (float)af_rand(&st, -1, 1));
        af_axis_angle(af_rand(&st, -1, 1), af_rand(&st, -1, 1), af_rand(&st, -1, 1) + 0.01, af_rand(&st, -3, 3), b[i].r);
    }
    b[7].ssc = 0;
    b[3].s[0] = 1.25f, b[3].s[1] = 0.5f, b[3].s[2] = 1.75f;
    kiln_blob_constraint c[CN];
    static const uint32_t owner[CN] = {5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 5, 6, 9, 10};
    for (uint32_t i = 0; i < CN; i++) {
        uint32_t type = i % 3, target = 2 + i % 3;
        c[i] = rf_constraint(type, 0, owner[i], target);
        c[i].order = i;
        if (i % 4 == 1) c[i].flags = KILN_CONSTRAINT_SKIP_Y;
        if (i % 5 == 3) c[i].flags = KILN_CONSTRAINT_SKIP_X | KILN_CONSTRAINT_SKIP_Z;
        if (i % 5 == 2) c[i].weight = 0.5f;
        if (type == KILN_CONSTRAINT_ORIENT && i % 2) af_axis_angle(1, 0.5, 0.25, 0.4, c[i].offset); /* maintain offset */
        if (type == KILN_CONSTRAINT_POINT && i % 2) c[i].offset[0] = 0.25f, c[i].offset[2] = -0.5f;
        if (type == KILN_CONSTRAINT_SCALE && i % 2) c[i].offset[1] = 1.5f;
    }
    c[13].target = 5; /* an orient whose target an earlier step moves */
    size_t size;
    af_skel skel = {CB, b};
    unsigned char *mem = rf_build(&skel, c, CN, NULL, 0, &size);
    const kiln_blob *blob = af_load(mem, size);
    cr_assert(blob);
    rf_pose p;
    rf_pose_init(&p, blob, 0);
    const uint32_t soa = p.soa_count;
    /* the poses: the drivers turned, moved and scaled; their model matrices from the scalar
     * forward pass, so that every path starts from the same bytes */
    kiln_soa_xform *start_local = malloc(sizeof *start_local * soa * CPOSES);
    kiln_soa_xform *ref_local = malloc(sizeof *ref_local * soa * CPOSES);
    float *start_model = malloc(sizeof(float) * 16 * CB * CPOSES), *ref_model = malloc(sizeof(float) * 16 * CB * CPOSES);
    cr_assert(start_local && ref_local && start_model && ref_model);
    cr_assert_eq(kiln_simd_force(KILN_SIMD_SCALAR), KILN_SIMD_SCALAR);
    uint32_t ps = 99;
    for (uint32_t k = 0; k < CPOSES; k++) {
        kiln_soa_xform *l = start_local + (size_t)k * soa;
        memcpy(l, p.local, sizeof *l * soa);
        for (uint32_t d = 2; d <= 4; d++) {
            float q[4];
            af_axis_angle(af_rand(&ps, -1, 1), af_rand(&ps, -1, 1), af_rand(&ps, -1, 1) + 0.01, af_rand(&ps, -3, 3), q);
            for (unsigned j = 0; j < 4; j++) *rf_lane(l, d, 3 + j) = q[j];
            for (unsigned j = 0; j < 3; j++) *rf_lane(l, d, j) += af_rand(&ps, -0.5f, 0.5f);
            for (unsigned j = 0; j < 3; j++) *rf_lane(l, d, 7 + j) *= af_rand(&ps, 0.5f, 1.5f);
        }
        cr_assert_eq(kiln_pose_local_to_object(blob, 0, l, NULL, start_model + (size_t)k * 16 * CB, CB), KILN_OK);
    }
    /* a scratch holding kiln_rig_prepare's plan (its steps take the orient targets' rotations
     * before the first step) beside the fixture's, which each unprepared solve plans anew */
    void *prepared = aligned_alloc(64, p.scratch_size);
    cr_assert(prepared);
    cr_assert_eq(kiln_rig_prepare(blob, 0, prepared, p.scratch_size), KILN_OK);
    static const kiln_simd paths[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
    uint32_t compared = 0, others = 0;
    for (size_t pi = 0; pi < sizeof paths / sizeof *paths; pi++) {
        if (kiln_simd_force(paths[pi]) != paths[pi]) continue;
        others += 1;
        for (uint32_t k = 0; k < CPOSES * 2; k++) {
            /* every pose unprepared (the first CPOSES), then prepared */
            const int prep = k >= CPOSES;
            const uint32_t pk = k % CPOSES;
            memcpy(p.local, start_local + (size_t)pk * soa, sizeof *p.local * soa);
            memcpy(p.model, start_model + (size_t)pk * 16 * CB, sizeof(float) * 16 * CB);
            kiln_rig_report rep;
            cr_assert_eq(rf_solve_plan(&p, prep ? prepared : NULL, &rep), KILN_OK);
            cr_assert_eq(rep.constraints_applied, CN, "%s pose %u", kiln_simd_name(paths[pi]), k);
            kiln_soa_xform *rl = ref_local + (size_t)pk * soa;
            float *rm = ref_model + (size_t)pk * 16 * CB;
            if (pi == 0 && !prep) {
                /* the steps did something: the owners left their start */
                cr_assert(memcmp(p.local, start_local + (size_t)k * soa, sizeof *p.local * soa) != 0);
                memcpy(rl, p.local, sizeof *rl * soa);
                memcpy(rm, p.model, sizeof(float) * 16 * CB);
                continue;
            }
            cr_assert(memcmp(rl, p.local, sizeof *rl * soa) == 0, "%s pose %u: local", kiln_simd_name(paths[pi]), k);
            cr_assert(memcmp(rm, p.model, sizeof(float) * 16 * CB) == 0, "%s pose %u: model", kiln_simd_name(paths[pi]), k);
            compared++;
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    /* every path prepared, and the others unprepared too (a KILN_FORCE_SCALAR build has the
     * scalar path alone) */
    cr_assert_eq(compared, (2 * others - 1) * CPOSES);
    free(prepared);
    free(start_local), free(ref_local), free(start_model), free(ref_model);
    rf_pose_free(&p);
    free(mem);
}

/* A prepared plan takes an orient constraint's desired rotation before the first step only when
 * no earlier step moves its target or its owner's parent: here the first constraint turns the
 * parent of the second's owner, and three more orients (lanes on the AVX2 path) read bones no
 * step moves. Weight 1, identity offsets and unit scales put every owner's object rotation onto
 * its target's; every path, prepared and unprepared, gives the scalar unprepared bytes. */
Test(rig_simd, an_early_orient_waits_for_a_parent_an_earlier_step_turns)
{
    enum { CB = 8, CN = 5 };
    static char names[CB][16];
    af_bone b[CB];
    static const int32_t parent[CB] = {-1, 0, 0, 2, 0, 0, 0, 0};
    random_bones(b, names, parent, CB, 31);
    /* owner, target: 2 (the parent of 3) onto 1, then 3 onto 4, and 5, 6, 7 onto 4, 1, 4 */
    static const uint32_t owner[CN] = {2, 3, 5, 6, 7}, target[CN] = {1, 4, 4, 1, 4};
    kiln_blob_constraint c[CN];
    for (uint32_t i = 0; i < CN; i++) c[i] = rf_constraint(KILN_CONSTRAINT_ORIENT, 0, owner[i], target[i]), c[i].order = i;
    size_t size;
    af_skel skel = {CB, b};
    unsigned char *mem = rf_build(&skel, c, CN, NULL, 0, &size);
    const kiln_blob *blob = af_load(mem, size);
    cr_assert(blob);
    rf_pose p;
    rf_pose_init(&p, blob, 0);
    const uint32_t soa = p.soa_count;
    kiln_soa_xform *start = malloc(sizeof *start * soa), *ref_local = malloc(sizeof *ref_local * soa);
    float start_model[16 * CB], ref_model[16 * CB];
    cr_assert(start && ref_local);
    memcpy(start, p.local, sizeof *start * soa);
    cr_assert_eq(kiln_simd_force(KILN_SIMD_SCALAR), KILN_SIMD_SCALAR);
    cr_assert_eq(rf_forward(&p), KILN_OK);
    memcpy(start_model, p.model, sizeof start_model);
    void *prepared = aligned_alloc(64, p.scratch_size);
    cr_assert(prepared);
    cr_assert_eq(kiln_rig_prepare(blob, 0, prepared, p.scratch_size), KILN_OK);
    static const kiln_simd paths[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
    uint32_t compared = 0;
    for (size_t pi = 0; pi < sizeof paths / sizeof *paths; pi++) {
        if (kiln_simd_force(paths[pi]) != paths[pi]) continue;
        for (int prep = 0; prep < 2; prep++) {
            memcpy(p.local, start, sizeof *start * soa);
            memcpy(p.model, start_model, sizeof start_model);
            kiln_rig_report rep;
            cr_assert_eq(rf_solve_plan(&p, prep ? prepared : NULL, &rep), KILN_OK);
            cr_assert_eq(rep.constraints_applied, CN);
            const char *what = kiln_simd_name(paths[pi]);
            for (uint32_t i = 0; i < CN; i++) {
                const float *mo = p.model + owner[i] * 16u, *mt = p.model + target[i] * 16u;
                double worst = 0;
                for (unsigned col = 0; col < 3; col++)
                    for (unsigned row = 0; row < 3; row++)
                        worst = fmax(worst, fabs((double)mo[col * 4 + row] - mt[col * 4 + row]));
                cr_assert(worst <= 1e-5, "%s %s: owner %u's rotation is %.3g from its target's", what,
                          prep ? "prepared" : "unprepared", owner[i], worst);
            }
            if (pi == 0 && !prep) {
                memcpy(ref_local, p.local, sizeof *ref_local * soa), memcpy(ref_model, p.model, sizeof ref_model);
                continue;
            }
            cr_assert(memcmp(ref_local, p.local, sizeof *ref_local * soa) == 0, "%s prepared %d: local", what, prep);
            cr_assert(memcmp(ref_model, p.model, sizeof ref_model) == 0, "%s prepared %d: model", what, prep);
            compared++;
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    cr_assert(compared >= 1);
    free(prepared), free(start), free(ref_local);
    rf_pose_free(&p);
    free(mem);
}

/* Early orients in lanes whose target or frame is degenerate (a zero scale: no columns to take a
 * rotation from; a scale of 1e30: a quaternion that is not finite) are each solved as one step
 * alone solves them: every path, prepared and unprepared, gives the scalar unprepared bytes. */
Test(rig_simd, early_orients_with_degenerate_matrices_match_the_one_at_a_time_step)
{
    enum { CB = 9, CN = 6 };
    static char names[CB][16];
    af_bone b[CB];
    /* 1..3 drivers under the root, 4 a frame under the root, 5..8 owners (6 and 7 under 4) */
    static const int32_t parent[CB] = {-1, 0, 0, 0, 0, 0, 4, 4, 0};
    random_bones(b, names, parent, CB, 57);
    static const uint32_t owner[CN] = {5, 6, 7, 8, 5, 8}, target[CN] = {1, 2, 3, 1, 2, 3};
    kiln_blob_constraint c[CN];
    for (uint32_t i = 0; i < CN; i++) {
        c[i] = rf_constraint(KILN_CONSTRAINT_ORIENT, 0, owner[i], target[i]), c[i].order = i;
        if (i % 2) af_axis_angle(1, 0.5, 0.25, 0.4, c[i].offset);
    }
    size_t size;
    af_skel skel = {CB, b};
    unsigned char *mem = rf_build(&skel, c, CN, NULL, 0, &size);
    const kiln_blob *blob = af_load(mem, size);
    cr_assert(blob);
    rf_pose p;
    rf_pose_init(&p, blob, 0);
    const uint32_t soa = p.soa_count;
    void *prepared = aligned_alloc(64, p.scratch_size);
    kiln_soa_xform *start = malloc(sizeof *start * soa), *ref_local = malloc(sizeof *ref_local * soa);
    cr_assert(prepared && start && ref_local);
    cr_assert_eq(kiln_rig_prepare(blob, 0, prepared, p.scratch_size), KILN_OK);
    float start_model[16 * CB], ref_model[16 * CB];
    /* case 0: driver 2 scaled to zero; 1: the frame 4 scaled to zero; 2: driver 3 scaled by 1e30 */
    for (int which = 0; which < 3; which++) {
        memcpy(p.local, kiln_blob_rest_pose(blob, NULL), sizeof *p.local * soa);
        uint32_t bone = which == 0 ? 2 : which == 1 ? 4 : 3;
        for (unsigned k = 0; k < 3; k++) *rf_lane(p.local, bone, 7 + k) = which == 2 ? 1e30f : 0.0f;
        memcpy(start, p.local, sizeof *start * soa);
        cr_assert_eq(kiln_simd_force(KILN_SIMD_SCALAR), KILN_SIMD_SCALAR);
        cr_assert_eq(rf_forward(&p), KILN_OK);
        memcpy(start_model, p.model, sizeof start_model);
        static const kiln_simd paths[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
        for (size_t pi = 0; pi < sizeof paths / sizeof *paths; pi++) {
            if (kiln_simd_force(paths[pi]) != paths[pi]) continue;
            for (int prep = 0; prep < 2; prep++) {
                memcpy(p.local, start, sizeof *start * soa);
                memcpy(p.model, start_model, sizeof start_model);
                cr_assert_eq(rf_solve_plan(&p, prep ? prepared : NULL, NULL), KILN_OK);
                if (pi == 0 && !prep) {
                    memcpy(ref_local, p.local, sizeof *ref_local * soa), memcpy(ref_model, p.model, sizeof ref_model);
                    continue;
                }
                const char *what = kiln_simd_name(paths[pi]);
                cr_assert(memcmp(ref_local, p.local, sizeof *ref_local * soa) == 0, "case %d %s prepared %d: local",
                          which, what, prep);
                cr_assert(memcmp(ref_model, p.model, sizeof ref_model) == 0, "case %d %s prepared %d: model", which,
                          what, prep);
            }
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    free(prepared), free(start), free(ref_local);
    rf_pose_free(&p);
    free(mem);
}

/* The solve reads a stored local rotation as the rotation it stands for, whatever its length:
 * the hips' and knees' locals (the model matrices left as the unit ones give them; not those
 * of the leg under another's ankle, whose matrices that leg's solve recomposes from them) and
 * the pole bones' (the twist) scaled by factors inside and outside (1/2, 2) solve to what the
 * unit ones do within 1e-5 (the leg whose goal lies in the band where the chain is straight
 * to float precision turns a last-bit difference into 5e-6), and every path gives the scalar
 * path's bits for them (lanes whose rotations are far from unit length go to the scalar code,
 * which normalises them). */
Test(rig_simd, stored_rotation_lengths_do_not_change_the_solve)
{
    static const float scale[] = {0.6f, 1.9f, 3.0f, 0.2f, 1e-5f, 1e5f, 1.0f};
    enum { NS = sizeof scale / sizeof scale[0] };
    legs L;
    legs_make(&L);
    const uint32_t soa = L.pose.soa_count;
    const size_t lbytes = sizeof *L.pose.local * soa, mbytes = sizeof(float) * 16 * N;
    kiln_soa_xform *unit_local = malloc(lbytes), *ref_local = malloc(lbytes);
    float *unit_model = malloc(mbytes), *ref_model = malloc(mbytes);
    cr_assert(unit_local && ref_local && unit_model && ref_model);
    static const kiln_simd paths[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
    double worst_unit = 0, worst_path = 0;
    for (uint32_t k = 0; k < POSES; k += 3) {
        cr_assert_eq(kiln_simd_force(KILN_SIMD_SCALAR), KILN_SIMD_SCALAR);
        legs_reset(&L, k);
        cr_assert_eq(rf_solve(&L.pose, NULL), KILN_OK);
        memcpy(unit_local, L.pose.local, lbytes), memcpy(unit_model, L.pose.model, mbytes);
        for (size_t pi = 0; pi < sizeof paths / sizeof *paths; pi++) {
            if (kiln_simd_force(paths[pi]) != paths[pi]) continue;
            legs_reset(&L, k);
            for (uint32_t i = 0; i < LEGS; i++) {
                /* not leg 9's: leg 8's solve recomposes them, as kiln__bone_to_model reads them */
                if (i == 9) continue;
                const uint32_t bones[3] = {hip_of(i), hip_of(i) + 1, hip_of(i) + 4};
                for (int j = 0; j < 3; j++)
                    for (unsigned c = 0; c < 4; c++) *rf_lane(L.pose.local, bones[j], 3 + c) *= scale[(i + 3 * j + k) % NS];
            }
            cr_assert_eq(rf_solve(&L.pose, NULL), KILN_OK);
            if (pi == 0) {
                memcpy(ref_local, L.pose.local, lbytes), memcpy(ref_model, L.pose.model, mbytes);
                for (uint32_t i = 0; i < LEGS; i++)
                    for (uint32_t b = hip_of(i); b < hip_of(i) + 3; b++) {
                        float q[4], u[4];
                        local_q(&L.pose, b, q);
                        for (unsigned c = 0; c < 4; c++) u[c] = ((const float *)(const void *)&unit_local[b / 8])[(3 + c) * 8 + b % 8];
                        worst_unit = fmax(worst_unit, qdist(q, u));
                        for (unsigned c = 12; c < 15; c++)
                            worst_unit = fmax(worst_unit, fabs(L.pose.model[b * 16 + c] - unit_model[b * 16 + c]));
                    }
                continue;
            }
            const unsigned char *a = (const unsigned char *)(const void *)L.pose.local;
            const unsigned char *r = (const unsigned char *)(const void *)ref_local;
            for (size_t x = 0; x < lbytes; x++) worst_path = fmax(worst_path, a[x] != r[x]);
            cr_assert_eq(memcmp(L.pose.model, ref_model, mbytes), 0, "%s pose %u: the model matrices differ from the scalar path's",
                         kiln_simd_name(paths[pi]), k);
        }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    fprintf(stderr, "rig simd stored rotation lengths: %.2e from the unit ones\n", worst_unit);
    cr_assert(worst_unit <= TOL_PATH, "scaled stored rotations solve %.3g away from the unit ones", worst_unit);
    cr_assert(worst_path == 0, "a path's local rotations differ from the scalar path's in some bit");
    free(unit_local), free(ref_local), free(unit_model), free(ref_model);
    legs_free(&L);
}

/* A straight leg bends about the knee's model X axis (the hinge fallback, kiln/rig.h): with its
 * hip turned 40 degrees about Y and no pole vector, the knee swings out in that turned plane,
 * and a stored hip rotation 1.5 times unit length gives the knee the unit one gives (within
 * 1e-6 m), on every path. */
Test(rig_simd, a_straight_legs_hinge_follows_its_scaled_stored_rotation)
{
    static char names[5][16] = {"root", "hip", "knee", "ankle", "target"};
    af_bone b[5];
    b[0] = af_bone_at(names[0], -1, 0, 0, 0);
    b[1] = af_bone_at(names[1], 0, 0, 1, 0);
    af_axis_angle(0, 1, 0, 40.0 * 3.14159265358979323846 / 180.0, b[1].r);
    b[2] = af_bone_at(names[2], 1, 0, -0.5f, 0);
    b[3] = af_bone_at(names[3], 2, 0, -0.5f, 0);
    b[4] = af_bone_at(names[4], 0, 0, 0.3f, 0); /* 0.7 below the hip: the knee must bend */
    kiln_blob_ik_handle ik = rf_ik(0, 1, 3, 3, 4);
    size_t size;
    af_skel skel = {5, b};
    unsigned char *mem = rf_build(&skel, NULL, 0, &ik, 1, &size);
    const kiln_blob *blob;
    cr_assert_eq(kiln_blob_load(mem, size, 0, &blob, NULL), KILN_OK);
    rf_pose pose;
    rf_pose_init(&pose, blob, 0);
    cr_assert_eq(rf_forward(&pose), KILN_OK);
    const size_t lbytes = sizeof *pose.local * pose.soa_count;
    kiln_soa_xform *start = malloc(lbytes);
    float *start_model = malloc(sizeof(float) * 16 * 5);
    cr_assert(start && start_model);
    memcpy(start, pose.local, lbytes), memcpy(start_model, pose.model, sizeof(float) * 16 * 5);
    static const kiln_simd paths[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2};
    for (size_t pi = 0; pi < sizeof paths / sizeof *paths; pi++) {
        if (kiln_simd_force(paths[pi]) != paths[pi]) continue;
        double knee[2][3];
        for (int scaled = 0; scaled < 2; scaled++) {
            memcpy(pose.local, start, lbytes), memcpy(pose.model, start_model, sizeof(float) * 16 * 5);
            for (unsigned c = 0; c < 4 && scaled; c++) *rf_lane(pose.local, 1, 3 + c) *= 1.5f;
            cr_assert_eq(rf_solve(&pose, NULL), KILN_OK);
            rf_position(&pose, 2, knee[scaled]);
        }
        /* the knee's X axis is (cos 40, 0, -sin 40): the knee leaves the leg's line along
         * ±(sin 40, 0, cos 40) */
        double out = knee[0][0] * 0.6427876096865393 + knee[0][2] * 0.766044443118978;
        cr_assert(fabs(out) > 0.1, "%s: the knee did not bend in the hip's turned plane (%g)", kiln_simd_name(paths[pi]), out);
        cr_assert(rf_dist(knee[0], knee[1]) <= 1e-6, "%s: the scaled stored hip moves the knee by %.3g m",
                  kiln_simd_name(paths[pi]), rf_dist(knee[0], knee[1]));
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    free(start), free(start_model);
    rf_pose_free(&pose);
    free(mem);
}
