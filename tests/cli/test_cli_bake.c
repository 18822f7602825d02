/* `kiln bake`, `kiln verify` and `kiln inspect` on blobs, run as separate processes: the round
 * trip bake -> verify -> inspect, the report, the animation options and statistics, and the
 * documented exit codes (1 usage, 2 bad input, 4 output failure) with no partial output left
 * behind. Inputs are written here with the Cast writer, plus the bundled samples and the
 * shared corpus when present. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"
#include "kiln/blob.h"
#include "kiln/bake/cast_write.h"
#include "test_util.h"

/* A scratch directory with one small model file in it, removed by `scratch_done`. */
typedef struct scratch {
    char dir[64];
    char cast[128];  /* dir/model.cast */
    char kiln[128];  /* dir/model.kiln */
} scratch;

static void scratch_init(scratch *s)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/kiln_cli_bake_XXXXXX");
    cr_assert_not_null(mkdtemp(s->dir));
    snprintf(s->cast, sizeof s->cast, "%s/model.cast", s->dir);
    snprintf(s->kiln, sizeof s->kiln, "%s/model.kiln", s->dir);

    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    kiln_cast_writer_string(w, model, "n", "crate");
    uint32_t skel = kiln_cast_writer_node(w, model, KILN_CAST_ID_SKELETON, 3);
    const int32_t parents[2] = {-1, 0};
    static const char *const names[2] = {"base", "lid"};
    for (int i = 0; i < 2; i++) {
        uint32_t bone = kiln_cast_writer_node(w, skel, KILN_CAST_ID_BONE, 4 + (uint64_t)i);
        kiln_cast_writer_string(w, bone, "n", names[i]);
        kiln_cast_writer_prop(w, bone, "p", KILN_CAST_TYPE_INT, &parents[i], 1);
    }
    static const float vp[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    const uint32_t f[6] = {0, 1, 2, 0, 2, 3};
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 10);
    kiln_cast_writer_string(w, mesh, "n", "box");
    kiln_cast_writer_floats(w, mesh, "vp", KILN_CAST_TYPE_VEC3, vp, 4);
    kiln_cast_writer_ints(w, mesh, "f", f, 6);
    kiln_diag err;
    cr_assert_eq(kiln_cast_writer_save(w, s->cast, &err), KILN_OK, "%s", err.message);
    kiln_cast_writer_destroy(w);
}

static void scratch_file(const scratch *s, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", s->dir, name);
}

static int scratch_entries(const scratch *s)
{
    DIR *d = opendir(s->dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
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

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

Test(cli_bake, bake_then_verify_then_inspect)
{
    scratch s;
    scratch_init(&s);
    const char *bake[] = {"bake", s.cast, "-o", s.kiln, NULL};
    cli_result r = cli_run(bake);
    cr_expect_eq(r.status, 0, "bake: %s", r.err);
    cli_result_free(&r);
    cr_assert(file_exists(s.kiln));

    const char *verify[] = {"verify", s.kiln, NULL};
    r = cli_run(verify);
    cr_expect_eq(r.status, 0, "verify: %s", r.err);
    cr_expect(strstr(r.out, ": OK") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "1 models, 1 meshes, 2 bones") != NULL, "%s", r.out);
    cli_result_free(&r);

    const char *no_crc[] = {"verify", "--no-crc", s.kiln, NULL};
    r = cli_run(no_crc);
    cr_expect_eq(r.status, 0, "verify --no-crc: %s", r.err);
    cli_result_free(&r);

    const char *inspect[] = {"inspect", s.kiln, NULL};
    r = cli_run(inspect);
    cr_expect_eq(r.status, 0, "inspect: %s", r.err);
    char version[32];
    /* no reference resolved to a model (IRMD, 1.3): the blob says the lowest minor that describes it */
    snprintf(version, sizeof version, "kiln blob %d.2", KILN_BLOB_VERSION_MAJOR);
    cr_expect(strstr(r.out, version) != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "model 'crate'") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "skeleton: 2 bones, depth 2") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "mesh 'box': 4 vertices, 6 indices") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "sections:") != NULL && strstr(r.out, "DATA") != NULL, "%s", r.out);
    cli_result_free(&r);

    const char *inspect_json[] = {"inspect", "--json", s.kiln, NULL};
    r = cli_run(inspect_json);
    cr_expect_eq(r.status, 0, "inspect --json: %s", r.err);
    cr_expect(strstr(r.out, "\"kind\": \"blob\"") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "\"name\": \"crate\"") != NULL, "%s", r.out);
    cli_result_free(&r);
    scratch_done(&s);
}

Test(cli_bake, verbose_stats_and_report_are_written)
{
    scratch s;
    scratch_init(&s);
    char report[256];
    scratch_file(&s, "report.json", report, sizeof report);
    const char *bake[] = {"bake", "-v", "--report", report, "-j", "2", s.cast, s.cast, "-o", s.kiln, NULL};
    cli_result r = cli_run(bake);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "input: 2 files") != NULL, "%s", r.err);
    cr_expect(strstr(r.err, "output: 2 models") != NULL, "%s", r.err);
    cr_expect(strstr(r.err, "[2/2]") != NULL, "no progress: %s", r.err);
    cr_expect(strstr(r.err, "BONE") != NULL && strstr(r.err, "IBND") != NULL, "%s", r.err);
    cli_result_free(&r);

    file_bytes rep, blob;
    cr_assert(read_file(report, &rep));
    cr_assert(read_file(s.kiln, &blob));
    char *text = calloc(1, rep.size + 1);
    memcpy(text, rep.data, rep.size);
    char want[64];
    snprintf(want, sizeof want, "\"output_bytes\": %zu", blob.size);
    cr_expect(strstr(text, "\"schema\": 1") != NULL, "%s", text);
    cr_expect(strstr(text, want) != NULL, "no '%s' in %s", want, text);
    cr_expect(strstr(text, "\"kind\": \"MODL\"") != NULL, "%s", text);
    free(text);
    file_bytes_free(&rep);
    file_bytes_free(&blob);
    cr_expect_eq(scratch_entries(&s), 3, "temporary files left behind");
    scratch_done(&s);
}

/* The number after `key` in `text` (e.g. "\"anim_bytes\": "), or -1 when absent. */
static double number_after(const char *text, const char *key)
{
    const char *at = strstr(text, key);
    return at ? strtod(at + strlen(key), NULL) : -1.0;
}

/* The bundled character and its walk cycle (samples/README.md): one clip. Lossless, its data
 * is 1 constant block (320 bytes), 10 raw tracks (72 bytes each) and 31 rows of 10 x 32
 * bytes, plus 2 scalar tracks of 31 floats: 320 + 720 + 9920 + 248 = 11208 bytes. */
Test(cli_bake, animation_stats_and_lossy_options)
{
    scratch s;
    scratch_init(&s);
    static const char *const character = KILN_SOURCE_DIR "/samples/character.cast";
    static const char *const walk = KILN_SOURCE_DIR "/samples/character_walk.cast";
    char report[256];
    scratch_file(&s, "report.json", report, sizeof report);

    const char *lossless[] = {"bake", "-v", "--report", report, character, walk, "-o", s.kiln, NULL};
    cli_result r = cli_run(lossless);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "output: 1 animation, 11208 bytes of clip data\n") != NULL, "%s", r.err);
    cli_result_free(&r);
    file_bytes rep;
    cr_assert(read_file(report, &rep));
    char *text = calloc(1, rep.size + 1);
    memcpy(text, rep.data, rep.size);
    cr_expect_eq(number_after(text, "\"animations\": "), 1, "%s", text);
    cr_expect_eq(number_after(text, "\"anim_bytes\": "), 11208, "%s", text);
    cr_expect_eq(number_after(text, "\"anim_max_error_m\": "), 0, "%s", text);
    free(text);
    file_bytes_free(&rep);

    const char *lossy[] = {"bake", "-v", "--lossy-anim", "--anim-error", "0.0005", "--anim-distance", "0.05",
                           "--report", report, character, walk, "-o", s.kiln, NULL};
    r = cli_run(lossy);
    cr_expect_eq(r.status, 0, "%s", r.err);
    const char *line = strstr(r.err, "output: 1 animation, ");
    cr_expect(line != NULL, "%s", r.err);
    double mm = line ? number_after(line, ", max measured error ") : -1.0;
    cr_expect(mm > 0 && mm <= 0.5, "max error %g mm, bound 0.5 mm: %s", mm, r.err);
    cli_result_free(&r);
    cr_assert(read_file(report, &rep));
    text = calloc(1, rep.size + 1);
    memcpy(text, rep.data, rep.size);
    double bytes = number_after(text, "\"anim_bytes\": "), err_m = number_after(text, "\"anim_max_error_m\": ");
    cr_expect(bytes > 0 && bytes < 11208, "lossy clip data of %g bytes", bytes);
    cr_expect(err_m > 0 && err_m <= 0.0005, "max error %g m", err_m);
    cr_expect_float_eq(err_m * 1e3, mm, 1e-5 * mm + 1e-9, "-v and --report agree");
    free(text);
    file_bytes_free(&rep);

    const char *inspect[] = {"inspect", s.kiln, NULL};
    r = cli_run(inspect);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "looping, lossy (error 0.5 mm at 5 cm)\n") != NULL, "%s", r.out);
    cli_result_free(&r);
    scratch_done(&s);
}

Test(cli_bake, usage_errors_exit_1)
{
    scratch s;
    scratch_init(&s);
    const char *no_args[] = {"bake", NULL};
    const char *no_output[] = {"bake", s.cast, NULL};
    const char *no_input[] = {"bake", "-o", s.kiln, NULL};
    const char *bad_opt[] = {"bake", "--frobnicate", s.cast, "-o", s.kiln, NULL};
    const char *bad_jobs[] = {"bake", "-j", "zero", s.cast, "-o", s.kiln, NULL};
    const char *bad_k[] = {"bake", "--max-influences", "9", s.cast, "-o", s.kiln, NULL};
    const char *verify_none[] = {"verify", NULL};
    const char *error_alone[] = {"bake", "--anim-error", "0.001", s.cast, "-o", s.kiln, NULL};
    const char *bad_error[] = {"bake", "--lossy-anim", "--anim-error", "-1", s.cast, "-o", s.kiln, NULL};
    const char *bad_distance[] = {"bake", "--lossy-anim", "--anim-distance", "far", s.cast, "-o", s.kiln, NULL};
    const char *const *cases[] = {no_args, no_output, no_input, bad_opt, bad_jobs, bad_k, verify_none,
                                  error_alone, bad_error, bad_distance};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_result r = cli_run(cases[i]);
        cr_expect_eq(r.status, 1, "case %zu: exit %d: %s", i, r.status, r.err);
        cr_expect(strstr(r.err, "--help") != NULL, "case %zu: no hint: %s", i, r.err);
        cli_result_free(&r);
    }
    cr_expect(!file_exists(s.kiln));
    const char *help[] = {"bake", "--help", NULL};
    cli_result r = cli_run(help);
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "Exit status") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "--lossy-anim") && strstr(r.out, "--anim-error") && strstr(r.out, "--anim-distance"),
              "%s", r.out);
    cli_result_free(&r);
    scratch_done(&s);
}

/* The help says what the blob holds: blend shapes, IK handles and constraints are baked, and
 * the inputs are not limited to Cast. */
Test(cli_bake, help_lists_what_is_baked)
{
    const char *help[] = {"bake", "--help", NULL};
    cli_result r = cli_run(help);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "blend shapes") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "IK handles and constraints") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "any format this build") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "not baked") == NULL, "%s", r.out);
    cr_expect(strstr(r.out, "IN.cast") == NULL, "%s", r.out);
    cli_result_free(&r);
}

Test(cli_bake, bad_input_exits_2_and_writes_nothing)
{
    scratch s;
    scratch_init(&s);
    char missing[256], garbage[256];
    scratch_file(&s, "missing.cast", missing, sizeof missing);
    scratch_file(&s, "garbage.cast", garbage, sizeof garbage);
    FILE *f = fopen(garbage, "wb");
    cr_assert_not_null(f);
    fputs("this is not a cast file", f);
    fclose(f);
    const char *a[] = {"bake", missing, "-o", s.kiln, NULL};
    const char *b[] = {"bake", s.cast, garbage, "-o", s.kiln, NULL};
    const char *const *cases[] = {a, b};
    for (size_t i = 0; i < 2; i++) {
        cli_result r = cli_run(cases[i]);
        cr_expect_eq(r.status, 2, "case %zu: exit %d: %s", i, r.status, r.err);
        cli_result_free(&r);
        cr_expect(!file_exists(s.kiln), "case %zu left an output", i);
    }
    cli_result r = cli_run(b);
    cr_expect(strstr(r.err, "garbage.cast") != NULL, "the failing input is not named: %s", r.err);
    cli_result_free(&r);

    const char *verify_cast[] = {"verify", s.cast, NULL};
    r = cli_run(verify_cast);
    cr_expect_eq(r.status, 2, "verify of a Cast file: %s", r.out);
    cli_result_free(&r);

    /* A blob with one byte changed fails verify, and passes nothing else. */
    const char *bake[] = {"bake", s.cast, "-o", s.kiln, NULL};
    r = cli_run(bake);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    file_bytes blob;
    cr_assert(read_file(s.kiln, &blob));
    blob.data[blob.size - 1] ^= 0x40;
    f = fopen(s.kiln, "wb");
    fwrite(blob.data, 1, blob.size, f);
    fclose(f);
    file_bytes_free(&blob);
    const char *verify[] = {"verify", s.kiln, NULL};
    r = cli_run(verify);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "crc32c") != NULL, "%s", r.err);
    cli_result_free(&r);
    scratch_done(&s);
}

Test(cli_bake, strict_mode_exits_2_when_data_would_be_dropped)
{
    scratch s;
    scratch_init(&s);
    char dropping[256];
    scratch_file(&s, "drop.cast", dropping, sizeof dropping);
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 3);
    static const float vp[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    const uint32_t faces[6] = {0, 1, 2, 0, 1, 9};
    kiln_cast_writer_floats(w, mesh, "vp", KILN_CAST_TYPE_VEC3, vp, 3);
    kiln_cast_writer_ints(w, mesh, "f", faces, 6);
    kiln_diag err;
    cr_assert_eq(kiln_cast_writer_save(w, dropping, &err), KILN_OK);
    kiln_cast_writer_destroy(w);

    const char *lenient[] = {"bake", dropping, "-o", s.kiln, NULL};
    cli_result r = cli_run(lenient);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "drop.cast: error:") != NULL, "the dropped face is not reported per file: %s", r.err);
    cli_result_free(&r);
    unlink(s.kiln);
    const char *strict[] = {"bake", "--strict", dropping, "-o", s.kiln, NULL};
    r = cli_run(strict);
    cr_expect_eq(r.status, 2, "%s", r.err);
    cli_result_free(&r);
    cr_expect(!file_exists(s.kiln));
    scratch_done(&s);
}

Test(cli_bake, output_failure_exits_4_and_leaves_no_file)
{
    scratch s;
    scratch_init(&s);
    char nowhere[256];
    scratch_file(&s, "no/such/dir/out.kiln", nowhere, sizeof nowhere);
    const char *bake[] = {"bake", s.cast, "-o", nowhere, NULL};
    cli_result r = cli_run(bake);
    cr_expect_eq(r.status, 4, "%s", r.err);
    cr_expect(strstr(r.err, "No such file or directory") != NULL, "%s", r.err);
    cli_result_free(&r);
    cr_expect_eq(scratch_entries(&s), 1, "something besides the input was left");

    char report[256];
    scratch_file(&s, "no/report.json", report, sizeof report);
    const char *bad_report[] = {"bake", s.cast, "-o", s.kiln, "--report", report, NULL};
    r = cli_run(bad_report);
    cr_expect_eq(r.status, 4, "%s", r.err);
    cli_result_free(&r);
    cr_expect(!file_exists(report));
    scratch_done(&s);
}

Test(cli_bake, corpus_files_bake_verify_and_inspect)
{
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip("corpus not found at %s: skipping", dir);
    static const char *const names[] = {"mesh_attributes.cast", "instances_small.cast", "skel_chain3_scale_ssc.cast"};
    scratch s;
    scratch_init(&s);
    char in[3][1100];
    for (int i = 0; i < 3; i++) snprintf(in[i], sizeof in[i], "%s/%s", dir, names[i]);
    const char *bake[] = {"bake", in[0], in[1], in[2], "-o", s.kiln, "-j", "3", NULL};
    cli_result r = cli_run(bake);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    const char *inspect[] = {"inspect", s.kiln, NULL};
    r = cli_run(inspect);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "instances: 6 of 3 references") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "emissive") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "metadata: 3 sources") != NULL, "%s", r.out);
    cli_result_free(&r);
    scratch_done(&s);
}
