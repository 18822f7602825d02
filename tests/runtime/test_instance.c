/* Instance world matrices (kiln/instance.h): world_i = P · T(p_i)·R(r_i)·S(s_i) · M.
 *   - hand-computed matrices: translation only, 90 degrees about Y, non-uniform scale, a
 *     non-identity model transform under a parent, in both layouts, on every SIMD path;
 *   - the paths against the scalar reference (within 1e-6 of each column's magnitude) and all
 *     of them against a double-precision product, with affine and projective parents; the
 *     AVX-512 path bit-identical to AVX2 (it runs the AVX2 kernels);
 *   - tails: 1, 7, 9 and 10000 instances, every matrix equal to the one computed alone and
 *     nothing written past the end;
 *   - references: iteration, lookup by path as written and as resolved, unknown paths, ranges,
 *     the per-reference and whole-blob entry points, argument errors;
 *   - `kiln inspect` on a world blob: every reference with its count and a few instances with
 *     their transforms in text, every instance in --json;
 *   - the corpus world of 10,000 instances in 4 references against the double product.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kiln/anim.h"
#include "kiln/bake/bake.h"
#include "kiln/blob.h"
#include "kiln/bake/cast.h"
#include "kiln/bake/cast_write.h"
#include "kiln/instance.h"
#include "cli_run.h"
#include "json_read.h"
#include "test_util.h"

#define CM(r, j) ((j) * 4 + (r))

static const kiln_simd paths[] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
#define PATH_COUNT 4

static void restore_auto(void) { kiln_simd_force(KILN_SIMD_AUTO); }

/* Forces `p`; 0 when this build or CPU lacks it (logged once per test). */
static int use_path(kiln_simd p)
{
    static int logged[KILN_SIMD_AVX512 + 1]; /* by path */
    if (kiln_simd_force(p) == p) return 1;
    if (!logged[p]++) cr_log_info("%s path not available here: not checked", kiln_simd_name(p));
    return 0;
}

/* ---- references in double precision ------------------------------------------------------------ */

static void dmul(const double *a, const double *b, double *out)
{
    double r[16];
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += a[CM(i, k)] * b[CM(k, j)];
            r[CM(i, j)] = s;
        }
    memcpy(out, r, sizeof r);
}

static void dtrs(const float p[3], const float q[4], const float s[3], double m[16])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y),
                   2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x),
                   2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)};
    memset(m, 0, 16 * sizeof *m);
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) m[CM(i, j)] = r[j * 3 + i] * s[j];
    for (int i = 0; i < 3; i++) m[CM(i, 3)] = p[i];
    m[15] = 1;
}

static void dfrom(const float *f, double *d)
{
    static const float id[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    for (int k = 0; k < 16; k++) d[k] = f ? f[k] : id[k];
}

static void ref_world(const kiln_blob_instance *in, const float *parent, const float *model, double out[16])
{
    double a[16], m[16], p[16];
    dtrs(in->position, in->rotation, in->scale, a);
    dfrom(model, m);
    dfrom(parent, p);
    dmul(a, m, a);
    dmul(p, a, out);
}

/* Element (r, j) of an output matrix in `layout`. */
static float at(const float *m, uint32_t layout, int r, int j)
{
    return layout == KILN_INSTANCE_3X4 ? m[r * 4 + j] : m[CM(r, j)];
}

static int rows_of(uint32_t layout) { return layout == KILN_INSTANCE_3X4 ? 3 : 4; }

/* |got - want| <= tol · (largest |want| in the column): the error a float product can carry is
 * relative to the magnitudes it sums, not to each (possibly cancelled) element. */
static int close_to_double(const float *got, const double *want, uint32_t layout, double tol, char *why, size_t cap)
{
    for (int j = 0; j < 4; j++) {
        double scale = 0;
        for (int r = 0; r < 4; r++) scale = fmax(scale, fabs(want[CM(r, j)]));
        for (int r = 0; r < rows_of(layout); r++) {
            double g = at(got, layout, r, j), d = fabs(g - want[CM(r, j)]);
            if (!(d <= tol * scale)) {
                snprintf(why, cap, "element (%d, %d) = %.9g, want %.9g (column scale %g)", r, j, g, want[CM(r, j)], scale);
                return 0;
            }
        }
    }
    return 1;
}

static int close_to_float(const float *got, const float *want, uint32_t layout, double tol, char *why, size_t cap)
{
    for (int j = 0; j < 4; j++) {
        double scale = 0;
        for (int r = 0; r < rows_of(layout); r++) scale = fmax(scale, fabs((double)at(want, layout, r, j)));
        for (int r = 0; r < rows_of(layout); r++) {
            double g = at(got, layout, r, j), w = at(want, layout, r, j);
            if (!(fabs(g - w) <= tol * scale)) {
                snprintf(why, cap, "element (%d, %d) = %.9g, scalar %.9g (column scale %g)", r, j, g, w, scale);
                return 0;
            }
        }
    }
    return 1;
}

/* ---- fixtures -------------------------------------------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double rnd(void) /* [0, 1) */
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}
static float rndf(double lo, double hi) { return (float)(lo + (hi - lo) * rnd()); }

static kiln_blob_instance random_instance(void)
{
    kiln_blob_instance in;
    memset(&in, 0, sizeof in);
    double q[4], len = 0;
    for (int c = 0; c < 4; c++) q[c] = rnd() * 2 - 1, len += q[c] * q[c];
    len = sqrt(len);
    for (int c = 0; c < 3; c++) {
        in.position[c] = rndf(-500, 500);
        in.scale[c] = rndf(0.25, 4);
    }
    for (int c = 0; c < 4; c++) in.rotation[c] = (float)(q[c] / len);
    in.reserved[0] = 0xFFFFFFFFu; /* the kernels must ignore the rest of the record */
    return in;
}

static void random_transform(float m[16])
{
    kiln_blob_instance t = random_instance();
    kiln_transform_matrix(t.position, t.rotation, t.scale, m);
}

/* The same quaternion helper the hand-computed cases use: angle (degrees) about a unit axis. */
static void axis_angle(float x, float y, float z, double deg, float q[4])
{
    double h = deg * 3.14159265358979323846 / 360.0;
    q[0] = (float)(x * sin(h)), q[1] = (float)(y * sin(h)), q[2] = (float)(z * sin(h)), q[3] = (float)cos(h);
}

static kiln_blob_instance make_instance(float px, float py, float pz, const float q[4], float sx, float sy, float sz)
{
    kiln_blob_instance in;
    memset(&in, 0, sizeof in);
    in.position[0] = px, in.position[1] = py, in.position[2] = pz;
    memcpy(in.rotation, q, sizeof in.rotation);
    in.scale[0] = sx, in.scale[1] = sy, in.scale[2] = sz;
    return in;
}

/* Expects `got` (4x4 column-major) to equal `want` within 1e-6 absolute. */
static void expect_matrix(const float *got, const float want[16], const char *what, kiln_simd p)
{
    for (int k = 0; k < 16; k++)
        cr_expect(fabsf(got[k] - want[k]) <= 1e-6f, "%s (%s): m[%d] = %.9g, want %g", what, kiln_simd_name(p), k,
                  (double)got[k], (double)want[k]);
}

/* ---- hand-computed matrices ------------------------------------------------------------------------- */

Test(instance_hand, translation_rotation_scale_and_model_on_every_path, .fini = restore_auto)
{
    static const float qid[4] = {0, 0, 0, 1};
    float qy90[4];
    axis_angle(0, 1, 0, 90, qy90);
    const kiln_blob_instance cases[4] = {
        make_instance(1, 2, 3, qid, 1, 1, 1),    /* translation only */
        make_instance(5, 0, 0, qy90, 1, 1, 1),   /* 90 degrees about Y: x -> -z, z -> x */
        make_instance(0, 0, 0, qid, 2, 3, 4),    /* non-uniform scale */
        make_instance(1, 0, 0, qy90, 2, 1, 1),   /* all three, used with M and P below */
    };
    static const float want[4][16] = {
        {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 2, 3, 1},
        {0, 0, -1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 5, 0, 0, 1},
        {2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1},
        {0, 0, -2, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1},
    };
    /* M = T(0, 1, 0) · S(1, 1, 3): A·M has columns A0, A1, 3·A2, A·(0, 1, 0, 1) = A1 + A3;
     * P = T(0, 0, 5) then moves the translation column only. */
    static const float pos_m[3] = {0, 1, 0}, scale_m[3] = {1, 1, 3}, pos_p[3] = {0, 0, 5}, one[3] = {1, 1, 1};
    float M[16], P[16];
    kiln_transform_matrix(pos_m, qid, scale_m, M);
    kiln_transform_matrix(pos_p, qid, one, P);
    static const float want_mp[16] = {0, 0, -2, 0, 0, 1, 0, 0, 3, 0, 0, 0, 1, 1, 5, 1};
    static const float want_mp_3x4[12] = {0, 0, 3, 1, 0, 1, 0, 1, -2, 0, 0, 5};
    static const char *const names[4] = {"translation", "rotation 90 about Y", "non-uniform scale", "combined"};

    for (int pi = 0; pi < PATH_COUNT; pi++) {
        if (!use_path(paths[pi])) continue;
        float out[4 * 16];
        cr_assert_eq(kiln_instance_matrices(cases, 4, NULL, NULL, KILN_INSTANCE_4X4, out), KILN_OK);
        for (int c = 0; c < 4; c++) expect_matrix(out + c * 16, want[c], names[c], paths[pi]);
        float one_out[16];
        cr_assert_eq(kiln_instance_matrices(&cases[3], 1, P, M, KILN_INSTANCE_4X4, one_out), KILN_OK);
        expect_matrix(one_out, want_mp, "combined under M and P", paths[pi]);
        float rows[12];
        cr_assert_eq(kiln_instance_matrices(&cases[3], 1, P, M, KILN_INSTANCE_3X4, rows), KILN_OK);
        for (int k = 0; k < 12; k++)
            cr_expect(fabsf(rows[k] - want_mp_3x4[k]) <= 1e-6f, "3x4 (%s): m[%d] = %g, want %g",
                      kiln_simd_name(paths[pi]), k, (double)rows[k], (double)want_mp_3x4[k]);
    }
}

Test(instance_hand, transform_and_model_matrix_helpers)
{
    float qz90[4], m[16];
    axis_angle(0, 0, 1, 90, qz90);
    static const float p[3] = {1, 2, 3}, s[3] = {2, 2, 2};
    kiln_transform_matrix(p, qz90, s, m);
    static const float want[16] = {0, 2, 0, 0, -2, 0, 0, 0, 0, 0, 2, 0, 1, 2, 3, 1}; /* x -> y, y -> -x */
    expect_matrix(m, want, "T·R·S", KILN_SIMD_SCALAR);

    /* A Model's p/r/s come back as its matrix (C.9). */
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    kiln_cast_writer_string(w, model, "n", "crate");
    kiln_cast_writer_floats(w, model, "p", KILN_CAST_TYPE_VEC3, p, 1);
    kiln_cast_writer_floats(w, model, "r", KILN_CAST_TYPE_VEC4, qz90, 1);
    kiln_cast_writer_floats(w, model, "s", KILN_CAST_TYPE_VEC3, s, 1);
    file_bytes f;
    f.size = (size_t)kiln_cast_writer_size(w);
    f.data = malloc(f.size);
    cr_assert_eq(kiln_cast_writer_write(w, f.data, f.size), KILN_OK);
    kiln_cast_writer_destroy(w);
    kiln_bake_input in = {"crate.cast", f.data, f.size, NULL};
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    kiln_bake_result res;
    kiln_diag err;
    cr_assert_eq(kiln_bake(&in, 1, &o, &res, &err), KILN_OK, "%s", err.message);
    const kiln_blob *blob;
    cr_assert_eq(kiln_blob_load(res.blob, res.size, 0, &blob, &err), KILN_OK);
    float mm[16];
    cr_assert_eq(kiln_model_transform(blob, 0, mm), KILN_OK);
    expect_matrix(mm, want, "model matrix", KILN_SIMD_SCALAR);
    cr_expect_eq(kiln_model_transform(blob, 1, mm), KILN_ERR_NOT_FOUND);
    cr_expect_eq(kiln_model_transform(NULL, 0, mm), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_model_transform(blob, 0, NULL), KILN_ERR_INVALID_ARGUMENT);
    kiln_bake_result_free(&res);
    file_bytes_free(&f);
}

/* ---- the paths, tails ----------------------------------------------------------------------------- */

/* Every path against the scalar reference (1e-6) and the double product (1e-5), for `count`
 * random instances under the given P and M, in both layouts; tails checked against each
 * instance computed alone, and the float after the last matrix left alone. */
static void check_paths(uint32_t count, const float *P, const float *M, const char *what)
{
    kiln_blob_instance *in = malloc((size_t)count * sizeof *in);
    for (uint32_t i = 0; i < count; i++) in[i] = random_instance();
    for (uint32_t layout = KILN_INSTANCE_4X4; layout <= KILN_INSTANCE_3X4; layout++) {
        const uint32_t fl = KILN_INSTANCE_FLOATS(layout);
        float *scalar = malloc(((size_t)count * fl + 1) * sizeof(float));
        float *out = malloc(((size_t)count * fl + 1) * sizeof(float));
        kiln_simd_force(KILN_SIMD_SCALAR);
        cr_assert_eq(kiln_instance_matrices(in, count, P, M, layout, scalar), KILN_OK);
        for (int pi = 0; pi < PATH_COUNT; pi++) {
            if (!use_path(paths[pi])) continue;
            const char *pn = kiln_simd_name(paths[pi]);
            out[(size_t)count * fl] = 12345.0f;
            cr_assert_eq(kiln_instance_matrices(in, count, P, M, layout, out), KILN_OK);
            cr_expect_eq(out[(size_t)count * fl], 12345.0f, "%s %s n=%u: wrote past the end", what, pn, count);
            int bad = 0;
            for (uint32_t i = 0; i < count && bad < 5; i++) {
                char why[256];
                const float *m = out + (size_t)i * fl;
                double ref[16];
                ref_world(&in[i], P, M, ref);
                if (!close_to_float(m, scalar + (size_t)i * fl, layout, 1e-6, why, sizeof why)) {
                    cr_expect_fail("%s %s %s n=%u instance %u against scalar: %s", what, pn, layout ? "3x4" : "4x4",
                                   count, i, why);
                    bad++;
                }
                if (!close_to_double(m, ref, layout, 1e-5, why, sizeof why)) {
                    cr_expect_fail("%s %s %s n=%u instance %u against double: %s", what, pn, layout ? "3x4" : "4x4",
                                   count, i, why);
                    bad++;
                }
                /* the same instance alone goes through the padded tail: bit-identical */
                float alone[16];
                kiln_instance_matrices(&in[i], 1, P, M, layout, alone);
                if (memcmp(alone, m, fl * sizeof(float)) != 0) {
                    cr_expect_fail("%s %s n=%u instance %u differs from the same instance alone", what, pn, count, i);
                    bad++;
                }
            }
        }
        free(scalar);
        free(out);
    }
    free(in);
}

static const uint32_t counts[] = {1, 7, 9, 10000};

Test(instance_paths, identity_model_and_parent_all_counts, .fini = restore_auto)
{
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) check_paths(counts[c], NULL, NULL, "identity");
}

Test(instance_paths, model_and_affine_parent_all_counts, .fini = restore_auto)
{
    float M[16], P[16];
    random_transform(M);
    random_transform(P);
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        check_paths(counts[c], NULL, M, "model");
        check_paths(counts[c], P, NULL, "parent");
        check_paths(counts[c], P, M, "model+parent");
    }
}

Test(instance_paths, projective_parent_and_general_model, .fini = restore_auto)
{
    /* a perspective projection (last row 0 0 -1 0) times a view; M with a non-affine last row */
    static const float proj[16] = {1.2f, 0, 0, 0, 0, 1.6f, 0, 0, 0, 0, -1.002f, -1, 0, 0, -0.2002f, 0};
    float view[16], P[16], M[16];
    random_transform(view);
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += (double)proj[CM(i, k)] * view[CM(k, j)];
            P[CM(i, j)] = (float)s;
        }
    random_transform(M);
    check_paths(9, P, NULL, "projective");
    check_paths(10000, P, M, "projective+model");
    M[3] = 0.125f, M[7] = -0.25f; /* general 4x4 M */
    check_paths(9, P, M, "projective+general model");
    check_paths(7, NULL, M, "general model");
}

/* The AVX-512 path has no instance kernels of its own and runs the AVX2 ones: bit-identical
 * matrices. SSE2 and scalar round every product, which AVX2 fuses, so a fall back to either
 * would show (checked: SSE2 differs from AVX2 somewhere on the same data). */
Test(instance_paths, avx512_runs_the_avx2_kernels, .fini = restore_auto)
{
    if (!use_path(KILN_SIMD_AVX512) || !use_path(KILN_SIMD_AVX2)) return;
    enum { N = 1000 };
    kiln_blob_instance *in = malloc(N * sizeof *in);
    float *got[3], M[16], P[16];
    for (uint32_t i = 0; i < N; i++) in[i] = random_instance();
    random_transform(M);
    random_transform(P);
    const kiln_simd order[3] = {KILN_SIMD_AVX2, KILN_SIMD_AVX512, KILN_SIMD_SSE2};
    for (int k = 0; k < 3; k++) {
        got[k] = malloc(N * 16 * sizeof(float));
        cr_assert_eq(kiln_simd_force(order[k]), order[k]);
        cr_assert_eq(kiln_instance_matrices(in, N, P, M, KILN_INSTANCE_4X4, got[k]), KILN_OK);
    }
    cr_expect(memcmp(got[0], got[1], N * 16 * sizeof(float)) == 0, "avx512 differs from avx2");
    cr_expect(memcmp(got[0], got[2], N * 16 * sizeof(float)) != 0, "sse2 equals avx2: the check above proves nothing");
    for (int k = 0; k < 3; k++) free(got[k]);
    free(in);
}

/* ---- references ------------------------------------------------------------------------------------ */

typedef struct world {
    kiln_bake_result res;
    const kiln_blob *blob;
    file_bytes       cast;
} world;

static void world_bake(world *w, const char *path)
{
    kiln_bake_input in = {path, w->cast.data, w->cast.size, NULL};
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    kiln_diag err;
    memset(&err, 0, sizeof err);
    cr_assert_eq(kiln_bake(&in, 1, &o, &w->res, &err), KILN_OK, "%s: %s", path, err.message);
    cr_assert_eq(kiln_blob_load(w->res.blob, w->res.size, 0, &w->blob, &err), KILN_OK, "%s", err.message);
}

static void world_free(world *w)
{
    kiln_bake_result_free(&w->res);
    file_bytes_free(&w->cast);
}

/* Instance i (named "i<i>", at x = i) places files[i]; scene root "assets" next to
 * levels/one/level.cast. */
static void build_world(world *w, const char *const *files, int count)
{
    kiln_cast_writer *cw = kiln_cast_writer_create(NULL);
    uint64_t hash = 100;
    uint32_t root = kiln_cast_writer_node(cw, KILN_CAST_NONE, KILN_CAST_ID_ROOT, hash++);
    uint32_t meta = kiln_cast_writer_node(cw, root, KILN_CAST_ID_METADATA, hash++);
    kiln_cast_writer_string(cw, meta, "sr", "assets");
    for (int i = 0; i < count; i++) {
        uint32_t inst = kiln_cast_writer_node(cw, root, KILN_CAST_ID_INSTANCE, hash++);
        uint64_t file_hash = hash++;
        char name[16];
        snprintf(name, sizeof name, "i%d", i);
        kiln_cast_writer_string(cw, inst, "n", name);
        kiln_cast_writer_u64(cw, inst, "rf", file_hash);
        float p[3] = {(float)i, 0, 0};
        kiln_cast_writer_floats(cw, inst, "p", KILN_CAST_TYPE_VEC3, p, 1);
        uint32_t file = kiln_cast_writer_node(cw, inst, KILN_CAST_ID_FILE, file_hash);
        kiln_cast_writer_string(cw, file, "p", files[i]);
    }
    w->cast = writer_bytes(cw);
    world_bake(w, "levels/one/level.cast");
}

/* crate, barrel, crate (spelled differently), tree (absolute path), barrel */
static void synthetic_world(world *w)
{
    static const char *const files[5] = {"props/crate.cast", "props/barrel.cast", "./props/crate.cast",
                                         "/abs/tree.cast", "props/barrel.cast"};
    build_world(w, files, 5);
}

Test(instance_refs, iterate_find_as_written_and_resolved_and_ranges, .fini = restore_auto)
{
    world w;
    synthetic_world(&w);
    const kiln_blob *b = w.blob;
    cr_assert_eq(kiln_reference_count(b), 3);
    static const char *const written[3] = {"props/crate.cast", "props/barrel.cast", "/abs/tree.cast"};
    /* relative to the scene root ("assets" next to levels/one/level.cast), absolute as written */
    static const char *const resolved[3] = {"props/crate.cast", "props/barrel.cast", "/abs/tree.cast"};
    static const uint32_t sizes[3] = {2, 2, 1};
    static const float xs[3][2] = {{0, 2}, {1, 4}, {3, 3}}; /* instance positions, file order */
    uint32_t next = 0;
    for (uint32_t r = 0; r < kiln_reference_count(b); r++) {
        kiln_reference_info info;
        cr_assert_eq(kiln_reference_get(b, r, &info), KILN_OK);
        cr_expect_eq(info.index, r);
        cr_expect_str_eq(info.path, written[r]);
        cr_expect_str_eq(info.resolved_path, resolved[r]);
        cr_expect_eq(info.first_instance, next, "ranges back to back");
        cr_expect_eq(info.instance_count, sizes[r]);
        cr_expect_eq(info.first_model, KILN_BLOB_NONE, "no referenced file is in this blob");
        cr_expect_eq(info.model_count, 0);
        next += info.instance_count;
        cr_expect_eq(kiln_reference_find(b, written[r]), r, "%s as written", written[r]);
        cr_expect_eq(kiln_reference_find(b, resolved[r]), r, "%s as resolved", resolved[r]);

        /* the reference's matrices: its instances' translations, and the same as the range call */
        float m[2 * 16], range[2 * 16], small[16];
        cr_assert_eq(kiln_reference_world_matrices(b, r, NULL, NULL, KILN_INSTANCE_4X4, m, 2), KILN_OK);
        cr_assert_eq(kiln_instance_world_matrices(b, info.first_instance, info.instance_count, NULL, NULL,
                                                  KILN_INSTANCE_4X4, range), KILN_OK);
        cr_expect_eq(memcmp(m, range, info.instance_count * 16 * sizeof(float)), 0);
        for (uint32_t k = 0; k < info.instance_count; k++) cr_expect_eq(m[k * 16 + 12], xs[r][k], "reference %u instance %u", r, k);
        if (info.instance_count > 1)
            cr_expect_eq(kiln_reference_world_matrices(b, r, NULL, NULL, KILN_INSTANCE_4X4, small, 1),
                         KILN_ERR_BUFFER_TOO_SMALL);
    }
    cr_expect_eq(next, 5);
    /* the other spelling of crate.cast was folded into the first one; its resolved path finds it */
    cr_expect_eq(kiln_reference_find(b, "./props/crate.cast"), KILN_BLOB_NONE);
    cr_expect_eq(kiln_reference_find(b, "props/tree.cast"), KILN_BLOB_NONE);
    cr_expect_eq(kiln_reference_find(b, ""), KILN_BLOB_NONE);
    cr_expect_eq(kiln_reference_find(b, NULL), KILN_BLOB_NONE);
    cr_expect_eq(kiln_reference_find(NULL, "props/crate.cast"), KILN_BLOB_NONE);
    kiln_reference_info info;
    cr_expect_eq(kiln_reference_get(b, kiln_reference_find(b, "nope.cast"), &info), KILN_ERR_NOT_FOUND);
    cr_expect_eq(kiln_reference_get(b, 3, &info), KILN_ERR_NOT_FOUND);
    cr_expect_eq(kiln_reference_get(b, 0, NULL), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_reference_count(NULL), 0);

    /* the whole blob, each reference with its own model matrix */
    float M1[16], all[5 * 16], one[2 * 16];
    random_transform(M1);
    const float *models[3] = {NULL, M1, NULL};
    cr_assert_eq(kiln_instance_world_matrices_all(b, NULL, models, KILN_INSTANCE_4X4, all, 5), KILN_OK);
    cr_assert_eq(kiln_reference_world_matrices(b, 1, NULL, M1, KILN_INSTANCE_4X4, one, 2), KILN_OK);
    cr_expect_eq(memcmp(all + 2 * 16, one, 2 * 16 * sizeof(float)), 0, "reference 1 under its model in the whole-blob call");
    cr_assert_eq(kiln_reference_world_matrices(b, 0, NULL, NULL, KILN_INSTANCE_4X4, one, 2), KILN_OK);
    cr_expect_eq(memcmp(all, one, 2 * 16 * sizeof(float)), 0);
    cr_expect_eq(kiln_instance_world_matrices_all(b, NULL, models, KILN_INSTANCE_4X4, all, 4), KILN_ERR_BUFFER_TOO_SMALL);
    cr_expect_eq(kiln_instance_world_matrices_all(b, NULL, NULL, KILN_INSTANCE_4X4, NULL, 5), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_instance_world_matrices_all(NULL, NULL, NULL, KILN_INSTANCE_4X4, all, 5), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_instance_world_matrices_all(b, NULL, NULL, 7, all, 5), KILN_ERR_INVALID_ARGUMENT);

    /* ranges */
    cr_expect_eq(kiln_instance_world_matrices(b, 4, 1, NULL, NULL, KILN_INSTANCE_4X4, one), KILN_OK);
    cr_expect_eq(kiln_instance_world_matrices(b, 4, 2, NULL, NULL, KILN_INSTANCE_4X4, one), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_instance_world_matrices(b, 6, 0, NULL, NULL, KILN_INSTANCE_4X4, one), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_instance_world_matrices(b, 5, 0, NULL, NULL, KILN_INSTANCE_4X4, NULL), KILN_OK);
    cr_expect_eq(kiln_instance_world_matrices(b, UINT32_MAX, 2, NULL, NULL, KILN_INSTANCE_4X4, one),
                 KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_instance_matrices(NULL, 1, NULL, NULL, KILN_INSTANCE_4X4, one), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_instance_matrices(NULL, 0, NULL, NULL, KILN_INSTANCE_4X4, NULL), KILN_OK);
    cr_expect_eq(kiln_reference_world_matrices(b, 9, NULL, NULL, KILN_INSTANCE_4X4, one, 2), KILN_ERR_NOT_FOUND);
    cr_expect_eq(kiln_reference_world_matrices(b, 0, NULL, NULL, 2, one, 2), KILN_ERR_INVALID_ARGUMENT);
    world_free(&w);
}

Test(instance_refs, bundled_world_sample)
{
    world w;
    char path[2048];
    snprintf(path, sizeof path, "%s/samples/world.cast", KILN_SOURCE_DIR);
    cr_assert(read_file(path, &w.cast), "cannot read %s", path);
    world_bake(&w, path);
    cr_assert_eq(kiln_reference_count(w.blob), 1);
    kiln_reference_info info;
    cr_assert_eq(kiln_reference_get(w.blob, kiln_reference_find(w.blob, "character.cast"), &info), KILN_OK);
    cr_expect_eq(info.instance_count, 4);
    /* sr "." next to world.cast: relative to it, not the checkout's folder */
    cr_expect_str_eq(info.resolved_path, "character.cast");
    cr_expect_eq(kiln_reference_find(w.blob, info.resolved_path), 0);
    cr_expect_eq(info.first_model, KILN_BLOB_NONE, "character.cast was not baked with the world");
    float m[4 * 16];
    cr_assert_eq(kiln_reference_world_matrices(w.blob, 0, NULL, NULL, KILN_INSTANCE_4X4, m, 4), KILN_OK);
    uint32_t count;
    const kiln_blob_instance *inst = kiln_blob_instances(w.blob, &count);
    for (uint32_t i = 0; i < 4; i++) {
        double ref[16];
        char why[256];
        ref_world(&inst[i], NULL, NULL, ref);
        cr_expect(close_to_double(m + i * 16, ref, KILN_INSTANCE_4X4, 1e-6, why, sizeof why), "npc %u: %s", i, why);
    }
    world_free(&w);
}

/* ---- kiln inspect on a world blob ----------------------------------------------------------------- */

Test(instance_inspect, text_shows_every_reference_and_a_few_instances_json_all)
{
    static const char *const files[6] = {"props/crate.cast", "props/crate.cast", "props/barrel.cast",
                                         "props/crate.cast", "props/crate.cast", "props/crate.cast"};
    world w;
    build_world(&w, files, 6);
    char path[] = "/tmp/kiln_test_instance_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, w.res.blob, w.res.size), (ssize_t)w.res.size);
    close(fd);

    const char *text_args[] = {"inspect", path, NULL};
    cli_result r = cli_run(text_args);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "instances: 6 of 2 references\n"), "%s", r.out);
    cr_expect(strstr(r.out, "       5  'props/crate.cast' -> 'props/crate.cast'\n"), "%s", r.out);
    cr_expect(strstr(r.out, "       1  'props/barrel.cast' -> 'props/barrel.cast'\n"), "%s", r.out);
    cr_expect(strstr(r.out, "          'i0' position (0, 0, 0), rotation xyzw (0, 0, 0, 1), scale (1, 1, 1)\n"), "%s", r.out);
    cr_expect(strstr(r.out, "          'i3' position (3, 0, 0)"), "%s", r.out);
    cr_expect(!strstr(r.out, "'i4'"), "only three instances of a reference in text: %s", r.out);
    cr_expect(strstr(r.out, "          ... 2 more\n"), "%s", r.out);
    cr_expect(strstr(r.out, "          'i2' position (2, 0, 0)"), "%s", r.out);
    cli_result_free(&r);

    const char *json_args[] = {"inspect", "--json", path, NULL};
    r = cli_run(json_args);
    cr_expect_eq(r.status, 0, "%s", r.err);
    char err[128];
    jr_value *doc = jr_parse(r.out, strlen(r.out), err, sizeof err);
    cr_assert_not_null(doc, "%s", err);
    const jr_value *refs = jr_get(doc, "references"), *inst = jr_get(doc, "instances");
    cr_assert_eq(jr_len(refs), 2);
    cr_expect_eq(jr_num(jr_get(jr_at(refs, 0), "instances")), 5);
    cr_assert_eq(jr_len(inst), 6, "every instance in --json");
    static const double want_x[6] = {0, 1, 3, 4, 5, 2}; /* grouped: the five crates, then the barrel */
    for (size_t i = 0; i < 6; i++) {
        const jr_value *in = jr_at(inst, i);
        cr_expect_eq(jr_num(jr_get(in, "reference")), i < 5 ? 0 : 1, "instance %zu", i);
        cr_expect_eq(jr_num(jr_at(jr_get(in, "position"), 0)), want_x[i], "instance %zu", i);
        cr_expect_eq(jr_len(jr_get(in, "rotation")), 4);
        cr_expect_eq(jr_num(jr_at(jr_get(in, "scale"), 2)), 1);
        cr_expect_eq(jr_num(jr_get(in, "source_index")), want_x[i]);
        char name[8];
        snprintf(name, sizeof name, "i%d", (int)want_x[i]);
        cr_expect_str_eq(jr_str(jr_get(in, "name")), name);
    }
    jr_free(doc);
    cli_result_free(&r);
    unlink(path);
    world_free(&w);
}

/* ---- the corpus world --------------------------------------------------------------------------------- */

Test(instance_corpus, world_10k_instances_against_double_precision, .fini = restore_auto, .timeout = 120)
{
    char dir[1024], path[2048];
    if (!corpus_dir(dir, sizeof dir)) cr_skip("corpus not found at %s: skipping", dir);
    world w;
    if (!corpus_read(dir, "world_10k_instances.cast", &w.cast))
        cr_skip("%s/world_10k_instances.cast not found: skipping", dir);
    snprintf(path, sizeof path, "%s/world_10k_instances.cast", dir);
    world_bake(&w, path);
    uint32_t count;
    const kiln_blob_instance *inst = kiln_blob_instances(w.blob, &count);
    cr_assert_eq(count, 10000);
    const uint32_t nr = kiln_reference_count(w.blob);
    cr_assert_eq(nr, 4);

    /* a distinct model transform per referenced asset, and the level placed somewhere */
    float models[4][16], P[16];
    const float *mp[4];
    for (uint32_t r = 0; r < nr; r++) random_transform(models[r]), mp[r] = models[r];
    random_transform(P);
    float *out = malloc((size_t)count * 16 * sizeof(float));
    for (int pi = 0; pi < PATH_COUNT; pi++) {
        if (!use_path(paths[pi])) continue;
        for (int variant = 0; variant < 2; variant++) {
            const float *parent = variant ? P : NULL;
            cr_assert_eq(kiln_instance_world_matrices_all(w.blob, parent, mp, KILN_INSTANCE_4X4, out, count), KILN_OK);
            int bad = 0;
            for (uint32_t r = 0; r < nr; r++) {
                kiln_reference_info info;
                cr_assert_eq(kiln_reference_get(w.blob, r, &info), KILN_OK);
                for (uint32_t i = info.first_instance; i < info.first_instance + info.instance_count && bad < 5; i++) {
                    double ref[16];
                    char why[256];
                    cr_assert_eq(inst[i].reference, r);
                    ref_world(&inst[i], parent, mp[r], ref);
                    if (!close_to_double(out + (size_t)i * 16, ref, KILN_INSTANCE_4X4, 1e-5, why, sizeof why)) {
                        cr_expect_fail("%s%s instance %u (reference %u): %s", kiln_simd_name(paths[pi]),
                                       parent ? " with parent" : "", i, r, why);
                        bad++;
                    }
                }
            }
        }
    }
    free(out);
    world_free(&w);
}
