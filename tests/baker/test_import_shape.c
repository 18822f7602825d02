/* The *.Shape importer against the shared corpus (corpus/shape: cases.json, the expected JSON files,
 * bad/), read at run time so further cases drop in unchanged, plus hand-made streams for the
 * rules the corpus does not reach. Skips cleanly when the corpus is absent. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape.h"
#include "kiln/bake/source.h"
#include "cli_run.h"
#include "test_util.h"

/* ---- diagnostics: every rule reported ------------------------------------------------------ */
typedef struct rule_log {
    char rules[256][16];
    char messages[256][320];
    int  count;
} rule_log;

static void rule_log_push(void *user, const kiln_diag *d)
{
    rule_log *log = user;
    cr_expect(d->severity == KILN_SEVERITY_INFO || d->rule[0] != '\0', "diagnostic without a rule: %s", d->message);
    cr_expect(d->message[0] != '\0', "diagnostic without a message");
    if (d->severity == KILN_SEVERITY_INFO) return;
    if (log->count < 256) {
        snprintf(log->rules[log->count], sizeof log->rules[0], "%s", d->rule);
        snprintf(log->messages[log->count], sizeof log->messages[0], "%s", d->message);
    }
    log->count++;
}

static int rule_log_has(const rule_log *log, const char *rule)
{
    for (int i = 0; i < log->count && i < 256; i++)
        if (strcmp(log->rules[i], rule) == 0) return 1;
    return 0;
}

/* ---- importing ------------------------------------------------------------------------------ */
typedef struct imported {
    kiln_source_scene scene;
    kiln_diag         err;
    kiln_result       result;
    rule_log          log;
} imported;

static void import_bytes(imported *im, const void *data, size_t size, const char *path)
{
    memset(&im->log, 0, sizeof im->log);
    kiln_import_options opt;
    memset(&opt, 0, sizeof opt);
    opt.diag.fn = rule_log_push;
    opt.diag.user = &im->log;
    kiln_source_scene_init(&im->scene, NULL);
    im->result = kiln__import_shape(data, size, path, &opt, &im->scene, &im->err);
}

static int import_file(imported *im, const char *dir, const char *name)
{
    file_bytes f;
    if (!corpus_read(dir, name, &f)) return 0;
    import_bytes(im, f.data, f.size, name);
    file_bytes_free(&f);
    return 1;
}

static void shape_dir_or_skip(char *dir, size_t cap)
{
    char base[900];
    corpus_dir_or_skip(base, sizeof base);
    snprintf(dir, cap, "%s/shape", base);
    FILE *f;
    char probe[1200];
    snprintf(probe, sizeof probe, "%s/cases.json", dir);
    if (!(f = fopen(probe, "rb"))) cr_skip_test("no Shape corpus at %s: skipping", dir);
    fclose(f);
}

/* "reject: V7" -> kind 'r', rule "V7"; "ok-with-warning: W6" -> 'w', "W6"; "ok" -> 'o'. */
static char outcome_kind(const char *outcome, char *rule, size_t cap)
{
    rule[0] = '\0';
    if (!outcome) return '?';
    const char *colon = strchr(outcome, ':');
    if (colon) {
        const char *r = colon + 1;
        while (*r == ' ') r++;
        snprintf(rule, cap, "%s", r);
    }
    if (strncmp(outcome, "reject", 6) == 0) return 'r';
    if (strncmp(outcome, "ok-with-warning", 15) == 0) return 'w';
    if (strcmp(outcome, "ok") == 0) return 'o';
    return '?';
}

/* The outcome named, exactly: a reject with that rule, or a load whose warnings are exactly the
 * listed rule (or none for "ok"). */
static void check_outcome(const char *file, const imported *im, const char *outcome)
{
    char rule[16];
    char kind = outcome_kind(outcome, rule, sizeof rule);
    cr_assert(kind != '?', "%s: unknown outcome \"%s\"", file, outcome ? outcome : "(none)");
    if (kind == 'r') {
        cr_expect_neq(im->result, KILN_OK, "%s: loaded, expected %s", file, outcome);
        if (im->result == KILN_OK) return;
        cr_expect_str_eq(im->err.rule, rule, "%s: rejected with rule %s (%s), expected %s", file, im->err.rule,
                         im->err.message, rule);
        cr_expect_eq(im->err.severity, KILN_SEVERITY_ERROR, "%s: error severity", file);
        cr_expect(im->err.code >= KILN_ERR_IMPORT_TRUNCATED && im->err.code < KILN_ERR_IMPORT_REPAIRED,
                  "%s: error code %s is not an importer code", file, kiln_result_name(im->err.code));
        cr_expect(im->err.message[0] && im->err.path[0], "%s: error without message or path", file);
        cr_expect(im->err.offset != KILN_NO_OFFSET, "%s: error without offset (%s)", file, im->err.message);
        return;
    }
    cr_expect_eq(im->result, KILN_OK, "%s: rejected (%s: %s), expected %s", file, im->err.rule, im->err.message, outcome);
    if (kind == 'w') cr_expect(rule_log_has(&im->log, rule), "%s: rule %s not reported", file, rule);
    for (int i = 0; i < im->log.count && i < 256; i++)
        cr_expect(kind == 'w' && strcmp(im->log.rules[i], rule) == 0, "%s: unexpected %s: %s", file,
                  im->log.rules[i], im->log.messages[i]);
}

/* ---- the bad/ files ----------------------------------------------------------------------- */
Test(import_shape, bad_files_get_their_manifest_outcome)
{
    char dir[1000];
    shape_dir_or_skip(dir, sizeof dir);
    jr_value *cases = corpus_json(dir, "cases.json");
    cr_assert_not_null(cases);
    const jr_value *bad = jr_get(cases, "bad");
    cr_assert(jr_len(bad) > 0, "cases.json lists no bad files");
    for (size_t i = 0; i < jr_len(bad); i++) {
        const char *file = jr_str(jr_get(jr_at(bad, i), "file"));
        const char *outcome = jr_str(jr_get(jr_at(bad, i), "outcome"));
        imported im;
        cr_assert(import_file(&im, dir, file), "%s cannot be read", file);
        check_outcome(file, &im, outcome);
        kiln_source_scene_free(&im.scene);
    }
    /* Every file in bad/ has a row. */
    char bad_dir[1100];
    snprintf(bad_dir, sizeof bad_dir, "%s/bad", dir);
    DIR *d = opendir(bad_dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            int listed = 0;
            for (size_t i = 0; i < jr_len(bad); i++) {
                const char *file = jr_str(jr_get(jr_at(bad, i), "file"));
                if (file && strncmp(file, "bad/", 4) == 0 && strcmp(file + 4, e->d_name) == 0) listed = 1;
            }
            cr_expect(listed, "bad/%s has no outcome in cases.json", e->d_name);
        }
        closedir(d);
    }
    jr_free(cases);
}

/* ---- the good cases ----------------------------------------------------------------------- */
static double tol_of(const jr_value *expected, const char *key, double fallback)
{
    return jr_num_or(jr_get(jr_get(expected, "tolerance"), key), fallback);
}

static void expect_vec(const char *what, const jr_value *e, const float *v, size_t n, double tol)
{
    cr_expect_eq(jr_len(e), n, "%s: %zu components expected, %zu given", what, jr_len(e), n);
    for (size_t k = 0; k < n && k < jr_len(e); k++)
        cr_expect(fabs(jr_num(jr_at(e, k)) - v[k]) <= tol, "%s[%zu]: %.8g, expected %.8g", what, k, (double)v[k],
                  jr_num(jr_at(e, k)));
}

static void expect_quat(const char *what, const jr_value *e, const float *q, double tol)
{
    double d0 = 0, d1 = 0;
    for (size_t k = 0; k < 4; k++) {
        d0 = fmax(d0, fabs(jr_num(jr_at(e, k)) - q[k]));
        d1 = fmax(d1, fabs(jr_num(jr_at(e, k)) + q[k]));
    }
    cr_expect(fmin(d0, d1) <= tol, "%s: (%g, %g, %g, %g), expected (%g, %g, %g, %g)", what, (double)q[0], (double)q[1],
              (double)q[2], (double)q[3], jr_num(jr_at(e, 0)), jr_num(jr_at(e, 1)), jr_num(jr_at(e, 2)),
              jr_num(jr_at(e, 3)));
}

/* Column-major 4x4 from T, R, S (column vectors), and products: the test's own composition. */
static void trs_matrix(const double *t, const double *q, const double *s, double *m)
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double r[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                      {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                      {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
    memset(m, 0, 16 * sizeof *m);
    for (int c = 0; c < 3; c++)
        for (int rr = 0; rr < 3; rr++) m[c * 4 + rr] = r[rr][c] * s[c];
    for (int rr = 0; rr < 3; rr++) m[12 + rr] = t[rr];
    m[15] = 1;
}

static void mat_mul(const double *a, const double *b, double *o)
{
    double t[16];
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
            t[c * 4 + r] = s;
        }
    memcpy(o, t, sizeof t);
}

/* Expected "model" is row-major rows; m is column-major. */
static void expect_matrix(const char *what, const jr_value *rows, const double *m, double tol)
{
    cr_expect_eq(jr_len(rows), 4u, "%s: 4 rows expected", what);
    for (int r = 0; r < 4 && r < (int)jr_len(rows); r++)
        for (int c = 0; c < 4; c++) {
            double e = jr_num(jr_at(jr_at(rows, (size_t)r), (size_t)c));
            cr_expect(fabs(e - m[c * 4 + r]) <= tol, "%s[%d][%d]: %.8g, expected %.8g", what, r, c, m[c * 4 + r], e);
        }
}

static void check_skeleton(const char *cs, const jr_value *exp, const kiln_source_model *model)
{
    const jr_value *bones = jr_get(exp, "skeleton");
    double tol = tol_of(exp, "matrix", 1e-4), ptol = tol_of(exp, "position", 1e-5);
    const kiln_source_skeleton *sk = model->skeleton;
    cr_assert_not_null(sk, "%s: no skeleton", cs);
    cr_assert_eq(sk->bone_count, jr_len(bones), "%s: %u bones, expected %zu", cs, sk->bone_count, jr_len(bones));
    double *world = calloc(sk->bone_count, 16 * sizeof *world);
    for (uint32_t b = 0; b < sk->bone_count; b++) {
        const jr_value *e = jr_at(bones, b);
        const kiln_source_bone *bone = &sk->bones[b];
        char what[256];
        snprintf(what, sizeof what, "%s: bone %u", cs, b);
        cr_expect_str_eq(bone->name, jr_str(jr_get(e, "name")), "%s: name %s", what, bone->name);
        cr_expect_eq(bone->parent, (int32_t)jr_num(jr_get(e, "parent")), "%s: parent %d", what, bone->parent);
        expect_vec(what, jr_get(e, "local_t"), bone->local_position, 3, ptol);
        expect_quat(what, jr_get(e, "local_r"), bone->local_rotation, ptol);
        expect_vec(what, jr_get(e, "local_s"), bone->scale, 3, ptol);
        double t[3], q[4], s[3], l[16];
        for (int k = 0; k < 3; k++) { t[k] = bone->local_position[k]; s[k] = bone->scale[k]; }
        for (int k = 0; k < 4; k++) q[k] = bone->local_rotation[k];
        trs_matrix(t, q, s, l);
        if (bone->parent >= 0 && (uint32_t)bone->parent < b)
            mat_mul(world + 16 * (size_t)bone->parent, l, world + 16 * (size_t)b);
        else
            memcpy(world + 16 * (size_t)b, l, sizeof l);
        expect_matrix(what, jr_get(e, "model"), world + 16 * (size_t)b, tol);
    }
    free(world);
}

static int32_t bone_index(const kiln_source_model *model, const char *name)
{
    for (uint32_t b = 0; name && b < model->skeleton->bone_count; b++)
        if (strcmp(model->skeleton->bones[b].name, name) == 0) return (int32_t)b;
    return -1;
}

static void check_mesh(const char *cs, const jr_value *e, const kiln_source_model *model, const kiln_source_mesh *m,
                       double tol)
{
    char what[300];
    const char *ename = jr_str(jr_get(e, "name"));
    snprintf(what, sizeof what, "%s: mesh %s", cs, ename ? ename : "?");
    cr_expect_str_eq(m->name, jr_str(jr_get(e, "name")), "%s: name %s", what, m->name);
    const char *mat = jr_str(jr_get(e, "material"));
    if (mat)
        cr_expect(m->material < model->material_count && strcmp(model->materials[m->material].name, mat) == 0,
                  "%s: material %u", what, m->material);
    else
        cr_expect_eq(m->material, KILN_SOURCE_NONE, "%s: material %u, expected none", what, m->material);
    const jr_value *corners = jr_get(e, "corners"), *layout = jr_get(e, "corner_layout");
    cr_assert_eq(m->face_count, (uint32_t)jr_num(jr_get(e, "triangle_count")), "%s: %u triangles", what, m->face_count);
    cr_assert_eq(jr_len(corners), (size_t)m->face_count * 3u, "%s: corner count", what);
    const jr_value *skin = jr_get(e, "skin");
    const char *bound = jr_str(jr_get(e, "bound_node"));
    int32_t bound_bone = bone_index(model, bound);
    if (bound) {
        cr_expect(bound_bone >= 0, "%s: bound node %s is not a bone", what, bound);
        cr_expect_eq(m->max_influence, 1u, "%s: rigid mesh with %u influences", what, m->max_influence);
    }
    for (size_t c = 0; c < jr_len(corners); c++) {
        uint32_t v = m->faces[c];
        cr_assert(v < m->vertex_count, "%s: corner %zu vertex %u out of range", what, c, v);
        const jr_value *ec = jr_at(corners, c);
        size_t at = 0;
        char cw[340];
        snprintf(cw, sizeof cw, "%s corner %zu", what, c);
        for (size_t l = 0; l < jr_len(layout); l++) {
            const char *attr = jr_str(jr_at(layout, l));
            const float *src = NULL;
            size_t n = 0;
            if (strcmp(attr, "position") == 0) { src = m->positions + 3u * v; n = 3; }
            else if (strcmp(attr, "normal") == 0) { src = m->normals ? m->normals + 3u * v : NULL; n = 3; }
            else if (strncmp(attr, "uv", 2) == 0) {
                unsigned layer = (unsigned)atoi(attr + 2);
                src = layer < m->uv_layer_count && m->uv[layer] ? m->uv[layer] + 2u * v : NULL;
                n = 2;
            }
            cr_assert_not_null(src, "%s: no %s", cw, attr);
            for (size_t k = 0; k < n; k++) {
                double ev = jr_num(jr_at(ec, at + k));
                cr_expect(fabs(ev - src[k]) <= tol, "%s: %s[%zu] %.8g, expected %.8g", cw, attr, k, (double)src[k], ev);
            }
            at += n;
        }
        cr_expect_eq(at, jr_len(ec), "%s: %zu values, layout gives %zu", cw, jr_len(ec), at);
        if (bound && m->max_influence == 1)
            cr_expect_eq((int32_t)m->weight_bones[v], bound_bone, "%s: bound to bone %u", cw, m->weight_bones[v]);
        if (skin) {
            const jr_value *es = jr_at(skin, c);
            uint32_t used = 0;
            for (uint32_t k = 0; k < m->max_influence; k++) {
                float w = m->weight_values ? m->weight_values[(size_t)v * m->max_influence + k] : 1.0f;
                if (w > 0.0f) used++;
            }
            cr_expect_eq(used, jr_len(es), "%s: %u influences, expected %zu", cw, used, jr_len(es));
            for (size_t k = 0; k < jr_len(es) && k < m->max_influence; k++) {
                const jr_value *pair = jr_at(es, k);
                int32_t b = bone_index(model, jr_str(jr_at(pair, 0)));
                float w = m->weight_values ? m->weight_values[(size_t)v * m->max_influence + k] : 1.0f;
                cr_expect_eq((int32_t)m->weight_bones[(size_t)v * m->max_influence + k], b,
                             "%s: influence %zu bone %u, expected %s", cw, k,
                             m->weight_bones[(size_t)v * m->max_influence + k], jr_str(jr_at(pair, 0)));
                cr_expect(fabs(w - jr_num(jr_at(pair, 1))) <= tol, "%s: influence %zu weight %g, expected %g", cw, k,
                          (double)w, jr_num(jr_at(pair, 1)));
            }
        }
    }
}

static void check_materials(const char *cs, const jr_value *exp, const kiln_source_model *model)
{
    const jr_value *mats = jr_get(exp, "materials");
    cr_assert_eq(model->material_count, jr_len(mats), "%s: %u materials", cs, model->material_count);
    for (uint32_t i = 0; i < model->material_count; i++) {
        const kiln_source_material *m = &model->materials[i];
        const jr_value *e = jr_at(mats, i);
        cr_expect_str_eq(m->name, jr_str(jr_get(e, "name")), "%s: material %u name", cs, i);
        cr_expect_str_eq(m->type, jr_str(jr_get(e, "type")), "%s: material %u type", cs, i);
        const jr_value *maps = jr_get(e, "maps"), *colors = jr_get(e, "colors");
        size_t files = 0, cols = 0;
        for (uint32_t s = 0; s < m->slot_count; s++) {
            const kiln_source_material_slot *sl = &m->slots[s];
            if (sl->kind == KILN_SOURCE_SLOT_FILE) {
                const jr_value *em = jr_at(maps, files++);
                cr_expect(em && strcmp(sl->name, jr_str(jr_get(em, "slot"))) == 0 &&
                              strcmp(sl->path, jr_str(jr_get(em, "file"))) == 0,
                          "%s: material %u file slot %s = %s", cs, i, sl->name, sl->path);
            } else {
                cols++;
                char what[300];
                snprintf(what, sizeof what, "%s: material %u colour %s", cs, i, sl->name);
                const jr_value *ec = jr_get(colors, sl->name);
                cr_expect_not_null(ec, "%s: not expected", what);
                if (ec) expect_vec(what, ec, sl->rgba, 4, 1e-6);
                cr_expect_eq(sl->color_space, KILN_SOURCE_COLOR_LINEAR, "%s: not linear", what);
            }
        }
        cr_expect_eq(files, jr_len(maps), "%s: material %u: %zu file slots", cs, i, files);
        cr_expect_eq(cols, jr_len(colors), "%s: material %u: %zu colour slots", cs, i, cols);
    }
}

static void check_instances(const char *cs, const jr_value *exp, const kiln_source_scene *sc)
{
    const jr_value *ins = jr_get(exp, "instances");
    double tol = tol_of(exp, "position", 1e-5);
    cr_assert_eq(sc->instance_count, jr_len(ins), "%s: %u instances", cs, sc->instance_count);
    for (uint32_t i = 0; i < sc->instance_count; i++) {
        const kiln_source_instance *in = &sc->instances[i];
        const jr_value *e = jr_at(ins, i);
        char what[300];
        snprintf(what, sizeof what, "%s: instance %u", cs, i);
        cr_expect_str_eq(in->name, jr_str(jr_get(e, "name")), "%s name", what);
        cr_expect_str_eq(in->path, jr_str(jr_get(e, "path")), "%s path", what);
        expect_vec(what, jr_get(e, "t"), in->position, 3, tol);
        expect_quat(what, jr_get(e, "r"), in->rotation, tol);
        expect_vec(what, jr_get(e, "s"), in->scale, 3, tol);
    }
}

static void check_out_of_scope(const char *cs, const jr_value *exp, const kiln_source_scene *sc)
{
    static const char *const map[][2] = {{"properties", "property"}, {"lights", "light"},
                                         {"lens_flares", "lens_flare"}, {"cameras", "camera"},
                                         {"anchors", "anchor"}, {"scripts", "script"}, {"sounds", "sound"}};
    const jr_value *oos = jr_get(exp, "out_of_scope");
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++) {
        const jr_value *want = jr_get(oos, map[k][0]);
        if (!want) continue;
        uint32_t n = 0;
        for (uint32_t i = 0; i < sc->extra_count; i++)
            if (strcmp(sc->extras[i].kind, map[k][1]) == 0) n++;
        cr_expect_eq(n, (uint32_t)jr_num(want), "%s: %u %s extras, expected %g", cs, n, map[k][1], jr_num(want));
    }
}

/* ---- clips: the curves evaluated by the test itself ------------------------------------------ */
static void curve_at(const kiln_source_curve *c, double f, double *out)
{
    uint32_t comps = c->channel == KILN_SOURCE_CHANNEL_ROTATION ? 4u : 1u;
    uint32_t n = c->key_count, j = 0;
    if (f <= c->frames[0] || n == 1) {
        for (uint32_t k = 0; k < comps; k++) out[k] = c->values[k];
        return;
    }
    if (f >= c->frames[n - 1]) {
        for (uint32_t k = 0; k < comps; k++) out[k] = c->values[(size_t)(n - 1) * comps + k];
        return;
    }
    while (j + 1 < n && c->frames[j + 1] <= f) j++;
    double u = (f - c->frames[j]) / (double)(c->frames[j + 1] - c->frames[j]);
    const float *a = c->values + (size_t)j * comps, *b = a + comps;
    if (comps == 1) {
        out[0] = a[0] + (b[0] - a[0]) * u;
        return;
    }
    double dot = 0;
    for (int k = 0; k < 4; k++) dot += (double)a[k] * b[k];
    double sign = dot < 0 ? -1 : 1, th = acos(fmin(1.0, fabs(dot)));
    double wa = 1 - u, wb = u;
    if (th > 1e-6) { wa = sin((1 - u) * th) / sin(th); wb = sin(u * th) / sin(th); }
    double len = 0;
    for (int k = 0; k < 4; k++) { out[k] = wa * a[k] + wb * sign * b[k]; len += out[k] * out[k]; }
    for (int k = 0; k < 4; k++) out[k] /= sqrt(len);
}

static void check_frames(const char *cs, const jr_value *exp, const kiln_source_scene *sc)
{
    const kiln_source_model *model = &sc->models[0];
    const jr_value *clips = jr_get(exp, "clips");
    cr_assert_eq(sc->animation_count, jr_len(clips), "%s: %u clips", cs, sc->animation_count);
    for (uint32_t i = 0; i < sc->animation_count; i++) {
        const kiln_source_animation *a = &sc->animations[i];
        const jr_value *e = jr_at(clips, i);
        cr_expect_str_eq(a->name, jr_str(jr_get(e, "name")), "%s: clip %u name", cs, i);
        cr_expect(fabs(a->framerate - jr_num(jr_get(e, "fps"))) <= 1e-3 * jr_num(jr_get(e, "fps")), "%s: clip %u fps %g", cs,
                  i, (double)a->framerate);
        cr_expect_eq(a->looping != 0, jr_bool(jr_get(e, "looping"), -1), "%s: clip %u looping", cs, i);
        uint32_t last = 0;
        for (uint32_t c = 0; c < a->curve_count; c++)
            for (uint32_t k = 0; k < a->curves[c].key_count; k++)
                if (a->curves[c].frames[k] > last) last = a->curves[c].frames[k];
        if (a->curve_count)
            cr_expect_eq(last + 1, (uint32_t)jr_num(jr_get(e, "frame_count")), "%s: clip %u has %u frames", cs, i,
                         last + 1);
    }
    const char *clip = jr_str(jr_get(jr_get(exp, "clip"), "name"));
    if (!clip) return;
    const kiln_source_animation *a = NULL;
    for (uint32_t i = 0; i < sc->animation_count; i++)
        if (strcmp(sc->animations[i].name, clip) == 0) a = &sc->animations[i];
    cr_assert_not_null(a, "%s: no clip %s", cs, clip);

    /* events: (frame, name) in frame order; equal frames in any order */
    const jr_value *events = jr_get(exp, "events");
    uint32_t total = 0;
    for (uint32_t n = 0; n < a->notification_count; n++) total += a->notifications[n].key_count;
    cr_expect_eq(total, jr_len(events), "%s: %u events", cs, total);
    for (size_t k = 0; k < jr_len(events); k++) {
        const jr_value *ev = jr_at(events, k);
        uint32_t want = (uint32_t)lround(jr_num(jr_get(ev, "frame")));
        uint32_t seen = 0, have = 0;
        for (size_t j = 0; j < jr_len(events); j++)
            if ((uint32_t)lround(jr_num(jr_get(jr_at(events, j), "frame"))) == want &&
                strcmp(jr_str(jr_get(jr_at(events, j), "name")), jr_str(jr_get(ev, "name"))) == 0)
                seen++;
        for (uint32_t n = 0; n < a->notification_count; n++)
            if (strcmp(a->notifications[n].name, jr_str(jr_get(ev, "name"))) == 0)
                for (uint32_t f = 0; f < a->notifications[n].key_count; f++) have += a->notifications[n].frames[f] == want;
        cr_expect_eq(have, seen, "%s: event %s at frame %u: %u, expected %u", cs, jr_str(jr_get(ev, "name")), want, have,
                     seen);
    }

    const kiln_source_skeleton *sk = model->skeleton;
    const jr_value *frames = jr_get(exp, "frames");
    double tol = tol_of(exp, "matrix", 1e-4);
    double *world = calloc(sk->bone_count, 16 * sizeof *world);
    for (size_t fi = 0; fi < jr_len(frames); fi++) {
        const jr_value *fr = jr_at(frames, fi);
        double f = jr_num(jr_get(fr, "frame"));
        for (uint32_t b = 0; b < sk->bone_count; b++) {
            const kiln_source_bone *bone = &sk->bones[b];
            double t[3], q[4], s[3], l[16];
            for (int k = 0; k < 3; k++) { t[k] = bone->local_position[k]; s[k] = bone->scale[k]; }
            for (int k = 0; k < 4; k++) q[k] = bone->local_rotation[k];
            for (uint32_t c = 0; c < a->curve_count; c++) {
                const kiln_source_curve *cv = &a->curves[c];
                if (strcmp(cv->target, bone->name) != 0) continue;
                cr_expect_eq(cv->mode, KILN_SOURCE_ABSOLUTE);
                double v[4];
                curve_at(cv, f, v);
                if (cv->channel == KILN_SOURCE_CHANNEL_ROTATION) memcpy(q, v, sizeof q);
                else if (cv->channel >= KILN_SOURCE_CHANNEL_TX && cv->channel <= KILN_SOURCE_CHANNEL_TZ)
                    t[cv->channel - KILN_SOURCE_CHANNEL_TX] = v[0];
                else if (cv->channel >= KILN_SOURCE_CHANNEL_SX && cv->channel <= KILN_SOURCE_CHANNEL_SZ)
                    s[cv->channel - KILN_SOURCE_CHANNEL_SX] = v[0];
            }
            trs_matrix(t, q, s, l);
            if (bone->parent >= 0)
                mat_mul(world + 16 * (size_t)bone->parent, l, world + 16 * (size_t)b);
            else
                memcpy(world + 16 * (size_t)b, l, sizeof l);
        }
        const jr_value *bones = jr_get(fr, "bones");
        for (size_t k = 0; k < jr_len(bones); k++) {
            const char *bname = jr_key(bones, k);
            int32_t b = bone_index(model, bname);
            char what[300];
            snprintf(what, sizeof what, "%s: frame %g bone %s", cs, f, bname ? bname : "?");
            cr_expect(b >= 0, "%s: no such bone", what);
            if (b >= 0) expect_matrix(what, jr_get(jr_at(bones, k), "model"), world + 16 * (size_t)b, tol);
        }
    }
    free(world);
}

/* Every item names a place in the file: a path and a byte offset inside it. */
static void expect_loc(const char *cs, const char *what, uint32_t i, const kiln_source_loc *loc, size_t size)
{
    cr_expect(loc->path && loc->path[0], "%s: %s %u has no path", cs, what, i);
    cr_expect(loc->offset < size, "%s: %s %u offset %llu outside the %zu-byte file", cs, what, i,
              (unsigned long long)loc->offset, size);
}

static void check_locs(const char *cs, const kiln_source_scene *sc, size_t size)
{
    const kiln_source_model *m = &sc->models[0];
    for (uint32_t i = 0; i < m->skeleton->bone_count; i++) expect_loc(cs, "bone", i, &m->skeleton->bones[i].loc, size);
    for (uint32_t i = 0; i < m->mesh_count; i++) expect_loc(cs, "mesh", i, &m->meshes[i].loc, size);
    for (uint32_t i = 0; i < m->material_count; i++) {
        expect_loc(cs, "material", i, &m->materials[i].loc, size);
        for (uint32_t k = 0; k < m->materials[i].slot_count; k++) expect_loc(cs, "slot", k, &m->materials[i].slots[k].loc, size);
    }
    for (uint32_t i = 0; i < sc->instance_count; i++) expect_loc(cs, "instance", i, &sc->instances[i].loc, size);
    for (uint32_t i = 0; i < sc->extra_count; i++) expect_loc(cs, sc->extras[i].kind, i, &sc->extras[i].loc, size);
    for (uint32_t i = 0; i < sc->animation_count; i++) {
        const kiln_source_animation *a = &sc->animations[i];
        expect_loc(cs, "clip", i, &a->loc, size);
        for (uint32_t k = 0; k < a->curve_count; k++) expect_loc(cs, "curve", k, &a->curves[k].loc, size);
        for (uint32_t k = 0; k < a->notification_count; k++) expect_loc(cs, "notification", k, &a->notifications[k].loc, size);
    }
}

Test(import_shape, good_cases_match_expected)
{
    char dir[1000];
    shape_dir_or_skip(dir, sizeof dir);
    jr_value *cases = corpus_json(dir, "cases.json");
    cr_assert_not_null(cases);
    const jr_value *good = jr_get(cases, "good");
    cr_assert(jr_len(good) > 0, "cases.json lists no good cases");
    for (size_t i = 0; i < jr_len(good); i++) {
        const jr_value *c = jr_at(good, i);
        const char *cs = jr_str(jr_get(c, "case"));
        cr_assert_not_null(cs, "good case %zu has no name", i);
        imported im;
        cr_assert(import_file(&im, dir, jr_str(jr_get(c, "file"))), "%s cannot be read", cs);
        check_outcome(cs, &im, jr_str(jr_get(c, "outcome")));
        jr_value *exp = corpus_json(dir, jr_str(jr_get(c, "expected")));
        if (im.result == KILN_OK) {
            kiln_diag verr;
            cr_expect_eq(kiln_source_validate(&im.scene, &verr), KILN_OK, "%s: %s", cs, verr.message);
        }
        if (im.result == KILN_OK && exp) {
            cr_assert_eq(im.scene.model_count, 1u, "%s: one model", cs);
            const kiln_source_model *model = &im.scene.models[0];
            check_skeleton(cs, exp, model);
            const jr_value *meshes = jr_get(exp, "meshes");
            cr_expect_eq(model->mesh_count, jr_len(meshes), "%s: %u meshes, expected %zu", cs, model->mesh_count,
                         jr_len(meshes));
            for (uint32_t m = 0; m < model->mesh_count && m < jr_len(meshes); m++)
                check_mesh(cs, jr_at(meshes, m), model, &model->meshes[m], tol_of(exp, "position", 1e-5));
            check_materials(cs, exp, model);
            check_instances(cs, exp, &im.scene);
            check_out_of_scope(cs, exp, &im.scene);
            check_frames(cs, exp, &im.scene);
            const char *enc = jr_str(jr_get(c, "encoding"));
            if ((!enc || strcmp(enc, "raw") == 0) && jr_is_num(jr_get(c, "bytes")))
                check_locs(cs, &im.scene, (size_t)jr_num(jr_get(c, "bytes")));
        }
        cr_expect_not_null(exp, "%s: no expected file", cs);
        jr_free(exp);
        kiln_source_scene_free(&im.scene);
    }
    jr_free(cases);
}

/* ---- hand-made streams (tests/shape_fixture.h): the rules the corpus does not reach ---------- */
#include "shape_fixture.h"

static void import_stream(imported *im, const sf_buf *stream)
{
    size_t size;
    unsigned char *file = sf_file(stream, &size);
    import_bytes(im, file, size, "dir/hand.Shape");
    free(file);
}

/* The import loaded and reported exactly the rules in `rules` (space separated; "" = none). */
static void expect_rules(const imported *im, const char *rules)
{
    cr_assert_eq(im->result, KILN_OK, "rejected: %s %s", im->err.rule, im->err.message);
    kiln_diag verr;
    cr_expect_eq(kiln_source_validate(&im->scene, &verr), KILN_OK, "%s", verr.message);
    char copy[128];
    snprintf(copy, sizeof copy, "%s", rules);
    for (char *r = strtok(copy, " "); r; r = strtok(NULL, " ")) cr_expect(rule_log_has(&im->log, r), "%s not reported", r);
    for (int i = 0; i < im->log.count && i < 256; i++) {
        char padded[40];
        snprintf(padded, sizeof padded, " %s ", im->log.rules[i]);
        char all[140];
        snprintf(all, sizeof all, " %s ", rules);
        cr_expect(strstr(all, padded) != NULL, "unexpected %s: %s", im->log.rules[i], im->log.messages[i]);
    }
}

static void expect_reject(const imported *im, const char *rule)
{
    cr_assert_neq(im->result, KILN_OK, "loaded, expected %s", rule);
    cr_expect_str_eq(im->err.rule, rule, "rejected with %s (%s), expected %s", im->err.rule, im->err.message, rule);
    cr_expect(im->err.offset != KILN_NO_OFFSET && im->err.path[0], "no place in %s", im->err.message);
}

static const float tri_pos[15] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 2, 1, 0};

/* One root node named "root" referencing geometry 0 of the stream, then no layers. */
static void sf_simple(sf_buf *b, uint32_t topology, unsigned materials, unsigned front_ccw, unsigned material,
                      const uint32_t *idx, uint32_t icount)
{
    sf_head(b, 0, 0);
    sf_u16(b, materials);
    for (unsigned m = 0; m < materials; m++) sf_material(b, "m", front_ccw);
    sf_no_blocks(b);
    sf_u16(b, 1);
    sf_geometry(b, topology, material, tri_pos, 5, idx, icount);
    const uint16_t g = 0;
    sf_node(b, "root", NULL, 0, &g, 1, 0);
    sf_u16(b, 0);
}

static void expect_faces(const kiln_source_mesh *m, const uint32_t *faces, uint32_t count)
{
    cr_assert_eq(m->face_count, count, "%u faces, expected %u", m->face_count, count);
    for (uint32_t k = 0; k < count * 3; k++) cr_expect_eq(m->faces[k], faces[k], "face index %u: %u, expected %u", k, m->faces[k], faces[k]);
}

Test(import_shape, strips_restart_at_cuts_keep_winding_and_drop_degenerates_silently)
{
    const uint32_t idx[9] = {0, 1, 2, 3, 0xFFFFFFFFu, 2, 3, 4, 4};
    const uint32_t want[9] = {0, 1, 2, 1, 3, 2, 2, 3, 4};
    const uint32_t swapped[9] = {0, 2, 1, 1, 2, 3, 2, 4, 3};
    for (int ccw = 0; ccw < 2; ccw++) {
        sf_buf b = {0};
        sf_simple(&b, 5, 1, (unsigned)ccw, 0, idx, 9);
        imported im;
        import_stream(&im, &b);
        expect_rules(&im, "");
        cr_assert_eq(im.scene.models[0].mesh_count, 1u);
        expect_faces(&im.scene.models[0].meshes[0], ccw ? swapped : want, 3);
        cr_expect_str_eq(im.scene.models[0].meshes[0].name, "root#0");
        cr_expect_str_eq(im.scene.models[0].name, "hand");
        kiln_source_scene_free(&im.scene);
        free(b.data);
    }
}

Test(import_shape, list_triangles_out_of_range_degenerate_or_incomplete_are_dropped_with_w6)
{
    const uint32_t idx[11] = {0, 1, 2, 0, 0, 1, 0, 1, 9, 2, 1};
    sf_buf b = {0};
    sf_simple(&b, 4, 0, 0, 0xFFFF, idx, 11);
    imported im;
    import_stream(&im, &b);
    expect_rules(&im, "W6");
    const uint32_t want[3] = {0, 1, 2};
    expect_faces(&im.scene.models[0].meshes[0], want, 1);
    kiln_source_scene_free(&im.scene);
    free(b.data);
}

Test(import_shape, unknown_topology_w5_and_bad_material_w7)
{
    sf_buf b = {0};
    sf_simple(&b, 2, 0, 0, 0xFFFF, NULL, 0);
    imported im;
    import_stream(&im, &b);
    expect_rules(&im, "W5");
    cr_expect_eq(im.scene.models[0].mesh_count, 0u);
    kiln_source_scene_free(&im.scene);
    free(b.data);

    sf_buf c = {0};
    sf_simple(&c, 4, 1, 0, 3, NULL, 0);
    import_stream(&im, &c);
    expect_rules(&im, "W6 W7"); /* W6: 5 vertices, non-indexed: 2 left over */
    cr_assert_eq(im.scene.models[0].mesh_count, 1u);
    cr_expect_eq(im.scene.models[0].meshes[0].material, KILN_SOURCE_NONE);
    cr_expect_eq(im.scene.models[0].meshes[0].face_count, 1u); /* 5 vertices non-indexed: one list triangle + 2 left */
    kiln_source_scene_free(&im.scene);
    free(c.data);
}

Test(import_shape, rigid_geometry_moves_to_model_space_and_binds_to_its_node)
{
    /* root -> child (rotated 90 degrees about Z, translated (1, 2, 3)) holding the geometry;
     * a LOD 1 node references it too (no mesh, no warning), a bad reference is dropped (W8) and
     * geometry 1 is referenced by nobody (W8). */
    const float rot[16] = {0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 1, 2, 3, 1};
    sf_buf b = {0};
    sf_head(&b, 0, 0);
    sf_u16(&b, 0);
    sf_no_blocks(&b);
    sf_u16(&b, 2);
    sf_geometry(&b, 4, 0xFFFF, tri_pos, 3, NULL, 0);
    sf_geometry(&b, 4, 0xFFFF, tri_pos, 3, NULL, 0);
    const uint16_t refs[2] = {0, 7};
    sf_node(&b, "root", NULL, 0, NULL, 0, 2);
    sf_node(&b, "child", rot, 0, refs, 2, 0);
    sf_node(&b, "far", NULL, 1, refs, 1, 0);
    sf_u16(&b, 0);
    imported im;
    import_stream(&im, &b);
    expect_rules(&im, "W8");
    const kiln_source_model *m = &im.scene.models[0];
    cr_assert_eq(m->skeleton->bone_count, 3u);
    cr_expect_eq(m->skeleton->bones[1].parent, 0);
    cr_expect_eq(m->skeleton->bones[2].parent, 0);
    cr_expect(fabsf(m->skeleton->bones[1].local_rotation[2] - 0.70710678f) < 1e-6f);
    cr_expect(fabsf(m->skeleton->bones[1].local_rotation[3] - 0.70710678f) < 1e-6f);
    cr_assert_eq(m->mesh_count, 1u);
    const kiln_source_mesh *mesh = &m->meshes[0];
    cr_expect_str_eq(mesh->name, "child#0");
    /* (1,0,0) -> R(1,0,0) + t = (0,1,0) + (1,2,3) */
    const float want[9] = {1, 2, 3, 1, 3, 3, 0, 2, 3};
    for (int k = 0; k < 9; k++) cr_expect(fabsf(mesh->positions[k] - want[k]) < 1e-6f, "position %d: %g", k, (double)mesh->positions[k]);
    cr_expect_eq(mesh->max_influence, 1u);
    for (uint32_t v = 0; v < 3; v++) cr_expect_eq(mesh->weight_bones[v], 1u);
    kiln_source_scene_free(&im.scene);
    free(b.data);
}

/* Skinned geometry: nodes root + a..e (identity), bones a..e plus an unknown one. */
static void sf_skinned(sf_buf *b, const float *b_matrix, const char *const *names, unsigned bone_count,
                       const float *weights /* bone_count x 2 */)
{
    sf_head(b, 0, 0);
    sf_u16(b, 0);
    sf_no_blocks(b);
    sf_u16(b, 1);
    sf_u32(b, 4);
    sf_u16(b, 0xFFFF);
    sf_u8(b, 0); sf_u8(b, 0); sf_u8(b, 0);
    sf_u8(b, bone_count);
    sf_u8(b, 6);
    sf_u32(b, 3);
    sf_floats(b, tri_pos, 9);
    sf_u8(b, 0);
    sf_u32(b, 0);
    for (unsigned i = 0; i < bone_count; i++) {
        sf_str(b, names[i]);
        sf_floats(b, sf_identity, 16);
        sf_u32(b, 3);
        sf_f32(b, weights[2 * i]);
        sf_f32(b, weights[2 * i + 1]);
        sf_f32(b, weights[2 * i]);
    }
    const uint16_t g = 0;
    static const char *const nodes[5] = {"a", "b", "c", "d", "e"};
    sf_node(b, "root", NULL, 0, &g, 1, 5);
    for (int i = 0; i < 5; i++) sf_node(b, nodes[i], i == 1 ? b_matrix : NULL, 0, NULL, 0, 0);
    sf_u16(b, 0);
}

Test(import_shape, skin_keeps_four_heaviest_normalised_and_repairs_with_w9)
{
    static const char *const names[6] = {"a", "b", "c", "d", "e", "nobody"};
    /* vertex 0: 0.1..0.5 on a..e (5 influences); vertex 1: only a negative weight on a */
    const float w[12] = {0.1f, -1.0f, 0.2f, 0, 0.3f, 0, 0.4f, 0, 0.5f, 0, 0.9f, 0.9f};
    sf_buf b = {0};
    sf_skinned(&b, NULL, names, 6, w);
    imported im;
    import_stream(&im, &b);
    expect_rules(&im, "W9");
    const kiln_source_mesh *m = &im.scene.models[0].meshes[0];
    cr_assert_eq(m->max_influence, 4u);
    const uint32_t bones0[4] = {5, 4, 3, 2}; /* e d c b: bone index = node index */
    const double w0[4] = {0.5 / 1.4, 0.4 / 1.4, 0.3 / 1.4, 0.2 / 1.4};
    for (int k = 0; k < 4; k++) {
        cr_expect_eq(m->weight_bones[k], bones0[k], "influence %d bone %u", k, m->weight_bones[k]);
        cr_expect(fabs(m->weight_values[k] - w0[k]) < 1e-6, "influence %d weight %g", k, (double)m->weight_values[k]);
    }
    cr_expect_eq(m->weight_bones[4], 0u, "zero-sum vertex bound to the referencing node");
    cr_expect(fabs(m->weight_values[4] - 1.0) < 1e-9);
    for (int k = 5; k < 8; k++) cr_expect_eq(m->weight_values[k], 0.0f);
    kiln_source_scene_free(&im.scene);
    free(b.data);
}

Test(import_shape, inconsistent_offset_matrices_bake_each_vertex_at_rest_with_w10)
{
    static const char *const names[2] = {"a", "b"};
    const float up[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1}; /* node b at (0, 1, 0) */
    const float w[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    sf_buf b = {0};
    sf_skinned(&b, up, names, 2, w);
    imported im;
    import_stream(&im, &b);
    expect_rules(&im, "W10");
    const kiln_source_mesh *m = &im.scene.models[0].meshes[0];
    /* G_a = I, G_b = T(0,1,0): half of each */
    const float want[9] = {0, 0.5f, 0, 1, 0.5f, 0, 0, 1.5f, 0};
    for (int k = 0; k < 9; k++) cr_expect(fabsf(m->positions[k] - want[k]) < 1e-6f, "position %d: %g", k, (double)m->positions[k]);
    kiln_source_scene_free(&im.scene);
    free(b.data);
}

Test(import_shape, node_matrix_repairs_w11_and_duplicate_names_w12)
{
    const float shear[16] = {1, 0, 0, 0, 0.5f, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    const float projective[16] = {1, 0, 0, 0.5f, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    sf_buf b = {0};
    sf_head(&b, 0, 0);
    sf_u16(&b, 0);
    sf_no_blocks(&b);
    sf_u16(&b, 0);
    sf_node(&b, "root", NULL, 0, NULL, 0, 2);
    sf_node(&b, "x", shear, 0, NULL, 0, 0);
    sf_node(&b, "x", projective, 0, NULL, 0, 0);
    sf_u16(&b, 0);
    imported im;
    import_stream(&im, &b);
    expect_rules(&im, "W11 W12");
    const kiln_source_bone *x = &im.scene.models[0].skeleton->bones[1];
    double len = 0;
    for (int k = 0; k < 4; k++) len += (double)x->local_rotation[k] * x->local_rotation[k];
    cr_expect(fabs(len - 1) < 1e-6, "repaired rotation is a unit quaternion");
    cr_expect(fabsf(x->scale[1] - sqrtf(1.25f)) < 1e-6f, "scale = column length");
    kiln_source_scene_free(&im.scene);
    free(b.data);
}

Test(import_shape, strings_utf16_surrogates_inner_and_trailing_nuls)
{
    sf_buf b = {0};
    sf_head(&b, 1, 0);
    sf_u16(&b, 0);
    sf_no_blocks(&b);
    sf_u16(&b, 0);
    /* root "a\xD800" (unpaired) with children "ab\0c" (cut, W3) and "ab\0\0" (silent) and U+1F642 */
    const unsigned n0[2] = {'a', 0xD800};
    sf_units(&b, n0, 2);
    sf_floats(&b, sf_identity, 16);
    sf_u32(&b, 0);
    for (int i = 0; i < 2; i++) sf_f32(&b, 0);
    for (int i = 0; i < 4; i++) sf_u8(&b, 0);
    for (int i = 0; i < 13; i++) sf_f32(&b, 0);
    sf_u8(&b, 0);
    sf_u8(&b, 3);
    const unsigned names[3][4] = {{'a', 'b', 0, 'c'}, {'a', 'b', 0, 0}, {0xD83D, 0xDE42, 'x', 0}};
    for (int c = 0; c < 3; c++) {
        sf_units(&b, names[c], c == 2 ? 3 : 4);
        sf_floats(&b, sf_identity, 16);
        sf_u32(&b, 0);
        for (int i = 0; i < 2; i++) sf_f32(&b, 0);
        for (int i = 0; i < 4; i++) sf_u8(&b, 0);
        for (int i = 0; i < 13; i++) sf_f32(&b, 0);
        sf_u8(&b, 0);
        sf_u8(&b, 0);
    }
    sf_u16(&b, 0);
    imported im;
    import_stream(&im, &b);
    expect_rules(&im, "W3 W12");
    const kiln_source_bone *bones = im.scene.models[0].skeleton->bones;
    cr_expect_str_eq(bones[0].name, "a\xEF\xBF\xBD");
    cr_expect_str_eq(bones[1].name, "ab");
    cr_expect_str_eq(bones[2].name, "ab");
    cr_expect_str_eq(bones[3].name, "\xF0\x9F\x99\x82x");
    kiln_source_scene_free(&im.scene);
    free(b.data);
}

Test(import_shape, header_and_stream_level_rules)
{
    /* W2 (AllowEdit 2), W3 (invalid UTF-8 author), W1 (bytes after the last layer, then after the stream) */
    sf_buf b = {0};
    sf_u8(&b, 0);
    const unsigned author[2] = {'a', 0xFF};
    sf_units(&b, author, 2);
    sf_str(&b, "");
    sf_u8(&b, 2);
    for (int i = 0; i < 10; i++) sf_f32(&b, 0);
    sf_u16(&b, 0);
    sf_u16(&b, 0);
    sf_no_blocks(&b);
    sf_u16(&b, 0);
    sf_node(&b, "root", NULL, 0, NULL, 0, 0);
    sf_u16(&b, 0);
    sf_u8(&b, 0xAB);
    imported im;
    import_stream(&im, &b);
    expect_rules(&im, "W1 W2 W3");
    cr_expect_str_eq(im.scene.metadata.author, "a\xEF\xBF\xBD");
    kiln_source_scene_free(&im.scene);

    size_t size;
    unsigned char *file = sf_file(&b, &size);
    file = realloc(file, size + 3);
    memset(file + size, 0, 3);
    import_bytes(&im, file, size + 3, NULL);
    expect_rules(&im, "W1 W2 W3");
    kiln_source_scene_free(&im.scene);

    file[17] = 2; /* HasUnicodeStrings */
    import_bytes(&im, file, size, NULL);
    expect_reject(&im, "V8");
    kiln_source_scene_free(&im.scene);
    free(file);
    free(b.data);

    /* V10: 65535 properties cannot fit in the stream */
    sf_buf c = {0};
    sf_u8(&c, 0);
    sf_str(&c, "");
    sf_str(&c, "");
    sf_u8(&c, 0);
    for (int i = 0; i < 10; i++) sf_f32(&c, 0);
    sf_u16(&c, 0xFFFF);
    import_stream(&im, &c);
    expect_reject(&im, "V10");
    kiln_source_scene_free(&im.scene);
    free(c.data);
}

/* A root node "root" and one layer (header given) with the tracks written by `tracks`. */
static void sf_anim_file(sf_buf *b, unsigned processing, double duration, double kft, unsigned track_count)
{
    sf_head(b, 0, 0);
    sf_u16(b, 0);
    sf_no_blocks(b);
    sf_u16(b, 0);
    sf_node(b, "root", NULL, 0, NULL, 0, 0);
    sf_u16(b, 1);
    sf_layer(b, "", processing, duration, kft, track_count);
}

static const kiln_source_curve *find_curve(const kiln_source_animation *a, kiln_source_channel ch)
{
    for (uint32_t c = 0; c < a->curve_count; c++)
        if (a->curves[c].channel == ch) return &a->curves[c];
    return NULL;
}

static void expect_curve(const kiln_source_curve *c, const uint32_t *frames, const float *values, uint32_t n)
{
    cr_assert_not_null(c);
    cr_assert_eq(c->key_count, n, "%u keys, expected %u", c->key_count, n);
    for (uint32_t k = 0; k < n; k++) {
        cr_expect_eq(c->frames[k], frames[k], "key %u frame %u, expected %u", k, c->frames[k], frames[k]);
        cr_expect(fabsf(c->values[k] - values[k]) < 1e-6f, "key %u value %g, expected %g", k, (double)c->values[k], (double)values[k]);
    }
}

Test(import_shape, keys_are_sampled_at_integer_frames_and_held_to_the_last_frame)
{
    sf_buf b = {0};
    sf_anim_file(&b, 2, 120.0, 40.0, 1);
    sf_track(&b, "root", 2, 0, 0, 0);
    sf_key3(&b, 0, 0, 0, 0);
    sf_key3(&b, 80, 2, 0, 0);
    imported im;
    import_stream(&im, &b);
    expect_rules(&im, "");
    const kiln_source_animation *a = &im.scene.animations[0];
    cr_expect_str_eq(a->name, "layer0");
    cr_expect(fabsf(a->framerate - 25.0f) < 1e-6f);
    cr_expect_eq(a->looping, 1u);
    cr_expect_eq(a->curve_count, 3u);
    const uint32_t frames[3] = {0, 2, 3};
    const float tx[3] = {0, 2, 2};
    expect_curve(find_curve(a, KILN_SOURCE_CHANNEL_TX), frames, tx, 3);
    cr_expect_str_eq(find_curve(a, KILN_SOURCE_CHANNEL_TY)->target, "root");
    kiln_source_scene_free(&im.scene);
    free(b.data);
}

Test(import_shape, keys_between_frames_unsorted_and_after_duration_w14)
{
    sf_buf b = {0};
    sf_anim_file(&b, 1, 40.0, 40.0, 1);
    sf_track(&b, "root", 2, 0, 0, 1);
    sf_key3(&b, 60, 3, 0, 0); /* frame 1.5, after Duration, and before the next key in the file */
    sf_key3(&b, 0, 0, 0, 0);
    sf_event(&b, 20, "half"); /* frame 0.5 -> rounded to 1 */
    imported im;
    import_stream(&im, &b);
    expect_rules(&im, "W14");
    const kiln_source_animation *a = &im.scene.animations[0];
    const uint32_t frames[3] = {0, 1, 2};
    const float tx[3] = {0, 2, 3};
    expect_curve(find_curve(a, KILN_SOURCE_CHANNEL_TX), frames, tx, 3);
    cr_assert_eq(a->notification_count, 1u);
    cr_expect_str_eq(a->notifications[0].name, "half");
    cr_expect_eq(a->notifications[0].frames[0], 1u);
    cr_expect_eq(a->looping, 0u);
    kiln_source_scene_free(&im.scene);
    free(b.data);
}

Test(import_shape, tracks_w12_w13_rotations_w15_layer_header_w16_w17)
{
    sf_buf b = {0};
    sf_anim_file(&b, 9, -5.0, 0.0, 3);
    sf_track(&b, "root", 1, 0, 2, 0);
    sf_key3(&b, 0, 1, 0, 0);
    sf_key4(&b, 0, 0, 0, 0, 2);           /* length 2: normalised */
    sf_key4(&b, 1000.0 / 30.0, 0, 0, 0, 0); /* length 0: identity */
    sf_track(&b, "root", 1, 0, 0, 0);     /* the last track with position keys wins */
    sf_key3(&b, 0, 2, 0, 0);
    sf_track(&b, "nobody", 1, 0, 0, 2);   /* keys ignored, events kept */
    sf_key3(&b, 0, 9, 9, 9);
    sf_event(&b, 1000.0 / 30.0, "boom");
    sf_event(&b, 0, "boom");
    imported im;
    import_stream(&im, &b);
    expect_rules(&im, "W12 W13 W14 W15 W16 W17"); /* W14: keys after the repaired Duration 0 */
    const kiln_source_animation *a = &im.scene.animations[0];
    cr_expect(fabsf(a->framerate - 30.0f) < 1e-4f);
    cr_expect_eq(a->looping, 0u);
    const uint32_t f1[2] = {0, 1};
    const float tx[2] = {2, 2};
    expect_curve(find_curve(a, KILN_SOURCE_CHANNEL_TX), f1, tx, 2);
    const kiln_source_curve *r = find_curve(a, KILN_SOURCE_CHANNEL_ROTATION);
    cr_assert_not_null(r);
    cr_assert_eq(r->key_count, 2u);
    for (int k = 0; k < 8; k++) cr_expect(fabsf(r->values[k] - (k % 4 == 3 ? 1.0f : 0.0f)) < 1e-6f);
    cr_assert_eq(a->notification_count, 1u);
    cr_expect_eq(a->notifications[0].key_count, 2u);
    cr_expect_eq(a->notifications[0].frames[0], 0u);
    cr_expect_eq(a->notifications[0].frames[1], 1u);
    kiln_source_scene_free(&im.scene);
    free(b.data);
}

Test(import_shape, key_frame_times_without_a_usable_float_rate_are_w16)
{
    static const double kfts[3] = {1e-300, 1e300, -INFINITY};
    for (int k = 0; k < 3; k++) {
        sf_buf b = {0};
        sf_anim_file(&b, 0, 0.0, kfts[k], 0);
        imported im;
        import_stream(&im, &b);
        expect_rules(&im, "W16");
        cr_expect(fabsf(im.scene.animations[0].framerate - 30.0f) < 1e-4f, "KeyFrameTime %g: %g fps", kfts[k],
                  (double)im.scene.animations[0].framerate);
        kiln_source_scene_free(&im.scene);
        free(b.data);
    }
}

Test(import_shape, clip_length_limit_is_2_pow_20_frames)
{
    for (int over = 0; over < 2; over++) {
        sf_buf b = {0};
        sf_anim_file(&b, 0, (1048576.0 + over) * 2.0, 2.0, 0);
        imported im;
        import_stream(&im, &b);
        if (over) {
            expect_reject(&im, "V16");
        } else {
            expect_rules(&im, "");
            /* no tracks: the clip keeps its Duration through a curve holding the root's rest */
            const kiln_source_animation *a = &im.scene.animations[0];
            cr_assert_eq(a->curve_count, 1u);
            cr_expect_eq(a->curves[0].key_count, 2u);
            cr_expect_eq(a->curves[0].frames[1], 1048576u);
            cr_expect_eq(a->curves[0].values[7], 1.0f);
        }
        kiln_source_scene_free(&im.scene);
        free(b.data);
    }
}

Test(import_shape, zlib_stream_that_does_not_inflate_to_decoded_size_is_v6)
{
    char dir[1000];
    shape_dir_or_skip(dir, sizeof dir);
    file_bytes f;
    if (!corpus_read(dir, "zlib_stream.Shape", &f)) cr_skip_test("no zlib_stream.Shape");
    imported im;
    f.data[9] = (unsigned char)(f.data[9] - 1); /* DecodedSize one less */
    import_bytes(&im, f.data, f.size, NULL);
    expect_reject(&im, "V6");
    kiln_source_scene_free(&im.scene);
    f.data[9] = (unsigned char)(f.data[9] + 1);
    f.data[f.size / 2] ^= 0x55; /* damaged deflate data or checksum */
    import_bytes(&im, f.data, f.size, NULL);
    expect_reject(&im, "V6");
    kiln_source_scene_free(&im.scene);
    file_bytes_free(&f);
}

/* Every prefix of a stream (sizes in the header made consistent) is rejected as truncated (V7,
 * or V10 when an array left half-read is larger than the whole shortened stream), and
 * every single-byte change of a file either loads or is rejected with a rule: never a crash. */
Test(import_shape, every_stream_prefix_is_rejected_and_byte_flips_never_crash)
{
    char dir[1000];
    shape_dir_or_skip(dir, sizeof dir);
    static const char *const files[2] = {"skinned_bind.Shape", "all_blocks.Shape"};
    for (int fi = 0; fi < 2; fi++) {
        file_bytes f;
        if (!corpus_read(dir, files[fi], &f)) continue;
        unsigned char *copy = malloc(f.size);
        for (size_t len = 17; len < f.size; len++) {
            memcpy(copy, f.data, len);
            for (int i = 0; i < 4; i++) copy[9 + i] = copy[13 + i] = (unsigned char)((len - 17) >> (8 * i));
            imported im;
            import_bytes(&im, copy, len, NULL);
            cr_expect_neq(im.result, KILN_OK, "%s: prefix of %zu bytes loaded", files[fi], len);
            /* V10 where the cut leaves an array larger than the whole (shorter) stream */
            if (im.result != KILN_OK)
                cr_expect(strcmp(im.err.rule, "V7") == 0 || strcmp(im.err.rule, "V10") == 0, "%s: prefix %zu: %s",
                          files[fi], len, im.err.message);
            kiln_source_scene_free(&im.scene);
        }
        for (size_t at = 0; at < f.size; at += 3) {
            memcpy(copy, f.data, f.size);
            copy[at] ^= (unsigned char)(0x81 + at % 64);
            imported im;
            import_bytes(&im, copy, f.size, NULL);
            if (im.result != KILN_OK) cr_expect(im.err.rule[0] || im.err.code == KILN_ERR_OUT_OF_MEMORY, "flip at %zu: no rule", at);
            kiln_source_scene_free(&im.scene);
        }
        free(copy);
        file_bytes_free(&f);
    }
}

Test(import_shape, tangents_follow_the_uv_gradient_with_their_sign)
{
    /* One triangle in the XY plane, normal +Z, u = x; v = y (sign +1) or v = -y (sign -1). */
    for (int flip = 0; flip < 2; flip++) {
        sf_buf b = {0};
        sf_head(&b, 0, 0);
        sf_u16(&b, 0);
        sf_no_blocks(&b);
        sf_u16(&b, 1);
        sf_u32(&b, 4);
        sf_u16(&b, 0xFFFF);
        sf_u8(&b, 1); sf_u8(&b, 1); sf_u8(&b, 0);
        sf_u8(&b, 0);
        sf_u8(&b, 6); sf_u32(&b, 3); sf_floats(&b, tri_pos, 9);
        const float n[9] = {0, 0, 1, 0, 0, 1, 0, 0, 1};
        sf_u8(&b, 6); sf_u32(&b, 3); sf_floats(&b, n, 9);
        const float uv[6] = {0, 0, 1, 0, 0, flip ? -1.0f : 1.0f};
        sf_u8(&b, 16); sf_u32(&b, 3); sf_floats(&b, uv, 6);
        sf_u8(&b, 0); sf_u32(&b, 0);
        const uint16_t g = 0;
        sf_node(&b, "root", NULL, 0, &g, 1, 0);
        sf_u16(&b, 0);
        imported im;
        import_stream(&im, &b);
        expect_rules(&im, "");
        const kiln_source_mesh *m = &im.scene.models[0].meshes[0];
        cr_assert_not_null(m->tangents);
        cr_assert_not_null(m->tangent_signs);
        for (uint32_t v = 0; v < 3; v++) {
            cr_expect(fabsf(m->tangents[3 * v] - 1.0f) < 1e-6f && fabsf(m->tangents[3 * v + 1]) < 1e-6f &&
                          fabsf(m->tangents[3 * v + 2]) < 1e-6f, "vertex %u tangent", v);
            cr_expect_eq(m->tangent_signs[v], flip ? -1.0f : 1.0f, "vertex %u sign", v);
        }
        kiln_source_scene_free(&im.scene);
        free(b.data);
    }
}

Test(import_shape, out_of_scope_blocks_become_extras_and_w18_never_rejects)
{
    sf_buf b = {0};
    sf_u8(&b, 0);
    sf_str(&b, "");
    sf_str(&b, "");
    sf_u8(&b, 0);
    for (int i = 0; i < 10; i++) sf_f32(&b, i == 3 ? NAN : 0.0f); /* file volume: W18 */
    sf_u16(&b, 1);
    sf_str(&b, "key");
    sf_str(&b, "value");
    sf_u16(&b, 0); /* materials */
    sf_u16(&b, 1); /* a light of type 9 naming lens flare 3 */
    sf_str(&b, "lamp");
    sf_str(&b, "");
    sf_u8(&b, 9);
    for (int i = 0; i < 19; i++) sf_f32(&b, 1.0f);
    sf_u16(&b, 3);
    sf_u16(&b, 0); /* lens flares */
    sf_u8(&b, 1);  /* a camera with an infinite FOV */
    sf_str(&b, "cam");
    for (int i = 0; i < 8; i++) sf_f32(&b, i == 7 ? INFINITY : 0.0f);
    sf_u8(&b, 0);  /* anchors */
    sf_u8(&b, 2);  /* sub shapes: one without a name, one with a NaN position */
    sf_str(&b, "");
    sf_str(&b, "parts\\wheel.big.Shape");
    const float tr[9] = {1, 2, 3, 0, 0, 0, 1, 1, 1};
    sf_floats(&b, tr, 9);
    sf_str(&b, "broken");
    sf_str(&b, "x.Shape");
    const float bad[9] = {NAN, 0, 0, 0, 0, 0, 1, 1, 1};
    sf_floats(&b, bad, 9);
    sf_u8(&b, 1); /* a script with one argument */
    sf_str(&b, "a.sgs");
    sf_str(&b, "run()");
    sf_u16(&b, 1);
    sf_str(&b, "speed");
    sf_str(&b, "2");
    sf_u8(&b, 0); /* sounds */
    sf_u16(&b, 0);
    sf_node(&b, "root", NULL, 0, NULL, 0, 0);
    sf_u16(&b, 0);
    imported im;
    import_stream(&im, &b);
    expect_rules(&im, "W18");
    const kiln_source_scene *sc = &im.scene;
    cr_assert_eq(sc->instance_count, 1u);
    cr_expect_str_eq(sc->instances[0].name, "wheel.big");
    cr_expect_str_eq(sc->instances[0].path, "parts\\wheel.big.Shape");
    cr_expect_eq(sc->instances[0].rotation[3], 1.0f);
    cr_expect_str_eq(sc->metadata.scene_root, ".", "sub shapes resolve against the file's directory");
    static const char *const kinds[4] = {"property", "light", "camera", "script"};
    for (int k = 0; k < 4; k++) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < sc->extra_count; i++) n += strcmp(sc->extras[i].kind, kinds[k]) == 0;
        cr_expect_eq(n, 1u, "%u %s extras", n, kinds[k]);
    }
    kiln_source_scene_free(&im.scene);
    free(b.data);
}

Test(import_shape, node_matrix_whose_scale_overflows_a_float_is_v14)
{
    const float big[16] = {3e38f, 3e38f, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}; /* |column 0| > FLT_MAX */
    sf_buf b = {0};
    sf_head(&b, 0, 0);
    sf_u16(&b, 0);
    sf_no_blocks(&b);
    sf_u16(&b, 0);
    sf_node(&b, "root", big, 0, NULL, 0, 0);
    sf_u16(&b, 0);
    imported im;
    import_stream(&im, &b);
    expect_reject(&im, "V14");
    kiln_source_scene_free(&im.scene);
    free(b.data);
}

Test(import_shape, node_tree_limits_256_levels_and_65535_nodes_v13)
{
    /* a chain of 256 nodes loads; 257 is V13 */
    for (int extra = 0; extra < 2; extra++) {
        sf_buf b = {0};
        sf_head(&b, 0, 0);
        sf_u16(&b, 0);
        sf_no_blocks(&b);
        sf_u16(&b, 0);
        int depth = 256 + extra;
        for (int d = 0; d < depth; d++) sf_node(&b, "n", NULL, 0, NULL, 0, d + 1 < depth ? 1 : 0);
        sf_u16(&b, 0);
        imported im;
        import_stream(&im, &b);
        if (extra) {
            expect_reject(&im, "V13");
        } else {
            expect_rules(&im, "W12");
            cr_expect_eq(im.scene.models[0].skeleton->bone_count, 256u);
        }
        kiln_source_scene_free(&im.scene);
        free(b.data);
    }
    /* 1 + 255 + 255 * 255 = 65281 nodes, plus 255 under the first grandchild = 65536: V13 */
    sf_buf b = {0};
    sf_head(&b, 0, 0);
    sf_u16(&b, 0);
    sf_no_blocks(&b);
    sf_u16(&b, 0);
    sf_node(&b, "", NULL, 0, NULL, 0, 255);
    for (int c = 0; c < 255; c++) {
        sf_node(&b, "", NULL, 0, NULL, 0, 255);
        for (int g = 0; g < 255; g++) {
            sf_node(&b, "", NULL, 0, NULL, 0, c == 0 && g == 0 ? 255 : 0);
            if (c == 0 && g == 0)
                for (int k = 0; k < 255; k++) sf_node(&b, "", NULL, 0, NULL, 0, 0);
        }
    }
    sf_u16(&b, 0);
    imported im;
    import_stream(&im, &b);
    expect_reject(&im, "V13");
    kiln_source_scene_free(&im.scene);
    free(b.data);
}

/* ---- end to end: `kiln pose --json` on every good case with frames ---------------------------- */
Test(import_shape, kiln_pose_gives_the_expected_bone_matrices_at_every_listed_frame)
{
    char dir[1000];
    shape_dir_or_skip(dir, sizeof dir);
    jr_value *cases = corpus_json(dir, "cases.json");
    cr_assert_not_null(cases);
    const jr_value *good = jr_get(cases, "good");
    int posed = 0;
    for (size_t i = 0; i < jr_len(good); i++) {
        const jr_value *c = jr_at(good, i);
        const char *cs = jr_str(jr_get(c, "case"));
        cr_assert_not_null(cs, "good case %zu has no name", i);
        jr_value *exp = corpus_json(dir, jr_str(jr_get(c, "expected")));
        cr_assert_not_null(exp, "%s: no expected file", cs);
        const jr_value *frames = jr_get(exp, "frames");
        const char *clip = jr_str(jr_get(jr_get(exp, "clip"), "name"));
        if (!jr_len(frames) || !clip) {
            jr_free(exp);
            continue;
        }
        char model[1100], anim[1100], list[8192] = "";
        const char *model_name = jr_str(jr_get(jr_get(exp, "files"), "model"));
        const char *anim_name = jr_str(jr_get(jr_get(exp, "files"), "anim"));
        snprintf(model, sizeof model, "%s/%s", dir, model_name ? model_name : jr_str(jr_get(c, "file")));
        if (anim_name) snprintf(anim, sizeof anim, "%s/%s", dir, anim_name);
        size_t used = 0;
        for (size_t k = 0; k < jr_len(frames) && used < sizeof list - 32; k++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%.6f", k ? "," : "",
                                     jr_num(jr_get(jr_at(frames, k), "frame")));
        const char *args[10];
        int n = 0;
        args[n++] = "pose";
        args[n++] = "--json";
        args[n++] = model;
        if (anim_name) args[n++] = anim;
        args[n++] = "--clip";
        args[n++] = clip;
        args[n++] = "--frames";
        args[n++] = list;
        args[n] = NULL;
        cli_result r = cli_run(args);
        cr_expect_eq(r.status, 0, "%s: kiln pose exit %d: %s", cs, r.status, r.err);
        char perr[160];
        jr_value *doc = r.status == 0 ? jr_parse(r.out, strlen(r.out), perr, sizeof perr) : NULL;
        if (doc) {
            double tol = tol_of(exp, "matrix", 1e-4);
            const jr_value *joints = jr_get(doc, "joints"), *out = jr_get(doc, "frames");
            cr_expect_str_eq(jr_str(jr_get(doc, "clip")), clip, "%s: clip", cs);
            cr_assert_eq(jr_len(out), jr_len(frames), "%s: %zu frames printed", cs, jr_len(out));
            for (size_t k = 0; k < jr_len(frames); k++) {
                const jr_value *ef = jr_at(frames, k), *of = jr_at(out, k);
                double f = jr_num(jr_get(ef, "frame"));
                const jr_value *bones = jr_get(ef, "bones");
                for (size_t b = 0; b < jr_len(bones); b++) {
                    const char *name = jr_key(bones, b);
                    size_t j = 0;
                    while (j < jr_len(joints) && strcmp(jr_str(jr_at(joints, j)), name ? name : "") != 0) j++;
                    cr_expect(j < jr_len(joints), "%s: no joint %s", cs, name ? name : "?");
                    if (j >= jr_len(joints)) continue;
                    const jr_value *m = jr_at(jr_get(of, "model"), j);
                    double col[16];
                    for (int e = 0; e < 16; e++) col[e] = jr_num(jr_at(m, (size_t)e));
                    char what[300];
                    snprintf(what, sizeof what, "%s: kiln pose frame %g bone %s", cs, f, name ? name : "?");
                    expect_matrix(what, jr_get(jr_at(bones, b), "model"), col, tol);
                }
            }
            posed++;
        } else if (r.status == 0) {
            cr_expect_fail("%s: kiln pose printed no JSON: %s", cs, perr);
        }
        jr_free(doc);
        cli_result_free(&r);
        jr_free(exp);
    }
    cr_expect(posed > 0, "no good case with frames");
    jr_free(cases);
}

Test(import_shape, registered_and_detected_by_its_identifier)
{
    const kiln_importer *shape = kiln_importer_find("shape");
    cr_assert_not_null(shape);
    cr_expect_eq(shape->import, kiln__import_shape);
    static const unsigned char head[17] = {5, 'S', 'H', 'A', 'P', 'E', 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    cr_expect_eq(kiln_importer_detect(head, sizeof head), shape);
    cr_expect_eq(kiln_importer_detect(head, 6), shape, "the identifier alone is enough to detect");
    cr_expect_neq(kiln_importer_detect(head + 1, 16), shape, "SHAPE without its length byte is not detected");
    /* through kiln_source_import: detection, import and validation */
    sf_buf b = {0};
    sf_simple(&b, 4, 0, 0, 0xFFFF, NULL, 0);
    size_t size;
    unsigned char *file = sf_file(&b, &size);
    kiln_source_scene scene;
    kiln_diag err;
    kiln_import_options opt;
    memset(&opt, 0, sizeof opt);
    cr_expect_eq(kiln_source_import(file, size, "a/b.Shape", NULL, &opt, &scene, &err), KILN_OK, "%s", err.message);
    cr_expect_str_eq(scene.format, "shape");
    kiln_source_scene_free(&scene);
    file[8] = 7; /* the error names its rule */
    cr_expect_eq(kiln_source_import(file, size, "a/b.Shape", NULL, &opt, &scene, &err), KILN_ERR_IMPORT_UNSUPPORTED);
    cr_expect_str_eq(err.rule, "V4");
    free(file);
    free(b.data);
}

Test(import_shape, undecodable_formats_and_empty_geometry_w4)
{
    /* geometry 0: normals as R16G16B16A16_FLOAT (sized, not decoded): the normals are dropped;
     * geometry 1: positions as R32G32B32A32_FLOAT: not imported; geometry 2: no positions. */
    sf_buf b = {0};
    sf_head(&b, 0, 0);
    sf_u16(&b, 0);
    sf_no_blocks(&b);
    sf_u16(&b, 3);
    sf_u32(&b, 4); sf_u16(&b, 0xFFFF); sf_u8(&b, 1); sf_u8(&b, 0); sf_u8(&b, 0); sf_u8(&b, 0);
    sf_u8(&b, 6); sf_u32(&b, 3); sf_floats(&b, tri_pos, 9);
    sf_u8(&b, 10); sf_u32(&b, 3); for (int i = 0; i < 6; i++) sf_u32(&b, 0x3C003C00u);
    sf_u8(&b, 0); sf_u32(&b, 0);
    sf_u32(&b, 4); sf_u16(&b, 0xFFFF); sf_u8(&b, 0); sf_u8(&b, 0); sf_u8(&b, 0); sf_u8(&b, 0);
    sf_u8(&b, 2); sf_u32(&b, 3); for (int i = 0; i < 12; i++) sf_f32(&b, 1.0f);
    sf_u8(&b, 0); sf_u32(&b, 0);
    sf_geometry(&b, 4, 0xFFFF, tri_pos, 0, NULL, 0);
    const uint16_t refs[3] = {0, 1, 2};
    sf_node(&b, "root", NULL, 0, refs, 3, 0);
    sf_u16(&b, 0);
    imported im;
    import_stream(&im, &b);
    expect_rules(&im, "W4");
    const kiln_source_model *m = &im.scene.models[0];
    cr_assert_eq(m->mesh_count, 1u);
    cr_expect_str_eq(m->meshes[0].name, "root#0");
    cr_expect_null(m->meshes[0].normals);
    cr_expect_null(m->meshes[0].tangents);
    kiln_source_scene_free(&im.scene);
    free(b.data);
}
