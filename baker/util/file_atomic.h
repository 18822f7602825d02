/* Private: writing a whole file so that readers see either the old file or the complete new
 * one, never a partial one.
 *
 * The content goes to a temporary file next to the target (same directory, so the rename
 * stays on one file system), is flushed and fsync'ed, and then renamed over the target; the
 * directory is fsync'ed afterwards so the rename itself survives a crash. On any failure the
 * temporary file is removed and the target is untouched.
 */
#ifndef KILN_BAKER_FILE_ATOMIC_H
#define KILN_BAKER_FILE_ATOMIC_H

#include <stddef.h>
#include <stdio.h>
#include "kiln/alloc.h"
#include "kiln/result.h"

/* Writes the content into `f`. Returns 0 on failure with errno set. */
typedef int (*kiln__file_emit_fn)(void *user, FILE *f);

/* Saves what `emit` writes to `path`. On failure returns `fail_code` (ERR_OUT_OF_MEMORY when
 * the temporary name cannot be allocated) and err (optional) says which step failed, with the
 * path and strerror. A new file gets mode 0644; a replaced file keeps its mode. */
kiln_result kiln__file_save_atomic(const char *path, kiln__file_emit_fn emit, void *user, const kiln_allocator *a,
                                   kiln_result fail_code, kiln_diag *err);

/* The same for `size` bytes at `data`. */
kiln_result kiln__file_save_bytes(const char *path, const void *data, size_t size, const kiln_allocator *a,
                                  kiln_result fail_code, kiln_diag *err);

#endif
