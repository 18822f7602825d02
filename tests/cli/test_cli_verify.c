/* How the CLI reports a blob the runtime's loader rejects (`kiln verify`, `kiln inspect` and
 * `kiln pose` on a .kiln file): the loader's message already names the check and its byte
 * offset, so each appears exactly once on the line, in the documented form
 * `FILE: error: <check>: <what> (byte offset N)`. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <criterion/criterion.h>
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "kiln/bake/bake.h"
#include "kiln/blob.h"
#include "kiln/bake/cast_write.h"

typedef struct scratch {
    char dir[64];
    char blob[128];
} scratch;

/* A blob of one triangle model, baked in process and written to dir/model.kiln. */
static void scratch_init(scratch *s, unsigned char **bytes, size_t *size)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/kiln_cli_verify_XXXXXX");
    cr_assert_not_null(mkdtemp(s->dir));
    snprintf(s->blob, sizeof s->blob, "%s/model.kiln", s->dir);

    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    kiln_cast_writer_string(w, model, "n", "tri");
    static const float vp[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    static const uint32_t f[3] = {0, 1, 2};
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 3);
    kiln_cast_writer_floats(w, mesh, "vp", KILN_CAST_TYPE_VEC3, vp, 3);
    kiln_cast_writer_ints(w, mesh, "f", f, 3);
    uint64_t cast_size = kiln_cast_writer_size(w);
    cr_assert_gt(cast_size, 0);
    void *cast = malloc((size_t)cast_size);
    cr_assert_eq(kiln_cast_writer_write(w, cast, cast_size), KILN_OK);
    kiln_cast_writer_destroy(w);

    kiln_bake_input in;
    memset(&in, 0, sizeof in);
    in.path = "model.cast";
    in.data = cast;
    in.size = (size_t)cast_size;
    kiln_bake_result res;
    kiln_diag err;
    cr_assert_eq(kiln_bake(&in, 1, NULL, &res, &err), KILN_OK, "%s", err.message);
    *bytes = malloc(res.size);
    cr_assert_not_null(*bytes);
    memcpy(*bytes, res.blob, res.size);
    *size = res.size;
    kiln_bake_result_free(&res);
    free(cast);
}

static void scratch_write(const scratch *s, const unsigned char *bytes, size_t size)
{
    FILE *f = fopen(s->blob, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, size, f), size);
    cr_assert_eq(fclose(f), 0);
}

static void scratch_done(scratch *s)
{
    unlink(s->blob);
    rmdir(s->dir);
}

static int occurrences(const char *haystack, const char *needle)
{
    int n = 0;
    for (const char *p = haystack; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, sizeof v);
}

Test(cli_verify, bad_magic_names_the_field_and_offset_once)
{
    scratch s;
    unsigned char *bytes;
    size_t size;
    scratch_init(&s, &bytes, &size);
    put_u32(bytes + offsetof(kiln_blob_header, magic), 0x12345678u);
    scratch_write(&s, bytes, size);

    const char *args[] = {"verify", s.blob, NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.status, 2, "%s", r.err);
    cr_expect_str_empty(r.out);
    char expected[512];
    snprintf(expected, sizeof expected,
             "%s: error: header.magic: 0x12345678 is not the kiln blob magic 0x%08X (byte offset 0)\n", s.blob,
             KILN_BLOB_MAGIC);
    cr_expect_str_eq(r.err, expected);
    cr_expect_eq(occurrences(r.err, "header.magic"), 1, "%s", r.err);
    cr_expect_eq(occurrences(r.err, "(byte offset"), 1, "%s", r.err);
    cli_result_free(&r);
    free(bytes);
    scratch_done(&s);
}

/* A checksum failure and a record failure, through every verb that loads a blob. */
Test(cli_verify, every_blob_reader_prints_the_check_once)
{
    scratch s;
    unsigned char *bytes;
    size_t size;
    scratch_init(&s, &bytes, &size);
    /* A wrong stored CRC: only the checksum check fails. */
    uint32_t crc;
    memcpy(&crc, bytes + offsetof(kiln_blob_header, crc32c), sizeof crc);
    put_u32(bytes + offsetof(kiln_blob_header, crc32c), crc ^ 1u);
    scratch_write(&s, bytes, size);

    const char *verify[] = {"verify", s.blob, NULL};
    const char *inspect[] = {"inspect", s.blob, NULL};
    const char *pose[] = {"pose", s.blob, "--frames", "0", NULL};
    const char *const *runs[] = {verify, inspect, pose};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        cli_result r = cli_run(runs[i]);
        cr_expect_eq(r.status, 2, "%s: %s", runs[i][0], r.err);
        char head[160];
        snprintf(head, sizeof head, "%s: error: ", s.blob);
        cr_expect(strncmp(r.err, head, strlen(head)) == 0, "%s: %s", runs[i][0], r.err);
        cr_expect_eq(occurrences(r.err, s.blob), 1, "%s: %s", runs[i][0], r.err);
        cr_expect_leq(occurrences(r.err, "(byte offset"), 1, "%s: %s", runs[i][0], r.err);
        cr_expect(strstr(r.err, "checksum") != NULL || strstr(r.err, "crc") != NULL, "%s: %s", runs[i][0], r.err);
        cli_result_free(&r);
    }
    free(bytes);
    scratch_done(&s);
}

Test(cli_verify, unreadable_file_names_the_path_once)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/kiln_cli_verify_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    char missing[128];
    snprintf(missing, sizeof missing, "%s/missing.kiln", dir);
    const char *args[] = {"verify", missing, NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.status, 2, "%s", r.err);
    cr_expect_eq(occurrences(r.err, missing), 1, "%s", r.err);
    cr_expect(strstr(r.err, "error: ") != NULL, "%s", r.err);
    cr_expect(strstr(r.err, "No such file or directory") != NULL, "%s", r.err);
    cli_result_free(&r);
    rmdir(dir);
}
