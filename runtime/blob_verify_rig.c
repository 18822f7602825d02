/* Verification of the 1.2 rigging sections (constraints, IK handles), so that after
 * kiln_blob_load the solver never reads a bone outside its skeleton, never follows a chain
 * that does not exist and never meets a NaN.
 *
 * Runs after the loader's table, skeleton and bone checks and finds its sections itself (these
 * kinds are unknown to the 1.0 and 1.1 tables, which skip them by size), as the animation
 * verifier does.
 */
#include <math.h>
#include <stddef.h>

#include "blob_verify_rig.h"
#include "blob_verify_sections.h"

_Static_assert(sizeof(kiln_blob_constraint) == 64, "constraint record");
_Static_assert(offsetof(kiln_blob_constraint, weight) == 24, "constraint.weight");
_Static_assert(offsetof(kiln_blob_constraint, offset) == 32, "constraint.offset");
_Static_assert(sizeof(kiln_blob_ik_handle) == 64, "IK handle record");
_Static_assert(offsetof(kiln_blob_ik_handle, chain_length) == 32, "ik_handle.chain_length");
_Static_assert(offsetof(kiln_blob_ik_handle, target_offset) == 40, "ik_handle.target_offset");

enum { KILN__R_CNST, KILN__R_IKHD, KILN__R_SKEL, KILN__R_BONE, KILN__R_NIDX, KILN__R_COUNT };

typedef struct kiln__rv {
    const unsigned char     *base;
    uint64_t                 size;
    kiln_diag               *err;
    const kiln_blob_section *sec[KILN__R_COUNT];
    uint64_t                 strings_size;
} kiln__rv;

static uint32_t kiln__count(const kiln__rv *v, int k) { return v->sec[k] ? v->sec[k]->count : 0; }

static const void *kiln__rec(const kiln__rv *v, int k, uint32_t i)
{
    return v->base + v->sec[k]->offset + (uint64_t)i * v->sec[k]->stride;
}

static uint64_t kiln__at(const kiln__rv *v, int k, uint32_t i, size_t field)
{
    return v->sec[k]->offset + (uint64_t)i * v->sec[k]->stride + field;
}

/* ---- sections ------------------------------------------------------------------------------ */
static kiln_result kiln__find(kiln__rv *v)
{
    static const uint32_t kinds[2] = {KILN_SECTION_CONSTRAINTS, KILN_SECTION_IK_HANDLES};
    static const uint32_t strides[2] = {sizeof(kiln_blob_constraint), sizeof(kiln_blob_ik_handle)};
    kiln__verify_strings_data(v->base, &v->strings_size, NULL, NULL);
    uint32_t n;
    const kiln_blob_section *t = kiln__verify_table(v->base, &n);
    for (uint32_t i = 0; i < n; i++) {
        const kiln_blob_section *s = &t[i];
        /* the first of each known kind, as the views read them (the loader rejects doubles) */
        if (s->kind == KILN_SECTION_SKELETONS && !v->sec[KILN__R_SKEL]) v->sec[KILN__R_SKEL] = s;
        if (s->kind == KILN_SECTION_BONES && !v->sec[KILN__R_BONE]) v->sec[KILN__R_BONE] = s;
        if (s->kind == KILN_SECTION_NAME_INDEX && !v->sec[KILN__R_NIDX]) v->sec[KILN__R_NIDX] = s;
        for (int k = 0; k < 2; k++) {
            if (s->kind != kinds[k]) continue;
            KILN__VERIFY_TRY(kiln__verify_section(s, i, v->sec[k], strides[k], v->size, v->err));
            v->sec[k] = s;
        }
    }
    return KILN_OK;
}

/* ---- shared record checks ------------------------------------------------------------------- */
/* The skeleton record a rig record names (its index checked by the caller). */
static const kiln_blob_skeleton *kiln__skeleton(const kiln__rv *v, uint32_t i)
{
    return (const kiln_blob_skeleton *)kiln__rec(v, KILN__R_SKEL, i);
}

/* Name, skeleton index, and the grouping by (skeleton, order) against the previous record. */
static kiln_result kiln__check_common(kiln__rv *v, int k, uint32_t i, uint32_t name, uint32_t skeleton, uint32_t order,
                                      size_t name_at, size_t skeleton_at, uint32_t prev_skeleton, uint32_t prev_order)
{
    const char *kind = k == KILN__R_CNST ? "CNST" : "IKHD";
    if (!kiln__string_ok(v->strings_size, name))
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, kiln__at(v, k, i, name_at),
                                 "%s[%u].name: string offset %u is outside the %llu-byte string table", kind, i, name,
                                 (unsigned long long)v->strings_size);
    if (skeleton >= kiln__count(v, KILN__R_SKEL))
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, kiln__at(v, k, i, skeleton_at),
                                 "%s[%u].skeleton: index %u is outside SKEL (%u records)", kind, i, skeleton,
                                 kiln__count(v, KILN__R_SKEL));
    if (i > 0 && (skeleton < prev_skeleton || (skeleton == prev_skeleton && order <= prev_order)))
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, kiln__at(v, k, i, skeleton_at),
                                 "%s[%u].skeleton: (skeleton %u, order %u) does not follow (skeleton %u, order %u) of the "
                                 "previous record; records are grouped by skeleton, in file order",
                                 kind, i, skeleton, order, prev_skeleton, prev_order);
    return KILN_OK;
}

/* ---- constraints ---------------------------------------------------------------------------- */
static kiln_result kiln__check_constraint(kiln__rv *v, uint32_t i, const kiln_blob_constraint *c)
{
#define KILN__CN_FAIL(code, field, ...) kiln__verify_fail(v->err, (code), kiln__at(v, KILN__R_CNST, i, offsetof(kiln_blob_constraint, field)), __VA_ARGS__)
    if (c->type > KILN_CONSTRAINT_SCALE)
        return KILN__CN_FAIL(KILN_ERR_BLOB_BAD_RECORD, type, "CNST[%u].type: %u is not a known constraint type", i, c->type);
    uint32_t bones = kiln__skeleton(v, c->skeleton)->bone_count;
    if (c->bone >= bones)
        return KILN__CN_FAIL(KILN_ERR_BLOB_BAD_RECORD, bone, "CNST[%u].bone: %u is outside skeleton %u (%u bones)", i,
                             c->bone, c->skeleton, bones);
    if (c->target >= bones || c->target == c->bone)
        return KILN__CN_FAIL(KILN_ERR_BLOB_BAD_RECORD, target,
                             "CNST[%u].target: %u is outside skeleton %u (%u bones) or is the constrained bone", i,
                             c->target, c->skeleton, bones);
    uint32_t known = KILN_CONSTRAINT_SKIP_X | KILN_CONSTRAINT_SKIP_Y | KILN_CONSTRAINT_SKIP_Z;
    if (c->flags & ~known)
        return KILN__CN_FAIL(KILN_ERR_BLOB_BAD_RECORD, flags, "CNST[%u].flags: unknown bits 0x%X", i, c->flags & ~known);
    if (!kiln__finite(c->weight))
        return KILN__CN_FAIL(KILN_ERR_BLOB_NOT_FINITE, weight, "CNST[%u].weight: NaN or infinite", i);
    if (!(c->weight >= 0.0f && c->weight <= 1.0f))
        return KILN__CN_FAIL(KILN_ERR_BLOB_BAD_RECORD, weight, "CNST[%u].weight: %g is outside [0, 1]", i, (double)c->weight);
    size_t bad = kiln__nonfinite(c->offset, 4);
    if (bad < 4)
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_NOT_FINITE,
                                 kiln__at(v, KILN__R_CNST, i, offsetof(kiln_blob_constraint, offset) + 4 * bad),
                                 "CNST[%u].offset: component %zu is NaN or infinite", i, bad);
    if (c->type == KILN_CONSTRAINT_ORIENT) {
        double n = sqrt((double)c->offset[0] * c->offset[0] + (double)c->offset[1] * c->offset[1] +
                        (double)c->offset[2] * c->offset[2] + (double)c->offset[3] * c->offset[3]);
        if (!(fabs(n - 1.0) <= 1e-3))
            return KILN__CN_FAIL(KILN_ERR_BLOB_BAD_RECORD, offset,
                                 "CNST[%u].offset: an orient offset must be a unit quaternion (length %g)", i, n);
    } else if (c->offset[3] != (c->type == KILN_CONSTRAINT_SCALE ? 1.0f : 0.0f)) {
        return KILN__CN_FAIL(KILN_ERR_BLOB_BAD_RECORD, offset, "CNST[%u].offset: w is %g, %s offsets have w = %s", i,
                             (double)c->offset[3], c->type == KILN_CONSTRAINT_SCALE ? "scale" : "point",
                             c->type == KILN_CONSTRAINT_SCALE ? "1" : "0");
    }
    if (!kiln__zero(c->reserved, sizeof c->reserved))
        return KILN__CN_FAIL(KILN_ERR_BLOB_BAD_RECORD, reserved, "CNST[%u].reserved: not zero", i);
#undef KILN__CN_FAIL
    return KILN_OK;
}

/* ---- IK handles ----------------------------------------------------------------------------- */
static kiln_result kiln__check_ik(kiln__rv *v, uint32_t i, const kiln_blob_ik_handle *h)
{
#define KILN__IK_FAIL(code, field, ...) kiln__verify_fail(v->err, (code), kiln__at(v, KILN__R_IKHD, i, offsetof(kiln_blob_ik_handle, field)), __VA_ARGS__)
    const kiln_blob_skeleton *sk = kiln__skeleton(v, h->skeleton);
    uint32_t bones = sk->bone_count;
    if (h->start_bone >= bones)
        return KILN__IK_FAIL(KILN_ERR_BLOB_BAD_RECORD, start_bone, "IKHD[%u].start_bone: %u is outside skeleton %u (%u bones)",
                             i, h->start_bone, h->skeleton, bones);
    if (h->end_bone >= bones)
        return KILN__IK_FAIL(KILN_ERR_BLOB_BAD_RECORD, end_bone, "IKHD[%u].end_bone: %u is outside skeleton %u (%u bones)", i,
                             h->end_bone, h->skeleton, bones);
#define KILN__IK_OPTIONAL(field)                                                                                 \
    if (h->field != KILN_BLOB_NONE && h->field >= bones)                                                         \
        return KILN__IK_FAIL(KILN_ERR_BLOB_BAD_RECORD, field, "IKHD[%u]." #field ": %u is outside skeleton %u (%u " \
                             "bones) and not NONE", i, h->field, h->skeleton, bones);
    KILN__IK_OPTIONAL(target_bone)
    KILN__IK_OPTIONAL(pole_vector_bone)
    KILN__IK_OPTIONAL(pole_bone)
#undef KILN__IK_OPTIONAL
    if (h->flags & ~KILN_IK_USE_TARGET_ROTATION)
        return KILN__IK_FAIL(KILN_ERR_BLOB_BAD_RECORD, flags, "IKHD[%u].flags: unknown bits 0x%X", i,
                             h->flags & ~KILN_IK_USE_TARGET_ROTATION);
    size_t bad = kiln__nonfinite(h->target_offset, 3);
    if (bad < 3)
        return kiln__verify_fail(v->err, KILN_ERR_BLOB_NOT_FINITE,
                                 kiln__at(v, KILN__R_IKHD, i, offsetof(kiln_blob_ik_handle, target_offset) + 4 * bad),
                                 "IKHD[%u].target_offset: component %zu is NaN or infinite", i, bad);
    if (!kiln__zero(h->reserved, sizeof h->reserved))
        return KILN__IK_FAIL(KILN_ERR_BLOB_BAD_RECORD, reserved, "IKHD[%u].reserved: not zero", i);
    /* The chain: end's (chain_length - 1)-th ancestor is start. The solver's scratch holds
     * chains as long as the skeleton's depth, so longer ones are rejected too. */
    if (h->chain_length < 2 || h->chain_length > sk->depth)
        return KILN__IK_FAIL(KILN_ERR_BLOB_BAD_RECORD, chain_length,
                             "IKHD[%u].chain_length: %u is below 2 or above the skeleton's depth %u", i,
                             h->chain_length, sk->depth);
    const kiln_blob_bone *bone = (const kiln_blob_bone *)kiln__rec(v, KILN__R_BONE, sk->first_bone);
    uint32_t b = h->end_bone;
    for (uint32_t k = 1; k < h->chain_length; k++) {
        int32_t p = bone[b].parent; /* -1 or below b: checked by the loader */
        if (p < 0)
            return KILN__IK_FAIL(KILN_ERR_BLOB_BAD_RECORD, chain_length,
                                 "IKHD[%u].chain_length: %u joints from end bone %u up pass the root of skeleton %u", i,
                                 h->chain_length, h->end_bone, h->skeleton);
        b = (uint32_t)p;
    }
    if (b != h->start_bone)
        return KILN__IK_FAIL(KILN_ERR_BLOB_BAD_RECORD, chain_length,
                             "IKHD[%u].chain_length: %u joints up from end bone %u reach bone %u, not the start bone %u",
                             i, h->chain_length, h->end_bone, b, h->start_bone);
#undef KILN__IK_FAIL
    return KILN_OK;
}

/* ---- driver --------------------------------------------------------------------------------- */
static kiln_result kiln__check_records(kiln__rv *v)
{
    uint32_t ps = 0, po = 0;
    for (uint32_t i = 0; i < kiln__count(v, KILN__R_CNST); i++) {
        const kiln_blob_constraint *c = kiln__rec(v, KILN__R_CNST, i);
        KILN__VERIFY_TRY(kiln__check_common(v, KILN__R_CNST, i, c->name, c->skeleton, c->order,
                                            offsetof(kiln_blob_constraint, name), offsetof(kiln_blob_constraint, skeleton),
                                            ps, po));
        KILN__VERIFY_TRY(kiln__check_constraint(v, i, c));
        ps = c->skeleton, po = c->order;
    }
    for (uint32_t i = 0; i < kiln__count(v, KILN__R_IKHD); i++) {
        const kiln_blob_ik_handle *h = kiln__rec(v, KILN__R_IKHD, i);
        KILN__VERIFY_TRY(kiln__check_common(v, KILN__R_IKHD, i, h->name, h->skeleton, h->order,
                                            offsetof(kiln_blob_ik_handle, name), offsetof(kiln_blob_ik_handle, skeleton),
                                            ps, po));
        KILN__VERIFY_TRY(kiln__check_ik(v, i, h));
        ps = h->skeleton, po = h->order;
    }
    return KILN_OK;
}

/* The loader checks name entries of the kinds it knows; these two are new to it. */
static kiln_result kiln__check_names(kiln__rv *v)
{
    for (uint32_t i = 0; i < kiln__count(v, KILN__R_NIDX); i++) {
        const kiln_blob_name_entry *e = kiln__rec(v, KILN__R_NIDX, i);
        int k = e->kind == KILN_SECTION_CONSTRAINTS ? KILN__R_CNST : e->kind == KILN_SECTION_IK_HANDLES ? KILN__R_IKHD : -1;
        if (k >= 0 && e->index >= kiln__count(v, k)) {
            char name[5];
            return kiln__verify_fail(v->err, KILN_ERR_BLOB_BAD_RECORD, kiln__at(v, KILN__R_NIDX, i, offsetof(kiln_blob_name_entry, index)),
                                     "NIDX[%u].index: %u is outside %s (%u records)", i, e->index,
                                     kiln_blob_kind_name(e->kind, name), kiln__count(v, k));
        }
    }
    return KILN_OK;
}

kiln_result kiln__verify_rig(const void *base, uint64_t size, kiln_diag *err)
{
    kiln__rv v = {.base = (const unsigned char *)base, .size = size, .err = err}; /* the rest zero */
    KILN__VERIFY_TRY(kiln__find(&v));
    if (!v.sec[KILN__R_CNST] && !v.sec[KILN__R_IKHD]) return KILN_OK;
    KILN__VERIFY_TRY(kiln__check_records(&v));
    return kiln__check_names(&v);
}
