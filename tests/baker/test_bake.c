/* kiln_bake end to end: Cast in, blob out, blob read back through the runtime loader and
 * compared with expectations computed here, independently of the baker:
 *   - bone rest poses against the raw lp/lr/s properties of the file;
 *   - world rest transforms composed here in double precision (with segment scale
 *     compensation) and against MANIFEST.md's hand-computed values;
 *   - instance transforms and paths against the raw Instance/File properties;
 *   - material colours decoded here with the sRGB formula;
 *   - determinism (twice, and one thread against two), strict mode, atomic saves, and an
 *     allocation failure at every allocation a bake makes.
 * Inputs come from the shared corpus when present and from the Cast writer otherwise. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "kiln/anim.h"
#include "kiln/bake/bake.h"
#include "kiln/blob.h"
#include "kiln/bake/cast.h"
#include "kiln/bake/cast_write.h"
#include "test_util.h"

/* ---- baking and loading ------------------------------------------------------------------------ */

typedef struct baked {
    kiln_bake_result res;
    const kiln_blob *blob;
    diag_log         log;
    kiln_diag        err;
} baked;

static kiln_result bake_with(const kiln_bake_input *in, uint32_t n, kiln_bake_options *o, baked *b)
{
    memset(b, 0, sizeof *b);
    kiln_bake_options local;
    if (!o) {
        memset(&local, 0, sizeof local);
        o = &local;
    }
    o->diag.fn = diag_log_push;
    o->diag.user = &b->log;
    kiln_result r = kiln_bake(in, n, o, &b->res, &b->err);
    if (r != KILN_OK) return r;
    kiln_diag why;
    kiln_result lr = kiln_blob_load(b->res.blob, b->res.size, 0, &b->blob, &why);
    cr_assert_eq(lr, KILN_OK, "the baked blob does not load: %s: %s", why.path, why.message);
    return KILN_OK;
}

static void baked_free(baked *b)
{
    kiln_bake_result_free(&b->res);
    b->blob = NULL;
}

/* Reads corpus file `name` into *f (kept for raw reads). Returns 0 when the file is absent
 * (valgrind runs use a corpus mirror without the large files); skips the test when the corpus
 * itself is absent. */
static int corpus_file(const char *name, file_bytes *f, char *path, size_t cap)
{
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip("corpus not found at %s: skipping", dir);
    snprintf(path, cap, "%s/%s", dir, name);
    return read_file(path, f);
}

/* As corpus_file, skipping the test when the file is absent. */
static void corpus_or_skip(const char *name, file_bytes *f, char *path, size_t cap)
{
    if (!corpus_file(name, f, path, cap)) cr_skip("%s not found: skipping", path);
}

/* Reads n corpus files (skipping the test when one is absent) as bake inputs; paths[i] holds
 * 2048 bytes. */
static void corpus_inputs(const char *const *names, int n, file_bytes *f, char (*paths)[2048], kiln_bake_input *in)
{
    for (int i = 0; i < n; i++) {
        corpus_or_skip(names[i], &f[i], paths[i], sizeof paths[i]);
        in[i] = (kiln_bake_input){paths[i], f[i].data, f[i].size, NULL};
    }
}

/* Bakes a corpus file alone. Returns 0 when it is absent. */
static int bake_corpus_file(const char *name, kiln_bake_options *o, baked *b, file_bytes *f, char *path, size_t cap)
{
    if (!corpus_file(name, f, path, cap)) return 0;
    kiln_bake_input in = {path, f->data, f->size, NULL};
    kiln_result r = bake_with(&in, 1, o, b);
    cr_assert_eq(r, KILN_OK, "%s: %s: %s", name, b->err.path, b->err.message);
    return 1;
}

/* As bake_corpus_file, skipping the test when the file is absent. */
static void bake_corpus(const char *name, kiln_bake_options *o, baked *b, file_bytes *f, char *path, size_t cap)
{
    if (!bake_corpus_file(name, o, b, f, path, cap)) cr_skip("%s not found: skipping", path);
}

/* ---- Cast fixtures written with the writer --------------------------------------------------- */

typedef struct bone_spec {
    const char  *name;            /* NULL: no n */
    int32_t      parent;
    const float *lp, *lr, *s, *wp, *wr; /* NULL: absent */
    int          ssc;             /* -1: absent */
} bone_spec;

static uint32_t add_skeleton(kiln_cast_writer *w, uint32_t model, const bone_spec *b, uint32_t n, uint64_t *hash)
{
    uint32_t skel = kiln_cast_writer_node(w, model, KILN_CAST_ID_SKELETON, (*hash)++);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t node = kiln_cast_writer_node(w, skel, KILN_CAST_ID_BONE, (*hash)++);
        if (b[i].name) kiln_cast_writer_string(w, node, "n", b[i].name);
        kiln_cast_writer_prop(w, node, "p", KILN_CAST_TYPE_INT, &b[i].parent, 1);
        if (b[i].ssc >= 0) kiln_cast_writer_byte(w, node, "ssc", (uint8_t)b[i].ssc);
        if (b[i].lp) kiln_cast_writer_floats(w, node, "lp", KILN_CAST_TYPE_VEC3, b[i].lp, 1);
        if (b[i].lr) kiln_cast_writer_floats(w, node, "lr", KILN_CAST_TYPE_VEC4, b[i].lr, 1);
        if (b[i].wp) kiln_cast_writer_floats(w, node, "wp", KILN_CAST_TYPE_VEC3, b[i].wp, 1);
        if (b[i].wr) kiln_cast_writer_floats(w, node, "wr", KILN_CAST_TYPE_VEC4, b[i].wr, 1);
        if (b[i].s) kiln_cast_writer_floats(w, node, "s", KILN_CAST_TYPE_VEC3, b[i].s, 1);
    }
    return skel;
}

/* Root > Model "rig" > Skeleton(bones) [> Mesh "skin": one triangle, rigid (mi 1) to `skin_bone`]. */
static file_bytes skeleton_cast(const bone_spec *bones, uint32_t n, int skin_bone)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint64_t hash = 1;
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, hash++);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, hash++);
    kiln_cast_writer_string(w, model, "n", "rig");
    add_skeleton(w, model, bones, n, &hash);
    if (skin_bone >= 0) {
        static const float vp[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
        const uint32_t f[3] = {0, 1, 2}, mi = 1, wb[3] = {(uint32_t)skin_bone, (uint32_t)skin_bone, (uint32_t)skin_bone};
        uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, hash++);
        kiln_cast_writer_string(w, mesh, "n", "skin");
        kiln_cast_writer_floats(w, mesh, "vp", KILN_CAST_TYPE_VEC3, vp, 3);
        kiln_cast_writer_ints(w, mesh, "f", f, 3);
        kiln_cast_writer_ints(w, mesh, "mi", &mi, 1);
        kiln_cast_writer_ints(w, mesh, "wb", wb, 3);
    }
    return writer_bytes(w);
}

/* A small scene touching every baked kind: Metadata (sr "assets"), a Model with a 3-bone
 * skeleton, a material (a File and an sRGB Color slot), a skinned quad, hair, an Animation
 * (skipped with a warning), and three Instances of two files. */
static file_bytes scene_cast(void)
{
    static const float lp1[3] = {0, 1, 0}, lp2[3] = {0, 2, 0}, rz90[4] = {0, 0, 0.70710678f, 0.70710678f};
    const bone_spec bones[3] = {
        {"root", -1, NULL, rz90, NULL, NULL, NULL, -1},
        {"spine", 0, lp1, NULL, NULL, NULL, NULL, -1},
        {"head", 1, lp2, NULL, NULL, NULL, NULL, -1},
    };
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint64_t hash = 100;
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, hash++);
    uint32_t meta = kiln_cast_writer_node(w, root, KILN_CAST_ID_METADATA, hash++);
    kiln_cast_writer_string(w, meta, "a", "tester");
    kiln_cast_writer_string(w, meta, "s", "test_bake.c");
    kiln_cast_writer_string(w, meta, "up", "y");
    kiln_cast_writer_string(w, meta, "sr", "assets");

    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, hash++);
    kiln_cast_writer_string(w, model, "n", "hero");
    add_skeleton(w, model, bones, 3, &hash);

    uint64_t mat_hash = hash++, file_hash = hash++, color_hash = hash++;
    uint32_t mat = kiln_cast_writer_node(w, model, KILN_CAST_ID_MATERIAL, mat_hash);
    kiln_cast_writer_string(w, mat, "n", "skin");
    kiln_cast_writer_string(w, mat, "t", "pbr");
    kiln_cast_writer_u64(w, mat, "albedo", file_hash);
    kiln_cast_writer_u64(w, mat, "specular", color_hash);
    uint32_t file = kiln_cast_writer_node(w, mat, KILN_CAST_ID_FILE, file_hash);
    kiln_cast_writer_string(w, file, "p", "tex/skin.png");
    uint32_t color = kiln_cast_writer_node(w, mat, KILN_CAST_ID_COLOR, color_hash);
    static const float rgba[4] = {0.5f, 0.25f, 1.0f, 0.5f};
    kiln_cast_writer_floats(w, color, "rgba", KILN_CAST_TYPE_VEC4, rgba, 1);

    static const float vp[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    const uint32_t f[6] = {0, 1, 2, 0, 2, 3}, mi = 2, wb[8] = {0, 1, 1, 0, 2, 1, 2, 0};
    static const float wv[8] = {0.75f, 0.25f, 0.5f, 0.5f, 1.0f, 0.0f, 0.6f, 0.4f};
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, hash++);
    kiln_cast_writer_string(w, mesh, "n", "body");
    kiln_cast_writer_floats(w, mesh, "vp", KILN_CAST_TYPE_VEC3, vp, 4);
    kiln_cast_writer_ints(w, mesh, "f", f, 6);
    kiln_cast_writer_ints(w, mesh, "mi", &mi, 1);
    kiln_cast_writer_ints(w, mesh, "wb", wb, 8);
    kiln_cast_writer_floats(w, mesh, "wv", KILN_CAST_TYPE_FLOAT, wv, 8);
    kiln_cast_writer_u64(w, mesh, "m", mat_hash);

    static const float pt[9] = {0, 0, 0, 0, 1, 0, 0, 2, 0};
    const uint32_t se[1] = {2};
    uint32_t hair = kiln_cast_writer_node(w, model, KILN_CAST_ID_HAIR, hash++);
    kiln_cast_writer_string(w, hair, "n", "fringe");
    kiln_cast_writer_ints(w, hair, "se", se, 1);
    kiln_cast_writer_floats(w, hair, "pt", KILN_CAST_TYPE_VEC3, pt, 3);
    kiln_cast_writer_u64(w, hair, "m", mat_hash);

    uint32_t anim = kiln_cast_writer_node(w, root, KILN_CAST_ID_ANIMATION, hash++);
    static const float fr = 30.0f;
    kiln_cast_writer_floats(w, anim, "fr", KILN_CAST_TYPE_FLOAT, &fr, 1);

    static const char *const refs[3] = {"props/crate.cast", "props/barrel.cast", "./props/../props/crate.cast"};
    for (int i = 0; i < 3; i++) {
        uint64_t fh = hash++;
        uint32_t inst = kiln_cast_writer_node(w, root, KILN_CAST_ID_INSTANCE, hash++);
        kiln_cast_writer_u64(w, inst, "rf", fh);
        const float p[3] = {(float)i, 0, 0};
        kiln_cast_writer_floats(w, inst, "p", KILN_CAST_TYPE_VEC3, p, 1);
        uint32_t ifile = kiln_cast_writer_node(w, inst, KILN_CAST_ID_FILE, fh);
        kiln_cast_writer_string(w, ifile, "p", refs[i]);
    }
    return writer_bytes(w);
}

/* ---- reference math in double precision (column vectors, column-major 4x4) ------------------- */

typedef struct dmat {
    double m[16]; /* m[col * 4 + row] */
} dmat;

static void qmul(const double *a, const double *b, double *out) /* Hamilton a * b, x y z w */
{
    double r[4] = {a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
                   a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
                   a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
                   a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};
    memcpy(out, r, sizeof r);
}

static dmat dmat_mul(const dmat *a, const dmat *b)
{
    dmat r;
    for (int c = 0; c < 4; c++)
        for (int row = 0; row < 4; row++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += a->m[k * 4 + row] * b->m[c * 4 + k];
            r.m[c * 4 + row] = s;
        }
    return r;
}

/* T(t) * R(q) * diag(sx, sy, sz); the rotation from a unit quaternion. */
static dmat dmat_trs(const double *t, const double *q, const double *s)
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y + z * w),     2 * (x * z - y * w),
                   2 * (x * y - z * w),     1 - 2 * (x * x + z * z), 2 * (y * z + x * w),
                   2 * (x * z + y * w),     2 * (y * z - x * w),     1 - 2 * (x * x + y * y)}; /* columns */
    dmat m;
    memset(&m, 0, sizeof m);
    for (int c = 0; c < 3; c++)
        for (int row = 0; row < 3; row++) m.m[c * 4 + row] = r[c * 3 + row] * s[c];
    m.m[12] = t[0];
    m.m[13] = t[1];
    m.m[14] = t[2];
    m.m[15] = 1;
    return m;
}

static dmat dmat_scale(double x, double y, double z)
{
    static const double zero[3] = {0, 0, 0}, id[4] = {0, 0, 0, 1};
    const double s[3] = {x, y, z};
    return dmat_trs(zero, id, s);
}

/* W = W_parent * T * [S(s_parent)^-1] * R * S (Cast reference C.1). */
static dmat world_of(const dmat *parent, const double *parent_scale, int ssc, const double *t, const double *q,
                     const double *s)
{
    static const double one[3] = {1, 1, 1}, id[4] = {0, 0, 0, 1};
    dmat tr = dmat_trs(t, id, one);
    if (parent && ssc) {
        dmat inv = dmat_scale(1 / parent_scale[0], 1 / parent_scale[1], 1 / parent_scale[2]);
        tr = dmat_mul(&tr, &inv);
    }
    static const double zero[3] = {0, 0, 0};
    dmat rs = dmat_trs(zero, q, s);
    dmat local = dmat_mul(&tr, &rs);
    return parent ? dmat_mul(parent, &local) : local;
}

/* ---- blob helpers --------------------------------------------------------------------------------- */

typedef struct rest_bone {
    double t[3], q[4], s[3];
} rest_bone;

static rest_bone blob_rest(const kiln_blob *blob, const kiln_blob_skeleton *sk, uint32_t i)
{
    uint32_t n;
    const kiln_soa_xform *x = &kiln_blob_rest_pose(blob, &n)[sk->first_soa + i / KILN_SOA_WIDTH];
    uint32_t l = i % KILN_SOA_WIDTH;
    rest_bone r = {{x->tx[l], x->ty[l], x->tz[l]}, {x->qx[l], x->qy[l], x->qz[l], x->qw[l]}, {x->sx[l], x->sy[l], x->sz[l]}};
    return r;
}

/* World rest of every bone of skeleton `k`, composed here from the blob's rest pose. */
static dmat *blob_world(const kiln_blob *blob, uint32_t k)
{
    uint32_t n;
    const kiln_blob_skeleton *sk = &kiln_blob_skeletons(blob, &n)[k];
    const kiln_blob_bone *bones = kiln_blob_bones(blob, &n) + sk->first_bone;
    dmat *w = calloc(sk->bone_count, sizeof *w);
    rest_bone *rest = calloc(sk->bone_count, sizeof *rest);
    for (uint32_t i = 0; i < sk->bone_count; i++) {
        rest[i] = blob_rest(blob, sk, i);
        int32_t p = bones[i].parent;
        cr_assert(p < (int32_t)i, "bone %u has parent %d: not parent-first", i, p);
        w[i] = world_of(p >= 0 ? &w[p] : NULL, p >= 0 ? rest[p].s : NULL,
                        (bones[i].flags & KILN_BONE_SEGMENT_SCALE_COMPENSATE) != 0, rest[i].t, rest[i].q, rest[i].s);
    }
    free(rest);
    return w;
}

static const float *blob_inverse_bind(const kiln_blob *blob, const kiln_blob_skeleton *sk, uint32_t i)
{
    uint32_t n;
    return kiln_blob_inverse_binds(blob, &n) + 16 * (size_t)(sk->first_bone + i);
}

/* max |IB * W - I| over the 16 entries. */
static double identity_error(const float *ib, const dmat *w)
{
    dmat b;
    for (int i = 0; i < 16; i++) b.m[i] = ib[i];
    dmat p = dmat_mul(&b, w);
    double e = 0;
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++) e = fmax(e, fabs(p.m[c * 4 + r] - (c == r)));
    return e;
}

static uint32_t find_bone(const kiln_blob *blob, uint32_t skeleton, const char *name)
{
    uint32_t i = kiln_blob_find_bone(blob, skeleton, name);
    cr_assert_neq(i, KILN_BLOB_NONE, "no bone '%s'", name);
    return i;
}

/* Raw property of a Cast node as floats (the file's own values, no accessor involved). */
static int raw_vec(const kiln_cast_doc *doc, uint32_t node, const char *name, uint32_t comps, float *out)
{
    const kiln_cast_prop *p = kiln_cast_find_prop(doc, node, name, NULL);
    if (!p) return 0;
    kiln_cast_prop_vec(p, 0, comps, out);
    return 1;
}

static kiln_cast_doc *parse(const file_bytes *f)
{
    kiln_cast_doc *doc = NULL;
    cr_assert_eq(kiln_cast_parse(f->data, f->size, NULL, &doc, NULL), KILN_OK);
    return doc;
}

/* The k-th node with id `id` in file order. */
static uint32_t nth_node(const kiln_cast_doc *doc, uint32_t id, uint32_t k)
{
    for (uint32_t n = 0; n < kiln_cast_node_count(doc); n++)
        if (kiln_cast_node_at(doc, n)->id == id && k-- == 0) return n;
    return KILN_CAST_NONE;
}

/* ---- corpus: everything bakes ---------------------------------------------------------------------- */

Test(bake_corpus, every_good_file_bakes_and_the_blob_verifies)
{
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip("corpus not found at %s: skipping", dir);
    char **names;
    size_t count = corpus_list(dir, &names);
    cr_assert(count > 0);
    for (size_t i = 0; i < count; i++) {
        file_bytes f;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        cr_assert(read_file(path, &f));
        kiln_bake_input in = {path, f.data, f.size, NULL};
        baked b;
        kiln_result r = bake_with(&in, 1, NULL, &b);
        cr_assert_eq(r, KILN_OK, "%s: %s: %s", names[i], b.err.path, b.err.message);
        uint32_t n;
        kiln_blob_models(b.blob, &n);
        cr_expect_eq(n, b.res.stats.models, "%s", names[i]);
        kiln_blob_meshes(b.blob, &n);
        cr_expect_eq(n, b.res.stats.meshes, "%s", names[i]);
        kiln_blob_bones(b.blob, &n);
        cr_expect_eq(n, b.res.stats.bones, "%s", names[i]);
        cr_expect_eq(b.res.stats.output_bytes, b.res.size);
        cr_expect_eq(b.res.stats.input_bytes, f.size);
        cr_expect_eq(kiln_blob_metadata_of(b.blob)->source_count, 1);
        cr_expect_eq((uintptr_t)b.res.blob % KILN_BLOB_ALIGN, 0);
        baked_free(&b);
        file_bytes_free(&f);
    }
    corpus_list_free(names, count);
}

Test(bake_corpus, malformed_files_fail_with_the_parser_error_and_the_input_path)
{
    static const char *const bad[] = {"bad/wrong_magic.cast", "bad/truncated_header.cast", "bad/empty.cast",
                                      "bad/node_size_overrun.cast", "bad/prop_array_huge.cast",
                                      "bad/child_count_huge.cast", "bad/string_unterminated.cast"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        file_bytes f;
        char path[2048];
        corpus_or_skip(bad[i], &f, path, sizeof path);
        kiln_bake_input in = {path, f.data, f.size, NULL};
        baked b;
        kiln_result r = bake_with(&in, 1, NULL, &b);
        cr_expect_neq(r, KILN_OK, "%s baked", bad[i]);
        cr_expect_null(b.res.blob);
        cr_expect(strncmp(b.err.path, path, strlen(path)) == 0, "%s: error path '%s'", bad[i], b.err.path);
        file_bytes_free(&f);
    }
}

Test(bake_corpus, files_with_droppable_parts_bake_without_them)
{
    static const char *const soft[] = {"bad/unknown_node_skip.cast", "bad/zero_length_arrays.cast",
                                       "bad/face_index_out_of_range.cast", "bad/bone_parent_cycle.cast",
                                       "bad/wrong_vector_prop_type.cast", "bad/unknown_prop_type.cast",
                                       "bad/curve_kb_kv_mismatch.cast"};
    for (size_t i = 0; i < sizeof soft / sizeof soft[0]; i++) {
        file_bytes f;
        char path[2048];
        corpus_or_skip(soft[i], &f, path, sizeof path);
        kiln_bake_input in = {path, f.data, f.size, NULL};
        baked b;
        kiln_result r = bake_with(&in, 1, NULL, &b);
        cr_expect_eq(r, KILN_OK, "%s: %s", soft[i], b.err.message);
        if (r == KILN_OK) baked_free(&b);
        file_bytes_free(&f);
    }
}

Test(bake_corpus, bone_cycle_drops_the_skeleton_with_an_error_and_keeps_the_model)
{
    file_bytes f;
    char path[2048];
    baked b;
    bake_corpus("bad/bone_parent_cycle.cast", NULL, &b, &f, path, sizeof path);
    uint32_t n;
    const kiln_blob_model *m = kiln_blob_models(b.blob, &n);
    cr_assert_eq(n, 1);
    cr_expect_eq(m->skeleton, KILN_BLOB_NONE);
    cr_expect(diag_log_has(&b.log, KILN_ERR_CAST_BONE_CYCLE, KILN_SEVERITY_ERROR));
    cr_expect_geq(b.res.stats.errors, 1);
    baked_free(&b);
    file_bytes_free(&f);
}

/* ---- determinism ------------------------------------------------------------------------------------- */

Test(bake_determinism, same_inputs_give_the_same_bytes_twice_and_with_two_threads)
{
    static const char *const names[] = {"mesh_attributes.cast", "skel_chain3_scale_ssc.cast", "weights_mi8_i.cast",
                                        "instances_small.cast", "constraints_model.cast", "blendshape_model.cast"};
    enum { N = sizeof names / sizeof names[0] };
    file_bytes f[N];
    char paths[N][2048];
    kiln_bake_input in[N];
    corpus_inputs(names, N, f, paths, in);
    baked a, b, c;
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    cr_assert_eq(bake_with(in, N, &o, &a), KILN_OK);
    memset(&o, 0, sizeof o);
    cr_assert_eq(bake_with(in, N, &o, &b), KILN_OK);
    memset(&o, 0, sizeof o);
    o.threads = 2;
    cr_assert_eq(bake_with(in, N, &o, &c), KILN_OK);
    cr_assert_eq(a.res.size, b.res.size);
    cr_assert_eq(a.res.size, c.res.size);
    cr_expect(memcmp(a.res.blob, b.res.blob, a.res.size) == 0, "two serial bakes differ");
    cr_expect(memcmp(a.res.blob, c.res.blob, a.res.size) == 0, "serial and 2-thread bakes differ");
    cr_expect_eq(a.log.count, c.log.count, "diagnostics differ: %d vs %d", a.log.count, c.log.count);
    for (int i = 0; i < a.log.count && i < c.log.count && i < 32; i++)
        cr_expect_str_eq(a.log.items[i].message, c.log.items[i].message);
    baked_free(&a);
    baked_free(&b);
    baked_free(&c);
    for (int i = 0; i < N; i++) file_bytes_free(&f[i]);
}

/* Clips are encoded on the bake's threads when there are several (bake_clips.c): the same
 * bytes and the same reports, in the same order, as on one thread. Lossy, so that the encoding
 * is the costly part; clips of several inputs bound to the skeletons of others. */
Test(bake_determinism, lossy_clips_on_threads_give_the_serial_bytes_and_reports)
{
    static const char *const names[] = {"anim_rig_model.cast",   "anim_abs_all.cast",      "anim_add_noab.cast",
                                        "anim_override_ot.cast", "anim_quat_edge.cast",    "anim_parent_scale_ssc.cast",
                                        "bench/anchor_n20_model.cast", "bench/anchor_n20_anim.cast"};
    enum { N = sizeof names / sizeof names[0] };
    file_bytes f[N];
    char paths[N][2048];
    kiln_bake_input in[N];
    corpus_inputs(names, N, f, paths, in);
    baked a, c;
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.flags = KILN_BAKE_LOSSY_ANIMATION;
    cr_assert_eq(bake_with(in, N, &o, &a), KILN_OK, "%s", a.err.message);
    memset(&o, 0, sizeof o);
    o.flags = KILN_BAKE_LOSSY_ANIMATION;
    o.threads = 3;
    cr_assert_eq(bake_with(in, N, &o, &c), KILN_OK, "%s", c.err.message);
    uint32_t clips = 0, lossy = 0;
    const kiln_blob_animation *an = kiln_blob_animations(a.blob, &clips);
    for (uint32_t i = 0; i < clips; i++) lossy += (an[i].flags & KILN_ANIM_LOSSY) != 0;
    cr_assert_geq(clips, 6, "%u clips", clips);
    cr_expect_eq(lossy, clips, "%u of %u clips lossy", lossy, clips);
    cr_assert_eq(a.res.size, c.res.size);
    cr_expect(memcmp(a.res.blob, c.res.blob, a.res.size) == 0, "serial and 3-thread bakes differ");
    cr_expect_eq(a.res.stats.warnings, c.res.stats.warnings);
    cr_expect_eq(a.log.count, c.log.count, "diagnostics differ: %d vs %d", a.log.count, c.log.count);
    for (int i = 0; i < a.log.count && i < c.log.count && i < 32; i++) {
        cr_expect_str_eq(a.log.items[i].message, c.log.items[i].message);
        cr_expect_str_eq(a.log.items[i].path, c.log.items[i].path);
    }
    baked_free(&a);
    baked_free(&c);
    for (int i = 0; i < N; i++) file_bytes_free(&f[i]);
}

static void count_progress(void *user, uint32_t done, uint32_t total, const char *path)
{
    uint32_t *seen = user;
    cr_expect_eq(done, seen[0] + 1, "progress out of input order");
    cr_expect_eq(total, 3);
    cr_expect_not_null(path);
    seen[0] = done;
}

Test(bake_determinism, threaded_progress_comes_in_input_order_from_the_calling_thread)
{
    file_bytes f = scene_cast();
    kiln_bake_input in[3] = {{"a.cast", f.data, f.size, NULL}, {"b.cast", f.data, f.size, NULL}, {"c.cast", f.data, f.size, NULL}};
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.threads = 3;
    uint32_t seen = 0;
    o.progress = count_progress;
    o.progress_user = &seen;
    baked b;
    cr_assert_eq(bake_with(in, 3, &o, &b), KILN_OK);
    cr_expect_eq(seen, 3);
    uint32_t n;
    const kiln_blob_model *m = kiln_blob_models(b.blob, &n);
    cr_assert_eq(n, 3);
    for (uint32_t i = 0; i < 3; i++) cr_expect_eq(m[i].source, i);
    /* Reports arrive in input order, each tagged with its input. */
    cr_assert_geq(b.log.count, 3);
    cr_expect(strncmp(b.log.items[0].path, "a.cast", 6) == 0, "%s", b.log.items[0].path);
    cr_expect(strncmp(b.log.items[b.log.count - 1].path, "c.cast", 6) == 0);
    baked_free(&b);
    file_bytes_free(&f);
}

/* ---- key order ------------------------------------------------------------------------------------ */

/* Root > Animation (30 fps) > one tx curve on "hips" with the given keys, in file order. */
static file_bytes keyed_anim_cast(const uint32_t *kb, const float *kv, uint32_t n)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t anim = kiln_cast_writer_node(w, root, KILN_CAST_ID_ANIMATION, 2);
    static const float fr = 30.0f;
    kiln_cast_writer_floats(w, anim, "fr", KILN_CAST_TYPE_FLOAT, &fr, 1);
    uint32_t c = kiln_cast_writer_node(w, anim, KILN_CAST_ID_CURVE, 3);
    kiln_cast_writer_string(w, c, "nn", "hips");
    kiln_cast_writer_string(w, c, "kp", "tx");
    kiln_cast_writer_ints(w, c, "kb", kb, n);
    kiln_cast_writer_floats(w, c, "kv", KILN_CAST_TYPE_FLOAT, kv, n);
    return writer_bytes(w);
}

/* tx of lane 0 at each of the clip's frames (a lossless clip: raw floats). */
static void clip_tx(const kiln_blob *blob, float *out, uint32_t cap, uint32_t *frames)
{
    uint32_t n = 0;
    const kiln_blob_animation *a = kiln_blob_animations(blob, &n);
    cr_assert_eq(n, 1);
    const unsigned char *base = (const unsigned char *)kiln_blob_header_of(blob);
    const kiln_blob_anim_track *t =
        (const kiln_blob_anim_track *)(const void *)(base + a->data_offset + a->block_count * sizeof(kiln_soa_xform));
    size_t rows = (a->data_offset + a->block_count * sizeof(kiln_soa_xform) + a->animated_count * sizeof *t + 15) / 16 * 16;
    cr_assert_eq(a->animated_count, 1);
    cr_assert_eq(t[0].component, 0);
    cr_assert_eq(t[0].width, 32);
    cr_assert_leq(a->frame_count, cap);
    for (uint32_t r = 0; r < a->frame_count; r++)
        memcpy(&out[r], base + rows + (size_t)r * a->row_stride + t[0].row_offset, sizeof(float));
    *frames = a->frame_count;
}

/* Keys are sorted by frame before resampling, the last of equal frames in file order winning
 * (D.2): keys out of order, or in order with a repeated frame, give the samples of the plain
 * sorted keys. Linear between keys: frame 5 is halfway between the keys at 0 and 10. */
Test(bake_anim, keys_bake_in_frame_order_and_the_last_of_equal_frames_wins)
{
    static const uint32_t kb_sorted[3] = {0, 10, 20}, kb_shuffled[4] = {20, 10, 0, 10}, kb_dup[4] = {0, 10, 10, 20};
    static const float kv_sorted[3] = {1, 2, 3}, kv_shuffled[4] = {3, 9, 1, 2}, kv_dup[4] = {1, 9, 2, 3};
    const uint32_t *kb[3] = {kb_sorted, kb_shuffled, kb_dup};
    const float *kv[3] = {kv_sorted, kv_shuffled, kv_dup};
    const uint32_t n[3] = {3, 4, 4};
    float tx[3][32];
    uint32_t frames[3];
    for (int i = 0; i < 3; i++) {
        file_bytes f = keyed_anim_cast(kb[i], kv[i], n[i]);
        kiln_bake_input in = {"keys.cast", f.data, f.size, NULL};
        baked b;
        cr_assert_eq(bake_with(&in, 1, NULL, &b), KILN_OK, "case %d: %s", i, b.err.message);
        clip_tx(b.blob, tx[i], 32, &frames[i]);
        baked_free(&b);
        file_bytes_free(&f);
    }
    cr_assert_eq(frames[0], 21);
    cr_expect_float_eq(tx[0][0], 1.0f, 0);
    cr_expect_float_eq(tx[0][5], 1.5f, 0);
    cr_expect_float_eq(tx[0][10], 2.0f, 0);
    cr_expect_float_eq(tx[0][20], 3.0f, 0);
    for (int i = 1; i < 3; i++) {
        cr_assert_eq(frames[i], frames[0], "case %d", i);
        cr_expect(memcmp(tx[i], tx[0], frames[0] * sizeof(float)) == 0, "case %d: samples differ from the sorted keys", i);
    }
}

/* ---- skeletons ----------------------------------------------------------------------------------------- */

/* Each bone's rest local equals its Cast lp/lr/s bit for bit (defaults where absent). */
static void expect_rest_equals_cast(const char *name)
{
    file_bytes f;
    char path[2048];
    baked b;
    if (!bake_corpus_file(name, NULL, &b, &f, path, sizeof path)) return;
    kiln_cast_doc *doc = parse(&f);
    uint32_t n;
    const kiln_blob_skeleton *sk = kiln_blob_skeletons(b.blob, &n);
    cr_assert_eq(n, 1, "%s", name);
    const kiln_blob_bone *bones = kiln_blob_bones(b.blob, &n) + sk->first_bone;
    for (uint32_t i = 0; i < sk->bone_count; i++) {
        uint32_t node = nth_node(doc, KILN_CAST_ID_BONE, bones[i].source_index);
        float lp[3] = {0, 0, 0}, lr[4] = {0, 0, 0, 1}, s[3] = {1, 1, 1};
        cr_assert(raw_vec(doc, node, "lp", 3, lp) | raw_vec(doc, node, "lr", 4, lr), "%s: bone %u has no local", name, i);
        raw_vec(doc, node, "s", 3, s);
        rest_bone r = blob_rest(b.blob, sk, i);
        for (int c = 0; c < 3; c++) {
            cr_expect_eq((float)r.t[c], lp[c], "%s bone %u t[%d]", name, i, c);
            cr_expect_eq((float)r.s[c], s[c], "%s bone %u s[%d]", name, i, c);
        }
        for (int c = 0; c < 4; c++) cr_expect_eq((float)r.q[c], lr[c], "%s bone %u q[%d]", name, i, c);
    }
    kiln_cast_free(doc);
    baked_free(&b);
    file_bytes_free(&f);
}

Test(bake_skeleton, rest_locals_are_the_cast_lp_lr_s_exactly)
{
    expect_rest_equals_cast("skel_chain3_local.cast");
    expect_rest_equals_cast("skel_chain3_both.cast");
    expect_rest_equals_cast("skel_chain3_scale_ssc.cast");
    expect_rest_equals_cast("anim_rig_model.cast");
    expect_rest_equals_cast("humanoid_model.cast");
}

/* MANIFEST.md: root (0,0,0), mid (0,1,0), tip (-2,1,0); mid rotation Rz(90)*Ry(45). */
static void expect_chain3_world(const char *name)
{
    file_bytes f;
    char path[2048];
    baked b;
    bake_corpus(name, NULL, &b, &f, path, sizeof path);
    static const double want[3][3] = {{0, 0, 0}, {0, 1, 0}, {-2, 1, 0}};
    static const double mid_q[4] = {-0.2706, 0.2706, 0.6533, 0.6533};
    static const char *const bone_names[3] = {"root", "mid", "tip"};
    uint32_t n;
    const kiln_blob_skeleton *sk = kiln_blob_skeletons(b.blob, &n);
    cr_assert_eq(n, 1);
    dmat *w = blob_world(b.blob, 0);
    for (int k = 0; k < 3; k++) {
        uint32_t i = find_bone(b.blob, 0, bone_names[k]);
        for (int c = 0; c < 3; c++) {
            cr_expect(fabs(w[i].m[12 + c] - want[k][c]) < 1e-4, "%s %s world[%d] = %g, want %g", name, bone_names[k],
                      c, w[i].m[12 + c], want[k][c]);
            /* The inverse bind agrees on its own: its inverse's translation is the position. */
        }
        cr_expect_lt(identity_error(blob_inverse_bind(b.blob, sk, i), &w[i]), 1e-5, "%s %s", name, bone_names[k]);
    }
    /* World rotation of mid = root rotation * mid rotation (no scale in this chain). */
    uint32_t r0 = find_bone(b.blob, 0, "root"), r1 = find_bone(b.blob, 0, "mid");
    rest_bone a = blob_rest(b.blob, sk, r0), m = blob_rest(b.blob, sk, r1);
    double q[4];
    qmul(a.q, m.q, q);
    double sign = q[3] * mid_q[3] + q[0] * mid_q[0] + q[1] * mid_q[1] + q[2] * mid_q[2] < 0 ? -1 : 1;
    for (int c = 0; c < 4; c++)
        cr_expect(fabs(sign * q[c] - mid_q[c]) < 1e-4, "%s mid rotation[%d] = %g, want %g", name, c, sign * q[c], mid_q[c]);
    free(w);
    baked_free(&b);
    file_bytes_free(&f);
}

Test(bake_skeleton, chain3_world_rest_matches_the_manifest_for_local_world_and_both)
{
    expect_chain3_world("skel_chain3_local.cast");
    expect_chain3_world("skel_chain3_world.cast");
    expect_chain3_world("skel_chain3_both.cast");
}

Test(bake_skeleton, inverse_binds_times_world_rest_is_identity_on_every_corpus_skeleton)
{
    static const char *const names[] = {"skel_chain3_scale_ssc.cast", "weights_mi4_h.cast", "anim_rig_model.cast",
                                        "ik_polevec_model.cast", "constraints_model.cast", "crowd.cast"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        file_bytes f;
        char path[2048];
        baked b;
        if (!bake_corpus_file(names[k], NULL, &b, &f, path, sizeof path)) continue;
        uint32_t skeletons;
        const kiln_blob_skeleton *sk = kiln_blob_skeletons(b.blob, &skeletons);
        cr_assert_gt(skeletons, 0, "%s", names[k]);
        for (uint32_t s = 0; s < skeletons; s++) {
            dmat *w = blob_world(b.blob, s);
            for (uint32_t i = 0; i < sk[s].bone_count; i++)
                cr_expect_lt(identity_error(blob_inverse_bind(b.blob, &sk[s], i), &w[i]), 1e-5, "%s skeleton %u bone %u",
                             names[k], s, i);
            free(w);
        }
        baked_free(&b);
        file_bytes_free(&f);
    }
}

/* skel_chain3_scale_ssc: mid has bind scale (2,1,1); ssc is 1 on root/mid, 0 on tip. The world
 * rest built here from the file's raw properties with the C.1 rule must invert the IBs. */
Test(bake_skeleton, scale_ssc_inverse_binds_follow_the_segment_scale_rule)
{
    file_bytes f;
    char path[2048];
    baked b;
    bake_corpus("skel_chain3_scale_ssc.cast", NULL, &b, &f, path, sizeof path);
    kiln_cast_doc *doc = parse(&f);
    uint32_t n;
    const kiln_blob_skeleton *sk = kiln_blob_skeletons(b.blob, &n);
    const kiln_blob_bone *bones = kiln_blob_bones(b.blob, &n) + sk->first_bone;
    dmat w[3];
    double scale[3][3];
    for (uint32_t i = 0; i < 3; i++) {
        uint32_t node = nth_node(doc, KILN_CAST_ID_BONE, bones[i].source_index);
        float lp[3] = {0, 0, 0}, lr[4] = {0, 0, 0, 1}, s[3] = {1, 1, 1}, ssc = 1;
        raw_vec(doc, node, "lp", 3, lp);
        raw_vec(doc, node, "lr", 4, lr);
        raw_vec(doc, node, "s", 3, s);
        raw_vec(doc, node, "ssc", 1, &ssc);
        double t[3] = {lp[0], lp[1], lp[2]}, q[4] = {lr[0], lr[1], lr[2], lr[3]};
        for (int c = 0; c < 3; c++) scale[i][c] = s[c];
        int32_t p = bones[i].parent;
        w[i] = world_of(p >= 0 ? &w[p] : NULL, p >= 0 ? scale[p] : NULL, ssc != 0, t, q, scale[i]);
        cr_expect_eq((bones[i].flags & KILN_BONE_SEGMENT_SCALE_COMPENSATE) != 0, ssc != 0, "bone %u ssc flag", i);
        cr_expect_lt(identity_error(blob_inverse_bind(b.blob, sk, i), &w[i]), 1e-5, "bone %u", i);
    }
    cr_expect_eq(sk->depth, 3);
    kiln_cast_free(doc);
    baked_free(&b);
    file_bytes_free(&f);
}

/* A child with ssc under a scaled parent: its position follows the parent's scale, its own
 * axes do not; without ssc its axes inherit the scale. */
Test(bake_skeleton, segment_scale_compensation_keeps_the_childs_axes_unscaled)
{
    static const float s2[3] = {2, 1, 1}, lp[3] = {1, 0, 0};
    for (int ssc = 0; ssc <= 1; ssc++) {
        const bone_spec bones[2] = {{"parent", -1, NULL, NULL, s2, NULL, NULL, -1}, {"child", 0, lp, NULL, NULL, NULL, NULL, ssc}};
        file_bytes f = skeleton_cast(bones, 2, -1);
        kiln_bake_input in = {"ssc.cast", f.data, f.size, NULL};
        baked b;
        cr_assert_eq(bake_with(&in, 1, NULL, &b), KILN_OK);
        uint32_t n;
        const kiln_blob_skeleton *sk = kiln_blob_skeletons(b.blob, &n);
        const float *ib = blob_inverse_bind(b.blob, sk, 1);
        /* IB = W^-1; W = T(2,0,0) * (ssc ? I : S(2,1,1)); so IB's x scale is 1 or 1/2. */
        cr_expect_float_eq(ib[0], ssc ? 1.0f : 0.5f, 1e-6f, "ssc %d: IB[0][0] = %g", ssc, (double)ib[0]);
        cr_expect_float_eq(ib[12], ssc ? -2.0f : -1.0f, 1e-6f, "ssc %d: IB translation x = %g", ssc, (double)ib[12]);
        baked_free(&b);
        file_bytes_free(&f);
    }
}

Test(bake_skeleton, children_listed_before_parents_are_sorted_parent_first_and_remapped)
{
    static const float a[3] = {1, 0, 0}, c[3] = {0, 0, 3}, d[3] = {0, 4, 0};
    const bone_spec bones[4] = {
        {"tip", 1, c, NULL, NULL, NULL, NULL, -1},   /* Cast 0 -> sorted 2 */
        {"mid", 2, a, NULL, NULL, NULL, NULL, -1},   /* Cast 1 -> sorted 1 */
        {"root", -1, NULL, NULL, NULL, NULL, NULL, -1}, /* Cast 2 -> sorted 0 */
        {"side", 2, d, NULL, NULL, NULL, NULL, -1},  /* Cast 3 -> sorted 3 */
    };
    file_bytes f = skeleton_cast(bones, 4, 0); /* the mesh is skinned to Cast bone 0, "tip" */
    kiln_bake_input in = {"order.cast", f.data, f.size, NULL};
    baked b;
    cr_assert_eq(bake_with(&in, 1, NULL, &b), KILN_OK);
    uint32_t n;
    const kiln_blob_skeleton *sk = kiln_blob_skeletons(b.blob, &n);
    const kiln_blob_bone *bo = kiln_blob_bones(b.blob, &n);
    static const uint32_t want_source[4] = {2, 1, 0, 3};
    static const int32_t want_parent[4] = {-1, 0, 1, 0};
    static const char *const want_name[4] = {"root", "mid", "tip", "side"};
    for (uint32_t i = 0; i < 4; i++) {
        cr_expect_eq(bo[i].source_index, want_source[i], "bone %u", i);
        cr_expect_eq(bo[i].parent, want_parent[i], "bone %u", i);
        cr_expect_str_eq(kiln_blob_string(b.blob, bo[i].name), want_name[i]);
        cr_expect_eq(bo[i].name_hash, kiln_name_hash(want_name[i]));
        /* The rest pose moved with the bone. */
        const float *lp = bones[want_source[i]].lp;
        rest_bone r = blob_rest(b.blob, sk, i);
        for (int k = 0; k < 3; k++) cr_expect_eq((float)r.t[k], lp ? lp[k] : 0.0f, "bone %u t[%d]", i, k);
    }
    cr_expect_eq(sk->depth, 3);
    /* Joints refer to the sorted order. */
    const kiln_blob_mesh *mesh = kiln_blob_meshes(b.blob, &n);
    cr_assert_eq(n, 1);
    cr_expect_eq(mesh->skeleton, 0);
    const kiln_blob_stream *joints = kiln_blob_mesh_stream(b.blob, mesh, KILN_ATTR_JOINTS, 0);
    cr_assert_not_null(joints);
    const unsigned char *j = kiln_blob_stream_data(b.blob, joints);
    for (uint32_t v = 0; v < joints->count; v++) {
        uint16_t joint;
        memcpy(&joint, j + (size_t)v * joints->stride, sizeof joint);
        cr_expect_eq(joint, 2, "vertex %u joint %u", v, joint);
    }
    baked_free(&b);
    file_bytes_free(&f);
}

Test(bake_skeleton, an_order_that_is_already_parent_first_is_kept_exactly)
{
    static const float lp[3] = {0, 1, 0};
    const bone_spec bones[5] = {
        {"a", -1, NULL, NULL, NULL, NULL, NULL, -1}, {"b", 0, lp, NULL, NULL, NULL, NULL, -1},
        {"c", -1, NULL, NULL, NULL, NULL, NULL, -1}, {"d", 0, lp, NULL, NULL, NULL, NULL, -1},
        {"e", 3, lp, NULL, NULL, NULL, NULL, -1},
    };
    file_bytes f = skeleton_cast(bones, 5, -1);
    kiln_bake_input in = {"kept.cast", f.data, f.size, NULL};
    baked b;
    cr_assert_eq(bake_with(&in, 1, NULL, &b), KILN_OK);
    uint32_t n;
    const kiln_blob_bone *bo = kiln_blob_bones(b.blob, &n);
    cr_assert_eq(n, 5);
    for (uint32_t i = 0; i < 5; i++) {
        cr_expect_eq(bo[i].source_index, i);
        cr_expect_eq(bo[i].parent, bones[i].parent);
    }
    baked_free(&b);
    file_bytes_free(&f);
}

Test(bake_skeleton, world_only_bones_derive_locals_and_missing_names_and_duplicates_are_handled)
{
    /* Parent at (0,0,1) rotated 90 degrees about Z; the child given only in world space. */
    static const float plp[3] = {0, 0, 1}, plr[4] = {0, 0, 0.70710678f, 0.70710678f};
    static const float cwp[3] = {-1, 0, 1}, cwr[4] = {0, 0, 0.70710678f, 0.70710678f};
    const bone_spec bones[3] = {
        {"dup", -1, plp, plr, NULL, NULL, NULL, -1},
        {NULL, 0, NULL, NULL, NULL, cwp, cwr, -1},
        {"dup", 0, NULL, NULL, NULL, NULL, NULL, -1},
    };
    file_bytes f = skeleton_cast(bones, 3, -1);
    kiln_bake_input in = {"world.cast", f.data, f.size, NULL};
    baked b;
    cr_assert_eq(bake_with(&in, 1, NULL, &b), KILN_OK);
    uint32_t n;
    const kiln_blob_skeleton *sk = kiln_blob_skeletons(b.blob, &n);
    const kiln_blob_bone *bo = kiln_blob_bones(b.blob, &n);
    cr_expect_str_eq(kiln_blob_string(b.blob, bo[1].name), "bone1");
    rest_bone r = blob_rest(b.blob, sk, 1);
    /* lp = rot(conj(Rz90), (-1,0,1) - (0,0,1)) = (0,1,0); lr = identity. */
    cr_expect(fabs(r.t[0]) < 1e-6 && fabs(r.t[1] - 1) < 1e-6 && fabs(r.t[2]) < 1e-6, "t = (%g, %g, %g)", r.t[0], r.t[1], r.t[2]);
    cr_expect(fabs(fabs(r.q[3]) - 1) < 1e-6, "q = (%g, %g, %g, %g)", r.q[0], r.q[1], r.q[2], r.q[3]);
    cr_expect(diag_log_has(&b.log, KILN_ERR_CAST_DUPLICATE, KILN_SEVERITY_WARNING));
    cr_expect_eq(kiln_blob_find_bone(b.blob, 0, "dup"), 0); /* the first bone with the name */
    baked_free(&b);
    file_bytes_free(&f);
}

/* ---- materials, instances, metadata --------------------------------------------------------------- */

static double srgb_decode(double c) { return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4); }

static const kiln_blob_material_slot *find_slot(const kiln_blob *blob, const kiln_blob_material *m, const char *name)
{
    uint32_t n;
    const kiln_blob_material_slot *s = kiln_blob_material_slots(blob, &n);
    for (uint32_t k = 0; k < m->slot_count; k++)
        if (strcmp(kiln_blob_string(blob, s[m->first_slot + k].name), name) == 0) return &s[m->first_slot + k];
    return NULL;
}

Test(bake_material, mesh_attributes_slots_resolve_and_colours_decode)
{
    file_bytes f;
    char path[2048];
    baked b;
    bake_corpus("mesh_attributes.cast", NULL, &b, &f, path, sizeof path);
    kiln_cast_doc *doc = parse(&f);
    uint32_t n;
    const kiln_blob_material *m = kiln_blob_materials(b.blob, &n);
    cr_assert_eq(n, 1);
    uint32_t mat_node = nth_node(doc, KILN_CAST_ID_MATERIAL, 0);
    cr_expect_str_eq(kiln_blob_string(b.blob, m->name), kiln_cast_prop_str(kiln_cast_find_prop(doc, mat_node, "n", NULL)));
    cr_expect_str_eq(kiln_blob_string(b.blob, m->type), "pbr");
    /* Every slot property of the Material, resolved here through its hash. */
    uint32_t slots = 0;
    for (uint32_t k = 0; k < kiln_cast_node_at(doc, mat_node)->prop_count; k++) {
        const kiln_cast_prop *p = kiln_cast_prop_at(doc, mat_node, k);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)p->name_len, p->name);
        if (!strcmp(name, "n") || !strcmp(name, "t")) continue;
        slots++;
        uint32_t target = kiln_cast_find_hash(doc, mat_node, kiln_cast_prop_u64(p, 0));
        const kiln_blob_material_slot *s = find_slot(b.blob, m, name);
        cr_assert_not_null(s, "slot %s missing", name);
        if (kiln_cast_node_at(doc, target)->id == KILN_CAST_ID_FILE) {
            cr_expect_eq(s->kind, KILN_SLOT_FILE);
            cr_expect_str_eq(kiln_blob_string(b.blob, s->path), kiln_cast_prop_str(kiln_cast_find_prop(doc, target, "p", NULL)));
            continue;
        }
        cr_expect_eq(s->kind, KILN_SLOT_COLOR);
        float rgba[4];
        raw_vec(doc, target, "rgba", 4, rgba);
        const kiln_cast_prop *cs = kiln_cast_find_prop(doc, target, "cs", NULL);
        int linear = cs && strcmp(kiln_cast_prop_str(cs), "linear") == 0;
        cr_expect_eq(s->color_space, (uint32_t)linear, "%s", name);
        for (int c = 0; c < 4; c++) {
            cr_expect_eq(s->rgba[c], rgba[c], "%s rgba[%d]", name, c);
            double want = linear || c == 3 ? rgba[c] : srgb_decode(rgba[c]);
            cr_expect(fabs(s->rgba_linear[c] - want) < 1e-6, "%s linear[%d] = %g, want %g", name, c,
                      (double)s->rgba_linear[c], want);
        }
    }
    cr_expect_eq(slots, 6);
    cr_expect_eq(m->slot_count, slots);
    const kiln_blob_material_slot *emissive = find_slot(b.blob, m, "emissive"), *spec = find_slot(b.blob, m, "specular");
    cr_assert(emissive && spec);
    cr_expect(memcmp(emissive->rgba, emissive->rgba_linear, sizeof emissive->rgba) == 0, "linear colour changed");
    cr_expect_neq(spec->rgba[0], spec->rgba_linear[0], "sRGB colour not decoded");
    /* The quad mesh and the hair link to it; the legacy mesh has none. */
    const kiln_blob_mesh *mesh = kiln_blob_meshes(b.blob, &n);
    cr_assert_eq(n, 2);
    cr_expect_eq(mesh[0].material, 0);
    cr_expect_eq(mesh[1].material, KILN_BLOB_NONE);
    const kiln_blob_hair *h = kiln_blob_hairs(b.blob, &n);
    cr_assert_eq(n, 1);
    cr_expect_eq(h->material, 0);
    cr_expect_eq(h->strand_count, 2);
    cr_expect_eq(h->particle_count, 7);
    kiln_cast_free(doc);
    baked_free(&b);
    file_bytes_free(&f);
}

Test(bake_material, missing_names_become_material_index_and_dangling_slots_are_dropped)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    uint32_t named = kiln_cast_writer_node(w, model, KILN_CAST_ID_MATERIAL, 3);
    kiln_cast_writer_string(w, named, "n", "first");
    uint32_t mat = kiln_cast_writer_node(w, model, KILN_CAST_ID_MATERIAL, 4);
    kiln_cast_writer_u64(w, mat, "albedo", 99); /* no such child */
    kiln_cast_writer_u64(w, mat, "normal", 5);
    uint32_t file = kiln_cast_writer_node(w, mat, KILN_CAST_ID_FILE, 5);
    kiln_cast_writer_string(w, file, "p", "n.png");
    file_bytes f = writer_bytes(w);
    kiln_bake_input in = {"mat.cast", f.data, f.size, NULL};
    baked b;
    cr_assert_eq(bake_with(&in, 1, NULL, &b), KILN_OK);
    uint32_t n;
    const kiln_blob_material *m = kiln_blob_materials(b.blob, &n);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(kiln_blob_string(b.blob, m[1].name), "material1");
    cr_expect_eq(m[1].slot_count, 1);
    cr_expect_not_null(find_slot(b.blob, &m[1], "normal"));
    cr_expect_null(find_slot(b.blob, &m[1], "albedo"));
    cr_expect_eq(kiln_blob_find(b.blob, KILN_SECTION_MATERIALS, "material1"), 1);
    cr_expect_eq(b.res.stats.errors, 0); /* a dangling slot drops no data: warnings only */
    baked_free(&b);
    file_bytes_free(&f);
}

Test(bake_instance, instances_small_transforms_paths_and_grouping)
{
    file_bytes f;
    char path[2048];
    baked b;
    bake_corpus("instances_small.cast", NULL, &b, &f, path, sizeof path);
    kiln_cast_doc *doc = parse(&f);
    uint32_t count, refs;
    const kiln_blob_instance *inst = kiln_blob_instances(b.blob, &count);
    const kiln_blob_reference *ref = kiln_blob_references(b.blob, &refs);
    cr_assert_eq(count, 6);
    cr_assert_eq(refs, 3);
    /* Grouped: each reference's range holds exactly its instances, ranges back to back. */
    uint32_t next = 0;
    for (uint32_t r = 0; r < refs; r++) {
        cr_expect_eq(ref[r].first_instance, next);
        next += ref[r].instance_count;
        for (uint32_t i = ref[r].first_instance; i < ref[r].first_instance + ref[r].instance_count; i++)
            cr_expect_eq(inst[i].reference, r);
    }
    cr_expect_eq(next, 6);
    /* Every Instance of the file, by its position in the file. */
    uint32_t first_seen[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
    for (uint32_t k = 0; k < 6; k++) {
        uint32_t node = nth_node(doc, KILN_CAST_ID_INSTANCE, k);
        const kiln_blob_instance *bi = NULL;
        for (uint32_t i = 0; i < count; i++)
            if (inst[i].source_index == k) bi = &inst[i];
        cr_assert_not_null(bi, "instance %u missing", k);
        float p[3] = {0, 0, 0}, q[4] = {0, 0, 0, 1}, s[3] = {1, 1, 1};
        raw_vec(doc, node, "p", 3, p);
        raw_vec(doc, node, "r", 4, q);
        raw_vec(doc, node, "s", 3, s);
        for (int c = 0; c < 3; c++) {
            cr_expect_eq(bi->position[c], p[c], "instance %u p[%d]", k, c);
            cr_expect_eq(bi->scale[c], s[c], "instance %u s[%d]", k, c);
        }
        for (int c = 0; c < 4; c++) cr_expect(fabsf(bi->rotation[c] - q[c]) < 1e-6f, "instance %u r[%d]", k, c);
        const char *written = kiln_cast_prop_str(kiln_cast_find_prop(doc, kiln_cast_node_at(doc, node)->first_child, "p", NULL));
        cr_expect_str_eq(kiln_blob_string(b.blob, ref[bi->reference].path), written);
        /* sr is "." next to the file: the resolved path, relative to the scene root, is the
         * written one normalised, wherever the corpus lies */
        char *norm = kiln__path_normalise(NULL, written);
        cr_expect_str_eq(kiln_blob_string(b.blob, ref[bi->reference].resolved_path), norm);
        free(norm);
        if (first_seen[bi->reference] == UINT32_MAX) first_seen[bi->reference] = k;
        cr_expect_eq(bi->source, 0);
    }
    cr_expect(first_seen[0] < first_seen[1] && first_seen[1] < first_seen[2], "references not in order of first appearance");
    cr_expect_eq(kiln_blob_find(b.blob, KILN_SECTION_REFERENCES, "tri_mesh.cast"),
                 strcmp(kiln_blob_string(b.blob, ref[0].path), "tri_mesh.cast") == 0 ? 0u
                 : strcmp(kiln_blob_string(b.blob, ref[1].path), "tri_mesh.cast") == 0 ? 1u : 2u);
    const kiln_blob_metadata *md = kiln_blob_metadata_of(b.blob);
    cr_expect_str_eq(kiln_blob_string(b.blob, md->scene_root), "."); /* the frame of the references, not the corpus folder */
    cr_expect_eq(md->up_axis, KILN_UP_Y);
    kiln_cast_free(doc);
    baked_free(&b);
    file_bytes_free(&f);
}

Test(bake_instance, scene_root_comes_from_metadata_else_the_option_else_the_instance_is_dropped)
{
    file_bytes f = scene_cast(); /* Metadata sr "assets" */
    kiln_bake_input in = {"levels/one/level.cast", f.data, f.size, NULL};
    baked b;
    cr_assert_eq(bake_with(&in, 1, NULL, &b), KILN_OK);
    uint32_t n;
    const kiln_blob_reference *ref = kiln_blob_references(b.blob, &n);
    cr_assert_eq(n, 2, "'./props/../props/crate.cast' is the same file as 'props/crate.cast'");
    /* relative to the scene root, never to the input's folder or the working directory */
    cr_expect_str_eq(kiln_blob_string(b.blob, ref[0].resolved_path), "props/crate.cast");
    cr_expect_str_eq(kiln_blob_string(b.blob, ref[1].resolved_path), "props/barrel.cast");
    cr_expect_eq(ref[0].instance_count, 2);
    const kiln_blob_instance *inst = kiln_blob_instances(b.blob, &n);
    cr_expect_eq(inst[0].source_index, 0);
    cr_expect_eq(inst[1].source_index, 2);
    cr_expect_eq(inst[2].source_index, 1);
    cr_expect_eq(inst[1].position[0], 2.0f);
    cr_expect_str_eq(kiln_blob_string(b.blob, inst[0].name), "crate"); /* no n: the file's name */
    /* the references are relative to the scene root, which the blob names "." (never where it lies) */
    cr_expect_str_eq(kiln_blob_string(b.blob, kiln_blob_metadata_of(b.blob)->scene_root), ".");
    baked_free(&b);
    file_bytes_free(&f);

    /* No Metadata: the option, else an ERROR per instance and the instance is gone. */
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    const char *paths[2] = {"rel/thing.cast", "/abs/thing.cast"};
    for (uint32_t i = 0; i < 2; i++) {
        uint32_t inst_node = kiln_cast_writer_node(w, root, KILN_CAST_ID_INSTANCE, 10 + i);
        kiln_cast_writer_u64(w, inst_node, "rf", 20 + i);
        uint32_t file = kiln_cast_writer_node(w, inst_node, KILN_CAST_ID_FILE, 20 + i);
        kiln_cast_writer_string(w, file, "p", paths[i]);
    }
    f = writer_bytes(w);
    in.path = "x.cast";
    in.data = f.data;
    in.size = f.size;
    in.format = NULL;
    cr_assert_eq(bake_with(&in, 1, NULL, &b), KILN_OK);
    ref = kiln_blob_references(b.blob, &n);
    cr_assert_eq(n, 1, "only the absolute path resolves without a scene root");
    cr_expect_str_eq(kiln_blob_string(b.blob, ref[0].resolved_path), "/abs/thing.cast");
    cr_expect_eq(kiln_blob_instances(b.blob, &n)->source_index, 1);
    cr_expect(diag_log_has(&b.log, KILN_ERR_NOT_FOUND, KILN_SEVERITY_ERROR));
    baked_free(&b);

    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.scene_root = "/data/./world/";
    cr_assert_eq(bake_with(&in, 1, &o, &b), KILN_OK);
    ref = kiln_blob_references(b.blob, &n);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(kiln_blob_string(b.blob, ref[0].resolved_path), "rel/thing.cast");
    cr_expect_eq(b.res.stats.errors, 0);
    cr_expect_str_eq(kiln_blob_string(b.blob, kiln_blob_metadata_of(b.blob)->scene_root), ".", "not /data/world");
    baked_free(&b);
    file_bytes_free(&f);
}

Test(bake_metadata, first_metadata_supplies_the_hints)
{
    file_bytes f;
    char path[2048];
    baked b;
    bake_corpus("mesh_attributes.cast", NULL, &b, &f, path, sizeof path);
    const kiln_blob_metadata *md = kiln_blob_metadata_of(b.blob);
    cr_assert_not_null(md);
    cr_expect_str_eq(kiln_blob_string(b.blob, md->author), "corpus-generator");
    cr_expect_str_eq(kiln_blob_string(b.blob, md->software), "make_corpus.py");
    cr_expect_eq(md->up_axis, KILN_UP_Z);
    cr_expect_eq(md->source_count, 1);
    cr_expect_eq(md->scene_root, 0); /* no sr and no option */
    uint32_t n;
    const kiln_blob_model *m = kiln_blob_models(b.blob, &n);
    cr_assert_eq(n, 1);
    /* The Model transform is kept as authored (C.9), not folded into anything. */
    cr_expect_eq(m->position[0], 1.0f);
    cr_expect_eq(m->position[1], 2.0f);
    cr_expect_eq(m->position[2], 3.0f);
    cr_expect_eq(m->scale[0], 2.0f);
    baked_free(&b);
    file_bytes_free(&f);
}

Test(bake_scene, writer_scene_bakes_every_kind_and_warns_about_the_empty_animation)
{
    file_bytes f = scene_cast();
    kiln_bake_input in = {"scene.cast", f.data, f.size, NULL};
    baked b;
    cr_assert_eq(bake_with(&in, 1, NULL, &b), KILN_OK);
    const kiln_bake_stats *s = &b.res.stats;
    cr_expect_eq(s->models, 1);
    cr_expect_eq(s->skeletons, 1);
    cr_expect_eq(s->bones, 3);
    cr_expect_eq(s->meshes, 1);
    cr_expect_eq(s->hairs, 1);
    cr_expect_eq(s->materials, 1);
    cr_expect_eq(s->instances, 3);
    cr_expect_eq(s->animations, 1);
    cr_expect(diag_log_has(&b.log, KILN_ERR_CAST_EMPTY, KILN_SEVERITY_WARNING), "no warning about the empty Animation");
    /* An unnamed Animation is named after its file, as the importers name the action. */
    uint32_t clip = kiln_blob_find(b.blob, KILN_SECTION_ANIMATIONS, "scene");
    cr_assert_eq(clip, 0);
    const kiln_blob_animation *an = kiln_blob_animations(b.blob, &clip);
    cr_expect_eq(an->joint_count, 0);
    cr_expect_eq(an->first_frame, 0); /* no keys: the range is [0, 1] (D.1) */
    cr_expect_eq(an->last_frame, 1);
    cr_expect_eq(kiln_blob_find(b.blob, KILN_SECTION_MODELS, "hero"), 0);
    cr_expect_eq(kiln_blob_find(b.blob, KILN_SECTION_MESHES, "body"), 0);
    cr_expect_eq(kiln_blob_find(b.blob, KILN_SECTION_HAIRS, "fringe"), 0);
    cr_expect_eq(kiln_blob_find(b.blob, KILN_SECTION_MATERIALS, "skin"), 0);
    cr_expect_eq(kiln_blob_find_bone(b.blob, 0, "head"), 2);
    uint32_t n;
    const kiln_blob_material_slot *slot = kiln_blob_material_slots(b.blob, &n);
    cr_assert_eq(n, 2);
    cr_expect_eq(slot[1].color_space, 0);
    cr_expect(fabs(slot[1].rgba_linear[0] - srgb_decode(0.5)) < 1e-6);
    cr_expect_eq(slot[1].rgba_linear[3], 0.5f);
    const kiln_blob_header *h = kiln_blob_header_of(b.blob);
    cr_expect_eq(h->flags, 0);
    cr_expect_eq(h->total_size % KILN_BLOB_ALIGN, 0);
    /* Every section's padding is zero up to the next section (determinism). */
    const kiln_blob_section *sec = kiln_blob_sections(b.blob, &n);
    const unsigned char *bytes = b.res.blob;
    for (uint32_t k = 0; k < n; k++) {
        uint64_t end = k + 1 < n ? sec[k + 1].offset : h->total_size;
        cr_expect_eq(sec[k].offset % KILN_BLOB_ALIGN, 0);
        for (uint64_t at = sec[k].offset + sec[k].size; at < end; at++) cr_expect_eq(bytes[at], 0, "byte %llu", (unsigned long long)at);
    }
    baked_free(&b);

    /* Quantisation sets the header flag. */
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.flags = KILN_BAKE_QUANTIZE_POSITIONS;
    cr_assert_eq(bake_with(&in, 1, &o, &b), KILN_OK);
    cr_expect_eq(kiln_blob_header_of(b.blob)->flags, KILN_BLOB_FLAG_QUANTIZED);
    baked_free(&b);
    file_bytes_free(&f);
}

/* ---- strict mode ------------------------------------------------------------------------------------ */

Test(bake_strict, any_dropped_data_fails_a_strict_bake_and_only_it)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 3);
    static const float vp[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    const uint32_t faces[6] = {0, 1, 2, 0, 1, 7}; /* the second triangle refers past the end */
    kiln_cast_writer_floats(w, mesh, "vp", KILN_CAST_TYPE_VEC3, vp, 3);
    kiln_cast_writer_ints(w, mesh, "f", faces, 6);
    file_bytes f = writer_bytes(w);
    kiln_bake_input in = {"drop.cast", f.data, f.size, NULL};

    baked b;
    cr_assert_eq(bake_with(&in, 1, NULL, &b), KILN_OK);
    cr_expect_geq(b.res.stats.errors, 1);
    cr_expect_eq(b.res.stats.triangles_out, 1);
    baked_free(&b);

    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.flags = KILN_BAKE_STRICT;
    kiln_result r = bake_with(&in, 1, &o, &b);
    cr_expect_neq(r, KILN_OK);
    cr_expect_null(b.res.blob);
    cr_expect_eq(b.res.size, 0);
    cr_expect(strstr(b.err.message, "strict") != NULL, "%s", b.err.message);
    cr_expect(strncmp(b.err.path, "drop.cast", 9) == 0, "%s", b.err.path);

    /* Warnings alone do not fail it. */
    file_bytes g = scene_cast();
    in.data = g.data;
    in.size = g.size;
    memset(&o, 0, sizeof o);
    o.flags = KILN_BAKE_STRICT;
    o.scene_root = "/";
    cr_expect_eq(bake_with(&in, 1, &o, &b), KILN_OK, "%s", b.err.message);
    baked_free(&b);
    file_bytes_free(&f);
    file_bytes_free(&g);
}

Test(bake_api, bad_arguments_are_rejected)
{
    kiln_bake_result res;
    kiln_diag err;
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.max_influences = 9;
    file_bytes f = scene_cast();
    kiln_bake_input in = {"s.cast", f.data, f.size, NULL};
    cr_expect_eq(kiln_bake(&in, 1, &o, &res, &err), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_bake(&in, 1, NULL, NULL, &err), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_bake(NULL, 1, NULL, &res, &err), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_bake_save(NULL, "x.kiln", &err), KILN_ERR_INVALID_ARGUMENT);
    kiln_bake_result_free(NULL);
    /* No inputs: an empty blob that still loads. */
    baked b;
    cr_assert_eq(bake_with(NULL, 0, NULL, &b), KILN_OK);
    cr_expect_eq(kiln_blob_metadata_of(b.blob)->source_count, 0);
    baked_free(&b);
    file_bytes_free(&f);
}

/* Root > Model (no name) > Mesh: one triangle. */
static file_bytes unnamed_model_cast(void)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    for (uint64_t m = 0; m < 2; m++) {
        uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2 + 2 * m);
        uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 3 + 2 * m);
        static const float vp[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
        const uint32_t f[3] = {0, 1, 2};
        kiln_cast_writer_floats(w, mesh, "vp", KILN_CAST_TYPE_VEC3, vp, 3);
        kiln_cast_writer_ints(w, mesh, "f", f, 3);
    }
    return writer_bytes(w);
}

Test(bake_api, unnamed_models_take_the_file_name_and_a_null_path_is_allowed)
{
    file_bytes f = unnamed_model_cast();
    kiln_bake_input in = {"art/props/crate.v2.cast", f.data, f.size, NULL};
    baked b;
    cr_assert_eq(bake_with(&in, 1, NULL, &b), KILN_OK);
    uint32_t n;
    const kiln_blob_model *m = kiln_blob_models(b.blob, &n);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(kiln_blob_string(b.blob, m[0].name), "crate.v2");
    cr_expect_str_eq(kiln_blob_string(b.blob, m[1].name), "crate.v2_1");
    const kiln_blob_mesh *mesh = kiln_blob_meshes(b.blob, &n);
    cr_expect_eq(mesh[1].model, 1);
    baked_free(&b);
    in.path = NULL;
    cr_assert_eq(bake_with(&in, 1, NULL, &b), KILN_OK);
    cr_expect_str_eq(kiln_blob_string(b.blob, kiln_blob_models(b.blob, &n)[0].name), "model");
    baked_free(&b);
    file_bytes_free(&f);
}

Test(bake_api, diagnostics_beyond_the_cap_are_counted_and_summarised)
{
    /* 1100 Mesh nodes directly under the Root: one warning each. */
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    for (uint64_t i = 0; i < 1100; i++) kiln_cast_writer_node(w, root, KILN_CAST_ID_MESH, 10 + i);
    file_bytes f = writer_bytes(w);
    kiln_bake_input in = {"many.cast", f.data, f.size, NULL};
    baked b;
    cr_assert_eq(bake_with(&in, 1, NULL, &b), KILN_OK);
    cr_expect_eq(b.res.stats.warnings, 1100);
    cr_expect_eq(b.log.count, 1001, "1000 reports and one summary, got %d", b.log.count);
    baked_free(&b);
    file_bytes_free(&f);
}

Test(bake_determinism, a_failing_input_fails_a_threaded_bake_with_its_own_error)
{
    file_bytes good = scene_cast();
    static const unsigned char bad[16] = {'n', 'o', 'p', 'e'};
    kiln_bake_input in[4] = {{"a.cast", good.data, good.size, NULL}, {"b.cast", good.data, good.size, NULL},
                             {"broken.cast", bad, sizeof bad, NULL}, {"d.cast", good.data, good.size, NULL}};
    for (uint32_t threads = 1; threads <= 4; threads += 3) {
        kiln_bake_options o;
        memset(&o, 0, sizeof o);
        o.threads = threads;
        baked b;
        /* bytes no importer recognises: ERR_FORMAT_UNKNOWN (the Cast reader's BAD_MAGIC is
         * for input read as Cast) */
        cr_expect_eq(bake_with(in, 4, &o, &b), KILN_ERR_FORMAT_UNKNOWN, "threads %u", threads);
        cr_expect_null(b.res.blob);
        cr_expect(strncmp(b.err.path, "broken.cast", 11) == 0, "threads %u: %s", threads, b.err.path);
    }
    file_bytes_free(&good);
}

/* ---- saving ------------------------------------------------------------------------------------------- */

static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

Test(bake_save, writes_the_blob_atomically_and_fails_cleanly)
{
    file_bytes f = scene_cast();
    kiln_bake_input in = {"s.cast", f.data, f.size, NULL};
    baked b;
    cr_assert_eq(bake_with(&in, 1, NULL, &b), KILN_OK);
    char dir[] = "/tmp/kiln_bake_save_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256], missing[256];
    snprintf(path, sizeof path, "%s/out.kiln", dir);
    snprintf(missing, sizeof missing, "%s/no/such/dir/out.kiln", dir);

    kiln_diag err;
    cr_assert_eq(kiln_bake_save(&b.res, path, &err), KILN_OK, "%s", err.message);
    file_bytes back;
    cr_assert(read_file(path, &back));
    cr_expect_eq(back.size, b.res.size);
    cr_expect(memcmp(back.data, b.res.blob, back.size) == 0);
    file_bytes_free(&back);
    cr_assert_eq(kiln_bake_save(&b.res, path, &err), KILN_OK, "overwriting");
    cr_expect_eq(dir_entries(dir), 1, "a temporary file was left behind");

    memset(&err, 0, sizeof err);
    cr_expect_eq(kiln_bake_save(&b.res, missing, &err), KILN_ERR_OUTPUT);
    cr_expect_eq(err.code, KILN_ERR_OUTPUT);
    cr_expect(strstr(err.message, missing) != NULL, "%s", err.message);
    cr_expect(strstr(err.message, "No such file or directory") != NULL, "%s", err.message);
    cr_expect_eq(dir_entries(dir), 1, "the failed save left something");

    unlink(path);
    rmdir(dir);
    baked_free(&b);
    file_bytes_free(&f);
}

/* ---- allocation failures ------------------------------------------------------------------------------ */

Test(bake_alloc, every_allocation_failure_is_reported_and_nothing_leaks)
{
    file_bytes scene = scene_cast();
    static const float lp[3] = {0, 1, 0}, s2[3] = {2, 2, 2};
    const bone_spec bones[3] = {{"c", 2, lp, NULL, NULL, NULL, NULL, -1},
                                {"b", 2, lp, NULL, s2, NULL, NULL, 1},
                                {"a", -1, NULL, NULL, NULL, NULL, NULL, -1}};
    file_bytes rig = skeleton_cast(bones, 3, 0);
    kiln_bake_input in[2] = {{"scene.cast", scene.data, scene.size, NULL}, {"rig.cast", rig.data, rig.size, NULL}};
    int fail_at;
    for (fail_at = 0; fail_at < 100000; fail_at++) {
        counting_alloc ca = {fail_at, 0, 0};
        kiln_allocator a = counting_allocator(&ca);
        kiln_bake_options o;
        memset(&o, 0, sizeof o);
        o.allocator = &a;
        kiln_bake_result res;
        kiln_diag err;
        kiln_result r = kiln_bake(in, 2, &o, &res, &err);
        if (r == KILN_OK) {
            kiln_bake_result_free(&res);
            cr_expect_eq(ca.live, 0, "leak after a successful bake");
            break;
        }
        cr_expect_eq(r, KILN_ERR_OUT_OF_MEMORY, "allocation %d: %s", fail_at, err.message);
        cr_expect_null(res.blob);
        cr_expect_eq(ca.live, 0, "allocation %d failed: %d blocks leaked", fail_at, ca.live);
    }
    cr_expect_gt(fail_at, 10, "the sweep covered only %d allocations", fail_at);
    file_bytes_free(&scene);
    file_bytes_free(&rig);
}

/* counting_alloc behind a lock, for bakes on several threads. */
typedef struct locked_alloc {
    pthread_mutex_t lock;
    counting_alloc  ca;
} locked_alloc;

static void *locked_realloc(void *user, void *ptr, size_t size)
{
    locked_alloc *la = user;
    pthread_mutex_lock(&la->lock);
    void *p = counting_realloc(&la->ca, ptr, size);
    pthread_mutex_unlock(&la->lock);
    return p;
}

static void locked_free(void *user, void *ptr)
{
    locked_alloc *la = user;
    pthread_mutex_lock(&la->lock);
    counting_free(&la->ca, ptr);
    pthread_mutex_unlock(&la->lock);
}

/* Clips encoded on threads (bake_clips.c): an allocation failure anywhere, whichever thread
 * meets it, fails the bake with ERR_OUT_OF_MEMORY (or, for the lossy encoder's caches, stores
 * the clip lossless) and frees everything. Which allocation is the n-th depends on the
 * threads' timing; n runs up to a bake that makes fewer allocations, in growing steps. */
Test(bake_alloc, allocation_failures_while_clips_encode_on_threads_are_reported_and_nothing_leaks)
{
    static const char *const names[] = {"anim_rig_model.cast", "anim_abs_all.cast", "anim_override_ot.cast",
                                        "anim_quat_edge.cast"};
    enum { N = sizeof names / sizeof names[0] };
    file_bytes f[N];
    char paths[N][2048];
    kiln_bake_input in[N];
    corpus_inputs(names, N, f, paths, in);
    int fail_at, failed = 0;
    for (fail_at = 0; fail_at < 1000000; fail_at += 1 + fail_at / 64) {
        locked_alloc la = {.ca = {fail_at, 0, 0}};
        cr_assert_eq(pthread_mutex_init(&la.lock, NULL), 0);
        kiln_allocator a = {locked_realloc, locked_free, &la};
        kiln_bake_options o;
        memset(&o, 0, sizeof o);
        o.allocator = &a;
        o.flags = KILN_BAKE_LOSSY_ANIMATION;
        o.threads = 3;
        kiln_bake_result res;
        kiln_diag err;
        kiln_result r = kiln_bake(in, N, &o, &res, &err);
        if (r == KILN_OK) { /* a clip whose encoder's caches fail is stored lossless, with a warning */
            kiln_bake_result_free(&res);
        } else {
            cr_expect_eq(r, KILN_ERR_OUT_OF_MEMORY, "allocation %d: %s", fail_at, err.message);
            failed++;
        }
        cr_expect_eq(la.ca.live, 0, "allocation %d: %d blocks leaked", fail_at, la.ca.live);
        pthread_mutex_destroy(&la.lock);
        if (la.ca.calls <= fail_at) break; /* no allocation failed: the sweep is complete */
    }
    cr_expect_gt(failed, 100, "the sweep failed only %d bakes (up to allocation %d)", failed, fail_at);
    for (int i = 0; i < N; i++) file_bytes_free(&f[i]);
}

/* ---- path helpers ---------------------------------------------------------------------------------- */

Test(bake_paths, normalise_join_dirname_stem)
{
    static const char *const cases[][2] = {
        {"a/./b/../c", "a/c"}, {"", "."}, {".", "."}, {"./", "."}, {"../x", "../x"}, {"a/../../x", "../x"},
        {"/../x", "/x"}, {"/", "/"}, {"a//b///c/", "a/b/c"}, {"a\\b\\..\\c", "a/c"}, {"C:\\x\\..\\y", "C:/y"},
        {"../../a/..", "../.."}, {"/a/b/../../..", "/"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *n = kiln__path_normalise(NULL, cases[i][0]);
        cr_expect_str_eq(n, cases[i][1], "normalise('%s')", cases[i][0]);
        free(n);
    }
    char *j = kiln__path_join(NULL, "root/dir", "../x.cast");
    cr_expect_str_eq(j, "root/x.cast");
    free(j);
    j = kiln__path_join(NULL, "root", "/abs/x.cast");
    cr_expect_str_eq(j, "/abs/x.cast");
    free(j);
    j = kiln__path_dirname(NULL, "a/b/c.cast");
    cr_expect_str_eq(j, "a/b");
    free(j);
    j = kiln__path_dirname(NULL, "c.cast");
    cr_expect_str_eq(j, ".");
    free(j);
    j = kiln__path_dirname(NULL, "/c.cast");
    cr_expect_str_eq(j, "/");
    free(j);
    j = kiln__path_stem(NULL, "dir.v2/hero.final.cast");
    cr_expect_str_eq(j, "hero.final");
    free(j);
    cr_expect(kiln__path_is_absolute("/x") && kiln__path_is_absolute("D:/x") && !kiln__path_is_absolute("x/y"));
}
