/* Writer behaviour against bytes assembled by hand from the format reference, plus
 * parse -> write round trips of the bundled samples and the shared corpus. */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kiln/bake/cast.h"
#include "kiln/bake/cast_write.h"
#include "test_util.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | rd16(p + 2) << 16; }

/* The writer's output in a malloc'ed buffer; asserts that size() and write() agree. */
static uint8_t *write_all(const kiln_cast_writer *w, size_t *size)
{
    uint64_t n = kiln_cast_writer_size(w);
    cr_assert_gt(n, 0, "writer reports size 0");
    uint8_t *buf = malloc((size_t)n);
    cr_assert_not_null(buf);
    cr_assert_eq(kiln_cast_writer_write(w, buf, n), KILN_OK);
    *size = (size_t)n;
    return buf;
}

static uint32_t total_props(const kiln_cast_doc *doc)
{
    uint32_t count = 0;
    for (uint32_t i = 0; i < kiln_cast_node_count(doc); i++) count += kiln_cast_node_at(doc, i)->prop_count;
    return count;
}

/* Names in `dir` (not . and ..), for "nothing was left behind" checks. */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) count += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return count;
}

static void make_temp_dir(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/kiln-cast-write-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

/* Root(1) > Model(2, n="m") > Mesh(3, vp = 3 x v3, f = {0,1,2}), built through the writer. */
static kiln_cast_writer *triangle_writer(const kiln_allocator *alloc)
{
    static const float vp[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    static const uint32_t f[3] = {0, 1, 2};
    kiln_cast_writer *w = kiln_cast_writer_create(alloc);
    if (!w) return NULL;
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    kiln_cast_writer_string(w, model, "n", "m");
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 3);
    kiln_cast_writer_floats(w, mesh, "vp", KILN_CAST_TYPE_VEC3, vp, 3);
    kiln_cast_writer_ints(w, mesh, "f", f, 3);
    return w;
}

#define U32(v) (uint8_t)((v) & 0xFF), (uint8_t)(((v) >> 8) & 0xFF), (uint8_t)(((v) >> 16) & 0xFF), (uint8_t)((v) >> 24)
#define U64(v) U32(v), 0, 0, 0, 0
#define F1 0x00, 0x00, 0x80, 0x3F /* 1.0f */
#define F0 0x00, 0x00, 0x00, 0x00

/* Mesh = 24 + (8+2+36) + (8+1+3) = 82; Model = 24 + (8+1+2) + 82 = 117; Root = 24 + 117 = 141;
 * file = 16 + 141 = 157 (Root NodeSize = file size - 16). */
static const uint8_t triangle_bytes[] = {
    'c', 'a', 's', 't', U32(1), U32(1), U32(0),                    /* magic, version, roots, flags */
    'r', 'o', 'o', 't', U32(141), U64(1), U32(0), U32(1),          /* Root */
    'm', 'o', 'd', 'l', U32(117), U64(2), U32(1), U32(1),          /* Model */
    0x73, 0x00, 0x01, 0x00, U32(1), 'n', 'm', 0x00,                /*   n = "m" */
    'm', 'e', 's', 'h', U32(82), U64(3), U32(2), U32(0),           /* Mesh */
    0x33, 0x76, 0x02, 0x00, U32(3), 'v', 'p',                      /*   vp: "3v", 3 elements */
    F0, F0, F0, F1, F0, F0, F0, F1, F0,
    0x62, 0x00, 0x01, 0x00, U32(3), 'f', 0x00, 0x01, 0x02,         /*   f: 'b', 3 elements */
};

/* ---- exact bytes ------------------------------------------------------------------------ */

Test(cast_write, writes_triangle_byte_for_byte)
{
    kiln_cast_writer *w = triangle_writer(NULL);
    cr_assert_eq(kiln_cast_writer_size(w), sizeof triangle_bytes);
    size_t size;
    uint8_t *out = write_all(w, &size);
    for (size_t i = 0; i < size; i++) {
        cr_assert_eq(out[i], triangle_bytes[i], "byte %zu: 0x%02X, expected 0x%02X", i, out[i], triangle_bytes[i]);
    }
    free(out);
    kiln_cast_writer_destroy(w);
}

Test(cast_write, picks_smallest_int_type)
{
    static const struct { uint32_t max; uint16_t type; uint32_t esize; } cases[] = {
        {0, KILN_CAST_TYPE_BYTE, 1},         {255, KILN_CAST_TYPE_BYTE, 1},
        {256, KILN_CAST_TYPE_SHORT, 2},      {65535, KILN_CAST_TYPE_SHORT, 2},
        {65536, KILN_CAST_TYPE_INT, 4},      {0xFFFFFFFFu, KILN_CAST_TYPE_INT, 4},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const uint32_t values[3] = {7, cases[c].max, 1}; /* the maximum is not the last value */
        kiln_cast_writer *w = kiln_cast_writer_create(NULL);
        uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 0);
        cr_assert_eq(kiln_cast_writer_ints(w, root, "f", values, 3), KILN_OK);
        size_t size;
        uint8_t *out = write_all(w, &size);
        uint32_t esize = cases[c].esize;
        cr_assert_eq(size, 16 + 24 + 8 + 1 + 3 * esize, "max %u", cases[c].max);
        const uint8_t *prop = out + 16 + 24;
        cr_expect_eq(rd16(prop), cases[c].type, "max %u: type 0x%04X", cases[c].max, rd16(prop));
        cr_expect_eq(rd16(prop + 2), 1);
        cr_expect_eq(rd32(prop + 4), 3);
        for (uint32_t i = 0; i < 3; i++) {
            uint32_t v = 0;
            for (uint32_t b = 0; b < esize; b++) v |= (uint32_t)prop[9 + i * esize + b] << (8 * b);
            cr_expect_eq(v, values[i] & (esize == 4 ? 0xFFFFFFFFu : (1u << (8 * esize)) - 1), "max %u", cases[c].max);
        }
        free(out);
        kiln_cast_writer_destroy(w);
    }
}

Test(cast_write, nested_node_sizes_include_headers_and_descendants)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 0);
    uint32_t a = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 1);
    kiln_cast_writer_byte(w, a, "x", 9);
    uint32_t b = kiln_cast_writer_node(w, a, KILN_CAST_ID_SKELETON, 2);
    uint32_t c = kiln_cast_writer_node(w, b, KILN_CAST_ID_BONE, 3);
    kiln_cast_writer_string(w, c, "s", "hello");
    kiln_cast_writer_node(w, root, KILN_CAST_ID_METADATA, 4);   /* D: a later sibling of A */
    kiln_cast_writer_node(w, a, KILN_CAST_ID_MESH, 5);          /* E: added last, still A's child */

    /* C = 24+15 = 39, B = 24+39 = 63, E = 24, A = 24+10+63+24 = 121, D = 24, Root = 24+121+24 = 169 */
    static const struct { size_t at; uint32_t id, size, props, children; } expect[] = {
        {16, KILN_CAST_ID_ROOT, 169, 0, 2},     {40, KILN_CAST_ID_MODEL, 121, 1, 2},
        {74, KILN_CAST_ID_SKELETON, 63, 0, 1},  {98, KILN_CAST_ID_BONE, 39, 1, 0},
        {137, KILN_CAST_ID_MESH, 24, 0, 0},     {161, KILN_CAST_ID_METADATA, 24, 0, 0},
    };
    size_t size;
    uint8_t *out = write_all(w, &size);
    cr_assert_eq(size, 185);
    cr_expect_eq(rd32(out + 8), 1, "one top-level node");
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        const uint8_t *n = out + expect[i].at;
        cr_expect_eq(rd32(n), expect[i].id, "node at %zu", expect[i].at);
        cr_expect_eq(rd32(n + 4), expect[i].size, "NodeSize at %zu: %u", expect[i].at, rd32(n + 4));
        cr_expect_eq(rd32(n + 16), expect[i].props, "props at %zu", expect[i].at);
        cr_expect_eq(rd32(n + 20), expect[i].children, "children at %zu", expect[i].at);
    }
    /* C's string: 's', name "s", ArrayLength 1, payload "hello\0" */
    static const uint8_t str[] = {0x73, 0x00, 0x01, 0x00, 1, 0, 0, 0, 's', 'h', 'e', 'l', 'l', 'o', 0};
    cr_expect_eq(memcmp(out + 122, str, sizeof str), 0);
    free(out);
    kiln_cast_writer_destroy(w);
}

Test(cast_write, writes_scalars_little_endian)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, 0x04030201u, 0x1112131415161718ull);
    kiln_cast_writer_u64(w, root, "l", 0x0102030405060708ull);
    const uint16_t h = 0xA1B2;
    kiln_cast_writer_prop(w, root, "h", KILN_CAST_TYPE_SHORT, &h, 1);
    size_t size;
    uint8_t *out = write_all(w, &size);
    static const uint8_t expect[] = {
        0x01, 0x02, 0x03, 0x04, U32(24 + 17 + 11), 0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, U32(2), U32(0),
        0x6C, 0x00, 0x01, 0x00, U32(1), 'l', 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
        0x68, 0x00, 0x01, 0x00, U32(1), 'h', 0xB2, 0xA1,
    };
    cr_assert_eq(size, 16 + sizeof expect);
    cr_expect_eq(memcmp(out + 16, expect, sizeof expect), 0);
    free(out);
    kiln_cast_writer_destroy(w);
}

Test(cast_write, string_payload_is_strlen_plus_one_with_count_as_given)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 0);
    cr_assert_eq(kiln_cast_writer_prop(w, root, "n", KILN_CAST_TYPE_STRING, "abc", 1), KILN_OK);
    cr_assert_eq(kiln_cast_writer_prop(w, root, "e", KILN_CAST_TYPE_STRING, "", 1), KILN_OK);
    size_t size;
    uint8_t *out = write_all(w, &size);
    static const uint8_t expect[] = {
        0x73, 0x00, 0x01, 0x00, U32(1), 'n', 'a', 'b', 'c', 0x00,
        0x73, 0x00, 0x01, 0x00, U32(1), 'e', 0x00,
    };
    cr_assert_eq(size, 16 + 24 + sizeof expect);
    cr_expect_eq(memcmp(out + 40, expect, sizeof expect), 0);
    free(out);
    kiln_cast_writer_destroy(w);
}

Test(cast_write, size_matches_bytes_written_and_small_buffer_is_refused)
{
    kiln_cast_writer *w = triangle_writer(NULL);
    uint64_t n = kiln_cast_writer_size(w);
    uint8_t *buf = malloc((size_t)n + 8);
    memset(buf, 0xEE, (size_t)n + 8);
    cr_expect_eq(kiln_cast_writer_write(w, buf, n - 1), KILN_ERR_BUFFER_TOO_SMALL);
    cr_expect_eq(buf[0], 0xEE, "nothing written into a short buffer");
    cr_expect_eq(kiln_cast_writer_write(w, buf, n + 8), KILN_OK);
    cr_expect_eq(memcmp(buf, triangle_bytes, sizeof triangle_bytes), 0);
    for (size_t i = (size_t)n; i < (size_t)n + 8; i++) cr_expect_eq(buf[i], 0xEE, "byte %zu past the end written", i);
    cr_expect_eq(kiln_cast_writer_size(w), n, "size is stable after writing");
    free(buf);
    kiln_cast_writer_destroy(w);
}

Test(cast_write, writes_several_top_level_nodes_and_counts_them)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 2);
    size_t size;
    uint8_t *out = write_all(w, &size);
    cr_assert_eq(size, 16 + 48);
    cr_expect_eq(rd32(out + 8), 2);
    cr_expect_eq(out[16 + 8], 1);
    cr_expect_eq(out[40 + 8], 2);
    free(out);
    kiln_cast_writer_destroy(w);
}

/* ---- raw nodes -------------------------------------------------------------------------- */

static const uint8_t unknown_node[30] = {
    'U', 'K', 'N', 'K', U32(30), U64(7), U32(0), U32(0), 1, 2, 3, 4, 5, 6,
};

Test(cast_write, raw_node_is_copied_verbatim_and_counted)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 0);
    cr_assert_eq(kiln_cast_writer_raw(w, root, unknown_node, sizeof unknown_node), KILN_OK);
    kiln_cast_writer_node(w, root, KILN_CAST_ID_METADATA, 9);
    size_t size;
    uint8_t *out = write_all(w, &size);
    cr_assert_eq(size, 16 + 24 + 30 + 24);
    cr_expect_eq(rd32(out + 16 + 4), 24 + 30 + 24);
    cr_expect_eq(rd32(out + 16 + 20), 2);
    cr_expect_eq(memcmp(out + 40, unknown_node, sizeof unknown_node), 0);
    cr_expect_eq(rd32(out + 70), KILN_CAST_ID_METADATA);
    free(out);
    kiln_cast_writer_destroy(w);
}

Test(cast_write, raw_node_with_mismatched_size_is_rejected)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 0);
    cr_expect_eq(kiln_cast_writer_raw(w, root, unknown_node, sizeof unknown_node - 1), KILN_ERR_INVALID_ARGUMENT);
    kiln_cast_writer_destroy(w);

    w = kiln_cast_writer_create(NULL);
    root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 0);
    cr_expect_eq(kiln_cast_writer_raw(w, root, unknown_node, 20), KILN_ERR_INVALID_ARGUMENT, "below a node header");
    kiln_cast_writer_destroy(w);
}

Test(cast_write, raw_node_cannot_take_children_or_properties)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 0);
    kiln_cast_writer_raw(w, root, unknown_node, sizeof unknown_node);
    cr_expect_eq(kiln_cast_writer_node(w, root + 1, KILN_CAST_ID_MESH, 0), KILN_CAST_NONE);
    cr_expect_eq(kiln_cast_writer_byte(w, root, "x", 1), KILN_ERR_INVALID_ARGUMENT, "the error is sticky");
    kiln_cast_writer_destroy(w);
}

/* ---- errors ----------------------------------------------------------------------------- */

Test(cast_write, errors_are_sticky)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 0);
    cr_assert_eq(kiln_cast_writer_string(w, 42, "n", "no such node"), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_cast_writer_string(w, root, "n", "fine"), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 1), KILN_CAST_NONE);
    cr_expect_eq(kiln_cast_writer_size(w), 0);
    uint8_t buf[256];
    cr_expect_eq(kiln_cast_writer_write(w, buf, sizeof buf), KILN_ERR_INVALID_ARGUMENT);
    kiln_cast_writer_destroy(w);
}

Test(cast_write, rejects_unknown_types_and_float_helpers_misuse)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 0);
    uint8_t x = 0;
    cr_expect_eq(kiln_cast_writer_prop(w, root, "z", 0x7A7A, &x, 1), KILN_ERR_INVALID_ARGUMENT);
    kiln_cast_writer_destroy(w);

    w = kiln_cast_writer_create(NULL);
    root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 0);
    float f = 1;
    cr_expect_eq(kiln_cast_writer_floats(w, root, "d", KILN_CAST_TYPE_DOUBLE, &f, 1), KILN_ERR_INVALID_ARGUMENT);
    kiln_cast_writer_destroy(w);
}

Test(cast_write, property_over_4gib_is_a_limit_error)
{
    static const uint8_t dummy[16];
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 0);
    /* 2^28 elements of 16 bytes = 2^32 bytes: one past the u32 range. Referenced, never read. */
    cr_expect_eq(kiln_cast_writer_prop_ref(w, root, "vp", KILN_CAST_TYPE_VEC4, dummy, 1u << 28), KILN_ERR_LIMIT);
    cr_expect_eq(kiln_cast_writer_size(w), 0);
    kiln_cast_writer_destroy(w);
}

Test(cast_write, node_over_4gib_is_a_limit_error)
{
    static const uint8_t dummy[16];
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 0);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 0);
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 0);
    /* Two 2 GiB arrays: each fits, the node (and its ancestors) would not. */
    cr_expect_eq(kiln_cast_writer_prop_ref(w, mesh, "a", KILN_CAST_TYPE_VEC4, dummy, 1u << 27), KILN_OK);
    cr_expect_eq(kiln_cast_writer_size(w), 16 + 3 * 24 + 8 + 1 + (1ull << 31));
    cr_expect_eq(kiln_cast_writer_prop_ref(w, mesh, "b", KILN_CAST_TYPE_VEC4, dummy, 1u << 27), KILN_ERR_LIMIT);
    cr_expect_eq(kiln_cast_writer_size(w), 0);
    cr_expect_eq(kiln_cast_writer_byte(w, root, "x", 0), KILN_ERR_LIMIT);
    kiln_cast_writer_destroy(w);
}

Test(cast_write, file_larger_than_4gib_is_sized_in_64_bits)
{
    static const uint8_t dummy[16];
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    for (int r = 0; r < 3; r++) {
        uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 0);
        cr_assert_eq(kiln_cast_writer_prop_ref(w, root, "a", KILN_CAST_TYPE_VEC4, dummy, 1u << 27), KILN_OK);
    }
    cr_expect_eq(kiln_cast_writer_size(w), 16 + 3 * (24 + 8 + 1 + (1ull << 31)));
    kiln_cast_writer_destroy(w);
}

/* ---- save ------------------------------------------------------------------------------- */

Test(cast_write, save_writes_the_same_bytes_and_replaces_an_existing_file)
{
    char dir[64], path[128];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/tri.cast", dir);
    FILE *old = fopen(path, "wb");
    fputs("old contents that are longer than the new file would be, to catch a missing truncate......"
          "................................................................................", old);
    fclose(old);

    kiln_cast_writer *w = triangle_writer(NULL);
    kiln_diag err;
    cr_assert_eq(kiln_cast_writer_save(w, path, &err), KILN_OK, "%s", err.message);
    file_bytes f;
    cr_assert(read_file(path, &f));
    cr_expect_eq(f.size, sizeof triangle_bytes);
    cr_expect_eq(memcmp(f.data, triangle_bytes, sizeof triangle_bytes), 0);
    cr_expect_eq(dir_entries(dir), 1, "the temporary file is gone");
    file_bytes_free(&f);
    kiln_cast_writer_destroy(w);
    unlink(path);
    rmdir(dir);
}

Test(cast_write, save_into_missing_directory_fails_with_io_and_leaves_nothing)
{
    char dir[64], path[160];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/missing/out.cast", dir);
    kiln_cast_writer *w = triangle_writer(NULL);
    kiln_diag err;
    cr_assert_eq(kiln_cast_writer_save(w, path, &err), KILN_ERR_IO);
    cr_expect_eq(err.code, KILN_ERR_IO);
    cr_expect_not_null(strstr(err.message, path), "message names the path: %s", err.message);
    cr_expect_not_null(strstr(err.message, strerror(ENOENT)), "message gives the reason: %s", err.message);
    cr_expect_eq(dir_entries(dir), 0);
    cr_expect_eq(kiln_cast_writer_save(w, path, NULL), KILN_ERR_IO, "err may be NULL");
    kiln_cast_writer_destroy(w);
    rmdir(dir);
}

Test(cast_write, save_that_fails_at_rename_removes_its_temporary_file)
{
    char dir[64], path[128];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/target", dir);
    cr_assert_eq(mkdir(path, 0700), 0); /* a directory where the file should go: rename fails */
    kiln_cast_writer *w = triangle_writer(NULL);
    kiln_diag err;
    cr_expect_eq(kiln_cast_writer_save(w, path, &err), KILN_ERR_IO);
    cr_expect_not_null(strstr(err.message, path), "%s", err.message);
    cr_expect_eq(dir_entries(dir), 1, "only the directory is left");
    cr_expect_eq(dir_entries(path), 0);
    kiln_cast_writer_destroy(w);
    rmdir(path);
    rmdir(dir);
}

Test(cast_write, save_of_a_failed_writer_reports_its_error_and_writes_nothing)
{
    char dir[64], path[128];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/never.cast", dir);
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    kiln_cast_writer_byte(w, 5, "x", 1);
    kiln_diag err;
    cr_expect_eq(kiln_cast_writer_save(w, path, &err), KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(err.code, KILN_ERR_INVALID_ARGUMENT);
    cr_expect_eq(dir_entries(dir), 0);
    kiln_cast_writer_destroy(w);
    rmdir(dir);
}

/* ---- allocation failure ----------------------------------------------------------------- */

/* Everything the writer allocates for: the writer, node/property tables, arena growth (copied
 * payloads and names), add_doc, and the temporary name of save. */
static kiln_result build_under(const kiln_allocator *alloc, const kiln_cast_doc *doc, const char *path,
                               uint8_t *out, size_t cap, int *created)
{
    static float big[3 * 300];
    static uint32_t idx[900];
    for (int i = 0; i < 900; i++) { big[i] = (float)i; idx[i] = (uint32_t)i * 70; }
    kiln_cast_writer *w = kiln_cast_writer_create(alloc);
    *created = w != NULL;
    if (!w) return KILN_ERR_OUT_OF_MEMORY;
    kiln_result first = KILN_OK;
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    for (uint32_t m = 0; m < 20; m++) {
        uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, m);
        kiln_result r = kiln_cast_writer_string(w, model, "n", "a model name long enough to grow the arena");
        if (first == KILN_OK) first = r;
        r = kiln_cast_writer_floats(w, model, "vp", KILN_CAST_TYPE_VEC3, big, 300);
        if (first == KILN_OK) first = r;
        r = kiln_cast_writer_ints(w, model, "f", idx, 900);
        if (first == KILN_OK) first = r;
    }
    kiln_result r = kiln_cast_writer_add_doc(w, doc);
    if (first == KILN_OK) first = r;
    if (first != KILN_OK) {
        cr_expect_eq(r, first, "add_doc returns the sticky error");
        cr_expect_eq(kiln_cast_writer_size(w), 0);
    }
    r = kiln_cast_writer_save(w, path, NULL);
    if (r == KILN_OK) r = kiln_cast_writer_write(w, out, cap);
    kiln_cast_writer_destroy(w);
    return first != KILN_OK ? first : r;
}

Test(cast_write, allocation_failures_are_reported_and_leak_nothing)
{
    char dir[64], path[128];
    make_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/oom.cast", dir);
    kiln_cast_doc *doc;
    cr_assert_eq(kiln_cast_parse(triangle_bytes, sizeof triangle_bytes, NULL, &doc, NULL), KILN_OK);
    static uint8_t reference[1 << 20], out[1 << 20];
    int created;
    cr_assert_eq(build_under(NULL, doc, path, reference, sizeof reference, &created), KILN_OK);
    unlink(path);

    int succeeded = 0;
    for (int n = 0; n < 10000 && !succeeded; n++) {
        counting_alloc ca = {n, 0, 0};
        kiln_allocator a = counting_allocator(&ca);
        kiln_result r = build_under(&a, doc, path, out, sizeof out, &created);
        cr_assert_eq(ca.live, 0, "fail at allocation %d: %d blocks leaked", n, ca.live);
        if (ca.calls <= n) {
            cr_assert_eq(r, KILN_OK, "no allocation failed, yet %s", kiln_result_name(r));
            cr_expect_eq(memcmp(out, reference, sizeof out), 0);
            succeeded = 1;
        } else {
            cr_assert_eq(r, KILN_ERR_OUT_OF_MEMORY, "fail at allocation %d gave %s", n, kiln_result_name(r));
            cr_assert_eq(dir_entries(dir), 0, "fail at allocation %d left a file", n);
        }
    }
    cr_expect(succeeded, "the build never succeeded");
    kiln_cast_free(doc);
    unlink(path);
    rmdir(dir);
}

/* ---- round trips ------------------------------------------------------------------------ */

/* parse -> add_doc -> write gives the input back, and the copy parses to the same tree. */
static void expect_round_trip(const char *label, const uint8_t *data, size_t size)
{
    kiln_cast_doc *doc;
    kiln_diag err;
    kiln_result r = kiln_cast_parse(data, size, NULL, &doc, &err);
    cr_assert_eq(r, KILN_OK, "%s: %s", label, err.message);
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    cr_assert_eq(kiln_cast_writer_add_doc(w, doc), KILN_OK, "%s", label);
    cr_assert_eq(kiln_cast_writer_size(w), size, "%s: size %llu, input %zu", label,
                 (unsigned long long)kiln_cast_writer_size(w), size);
    uint8_t *out = malloc(size);
    cr_assert_eq(kiln_cast_writer_write(w, out, size), KILN_OK);
    size_t first_diff = size;
    for (size_t i = 0; i < size && first_diff == size; i++) if (out[i] != data[i]) first_diff = i;
    cr_expect_eq(first_diff, size, "%s: first difference at byte %zu", label, first_diff);

    kiln_cast_doc *again;
    cr_assert_eq(kiln_cast_parse(out, size, NULL, &again, &err), KILN_OK, "%s: %s", label, err.message);
    cr_expect_eq(kiln_cast_node_count(again), kiln_cast_node_count(doc), "%s", label);
    cr_expect_eq(total_props(again), total_props(doc), "%s", label);
    kiln_cast_free(again);
    free(out);
    kiln_cast_writer_destroy(w);
    kiln_cast_free(doc);
}

Test(cast_write, round_trips_triangle)
{
    expect_round_trip("triangle", triangle_bytes, sizeof triangle_bytes);
}

Test(cast_write, round_trips_unknown_nodes_verbatim)
{
    kiln_cast_writer *w = triangle_writer(NULL);
    kiln_cast_writer_raw(w, 0, unknown_node, sizeof unknown_node);   /* inside the Root */
    kiln_cast_writer_raw(w, KILN_CAST_NONE, unknown_node, sizeof unknown_node); /* at top level */
    size_t size;
    uint8_t *bytes = write_all(w, &size);
    expect_round_trip("unknown nodes", bytes, size);
    free(bytes);
    kiln_cast_writer_destroy(w);
}

static void samples_dir(char *dir, size_t cap)
{
#ifdef KILN_SOURCE_DIR
    snprintf(dir, cap, "%s/samples", KILN_SOURCE_DIR);
#else
    const char *src = getenv("KILN_SOURCE_DIR");
    snprintf(dir, cap, "%s/samples", src && src[0] ? src : ".");
#endif
}

Test(cast_write, round_trips_bundled_samples_and_they_parse_cleanly)
{
    static const char *const names[] = {"character.cast", "character_walk.cast", "world.cast"};
    char dir[1024];
    samples_dir(dir, sizeof dir);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        file_bytes f;
        cr_assert(read_file(path, &f), "cannot read %s", path);
        diag_log log = {0};
        kiln_cast_parse_options o;
        memset(&o, 0, sizeof o);
        o.diag.fn = diag_log_push;
        o.diag.user = &log;
        kiln_cast_doc *doc;
        cr_assert_eq(kiln_cast_parse(f.data, f.size, &o, &doc, NULL), KILN_OK, "%s", names[i]);
        cr_expect_eq(log.count, 0, "%s: %d diagnostics, first: %s", names[i], log.count,
                     log.count ? log.items[0].message : "");
        kiln_cast_free(doc);
        expect_round_trip(names[i], f.data, f.size);
        file_bytes_free(&f);
    }
}

Test(cast_write, round_trips_every_corpus_file_byte_for_byte, .timeout = 600)
{
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip("corpus not found at %s: skipping", dir);
    char **names = NULL;
    size_t count = corpus_list(dir, &names);
    cr_assert_gt(count, 0, "no .cast files in %s", dir);
    for (size_t i = 0; i < count; i++) {
        file_bytes f;
        cr_assert(corpus_read(dir, names[i], &f), "cannot read %s", names[i]);
        expect_round_trip(names[i], f.data, f.size);
        file_bytes_free(&f);
    }
    corpus_list_free(names, count);
}

Test(cast_write, round_trips_corpus_files_with_skipped_nodes)
{
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip("corpus not found at %s: skipping", dir);
    static const char *const names[] = {"bad/unknown_node_skip.cast", "bad/unknown_prop_type.cast",
                                        "bad/zero_length_arrays.cast"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        file_bytes f;
        cr_assert(corpus_read(dir, names[i], &f), "cannot read %s", names[i]);
        expect_round_trip(names[i], f.data, f.size);
        file_bytes_free(&f);
    }
}
