/* A tiny LODka3D *.lod writer for the tests: bytes, Pascal strings, chunks whose Size is
 * patched when they end, and a few parts (skeleton, one-triangle mesh, clip, materials) with
 * knobs that break one rule at a time. Header-only, so the test stays one source file. */
#ifndef KILN_TEST_LOD_FIXTURE_H
#define KILN_TEST_LOD_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct lb {
    unsigned char *d;
    size_t n, cap;
    size_t open[8];
    int depth;
} lb;

static inline void lb_bytes(lb *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->d = realloc(b->d, b->cap);
    }
    memcpy(b->d + b->n, p, n);
    b->n += n;
}
static inline void lb_u8(lb *b, unsigned v) { unsigned char c = (unsigned char)v; lb_bytes(b, &c, 1); }
static inline void lb_i16(lb *b, int v) { lb_u8(b, (unsigned)v & 0xFF); lb_u8(b, ((unsigned)v >> 8) & 0xFF); }
static inline void lb_i32(lb *b, int32_t v)
{
    uint32_t u = (uint32_t)v;
    for (int i = 0; i < 4; i++) lb_u8(b, (u >> (8 * i)) & 0xFF);
}
static inline void lb_f32(lb *b, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    lb_i32(b, (int32_t)u);
}
static inline void lb_str(lb *b, const char *s) { lb_i32(b, (int32_t)strlen(s)); lb_bytes(b, s, strlen(s)); }
static inline void lb_begin(lb *b, const char *id, int32_t count)
{
    b->open[b->depth++] = b->n;
    lb_bytes(b, id, 4);
    lb_i32(b, 0);
    lb_i32(b, count);
}
static inline void lb_end(lb *b)
{
    size_t at = b->open[--b->depth];
    uint32_t size = (uint32_t)(b->n - at - 12);
    for (int i = 0; i < 4; i++) b->d[at + 4 + i] = (unsigned char)(size >> (8 * i));
}
static inline void lb_free(lb *b) { free(b->d); memset(b, 0, sizeof *b); }

/* SKL1 with bones 0..n-1, each the child of the previous one. */
static inline void lb_skl1(lb *b, int n, int skel_type)
{
    lb_begin(b, "SKL1", n);
    lb_u8(b, (unsigned)skel_type);
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "b%d", i);
        lb_i16(b, i);
        lb_i16(b, i - 1);
        lb_str(b, name);
    }
    lb_end(b);
}

/* One mesh of `n` vertices (a fan of triangles over them when n >= 3) in MSH1, with knobs. */
typedef struct lb_mesh {
    int   mode;          /* MeshMode, 3 */
    int   n;             /* vertices, 3 */
    int   t;             /* texture layers (mode 3), 1 */
    int   assoc;         /* PntBnAssocCnt, 0 */
    int   assoc_bone;    /* every PntBnAssoc entry */
    int   wtype;         /* PntBnWeightType, 0 */
    int   per_vertex;    /* BonesPerVertix */
    int   recs;          /* weight records, each (rec_bone | end bit, rec_weight) */
    int   rec_bone;
    float rec_weight;
    int   rec_wide;      /* 6-byte records */
    int   face_type;     /* 2 */
    int   face_mode;     /* 0 */
    int   corners;       /* VertexIndCnt; -1: 3 */
    int   index_add;     /* added to the first vertex index */
    int   smooth;        /* SmoothDataCnt; -1: corners / 3 */
    int   normals;       /* NormalsIndCnt; -1: corners */
    int   tex;           /* TxCrdsIndCnt; -1: corners */
    float x0;            /* x of vertex 0 */
    const char *material;
    int   tail;          /* extra bytes after the face groups */
} lb_mesh;

static inline lb_mesh lb_mesh_default(void)
{
    lb_mesh m;
    memset(&m, 0, sizeof m);
    m.mode = 3; m.n = 3; m.t = 1; m.face_type = 2; m.corners = -1; m.smooth = -1; m.normals = -1; m.tex = -1;
    m.material = "";
    return m;
}

static inline void lb_index(lb *b, int face_type, int n, int v)
{
    int w = face_type == 2 ? (n <= 256 ? 1 : n <= 65536 ? 2 : 4) : (n <= 255 ? 1 : n <= 65535 ? 2 : 4);
    if (w == 1) lb_u8(b, (unsigned)v);
    else if (w == 2) lb_i16(b, v);
    else lb_i32(b, v);
}

static inline void lb_msh1(lb *b, const lb_mesh *m, int bones)
{
    lb_begin(b, "MSH1", 1);
    lb_str(b, "m");
    lb_u8(b, 0);
    lb_u8(b, (unsigned)m->mode);
    lb_u8(b, 1);
    lb_i32(b, m->n);
    for (int i = 0; i < m->n; i++) {
        lb_f32(b, i == 0 ? m->x0 : (float)(i % 2));
        lb_f32(b, (float)(i / 2));
        lb_f32(b, 0);
    }
    lb_i32(b, 1);
    lb_f32(b, 0), lb_f32(b, 0), lb_f32(b, 1);
    int t = m->mode == 3 ? m->t : 1;
    if (m->mode == 3) lb_u8(b, (unsigned)t);
    for (int l = 0; l < t; l++) lb_i32(b, m->n);
    for (int l = 0; l < t; l++)
        for (int i = 0; i < m->n; i++) lb_f32(b, (float)i), lb_f32(b, 0.5f);
    lb_i32(b, m->assoc);
    for (int i = 0; i < m->assoc; i++) {
        if (bones < 255) lb_u8(b, (unsigned)m->assoc_bone);
        else lb_i16(b, m->assoc_bone);
    }
    lb_i32(b, m->wtype);
    if (m->wtype == 1) {
        lb_i32(b, m->per_vertex);
        lb_i32(b, m->recs);
        for (int i = 0; i < m->recs; i++) {
            if (m->rec_wide) lb_i16(b, m->rec_bone);
            else lb_u8(b, (unsigned)m->rec_bone);
            lb_f32(b, m->rec_weight);
        }
    }
    int corners = m->corners < 0 ? 3 : m->corners;
    lb_i32(b, 1);                       /* one face group */
    lb_i32(b, m->face_type);
    lb_u8(b, (unsigned)m->face_mode);
    lb_str(b, "g");
    lb_u8(b, 1);
    if (m->mode == 3) {
        for (int l = 0; l < t; l++) lb_i32(b, l == 0 ? (int32_t)strlen(m->material) : 0);
        lb_bytes(b, m->material, strlen(m->material));
    } else {
        lb_str(b, m->material);
    }
    lb_i32(b, corners);
    for (int k = 0; k < corners; k++) lb_index(b, m->face_type, m->n, (k % 3 < m->n ? k % 3 : 0) + (k ? 0 : m->index_add));
    if (m->face_type == 2) {
        int smooth = m->smooth < 0 ? corners / 3 : m->smooth;
        lb_i32(b, smooth);
        for (int k = 0; k < smooth; k++) lb_i32(b, 1);
    }
    int normals = m->normals < 0 ? corners : m->normals;
    lb_i32(b, normals);
    for (int k = 0; k < normals; k++) lb_index(b, m->face_type, 1, 0);
    int tex = m->tex < 0 ? corners : m->tex;
    for (int l = 0; l < t; l++) lb_i32(b, tex);
    for (int l = 0; l < t; l++)
        for (int k = 0; k < tex; k++) lb_index(b, m->face_type, m->n, k % 3 < m->n ? k % 3 : 0);
    for (int i = 0; i < m->tail; i++) lb_u8(b, 0);
    lb_end(b);
}

/* ANM1 over `bones` bones and `frames` frames; bone i turns by i * 0.1 * f about Z. */
static inline void lb_anm1(lb *b, const char *name, int bones, int frames, int type, int interval, int mode)
{
    lb_begin(b, "ANM1", frames);
    lb_u8(b, (unsigned)type);
    lb_i32(b, interval);
    lb_u8(b, (unsigned)mode);
    lb_str(b, name);
    for (int f = 0; f < frames; f++)
        for (int i = 0; i < bones; i++) {
            lb_f32(b, 0), lb_f32(b, i ? 1.0f : 0.0f), lb_f32(b, 0);
            lb_f32(b, 0), lb_f32(b, 0), lb_f32(b, 0.1f * (float)(i * f));
        }
    lb_end(b);
}

/* MAL1 / MAT1 of type 3 with the given material names (one texture each: "<name>.bmp"). */
static inline void lb_mal1(lb *b, int type, int n, const char *const *names)
{
    lb_begin(b, "MAL1", 1);
    lb_begin(b, "MAT1", n);
    lb_u8(b, (unsigned)type);
    lb_i32(b, n);
    for (int i = 0; i < n; i++) {
        char tex[64];
        snprintf(tex, sizeof tex, "%s.bmp", names[i]);
        lb_str(b, names[i]);
        lb_str(b, tex);
        int opt = type == 3 ? 101 : type == 2 ? 100 : 0;
        for (int k = 0; k < opt; k++) lb_u8(b, k == 98 || k == 99 ? 1 : 0);
    }
    lb_end(b);
    lb_end(b);
}

#endif
