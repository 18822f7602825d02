/* Verification of the 1.2 blend shape section: records and their sparse delta arrays, so that
 * after kiln_blob_load the evaluator (blend_shape.c) can scatter-add every delta into a buffer
 * of the mesh's vertex count without a bounds check and never meets a NaN.
 *
 * Runs after the loader's section-table and record checks and finds its sections itself (BSHP
 * is unknown to a 1.0/1.1 loader, which skips it by size).
 */
#include <stddef.h>

#include "blob_internal.h"
#include "blob_verify_blend.h"
#include "blob_verify_sections.h"

_Static_assert(sizeof(kiln_blob_blend_shape) == 40, "blend shape record");
_Static_assert(offsetof(kiln_blob_blend_shape, indices_offset) == 16, "blend shape.indices_offset (8-aligned)");
_Static_assert(offsetof(kiln_blob_blend_shape, reserved) == 32, "blend shape.reserved");

/* Indices checked per pass: the order check is branch-free inside a block. */
#define KILN__ORDER_BLOCK 256u

typedef struct kiln__bv {
    const unsigned char     *base;
    uint64_t                 size;
    kiln_diag               *err;
    const kiln_blob_section *shapes, *meshes, *names;
    uint64_t                 strings_size;
    uint64_t                 data_begin, data_end; /* the DATA section; empty when absent */
} kiln__bv;

/* [off, off + bytes) inside DATA, off 16-byte aligned. */
static int kiln__array_ok(const kiln__bv *v, uint64_t off, uint64_t bytes)
{
    return off % KILN_BLOB_DATA_ALIGN == 0 && kiln__data_ok(v->data_begin, v->data_end, off, bytes);
}

/* ---- sections -------------------------------------------------------------------------------- */
static kiln_result kiln__find_sections(kiln__bv *v)
{
    kiln__verify_strings_data(v->base, &v->strings_size, &v->data_begin, &v->data_end);
    uint32_t n;
    const kiln_blob_section *t = kiln__verify_table(v->base, &n);
    for (uint32_t i = 0; i < n; i++) {
        const kiln_blob_section *s = &t[i];
        /* the loader has checked the known kinds: the first of each is the one it uses */
        if (s->kind == KILN_SECTION_MESHES && !v->meshes) v->meshes = s;
        if (s->kind == KILN_SECTION_NAME_INDEX && !v->names) v->names = s;
        if (s->kind != KILN_SECTION_BLEND_SHAPES) continue;
        kiln_result r = kiln__verify_section(s, i, v->shapes, sizeof(kiln_blob_blend_shape), v->size, v->err);
        if (r != KILN_OK) return r;
        v->shapes = s;
    }
    return KILN_OK;
}

/* ---- records --------------------------------------------------------------------------------- */

/* Index of the first k in [1, n) with idx[k] <= idx[k - 1], or n: strictly ascending. */
static uint32_t kiln__first_unordered(const uint32_t *idx, uint32_t n)
{
    for (uint32_t k0 = 1; k0 < n; k0 += KILN__ORDER_BLOCK) {
        uint32_t k1 = n - k0 < KILN__ORDER_BLOCK ? n : k0 + KILN__ORDER_BLOCK;
        uint32_t bad = 0;
        for (uint32_t k = k0; k < k1; k++) bad |= idx[k] <= idx[k - 1];
        if (!bad) continue;
        for (uint32_t k = k0; k < k1; k++)
            if (idx[k] <= idx[k - 1]) return k;
    }
    return n;
}

static kiln_result kiln__check_shape(kiln__bv *v, uint32_t i, const kiln_blob_mesh *meshes, uint32_t mesh_count)
{
    const kiln_blob_blend_shape *r =
        (const kiln_blob_blend_shape *)(const void *)(v->base + v->shapes->offset + (uint64_t)i * sizeof *r);
    uint64_t at = v->shapes->offset + (uint64_t)i * sizeof *r;
#define KILN__BS_AT(field) (at + offsetof(kiln_blob_blend_shape, field))
    if (!kiln__string_ok(v->strings_size, r->name))
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, KILN__BS_AT(name),
                                 "BSHP[%u].name: string offset %u is outside the %llu-byte string table", i, r->name,
                                 (unsigned long long)v->strings_size);
    if (r->mesh >= mesh_count)
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, KILN__BS_AT(mesh),
                                 "BSHP[%u].mesh: index %u is outside MESH (%u records)", i, r->mesh, mesh_count);
    if (!kiln__finite(r->target_scale))
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_NOT_FINITE, KILN__BS_AT(target_scale),
                                 "BSHP[%u].target_scale: NaN or infinite", i);
    if (!(r->target_scale > 0.0f))
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, KILN__BS_AT(target_scale),
                                 "BSHP[%u].target_scale: %g is not positive", i, (double)r->target_scale);
    if (r->reserved[0] || r->reserved[1])
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, KILN__BS_AT(reserved), "BSHP[%u].reserved: not zero", i);
    uint64_t n = r->delta_count;
    if (!kiln__array_ok(v, r->indices_offset, n * 4u))
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, KILN__BS_AT(indices_offset),
                                 "BSHP[%u].indices_offset: %llu + %llu bytes is misaligned or outside DATA", i,
                                 (unsigned long long)r->indices_offset, (unsigned long long)(n * 4u));
    if (!kiln__array_ok(v, r->deltas_offset, n * 12u))
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, KILN__BS_AT(deltas_offset),
                                 "BSHP[%u].deltas_offset: %llu + %llu bytes is misaligned or outside DATA", i,
                                 (unsigned long long)r->deltas_offset, (unsigned long long)(n * 12u));
#undef KILN__BS_AT
    if (!n) return KILN_OK;
    const uint32_t *idx = (const uint32_t *)(const void *)(v->base + r->indices_offset);
    uint32_t k = kiln__first_unordered(idx, r->delta_count);
    if (k < n)
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, r->indices_offset + 4u * k,
                                 "BSHP[%u].indices: entry %u (vertex %u) does not ascend from entry %u (vertex %u)", i, k,
                                 idx[k], k - 1, idx[k - 1]);
    /* ascending, so the last index bounds them all */
    uint32_t vc = meshes[r->mesh].vertex_count;
    if (idx[n - 1] >= vc) {
        for (k = 0; idx[k] < vc; k++) {
        }
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, r->indices_offset + 4u * k,
                                 "BSHP[%u].indices: entry %u (vertex %u) is not below mesh %u's %u vertices", i, k, idx[k],
                                 r->mesh, vc);
    }
    const float *d = (const float *)(const void *)(v->base + r->deltas_offset);
    if (!kiln__scan_finite_f32(d, (size_t)n * 3u)) {
        size_t j = kiln__nonfinite(d, (size_t)n * 3u);
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_NOT_FINITE, r->deltas_offset + 4u * j,
                                 "BSHP[%u].deltas: delta %zu component %zu is NaN or infinite", i, j / 3, j % 3);
    }
    return KILN_OK;
}

/* Name entries of kind BSHP: the loader leaves kinds it does not know alone. */
static kiln_result kiln__check_names(kiln__bv *v, uint32_t shape_count)
{
    if (!v->names) return KILN_OK;
    const kiln_blob_name_entry *e = (const kiln_blob_name_entry *)(const void *)(v->base + v->names->offset);
    for (uint32_t i = 0; i < v->names->count; i++)
        if (e[i].kind == KILN_SECTION_BLEND_SHAPES && e[i].index >= shape_count)
            return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD,
                                     v->names->offset + (uint64_t)i * sizeof *e + offsetof(kiln_blob_name_entry, index),
                                     "NIDX[%u].index: blend shape %u is outside BSHP (%u records)", i, e[i].index,
                                     shape_count);
    return KILN_OK;
}

kiln_result kiln__verify_blend_shapes(const void *base, uint64_t size, kiln_diag *err)
{
    kiln__bv v = {.base = (const unsigned char *)base, .size = size, .err = err}; /* the rest zero */
    kiln_result r = kiln__find_sections(&v);
    if (r != KILN_OK) return r;
    uint32_t count = v.shapes ? v.shapes->count : 0;
    const kiln_blob_mesh *meshes =
        v.meshes ? (const kiln_blob_mesh *)(const void *)(v.base + v.meshes->offset) : NULL;
    uint32_t mesh_count = v.meshes ? v.meshes->count : 0;
    for (uint32_t i = 0; i < count; i++) {
        r = kiln__check_shape(&v, i, meshes, mesh_count);
        if (r != KILN_OK) return r;
    }
    return kiln__check_names(&v, count);
}
