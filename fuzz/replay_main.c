/* A main() for the fuzz targets when libFuzzer is not linked: calls the target's
 * LLVMFuzzerInitialize when it has one (as libFuzzer does), then feeds every file named on the
 * command line (directories: every regular file inside, in name order) to
 * LLVMFuzzerTestOneInput, each in its own exactly-sized heap block so that sanitizers and
 * valgrind see reads past the end. Missing paths are skipped (the shared corpus is optional).
 *
 *   fuzz_cast_parse_replay [--max-bytes N] PATH...
 *
 * Files larger than --max-bytes (default 16 MiB) are skipped to keep valgrind runs short.
 * Exits 0 when every input returned; a finding aborts the process.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional in a target: weak, so it is NULL when the target does not define it. */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static unsigned long replay_count, replay_skipped;

static int replay_file(const char *path, uint64_t max_bytes)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    if ((uint64_t)st.st_size > max_bytes) {
        replay_skipped++;
        return 0;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t size = (size_t)st.st_size;
    uint8_t *data = malloc(size ? size : 1);
    int ok = data && fread(data, 1, size, f) == size;
    fclose(f);
    if (ok) {
        /* An empty input gets a zero-length block, as libFuzzer passes it. */
        LLVMFuzzerTestOneInput(size ? data : (const uint8_t *)"", size);
        replay_count++;
    } else {
        fprintf(stderr, "replay: cannot read %s\n", path);
    }
    free(data);
    return ok ? 0 : 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, uint64_t max_bytes)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    char **names = NULL;
    size_t count = 0, cap = 0;
    int failed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (count == cap) {
            cap = cap ? cap * 2 : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) { failed = 1; break; }
            names = grown;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[count] = malloc(len);
        if (!names[count]) { failed = 1; break; }
        snprintf(names[count], len, "%s/%s", dir, e->d_name);
        count++;
    }
    closedir(d);
    if (count) qsort(names, count, sizeof *names, cmp_str);
    for (size_t i = 0; i < count; i++) {
        if (!failed) failed |= replay_file(names[i], max_bytes);
        free(names[i]);
    }
    free(names);
    return failed;
}

int main(int argc, char **argv)
{
    uint64_t max_bytes = 16u << 20;
    int failed = 0;
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc) {
            max_bytes = strtoull(argv[++i], NULL, 10);
            continue;
        }
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s absent, skipped\n", argv[i]);
            continue;
        }
        failed |= S_ISDIR(st.st_mode) ? replay_dir(argv[i], max_bytes) : replay_file(argv[i], max_bytes);
    }
    printf("replay: %lu inputs ran, %lu skipped (larger than %llu bytes)\n", replay_count, replay_skipped,
           (unsigned long long)max_bytes);
    return failed;
}
