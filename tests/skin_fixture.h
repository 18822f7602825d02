/* Skinned meshes and skinning matrices for the skinning tests and benchmark, made without the
 * baker (tests/blob_build.h writes the blob), so that every stream format, stride, influence
 * count and method can be chosen directly. Header-only (static inline).
 *
 *   sf_mesh_opts o = sf_defaults(1000, 4);  o.dir_format = KILN_FORMAT_OCT16x2;
 *   size_t size;  unsigned char *mem = sf_build(&o, &size);   // 64-aligned, free() it
 *   const kiln_blob *blob = sf_load(mem, size);                // mesh 0, skeleton 0
 *   float *skin = sf_matrices(o.bones, seed, 1);                // random skinning matrices
 */
#ifndef KILN_TEST_SKIN_FIXTURE_H
#define KILN_TEST_SKIN_FIXTURE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "anim_fixture.h" /* af_lcg, af_rand */
#include "blob_build.h"
#include "kiln/blob.h"

typedef struct sf_mesh_opts {
    uint32_t vertices, bones, influences; /* influences 0: unskinned (no skeleton) */
    uint32_t skinning;                    /* KILN_SKIN_* */
    uint32_t pos_format;                  /* KILN_FORMAT_F32x3, F32x4 (stride 16) or UNORM16x4 */
    uint32_t dir_format;                  /* normals and tangents: 0 (none), F32x3, F32x4, OCT16x2 */
    uint32_t unweighted_every;            /* every k-th vertex has all-zero weights; 0: none */
    uint32_t seed;
    const kiln_blob *skeleton_from;       /* optional: copy skeleton 0 of this blob (bones, rest
                                             pose, inverse binds) instead of the generated fan;
                                             `bones` must be its bone count */
} sf_mesh_opts;

static inline sf_mesh_opts sf_defaults(uint32_t vertices, uint32_t influences)
{
    sf_mesh_opts o;
    memset(&o, 0, sizeof o);
    o.vertices = vertices;
    o.bones = 80;
    o.influences = influences;
    o.skinning = KILN_SKIN_LINEAR;
    o.pos_format = KILN_FORMAT_F32x3;
    o.dir_format = KILN_FORMAT_F32x3;
    o.seed = 1;
    return o;
}

static inline void sf_unit(uint32_t *s, float v[3])
{
    float l;
    do {
        for (int i = 0; i < 3; i++) v[i] = af_rand(s, -1.0f, 1.0f);
        l = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    } while (l < 0.01f || l > 1.0f);
    l = 1.0f / sqrtf(l);
    for (int i = 0; i < 3; i++) v[i] *= l;
}

/* Skeleton 0 of `src` copied into the scene as skeleton 0 of model 0 (names, parents, flags,
 * rest pose, inverse binds, depth). */
static inline void sf_copy_skeleton(bb_scene *s, const kiln_blob *src)
{
    const kiln_blob_skeleton *from = kiln_blob_skeletons(src, NULL);
    const kiln_blob_bone *bones = kiln_blob_bones(src, NULL) + from->first_bone;
    kiln_blob_skeleton sk = *from;
    sk.model = 0;
    sk.first_bone = (uint32_t)(s->bones.n / sizeof(kiln_blob_bone));
    sk.first_soa = (uint32_t)(s->rest.n / sizeof(kiln_soa_xform));
    for (uint32_t b = 0; b < from->bone_count; b++) {
        uint32_t i = bb_bone(s, kiln_blob_string(src, bones[b].name), bones[b].parent);
        ((kiln_blob_bone *)(void *)s->bones.p)[i].flags = bones[b].flags;
    }
    bb_put(&s->ibnd, kiln_blob_inverse_binds(src, NULL) + (size_t)from->first_bone * 16,
           (size_t)from->bone_count * 16 * sizeof(float));
    bb_put(&s->rest, kiln_blob_rest_pose(src, NULL) + from->first_soa, (size_t)from->soa_count * sizeof(kiln_soa_xform));
    bb_add(&s->skels, &sk);
}

/* Octahedral encoding (the decode is bake_geom.h's), rounded to the nearest grid point. */
static inline void sf_oct(const float v[3], int16_t out[2])
{
    float l1 = fabsf(v[0]) + fabsf(v[1]) + fabsf(v[2]);
    float x = v[0] / l1, y = v[1] / l1;
    if (v[2] < 0.0f) {
        float ox = (1.0f - fabsf(y)) * (x >= 0.0f ? 1.0f : -1.0f), oy = (1.0f - fabsf(x)) * (y >= 0.0f ? 1.0f : -1.0f);
        x = ox, y = oy;
    }
    out[0] = (int16_t)lrintf(x * 32767.0f);
    out[1] = (int16_t)lrintf(y * 32767.0f);
}

/* Appends a direction stream (normals or tangents) of `dirs` (n x 3) in `format`. */
static inline void sf_dir_stream(bb_scene *s, uint32_t semantic, uint32_t format, const float *dirs, uint32_t n)
{
    if (format == KILN_FORMAT_OCT16x2) {
        int16_t *q = (int16_t *)malloc((size_t)n * 4 + 4);
        for (uint32_t i = 0; i < n; i++) sf_oct(dirs + 3 * i, q + 2 * i);
        bb_stream(s, semantic, format, 0, 2, n, 4, q);
        free(q);
    } else if (format == KILN_FORMAT_F32x4) {
        float *f = (float *)calloc((size_t)n * 4 + 4, sizeof(float));
        for (uint32_t i = 0; i < n; i++) memcpy(f + 4 * i, dirs + 3 * i, 12);
        bb_stream(s, semantic, format, 0, 4, n, 16, f);
        free(f);
    } else {
        bb_stream(s, semantic, KILN_FORMAT_F32x3, 0, 3, n, 12, dirs);
    }
}

/* Random vertices: positions in [-1, 1]^3, unit normals, unit tangents perpendicular to them,
 * `influences` distinct bones per vertex with weights descending and summing to 1. Returns
 * the blob (64-aligned, free()) of one model, one skeleton (o->bones bones) and mesh 0. */
static inline unsigned char *sf_build(const sf_mesh_opts *o, size_t *size)
{
    uint32_t s = o->seed * 2654435761u + 7u, n = o->vertices, k = o->influences;
    float *pos = (float *)malloc(sizeof(float) * 3 * n + 4), *nrm = (float *)malloc(sizeof(float) * 3 * n + 4);
    float *tan = (float *)malloc(sizeof(float) * 3 * n + 4);
    for (uint32_t i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) pos[3 * i + c] = af_rand(&s, -1.0f, 1.0f);
        float t[3], d;
        sf_unit(&s, nrm + 3 * i);
        do {
            sf_unit(&s, t);
            d = t[0] * nrm[3 * i] + t[1] * nrm[3 * i + 1] + t[2] * nrm[3 * i + 2];
        } while (fabsf(d) > 0.9f);
        for (int c = 0; c < 3; c++) t[c] -= d * nrm[3 * i + c];
        float l = 1.0f / sqrtf(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
        for (int c = 0; c < 3; c++) tan[3 * i + c] = t[c] * l;
    }

    bb_scene sc;
    bb_init(&sc);
    kiln_blob_model model;
    memset(&model, 0, sizeof model);
    model.name = bb_str(&sc, "skinned");
    model.skeleton = k ? 0 : KILN_BLOB_NONE;
    model.mesh_count = 1;
    model.rotation[3] = 1.0f;
    model.scale[0] = model.scale[1] = model.scale[2] = 1.0f;
    bb_add(&sc.models, &model);
    if (k && o->skeleton_from) sf_copy_skeleton(&sc, o->skeleton_from);
    else if (k) bb_skeleton(&sc, 0, o->bones, "b", 0);

    kiln_blob_mesh mesh;
    memset(&mesh, 0, sizeof mesh);
    mesh.name = bb_str(&sc, "mesh");
    mesh.material = KILN_BLOB_NONE;
    mesh.skeleton = k ? 0 : KILN_BLOB_NONE;
    mesh.vertex_count = n;
    mesh.influences = k;
    mesh.skinning = o->skinning;
    mesh.bounds_min[0] = mesh.bounds_min[1] = mesh.bounds_min[2] = -1.0f;
    mesh.bounds_max[0] = mesh.bounds_max[1] = mesh.bounds_max[2] = 1.0f;
    mesh.first_stream = (uint32_t)(sc.streams.n / sizeof(kiln_blob_stream));
    if (o->pos_format == KILN_FORMAT_UNORM16x4) {
        uint16_t *q = (uint16_t *)calloc((size_t)n * 4 + 4, sizeof(uint16_t));
        for (uint32_t i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) q[4 * i + c] = (uint16_t)lrintf((pos[3 * i + c] + 1.0f) * 0.5f * 65535.0f);
        uint32_t si = bb_stream(&sc, KILN_ATTR_POSITION, KILN_FORMAT_UNORM16x4, 0, 4, n, 8, q);
        kiln_blob_stream *st = (kiln_blob_stream *)(void *)sc.streams.p + si;
        for (int c = 0; c < 3; c++) st->decode_offset[c] = -1.0f, st->decode_scale[c] = 2.0f;
        free(q);
    } else {
        sf_dir_stream(&sc, KILN_ATTR_POSITION, o->pos_format, pos, n);
    }
    mesh.stream_count = 1;
    if (o->dir_format) {
        sf_dir_stream(&sc, KILN_ATTR_NORMAL, o->dir_format, nrm, n);
        sf_dir_stream(&sc, KILN_ATTR_TANGENT, o->dir_format, tan, n);
        mesh.stream_count += 2;
    }
    if (k) {
        uint32_t js = (2 * k + 3) & ~3u; /* the baker's joint stride */
        uint8_t *jb = (uint8_t *)calloc((size_t)n * js + 4, 1);
        float *wb = (float *)calloc((size_t)n * k + 4, sizeof(float));
        for (uint32_t i = 0; i < n; i++) {
            uint16_t *j = (uint16_t *)(void *)(jb + (size_t)i * js);
            float *w = wb + (size_t)i * k, sum = 0.0f;
            for (uint32_t a = 0; a < k; a++) {
                int dup;
                do {
                    j[a] = (uint16_t)(af_lcg(&s) % o->bones);
                    dup = 0;
                    for (uint32_t b = 0; b < a; b++) dup |= j[b] == j[a];
                } while (dup && k <= o->bones);
                w[a] = af_rand(&s, 0.05f, 1.0f);
            }
            for (uint32_t a = 1; a < k; a++) /* heaviest first */
                for (uint32_t b = a; b > 0 && w[b] > w[b - 1]; b--) {
                    float tw = w[b];
                    w[b] = w[b - 1], w[b - 1] = tw;
                }
            for (uint32_t a = 0; a < k; a++) sum += w[a];
            for (uint32_t a = 0; a < k; a++) w[a] /= sum;
            if (o->unweighted_every && i % o->unweighted_every == 0)
                for (uint32_t a = 0; a < k; a++) w[a] = 0.0f, j[a] = 0;
        }
        bb_stream(&sc, KILN_ATTR_JOINTS, KILN_FORMAT_U16xN, 0, k, n, js, jb);
        bb_stream(&sc, KILN_ATTR_WEIGHTS, KILN_FORMAT_F32xN, 0, k, n, 4 * k, wb);
        mesh.stream_count += 2;
        free(jb), free(wb);
    }
    bb_add(&sc.meshes, &mesh);
    unsigned char *blob = bb_build(&sc, size);
    bb_free(&sc);
    free(pos), free(nrm), free(tan);
    return blob;
}

/* Loads (fully verified) or aborts: the fixture's blobs are valid by construction. */
static inline const kiln_blob *sf_load(const unsigned char *mem, size_t size)
{
    const kiln_blob *b = NULL;
    if (kiln_blob_load(mem, size, 0, &b, NULL) != KILN_OK) abort();
    return b;
}

/* Column-major T(t) · R(q) · S(s). */
static inline void sf_trs(const float t[3], const float q[4], const float s[3], float m[16])
{
    float x = q[0], y = q[1], z = q[2], w = q[3];
    float r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y),
                  2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x),
                  2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)};
    memset(m, 0, 16 * sizeof(float));
    for (int c = 0; c < 3; c++)
        for (int row = 0; row < 3; row++) m[c * 4 + row] = r[c * 3 + row] * s[c];
    m[12] = t[0], m[13] = t[1], m[14] = t[2], m[15] = 1.0f;
}

static inline void sf_random_quat(uint32_t *s, float q[4])
{
    float l;
    do {
        for (int i = 0; i < 4; i++) q[i] = af_rand(s, -1.0f, 1.0f);
        l = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    } while (l < 0.01f || l > 1.0f);
    l = 1.0f / sqrtf(l);
    for (int i = 0; i < 4; i++) q[i] *= l;
}

/* `bones` random skinning matrices (malloc, 16 floats each): rotations, translations in
 * [-1, 1], and with `scaled` also scales in [0.5, 2] per axis, some of them non-uniform. */
static inline float *sf_matrices(uint32_t bones, uint32_t seed, int scaled)
{
    uint32_t s = seed * 747796405u + 11u;
    float *m = (float *)malloc(sizeof(float) * 16 * (bones ? bones : 1));
    for (uint32_t b = 0; b < bones; b++) {
        float t[3], q[4], sc[3] = {1, 1, 1};
        for (int i = 0; i < 3; i++) t[i] = af_rand(&s, -1.0f, 1.0f);
        sf_random_quat(&s, q);
        if (scaled) {
            sc[0] = af_rand(&s, 0.5f, 2.0f);
            int uniform = b % 3 == 0;
            sc[1] = uniform ? sc[0] : af_rand(&s, 0.5f, 2.0f);
            sc[2] = uniform ? sc[0] : af_rand(&s, 0.5f, 2.0f);
        }
        sf_trs(t, q, sc, m + 16 * b);
    }
    return m;
}

#endif /* KILN_TEST_SKIN_FIXTURE_H */
