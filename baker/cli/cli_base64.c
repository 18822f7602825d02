/* Base64 (RFC 4648, with padding) of typed arrays, for the data of `kiln view`'s page: a
 * Float32Array travels as a third more bytes than its binary form, not as decimal text. */
#include "cli_view.h"

static const char kiln__b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void kiln__base64_write(FILE *out, const void *data, size_t size)
{
    const unsigned char *p = data;
    char buf[4096];
    size_t n = 0, i = 0;
    fputc('"', out);
    for (; i + 3 <= size; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        buf[n++] = kiln__b64[v >> 18];
        buf[n++] = kiln__b64[(v >> 12) & 63];
        buf[n++] = kiln__b64[(v >> 6) & 63];
        buf[n++] = kiln__b64[v & 63];
        if (n + 4 > sizeof buf) fwrite(buf, 1, n, out), n = 0;
    }
    if (i < size) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < size ? (uint32_t)p[i + 1] << 8 : 0u);
        buf[n++] = kiln__b64[v >> 18];
        buf[n++] = kiln__b64[(v >> 12) & 63];
        buf[n++] = i + 1 < size ? kiln__b64[(v >> 6) & 63] : '=';
        buf[n++] = '=';
    }
    fwrite(buf, 1, n, out);
    fputc('"', out);
}
