/* Rig baking (Cast reference E): the IKHandle and Constraint children of a baked skeleton,
 * into the blob 1.2 records, bone indices in the skeleton's sorted (parent-first) order.
 *
 * Constraint offsets are resolved here, once, so that the runtime applies one formula per
 * type (kiln/rig.h): the custom offset `co` when present, otherwise, with "maintain offset"
 * (`mo`), the offset that makes the constraint reproduce the rest pose, otherwise the type's
 * default. The mo offsets come from the rest pose composed in double precision with the
 * runtime's conventions (segment scale compensation, rotations from orthonormalised columns),
 * so that solving on the rest pose gives the rest pose back to float precision.
 *
 * Records keep file order within the skeleton (`order` is the node's position among the
 * skeleton's IKHandle, or Constraint, children, dropped ones included), and the skeletons of a
 * unit are baked in order, so the blob's tables come out grouped by skeleton as the loader
 * requires.
 */
#include <math.h>
#include <string.h>

#include "bake_internal.h"
#include "bake_report.h"
#include "ds.h"
#include "math_f64.h"

/* ---- rest pose in double ---------------------------------------------------------------------- */
/* An affine transform: 3x3 column-major in m[0..8], translation in m[9..11]. */
typedef struct kiln__affine {
    double m[12];
} kiln__affine;

/* World rest of every bone (sorted order, parents first): W = W_p · T(t) · S(s_p)^-1 · R · S
 * with segment scale compensation, W_p · T · R · S without (the runtime's composition). */
static void kiln__rest_world(const kiln__skeleton *sk, kiln__affine *world)
{
    for (uint32_t b = 0; b < sk->bone_count; b++) {
        double q[4] = {sk->local_r[b][0], sk->local_r[b][1], sk->local_r[b][2], sk->local_r[b][3]}, r[9];
        double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        for (int k = 0; k < 4; k++) q[k] /= n > 0 ? n : 1;
        kiln__qto_mat3(q, r);
        double l[12];
        int32_t p = sk->parents[b];
        for (int c = 0; c < 3; c++)
            for (int row = 0; row < 3; row++) {
                double v = r[c * 3 + row] * sk->local_s[b][c];
                if (p >= 0 && (sk->flags[b] & KILN_BONE_SEGMENT_SCALE_COMPENSATE)) v /= sk->local_s[p][row];
                l[c * 3 + row] = v;
            }
        for (int k = 0; k < 3; k++) l[9 + k] = sk->local_t[b][k];
        if (p < 0) {
            memcpy(world[b].m, l, sizeof l);
            continue;
        }
        const double *pm = world[p].m;
        double *o = world[b].m;
        for (int c = 0; c < 4; c++)
            for (int row = 0; row < 3; row++)
                o[c * 3 + row] = pm[row] * l[c * 3] + pm[3 + row] * l[c * 3 + 1] + pm[6 + row] * l[c * 3 + 2] +
                                 (c == 3 ? pm[9 + row] : 0.0);
    }
}

/* The rotation of an affine's 3x3 as the runtime takes rotations from model matrices. */
static void kiln__affine_rotation(const kiln__affine *a, double q[4]) { kiln__qfrom_columns(a->m, a->m + 3, q); }

/* ---- constraints ------------------------------------------------------------------------------ */
/* The offset that keeps the rest pose (Cast reference E.2, Rec.): owner o, target t. */
static void kiln__rest_offset(const kiln__skeleton *sk, const kiln__affine *world, uint32_t type, uint32_t o,
                              uint32_t t, float out[4])
{
    if (type == KILN_CONSTRAINT_POINT) {
        /* off = t_rest(o) - inverse(W_parent) · P(t) */
        const double *pt = world[t].m + 9;
        double x[3] = {pt[0], pt[1], pt[2]};
        int32_t p = sk->parents[o];
        if (p >= 0 && !kiln__affine_solve(world[p].m, pt, x)) x[0] = x[1] = x[2] = 0.0; /* zero scales were repaired */
        for (int k = 0; k < 3; k++) out[k] = (float)((double)sk->local_t[o][k] - x[k]);
        out[3] = 0.0f;
    } else if (type == KILN_CONSTRAINT_ORIENT) {
        /* off = conj(R(t)) ⊗ R(o) */
        double a[4], b[4], ca[4], d[4];
        kiln__affine_rotation(&world[t], a);
        kiln__affine_rotation(&world[o], b);
        kiln__qconj(a, ca);
        kiln__qmul(ca, b, d);
        double x = d[0], y = d[1], z = d[2], w = d[3];
        double n = sqrt(x * x + y * y + z * z + w * w);
        out[0] = (float)(x / n), out[1] = (float)(y / n), out[2] = (float)(z / n), out[3] = (float)(w / n);
    } else {
        /* off = s_rest(o) / s_rest(t): rest scales are never zero (the skeleton baker repairs them) */
        for (int k = 0; k < 3; k++) out[k] = (float)((double)sk->local_s[o][k] / (double)sk->local_s[t][k]);
        out[3] = 1.0f;
    }
}

struct kiln__rig_cache {
    kiln__affine *world;    /* the rest pose, made when the first mo constraint asks for it */
};

void kiln__rig_cache_free(const kiln_allocator *a, kiln__rig_cache *cache)
{
    if (!cache) return;
    kiln__free(a, cache->world);
    kiln__free(a, cache);
}

kiln_result kiln__bake_constraint(const kiln__bake_ctx *ctx, const kiln_source_constraint *src, uint32_t skeleton,
                                  const kiln__skeleton *sk, uint32_t order, kiln__rig_cache **cache,
                                  kiln__bake_unit *u)
{
    const kiln_source_constraint c = *src;
    int bad = c.constrained_bone < 0 || c.target_bone < 0 || (uint32_t)c.constrained_bone >= sk->bone_count ||
              (uint32_t)c.target_bone >= sk->bone_count || c.constrained_bone == c.target_bone;
    if (bad) {
        kiln__bake_report(&ctx->sink, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_ERROR, &src->loc, NULL, KILN_NO_OFFSET,
                          "constraint bones do not resolve to two distinct bones; dropped");
        return KILN_OK;
    }
    if (!*cache) {
        *cache = kiln__realloc(ctx->allocator, NULL, sizeof **cache);
        if (!*cache) return KILN_ERR_OUT_OF_MEMORY;
        (*cache)->world = NULL;
    }
    kiln__affine **world = &(*cache)->world;
    kiln__constraint *out = &u->constraints[u->constraint_count];
    memset(out, 0, sizeof *out);
    kiln_blob_constraint *rec = &out->rec;
    rec->type = (uint32_t)c.type; /* KILN_SOURCE_CONSTRAINT_* has the blob's values */
    rec->skeleton = skeleton;
    rec->bone = sk->sorted_index[c.constrained_bone];
    rec->target = sk->sorted_index[c.target_bone];
    rec->flags = (c.skip[0] ? KILN_CONSTRAINT_SKIP_X : 0u) | (c.skip[1] ? KILN_CONSTRAINT_SKIP_Y : 0u) |
                 (c.skip[2] ? KILN_CONSTRAINT_SKIP_Z : 0u);
    rec->weight = c.weight >= 0.0f ? (c.weight <= 1.0f ? c.weight : 1.0f) : 0.0f; /* NaN: 0 */
    rec->order = order;
    if (c.has_custom_offset) {
        if (c.maintain_offset)
            kiln__bake_report(&ctx->sink, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING, &src->loc, "mo",
                              KILN_NO_OFFSET, "both a custom offset (co) and maintain offset (mo): co is used");
        memcpy(rec->offset, c.custom_offset, sizeof rec->offset);
        if (c.type != KILN_SOURCE_CONSTRAINT_ORIENT) rec->offset[3] = c.type == KILN_SOURCE_CONSTRAINT_SCALE ? 1.0f : 0.0f;
    } else if (c.maintain_offset) {
        if (!*world) {
            *world = kiln__realloc(ctx->allocator, NULL, (size_t)sk->bone_count * sizeof **world);
            if (!*world) return KILN_ERR_OUT_OF_MEMORY;
            kiln__rest_world(sk, *world);
        }
        kiln__rest_offset(sk, *world, rec->type, rec->bone, rec->target, rec->offset);
    } else {
        float def = c.type == KILN_SOURCE_CONSTRAINT_SCALE ? 1.0f : 0.0f;
        rec->offset[0] = rec->offset[1] = rec->offset[2] = def;
        rec->offset[3] = c.type == KILN_SOURCE_CONSTRAINT_POINT ? 0.0f : 1.0f;
    }
    if (c.name && !(out->name = kiln__strdup(ctx->allocator, c.name))) return KILN_ERR_OUT_OF_MEMORY;
    u->constraint_count++;
    return KILN_OK;
}

/* ---- IK handles ------------------------------------------------------------------------------- */
/* Joints from start down to end inclusive (sorted indices), or 0 when end does not descend from
 * start. */
static uint32_t kiln__chain_length(const kiln__skeleton *sk, uint32_t start, uint32_t end)
{
    uint32_t n = 1;
    for (int32_t b = (int32_t)end; b >= 0; b = sk->parents[b], n++)
        if ((uint32_t)b == start) return n;
    return 0;
}

static uint32_t kiln__bone_or_none(const kiln__skeleton *sk, int32_t cast_bone)
{
    return cast_bone >= 0 && (uint32_t)cast_bone < sk->bone_count ? sk->sorted_index[cast_bone] : KILN_BLOB_NONE;
}

kiln_result kiln__bake_ik_handle(const kiln__bake_ctx *ctx, const kiln_source_ik_handle *src, uint32_t skeleton,
                                 const kiln__skeleton *sk, uint32_t order, kiln__bake_unit *u)
{
    const kiln_source_ik_handle h = *src;
    uint32_t start = kiln__bone_or_none(sk, h.start_bone);
    uint32_t end = kiln__bone_or_none(sk, h.end_bone);
    if (start == KILN_BLOB_NONE || end == KILN_BLOB_NONE) {
        kiln__bake_report(&ctx->sink, KILN_ERR_CAST_UNRESOLVED, KILN_SEVERITY_ERROR, &src->loc, NULL, KILN_NO_OFFSET,
                          "IK handle start or end bone does not resolve; dropped");
        return KILN_OK;
    }
    /* A chain needs two joints: the end strictly below the start (E.1: skip the handle
     * otherwise). */
    uint32_t length = start != end ? kiln__chain_length(sk, start, end) : 0;
    if (length < 2) {
        kiln__bake_report(&ctx->sink, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_ERROR, &src->loc, "eb", KILN_NO_OFFSET,
                          "end bone '%s' is not a descendant of start bone '%s'; the IK handle is dropped",
                          sk->names[end], sk->names[start]);
        return KILN_OK;
    }
    kiln__ik_handle *out = &u->ik_handles[u->ik_handle_count];
    memset(out, 0, sizeof *out);
    kiln_blob_ik_handle *rec = &out->rec;
    rec->skeleton = skeleton;
    rec->start_bone = start;
    rec->end_bone = end;
    rec->target_bone = kiln__bone_or_none(sk, h.target_bone);
    rec->pole_vector_bone = kiln__bone_or_none(sk, h.pole_vector_bone);
    rec->pole_bone = kiln__bone_or_none(sk, h.pole_bone);
    rec->flags = h.use_target_rotation ? KILN_IK_USE_TARGET_ROTATION : 0u;
    rec->chain_length = length;
    rec->order = order;
    memcpy(rec->target_offset, h.target_offset, sizeof rec->target_offset);
    if (rec->target_bone == KILN_BLOB_NONE)
        kiln__bake_report(&ctx->sink, KILN_ERR_CAST_MISSING_PROPERTY, KILN_SEVERITY_WARNING, &src->loc, "tb",
                          KILN_NO_OFFSET, "IK handle without a target bone: baked inactive (never solved)");
    if (h.name && !(out->name = kiln__strdup(ctx->allocator, h.name))) return KILN_ERR_OUT_OF_MEMORY;
    u->ik_handle_count++;
    return KILN_OK;
}

/* ---- entry point ------------------------------------------------------------------------------ */
kiln_result kiln__bake_rig(const kiln__bake_ctx *ctx, const kiln_source_skeleton *skel, uint32_t skeleton,
                           const kiln__skeleton *sk, kiln__bake_unit *u)
{
    kiln__rig_cache *cache = NULL;
    kiln_result r = KILN_OK;
    for (uint32_t i = 0; i < skel->ik_handle_count && r == KILN_OK; i++)
        r = kiln__bake_ik_handle(ctx, &skel->ik_handles[i], skeleton, sk, i, u);
    for (uint32_t i = 0; i < skel->constraint_count && r == KILN_OK; i++)
        r = kiln__bake_constraint(ctx, &skel->constraints[i], skeleton, sk, i, &cache, u);
    kiln__rig_cache_free(ctx->allocator, cache);
    return r;
}
