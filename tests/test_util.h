/* Shared helpers for the tests: diagnostic capture, a counting/failing allocator, the bytes of
 * a Cast writer, and corpus access. Header-only (static inline) so each test executable stays one source file. */
#ifndef KILN_TEST_UTIL_H
#define KILN_TEST_UTIL_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json_read.h"
#include "kiln/alloc.h"
#include "kiln/bake/cast_write.h"
#include "kiln/result.h"

/* ---- diagnostics -------------------------------------------------------------------------- */
typedef struct diag_log {
    kiln_diag items[32];
    int       count;    /* all received, even beyond the 32 kept */
} diag_log;

static inline void diag_log_push(void *user, const kiln_diag *d)
{
    diag_log *log = user;
    if (log->count < 32) log->items[log->count] = *d;
    log->count++;
}

static inline int diag_log_has(const diag_log *log, kiln_result code, kiln_severity sev)
{
    for (int i = 0; i < log->count && i < 32; i++)
        if (log->items[i].code == code && log->items[i].severity == sev) return 1;
    return 0;
}

/* ---- allocator that counts live blocks and fails the Nth allocation ----------------------- */
typedef struct counting_alloc {
    int fail_at;   /* index of the allocation that fails; negative: never */
    int calls;
    int live;
} counting_alloc;

static inline void *counting_realloc(void *user, void *ptr, size_t size)
{
    counting_alloc *ca = user;
    if (ca->fail_at >= 0 && ca->calls++ == ca->fail_at) return NULL;
    void *p = realloc(ptr, size);
    if (p && !ptr) ca->live++;
    return p;
}

static inline void counting_free(void *user, void *ptr)
{
    counting_alloc *ca = user;
    ca->live--;
    free(ptr);
}

static inline kiln_allocator counting_allocator(counting_alloc *ca)
{
    kiln_allocator a = {counting_realloc, counting_free, ca};
    return a;
}

/* ---- files and the shared corpus ---------------------------------------------------------- */
typedef struct file_bytes {
    unsigned char *data;
    size_t         size;
} file_bytes;

static inline int read_file(const char *path, file_bytes *out)
{
    out->data = NULL;
    out->size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    struct stat st;
    if (fstat(fileno(f), &st) != 0) { fclose(f); return 0; }
    out->size = (size_t)st.st_size;
    out->data = malloc(out->size ? out->size : 1);
    int ok = out->data && fread(out->data, 1, out->size, f) == out->size;
    fclose(f);
    if (!ok) { free(out->data); out->data = NULL; }
    return ok;
}

static inline void file_bytes_free(file_bytes *f)
{
    free(f->data);
    f->data = NULL;
}

/* The Cast file a writer holds, as bytes (free with file_bytes_free); destroys the writer.
 * Fails the test when the writer failed. */
static inline file_bytes writer_bytes(kiln_cast_writer *w)
{
    file_bytes f;
    f.size = (size_t)kiln_cast_writer_size(w);
    cr_assert(f.size > 0, "the writer failed");
    f.data = malloc(f.size);
    cr_assert_eq(kiln_cast_writer_write(w, f.data, f.size), KILN_OK);
    kiln_cast_writer_destroy(w);
    return f;
}

/* The corpus directory: $KILN_SHARED_DIR/corpus, else the build's KILN_SHARED_DIR, else
 * <source>/../shared. Returns 1 when it exists; dir always receives the path tried. */
static inline int corpus_dir(char *dir, size_t cap)
{
    const char *env = getenv("KILN_SHARED_DIR");
#if defined(KILN_SHARED_DIR)
    const char *base = env && env[0] ? env : KILN_SHARED_DIR;
#elif defined(KILN_SOURCE_DIR)
    const char *base = env && env[0] ? env : KILN_SOURCE_DIR "/../shared";
#else
    const char *base = env && env[0] ? env : "../shared";
#endif
    snprintf(dir, cap, "%s/corpus", base);
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* corpus_dir, skipping the test (saying where it looked) when the corpus is absent. */
static inline void corpus_dir_or_skip(char *dir, size_t cap)
{
    if (!corpus_dir(dir, cap)) cr_skip_test("corpus not found at %s (set KILN_SHARED_DIR): skipping", dir);
}

static inline int corpus_read(const char *dir, const char *name, file_bytes *out)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return read_file(path, out);
}

/* The corpus's JSON file `name` (relative to dir), parsed; NULL when it cannot be read. A
 * malformed file fails the test. */
static inline jr_value *corpus_json(const char *dir, const char *name)
{
    file_bytes f;
    if (!corpus_read(dir, name, &f)) return NULL;
    char err[160];
    jr_value *v = jr_parse((const char *)f.data, f.size, err, sizeof err);
    cr_assert_not_null(v, "%s/%s: %s", dir, name, err);
    file_bytes_free(&f);
    return v;
}

static inline int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists the good .cast files: those directly in the corpus and in bench/ (names relative to the
 * corpus), sorted. Caller frees with corpus_list_free. */
static inline size_t corpus_list(const char *dir, char ***out)
{
    static const char *const subdirs[] = {"", "bench/"};
    char **names = NULL;
    size_t count = 0, cap = 0;
    for (size_t s = 0; s < 2; s++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, subdirs[s]);
        DIR *d = opendir(path);
        if (!d) continue;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            size_t n = strlen(e->d_name);
            if (n < 6 || strcmp(e->d_name + n - 5, ".cast") != 0) continue;
            if (count == cap) {
                cap = cap ? cap * 2 : 64;
                names = realloc(names, cap * sizeof *names);
            }
            names[count] = malloc(strlen(subdirs[s]) + n + 1);
            sprintf(names[count], "%s%s", subdirs[s], e->d_name);
            count++;
        }
        closedir(d);
    }
    if (count) qsort(names, count, sizeof *names, cmp_names);
    *out = names;
    return count;
}

static inline void corpus_list_free(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++) free(names[i]);
    free(names);
}

#endif
