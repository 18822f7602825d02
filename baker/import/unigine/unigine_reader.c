/* The Unigine reader's cursor: bounds-checked little-endian reads, counts, strings and the
 * diagnostics that name the rule, the place in the file and the byte offset. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "unigine_internal.h"

void kiln__ug_at(kiln__ug *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->where, sizeof ctx->where, fmt, ap);
    va_end(ap);
}

static void kiln__ug_fill(kiln__ug *ctx, kiln_diag *d, kiln_result code, kiln_severity sev, const char *rule,
                          uint64_t offset, const char *fmt, va_list ap)
{
    memset(d, 0, sizeof *d);
    d->code = code;
    d->severity = sev;
    d->offset = offset;
    if (snprintf(d->path, sizeof d->path, "%s", ctx->where) < 0) d->path[0] = 0;
    snprintf(d->rule, sizeof d->rule, "%s", rule ? rule : "");
    char text[256];
    if (vsnprintf(text, sizeof text, fmt, ap) < 0) text[0] = 0;
    /* The message leads with the rule (spec 9: a reject names its rule); the path, the byte
     * offset and the input are the diag's own fields, which printers show beside it. Long
     * names are cut, not overflowed (the return value is checked for that reason). */
    if (snprintf(d->message, sizeof d->message, "%s%s%s", rule ? rule : "", rule ? ": " : "", text) < 0)
        d->message[0] = 0;
}

kiln_result kiln__ug_fail(kiln__ug *ctx, kiln_result code, const char *rule, uint64_t offset, const char *fmt, ...)
{
    if (ctx->err) {
        va_list ap;
        va_start(ap, fmt);
        kiln__ug_fill(ctx, ctx->err, code, KILN_SEVERITY_ERROR, rule, offset, fmt, ap);
        va_end(ap);
    }
    return code;
}

void kiln__ug_warn(kiln__ug *ctx, const char *rule, uint64_t offset, const char *fmt, ...)
{
    if (!ctx->opt || !ctx->opt->diag.fn) return;
    kiln_diag d;
    va_list ap;
    va_start(ap, fmt);
    kiln__ug_fill(ctx, &d, KILN_ERR_IMPORT_REPAIRED, KILN_SEVERITY_WARNING, rule, offset, fmt, ap);
    va_end(ap);
    ctx->opt->diag.fn(ctx->opt->diag.user, &d);
}

kiln_result kiln__ug_oom(kiln__ug *ctx)
{
    return kiln__ug_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, KILN_NO_OFFSET, "out of memory");
}

const char *kiln__ug_path(kiln__ug *ctx)
{
    return kiln_source_strdup(ctx->scene, ctx->where);
}

/* ---- raw reads ------------------------------------------------------------------------------ */

uint16_t kiln__ug_u16_at(const kiln__ug *ctx, size_t at)
{
    const uint8_t *p = ctx->data + at;
    return (uint16_t)(p[0] | p[1] << 8);
}

int16_t kiln__ug_i16_at(const kiln__ug *ctx, size_t at)
{
    return (int16_t)kiln__ug_u16_at(ctx, at);
}

static uint32_t kiln__ug_u32_at(const kiln__ug *ctx, size_t at)
{
    const uint8_t *p = ctx->data + at;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int32_t kiln__ug_i32_at(const kiln__ug *ctx, size_t at)
{
    uint32_t u = kiln__ug_u32_at(ctx, at);
    int32_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

float kiln__ug_f32_at(const kiln__ug *ctx, size_t at)
{
    uint32_t u = kiln__ug_u32_at(ctx, at);
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* ---- checked reads at the cursor ------------------------------------------------------------- */

kiln_result kiln__ug_need(kiln__ug *ctx, uint64_t n, const char *what)
{
    uint64_t left = ctx->size - ctx->pos;
    if (n <= left) return KILN_OK;
    return kiln__ug_fail(ctx, KILN_ERR_IMPORT_TRUNCATED, "V3", ctx->pos,
                         "%s needs %llu bytes but the file ends after %llu", what, (unsigned long long)n,
                         (unsigned long long)left);
}

kiln_result kiln__ug_u8(kiln__ug *ctx, const char *what, uint8_t *out)
{
    kiln_result r = kiln__ug_need(ctx, 1, what);
    if (r != KILN_OK) return r;
    *out = ctx->data[ctx->pos++];
    return KILN_OK;
}

kiln_result kiln__ug_i16(kiln__ug *ctx, const char *what, int16_t *out)
{
    kiln_result r = kiln__ug_need(ctx, 2, what);
    if (r != KILN_OK) return r;
    *out = kiln__ug_i16_at(ctx, ctx->pos);
    ctx->pos += 2;
    return KILN_OK;
}

kiln_result kiln__ug_f32s(kiln__ug *ctx, const char *what, uint32_t n, float *out)
{
    kiln_result r = kiln__ug_need(ctx, (uint64_t)n * 4u, what);
    if (r != KILN_OK) return r;
    for (uint32_t i = 0; i < n; i++) out[i] = kiln__ug_f32_at(ctx, ctx->pos + (size_t)i * 4u);
    ctx->pos += (size_t)n * 4u;
    return KILN_OK;
}

kiln_result kiln__ug_count(kiln__ug *ctx, const char *what, uint64_t min_size, uint32_t *out)
{
    uint64_t at = ctx->pos;
    kiln_result r = kiln__ug_need(ctx, 4, what);
    if (r != KILN_OK) return r;
    int32_t v = kiln__ug_i32_at(ctx, ctx->pos);
    ctx->pos += 4;
    if (v < 0) return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V4", at, "%s is negative (%d)", what, v);
    uint64_t need = (uint64_t)(uint32_t)v * min_size, left = ctx->size - ctx->pos;
    if (need > left)
        return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V5", at,
                             "%s %d needs at least %llu bytes but only %llu are left", what, v,
                             (unsigned long long)need, (unsigned long long)left);
    *out = (uint32_t)v;
    return KILN_OK;
}

kiln_result kiln__ug_array(kiln__ug *ctx, const char *what, uint64_t count, uint64_t elem, size_t *at)
{
    uint64_t need = count * elem, left = ctx->size - ctx->pos; /* count < 2^31, elem <= 16: no wrap */
    if (need > left)
        return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V5", ctx->pos,
                             "%llu %s need %llu bytes but only %llu are left", (unsigned long long)count, what,
                             (unsigned long long)need, (unsigned long long)left);
    *at = ctx->pos;
    ctx->pos += (size_t)need;
    return KILN_OK;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid. */
static size_t kiln__utf8_len(const uint8_t *s, size_t n)
{
    uint8_t c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1Fu;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0Fu;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07u;
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return len;
}

kiln_result kiln__ug_string(kiln__ug *ctx, const char *what, const char **out)
{
    uint64_t at = ctx->pos;
    kiln_result r = kiln__ug_need(ctx, 4, what);
    if (r != KILN_OK) return r;
    int32_t len = kiln__ug_i32_at(ctx, ctx->pos);
    ctx->pos += 4;
    if (len < 1 || len > KILN__UG_MAX_STRING)
        return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V6", at,
                             "%s: string length %d is outside 1..%d", what, len, KILN__UG_MAX_STRING);
    if ((uint64_t)len > ctx->size - ctx->pos)
        return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V5", at,
                             "%s: string of %d bytes but only %llu are left", what, len,
                             (unsigned long long)(ctx->size - ctx->pos));
    const uint8_t *s = ctx->data + ctx->pos;
    if (s[len - 1] != 0)
        return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V6", at,
                             "%s: string of %d bytes does not end with a NUL byte", what, len);
    ctx->pos += (size_t)len;
    size_t n = strlen((const char *)s);
    if (n + 1 < (size_t)len)
        kiln__ug_warn(ctx, "V23", at, "%s: NUL byte inside the string at position %zu; the name is cut there", what, n);
    /* Invalid UTF-8: each bad byte becomes U+FFFD (3 bytes). */
    size_t bad = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] < 0x80) { /* ASCII: the common case */
            i++;
            continue;
        }
        size_t l = kiln__utf8_len(s + i, n - i);
        if (!l) bad++, l = 1;
        i += l;
    }
    if (!bad) {
        *out = kiln_source_strndup(ctx->scene, (const char *)s, n);
    } else {
        kiln__ug_warn(ctx, "V23", at, "%s: %zu byte(s) of invalid UTF-8 replaced by U+FFFD", what, bad);
        char *c = kiln_source_alloc(ctx->scene, (uint64_t)n + 2u * bad + 1u, 1);
        if (c) {
            size_t o = 0;
            for (size_t i = 0; i < n;) {
                size_t l = kiln__utf8_len(s + i, n - i);
                if (!l) {
                    c[o++] = (char)0xEF, c[o++] = (char)0xBF, c[o++] = (char)0xBD;
                    i++;
                    continue;
                }
                memcpy(c + o, s + i, l);
                o += l, i += l;
            }
            c[o] = 0;
        }
        *out = c;
    }
    return *out ? KILN_OK : kiln__ug_oom(ctx);
}

kiln_result kiln__ug_magic(kiln__ug *ctx, const char *what, uint32_t magic)
{
    uint64_t at = ctx->pos;
    kiln_result r = kiln__ug_need(ctx, 4, what);
    if (r != KILN_OK) return r;
    uint32_t v = (uint32_t)kiln__ug_i32_at(ctx, ctx->pos);
    ctx->pos += 4;
    if (v == magic) return KILN_OK;
    char got[5], want[5];
    for (int i = 0; i < 4; i++) {
        unsigned char g = (unsigned char)(v >> (8 * i)), w = (unsigned char)(magic >> (8 * i));
        got[i] = g >= 0x20 && g < 0x7F ? (char)g : '?';
        want[i] = (char)w;
    }
    got[4] = want[4] = 0;
    return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_HEADER, "V7", at, "%s is \"%s\" (0x%08X), expected \"%s\"", what,
                         got, v, want);
}

kiln_result kiln__ug_extra(kiln__ug *ctx, uint64_t offset, const char *kind, const char *name, const char *detail)
{
    kiln_source_scene *sc = ctx->scene;
    if (sc->extra_count == UINT32_MAX) return kiln__ug_oom(ctx);
    /* Capacity 8, then doubled inside the arena at every power of two (the old array stays
     * until the scene is freed). */
    uint32_t n = sc->extra_count;
    if (n == 0 || (n >= 8 && (n & (n - 1)) == 0)) {
        uint64_t cap = n ? (uint64_t)n * 2u : 8u;
        kiln_source_extra *e = kiln_source_alloc(sc, cap, sizeof *e);
        if (!e) return kiln__ug_oom(ctx);
        if (n) memcpy(e, sc->extras, (size_t)n * sizeof *e);
        sc->extras = e;
    }
    kiln_source_extra *x = &sc->extras[n];
    memset(x, 0, sizeof *x);
    x->loc.path = kiln__ug_path(ctx);
    x->loc.offset = offset;
    x->kind = kind;
    x->name = name ? kiln_source_strdup(sc, name) : NULL;
    x->detail = detail ? kiln_source_strdup(sc, detail) : NULL;
    if (!x->loc.path || (name && !x->name) || (detail && !x->detail)) return kiln__ug_oom(ctx);
    sc->extra_count = n + 1;
    return KILN_OK;
}

kiln_result kiln__ug_bounds(kiln__ug *ctx, const char *kind, const char *name)
{
    uint64_t at = ctx->pos;
    float b[10];
    kiln_result r = kiln__ug_f32s(ctx, "bounding volume", 10, b);
    if (r != KILN_OK) return r;
    int finite = 1;
    for (int i = 0; i < 10; i++) finite &= isfinite(b[i]) != 0;
    if (!finite)
        kiln__ug_warn(ctx, "V24", at, "non-finite value in the bounding volume; ignored (bounds are recomputed)");
    char detail[320];
    snprintf(detail, sizeof detail, "box min (%g, %g, %g) max (%g, %g, %g); sphere centre (%g, %g, %g) radius %g",
             (double)b[0], (double)b[1], (double)b[2], (double)b[3], (double)b[4], (double)b[5], (double)b[6],
             (double)b[7], (double)b[8], (double)b[9]);
    return kiln__ug_extra(ctx, at, kind, name, detail);
}

void *kiln__ug_tmp(kiln__ug *ctx, uint64_t count, size_t size)
{
    if (count == 0) count = 1;
    if (size && count > SIZE_MAX / size) return NULL;
    const kiln_allocator *a = &ctx->scene->allocator;
    return a->realloc_fn(a->user, NULL, (size_t)count * size);
}

void kiln__ug_tmp_free(kiln__ug *ctx, void *p)
{
    const kiln_allocator *a = &ctx->scene->allocator;
    if (p) a->free_fn(a->user, p);
}
