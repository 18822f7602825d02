/* contract/: the clip codec and the double-precision rotation helpers the baker and the runtime
 * share, checked against hand-computed bytes, offsets and rotations. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "clip_codec.h"
#include "math_f64.h"

/* ---- clip codec ---------------------------------------------------------------------------- */

Test(clip_codec, twelve_bit_lanes_pack_little_endian)
{
    /* lane i in bits [12i, 12i + 12): two lanes per three bytes, low nibble first */
    const uint32_t q[8] = {0x123, 0x456, 0x789, 0xABC, 0xDEF, 0x001, 0xFFF, 0x800};
    const unsigned char want[12] = {0x23, 0x61, 0x45, 0x89, 0xC7, 0xAB, 0xEF, 0x1D, 0x00, 0xFF, 0x0F, 0x80};
    unsigned char row[16];
    memset(row, 0xEE, sizeof row);
    kiln__clip_pack_lanes(q, 12, row);
    cr_assert_arr_eq(row, want, sizeof want);
    for (unsigned i = 12; i < sizeof row; i++) cr_assert_eq(row[i], 0xEE, "byte %u past the track was written", i);
    for (unsigned l = 0; l < 8; l++) cr_assert_eq(kiln__clip_lane_bits(row, 12, l), q[l], "lane %u", l);
    cr_assert_eq(kiln__clip_track_bytes(12), 12u);
}

Test(clip_codec, every_width_round_trips_and_stays_in_its_bytes)
{
    uint32_t seed = 12345u;
    for (uint32_t w = 1; w <= KILN__CLIP_MAX_QBITS; w++) {
        uint32_t q[8];
        for (unsigned l = 0; l < 8; l++) {
            seed = seed * 1664525u + 1013904223u;
            q[l] = l == 0 ? (1u << w) - 1u : (seed >> 8) & ((1u << w) - 1u); /* lane 0 all ones */
        }
        unsigned char row[40];
        memset(row, 0xA5, sizeof row);
        kiln__clip_pack_lanes(q, w, row + 4);
        for (unsigned i = 0; i < 4; i++) cr_assert_eq(row[i], 0xA5, "w %u: byte before the track", w);
        for (unsigned i = 4 + kiln__clip_track_bytes(w); i < sizeof row; i++)
            cr_assert_eq(row[i], 0xA5, "w %u: byte %u after the track", w, i);
        for (unsigned l = 0; l < 8; l++) cr_assert_eq(kiln__clip_lane_bits(row + 4, w, l), q[l], "w %u lane %u", w, l);
    }
}

Test(clip_codec, widths_and_tracks_the_format_allows)
{
    cr_assert(!kiln__clip_width_ok(0));
    cr_assert(kiln__clip_width_ok(1));
    cr_assert(kiln__clip_width_ok(24));
    cr_assert(!kiln__clip_width_ok(25));
    cr_assert(!kiln__clip_width_ok(31));
    cr_assert(kiln__clip_width_ok(32));
    cr_assert(kiln__clip_track_ok(0, 0, 32));
    cr_assert(kiln__clip_track_ok(0, 6, 32));
    cr_assert(!kiln__clip_track_ok(0, 0, 16), "lossless clips store raw floats only");
    cr_assert(kiln__clip_track_ok(1, 3, 16));
    cr_assert(kiln__clip_track_ok(1, 3, 32));
    cr_assert(!kiln__clip_track_ok(1, 6, 16), "lossy clips never store qw");
    cr_assert(!kiln__clip_track_ok(1, 6, 32));
    cr_assert(kiln__clip_rebuilds_qw(1, 1));
    cr_assert(!kiln__clip_rebuilds_qw(1, 0));
    cr_assert(!kiln__clip_rebuilds_qw(0, 1));
}

Test(clip_codec, layout_offsets_and_slack)
{
    /* 2 blocks (2 x 320 bytes), 3 tracks (3 x 72 = 216): the table ends at 856, rows start at
     * 864; 5 rows of 48 bytes end at 1104, plus 16 bytes of slack when lossy. */
    kiln__clip_layout l;
    cr_assert(kiln__clip_layout_of(4096, 2, 3, 5, 48, 1, &l));
    cr_assert_eq(l.constants, 4096u);
    cr_assert_eq(l.tracks, 4096u + 640u);
    cr_assert_eq(l.rows, 4096u + 864u);
    cr_assert_eq(l.end, 4096u + 1120u);
    cr_assert(kiln__clip_layout_of(0, 2, 3, 5, 48, 0, &l));
    cr_assert_eq(l.end, 1104u);
    cr_assert_eq(kiln__clip_slack(1), 16u);
    cr_assert_eq(kiln__clip_slack(0), 0u);
    cr_assert_eq(kiln__clip_row_stride(0), 0u);
    cr_assert_eq(kiln__clip_row_stride(1), 16u);
    cr_assert_eq(kiln__clip_row_stride(16), 16u);
    cr_assert_eq(kiln__clip_row_stride(33), 48u);
    cr_assert(!kiln__clip_layout_of(UINT64_MAX - 100, 1, 0, 1, 16, 0, &l), "offsets past 2^63 are refused");
}

Test(clip_codec, dequantisation_spans_the_range)
{
    cr_assert_eq(kiln__clip_quant_inv(1), 1.0f);
    cr_assert_eq(kiln__clip_quant_inv(2), 1.0f / 3.0f);
    cr_assert_eq(kiln__clip_quant_inv(8), 1.0f / 255.0f);
    cr_assert_eq(kiln__clip_quant_inv(0), 0.0f);
    cr_assert_eq(kiln__clip_quant_inv(32), 0.0f);
    for (uint32_t w = 1; w <= KILN__CLIP_MAX_QBITS; w++) {
        float min = -1.5f, extent = 3.0f, step = kiln__clip_step(extent, w);
        uint32_t top = (1u << w) - 1u;
        cr_assert_eq(kiln__clip_dequant(0, min, step), min, "w %u: q = 0 is range_min", w);
        cr_assert_float_eq(kiln__clip_dequant(top, min, step), min + extent, 1e-6, "w %u: the top is the range's end", w);
        double mid = (double)min + (double)extent * (double)(top / 2) / (double)top;
        cr_assert_float_eq(kiln__clip_dequant(top / 2, min, step), mid, 1e-6, "w %u", w);
    }
}

Test(clip_codec, qw_is_rebuilt_non_negative)
{
    cr_assert_float_eq(kiln__clip_rebuild_qw(0.6f, 0.0f, 0.0f), 0.8f, 1e-7);
    cr_assert_float_eq(kiln__clip_rebuild_qw(0.5f, 0.5f, 0.5f), 0.5f, 1e-7);
    cr_assert_eq(kiln__clip_rebuild_qw(0.0f, 0.0f, 0.0f), 1.0f);
    cr_assert_eq(kiln__clip_rebuild_qw(1.0f, 1.0f, 0.0f), 0.0f, "outside the unit ball: 0, not NaN");
}

/* ---- double-precision rotations ------------------------------------------------------------ */

static void assert_quat(const double q[4], double x, double y, double z, double w, const char *what)
{
    double s = q[0] * x + q[1] * y + q[2] * z + q[3] * w < 0 ? -1.0 : 1.0; /* q and -q are one rotation */
    cr_assert(fabs(s * q[0] - x) < 1e-12 && fabs(s * q[1] - y) < 1e-12 && fabs(s * q[2] - z) < 1e-12 &&
                  fabs(s * q[3] - w) < 1e-12,
              "%s: (%g %g %g %g), expected (%g %g %g %g)", what, q[0], q[1], q[2], q[3], x, y, z, w);
}

Test(math_f64, shepperd_takes_every_branch)
{
    const double h = sqrt(0.5);
    double q[4];
    /* 90 degrees about z: trace 1 */
    kiln__qfrom_basis((const double[3]){0, 1, 0}, (const double[3]){-1, 0, 0}, (const double[3]){0, 0, 1}, q);
    assert_quat(q, 0, 0, h, h, "90 about z");
    /* 180 degrees about x, y, z: trace -1, the largest diagonal term picks the branch */
    kiln__qfrom_basis((const double[3]){1, 0, 0}, (const double[3]){0, -1, 0}, (const double[3]){0, 0, -1}, q);
    assert_quat(q, 1, 0, 0, 0, "180 about x");
    kiln__qfrom_basis((const double[3]){-1, 0, 0}, (const double[3]){0, 1, 0}, (const double[3]){0, 0, -1}, q);
    assert_quat(q, 0, 1, 0, 0, "180 about y");
    kiln__qfrom_basis((const double[3]){-1, 0, 0}, (const double[3]){0, -1, 0}, (const double[3]){0, 0, 1}, q);
    assert_quat(q, 0, 0, 1, 0, "180 about z");
}

Test(math_f64, matrix_round_trip)
{
    double q[4] = {0.1, -0.7, 0.3, 0.5}, m[9], back[4];
    kiln__qnorm(q);
    kiln__qto_mat3(q, m);
    /* orthonormal columns, determinant +1 */
    double z[3];
    kiln__cross3(m, m + 3, z);
    for (int k = 0; k < 3; k++) cr_assert_float_eq(z[k], m[6 + k], 1e-12);
    cr_assert_float_eq(kiln__dot3(m, m + 3), 0.0, 1e-12);
    cr_assert_float_eq(kiln__len3(m), 1.0, 1e-12);
    kiln__qfrom_basis(m, m + 3, m + 6, back);
    assert_quat(back, q[0], q[1], q[2], q[3], "basis");
    /* scaled and sheared columns give the rotation of their Gram-Schmidt basis */
    double c0[3] = {3 * m[0], 3 * m[1], 3 * m[2]};
    double c1[3] = {0.5 * m[3] + 2 * m[0], 0.5 * m[4] + 2 * m[1], 0.5 * m[5] + 2 * m[2]};
    kiln__qfrom_columns(c0, c1, back);
    assert_quat(back, q[0], q[1], q[2], q[3], "columns");
    /* a zero first column falls back to the x axis, a collapsed second one to a perpendicular */
    kiln__qfrom_columns((const double[3]){0, 0, 0}, (const double[3]){0, 2, 0}, back);
    assert_quat(back, 0, 0, 0, 1, "zero x column");
    kiln__qfrom_columns((const double[3]){1, 0, 0}, (const double[3]){4, 0, 0}, back);
    cr_assert_float_eq(back[0] * back[0] + back[1] * back[1] + back[2] * back[2] + back[3] * back[3], 1.0, 1e-12);
}

Test(math_f64, slerp_and_power)
{
    const double pi = 3.14159265358979323846, h = sqrt(0.5), s8 = sin(pi / 8), c8 = cos(pi / 8);
    double id[4] = {0, 0, 0, 1}, z90[4] = {0, 0, h, h}, r[4];
    kiln__qslerp_eps(id, z90, 0.5, 1e-9, r);
    assert_quat(r, 0, 0, s8, c8, "slerp halfway");
    double neg[4] = {0, 0, -h, -h}; /* the same rotation: the shorter arc is taken */
    kiln__qslerp_eps(id, neg, 0.5, 1e-12, r);
    assert_quat(r, 0, 0, s8, c8, "slerp to -q");
    kiln__qpow(z90, 0.5, r);
    assert_quat(r, 0, 0, s8, c8, "k^0.5");
    kiln__qpow(z90, 2.0, r);
    assert_quat(r, 0, 0, 1, 0, "k^2");
    kiln__qpow(neg, -1.0, r);
    assert_quat(r, 0, 0, -h, h, "(-k)^-1");
    kiln__qpow(id, 3.0, r);
    assert_quat(r, 0, 0, 0, 1, "I^3");
    double a[4], b[4];
    kiln__qconj(z90, a);
    kiln__qmul(a, z90, b);
    assert_quat(b, 0, 0, 0, 1, "conj(q) q");
}

Test(math_f64, affine_solve)
{
    /* scale 2, then 90 degrees about z, then translate (1, 2, 3) */
    const double m[12] = {0, 2, 0, -2, 0, 0, 0, 0, 2, 1, 2, 3};
    double x[3], p[3] = {1 - 4, 2 + 6, 3 + 10}; /* the image of (3, 2, 5) */
    cr_assert(kiln__affine_solve(m, p, x));
    cr_assert_float_eq(x[0], 3.0, 1e-12);
    cr_assert_float_eq(x[1], 2.0, 1e-12);
    cr_assert_float_eq(x[2], 5.0, 1e-12);
    const double flat[12] = {1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
    cr_assert(!kiln__affine_solve(flat, p, x), "a zero scale is singular");
}
