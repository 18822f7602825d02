/* Typed views of Skeleton, Bone, IKHandle and Constraint nodes (Cast reference B, C.1, E). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cast_scene_util.h"

/* The cycle check stores its walk state in the parent array as values up to 2 * bone_count,
 * which must fit an int32. */
#define KILN__MAX_BONES 0x3FFFFFFFu
/* Bones <= this many get their scratch on the stack in kiln_cast_get_skeleton. */
#define KILN__STACK_BONES 1024u
/* Individual reports of repaired parent indices per call; the rest are summed up. */
#define KILN__PARENT_REPORTS 16u

uint32_t kiln_cast_skeleton_bone(const kiln_cast_doc *doc, uint32_t skeleton, uint32_t k)
{
    const kiln_cast_node *s = doc ? kiln_cast_node_at(doc, skeleton) : NULL;
    if (!s || s->id != KILN_CAST_ID_SKELETON) return KILN_CAST_NONE;
    return kiln_cast_child(doc, skeleton, KILN_CAST_ID_BONE, k);
}

/* `p` is a u32 on disk read as int32 (0xFFFFFFFF = -1); a long is read as int64; the narrow
 * unsigned types cannot be negative. Any negative value means "root". */
static int32_t kiln__bone_parent(const kiln__rd *rd)
{
    const kiln_cast_prop *p;
    kiln__value(rd, "p", KILN__T_INT, KILN__OPTIONAL, &p);
    if (!p) return -1;
    uint64_t v = kiln_cast_prop_u64(p, 0);
    int negative = (p->type == KILN_CAST_TYPE_INT && v >= 0x80000000u) ||
                   (p->type == KILN_CAST_TYPE_LONG && v >= 0x8000000000000000u);
    if (negative) return -1;
    return v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

/* Raw parents of every bone, with out-of-range and self parents made roots. */
static void kiln__gather_parents(const kiln__rd *skel, uint32_t count, int32_t *parents)
{
    uint32_t k = 0, repaired = 0;
    kiln__rd rd = *skel;
    for (uint32_t c = skel->n->first_child; c != KILN_CAST_NONE; c = rd.n->next_sibling) {
        rd.node = c;
        rd.n = kiln_cast_node_at(skel->doc, c);
        if (rd.n->id != KILN_CAST_ID_BONE) continue;
        int32_t p = kiln__bone_parent(&rd);
        if (p >= 0 && ((uint32_t)p >= count || (uint32_t)p == k)) {
            if (repaired++ < KILN__PARENT_REPORTS) {
                kiln__report(&rd, "p", kiln_cast_find_prop(rd.doc, c, "p", NULL), KILN_ERR_CAST_INDEX_RANGE,
                             KILN_SEVERITY_WARNING, "parent %d of bone %u %s; the bone becomes a root", p, k,
                             (uint32_t)p == k ? "is the bone itself" : "is past the bone count");
            }
            p = -1;
        }
        parents[k++] = p;
    }
    if (repaired > KILN__PARENT_REPORTS) {
        kiln__report(skel, NULL, NULL, KILN_ERR_CAST_INDEX_RANGE, KILN_SEVERITY_WARNING,
                     "%u more bones with a parent index out of range became roots", repaired - KILN__PARENT_REPORTS);
    }
}

/* Walk state encoded in the parent array itself, so the check needs no memory: an unvisited
 * entry holds its parent p in [-1, n), an entry on the current walk n + 1 + p in [n, 2n], a
 * finished entry -(p + 3) in [-(n + 2), -2]. Every entry is marked once and finished once:
 * O(n) whatever the shape (1M-bone chains included). */
static int32_t kiln__walk_decode(int32_t x, int32_t n)
{
    return x >= n ? x - n - 1 : x <= -2 ? -x - 3 : x;
}

/* Returns a bone on a cycle, or KILN_CAST_NONE. parents[] is unchanged on return. */
static uint32_t kiln__find_cycle(int32_t *parents, uint32_t count)
{
    int32_t n = (int32_t)count;
    uint32_t cycle = KILN_CAST_NONE;
    for (int32_t i = 0; i < n && cycle == KILN_CAST_NONE; i++) {
        int32_t b = i;
        while (b >= 0 && parents[b] >= -1 && parents[b] < n) {
            int32_t p = parents[b];
            parents[b] = n + 1 + p;
            b = p;
        }
        if (b >= 0 && parents[b] >= n) cycle = (uint32_t)b; /* reached this very walk again */
        for (int32_t c = i; c >= 0 && parents[c] >= n;) {
            int32_t p = parents[c] - n - 1;
            parents[c] = -(p + 3);
            c = p;
        }
    }
    for (int32_t i = 0; i < n; i++) parents[i] = kiln__walk_decode(parents[i], n);
    return cycle;
}

static void kiln__report_cycle(const kiln__rd *skel, const int32_t *parents, uint32_t bone)
{
    char chain[96];
    size_t len = 0;
    uint32_t b = bone;
    for (int steps = 0; steps < 8 && len < sizeof chain; steps++) {
        int w = snprintf(chain + len, sizeof chain - len, "%s%u", steps ? " -> " : "", b);
        if (w < 0) break;
        len += (size_t)w;
        b = (uint32_t)parents[b];
        if (b == bone) {
            snprintf(chain + len, sizeof chain - len, " -> %u", bone);
            break;
        }
    }
    kiln__rd rd = *skel;
    rd.node = kiln_cast_child(skel->doc, skel->node, KILN_CAST_ID_BONE, bone);
    rd.n = kiln_cast_node_at(skel->doc, rd.node);
    kiln__report(&rd, "p", kiln_cast_find_prop(rd.doc, rd.node, "p", NULL), KILN_ERR_CAST_BONE_CYCLE,
                 KILN_SEVERITY_ERROR, "bone %u is its own ancestor (%s%s); the skeleton is rejected", bone, chain,
                 b == bone ? "" : " ...");
}

kiln_result kiln_cast_skeleton_parents(const kiln_cast_doc *doc, uint32_t skeleton, int32_t *parents, uint32_t cap,
                                       const kiln_diag_sink *sink)
{
    const kiln_cast_node *s = doc ? kiln_cast_node_at(doc, skeleton) : NULL;
    if (!s || s->id != KILN_CAST_ID_SKELETON || (!parents && cap)) return KILN_ERR_INVALID_ARGUMENT;
    kiln__rd rd = {doc, s, skeleton, sink};
    uint32_t count = kiln_cast_child_count(doc, skeleton, KILN_CAST_ID_BONE);
    if (count > cap) return KILN_ERR_BUFFER_TOO_SMALL;
    if (count > KILN__MAX_BONES) {
        kiln__report(&rd, NULL, NULL, KILN_ERR_LIMIT, KILN_SEVERITY_ERROR, "%u bones; at most %u are supported", count,
                     KILN__MAX_BONES);
        return KILN_ERR_LIMIT;
    }
    kiln__gather_parents(&rd, count, parents);
    uint32_t cycle = kiln__find_cycle(parents, count);
    if (cycle == KILN_CAST_NONE) return KILN_OK;
    kiln__report_cycle(&rd, parents, cycle);
    return KILN_ERR_CAST_BONE_CYCLE;
}

/* Depth of every bone, memoised in depth[] (zeroed by the caller): each bone is walked over
 * twice at most, once to count the steps up to a known depth and once to fill them in. */
static uint32_t kiln__max_depth(const int32_t *parents, int32_t *depth, uint32_t count)
{
    uint32_t deepest = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (depth[i]) continue;
        int32_t b = (int32_t)i, steps = 0;
        while (b >= 0 && depth[b] == 0) {
            steps++;
            b = parents[b];
        }
        int32_t level = (b >= 0 ? depth[b] : 0) + steps;
        if ((uint32_t)level > deepest) deepest = (uint32_t)level;
        for (b = (int32_t)i; b >= 0 && depth[b] == 0; b = parents[b]) depth[b] = level--;
    }
    return deepest;
}

static kiln_result kiln__skeleton_shape(const kiln__rd *rd, kiln_cast_skeleton *s)
{
    int32_t local[2 * KILN__STACK_BONES];
    int32_t *buf = local;
    if (s->bone_count > KILN__MAX_BONES) {
        kiln__report(rd, NULL, NULL, KILN_ERR_LIMIT, KILN_SEVERITY_ERROR, "%u bones; at most %u are supported",
                     s->bone_count, KILN__MAX_BONES);
        return KILN_ERR_LIMIT;
    }
    if (s->bone_count > KILN__STACK_BONES) buf = malloc(2 * (size_t)s->bone_count * sizeof *buf);
    if (!buf) {
        kiln__report(rd, NULL, NULL, KILN_ERR_OUT_OF_MEMORY, KILN_SEVERITY_ERROR,
                     "scratch for the depth of %u bones", s->bone_count);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    kiln_result r = kiln_cast_skeleton_parents(rd->doc, rd->node, buf, s->bone_count, rd->sink);
    if (r == KILN_OK) {
        int32_t *depth = buf + s->bone_count;
        memset(depth, 0, s->bone_count * sizeof *depth);
        for (uint32_t i = 0; i < s->bone_count; i++) s->root_count += buf[i] < 0;
        s->depth = kiln__max_depth(buf, depth, s->bone_count);
    }
    if (buf != local) free(buf);
    return r;
}

static kiln_result kiln__read_skeleton(const kiln__rd *rd, kiln_cast_skeleton *s)
{
    static const uint32_t kinds[] = {KILN_CAST_ID_BONE, KILN_CAST_ID_IKHANDLE, KILN_CAST_ID_CONSTRAINT};
    uint32_t counts[3];
    kiln__count_kinds(rd->doc, rd->node, kinds, counts, 3);
    s->bone_count = counts[0];
    s->ik_count = counts[1];
    s->constraint_count = counts[2];
    return s->bone_count ? kiln__skeleton_shape(rd, s) : KILN_OK;
}

kiln_result kiln_cast_get_skeleton(const kiln_cast_doc *doc, uint32_t node, kiln_cast_skeleton *out,
                                   const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_SKELETON, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_skeleton(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}

static kiln_result kiln__read_bone(const kiln__rd *rd, kiln_cast_bone *b)
{
    static const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    b->index = rd->n->ordinal;
    kiln__str(rd, "n", KILN__OPTIONAL, &b->name);
    if (!b->name) {
        kiln__report(rd, "n", NULL, KILN_ERR_CAST_MISSING_PROPERTY, KILN_SEVERITY_WARNING,
                     "bone %u has no name; it is called bone%u", b->index, b->index);
    }
    b->parent = kiln__bone_parent(rd);
    b->segment_scale_compensate = kiln__flag(rd, "ssc", 1);
    b->has_local_position = (uint32_t)kiln__vec(rd, "lp", KILN__TV3, 3, zero, b->local_position);
    b->has_local_rotation = (uint32_t)kiln__quat(rd, "lr", b->local_rotation);
    b->has_world_position = (uint32_t)kiln__vec(rd, "wp", KILN__TV3, 3, zero, b->world_position);
    b->has_world_rotation = (uint32_t)kiln__quat(rd, "wr", b->world_rotation);
    b->has_scale = (uint32_t)kiln__vec(rd, "s", KILN__TV3, 3, one, b->scale);
    return KILN_OK;
}

kiln_result kiln_cast_get_bone(const kiln_cast_doc *doc, uint32_t node, kiln_cast_bone *out,
                               const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_BONE, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_bone(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}

/* IK and constraint bone references: a Bone among the owning Skeleton's children, given as
 * its bone index (-1 when absent or unresolved). */
static kiln_result kiln__bone_ref(const kiln__rd *rd, const char *name, kiln__need need, int32_t *bone)
{
    uint64_t hash;
    uint32_t node;
    kiln_result r = kiln__ref(rd, name, need, rd->n->parent, KILN_CAST_ID_BONE, 0, &hash, &node);
    *bone = node == KILN_CAST_NONE ? -1 : (int32_t)kiln_cast_node_at(rd->doc, node)->ordinal;
    return r;
}

static kiln_result kiln__read_ik_handle(const kiln__rd *rd, kiln_cast_ik_handle *ik)
{
    static const float zero[3] = {0, 0, 0};
    kiln_result r = kiln__bone_ref(rd, "sb", KILN__REQUIRED, &ik->start_bone);
    r = kiln__first(r, kiln__bone_ref(rd, "eb", KILN__REQUIRED, &ik->end_bone));
    if (r != KILN_OK) return r;
    kiln__str(rd, "n", KILN__OPTIONAL, &ik->name);
    kiln__bone_ref(rd, "tb", KILN__OPTIONAL, &ik->target_bone);
    kiln__bone_ref(rd, "pv", KILN__OPTIONAL, &ik->pole_vector_bone);
    kiln__bone_ref(rd, "pb", KILN__OPTIONAL, &ik->pole_bone);
    kiln__vec(rd, "to", KILN__TV3, 3, zero, ik->target_offset);
    ik->use_target_rotation = kiln__flag(rd, "tr", 0);
    return KILN_OK;
}

kiln_result kiln_cast_get_ik_handle(const kiln_cast_doc *doc, uint32_t node, kiln_cast_ik_handle *out,
                                    const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_IKHANDLE, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_ik_handle(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}

static const char *const kiln__constraint_names[] = {"pt", "or", "sc"};

/* co: a quaternion for orient, a vector for point (default 0) and scale (default 1). */
static void kiln__constraint_offset(const kiln__rd *rd, kiln_cast_constraint *c)
{
    static const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    if (c->type == KILN_CAST_CONSTRAINT_ORIENT) {
        c->has_custom_offset = (uint32_t)kiln__quat(rd, "co", c->custom_offset);
    } else {
        const float *def = c->type == KILN_CAST_CONSTRAINT_SCALE ? one : zero;
        c->has_custom_offset = (uint32_t)kiln__vec(rd, "co", KILN__TV3, 3, def, c->custom_offset);
    }
}

static float kiln__constraint_weight(const kiln__rd *rd)
{
    float w = kiln__float(rd, "wt", 1.0f);
    if (w >= 0.0f && w <= 1.0f) return w;
    float clamped = w < 0.0f ? 0.0f : 1.0f;
    kiln__report(rd, "wt", kiln_cast_find_prop(rd->doc, rd->node, "wt", NULL), KILN_ERR_CAST_BAD_VALUE,
                 KILN_SEVERITY_WARNING, "weight %g is outside [0, 1]; %g used", (double)w, (double)clamped);
    return clamped;
}

static kiln_result kiln__read_constraint(const kiln__rd *rd, kiln_cast_constraint *c)
{
    int type = 0;
    kiln_result r = kiln__enum(rd, "ct", kiln__constraint_names, 3, KILN__REQUIRED, -1, &type);
    r = kiln__first(r, kiln__bone_ref(rd, "cb", KILN__REQUIRED, &c->constrained_bone));
    r = kiln__first(r, kiln__bone_ref(rd, "tb", KILN__REQUIRED, &c->target_bone));
    if (r != KILN_OK) return r;
    if (c->constrained_bone == c->target_bone) {
        kiln__report(rd, "tb", kiln_cast_find_prop(rd->doc, rd->node, "tb", NULL), KILN_ERR_CAST_BAD_VALUE,
                     KILN_SEVERITY_ERROR, "bone %d is constrained to itself; the constraint is dropped",
                     c->target_bone);
        return KILN_ERR_CAST_BAD_VALUE;
    }
    c->type = (kiln_cast_constraint_type)type;
    kiln__str(rd, "n", KILN__OPTIONAL, &c->name);
    c->maintain_offset = kiln__flag(rd, "mo", 0);
    kiln__constraint_offset(rd, c);
    c->weight = kiln__constraint_weight(rd);
    c->skip[0] = kiln__flag(rd, "sx", 0);
    c->skip[1] = kiln__flag(rd, "sy", 0);
    c->skip[2] = kiln__flag(rd, "sz", 0);
    return KILN_OK;
}

kiln_result kiln_cast_get_constraint(const kiln_cast_doc *doc, uint32_t node, kiln_cast_constraint *out,
                                     const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_CONSTRAINT, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_constraint(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}

const char *kiln_cast_constraint_type_name(kiln_cast_constraint_type t)
{
    return (unsigned)t < 3 ? kiln__constraint_names[t] : "?";
}
