/* Unigine bones (spec 1.2, 1.3, 4): headers with parents, the bind pose, duplicate names. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "unigine_internal.h"

static uint32_t kiln__ug_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* V25: later bones that repeat an earlier name become "name#index". */
static kiln_result kiln__ug_dedupe_names(kiln__ug *ctx, kiln__ug_file *f)
{
    uint32_t cap = 16;
    while (cap < 2u * f->bone_count) cap *= 2;
    uint32_t *slots = kiln_source_alloc(ctx->scene, cap, sizeof *slots); /* bone index + 1, 0 = empty */
    if (!slots) return kiln__ug_oom(ctx);
    for (uint32_t i = 0; i < f->bone_count; i++) {
        kiln__ug_bone *b = &f->bones[i];
        uint32_t h = kiln__ug_hash(b->name) & (cap - 1);
        for (;; h = (h + 1) & (cap - 1)) {
            if (slots[h] == 0) {
                slots[h] = i + 1;
                break;
            }
            const kiln__ug_bone *first = &f->bones[slots[h] - 1];
            if (strcmp(first->name, b->name) == 0) {
                kiln__ug_at(ctx, "bone[%u]", i);
                kiln__ug_warn(ctx, "V25", b->offset, "bone name '%s' is also bone %u's; this one is named '%s#%u'",
                              b->name, slots[h] - 1, b->name, i);
                b->name = kiln_source_strfmt(ctx->scene, "%s#%u", b->name, i);
                if (!b->name) return kiln__ug_oom(ctx);
                break;
            }
        }
    }
    return KILN_OK;
}

/* V8 cycles, in linear time: each walk up stops at a bone already known to reach a root. */
static kiln_result kiln__ug_check_cycles(kiln__ug *ctx, const kiln__ug_file *f)
{
    uint8_t *state = kiln_source_alloc(ctx->scene, f->bone_count, 1); /* 0 new, 1 on this walk, 2 reaches a root */
    if (!state && f->bone_count) return kiln__ug_oom(ctx);
    for (uint32_t i = 0; i < f->bone_count; i++) {
        int32_t b = (int32_t)i;
        while (b >= 0 && state[b] == 0) {
            state[b] = 1;
            b = f->bones[b].parent;
        }
        if (b >= 0 && state[b] == 1) {
            kiln__ug_at(ctx, "bone[%d]", b);
            return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_REFERENCE, "V8", f->bones[b].offset,
                                 "bone '%s' is its own ancestor (parent cycle)", f->bones[b].name);
        }
        for (b = (int32_t)i; b >= 0 && state[b] == 1; b = f->bones[b].parent) state[b] = 2;
    }
    return KILN_OK;
}

kiln_result kiln__ug_read_bones(kiln__ug *ctx, kiln__ug_file *f)
{
    kiln__ug_at(ctx, "bones");
    uint64_t at = ctx->pos;
    kiln_result r = kiln__ug_need(ctx, 4, "bone count");
    if (r != KILN_OK) return r;
    int32_t n = kiln__ug_i32_at(ctx, ctx->pos);
    if (n < 0) return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V4", at, "bone count is negative (%d)", n);
    if (n > KILN__UG_MAX_BONES)
        return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V8", at, "bone count %d is above %d", n,
                             KILN__UG_MAX_BONES);
    r = kiln__ug_count(ctx, "bone count", 7, &f->bone_count);
    if (r != KILN_OK) return r;
    f->bones = kiln_source_alloc(ctx->scene, f->bone_count, sizeof *f->bones);
    if (!f->bones) return kiln__ug_oom(ctx);
    for (uint32_t i = 0; i < f->bone_count; i++) {
        kiln__ug_bone *b = &f->bones[i];
        kiln__ug_at(ctx, "bone[%u]", i);
        b->offset = ctx->pos;
        r = kiln__ug_string(ctx, "bone name", &b->name);
        if (r != KILN_OK) return r;
        b->file_name = b->name;
        uint64_t pat = ctx->pos;
        int16_t p;
        r = kiln__ug_i16(ctx, "bone parent", &p);
        if (r != KILN_OK) return r;
        if (p < -1 || p >= (int32_t)f->bone_count || p == (int32_t)i)
            return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_REFERENCE, "V8", pat,
                                 "bone '%s' has parent %d (%u bones; -1 is a root, a bone is not its own parent)",
                                 b->name, p, f->bone_count);
        b->parent = p;
        b->r[3] = 1.0f, b->s[0] = b->s[1] = b->s[2] = 1.0f;
    }
    r = kiln__ug_check_cycles(ctx, f);
    if (r == KILN_OK) r = kiln__ug_dedupe_names(ctx, f);
    return r;
}

kiln_result kiln__ug_read_anim_names(kiln__ug *ctx, kiln__ug_file *f)
{
    kiln__ug_at(ctx, "animations");
    kiln_result r = kiln__ug_count(ctx, "animation count", 5, &f->anim_count);
    if (r != KILN_OK) return r;
    f->anim_names = kiln_source_alloc(ctx->scene, f->anim_count, sizeof *f->anim_names);
    f->anim_name_offsets = kiln_source_alloc(ctx->scene, f->anim_count, sizeof *f->anim_name_offsets);
    if (!f->anim_names || !f->anim_name_offsets) return kiln__ug_oom(ctx);
    for (uint32_t i = 0; i < f->anim_count; i++) {
        kiln__ug_at(ctx, "animation[%u]", i);
        f->anim_name_offsets[i] = ctx->pos;
        r = kiln__ug_string(ctx, "animation name", &f->anim_names[i]);
        if (r != KILN_OK) return r;
    }
    return KILN_OK;
}

kiln_result kiln__ug_read_bind(kiln__ug *ctx, kiln__ug_file *f)
{
    kiln__ug_at(ctx, "bind_pose");
    size_t at;
    kiln_result r = kiln__ug_array(ctx, "bind transforms", f->bone_count, 40, &at);
    if (r != KILN_OK) return r;
    for (uint32_t i = 0; i < f->bone_count; i++) {
        kiln__ug_bone *b = &f->bones[i];
        size_t o = at + (size_t)i * 40u;
        float v[10];
        for (int c = 0; c < 10; c++) v[c] = kiln__ug_f32_at(ctx, o + (size_t)c * 4u);
        kiln__ug_at(ctx, "bind_pose[%u]", i);
        for (int c = 0; c < 10; c++)
            if (!isfinite(v[c]))
                return kiln__ug_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V9", o + (size_t)c * 4u,
                                     "bone '%s': bind transform component %d is not finite", b->name, c);
        b->bind_offset = o;
        memcpy(b->t, v, sizeof b->t);
        memcpy(b->s, v + 7, sizeof b->s);
        double len2 = (double)v[3] * v[3] + (double)v[4] * v[4] + (double)v[5] * v[5] + (double)v[6] * v[6];
        if (!(len2 > 0.0)) {
            kiln__ug_warn(ctx, "V19", o + 12u, "bone '%s': zero-length bind quaternion; identity used", b->name);
            b->r[0] = b->r[1] = b->r[2] = 0.0f, b->r[3] = 1.0f;
        } else {
            double inv = 1.0 / sqrt(len2);
            for (int c = 0; c < 4; c++) b->r[c] = (float)(v[3 + c] * inv);
        }
    }
    return KILN_OK;
}

kiln_result kiln__ug_build_skeleton(kiln__ug *ctx, const kiln__ug_file *f, kiln_source_model *model)
{
    if (f->bone_count == 0) return KILN_OK;
    kiln_source_skeleton *sk = kiln_source_alloc(ctx->scene, 1, sizeof *sk);
    kiln_source_bone *bones = kiln_source_alloc(ctx->scene, f->bone_count, sizeof *bones);
    if (!sk || !bones) return kiln__ug_oom(ctx);
    kiln__ug_at(ctx, "bones");
    sk->loc.path = kiln__ug_path(ctx);
    sk->loc.offset = f->bones[0].offset;
    if (!sk->loc.path) return kiln__ug_oom(ctx);
    for (uint32_t i = 0; i < f->bone_count; i++) {
        const kiln__ug_bone *b = &f->bones[i];
        kiln_source_bone *o = &bones[i];
        kiln__ug_at(ctx, "bone[%u]", i);
        o->loc.path = kiln__ug_path(ctx);
        if (!o->loc.path) return kiln__ug_oom(ctx);
        o->loc.offset = b->offset;
        o->name = b->name;
        o->parent = b->parent;
        o->segment_scale_compensate = 0; /* plain matrix hierarchy (spec 0, 4) */
        o->has_local_position = o->has_local_rotation = o->has_scale = 1;
        memcpy(o->local_position, b->t, sizeof b->t);
        memcpy(o->local_rotation, b->r, sizeof b->r);
        memcpy(o->scale, b->s, sizeof b->s);
        o->world_rotation[3] = 1.0f;
    }
    sk->bones = bones;
    sk->bone_count = f->bone_count;
    model->skeleton = sk;
    return KILN_OK;
}
