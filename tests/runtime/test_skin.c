/* CPU skinning (kiln/skin.h): linear (LBS) and dual quaternion (DQS) blends of the mesh
 * streams by skinning matrices, on every SIMD path.
 *
 *   hand-computed   one influence = the matrix (with non-uniform scale: the inverse transpose
 *                   for normals, the matrix for tangents), two weighted influences, vertices
 *                   without weights going to the root, the rest pose giving the bind pose
 *   twist           a cylinder whose second bone turns 90° about its axis: the measured radius
 *                   of the mid ring collapses under LBS and keeps under DQS (printed)
 *   properties      unit normals and tangents that stay perpendicular under scaled bones,
 *                   quantised streams within their quantisation step of the float ones, the
 *                   SIMD paths within 1e-5 of the scalar one, ranges and strides, clamped joints
 *                   on trusted blobs, the dual quaternion conversion, argument errors
 *   corpus          every FK case of $corpus/cases.json with skinned vertices in its expected
 *                   file, baked lossless and in order, sampled, skinned and compared with the
 *                   expected vertices (1e-4; cases with IK, constraints or blend shapes are
 *                   skipped and named); the skinned grids (1, 4, 8 influences, linear and dual
 *                   quaternion) at rest on their bind pose
 * Every test prints what it measured to stderr.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim_fixture.h"
#include "json_read.h"
#include "skin_fixture.h"
#include "test_util.h"
#include "kiln/anim.h"
#include "kiln/bake/bake.h"
#include "kiln/blob.h"
#include "kiln/bake/cast.h"
#include "kiln/bake/cast_scene.h"
#include "kiln/bake/cast_write.h"
#include "kiln/skin.h"

#define TOL_SIMD 1e-5     /* paths against the scalar one (kiln/skin.h) */
#define TOL_HAND 2e-6     /* hand-computed values, float rounding only */
#define TOL_CORPUS 1e-4   /* the corpus README's tight class */

/* ---- calling the skinning ------------------------------------------------------------------- */

typedef struct skin_out {
    float *p, *n, *t;
} skin_out;

static skin_out out_alloc(uint32_t count)
{
    skin_out o;
    size_t bytes = sizeof(float) * 3 * (count ? count : 1);
    o.p = malloc(bytes), o.n = malloc(bytes), o.t = malloc(bytes);
    cr_assert(o.p && o.n && o.t);
    memset(o.p, 0xFF, bytes), memset(o.n, 0xFF, bytes), memset(o.t, 0xFF, bytes); /* NaN: unwritten shows */
    return o;
}

static void out_free(skin_out *o)
{
    free(o->p), free(o->n), free(o->t);
    memset(o, 0, sizeof *o);
}

typedef struct skin_in {
    const kiln_blob *blob;
    uint32_t mesh, flags, bones;
    const float *skin;
    const kiln_skin_dual_quat *dq;
    const float *root;
} skin_in;

#define WANT_N 1 /* skin_range: normals too */
#define WANT_T 2 /* tangents too */
#define WANT_NT (WANT_N | WANT_T)

/* Skins vertices [first, first + count) into o (element 0 = vertex first): positions, and
 * normals and tangents as `want` asks. */
static kiln_result skin_range(const skin_in *in, uint32_t first, uint32_t count, const skin_out *o, int want)
{
    kiln_skin_desc d;
    memset(&d, 0, sizeof d);
    d.blob = in->blob, d.mesh = in->mesh, d.flags = in->flags;
    d.skin_matrices = in->skin, d.dual_quats = in->dq, d.bone_count = in->bones, d.root = in->root;
    d.first_vertex = first, d.vertex_count = count;
    d.positions = o->p;
    d.normals = (want & WANT_N) ? o->n : NULL;
    d.tangents = (want & WANT_T) ? o->t : NULL;
    return kiln_skin_mesh(&d);
}

static uint32_t vertex_count(const kiln_blob *blob, uint32_t mesh) { return kiln_blob_meshes(blob, NULL)[mesh].vertex_count; }

static double vlen(const float *v) { return sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]); }

/* ---- small meshes written directly as blobs --------------------------------------------------- */

typedef struct tiny_vertex {
    float p[3], n[3], t[3];
    uint16_t j[2];
    float w[2];
} tiny_vertex;

/* One mesh of `count` vertices with 2 influence slots, on a fan skeleton of `bones` bones. */
static unsigned char *tiny_blob(const tiny_vertex *v, uint32_t count, uint32_t bones, uint32_t skinning, size_t *size)
{
    bb_scene s;
    bb_init(&s);
    kiln_blob_model model;
    memset(&model, 0, sizeof model);
    model.name = bb_str(&s, "tiny");
    model.mesh_count = 1;
    model.rotation[3] = model.scale[0] = model.scale[1] = model.scale[2] = 1.0f;
    bb_add(&s.models, &model);
    bb_skeleton(&s, 0, bones, "b", 0);
    float *p = malloc(sizeof(float) * 9 * count);
    uint16_t *j = calloc(2 * (size_t)count, sizeof(uint16_t)); /* stride 4 bytes: 2 joints */
    float *w = malloc(sizeof(float) * 2 * count);
    for (uint32_t i = 0; i < count; i++) {
        memcpy(p + 3 * i, v[i].p, 12), memcpy(p + 3 * (count + i), v[i].n, 12), memcpy(p + 3 * (2 * count + i), v[i].t, 12);
        j[2 * i] = v[i].j[0], j[2 * i + 1] = v[i].j[1];
        w[2 * i] = v[i].w[0], w[2 * i + 1] = v[i].w[1];
    }
    kiln_blob_mesh mesh;
    memset(&mesh, 0, sizeof mesh);
    mesh.name = bb_str(&s, "tiny");
    mesh.material = KILN_BLOB_NONE;
    mesh.vertex_count = count;
    mesh.influences = 2;
    mesh.skinning = skinning;
    mesh.first_stream = 0;
    bb_stream(&s, KILN_ATTR_POSITION, KILN_FORMAT_F32x3, 0, 3, count, 12, p);
    bb_stream(&s, KILN_ATTR_NORMAL, KILN_FORMAT_F32x3, 0, 3, count, 12, p + 3 * count);
    bb_stream(&s, KILN_ATTR_TANGENT, KILN_FORMAT_F32x3, 0, 3, count, 12, p + 6 * count);
    bb_stream(&s, KILN_ATTR_JOINTS, KILN_FORMAT_U16xN, 0, 2, count, 4, j);
    bb_stream(&s, KILN_ATTR_WEIGHTS, KILN_FORMAT_F32xN, 0, 2, count, 8, w);
    mesh.stream_count = 5;
    bb_add(&s.meshes, &mesh);
    unsigned char *blob = bb_build(&s, size);
    bb_free(&s);
    free(p), free(j), free(w);
    return blob;
}

static void check_vec(const float *got, const double *want, double tol, const char *what, kiln_simd path)
{
    for (int c = 0; c < 3; c++)
        cr_expect(fabs(got[c] - want[c]) <= tol, "%s (%s): component %d is %.9g, expected %.9g", what,
                  kiln_simd_name(path), c, got[c], want[c]);
}

/* The paths this machine runs; every test forces each in turn and restores AUTO. */
static int paths(kiln_simd out[AF_PATH_COUNT]) { return af_paths(out); }

/* ---- hand-computed ------------------------------------------------------------------------------ */

/* K = T(1, 2, 3) · Rz(90°) · S(2, 1, 1): p = (1, 1, 1) -> A p + t = (0, 4, 4); the normal
 * (1, 1, 0)/√2 goes by A^-T = Rz · S^-1 to (-1, 0.5, 0)/|.|, the tangent (1, -1, 0)/√2 by A to
 * (1, 2, 0)/|.|: still perpendicular, which transforming both the same way would break. */
Test(skin, single_influence_is_the_matrix)
{
    const float r = 0.70710678f;
    tiny_vertex v = {{1, 1, 1}, {r, r, 0}, {r, -r, 0}, {1, 0}, {1, 0}};
    size_t size;
    unsigned char *mem = tiny_blob(&v, 1, 2, KILN_SKIN_LINEAR, &size);
    const kiln_blob *blob = sf_load(mem, size);
    float skin[32] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, /* bone 0: identity */
                      0, 2, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 1, 2, 3, 1};
    kiln_skin_dual_quat dq[2];
    cr_assert_eq(kiln_pose_skin_dual_quats(skin, dq, 2), KILN_OK);
    cr_expect_eq(dq[0].stretched, 0u, "identity has no stretch");
    cr_expect_eq(dq[1].stretched, 1u, "S(2, 1, 1) is a stretch");
    const double want_p[3] = {0, 4, 4}, want_n[3] = {-2 / sqrt(5), 1 / sqrt(5), 0}, want_t[3] = {1 / sqrt(5), 2 / sqrt(5), 0};
    kiln_simd ps[AF_PATH_COUNT];
    int np = paths(ps);
    for (int i = 0; i < np; i++)
        for (int method = 0; method < 2; method++) {
            kiln_simd_force(ps[i]);
            skin_in in = {blob, 0, method ? KILN_SKIN_FORCE_DUAL_QUAT : KILN_SKIN_FORCE_LINEAR, 2, skin, dq, NULL};
            skin_out o = out_alloc(1);
            cr_assert_eq(skin_range(&in, 0, 1, &o, WANT_NT), KILN_OK);
            const char *m = method ? "DQS" : "LBS";
            char what[32];
            snprintf(what, sizeof what, "%s position", m), check_vec(o.p, want_p, TOL_HAND, what, ps[i]);
            snprintf(what, sizeof what, "%s normal", m), check_vec(o.n, want_n, TOL_HAND, what, ps[i]);
            snprintf(what, sizeof what, "%s tangent", m), check_vec(o.t, want_t, TOL_HAND, what, ps[i]);
            out_free(&o);
        }
    kiln_simd_force(KILN_SIMD_AUTO);
    fprintf(stderr, "skin.single_influence_is_the_matrix: p (0, 4, 4), n (-2, 1, 0)/sqrt5, t (1, 2, 0)/sqrt5 on %d paths, both methods\n", np);
    free(mem);
}

/* Source positions replace the mesh's stream (blend shapes feed skinning this way): with K of
 * single_influence_is_the_matrix, the source (2, 0, 1) -> Rz(90°) · (4, 0, 1) + (1, 2, 3) =
 * (1, 6, 4), by both methods, packed or 20 bytes apart; normals still come from the mesh. A
 * source overlapping an output, or a bad source stride, is refused and writes nothing. */
Test(skin, source_positions_replace_the_stream)
{
    const float r = 0.70710678f;
    tiny_vertex v[9];
    for (int i = 0; i < 9; i++) {
        tiny_vertex t = {{1, 1, 1}, {r, r, 0}, {r, -r, 0}, {1, 0}, {1, 0}};
        v[i] = t;
    }
    size_t size;
    unsigned char *mem = tiny_blob(v, 9, 2, KILN_SKIN_LINEAR, &size);
    const kiln_blob *blob = sf_load(mem, size);
    float skin[32] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 2, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 1, 2, 3, 1};
    kiln_skin_dual_quat dq[2];
    cr_assert_eq(kiln_pose_skin_dual_quats(skin, dq, 2), KILN_OK);
    /* 9 vertices (a full 8-wide batch and a tail), each source k = (2, 0, 1) + k (0, 0, 1) */
    float src[9 * 5];
    for (int k = 0; k < 9; k++) src[5 * k] = 2, src[5 * k + 1] = 0, src[5 * k + 2] = 1 + (float)k, src[5 * k + 3] = src[5 * k + 4] = -7;
    float packed[27];
    for (int k = 0; k < 9; k++) memcpy(packed + 3 * k, src + 5 * k, 12);
    const double want_n[3] = {-2 / sqrt(5), 1 / sqrt(5), 0};
    kiln_simd ps[AF_PATH_COUNT];
    int np = paths(ps);
    for (int i = 0; i < np; i++)
        for (int method = 0; method < 2; method++)
            for (int strided = 0; strided < 2; strided++) {
                kiln_simd_force(ps[i]);
                skin_out o = out_alloc(9);
                kiln_skin_desc d;
                memset(&d, 0, sizeof d);
                d.blob = blob, d.flags = method ? KILN_SKIN_FORCE_DUAL_QUAT : KILN_SKIN_FORCE_LINEAR;
                d.skin_matrices = skin, d.dual_quats = dq, d.bone_count = 2, d.vertex_count = 9;
                d.positions = o.p, d.normals = o.n;
                d.source_positions = strided ? src : packed, d.source_position_stride_bytes = strided ? 20 : 0;
                cr_assert_eq(kiln_skin_mesh(&d), KILN_OK);
                char what[48];
                for (int k = 0; k < 9; k++) {
                    const double want_p[3] = {1, 6, 4 + k};
                    snprintf(what, sizeof what, "%s%s source %d", method ? "DQS" : "LBS", strided ? " strided" : "", k);
                    check_vec(o.p + 3 * k, want_p, TOL_HAND, what, ps[i]);
                    check_vec(o.n + 3 * k, want_n, TOL_HAND, what, ps[i]);
                }
                out_free(&o);
            }
    kiln_simd_force(KILN_SIMD_AUTO);
    /* refusals: the source is an output, or overlaps one's last element; strides below 12 or not a multiple of 4 */
    float buf[40];
    memset(buf, 0x7F, sizeof buf);
    kiln_skin_desc d;
    memset(&d, 0, sizeof d);
    d.blob = blob, d.skin_matrices = skin, d.bone_count = 2, d.vertex_count = 9, d.positions = buf, d.source_positions = buf;
    cr_expect_eq(kiln_skin_mesh(&d), KILN_ERR_INVALID_ARGUMENT, "source == output");
    d.source_positions = buf + 26; /* the output's last element is floats 24..26 */
    cr_expect_eq(kiln_skin_mesh(&d), KILN_ERR_INVALID_ARGUMENT, "source overlapping the output's end");
    d.positions = buf + 27;
    d.source_positions = buf;
    d.vertex_count = 4; /* outputs at floats 27..38, source 0..11: apart */
    d.source_position_stride_bytes = 8;
    cr_expect_eq(kiln_skin_mesh(&d), KILN_ERR_INVALID_ARGUMENT, "source stride 8");
    d.source_position_stride_bytes = 14;
    cr_expect_eq(kiln_skin_mesh(&d), KILN_ERR_INVALID_ARGUMENT, "source stride 14");
    int untouched = 1;
    for (int k = 12; k < 40; k++) untouched &= buf[k] != buf[k] || buf[k] > 3e38f;
    cr_expect(untouched, "a refused call wrote its output");
    d.source_position_stride_bytes = 0;
    cr_expect_eq(kiln_skin_mesh(&d), KILN_OK, "disjoint source and output");
    fprintf(stderr, "skin.source_positions_replace_the_stream: (2, 0, 1 + k) -> (1, 6, 4 + k) on %d paths, both methods, packed "
                    "and strided; overlaps and bad strides refused\n", np);
    free(mem);
}

/* Bones: 0 identity, 1 T(1, 0, 0), 2 T(0, 2, 0), 3 Rz(90°).
 *   v0: 0.75 bone 1 + 0.25 bone 2, p (1, 2, 3) -> (1.75, 2.5, 3) by either method (pure
 *       translations blend linearly as dual quaternions too);
 *   v1: 0.5 bone 0 + 0.5 bone 3, p (1, 0, 0) -> LBS (0.5, 0.5, 0), the chord; DQS (√½, √½, 0),
 *       the 45° rotation; the normal (1, 0, 0) -> (√½, √½, 0) and the tangent (0, 1, 0) ->
 *       (-√½, √½, 0) by both (LBS renormalises the shrunk matrix's result);
 *   v2: no weights -> the root, T(10, 0, 0): (11, 2, 3). */
Test(skin, two_influences_weighted)
{
    tiny_vertex v[3] = {
        {{1, 2, 3}, {0, 0, 1}, {1, 0, 0}, {1, 2}, {0.75f, 0.25f}},
        {{1, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 3}, {0.5f, 0.5f}},
        {{1, 2, 3}, {0, 1, 0}, {1, 0, 0}, {0, 0}, {0, 0}},
    };
    size_t size;
    unsigned char *mem = tiny_blob(v, 3, 4, KILN_SKIN_LINEAR, &size);
    const kiln_blob *blob = sf_load(mem, size);
    float skin[64];
    for (int b = 0; b < 4; b++) bb_identity_matrix(skin + 16 * b);
    skin[16 + 12] = 1.0f;                                       /* T(1, 0, 0) */
    skin[32 + 13] = 2.0f;                                       /* T(0, 2, 0) */
    skin[48 + 0] = 0, skin[48 + 1] = 1, skin[48 + 4] = -1, skin[48 + 5] = 0; /* Rz(90°) */
    float root[16];
    bb_identity_matrix(root);
    root[12] = 10.0f;
    kiln_skin_dual_quat dq[4];
    cr_assert_eq(kiln_pose_skin_dual_quats(skin, dq, 4), KILN_OK);
    const double h = sqrt(0.5);
    const double p0[3] = {1.75, 2.5, 3}, p1_lbs[3] = {0.5, 0.5, 0}, p1_dqs[3] = {h, h, 0}, n1[3] = {h, h, 0},
                 t1[3] = {-h, h, 0}, p2[3] = {11, 2, 3}, z[3] = {0, 0, 1}, y[3] = {0, 1, 0};
    kiln_simd ps[AF_PATH_COUNT];
    int np = paths(ps);
    for (int i = 0; i < np; i++)
        for (int method = 0; method < 2; method++) {
            kiln_simd_force(ps[i]);
            skin_in in = {blob, 0, method ? KILN_SKIN_FORCE_DUAL_QUAT : KILN_SKIN_FORCE_LINEAR, 4, skin, dq, root};
            skin_out o = out_alloc(3);
            cr_assert_eq(skin_range(&in, 0, 3, &o, WANT_NT), KILN_OK);
            const char *m = method ? "DQS" : "LBS";
            char what[48];
            snprintf(what, sizeof what, "%s v0 position", m), check_vec(o.p, p0, TOL_HAND, what, ps[i]);
            snprintf(what, sizeof what, "%s v0 normal", m), check_vec(o.n, z, TOL_HAND, what, ps[i]);
            snprintf(what, sizeof what, "%s v1 position", m), check_vec(o.p + 3, method ? p1_dqs : p1_lbs, TOL_HAND, what, ps[i]);
            snprintf(what, sizeof what, "%s v1 normal", m), check_vec(o.n + 3, n1, TOL_HAND, what, ps[i]);
            snprintf(what, sizeof what, "%s v1 tangent", m), check_vec(o.t + 3, t1, TOL_HAND, what, ps[i]);
            snprintf(what, sizeof what, "%s v2 (root) position", m), check_vec(o.p + 6, p2, TOL_HAND, what, ps[i]);
            snprintf(what, sizeof what, "%s v2 (root) normal", m), check_vec(o.n + 6, y, TOL_HAND, what, ps[i]);
            out_free(&o);
        }
    kiln_simd_force(KILN_SIMD_AUTO);
    fprintf(stderr, "skin.two_influences_weighted: LBS chord (0.5, 0.5, 0), DQS arc (0.7071, 0.7071, 0), root vertex (11, 2, 3); %d paths\n", np);
    free(mem);
}

/* An unskinned mesh (no skeleton) is the root transform of its vertices. */
Test(skin, unskinned_mesh_takes_the_root)
{
    sf_mesh_opts o = sf_defaults(37, 0);
    size_t size;
    unsigned char *mem = sf_build(&o, &size);
    const kiln_blob *blob = sf_load(mem, size);
    float root[16];
    const float q[4] = {0, 0.6f, 0, 0.8f}, t[3] = {1, -2, 0.5f}, s[3] = {2, 2, 2};
    sf_trs(t, q, s, root);
    const float *bind = kiln_blob_stream_data(blob, kiln_blob_mesh_stream(blob, kiln_blob_meshes(blob, NULL), KILN_ATTR_POSITION, 0));
    for (int method = 0; method < 2; method++) {
        skin_in in = {blob, 0, method ? KILN_SKIN_FORCE_DUAL_QUAT : KILN_SKIN_FORCE_LINEAR, 0, NULL, NULL, root};
        skin_out so = out_alloc(37);
        cr_assert_eq(skin_range(&in, 0, 37, &so, WANT_NT), KILN_OK);
        for (uint32_t v = 0; v < 37; v++) {
            double want[3];
            for (int r = 0; r < 3; r++)
                want[r] = root[r] * bind[3 * v] + root[4 + r] * bind[3 * v + 1] + root[8 + r] * bind[3 * v + 2] + root[12 + r];
            check_vec(so.p + 3 * v, want, 1e-5, method ? "DQS root" : "LBS root", kiln_simd_active());
            cr_expect(fabs(vlen(so.n + 3 * v) - 1.0) < 1e-5);
        }
        out_free(&so);
    }
    free(mem);
}

/* ---- a cylinder through the baker ------------------------------------------------------------- */

#define CYL_RINGS 21     /* x = 0, 0.1, ..., 2 */
#define CYL_SEGMENTS 16
#define CYL_RADIUS 0.5f

/* Root > Model > Skeleton (b0 at the origin, b1 at (1, 0, 0) under it) + Mesh: a tube along X
 * of radius 0.5 with outward normals, skinned to b0 below x = 0.5, to b1 above x = 1.5, and
 * linearly in between (0.5/0.5 on the mid ring, x = 1). */
static file_bytes cylinder_cast(void)
{
    const uint32_t n = CYL_RINGS * CYL_SEGMENTS;
    float *vp = malloc(sizeof(float) * 3 * n), *vn = malloc(sizeof(float) * 3 * n), *wv = malloc(sizeof(float) * 2 * n);
    uint32_t *wb = malloc(sizeof(uint32_t) * 2 * n), *f = malloc(sizeof(uint32_t) * 6 * n);
    uint32_t nf = 0;
    for (uint32_t r = 0; r < CYL_RINGS; r++)
        for (uint32_t s = 0; s < CYL_SEGMENTS; s++) {
            uint32_t i = r * CYL_SEGMENTS + s;
            float x = 0.1f * (float)r, a = 6.2831853f * (float)s / CYL_SEGMENTS;
            vp[3 * i] = x, vp[3 * i + 1] = CYL_RADIUS * cosf(a), vp[3 * i + 2] = CYL_RADIUS * sinf(a);
            vn[3 * i] = 0, vn[3 * i + 1] = cosf(a), vn[3 * i + 2] = sinf(a);
            float w1 = fminf(fmaxf(x - 0.5f, 0.0f), 1.0f);
            wb[2 * i] = w1 > 0.5f ? 1 : 0, wb[2 * i + 1] = w1 > 0.5f ? 0 : 1;
            wv[2 * i] = w1 > 0.5f ? w1 : 1.0f - w1, wv[2 * i + 1] = w1 > 0.5f ? 1.0f - w1 : w1;
            if (r + 1 < CYL_RINGS) {
                uint32_t a0 = i, a1 = r * CYL_SEGMENTS + (s + 1) % CYL_SEGMENTS, b0 = a0 + CYL_SEGMENTS, b1 = a1 + CYL_SEGMENTS;
                uint32_t tri[6] = {a0, b0, a1, a1, b0, b1};
                memcpy(f + nf, tri, sizeof tri);
                nf += 6;
            }
        }
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    kiln_cast_writer_string(w, model, "n", "tube");
    uint32_t skel = kiln_cast_writer_node(w, model, KILN_CAST_ID_SKELETON, 3);
    const int32_t parents[2] = {-1, 0};
    const float lp[2][3] = {{0, 0, 0}, {1, 0, 0}}, lr[4] = {0, 0, 0, 1};
    for (int b = 0; b < 2; b++) {
        uint32_t bone = kiln_cast_writer_node(w, skel, KILN_CAST_ID_BONE, 4u + (uint32_t)b);
        kiln_cast_writer_string(w, bone, "n", b ? "b1" : "b0");
        kiln_cast_writer_prop(w, bone, "p", KILN_CAST_TYPE_INT, &parents[b], 1);
        kiln_cast_writer_floats(w, bone, "lp", KILN_CAST_TYPE_VEC3, lp[b], 1);
        kiln_cast_writer_floats(w, bone, "lr", KILN_CAST_TYPE_VEC4, lr, 1);
    }
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 6);
    kiln_cast_writer_string(w, mesh, "n", "tube");
    kiln_cast_writer_prop(w, mesh, "vp", KILN_CAST_TYPE_VEC3, vp, n);
    kiln_cast_writer_prop(w, mesh, "vn", KILN_CAST_TYPE_VEC3, vn, n);
    const uint32_t mi = 2;
    kiln_cast_writer_ints(w, mesh, "mi", &mi, 1);
    kiln_cast_writer_ints(w, mesh, "wb", wb, 2 * n);
    kiln_cast_writer_floats(w, mesh, "wv", KILN_CAST_TYPE_FLOAT, wv, 2 * n);
    kiln_cast_writer_ints(w, mesh, "f", f, nf);
    file_bytes out = writer_bytes(w);
    free(vp), free(vn), free(wv), free(wb), free(f);
    return out;
}

typedef struct baked_rig {
    kiln_bake_result res;
    const kiln_blob *blob;
    uint32_t bones, soa;
    kiln_soa_xform *pose;
    float *model, *skin;
    kiln_skin_dual_quat *dq;
} baked_rig;

static void rig_bake(const file_bytes *cast, uint32_t flags, baked_rig *r)
{
    memset(r, 0, sizeof *r);
    kiln_bake_input in = {"cylinder.cast", cast->data, cast->size, NULL};
    kiln_bake_options opt;
    memset(&opt, 0, sizeof opt);
    opt.flags = flags;
    kiln_diag err;
    memset(&err, 0, sizeof err);
    cr_assert_eq(kiln_bake(&in, 1, &opt, &r->res, &err), KILN_OK, "bake: %s", err.message);
    cr_assert_eq(kiln_blob_load(r->res.blob, r->res.size, 0, &r->blob, &err), KILN_OK, "load: %s", err.message);
    const kiln_blob_skeleton *sk = kiln_blob_skeletons(r->blob, NULL);
    r->bones = sk->bone_count, r->soa = sk->soa_count;
    r->pose = aligned_alloc(64, sizeof(kiln_soa_xform) * r->soa);
    r->model = malloc(sizeof(float) * 16 * r->bones), r->skin = malloc(sizeof(float) * 16 * r->bones);
    r->dq = malloc(sizeof(kiln_skin_dual_quat) * r->bones);
    cr_assert(r->pose && r->model && r->skin && r->dq);
    memcpy(r->pose, kiln_blob_rest_pose(r->blob, NULL) + sk->first_soa, sizeof(kiln_soa_xform) * r->soa);
}

/* Model, skin and dual quaternions of the current pose. */
static void rig_eval(baked_rig *r)
{
    cr_assert_eq(kiln_pose_local_to_object(r->blob, 0, r->pose, NULL, r->model, r->bones), KILN_OK);
    cr_assert_eq(kiln_pose_skin_matrices(r->blob, 0, r->model, r->skin, r->bones), KILN_OK);
    cr_assert_eq(kiln_pose_skin_dual_quats(r->skin, r->dq, r->bones), KILN_OK);
}

static void rig_free(baked_rig *r)
{
    kiln_bake_result_free(&r->res);
    free(r->pose), free(r->model), free(r->skin), free(r->dq);
    memset(r, 0, sizeof *r);
}

/* Turns bone 1 by `deg` degrees about its local X (the tube's axis). */
static void rig_twist(baked_rig *r, double deg)
{
    double a = deg * 3.14159265358979323846 / 360.0;
    r->pose[0].qx[1] = (float)sin(a), r->pose[0].qy[1] = 0, r->pose[0].qz[1] = 0, r->pose[0].qw[1] = (float)cos(a);
}

static const float *bind_positions(const kiln_blob *blob, uint32_t mesh)
{
    const kiln_blob_stream *s = kiln_blob_mesh_stream(blob, kiln_blob_meshes(blob, NULL) + mesh, KILN_ATTR_POSITION, 0);
    cr_assert(s && s->format == KILN_FORMAT_F32x3 && s->stride == 12, "float positions expected");
    return kiln_blob_stream_data(blob, s);
}

Test(skin, rest_pose_gives_the_bind_pose)
{
    file_bytes cast = cylinder_cast();
    baked_rig r;
    rig_bake(&cast, 0, &r);
    rig_eval(&r);
    uint32_t n = vertex_count(r.blob, 0);
    const float *bind = bind_positions(r.blob, 0);
    const kiln_blob_stream *ns = kiln_blob_mesh_stream(r.blob, kiln_blob_meshes(r.blob, NULL), KILN_ATTR_NORMAL, 0);
    const float *bind_n = kiln_blob_stream_data(r.blob, ns);
    double worst = 0;
    kiln_simd ps[AF_PATH_COUNT];
    int np = paths(ps);
    for (int i = 0; i < np; i++)
        for (int method = 0; method < 2; method++) {
            kiln_simd_force(ps[i]);
            skin_in in = {r.blob, 0, method ? KILN_SKIN_FORCE_DUAL_QUAT : KILN_SKIN_FORCE_LINEAR, r.bones, r.skin, r.dq, NULL};
            skin_out o = out_alloc(n);
            cr_assert_eq(skin_range(&in, 0, n, &o, WANT_N), KILN_OK);
            for (uint32_t k = 0; k < 3 * n; k++) {
                worst = fmax(worst, fabs(o.p[k] - bind[k]));
                worst = fmax(worst, fabs(o.n[k] - bind_n[k]));
            }
            out_free(&o);
        }
    kiln_simd_force(KILN_SIMD_AUTO);
    fprintf(stderr, "skin.rest_pose_gives_the_bind_pose: %u vertices, max |skinned - bind| %.2e (positions and normals, LBS and DQS, %d paths)\n",
            n, worst, np);
    cr_expect(worst <= 1e-5, "rest pose moves the mesh by %.3g", worst);
    rig_free(&r);
    file_bytes_free(&cast);
}

/* The reason DQS exists: a 90° twist between two bones. On the mid ring (weights 0.5/0.5) LBS
 * averages p and its 90° rotation, a chord at cos 45° ≈ 0.71 of the radius; DQS rotates by
 * 45° and keeps it. Measured per vertex, printed, asserted below 0.75 and above 0.95. */
Test(skin, twist_dqs_keeps_the_volume)
{
    file_bytes cast = cylinder_cast();
    baked_rig r;
    rig_bake(&cast, KILN_BAKE_NO_OPTIMIZE, &r);
    rig_twist(&r, 90.0);
    rig_eval(&r);
    uint32_t n = vertex_count(r.blob, 0);
    const float *bind = bind_positions(r.blob, 0);
    kiln_simd ps[AF_PATH_COUNT];
    int np = paths(ps);
    for (int i = 0; i < np; i++) {
        double mid_min[2] = {1e9, 1e9}, mid_max[2] = {0, 0}, all_min[2] = {1e9, 1e9}, nrm_err = 0;
        for (int method = 0; method < 2; method++) {
            kiln_simd_force(ps[i]);
            skin_in in = {r.blob, 0, method ? KILN_SKIN_FORCE_DUAL_QUAT : KILN_SKIN_FORCE_LINEAR, r.bones, r.skin, r.dq, NULL};
            skin_out o = out_alloc(n);
            cr_assert_eq(skin_range(&in, 0, n, &o, WANT_N), KILN_OK);
            for (uint32_t v = 0; v < n; v++) {
                const float *p = o.p + 3 * v;
                double ratio = sqrt((double)p[1] * p[1] + (double)p[2] * p[2]) / CYL_RADIUS;
                all_min[method] = fmin(all_min[method], ratio);
                if (fabs(bind[3 * v] - 1.0f) < 1e-4f) {
                    mid_min[method] = fmin(mid_min[method], ratio);
                    mid_max[method] = fmax(mid_max[method], ratio);
                    cr_expect(fabs(p[0] - 1.0) < 1e-5, "the mid ring stays at x = 1 (x = %g)", p[0]);
                }
                nrm_err = fmax(nrm_err, fabs(vlen(o.n + 3 * v) - 1.0));
            }
            out_free(&o);
        }
        fprintf(stderr,
                "skin.twist_dqs_keeps_the_volume (%s): 90 deg twist, mid ring radius / rest radius: LBS %.4f..%.4f, "
                "DQS %.4f..%.4f; smallest ring anywhere LBS %.4f DQS %.4f; max ||n| - 1| %.1e\n",
                kiln_simd_name(ps[i]), mid_min[0], mid_max[0], mid_min[1], mid_max[1], all_min[0], all_min[1], nrm_err);
        cr_expect(mid_max[0] < 0.75, "LBS should collapse the mid ring (%.4f)", mid_max[0]);
        cr_expect(mid_min[1] > 0.95 && mid_max[1] < 1.05, "DQS should keep the mid ring (%.4f..%.4f)", mid_min[1], mid_max[1]);
        cr_expect(nrm_err < 1e-5, "normals not unit: %.3g", nrm_err);
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    rig_free(&r);
    file_bytes_free(&cast);
}

/* The same tube baked with 16-bit positions and octahedral normals: every skinned position
 * within the quantisation step of the float bake's (half a step per axis, through matrices of
 * norm <= 1 here), every normal within 1e-4 rad (octahedral 16-bit, through the transform). */
Test(skin, quantised_streams_match_float)
{
    file_bytes cast = cylinder_cast();
    baked_rig rf, rq;
    rig_bake(&cast, KILN_BAKE_NO_OPTIMIZE, &rf);
    rig_bake(&cast, KILN_BAKE_NO_OPTIMIZE | KILN_BAKE_QUANTIZE_POSITIONS | KILN_BAKE_QUANTIZE_NORMALS, &rq);
    const kiln_blob_mesh *mq = kiln_blob_meshes(rq.blob, NULL);
    const kiln_blob_stream *qs = kiln_blob_mesh_stream(rq.blob, mq, KILN_ATTR_POSITION, 0);
    cr_assert_eq(qs->format, KILN_FORMAT_UNORM16x4);
    cr_assert_eq(kiln_blob_mesh_stream(rq.blob, mq, KILN_ATTR_NORMAL, 0)->format, KILN_FORMAT_OCT16x2);
    double step2 = 0;
    for (int c = 0; c < 3; c++) step2 += pow(qs->decode_scale[c] / 65535.0 / 2.0, 2);
    const double tol_p = sqrt(step2) + 1e-6, tol_n = 1e-4;
    uint32_t n = vertex_count(rf.blob, 0);
    kiln_simd ps[AF_PATH_COUNT];
    int np = paths(ps);
    for (int twist = 0; twist < 2; twist++) {
        rig_twist(&rf, twist ? 75.0 : 0.0), rig_twist(&rq, twist ? 75.0 : 0.0);
        rig_eval(&rf), rig_eval(&rq);
        for (int i = 0; i < np; i++)
            for (int method = 0; method < 2; method++) {
                kiln_simd_force(ps[i]);
                uint32_t fl = method ? KILN_SKIN_FORCE_DUAL_QUAT : KILN_SKIN_FORCE_LINEAR;
                skin_in inf = {rf.blob, 0, fl, rf.bones, rf.skin, rf.dq, NULL}, inq = {rq.blob, 0, fl, rq.bones, rq.skin, rq.dq, NULL};
                skin_out of = out_alloc(n), oq = out_alloc(n);
                cr_assert_eq(skin_range(&inf, 0, n, &of, WANT_N), KILN_OK);
                cr_assert_eq(skin_range(&inq, 0, n, &oq, WANT_N), KILN_OK);
                double ep = 0, en = 0;
                for (uint32_t v = 0; v < n; v++) {
                    float d[3] = {of.p[3 * v] - oq.p[3 * v], of.p[3 * v + 1] - oq.p[3 * v + 1], of.p[3 * v + 2] - oq.p[3 * v + 2]};
                    ep = fmax(ep, vlen(d));
                    /* the angle as atan2(|a × b|, a · b): acos of a dot near 1 would turn the float
                     * rounding of the two lengths into 1e-4 rad */
                    const float *a = of.n + 3 * v, *b = oq.n + 3 * v;
                    double cx = (double)a[1] * b[2] - (double)a[2] * b[1], cy = (double)a[2] * b[0] - (double)a[0] * b[2],
                           cz = (double)a[0] * b[1] - (double)a[1] * b[0];
                    double dot = (double)a[0] * b[0] + (double)a[1] * b[1] + (double)a[2] * b[2];
                    en = fmax(en, atan2(sqrt(cx * cx + cy * cy + cz * cz), dot));
                }
                fprintf(stderr, "skin.quantised_streams_match_float (%s, %s, twist %d): position %.2e (step bound %.2e), normal %.2e rad\n",
                        kiln_simd_name(ps[i]), method ? "DQS" : "LBS", twist ? 75 : 0, ep, tol_p, en);
                cr_expect(ep <= tol_p, "quantised positions off by %.3g (> %.3g)", ep, tol_p);
                cr_expect(en <= tol_n, "quantised normals off by %.3g rad", en);
                out_free(&of), out_free(&oq);
            }
    }
    kiln_simd_force(KILN_SIMD_AUTO);
    rig_free(&rf), rig_free(&rq);
    file_bytes_free(&cast);
}

/* ---- properties on random meshes ------------------------------------------------------------------ */

/* Scaled, non-uniformly scaled and rotated bones: normals and tangents come out unit length and
 * still perpendicular (the fixture's tangents are perpendicular to its normals), which needs
 * the inverse transpose for one and the matrix for the other. */
Test(skin, normals_unit_and_perpendicular)
{
    const uint32_t n = 2000;
    kiln_simd ps[AF_PATH_COUNT];
    int np = paths(ps);
    for (uint32_t infl = 1; infl <= 8; infl += 3) {
        sf_mesh_opts o = sf_defaults(n, infl);
        o.seed = 40 + infl;
        size_t size;
        unsigned char *mem = sf_build(&o, &size);
        const kiln_blob *blob = sf_load(mem, size);
        float *skin = sf_matrices(o.bones, 9 + infl, 1);
        kiln_skin_dual_quat *dq = malloc(sizeof *dq * o.bones);
        kiln_pose_skin_dual_quats(skin, dq, o.bones);
        for (int i = 0; i < np; i++)
            for (int method = 0; method < 2; method++) {
                kiln_simd_force(ps[i]);
                skin_in in = {blob, 0, method ? KILN_SKIN_FORCE_DUAL_QUAT : KILN_SKIN_FORCE_LINEAR, o.bones, skin, dq, NULL};
                skin_out so = out_alloc(n);
                cr_assert_eq(skin_range(&in, 0, n, &so, WANT_NT), KILN_OK);
                double unit = 0, perp = 0;
                for (uint32_t v = 0; v < n; v++) {
                    const float *nv = so.n + 3 * v, *tv = so.t + 3 * v;
                    unit = fmax(unit, fmax(fabs(vlen(nv) - 1.0), fabs(vlen(tv) - 1.0)));
                    perp = fmax(perp, fabs((double)nv[0] * tv[0] + (double)nv[1] * tv[1] + (double)nv[2] * tv[2]));
                }
                fprintf(stderr, "skin.normals_unit_and_perpendicular (%s, %s, %u influences): max ||n|-1|, ||t|-1| %.1e, max |n.t| %.1e\n",
                        kiln_simd_name(ps[i]), method ? "DQS" : "LBS", infl, unit, perp);
                cr_expect(unit < 1e-5, "not unit: %.3g", unit);
                cr_expect(perp < 1e-4, "normal and tangent no longer perpendicular: %.3g", perp);
                out_free(&so);
            }
        free(skin), free(dq), free(mem);
    }
    kiln_simd_force(KILN_SIMD_AUTO);
}

/* Every influence count, every stream format, vertices without weights, a count that is not a
 * multiple of 8 or 16, rigid and scaled bones, both methods: the SIMD paths against the scalar
 * one. */
Test(skin, simd_paths_agree)
{
    static const uint32_t pos_formats[3] = {KILN_FORMAT_F32x3, KILN_FORMAT_F32x4, KILN_FORMAT_UNORM16x4};
    static const uint32_t dir_formats[3] = {KILN_FORMAT_F32x3, KILN_FORMAT_F32x4, KILN_FORMAT_OCT16x2};
    kiln_simd ps[AF_PATH_COUNT];
    int np = paths(ps);
    double worst[AF_PATH_COUNT] = {0}; /* by path - 1 */
    const uint32_t n = 1003;
    for (uint32_t infl = 0; infl <= 8; infl++)
        for (int f = 0; f < 3; f++) {
            sf_mesh_opts o = sf_defaults(n, infl);
            o.pos_format = pos_formats[f], o.dir_format = dir_formats[f];
            o.unweighted_every = infl ? 29 : 0;
            o.seed = 100 + infl * 3 + (uint32_t)f;
            size_t size;
            unsigned char *mem = sf_build(&o, &size);
            const kiln_blob *blob = sf_load(mem, size);
            for (int scaled = 0; scaled < 2; scaled++) {
                float *skin = sf_matrices(o.bones, o.seed + (uint32_t)scaled, scaled);
                kiln_skin_dual_quat *dq = malloc(sizeof *dq * o.bones);
                kiln_pose_skin_dual_quats(skin, dq, o.bones);
                float root[16];
                const float q[4] = {0.28f, 0, 0, 0.96f}, t[3] = {0.5f, 0, -1}, s[3] = {1, 1.5f, 1};
                sf_trs(t, q, s, root);
                for (int method = 0; method < 2; method++) {
                    skin_in in = {blob, 0, method ? KILN_SKIN_FORCE_DUAL_QUAT : KILN_SKIN_FORCE_LINEAR, o.bones, skin, dq, root};
                    skin_out ref = out_alloc(n);
                    kiln_simd_force(KILN_SIMD_SCALAR);
                    cr_assert_eq(skin_range(&in, 0, n, &ref, WANT_NT), KILN_OK);
                    for (int i = 0; i < np; i++) {
                        if (ps[i] == KILN_SIMD_SCALAR) continue;
                        kiln_simd_force(ps[i]);
                        skin_out got = out_alloc(n);
                        cr_assert_eq(skin_range(&in, 0, n, &got, WANT_NT), KILN_OK);
                        double e = 0;
                        for (uint32_t k = 0; k < 3 * n; k++) {
                            double d = fmax(fabs(got.p[k] - ref.p[k]), fmax(fabs(got.n[k] - ref.n[k]), fabs(got.t[k] - ref.t[k])));
                            e = isnan(d) ? INFINITY : fmax(e, d);
                        }
                        worst[ps[i] - 1] = fmax(worst[ps[i] - 1], e);
                        cr_expect(e <= TOL_SIMD, "%s vs scalar: %.3g (%u influences, formats %d, %s, %s bones)", kiln_simd_name(ps[i]), e,
                                  infl, f, method ? "DQS" : "LBS", scaled ? "scaled" : "rigid");
                        out_free(&got);
                    }
                    out_free(&ref);
                }
                free(skin), free(dq);
            }
            free(mem);
        }
    kiln_simd_force(KILN_SIMD_AUTO);
    char list[128] = "";
    for (int i = 0; i < np; i++) {
        if (ps[i] == KILN_SIMD_SCALAR) continue;
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s %.2e", len ? ", " : "", kiln_simd_name(ps[i]), worst[ps[i] - 1]);
    }
    fprintf(stderr, "skin.simd_paths_agree: max |path - scalar| over positions, normals, tangents: %s (%d paths)\n",
            np > 1 ? list : "no SIMD path", np);
}

/* Splitting a mesh into ranges gives the same bytes as one call; a strided (interleaved)
 * output gives the same values as packed ones and leaves the bytes between elements alone. */
Test(skin, ranges_and_strides)
{
    const uint32_t n = 517;
    sf_mesh_opts o = sf_defaults(n, 4);
    size_t size;
    unsigned char *mem = sf_build(&o, &size);
    const kiln_blob *blob = sf_load(mem, size);
    float *skin = sf_matrices(o.bones, 3, 1);
    kiln_skin_dual_quat *dq = malloc(sizeof *dq * o.bones);
    kiln_pose_skin_dual_quats(skin, dq, o.bones);
    kiln_simd ps[AF_PATH_COUNT];
    int np = paths(ps);
    for (int i = 0; i < np; i++)
        for (int method = 0; method < 2; method++) {
            kiln_simd_force(ps[i]);
            skin_in in = {blob, 0, method ? KILN_SKIN_FORCE_DUAL_QUAT : KILN_SKIN_FORCE_LINEAR, o.bones, skin, dq, NULL};
            skin_out whole = out_alloc(n), parts = out_alloc(n);
            cr_assert_eq(skin_range(&in, 0, n, &whole, WANT_NT), KILN_OK);
            const uint32_t cuts[4] = {0, 13, 300, n};
            for (int c = 0; c < 3; c++) {
                skin_out at = {parts.p + 3 * cuts[c], parts.n + 3 * cuts[c], parts.t + 3 * cuts[c]};
                cr_assert_eq(skin_range(&in, cuts[c], cuts[c + 1] - cuts[c], &at, WANT_NT), KILN_OK);
            }
            cr_expect(memcmp(whole.p, parts.p, 12 * n) == 0 && memcmp(whole.n, parts.n, 12 * n) == 0 &&
                          memcmp(whole.t, parts.t, 12 * n) == 0,
                      "%s: ranges differ from one call", kiln_simd_name(ps[i]));
            /* positions and normals interleaved, 40 bytes per vertex, sentinels in between */
            float *inter = malloc(40 * n);
            memset(inter, 0x5A, 40 * n);
            kiln_skin_desc d;
            memset(&d, 0, sizeof d);
            d.blob = blob, d.flags = in.flags, d.skin_matrices = skin, d.dual_quats = dq, d.bone_count = o.bones;
            d.vertex_count = n, d.positions = inter, d.position_stride_bytes = 40, d.normals = inter + 4,
            d.normal_stride_bytes = 40;
            cr_assert_eq(kiln_skin_mesh(&d), KILN_OK);
            int same = 1, untouched = 1;
            for (uint32_t v = 0; v < n; v++) {
                same &= memcmp(inter + 10 * v, whole.p + 3 * v, 12) == 0 && memcmp(inter + 10 * v + 4, whole.n + 3 * v, 12) == 0;
                const unsigned char *b = (const unsigned char *)(inter + 10 * v);
                for (int k = 12; k < 16; k++) untouched &= b[k] == 0x5A;
                for (int k = 28; k < 40; k++) untouched &= b[k] == 0x5A;
            }
            cr_expect(same, "%s: strided outputs differ from packed ones", kiln_simd_name(ps[i]));
            cr_expect(untouched, "%s: strided outputs wrote between elements", kiln_simd_name(ps[i]));
            free(inter);
            out_free(&whole), out_free(&parts);
        }
    kiln_simd_force(KILN_SIMD_AUTO);
    free(skin), free(dq), free(mem);
}

/* A joint index past the skeleton, in a blob loaded with KILN_BLOB_LOAD_TRUSTED (full
 * verification rejects it), is clamped to the last bone: no read past the matrices. */
Test(skin, joints_clamped_on_trusted_blobs)
{
    const uint32_t n = 24;
    sf_mesh_opts o = sf_defaults(n, 4);
    o.bones = 5;
    size_t size;
    unsigned char *mem = sf_build(&o, &size);
    const kiln_blob *blob = sf_load(mem, size);
    const kiln_blob_stream *js = kiln_blob_mesh_stream(blob, kiln_blob_meshes(blob, NULL), KILN_ATTR_JOINTS, 0);
    uint16_t *joints = (uint16_t *)(void *)(mem + js->offset);
    /* the expected result: the same mesh with those joints at the last bone */
    unsigned char *fixed = aligned_alloc(64, size);
    memcpy(fixed, mem, size);
    uint16_t *fixed_joints = (uint16_t *)(void *)(fixed + js->offset);
    for (uint32_t v = 0; v < n; v += 3) joints[v * (js->stride / 2) + 1] = 0xFFFF, fixed_joints[v * (js->stride / 2) + 1] = 4;
    for (uint32_t v = 0; v < n; v += 5) joints[v * (js->stride / 2)] = 7, fixed_joints[v * (js->stride / 2)] = 4;
    const kiln_blob *bad = NULL, *good = NULL;
    cr_assert_neq(kiln_blob_load(mem, size, KILN_BLOB_LOAD_NO_CRC, &bad, NULL), KILN_OK, "full verification must reject the joints");
    cr_assert_eq(kiln_blob_load(mem, size, KILN_BLOB_LOAD_TRUSTED, &bad, NULL), KILN_OK);
    cr_assert_eq(kiln_blob_load(fixed, size, KILN_BLOB_LOAD_TRUSTED, &good, NULL), KILN_OK);
    float *skin = sf_matrices(o.bones, 5, 1);
    kiln_skin_dual_quat dq[5];
    kiln_pose_skin_dual_quats(skin, dq, o.bones);
    kiln_simd ps[AF_PATH_COUNT];
    int np = paths(ps);
    for (int i = 0; i < np; i++)
        for (int method = 0; method < 2; method++) {
            kiln_simd_force(ps[i]);
            uint32_t fl = method ? KILN_SKIN_FORCE_DUAL_QUAT : KILN_SKIN_FORCE_LINEAR;
            skin_in ib = {bad, 0, fl, o.bones, skin, dq, NULL}, ig = {good, 0, fl, o.bones, skin, dq, NULL};
            skin_out ob = out_alloc(n), og = out_alloc(n);
            cr_assert_eq(skin_range(&ib, 0, n, &ob, WANT_NT), KILN_OK);
            cr_assert_eq(skin_range(&ig, 0, n, &og, WANT_NT), KILN_OK);
            cr_expect(memcmp(ob.p, og.p, 12 * n) == 0 && memcmp(ob.n, og.n, 12 * n) == 0, "%s %s: clamped joints differ",
                      kiln_simd_name(ps[i]), method ? "DQS" : "LBS");
            out_free(&ob), out_free(&og);
        }
    kiln_simd_force(KILN_SIMD_AUTO);
    free(skin), free(mem), free(fixed);
}

/* ---- the dual quaternion conversion ---------------------------------------------------------------- */

static void check_decomposition(const float *k, const kiln_skin_dual_quat *d, const char *what)
{
    double qn = 0;
    for (int i = 0; i < 4; i++) qn += (double)d->real[i] * d->real[i];
    cr_expect(fabs(qn - 1.0) < 1e-6, "%s: real part not unit (%.9g)", what, qn);
    cr_expect(d->real[3] >= 0.0f, "%s: w < 0", what);
    /* the dual part's translation: 2 dual ⊗ conj(real) */
    const float *r = d->real, *q = d->dual;
    double t[3] = {2 * (r[3] * q[0] - q[3] * r[0] + r[1] * q[2] - r[2] * q[1]),
                   2 * (r[3] * q[1] - q[3] * r[1] + r[2] * q[0] - r[0] * q[2]),
                   2 * (r[3] * q[2] - q[3] * r[2] + r[0] * q[1] - r[1] * q[0])};
    double worst = 0;
    for (int s = 0; s < 4; s++) {
        const double p[3] = {s == 1 ? 1.0 : 0.3, s == 2 ? 1.0 : -0.7, s == 3 ? 1.0 : 0.2};
        double sp[3], want[3], got[3];
        for (int row = 0; row < 3; row++) {
            sp[row] = d->stretch[row] * p[0] + d->stretch[4 + row] * p[1] + d->stretch[8 + row] * p[2];
            want[row] = k[row] * p[0] + k[4 + row] * p[1] + k[8 + row] * p[2] + k[12 + row];
        }
        /* R(real) · sp + t */
        double x = r[0], y = r[1], z = r[2], w = r[3];
        double c[3] = {y * sp[2] - z * sp[1] + w * sp[0], z * sp[0] - x * sp[2] + w * sp[1], x * sp[1] - y * sp[0] + w * sp[2]};
        got[0] = sp[0] + 2 * (y * c[2] - z * c[1]) + t[0];
        got[1] = sp[1] + 2 * (z * c[0] - x * c[2]) + t[1];
        got[2] = sp[2] + 2 * (x * c[1] - y * c[0]) + t[2];
        for (int row = 0; row < 3; row++) worst = fmax(worst, fabs(got[row] - want[row]));
    }
    cr_expect(worst < 2e-5, "%s: R (S p) + t differs from K p by %.3g", what, worst);
}

Test(skin, dual_quats_decompose)
{
    float k[6][16];
    const float q[4] = {0.1f, -0.5f, 0.3f, 0.806f}, t[3] = {1, -2, 3};
    float qn[4];
    double l = 0;
    for (int i = 0; i < 4; i++) l += (double)q[i] * q[i];
    for (int i = 0; i < 4; i++) qn[i] = (float)(q[i] / sqrt(l));
    const float rigid[3] = {1, 1, 1}, uniform[3] = {2, 2, 2}, nonuni[3] = {0.5f, 1, 3}, mirror[3] = {-1, 1, 1}, flat[3] = {1, 0, 1};
    sf_trs(t, qn, rigid, k[0]);
    sf_trs(t, qn, uniform, k[1]);
    sf_trs(t, qn, nonuni, k[2]);
    sf_trs(t, qn, mirror, k[3]);
    sf_trs(t, qn, flat, k[4]);
    /* a shear: the rotation then a non-uniform scale along rotated axes (a scaled parent without
     * segment scale compensation makes these) */
    float sc[16], r[16];
    const float zero[3] = {0, 0, 0}, id[4] = {0, 0, 0, 1}, s2[3] = {1, 2.5f, 1};
    sf_trs(zero, id, s2, sc);
    sf_trs(t, qn, rigid, r);
    for (int c = 0; c < 4; c++)
        for (int row = 0; row < 4; row++) {
            double acc = 0;
            for (int m = 0; m < 4; m++) acc += sc[m * 4 + row] * r[c * 4 + m];
            k[5][c * 4 + row] = (float)acc;
        }
    kiln_skin_dual_quat d[6];
    cr_assert_eq(kiln_pose_skin_dual_quats(&k[0][0], d, 6), KILN_OK);
    static const char *const names[6] = {"rigid", "uniform scale", "non-uniform scale", "mirror", "zero scale", "shear"};
    for (int i = 0; i < 6; i++) check_decomposition(k[i], &d[i], names[i]);
    cr_expect_eq(d[0].stretched, 0u, "rigid: no stretch");
    for (int i = 0; i < 12; i++) cr_expect_eq(d[0].stretch[i], i == 0 || i == 5 || i == 10 ? 1.0f : 0.0f, "rigid: stretch[%d]", i);
    for (int i = 1; i < 6; i++) cr_expect_eq(d[i].stretched, 1u, "%s: stretched", names[i]);
    /* the rotation is the rigid one under uniform and axis scales (the polar factor); a mirror
     * turns it by 180° about the mirrored axis instead, so that it stays a proper rotation */
    for (int i = 1; i <= 2; i++)
        for (int c = 0; c < 4; c++)
            cr_expect(fabs(d[i].real[c] - d[0].real[c]) < 1e-6, "%s: rotation %d is %.7f, rigid %.7f", names[i], c, d[i].real[c],
                      d[0].real[c]);
    /* a mirror keeps a proper rotation: the reflection is in the stretch (det < 0) */
    const float *s = d[3].stretch;
    double det = s[0] * (s[5] * s[10] - s[9] * s[6]) - s[4] * (s[1] * s[10] - s[9] * s[2]) + s[8] * (s[1] * s[6] - s[5] * s[2]);
    cr_expect(det < 0, "mirror: the stretch should carry the reflection (det %g)", det);
    cr_expect_eq(kiln_pose_skin_dual_quats(NULL, d, 1), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_pose_skin_dual_quats(NULL, NULL, 0), KILN_OK);
}

/* ---- errors ------------------------------------------------------------------------------------ */

Test(skin, argument_errors)
{
    sf_mesh_opts o = sf_defaults(10, 4);
    o.bones = 6;
    o.dir_format = 0; /* no normals, no tangents */
    size_t size;
    unsigned char *mem = sf_build(&o, &size);
    const kiln_blob *blob = sf_load(mem, size);
    float *skin = sf_matrices(6, 1, 0);
    kiln_skin_dual_quat dq[6];
    kiln_pose_skin_dual_quats(skin, dq, 6);
    float out[60], nrm[60];
    kiln_skin_desc d, base;
    memset(&base, 0, sizeof base);
    base.blob = blob, base.skin_matrices = skin, base.dual_quats = dq, base.bone_count = 6, base.vertex_count = 10;
    base.positions = out;
#define EXPECT_RESULT(want, edit)                                                                         \
    do {                                                                                                  \
        d = base;                                                                                         \
        edit;                                                                                             \
        kiln_result r_ = kiln_skin_mesh(&d);                                                              \
        cr_expect_eq(r_, want, "%s: %s, expected %s", #edit, kiln_result_name(r_), kiln_result_name(want)); \
    } while (0)
    EXPECT_RESULT(KILN_OK, (void)0);
    cr_expect_eq(kiln_skin_mesh(NULL), KILN_ERR_INVALID_ARGUMENT);
    EXPECT_RESULT(KILN_ERR_INVALID_ARGUMENT, d.blob = NULL);
    EXPECT_RESULT(KILN_ERR_INVALID_ARGUMENT, d.mesh = 1);
    EXPECT_RESULT(KILN_ERR_INVALID_ARGUMENT, d.first_vertex = 5);
    EXPECT_RESULT(KILN_ERR_INVALID_ARGUMENT, d.first_vertex = 11; d.vertex_count = 0);
    EXPECT_RESULT(KILN_OK, d.first_vertex = 10; d.vertex_count = 0);
    EXPECT_RESULT(KILN_ERR_INVALID_ARGUMENT, d.flags = KILN_SKIN_FORCE_LINEAR | KILN_SKIN_FORCE_DUAL_QUAT);
    EXPECT_RESULT(KILN_ERR_INVALID_ARGUMENT, d.flags = 0x80);
    EXPECT_RESULT(KILN_ERR_INVALID_ARGUMENT, d.position_stride_bytes = 8);
    EXPECT_RESULT(KILN_ERR_INVALID_ARGUMENT, d.position_stride_bytes = 14);
    EXPECT_RESULT(KILN_ERR_INVALID_ARGUMENT, d.skin_matrices = NULL);
    EXPECT_RESULT(KILN_OK, d.dual_quats = NULL);
    EXPECT_RESULT(KILN_ERR_INVALID_ARGUMENT, d.flags = KILN_SKIN_FORCE_DUAL_QUAT; d.dual_quats = NULL);
    EXPECT_RESULT(KILN_OK, d.flags = KILN_SKIN_FORCE_DUAL_QUAT; d.skin_matrices = NULL);
    EXPECT_RESULT(KILN_ERR_BUFFER_TOO_SMALL, d.bone_count = 5);
    EXPECT_RESULT(KILN_ERR_NOT_FOUND, d.normals = nrm);
    EXPECT_RESULT(KILN_ERR_NOT_FOUND, d.positions = NULL; d.tangents = nrm);
    EXPECT_RESULT(KILN_OK, d.positions = NULL); /* nothing wanted: nothing to do */
#undef EXPECT_RESULT
    free(skin), free(mem);
}

/* ---- the corpus -------------------------------------------------------------------------------- */

/* Row-major JSON 4x4 into column-major double. */
static int json_matrix(const jr_value *v, double m[16])
{
    if (!jr_is_arr(v) || jr_len(v) != 4) return 0;
    for (int r = 0; r < 4; r++) {
        const jr_value *row = jr_at(v, (size_t)r);
        if (!jr_is_arr(row) || jr_len(row) != 4) return 0;
        for (int c = 0; c < 4; c++) m[c * 4 + r] = jr_num(jr_at(row, (size_t)c));
    }
    return 1;
}

/* What the model's Cast file holds: the first skinned mesh (vp, mi, wb, wv), the bone names in
 * Cast order, and whether it has IK handles, constraints or blend shapes. */
typedef struct cast_model {
    kiln_cast_doc *doc;
    const char *mesh_name;
    uint32_t vertices, mi, bones;
    float *vp, *wv;
    uint32_t *wb;
    const char **bone_names;
    uint32_t ik, constraints, shapes;
} cast_model;

static void cast_model_read(const file_bytes *f, cast_model *cm)
{
    memset(cm, 0, sizeof *cm);
    kiln_diag err;
    cr_assert_eq(kiln_cast_parse(f->data, f->size, NULL, &cm->doc, &err), KILN_OK, "model: %s", err.message);
    for (uint32_t i = 0; i < kiln_cast_node_count(cm->doc); i++) {
        uint32_t id = kiln_cast_node_at(cm->doc, i)->id;
        cm->ik += id == KILN_CAST_ID_IKHANDLE;
        cm->constraints += id == KILN_CAST_ID_CONSTRAINT;
        cm->shapes += id == KILN_CAST_ID_BLENDSHAPE;
        if (id == KILN_CAST_ID_SKELETON && !cm->bones) {
            kiln_cast_skeleton sk;
            cr_assert_eq(kiln_cast_get_skeleton(cm->doc, i, &sk, NULL), KILN_OK);
            cm->bones = sk.bone_count;
            cm->bone_names = calloc(sk.bone_count + 1, sizeof *cm->bone_names);
            for (uint32_t b = 0; b < sk.bone_count; b++) {
                kiln_cast_bone bone;
                cr_assert_eq(kiln_cast_get_bone(cm->doc, kiln_cast_skeleton_bone(cm->doc, i, b), &bone, NULL), KILN_OK);
                cm->bone_names[b] = bone.name;
            }
        }
        if (id == KILN_CAST_ID_MESH && !cm->vp) {
            kiln_cast_mesh m;
            cr_assert_eq(kiln_cast_get_mesh(cm->doc, i, &m, NULL), KILN_OK);
            cm->mesh_name = m.name, cm->vertices = m.vertex_count, cm->mi = m.max_influence;
            cm->vp = malloc(sizeof(float) * 3 * m.vertex_count);
            cm->wb = calloc((size_t)m.vertex_count * (m.max_influence ? m.max_influence : 1), sizeof(uint32_t));
            cm->wv = calloc((size_t)m.vertex_count * (m.max_influence ? m.max_influence : 1), sizeof(float));
            kiln_cast_array_read_f32(&m.positions, 0, m.vertex_count, cm->vp);
            if (m.max_influence) {
                kiln_cast_array_read_u32(&m.weight_bones, 0, m.vertex_count * m.max_influence, cm->wb);
                if (m.weight_values.count) kiln_cast_array_read_f32(&m.weight_values, 0, m.vertex_count * m.max_influence, cm->wv);
                else for (uint32_t v = 0; v < m.vertex_count; v++) cm->wv[v] = 1.0f;
            }
        }
    }
}

static void cast_model_free(cast_model *cm)
{
    kiln_cast_free(cm->doc);
    free(cm->vp), free(cm->wb), free(cm->wv), free(cm->bone_names);
    memset(cm, 0, sizeof *cm);
}

/* The spec-faithful vertices of a frame, in double, from the expected file's matrices (ref_model
 * where Blender deviates, else model) and its rest matrices, and the Cast file's own bind
 * positions and weights, divided by their sum as Blender does: v = Σ w W_b · W_rest_b^-1 p. */
static int reference_vertices(const cast_model *cm, const jr_value *doc, const jr_value *frame, int use_ref, double *out)
{
    const jr_value *rest = jr_get(doc, "rest"), *bones = jr_get(frame, "bones");
    double (*skin)[16] = malloc(sizeof *skin * (cm->bones ? cm->bones : 1));
    for (uint32_t b = 0; b < cm->bones; b++) {
        const jr_value *eb = jr_get(bones, cm->bone_names[b]);
        const jr_value *m = use_ref && jr_get(eb, "ref_model") ? jr_get(eb, "ref_model") : jr_get(eb, "model");
        double w[16], r[16], ri[16];
        if (!json_matrix(m, w) || !json_matrix(jr_get(jr_get(rest, cm->bone_names[b]), "model"), r) || !af_invert(r, ri)) {
            free(skin);
            return 0;
        }
        af_mul(w, ri, skin[b]);
    }
    for (uint32_t v = 0; v < cm->vertices; v++) {
        double sum = 0, acc[3] = {0, 0, 0};
        for (uint32_t i = 0; i < cm->mi; i++) sum += cm->wv[v * cm->mi + i];
        for (uint32_t i = 0; i < cm->mi && sum > 0; i++) {
            uint32_t b = cm->wb[v * cm->mi + i];
            double w = (cm->mi == 1 ? 1.0 : cm->wv[v * cm->mi + i] / sum);
            if (b >= cm->bones || w == 0) continue;
            const double *k = skin[b];
            const double p[3] = {cm->vp[3 * v], cm->vp[3 * v + 1], cm->vp[3 * v + 2]};
            for (int r = 0; r < 3; r++) acc[r] += w * (k[r] * p[0] + k[4 + r] * p[1] + k[8 + r] * p[2] + k[12 + r]);
        }
        memcpy(out + 3 * v, acc, sizeof acc);
    }
    free(skin);
    return 1;
}

static int frame_has_ref(const jr_value *frame)
{
    const jr_value *bones = jr_get(frame, "bones");
    for (size_t i = 0; i < jr_len(bones); i++)
        if (jr_get(jr_at(bones, i), "ref_model")) return 1;
    return 0;
}

/* Every FK case of cases.json whose expected file has skinned vertices: bake model + anim
 * lossless with KILN_BAKE_NO_OPTIMIZE (the baked vertices keep the Cast order; checked against
 * vp), sample each listed frame, local -> model, skin matrices, skin the mesh by its own
 * method, and compare with the expected vertices. Where Blender deviates from the spec (bones
 * with ref_* values: anim_override_ot) the expected vertices are rebuilt from ref_model, the
 * rest matrices and the Cast weights (reference_vertices; the same rebuild reproduces
 * Blender's vertices on every other frame, which is checked too). */
Test(skin, corpus_fk_cases, .timeout = 300)
{
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip_test("corpus not found at %s (set KILN_SHARED_DIR): skipping", dir);
    jr_value *cases = corpus_json(dir, "cases.json");
    if (!cases) cr_skip_test("%s/cases.json not found: skipping", dir);
    uint32_t compared_cases = 0;
    double worst_all = 0, worst_rebuild = 0;
    for (size_t ci = 0; ci < jr_len(cases); ci++) {
        const jr_value *c = jr_at(cases, ci);
        const char *name = jr_str(jr_get(c, "case")), *model = jr_str(jr_get(c, "model")), *anim = jr_str(jr_get(c, "anim"));
        cr_assert(name && model && anim, "cases.json entry %zu lacks case, model or anim", ci);
        char ename[256];
        snprintf(ename, sizeof ename, "expected/%s.json", name);
        jr_value *doc = corpus_json(dir, ename);
        const jr_value *frames = doc ? jr_get(doc, "frames") : NULL;
        if (!doc || !jr_len(frames) || !jr_get(jr_at(frames, 0), "mesh_vertices_model_space")) {
            fprintf(stderr, "skin.corpus_fk_cases: %s: no expected skinned vertices, skipped\n", name);
            if (doc) jr_free(doc);
            continue;
        }
        file_bytes mf, af;
        cr_assert(corpus_read(dir, model, &mf) && corpus_read(dir, anim, &af), "%s: cannot read %s or %s", name, model, anim);
        cast_model cm;
        cast_model_read(&mf, &cm);
        if (cm.ik || cm.constraints || cm.shapes) {
            fprintf(stderr, "skin.corpus_fk_cases: %s: skipped, the model has %u IK handles, %u constraints, %u blend shapes "
                            "(not FK alone)\n", name, cm.ik, cm.constraints, cm.shapes);
            cast_model_free(&cm), file_bytes_free(&mf), file_bytes_free(&af), jr_free(doc);
            continue;
        }
        /* bake {model, anim}: skeleton 0 and clip 0 */
        kiln_bake_input in[2] = {{model, mf.data, mf.size, NULL}, {anim, af.data, af.size, NULL}};
        kiln_bake_options opt;
        memset(&opt, 0, sizeof opt);
        opt.flags = KILN_BAKE_NO_OPTIMIZE;
        kiln_bake_result res;
        kiln_diag err;
        memset(&err, 0, sizeof err);
        cr_assert_eq(kiln_bake(in, 2, &opt, &res, &err), KILN_OK, "%s: bake: %s", name, err.message);
        const kiln_blob *blob;
        cr_assert_eq(kiln_blob_load(res.blob, res.size, 0, &blob, &err), KILN_OK, "%s: load: %s", name, err.message);
        const kiln_blob_skeleton *sk = kiln_blob_skeletons(blob, NULL);
        uint32_t bones = sk->bone_count;
        kiln_anim_binding *bind = af_bind(blob, 0, blob, 0, NULL);
        cr_assert_not_null(bind, "%s: the clip does not bind", name);
        kiln_soa_xform *pose = aligned_alloc(64, sizeof *pose * sk->soa_count);
        float *mtx = malloc(sizeof(float) * 16 * bones), *skin = malloc(sizeof(float) * 16 * bones);
        kiln_skin_dual_quat *dq = malloc(sizeof *dq * bones);
        double fps = kiln_blob_animations(blob, NULL)[0].framerate;
        /* anim_quat_edge's oracle nlerps its non-normalised keys where the spec slerps (its bone
         * matrices are only 1e-3 tight), but on these small boxes the vertices stay within 1e-4 */
        const double tol = TOL_CORPUS;

        const jr_value *meshes_v = jr_get(jr_at(frames, 0), "mesh_vertices_model_space");
        double worst = 0, worst_re = 0;
        uint32_t checked_frames = 0, ref_frames = 0, rebuilt_frames = 0, verts = 0;
        for (size_t mi = 0; mi < jr_len(meshes_v); mi++) {
            const char *mesh_name = jr_key(meshes_v, mi);
            uint32_t mesh = kiln_blob_find(blob, KILN_SECTION_MESHES, mesh_name);
            cr_assert_neq(mesh, KILN_BLOB_NONE, "%s: mesh '%s' not baked", name, mesh_name);
            uint32_t n = vertex_count(blob, mesh);
            verts += n;
            cr_assert_eq(n, (uint32_t)jr_len(jr_at(meshes_v, mi)), "%s: mesh '%s' has %u vertices, expected %zu", name, mesh_name,
                         n, jr_len(jr_at(meshes_v, mi)));
            /* the baked order is the Cast order (the rebuild and the expected lists use it) */
            int is_first = cm.mesh_name && strcmp(cm.mesh_name, mesh_name) == 0 && cm.vertices == n;
            if (is_first) {
                const float *bp = bind_positions(blob, mesh);
                cr_assert(memcmp(bp, cm.vp, 12 * (size_t)n) == 0, "%s: baked vertices are not in the Cast order", name);
            }
            skin_out o = out_alloc(n);
            double *re = malloc(sizeof(double) * 3 * n);
            for (size_t fi = 0; fi < jr_len(frames); fi++) {
                const jr_value *fr = jr_at(frames, fi);
                double frame = jr_num(jr_get(fr, "frame"));
                const jr_value *ev = jr_get(jr_get(fr, "mesh_vertices_model_space"), mesh_name);
                if (!ev) continue;
                kiln_sample_desc sd;
                memset(&sd, 0, sizeof sd);
                sd.binding = bind, sd.time_s = frame / fps, sd.loop = KILN_LOOP_CLAMP, sd.out = pose, sd.out_count = sk->soa_count;
                cr_assert_eq(kiln_sample(&sd), KILN_OK);
                cr_assert_eq(kiln_pose_local_to_object(blob, 0, pose, NULL, mtx, bones), KILN_OK);
                cr_assert_eq(kiln_pose_skin_matrices(blob, 0, mtx, skin, bones), KILN_OK);
                cr_assert_eq(kiln_pose_skin_dual_quats(skin, dq, bones), KILN_OK);
                skin_in si = {blob, mesh, 0, bones, skin, dq, NULL};
                cr_assert_eq(skin_range(&si, 0, n, &o, 0), KILN_OK); /* positions only */
                int has_ref = frame_has_ref(fr);
                if (is_first) {
                    cr_assert(reference_vertices(&cm, doc, fr, has_ref, re), "%s: frame %g: bone matrices missing", name, frame);
                    ref_frames += (uint32_t)has_ref;
                    rebuilt_frames += (uint32_t)!has_ref;
                }
                for (uint32_t v = 0; v < n; v++) {
                    double e = 0, erb = 0;
                    const jr_value *pv = jr_at(ev, v);
                    for (int k = 0; k < 3; k++) {
                        double blender = jr_num(jr_at(pv, (size_t)k));
                        double want = has_ref && is_first ? re[3 * v + k] : blender;
                        e = fmax(e, fabs(o.p[3 * v + k] - want));
                        if (is_first && !has_ref) erb = fmax(erb, fabs(re[3 * v + k] - blender));
                    }
                    if (isnan(e)) e = INFINITY;
                    worst = fmax(worst, e), worst_re = fmax(worst_re, erb);
                    cr_expect(e <= tol, "%s: frame %g, mesh %s, vertex %u: off by %.3g (tolerance %.0e)", name, frame, mesh_name, v, e, tol);
                }
                checked_frames++;
            }
            free(re);
            out_free(&o);
        }
        char rebuild[64] = "no frame without ref_*";
        if (rebuilt_frames) snprintf(rebuild, sizeof rebuild, "%.2e on %u frames", worst_re, rebuilt_frames);
        fprintf(stderr, "skin.corpus_fk_cases: %-24s %3u frames x %u vertices: max |skinned - expected| %.2e (tol %.0e)%s; "
                        "rebuild vs Blender %s\n",
                name, checked_frames, verts, worst, tol, ref_frames ? " (ref_* frames against the spec rebuild)" : "", rebuild);
        cr_expect(worst_re <= TOL_CORPUS, "%s: the reference rebuild misses Blender's vertices by %.3g", name, worst_re);
        worst_all = fmax(worst_all, worst), worst_rebuild = fmax(worst_rebuild, worst_re);
        compared_cases++;
        free(bind), free(pose), free(mtx), free(skin), free(dq);
        kiln_bake_result_free(&res);
        cast_model_free(&cm), file_bytes_free(&mf), file_bytes_free(&af), jr_free(doc);
    }
    jr_free(cases);
    fprintf(stderr, "skin.corpus_fk_cases: %u cases compared, max vertex error %.2e (tolerance 1e-4), rebuild %.2e\n",
            compared_cases, worst_all, worst_rebuild);
    cr_expect_gt(compared_cases, 0, "no corpus case had skinned vertices to compare");
}

/* The corpus's skinned grids (weights_mi1_b, weights_mi4_h, weights_mi8_i: 1, 4 and 8
 * influences, linear and dual quaternion by their `sm`) in their rest pose: every vertex at its
 * bind position, normals unchanged, by the mesh's own method. */
Test(skin, corpus_rest_pose_meshes)
{
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip_test("corpus not found at %s (set KILN_SHARED_DIR): skipping", dir);
    static const char *const files[3] = {"weights_mi1_b.cast", "weights_mi4_h.cast", "weights_mi8_i.cast"};
    static const uint32_t methods[3] = {KILN_SKIN_LINEAR, KILN_SKIN_LINEAR, KILN_SKIN_DUAL_QUAT};
    for (int f = 0; f < 3; f++) {
        file_bytes cast;
        if (!corpus_read(dir, files[f], &cast)) cr_skip_test("%s/%s not found: skipping", dir, files[f]);
        baked_rig r;
        rig_bake(&cast, KILN_BAKE_NO_OPTIMIZE, &r);
        rig_eval(&r);
        const kiln_blob_mesh *m = kiln_blob_meshes(r.blob, NULL);
        cr_expect_eq(m->skinning, methods[f], "%s: skinning method %u", files[f], m->skinning);
        uint32_t n = m->vertex_count;
        const float *bind = bind_positions(r.blob, 0);
        double worst = 0;
        kiln_simd ps[AF_PATH_COUNT];
        int np = paths(ps);
        for (int i = 0; i < np; i++) {
            kiln_simd_force(ps[i]);
            skin_in in = {r.blob, 0, 0, r.bones, r.skin, r.dq, NULL};
            skin_out o = out_alloc(n);
            cr_assert_eq(skin_range(&in, 0, n, &o, 0), KILN_OK);
            for (uint32_t k = 0; k < 3 * n; k++) worst = fmax(worst, fabs(o.p[k] - bind[k]));
            out_free(&o);
        }
        kiln_simd_force(KILN_SIMD_AUTO);
        fprintf(stderr, "skin.corpus_rest_pose_meshes: %s (%s, %u influences, %u vertices): max |skinned - bind| %.2e\n", files[f],
                m->skinning == KILN_SKIN_DUAL_QUAT ? "DQS" : "LBS", m->influences, n, worst);
        cr_expect(worst <= 1e-5, "%s: the rest pose moves vertices by %.3g", files[f], worst);
        rig_free(&r);
        file_bytes_free(&cast);
    }
}
