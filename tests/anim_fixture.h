/* Test-side animation blobs: a skeleton and clips laid out exactly as blob_format.h (1.1)
 * describes, from dense per-frame component values, independently of the baker. Also a few
 * double-precision references (matrices, slerp) for the tests. Header-only (static inline).
 *
 *   af_bone bones[3] = {{"root", -1, {0,0,0}, {0,0,0,1}, {1,1,1}, 0}, ...};
 *   af_skel skel = {3, bones};
 *   af_joint joints[3] = {{"root", AF_MODES_ALL(KILN_MODE_ABSOLUTE), {1,1,1}}, ...};
 *   af_clip clip = {.framerate = 30, .frame_count = 4, .joint_count = 3, .joints = joints,
 *                   .values = v, .width = 32};           // v[(frame * joints + j) * 10 + c]
 *   size_t size;
 *   unsigned char *mem = af_build(&skel, &clip, 1, &size);   // free() it
 *   const kiln_blob *blob;  kiln_blob_load(mem, size, 0, &blob, NULL);
 *
 * Layout choices the runtime relies on and the baker must share: clip data = constants
 * (block_count kiln_soa_xform), track table, rows starting at the next 16-byte boundary,
 * row_stride a multiple of 16, scalar data 16-aligned in DATA.
 */
#ifndef KILN_TEST_ANIM_FIXTURE_H
#define KILN_TEST_ANIM_FIXTURE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/anim.h"
#include "kiln/blob.h"
#include "kiln/blob_format.h"
#include <stdio.h>

/* ---- byte buffers, CRC-32C, FNV-1a (own copies: independent of the runtime) ---------------- */
typedef struct af_buf {
    unsigned char *p;
    size_t n, cap;
} af_buf;

static inline size_t af_put(af_buf *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        unsigned char *p = (unsigned char *)realloc(b->p, cap);
        if (!p) abort();
        b->p = p, b->cap = cap;
    }
    size_t at = b->n;
    if (src) memcpy(b->p + at, src, n);
    else memset(b->p + at, 0, n);
    b->n += n;
    return at;
}

static inline void af_pad(af_buf *b, size_t align)
{
    while (b->n % align) af_put(b, NULL, 1);
}

#define af_add(buf, rec) ((void)af_put((buf), (rec), sizeof *(rec)))

static inline uint32_t af_crc32c(uint32_t crc, const void *data, size_t n)
{
    static uint32_t table[256];
    if (!table[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
            table[i] = c;
        }
    const unsigned char *p = (const unsigned char *)data;
    crc = ~crc;
    while (n--) crc = (crc >> 8) ^ table[(crc ^ *p++) & 0xFFu];
    return ~crc;
}

static inline uint32_t af_fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

/* The header checksum: CRC-32C of the whole blob with the crc32c field read as zero. */
static inline void af_fix_crc(unsigned char *blob, size_t size)
{
    kiln_blob_header h;
    memcpy(&h, blob, sizeof h);
    h.crc32c = 0;
    uint32_t crc = af_crc32c(0, &h, sizeof h);
    crc = af_crc32c(crc, blob + sizeof h, size - sizeof h);
    memcpy(blob + offsetof(kiln_blob_header, crc32c), &crc, 4);
}

static inline void af_identity_soa(kiln_soa_xform *x)
{
    memset(x, 0, sizeof *x);
    for (unsigned i = 0; i < KILN_SOA_WIDTH; i++) x->qw[i] = x->sx[i] = x->sy[i] = x->sz[i] = 1.0f;
}

#define AF_MODES_ALL(m) ((m) * 0x55555u) /* the same 2-bit mode on all 10 components */
#define AF_MODE(c, m) ((uint32_t)(m) << (2 * (c)))

typedef struct af_bone {
    const char *name;
    int32_t parent;
    float t[3], r[4], s[3];
    uint32_t ssc;
} af_bone;

/* A bone at translation (x, y, z) under `parent` (-1: a root): identity rotation, unit scale,
 * segment scale compensation on. */
static inline af_bone af_bone_at(const char *name, int32_t parent, float x, float y, float z)
{
    af_bone b;
    memset(&b, 0, sizeof b);
    b.name = name, b.parent = parent, b.t[0] = x, b.t[1] = y, b.t[2] = z;
    b.r[3] = 1.0f, b.s[0] = b.s[1] = b.s[2] = 1.0f, b.ssc = 1;
    return b;
}

typedef struct af_skel {
    uint32_t bone_count;
    const af_bone *bones;
} af_skel;

typedef struct af_joint {
    const char *name;
    uint32_t modes; /* 2 bits per component (KILN_MODE_*) */
    float ab[3];    /* additive weight of T, R, S */
} af_joint;

typedef struct af_override {
    const char *name;
    uint32_t mode, channels, order;
} af_override;

typedef struct af_clip {
    const char *name;
    float framerate;
    uint32_t flags;            /* KILN_ANIM_LOOPING (LOSSY follows from width) */
    int64_t first_frame;
    uint32_t frame_count;
    uint32_t joint_count;
    const af_joint *joints;
    const float *values;       /* frame_count x joint_count x 10 */
    uint32_t width;            /* 32: lossless; 1..24: every animated track quantised */
    int all_tracks;            /* store every (block, component) as a track, constant or not */
    int scramble_rows;         /* lay tracks out in reverse order in the row (no dense blocks) */
    uint32_t scalar_count;
    const char *const *scalar_names;
    const uint32_t *scalar_kinds;
    const float *scalar_values; /* scalar_count x frame_count */
    uint32_t override_count;
    const af_override *overrides;
    uint32_t event_count;
    const char *const *event_names;
    const int64_t *event_frames;
} af_clip;

/* ---- double-precision references ---------------------------------------------------------- */
/* Column-major 4x4 of T(t) · R(q) · S(s). */
static inline void af_trs(const double t[3], const double q[4], const double s[3], double m[16])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y),
                   2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x),
                   2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)};
    for (int c = 0; c < 3; c++) {
        for (int row = 0; row < 3; row++) m[c * 4 + row] = r[c * 3 + row] * s[c];
        m[c * 4 + 3] = 0;
    }
    m[12] = t[0], m[13] = t[1], m[14] = t[2], m[15] = 1;
}

static inline void af_mul(const double a[16], const double b[16], double r[16])
{
    double t[16];
    for (int c = 0; c < 4; c++)
        for (int row = 0; row < 4; row++) {
            double acc = 0;
            for (int k = 0; k < 4; k++) acc += a[k * 4 + row] * b[c * 4 + k];
            t[c * 4 + row] = acc;
        }
    memcpy(r, t, sizeof t);
}

static inline void af_identity(double m[16])
{
    memset(m, 0, 16 * sizeof(double));
    m[0] = m[5] = m[10] = m[15] = 1;
}

/* General 4x4 inverse by Gauss-Jordan with partial pivoting. */
static inline int af_invert(const double m[16], double inv[16])
{
    double a[4][8];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) a[r][c] = m[c * 4 + r], a[r][4 + c] = r == c;
    for (int c = 0; c < 4; c++) {
        int p = c;
        for (int r = c + 1; r < 4; r++)
            if (fabs(a[r][c]) > fabs(a[p][c])) p = r;
        if (fabs(a[p][c]) < 1e-300) return 0;
        for (int k = 0; k < 8; k++) {
            double t = a[c][k];
            a[c][k] = a[p][k], a[p][k] = t;
        }
        double d = a[c][c];
        for (int k = 0; k < 8; k++) a[c][k] /= d;
        for (int r = 0; r < 4; r++)
            if (r != c) {
                double f = a[r][c];
                for (int k = 0; k < 8; k++) a[r][k] -= f * a[c][k];
            }
    }
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) inv[c * 4 + r] = a[r][4 + c];
    return 1;
}

/* Model matrices (double) of local transforms per bone, with segment scale compensate per
 * C.1; `root` optional. local[i] = {t[3], q[4], s[3]}. */
static inline void af_model_ref(uint32_t n, const int32_t *parents, const uint32_t *ssc, const double (*local)[10],
                                const double *root, double (*model)[16])
{
    for (uint32_t i = 0; i < n; i++) {
        double l[16];
        af_trs(local[i], local[i] + 3, local[i] + 7, l);
        if (parents[i] < 0) {
            if (root) af_mul(root, l, model[i]);
            else memcpy(model[i], l, sizeof l);
            continue;
        }
        const double *p = model[parents[i]];
        if (ssc[i]) {
            /* W_parent · T(t) · S(s_parent)^-1 · R · S */
            double tm[16], sinv[16], rs[16], t3[3] = {local[i][0], local[i][1], local[i][2]}, zero[3] = {0, 0, 0};
            double one[4] = {0, 0, 0, 1}, ones[3] = {1, 1, 1};
            af_trs(t3, one, ones, tm);
            double inv_s[3] = {1 / local[parents[i]][7], 1 / local[parents[i]][8], 1 / local[parents[i]][9]};
            af_trs(zero, one, inv_s, sinv);
            af_trs(zero, local[i] + 3, local[i] + 7, rs);
            double tmp[16];
            af_mul(p, tm, tmp);
            af_mul(tmp, sinv, tmp);
            af_mul(tmp, rs, model[i]);
        } else {
            af_mul(p, l, model[i]);
        }
    }
}

/* Exact slerp in double, shortest arc. */
static inline void af_slerp(const double a[4], const double b0[4], double t, double r[4])
{
    double b[4] = {b0[0], b0[1], b0[2], b0[3]};
    double d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    if (d < 0) {
        d = -d;
        for (int i = 0; i < 4; i++) b[i] = -b[i];
    }
    double wa, wb;
    if (d > 1 - 1e-15) {
        wa = 1 - t, wb = t;
    } else {
        double th = acos(d), s = sin(th);
        wa = sin((1 - t) * th) / s, wb = sin(t * th) / s;
    }
    double n = 0;
    for (int i = 0; i < 4; i++) r[i] = wa * a[i] + wb * b[i], n += r[i] * r[i];
    n = sqrt(n);
    for (int i = 0; i < 4; i++) r[i] /= n;
}

/* Hamilton product a ⊗ b (x, y, z, w). */
static inline void af_qmul(const double a[4], const double b[4], double r[4])
{
    double t[4] = {a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
                   a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
                   a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
                   a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};
    memcpy(r, t, sizeof t);
}

/* Unit quaternion from an axis (normalised here) and an angle. */
static inline void af_axis_angle(double ax, double ay, double az, double angle, float q[4])
{
    double n = sqrt(ax * ax + ay * ay + az * az), s = sin(angle / 2) / n;
    q[0] = (float)(ax * s), q[1] = (float)(ay * s), q[2] = (float)(az * s), q[3] = (float)cos(angle / 2);
}

/* ---- building ------------------------------------------------------------------------------ */
static inline uint32_t af_lcg(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}
static inline float af_rand(uint32_t *state, float lo, float hi) { return lo + (hi - lo) * (float)af_lcg(state) / 16777216.0f; }

/* Smooth motion like the benchmark anchor's: per joint, translation = offset + small
 * sinusoids (root: a walk along +z), rotation = a random base rotation times a sinusoidal
 * rotation about a random axis (0.2-0.8 rad, 0.2-2 Hz), scale = 1 ± 2 % sinusoids.
 * values: frames x joints x 10 (tx ty tz qx qy qz qw sx sy sz). */
static inline void af_motion(uint32_t frames, uint32_t joints, uint32_t seed, float framerate, float *values)
{
    uint32_t st = seed * 2654435761u + 17u;
    for (uint32_t j = 0; j < joints; j++) {
        float off = j == 0 ? 1.0f : 0.03f + 0.27f * (float)af_lcg(&st) / 16777216.0f;
        double ax = af_rand(&st, -1, 1), ay = af_rand(&st, -1, 1), az = af_rand(&st, -1, 1);
        float base[4];
        af_axis_angle(af_rand(&st, -1, 1), af_rand(&st, -1, 1), af_rand(&st, -1, 1) + 0.01, af_rand(&st, -3, 3), base);
        double amp = af_rand(&st, 0.2f, 0.8f), hz = af_rand(&st, 0.2f, 2.0f), ph = af_rand(&st, 0, 6.28f);
        double thz[3], tph[3], shz[3], sph[3];
        for (int i = 0; i < 3; i++)
            thz[i] = af_rand(&st, 0.2f, 2.0f), tph[i] = af_rand(&st, 0, 6.28f), shz[i] = af_rand(&st, 0.2f, 2.0f),
            sph[i] = af_rand(&st, 0, 6.28f);
        for (uint32_t f = 0; f < frames; f++) {
            double t = f / (double)framerate;
            float *v = values + ((size_t)f * joints + j) * 10;
            double tamp = j == 0 ? 0.05 : 0.01;
            for (int i = 0; i < 3; i++) v[i] = (float)(tamp * sin(6.2831853 * thz[i] * t + tph[i]));
            v[1] += off;
            if (j == 0) v[2] += (float)(1.2 * t);
            float d[4];
            af_axis_angle(ax, ay, az + 1e-3, amp * sin(6.2831853 * hz * t + ph), d);
            double bq[4] = {base[0], base[1], base[2], base[3]}, dq[4] = {d[0], d[1], d[2], d[3]}, r[4];
            af_qmul(bq, dq, r);
            for (int i = 0; i < 4; i++) v[3 + i] = (float)r[i];
            for (int i = 0; i < 3; i++) v[7 + i] = (float)(1.0 + 0.02 * sin(6.2831853 * shz[i] * t + sph[i]));
        }
    }
}


/* Appends a NUL-terminated string to a string table; "" is offset 0. */
static inline uint32_t af_str(af_buf *strs, const char *s)
{
    if (!s || !s[0]) return 0;
    return (uint32_t)af_put(strs, s, strlen(s) + 1);
}

typedef struct af_sec {
    uint32_t kind, stride;
    af_buf buf;
} af_sec;

/* Identity value of component c. */
static inline float af_identity_value(unsigned c) { return c == 6 || c >= 7 ? 1.0f : 0.0f; }

/* Appends one clip's records and data. DATA offsets are relative to the DATA section here and
 * made absolute by af_build. */
static inline void af_add_clip(af_buf *strs, af_buf *anims, af_buf *joints, af_buf *scalars, af_buf *overrides,
                               af_buf *events, af_buf *data, const af_clip *c)
{
    const uint32_t J = c->joint_count, F = c->frame_count, B = (J + 7) / 8, W = c->width ? c->width : 32;
    const int lossy = W != 32;
    /* the value of (block, component, lane) at frame f, with identity where there is no curve */
    float *val = (float *)calloc((size_t)F * B * 80 + 1, sizeof(float));
    if (!val) abort();
    for (uint32_t f = 0; f < F; f++)
        for (uint32_t b = 0; b < B; b++)
            for (unsigned comp = 0; comp < 10; comp++)
                for (unsigned l = 0; l < 8; l++) {
                    uint32_t j = b * 8 + l;
                    float v = af_identity_value(comp);
                    if (j < J && (c->joints[j].modes >> (2 * comp) & 3u)) v = c->values[((size_t)f * J + j) * 10 + comp];
                    val[(((size_t)f * B + b) * 10 + comp) * 8 + l] = v;
                }
    if (lossy) /* stored rotations have qw >= 0 */
        for (uint32_t f = 0; f < F; f++)
            for (uint32_t b = 0; b < B; b++)
                for (unsigned l = 0; l < 8; l++) {
                    float *q = &val[(((size_t)f * B + b) * 10 + 3) * 8 + l];
                    if (q[3 * 8] < 0)
                        for (int i = 0; i < 4; i++) q[i * 8] = -q[i * 8];
                }
#define AF_V(f, b, comp, l) val[((((size_t)(f)) * B + (b)) * 10 + (comp)) * 8 + (l)]
    /* which pairs are tracks */
    uint8_t *track = (uint8_t *)calloc((size_t)B * 10 + 1, 1);
    if (!track) abort();
    uint32_t ntracks = 0;
    for (uint32_t b = 0; b < B; b++) {
        for (unsigned comp = 0; comp < 10; comp++) {
            int animated = c->all_tracks;
            for (uint32_t f = 1; f < F && !animated; f++)
                for (unsigned l = 0; l < 8; l++)
                    if (AF_V(f, b, comp, l) != AF_V(0, b, comp, l)) animated = 1;
            if (lossy && comp == 6) animated = 0;
            track[b * 10 + comp] = (uint8_t)animated;
        }
        for (unsigned comp = 0; comp < 10; comp++) ntracks += track[b * 10 + comp];
    }

    kiln_blob_animation a;
    memset(&a, 0, sizeof a);
    a.name = c->name ? af_str(strs, c->name) : 0;
    a.framerate = c->framerate;
    a.flags = (c->flags & KILN_ANIM_LOOPING) | (lossy ? KILN_ANIM_LOSSY : 0u);
    a.first_frame = c->first_frame;
    a.last_frame = c->first_frame + (int64_t)F - 1;
    a.frame_count = F;
    a.joint_count = J;
    a.block_count = B;
    a.first_joint = (uint32_t)(joints->n / sizeof(kiln_blob_anim_joint));
    a.first_scalar = (uint32_t)(scalars->n / sizeof(kiln_blob_anim_scalar));
    a.scalar_count = c->scalar_count;
    a.first_override = (uint32_t)(overrides->n / sizeof(kiln_blob_anim_override));
    a.override_count = c->override_count;
    a.first_event = (uint32_t)(events->n / sizeof(kiln_blob_anim_event));
    a.event_count = c->event_count;
    a.animated_count = ntracks;

    /* tracks and row layout */
    kiln_blob_anim_track *tr = (kiln_blob_anim_track *)calloc(ntracks + 1, sizeof *tr);
    if (!tr) abort();
    uint32_t k = 0, off = 0;
    for (uint32_t b = 0; b < B; b++)
        for (unsigned comp = 0; comp < 10; comp++) {
            if (!track[b * 10 + comp]) continue;
            tr[k].block = (uint16_t)b;
            tr[k].component = (uint8_t)comp;
            tr[k].width = (uint8_t)W;
            for (unsigned l = 0; l < 8; l++) {
                float lo = AF_V(0, b, comp, l), hi = lo;
                for (uint32_t f = 1; f < F; f++) {
                    float v = AF_V(f, b, comp, l);
                    lo = v < lo ? v : lo, hi = v > hi ? v : hi;
                }
                if (lossy) tr[k].range_min[l] = lo, tr[k].range_extent[l] = hi - lo;
            }
            k++;
        }
    for (uint32_t i = 0; i < ntracks; i++) {
        uint32_t t = c->scramble_rows ? ntracks - 1 - i : i;
        tr[t].row_offset = off;
        off += W;
    }
    uint32_t stride = (off + 15u) & ~15u;
    a.row_stride = stride;

    af_pad(data, 16);
    uint64_t start = data->n;
    a.data_offset = start;
    /* constants */
    for (uint32_t b = 0; b < B; b++) {
        kiln_soa_xform x;
        float *xf = (float *)&x;
        for (unsigned comp = 0; comp < 10; comp++)
            for (unsigned l = 0; l < 8; l++) xf[comp * 8 + l] = track[b * 10 + comp] ? af_identity_value(comp) : AF_V(0, b, comp, l);
        af_put(data, &x, sizeof x);
    }
    af_put(data, tr, (size_t)ntracks * sizeof *tr);
    af_pad(data, 16);
    /* rows */
    unsigned char *row = (unsigned char *)calloc(stride + 1, 1);
    if (!row) abort();
    for (uint32_t f = 0; f < F; f++) {
        memset(row, 0, stride);
        for (uint32_t t = 0; t < ntracks; t++) {
            unsigned char *dst = row + tr[t].row_offset;
            for (unsigned l = 0; l < 8; l++) {
                float v = AF_V(f, tr[t].block, tr[t].component, l);
                if (!lossy) {
                    memcpy(dst + 4 * l, &v, 4);
                    continue;
                }
                uint32_t maxq = (1u << W) - 1u;
                double e = tr[t].range_extent[l];
                uint32_t q = e > 0 ? (uint32_t)lround((v - tr[t].range_min[l]) / e * maxq) : 0u;
                if (q > maxq) q = maxq;
                for (uint32_t bit = 0; bit < W; bit++)
                    if (q >> bit & 1u) dst[(l * W + bit) / 8] |= (unsigned char)(1u << ((l * W + bit) % 8));
            }
        }
        af_put(data, row, stride);
    }
    if (lossy) af_put(data, NULL, 16); /* the zero slack lossy clips keep after their rows */
    a.data_size = data->n - start;
    free(row);
#undef AF_V

    /* joints */
    for (uint32_t j = 0; j < J; j++) {
        kiln_blob_anim_joint jt;
        memset(&jt, 0, sizeof jt);
        jt.name = af_str(strs, c->joints[j].name);
        jt.name_hash = af_fnv1a(c->joints[j].name);
        jt.modes = c->joints[j].modes;
        for (int g = 0; g < 3; g++) jt.additive_weight[g] = c->joints[j].ab[g];
        af_add(joints, &jt);
    }
    /* scalars */
    for (uint32_t s = 0; s < c->scalar_count; s++) {
        kiln_blob_anim_scalar sc;
        memset(&sc, 0, sizeof sc);
        sc.name = af_str(strs, c->scalar_names[s]);
        sc.name_hash = af_fnv1a(c->scalar_names[s]);
        sc.kind = c->scalar_kinds[s];
        af_pad(data, 16);
        sc.data_offset = af_put(data, c->scalar_values + (size_t)s * F, (size_t)F * 4);
        af_add(scalars, &sc);
    }
    for (uint32_t o = 0; o < c->override_count; o++) {
        kiln_blob_anim_override ov = {af_str(strs, c->overrides[o].name), c->overrides[o].mode,
                                      c->overrides[o].channels, c->overrides[o].order};
        af_add(overrides, &ov);
    }
    for (uint32_t e = 0; e < c->event_count; e++) {
        kiln_blob_anim_event ev;
        memset(&ev, 0, sizeof ev);
        ev.name = af_str(strs, c->event_names[e]);
        ev.frame = c->event_frames[e];
        af_add(events, &ev);
    }
    af_add(anims, &a);
    free(val);
    free(track);
    free(tr);
}

/* Lays out a blob with the skeleton (optional: bone_count 0 leaves it out) and the clips.
 * 64-byte aligned malloc memory of *size bytes (free() it). */
static inline unsigned char *af_build(const af_skel *skel, const af_clip *clips, uint32_t clip_count, size_t *size)
{
    enum { S_STRS, S_MODL, S_SKEL, S_BONE, S_REST, S_IBND, S_DATA, S_ANIM, S_AJNT, S_ASCL, S_AOVR, S_AEVT, S_N };
    af_sec sec[S_N];
    memset(sec, 0, sizeof sec);
    const uint32_t kinds[S_N] = {KILN_SECTION_STRINGS, KILN_SECTION_MODELS, KILN_SECTION_SKELETONS, KILN_SECTION_BONES,
                                 KILN_SECTION_REST_POSE, KILN_SECTION_INVERSE_BIND, KILN_SECTION_DATA,
                                 KILN_SECTION_ANIMATIONS, KILN_SECTION_ANIM_JOINTS, KILN_SECTION_ANIM_SCALARS,
                                 KILN_SECTION_ANIM_OVERRIDES, KILN_SECTION_ANIM_EVENTS};
    const uint32_t strides[S_N] = {0, sizeof(kiln_blob_model), sizeof(kiln_blob_skeleton), sizeof(kiln_blob_bone),
                                   sizeof(kiln_soa_xform), 64, 0, sizeof(kiln_blob_animation),
                                   sizeof(kiln_blob_anim_joint), sizeof(kiln_blob_anim_scalar),
                                   sizeof(kiln_blob_anim_override), sizeof(kiln_blob_anim_event)};
    for (int i = 0; i < S_N; i++) sec[i].kind = kinds[i], sec[i].stride = strides[i];
    af_put(&sec[S_STRS].buf, NULL, 1);

    if (skel && skel->bone_count) {
        const uint32_t n = skel->bone_count;
        kiln_blob_model model;
        memset(&model, 0, sizeof model);
        model.name = af_str(&sec[S_STRS].buf, "model");
        model.rotation[3] = 1.0f;
        model.scale[0] = model.scale[1] = model.scale[2] = 1.0f;
        af_add(&sec[S_MODL].buf, &model);
        kiln_blob_skeleton sk;
        memset(&sk, 0, sizeof sk);
        sk.bone_count = n;
        sk.soa_count = (n + 7) / 8;
        uint32_t depth = 0, *d = (uint32_t *)calloc(n, sizeof *d);
        int32_t *parents = (int32_t *)calloc(n, sizeof *parents);
        uint32_t *ssc = (uint32_t *)calloc(n, sizeof *ssc);
        double(*local)[10] = (double(*)[10])calloc(n, sizeof *local);
        double(*model_m)[16] = (double(*)[16])calloc(n, sizeof *model_m);
        if (!d || !parents || !ssc || !local || !model_m) abort();
        for (uint32_t b = 0; b < n; b++) {
            const af_bone *src = &skel->bones[b];
            kiln_blob_bone bone;
            memset(&bone, 0, sizeof bone);
            bone.name = af_str(&sec[S_STRS].buf, src->name);
            bone.name_hash = af_fnv1a(src->name);
            bone.parent = src->parent;
            bone.source_index = b;
            bone.flags = src->ssc ? KILN_BONE_SEGMENT_SCALE_COMPENSATE : 0u;
            af_add(&sec[S_BONE].buf, &bone);
            d[b] = src->parent >= 0 ? d[src->parent] + 1 : 1;
            depth = d[b] > depth ? d[b] : depth;
            parents[b] = src->parent;
            ssc[b] = src->ssc;
            for (int i = 0; i < 3; i++) local[b][i] = src->t[i], local[b][7 + i] = src->s[i];
            for (int i = 0; i < 4; i++) local[b][3 + i] = src->r[i];
        }
        sk.depth = depth;
        af_add(&sec[S_SKEL].buf, &sk);
        for (uint32_t k = 0; k < sk.soa_count; k++) {
            kiln_soa_xform x;
            af_identity_soa(&x);
            for (unsigned l = 0; l < 8 && k * 8 + l < n; l++) {
                const af_bone *src = &skel->bones[k * 8 + l];
                x.tx[l] = src->t[0], x.ty[l] = src->t[1], x.tz[l] = src->t[2];
                x.qx[l] = src->r[0], x.qy[l] = src->r[1], x.qz[l] = src->r[2], x.qw[l] = src->r[3];
                x.sx[l] = src->s[0], x.sy[l] = src->s[1], x.sz[l] = src->s[2];
            }
            af_add(&sec[S_REST].buf, &x);
        }
        af_model_ref(n, parents, ssc, (const double(*)[10])local, NULL, model_m);
        for (uint32_t b = 0; b < n; b++) {
            double inv[16];
            float f[16];
            if (!af_invert(model_m[b], inv)) af_identity(inv);
            for (int i = 0; i < 16; i++) f[i] = (float)inv[i];
            af_put(&sec[S_IBND].buf, f, sizeof f);
        }
        free(d), free(parents), free(ssc), free(local), free(model_m);
    }
    for (uint32_t i = 0; i < clip_count; i++)
        af_add_clip(&sec[S_STRS].buf, &sec[S_ANIM].buf, &sec[S_AJNT].buf, &sec[S_ASCL].buf, &sec[S_AOVR].buf,
                    &sec[S_AEVT].buf, &sec[S_DATA].buf, &clips[i]);

    /* layout: header, table, then every non-empty section (STRS always) at 64-byte alignment */
    int order[S_N], n = 0;
    for (int i = 0; i < S_N; i++)
        if (sec[i].buf.n || i == S_STRS) order[n++] = i;
    uint64_t offsets[S_N] = {0}, pos = 64 + (uint64_t)n * 32;
    for (int i = 0; i < n; i++) {
        pos = (pos + 63) & ~(uint64_t)63;
        offsets[order[i]] = pos;
        pos += sec[order[i]].buf.n;
    }
    uint64_t total = (pos + 63) & ~(uint64_t)63;
    unsigned char *blob = (unsigned char *)aligned_alloc(64, (size_t)total);
    if (!blob) abort();
    memset(blob, 0, (size_t)total);
    /* absolute DATA offsets */
    for (size_t i = 0; i < sec[S_ANIM].buf.n / sizeof(kiln_blob_animation); i++)
        ((kiln_blob_animation *)(void *)sec[S_ANIM].buf.p)[i].data_offset += offsets[S_DATA];
    for (size_t i = 0; i < sec[S_ASCL].buf.n / sizeof(kiln_blob_anim_scalar); i++)
        ((kiln_blob_anim_scalar *)(void *)sec[S_ASCL].buf.p)[i].data_offset += offsets[S_DATA];

    kiln_blob_header h;
    memset(&h, 0, sizeof h);
    h.magic = KILN_BLOB_MAGIC;
    h.version_major = KILN_BLOB_VERSION_MAJOR;
    h.version_minor = 1;
    h.header_size = 64;
    h.total_size = total;
    h.section_count = (uint32_t)n;
    h.section_table_offset = 64;
    memcpy(blob, &h, sizeof h);
    for (int i = 0; i < n; i++) {
        const af_sec *s = &sec[order[i]];
        kiln_blob_section e;
        memset(&e, 0, sizeof e);
        e.kind = s->kind;
        e.version = 1;
        e.offset = offsets[order[i]];
        e.size = s->buf.n;
        e.stride = s->stride;
        e.count = s->stride ? (uint32_t)(s->buf.n / s->stride) : 0;
        memcpy(blob + 64 + (size_t)i * 32, &e, sizeof e);
        if (s->buf.n) memcpy(blob + e.offset, s->buf.p, s->buf.n);
    }
    for (int i = 0; i < S_N; i++) free(sec[i].buf.p);
    af_fix_crc(blob, (size_t)total);
    *size = (size_t)total;
    return blob;
}

/* ---- runtime helpers ------------------------------------------------------------------------ */
/* Loads a built blob with full verification; NULL on failure (message to stderr). */
static inline const kiln_blob *af_load(const unsigned char *mem, size_t size)
{
    const kiln_blob *blob = NULL;
    kiln_diag err;
    if (kiln_blob_load(mem, size, 0, &blob, &err) != KILN_OK) {
        fprintf(stderr, "af_load: %s\n", err.message);
        return NULL;
    }
    return blob;
}

/* Binds into fresh 64-aligned memory (the binding sits at its start: free() the binding). */
static inline kiln_anim_binding *af_bind(const kiln_blob *anim, uint32_t clip, const kiln_blob *skel, uint32_t skeleton,
                                         kiln_anim_bind_report *report)
{
    size_t size = kiln_anim_binding_size(anim, clip, skel, skeleton);
    if (!size) return NULL;
    void *mem = aligned_alloc(64, (size + 63) & ~(size_t)63);
    kiln_anim_binding *b = NULL;
    if (!mem || kiln_anim_bind(anim, clip, skel, skeleton, mem, size, &b, report) != KILN_OK) {
        free(mem);
        return NULL;
    }
    return b;
}

/* A sampling context for `b` in fresh memory (free() it). */
static inline void *af_context(const kiln_anim_binding *b)
{
    size_t size = (kiln_sample_context_size(b) + 63) & ~(size_t)63;
    void *mem = aligned_alloc(64, size);
    if (!mem || kiln_sample_context_init(mem, size, b) != KILN_OK) {
        free(mem);
        return NULL;
    }
    return mem;
}

/* Every SIMD path, scalar first: the length of the arrays af_paths fills. */
#define AF_PATH_COUNT 4

/* The SIMD paths this machine runs (scalar always), for loops over paths. A path the CPU or
 * build lacks is left out: kiln_simd_force then answers with another one. */
static inline int af_paths(kiln_simd out[AF_PATH_COUNT])
{
    int n = 0;
    const kiln_simd all[AF_PATH_COUNT] = {KILN_SIMD_SCALAR, KILN_SIMD_SSE2, KILN_SIMD_AVX2, KILN_SIMD_AVX512};
    for (int i = 0; i < AF_PATH_COUNT; i++)
        if (kiln_simd_force(all[i]) == all[i]) out[n++] = all[i];
    kiln_simd_force(KILN_SIMD_AUTO);
    return n;
}

#endif /* KILN_TEST_ANIM_FIXTURE_H */
