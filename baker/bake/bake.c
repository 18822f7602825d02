/* kiln_bake: stage 1 per input (optionally on a thread pool), stage 2 merge in input order,
 * stage 3 layout, then the loader's full verification of the result.
 *
 * Threads: each input is an independent job (bake_stage.h). Workers take inputs in order from
 * a shared counter; the calling thread waits for them in input order and, for each, replays
 * its diagnostics into the caller's sink and calls the progress callback. So the sink and the
 * progress callback only ever run on the calling thread, in input order, and the output
 * (blob, diagnostics, the error of a failed bake: the first failing input's) is the same for
 * every thread count. The allocator, however, is called from the workers and must be thread
 * safe when threads > 1.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "bake_options.h"
#include "bake_stage.h"
#include "util.h"
#include "blob_write.h"
#include "bake_report.h"
#include "ds.h"
#include "file_atomic.h"
#include "kiln/blob.h"

#define KILN__MAX_THREADS 64u

/* ---- the pool ----------------------------------------------------------------------------------- */

typedef struct kiln__pool {
    pthread_mutex_t        lock;
    pthread_cond_t         finished;   /* a job's `done` became 1 */
    kiln__job             *jobs;
    const kiln_bake_input *inputs;
    uint32_t               count;
    uint32_t               next;       /* next input to start */
    int                    cancel;     /* stop starting new inputs */
} kiln__pool;

static void *kiln__worker(void *arg)
{
    kiln__pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        uint32_t i = p->cancel ? p->count : p->next;
        if (i < p->count) p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->count) return NULL;
        kiln__job_run(&p->jobs[i], &p->inputs[i], i);
        pthread_mutex_lock(&p->lock);
        p->jobs[i].done = 1;
        pthread_cond_broadcast(&p->finished);
        pthread_mutex_unlock(&p->lock);
    }
}

/* ---- per-input completion on the calling thread ----------------------------------------------- */

static void kiln__replay(const kiln_bake_options *o, const kiln__job *job)
{
    if (!o->diag.fn) return;
    for (uint32_t i = 0; i < job->diag_count; i++) o->diag.fn(o->diag.user, &job->diags[i]);
    if (job->diag_overflow) {
        kiln_diag d;
        kiln__bake_report_fill(&d, KILN_ERR_LIMIT, KILN_SEVERITY_INFO, NULL, NULL, KILN_NO_OFFSET,
                        "%llu more diagnostics not shown (counted in the statistics)",
                        (unsigned long long)job->diag_overflow);
        size_t n = strlen(job->unit.input->path ? job->unit.input->path : "");
        if (n >= sizeof d.path) n = sizeof d.path - 1;
        memcpy(d.path, job->unit.input->path ? job->unit.input->path : "", n);
        d.path[n] = 0;
        o->diag.fn(o->diag.user, &d);
    }
}

/* Hands input i's results to the caller. Returns its outcome (strict mode included). */
static kiln_result kiln__complete(const kiln_bake_options *o, kiln__job *job, uint32_t i, uint32_t count,
                                  kiln_diag *err)
{
    kiln__replay(o, job);
    if (o->progress) o->progress(o->progress_user, i + 1, count, job->unit.input->path);
    if (job->result != KILN_OK) {
        if (err) *err = job->error;
        return job->result;
    }
    if ((o->flags & KILN_BAKE_STRICT) && job->has_first_error) {
        if (err) {
            *err = job->first_error;
            size_t n = strlen(err->message);
            snprintf(err->message + n, sizeof err->message - n, " (strict mode)");
        }
        return job->first_error.code;
    }
    return KILN_OK;
}

/* Stage 1 for every input. Returns the first failure in input order. */
static kiln_result kiln__stage1(kiln__job *jobs, const kiln_bake_input *inputs, uint32_t count,
                                const kiln_bake_options *o, kiln_diag *err)
{
    uint32_t want = o->threads > count ? count : o->threads;
    if (want > KILN__MAX_THREADS) want = KILN__MAX_THREADS;
    pthread_t threads[KILN__MAX_THREADS];
    uint32_t started = 0;
    kiln__pool pool;
    memset(&pool, 0, sizeof pool);
    pool.jobs = jobs;
    pool.inputs = inputs;
    pool.count = count;
    if (want > 1 && pthread_mutex_init(&pool.lock, NULL) == 0) {
        if (pthread_cond_init(&pool.finished, NULL) == 0) {
            while (started < want && pthread_create(&threads[started], NULL, kiln__worker, &pool) == 0) started++;
            if (started == 0) pthread_cond_destroy(&pool.finished);
        }
        if (started == 0) pthread_mutex_destroy(&pool.lock);
    }

    kiln_result r = KILN_OK;
    for (uint32_t i = 0; i < count && r == KILN_OK; i++) {
        if (started) {
            pthread_mutex_lock(&pool.lock);
            while (!jobs[i].done) pthread_cond_wait(&pool.finished, &pool.lock);
            pthread_mutex_unlock(&pool.lock);
        } else {
            /* Serial (threads <= 1, or no thread could be created). */
            kiln__job_run(&jobs[i], &inputs[i], i);
        }
        r = kiln__complete(o, &jobs[i], i, count, err);
    }
    if (started) {
        pthread_mutex_lock(&pool.lock);
        pool.cancel = 1;
        pthread_mutex_unlock(&pool.lock);
        for (uint32_t t = 0; t < started; t++) pthread_join(threads[t], NULL);
        pthread_cond_destroy(&pool.finished);
        pthread_mutex_destroy(&pool.lock);
    }
    return r;
}

/* ---- stages 2 and 3 ------------------------------------------------------------------------------ */

static void kiln__merge_stats(kiln_bake_stats *s, const kiln_bake_stats *u)
{
    s->input_bytes += u->input_bytes;
    s->vertices_in += u->vertices_in;
    s->vertices_out += u->vertices_out;
    s->triangles_in += u->triangles_in;
    s->triangles_out += u->triangles_out;
    s->degenerate_faces_dropped += u->degenerate_faces_dropped;
    s->bad_index_faces_dropped += u->bad_index_faces_dropped;
    s->influences_dropped += u->influences_dropped;
    s->warnings += u->warnings;
    s->errors += u->errors;
}

static void kiln__anim_stats(kiln_bake_stats *s, const kiln__bake_unit *u)
{
    for (uint32_t i = 0; i < u->anim_count; i++) {
        const kiln__anim *an = &u->anims[i];
        s->animations++;
        s->anim_keys += an->key_count;
        s->anim_bytes += an->data_size + (uint64_t)an->scalar_count * an->frame_count * sizeof(float);
        if (an->max_error_m > s->anim_max_error_m) s->anim_max_error_m = an->max_error_m;
    }
}

static void kiln__count_records(kiln_bake_stats *s, const kiln__blob_builder *b)
{
    s->models = (uint32_t)stbds_arrlenu(b->models);
    s->meshes = (uint32_t)stbds_arrlenu(b->meshes);
    s->hairs = (uint32_t)stbds_arrlenu(b->hairs);
    s->skeletons = (uint32_t)stbds_arrlenu(b->skeletons);
    s->bones = (uint32_t)stbds_arrlenu(b->bones);
    s->materials = (uint32_t)stbds_arrlenu(b->materials);
    s->instances = (uint32_t)stbds_arrlenu(b->instances);
}

/* A blob the loader rejects is a baker bug; it must never reach the caller. */
static kiln_result kiln__verify(const void *blob, size_t size, kiln_diag *err)
{
    const kiln_blob *view = NULL;
    kiln_diag why;
    memset(&why, 0, sizeof why);
    kiln_result r = kiln_blob_load(blob, size, 0, &view, &why);
    if (r == KILN_OK) return KILN_OK;
    kiln__bake_report_fill(err, r, KILN_SEVERITY_ERROR, NULL, NULL, why.offset,
                    "internal error: the baked blob does not verify (%s%s%s)", why.path,
                    why.path[0] ? ": " : "", why.message);
    return r;
}

static kiln_result kiln__stage23(kiln__job *jobs, uint32_t count, const kiln_allocator *a, kiln_bake_result *out,
                                 kiln_diag *err)
{
    kiln__blob_builder b;
    kiln_result r = kiln__emit(&b, jobs, count, a);
    void *blob = NULL;
    size_t size = 0;
    if (r == KILN_OK) r = kiln__builder_finish(&b, a, &blob, &size, &out->stats);
    if (r == KILN_OK) kiln__count_records(&out->stats, &b);
    kiln__builder_free(&b, a);
    if (r != KILN_OK) {
        kiln__bake_report_fill(err, r, KILN_SEVERITY_ERROR, NULL, NULL, KILN_NO_OFFSET,
                        "while laying out the blob");
        return r;
    }
    r = kiln__verify(blob, size, err);
    if (r != KILN_OK) {
        kiln__aligned_free(a, blob);
        return r;
    }
    out->blob = blob;
    out->size = size;
    return KILN_OK;
}

/* ---- public API --------------------------------------------------------------------------------- */

kiln_result kiln_bake(const kiln_bake_input *inputs, uint32_t count, const kiln_bake_options *options,
                      kiln_bake_result *out, kiln_diag *err)
{
    if (err) memset(err, 0, sizeof *err);
    if (out) memset(out, 0, sizeof *out);
    kiln_bake_options o;
    const char *bad = kiln__bake_options_normalise(options, &o);
    if (!out || (count && !inputs) || bad) {
        kiln__bake_report_fill(err, KILN_ERR_INVALID_ARGUMENT, KILN_SEVERITY_ERROR, NULL, NULL,
                        KILN_NO_OFFSET, "%s", !out ? "no result" : bad ? bad : "no inputs");
        return KILN_ERR_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (!inputs[i].data && inputs[i].size) {
            kiln__bake_report_fill(err, KILN_ERR_INVALID_ARGUMENT, KILN_SEVERITY_ERROR, NULL, NULL,
                            KILN_NO_OFFSET, "input %u has no data", i);
            return KILN_ERR_INVALID_ARGUMENT;
        }
    }
    const kiln_allocator *a = o.allocator;
    kiln__job *jobs = count ? kiln__realloc(a, NULL, (size_t)count * sizeof *jobs) : NULL;
    if (count && !jobs) {
        kiln__bake_report_fill(err, KILN_ERR_OUT_OF_MEMORY, KILN_SEVERITY_ERROR, NULL, NULL, KILN_NO_OFFSET,
                        "baking %u inputs", count);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; i < count; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].options = &o;
        jobs[i].allocator = a;
        jobs[i].unit.input = &inputs[i];
    }

    kiln_result r = kiln__stage1(jobs, inputs, count, &o, err);
    if (r == KILN_OK) r = kiln__encode_clips(jobs, count, &o, err);
    if (r == KILN_OK) r = kiln__stage23(jobs, count, a, out, err);
    if (r == KILN_OK) {
        for (uint32_t i = 0; i < count; i++) {
            kiln__merge_stats(&out->stats, &jobs[i].unit.stats);
            kiln__anim_stats(&out->stats, &jobs[i].unit);
        }
        if (a) out->allocator = *a;
    }
    for (uint32_t i = 0; i < count; i++) kiln__job_free(&jobs[i]);
    kiln__free(a, jobs);
    if (r != KILN_OK) memset(out, 0, sizeof *out);
    return r;
}

kiln_result kiln_bake_save(const kiln_bake_result *res, const char *path, kiln_diag *err)
{
    if (!res || !res->blob) {
        kiln__bake_report_fill(err, KILN_ERR_INVALID_ARGUMENT, KILN_SEVERITY_ERROR, NULL, NULL,
                        KILN_NO_OFFSET, "no baked blob to save");
        return KILN_ERR_INVALID_ARGUMENT;
    }
    return kiln__file_save_bytes(path, res->blob, res->size, &res->allocator, KILN_ERR_OUTPUT, err);
}

void kiln_bake_result_free(kiln_bake_result *res)
{
    if (!res) return;
    kiln__aligned_free(&res->allocator, res->blob);
    memset(res, 0, sizeof *res);
}
