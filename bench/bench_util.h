/* Shared benchmark helpers: a monotonic clock, best-of-N timing, file loading, and the JSON
 * line every case prints on stdout (one object per line; human notes go to stderr). */
#ifndef KILN_BENCH_UTIL_H
#define KILN_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Loads a whole file into 64-byte-aligned memory. Returns NULL on failure. */
static inline void *bench_load(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    struct stat st;
    if (fstat(fileno(f), &st) != 0) { fclose(f); return NULL; }
    *size = (size_t)st.st_size;
    void *p = NULL;
    if (posix_memalign(&p, 64, *size ? *size : 1) != 0) { fclose(f); return NULL; }
    if (fread(p, 1, *size, f) != *size) { free(p); p = NULL; }
    fclose(f);
    return p;
}

/* The shared corpus directory ($KILN_SHARED_DIR/corpus, else the build default). */
static inline const char *bench_corpus_dir(char *buf, size_t cap)
{
    const char *env = getenv("KILN_SHARED_DIR");
#ifdef KILN_SHARED_DIR
    const char *base = env && env[0] ? env : KILN_SHARED_DIR;
#else
    const char *base = env && env[0] ? env : "../shared";
#endif
    snprintf(buf, cap, "%s/corpus", base);
    struct stat st;
    return stat(buf, &st) == 0 ? buf : NULL;
}

static inline int bench_quick(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--quick") == 0) return 1;
    const char *env = getenv("KILN_BENCH_QUICK");
    return env && env[0] == '1';
}

#endif
