/* `kiln convert`, run as a separate process: every good corpus file converted Cast -> Cast must
 * bake into the same blob sections as the original (meshes, skins, materials, instances,
 * clips: equal byte for byte) and pose the same for every animation case in cases.json
 * (`kiln pose --json`, within 1e-6); the Unigine and LOD corpus files bake the same once
 * converted too; several inputs stay distinct in one file; failures exit with the documented
 * codes and leave no output behind. */
#define _XOPEN_SOURCE 700 /* realpath */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"
#include "json_read.h"
#include "kiln/anim.h"
#include "kiln/blob.h"
#include "kiln/bake/cast.h"
#include "kiln/bake/cast_scene.h"
#include "test_util.h"

/* The one good corpus file too large for a test run. */
#define SKIPPED_LARGE "large_500k.cast"

/* ---- scratch directory ------------------------------------------------------------------------ */

typedef struct scratch {
    char dir[64];
} scratch;

static void scratch_init(scratch *s)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/kiln_cli_convert_XXXXXX");
    cr_assert_not_null(mkdtemp(s->dir));
}

static void scratch_path(const scratch *s, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", s->dir, name);
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(path);
        else unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- running the tool ------------------------------------------------------------------------- */

static void run_ok(const char *const *args, const char *what)
{
    cli_result r = cli_run(args);
    cr_assert_eq(r.status, 0, "%s: exit %d: %s", what, r.status, r.err);
    cli_result_free(&r);
}

/* Converts; `importer_errors`: the input's importer may report dropped data (some corpus
 * files are built to make it). */
static void convert_as(const char *const *inputs, int n, const char *out, int importer_errors)
{
    const char *args[16] = {"convert"};
    int k = 1;
    for (int i = 0; i < n && k < 13; i++) args[k++] = inputs[i];
    args[k++] = "-o";
    args[k++] = out;
    args[k] = NULL;
    cli_result r = cli_run(args);
    cr_assert_eq(r.status, 0, "convert %s: exit %d: %s", inputs[0], r.status, r.err);
    if (!importer_errors)
        cr_expect(strstr(r.err, ": error: ") == NULL, "convert %s reported errors: %s", inputs[0], r.err);
    cli_result_free(&r);
}

static void convert(const char *const *inputs, int n, const char *out)
{
    convert_as(inputs, n, out, 0);
}

static void bake(const char *in, const char *out)
{
    const char *args[] = {"bake", in, "-o", out, NULL};
    run_ok(args, in);
}

/* ---- comparing blobs -------------------------------------------------------------------------- */

/* Every section of the two blobs, kind by kind and byte by byte. */
static void expect_same_sections(const char *a_path, const char *b_path, const char *what)
{
    kiln_blob_file a, b;
    kiln_diag err;
    cr_assert_eq(kiln_blob_open_file(a_path, 0, NULL, &a, &err), KILN_OK, "%s", err.message);
    cr_assert_eq(kiln_blob_open_file(b_path, 0, NULL, &b, &err), KILN_OK, "%s", err.message);
    uint32_t na, nb;
    const kiln_blob_section *sa = kiln_blob_sections(a.blob, &na), *sb = kiln_blob_sections(b.blob, &nb);
    cr_expect_eq(na, nb, "%s: %u sections, converted %u", what, na, nb);
    const unsigned char *ba = (const unsigned char *)a.blob, *bb = (const unsigned char *)b.blob;
    for (uint32_t i = 0; i < na && i < nb; i++) {
        char ka[5], kb[5];
        kiln_blob_kind_name(sa[i].kind, ka);
        kiln_blob_kind_name(sb[i].kind, kb);
        cr_expect_eq(sa[i].kind, sb[i].kind, "%s: section %u is %s, converted %s", what, i, ka, kb);
        cr_expect_eq(sa[i].count, sb[i].count, "%s: %s holds %u records, converted %u", what, ka, sa[i].count,
                     sb[i].count);
        cr_expect_eq(sa[i].size, sb[i].size, "%s: %s is %llu bytes, converted %llu", what, ka,
                     (unsigned long long)sa[i].size, (unsigned long long)sb[i].size);
        if (sa[i].kind != sb[i].kind || sa[i].size != sb[i].size) continue;
        cr_expect(memcmp(ba + sa[i].offset, bb + sb[i].offset, (size_t)sa[i].size) == 0,
                  "%s: section %s differs after conversion", what, ka);
    }
    kiln_blob_close_file(&a);
    kiln_blob_close_file(&b);
}

/* The good corpus files: the top-level *.cast (malformed ones live in bad/), sorted. */
static int corpus_files(const char *dir, char names[][64], int cap)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || len >= 64 || strcmp(e->d_name + len - 5, ".cast") != 0) continue;
        if (strcmp(e->d_name, SKIPPED_LARGE) == 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        cr_assert_lt(n, cap);
        memcpy(names[n++], e->d_name, len + 1);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    return n;
}

Test(cli_convert, every_good_corpus_file_bakes_the_same_after_conversion, .timeout = 600)
{
    char dir[512];
    corpus_dir_or_skip(dir, sizeof dir);
    static char names[128][64];
    int n = corpus_files(dir, names, 128);
    cr_assert_gt(n, 10, "only %d corpus files", n);
    scratch s;
    scratch_init(&s);
    for (int i = 0; i < n; i++) {
        /* The converted file keeps the original's name: unnamed models and clips are named
         * after their file. Absolute paths on both sides, so instance paths resolve alike. */
        char in[1024], conv[256], a[256], b[256];
        snprintf(in, sizeof in, "%s/%s", dir, names[i]);
        scratch_path(&s, names[i], conv, sizeof conv);
        scratch_path(&s, "original.kiln", a, sizeof a);
        scratch_path(&s, "converted.kiln", b, sizeof b);
        const char *inputs[1] = {in};
        convert(inputs, 1, conv);
        bake(in, a);
        bake(conv, b);
        expect_same_sections(a, b, names[i]);
        unlink(conv);
    }
    remove_tree(s.dir);
}

/* The other formats' corpus files: converted to Cast (the stem kept, so default names agree),
 * they bake into the same sections as the originals. */
Test(cli_convert, other_formats_bake_the_same_after_conversion, .timeout = 600)
{
    char dir[512];
    corpus_dir_or_skip(dir, sizeof dir);
    static const char *const folders[][2] = {{"unigine", ".mesh"}, {"unigine", ".anim"}, {"lod", ".lod"}, {"shape", ".Shape"}};
    scratch s;
    scratch_init(&s);
    int converted = 0;
    for (size_t f = 0; f < sizeof folders / sizeof folders[0]; f++) {
        char sub[600];
        snprintf(sub, sizeof sub, "%s/%s", dir, folders[f][0]);
        DIR *d = opendir(sub);
        if (!d) continue;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            size_t len = strlen(e->d_name), ext = strlen(folders[f][1]);
            if (len <= ext || len >= 64 || strcmp(e->d_name + len - ext, folders[f][1]) != 0) continue;
            char in[1024], name[80], conv[256], a[256], b[256];
            snprintf(in, sizeof in, "%s/%s", sub, e->d_name);
            snprintf(name, sizeof name, "%.*s.cast", (int)(len - ext), e->d_name);
            scratch_path(&s, name, conv, sizeof conv);
            scratch_path(&s, "original.kiln", a, sizeof a);
            scratch_path(&s, "converted.kiln", b, sizeof b);
            const char *inputs[1] = {in};
            convert_as(inputs, 1, conv, 1);
            bake(in, a);
            bake(conv, b);
            expect_same_sections(a, b, e->d_name);
            unlink(conv);
            converted++;
        }
        closedir(d);
    }
    if (!converted) cr_skip_test("no Unigine or LOD corpus files in %s", dir);
    remove_tree(s.dir);
}

/* ---- comparing poses -------------------------------------------------------------------------- */

static jr_value *pose_json(const char *model, const char *anim)
{
    const char *args[] = {"pose", model, anim, "--frames", "0-310:0.75", "--skin", "0", "--json", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.status, 0, "pose %s %s: %s", model, anim, r.err);
    char err[256];
    jr_value *doc = jr_parse(r.out, strlen(r.out), err, sizeof err);
    cr_assert_not_null(doc, "pose --json: %s", err);
    cli_result_free(&r);
    return doc;
}

/* Same structure, same strings, numbers within `tol`; counts the numbers compared. */
static void expect_close(const jr_value *a, const jr_value *b, double tol, const char *where, long *numbers)
{
    cr_assert_eq(jr_type_of(a), jr_type_of(b), "%s: %s vs %s", where, jr_type_name(jr_type_of(a)),
                 jr_type_name(jr_type_of(b)));
    switch (jr_type_of(a)) {
    case JR_NUMBER:
        (*numbers)++;
        cr_expect(fabs(jr_num(a) - jr_num(b)) <= tol, "%s: %.9g vs %.9g", where, jr_num(a), jr_num(b));
        break;
    case JR_STRING: cr_expect_str_eq(jr_str(a), jr_str(b), "%s", where); break;
    case JR_BOOL: cr_expect_eq(jr_bool(a, 0), jr_bool(b, 0), "%s", where); break;
    case JR_ARRAY:
    case JR_OBJECT:
        cr_assert_eq(jr_len(a), jr_len(b), "%s: %zu vs %zu elements", where, jr_len(a), jr_len(b));
        for (size_t i = 0; i < jr_len(a); i++) {
            char inner[256];
            if (jr_is_obj(a)) {
                cr_assert_str_eq(jr_key(a, i), jr_key(b, i), "%s: member %zu", where, i);
                snprintf(inner, sizeof inner, "%.200s.%s", where, jr_key(a, i));
            } else {
                snprintf(inner, sizeof inner, "%.200s[%zu]", where, i);
            }
            expect_close(jr_at(a, i), jr_at(b, i), tol, inner, numbers);
        }
        break;
    default: break;
    }
}

Test(cli_convert, every_animation_case_poses_the_same_after_conversion, .timeout = 600)
{
    char dir[512];
    corpus_dir_or_skip(dir, sizeof dir);
    jr_value *cases = corpus_json(dir, "cases.json");
    if (!cases) cr_skip_test("no cases.json in %s", dir);
    cr_assert_gt(jr_len(cases), 0);
    scratch s;
    scratch_init(&s);
    for (size_t i = 0; i < jr_len(cases); i++) {
        const jr_value *c = jr_at(cases, i);
        const char *name = jr_str(jr_get(c, "case"));
        const char *files[2] = {jr_str(jr_get(c, "model")), jr_str(jr_get(c, "anim"))};
        cr_assert(name && files[0] && files[1], "case %zu is incomplete", i);
        char orig[2][1024], conv[2][256];
        for (int k = 0; k < 2; k++) {
            snprintf(orig[k], sizeof orig[k], "%s/%s", dir, files[k]);
            scratch_path(&s, files[k], conv[k], sizeof conv[k]);
            const char *inputs[1] = {orig[k]};
            convert(inputs, 1, conv[k]);
        }
        jr_value *a = pose_json(orig[0], orig[1]);
        jr_value *b = pose_json(conv[0], conv[1]);
        long numbers = 0;
        expect_close(a, b, 1e-6, name, &numbers);
        cr_expect_gt(numbers, 1000, "%s: only %ld numbers compared", name, numbers);
        jr_free(a);
        jr_free(b);
        unlink(conv[0]);
        unlink(conv[1]);
    }
    jr_free(cases);
    remove_tree(s.dir);
}

/* ---- layout, scene roots, failures ------------------------------------------------------------ */

/* A model file, a model file and a clip-only file: three Roots, two models, one clip. */
Test(cli_convert, several_inputs_stay_distinct)
{
    char dir[512];
    corpus_dir_or_skip(dir, sizeof dir);
    char in[3][1024];
    static const char *const names[3] = {"tri_mesh.cast", "anim_rig_model.cast", "anim_abs_all.cast"};
    for (int i = 0; i < 3; i++) snprintf(in[i], sizeof in[i], "%s/%s", dir, names[i]);
    scratch s;
    scratch_init(&s);
    char out[256], blob[256];
    scratch_path(&s, "all.cast", out, sizeof out);
    scratch_path(&s, "all.kiln", blob, sizeof blob);
    const char *inputs[3] = {in[0], in[1], in[2]};
    convert(inputs, 3, out);

    file_bytes fb;
    cr_assert(read_file(out, &fb));
    kiln_cast_doc *doc;
    kiln_diag err;
    cr_assert_eq(kiln_cast_parse(fb.data, fb.size, NULL, &doc, &err), KILN_OK, "%s", err.message);
    cr_expect_eq(kiln_cast_root_count(doc), 3);
    cr_expect_eq(kiln_cast_child_count(doc, kiln_cast_root(doc, 0), KILN_CAST_ID_MODEL), 1);
    cr_expect_eq(kiln_cast_child_count(doc, kiln_cast_root(doc, 1), KILN_CAST_ID_MODEL), 1);
    cr_expect_eq(kiln_cast_child_count(doc, kiln_cast_root(doc, 2), KILN_CAST_ID_MODEL), 0);
    cr_expect_eq(kiln_cast_child_count(doc, kiln_cast_root(doc, 2), KILN_CAST_ID_ANIMATION), 1);
    kiln_cast_free(doc);
    file_bytes_free(&fb);

    bake(out, blob);
    kiln_blob_file f;
    cr_assert_eq(kiln_blob_open_file(blob, 0, NULL, &f, &err), KILN_OK, "%s", err.message);
    uint32_t models = 0, anims = 0;
    kiln_blob_models(f.blob, &models);
    kiln_blob_animations(f.blob, &anims);
    cr_expect_eq(models, 2);
    cr_expect_eq(anims, 1);
    kiln_blob_close_file(&f);
    remove_tree(s.dir);
}

/* A relative scene root is rewritten for the output's directory; the instances then resolve
 * to the same files (the corpus test compares the baked references). */
Test(cli_convert, relative_scene_root_follows_the_output)
{
    char dir[512];
    corpus_dir_or_skip(dir, sizeof dir);
    char in[1024];
    snprintf(in, sizeof in, "%s/instances_small.cast", dir);
    scratch s;
    scratch_init(&s);
    char sub[256], out[320];
    scratch_path(&s, "deeper", sub, sizeof sub);
    cr_assert_eq(mkdir(sub, 0700), 0);
    snprintf(out, sizeof out, "%s/instances_small.cast", sub);
    const char *inputs[1] = {in};
    convert(inputs, 1, out);

    file_bytes fb;
    cr_assert(read_file(out, &fb));
    kiln_cast_doc *doc;
    kiln_diag err;
    cr_assert_eq(kiln_cast_parse(fb.data, fb.size, NULL, &doc, &err), KILN_OK, "%s", err.message);
    kiln_cast_metadata md;
    cr_assert_eq(kiln_cast_get_metadata(doc, kiln_cast_find_metadata(doc), &md, NULL), KILN_OK);
    cr_assert_not_null(md.scene_root);
    /* Relative, and from the output's directory it names the corpus directory (the input's sr
     * is '.'), wherever the two lie. */
    cr_expect_neq(md.scene_root[0], '/', "the scene root %s is absolute", md.scene_root);
    char joined[1400], got[PATH_MAX], want[PATH_MAX];
    snprintf(joined, sizeof joined, "%s/%s", sub, md.scene_root);
    cr_assert_not_null(realpath(joined, got), "%s does not resolve", joined);
    cr_assert_not_null(realpath(dir, want));
    cr_expect_str_eq(got, want, "the scene root %s leads to %s, not the corpus", md.scene_root, got);
    kiln_cast_free(doc);
    file_bytes_free(&fb);

    char a[256], b[256];
    scratch_path(&s, "a.kiln", a, sizeof a);
    scratch_path(&s, "b.kiln", b, sizeof b);
    bake(in, a);
    bake(out, b);
    expect_same_sections(a, b, "instances_small.cast from another directory");
    remove_tree(s.dir);
}

/* Next to its input, a converted file keeps the scene root exactly as written. */
Test(cli_convert, scene_root_is_kept_in_the_same_directory)
{
    char dir[512];
    corpus_dir_or_skip(dir, sizeof dir);
    file_bytes fb;
    cr_assert(corpus_read(dir, "instances_small.cast", &fb));
    scratch s;
    scratch_init(&s);
    char in[256], out[256];
    scratch_path(&s, "in.cast", in, sizeof in);
    scratch_path(&s, "out.cast", out, sizeof out);
    FILE *f = fopen(in, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(fb.data, 1, fb.size, f), fb.size);
    fclose(f);
    file_bytes_free(&fb);
    const char *inputs[1] = {in};
    convert(inputs, 1, out);
    cr_assert(read_file(out, &fb));
    kiln_cast_doc *doc;
    kiln_diag err;
    cr_assert_eq(kiln_cast_parse(fb.data, fb.size, NULL, &doc, &err), KILN_OK, "%s", err.message);
    kiln_cast_metadata md;
    cr_assert_eq(kiln_cast_get_metadata(doc, kiln_cast_find_metadata(doc), &md, NULL), KILN_OK);
    cr_expect_str_eq(md.scene_root, ".");
    kiln_cast_free(doc);
    file_bytes_free(&fb);
    remove_tree(s.dir);
}

Test(cli_convert, failures_exit_with_their_code_and_write_nothing)
{
    char dir[512];
    int have_corpus = corpus_dir(dir, sizeof dir);
    scratch s;
    scratch_init(&s);
    char good[256], out[256], bad[256], missing_dir[320];
    scratch_path(&s, "good.cast", good, sizeof good);
    scratch_path(&s, "out.cast", out, sizeof out);
    scratch_path(&s, "garbage.bin", bad, sizeof bad);
    snprintf(missing_dir, sizeof missing_dir, "%s/no/such/dir/out.cast", s.dir);

    /* a small valid Cast input, written with the writer */
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 3);
    static const float vp[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    static const uint32_t f[3] = {0, 1, 2};
    kiln_cast_writer_floats(w, mesh, "vp", KILN_CAST_TYPE_VEC3, vp, 3);
    kiln_cast_writer_ints(w, mesh, "f", f, 3);
    kiln_diag err;
    cr_assert_eq(kiln_cast_writer_save(w, good, &err), KILN_OK, "%s", err.message);
    kiln_cast_writer_destroy(w);
    FILE *g = fopen(bad, "wb");
    cr_assert_not_null(g);
    fputs("this is no format anyone reads", g);
    fclose(g);

    /* usage */
    const char *no_output[] = {"convert", good, NULL};
    const char *no_input[] = {"convert", "-o", out, NULL};
    const char *bad_opt[] = {"convert", "--frobnicate", good, "-o", out, NULL};
    const char *bad_fps[] = {"convert", "--framerate", "-3", good, "-o", out, NULL};
    const char *const *usage[] = {no_output, no_input, bad_opt, bad_fps};
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        cli_result r = cli_run(usage[i]);
        cr_expect_eq(r.status, 1, "usage case %zu: exit %d: %s", i, r.status, r.err);
        cr_expect(strstr(r.err, "--help") != NULL, "usage case %zu: %s", i, r.err);
        cli_result_free(&r);
    }

    /* bad inputs: exit 2, nothing written, an existing output untouched */
    const char *unknown[] = {"convert", good, bad, "-o", out, NULL};
    cli_result r = cli_run(unknown);
    cr_expect_eq(r.status, 2, "%s", r.err);
    cr_expect(strstr(r.err, bad) != NULL, "names the input: %s", r.err);
    cli_result_free(&r);
    cr_expect(!exists(out));
    const char *absent[] = {"convert", "/nonexistent/x.cast", "-o", out, NULL};
    r = cli_run(absent);
    cr_expect_eq(r.status, 2, "%s", r.err);
    cli_result_free(&r);
    cr_expect(!exists(out));

    const char *ok[] = {"convert", good, "-o", out, NULL};
    run_ok(ok, "convert");
    file_bytes before;
    cr_assert(read_file(out, &before));
    r = cli_run(unknown);
    cr_expect_eq(r.status, 2);
    cli_result_free(&r);
    file_bytes after;
    cr_assert(read_file(out, &after));
    cr_expect(before.size == after.size && memcmp(before.data, after.data, before.size) == 0,
              "a failed conversion leaves the old output as it was");
    file_bytes_free(&before);
    file_bytes_free(&after);

    /* --strict: an input whose import drops data */
    if (have_corpus) {
        char mismatch[1024], strict_out[256];
        snprintf(mismatch, sizeof mismatch, "%s/bad/curve_kb_kv_mismatch.cast", dir);
        scratch_path(&s, "strict.cast", strict_out, sizeof strict_out);
        const char *strict[] = {"convert", "--strict", mismatch, "-o", strict_out, NULL};
        r = cli_run(strict);
        cr_expect_eq(r.status, 2, "%s", r.err);
        cr_expect(strstr(r.err, "error") != NULL, "%s", r.err);
        cli_result_free(&r);
        cr_expect(!exists(strict_out));
        const char *lenient[] = {"convert", mismatch, "-o", strict_out, NULL};
        r = cli_run(lenient);
        cr_expect_eq(r.status, 0, "%s", r.err);
        cli_result_free(&r);
        cr_expect(exists(strict_out));
    }

    /* an output that cannot be written: exit 4, no file */
    const char *unwritable[] = {"convert", good, "-o", missing_dir, NULL};
    r = cli_run(unwritable);
    cr_expect_eq(r.status, 4, "%s", r.err);
    cli_result_free(&r);
    cr_expect_eq(entries(s.dir), have_corpus ? 4 : 3, "good, garbage, out (and strict): no temporary file left");

    const char *help[] = {"convert", "--help", NULL};
    r = cli_run(help);
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "Exit status") != NULL && strstr(r.out, "-o OUT.cast") != NULL, "%s", r.out);
    cli_result_free(&r);
    remove_tree(s.dir);
}
