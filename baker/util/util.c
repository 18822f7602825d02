/* Owned strings, lexical path arithmetic and aligned blocks for the bake stages. */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <unistd.h>

#include "kiln/alloc.h"
#include "util.h"
#include "ds.h"

char *kiln__strndup(const kiln_allocator *a, const char *s, size_t len)
{
    char *d = kiln__realloc(a, NULL, len + 1);
    if (!d) return NULL;
    if (len) memcpy(d, s, len);
    d[len] = 0;
    return d;
}

char *kiln__strdup(const kiln_allocator *a, const char *s)
{
    return s ? kiln__strndup(a, s, strlen(s)) : NULL;
}

char *kiln__strfmt(const kiln_allocator *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *d = kiln__realloc(a, NULL, (size_t)n + 1);
    if (!d) return NULL;
    va_start(ap, fmt);
    vsnprintf(d, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return d;
}

/* ---- paths ----------------------------------------------------------------------------------- */

static int kiln__is_sep(char c) { return c == '/' || c == '\\'; }

static int kiln__has_drive(const char *p)
{
    return ((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) && p[1] == ':';
}

int kiln__path_is_absolute(const char *path)
{
    if (!path || !path[0]) return 0;
    if (kiln__is_sep(path[0])) return 1;
    return kiln__has_drive(path) && kiln__is_sep(path[2]);
}

/* Index just past the last separator, 0 when there is none. */
static size_t kiln__last_component(const char *path)
{
    size_t at = 0;
    for (size_t i = 0; path[i]; i++)
        if (kiln__is_sep(path[i])) at = i + 1;
    return at;
}

char *kiln__path_dirname(const kiln_allocator *a, const char *path)
{
    if (!path) path = "";
    size_t cut = kiln__last_component(path);
    if (cut == 0) return kiln__strdup(a, ".");
    /* Keep the separator of a root ("/x" -> "/", "C:/x" -> "C:/"). */
    size_t prefix = kiln__has_drive(path) ? 3 : 1;
    size_t len = cut - 1;
    if (kiln__path_is_absolute(path) && len < prefix) len = prefix;
    return kiln__strndup(a, path, len);
}

char *kiln__path_stem(const kiln_allocator *a, const char *path)
{
    if (!path) path = "";
    const char *base = path + kiln__last_component(path);
    const char *dot = strrchr(base, '.');
    size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    return kiln__strndup(a, base, len);
}

char *kiln__path_normalise(const kiln_allocator *a, const char *path)
{
    if (!path) path = "";
    size_t len = strlen(path);
    char *out = kiln__realloc(a, NULL, len + 4);
    if (!out) return NULL;

    const char *p = path;
    size_t n = 0;
    if (kiln__has_drive(p)) {
        out[n++] = p[0];
        out[n++] = ':';
        p += 2;
    }
    int absolute = kiln__is_sep(*p);
    if (absolute) out[n++] = '/';
    size_t root = n; /* components are written after this; it is never popped */

    while (*p) {
        while (kiln__is_sep(*p)) p++;
        const char *c = p;
        while (*p && !kiln__is_sep(*p)) p++;
        size_t clen = (size_t)(p - c);
        if (clen == 0 || (clen == 1 && c[0] == '.')) continue;
        if (clen == 2 && c[0] == '.' && c[1] == '.') {
            /* The last written component starts after the last '/' beyond the root. */
            size_t start = n;
            while (start > root && out[start - 1] != '/') start--;
            int last_is_up = n - start == 2 && out[start] == '.' && out[start + 1] == '.';
            if (n > root && !last_is_up) {
                n = start > root ? start - 1 : root;
                continue;
            }
            if (absolute) continue; /* nothing above the root */
        }
        if (n > root) out[n++] = '/';
        memcpy(out + n, c, clen);
        n += clen;
    }
    if (n == 0) out[n++] = '.';
    out[n] = 0;
    return out;
}

char *kiln__path_join(const kiln_allocator *a, const char *dir, const char *path)
{
    if (!path) path = "";
    if (!dir || !dir[0] || kiln__path_is_absolute(path)) return kiln__path_normalise(a, path);
    char *joined = kiln__strfmt(a, "%s/%s", dir, path);
    if (!joined) return NULL;
    char *norm = kiln__path_normalise(a, joined);
    kiln__free(a, joined);
    return norm;
}

char *kiln__path_absolute(const kiln_allocator *a, const char *path)
{
    if (kiln__path_is_absolute(path)) return kiln__path_normalise(a, path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return kiln__path_normalise(a, path);
    return kiln__path_join(a, cwd, path);
}

/* Length of the first component of normalised `p` (its root "/" or "C:/" counts as one). */
static size_t kiln__component(const char *p)
{
    if (kiln__has_drive(p)) return p[2] == '/' ? 3 : 2;
    if (p[0] == '/') return 1;
    size_t n = 0;
    while (p[n] && p[n] != '/') n++;
    return n;
}

char *kiln__path_relative(const kiln_allocator *a, const char *from, const char *to)
{
    char *f = kiln__path_absolute(a, from), *t = kiln__path_absolute(a, to), *out = NULL;
    if (!f || !t) goto done;
    const char *pf = f, *pt = t;
    /* Skip the common leading components. */
    for (;;) {
        size_t nf = kiln__component(pf), nt = kiln__component(pt);
        if (!nf || nf != nt || memcmp(pf, pt, nf) != 0) break;
        pf += nf, pt += nt;
        if (*pf == '/' && pf[-1] != '/') pf++;
        if (*pt == '/' && pt[-1] != '/') pt++;
    }
    if (pf == f) { /* nothing in common: another root or drive */
        out = kiln__strdup(a, t);
        goto done;
    }
    size_t ups = 0;
    for (const char *p = pf; *p;) {
        size_t n = kiln__component(p);
        if (!(n == 1 && p[0] == '.')) ups++;
        p += n;
        if (*p == '/') p++;
    }
    size_t rest = strlen(pt), len = ups * 3 + rest;
    out = kiln__realloc(a, NULL, len + 2);
    if (!out) goto done;
    size_t n = 0;
    for (size_t i = 0; i < ups; i++) memcpy(out + n, "../", 3), n += 3;
    memcpy(out + n, pt, rest);
    n += rest;
    if (n && out[n - 1] == '/') n--;
    if (n == 0) out[n++] = '.';
    out[n] = 0;
done:
    kiln__free(a, f);
    kiln__free(a, t);
    return out;
}

/* ---- aligned blocks -------------------------------------------------------------------------- */

void *kiln__aligned_alloc(const kiln_allocator *a, size_t size, size_t align)
{
    if (size > SIZE_MAX - align - sizeof(void *)) return NULL;
    unsigned char *raw = kiln__realloc(a, NULL, size + align + sizeof(void *));
    if (!raw) return NULL;
    uintptr_t at = ((uintptr_t)raw + sizeof(void *) + align - 1) & ~(uintptr_t)(align - 1);
    unsigned char *p = raw + (at - (uintptr_t)raw);
    memcpy(p - sizeof(void *), &raw, sizeof raw);
    memset(p, 0, size);
    return p;
}

void kiln__aligned_free(const kiln_allocator *a, void *p)
{
    if (!p) return;
    void *raw;
    memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof raw);
    kiln__free(a, raw);
}
