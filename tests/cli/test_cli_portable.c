/* Portable blobs: the same inputs baked from two directories, named by absolute paths (as a
 * build system passes them), give the same bytes, and the blob holds no path of the machine.
 * The inputs are the bundled world (Metadata sr ".", four instances of character.cast) and
 * character, and a world without Metadata whose instances resolve against --scene-root. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"
#include "kiln/bake/cast_write.h"
#include "kiln/blob.h"
#include "kiln/instance.h"
#include "test_util.h"

static void write_bytes(const char *path, const file_bytes *f)
{
    FILE *out = fopen(path, "wb");
    cr_assert_not_null(out, "cannot write %s", path);
    cr_assert_eq(fwrite(f->data, 1, f->size, out), f->size);
    cr_assert_eq(fclose(out), 0);
}

static void copy_sample(const char *name, const char *dir)
{
    char from[2048], to[2048];
    file_bytes f;
    snprintf(from, sizeof from, "%s/samples/%s", KILN_SOURCE_DIR, name);
    cr_assert(read_file(from, &f), "cannot read %s", from);
    snprintf(to, sizeof to, "%s/%s", dir, name);
    write_bytes(to, &f);
    file_bytes_free(&f);
}

/* levels/plain.cast: two instances of assets/props/crate.cast, no Metadata (no sr). */
static void write_plain_world(const char *dir)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    for (uint32_t i = 0; i < 2; i++) {
        uint32_t inst = kiln_cast_writer_node(w, root, KILN_CAST_ID_INSTANCE, 10 + i);
        kiln_cast_writer_u64(w, inst, "rf", 20 + i);
        float p[3] = {(float)i, 0, 0};
        kiln_cast_writer_floats(w, inst, "p", KILN_CAST_TYPE_VEC3, p, 1);
        uint32_t file = kiln_cast_writer_node(w, inst, KILN_CAST_ID_FILE, 20 + i);
        kiln_cast_writer_string(w, file, "p", "props/crate.cast");
    }
    file_bytes f = writer_bytes(w);
    char path[2048];
    snprintf(path, sizeof path, "%s/levels", dir);
    cr_assert_eq(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/levels/plain.cast", dir);
    write_bytes(path, &f);
    file_bytes_free(&f);
}

/* A checkout: <root>/<sub> holding the samples and levels/plain.cast. */
static void make_checkout(const char *root, const char *sub, char *dir, size_t cap)
{
    snprintf(dir, cap, "%s/%s", root, sub);
    char part[2048];
    for (size_t i = strlen(root) + 1; i <= strlen(dir); i++) /* mkdir -p below root */
        if (dir[i] == '/' || dir[i] == 0) {
            snprintf(part, sizeof part, "%.*s", (int)i, dir);
            cr_assert(mkdir(part, 0755) == 0, "mkdir %s", part);
        }
    copy_sample("world.cast", dir);
    copy_sample("character.cast", dir);
    write_plain_world(dir);
}

static void bake_ok(const char *const *args)
{
    cli_result r = cli_run(args);
    cr_assert_eq(r.status, 0, "kiln %s %s: %s", args[0], args[1], r.err);
    cli_result_free(&r);
}

/* No byte string of `needle` in the blob. */
static int contains(const file_bytes *f, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= f->size; i++)
        if (memcmp(f->data + i, needle, n) == 0) return 1;
    return 0;
}

static void rm_rf(const char *dir)
{
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(cli_portable, absolute_paths_from_two_checkouts_give_the_same_bytes)
{
    char root[] = "/tmp/kiln_portable_XXXXXX";
    cr_assert_not_null(mkdtemp(root));
    char a[2048], b[2048];
    make_checkout(root, "one", a, sizeof a);
    make_checkout(root, "two/deeper/checkout", b, sizeof b);

    char wa[2100], ca[2100], oa[2100], wb[2100], cb[2100], ob[2100];
    snprintf(wa, sizeof wa, "%s/world.cast", a);
    snprintf(ca, sizeof ca, "%s/character.cast", a);
    snprintf(oa, sizeof oa, "%s/level.kiln", a);
    snprintf(wb, sizeof wb, "%s/world.cast", b);
    snprintf(cb, sizeof cb, "%s/character.cast", b);
    snprintf(ob, sizeof ob, "%s/level.kiln", b);
    const char *bake_a[] = {"bake", wa, ca, "-o", oa, NULL};
    const char *bake_b[] = {"bake", wb, cb, "-o", ob, NULL};
    bake_ok(bake_a);
    bake_ok(bake_b);
    file_bytes fa, fb;
    cr_assert(read_file(oa, &fa));
    cr_assert(read_file(ob, &fb));
    cr_expect_eq(fa.size, fb.size);
    cr_expect(fa.size == fb.size && memcmp(fa.data, fb.data, fa.size) == 0, "the two checkouts bake different bytes");
    cr_expect(!contains(&fa, root), "the blob holds the path of the checkout (%s)", root);

    /* ... the same bytes as a bake with relative paths from inside the checkout */
    char cwd[2048];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(a), 0);
    const char *bake_rel[] = {"bake", "world.cast", "character.cast", "-o", "relative.kiln", NULL};
    bake_ok(bake_rel);
    cr_assert_eq(chdir(cwd), 0);
    char orel[2100];
    snprintf(orel, sizeof orel, "%s/relative.kiln", a);
    file_bytes frel;
    cr_assert(read_file(orel, &frel));
    cr_expect(frel.size == fa.size && memcmp(frel.data, fa.data, fa.size) == 0, "relative and absolute paths differ");

    /* what the blob says: the scene root (".", the frame of the references), the reference relative to it, and the
     * character's model found by path */
    kiln_blob_file bf;
    kiln_diag err;
    cr_assert_eq(kiln_blob_open_file(oa, 0, NULL, &bf, &err), KILN_OK, "%s", err.message);
    const kiln_blob *blob = bf.blob;
    cr_expect_str_eq(kiln_blob_string(blob, kiln_blob_metadata_of(blob)->scene_root), ".");
    kiln_reference_info info;
    cr_assert_eq(kiln_reference_get(blob, 0, &info), KILN_OK);
    cr_expect_str_eq(info.resolved_path, "character.cast");
    cr_expect_eq(info.first_model, 0);
    cr_expect_eq(info.model_count, 1);
    kiln_blob_close_file(&bf);
    file_bytes_free(&fa);
    file_bytes_free(&fb);
    file_bytes_free(&frel);
    rm_rf(root);
}

Test(cli_portable, an_absolute_scene_root_option_leaves_no_path_in_the_blob)
{
    char root[] = "/tmp/kiln_portable_XXXXXX";
    cr_assert_not_null(mkdtemp(root));
    char a[2048], b[2048];
    make_checkout(root, "one", a, sizeof a);
    make_checkout(root, "two/deeper", b, sizeof b);
    char in_a[2100], sr_a[2100], out_a[2100], in_b[2100], sr_b[2100], out_b[2100];
    snprintf(in_a, sizeof in_a, "%s/levels/plain.cast", a);
    snprintf(sr_a, sizeof sr_a, "%s/assets", a);
    snprintf(out_a, sizeof out_a, "%s/plain.kiln", a);
    snprintf(in_b, sizeof in_b, "%s/levels/plain.cast", b);
    snprintf(sr_b, sizeof sr_b, "%s/assets", b);
    snprintf(out_b, sizeof out_b, "%s/plain.kiln", b);
    const char *bake_a[] = {"bake", "--scene-root", sr_a, in_a, "-o", out_a, NULL};
    const char *bake_b[] = {"bake", "--scene-root", sr_b, in_b, "-o", out_b, NULL};
    bake_ok(bake_a);
    bake_ok(bake_b);
    file_bytes fa, fb;
    cr_assert(read_file(out_a, &fa));
    cr_assert(read_file(out_b, &fb));
    cr_expect(fa.size == fb.size && memcmp(fa.data, fb.data, fa.size) == 0, "the two checkouts bake different bytes");
    cr_expect(!contains(&fa, root), "the blob holds the path of the checkout (%s)", root);
    kiln_blob_file bf;
    kiln_diag err;
    cr_assert_eq(kiln_blob_open_file(out_a, 0, NULL, &bf, &err), KILN_OK, "%s", err.message);
    const kiln_blob *blob = bf.blob;
    /* the references' frame, not <checkout>/assets */
    cr_expect_str_eq(kiln_blob_string(blob, kiln_blob_metadata_of(blob)->scene_root), ".");
    kiln_reference_info info;
    cr_assert_eq(kiln_reference_get(blob, 0, &info), KILN_OK);
    cr_expect_str_eq(info.resolved_path, "props/crate.cast");
    cr_expect_eq(info.first_model, KILN_BLOB_NONE);
    kiln_blob_close_file(&bf);
    file_bytes_free(&fa);
    file_bytes_free(&fb);
    rm_rf(root);
}
