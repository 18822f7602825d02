/* Private: diagnostics of the bake stages, about items of the source layer. A stage names the
 * item by its kiln_source_loc (path inside the input, byte offset) and optionally a field;
 * it never sees the input's format. (diag.h is the Cast reader's counterpart, by node.) */
#ifndef KILN_BAKER_BAKE_REPORT_H
#define KILN_BAKER_BAKE_REPORT_H

#include <stdarg.h>
#include "kiln/bake/source.h"

#if defined(__GNUC__) || defined(__clang__)
#define KILN__REPORT_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define KILN__REPORT_PRINTF(fmt_index, first_arg)
#endif

/* Fills *d (if not NULL): code, severity, `offset`, the path "<loc->path>[.<field>]" (loc NULL
 * or its path NULL: just the field, or nothing) and the message "<description>: <details>". */
void kiln__bake_report_vfill(kiln_diag *d, kiln_result code, kiln_severity sev, const kiln_source_loc *loc,
                        const char *field, uint64_t offset, const char *fmt, va_list ap);
void kiln__bake_report_fill(kiln_diag *d, kiln_result code, kiln_severity sev, const kiln_source_loc *loc,
                       const char *field, uint64_t offset, const char *fmt, ...) KILN__REPORT_PRINTF(7, 8);

/* Builds a diag as above and hands it to the sink (no-op when sink or sink->fn is NULL). */
void kiln__bake_report(const kiln_diag_sink *sink, kiln_result code, kiln_severity sev, const kiln_source_loc *loc,
                  const char *field, uint64_t offset, const char *fmt, ...) KILN__REPORT_PRINTF(7, 8);

#endif
