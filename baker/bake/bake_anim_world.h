/* Private: the world transforms the lossy clip encoder (bake_anim_lossy_measure.c) composes and
 * measures, and the AVX2 versions of its inner kernels: the world product, the error, and the
 * two fused (bake_anim_world_avx2.c has the CPU check).
 *
 * The AVX2 kernels compute the same IEEE operations in the same order as the portable code,
 * four doubles at a time, without fused multiply-adds (the target is "avx2" alone, so the
 * compiler has no FMA to contract into): they give the same doubles, hence the same bytes.
 * They are compiled with a per-function target attribute and chosen at run time by cpuid.
 */
#ifndef KILN_BAKER_BAKE_ANIM_WORLD_H
#define KILN_BAKER_BAKE_ANIM_WORLD_H

/* A world transform, for the error: 3x3 column-major, then the translation. The kernels read
 * `m` four doubles at a time, so `t` must follow it directly. */
typedef struct kiln__wxf {
    double m[9];
    double t[3];
} kiln__wxf;

#if defined(__x86_64__) && !defined(KILN_FORCE_SCALAR) && (defined(__GNUC__) || defined(__clang__))
#define KILN__WORLD_AVX2 1
#include <immintrin.h>

/* Whether this CPU runs the AVX2 kernels. */
int kiln__world_avx2_ok(void);

/* Kernels compiled for AVX2 alone (no FMA to contract into), inlined into callers compiled
 * alike (bake_anim_lossy_measure.c's AVX2 frame loop), called otherwise. */
#define KILN__AVX2 __attribute__((target("avx2")))

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

/* Largest squared distance between a and b at the origin, (dt0² + dt1²) + dt2², and at the
 * three vertices `distance` along the columns, with d = dt + distance · (b.m - a.m); b given as
 * its columns b0, b1, b2 and its translation bt in lanes 0-2 (lane 3 is not used). */
KILN__AVX2 static inline double kiln__point_error2_regs(const kiln__wxf *a, __m256d b0, __m256d b1, __m256d b2,
                                                       __m256d bt, double distance)
{
    __m256d dt = _mm256_sub_pd(bt, kiln__t4(a)), dist = _mm256_set1_pd(distance), zero = _mm256_setzero_pd();
    /* squares per row, lane 3 zero (so a sum with it is exact): the three vertices, then the
     * origin (d = dt) */
    __m256d d0 = _mm256_add_pd(dt, _mm256_mul_pd(dist, _mm256_sub_pd(b0, _mm256_loadu_pd(a->m))));
    __m256d d1 = _mm256_add_pd(dt, _mm256_mul_pd(dist, _mm256_sub_pd(b1, _mm256_loadu_pd(a->m + 3))));
    __m256d d2 = _mm256_add_pd(dt, _mm256_mul_pd(dist, _mm256_sub_pd(b2, _mm256_loadu_pd(a->m + 6))));
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

/* The same between a and b as stored. */
KILN__AVX2 static inline double kiln__point_error2_avx2(const kiln__wxf *a, const kiln__wxf *b, double distance)
{
    return kiln__point_error2_regs(a, _mm256_loadu_pd(b->m), _mm256_loadu_pd(b->m + 3), _mm256_loadu_pd(b->m + 6),
                                   kiln__t4(b), distance);
}

/* Column l of pw · l: (p0·l0 + p1·l1) + p2·l2. */
KILN__AVX2 static inline __m256d kiln__column_avx2(__m256d p0, __m256d p1, __m256d p2, const double *l)
{
    __m256d acc = _mm256_add_pd(_mm256_mul_pd(p0, _mm256_broadcast_sd(l)), _mm256_mul_pd(p1, _mm256_broadcast_sd(l + 1)));
    return _mm256_add_pd(acc, _mm256_mul_pd(p2, _mm256_broadcast_sd(l + 2)));
}

/* w = pw · (lm, lt): element (row, col) is (p[row]·l0 + p[3+row]·l1) + p[6+row]·l2, the
 * translation ((p[row]·t0 + p[3+row]·t1) + p[6+row]·t2) + pw.t[row]; returns
 * kiln__point_error2_avx2(raw, w, distance) from the registers, not from w as stored (whose
 * overlapping stores a wider load would wait for). */
KILN__AVX2 static inline double kiln__world_mul_error_avx2(const kiln__wxf *pw, const double lm[9], const double lt[3],
                                                           kiln__wxf *w, const kiln__wxf *raw, double distance)
{
    const double *p = pw->m;
    /* columns of the parent, lane 3 the next element (unused) */
    __m256d p0 = _mm256_loadu_pd(p), p1 = _mm256_loadu_pd(p + 3), p2 = _mm256_loadu_pd(p + 6);
    __m256d t = _mm256_add_pd(_mm256_mul_pd(p0, _mm256_broadcast_sd(lt)), _mm256_mul_pd(p1, _mm256_broadcast_sd(lt + 1)));
    t = _mm256_add_pd(_mm256_add_pd(t, _mm256_mul_pd(p2, _mm256_broadcast_sd(lt + 2))), kiln__t4(pw));
    __m256d c0 = kiln__column_avx2(p0, p1, p2, lm), c1 = kiln__column_avx2(p0, p1, p2, lm + 3);
    __m256d c2 = kiln__column_avx2(p0, p1, p2, lm + 6);
    /* in column order: each store's lane 3 is overwritten by the next one, the last by t */
    _mm256_storeu_pd(w->m, c0), _mm256_storeu_pd(w->m + 3, c1), _mm256_storeu_pd(w->m + 6, c2);
    kiln__store_t(t, w);
    return kiln__point_error2_regs(raw, c0, c1, c2, t, distance);
}

/* w = pw · (lm, lt), as kiln__world_mul_error_avx2 makes it. */
KILN__AVX2 static inline void kiln__world_mul_avx2(const kiln__wxf *pw, const double lm[9], const double lt[3], kiln__wxf *w)
{
    const double *p = pw->m;
    __m256d p0 = _mm256_loadu_pd(p), p1 = _mm256_loadu_pd(p + 3), p2 = _mm256_loadu_pd(p + 6);
    __m256d t = _mm256_add_pd(_mm256_mul_pd(p0, _mm256_broadcast_sd(lt)), _mm256_mul_pd(p1, _mm256_broadcast_sd(lt + 1)));
    t = _mm256_add_pd(_mm256_add_pd(t, _mm256_mul_pd(p2, _mm256_broadcast_sd(lt + 2))), kiln__t4(pw));
    for (int col = 0; col < 3; col++) {
        const double *l = lm + col * 3;
        __m256d acc = _mm256_add_pd(_mm256_mul_pd(p0, _mm256_broadcast_sd(l)), _mm256_mul_pd(p1, _mm256_broadcast_sd(l + 1)));
        _mm256_storeu_pd(w->m + col * 3, _mm256_add_pd(acc, _mm256_mul_pd(p2, _mm256_broadcast_sd(l + 2))));
    }
    kiln__store_t(t, w);
}
#else
#define KILN__WORLD_AVX2 0
#endif

#endif
