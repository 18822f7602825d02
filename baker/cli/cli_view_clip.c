/* `kiln view`, clips: each sampled on its model's skeleton through the stages of `kiln pose`
 * (cli_pose.h: blend shape clamps, scalars, bind, IK handles and constraints), then per mesh
 * kiln_blend_shapes_apply at the sampled weights and kiln_skin_mesh, frame by frame, within the
 * frame cap and the skinned-vertex budget. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "cli_pose.h"
#include "cli_view.h"
#include "kiln/blend_shape.h"
#include "kiln/skin.h"

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
void kiln__view_clip(kiln__view_writer *w, uint32_t b, uint32_t clip, uint32_t *skinned_left, int *first)
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
