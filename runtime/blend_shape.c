/* Blend shapes at run time (kiln/blend_shape.h): views of the BSHP section, weights from clip
 * tracks (Cast reference D.7), and the evaluation driver, which checks its arguments, collects
 * the shapes with a nonzero effective weight and runs the chunked scatter-add
 * (blend_shape_internal.h) with the kernel table's blend-shape kernels (simd_table.h).
 */
#include <string.h>

#include "blend_shape_internal.h"
#include "blob_internal.h"
#include "kiln/anim.h"
#include "error_detail.h"
#include "simd_table.h"

/* ---- views --------------------------------------------------------------------------------- */
KILN__RECORDS_VIEW(kiln_blob_blend_shapes, kiln_blob_blend_shape, KILN_SECTION_BLEND_SHAPES)

uint32_t kiln_blob_find_blend_shape(const kiln_blob *blob, uint32_t mesh, const char *name)
{
    uint32_t n;
    const kiln_blob_blend_shape *s = kiln_blob_blend_shapes(blob, &n);
    for (uint32_t i = 0; name && i < n; i++)
        if (s[i].mesh == mesh && strcmp(kiln_blob_string(blob, s[i].name), name) == 0) return i;
    return KILN_BLOB_NONE;
}

uint32_t kiln_blob_mesh_blend_shapes(const kiln_blob *blob, uint32_t mesh, uint32_t *out, uint32_t cap)
{
    uint32_t n, total = 0;
    const kiln_blob_blend_shape *s = kiln_blob_blend_shapes(blob, &n);
    for (uint32_t i = 0; i < n; i++) {
        if (s[i].mesh != mesh) continue;
        if (out && total < cap) out[total] = i;
        total++;
    }
    return total;
}

/* `bytes` at `offset`, 16-byte aligned and inside the blob (re-checked for trusted loads). */
static const void *kiln__bs_array(const kiln_blob *blob, uint64_t offset, uint64_t bytes)
{
    const kiln_blob_header *h = kiln_blob_header_of(blob);
    if (!h || offset % KILN_BLOB_DATA_ALIGN || offset > h->total_size || bytes > h->total_size - offset) return NULL;
    return (const unsigned char *)(const void *)blob + offset;
}

const uint32_t *kiln_blend_shape_indices(const kiln_blob *blob, const kiln_blob_blend_shape *shape)
{
    if (!blob || !shape || !shape->delta_count) return NULL;
    return kiln__bs_array(blob, shape->indices_offset, (uint64_t)shape->delta_count * 4u);
}

const float *kiln_blend_shape_deltas(const kiln_blob *blob, const kiln_blob_blend_shape *shape)
{
    if (!blob || !shape || !shape->delta_count) return NULL;
    return kiln__bs_array(blob, shape->deltas_offset, (uint64_t)shape->delta_count * 12u);
}

float kiln_blend_shape_weight(float w, float target_scale)
{
    /* written so that a NaN w fails both comparisons and gives 0 */
    if (!(w > 0.0f)) return 0.0f;
    return w < target_scale ? w : target_scale;
}

/* ---- weights from a clip -------------------------------------------------------------------- */
kiln_result kiln_blend_shape_bind_clip(const kiln_blob *anim_blob, uint32_t clip, const kiln_blob *shape_blob,
                                       const uint32_t *shapes, uint32_t shape_count, uint32_t *track)
{
    uint32_t clips, scalar_total, shape_total;
    const kiln_blob_animation *a = anim_blob ? kiln_blob_animations(anim_blob, &clips) : NULL;
    const kiln_blob_anim_scalar *sc = anim_blob ? kiln_blob_anim_scalars(anim_blob, &scalar_total) : NULL;
    const kiln_blob_blend_shape *bs = shape_blob ? kiln_blob_blend_shapes(shape_blob, &shape_total) : NULL;
    if (!anim_blob || !shape_blob || (!track && shape_count))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_blend_shape_bind_clip: anim_blob, shape_blob, track",
                          "a blob is NULL, or track is NULL with shape_count %u", shape_count);
    if (!a || clip >= clips)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_blend_shape_bind_clip: clip", "no clip %u (the blob has %u)", clip,
                          a ? clips : 0u);
    const kiln_blob_animation *c = &a[clip];
    if (c->scalar_count && (!sc || c->first_scalar > scalar_total || c->scalar_count > scalar_total - c->first_scalar))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_blend_shape_bind_clip: clip",
                          "clip %u's scalar tracks lie outside ANIM_SCALARS", clip); /* trusted loads only */
    if (!shapes && shape_count > shape_total)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_blend_shape_bind_clip: shape_count",
                          "shape_count %u is above the blob's %u shapes", shape_count, shape_total);
    for (uint32_t i = 0; i < shape_count; i++) {
        uint32_t s = shapes ? shapes[i] : i;
        if (s >= shape_total)
            return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_blend_shape_bind_clip: shapes",
                              "shape %u (entry %u) is out of range (the blob has %u)", s, i, shape_total);
        const char *name = kiln_blob_string(shape_blob, bs[s].name);
        uint32_t hash = kiln_name_hash(name);
        track[i] = KILN_BLOB_NONE;
        /* D.4: of two curves on one channel the last in file order wins, so search backwards */
        for (uint32_t k = c->scalar_count; k-- > 0;) {
            const kiln_blob_anim_scalar *t = &sc[c->first_scalar + k];
            if (t->kind == KILN_SCALAR_BLEND_SHAPE && t->name_hash == hash &&
                strcmp(kiln_blob_string(anim_blob, t->name), name) == 0) {
                track[i] = k;
                break;
            }
        }
    }
    return KILN_OK;
}

void kiln_blend_shape_weights(const uint32_t *track, uint32_t shape_count, const float *scalars, uint32_t scalar_count,
                              float *weights)
{
    if (!track || !weights) return;
    for (uint32_t i = 0; i < shape_count; i++)
        weights[i] = scalars && track[i] < scalar_count ? scalars[track[i]] : 0.0f;
}

/* ---- evaluation ------------------------------------------------------------------------------ */
/* First k in [lo, n) with idx[k] >= bound (idx ascending), or n. */
static uint32_t kiln__bs_lower_bound(const uint32_t *idx, uint32_t lo, uint32_t n, uint32_t bound)
{
    if (lo >= n || idx[n - 1] < bound) return n; /* the common case of the last chunk */
    uint32_t hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (idx[mid] < bound) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* One pass over the output for up to KILN__BS_GROUP shapes; the first pass writes the base. */
static void kiln__bs_pass(const kiln__bs_kernels *k, const kiln__bs_job *job, kiln__bs_run *runs, uint32_t run_count,
                          int first)
{
    for (uint32_t c0 = 0; c0 < job->vertex_count; c0 += KILN__BS_CHUNK) {
        uint32_t m = job->vertex_count - c0 < KILN__BS_CHUNK ? job->vertex_count - c0 : KILN__BS_CHUNK;
        uint32_t c1 = c0 + m;
        if (first) k->base(job, c0, m);
        for (uint32_t r = 0; r < run_count; r++) {
            kiln__bs_run *run = &runs[r];
            uint32_t end = kiln__bs_lower_bound(run->idx, run->k, run->n, c1);
            if (end > run->k)
                k->add(job, run->idx + run->k, run->d + 3 * (size_t)run->k, end - run->k, c0, m, run->w, end == run->n);
            run->k = end;
        }
    }
}

/* The mesh's base positions as a job, or ERR_BLOB_BAD_RECORD. */
static kiln_result kiln__bs_base(const kiln_blob *blob, const kiln_blob_mesh *mesh, kiln__bs_job *job)
{
    const kiln_blob_stream *s = kiln_blob_mesh_stream(blob, mesh, KILN_ATTR_POSITION, 0);
    const void *data = s ? kiln_blob_stream_data(blob, s) : NULL;
    if (!data || s->count < mesh->vertex_count) return KILN_ERR_BLOB_BAD_RECORD;
    if (s->format == KILN_FORMAT_F32x3 && s->stride == 12u) {
        job->quantized = 0;
    } else if (s->format == KILN_FORMAT_UNORM16x4 && s->stride == 8u) {
        job->quantized = 1;
        for (int c = 0; c < 3; c++) {
            job->dq_scale[c] = s->decode_scale[c] * (1.0f / 65535.0f);
            job->dq_offset[c] = s->decode_offset[c];
        }
        job->dq_scale[3] = job->dq_offset[3] = 0.0f;
    } else {
        return KILN_ERR_BLOB_BAD_RECORD;
    }
    job->base = data;
    job->vertex_count = mesh->vertex_count;
    return KILN_OK;
}

kiln_result kiln_blend_shapes_apply(const kiln_blend_shapes_desc *desc)
{
    if (!desc || !desc->blob || !desc->out)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_blend_shapes_apply: desc", "desc, its blob or its out is NULL");
    if (desc->shape_count && (!desc->shapes || !desc->weights))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_blend_shapes_apply: desc->shapes, weights",
                          "shapes or weights is NULL with shape_count %u", desc->shape_count);
    uint32_t mesh_count, shape_total;
    const kiln_blob_mesh *meshes = kiln_blob_meshes(desc->blob, &mesh_count);
    const kiln_blob_blend_shape *bs = kiln_blob_blend_shapes(desc->blob, &shape_total);
    uint32_t stride = desc->out_stride ? desc->out_stride : 12u;
    if (desc->mesh >= mesh_count)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_blend_shapes_apply: desc->mesh", "no mesh %u (the blob has %u)",
                          desc->mesh, mesh_count);
    if (stride < 12u || stride % 4u)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_blend_shapes_apply: desc->out_stride",
                          "out_stride %u is below 12 or not a multiple of 4", stride);
    const kiln_blob_mesh *mesh = &meshes[desc->mesh];
    if (desc->out_count < mesh->vertex_count)
        return kiln__fail(KILN_ERR_BUFFER_TOO_SMALL, "kiln_blend_shapes_apply: desc->out_count",
                          "out_count %u is below the mesh's %u vertices", desc->out_count, mesh->vertex_count);

    kiln__bs_job job;
    memset(&job, 0, sizeof job);
    kiln_result r = kiln__bs_base(desc->blob, mesh, &job);
    if (r != KILN_OK) return r;
    job.out = (unsigned char *)desc->out;
    job.stride = stride;
    /* every argument is checked before anything is written */
    for (uint32_t i = 0; i < desc->shape_count; i++) {
        uint32_t s = desc->shapes[i];
        if (s >= shape_total || bs[s].mesh != desc->mesh)
            return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_blend_shapes_apply: desc->shapes",
                              "shape %u (entry %u) is not a shape of mesh %u", s, i, desc->mesh);
        if (bs[s].delta_count &&
            (!kiln_blend_shape_indices(desc->blob, &bs[s]) || !kiln_blend_shape_deltas(desc->blob, &bs[s])))
            return KILN_ERR_BLOB_BAD_RECORD;
    }
    if (!job.vertex_count) return KILN_OK;

    const kiln__bs_kernels *k = &kiln__simd_get()->blend_shape;
    kiln__bs_run runs[KILN__BS_GROUP];
    uint32_t run_count = 0;
    int passes = 0;
    for (uint32_t i = 0; i <= desc->shape_count; i++) {
        if (i < desc->shape_count) {
            const kiln_blob_blend_shape *s = &bs[desc->shapes[i]];
            float w = kiln_blend_shape_weight(desc->weights[i], s->target_scale);
            if (w == 0.0f || !s->delta_count) continue;
            kiln__bs_run *run = &runs[run_count++];
            run->idx = kiln_blend_shape_indices(desc->blob, s);
            run->d = kiln_blend_shape_deltas(desc->blob, s);
            run->n = s->delta_count;
            run->k = 0;
            run->w = w;
            if (run_count < KILN__BS_GROUP) continue;
        }
        /* a full group, or the end: one pass (at least one, to write the base) */
        if (run_count || !passes) kiln__bs_pass(k, &job, runs, run_count, passes == 0);
        passes++;
        run_count = 0;
    }
    return KILN_OK;
}
