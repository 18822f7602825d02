/* Stage 1 on an imported scene: the walk over the source layer (kiln/bake/source.h) that
 * hands each model, instance and clip to its stage. The stages are the same ones the Cast walk
 * (bake_unit.c) uses node by node; only the order of the reports differs (an importer reports
 * all of its findings before the stages report theirs).
 */
#include <stdint.h>
#include <string.h>

#include "bake_blend_shape.h"
#include "bake_report.h"
#include "bake_scene.h"
#include "bake_stage.h"
#include "util.h"
#include "ds.h"

/* Report counters before a stage runs, to tell whether a failed item was reported. */
typedef struct kiln__walk_mark {
    uint64_t errors, empty;
} kiln__walk_mark;

static kiln__walk_mark kiln__walk_mark_of(const kiln__job *job)
{
    kiln__walk_mark m = {job->errors_reported, job->empty_reported};
    return m;
}

/* A stage returned `r` for the item at `loc`: fatal (out of memory) or the item is dropped,
 * reported here when the stage did not (an empty item loses nothing: a warning). */
static kiln_result kiln__walk_dropped(kiln__job *job, const kiln__bake_ctx *ctx, const kiln_source_loc *loc,
                                      const char *kind, kiln_result r, kiln__walk_mark before)
{
    if (r == KILN_OK || r == KILN_ERR_OUT_OF_MEMORY) return r;
    int empty = r == KILN_ERR_CAST_EMPTY;
    if (job->errors_reported != before.errors || (empty && job->empty_reported != before.empty)) return KILN_OK;
    kiln__bake_report(&ctx->sink, r, empty ? KILN_SEVERITY_WARNING : KILN_SEVERITY_ERROR, loc, NULL, KILN_NO_OFFSET,
                      "%s dropped", kind);
    return KILN_OK;
}

static kiln_result kiln__walk_reserve(kiln__job *job, const kiln_source_scene *s)
{
    uint64_t meshes = 0, hairs = 0, materials = 0, ik = 0, constraints = 0, shapes = 0;
    for (uint32_t i = 0; i < s->model_count; i++) {
        const kiln_source_model *m = &s->models[i];
        meshes += m->mesh_count;
        hairs += m->hair_count;
        materials += m->material_count;
        shapes += m->blend_shape_count;
        if (m->skeleton) {
            ik += m->skeleton->ik_handle_count;
            constraints += m->skeleton->constraint_count;
        }
    }
    kiln__bake_unit *u = &job->unit;
    const kiln_allocator *a = job->allocator;
    int ok = 1;
#define KILN__RESERVE(field, n)                                                                      \
    if ((n) && ((uint64_t)(n) > SIZE_MAX / sizeof *u->field ||                                       \
                !(u->field = kiln__realloc(a, NULL, (size_t)(n) * sizeof *u->field))))                \
        ok = 0;                                                                                      \
    else if (n)                                                                                      \
        memset(u->field, 0, (size_t)(n) * sizeof *u->field);
    KILN__RESERVE(models, s->model_count)
    KILN__RESERVE(skeletons, s->model_count)
    KILN__RESERVE(meshes, meshes)
    KILN__RESERVE(hairs, hairs)
    KILN__RESERVE(materials, materials)
    KILN__RESERVE(instances, s->instance_count)
    KILN__RESERVE(anims, s->animation_count)
    KILN__RESERVE(ik_handles, ik)
    KILN__RESERVE(constraints, constraints)
    KILN__RESERVE(blend_shapes, shapes)
#undef KILN__RESERVE
    return ok ? KILN_OK : KILN_ERR_OUT_OF_MEMORY;
}

/* A nameless model is named after the input file ("<stem>", then "<stem>_<index>"). */
static char *kiln__walk_model_name(const kiln__bake_ctx *ctx, const char *name, uint32_t index)
{
    if (name) return kiln__strdup(ctx->allocator, name);
    const char *path = ctx->input->path && ctx->input->path[0] ? ctx->input->path : "model";
    char *stem = kiln__path_stem(ctx->allocator, path);
    if (!stem || index == 0) return stem;
    char *numbered = kiln__strfmt(ctx->allocator, "%s_%u", stem, index);
    kiln__free(ctx->allocator, stem);
    return numbered;
}

static kiln_result kiln__walk_skeleton(kiln__job *job, const kiln__bake_ctx *ctx, const kiln_source_skeleton *src,
                                       kiln__model *m)
{
    kiln__bake_unit *u = &job->unit;
    kiln__skeleton *sk = &u->skeletons[u->skeleton_count];
    kiln__walk_mark before = kiln__walk_mark_of(job);
    kiln_result r = kiln__bake_skeleton(ctx, src, sk);
    if (r != KILN_OK) return kiln__walk_dropped(job, ctx, &src->loc, "Skeleton", r, before);
    if (sk->bone_count == 0) {
        kiln__bake_report(&ctx->sink, KILN_ERR_CAST_EMPTY, KILN_SEVERITY_WARNING, &src->loc, NULL, KILN_NO_OFFSET,
                          "skeleton has no bones; the model is baked without one");
        kiln__skeleton_free(ctx->allocator, sk);
        return KILN_OK;
    }
    m->skeleton = (int32_t)u->skeleton_count++;
    for (uint32_t b = 0; b < src->bone_count; b++) job->bone_bytes += src->bones[b].loc.size;
    return kiln__bake_rig(ctx, src, (uint32_t)m->skeleton, sk, u);
}

static kiln_result kiln__walk_model(kiln__job *job, const kiln__bake_ctx *ctx, const kiln_source_model *src)
{
    kiln__bake_unit *u = &job->unit;
    uint32_t index = u->model_count;
    kiln__model *m = &u->models[index];
    m->name = kiln__walk_model_name(ctx, src->name, index);
    if (!m->name) return KILN_ERR_OUT_OF_MEMORY;
    memcpy(m->position, src->position, sizeof m->position);
    memcpy(m->rotation, src->rotation, sizeof m->rotation);
    memcpy(m->scale, src->scale, sizeof m->scale);
    m->skeleton = -1;
    u->model_count++; /* from here on the unit owns the name */
    kiln_result r = KILN_OK;
    if (src->skeleton) r = kiln__walk_skeleton(job, ctx, src->skeleton, m);
    if (r != KILN_OK) return r;
    const kiln__skeleton *skeleton = m->skeleton >= 0 ? &u->skeletons[m->skeleton] : NULL;

    /* Materials (which only fail for memory), then meshes with their blend shapes, then hair. */
    uint32_t first_material = u->material_count;
    for (uint32_t i = 0; i < src->material_count && r == KILN_OK; i++) {
        r = kiln__bake_material(ctx, &src->materials[i], i, index, &u->materials[u->material_count]);
        if (r == KILN_OK) {
            u->material_count++;
            job->material_bytes += src->materials[i].loc.size;
        }
    }
    kiln__model_shapes shapes;
    kiln_result rs = kiln__blend_shapes_begin(ctx, src->blend_shapes, src->blend_shape_count, &shapes);
    if (r == KILN_OK) r = rs;
    for (uint32_t i = 0; i < src->mesh_count && r == KILN_OK; i++) {
        const kiln_source_mesh *sm = &src->meshes[i];
        kiln__walk_mark before = kiln__walk_mark_of(job);
        kiln__mesh *out = &u->meshes[u->mesh_count];
        r = kiln__bake_mesh_shaped(ctx, sm, i, skeleton, &shapes, u, u->mesh_count, out);
        if (r == KILN_OK) {
            out->model = index;
            out->material = sm->material == KILN_SOURCE_NONE ? KILN_BLOB_NONE : first_material + sm->material;
            job->geometry_bytes += out->input_bytes;
            u->mesh_count++;
        }
        r = kiln__walk_dropped(job, ctx, &sm->loc, "Mesh", r, before);
    }
    for (uint32_t i = 0; i < src->hair_count && r == KILN_OK; i++) {
        const kiln_source_hair *sh = &src->hairs[i];
        kiln__walk_mark before = kiln__walk_mark_of(job);
        kiln__hair *out = &u->hairs[u->hair_count];
        r = kiln__bake_hair(ctx, sh, i, out);
        if (r == KILN_OK) {
            out->model = index;
            out->material = sh->material == KILN_SOURCE_NONE ? KILN_BLOB_NONE : first_material + sh->material;
            job->geometry_bytes += sh->loc.size;
            u->hair_count++;
        }
        r = kiln__walk_dropped(job, ctx, &sh->loc, "Hair", r, before);
    }
    kiln__blend_shapes_end(ctx, &shapes, r == KILN_OK);
    return r;
}

kiln_result kiln__bake_source(kiln__job *job, const kiln__bake_ctx *ctx, const kiln_source_scene *s)
{
    kiln__bake_unit *u = &job->unit;
    kiln_result r = kiln__walk_reserve(job, s);
    if (r == KILN_OK) r = kiln__bake_metadata(ctx, &s->metadata, u);
    for (uint32_t i = 0; i < s->model_count && r == KILN_OK; i++) r = kiln__walk_model(job, ctx, &s->models[i]);
    for (uint32_t i = 0; i < s->instance_count && r == KILN_OK; i++) {
        kiln__walk_mark before = kiln__walk_mark_of(job);
        r = kiln__bake_instance(ctx, &s->instances[i], i, u->scene_root, &u->instances[u->instance_count]);
        if (r == KILN_OK) {
            u->instance_count++;
            job->instance_bytes += s->instances[i].loc.size;
        }
        r = kiln__walk_dropped(job, ctx, &s->instances[i].loc, "Instance", r, before);
    }
    for (uint32_t i = 0; i < s->animation_count && r == KILN_OK; i++) {
        kiln__walk_mark before = kiln__walk_mark_of(job);
        r = kiln__bake_anim(ctx, &s->animations[i], i, &u->anims[u->anim_count]);
        if (r == KILN_OK) u->anim_count++;
        r = kiln__walk_dropped(job, ctx, &s->animations[i].loc, "Animation", r, before);
    }
    return r;
}
