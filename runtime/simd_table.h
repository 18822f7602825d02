/* runtime/simd_table.h - the one kernel table: every runtime module's per-path kernels, one
 * row per SIMD path, chosen once (simd_dispatch.c).
 *
 * Private; not installed. Each module asks kiln__simd_get() for the row in use and calls the
 * kernel it needs from it; no module checks the CPU or switches on the path itself, so
 * kiln_simd_force() governs sampling, pose math, skinning, blend shapes, instance matrices, the
 * rig and the blob scanners and CRC alike, and a new instruction set is one more row to fill here.
 *
 * A path whose module has no kernels of its own reuses the narrower path's (the AVX-512 row
 * holds the AVX2 sampling, blend-shape, instance and scanner kernels); the CRC has no SSE2 form
 * (the crc32 instruction is SSE4.2), so the scalar and SSE2 rows use the portable tables and the
 * AVX2 and AVX-512 rows, whose CPUs all have SSE4.2 and PCLMULQDQ (checked with the rest of the
 * row's features), the three-lane crc32 loop.
 */
#ifndef KILN_SIMD_TABLE_H
#define KILN_SIMD_TABLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "anim_internal.h"
#include "blend_shape_internal.h"
#include "blob_internal.h"
#include "instance_internal.h"
#include "rig_internal.h"
#include "skin_internal.h"

typedef struct kiln__simd_table {
    kiln_simd path;
    const char *name;                                    /* kiln_simd_name(path) */
    kiln__kernels anim;                                  /* sampling and pose math (anim.path == path) */
    kiln__skin_fn skin_lbs, skin_dqs;                    /* mesh skinning (skin.c) */
    kiln__bs_kernels blend_shape;                        /* blend_shape.c */
    void (*instance_world)(const kiln__instance_job *job); /* instance.c */
    const kiln__scan_kernels *scan;                      /* blob payload scanners (blob_scan.c) */
    uint32_t (*crc32c)(uint32_t crc, const void *data, size_t size); /* blob CRC (crc32c.c) */
    kiln__rig_kernels rig;                               /* IK and constraints (rig.c) */
} kiln__simd_table;

/* The row in use (NULL before the first use) and the first use's path, which picks it: the
 * best path the CPU has. Read through kiln__simd_get. */
extern _Atomic(const kiln__simd_table *) kiln__simd_current;
const kiln__simd_table *kiln__simd_first(void);
/* The row in use: chosen on first use, replaced by kiln_simd_force. Never NULL. Inline: every
 * kernel call starts with it, and after the first use it is one load. */
static inline const kiln__simd_table *kiln__simd_get(void)
{
    const kiln__simd_table *t = atomic_load_explicit(&kiln__simd_current, memory_order_acquire);
    return KILN__LIKELY(t != NULL) ? t : kiln__simd_first();
}
/* Its animation columns (sampling and pose math). */
static inline const kiln__kernels *kiln__kernels_get(void) { return &kiln__simd_get()->anim; }
/* The row of one path, or NULL when it is not built or the CPU lacks it. */
const kiln__simd_table *kiln__simd_for(kiln_simd path);

#endif /* KILN_SIMD_TABLE_H */
