#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

/* stb_ds seeds every new hash map from one global it reads and advances without a lock
 * (stbds_hash_seed, a static of its implementation), and inputs are parsed on several threads.
 * The two functions that create a map's index are compiled under other names here and called
 * through the guarded stbds_hmput_key and stbds_shmode_func below. */
#define stbds_hmput_key   kiln__stbds_hmput_key
#define stbds_shmode_func kiln__stbds_shmode_func
#define STB_DS_IMPLEMENTATION
#include "ds.h"
#undef stbds_hmput_key
#undef stbds_shmode_func

static _Thread_local kiln__ds_ctx *kiln__ds_current;

static pthread_mutex_t kiln__ds_seed_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local bool kiln__ds_seed_held; /* released before an allocation failure jumps */

static void kiln__ds_seed_acquire(void)
{
    pthread_mutex_lock(&kiln__ds_seed_lock);
    kiln__ds_seed_held = true;
}

static void kiln__ds_seed_release(void)
{
    if (!kiln__ds_seed_held) return;
    kiln__ds_seed_held = false;
    pthread_mutex_unlock(&kiln__ds_seed_lock);
}

void *stbds_hmput_key(void *a, size_t elemsize, void *key, size_t keysize, int mode);
void *stbds_shmode_func(size_t elemsize, int mode);

/* Only a put into a map without an index creates one (and reads the seed); growing an index
 * keeps its seed, so puts into a live map take no lock. */
void *stbds_hmput_key(void *a, size_t elemsize, void *key, size_t keysize, int mode)
{
    if (a && stbds_header(STBDS_HASH_TO_ARR(a, elemsize))->hash_table)
        return kiln__stbds_hmput_key(a, elemsize, key, keysize, mode);
    kiln__ds_seed_acquire();
    void *out = kiln__stbds_hmput_key(a, elemsize, key, keysize, mode);
    kiln__ds_seed_release();
    return out;
}

void *stbds_shmode_func(size_t elemsize, int mode)
{
    kiln__ds_seed_acquire();
    void *out = kiln__stbds_shmode_func(elemsize, mode);
    kiln__ds_seed_release();
    return out;
}

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

void *kiln__realloc(const kiln_allocator *a, void *ptr, size_t size)
{
    if (a && a->realloc_fn) return a->realloc_fn(a->user, ptr, size);
    return realloc(ptr, size);
}

void kiln__free(const kiln_allocator *a, void *ptr)
{
    if (!ptr) return;
    if (a && a->free_fn) a->free_fn(a->user, ptr);
    else free(ptr);
}

void kiln__ds_enter(kiln__ds_ctx *ctx, const kiln_allocator *alloc)
{
    if (alloc && alloc->realloc_fn && alloc->free_fn) {
        ctx->alloc = *alloc;
    } else {
        ctx->alloc.realloc_fn = kiln__libc_realloc;
        ctx->alloc.free_fn = kiln__libc_free;
        ctx->alloc.user = NULL;
    }
    ctx->prev = kiln__ds_current;
    kiln__ds_current = ctx;
}

void kiln__ds_leave(kiln__ds_ctx *ctx)
{
    kiln__ds_current = ctx->prev;
}

void *kiln__ds_realloc(void *ptr, size_t size)
{
    kiln__ds_ctx *ctx = kiln__ds_current;
    if (!ctx) abort(); /* stb_ds used outside kiln__ds_enter: a programming error */
    void *p = ctx->alloc.realloc_fn(ctx->alloc.user, ptr, size);
    if (!p && size) {
        kiln__ds_seed_release();
        longjmp(ctx->oom, 1);
    }
    return p;
}

void kiln__ds_free(void *ptr)
{
    kiln__ds_ctx *ctx = kiln__ds_current;
    if (!ctx) abort();
    if (ptr) ctx->alloc.free_fn(ctx->alloc.user, ptr);
}
