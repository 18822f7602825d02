/* Payload scanners for blob verification: "every float is finite" and "every index is below
 * its bound", over the bulk of a blob (vertex streams), so they run at memory speed.
 *
 * A float is NaN or infinite exactly when its exponent bits are all ones, so with the sign
 * cleared its bits compare >= 0x7F800000 as integers: the scan is an AND and an integer max
 * (or compare) per vector, no floating-point unit and no special cases for denormals.
 * Paths: portable scalar, SSE2 (x86-64 baseline) and AVX2, one kiln__scan_kernels each; the
 * kernel table (simd_table.h) says which one runs, so kiln_simd_force governs them. Loads are
 * unaligned vector loads because element strides (12 bytes for positions) do not keep chunk
 * starts 16- or 32-byte aligned.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "blob_internal.h"
#include "simd_table.h"

#define KILN__EXP_MASK 0x7F800000u
#define KILN__ABS_MASK 0x7FFFFFFFu

/* ---- portable -------------------------------------------------------------------------- */
static int kiln__finite_scalar(const unsigned char *p, size_t n)
{
    uint32_t worst = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, p + 4 * i, 4);
        b &= KILN__ABS_MASK;
        worst = b > worst ? b : worst;
    }
    return worst < KILN__EXP_MASK;
}

static int kiln__below_u32_scalar(const unsigned char *p, size_t n, uint32_t bound)
{
    uint32_t worst = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t x;
        memcpy(&x, p + 4 * i, 4);
        worst = x > worst ? x : worst;
    }
    return n == 0 || worst < bound;
}

static int kiln__below_u16_scalar(const unsigned char *p, size_t n, uint32_t bound)
{
    uint16_t worst = 0;
    for (size_t i = 0; i < n; i++) {
        uint16_t x;
        memcpy(&x, p + 2 * i, 2);
        worst = x > worst ? x : worst;
    }
    return n == 0 || worst < bound;
}

#if KILN__X86_DISPATCH
#include <immintrin.h>

/* ---- SSE2 ------------------------------------------------------------------------------ */
static int kiln__finite_sse2(const unsigned char *p, size_t n)
{
    const __m128i abs = _mm_set1_epi32((int)KILN__ABS_MASK);
    const __m128i lim = _mm_set1_epi32((int)(KILN__EXP_MASK - 1u));
    __m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const unsigned char *q = p + 4 * i;
        a0 = _mm_or_si128(a0, _mm_cmpgt_epi32(_mm_and_si128(_mm_loadu_si128((const __m128i *)q), abs), lim));
        a1 = _mm_or_si128(a1, _mm_cmpgt_epi32(_mm_and_si128(_mm_loadu_si128((const __m128i *)(q + 16)), abs), lim));
        a2 = _mm_or_si128(a2, _mm_cmpgt_epi32(_mm_and_si128(_mm_loadu_si128((const __m128i *)(q + 32)), abs), lim));
        a3 = _mm_or_si128(a3, _mm_cmpgt_epi32(_mm_and_si128(_mm_loadu_si128((const __m128i *)(q + 48)), abs), lim));
    }
    for (; i + 4 <= n; i += 4)
        a0 = _mm_or_si128(a0, _mm_cmpgt_epi32(_mm_and_si128(_mm_loadu_si128((const __m128i *)(p + 4 * i)), abs), lim));
    __m128i any = _mm_or_si128(_mm_or_si128(a0, a1), _mm_or_si128(a2, a3));
    return _mm_movemask_epi8(any) == 0 && kiln__finite_scalar(p + 4 * i, n - i);
}

/* Unsigned x >= bound as a signed compare after flipping the sign bits. */
static int kiln__below_u32_sse2(const unsigned char *p, size_t n, uint32_t bound)
{
    if (bound == 0) return n == 0;
    const __m128i bias = _mm_set1_epi32((int)0x80000000u);
    const __m128i lim = _mm_set1_epi32((int)((bound - 1u) ^ 0x80000000u));
    __m128i a0 = _mm_setzero_si128(), a1 = a0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const unsigned char *q = p + 4 * i;
        a0 = _mm_or_si128(a0, _mm_cmpgt_epi32(_mm_xor_si128(_mm_loadu_si128((const __m128i *)q), bias), lim));
        a1 = _mm_or_si128(a1, _mm_cmpgt_epi32(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(q + 16)), bias), lim));
    }
    return _mm_movemask_epi8(_mm_or_si128(a0, a1)) == 0 && kiln__below_u32_scalar(p + 4 * i, n - i, bound);
}

/* Saturating x - (bound - 1) is non-zero exactly when x >= bound. */
static int kiln__below_u16_sse2(const unsigned char *p, size_t n, uint32_t bound)
{
    if (bound == 0) return n == 0;
    if (bound > 0xFFFFu) return 1;
    const __m128i lim = _mm_set1_epi16((short)(uint16_t)(bound - 1u));
    __m128i a0 = _mm_setzero_si128(), a1 = a0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const unsigned char *q = p + 2 * i;
        a0 = _mm_or_si128(a0, _mm_subs_epu16(_mm_loadu_si128((const __m128i *)q), lim));
        a1 = _mm_or_si128(a1, _mm_subs_epu16(_mm_loadu_si128((const __m128i *)(q + 16)), lim));
    }
    __m128i any = _mm_cmpeq_epi8(_mm_or_si128(a0, a1), _mm_setzero_si128());
    return _mm_movemask_epi8(any) == 0xFFFF && kiln__below_u16_scalar(p + 2 * i, n - i, bound);
}

/* ---- AVX2 ------------------------------------------------------------------------------ */
/* With the sign cleared, every value is a non-negative int32, so a signed max finds the
 * largest exponent: one AND and one MAX per 32 bytes. */
__attribute__((target("avx2"))) static int kiln__finite_avx2(const unsigned char *p, size_t n)
{
    const __m256i abs = _mm256_set1_epi32((int)KILN__ABS_MASK);
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const unsigned char *q = p + 4 * i;
        a0 = _mm256_max_epi32(a0, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)q), abs));
        a1 = _mm256_max_epi32(a1, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(q + 32)), abs));
        a2 = _mm256_max_epi32(a2, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(q + 64)), abs));
        a3 = _mm256_max_epi32(a3, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(q + 96)), abs));
    }
    for (; i + 8 <= n; i += 8)
        a0 = _mm256_max_epi32(a0, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(p + 4 * i)), abs));
    __m256i m = _mm256_max_epi32(_mm256_max_epi32(a0, a1), _mm256_max_epi32(a2, a3));
    __m256i bad = _mm256_cmpgt_epi32(m, _mm256_set1_epi32((int)(KILN__EXP_MASK - 1u)));
    return _mm256_movemask_epi8(bad) == 0 && kiln__finite_scalar(p + 4 * i, n - i);
}

__attribute__((target("avx2"))) static int kiln__below_u32_avx2(const unsigned char *p, size_t n, uint32_t bound)
{
    if (bound == 0) return n == 0;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const unsigned char *q = p + 4 * i;
        a0 = _mm256_max_epu32(a0, _mm256_loadu_si256((const __m256i *)q));
        a1 = _mm256_max_epu32(a1, _mm256_loadu_si256((const __m256i *)(q + 32)));
        a2 = _mm256_max_epu32(a2, _mm256_loadu_si256((const __m256i *)(q + 64)));
        a3 = _mm256_max_epu32(a3, _mm256_loadu_si256((const __m256i *)(q + 96)));
    }
    __m256i m = _mm256_max_epu32(_mm256_max_epu32(a0, a1), _mm256_max_epu32(a2, a3));
    /* m >= bound  <=>  max(m, bound - 1) != bound - 1 */
    __m256i lim = _mm256_set1_epi32((int)(bound - 1u));
    __m256i ok = _mm256_cmpeq_epi32(_mm256_max_epu32(m, lim), lim);
    return _mm256_movemask_epi8(ok) == -1 && kiln__below_u32_scalar(p + 4 * i, n - i, bound);
}

__attribute__((target("avx2"))) static int kiln__below_u16_avx2(const unsigned char *p, size_t n, uint32_t bound)
{
    if (bound == 0) return n == 0;
    if (bound > 0xFFFFu) return 1;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const unsigned char *q = p + 2 * i;
        a0 = _mm256_max_epu16(a0, _mm256_loadu_si256((const __m256i *)q));
        a1 = _mm256_max_epu16(a1, _mm256_loadu_si256((const __m256i *)(q + 32)));
    }
    __m256i lim = _mm256_set1_epi16((short)(uint16_t)(bound - 1u));
    __m256i ok = _mm256_cmpeq_epi16(_mm256_max_epu16(_mm256_max_epu16(a0, a1), lim), lim);
    return _mm256_movemask_epi8(ok) == -1 && kiln__below_u16_scalar(p + 2 * i, n - i, bound);
}

#endif /* KILN__X86_DISPATCH */

const kiln__scan_kernels kiln__scan_scalar = {kiln__finite_scalar, kiln__below_u32_scalar, kiln__below_u16_scalar};
#if KILN__X86_DISPATCH
const kiln__scan_kernels kiln__scan_sse2 = {kiln__finite_sse2, kiln__below_u32_sse2, kiln__below_u16_sse2};
const kiln__scan_kernels kiln__scan_avx2 = {kiln__finite_avx2, kiln__below_u32_avx2, kiln__below_u16_avx2};
#endif

int kiln__scan_finite_f32(const void *p, size_t n)
{
    return kiln__simd_get()->scan->finite((const unsigned char *)p, n);
}

int kiln__scan_below_u32(const void *p, size_t n, uint32_t bound)
{
    return kiln__simd_get()->scan->below_u32((const unsigned char *)p, n, bound);
}

int kiln__scan_below_u16(const void *p, size_t n, uint32_t bound)
{
    return kiln__simd_get()->scan->below_u16((const unsigned char *)p, n, bound);
}

int kiln__scan_on_path(int path, int kernel, const void *p, size_t n, uint32_t bound)
{
    static const kiln_simd paths[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2};
    const kiln__simd_table *t = path >= 0 && path < 3 ? kiln__simd_for(paths[path]) : NULL;
    if (!t) return -1;
    const unsigned char *b = (const unsigned char *)p;
    return kernel == 0 ? t->scan->finite(b, n) : kernel == 1 ? t->scan->below_u32(b, n, bound) : t->scan->below_u16(b, n, bound);
}

const char *kiln__scan_path(void)
{
    const kiln__scan_kernels *s = kiln__simd_get()->scan;
#if KILN__X86_DISPATCH
    if (s == &kiln__scan_avx2) return "avx2";
    if (s == &kiln__scan_sse2) return "sse2";
#endif
    (void)s;
    return "scalar";
}
