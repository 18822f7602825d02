/* The whole animation pipeline (bake, load, bind, sample, local to model) against the shared
 * corpus. Every case of $corpus/cases.json is baked lossless together with its model and
 * compared, frame by frame and bone by bone, with expected/<case>.json: Blender's importer,
 * cross-checked by an independent evaluation of the spec formulas, with ref_* values where
 * Blender deviates from the spec (expected/README.md). The same clips and the benchmark
 * anchors (bench/) then check that the SIMD paths agree (sampling, local -> model, and a blend
 * of two sampled poses) and that a lossy bake stays within its error bound. The case list is read at run time: cases added to cases.json are picked up
 * without code changes.
 *
 * Each test prints its measured maxima per clip to stderr, so that the numbers can be quoted.
 * KILN_TEST_QUICK=1 keeps only the smallest benchmark clip and fewer random times, for slow
 * runners (valgrind); the default run covers everything. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json_read.h"
#include "test_util.h"
#include "kiln/anim.h"
#include "kiln/bake/bake.h"
#include "kiln/blob.h"
#include "kiln/bake/cast.h"
#include "kiln/bake/cast_scene.h"

/* Lossless against the oracle: the README's tight class, which is also what a lossless clip
 * must reach everywhere. */
#define TOL_ORACLE 1e-4
/* The README's tolerance for a case whose oracle is itself further than 1e-4 from the spec
 * evaluation (see oracle_tolerance). */
#define TOL_ORACLE_WIDE 1e-3
/* SIMD paths against the scalar one (anim.h promises 1e-5). */
#define TOL_SIMD 1e-5
/* Float slack on top of the lossy bound: the two poses are composed in float. */
#define LOSSY_SLACK 1e-6
#define RANDOM_TIMES 50
#define QUICK_RANDOM_TIMES 10

static int quick_mode(void)
{
    const char *q = getenv("KILN_TEST_QUICK");
    return q && q[0] && strcmp(q, "0") != 0;
}

/* ---- the corpus ------------------------------------------------------------------------------ */
typedef struct clip_case {
    const char *name;
    const char *model, *anim;  /* relative to the corpus */
    const char *tolerance;     /* the case's tolerance class; NULL for the benchmark clips */
} clip_case;

/* The benchmark anchors (MANIFEST.md, bench/README.md): 301 frames at 30 fps, every channel of
 * every bone keyed at every frame, ssc = 0; the root walks 12 m (not in _inplace). */
static const clip_case bench_clips[] = {
    {"anchor_n20", "bench/anchor_n20_model.cast", "bench/anchor_n20_anim.cast", NULL},
    {"anchor_n80", "bench/anchor_n80_model.cast", "bench/anchor_n80_anim.cast", NULL},
    {"anchor_n200", "bench/anchor_n200_model.cast", "bench/anchor_n200_anim.cast", NULL},
    {"anchor_n80_inplace", "bench/anchor_n80_inplace_model.cast", "bench/anchor_n80_inplace_anim.cast", NULL},
};

static size_t bench_count(void)
{
    return quick_mode() ? 1 : sizeof bench_clips / sizeof bench_clips[0];
}

/* Parses corpus file `name`. NULL when it cannot be read (*missing = 1) or is malformed
 * (*missing = 0); why receives the reason. */
static jr_value *read_json(const char *dir, const char *name, int *missing, char *why, size_t cap)
{
    file_bytes f;
    *missing = 0;
    if (!corpus_read(dir, name, &f)) {
        *missing = 1;
        snprintf(why, cap, "cannot read %s/%s", dir, name);
        return NULL;
    }
    char err[160];
    jr_value *v = jr_parse((const char *)f.data, f.size, err, sizeof err);
    if (!v) snprintf(why, cap, "%s/%s: %s", dir, name, err);
    file_bytes_free(&f);
    return v;
}

/* cases.json: skips the test when it is absent, fails when it is malformed. */
static jr_value *load_cases(const char *dir)
{
    char why[2200];
    int missing;
    jr_value *cases = read_json(dir, "cases.json", &missing, why, sizeof why);
    if (!cases && missing) cr_skip_test("%s: skipping", why);
    cr_assert_not_null(cases, "%s", why);
    cr_assert(jr_is_arr(cases), "cases.json is not an array");
    return cases;
}

/* Case i of cases.json; fails the test when the entry lacks case, model or anim. */
static clip_case case_at(const jr_value *cases, size_t i)
{
    const jr_value *c = jr_at(cases, i);
    clip_case k = {jr_str(jr_get(c, "case")), jr_str(jr_get(c, "model")), jr_str(jr_get(c, "anim")),
                   jr_str(jr_get(c, "tolerance"))};
    cr_assert(k.name && k.model && k.anim, "cases.json entry %zu lacks case, model or anim", i);
    return k;
}

/* ---- baking ---------------------------------------------------------------------------------- */
typedef struct baked {
    kiln_bake_result res;
    const kiln_blob *blob;
    file_bytes model;   /* kept: the Cast-side checks read the model's nodes */
} baked;

/* Bakes {model, anim} in that order, so that skeleton 0 is the model's skeleton and clip 0 the
 * animation file's first Animation node. Returns 0 (why says which file) when an input is
 * missing; a failing bake or load fails the test. */
static int bake_case(const char *dir, const clip_case *c, uint32_t flags, baked *b, char *why, size_t cap)
{
    memset(b, 0, sizeof *b);
    char mpath[2048], apath[2048];
    snprintf(mpath, sizeof mpath, "%s/%s", dir, c->model);
    snprintf(apath, sizeof apath, "%s/%s", dir, c->anim);
    file_bytes anim;
    if (!read_file(mpath, &b->model)) {
        snprintf(why, cap, "%s not found", mpath);
        return 0;
    }
    if (!read_file(apath, &anim)) {
        snprintf(why, cap, "%s not found", apath);
        file_bytes_free(&b->model);
        return 0;
    }
    kiln_bake_input in[2] = {{mpath, b->model.data, b->model.size, NULL}, {apath, anim.data, anim.size, NULL}};
    kiln_bake_options opt;
    memset(&opt, 0, sizeof opt);
    opt.flags = flags;
    kiln_diag err;
    memset(&err, 0, sizeof err);
    kiln_result r = kiln_bake(in, 2, &opt, &b->res, &err);
    file_bytes_free(&anim);
    cr_assert_eq(r, KILN_OK, "%s: bake failed (%s): %s: %s", c->name, kiln_result_name(r), err.path, err.message);
    r = kiln_blob_load(b->res.blob, b->res.size, 0, &b->blob, &err);
    cr_assert_eq(r, KILN_OK, "%s: baked blob does not load: %s", c->name, err.message);
    uint32_t clips = 0, skeletons = 0;
    kiln_blob_animations(b->blob, &clips);
    kiln_blob_skeletons(b->blob, &skeletons);
    cr_assert_gt(skeletons, 0, "%s: no skeleton baked from %s", c->name, c->model);
    cr_assert_gt(clips, 0, "%s: no animation clip baked from %s (kiln_blob_animations count 0)", c->name, c->anim);
    return 1;
}

static void baked_free(baked *b)
{
    kiln_bake_result_free(&b->res);
    file_bytes_free(&b->model);
    b->blob = NULL;
}

static const kiln_blob_animation *clip0(const kiln_blob *blob)
{
    uint32_t n = 0;
    const kiln_blob_animation *a = kiln_blob_animations(blob, &n);
    return n ? &a[0] : NULL;
}

/* ---- playing clip 0 on skeleton 0 ------------------------------------------------------------- */
typedef struct player {
    const kiln_blob *blob;
    const kiln_blob_animation *clip;
    const kiln_blob_bone *bones;       /* skeleton 0's, parent-first */
    uint32_t bone_count, soa_count, scalar_count;
    void *bind_mem;
    kiln_anim_binding *bind;
    kiln_anim_bind_report report;
    kiln_soa_xform *pose;
    float *model;                      /* 16 floats per bone, column-major */
    float *scalars;                    /* the clip's scalar tracks (bs, vb) in clip order */
} player;

static size_t round64(size_t n) { return (n + 63) / 64 * 64; }

static void player_init(player *p, const kiln_blob *blob, const char *label)
{
    memset(p, 0, sizeof *p);
    p->blob = blob;
    p->clip = clip0(blob);
    uint32_t nskel, nbones;
    const kiln_blob_skeleton *sk = kiln_blob_skeletons(blob, &nskel);
    p->bones = kiln_blob_bones(blob, &nbones) + sk[0].first_bone;
    p->bone_count = sk[0].bone_count;
    size_t size = kiln_anim_binding_size(blob, 0, blob, 0);
    cr_assert_gt(size, 0, "%s: kiln_anim_binding_size is 0", label);
    p->bind_mem = aligned_alloc(64, round64(size));
    kiln_result r = kiln_anim_bind(blob, 0, blob, 0, p->bind_mem, size, &p->bind, &p->report);
    cr_assert_eq(r, KILN_OK, "%s: kiln_anim_bind: %s", label, kiln_result_name(r));
    p->soa_count = kiln_anim_binding_soa_count(p->bind);
    cr_assert_eq(p->soa_count, sk[0].soa_count, "%s: binding soa_count %u, skeleton %u", label, p->soa_count,
                 sk[0].soa_count);
    p->pose = aligned_alloc(64, round64(sizeof *p->pose * p->soa_count));
    p->model = aligned_alloc(64, round64(sizeof(float) * 16 * (p->bone_count ? p->bone_count : 1)));
    p->scalar_count = p->clip->scalar_count;
    p->scalars = calloc(p->scalar_count ? p->scalar_count : 1, sizeof *p->scalars);
    cr_assert(p->bind_mem && p->pose && p->model && p->scalars);
}

static void player_free(player *p)
{
    free(p->bind_mem), free(p->pose), free(p->model), free(p->scalars);
    memset(p, 0, sizeof *p);
}

/* Samples at t seconds and composes the model matrices (no root transform: the oracle's model
 * space leaves the Model node's transform out). Frames outside the key range hold the
 * first/last value: KILN_LOOP_CLAMP, not KILN_LOOP_CLIP, because the oracle's importer ignores
 * `lo` (D.1: Blender never wraps) and samples from scene frame 0 whatever the first key. */
static void player_eval(player *p, double t)
{
    kiln_sample_desc d;
    memset(&d, 0, sizeof d);
    d.binding = p->bind, d.time_s = t, d.loop = KILN_LOOP_CLAMP, d.out = p->pose, d.out_count = p->soa_count;
    d.scalars = p->scalars, d.scalar_count = p->scalar_count;
    kiln_result r = kiln_sample(&d);
    cr_assert_eq(r, KILN_OK, "kiln_sample(t=%.17g): %s", t, kiln_result_name(r));
    r = kiln_pose_local_to_object(p->blob, 0, p->pose, NULL, p->model, p->bone_count);
    cr_assert_eq(r, KILN_OK, "kiln_pose_local_to_object: %s", kiln_result_name(r));
}

static float lane(const kiln_soa_xform *pose, uint32_t bone, unsigned c)
{
    const float *x = (const float *)(const void *)&pose[bone / KILN_SOA_WIDTH];
    return x[c * KILN_SOA_WIDTH + bone % KILN_SOA_WIDTH];
}

static const char *bone_name(const player *p, uint32_t b) { return kiln_blob_string(p->blob, p->bones[b].name); }

/* Bone of skeleton 0 named `name` (the first one), or KILN_BLOB_NONE. A plain scan: the oracle
 * names bones exactly as the Cast file does. */
static uint32_t find_bone(const player *p, const char *name)
{
    for (uint32_t b = 0; b < p->bone_count; b++)
        if (strcmp(bone_name(p, b), name) == 0) return b;
    return KILN_BLOB_NONE;
}

/* ---- what the model's Cast nodes say ----------------------------------------------------------- */
typedef struct shape_info {
    const char *name;   /* points into the model bytes */
    float ts;           /* target weight scale, missing/0/negative already read as 1 */
} shape_info;

typedef struct model_info {
    /* Per bone of skeleton 0. Constraints and IK are not evaluated by the runtime yet, so the
     * FK comparison leaves out the bones they drive: local_skip marks the constrained owners
     * and the IK chain members (their local channels differ), model_skip those and all their
     * descendants (their model matrices differ). */
    uint8_t *local_skip, *model_skip;
    uint32_t constraints, ik_handles;
    shape_info *shapes;
    uint32_t shape_count;
} model_info;

/* The first Skeleton node whose parent is a Model: the one baked as skeleton 0. */
static uint32_t first_model_skeleton(const kiln_cast_doc *doc)
{
    for (uint32_t i = 0; i < kiln_cast_node_count(doc); i++) {
        const kiln_cast_node *n = kiln_cast_node_at(doc, i);
        if (n->id != KILN_CAST_ID_SKELETON || n->parent == KILN_CAST_NONE) continue;
        if (kiln_cast_node_at(doc, n->parent)->id == KILN_CAST_ID_MODEL) return i;
    }
    return KILN_CAST_NONE;
}

/* Skeleton bone of Cast bone index `src`, or -1. */
static int32_t bone_of_source(const player *p, int32_t src)
{
    if (src < 0) return -1;
    for (uint32_t b = 0; b < p->bone_count; b++)
        if (p->bones[b].source_index == (uint32_t)src) return (int32_t)b;
    return -1;
}

/* Marks the chain of an IK handle: from the end bone up to the start bone, inclusive (the
 * bones Blender's IK constraint on eb and Maya's ikRPsolver both rotate). When sb is not an
 * ancestor of eb the walk goes on to the root: the spec would skip such a handle, but marking
 * more bones only narrows the comparison, it cannot hide a difference in a bone compared. */
static void mark_ik_chain(const player *p, int32_t start, int32_t end, uint8_t *skip)
{
    for (int32_t b = end; b >= 0; b = p->bones[b].parent) {
        skip[b] = 1;
        if (b == start) break;
    }
}

static void model_info_read(const baked *bk, const player *p, model_info *mi)
{
    memset(mi, 0, sizeof *mi);
    mi->local_skip = calloc(p->bone_count + 1, 1);
    mi->model_skip = calloc(p->bone_count + 1, 1);
    cr_assert(mi->local_skip && mi->model_skip);
    kiln_cast_doc *doc;
    kiln_diag err;
    kiln_result r = kiln_cast_parse(bk->model.data, bk->model.size, NULL, &doc, &err);
    cr_assert_eq(r, KILN_OK, "model does not parse: %s", err.message);
    uint32_t skel = first_model_skeleton(doc);
    const kiln_cast_node *sn = skel == KILN_CAST_NONE ? NULL : kiln_cast_node_at(doc, skel);
    for (uint32_t c = sn ? sn->first_child : KILN_CAST_NONE; c != KILN_CAST_NONE;
         c = kiln_cast_node_at(doc, c)->next_sibling) {
        uint32_t id = kiln_cast_node_at(doc, c)->id;
        if (id == KILN_CAST_ID_CONSTRAINT) {
            kiln_cast_constraint cn;
            if (kiln_cast_get_constraint(doc, c, &cn, NULL) != KILN_OK) continue;
            int32_t b = bone_of_source(p, cn.constrained_bone);
            if (b >= 0) mi->local_skip[b] = 1;
            mi->constraints++;
        } else if (id == KILN_CAST_ID_IKHANDLE) {
            kiln_cast_ik_handle ik;
            if (kiln_cast_get_ik_handle(doc, c, &ik, NULL) != KILN_OK) continue;
            int32_t end = bone_of_source(p, ik.end_bone);
            if (end >= 0) mark_ik_chain(p, bone_of_source(p, ik.start_bone), end, mi->local_skip);
            mi->ik_handles++;
        }
    }
    for (uint32_t i = 0; i < kiln_cast_node_count(doc); i++) {
        if (kiln_cast_node_at(doc, i)->id != KILN_CAST_ID_BLENDSHAPE) continue;
        kiln_cast_blend_shape bs;
        if (kiln_cast_get_blend_shape(doc, i, &bs, NULL) != KILN_OK || !bs.name) continue;
        shape_info *s = realloc(mi->shapes, sizeof *s * (mi->shape_count + 1));
        cr_assert_not_null(s);
        mi->shapes = s;
        /* C.5: ts missing or 0 counts as 1 (the accessor already applies it; kept explicit) */
        s[mi->shape_count].name = bs.name;
        s[mi->shape_count].ts = bs.target_scale > 0 ? bs.target_scale : 1.0f;
        mi->shape_count++;
    }
    kiln_cast_free(doc);
    for (uint32_t b = 0; b < p->bone_count; b++) {   /* parent-first: one pass closes over descendants */
        int32_t parent = p->bones[b].parent;
        mi->model_skip[b] = mi->local_skip[b] || (parent >= 0 && mi->model_skip[parent]);
    }
}

static void model_info_free(model_info *mi)
{
    free(mi->local_skip), free(mi->model_skip), free(mi->shapes);
    memset(mi, 0, sizeof *mi);
}

/* ---- error bookkeeping ------------------------------------------------------------------------- */
typedef struct worst {
    double tol;
    double err;            /* largest error seen (INFINITY for NaN) */
    uint64_t checked, failed;
    double frame;          /* where err was seen */
    char what[160];
    double expected, actual;
} worst;

static void worst_init(worst *w, double tol)
{
    memset(w, 0, sizeof *w);
    w->tol = tol;
}

static void worst_note(worst *w, double err, double frame, const char *bone, const char *elem, double expected,
                       double actual)
{
    if (isnan(err)) err = INFINITY;
    w->checked++;
    if (err > w->tol) w->failed++;
    if (w->checked == 1 || err > w->err) {
        w->err = err, w->frame = frame, w->expected = expected, w->actual = actual;
        snprintf(w->what, sizeof w->what, "%s %s", bone, elem);
    }
}

/* Appends "name err" to a summary line: the tolerance when it is not TOL_ORACLE, and the worst
 * spot when it failed. */
static void worst_print(const worst *w, const char *name, char *line, size_t cap)
{
    size_t n = strlen(line);
    if (n >= cap) return;
    if (!w->checked) {
        snprintf(line + n, cap - n, " %s -", name);
        return;
    }
    n += (size_t)snprintf(line + n, cap - n, " %s %.2e", name, w->err);
    if (n < cap && w->tol != TOL_ORACLE) n += (size_t)snprintf(line + n, cap - n, " (tol %.0e)", w->tol);
    if (n < cap && w->failed)
        snprintf(line + n, cap - n, " FAIL(%llu of %llu > %.0e; worst at frame %g %s: expected %.9g actual %.9g)",
                 (unsigned long long)w->failed, (unsigned long long)w->checked, w->tol, w->frame, w->what, w->expected,
                 w->actual);
}

/* Failing clip names, for the final assertion. */
typedef struct fail_list {
    char names[4096];
    unsigned count;
} fail_list;

static void fail_add(fail_list *f, const char *name)
{
    size_t n = strlen(f->names);
    if (n + strlen(name) + 3 < sizeof f->names) snprintf(f->names + n, sizeof f->names - n, "%s%s", n ? ", " : "", name);
    f->count++;
}

/* One clip's check: 1 when it passes; 0 when it fails, or when its inputs are missing with
 * *skipped set. */
typedef int (*clip_check)(const char *dir, const clip_case *c, int *skipped);

/* Runs `check` on every case of cases.json (skipping the test without the corpus or the file).
 * A case whose inputs are missing counts as failed: the corpus promises them. Returns the case
 * count. */
static size_t check_cases(clip_check check, fail_list *fails)
{
    char dir[1024];
    corpus_dir_or_skip(dir, sizeof dir);
    jr_value *cases = load_cases(dir);
    memset(fails, 0, sizeof *fails);
    size_t n = jr_len(cases);
    for (size_t i = 0; i < n; i++) {
        clip_case c = case_at(cases, i);
        int skipped;
        if (!check(dir, &c, &skipped)) fail_add(fails, c.name);
    }
    jr_free(cases);
    return n;
}

/* Runs `check` on the benchmark clips; one that is missing is passed over (the bench set is
 * optional), and the test is skipped when none is there (or without the corpus). */
static void check_bench_clips(clip_check check, fail_list *fails)
{
    char dir[1024];
    corpus_dir_or_skip(dir, sizeof dir);
    memset(fails, 0, sizeof *fails);
    unsigned found = 0;
    for (size_t i = 0; i < bench_count(); i++) {
        int skipped;
        if (!check(dir, &bench_clips[i], &skipped) && !skipped) fail_add(fails, bench_clips[i].name);
        found += !skipped;
    }
    if (!found) cr_skip_test("no benchmark clip under %s/bench: skipping", dir);
}

/* ---- lossless against the oracle ---------------------------------------------------------------- */
enum { Q_MODEL, Q_T, Q_R, Q_S, Q_WEIGHT, Q_COUNT };
static const char *const q_names[Q_COUNT] = {"model", "local_t", "local_r", "local_s", "blend_shapes"};
static const char *const q_keys[Q_COUNT] = {"model", "local_t", "local_r", "local_s", NULL};

/* Tolerance for quantity q of a case: 1e-4 (the tight class, and what a lossless clip must
 * reach) unless the expected file's independent_check shows the oracle itself further than
 * 1e-4 from the spec evaluation for that quantity while still agreeing with it (the README's
 * "< 1e-3"): the oracle is then only that good, and the README's 1e-3 applies to that quantity.
 * In the public corpus this is anim_quat_edge alone. Its head keys have length 2, and Blender
 * interpolates them as a normalised lerp instead of a slerp of the normalised keys (D.2, D.3):
 * at frame 1, a quarter of the way between two keys 30 degrees apart, the oracle's head
 * local_r x is 0.0629032, the nlerp value, where the slerp is 0.0631744. We follow the spec, as
 * the independent evaluation does: 2.71e-4 on local_r and 5.64e-4 on model, both equal to the
 * independent_check's own distance from Blender. */
static double oracle_tolerance(const jr_value *doc, int q)
{
    const jr_value *check = jr_get(doc, "independent_check");
    double oracle_err = jr_num(jr_get(jr_get(check, "max_abs_err"), q_keys[q] ? q_keys[q] : ""));
    if (jr_bool(jr_get(check, "agrees_with_blender"), 0) && oracle_err > TOL_ORACLE) return TOL_ORACLE_WIDE;
    return TOL_ORACLE;
}

/* The expected value of key for a bone: ref_<key> when present (the spec-faithful value where
 * Blender deviates), else <key>. */
static const jr_value *expected_of(const jr_value *bone, const char *key, int *from_ref)
{
    char ref[64];
    snprintf(ref, sizeof ref, "ref_%s", key);
    const jr_value *v = jr_get(bone, ref);
    *from_ref = v != NULL;
    return v ? v : jr_get(bone, key);
}

/* A JSON array of n numbers into out; 0 when it is not one. */
static int json_vec(const jr_value *v, double *out, size_t n)
{
    if (jr_len(v) != n || !jr_is_arr(v)) return 0;
    for (size_t i = 0; i < n; i++) {
        out[i] = jr_num(jr_at(v, i));
        if (!jr_is_num(jr_at(v, i))) return 0;
    }
    return 1;
}

typedef struct oracle_run {
    const char *name;
    worst q[Q_COUNT];
    uint32_t bones_compared, bones_skipped, ref_values, malformed;
    char problems[1024];   /* non-numeric failures: missing bones, bad fps, notifications */
} oracle_run;

/* Appends a non-numeric failure (missing bone, bad fps, notifications) to o->problems. */
__attribute__((format(printf, 2, 3))) static void problem(oracle_run *o, const char *fmt, ...)
{
    size_t n = strlen(o->problems);
    if (n + 8 >= sizeof o->problems) return;
    if (n) snprintf(o->problems + n, sizeof o->problems - n, "; "), n += 2;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->problems + n, sizeof o->problems - n, fmt, ap);
    va_end(ap);
}

static void compare_bone(oracle_run *o, const player *p, uint32_t b, const jr_value *eb, double frame, int cmp_local,
                         int cmp_model)
{
    const char *name = bone_name(p, b);
    int ref;
    if (cmp_model) {
        const jr_value *m = expected_of(eb, "model", &ref);
        o->ref_values += (uint32_t)ref;
        for (int r = 0; r < 4; r++) {
            double row[4];
            if (!json_vec(jr_at(m, (size_t)r), row, 4)) {
                o->malformed++;
                break;
            }
            for (int c = 0; c < 4; c++) {
                char elem[32];
                snprintf(elem, sizeof elem, "model[%d][%d]%s", r, c, ref ? " (ref)" : "");
                /* expected rows are row-major; ours are column-major */
                double a = p->model[b * 16 + (uint32_t)(c * 4 + r)];
                worst_note(&o->q[Q_MODEL], fabs(a - row[c]), frame, name, elem, row[c], a);
            }
        }
    }
    if (!cmp_local) return;
    static const char *const keys[3] = {"local_t", "local_r", "local_s"};
    static const unsigned first_comp[3] = {0, 3, 7}, comps[3] = {3, 4, 3};
    for (int k = 0; k < 3; k++) {
        double e[4], a[4];
        if (!json_vec(expected_of(eb, keys[k], &ref), e, comps[k])) {
            o->malformed++;
            continue;
        }
        o->ref_values += (uint32_t)ref;
        for (unsigned i = 0; i < comps[k]; i++) a[i] = lane(p->pose, b, first_comp[k] + i);
        /* q and -q are the same rotation: compare against whichever sign is closer */
        double sign = 1;
        if (k == 1) {
            double dp = 0, dn = 0;
            for (unsigned i = 0; i < 4; i++) dp = fmax(dp, fabs(a[i] - e[i])), dn = fmax(dn, fabs(a[i] + e[i]));
            if (dn < dp) sign = -1;
        }
        for (unsigned i = 0; i < comps[k]; i++) {
            char elem[40];
            snprintf(elem, sizeof elem, "%s[%u]%s", keys[k], i, ref ? " (ref)" : "");
            worst_note(&o->q[Q_T + k], fabs(sign * a[i] - e[i]), frame, name, elem, e[i], sign * a[i]);
        }
    }
}

/* Index of the clip's blend-shape scalar named `name` (exact, then case-insensitive), or -1. */
static int32_t shape_scalar(const player *p, const char *name)
{
    uint32_t n;
    const kiln_blob_anim_scalar *s = kiln_blob_anim_scalars(p->blob, &n);
    s += p->clip->first_scalar;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < p->clip->scalar_count; i++) {
            if (s[i].kind != KILN_SCALAR_BLEND_SHAPE) continue;
            const char *sn = kiln_blob_string(p->blob, s[i].name);
            if (pass == 0 ? strcmp(sn, name) == 0 : strcasecmp(sn, name) == 0) return (int32_t)i;
        }
    return -1;
}

static const shape_info *shape_named(const model_info *mi, const char *name)
{
    for (uint32_t i = 0; i < mi->shape_count; i++)
        if (strcmp(mi->shapes[i].name, name) == 0) return &mi->shapes[i];
    return NULL;
}

/* One expected shape weight against the sampled bs track clamped per C.5:
 * w_eff = clamp(w, 0, ts). A shape without a curve has weight 0 (D.7). Names that are no
 * BlendShape of the model and have no curve (Blender's "Basis" key) are not compared. */
static int compare_shape(oracle_run *o, const player *p, const model_info *mi, const char *name, double expected,
                         double frame)
{
    const shape_info *si = shape_named(mi, name);
    int32_t k = shape_scalar(p, name);
    if (!si && k < 0) return 0;
    double ts = si ? si->ts : 1.0;
    double w = k >= 0 ? p->scalars[k] : 0.0;
    double eff = fmin(fmax(w, 0.0), ts);
    worst_note(&o->q[Q_WEIGHT], fabs(eff - expected), frame, name, "weight", expected, eff);
    return 1;
}

/* The expected blend-shape weights of frame entry fi, in the layouts the README leaves open:
 * members {"shape": w}, {"shape": [w per frame]}, or one level of grouping (per mesh) around
 * either. Returns how many weights of known shapes it compared. */
static uint32_t compare_shapes(oracle_run *o, const player *p, const model_info *mi, const jr_value *weights,
                               size_t fi, double frame, int depth)
{
    uint32_t found = 0;
    for (size_t i = 0; i < jr_len(weights); i++) {
        const jr_value *v = jr_at(weights, i);
        if (jr_is_arr(v)) v = jr_at(v, fi);
        if (jr_is_num(v)) found += (uint32_t)compare_shape(o, p, mi, jr_key(weights, i), jr_num(v), frame);
        else if (jr_is_obj(v) && depth == 0) found += compare_shapes(o, p, mi, v, fi, frame, 1);
    }
    return found;
}

/* Where the weights of frame entry fi are: the entry's own "blend_shapes", else the document's:
 * an array parallel to "frames", an object keyed by frame number, or an object of per-frame
 * arrays (returned whole: compare_shapes indexes it). NULL when there are none. */
static const jr_value *frame_shapes(const jr_value *doc, const jr_value *entry, size_t fi)
{
    const jr_value *w = jr_get(entry, "blend_shapes");
    if (w) return w;
    const jr_value *all = jr_get(doc, "blend_shapes");
    if (jr_is_arr(all)) return jr_at(all, fi);
    char key[32];
    snprintf(key, sizeof key, "%.0f", jr_num(jr_get(entry, "frame")));
    return jr_get(all, key) ? jr_get(all, key) : all;
}

typedef struct note_event {
    const char *name;
    int64_t frame;
} note_event;

static int cmp_event(const void *a, const void *b)
{
    const note_event *x = a, *y = b;
    if (x->frame != y->frame) return x->frame < y->frame ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* An expected notification: {"name"|"n": s, "frame"|"f": n} or [name, frame] / [frame, name]. */
static int parse_note(const jr_value *v, note_event *out)
{
    const jr_value *name = NULL, *frame = NULL;
    if (jr_is_obj(v)) {
        name = jr_get(v, "name") ? jr_get(v, "name") : jr_get(v, "n");
        frame = jr_get(v, "frame") ? jr_get(v, "frame") : jr_get(v, "f");
    } else if (jr_is_arr(v) && jr_len(v) == 2) {
        int first_is_name = jr_is_str(jr_at(v, 0));
        name = jr_at(v, first_is_name ? 0 : 1), frame = jr_at(v, first_is_name ? 1 : 0);
    }
    if (!jr_is_str(name) || !jr_is_num(frame)) return 0;
    out->name = jr_str(name), out->frame = (int64_t)llround(jr_num(frame));
    return 1;
}

/* Notifications: the clip's events over its whole range against the expected markers, as
 * sorted multisets of (frame, name) (D.9 keeps duplicates). */
static void compare_notifications(oracle_run *o, const player *p, const jr_value *expected)
{
    size_t n = jr_len(expected);
    if (!jr_is_arr(expected)) return;
    double fr = p->clip->framerate;
    double t0 = (double)(p->clip->first_frame - 1) / fr, t1 = (double)(p->clip->last_frame + 1) / fr;
    uint32_t total = kiln_anim_events(p->blob, 0, t0, t1, KILN_LOOP_CLAMP, NULL, 0);
    kiln_anim_event *ev = calloc(total + 1, sizeof *ev);
    note_event *got = calloc(total + 1, sizeof *got), *want = calloc(n + 1, sizeof *want);
    cr_assert(ev && got && want);
    kiln_anim_events(p->blob, 0, t0, t1, KILN_LOOP_CLAMP, ev, total);
    for (uint32_t i = 0; i < total; i++)
        got[i].name = kiln_blob_string(p->blob, ev[i].name), got[i].frame = (int64_t)llround(ev[i].time_s * fr);
    for (size_t i = 0; i < n; i++)
        if (!parse_note(jr_at(expected, i), &want[i])) {
            problem(o, "notification #%zu has an unrecognised layout", i);
            goto done;
        }
    qsort(got, total, sizeof *got, cmp_event);
    qsort(want, n, sizeof *want, cmp_event);
    if (total != n) {
        problem(o, "notifications: %u events, expected %zu", total, n);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (got[i].frame != want[i].frame || strcmp(got[i].name, want[i].name) != 0) {
            problem(o, "notification %zu: expected '%s' at frame %lld, got '%s' at frame %lld", i, want[i].name,
                    (long long)want[i].frame, got[i].name, (long long)got[i].frame);
            break;
        }
done:
    free(ev), free(got), free(want);
}

/* Clip joint slots that name a bone (an unnamed slot only keeps the slot order) and find none
 * in skeleton 0 even case-insensitively: worth a note, since such curves animate nothing. */
static uint32_t unbound_joints(const player *p)
{
    uint32_t n, count = 0;
    const kiln_blob_anim_joint *j = kiln_blob_anim_joints(p->blob, &n);
    j += p->clip->first_joint;
    for (uint32_t i = 0; i < p->clip->joint_count; i++) {
        const char *name = kiln_blob_string(p->blob, j[i].name);
        if (!name[0]) continue;
        uint32_t b = 0;
        while (b < p->bone_count && strcasecmp(bone_name(p, b), name) != 0) b++;
        count += b == p->bone_count;
    }
    return count;
}

/* Runs one case; returns 1 when it matches. Prints one summary line. */
static int oracle_case(const char *dir, const clip_case *c)
{
    oracle_run o;
    memset(&o, 0, sizeof o);
    o.name = c->name;
    char exp_name[512], why[2200];
    snprintf(exp_name, sizeof exp_name, "expected/%s.json", c->name);
    int missing;
    jr_value *doc = read_json(dir, exp_name, &missing, why, sizeof why);
    if (!doc) {
        fprintf(stderr, "anim_corpus oracle %s: FAIL %s\n", c->name, why);
        return 0;
    }
    baked bk;
    if (!bake_case(dir, c, 0, &bk, why, sizeof why)) {
        fprintf(stderr, "anim_corpus oracle %s: FAIL %s\n", c->name, why);
        jr_free(doc);
        return 0;
    }
    player p;
    player_init(&p, bk.blob, c->name);
    model_info mi;
    model_info_read(&bk, &p, &mi);

    const char *cls = c->tolerance ? c->tolerance : jr_str(jr_get(doc, "tolerance_class"));
    /* Tight cases compare every bone. Other classes (medium: constraints, loose: IK, none: IK
     * the importer skipped) compare the FK part only, the bones no constraint or IK handle
     * drives, since the runtime does not evaluate those yet. */
    int fk_only = !cls || strcmp(cls, "tight") != 0;
    for (int q = 0; q < Q_COUNT; q++) worst_init(&o.q[q], oracle_tolerance(doc, q));

    double fps = jr_num(jr_get(doc, "fps"));
    if (!(fps > 0) || fabs(fps - p.clip->framerate) > 1e-6 * fps)
        problem(&o, "fps: expected %g, clip framerate %g", fps, (double)p.clip->framerate), fps = p.clip->framerate;
    const jr_value *frames = jr_get(doc, "frames");
    if (!jr_len(frames)) problem(&o, "no frames in %s", exp_name);
    int shapes_layout_reported = 0;
    for (size_t fi = 0; fi < jr_len(frames); fi++) {
        const jr_value *entry = jr_at(frames, fi);
        double frame = jr_num(jr_get(entry, "frame"));
        if (isnan(frame)) {
            o.malformed++;
            continue;
        }
        player_eval(&p, frame / fps);
        const jr_value *bones = jr_get(entry, "bones");
        for (size_t i = 0; i < jr_len(bones); i++) {
            const char *name = jr_key(bones, i);
            uint32_t b = find_bone(&p, name);
            if (b == KILN_BLOB_NONE) {
                if (fi == 0) problem(&o, "bone '%s' is not in skeleton 0", name);
                continue;
            }
            int cmp_local = !fk_only || !mi.local_skip[b], cmp_model = !fk_only || !mi.model_skip[b];
            if (fi == 0) {
                if (cmp_local && cmp_model) o.bones_compared++;
                else o.bones_skipped++;
            }
            compare_bone(&o, &p, b, jr_at(bones, i), frame, cmp_local, cmp_model);
        }
        const jr_value *shapes = frame_shapes(doc, entry, fi);
        /* a layout this test does not know must not pass silently */
        if (jr_len(shapes) && !compare_shapes(&o, &p, &mi, shapes, fi, frame, 0) && !shapes_layout_reported++)
            problem(&o, "blend_shapes of frame %g: no weight found in an unrecognised layout", frame);
    }
    compare_notifications(&o, &p, jr_get(doc, "notifications"));
    if (o.malformed) problem(&o, "%u malformed expected values", o.malformed);

    int ok = !o.problems[0];
    for (int q = 0; q < Q_COUNT; q++) ok &= o.q[q].failed == 0;
    char line[4096];
    snprintf(line, sizeof line,
             "anim_corpus oracle %-24s [%s, %u bones compared, %u skipped (constraints %u, IK %u), %u ref_* values]:",
             c->name, cls ? cls : "?", o.bones_compared, o.bones_skipped, mi.constraints, mi.ik_handles, o.ref_values);
    for (int q = 0; q < Q_COUNT; q++) worst_print(&o.q[q], q_names[q], line, sizeof line);
    fprintf(stderr, "%s%s%s%s\n", line, o.problems[0] ? " PROBLEMS: " : "", o.problems, ok ? "" : "  => FAIL");
    uint32_t unbound = unbound_joints(&p);
    if (unbound) fprintf(stderr, "    %s: %u named clip joint(s) match no bone of skeleton 0\n", c->name, unbound);
    model_info_free(&mi);
    player_free(&p);
    baked_free(&bk);
    jr_free(doc);
    return ok;
}

static int oracle_check(const char *dir, const clip_case *c, int *skipped)
{
    *skipped = 0;
    return oracle_case(dir, c);
}

Test(anim_corpus, lossless_bake_matches_the_oracle)
{
    fail_list fails;
    size_t n = check_cases(oracle_check, &fails);
    cr_assert_eq(fails.count, 0, "%u of %zu cases differ from the oracle (details on stderr): %s", fails.count, n,
                 fails.names);
}

/* ---- SIMD paths agree ---------------------------------------------------------------------------- */
#define SIMD_PATH_COUNT 4

/* The SIMD paths this CPU and build have, scalar first (kiln_simd_force answers a missing one
 * with another path). */
static int simd_paths(kiln_simd out[SIMD_PATH_COUNT])
{
    static const kiln_simd all[SIMD_PATH_COUNT] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
    int n = 0;
    for (int i = 0; i < SIMD_PATH_COUNT; i++)
        if (kiln_simd_force(all[i]) == all[i]) out[n++] = all[i];
    kiln_simd_force(KILN_SIMD_AUTO);
    return n;
}

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* The times a clip is checked at: each frame in `frames` (or every integer frame of the clip
 * when frames is NULL), the same plus 0.37 frame, and pseudo-random times from two frames
 * before the first key to two after the last (clamped ends included). Returns the count. */
static size_t sample_times(const kiln_blob_animation *a, const jr_value *frames, double **out)
{
    size_t nf = frames ? jr_len(frames) : (size_t)(a->last_frame - a->first_frame + 1);
    size_t nr = quick_mode() ? QUICK_RANDOM_TIMES : RANDOM_TIMES;
    double *t = malloc(sizeof *t * (2 * nf + nr + 1));
    cr_assert_not_null(t);
    double fr = a->framerate;
    size_t n = 0;
    for (size_t i = 0; i < nf; i++) {
        double f = frames ? jr_num(jr_get(jr_at(frames, i), "frame")) : (double)(a->first_frame + (int64_t)i);
        if (isnan(f)) continue;   /* reported by the oracle test */
        t[n++] = f / fr;
        t[n++] = (f + 0.37) / fr;
    }
    uint32_t s = 12345u + (uint32_t)a->frame_count;
    double lo = (double)(a->first_frame - 2), hi = (double)(a->last_frame + 2);
    for (size_t i = 0; i < nr; i++) t[n++] = (lo + (hi - lo) * (double)lcg(&s) / 16777216.0) / fr;
    *out = t;
    return n;
}

typedef struct simd_stats {
    double pose, model, scalar;   /* largest disagreement: tolerance-scaled error below */
    double blend, blend_model;    /* the same for a blend of two sampled poses and its model matrices */
    double pose_abs, model_abs;   /* largest absolute difference */
    uint64_t failed;
    char first[256];
} simd_stats;

/* |a - b| against TOL_SIMD, absolute up to magnitude 1 and relative above: the benchmark root
 * walks 12 m, where one float step is 1e-6 and a 13-bone chain of float products legitimately
 * moves the translation by a few of them between the paths. Returns err / tol-scale. */
static double simd_err(double ref, double got, double *abs_out)
{
    double d = fabs(ref - got);
    if (isnan(d)) d = INFINITY;
    if (d > *abs_out) *abs_out = d;
    return d / fmax(1.0, fabs(ref));
}

/* Counts a disagreement and keeps the first one's description. */
static void simd_fail(simd_stats *st, const char *path, double t, const char *what, uint32_t index, double ref,
                      double got)
{
    if (!st->failed++)
        snprintf(st->first, sizeof st->first, "%s t=%.9g %s %u: scalar %.9g, %s %.9g", path, t, what, index, ref, path,
                 got);
}

/* Blends the scalar path's poses at this time and the previous one (0.35 / 0.65, below the
 * rest threshold nowhere) on the path in use and takes the result to model space, so that the
 * blend and local -> model kernels of every path see the corpus poses themselves. */
static void simd_blend(const player *ref, const kiln_soa_xform *prev, kiln_soa_xform *out, float *model)
{
    kiln_blend_layer ly[2] = {{ref->pose, 0.35f, NULL}, {prev, 0.65f, NULL}};
    kiln_result r = kiln_pose_blend(ly, 2, NULL, 0.1f, out, ref->soa_count);
    cr_assert_eq(r, KILN_OK, "kiln_pose_blend: %s", kiln_result_name(r));
    r = kiln_pose_local_to_object(ref->blob, 0, out, NULL, model, ref->bone_count);
    cr_assert_eq(r, KILN_OK, "kiln_pose_local_to_object: %s", kiln_result_name(r));
}

/* Largest tolerance-scaled difference between two poses (quaternions up to sign) and between
 * two sets of model matrices of `bones` bones; the first beyond TOL_SIMD is recorded. */
static void simd_compare_blend(simd_stats *st, const char *pn, double t, uint32_t bones, const kiln_soa_xform *rp,
                               const kiln_soa_xform *gp, const float *rm, const float *gm)
{
    double scratch = 0;
    for (uint32_t b = 0; b < bones; b++) {
        double dp = 0, dn = 0;
        for (unsigned c = 0; c < 10; c++) {
            double e = simd_err(lane(rp, b, c), lane(gp, b, c), &scratch);
            if (c >= 3 && c < 7) dp = fmax(dp, e), dn = fmax(dn, simd_err(lane(rp, b, c), -lane(gp, b, c), &scratch));
            else st->blend = fmax(st->blend, e);
            if (e > TOL_SIMD && (c < 3 || c >= 7)) simd_fail(st, pn, t, "blended pose of bone", b, lane(rp, b, c), lane(gp, b, c));
        }
        st->blend = fmax(st->blend, fmin(dp, dn));
        if (fmin(dp, dn) > TOL_SIMD) simd_fail(st, pn, t, "blended rotation (qw) of bone", b, lane(rp, b, 6), lane(gp, b, 6));
        for (unsigned k = 0; k < 16; k++) {
            double e = simd_err(rm[b * 16 + k], gm[b * 16 + k], &scratch);
            st->blend_model = fmax(st->blend_model, e);
            if (e > TOL_SIMD) simd_fail(st, pn, t, "blended model matrix of bone", b, rm[b * 16 + k], gm[b * 16 + k]);
        }
    }
}

/* Samples blob's clip 0 at every time on every path and compares each path with the scalar
 * one: local pose (quaternions up to sign), model matrices and scalar tracks; then a blend of
 * two of those poses and its model matrices (simd_blend). */
static void simd_check(const kiln_blob *blob, const jr_value *frames, const kiln_simd *paths, int np, simd_stats *st,
                       const char *label)
{
    player ref, got;
    player_init(&ref, blob, label);
    player_init(&got, blob, label);
    double *times;
    size_t nt = sample_times(ref.clip, frames, &times);
    size_t pose_bytes = round64(sizeof(kiln_soa_xform) * ref.soa_count);
    size_t model_bytes = round64(sizeof(float) * 16 * (ref.bone_count ? ref.bone_count : 1));
    kiln_soa_xform *prev = aligned_alloc(64, pose_bytes), *rbl = aligned_alloc(64, pose_bytes);
    kiln_soa_xform *gbl = aligned_alloc(64, pose_bytes);
    float *rblm = aligned_alloc(64, model_bytes), *gblm = aligned_alloc(64, model_bytes);
    cr_assert(prev && rbl && gbl && rblm && gblm);
    kiln_pose_identity(prev, ref.soa_count);
    for (size_t i = 0; i < nt; i++) {
        kiln_simd_force(KILN_SIMD_SCALAR);
        player_eval(&ref, times[i]);
        simd_blend(&ref, prev, rbl, rblm);
        for (int pi = 1; pi < np; pi++) {
            kiln_simd_force(paths[pi]);
            player_eval(&got, times[i]);
            const char *pn = kiln_simd_name(paths[pi]);
            simd_blend(&ref, prev, gbl, gblm);
            simd_compare_blend(st, pn, times[i], ref.bone_count, rbl, gbl, rblm, gblm);
            for (uint32_t b = 0; b < ref.bone_count; b++) {
                for (unsigned c = 0; c < 10; c++) {
                    if (c >= 3 && c < 7) continue;
                    double e = simd_err(lane(ref.pose, b, c), lane(got.pose, b, c), &st->pose_abs);
                    st->pose = fmax(st->pose, e);
                    if (e > TOL_SIMD)
                        simd_fail(st, pn, times[i], c < 3 ? "translation of bone" : "scale of bone", b,
                                  lane(ref.pose, b, c), lane(got.pose, b, c));
                }
                double dp = 0, dn = 0, scratch = 0;
                for (unsigned c = 3; c < 7; c++) {
                    dp = fmax(dp, simd_err(lane(ref.pose, b, c), lane(got.pose, b, c), &scratch));
                    dn = fmax(dn, simd_err(lane(ref.pose, b, c), -lane(got.pose, b, c), &scratch));
                }
                double dq = fmin(dp, dn);
                st->pose = fmax(st->pose, dq), st->pose_abs = fmax(st->pose_abs, dq);
                if (dq > TOL_SIMD)
                    simd_fail(st, pn, times[i], "rotation (qw) of bone", b, lane(ref.pose, b, 6), lane(got.pose, b, 6));
                for (unsigned k = 0; k < 16; k++) {
                    double r = ref.model[b * 16 + k], g = got.model[b * 16 + k];
                    double e = simd_err(r, g, &st->model_abs);
                    st->model = fmax(st->model, e);
                    if (e > TOL_SIMD) simd_fail(st, pn, times[i], "model matrix of bone", b, r, g);
                }
            }
            for (uint32_t k = 0; k < ref.scalar_count; k++) {
                double scratch = 0, e = simd_err(ref.scalars[k], got.scalars[k], &scratch);
                st->scalar = fmax(st->scalar, e);
                if (e > TOL_SIMD) simd_fail(st, pn, times[i], "scalar track", k, ref.scalars[k], got.scalars[k]);
            }
        }
        memcpy(prev, ref.pose, sizeof(kiln_soa_xform) * ref.soa_count);
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    free(prev), free(rbl), free(gbl), free(rblm), free(gblm);
    free(times);
    player_free(&ref);
    player_free(&got);
}

/* Bakes a clip lossless and lossy and checks the paths on both (the lossy rows go through the
 * quantised decoders, which differ most between paths). Returns 1 when they agree; 0 also
 * when the inputs are missing (*skipped set). */
static int simd_clip(const char *dir, const clip_case *c, const jr_value *frames, int *skipped)
{
    kiln_simd paths[SIMD_PATH_COUNT];
    int np = simd_paths(paths);
    int ok = 1;
    *skipped = 0;
    for (int lossy = 0; lossy < 2; lossy++) {
        baked bk;
        char why[2200];
        if (!bake_case(dir, c, lossy ? KILN_BAKE_LOSSY_ANIMATION : 0u, &bk, why, sizeof why)) {
            fprintf(stderr, "anim_corpus simd %s: skipped: %s\n", c->name, why);
            *skipped = 1;
            return 0;
        }
        simd_stats st;
        memset(&st, 0, sizeof st);
        simd_check(bk.blob, frames, paths, np, &st, c->name);
        char list[64] = "";
        for (int i = 1; i < np; i++) {
            size_t n = strlen(list);
            snprintf(list + n, sizeof list - n, "%s%s", i > 1 ? "," : "", kiln_simd_name(paths[i]));
        }
        fprintf(stderr,
                "anim_corpus simd %-24s %-8s [%s vs scalar]: local max %.2e (abs %.2e), model max %.2e (abs %.2e), "
                "scalars %.2e, blend-2 %.2e, its model %.2e%s%s\n",
                c->name, lossy ? "lossy" : "lossless", np > 1 ? list : "no SIMD path", st.pose, st.pose_abs, st.model,
                st.model_abs, st.scalar, st.blend, st.blend_model, st.failed ? "  => FAIL: " : "", st.first);
        ok &= st.failed == 0;
        baked_free(&bk);
    }
    return ok;
}

/* simd_clip at the frames of the case's expected file; without one, at the clip's own frames. */
static int simd_case_check(const char *dir, const clip_case *c, int *skipped)
{
    char name[512], why[2200];
    snprintf(name, sizeof name, "expected/%s.json", c->name);
    int missing;
    jr_value *doc = read_json(dir, name, &missing, why, sizeof why);
    int ok = simd_clip(dir, c, doc ? jr_get(doc, "frames") : NULL, skipped);
    jr_free(doc);
    return ok;
}

static int simd_bench_check(const char *dir, const clip_case *c, int *skipped)
{
    return simd_clip(dir, c, NULL, skipped);
}

Test(anim_corpus, simd_paths_agree_on_the_cases)
{
    fail_list fails;
    check_cases(simd_case_check, &fails);
    cr_assert_eq(fails.count, 0, "SIMD paths disagree beyond %g (details on stderr): %s", TOL_SIMD, fails.names);
}

Test(anim_corpus, simd_paths_agree_on_the_bench_clips)
{
    fail_list fails;
    check_bench_clips(simd_bench_check, &fails);
    cr_assert_eq(fails.count, 0, "SIMD paths disagree beyond %g (details on stderr): %s", TOL_SIMD, fails.names);
}

/* ---- lossy within its bound ---------------------------------------------------------------------- */
/* Model-space distance between two matrices' images of the point v (column-major). */
static double point_distance(const float *a, const float *b, const double v[3])
{
    double d2 = 0;
    for (int r = 0; r < 3; r++) {
        double pa = a[12 + r], pb = b[12 + r];
        for (int c = 0; c < 3; c++) pa += a[c * 4 + r] * v[c], pb += b[c * 4 + r] * v[c];
        d2 += (pa - pb) * (pa - pb);
    }
    return sqrt(d2);
}

/* Bakes a clip lossless and lossy and measures, at every integer frame of the clip, for every
 * bone, the distance between the two poses at the bone's origin and at virtual vertices
 * KILN_BAKE_ANIM_DISTANCE_M along its local x, y and z axes (the bake.h contract). Returns 1
 * when within KILN_BAKE_ANIM_ERROR_M + LOSSY_SLACK; 0 also when inputs are missing
 * (*skipped set). */
static int lossy_clip(const char *dir, const clip_case *c, int *skipped)
{
    baked ref, lossy;
    char why[2200];
    *skipped = 0;
    if (!bake_case(dir, c, 0, &ref, why, sizeof why)) {
        fprintf(stderr, "anim_corpus lossy %s: skipped: %s\n", c->name, why);
        *skipped = 1;
        return 0;
    }
    cr_assert_eq(bake_case(dir, c, KILN_BAKE_LOSSY_ANIMATION, &lossy, why, sizeof why), 1, "%s", why);
    player a, b;
    player_init(&a, ref.blob, c->name);
    player_init(&b, lossy.blob, c->name);
    cr_assert_eq(a.bone_count, b.bone_count, "%s: lossy bake has %u bones, lossless %u", c->name, b.bone_count,
                 a.bone_count);
    cr_assert(a.clip->first_frame == b.clip->first_frame && a.clip->last_frame == b.clip->last_frame,
              "%s: lossy clip range differs", c->name);
    const double d = KILN_BAKE_ANIM_DISTANCE_M, bound = KILN_BAKE_ANIM_ERROR_M;
    const double pts[4][3] = {{0, 0, 0}, {d, 0, 0}, {0, d, 0}, {0, 0, d}};
    static const char *const pt_names[4] = {"origin", "+x", "+y", "+z"};
    double max_err = 0, max_frame = 0;
    uint32_t max_bone = 0, max_pt = 0;
    uint64_t over = 0;
    for (int64_t f = a.clip->first_frame; f <= a.clip->last_frame; f++) {
        double t = (double)f / a.clip->framerate;
        player_eval(&a, t);
        player_eval(&b, t);
        for (uint32_t bone = 0; bone < a.bone_count; bone++)
            for (uint32_t k = 0; k < 4; k++) {
                double e = point_distance(&a.model[bone * 16], &b.model[bone * 16], pts[k]);
                if (isnan(e)) e = INFINITY;
                if (e > bound + LOSSY_SLACK) over++;
                if (e > max_err) max_err = e, max_frame = (double)f, max_bone = bone, max_pt = k;
            }
    }
    int is_lossy = (b.clip->flags & KILN_ANIM_LOSSY) != 0;
    fprintf(stderr,
            "anim_corpus lossy %-24s %s: max error %.3e m (bound %.1e + %.0e) at frame %g bone %s %s; recorded "
            "error_bound_m %.2e, stats.anim_max_error_m %.3e; anim bytes %llu -> %llu (%.1f%%)%s\n",
            c->name, is_lossy ? "lossy   " : "LOSSLESS", max_err, bound, LOSSY_SLACK, max_frame,
            bone_name(&a, max_bone), pt_names[max_pt], (double)b.clip->error_bound_m,
            (double)lossy.res.stats.anim_max_error_m, (unsigned long long)ref.res.stats.anim_bytes,
            (unsigned long long)lossy.res.stats.anim_bytes,
            ref.res.stats.anim_bytes ? 100.0 * (double)lossy.res.stats.anim_bytes / (double)ref.res.stats.anim_bytes : 0.0,
            over ? "  => FAIL" : "");
    player_free(&a);
    player_free(&b);
    baked_free(&ref);
    baked_free(&lossy);
    return over == 0;
}

Test(anim_corpus, lossy_bake_stays_within_the_bound_on_the_cases)
{
    fail_list fails;
    check_cases(lossy_clip, &fails);
    cr_assert_eq(fails.count, 0, "lossy error beyond %g m (details on stderr): %s", (double)KILN_BAKE_ANIM_ERROR_M,
                 fails.names);
}

Test(anim_corpus, lossy_bake_stays_within_the_bound_on_the_bench_clips)
{
    fail_list fails;
    check_bench_clips(lossy_clip, &fails);
    cr_assert_eq(fails.count, 0, "lossy error beyond %g m (details on stderr): %s", (double)KILN_BAKE_ANIM_ERROR_M,
                 fails.names);
}

/* ---- the JSON reader the tests rely on ------------------------------------------------------------ */
Test(json_read, reads_documents_and_rejects_bad_input)
{
    static const char doc[] =
        "\xEF\xBB\xBF {\"a\": [1, -2.5e2, true, false, null, \"x\\u00e9\\ud83d\\ude00\\n\"], \"o\": {}, \"a\": 3}";
    char err[128];
    jr_value *v = jr_parse(doc, sizeof doc - 1, err, sizeof err);
    cr_assert_not_null(v, "%s", err);
    cr_assert_eq(jr_len(v), 3);
    cr_assert_str_eq(jr_key(v, 1), "o");
    cr_assert_eq(jr_num(jr_get(v, "a")), 3, "duplicate keys: the last wins");
    const jr_value *a = jr_at(v, 0);
    cr_assert_eq(jr_len(a), 6);
    cr_assert_eq(jr_num(jr_at(a, 1)), -250.0);
    cr_assert_eq(jr_bool(jr_at(a, 2), 0), 1);
    cr_assert(jr_is_null(jr_at(a, 4)));
    cr_assert_str_eq(jr_str(jr_at(a, 5)), "x\xC3\xA9\xF0\x9F\x98\x80\n");
    cr_assert(isnan(jr_num(jr_at(a, 5))) && !jr_str(jr_at(a, 0)) && !jr_get(a, "x") && !jr_at(a, 6));
    cr_assert(isnan(jr_num(jr_get(NULL, "x"))) && jr_len(NULL) == 0);
    jr_free(v);

    static const char *const bad[] = {"", "[", "{\"a\" 1}", "[1,]", "01", "\"\\ud800\"", "[1] x", "\"a\\", "1.",
                                      "-", "\"\\u12\"", "{\"a\":1,}", "tru", "\"\x01\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        cr_assert_null(jr_parse(bad[i], strlen(bad[i]), err, sizeof err), "accepted: %s", bad[i]);
        cr_assert(err[0], "no message for: %s", bad[i]);
    }
    /* every prefix of a document fails cleanly (or parses, for complete values) */
    for (size_t n = 0; n < sizeof doc - 1; n++) jr_free(jr_parse(doc, n, err, sizeof err));
    /* nesting is bounded, not a stack overflow */
    size_t deep = 100000;
    char *brackets = malloc(deep);
    cr_assert_not_null(brackets);
    memset(brackets, '[', deep);
    cr_assert_null(jr_parse(brackets, deep, err, sizeof err));
    free(brackets);
}
