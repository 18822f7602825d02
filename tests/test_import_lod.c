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

#include "import/lod/lod_import.h"
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
                cr_expect(err.message[0] != 0 && strstr(err.message, err.rule) != NULL, "%s: message '%s'", name,
                          err.message);
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
