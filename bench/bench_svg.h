/* kiln_bench --svg FILE: the bench's cases against the peers' figures, as bar charts.
 *
 * One chart per case (sample_forward, sample_random, local_to_model, blend2, frame in ns per
 * joint; the clip's bytes for the bakes): a bar per measured line (clip, mode, SIMD path) and
 * the peer's figure as a bar of its own, on one linear scale starting at 0. A header, not a .c
 * file: every .c file in bench/ is a program of its own.
 *
 *   bench_svg_add(case, label, value, peer, peer_who)   per measured line
 *   bench_svg_write(path)                                 at the end; 0 on a write failure
 *
 * Each series is a <g class="series" data-series="bench:ours"|"bench:peer" data-case="...">
 * holding <rect> bars with a data-value, so that a test can read the chart back.
 */
#ifndef KILN_BENCH_SVG_H
#define KILN_BENCH_SVG_H

#include <stdio.h>
#include <string.h>

#define BENCH_SVG_MAX 512

typedef struct bench_svg_bar {
    char   chart[32];
    char   label[96];
    double value, peer;
    char   peer_who[48];
} bench_svg_bar;

static bench_svg_bar bench_svg_bars[BENCH_SVG_MAX];
static int bench_svg_count;

static void bench_svg_add(const char *chart, const char *label, double value, double peer, const char *peer_who)
{
    if (bench_svg_count == BENCH_SVG_MAX || !(value == value)) return;
    bench_svg_bar *b = &bench_svg_bars[bench_svg_count++];
    snprintf(b->chart, sizeof b->chart, "%s", chart);
    snprintf(b->label, sizeof b->label, "%s", label);
    snprintf(b->peer_who, sizeof b->peer_who, "%s", peer_who ? peer_who : "");
    b->value = value;
    b->peer = peer;
}

/* Text for SVG: names come from the bench's own tables, but escape anyway. */
static void bench_svg_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

static int bench_svg_write(const char *path)
{
    const char *charts[BENCH_SVG_MAX];
    int nc = 0;
    for (int i = 0; i < bench_svg_count; i++) {
        int seen = 0;
        for (int c = 0; c < nc; c++) seen |= strcmp(charts[c], bench_svg_bars[i].chart) == 0;
        if (!seen) charts[nc++] = bench_svg_bars[i].chart;
    }
    const int width = 900, bar_h = 16, label_w = 330, top = 40;
    int height = top + 20;
    for (int c = 0; c < nc; c++) {
        int n = 1;
        for (int i = 0; i < bench_svg_count; i++) n += strcmp(bench_svg_bars[i].chart, charts[c]) == 0;
        height += 30 + n * (bar_h + 4) + 16;
    }
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
               "<text x=\"10\" y=\"24\" font-size=\"16\">kiln_bench against the peers' figures (shorter is better)</text>\n",
            width, height, width, height);
    int y = top;
    for (int c = 0; c < nc; c++) {
        double max = 0;
        const bench_svg_bar *peer = NULL;
        for (int i = 0; i < bench_svg_count; i++) {
            const bench_svg_bar *b = &bench_svg_bars[i];
            if (strcmp(b->chart, charts[c]) != 0) continue;
            if (b->value > max) max = b->value;
            if (b->peer > max) max = b->peer;
            if (b->peer > 0 && !peer) peer = b;
        }
        if (!(max > 0)) max = 1;
        fprintf(f, "<text x=\"10\" y=\"%d\" font-weight=\"bold\">", y + 16);
        bench_svg_text(f, charts[c]);
        fputs("</text>\n", f);
        y += 24;
        fprintf(f, "<g class=\"series\" data-series=\"bench:ours\" data-case=\"");
        bench_svg_text(f, charts[c]);
        fputs("\">\n", f);
        for (int i = 0; i < bench_svg_count; i++) {
            const bench_svg_bar *b = &bench_svg_bars[i];
            if (strcmp(b->chart, charts[c]) != 0) continue;
            double w = (width - label_w - 90) * b->value / max;
            fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", label_w - 6, y + 12);
            bench_svg_text(f, b->label);
            fprintf(f, "</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#3d7ab8\" data-value=\"%.6g\"/>"
                       "<text x=\"%.1f\" y=\"%d\">%.4g</text>\n",
                    label_w, y, w, bar_h, b->value, label_w + w + 4, y + 12, b->value);
            y += bar_h + 4;
        }
        fputs("</g>\n", f);
        if (peer) {
            double w = (width - label_w - 90) * peer->peer / max;
            fprintf(f, "<g class=\"series\" data-series=\"bench:peer\" data-case=\"");
            bench_svg_text(f, charts[c]);
            fprintf(f, "\"><text x=\"%d\" y=\"%d\" text-anchor=\"end\">peer: ", label_w - 6, y + 12);
            bench_svg_text(f, peer->peer_who);
            fprintf(f, "</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#d98b3a\" data-value=\"%.6g\"/>"
                       "<text x=\"%.1f\" y=\"%d\">%.4g</text></g>\n",
                    label_w, y, w, bar_h, peer->peer, label_w + w + 4, y + 12, peer->peer);
            y += bar_h + 4;
        }
        y += 16;
    }
    fputs("</svg>\n", f);
    int ok = !ferror(f);
    return fclose(f) == 0 && ok;
}

#endif /* KILN_BENCH_SVG_H */
