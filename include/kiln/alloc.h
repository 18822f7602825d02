/* kiln/alloc.h - the caller-overridable allocator.
 *
 * Only the baker and optional convenience helpers allocate; loading, sampling, blending and
 * every other runtime evaluation work in caller memory. Wherever a kiln call may allocate it
 * takes a `const kiln_allocator *`; NULL, or a zero-initialised struct, means the C library's
 * realloc/free.
 *
 * Thread safety: kiln calls on different threads may be handed the same allocator, and then
 * call its functions concurrently: give each thread its own, or make the functions
 * thread-safe (the C library's are).
 */
#ifndef KILN_ALLOC_H
#define KILN_ALLOC_H

#include <stddef.h>
#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_allocator {
    /* Resize `ptr` to `size` bytes (ptr NULL: allocate). Returns NULL on failure, leaving `ptr`
     * valid. Results must be aligned for any fundamental type (as malloc's are). */
    void *(*realloc_fn)(void *user, void *ptr, size_t size);
    /* Release `ptr` (never NULL when called). */
    void (*free_fn)(void *user, void *ptr);
    void *user;
} kiln_allocator;

#ifdef __cplusplus
}
#endif

#endif /* KILN_ALLOC_H */
