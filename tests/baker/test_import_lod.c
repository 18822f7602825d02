/* The LODka3D *.lod importer against the shared corpus (shared/corpus/lod): every good case of
 * cases.json imports with exactly its warnings and matches expected/<case>.json (skeleton and
 * rest pose, meshes corner by corner with skin weights, materials, extras, and the clip's bone
 * model matrices at every listed frame, sampled from the imported curves); every file in bad/
 * gets the outcome its MANIFEST.md row names. Cases are read at run time, so new files in the
 * same layout are picked up unchanged. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lod/lod_import.h"
#include "kiln/bake/source.h"
#include "test_util.h"

/* ---- diagnostics: the distinct rules reported --------------------------------------------- */

typedef struct rule_log {
    char rules[64][16];
    int  count;
    int  total;
    int  bad_text;   /* a diag without a message */
} rule_log;

static void rule_log_push(void *user, const kiln_diag *d)
{
    rule_log *log = user;
    log->total++;
    if (!d->message[0] || !d->rule[0]) log->bad_text++;
    for (int i = 0; i < log->count; i++)
        if (strcmp(log->rules[i], d->rule) == 0) return;
    if (log->count < 64) snprintf(log->rules[log->count++], 16, "%s", d->rule);
}

static int rule_log_has(const rule_log *log, const char *rule)
{
    for (int i = 0; i < log->count; i++)
        if (strcmp(log->rules[i], rule) == 0) return 1;
    return 0;
}

/* "ok", "ok-with-warning: W5, W7", "reject: R3" -> kind and the list of rules. */
typedef struct outcome {
    char kind[24];
    char rules[16][16];
    int  count;
} outcome;

static void parse_outcome(const char *s, outcome *o)
{
    memset(o, 0, sizeof *o);
    while (*s == ' ') s++;
    size_t k = strcspn(s, ":");
    snprintf(o->kind, sizeof o->kind, "%.*s", (int)k, s);
    while (o->kind[0] && o->kind[strlen(o->kind) - 1] == ' ') o->kind[strlen(o->kind) - 1] = 0;
    if (!s[k]) return;
    s += k + 1;
    while (*s && o->count < 16) {
        while (*s == ' ' || *s == ',') s++;
        size_t n = strcspn(s, ", \n\r");
        if (!n) break;
        snprintf(o->rules[o->count++], 16, "%.*s", (int)n, s);
        s += n;
    }
}

static void lod_dir(char *dir, size_t cap)
{
    char base[900];
    corpus_dir_or_skip(base, sizeof base);
    snprintf(dir, cap, "%s/lod", base);
    struct stat st;
    if (stat(dir, &st) != 0) cr_skip_test("no LOD corpus at %s: skipping", dir);
}

static kiln_result import_file(const char *dir, const char *name, kiln_source_scene *scene, kiln_diag *err,
                               rule_log *log, size_t *size)
{
    file_bytes f;
    cr_assert(corpus_read(dir, name, &f), "cannot read %s/%s", dir, name);
    kiln_import_options opt;
    memset(&opt, 0, sizeof opt);
    opt.diag.fn = rule_log_push;
    opt.diag.user = log;
    kiln_source_scene_init(scene, NULL);
    cr_assert(kiln__detect_lod(f.data, f.size) == (f.size >= 8 && memcmp(f.data, "LODka3D1", 8) == 0));
    kiln_result r = kiln__import_lod(f.data, f.size, name, &opt, scene, err);
    if (size) *size = f.size;
    file_bytes_free(&f);
    return r;
}

/* ---- bad files -------------------------------------------------------------------------------- */

Test(import_lod, bad_files_get_their_manifest_outcome)
{
    char dir[1024], bad[1100];
    lod_dir(dir, sizeof dir);
    snprintf(bad, sizeof bad, "%s/bad", dir);
    file_bytes man;
    if (!corpus_read(bad, "MANIFEST.md", &man)) cr_skip_test("no bad/MANIFEST.md in %s", bad);
    char *text = malloc(man.size + 1);
    memcpy(text, man.data, man.size);
    text[man.size] = 0;
    file_bytes_free(&man);

    int rows = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        /* - `name.lod` (N bytes): what is wrong -> outcome */
        if (strncmp(line, "- `", 3) != 0) continue;
        char *end = strchr(line + 3, '`');
        char *arrow = NULL; /* the last "-> ": descriptions may hold arrows too */
        for (char *a = strstr(line, "-> "); a; a = strstr(a + 1, "-> ")) arrow = a;
        if (!end || !arrow) continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(end - line - 3), line + 3);
        outcome o;
        parse_outcome(arrow + 3, &o);
        rows++;

        kiln_source_scene scene;
        kiln_diag err;
        rule_log log;
        memset(&log, 0, sizeof log);
        size_t size = 0;
        kiln_result r = import_file(bad, name, &scene, &err, &log, &size);
        cr_expect_eq(log.bad_text, 0, "%s: a diagnostic without message or rule", name);
        if (strcmp(o.kind, "reject") == 0) {
            cr_expect_neq(r, KILN_OK, "%s: expected reject %s, but it loaded", name, o.rules[0]);
            if (r != KILN_OK) {
                cr_expect_str_eq(err.rule, o.rules[0], "%s: rejected with %s (%s), expected %s", name, err.rule,
                                 err.message, o.rules[0]);
                cr_expect_eq(err.code >= KILN_ERR_IMPORT_TRUNCATED && err.code <= KILN_ERR_IMPORT_REPAIRED, 1,
                             "%s: code %s is not an import code", name, kiln_result_name(err.code));
                cr_expect_eq(err.severity, KILN_SEVERITY_ERROR);
                cr_expect(err.message[0] != 0 && err.path[0] != 0, "%s: message '%s' at '%s'", name, err.message,
                          err.path);
                cr_expect(err.offset <= size, "%s: offset %llu past the file", name, (unsigned long long)err.offset);
            }
        } else {
            cr_expect_eq(r, KILN_OK, "%s: expected to load, got %s: %s", name, kiln_result_name(r), err.message);
            for (int i = 0; i < o.count; i++) cr_expect(rule_log_has(&log, o.rules[i]), "%s: %s not reported", name, o.rules[i]);
            for (int i = 0; i < log.count; i++) {
                int listed = 0;
                for (int k = 0; k < o.count; k++) listed |= strcmp(o.rules[k], log.rules[i]) == 0;
                cr_expect(listed, "%s: unexpected warning %s", name, log.rules[i]);
            }
        }
        kiln_source_scene_free(&scene);
    }
    free(text);
    cr_expect_gt(rows, 0, "no rows in bad/MANIFEST.md");
}

/* ---- good cases ------------------------------------------------------------------------------ */

static const char *jstr(const jr_value *v)
{
    const char *s = jr_str(v);
    return s ? s : "";
}

static int near(double a, double b, double tol) { return fabs(a - b) <= tol; }

static const kiln_source_extra *find_extra(const kiln_source_scene *s, const char *kind, const char *name, int nth)
{
    for (uint32_t i = 0; i < s->extra_count; i++) {
        const kiln_source_extra *e = &s->extras[i];
        if (strcmp(e->kind, kind) != 0) continue;
        if (name && (!e->name || strcmp(e->name, name) != 0)) continue;
        if (nth-- == 0) return e;
    }
    return NULL;
}

static uint32_t count_extras(const kiln_source_scene *s, const char *kind)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->extra_count; i++) n += strcmp(s->extras[i].kind, kind) == 0;
    return n;
}

static const kiln_source_material_slot *find_slot(const kiln_source_material *m, const char *name)
{
    for (uint32_t i = 0; i < m->slot_count; i++)
        if (strcmp(m->slots[i].name, name) == 0) return &m->slots[i];
    return NULL;
}

/* Column-vector 4x4 in row-major m[r][c]: T(t) * R(q). */
static void trs(const double t[3], const double q[4], double m[4][4])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double n = sqrt(x * x + y * y + z * z + w * w);
    x /= n, y /= n, z /= n, w /= n;
    double r[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                      {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                      {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
    memset(m, 0, 16 * sizeof(double));
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) m[i][j] = r[i][j];
        m[i][3] = t[i];
    }
    m[3][3] = 1;
}

static void mul(double a[4][4], double b[4][4], double out[4][4])
{
    double o[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            o[i][j] = 0;
            for (int k = 0; k < 4; k++) o[i][j] += a[i][k] * b[k][j];
        }
    memcpy(out, o, sizeof o);
}

static void expect_matrix(const jr_value *rows, double m[4][4], double tol, const char *what)
{
    cr_assert_eq(jr_len(rows), 4, "%s: model matrix", what);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double e = jr_num(jr_at(jr_at(rows, (size_t)i), (size_t)j));
            cr_expect(near(m[i][j], e, tol), "%s: model[%d][%d] = %.9g, expected %.9g", what, i, j, m[i][j], e);
        }
}

static void expect_quat(const float *q, const jr_value *e, double tol, const char *what)
{
    double d = 0;
    for (int i = 0; i < 4; i++) d += q[i] * jr_num(jr_at(e, (size_t)i));
    double s = d < 0 ? -1 : 1;
    for (int i = 0; i < 4; i++)
        cr_expect(near(s * q[i], jr_num(jr_at(e, (size_t)i)), tol), "%s: rotation[%d] = %.9g, expected %.9g", what, i,
                  s * q[i], jr_num(jr_at(e, (size_t)i)));
}

static void check_skeleton(const kiln_source_scene *s, const jr_value *exp, const char *name)
{
    const kiln_source_skeleton *sk = s->models[0].skeleton;
    uint32_t n = sk ? sk->bone_count : 0;
    cr_assert_eq(n, jr_len(exp), "%s: %u bones, expected %zu", name, n, jr_len(exp));
    double (*model)[4][4] = calloc(n ? n : 1, sizeof *model);
    for (uint32_t i = 0; i < n; i++) {
        const jr_value *b = jr_at(exp, i);
        const kiln_source_bone *bone = &sk->bones[i];
        char what[300];
        snprintf(what, sizeof what, "%s: bone %u '%s'", name, i, jstr(jr_get(b, "name")));
        cr_expect_str_eq(bone->name, jr_str(jr_get(b, "name")), "%s: name '%s'", what, bone->name);
        cr_expect_eq(bone->parent, (int32_t)jr_num(jr_get(b, "parent")), "%s: parent %d", what, bone->parent);
        for (int k = 0; k < 3; k++)
            cr_expect(near(bone->local_position[k], jr_num(jr_at(jr_get(b, "local_t"), (size_t)k)), 1e-5), "%s: t[%d]",
                      what, k);
        expect_quat(bone->local_rotation, jr_get(b, "local_r"), 1e-5, what);
        double t[3], q[4], l[4][4];
        for (int k = 0; k < 3; k++) t[k] = bone->local_position[k];
        for (int k = 0; k < 4; k++) q[k] = bone->local_rotation[k];
        trs(t, q, l);
        if (bone->parent >= 0) mul(model[bone->parent], l, model[i]);
        else memcpy(model[i], l, sizeof l);
        expect_matrix(jr_get(b, "model"), model[i], 1e-4, what);
    }
    free(model);
}

static const char *material_name(const kiln_source_model *m, uint32_t index)
{
    return index == KILN_SOURCE_NONE ? NULL : m->materials[index].name;
}

static void check_meshes(const kiln_source_scene *s, const jr_value *exp, double tol, const char *name)
{
    const kiln_source_model *model = &s->models[0];
    cr_assert_eq(model->mesh_count, jr_len(exp), "%s: %u meshes, expected %zu", name, model->mesh_count, jr_len(exp));
    for (uint32_t i = 0; i < model->mesh_count; i++) {
        const kiln_source_mesh *m = &model->meshes[i];
        const jr_value *e = jr_at(exp, i);
        const char *ename = jr_str(jr_get(e, "name"));
        cr_expect_str_eq(m->name, ename, "%s: mesh %u name '%s'", name, i, m->name);
        const char *mat = material_name(model, m->material), *emat = jr_str(jr_get(e, "material"));
        cr_expect((!mat && !emat) || (mat && emat && strcmp(mat, emat) == 0), "%s: mesh %s material %s, expected %s",
                  name, ename, mat ? mat : "null", emat ? emat : "null");
        cr_expect_eq(m->face_count, (uint32_t)jr_num(jr_get(e, "triangle_count")), "%s: mesh %s triangles", name, ename);

        /* visibility and the second material: the mesh's extra */
        const kiln_source_extra *x = find_extra(s, "mesh", m->name, 0);
        cr_assert_not_null(x, "%s: no 'mesh' extra for %s", name, ename);
        char want[512];
        const char *second = jr_str(jr_get(e, "second_material"));
        snprintf(want, sizeof want, "visible %s, second material %s,", jr_bool(jr_get(e, "visible"), 1) ? "yes" : "no",
                 second ? second : "(none)");
        cr_expect(strncmp(x->detail, want, strlen(want)) == 0, "%s: mesh %s extra '%s', expected '%s...'", name, ename,
                  x->detail, want);

        const jr_value *layout = jr_get(e, "corner_layout");
        int has[4] = {0, 0, 0, 0};
        static const char *const attrs[4] = {"position", "normal", "uv0", "uv1"};
        for (size_t k = 0; k < jr_len(layout); k++)
            for (int a = 0; a < 4; a++) has[a] |= strcmp(jr_str(jr_at(layout, k)), attrs[a]) == 0;
        cr_expect_eq(m->normals != NULL, has[1], "%s: mesh %s normals present %d", name, ename, m->normals != NULL);
        const float *uv0 = m->uv_layer_count > 0 ? m->uv[0] : NULL, *uv1 = m->uv_layer_count > 1 ? m->uv[1] : NULL;
        cr_expect_eq(uv0 != NULL, has[2], "%s: mesh %s uv0", name, ename);
        cr_expect_eq(uv1 != NULL, has[3], "%s: mesh %s uv1", name, ename);

        const jr_value *corners = jr_get(e, "corners"), *skin = jr_get(e, "skin");
        cr_assert_eq(jr_len(corners), (size_t)m->face_count * 3, "%s: mesh %s corners", name, ename);
        int failures = 0;
        for (size_t k = 0; k < jr_len(corners) && failures < 5; k++) {
            uint32_t v = m->faces[k];
            cr_assert_lt(v, m->vertex_count);
            float got[10];
            int n = 0;
            for (int j = 0; j < 3; j++) got[n++] = m->positions[v * 3 + j];
            if (has[1] && m->normals)
                for (int j = 0; j < 3; j++) got[n++] = m->normals[v * 3 + j];
            if (has[2] && uv0)
                for (int j = 0; j < 2; j++) got[n++] = uv0[v * 2 + j];
            if (has[3] && uv1)
                for (int j = 0; j < 2; j++) got[n++] = uv1[v * 2 + j];
            const jr_value *c = jr_at(corners, k);
            cr_expect_eq((size_t)n, jr_len(c), "%s: mesh %s corner %zu has %d values", name, ename, k, n);
            for (int j = 0; j < n && (size_t)j < jr_len(c); j++)
                if (!near(got[j], jr_num(jr_at(c, (size_t)j)), tol)) {
                    cr_expect(0, "%s: mesh %s corner %zu value %d = %.9g, expected %.9g", name, ename, k, j, got[j],
                              jr_num(jr_at(c, (size_t)j)));
                    failures++;
                }
            if (!jr_is_arr(skin)) continue;
            const jr_value *es = jr_at(skin, k);
            uint32_t used = 0;
            for (uint32_t j = 0; j < m->max_influence; j++) {
                float w = m->weight_values ? m->weight_values[(size_t)v * m->max_influence + j] : 1.0f;
                if (w <= 0) continue;
                const jr_value *pair = jr_at(es, used++);
                uint32_t b = m->weight_bones[(size_t)v * m->max_influence + j];
                cr_assert_lt(b, model->skeleton->bone_count);
                const char *bn = model->skeleton->bones[b].name, *eb = jr_str(jr_at(pair, 0));
                if (!eb || strcmp(bn, eb) != 0 || !near(w, jr_num(jr_at(pair, 1)), tol)) {
                    cr_expect(0, "%s: mesh %s corner %zu influence %u = (%s, %.9g), expected (%s, %.9g)", name, ename, k,
                              used - 1, bn, w, eb ? eb : "none", jr_num(jr_at(pair, 1)));
                    failures++;
                }
            }
            cr_expect_eq(used, jr_len(es), "%s: mesh %s corner %zu has %u influences, expected %zu", name, ename, k,
                         used, jr_len(es));
        }
        if (!jr_is_arr(skin) || !jr_len(skin)) cr_expect_eq(m->max_influence, 0, "%s: mesh %s is skinned", name, ename);
    }
}

static void expect_rgba(const kiln_source_material *m, const char *slot, const jr_value *e, const char *name)
{
    const kiln_source_material_slot *s = find_slot(m, slot);
    cr_assert_not_null(s, "%s: material %s has no %s slot", name, m->name, slot);
    cr_expect_eq(s->kind, KILN_SOURCE_SLOT_COLOR);
    for (int i = 0; i < 4; i++)
        cr_expect(near(s->rgba[i], jr_num(jr_at(e, (size_t)i)), 1e-6), "%s: material %s %s[%d] = %g, expected %g", name,
                  m->name, slot, i, s->rgba[i], jr_num(jr_at(e, (size_t)i)));
}

static void expect_file_slot(const kiln_source_material *m, const char *slot, const char *want, const char *name)
{
    const kiln_source_material_slot *s = find_slot(m, slot);
    if (!want) {
        cr_expect(!s || s->kind != KILN_SOURCE_SLOT_FILE, "%s: material %s has a %s file", name, m->name, slot);
        return;
    }
    cr_assert(s && s->kind == KILN_SOURCE_SLOT_FILE, "%s: material %s has no %s file (expected %s)", name, m->name,
              slot, want);
    cr_expect_str_eq(s->path, want, "%s: material %s %s '%s'", name, m->name, slot, s->path);
}

static void check_materials(const kiln_source_scene *s, const jr_value *exp, const char *name)
{
    const kiln_source_model *model = &s->models[0];
    cr_assert_eq(model->material_count, jr_len(exp), "%s: %u materials, expected %zu", name, model->material_count,
                 jr_len(exp));
    for (uint32_t i = 0; i < model->material_count; i++) {
        const kiln_source_material *m = &model->materials[i];
        const jr_value *e = jr_at(exp, i);
        cr_expect_str_eq(m->name, jr_str(jr_get(e, "name")), "%s: material %u", name, i);
        const jr_value *tex = jr_get(e, "textures");
        expect_file_slot(m, "diffuse", jr_str(jr_at(tex, 0)), name);
        expect_file_slot(m, "extra0", jr_str(jr_at(tex, 1)), name);
        expect_file_slot(m, "normal", jr_str(jr_get(e, "normal_map")), name);
        expect_file_slot(m, "specular", jr_str(jr_get(e, "specular_map")), name);
        if (!jr_len(tex)) expect_rgba(m, "diffuse", jr_get(e, "diffuse"), name);
        expect_rgba(m, "ambient_color", jr_get(e, "ambient"), name);
        expect_rgba(m, "diffuse_color", jr_get(e, "diffuse"), name);
        expect_rgba(m, "emission_color", jr_get(e, "emission"), name);
        expect_rgba(m, "specular_color", jr_get(e, "specular"), name);
        expect_rgba(m, "env_color", jr_get(e, "env_color"), name);
        const kiln_source_extra *x = find_extra(s, "material", m->name, 0);
        cr_assert_not_null(x, "%s: no material extra for %s", name, m->name);
        char want[256];
        snprintf(want, sizeof want, "shininess %d, blending %s (", (int)jr_num(jr_get(e, "shininess")),
                 jstr(jr_get(e, "blending_mode")));
        cr_expect(strncmp(x->detail, want, strlen(want)) == 0, "%s: material %s '%s', expected '%s'", name, m->name,
                  x->detail, want);
        snprintf(want, sizeof want, "texture enabled %s, enabled %s,", jr_bool(jr_get(e, "texture_enabled"), 0) ? "yes" : "no",
                 jr_bool(jr_get(e, "enabled"), 0) ? "yes" : "no");
        cr_expect(strstr(x->detail, want) != NULL, "%s: material %s '%s', expected '%s'", name, m->name, x->detail, want);
    }
}

static void check_extras(const kiln_source_scene *s, const jr_value *e, const char *name)
{
    const char *info = jr_str(jr_get(e, "info"));
    const kiln_source_extra *x = find_extra(s, "info", NULL, 0);
    cr_expect((!info && !x) || (info && x && strcmp(x->detail, info) == 0), "%s: info '%s', expected '%s'", name,
              x ? x->detail : "null", info ? info : "null");

    const jr_value *tex = jr_get(e, "embedded_textures");
    cr_expect_eq(count_extras(s, "embedded_texture"), jr_len(tex), "%s: embedded textures", name);
    for (size_t i = 0; i < jr_len(tex); i++) {
        const jr_value *t = jr_at(tex, i);
        x = find_extra(s, "embedded_texture", NULL, (int)i);
        char want[512];
        snprintf(want, sizeof want, "material %s, %d bytes", jstr(jr_at(t, 0)), (int)jr_num(jr_at(t, 2)));
        cr_expect(x && x->name && strcmp(x->name, jr_str(jr_at(t, 1))) == 0 && strcmp(x->detail, want) == 0,
                  "%s: embedded texture %zu: %s '%s', expected %s '%s'", name, i, x ? x->name : "none",
                  x ? x->detail : "", jr_str(jr_at(t, 1)), want);
    }
    const jr_value *lights = jr_get(e, "light_schemes");
    cr_expect_eq(count_extras(s, "light_scheme"), jr_len(lights), "%s: light schemes", name);
    for (size_t i = 0; i < jr_len(lights); i++) {
        x = find_extra(s, "light_scheme", NULL, (int)i);
        cr_expect(x && strcmp(x->name, jr_str(jr_at(lights, i))) == 0, "%s: light scheme %zu", name, i);
    }
    const jr_value *phys = jr_get(e, "physics");
    x = find_extra(s, "physics", NULL, 0);
    cr_expect_eq(x != NULL, jr_is_obj(phys), "%s: physics", name);
    if (x && jr_is_obj(phys)) {
        char want[128];
        snprintf(want, sizeof want, "bodies %d, geoms %d, joints %d,", (int)jr_num(jr_get(phys, "bodies")),
                 (int)jr_num(jr_get(phys, "geoms")), (int)jr_num(jr_get(phys, "joints")));
        cr_expect(strncmp(x->detail, want, strlen(want)) == 0, "%s: physics '%s', expected '%s'", name, x->detail, want);
    }
    const jr_value *prox = jr_get(e, "proxies");
    cr_expect_eq(count_extras(s, "proxy"), jr_len(prox), "%s: proxies", name);
    for (size_t i = 0; i < jr_len(prox); i++) {
        x = find_extra(s, "proxy", NULL, (int)i);
        char want[128];
        snprintf(want, sizeof want, "replaces mesh %d, %d items,", (int)jr_num(jr_get(jr_at(prox, i), "mesh_index")),
                 (int)jr_num(jr_get(jr_at(prox, i), "items")));
        cr_expect(x && strncmp(x->detail, want, strlen(want)) == 0, "%s: proxy %zu '%s', expected '%s'", name, i,
                  x ? x->detail : "none", want);
    }
    const jr_value *cols = jr_get(e, "collider_sets");
    cr_expect_eq(count_extras(s, "collider_set"), jr_len(cols), "%s: collider sets", name);
    for (size_t i = 0; i < jr_len(cols); i++) {
        x = find_extra(s, "collider_set", NULL, (int)i);
        char want[128];
        snprintf(want, sizeof want, "colliders %d", (int)jr_num(jr_get(jr_at(cols, i), "colliders")));
        cr_expect(x && strcmp(x->name, jr_str(jr_get(jr_at(cols, i), "name"))) == 0 && strcmp(x->detail, want) == 0,
                  "%s: collider set %zu", name, i);
    }
    const jr_value *shot = jr_get(e, "screenshot");
    x = find_extra(s, "screenshot", NULL, 0);
    cr_expect_eq(x != NULL, jr_is_arr(shot), "%s: screenshot", name);
    if (x && jr_is_arr(shot)) {
        char want[64];
        snprintf(want, sizeof want, "%d bytes", (int)jr_num(jr_at(shot, 1)));
        cr_expect(strcmp(x->name, jr_str(jr_at(shot, 0))) == 0 && strcmp(x->detail, want) == 0,
                  "%s: screenshot %s '%s'", name, x->name, x->detail);
    }
    const jr_value *morph = jr_get(e, "morph_chunks");
    cr_expect_eq(count_extras(s, "morph"), jr_len(morph), "%s: morph chunks", name);
    for (size_t i = 0; i < jr_len(morph); i++) {
        x = find_extra(s, "morph", NULL, (int)i);
        cr_expect(x && strcmp(x->name, jr_str(jr_at(morph, i))) == 0, "%s: morph chunk %zu", name, i);
    }
}

/* Samples a curve at frame x (already wrapped or clamped into its key range) as the spec says
 * (D.2): translation by lerp, rotation along the shortest arc (nlerp). */
static void sample_curve(const kiln_source_curve *c, double x, double *out)
{
    uint32_t last = c->key_count - 1;
    if (x < 0) x = 0;
    if (x > c->frames[last]) x = c->frames[last];
    uint32_t i = (uint32_t)floor(x);
    if (i > last) i = last;
    uint32_t j = i < last ? i + 1 : last;
    double t = x - c->frames[i];
    int comps = c->channel == KILN_SOURCE_CHANNEL_ROTATION ? 4 : 1;
    const float *a = c->values + (size_t)i * comps, *b = c->values + (size_t)j * comps;
    double d = 0;
    for (int k = 0; k < comps; k++) d += (double)a[k] * b[k];
    double sb = comps == 4 && d < 0 ? -1 : 1, n = 0;
    for (int k = 0; k < comps; k++) {
        out[k] = a[k] * (1 - t) + sb * b[k] * t;
        n += out[k] * out[k];
    }
    if (comps == 4)
        for (int k = 0; k < 4; k++) out[k] /= sqrt(n);
}

static void check_frames(const kiln_source_scene *s, const jr_value *exp, const char *name)
{
    const jr_value *clip = jr_get(exp, "clip");
    if (!jr_is_obj(clip)) return;
    const char *cname = jr_str(jr_get(clip, "name"));
    const kiln_source_animation *anim = NULL;
    for (uint32_t i = 0; i < s->animation_count && !anim; i++)
        if (strcmp(s->animations[i].name, cname) == 0) anim = &s->animations[i];
    cr_assert_not_null(anim, "%s: no clip '%s'", name, cname);
    cr_expect(near(anim->framerate, jr_num(jr_get(clip, "fps")), 1e-4), "%s: fps %g", name, anim->framerate);
    cr_expect_eq(anim->looping, (uint32_t)jr_bool(jr_get(clip, "looping"), 0), "%s: looping", name);
    const kiln_source_extra *x = find_extra(s, "clip", cname, 0);
    char want[128];
    snprintf(want, sizeof want, "play mode %s, %d frames,", jstr(jr_get(clip, "play_mode")),
             (int)jr_num(jr_get(clip, "frame_count")));
    cr_expect(x && strncmp(x->detail, want, strlen(want)) == 0, "%s: clip '%s', expected '%s'", name,
              x ? x->detail : "none", want);

    const kiln_source_skeleton *sk = s->models[0].skeleton;
    cr_assert_not_null(sk);
    uint32_t n = sk->bone_count;
    double (*model)[4][4] = calloc(n ? n : 1, sizeof *model);
    double period = (double)jr_num(jr_get(clip, "frame_count"));
    const jr_value *frames = jr_get(exp, "frames");
    for (size_t f = 0; f < jr_len(frames); f++) {
        const jr_value *fr = jr_at(frames, f);
        double frame = jr_num(jr_get(fr, "frame"));
        double xf = anim->looping ? fmod(frame, period) : frame;
        if (xf < 0) xf += period;
        const jr_value *bones = jr_get(fr, "bones");
        for (uint32_t b = 0; b < n; b++) {
            const kiln_source_bone *bone = &sk->bones[b];
            double t[3] = {bone->local_position[0], bone->local_position[1], bone->local_position[2]};
            double q[4] = {bone->local_rotation[0], bone->local_rotation[1], bone->local_rotation[2],
                           bone->local_rotation[3]};
            for (uint32_t c = 0; c < anim->curve_count; c++) {
                const kiln_source_curve *cv = &anim->curves[c];
                if (strcmp(cv->target, bone->name) != 0) continue;
                if (cv->channel == KILN_SOURCE_CHANNEL_ROTATION) sample_curve(cv, xf, q);
                else sample_curve(cv, xf, &t[cv->channel - KILN_SOURCE_CHANNEL_TX]);
            }
            double l[4][4];
            trs(t, q, l);
            if (bone->parent >= 0) mul(model[bone->parent], l, model[b]);
            else memcpy(model[b], l, sizeof l);
            const jr_value *eb = jr_get(bones, bone->name);
            if (!eb) continue;
            char what[300];
            snprintf(what, sizeof what, "%s: frame %g bone %s", name, frame, bone->name);
            expect_matrix(jr_get(eb, "model"), model[b], jr_num_or(jr_get(jr_get(exp, "tolerance"), "matrix"), 1e-4), what);
        }
    }
    free(model);
}

Test(import_lod, good_cases_match_expected)
{
    char dir[1024];
    lod_dir(dir, sizeof dir);
    jr_value *cases = corpus_json(dir, "cases.json");
    cr_assert_not_null(cases, "no cases.json in %s", dir);
    cr_assert_gt(jr_len(cases), 0);
    for (size_t i = 0; i < jr_len(cases); i++) {
        const jr_value *c = jr_at(cases, i);
        const char *name = jr_str(jr_get(c, "case"));
        outcome o;
        parse_outcome(jr_str(jr_get(c, "outcome")), &o);
        if (strcmp(o.kind, "reject") == 0) continue;
        kiln_source_scene scene;
        kiln_diag err;
        rule_log log;
        memset(&log, 0, sizeof log);
        kiln_result r = import_file(dir, jr_str(jr_get(c, "model")), &scene, &err, &log, NULL);
        cr_assert_eq(r, KILN_OK, "%s: %s", name, err.message);
        cr_expect_eq(kiln_source_validate(&scene, &err), KILN_OK, "%s: invalid scene: %s", name, err.message);
        for (int k = 0; k < o.count; k++) cr_expect(rule_log_has(&log, o.rules[k]), "%s: %s not reported", name, o.rules[k]);
        for (int k = 0; k < log.count; k++) {
            int listed = 0;
            for (int j = 0; j < o.count; j++) listed |= strcmp(o.rules[j], log.rules[k]) == 0;
            cr_expect(listed, "%s: unexpected warning %s", name, log.rules[k]);
        }
        jr_value *exp = corpus_json(dir, jr_str(jr_get(c, "expected")));
        cr_assert_not_null(exp, "%s: no expected JSON", name);
        cr_assert_eq(scene.model_count, 1);
        double tol = jr_num_or(jr_get(jr_get(exp, "tolerance"), "position"), 1e-5);
        check_skeleton(&scene, jr_get(exp, "skeleton"), name);
        check_meshes(&scene, jr_get(exp, "meshes"), tol, name);
        check_materials(&scene, jr_get(exp, "materials"), name);
        check_extras(&scene, jr_get(exp, "extras"), name);
        check_frames(&scene, exp, name);
        cr_expect_eq(scene.instance_count, jr_len(jr_get(exp, "instances")), "%s: instances", name);
        jr_free(exp);
        kiln_source_scene_free(&scene);
    }
    jr_free(cases);
}

/* ---- one rule at a time, on files written here (lod_fixture.h) ------------------------------ */

#include "lod_fixture.h"

/* "LODka3D1" + LOD1 { SKL1(bones) MSL1 { MSH1(mesh) } ANS1 { ANM1 } } with hooks before and
 * after the parts, so that each case changes one thing. */
typedef struct lod_case lod_case;
struct lod_case {
    const char *what, *outcome;
    int  bones;                           /* 0: no SKL1 */
    int  frames, anim_type, interval, mode;
    int  no_anim;
    lb_mesh mesh;
    void (*before)(lb *b, int *children); /* extra LOD1 children before SKL1 */
    void (*after)(lb *b, int *children);  /* extra LOD1 children after ANS1 */
    void (*tail)(lb *b);                  /* bytes after LOD1 */
    void (*skeleton)(lb *b);              /* replaces lb_skl1 */
    int  skl_after_msl;
    int  anim_bones;                      /* bones written per frame; 0: `bones` */
};

static void build_case(const lod_case *c, lb *b)
{
    memset(b, 0, sizeof *b);
    lb_bytes(b, "LODka3D1", 8);
    lb_begin(b, "LOD1", 0);
    int children = 0;
    if (c->before) c->before(b, &children);
    if (c->bones && !c->skl_after_msl) {
        if (c->skeleton) c->skeleton(b);
        else lb_skl1(b, c->bones, 1);
        children++;
    }
    lb_begin(b, "MSL1", 1);
    lb_msh1(b, &c->mesh, c->bones);
    lb_end(b);
    children++;
    if (c->bones && c->skl_after_msl) {
        lb_skl1(b, c->bones, 1);
        children++;
    }
    if (!c->no_anim) {
        lb_begin(b, "ANS1", 1);
        lb_anm1(b, "clip", c->anim_bones ? c->anim_bones : c->bones, c->frames, c->anim_type, c->interval, c->mode);
        lb_end(b);
        children++;
    }
    if (c->after) c->after(b, &children);
    lb_end(b);
    for (int i = 0; i < 4; i++) b->d[8 + 8 + i] = (unsigned char)((uint32_t)children >> (8 * i));
    if (c->tail) c->tail(b);
}

static void put_materials(lb *b, int *n)
{
    static const char *const names[] = {"a", "b"};
    lb_mal1(b, 3, 2, names);
    (*n)++;
}
static void put_materials_legacy(lb *b, int *n)
{
    static const char *const names[] = {"a"};
    lb_mal1(b, 2, 1, names);
    (*n)++;
}
static void put_materials_type4(lb *b, int *n)
{
    static const char *const names[] = {"a"};
    lb_mal1(b, 4, 1, names);
    (*n)++;
}
static void put_materials_miscounted(lb *b, int *n)
{
    lb_begin(b, "MAL1", 1);
    lb_begin(b, "MAT1", 2);
    lb_u8(b, 3);
    lb_i32(b, 1);
    lb_str(b, "a");
    lb_str(b, "");
    for (int k = 0; k < 101; k++) lb_u8(b, 0);
    lb_end(b);
    lb_end(b);
    (*n)++;
}
static void put_second_msl(lb *b, int *n)
{
    lb_begin(b, "MSL1", 0);
    lb_end(b);
    (*n)++;
}
static void put_unknown(lb *b, int *n)
{
    lb_begin(b, "ZZZZ", 7);
    lb_i32(b, 1);
    lb_end(b);
    (*n)++;
}
static void put_info_count2(lb *b, int *n)
{
    lb_begin(b, "INF1", 2);
    lb_bytes(b, "text", 4);
    lb_end(b);
    (*n)++;
}
static void put_info_cp1251(lb *b, int *n)
{
    lb_begin(b, "INF1", 1);
    lb_bytes(b, "\xcf\xf0\xe8\x98", 4);
    lb_end(b);
    (*n)++;
}
static void put_lights(lb *b, int *n, int kind)
{
    lb_begin(b, "LGS1", 1);
    lb_begin(b, "LIG1", kind);
    lb_str(b, "day");
    for (int k = 0; k < 8 * 94; k++) lb_u8(b, 0);
    lb_end(b);
    lb_end(b);
    (*n)++;
}
static void put_lights_ok(lb *b, int *n) { put_lights(b, n, 8); }
static void put_lights_bad(lb *b, int *n) { put_lights(b, n, 7); }
static void put_physics_v3(lb *b, int *n)
{
    lb_begin(b, "PHS1", 3);
    lb_u8(b, 1);
    lb_end(b);
    (*n)++;
}
static void put_physics_overrun(lb *b, int *n)
{
    lb_begin(b, "PHS1", 2);
    lb_u8(b, 1);
    for (int k = 0; k < 6; k++) lb_i32(b, k == 3 ? 5 : 0); /* 5 bodies, no bytes for them */
    lb_end(b);
    (*n)++;
}
static void put_screenshot_overrun(lb *b, int *n)
{
    lb_begin(b, "IMG1", 1);
    lb_i32(b, 0);
    lb_str(b, "shot.jpg");
    lb_i32(b, 1000);
    lb_end(b);
    (*n)++;
}
static void put_proxy_bad_record(lb *b, int *n)
{
    lb_begin(b, "PXL1", 1);
    lb_begin(b, "PXI1", 0);
    lb_i32(b, 1);
    lb_i32(b, 1);
    lb_bytes(b, "p", 1);
    for (int k = 0; k < 50; k++) lb_u8(b, 0);
    lb_end(b);
    lb_end(b);
    (*n)++;
}
static void put_colliders(lb *b, int *n)
{
    lb_begin(b, "CLL1", 1);
    lb_begin(b, "COL1", 1);
    lb_str(b, "near");
    lb_i32(b, 1);
    lb_bytes(b, "c", 1);
    for (int k = 0; k < 124; k++) lb_u8(b, 0);
    lb_end(b);
    lb_end(b);
    (*n)++;
}
static void put_textures(lb *b, int *n, int type, int opt_size)
{
    lb_begin(b, "TXTL", 1);
    lb_begin(b, "TXTR", 1);
    lb_u8(b, (unsigned)type);
    lb_i32(b, opt_size);
    lb_i32(b, 3);
    lb_i32(b, 0);
    lb_str(b, "a");
    lb_str(b, "a.bmp");
    for (int k = 0; k < opt_size - 26; k++) lb_u8(b, 0);
    lb_bytes(b, "img", 3);
    lb_end(b);
    lb_end(b);
    (*n)++;
}
static void put_textures_ok(lb *b, int *n) { put_textures(b, n, 0, 26); }
static void put_textures_small(lb *b, int *n) { put_textures(b, n, 0, 25); }
static void put_textures_type1(lb *b, int *n) { put_textures(b, n, 1, 26); }
static void put_shaders(lb *b, int *n, int lib_type, int shader_type, int size_delta)
{
    lb_begin(b, "SHDL", 1);
    lb_begin(b, "SHDR", 1);
    lb_u8(b, (unsigned)lib_type);
    lb_i32(b, 21 + 3 + size_delta);
    lb_u8(b, (unsigned)shader_type);
    lb_str(b, "a");
    lb_str(b, "b");
    lb_str(b, "b");
    lb_f32(b, 1);
    lb_f32(b, 8);
    for (int k = 0; k < size_delta; k++) lb_u8(b, 0);
    lb_end(b);
    lb_end(b);
    (*n)++;
}
static void put_shaders_ok(lb *b, int *n) { put_materials(b, n); put_shaders(b, n, 1, 1, 2); }
static void put_shaders_type7(lb *b, int *n) { put_shaders(b, n, 1, 7, 0); }
static void put_shaders_lib2(lb *b, int *n) { put_shaders(b, n, 2, 1, 0); }
static void put_shaders_short(lb *b, int *n)
{
    /* ShaderSize 3 bytes short of the bump fields; the chunk still holds them (R17, not R7). */
    lb_begin(b, "SHDL", 1);
    lb_begin(b, "SHDR", 1);
    lb_u8(b, 1);
    lb_i32(b, 21);
    lb_u8(b, 1);
    lb_str(b, "a");
    lb_str(b, "b");
    lb_str(b, "b");
    lb_f32(b, 1);
    lb_f32(b, 8);
    lb_end(b);
    lb_end(b);
    (*n)++;
}
static void tail_bytes(lb *b) { lb_bytes(b, "xyz", 3); }
static void tail_model(lb *b)
{
    lb_begin(b, "LOD1", 0);
    lb_end(b);
}
static void skel_bad_id(lb *b)
{
    lb_begin(b, "SKL1", 2);
    lb_u8(b, 1);
    lb_i16(b, 0), lb_i16(b, -1), lb_str(b, "r");
    lb_i16(b, 2), lb_i16(b, 0), lb_str(b, "c");
    lb_end(b);
}
static void skel_bad_parent(lb *b)
{
    lb_begin(b, "SKL1", 2);
    lb_u8(b, 1);
    lb_i16(b, 0), lb_i16(b, -2), lb_str(b, "r");
    lb_i16(b, 1), lb_i16(b, 0), lb_str(b, "c");
    lb_end(b);
}
static void skel_self_parent(lb *b)
{
    lb_begin(b, "SKL1", 2);
    lb_u8(b, 1);
    lb_i16(b, 0), lb_i16(b, -1), lb_str(b, "r");
    lb_i16(b, 1), lb_i16(b, 1), lb_str(b, "c");
    lb_end(b);
}
static void skel_dup_names(lb *b)
{
    lb_begin(b, "SKL1", 2);
    lb_u8(b, 1);
    lb_i16(b, 0), lb_i16(b, -1), lb_str(b, "same");
    lb_i16(b, 1), lb_i16(b, 0), lb_str(b, "same");
    lb_end(b);
}
static void skel_too_many(lb *b)
{
    lb_begin(b, "SKL1", 2);
    lb_u8(b, 2);
    lb_end(b);
}
static void skel_huge(lb *b)
{
    lb_begin(b, "SKL1", 40000);
    lb_u8(b, 1);
    lb_end(b);
}
static void skel_negative_name(lb *b)
{
    lb_begin(b, "SKL1", 2);
    lb_u8(b, 1);
    lb_i16(b, 0), lb_i16(b, -1), lb_i32(b, -5);
    lb_end(b);
}
static void skel_long_name(lb *b)
{
    lb_begin(b, "SKL1", 2);
    lb_u8(b, 1);
    lb_i16(b, 0), lb_i16(b, -1), lb_i32(b, 100), lb_bytes(b, "ab", 2);
    lb_end(b);
}

#define BASE .bones = 2, .frames = 2, .anim_type = 1, .interval = 40, .mode = 1

static lod_case make_cases(int i, int *count)
{
    lb_mesh m = lb_mesh_default();
    lod_case cs[] = {
        {.what = "a skinned mesh and a clip", .outcome = "ok", BASE, .mesh = m},
        {.what = "SkelType 2", .outcome = "reject: R12", BASE, .mesh = m, .skeleton = skel_too_many},
        {.what = "40000 bones", .outcome = "reject: R12", BASE, .mesh = m, .skeleton = skel_huge},
        {.what = "BoneID 2 of 2 bones", .outcome = "reject: R13", BASE, .mesh = m, .skeleton = skel_bad_id},
        {.what = "BoneParentID -2", .outcome = "reject: R14", BASE, .mesh = m, .skeleton = skel_bad_parent},
        {.what = "a bone its own parent", .outcome = "reject: R14", BASE, .mesh = m, .skeleton = skel_self_parent},
        {.what = "negative bone name length", .outcome = "reject: R8", BASE, .mesh = m, .skeleton = skel_negative_name},
        {.what = "bone name past the chunk", .outcome = "reject: R7", BASE, .mesh = m, .skeleton = skel_long_name},
        {.what = "duplicate bone names", .outcome = "ok-with-warning: W12", BASE, .mesh = m, .skeleton = skel_dup_names},
        {.what = "PntBnAssocCnt 2 of 3 vertices", .outcome = "reject: R15", BASE, .mesh = m},
        {.what = "PntBnAssoc bone 5 of 2", .outcome = "reject: R15", BASE, .mesh = m},
        {.what = "rigid skin", .outcome = "ok", BASE, .mesh = m},
        {.what = "PntBnWeightType 2", .outcome = "reject: R15", BASE, .mesh = m},
        {.what = "rigid and weighted skin", .outcome = "reject: R15", BASE, .mesh = m},
        {.what = "BonesPerVertix 0", .outcome = "reject: R15", BASE, .mesh = m},
        {.what = "records for 4 of 3 vertices", .outcome = "reject: R15", BASE, .mesh = m},
        {.what = "weight record bone 9 of 2", .outcome = "reject: R15", BASE, .mesh = m},
        {.what = "records for 2 of 3 vertices", .outcome = "ok-with-warning: W10", BASE, .mesh = m},
        {.what = "NaN weight", .outcome = "reject: R9", BASE, .mesh = m},
        {.what = "skin without a skeleton", .outcome = "ok-with-warning: W4", .no_anim = 1, .mesh = m},
        {.what = "ANS1 without a skeleton", .outcome = "ok-with-warning: W4", .frames = 2, .anim_type = 1, .interval = 40,
         .mesh = m},
        {.what = "SKL1 after MSL1", .outcome = "ok-with-warning: W4", BASE, .no_anim = 1, .mesh = m, .skl_after_msl = 1},
        {.what = "AnimType 2", .outcome = "ok-with-warning: W9", BASE, .mesh = m},
        {.what = "AnimInterval 0", .outcome = "ok-with-warning: W9", BASE, .mesh = m},
        {.what = "AnimMode 9", .outcome = "ok-with-warning: W9", BASE, .mesh = m},
        {.what = "FramesCnt 0", .outcome = "ok-with-warning: W9", BASE, .mesh = m},
        {.what = "MeshMode 4", .outcome = "reject: R18", BASE, .mesh = m},
        {.what = "MeshTextureNumber 3", .outcome = "reject: R18", BASE, .mesh = m},
        {.what = "FaceType 3", .outcome = "reject: R18", BASE, .mesh = m},
        {.what = "MeshMode 2", .outcome = "ok-with-warning: W5", BASE, .mesh = m},
        {.what = "FaceType 1", .outcome = "ok-with-warning: W5", BASE, .mesh = m},
        {.what = "two texture layers", .outcome = "ok", BASE, .mesh = m},
        {.what = "NormalsIndCnt 2 of 3", .outcome = "reject: R11", BASE, .mesh = m},
        {.what = "TxCrdsIndCnt 6 of 3", .outcome = "reject: R11", BASE, .mesh = m},
        {.what = "vertex index 3 of 3", .outcome = "reject: R10", BASE, .mesh = m},
        {.what = "NaN position", .outcome = "reject: R9", BASE, .mesh = m},
        {.what = "SmoothDataCnt 5", .outcome = "ok-with-warning: W11", BASE, .mesh = m},
        {.what = "FaceMode 1", .outcome = "ok-with-warning: W6", BASE, .mesh = m},
        {.what = "bytes left in MSH1", .outcome = "ok-with-warning: W3", BASE, .mesh = m},
        {.what = "a missing material", .outcome = "ok-with-warning: W7", BASE, .mesh = m, .before = put_materials},
        {.what = "MaterialsType 2", .outcome = "ok-with-warning: W5", BASE, .mesh = m, .before = put_materials_legacy},
        {.what = "MaterialsType 4", .outcome = "ok-with-warning: W14", BASE, .mesh = m, .before = put_materials_type4},
        {.what = "MaterialsCount 1 in a MAT1 of Count 2", .outcome = "reject: R17", BASE, .mesh = m,
         .before = put_materials_miscounted},
        {.what = "embedded texture", .outcome = "ok", BASE, .mesh = m, .before = put_textures_ok},
        {.what = "TextureOptionSize too small", .outcome = "reject: R17", BASE, .mesh = m, .before = put_textures_small},
        {.what = "TexturesType 1", .outcome = "ok-with-warning: W14", BASE, .mesh = m, .before = put_textures_type1},
        {.what = "bump shader", .outcome = "ok", BASE, .mesh = m, .before = put_shaders_ok},
        {.what = "ShaderType 7", .outcome = "ok-with-warning: W15", BASE, .mesh = m, .before = put_shaders_type7},
        {.what = "ShaderLibType 2", .outcome = "ok-with-warning: W14", BASE, .mesh = m, .before = put_shaders_lib2},
        {.what = "bump fields past ShaderSize", .outcome = "reject: R17", BASE, .mesh = m, .before = put_shaders_short},
        {.what = "a second MSL1", .outcome = "ok-with-warning: W2", BASE, .mesh = m, .after = put_second_msl},
        {.what = "an unknown chunk", .outcome = "ok-with-warning: W1", BASE, .mesh = m, .after = put_unknown},
        {.what = "trailing bytes", .outcome = "ok-with-warning: W3", BASE, .mesh = m, .tail = tail_bytes},
        {.what = "a second model", .outcome = "ok-with-warning: W2", BASE, .mesh = m, .tail = tail_model},
        {.what = "INF1 Count 2", .outcome = "ok-with-warning: W13", BASE, .mesh = m, .before = put_info_count2},
        {.what = "INF1 with 0x98", .outcome = "ok-with-warning: W8", BASE, .mesh = m, .before = put_info_cp1251},
        {.what = "light scheme", .outcome = "ok", BASE, .mesh = m, .after = put_lights_ok},
        {.what = "LIG1 Count 7", .outcome = "ok-with-warning: W13", BASE, .mesh = m, .after = put_lights_bad},
        {.what = "PHS1 Count 3", .outcome = "ok-with-warning: W13", BASE, .mesh = m, .after = put_physics_v3},
        {.what = "PHS1 bodies past the chunk", .outcome = "ok-with-warning: W13", BASE, .mesh = m,
         .after = put_physics_overrun},
        {.what = "IMG1 data past the chunk", .outcome = "ok-with-warning: W13", BASE, .mesh = m,
         .after = put_screenshot_overrun},
        {.what = "PXI1 record of 50 bytes", .outcome = "ok-with-warning: W13", BASE, .mesh = m,
         .after = put_proxy_bad_record},
        {.what = "collider set", .outcome = "ok", BASE, .mesh = m, .after = put_colliders},
        {.what = "6-byte weight records (200 bones)", .outcome = "ok", BASE, .mesh = m},
        {.what = "u16 PntBnAssoc (300 bones)", .outcome = "ok", BASE, .mesh = m},
        {.what = "clip data of the wrong size", .outcome = "reject: R16", BASE, .mesh = m},
    };
    *count = (int)(sizeof cs / sizeof cs[0]);
    lod_case c = cs[i];
    lb_mesh *x = &c.mesh;
    const char *w = c.what;
    if (!strcmp(w, "AnimType 2")) c.anim_type = 2;
    if (!strcmp(w, "clip data of the wrong size")) c.anim_bones = 1;
    if (!strcmp(w, "AnimInterval 0")) c.interval = 0;
    if (!strcmp(w, "AnimMode 9")) c.mode = 9;
    if (!strcmp(w, "FramesCnt 0")) c.frames = 0;
    if (!strncmp(w, "6-byte", 6)) c.bones = 200;
    if (!strncmp(w, "u16 PntBnAssoc", 14)) c.bones = 300;
    if (!strcmp(w, "PntBnAssocCnt 2 of 3 vertices")) x->assoc = 2;
    if (!strcmp(w, "PntBnAssoc bone 5 of 2")) x->assoc = 3, x->assoc_bone = 5;
    if (!strcmp(w, "rigid skin") || !strcmp(w, "skin without a skeleton")) x->assoc = 3, x->assoc_bone = 1;
    if (!strcmp(w, "a skinned mesh and a clip") || !strcmp(w, "records for 2 of 3 vertices") ||
        !strcmp(w, "NaN weight") || !strcmp(w, "weight record bone 9 of 2") || !strcmp(w, "records for 4 of 3 vertices") ||
        !strcmp(w, "BonesPerVertix 0") || !strcmp(w, "rigid and weighted skin") || !strncmp(w, "6-byte", 6))
        x->wtype = 1, x->per_vertex = 1, x->recs = 3, x->rec_bone = 1, x->rec_weight = 1.0f;
    if (!strcmp(w, "rigid and weighted skin")) x->assoc = 3;
    if (!strcmp(w, "BonesPerVertix 0")) x->per_vertex = 0;
    if (!strcmp(w, "records for 4 of 3 vertices")) x->recs = 4;
    if (!strcmp(w, "records for 2 of 3 vertices")) x->recs = 2;
    if (!strcmp(w, "weight record bone 9 of 2")) x->rec_bone = 9;
    if (!strcmp(w, "NaN weight")) x->rec_weight = NAN;
    if (!strncmp(w, "6-byte", 6)) x->rec_wide = 1, x->rec_bone = 150;
    if (!strncmp(w, "u16 PntBnAssoc", 14)) x->assoc = 3, x->assoc_bone = 299;
    if (!strcmp(w, "PntBnWeightType 2")) x->wtype = 2;
    if (!strcmp(w, "MeshMode 4")) x->mode = 4;
    if (!strcmp(w, "MeshMode 2")) x->mode = 2;
    if (!strcmp(w, "MeshTextureNumber 3")) x->t = 3;
    if (!strcmp(w, "two texture layers")) x->t = 2;
    if (!strcmp(w, "FaceType 3")) x->face_type = 3;
    if (!strcmp(w, "FaceType 1")) x->face_type = 1;
    if (!strcmp(w, "NormalsIndCnt 2 of 3")) x->normals = 2;
    if (!strcmp(w, "TxCrdsIndCnt 6 of 3")) x->tex = 6;
    if (!strcmp(w, "vertex index 3 of 3")) x->index_add = 3;
    if (!strcmp(w, "NaN position")) x->x0 = NAN;
    if (!strcmp(w, "SmoothDataCnt 5")) x->smooth = 5;
    if (!strcmp(w, "FaceMode 1")) x->face_mode = 1;
    if (!strcmp(w, "bytes left in MSH1")) x->tail = 5;
    if (!strcmp(w, "a missing material")) x->material = "zz";
    if (!strcmp(w, "bump shader")) x->material = "a";
    return c;
}

/* Outcome of a whole-file import: checks the result against "ok", "ok-with-warning: Wn" or
 * "reject: Rn" (exactly those rules), and returns the scene (freed by the caller). */
static kiln_result expect_outcome(const unsigned char *data, size_t size, const char *want, const char *what,
                                  kiln_source_scene *scene)
{
    outcome o;
    parse_outcome(want, &o);
    kiln_import_options opt;
    memset(&opt, 0, sizeof opt);
    rule_log log;
    memset(&log, 0, sizeof log);
    opt.diag.fn = rule_log_push;
    opt.diag.user = &log;
    kiln_diag err;
    kiln_source_scene_init(scene, NULL);
    kiln_result r = kiln__import_lod(data, size, "case.lod", &opt, scene, &err);
    if (strcmp(o.kind, "reject") == 0) {
        cr_expect_neq(r, KILN_OK, "%s: loaded, expected %s", what, o.rules[0]);
        if (r != KILN_OK)
            cr_expect_str_eq(err.rule, o.rules[0], "%s: %s, expected %s", what, err.message, o.rules[0]);
        return r;
    }
    cr_expect_eq(r, KILN_OK, "%s: %s", what, err.message);
    if (r == KILN_OK) cr_expect_eq(kiln_source_validate(scene, &err), KILN_OK, "%s: invalid scene: %s", what, err.message);
    for (int k = 0; k < o.count; k++) cr_expect(rule_log_has(&log, o.rules[k]), "%s: %s not reported", what, o.rules[k]);
    for (int k = 0; k < log.count; k++) {
        int listed = 0;
        for (int j = 0; j < o.count; j++) listed |= strcmp(o.rules[j], log.rules[k]) == 0;
        cr_expect(listed, "%s: unexpected %s", what, log.rules[k]);
    }
    return r;
}

Test(import_lod, each_rule_on_written_files)
{
    int count = 0;
    make_cases(0, &count);
    for (int i = 0; i < count; i++) {
        lod_case c = make_cases(i, &count);
        lb b;
        build_case(&c, &b);
        kiln_source_scene scene;
        expect_outcome(b.d, b.n, c.outcome, c.what, &scene);
        kiln_source_scene_free(&scene);
        lb_free(&b);
    }
}

static lod_case named_case(const char *what)
{
    int count = 0;
    make_cases(0, &count);
    for (int i = 0; i < count; i++) {
        lod_case c = make_cases(i, &count);
        if (strcmp(c.what, what) == 0) return c;
    }
    cr_assert_fail("no case '%s'", what);
    return make_cases(0, &count);
}

Test(import_lod, looping_clips_close_with_frame_zero)
{
    for (int mode = 0; mode <= 6; mode++) {
        lod_case c = named_case("a skinned mesh and a clip");
        c.mode = mode;
        c.frames = 3;
        c.interval = 33;
        lb b;
        build_case(&c, &b);
        kiln_source_scene scene;
        cr_assert_eq(expect_outcome(b.d, b.n, "ok", "clip", &scene), KILN_OK);
        cr_assert_eq(scene.animation_count, 1);
        const kiln_source_animation *a = &scene.animations[0];
        int looping = mode == 2 || mode == 5; /* loop, loop backward (D.3) */
        cr_expect_eq(a->looping, (uint32_t)looping, "mode %d", mode);
        cr_expect(fabs(a->framerate - 1000.0 / 33.0) < 1e-4);
        cr_assert_eq(a->curve_count, 8); /* 2 bones x (rotation, tx, ty, tz) */
        for (uint32_t k = 0; k < a->curve_count; k++) {
            const kiln_source_curve *cv = &a->curves[k];
            cr_assert_eq(cv->key_count, 3u + (uint32_t)looping, "mode %d", mode);
            cr_expect_eq(cv->mode, KILN_SOURCE_ABSOLUTE);
            cr_expect_eq(cv->frames[cv->key_count - 1], cv->key_count - 1);
            if (!looping) continue;
            int comps = cv->channel == KILN_SOURCE_CHANNEL_ROTATION ? 4 : 1;
            for (int j = 0; j < comps; j++) /* same rotation, maybe the other hemisphere */
                cr_expect(fabs(fabs(cv->values[3 * comps + j]) - fabs(cv->values[j])) < 1e-6);
        }
        kiln_source_scene_free(&scene);
        lb_free(&b);
    }
}

Test(import_lod, rest_pose_is_frame_zero_of_the_first_clip)
{
    lod_case c = named_case("a skinned mesh and a clip");
    c.frames = 4;
    lb b;
    build_case(&c, &b);
    kiln_source_scene scene;
    cr_assert_eq(expect_outcome(b.d, b.n, "ok", "rest", &scene), KILN_OK);
    const kiln_source_skeleton *sk = scene.models[0].skeleton;
    cr_assert_eq(sk->bone_count, 2);
    cr_expect_eq(sk->bones[1].parent, 0);
    cr_expect(sk->bones[1].local_position[1] == 1.0f); /* frame 0: t = (0, 1, 0), no rotation */
    cr_expect(sk->bones[1].local_rotation[3] == 1.0f);
    /* frame 2 of bone 1 turns 0.2 rad about Z: q = (0, 0, sin 0.1, cos 0.1) */
    const kiln_source_curve *rot = &scene.animations[0].curves[4];
    cr_assert_str_eq(rot->target, "b1");
    cr_assert_eq(rot->channel, KILN_SOURCE_CHANNEL_ROTATION);
    cr_expect(fabs(rot->values[8 + 2] - sin(0.1)) < 1e-6 && fabs(rot->values[8 + 3] - cos(0.1)) < 1e-6);
    kiln_source_scene_free(&scene);
    lb_free(&b);
}

Test(import_lod, vertices_without_records_stay_unweighted)
{
    lod_case c = named_case("records for 2 of 3 vertices");
    lb b;
    build_case(&c, &b);
    kiln_source_scene scene;
    cr_assert_eq(expect_outcome(b.d, b.n, "ok-with-warning: W10", "unweighted", &scene), KILN_OK);
    const kiln_source_mesh *m = &scene.models[0].meshes[0];
    /* One influence would read as rigid (weight 1) to the bake: two slots keep the zeros. */
    cr_assert_eq(m->max_influence, 2);
    for (uint32_t k = 0; k < 3; k++) {
        uint32_t v = m->faces[k];
        float w0 = m->weight_values[v * 2], w1 = m->weight_values[v * 2 + 1];
        cr_expect(w1 == 0.0f);
        cr_expect(w0 == (k < 2 ? 1.0f : 0.0f), "corner %u weight %g", k, w0);
        if (k < 2) cr_expect_eq(m->weight_bones[v * 2], 1);
    }
    kiln_source_scene_free(&scene);
    lb_free(&b);
}

/* Every prefix and every single-byte change of small files: an outcome, never a crash; a
 * reject always names an R rule with a message. */
Test(import_lod, truncations_and_byte_flips_are_handled)
{
    lod_case c = named_case("a skinned mesh and a clip");
    lb b;
    build_case(&c, &b);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < b.n; i++) {
            unsigned char *copy = malloc(b.n);
            memcpy(copy, b.d, b.n);
            size_t size = b.n;
            if (pass == 0) size = i;
            else copy[i] ^= (unsigned char)(i % 3 == 0 ? 0xFF : i % 3 == 1 ? 0x80 : 0x01);
            kiln_source_scene scene;
            kiln_source_scene_init(&scene, NULL);
            kiln_diag err;
            kiln_result r = kiln__import_lod(copy, size, "t.lod", NULL, &scene, &err);
            if (r != KILN_OK) cr_expect(err.rule[0] == 'R' && err.message[0], "pass %d byte %zu: '%s'", pass, i, err.message);
            if (pass == 0) cr_expect_neq(r, KILN_OK, "prefix of %zu bytes loaded", i);
            kiln_source_scene_free(&scene);
            free(copy);
        }
    lb_free(&b);
}

/* ---- end to end: `kiln pose --json` on every good case with a clip ----------------------- */

#include "cli_run.h"

static void frame_text(double f, char *out, size_t cap)
{
    /* `--frames` takes plain decimals: no exponent. */
    snprintf(out, cap, "%.6f", f);
    char *e = out + strlen(out) - 1;
    while (e > out && *e == '0') *e-- = 0;
    if (*e == '.') *e = 0;
}

Test(import_lod, kiln_pose_matches_expected_frames)
{
    char dir[1024];
    lod_dir(dir, sizeof dir);
    jr_value *cases = corpus_json(dir, "cases.json");
    cr_assert_not_null(cases, "no cases.json in %s", dir);
    int ran = 0;
    for (size_t i = 0; i < jr_len(cases); i++) {
        const jr_value *c = jr_at(cases, i);
        const char *name = jstr(jr_get(c, "case"));
        outcome o;
        parse_outcome(jstr(jr_get(c, "outcome")), &o);
        if (strcmp(o.kind, "reject") == 0 || !jr_is_str(jr_get(c, "anim"))) continue;
        jr_value *exp = corpus_json(dir, jstr(jr_get(c, "expected")));
        cr_assert_not_null(exp, "%s: no expected JSON", name);
        const jr_value *frames = jr_get(exp, "frames");
        if (!jr_len(frames)) {
            jr_free(exp);
            continue;
        }
        char list[4096] = "";
        for (size_t f = 0; f < jr_len(frames); f++) {
            char one[64];
            frame_text(jr_num(jr_get(jr_at(frames, f), "frame")), one, sizeof one);
            if (f) strncat(list, ",", sizeof list - strlen(list) - 1);
            strncat(list, one, sizeof list - strlen(list) - 1);
        }
        char model[1200], anim[1200];
        snprintf(model, sizeof model, "%s/%s", dir, jstr(jr_get(c, "model")));
        snprintf(anim, sizeof anim, "%s/%s", dir, jstr(jr_get(c, "anim")));
        const char *clip = jr_str(jr_get(c, "clip"));
        const char *args[12];
        int n = 0;
        args[n++] = "pose";
        args[n++] = "--json";
        args[n++] = model;
        if (strcmp(model, anim) != 0) args[n++] = anim;
        if (clip) {
            args[n++] = "--clip";
            args[n++] = clip;
        }
        args[n++] = "--frames";
        args[n++] = list;
        args[n] = NULL;
        cli_result r = cli_run(args);
        cr_assert_eq(r.status, 0, "%s: kiln pose exit %d: %s", name, r.status, r.err);
        char err[160];
        jr_value *doc = jr_parse(r.out, strlen(r.out), err, sizeof err);
        cr_assert_not_null(doc, "%s: pose output is not JSON (%s)", name, err);
        cli_result_free(&r);

        double tol = jr_num_or(jr_get(jr_get(exp, "tolerance"), "matrix"), 1e-4);
        const jr_value *joints = jr_get(doc, "joints"), *got = jr_get(doc, "frames");
        cr_assert_eq(jr_len(got), jr_len(frames), "%s: %zu frames", name, jr_len(got));
        for (size_t f = 0; f < jr_len(frames); f++) {
            const jr_value *ef = jr_at(frames, f), *gf = jr_at(got, f);
            const jr_value *bones = jr_get(ef, "bones");
            for (size_t b = 0; b < jr_len(bones); b++) {
                const char *bone = jr_key(bones, b);
                size_t k = 0;
                while (k < jr_len(joints) && strcmp(jstr(jr_at(joints, k)), bone) != 0) k++;
                cr_assert_lt(k, jr_len(joints), "%s: no joint '%s'", name, bone);
                const jr_value *rows = jr_get(jr_at(bones, b), "model");
                const jr_value *m = jr_at(jr_get(gf, "model"), k); /* column-major */
                for (int row = 0; row < 4; row++)
                    for (int col = 0; col < 4; col++) {
                        double e = jr_num(jr_at(jr_at(rows, (size_t)row), (size_t)col));
                        double g = jr_num(jr_at(m, (size_t)(col * 4 + row)));
                        cr_expect(near(g, e, tol), "%s: frame %g bone %s model[%d][%d] = %.9g, expected %.9g", name,
                                  jr_num(jr_get(ef, "frame")), bone, row, col, g, e);
                    }
            }
        }
        jr_free(doc);
        jr_free(exp);
        ran++;
    }
    cr_expect_gt(ran, 0, "no case with a clip");
    jr_free(cases);
}
