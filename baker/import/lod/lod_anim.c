/* ANM1: one skeletal clip (B.7, D). Every frame stores every bone (slot = BoneID): a local
 * translation and Euler angles in radians, R = Rz * Ry * Rx (C.1). The first usable clip's
 * frame 0 is the rest pose. */
#include <math.h>
#include <string.h>

#include "lod_internal.h"

static const char *const kiln__lod_play_modes[7] = {
    "none", "play_once", "loop", "bounce_forward", "bounce_backward", "loop_backward", "external",
};

/* q = qz * qy * qx (Hamilton product, x y z w), in double. */
static void kiln__lod_euler_quat(double rx, double ry, double rz, float q[4])
{
    double sx = sin(rx * 0.5), cx = cos(rx * 0.5);
    double sy = sin(ry * 0.5), cy = cos(ry * 0.5);
    double sz = sin(rz * 0.5), cz = cos(rz * 0.5);
    /* a = qz * qy */
    double ax = -sz * sy, ay = cz * sy, az = cy * sz, aw = cz * cy;
    /* a * qx */
    q[0] = (float)(aw * sx + ax * cx);
    q[1] = (float)(ay * cx + az * sx);
    q[2] = (float)(az * cx - ay * sx);
    q[3] = (float)(aw * cx - ax * sx);
}

kiln_result kiln__lod_read_anm1(kiln__lod *c, const kiln__lod_chunk *ch)
{
    kiln__lod_rd rd;
    kiln__lod_rd_init(&rd, c, ch->data, ch->end, ch->path);
    uint8_t type, mode;
    int32_t interval;
    const char *name;
    kiln_result r = kiln__lod_u8(c, &rd, "AnimType", &type);
    if (r == KILN_OK) r = kiln__lod_i32(c, &rd, "AnimInterval", &interval);
    if (r == KILN_OK) r = kiln__lod_u8(c, &rd, "AnimMode", &mode);
    if (r == KILN_OK) r = kiln__lod_lstr(c, &rd, "AnimName", &name);
    if (r != KILN_OK) return r;
    if (type != 1) {
        kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W9", ch->path, ch->data, "clip '%s' has AnimType %u, not 1: skipped",
                       name, type);
        return KILN_OK;
    }
    uint64_t bones = c->bones_cnt, frames = (uint32_t)ch->count;
    uint64_t data = rd.pos, want = 24 * bones * frames;
    if (kiln__lod_left(&rd) != want)
        return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_COUNT, "R16", ch->path, data,
                              "clip '%s': %llu bytes of poses, expected 24 x %llu bones x %llu frames = %llu", name,
                              (unsigned long long)kiln__lod_left(&rd), (unsigned long long)bones,
                              (unsigned long long)frames, (unsigned long long)want);
    if (interval <= 0) {
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W9", ch->path, ch->data + 1,
                       "clip '%s' has AnimInterval %d ms: 100 ms used", name, interval);
        interval = 100;
    }
    if (mode > 6) {
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W9", ch->path, ch->data + 5,
                       "clip '%s' has AnimMode %u (not 0-6): 0 (none) used", name, mode);
        mode = 0;
    }
    if (frames == 0) {
        kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W9", ch->path, ch->off + 8, "clip '%s' has no frames: dropped", name);
        return KILN_OK;
    }
    r = kiln__lod_finite(c, ch->path, data, want / 4, "BonesRotPos");
    if (r != KILN_OK) return r;

    const kiln_source_skeleton *skel = c->skeleton;
    if (!c->rest_set) {
        /* Bind pose = frame 0 of the first imported clip (C.1). */
        for (uint32_t id = 0; id < bones; id++) {
            kiln_source_bone *b = &skel->bones[c->id_to_index[id]];
            uint64_t o = data + 24 * (uint64_t)id;
            for (int j = 0; j < 3; j++) b->local_position[j] = kiln__lod_ld_f32(c, o + 4 * j);
            kiln__lod_euler_quat(kiln__lod_ld_f32(c, o + 12), kiln__lod_ld_f32(c, o + 16), kiln__lod_ld_f32(c, o + 20),
                                 b->local_rotation);
        }
        c->rest_set = 1;
    }

    int looping = mode == 2 || mode == 5;
    uint64_t keys = frames + (looping ? 1 : 0); /* looping: frame 0 again closes the period (D.3) */
    kiln_source_animation *anim;
    KILN__LOD_PUSH(c, c->anims, c->anim_count, c->anim_cap, anim);
    if (!anim) return kiln__lod_oom(c, ch->path, ch->off);
    anim->loc.path = ch->path;
    anim->loc.offset = ch->off;
    anim->loc.size = (uint64_t)ch->size + 12;
    anim->name = name;
    anim->framerate = (float)(1000.0 / interval);
    anim->looping = (uint32_t)looping;
    uint32_t animated = 0;
    for (uint32_t i = 0; i < bones; i++) animated += !c->bone_name_dup[i];
    anim->curves = kiln_source_alloc(c->scene, (uint64_t)animated * 4, sizeof *anim->curves);
    uint32_t *frame_numbers = kiln_source_alloc(c->scene, keys, sizeof *frame_numbers);
    if ((animated && !anim->curves) || !frame_numbers) return kiln__lod_oom(c, ch->path, data);
    for (uint32_t f = 0; f < keys; f++) frame_numbers[f] = f;

    uint32_t n = 0;
    for (uint32_t i = 0; i < bones; i++) {
        if (c->bone_name_dup[i]) continue; /* W12: the first bone of a name takes the curves */
        uint32_t id = c->index_to_id[i];
        float *rot = kiln_source_alloc(c->scene, keys, 4 * sizeof(float));
        float *tr = kiln_source_alloc(c->scene, keys, 3 * sizeof(float));
        if (!rot || !tr) return kiln__lod_oom(c, ch->path, data);
        for (uint64_t f = 0; f < keys; f++) {
            uint64_t o = data + 24 * ((f % frames) * bones + id);
            float *q = rot + 4 * f;
            kiln__lod_euler_quat(kiln__lod_ld_f32(c, o + 12), kiln__lod_ld_f32(c, o + 16), kiln__lod_ld_f32(c, o + 20), q);
            if (f) {
                const float *p = q - 4;
                if (p[0] * q[0] + p[1] * q[1] + p[2] * q[2] + p[3] * q[3] < 0.0f)
                    for (int j = 0; j < 4; j++) q[j] = -q[j];
            }
            for (int j = 0; j < 3; j++) tr[j * keys + f] = kiln__lod_ld_f32(c, o + 4 * j);
        }
        const char *target = skel->bones[i].name;
        for (int k = 0; k < 4; k++) {
            kiln_source_curve *cv = &anim->curves[n++];
            cv->loc.path = skel->bones[i].loc.path;
            cv->loc.offset = data + 24 * (uint64_t)id;
            cv->target = target;
            cv->channel = k == 0 ? KILN_SOURCE_CHANNEL_ROTATION : (kiln_source_channel)(KILN_SOURCE_CHANNEL_TX + k - 1);
            cv->mode = KILN_SOURCE_ABSOLUTE;
            cv->additive_weight = 1.0f;
            cv->key_count = (uint32_t)keys;
            cv->frames = frame_numbers;
            cv->values = k == 0 ? rot : tr + (uint64_t)(k - 1) * keys;
        }
    }
    anim->curve_count = n;
    const char *detail = kiln_source_strfmt(c->scene, "play mode %s, %llu frames, %d ms per frame%s",
                                            kiln__lod_play_modes[mode], (unsigned long long)frames, interval,
                                            looping ? ", looping" : "");
    if (!detail) return kiln__lod_oom(c, ch->path, ch->off);
    return kiln__lod_extra(c, "clip", name, ch->path, ch->off, (uint64_t)ch->size + 12, detail);
}
