/* runtime/skin_internal.h - the skinning job the entry point (skin.c) prepares and the
 * per-path kernels (skin_scalar.c, skin_sse2.c, skin_avx2.c) execute. Private.
 */
#ifndef KILN_SKIN_INTERNAL_H
#define KILN_SKIN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kiln/skin.h"
#include "simd.h"

#define KILN__SKIN_MAX_INFLUENCES 8u

/* One vertex attribute stream, as the kernels read it. */
typedef struct kiln__skin_in {
    const unsigned char *data;   /* the element of the range's first vertex */
    uint32_t             stride; /* bytes between elements */
    uint32_t             format; /* KILN_FORMAT_F32x3 (also F32x4: xyz are read), UNORM16x4, OCT16x2 */
    float                offset[3]; /* UNORM16x4: p = offset + scale · q */
    float                scale[3];  /* decode_scale / 65535 */
} kiln__skin_in;

/* One output: element k of the range at data + k · stride bytes. */
typedef struct kiln__skin_out {
    float   *data;   /* NULL: not wanted */
    uint32_t stride; /* bytes, >= 12, a multiple of 4 */
} kiln__skin_out;

typedef struct kiln__skin_job {
    uint32_t count;          /* vertices in the range */
    uint32_t influences;     /* 0..8; 0: every vertex takes the root */
    uint32_t max_joint;      /* joints are clamped to it (bone_count - 1) */
    uint32_t stretched;      /* DQS: some bone or the root has a stretch (apply S) */
    kiln__skin_in pos, nrm, tan; /* nrm/tan data NULL when not wanted */
    const unsigned char *joints;  /* U16xN, the range's first vertex */
    uint32_t joint_stride;
    const unsigned char *weights; /* F32xN */
    uint32_t weight_stride;
    const float *matrices;                 /* LBS: 16 floats per bone */
    const kiln_skin_dual_quat *dual_quats; /* DQS */
    const float *root;                     /* LBS: 16 floats for unweighted vertices */
    const kiln_skin_dual_quat *root_dq;    /* DQS: the same as a dual quaternion */
    kiln__skin_out out_pos, out_nrm, out_tan;
} kiln__skin_job;

typedef void (*kiln__skin_fn)(const kiln__skin_job *job);

void kiln__skin_lbs_scalar(const kiln__skin_job *job);
void kiln__skin_dqs_scalar(const kiln__skin_job *job);
#if KILN__SIMD_SSE2
void kiln__skin_lbs_sse2(const kiln__skin_job *job);
void kiln__skin_dqs_sse2(const kiln__skin_job *job);
#endif
#if KILN__SIMD_AVX2
void kiln__skin_lbs_avx2(const kiln__skin_job *job);
void kiln__skin_dqs_avx2(const kiln__skin_job *job);
#endif
#if KILN__SIMD_AVX512
void kiln__skin_lbs_avx512(const kiln__skin_job *job);
void kiln__skin_dqs_avx512(const kiln__skin_job *job);
#endif

/* Fully unrolls the loops over lanes and influences (trip counts are constants where the
 * kernels are specialised): a rolled loop costs a counter and a branch per influence and keeps
 * the accumulators in memory. */
#if defined(__clang__)
#define KILN__UNROLL _Pragma("unroll 8")
#elif defined(__GNUC__)
#define KILN__UNROLL _Pragma("GCC unroll 8")
#else
#define KILN__UNROLL
#endif

/* The baker's joint stride in u16s for n influences: 2n bytes rounded up to 4 (bake_skin.c).
 * The SIMD fast path expects it (and weights packed n floats apart). */
#define KILN__SKIN_JS(n) ((2u * (n) + 3u) / 4u * 2u)

/* A vertex whose heaviest weight is 0 has no weight at all (the baker's "follows the model
 * only"): tested on the bits, so that the kernels can select without a branch. */
static inline int kiln__unweighted(const float *w)
{
    uint32_t bits;
    memcpy(&bits, w, sizeof bits);
    return (bits & 0x7FFFFFFFu) == 0;
}
static const float kiln__one = 1.0f;

/* Each pass over the influences reads the record offsets again (one load each): hidden from
 * the compiler behind an empty asm, which otherwise keeps all the offsets of the first pass
 * for the later ones and spills them (a store and a load each). */
#if defined(__GNUC__) || defined(__clang__)
static inline void kiln__reload(const uint32_t **off) { __asm__("" : "+r"(*off)); }
#else
static inline void kiln__reload(const uint32_t **off) { (void)off; }
#endif

/* The octahedral decode of bake_geom.h before its final normalisation (every consumer
 * normalises after transforming the direction, so the length does not matter here). */
#define KILN__OCT_INV (1.0f / 32767.0f)

#endif /* KILN_SKIN_INTERNAL_H */
