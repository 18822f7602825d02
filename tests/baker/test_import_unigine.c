/* The Unigine .mesh/.anim importer against the shared corpus (corpus/unigine): cases.json and
 * expected/<case>.json are read at run time, so further cases in the same layout are checked
 * without code changes.
 *
 *   - every bad/ file gets exactly the outcome cases.json (MANIFEST.md) names: a reject with
 *     that rule, or a load with that warning; nothing leaks (counting allocator);
 *   - every good case imports with exactly its listed warnings, and its meshes (corners in the
 *     expected order with their attributes, skin per corner), materials and skeleton match the
 *     expected JSON within its tolerances;
 *   - the imported curves, sampled as spec 7.2 says (hold-filled keys, wrap to frame 0, lerp /
 *     shortest-path slerp) on the model's rest pose and composed as spec 4, give the expected
 *     bone model matrices at every listed frame;
 *   - hostile variants (every prefix of a small file, flipped bytes, failed allocations) fail
 *     cleanly, and files written here trip one rule each;
 *   - end to end: `kiln pose --json` on each case's model and clip gives the expected bone
 *     model matrices at every listed frame. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_run.h"
#include "kiln.h"
#include "kiln/bake/bake.h"
#include "unigine/unigine.h"
#include "json_read.h"
#include "test_util.h"

/* ---- corpus access ---------------------------------------------------------------------------- */

static void ug_dir_or_skip(char *dir, size_t cap)
{
    char base[800];
    corpus_dir_or_skip(base, sizeof base);
    snprintf(dir, cap, "%s/unigine", base);
    FILE *f = NULL;
    char probe[2048];
    snprintf(probe, sizeof probe, "%s/cases.json", dir);
    if (!(f = fopen(probe, "rb"))) cr_skip_test("no Unigine corpus at %s: skipping", dir);
    fclose(f);
}

typedef struct rule_log {
    char rules[64][16];
    int  count;
    int  bad_severity; /* a diagnostic that is not a warning with a rule */
} rule_log;

static void rule_log_push(void *user, const kiln_diag *d)
{
    rule_log *log = user;
    if (d->severity != KILN_SEVERITY_WARNING || !d->rule[0] || !d->message[0]) log->bad_severity++;
    if (log->count < 64) memcpy(log->rules[log->count], d->rule, sizeof d->rule);
    log->count++;
}

static int rule_log_has(const rule_log *log, const char *rule)
{
    for (int i = 0; i < log->count && i < 64; i++)
        if (strcmp(log->rules[i], rule) == 0) return 1;
    return 0;
}

typedef struct imported {
    file_bytes        bytes;
    kiln_source_scene scene;
    kiln_diag         err;
    kiln_result       result;
    counting_alloc    ca;
    kiln_allocator    alloc;
} imported;

static void import_bytes(imported *im, rule_log *log, float framerate)
{
    im->ca.fail_at = -1;
    im->alloc = counting_allocator(&im->ca);
    kiln_source_scene_init(&im->scene, &im->alloc);
    kiln_import_options opt;
    memset(&opt, 0, sizeof opt);
    opt.diag.fn = rule_log_push;
    opt.diag.user = log;
    opt.framerate = framerate;
    memset(&im->err, 0, sizeof im->err);
    im->result = kiln__import_unigine(im->bytes.data, im->bytes.size, "test", &opt, &im->scene, &im->err);
}

static void import_file(const char *dir, const char *name, imported *im, rule_log *log)
{
    cr_assert(corpus_read(dir, name, &im->bytes), "cannot read %s/%s", dir, name);
    import_bytes(im, log, 0.0f);
}

/* The bake's numbered reports (V26 is raised where a clip meets its model); its other reports
 * (statistics, empty clips) are not the format's rules. */
static void rule_log_push_numbered(void *user, const kiln_diag *d)
{
    if (d->rule[0]) rule_log_push(user, d);
}

/* Bakes a model file with a clip file, handing every report to `fn`. */
static kiln_result bake_pair(const file_bytes *model, const file_bytes *anim, kiln_diag_fn fn, void *user,
                             kiln_bake_result *res)
{
    kiln_bake_input in[2];
    memset(in, 0, sizeof in);
    in[0].path = "model.mesh", in[0].data = model->data, in[0].size = model->size;
    in[1].path = "clips.anim", in[1].data = anim->data, in[1].size = anim->size;
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.diag.fn = fn;
    o.diag.user = user;
    kiln_diag err;
    kiln_result r = kiln_bake(in, 2, &o, res, &err);
    cr_expect_eq(r, KILN_OK, "bake: %s", err.message);
    return r;
}

static void imported_free(imported *im)
{
    kiln_source_scene_free(&im->scene);
    cr_expect_eq(im->ca.live, 0, "%d block(s) leaked", im->ca.live);
    file_bytes_free(&im->bytes);
}

/* ---- bad files --------------------------------------------------------------------------------- */

Test(import_unigine, bad_files_get_their_manifest_outcome)
{
    char dir[1024];
    ug_dir_or_skip(dir, sizeof dir);
    jr_value *cases = corpus_json(dir, "cases.json");
    const jr_value *bad = jr_get(cases, "bad");
    cr_assert(jr_len(bad) > 0, "cases.json lists no bad files");
    for (size_t i = 0; i < jr_len(bad); i++) {
        const char *file = jr_str(jr_get(jr_at(bad, i), "file"));
        const char *expect = jr_str(jr_get(jr_at(bad, i), "expect"));
        cr_assert(file && expect);
        const char *colon = strchr(expect, ':');
        cr_assert_not_null(colon, "%s: outcome '%s' names no rule", file, expect);
        char rule[16];
        snprintf(rule, sizeof rule, "%s", colon + 1 + strspn(colon + 1, " "));
        imported im;
        rule_log log;
        memset(&im, 0, sizeof im);
        memset(&log, 0, sizeof log);
        import_file(dir, file, &im, &log);
        if (strncmp(expect, "reject", 6) == 0) {
            cr_expect_neq(im.result, KILN_OK, "%s: imported, expected %s", file, expect);
            cr_expect_str_eq(im.err.rule, rule, "%s: rejected by %s (%s), expected %s", file, im.err.rule,
                             im.err.message, rule);
            cr_expect_eq(im.err.code, im.result, "%s: err.code differs from the result", file);
            cr_expect_eq(im.err.severity, KILN_SEVERITY_ERROR, "%s", file);
            cr_expect(strstr(im.err.message, rule) != NULL, "%s: message '%s' does not name %s", file, im.err.message,
                      rule);
            cr_expect(im.err.offset == KILN_NO_OFFSET || im.err.offset <= im.bytes.size, "%s: offset %llu", file,
                      (unsigned long long)im.err.offset);
        } else {
            cr_expect_eq(im.result, KILN_OK, "%s: %s (%s), expected %s", file, kiln_result_name(im.result),
                         im.err.message, expect);
            cr_expect(rule_log_has(&log, rule), "%s: no %s warning", file, rule);
        }
        imported_free(&im);
    }
    jr_free(cases);
}

/* ---- math for the expected values -------------------------------------------------------------- */

typedef struct xf { double t[3], r[4], s[3]; } xf;

/* Column-vector 4x4 in m[row][col]: T * R * S. */
static void trs_matrix(const xf *x, double m[4][4])
{
    double qx = x->r[0], qy = x->r[1], qz = x->r[2], qw = x->r[3];
    double r[3][3] = {
        {1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)},
        {2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)},
        {2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)}};
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) m[i][j] = r[i][j] * x->s[j];
        m[i][3] = x->t[i];
        m[3][i] = 0.0;
    }
    m[3][3] = 1.0;
}

static void mat_mul(const double a[4][4], const double b[4][4], double o[4][4])
{
    double t[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            t[i][j] = 0.0;
            for (int k = 0; k < 4; k++) t[i][j] += a[i][k] * b[k][j];
        }
    memcpy(o, t, sizeof t);
}

/* Model matrices (spec 4): M = M_parent * T * R * S, any bone order (parents resolved by
 * recursion bounded by the bone count: the importer rejected cycles). */
static void model_matrices(const kiln_source_skeleton *sk, const xf *local, double (*out)[4][4])
{
    uint32_t n = sk->bone_count;
    char *done = calloc(n ? n : 1, 1);
    for (uint32_t pass = 0; pass < n; pass++)
        for (uint32_t i = 0; i < n; i++) {
            if (done[i]) continue;
            int32_t p = sk->bones[i].parent;
            if (p >= 0 && !done[p]) continue;
            double m[4][4];
            trs_matrix(&local[i], m);
            if (p >= 0) mat_mul(out[p], m, out[i]);
            else memcpy(out[i], m, sizeof m);
            done[i] = 1;
        }
    free(done);
}

static int bone_index(const kiln_source_skeleton *sk, const char *name)
{
    for (uint32_t i = 0; sk && i < sk->bone_count; i++)
        if (strcmp(sk->bones[i].name, name) == 0) return (int)i;
    return -1;
}

static void expect_vec(const jr_value *v, const double *got, int n, double tol, const char *what)
{
    cr_assert_eq(jr_len(v), (size_t)n, "%s: expected %d values", what, n);
    for (int i = 0; i < n; i++)
        cr_expect(fabs(jr_num(jr_at(v, (size_t)i)) - got[i]) <= tol, "%s[%d]: %.9g, expected %.9g", what, i, got[i],
                  jr_num(jr_at(v, (size_t)i)));
}

static void expect_matrix(const jr_value *rows, const double m[4][4], double tol, const char *what)
{
    cr_assert_eq(jr_len(rows), 4u, "%s: 4 rows expected", what);
    for (int i = 0; i < 4; i++) {
        char w[256];
        snprintf(w, sizeof w, "%s row %d", what, i);
        expect_vec(jr_at(rows, (size_t)i), m[i], 4, tol, w);
    }
}

static void expect_quat(const jr_value *v, const double *q, double tol, const char *what)
{
    double d = 0.0;
    for (int i = 0; i < 4; i++) d += jr_num(jr_at(v, (size_t)i)) * q[i];
    double s = d < 0.0 ? -1.0 : 1.0, flipped[4];
    for (int i = 0; i < 4; i++) flipped[i] = s * q[i];
    expect_vec(v, flipped, 4, tol, what);
}

/* ---- meshes, materials, skeleton ------------------------------------------------------------------ */

static void check_skeleton(const kiln_source_model *m, const jr_value *exp, double tol_m, const char *cs)
{
    const kiln_source_skeleton *sk = m->skeleton;
    uint32_t n = sk ? sk->bone_count : 0;
    cr_assert_eq(n, jr_len(exp), "%s: %u bones, expected %zu", cs, n, jr_len(exp));
    if (!n) return;
    xf *rest = calloc(n, sizeof *rest);
    double (*models)[4][4] = calloc(n, sizeof *models);
    for (uint32_t i = 0; i < n; i++) {
        const kiln_source_bone *b = &sk->bones[i];
        cr_expect_eq(b->segment_scale_compensate, 0u, "%s: bone %u compensates scale", cs, i);
        for (int c = 0; c < 3; c++) rest[i].t[c] = b->local_position[c], rest[i].s[c] = b->scale[c];
        for (int c = 0; c < 4; c++) rest[i].r[c] = b->local_rotation[c];
    }
    model_matrices(sk, rest, models);
    for (uint32_t i = 0; i < n; i++) {
        const jr_value *e = jr_at(exp, i);
        const char *name = jr_str(jr_get(e, "name"));
        cr_assert_not_null(name, "%s: bone %u has no name", cs, i);
        char what[300];
        snprintf(what, sizeof what, "%s: bone %u '%s'", cs, i, name);
        cr_expect_str_eq(sk->bones[i].name, name, "%s: named '%s'", what, sk->bones[i].name);
        cr_expect_eq(sk->bones[i].parent, (int32_t)jr_num(jr_get(e, "parent")), "%s: parent", what);
        expect_vec(jr_get(e, "local_t"), rest[i].t, 3, 1e-5, what);
        expect_quat(jr_get(e, "local_r"), rest[i].r, 1e-5, what);
        expect_vec(jr_get(e, "local_s"), rest[i].s, 3, 1e-5, what);
        expect_matrix(jr_get(e, "model"), models[i], tol_m, what);
    }
    free(rest);
    free(models);
}

static void aabb_of(const float *p, uint32_t n, const uint32_t *idx, double lo[3], double hi[3])
{
    for (int c = 0; c < 3; c++) lo[c] = INFINITY, hi[c] = -INFINITY;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = idx ? idx[i] : i;
        for (int c = 0; c < 3; c++) {
            if (p[v * 3 + c] < lo[c]) lo[c] = p[v * 3 + c];
            if (p[v * 3 + c] > hi[c]) hi[c] = p[v * 3 + c];
        }
    }
}

static void check_mesh(const kiln_source_model *model, uint32_t mi, const jr_value *e, double tol, const char *cs)
{
    const kiln_source_mesh *m = &model->meshes[mi];
    char what[300];
    const char *ename = jr_str(jr_get(e, "name"));
    cr_assert_not_null(ename, "%s: mesh %u has no name", cs, mi);
    snprintf(what, sizeof what, "%s: mesh %u '%.40s'", cs, mi, ename);
    cr_expect_str_eq(m->name, jr_str(jr_get(e, "name")), "%s: name", what);
    cr_assert_lt(m->material, model->material_count, "%s: material index", what);
    cr_expect_str_eq(model->materials[m->material].name, jr_str(jr_get(e, "material")), "%s: material", what);
    cr_expect_eq(m->face_count, (uint32_t)jr_num(jr_get(e, "triangle_count")), "%s: triangles", what);
    cr_expect_eq(m->vertex_count, (uint32_t)jr_num(jr_get(e, "unified_vertex_count")), "%s: unified vertices", what);
    double lo[3], hi[3];
    aabb_of(m->positions, m->face_count * 3u, m->faces, lo, hi);
    expect_vec(jr_at(jr_get(e, "aabb"), 0), lo, 3, tol, what);
    expect_vec(jr_at(jr_get(e, "aabb"), 1), hi, 3, tol, what);

    /* Corners in the expected file's order, with the attributes corner_layout lists. */
    const jr_value *layout = jr_get(e, "corner_layout"), *corners = jr_get(e, "corners");
    int has[5] = {0};
    static const char *const attr[5] = {"position", "normal", "uv0", "uv1", "color"};
    static const int width[5] = {3, 3, 2, 2, 4};
    for (size_t l = 0; l < jr_len(layout); l++)
        for (int a = 0; a < 5; a++)
            if (strcmp(jr_str(jr_at(layout, l)), attr[a]) == 0) has[a] = 1;
    cr_expect_eq(has[1], m->normals != NULL, "%s: normals present", what);
    cr_expect_eq(has[2], m->uv_layer_count > 0 && m->uv[0] != NULL, "%s: uv0 present", what);
    cr_expect_eq(has[3], m->uv_layer_count > 1 && m->uv[1] != NULL, "%s: uv1 present", what);
    cr_expect_eq(has[4], m->color_layer_count > 0, "%s: colours present", what);
    cr_assert_eq(jr_len(corners), (size_t)m->face_count * 3u, "%s: corner count", what);
    const jr_value *skin = jr_get(e, "skin");
    int skinned = jr_bool(jr_get(e, "skinned"), 0);
    cr_expect_eq(skinned, m->max_influence > 0, "%s: skinned", what);
    for (uint32_t k = 0; k < m->face_count * 3u; k++) {
        uint32_t v = m->faces[k];
        cr_assert_lt(v, m->vertex_count);
        double got[16];
        int n = 0;
        for (int c = 0; c < 3; c++) got[n++] = m->positions[v * 3 + c];
        if (has[1] && m->normals) for (int c = 0; c < 3; c++) got[n++] = m->normals[v * 3 + c];
        if (has[2] && m->uv[0]) for (int c = 0; c < 2; c++) got[n++] = m->uv[0][v * 2 + c];
        if (has[3] && m->uv[1]) for (int c = 0; c < 2; c++) got[n++] = m->uv[1][v * 2 + c];
        if (has[4] && m->color[0].rgba8)
            for (int c = 0; c < 4; c++) got[n++] = (double)(m->color[0].rgba8[v] >> (8 * c) & 0xFFu) / 255.0;
        int want = 0;
        for (int a = 0; a < 5; a++) want += has[a] ? width[a] : 0;
        cr_assert_eq(n, want, "%s: corner %u has %d values, layout wants %d", what, k, n, want);
        char cw[340];
        snprintf(cw, sizeof cw, "%s corner %u", what, k);
        expect_vec(jr_at(corners, k), got, n, tol, cw);
        if (!skinned || !m->max_influence) continue;
        /* Skin per corner: heaviest first, zero slots are padding. */
        const jr_value *es = jr_at(skin, k);
        uint32_t used = 0;
        for (uint32_t i = 0; i < m->max_influence; i++) {
            float w = m->weight_values[v * m->max_influence + i];
            if (w == 0.0f) continue;
            const jr_value *pair = jr_at(es, used++);
            cr_assert_not_null(pair, "%s: more influences than expected", cw);
            uint32_t b = m->weight_bones[v * m->max_influence + i];
            cr_assert_lt(b, model->skeleton->bone_count);
            cr_expect_str_eq(model->skeleton->bones[b].name, jr_str(jr_at(pair, 0)), "%s: influence %u bone", cw, used);
            cr_expect(fabs(w - jr_num(jr_at(pair, 1))) <= tol, "%s: influence %u weight %.9g, expected %.9g", cw, used,
                      (double)w, jr_num(jr_at(pair, 1)));
        }
        cr_expect_eq(used, jr_len(es), "%s: %u influences, expected %zu", cw, used, jr_len(es));
    }

    /* Morph targets: the blend shapes of this mesh, in order, with their AABB over the corners. */
    const jr_value *morphs = jr_get(e, "morph_targets");
    uint32_t found = 0;
    for (uint32_t s = 0; s < model->blend_shape_count; s++) {
        const kiln_source_blend_shape *bs = &model->blend_shapes[s];
        if (bs->mesh != mi) continue;
        const jr_value *em = jr_at(morphs, found++);
        cr_assert_not_null(em, "%s: unexpected blend shape '%s'", what, bs->name);
        cr_expect_str_eq(bs->name, jr_str(jr_get(em, "name")), "%s: blend shape name", what);
        aabb_of(bs->targets, bs->pair_count, NULL, lo, hi);
        expect_vec(jr_at(jr_get(em, "aabb"), 0), lo, 3, tol, what);
        expect_vec(jr_at(jr_get(em, "aabb"), 1), hi, 3, tol, what);
    }
    cr_expect_eq(found, jr_len(morphs), "%s: %u blend shapes, expected %zu", what, found, jr_len(morphs));
}

/* ---- clips sampled as spec 7.2 says ------------------------------------------------------------ */

/* Key i's value; a rest key (held at the bind pose before the channel's first stored frame)
 * holds the target model's bind value `rest` (7.1 Rec.). */
static const float *key_value(const kiln_source_curve *c, uint32_t i, unsigned comps, const float *rest)
{
    return c->rest_keys && c->rest_keys[i] ? rest : &c->values[(size_t)i * comps];
}

static double curve_scalar(const kiln_source_curve *c, double f, unsigned comp, const float *rest, double out[4])
{
    unsigned comps = c->channel == KILN_SOURCE_CHANNEL_ROTATION ? 4u : 1u;
    uint32_t i = 0;
    while (i + 1 < c->key_count && c->frames[i + 1] <= f) i++;
    const float *a = key_value(c, i, comps, rest);
    if (i + 1 >= c->key_count || f <= c->frames[i]) {
        for (unsigned q = 0; q < comps; q++) out[q] = a[q];
        return out[comp];
    }
    const float *b = key_value(c, i + 1, comps, rest);
    double t = (f - c->frames[i]) / (double)(c->frames[i + 1] - c->frames[i]);
    if (comps == 1) return out[0] = a[0] + (b[0] - a[0]) * t;
    double d = 0.0, bb[4];
    for (unsigned q = 0; q < 4; q++) d += (double)a[q] * b[q];
    for (unsigned q = 0; q < 4; q++) bb[q] = d < 0.0 ? -b[q] : b[q];
    d = fabs(d);
    double wa = 1.0 - t, wb = t;
    if (d < 0.9995) {
        double th = acos(d), s = sin(th);
        wa = sin((1.0 - t) * th) / s, wb = sin(t * th) / s;
    }
    double len = 0.0;
    for (unsigned q = 0; q < 4; q++) out[q] = wa * a[q] + wb * bb[q], len += out[q] * out[q];
    for (unsigned q = 0; q < 4; q++) out[q] /= sqrt(len);
    return out[comp];
}

static void sample_clip(const kiln_source_skeleton *sk, const kiln_source_animation *an, double frame, xf *local)
{
    uint32_t last = 0;
    for (uint32_t c = 0; c < an->curve_count; c++)
        if (an->curves[c].key_count && an->curves[c].frames[an->curves[c].key_count - 1] > last)
            last = an->curves[c].frames[an->curves[c].key_count - 1];
    double f = last ? fmod(frame, (double)last) : 0.0;
    if (f < 0) f += last;
    for (uint32_t c = 0; c < an->curve_count; c++) {
        const kiln_source_curve *cv = &an->curves[c];
        int b = bone_index(sk, cv->target); /* first match (spec 7.1) */
        if (b < 0) continue;
        double v[4];
        const kiln_source_bone *rb = &sk->bones[b];
        cr_assert_eq(cv->mode, KILN_SOURCE_ABSOLUTE);
        switch (cv->channel) {
        case KILN_SOURCE_CHANNEL_ROTATION:
            curve_scalar(cv, f, 0, rb->local_rotation, v);
            memcpy(local[b].r, v, sizeof v);
            break;
        case KILN_SOURCE_CHANNEL_TX: case KILN_SOURCE_CHANNEL_TY: case KILN_SOURCE_CHANNEL_TZ:
            local[b].t[cv->channel - KILN_SOURCE_CHANNEL_TX] =
                curve_scalar(cv, f, 0, &rb->local_position[cv->channel - KILN_SOURCE_CHANNEL_TX], v);
            break;
        case KILN_SOURCE_CHANNEL_SX: case KILN_SOURCE_CHANNEL_SY: case KILN_SOURCE_CHANNEL_SZ:
            local[b].s[cv->channel - KILN_SOURCE_CHANNEL_SX] =
                curve_scalar(cv, f, 0, &rb->scale[cv->channel - KILN_SOURCE_CHANNEL_SX], v);
            break;
        default:
            cr_assert_fail("unexpected channel %d", cv->channel);
        }
    }
}

static void check_frames(const kiln_source_model *model, const kiln_source_animation *an, const jr_value *exp,
                         double tol, const char *cs)
{
    const kiln_source_skeleton *sk = model->skeleton;
    cr_assert_not_null(sk, "%s: clip without skeleton", cs);
    const jr_value *clip = jr_get(exp, "clip");
    cr_expect(fabs(an->framerate - jr_num(jr_get(clip, "fps"))) < 1e-6, "%s: fps %g", cs, (double)an->framerate);
    cr_expect_eq(an->looping, (uint32_t)jr_bool(jr_get(clip, "looping"), 0), "%s: looping", cs);
    uint32_t n = sk->bone_count;
    xf *local = calloc(n, sizeof *local);
    double (*models)[4][4] = calloc(n, sizeof *models);
    const jr_value *frames = jr_get(exp, "frames");
    cr_assert(jr_len(frames) > 0, "%s: no frames", cs);
    for (size_t fi = 0; fi < jr_len(frames); fi++) {
        const jr_value *fr = jr_at(frames, fi);
        double frame = jr_num(jr_get(fr, "frame"));
        cr_expect(fabs(jr_num(jr_get(fr, "time")) - frame / an->framerate) < 1e-6, "%s: time of frame %g", cs, frame);
        for (uint32_t i = 0; i < n; i++) {
            const kiln_source_bone *b = &sk->bones[i];
            for (int c = 0; c < 3; c++) local[i].t[c] = b->local_position[c], local[i].s[c] = b->scale[c];
            for (int c = 0; c < 4; c++) local[i].r[c] = b->local_rotation[c];
        }
        sample_clip(sk, an, frame, local);
        model_matrices(sk, local, models);
        const jr_value *bones = jr_get(fr, "bones");
        cr_expect_eq(jr_len(bones), n, "%s: frame %g lists %zu bones", cs, frame, jr_len(bones));
        for (size_t bi = 0; bi < jr_len(bones); bi++) {
            int b = bone_index(sk, jr_key(bones, bi));
            cr_assert(b >= 0, "%s: no bone '%s'", cs, jr_key(bones, bi));
            const jr_value *eb = jr_at(bones, bi);
            const jr_value *model_rows = jr_get(eb, "ref_model") ? jr_get(eb, "ref_model") : jr_get(eb, "model");
            char what[300];
            snprintf(what, sizeof what, "%s: frame %g bone '%s'", cs, frame, jr_key(bones, bi));
            expect_matrix(model_rows, models[b], tol, what);
        }
    }
    free(local);
    free(models);
}

static const kiln_source_animation *find_clip(const kiln_source_scene *sc, const char *name)
{
    for (uint32_t i = 0; i < sc->animation_count; i++)
        if (strcmp(sc->animations[i].name, name) == 0) return &sc->animations[i];
    return NULL;
}

static void check_warnings(const rule_log *log, const jr_value *listed, const char *cs)
{
    cr_expect_eq(log->bad_severity, 0, "%s: a diagnostic that is not a warning with a rule", cs);
    for (size_t i = 0; i < jr_len(listed); i++)
        cr_expect(rule_log_has(log, jr_str(jr_at(listed, i))), "%s: no %s warning", cs, jr_str(jr_at(listed, i)));
    for (int i = 0; i < log->count && i < 64; i++) {
        int ok = 0;
        for (size_t j = 0; j < jr_len(listed); j++) ok |= strcmp(log->rules[i], jr_str(jr_at(listed, j))) == 0;
        cr_expect(ok, "%s: unlisted warning %s", cs, log->rules[i]);
    }
}

Test(import_unigine, good_cases_match_the_expected_json)
{
    char dir[1024];
    ug_dir_or_skip(dir, sizeof dir);
    jr_value *cases = corpus_json(dir, "cases.json");
    const jr_value *list = jr_get(cases, "cases");
    cr_assert(jr_len(list) > 0, "cases.json lists no cases");
    for (size_t ci = 0; ci < jr_len(list); ci++) {
        const jr_value *c = jr_at(list, ci);
        const char *cs = jr_str(jr_get(c, "case"));
        const char *model = jr_str(jr_get(c, "model"));
        const char *anim = jr_str(jr_get(c, "anim"));
        const char *clip = jr_str(jr_get(c, "clip"));
        char name[512];
        snprintf(name, sizeof name, "expected/%s.json", cs);
        jr_value *exp = corpus_json(dir, name);
        cr_assert_not_null(exp, "%s: no %s", cs, name);
        double tol_p = jr_num_or(jr_get(jr_get(exp, "tolerance"), "position"), 1e-5);
        double tol_m = jr_num_or(jr_get(jr_get(exp, "tolerance"), "matrix"), 1e-4);

        imported im, ia;
        rule_log log;
        memset(&im, 0, sizeof im);
        memset(&ia, 0, sizeof ia);
        memset(&log, 0, sizeof log);
        import_file(dir, model, &im, &log);
        cr_assert_eq(im.result, KILN_OK, "%s: %s: %s", cs, model, im.err.message);
        const kiln_source_scene *asc = &im.scene;
        if (anim && strcmp(anim, model) != 0) {
            import_file(dir, anim, &ia, &log);
            cr_assert_eq(ia.result, KILN_OK, "%s: %s: %s", cs, anim, ia.err.message);
            cr_expect_eq(ia.scene.model_count, 0u, "%s: an .anim gives no model", cs);
            asc = &ia.scene;
            kiln_bake_result res;
            if (bake_pair(&im.bytes, &ia.bytes, rule_log_push_numbered, &log, &res) == KILN_OK) kiln_bake_result_free(&res);
        }
        check_warnings(&log, jr_get(c, "warnings"), cs);
        cr_assert_eq(im.scene.model_count, 1u, "%s: one model", cs);
        const kiln_source_model *m = &im.scene.models[0];
        cr_expect_eq(im.scene.metadata.up_axis, KILN_SOURCE_UP_Z, "%s: up axis", cs);

        const jr_value *meshes = jr_get(exp, "meshes");
        cr_assert_eq(m->mesh_count, jr_len(meshes), "%s: %u meshes, expected %zu", cs, m->mesh_count, jr_len(meshes));
        for (uint32_t i = 0; i < m->mesh_count; i++) check_mesh(m, i, jr_at(meshes, i), tol_p, cs);
        const jr_value *mats = jr_get(exp, "materials");
        cr_assert_eq(m->material_count, jr_len(mats), "%s: %u materials, expected %zu", cs, m->material_count,
                     jr_len(mats));
        for (uint32_t i = 0; i < m->material_count; i++) {
            cr_expect_str_eq(m->materials[i].name, jr_str(jr_get(jr_at(mats, i), "name")), "%s: material %u", cs, i);
            cr_expect_eq(m->materials[i].slot_count, jr_len(jr_get(jr_at(mats, i), "textures")), "%s", cs);
        }
        check_skeleton(m, jr_get(exp, "skeleton"), tol_m, cs);
        if (clip) {
            const kiln_source_animation *an = find_clip(asc, clip);
            cr_assert_not_null(an, "%s: no clip '%s'", cs, clip);
            check_frames(m, an, exp, tol_m, cs);
        } else {
            cr_expect_eq(jr_len(jr_get(exp, "frames")), 0u, "%s: frames without a clip", cs);
        }
        imported_free(&im);
        if (ia.bytes.data) imported_free(&ia);
        jr_free(exp);
    }
    jr_free(cases);
}

/* ---- hostile and edge input ---------------------------------------------------------------------- */

static const char *const small_files[] = {"box_static.mesh", "clips.anim", "quirks.mesh", "skinned_embedded.mesh",
                                          "surface_magic.mesh", "skinned_bind.mesh"};

/* KILN_TEST_QUICK=1 (scripts/valgrind.sh): the byte sweeps keep the first two files. */
static size_t sweep_count(void)
{
    const char *q = getenv("KILN_TEST_QUICK");
    int quick = q && q[0] && strcmp(q, "0") != 0;
    return quick ? 2u : sizeof small_files / sizeof *small_files;
}

/* Every prefix of a good file is rejected (V1 when too short for the identifier, else V3 or V5:
 * a cut field or an array that no longer fits), never crashes and leaks nothing. */
Test(import_unigine, every_prefix_is_rejected_as_truncated)
{
    char dir[1024];
    ug_dir_or_skip(dir, sizeof dir);
    for (size_t fi = 0; fi < sweep_count(); fi++) {
        file_bytes whole;
        cr_assert(corpus_read(dir, small_files[fi], &whole), "%s", small_files[fi]);
        /* quirks.mesh has trailing bytes: its prefixes that keep the final identifier load. */
        size_t end = whole.size;
        while (end >= 4 && memcmp(whole.data + end - 4, whole.data, 4) != 0) end--;
        for (size_t n = 0; n < end; n++) {
            imported im;
            rule_log log;
            memset(&im, 0, sizeof im);
            memset(&log, 0, sizeof log);
            im.bytes.data = malloc(n ? n : 1);
            im.bytes.size = n;
            memcpy(im.bytes.data, whole.data, n);
            import_bytes(&im, &log, 0.0f);
            cr_assert_neq(im.result, KILN_OK, "%s: prefix of %zu bytes imported", small_files[fi], n);
            const char *want = n < 4 ? "V1" : NULL;
            if (want) cr_expect_str_eq(im.err.rule, want, "%s[:%zu]", small_files[fi], n);
            else
                cr_expect(strcmp(im.err.rule, "V3") == 0 || strcmp(im.err.rule, "V5") == 0,
                          "%s: prefix of %zu bytes: %s (%s)", small_files[fi], n, im.err.rule, im.err.message);
            cr_expect(im.err.offset <= n, "%s[:%zu]: offset %llu", small_files[fi], n,
                      (unsigned long long)im.err.offset);
            imported_free(&im);
        }
        file_bytes_free(&whole);
    }
}

/* Every byte of a small file flipped in turn: the import succeeds or fails with a rule and a
 * message, and frees everything either way. */
Test(import_unigine, flipped_bytes_fail_cleanly)
{
    char dir[1024];
    ug_dir_or_skip(dir, sizeof dir);
    for (size_t fi = 0; fi < sweep_count(); fi++) {
        file_bytes whole;
        cr_assert(corpus_read(dir, small_files[fi], &whole));
        for (size_t at = 0; at < whole.size; at++) {
            static const uint8_t masks[] = {0xFF, 0x80};
            for (size_t mk = 0; mk < 2; mk++) {
                imported im;
                rule_log log;
                memset(&im, 0, sizeof im);
                memset(&log, 0, sizeof log);
                im.bytes.data = malloc(whole.size);
                im.bytes.size = whole.size;
                memcpy(im.bytes.data, whole.data, whole.size);
                im.bytes.data[at] ^= masks[mk];
                import_bytes(&im, &log, 0.0f);
                if (im.result != KILN_OK) {
                    cr_expect(im.err.rule[0] == 'V' && im.err.message[0], "%s byte %zu: %s without a rule",
                              small_files[fi], at, kiln_result_name(im.result));
                    cr_expect(im.err.offset <= whole.size, "%s byte %zu", small_files[fi], at);
                }
                cr_expect_eq(log.bad_severity, 0, "%s byte %zu: a diagnostic without a rule", small_files[fi], at);
                imported_free(&im);
            }
        }
        file_bytes_free(&whole);
    }
}

/* Out of memory at every allocation in turn: ERR_OUT_OF_MEMORY, nothing leaked. */
Test(import_unigine, allocation_failures_leak_nothing)
{
    char dir[1024];
    ug_dir_or_skip(dir, sizeof dir);
    static const char *const files[] = {"skinned_embedded.mesh", "clips.anim"};
    for (size_t fi = 0; fi < 2; fi++) {
        int total = -1;
        for (int fail = 0; total < 0 || fail < total; fail++) {
            imported im;
            rule_log log;
            memset(&im, 0, sizeof im);
            memset(&log, 0, sizeof log);
            cr_assert(corpus_read(dir, files[fi], &im.bytes));
            im.ca.fail_at = total < 0 ? 1 << 30 : fail; /* first run: count the allocations */
            im.alloc = counting_allocator(&im.ca);
            kiln_source_scene_init(&im.scene, &im.alloc);
            kiln_import_options opt;
            memset(&opt, 0, sizeof opt);
            im.result = kiln__import_unigine(im.bytes.data, im.bytes.size, files[fi], &opt, &im.scene, &im.err);
            if (total < 0) {
                cr_assert_eq(im.result, KILN_OK);
                total = im.ca.calls;
                fail = -1;
                cr_assert(total > 0);
            } else {
                cr_expect_eq(im.result, KILN_ERR_OUT_OF_MEMORY, "%s: allocation %d of %d failed: %s", files[fi], fail,
                             total, kiln_result_name(im.result));
            }
            imported_free(&im);
        }
    }
}

Test(import_unigine, framerate_option_sets_the_clip_rate)
{
    char dir[1024];
    ug_dir_or_skip(dir, sizeof dir);
    static const float rates[] = {0.0f, 24.0f, -5.0f};
    static const float want[] = {30.0f, 24.0f, 30.0f};
    for (int i = 0; i < 3; i++) {
        imported im;
        rule_log log;
        memset(&im, 0, sizeof im);
        memset(&log, 0, sizeof log);
        cr_assert(corpus_read(dir, "clips.anim", &im.bytes));
        import_bytes(&im, &log, rates[i]);
        cr_assert_eq(im.result, KILN_OK, "%s", im.err.message);
        cr_assert_eq(im.scene.animation_count, 3u);
        cr_expect_str_eq(im.scene.format, "unigine-anim");
        for (uint32_t a = 0; a < im.scene.animation_count; a++) {
            cr_expect_eq(im.scene.animations[a].framerate, want[i], "option %g: clip %u runs at %g", (double)rates[i], a,
                         (double)im.scene.animations[a].framerate);
            cr_expect_eq(im.scene.animations[a].looping, 1u);
        }
        imported_free(&im);
    }
}

Test(import_unigine, detects_by_identifier_family)
{
    cr_expect(kiln__detect_unigine_mesh("ms10....", 8));
    cr_expect(kiln__detect_unigine_mesh("ms11", 4), "a later version is still claimed (rejected with V2)");
    cr_expect(kiln__detect_unigine_mesh("sk10", 4));
    cr_expect(!kiln__detect_unigine_mesh("an10", 4));
    cr_expect(kiln__detect_unigine_anim("an10", 4));
    cr_expect(!kiln__detect_unigine_anim("ms10", 4));
    cr_expect(!kiln__detect_unigine("MESH", 4));
    cr_expect(!kiln__detect_unigine("ms1", 3));
    cr_expect(!kiln__detect_unigine("msAB", 4));
    cr_expect(!kiln__detect_unigine("\x8b\x9c\x2e\x00", 4)); /* not a Cast file */
    cr_expect_str_eq(kiln__importer_unigine_mesh.name, "unigine-mesh");
    cr_expect_str_eq(kiln__importer_unigine_anim.name, "unigine-anim");
    cr_expect(kiln__importer_unigine_mesh.import == kiln__import_unigine);
}

/* Extras: kiln inspect lists what the runtime does not use (spec 8). */
Test(import_unigine, extras_report_what_is_left_out)
{
    char dir[1024];
    ug_dir_or_skip(dir, sizeof dir);
    imported im;
    rule_log log;
    memset(&im, 0, sizeof im);
    memset(&log, 0, sizeof log);
    import_file(dir, "skinned_embedded.mesh", &im, &log);
    cr_assert_eq(im.result, KILN_OK);
    int bounds = 0, signs = 0, surfaces = 0, morph_tangents = 0;
    for (uint32_t i = 0; i < im.scene.extra_count; i++) {
        const kiln_source_extra *x = &im.scene.extras[i];
        cr_expect(x->loc.path && x->loc.offset < im.bytes.size, "extra %u has no place", i);
        bounds += strcmp(x->kind, "bounds") == 0 || strcmp(x->kind, "surface-bounds") == 0;
        signs += strcmp(x->kind, "tangent-signs") == 0;
        surfaces += strcmp(x->kind, "surface") == 0;
        morph_tangents += strcmp(x->kind, "morph-tangents") == 0;
    }
    cr_expect_eq(bounds, 3, "the mesh and its two surfaces have bounds");
    cr_expect_eq(surfaces, 2);
    cr_expect_eq(signs, 2, "both surfaces store tangent records");
    cr_expect(morph_tangents <= 1);
    imported_free(&im);
}

/* ---- files written here: hand-computed expectations ---------------------------------------------- */

typedef struct ub {
    uint8_t *p;
    size_t   n, cap;
} ub;

static void ub_put(ub *b, const void *v, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        cr_assert_not_null(b->p);
    }
    memcpy(b->p + b->n, v, n);
    b->n += n;
}
static void ub_u8(ub *b, uint8_t v) { ub_put(b, &v, 1); }
static void ub_i16(ub *b, int16_t v) { uint8_t x[2] = {(uint8_t)v, (uint8_t)((uint16_t)v >> 8)}; ub_put(b, x, 2); }
static void ub_i32(ub *b, int32_t v)
{
    uint32_t u = (uint32_t)v;
    uint8_t x[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    ub_put(b, x, 4);
}
static void ub_f32(ub *b, float v) { uint32_t u; memcpy(&u, &v, 4); ub_i32(b, (int32_t)u); }
static void ub_f32s(ub *b, int n, const float *v) { for (int i = 0; i < n; i++) ub_f32(b, v[i]); }
static void ub_str(ub *b, const char *s, size_t len) /* len bytes of s, then a NUL */
{
    ub_i32(b, (int32_t)len + 1);
    ub_put(b, s, len);
    ub_u8(b, 0);
}
static void ub_cstr(ub *b, const char *s) { ub_str(b, s, strlen(s)); }
static void ub_zeros(ub *b, int n) { for (int i = 0; i < n; i++) ub_u8(b, 0); }

/* What to change in the small mesh below, one fault (or variant) at a time. */
typedef enum knob {
    K_NONE, K_UV_NAN, K_BIND_NAN, K_FRAME_T_NAN, K_MORPH_COUNT, K_WEIGHT_COUNT, K_TRI_INDEX, K_WEIGHT_BONE,
    K_ANIM_DUP_BONE, K_FINAL_MAGIC, K_NAME_NUL, K_NAME_UTF8, K_STRING_ZERO, K_EMPTY_CLIP_HUGE_N, K_COLOUR_COUNT,
    K_ANIM_VERSION
} knob;

/* Two bones (root, child of root), one clip "a" (k = 2, mask T|R|S, N = 2), one surface "s"
 * with morph targets "base" and "m1": 4 coordinate vertices, T = 4 (tangents, uv0, colours),
 * weights, and corners whose triangle indices differ from the coordinate ones:
 *   ci = 0 1 2 | 0 2 3 | 1 1 2      ti = 0 1 2 | 3 2 1 | 0 0 0
 * -> pairs (0,0) (1,1) (2,2) | (0,3) (2,2) (3,1) and a degenerate third triangle (V22). */
static ub small_mesh(knob k)
{
    ub b = {0};
    ub_put(&b, k == K_ANIM_VERSION ? "an20" : "ms10", 4);
    ub_zeros(&b, 40);
    ub_i32(&b, 2);
    if (k == K_NAME_NUL) ub_str(&b, "ro\0ot", 5);
    else if (k == K_NAME_UTF8) ub_str(&b, "r\xC3(t", 4);
    else if (k == K_STRING_ZERO) ub_i32(&b, 0);
    else ub_cstr(&b, "root");
    ub_i16(&b, -1);
    ub_cstr(&b, "child");
    ub_i16(&b, 0);
    ub_i32(&b, 2);
    ub_cstr(&b, "a");
    ub_cstr(&b, "empty");
    ub_i32(&b, 1);
    ub_cstr(&b, "s");
    ub_zeros(&b, 40);
    ub_i32(&b, 2);
    ub_cstr(&b, "base");
    ub_cstr(&b, "m1");
    ub_put(&b, "ms10", 4);
    /* bind: root at origin; child at (0, 0, 1) rotated 90 degrees about z, scale 2 */
    const float root[10] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1};
    const float child[10] = {0, 0, k == K_BIND_NAN ? NAN : 1.0f, 0, 0, 0.70710678f, 0.70710678f, 2, 2, 2};
    ub_f32s(&b, 10, root);
    ub_f32s(&b, 10, child);
    /* clip "a": frame 0 root T|R|S, child nothing; frame 1 root R, child T */
    ub_i32(&b, 2);
    ub_i16(&b, 0);
    ub_i16(&b, k == K_ANIM_DUP_BONE ? 0 : 1);
    ub_u8(&b, 7);
    ub_i32(&b, 2);
    ub_u8(&b, 7);
    const float t0[3] = {1, 2, k == K_FRAME_T_NAN ? INFINITY : 3.0f}, s0[3] = {1, 1, 4}, t1[3] = {5, 6, 7};
    ub_f32s(&b, 3, t0);
    ub_i16(&b, 0), ub_i16(&b, 0), ub_i16(&b, 0), ub_i16(&b, 32767);
    ub_f32s(&b, 3, s0);
    ub_u8(&b, 0);
    ub_u8(&b, 2);
    ub_i16(&b, 32767), ub_i16(&b, 0), ub_i16(&b, 0), ub_i16(&b, 0);
    ub_u8(&b, 1);
    ub_f32s(&b, 3, t1);
    /* clip "empty": no bones, a huge frame count is still N x 0 bytes */
    ub_i32(&b, 0);
    ub_u8(&b, 1);
    ub_i32(&b, k == K_EMPTY_CLIP_HUGE_N ? 0x7FFFFFFF : 0);
    /* surface "s", target "base" */
    ub_i32(&b, 4);
    const float pos[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    ub_f32s(&b, 12, pos);
    ub_i32(&b, 4);
    for (int t = 0; t < 4; t++) { /* normals +z, +x, -z (zero vector for t = 3: V20), signs + - + - */
        static const uint16_t n[4][3] = {{32767, 32767, 65535}, {65535, 32767, 32767}, {32767, 32767, 0}, {32767, 32767, 32767}};
        for (int c = 0; c < 3; c++) ub_i16(&b, (int16_t)n[t][c]);
        ub_u8(&b, t % 2 ? 0x80 : 0x01);
    }
    /* target "m1": every vertex raised by 1 */
    ub_i32(&b, k == K_MORPH_COUNT ? 3 : 4);
    const float up[12] = {0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1};
    ub_f32s(&b, k == K_MORPH_COUNT ? 9 : 12, up);
    ub_i32(&b, 0);
    /* weights: v0 root; v1 root 1/4 + child 3/4; v2 child twice (adds up) + a zero slot; v3 child */
    ub_i32(&b, k == K_WEIGHT_COUNT ? 3 : 4);
    ub_u8(&b, 1), ub_i16(&b, 0), ub_i16(&b, (int16_t)65535);
    ub_u8(&b, 2), ub_i16(&b, 0), ub_i16(&b, 1000), ub_i16(&b, 1), ub_i16(&b, 3000);
    ub_u8(&b, 3), ub_i16(&b, 1), ub_i16(&b, 7), ub_i16(&b, 0), ub_i16(&b, 0), ub_i16(&b, 1), ub_i16(&b, 7);
    if (k != K_WEIGHT_COUNT) ub_u8(&b, 1), ub_i16(&b, k == K_WEIGHT_BONE ? 2 : 1), ub_i16(&b, 9);
    /* uv0 = (t, -t), no uv1, colours (t, 2t, 3t, 255) */
    ub_i32(&b, 4);
    for (int t = 0; t < 4; t++) ub_f32(&b, (float)t), ub_f32(&b, k == K_UV_NAN && t == 2 ? NAN : (float)-t);
    ub_i32(&b, 0);
    ub_i32(&b, k == K_COLOUR_COUNT ? 3 : 4);
    for (int t = 0; t < (k == K_COLOUR_COUNT ? 3 : 4); t++)
        ub_u8(&b, (uint8_t)t), ub_u8(&b, (uint8_t)(2 * t)), ub_u8(&b, (uint8_t)(3 * t)), ub_u8(&b, 255);
    static const uint8_t ci[9] = {0, 1, 2, 0, 2, 3, 1, 1, 2}, ti[9] = {0, 1, 2, 3, 2, 1, 0, 0, 0};
    ub_i32(&b, 9);
    ub_put(&b, ci, 9);
    ub_i32(&b, 9);
    ub_put(&b, ti, 9);
    if (k == K_TRI_INDEX) b.p[b.n - 1] = 4;
    ub_put(&b, k == K_FINAL_MAGIC ? "ms01" : "ms10", 4);
    return b;
}

static void import_ub(ub *b, imported *im, rule_log *log)
{
    memset(im, 0, sizeof *im);
    memset(log, 0, sizeof *log);
    im->bytes.data = b->p;
    im->bytes.size = b->n;
    b->p = NULL;
    import_bytes(im, log, 0.0f);
}

Test(import_unigine, written_mesh_flattens_dual_indices_and_decodes_every_attribute)
{
    ub b = small_mesh(K_NONE);
    imported im;
    rule_log log;
    import_ub(&b, &im, &log);
    cr_assert_eq(im.result, KILN_OK, "%s", im.err.message);
    cr_expect(rule_log_has(&log, "V22") && rule_log_has(&log, "V20"), "degenerate triangle and zero normal warned");
    cr_expect_eq(log.count, 2, "%d warnings", log.count);
    const kiln_source_model *m = &im.scene.models[0];
    cr_assert_eq(m->mesh_count, 1u);
    const kiln_source_mesh *me = &m->meshes[0];
    /* first appearance of (c, t): (0,0) (1,1) (2,2) (0,3) (3,1) */
    static const uint32_t vc[5] = {0, 1, 2, 0, 3}, vt[5] = {0, 1, 2, 3, 1}, faces[6] = {0, 1, 2, 3, 2, 4};
    cr_assert_eq(me->vertex_count, 5u);
    cr_assert_eq(me->face_count, 2u);
    for (int i = 0; i < 6; i++) cr_expect_eq(me->faces[i], faces[i], "corner %d", i);
    static const float pos[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
    /* decoded normals: u = 32767 -> -1.5259e-5 (renormalised away), 65535 -> 1, 0 -> -1; t = 3 is (0,0,1) by V20 */
    static const float nrm[4][3] = {{0, 0, 1}, {1, 0, 0}, {0, 0, -1}, {0, 0, 1}};
    for (int v = 0; v < 5; v++) {
        for (int c = 0; c < 3; c++) {
            cr_expect_eq(me->positions[v * 3 + c], pos[vc[v]][c], "vertex %d position", v);
            cr_expect(fabsf(me->normals[v * 3 + c] - nrm[vt[v]][c]) < 1e-4f, "vertex %d normal %d: %g", v, c,
                      (double)me->normals[v * 3 + c]);
        }
        cr_expect_eq(me->tangent_signs[v], vt[v] % 2 ? -1.0f : 1.0f, "vertex %d sign", v);
        cr_expect_eq(me->uv[0][v * 2], (float)vt[v]);
        cr_expect_eq(me->uv[0][v * 2 + 1], -(float)vt[v]);
        cr_expect_eq(me->color[0].rgba8[v], vt[v] | (2u * vt[v]) << 8 | (3u * vt[v]) << 16 | 255u << 24);
    }
    cr_expect_eq(me->uv_layer_count, 1u, "no uv1");
    cr_expect_eq(me->color_layer_count, 1u);
    /* skin: v0 root 1; v1 child .75 root .25; v2 child 1 (7 + 7, zero slot dropped); v3 child 1 */
    cr_assert_eq(me->max_influence, 2u);
    static const uint32_t wb[4][2] = {{0, 0}, {1, 0}, {1, 0}, {1, 0}};
    static const float wv[4][2] = {{1, 0}, {0.75f, 0.25f}, {1, 0}, {1, 0}};
    for (int v = 0; v < 5; v++)
        for (int s = 0; s < 2; s++) {
            if (wv[vc[v]][s] == 0) continue;
            cr_expect_eq(me->weight_bones[v * 2 + s], wb[vc[v]][s], "vertex %d slot %d", v, s);
            cr_expect(fabsf(me->weight_values[v * 2 + s] - wv[vc[v]][s]) < 1e-7f, "vertex %d slot %d", v, s);
        }
    cr_assert_eq(m->blend_shape_count, 1u);
    cr_expect_str_eq(m->blend_shapes[0].name, "m1");
    cr_expect_eq(m->blend_shapes[0].pair_count, 5u);
    for (int v = 0; v < 5; v++) cr_expect_eq(m->blend_shapes[0].targets[v * 3 + 2], 1.0f);
    cr_expect_eq(m->material_count, 1u);
    cr_expect_str_eq(m->materials[0].name, "s");
    imported_free(&im);
}

static const kiln_source_curve *curve_of(const kiln_source_animation *an, const char *bone, kiln_source_channel ch)
{
    for (uint32_t i = 0; i < an->curve_count; i++)
        if (strcmp(an->curves[i].target, bone) == 0 && an->curves[i].channel == ch) return &an->curves[i];
    return NULL;
}

Test(import_unigine, written_clip_holds_values_and_wraps_to_frame_zero)
{
    ub b = small_mesh(K_NONE);
    imported im;
    rule_log log;
    import_ub(&b, &im, &log);
    cr_assert_eq(im.result, KILN_OK, "%s", im.err.message);
    cr_assert_eq(im.scene.animation_count, 2u);
    const kiln_source_animation *a = &im.scene.animations[0], *e = &im.scene.animations[1];
    cr_expect_str_eq(a->name, "a");
    cr_expect_eq(e->curve_count, 0u, "a clip without bones is the rest pose");
    /* root: every channel stored at frame 0; rotation also at frame 1 -> keys 0, 1, 2 (= 0) */
    const kiln_source_curve *rq = curve_of(a, "root", KILN_SOURCE_CHANNEL_ROTATION);
    cr_assert_not_null(rq);
    cr_assert_eq(rq->key_count, 3u);
    static const float q[3][4] = {{0, 0, 0, 1}, {1, 0, 0, 0}, {0, 0, 0, 1}};
    for (int k = 0; k < 3; k++) {
        cr_expect_eq(rq->frames[k], (uint32_t)k);
        for (int c = 0; c < 4; c++) cr_expect_eq(rq->values[k * 4 + c], q[k][c], "key %d comp %d", k, c);
    }
    /* root tz: 3 at frame 0, held at frame 1, back to frame 0 at 2: constant -> keys 0 and 2 */
    const kiln_source_curve *tz = curve_of(a, "root", KILN_SOURCE_CHANNEL_TZ);
    cr_assert_not_null(tz);
    cr_assert_eq(tz->key_count, 2u);
    cr_expect(tz->frames[0] == 0 && tz->frames[1] == 2 && tz->values[0] == 3.0f && tz->values[1] == 3.0f);
    const kiln_source_curve *sz = curve_of(a, "root", KILN_SOURCE_CHANNEL_SZ);
    cr_assert_not_null(sz);
    cr_expect(sz->values[0] == 4.0f);
    /* child tx: bind 0 before its first record at frame 1 (6), then 5, then frame 0 again */
    const kiln_source_curve *tx = curve_of(a, "child", KILN_SOURCE_CHANNEL_TX);
    cr_assert_not_null(tx);
    cr_assert_eq(tx->key_count, 3u);
    cr_expect(tx->values[0] == 0.0f && tx->values[1] == 5.0f && tx->values[2] == 0.0f);
    const kiln_source_curve *ctz = curve_of(a, "child", KILN_SOURCE_CHANNEL_TZ);
    cr_expect(ctz && ctz->values[0] == 1.0f && ctz->values[1] == 7.0f && ctz->values[2] == 1.0f);
    /* channels in the mask that no record stores: no curve, the model's rest holds */
    cr_expect_null(curve_of(a, "child", KILN_SOURCE_CHANNEL_ROTATION));
    cr_expect_null(curve_of(a, "child", KILN_SOURCE_CHANNEL_SX));
    for (uint32_t i = 0; i < a->curve_count; i++) cr_expect_eq(a->curves[i].mode, KILN_SOURCE_ABSOLUTE);
    imported_free(&im);
}

Test(import_unigine, written_faults_trip_their_rules)
{
    static const struct { knob k; const char *rule; int reject; } cases[] = {
        {K_UV_NAN, "V9", 1},        {K_BIND_NAN, "V9", 1},     {K_FRAME_T_NAN, "V9", 1}, {K_MORPH_COUNT, "V13", 1},
        {K_WEIGHT_COUNT, "V13", 1}, {K_COLOUR_COUNT, "V13", 1}, {K_TRI_INDEX, "V15", 1},  {K_WEIGHT_BONE, "V16", 1},
        {K_ANIM_DUP_BONE, "V11", 1}, {K_FINAL_MAGIC, "V7", 1},  {K_STRING_ZERO, "V6", 1}, {K_ANIM_VERSION, "V2", 1},
        {K_NAME_NUL, "V23", 0},     {K_NAME_UTF8, "V23", 0},    {K_EMPTY_CLIP_HUGE_N, "V22", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ub b = small_mesh(cases[i].k);
        imported im;
        rule_log log;
        import_ub(&b, &im, &log);
        if (cases[i].reject) {
            cr_expect_neq(im.result, KILN_OK, "knob %d imported", cases[i].k);
            cr_expect_str_eq(im.err.rule, cases[i].rule, "knob %d: %s (%s)", cases[i].k, im.err.rule, im.err.message);
        } else {
            cr_expect_eq(im.result, KILN_OK, "knob %d: %s", cases[i].k, im.err.message);
            cr_expect(rule_log_has(&log, cases[i].rule), "knob %d: no %s", cases[i].k, cases[i].rule);
        }
        if (cases[i].k == K_NAME_NUL && im.result == KILN_OK)
            cr_expect_str_eq(im.scene.models[0].skeleton->bones[0].name, "ro", "cut at the NUL");
        if (cases[i].k == K_NAME_UTF8 && im.result == KILN_OK)
            cr_expect_str_eq(im.scene.models[0].skeleton->bones[0].name, "r\xEF\xBF\xBD(t", "U+FFFD");
        imported_free(&im);
    }
}

/* ---- end to end: `kiln pose --json` on the corpus files ------------------------------------------ */

/* For every case with a clip: the tool imports the files by their identifiers, bakes them and
 * samples the clip at every frame the expected JSON lists (integer and fractional, the wrap
 * segment included); every bone's model matrix (pose JSON: column-major) must match the
 * expected one (row-major) within the case's matrix tolerance. */
Test(import_unigine, kiln_pose_matches_the_expected_frames)
{
    char dir[1024];
    ug_dir_or_skip(dir, sizeof dir);
    jr_value *cases = corpus_json(dir, "cases.json");
    const jr_value *list = jr_get(cases, "cases");
    int ran = 0;
    for (size_t ci = 0; ci < jr_len(list); ci++) {
        const jr_value *c = jr_at(list, ci);
        const char *cs = jr_str(jr_get(c, "case")), *clip = jr_str(jr_get(c, "clip"));
        const char *model = jr_str(jr_get(c, "model")), *anim = jr_str(jr_get(c, "anim"));
        if (!clip) continue;
        char name[512];
        snprintf(name, sizeof name, "expected/%s.json", cs);
        jr_value *exp = corpus_json(dir, name);
        cr_assert_not_null(exp, "%s: no %s", cs, name);
        double tol = jr_num_or(jr_get(jr_get(exp, "tolerance"), "matrix"), 1e-4);
        const jr_value *frames = jr_get(exp, "frames");
        char list_arg[4096] = "";
        size_t used = 0;
        for (size_t f = 0; f < jr_len(frames); f++) {
            int w = snprintf(list_arg + used, sizeof list_arg - used, "%s%.17g", f ? "," : "",
                             jr_num(jr_get(jr_at(frames, f), "frame")));
            cr_assert(w > 0 && (size_t)w < sizeof list_arg - used, "%s: frame list too long", cs);
            used += (size_t)w;
        }
        char model_path[1200], anim_path[1200];
        snprintf(model_path, sizeof model_path, "%s/%s", dir, model);
        snprintf(anim_path, sizeof anim_path, "%s/%s", dir, anim ? anim : model);
        int separate = anim && strcmp(anim, model) != 0;
        const char *args[] = {"pose", "--json", model_path, separate ? anim_path : "--clip",
                              separate ? "--clip" : clip, separate ? clip : "--frames",
                              separate ? "--frames" : list_arg, separate ? list_arg : NULL, NULL};
        cli_result r = cli_run(args);
        cr_assert_eq(r.status, 0, "%s: kiln pose exited %d: %s", cs, r.status, r.err);
        char err[160];
        jr_value *doc = jr_parse(r.out, strlen(r.out), err, sizeof err);
        cr_assert_not_null(doc, "%s: pose JSON: %s", cs, err);
        cr_expect_str_eq(jr_str(jr_get(doc, "clip")), clip, "%s", cs);
        const jr_value *joints = jr_get(doc, "joints"), *got = jr_get(doc, "frames");
        cr_assert_eq(jr_len(got), jr_len(frames), "%s: %zu frames printed", cs, jr_len(got));
        for (size_t f = 0; f < jr_len(frames); f++) {
            const jr_value *bones = jr_get(jr_at(frames, f), "bones");
            const jr_value *models = jr_get(jr_at(got, f), "model");
            double frame = jr_num(jr_get(jr_at(frames, f), "frame"));
            cr_expect_eq(jr_len(joints), jr_len(bones), "%s frame %g: bone count", cs, frame);
            for (size_t bi = 0; bi < jr_len(bones); bi++) {
                const char *bone = jr_key(bones, bi);
                size_t j = 0;
                while (j < jr_len(joints) && strcmp(jr_str(jr_at(joints, j)), bone) != 0) j++;
                cr_assert_lt(j, jr_len(joints), "%s: bone '%s' not in the pose", cs, bone);
                const jr_value *eb = jr_at(bones, bi);
                const jr_value *rows = jr_get(eb, "ref_model") ? jr_get(eb, "ref_model") : jr_get(eb, "model");
                const jr_value *m = jr_at(models, j);
                cr_assert_eq(jr_len(m), 16u, "%s: model matrix of '%s'", cs, bone);
                for (int row = 0; row < 4; row++)
                    for (int col = 0; col < 4; col++) {
                        double want = jr_num(jr_at(jr_at(rows, (size_t)row), (size_t)col));
                        double have = jr_num(jr_at(m, (size_t)(col * 4 + row)));
                        cr_expect(fabs(have - want) <= tol, "%s frame %g bone '%s' [%d][%d]: %.9g, expected %.9g",
                                  cs, frame, bone, row, col, have, want);
                    }
            }
        }
        ran++;
        jr_free(doc);
        cli_result_free(&r);
        jr_free(exp);
    }
    cr_expect(ran > 0, "no case with a clip");
    jr_free(cases);
}

/* Through the importer table: found by the identifier (not the extension), validated. */
Test(import_unigine, source_import_detects_and_validates)
{
    char dir[1024];
    ug_dir_or_skip(dir, sizeof dir);
    jr_value *cases = corpus_json(dir, "cases.json");
    const jr_value *list = jr_get(cases, "cases");
    for (size_t ci = 0; ci < jr_len(list); ci++) {
        const char *files[2] = {jr_str(jr_get(jr_at(list, ci), "model")), jr_str(jr_get(jr_at(list, ci), "anim"))};
        for (int k = 0; k < 2; k++) {
            if (!files[k]) continue;
            file_bytes fb;
            cr_assert(corpus_read(dir, files[k], &fb));
            kiln_source_scene sc;
            kiln_diag err;
            memset(&err, 0, sizeof err);
            kiln_result r = kiln_source_import(fb.data, fb.size, "renamed.bin", NULL, NULL, &sc, &err);
            cr_assert_eq(r, KILN_OK, "%s: %s", files[k], err.message);
            cr_expect_str_eq(sc.format, memcmp(fb.data, "an10", 4) == 0 ? "unigine-anim" : "unigine-mesh", "%s",
                             files[k]);
            cr_expect_eq(kiln_source_validate(&sc, &err), KILN_OK, "%s: %s", files[k], err.message);
            kiln_source_scene_free(&sc);
            file_bytes_free(&fb);
        }
    }
    jr_free(cases);
    cr_expect_eq(kiln_importer_find("unigine-mesh"), &kiln__importer_unigine_mesh);
    cr_expect_eq(kiln_importer_find("unigine-anim"), &kiln__importer_unigine_anim);
    cr_expect_eq(kiln_importer_detect("ms10", 4), &kiln__importer_unigine_mesh);
    cr_expect_eq(kiln_importer_detect("an10", 4), &kiln__importer_unigine_anim);
}

/* ---- V26: a clip file that does not fit its model ---------------------------------------------- */

typedef struct v26_log {
    int      count, other;
    uint64_t offsets[8];
    char     messages[8][320];
} v26_log;

static void v26_push(void *user, const kiln_diag *d)
{
    v26_log *log = user;
    if (!d->rule[0]) return;
    if (strcmp(d->rule, "V26") != 0 || d->severity != KILN_SEVERITY_WARNING) {
        log->other++;
        return;
    }
    if (log->count < 8) {
        log->offsets[log->count] = d->offset;
        memcpy(log->messages[log->count], d->message, sizeof d->message);
    }
    log->count++;
}

/* The offset of bone `name`'s bind transform in clips.anim (what the .anim hands its clips). */
static uint64_t anim_bind_offset(const char *dir, const char *name)
{
    imported ia;
    rule_log log;
    memset(&ia, 0, sizeof ia);
    memset(&log, 0, sizeof log);
    import_file(dir, "clips.anim", &ia, &log);
    cr_assert_eq(ia.result, KILN_OK);
    const kiln_source_animation *an = &ia.scene.animations[0];
    uint64_t at = UINT64_MAX;
    for (uint32_t i = 0; i < an->authored_rest_count; i++)
        if (strcmp(an->authored_rest[i].name, name) == 0) at = an->authored_rest[i].loc.offset;
    imported_free(&ia);
    cr_assert_neq(at, UINT64_MAX, "clips.anim has no bone '%s'", name);
    return at;
}

/* An .anim whose bind pose differs from the model's by more than 1e-4 is reported with the
 * bind transform's offset, once per clip driving the bone, and the model's bind locals hold
 * where the clip holds the bind pose: the blob is the one the unchanged files give ("partial"
 * holds thigh's translation at the bind value on frame 0, so a clip keeping the .anim's value
 * would differ). Within 1e-4 nothing is reported. */
Test(import_unigine, v26_anim_bind_pose_differs_from_the_model)
{
    char dir[1024];
    ug_dir_or_skip(dir, sizeof dir);
    file_bytes model, anim;
    cr_assert(corpus_read(dir, "skinned_bind.mesh", &model));
    cr_assert(corpus_read(dir, "clips.anim", &anim));
    uint64_t at = anim_bind_offset(dir, "thigh");
    cr_assert_leq(at + 40, anim.size);

    v26_log base;
    memset(&base, 0, sizeof base);
    kiln_bake_result want;
    cr_assert_eq(bake_pair(&model, &anim, v26_push, &base, &want), KILN_OK);
    cr_expect_eq(base.count + base.other, 0, "the corpus pair reports %d V26 warnings", base.count);

    unsigned char *bytes = (unsigned char *)anim.data;
    float tx;
    memcpy(&tx, bytes + at, sizeof tx);
    float small = tx + 5e-5f, large = tx + 0.25f;
    memcpy(bytes + at, &small, sizeof small);
    v26_log quiet;
    memset(&quiet, 0, sizeof quiet);
    kiln_bake_result q;
    cr_assert_eq(bake_pair(&model, &anim, v26_push, &quiet, &q), KILN_OK);
    cr_expect_eq(quiet.count, 0, "a 5e-5 difference is reported");
    kiln_bake_result_free(&q);

    memcpy(bytes + at, &large, sizeof large);
    v26_log log;
    memset(&log, 0, sizeof log);
    kiln_bake_result got;
    cr_assert_eq(bake_pair(&model, &anim, v26_push, &log, &got), KILN_OK);
    cr_expect_eq(log.other, 0);
    cr_expect_eq(log.count, 2, "%d V26 warnings (clips run and partial drive thigh)", log.count);
    for (int i = 0; i < log.count && i < 8; i++) {
        cr_expect_eq(log.offsets[i], at, "warning %d at offset %llu, expected %llu", i,
                     (unsigned long long)log.offsets[i], (unsigned long long)at);
        cr_expect(strstr(log.messages[i], "'thigh'") != NULL, "%s", log.messages[i]);
    }
    cr_expect_eq(got.size, want.size);
    cr_expect(got.size == want.size && memcmp(got.blob, want.blob, want.size) == 0,
              "the model's bind pose is not what the clips hold");
    kiln_bake_result_free(&got);
    kiln_bake_result_free(&want);
    file_bytes_free(&model);
    file_bytes_free(&anim);
}

/* An .anim bone the model does not have: V26 names it, at its bind transform, once per clip
 * driving it, and the clip loses it: "CHEST" would otherwise bind to "chest" through the
 * runtime's case-insensitive fallback. The other bones still bind. */
Test(import_unigine, v26_anim_bone_missing_from_the_model)
{
    char dir[1024];
    ug_dir_or_skip(dir, sizeof dir);
    file_bytes model, anim;
    cr_assert(corpus_read(dir, "skinned_bind.mesh", &model));
    cr_assert(corpus_read(dir, "clips.anim", &anim));
    uint64_t at = anim_bind_offset(dir, "chest");
    unsigned char *bytes = (unsigned char *)anim.data;
    unsigned char *name = NULL;
    for (size_t i = 0; i + 6 <= anim.size && !name; i++)
        if (memcmp(bytes + i, "chest", 6) == 0) name = bytes + i;
    cr_assert_not_null(name, "no bone name 'chest' in clips.anim");
    memcpy(name, "CHEST", 5);

    v26_log log;
    memset(&log, 0, sizeof log);
    kiln_bake_result got;
    cr_assert_eq(bake_pair(&model, &anim, v26_push, &log, &got), KILN_OK);
    cr_expect_eq(log.other, 0);
    cr_expect_eq(log.count, 1, "%d V26 warnings (only clip run drives chest)", log.count);
    if (log.count >= 1) {
        cr_expect(strstr(log.messages[0], "'CHEST'") != NULL, "%s", log.messages[0]);
        cr_expect_eq(log.offsets[0], at);
    }

    const kiln_blob *blob = NULL;
    kiln_diag err;
    cr_assert_eq(kiln_blob_load(got.blob, got.size, 0, &blob, &err), KILN_OK, "%s", err.message);
    uint32_t clips = 0;
    const kiln_blob_animation *recs = kiln_blob_animations(blob, &clips);
    int checked = 0;
    for (uint32_t c = 0; c < clips; c++) {
        if (strcmp(kiln_blob_string(blob, recs[c].name), "run") != 0) continue;
        size_t need = kiln_anim_binding_size(blob, c, blob, 0);
        void *mem = aligned_alloc(64, (need + 63) / 64 * 64);
        kiln_anim_binding *binding = NULL;
        kiln_anim_bind_report rep;
        cr_assert_eq(kiln_anim_bind(blob, c, blob, 0, mem, need, &binding, &rep), KILN_OK);
        cr_expect_eq(rep.bound_joints, 4u, "run binds %u bones (the model's 5 but chest)", rep.bound_joints);
        cr_expect_eq(rep.missing_joints + rep.inexact_matches, 0u, "CHEST is still in the clip");
        free(mem);
        checked++;
    }
    cr_expect_eq(checked, 1, "no clip 'run' in the blob");
    kiln_bake_result_free(&got);
    file_bytes_free(&model);
    file_bytes_free(&anim);
}

/* Baking a case's model with its clip file gives a blob that `kiln verify` accepts and whose
 * clip poses equal `kiln pose` on the source files. */
Test(import_unigine, baked_blob_verifies_and_poses_like_the_sources)
{
    char dir[1024];
    ug_dir_or_skip(dir, sizeof dir);
    jr_value *cases = corpus_json(dir, "cases.json");
    const jr_value *list = jr_get(cases, "cases");
    int ran = 0;
    for (size_t ci = 0; ci < jr_len(list); ci++) {
        const jr_value *c = jr_at(list, ci);
        const char *cs = jr_str(jr_get(c, "case")), *clip = jr_str(jr_get(c, "clip"));
        const char *model = jr_str(jr_get(c, "model")), *anim = jr_str(jr_get(c, "anim"));
        if (!clip) continue;
        char model_path[1200], anim_path[1200], blob[] = "/tmp/kiln_unigine_XXXXXX";
        snprintf(model_path, sizeof model_path, "%s/%s", dir, model);
        snprintf(anim_path, sizeof anim_path, "%s/%s", dir, anim);
        int separate = strcmp(anim, model) != 0;
        int fd = mkstemp(blob);
        cr_assert(fd >= 0);
        close(fd);
        const char *bake[] = {"bake", model_path, separate ? anim_path : "-o", separate ? "-o" : blob,
                              separate ? blob : NULL, NULL};
        cli_result r = cli_run(bake);
        cr_assert_eq(r.status, 0, "%s: kiln bake exited %d: %s", cs, r.status, r.err);
        cli_result_free(&r);
        const char *verify[] = {"verify", blob, NULL};
        r = cli_run(verify);
        cr_expect_eq(r.status, 0, "%s: kiln verify exited %d: %s", cs, r.status, r.err);
        cli_result_free(&r);
        const char *frames = "0,0.5,1,2.25,3,4.75";
        const char *from_blob[] = {"pose", "--json", blob, "--clip", clip, "--frames", frames, NULL};
        const char *from_src[] = {"pose", "--json", model_path, separate ? anim_path : "--clip",
                                  separate ? "--clip" : clip, separate ? clip : "--frames",
                                  separate ? "--frames" : frames, separate ? frames : NULL, NULL};
        cli_result a = cli_run(from_blob), b = cli_run(from_src);
        unlink(blob);
        cr_assert_eq(a.status, 0, "%s: pose on the blob: %s", cs, a.err);
        cr_assert_eq(b.status, 0, "%s: pose on the sources: %s", cs, b.err);
        char err[160];
        jr_value *da = jr_parse(a.out, strlen(a.out), err, sizeof err), *db = jr_parse(b.out, strlen(b.out), err, sizeof err);
        cr_assert(da && db, "%s: pose JSON", cs);
        const jr_value *fa = jr_get(da, "frames"), *fb = jr_get(db, "frames");
        cr_assert_eq(jr_len(fa), jr_len(fb));
        for (size_t f = 0; f < jr_len(fa); f++) {
            const jr_value *ma = jr_get(jr_at(fa, f), "model"), *mb = jr_get(jr_at(fb, f), "model");
            cr_assert_eq(jr_len(ma), jr_len(mb));
            for (size_t j = 0; j < jr_len(ma); j++)
                for (size_t e = 0; e < 16; e++)
                    cr_expect(fabs(jr_num(jr_at(jr_at(ma, j), e)) - jr_num(jr_at(jr_at(mb, j), e))) <= 1e-6,
                              "%s: frame %zu joint %zu element %zu differs", cs, f, j, e);
        }
        jr_free(da);
        jr_free(db);
        cli_result_free(&a);
        cli_result_free(&b);
        ran++;
    }
    cr_expect(ran > 0);
    jr_free(cases);
}
