/* Shared benchmark helpers: a monotonic clock, best-of-N timing, file loading, and the JSON
 * line every case prints on stdout (one object per line; human notes go to stderr). */
#ifndef KILN_BENCH_UTIL_H
#define KILN_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "kiln/anim.h"

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

/* The memory-bandwidth bound of a kernel that reads `read_bytes` and writes `write_bytes`:
 * the time a plain copy of that traffic takes here, measured (best of `reps`) on buffers of the
 * same sizes, so a kernel's figure can be printed beside what memory alone allows. Returns
 * seconds per pass, or 0 when the buffers cannot be allocated. `before` (optional) runs before
 * each repetition, untimed: e.g. a cache eviction, for the bound of data coming from DRAM. */
static inline double bench_bandwidth_seconds_ex(size_t read_bytes, size_t write_bytes, int reps, void (*before)(void *),
                                                void *user)
{
    size_t n = read_bytes > write_bytes ? read_bytes : write_bytes;
    unsigned char *src = NULL, *dst = NULL;
    if (posix_memalign((void **)&src, 64, n ? n : 1) || posix_memalign((void **)&dst, 64, n ? n : 1)) {
        free(src);
        return 0.0;
    }
    memset(src, 1, n);
    memset(dst, 0, n);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        if (before) before(user);
        double t0 = bench_now();
        /* the reads, then the writes: a copy of min(read, write) plus the rest one way */
        size_t both = read_bytes < write_bytes ? read_bytes : write_bytes;
        memcpy(dst, src, both);
        if (read_bytes > both) {
            /* 8 bytes at a time from src + both, which need not be 8-aligned (memcpy, not a cast) */
            volatile unsigned long long sink = 0;
            for (size_t i = 0; i < (read_bytes - both) / 8; i++) {
                unsigned long long v;
                memcpy(&v, src + both + 8 * i, sizeof v);
                sink += v;
            }
            (void)sink;
        } else if (write_bytes > both) {
            memset(dst + both, 2, write_bytes - both);
        }
        double t = bench_now() - t0;
        if (t < best) best = t;
    }
    free(src);
    free(dst);
    return best;
}

static inline double bench_bandwidth_seconds(size_t read_bytes, size_t write_bytes, int reps)
{
    return bench_bandwidth_seconds_ex(read_bytes, write_bytes, reps, NULL, NULL);
}

/* qsort comparator: doubles, ascending (for medians of repetitions). */
static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The value of a bench's --simd option: "best" (only = KILN_SIMD_AUTO), "all" (*all_paths set)
 * or a path name (kiln_simd_name). Returns 0 for anything else. */
static inline int bench_parse_simd(const char *s, int *all_paths, kiln_simd *only)
{
    static const kiln_simd named[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
    *all_paths = strcmp(s, "all") == 0;
    *only = KILN_SIMD_AUTO;
    int known = *all_paths || strcmp(s, "best") == 0;
    for (size_t k = 0; k < sizeof named / sizeof named[0]; k++)
        if (strcmp(s, kiln_simd_name(named[k])) == 0) *only = named[k], known = 1;
    return known;
}

/* The kernels a case of the animation benches ran on `path`: the AVX-512 path runs the AVX2
 * animation kernels. */
static inline const char *bench_case_kernels(const char *case_name, kiln_simd path)
{
    (void)case_name;
    return path == KILN_SIMD_AVX512 ? "avx2" : kiln_simd_name(path);
}

/* Says on stderr which kernels `path` runs, when it is the AVX-512 path. */
static inline void bench_note_kernels(const char *bench, kiln_simd path)
{
    if (path == KILN_SIMD_AVX512)
        fprintf(stderr, "%s: the avx512 path runs its own mesh-skinning kernels and the avx2 ones for everything "
                        "else\n", bench);
}

#endif
