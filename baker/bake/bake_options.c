/* The defaults of kiln_bake_options (bake_options.h). */
#include <string.h>

#include "bake_options.h"

const char *kiln__bake_options_normalise(const kiln_bake_options *in, kiln_bake_options *out)
{
    if (in) *out = *in;
    else memset(out, 0, sizeof *out);
    if (out->max_influences == 0) out->max_influences = KILN_BAKE_MAX_INFLUENCES;
    if (!(out->anim_error_m > 0.0f)) out->anim_error_m = KILN_BAKE_ANIM_ERROR_M;
    if (!(out->anim_distance_m > 0.0f)) out->anim_distance_m = KILN_BAKE_ANIM_DISTANCE_M;
    if (out->max_influences > KILN_BAKE_MAX_INFLUENCES) return "max_influences above 8";
    return NULL;
}
