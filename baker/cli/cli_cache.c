/* The bake cache of `kiln bake --cache DIR` (cli_cache.h). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_cache.h"
#include "file_atomic.h"
#include "kiln/blob.h"
#include "kiln/version.h"
#include "sha256.h"
#include "util.h"

/* Bumped when the key's layout changes. */
#define KILN__CACHE_SCHEMA 1u

static void kiln__key_u64(kiln__sha256 *h, uint64_t v)
{
    unsigned char b[8];
    for (unsigned i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
    kiln__sha256_update(h, b, sizeof b);
}

/* Length-prefixed, so no two sequences of fields hash the same bytes. */
static void kiln__key_str(kiln__sha256 *h, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    kiln__key_u64(h, n);
    if (n) kiln__sha256_update(h, s, n);
}

static uint32_t kiln__float_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

int kiln__cache_key(kiln__bake_cache *c, const kiln_bake_input *inputs, uint32_t count,
                    const kiln_bake_options *o)
{
    kiln__sha256 h;
    kiln__sha256_init(&h);
    char version[96];
    snprintf(version, sizeof version, "kiln-bake-cache %u; kiln %d.%d.%d; blob %d.%d", KILN__CACHE_SCHEMA,
             KILN_VERSION_MAJOR, KILN_VERSION_MINOR, KILN_VERSION_PATCH, KILN_BLOB_VERSION_MAJOR,
             KILN_BLOB_VERSION_MINOR);
    kiln__key_str(&h, version);
    kiln__key_u64(&h, o->flags);
    kiln__key_u64(&h, o->max_influences);
    kiln__key_u64(&h, kiln__float_bits(o->anim_error_m));
    kiln__key_u64(&h, kiln__float_bits(o->anim_distance_m));
    char *base = count ? kiln__path_dirname(NULL, inputs[0].path) : NULL;
    int ok = !count || base;
    /* the scene root option as the inputs see it */
    char *root = NULL;
    if (ok && o->scene_root && o->scene_root[0]) ok = (root = kiln__path_relative(NULL, base, o->scene_root)) != NULL;
    kiln__key_str(&h, root);
    free(root);
    kiln__key_u64(&h, count);
    for (uint32_t i = 0; ok && i < count; i++) {
        char *rel = kiln__path_relative(NULL, base, inputs[i].path);
        if (!rel) {
            ok = 0;
            break;
        }
        kiln__key_str(&h, rel);
        free(rel);
        kiln__key_str(&h, inputs[i].format);
        unsigned char digest[32];
        kiln__sha256 hi;
        kiln__sha256_init(&hi);
        kiln__sha256_update(&hi, inputs[i].data, inputs[i].size);
        kiln__sha256_final(&hi, digest);
        kiln__key_u64(&h, inputs[i].size);
        kiln__sha256_update(&h, digest, sizeof digest);
    }
    free(base);
    if (!ok) return 0;
    unsigned char digest[32];
    kiln__sha256_final(&h, digest);
    kiln__sha256_hex(digest, c->key);
    c->entry = kiln__strfmt(NULL, "%s/%.2s/%s.kiln", c->dir, c->key, c->key);
    return c->entry != NULL;
}

int kiln__cache_fetch(const kiln__bake_cache *c, const char *output, uint64_t *size)
{
    struct stat st;
    if (stat(c->entry, &st) != 0) {
        if (c->verbose) fprintf(stderr, KILN_CLI_NAME ": bake: cache miss %s\n", c->key);
        return 0;
    }
    kiln_blob_file f;
    kiln_diag err;
    if (kiln_blob_open_file(c->entry, 0, NULL, &f, &err) != KILN_OK) {
        fprintf(stderr, KILN_CLI_NAME ": bake: cache entry '%s' is corrupt, baking again: ", c->entry);
        kiln__cli_print_blob_diag(stderr, NULL, &err);
        return 0;
    }
    *size = f.size;
    kiln_result r = kiln__file_save_bytes(output, f.memory, f.size, NULL, KILN_ERR_OUTPUT, &err);
    kiln_blob_close_file(&f);
    if (r != KILN_OK) {
        kiln__cli_print_diag(stderr, NULL, &err);
        return -1;
    }
    if (c->verbose) fprintf(stderr, KILN_CLI_NAME ": bake: cache hit %s: copied %s, nothing baked\n", c->key, c->entry);
    return 1;
}

/* mkdir -p for the entry's folder. */
static int kiln__make_dirs(const char *entry)
{
    char *dir = kiln__path_dirname(NULL, entry);
    if (!dir) return 0;
    int ok = 1;
    for (char *p = dir + 1; ok; p++) {
        if (*p != '/' && *p) continue;
        char was = *p;
        *p = 0;
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) ok = 0;
        *p = was;
        if (!was) break;
    }
    free(dir);
    return ok;
}

void kiln__cache_store(const kiln__bake_cache *c, const void *blob, size_t size)
{
    kiln_diag err;
    if (!kiln__make_dirs(c->entry)) {
        fprintf(stderr, KILN_CLI_NAME ": bake: warning: cannot create the cache folder for '%s': %s\n", c->entry,
                strerror(errno));
        return;
    }
    if (kiln__file_save_bytes(c->entry, blob, size, NULL, KILN_ERR_OUTPUT, &err) != KILN_OK) {
        fprintf(stderr, KILN_CLI_NAME ": bake: warning: not stored in the cache: ");
        kiln__cli_print_diag(stderr, NULL, &err);
        return;
    }
    if (c->verbose) fprintf(stderr, KILN_CLI_NAME ": bake: cache store %s\n", c->entry);
}

void kiln__cache_free(kiln__bake_cache *c)
{
    free(c->entry);
    c->entry = NULL;
}
