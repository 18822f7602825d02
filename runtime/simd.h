/* runtime/simd.h - which SIMD paths this build compiles, and how they are marked.
 *
 * Private; not installed. The animation kernels come in three flavours:
 *   scalar  portable C, always built: the reference the others are tested against;
 *   SSE2    x86-64 baseline, built on every x86-64 compiler we support;
 *   AVX2    AVX2 + FMA, built with a per-function target attribute (no global -mavx2), chosen
 *           at run time by cpuid (simd_dispatch.c), so one binary runs on every x86-64 CPU.
 *   AVX512  the same for AVX-512 F/VL/DQ/BW: its own kernels where 16 lanes pay, the AVX2 ones
 *           elsewhere.
 * Every module's kernels of every path sit in one table (simd_table.h), one row per path,
 * chosen once; kiln_simd_force picks the row for all of them.
 * KILN_FORCE_SCALAR=1 (CMake option of the same name) builds the scalar path alone, for
 * portability testing and for targets without intrinsics.
 */
#ifndef KILN_SIMD_H
#define KILN_SIMD_H

#if !defined(KILN_FORCE_SCALAR) && (defined(__x86_64__) || defined(_M_X64))
#define KILN__SIMD_SSE2 1
#else
#define KILN__SIMD_SSE2 0
#endif

/* AVX2 needs the target attribute and __builtin_cpu_supports: GCC and Clang. */
#if KILN__SIMD_SSE2 && (defined(__GNUC__) || defined(__clang__))
#define KILN__SIMD_AVX2 1
#define KILN__TARGET_AVX2 __attribute__((target("avx2,fma")))
/* For code that must give the scalar path's bits: GCC's vectoriser fuses a product into an
 * alternating add/subtract (vfmaddsub) once FMA is enabled, whatever the contraction mode. */
#define KILN__TARGET_AVX2_NOFMA __attribute__((target("avx2")))
#else
#define KILN__SIMD_AVX2 0
#define KILN__TARGET_AVX2
#define KILN__TARGET_AVX2_NOFMA
#endif

/* AVX-512 (F, VL, DQ, BW; a superset of the AVX2 target): only the skinning kernels have a
 * 16-lane version; the other modules run their AVX2 kernels on this path. */
#if KILN__SIMD_AVX2
#define KILN__SIMD_AVX512 1
#define KILN__TARGET_AVX512 __attribute__((target("avx2,fma,avx512f,avx512vl,avx512dq,avx512bw")))
#else
#define KILN__SIMD_AVX512 0
#define KILN__TARGET_AVX512
#endif

#if defined(__GNUC__) || defined(__clang__)
#define KILN__LIKELY(x) __builtin_expect(!!(x), 1)
#define KILN__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define KILN__LIKELY(x) (x)
#define KILN__UNLIKELY(x) (x)
#endif

#endif /* KILN_SIMD_H */
