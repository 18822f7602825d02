/* Private: the world transforms the lossy clip encoder (bake_anim_lossy_measure.c) composes and
 * measures, and the AVX2 versions of its two inner kernels (bake_anim_world_avx2.c).
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
/* Whether this CPU runs the AVX2 kernels. */
int kiln__world_avx2_ok(void);
/* w = pw · (lm, lt): element (row, col) is (p[row]·l0 + p[3+row]·l1) + p[6+row]·l2, the
 * translation ((p[row]·t0 + p[3+row]·t1) + p[6+row]·t2) + pw.t[row]. */
void kiln__world_mul_avx2(const kiln__wxf *pw, const double lm[9], const double lt[3], kiln__wxf *w);
/* Largest squared distance between a and b at the origin, (dt0² + dt1²) + dt2², and at the
 * three vertices `distance` along the columns, with d = dt + distance · (b.m - a.m). */
double kiln__point_error2_avx2(const kiln__wxf *a, const kiln__wxf *b, double distance);
#else
#define KILN__WORLD_AVX2 0
#endif

#endif
