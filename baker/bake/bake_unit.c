/* Stage 1: one input -> one unit. The input is imported (kiln_source_import: the importer named
 * by the input's format, or the one its leading bytes match), validated, then baked by the walk
 * over the source scene (bake_walk.c). Everything the unit keeps is copied out of the scene, so
 * the scene is released before the job ends. The reports of one input come in that order: the
 * importer's (parse and repairs), then the stages'.
 */
#include <stdio.h>
#include <string.h>

#include "bake_scene.h"
#include "bake_stage.h"
#include "util.h"
#include "ds.h"

/* ---- diagnostics ---------------------------------------------------------------------------- */

/* "<input>:<node path>" in the diag's path, so reports from several inputs stay apart. */
static void kiln__prefix_path(kiln_diag *d, const char *input)
{
    if (!input || !input[0]) return;
    char node[sizeof d->path];
    memcpy(node, d->path, sizeof node);
    size_t cap = sizeof d->path - 1, n = strlen(input);
    if (n > cap) n = cap;
    memcpy(d->path, input, n);
    if (node[0] && n < cap) {
        d->path[n++] = ':';
        size_t m = strlen(node);
        if (m > cap - n) m = cap - n;
        memcpy(d->path + n, node, m);
        n += m;
    }
    d->path[n] = 0;
}

static void kiln__job_sink(void *user, const kiln_diag *d)
{
    kiln__job *job = user;
    kiln_diag copy = *d;
    kiln__prefix_path(&copy, job->unit.input->path);
    job->empty_reported += d->code == KILN_ERR_CAST_EMPTY;
    if (d->severity == KILN_SEVERITY_ERROR) {
        job->unit.stats.errors++;
        job->errors_reported++;
        if (!job->has_first_error) {
            job->first_error = copy;
            job->has_first_error = 1;
        }
    } else if (d->severity == KILN_SEVERITY_WARNING) {
        job->unit.stats.warnings++;
    }
    if (job->diag_count >= KILN__DIAG_KEEP) {
        job->diag_overflow++;
        return;
    }
    if (job->diag_count == job->diag_cap) {
        uint32_t cap = job->diag_cap ? job->diag_cap * 2 : 16;
        if (cap > KILN__DIAG_KEEP) cap = KILN__DIAG_KEEP;
        kiln_diag *grown = kiln__realloc(job->allocator, job->diags, cap * sizeof *grown);
        if (!grown) {
            job->diag_oom = 1;
            return;
        }
        job->diags = grown;
        job->diag_cap = cap;
    }
    job->diags[job->diag_count++] = copy;
}

kiln_result kiln__job_run(kiln__job *job, const kiln_bake_input *input, uint32_t source)
{
    job->unit.input = input;
    job->unit.source = source;
    kiln__bake_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.input = input;
    ctx.options = job->options;
    ctx.allocator = job->allocator;
    ctx.sink.fn = kiln__job_sink;
    ctx.sink.user = job;
    ctx.stats = &job->unit.stats;
    job->unit.stats.input_bytes = input->size;

    kiln_import_options io;
    memset(&io, 0, sizeof io);
    io.allocator = job->allocator;
    io.diag = ctx.sink;
    io.framerate = job->options->framerate;
    kiln_source_scene scene;
    kiln_result r = kiln_source_import(input->data, input->size, input->path, input->format, &io, &scene, &job->error);
    if (r != KILN_OK) {
        /* ERR_FORMAT_UNKNOWN is about the whole input and names it already */
        if (r != KILN_ERR_FORMAT_UNKNOWN) kiln__prefix_path(&job->error, input->path);
        return job->result = r;
    }
    r = kiln__bake_source(job, &ctx, &scene);
    if (r == KILN_OK && job->diag_oom) r = KILN_ERR_OUT_OF_MEMORY;
    if (r != KILN_OK) {
        memset(&job->error, 0, sizeof job->error);
        job->error.code = r;
        job->error.severity = KILN_SEVERITY_ERROR;
        job->error.offset = KILN_NO_OFFSET;
        snprintf(job->error.message, sizeof job->error.message, "%s: while baking", kiln_result_str(r));
        kiln__prefix_path(&job->error, input->path);
    }
    kiln_source_scene_free(&scene);
    return job->result = r;
}

void kiln__job_free(kiln__job *job)
{
    kiln__bake_unit *u = &job->unit;
    const kiln_allocator *a = job->allocator;
    for (uint32_t i = 0; i < u->model_count; i++) kiln__free(a, u->models[i].name);
    for (uint32_t i = 0; i < u->skeleton_count; i++) kiln__skeleton_free(a, &u->skeletons[i]);
    for (uint32_t i = 0; i < u->mesh_count; i++) kiln__mesh_free(a, &u->meshes[i]);
    for (uint32_t i = 0; i < u->hair_count; i++) kiln__hair_free(a, &u->hairs[i]);
    for (uint32_t i = 0; i < u->material_count; i++) kiln__material_free(a, &u->materials[i]);
    for (uint32_t i = 0; i < u->instance_count; i++) kiln__instance_free(a, &u->instances[i]);
    for (uint32_t i = 0; i < u->anim_count; i++) kiln__anim_free(a, &u->anims[i]);
    kiln__free(a, u->anims);
    for (uint32_t i = 0; i < u->blend_shape_count; i++) {
        kiln__free(a, u->blend_shapes[i].name);
        kiln__free(a, u->blend_shapes[i].indices);
        kiln__free(a, u->blend_shapes[i].deltas);
    }
    for (uint32_t i = 0; i < u->constraint_count; i++) kiln__free(a, u->constraints[i].name);
    for (uint32_t i = 0; i < u->ik_handle_count; i++) kiln__free(a, u->ik_handles[i].name);
    kiln__free(a, u->blend_shapes);
    kiln__free(a, u->constraints);
    kiln__free(a, u->ik_handles);
    kiln__free(a, u->models);
    kiln__free(a, u->skeletons);
    kiln__free(a, u->meshes);
    kiln__free(a, u->hairs);
    kiln__free(a, u->materials);
    kiln__free(a, u->instances);
    kiln__free(a, u->author);
    kiln__free(a, u->software);
    kiln__free(a, u->scene_root);
    kiln__free(a, u->scene_root_rel);
    kiln__free(a, u->input_key);
    kiln__free(a, job->diags);
    job->diags = NULL;
    memset(u, 0, sizeof *u);
}
