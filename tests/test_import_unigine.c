/* The Unigine .mesh/.anim importer against the shared corpus (corpus/unigine): cases.json and
 * expected/<case>.json are read at run time, so further cases in the same layout are checked
 * without code changes.
 *
 *   - every bad/ file gets exactly the outcome cases.json (MANIFEST.md) names: a reject with
 *     that rule, or a load with that warning; nothing leaks (counting allocator);
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/unigine/unigine.h"
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

