/* Binding a clip to a skeleton: slot -> bone by name, CurveModeOverride resolution against the
 * skeleton's hierarchy, per-block row sources and per-lane mode coefficients.
 *
 * Everything the sampler would otherwise decide per call is decided here once, so sampling is
 * a straight walk over SoA blocks: where each component's 8 lanes come from in a row (the
 * constant block, the row in place, or a decoded scratch block), and how each lane composes
 * against the rest pose and the pose underneath (kiln__modes). The clip data is bounds-checked
 * here too (O(tracks)), so that sampling stays inside the blob even for trusted loads.
 */
#include <math.h>
#include <string.h>

#include "anim_internal.h"
#include "blob_internal.h"
#include "error_detail.h"

#define KILN__ALIGN64(x) (((x) + (size_t)63) & ~(size_t)63)

/* Match quality of a slot's name against a bone's */
#define KILN__MATCH_EXACT 0u
#define KILN__MATCH_CASE 1u
#define KILN__MATCH_SANITIZED 2u

typedef struct kiln__bind_plan {
    const kiln_blob_animation *clip;
    const kiln_blob_skeleton *skel;
    size_t blocks, modes, slots, overrides, scales, total;
} kiln__bind_plan;

/* Finds the records and sizes the caller memory. 0 on a bad argument. */
static int kiln__plan(const kiln_blob *anim_blob, uint32_t clip, const kiln_blob *skel_blob, uint32_t skeleton,
                      kiln__bind_plan *p)
{
    uint32_t na = 0, ns = 0;
    const kiln_blob_animation *a = anim_blob ? kiln_blob_animations(anim_blob, &na) : NULL;
    const kiln_blob_skeleton *s = skel_blob ? kiln_blob_skeletons(skel_blob, &ns) : NULL;
    if (!a || !s || clip >= na || skeleton >= ns) return 0;
    p->clip = &a[clip];
    p->skel = &s[skeleton];
    size_t at = KILN__ALIGN64(sizeof(struct kiln_anim_binding));
    p->blocks = at;
    at += KILN__ALIGN64((size_t)p->clip->block_count * sizeof(kiln__clip_block));
    p->modes = at;
    at += KILN__ALIGN64((size_t)p->clip->block_count * sizeof(kiln__modes));
    p->slots = at;
    at += KILN__ALIGN64((size_t)p->clip->joint_count * sizeof(uint32_t));
    p->overrides = at;
    at += KILN__ALIGN64((size_t)p->clip->override_count * sizeof(uint32_t));
    p->scales = at;
    if (p->clip->flags & KILN_ANIM_LOSSY)
        at += KILN__ALIGN64((size_t)p->clip->block_count * (KILN_ANIM_COMPONENTS - 1) * KILN__LANES * sizeof(float));
    p->total = at;
    return 1;
}

size_t kiln_anim_binding_size(const kiln_blob *anim_blob, uint32_t clip, const kiln_blob *skel_blob, uint32_t skeleton)
{
    kiln__bind_plan p;
    return kiln__plan(anim_blob, clip, skel_blob, skeleton, &p) ? p.total : 0;
}

uint32_t kiln_anim_binding_soa_count(const kiln_anim_binding *binding)
{
    return binding && binding->magic == KILN__BINDING_MAGIC ? binding->soa_count : 0;
}

/* ---- names -------------------------------------------------------------------------------- */
static unsigned char kiln__lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c; }

static int kiln__case_eq(const char *a, const char *b)
{
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    for (; *x && *y; x++, y++)
        if (kiln__lower(*x) != kiln__lower(*y)) return 0;
    return *x == *y;
}

/* Sanitised (every byte outside [A-Za-z0-9_] becomes '_', as Maya does) and compared
 * case-insensitively, so this stage also accepts what the case-insensitive one would. */
static unsigned char kiln__sanitize(unsigned char c)
{
    c = kiln__lower(c);
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : (unsigned char)'_';
}

static int kiln__sanitized_eq(const char *a, const char *b)
{
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    for (; *x && *y; x++, y++)
        if (kiln__sanitize(*x) != kiln__sanitize(*y)) return 0;
    return *x == *y;
}

/* The first bone of the skeleton matching `name` at the best stage (exact, case-insensitive,
 * sanitised), or KILN_BLOB_NONE. Duplicate bone names bind to the first (spec F). */
static uint32_t kiln__match_bone(const kiln_blob *blob, const kiln_blob_bone *bones, uint32_t n, const char *name,
                                 uint32_t *quality)
{
    uint32_t hash = kiln_name_hash(name);
    for (uint32_t i = 0; i < n; i++)
        if (bones[i].name_hash == hash && strcmp(kiln_blob_string(blob, bones[i].name), name) == 0) {
            *quality = KILN__MATCH_EXACT;
            return i;
        }
    for (uint32_t i = 0; i < n; i++)
        if (kiln__case_eq(kiln_blob_string(blob, bones[i].name), name)) {
            *quality = KILN__MATCH_CASE;
            return i;
        }
    for (uint32_t i = 0; i < n; i++)
        if (kiln__sanitized_eq(kiln_blob_string(blob, bones[i].name), name)) {
            *quality = KILN__MATCH_SANITIZED;
            return i;
        }
    return KILN_BLOB_NONE;
}

/* ---- clip checks ---------------------------------------------------------------------------- */
static int kiln__in_blob(const kiln_blob *blob, uint64_t offset, uint64_t bytes)
{
    uint64_t total = kiln_blob_header_of(blob)->total_size;
    return offset <= total && bytes <= total - offset;
}

/* The O(tracks) structural checks sampling relies on (the loader's full verification checks
 * the same and more; this keeps trusted loads of bad content from reading outside the blob). */
static kiln_result kiln__check_clip(const kiln_blob_animation *a, const kiln_blob_anim_track *t)
{
    if (!(a->framerate > 0.0f) || a->framerate > 3.0e38f || a->frame_count == 0 || a->last_frame < a->first_frame ||
        (uint64_t)a->last_frame - (uint64_t)a->first_frame != (uint64_t)a->frame_count - 1u ||
        a->block_count != (a->joint_count + KILN__LANES - 1) / KILN__LANES || a->row_stride % KILN__CLIP_ROW_ALIGN != 0 ||
        a->data_offset % 16u != 0)
        return KILN_ERR_BLOB_BAD_RECORD;
    int lossy = (a->flags & KILN_ANIM_LOSSY) != 0;
    uint32_t prev = 0;
    for (uint32_t k = 0; k < a->animated_count; k++) {
        uint32_t key = (uint32_t)t[k].block * KILN_ANIM_COMPONENTS + t[k].component;
        if (t[k].block >= a->block_count || t[k].component >= KILN_ANIM_COMPONENTS ||
            !kiln__clip_track_ok(lossy, t[k].component, t[k].width) || (k > 0 && key <= prev) ||
            (uint64_t)t[k].row_offset + kiln__clip_track_bytes(t[k].width) > a->row_stride ||
            (t[k].width == KILN__CLIP_RAW && t[k].row_offset % 4u != 0))
            return KILN_ERR_BLOB_BAD_RECORD;
        prev = key;
    }
    return KILN_OK;
}

/* ---- modes ------------------------------------------------------------------------------- */
static uint32_t kiln__group_of(unsigned c) { return c < 3 ? 0u : (c < 7 ? 1u : 2u); }

/* The CurveModeOverride mode for channel group g (0 T, 1 R, 2 S) of the curves on `bone`, or
 * KILN_MODE_NONE when no override applies (D.6): walk self, parent, ..., root; at each node the
 * override with the lowest file order whose bone is the node and whose flag covers the group
 * wins. */
static uint32_t kiln__override_mode(uint32_t g, uint32_t bone, const kiln_blob_bone *bones,
                                    const kiln_blob_anim_override *ov, const uint32_t *ov_bone, uint32_t ov_count)
{
    if (ov_count == 0) return KILN_MODE_NONE;
    uint32_t node = bone;
    for (;;) {
        uint32_t best = KILN_BLOB_NONE, best_order = 0;
        for (uint32_t o = 0; o < ov_count; o++)
            if (ov_bone[o] == node && (ov[o].channels >> g & 1u) && ov[o].mode >= KILN_MODE_ABSOLUTE &&
                ov[o].mode <= KILN_MODE_ADDITIVE && (best == KILN_BLOB_NONE || ov[o].order < best_order)) {
                best = o;
                best_order = ov[o].order;
            }
        if (best != KILN_BLOB_NONE) return ov[best].mode;
        int32_t parent = bones[node].parent;
        /* parent < node holds for verified blobs; the test also ends the walk on bad data */
        if (parent < 0 || (uint32_t)parent >= node) return KILN_MODE_NONE;
        node = (uint32_t)parent;
    }
}

/* Fills lane l of `m` for the resolved modes of one slot (mode NONE everywhere for lanes that
 * drive no bone). Returns KILN__BLK_* flags the lane contributes; *abs stays 1 when every
 * component is absolute. */
static uint32_t kiln__fill_lane(kiln__modes *m, unsigned l, const uint32_t mode[KILN_ANIM_COMPONENTS], const float ab[3],
                                int *abs)
{
    uint32_t flags = 0;
    for (unsigned c = 0; c < 3; c++) {
        float a = ab[0];
        switch (mode[c]) {
        case KILN_MODE_ABSOLUTE: m->ta[c][l] = 0, m->tb[c][l] = 0, m->tc[c][l] = 1; break;
        case KILN_MODE_RELATIVE: m->ta[c][l] = 1, m->tb[c][l] = 0, m->tc[c][l] = 1; break;
        case KILN_MODE_ADDITIVE: m->ta[c][l] = 0, m->tb[c][l] = 1, m->tc[c][l] = a; break;
        default: m->ta[c][l] = 0, m->tb[c][l] = 1, m->tc[c][l] = 0; break;
        }
        if (mode[c] != KILN_MODE_ABSOLUTE) *abs = 0;
    }
    for (unsigned c = 0; c < 3; c++) {
        float a = ab[2];
        float *sa = &m->sa[c][l], *sb = &m->sb[c][l], *sz = &m->sz[c][l], *sc = &m->sc[c][l], *sd = &m->sd[c][l];
        switch (mode[7 + c]) {
        case KILN_MODE_ABSOLUTE: *sa = 0, *sb = 0, *sz = 1, *sc = 1, *sd = 0; break;
        case KILN_MODE_RELATIVE: *sa = 1, *sb = 0, *sz = 0, *sc = 1, *sd = 0; break;
        case KILN_MODE_ADDITIVE: *sa = 0, *sb = 1, *sz = 0, *sc = a, *sd = 1.0f - a; break;
        default: *sa = 0, *sb = 1, *sz = 0, *sc = 0, *sd = 1; break;
        }
        if (mode[7 + c] != KILN_MODE_ABSOLUTE) *abs = 0;
    }
    /* Rotation: qx..qw share one mode; the first component that has one decides. */
    uint32_t rmode = KILN_MODE_NONE;
    for (unsigned c = 3; c < 7 && rmode == KILN_MODE_NONE; c++) rmode = mode[c];
    float a = ab[1];
    m->frac_a[l] = 1.0f, m->frac_mask[l] = 0;
    m->exact_a[l] = 1.0f, m->exact_mask[l] = 0;
    switch (rmode) {
    case KILN_MODE_ABSOLUTE: m->ra[l] = 0, m->rb[l] = 0, m->rz[l] = 1, m->rk[l] = 1; break;
    case KILN_MODE_RELATIVE: m->ra[l] = 1, m->rb[l] = 0, m->rz[l] = 0, m->rk[l] = 1; break;
    case KILN_MODE_ADDITIVE:
        m->ra[l] = 0, m->rb[l] = 1, m->rz[l] = 0, m->rk[l] = 1;
        if (a == 0.0f) {
            m->rk[l] = 0;
        } else if (a > 0.0f && a < 1.0f) {
            m->frac_a[l] = a, m->frac_mask[l] = ~0u;
            flags |= KILN__BLK_FRAC;
        } else if (a != 1.0f) {
            m->exact_a[l] = a, m->exact_mask[l] = ~0u;
            flags |= KILN__BLK_EXACT;
        }
        break;
    default: m->ra[l] = 0, m->rb[l] = 1, m->rz[l] = 0, m->rk[l] = 0; break;
    }
    if (rmode != KILN_MODE_ABSOLUTE) *abs = 0;
    return flags;
}

/* ---- bind -------------------------------------------------------------------------------- */
kiln_result kiln_anim_bind(const kiln_blob *anim_blob, uint32_t clip, const kiln_blob *skel_blob, uint32_t skeleton,
                           void *mem, size_t size, kiln_anim_binding **out, kiln_anim_bind_report *report)
{
    if (out) *out = NULL;
    if (report) {
        memset(report, 0, sizeof *report);
        report->first_missing = KILN_BLOB_NONE;
    }
    kiln__bind_plan p;
#define KILN__BIND_FN "kiln_anim_bind: "
    if (!out) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__BIND_FN "out", "out is NULL");
    if (!mem) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__BIND_FN "mem", "mem is NULL");
    if ((uintptr_t)mem & 15u)
        return kiln__fail(KILN_ERR_BLOB_MISALIGNED, KILN__BIND_FN "mem", "mem %p is not 16-byte aligned", mem);
    if (!kiln__plan(anim_blob, clip, skel_blob, skeleton, &p))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__BIND_FN "clip, skeleton",
                          "no clip %u in anim_blob or no skeleton %u in skel_blob (or a NULL blob)", clip, skeleton);
    if (size < p.total)
        return kiln__fail(KILN_ERR_BUFFER_TOO_SMALL, KILN__BIND_FN "size",
                          "size %zu is below kiln_anim_binding_size() = %zu", size, (size_t)p.total);
#undef KILN__BIND_FN
    const kiln_blob_animation *a = p.clip;
    const kiln_blob_skeleton *sk = p.skel;

    /* ---- records the clip and the skeleton refer to ---- */
    uint32_t nj, nb, nr, nsc = 0, nov = 0;
    const kiln_blob_anim_joint *joints = kiln_blob_anim_joints(anim_blob, &nj);
    const kiln_blob_bone *all_bones = kiln_blob_bones(skel_blob, &nb);
    const kiln_soa_xform *all_rest = kiln_blob_rest_pose(skel_blob, &nr);
    const kiln_blob_anim_scalar *scalars = kiln_blob_anim_scalars(anim_blob, &nsc);
    const kiln_blob_anim_override *overrides = kiln_blob_anim_overrides(anim_blob, &nov);
    if ((a->joint_count && (!joints || a->first_joint > nj || a->joint_count > nj - a->first_joint)) ||
        (a->scalar_count && (a->first_scalar > nsc || a->scalar_count > nsc - a->first_scalar)) ||
        (a->override_count && (a->first_override > nov || a->override_count > nov - a->first_override)) ||
        (sk->bone_count && (!all_bones || sk->first_bone > nb || sk->bone_count > nb - sk->first_bone)) ||
        sk->soa_count != (sk->bone_count + KILN__LANES - 1) / KILN__LANES ||
        (sk->soa_count && (!all_rest || sk->first_soa > nr || sk->soa_count > nr - sk->first_soa)))
        return KILN_ERR_BLOB_BAD_RECORD;
    kiln__clip_layout lay;
    if (!kiln__clip_layout_of_anim(a, &lay) || !kiln__in_blob(anim_blob, lay.constants, lay.end - lay.constants))
        return KILN_ERR_BLOB_BAD_RECORD;
    const unsigned char *base = (const unsigned char *)anim_blob;
    const kiln_blob_anim_track *tracks = (const kiln_blob_anim_track *)(const void *)(base + lay.tracks);
    kiln_result r = kiln__check_clip(a, tracks);
    if (r != KILN_OK) return r;
    for (uint32_t i = 0; i < a->scalar_count; i++) {
        const kiln_blob_anim_scalar *s = &scalars[a->first_scalar + i];
        if (s->data_offset % 4u != 0 || !kiln__in_blob(anim_blob, s->data_offset, (uint64_t)a->frame_count * 4u))
            return KILN_ERR_BLOB_BAD_RECORD;
    }
    const kiln_blob_bone *bones = sk->bone_count ? all_bones + sk->first_bone : NULL;

    /* ---- the binding header ---- */
    unsigned char *m = (unsigned char *)mem;
    memset(m, 0, p.total);
    kiln_anim_binding *b = (kiln_anim_binding *)(void *)m;
    b->magic = KILN__BINDING_MAGIC;
    b->anim_blob = anim_blob;
    b->skel_blob = skel_blob;
    b->clip = a;
    b->clip_index = clip;
    b->skeleton = skeleton;
    b->framerate = (double)a->framerate;
    b->first_frame = a->first_frame;
    b->last_frame = a->last_frame;
    b->frame_count = a->frame_count;
    b->period = (double)(a->frame_count - 1u);
    b->row_stride = a->row_stride;
    b->joint_count = a->joint_count;
    b->block_count = a->block_count;
    b->scalar_count = a->scalar_count;
    b->clip_flags = a->flags;
    b->constants = base + lay.constants;
    b->tracks = tracks;
    b->rows = base + lay.rows;
    b->scalars = a->scalar_count ? scalars + a->first_scalar : NULL;
    b->bone_count = sk->bone_count;
    b->soa_count = sk->soa_count;
    b->rest = sk->soa_count ? all_rest + sk->first_soa : NULL;
    b->blocks = (kiln__clip_block *)(void *)(m + p.blocks);
    b->modes = (kiln__modes *)(void *)(m + p.modes);
    b->slot_bone = (uint32_t *)(void *)(m + p.slots);
    uint32_t *ov_bone = (uint32_t *)(void *)(m + p.overrides);
    b->packed_scale = (a->flags & KILN_ANIM_LOSSY) ? (float *)(void *)(m + p.scales) : NULL;
    if (a->flags & KILN_ANIM_LOSSY) b->flags |= KILN__BIND_LOSSY;

    /* ---- slots -> bones. Quality is kept in the top bits until duplicates are settled. ---- */
    uint32_t *slot_bone = b->slot_bone;
    for (uint32_t j = 0; j < a->joint_count; j++) {
        uint32_t q = 0;
        /* An unnamed slot is a placeholder that keeps later slots in the skeleton's order. */
        if (joints[a->first_joint + j].name == 0) {
            slot_bone[j] = KILN_BLOB_NONE;
            continue;
        }
        const char *name = kiln_blob_string(anim_blob, joints[a->first_joint + j].name);
        uint32_t bone = kiln__match_bone(skel_blob, bones, sk->bone_count, name, &q);
        slot_bone[j] = bone == KILN_BLOB_NONE ? KILN_BLOB_NONE : bone | q << 28;
        if (bone == KILN_BLOB_NONE && report) {
            report->missing_joints++;
            if (report->first_missing == KILN_BLOB_NONE) report->first_missing = j;
        }
    }
    /* Two slots driving one bone (names equal up to case, say): the better match keeps it; on
     * equal quality the later slot wins, as the later curve does (D.4). O(slots^2), bind time. */
    for (uint32_t j = 0; j < a->joint_count; j++) {
        if (slot_bone[j] == KILN_BLOB_NONE) continue;
        uint32_t bone = slot_bone[j] & 0x0FFFFFFFu, q = slot_bone[j] >> 28;
        for (uint32_t k = 0; k < a->joint_count; k++) {
            if (k == j || slot_bone[k] == KILN_BLOB_NONE || (slot_bone[k] & 0x0FFFFFFFu) != bone) continue;
            uint32_t qk = slot_bone[k] >> 28;
            if (qk < q || (qk == q && k > j)) {
                slot_bone[j] = KILN_BLOB_NONE - 1u; /* shadowed; cleared below */
                break;
            }
        }
    }
    int identity = 1;
    for (uint32_t j = 0; j < a->joint_count; j++) {
        if (slot_bone[j] == KILN_BLOB_NONE - 1u) {
            slot_bone[j] = KILN_BLOB_NONE;
            if (report) report->duplicate_joints++;
            continue;
        }
        if (slot_bone[j] == KILN_BLOB_NONE) continue;
        if (report) {
            report->bound_joints++;
            if (slot_bone[j] >> 28) report->inexact_matches++;
        }
        slot_bone[j] &= 0x0FFFFFFFu;
        if (slot_bone[j] != j) identity = 0;
    }
    if (identity) {
        b->flags |= KILN__BIND_IDENTITY;
        b->sampled = a->block_count < sk->soa_count ? a->block_count : sk->soa_count;
        if (a->block_count <= sk->soa_count) b->flags |= KILN__BIND_FILL;
    }
    if (report) report->identity_map = (uint32_t)identity;

    /* ---- overrides -> bones (the same name matching as the slots) ---- */
    const kiln_blob_anim_override *ov = a->override_count ? overrides + a->first_override : NULL;
    for (uint32_t o = 0; o < a->override_count; o++) {
        uint32_t q;
        ov_bone[o] = kiln__match_bone(skel_blob, bones, sk->bone_count, kiln_blob_string(anim_blob, ov[o].name), &q);
    }

    /* ---- per block: row sources ---- */
    uint32_t t = 0;
    for (uint32_t blk = 0; blk < a->block_count; blk++) {
        kiln__clip_block *cb = &b->blocks[blk];
        uint32_t rotation_animated = 0;
        for (; t < a->animated_count && tracks[t].block == blk; t++) {
            unsigned c = tracks[t].component;
            cb->offset[c] = tracks[t].row_offset;
            if (tracks[t].width == KILN__CLIP_RAW) {
                cb->kind[c] = KILN__SRC_RAW;
            } else {
                cb->kind[c] = KILN__SRC_DECODED;
                cb->width[c] = tracks[t].width;
                cb->track[c] = t;
                cb->flags |= KILN__BLK_DECODE;
            }
            if (c >= KILN__QX && c <= KILN__QZ) rotation_animated = 1;
        }
        if (kiln__clip_rebuilds_qw((a->flags & KILN_ANIM_LOSSY) != 0, rotation_animated)) {
            cb->kind[KILN__QW] = KILN__SRC_DECODED;
            cb->flags |= KILN__BLK_DECODE | KILN__BLK_QW;
        }
        /* lossy blocks whose 9 stored components share one width, laid out in order */
        if ((a->flags & KILN_ANIM_LOSSY) && (cb->flags & KILN__BLK_QW)) {
            unsigned k = 0;
            int uniform = 1;
            for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) {
                if (c == KILN__QW) continue;
                if (cb->kind[c] != KILN__SRC_DECODED || cb->width[c] != cb->width[0] ||
                    cb->track[c] != cb->track[0] + k || cb->offset[c] != cb->offset[0] + k * kiln__clip_track_bytes(cb->width[0]))
                    uniform = 0;
                k++;
            }
            if (uniform) cb->flags |= KILN__BLK_UNIFORM, cb->uniform_width = cb->width[0];
            /* any widths, packed back to back in component order */
            uint32_t at = cb->offset[0];
            int packed = 1;
            k = 0;
            for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) {
                if (c == KILN__QW) continue;
                if (cb->kind[c] != KILN__SRC_DECODED || cb->track[c] != cb->track[0] + k || cb->offset[c] != at)
                    packed = 0;
                cb->packed_width[k++] = (uint8_t)cb->width[c];
                at += kiln__clip_track_bytes(cb->width[c]);
            }
            if (packed) {
                /* the lanes' steps (kiln__clip_step), rounded once here as every path rounds them */
                cb->flags |= KILN__BLK_PACKED;
                int narrow = 1;
                for (unsigned q = 0; q < KILN_ANIM_COMPONENTS - 1; q++)
                    if (cb->packed_width[q] > 16u) narrow = 0;
                if (narrow) cb->flags |= KILN__BLK_NARROW;
                float *scale = b->packed_scale + (size_t)blk * (KILN_ANIM_COMPONENTS - 1) * KILN__LANES;
                for (unsigned q = 0; q < KILN_ANIM_COMPONENTS - 1; q++)
                    for (unsigned l = 0; l < KILN__LANES; l++)
                        scale[q * KILN__LANES + l] = kiln__clip_step(tracks[cb->track[0] + q].range_extent[l], cb->packed_width[q]);
            }
        }
        int dense = 1;
        for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++)
            if (cb->kind[c] != KILN__SRC_RAW || cb->offset[c] != cb->offset[0] + 32u * c) dense = 0;
        if (dense) cb->flags |= KILN__BLK_DENSE;
        /* Every quantised block keeps its decoded rows in the context: forward playback then
         * decodes each row once (measured on 80 joints, 256 instances round-robin, AVX2:
         * uniform 16-bit rows 8.7 ns/joint decoded twice per call in registers, 6.1 through
         * the cache; SSE2 13.4 and 9.1). Random access still decodes in place (see
         * kiln__context_prepare). */
        if (cb->flags & KILN__BLK_DECODE) cb->flags |= KILN__BLK_CACHE, b->flags |= KILN__BIND_CACHE;
    }

    /* ---- per lane: resolved modes -> coefficients ---- */
    static const float one3[3] = {1, 1, 1};
    for (uint32_t blk = 0; blk < a->block_count; blk++) {
        kiln__modes *md = &b->modes[blk];
        kiln__clip_block *cb = &b->blocks[blk];
        int block_abs = 1;
        for (unsigned l = 0; l < KILN__LANES; l++) {
            uint32_t j = blk * KILN__LANES + l;
            uint32_t mode[KILN_ANIM_COMPONENTS] = {0};
            const float *ab = one3;
            int lane_abs = 1;
            uint32_t bone = j < a->joint_count ? slot_bone[j] : KILN_BLOB_NONE;
            if (bone != KILN_BLOB_NONE) {
                const kiln_blob_anim_joint *jt = &joints[a->first_joint + j];
                ab = jt->additive_weight;
                uint32_t gmode[3];
                for (uint32_t g = 0; g < 3; g++)
                    gmode[g] = kiln__override_mode(g, bone, bones, ov, ov_bone, a->override_count);
                for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) {
                    uint32_t own = jt->modes >> (2 * c) & 3u, g = kiln__group_of(c);
                    /* an override changes the mode of curves, never adds one (D.6) */
                    mode[c] = own == KILN_MODE_NONE || gmode[g] == KILN_MODE_NONE ? own : gmode[g];
                }
            }
            cb->flags |= (uint16_t)kiln__fill_lane(md, l, mode, ab, &lane_abs);
            /* A lane that drives no bone may take the absolute fast path when its result is
             * dropped: always with a scatter; with the identity map only past the skeleton's
             * bones and past the clip's slots (whose constants are the identity). */
            int dropped = bone == KILN_BLOB_NONE && (!identity || (j >= sk->bone_count && j >= a->joint_count));
            if (!lane_abs && !dropped) block_abs = 0;
        }
        if (block_abs) cb->flags |= KILN__BLK_ABSOLUTE;
    }
    *out = b;
    return KILN_OK;
}
