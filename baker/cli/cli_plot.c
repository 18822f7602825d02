/* `kiln plot`: an SVG of one clip - where a lossy bake spends its error and its bits.
 *
 * The clip is baked twice through the path `kiln pose` takes (cli_pose.h: load, skeleton, clip,
 * bind), lossless and with KILN_BAKE_LOSSY_ANIMATION, and both are sampled by the runtime at
 * every frame (forward kinematics: IK handles and constraints are left out, so the figures are
 * the clip's own). The SVG has three parts:
 *   channels   per chosen joint, translation and rotation components over the frames: the
 *              source keys (dots, from the imported source scene), the lossless samples
 *              (solid) and the lossy ones (dashed);
 *   error      per joint, over the frames, the model-space distance between the lossless and
 *              the lossy pose at the joint and at three points error_distance_m along its
 *              axes (the baker's metric), against the clip's bound;
 *   bits       the width of every stored track of the lossy clip (block, component).
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_plot.h"
#include "cli_pose.h"
#include "file_atomic.h"

#define KILN__PLOT_MAX_FRAMES 2000u

enum { OPT_OUTPUT, OPT_MODEL, OPT_CLIP, OPT_JOINT, OPT_ANIM_ERROR, OPT_ANIM_DISTANCE, OPT_HELP };

static const kiln__cli_opt kiln__plot_opts[] = {
    {"output", 'o', "FILE", OPT_OUTPUT, "the SVG to write (required), replaced atomically"},
    {"model", 'm', "MODEL", OPT_MODEL, "the model whose skeleton the clip plays on (default: CLIP-SOURCE's)"},
    {"clip", 'c', "NAME|INDEX", OPT_CLIP, "the clip (default: the first of CLIP-SOURCE)"},
    {"joint", 'j', "NAME", OPT_JOINT, "a joint whose channels to draw (repeatable, up to 8; default: the first 3 keyed)"},
    {"anim-error", 0, "M", OPT_ANIM_ERROR, "the lossy bake's largest model-space error in metres (0.0001)"},
    {"anim-distance", 0, "M", OPT_ANIM_DISTANCE, "its distance from each joint in metres (0.1)"},
    {"help", 'h', NULL, OPT_HELP, "show this help"},
};
#define KILN__PLOT_OPT_COUNT (sizeof kiln__plot_opts / sizeof kiln__plot_opts[0])

static void kiln__plot_help(FILE *out)
{
    fputs("Usage: " KILN_CLI_NAME " plot [options] CLIP-SOURCE -o PLOT.svg\n"
          "\n"
          "Bakes the clip lossless and lossy (as `kiln pose` and `kiln pose --lossy-anim` would),\n"
          "samples both with the runtime at every frame (forward kinematics only) and writes one\n"
          "SVG: the channels of a few joints (source keys, lossless and lossy samples), the lossy\n"
          "error of every joint over time against the bound (model space, at the joint and at\n"
          "three points the bound's distance along its axes, lossy against lossless), and the bits\n"
          "of every stored track of the lossy clip.\n"
          "\n"
          "CLIP-SOURCE is any importable source or a blob (a blob is plotted as baked: both\n"
          "series are its own clip). The skeleton is that of --model, else of CLIP-SOURCE. At\n"
          "most 2000 frames are sampled (a longer clip is stepped).\n"
          "\n"
          "Options:\n",
          out);
    kiln__cli_print_options(out, kiln__plot_opts, KILN__PLOT_OPT_COUNT);
    fputs("\n"
          "Exit status:\n"
          "  0  the plot was written\n"
          "  1  usage error\n"
          "  2  an input cannot be read or baked; no skeleton, no clip, no joint that --joint names\n"
          "  4  the plot could not be written (nothing is left behind)\n",
          out);
}

static int kiln__plot_args(kiln__plot *p, int argc, char **argv)
{
    kiln__cli_args a;
    kiln__cli_args_init(&a, KILN__PLOT_VERB, argc, argv, kiln__plot_opts, KILN__PLOT_OPT_COUNT);
    for (int k; (k = kiln__cli_args_next(&a)) != KILN_CLI_ARGS_END;) {
        if (k == KILN_CLI_ARGS_ERROR) return KILN_EXIT_USAGE;
        if (k == KILN_CLI_ARGS_POSITIONAL) {
            if (p->clip_path) return kiln__cli_usage_error(KILN__PLOT_VERB, "unexpected argument '%s' (one CLIP-SOURCE)", a.value);
            p->clip_path = a.value;
            continue;
        }
        switch (kiln__plot_opts[k].key) {
        case OPT_OUTPUT: p->out_path = a.value; break;
        case OPT_MODEL: p->model_path = a.value; break;
        case OPT_CLIP: p->clip = a.value; break;
        case OPT_JOINT:
            if (p->joint_arg_count == KILN__PLOT_MAX_JOINTS)
                return kiln__cli_usage_error(KILN__PLOT_VERB, "at most %d --joint options", KILN__PLOT_MAX_JOINTS);
            p->joints[p->joint_arg_count++] = a.value;
            break;
        case OPT_ANIM_ERROR:
        case OPT_ANIM_DISTANCE: {
            int err = kiln__plot_opts[k].key == OPT_ANIM_ERROR;
            if (!kiln__cli_parse_metres(a.value, err ? &p->anim_error_m : &p->anim_distance_m))
                return kiln__cli_usage_error(KILN__PLOT_VERB, "--%s takes a length in metres > 0, not '%s'",
                                             kiln__plot_opts[k].long_name, a.value);
            break;
        }
        default: break;
        }
    }
    if (!p->clip_path) return kiln__cli_usage_error(KILN__PLOT_VERB, "missing CLIP-SOURCE file");
    if (!p->out_path) return kiln__cli_usage_error(KILN__PLOT_VERB, "missing -o PLOT.svg");
    return KILN_EXIT_OK;
}

/* One bake and its binding, through the stages of `kiln pose`. */
static int kiln__plot_prepare(kiln__plot *p, int lossy)
{
    kiln__pose *q = &p->pose[lossy];
    q->args.model_path = p->model_path ? p->model_path : p->clip_path;
    q->args.anim_path = p->model_path ? p->clip_path : NULL;
    q->args.clip = p->clip;
    q->args.lossy = lossy;
    q->args.anim_error_m = p->anim_error_m;
    q->args.anim_distance_m = p->anim_distance_m;
    q->args.loop = KILN_LOOP_CLAMP;
    q->args.no_rig = 1;
    int status = kiln__pose_load(q);
    if (status == KILN_EXIT_OK) status = kiln__pose_find_skeleton(q);
    if (status == KILN_EXIT_OK) status = kiln__pose_find_clip(q);
    if (status == KILN_EXIT_OK) status = kiln__pose_collect_shapes(q);
    if (status == KILN_EXIT_OK) status = kiln__pose_prepare_scalars(q);
    if (status == KILN_EXIT_OK) status = kiln__pose_bind(q);
    if (status == KILN_EXIT_OK) status = kiln__pose_deform_prepare(q);
    return status;
}

const char *kiln__plot_bone_name(const kiln__pose *q, uint32_t b)
{
    return kiln_blob_string(q->skel_blob, q->bones[b].name);
}

static uint32_t kiln__plot_find_bone(const kiln__pose *q, const char *name)
{
    for (uint32_t b = 0; b < q->bone_count; b++)
        if (strcmp(kiln__plot_bone_name(q, b), name) == 0) return b;
    return KILN_BLOB_NONE;
}

/* The source clip (for its keys) and the joints to draw. */
static int kiln__plot_choose(kiln__plot *p)
{
    const kiln__pose *q = &p->pose[0];
    const kiln__pose_input *in = &q->in[q->args.anim_path ? 1 : 0];
    const char *clip_name = kiln__pose_clip_name(q->anim_blob, q->anim);
    if (!in->is_blob && kiln_source_import(in->file.data, in->file.size, in->path, NULL, NULL, &p->scene, NULL) == KILN_OK) {
        for (uint32_t i = 0; i < p->scene.animation_count && !p->src_anim; i++)
            if (p->scene.animations[i].name && strcmp(p->scene.animations[i].name, clip_name) == 0)
                p->src_anim = &p->scene.animations[i];
        if (!p->src_anim && p->scene.animation_count) p->src_anim = &p->scene.animations[0];
    }
    for (uint32_t i = 0; i < p->joint_arg_count; i++) {
        uint32_t b = kiln__plot_find_bone(q, p->joints[i]);
        if (b == KILN_BLOB_NONE) {
            fputs(KILN_CLI_NAME ": " KILN__PLOT_VERB ": the skeleton has no joint named '", stderr);
            kiln__cli_put_text(stderr, p->joints[i], "");
            fputs("'\n", stderr);
            return KILN_EXIT_INPUT;
        }
        p->chosen[p->chosen_count++] = b;
    }
    /* default: the first three joints with keyed transform curves, in curve order */
    for (uint32_t c = 0; !p->joint_arg_count && p->src_anim && c < p->src_anim->curve_count && p->chosen_count < 3; c++) {
        const kiln_source_curve *cv = &p->src_anim->curves[c];
        if (cv->channel > KILN_SOURCE_CHANNEL_TZ || !cv->target) continue;
        uint32_t b = kiln__plot_find_bone(q, cv->target), seen = 0;
        for (uint32_t k = 0; k < p->chosen_count; k++) seen |= p->chosen[k] == b;
        if (b != KILN_BLOB_NONE && !seen) p->chosen[p->chosen_count++] = b;
    }
    for (uint32_t b = 0; !p->joint_arg_count && p->chosen_count < 3 && b < q->bone_count; b++)
        if (!p->src_anim) p->chosen[p->chosen_count++] = b;
    return KILN_EXIT_OK;
}

static double kiln__plot_lane(const kiln_soa_xform *pose, uint32_t bone, int c)
{
    const kiln_soa_xform *x = &pose[bone / KILN_SOA_WIDTH];
    uint32_t l = bone % KILN_SOA_WIDTH;
    const float *comp[7] = {x->tx, x->ty, x->tz, x->qx, x->qy, x->qz, x->qw};
    return comp[c][l];
}

/* Samples both bakes at every (stepped) frame: chosen joints' locals, every joint's error. */
static int kiln__plot_sample(kiln__plot *p)
{
    kiln__pose *q0 = &p->pose[0], *q1 = &p->pose[1];
    const kiln_blob_animation *a = q0->anim;
    uint32_t total = a->frame_count ? a->frame_count : 1;
    p->step = (total + KILN__PLOT_MAX_FRAMES - 1) / KILN__PLOT_MAX_FRAMES;
    p->frames = (total + p->step - 1) / p->step;
    p->bones = q0->bone_count;
    if (q1->bone_count != p->bones) {
        fprintf(stderr, KILN_CLI_NAME ": " KILN__PLOT_VERB ": the two bakes disagree on the skeleton\n");
        return KILN_EXIT_INPUT;
    }
    double d = q1->anim->error_distance_m > 0 ? q1->anim->error_distance_m : 0.1;
    p->frame_x = malloc((size_t)p->frames * sizeof *p->frame_x);
    p->local[0] = malloc((size_t)p->frames * KILN__PLOT_MAX_JOINTS * 7u * sizeof(double));
    p->local[1] = malloc((size_t)p->frames * KILN__PLOT_MAX_JOINTS * 7u * sizeof(double));
    p->error = malloc((size_t)p->frames * (p->bones ? p->bones : 1) * sizeof(double));
    if (!p->frame_x || !p->local[0] || !p->local[1] || !p->error) {
        kiln__pose_out_of_memory();
        return KILN_EXIT_INPUT;
    }
    for (uint32_t f = 0; f < p->frames; f++) {
        double frame = (double)a->first_frame + (double)f * p->step;
        p->frame_x[f] = frame;
        for (int m = 0; m < 2; m++) {
            int status = kiln__pose_sample(&p->pose[m], frame);
            if (status != KILN_EXIT_OK) return status;
            for (uint32_t j = 0; j < p->chosen_count; j++)
                for (int c = 0; c < 7; c++)
                    p->local[m][((size_t)f * KILN__PLOT_MAX_JOINTS + j) * 7u + (size_t)c] =
                        kiln__plot_lane(p->pose[m].pose, p->chosen[j], c);
        }
        for (uint32_t b = 0; b < p->bones; b++) {
            const float *m0 = q0->matrices + (size_t)b * 16u, *m1 = q1->matrices + (size_t)b * 16u;
            double worst = 0;
            for (int k = 0; k < 4; k++) { /* the origin, then d along x, y and z */
                double e2 = 0;
                for (int r = 0; r < 3; r++) {
                    double v0 = m0[12 + r], v1 = m1[12 + r];
                    if (k) v0 += d * m0[(k - 1) * 4 + r], v1 += d * m1[(k - 1) * 4 + r];
                    e2 += (v0 - v1) * (v0 - v1);
                }
                if (e2 > worst) worst = e2;
            }
            p->error[(size_t)b * p->frames + f] = sqrt(worst);
        }
    }
    return KILN_EXIT_OK;
}

static int kiln__plot_run(int argc, char **argv)
{
    kiln__pose_verb = KILN__PLOT_VERB;
    kiln__plot *p = calloc(1, sizeof *p);
    if (!p) {
        kiln__pose_out_of_memory();
        return KILN_EXIT_INPUT;
    }
    int status = kiln__plot_args(p, argc, argv);
    if (status == KILN_EXIT_OK) status = kiln__plot_prepare(p, 0);
    if (status == KILN_EXIT_OK) status = kiln__plot_prepare(p, 1);
    if (status == KILN_EXIT_OK) status = kiln__plot_choose(p);
    if (status == KILN_EXIT_OK) status = kiln__plot_sample(p);
    if (status == KILN_EXIT_OK) {
        kiln_diag err;
        memset(&err, 0, sizeof err);
        if (kiln__file_save_atomic(p->out_path, kiln__plot_emit, p, NULL, KILN_ERR_OUTPUT, &err) != KILN_OK) {
            kiln__cli_print_diag(stderr, NULL, &err);
            status = KILN_EXIT_OUTPUT;
        }
    }
    kiln__pose_free(&p->pose[0]);
    kiln__pose_free(&p->pose[1]);
    kiln_source_scene_free(&p->scene);
    free(p->frame_x);
    free(p->local[0]);
    free(p->local[1]);
    free(p->error);
    free(p);
    return status;
}

const kiln__cli_verb kiln__cli_verb_plot = {
    KILN__PLOT_VERB,
    "write an SVG of a clip: channels, lossy error per joint against the bound, bits",
    kiln__plot_run,
    kiln__plot_help,
};
