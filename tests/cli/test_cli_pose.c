/* `kiln pose`, run as a separate process, against values worked out by hand.
 *
 * The rig written here (with the public Cast writer) lists its bones child-first, so the
 * Cast order (hand, root, arm) differs from the blob's parent-first order (root, arm, hand):
 *
 *   bone  parent  rest
 *   hand  arm     lp (0, 0.5, 0)
 *   root  -       s (2, 2, 2)
 *   arm   root    lp (0, 1, 0), lr 30 deg about Z
 *
 * Clip "wave" at 30 fps, keys at frames 0 and 10: root tx 0 -> 1 (absolute), arm rq identity ->
 * 90 deg about Z (relative, so the arm turns from 30 to 120 deg), blend shape "smile" 0 -> 2
 * (the model's BlendShape has ts 1.5), blend shape "pout" 0 -> 2 (no BlendShape: unclamped),
 * visibility of "hand" 1 at frame 0 and 0 from frame 6, and a curve on a bone the rig lacks.
 * Clip "idle" holds root tx at 3.
 *
 * With u = clamp(f / 10, 0, 1) and a = 30 + 90u degrees, segment scale compensation (on by
 * default) keeps the root's scale out of the arm's rotation but not out of its offset:
 *   root  model = T(u, 0, 0) S(2)
 *   arm   model = T(u, 2, 0) Rz(a)
 *   hand  model = T(u - 0.5 sin a, 2 + 0.5 cos a, 0) Rz(a)
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "anim_fixture.h"
#include "cli_run.h"
#include "json_read.h"
#include "kiln/bake/cast_write.h"

#define PI 3.14159265358979323846
#define TOL 1e-5

/* ---- scratch files ---------------------------------------------------------------------- */

typedef struct scratch {
    char dir[64];
    char model[128]; /* dir/rig.cast */
    char anim[128];  /* dir/wave.cast */
} scratch;

static void scratch_path(const scratch *s, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", s->dir, name);
}

static void put_bone(kiln_cast_writer *w, uint32_t skel, uint64_t hash, const char *name, int32_t parent,
                     const float lp[3], const float lr[4], const float sc[3])
{
    uint32_t bone = kiln_cast_writer_node(w, skel, KILN_CAST_ID_BONE, hash);
    uint32_t p = (uint32_t)parent; /* -1 is stored as 0xFFFFFFFF */
    kiln_cast_writer_string(w, bone, "n", name);
    kiln_cast_writer_prop(w, bone, "p", KILN_CAST_TYPE_INT, &p, 1);
    kiln_cast_writer_floats(w, bone, "lp", KILN_CAST_TYPE_VEC3, lp, 1);
    kiln_cast_writer_floats(w, bone, "lr", KILN_CAST_TYPE_VEC4, lr, 1);
    kiln_cast_writer_floats(w, bone, "s", KILN_CAST_TYPE_VEC3, sc, 1);
}

static void write_rig(const char *path)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    kiln_cast_writer_string(w, model, "n", "rig");
    uint32_t skel = kiln_cast_writer_node(w, model, KILN_CAST_ID_SKELETON, 3);
    const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1}, two[3] = {2, 2, 2}, ident[4] = {0, 0, 0, 1};
    const float hand_lp[3] = {0, 0.5f, 0}, arm_lp[3] = {0, 1, 0};
    const float arm_lr[4] = {0, 0, (float)sin(PI / 12), (float)cos(PI / 12)}; /* 30 deg about Z */
    put_bone(w, skel, 10, "hand", 2, hand_lp, ident, one);
    put_bone(w, skel, 11, "root", -1, zero, ident, two);
    put_bone(w, skel, 12, "arm", 1, arm_lp, arm_lr, one);

    static const float vp[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    const uint32_t faces[3] = {0, 1, 2}, vi[1] = {0};
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 20);
    kiln_cast_writer_string(w, mesh, "n", "face");
    kiln_cast_writer_floats(w, mesh, "vp", KILN_CAST_TYPE_VEC3, vp, 3);
    kiln_cast_writer_ints(w, mesh, "f", faces, 3);
    uint32_t shape = kiln_cast_writer_node(w, model, KILN_CAST_ID_BLENDSHAPE, 21);
    const float target[3] = {0, 0, 1}, ts = 1.5f;
    kiln_cast_writer_string(w, shape, "n", "smile");
    kiln_cast_writer_u64(w, shape, "b", 20);
    kiln_cast_writer_ints(w, shape, "vi", vi, 1);
    kiln_cast_writer_floats(w, shape, "vp", KILN_CAST_TYPE_VEC3, target, 1);
    kiln_cast_writer_floats(w, shape, "ts", KILN_CAST_TYPE_FLOAT, &ts, 1);
    kiln_diag err;
    cr_assert_eq(kiln_cast_writer_save(w, path, &err), KILN_OK, "%s", err.message);
    kiln_cast_writer_destroy(w);
}

/* One curve with two keys; kv holds 2 values of `type` (rq: 8 floats). */
static void put_curve(kiln_cast_writer *w, uint32_t anim, uint64_t hash, const char *bone, const char *prop,
                      const char *mode, const uint32_t kb[2], uint16_t type, const float *kv)
{
    uint32_t curve = kiln_cast_writer_node(w, anim, KILN_CAST_ID_CURVE, hash);
    kiln_cast_writer_string(w, curve, "nn", bone);
    kiln_cast_writer_string(w, curve, "kp", prop);
    kiln_cast_writer_ints(w, curve, "kb", kb, 2);
    kiln_cast_writer_floats(w, curve, "kv", type, kv, 2);
    kiln_cast_writer_string(w, curve, "m", mode);
}

static void write_wave(const char *path)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t anim = kiln_cast_writer_node(w, root, KILN_CAST_ID_ANIMATION, 2);
    const float fr = 30.0f;
    kiln_cast_writer_string(w, anim, "n", "wave");
    kiln_cast_writer_floats(w, anim, "fr", KILN_CAST_TYPE_FLOAT, &fr, 1);
    const uint32_t kb[2] = {0, 10};
    const float tx[2] = {0, 1}, ghost[2] = {5, 5}, weight[2] = {0, 2};
    const float rq[8] = {0, 0, 0, 1, 0, 0, (float)sin(PI / 4), (float)cos(PI / 4)}; /* identity, 90 deg about Z */
    put_curve(w, anim, 10, "root", "tx", "absolute", kb, KILN_CAST_TYPE_FLOAT, tx);
    put_curve(w, anim, 11, "arm", "rq", "relative", kb, KILN_CAST_TYPE_VEC4, rq);
    put_curve(w, anim, 12, "ghost", "tx", "absolute", kb, KILN_CAST_TYPE_FLOAT, ghost);
    put_curve(w, anim, 13, "smile", "bs", "absolute", kb, KILN_CAST_TYPE_FLOAT, weight);
    put_curve(w, anim, 14, "pout", "bs", "absolute", kb, KILN_CAST_TYPE_FLOAT, weight);
    const uint32_t vb_kb[2] = {0, 6}, vb_kv[2] = {1, 0};
    uint32_t vb = kiln_cast_writer_node(w, anim, KILN_CAST_ID_CURVE, 15);
    kiln_cast_writer_string(w, vb, "nn", "hand");
    kiln_cast_writer_string(w, vb, "kp", "vb");
    kiln_cast_writer_ints(w, vb, "kb", vb_kb, 2);
    kiln_cast_writer_ints(w, vb, "kv", vb_kv, 2);
    kiln_cast_writer_string(w, vb, "m", "absolute");

    uint32_t idle = kiln_cast_writer_node(w, root, KILN_CAST_ID_ANIMATION, 3);
    const uint32_t idle_kb[2] = {0, 4};
    const float idle_tx[2] = {3, 3};
    kiln_cast_writer_string(w, idle, "n", "idle");
    kiln_cast_writer_floats(w, idle, "fr", KILN_CAST_TYPE_FLOAT, &fr, 1);
    put_curve(w, idle, 20, "root", "tx", "absolute", idle_kb, KILN_CAST_TYPE_FLOAT, idle_tx);
    kiln_diag err;
    cr_assert_eq(kiln_cast_writer_save(w, path, &err), KILN_OK, "%s", err.message);
    kiln_cast_writer_destroy(w);
}

static void scratch_init(scratch *s)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/kiln_cli_pose_XXXXXX");
    cr_assert_not_null(mkdtemp(s->dir));
    scratch_path(s, "rig.cast", s->model, sizeof s->model);
    scratch_path(s, "wave.cast", s->anim, sizeof s->anim);
    write_rig(s->model);
    write_wave(s->anim);
}

static void scratch_done(scratch *s)
{
    DIR *d = opendir(s->dir);
    if (d) {
        struct dirent *e;
        char path[512];
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(path, sizeof path, "%s/%s", s->dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(s->dir);
}

/* ---- running and reading ----------------------------------------------------------------- */

/* Runs kiln with args, expects exit 0 and one JSON document on stdout. */
static jr_value *pose_json(const char *const *args)
{
    cli_result r = cli_run(args);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    char err[160];
    jr_value *doc = jr_parse(r.out, strlen(r.out), err, sizeof err);
    cr_assert_not_null(doc, "not one JSON document (%s): %s", err, r.out);
    cli_result_free(&r);
    return doc;
}

static const jr_value *frame_at(const jr_value *doc, size_t i)
{
    const jr_value *f = jr_at(jr_get(doc, "frames"), i);
    cr_assert_not_null(f, "no frame %zu", i);
    return f;
}

/* Component c of bone k's local transform / model matrix in a frame object. */
static double local_of(const jr_value *frame, size_t k, size_t c) { return jr_num(jr_at(jr_at(jr_get(frame, "local"), k), c)); }
static double model_of(const jr_value *frame, size_t k, size_t c) { return jr_num(jr_at(jr_at(jr_get(frame, "model"), k), c)); }

static void expect_near(double got, double want, double tol, const char *what, double frame)
{
    cr_expect(fabs(got - want) <= tol, "frame %g: %s is %.9g, expected %.9g", frame, what, got, want);
}

/* ---- the hand-worked rig ----------------------------------------------------------------- */

enum { HAND, ROOT, ARM }; /* Cast order */

/* The expected local (10) and model (16) values of each bone at frame f (clamped playback). */
typedef struct rig_pose {
    double local[3][10];
    double model[3][16];
} rig_pose;

static void rig_expected(double f, rig_pose *e)
{
    double u = f / 10 < 0 ? 0 : (f / 10 > 1 ? 1 : f / 10);
    double a = (30 + 90 * u) * PI / 180, c = cos(a), s = sin(a);
    const double hand[10] = {0, 0.5, 0, 0, 0, 0, 1, 1, 1, 1};
    const double root[10] = {u, 0, 0, 0, 0, 0, 1, 2, 2, 2};
    const double arm[10] = {0, 1, 0, 0, 0, sin(a / 2), cos(a / 2), 1, 1, 1};
    memcpy(e->local[HAND], hand, sizeof hand);
    memcpy(e->local[ROOT], root, sizeof root);
    memcpy(e->local[ARM], arm, sizeof arm);
    const double mroot[16] = {2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, u, 0, 0, 1};
    const double marm[16] = {c, s, 0, 0, -s, c, 0, 0, 0, 0, 1, 0, u, 2, 0, 1};
    const double mhand[16] = {c, s, 0, 0, -s, c, 0, 0, 0, 0, 1, 0, u - 0.5 * s, 2 + 0.5 * c, 0, 1};
    memcpy(e->model[HAND], mhand, sizeof mhand);
    memcpy(e->model[ROOT], mroot, sizeof mroot);
    memcpy(e->model[ARM], marm, sizeof marm);
}

/* Checks the bones of one frame object against the rig at frame `f` (`at` is the frame the
 * pose should equal, for wrapped playback). */
static void expect_rig_bones(const jr_value *frame, double at, double f)
{
    rig_pose e;
    rig_expected(at, &e);
    static const char *const names[3] = {"hand", "root", "arm"};
    char what[64];
    cr_expect_eq(jr_len(jr_get(frame, "local")), 3);
    cr_expect_eq(jr_len(jr_get(frame, "model")), 3);
    for (size_t k = 0; k < 3; k++) {
        for (size_t c = 0; c < 10; c++) {
            snprintf(what, sizeof what, "%s local[%zu]", names[k], c);
            /* q and -q are the same rotation */
            double sign = local_of(frame, k, 6) < 0 ? -1 : 1;
            expect_near(c >= 3 && c < 7 ? sign * local_of(frame, k, c) : local_of(frame, k, c), e.local[k][c], TOL,
                        what, f);
        }
        for (size_t i = 0; i < 16; i++) {
            snprintf(what, sizeof what, "%s model[%zu]", names[k], i);
            expect_near(model_of(frame, k, i), e.model[k][i], TOL, what, f);
        }
    }
}

/* Blend shapes and visibility at frame f; `clamped` when ts from the Cast model applies. */
static void expect_rig_scalars(const jr_value *frame, double f, int clamped)
{
    double u = f / 10 < 0 ? 0 : (f / 10 > 1 ? 1 : f / 10);
    const jr_value *shapes = jr_get(frame, "shapes"), *visible = jr_get(frame, "visible");
    double smile = 2 * u;
    if (clamped && smile > 1.5) smile = 1.5;
    expect_near(jr_num(jr_get(shapes, "smile")), smile, TOL, "shape smile", f);
    expect_near(jr_num(jr_get(shapes, "pout")), 2 * u, TOL, "shape pout", f);
    cr_expect_eq(jr_len(shapes), 2, "frame %g: %zu shapes", f, jr_len(shapes));
    cr_expect_eq(jr_len(visible), 1, "frame %g: %zu visibility tracks", f, jr_len(visible));
    cr_expect(jr_is_num(jr_get(visible, "hand")), "frame %g: no visibility for hand", f);
    cr_expect_eq(jr_num(jr_get(visible, "hand")), f < 6 ? 1.0 : 0.0, "frame %g: hand visibility", f);
}

static void expect_rig_header(const jr_value *doc, const char *clip)
{
    cr_expect_str_eq(jr_str(jr_get(doc, "model")), "rig");
    cr_expect_str_eq(jr_str(jr_get(doc, "clip")), clip);
    cr_expect_eq(jr_num(jr_get(doc, "fps")), 30.0);
    const jr_value *joints = jr_get(doc, "joints"), *parents = jr_get(doc, "parents");
    cr_assert_eq(jr_len(joints), 3);
    cr_expect_str_eq(jr_str(jr_at(joints, HAND)), "hand");
    cr_expect_str_eq(jr_str(jr_at(joints, ROOT)), "root");
    cr_expect_str_eq(jr_str(jr_at(joints, ARM)), "arm");
    cr_assert_eq(jr_len(parents), 3);
    cr_expect_eq(jr_num(jr_at(parents, HAND)), 2.0, "Cast parent of hand");
    cr_expect_eq(jr_num(jr_at(parents, ROOT)), -1.0, "root has no parent");
    cr_expect_eq(jr_num(jr_at(parents, ARM)), 1.0, "Cast parent of arm");
}

/* ---- tests ------------------------------------------------------------------------------- */

Test(cli_pose, cast_inputs_match_the_hand_worked_rig)
{
    scratch s;
    scratch_init(&s);
    /* integer and fractional frames, before the first and after the last key */
    const char *args[] = {"pose", "--json", s.model, s.anim, "--frames", "0,2.5,5,7.5,10,-3,15", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "ghost") != NULL, "the bone the rig lacks is not reported: %s", r.err);
    cli_result_free(&r);

    jr_value *doc = pose_json(args);
    expect_rig_header(doc, "wave");
    const jr_value *range = jr_get(doc, "frame_range");
    cr_expect(jr_len(range) == 2 && jr_num(jr_at(range, 0)) == 0 && jr_num(jr_at(range, 1)) == 10);
    cr_expect_eq(jr_bool(jr_get(doc, "looping"), -1), 0);
    static const double frames[] = {0, 2.5, 5, 7.5, 10, -3, 15};
    cr_assert_eq(jr_len(jr_get(doc, "frames")), 7);
    for (size_t i = 0; i < 7; i++) {
        const jr_value *fr = frame_at(doc, i);
        expect_near(jr_num(jr_get(fr, "frame")), frames[i], 0, "frame", frames[i]);
        expect_near(jr_num(jr_get(fr, "time")), frames[i] / 30, 1e-9, "time", frames[i]);
        expect_rig_bones(fr, frames[i], frames[i]);
        expect_rig_scalars(fr, frames[i], 1);
    }
    /* the spot checks the header comment promises, written out */
    const jr_value *f25 = frame_at(doc, 1), *f5 = frame_at(doc, 2);
    expect_near(local_of(f25, ROOT, 0), 0.25, TOL, "root tx at 2.5", 2.5);
    expect_near(local_of(f5, ARM, 5), sin(75.0 * PI / 360), TOL, "arm qz at 5 (75 deg)", 5);
    expect_near(model_of(f5, HAND, 12), 0.5 - 0.5 * sin(75 * PI / 180), TOL, "hand x at 5", 5);
    jr_free(doc);
    scratch_done(&s);
}

Test(cli_pose, frame_lists_ranges_steps_and_negative_frames)
{
    scratch s;
    scratch_init(&s);
    const char *args[] = {"pose", "--json", s.model, s.anim, "--frames", "0,5,7.5,10-12,0-2:0.5,-2,-3--1", "-f", "4", NULL};
    jr_value *doc = pose_json(args);
    static const double want[] = {0, 5, 7.5, 10, 11, 12, 0, 0.5, 1, 1.5, 2, -2, -3, -2, -1, 4};
    const size_t n = sizeof want / sizeof want[0];
    cr_assert_eq(jr_len(jr_get(doc, "frames")), n, "%zu frames", jr_len(jr_get(doc, "frames")));
    for (size_t i = 0; i < n; i++) {
        const jr_value *fr = frame_at(doc, i);
        expect_near(jr_num(jr_get(fr, "frame")), want[i], 1e-12, "frame", want[i]);
        expect_rig_bones(fr, want[i], want[i]);
    }
    jr_free(doc);
    scratch_done(&s);
}

Test(cli_pose, loop_wrap_and_clip_selection)
{
    scratch s;
    scratch_init(&s);
    const char *wrap[] = {"pose", "--json", "--loop", "wrap", s.model, s.anim, "--frames", "12.5,-7.5", NULL};
    jr_value *doc = pose_json(wrap);
    expect_rig_bones(frame_at(doc, 0), 2.5, 12.5); /* 12.5 wraps to 2.5 in [0, 10) */
    expect_rig_bones(frame_at(doc, 1), 2.5, -7.5);
    jr_free(doc);

    const char *by_name[] = {"pose", "--json", "--clip", "idle", s.model, s.anim, "--frames", "2", NULL};
    const char *by_index[] = {"pose", "--json", "--clip", "1", s.model, s.anim, "--frames", "2", NULL};
    const char *const *cases[] = {by_name, by_index};
    for (int i = 0; i < 2; i++) {
        doc = pose_json(cases[i]);
        expect_rig_header(doc, "idle");
        const jr_value *fr = frame_at(doc, 0);
        expect_near(local_of(fr, ROOT, 0), 3, TOL, "idle root tx", 2);
        expect_near(local_of(fr, ARM, 5), sin(PI / 12), TOL, "idle arm at rest", 2);
        cr_expect_eq(jr_len(jr_get(fr, "shapes")), 0);
        jr_free(doc);
    }

    const char *first[] = {"pose", "--json", "--clip", "0", s.model, s.anim, "--frames", "2", NULL};
    doc = pose_json(first);
    cr_expect_str_eq(jr_str(jr_get(doc, "clip")), "wave");
    jr_free(doc);
    scratch_done(&s);
}

/* The text form: a header, then one block per frame with one aligned line per bone. */
Test(cli_pose, text_output_names_every_bone)
{
    scratch s;
    scratch_init(&s);
    const char *args[] = {"pose", s.model, s.anim, "--frames", "2.5", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "'rig'") != NULL && strstr(r.out, "'wave'") != NULL, "%s", r.out);
    const char *block = strstr(r.out, "frame 2.5, time ");
    cr_assert_not_null(block, "%s", r.out);
    const char *hand = strstr(block, "\n  hand "), *root = strstr(block, "\n  root "), *arm = strstr(block, "\n  arm ");
    cr_assert(hand && root && arm, "%s", r.out);
    cr_expect(hand < root && root < arm, "bones are not in Cast order: %s", r.out);
    double v[13];
    int n = sscanf(root + 7, "%lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12]);
    cr_assert_eq(n, 13, "root line: %.140s", root);
    expect_near(v[0], 0.25, 1e-6, "root tx (text)", 2.5);
    expect_near(v[7], 2, 1e-6, "root sx (text)", 2.5);
    expect_near(v[10], 0.25, 1e-6, "root model x (text)", 2.5);
    cr_expect(strstr(block, "smile 0.5") != NULL, "%s", block);
    cr_expect(strstr(block, "hand 1") != NULL, "%s", block);
    cli_result_free(&r);
    scratch_done(&s);
}

static void bake(const char *const *inputs, size_t count, const char *out)
{
    const char *args[8] = {"bake"};
    size_t n = 1;
    for (size_t i = 0; i < count; i++) args[n++] = inputs[i];
    args[n++] = "-o";
    args[n++] = out;
    args[n] = NULL;
    cli_result r = cli_run(args);
    cr_assert_eq(r.status, 0, "bake: %s", r.err);
    cli_result_free(&r);
}

Test(cli_pose, baked_blobs_give_the_same_pose)
{
    scratch s;
    scratch_init(&s);
    char both[192], model[192], anim[192];
    scratch_path(&s, "both.kiln", both, sizeof both);
    scratch_path(&s, "rig.kiln", model, sizeof model);
    scratch_path(&s, "wave.kiln", anim, sizeof anim);
    const char *pair[] = {s.model, s.anim};
    bake(pair, 2, both);
    bake(pair, 1, model);
    bake(pair + 1, 1, anim);
    const char *list = "0,2.5,5,7.5,10,-3,15";
    static const double frames[] = {0, 2.5, 5, 7.5, 10, -3, 15};
    const char *one_blob[] = {"pose", "--json", both, "--frames", list, NULL};
    const char *two_blobs[] = {"pose", "--json", model, anim, "--frames", list, NULL};
    const char *mixed[] = {"pose", "--json", s.model, anim, "--frames", list, NULL};
    const char *const *cases[] = {one_blob, two_blobs, mixed};
    for (int c = 0; c < 3; c++) {
        jr_value *doc = pose_json(cases[c]);
        expect_rig_header(doc, "wave");
        for (size_t i = 0; i < 7; i++) {
            expect_rig_bones(frame_at(doc, i), frames[i], frames[i]);
            /* the blob's BlendShape records carry ts: weights are clamped from a blob MODEL too */
            expect_rig_scalars(frame_at(doc, i), frames[i], 1);
        }
        jr_free(doc);
    }
    scratch_done(&s);
}

/* Every number of two documents, element by element. */
static void expect_same_numbers(const jr_value *a, const jr_value *b, double tol, const char *where)
{
    cr_assert_eq(jr_type_of(a), jr_type_of(b), "%s: types differ", where);
    if (jr_is_num(a)) {
        cr_expect(fabs(jr_num(a) - jr_num(b)) <= tol, "%s: %.9g vs %.9g", where, jr_num(a), jr_num(b));
        return;
    }
    cr_assert_eq(jr_len(a), jr_len(b), "%s: lengths differ", where);
    for (size_t i = 0; i < jr_len(a); i++) expect_same_numbers(jr_at(a, i), jr_at(b, i), tol, where);
}

Test(cli_pose, simd_paths_agree)
{
    scratch s;
    scratch_init(&s);
    const char *list = "0-10:0.25,-1,11";
    const char *scalar[] = {"pose", "--json", "--simd", "scalar", s.model, s.anim, "--frames", list, NULL};
    jr_value *a = pose_json(scalar);
    /* a path this CPU lacks falls back to another one with a warning (exit 0): checked anyway */
    static const char *const others[] = {"sse2", "avx2", "avx512"};
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
        const char *args[] = {"pose", "--json", "--simd", others[k], s.model, s.anim, "--frames", list, NULL};
        jr_value *b = pose_json(args);
        char what[32];
        snprintf(what, sizeof what, "scalar vs %s", others[k]);
        expect_same_numbers(jr_get(a, "frames"), jr_get(b, "frames"), 1e-5, what);
        jr_free(b);
    }
    for (size_t i = 0; i < jr_len(jr_get(a, "frames")); i++) {
        double f = jr_num(jr_get(frame_at(a, i), "frame"));
        expect_rig_bones(frame_at(a, i), f, f);
    }
    jr_free(a);
    scratch_done(&s);
}

Test(cli_pose, lossy_bake_stays_within_its_bound)
{
    scratch s;
    scratch_init(&s);
    const char *list = "0-10:0.5";
    const char *lossy[] = {"pose", "--json", "--lossy-anim", s.model, s.anim, "--frames", list, NULL};
    const char *loose[] = {"pose", "--json", "--lossy-anim", "--anim-error", "0.01", "--anim-distance", "0.5",
                           s.model, s.anim, "--frames", list, NULL};
    const double bounds[2] = {1e-4, 1e-2};
    const char *const *cases[] = {lossy, loose};
    for (int c = 0; c < 2; c++) {
        jr_value *doc = pose_json(cases[c]);
        for (size_t i = 0; i < jr_len(jr_get(doc, "frames")); i++) {
            const jr_value *fr = frame_at(doc, i);
            double f = jr_num(jr_get(fr, "frame"));
            rig_pose e;
            rig_expected(f, &e);
            for (size_t k = 0; k < 3; k++)
                for (size_t axis = 0; axis < 3; axis++)
                    expect_near(model_of(fr, k, 12 + axis), e.model[k][12 + axis], bounds[c] * 1.01 + 1e-6,
                                "lossy joint position", f);
        }
        jr_free(doc);
    }
    scratch_done(&s);
}

Test(cli_pose, usage_errors_exit_1)
{
    scratch s;
    scratch_init(&s);
    static const char *const bad_lists[] = {"", "1,,2", "1,", "a", "1-", "-", "5-2", "0-10:0", "0-10:-1", "1.2.3",
                                            "0-10:1:2", "1e3", "inf", "nan", "0-2000000", "+1", " 1"};
    for (size_t i = 0; i < sizeof bad_lists / sizeof bad_lists[0]; i++) {
        const char *args[] = {"pose", s.model, s.anim, "--frames", bad_lists[i], NULL};
        cli_result r = cli_run(args);
        cr_expect_eq(r.status, 1, "--frames '%s': exit %d: %s", bad_lists[i], r.status, r.err);
        cr_expect(strstr(r.err, "--help") != NULL, "--frames '%s': no hint: %s", bad_lists[i], r.err);
        if (bad_lists[i][0] && strcmp(bad_lists[i], "0-2000000") != 0)
            cr_expect(strstr(r.err, bad_lists[i]) != NULL, "the bad item '%s' is not named: %s", bad_lists[i], r.err);
        cli_result_free(&r);
    }
    const char *no_frames[] = {"pose", s.model, s.anim, NULL};
    const char *no_model[] = {"pose", "--frames", "1", NULL};
    const char *three[] = {"pose", s.model, s.anim, s.anim, "--frames", "1", NULL};
    const char *bad_loop[] = {"pose", s.model, s.anim, "--frames", "1", "--loop", "pingpong", NULL};
    const char *bad_simd[] = {"pose", s.model, s.anim, "--frames", "1", "--simd", "neon", NULL};
    const char *error_alone[] = {"pose", s.model, s.anim, "--frames", "1", "--anim-error", "0.001", NULL};
    const char *bad_error[] = {"pose", s.model, s.anim, "--frames", "1", "--lossy-anim", "--anim-error", "-1", NULL};
    const char *unknown[] = {"pose", s.model, s.anim, "--frames", "1", "--frobnicate", NULL};
    const char *const *cases[] = {no_frames, no_model, three, bad_loop, bad_simd, error_alone, bad_error, unknown};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_result r = cli_run(cases[i]);
        cr_expect_eq(r.status, 1, "case %zu: exit %d: %s", i, r.status, r.err);
        cr_expect(strstr(r.err, "--help") != NULL, "case %zu: no hint: %s", i, r.err);
        cli_result_free(&r);
    }
    const char *help[] = {"pose", "--help", NULL};
    cli_result r = cli_run(help);
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "Exit status") != NULL && strstr(r.out, "--frames") != NULL, "%s", r.out);
    cli_result_free(&r);
    const char *listed[] = {"--help", NULL};
    r = cli_run(listed);
    cr_expect(strstr(r.out, "pose") != NULL, "pose is not listed: %s", r.out);
    cli_result_free(&r);
    scratch_done(&s);
}

Test(cli_pose, bad_input_exits_2)
{
    scratch s;
    scratch_init(&s);
    char missing[192], garbage[192], bad_blob[192];
    scratch_path(&s, "missing.cast", missing, sizeof missing);
    scratch_path(&s, "garbage.cast", garbage, sizeof garbage);
    scratch_path(&s, "bad.kiln", bad_blob, sizeof bad_blob);
    FILE *f = fopen(garbage, "wb");
    cr_assert_not_null(f);
    fputs("this is not a cast file", f);
    fclose(f);
    f = fopen(bad_blob, "wb");
    cr_assert_not_null(f);
    fputs("KILN and then nothing a loader would accept", f);
    fclose(f);
    const char *no_file[] = {"pose", missing, s.anim, "--frames", "1", NULL};
    const char *no_anim_file[] = {"pose", s.model, missing, "--frames", "1", NULL};
    const char *not_cast[] = {"pose", garbage, s.anim, "--frames", "1", NULL};
    const char *not_blob[] = {"pose", bad_blob, s.anim, "--frames", "1", NULL};
    const char *no_clip[] = {"pose", s.model, "--frames", "1", NULL};          /* the rig has no Animation */
    const char *no_skeleton[] = {"pose", s.anim, "--frames", "1", NULL};       /* the clips have no skeleton */
    const char *no_such_clip[] = {"pose", s.model, s.anim, "--clip", "run", "--frames", "1", NULL};
    const char *no_such_index[] = {"pose", s.model, s.anim, "--clip", "2", "--frames", "1", NULL};
    const char *const *cases[] = {no_file, no_anim_file, not_cast, not_blob, no_clip, no_skeleton, no_such_clip, no_such_index};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_result r = cli_run(cases[i]);
        cr_expect_eq(r.status, 2, "case %zu: exit %d: %s", i, r.status, r.err);
        cr_expect(r.err[0] != 0, "case %zu: no message", i);
        cr_expect_eq(r.out[0], 0, "case %zu: output on failure: %s", i, r.out);
        cli_result_free(&r);
    }
    cli_result r = cli_run(no_such_clip);
    cr_expect(strstr(r.err, "'wave'") != NULL && strstr(r.err, "'idle'") != NULL, "clips not listed: %s", r.err);
    cli_result_free(&r);
    scratch_done(&s);
}

/* A blob laid out by the test fixture, independent of the baker: the skeleton is stored
 * parent-first (root, arm, hand) with source indices that put it back in the rig's Cast order. */
Test(cli_pose, blob_bone_order_follows_source_indices)
{
    af_bone bones[3] = {{"root", -1, {0, 0, 0}, {0, 0, 0, 1}, {2, 2, 2}, 1},
                        {"arm", 0, {0, 1, 0}, {0, 0, 0, 1}, {1, 1, 1}, 1},
                        {"hand", 1, {0, 0.5f, 0}, {0, 0, 0, 1}, {1, 1, 1}, 1}};
    af_axis_angle(0, 0, 1, PI / 6, bones[1].r);
    af_skel skel = {3, bones};
    enum { F = 11 };
    af_joint joints[2] = {{"root", AF_MODE(0, KILN_MODE_ABSOLUTE), {1, 1, 1}},
                          {"arm", AF_MODE(3, KILN_MODE_ABSOLUTE) | AF_MODE(4, KILN_MODE_ABSOLUTE) |
                                      AF_MODE(5, KILN_MODE_ABSOLUTE) | AF_MODE(6, KILN_MODE_ABSOLUTE),
                           {1, 1, 1}}};
    float values[F * 2 * 10];
    for (int f = 0; f < F; f++) {
        float *root = values + (f * 2) * 10, *arm = root + 10;
        for (int c = 0; c < 10; c++) root[c] = arm[c] = c >= 6 ? 1.0f : 0.0f;
        root[0] = (float)f / 10;
        af_axis_angle(0, 0, 1, (30.0 + 9.0 * f) * PI / 180, arm + 3); /* the rig's arm, as absolute keys */
    }
    af_clip clip = {.name = "wave", .framerate = 30, .frame_count = F, .joint_count = 2, .joints = joints,
                    .values = values, .width = 32};
    size_t size;
    unsigned char *mem = af_build(&skel, &clip, 1, &size);
    uint32_t count = 0;
    const kiln_blob *blob = af_load(mem, size);
    cr_assert_not_null(blob);
    kiln_blob_bone *stored = (kiln_blob_bone *)(uintptr_t)kiln_blob_bones(blob, &count);
    cr_assert_eq(count, 3);
    stored[0].source_index = ROOT;
    stored[1].source_index = ARM;
    stored[2].source_index = HAND;
    af_fix_crc(mem, size);

    char dir[] = "/tmp/kiln_cli_pose_blob_XXXXXX", path[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/rig.kiln", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(mem, 1, size, f), size);
    fclose(f);
    free(mem);

    const char *args[] = {"pose", "--json", path, "--frames", "0,2.5,5,10,15", NULL};
    jr_value *doc = pose_json(args);
    cr_expect_str_eq(jr_str(jr_get(doc, "model")), "model");
    const jr_value *joints_out = jr_get(doc, "joints"), *parents = jr_get(doc, "parents");
    cr_assert_eq(jr_len(joints_out), 3);
    cr_expect_str_eq(jr_str(jr_at(joints_out, 0)), "hand");
    cr_expect_str_eq(jr_str(jr_at(joints_out, 1)), "root");
    cr_expect_str_eq(jr_str(jr_at(joints_out, 2)), "arm");
    cr_expect(jr_num(jr_at(parents, 0)) == 2 && jr_num(jr_at(parents, 1)) == -1 && jr_num(jr_at(parents, 2)) == 1);
    static const double frames[] = {0, 2.5, 5, 10, 15};
    for (size_t i = 0; i < 5; i++) expect_rig_bones(frame_at(doc, i), frames[i], frames[i]);
    jr_free(doc);
    unlink(path);
    rmdir(dir);
}

/* ---- the bundled samples ----------------------------------------------------------------- */

/* samples/make_samples.c: keys every 3 frames of a 30-frame cycle, phase = 2 pi frame / 30;
 * root tx = 0.02 sin(phase), tz = 0.015 sin(2 phase), pelvis ty = 0.95 + 0.025 cos(2 phase),
 * pelvis rq = Rx(-3 deg) Ry(6 deg sin(phase)) (all absolute), chest_breathe = 0.5 - 0.5 cos(phase). */
static void expect_walk_key(const jr_value *fr, double frame, double key_frame)
{
    double ph = 2 * PI * key_frame / 30;
    expect_near(local_of(fr, 0, 0), 0.02 * sin(ph), 1e-6, "root tx", frame);
    expect_near(local_of(fr, 0, 1), 0.0, 1e-6, "root ty", frame);
    expect_near(local_of(fr, 0, 2), 0.015 * sin(2 * ph), 1e-6, "root tz", frame);
    expect_near(local_of(fr, 1, 1), 0.95 + 0.025 * cos(2 * ph), 1e-6, "pelvis ty", frame);
    double rx[4] = {sin(-1.5 * PI / 180), 0, 0, cos(-1.5 * PI / 180)}, yaw = 6 * PI / 180 * sin(ph);
    double ry[4] = {0, sin(yaw / 2), 0, cos(yaw / 2)}, q[4];
    af_qmul(rx, ry, q);
    double sign = local_of(fr, 1, 6) < 0 ? -1 : 1;
    for (int c = 0; c < 4; c++) expect_near(sign * local_of(fr, 1, 3 + (size_t)c), q[c], 1e-6, "pelvis rq", frame);
    /* the root has no rotation: its model matrix is its translation */
    expect_near(model_of(fr, 0, 12), 0.02 * sin(ph), 1e-6, "root model x", frame);
    expect_near(model_of(fr, 0, 14), 0.015 * sin(2 * ph), 1e-6, "root model z", frame);
    expect_near(jr_num(jr_get(jr_get(fr, "shapes"), "chest_breathe")), 0.5 - 0.5 * cos(ph), 1e-6, "chest_breathe",
                frame);
    cr_expect_eq(jr_num(jr_get(jr_get(fr, "visible"), "body")), 1.0, "frame %g: body hidden", frame);
}

Test(cli_pose, bundled_samples)
{
    const char *model = KILN_SOURCE_DIR "/samples/character.cast", *walk = KILN_SOURCE_DIR "/samples/character_walk.cast";
    /* 33 wraps to 3: the walk is authored looping and the default follows it */
    const char *args[] = {"pose", "--json", model, walk, "--frames", "0,3,15,33", NULL};
    jr_value *doc = pose_json(args);
    cr_expect_str_eq(jr_str(jr_get(doc, "model")), "character");
    cr_expect_str_eq(jr_str(jr_get(doc, "clip")), "walk");
    cr_expect_eq(jr_num(jr_get(doc, "fps")), 30.0);
    cr_expect_eq(jr_bool(jr_get(doc, "looping"), -1), 1);
    const jr_value *range = jr_get(doc, "frame_range");
    cr_expect(jr_num(jr_at(range, 0)) == 0 && jr_num(jr_at(range, 1)) == 30);
    const jr_value *joints = jr_get(doc, "joints");
    cr_assert_eq(jr_len(joints), 8);
    static const char *const names[8] = {"root", "pelvis", "spine", "chest", "neck", "head", "ik_target", "head_driver"};
    static const double parents[8] = {-1, 0, 1, 2, 3, 4, 0, 0};
    for (size_t i = 0; i < 8; i++) {
        cr_expect_str_eq(jr_str(jr_at(joints, i)), names[i]);
        cr_expect_eq(jr_num(jr_at(jr_get(doc, "parents"), i)), parents[i], "parent of %s", names[i]);
    }
    static const double frames[4] = {0, 3, 15, 33}, keys[4] = {0, 3, 15, 3};
    cr_assert_eq(jr_len(jr_get(doc, "frames")), 4);
    for (size_t i = 0; i < 4; i++) {
        const jr_value *fr = frame_at(doc, i);
        cr_expect_eq(jr_len(jr_get(fr, "local")), 8);
        cr_expect_eq(jr_len(jr_get(fr, "model")), 8);
        expect_walk_key(fr, frames[i], keys[i]);
    }
    jr_free(doc);

    const char *text[] = {"pose", model, walk, "--frames", "0", NULL};
    cli_result r = cli_run(text);
    cr_expect_eq(r.status, 0, "%s", r.err);
    for (size_t i = 0; i < 8; i++) cr_expect(strstr(r.out, names[i]) != NULL, "no %s: %s", names[i], r.out);
    cli_result_free(&r);
}

/* ---- IK, constraints and skinned vertices ---------------------------------------------------- */

/* A two-bone leg in the y-z plane, with its mesh:
 *
 *   bone    parent  rest lp      role
 *   root    -       0
 *   upper   root    0            IK chain start (length 1)
 *   lower   upper   (0, 1, 0)    (length 1)
 *   end     lower   (0, 1, 0)    IK chain end
 *   goal    root    (0, 1.2, 0)  IK target; ty keyed 1.2 at frame 0, 3 at frame 20
 *   pole    root    (0, 0, 5)    pole vector bone
 *   marker  root    (5, 5, 5)    point-constrained to `end` (no offset)
 *
 * Frame 0: the goal (0, 1.2, 0) is reachable: the knee sits 1 from both the start and the goal,
 * toward the pole: (0, 0.6, 0.8); `lower` points along (0, 0.6, -0.8), a rotation about x
 * taking y to (0, 0.6, -0.8) and z to (0, 0.8, 0.6). Frame 20: the goal (0, 3, 0) is out of
 * reach: the chain goes straight toward it, as at rest. The marker follows the end either way.
 *
 * Mesh "shin": 3 vertices bound rigidly (one influence) to `lower`, at (0, 1.5, 0), (0.1, 1.5,
 * 0), (0, 1, 0.1); a BlendShape "bulge" moves vertex 0 by (0.2, 0, 0), keyed at weight 0.5.
 * Skinned at frame 0: v = K + R (v_shaped - (0, 1, 0)) with K the knee:
 *   v0 = (0, 1.5, 0) + (0.1, 0, 0) -> (0.1, 0.9, 0.4); v1 -> (0.1, 0.9, 0.4); v2 -> (0, 0.68, 0.86).
 * At frame 20 (straight chain) every vertex is at its shaped bind position. */
enum { L_ROOT, L_UPPER, L_LOWER, L_END, L_GOAL, L_POLE, L_MARKER };

static void write_limb(const char *path)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    kiln_cast_writer_string(w, model, "n", "limb");
    uint32_t skel = kiln_cast_writer_node(w, model, KILN_CAST_ID_SKELETON, 3);
    static const char *const names[7] = {"root", "upper", "lower", "end", "goal", "pole", "marker"};
    static const int32_t parents[7] = {-1, 0, 1, 2, 0, 0, 0};
    static const float lps[7][3] = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1.2f, 0}, {0, 0, 5}, {5, 5, 5}};
    const float one[3] = {1, 1, 1}, ident[4] = {0, 0, 0, 1};
    for (int b = 0; b < 7; b++) put_bone(w, skel, 30 + (uint64_t)b, names[b], parents[b], lps[b], ident, one);
    uint32_t ik = kiln_cast_writer_node(w, skel, KILN_CAST_ID_IKHANDLE, 40);
    kiln_cast_writer_string(w, ik, "n", "leg_ik");
    kiln_cast_writer_u64(w, ik, "sb", 30 + L_UPPER);
    kiln_cast_writer_u64(w, ik, "eb", 30 + L_END);
    kiln_cast_writer_u64(w, ik, "tb", 30 + L_GOAL);
    kiln_cast_writer_u64(w, ik, "pv", 30 + L_POLE);
    uint32_t cn = kiln_cast_writer_node(w, skel, KILN_CAST_ID_CONSTRAINT, 41);
    kiln_cast_writer_string(w, cn, "ct", "pt");
    kiln_cast_writer_u64(w, cn, "cb", 30 + L_MARKER);
    kiln_cast_writer_u64(w, cn, "tb", 30 + L_END);

    static const float vp[9] = {0, 1.5f, 0, 0.1f, 1.5f, 0, 0, 1, 0.1f};
    const uint32_t faces[3] = {0, 1, 2}, mi = 1, wb[3] = {L_LOWER, L_LOWER, L_LOWER}, vi[1] = {0};
    const float wv[3] = {1, 1, 1}, target[3] = {0.2f, 1.5f, 0};
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 50);
    kiln_cast_writer_string(w, mesh, "n", "shin");
    kiln_cast_writer_floats(w, mesh, "vp", KILN_CAST_TYPE_VEC3, vp, 3);
    kiln_cast_writer_ints(w, mesh, "f", faces, 3);
    kiln_cast_writer_ints(w, mesh, "mi", &mi, 1);
    kiln_cast_writer_ints(w, mesh, "wb", wb, 3);
    kiln_cast_writer_floats(w, mesh, "wv", KILN_CAST_TYPE_FLOAT, wv, 3);
    uint32_t shape = kiln_cast_writer_node(w, model, KILN_CAST_ID_BLENDSHAPE, 51);
    kiln_cast_writer_string(w, shape, "n", "bulge");
    kiln_cast_writer_u64(w, shape, "b", 50);
    kiln_cast_writer_ints(w, shape, "vi", vi, 1);
    kiln_cast_writer_floats(w, shape, "vp", KILN_CAST_TYPE_VEC3, target, 1);

    uint32_t anim = kiln_cast_writer_node(w, root, KILN_CAST_ID_ANIMATION, 60);
    const float fr = 30.0f, ty[2] = {1.2f, 3}, bulge[2] = {0.5f, 0.5f};
    const uint32_t kb[2] = {0, 20};
    kiln_cast_writer_string(w, anim, "n", "reach");
    kiln_cast_writer_floats(w, anim, "fr", KILN_CAST_TYPE_FLOAT, &fr, 1);
    put_curve(w, anim, 61, "goal", "ty", "absolute", kb, KILN_CAST_TYPE_FLOAT, ty);
    put_curve(w, anim, 62, "bulge", "bs", "absolute", kb, KILN_CAST_TYPE_FLOAT, bulge);
    kiln_diag err;
    cr_assert_eq(kiln_cast_writer_save(w, path, &err), KILN_OK, "%s", err.message);
    kiln_cast_writer_destroy(w);
}

static void model_pos(const jr_value *frame, size_t bone, double out[3])
{
    for (int c = 0; c < 3; c++) out[c] = model_of(frame, bone, 12 + (size_t)c);
}

static void expect_pos(const double got[3], double x, double y, double z, double tol, const char *what, double frame)
{
    const double want[3] = {x, y, z};
    for (int c = 0; c < 3; c++) {
        char label[64];
        snprintf(label, sizeof label, "%s[%d]", what, c);
        expect_near(got[c], want[c], tol, label, frame);
    }
}

static void vertex_of(const jr_value *frame, const char *mesh, size_t v, double out[3])
{
    const jr_value *vs = jr_get(jr_get(frame, "mesh_vertices_model_space"), mesh);
    cr_assert_not_null(vs, "no vertices of '%s' in the frame", mesh);
    for (int c = 0; c < 3; c++) out[c] = jr_num(jr_at(jr_at(vs, v), (size_t)c));
}

static double dist3(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

Test(cli_pose, ik_constraints_and_skinned_vertices)
{
    scratch s;
    scratch_init(&s);
    char limb[192];
    scratch_path(&s, "limb.cast", limb, sizeof limb);
    write_limb(limb);
    const double tol = 1e-4; /* the IK bound; float composition is far inside it */
    for (int by_index = 0; by_index < 2; by_index++) {
        const char *args[] = {"pose", "--json", limb, "--skin", by_index ? "0" : "shin", "--frames", "0,20", NULL};
        jr_value *doc = pose_json(args);
        cr_expect_eq(jr_num(jr_get(doc, "ik_handles")), 1.0);
        cr_expect_eq(jr_num(jr_get(doc, "constraints")), 1.0);
        cr_expect(jr_bool(jr_get(doc, "rig_solved"), 0), "the rig was not solved");
        cr_expect_str_eq(jr_str(jr_get(jr_get(doc, "skin"), "mesh")), "shin");
        cr_expect_eq(jr_num(jr_get(jr_get(doc, "skin"), "blend_shapes")), 1.0);
        double p[7][3], v[3];
        const jr_value *f0 = frame_at(doc, 0), *f20 = frame_at(doc, 1);
        for (int b = 0; b < 7; b++) model_pos(f0, (size_t)b, p[b]);
        expect_pos(p[L_UPPER], 0, 0, 0, tol, "upper (the chain start never moves)", 0);
        expect_pos(p[L_LOWER], 0, 0.6, 0.8, tol, "knee", 0);
        expect_pos(p[L_END], 0, 1.2, 0, tol, "end on the goal", 0);
        expect_pos(p[L_MARKER], 0, 1.2, 0, tol, "marker on the end (point constraint)", 0);
        expect_near(dist3(p[L_UPPER], p[L_LOWER]), 1, 1e-5, "upper length", 0);
        expect_near(dist3(p[L_LOWER], p[L_END]), 1, 1e-5, "lower length", 0);
        cr_expect_eq(jr_num(jr_get(jr_get(f0, "rig"), "ik_solved")), 1.0);
        cr_expect_eq(jr_num(jr_get(jr_get(f0, "rig"), "ik_unreachable")), 0.0);
        cr_expect_eq(jr_num(jr_get(jr_get(f0, "rig"), "constraints_applied")), 1.0);
        vertex_of(f0, "shin", 0, v), expect_pos(v, 0.1, 0.9, 0.4, tol, "v0 (shaped, skinned)", 0);
        vertex_of(f0, "shin", 1, v), expect_pos(v, 0.1, 0.9, 0.4, tol, "v1", 0);
        vertex_of(f0, "shin", 2, v), expect_pos(v, 0, 0.68, 0.86, tol, "v2", 0);
        for (int b = 0; b < 7; b++) model_pos(f20, (size_t)b, p[b]);
        expect_pos(p[L_LOWER], 0, 1, 0, tol, "knee, out of reach: straight", 20);
        expect_pos(p[L_END], 0, 2, 0, tol, "end, out of reach: toward the goal", 20);
        expect_pos(p[L_MARKER], 0, 2, 0, tol, "marker", 20);
        cr_expect_eq(jr_num(jr_get(jr_get(f20, "rig"), "ik_unreachable")), 1.0);
        vertex_of(f20, "shin", 0, v), expect_pos(v, 0.1, 1.5, 0, tol, "v0 at the straight pose", 20);
        vertex_of(f20, "shin", 2, v), expect_pos(v, 0, 1, 0.1, tol, "v2 at the straight pose", 20);
        jr_free(doc);
    }
    /* --no-rig: forward kinematics only (the rest pose, the goal moved) */
    const char *fk[] = {"pose", "--json", limb, "--no-rig", "--skin", "shin", "--frames", "0", NULL};
    jr_value *doc = pose_json(fk);
    cr_expect(!jr_bool(jr_get(doc, "rig_solved"), 1), "--no-rig still solved");
    double p[3], v[3];
    model_pos(frame_at(doc, 0), L_END, p), expect_pos(p, 0, 2, 0, 1e-6, "FK end", 0);
    model_pos(frame_at(doc, 0), L_MARKER, p), expect_pos(p, 5, 5, 5, 1e-6, "FK marker", 0);
    vertex_of(frame_at(doc, 0), "shin", 0, v), expect_pos(v, 0.1, 1.5, 0, 1e-6, "FK v0 (shaped only)", 0);
    cr_expect_null(jr_get(frame_at(doc, 0), "rig"), "a rig report without solving");
    jr_free(doc);
    /* a mesh the model lacks: exit 2, the meshes listed */
    const char *missing[] = {"pose", limb, "--skin", "thigh", "--frames", "0", NULL};
    cli_result r = cli_run(missing);
    cr_expect_eq(r.status, 2, "exit %d", r.status);
    cr_expect(strstr(r.err, "thigh") && strstr(r.err, "0 'shin'"), "%s", r.err);
    cli_result_free(&r);
    /* text output names the rig and the skinned mesh */
    const char *text[] = {"pose", limb, "--skin", "shin", "--frames", "0", NULL};
    r = cli_run(text);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "1 IK handle solved") && strstr(r.out, "1 constraint applied") &&
                  strstr(r.out, "skinned mesh 'shin': 3 vertices"),
              "%s", r.out);
    cli_result_free(&r);
    scratch_done(&s);
}
