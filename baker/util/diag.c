#include "diag.h"

#include <stdio.h>
#include <string.h>

void kiln__diag_vfill(kiln_diag *d, kiln_result code, kiln_severity sev, const kiln_cast_doc *doc,
                      uint32_t node, const char *prop, uint64_t offset, const char *fmt, va_list ap)
{
    if (!d) return;
    memset(d, 0, sizeof *d);
    d->code = code;
    d->severity = sev;
    d->offset = offset;
    if (doc && node != KILN_CAST_NONE) kiln_cast_node_path(doc, node, d->path, sizeof d->path);
    if (prop) {
        size_t n = strlen(d->path);
        snprintf(d->path + n, sizeof d->path - n, "%s%s", n ? "." : "", prop);
    }
    int n = snprintf(d->message, sizeof d->message, "%s", kiln_result_str(code));
    if (fmt && fmt[0] && n >= 0 && (size_t)n + 2 < sizeof d->message) {
        d->message[n++] = ':';
        d->message[n++] = ' ';
        vsnprintf(d->message + n, sizeof d->message - (size_t)n, fmt, ap);
    }
}

void kiln__diag_fill(kiln_diag *d, kiln_result code, kiln_severity sev, const kiln_cast_doc *doc,
                     uint32_t node, const char *prop, uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kiln__diag_vfill(d, code, sev, doc, node, prop, offset, fmt, ap);
    va_end(ap);
}

void kiln__diag_report(const kiln_diag_sink *sink, kiln_result code, kiln_severity sev,
                       const kiln_cast_doc *doc, uint32_t node, const char *prop, uint64_t offset,
                       const char *fmt, ...)
{
    if (!sink || !sink->fn) return;
    kiln_diag d;
    va_list ap;
    va_start(ap, fmt);
    kiln__diag_vfill(&d, code, sev, doc, node, prop, offset, fmt, ap);
    va_end(ap);
    sink->fn(sink->user, &d);
}
