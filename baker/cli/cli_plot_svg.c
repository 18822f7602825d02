/* `kiln plot`: SVG charts, written by hand (the page is a few hundred elements). */
#include <math.h>
#include <stdio.h>

#include "cli_plot.h"

void kiln__svg_escape(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '<') fputs("&lt;", out);
        else if (ch == '>') fputs("&gt;", out);
        else if (ch == '&') fputs("&amp;", out);
        else if (ch == '"') fputs("&quot;", out);
        else if (ch < 0x20 || ch == 0x7f) fputc('?', out); /* not allowed in XML 1.0 */
        else fputc(ch, out);
    }
}

void kiln__svg_begin(FILE *out, int width, int height)
{
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                 "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n"
                 "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            width, height, width, height);
}

void kiln__svg_end(FILE *out) { fputs("</svg>\n", out); }

void kiln__svg_text(FILE *out, double x, double y, const char *anchor, int size, const char *text)
{
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\">", x, y, anchor, size);
    kiln__svg_escape(out, text);
    fputs("</text>\n", out);
}

static double kiln__chart_px(const kiln__chart *c, double v) { return c->x + (v - c->x0) / (c->x1 - c->x0) * c->w; }
static double kiln__chart_py(const kiln__chart *c, double v) { return c->y + c->h - (v - c->y0) / (c->y1 - c->y0) * c->h; }

/* A "nice" tick step (1, 2 or 5 times a power of ten) for about 5 ticks over `span`. */
static double kiln__tick_step(double span)
{
    double raw = span / 5.0, p = pow(10.0, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1.0 : f < 3.5 ? 2.0 : f < 7.5 ? 5.0 : 10.0) * p;
}

void kiln__chart_frame(kiln__chart *c, const char *title, const char *x_label, const char *y_label)
{
    FILE *out = c->out;
    if (!(c->x1 > c->x0)) c->x1 = c->x0 + 1.0;
    if (!(c->y1 > c->y0)) {
        double m = fabs(c->y0) > 1e-6 ? fabs(c->y0) * 0.1 : 1e-3;
        c->y0 -= m, c->y1 += m;
    }
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fafafa\" stroke=\"#999\"/>\n", c->x, c->y,
            c->w, c->h);
    kiln__svg_text(out, c->x, c->y - 16, "start", 12, title);
    double sx = kiln__tick_step(c->x1 - c->x0), sy = kiln__tick_step(c->y1 - c->y0);
    for (double t = ceil(c->x0 / sx) * sx; t <= c->x1 + 1e-9 * sx; t += sx) {
        char buf[32];
        snprintf(buf, sizeof buf, "%g", fabs(t) < 1e-12 ? 0.0 : t);
        double px = kiln__chart_px(c, t);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", px, c->y, px, c->y + c->h);
        kiln__svg_text(out, px, c->y + c->h + 13, "middle", 10, buf);
    }
    for (double t = ceil(c->y0 / sy) * sy; t <= c->y1 + 1e-9 * sy; t += sy) {
        char buf[32];
        snprintf(buf, sizeof buf, "%g", fabs(t) < 1e-12 * sy ? 0.0 : t);
        double py = kiln__chart_py(c, t);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", c->x, py, c->x + c->w, py);
        kiln__svg_text(out, c->x - 4, py + 3, "end", 10, buf);
    }
    kiln__svg_text(out, c->x + c->w / 2, c->y + c->h + 27, "middle", 11, x_label);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 %.1f %.1f)\">", c->x - 46,
            c->y + c->h / 2, c->x - 46, c->y + c->h / 2);
    kiln__svg_escape(out, y_label);
    fputs("</text>\n", out);
}

void kiln__chart_series_begin(kiln__chart *c, const char *kind, const char *label, const char *color)
{
    fprintf(c->out, "<g class=\"series\" data-series=\"%s\" data-label=\"", kind);
    kiln__svg_escape(c->out, label);
    fprintf(c->out, "\" stroke=\"%s\">\n", color);
}

void kiln__chart_series_end(kiln__chart *c) { fputs("</g>\n", c->out); }

void kiln__chart_line(kiln__chart *c, const double *xs, const double *ys, uint32_t n, const char *color, double width,
                      int dash)
{
    FILE *out = c->out;
    int open = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!isfinite(ys[i]) || !isfinite(xs[i])) {
            if (open) fputs("\"/>\n", out), open = 0;
            continue;
        }
        double py = kiln__chart_py(c, ys[i]);
        if (py < c->y) py = c->y; /* values beyond the range stay on the frame */
        if (py > c->y + c->h) py = c->y + c->h;
        if (!open) {
            fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.2f\"%s points=\"", color, width,
                    dash ? " stroke-dasharray=\"4 3\"" : "");
            open = 1;
        }
        fprintf(out, "%.1f,%.1f ", kiln__chart_px(c, xs[i]), py);
    }
    if (open) fputs("\"/>\n", out);
}

void kiln__chart_dots(kiln__chart *c, const double *xs, const double *ys, uint32_t n, const char *color)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!isfinite(ys[i]) || !isfinite(xs[i])) continue;
        fprintf(c->out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.2\" fill=\"%s\" stroke=\"none\"/>\n", kiln__chart_px(c, xs[i]),
                kiln__chart_py(c, ys[i]), color);
    }
}

void kiln__chart_legend(kiln__chart *c, int k, const char *color, int dash, const char *text)
{
    double x = c->x + c->w - 110.0 * (k + 1), y = c->y - 5;
    fprintf(c->out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", x, y, x + 18,
            y, color, dash ? " stroke-dasharray=\"4 3\"" : "");
    kiln__svg_text(c->out, x + 22, y + 4, "start", 10, text);
}
