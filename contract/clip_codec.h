/* contract/clip_codec.h - the clip sample data codec (blob_format.h, "Clip sample data"), written
 * once for both sides: the baker's encoders (bake_anim_encode.c, bake_anim_lossy.c) lay rows
 * out and measure their error with it, the runtime (anim_bind.c, anim_sample_*.c,
 * blob_verify_anim.c) checks and decodes with it.
 *
 * Private to the two libraries and never installed: header-only, every function static inline.
 * The SIMD kernels keep their own register code (anim_sample_simd.h) but take the widths, the
 * slack and the dequantisation step from here and must decode bit for bit as
 * kiln__clip_dequant does.
 *
 * The decode is unfused on purpose (product and sum in separate statements, so C11 does not
 * allow contracting them into a fused multiply-add): the baker measures a lossy clip's error
 * on exactly the values every runtime path reads back.
 */
#ifndef KILN_CONTRACT_CLIP_CODEC_H
#define KILN_CONTRACT_CLIP_CODEC_H

#include <math.h>
#include <stdint.h>

#include "kiln/blob_format.h"

/* ---- widths ------------------------------------------------------------------------------ */
/* Quantised widths are 1 to 24 bits per lane; 32 is a raw float. */
#define KILN__CLIP_MAX_QBITS 24u
#define KILN__CLIP_RAW       32u

static inline int kiln__clip_width_ok(uint32_t width)
{
    return (width >= 1 && width <= KILN__CLIP_MAX_QBITS) || width == KILN__CLIP_RAW;
}

/* Bytes one track occupies in a row: 8 lanes of `width` bits. */
static inline uint32_t kiln__clip_track_bytes(uint32_t width) { return width * KILN_SOA_WIDTH / 8u; }

/* Where a track of `width` bits goes in a row whose tracks so far end at `offset`: raw float
 * tracks start on a 4-byte boundary (the decoders read them as floats), quantised ones right
 * after the previous track. */
static inline uint32_t kiln__clip_track_at(uint32_t offset, uint32_t width)
{
    return width == KILN__CLIP_RAW ? (offset + 3u) & ~3u : offset;
}

/* A track the clip's kind allows: lossless clips store raw floats only; lossy clips never
 * store qw (component 6), which is rebuilt from qx, qy, qz (kiln__clip_rebuild_qw). */
static inline int kiln__clip_track_ok(int lossy, uint32_t component, uint32_t width)
{
    return kiln__clip_width_ok(width) && (lossy || width == KILN__CLIP_RAW) && !(lossy && component == 6u);
}

/* ---- layout ------------------------------------------------------------------------------ */
/* Zero bytes a lossy clip keeps after its last row (inside data_size), so that decoders may
 * load 16 bytes from any track of any row (the AVX2 unpack reads up to 28 bytes from a track's
 * start: 16 at the track and 16 at byte 4w/8). */
#define KILN__CLIP_SLACK 16u
/* Rows start on, and their stride is a multiple of, this many bytes. */
#define KILN__CLIP_ROW_ALIGN 16u

static inline uint32_t kiln__clip_slack(int lossy) { return lossy ? KILN__CLIP_SLACK : 0u; }

/* The row stride for tracks of `row_bytes` bytes in all; below row_bytes when it overflows. */
static inline uint32_t kiln__clip_row_stride(uint32_t row_bytes)
{
    return (row_bytes + (KILN__CLIP_ROW_ALIGN - 1u)) & ~(KILN__CLIP_ROW_ALIGN - 1u);
}

/* Where the parts of a clip's sample data lie, as offsets from the same origin as data_offset:
 * constants (block_count x kiln_soa_xform), then the track table (animated_count x
 * kiln_blob_anim_track), then the rows from the next 16-byte boundary, then the slack. */
typedef struct kiln__clip_layout {
    uint64_t constants;
    uint64_t tracks;
    uint64_t rows;
    uint64_t end;        /* rows end plus the slack: the bytes the layout needs end here */
} kiln__clip_layout;

/* 0 when the sizes overflow 64 bits (impossible for 32-bit counts, checked anyway). */
static inline int kiln__clip_layout_of(uint64_t data_offset, uint32_t block_count, uint32_t animated_count,
                                       uint32_t frame_count, uint32_t row_stride, int lossy, kiln__clip_layout *l)
{
    l->constants = data_offset;
    l->tracks = l->constants + (uint64_t)block_count * sizeof(kiln_soa_xform);
    uint64_t rows = l->tracks + (uint64_t)animated_count * sizeof(kiln_blob_anim_track);
    l->rows = (rows + (KILN__CLIP_ROW_ALIGN - 1u)) & ~(uint64_t)(KILN__CLIP_ROW_ALIGN - 1u);
    l->end = l->rows + (uint64_t)frame_count * row_stride + kiln__clip_slack(lossy);
    return l->end >= l->rows && data_offset <= UINT64_MAX / 2;
}

/* ---- lanes ------------------------------------------------------------------------------- */
/* Lane `lane` of a track of `width` (1..24) bits per lane: 8 unsigned integers packed
 * little-endian, lane i in bits [i*w, (i+1)*w). Reads only the bytes that hold the lane. */
static inline uint32_t kiln__clip_lane_bits(const unsigned char *src, uint32_t width, unsigned lane)
{
    uint32_t bit = lane * width, first = bit >> 3, shift = bit & 7u;
    unsigned nbytes = (shift + width + 7u) >> 3;
    uint64_t acc = 0;
    for (unsigned i = 0; i < nbytes; i++) acc |= (uint64_t)src[first + i] << (8u * i);
    return (uint32_t)(acc >> shift) & ((1u << width) - 1u);
}

/* The inverse: writes the 8 lanes q (each below 2^width) as the track's `width` bytes. */
static inline void kiln__clip_pack_lanes(const uint32_t q[KILN_SOA_WIDTH], uint32_t width, unsigned char *dst)
{
    uint64_t acc = 0;
    unsigned bits = 0;
    for (unsigned l = 0; l < KILN_SOA_WIDTH; l++) {
        acc |= (uint64_t)q[l] << bits;
        bits += width;
        while (bits >= 8) {
            *dst++ = (unsigned char)acc;
            acc >>= 8;
            bits -= 8;
        }
    }
}

/* ---- dequantisation ---------------------------------------------------------------------- */
/* 1 / (2^width - 1) rounded to float, for width 1..24 (0 for anything else). */
static inline float kiln__clip_quant_inv(uint32_t width)
{
#define KILN__CLIP_INV(w) (1.0f / (float)((1u << (w)) - 1u))
    static const float inv[KILN__CLIP_MAX_QBITS + 1] = {
        0.0f,               KILN__CLIP_INV(1),  KILN__CLIP_INV(2),  KILN__CLIP_INV(3),  KILN__CLIP_INV(4),
        KILN__CLIP_INV(5),  KILN__CLIP_INV(6),  KILN__CLIP_INV(7),  KILN__CLIP_INV(8),  KILN__CLIP_INV(9),
        KILN__CLIP_INV(10), KILN__CLIP_INV(11), KILN__CLIP_INV(12), KILN__CLIP_INV(13), KILN__CLIP_INV(14),
        KILN__CLIP_INV(15), KILN__CLIP_INV(16), KILN__CLIP_INV(17), KILN__CLIP_INV(18), KILN__CLIP_INV(19),
        KILN__CLIP_INV(20), KILN__CLIP_INV(21), KILN__CLIP_INV(22), KILN__CLIP_INV(23), KILN__CLIP_INV(24)};
#undef KILN__CLIP_INV
    return inv[width <= KILN__CLIP_MAX_QBITS ? width : 0];
}

/* A lane's step: range_extent · 1/(2^w − 1), rounded to float once. Paths that decode many rows
 * (the packed SIMD blocks) compute it at bind time; it is the same float. */
static inline float kiln__clip_step(float range_extent, uint32_t width)
{
    return range_extent * kiln__clip_quant_inv(width);
}

/* The value of a quantised lane q: range_min + step · q, the product rounded before the sum. */
static inline float kiln__clip_dequant(uint32_t q, float range_min, float step)
{
    float prod = step * (float)q;
    return range_min + prod;
}

/* Whether qw is rebuilt in a block (instead of read from the constants): in lossy clips, when
 * the block stores a track of any of qx, qy, qz. */
static inline int kiln__clip_rebuilds_qw(int lossy, int rotation_stored) { return lossy && rotation_stored; }

/* qw of a lossy clip's rotation: sqrt(max(0, ((1 - qx²) - qy²) - qz²)), each product and
 * difference rounded in that order (the SIMD paths subtract the same way). */
static inline float kiln__clip_rebuild_qw(float x, float y, float z)
{
    float xx = x * x, yy = y * y, zz = z * z;
    float w2 = 1.0f - xx;
    w2 = w2 - yy;
    w2 = w2 - zz;
    return sqrtf(w2 > 0.0f ? w2 : 0.0f);
}

#endif /* KILN_CONTRACT_CLIP_CODEC_H */
