/* A tiny *.Shape writer for the importer tests (shared/spec/shape-format.md section 4): the
 * bytes of small hand-made files, so every repair rule has a recipe next to its test. Writes
 * little-endian, packed fields into a growing buffer; sf_file wraps a stream in the 17-byte
 * RAW header. Header-only (static inline). */
#ifndef KILN_TEST_SHAPE_FIXTURE_H
#define KILN_TEST_SHAPE_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct sf_buf {
    unsigned char *data;
    size_t         size, cap;
    int            unicode; /* strings as UTF-16 (HasUnicodeStrings = 1) */
} sf_buf;

static inline void sf_bytes(sf_buf *b, const void *p, size_t n)
{
    if (b->size + n > b->cap) {
        b->cap = (b->size + n) * 2 + 64;
        b->data = realloc(b->data, b->cap);
    }
    memcpy(b->data + b->size, p, n);
    b->size += n;
}

static inline void sf_u8(sf_buf *b, unsigned v) { unsigned char c = (unsigned char)v; sf_bytes(b, &c, 1); }
static inline void sf_u16(sf_buf *b, unsigned v) { sf_u8(b, v & 0xFF); sf_u8(b, (v >> 8) & 0xFF); }
static inline void sf_u32(sf_buf *b, uint32_t v) { sf_u16(b, v & 0xFFFF); sf_u16(b, v >> 16); }
static inline void sf_f32(sf_buf *b, float f) { uint32_t u; memcpy(&u, &f, 4); sf_u32(b, u); }
static inline void sf_f64(sf_buf *b, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    sf_u32(b, (uint32_t)u);
    sf_u32(b, (uint32_t)(u >> 32));
}
static inline void sf_floats(sf_buf *b, const float *f, size_t n) { for (size_t i = 0; i < n; i++) sf_f32(b, f[i]); }

/* An ASCII string in the stream's form (each byte one code unit). */
static inline void sf_str(sf_buf *b, const char *s)
{
    size_t n = strlen(s);
    sf_u8(b, (unsigned)n);
    for (size_t i = 0; i < n; i++) {
        if (b->unicode) sf_u16(b, (unsigned char)s[i]);
        else sf_u8(b, (unsigned char)s[i]);
    }
}

/* Raw code units (bytes or UTF-16 units). */
static inline void sf_units(sf_buf *b, const unsigned *u, size_t n)
{
    sf_u8(b, (unsigned)n);
    for (size_t i = 0; i < n; i++) {
        if (b->unicode) sf_u16(b, u[i]);
        else sf_u8(b, u[i]);
    }
}

static const float sf_identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

/* Items 1-8 of 4.1 with no properties: flag, author, website, AllowEdit, volume. */
static inline void sf_head(sf_buf *b, int unicode, unsigned allow_edit)
{
    b->unicode = unicode;
    sf_u8(b, (unsigned)unicode);
    sf_str(b, "author");
    sf_str(b, "");
    sf_u8(b, allow_edit);
    for (int i = 0; i < 10; i++) sf_f32(b, 0.0f);
    sf_u16(b, 0); /* NumProperties */
}

/* A material with no values; front_ccw as given. */
static inline void sf_material(sf_buf *b, const char *name, unsigned front_ccw)
{
    sf_str(b, name);
    sf_str(b, "");
    static const unsigned char state[13] = {0, 0, 3, 3, 0, 3, 0, 0, 1, 1, 0, 1, 0};
    for (int i = 0; i < 13; i++) sf_u8(b, i == 7 ? front_ccw : state[i]);
    for (int i = 0; i < 9; i++) sf_u8(b, 0);
    static const unsigned char sampler[5] = {0x15, 1, 1, 1, 8};
    for (int i = 0; i < 5; i++) sf_u8(b, sampler[i]);
    const float border[4] = {0, 0, 0, 1};
    sf_floats(b, border, 4);
    sf_u8(b, 16);
    sf_f32(b, 0.0f);
    sf_f32(b, -1e30f);
    sf_f32(b, 1e30f);
    static const unsigned char blend[8] = {5, 6, 1, 1, 1, 1, 4, 0};
    for (int i = 0; i < 8; i++) sf_u8(b, blend[i]);
}

/* Items 10-16 of 4.1, all empty. */
static inline void sf_no_blocks(sf_buf *b)
{
    sf_u16(b, 0); /* lights */
    sf_u16(b, 0); /* lens flares */
    for (int i = 0; i < 5; i++) sf_u8(b, 0); /* cameras, anchors, sub shapes, scripts, sounds */
}

/* A rigid geometry: positions (3 floats each), optional R32 indices (NULL: non-indexed). */
static inline void sf_geometry(sf_buf *b, uint32_t topology, unsigned material, const float *pos, uint32_t vcount,
                               const uint32_t *idx, uint32_t icount)
{
    sf_u32(b, topology);
    sf_u16(b, material);
    sf_u8(b, 0); sf_u8(b, 0); sf_u8(b, 0); /* no normals, uv0, uv1 */
    sf_u8(b, 0);                           /* NumBones */
    sf_u8(b, 6);
    sf_u32(b, vcount);
    sf_floats(b, pos, (size_t)vcount * 3);
    sf_u8(b, idx ? 42 : 0);
    sf_u32(b, idx ? icount : 0);
    for (uint32_t i = 0; idx && i < icount; i++) sf_u32(b, idx[i]);
}

/* A node with `geoms` geometry references and `children` children to follow. */
static inline void sf_node(sf_buf *b, const char *name, const float *matrix, uint32_t lod, const uint16_t *geoms,
                           unsigned geom_count, unsigned children)
{
    sf_str(b, name);
    sf_floats(b, matrix ? matrix : sf_identity, 16);
    sf_u32(b, lod);
    sf_f32(b, 0.0f);
    sf_f32(b, 100.0f);
    for (int i = 0; i < 4; i++) sf_u8(b, 0);
    for (int i = 0; i < 3 + 10; i++) sf_f32(b, 0.0f);
    sf_u8(b, geom_count);
    sf_u8(b, children);
    for (unsigned i = 0; i < geom_count; i++) sf_u16(b, geoms[i]);
    for (unsigned i = 0; i < geom_count * 10; i++) sf_f32(b, 0.0f);
}

/* A layer header; tracks follow. */
static inline void sf_layer(sf_buf *b, const char *name, unsigned processing, double duration_ms, double kft_ms,
                            unsigned tracks)
{
    sf_str(b, name);
    sf_u8(b, processing);
    sf_f64(b, duration_ms);
    sf_f64(b, kft_ms);
    sf_u16(b, tracks);
}

/* A track header; keys follow (sf_key3 for position and scale, sf_key4, sf_event). */
static inline void sf_track(sf_buf *b, const char *node, unsigned pos, unsigned scale, unsigned rot, unsigned events)
{
    sf_str(b, node);
    sf_u16(b, pos);
    sf_u16(b, scale);
    sf_u16(b, rot);
    sf_u16(b, events);
}

static inline void sf_key3(sf_buf *b, double t, float x, float y, float z)
{
    sf_f64(b, t);
    sf_f32(b, x); sf_f32(b, y); sf_f32(b, z);
}

static inline void sf_key4(sf_buf *b, double t, float x, float y, float z, float w)
{
    sf_key3(b, t, x, y, z);
    sf_f32(b, w);
}

static inline void sf_event(sf_buf *b, double t, const char *name)
{
    sf_f64(b, t);
    sf_str(b, name);
}

/* The RAW file around a stream (caller frees the result). */
static inline unsigned char *sf_file(const sf_buf *stream, size_t *size)
{
    *size = 17 + stream->size;
    unsigned char *f = malloc(*size);
    const unsigned char head[9] = {5, 'S', 'H', 'A', 'P', 'E', 1, 0, 0};
    memcpy(f, head, 9);
    for (int i = 0; i < 4; i++) {
        f[9 + i] = (unsigned char)(stream->size >> (8 * i));
        f[13 + i] = (unsigned char)(stream->size >> (8 * i));
    }
    memcpy(f + 17, stream->data, stream->size);
    return f;
}

#endif /* KILN_TEST_SHAPE_FIXTURE_H */
