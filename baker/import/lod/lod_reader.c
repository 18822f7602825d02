/* Bounded reads over the input, diagnostics, and Windows-1251 names (spec section 0). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lod_internal.h"

void kiln__lod_rd_init(kiln__lod_rd *rd, const kiln__lod *c, uint64_t pos, uint64_t end, const char *path)
{
    memset(rd, 0, sizeof *rd);
    rd->data = c->data;
    rd->pos = pos;
    rd->end = end;
    rd->path = path;
    rd->overrun_rule = "R7";
}

uint64_t kiln__lod_left(const kiln__lod_rd *rd)
{
    return rd->pos < rd->end ? rd->end - rd->pos : 0;
}

static void kiln__lod_vfill(kiln_diag *d, kiln_result code, kiln_severity sev, const char *rule, const char *path,
                            uint64_t offset, const char *fmt, va_list ap)
{
    memset(d, 0, sizeof *d);
    d->code = code;
    d->severity = sev;
    d->offset = offset;
    snprintf(d->path, sizeof d->path, "%s", path ? path : "");
    snprintf(d->rule, sizeof d->rule, "%s", rule ? rule : "");
    /* As the other importers word it: a reject says what kind of failure it is, then the
     * specifics; a repair only the specifics. The rule, path and offset have their own fields. */
    int n = 0;
    if (code != KILN_ERR_IMPORT_REPAIRED) n = snprintf(d->message, sizeof d->message, "%s: ", kiln_result_str(code));
    if (n >= 0 && (size_t)n < sizeof d->message) vsnprintf(d->message + n, sizeof d->message - (size_t)n, fmt, ap);
}

kiln_result kiln__lod_fail(kiln__lod *c, kiln_result code, const char *rule, const char *path, uint64_t offset,
                           const char *fmt, ...)
{
    if (c->err) {
        va_list ap;
        va_start(ap, fmt);
        kiln__lod_vfill(c->err, code, KILN_SEVERITY_ERROR, rule, path, offset, fmt, ap);
        va_end(ap);
    }
    return code;
}

void kiln__lod_warn(kiln__lod *c, kiln_severity sev, const char *rule, const char *path, uint64_t offset,
                    const char *fmt, ...)
{
    if (!c->sink.fn) return;
    kiln_diag d;
    va_list ap;
    va_start(ap, fmt);
    kiln__lod_vfill(&d, KILN_ERR_IMPORT_REPAIRED, sev, rule, path, offset, fmt, ap);
    va_end(ap);
    c->sink.fn(c->sink.user, &d);
}

const char *kiln__lod_path(kiln__lod *c, const char *base, const char *label, uint32_t index)
{
    /* Built by hand: one path per bone, face group or chunk, and printf would dominate. */
    char digits[10];
    int nd = 0;
    do {
        digits[nd++] = (char)('0' + index % 10);
        index /= 10;
    } while (index);
    size_t lb = strlen(base), ll = strlen(label);
    char *p = kiln_source_alloc(c->scene, lb + ll + (size_t)nd + 4, 1);
    if (!p) return NULL;
    memcpy(p, base, lb);
    p[lb] = '/';
    memcpy(p + lb + 1, label, ll);
    size_t o = lb + 1 + ll;
    p[o++] = '[';
    while (nd) p[o++] = digits[--nd];
    p[o++] = ']';
    p[o] = 0;
    return p;
}

kiln_result kiln__lod_oom(kiln__lod *c, const char *path, uint64_t offset)
{
    return kiln__lod_fail(c, KILN_ERR_OUT_OF_MEMORY, "", path, offset, "out of memory");
}

static kiln_result kiln__lod_need(kiln__lod *c, kiln__lod_rd *rd, const char *what, uint64_t bytes)
{
    if (bytes <= kiln__lod_left(rd)) return KILN_OK;
    if (rd->soft) {
        rd->failed_field = what;
        return KILN_ERR_IMPORT_TRUNCATED;
    }
    return kiln__lod_fail(c, KILN_ERR_IMPORT_TRUNCATED, rd->overrun_rule, rd->path, rd->pos,
                          "%s (%llu bytes) runs past the end of its %s (%llu bytes left)", what,
                          (unsigned long long)bytes, strcmp(rd->overrun_rule, "R17") == 0 ? "shader record" : "chunk",
                          (unsigned long long)kiln__lod_left(rd));
}

uint16_t kiln__lod_ld_u16(const kiln__lod *c, uint64_t off)
{
    const uint8_t *p = c->data + off;
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

uint32_t kiln__lod_ld_u32(const kiln__lod *c, uint64_t off)
{
    const uint8_t *p = c->data + off;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

float kiln__lod_ld_f32(const kiln__lod *c, uint64_t off)
{
    uint32_t u = kiln__lod_ld_u32(c, off);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint32_t kiln__lod_ld_index(const kiln__lod *c, uint64_t off, uint32_t width)
{
    if (width == 1) return c->data[off];
    if (width == 2) return kiln__lod_ld_u16(c, off);
    return kiln__lod_ld_u32(c, off);
}

kiln_result kiln__lod_u8(kiln__lod *c, kiln__lod_rd *rd, const char *what, uint8_t *out)
{
    kiln_result r = kiln__lod_need(c, rd, what, 1);
    if (r != KILN_OK) return r;
    *out = c->data[rd->pos++];
    return KILN_OK;
}

kiln_result kiln__lod_i16(kiln__lod *c, kiln__lod_rd *rd, const char *what, int16_t *out)
{
    kiln_result r = kiln__lod_need(c, rd, what, 2);
    if (r != KILN_OK) return r;
    *out = (int16_t)kiln__lod_ld_u16(c, rd->pos);
    rd->pos += 2;
    return KILN_OK;
}

kiln_result kiln__lod_i32(kiln__lod *c, kiln__lod_rd *rd, const char *what, int32_t *out)
{
    kiln_result r = kiln__lod_need(c, rd, what, 4);
    if (r != KILN_OK) return r;
    *out = (int32_t)kiln__lod_ld_u32(c, rd->pos);
    rd->pos += 4;
    return KILN_OK;
}

kiln_result kiln__lod_f32(kiln__lod *c, kiln__lod_rd *rd, const char *what, float *out)
{
    kiln_result r = kiln__lod_need(c, rd, what, 4);
    if (r != KILN_OK) return r;
    *out = kiln__lod_ld_f32(c, rd->pos);
    rd->pos += 4;
    return KILN_OK;
}

kiln_result kiln__lod_count(kiln__lod *c, kiln__lod_rd *rd, const char *what, uint32_t *out)
{
    uint64_t at = rd->pos;
    int32_t v;
    kiln_result r = kiln__lod_i32(c, rd, what, &v);
    if (r != KILN_OK) return r;
    if (v < 0) {
        if (rd->soft) {
            rd->failed_field = what;
            return KILN_ERR_IMPORT_BAD_COUNT;
        }
        return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_COUNT, "R8", rd->path, at, "%s is negative (%d)", what, v);
    }
    *out = (uint32_t)v;
    return KILN_OK;
}

kiln_result kiln__lod_span(kiln__lod *c, kiln__lod_rd *rd, const char *what, uint64_t count, uint64_t elem,
                           uint64_t *offset)
{
    /* count < 2^31 and elem is small, so the product fits in 64 bits. */
    kiln_result r = kiln__lod_need(c, rd, what, count * elem);
    if (r != KILN_OK) return r;
    *offset = rd->pos;
    rd->pos += count * elem;
    return KILN_OK;
}

/* Windows-1251 bytes 0x80..0xFF; 0x98 is undefined (U+FFFD). */
static const uint16_t kiln__cp1251[128] = {
    0x0402, 0x0403, 0x201A, 0x0453, 0x201E, 0x2026, 0x2020, 0x2021,
    0x20AC, 0x2030, 0x0409, 0x2039, 0x040A, 0x040C, 0x040B, 0x040F,
    0x0452, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0xFFFD, 0x2122, 0x0459, 0x203A, 0x045A, 0x045C, 0x045B, 0x045F,
    0x00A0, 0x040E, 0x045E, 0x0408, 0x00A4, 0x0490, 0x00A6, 0x00A7,
    0x0401, 0x00A9, 0x0404, 0x00AB, 0x00AC, 0x00AD, 0x00AE, 0x0407,
    0x00B0, 0x00B1, 0x0406, 0x0456, 0x0491, 0x00B5, 0x00B6, 0x00B7,
    0x0451, 0x2116, 0x0454, 0x00BB, 0x0458, 0x0405, 0x0455, 0x0457,
    0x0410, 0x0411, 0x0412, 0x0413, 0x0414, 0x0415, 0x0416, 0x0417,
    0x0418, 0x0419, 0x041A, 0x041B, 0x041C, 0x041D, 0x041E, 0x041F,
    0x0420, 0x0421, 0x0422, 0x0423, 0x0424, 0x0425, 0x0426, 0x0427,
    0x0428, 0x0429, 0x042A, 0x042B, 0x042C, 0x042D, 0x042E, 0x042F,
    0x0430, 0x0431, 0x0432, 0x0433, 0x0434, 0x0435, 0x0436, 0x0437,
    0x0438, 0x0439, 0x043A, 0x043B, 0x043C, 0x043D, 0x043E, 0x043F,
    0x0440, 0x0441, 0x0442, 0x0443, 0x0444, 0x0445, 0x0446, 0x0447,
    0x0448, 0x0449, 0x044A, 0x044B, 0x044C, 0x044D, 0x044E, 0x044F,
};

const char *kiln__lod_decode(kiln__lod *c, uint64_t offset, uint64_t len, const char *path, const char *what)
{
    const uint8_t *s = c->data + offset;
    const uint8_t *nul = len ? memchr(s, 0, (size_t)len) : NULL;
    uint64_t n = nul ? (uint64_t)(nul - s) : len;
    if (nul)
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W8", path, offset + n,
                       "%s holds a NUL byte at position %llu: the text is cut there", what, (unsigned long long)n);
    /* Every CP1251 byte becomes at most 3 UTF-8 bytes. */
    char *out = kiln_source_alloc(c->scene, n * 3 + 1, 1);
    if (!out) return NULL;
    size_t o = 0;
    int undefined = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t u = s[i] < 0x80 ? s[i] : kiln__cp1251[s[i] - 0x80];
        if (s[i] == 0x98) undefined++;
        if (u < 0x80) {
            out[o++] = (char)u;
        } else if (u < 0x800) {
            out[o++] = (char)(0xC0 | u >> 6);
            out[o++] = (char)(0x80 | (u & 0x3F));
        } else {
            out[o++] = (char)(0xE0 | u >> 12);
            out[o++] = (char)(0x80 | (u >> 6 & 0x3F));
            out[o++] = (char)(0x80 | (u & 0x3F));
        }
    }
    out[o] = 0;
    if (undefined)
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W8", path, offset,
                       "%s holds byte 0x98, undefined in Windows-1251 (%d time%s): decoded as U+FFFD", what, undefined,
                       undefined == 1 ? "" : "s");
    return out;
}

kiln_result kiln__lod_lstr(kiln__lod *c, kiln__lod_rd *rd, const char *what, const char **out)
{
    uint32_t len = 0;
    uint64_t at = 0;
    kiln_result r = kiln__lod_count(c, rd, what, &len);
    if (r == KILN_OK) r = kiln__lod_span(c, rd, what, len, 1, &at);
    if (r != KILN_OK) return r;
    *out = kiln__lod_decode(c, at, len, rd->path, what);
    return *out ? KILN_OK : kiln__lod_oom(c, rd->path, at);
}

kiln_result kiln__lod_finite(kiln__lod *c, const char *path, uint64_t off, uint64_t count, const char *what)
{
    for (uint64_t i = 0; i < count; i++) {
        float f = kiln__lod_ld_f32(c, off + 4 * i);
        if (!isfinite(f))
            return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_VALUE, "R9", path, off + 4 * i,
                                  "%s value %llu is not finite (%g)", what, (unsigned long long)i, (double)f);
    }
    return KILN_OK;
}

void *kiln__lod_grow(kiln__lod *c, void *array, uint32_t count, uint32_t *cap, size_t elem)
{
    if (count < *cap) return array;
    if (count == UINT32_MAX) return NULL;
    uint32_t ncap = *cap ? (*cap > UINT32_MAX / 2 ? UINT32_MAX : *cap * 2) : 8;
    void *grown = kiln_source_alloc(c->scene, ncap, elem);
    if (!grown) return NULL;
    if (count) memcpy(grown, array, (size_t)count * elem);
    *cap = ncap;
    return grown;
}

kiln_result kiln__lod_extra(kiln__lod *c, const char *kind, const char *name, const char *path, uint64_t offset,
                            uint64_t size, const char *detail)
{
    kiln_source_extra *e;
    KILN__LOD_PUSH(c, c->extras, c->extra_count, c->extra_cap, e);
    if (!e) return kiln__lod_oom(c, path, offset);
    e->kind = kind;
    e->name = name;
    e->detail = detail;
    e->loc.path = path;
    e->loc.offset = offset;
    e->loc.size = size;
    return KILN_OK;
}
