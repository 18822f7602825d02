/* Private: stb_ds routed through a kiln_allocator.
 *
 * stb_ds passes no context to its allocation macros, so the allocator (and the place to jump
 * to when it fails) is published per thread for the duration of a guarded call. stb_ds itself
 * does not survive a NULL realloc, hence the jump: the old block stays valid and the caller's
 * cleanup frees it. Every baker file includes this header instead of <stb/stb_ds.h>.
 */
#ifndef KILN_BAKER_DS_H
#define KILN_BAKER_DS_H

#include <setjmp.h>
#include <stddef.h>
#include "kiln/alloc.h"

typedef struct kiln__ds_ctx {
    kiln_allocator alloc;   /* resolved: never NULL function pointers */
    jmp_buf        oom;     /* longjmp target when an allocation fails */
    struct kiln__ds_ctx *prev;
} kiln__ds_ctx;

/* Makes ctx current for this thread (nesting allowed); pair with kiln__ds_leave. */
void kiln__ds_enter(kiln__ds_ctx *ctx, const kiln_allocator *alloc);
void kiln__ds_leave(kiln__ds_ctx *ctx);

/* The allocator functions stb_ds calls. realloc jumps to the current ctx's oom on failure. */
void *kiln__ds_realloc(void *ptr, size_t size);
void  kiln__ds_free(void *ptr);

/* Plain allocation through an allocator (NULL: libc), for code outside stb_ds. */
void *kiln__realloc(const kiln_allocator *a, void *ptr, size_t size);
void  kiln__free(const kiln_allocator *a, void *ptr);

#define STBDS_REALLOC(c, p, s) kiln__ds_realloc((p), (s))
#define STBDS_FREE(c, p)       kiln__ds_free(p)
#define STBDS_NO_SHORT_NAMES
#include <stb/stb_ds.h>

/* stb_ds takes the key's address through typeof on GNU compilers, which strict ISO C11 does
 * not provide; kiln always passes keys as lvalues, so a plain address is enough. */
#undef STBDS_ADDRESSOF
#define STBDS_ADDRESSOF(typevar, value) &(value)

#endif
