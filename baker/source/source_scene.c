/* The source scene's memory: an arena of blocks from the scene's allocator, freed at once. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/bake/source.h"

struct kiln_source_block {
    kiln_source_block *next;
    size_t             size, used;
    /* payload follows, aligned as max_align_t */
};

#define KILN__BLOCK_HEADER ((sizeof(kiln_source_block) + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1))
#define KILN__BLOCK_MIN    ((size_t)64 * 1024)

static void *kiln__libc_realloc(void *user, void *ptr, size_t size)
{
    (void)user;
    return realloc(ptr, size);
}

static void kiln__libc_free(void *user, void *ptr)
{
    (void)user;
    free(ptr);
}

void kiln_source_scene_init(kiln_source_scene *scene, const kiln_allocator *allocator)
{
    memset(scene, 0, sizeof *scene);
    if (allocator && allocator->realloc_fn && allocator->free_fn) {
        scene->allocator = *allocator;
    } else {
        scene->allocator.realloc_fn = kiln__libc_realloc;
        scene->allocator.free_fn = kiln__libc_free;
    }
}

void kiln_source_scene_free(kiln_source_scene *scene)
{
    if (!scene) return;
    kiln_source_block *b = scene->blocks;
    while (b) {
        kiln_source_block *next = b->next;
        scene->allocator.free_fn(scene->allocator.user, b);
        b = next;
    }
    kiln_allocator a = scene->allocator;
    memset(scene, 0, sizeof *scene);
    scene->allocator = a;
}

void *kiln_source_alloc(kiln_source_scene *scene, uint64_t count, size_t size)
{
    const size_t align = sizeof(max_align_t);
    if (size && count > (SIZE_MAX - KILN__BLOCK_HEADER - align) / size) return NULL;
    size_t bytes = (size_t)count * size;
    bytes = (bytes + align - 1) & ~(align - 1);
    kiln_source_block *b = scene->blocks;
    if (!b || b->size - b->used < bytes) {
        /* Large requests get a block of their own behind the current one, so the current
         * block's free space stays usable. */
        size_t cap = bytes > KILN__BLOCK_MIN / 4 ? bytes : KILN__BLOCK_MIN;
        kiln_source_block *nb = scene->allocator.realloc_fn(scene->allocator.user, NULL, KILN__BLOCK_HEADER + cap);
        if (!nb) return NULL;
        nb->size = cap;
        nb->used = 0;
        if (b && cap == bytes && b->size - b->used >= align) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            scene->blocks = nb;
        }
        b = nb;
    }
    unsigned char *p = (unsigned char *)b + KILN__BLOCK_HEADER + b->used;
    b->used += bytes;
    scene->allocated += bytes;
    if (bytes) memset(p, 0, bytes);
    return p;
}

char *kiln_source_strndup(kiln_source_scene *scene, const char *s, size_t n)
{
    if (!s) return NULL;
    const char *end = memchr(s, 0, n);
    size_t len = end ? (size_t)(end - s) : n;
    char *d = kiln_source_alloc(scene, (uint64_t)len + 1, 1);
    if (!d) return NULL;
    memcpy(d, s, len);
    d[len] = 0;
    return d;
}

char *kiln_source_strdup(kiln_source_scene *scene, const char *s)
{
    return s ? kiln_source_strndup(scene, s, strlen(s)) : NULL;
}

char *kiln_source_strfmt(kiln_source_scene *scene, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *d = kiln_source_alloc(scene, (uint64_t)n + 1, 1);
    if (!d) return NULL;
    va_start(ap, fmt);
    vsnprintf(d, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return d;
}
