/* Verification of the 1.1 animation sections: records, clip sample data, scalar tracks and
 * events, so that after kiln_blob_load no sampler or accessor reads outside the blob or
 * meets a NaN.
 *
 * Runs after the loader's section-table checks and finds its sections itself (these kinds
 * are "unknown" to a 1.0 loader, which skips them by size). Rows are checked row by row with
 * the payload scanner; a clip whose raw tracks tile the start of the row is scanned in one
 * call over all its rows.
 */
#include <stddef.h>

#include "anim_internal.h"
#include "blob_internal.h"
#include "blob_verify_anim.h"
#include "blob_verify_sections.h"

_Static_assert(sizeof(kiln_blob_animation) == 120, "animation record");
_Static_assert(offsetof(kiln_blob_animation, first_frame) == 16, "animation.first_frame (8-aligned)");
_Static_assert(offsetof(kiln_blob_animation, data_offset) == 72, "animation.data_offset (8-aligned)");
_Static_assert(offsetof(kiln_blob_animation, row_stride) == 88, "animation.row_stride");
_Static_assert(sizeof(kiln_blob_anim_joint) == 32, "anim joint");
_Static_assert(offsetof(kiln_blob_anim_joint, additive_weight) == 16, "anim joint.additive_weight");
_Static_assert(sizeof(kiln_blob_anim_scalar) == 24, "anim scalar");
_Static_assert(offsetof(kiln_blob_anim_scalar, data_offset) == 16, "anim scalar.data_offset");
_Static_assert(sizeof(kiln_blob_anim_override) == 16, "anim override");
_Static_assert(sizeof(kiln_blob_anim_track) == 72, "anim track");
_Static_assert(offsetof(kiln_blob_anim_track, range_min) == 8, "anim track.range_min");
_Static_assert(sizeof(kiln_blob_anim_event) == 16, "anim event");
_Static_assert(offsetof(kiln_blob_anim_event, frame) == 8, "anim event.frame");

enum { KILN__A_ANIM, KILN__A_JOINTS, KILN__A_SCALARS, KILN__A_OVERRIDES, KILN__A_EVENTS, KILN__A_COUNT };

static const struct {
    uint32_t kind, stride;
} kiln__anim_kinds[KILN__A_COUNT] = {
    {KILN_SECTION_ANIMATIONS, sizeof(kiln_blob_animation)},
    {KILN_SECTION_ANIM_JOINTS, sizeof(kiln_blob_anim_joint)},
    {KILN_SECTION_ANIM_SCALARS, sizeof(kiln_blob_anim_scalar)},
    {KILN_SECTION_ANIM_OVERRIDES, sizeof(kiln_blob_anim_override)},
    {KILN_SECTION_ANIM_EVENTS, sizeof(kiln_blob_anim_event)},
};

typedef struct kiln__av {
    const unsigned char *base;
    uint64_t size;
    kiln_diag *err;
    const kiln_blob_section *sec[KILN__A_COUNT];
    uint32_t count[KILN__A_COUNT];
    uint64_t strings_size;
    uint64_t data_begin, data_end; /* the DATA section; empty when absent */
} kiln__av;

/* Byte offset of field `off` of record i of section a. */
static uint64_t kiln__at(const kiln__av *v, int a, uint64_t i, size_t off)
{
    return v->sec[a]->offset + i * v->sec[a]->stride + off;
}

static const void *kiln__rec(const kiln__av *v, int a, uint32_t i)
{
    return v->base + v->sec[a]->offset + (uint64_t)i * v->sec[a]->stride;
}

static int kiln__range_ok(uint32_t first, uint32_t count, uint32_t total) { return first <= total && count <= total - first; }

/* ---- sections ------------------------------------------------------------------------------ */
static kiln_result kiln__find_sections(kiln__av *v)
{
    kiln__verify_strings_data(v->base, &v->strings_size, &v->data_begin, &v->data_end);
    uint32_t n;
    const kiln_blob_section *t = kiln__verify_table(v->base, &n);
    for (uint32_t i = 0; i < n; i++) {
        const kiln_blob_section *s = &t[i];
        for (int a = 0; a < KILN__A_COUNT; a++) {
            if (s->kind != kiln__anim_kinds[a].kind) continue;
            KILN__VERIFY_TRY(kiln__verify_section(s, i, v->sec[a], kiln__anim_kinds[a].stride, v->size, v->err));
            v->sec[a] = s;
            v->count[a] = s->count;
        }
    }
    return KILN_OK;
}

/* ---- records ------------------------------------------------------------------------------ */
static kiln_result kiln__check_joints(kiln__av *v)
{
    for (uint32_t i = 0; i < v->count[KILN__A_JOINTS]; i++) {
        const kiln_blob_anim_joint *j = kiln__rec(v, KILN__A_JOINTS, i);
        if (!kiln__string_ok(v->strings_size, j->name))
            return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, kiln__at(v, KILN__A_JOINTS, i, 0),
                                     "AJNT[%u].name: string offset %u is outside the string table", i, j->name);
        if (j->modes >> (2 * KILN_ANIM_COMPONENTS))
            return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, kiln__at(v, KILN__A_JOINTS, i, offsetof(kiln_blob_anim_joint, modes)),
                                     "AJNT[%u].modes: bits above component 9 are set (0x%08X)", i, j->modes);
        uint32_t r = j->modes >> 6 & 3u;
        for (unsigned c = 4; c < 7; c++)
            if ((j->modes >> (2 * c) & 3u) != r)
                return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD,
                                         kiln__at(v, KILN__A_JOINTS, i, offsetof(kiln_blob_anim_joint, modes)),
                                         "AJNT[%u].modes: qx, qy, qz and qw must share one mode", i);
        if (kiln__nonfinite(j->additive_weight, 4) < 4 || j->reserved)
            return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD,
                                     kiln__at(v, KILN__A_JOINTS, i, offsetof(kiln_blob_anim_joint, additive_weight)),
                                     "AJNT[%u].additive_weight: not finite (or reserved not zero)", i);
    }
    return KILN_OK;
}

static kiln_result kiln__check_overrides(kiln__av *v)
{
    for (uint32_t i = 0; i < v->count[KILN__A_OVERRIDES]; i++) {
        const kiln_blob_anim_override *o = kiln__rec(v, KILN__A_OVERRIDES, i);
        if (!kiln__string_ok(v->strings_size, o->name) || o->mode < KILN_MODE_ABSOLUTE || o->mode > KILN_MODE_ADDITIVE || o->channels > 7u)
            return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, kiln__at(v, KILN__A_OVERRIDES, i, 0),
                                     "AOVR[%u]: bad name (%u), mode (%u) or channels (0x%X)", i, o->name, o->mode, o->channels);
    }
    return KILN_OK;
}

static kiln_result kiln__check_scalar(kiln__av *v, uint32_t s, const kiln_blob_animation *a)
{
    const kiln_blob_anim_scalar *r = kiln__rec(v, KILN__A_SCALARS, s);
    uint64_t at = kiln__at(v, KILN__A_SCALARS, s, 0);
    if (!kiln__string_ok(v->strings_size, r->name) || (r->kind != KILN_SCALAR_BLEND_SHAPE && r->kind != KILN_SCALAR_VISIBILITY) ||
        r->reserved)
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, at, "ASCL[%u]: bad name (%u), kind (%u) or reserved field", s,
                                 r->name, r->kind);
    uint64_t bytes = (uint64_t)a->frame_count * 4u;
    if (r->data_offset % 16u || !kiln__data_ok(v->data_begin, v->data_end, r->data_offset, bytes))
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, at + offsetof(kiln_blob_anim_scalar, data_offset),
                                 "ASCL[%u].data_offset: %llu + %llu bytes is misaligned or outside DATA", s,
                                 (unsigned long long)r->data_offset, (unsigned long long)bytes);
    const float *f = (const float *)(const void *)(v->base + r->data_offset);
    if (!kiln__scan_finite_f32(f, a->frame_count))
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_NOT_FINITE, r->data_offset + 4u * kiln__nonfinite(f, a->frame_count),
                                 "ASCL[%u].data: a value is NaN or infinite", s);
    return KILN_OK;
}

static kiln_result kiln__check_events(kiln__av *v, uint32_t clip, const kiln_blob_animation *a)
{
    int64_t prev = INT64_MIN;
    for (uint32_t k = 0; k < a->event_count; k++) {
        uint32_t e = a->first_event + k;
        const kiln_blob_anim_event *r = kiln__rec(v, KILN__A_EVENTS, e);
        if (!kiln__string_ok(v->strings_size, r->name) || r->reserved || r->frame < a->first_frame || r->frame > a->last_frame ||
            r->frame < prev)
            return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, kiln__at(v, KILN__A_EVENTS, e, 0),
                                     "AEVT[%u]: event %u of clip %u has a bad name or reserved field, or frame %lld is "
                                     "outside [%lld, %lld] or before the previous event",
                                     e, k, clip, (long long)r->frame, (long long)a->first_frame, (long long)a->last_frame);
        prev = r->frame;
    }
    return KILN_OK;
}

/* ---- clip data -------------------------------------------------------------------------------- */
static kiln_result kiln__check_clip_data(kiln__av *v, uint32_t i, const kiln_blob_animation *a)
{
    uint64_t rec = kiln__at(v, KILN__A_ANIM, i, 0);
    kiln__clip_layout l;
    if (a->data_offset % 16u || !kiln__clip_layout_of_anim(a, &l) || !kiln__data_ok(v->data_begin, v->data_end, a->data_offset, a->data_size) ||
        l.end - a->data_offset > a->data_size)
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, rec + offsetof(kiln_blob_animation, data_offset),
                                 "ANIM[%u].data_offset: [%llu, +%llu) is misaligned, outside DATA or shorter than its "
                                 "constants, tracks and rows",
                                 i, (unsigned long long)a->data_offset, (unsigned long long)a->data_size);
    const float *cst = (const float *)(const void *)(v->base + l.constants);
    size_t nc = (size_t)a->block_count * KILN_ANIM_COMPONENTS * KILN_SOA_WIDTH;
    if (!kiln__scan_finite_f32(cst, nc))
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_NOT_FINITE, l.constants + 4u * kiln__nonfinite(cst, nc),
                                 "ANIM[%u].constants: a value is NaN or infinite", i);

    int lossy = (a->flags & KILN_ANIM_LOSSY) != 0;
    const kiln_blob_anim_track *t = (const kiln_blob_anim_track *)(const void *)(v->base + l.tracks);
    uint32_t prev = 0, raw = 0;
    uint64_t raw_end = 0; /* raw tracks tiling [0, raw_end) of the row in table order */
    int tiled = 1;
    for (uint32_t k = 0; k < a->animated_count; k++) {
        uint64_t at = l.tracks + (uint64_t)k * sizeof *t;
        uint32_t key = (uint32_t)t[k].block * KILN_ANIM_COMPONENTS + t[k].component;
        if (t[k].block >= a->block_count || t[k].component >= KILN_ANIM_COMPONENTS || (k && key <= prev))
            return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, at,
                                     "ANIM[%u].tracks[%u]: (block %u, component %u) is out of range or not after the "
                                     "previous track",
                                     i, k, t[k].block, t[k].component);
        if (!kiln__clip_track_ok(lossy, t[k].component, t[k].width))
            return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, at + offsetof(kiln_blob_anim_track, width),
                                     "ANIM[%u].tracks[%u].width: %u bits on component %u is not allowed in a %s clip", i,
                                     k, t[k].width, t[k].component, lossy ? "lossy" : "lossless");
        if ((uint64_t)t[k].row_offset + kiln__clip_track_bytes(t[k].width) > a->row_stride ||
            (t[k].width == KILN__CLIP_RAW && t[k].row_offset % 4u))
            return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, at + offsetof(kiln_blob_anim_track, row_offset),
                                     "ANIM[%u].tracks[%u].row_offset: %u + %u bytes is misaligned or past the %u-byte row",
                                     i, k, t[k].row_offset, kiln__clip_track_bytes(t[k].width), a->row_stride);
        size_t bad = kiln__nonfinite(t[k].range_min, 2 * KILN_SOA_WIDTH);
        if (bad < 2 * KILN_SOA_WIDTH)
            return kiln__verify_fail(v->err, KILN_ERR_BLOB_NOT_FINITE, at + offsetof(kiln_blob_anim_track, range_min) + 4 * bad,
                                     "ANIM[%u].tracks[%u].range: a value is NaN or infinite", i, k);
        for (unsigned l2 = 0; l2 < KILN_SOA_WIDTH && t[k].width != KILN__CLIP_RAW; l2++)
            if (!kiln__finite(t[k].range_min[l2] + t[k].range_extent[l2]))
                return kiln__verify_fail(v->err, KILN_ERR_BLOB_NOT_FINITE, at + offsetof(kiln_blob_anim_track, range_extent),
                                         "ANIM[%u].tracks[%u].range: min + extent overflows in lane %u", i, k, l2);
        if (t[k].width == KILN__CLIP_RAW) {
            if (t[k].row_offset != raw_end) tiled = 0;
            raw_end += 32u;
            raw++;
        }
        prev = key;
    }
    /* raw row values must be finite (quantised ones are by construction) */
    const unsigned char *rows = v->base + l.rows;
    if (raw && tiled && raw_end == a->row_stride) {
        size_t n = (size_t)a->frame_count * (a->row_stride / 4u);
        if (!kiln__scan_finite_f32(rows, n))
            return kiln__verify_fail(v->err, KILN_ERR_BLOB_NOT_FINITE, l.rows + 4u * kiln__nonfinite((const float *)(const void *)rows, n),
                                     "ANIM[%u].rows: a raw value is NaN or infinite", i);
    } else if (raw) {
        for (uint32_t r = 0; r < a->frame_count; r++) {
            const unsigned char *row = rows + (size_t)r * a->row_stride;
            if (tiled) {
                if (!kiln__scan_finite_f32(row, (size_t)raw_end / 4u))
                    return kiln__verify_fail(v->err, KILN_ERR_BLOB_NOT_FINITE, l.rows + (uint64_t)r * a->row_stride,
                                             "ANIM[%u].rows[%u]: a raw value is NaN or infinite", i, r);
                continue;
            }
            for (uint32_t k = 0; k < a->animated_count; k++)
                if (t[k].width == KILN__CLIP_RAW && !kiln__scan_finite_f32(row + t[k].row_offset, KILN_SOA_WIDTH))
                    return kiln__verify_fail(v->err, KILN_ERR_BLOB_NOT_FINITE,
                                             l.rows + (uint64_t)r * a->row_stride + t[k].row_offset,
                                             "ANIM[%u].rows[%u]: track %u has a NaN or infinite value", i, r, k);
        }
    }
    return KILN_OK;
}

static kiln_result kiln__check_clip(kiln__av *v, uint32_t i)
{
    const kiln_blob_animation *a = kiln__rec(v, KILN__A_ANIM, i);
    uint64_t rec = kiln__at(v, KILN__A_ANIM, i, 0);
#define KILN__ANIM_FAIL(code, field, ...) \
    kiln__verify_fail(v->err, (code), rec + offsetof(kiln_blob_animation, field), __VA_ARGS__)
    if (!kiln__string_ok(v->strings_size, a->name))
        return KILN__ANIM_FAIL(KILN_ERR_BLOB_BAD_RECORD, name, "ANIM[%u].name: string offset %u is outside the string table",
                               i, a->name);
    if (!kiln__finite(a->framerate) || !(a->framerate > 0.0f))
        return KILN__ANIM_FAIL(KILN_ERR_BLOB_BAD_RECORD, framerate, "ANIM[%u].framerate: %g is not a positive number", i,
                               (double)a->framerate);
    if (a->flags & ~(KILN_ANIM_LOOPING | KILN_ANIM_LOSSY))
        return KILN__ANIM_FAIL(KILN_ERR_BLOB_BAD_RECORD, flags, "ANIM[%u].flags: unknown bits 0x%X", i,
                               a->flags & ~(KILN_ANIM_LOOPING | KILN_ANIM_LOSSY));
    if (a->last_frame < a->first_frame || (uint64_t)a->last_frame - (uint64_t)a->first_frame >= UINT32_MAX ||
        (uint64_t)a->frame_count != (uint64_t)a->last_frame - (uint64_t)a->first_frame + 1u)
        return KILN__ANIM_FAIL(KILN_ERR_BLOB_BAD_RECORD, frame_count,
                               "ANIM[%u].frame_count: %u frames do not span [%lld, %lld]", i, a->frame_count,
                               (long long)a->first_frame, (long long)a->last_frame);
    if (a->block_count != (a->joint_count + KILN_SOA_WIDTH - 1) / KILN_SOA_WIDTH ||
        a->animated_count > (uint64_t)a->block_count * KILN_ANIM_COMPONENTS)
        return KILN__ANIM_FAIL(KILN_ERR_BLOB_BAD_RECORD, block_count,
                               "ANIM[%u].block_count: %u blocks for %u joints and %u tracks", i, a->block_count,
                               a->joint_count, a->animated_count);
    if (a->row_stride % 16u)
        return KILN__ANIM_FAIL(KILN_ERR_BLOB_BAD_RECORD, row_stride, "ANIM[%u].row_stride: %u is not a multiple of 16", i,
                               a->row_stride);
    if (!kiln__range_ok(a->first_joint, a->joint_count, v->count[KILN__A_JOINTS]))
        return KILN__ANIM_FAIL(KILN_ERR_BLOB_BAD_RECORD, first_joint, "ANIM[%u].first_joint: [%u, +%u) is outside AJNT (%u)",
                               i, a->first_joint, a->joint_count, v->count[KILN__A_JOINTS]);
    if (!kiln__range_ok(a->first_scalar, a->scalar_count, v->count[KILN__A_SCALARS]))
        return KILN__ANIM_FAIL(KILN_ERR_BLOB_BAD_RECORD, first_scalar,
                               "ANIM[%u].first_scalar: [%u, +%u) is outside ASCL (%u)", i, a->first_scalar,
                               a->scalar_count, v->count[KILN__A_SCALARS]);
    if (!kiln__range_ok(a->first_override, a->override_count, v->count[KILN__A_OVERRIDES]))
        return KILN__ANIM_FAIL(KILN_ERR_BLOB_BAD_RECORD, first_override,
                               "ANIM[%u].first_override: [%u, +%u) is outside AOVR (%u)", i, a->first_override,
                               a->override_count, v->count[KILN__A_OVERRIDES]);
    if (!kiln__range_ok(a->first_event, a->event_count, v->count[KILN__A_EVENTS]))
        return KILN__ANIM_FAIL(KILN_ERR_BLOB_BAD_RECORD, first_event, "ANIM[%u].first_event: [%u, +%u) is outside AEVT (%u)",
                               i, a->first_event, a->event_count, v->count[KILN__A_EVENTS]);
    if (!kiln__finite(a->error_bound_m) || !kiln__finite(a->error_distance_m) || !kiln__zero(a->reserved, sizeof a->reserved))
        return KILN__ANIM_FAIL(KILN_ERR_BLOB_BAD_RECORD, error_bound_m,
                               "ANIM[%u].error_bound_m: error fields not finite or reserved fields not zero", i);
#undef KILN__ANIM_FAIL
    KILN__VERIFY_TRY(kiln__check_clip_data(v, i, a));
    for (uint32_t s = 0; s < a->scalar_count; s++) KILN__VERIFY_TRY(kiln__check_scalar(v, a->first_scalar + s, a));
    KILN__VERIFY_TRY(kiln__check_events(v, i, a));
    return KILN_OK;
}

kiln_result kiln__verify_animation(const void *base, uint64_t size, kiln_diag *err)
{
    kiln__av v = {.base = (const unsigned char *)base, .size = size, .err = err}; /* the rest zero */
    KILN__VERIFY_TRY(kiln__find_sections(&v));
    KILN__VERIFY_TRY(kiln__check_joints(&v));
    KILN__VERIFY_TRY(kiln__check_overrides(&v));
    for (uint32_t i = 0; i < v.count[KILN__A_ANIM]; i++) KILN__VERIFY_TRY(kiln__check_clip(&v, i));
    return KILN_OK;
}
