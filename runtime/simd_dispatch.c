/* The kernel table (simd_table.h): one row per SIMD path holding every module's kernels, the
 * best row picked by cpuid on first use (AVX-512, then AVX2, SSE2, scalar), replaced by
 * kiln_simd_force. Adding an instruction set is one row here and its CPU check.
 *
 * Rows reuse a narrower path's kernels where a module has none of their own: the AVX-512 row
 * holds the AVX2 sampling, pose, blend-shape, instance, rig and scanner kernels next to its own
 * mesh-skinning ones.
 *
 * The current row is an atomic pointer so that concurrent first calls from several threads are
 * race-free (each computes the same answer); kiln_simd_force stores a new one, which is why
 * forcing during evaluation on another thread is unsupported (documented in anim.h).
 */
#include <stdatomic.h>
#include <stddef.h>

#include "simd_table.h"

/* The animation kernels of one path: sampling (decode, sample) from `s`, pose math from `p`. */
#define KILN__ANIM(path_, s, p, blend2)                                                                \
    {                                                                                                 \
        path_, kiln__decode_block_##s, kiln__sample_blocks_##s, kiln__blend_##p, blend2, kiln__add_##p, \
            kiln__local_to_model_##p, kiln__skin_##p                                                  \
    }

/* a path's constraint steps, by kind (kiln__rig_kernels.constraint_step) */
#define KILN__CONSTRAINT_STEPS(sfx) \
    {kiln__constraint_point##sfx, kiln__constraint_orient##sfx, kiln__constraint_scale##sfx}

static const kiln__simd_table kiln__row_scalar = {
    KILN_SIMD_SCALAR,
    "scalar",
    KILN__ANIM(KILN_SIMD_SCALAR, scalar, scalar, NULL),
    kiln__skin_lbs_scalar,
    kiln__skin_dqs_scalar,
    {kiln__bs_base_scalar, kiln__bs_add_scalar},
    kiln__instance_world_scalar,
    &kiln__scan_scalar,
    kiln__crc32c_sw,
    {NULL, kiln__ik_two_bone_solve, KILN__CONSTRAINT_STEPS(), kiln__constraint_targets}, /* no batches */
};

#if KILN__SIMD_SSE2 && KILN__X86_DISPATCH
#define KILN__SCAN_SSE2 kiln__scan_sse2
#define KILN__SCAN_AVX2 kiln__scan_avx2
#define KILN__CRC_SSE42 kiln__crc32c_sse42
#else /* intrinsics without the GCC/Clang dispatch helpers: portable scanners and CRC */
#define KILN__SCAN_SSE2 kiln__scan_scalar
#define KILN__SCAN_AVX2 kiln__scan_scalar
#define KILN__CRC_SSE42 kiln__crc32c_sw
#endif

#if KILN__SIMD_SSE2
static const kiln__simd_table kiln__row_sse2 = {
    KILN_SIMD_SSE2,
    "sse2",
    KILN__ANIM(KILN_SIMD_SSE2, sse2, sse2, kiln__blend_flat2_sse2),
    kiln__skin_lbs_sse2,
    kiln__skin_dqs_sse2,
    {kiln__bs_base_sse2, kiln__bs_add_sse2},
    kiln__instance_world_sse2,
    &KILN__SCAN_SSE2,
    kiln__crc32c_sw, /* SSE2 has no crc32 instruction */
    {kiln__ik3_batch_sse2, kiln__ik_two_bone_solve, KILN__CONSTRAINT_STEPS(), kiln__constraint_targets},
};
#endif

#if KILN__SIMD_AVX2
/* the rig kernels of the AVX2 and AVX-512 rows */
#define KILN__RIG_AVX2 \
    {kiln__ik3_batch_avx2, kiln__ik_two_bone_solve_avx2, KILN__CONSTRAINT_STEPS(_avx2), kiln__constraint_targets_avx2}

static const kiln__simd_table kiln__row_avx2 = {
    KILN_SIMD_AVX2,
    "avx2",
    KILN__ANIM(KILN_SIMD_AVX2, avx2, avx2, kiln__blend_flat2_avx2),
    kiln__skin_lbs_avx2,
    kiln__skin_dqs_avx2,
    {kiln__bs_base_avx2, kiln__bs_add_avx2},
    kiln__instance_world_avx2,
    &KILN__SCAN_AVX2,
    KILN__CRC_SSE42,
    KILN__RIG_AVX2,
};
#endif

#if KILN__SIMD_AVX512
static const kiln__simd_table kiln__row_avx512 = {
    KILN_SIMD_AVX512,
    "avx512",
    {KILN_SIMD_AVX512, kiln__decode_block_avx2, kiln__sample_blocks_avx2, kiln__blend_avx2, kiln__blend_flat2_avx2, kiln__add_avx2,
     kiln__local_to_model_avx2, kiln__skin_avx2},
    kiln__skin_lbs_avx512,
    kiln__skin_dqs_avx512,
    {kiln__bs_base_avx2, kiln__bs_add_avx2},
    kiln__instance_world_avx2,
    &KILN__SCAN_AVX2,
    KILN__CRC_SSE42,
    KILN__RIG_AVX2,
};
#endif

_Atomic(const kiln__simd_table *) kiln__simd_current;

#if KILN__SIMD_AVX2
static int kiln__cpu_has_avx2(void)
{
    /* libgcc/compiler-rt also check that the OS saves the YMM state (XGETBV). SSE4.2 and
     * PCLMULQDQ (the CRC) come with every AVX2 CPU; they are checked all the same. */
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("sse4.2") &&
           __builtin_cpu_supports("pclmul");
}
#endif

#if KILN__SIMD_AVX512
static int kiln__cpu_has_avx512(void)
{
    /* The row runs AVX2 kernels too, hence the AVX2 row's features; libgcc/compiler-rt also
     * check that the OS saves the ZMM and opmask state. */
    return kiln__cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
}
#endif

const kiln__simd_table *kiln__simd_for(kiln_simd path)
{
    switch (path) {
    case KILN_SIMD_SCALAR: return &kiln__row_scalar;
#if KILN__SIMD_SSE2
    case KILN_SIMD_SSE2: return &kiln__row_sse2;
#endif
#if KILN__SIMD_AVX2
    case KILN_SIMD_AVX2: return kiln__cpu_has_avx2() ? &kiln__row_avx2 : NULL;
#endif
#if KILN__SIMD_AVX512
    case KILN_SIMD_AVX512: return kiln__cpu_has_avx512() ? &kiln__row_avx512 : NULL;
#endif
    default: return NULL;
    }
}

static const kiln__simd_table *kiln__best(void)
{
    const kiln__simd_table *t = kiln__simd_for(KILN_SIMD_AVX512);
    if (!t) t = kiln__simd_for(KILN_SIMD_AVX2);
    if (!t) t = kiln__simd_for(KILN_SIMD_SSE2);
    return t ? t : &kiln__row_scalar;
}

const kiln__simd_table *kiln__simd_first(void)
{
    const kiln__simd_table *t = kiln__best();
    atomic_store_explicit(&kiln__simd_current, t, memory_order_release);
    return t;
}

const kiln__kernels *kiln__kernels_for(kiln_simd path)
{
    const kiln__simd_table *t = kiln__simd_for(path);
    return t ? &t->anim : NULL;
}

kiln_simd kiln_simd_force(kiln_simd simd)
{
    const kiln__simd_table *t = simd == KILN_SIMD_AUTO ? NULL : kiln__simd_for(simd);
    if (!t) t = kiln__best();
    atomic_store_explicit(&kiln__simd_current, t, memory_order_release);
    return t->path;
}

kiln_simd kiln_simd_active(void) { return kiln__simd_get()->path; }

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
