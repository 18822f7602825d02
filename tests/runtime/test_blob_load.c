/* Blob loading and verification on blobs built in the test (tests/blob_build.h): valid loads,
 * the views, exhaustive bit flips and truncations, each specific corruption with its code,
 * the CRC and the payload scanners against independent references, and file opening. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kiln/blob.h"
#include "blob_build.h"
#include "blob_walk.h"
#include "test_util.h"

/* Runtime internals exercised directly (runtime/blob_internal.h). */
uint32_t kiln__crc32c_sw(uint32_t crc, const void *data, size_t size);
uint32_t kiln__crc32c_hw(uint32_t crc, const void *data, size_t size);
int kiln__scan_on_path(int path, int kernel, const void *p, size_t n, uint32_t bound);

/* ---- helpers ------------------------------------------------------------------------------ */
typedef struct blob {
    unsigned char *p;
    size_t         n;
} blob;

static blob sample(void)
{
    bb_scene s;
    bb_sample_scene(&s);
    blob b;
    b.p = bb_build(&s, &b.n);
    bb_free(&s);
    return b;
}

static kiln_result load(const blob *b, uint32_t flags, kiln_diag *d)
{
    const kiln_blob *out = (const kiln_blob *)1;
    kiln_result r = kiln_blob_load(b->p, b->n, flags, &out, d);
    cr_assert_eq(r == KILN_OK, out != NULL, "out must be set exactly on success");
    if (r == KILN_OK) cr_assert_eq((const void *)out, (const void *)b->p);
    return r;
}

/* A trusted view of a test blob, to find the bytes a test corrupts. */
static const kiln_blob *view(const blob *b)
{
    const kiln_blob *k = NULL;
    cr_assert_eq(kiln_blob_load(b->p, b->n, KILN_BLOB_LOAD_TRUSTED, &k, NULL), KILN_OK);
    return k;
}

#define MUT(type, ptr) ((type *)(uintptr_t)(ptr))

static kiln_blob_section *section_of(const blob *b, uint32_t kind)
{
    return MUT(kiln_blob_section, kiln_blob_find_section(view(b), kind));
}

/* Recomputes the CRC, then expects `want` with and without the checksum check, and a diag
 * whose path starts with `path`. */
static void expect(blob *b, kiln_result want, const char *path)
{
    bb_fix_crc(b->p, b->n);
    uint32_t modes[2] = {0, KILN_BLOB_LOAD_NO_CRC};
    for (int m = 0; m < 2; m++) {
        kiln_diag d;
        kiln_result r = load(b, modes[m], &d);
        cr_assert_eq(r, want, "flags %u: expected %s, got %s: %s", modes[m], kiln_result_name(want),
                     kiln_result_name(r), d.message);
        cr_assert_eq(d.code, want);
        cr_assert_eq(d.severity, KILN_SEVERITY_ERROR);
        cr_assert(d.message[0], "empty message");
        if (path) cr_assert(strncmp(d.path, path, strlen(path)) == 0, "path \"%s\", expected \"%s...\" (%s)", d.path, path, d.message);
    }
    free(b->p);
}

static void walk_ok(const kiln_blob *k, const blob *b)
{
    blob_walk w;
    cr_assert(blob_walk_run(k, b->p, b->n, &w), "walk: %s", w.why);
}

static const kiln_blob_stream *stream_of(const kiln_blob *k, uint32_t mesh, uint32_t semantic)
{
    uint32_t n;
    const kiln_blob_mesh *m = kiln_blob_meshes(k, &n);
    cr_assert(mesh < n);
    const kiln_blob_stream *s = kiln_blob_mesh_stream(k, &m[mesh], semantic, 0);
    cr_assert_not_null(s);
    return s;
}

static uint32_t rng_next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* ---- CRC-32C ------------------------------------------------------------------------------ */
Test(crc32c, known_answers)
{
    cr_assert_eq(kiln_crc32c(0, "123456789", 9), 0xE3069283u);
    cr_assert_eq(kiln__crc32c_sw(0, "123456789", 9), 0xE3069283u);
    cr_assert_eq(kiln__crc32c_hw(0, "123456789", 9), 0xE3069283u);
    cr_assert_eq(kiln_crc32c(0, "", 0), 0u);
    /* RFC 3720 (iSCSI) B.4 vectors */
    unsigned char buf[32];
    memset(buf, 0, 32);
    cr_assert_eq(kiln_crc32c(0, buf, 32), 0x8A9136AAu);
    memset(buf, 0xFF, 32);
    cr_assert_eq(kiln_crc32c(0, buf, 32), 0x62A8AB43u);
    for (int i = 0; i < 32; i++) buf[i] = (unsigned char)i;
    cr_assert_eq(kiln_crc32c(0, buf, 32), 0x46DD794Eu);
    for (int i = 0; i < 32; i++) buf[i] = (unsigned char)(31 - i);
    cr_assert_eq(kiln_crc32c(0, buf, 32), 0x113FDB5Cu);
    cr_assert_eq(kiln_crc32c(kiln_crc32c(0, "12345", 5), "6789", 4), 0xE3069283u, "continuation");
}

Test(crc32c, paths_agree_on_random_lengths_and_offsets)
{
    size_t cap = 4 * 3 * 8192 + 4096;
    unsigned char *buf = malloc(cap);
    uint32_t seed = 12345;
    for (size_t i = 0; i < cap; i++) buf[i] = (unsigned char)rng_next(&seed);
    /* lengths around the lane and round boundaries of the 3-lane path, plus random ones */
    size_t fixed[] = {0, 1, 7, 8, 9, 767, 768, 769, 3 * 8192 - 1, 3 * 8192, 3 * 8192 + 1, 3 * 8192 + 768 + 13,
                      2 * 3 * 8192 + 5, 4 * 3 * 8192};
    for (int it = 0; it < 400; it++) {
        size_t off = rng_next(&seed) % 64;
        size_t len = it < (int)(sizeof fixed / sizeof fixed[0]) ? fixed[it] : rng_next(&seed) % (cap - 64);
        uint32_t want = bb_crc32c(0, buf + off, len);
        cr_assert_eq(kiln__crc32c_sw(0, buf + off, len), want, "sw len %zu off %zu", len, off);
        cr_assert_eq(kiln__crc32c_hw(0, buf + off, len), want, "hw len %zu off %zu", len, off);
        cr_assert_eq(kiln_crc32c(0, buf + off, len), want, "api len %zu off %zu", len, off);
        size_t cut = len ? rng_next(&seed) % len : 0;
        cr_assert_eq(kiln_crc32c(kiln_crc32c(0, buf + off, cut), buf + off + cut, len - cut), want, "split");
    }
    free(buf);
}

/* ---- payload scanners: SIMD paths match the scalar one ------------------------------------- */
Test(scan, simd_paths_match_scalar)
{
    uint32_t seed = 99;
    uint32_t words[400];
    uint16_t halves[800];
    for (int it = 0; it < 900; it++) {
        int kernel = it % 3;
        size_t n = rng_next(&seed) % 300, off = rng_next(&seed) % 4; /* unaligned vector starts */
        uint32_t bound = 1 + rng_next(&seed) % (kernel == 1 ? 100000 : 0xFFFE);
        for (size_t i = 0; i < 400; i++) {
            uint32_t r = rng_next(&seed);
            words[i] = kernel == 0 ? (r & 0x807FFFFFu) | ((r % 255) << 23) : r % bound; /* finite; below */
            halves[2 * i] = (uint16_t)(r % bound);
            halves[2 * i + 1] = (uint16_t)((r >> 16) % bound);
        }
        int planted = n && (it / 3) % 2;
        if (planted) {
            size_t at = off + rng_next(&seed) % n;
            if (kernel == 0) words[at] = (it % 4 < 2) ? 0x7FC00001u : 0xFF800000u;
            else if (kernel == 1) words[at] = bound + (rng_next(&seed) % 2) * 0x80000000u;
            else halves[at] = (uint16_t)bound;
        }
        const void *p = kernel == 2 ? (const void *)(halves + off) : (const void *)(words + off);
        int want = kiln__scan_on_path(0, kernel, p, n, bound);
        cr_assert_eq(want, !planted, "scalar kernel %d n %zu", kernel, n);
        for (int path = 1; path <= 2; path++) {
            int got = kiln__scan_on_path(path, kernel, p, n, bound);
            if (got >= 0) cr_assert_eq(got, want, "kernel %d path %d n %zu", kernel, path, n);
        }
    }
}

/* ---- names -------------------------------------------------------------------------------- */
Test(blob_names, hash_is_fnv1a_32)
{
    cr_assert_eq(kiln_name_hash(""), 0x811C9DC5u);
    cr_assert_eq(kiln_name_hash("a"), 0xE40C292Cu);
    cr_assert_eq(kiln_name_hash("foobar"), 0xBF9CF968u);
}

Test(blob_names, kind_name_is_four_printable_chars)
{
    char buf[5];
    cr_assert_str_eq(kiln_blob_kind_name(KILN_SECTION_MESHES, buf), "MESH");
    cr_assert_str_eq(kiln_blob_kind_name(KILN_SECTION_MATERIAL_SLOTS, buf), "MSLT");
    cr_assert_str_eq(kiln_blob_kind_name(0x00FF4101u, buf), "?A??");
}

/* ---- valid blobs -------------------------------------------------------------------------- */
Test(blob_load, loads_sample_in_every_mode)
{
    blob b = sample();
    uint32_t modes[3] = {0, KILN_BLOB_LOAD_NO_CRC, KILN_BLOB_LOAD_TRUSTED};
    for (int m = 0; m < 3; m++) {
        kiln_diag d;
        const kiln_blob *k = NULL;
        cr_assert_eq(kiln_blob_load(b.p, b.n, modes[m], &k, &d), KILN_OK, "%s", d.message);
        cr_assert_eq(d.code, KILN_OK);
        walk_ok(k, &b);
    }
    free(b.p);
}

Test(blob_load, views_read_back_the_sample)
{
    blob b = sample();
    const kiln_blob *k;
    cr_assert_eq(kiln_blob_load(b.p, b.n, 0, &k, NULL), KILN_OK);
    uint32_t n;
    cr_assert_not_null(kiln_blob_models(k, &n));
    cr_assert_eq(n, 1);
    cr_assert_not_null(kiln_blob_skeletons(k, &n));
    cr_assert_eq(n, 1);
    cr_assert_not_null(kiln_blob_bones(k, &n));
    cr_assert_eq(n, 3);
    cr_assert_not_null(kiln_blob_rest_pose(k, &n));
    cr_assert_eq(n, 1);
    cr_assert_not_null(kiln_blob_inverse_binds(k, &n));
    cr_assert_eq(n, 3);
    cr_assert_not_null(kiln_blob_meshes(k, &n));
    cr_assert_eq(n, 2);
    cr_assert_not_null(kiln_blob_hairs(k, &n));
    cr_assert_eq(n, 1);
    cr_assert_not_null(kiln_blob_streams(k, &n));
    cr_assert_eq(n, 12);
    cr_assert_not_null(kiln_blob_materials(k, &n));
    cr_assert_eq(n, 2);
    cr_assert_not_null(kiln_blob_material_slots(k, &n));
    cr_assert_eq(n, 3);
    cr_assert_not_null(kiln_blob_instances(k, &n));
    cr_assert_eq(n, 3);
    cr_assert_not_null(kiln_blob_references(k, &n));
    cr_assert_eq(n, 2);
    cr_assert_not_null(kiln_blob_name_index(k, &n));
    cr_assert_eq(n, 14);

    const kiln_blob_metadata *meta = kiln_blob_metadata_of(k);
    cr_assert_not_null(meta);
    cr_assert_str_eq(kiln_blob_string(k, meta->author), "tester");
    cr_assert_eq(meta->up_axis, KILN_UP_Y);
    cr_assert_str_eq(kiln_blob_string(k, 0), "");
    cr_assert_str_eq(kiln_blob_string(k, 0xFFFFFFF0u), "");
    cr_assert_eq(kiln_blob_header_of(k)->flags, KILN_BLOB_FLAG_QUANTIZED);

    cr_assert_eq(kiln_blob_find(k, KILN_SECTION_MODELS, "hero"), 0);
    cr_assert_eq(kiln_blob_find(k, KILN_SECTION_MESHES, "prop"), 1);
    cr_assert_eq(kiln_blob_find(k, KILN_SECTION_MATERIALS, "metal"), 1);
    cr_assert_eq(kiln_blob_find(k, KILN_SECTION_REFERENCES, "props/lamp.cast"), 1);
    cr_assert_eq(kiln_blob_find(k, KILN_SECTION_INSTANCES, "inst2"), 2);
    cr_assert_eq(kiln_blob_find(k, KILN_SECTION_BONES, "bone1"), 1);
    cr_assert_eq(kiln_blob_find(k, KILN_SECTION_MESHES, "hero"), KILN_BLOB_NONE, "kinds are separate");
    cr_assert_eq(kiln_blob_find(k, KILN_SECTION_MODELS, "nobody"), KILN_BLOB_NONE);
    cr_assert_eq(kiln_blob_find_bone(k, 0, "bone2"), 2);
    cr_assert_eq(kiln_blob_find_bone(k, 1, "bone2"), KILN_BLOB_NONE, "no skeleton 1");
    cr_assert_eq(kiln_blob_find_bone(k, 0, "bone9"), KILN_BLOB_NONE);

    const kiln_blob_stream *pos = stream_of(k, 0, KILN_ATTR_POSITION);
    const float *p = kiln_blob_stream_data(k, pos);
    cr_assert_not_null(p);
    cr_assert_eq((uintptr_t)p % 16, 0);
    cr_assert_float_eq(p[3], 1.0f, 0);
    const kiln_blob_stream *ix = stream_of(k, 1, KILN_ATTR_INDICES);
    cr_assert_eq(ix->format, KILN_FORMAT_U32x1);
    const uint32_t *i32 = kiln_blob_stream_data(k, ix);
    cr_assert_eq(i32[2], 2);
    uint32_t nm;
    cr_assert_null(kiln_blob_mesh_stream(k, &kiln_blob_meshes(k, &nm)[0], KILN_ATTR_COLOR, 0));
    cr_assert_not_null(kiln_blob_find_section(k, KILN_SECTION_DATA));
    cr_assert_null(kiln_blob_find_section(k, KILN_FOURCC('F', 'U', 'T', 'R')));
    free(b.p);
}

Test(blob_load, header_only_blob_is_valid_and_empty)
{
    bb_scene s;
    bb_init(&s);
    blob b;
    b.p = bb_build(&s, &b.n);
    bb_free(&s);
    const kiln_blob *k;
    cr_assert_eq(kiln_blob_load(b.p, b.n, 0, &k, NULL), KILN_OK);
    uint32_t n = 7;
    cr_assert_null(kiln_blob_meshes(k, &n));
    cr_assert_eq(n, 0);
    cr_assert_null(kiln_blob_metadata_of(k));
    cr_assert_str_eq(kiln_blob_string(k, 5), "");
    cr_assert_eq(kiln_blob_find(k, KILN_SECTION_MODELS, "x"), KILN_BLOB_NONE);
    walk_ok(k, &b);
    free(b.p);
}

Test(blob_load, unknown_section_is_skipped)
{
    bb_scene s;
    bb_sample_scene(&s);
    bb_extra_section(&s, KILN_FOURCC('F', 'U', 'T', 'R'), 0, "future payload", 14);
    blob b;
    b.p = bb_build(&s, &b.n);
    bb_free(&s);
    const kiln_blob *k;
    kiln_diag d;
    cr_assert_eq(kiln_blob_load(b.p, b.n, 0, &k, &d), KILN_OK, "%s", d.message);
    cr_assert_not_null(kiln_blob_find_section(k, KILN_FOURCC('F', 'U', 'T', 'R')));
    walk_ok(k, &b);
    free(b.p);
}

Test(blob_load, unknown_required_section_is_rejected)
{
    bb_scene s;
    bb_sample_scene(&s);
    bb_extra_section(&s, KILN_FOURCC('F', 'U', 'T', 'R'), KILN_SECTION_FLAG_REQUIRED, "future payload", 14);
    blob b;
    b.p = bb_build(&s, &b.n);
    bb_free(&s);
    expect(&b, KILN_ERR_BLOB_BAD_VERSION, "section[16].kind");
}

/* ---- arguments and alignment -------------------------------------------------------------- */
Test(blob_load, rejects_null_and_misaligned_memory)
{
    blob b = sample();
    const kiln_blob *k = (const kiln_blob *)1;
    kiln_diag d;
    cr_assert_eq(kiln_blob_load(NULL, b.n, 0, &k, &d), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_null(k);
    cr_assert_eq(kiln_blob_load(b.p, b.n, 0, NULL, &d), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_blob_load(b.p, b.n, 0x80, &k, &d), KILN_ERR_INVALID_ARGUMENT);
    unsigned char *big = aligned_alloc(64, b.n + 128);
    for (size_t shift = 1; shift < 64; shift *= 2) {
        memcpy(big + shift, b.p, b.n);
        k = (const kiln_blob *)1;
        cr_assert_eq(kiln_blob_load(big + shift, b.n, 0, &k, &d), KILN_ERR_BLOB_MISALIGNED, "shift %zu", shift);
        cr_assert_eq(kiln_blob_load(big + shift, b.n, KILN_BLOB_LOAD_TRUSTED, &k, &d), KILN_ERR_BLOB_MISALIGNED);
        cr_assert_null(k);
    }
    free(big);
    free(b.p);
}

/* ---- exhaustive mutations ----------------------------------------------------------------- */
/* The 8 single-bit flips of a byte, then all of its bits at once. */
static unsigned char flip_mask(int k) { return k < 8 ? (unsigned char)(1u << k) : 0xFF; }

Test(blob_load, every_bit_flip_is_rejected_with_crc)
{
    blob b = sample();
    for (size_t i = 0; i < b.n; i++)
        for (int bit = 0; bit < 9; bit++) {
            unsigned char mask = flip_mask(bit);
            b.p[i] ^= mask;
            kiln_diag d;
            kiln_result r = load(&b, 0, &d);
            cr_assert_neq(r, KILN_OK, "byte %zu ^ 0x%02X accepted", i, mask);
            cr_assert_eq(d.code, r);
            b.p[i] ^= mask;
        }
    cr_assert_eq(load(&b, 0, NULL), KILN_OK);
    free(b.p);
}

Test(blob_load, every_bit_flip_without_crc_loads_or_fails_cleanly)
{
    blob b = sample();
    size_t loaded = 0;
    for (size_t i = 0; i < b.n; i++)
        for (int bit = 0; bit < 9; bit++) {
            unsigned char mask = flip_mask(bit);
            b.p[i] ^= mask;
            kiln_diag d;
            const kiln_blob *k = NULL;
            kiln_result r = kiln_blob_load(b.p, b.n, KILN_BLOB_LOAD_NO_CRC, &k, &d);
            if (r == KILN_OK) {
                loaded++;
                blob_walk w;
                cr_assert(blob_walk_run(k, b.p, b.n, &w), "byte %zu ^ 0x%02X: %s", i, mask, w.why);
            } else {
                cr_assert_null(k);
                cr_assert_eq(d.code, r);
                cr_assert(d.message[0]);
            }
            b.p[i] ^= mask;
        }
    /* floats, payload values and the checksum field itself change without breaking structure */
    cr_assert_gt(loaded, 0);
    free(b.p);
}

Test(blob_load, every_truncation_is_rejected)
{
    blob b = sample();
    for (size_t n = 0; n < b.n; n++) {
        /* exact-size copies, so that a read past the end is a sanitizer error */
        void *p = NULL;
        cr_assert_eq(posix_memalign(&p, 64, n ? n : 1), 0);
        memcpy(p, b.p, n);
        blob t = {p, n};
        cr_assert_neq(load(&t, 0, NULL), KILN_OK, "truncated to %zu", n);
        cr_assert_neq(load(&t, KILN_BLOB_LOAD_TRUSTED, NULL), KILN_OK, "truncated to %zu", n);
        free(p);
    }
    /* and with a header patched to the shorter size and a matching CRC */
    for (size_t n = 64; n < b.n; n += 64) {
        blob t = {aligned_alloc(64, n), n};
        memcpy(t.p, b.p, n);
        uint64_t total = n;
        memcpy(t.p + offsetof(kiln_blob_header, total_size), &total, 8);
        bb_fix_crc(t.p, t.n);
        kiln_diag d;
        cr_assert_neq(load(&t, 0, &d), KILN_OK, "consistent header, cut at %zu", n);
        free(t.p);
    }
    free(b.p);
}

/* ---- specific corruptions ------------------------------------------------------------------ */
Test(blob_corrupt, bone_parent_not_below_own_index)
{
    blob b = sample();
    uint32_t n;
    MUT(kiln_blob_bone, kiln_blob_bones(view(&b), &n))[2].parent = 2;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "BONE[2].parent");
    b = sample();
    MUT(kiln_blob_bone, kiln_blob_bones(view(&b), &n))[1].parent = -2;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "BONE[1].parent");
}

Test(blob_corrupt, joint_not_below_bone_count)
{
    blob b = sample();
    const kiln_blob *k = view(&b);
    uint16_t *j = MUT(uint16_t, kiln_blob_stream_data(k, stream_of(k, 0, KILN_ATTR_JOINTS)));
    j[5] = 3; /* the skeleton has 3 bones */
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "STRM[3].data[2]");
}

Test(blob_corrupt, triangle_index_not_below_vertex_count)
{
    blob b = sample();
    const kiln_blob *k = view(&b);
    MUT(uint16_t, kiln_blob_stream_data(k, stream_of(k, 0, KILN_ATTR_INDICES)))[4] = 4;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "STRM[5].data[4]");
    b = sample();
    k = view(&b);
    MUT(uint32_t, kiln_blob_stream_data(k, stream_of(k, 1, KILN_ATTR_INDICES)))[0] = 0xFFFFFFFFu;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "STRM[9].data[0]");
}

Test(blob_corrupt, nan_and_infinity_are_rejected)
{
    uint32_t nan = 0x7FC00001u, inf = 0xFF800000u, n;
    blob b = sample();
    memcpy(&MUT(kiln_soa_xform, kiln_blob_rest_pose(view(&b), &n))[0].qw[5], &nan, 4);
    expect(&b, KILN_ERR_BLOB_NOT_FINITE, "REST[0]");
    b = sample();
    memcpy(MUT(float, kiln_blob_inverse_binds(view(&b), &n)) + 16 * 2 + 7, &inf, 4);
    expect(&b, KILN_ERR_BLOB_NOT_FINITE, "IBND[2]");
    b = sample();
    const kiln_blob *k = view(&b);
    memcpy(MUT(float, kiln_blob_stream_data(k, stream_of(k, 0, KILN_ATTR_TEXCOORD))) + 5, &nan, 4);
    expect(&b, KILN_ERR_BLOB_NOT_FINITE, "STRM[2].data[2]");
    b = sample();
    memcpy(&MUT(kiln_blob_model, kiln_blob_models(view(&b), &n))[0].rotation[2], &inf, 4);
    expect(&b, KILN_ERR_BLOB_NOT_FINITE, "MODL[0].rotation");
    b = sample();
    memcpy(&MUT(kiln_blob_stream, kiln_blob_streams(view(&b), &n))[6].decode_scale[1], &nan, 4);
    expect(&b, KILN_ERR_BLOB_NOT_FINITE, "STRM[6].decode_scale");
    b = sample();
    memcpy(&MUT(kiln_blob_material_slot, kiln_blob_material_slots(view(&b), &n))[1].rgba_linear[0], &inf, 4);
    expect(&b, KILN_ERR_BLOB_NOT_FINITE, "MSLT[1].rgba_linear");
}

Test(blob_corrupt, unsorted_name_index)
{
    blob b = sample();
    uint32_t n;
    kiln_blob_name_entry *e = MUT(kiln_blob_name_entry, kiln_blob_name_index(view(&b), &n));
    kiln_blob_name_entry t = e[3];
    e[3] = e[4];
    e[4] = t;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "NIDX[4].kind");
    b = sample();
    e = MUT(kiln_blob_name_entry, kiln_blob_name_index(view(&b), &n));
    e[0].hash ^= 1;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "NIDX[0].hash");
    b = sample();
    e = MUT(kiln_blob_name_entry, kiln_blob_name_index(view(&b), &n));
    e[n - 1].index = 99;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "NIDX[13].index");
}

Test(blob_corrupt, string_offset_out_of_range)
{
    blob b = sample();
    const kiln_blob *k = view(&b);
    uint32_t n;
    MUT(kiln_blob_model, kiln_blob_models(k, &n))[0].name = (uint32_t)kiln_blob_find_section(k, KILN_SECTION_STRINGS)->size;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "MODL[0].name");
    b = sample();
    MUT(kiln_blob_material_slot, kiln_blob_material_slots(view(&b), &n))[0].path = 0x7FFFFFFF;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "MSLT[0].path");
    b = sample();
    kiln_blob_section *s = section_of(&b, KILN_SECTION_STRINGS);
    b.p[s->offset + s->size - 1] = 'x';
    expect(&b, KILN_ERR_BLOB_BAD_SECTION, "STRS");
}

Test(blob_corrupt, overlapping_sections)
{
    blob b = sample();
    kiln_blob_section *t = MUT(kiln_blob_section, kiln_blob_sections(view(&b), &(uint32_t){0}));
    t[3].offset = t[2].offset;
    expect(&b, KILN_ERR_BLOB_BAD_SECTION, "section[3].offset");
    b = sample();
    t = MUT(kiln_blob_section, kiln_blob_sections(view(&b), &(uint32_t){0}));
    t[0].offset = 64; /* over the section table */
    expect(&b, KILN_ERR_BLOB_BAD_SECTION, "section[0].offset");
    b = sample();
    t = MUT(kiln_blob_section, kiln_blob_sections(view(&b), &(uint32_t){0}));
    t[5].offset += 16;
    expect(&b, KILN_ERR_BLOB_MISALIGNED, "section[5].offset");
    b = sample();
    section_of(&b, KILN_SECTION_REFERENCES)->size = 1u << 20;
    expect(&b, KILN_ERR_BLOB_TRUNCATED, "section[15].size");
}

Test(blob_corrupt, wrong_stride_count_or_version)
{
    blob b = sample();
    section_of(&b, KILN_SECTION_MESHES)->stride = 68;
    expect(&b, KILN_ERR_BLOB_BAD_SECTION, "section[8].stride");
    b = sample();
    section_of(&b, KILN_SECTION_BONES)->count = 4;
    expect(&b, KILN_ERR_BLOB_BAD_SECTION, "section[5].count");
    b = sample();
    section_of(&b, KILN_SECTION_DATA)->count = 1;
    expect(&b, KILN_ERR_BLOB_BAD_SECTION, "section[11].count");
    b = sample();
    section_of(&b, KILN_SECTION_HAIRS)->version = 2;
    expect(&b, KILN_ERR_BLOB_BAD_VERSION, "section[9].version");
    b = sample();
    section_of(&b, KILN_SECTION_REFERENCES)->kind = KILN_SECTION_MATERIALS; /* duplicate kind */
    expect(&b, KILN_ERR_BLOB_BAD_SECTION, "section[15].kind");
}

Test(blob_corrupt, nonzero_padding)
{
    blob b = sample();
    kiln_blob_section *s = section_of(&b, KILN_SECTION_MODELS); /* 80 bytes: 48 bytes of padding follow */
    b.p[s->offset + s->size + 3] = 1;
    expect(&b, KILN_ERR_BLOB_BAD_SECTION, "padding");
    b = sample();
    b.p[b.n - 1] = 1; /* after the last section */
    expect(&b, KILN_ERR_BLOB_BAD_SECTION, "padding");
}

Test(blob_corrupt, header_fields)
{
    struct {
        size_t      at;
        uint32_t    value;
        int         bytes;
        kiln_result want;
        const char *path;
    } cases[] = {
        {0, 0x4E4C494Cu, 4, KILN_ERR_BLOB_BAD_MAGIC, "header.magic"},
        {4, 2, 2, KILN_ERR_BLOB_BAD_VERSION, "header.version_major"},
        {8, 2, 4, KILN_ERR_BLOB_BAD_HEADER, "header.flags"},
        {12, 128, 4, KILN_ERR_BLOB_BAD_HEADER, "header.header_size"},
        {28, 96, 4, KILN_ERR_BLOB_BAD_HEADER, "header.section_table_offset"},
        {24, 1000, 4, KILN_ERR_BLOB_TRUNCATED, "header.section_count"},
        {63, 1, 1, KILN_ERR_BLOB_BAD_HEADER, "header.reserved"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        blob b = sample();
        memcpy(b.p + cases[c].at, &cases[c].value, (size_t)cases[c].bytes);
        expect(&b, cases[c].want, cases[c].path);
    }
    blob b = sample();
    uint64_t total = b.n + 64;
    memcpy(b.p + 16, &total, 8);
    expect(&b, KILN_ERR_BLOB_TRUNCATED, "header.total_size");
    b = sample();
    total = b.n - 64;
    memcpy(b.p + 16, &total, 8);
    expect(&b, KILN_ERR_BLOB_BAD_HEADER, "header.total_size");
}

Test(blob_corrupt, record_links)
{
    uint32_t n;
    blob b = sample();
    MUT(kiln_blob_bone, kiln_blob_bones(view(&b), &n))[1].name_hash ^= 0x100;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "BONE[1].name_hash");
    b = sample();
    MUT(kiln_blob_skeleton, kiln_blob_skeletons(view(&b), &n))[0].soa_count = 2;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "SKEL[0].soa_count");
    b = sample();
    MUT(kiln_blob_model, kiln_blob_models(view(&b), &n))[0].mesh_count = 3;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "MODL[0].first_mesh");
    b = sample();
    MUT(kiln_blob_mesh, kiln_blob_meshes(view(&b), &n))[1].skeleton = 1;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "MESH[1].skeleton");
    b = sample();
    MUT(kiln_blob_mesh, kiln_blob_meshes(view(&b), &n))[0].vertex_count = 5;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "MESH[0].first_stream");
    b = sample();
    MUT(kiln_blob_mesh, kiln_blob_meshes(view(&b), &n))[0].influences = 3;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "MESH[0].influences");
    b = sample();
    MUT(kiln_blob_material, kiln_blob_materials(view(&b), &n))[1].slot_count = 2;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "MATL[1].first_slot");
    b = sample();
    MUT(kiln_blob_material_slot, kiln_blob_material_slots(view(&b), &n))[2].kind = 3;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "MSLT[2].kind");
    b = sample();
    MUT(kiln_blob_instance, kiln_blob_instances(view(&b), &n))[0].reference = 1;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "INST[0].reference");
    b = sample();
    MUT(kiln_blob_reference, kiln_blob_references(view(&b), &n))[1].first_instance = 1;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "IREF[1].first_instance");
    b = sample();
    MUT(kiln_blob_instance, kiln_blob_instances(view(&b), &n))[2].reference = 7;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "INST[2].reference");
}

Test(blob_corrupt, stream_records)
{
    uint32_t n;
    blob b = sample();
    MUT(kiln_blob_stream, kiln_blob_streams(view(&b), &n))[0].offset += 4;
    expect(&b, KILN_ERR_BLOB_MISALIGNED, "STRM[0].offset");
    b = sample();
    MUT(kiln_blob_stream, kiln_blob_streams(view(&b), &n))[11].offset += 1024;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "STRM[11].offset");
    b = sample();
    MUT(kiln_blob_stream, kiln_blob_streams(view(&b), &n))[0].stride = 8;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "STRM[0].stride");
    b = sample();
    MUT(kiln_blob_stream, kiln_blob_streams(view(&b), &n))[5].format = KILN_FORMAT_F32x1;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "STRM[5].format");
    b = sample();
    MUT(kiln_blob_stream, kiln_blob_streams(view(&b), &n))[4].format = 13;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "STRM[4].format");
    b = sample();
    MUT(kiln_blob_stream, kiln_blob_streams(view(&b), &n))[1].semantic = 0;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "STRM[1].semantic");
}

Test(blob_corrupt, hair_strands)
{
    blob b = sample();
    const kiln_blob *k = view(&b);
    uint32_t n;
    const kiln_blob_hair *h = kiln_blob_hairs(k, &n);
    uint32_t *strands = MUT(uint32_t, kiln_blob_stream_data(k, &kiln_blob_streams(k, &n)[h->strands_stream]));
    strands[1] = 6; /* 0, 6, 5 */
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "STRM[10].data[2]");
    b = sample();
    k = view(&b);
    h = kiln_blob_hairs(k, &n);
    strands = MUT(uint32_t, kiln_blob_stream_data(k, &kiln_blob_streams(k, &n)[h->strands_stream]));
    strands[2] = 4;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "HAIR[0].particle_count");
}

/* ---- payload bounds across windows, shared and padded streams ---------------------------- */
Test(blob_payload, many_streams_are_checked_window_by_window)
{
    bb_scene s;
    bb_big_scene(&s, 120, 8, 3); /* 720 streams: more than one pass of owner bounds */
    blob b;
    b.p = bb_build(&s, &b.n);
    bb_free(&s);
    const kiln_blob *k;
    kiln_diag d;
    cr_assert_eq(kiln_blob_load(b.p, b.n, 0, &k, &d), KILN_OK, "%s", d.message);
    walk_ok(k, &b);
    MUT(uint32_t, kiln_blob_stream_data(k, stream_of(k, 119, KILN_ATTR_INDICES)))[47] = 8;
    expect(&b, KILN_ERR_BLOB_BAD_RECORD, "STRM[719].data[47]");
}

/* A mesh that shares only another mesh's index stream bounds it by its own vertex count. */
Test(blob_payload, shared_index_stream_takes_the_tightest_bound)
{
    for (uint32_t verts = 3; verts <= 4; verts++) {
        bb_scene s;
        bb_sample_scene(&s);
        kiln_blob_mesh lod = ((const kiln_blob_mesh *)s.meshes.p)[0];
        lod.name = bb_str(&s, "body_lod");
        lod.first_stream = 5; /* mesh 0's u16 indices (0..3) */
        lod.stream_count = 1;
        lod.vertex_count = verts;
        lod.influences = 0;
        bb_add(&s.meshes, &lod);
        ((kiln_blob_model *)s.models.p)[0].mesh_count = 3;
        blob b;
        b.p = bb_build(&s, &b.n);
        bb_free(&s);
        kiln_diag d;
        kiln_result r = load(&b, 0, &d);
        if (verts == 3) {
            cr_assert_eq(r, KILN_ERR_BLOB_BAD_RECORD, "%s", d.message);
            cr_assert(strstr(d.message, "mesh 2"), "%s", d.message);
        } else {
            cr_assert_eq(r, KILN_OK, "%s", d.message);
            walk_ok(view(&b), &b);
        }
        free(b.p);
    }
}

/* Padding inside a padded stride is not a value: only the format's floats must be finite. */
Test(blob_payload, padded_stride_checks_only_the_values)
{
    for (int where = 0; where < 2; where++) {
        bb_scene s;
        bb_sample_scene(&s);
        float padded[4][4] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {1, 1, 0, 0}, {0, 1, 0, 0}};
        uint32_t nan = 0x7FC00000u;
        memcpy(&padded[2][where ? 1 : 3], &nan, 4);
        /* append a padded copy of mesh 0's positions and point mesh 0's range at it */
        uint32_t si = bb_stream(&s, KILN_ATTR_POSITION, KILN_FORMAT_F32x3, 0, 3, 4, 16, padded);
        kiln_blob_stream *st = (kiln_blob_stream *)s.streams.p;
        kiln_blob_stream tmp = st[0];
        st[0] = st[si];
        st[si] = tmp;
        st[si].semantic = KILN_ATTR_TEXCOORD; /* the original stays valid as a spare UV layer */
        st[si].format = KILN_FORMAT_F32x3;
        st[si].set = 1;
        blob b;
        b.p = bb_build(&s, &b.n);
        bb_free(&s);
        kiln_diag d;
        kiln_result r = load(&b, 0, &d);
        if (where == 0) cr_assert_eq(r, KILN_OK, "NaN in padding: %s", d.message);
        else cr_assert_eq(r, KILN_ERR_BLOB_NOT_FINITE, "%s", d.message);
        if (r == KILN_OK) walk_ok(view(&b), &b);
        free(b.p);
    }
}

/* ---- checksum ------------------------------------------------------------------------------ */
Test(blob_crc, bad_crc_is_rejected_unless_skipped_or_trusted)
{
    blob b = sample();
    b.p[offsetof(kiln_blob_header, crc32c)] ^= 0x40;
    kiln_diag d;
    cr_assert_eq(load(&b, 0, &d), KILN_ERR_BLOB_CHECKSUM);
    cr_assert_str_eq(d.path, "header.crc32c");
    cr_assert_eq(load(&b, KILN_BLOB_LOAD_NO_CRC, NULL), KILN_OK);
    cr_assert_eq(load(&b, KILN_BLOB_LOAD_TRUSTED, NULL), KILN_OK);
    free(b.p);
}

Test(blob_crc, damage_is_reported_as_damage)
{
    blob b = sample();
    uint32_t n;
    MUT(kiln_blob_bone, kiln_blob_bones(view(&b), &n))[2].parent = 7; /* CRC left stale */
    kiln_diag d;
    cr_assert_eq(load(&b, 0, &d), KILN_ERR_BLOB_CHECKSUM);
    cr_assert(strstr(d.message, "BONE[2].parent"), "first structural error kept: %s", d.message);
    cr_assert_eq(load(&b, KILN_BLOB_LOAD_NO_CRC, &d), KILN_ERR_BLOB_BAD_RECORD);
    free(b.p);
}

Test(blob_crc, the_header_is_covered)
{
    blob b = sample();
    b.p[offsetof(kiln_blob_header, version_minor)] ^= 1; /* any minor is valid: only the CRC sees it */
    cr_assert_eq(load(&b, 0, NULL), KILN_ERR_BLOB_CHECKSUM);
    cr_assert_eq(load(&b, KILN_BLOB_LOAD_NO_CRC, NULL), KILN_OK);
    free(b.p);
}

/* ---- diagnostics --------------------------------------------------------------------------- */
Test(blob_diag, names_check_kind_record_and_offset)
{
    blob b = sample();
    const kiln_blob *k = view(&b);
    uint32_t n;
    MUT(kiln_blob_bone, kiln_blob_bones(k, &n))[2].parent = 5;
    uint64_t at = kiln_blob_find_section(k, KILN_SECTION_BONES)->offset + 2 * sizeof(kiln_blob_bone) +
                  offsetof(kiln_blob_bone, parent);
    bb_fix_crc(b.p, b.n);
    kiln_diag d;
    cr_assert_eq(load(&b, 0, &d), KILN_ERR_BLOB_BAD_RECORD);
    cr_assert_str_eq(d.path, "BONE[2].parent");
    cr_assert_eq(d.offset, at);
    char off[32];
    snprintf(off, sizeof off, "byte offset %llu", (unsigned long long)at);
    cr_assert(strstr(d.message, "parent 5"), "%s", d.message);
    cr_assert(strstr(d.message, "BONE, record 2"), "%s", d.message);
    cr_assert(strstr(d.message, off), "%s", d.message);
    free(b.p);
}

/* The walker must notice what verification would have caught (it is not vacuous). */
Test(blob_walk, catches_an_out_of_range_index_in_a_trusted_blob)
{
    blob b = sample();
    const kiln_blob *k = view(&b);
    MUT(uint16_t, kiln_blob_stream_data(k, stream_of(k, 0, KILN_ATTR_INDICES)))[1] = 40000;
    blob_walk w;
    cr_assert_not(blob_walk_run(k, b.p, b.n, &w));
    cr_assert(strstr(w.why, "index"), "%s", w.why);
    free(b.p);
}

/* ---- files --------------------------------------------------------------------------------- */
static void write_temp(const blob *b, char path[64])
{
    snprintf(path, 64, "/tmp/kiln_blob_test_XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, b->p, b->n), (ssize_t)b->n);
    close(fd);
}

Test(blob_file, opens_maps_and_closes)
{
    blob b = sample();
    char path[64];
    write_temp(&b, path);
    counting_alloc ca = {-1, 0, 0};
    kiln_allocator a = counting_allocator(&ca);
    kiln_blob_file f;
    kiln_diag d;
    cr_assert_eq(kiln_blob_open_file(path, 0, &a, &f, &d), KILN_OK, "%s", d.message);
    cr_assert_not_null(f.blob);
    cr_assert_eq(f.size, b.n);
    cr_assert_eq((uintptr_t)f.blob % 64, 0);
    blob mapped = {(unsigned char *)(uintptr_t)f.blob, f.size};
    walk_ok(f.blob, &mapped);
    cr_assert_eq(kiln_blob_find(f.blob, KILN_SECTION_MODELS, "hero"), 0);
    kiln_blob_close_file(&f);
    cr_assert_null(f.memory);
    cr_assert_eq(ca.live, 0);
    kiln_blob_close_file(&f); /* zeroed: safe */
    unlink(path);
    free(b.p);
}

Test(blob_file, failures_leave_nothing_open)
{
    kiln_blob_file f;
    kiln_diag d;
    cr_assert_eq(kiln_blob_open_file("/nonexistent/kiln.blob", 0, NULL, &f, &d), KILN_ERR_IO);
    cr_assert_null(f.memory);
    cr_assert_null(f.blob);
    cr_assert(strstr(d.message, "/nonexistent/kiln.blob"));

    blob b = sample();
    b.p[b.n / 2] ^= 0x10;
    char path[64];
    write_temp(&b, path);
    cr_assert_eq(kiln_blob_open_file(path, 0, NULL, &f, &d), KILN_ERR_BLOB_CHECKSUM, "%s", d.message);
    cr_assert_null(f.memory);
    cr_assert_eq(kiln_blob_open_file(path, KILN_BLOB_LOAD_NO_CRC, NULL, &f, &d) == KILN_OK, f.blob != NULL);
    kiln_blob_close_file(&f);
    unlink(path);

    blob empty = {b.p, 0};
    write_temp(&empty, path);
    cr_assert_eq(kiln_blob_open_file(path, 0, NULL, &f, &d), KILN_ERR_BLOB_TRUNCATED, "%s", d.message);
    cr_assert_null(f.memory);
    unlink(path);
    free(b.p);
}
