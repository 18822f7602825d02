/* Blob load throughput: verification of a ~100 MB blob against a plain read of the same file.
 *
 * The blob is generated (tests/blob_build.h: skinned meshes with F32 positions, normals and
 * UVs, 4 joints/weights per vertex, u32 indices, one skeleton, strings, name index), written
 * to a temporary file, and then timed, best of N, page cache warm:
 *   read          open + read() into 64-byte-aligned memory + close (the floor: one copy)
 *   crc32c        kiln_crc32c over the whole blob
 *   verify_full   kiln_blob_load, full verification (CRC fused with the payload checks)
 *   verify_no_crc kiln_blob_load with KILN_BLOB_LOAD_NO_CRC
 *   verify_trusted kiln_blob_load with KILN_BLOB_LOAD_TRUSTED (header only)
 *   open_file     kiln_blob_open_file (mmap + full verification) + kiln_blob_close_file
 * One JSON object per case on stdout; the build and the blob layout on stderr.
 * --quick (or KILN_BENCH_QUICK=1) runs fewer iterations.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "kiln/blob.h"
#include "../tests/blob_build.h"

static volatile uint32_t bench_sink;
static double bench_gbps[8];
static int bench_cases;

static void report(const char *name, size_t bytes, int iters, double best)
{
    if (bench_cases < 8) bench_gbps[bench_cases++] = (double)bytes / best * 1e-9;
    printf("{\"bench\":\"blob_load\",\"case\":\"%s\",\"bytes\":%zu,\"iters\":%d,\"best_s\":%.9f,\"gb_per_s\":%.3f}\n", name,
           bytes, iters, best, (double)bytes / best * 1e-9);
    fflush(stdout);
}

static int read_into(const char *path, unsigned char *dst, size_t size)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    size_t done = 0;
    while (done < size) {
        ssize_t n = read(fd, dst + done, size - done);
        if (n <= 0) break;
        done += (size_t)n;
    }
    close(fd);
    return done == size;
}

static void must(kiln_result r, const kiln_diag *d, const char *what)
{
    if (r != KILN_OK) {
        fprintf(stderr, "bench_load: %s failed: %s: %s\n", what, kiln_result_name(r), d->message);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    int quick = bench_quick(argc, argv);
    int iters = quick ? 3 : 15;

    /* 40 meshes x 32768 vertices: 56 bytes of attributes and 24 bytes of indices per vertex */
    bb_scene s;
    bb_big_scene(&s, 40, 32768, 7);
    size_t size;
    unsigned char *blob = bb_build(&s, &size);
    bb_free(&s);

    char path[] = "/tmp/kiln_bench_load_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, blob, size) != (ssize_t)size) {
        fprintf(stderr, "bench_load: cannot write %s\n", path);
        return 1;
    }
    close(fd);
    fprintf(stderr, "bench_load: %s; blob %.1f MB (40 meshes x 32768 vertices, 6 streams each)\n", kiln_build_info(),
            (double)size / 1e6);

    unsigned char *mem = aligned_alloc(64, size);
    memset(mem, 0, size); /* fault the pages in before timing */
    kiln_diag d;
    const kiln_blob *k;
    double best;

    /* (a) plain read */
    best = 1e30;
    for (int i = 0; i < iters + 1; i++) {
        double t0 = bench_now();
        if (!read_into(path, mem, size)) {
            fprintf(stderr, "bench_load: read failed\n");
            return 1;
        }
        double t = bench_now() - t0;
        if (i && t < best) best = t; /* the first pass warms the page cache */
    }
    report("read", size, iters, best);
    if (memcmp(mem, blob, size) != 0) {
        fprintf(stderr, "bench_load: read back differs\n");
        return 1;
    }

    /* CRC alone */
    best = 1e30;
    for (int i = 0; i < iters; i++) {
        double t0 = bench_now();
        bench_sink += kiln_crc32c(0, mem, size);
        double t = bench_now() - t0;
        if (t < best) best = t;
    }
    report("crc32c", size, iters, best);

    /* (b) (c) (d) verification in memory */
    static const struct {
        const char *name;
        uint32_t    flags;
    } modes[] = {{"verify_full", 0}, {"verify_no_crc", KILN_BLOB_LOAD_NO_CRC}, {"verify_trusted", KILN_BLOB_LOAD_TRUSTED}};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        best = 1e30;
        int n = modes[m].flags & KILN_BLOB_LOAD_TRUSTED ? iters * 100 : iters;
        for (int i = 0; i < n; i++) {
            double t0 = bench_now();
            kiln_result r = kiln_blob_load(mem, size, modes[m].flags, &k, &d);
            double t = bench_now() - t0;
            must(r, &d, modes[m].name);
            if (t < best) best = t;
        }
        report(modes[m].name, size, n, best);
    }

    /* (e) open + map + full verification + close */
    best = 1e30;
    for (int i = 0; i < iters; i++) {
        kiln_blob_file f;
        double t0 = bench_now();
        kiln_result r = kiln_blob_open_file(path, 0, NULL, &f, &d);
        must(r, &d, "open_file");
        kiln_blob_close_file(&f);
        double t = bench_now() - t0;
        if (t < best) best = t;
    }
    report("open_file", size, iters, best);

    fprintf(stderr, "bench_load: GB/s read %.2f, crc32c %.2f, verify full %.2f, no-crc %.2f, open_file %.2f\n",
            bench_gbps[0], bench_gbps[1], bench_gbps[2], bench_gbps[3], bench_gbps[5]);
    unlink(path);
    free(mem);
    free(blob);
    return 0;
}
