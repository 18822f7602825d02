/* Unigine animations (spec 1.4, 2 item 7, 5.2, 5.4, 6, 7): frame records to Kiln curves.
 *
 * A record stores some channels of one bone; an unstored channel holds the previous frame's
 * value, the bind value before frame 0 (6). The held sequence is what the clip samples (7.2),
 * so each curve gets keys at the frames where the held value changes (and the frame before a
 * change): linear interpolation between integer keys then reproduces every frame and every
 * fractional frame. Frame N repeats frame 0, so the bake's wrap period (last - first key) is N
 * and the segment [N-1, N) interpolates back to frame 0 (7.2 Rec.).
 *
 * A curve whose channel no record of the clip stores is left out: the target model's rest
 * value then holds (7.1). A channel held at the bind value for its first frames gets the bind
 * value of this file for those keys. In an .anim those keys are flagged as rest keys and the
 * file's bind pose goes with the clip as the pose it was authored against: the bake, where the
 * clip meets the model, puts the model's bind locals there (7.1 Rec.) and reports bones the
 * model lacks and bind transforms that differ by more than 1e-4 (V26). An embedded clip's bind
 * pose is its own model's.
 *
 * Curves name bones as the file stores them, bound to the model by name, first match (7.1),
 * embedded clips included: a bone whose name repeats an earlier one's (V25) drives that
 * earlier bone. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "unigine_internal.h"

#define KILN__UG_SLOTS 7 /* tx ty tz r sx sy sz */

typedef struct kiln__ug_curve_state {
    uint32_t count;            /* keys emitted */
    int64_t  last;             /* frame of the last key */
    uint32_t stored;           /* some record stores this channel */
    uint32_t stored_from;      /* the first frame that stores it: earlier frames hold the bind value */
    float    first[4], prev[4];
    uint32_t *frames;          /* write pass */
    float    *values;
    uint8_t  *rest;            /* write pass, .anim: 1 for keys holding the bind value */
} kiln__ug_curve_state;

typedef struct kiln__ug_clip {
    uint32_t  index, k, n;
    uint8_t   mask;
    uint32_t *bones;           /* k bone indices into the file's list */
    float     box[12];         /* .anim: t_min, t_size, s_min, s_size */
    size_t    records;         /* offset of frame 0's first record */
    float    *held;            /* k x 10 */
    kiln__ug_curve_state *curves; /* k x 7 */
} kiln__ug_clip;

static const unsigned kiln__ug_slot_comps[KILN__UG_SLOTS] = {1, 1, 1, 4, 1, 1, 1};
static const unsigned kiln__ug_slot_first[KILN__UG_SLOTS] = {0, 1, 2, 3, 7, 8, 9};
static const uint8_t kiln__ug_slot_bit[KILN__UG_SLOTS] = {1, 1, 1, 2, 4, 4, 4};
static const kiln_source_channel kiln__ug_slot_channel[KILN__UG_SLOTS] = {
    KILN_SOURCE_CHANNEL_TX, KILN_SOURCE_CHANNEL_TY, KILN_SOURCE_CHANNEL_TZ, KILN_SOURCE_CHANNEL_ROTATION,
    KILN_SOURCE_CHANNEL_SX, KILN_SOURCE_CHANNEL_SY, KILN_SOURCE_CHANNEL_SZ};

/* A key at `frame` of a clip of n frames: it holds the bind value before the first stored
 * frame, and at n (the copy of frame 0) when frame 0 did. */
static void kiln__ug_key(kiln__ug_curve_state *c, unsigned comps, int64_t frame, int64_t n, const float *v)
{
    if (c->frames) {
        c->frames[c->count] = (uint32_t)frame;
        memcpy(&c->values[(size_t)c->count * comps], v, comps * sizeof(float));
        if (c->rest) c->rest[c->count] = frame < c->stored_from || (frame == n && c->stored_from > 0);
    }
    c->count++;
    c->last = frame;
}

/* The held value of one curve at frame i (N for the wrap copy of frame 0). */
static void kiln__ug_step(kiln__ug_curve_state *c, unsigned comps, int64_t i, int64_t n, const float *v)
{
    if (i == 0) {
        memcpy(c->first, v, comps * sizeof(float));
        memcpy(c->prev, v, comps * sizeof(float));
        kiln__ug_key(c, comps, 0, n, v);
        return;
    }
    int changed = memcmp(v, c->prev, comps * sizeof(float)) != 0;
    if (changed && c->last != i - 1) kiln__ug_key(c, comps, i - 1, n, c->prev);
    if (changed || i == n) kiln__ug_key(c, comps, i, n, v);
    memcpy(c->prev, v, comps * sizeof(float));
}

/* Unit quaternion from four shorts (5.2); returns 0 when all four are zero (identity). */
static int kiln__ug_quat(const kiln__ug *ctx, size_t at, float q[4])
{
    float v[4];
    double len2 = 0.0;
    int16_t s[4];
    for (int c = 0; c < 4; c++) {
        s[c] = kiln__ug_i16_at(ctx, at + (size_t)c * 2u);
        float x = (float)s[c] / 32767.0f;
        v[c] = x < -1.0f ? -1.0f : x > 1.0f ? 1.0f : x;
        len2 += (double)v[c] * v[c];
    }
    if (s[0] == 0 && s[1] == 0 && s[2] == 0 && s[3] == 0) {
        q[0] = q[1] = q[2] = 0.0f, q[3] = 1.0f;
        return 0;
    }
    double inv = 1.0 / sqrt(len2);
    for (int c = 0; c < 4; c++) q[c] = (float)(v[c] * inv);
    return 1;
}

/* One pass over the frame records: validates them (first pass, `check`), and feeds every
 * curve its held values. */
static kiln_result kiln__ug_walk(kiln__ug *ctx, const kiln__ug_file *f, kiln__ug_clip *cl, int check)
{
    uint32_t reserved = 0, zero_rot = 0;
    uint64_t reserved_at = 0, zero_at = 0;
    const unsigned tsize = ctx->is_anim ? 6u : 12u;
    for (uint32_t j = 0; j < cl->k; j++) {
        const kiln__ug_bone *b = &f->bones[cl->bones[j]];
        float *h = &cl->held[(size_t)j * 10u];
        memcpy(h, b->t, sizeof b->t);
        memcpy(h + 3, b->r, sizeof b->r);
        memcpy(h + 7, b->s, sizeof b->s);
    }
    ctx->pos = cl->records;
    /* Without bones there are no records, whatever the frame count (N x 0 bytes). */
    for (uint32_t i = 0; cl->k && i < cl->n; i++) {
        for (uint32_t j = 0; j < cl->k; j++) {
            float *h = &cl->held[(size_t)j * 10u];
            if (check) kiln__ug_at(ctx, "animation[%u]/frame[%u]/bone[%u]", cl->index, i, j);
            uint64_t at = ctx->pos;
            uint8_t flags;
            kiln_result r = kiln__ug_u8(ctx, "frame flags", &flags);
            if (r != KILN_OK) return r;
            if (check && (flags & 0xF8u) && reserved++ == 0) reserved_at = at;
            if (check && (flags & 7u & ~cl->mask))
                return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V12", at,
                                     "frame flags 0x%02X store a channel the mask 0x%02X lacks", flags, cl->mask);
            unsigned body = ((flags & 1u) ? tsize : 0u) + ((flags & 2u) ? 8u : 0u) + ((flags & 4u) ? tsize : 0u);
            if (check && (r = kiln__ug_need(ctx, body, "frame record")) != KILN_OK) return r;
            size_t o = ctx->pos;
            for (unsigned part = 0; part < 3; part++) {
                if (!(flags & (1u << part))) continue;
                if (part == 1) {
                    if (!kiln__ug_quat(ctx, o, h + 3) && zero_rot++ == 0) zero_at = o;
                    o += 8u;
                    continue;
                }
                float *dst = part == 0 ? h : h + 7;
                for (unsigned c = 0; c < 3; c++) {
                    if (ctx->is_anim) {
                        const float *mn = &cl->box[part == 0 ? 0 : 6], *sz = &cl->box[part == 0 ? 3 : 9];
                        float u = (float)kiln__ug_u16_at(ctx, o + c * 2u);
                        dst[c] = mn[c] + sz[c] * (u / 65535.0f);
                    } else {
                        dst[c] = kiln__ug_f32_at(ctx, o + c * 4u);
                        if (check && !isfinite(dst[c]))
                            return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V9", o + c * 4u,
                                                 "%s component %u is not finite", part == 0 ? "translation" : "scale", c);
                    }
                }
                o += tsize;
            }
            ctx->pos = o;
            for (unsigned s = 0; s < KILN__UG_SLOTS; s++) {
                if (!(cl->mask & kiln__ug_slot_bit[s])) continue;
                kiln__ug_curve_state *c = &cl->curves[(size_t)j * KILN__UG_SLOTS + s];
                if ((flags & kiln__ug_slot_bit[s]) && !c->stored) c->stored = 1, c->stored_from = i;
                kiln__ug_step(c, kiln__ug_slot_comps[s], i, cl->n, h + kiln__ug_slot_first[s]);
            }
        }
    }
    for (uint32_t j = 0; j < cl->k && cl->n; j++)
        for (unsigned s = 0; s < KILN__UG_SLOTS; s++) {
            if (!(cl->mask & kiln__ug_slot_bit[s])) continue;
            kiln__ug_curve_state *c = &cl->curves[(size_t)j * KILN__UG_SLOTS + s];
            kiln__ug_step(c, kiln__ug_slot_comps[s], cl->n, cl->n, c->first);
        }
    if (check) {
        kiln__ug_at(ctx, "animation[%u]", cl->index);
        if (reserved)
            kiln__ug_warn(ctx, "V18", reserved_at, "%u frame record(s) set reserved flag bits 3-7; ignored", reserved);
        if (zero_rot)
            kiln__ug_warn(ctx, "V19", zero_at, "%u rotation(s) stored as four zero shorts; identity used", zero_rot);
    }
    return KILN_OK;
}

static kiln_result kiln__ug_clip_header(kiln__ug *ctx, const kiln__ug_file *f, kiln__ug_clip *cl, uint8_t *seen)
{
    kiln__ug_at(ctx, "animation[%u]", cl->index);
    kiln_result r = kiln__ug_count(ctx, "animation bone count", 2, &cl->k);
    size_t at = 0;
    if (r == KILN_OK) r = kiln__ug_array(ctx, "bone indices", cl->k, 2, &at);
    if (r != KILN_OK) return r;
    cl->bones = kiln_source_alloc(ctx->scene, cl->k, sizeof *cl->bones);
    if (!cl->bones) return kiln__ug_oom(ctx);
    memset(seen, 0, f->bone_count ? f->bone_count : 1);
    for (uint32_t j = 0; j < cl->k; j++) {
        int16_t b = kiln__ug_i16_at(ctx, at + (size_t)j * 2u);
        if (b < 0 || (uint32_t)b >= f->bone_count)
            return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_REFERENCE, "V11", at + (size_t)j * 2u,
                                 "animation '%s' lists bone index %d (%u bones)", f->anim_names[cl->index], b,
                                 f->bone_count);
        if (seen[b]++)
            return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_REFERENCE, "V11", at + (size_t)j * 2u,
                                 "animation '%s' lists bone %d ('%s') twice", f->anim_names[cl->index], b,
                                 f->bones[b].name);
        cl->bones[j] = (uint32_t)b;
    }
    if (ctx->is_anim) {
        uint64_t bat = ctx->pos;
        r = kiln__ug_f32s(ctx, "translation and scale boxes", 12, cl->box);
        if (r != KILN_OK) return r;
        for (int c = 0; c < 12; c++)
            if (!isfinite(cl->box[c]))
                return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V9", bat + (uint64_t)c * 4u,
                                     "%s box %s component %d is not finite", c < 6 ? "translation" : "scale",
                                     c % 6 < 3 ? "min" : "size", c % 3);
        for (int c = 0; c < 12; c++)
            if (c % 6 >= 3 && cl->box[c] < 0.0f)
                return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V10", bat + (uint64_t)c * 4u,
                                     "%s box size %c is negative (%g)", c < 6 ? "translation" : "scale", "xyz"[c % 3],
                                     (double)cl->box[c]);
        char detail[320];
        snprintf(detail, sizeof detail, "translation box min (%g, %g, %g) size (%g, %g, %g); scale box min (%g, %g, %g) "
                 "size (%g, %g, %g)", (double)cl->box[0], (double)cl->box[1], (double)cl->box[2], (double)cl->box[3],
                 (double)cl->box[4], (double)cl->box[5], (double)cl->box[6], (double)cl->box[7], (double)cl->box[8],
                 (double)cl->box[9], (double)cl->box[10], (double)cl->box[11]);
        r = kiln__ug_extra(ctx, bat, "anim-boxes", f->anim_names[cl->index], detail);
        if (r != KILN_OK) return r;
    }
    uint64_t mat = ctx->pos;
    r = kiln__ug_u8(ctx, "mask", &cl->mask);
    if (r != KILN_OK) return r;
    if (cl->mask & 0xF8u)
        kiln__ug_warn(ctx, "V18", mat, "mask 0x%02X sets reserved bits 3-7; ignored", cl->mask);
    cl->mask &= 7u;
    uint64_t nat = ctx->pos;
    r = kiln__ug_count(ctx, "frame count", 0, &cl->n);
    if (r != KILN_OK) return r;
    uint64_t need = (uint64_t)cl->n * cl->k, left = ctx->size - ctx->pos;
    if (need > left)
        return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V5", nat,
                             "%u frames x %u bones need at least %llu bytes but only %llu are left", cl->n, cl->k,
                             (unsigned long long)need, (unsigned long long)left);
    cl->records = ctx->pos;
    return KILN_OK;
}

kiln_result kiln__ug_read_animation(kiln__ug *ctx, const kiln__ug_file *f, uint32_t index)
{
    kiln__ug_clip cl;
    memset(&cl, 0, sizeof cl);
    cl.index = index;
    uint64_t start = ctx->pos;
    uint8_t *seen = kiln__ug_tmp(ctx, f->bone_count, 1);
    if (!seen) return kiln__ug_oom(ctx);
    kiln_result r = kiln__ug_clip_header(ctx, f, &cl, seen);
    kiln__ug_tmp_free(ctx, seen);
    if (r != KILN_OK) return r;
    cl.held = kiln__ug_tmp(ctx, (uint64_t)cl.k * 10u, sizeof(float));
    cl.curves = kiln__ug_tmp(ctx, (uint64_t)cl.k * KILN__UG_SLOTS, sizeof *cl.curves);
    if (!cl.held || !cl.curves) r = kiln__ug_oom(ctx);
    if (r == KILN_OK) {
        memset(cl.curves, 0, (size_t)cl.k * KILN__UG_SLOTS * sizeof *cl.curves);
        r = kiln__ug_walk(ctx, f, &cl, 1);
    }
    size_t end = ctx->pos;

    kiln_source_animation *an = &ctx->scene->animations[index];
    uint32_t curve_count = 0;
    for (uint64_t c = 0; r == KILN_OK && c < (uint64_t)cl.k * KILN__UG_SLOTS; c++) curve_count += cl.curves[c].stored;
    if (r == KILN_OK) {
        memset(an, 0, sizeof *an);
        kiln__ug_at(ctx, "animation[%u]", index);
        an->loc.path = kiln__ug_path(ctx);
        an->loc.offset = start;
        an->loc.size = end - start;
        an->name = f->anim_names[index];
        an->framerate = ctx->fps;
        an->looping = 1;
        if (ctx->is_anim) {
            an->authored_rest = f->rest;
            an->authored_rest_count = f->bone_count;
            an->bind_rule = "V26";
        }
        an->curves = kiln_source_alloc(ctx->scene, curve_count, sizeof *an->curves);
        if (!an->loc.path || !an->curves) r = kiln__ug_oom(ctx);
    }
    /* Second pass: the same walk writes the keys into the kept curves. */
    for (uint32_t j = 0; r == KILN_OK && j < cl.k; j++)
        for (unsigned s = 0; r == KILN_OK && s < KILN__UG_SLOTS; s++) {
            kiln__ug_curve_state *c = &cl.curves[(size_t)j * KILN__UG_SLOTS + s];
            if (!c->stored) continue;
            kiln_source_curve *out = &an->curves[an->curve_count++];
            kiln__ug_at(ctx, "animation[%u]/bone[%u]", index, j);
            out->loc.path = kiln__ug_path(ctx);
            out->loc.offset = start;
            /* Clips bind by name, first match (7.1): a later bone that repeats a name drives
             * the first bone of that name, and its curves, coming later, win (as the
             * expected poses of duplicate names show). */
            out->target = f->bones[cl.bones[j]].file_name;
            out->channel = kiln__ug_slot_channel[s];
            out->mode = KILN_SOURCE_ABSOLUTE;
            out->additive_weight = 1.0f;
            out->key_count = c->count;
            out->frames = c->frames = kiln_source_alloc(ctx->scene, c->count, sizeof(uint32_t));
            out->values = c->values = kiln_source_alloc(ctx->scene, (uint64_t)c->count * kiln__ug_slot_comps[s], sizeof(float));
            if (ctx->is_anim && c->stored_from > 0)
                out->rest_keys = c->rest = kiln_source_alloc(ctx->scene, c->count, sizeof(uint8_t));
            if (!out->loc.path || !c->frames || !c->values || (ctx->is_anim && c->stored_from > 0 && !c->rest))
                r = kiln__ug_oom(ctx);
            c->count = 0;
            c->last = 0;
        }
    if (r == KILN_OK) {
        /* Curves not kept get no keys written: only count them. */
        r = kiln__ug_walk(ctx, f, &cl, 0);
        ctx->pos = end;
    }
    kiln__ug_tmp_free(ctx, cl.held);
    kiln__ug_tmp_free(ctx, cl.curves);
    return r;
}
