/* libFuzzer target for kiln_blob_load.
 *
 * Each input is copied into exact-size 64-byte-aligned memory (so a read past the end is an
 * ASan error) and loaded three ways:
 *  - KILN_BLOB_LOAD_NO_CRC, so mutations are judged on structure, not stopped by the checksum.
 *    A blob that loads is walked through every accessor (tests/blob_walk.h), which must stay
 *    inside the memory;
 *  - full verification, which must never accept what the structural pass rejected;
 *  - KILN_BLOB_LOAD_TRUSTED: the views must stay inside the blob even without verification
 *    (the walk may report broken links, but must not read outside).
 *
 * Seeds: run with KILN_FUZZ_WRITE_SEEDS=dir once to write valid sample blobs into dir.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/blob.h"
#include "../tests/blob_build.h"
#include "../tests/blob_walk.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void write_seed(const char *dir, const char *name, bb_scene *s)
{
    size_t n;
    unsigned char *blob = bb_build(s, &n);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(blob, 1, n, f);
        fclose(f);
    }
    free(blob);
    bb_free(s);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("KILN_FUZZ_WRITE_SEEDS");
    if (dir && dir[0]) {
        bb_scene s;
        bb_sample_scene(&s);
        write_seed(dir, "sample.kiln", &s);
        bb_big_scene(&s, 2, 40, 1);
        write_seed(dir, "skinned.kiln", &s);
        bb_init(&s);
        write_seed(dir, "empty.kiln", &s);
        /* 1.3: the sample's references resolved to models (IRMD): the crate to model 0 */
        bb_sample_scene(&s);
        const kiln_blob_reference_model rm[2] = {{0, 1}, {KILN_BLOB_NONE, 0}};
        bb_extra_section(&s, KILN_SECTION_REFERENCE_MODELS, 0, rm, sizeof rm);
        s.extra[s.extra_count - 1].stride = sizeof rm[0];
        write_seed(dir, "reference_models.kiln", &s);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    void *mem = NULL;
    if (posix_memalign(&mem, KILN_BLOB_ALIGN, size ? size : 1) != 0) return 0;
    if (size) memcpy(mem, data, size);

    const kiln_blob *blob = NULL;
    kiln_diag d;
    blob_walk w;
    kiln_result structural = kiln_blob_load(mem, size, KILN_BLOB_LOAD_NO_CRC, &blob, &d);
    if (structural == KILN_OK) {
        if (!blob_walk_run(blob, mem, size, &w)) {
            fprintf(stderr, "walk left the blob after a NO_CRC load: %s\n", w.why);
            abort();
        }
    } else if (blob || d.code != structural || !d.message[0]) {
        abort();
    }

    kiln_result full = kiln_blob_load(mem, size, 0, &blob, &d);
    if (full == KILN_OK && structural != KILN_OK) abort();

    if (kiln_blob_load(mem, size, KILN_BLOB_LOAD_TRUSTED, &blob, &d) == KILN_OK) blob_walk_run(blob, mem, size, &w);

    free(mem);
    return 0;
}
