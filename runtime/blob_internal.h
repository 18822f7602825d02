/* runtime/blob_internal.h - private helpers shared by the blob loader, the views, the CRC and
 * the payload scanners. Not installed; nothing here is part of the ABI. */
#ifndef KILN_BLOB_INTERNAL_H
#define KILN_BLOB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/blob.h"

/* SSE4.2/PCLMUL/AVX2 functions (target attributes), run by the kernel table's rows. Only on
 * x86-64 with GCC or Clang; KILN_FORCE_SCALAR keeps the portable paths alone. */
#if !defined(KILN_FORCE_SCALAR) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KILN__X86_DISPATCH 1
#else
#define KILN__X86_DISPATCH 0
#endif

/* ---- CRC-32C (crc32c.c). Same convention as kiln_crc32c. ------------------------------ */
uint32_t kiln__crc32c_sw(uint32_t crc, const void *data, size_t size); /* portable tables */
uint32_t kiln__crc32c_hw(uint32_t crc, const void *data, size_t size); /* the kernel table's */
int      kiln__crc32c_hw_available(void); /* 1 when the table's CRC is the crc32 instruction's */
#if KILN__X86_DISPATCH
/* SSE4.2 crc32, three lanes joined with PCLMULQDQ: only on CPUs that have both. */
uint32_t kiln__crc32c_sse42(uint32_t crc, const void *data, size_t size);
#endif

/* ---- known section kinds (blob_view.c) ------------------------------------------------ */
enum {
    KILN__S_STRINGS,
    KILN__S_METADATA,
    KILN__S_NAME_INDEX,
    KILN__S_MODELS,
    KILN__S_SKELETONS,
    KILN__S_BONES,
    KILN__S_REST_POSE,
    KILN__S_INVERSE_BIND,
    KILN__S_MESHES,
    KILN__S_HAIRS,
    KILN__S_STREAMS,
    KILN__S_DATA,
    KILN__S_MATERIALS,
    KILN__S_MATERIAL_SLOTS,
    KILN__S_INSTANCES,
    KILN__S_REFERENCES,
    KILN__S_COUNT
};

/* Slot of a known kind (KILN__S_*), or -1. */
int kiln__kind_slot(uint32_t kind);
/* The kind of a slot. */
uint32_t kiln__slot_kind(int slot);
/* Record size of a slot's kind; 0 for byte sections (STRINGS, DATA). */
uint32_t kiln__slot_stride(int slot);

/* The version-1 layout of every known kind. */
#define KILN__SECTION_VERSION 1u

/* The records of the first section of `kind`, their count and size in bytes (both optional),
 * or NULL and 0 when the section is absent or its entry is inconsistent (version, stride,
 * outside the blob). `stride` 0 asks for a byte section. The check is repeated on every call
 * so that views stay inside the blob even for trusted loads. */
const void *kiln__records(const kiln_blob *blob, uint32_t kind, uint32_t stride, uint32_t *count, uint64_t *bytes);

/* Defines the typed view `fn` of the records of `kind` (kiln_blob_animations and the like): a
 * NULL blob or an absent or inconsistent section gives NULL and a count of 0. */
#define KILN__RECORDS_VIEW(fn, type, kind)                                                          \
    const type *fn(const kiln_blob *blob, uint32_t *count)                                          \
    {                                                                                               \
        uint32_t n = 0;                                                                             \
        const type *p = blob ? (const type *)kiln__records(blob, kind, sizeof(type), &n, NULL) : NULL; \
        if (count) *count = n;                                                                      \
        return n ? p : NULL;                                                                        \
    }

/* ---- stream formats (blob_view.c) ----------------------------------------------------- */
typedef struct kiln__format_info {
    uint8_t fixed_bytes;   /* element bytes of fixed formats; 0 for the xN formats */
    uint8_t scalar_bytes;  /* bytes per value: alignment of the stride, size of one component */
    uint8_t fixed_values;  /* values per element of fixed formats */
    uint8_t is_float;      /* values are f32 and must be finite */
} kiln__format_info;

/* NULL for unknown formats. */
const kiln__format_info *kiln__format(uint32_t format);
/* Bytes one element of `stream` occupies (fixed size, or components * scalar for xN). */
uint64_t kiln__element_bytes(const kiln__format_info *info, uint32_t components);

/* ---- payload scanners (blob_scan.c), on the kernel table's path (simd_table.h) --------- */
/* One path's scanners, as the functions below (p not NULL when n > 0). */
typedef struct kiln__scan_kernels {
    int (*finite)(const unsigned char *p, size_t n);
    int (*below_u32)(const unsigned char *p, size_t n, uint32_t bound);
    int (*below_u16)(const unsigned char *p, size_t n, uint32_t bound);
} kiln__scan_kernels;
extern const kiln__scan_kernels kiln__scan_scalar;
#if KILN__X86_DISPATCH
extern const kiln__scan_kernels kiln__scan_sse2;
extern const kiln__scan_kernels kiln__scan_avx2; /* only on CPUs with AVX2 */
#endif
/* 1 when none of the `n` f32 at `p` (4-byte aligned) is NaN or infinite. */
int kiln__scan_finite_f32(const void *p, size_t n);
/* 1 when every one of the `n` u32 (4-aligned) / u16 (2-aligned) at `p` is below `bound`. */
int kiln__scan_below_u32(const void *p, size_t n, uint32_t bound);
int kiln__scan_below_u16(const void *p, size_t n, uint32_t bound);
/* For tests: kernel 0 finite, 1 below_u32, 2 below_u16 on path 0 scalar, 1 SSE2, 2 AVX2.
 * Returns -1 when the path is not built or the CPU lacks it. */
int kiln__scan_on_path(int path, int kernel, const void *p, size_t n, uint32_t bound);
/* "avx2", "sse2" or "scalar": the scanners the kernel table's row in use runs. */
const char *kiln__scan_path(void);

#endif /* KILN_BLOB_INTERNAL_H */
