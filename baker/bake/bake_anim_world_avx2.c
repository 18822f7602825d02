/* Whether the lossy clip encoder's AVX2 kernels (bake_anim_world.h) run on this CPU. */
#include <stddef.h>

#include "bake_anim_world.h"

#if KILN__WORLD_AVX2
_Static_assert(offsetof(kiln__wxf, t) == 9 * sizeof(double), "t follows m");

int kiln__world_avx2_ok(void)
{
    /* libgcc/compiler-rt also check that the OS saves the YMM state (XGETBV); their CPU model
     * is set up before main, so concurrent bakes only read it */
    return __builtin_cpu_supports("avx2");
}

#endif
