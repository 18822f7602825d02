/* Private: what the clip encoders share (bake_anim_encode.c, bake_anim_lossy.c).
 *
 * An encoding is a plan per (block, component) pair of the clip: a width (0 = constant, the
 * lanes' values in `constant`; 32 = raw floats; 1 to 24 = quantised between range_min and
 * range_min + range_extent per lane). kiln__anim_layout turns the plans into the clip's data
 * bytes, laid out, packed and decoded as contract/clip_codec.h defines for both sides. Dense values are read through kiln__anim_track: NULL means the joint has
 * no curves (a placeholder slot) and the component's identity value holds.
 */
#ifndef KILN_BAKER_BAKE_ANIM_H
#define KILN_BAKER_BAKE_ANIM_H

#include "bake_internal.h"
#include "clip_codec.h"

typedef struct kiln__anim_plan {
    uint32_t width;
    float    constant[KILN_SOA_WIDTH];
    float    range_min[KILN_SOA_WIDTH];
    float    range_extent[KILN_SOA_WIDTH];
} kiln__anim_plan;

/* 0 for translations and qx..qz, 1 for qw and scales. */
float kiln__anim_identity(unsigned c);
/* frame_count values of component c of joint `joint`, or NULL (identity). Inline: the lossy
 * encoder reads a track per lane and frame it measures. */
static inline const float *kiln__anim_track(const kiln__anim *an, uint32_t joint, unsigned c)
{
    if (joint >= an->joint_count || !an->joints[joint].values) return NULL;
    return an->joints[joint].values + (size_t)c * an->frame_count;
}

/* Builds an->data (constants, track table, rows, then the slack of a lossy clip), row_stride
 * and animated_count from one plan per (block, component), block-major. ERR_LIMIT when the
 * clip would not fit in memory. */
kiln_result kiln__anim_layout(const kiln_allocator *a, kiln__anim *an, const kiln__anim_plan *plan, int lossy);
/* Writes every row of the track (blk, c), the first at dst, the next ones `stride` bytes
 * apart: width bytes each. */
void kiln__anim_pack(const kiln__anim *an, uint32_t blk, unsigned c, const kiln__anim_plan *pl, unsigned char *dst,
                     uint32_t stride);

/* The w-bit integer whose decode (kiln__clip_dequant, as every runtime path decodes it) is
 * nearest to x. */
uint32_t kiln__anim_quantize(float x, float min, float extent, uint32_t width);
/* The same with the lane's step, kiln__clip_step(extent, width), given. */
uint32_t kiln__anim_quantize_step(float x, float min, float extent, uint32_t width, float step);
/* kiln__anim_quantize_step of eight lanes at once (width 3 to 24) with AVX2, bit for bit; returns
 * 0 (q untouched) where it is not built or the CPU lacks AVX2. */
int kiln__anim_quantize8(const float x[8], const float lo[8], const float extent[8], const float step[8],
                         uint32_t width, uint32_t q[8]);

/* Quantises the clip within the options' bound (see kiln_bake_options). Sets *met to 0 (and
 * reports why) when even the widest encoding misses the bound; the caller then stores it
 * lossless. */
kiln_result kiln__encode_lossy(const kiln_allocator *a, const kiln_bake_options *o, const kiln_diag_sink *sink,
                               kiln__anim *an, const kiln__skeleton *skeleton, int *met);

#endif
