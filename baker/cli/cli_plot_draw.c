/* `kiln plot`, drawing: the channels, the error and the bits sections of the SVG from what
 * cli_plot.c gathered (cli_plot.h), on the charts of cli_plot_svg.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_plot.h"

static const char *const kiln__plot_colors[] = {"#d62728", "#2ca02c", "#1f77b4", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"};
static const char *const kiln__plot_comp[] = {"tx", "ty", "tz", "qx", "qy", "qz", "qw"};

/* The keys of `bone`'s source curve for component c (0..6), as (frame, value) points. */
static uint32_t kiln__plot_keys(const kiln__plot *p, const char *bone, int c, double *xs, double *ys, uint32_t cap)
{
    uint32_t n = 0;
    if (!p->src_anim) return 0;
    kiln_source_channel want = c < 3 ? (kiln_source_channel)(KILN_SOURCE_CHANNEL_TX + c) : KILN_SOURCE_CHANNEL_ROTATION;
    for (uint32_t i = 0; i < p->src_anim->curve_count; i++) {
        const kiln_source_curve *cv = &p->src_anim->curves[i];
        if (cv->channel != want || !cv->target || strcmp(cv->target, bone) != 0) continue;
        n = 0; /* the last curve of a channel wins */
        for (uint32_t k = 0; k < cv->key_count && n < cap; k++, n++) {
            xs[n] = cv->frames[k];
            ys[n] = c < 3 ? cv->values[k] : cv->values[(size_t)k * 4u + (size_t)(c - 3)];
        }
    }
    return n;
}

static void kiln__plot_channels(kiln__plot *p, FILE *out, double *top)
{
    const kiln__pose *q = &p->pose[0];
    uint32_t cap = 0;
    for (uint32_t i = 0; p->src_anim && i < p->src_anim->curve_count; i++)
        if (p->src_anim->curves[i].key_count > cap) cap = p->src_anim->curves[i].key_count;
    double *kx = malloc((size_t)(cap ? cap : 1) * sizeof *kx), *ky = malloc((size_t)(cap ? cap : 1) * sizeof *ky);
    double *ys = malloc((size_t)p->frames * sizeof *ys);
    if (!kx || !ky || !ys) goto done;
    for (uint32_t j = 0; j < p->chosen_count; j++) {
        const char *bone = kiln__plot_bone_name(q, p->chosen[j]);
        for (int part = 0; part < 2; part++) {
            int c0 = part ? 3 : 0, c1 = part ? 7 : 3;
            kiln__chart ch = {out, 90, *top + 30, 840, 150, p->frame_x[0], p->frame_x[p->frames - 1], INFINITY, -INFINITY};
            for (int m = 0; m < 2; m++)
                for (uint32_t f = 0; f < p->frames; f++)
                    for (int c = c0; c < c1; c++) {
                        double v = p->local[m][((size_t)f * KILN__PLOT_MAX_JOINTS + j) * 7u + (size_t)c];
                        if (v < ch.y0) ch.y0 = v;
                        if (v > ch.y1) ch.y1 = v;
                    }
            char title[256];
            snprintf(title, sizeof title, "joint '%.120s': %s (local; dots: source keys, solid: lossless, dashed: lossy)",
                     bone, part ? "rotation x y z w" : "translation x y z (m)");
            kiln__chart_frame(&ch, title, "frame", part ? "quaternion" : "metres");
            for (int c = c0; c < c1; c++) {
                char label[200];
                snprintf(label, sizeof label, "%.120s %s", bone, kiln__plot_comp[c]);
                const char *color = kiln__plot_colors[c];
                uint32_t n = kiln__plot_keys(p, bone, c, kx, ky, cap);
                kiln__chart_series_begin(&ch, "channel:source", label, color);
                kiln__chart_dots(&ch, kx, ky, n, color);
                kiln__chart_series_end(&ch);
                for (int m = 0; m < 2; m++) {
                    for (uint32_t f = 0; f < p->frames; f++)
                        ys[f] = p->local[m][((size_t)f * KILN__PLOT_MAX_JOINTS + j) * 7u + (size_t)c];
                    kiln__chart_series_begin(&ch, m ? "channel:lossy" : "channel:lossless", label, color);
                    kiln__chart_line(&ch, p->frame_x, ys, p->frames, color, m ? 1.2 : 1.6, m);
                    kiln__chart_series_end(&ch);
                }
                kiln__chart_legend(&ch, c1 - 1 - c, color, 0, kiln__plot_comp[c]);
            }
            *top += 215;
        }
    }
done:
    free(kx);
    free(ky);
    free(ys);
}

static void kiln__plot_errors(kiln__plot *p, FILE *out, double *top)
{
    const kiln_blob_animation *a = p->pose[1].anim;
    double bound = a->error_bound_m * 1e3, worst = 0;
    uint32_t worst_bone = 0;
    double *ys = malloc((size_t)p->frames * sizeof *ys);
    if (!ys) return;
    for (uint32_t b = 0; b < p->bones; b++)
        for (uint32_t f = 0; f < p->frames; f++)
            if (p->error[(size_t)b * p->frames + f] * 1e3 > worst) worst = p->error[(size_t)b * p->frames + f] * 1e3, worst_bone = b;
    kiln__chart ch = {out, 90, *top + 30, 840, 220, p->frame_x[0], p->frame_x[p->frames - 1], 0,
                      (worst > bound ? worst : bound) * 1.1};
    char title[256];
    snprintf(title, sizeof title, "lossy error per joint against the lossless bake (mm; bound %.4g mm at %.3g m; largest %.4g mm, '%.60s')",
             bound, a->error_distance_m, worst, p->bones ? kiln__plot_bone_name(&p->pose[0], worst_bone) : "");
    kiln__chart_frame(&ch, title, "frame", "mm");
    for (uint32_t b = 0; b < p->bones; b++) {
        for (uint32_t f = 0; f < p->frames; f++) ys[f] = p->error[(size_t)b * p->frames + f] * 1e3;
        const char *color = b == worst_bone ? "#d62728" : "#1f77b4";
        kiln__chart_series_begin(&ch, "error:joint", kiln__plot_bone_name(&p->pose[0], b), color);
        kiln__chart_line(&ch, p->frame_x, ys, p->frames, color, b == worst_bone ? 1.6 : 0.7, 0);
        kiln__chart_series_end(&ch);
    }
    double bx[2] = {p->frame_x[0], p->frame_x[p->frames - 1]}, by[2] = {bound, bound};
    kiln__chart_series_begin(&ch, "error:bound", "bound", "#000000");
    kiln__chart_line(&ch, bx, by, 2, "#000000", 1.4, 1);
    kiln__chart_series_end(&ch);
    kiln__chart_legend(&ch, 0, "#000000", 1, "bound");
    kiln__chart_legend(&ch, 1, "#d62728", 0, "largest joint");
    *top += 290;
    free(ys);
}

static void kiln__plot_bits(kiln__plot *p, FILE *out, double *top)
{
    const kiln_blob_animation *a = p->pose[1].anim;
    const unsigned char *base = (const unsigned char *)kiln_blob_header_of(p->pose[1].anim_blob);
    const kiln_blob_anim_track *t = NULL;
    uint32_t n = a->animated_count, total = 0;
    /* the track table follows the constant block (docs/blob-format.md); only lossy clips have one */
    if (a->flags & KILN_ANIM_LOSSY)
        t = (const kiln_blob_anim_track *)(const void *)(base + a->data_offset + (uint64_t)a->block_count * sizeof(kiln_soa_xform));
    kiln__chart ch = {out, 90, *top + 30, 840, 160, 0, n ? n : 1, 0, 32};
    char title[200];
    for (uint32_t k = 0; t && k < n; k++) total += t[k].width;
    snprintf(title, sizeof title, "bits per lane of each stored track of the lossy clip (%u tracks, %u bits per row of 8 lanes each%s)",
             n, total, t ? "" : "; the clip is not lossy");
    kiln__chart_frame(&ch, title, "track (block, component), in row order", "bits");
    kiln__chart_series_begin(&ch, "bits", "bits per track", "#3d7ab8");
    double bw = ch.w / (n ? n : 1);
    for (uint32_t k = 0; t && k < n; k++) {
        double h = ch.h * t[k].width / 32.0;
        fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"#3d7ab8\" stroke=\"none\" data-bits=\"%u\" "
                     "data-block=\"%u\" data-component=\"%s\"/>\n",
                ch.x + k * bw, ch.y + ch.h - h, bw > 1.5 ? bw - 0.5 : bw, h, t[k].width, t[k].block,
                t[k].component < 10 ? (const char *[]){"tx", "ty", "tz", "qx", "qy", "qz", "qw", "sx", "sy", "sz"}[t[k].component] : "?");
    }
    kiln__chart_series_end(&ch);
    *top += 230;
}

int kiln__plot_emit(void *user, FILE *out)
{
    kiln__plot *p = user;
    double height = 60 + p->chosen_count * 2 * 215.0 + 290 + 230;
    kiln__svg_begin(out, 960, (int)height);
    char title[400];
    snprintf(title, sizeof title, "clip '%.120s' of %.200s: %u frames at %g fps%s", kiln__pose_clip_name(p->pose[0].anim_blob, p->pose[0].anim),
             p->clip_path, p->pose[0].anim->frame_count, p->pose[0].anim->framerate, p->step > 1 ? " (stepped)" : "");
    kiln__svg_text(out, 20, 28, "start", 16, title);
    double top = 50;
    kiln__plot_channels(p, out, &top);
    kiln__plot_errors(p, out, &top);
    kiln__plot_bits(p, out, &top);
    kiln__svg_end(out);
    return !ferror(out);
}
