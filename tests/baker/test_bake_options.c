/* kiln__bake_options_normalise: the one place kiln_bake_options get their defaults, checked
 * against the values kiln/bake.h documents (0.1 mm at 10 cm, 8 influences). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "bake_options.h"

Test(bake_options, null_gives_every_default)
{
    kiln_bake_options o;
    memset(&o, 0xAB, sizeof o);
    cr_assert_null(kiln__bake_options_normalise(NULL, &o));
    cr_assert_eq(o.max_influences, 8u);
    cr_assert_eq(o.anim_error_m, 0.0001f);
    cr_assert_eq(o.anim_distance_m, 0.1f);
    cr_assert_eq(o.flags, 0u);
    cr_assert_null(o.allocator);
    cr_assert_null(o.scene_root);
}

Test(bake_options, zero_negative_and_nan_lengths_take_the_defaults)
{
    const float bad[] = {0.0f, -0.5f, NAN, -INFINITY};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kiln_bake_options in, o;
        memset(&in, 0, sizeof in);
        in.anim_error_m = bad[i];
        in.anim_distance_m = bad[i];
        cr_assert_null(kiln__bake_options_normalise(&in, &o));
        cr_assert_eq(o.anim_error_m, 0.0001f, "anim_error_m %g", (double)bad[i]);
        cr_assert_eq(o.anim_distance_m, 0.1f, "anim_distance_m %g", (double)bad[i]);
    }
}

Test(bake_options, given_values_are_kept)
{
    kiln_bake_options in, o;
    memset(&in, 0, sizeof in);
    in.flags = KILN_BAKE_LOSSY_ANIMATION | KILN_BAKE_STRICT;
    in.max_influences = 3;
    in.threads = 4;
    in.anim_error_m = 0.002f;
    in.anim_distance_m = 0.25f;
    in.scene_root = "scenes";
    cr_assert_null(kiln__bake_options_normalise(&in, &o));
    cr_assert_eq(o.flags, KILN_BAKE_LOSSY_ANIMATION | KILN_BAKE_STRICT);
    cr_assert_eq(o.max_influences, 3u);
    cr_assert_eq(o.threads, 4u);
    cr_assert_eq(o.anim_error_m, 0.002f);
    cr_assert_eq(o.anim_distance_m, 0.25f);
    cr_assert_str_eq(o.scene_root, "scenes");
}

Test(bake_options, in_place_and_the_influence_bounds)
{
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.max_influences = 8;
    cr_assert_null(kiln__bake_options_normalise(&o, &o));
    cr_assert_eq(o.max_influences, 8u);
    cr_assert_eq(o.anim_error_m, 0.0001f);
    o.max_influences = 1;
    cr_assert_null(kiln__bake_options_normalise(&o, &o));
    cr_assert_eq(o.max_influences, 1u);
    o.max_influences = 9;
    const char *why = kiln__bake_options_normalise(&o, &o);
    cr_assert_not_null(why);
    cr_assert(strstr(why, "max_influences") != NULL, "%s", why);
}
