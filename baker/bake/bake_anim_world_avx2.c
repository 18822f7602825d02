/* AVX2 kernels of the lossy clip encoder's error evaluation (bake_anim_world.h): world
 * composition and point error, four doubles at a time, the same operations in the same order
 * as bake_anim_lossy_measure.c's portable code. */
#include <stddef.h>

#include "bake_anim_world.h"

#if KILN__WORLD_AVX2
#include <immintrin.h>

#define KILN__AVX2 __attribute__((target("avx2")))

_Static_assert(offsetof(kiln__wxf, t) == 9 * sizeof(double), "t follows m");

int kiln__world_avx2_ok(void)
{
    /* libgcc/compiler-rt also check that the OS saves the YMM state (XGETBV); their CPU model
     * is set up before main, so concurrent bakes only read it */
    return __builtin_cpu_supports("avx2");
}

/* pw's translation in lanes 0-2 (lane 3: m[8]), read within the struct. */
KILN__AVX2 static inline __m256d kiln__t4(const kiln__wxf *x)
{
    return _mm256_permute4x64_pd(_mm256_loadu_pd(x->m + 8), _MM_SHUFFLE(0, 3, 2, 1));
}

KILN__AVX2 static inline void kiln__store_t(__m256d t, kiln__wxf *w)
{
    _mm_storeu_pd(w->t, _mm256_castpd256_pd128(t));
    _mm_storel_pd(w->t + 2, _mm256_extractf128_pd(t, 1));
}

KILN__AVX2 void kiln__world_mul_avx2(const kiln__wxf *pw, const double lm[9], const double lt[3], kiln__wxf *w)
{
    const double *p = pw->m;
    /* columns of the parent, lane 3 the next element (unused) */
    __m256d p0 = _mm256_loadu_pd(p), p1 = _mm256_loadu_pd(p + 3), p2 = _mm256_loadu_pd(p + 6);
    __m256d t = _mm256_add_pd(_mm256_mul_pd(p0, _mm256_broadcast_sd(lt)), _mm256_mul_pd(p1, _mm256_broadcast_sd(lt + 1)));
    t = _mm256_add_pd(_mm256_add_pd(t, _mm256_mul_pd(p2, _mm256_broadcast_sd(lt + 2))), kiln__t4(pw));
    /* in column order: each store's lane 3 is overwritten by the next one, the last by t */
    for (int col = 0; col < 3; col++) {
        const double *l = lm + col * 3;
        __m256d acc = _mm256_add_pd(_mm256_mul_pd(p0, _mm256_broadcast_sd(l)), _mm256_mul_pd(p1, _mm256_broadcast_sd(l + 1)));
        _mm256_storeu_pd(w->m + col * 3, _mm256_add_pd(acc, _mm256_mul_pd(p2, _mm256_broadcast_sd(l + 2))));
    }
    kiln__store_t(t, w);
}

KILN__AVX2 double kiln__point_error2_avx2(const kiln__wxf *a, const kiln__wxf *b, double distance)
{
    __m256d dt = _mm256_sub_pd(kiln__t4(b), kiln__t4(a)), dist = _mm256_set1_pd(distance), zero = _mm256_setzero_pd();
    /* squares per row, lane 3 zero (so a sum with it is exact): the three vertices, then the
     * origin (d = dt) */
    __m256d d0 = _mm256_add_pd(dt, _mm256_mul_pd(dist, _mm256_sub_pd(_mm256_loadu_pd(b->m), _mm256_loadu_pd(a->m))));
    __m256d d1 = _mm256_add_pd(dt, _mm256_mul_pd(dist, _mm256_sub_pd(_mm256_loadu_pd(b->m + 3), _mm256_loadu_pd(a->m + 3))));
    __m256d d2 = _mm256_add_pd(dt, _mm256_mul_pd(dist, _mm256_sub_pd(_mm256_loadu_pd(b->m + 6), _mm256_loadu_pd(a->m + 6))));
    __m256d sq0 = _mm256_blend_pd(_mm256_mul_pd(d0, d0), zero, 0x8), sq1 = _mm256_blend_pd(_mm256_mul_pd(d1, d1), zero, 0x8);
    __m256d sq2 = _mm256_blend_pd(_mm256_mul_pd(d2, d2), zero, 0x8), sq3 = _mm256_blend_pd(_mm256_mul_pd(dt, dt), zero, 0x8);
    /* hadd: (sq0 + sq1) of two of them in lanes 0, 1 and (sq2 + 0) in lanes 2, 3; then + sq2 */
    __m256d h01 = _mm256_hadd_pd(sq0, sq1), h23 = _mm256_hadd_pd(sq2, sq3);
    __m128d e01 = _mm_add_pd(_mm256_castpd256_pd128(h01), _mm256_extractf128_pd(h01, 1));
    __m128d e23 = _mm_add_pd(_mm256_castpd256_pd128(h23), _mm256_extractf128_pd(h23, 1));
    double worst = _mm_cvtsd_f64(_mm_unpackhi_pd(e23, e23));
    double e0 = _mm_cvtsd_f64(e01), e1 = _mm_cvtsd_f64(_mm_unpackhi_pd(e01, e01)), e2 = _mm_cvtsd_f64(e23);
    if (e0 > worst) worst = e0;
    if (e1 > worst) worst = e1;
    if (e2 > worst) worst = e2;
    return worst;
}
#endif
