/* Sampling kernels, SSE2 (the x86-64 baseline): two 4-lane vectors per SoA component. */
#include <string.h>

#include "anim_internal.h"

#if KILN__SIMD_SSE2
#define KILN__OPS_SSE2 1
#include "simd_ops.h"

/* Widens lanes [4h, 4h + 4) of `width` bits (1 to 24) to 32-bit integers. SSE2 has
 * no byte shuffle: 12- and 24-bit lanes are extracted in scalar code. */
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
    uint32_t lanes[4];
    for (unsigned l = 0; l < 4; l++) lanes[l] = kiln__clip_lane_bits(src, width, 4 * h + l);
    return _mm_loadu_si128((const __m128i *)(const void *)lanes);
}

#include "anim_sample_simd.h"

#endif /* KILN__SIMD_SSE2 */
