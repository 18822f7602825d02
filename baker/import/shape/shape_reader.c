/* The *.Shape stream cursor: bounded little-endian reads, counts, strings (spec sections 2, 3)
 * and the importer's diagnostics. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "shape_internal.h"

uint16_t kiln__shape_rd_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

uint32_t kiln__shape_rd_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

float kiln__shape_rd_f32(const uint8_t *p)
{
    uint32_t u = kiln__shape_rd_u32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* "<where>.<field>" (or either alone) into out. */
static void kiln__shape_path(const kiln__shape *ctx, const char *field, char *out, size_t cap)
{
    if (ctx->where[0] && field && field[0])
        snprintf(out, cap, "%s.%s", ctx->where, field);
    else
        snprintf(out, cap, "%s", ctx->where[0] ? ctx->where : (field ? field : ""));
}

void kiln__shape_where(kiln__shape *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->where, sizeof ctx->where, fmt, ap);
    va_end(ap);
}

static void kiln__shape_vdiag(kiln__shape *ctx, kiln_diag *d, kiln_result code, kiln_severity sev, const char *rule,
                              uint64_t stream_offset, const char *field, const char *fmt, va_list ap)
{
    memset(d, 0, sizeof *d);
    d->code = code;
    d->severity = sev;
    d->offset = stream_offset == KILN_NO_OFFSET ? KILN_NO_OFFSET : ctx->base + stream_offset;
    kiln__shape_path(ctx, field, d->path, sizeof d->path);
    snprintf(d->rule, sizeof d->rule, "%s", rule ? rule : "");
    char detail[256];
    vsnprintf(detail, sizeof detail, fmt, ap);
    if (stream_offset == KILN_NO_OFFSET)
        snprintf(d->message, sizeof d->message, "%s%s%.100s: %.200s", rule ? rule : "", rule ? " " : "",
                 d->path[0] ? d->path : "file", detail);
    else
        snprintf(d->message, sizeof d->message, "%s%s%.100s at %s offset %llu: %.170s", rule ? rule : "", rule ? " " : "",
                 d->path[0] ? d->path : "file", ctx->base ? "byte" : "decoded stream",
                 (unsigned long long)d->offset, detail);
}

kiln_result kiln__shape_fail(kiln__shape *ctx, kiln_result code, const char *rule, uint64_t stream_offset,
                             const char *field, const char *fmt, ...)
{
    if (!ctx->err) return code;
    va_list ap;
    va_start(ap, fmt);
    kiln__shape_vdiag(ctx, ctx->err, code, KILN_SEVERITY_ERROR, rule, stream_offset, field, fmt, ap);
    va_end(ap);
    return code;
}

void kiln__shape_warn(kiln__shape *ctx, kiln_severity severity, const char *rule, uint64_t stream_offset,
                      const char *field, const char *fmt, ...)
{
    if (!ctx->opt || !ctx->opt->diag.fn) return;
    kiln_diag d;
    va_list ap;
    va_start(ap, fmt);
    kiln__shape_vdiag(ctx, &d, KILN_ERR_IMPORT_REPAIRED, severity, rule, stream_offset, field, fmt, ap);
    va_end(ap);
    ctx->opt->diag.fn(ctx->opt->diag.user, &d);
}

kiln_source_loc kiln__shape_loc(kiln__shape *ctx, uint64_t stream_offset, uint64_t size, const char *field)
{
    char path[192];
    kiln__shape_path(ctx, field, path, sizeof path);
    kiln_source_loc loc;
    loc.path = kiln_source_strdup(ctx->scene, path); /* NULL on failure: "the whole input" */
    loc.offset = ctx->base + stream_offset;
    loc.size = size;
    return loc;
}

kiln_result kiln__shape_take(kiln__shape *ctx, size_t n, const char *field, const uint8_t **out)
{
    if (n > ctx->size - ctx->pos)
        return kiln__shape_fail(ctx, KILN_ERR_IMPORT_TRUNCATED, "V7", ctx->pos, field,
                                "needs %llu bytes, the stream has %llu left",
                                (unsigned long long)n, (unsigned long long)(ctx->size - ctx->pos));
    *out = ctx->s + ctx->pos;
    ctx->pos += n;
    return KILN_OK;
}

kiln_result kiln__shape_u8(kiln__shape *ctx, const char *field, uint8_t *out)
{
    const uint8_t *p = NULL;
    kiln_result r = kiln__shape_take(ctx, 1, field, &p);
    if (r == KILN_OK) *out = p[0];
    return r;
}

kiln_result kiln__shape_u16(kiln__shape *ctx, const char *field, uint16_t *out)
{
    const uint8_t *p = NULL;
    kiln_result r = kiln__shape_take(ctx, 2, field, &p);
    if (r == KILN_OK) *out = kiln__shape_rd_u16(p);
    return r;
}

kiln_result kiln__shape_u32(kiln__shape *ctx, const char *field, uint32_t *out)
{
    const uint8_t *p = NULL;
    kiln_result r = kiln__shape_take(ctx, 4, field, &p);
    if (r == KILN_OK) *out = kiln__shape_rd_u32(p);
    return r;
}

kiln_result kiln__shape_f64(kiln__shape *ctx, const char *field, double *out)
{
    const uint8_t *p = NULL;
    kiln_result r = kiln__shape_take(ctx, 8, field, &p);
    if (r == KILN_OK) {
        uint64_t u = (uint64_t)kiln__shape_rd_u32(p) | ((uint64_t)kiln__shape_rd_u32(p + 4) << 32);
        memcpy(out, &u, sizeof *out);
    }
    return r;
}

kiln_result kiln__shape_bool(kiln__shape *ctx, const char *field, uint8_t *out)
{
    uint64_t at = ctx->pos;
    kiln_result r = kiln__shape_u8(ctx, field, out);
    if (r == KILN_OK && *out > 1) {
        kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W2", at, field, "bool byte %u read as true", *out);
        *out = 1;
    }
    return r;
}

kiln_result kiln__shape_floats(kiln__shape *ctx, uint32_t count, const char *field, const char *finite_rule, float *out)
{
    uint64_t at = ctx->pos;
    const uint8_t *p = NULL;
    kiln_result r = kiln__shape_take(ctx, (size_t)count * 4u, field, &p);
    if (r != KILN_OK) return r;
    for (uint32_t i = 0; i < count; i++) {
        float f = kiln__shape_rd_f32(p + 4u * i);
        if (!isfinite(f)) {
            if (finite_rule)
                return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, finite_rule, at + 4u * i, field,
                                        "component %u is not finite (%g)", i, (double)f);
            kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W18", at + 4u * i, field,
                             "component %u is not finite (%g); informational value only", i, (double)f);
            finite_rule = NULL;
            f = 0.0f;
        }
        if (out) out[i] = f;
    }
    return KILN_OK;
}

kiln_result kiln__shape_check_count(kiln__shape *ctx, uint64_t count, uint64_t min_size, const char *field)
{
    /* count < 2^32 and min_size < 2^32 here, so the product fits 64 bits. */
    uint64_t bytes = count * min_size;
    if (bytes > ctx->size)
        return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V10", ctx->pos, field,
                                "count %llu needs at least %llu bytes, the whole stream is %llu",
                                (unsigned long long)count, (unsigned long long)bytes, (unsigned long long)ctx->size);
    if (bytes > ctx->size - ctx->pos)
        return kiln__shape_fail(ctx, KILN_ERR_IMPORT_TRUNCATED, "V7", ctx->pos, field,
                                "count %llu needs at least %llu bytes, the stream has %llu left",
                                (unsigned long long)count, (unsigned long long)bytes,
                                (unsigned long long)(ctx->size - ctx->pos));
    return KILN_OK;
}

/* ---- strings ------------------------------------------------------------------------------ */

static size_t kiln__utf8_put(uint32_t cp, char *o)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Length of a valid UTF-8 sequence at s (n bytes left), 0 when invalid. */
static size_t kiln__utf8_valid(const uint8_t *s, size_t n)
{
    uint8_t c = s[0];
    size_t len;
    uint32_t cp, min;
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

kiln_result kiln__shape_string(kiln__shape *ctx, const char *field, const char **out)
{
    uint64_t at = ctx->pos;
    uint8_t n;
    kiln_result r = kiln__shape_u8(ctx, field, &n);
    if (r != KILN_OK) return r;
    size_t unit = ctx->unicode ? 2u : 1u;
    const uint8_t *p = NULL;
    if ((r = kiln__shape_take(ctx, unit * n, field, &p)) != KILN_OK) return r;

    /* Code units, then where the string ends: at the first NUL; NULs that are all at the end
     * (a counted terminator) are dropped silently. */
    size_t len = n, first_nul = n;
    for (size_t i = 0; i < n; i++) {
        uint32_t u = unit == 2 ? kiln__shape_rd_u16(p + 2 * i) : p[i];
        if (u == 0) { first_nul = i; break; }
    }
    int repaired = 0;
    if (first_nul < n) {
        for (size_t i = first_nul; i < n; i++)
            if ((unit == 2 ? kiln__shape_rd_u16(p + 2 * i) : p[i]) != 0) { repaired = 1; break; }
        if (repaired)
            kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W3", at, field, "string has a NUL at unit %zu; cut there",
                             first_nul);
        len = first_nul;
    }

    char *s = kiln_source_alloc(ctx->scene, (uint64_t)len * 4u + 1u, 1);
    if (!s) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, at, field, "string of %zu units", len);
    size_t o = 0;
    int bad = 0;
    if (unit == 2) {
        for (size_t i = 0; i < len; i++) {
            uint32_t u = kiln__shape_rd_u16(p + 2 * i);
            if (u >= 0xD800 && u <= 0xDBFF && i + 1 < len) {
                uint32_t v = kiln__shape_rd_u16(p + 2 * (i + 1));
                if (v >= 0xDC00 && v <= 0xDFFF) {
                    o += kiln__utf8_put(0x10000 + ((u - 0xD800) << 10) + (v - 0xDC00), s + o);
                    i++;
                    continue;
                }
            }
            if (u >= 0xD800 && u <= 0xDFFF) { u = 0xFFFD; bad = 1; }
            o += kiln__utf8_put(u, s + o);
        }
    } else {
        for (size_t i = 0; i < len;) {
            size_t k = kiln__utf8_valid(p + i, len - i);
            if (k == 0) {
                o += kiln__utf8_put(0xFFFD, s + o);
                bad = 1;
                i++;
                continue;
            }
            memcpy(s + o, p + i, k);
            o += k;
            i += k;
        }
    }
    s[o] = '\0';
    if (bad)
        kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W3", at, field, "%s replaced by U+FFFD",
                         unit == 2 ? "unpaired UTF-16 surrogate" : "invalid UTF-8");
    *out = s;
    return KILN_OK;
}
