/* A minimal blob writer for tests and benchmarks, independent of the baker: records are
 * appended to per-kind arrays, stream payloads to DATA, and bb_build lays out the header,
 * the section table and the sections at 64-byte alignment, builds the sorted name index and
 * computes the CRC with its own table (not the runtime's). Header-only (static inline).
 *
 *   bb_scene s;  bb_init(&s);
 *   uint32_t name = bb_str(&s, "hero");
 *   ...append records with bb_add(&s.models, &model) ...
 *   size_t size;  unsigned char *blob = bb_build(&s, &size);   // 64-aligned, free() it
 *   bb_free(&s);
 */
#ifndef KILN_TEST_BLOB_BUILD_H
#define KILN_TEST_BLOB_BUILD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/blob_format.h"

/* ---- growable byte arrays ---------------------------------------------------------------- */
typedef struct bb_buf {
    unsigned char *p;
    size_t         n, cap;
} bb_buf;

static inline size_t bb_put(bb_buf *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        unsigned char *p = (unsigned char *)realloc(b->p, cap);
        if (!p) abort();
        b->p = p;
        b->cap = cap;
    }
    size_t at = b->n;
    if (src) memcpy(b->p + at, src, n);
    else memset(b->p + at, 0, n);
    b->n += n;
    return at;
}

static inline void bb_pad(bb_buf *b, size_t align)
{
    while (b->n % align) bb_put(b, NULL, 1);
}

/* Appends one record of `size` bytes; returns its index. */
static inline uint32_t bb_add_(bb_buf *b, const void *rec, size_t size) { return (uint32_t)(bb_put(b, rec, size) / size); }
#define bb_add(buf, rec) bb_add_((buf), (rec), sizeof *(rec))

/* ---- independent CRC-32C and FNV-1a ------------------------------------------------------- */
static inline uint32_t bb_crc32c(uint32_t crc, const void *data, size_t n)
{
    static uint32_t table[256];
    if (!table[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
            table[i] = c;
        }
    const unsigned char *p = (const unsigned char *)data;
    crc = ~crc;
    while (n--) crc = (crc >> 8) ^ table[(crc ^ *p++) & 0xFFu];
    return ~crc;
}

static inline uint32_t bb_fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

/* Recomputes the checksum of a `size`-byte blob (after a test edited it): CRC-32C of the
 * whole blob with the crc32c field read as zero. */
static inline void bb_fix_crc(unsigned char *blob, size_t size)
{
    kiln_blob_header h;
    memcpy(&h, blob, sizeof h);
    h.crc32c = 0;
    uint32_t crc = bb_crc32c(0, &h, sizeof h);
    crc = bb_crc32c(crc, blob + sizeof h, size - sizeof h);
    memcpy(blob + offsetof(kiln_blob_header, crc32c), &crc, 4);
}

/* ---- the scene ---------------------------------------------------------------------------- */
typedef struct bb_extra {
    uint32_t kind;
    uint16_t version, flags;
    uint32_t count, stride;
    bb_buf   bytes;
} bb_extra;

typedef struct bb_scene {
    bb_buf   strs;
    int      has_meta;
    kiln_blob_metadata meta;
    bb_buf   models, skels, bones, rest, ibnd, meshes, hairs, streams, data, mats, slots, insts, refs;
    int      no_name_index;   /* leave NIDX out */
    uint32_t header_flags;
    bb_extra extra[4];        /* sections of other kinds, placed after the known ones */
    int      extra_count;
} bb_scene;

static inline void bb_init(bb_scene *s)
{
    memset(s, 0, sizeof *s);
    bb_put(&s->strs, NULL, 1); /* offset 0 is "" */
}

static inline void bb_free(bb_scene *s)
{
    bb_buf *all[] = {&s->strs, &s->models, &s->skels, &s->bones, &s->rest, &s->ibnd, &s->meshes,
                     &s->hairs, &s->streams, &s->data, &s->mats, &s->slots, &s->insts, &s->refs};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]->p);
    for (int i = 0; i < s->extra_count; i++) free(s->extra[i].bytes.p);
    memset(s, 0, sizeof *s);
}

static inline uint32_t bb_str(bb_scene *s, const char *str)
{
    if (!str[0]) return 0;
    return (uint32_t)bb_put(&s->strs, str, strlen(str) + 1);
}

static inline uint32_t bb_bone(bb_scene *s, const char *name, int32_t parent)
{
    kiln_blob_bone b;
    memset(&b, 0, sizeof b);
    b.name = bb_str(s, name);
    b.name_hash = bb_fnv1a(name);
    b.parent = parent;
    b.source_index = (uint32_t)(s->bones.n / sizeof b);
    return bb_add(&s->bones, &b);
}

/* Appends a stream record and its payload (16-byte aligned in DATA). The record's offset is
 * relative to DATA here; bb_build adds the section offset. */
static inline uint32_t bb_stream(bb_scene *s, uint32_t semantic, uint32_t format, uint32_t set, uint32_t components,
                                 uint32_t count, uint32_t stride, const void *payload)
{
    kiln_blob_stream st;
    memset(&st, 0, sizeof st);
    st.semantic = semantic;
    st.format = format;
    st.set = set;
    st.components = components;
    st.count = count;
    st.stride = stride;
    st.decode_scale[0] = st.decode_scale[1] = st.decode_scale[2] = st.decode_scale[3] = 1.0f;
    bb_pad(&s->data, KILN_BLOB_DATA_ALIGN);
    st.offset = bb_put(&s->data, payload, (size_t)count * stride);
    return bb_add(&s->streams, &st);
}

static inline void bb_extra_section(bb_scene *s, uint32_t kind, uint16_t flags, const void *bytes, size_t n)
{
    bb_extra *e = &s->extra[s->extra_count++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->version = 1;
    e->flags = flags;
    bb_put(&e->bytes, bytes, n);
}

static inline int bb_name_cmp(const void *a, const void *b)
{
    const kiln_blob_name_entry *x = (const kiln_blob_name_entry *)a, *y = (const kiln_blob_name_entry *)b;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static inline void bb_name(bb_scene *s, bb_buf *names, uint32_t kind, uint32_t index, uint32_t name)
{
    if (!name) return;
    kiln_blob_name_entry e = {kind, bb_fnv1a((const char *)s->strs.p + name), index, name};
    bb_add(names, &e);
}

/* Lays the scene out as a blob: 64-byte-aligned malloc memory of *size bytes (free()). */
static inline unsigned char *bb_build(bb_scene *s, size_t *size)
{
    /* The name index: every named record, sorted by (kind, hash, index). */
    bb_buf names = {0, 0, 0};
    if (!s->no_name_index) {
#define BB_NAMES_(buf, type, kind, field)                                              \
    for (uint32_t i_ = 0; i_ < s->buf.n / sizeof(type); i_++)                          \
        bb_name(s, &names, kind, i_, ((const type *)s->buf.p)[i_].field);
        BB_NAMES_(models, kiln_blob_model, KILN_SECTION_MODELS, name)
        BB_NAMES_(meshes, kiln_blob_mesh, KILN_SECTION_MESHES, name)
        BB_NAMES_(hairs, kiln_blob_hair, KILN_SECTION_HAIRS, name)
        BB_NAMES_(mats, kiln_blob_material, KILN_SECTION_MATERIALS, name)
        BB_NAMES_(bones, kiln_blob_bone, KILN_SECTION_BONES, name)
        BB_NAMES_(insts, kiln_blob_instance, KILN_SECTION_INSTANCES, name)
        BB_NAMES_(refs, kiln_blob_reference, KILN_SECTION_REFERENCES, path)
#undef BB_NAMES_
        if (names.n) qsort(names.p, names.n / sizeof(kiln_blob_name_entry), sizeof(kiln_blob_name_entry), bb_name_cmp);
    }

    struct {
        uint32_t kind, stride;
        uint16_t version, flags;
        const bb_buf *buf;
    } sec[32];
    int n = 0;
#define BB_SEC_(k, st, b)                                                   \
    if ((b)->n || (k) == KILN_SECTION_STRINGS) {                            \
        sec[n].kind = (k);                                                  \
        sec[n].stride = (st);                                               \
        sec[n].version = 1;                                                 \
        sec[n].flags = 0;                                                   \
        sec[n].buf = (b);                                                   \
        n++;                                                                \
    }
    BB_SEC_(KILN_SECTION_STRINGS, 0, &s->strs)
    bb_buf meta = {0, 0, 0};
    if (s->has_meta) bb_put(&meta, &s->meta, sizeof s->meta);
    BB_SEC_(KILN_SECTION_METADATA, sizeof(kiln_blob_metadata), &meta)
    BB_SEC_(KILN_SECTION_NAME_INDEX, sizeof(kiln_blob_name_entry), &names)
    BB_SEC_(KILN_SECTION_MODELS, sizeof(kiln_blob_model), &s->models)
    BB_SEC_(KILN_SECTION_SKELETONS, sizeof(kiln_blob_skeleton), &s->skels)
    BB_SEC_(KILN_SECTION_BONES, sizeof(kiln_blob_bone), &s->bones)
    BB_SEC_(KILN_SECTION_REST_POSE, sizeof(kiln_soa_xform), &s->rest)
    BB_SEC_(KILN_SECTION_INVERSE_BIND, 64, &s->ibnd)
    BB_SEC_(KILN_SECTION_MESHES, sizeof(kiln_blob_mesh), &s->meshes)
    BB_SEC_(KILN_SECTION_HAIRS, sizeof(kiln_blob_hair), &s->hairs)
    BB_SEC_(KILN_SECTION_STREAMS, sizeof(kiln_blob_stream), &s->streams)
    int data_sec = n;
    BB_SEC_(KILN_SECTION_DATA, 0, &s->data)
    if (n == data_sec) data_sec = -1;
    BB_SEC_(KILN_SECTION_MATERIALS, sizeof(kiln_blob_material), &s->mats)
    BB_SEC_(KILN_SECTION_MATERIAL_SLOTS, sizeof(kiln_blob_material_slot), &s->slots)
    BB_SEC_(KILN_SECTION_INSTANCES, sizeof(kiln_blob_instance), &s->insts)
    BB_SEC_(KILN_SECTION_REFERENCES, sizeof(kiln_blob_reference), &s->refs)
#undef BB_SEC_
    for (int i = 0; i < s->extra_count; i++) {
        sec[n].kind = s->extra[i].kind;
        sec[n].stride = s->extra[i].stride; /* 0: a byte section */
        sec[n].version = s->extra[i].version;
        sec[n].flags = s->extra[i].flags;
        sec[n].buf = &s->extra[i].bytes;
        n++;
    }

    uint64_t offsets[32], pos = sizeof(kiln_blob_header) + (uint64_t)n * sizeof(kiln_blob_section);
    for (int i = 0; i < n; i++) {
        pos = (pos + 63) & ~(uint64_t)63;
        offsets[i] = pos;
        pos += sec[i].buf->n;
    }
    uint64_t total = (pos + 63) & ~(uint64_t)63;
    unsigned char *blob = (unsigned char *)aligned_alloc(KILN_BLOB_ALIGN, (size_t)total);
    if (!blob) abort();
    memset(blob, 0, (size_t)total);

    kiln_blob_header h;
    memset(&h, 0, sizeof h);
    h.magic = KILN_BLOB_MAGIC;
    h.version_major = KILN_BLOB_VERSION_MAJOR;
    h.version_minor = KILN_BLOB_VERSION_MINOR;
    h.flags = s->header_flags;
    h.header_size = sizeof h;
    h.total_size = total;
    h.section_count = (uint32_t)n;
    h.section_table_offset = sizeof h;
    memcpy(blob, &h, sizeof h);
    for (int i = 0; i < n; i++) {
        kiln_blob_section e;
        memset(&e, 0, sizeof e);
        e.kind = sec[i].kind;
        e.version = sec[i].version;
        e.flags = sec[i].flags;
        e.offset = offsets[i];
        e.size = sec[i].buf->n;
        e.stride = sec[i].stride;
        e.count = sec[i].stride ? (uint32_t)(sec[i].buf->n / sec[i].stride) : 0;
        memcpy(blob + sizeof h + (size_t)i * sizeof e, &e, sizeof e);
        if (sec[i].buf->n) memcpy(blob + offsets[i], sec[i].buf->p, sec[i].buf->n);
        if (e.kind == KILN_SECTION_STREAMS && data_sec >= 0) {
            /* stream offsets become absolute */
            for (uint32_t k = 0; k < e.count; k++) {
                kiln_blob_stream *st = (kiln_blob_stream *)(blob + offsets[i]) + k;
                st->offset += offsets[data_sec];
            }
        }
    }
    free(meta.p);
    free(names.p);
    bb_fix_crc(blob, (size_t)total);
    *size = (size_t)total;
    return blob;
}

/* ---- sample scenes ------------------------------------------------------------------------ */
static inline void bb_identity_soa(kiln_soa_xform *x)
{
    memset(x, 0, sizeof *x);
    for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) x->qw[i] = x->sx[i] = x->sy[i] = x->sz[i] = 1.0f;
}

static inline void bb_identity_matrix(float m[16])
{
    memset(m, 0, 16 * sizeof(float));
    m[0] = m[5] = m[10] = m[15] = 1.0f;
}

/* A skeleton of `bone_count` bones (a chain when chain != 0, else a fan under bone 0) for
 * `model`, with rest pose and inverse binds. Returns the skeleton index. */
static inline uint32_t bb_skeleton(bb_scene *s, uint32_t model, uint32_t bone_count, const char *prefix, int chain)
{
    kiln_blob_skeleton sk;
    memset(&sk, 0, sizeof sk);
    sk.model = model;
    sk.bone_count = bone_count;
    sk.first_bone = (uint32_t)(s->bones.n / sizeof(kiln_blob_bone));
    sk.first_soa = (uint32_t)(s->rest.n / sizeof(kiln_soa_xform));
    sk.soa_count = (bone_count + KILN_SOA_WIDTH - 1) / KILN_SOA_WIDTH;
    sk.depth = bone_count ? (chain ? bone_count : (bone_count > 1 ? 2 : 1)) : 0;
    for (uint32_t b = 0; b < bone_count; b++) {
        char name[64];
        snprintf(name, sizeof name, "%s%u", prefix, b);
        bb_bone(s, name, b == 0 ? -1 : (int32_t)(chain ? b - 1 : 0));
        float m[16];
        bb_identity_matrix(m);
        m[13] = -(float)b;
        bb_put(&s->ibnd, m, sizeof m);
    }
    for (uint32_t k = 0; k < sk.soa_count; k++) {
        kiln_soa_xform x;
        bb_identity_soa(&x);
        for (uint32_t l = 0; l < KILN_SOA_WIDTH && k * KILN_SOA_WIDTH + l < bone_count; l++) x.ty[l] = 1.0f;
        bb_add(&s->rest, &x);
    }
    return bb_add(&s->skels, &sk);
}

/* The small scene the tests use: every section kind, a couple of records each. */
static inline void bb_sample_scene(bb_scene *s)
{
    bb_init(s);
    s->has_meta = 1;
    s->meta.author = bb_str(s, "tester");
    s->meta.software = bb_str(s, "kiln tests");
    s->meta.scene_root = bb_str(s, "/scene");
    s->meta.up_axis = KILN_UP_Y;
    s->meta.source_count = 1;
    s->header_flags = KILN_BLOB_FLAG_QUANTIZED;

    kiln_blob_model model;
    memset(&model, 0, sizeof model);
    model.name = bb_str(s, "hero");
    model.skeleton = 0;
    model.first_mesh = 0, model.mesh_count = 2;
    model.first_hair = 0, model.hair_count = 1;
    model.first_material = 0, model.material_count = 2;
    model.rotation[3] = 1.0f;
    model.scale[0] = model.scale[1] = model.scale[2] = 1.0f;
    bb_add(&s->models, &model);
    bb_skeleton(s, 0, 3, "bone", 1);

    /* mesh 0: skinned quad, u16 indices, float streams */
    static const float pos[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
    static const float nrm[4][3] = {{0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, 1}};
    static const float uv[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
    static const uint16_t joints[4][2] = {{0, 1}, {1, 2}, {2, 0}, {1, 0}};
    static const float weights[4][2] = {{0.75f, 0.25f}, {0.5f, 0.5f}, {1, 0}, {0.6f, 0.4f}};
    static const uint16_t idx16[6] = {0, 1, 2, 0, 2, 3};
    kiln_blob_mesh mesh;
    memset(&mesh, 0, sizeof mesh);
    mesh.name = bb_str(s, "body");
    mesh.model = 0;
    mesh.material = 0;
    mesh.skeleton = 0;
    mesh.vertex_count = 4;
    mesh.index_count = 6;
    mesh.first_stream = (uint32_t)(s->streams.n / sizeof(kiln_blob_stream));
    bb_stream(s, KILN_ATTR_POSITION, KILN_FORMAT_F32x3, 0, 3, 4, 12, pos);
    bb_stream(s, KILN_ATTR_NORMAL, KILN_FORMAT_F32x3, 0, 3, 4, 12, nrm);
    bb_stream(s, KILN_ATTR_TEXCOORD, KILN_FORMAT_F32x2, 0, 2, 4, 8, uv);
    bb_stream(s, KILN_ATTR_JOINTS, KILN_FORMAT_U16xN, 0, 2, 4, 4, joints);
    bb_stream(s, KILN_ATTR_WEIGHTS, KILN_FORMAT_F32xN, 0, 2, 4, 8, weights);
    bb_stream(s, KILN_ATTR_INDICES, KILN_FORMAT_U16x1, 0, 1, 6, 2, idx16);
    mesh.stream_count = 6;
    mesh.influences = 2;
    mesh.skinning = KILN_SKIN_LINEAR;
    mesh.uv_layers = 1;
    mesh.bounds_max[0] = mesh.bounds_max[1] = 1.0f;
    bb_add(&s->meshes, &mesh);

    /* mesh 1: quantised triangle, u32 indices, packed colours, padded position stride */
    static const uint16_t qpos[3][4] = {{0, 0, 0, 0}, {65535, 0, 0, 0}, {0, 65535, 0, 0}};
    static const int16_t oct[3][2] = {{0, 32767}, {0, 32767}, {0, 32767}};
    static const uint8_t rgba[3][4] = {{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}};
    static const uint32_t idx32[3] = {0, 1, 2};
    memset(&mesh, 0, sizeof mesh);
    mesh.name = bb_str(s, "prop");
    mesh.model = 0;
    mesh.material = 1;
    mesh.skeleton = KILN_BLOB_NONE;
    mesh.vertex_count = 3;
    mesh.index_count = 3;
    mesh.first_stream = (uint32_t)(s->streams.n / sizeof(kiln_blob_stream));
    uint32_t qs = bb_stream(s, KILN_ATTR_POSITION, KILN_FORMAT_UNORM16x4, 0, 4, 3, 8, qpos);
    ((kiln_blob_stream *)s->streams.p)[qs].decode_offset[0] = -1.0f;
    ((kiln_blob_stream *)s->streams.p)[qs].decode_scale[0] = 2.0f;
    bb_stream(s, KILN_ATTR_NORMAL, KILN_FORMAT_OCT16x2, 0, 2, 3, 4, oct);
    bb_stream(s, KILN_ATTR_COLOR, KILN_FORMAT_U8x4_UNORM, 0, 4, 3, 4, rgba);
    bb_stream(s, KILN_ATTR_INDICES, KILN_FORMAT_U32x1, 0, 1, 3, 4, idx32);
    mesh.stream_count = 4;
    mesh.color_layers = 1;
    mesh.bounds_min[0] = -1.0f;
    mesh.bounds_max[0] = mesh.bounds_max[1] = 1.0f;
    bb_add(&s->meshes, &mesh);

    /* hair: 2 strands over 5 particles */
    static const uint32_t strands[3] = {0, 2, 5};
    static const float particles[5][3] = {{0, 0, 0}, {0, 1, 0}, {1, 0, 0}, {1, 1, 0}, {1, 2, 0}};
    kiln_blob_hair hair;
    memset(&hair, 0, sizeof hair);
    hair.name = bb_str(s, "fur");
    hair.model = 0;
    hair.material = 0;
    hair.strand_count = 2;
    hair.particle_count = 5;
    hair.strands_stream = bb_stream(s, KILN_ATTR_HAIR_STRANDS, KILN_FORMAT_U32x1, 0, 1, 3, 4, strands);
    hair.particles_stream = bb_stream(s, KILN_ATTR_HAIR_PARTICLES, KILN_FORMAT_F32x3, 0, 3, 5, 12, particles);
    bb_add(&s->hairs, &hair);

    /* materials and slots */
    kiln_blob_material mat;
    memset(&mat, 0, sizeof mat);
    mat.name = bb_str(s, "skin");
    mat.type = bb_str(s, "pbr");
    mat.first_slot = 0, mat.slot_count = 2;
    bb_add(&s->mats, &mat);
    mat.name = bb_str(s, "metal");
    mat.first_slot = 2, mat.slot_count = 1;
    bb_add(&s->mats, &mat);
    kiln_blob_material_slot slot;
    memset(&slot, 0, sizeof slot);
    slot.name = bb_str(s, "albedo");
    slot.kind = KILN_SLOT_FILE;
    slot.path = bb_str(s, "textures/skin.png");
    bb_add(&s->slots, &slot);
    memset(&slot, 0, sizeof slot);
    slot.name = bb_str(s, "tint");
    slot.kind = KILN_SLOT_COLOR;
    slot.rgba[0] = slot.rgba[3] = 1.0f;
    slot.rgba_linear[0] = slot.rgba_linear[3] = 1.0f;
    bb_add(&s->slots, &slot);
    memset(&slot, 0, sizeof slot);
    slot.name = bb_str(s, "roughness");
    slot.kind = KILN_SLOT_FILE;
    slot.path = bb_str(s, "textures/metal_r.png");
    slot.color_space = 1;
    bb_add(&s->slots, &slot);

    /* references and instances: 2 crates, 1 lamp */
    const char *paths[2] = {"props/crate.cast", "props/lamp.cast"};
    uint32_t counts[2] = {2, 1}, next = 0;
    for (uint32_t r = 0; r < 2; r++) {
        kiln_blob_reference ref;
        char resolved[64];
        snprintf(resolved, sizeof resolved, "/scene/%s", paths[r]);
        ref.path = bb_str(s, paths[r]);
        ref.resolved_path = bb_str(s, resolved);
        ref.first_instance = next;
        ref.instance_count = counts[r];
        bb_add(&s->refs, &ref);
        for (uint32_t k = 0; k < counts[r]; k++, next++) {
            kiln_blob_instance inst;
            char name[32];
            memset(&inst, 0, sizeof inst);
            snprintf(name, sizeof name, "inst%u", next);
            inst.name = bb_str(s, name);
            inst.reference = r;
            inst.source_index = next;
            inst.position[0] = (float)next;
            inst.rotation[3] = 1.0f;
            inst.scale[0] = inst.scale[1] = inst.scale[2] = 1.0f;
            bb_add(&s->insts, &inst);
        }
    }
}

/* A large scene for throughput: `mesh_count` skinned meshes of `verts` vertices (positions,
 * normals, UVs as F32, 4 joints/weights, u32 indices, 2 triangles per vertex), one skeleton. */
static inline void bb_big_scene(bb_scene *s, uint32_t mesh_count, uint32_t verts, uint32_t seed)
{
    bb_init(s);
    s->has_meta = 1;
    s->meta.software = bb_str(s, "kiln bench");
    kiln_blob_model model;
    memset(&model, 0, sizeof model);
    model.name = bb_str(s, "city");
    model.skeleton = 0;
    model.mesh_count = mesh_count;
    model.rotation[3] = 1.0f;
    model.scale[0] = model.scale[1] = model.scale[2] = 1.0f;
    bb_add(&s->models, &model);
    const uint32_t bones = 64;
    bb_skeleton(s, 0, bones, "joint", 0);

    size_t nidx = (size_t)verts * 6;
    float *f3 = (float *)malloc((size_t)verts * 12);
    float *f2 = (float *)malloc((size_t)verts * 8);
    float *w4 = (float *)malloc((size_t)verts * 16);
    uint16_t *j4 = (uint16_t *)malloc((size_t)verts * 8);
    uint32_t *ix = (uint32_t *)malloc(nidx * 4);
    if (!f3 || !f2 || !w4 || !j4 || !ix) abort();
    uint32_t rng = seed * 2654435761u + 1u;
    for (uint32_t m = 0; m < mesh_count; m++) {
        kiln_blob_mesh mesh;
        char name[32];
        memset(&mesh, 0, sizeof mesh);
        snprintf(name, sizeof name, "mesh%u", m);
        mesh.name = bb_str(s, name);
        mesh.skeleton = 0;
        mesh.material = KILN_BLOB_NONE;
        mesh.vertex_count = verts;
        mesh.index_count = (uint32_t)nidx;
        mesh.influences = 4;
        mesh.uv_layers = 1;
        mesh.first_stream = (uint32_t)(s->streams.n / sizeof(kiln_blob_stream));
        mesh.stream_count = 6;
        mesh.bounds_max[0] = mesh.bounds_max[1] = mesh.bounds_max[2] = 1.0f;
        for (uint32_t v = 0; v < verts; v++) {
            rng = rng * 1664525u + 1013904223u;
            f3[3 * v] = (float)(rng >> 8) / 16777216.0f;
            f3[3 * v + 1] = (float)v / (float)verts;
            f3[3 * v + 2] = 0.5f;
            f2[2 * v] = f3[3 * v];
            f2[2 * v + 1] = f3[3 * v + 1];
            for (int k = 0; k < 4; k++) {
                j4[4 * v + (uint32_t)k] = (uint16_t)((rng >> (8 * k)) % bones);
                w4[4 * v + (uint32_t)k] = k == 0 ? 0.7f : 0.1f;
            }
        }
        for (size_t i = 0; i < nidx; i++) {
            rng = rng * 1664525u + 1013904223u;
            ix[i] = (uint32_t)(((uint64_t)rng * verts) >> 32);
        }
        bb_stream(s, KILN_ATTR_POSITION, KILN_FORMAT_F32x3, 0, 3, verts, 12, f3);
        for (uint32_t v = 0; v < verts; v++) f3[3 * v] = 0.0f, f3[3 * v + 1] = 0.0f, f3[3 * v + 2] = 1.0f;
        bb_stream(s, KILN_ATTR_NORMAL, KILN_FORMAT_F32x3, 0, 3, verts, 12, f3);
        bb_stream(s, KILN_ATTR_TEXCOORD, KILN_FORMAT_F32x2, 0, 2, verts, 8, f2);
        bb_stream(s, KILN_ATTR_JOINTS, KILN_FORMAT_U16xN, 0, 4, verts, 8, j4);
        bb_stream(s, KILN_ATTR_WEIGHTS, KILN_FORMAT_F32xN, 0, 4, verts, 16, w4);
        bb_stream(s, KILN_ATTR_INDICES, KILN_FORMAT_U32x1, 0, 1, (uint32_t)nidx, 4, ix);
        bb_add(&s->meshes, &mesh);
    }
    free(f3);
    free(f2);
    free(w4);
    free(j4);
    free(ix);
}

#endif /* KILN_TEST_BLOB_BUILD_H */
