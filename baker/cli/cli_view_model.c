/* `kiln view`, models: materials, the skeleton at rest (names, parents, model-space matrices
 * from kiln_pose_local_to_object of the rest pose) and meshes, skinned at the rest pose by
 * kiln_skin_mesh (positions and normals), within the page's vertex budget. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "cli_pose.h"
#include "cli_view.h"
#include "kiln/skin.h"

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
kiln_result kiln__view_skin(const kiln_blob *blob, uint32_t mesh, uint32_t shown, const float *skin,
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
    kiln_result r = kiln_pose_local_to_object(blob, skeleton, rest, NULL, model, bones);
    if (r == KILN_OK) r = kiln_pose_skin_matrices(blob, skeleton, model, skin, bones);
    if (r == KILN_OK) r = kiln_pose_skin_dual_quats(skin, dq, bones);
    return r == KILN_OK ? 1 : kiln__view_fail(w, "the rest pose", r);
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
void kiln__view_model(kiln__view_writer *w, uint32_t b, uint32_t mi)
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
