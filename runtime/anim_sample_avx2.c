/* Sampling kernels, AVX2 + FMA: one 8-lane vector per SoA component. Compiled for that target
 * per function (simd.h) and selected at run time by cpuid (simd_dispatch.c). */
#include <string.h>

#include "anim_internal.h"

#if KILN__SIMD_AVX2
#define KILN__OPS_AVX2 1
#include "simd_ops.h"

/* Widens the 8 lanes (h is always 0 here) of `width` bits (8, 12, 16, 24) to 32-bit integers.
 * 12- and 24-bit tracks are copied into a padded buffer first: their 12/24 bytes may end the
 * blob, and the vector load reads 16/28. */
KILN__FN kvi kiln__unpack_half(const unsigned char *src, uint32_t width, unsigned h)
{
    (void)h;
    switch (width) {
    case 8: return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)src));
    case 16: return _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)src));
    case 12: {
        unsigned char buf[16] = {0};
        memcpy(buf, src, 12);
        __m256i v = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)buf));
        /* lane i: the 16-bit word at byte 3i/2, shifted right by 4 for odd lanes */
        const __m256i idx = _mm256_setr_epi8(0, 1, -1, -1, 1, 2, -1, -1, 3, 4, -1, -1, 4, 5, -1, -1, 6, 7, -1, -1, 7, 8,
                                             -1, -1, 9, 10, -1, -1, 10, 11, -1, -1);
        v = _mm256_srlv_epi32(_mm256_shuffle_epi8(v, idx), _mm256_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4));
        return _mm256_and_si256(v, _mm256_set1_epi32(0xFFF));
    }
    default: { /* 24 */
        unsigned char buf[32] = {0};
        memcpy(buf, src, 24);
        __m128i lo = _mm_loadu_si128((const __m128i *)(const void *)buf);
        __m128i hi = _mm_loadu_si128((const __m128i *)(const void *)(buf + 12));
        __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
        const __m256i idx = _mm256_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1, 0, 1, 2, -1, 3, 4, 5,
                                             -1, 6, 7, 8, -1, 9, 10, 11, -1);
        return _mm256_shuffle_epi8(v, idx);
    }
    }
}

#include "anim_sample_simd.h"

#endif /* KILN__SIMD_AVX2 */
