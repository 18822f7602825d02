/* Private: one input's trip through the bake (a "job"), and the stage-2 merge.
 *
 * A job owns its unit (bake_internal.h) plus what the calling thread needs afterwards: the
 * diagnostics it produced, buffered so that the caller's sink is only ever called from the
 * calling thread, in input order, whatever the thread count; the first ERROR (for strict
 * mode); and its failure, if any. Jobs share nothing, so any number run in parallel.
 */
#ifndef KILN_BAKER_BAKE_STAGE_H
#define KILN_BAKER_BAKE_STAGE_H

#include "bake_internal.h"
#include "blob_write.h"

/* Diagnostics kept per input; further ones are counted, and summarised when replayed. */
#define KILN__DIAG_KEEP 1000u

typedef struct kiln__job {
    kiln__bake_unit          unit;
    const kiln_bake_options *options;      /* normalised by kiln_bake */
    const kiln_allocator    *allocator;    /* options->allocator (NULL: libc) */
    kiln_result              result;       /* stage 1 outcome */
    kiln_diag                error;        /* why it failed (result != KILN_OK) */
    kiln_diag                first_error;  /* the first ERROR-severity report */
    int                      has_first_error;
    int                      diag_oom;     /* buffering a diagnostic ran out of memory */
    kiln_diag               *diags;
    uint32_t                 diag_count, diag_cap;
    uint64_t                 diag_overflow;/* reports beyond KILN__DIAG_KEEP */
    uint64_t                 errors_reported; /* ERROR reports so far (to tell reported drops) */
    uint64_t                 empty_reported;  /* ERR_CAST_EMPTY reports so far */
    /* Input bytes that fed each part (the items' loc.size), for the per-section statistics. */
    uint64_t                 bone_bytes, geometry_bytes, material_bytes, instance_bytes;
    volatile int             done;         /* set under the pool lock when stage 1 ends */
} kiln__job;

/* Stage 1: parses input `source` and bakes every node it can into job->unit. Sets and returns
 * job->result (with job->error on failure). */
kiln_result kiln__job_run(kiln__job *job, const kiln_bake_input *input, uint32_t source);
void kiln__job_free(kiln__job *job);

/* Stage 1 on a scene already imported and validated (bake_walk.c): every model, instance and
 * clip of `scene` through its stage into job->unit. Fails only with ERR_OUT_OF_MEMORY. */
kiln_result kiln__bake_source(kiln__job *job, const kiln__bake_ctx *ctx, const kiln_source_scene *scene);

/* Stage 1b (bake_clips.c): every clip of every unit, bound to the skeleton it animates and
 * encoded, in input order; on options->threads threads when there are several clips, with the
 * same reports, statistics and outcome as one thread. Returns the first failure in that order. */
kiln_result kiln__encode_clips(kiln__job *jobs, uint32_t count, const kiln_bake_options *o, kiln_diag *err);

/* Stage 2: the units of jobs[0 .. count) into the builder, in input order: global indices,
 * strings, name entries, instances grouped by reference, metadata. ERR_OUT_OF_MEMORY is the
 * only failure; the builder is then still safe to free. */
kiln_result kiln__emit(kiln__blob_builder *b, const kiln__job *jobs, uint32_t count, const kiln_allocator *a);

#endif
