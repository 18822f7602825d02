/* Verification of the 1.2 blend shape section: records and their sparse delta arrays, so that
 * after kiln_blob_load the evaluator (blend_shape.c) can scatter-add every delta into a buffer
 * of the mesh's vertex count without a bounds check and never meets a NaN.
 *
 * Runs after the loader's section-table and record checks and finds its sections itself (BSHP
 * is unknown to a 1.0/1.1 loader, which skips it by size).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "blob_internal.h"
#include "blob_verify_blend.h"

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

static kiln_result kiln__bv_fail(kiln__bv *v, kiln_result code, uint64_t offset, const char *fmt, ...)
{
    if (!v->err) return code;
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    /* the path is the text up to the first ':' ("BSHP[2].indices") */
    size_t n = strcspn(text, ":");
    snprintf(v->err->path, sizeof v->err->path, "%.*s", (int)(n < 190 ? n : 190), text);
    v->err->code = code;
    v->err->severity = KILN_SEVERITY_ERROR;
    v->err->offset = offset;
    snprintf(v->err->message, sizeof v->err->message, "%.250s (byte offset %llu)", text, (unsigned long long)offset);
    return code;
}

static int kiln__finite(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return (b & 0x7F800000u) != 0x7F800000u;
}

/* [off, off + bytes) inside DATA, off 16-byte aligned. */
static int kiln__array_ok(const kiln__bv *v, uint64_t off, uint64_t bytes)
{
    return off % KILN_BLOB_DATA_ALIGN == 0 && off >= v->data_begin && off <= v->data_end &&
           bytes <= v->data_end - off;
}

/* ---- sections -------------------------------------------------------------------------------- */
static kiln_result kiln__find_sections(kiln__bv *v)
{
    const kiln_blob_header *h = (const kiln_blob_header *)(const void *)v->base;
    const kiln_blob_section *t = (const kiln_blob_section *)(const void *)(v->base + sizeof *h);
    for (uint32_t i = 0; i < h->section_count; i++) {
        const kiln_blob_section *s = &t[i];
        uint64_t entry = sizeof *h + (uint64_t)i * sizeof *s;
        /* the loader has checked the known kinds: the first of each is the one it uses */
        if (s->kind == KILN_SECTION_STRINGS && !v->strings_size) v->strings_size = s->size;
        if (s->kind == KILN_SECTION_DATA && v->data_end == 0) v->data_begin = s->offset, v->data_end = s->offset + s->size;
        if (s->kind == KILN_SECTION_MESHES && !v->meshes) v->meshes = s;
        if (s->kind == KILN_SECTION_NAME_INDEX && !v->names) v->names = s;
        if (s->kind != KILN_SECTION_BLEND_SHAPES) continue;
        if (v->shapes)
            return kiln__bv_fail(v, KILN_ERR_BLOB_BAD_SECTION, entry, "section[%u].kind: second BSHP section", i);
        if (s->version != 1)
            return kiln__bv_fail(v, KILN_ERR_BLOB_BAD_VERSION, entry + offsetof(kiln_blob_section, version),
                                 "section[%u].version: BSHP layout version %u, this runtime reads 1", i, s->version);
        if (s->flags & ~KILN_SECTION_FLAG_REQUIRED)
            return kiln__bv_fail(v, KILN_ERR_BLOB_BAD_SECTION, entry + offsetof(kiln_blob_section, flags),
                                 "section[%u].flags: unknown bits 0x%X", i, s->flags & ~KILN_SECTION_FLAG_REQUIRED);
        if (s->stride != sizeof(kiln_blob_blend_shape) || (uint64_t)s->count * s->stride != s->size)
            return kiln__bv_fail(v, KILN_ERR_BLOB_BAD_SECTION, entry + offsetof(kiln_blob_section, stride),
                                 "section[%u].stride: BSHP needs stride %u and count x stride = size (%u x %u, %llu)",
                                 i, (unsigned)sizeof(kiln_blob_blend_shape), s->count, s->stride,
                                 (unsigned long long)s->size);
        if (s->offset % KILN_BLOB_ALIGN || s->offset > v->size || s->size > v->size - s->offset)
            return kiln__bv_fail(v, KILN_ERR_BLOB_BAD_SECTION, entry + offsetof(kiln_blob_section, offset),
                                 "section[%u].offset: BSHP is misaligned or outside the blob", i);
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
    if (r->name != 0 && r->name >= v->strings_size)
        return kiln__bv_fail(v, KILN_ERR_BLOB_BAD_RECORD, KILN__BS_AT(name),
                             "BSHP[%u].name: string offset %u is outside the %llu-byte string table", i, r->name,
                             (unsigned long long)v->strings_size);
    if (r->mesh >= mesh_count)
        return kiln__bv_fail(v, KILN_ERR_BLOB_BAD_RECORD, KILN__BS_AT(mesh),
                             "BSHP[%u].mesh: index %u is outside MESH (%u records)", i, r->mesh, mesh_count);
    if (!kiln__finite(r->target_scale))
        return kiln__bv_fail(v, KILN_ERR_BLOB_NOT_FINITE, KILN__BS_AT(target_scale),
                             "BSHP[%u].target_scale: NaN or infinite", i);
    if (!(r->target_scale > 0.0f))
        return kiln__bv_fail(v, KILN_ERR_BLOB_BAD_RECORD, KILN__BS_AT(target_scale),
                             "BSHP[%u].target_scale: %g is not positive", i, (double)r->target_scale);
    if (r->reserved[0] || r->reserved[1])
        return kiln__bv_fail(v, KILN_ERR_BLOB_BAD_RECORD, KILN__BS_AT(reserved), "BSHP[%u].reserved: not zero", i);
    uint64_t n = r->delta_count;
    if (!kiln__array_ok(v, r->indices_offset, n * 4u))
        return kiln__bv_fail(v, KILN_ERR_BLOB_BAD_RECORD, KILN__BS_AT(indices_offset),
                             "BSHP[%u].indices_offset: %llu + %llu bytes is misaligned or outside DATA", i,
                             (unsigned long long)r->indices_offset, (unsigned long long)(n * 4u));
    if (!kiln__array_ok(v, r->deltas_offset, n * 12u))
        return kiln__bv_fail(v, KILN_ERR_BLOB_BAD_RECORD, KILN__BS_AT(deltas_offset),
                             "BSHP[%u].deltas_offset: %llu + %llu bytes is misaligned or outside DATA", i,
                             (unsigned long long)r->deltas_offset, (unsigned long long)(n * 12u));
#undef KILN__BS_AT
    if (!n) return KILN_OK;
    const uint32_t *idx = (const uint32_t *)(const void *)(v->base + r->indices_offset);
    uint32_t k = kiln__first_unordered(idx, r->delta_count);
    if (k < n)
        return kiln__bv_fail(v, KILN_ERR_BLOB_BAD_RECORD, r->indices_offset + 4u * k,
                             "BSHP[%u].indices: entry %u (vertex %u) does not ascend from entry %u (vertex %u)", i, k,
                             idx[k], k - 1, idx[k - 1]);
    /* ascending, so the last index bounds them all */
    uint32_t vc = meshes[r->mesh].vertex_count;
    if (idx[n - 1] >= vc) {
        for (k = 0; idx[k] < vc; k++) {
        }
        return kiln__bv_fail(v, KILN_ERR_BLOB_BAD_RECORD, r->indices_offset + 4u * k,
                             "BSHP[%u].indices: entry %u (vertex %u) is not below mesh %u's %u vertices", i, k, idx[k],
                             r->mesh, vc);
    }
    const float *d = (const float *)(const void *)(v->base + r->deltas_offset);
    if (!kiln__scan_finite_f32(d, (size_t)n * 3u)) {
        size_t j = 0;
        while (kiln__finite(d[j])) j++;
        return kiln__bv_fail(v, KILN_ERR_BLOB_NOT_FINITE, r->deltas_offset + 4u * j,
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
            return kiln__bv_fail(v, KILN_ERR_BLOB_BAD_RECORD,
                                 v->names->offset + (uint64_t)i * sizeof *e + offsetof(kiln_blob_name_entry, index),
                                 "NIDX[%u].index: blend shape %u is outside BSHP (%u records)", i, e[i].index,
                                 shape_count);
    return KILN_OK;
}

kiln_result kiln__verify_blend_shapes(const void *base, uint64_t size, kiln_diag *err)
{
    kiln__bv v;
    memset(&v, 0, sizeof v);
    v.base = (const unsigned char *)base;
    v.size = size;
    v.err = err;
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
