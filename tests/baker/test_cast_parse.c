/* Parser behaviour on hand-assembled bytes (independent of the writer) and on the shared
 * corpus when it is present. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/bake/cast.h"
#include "test_util.h"

/* ---- a tiny byte assembler: nodes are opened and closed, sizes patched on close ---------- */
typedef struct bytes {
    uint8_t data[4096];
    size_t  len;
    size_t  open[256];
    int     depth;
    size_t  starts[256]; /* offset of every node opened, in order */
    int     nodes;
} bytes;

static void put(bytes *b, const void *p, size_t n) { memcpy(b->data + b->len, p, n); b->len += n; }
static void put8(bytes *b, uint8_t v) { put(b, &v, 1); }
static void put16(bytes *b, uint16_t v) { put8(b, (uint8_t)v); put8(b, (uint8_t)(v >> 8)); }
static void put32(bytes *b, uint32_t v) { put16(b, (uint16_t)v); put16(b, (uint16_t)(v >> 16)); }
static void put64(bytes *b, uint64_t v) { put32(b, (uint32_t)v); put32(b, (uint32_t)(v >> 32)); }
static void patch32(bytes *b, size_t at, uint32_t v)
{
    for (int i = 0; i < 4; i++) b->data[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void header(bytes *b, uint32_t roots) { put32(b, KILN_CAST_MAGIC); put32(b, 1); put32(b, roots); put32(b, 0); }
static void open_node(bytes *b, uint32_t id, uint64_t hash, uint32_t props, uint32_t children)
{
    b->starts[b->nodes++] = b->len;
    b->open[b->depth++] = b->len;
    put32(b, id); put32(b, 0); put64(b, hash); put32(b, props); put32(b, children);
}
static void close_node(bytes *b)
{
    size_t at = b->open[--b->depth];
    patch32(b, at + 4, (uint32_t)(b->len - at));
}
static void prop(bytes *b, uint16_t type, const char *name, uint32_t count, const void *payload, size_t n)
{
    put16(b, type); put16(b, (uint16_t)strlen(name)); put32(b, count);
    put(b, name, strlen(name));
    put(b, payload, n);
}
static void prop_str(bytes *b, const char *name, const char *s) { prop(b, KILN_CAST_TYPE_STRING, name, 1, s, strlen(s) + 1); }

/* Root > Model(n="m") > Mesh(vp: 3 x v3, f: 3 x b) : a triangle. */
static void triangle(bytes *b)
{
    static const float vp[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    static const uint8_t f[3] = {0, 1, 2};
    header(b, 1);
    open_node(b, KILN_CAST_ID_ROOT, 1, 0, 1);
    open_node(b, KILN_CAST_ID_MODEL, 2, 1, 1);
    prop_str(b, "n", "m");
    open_node(b, KILN_CAST_ID_MESH, 3, 2, 0);
    prop(b, KILN_CAST_TYPE_VEC3, "vp", 3, vp, sizeof vp);
    prop(b, KILN_CAST_TYPE_BYTE, "f", 3, f, sizeof f);
    close_node(b);
    close_node(b);
    close_node(b);
}

static kiln_result parse(const bytes *b, kiln_cast_doc **doc, kiln_diag *err, diag_log *log)
{
    kiln_cast_parse_options o;
    memset(&o, 0, sizeof o);
    if (log) { o.diag.fn = diag_log_push; o.diag.user = log; }
    return kiln_cast_parse(b->data, b->len, &o, doc, err);
}

static kiln_result parse_expect_fail(const bytes *b, kiln_diag *err)
{
    kiln_cast_doc *doc = (kiln_cast_doc *)1;
    kiln_result r = parse(b, &doc, err, NULL);
    cr_assert_neq(r, KILN_OK);
    cr_assert_null(doc, "a failed parse leaves no document");
    cr_assert_eq(err->code, r);
    cr_assert(strlen(err->message) > 0);
    return r;
}

Test(cast_parse, reads_triangle_tree)
{
    bytes b = {0};
    triangle(&b);
    kiln_cast_doc *doc;
    kiln_diag err;
    cr_assert_eq(parse(&b, &doc, &err, NULL), KILN_OK, "%s", err.message);
    cr_assert_eq(kiln_cast_node_count(doc), 3);
    cr_assert_eq(kiln_cast_root_count(doc), 1);
    const kiln_cast_node *root = kiln_cast_node_at(doc, 0), *model = kiln_cast_node_at(doc, 1), *mesh = kiln_cast_node_at(doc, 2);
    cr_assert_eq(root->id, KILN_CAST_ID_ROOT);
    cr_assert_eq(root->size, b.len - 16, "Root NodeSize of a single-root file is file size - 16");
    cr_assert_eq(model->parent, 0);
    cr_assert_eq(mesh->parent, 1);
    cr_assert_eq(mesh->depth, 2);
    cr_assert_eq(root->first_child, 1);
    cr_assert_eq(model->first_child, 2);
    cr_assert_eq(mesh->first_child, KILN_CAST_NONE);
    cr_assert_eq(mesh->prop_count, 2);
    const kiln_cast_prop *vp = kiln_cast_find_prop(doc, 2, "vp", NULL);
    cr_assert_not_null(vp);
    cr_assert_eq(vp->count, 3);
    cr_assert_eq(vp->bytes, 36);
    float v[3];
    kiln_cast_prop_vec(vp, 1, 3, v);
    cr_assert(v[0] == 1.0f && v[1] == 0.0f && v[2] == 0.0f);
    const kiln_cast_prop *f = kiln_cast_find_prop(doc, 2, "f", NULL);
    cr_assert_eq(kiln_cast_prop_u64(f, 2), 2);
    cr_assert_str_eq(kiln_cast_prop_str(kiln_cast_find_prop(doc, 1, "n", NULL)), "m");
    cr_assert_null(kiln_cast_find_prop(doc, 2, "vn", NULL));
    char path[128];
    cr_assert_str_eq(kiln_cast_node_path(doc, 2, path, sizeof path), "Root[0]/Model[0]/Mesh[0]");
    kiln_cast_free(doc);
}

Test(cast_parse, rejects_every_short_header)
{
    bytes b = {0};
    triangle(&b);
    for (size_t n = 0; n < KILN_CAST_HEADER_SIZE; n++) {
        kiln_cast_doc *doc;
        kiln_diag err;
        cr_assert_eq(kiln_cast_parse(b.data, n, NULL, &doc, &err), KILN_ERR_CAST_TRUNCATED_HEADER, "size %zu", n);
        cr_assert_null(doc);
    }
}

Test(cast_parse, rejects_bad_magic)
{
    bytes b = {0};
    triangle(&b);
    b.data[0] = 'b';
    kiln_diag err;
    cr_assert_eq(parse_expect_fail(&b, &err), KILN_ERR_CAST_BAD_MAGIC);
    cr_assert_eq(err.offset, 0);
}

Test(cast_parse, rejects_every_truncation)
{
    bytes b = {0};
    triangle(&b);
    for (size_t n = KILN_CAST_HEADER_SIZE; n < b.len; n++) {
        bytes t = b;
        t.len = n;
        kiln_diag err;
        kiln_result r = parse_expect_fail(&t, &err);
        cr_assert(r == KILN_ERR_CAST_TRUNCATED || r == KILN_ERR_CAST_ROOT_COUNT, "size %zu gave %s", n, kiln_result_name(r));
    }
}

Test(cast_parse, survives_every_byte_flip)
{
    bytes b = {0};
    triangle(&b);
    for (size_t i = 0; i < b.len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            bytes t = b;
            t.data[i] ^= (uint8_t)(1u << bit);
            kiln_cast_doc *doc = NULL;
            kiln_diag err;
            if (parse(&t, &doc, &err, NULL) == KILN_OK) {
                for (uint32_t n = 0; n < kiln_cast_node_count(doc); n++) {
                    char path[192];
                    kiln_cast_node_path(doc, n, path, sizeof path);
                }
                kiln_cast_free(doc);
            } else {
                cr_assert_null(doc);
                cr_assert(err.code != KILN_OK);
            }
        }
    }
}

Test(cast_parse, rejects_node_size_below_header)
{
    bytes b = {0};
    triangle(&b);
    size_t mesh = b.starts[2];
    patch32(&b, mesh + 4, 8);
    kiln_diag err;
    cr_assert_eq(parse_expect_fail(&b, &err), KILN_ERR_CAST_NODE_TOO_SMALL);
    cr_assert_str_eq(err.path, "Root[0]/Model[0]/Mesh[0]");
    cr_assert_eq(err.offset, mesh + 4);
}

Test(cast_parse, rejects_child_past_parent)
{
    bytes b = {0};
    triangle(&b);
    size_t mesh = b.starts[2];
    patch32(&b, mesh + 4, (uint32_t)(b.len - mesh) + 1000);
    kiln_diag err;
    cr_assert_eq(parse_expect_fail(&b, &err), KILN_ERR_CAST_NODE_OVERRUN);
}

Test(cast_parse, rejects_impossible_child_count_before_allocating)
{
    bytes b = {0};
    triangle(&b);
    patch32(&b, b.starts[2] + 20, 0xFFFFFFFFu);
    kiln_diag err;
    cr_assert_eq(parse_expect_fail(&b, &err), KILN_ERR_CAST_COUNT_IMPOSSIBLE);
}

Test(cast_parse, rejects_huge_array_without_overflow)
{
    bytes b = {0};
    header(&b, 1);
    open_node(&b, KILN_CAST_ID_ROOT, 1, 0, 1);
    open_node(&b, KILN_CAST_ID_MESH, 2, 1, 0);
    put16(&b, KILN_CAST_TYPE_VEC4); put16(&b, 2); put32(&b, 0xFFFFFFFFu); put(&b, "vp", 2);
    close_node(&b);
    close_node(&b);
    kiln_diag err;
    cr_assert_eq(parse_expect_fail(&b, &err), KILN_ERR_CAST_ARRAY_OVERRUN);
    cr_assert_str_eq(err.path, "Root[0]/Mesh[0].vp");
}

Test(cast_parse, rejects_name_past_node)
{
    bytes b = {0};
    header(&b, 1);
    open_node(&b, KILN_CAST_ID_ROOT, 1, 0, 1);
    open_node(&b, KILN_CAST_ID_MODEL, 2, 1, 0);
    put16(&b, KILN_CAST_TYPE_STRING); put16(&b, 500); put32(&b, 1); put(&b, "n\0\0\0", 4);
    close_node(&b);
    close_node(&b);
    kiln_diag err;
    cr_assert_eq(parse_expect_fail(&b, &err), KILN_ERR_CAST_NAME_OVERRUN);
}

Test(cast_parse, rejects_unterminated_string)
{
    bytes b = {0};
    header(&b, 1);
    open_node(&b, KILN_CAST_ID_ROOT, 1, 0, 1);
    open_node(&b, KILN_CAST_ID_MODEL, 2, 1, 0);
    prop(&b, KILN_CAST_TYPE_STRING, "n", 1, "abc", 3);
    close_node(&b);
    close_node(&b);
    kiln_diag err;
    cr_assert_eq(parse_expect_fail(&b, &err), KILN_ERR_CAST_STRING_UNTERMINATED);
}

Test(cast_parse, rejects_properties_shorter_than_node_size)
{
    bytes b = {0};
    header(&b, 1);
    open_node(&b, KILN_CAST_ID_ROOT, 1, 0, 1);
    open_node(&b, KILN_CAST_ID_MODEL, 2, 1, 0);
    prop_str(&b, "n", "m");
    put32(&b, 0); /* 4 bytes inside the node that no property accounts for */
    close_node(&b);
    close_node(&b);
    kiln_diag err;
    cr_assert_eq(parse_expect_fail(&b, &err), KILN_ERR_CAST_NODE_SIZE_MISMATCH);
}

Test(cast_parse, rejects_missing_roots)
{
    bytes b = {0};
    triangle(&b);
    patch32(&b, 8, 3);
    kiln_diag err;
    cr_assert_eq(parse_expect_fail(&b, &err), KILN_ERR_CAST_ROOT_COUNT);
}

Test(cast_parse, skips_unknown_node_and_keeps_siblings)
{
    bytes b = {0};
    header(&b, 1);
    open_node(&b, KILN_CAST_ID_ROOT, 1, 0, 2);
    open_node(&b, 0x4B4E4B55u, 9, 1, 1); /* unknown, with a property and a child */
    prop(&b, 0x7A7A, "zz", 1, "abcd", 4);
    open_node(&b, 0x4B4E4B56u, 10, 0, 0);
    close_node(&b);
    close_node(&b);
    open_node(&b, KILN_CAST_ID_MODEL, 2, 1, 0);
    prop_str(&b, "n", "after");
    close_node(&b);
    close_node(&b);
    kiln_cast_doc *doc;
    kiln_diag err;
    diag_log log = {0};
    cr_assert_eq(parse(&b, &doc, &err, &log), KILN_OK, "%s", err.message);
    cr_assert_eq(kiln_cast_node_count(doc), 3, "the unknown node's child is skipped with it");
    const kiln_cast_node *u = kiln_cast_node_at(doc, 1);
    cr_assert(u->flags & KILN_CAST_NODE_OPAQUE);
    cr_assert_eq(u->prop_count, 0);
    cr_assert_eq(kiln_cast_child_count(doc, 0, KILN_CAST_ID_MODEL), 1);
    cr_assert_str_eq(kiln_cast_prop_str(kiln_cast_find_prop(doc, 2, "n", NULL)), "after");
    cr_assert_eq(log.count, 1);
    cr_assert_eq(log.items[0].code, KILN_ERR_CAST_UNKNOWN_NODE);
    cr_assert_eq(log.items[0].severity, KILN_SEVERITY_WARNING);
    kiln_cast_free(doc);
}

Test(cast_parse, skips_node_with_unknown_property_type)
{
    bytes b = {0};
    header(&b, 1);
    open_node(&b, KILN_CAST_ID_ROOT, 1, 0, 2);
    open_node(&b, KILN_CAST_ID_MESH, 2, 2, 0);
    prop(&b, KILN_CAST_TYPE_BYTE, "f", 1, "\0", 1);
    prop(&b, 0x7A7A, "zz", 1, "abcd", 4);
    close_node(&b);
    open_node(&b, KILN_CAST_ID_MODEL, 3, 0, 0);
    close_node(&b);
    close_node(&b);
    kiln_cast_doc *doc;
    kiln_diag err;
    diag_log log = {0};
    cr_assert_eq(parse(&b, &doc, &err, &log), KILN_OK, "%s", err.message);
    cr_assert(kiln_cast_node_at(doc, 1)->flags & KILN_CAST_NODE_OPAQUE);
    cr_assert_eq(kiln_cast_node_at(doc, 1)->prop_count, 0, "the properties read before are discarded");
    cr_assert_eq(kiln_cast_node_at(doc, 2)->id, KILN_CAST_ID_MODEL);
    cr_assert_eq(log.count, 1);
    cr_assert_eq(log.items[0].code, KILN_ERR_CAST_UNKNOWN_PROPERTY_TYPE);
    cr_assert_eq(log.items[0].severity, KILN_SEVERITY_ERROR);
    cr_assert_str_eq(log.items[0].path, "Root[0]/Mesh[0].zz");
    kiln_cast_free(doc);
}

Test(cast_parse, warns_on_version_and_trailing_bytes)
{
    bytes b = {0};
    triangle(&b);
    patch32(&b, 4, 2);
    put32(&b, 0xDEADBEEF);
    kiln_cast_doc *doc;
    kiln_diag err;
    diag_log log = {0};
    cr_assert_eq(parse(&b, &doc, &err, &log), KILN_OK, "%s", err.message);
    cr_assert_eq(kiln_cast_version(doc), 2);
    cr_assert_eq(log.count, 2);
    cr_assert_eq(log.items[0].code, KILN_ERR_CAST_VERSION);
    cr_assert_eq(log.items[1].code, KILN_ERR_CAST_TRAILING_BYTES);
    cr_assert_eq(log.items[1].offset, b.len - 4);
    kiln_cast_free(doc);
}

Test(cast_parse, resolves_hashes_in_scope_first_match_wins)
{
    bytes b = {0};
    header(&b, 1);
    open_node(&b, KILN_CAST_ID_ROOT, 1, 0, 2);
    open_node(&b, KILN_CAST_ID_MODEL, 7, 0, 2);
    open_node(&b, KILN_CAST_ID_MATERIAL, 5, 0, 0); close_node(&b);
    open_node(&b, KILN_CAST_ID_MATERIAL, 5, 0, 0); close_node(&b);
    close_node(&b);
    open_node(&b, KILN_CAST_ID_MODEL, 5, 0, 0); close_node(&b);
    close_node(&b);
    kiln_cast_doc *doc;
    kiln_diag err;
    cr_assert_eq(parse(&b, &doc, &err, NULL), KILN_OK);
    cr_assert_eq(kiln_cast_find_hash(doc, 1, 5), 2, "first Material with hash 5 under Model 1");
    cr_assert_eq(kiln_cast_hash_count(doc, 1, 5), 2);
    cr_assert_eq(kiln_cast_find_hash(doc, 0, 5), 4, "the scope is the parent: Root's child Model");
    cr_assert_eq(kiln_cast_find_hash(doc, 0, 6), KILN_CAST_NONE);
    cr_assert_eq(kiln_cast_node_at(doc, 3)->ordinal, 1);
    cr_assert_eq(kiln_cast_node_at(doc, 4)->ordinal, 1, "second Model under the Root");
    cr_assert_eq(kiln_cast_child(doc, 1, KILN_CAST_ID_MATERIAL, 1), 3);
    kiln_cast_free(doc);
}

Test(cast_parse, duplicate_property_last_wins)
{
    bytes b = {0};
    header(&b, 1);
    open_node(&b, KILN_CAST_ID_ROOT, 1, 0, 1);
    open_node(&b, KILN_CAST_ID_MODEL, 2, 2, 0);
    prop_str(&b, "n", "first");
    prop_str(&b, "n", "second");
    close_node(&b);
    close_node(&b);
    kiln_cast_doc *doc;
    kiln_diag err;
    cr_assert_eq(parse(&b, &doc, &err, NULL), KILN_OK);
    uint32_t dups;
    cr_assert_str_eq(kiln_cast_prop_str(kiln_cast_find_prop(doc, 1, "n", &dups)), "second");
    cr_assert_eq(dups, 2);
    kiln_cast_free(doc);
}

Test(cast_parse, limits_nesting_without_recursion)
{
    static bytes b; /* ~300 nested roots */
    memset(&b, 0, sizeof b);
    header(&b, 1);
    int levels = 150;
    for (int i = 0; i < levels; i++) open_node(&b, KILN_CAST_ID_ROOT, (uint64_t)i, 0, i + 1 < levels ? 1 : 0);
    for (int i = 0; i < levels; i++) close_node(&b);
    kiln_cast_parse_options o;
    memset(&o, 0, sizeof o);
    o.max_depth = 100;
    kiln_cast_doc *doc;
    kiln_diag err;
    cr_assert_eq(kiln_cast_parse(b.data, b.len, &o, &doc, &err), KILN_ERR_LIMIT);
    o.max_depth = 200;
    cr_assert_eq(kiln_cast_parse(b.data, b.len, &o, &doc, &err), KILN_OK, "%s", err.message);
    cr_assert_eq(kiln_cast_node_at(doc, (uint32_t)levels - 1)->depth, (uint32_t)levels - 1);
    kiln_cast_free(doc);
}

Test(cast_parse, allocation_failure_is_reported_and_leaks_nothing)
{
    bytes b = {0};
    triangle(&b);
    for (int fail_at = 0; fail_at < 64; fail_at++) {
        counting_alloc ca = {0};
        ca.fail_at = fail_at;
        kiln_allocator a = counting_allocator(&ca);
        kiln_cast_parse_options o;
        memset(&o, 0, sizeof o);
        o.allocator = &a;
        kiln_cast_doc *doc;
        kiln_diag err;
        kiln_result r = kiln_cast_parse(b.data, b.len, &o, &doc, &err);
        if (r == KILN_OK) {
            kiln_cast_free(doc);
            cr_assert_eq(ca.live, 0);
            cr_assert(fail_at > 0);
            return;
        }
        cr_assert_eq(r, KILN_ERR_OUT_OF_MEMORY);
        cr_assert_null(doc);
        cr_assert_eq(ca.live, 0, "allocation %d failed: %d blocks leaked", fail_at, ca.live);
    }
    cr_assert_fail("parse never succeeded");
}

/* ---- corpus ------------------------------------------------------------------------------ */

static const struct { const char *file; kiln_result code; } bad_expectations[] = {
    {"bad/empty.cast", KILN_ERR_CAST_TRUNCATED_HEADER},
    {"bad/truncated_header.cast", KILN_ERR_CAST_TRUNCATED_HEADER},
    {"bad/wrong_magic.cast", KILN_ERR_CAST_BAD_MAGIC},
    {"bad/truncated_in_array.cast", KILN_ERR_CAST_TRUNCATED},
    {"bad/node_size_overrun.cast", KILN_ERR_CAST_NODE_OVERRUN},
    {"bad/node_size_too_small.cast", KILN_ERR_CAST_NODE_TOO_SMALL},
    {"bad/prop_array_overrun.cast", KILN_ERR_CAST_ARRAY_OVERRUN},
    {"bad/prop_array_huge.cast", KILN_ERR_CAST_ARRAY_OVERRUN},
    {"bad/child_count_huge.cast", KILN_ERR_CAST_COUNT_IMPOSSIBLE},
    {"bad/root_count_mismatch.cast", KILN_ERR_CAST_ROOT_COUNT},
    {"bad/prop_name_overrun.cast", KILN_ERR_CAST_NAME_OVERRUN},
    {"bad/string_unterminated.cast", KILN_ERR_CAST_STRING_UNTERMINATED},
    /* structurally valid: semantic checks belong to the typed accessors */
    {"bad/unknown_node_skip.cast", KILN_OK},
    {"bad/unknown_prop_type.cast", KILN_OK},
    {"bad/zero_length_arrays.cast", KILN_OK},
    {"bad/face_index_out_of_range.cast", KILN_OK},
    {"bad/curve_kb_kv_mismatch.cast", KILN_OK},
    {"bad/bone_parent_cycle.cast", KILN_OK},
    {"bad/wrong_vector_prop_type.cast", KILN_OK},
};

Test(cast_parse_corpus, bad_files_get_their_stated_outcome)
{
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip("corpus not found at %s: skipping", dir);
    for (size_t i = 0; i < sizeof bad_expectations / sizeof bad_expectations[0]; i++) {
        file_bytes f;
        cr_assert(corpus_read(dir, bad_expectations[i].file, &f), "cannot read %s", bad_expectations[i].file);
        kiln_cast_doc *doc;
        kiln_diag err;
        kiln_result r = kiln_cast_parse(f.data, f.size, NULL, &doc, &err);
        cr_expect_eq(r, bad_expectations[i].code, "%s: got %s (%s), expected %s", bad_expectations[i].file,
                     kiln_result_name(r), err.message, kiln_result_name(bad_expectations[i].code));
        if (r == KILN_OK) kiln_cast_free(doc);
        else cr_expect(strlen(err.message) > 20, "%s: message too vague", bad_expectations[i].file);
        file_bytes_free(&f);
    }
}

Test(cast_parse_corpus, every_good_file_parses)
{
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip("corpus not found at %s: skipping", dir);
    char **names = NULL;
    size_t count = corpus_list(dir, &names);
    cr_assert(count >= 30, "expected the corpus .cast files, found %zu", count);
    for (size_t i = 0; i < count; i++) {
        file_bytes f;
        cr_assert(corpus_read(dir, names[i], &f));
        kiln_cast_doc *doc;
        kiln_diag err;
        kiln_result r = kiln_cast_parse(f.data, f.size, NULL, &doc, &err);
        cr_expect_eq(r, KILN_OK, "%s: %s at %s", names[i], err.message, err.path);
        if (r == KILN_OK) {
            const kiln_cast_node *root = kiln_cast_node_at(doc, 0);
            cr_expect_eq(root->id, KILN_CAST_ID_ROOT, "%s", names[i]);
            kiln_cast_free(doc);
        }
        file_bytes_free(&f);
    }
    corpus_list_free(names, count);
}
