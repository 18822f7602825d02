/* Sampling kernels, AVX2 + FMA: one 8-lane vector per SoA component. Compiled for that target
 * per function (simd.h) and selected at run time by cpuid (simd_dispatch.c). */
#include <string.h>

#include "anim_internal.h"

#if KILN__SIMD_AVX2
#define KILN__OPS_AVX2 1
#include "simd_ops.h"

/* Byte shuffle and shift that put lane i of a w-bit track in 32-bit lane i: lanes 0-3 are read
 * from the 16 bytes at the track, lanes 4-7 from the 16 bytes at byte (4w)/8; lane i starts at
 * bit i*w, so its bits sit in the 4 bytes from (i*w)/8, shifted right by (i*w)%8 (at most 7 +
 * 24 bits: one 32-bit word). */
#define KILN__HI(w) ((4u * (w)) >> 3)
#define KILN__BYTE(w, i, k) (int8_t)((((i) * (w)) >> 3) - ((i) >= 4 ? KILN__HI(w) : 0u) + (k))
#define KILN__LANE(w, i) KILN__BYTE(w, i, 0), KILN__BYTE(w, i, 1), KILN__BYTE(w, i, 2), KILN__BYTE(w, i, 3)
#define KILN__MASK(w)                                                                                     \
    {KILN__LANE(w, 0), KILN__LANE(w, 1), KILN__LANE(w, 2), KILN__LANE(w, 3),                              \
     KILN__LANE(w, 4), KILN__LANE(w, 5), KILN__LANE(w, 6), KILN__LANE(w, 7)}
/* The same bytes for tracks of up to 16 bits read as one 16-byte load broadcast to both halves:
 * the bits of every lane then lie in the track's first w <= 16 bytes, so lanes 4-7 index
 * those 16 bytes directly; indices past them (bytes beyond the lane's bits) read zero. */
#define KILN__NBYTE_AT(x) (int8_t)((x) < 16u ? (x) : 0x80u)
#define KILN__NBYTE(w, i, k) KILN__NBYTE_AT((((i) * (w)) >> 3) + (k))
#define KILN__NLANE(w, i) KILN__NBYTE(w, i, 0), KILN__NBYTE(w, i, 1), KILN__NBYTE(w, i, 2), KILN__NBYTE(w, i, 3)
#define KILN__NMASK(w)                                                                                    \
    {KILN__NLANE(w, 0), KILN__NLANE(w, 1), KILN__NLANE(w, 2), KILN__NLANE(w, 3),                          \
     KILN__NLANE(w, 4), KILN__NLANE(w, 5), KILN__NLANE(w, 6), KILN__NLANE(w, 7)}
#define KILN__SHIFT(w) {0, (w) & 7, (2 * (w)) & 7, (3 * (w)) & 7, (4 * (w)) & 7, (5 * (w)) & 7, (6 * (w)) & 7, (7 * (w)) & 7}
#define KILN__LOW(w) ((1u << (w)) - 1u)
/* Everything the unpack of one width reads, together: one table row per width, so that a
 * component costs one address (the row) besides its source bytes. */
typedef struct kiln__unpack_row {
    _Alignas(32) int8_t mask[32];
    int32_t shift[8];
    uint32_t low[8];
    int8_t narrow[32]; /* the byte shuffle of kiln__unpack_narrow (widths up to 16) */
} kiln__unpack_row;
#define KILN__ROW(w)                                                                                      \
    {KILN__MASK(w), KILN__SHIFT(w),                                                                       \
     {KILN__LOW(w), KILN__LOW(w), KILN__LOW(w), KILN__LOW(w), KILN__LOW(w), KILN__LOW(w), KILN__LOW(w), KILN__LOW(w)}, \
     KILN__NMASK(w)}
static const kiln__unpack_row kiln__unpack_rows[KILN__CLIP_MAX_QBITS + 1] = {
    KILN__ROW(0),  KILN__ROW(1),  KILN__ROW(2),  KILN__ROW(3),  KILN__ROW(4),  KILN__ROW(5),  KILN__ROW(6),
    KILN__ROW(7),  KILN__ROW(8),  KILN__ROW(9),  KILN__ROW(10), KILN__ROW(11), KILN__ROW(12), KILN__ROW(13),
    KILN__ROW(14), KILN__ROW(15), KILN__ROW(16), KILN__ROW(17), KILN__ROW(18), KILN__ROW(19), KILN__ROW(20),
    KILN__ROW(21), KILN__ROW(22), KILN__ROW(23), KILN__ROW(24)};

/* Widens the 8 lanes (h is always 0 here) of a `width`-bit track (1..24) to 32-bit integers.
 * Reads up to 28 bytes from src: lossy clips keep KILN__CLIP_SLACK bytes after their last
 * row, so this stays inside the clip for every track of every row. */
KILN__FN kvi kiln__unpack_half(const unsigned char *src, uint32_t width, unsigned h)
{
    (void)h;
    /* One branch-free sequence for every width: the widths of a block's tracks vary from
     * component to component, and a switch on them saves nothing measurable. */
    const kiln__unpack_row *t = &kiln__unpack_rows[width];
    __m128i lo = _mm_loadu_si128((const __m128i *)(const void *)src);
    __m128i hi = _mm_loadu_si128((const __m128i *)(const void *)(src + KILN__HI(width)));
    __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
    v = _mm256_shuffle_epi8(v, _mm256_loadu_si256((const __m256i *)(const void *)t->mask));
    v = _mm256_srlv_epi32(v, _mm256_loadu_si256((const __m256i *)(const void *)t->shift));
    return _mm256_and_si256(v, _mm256_loadu_si256((const __m256i *)(const void *)t->low));
}

/* kiln__unpack_half for a track of 1 to 16 bits (KILN__BLK_NARROW blocks): one broadcast load
 * of its first 16 bytes instead of two loads and an insert. */
#define KILN__UNPACK_NARROW 1
KILN__FN kvi kiln__unpack_narrow(const unsigned char *src, uint32_t width)
{
    const kiln__unpack_row *t = &kiln__unpack_rows[width];
    __m256i v = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)src));
    v = _mm256_shuffle_epi8(v, _mm256_loadu_si256((const __m256i *)(const void *)t->narrow));
    v = _mm256_srlv_epi32(v, _mm256_loadu_si256((const __m256i *)(const void *)t->shift));
    return _mm256_and_si256(v, _mm256_loadu_si256((const __m256i *)(const void *)t->low));
}

#include "anim_sample_simd.h"

#endif /* KILN__SIMD_AVX2 */
