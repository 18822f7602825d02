/* baker/cli_plot.h - `kiln plot`: a small SVG chart writer shared by its sections. Private.
 *
 *   cli_plot.c       the verb: bakes lossless and lossy, samples both, gathers the series
 *   cli_plot_draw.c  the three sections of the SVG (channels, error, bits)
 *   cli_plot_svg.c   charts: a frame with axes and ticks, polylines, dots, bars
 *
 * Every series is a <g class="series" data-series="KIND" ...> so that a test reads the plot back:
 * channel:source (dots at the keys), channel:lossless, channel:lossy, error:joint, error:bound,
 * bits (one <rect> per track, data-bits).
 */
#ifndef KILN_CLI_PLOT_H
#define KILN_CLI_PLOT_H

#include <stdint.h>
#include <stdio.h>

#include "cli_pose.h"
#include "kiln/bake/source.h"

#define KILN__PLOT_VERB "plot"
#define KILN__PLOT_MAX_JOINTS 8

/* What cli_plot.c gathers for the drawing. */
typedef struct kiln__plot {
    const char *clip_path, *model_path, *out_path, *clip;
    const char *joints[KILN__PLOT_MAX_JOINTS];
    uint32_t    joint_arg_count;
    float       anim_error_m, anim_distance_m;
    kiln__pose  pose[2];              /* lossless, lossy */
    /* gathered */
    uint32_t    frames, step, bones;
    double     *frame_x;              /* frames */
    uint32_t    chosen[KILN__PLOT_MAX_JOINTS], chosen_count; /* skeleton bone indices */
    double     *local[2];             /* [mode][frame][chosen][7]: tx ty tz qx qy qz qw */
    double     *error;                /* [bone][frame], metres */
    kiln_source_scene scene;          /* CLIP-SOURCE imported, for the keys */
    const kiln_source_animation *src_anim;
} kiln__plot;

/* cli_plot.c: the name of skeleton bone b */
const char *kiln__plot_bone_name(const kiln__pose *q, uint32_t b);
/* cli_plot_draw.c: the whole SVG (a kiln__file_emit_fn; user is the kiln__plot) */
int kiln__plot_emit(void *user, FILE *out);

typedef struct kiln__chart {
    FILE  *out;
    double x, y, w, h;             /* the plot area in SVG units */
    double x0, x1, y0, y1;         /* the data range it shows */
} kiln__chart;

/* Starts the document (width x height, white background). */
void kiln__svg_begin(FILE *out, int width, int height);
void kiln__svg_end(FILE *out);
/* Text at (x, y), escaped; anchor "start", "middle" or "end". */
void kiln__svg_text(FILE *out, double x, double y, const char *anchor, int size, const char *text);
/* Writes s escaped for XML text and attributes. */
void kiln__svg_escape(FILE *out, const char *s);

/* Draws the chart's frame, title, and ticks on both axes (widens a flat y range). */
void kiln__chart_frame(kiln__chart *c, const char *title, const char *x_label, const char *y_label);
/* Opens and closes a series group: data-series=kind, plus a free attribute string (may be ""). */
void kiln__chart_series_begin(kiln__chart *c, const char *kind, const char *label, const char *color);
void kiln__chart_series_end(kiln__chart *c);
/* A polyline through (xs[i], ys[i]); dashed when dash != 0. Non-finite points break the line. */
void kiln__chart_line(kiln__chart *c, const double *xs, const double *ys, uint32_t n, const char *color, double width,
                      int dash);
/* Dots at (xs[i], ys[i]). */
void kiln__chart_dots(kiln__chart *c, const double *xs, const double *ys, uint32_t n, const char *color);
/* A legend entry at the k-th slot above the chart. */
void kiln__chart_legend(kiln__chart *c, int k, const char *color, int dash, const char *text);

#endif /* KILN_CLI_PLOT_H */
