/* baker/cli_plot.h - `kiln plot`: a small SVG chart writer shared by its sections. Private.
 *
 *   cli_plot.c       the verb: bakes lossless and lossy, samples both, gathers the series
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
