/* What the runtime headers promise about threads (kiln/anim.h, "Thread safety"): one blob and
 * one binding per clip shared by several threads, each playing its own instances with their
 * own sampling contexts, poses and matrices, give exactly the results the same instances give
 * on one thread (bit for bit: same kernels, same inputs), on every SIMD path this machine has.
 * Each instance plays forward with its context (the cached rows are per instance), blends the
 * lossless and the lossy clip and takes the blend to model space. */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "anim_fixture.h"
#include "kiln/anim.h"

#define JOINTS 45u   /* 6 blocks, the last one partly padding */
#define FRAMES 61u
#define INSTANCES 24
#define STEPS 40
#define THREADS 3
#define SOA ((JOINTS + 7) / 8)

typedef struct shared {
    const kiln_blob *blob;
    const kiln_anim_binding *bind[2];
    const kiln_soa_xform *rest;
} shared;

typedef struct player {
    void *ctx[2];
    kiln_soa_xform pose[3][SOA];
    float model[JOINTS * 16];
} player;

typedef struct worker {
    const shared *sh;
    player *players;
    int first, count;
    int failed;
    pthread_t thread;
} worker;

/* Plays instances [first, first + count) for STEPS frames of 1/60 s. */
static void *play(void *arg)
{
    worker *w = (worker *)arg;
    kiln_sample_desc d;
    memset(&d, 0, sizeof d);
    d.loop = KILN_LOOP_WRAP;
    d.out_count = SOA;
    for (int s = 0; s < STEPS; s++)
        for (int i = w->first; i < w->first + w->count; i++) {
            player *p = &w->players[i];
            double t = 0.137 * i + s / 60.0;
            for (int c = 0; c < 2; c++) {
                d.binding = w->sh->bind[c], d.context = p->ctx[c], d.out = p->pose[c], d.time_s = c ? 0.9 * t : t;
                w->failed |= kiln_sample(&d) != KILN_OK;
            }
            kiln_blend_layer ly[2] = {{p->pose[0], 0.6f, NULL}, {p->pose[1], 0.4f, NULL}};
            w->failed |= kiln_pose_blend(ly, 2, w->sh->rest, 0.1f, p->pose[2], SOA) != KILN_OK;
            w->failed |= kiln_pose_local_to_object(w->sh->blob, 0, p->pose[2], NULL, p->model, JOINTS) != KILN_OK;
        }
    return NULL;
}

static player *players_new(const shared *sh)
{
    player *p = aligned_alloc(64, sizeof(player) * INSTANCES);
    cr_assert_not_null(p);
    memset(p, 0, sizeof(player) * INSTANCES);
    for (int i = 0; i < INSTANCES; i++)
        for (int c = 0; c < 2; c++) cr_assert_not_null(p[i].ctx[c] = af_context(sh->bind[c]));
    return p;
}

static void players_free(player *p)
{
    for (int i = 0; i < INSTANCES; i++) free(p[i].ctx[0]), free(p[i].ctx[1]);
    free(p);
}

Test(threads, instances_sharing_clips_play_the_same_on_threads_as_on_one)
{
    af_bone bones[JOINTS];
    char names[JOINTS][16];
    af_joint joints[JOINTS];
    for (uint32_t k = 0; k < JOINTS; k++) {
        snprintf(names[k], sizeof names[k], "j%u", k);
        bones[k] = (af_bone){names[k], k == 0 ? -1 : (int32_t)((k - 1) / 2), {0, 0.1f, 0}, {0, 0, 0, 1}, {1, 1, 1}, 0};
        joints[k] = (af_joint){names[k], AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1, 1, 1}};
    }
    float *values = malloc(sizeof(float) * FRAMES * JOINTS * 10);
    cr_assert_not_null(values);
    af_motion(FRAMES, JOINTS, 3, 30, values);
    af_skel skel = {JOINTS, bones};
    af_clip clips[2] = {
        {.name = "lossless", .framerate = 30, .frame_count = FRAMES, .joint_count = JOINTS, .joints = joints,
         .values = values, .width = 32},
        {.name = "lossy", .framerate = 30, .frame_count = FRAMES, .joint_count = JOINTS, .joints = joints,
         .values = values, .width = 12},
    };
    size_t size;
    unsigned char *mem = af_build(&skel, clips, 2, &size);
    shared sh;
    memset(&sh, 0, sizeof sh);
    sh.blob = af_load(mem, size);
    cr_assert_not_null(sh.blob);
    sh.rest = kiln_blob_rest_pose(sh.blob, NULL);
    kiln_anim_bind_report rep;
    for (int c = 0; c < 2; c++) cr_assert_not_null(sh.bind[c] = af_bind(sh.blob, (uint32_t)c, sh.blob, 0, &rep));

    kiln_simd paths[AF_PATH_COUNT];
    int np = af_paths(paths);
    for (int pi = 0; pi < np; pi++) {
        kiln_simd_force(paths[pi]); /* before the threads start: no path change while they run */
        player *one = players_new(&sh), *many = players_new(&sh);
        worker w1 = {&sh, one, 0, INSTANCES, 0, 0};
        play(&w1);
        cr_assert_eq(w1.failed, 0, "%s: a call failed on one thread", kiln_simd_name(paths[pi]));

        worker w[THREADS];
        for (int k = 0; k < THREADS; k++) {
            w[k] = (worker){&sh, many, INSTANCES * k / THREADS, INSTANCES * (k + 1) / THREADS - INSTANCES * k / THREADS, 0, 0};
            cr_assert_eq(pthread_create(&w[k].thread, NULL, play, &w[k]), 0);
        }
        for (int k = 0; k < THREADS; k++) {
            pthread_join(w[k].thread, NULL);
            cr_assert_eq(w[k].failed, 0, "%s: a call failed on thread %d", kiln_simd_name(paths[pi]), k);
        }
        for (int i = 0; i < INSTANCES; i++) {
            cr_assert_eq(memcmp(one[i].model, many[i].model, sizeof one[i].model), 0,
                         "%s: instance %d's matrices differ between one thread and %d", kiln_simd_name(paths[pi]), i,
                         THREADS);
            cr_assert_eq(memcmp(one[i].pose[2], many[i].pose[2], sizeof one[i].pose[2]), 0,
                         "%s: instance %d's blended pose differs", kiln_simd_name(paths[pi]), i);
        }
        players_free(one);
        players_free(many);
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    for (int c = 0; c < 2; c++) free((void *)sh.bind[c]);
    free(mem);
    free(values);
}
