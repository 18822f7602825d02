/* kiln/version.h - library version and build information.
 *
 * KILN_VERSION encodes major*1000 + minor*10 + patch, so that version checks are
 * plain integer comparisons: `#if KILN_VERSION >= 1000`.
 *
 * Thread safety: kiln_build_info returns a static string; call it from any thread.
 */
#ifndef KILN_VERSION_H
#define KILN_VERSION_H

#define KILN_VERSION_MAJOR 0
#define KILN_VERSION_MINOR 1
#define KILN_VERSION_PATCH 0
#define KILN_VERSION (KILN_VERSION_MAJOR * 1000 + KILN_VERSION_MINOR * 10 + KILN_VERSION_PATCH)

/* KILN_API marks every exported function. Define KILN_API yourself before including any
 * kiln header to add visibility or dllexport attributes. */
#ifndef KILN_API
#define KILN_API extern
#endif

/* Functions marked KILN_EXPERIMENTAL may change between minor versions without an ABI
 * promise (the SIMD sampler, for example). */
#ifndef KILN_EXPERIMENTAL
#define KILN_EXPERIMENTAL KILN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Returns a static, NUL-terminated string naming the version and the build configuration
 * (compiler, SIMD paths compiled in), for logs and benchmark output. Never NULL. */
KILN_API const char *kiln_build_info(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_VERSION_H */
