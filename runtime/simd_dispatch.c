/* SIMD path selection for the animation kernels: one table of function pointers per path,
 * the best one picked by cpuid on first use (AVX-512, then AVX2, SSE2, scalar).
 *
 * The AVX-512 path has no animation kernels of its own: its table holds the AVX2 ones and only
 * reports KILN_SIMD_AVX512, which the modules with 16-lane kernels (skinning) switch on; every
 * other module runs its AVX2 kernels on that path.
 *
 * The current table is an atomic pointer so that concurrent first calls from several threads
 * are race-free (each computes the same answer); kiln_simd_force stores a new one, which is
 * why forcing during evaluation on another thread is unsupported (documented in anim.h).
 */
#include <stdatomic.h>
#include <stddef.h>

#include "anim_internal.h"

#define KILN__TABLE(path_, sfx)                                                                   \
    {                                                                                            \
        path_, kiln__decode_block_##sfx, kiln__sample_blocks_##sfx, kiln__blend_##sfx, kiln__add_##sfx, \
            kiln__local_to_model_##sfx, kiln__skin_##sfx                                        \
    }

static const kiln__kernels kiln__kernels_scalar = KILN__TABLE(KILN_SIMD_SCALAR, scalar);
#if KILN__SIMD_SSE2
static const kiln__kernels kiln__kernels_sse2 = KILN__TABLE(KILN_SIMD_SSE2, sse2);
#endif
#if KILN__SIMD_AVX2
static const kiln__kernels kiln__kernels_avx2 = KILN__TABLE(KILN_SIMD_AVX2, avx2);
#endif
#if KILN__SIMD_AVX512
static const kiln__kernels kiln__kernels_avx512 = KILN__TABLE(KILN_SIMD_AVX512, avx2);
#endif

static _Atomic(const kiln__kernels *) kiln__current;

#if KILN__SIMD_AVX2
static int kiln__cpu_has_avx2(void)
{
    /* libgcc/compiler-rt also check that the OS saves the YMM state (XGETBV). */
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

#if KILN__SIMD_AVX512
static int kiln__cpu_has_avx512(void)
{
    /* The path runs AVX2 kernels too, hence AVX2+FMA; libgcc/compiler-rt also check that the
     * OS saves the ZMM and opmask state. */
    return kiln__cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
}
#endif

const kiln__kernels *kiln__kernels_for(kiln_simd path)
{
    switch (path) {
    case KILN_SIMD_SCALAR: return &kiln__kernels_scalar;
#if KILN__SIMD_SSE2
    case KILN_SIMD_SSE2: return &kiln__kernels_sse2;
#endif
#if KILN__SIMD_AVX2
    case KILN_SIMD_AVX2: return kiln__cpu_has_avx2() ? &kiln__kernels_avx2 : NULL;
#endif
#if KILN__SIMD_AVX512
    case KILN_SIMD_AVX512: return kiln__cpu_has_avx512() ? &kiln__kernels_avx512 : NULL;
#endif
    default: return NULL;
    }
}

static const kiln__kernels *kiln__best(void)
{
    const kiln__kernels *k = kiln__kernels_for(KILN_SIMD_AVX512);
    if (!k) k = kiln__kernels_for(KILN_SIMD_AVX2);
    if (!k) k = kiln__kernels_for(KILN_SIMD_SSE2);
    return k ? k : &kiln__kernels_scalar;
}

const kiln__kernels *kiln__kernels_get(void)
{
    const kiln__kernels *k = atomic_load_explicit(&kiln__current, memory_order_acquire);
    if (KILN__UNLIKELY(!k)) {
        k = kiln__best();
        atomic_store_explicit(&kiln__current, k, memory_order_release);
    }
    return k;
}

kiln_simd kiln_simd_force(kiln_simd simd)
{
    const kiln__kernels *k = simd == KILN_SIMD_AUTO ? NULL : kiln__kernels_for(simd);
    if (!k) k = kiln__best();
    atomic_store_explicit(&kiln__current, k, memory_order_release);
    return k->path;
}

kiln_simd kiln_simd_active(void) { return kiln__kernels_get()->path; }

const char *kiln_simd_name(kiln_simd simd)
{
    switch (simd) {
    case KILN_SIMD_AUTO: return "auto";
    case KILN_SIMD_SCALAR: return "scalar";
    case KILN_SIMD_SSE2: return "sse2";
    case KILN_SIMD_AVX2: return "avx2";
    case KILN_SIMD_AVX512: return "avx512";
    default: return "unknown";
    }
}
