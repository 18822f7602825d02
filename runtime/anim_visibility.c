/* Visibility tracks bound to meshes by name (Cast reference D.7), as kiln_blend_shape_bind_clip
 * binds blend shape tracks to shapes. */
#include <string.h>

#include "anim_internal.h"
#include "error_detail.h"

#define KILN__VIS_FN "kiln_visibility_bind_clip: "

/* The clip's last visibility track named `name` (D.4: the last curve on a channel wins), or
 * KILN_BLOB_NONE. */
static uint32_t kiln__vis_track(const kiln_blob *anim_blob, const kiln_blob_anim_scalar *sc, uint32_t n, const char *name)
{
    if (!name[0]) return KILN_BLOB_NONE;
    uint32_t hash = kiln_name_hash(name);
    for (uint32_t k = n; k-- > 0;)
        if (sc[k].kind == KILN_SCALAR_VISIBILITY && sc[k].name_hash == hash &&
            strcmp(kiln_blob_string(anim_blob, sc[k].name), name) == 0)
            return k;
    return KILN_BLOB_NONE;
}

kiln_result kiln_visibility_bind_clip(const kiln_blob *anim_blob, uint32_t clip, const kiln_blob *mesh_blob,
                                      const uint32_t *meshes, uint32_t mesh_count, uint32_t *track)
{
    uint32_t clips = 0, scalar_total = 0, mesh_total = 0, model_total = 0;
    if (!anim_blob) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__VIS_FN "anim_blob", "anim_blob is NULL");
    if (!mesh_blob) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__VIS_FN "mesh_blob", "mesh_blob is NULL");
    if (!track && mesh_count)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__VIS_FN "track",
                          "track is NULL with mesh_count %u", mesh_count);
    const kiln_blob_animation *a = kiln_blob_animations(anim_blob, &clips);
    const kiln_blob_anim_scalar *sc = kiln_blob_anim_scalars(anim_blob, &scalar_total);
    const kiln_blob_mesh *me = kiln_blob_meshes(mesh_blob, &mesh_total);
    const kiln_blob_model *mo = kiln_blob_models(mesh_blob, &model_total);
    if (clip >= clips)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__VIS_FN "clip",
                          "clip %u is out of range (the blob has %u)", clip, clips);
    const kiln_blob_animation *c = &a[clip];
    if (c->scalar_count && (!sc || c->first_scalar > scalar_total || c->scalar_count > scalar_total - c->first_scalar))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__VIS_FN "clip",
                          "clip %u's scalar tracks lie outside ANIM_SCALARS", clip);
    for (uint32_t i = 0; i < mesh_count; i++) {
        uint32_t m = meshes ? meshes[i] : i;
        if (m >= mesh_total)
            return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__VIS_FN "meshes",
                              "mesh %u (entry %u) is out of range (the blob has %u)", m, i, mesh_total);
    }
    for (uint32_t i = 0; i < mesh_count; i++) {
        const kiln_blob_mesh *m = &me[meshes ? meshes[i] : i];
        const kiln_blob_anim_scalar *cs = c->scalar_count ? sc + c->first_scalar : NULL;
        track[i] = cs ? kiln__vis_track(anim_blob, cs, c->scalar_count, kiln_blob_string(mesh_blob, m->name)) : KILN_BLOB_NONE;
        if (track[i] == KILN_BLOB_NONE && cs && m->model < model_total)
            track[i] = kiln__vis_track(anim_blob, cs, c->scalar_count, kiln_blob_string(mesh_blob, mo[m->model].name));
    }
    return KILN_OK;
}

void kiln_visibility_values(const uint32_t *track, uint32_t mesh_count, const float *scalars, uint32_t scalar_count,
                            float *visible)
{
    if (!track || !visible) return;
    for (uint32_t i = 0; i < mesh_count; i++)
        visible[i] = scalars && track[i] < scalar_count && scalars[track[i]] == 0.0f ? 0.0f : 1.0f;
}
