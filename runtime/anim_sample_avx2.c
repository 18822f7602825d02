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
#define KILN__SHIFT(w) {0, (w) & 7, (2 * (w)) & 7, (3 * (w)) & 7, (4 * (w)) & 7, (5 * (w)) & 7, (6 * (w)) & 7, (7 * (w)) & 7}
static const int8_t kiln__unpack_mask[KILN__CLIP_MAX_QBITS + 1][32] = {
    KILN__MASK(0),  KILN__MASK(1),  KILN__MASK(2),  KILN__MASK(3),  KILN__MASK(4),  KILN__MASK(5),  KILN__MASK(6),
    KILN__MASK(7),  KILN__MASK(8),  KILN__MASK(9),  KILN__MASK(10), KILN__MASK(11), KILN__MASK(12), KILN__MASK(13),
    KILN__MASK(14), KILN__MASK(15), KILN__MASK(16), KILN__MASK(17), KILN__MASK(18), KILN__MASK(19), KILN__MASK(20),
    KILN__MASK(21), KILN__MASK(22), KILN__MASK(23), KILN__MASK(24)};
static const uint32_t kiln__unpack_low[KILN__CLIP_MAX_QBITS + 1] = {
    0x0u,     0x1u,     0x3u,      0x7u,      0xFu,      0x1Fu,     0x3Fu,     0x7Fu,     0xFFu,
    0x1FFu,   0x3FFu,   0x7FFu,    0xFFFu,    0x1FFFu,   0x3FFFu,   0x7FFFu,   0xFFFFu,   0x1FFFFu,
    0x3FFFFu, 0x7FFFFu, 0xFFFFFu,  0x1FFFFFu, 0x3FFFFFu, 0x7FFFFFu, 0xFFFFFFu};
static const int32_t kiln__unpack_shift[KILN__CLIP_MAX_QBITS + 1][8] = {
    KILN__SHIFT(0),  KILN__SHIFT(1),  KILN__SHIFT(2),  KILN__SHIFT(3),  KILN__SHIFT(4),  KILN__SHIFT(5),
    KILN__SHIFT(6),  KILN__SHIFT(7),  KILN__SHIFT(8),  KILN__SHIFT(9),  KILN__SHIFT(10), KILN__SHIFT(11),
    KILN__SHIFT(12), KILN__SHIFT(13), KILN__SHIFT(14), KILN__SHIFT(15), KILN__SHIFT(16), KILN__SHIFT(17),
    KILN__SHIFT(18), KILN__SHIFT(19), KILN__SHIFT(20), KILN__SHIFT(21), KILN__SHIFT(22), KILN__SHIFT(23),
    KILN__SHIFT(24)};

/* Widens the 8 lanes (h is always 0 here) of a `width`-bit track (1..24) to 32-bit integers.
 * Reads up to 28 bytes from src: lossy clips keep KILN__CLIP_SLACK bytes after their last
 * row, so this stays inside the clip for every track of every row. */
KILN__FN kvi kiln__unpack_half(const unsigned char *src, uint32_t width, unsigned h)
{
    (void)h;
    /* One branch-free sequence for every width: the widths of a block's tracks vary from
     * component to component, and a switch on them saves nothing measurable. */
    __m128i lo = _mm_loadu_si128((const __m128i *)(const void *)src);
    __m128i hi = _mm_loadu_si128((const __m128i *)(const void *)(src + KILN__HI(width)));
    __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
    v = _mm256_shuffle_epi8(v, _mm256_loadu_si256((const __m256i *)(const void *)kiln__unpack_mask[width]));
    v = _mm256_srlv_epi32(v, _mm256_loadu_si256((const __m256i *)(const void *)kiln__unpack_shift[width]));
    return _mm256_and_si256(v, _mm256_set1_epi32((int)kiln__unpack_low[width]));
}

#include "anim_sample_simd.h"

#endif /* KILN__SIMD_AVX2 */
