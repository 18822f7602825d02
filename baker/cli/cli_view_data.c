/* `kiln view`, the data document: one JSON object the page's renderer reads, with every bulk
 * array as base64 of its little-endian binary form (Float32Array, Uint32Array).
 *
 * Every number that moves comes from the runtime, through the calls `kiln pose` makes: the rest
 * geometry is kiln_skin_mesh at the rest pose; a clip's frames are kiln__pose_sample (bind,
 * sample, local to model, IK handles and constraints), then per mesh kiln_blend_shapes_apply at
 * the sampled weights and kiln_skin_mesh. Instances are placed with
 * kiln_instance_world_matrices_all. The page only draws what it is given.
 *
 * The caps (cli_view.h) bound the page: vertices drawn over all meshes (a mesh past the budget
 * keeps its first vertices, in the source's order (cli_view_load.c bakes without reordering),
 * and the triangles among them), frames per clip (a longer clip is sampled every
 * step-th frame over its whole length), skinned vertices over all embedded frames, instances.
 * Whatever a cap left out is listed in "capped", which the page shows.
 */
#define _XOPEN_SOURCE 700

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli_pose.h"
#include "cli_view.h"
#include "inspect_blob.h"
#include "kiln/blend_shape.h"
#include "kiln/instance.h"
#include "kiln/skin.h"

#define KILN__VIEW_MAX_BLOBS (KILN__VIEW_MAX_INPUTS + 1u)
#define KILN__VIEW_NOTE 512

typedef struct kiln__view_writer {
    kiln__view *v;
    FILE       *out;
    const kiln_blob *blobs[KILN__VIEW_MAX_BLOBS];
    uint32_t    blob_count;
    uint32_t    first_model[KILN__VIEW_MAX_BLOBS]; /* page index of each blob's model 0 */
    uint32_t   *shown[KILN__VIEW_MAX_BLOBS];        /* per blob and mesh: vertices drawn */
    char      **notes;                              /* what the caps left out (malloc'd strings) */
    size_t      note_count, note_cap;
    int         failed;
} kiln__view_writer;

/* ---- small writers ------------------------------------------------------------------------- */

/* A JSON string that is also safe inside <script>: '<', '>' and '&' are escaped too. */
static void kiln__view_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
        if (*c == '"' || *c == '\\') fputc('\\', out), fputc(*c, out);
        else if (*c < 0x20 || *c == '<' || *c == '>' || *c == '&' || *c == 0x7f) fprintf(out, "\\u%04x", *c);
        else fputc(*c, out);
    }
    fputc('"', out);
}

static void kiln__view_key(FILE *out, const char *key) { fprintf(out, "\"%s\":", key); }

static void kiln__view_floats(FILE *out, const char *key, const float *v, size_t count)
{
    kiln__view_key(out, key);
    kiln__base64_write(out, v, count * sizeof *v);
}

static void kiln__view_note(kiln__view_writer *w, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void kiln__view_note(kiln__view_writer *w, const char *fmt, ...)
{
    char *s = malloc(KILN__VIEW_NOTE);
    if (!s || !kiln__cli_reserve((void **)&w->notes, &w->note_cap, w->note_count + 1, sizeof *w->notes)) {
        free(s);
        w->failed = 1;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s, KILN__VIEW_NOTE, fmt, ap);
    va_end(ap);
    w->notes[w->note_count++] = s;
}

static int kiln__view_fail(kiln__view_writer *w, const char *what, kiln_result r)
{
    fprintf(stderr, KILN_CLI_NAME ": " KILN__VIEW_VERB ": %s: %s\n", what, kiln_result_str(r));
    w->failed = 1;
    return 0;
}

static void *kiln__view_oom(kiln__view_writer *w)
{
    fprintf(stderr, KILN_CLI_NAME ": " KILN__VIEW_VERB ": out of memory\n");
    w->failed = 1;
    return NULL;
}

/* ---- geometry ------------------------------------------------------------------------------ */

/* Vertices of mesh `m` the page draws: what is left of the vertex budget. */
static uint32_t kiln__view_mesh_shown(kiln__view_writer *w, const kiln_blob_mesh *m)
{
    kiln__view *v = w->v;
    uint64_t left = v->vertices_shown < v->args.max_vertices ? v->args.max_vertices - v->vertices_shown : 0;
    uint32_t shown = m->vertex_count < left ? m->vertex_count : (uint32_t)left;
    v->vertices_total += m->vertex_count;
    v->vertices_shown += shown;
    return shown;
}

/* The triangles among vertices [0, shown), as 32-bit indices; *count receives their index count. */
static uint32_t *kiln__view_indices(kiln__view_writer *w, const kiln_blob *blob, const kiln_blob_mesh *m,
                                    uint32_t shown, uint32_t *count)
{
    *count = 0;
    const kiln_blob_stream *s = kiln_blob_mesh_stream(blob, m, KILN_ATTR_INDICES, 0);
    uint32_t *out = malloc((size_t)(m->index_count ? m->index_count : 1) * sizeof *out);
    if (!out) return kiln__view_oom(w);
    if (!s) return out;
    const void *data = kiln_blob_stream_data(blob, s);
    for (uint32_t t = 0; t + 3 <= m->index_count && t + 3 <= s->count; t += 3) {
        uint32_t k[3];
        for (int c = 0; c < 3; c++)
            k[c] = s->format == KILN_FORMAT_U16x1 ? ((const uint16_t *)data)[t + (uint32_t)c]
                                                   : ((const uint32_t *)data)[t + (uint32_t)c];
        if (k[0] >= shown || k[1] >= shown || k[2] >= shown) continue;
        memcpy(out + *count, k, sizeof k);
        *count += 3;
    }
    return out;
}

/* Skins vertices [0, shown) of mesh `mesh` with `skin` (16 floats per bone, or NULL for an
 * unskinned mesh) into pos and, when the mesh has normals, nrm. */
static kiln_result kiln__view_skin(const kiln_blob *blob, uint32_t mesh, uint32_t shown, const float *skin,
                                   const kiln_skin_dual_quat *dq, uint32_t bone_count, const float *shaped,
                                   float *pos, float *nrm)
{
    kiln_skin_desc d;
    memset(&d, 0, sizeof d);
    d.blob = blob;
    d.mesh = mesh;
    d.skin_matrices = skin;
    d.dual_quats = dq;
    d.bone_count = bone_count;
    d.vertex_count = shown;
    d.positions = pos;
    d.normals = nrm;
    d.source_positions = shaped;
    return kiln_skin_mesh(&d);
}

/* Skinning matrices of the rest pose (and their dual quaternions) for a skeleton. */
static int kiln__view_rest_skin(kiln__view_writer *w, const kiln_blob *blob, uint32_t skeleton, float *model,
                                float *skin, kiln_skin_dual_quat *dq, uint32_t bones)
{
    uint32_t skel_count = 0, soa_total = 0;
    const kiln_blob_skeleton *sk = &kiln_blob_skeletons(blob, &skel_count)[skeleton];
    const kiln_soa_xform *rest = kiln_blob_rest_pose(blob, &soa_total) + sk->first_soa;
    kiln_result r = kiln_pose_local_to_model(blob, skeleton, rest, NULL, model, bones);
    if (r == KILN_OK) r = kiln_pose_skin_matrices(blob, skeleton, model, skin, bones);
    if (r == KILN_OK) r = kiln_pose_skin_dual_quats(skin, dq, bones);
    return r == KILN_OK ? 1 : kiln__view_fail(w, "the rest pose", r);
}

static void kiln__view_bounds(FILE *out, const float *mn, const float *mx)
{
    fprintf(out, "\"bounds\":[%.9g,%.9g,%.9g,%.9g,%.9g,%.9g]", mn[0], mn[1], mn[2], mx[0], mx[1], mx[2]);
}

/* One mesh at the rest pose: positions, normals (when it has them), the shown triangles. */
static void kiln__view_mesh(kiln__view_writer *w, const kiln_blob *blob, uint32_t mesh, const float *skin,
                            const kiln_skin_dual_quat *dq, uint32_t bones)
{
    FILE *out = w->out;
    const kiln_blob_mesh *m = &kiln_blob_meshes(blob, NULL)[mesh];
    uint32_t materials = 0;
    const kiln_blob_material *mats = kiln_blob_materials(blob, &materials);
    uint32_t shown = kiln__view_mesh_shown(w, m), index_count = 0;
    for (uint32_t b = 0; b < w->blob_count; b++)
        if (w->blobs[b] == blob) w->shown[b][mesh] = shown;
    int has_normals = kiln_blob_mesh_stream(blob, m, KILN_ATTR_NORMAL, 0) != NULL;
    float *pos = malloc((size_t)(shown ? shown : 1) * 12u), *nrm = has_normals ? malloc((size_t)(shown ? shown : 1) * 12u) : NULL;
    uint32_t *idx = kiln__view_indices(w, blob, m, shown, &index_count);
    if (!pos || (has_normals && !nrm) || !idx) {
        kiln__view_oom(w);
        goto done;
    }
    kiln_result r = kiln__view_skin(blob, mesh, shown, m->influences ? skin : NULL, m->influences ? dq : NULL,
                                    m->influences ? bones : 0, NULL, pos, nrm);
    if (r != KILN_OK) {
        kiln__view_fail(w, "skinning a mesh at the rest pose", r);
        goto done;
    }
    fputs("{\"name\":", out);
    kiln__view_str(out, kiln_blob_string(blob, m->name));
    fputs(",\"material\":", out);
    kiln__view_str(out, m->material < materials ? kiln_blob_string(blob, mats[m->material].name) : "");
    fprintf(out, ",\"vertices\":%u,\"shown\":%u,\"triangles\":%u,\"trianglesShown\":%u,\"skinned\":%s,",
            m->vertex_count, shown, m->index_count / 3u, index_count / 3u, m->influences ? "true" : "false");
    kiln__view_bounds(out, m->bounds_min, m->bounds_max);
    fputc(',', out);
    kiln__view_floats(out, "positions", pos, (size_t)shown * 3u);
    if (nrm) fputc(',', out), kiln__view_floats(out, "normals", nrm, (size_t)shown * 3u);
    fputs(",\"indices\":", out);
    kiln__base64_write(out, idx, (size_t)index_count * 4u);
    fputc('}', out);
    if (shown < m->vertex_count)
        kiln__view_note(w, "mesh '%s': %u of %u vertices and %u of %u triangles drawn (vertex cap %u)",
                        kiln_blob_string(blob, m->name), shown, m->vertex_count, index_count / 3u, m->index_count / 3u,
                        w->v->args.max_vertices);
done:
    free(pos);
    free(nrm);
    free(idx);
}

/* ---- models ------------------------------------------------------------------------------ */

static void kiln__view_materials(kiln__view_writer *w, const kiln_blob *blob, const kiln_blob_model *model)
{
    FILE *out = w->out;
    uint32_t count = 0, slot_count = 0;
    const kiln_blob_material *mats = kiln_blob_materials(blob, &count);
    const kiln_blob_material_slot *slots = kiln_blob_material_slots(blob, &slot_count);
    fputs("\"materials\":[", out);
    for (uint32_t i = 0; i < model->material_count; i++) {
        const kiln_blob_material *mt = &mats[model->first_material + i];
        fputs(i ? ",{\"name\":" : "{\"name\":", out);
        kiln__view_str(out, kiln_blob_string(blob, mt->name));
        fputs(",\"type\":", out);
        kiln__view_str(out, kiln_blob_string(blob, mt->type));
        fputs(",\"slots\":[", out);
        for (uint32_t s = 0; s < mt->slot_count && mt->first_slot + s < slot_count; s++) {
            const kiln_blob_material_slot *sl = &slots[mt->first_slot + s];
            fputs(s ? ",{\"name\":" : "{\"name\":", out);
            kiln__view_str(out, kiln_blob_string(blob, sl->name));
            if (sl->kind == KILN_SLOT_FILE) fputs(",\"file\":", out), kiln__view_str(out, kiln_blob_string(blob, sl->path));
            else fprintf(out, ",\"rgba\":[%.6g,%.6g,%.6g,%.6g]", sl->rgba[0], sl->rgba[1], sl->rgba[2], sl->rgba[3]);
            fputc('}', out);
        }
        fputs("]}", out);
    }
    fputc(']', out);
}

/* One model: materials, its skeleton at rest (names, parents, model-space matrices), meshes. */
static void kiln__view_model(kiln__view_writer *w, uint32_t b, uint32_t mi)
{
    FILE *out = w->out;
    const kiln_blob *blob = w->blobs[b];
    uint32_t skel_count = 0, bone_total = 0;
    const kiln_blob_model *model = &kiln_blob_models(blob, NULL)[mi];
    const kiln_blob_skeleton *skels = kiln_blob_skeletons(blob, &skel_count);
    const kiln_blob_bone *all_bones = kiln_blob_bones(blob, &bone_total);
    int has_skel = model->skeleton < skel_count;
    uint32_t bones = has_skel ? skels[model->skeleton].bone_count : 0, nb = bones ? bones : 1;
    float *mm = kiln__pose_aligned((size_t)nb * 64u), *skin = kiln__pose_aligned((size_t)nb * 64u);
    kiln_skin_dual_quat *dq = kiln__pose_aligned((size_t)nb * sizeof *dq);
    if (!mm || !skin || !dq) {
        kiln__view_oom(w);
        goto done;
    }
    if (has_skel && !kiln__view_rest_skin(w, blob, model->skeleton, mm, skin, dq, bones)) goto done;
    fputs("{\"name\":", out);
    kiln__view_str(out, kiln_blob_string(blob, model->name));
    fputc(',', out);
    kiln__view_materials(w, blob, model);
    fputs(",\"bones\":[", out);
    for (uint32_t i = 0; i < bones; i++) {
        const kiln_blob_bone *bn = &all_bones[skels[model->skeleton].first_bone + i];
        fputs(i ? ",[" : "[", out);
        kiln__view_str(out, kiln_blob_string(blob, bn->name));
        fprintf(out, ",%d]", bn->parent);
    }
    fputs("],", out);
    kiln__view_floats(out, "rest", mm, (size_t)bones * 16u);
    fputs(",\"meshes\":[", out);
    for (uint32_t i = 0; i < model->mesh_count && !w->failed; i++) {
        if (i) fputc(',', out);
        kiln__view_mesh(w, blob, model->first_mesh + i, skin, dq, bones);
    }
    fputs("]}", out);
done:
    free(mm);
    free(skin);
    free(dq);
}

/* ---- clips --------------------------------------------------------------------------------- */

/* The model a clip plays on: the first with a skeleton from the clip's own input, else the
 * first with a skeleton in the blob. KILN_BLOB_NONE when there is none. */
static uint32_t kiln__view_clip_model(const kiln_blob *blob, const kiln_blob_animation *a)
{
    uint32_t count = 0, skel_count = 0, first = KILN_BLOB_NONE;
    const kiln_blob_model *models = kiln_blob_models(blob, &count);
    kiln_blob_skeletons(blob, &skel_count);
    for (uint32_t m = 0; m < count; m++) {
        if (models[m].skeleton >= skel_count) continue;
        if (models[m].source == a->source) return m;
        if (first == KILN_BLOB_NONE) first = m;
    }
    return first;
}

typedef struct kiln__view_skin_mesh {
    uint32_t mesh, shown, shapes;
    uint32_t *shape_ids, *tracks;
    float    *weights, *shaped, *pos, *nrm; /* pos/nrm: every embedded frame */
} kiln__view_skin_mesh;

/* Prepares the skinned meshes of the posed model that fit the skinned-vertex budget. */
static uint32_t kiln__view_clip_meshes(kiln__view_writer *w, uint32_t b, kiln__pose *p, uint32_t frames,
                                       kiln__view_skin_mesh *sm, uint32_t cap, uint32_t *vertex_budget_left)
{
    const kiln_blob *blob = p->skel_blob;
    const kiln_blob_model *model = &kiln_blob_models(blob, NULL)[p->model];
    const kiln_blob_mesh *meshes = kiln_blob_meshes(blob, NULL);
    uint32_t n = 0;
    for (uint32_t i = 0; i < model->mesh_count; i++) {
        uint32_t mesh = model->first_mesh + i;
        const kiln_blob_mesh *m = &meshes[mesh];
        uint32_t shown = w->shown[b][mesh]; /* the vertices of the rest geometry */
        uint64_t need = (uint64_t)shown * frames;
        if (!shown) continue;
        if (n == cap) {
            kiln__view_note(w, "clip '%s': mesh '%s' not skinned per frame (only %u meshes of a model are)",
                            kiln__pose_clip_name(p->anim_blob, p->anim), kiln_blob_string(blob, m->name), cap);
            continue;
        }
        if (need > *vertex_budget_left) {
            kiln__view_note(w, "clip '%s': mesh '%s' not skinned per frame (%llu skinned vertices over the cap %u)",
                            kiln__pose_clip_name(p->anim_blob, p->anim), kiln_blob_string(blob, m->name),
                            (unsigned long long)need, w->v->args.max_skinned);
            w->v->caps_hit |= 8u;
            continue;
        }
        *vertex_budget_left -= (uint32_t)need;
        kiln__view_skin_mesh *s = &sm[n++];
        memset(s, 0, sizeof *s);
        s->mesh = mesh;
        s->shown = shown;
        s->shapes = kiln_blob_mesh_blend_shapes(blob, mesh, NULL, 0);
        int nrm = kiln_blob_mesh_stream(blob, m, KILN_ATTR_NORMAL, 0) != NULL;
        s->pos = malloc(need * 12u);
        s->nrm = nrm ? malloc(need * 12u) : NULL;
        if (s->shapes) {
            s->shape_ids = malloc(s->shapes * sizeof *s->shape_ids);
            s->tracks = malloc(s->shapes * sizeof *s->tracks);
            s->weights = malloc(s->shapes * sizeof *s->weights);
            s->shaped = kiln__pose_aligned((size_t)m->vertex_count * 12u);
        }
        if (!s->pos || (nrm && !s->nrm) ||
            (s->shapes && (!s->shape_ids || !s->tracks || !s->weights || !s->shaped))) {
            kiln__view_oom(w);
            return n;
        }
        if (s->shapes) {
            s->shapes = kiln_blob_mesh_blend_shapes(blob, mesh, s->shape_ids, s->shapes);
            kiln_result r = kiln_blend_shape_bind_clip(p->anim_blob, p->clip, blob, s->shape_ids, s->shapes, s->tracks);
            if (r != KILN_OK) {
                kiln__view_fail(w, "binding a mesh's blend shapes to a clip", r);
                return n;
            }
        }
    }
    return n;
}

/* One frame of every prepared mesh: blend shapes at the sampled weights, then skinning. */
static int kiln__view_clip_skin(kiln__view_writer *w, kiln__pose *p, kiln__view_skin_mesh *sm, uint32_t n,
                                uint32_t frame_index, float *skin, kiln_skin_dual_quat *dq)
{
    const kiln_blob *blob = p->skel_blob;
    kiln_result r = kiln_pose_skin_matrices(blob, p->skeleton, p->matrices, skin, p->bone_count);
    if (r == KILN_OK) r = kiln_pose_skin_dual_quats(skin, dq, p->bone_count);
    for (uint32_t i = 0; i < n && r == KILN_OK; i++) {
        kiln__view_skin_mesh *s = &sm[i];
        const kiln_blob_mesh *m = &kiln_blob_meshes(blob, NULL)[s->mesh];
        if (s->shapes) {
            kiln_blend_shape_weights(s->tracks, s->shapes, p->values, p->anim->scalar_count, s->weights);
            kiln_blend_shapes_desc b;
            memset(&b, 0, sizeof b);
            b.blob = blob;
            b.mesh = s->mesh;
            b.shapes = s->shape_ids;
            b.weights = s->weights;
            b.shape_count = s->shapes;
            b.out = s->shaped;
            b.out_count = m->vertex_count;
            r = kiln_blend_shapes_apply(&b);
        }
        size_t at = (size_t)frame_index * s->shown * 3u;
        if (r == KILN_OK)
            r = kiln__view_skin(blob, s->mesh, s->shown, m->influences ? skin : NULL, m->influences ? dq : NULL,
                                m->influences ? p->bone_count : 0, s->shaped, s->pos + at, s->nrm ? s->nrm + at : NULL);
    }
    return r == KILN_OK ? 1 : kiln__view_fail(w, "skinning a clip's frame", r);
}

/* One clip: sampled frame by frame on its model's skeleton. */
static void kiln__view_clip(kiln__view_writer *w, uint32_t b, uint32_t clip, uint32_t *skinned_left, int *first)
{
    FILE *out = w->out;
    const kiln_blob *blob = w->blobs[b];
    const kiln_blob_animation *a = &kiln_blob_animations(blob, NULL)[clip];
    const char *name = kiln__pose_clip_name(blob, a);
    uint32_t mi = kiln__view_clip_model(blob, a);
    if (mi == KILN_BLOB_NONE) {
        kiln__view_note(w, "clip '%s': no model with a skeleton to play it on", name);
        return;
    }
    kiln__pose p;
    memset(&p, 0, sizeof p);
    kiln__view_skin_mesh sm[64];
    uint32_t sm_count = 0;
    float *bones_out = NULL, *weights_out = NULL, *skin = NULL;
    kiln_skin_dual_quat *dq = NULL;
    const kiln_blob_model *model = &kiln_blob_models(blob, NULL)[mi];
    uint32_t skel_count = 0, bone_total = 0;
    const kiln_blob_skeleton *sk = &kiln_blob_skeletons(blob, &skel_count)[model->skeleton];
    p.in[0].is_blob = 1; /* blend shape clamps from the blob's records */
    p.skel_blob = blob;
    p.model = mi;
    p.skeleton = model->skeleton;
    p.bone_count = sk->bone_count;
    p.bones = kiln_blob_bones(blob, &bone_total) + sk->first_bone;
    p.anim_blob = blob;
    p.clip = clip;
    p.anim = a;
    p.args.loop = KILN_LOOP_CLAMP;
    int status = kiln__pose_collect_shapes(&p);
    if (status == KILN_EXIT_OK) status = kiln__pose_prepare_scalars(&p);
    if (status == KILN_EXIT_OK) status = kiln__pose_bind(&p);
    if (status == KILN_EXIT_OK) status = kiln__pose_deform_prepare(&p);
    if (status != KILN_EXIT_OK) {
        kiln__view_note(w, "clip '%s': cannot be played on model '%s' (see the messages of the tool)", name,
                        kiln_blob_string(blob, model->name));
        goto done;
    }
    uint32_t total = a->frame_count ? a->frame_count : 1, max = w->v->args.max_frames;
    uint32_t step = (total + max - 1) / max, frames = (total + step - 1) / step;
    if (step > 1) {
        kiln__view_note(w, "clip '%s': %u of %u frames embedded (every %u%s frame; frame cap %u)", name, frames, total,
                        step, step == 2 ? "nd" : step == 3 ? "rd" : "th", max);
        w->v->caps_hit |= 2u;
    }
    uint32_t nb = p.bone_count ? p.bone_count : 1, scalars = a->scalar_count;
    bones_out = malloc((size_t)frames * nb * 64u);
    weights_out = malloc((size_t)frames * (scalars ? scalars : 1) * 4u);
    skin = kiln__pose_aligned((size_t)nb * 64u);
    dq = kiln__pose_aligned((size_t)nb * sizeof *dq);
    if (!bones_out || !weights_out || !skin || !dq) {
        kiln__view_oom(w);
        goto done;
    }
    sm_count = kiln__view_clip_meshes(w, b, &p, frames, sm, sizeof sm / sizeof sm[0], skinned_left);
    for (uint32_t f = 0; f < frames && !w->failed; f++) {
        double frame = (double)a->first_frame + (double)f * step;
        if (kiln__pose_sample(&p, frame) != KILN_EXIT_OK) {
            w->failed = 1;
            break;
        }
        memcpy(bones_out + (size_t)f * p.bone_count * 16u, p.matrices, (size_t)p.bone_count * 64u);
        if (scalars) memcpy(weights_out + (size_t)f * scalars, p.values, (size_t)scalars * 4u);
        kiln__view_clip_skin(w, &p, sm, sm_count, f, skin, dq);
    }
    if (w->failed) goto done;
    fputs(*first ? "{\"name\":" : ",{\"name\":", out);
    *first = 0;
    kiln__view_str(out, name);
    fprintf(out, ",\"model\":%u,\"framerate\":%.9g,\"first\":%lld,\"frames\":%u,\"step\":%u,\"shown\":%u,\"lossy\":%s,",
            w->first_model[b] + mi, a->framerate, (long long)a->first_frame, total, step, frames,
            (a->flags & KILN_ANIM_LOSSY) ? "true" : "false");
    kiln__view_floats(out, "bones", bones_out, (size_t)frames * p.bone_count * 16u);
    fputs(",\"scalars\":[", out);
    for (uint32_t i = 0; i < scalars; i++) {
        if (i) fputc(',', out);
        fputc('[', out);
        kiln__view_str(out, kiln_blob_string(blob, p.scalars[i].name));
        fprintf(out, ",\"%s\"]", p.scalars[i].kind == KILN_SCALAR_BLEND_SHAPE ? "blendshape" : "visibility");
    }
    fputs("],", out);
    kiln__view_floats(out, "values", weights_out, (size_t)frames * scalars);
    fputs(",\"skinned\":[", out);
    for (uint32_t i = 0; i < sm_count; i++) {
        fprintf(out, "%s{\"mesh\":%u,", i ? "," : "", sm[i].mesh - model->first_mesh);
        kiln__view_floats(out, "positions", sm[i].pos, (size_t)frames * sm[i].shown * 3u);
        if (sm[i].nrm) fputc(',', out), kiln__view_floats(out, "normals", sm[i].nrm, (size_t)frames * sm[i].shown * 3u);
        fputc('}', out);
    }
    fputs("]}", out);
done:
    for (uint32_t i = 0; i < sm_count; i++) {
        free(sm[i].shape_ids);
        free(sm[i].tracks);
        free(sm[i].weights);
        free(sm[i].shaped);
        free(sm[i].pos);
        free(sm[i].nrm);
    }
    free(bones_out);
    free(weights_out);
    free(skin);
    free(dq);
    kiln__pose_free(&p);
}

/* ---- instances ------------------------------------------------------------------------------ */

/* The page model drawn for a reference: the first model of the input whose real path is the
 * reference's resolved path; KILN_BLOB_NONE when the asset is not among the inputs. */
static uint32_t kiln__view_ref_model(kiln__view_writer *w, const char *resolved, const kiln_blob **mblob,
                                     uint32_t *mindex)
{
    char *want = realpath(resolved, NULL);
    uint32_t found = KILN_BLOB_NONE;
    for (uint32_t i = 0; want && i < w->v->args.input_count && found == KILN_BLOB_NONE; i++) {
        const kiln__view_input *in = &w->v->in[i];
        char *have = realpath(in->path, NULL);
        if (have && strcmp(have, want) == 0) {
            uint32_t count = 0;
            const kiln_blob_model *models = kiln_blob_models(in->blob, &count);
            for (uint32_t m = 0; m < count; m++) {
                if (in->source != KILN_BLOB_NONE && models[m].source != in->source) continue;
                for (uint32_t b = 0; b < w->blob_count; b++)
                    if (w->blobs[b] == in->blob) found = w->first_model[b] + m;
                *mblob = in->blob;
                *mindex = m;
                break;
            }
        }
        free(have);
    }
    free(want);
    return found;
}

/* What a reference draws: a page model, else a box at bounds found in the referenced file
 * itself (read and baked here when it exists), else a unit box. */
typedef struct kiln__view_ref {
    uint32_t    page_model;      /* KILN_BLOB_NONE: a box */
    const char *from;            /* "input", "file" or "unknown" */
    float       mn[3], mx[3];
    float       model[16];       /* the asset's Model matrix */
    int         has_model;
} kiln__view_ref;

/* The union of the bounds of a model's meshes; 0 when it has none. */
static int kiln__view_model_bounds(const kiln_blob *blob, uint32_t mi, float mn[3], float mx[3])
{
    const kiln_blob_model *m = &kiln_blob_models(blob, NULL)[mi];
    const kiln_blob_mesh *meshes = kiln_blob_meshes(blob, NULL);
    for (int c = 0; c < 3; c++) mn[c] = 1e30f, mx[c] = -1e30f;
    for (uint32_t k = 0; k < m->mesh_count; k++)
        for (int c = 0; c < 3; c++) {
            if (meshes[m->first_mesh + k].bounds_min[c] < mn[c]) mn[c] = meshes[m->first_mesh + k].bounds_min[c];
            if (meshes[m->first_mesh + k].bounds_max[c] > mx[c]) mx[c] = meshes[m->first_mesh + k].bounds_max[c];
        }
    return m->mesh_count != 0;
}

/* Bakes a referenced file that is not an input, quietly, for its first model's bounds and
 * Model matrix. 0 when it cannot be read, baked or has no model with meshes. */
static int kiln__view_ref_file(const char *path, kiln__view_ref *r)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fclose(f);
    kiln__cli_file file;
    memset(&file, 0, sizeof file);
    int ok = 0;
    kiln_bake_result res;
    memset(&res, 0, sizeof res);
    void *mem = NULL;
    const kiln_blob *blob = NULL;
    kiln_diag err;
    memset(&err, 0, sizeof err);
    if (!kiln__cli_file_load(path, &file)) return 0;
    if (kiln__is_blob(file.data, file.size)) {
        if (posix_memalign(&mem, KILN_BLOB_ALIGN, file.size ? file.size : 1) == 0) {
            memcpy(mem, file.data, file.size);
            if (kiln_blob_load(mem, file.size, 0, &blob, &err) != KILN_OK) blob = NULL;
        } else mem = NULL;
    } else {
        kiln_bake_input in = {path, file.data, file.size, NULL};
        kiln_bake_options o;
        memset(&o, 0, sizeof o); /* no sink: the page names the file, the bake's reports are not ours */
        if (kiln_bake(&in, 1, &o, &res, &err) == KILN_OK && kiln_blob_load(res.blob, res.size, 0, &blob, &err) != KILN_OK)
            blob = NULL;
    }
    uint32_t models = 0;
    if (blob) kiln_blob_models(blob, &models);
    for (uint32_t m = 0; m < models && !ok; m++) {
        if (!kiln__view_model_bounds(blob, m, r->mn, r->mx)) continue;
        r->has_model = kiln_model_matrix(blob, m, r->model) == KILN_OK;
        ok = 1;
    }
    if (res.blob) kiln_bake_result_free(&res);
    free(mem);
    kiln__cli_file_free(&file);
    return ok;
}

static void kiln__view_ref_info(kiln__view_writer *w, const char *resolved, kiln__view_ref *r)
{
    const kiln_blob *mb = NULL;
    uint32_t mi = 0;
    memset(r, 0, sizeof *r);
    r->page_model = kiln__view_ref_model(w, resolved, &mb, &mi);
    if (r->page_model != KILN_BLOB_NONE) {
        r->from = "input";
        if (!kiln__view_model_bounds(mb, mi, r->mn, r->mx))
            for (int c = 0; c < 3; c++) r->mn[c] = -0.5f, r->mx[c] = 0.5f;
        r->has_model = kiln_model_matrix(mb, mi, r->model) == KILN_OK;
        return;
    }
    if (kiln__view_ref_file(resolved, r)) {
        r->from = "file";
        return;
    }
    r->from = "unknown";
    for (int c = 0; c < 3; c++) r->mn[c] = -0.5f, r->mx[c] = 0.5f;
}

static void kiln__view_instances(kiln__view_writer *w)
{
    FILE *out = w->out;
    uint32_t total = 0, shown_total = 0, ref_total = 0;
    for (uint32_t b = 0; b < w->blob_count; b++) {
        uint32_t n = 0;
        kiln_blob_instances(w->blobs[b], &n);
        total += n;
        ref_total += kiln_reference_count(w->blobs[b]);
    }
    size_t cap = (size_t)(w->v->args.max_instances < total ? w->v->args.max_instances : total);
    kiln__view_ref *refs = calloc(ref_total ? ref_total : 1, sizeof *refs);
    float *mats = malloc((cap ? cap : 1) * 64u);
    uint32_t *ref_of = malloc((cap ? cap : 1) * 4u);
    if (!refs || !mats || !ref_of) {
        kiln__view_oom(w);
        goto done;
    }
    fprintf(out, "\"instances\":{\"count\":%u,\"refs\":[", total);
    for (uint32_t b = 0, k = 0; b < w->blob_count; b++) {
        uint32_t n = kiln_reference_count(w->blobs[b]);
        for (uint32_t r = 0; r < n; r++, k++) {
            kiln_reference_info info;
            memset(&info, 0, sizeof info);
            kiln_reference_get(w->blobs[b], r, &info);
            kiln__view_ref_info(w, info.resolved_path ? info.resolved_path : "", &refs[k]);
            fputs(k ? ",{\"path\":" : "{\"path\":", out);
            kiln__view_str(out, info.path);
            fprintf(out, ",\"model\":%d,\"from\":\"%s\",",
                    refs[k].page_model == KILN_BLOB_NONE ? -1 : (int)refs[k].page_model, refs[k].from);
            kiln__view_bounds(out, refs[k].mn, refs[k].mx);
            fputc('}', out);
        }
    }
    fputs("],\"names\":[", out);
    int first_item = 1;
    for (uint32_t b = 0, ref_base = 0; b < w->blob_count && !w->failed; b++) {
        const kiln_blob *blob = w->blobs[b];
        uint32_t n = 0, nrefs = kiln_reference_count(blob);
        const kiln_blob_instance *inst = kiln_blob_instances(blob, &n);
        float *all = malloc((size_t)(n ? n : 1) * 64u);
        const float **models = malloc((size_t)(nrefs ? nrefs : 1) * sizeof *models);
        if (!all || !models) {
            free(all), free(models);
            kiln__view_oom(w);
            break;
        }
        for (uint32_t r = 0; r < nrefs; r++) models[r] = refs[ref_base + r].has_model ? refs[ref_base + r].model : NULL;
        kiln_result res = n ? kiln_instance_world_matrices_all(blob, NULL, models, KILN_INSTANCE_4X4, all, n) : KILN_OK;
        if (res != KILN_OK) kiln__view_fail(w, "placing the instances", res);
        /* listed reference by reference, as the page groups them */
        for (uint32_t r = 0; r < nrefs && res == KILN_OK; r++) {
            kiln_reference_info info;
            if (kiln_reference_get(blob, r, &info) != KILN_OK) continue;
            for (uint32_t i = 0; i < info.instance_count && shown_total < cap; i++) {
                const kiln_blob_instance *in = &inst[info.first_instance + i];
                memcpy(mats + (size_t)shown_total * 16u, all + (size_t)(info.first_instance + i) * 16u, 64u);
                ref_of[shown_total++] = ref_base + r;
                fputs(first_item ? "" : ",", out);
                first_item = 0;
                kiln__view_str(out, kiln_blob_string(blob, in->name));
            }
        }
        ref_base += nrefs;
        free(all);
        free(models);
    }
    fputs("],", out);
    kiln__view_floats(out, "matrices", mats, (size_t)shown_total * 16u);
    fputs(",\"ref\":", out);
    kiln__base64_write(out, ref_of, (size_t)shown_total * 4u);
    fprintf(out, ",\"shown\":%u}", shown_total);
    if (shown_total < total) {
        w->v->caps_hit |= 4u;
        kiln__view_note(w, "%u of %u instances placed (instance cap %u)", shown_total, total, w->v->args.max_instances);
    }
done:
    free(refs);
    free(mats);
    free(ref_of);
}

/* ---- the document ------------------------------------------------------------------------- */

int kiln__view_write_data(kiln__view *v, FILE *out)
{
    kiln__view_writer w;
    memset(&w, 0, sizeof w);
    w.v = v;
    w.out = out;
    w.blob_count = kiln__view_blobs(v, w.blobs, KILN__VIEW_MAX_BLOBS);
    uint32_t models = 0;
    for (uint32_t b = 0; b < w.blob_count; b++) {
        uint32_t n = 0, meshes = 0;
        kiln_blob_models(w.blobs[b], &n);
        kiln_blob_meshes(w.blobs[b], &meshes);
        w.first_model[b] = models;
        models += n;
        w.shown[b] = calloc(meshes ? meshes : 1, sizeof *w.shown[b]);
        if (!w.shown[b]) kiln__view_oom(&w);
    }
    fputs("{\"title\":", out);
    kiln__view_str(out, v->args.title);
    fputs(",\"inputs\":[", out);
    for (uint32_t i = 0; i < v->args.input_count; i++) {
        if (i) fputc(',', out);
        kiln__view_str(out, v->in[i].path);
    }
    fprintf(out, "],\"caps\":{\"vertices\":%u,\"frames\":%u,\"instances\":%u,\"skinned\":%u},\"models\":[",
            v->args.max_vertices, v->args.max_frames, v->args.max_instances, v->args.max_skinned);
    for (uint32_t b = 0, k = 0; b < w.blob_count && !w.failed; b++) {
        uint32_t n = 0;
        kiln_blob_models(w.blobs[b], &n);
        for (uint32_t m = 0; m < n && !w.failed; m++, k++) {
            if (k) fputc(',', out);
            kiln__view_model(&w, b, m);
        }
    }
    if (v->vertices_shown < v->vertices_total) v->caps_hit |= 1u;
    fputs("],\"clips\":[", out);
    uint32_t skinned_left = v->args.max_skinned;
    int first = 1;
    for (uint32_t b = 0; b < w.blob_count && !w.failed; b++) {
        uint32_t n = 0;
        kiln_blob_animations(w.blobs[b], &n);
        for (uint32_t c = 0; c < n && !w.failed; c++) kiln__view_clip(&w, b, c, &skinned_left, &first);
    }
    v->skinned_used = v->args.max_skinned - skinned_left;
    fputs("],", out);
    if (!w.failed) kiln__view_instances(&w);
    fputs(",\"capped\":[", out);
    for (size_t i = 0; i < w.note_count; i++) {
        if (i) fputc(',', out);
        kiln__view_str(out, w.notes[i]);
        free(w.notes[i]);
    }
    free(w.notes);
    for (uint32_t b = 0; b < w.blob_count; b++) free(w.shown[b]);
    fputs("]}", out);
    return !w.failed;
}
