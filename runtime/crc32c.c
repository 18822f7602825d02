/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, init and final XOR 0xFFFFFFFF).
 *
 * Two implementations, chosen at run time:
 * - portable slice-by-8 tables (every platform, and KILN_FORCE_SCALAR builds);
 * - the SSE4.2 crc32 instruction. It has a 3-cycle latency but a throughput of one per cycle,
 *   so large inputs are cut into three adjacent lanes that are summed independently and then
 *   joined: the CRC register is linear over GF(2), so crc(A|B) = shift(crc(A), |B|) ^ crc0(B),
 *   where shift multiplies by x^(8|B|) mod P. One PCLMULQDQ plus one crc32 does that shift.
 *
 * The library is built for baseline x86-64; the SSE4.2/PCLMUL functions carry target
 * attributes and run only on the kernel table's AVX2 and AVX-512 rows (simd_table.h), whose
 * CPU check covers SSE4.2 and PCLMULQDQ, so the same binary runs everywhere and
 * kiln_simd_force governs the CRC as it does every other kernel.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "blob_internal.h"
#include "kiln/blob.h"
#include "simd_table.h"

#define KILN__CRC32C_POLY 0x82F63B78u

/* ---- portable: slice-by-8 ------------------------------------------------------------- */

/* table[k][b] = CRC register after byte b followed by k zero bytes. Built on first use; a
 * thread that finds it being built by another uses the bitwise loop for that call instead of
 * waiting, so there is no lock and no data race. */
static uint32_t kiln__crc_table[8][256];
static atomic_int kiln__crc_table_state; /* 0 empty, 1 building, 2 ready */

static uint32_t kiln__crc_bitwise(uint32_t crc, const unsigned char *p, size_t n)
{
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (KILN__CRC32C_POLY & (0u - (crc & 1u)));
    }
    return crc;
}

static int kiln__crc_table_ready(void)
{
    int state = atomic_load_explicit(&kiln__crc_table_state, memory_order_acquire);
    if (state == 2) return 1;
    int expected = 0;
    if (state != 0 || !atomic_compare_exchange_strong(&kiln__crc_table_state, &expected, 1)) return 0;
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (KILN__CRC32C_POLY & (0u - (c & 1u)));
        kiln__crc_table[0][b] = c;
    }
    for (int k = 1; k < 8; k++)
        for (uint32_t b = 0; b < 256; b++) {
            uint32_t c = kiln__crc_table[k - 1][b];
            kiln__crc_table[k][b] = (c >> 8) ^ kiln__crc_table[0][c & 0xFFu];
        }
    atomic_store_explicit(&kiln__crc_table_state, 2, memory_order_release);
    return 1;
}

static uint32_t kiln__load32le(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* Raw register update (no pre/post inversion). */
static uint32_t kiln__crc_sw_raw(uint32_t crc, const unsigned char *p, size_t n)
{
    if (!kiln__crc_table_ready()) return kiln__crc_bitwise(crc, p, n);
    const uint32_t (*t)[256] = (const uint32_t (*)[256])kiln__crc_table;
    while (n && ((uintptr_t)p & 7u)) {
        crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFFu];
        n--;
    }
    while (n >= 8) {
        uint32_t lo = crc ^ kiln__load32le(p), hi = kiln__load32le(p + 4);
        crc = t[7][lo & 0xFFu] ^ t[6][(lo >> 8) & 0xFFu] ^ t[5][(lo >> 16) & 0xFFu] ^ t[4][lo >> 24] ^
              t[3][hi & 0xFFu] ^ t[2][(hi >> 8) & 0xFFu] ^ t[1][(hi >> 16) & 0xFFu] ^ t[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFFu];
    return crc;
}

uint32_t kiln__crc32c_sw(uint32_t crc, const void *data, size_t size)
{
    if (size == 0) return crc;
    return ~kiln__crc_sw_raw(~crc, (const unsigned char *)data, size);
}

/* ---- x86: SSE4.2 crc32, three lanes joined with PCLMULQDQ ------------------------------- */
#if KILN__X86_DISPATCH
#include <immintrin.h>

/* Lane lengths in bytes. A long round covers 3 * 8 KiB (the fused verifier feeds 24 KiB
 * chunks, exactly one round); short rounds mop up what is left above 768 bytes. */
#define KILN__CRC_LONG  8192u
#define KILN__CRC_SHORT 256u
/* x^(8*L - 33) mod P, bit-reflected: clmul(crc, k) is crc * x^(8L-33) (times x from the
 * reflected product), and crc32(0, v) multiplies by x^32 and reduces, giving crc * x^(8L). */
#define KILN__CRC_K_LONG  0x54A86326u
#define KILN__CRC_K_SHORT 0xB9E02B86u

static uint64_t kiln__load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8); /* little-endian: x86 only */
    return v;
}

__attribute__((target("sse4.2"))) static uint32_t kiln__crc_hw1(uint32_t crc, const unsigned char *p, size_t n)
{
    while (n && ((uintptr_t)p & 7u)) {
        crc = _mm_crc32_u8(crc, *p++);
        n--;
    }
    uint64_t c = crc;
    while (n >= 8) {
        c = _mm_crc32_u64(c, kiln__load64(p));
        p += 8;
        n -= 8;
    }
    crc = (uint32_t)c;
    while (n--) crc = _mm_crc32_u8(crc, *p++);
    return crc;
}

__attribute__((target("sse4.2,pclmul"))) static inline uint32_t kiln__crc_shift(uint32_t crc, uint32_t k)
{
    __m128i prod = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)crc), _mm_cvtsi32_si128((int)k), 0x00);
    return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(prod));
}

/* One round: lanes [0,L) [L,2L) [2L,3L) of p, joined. */
#define KILN__CRC_ROUND(L, K)                                                                  \
    do {                                                                                       \
        uint64_t c0 = crc, c1 = 0, c2 = 0;                                                     \
        for (size_t i = 0; i < (L); i += 8) {                                                  \
            c0 = _mm_crc32_u64(c0, kiln__load64(p + i));                                       \
            c1 = _mm_crc32_u64(c1, kiln__load64(p + (L) + i));                                 \
            c2 = _mm_crc32_u64(c2, kiln__load64(p + 2 * (L) + i));                             \
        }                                                                                      \
        crc = kiln__crc_shift((uint32_t)c0, (K)) ^ (uint32_t)c1;                               \
        crc = kiln__crc_shift(crc, (K)) ^ (uint32_t)c2;                                        \
        p += 3 * (L);                                                                          \
        n -= 3 * (L);                                                                          \
    } while (0)

__attribute__((target("sse4.2,pclmul"))) static uint32_t kiln__crc_hw3(uint32_t crc, const unsigned char *p, size_t n)
{
    while (n && ((uintptr_t)p & 7u)) {
        crc = _mm_crc32_u8(crc, *p++);
        n--;
    }
    while (n >= 3 * KILN__CRC_LONG) KILN__CRC_ROUND(KILN__CRC_LONG, KILN__CRC_K_LONG);
    while (n >= 3 * KILN__CRC_SHORT) KILN__CRC_ROUND(KILN__CRC_SHORT, KILN__CRC_K_SHORT);
    return kiln__crc_hw1(crc, p, n);
}

uint32_t kiln__crc32c_sse42(uint32_t crc, const void *data, size_t size)
{
    if (size == 0) return crc;
    return ~kiln__crc_hw3(~crc, (const unsigned char *)data, size);
}
#endif /* KILN__X86_DISPATCH */

uint32_t kiln__crc32c_hw(uint32_t crc, const void *data, size_t size) { return kiln__simd_get()->crc32c(crc, data, size); }

int kiln__crc32c_hw_available(void) { return kiln__simd_get()->crc32c != kiln__crc32c_sw; }

uint32_t kiln_crc32c(uint32_t crc, const void *data, size_t size)
{
    if (!data) return crc;
    return kiln__crc32c_hw(crc, data, size);
}
