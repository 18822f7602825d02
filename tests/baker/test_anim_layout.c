/* The lossy clip layout: raw float tracks start on a 4-byte boundary whatever the quantised
 * tracks before them add up to (a 12-bit track of 8 lanes is 12 bytes, a 9-bit one 9), and
 * every track's row bytes decode back to its values. */
#include <criterion/criterion.h>
#include <string.h>

#include "bake_anim.h"
#include "bake_internal.h"
#include "ds.h"

#define FRAMES 3u

static float values[KILN_SOA_WIDTH][KILN_ANIM_COMPONENTS * FRAMES];

static void fill(kiln__anim *an, kiln__anim_joint *joints)
{
    memset(an, 0, sizeof *an);
    memset(joints, 0, KILN_SOA_WIDTH * sizeof *joints);
    for (unsigned j = 0; j < KILN_SOA_WIDTH; j++) {
        for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++)
            for (unsigned r = 0; r < FRAMES; r++) values[j][c * FRAMES + r] = 0.25f * (float)(j + 1) + 0.125f * (float)r;
        joints[j].values = values[j];
    }
    an->joints = joints;
    an->joint_count = KILN_SOA_WIDTH;
    an->frame_count = FRAMES;
}

Test(anim_layout, raw_tracks_follow_odd_quantised_tracks_aligned)
{
    kiln__anim an;
    kiln__anim_joint joints[KILN_SOA_WIDTH];
    fill(&an, joints);
    /* tx 9 bits (9 bytes), ty raw, tz 12 bits (12 bytes), qx raw: offsets 0, 12, 44, 56. */
    kiln__anim_plan plan[KILN_ANIM_COMPONENTS];
    memset(plan, 0, sizeof plan);
    const uint32_t widths[4] = {9, KILN__CLIP_RAW, 12, KILN__CLIP_RAW};
    for (unsigned c = 0; c < 4; c++) {
        plan[c].width = widths[c];
        for (unsigned l = 0; l < KILN_SOA_WIDTH; l++) {
            plan[c].range_min[l] = 0.0f;
            plan[c].range_extent[l] = 4.0f;
        }
    }
    for (unsigned c = 4; c < KILN_ANIM_COMPONENTS; c++)
        for (unsigned l = 0; l < KILN_SOA_WIDTH; l++) plan[c].constant[l] = kiln__anim_identity(c);
    cr_assert_eq(kiln__anim_layout(NULL, &an, plan, 1), KILN_OK);
    cr_assert_eq(an.animated_count, 4u);
    kiln__clip_layout lay;
    cr_assert(kiln__clip_layout_of(0, 1, 4, FRAMES, an.row_stride, 1, &lay));
    const kiln_blob_anim_track *t = (const kiln_blob_anim_track *)(const void *)(an.data + lay.tracks);
    const uint32_t expect[4] = {0, 12, 44, 56};
    for (unsigned k = 0; k < 4; k++) {
        cr_expect_eq(t[k].row_offset, expect[k], "track %u at %u", k, t[k].row_offset);
        cr_expect(t[k].width != KILN__CLIP_RAW || t[k].row_offset % 4u == 0);
    }
    cr_assert_geq(an.row_stride, 56u + 32u);
    /* The raw lanes of ty hold the values bit for bit. */
    for (unsigned r = 0; r < FRAMES; r++)
        for (unsigned l = 0; l < KILN_SOA_WIDTH; l++) {
            float x;
            memcpy(&x, an.data + lay.rows + (size_t)r * an.row_stride + 12u + 4u * l, 4);
            cr_expect_eq(x, values[l][1 * FRAMES + r]);
        }
    kiln__free(NULL, an.data);
}
