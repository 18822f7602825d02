/* kiln_bake stage 1b: the clips. A clip is encoded once every input is baked: its slot order
 * and its error bound follow the skeleton it animates, which may come from another input (a
 * model file and its animation files).
 *
 * Clips are independent of each other (each reads the skeletons, which no clip changes, and
 * writes only itself), so with options.threads > 1 and more than one clip they are encoded on
 * a pool of threads, the calling thread included, each buffering its reports. The calling
 * thread then replays them clip by clip in input and clip order and stops at the first clip
 * that failed, so the sink, the statistics and the outcome are those of the serial order
 * whatever the thread count.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "bake_stage.h"
#include "bake_anim.h"
#include "bake_report.h"
#include "ds.h"
#include "util.h"

#define KILN__CLIP_THREADS 64u

/* Reports of one clip go to the caller's sink with the input's path, counted in its unit's
 * statistics. Only ever called on the calling thread. */
typedef struct kiln__clip_sink {
    const kiln_bake_options *o;
    const char              *input;
    kiln_bake_stats         *stats;
} kiln__clip_sink;

static void kiln__clip_report(void *user, const kiln_diag *d)
{
    kiln__clip_sink *s = user;
    kiln_diag copy = *d;
    snprintf(copy.path, sizeof copy.path, "%s", s->input ? s->input : "");
    s->stats->warnings += d->severity == KILN_SEVERITY_WARNING;
    s->stats->errors += d->severity == KILN_SEVERITY_ERROR;
    if (s->o->diag.fn) s->o->diag.fn(s->o->diag.user, &copy);
}

/* Bones of `sk` whose names the clip's joints carry exactly. */
static uint32_t kiln__shared_names(const kiln__anim *an, const kiln__skeleton *sk)
{
    uint32_t n = 0;
    for (uint32_t j = 0; j < an->joint_count; j++)
        for (uint32_t i = 0; i < sk->bone_count; i++)
            if (an->joints[j].name && strcmp(an->joints[j].name, sk->names[i]) == 0) {
                n++;
                break;
            }
    return n;
}

/* The skeleton sharing the most bone names with the clip: its own input's first, then the
 * others in input order (the first of equals wins). NULL when none shares a name. */
static const kiln__skeleton *kiln__clip_skeleton(const kiln__job *jobs, uint32_t count, uint32_t own, const kiln__anim *an)
{
    const kiln__skeleton *best = NULL;
    uint32_t best_n = 0;
    for (uint32_t k = 0; k <= count; k++) {
        uint32_t i = k == 0 ? own : k - 1;
        if (k > 0 && i == own) continue;
        const kiln__bake_unit *u = &jobs[i].unit;
        for (uint32_t s = 0; s < u->skeleton_count; s++) {
            uint32_t n = kiln__shared_names(an, &u->skeletons[s]);
            if (n > best_n) best = &u->skeletons[s], best_n = n;
        }
    }
    return best;
}

/* One clip: its input, and on the pool the reports it made, to replay. */
typedef struct kiln__clip_task {
    uint32_t         input;
    kiln__anim      *an;
    kiln_result      result;
    kiln_diag       *diags;
    uint32_t         diag_count, diag_cap;
    int              diag_oom;      /* a report could not be kept */
    const kiln_allocator *allocator;
} kiln__clip_task;

static void kiln__clip_keep(void *user, const kiln_diag *d)
{
    kiln__clip_task *t = user;
    if (t->diag_count == t->diag_cap) {
        uint32_t cap = t->diag_cap ? t->diag_cap * 2 : 4;
        kiln_diag *grown = cap > t->diag_cap ? kiln__realloc(t->allocator, t->diags, (size_t)cap * sizeof *grown) : NULL;
        if (!grown) {
            t->diag_oom = 1;
            return;
        }
        t->diags = grown, t->diag_cap = cap;
    }
    t->diags[t->diag_count++] = *d;
}

/* Encodes the clip, reporting to `sink`. */
static kiln_result kiln__clip_encode(const kiln__job *jobs, uint32_t count, const kiln_bake_options *o,
                                     kiln__clip_task *t, const kiln_diag_sink *sink)
{
    const kiln__skeleton *sk = kiln__clip_skeleton(jobs, count, t->input, t->an);
    kiln__anim_bind_rest(o->allocator, t->an, sk, sink);
    kiln_result r = kiln__anim_align(o->allocator, t->an, sk);
    if (r == KILN_OK) r = kiln__anim_encode(o->allocator, o, sink, t->an, sk);
    return r;
}

typedef struct kiln__clip_pool {
    pthread_mutex_t          lock;
    const kiln__job         *jobs;
    uint32_t                 count;
    const kiln_bake_options *o;
    kiln__clip_task         *tasks;
    uint32_t                 task_count;
    uint32_t                 next;      /* next clip to start */
    int                      failed;    /* a clip failed: start no more */
} kiln__clip_pool;

static void *kiln__clip_worker(void *arg)
{
    kiln__clip_pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        uint32_t i = p->failed ? p->task_count : p->next;
        if (i < p->task_count) p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->task_count) return NULL;
        kiln__clip_task *t = &p->tasks[i];
        kiln_diag_sink sink = {kiln__clip_keep, t};
        t->result = kiln__clip_encode(p->jobs, p->count, p->o, t, &sink);
        if (t->result == KILN_OK && t->diag_oom) t->result = KILN_ERR_OUT_OF_MEMORY;
        if (t->result != KILN_OK) {
            pthread_mutex_lock(&p->lock);
            p->failed = 1;
            pthread_mutex_unlock(&p->lock);
        }
    }
}

/* Runs every task on `threads` threads (the calling one among them). 0 when no thread could
 * be started: the caller encodes serially. */
static int kiln__clip_pool_run(kiln__clip_pool *p, uint32_t threads)
{
    pthread_t started_threads[KILN__CLIP_THREADS];
    uint32_t started = 0;
    if (pthread_mutex_init(&p->lock, NULL) != 0) return 0;
    while (started + 1 < threads && pthread_create(&started_threads[started], NULL, kiln__clip_worker, p) == 0)
        started++;
    if (started == 0) {
        pthread_mutex_destroy(&p->lock);
        return 0;
    }
    kiln__clip_worker(p);
    for (uint32_t k = 0; k < started; k++) pthread_join(started_threads[k], NULL);
    pthread_mutex_destroy(&p->lock);
    return 1;
}

static kiln_result kiln__clip_failed(kiln_result r, const kiln__clip_task *t, const kiln__job *jobs, kiln_diag *err)
{
    const char *path = jobs[t->input].unit.input->path;
    kiln__bake_report_fill(err, r, KILN_SEVERITY_ERROR, NULL, NULL, KILN_NO_OFFSET, "while encoding animation '%s'",
                           t->an->name);
    if (err) snprintf(err->path, sizeof err->path, "%s", path ? path : "");
    return r;
}

kiln_result kiln__encode_clips(kiln__job *jobs, uint32_t count, const kiln_bake_options *o, kiln_diag *err)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < count; i++) n += jobs[i].unit.anim_count;
    if (n == 0) return KILN_OK;
    kiln__clip_task *tasks = kiln__realloc(o->allocator, NULL, (size_t)n * sizeof *tasks);
    if (!tasks) {
        kiln__bake_report_fill(err, KILN_ERR_OUT_OF_MEMORY, KILN_SEVERITY_ERROR, NULL, NULL, KILN_NO_OFFSET,
                               "encoding %u animations", n);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    memset(tasks, 0, (size_t)n * sizeof *tasks);
    for (uint32_t i = 0, k = 0; i < count; i++)
        for (uint32_t c = 0; c < jobs[i].unit.anim_count; c++, k++)
            tasks[k].input = i, tasks[k].an = &jobs[i].unit.anims[c], tasks[k].allocator = o->allocator;

    uint32_t threads = o->threads < n ? o->threads : n;
    if (threads > KILN__CLIP_THREADS) threads = KILN__CLIP_THREADS;
    kiln__clip_pool pool = {.jobs = jobs, .count = count, .o = o, .tasks = tasks, .task_count = n};
    int pooled = threads > 1 && kiln__clip_pool_run(&pool, threads);

    kiln_result r = KILN_OK;
    for (uint32_t k = 0; k < n && r == KILN_OK; k++) {
        kiln__clip_task *t = &tasks[k];
        kiln__bake_unit *u = &jobs[t->input].unit;
        kiln__clip_sink cs = {o, u->input->path, &u->stats};
        kiln_diag_sink sink = {kiln__clip_report, &cs};
        if (pooled) {
            for (uint32_t d = 0; d < t->diag_count; d++) kiln__clip_report(&cs, &t->diags[d]);
            r = t->result;
        } else {
            r = kiln__clip_encode(jobs, count, o, t, &sink);
        }
        if (r != KILN_OK) r = kiln__clip_failed(r, t, jobs, err);
    }
    for (uint32_t k = 0; k < n; k++) kiln__free(o->allocator, tasks[k].diags);
    kiln__free(o->allocator, tasks);
    return r;
}
