/* Private: filling and reporting kiln_diag values with node paths. */
#ifndef KILN_BAKER_DIAG_H
#define KILN_BAKER_DIAG_H

#include <stdarg.h>
#include "kiln/bake/cast.h"

#if defined(__GNUC__) || defined(__clang__)
#define KILN__PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define KILN__PRINTF(fmt_index, first_arg)
#endif

/* Fills *d (if not NULL): code, severity, offset, path of `node` (KILN_CAST_NONE: none) plus
 * "." prop when prop is not NULL, and the message "<description>: <formatted details>". */
void kiln__diag_fill(kiln_diag *d, kiln_result code, kiln_severity sev, const kiln_cast_doc *doc,
                     uint32_t node, const char *prop, uint64_t offset, const char *fmt, ...) KILN__PRINTF(8, 9);
void kiln__diag_vfill(kiln_diag *d, kiln_result code, kiln_severity sev, const kiln_cast_doc *doc,
                      uint32_t node, const char *prop, uint64_t offset, const char *fmt, va_list ap);

/* Builds a diag as above and hands it to the sink (no-op when sink or sink->fn is NULL). */
void kiln__diag_report(const kiln_diag_sink *sink, kiln_result code, kiln_severity sev,
                       const kiln_cast_doc *doc, uint32_t node, const char *prop, uint64_t offset,
                       const char *fmt, ...) KILN__PRINTF(8, 9);

#endif
