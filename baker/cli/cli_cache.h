/* Private: `kiln bake --cache DIR`, a content-addressed store of baked blobs.
 *
 * The key is the SHA-256 of everything that decides the blob's bytes: the tool's and the blob
 * format's versions, the options that change the output, and for each input its bytes and its
 * path relative to the first input's directory (an importer may name things after the file,
 * and a world's references find their models among the inputs by path). Nothing of the
 * machine enters the key (no absolute path, no time), so any machine that shares DIR finds a
 * blob another has baked. An entry is the blob itself, at DIR/<k0k1>/<key>.kiln, written
 * atomically; a hit loads it as the runtime does (kiln_blob_open_file: every check and the
 * CRC), and an entry that fails is reported and baked again.
 */
#ifndef KILN_BAKER_CLI_CACHE_H
#define KILN_BAKER_CLI_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/bake/bake.h"

typedef struct kiln__bake_cache {
    const char *dir;
    char        key[65];  /* hex SHA-256 */
    char       *entry;    /* DIR/<k0k1>/<key>.kiln, malloc'd */
    int         verbose;  /* report hits and misses on stderr */
} kiln__bake_cache;

/* Computes the key of baking `inputs` with the output-relevant fields of `options` (flags,
 * max_influences, anim_error_m, anim_distance_m, scene_root) and sets c->key and c->entry.
 * Returns 0 when out of memory. */
int kiln__cache_key(kiln__bake_cache *c, const kiln_bake_input *inputs, uint32_t count,
                    const kiln_bake_options *options);

/* Copies the entry to `output` (atomically) when it exists and verifies. Returns 1 on a hit
 * (*size: the blob's bytes), 0 on a miss (no entry, or a corrupt one: reported on stderr), -1
 * when the entry verified but `output` could not be written (reported). */
int kiln__cache_fetch(const kiln__bake_cache *c, const char *output, uint64_t *size);

/* Stores `size` bytes of blob as the entry (creating DIR and its subfolder). A failure is
 * reported as a warning and does not fail the bake. */
void kiln__cache_store(const kiln__bake_cache *c, const void *blob, size_t size);

void kiln__cache_free(kiln__bake_cache *c);

#endif
