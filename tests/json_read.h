/* A small JSON reader for the tests: parses a whole document into a malloc'd tree that the
 * tests walk with a few accessors. Header-only (static inline) so each test executable stays
 * one source file. Every accessor accepts NULL and wrong types (it answers NULL, 0 or NaN), so
 * lookups chain without checks:
 *
 *   char err[128];
 *   jr_value *doc = jr_parse(text, len, err, sizeof err);    // NULL + message on bad input
 *   double fps = jr_num(jr_get(doc, "fps"));                   // NaN when missing
 *   const jr_value *frames = jr_get(doc, "frames");
 *   for (size_t i = 0; i < jr_len(frames); i++) ... jr_at(frames, i) ...
 *   const jr_value *bones = jr_get(doc, "bones");              // an object: iterate members
 *   for (size_t i = 0; i < jr_len(bones); i++) ... jr_key(bones, i), jr_at(bones, i) ...
 *   jr_free(doc);
 *
 * Accepted: RFC 8259 JSON (UTF-8, an optional UTF-8 byte order mark), plus NaN, Infinity and
 * -Infinity as numbers because Python's json module writes them by default. Strings are decoded
 * (escapes, \u surrogate pairs to UTF-8); a string holding \u0000 is cut there by jr_str but
 * jr_str_len gives the full decoded length. Nesting is limited to JR_MAX_DEPTH so hostile input
 * cannot exhaust the stack. Object members keep document order; with duplicate keys jr_get
 * returns the last one (as Python does). Not thread-hostile: no global state. */
#ifndef KILN_TEST_JSON_READ_H
#define KILN_TEST_JSON_READ_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef JR_MAX_DEPTH
#define JR_MAX_DEPTH 256
#endif

typedef enum jr_type {
    JR_NULL,
    JR_BOOL,
    JR_NUMBER,
    JR_STRING,
    JR_ARRAY,
    JR_OBJECT
} jr_type;

typedef struct jr_value jr_value;
struct jr_value {
    jr_type   type;
    int       boolean;   /* JR_BOOL: 0 or 1 */
    double    number;    /* JR_NUMBER */
    char     *string;    /* JR_STRING: decoded, NUL-terminated */
    size_t    str_len;   /* JR_STRING: decoded length in bytes */
    size_t    count;     /* JR_ARRAY / JR_OBJECT: element or member count */
    jr_value *items;     /* JR_ARRAY: elements; JR_OBJECT: member values */
    char    **keys;      /* JR_OBJECT: member keys, parallel to items */
};

/* ---- accessors ---------------------------------------------------------------------------- */
static inline jr_type jr_type_of(const jr_value *v) { return v ? v->type : JR_NULL; }
static inline int jr_is_null(const jr_value *v) { return v && v->type == JR_NULL; }
static inline int jr_is_bool(const jr_value *v) { return v && v->type == JR_BOOL; }
static inline int jr_is_num(const jr_value *v) { return v && v->type == JR_NUMBER; }
static inline int jr_is_str(const jr_value *v) { return v && v->type == JR_STRING; }
static inline int jr_is_arr(const jr_value *v) { return v && v->type == JR_ARRAY; }
static inline int jr_is_obj(const jr_value *v) { return v && v->type == JR_OBJECT; }

static inline const char *jr_type_name(jr_type t)
{
    static const char *const names[] = {"null", "bool", "number", "string", "array", "object"};
    return (unsigned)t < 6 ? names[t] : "?";
}

/* Element or member count; 0 for anything else (and NULL). */
static inline size_t jr_len(const jr_value *v)
{
    return v && (v->type == JR_ARRAY || v->type == JR_OBJECT) ? v->count : 0;
}

/* Element i of an array, or the value of member i of an object; NULL when out of range. */
static inline const jr_value *jr_at(const jr_value *v, size_t i)
{
    return i < jr_len(v) ? &v->items[i] : NULL;
}

/* Key of member i of an object; NULL when not an object or out of range. */
static inline const char *jr_key(const jr_value *v, size_t i)
{
    return jr_is_obj(v) && i < v->count ? v->keys[i] : NULL;
}

/* Member named key of an object (the last one with duplicates); NULL if missing/not object. */
static inline const jr_value *jr_get(const jr_value *obj, const char *key)
{
    if (!jr_is_obj(obj) || !key) return NULL;
    for (size_t i = obj->count; i-- > 0;)
        if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
    return NULL;
}

static inline double jr_num(const jr_value *v) { return jr_is_num(v) ? v->number : NAN; }

/* Number, or fallback when v is not a number (e.g. a missing member). */
static inline double jr_num_or(const jr_value *v, double fallback)
{
    return jr_is_num(v) ? v->number : fallback;
}

static inline const char *jr_str(const jr_value *v) { return jr_is_str(v) ? v->string : NULL; }
static inline size_t jr_str_len(const jr_value *v) { return jr_is_str(v) ? v->str_len : 0; }

/* 1 for true, 0 for false; fallback when v is not a bool. */
static inline int jr_bool(const jr_value *v, int fallback)
{
    return jr_is_bool(v) ? v->boolean : fallback;
}

/* ---- freeing ------------------------------------------------------------------------------ */
/* Frees what v owns, not v itself (values live inline in their parent's items). */
static inline void jr__clear(jr_value *v)
{
    if (v->type == JR_STRING) free(v->string);
    if (v->type == JR_ARRAY || v->type == JR_OBJECT) {
        for (size_t i = 0; i < v->count; i++) {
            jr__clear(&v->items[i]);
            if (v->keys) free(v->keys[i]);
        }
        free(v->items);
        free(v->keys);
    }
    memset(v, 0, sizeof *v);
}

static inline void jr_free(jr_value *v)
{
    if (!v) return;
    jr__clear(v);
    free(v);
}

/* ---- parser ------------------------------------------------------------------------------- */
typedef struct jr__parser {
    const char *p, *end, *begin;
    char       *err;
    size_t      errcap;
    int         failed;
} jr__parser;

/* Records the first error only, with its line and column (1-based, columns in bytes). */
static inline int jr__fail(jr__parser *ps, const char *fmt, ...)
{
    if (ps->failed) return 0;
    ps->failed = 1;
    if (!ps->err || !ps->errcap) return 0;
    size_t line = 1, col = 1;
    for (const char *q = ps->begin; q < ps->p && q < ps->end; q++) {
        if (*q == '\n') line++, col = 1;
        else col++;
    }
    int n = snprintf(ps->err, ps->errcap, "line %zu col %zu: ", line, col);
    if (n < 0 || (size_t)n >= ps->errcap) return 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err + n, ps->errcap - (size_t)n, fmt, ap);
    va_end(ap);
    return 0;
}

static inline void jr__skip_ws(jr__parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static inline int jr__literal(jr__parser *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return 0;
    ps->p += n;
    return 1;
}

static inline int jr__hex4(jr__parser *ps, unsigned *out)
{
    if (ps->end - ps->p < 4) return jr__fail(ps, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *ps->p++;
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return jr__fail(ps, "bad hex digit in \\u escape");
    }
    *out = v;
    return 1;
}

static inline size_t jr__utf8(unsigned cp, char *o)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6)), o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)), o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)), o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Parses a string at ps->p (on the opening quote) into a malloc'd decoded copy. The decoded
 * form is never longer than the source, so one allocation of the source length suffices. */
static inline char *jr__string(jr__parser *ps, size_t *len_out)
{
    ps->p++;   /* opening quote */
    const char *start = ps->p;
    while (ps->p < ps->end && *ps->p != '"') ps->p += (*ps->p == '\\' && ps->p + 1 < ps->end) ? 2 : 1;
    if (ps->p >= ps->end) { jr__fail(ps, "unterminated string"); return NULL; }
    size_t cap = (size_t)(ps->p - start) + 1;
    char *out = (char *)malloc(cap);
    if (!out) { jr__fail(ps, "out of memory"); return NULL; }
    size_t n = 0;
    ps->p = start;
    while (*ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p;
        if (c < 0x20) { jr__fail(ps, "control character in string"); free(out); return NULL; }
        if (c != '\\') { out[n++] = (char)c, ps->p++; continue; }
        ps->p++;
        char e = *ps->p++;
        switch (e) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            unsigned cp = 0;
            if (!jr__hex4(ps, &cp)) { free(out); return NULL; }
            if (cp >= 0xD800 && cp < 0xDC00) {
                unsigned lo = 0;
                if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u') {
                    jr__fail(ps, "unpaired high surrogate");
                    free(out);
                    return NULL;
                }
                ps->p += 2;
                if (!jr__hex4(ps, &lo)) { free(out); return NULL; }
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    jr__fail(ps, "bad low surrogate");
                    free(out);
                    return NULL;
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                jr__fail(ps, "unpaired low surrogate");
                free(out);
                return NULL;
            }
            n += jr__utf8(cp, out + n);   /* at most 4 bytes for >= 6 source bytes */
            break;
        }
        default:
            ps->p--;
            jr__fail(ps, "bad escape '\\%c'", e);
            free(out);
            return NULL;
        }
    }
    ps->p++;   /* closing quote */
    out[n] = '\0';
    if (len_out) *len_out = n;
    return out;
}

/* Checks the RFC 8259 number grammar, then converts with strtod on a NUL-terminated copy
 * (the input need not be terminated). */
static inline int jr__number(jr__parser *ps, double *out)
{
    const char *s = ps->p;
    if (jr__literal(ps, "NaN")) { *out = NAN; return 1; }
    if (jr__literal(ps, "Infinity")) { *out = INFINITY; return 1; }
    if (jr__literal(ps, "-Infinity")) { *out = -INFINITY; return 1; }
    const char *q = s;
#define JR__DIGIT(c) ((c) >= '0' && (c) <= '9')
    if (q < ps->end && *q == '-') q++;
    if (q >= ps->end || !JR__DIGIT(*q)) return jr__fail(ps, "bad number");
    if (*q == '0') q++;
    else while (q < ps->end && JR__DIGIT(*q)) q++;
    if (q < ps->end && *q == '.') {
        q++;
        if (q >= ps->end || !JR__DIGIT(*q)) return jr__fail(ps, "bad number: digit expected after '.'");
        while (q < ps->end && JR__DIGIT(*q)) q++;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < ps->end && (*q == '+' || *q == '-')) q++;
        if (q >= ps->end || !JR__DIGIT(*q)) return jr__fail(ps, "bad number: exponent digits expected");
        while (q < ps->end && JR__DIGIT(*q)) q++;
    }
#undef JR__DIGIT
    size_t n = (size_t)(q - s);
    char small[64];
    char *buf = n < sizeof small ? small : (char *)malloc(n + 1);
    if (!buf) return jr__fail(ps, "out of memory");
    memcpy(buf, s, n);
    buf[n] = '\0';
    *out = strtod(buf, NULL);
    if (buf != small) free(buf);
    ps->p = q;
    return 1;
}

/* Appends an empty slot to a container being built; returns it or NULL (error recorded). */
static inline jr_value *jr__push(jr__parser *ps, jr_value *v, size_t *cap, int with_key)
{
    if (v->count == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4;
        jr_value *items = (jr_value *)realloc(v->items, ncap * sizeof *items);
        if (!items) { jr__fail(ps, "out of memory"); return NULL; }
        v->items = items;
        if (with_key) {
            char **keys = (char **)realloc(v->keys, ncap * sizeof *keys);
            if (!keys) { jr__fail(ps, "out of memory"); return NULL; }
            v->keys = keys;
        }
        *cap = ncap;
    }
    jr_value *slot = &v->items[v->count];
    memset(slot, 0, sizeof *slot);
    if (with_key) v->keys[v->count] = NULL;
    v->count++;
    return slot;
}

static inline int jr__value(jr__parser *ps, jr_value *v, int depth);

static inline int jr__array(jr__parser *ps, jr_value *v, int depth)
{
    size_t cap = 0;
    v->type = JR_ARRAY;
    ps->p++;
    jr__skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ']') { ps->p++; return 1; }
    for (;;) {
        jr_value *slot = jr__push(ps, v, &cap, 0);
        if (!slot || !jr__value(ps, slot, depth + 1)) return 0;
        jr__skip_ws(ps);
        if (ps->p >= ps->end) return jr__fail(ps, "unterminated array");
        if (*ps->p == ']') { ps->p++; return 1; }
        if (*ps->p != ',') return jr__fail(ps, "',' or ']' expected in array");
        ps->p++;
    }
}

static inline int jr__object(jr__parser *ps, jr_value *v, int depth)
{
    size_t cap = 0;
    v->type = JR_OBJECT;
    ps->p++;
    jr__skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') { ps->p++; return 1; }
    for (;;) {
        jr__skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != '"') return jr__fail(ps, "string key expected in object");
        jr_value *slot = jr__push(ps, v, &cap, 1);
        if (!slot) return 0;
        char *key = jr__string(ps, NULL);
        if (!key) return 0;
        v->keys[v->count - 1] = key;
        jr__skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != ':') return jr__fail(ps, "':' expected after object key");
        ps->p++;
        if (!jr__value(ps, slot, depth + 1)) return 0;
        jr__skip_ws(ps);
        if (ps->p >= ps->end) return jr__fail(ps, "unterminated object");
        if (*ps->p == '}') { ps->p++; return 1; }
        if (*ps->p != ',') return jr__fail(ps, "',' or '}' expected in object");
        ps->p++;
    }
}

static inline int jr__value(jr__parser *ps, jr_value *v, int depth)
{
    if (depth > JR_MAX_DEPTH) return jr__fail(ps, "nesting deeper than %d", JR_MAX_DEPTH);
    jr__skip_ws(ps);
    if (ps->p >= ps->end) return jr__fail(ps, "value expected, end of input found");
    switch (*ps->p) {
    case '{': return jr__object(ps, v, depth);
    case '[': return jr__array(ps, v, depth);
    case '"':
        v->type = JR_STRING;
        v->string = jr__string(ps, &v->str_len);
        return v->string != NULL;
    case 't':
        if (!jr__literal(ps, "true")) break;
        v->type = JR_BOOL, v->boolean = 1;
        return 1;
    case 'f':
        if (!jr__literal(ps, "false")) break;
        v->type = JR_BOOL, v->boolean = 0;
        return 1;
    case 'n':
        if (!jr__literal(ps, "null")) break;
        v->type = JR_NULL;
        return 1;
    default:
        if (*ps->p == '-' || *ps->p == 'N' || *ps->p == 'I' || (*ps->p >= '0' && *ps->p <= '9')) {
            v->type = JR_NUMBER;
            return jr__number(ps, &v->number);
        }
        break;
    }
    return jr__fail(ps, "unexpected character '%c'", *ps->p);
}

/* Parses the whole of text[0, len) as one JSON document. Returns the root (free with jr_free),
 * or NULL with a message in err (when err is not NULL) on malformed input or out of memory. */
static inline jr_value *jr_parse(const char *text, size_t len, char *err, size_t errcap)
{
    if (err && errcap) err[0] = '\0';
    jr__parser ps = {text, text ? text + len : text, text, err, errcap, 0};
    if (!text) {
        jr__fail(&ps, "no input");
        return NULL;
    }
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) ps.p += 3;
    jr_value *root = (jr_value *)calloc(1, sizeof *root);
    if (!root) {
        jr__fail(&ps, "out of memory");
        return NULL;
    }
    if (jr__value(&ps, root, 0)) {
        jr__skip_ws(&ps);
        if (ps.p == ps.end) return root;
        jr__fail(&ps, "trailing characters after the document");
    }
    jr_free(root);   /* partial trees are consistent: count only covers initialised slots */
    return NULL;
}

#endif
