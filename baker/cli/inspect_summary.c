/* `kiln inspect`: what the text and JSON printers both derive from the summary. */
#include <string.h>

#include "cli.h"
#include "inspect_summary.h"

const char *const kiln__insp_mode_names[3] = {"absolute", "relative", "additive"};

const char *const kiln__insp_color_names[3] = {"dropped", "packed", "float"};

int kiln__insp_default_transform(const kiln_cast_model *m)
{
    return m->position[0] == 0 && m->position[1] == 0 && m->position[2] == 0 && m->rotation[0] == 0 &&
           m->rotation[1] == 0 && m->rotation[2] == 0 && m->rotation[3] == 1 && m->scale[0] == 1 &&
           m->scale[1] == 1 && m->scale[2] == 1;
}

const char *kiln__insp_up_name(kiln_cast_up_axis up)
{
    switch (up) {
    case KILN_CAST_UP_X: return "x";
    case KILN_CAST_UP_Y: return "y";
    case KILN_CAST_UP_Z: return "z";
    default: return NULL;
    }
}

void kiln__insp_range(const kiln__insp_anim *a, uint32_t *lo, uint32_t *hi, double *duration_s)
{
    *lo = a->has_keys ? a->min_frame : 0;
    *hi = a->has_keys ? a->max_frame : 1;
    *duration_s = a->a.framerate > 0 ? *hi / (double)a->a.framerate : 0.0;
}

size_t kiln__insp_instance_run(const kiln__insp_summary *s, size_t i)
{
    size_t e = i + 1;
    while (e < s->instance_count && strcmp(s->instances[e], s->instances[i]) == 0) e++;
    return e;
}

uint64_t kiln__insp_diag_total(const kiln__insp_summary *s)
{
    return s->by_severity[0] + s->by_severity[1] + s->by_severity[2];
}
