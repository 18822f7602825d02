/* `kiln bake --depfile FILE`: "OUT: IN..." in the syntax GCC's -MD writes, which Ninja and Make
 * read; written with the blob (also on a cache hit), never after a failed bake. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"
#include "test_util.h"

static void write_bytes(const char *path, const void *data, size_t size)
{
    FILE *out = fopen(path, "wb");
    cr_assert_not_null(out, "cannot write %s", path);
    cr_assert_eq(fwrite(data, 1, size, out), size);
    cr_assert_eq(fclose(out), 0);
}

static char *slurp(const char *path)
{
    file_bytes f;
    if (!read_file(path, &f)) return NULL;
    char *s = malloc(f.size + 1);
    memcpy(s, f.data, f.size);
    s[f.size] = 0;
    file_bytes_free(&f);
    return s;
}

static void sample_to(const char *name, const char *to)
{
    char from[2048];
    file_bytes f;
    snprintf(from, sizeof from, "%s/samples/%s", KILN_SOURCE_DIR, name);
    cr_assert(read_file(from, &f), "cannot read %s", from);
    write_bytes(to, f.data, f.size);
    file_bytes_free(&f);
}

Test(cli_depfile, lists_every_input_with_make_escapes)
{
    char dir[] = "/tmp/kiln_cli_depfile_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char world[256], character[256], out[256], dep[256], cache[256];
    snprintf(world, sizeof world, "%s/my world.cast", dir);          /* a space */
    snprintf(character, sizeof character, "%s/hero$#1.cast", dir);   /* '$' and '#' */
    snprintf(out, sizeof out, "%s/level.kiln", dir);
    snprintf(dep, sizeof dep, "%s/level.d", dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    sample_to("world.cast", world);
    sample_to("character.cast", character);
    char want[1024];
    snprintf(want, sizeof want, "%s: \\\n  %s/my\\ world.cast \\\n  %s/hero$$\\#1.cast\n", out, dir, dir);

    for (int pass = 0; pass < 2; pass++) { /* a bake, then a cache hit */
        const char *args[] = {"bake", "-v", "--cache", cache, "--depfile", dep, world, character, "-o", out, NULL};
        cli_result r = cli_run(args);
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect(strstr(r.err, pass ? "cache hit" : "cache miss") != NULL, "pass %d: %s", pass, r.err);
        cli_result_free(&r);
        char *got = slurp(dep);
        cr_assert_not_null(got, "pass %d: no depfile", pass);
        cr_expect_str_eq(got, want, "pass %d", pass);
        free(got);
        cr_expect_eq(remove(dep), 0);
    }

    /* a failed bake writes neither the blob nor the depfile */
    char bad[256], out2[256];
    snprintf(bad, sizeof bad, "%s/bad.cast", dir);
    snprintf(out2, sizeof out2, "%s/bad.kiln", dir);
    write_bytes(bad, "not a source file", 17);
    const char *args[] = {"bake", "--depfile", dep, bad, "-o", out2, NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.status, 2, "%s", r.err);
    cli_result_free(&r);
    struct stat st;
    cr_expect_neq(stat(dep, &st), 0, "a depfile after a failed bake");
    cr_expect_neq(stat(out2, &st), 0, "a blob after a failed bake");

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}
