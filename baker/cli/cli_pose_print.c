/* `kiln pose`, its output: per frame the local and model transforms of every bone in the Cast
 * file's order, the clip's scalars, what IK and constraints did, and the skinned vertices of
 * --skin; as aligned text or as one JSON document (docs/pose-json.md).
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_pose.h"
#include "json.h"

/* Bone b's 10 local components (tx ty tz qx qy qz qw sx sy sz) from the SoA pose. */
static void kiln__pose_local(const kiln__pose *p, uint32_t bone, float out[10])
{
    const float *block = (const float *)(const void *)&p->pose[bone / KILN_SOA_WIDTH];
    for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) out[c] = block[c * KILN_SOA_WIDTH + bone % KILN_SOA_WIDTH];
}

/* The value printed for scalar track i: a clamped blend shape weight, or visibility 0/1. */
static float kiln__pose_scalar(const kiln__pose *p, uint32_t i)
{
    float v = p->values[i];
    if (!isfinite(v)) return v;
    if (p->scalars[i].kind == KILN_SCALAR_VISIBILITY) return v != 0.0f ? 1.0f : 0.0f;
    if (p->ts[i] >= 0.0f) v = v < 0.0f ? 0.0f : (v > p->ts[i] ? p->ts[i] : v);
    return v;
}

/* Counts the non-finite values of a frame (printed as null or "-"). */
static void kiln__pose_count_non_finite(kiln__pose *p)
{
    for (uint32_t b = 0; b < p->bone_count; b++) {
        float l[10];
        kiln__pose_local(p, b, l);
        for (int c = 0; c < 10; c++) p->non_finite += !isfinite(l[c]);
        for (int c = 0; c < 16; c++) p->non_finite += !isfinite(p->matrices[(size_t)b * 16u + (size_t)c]);
    }
    for (uint32_t i = 0; i < p->anim->scalar_count; i++) p->non_finite += p->shown[i] && !isfinite(p->values[i]);
    for (size_t i = 0; p->skin_mesh != KILN_BLOB_NONE && i < 3u * (size_t)p->mesh->vertex_count; i++)
        p->non_finite += !isfinite(p->skinned[i]);
}

/* The --skin mesh's name, for headings and JSON keys. */
static const char *kiln__pose_mesh_name(const kiln__pose *p) { return kiln_blob_string(p->skel_blob, p->mesh->name); }

/* ---- JSON output ----------------------------------------------------------------------------- */

static void kiln__pose_json_scalars(const kiln__pose *p, kiln__json *j, uint32_t kind)
{
    kiln__json_begin_object_inline(j);
    for (uint32_t i = 0; i < p->anim->scalar_count; i++) {
        if (p->scalars[i].kind != kind || !p->shown[i]) continue;
        kiln__json_key(j, kiln_blob_string(p->anim_blob, p->scalars[i].name));
        float v = kiln__pose_scalar(p, i);
        if (kind == KILN_SCALAR_VISIBILITY && isfinite(v)) kiln__json_u64(j, v != 0.0f);
        else kiln__json_f64(j, v);
    }
    kiln__json_end_object(j);
}

static void kiln__pose_json_frame(const kiln__pose *p, kiln__json *j, double frame)
{
    kiln__json_begin_object(j);
    kiln__json_key_f64(j, "frame", frame);
    kiln__json_key_f64(j, "time", frame / (double)p->anim->framerate);
    kiln__json_key(j, "local");
    kiln__json_begin_array(j);
    for (uint32_t k = 0; k < p->bone_count; k++) {
        float l[10];
        kiln__pose_local(p, p->order[k], l);
        kiln__json_f32_array(j, l, 10);
    }
    kiln__json_end_array(j);
    kiln__json_key(j, "model");
    kiln__json_begin_array(j);
    for (uint32_t k = 0; k < p->bone_count; k++) kiln__json_f32_array(j, p->matrices + (size_t)p->order[k] * 16u, 16);
    kiln__json_end_array(j);
    kiln__json_key(j, "shapes");
    kiln__pose_json_scalars(p, j, KILN_SCALAR_BLEND_SHAPE);
    kiln__json_key(j, "visible");
    kiln__pose_json_scalars(p, j, KILN_SCALAR_VISIBILITY);
    if (p->rig_scratch) {
        const kiln_rig_report *r = &p->rig_report;
        kiln__json_key(j, "rig");
        kiln__json_begin_object_inline(j);
        kiln__json_key_u64(j, "ik_solved", r->ik_solved);
        kiln__json_key_u64(j, "ik_unreachable", r->ik_unreachable);
        kiln__json_key_u64(j, "ik_skipped", r->ik_skipped);
        kiln__json_key_u64(j, "constraints_applied", r->constraints_applied);
        kiln__json_key_u64(j, "constraints_skipped", r->constraints_skipped);
        kiln__json_end_object(j);
    }
    if (p->skin_mesh != KILN_BLOB_NONE) {
        kiln__json_key(j, "mesh_vertices_model_space");
        kiln__json_begin_object(j);
        kiln__json_key(j, kiln__pose_mesh_name(p));
        kiln__json_begin_array(j);
        for (uint32_t v = 0; v < p->mesh->vertex_count; v++) kiln__json_f32_array(j, p->skinned + 3u * (size_t)v, 3);
        kiln__json_end_array(j);
        kiln__json_end_object(j);
    }
    kiln__json_end_object(j);
}

int kiln__pose_run_json(kiln__pose *p)
{
    kiln__json j;
    kiln__json_init(&j, stdout, 2);
    kiln__json_begin_object(&j);
    const kiln_blob_model *model = &kiln_blob_models(p->skel_blob, NULL)[p->model];
    kiln__json_key_string(&j, "model", kiln_blob_string(p->skel_blob, model->name));
    kiln__json_key_string(&j, "clip", kiln__pose_clip_name(p->anim_blob, p->anim));
    kiln__json_key_f64(&j, "fps", p->anim->framerate);
    kiln__json_key(&j, "frame_range");
    kiln__json_begin_array_inline(&j);
    kiln__json_i64(&j, p->anim->first_frame);
    kiln__json_i64(&j, p->anim->last_frame);
    kiln__json_end_array(&j);
    kiln__json_key_bool(&j, "looping", (p->anim->flags & KILN_ANIM_LOOPING) != 0);
    kiln__json_key(&j, "joints");
    kiln__json_begin_array_inline(&j);
    for (uint32_t k = 0; k < p->bone_count; k++) kiln__json_string(&j, kiln_blob_string(p->skel_blob, p->bones[p->order[k]].name));
    kiln__json_end_array(&j);
    kiln__json_key(&j, "parents");
    kiln__json_begin_array_inline(&j);
    for (uint32_t k = 0; k < p->bone_count; k++) kiln__json_i64(&j, p->cast_parent[k]);
    kiln__json_end_array(&j);
    kiln__json_key_u64(&j, "ik_handles", p->ik_count);
    kiln__json_key_u64(&j, "constraints", p->constraint_count);
    kiln__json_key_bool(&j, "rig_solved", p->rig_scratch != NULL);
    if (p->skin_mesh != KILN_BLOB_NONE) {
        kiln__json_key(&j, "skin");
        kiln__json_begin_object_inline(&j);
        kiln__json_key_string(&j, "mesh", kiln__pose_mesh_name(p));
        kiln__json_key_u64(&j, "vertices", p->mesh->vertex_count);
        kiln__json_key_u64(&j, "influences", p->mesh->influences);
        kiln__json_key_string(&j, "method", p->mesh->skinning == KILN_SKIN_DUAL_QUAT ? "dual_quaternion" : "linear");
        kiln__json_key_u64(&j, "blend_shapes", p->mesh_shape_count);
        kiln__json_end_object(&j);
    }
    kiln__json_key(&j, "frames");
    kiln__json_begin_array(&j);
    int status = KILN_EXIT_OK;
    for (uint32_t f = 0; f < p->args.frame_count && status == KILN_EXIT_OK; f++) {
        status = kiln__pose_sample(p, p->args.frames[f]);
        if (status != KILN_EXIT_OK) break;
        kiln__pose_count_non_finite(p);
        kiln__pose_json_frame(p, &j, p->args.frames[f]);
        if (ferror(stdout)) status = KILN_EXIT_OUTPUT; /* a closed pipe: stop sampling */
    }
    kiln__json_end_array(&j);
    kiln__json_end_object(&j);
    if (kiln__json_finish(&j) != 0 && status == KILN_EXIT_OK) {
        kiln__pose_err("internal error: malformed JSON\n");
        status = KILN_EXIT_OUTPUT;
    }
    return status;
}

/* ---- text output ----------------------------------------------------------------------------- */

/* A fixed-width number; tiny values print as 0 (not -0.000000), non-finite ones as "-". */
static void kiln__pose_put_num(float v)
{
    if (!isfinite(v)) {
        printf(" %10s", "-");
        return;
    }
    printf(" %10.6f", fabsf(v) < 5e-7f ? 0.0 : (double)v);
}

/* Writes a name padded to `width` columns (bytes: multi-byte UTF-8 names may misalign). */
static void kiln__pose_put_name(const char *name, size_t width)
{
    kiln__cli_put_text(stdout, name, "");
    for (size_t n = strlen(name); n < width; n++) fputc(' ', stdout);
}

static void kiln__pose_text_scalars(const kiln__pose *p, uint32_t kind, const char *label)
{
    int any = 0;
    for (uint32_t i = 0; i < p->anim->scalar_count; i++) {
        if (p->scalars[i].kind != kind || !p->shown[i]) continue;
        if (!any) printf("  %s:", label);
        any = 1;
        fputc(' ', stdout);
        kiln__cli_put_text(stdout, kiln_blob_string(p->anim_blob, p->scalars[i].name), "");
        float v = kiln__pose_scalar(p, i);
        if (isfinite(v)) printf(" %.6g", (double)v);
        else fputs(" -", stdout);
    }
    if (any) fputc('\n', stdout);
}

/* What IK and constraints did at this frame, and the skinned vertices. */
static void kiln__pose_text_deform(const kiln__pose *p)
{
    if (p->rig_scratch) {
        const kiln_rig_report *r = &p->rig_report;
        printf("  rig: %u IK handle%s solved (%u unreachable, %u skipped), %u constraint%s applied (%u skipped)\n",
               r->ik_solved, r->ik_solved == 1 ? "" : "s", r->ik_unreachable, r->ik_skipped, r->constraints_applied,
               r->constraints_applied == 1 ? "" : "s", r->constraints_skipped);
    }
    if (p->skin_mesh == KILN_BLOB_NONE) return;
    fputs("  skinned mesh '", stdout);
    kiln__cli_put_text(stdout, kiln__pose_mesh_name(p), "");
    printf("': %u vertices (x y z)\n", p->mesh->vertex_count);
    for (uint32_t v = 0; v < p->mesh->vertex_count; v++) {
        printf("    %8u", v);
        for (int c = 0; c < 3; c++) kiln__pose_put_num(p->skinned[3u * (size_t)v + (size_t)c]);
        fputc('\n', stdout);
    }
}

static void kiln__pose_text_header(const kiln__pose *p, size_t width)
{
    const kiln_blob_model *model = &kiln_blob_models(p->skel_blob, NULL)[p->model];
    static const char *const loop_names[] = {"clip", "clamp", "wrap"};
    fputs("model '", stdout);
    kiln__cli_put_text(stdout, kiln_blob_string(p->skel_blob, model->name), "");
    printf("' (%u bones), clip '", p->bone_count);
    kiln__cli_put_text(stdout, kiln__pose_clip_name(p->anim_blob, p->anim), "");
    printf("': %.9g fps, frames %lld to %lld%s%s; loop mode %s\n", (double)p->anim->framerate,
           (long long)p->anim->first_frame, (long long)p->anim->last_frame,
           (p->anim->flags & KILN_ANIM_LOOPING) ? ", looping" : "",
           (p->anim->flags & KILN_ANIM_LOSSY) ? ", lossy" : "", loop_names[p->args.loop]);
    if (p->anim->flags & KILN_ANIM_LOSSY)
        printf("lossy bound: %.3g m at %.3g m from each joint\n", (double)p->anim->error_bound_m,
               (double)p->anim->error_distance_m);
    if (p->ik_count || p->constraint_count)
        printf("rig: %u IK handle%s, %u constraint%s: %s\n", p->ik_count, p->ik_count == 1 ? "" : "s", p->constraint_count,
               p->constraint_count == 1 ? "" : "s", p->rig_scratch ? "solved after sampling" : "not applied (--no-rig)");
    puts("local: translation, rotation (x y z w), scale; model: position in the Cast file's model space\n"
         "(the Model node's transform is not applied)");
    printf("  ");
    kiln__pose_put_name("bone", width);
    static const char *const cols[] = {"tx", "ty", "tz", "qx", "qy", "qz", "qw", "sx", "sy", "sz",
                                       "model x", "model y", "model z"};
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) printf(" %10s", cols[c]);
    fputc('\n', stdout);
}

int kiln__pose_run_text(kiln__pose *p)
{
    size_t width = 4;
    for (uint32_t b = 0; b < p->bone_count; b++) {
        size_t n = strlen(kiln_blob_string(p->skel_blob, p->bones[b].name));
        width = n > width ? n : width;
    }
    if (width > 32) width = 32; /* longer names push their own line out, not every line */
    kiln__pose_text_header(p, width);
    for (uint32_t f = 0; f < p->args.frame_count; f++) {
        double frame = p->args.frames[f];
        int status = kiln__pose_sample(p, frame);
        if (status != KILN_EXIT_OK) return status;
        kiln__pose_count_non_finite(p);
        printf("\nframe %.9g, time %.9g s\n", frame, frame / (double)p->anim->framerate);
        for (uint32_t k = 0; k < p->bone_count; k++) {
            uint32_t b = p->order[k];
            float l[10];
            kiln__pose_local(p, b, l);
            printf("  ");
            kiln__pose_put_name(kiln_blob_string(p->skel_blob, p->bones[b].name), width);
            for (int c = 0; c < 10; c++) kiln__pose_put_num(l[c]);
            for (int c = 0; c < 3; c++) kiln__pose_put_num(p->matrices[(size_t)b * 16u + 12u + (size_t)c]);
            fputc('\n', stdout);
        }
        kiln__pose_text_scalars(p, KILN_SCALAR_BLEND_SHAPE, "shapes");
        kiln__pose_text_scalars(p, KILN_SCALAR_VISIBILITY, "visible");
        kiln__pose_text_deform(p);
        if (ferror(stdout)) return KILN_EXIT_OUTPUT; /* a closed pipe: stop sampling */
    }
    return KILN_EXIT_OK;
}
