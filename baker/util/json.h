/* Private: a small streaming JSON writer to a FILE*, for the CLI's machine-readable output
 * (inspect --json, bake reports, pose dumps).
 *
 *   kiln__json j;
 *   kiln__json_init(&j, stdout, 2);            // indent 2; 0 = one line
 *   kiln__json_begin_object(&j);
 *   kiln__json_key_u64(&j, "bytes", size);
 *   kiln__json_key(&j, "position");
 *   kiln__json_begin_array_inline(&j);         // stays on one line when indenting
 *   for (int i = 0; i < 3; i++) kiln__json_f64(&j, p[i]);
 *   kiln__json_end_array(&j);
 *   kiln__json_end_object(&j);
 *   if (kiln__json_finish(&j) != 0) ...        // misuse (unbalanced, value without key, ...)
 *
 * Commas and indentation are tracked with a fixed-depth stack, so the writer never allocates.
 * Strings are escaped for JSON: quotes, backslashes and every control character, and bytes
 * that are not valid UTF-8 become U+FFFD, so any name taken from a file yields a valid
 * document. Floats use %.9g (enough to round-trip a float32); NaN and infinities, which JSON
 * cannot express, are written as null. Misuse does not write broken output silently: it sets
 * an error flag returned by kiln__json_finish (write errors stay on the FILE, see ferror).
 */
#ifndef KILN_BAKER_JSON_H
#define KILN_BAKER_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define KILN_JSON_MAX_DEPTH 32

typedef struct kiln__json {
    FILE    *out;
    int      indent;                 /* spaces per level; 0: compact single line */
    int      depth;                  /* open containers */
    int      error;                  /* misuse seen */
    int      have_key;               /* a key was written, its value is due */
    int      inline_depth;           /* depth at which single-line mode started; 0 = none */
    uint8_t  is_object[KILN_JSON_MAX_DEPTH];
    uint32_t items[KILN_JSON_MAX_DEPTH]; /* members written so far per container */
} kiln__json;

void kiln__json_init(kiln__json *j, FILE *out, int indent);

void kiln__json_begin_object(kiln__json *j);
void kiln__json_end_object(kiln__json *j);
void kiln__json_begin_array(kiln__json *j);
/* An array printed on one line even when indenting (vectors, short lists). Containers nested
 * inside it are on the same line too. */
void kiln__json_begin_array_inline(kiln__json *j);
void kiln__json_begin_object_inline(kiln__json *j);
void kiln__json_end_array(kiln__json *j);

/* A member name; the next call must write its value. */
void kiln__json_key(kiln__json *j, const char *key);

void kiln__json_string(kiln__json *j, const char *s);               /* NULL: null */
void kiln__json_string_n(kiln__json *j, const char *s, size_t len); /* not NUL-terminated */
void kiln__json_f64(kiln__json *j, double v);
void kiln__json_u64(kiln__json *j, uint64_t v);
void kiln__json_i64(kiln__json *j, int64_t v);
void kiln__json_bool(kiln__json *j, int v);
void kiln__json_null(kiln__json *j);
void kiln__json_f32_array(kiln__json *j, const float *v, size_t count); /* inline array */

/* key + value in one call. */
void kiln__json_key_string(kiln__json *j, const char *key, const char *s);
void kiln__json_key_f64(kiln__json *j, const char *key, double v);
void kiln__json_key_u64(kiln__json *j, const char *key, uint64_t v);
void kiln__json_key_i64(kiln__json *j, const char *key, int64_t v);
void kiln__json_key_bool(kiln__json *j, const char *key, int v);
void kiln__json_key_null(kiln__json *j, const char *key);

/* Ends the document with a newline. Returns 0 when every container was closed and no misuse
 * happened, -1 otherwise. Does not flush. */
int kiln__json_finish(kiln__json *j);

/* Writes `s` (len bytes) as a quoted, escaped JSON string. Exposed for tests and for callers
 * that assemble JSON by hand. */
void kiln__json_write_escaped(FILE *out, const char *s, size_t len);

#endif
