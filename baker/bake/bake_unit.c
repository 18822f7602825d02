/* Stage 1: one input -> one unit. Parse, then walk every Root: Models (skeleton, materials,
 * meshes, hair), Instances, Metadata. Everything the unit keeps is copied out of the file, so
 * the parsed document is released before the job ends.
 */
#include <stdio.h>
#include <string.h>

#include "bake_blend_shape.h"
#include "cast_import.h"
#include "importers.h"
#include "bake_scene.h"
#include "bake_stage.h"
#include "util.h"
#include "diag.h"
#include "ds.h"

/* The walk's state beside the stages' context: the parsed document and the Cast importer that
 * turns each node into its source-layer struct just before its stage bakes it (so that the
 * reports of the two stay in file order). The context is the first member. */
typedef struct kiln__walk {
    kiln__bake_ctx     ctx;
    const kiln_cast_doc *doc;
    kiln__cast_import  *import;
} kiln__walk;

#define KILN__DOC(c)    (((const kiln__walk *)(const void *)(c))->doc)
#define KILN__IMPORT(c) (((const kiln__walk *)(const void *)(c))->import)

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

static kiln_result kiln__fail(kiln__job *job, kiln_result r, const kiln_cast_doc *doc, uint32_t node, const char *what)
{
    kiln__diag_fill(&job->error, r, KILN_SEVERITY_ERROR, doc, node, NULL, KILN_NO_OFFSET, "%s", what);
    kiln__prefix_path(&job->error, job->unit.input->path);
    return r;
}

/* Snapshot of the report counters before a stage-1 baker runs. */
typedef struct kiln__mark {
    uint64_t errors, empty;
} kiln__mark;

static kiln__mark kiln__mark_of(const kiln__job *job)
{
    kiln__mark m = {job->errors_reported, job->empty_reported};
    return m;
}

/* A stage-1 baker returned `r` for `node`: fatal (out of memory) or the node is dropped. The
 * bakers and accessors report their drops; this covers the ones that did not, so that every
 * drop is in the log and strict mode sees the ones that lose data. A node dropped for being
 * empty loses nothing, hence a warning (if nobody has said it was empty yet). */
static kiln_result kiln__dropped(kiln__job *job, const kiln__bake_ctx *ctx, uint32_t node, kiln_result r,
                                 kiln__mark before)
{
    if (r == KILN_OK || r == KILN_ERR_OUT_OF_MEMORY) return r;
    int empty = r == KILN_ERR_CAST_EMPTY;
    if (job->errors_reported != before.errors || (empty && job->empty_reported != before.empty)) return KILN_OK;
    kiln__diag_report(&ctx->sink, r, empty ? KILN_SEVERITY_WARNING : KILN_SEVERITY_ERROR, KILN__DOC(ctx), node, NULL,
                      KILN_NO_OFFSET, "%s dropped", kiln_cast_id_name(kiln_cast_node_at(KILN__DOC(ctx), node)->id));
    return KILN_OK;
}

/* ---- walking ---------------------------------------------------------------------------------- */

static uint32_t kiln__first_child(const kiln_cast_doc *doc, uint32_t node)
{
    return kiln_cast_node_at(doc, node)->first_child;
}

static uint32_t kiln__next(const kiln_cast_doc *doc, uint32_t node)
{
    return kiln_cast_node_at(doc, node)->next_sibling;
}

/* Sizes the unit's tables from the node counts, so nothing grows later. */
static kiln_result kiln__reserve_unit(kiln__job *job, const kiln_cast_doc *doc)
{
    uint32_t models = 0, meshes = 0, hairs = 0, materials = 0, instances = 0, anims = 0;
    uint32_t ik_handles = 0, constraints = 0, shapes = 0;
    for (uint32_t k = 0; k < kiln_cast_root_count(doc); k++) {
        uint32_t root = kiln_cast_root(doc, k);
        if (kiln_cast_node_at(doc, root)->id != KILN_CAST_ID_ROOT) continue;
        for (uint32_t c = kiln__first_child(doc, root); c != KILN_CAST_NONE; c = kiln__next(doc, c)) {
            uint32_t id = kiln_cast_node_at(doc, c)->id;
            instances += id == KILN_CAST_ID_INSTANCE;
            anims += id == KILN_CAST_ID_ANIMATION;
            if (id != KILN_CAST_ID_MODEL) continue;
            models++;
            meshes += kiln_cast_child_count(doc, c, KILN_CAST_ID_MESH);
            hairs += kiln_cast_child_count(doc, c, KILN_CAST_ID_HAIR);
            materials += kiln_cast_child_count(doc, c, KILN_CAST_ID_MATERIAL);
            shapes += kiln_cast_child_count(doc, c, KILN_CAST_ID_BLENDSHAPE);
            for (uint32_t s = kiln__first_child(doc, c); s != KILN_CAST_NONE; s = kiln__next(doc, s)) {
                if (kiln_cast_node_at(doc, s)->id != KILN_CAST_ID_SKELETON) continue;
                ik_handles += kiln_cast_child_count(doc, s, KILN_CAST_ID_IKHANDLE);
                constraints += kiln_cast_child_count(doc, s, KILN_CAST_ID_CONSTRAINT);
            }
        }
    }
    kiln__bake_unit *u = &job->unit;
    const kiln_allocator *a = job->allocator;
    int ok = 1;
#define KILN__RESERVE(field, n)                                                     \
    if ((n) && !(u->field = kiln__realloc(a, NULL, (size_t)(n) * sizeof *u->field))) \
        ok = 0;                                                                     \
    else if (n)                                                                     \
        memset(u->field, 0, (size_t)(n) * sizeof *u->field);
    KILN__RESERVE(models, models)
    KILN__RESERVE(skeletons, models)
    KILN__RESERVE(meshes, meshes)
    KILN__RESERVE(hairs, hairs)
    KILN__RESERVE(materials, materials)
    KILN__RESERVE(instances, instances)
    KILN__RESERVE(anims, anims)
    KILN__RESERVE(ik_handles, ik_handles)
    KILN__RESERVE(constraints, constraints)
    KILN__RESERVE(blend_shapes, shapes)
#undef KILN__RESERVE
    return ok ? KILN_OK : KILN_ERR_OUT_OF_MEMORY;
}

/* Name of a Model without `n`: the importers fall back to the file name. */
static char *kiln__model_name(const kiln__bake_ctx *ctx, const char *name, uint32_t index)
{
    if (name) return kiln__strdup(ctx->allocator, name);
    const char *path = ctx->input->path && ctx->input->path[0] ? ctx->input->path : "model";
    char *stem = kiln__path_stem(ctx->allocator, path);
    if (!stem || index == 0) return stem;
    char *numbered = kiln__strfmt(ctx->allocator, "%s_%u", stem, index);
    kiln__free(ctx->allocator, stem);
    return numbered;
}

/* The Skeleton's IKHandles and Constraints in file order, each imported then baked; `order`
 * counts every one of its kind (opaque ones too). */
static kiln_result kiln__model_rig(const kiln__bake_ctx *ctx, uint32_t skel, uint32_t skeleton, const kiln__skeleton *sk,
                                   kiln__bake_unit *u)
{
    const kiln_cast_doc *doc = KILN__DOC(ctx);
    kiln__rig_cache *cache = NULL;
    uint32_t ik_order = 0, constraint_order = 0;
    kiln_result r = KILN_OK;
    for (uint32_t c = kiln__first_child(doc, skel); c != KILN_CAST_NONE && r == KILN_OK; c = kiln__next(doc, c)) {
        const kiln_cast_node *n = kiln_cast_node_at(doc, c);
        if (n->flags & KILN_CAST_NODE_OPAQUE) {
            /* reported by the parser; it still holds its place in the order */
            ik_order += n->id == KILN_CAST_ID_IKHANDLE;
            constraint_order += n->id == KILN_CAST_ID_CONSTRAINT;
            continue;
        }
        if (n->id == KILN_CAST_ID_IKHANDLE) {
            kiln_source_ik_handle h;
            memset(&h, 0, sizeof h);
            r = kiln__cast_import_ik_handle(KILN__IMPORT(ctx), c, sk->bone_count, &h);
            if (r == KILN_OK) r = kiln__bake_ik_handle(ctx, &h, skeleton, sk, ik_order, u);
            ik_order++;
        } else if (n->id == KILN_CAST_ID_CONSTRAINT) {
            kiln_source_constraint k;
            memset(&k, 0, sizeof k);
            r = kiln__cast_import_constraint(KILN__IMPORT(ctx), c, sk->bone_count, &k);
            if (r == KILN_OK) r = kiln__bake_constraint(ctx, &k, skeleton, sk, constraint_order, &cache, u);
            constraint_order++;
        }
        if (r != KILN_ERR_OUT_OF_MEMORY) r = KILN_OK; /* dropped and reported */
    }
    kiln__rig_cache_free(ctx->allocator, cache);
    return r;
}

static kiln_result kiln__model_skeleton(kiln__job *job, const kiln__bake_ctx *ctx, uint32_t skel,
                                        kiln__model *m)
{
    kiln__bake_unit *u = &job->unit;
    const kiln_cast_doc *doc = KILN__DOC(ctx);
    kiln__skeleton *sk = &u->skeletons[u->skeleton_count];
    kiln__mark before = kiln__mark_of(job);
    kiln_source_skeleton ss;
    memset(&ss, 0, sizeof ss);
    kiln_result r = kiln__cast_import_skeleton(KILN__IMPORT(ctx), skel, &ss);
    if (r == KILN_OK) r = kiln__bake_skeleton(ctx, &ss, sk);
    if (r != KILN_OK) return kiln__dropped(job, ctx, skel, r, before);
    if (sk->bone_count == 0) {
        kiln__diag_report(&ctx->sink, KILN_ERR_CAST_EMPTY, KILN_SEVERITY_WARNING, doc, skel, NULL, KILN_NO_OFFSET,
                          "skeleton has no bones; the model is baked without one");
        kiln__skeleton_free(ctx->allocator, sk);
        return KILN_OK;
    }
    m->skeleton = (int32_t)u->skeleton_count++;
    for (uint32_t b = 0; b < ss.bone_count; b++) job->bone_bytes += ss.bones[b].loc.size;
    return kiln__model_rig(ctx, skel, (uint32_t)m->skeleton, sk, u);
}

/* The index among materials[first .. first + count) of the one baked from Material `node`
 * (as resolved by the mesh and hair accessors), or KILN_BLOB_NONE. */
static uint32_t kiln__material_index(const kiln__material *materials, uint32_t first, uint32_t count, uint32_t node)
{
    if (node == KILN_CAST_NONE) return KILN_BLOB_NONE;
    for (uint32_t i = first; i < first + count; i++)
        if (materials[i].cast_node == node) return i;
    return KILN_BLOB_NONE;
}

/* Materials, then meshes and hair (which link to the materials), in file order each. */
static kiln_result kiln__model_parts(kiln__job *job, const kiln__bake_ctx *ctx, uint32_t node, uint32_t model,
                                     const kiln__skeleton *skeleton)
{
    kiln__bake_unit *u = &job->unit;
    const kiln_cast_doc *doc = KILN__DOC(ctx);
    uint32_t first_material = u->material_count;
    kiln_result r = KILN_OK;
    for (uint32_t c = kiln__first_child(doc, node); c != KILN_CAST_NONE && r == KILN_OK; c = kiln__next(doc, c)) {
        const kiln_cast_node *n = kiln_cast_node_at(doc, c);
        if (n->id != KILN_CAST_ID_MATERIAL) continue;
        kiln__mark before = kiln__mark_of(job);
        kiln_source_material sm;
        memset(&sm, 0, sizeof sm);
        r = kiln__cast_import_material(KILN__IMPORT(ctx), c, &sm);
        if (r == KILN_OK) r = kiln__bake_material(ctx, &sm, n->ordinal, model, &u->materials[u->material_count]);
        if (r == KILN_OK) {
            u->materials[u->material_count].cast_node = c;
            u->material_count++;
            job->material_bytes += sm.loc.size;
        }
        r = kiln__dropped(job, ctx, c, r, before);
    }
    uint32_t material_count = u->material_count - first_material;
    /* The BlendShapes: baked with their base mesh (bake_blend_shape.h), which they name by its
     * index among the Model's Meshes. */
    uint32_t shape_nodes = kiln_cast_child_count(doc, node, KILN_CAST_ID_BLENDSHAPE), shape_count = 0;
    kiln_source_blend_shape *src_shapes = kiln_source_alloc(KILN__IMPORT(ctx)->scene, shape_nodes, sizeof *src_shapes);
    if (!src_shapes && r == KILN_OK) r = KILN_ERR_OUT_OF_MEMORY;
    for (uint32_t c = kiln__first_child(doc, node); c != KILN_CAST_NONE && r == KILN_OK; c = kiln__next(doc, c)) {
        if (kiln_cast_node_at(doc, c)->id != KILN_CAST_ID_BLENDSHAPE) continue;
        uint32_t base = KILN_CAST_NONE;
        kiln_result rb = kiln__cast_import_blend_shape(KILN__IMPORT(ctx), c, &src_shapes[shape_count], &base);
        if (rb == KILN_ERR_OUT_OF_MEMORY) r = rb;
        if (rb != KILN_OK) continue;
        src_shapes[shape_count++].mesh = kiln_cast_node_at(doc, base)->ordinal;
    }
    kiln__model_shapes shapes;
    kiln_result rs = kiln__blend_shapes_begin(ctx, src_shapes, shape_count, &shapes);
    if (r == KILN_OK) r = rs;
    for (uint32_t c = kiln__first_child(doc, node); c != KILN_CAST_NONE && r == KILN_OK; c = kiln__next(doc, c)) {
        uint32_t id = kiln_cast_node_at(doc, c)->id;
        kiln__mark before = kiln__mark_of(job);
        if (id == KILN_CAST_ID_MESH) {
            kiln__mesh *m = &u->meshes[u->mesh_count];
            /* The mesh's copy lives only while it is baked (a scene of its own). */
            kiln_source_mesh sm;
            memset(&sm, 0, sizeof sm);
            kiln_source_scene mesh_scene;
            kiln_source_scene_init(&mesh_scene, ctx->allocator);
            kiln__cast_import mesh_import = *KILN__IMPORT(ctx);
            mesh_import.scene = &mesh_scene;
            r = kiln__cast_import_mesh(&mesh_import, c, &sm);
            if (r == KILN_OK)
                r = kiln__bake_mesh_shaped(ctx, &sm, kiln_cast_node_at(doc, c)->ordinal, skeleton, &shapes, u,
                                           u->mesh_count, m);
            kiln_source_scene_free(&mesh_scene);
            if (r == KILN_OK) {
                /* The accessor again, silently, for the Material node it resolved. */
                kiln_cast_mesh cm;
                uint32_t mat = kiln_cast_get_mesh(doc, c, &cm, NULL) == KILN_OK ? cm.material : KILN_CAST_NONE;
                m->model = model;
                m->material = kiln__material_index(u->materials, first_material, material_count, mat);
                job->geometry_bytes += m->input_bytes;
                u->mesh_count++;
            }
        } else if (id == KILN_CAST_ID_HAIR) {
            kiln__hair *h = &u->hairs[u->hair_count];
            kiln_source_hair sh;
            memset(&sh, 0, sizeof sh);
            r = kiln__cast_import_hair(KILN__IMPORT(ctx), c, &sh);
            if (r == KILN_OK) r = kiln__bake_hair(ctx, &sh, kiln_cast_node_at(doc, c)->ordinal, h);
            if (r == KILN_OK) {
                kiln_cast_hair ch;
                uint32_t mat = kiln_cast_get_hair(doc, c, &ch, NULL) == KILN_OK ? ch.material : KILN_CAST_NONE;
                h->model = model;
                h->material = kiln__material_index(u->materials, first_material, material_count, mat);
                job->geometry_bytes += sh.loc.size;
                u->hair_count++;
            }
        } else {
            continue;
        }
        r = kiln__dropped(job, ctx, c, r, before);
    }
    kiln__blend_shapes_end(ctx, &shapes, r == KILN_OK);
    return r;
}

static kiln_result kiln__bake_model(kiln__job *job, const kiln__bake_ctx *ctx, uint32_t node)
{
    kiln__bake_unit *u = &job->unit;
    kiln_cast_model cm;
    kiln__mark before = kiln__mark_of(job);
    kiln_result r = kiln_cast_get_model(KILN__DOC(ctx), node, &cm, &ctx->sink);
    if (r != KILN_OK) return kiln__dropped(job, ctx, node, r, before);

    uint32_t index = u->model_count;
    kiln__model *m = &u->models[index];
    m->name = kiln__model_name(ctx, cm.name, index);
    if (!m->name) return KILN_ERR_OUT_OF_MEMORY;
    memcpy(m->position, cm.position, sizeof m->position);
    memcpy(m->rotation, cm.rotation, sizeof m->rotation);
    memcpy(m->scale, cm.scale, sizeof m->scale);
    m->skeleton = -1;
    u->model_count++; /* from here on the unit owns the name */

    if (cm.skeleton != KILN_CAST_NONE) {
        r = kiln__model_skeleton(job, ctx, cm.skeleton, m);
        if (r != KILN_OK) return r;
    }
    const kiln__skeleton *skeleton = m->skeleton >= 0 ? &u->skeletons[m->skeleton] : NULL;
    return kiln__model_parts(job, ctx, node, index, skeleton);
}

static kiln_result kiln__roots(kiln__job *job, const kiln__bake_ctx *ctx)
{
    kiln__bake_unit *u = &job->unit;
    const kiln_cast_doc *doc = KILN__DOC(ctx);
    uint32_t instance_ordinal = 0;
    for (uint32_t k = 0; k < kiln_cast_root_count(doc); k++) {
        uint32_t root = kiln_cast_root(doc, k);
        if (kiln_cast_node_at(doc, root)->id != KILN_CAST_ID_ROOT) continue; /* reported by the parser */
        for (uint32_t c = kiln__first_child(doc, root); c != KILN_CAST_NONE; c = kiln__next(doc, c)) {
            const kiln_cast_node *n = kiln_cast_node_at(doc, c);
            kiln_result r = KILN_OK;
            if (n->flags & KILN_CAST_NODE_OPAQUE) continue; /* reported by the parser */
            switch (n->id) {
            case KILN_CAST_ID_MODEL:
                r = kiln__bake_model(job, ctx, c);
                break;
            case KILN_CAST_ID_INSTANCE: {
                kiln__mark before = kiln__mark_of(job);
                kiln_source_instance si;
                memset(&si, 0, sizeof si);
                r = kiln__cast_import_instance(KILN__IMPORT(ctx), c, &si);
                if (r == KILN_OK)
                    r = kiln__bake_instance(ctx, &si, instance_ordinal, u->scene_root, &u->instances[u->instance_count]);
                instance_ordinal++;
                if (r == KILN_OK) {
                    u->instance_count++;
                    job->instance_bytes += n->size;
                }
                r = kiln__dropped(job, ctx, c, r, before);
                break;
            }
            case KILN_CAST_ID_ANIMATION: {
                kiln__mark before = kiln__mark_of(job);
                kiln_source_animation sa;
                memset(&sa, 0, sizeof sa);
                r = kiln__cast_import_animation(KILN__IMPORT(ctx), c, &sa);
                if (r == KILN_OK) r = kiln__bake_anim(ctx, &sa, n->ordinal, &u->anims[u->anim_count]);
                if (r == KILN_OK) u->anim_count++;
                r = kiln__dropped(job, ctx, c, r, before);
                break;
            }
            case KILN_CAST_ID_METADATA:
                break; /* the first one was read up front; later ones give no hints (C.10) */
            default:
                kiln__diag_report(&ctx->sink, KILN_ERR_CAST_UNEXPECTED_PARENT, KILN_SEVERITY_WARNING, doc, c, NULL,
                                  n->offset, "a %s node cannot be a child of a Root; skipped",
                                  kiln_cast_id_name(n->id));
                break;
            }
            if (r != KILN_OK) return r;
        }
    }
    return KILN_OK;
}

kiln_result kiln__job_run(kiln__job *job, const kiln_bake_input *input, uint32_t source)
{
    job->unit.input = input;
    job->unit.source = source;
    kiln__walk walk;
    memset(&walk, 0, sizeof walk);
    kiln__bake_ctx ctx; /* filled, then copied into the walk */
    memset(&ctx, 0, sizeof ctx);
    ctx.input = input;
    ctx.options = job->options;
    ctx.allocator = job->allocator;
    ctx.sink.fn = kiln__job_sink;
    ctx.sink.user = job;
    ctx.stats = &job->unit.stats;
    job->unit.stats.input_bytes = input->size;

    /* The importer: named, or found from the leading bytes. Bytes nothing recognises go to the
     * Cast reader, which names what it found (ERR_CAST_BAD_MAGIC). */
    const kiln_importer *imp = input->format ? kiln_importer_find(input->format) : kiln_importer_detect(input->data, input->size);
    if (input->format && !imp) {
        kiln_source_scene none;
        kiln_result r = kiln_source_import(input->data, input->size, input->path, input->format, NULL, &none,
                                           &job->error);
        return job->result = r;
    }
    if (imp && (imp != &kiln__importer_cast || (job->options->flags & KILN__BAKE_SOURCE_WALK))) {
        kiln_import_options io;
        memset(&io, 0, sizeof io);
        io.allocator = job->allocator;
        io.diag = ctx.sink;
        io.framerate = job->options->framerate;
        kiln_source_scene scene;
        kiln_result r = kiln_source_import(input->data, input->size, input->path, imp->name, &io, &scene, &job->error);
        if (r != KILN_OK) {
            kiln__prefix_path(&job->error, input->path);
            return job->result = r;
        }
        r = kiln__bake_source(job, &ctx, &scene);
        if (r == KILN_OK && job->diag_oom) r = KILN_ERR_OUT_OF_MEMORY;
        if (r != KILN_OK) kiln__fail(job, r, NULL, KILN_CAST_NONE, "while baking");
        kiln_source_scene_free(&scene);
        return job->result = r;
    }

    kiln_cast_parse_options popts;
    memset(&popts, 0, sizeof popts);
    popts.allocator = job->allocator;
    popts.diag = ctx.sink;
    kiln_cast_doc *doc = NULL;
    kiln_result r = kiln_cast_parse(input->data, input->size, &popts, &doc, &job->error);
    if (r != KILN_OK) {
        kiln__prefix_path(&job->error, input->path);
        return job->result = r;
    }
    kiln_source_scene scene;
    kiln_source_scene_init(&scene, job->allocator);
    walk.ctx = ctx;
    walk.doc = doc;
    kiln__cast_import im = {doc, &scene, &walk.ctx.sink};
    walk.import = &im;

    r = kiln__reserve_unit(job, doc);
    if (r == KILN_OK) r = kiln__cast_import_metadata(&im);
    if (r == KILN_OK) r = kiln__bake_metadata(&walk.ctx, &scene.metadata, &job->unit);
    if (r == KILN_OK) r = kiln__roots(job, &walk.ctx);
    if (r == KILN_OK && job->diag_oom) r = KILN_ERR_OUT_OF_MEMORY;
    if (r != KILN_OK) kiln__fail(job, r, doc, KILN_CAST_NONE, "while baking");
    kiln_cast_free(doc);
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
    kiln__free(a, job->diags);
    job->diags = NULL;
    memset(u, 0, sizeof *u);
}
