/* `kiln bake --cache DIR`: a bake done once is a copy afterwards, from any output folder and any
 * checkout sharing DIR; a change to an input's bytes or to an output option misses; a corrupt
 * entry is detected, reported and baked again. Inputs: the bundled world and character. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"
#include "test_util.h"

typedef struct tree {
    char root[64];
    char cache[128];
} tree;

static void write_bytes(const char *path, const void *data, size_t size)
{
    FILE *out = fopen(path, "wb");
    cr_assert_not_null(out, "cannot write %s", path);
    cr_assert_eq(fwrite(data, 1, size, out), size);
    cr_assert_eq(fclose(out), 0);
}

/* <root>/<sub>/world.cast and character.cast, copies of the samples. */
static void checkout(const tree *t, const char *sub)
{
    char dir[512], from[2048], to[1024];
    snprintf(dir, sizeof dir, "%s/%s", t->root, sub);
    cr_assert_eq(mkdir(dir, 0755), 0, "mkdir %s", dir);
    static const char *const names[2] = {"world.cast", "character.cast"};
    for (int i = 0; i < 2; i++) {
        file_bytes f;
        snprintf(from, sizeof from, "%s/samples/%s", KILN_SOURCE_DIR, names[i]);
        cr_assert(read_file(from, &f), "cannot read %s", from);
        snprintf(to, sizeof to, "%s/%s", dir, names[i]);
        write_bytes(to, f.data, f.size);
        file_bytes_free(&f);
    }
}

static void tree_init(tree *t)
{
    snprintf(t->root, sizeof t->root, "/tmp/kiln_cli_cache_XXXXXX");
    cr_assert_not_null(mkdtemp(t->root));
    snprintf(t->cache, sizeof t->cache, "%s/cache", t->root);
    checkout(t, "src");
}

static void tree_done(tree *t)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->root);
    cr_expect_eq(system(cmd), 0);
}

static void path_in(const tree *t, const char *rel, char *out, size_t cap) { snprintf(out, cap, "%s/%s", t->root, rel); }

/* kiln bake -v --cache <cache> [extra] <sub>/world.cast <sub>/character.cast -o <out>: stderr. */
static char *bake_cached(const tree *t, const char *sub, const char *out_rel, const char *extra)
{
    char world[512], character[512], out[512];
    snprintf(world, sizeof world, "%s/%s/world.cast", t->root, sub);
    snprintf(character, sizeof character, "%s/%s/character.cast", t->root, sub);
    path_in(t, out_rel, out, sizeof out);
    const char *args[10];
    int k = 0;
    args[k++] = "bake";
    args[k++] = "-v";
    args[k++] = "--cache";
    args[k++] = t->cache;
    if (extra) args[k++] = extra;
    args[k++] = world;
    args[k++] = character;
    args[k++] = "-o";
    args[k++] = out;
    args[k] = NULL;
    cli_result r = cli_run(args);
    cr_assert_eq(r.status, 0, "bake to %s: %s", out_rel, r.err);
    char *err = strdup(r.err);
    cli_result_free(&r);
    return err;
}

static void read_in(const tree *t, const char *rel, file_bytes *f)
{
    char p[512];
    path_in(t, rel, p, sizeof p);
    cr_assert(read_file(p, f), "cannot read %s", p);
}

static int same_file(const tree *t, const char *a, const char *b)
{
    file_bytes fa, fb;
    read_in(t, a, &fa);
    read_in(t, b, &fb);
    int same = fa.size == fb.size && memcmp(fa.data, fb.data, fa.size) == 0;
    file_bytes_free(&fa);
    file_bytes_free(&fb);
    return same;
}

/* The cache's entries: <cache>/<2 hex>/<64 hex>.kiln; the path of the last one in `one`. */
static int entries(const tree *t, char *one, size_t cap)
{
    int n = 0;
    DIR *d = opendir(t->cache);
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char sub[512];
        snprintf(sub, sizeof sub, "%s/%s", t->cache, e->d_name);
        DIR *s = opendir(sub);
        cr_assert_not_null(s, "%s is not a folder", sub);
        struct dirent *f;
        while ((f = readdir(s)) != NULL) {
            if (f->d_name[0] == '.') continue;
            cr_expect_eq(strlen(f->d_name), 64 + 5, "entry name %s", f->d_name);
            cr_expect_eq(strncmp(f->d_name, e->d_name, 2), 0, "%s not under its first two digits", f->d_name);
            if (one) snprintf(one, cap, "%s/%s", sub, f->d_name);
            n++;
        }
        closedir(s);
    }
    closedir(d);
    return n;
}

Test(cli_cache, a_warm_cache_fills_an_empty_output_folder_without_baking)
{
    tree t;
    tree_init(&t);
    char dir[512];
    path_in(&t, "out1", dir, sizeof dir);
    cr_assert_eq(mkdir(dir, 0755), 0);
    path_in(&t, "out2", dir, sizeof dir);
    cr_assert_eq(mkdir(dir, 0755), 0);

    char *first = bake_cached(&t, "src", "out1/level.kiln", NULL);
    cr_expect(strstr(first, "cache miss") != NULL, "%s", first);
    cr_expect(strstr(first, "input: 2 files") != NULL, "a miss bakes: %s", first);
    cr_expect_eq(entries(&t, NULL, 0), 1);

    char *second = bake_cached(&t, "src", "out2/level.kiln", NULL);
    cr_expect(strstr(second, "cache hit") != NULL, "%s", second);
    cr_expect(strstr(second, "nothing baked") != NULL, "%s", second);
    cr_expect(strstr(second, "input: 2 files") == NULL, "a hit bakes nothing: %s", second);
    cr_expect(same_file(&t, "out1/level.kiln", "out2/level.kiln"), "the hit gives other bytes");
    cr_expect_eq(entries(&t, NULL, 0), 1);

    /* the report says so too */
    char report_path[512], report_arg[600];
    path_in(&t, "report.json", report_path, sizeof report_path);
    snprintf(report_arg, sizeof report_arg, "--report=%s", report_path);
    char *reported = bake_cached(&t, "src", "out2/again.kiln", report_arg);
    free(reported);
    file_bytes rep;
    cr_assert(read_file(report_path, &rep), "no report at %s", report_path);
    char *text = strndup((const char *)rep.data, rep.size);
    cr_expect(strstr(text, "\"cache\": \"hit\"") != NULL, "%s", text);
    cr_expect(strstr(text, "\"output_bytes\"") != NULL, "%s", text);
    cr_expect(strstr(text, "\"vertices_in\"") == NULL, "a hit has no bake statistics: %s", text);
    free(text);
    file_bytes_free(&rep);

    /* another checkout of the same files, elsewhere: the same key (no path of the machine in it) */
    checkout(&t, "elsewhere");
    char *third = bake_cached(&t, "elsewhere", "out2/from_elsewhere.kiln", NULL);
    cr_expect(strstr(third, "cache hit") != NULL, "%s", third);
    cr_expect(same_file(&t, "out1/level.kiln", "out2/from_elsewhere.kiln"));
    free(first);
    free(second);
    free(third);
    tree_done(&t);
}

Test(cli_cache, an_input_byte_or_an_output_option_misses)
{
    tree t;
    tree_init(&t);
    char *a = bake_cached(&t, "src", "a.kiln", NULL);
    free(a);
    /* an option that changes the blob */
    char *b = bake_cached(&t, "src", "b.kiln", "--no-optimize");
    cr_expect(strstr(b, "cache miss") != NULL, "%s", b);
    cr_expect_eq(entries(&t, NULL, 0), 2);
    /* one byte of an input: the world's last instance renamed, npc_3 -> npc_9 */
    file_bytes w;
    read_in(&t, "src/world.cast", &w);
    char wp[512];
    path_in(&t, "src/world.cast", wp, sizeof wp);
    size_t at = 0;
    for (size_t i = 0; i + 5 <= w.size; i++)
        if (memcmp(w.data + i, "npc_3", 5) == 0) at = i + 4;
    cr_assert_neq(at, 0, "no npc_3 in world.cast");
    w.data[at] = '9';
    write_bytes(wp, w.data, w.size);
    file_bytes_free(&w);
    char *c = bake_cached(&t, "src", "c.kiln", NULL);
    cr_expect(strstr(c, "cache miss") != NULL, "%s", c);
    cr_expect(!same_file(&t, "a.kiln", "c.kiln"), "a changed input gave the cached blob");
    cr_expect_eq(entries(&t, NULL, 0), 3);
    free(b);
    free(c);
    tree_done(&t);
}

Test(cli_cache, a_corrupt_entry_is_reported_and_baked_again)
{
    tree t;
    tree_init(&t);
    char *a = bake_cached(&t, "src", "a.kiln", NULL);
    free(a);
    char entry[1024];
    cr_assert_eq(entries(&t, entry, sizeof entry), 1);
    file_bytes e;
    cr_assert(read_file(entry, &e));
    const char *damage[2] = {"a flipped byte", "a truncated file"};
    for (int k = 0; k < 2; k++) {
        if (k == 0) {
            e.data[e.size / 2] ^= 0x40;
            write_bytes(entry, e.data, e.size);
        } else {
            write_bytes(entry, e.data, e.size / 3);
        }
        char *b = bake_cached(&t, "src", "b.kiln", NULL);
        cr_expect(strstr(b, "is corrupt, baking again") != NULL, "%s: %s", damage[k], b);
        cr_expect(strstr(b, "cache hit") == NULL, "%s: %s", damage[k], b);
        cr_expect(same_file(&t, "a.kiln", "b.kiln"), "%s: not rebaked to the same bytes", damage[k]);
        free(b);
        /* the entry was rewritten: the next bake is a hit */
        char *c = bake_cached(&t, "src", "c.kiln", NULL);
        cr_expect(strstr(c, "cache hit") != NULL, "%s: %s", damage[k], c);
        cr_expect(same_file(&t, "a.kiln", "c.kiln"));
        free(c);
        if (k == 0) e.data[e.size / 2] ^= 0x40;
    }
    file_bytes_free(&e);
    tree_done(&t);
}
