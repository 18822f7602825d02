/* The Unigine file layouts (spec 1, 2) and the importer entries: identifiers, headers,
 * sections in file order, the trailing identifier. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "unigine.h"
#include "unigine_internal.h"

/* 1 for "ms10"/"an10", 2 for another version of a known family, 0 otherwise. */
static int kiln__ug_family(const uint8_t *p, size_t size, char family)
{
    if (size < 4) return 0;
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    if ((family == 'm' || family == 0) && v == KILN__UG_MS10) return 1;
    if ((family == 'a' || family == 0) && v == KILN__UG_AN10) return 1;
    int digits = p[2] >= '0' && p[2] <= '9' && p[3] >= '0' && p[3] <= '9';
    int ms = (p[0] == 'm' && p[1] == 's') || (p[0] == 's' && p[1] == 'k');
    int an = p[0] == 'a' && p[1] == 'n';
    if (!digits) return 0;
    if (family == 'm') return ms ? 2 : 0;
    if (family == 'a') return an ? 2 : 0;
    return ms || an ? 2 : 0;
}

int kiln__detect_unigine(const void *data, size_t size)
{
    return kiln__ug_family(data, size, 0) != 0;
}

int kiln__detect_unigine_mesh(const void *data, size_t size)
{
    return kiln__ug_family(data, size, 'm') != 0;
}

int kiln__detect_unigine_anim(const void *data, size_t size)
{
    return kiln__ug_family(data, size, 'a') != 0;
}

static kiln_result kiln__ug_final(kiln__ug *ctx, uint32_t magic)
{
    kiln__ug_at(ctx, "final_identifier");
    kiln_result r = kiln__ug_magic(ctx, "final identifier", magic);
    if (r != KILN_OK) return r;
    if (ctx->pos < ctx->size) {
        kiln__ug_warn(ctx, "V17", ctx->pos, "%llu byte(s) after the final identifier; ignored",
                      (unsigned long long)(ctx->size - ctx->pos));
        char detail[96];
        snprintf(detail, sizeof detail, "%llu byte(s) after the final identifier",
                 (unsigned long long)(ctx->size - ctx->pos));
        r = kiln__ug_extra(ctx, ctx->pos, "trailing-bytes", NULL, detail);
    }
    return r;
}

static kiln_result kiln__ug_animations(kiln__ug *ctx, const kiln__ug_file *f)
{
    ctx->scene->animations = kiln_source_alloc(ctx->scene, f->anim_count, sizeof *ctx->scene->animations);
    if (!ctx->scene->animations) return kiln__ug_oom(ctx);
    for (uint32_t i = 0; i < f->anim_count; i++) {
        kiln_result r = kiln__ug_read_animation(ctx, f, i);
        if (r != KILN_OK) return r;
        ctx->scene->animation_count = i + 1;
    }
    return KILN_OK;
}

/* ---- .mesh --------------------------------------------------------------------------------- */

static kiln_result kiln__ug_surface_headers(kiln__ug *ctx, kiln__ug_surface_header **out, uint32_t *count,
                                            uint64_t *targets)
{
    kiln__ug_at(ctx, "surfaces");
    kiln_result r = kiln__ug_count(ctx, "surface count", 49, count);
    if (r != KILN_OK) return r;
    kiln__ug_surface_header *sh = kiln_source_alloc(ctx->scene, *count, sizeof *sh);
    if (!sh) return kiln__ug_oom(ctx);
    *targets = 0;
    for (uint32_t i = 0; i < *count; i++) {
        kiln__ug_at(ctx, "surface[%u]", i);
        sh[i].offset = ctx->pos;
        r = kiln__ug_string(ctx, "surface name", &sh[i].name);
        if (r == KILN_OK) r = kiln__ug_bounds(ctx, "surface-bounds", sh[i].name);
        if (r == KILN_OK) r = kiln__ug_count(ctx, "morph target count", 5, &sh[i].target_count);
        if (r != KILN_OK) return r;
        sh[i].target_names = kiln_source_alloc(ctx->scene, sh[i].target_count, sizeof *sh[i].target_names);
        if (!sh[i].target_names) return kiln__ug_oom(ctx);
        for (uint32_t k = 0; k < sh[i].target_count; k++) {
            kiln__ug_at(ctx, "surface[%u]/target[%u]", i, k);
            r = kiln__ug_string(ctx, "morph target name", &sh[i].target_names[k]);
            if (r != KILN_OK) return r;
        }
        *targets += sh[i].target_count;
    }
    *out = sh;
    return KILN_OK;
}

/* The model is named after the file (spec 3): its name without directory and extension;
 * NULL (named by the bake) without a path. */
static const char *kiln__ug_stem(kiln__ug *ctx)
{
    const char *p = ctx->file;
    if (!p || !p[0]) return NULL;
    for (const char *s = p; *s; s++)
        if (*s == '/' || *s == '\\') p = s + 1;
    const char *dot = strrchr(p, '.');
    size_t n = dot && dot != p ? (size_t)(dot - p) : strlen(p);
    return n ? kiln_source_strndup(ctx->scene, p, n) : NULL;
}

static kiln_result kiln__ug_mesh(kiln__ug *ctx)
{
    kiln_source_scene *sc = ctx->scene;
    kiln__ug_file f;
    memset(&f, 0, sizeof f);
    kiln__ug_at(ctx, "header");
    kiln_result r = kiln__ug_bounds(ctx, "bounds", "mesh");
    if (r == KILN_OK) r = kiln__ug_read_bones(ctx, &f);
    if (r == KILN_OK) r = kiln__ug_read_anim_names(ctx, &f);
    kiln__ug_surface_header *sh = NULL;
    uint32_t surface_count = 0;
    uint64_t targets = 0;
    if (r == KILN_OK) r = kiln__ug_surface_headers(ctx, &sh, &surface_count, &targets);
    if (r == KILN_OK) {
        kiln__ug_at(ctx, "middle_identifier");
        r = kiln__ug_magic(ctx, "middle identifier", KILN__UG_MS10);
    }
    if (r == KILN_OK) r = kiln__ug_read_bind(ctx, &f);
    if (r == KILN_OK) r = kiln__ug_animations(ctx, &f);
    if (r != KILN_OK) return r;

    kiln_source_model *model = kiln_source_alloc(sc, 1, sizeof *model);
    if (!model) return kiln__ug_oom(ctx);
    kiln__ug_at(ctx, "model");
    model->loc.path = kiln__ug_path(ctx);
    model->loc.offset = 0;
    model->loc.size = ctx->size;
    model->name = kiln__ug_stem(ctx);
    model->rotation[3] = 1.0f;
    model->scale[0] = model->scale[1] = model->scale[2] = 1.0f;
    kiln__ug_materials mats = {NULL, 16};
    while (mats.cap < 2u * (uint64_t)surface_count) mats.cap *= 2;
    mats.slots = kiln_source_alloc(sc, mats.cap, sizeof *mats.slots);
    model->meshes = kiln_source_alloc(sc, surface_count, sizeof *model->meshes);
    model->materials = kiln_source_alloc(sc, surface_count, sizeof *model->materials);
    model->blend_shapes = kiln_source_alloc(sc, targets, sizeof *model->blend_shapes);
    if (!model->loc.path || !mats.slots || !model->meshes || !model->materials || !model->blend_shapes)
        return kiln__ug_oom(ctx);
    r = kiln__ug_build_skeleton(ctx, &f, model);
    sc->models = model;
    sc->model_count = 1;
    for (uint32_t i = 0; r == KILN_OK && i < surface_count; i++) {
        /* 1.7: the per-surface identifier variant, between two surfaces only. */
        if (i > 0 && ctx->size - ctx->pos >= 4 && (uint32_t)kiln__ug_i32_at(ctx, ctx->pos) == KILN__UG_MS10) {
            kiln__ug_at(ctx, "surface[%u]", i - 1);
            r = kiln__ug_extra(ctx, ctx->pos, "surface-identifier", NULL,
                               "\"ms10\" between two surfaces (per-surface identifier layout)");
            ctx->pos += 4;
        }
        if (r == KILN_OK) r = kiln__ug_read_surface(ctx, &f, &sh[i], i, model, &mats);
    }
    if (r == KILN_OK) r = kiln__ug_final(ctx, KILN__UG_MS10);
    return r;
}

/* ---- .anim --------------------------------------------------------------------------------- */

/* The .anim's own bind pose: listed for `kiln inspect`, and handed to every clip as the pose it
 * was authored against, so the bake can check it against the target model's (V26). */
static kiln_result kiln__ug_anim_rest(kiln__ug *ctx, kiln__ug_file *f)
{
    f->rest = kiln_source_alloc(ctx->scene, f->bone_count, sizeof *f->rest);
    if (!f->rest) return kiln__ug_oom(ctx);
    for (uint32_t i = 0; i < f->bone_count; i++) {
        const kiln__ug_bone *b = &f->bones[i];
        kiln_source_rest_bone *rb = &f->rest[i];
        kiln__ug_at(ctx, "bind_pose[%u]", i);
        rb->loc.path = kiln__ug_path(ctx);
        rb->loc.offset = b->bind_offset;
        rb->loc.size = 40;
        rb->name = b->file_name;
        memcpy(rb->position, b->t, sizeof b->t);
        memcpy(rb->rotation, b->r, sizeof b->r);
        memcpy(rb->scale, b->s, sizeof b->s);
        if (!rb->loc.path) return kiln__ug_oom(ctx);
        char detail[320];
        snprintf(detail, sizeof detail,
                 "parent %d; bind t (%g, %g, %g) r (%g, %g, %g, %g) s (%g, %g, %g) (informational: the target "
                 "model's bind pose is used)",
                 b->parent, (double)b->t[0], (double)b->t[1], (double)b->t[2], (double)b->r[0], (double)b->r[1],
                 (double)b->r[2], (double)b->r[3], (double)b->s[0], (double)b->s[1], (double)b->s[2]);
        kiln_result r = kiln__ug_extra(ctx, b->bind_offset, "anim-bind-pose", b->name, detail);
        if (r != KILN_OK) return r;
    }
    return KILN_OK;
}

static kiln_result kiln__ug_anim(kiln__ug *ctx)
{
    kiln__ug_file f;
    memset(&f, 0, sizeof f);
    kiln__ug_at(ctx, "header");
    kiln_result r = kiln__ug_bounds(ctx, "bounds", "animation file");
    if (r == KILN_OK) r = kiln__ug_read_bones(ctx, &f);
    if (r == KILN_OK) r = kiln__ug_read_anim_names(ctx, &f);
    if (r == KILN_OK) {
        kiln__ug_at(ctx, "middle_identifier");
        r = kiln__ug_magic(ctx, "middle identifier", KILN__UG_AN10);
    }
    if (r == KILN_OK) r = kiln__ug_read_bind(ctx, &f);
    if (r == KILN_OK) r = kiln__ug_anim_rest(ctx, &f);
    if (r == KILN_OK) r = kiln__ug_animations(ctx, &f);
    if (r == KILN_OK) r = kiln__ug_final(ctx, KILN__UG_AN10);
    return r;
}

kiln_result kiln__import_unigine(const void *data, size_t size, const char *path, const kiln_import_options *opt,
                                 kiln_source_scene *scene, kiln_diag *err)
{
    kiln__ug ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.data = data;
    ctx.size = data ? size : 0;
    ctx.file = path;
    ctx.opt = opt;
    ctx.scene = scene;
    ctx.err = err;
    ctx.fps = opt && opt->framerate > 0.0f && isfinite(opt->framerate) ? opt->framerate : KILN__UG_FPS;
    kiln__ug_at(&ctx, "identifier");
    int kind = kiln__ug_family(ctx.data, ctx.size, 0);
    if (kind == 0)
        return kiln__ug_fail(&ctx, KILN_ERR_IMPORT_BAD_HEADER, "V1", 0,
                             ctx.size < 4 ? "file of %zu bytes is too short for an identifier: not a Unigine mesh/anim"
                                          : "not a Unigine mesh/anim (first 4 bytes of %zu are no known identifier)",
                             ctx.size);
    char id[5];
    for (int i = 0; i < 4; i++) id[i] = (char)(ctx.data[i] >= 0x20 && ctx.data[i] < 0x7F ? ctx.data[i] : '?');
    id[4] = 0;
    if (kind == 2)
        return kiln__ug_fail(&ctx, KILN_ERR_IMPORT_UNSUPPORTED, "V2", 0,
                             "identifier \"%s\" is a Unigine version this importer does not read (ms10, an10 only)", id);
    ctx.pos = 4;
    ctx.is_anim = (uint32_t)kiln__ug_i32_at(&ctx, 0) == KILN__UG_AN10;
    scene->format = ctx.is_anim ? "unigine-anim" : "unigine-mesh";
    scene->metadata.up_axis = KILN_SOURCE_UP_Z;
    scene->metadata.loc.path = "identifier";
    scene->metadata.loc.offset = 0;
    return ctx.is_anim ? kiln__ug_anim(&ctx) : kiln__ug_mesh(&ctx);
}

const kiln_importer kiln__importer_unigine_mesh = {
    "unigine-mesh", "Unigine .mesh (ms10): static and skinned meshes, morph targets, embedded animations",
    kiln__detect_unigine_mesh, kiln__import_unigine};

const kiln_importer kiln__importer_unigine_anim = {
    "unigine-anim", "Unigine .anim (an10): skeletal animation clips bound to a model by bone name",
    kiln__detect_unigine_anim, kiln__import_unigine};
