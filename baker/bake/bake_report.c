#include "bake_report.h"

#include <stdio.h>
#include <string.h>

void kiln__bake_report_vfill(kiln_diag *d, kiln_result code, kiln_severity sev, const kiln_source_loc *loc,
                        const char *field, uint64_t offset, const char *fmt, va_list ap)
{
    if (!d) return;
    memset(d, 0, sizeof *d);
    d->code = code;
    d->severity = sev;
    d->offset = offset;
    if (loc && loc->path) snprintf(d->path, sizeof d->path, "%s", loc->path);
    if (field) {
        size_t n = strlen(d->path);
        snprintf(d->path + n, sizeof d->path - n, "%s%s", n ? "." : "", field);
    }
    int n = snprintf(d->message, sizeof d->message, "%s", kiln_result_str(code));
    if (fmt && fmt[0] && n >= 0 && (size_t)n + 2 < sizeof d->message) {
        d->message[n++] = ':';
        d->message[n++] = ' ';
        vsnprintf(d->message + n, sizeof d->message - (size_t)n, fmt, ap);
    }
}

void kiln__bake_report_fill(kiln_diag *d, kiln_result code, kiln_severity sev, const kiln_source_loc *loc,
                       const char *field, uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kiln__bake_report_vfill(d, code, sev, loc, field, offset, fmt, ap);
    va_end(ap);
}

void kiln__bake_report(const kiln_diag_sink *sink, kiln_result code, kiln_severity sev, const kiln_source_loc *loc,
                  const char *field, uint64_t offset, const char *fmt, ...)
{
    if (!sink || !sink->fn) return;
    kiln_diag d;
    va_list ap;
    va_start(ap, fmt);
    kiln__bake_report_vfill(&d, code, sev, loc, field, offset, fmt, ap);
    va_end(ap);
    sink->fn(sink->user, &d);
}
