#include "json.h"

#include <math.h>
#include <string.h>

void kiln__json_init(kiln__json *j, FILE *out, int indent)
{
    memset(j, 0, sizeof *j);
    j->out = out;
    j->indent = indent < 0 ? 0 : indent;
}

static void kiln__json_newline(kiln__json *j, int depth)
{
    if (!j->indent || j->inline_depth) return;
    fputc('\n', j->out);
    for (int i = 0; i < depth * j->indent; i++) fputc(' ', j->out);
}

/* Everything a value needs before it: the separator and the placement rules. Inside an
 * object a value must follow its key; inside an array it takes a comma after the first item. */
static int kiln__json_before_value(kiln__json *j)
{
    if (j->depth == 0) {
        if (j->items[0]++ > 0) j->error = 1; /* a second top-level value: not one document */
        return !j->error;
    }
    int top = j->depth - 1;
    if (j->is_object[top]) {
        if (!j->have_key) {
            j->error = 1;
            return 0;
        }
        j->have_key = 0;
        return 1;
    }
    if (j->items[j->depth]++ > 0) fputc(',', j->out);
    if (j->inline_depth && j->items[j->depth] > 1) fputc(' ', j->out);
    kiln__json_newline(j, j->depth);
    return 1;
}

static void kiln__json_begin(kiln__json *j, int is_object, int single_line)
{
    if (!kiln__json_before_value(j)) return;
    if (j->depth + 1 >= KILN_JSON_MAX_DEPTH) {
        j->error = 1;
        return;
    }
    fputc(is_object ? '{' : '[', j->out);
    j->depth++;
    j->is_object[j->depth - 1] = (uint8_t)is_object;
    j->items[j->depth] = 0;
    if (single_line && !j->inline_depth) j->inline_depth = j->depth;
}

static void kiln__json_end(kiln__json *j, int is_object)
{
    if (j->depth == 0 || j->is_object[j->depth - 1] != is_object || j->have_key) {
        j->error = 1;
        return;
    }
    int had_items = j->items[j->depth] > 0;
    int was_inline_start = j->inline_depth == j->depth;
    j->depth--;
    if (had_items) kiln__json_newline(j, j->depth);
    if (was_inline_start) j->inline_depth = 0;
    fputc(is_object ? '}' : ']', j->out);
}

void kiln__json_begin_object(kiln__json *j) { kiln__json_begin(j, 1, 0); }
void kiln__json_begin_object_inline(kiln__json *j) { kiln__json_begin(j, 1, 1); }
void kiln__json_end_object(kiln__json *j) { kiln__json_end(j, 1); }
void kiln__json_begin_array(kiln__json *j) { kiln__json_begin(j, 0, 0); }
void kiln__json_begin_array_inline(kiln__json *j) { kiln__json_begin(j, 0, 1); }
void kiln__json_end_array(kiln__json *j) { kiln__json_end(j, 0); }

void kiln__json_key(kiln__json *j, const char *key)
{
    if (j->depth == 0 || !j->is_object[j->depth - 1] || j->have_key) {
        j->error = 1;
        return;
    }
    if (j->items[j->depth]++ > 0) fputc(',', j->out);
    if (j->inline_depth && j->items[j->depth] > 1) fputc(' ', j->out);
    kiln__json_newline(j, j->depth);
    kiln__json_write_escaped(j->out, key ? key : "", key ? strlen(key) : 0);
    fputs(j->indent ? ": " : ":", j->out);
    j->have_key = 1;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when the bytes there are not one.
 * Overlong forms, surrogates (U+D800..DFFF) and values above U+10FFFF are invalid. */
static size_t kiln__utf8_valid(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;       /* overlong */
        else if (c == 0xED) hi = 0x9F;  /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;       /* overlong */
        else if (c == 0xF4) hi = 0x8F;  /* above U+10FFFF */
    } else {
        return 0;
    }
    if (left < n) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    return n;
}

void kiln__json_write_escaped(FILE *out, const char *str, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', out);
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        if (c >= 0x80) {
            size_t n = kiln__utf8_valid(s + i, len - i);
            if (n) {
                fwrite(s + i, 1, n, out);
                i += n;
            } else {
                /* One replacement character per invalid byte: simple, and never swallows a
                 * valid character that follows a broken lead byte. */
                fputs("\\ufffd", out);
                i++;
            }
            continue;
        }
        switch (c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\b': fputs("\\b", out); break;
        case '\f': fputs("\\f", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (c < 0x20 || c == 0x7F) {
                fputs("\\u00", out);
                fputc(hex[c >> 4], out);
                fputc(hex[c & 15], out);
            } else {
                fputc(c, out);
            }
        }
        i++;
    }
    fputc('"', out);
}

void kiln__json_string_n(kiln__json *j, const char *s, size_t len)
{
    if (!kiln__json_before_value(j)) return;
    kiln__json_write_escaped(j->out, s, len);
}

void kiln__json_string(kiln__json *j, const char *s)
{
    if (!s) {
        kiln__json_null(j);
        return;
    }
    kiln__json_string_n(j, s, strlen(s));
}

void kiln__json_f64(kiln__json *j, double v)
{
    if (!kiln__json_before_value(j)) return;
    if (!isfinite(v)) {
        fputs("null", j->out);
        return;
    }
    /* -0 prints as "-0", which is valid JSON and keeps the sign. */
    fprintf(j->out, "%.9g", v);
}

void kiln__json_u64(kiln__json *j, uint64_t v)
{
    if (!kiln__json_before_value(j)) return;
    fprintf(j->out, "%llu", (unsigned long long)v);
}

void kiln__json_i64(kiln__json *j, int64_t v)
{
    if (!kiln__json_before_value(j)) return;
    fprintf(j->out, "%lld", (long long)v);
}

void kiln__json_bool(kiln__json *j, int v)
{
    if (!kiln__json_before_value(j)) return;
    fputs(v ? "true" : "false", j->out);
}

void kiln__json_null(kiln__json *j)
{
    if (!kiln__json_before_value(j)) return;
    fputs("null", j->out);
}

void kiln__json_f32_array(kiln__json *j, const float *v, size_t count)
{
    kiln__json_begin_array_inline(j);
    for (size_t i = 0; i < count; i++) kiln__json_f64(j, v[i]);
    kiln__json_end_array(j);
}

void kiln__json_key_string(kiln__json *j, const char *key, const char *s) { kiln__json_key(j, key); kiln__json_string(j, s); }
void kiln__json_key_f64(kiln__json *j, const char *key, double v) { kiln__json_key(j, key); kiln__json_f64(j, v); }
void kiln__json_key_u64(kiln__json *j, const char *key, uint64_t v) { kiln__json_key(j, key); kiln__json_u64(j, v); }
void kiln__json_key_i64(kiln__json *j, const char *key, int64_t v) { kiln__json_key(j, key); kiln__json_i64(j, v); }
void kiln__json_key_bool(kiln__json *j, const char *key, int v) { kiln__json_key(j, key); kiln__json_bool(j, v); }
void kiln__json_key_null(kiln__json *j, const char *key) { kiln__json_key(j, key); kiln__json_null(j); }

int kiln__json_finish(kiln__json *j)
{
    fputc('\n', j->out);
    return (j->error || j->depth != 0 || j->have_key || j->items[0] != 1) ? -1 : 0;
}
