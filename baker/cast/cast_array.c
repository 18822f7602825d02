/* Readers for zero-copy Cast arrays (kiln_cast_array). Payloads are little-endian and
 * unaligned; every load goes through memcpy, which compilers turn into a plain load. The bulk
 * readers copy whole runs when the stored type already is the destination type, since the
 * baker pulls 500k-vertex meshes through them. */
#include <string.h>

#include "cast_scene_util.h"

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define KILN__HOST_LE 1
#elif defined(_M_IX86) || defined(_M_X64) || defined(_M_ARM64)
#define KILN__HOST_LE 1
#else
#define KILN__HOST_LE 0
#endif

static uint16_t kiln__ld16(const uint8_t *p)
{
#if KILN__HOST_LE
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
#else
    return (uint16_t)(p[0] | (p[1] << 8));
#endif
}

static uint32_t kiln__ld32(const uint8_t *p)
{
#if KILN__HOST_LE
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
#else
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
#endif
}

static uint64_t kiln__ld64(const uint8_t *p)
{
    return (uint64_t)kiln__ld32(p) | (uint64_t)kiln__ld32(p + 4) << 32;
}

static float kiln__ldf(const uint8_t *p)
{
    uint32_t bits = kiln__ld32(p);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static double kiln__ldd(const uint8_t *p)
{
    uint64_t bits = kiln__ld64(p);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* Float to u32 the way a count or index should convert: NaN and negatives give 0, values
 * past the range saturate. */
static uint32_t kiln__f2u(double v)
{
    if (!(v > 0.0)) return 0;
    return v >= 4294967295.0 ? UINT32_MAX : (uint32_t)v;
}

/* Scalar s (element * comps + component) of the array, widened. Types outside the table read
 * as 0. */
static double kiln__scalar_f64(const kiln_cast_array *a, size_t s)
{
    const uint8_t *b = a->data;
    switch (a->type) {
    case KILN_CAST_TYPE_BYTE: return b[s];
    case KILN_CAST_TYPE_SHORT: return kiln__ld16(b + 2 * s);
    case KILN_CAST_TYPE_INT: return kiln__ld32(b + 4 * s);
    case KILN_CAST_TYPE_LONG: return (double)kiln__ld64(b + 8 * s);
    case KILN_CAST_TYPE_DOUBLE: return kiln__ldd(b + 8 * s);
    case KILN_CAST_TYPE_FLOAT: case KILN_CAST_TYPE_VEC2: case KILN_CAST_TYPE_VEC3: case KILN_CAST_TYPE_VEC4:
        return kiln__ldf(b + 4 * s);
    default: return 0.0;
    }
}

static uint32_t kiln__scalar_u32(const kiln_cast_array *a, size_t s)
{
    const uint8_t *b = a->data;
    switch (a->type) {
    case KILN_CAST_TYPE_BYTE: return b[s];
    case KILN_CAST_TYPE_SHORT: return kiln__ld16(b + 2 * s);
    case KILN_CAST_TYPE_INT: return kiln__ld32(b + 4 * s);
    case KILN_CAST_TYPE_LONG: {
        uint64_t v = kiln__ld64(b + 8 * s);
        return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    }
    default: return kiln__f2u(kiln__scalar_f64(a, s));
    }
}

uint32_t kiln_cast_array_u32(const kiln_cast_array *a, uint32_t i)
{
    if (!a || !a->data || i >= a->count) return 0;
    return kiln__scalar_u32(a, (size_t)i * kiln__type_comps(a->type));
}

float kiln_cast_array_f32(const kiln_cast_array *a, uint32_t i)
{
    if (!a || !a->data || i >= a->count) return 0.0f;
    return (float)kiln__scalar_f64(a, (size_t)i * kiln__type_comps(a->type));
}

void kiln_cast_array_read_u32(const kiln_cast_array *a, uint32_t first, uint32_t n, uint32_t *dst)
{
    if (!a || !a->data || !dst || first > a->count || n > a->count - first) return;
    size_t comps = kiln__type_comps(a->type);
    size_t s0 = (size_t)first * comps, total = (size_t)n * comps;
    const uint8_t *b = a->data;
    switch (a->type) {
    case KILN_CAST_TYPE_BYTE:
        for (size_t k = 0; k < total; k++) dst[k] = b[s0 + k];
        return;
    case KILN_CAST_TYPE_SHORT:
        for (size_t k = 0; k < total; k++) dst[k] = kiln__ld16(b + 2 * (s0 + k));
        return;
    case KILN_CAST_TYPE_INT:
#if KILN__HOST_LE
        memcpy(dst, b + 4 * s0, 4 * total);
#else
        for (size_t k = 0; k < total; k++) dst[k] = kiln__ld32(b + 4 * (s0 + k));
#endif
        return;
    default:
        for (size_t k = 0; k < total; k++) dst[k] = kiln__scalar_u32(a, s0 + k);
        return;
    }
}

void kiln_cast_array_read_f32(const kiln_cast_array *a, uint32_t first, uint32_t n, float *dst)
{
    if (!a || !a->data || !dst || first > a->count || n > a->count - first) return;
    size_t comps = kiln__type_comps(a->type);
    size_t s0 = (size_t)first * comps, total = (size_t)n * comps;
    const uint8_t *b = a->data;
    switch (a->type) {
    case KILN_CAST_TYPE_FLOAT: case KILN_CAST_TYPE_VEC2: case KILN_CAST_TYPE_VEC3: case KILN_CAST_TYPE_VEC4:
#if KILN__HOST_LE
        memcpy(dst, b + 4 * s0, 4 * total);
#else
        for (size_t k = 0; k < total; k++) dst[k] = kiln__ldf(b + 4 * (s0 + k));
#endif
        return;
    case KILN_CAST_TYPE_BYTE:
        for (size_t k = 0; k < total; k++) dst[k] = (float)b[s0 + k];
        return;
    case KILN_CAST_TYPE_SHORT:
        for (size_t k = 0; k < total; k++) dst[k] = (float)kiln__ld16(b + 2 * (s0 + k));
        return;
    default:
        for (size_t k = 0; k < total; k++) dst[k] = (float)kiln__scalar_f64(a, s0 + k);
        return;
    }
}
