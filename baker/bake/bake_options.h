/* Private: kiln_bake_options with their defaults applied, in one place.
 *
 * kiln_bake normalises the caller's options once; every stage then reads the values it uses
 * directly (bake_stage.h's kiln__job.options, bake_internal.h's context), never a 0 that means
 * "the default".
 */
#ifndef KILN_BAKER_BAKE_OPTIONS_H
#define KILN_BAKER_BAKE_OPTIONS_H

#include "kiln/bake/bake.h"

/* *out = *in (zeroed when in is NULL) with the defaults of kiln/bake.h applied:
 *   max_influences  0 -> KILN_BAKE_MAX_INFLUENCES
 *   anim_error_m    not > 0 (0, negative, NaN) -> KILN_BAKE_ANIM_ERROR_M
 *   anim_distance_m not > 0 -> KILN_BAKE_ANIM_DISTANCE_M
 * Returns NULL, or what is wrong with the options (*out is filled either way). */
const char *kiln__bake_options_normalise(const kiln_bake_options *in, kiln_bake_options *out);

#endif
