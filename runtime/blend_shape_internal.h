/* runtime/blend_shape_internal.h - the blend-shape evaluator's job and its per-path kernels.
 * Private; not installed.
 *
 * kiln_blend_shapes_apply (blend_shape.c) builds the output in place, in chunks of
 * KILN__BS_CHUNK vertices: the chunk's base positions are written (copied, or decoded when
 * quantised), then every shape's deltas that fall into the chunk are added to it. A chunk of
 * output stays in L2 while all the shapes visit it, so the output goes to memory once however
 * many shapes there are, and each shape's deltas are still read as long sequential runs (the
 * part the hardware prefetcher follows). The deltas, which dominate the traffic, are read once.
 */
#ifndef KILN_BLEND_SHAPE_INTERNAL_H
#define KILN_BLEND_SHAPE_INTERNAL_H

#include <stdint.h>

#include "kiln/blend_shape.h"
#include "simd.h"

/* Vertices per chunk: 16384 x 12 bytes = 192 KB of output, inside the L2 of current x86-64
 * cores next to the delta streams. Measured on 100k vertices (bench_blend.c): 8192 to 32768
 * are within noise of each other; 2048 loses up to 2x with 32 shapes of 30 % (each chunk then
 * switches between 64 short delta and index streams), and no chunking loses ~30 % with 5 %
 * coverage (the output is re-read from L3 once per shape). */
#ifndef KILN__BS_CHUNK
#define KILN__BS_CHUNK 16384u
#endif
/* Shapes applied per pass over the output; more are applied in further passes. */
#define KILN__BS_GROUP 64u

/* One shape with a nonzero effective weight. */
typedef struct kiln__bs_run {
    const uint32_t *idx;     /* n ascending vertex indices */
    const float    *d;       /* n x 3 deltas */
    uint32_t        n;
    uint32_t        k;       /* cursor: the first delta not applied yet */
    float           w;       /* effective weight, > 0 */
} kiln__bs_run;

typedef struct kiln__bs_job {
    const void    *base;        /* POSITION payload */
    uint32_t       quantized;   /* 0: F32x3 (12-byte elements), 1: UNORM16x4 (8-byte elements) */
    float          dq_scale[4]; /* UNORM16x4: p = dq_offset + dq_scale * q (scale = decode_scale / 65535), lane 3 zero */
    float          dq_offset[4];
    unsigned char *out;
    uint32_t       stride;      /* bytes between output positions, >= 12, a multiple of 4 */
    uint32_t       vertex_count;
} kiln__bs_job;

/* The kernels of one path, on the output vertices [c0, c0 + m):
 *   base:  writes the base positions (x, y, z of each element only);
 *   add:   out[idx[j]] += w · d[j] for j < count. Indices outside [c0, c0 + m) are skipped (only
 *          a blob loaded with KILN_BLOB_LOAD_TRUSTED can have them), so no write leaves the
 *          chunk. `tail` says that d + 3·count is the end of the shape's deltas (no 16-byte
 *          load may reach past it). */
typedef struct kiln__bs_kernels {
    void (*base)(const kiln__bs_job *job, uint32_t c0, uint32_t m);
    void (*add)(const kiln__bs_job *job, const uint32_t *idx, const float *d, uint32_t count, uint32_t c0, uint32_t m,
                float w, int tail);
} kiln__bs_kernels;

#define KILN__DECLARE_BS_KERNELS(sfx)                                                                  \
    void kiln__bs_base_##sfx(const kiln__bs_job *job, uint32_t c0, uint32_t m);                        \
    void kiln__bs_add_##sfx(const kiln__bs_job *job, const uint32_t *idx, const float *d, uint32_t count, \
                            uint32_t c0, uint32_t m, float w, int tail);

KILN__DECLARE_BS_KERNELS(scalar)
#if KILN__SIMD_SSE2
KILN__DECLARE_BS_KERNELS(sse2)
#endif
#if KILN__SIMD_AVX2
KILN__DECLARE_BS_KERNELS(avx2)
#endif

#endif /* KILN_BLEND_SHAPE_INTERNAL_H */
