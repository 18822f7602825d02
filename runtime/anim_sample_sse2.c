/* Sampling kernels, SSE2 (the x86-64 baseline): two 4-lane vectors per SoA component. */
#include <string.h>

#include "anim_internal.h"

#if KILN__SIMD_SSE2
#define KILN__OPS_SSE2 1
#include "simd_ops.h"

/* Lane `lane` of a `width`-bit track (1 to 24), from the little-endian 32-bit word at the
 * lane's first byte: it starts at most 7 bits in, so one word holds it. Reads at most 4 bytes
 * from byte 7w/8, inside the track or the KILN__CLIP_SLACK bytes after it. */
static inline uint32_t kiln__lane_word(const unsigned char *src, uint32_t width, unsigned lane)
{
    uint32_t bit = lane * width, v;
    memcpy(&v, src + (bit >> 3), sizeof v);
    return (v >> (bit & 7u)) & ((1u << width) - 1u);
}

/* Widens lanes [4h, 4h + 4) of `width` bits (1 to 24) to 32-bit integers. SSE2 has
 * no byte shuffle nor per-lane shifts: widths other than 8 and 16 are extracted in scalar
 * code, one 32-bit load per lane. */
KILN__FN kvi kiln__unpack_half(const unsigned char *src, uint32_t width, unsigned h)
{
    const __m128i zero = _mm_setzero_si128();
    if (width == 8) {
        __m128i v = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(const void *)src), zero);
        return h ? _mm_unpackhi_epi16(v, zero) : _mm_unpacklo_epi16(v, zero);
    }
    if (width == 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)src);
        return h ? _mm_unpackhi_epi16(v, zero) : _mm_unpacklo_epi16(v, zero);
    }
    unsigned l = 4 * h;
    return _mm_setr_epi32((int)kiln__lane_word(src, width, l), (int)kiln__lane_word(src, width, l + 1),
                          (int)kiln__lane_word(src, width, l + 2), (int)kiln__lane_word(src, width, l + 3));
}

#include "anim_sample_simd.h"

#endif /* KILN__SIMD_SSE2 */
