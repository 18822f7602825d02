/* Exhaustive damage test on a blob produced by the baker (not a hand-built one): every
 * single-byte change, to every other value, is rejected when the checksum is verified; with
 * the checksum off, every changed blob is either rejected or loads and reads in bounds. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "blob_walk.h"
#include "kiln/bake/bake.h"
#include "kiln/blob.h"
#include "kiln/bake/cast_write.h"

/* A skinned triangle on a two-bone skeleton with a material: every 1.0 section kind that a
 * small model uses. */
static void bake_small(kiln_bake_result *res)
{
    static const float vp[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    static const float vn[9] = {0, 0, 1, 0, 0, 1, 0, 0, 1};
    static const uint32_t f[3] = {0, 1, 2}, wb[3] = {0, 1, 1}, mi = 1;
    static const float lp[3] = {0, 1, 0}, rgba[4] = {1, 0.5f, 0.25f, 1};
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    kiln_cast_writer_string(w, model, "n", "m");
    uint32_t skel = kiln_cast_writer_node(w, model, KILN_CAST_ID_SKELETON, 3);
    uint32_t b0 = kiln_cast_writer_node(w, skel, KILN_CAST_ID_BONE, 4);
    kiln_cast_writer_string(w, b0, "n", "root");
    uint32_t b1 = kiln_cast_writer_node(w, skel, KILN_CAST_ID_BONE, 5);
    kiln_cast_writer_string(w, b1, "n", "tip");
    uint32_t parent = 0;
    kiln_cast_writer_prop(w, b1, "p", KILN_CAST_TYPE_INT, &parent, 1);
    kiln_cast_writer_prop(w, b1, "lp", KILN_CAST_TYPE_VEC3, lp, 1);
    uint32_t mat = kiln_cast_writer_node(w, model, KILN_CAST_ID_MATERIAL, 6);
    kiln_cast_writer_string(w, mat, "n", "mat");
    kiln_cast_writer_string(w, mat, "t", "pbr");
    kiln_cast_writer_u64(w, mat, "albedo", 7);
    uint32_t color = kiln_cast_writer_node(w, mat, KILN_CAST_ID_COLOR, 7);
    kiln_cast_writer_prop(w, color, "rgba", KILN_CAST_TYPE_VEC4, rgba, 1);
    uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 8);
    kiln_cast_writer_prop(w, mesh, "vp", KILN_CAST_TYPE_VEC3, vp, 3);
    kiln_cast_writer_prop(w, mesh, "vn", KILN_CAST_TYPE_VEC3, vn, 3);
    kiln_cast_writer_ints(w, mesh, "f", f, 3);
    kiln_cast_writer_ints(w, mesh, "mi", &mi, 1);
    kiln_cast_writer_ints(w, mesh, "wb", wb, 3);
    kiln_cast_writer_u64(w, mesh, "m", 6);
    uint64_t size = kiln_cast_writer_size(w);
    cr_assert(size > 0);
    void *cast = malloc(size);
    cr_assert_eq(kiln_cast_writer_write(w, cast, size), KILN_OK);
    kiln_cast_writer_destroy(w);

    kiln_bake_input in = {"small.cast", cast, size, NULL};
    kiln_bake_options opt;
    memset(&opt, 0, sizeof opt);
    kiln_diag err;
    cr_assert_eq(kiln_bake(&in, 1, &opt, res, &err), KILN_OK, "%s", err.message);
    free(cast);
}

Test(blob_baked, every_single_byte_change_is_rejected_with_checksum)
{
    kiln_bake_result res;
    bake_small(&res);
    cr_assert(res.size >= 512 && res.size <= 8192, "small blob: %zu bytes", res.size);
    unsigned char *copy = aligned_alloc(KILN_BLOB_ALIGN, res.size);
    memcpy(copy, res.blob, res.size);
    const kiln_blob *blob;
    kiln_diag err;
    cr_assert_eq(kiln_blob_load(copy, res.size, 0, &blob, &err), KILN_OK, "%s", err.message);
    uint64_t changes = 0;
    for (size_t i = 0; i < res.size; i++) {
        unsigned char orig = copy[i];
        for (unsigned v = 0; v < 256; v++) {
            if (v == orig) continue;
            copy[i] = (unsigned char)v;
            kiln_result r = kiln_blob_load(copy, res.size, 0, &blob, &err);
            if (r == KILN_OK) cr_assert_fail("byte %zu changed 0x%02X -> 0x%02X was accepted", i, orig, v);
            changes++;
        }
        copy[i] = orig;
    }
    cr_assert_eq(changes, (uint64_t)res.size * 255);
    free(copy);
    kiln_bake_result_free(&res);
}

Test(blob_baked, damaged_blob_without_checksum_reads_in_bounds)
{
    kiln_bake_result res;
    bake_small(&res);
    unsigned char *copy = aligned_alloc(KILN_BLOB_ALIGN, res.size);
    memcpy(copy, res.blob, res.size);
    uint32_t loaded = 0;
    /* Values that most often slip past structural checks: bit flips, 0, 0xFF. */
    static const unsigned char masks[] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF};
    for (size_t i = 0; i < res.size; i++) {
        unsigned char orig = copy[i];
        for (size_t m = 0; m < sizeof masks; m++) {
            copy[i] = orig ^ masks[m];
            const kiln_blob *blob;
            kiln_diag err;
            if (kiln_blob_load(copy, res.size, KILN_BLOB_LOAD_NO_CRC, &blob, &err) == KILN_OK) {
                blob_walk w;
                cr_assert(blob_walk_run(blob, copy, res.size, &w), "byte %zu ^0x%02X: %s", i, masks[m], w.why);
                loaded++;
            }
        }
        copy[i] = orig;
    }
    cr_log_info("%u of %zu damaged blobs still verify without the checksum", loaded, res.size * sizeof masks);
    free(copy);
    kiln_bake_result_free(&res);
}
