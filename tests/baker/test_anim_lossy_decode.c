/* The lossy clip encoder's AVX2 quantiser and decode of eight lanes give the scalar
 * quantiser's integers and values bit for bit: random values in and out of their ranges, the
 * range ends, midpoints between two steps (the ties of the rounding), empty ranges, every width
 * from 3 to 24 bits. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "bake_anim.h"
#include "bake_anim_lossy.h"

static uint64_t state = 0x9e3779b97f4a7c15ull;

static uint32_t next(void)
{
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return (uint32_t)(state >> 16);
}

/* A value of one of several magnitudes, either sign. */
static float value(void)
{
    float unit = (float)next() / 4294967296.0f;
    switch (next() % 4) {
    case 0: return (float)((int)(next() % 2001) - 1000) / 1000.0f;
    case 1: return (unit - 0.5f) * 1e-4f;
    case 2: return (unit - 0.5f) * 2000.0f;
    default: return (unit - 0.5f) * 4.0f;
    }
}

Test(anim_lossy_decode, avx2_lanes_match_the_scalar_quantiser)
{
    float x[8], lo[8], extent[8], step[8], out[8];
    uint32_t q[8];
    uint32_t checked = 0;
    for (int it = 0; it < 200000; it++) {
        uint32_t width = 3 + next() % 22;
        for (int l = 0; l < 8; l++) {
            float a = value(), b = next() % 16 == 0 ? a : value();
            float hi = a < b ? b : a;
            lo[l] = a < b ? a : b;
            extent[l] = hi - lo[l];
            step[l] = kiln__clip_step(extent[l], width);
            uint32_t top = (1u << width) - 1u;
            switch (next() % 6) {
            case 0: x[l] = lo[l]; break;
            case 1: x[l] = hi; break;
            case 2: x[l] = lo[l] + step[l] * ((float)(next() % top) + 0.5f); break; /* a tie */
            case 3: x[l] = value(); break;                                         /* anywhere */
            default: x[l] = lo[l] + extent[l] * ((float)next() / 4294967296.0f); break;
            }
        }
        if (!kiln__lossy_decode_avx2(x, lo, extent, step, width, out)) cr_skip_test("no AVX2 decode on this build or CPU");
        cr_assert(kiln__anim_quantize8(x, lo, extent, step, width, q));
        for (int l = 0; l < 8; l++) {
            uint32_t qs = kiln__anim_quantize_step(x[l], lo[l], extent[l], width, step[l]);
            cr_assert_eq(q[l], qs, "width %u x %a lo %a extent %a: scalar q %u, AVX2 %u", width, (double)x[l],
                         (double)lo[l], (double)extent[l], qs, q[l]);
            float ref = kiln__clip_dequant(qs, lo[l], step[l]);
            uint32_t a, b;
            memcpy(&a, &ref, 4), memcpy(&b, &out[l], 4);
            cr_assert_eq(a, b, "width %u x %a lo %a extent %a: scalar %a, AVX2 %a", width, (double)x[l], (double)lo[l],
                         (double)extent[l], (double)ref, (double)out[l]);
            checked++;
        }
    }
    cr_assert_eq(checked, 1600000u);
}
