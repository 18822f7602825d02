/* The *.Shape importer against the shared corpus (corpus/shape: cases.json, the expected JSON files,
 * bad/), read at run time so further cases drop in unchanged, plus hand-made streams for the
 * rules the corpus does not reach. Skips cleanly when the corpus is absent. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/shape/shape.h"
#include "kiln/bake/source.h"
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
        }
        cr_expect_not_null(exp, "%s: no expected file", cs);
        jr_free(exp);
        kiln_source_scene_free(&im.scene);
    }
    jr_free(cases);
}
