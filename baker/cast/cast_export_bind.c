/* A clip's rest keys meet the skeleton it binds to: see cast_export_bind.h. The choice of
 * skeleton and the rest locals follow the bake (bake_clips.c, bake_skeleton.c), so a converted
 * file samples as the bake of its inputs does. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cglm/cglm.h>

#include "cast_export_bind.h"

int kiln__export_is_transform(const kiln_source_curve *c)
{
    return c->target && (unsigned)c->channel <= KILN_SOURCE_CHANNEL_SZ;
}

int32_t kiln__export_bone_named(const kiln_source_skeleton *sk, const char *name)
{
    if (!sk || !sk->bones || !name) return -1;
    char unnamed[24];
    for (uint32_t i = 0; i < sk->bone_count; i++) {
        const char *bn = sk->bones[i].name;
        if (!bn) {
            snprintf(unnamed, sizeof unnamed, "bone%u", i);
            bn = unnamed;
        }
        if (strcmp(bn, name) == 0) return (int32_t)i;
    }
    return -1;
}

/* Bones of `sk` named by the clip's transform curves, each name counted once. */
static uint32_t kiln__shared_names(const kiln_source_animation *a, const kiln_source_skeleton *sk)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < a->curve_count; i++) {
        const kiln_source_curve *c = &a->curves[i];
        if (!kiln__export_is_transform(c)) continue;
        uint32_t seen = 0;
        for (uint32_t k = 0; k < i && !seen; k++)
            seen = kiln__export_is_transform(&a->curves[k]) && strcmp(a->curves[k].target, c->target) == 0;
        if (!seen && kiln__export_bone_named(sk, c->target) >= 0) n++;
    }
    return n;
}

const kiln_source_skeleton *kiln__export_clip_skeleton(const kiln_source_scene *const *scenes, uint32_t scene_count,
                                                       uint32_t own, const kiln_source_animation *a)
{
    const kiln_source_skeleton *best = NULL;
    uint32_t best_n = 0;
    if (!a->curves) return NULL;
    for (uint32_t k = 0; k <= scene_count; k++) {
        uint32_t i = k == 0 ? own : k - 1;
        if ((k > 0 && i == own) || i >= scene_count) continue;
        const kiln_source_scene *s = scenes[i];
        for (uint32_t m = 0; s->models && m < s->model_count; m++) {
            const kiln_source_skeleton *sk = s->models[m].skeleton;
            if (!sk || !sk->bones) continue;
            uint32_t n = kiln__shared_names(a, sk);
            if (n > best_n) best = sk, best_n = n;
        }
    }
    return best;
}

/* One bone's rest local from its parent's scale-free chain (bake_skeleton.c, kiln__rest_local). */
static void kiln__local(const kiln_source_bone *b, const vec3 parent_t, const versor parent_r, vec3 t, versor r,
                        vec3 s)
{
    glm_vec3_zero(t);
    glm_quat_identity(r);
    glm_vec3_one(s);
    if (b->has_local_position) memcpy(t, b->local_position, sizeof(vec3));
    if (b->has_local_rotation) memcpy(r, b->local_rotation, sizeof(versor));
    if (b->has_scale) memcpy(s, b->scale, sizeof(vec3));
    if (!b->has_local_position && !b->has_local_rotation && (b->has_world_position || b->has_world_rotation)) {
        versor inv;
        glm_quat_conjugate((float *)parent_r, inv);
        if (b->has_world_rotation) {
            versor wr;
            memcpy(wr, b->world_rotation, sizeof wr);
            glm_quat_mul(inv, wr, r);
            glm_quat_normalize(r);
        }
        if (b->has_world_position) {
            vec3 wp, d;
            memcpy(wp, b->world_position, sizeof wp);
            glm_vec3_sub(wp, (float *)parent_t, d);
            glm_quat_rotatev(inv, d, t);
        }
    }
    if (!(s[0] != 0.0f && s[1] != 0.0f && s[2] != 0.0f && isfinite(s[0]) && isfinite(s[1]) && isfinite(s[2])))
        glm_vec3_one(s);
}

/* The ancestor `up` generations above b, or -1 (a parent cycle or a bad index ends the walk). */
static int32_t kiln__ancestor(const kiln_source_skeleton *sk, uint32_t b, uint32_t up)
{
    int32_t at = (int32_t)b;
    for (uint32_t k = 0; k < up && at >= 0; k++) {
        at = sk->bones[at].parent;
        if (at >= (int32_t)sk->bone_count) at = -1;
    }
    return at;
}

void kiln__export_rest_local(const kiln_source_skeleton *sk, uint32_t b, float rest[10])
{
    CGLM_ALIGN(16) vec3 chain_t = {0.0f, 0.0f, 0.0f}, t, s;
    CGLM_ALIGN(16) versor chain_r = {0.0f, 0.0f, 0.0f, 1.0f}, r;
    const kiln_source_bone *bone = &sk->bones[b];
    if (!bone->has_local_position && !bone->has_local_rotation) {
        /* Only a bone given in world space needs its parents' chain: built from the root down,
         * walking up again for each generation (no stack; a cycle stops at bone_count steps). */
        uint32_t depth = 0;
        for (int32_t at = bone->parent; at >= 0 && at < (int32_t)sk->bone_count && depth < sk->bone_count;
             at = sk->bones[at].parent)
            depth++;
        for (uint32_t up = depth; up > 0; up--) {
            kiln__local(&sk->bones[kiln__ancestor(sk, b, up)], chain_t, chain_r, t, r, s);
            vec3 moved;
            versor next;
            glm_quat_rotatev(chain_r, t, moved);
            glm_vec3_add(chain_t, moved, chain_t);
            glm_quat_mul(chain_r, r, next);
            glm_quat_normalize(next);
            glm_quat_copy(next, chain_r);
        }
    }
    kiln__local(bone, chain_t, chain_r, t, r, s);
    memcpy(rest, t, 3 * sizeof(float));
    memcpy(rest + 3, r, 4 * sizeof(float));
    memcpy(rest + 7, s, 3 * sizeof(float));
}
