/* Lossy vertex formats (opted into with KILN_BAKE_QUANTIZE_*) and the sRGB decode. */
#include <math.h>
#include <string.h>

#include "bake_geom.h"
#include "ds.h"

void kiln__bounds_f32(const float *v, uint32_t count, uint32_t comps, float *min, float *max)
{
    for (uint32_t c = 0; c < comps; c++) min[c] = max[c] = v[c];
    for (uint32_t i = 1; i < count; i++) {
        for (uint32_t c = 0; c < comps; c++) {
            float x = v[(size_t)i * comps + c];
            if (x < min[c]) min[c] = x;
            if (x > max[c]) max[c] = x;
        }
    }
}

/* Swaps a new payload and descriptor into *s, releasing the old payload. */
static void replace_stream(const kiln_allocator *a, kiln__stream *s, kiln__stream *repl)
{
    kiln__free(a, s->data);
    *s = *repl;
}

/* Shared by positions and UVs: `comps` float inputs per element, `out_comps` u16 outputs
 * (the extra ones stay 0). */
static kiln_result quantize_unorm16(const kiln_allocator *a, kiln__stream *s, uint32_t comps, uint32_t out_comps,
                                    uint32_t format)
{
    const float *src = s->data;
    uint32_t n = s->desc.count;
    float min[4] = {0}, max[4] = {0}, extent[4] = {0};
    if (n) kiln__bounds_f32(src, n, comps, min, max);
    for (uint32_t c = 0; c < comps; c++) {
        /* The extent is computed in double: max - min can overflow float even when both fit. */
        double e = (double)max[c] - (double)min[c];
        extent[c] = (float)e;
        if (!isfinite(extent[c])) return KILN_ERR_LIMIT;
    }

    kiln__stream q;
    kiln_result r = kiln__stream_alloc(a, &q, s->desc.semantic, format, s->desc.set, out_comps, n,
                                       out_comps * (uint32_t)sizeof(uint16_t));
    if (r != KILN_OK) return r;
    uint16_t *dst = q.data;
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t c = 0; c < comps; c++) {
            double t = extent[c] > 0 ? ((double)src[(size_t)i * comps + c] - min[c]) / extent[c] : 0.0;
            double v = floor(t * 65535.0 + 0.5);
            dst[(size_t)i * out_comps + c] = (uint16_t)(v < 0 ? 0 : v > 65535 ? 65535 : v);
        }
    }
    for (uint32_t c = 0; c < comps; c++) {
        q.desc.decode_offset[c] = min[c];
        q.desc.decode_scale[c] = extent[c];
    }
    replace_stream(a, s, &q);
    return KILN_OK;
}

kiln_result kiln__quantize_positions(const kiln_allocator *a, kiln__stream *s)
{
    return quantize_unorm16(a, s, 3, 4, KILN_FORMAT_UNORM16x4);
}

kiln_result kiln__quantize_uvs(const kiln_allocator *a, kiln__stream *s)
{
    return quantize_unorm16(a, s, 2, 2, KILN_FORMAT_UNORM16x2);
}

/* ---- octahedral unit vectors ----------------------------------------------------------------- */

/* The decode documented in bake_geom.h, in double: returns the unnormalised direction. */
static void oct_decode(const int16_t q[2], double out[3])
{
    double x = q[0] / 32767.0, y = q[1] / 32767.0;
    if (x < -1.0) x = -1.0;
    if (y < -1.0) y = -1.0;
    double z = 1.0 - fabs(x) - fabs(y);
    double t = z < 0.0 ? -z : 0.0;
    out[0] = x >= 0.0 ? x - t : x + t;
    out[1] = y >= 0.0 ? y - t : y + t;
    out[2] = z;
}

static int16_t clamp_snorm16(double v)
{
    if (v > 32767.0) return 32767;
    if (v < -32767.0) return -32767;
    return (int16_t)v;
}

/* cos of the angle between unit n and d. Candidates differ by ~1e-9 in cos, far below float
 * resolution near 1, hence double throughout. */
static double cos_angle(const double n[3], const double d[3])
{
    double l = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    return l > 0.0 ? (n[0] * d[0] + n[1] * d[1] + n[2] * d[2]) / l : -2.0;
}

/* Plain rounding of the projection is off by up to half a grid step in each axis; trying the
 * four surrounding grid points and keeping the best decode lowers the worst error. */
static void oct_encode(const float v[3], int16_t out[2])
{
    double l1 = fabs((double)v[0]) + fabs((double)v[1]) + fabs((double)v[2]);
    out[0] = out[1] = 0;
    if (!(l1 > 0.0)) return;
    double p[3] = {v[0] / l1, v[1] / l1, v[2] / l1};
    double px = p[0], py = p[1];
    if (p[2] < 0.0) {
        px = (1.0 - fabs(p[1])) * (p[0] >= 0.0 ? 1.0 : -1.0);
        py = (1.0 - fabs(p[0])) * (p[1] >= 0.0 ? 1.0 : -1.0);
    }
    double l2 = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    double n[3] = {p[0] / l2, p[1] / l2, p[2] / l2};
    double fx = floor(px * 32767.0), fy = floor(py * 32767.0), best = -3.0;
    for (int k = 0; k < 4; k++) {
        int16_t q[2] = {clamp_snorm16(fx + (k & 1)), clamp_snorm16(fy + (k >> 1))};
        double d[3];
        oct_decode(q, d);
        double c = cos_angle(n, d);
        if (c > best) {
            best = c;
            out[0] = q[0];
            out[1] = q[1];
        }
    }
}

kiln_result kiln__quantize_octahedral(const kiln_allocator *a, kiln__stream *s)
{
    const float *src = s->data;
    uint32_t n = s->desc.count;
    kiln__stream q;
    kiln_result r = kiln__stream_alloc(a, &q, s->desc.semantic, KILN_FORMAT_OCT16x2, s->desc.set, 2, n,
                                       2 * (uint32_t)sizeof(int16_t));
    if (r != KILN_OK) return r;
    int16_t *dst = q.data;
    for (uint32_t i = 0; i < n; i++) oct_encode(src + (size_t)i * 3, dst + (size_t)i * 2);
    q.desc.decode_scale[0] = q.desc.decode_scale[1] = 1.0f;
    replace_stream(a, s, &q);
    return KILN_OK;
}

float kiln__srgb_to_linear(float c)
{
    if (c <= 0.04045f) return c / 12.92f;
    return powf((c + 0.055f) / 1.055f, 2.4f);
}
