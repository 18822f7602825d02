/* Private: small helpers shared by the bake stages: owned strings, path arithmetic, and the
 * 64-byte aligned blocks a blob lives in.
 *
 * Every function that returns a new string allocates it with the given allocator (NULL: libc)
 * and returns NULL only when that allocation fails. Paths are handled as text: nothing here
 * touches the file system, so baking gives the same bytes on every machine for the same
 * input paths.
 */
#ifndef KILN_BAKER_BAKE_UTIL_H
#define KILN_BAKER_BAKE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include "kiln/alloc.h"

/* The first `len` bytes of `s` as a NUL-terminated copy (s may hold no NUL in that range). */
/* Copies a string with the allocator (NULL stays NULL). Returns NULL on allocation failure
 * only when s is not NULL. */
char *kiln__strdup(const kiln_allocator *a, const char *s);
char *kiln__strndup(const kiln_allocator *a, const char *s, size_t len);

/* printf into a new string. */
char *kiln__strfmt(const kiln_allocator *a, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- paths --------------------------------------------------------------------------------
 * Both '/' and '\' separate components (Cast files come from Windows tools as often as not);
 * results are written with '/'. A path is absolute when it starts with a separator or with a
 * drive letter followed by ':' and a separator ("C:/x"). */
int kiln__path_is_absolute(const char *path);

/* The directory part of `path`: "a/b/c.cast" -> "a/b", "c.cast" -> ".", "/c.cast" -> "/". */
char *kiln__path_dirname(const kiln_allocator *a, const char *path);

/* The last component without its extension: "a/b/hero.cast" -> "hero". */
char *kiln__path_stem(const kiln_allocator *a, const char *path);

/* Lexical normalisation: "." components and repeated separators go, "x/.." pairs cancel,
 * ".." at the start of a relative path is kept, ".." above an absolute root is dropped. An
 * empty result is ".". */
char *kiln__path_normalise(const kiln_allocator *a, const char *path);

/* normalise(dir + "/" + path), or normalise(path) when path is absolute or dir is empty. */
char *kiln__path_join(const kiln_allocator *a, const char *dir, const char *path);

/* `path` normalised and, when relative, joined to the working directory: the one place the
 * baker asks the system anything about paths, so that an absolute and a relative spelling of
 * one file compare equal. When the working directory cannot be read the path stays relative. */
char *kiln__path_absolute(const kiln_allocator *a, const char *path);

/* `to` relative to the directory `from` ("a/b", "a/c/d" -> "../c/d"; equal -> "."). Both are
 * made absolute first (kiln__path_absolute), so any two spellings work; a different drive
 * gives `to` absolute. */
char *kiln__path_relative(const kiln_allocator *a, const char *from, const char *to);

/* ---- aligned blocks -----------------------------------------------------------------------
 * The allocator promises only malloc alignment, so a block of `size` bytes aligned to `align`
 * (a power of two, at least sizeof(void *)) is carved out of a larger allocation whose address
 * is stored just before the aligned pointer. The block is zero-filled. */
void *kiln__aligned_alloc(const kiln_allocator *a, size_t size, size_t align);
void  kiln__aligned_free(const kiln_allocator *a, void *p);

#endif
