/* runtime/error_detail.h - recording which argument a runtime call rejected (kiln_error_detail).
 * Private. */
#ifndef KILN_ERROR_DETAIL_H
#define KILN_ERROR_DETAIL_H

#include "kiln/result.h"

#if defined(__GNUC__) || defined(__clang__)
#define KILN__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KILN__PRINTF(f, a)
#endif

/* Records `code`, `where` ("function: argument") and the formatted message in this thread's
 * detail and returns `code`, so that a check reads `return kiln__fail(...)`. Only ever called
 * on a failure path. */
kiln_result kiln__fail(kiln_result code, const char *where, const char *fmt, ...) KILN__PRINTF(3, 4);
/* Counts this thread's kiln__fail calls: a caller that compares it before and after a call
 * knows whether that call recorded a detail. */
unsigned kiln__fail_serial(void);

#endif /* KILN_ERROR_DETAIL_H */
