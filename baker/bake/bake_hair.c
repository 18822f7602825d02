/* Hair (Cast reference C.7): strands as first-particle offsets plus the particle positions. */
#include <string.h>

#include "bake_geom.h"
#include "util.h"
#include "bake_report.h"
#include "ds.h"

/* offsets[i] = first particle of strand i; offsets[strand_count] = particle_count. The
 * accessor has checked that the segment counts add up; the check is repeated because the
 * offsets must stay inside u32 and match the particle stream exactly. */
static kiln_result make_strands(const kiln_allocator *a, const kiln_source_hair *h, kiln__stream *s)
{
    kiln_result r = kiln__stream_alloc(a, s, KILN_ATTR_HAIR_STRANDS, KILN_FORMAT_U32x1, 0, 1, h->strand_count + 1u, 4);
    if (r != KILN_OK) return r;
    uint32_t *off = s->data;
    uint64_t at = 0;
    for (uint32_t i = 0; i < h->strand_count; i++) {
        off[i] = (uint32_t)at;
        at += (uint64_t)h->segments[i] + 1u;
        if (at > h->particle_count) return KILN_ERR_CAST_LENGTH_MISMATCH;
    }
    off[h->strand_count] = (uint32_t)at;
    return at == h->particle_count ? KILN_OK : KILN_ERR_CAST_LENGTH_MISMATCH;
}

static kiln_result bake(const kiln__bake_ctx *ctx, const kiln_source_hair *h, uint32_t index, kiln__hair *out)
{
    if (!h->strand_count || !h->particle_count || h->strand_count == UINT32_MAX) return KILN_ERR_CAST_EMPTY;

    kiln_result r = make_strands(ctx->allocator, h, &out->strands);
    uint64_t nonfinite = 0;
    if (r == KILN_OK)
        r = kiln__stream_copy_f32(ctx->allocator, h->particles, h->particle_count, KILN_ATTR_HAIR_PARTICLES, 0,
                                  KILN_FORMAT_F32x3, 3, &out->particles, &nonfinite);
    if (r != KILN_OK) return r;
    if (nonfinite)
        kiln__bake_report(&ctx->sink, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING, &h->loc, "pt", KILN_NO_OFFSET,
                          "%llu non-finite particle coordinates set to 0", (unsigned long long)nonfinite);

    out->name = h->name ? kiln__strdup(ctx->allocator, h->name) : kiln__strfmt(ctx->allocator, "hair%u", index);
    if (!out->name) return KILN_ERR_OUT_OF_MEMORY;
    out->material = KILN_BLOB_NONE;
    out->strand_count = h->strand_count;
    out->particle_count = h->particle_count;
    return KILN_OK;
}

kiln_result kiln__bake_hair(const kiln__bake_ctx *ctx, const kiln_source_hair *hair, uint32_t index, kiln__hair *out)
{
    memset(out, 0, sizeof *out);
    kiln_result r = bake(ctx, hair, index, out);
    if (r != KILN_OK) kiln__hair_free(ctx->allocator, out);
    return r;
}

void kiln__hair_free(const kiln_allocator *a, kiln__hair *h)
{
    if (!h) return;
    kiln__stream_free(a, &h->strands);
    kiln__stream_free(a, &h->particles);
    kiln__free(a, h->name);
    memset(h, 0, sizeof *h);
}
