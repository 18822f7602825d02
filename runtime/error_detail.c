/* The per-thread record behind kiln_error_detail. */
#include "error_detail.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local kiln_diag kiln__detail = {KILN_OK, KILN_SEVERITY_ERROR, KILN_NO_OFFSET, "", "", ""};

static _Thread_local unsigned kiln__serial;

const kiln_diag *kiln_error_detail(void) { return &kiln__detail; }

unsigned kiln__fail_serial(void) { return kiln__serial; }

kiln_result kiln__fail(kiln_result code, const char *where, const char *fmt, ...)
{
    kiln_diag *d = &kiln__detail;
    kiln__serial++;
    d->code = code;
    d->severity = KILN_SEVERITY_ERROR;
    d->offset = KILN_NO_OFFSET;
    d->rule[0] = '\0';
    snprintf(d->path, sizeof d->path, "%s", where);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->message, sizeof d->message, fmt, ap);
    va_end(ap);
    return code;
}
