/* `kiln pose`, after local to model: the skeleton's IK handles and constraints
 * (kiln_rig_solve, unless --no-rig), and the skinned vertices of --skin: the mesh's blend
 * shapes at the clip's weights (kiln_blend_shapes_apply), then kiln_skin_mesh on the shaped
 * positions. Both go through the runtime exactly as a game calls it, so the printed pose is
 * the one the game would draw.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_pose.h"
#include "kiln/blend_shape.h"

/* ---- IK handles and constraints ---------------------------------------------------------------- */

static int kiln__pose_rig_prepare(kiln__pose *p)
{
    kiln_rig_ik_handles(p->skel_blob, p->skeleton, &p->ik_count);
    kiln_rig_constraints(p->skel_blob, p->skeleton, &p->constraint_count);
    if (p->args.no_rig || (!p->ik_count && !p->constraint_count)) return KILN_EXIT_OK;
    p->rig_scratch_size = kiln_rig_scratch_size(p->skel_blob, p->skeleton);
    p->rig_scratch = kiln__pose_aligned(p->rig_scratch_size);
    if (!p->rig_scratch) {
        kiln__pose_out_of_memory();
        return KILN_EXIT_INPUT;
    }
    return KILN_EXIT_OK;
}

static kiln_result kiln__pose_rig_solve(kiln__pose *p)
{
    kiln_rig_desc d;
    memset(&d, 0, sizeof d);
    d.blob = p->skel_blob;
    d.skeleton = p->skeleton;
    d.local = p->pose;
    d.soa_count = kiln_anim_binding_soa_count(p->binding);
    d.object = p->matrices;
    d.bone_count = p->bone_count;
    d.scratch = p->rig_scratch;
    d.scratch_size = p->rig_scratch_size;
    d.report = &p->rig_report;
    return kiln_rig_solve(&d);
}

/* ---- skinned vertices ---------------------------------------------------------------------------- */

/* Lists the posed model's meshes on stderr, after a --skin that names none of them. */
static void kiln__pose_list_meshes(const kiln__pose *p, const kiln_blob_model *model, const kiln_blob_mesh *meshes)
{
    kiln__pose_err("the model's meshes:");
    for (uint32_t i = 0; i < model->mesh_count; i++) {
        fprintf(stderr, " %u '", i);
        kiln__cli_put_text(stderr, kiln_blob_string(p->skel_blob, meshes[model->first_mesh + i].name), "");
        fputc('\'', stderr);
    }
    fputs(model->mesh_count ? "\n" : " none\n", stderr);
}

/* The mesh --skin names among the posed model's meshes: by exact name, else by 0-based index
 * (p->skin_mesh is KILN_BLOB_NONE on entry). */
static int kiln__pose_find_mesh(kiln__pose *p)
{
    const kiln_blob_model *model = &kiln_blob_models(p->skel_blob, NULL)[p->model];
    const kiln_blob_mesh *meshes = kiln_blob_meshes(p->skel_blob, NULL);
    const char *want = p->args.skin_mesh;
    uint32_t index;
    for (uint32_t i = 0; i < model->mesh_count && p->skin_mesh == KILN_BLOB_NONE; i++)
        if (strcmp(kiln_blob_string(p->skel_blob, meshes[model->first_mesh + i].name), want) == 0)
            p->skin_mesh = model->first_mesh + i;
    if (p->skin_mesh == KILN_BLOB_NONE && kiln__pose_parse_index(want, &index) && index < model->mesh_count)
        p->skin_mesh = model->first_mesh + index;
    if (p->skin_mesh == KILN_BLOB_NONE) {
        kiln__pose_err("model '");
        kiln__cli_put_text(stderr, kiln_blob_string(p->skel_blob, model->name), "");
        fputs("' has no mesh named '", stderr);
        kiln__cli_put_text(stderr, want, "");
        fputs("' (nor that many meshes)\n", stderr);
        kiln__pose_list_meshes(p, model, meshes);
        return KILN_EXIT_INPUT;
    }
    p->mesh = &meshes[p->skin_mesh];
    if (p->mesh->influences && p->mesh->skeleton != p->skeleton) {
        kiln__pose_err("mesh %u is skinned to skeleton %u, not the posed one (%u)\n",
                p->skin_mesh, p->mesh->skeleton, p->skeleton);
        return KILN_EXIT_INPUT;
    }
    return KILN_EXIT_OK;
}

static int kiln__pose_skin_prepare(kiln__pose *p)
{
    p->skin_mesh = KILN_BLOB_NONE;
    if (!p->args.skin_mesh) return KILN_EXIT_OK;
    int status = kiln__pose_find_mesh(p);
    if (status != KILN_EXIT_OK) return status;
    size_t n = p->mesh->vertex_count ? p->mesh->vertex_count : 1u, bones = p->bone_count ? p->bone_count : 1u;
    uint32_t shapes = kiln_blob_mesh_blend_shapes(p->skel_blob, p->skin_mesh, NULL, 0);
    p->skinned = kiln__pose_aligned(n * 12u);
    p->skin_matrices = kiln__pose_aligned(bones * 16u * sizeof(float));
    p->dual_quats = kiln__pose_aligned(bones * sizeof *p->dual_quats);
    if (shapes) {
        p->shaped = kiln__pose_aligned(n * 12u);
        p->mesh_shapes = malloc(shapes * sizeof *p->mesh_shapes);
        p->shape_tracks = malloc(shapes * sizeof *p->shape_tracks);
        p->shape_weights = malloc(shapes * sizeof *p->shape_weights);
    }
    if (!p->skinned || !p->skin_matrices || !p->dual_quats ||
        (shapes && (!p->shaped || !p->mesh_shapes || !p->shape_tracks || !p->shape_weights))) {
        kiln__pose_out_of_memory();
        return KILN_EXIT_INPUT;
    }
    p->mesh_shape_count = kiln_blob_mesh_blend_shapes(p->skel_blob, p->skin_mesh, p->mesh_shapes, shapes);
    kiln_result r = shapes ? kiln_blend_shape_bind_clip(p->anim_blob, p->clip, p->skel_blob, p->mesh_shapes,
                                                        p->mesh_shape_count, p->shape_tracks)
                           : KILN_OK;
    if (r != KILN_OK) {
        kiln__pose_err("cannot bind the mesh's blend shapes to the clip: ");
        kiln__cli_put_result(stderr, r);
        fputc('\n', stderr);
        return KILN_EXIT_INPUT;
    }
    return KILN_EXIT_OK;
}

/* The mesh's blend shapes at the sampled weights, then skinned by the mesh's own method. */
static kiln_result kiln__pose_skin(kiln__pose *p)
{
    kiln_result r = KILN_OK;
    const kiln_blob_mesh *m = p->mesh;
    if (p->shaped) {
        kiln_blend_shape_weights(p->shape_tracks, p->mesh_shape_count, p->values, p->anim->scalar_count, p->shape_weights);
        kiln_blend_shapes_desc b;
        memset(&b, 0, sizeof b);
        b.blob = p->skel_blob;
        b.mesh = p->skin_mesh;
        b.shapes = p->mesh_shapes;
        b.weights = p->shape_weights;
        b.shape_count = p->mesh_shape_count;
        b.out = p->shaped;
        b.out_count = m->vertex_count;
        r = kiln_blend_shapes_apply(&b);
    }
    if (r == KILN_OK && m->influences)
        r = kiln_pose_skin_matrices(p->skel_blob, p->skeleton, p->matrices, p->skin_matrices, p->bone_count);
    if (r == KILN_OK && m->influences && m->skinning == KILN_SKIN_DUAL_QUAT)
        r = kiln_pose_skin_dual_quats(p->skin_matrices, p->dual_quats, p->bone_count);
    if (r != KILN_OK) return r;
    kiln_skin_desc d;
    memset(&d, 0, sizeof d);
    d.blob = p->skel_blob;
    d.mesh = p->skin_mesh;
    d.skin_matrices = p->skin_matrices;
    d.dual_quats = p->dual_quats;
    d.bone_count = p->bone_count;
    d.vertex_count = m->vertex_count;
    d.positions = p->skinned;
    d.source_positions = p->shaped;
    return kiln_skin_mesh(&d);
}

/* ---- the stage ------------------------------------------------------------------------------------ */

int kiln__pose_deform_prepare(kiln__pose *p)
{
    int status = kiln__pose_rig_prepare(p);
    return status == KILN_EXIT_OK ? kiln__pose_skin_prepare(p) : status;
}

int kiln__pose_deform(kiln__pose *p, double frame)
{
    kiln_result r = KILN_OK;
    const char *what = "";
    memset(&p->rig_report, 0, sizeof p->rig_report);
    if (p->rig_scratch) r = kiln__pose_rig_solve(p), what = "IK handles and constraints";
    if (r == KILN_OK && p->skin_mesh != KILN_BLOB_NONE) r = kiln__pose_skin(p), what = "skinning";
    if (r != KILN_OK) {
        kiln__pose_err("%s at frame %.9g failed: ", what, frame);
        kiln__cli_put_result(stderr, r);
        fputc('\n', stderr);
        return KILN_EXIT_INPUT;
    }
    return KILN_EXIT_OK;
}

void kiln__pose_deform_free(kiln__pose *p)
{
    free(p->rig_scratch);
    free(p->skinned);
    free(p->shaped);
    free(p->skin_matrices);
    free(p->dual_quats);
    free(p->mesh_shapes);
    free(p->shape_tracks);
    free(p->shape_weights);
}
