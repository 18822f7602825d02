#include <stdlib.h>

#define STB_DS_IMPLEMENTATION
#include "ds.h"

static _Thread_local kiln__ds_ctx *kiln__ds_current;

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
    if (!p && size) longjmp(ctx->oom, 1);
    return p;
}

void kiln__ds_free(void *ptr)
{
    kiln__ds_ctx *ctx = kiln__ds_current;
    if (!ctx) abort();
    if (ptr) ctx->alloc.free_fn(ctx->alloc.user, ptr);
}
