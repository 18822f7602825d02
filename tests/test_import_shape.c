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
