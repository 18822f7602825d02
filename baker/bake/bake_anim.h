/* Private: what the clip encoders share (bake_anim_encode.c, bake_anim_lossy.c).
 *
 * An encoding is a plan per (block, component) pair of the clip: a width (0 = constant, the
 * lanes' values in `constant`; 32 = raw floats; 8, 12, 16 or 24 = quantised between
 * range_min and range_min + range_extent per lane). kiln__anim_layout turns the plans into the
 * clip's data bytes. Dense values are read through kiln__anim_track: NULL means the joint has
 * no curves (a placeholder slot) and the component's identity value holds.
 */
#ifndef KILN_BAKER_BAKE_ANIM_H
#define KILN_BAKER_BAKE_ANIM_H

#include "bake_internal.h"

typedef struct kiln__anim_plan {
    uint32_t width;
    float    constant[KILN_SOA_WIDTH];
    float    range_min[KILN_SOA_WIDTH];
    float    range_extent[KILN_SOA_WIDTH];
} kiln__anim_plan;

/* 0 for translations and qx..qz, 1 for qw and scales. */
float kiln__anim_identity(unsigned c);
/* frame_count values of component c of joint `joint`, or NULL (identity). */
const float *kiln__anim_track(const kiln__anim *an, uint32_t joint, unsigned c);

/* Zero bytes after the rows of a lossy clip (blob_format.h: decoders load 16 bytes at a time). */
#define KILN__LOSSY_SLACK 16u

/* Builds an->data (constants, track table, rows, then `slack` zero bytes), row_stride and
 * animated_count from one plan per (block, component), block-major. ERR_LIMIT when the clip
 * would not fit in memory. */
kiln_result kiln__anim_layout(const kiln_allocator *a, kiln__anim *an, const kiln__anim_plan *plan, uint32_t slack);
/* Writes row r of the track (blk, c) at dst: width bytes. */
void kiln__anim_pack(const kiln__anim *an, uint32_t blk, unsigned c, const kiln__anim_plan *pl, uint32_t r,
                     unsigned char *dst);

/* The w-bit integer whose decode (as the runtime does it: min + (extent · 1/(2^w − 1)) · q in
 * float, unfused) is nearest to x; and that decode. */
uint32_t kiln__anim_quantize(float x, float min, float extent, uint32_t width);
float    kiln__anim_decode(uint32_t q, float min, float extent, uint32_t width);

/* Quantises the clip within the options' bound (see kiln_bake_options). Sets *met to 0 (and
 * reports why) when even the widest encoding misses the bound; the caller then stores it
 * lossless. */
kiln_result kiln__encode_lossy(const kiln_allocator *a, const kiln_bake_options *o, const kiln_diag_sink *sink,
                               kiln__anim *an, const kiln__skeleton *skeleton, int *met);

#endif
