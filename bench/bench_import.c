/* Import throughput: the largest file of each corpus format folder through its importer.
 *
 * For every importer this build has, the largest file in the corpus that the importer detects
 * (the corpus top level for Cast, `unigine/`, `shape/` and `lod/` for the others; `bad/` is
 * left out) is imported into a source scene and validated, as `kiln bake` does before the bake
 * stages run. One JSON line per importer:
 *   {"bench":"import","case":"<importer>","input":...,"bytes":...,"iters":...,"median_s":...,"mb_per_s":...}
 * Throughput is input bytes / median wall time, in MB/s (1e6 bytes). Large Cast files are left
 * out in --quick mode.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "kiln/bake/source.h"

#define BENCH_MAX_PATH 1024

typedef struct bench_pick {
    char   path[BENCH_MAX_PATH];
    size_t size;
} bench_pick;

/* The largest file under `dir` (not recursive) that `imp` detects, below `cap` bytes. */
static void pick_largest(const char *dir, const kiln_importer *imp, size_t cap, bench_pick *best)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[BENCH_MAX_PATH];
        int len = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (len < 0 || (size_t)len >= sizeof path) continue;
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        unsigned char head[64];
        size_t n = fread(head, 1, sizeof head, f);
        long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
        fclose(f);
        if (size <= 0 || (size_t)size > cap || (size_t)size <= best->size) continue;
        if (kiln_importer_detect(head, n) != imp) continue;
        snprintf(best->path, sizeof best->path, "%s", path);
        best->size = (size_t)size;
    }
    closedir(d);
}

static int run_importer(const kiln_importer *imp, const char *corpus, int quick)
{
    static const char *const folders[] = {"", "unigine", "shape", "lod"};
    bench_pick pick;
    memset(&pick, 0, sizeof pick);
    size_t cap = quick ? (size_t)16 << 20 : SIZE_MAX;
    for (size_t i = 0; i < sizeof folders / sizeof folders[0]; i++) {
        char dir[BENCH_MAX_PATH + 16];
        if ((size_t)snprintf(dir, sizeof dir, "%s%s%s", corpus, folders[i][0] ? "/" : "", folders[i]) >= sizeof dir) continue;
        pick_largest(dir, imp, cap, &pick);
    }
    if (!pick.size) {
        fprintf(stderr, "import %-14s no corpus file\n", imp->name);
        return 0;
    }
    size_t size = 0;
    void *data = bench_load(pick.path, &size);
    if (!data) return 1;
    int iters = quick ? 3 : (size > ((size_t)8 << 20) ? 5 : 31);
    double *t = malloc((size_t)iters * sizeof *t);
    if (!t) {
        free(data);
        return 1;
    }
    for (int i = 0; i < iters; i++) {
        kiln_source_scene scene;
        kiln_diag err;
        double t0 = bench_now();
        kiln_result r = kiln_source_import(data, size, pick.path, imp->name, NULL, &scene, &err);
        t[i] = bench_now() - t0;
        if (r != KILN_OK) {
            fprintf(stderr, "import %s: %s: %s (%s)\n", imp->name, pick.path, err.message, err.path);
            free(t);
            free(data);
            return 1;
        }
        kiln_source_scene_free(&scene);
    }
    qsort(t, (size_t)iters, sizeof *t, bench_cmp_double);
    double median = t[iters / 2];
    printf("{\"bench\":\"import\",\"case\":\"%s\",\"input\":\"%s\",\"bytes\":%zu,\"iters\":%d,"
           "\"median_s\":%.6f,\"mb_per_s\":%.1f}\n",
           imp->name, pick.path, size, iters, median, (double)size / median / 1e6);
    fprintf(stderr, "import %-14s %-40s %9.3f MB %9.3f ms %9.1f MB/s\n", imp->name, pick.path, (double)size / 1e6,
            median * 1e3, (double)size / median / 1e6);
    free(t);
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    int quick = bench_quick(argc, argv);
    char corpus[BENCH_MAX_PATH];
    if (!bench_corpus_dir(corpus, sizeof corpus)) {
        fprintf(stderr, "import: no corpus (KILN_SHARED_DIR); nothing to measure\n");
        return 0;
    }
    int failed = 0;
    for (uint32_t i = 0; i < kiln_importer_count(); i++) failed |= run_importer(kiln_importer_at(i), corpus, quick);
    return failed;
}
