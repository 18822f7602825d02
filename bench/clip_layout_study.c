/* kiln_clip_layout_study: what other codings of a lossy clip's quantised integers would cost.
 *
 * A measurement, not a benchmark: it times nothing and is not run in CI (built outside
 * build/bench/, so the CI's bench stage does not find it). It reads each lossy clip's quantised
 * integer matrix (frames x lanes, through contract/clip_codec.h, the codec the runtime decodes
 * with), checks it against kiln_sample at every integer frame (every stored lane, bit for bit),
 * and prints the bytes each scheme would take for the same integers, so the error is that of
 * today's clip by construction. Sizes are the clip's sample data (kiln_blob_animation.data_size):
 * the constants, the track table and the slack as today, plus the scheme's rows and headers.
 *
 *   today        fixed-width rows (row_stride bytes per frame)
 *   packed       the same rows without the 16-byte row padding
 *   lane_widths  per-lane widths at the same step: bits(max q - min q) per lane
 *   seq_d1_*, seq_d2_*  first and second differences along the clip (sequential access only):
 *                "_fixed" one zigzag width per lane, "_h0" order-0 entropy per lane without a
 *                table (a bound), "_bucket" a log-bucket coder with one table per lane
 *   adaptive*    per lane (or track) its own key period, predictor (b or c below) and one
 *                residual width for the clip; "48": periods dividing 48, else 32; "_grouped*":
 *                lanes regrouped into 8-lane groups of one period and predictor (run_adaptive)
 * and per segment of S frames:
 *   {a,b,c}_for_*  frame of reference: the width of the segment-lane's spread ("_track": one width
 *                per segment and 8-lane track, "_lane": per lane)
 *   {a,b}_pfor_*  patched frame of reference: the width b that minimises the size; values outside
 *                the b-bit slot are exceptions stored apart at full width. "_bitmap": 1 flag bit
 *                per segment-lane, an S-bit bitmap when flagged (a frame's value: one bit test, a
 *                popcount); "_escape": the top n codes of the slot name the lane's exceptions
 *                0..n-1 (n <= 7, a 3-bit count), no bitmap and no popcount
 *   a_*          on the quantised values, the slot at a base per segment-lane (w bits)
 *   b_*          on the residuals from the rounded linear interpolation between key rows every S
 *                frames (key rows at today's widths), the slot centred on 0 (no base)
 *   c_*          the same with Catmull-Rom through the 4 keys around the frame
 *   bw_*, cw_*   b and c with one width per lane or track for the whole clip (no segment offsets,
 *                no per-segment headers); "_pfor": exceptions in a frame bitmap per lane
 *   ab_pfor_lane_bitmap  key rows, then per segment-lane the cheaper of a and b (+1 bit)
 *   h0t_a, h0t_b order-0 entropy per segment-lane (an ideal rANS: n * H0 bits) plus its table
 *                (minimum, span, which symbols occur, a frequency per symbol)
 *   h0lane_b     the residuals b at their order-0 entropy per lane, no table (a bound)
 *   bucket_b, bucket_lane_b  the log-bucket coder, a table per segment-lane or per lane
 * Segmented schemes add a 32-bit offset per segment; rows and each segment's headers are rounded
 * to whole bytes; width fields are 5 bits.
 *
 * Output: one JSON object per (clip, scheme, S) on stdout, a table per clip on stderr.
 * Usage: kiln_clip_layout_study [BLOB.kiln...]
 *   without arguments it bakes the anchor pairs of $KILN_SHARED_DIR/corpus/bench (lossy, the
 *   default bound) in process; with arguments it reads each blob's first clip, which must be
 *   lossy (`kiln bake --lossy-anim MODEL ANIM -o BLOB.kiln`). --quick does nothing (exit 0). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../contract/clip_codec.h"
#include "bench_util.h"
#include "kiln/anim.h"
#include "kiln/bake/bake.h"
#include "kiln/blob.h"

_Static_assert(sizeof(kiln_soa_xform) == KILN_ANIM_COMPONENTS * KILN_SOA_WIDTH * sizeof(float), "SoA layout");

#define STUDY_MAX_S  64
#define STUDY_WBITS  5u  /* a width field */
#define STUDY_SEGOFF 32u /* a segment offset */

/* One clip's quantised integers: q[f * lanes + l] at width w[l] (the lane's track width). */
typedef struct study_clip {
    const char *name;
    uint32_t frames, lanes, tracks;
    uint32_t *w;
    int64_t *q;
    uint64_t fixed;      /* constants + track table + slack: kept by every scheme */
    uint64_t today_rows; /* frames x row_stride */
} study_clip;

static unsigned bits_for(uint64_t span) /* bits to hold 0..span */
{
    unsigned b = 0;
    while (b < 64 && (span >> b) != 0) b++;
    return b;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* ---- reading a clip ------------------------------------------------------------------------ */
/* Fills c from the blob's first clip and checks every stored lane against kiln_sample at every
 * integer frame. 0 with a message when the clip is not lossy or does not match. */
static int study_read(const kiln_blob *blob, const char *name, study_clip *c)
{
    uint32_t nclips = 0;
    const kiln_blob_animation *a = kiln_blob_animations(blob, &nclips);
    if (!nclips || !(a->flags & KILN_ANIM_LOSSY)) {
        fprintf(stderr, "clip_layout_study: %s: no lossy clip\n", name);
        return 0;
    }
    const unsigned char *base = (const unsigned char *)blob;
    kiln__clip_layout lay;
    kiln__clip_layout_of(a->data_offset, a->block_count, a->animated_count, a->frame_count, a->row_stride, 1, &lay);
    const kiln_blob_anim_track *tr = (const kiln_blob_anim_track *)(const void *)(base + lay.tracks);
    memset(c, 0, sizeof *c);
    c->name = name;
    c->frames = a->frame_count;
    c->tracks = a->animated_count;
    c->lanes = c->tracks * KILN_SOA_WIDTH;
    c->today_rows = (uint64_t)a->frame_count * a->row_stride;
    c->fixed = a->data_size - c->today_rows;
    c->w = malloc(sizeof *c->w * c->lanes);
    c->q = malloc(sizeof *c->q * c->lanes * c->frames);
    if (!c->w || !c->q) return 0;
    for (uint32_t t = 0; t < c->tracks; t++) {
        if (tr[t].width > KILN__CLIP_MAX_QBITS) {
            fprintf(stderr, "clip_layout_study: %s: track %u is raw\n", name, t);
            return 0;
        }
        for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) c->w[t * KILN_SOA_WIDTH + i] = tr[t].width;
    }
    for (uint32_t f = 0; f < c->frames; f++) {
        const unsigned char *row = base + lay.rows + (uint64_t)f * a->row_stride;
        for (uint32_t t = 0; t < c->tracks; t++)
            for (unsigned i = 0; i < KILN_SOA_WIDTH; i++)
                c->q[(size_t)f * c->lanes + t * KILN_SOA_WIDTH + i] =
                    kiln__clip_lane_bits(row + tr[t].row_offset, tr[t].width, i);
    }

    /* The runtime's samples at integer frames must be the dequantised integers, bit for bit. */
    size_t bsize = kiln_anim_binding_size(blob, 0, blob, 0);
    void *bmem = NULL;
    kiln_anim_binding *bind = NULL;
    kiln_anim_bind_report rep;
    if (!bsize || posix_memalign(&bmem, 64, bsize) != 0 ||
        kiln_anim_bind(blob, 0, blob, 0, bmem, bsize, &bind, &rep) != KILN_OK || !rep.identity_map) {
        fprintf(stderr, "clip_layout_study: %s: cannot bind the clip to skeleton 0 in place\n", name);
        free(bmem);
        return 0;
    }
    uint32_t soa = kiln_anim_binding_soa_count(bind);
    kiln_soa_xform *pose = NULL;
    uint64_t checked = 0, wrong = 0, rot_checked = 0, rot_wrong = 0;
    float *dec = calloc((size_t)soa * KILN_ANIM_COMPONENTS * KILN_SOA_WIDTH, sizeof *dec);
    uint8_t *has = calloc((size_t)soa * KILN_ANIM_COMPONENTS, 1);
    if (!dec || !has || posix_memalign((void **)&pose, 64, sizeof *pose * soa) != 0) {
        free(dec), free(has), free(bmem);
        return 0;
    }
    for (uint32_t t = 0; t < c->tracks; t++)
        if (tr[t].block < soa) has[tr[t].block * KILN_ANIM_COMPONENTS + tr[t].component] = 1;
    for (uint32_t f = 0; f < c->frames; f++) {
        kiln_sample_desc d;
        memset(&d, 0, sizeof d);
        d.binding = bind;
        d.time_s = (double)f / a->framerate + kiln_anim_start_time(blob, 0);
        d.loop = KILN_LOOP_CLAMP;
        d.out = pose;
        d.out_count = soa;
        if (kiln_sample(&d) != KILN_OK) break;
        for (uint32_t t = 0; t < c->tracks; t++) {
            if (tr[t].block >= soa) continue;
            float *e = dec + ((size_t)tr[t].block * KILN_ANIM_COMPONENTS + tr[t].component) * KILN_SOA_WIDTH;
            for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) {
                float step = kiln__clip_step(tr[t].range_extent[i], tr[t].width);
                e[i] = kiln__clip_dequant((uint32_t)c->q[(size_t)f * c->lanes + t * KILN_SOA_WIDTH + i],
                                          tr[t].range_min[i], step);
            }
        }
        /* Translations and scales come back bit for bit; rotations are rebuilt (qw) and
         * normalised by the sampler, so they are compared with the normalised quaternion. */
        for (uint32_t blk = 0; blk < soa; blk++) {
            const float *got = (const float *)(const void *)&pose[blk];
            const float *e = dec + (size_t)blk * KILN_ANIM_COMPONENTS * KILN_SOA_WIDTH;
            const uint8_t *h = has + (size_t)blk * KILN_ANIM_COMPONENTS;
            for (unsigned i = 0; i < KILN_SOA_WIDTH && blk * KILN_SOA_WIDTH + i < a->joint_count; i++) {
                for (unsigned k = 0; k < KILN_ANIM_COMPONENTS; k++) {
                    if (!h[k] || (k >= 3 && k <= 5)) continue;
                    checked++;
                    wrong += memcmp(&e[k * KILN_SOA_WIDTH + i], &got[k * KILN_SOA_WIDTH + i], sizeof(float)) != 0;
                }
                if (!h[3] || !h[4] || !h[5]) continue;
                float x = e[3 * KILN_SOA_WIDTH + i], y = e[4 * KILN_SOA_WIDTH + i], z = e[5 * KILN_SOA_WIDTH + i];
                double qv[4] = {x, y, z, kiln__clip_rebuild_qw(x, y, z)};
                double len = sqrt(qv[0] * qv[0] + qv[1] * qv[1] + qv[2] * qv[2] + qv[3] * qv[3]);
                for (unsigned k = 0; k < 4; k++) {
                    rot_checked++;
                    rot_wrong += fabs(qv[k] / len - got[(3 + k) * KILN_SOA_WIDTH + i]) > 1e-6;
                }
            }
        }
    }
    free(dec);
    free(has);
    free(pose);
    free(bmem);
    fprintf(stderr,
            "clip_layout_study: %s: %u frames x %u lanes (%u tracks); kiln_sample at every frame: %llu translation "
            "and scale values, %llu differ; %llu normalised rotation components, %llu off by more than 1e-6\n",
            name, c->frames, c->lanes, c->tracks, (unsigned long long)checked, (unsigned long long)wrong,
            (unsigned long long)rot_checked, (unsigned long long)rot_wrong);
    return checked > 0 && wrong == 0 && rot_wrong == 0;
}

/* ---- one segment-lane ---------------------------------------------------------------------- */
/* The most values of the sorted x[0..n) inside one window of `width` consecutive codes, the
 * window's first code in *start; the window starts at *fixed when fixed is not NULL. */
static uint32_t window_fit(const int64_t *x, uint32_t n, int64_t width, const int64_t *fixed, int64_t *start)
{
    uint32_t best = 0, j = 0;
    *start = fixed ? *fixed : (n ? x[0] : 0);
    if (fixed) {
        for (uint32_t i = 0; i < n; i++) best += x[i] >= *fixed && x[i] - *fixed < width;
        return best;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (j < i) j = i;
        while (j < n && x[j] - x[i] < width) j++;
        if (j - i > best) best = j - i, *start = x[i];
    }
    return best;
}

/* Where a slot of b bits starts: centred slots (residuals) hold [-2^(b-1), 2^(b-1)) with no base
 * stored, the others [base, base + 2^b) with the best base. */
static const int64_t *slot_start(unsigned b, int centred, int64_t *lo)
{
    *lo = -(((int64_t)1 << b) >> 1);
    return centred ? lo : NULL;
}

/* Bits of n values at slot width b with exceptions at `ebits` each, for the mechanism `escape`
 * (0: flag + bitmap, 1: escape codes). Sets *exc and *start (the window). Headers (width, base)
 * apart. UINT64_MAX when b cannot hold them (escape: more than 7 exceptions). */
static uint64_t pfor_bits(const int64_t *sorted, uint32_t n, unsigned b, unsigned ebits, int escape, int centred,
                          uint32_t *exc, int64_t *start)
{
    int64_t lo;
    const int64_t *fixed = slot_start(b, centred, &lo);
    if (!escape) {
        uint32_t e = n - window_fit(sorted, n, (int64_t)1 << b, fixed, start);
        *exc = e;
        return (uint64_t)n * b + 1u + (e ? n : 0u) + (uint64_t)e * ebits;
    }
    uint64_t best = UINT64_MAX;
    for (uint32_t k = 0; k <= 7; k++) {
        int64_t codes = ((int64_t)1 << b) - k, at;
        if (codes < 1) break;
        uint32_t e = n - window_fit(sorted, n, codes, fixed, &at);
        if (e > k) continue;
        uint64_t bits = (uint64_t)n * b + 3u + (uint64_t)e * ebits;
        if (bits < best) best = bits, *exc = e, *start = at;
    }
    return best;
}

/* Entropy coders of n values (sorted in place), in bits:
 *   H0        n * H0, the order-0 entropy, no table (a bound)
 *   H0_TABLE  n * H0 plus the table an rANS decoder needs: minimum (wbits), span, which symbols
 *             occur (a bitmap over the span or a list, the smaller), a frequency per symbol
 *   BUCKET    z = zigzag(v - median): the bucket bits_for(z) entropy coded (a frequency per
 *             present bucket: 5 + bits_for(n) bits), then its bits below the leading one raw;
 *             plus the median (wbits) */
enum { H0, H0_TABLE, BUCKET };
static double code_bits(int64_t *v, uint32_t n, unsigned wbits, int coder)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp_i64);
    double h = 0;
    if (coder == BUCKET) {
        uint32_t count[66] = {0};
        int64_t med = v[n / 2];
        double raw = 0;
        for (uint32_t i = 0; i < n; i++) {
            int64_t x = v[i] - med;
            unsigned k = bits_for(x >= 0 ? (uint64_t)x * 2 : (uint64_t)(-x) * 2 - 1);
            count[k]++;
            raw += k ? k - 1 : 0;
        }
        double table = wbits;
        for (unsigned k = 0; k < 66; k++)
            if (count[k]) h -= count[k] * log2((double)count[k] / n), table += STUDY_WBITS + bits_for(n);
        return h + raw + table;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        while (j < n && v[j] == v[i]) j++;
        h -= (double)(j - i) * log2((double)(j - i) / n);
        k++;
        i = j;
    }
    if (coder == H0) return h;
    uint64_t span = (uint64_t)(v[n - 1] - v[0]);
    unsigned sb = bits_for(span);
    uint64_t which = span + 1 < (uint64_t)k * sb ? span + 1 : (uint64_t)k * sb;
    return h + wbits + STUDY_WBITS + (double)which + (double)k * bits_for(n);
}

/* ---- schemes --------------------------------------------------------------------------------- */
enum { MODE_FOR, MODE_PFOR_BITMAP, MODE_PFOR_ESCAPE };

typedef struct study_result {
    uint64_t bytes;             /* rows and headers (without c->fixed) */
    uint64_t exceptions, values;
    uint64_t hit_rows, rows;    /* (frame, track) pairs whose 8 lanes hold an exception */
    double unpack_frame, unpack_pair; /* adaptive: fields unpacked per lane for one frame, and for
                                         frames f and f + 1 together (today: 1 and 2) */
} study_result;

/* The values of segment s0 .. s0 + S - 1 of lane l into out (returns how many): VALUES, all of
 * them (scheme a); RESID, the residuals of the frames strictly between the key rows s0 and the
 * next key (s0 + S, or the last frame) from their rounded linear interpolation (scheme b);
 * INTERIOR, the values of those same frames; CUBIC, their residuals from the rounded Catmull-Rom
 * interpolation of the key rows around them (the next key outside the clip: the key itself;
 * lerp in a last, shorter segment). *ebits: an exception's (and a base's) width. */
enum { VALUES, RESID, INTERIOR, CUBIC };
static uint32_t seg_values(const study_clip *c, uint32_t s0, uint32_t S, uint32_t l, int kind, int64_t *out,
                           unsigned *ebits)
{
    uint32_t end = s0 + S < c->frames ? s0 + S : c->frames, n = 0;
    *ebits = c->w[l] + (kind == RESID) + 2u * (kind == CUBIC); /* Catmull-Rom overshoots */
    if (kind == VALUES) {
        for (uint32_t f = s0; f < end; f++) out[n++] = c->q[(size_t)f * c->lanes + l];
        return n;
    }
    uint32_t k1 = s0 + S < c->frames ? s0 + S : c->frames - 1;
    int64_t q0 = c->q[(size_t)s0 * c->lanes + l], q1 = c->q[(size_t)k1 * c->lanes + l];
    int64_t span = (int64_t)k1 - (int64_t)s0;
    for (uint32_t f = s0 + 1; f < k1; f++) {
        int64_t num = (q1 - q0) * (int64_t)(f - s0) * 2 + span, den = 2 * span;
        int64_t fl = num >= 0 ? num / den : -((-num + den - 1) / den); /* floor */
        int64_t v = c->q[(size_t)f * c->lanes + l], pred = q0 + fl;
        if (kind == CUBIC && span == (int64_t)S) {
            double p0 = (double)(s0 >= S ? c->q[(size_t)(s0 - S) * c->lanes + l] : q0), p1 = (double)q0,
                   p2 = (double)q1, p3 = (double)(k1 + S < c->frames ? c->q[(size_t)(k1 + S) * c->lanes + l] : q1);
            double u = (double)(f - s0) / (double)S;
            pred = llround(0.5 * (2 * p1 + (p2 - p0) * u + (2 * p0 - 5 * p1 + 4 * p2 - p3) * u * u +
                                  (3 * p1 - p0 - 3 * p2 + p3) * u * u * u));
        }
        out[n++] = kind == INTERIOR ? v : v - pred;
    }
    return n;
}

/* Key rows of scheme b: frames 0, S, 2S, ... and the last frame, at today's widths. */
static uint64_t key_row_bytes(const study_clip *c, uint32_t S)
{
    uint64_t row = 0;
    for (uint32_t l = 0; l < c->lanes; l++) row += c->w[l];
    uint32_t keys = (c->frames - 1) / S + 1 + ((c->frames - 1) % S != 0);
    return keys * ((row + 7) / 8);
}

/* FOR / PFOR on scheme a or b, widths per lane or per track. */
static study_result run_pfor(const study_clip *c, uint32_t S, int kind, int mode, int per_track)
{
    int resid = kind != VALUES;
    study_result r;
    memset(&r, 0, sizeof r);
    int64_t buf[KILN_SOA_WIDTH][STUDY_MAX_S], sorted[KILN_SOA_WIDTH][STUDY_MAX_S];
    uint32_t segs = (c->frames + S - 1) / S;
    uint8_t *exc_at = calloc((size_t)S * c->lanes, 1); /* exception flags of one segment */
    for (uint32_t s = 0; s < segs; s++) {
        uint32_t s0 = s * S;
        uint64_t hdr = STUDY_SEGOFF, rowbits = 0, apart = 0, n = 0;
        memset(exc_at, 0, (size_t)S * c->lanes);
        for (uint32_t t = 0; t < c->tracks; t++) {
            unsigned eb[KILN_SOA_WIDTH], maxb = 0;
            for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) {
                n = seg_values(c, s0, S, t * KILN_SOA_WIDTH + i, kind, buf[i], &eb[i]);
                memcpy(sorted[i], buf[i], sizeof(int64_t) * n);
                qsort(sorted[i], n, sizeof(int64_t), cmp_i64);
                if (eb[i] > maxb) maxb = eb[i];
            }
            if (!n) continue;
            /* cost[i][b]: lane i at slot width b (FOR: only widths that hold every value) */
            uint64_t cost[KILN_SOA_WIDTH][KILN__CLIP_MAX_QBITS + 4];
            uint32_t ex[KILN_SOA_WIDTH][KILN__CLIP_MAX_QBITS + 4];
            int64_t at[KILN_SOA_WIDTH][KILN__CLIP_MAX_QBITS + 4];
            for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) {
                for (unsigned b = 0; b <= maxb; b++) {
                    ex[i][b] = 0;
                    if (mode == MODE_FOR) {
                        int64_t lo;
                        const int64_t *fixed = slot_start(b, resid, &lo);
                        cost[i][b] = window_fit(sorted[i], (uint32_t)n, (int64_t)1 << b, fixed, &at[i][b]) == n
                                         ? (uint64_t)n * b
                                         : UINT64_MAX;
                    } else {
                        cost[i][b] = pfor_bits(sorted[i], (uint32_t)n, b, eb[i], mode == MODE_PFOR_ESCAPE, resid,
                                               &ex[i][b], &at[i][b]);
                    }
                    if (cost[i][b] > UINT64_MAX / 16) cost[i][b] = UINT64_MAX / 16; /* b too narrow */
                }
            }
            unsigned pick[KILN_SOA_WIDTH];
            if (per_track) {
                unsigned bb = 0;
                uint64_t best = UINT64_MAX;
                for (unsigned b = 0; b <= maxb; b++) {
                    uint64_t sum = 0;
                    for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) sum += cost[i][b];
                    if (sum < best) best = sum, bb = b;
                }
                for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) pick[i] = bb;
                hdr += STUDY_WBITS;
            } else {
                for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) {
                    pick[i] = 0;
                    for (unsigned b = 1; b <= maxb; b++)
                        if (cost[i][b] < cost[i][pick[i]]) pick[i] = b;
                    hdr += STUDY_WBITS;
                }
            }
            for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) {
                unsigned b = pick[i];
                if (!resid) hdr += eb[i]; /* the base */
                rowbits += b;
                apart += cost[i][b] - (uint64_t)n * b;
                r.exceptions += ex[i][b];
                r.values += n;
                /* which frames hold an exception: outside the window */
                int64_t codes = ((int64_t)1 << b) - (mode == MODE_PFOR_ESCAPE ? ex[i][b] : 0);
                for (uint32_t k = 0; ex[i][b] && k < n; k++)
                    if (buf[i][k] < at[i][b] || buf[i][k] >= at[i][b] + codes) exc_at[(size_t)k * c->tracks + t] = 1;
            }
        }
        for (uint32_t k = 0; k < n; k++)
            for (uint32_t t = 0; t < c->tracks; t++) r.hit_rows += exc_at[(size_t)k * c->tracks + t];
        r.rows += (uint64_t)n * c->tracks;
        r.bytes += n * ((rowbits + 7) / 8) + (hdr + apart + 7) / 8;
    }
    free(exc_at);
    if (resid) r.bytes += key_row_bytes(c, S);
    return r;
}

/* Key rows every S frames, then the residuals (RESID or CUBIC) of the other frames at one
 * centred width per lane or per track for the whole clip: rows of a fixed stride, no segment
 * offsets and no per-segment headers. With `pfor`, values outside the slot are exceptions: a
 * frame bitmap per lane that has any (with a 9-bit rank every 64 frames), each at full width. */
static study_result run_clipwide(const study_clip *c, uint32_t S, int kind, int per_track, int pfor)
{
    study_result r;
    memset(&r, 0, sizeof r);
    uint32_t segs = (c->frames + S - 1) / S, n = 0;
    int64_t *v[KILN_SOA_WIDTH];
    for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) v[i] = malloc(sizeof(int64_t) * c->frames);
    uint64_t rowbits = 0, apart = 0;
    for (uint32_t t = 0; t < c->tracks; t++) {
        unsigned eb = 0;
        for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) {
            n = 0;
            for (uint32_t s = 0; s < segs; s++) n += seg_values(c, s * S, S, t * KILN_SOA_WIDTH + i, kind, v[i] + n, &eb);
            qsort(v[i], n, sizeof(int64_t), cmp_i64);
        }
        uint64_t cost[KILN_SOA_WIDTH][KILN__CLIP_MAX_QBITS + 4];
        uint32_t ex[KILN_SOA_WIDTH][KILN__CLIP_MAX_QBITS + 4];
        for (unsigned i = 0; i < KILN_SOA_WIDTH; i++)
            for (unsigned b = 0; b <= eb; b++) {
                int64_t lo, at;
                const int64_t *fixed = slot_start(b, 1, &lo);
                ex[i][b] = n - window_fit(v[i], n, (int64_t)1 << b, fixed, &at);
                cost[i][b] = (uint64_t)n * b;
                if (ex[i][b] && !pfor) cost[i][b] = UINT64_MAX / 16;
                if (ex[i][b] && pfor) cost[i][b] += c->frames + 9u * ((c->frames + 63) / 64) + (uint64_t)ex[i][b] * eb;
            }
        unsigned pick[KILN_SOA_WIDTH];
        for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) {
            pick[i] = 0;
            for (unsigned b = 1; b <= eb; b++)
                if (cost[i][b] < cost[i][pick[i]]) pick[i] = b;
        }
        if (per_track) {
            uint64_t best = UINT64_MAX;
            for (unsigned b = 0; b <= eb; b++) {
                uint64_t sum = 0;
                for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) sum += cost[i][b];
                if (sum < best) best = sum, pick[0] = b;
            }
            for (unsigned i = 1; i < KILN_SOA_WIDTH; i++) pick[i] = pick[0];
        }
        for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) {
            rowbits += pick[i];
            apart += STUDY_WBITS + (pfor ? 1u : 0u) + cost[i][pick[i]] - (uint64_t)n * pick[i];
            r.exceptions += ex[i][pick[i]];
            r.values += n;
        }
    }
    for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) free(v[i]);
    r.bytes = (uint64_t)n * ((rowbits + 7) / 8) + (apart + 7) / 8 + key_row_bytes(c, S);
    return r;
}

/* Per lane (or per track) its own key period S and predictor (RESID or CUBIC), the residuals at
 * one centred width per lane (or per track) for the whole clip. Periods: `set` 0 {1 (every
 * frame a key: today), 2, 4, 8, 16, 32}, a row's layout depending on f mod 32 only; set 1 the
 * divisors of 48 (f mod 48). Either way access stays O(1): a row's offset from a per-layout table,
 * a lane's from per-class sums. gran: 0 period and width per lane; 1 period per track, width per
 * lane; 2 both per track; 3 chosen per lane, then lanes regrouped into 8-lane groups of one
 * period and predictor (sorted by residual and key width), each group at its lanes' widest
 * residual and key (SIMD-decodable groups, scattered to the pose); 4 as 3 but every lane keeps its
 * own widths (the unpack's byte shuffles and shifts per group made at bind time), each class's
 * run of groups padded to whole bytes in every row. Headers: 5 + 4 + 1 bits per lane (gran 3 and 4: plus a 16-bit
 * destination per lane). r.hit_rows / r.rows: the mean period. */
static const uint32_t *study_class;
static int cmp_lane_class(const void *a, const void *b)
{
    const uint32_t *x = study_class + 4 * *(const uint32_t *)a, *y = study_class + 4 * *(const uint32_t *)b;
    for (int k = 0; k < 4; k++)
        if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
    return 0;
}

static study_result run_adaptive(const study_clip *c, int gran, int set)
{
    static const uint32_t sets[2][10] = {{1, 2, 4, 8, 16, 32}, {1, 2, 3, 4, 6, 8, 12, 16, 24, 48}};
    const uint32_t *periods = sets[set];
    unsigned np = set ? 10u : 6u;
    study_result r;
    memset(&r, 0, sizeof r);
    uint64_t *row = calloc(c->frames, sizeof *row), hdr = 0;
    int64_t *v = malloc(sizeof *v * c->frames);
    uint32_t *cls = malloc(sizeof *cls * 4 * c->lanes), *order = malloc(sizeof *order * c->lanes);
    for (uint32_t t = 0; t < c->tracks; t++) {
        uint64_t best_track = UINT64_MAX;
        unsigned choice[KILN_SOA_WIDTH][3]; /* period index, kind, width */
        static uint64_t lane_best[KILN_SOA_WIDTH][10][2][KILN__CLIP_MAX_QBITS + 4]; /* keys + residual bits */
        unsigned maxb = 0;
        for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) {
            uint32_t l = t * KILN_SOA_WIDTH + i;
            for (unsigned p = 0; p < np; p++)
                for (int kind = 0; kind < 2; kind++) {
                    uint32_t S = periods[p], segs = (c->frames + S - 1) / S, n = 0;
                    unsigned eb = 0;
                    for (uint32_t s = 0; S > 1 && s < segs; s++)
                        n += seg_values(c, s * S, S, l, kind ? CUBIC : RESID, v + n, &eb);
                    eb = c->w[l] + 2u;
                    maxb = eb > maxb ? eb : maxb;
                    uint64_t keys = (uint64_t)(c->frames - n) * c->w[l];
                    qsort(v, n, sizeof *v, cmp_i64);
                    for (unsigned b = 0; b <= eb; b++) {
                        int64_t lo, at;
                        const int64_t *fixed = slot_start(b, 1, &lo);
                        lane_best[i][p][kind][b] =
                            window_fit(v, n, (int64_t)1 << b, fixed, &at) == n ? keys + (uint64_t)n * b : UINT64_MAX / 64;
                    }
                }
        }
        for (unsigned p = 0; gran == 1 || gran == 2 ? p < np : 0; p++)
            for (int kind = 0; kind < 2; kind++)
                for (unsigned b = 0; b <= maxb; b++) {
                    /* gran 2: one (p, kind, b) for the track; gran 1: one (p, kind), b per lane */
                    uint64_t sum = 0;
                    unsigned ch[KILN_SOA_WIDTH][3];
                    for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) {
                        unsigned bb = b;
                        if (gran == 1)
                            for (unsigned x = 0; x <= maxb; x++)
                                if (lane_best[i][p][kind][x] < lane_best[i][p][kind][bb]) bb = x;
                        sum += lane_best[i][p][kind][bb];
                        ch[i][0] = p, ch[i][1] = (unsigned)kind, ch[i][2] = bb;
                    }
                    if (sum < best_track) best_track = sum, memcpy(choice, ch, sizeof ch);
                }
        for (unsigned i = 0; (gran == 0 || gran >= 3) && i < KILN_SOA_WIDTH; i++) {
            uint64_t best = UINT64_MAX;
            for (unsigned p = 0; p < np; p++)
                for (unsigned kind = 0; kind < 2; kind++)
                    for (unsigned b = 0; b <= maxb; b++)
                        if (lane_best[i][p][kind][b] < best)
                            best = lane_best[i][p][kind][b], choice[i][0] = p, choice[i][1] = kind, choice[i][2] = b;
        }
        for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) {
            uint32_t l = t * KILN_SOA_WIDTH + i;
            cls[4 * l] = choice[i][0], cls[4 * l + 1] = choice[i][1], cls[4 * l + 2] = choice[i][2];
            cls[4 * l + 3] = c->w[l];
            order[l] = l;
        }
    }
    if (gran >= 3) { /* regroup: sort by class, widen each group of 8 to its widest lane (3) */
        study_class = cls;
        qsort(order, c->lanes, sizeof *order, cmp_lane_class);
        for (uint32_t g = 0; g < c->lanes;) {
            uint32_t e = g + 1;
            while (e < c->lanes && e - g < KILN_SOA_WIDTH && cls[4 * order[e]] == cls[4 * order[g]] &&
                   cls[4 * order[e] + 1] == cls[4 * order[g] + 1])
                e++;
            uint32_t bmax = 0, wmax = 0, S = periods[cls[4 * order[g]]];
            for (uint32_t k = g; k < e; k++) {
                bmax = cls[4 * order[k] + 2] > bmax ? cls[4 * order[k] + 2] : bmax;
                wmax = cls[4 * order[k] + 3] > wmax ? cls[4 * order[k] + 3] : wmax;
            }
            for (uint32_t k = g; gran == 3 && k < e; k++) cls[4 * order[k] + 2] = bmax, cls[4 * order[k] + 3] = wmax;
            for (uint32_t k = e; gran == 3 && k < g + KILN_SOA_WIDTH; k++) /* a short group still takes 8 lanes */
                for (uint32_t f = 0; f < c->frames; f++) row[f] += f % S == 0 || f == c->frames - 1 ? wmax : bmax;
            hdr += (uint64_t)(e - g) * 16u;
            g = e;
        }
    }
    for (uint32_t g = 0; gran == 4 && g < c->lanes;) { /* each class's run of groups padded to bytes */
        uint32_t e = g + 1;
        while (e < c->lanes && cls[4 * order[e]] == cls[4 * order[g]] && cls[4 * order[e] + 1] == cls[4 * order[g] + 1])
            e++;
        uint32_t S = periods[cls[4 * order[g]]];
        for (uint32_t f = 0; f < c->frames; f++) {
            uint64_t bits = 0;
            for (uint32_t k = g; k < e; k++)
                bits += f % S == 0 || f == c->frames - 1 ? cls[4 * order[k] + 3] : cls[4 * order[k] + 2];
            row[f] += (bits + 7) / 8 * 8;
        }
        g = e;
    }
    for (uint32_t l = 0; l < c->lanes; l++) {
        uint32_t S = periods[cls[4 * l]];
        for (uint32_t f = 0; f < c->frames; f++) {
            int key = f % S == 0 || f == c->frames - 1;
            if (gran != 4) row[f] += key ? cls[4 * l + 3] : cls[4 * l + 2];
            r.values += !key;
        }
        hdr += STUDY_WBITS + 4u + 1u;
        r.hit_rows += S;
        /* rows read for frame f: f, and its 2 (lerp) or 4 (Catmull-Rom) keys when it is not one */
        unsigned nk = cls[4 * l + 1] ? 4u : 2u;
        for (uint32_t f = 0; f + 1 < c->frames; f++) {
            int k0 = f % S == 0 || f == c->frames - 1, k1 = (f + 1) % S == 0 || f + 1 == c->frames - 1;
            r.unpack_frame += k0 ? 1.0 : 1.0 + nk;
            /* the pair: both keys 2; one of them a key (and a key of the other) 1 + nk; else 2 + nk */
            r.unpack_pair += k0 && k1 ? 2.0 : (k0 || k1 ? 1.0 : 2.0) + nk;
        }
    }
    for (uint32_t f = 0; f < c->frames; f++) r.bytes += (row[f] + 7) / 8;
    r.bytes += (hdr + 7) / 8;
    r.rows = c->lanes;
    r.unpack_frame /= (double)c->lanes * (c->frames - 1);
    r.unpack_pair /= (double)c->lanes * (c->frames - 1);
    free(row);
    free(v);
    free(cls);
    free(order);
    return r;
}

/* Key rows, then per segment-lane the cheaper of PFOR (bitmap, per lane) on the interior values
 * and on their residuals; 1 bit says which. */
static study_result run_best_ab(const study_clip *c, uint32_t S)
{
    study_result r;
    memset(&r, 0, sizeof r);
    int64_t sorted[STUDY_MAX_S];
    uint32_t segs = (c->frames + S - 1) / S;
    for (uint32_t s = 0; s < segs; s++) {
        uint64_t bits = STUDY_SEGOFF, rowbits = 0;
        uint32_t n = 0;
        for (uint32_t l = 0; l < c->lanes; l++) {
            uint64_t best = UINT64_MAX, bestrow = 0, bestex = 0;
            for (int kind = RESID; kind <= INTERIOR; kind++) {
                unsigned eb;
                n = seg_values(c, s * S, S, l, kind, sorted, &eb);
                qsort(sorted, n, sizeof(int64_t), cmp_i64);
                for (unsigned b = 0; n && b <= eb; b++) {
                    uint32_t e = 0;
                    int64_t at;
                    uint64_t cost = pfor_bits(sorted, n, b, eb, 0, kind == RESID, &e, &at) +
                                    (kind == RESID ? 0u : eb) + STUDY_WBITS + 1u;
                    if (cost < best) best = cost, bestrow = b, bestex = e;
                }
            }
            if (!n) continue;
            rowbits += bestrow;
            bits += best - (uint64_t)n * bestrow;
            r.exceptions += bestex;
            r.values += n;
        }
        r.bytes += (uint64_t)n * ((rowbits + 7) / 8) + (bits + 7) / 8;
    }
    r.bytes += key_row_bytes(c, S);
    return r;
}

/* Entropy coding of the values (a) or residuals (b): a table per segment-lane, or (per_lane)
 * one per lane for the whole clip; a 32-bit offset per segment either way. */
static study_result run_entropy(const study_clip *c, uint32_t S, int resid, int coder, int per_lane)
{
    study_result r;
    memset(&r, 0, sizeof r);
    int64_t *all = malloc(sizeof *all * c->frames);
    uint32_t segs = (c->frames + S - 1) / S;
    double bits = (double)segs * STUDY_SEGOFF;
    for (uint32_t l = 0; l < c->lanes; l++) {
        uint32_t n = 0;
        unsigned eb = 0;
        for (uint32_t s = 0; s < segs; s++) {
            uint32_t k = seg_values(c, s * S, S, l, resid ? RESID : VALUES, all + n, &eb);
            if (!per_lane) bits += code_bits(all + n, k, eb, coder);
            n += k;
        }
        if (per_lane) bits += code_bits(all, n, eb, coder);
        r.values += n;
    }
    free(all);
    r.bytes = (uint64_t)ceil(bits / 8) + (resid ? key_row_bytes(c, S) : 0);
    return r;
}

/* Sequential differences of order 1 or 2 along the whole clip (sequential access only): the
 * first `order` frames at full width, the rest at one zigzag width per lane (coder < 0) or coded
 * with one table per lane. */
static study_result run_seq(const study_clip *c, int order, int coder)
{
    study_result r;
    memset(&r, 0, sizeof r);
    int64_t *d = malloc(sizeof *d * c->frames);
    double bits = 0;
    for (uint32_t l = 0; l < c->lanes; l++) {
        uint32_t n = 0;
        uint64_t zmax = 0;
        const int64_t *q = c->q + l;
        for (uint32_t f = (uint32_t)order; f < c->frames; f++) {
            int64_t x = q[(size_t)f * c->lanes] - q[(size_t)(f - 1) * c->lanes];
            if (order == 2) x -= q[(size_t)(f - 1) * c->lanes] - q[(size_t)(f - 2) * c->lanes];
            uint64_t z = x >= 0 ? (uint64_t)x * 2 : (uint64_t)(-x) * 2 - 1;
            if (z > zmax) zmax = z;
            d[n++] = x;
        }
        bits += (double)order * c->w[l];
        bits += coder < 0 ? STUDY_WBITS + (double)n * bits_for(zmax) : code_bits(d, n, c->w[l] + 2u, coder);
        r.values += n;
    }
    free(d);
    r.bytes = (uint64_t)ceil(bits / 8);
    return r;
}

/* ---- report ---------------------------------------------------------------------------------- */
static void emit(const study_clip *c, const char *scheme, uint32_t S, study_result r, char *line, size_t cap)
{
    uint64_t total = c->fixed + r.bytes;
    printf("{\"bench\":\"clip_layout_study\",\"clip\":\"%s\",\"scheme\":\"%s\",\"S\":%u,\"bytes\":%llu,"
           "\"rows_bytes\":%llu,\"exceptions\":%llu,\"values\":%llu,\"track_rows_with_exception\":%llu,"
           "\"track_rows\":%llu}\n",
           c->name, scheme, S, (unsigned long long)total, (unsigned long long)r.bytes,
           (unsigned long long)r.exceptions, (unsigned long long)r.values, (unsigned long long)r.hit_rows,
           (unsigned long long)r.rows);
    size_t len = strlen(line);
    if (r.values && r.exceptions)
        snprintf(line + len, cap - len, " %8llu %4.1f%%", (unsigned long long)total,
                 100.0 * (double)r.exceptions / (double)r.values);
    else
        snprintf(line + len, cap - len, " %8llu      ", (unsigned long long)total);
}

static void study_report(const study_clip *c)
{
    static const uint32_t sizes[] = {4, 8, 16, 32, 64};
    enum { NS = sizeof sizes / sizeof sizes[0] };
    char line[512];
    study_result r;
    memset(&r, 0, sizeof r);

    fprintf(stderr, "\n%s: data bytes (constants + track table + slack %llu, then the rows); exception rate\n", c->name,
            (unsigned long long)c->fixed);
    line[0] = 0;
    r.bytes = c->today_rows;
    emit(c, "today", 0, r, line, sizeof line);
    fprintf(stderr, "  %-24s%s\n", "today", line);
    uint64_t rowbits = 0, lanebits = 0;
    for (uint32_t l = 0; l < c->lanes; l++) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (uint32_t f = 0; f < c->frames; f++) {
            int64_t v = c->q[(size_t)f * c->lanes + l];
            lo = v < lo ? v : lo, hi = v > hi ? v : hi;
        }
        rowbits += c->w[l];
        lanebits += bits_for((uint64_t)(hi - lo));
    }
    line[0] = 0;
    r.bytes = (uint64_t)c->frames * ((rowbits + 7) / 8);
    emit(c, "packed", 0, r, line, sizeof line);
    fprintf(stderr, "  %-24s%s\n", "packed", line);
    line[0] = 0;
    r.bytes = (uint64_t)c->frames * ((lanebits + 7) / 8);
    emit(c, "lane_widths", 0, r, line, sizeof line);
    fprintf(stderr, "  %-24s%s\n", "lane_widths", line);
    static const char *const seqn[] = {"seq_d1_fixed", "seq_d1_h0", "seq_d1_bucket",
                                       "seq_d2_fixed", "seq_d2_h0", "seq_d2_bucket"};
    static const int seqc[] = {-1, H0, BUCKET};
    for (int k = 0; k < 6; k++) {
        line[0] = 0;
        emit(c, seqn[k], 0, run_seq(c, 1 + k / 3, seqc[k % 3]), line, sizeof line);
        fprintf(stderr, "  %-24s%s\n", seqn[k], line);
    }

    static const char *const adn[] = {"adaptive_lane",          "adaptive_track_period", "adaptive_track",
                                      "adaptive_grouped",       "adaptive_grouped_lanew", "adaptive48_lane",
                                      "adaptive48_track_period", "adaptive48_track",     "adaptive48_grouped",
                                      "adaptive48_grouped_lanew"};
    for (int k = 0; k < 10; k++) {
        line[0] = 0;
        r = run_adaptive(c, k % 5, k / 5);
        emit(c, adn[k], 0, r, line, sizeof line);
        fprintf(stderr, "  %-24s%s mean period %.2f, fields unpacked per lane: %.2f a frame, %.2f for a pair\n",
                adn[k], line, (double)r.hit_rows / (double)r.rows, r.unpack_frame, r.unpack_pair);
    }

    fprintf(stderr, "  %-24s", "S =");
    for (int i = 0; i < NS; i++) fprintf(stderr, " %8u      ", sizes[i]);
    fprintf(stderr, "\n");
    static const char *const names[] = {"a_for_track",         "a_for_lane",          "a_pfor_track_bitmap",
                                        "a_pfor_lane_bitmap",  "a_pfor_track_escape", "a_pfor_lane_escape",
                                        "b_for_track",         "b_for_lane",          "b_pfor_track_bitmap",
                                        "b_pfor_lane_bitmap",  "b_pfor_track_escape", "b_pfor_lane_escape",
                                        "ab_pfor_lane_bitmap", "h0t_a",               "h0t_b",
                                        "h0lane_b",            "bucket_b",            "bucket_lane_b",
                                        "c_for_track",         "c_for_lane",          "bw_track",
                                        "bw_lane",             "bw_pfor_lane",        "cw_track",
                                        "cw_lane",             "cw_pfor_lane"};
    for (unsigned k = 0; k < sizeof names / sizeof names[0]; k++) {
        line[0] = 0;
        for (int i = 0; i < NS; i++) {
            uint32_t S = sizes[i];
            if (k < 12) {
                static const int modes[3] = {MODE_FOR, MODE_PFOR_BITMAP, MODE_PFOR_ESCAPE};
                r = run_pfor(c, S, k < 6 ? VALUES : RESID, modes[(k % 6) / 2], (k % 2) == 0);
            } else if (k == 12) {
                r = run_best_ab(c, S);
            } else if (k >= 20) {
                r = run_clipwide(c, S, k < 23 ? RESID : CUBIC, (k - 20) % 3 == 0, (k - 20) % 3 == 2);
            } else if (k >= 18) {
                r = run_pfor(c, S, CUBIC, MODE_FOR, k == 18);
            } else {
                static const int ent[5][3] = {{0, H0_TABLE, 0}, {1, H0_TABLE, 0}, {1, H0, 1}, {1, BUCKET, 0},
                                              {1, BUCKET, 1}};
                const int *e = ent[k - 13];
                r = run_entropy(c, S, e[0], e[1], e[2]);
            }
            emit(c, names[k], S, r, line, sizeof line);
        }
        fprintf(stderr, "  %-24s%s\n", names[k], line);
    }
}

/* ---- inputs ---------------------------------------------------------------------------------- */
static const kiln_blob *bake_anchor(const char dir[1024], const char *name, kiln_bake_result *res)
{
    char mpath[1200], apath[1200];
    if (snprintf(mpath, sizeof mpath, "%s/bench/%s_model.cast", dir, name) >= (int)sizeof mpath ||
        snprintf(apath, sizeof apath, "%s/bench/%s_anim.cast", dir, name) >= (int)sizeof apath)
        return NULL;
    size_t msize = 0, asize = 0;
    void *m = bench_load(mpath, &msize), *an = bench_load(apath, &asize);
    const kiln_blob *blob = NULL;
    kiln_bake_input in[2] = {{mpath, m, msize, NULL}, {apath, an, asize, NULL}};
    kiln_bake_options opt;
    memset(&opt, 0, sizeof opt);
    opt.flags |= KILN_BAKE_LOSSY_ANIMATION;
    kiln_diag err;
    if (m && an && kiln_bake(in, 2, &opt, res, &err) == KILN_OK)
        kiln_blob_load(res->blob, res->size, 0, &blob, &err);
    else
        fprintf(stderr, "clip_layout_study: cannot bake %s\n", name);
    free(m);
    free(an);
    return blob;
}

int main(int argc, char **argv)
{
    if (bench_quick(argc, argv)) return 0;
    int failed = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            size_t size = 0;
            void *mem = bench_load(argv[i], &size);
            const kiln_blob *blob = NULL;
            kiln_diag err;
            study_clip c;
            memset(&c, 0, sizeof c);
            if (!mem || kiln_blob_load(mem, size, 0, &blob, &err) != KILN_OK || !study_read(blob, argv[i], &c)) {
                fprintf(stderr, "clip_layout_study: %s: not a loadable blob with a lossy clip\n", argv[i]);
                failed = 1;
            } else {
                study_report(&c);
            }
            free(c.w);
            free(c.q);
            free(mem);
        }
        return failed;
    }
    char dir[1024];
    if (!bench_corpus_dir(dir, sizeof dir)) {
        fprintf(stderr, "clip_layout_study: no corpus (set KILN_SHARED_DIR)\n");
        return 1;
    }
    static const char *const anchors[] = {"anchor_n20", "anchor_n80_inplace", "anchor_n80", "anchor_n200"};
    for (unsigned i = 0; i < sizeof anchors / sizeof anchors[0]; i++) {
        kiln_bake_result res;
        memset(&res, 0, sizeof res);
        const kiln_blob *blob = bake_anchor(dir, anchors[i], &res);
        study_clip c;
        memset(&c, 0, sizeof c);
        if (blob && study_read(blob, anchors[i], &c))
            study_report(&c);
        else
            failed = 1;
        free(c.w);
        free(c.q);
        if (res.blob) kiln_bake_result_free(&res);
    }
    return failed;
}
