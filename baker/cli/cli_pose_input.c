/* `kiln pose`, its inputs: read the files, bake the source ones together, load the blobs; find
 * the skeleton, the clip and its scalar tracks; bind; sample one frame.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_pose.h"
#include "inspect_blob.h"
#include "kiln/blend_shape.h"
#include "kiln/bake/source.h"

const char *kiln__pose_verb = KILN__POSE_VERB;

void kiln__pose_err(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, KILN_CLI_NAME ": %s: ", kiln__pose_verb);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

void kiln__pose_out_of_memory(void) { kiln__pose_err("out of memory\n"); }

/* Bake diagnostics carry "path:node" in their path; print them as `kiln bake` does, file first. */
static void kiln__pose_sink(void *user, const kiln_diag *d)
{
    const kiln__pose *p = user;
    for (uint32_t i = 0; i < p->input_count; i++)
        if (kiln__cli_print_input_diag(stderr, p->in[i].path, d)) return;
    kiln__cli_print_diag(stderr, NULL, d);
}

/* Reads every input, bakes the source ones (any importable format) together and loads the blobs. */
int kiln__pose_load(kiln__pose *p)
{
    p->in[0].path = p->args.model_path;
    p->in[1].path = p->args.anim_path;
    p->input_count = p->args.anim_path ? 2u : 1u;
    kiln_bake_input bake_in[2];
    uint32_t bake_count = 0;
    for (uint32_t i = 0; i < p->input_count; i++) {
        kiln__pose_input *in = &p->in[i];
        if (!kiln__cli_file_load(in->path, &in->file)) return KILN_EXIT_INPUT;
        in->is_blob = kiln__is_blob(in->file.data, in->file.size);
        if (in->is_blob) {
            kiln__pose_blob *b = &p->loaded[i];
            /* The loader reads in place and needs KILN_BLOB_ALIGN; the CLI's buffers are malloc'd. */
            if (posix_memalign(&b->mem, KILN_BLOB_ALIGN, in->file.size ? in->file.size : 1) != 0) {
                b->mem = NULL;
                kiln__pose_out_of_memory();
                return KILN_EXIT_INPUT;
            }
            memcpy(b->mem, in->file.data, in->file.size);
            kiln_diag err;
            memset(&err, 0, sizeof err);
            if (kiln_blob_load(b->mem, in->file.size, 0, &b->blob, &err) != KILN_OK) {
                kiln__cli_print_blob_diag(stderr, in->path, &err);
                return KILN_EXIT_INPUT;
            }
            in->where = b;
            in->source = KILN_BLOB_NONE;
            continue;
        }
        in->where = &p->baked;
        in->source = bake_count;
        bake_in[bake_count].path = in->path;
        bake_in[bake_count].data = in->file.data;
        bake_in[bake_count].size = in->file.size;
        bake_in[bake_count].format = NULL;
        bake_count++;
    }
    if (p->args.lossy && !bake_count)
        kiln__pose_err("warning: --lossy-anim has no effect: every input is a blob\n");
    if (!bake_count) return KILN_EXIT_OK;

    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.diag.fn = kiln__pose_sink;
    o.diag.user = p;
    if (p->args.lossy) {
        o.flags |= KILN_BAKE_LOSSY_ANIMATION;
        o.anim_error_m = p->args.anim_error_m;
        o.anim_distance_m = p->args.anim_distance_m;
    }
    /* --skin prints vertices by index: keep the Cast file's vertex order */
    if (p->args.skin_mesh) o.flags |= KILN_BAKE_NO_OPTIMIZE;
    kiln_diag err;
    memset(&err, 0, sizeof err);
    if (kiln_bake(bake_in, bake_count, &o, &p->baked.baked, &err) != KILN_OK) {
        kiln__pose_sink(p, &err);
        kiln__pose_err("the bake failed\n");
        return KILN_EXIT_INPUT;
    }
    memset(&err, 0, sizeof err);
    if (kiln_blob_load(p->baked.baked.blob, p->baked.baked.size, 0, &p->baked.blob, &err) != KILN_OK) {
        kiln__cli_print_blob_diag(stderr, NULL, &err);
        return KILN_EXIT_INPUT;
    }
    return KILN_EXIT_OK;
}

/* ---- skeleton -------------------------------------------------------------------------------- */

typedef struct kiln__pose_rank {
    uint32_t source, bone; /* Cast index, skeleton bone index */
} kiln__pose_rank;

static int kiln__pose_cmp_rank(const void *a, const void *b)
{
    const kiln__pose_rank *x = a, *y = b;
    if (x->source != y->source) return x->source < y->source ? -1 : 1;
    return x->bone < y->bone ? -1 : x->bone > y->bone; /* equal sources (a hand-made blob): stable */
}

/* Fills order[k] with the skeleton bone printed k-th: ascending source_index. */
static int kiln__pose_sort_order(uint32_t *order, uint32_t n, const kiln_blob_bone *bones)
{
    kiln__pose_rank *r = malloc((n ? n : 1) * sizeof *r);
    if (!r) return 0;
    for (uint32_t i = 0; i < n; i++) r[i].source = bones[i].source_index, r[i].bone = i;
    qsort(r, n, sizeof *r, kiln__pose_cmp_rank);
    for (uint32_t k = 0; k < n; k++) order[k] = r[k].bone;
    free(r);
    return 1;
}

/* The first model of MODEL with a skeleton, and the Cast order of its bones. */
int kiln__pose_find_skeleton(kiln__pose *p)
{
    const kiln__pose_input *in = &p->in[0];
    const kiln_blob *blob = in->where->blob;
    uint32_t model_count = 0, skel_count = 0, bone_total = 0;
    const kiln_blob_model *models = kiln_blob_models(blob, &model_count);
    const kiln_blob_skeleton *skels = kiln_blob_skeletons(blob, &skel_count);
    const kiln_blob_bone *bones = kiln_blob_bones(blob, &bone_total);
    for (uint32_t m = 0; m < model_count; m++) {
        if (in->source != KILN_BLOB_NONE && models[m].source != in->source) continue;
        if (models[m].skeleton == KILN_BLOB_NONE || models[m].skeleton >= skel_count) continue;
        p->skel_blob = blob;
        p->model = m;
        p->skeleton = models[m].skeleton;
        break;
    }
    if (!p->skel_blob) {
        kiln__pose_err("%s", "");
        kiln__cli_put_text(stderr, in->path, "");
        fputs(": no model with a skeleton\n", stderr);
        return KILN_EXIT_INPUT;
    }
    const kiln_blob_skeleton *sk = &skels[p->skeleton];
    p->bone_count = sk->bone_count;
    p->bones = bones + sk->first_bone; /* in range: the loader checked it */
    uint32_t n = p->bone_count;
    p->order = malloc((n ? n : 1) * sizeof *p->order);
    p->cast_parent = malloc((n ? n : 1) * sizeof *p->cast_parent);
    uint32_t *rank = malloc((n ? n : 1) * sizeof *rank);
    if (!p->order || !p->cast_parent || !rank || !kiln__pose_sort_order(p->order, n, p->bones)) {
        free(rank);
        kiln__pose_out_of_memory();
        return KILN_EXIT_INPUT;
    }
    for (uint32_t k = 0; k < n; k++) rank[p->order[k]] = k;
    /* Parents as positions in the printed order: the Cast index when the bones are the Cast
     * file's, 0..n-1, which they are for every skeleton the baker writes. */
    for (uint32_t k = 0; k < n; k++) {
        int32_t parent = p->bones[p->order[k]].parent;
        p->cast_parent[k] = parent < 0 ? -1 : (int32_t)rank[parent];
    }
    free(rank);
    return KILN_EXIT_OK;
}

/* ---- clip ------------------------------------------------------------------------------------ */

const char *kiln__pose_clip_name(const kiln_blob *blob, const kiln_blob_animation *a)
{
    return kiln_blob_string(blob, a->name);
}

/* Lists the clips of the animation input on stderr, after a failed --clip. */
static void kiln__pose_list_clips(const kiln__pose_input *in, const kiln_blob_animation *anims, uint32_t count)
{
    kiln__pose_err("clips in '");
    kiln__cli_put_text(stderr, in->path, "");
    fputs("':", stderr);
    uint32_t index = 0;
    for (uint32_t c = 0; c < count; c++) {
        if (in->source != KILN_BLOB_NONE && anims[c].source != in->source) continue;
        fprintf(stderr, " %u '", index++);
        kiln__cli_put_text(stderr, kiln__pose_clip_name(in->where->blob, &anims[c]), "");
        fputc('\'', stderr);
    }
    fputs(index ? "\n" : " none\n", stderr);
}

/* A whole-string unsigned decimal index. */
int kiln__pose_parse_index(const char *s, uint32_t *out)
{
    if (!*s || strlen(s) > 9) return 0;
    for (const char *c = s; *c; c++)
        if (*c < '0' || *c > '9') return 0;
    *out = (uint32_t)strtoul(s, NULL, 10);
    return 1;
}

/* The clip: --clip by name (exact), else by index among the input's clips; default the first. */
int kiln__pose_find_clip(kiln__pose *p)
{
    const kiln__pose_input *in = &p->in[p->args.anim_path ? 1 : 0];
    const kiln_blob *blob = in->where->blob;
    uint32_t count = 0;
    const kiln_blob_animation *anims = kiln_blob_animations(blob, &count);
    uint32_t want_index = 0, found = KILN_BLOB_NONE, index = 0;
    int by_index = !p->args.clip;
    if (p->args.clip) {
        for (uint32_t c = 0; c < count && found == KILN_BLOB_NONE; c++)
            if ((in->source == KILN_BLOB_NONE || anims[c].source == in->source) &&
                strcmp(kiln__pose_clip_name(blob, &anims[c]), p->args.clip) == 0)
                found = c;
        by_index = found == KILN_BLOB_NONE && kiln__pose_parse_index(p->args.clip, &want_index);
    }
    for (uint32_t c = 0; by_index && c < count && found == KILN_BLOB_NONE; c++) {
        if (in->source != KILN_BLOB_NONE && anims[c].source != in->source) continue;
        if (index++ == want_index) found = c;
    }
    if (found == KILN_BLOB_NONE) {
        kiln__pose_err("%s", "");
        kiln__cli_put_text(stderr, in->path, "");
        if (!p->args.clip) {
            fputs(": no animation clip\n", stderr);
            return KILN_EXIT_INPUT;
        }
        fputs(": no clip named '", stderr);
        kiln__cli_put_text(stderr, p->args.clip, "");
        fputs("'\n", stderr);
        kiln__pose_list_clips(in, anims, count);
        return KILN_EXIT_INPUT;
    }
    p->anim_blob = blob;
    p->clip = found;
    p->anim = &anims[found];
    return KILN_EXIT_OK;
}

/* ---- blend shape clamps ---------------------------------------------------------------------- */

/* The model of MODEL's imported scene that matches the blob model: the first with a skeleton
 * and the same name, else the first with a skeleton; NULL when none has one. */
static const kiln_source_model *kiln__pose_source_model(const kiln_source_scene *s, const char *name)
{
    const kiln_source_model *first = NULL;
    for (uint32_t i = 0; i < s->model_count; i++) {
        const kiln_source_model *m = &s->models[i];
        if (!m->skeleton) continue;
        if (!first) first = m;
        if (m->name && strcmp(m->name, name) == 0) return m;
    }
    return first;
}

/* The blend shapes of a blob MODEL's posed model: the BSHP records of its meshes. */
static int kiln__pose_blob_shapes(kiln__pose *p)
{
    uint32_t total = 0;
    const kiln_blob_blend_shape *bs = kiln_blob_blend_shapes(p->skel_blob, &total);
    const kiln_blob_model *model = &kiln_blob_models(p->skel_blob, NULL)[p->model];
    p->shapes = malloc((total ? total : 1) * sizeof *p->shapes);
    if (!p->shapes) {
        kiln__pose_out_of_memory();
        return KILN_EXIT_INPUT;
    }
    for (uint32_t i = 0; i < total; i++) {
        if (bs[i].mesh < model->first_mesh || bs[i].mesh - model->first_mesh >= model->mesh_count) continue;
        p->shapes[p->shape_count].name = kiln_blob_string(p->skel_blob, bs[i].name);
        p->shapes[p->shape_count].ts = bs[i].target_scale;
        p->shape_count++;
    }
    return KILN_EXIT_OK;
}

/* Collects the BlendShapes (name, ts) of MODEL's animated model: from MODEL imported again (any
 * format an importer reads; names in p->shape_scene), so that shapes the bake dropped still
 * clamp, or from a blob's records. Diagnostics were printed by the bake already, so this pass
 * imports silently. */
int kiln__pose_collect_shapes(kiln__pose *p)
{
    const kiln__pose_input *in = &p->in[0];
    if (in->is_blob) return kiln__pose_blob_shapes(p);
    kiln_source_scene *s = &p->shape_scene;
    kiln_result r = kiln_source_import(in->file.data, in->file.size, in->path, NULL, NULL, s, NULL);
    if (r == KILN_ERR_OUT_OF_MEMORY) {
        kiln__pose_out_of_memory();
        return KILN_EXIT_INPUT;
    }
    if (r != KILN_OK) return KILN_EXIT_OK; /* the bake read it; no shapes to clamp by */
    const char *name = kiln_blob_string(p->skel_blob, kiln_blob_models(p->skel_blob, NULL)[p->model].name);
    const kiln_source_model *model = kiln__pose_source_model(s, name);
    uint32_t count = model ? model->blend_shape_count : 0;
    p->shapes = malloc((count ? count : 1) * sizeof *p->shapes);
    if (!p->shapes) {
        kiln__pose_out_of_memory();
        return KILN_EXIT_INPUT;
    }
    for (uint32_t i = 0; i < count; i++) {
        const kiln_source_blend_shape *bs = &model->blend_shapes[i];
        if (!bs->name) continue; /* skipped by the baker too */
        p->shapes[p->shape_count].name = bs->name;
        p->shapes[p->shape_count].ts = bs->target_scale;
        p->shape_count++;
    }
    return KILN_EXIT_OK;
}

/* Per scalar track: the clamp (C.5: a weight is clamped to [0, ts]; the first BlendShape of that
 * name in file order supplies ts) and whether a later track of the same kind and name
 * overrides it (the last curve of a channel wins, D.4). */
int kiln__pose_prepare_scalars(kiln__pose *p)
{
    uint32_t total = 0, n = p->anim->scalar_count;
    const kiln_blob_anim_scalar *all = kiln_blob_anim_scalars(p->anim_blob, &total);
    p->scalars = n ? all + p->anim->first_scalar : NULL; /* in range: the loader checked it */
    p->ts = malloc((n ? n : 1) * sizeof *p->ts);
    p->shown = malloc(n ? n : 1);
    if (!p->ts || !p->shown) {
        kiln__pose_out_of_memory();
        return KILN_EXIT_INPUT;
    }
    for (uint32_t i = 0; i < n; i++) {
        const kiln_blob_anim_scalar *s = &p->scalars[i];
        const char *name = kiln_blob_string(p->anim_blob, s->name);
        p->ts[i] = -1.0f;
        for (uint32_t k = 0; s->kind == KILN_SCALAR_BLEND_SHAPE && k < p->shape_count; k++)
            if (strcmp(p->shapes[k].name, name) == 0) {
                p->ts[i] = p->shapes[k].ts;
                break;
            }
        p->shown[i] = 1;
        for (uint32_t j = i + 1; j < n && p->shown[i]; j++)
            if (p->scalars[j].kind == s->kind && p->scalars[j].name_hash == s->name_hash &&
                strcmp(kiln_blob_string(p->anim_blob, p->scalars[j].name), name) == 0)
                p->shown[i] = 0;
    }
    return KILN_EXIT_OK;
}

/* ---- runtime --------------------------------------------------------------------------------- */

void *kiln__pose_aligned(size_t size)
{
    void *mem = NULL;
    size = (size + 63u) & ~(size_t)63u;
    if (posix_memalign(&mem, 64, size ? size : 64) != 0) return NULL;
    memset(mem, 0, size ? size : 64);
    return mem;
}

/* Binds the clip to the skeleton, reports missing bones, and allocates what sampling writes. */
int kiln__pose_bind(kiln__pose *p)
{
    size_t bsize = kiln_anim_binding_size(p->anim_blob, p->clip, p->skel_blob, p->skeleton);
    p->binding_mem = bsize ? kiln__pose_aligned(bsize) : NULL;
    kiln_anim_bind_report report;
    memset(&report, 0, sizeof report);
    kiln_result r = p->binding_mem ? kiln_anim_bind(p->anim_blob, p->clip, p->skel_blob, p->skeleton, p->binding_mem,
                                                    bsize, &p->binding, &report)
                                   : KILN_ERR_OUT_OF_MEMORY;
    if (r != KILN_OK) {
        kiln__pose_err("cannot bind the clip to the skeleton: ");
        kiln__cli_put_result(stderr, r);
        fputc('\n', stderr);
        return KILN_EXIT_INPUT;
    }
    if (report.missing_joints) {
        uint32_t jcount = 0;
        const kiln_blob_anim_joint *joints = kiln_blob_anim_joints(p->anim_blob, &jcount);
        uint32_t slot = p->anim->first_joint + report.first_missing;
        int one = report.missing_joints == 1;
        kiln__pose_err("warning: %u bone%s animated by the clip %s not in the skeleton",
                report.missing_joints, one ? "" : "s", one ? "is" : "are");
        if (report.first_missing != KILN_BLOB_NONE && slot < jcount) {
            fputs(one ? " ('" : " (first: '", stderr);
            kiln__cli_put_text(stderr, kiln_blob_string(p->anim_blob, joints[slot].name), "");
            fputs("')", stderr);
        }
        fputs(one ? "; its curves are ignored\n" : "; their curves are ignored\n", stderr);
    }
    uint32_t soa = kiln_anim_binding_soa_count(p->binding);
    size_t csize = kiln_sample_context_size(p->binding);
    p->context_mem = kiln__pose_aligned(csize);
    p->pose = kiln__pose_aligned((size_t)(soa ? soa : 1) * sizeof *p->pose);
    p->matrices = kiln__pose_aligned((size_t)(p->bone_count ? p->bone_count : 1) * 16u * sizeof(float));
    p->values = kiln__pose_aligned((size_t)(p->anim->scalar_count ? p->anim->scalar_count : 1) * sizeof(float));
    if (!p->context_mem || !p->pose || !p->matrices || !p->values ||
        kiln_sample_context_init(p->context_mem, (csize + 63u) & ~(size_t)63u, p->binding) != KILN_OK) {
        kiln__pose_out_of_memory();
        return KILN_EXIT_INPUT;
    }
    return KILN_EXIT_OK;
}

/* Samples one frame into p->pose, p->matrices and p->values. */
int kiln__pose_sample(kiln__pose *p, double frame)
{
    kiln_sample_desc s;
    memset(&s, 0, sizeof s);
    s.binding = p->binding;
    s.time_s = frame / (double)p->anim->framerate;
    s.loop = p->args.loop;
    s.out = p->pose;
    s.out_count = kiln_anim_binding_soa_count(p->binding);
    s.context = p->context_mem;
    s.scalars = p->values;
    s.scalar_count = p->anim->scalar_count;
    kiln_result r = kiln_sample(&s);
    if (r == KILN_OK)
        r = kiln_pose_local_to_object(p->skel_blob, p->skeleton, p->pose, NULL, p->matrices, p->bone_count);
    if (r != KILN_OK) {
        kiln__pose_err("sampling frame %.9g failed: ", frame);
        kiln__cli_put_result(stderr, r);
        fputc('\n', stderr);
        return KILN_EXIT_INPUT;
    }
    return kiln__pose_deform(p, frame);
}
