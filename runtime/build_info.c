#include "kiln/version.h"

#define KILN__STR2(x) #x
#define KILN__STR(x) KILN__STR2(x)

#if defined(__clang__)
#define KILN__COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define KILN__COMPILER "gcc " __VERSION__
#else
#define KILN__COMPILER "unknown compiler"
#endif

#if defined(KILN_FORCE_SCALAR)
#define KILN__SIMD "scalar"
#elif defined(__x86_64__) || defined(_M_X64)
#define KILN__SIMD "scalar+sse2+avx2+avx512(dispatch)"
#else
#define KILN__SIMD "scalar"
#endif

const char *kiln_build_info(void)
{
    return "kiln " KILN__STR(KILN_VERSION_MAJOR) "." KILN__STR(KILN_VERSION_MINOR) "." KILN__STR(KILN_VERSION_PATCH)
           " (" KILN__COMPILER "; simd " KILN__SIMD ")";
}
