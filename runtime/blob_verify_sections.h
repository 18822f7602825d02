/* runtime/blob_verify_sections.h - what the verifiers of the sections a 1.0 loader does not
 * know (blob_verify_anim.c, blob_verify_blend.c, blob_verify_rig.c) share: the failure report,
 * the section-table walk and the check of one table entry, and the small predicates they all
 * apply to records. Private; nothing here is part of the ABI.
 *
 * These verifiers run after the loader's header and section-table checks and find their
 * sections themselves (the loader skips unknown kinds by size), so each re-checks the entries of
 * its own kinds the same way and reports failures the way the loader does.
 */
#ifndef KILN_BLOB_VERIFY_SECTIONS_H
#define KILN_BLOB_VERIFY_SECTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kiln/blob.h"

/* Returns the result of `expr` unless it is KILN_OK: the verifiers stop at the first failure. */
#define KILN__VERIFY_TRY(expr)                    \
    do {                                          \
        kiln_result kiln__r_ = (expr);            \
        if (kiln__r_ != KILN_OK) return kiln__r_; \
    } while (0)

/* Fills `err` (optional) as the loader fills it and returns `code`: the formatted text is the
 * message, followed by " (byte offset N)", and its part up to the first ':' is the path (so
 * texts start with the path: "ANIM[2].row_stride: ..."). */
kiln_result kiln__verify_fail(kiln_diag *err, kiln_result code, uint64_t offset, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* The section table of the blob at `base` and its entry count (header and table checked by the
 * loader: the table follows the header). */
const kiln_blob_section *kiln__verify_table(const unsigned char *base, uint32_t *count);

/* The size of the blob's STRINGS section and the byte range of its DATA section, the first of
 * each as the views read them (the loader has checked both kinds and rejects doubles); 0 and an
 * empty range when absent. `data_begin` and `data_end` may be NULL together. */
void kiln__verify_strings_data(const unsigned char *base, uint64_t *strings_size, uint64_t *data_begin,
                               uint64_t *data_end);

/* Checks entry `i` of the section table, `s`, a section of a kind the caller verifies: not a
 * second one (`seen` is the one found before, or NULL), layout version 1, no flag but REQUIRED,
 * record stride `stride` with count x stride = size, KILN_BLOB_ALIGN-aligned and inside the
 * `size`-byte blob. On failure fills `err` (optional) with the entry's field as the byte
 * offset and path "section[i].<field>". */
kiln_result kiln__verify_section(const kiln_blob_section *s, uint32_t i, const kiln_blob_section *seen,
                                 uint32_t stride, uint64_t size, kiln_diag *err);

/* Not NaN or infinite, by its bits (exact whatever the floating-point mode). */
static inline int kiln__finite(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return (b & 0x7F800000u) != 0x7F800000u;
}

/* 1 when the `n` bytes at `p` are all zero (reserved fields). */
static inline int kiln__zero(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        if (b[i]) return 0;
    return 1;
}

/* Index of the first non-finite float of the `n` at `f`, or n. */
static inline size_t kiln__nonfinite(const float *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!kiln__finite(f[i])) return i;
    return n;
}

/* A string offset the views can read: 0 (no name) or inside STRINGS (`strings_size` bytes). */
static inline int kiln__string_ok(uint64_t strings_size, uint32_t s) { return s == 0 || s < strings_size; }

/* [off, off + bytes) inside [begin, end) (the DATA section), without overflow. */
static inline int kiln__data_ok(uint64_t begin, uint64_t end, uint64_t off, uint64_t bytes)
{
    return off >= begin && off <= end && bytes <= end - off;
}

#endif /* KILN_BLOB_VERIFY_SECTIONS_H */
