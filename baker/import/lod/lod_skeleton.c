/* SKL1: the skeleton (B.5). Bones keep SKL1 file order; every bone reference in the file is a
 * BoneID, mapped here to the file index. Rest transforms come later from the first clip (C.1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lod_internal.h"

typedef struct kiln__lod_named {
    const char *name;
    uint32_t    index;
} kiln__lod_named;

static int kiln__lod_cmp_named(const void *a, const void *b)
{
    const kiln__lod_named *x = a, *y = b;
    int d = strcmp(x->name, y->name);
    if (d) return d;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* First pass over the bones, in file order and without allocating: ids, parents and name
 * lengths (R7, R8, R13, R14). Only once it passes are arrays sized by BonesCnt allocated, since
 * the bones it walked prove the count is backed by bytes. */
/* Bone i's path in err (failures only: the first pass formats nothing while all is well). */
static kiln_result kiln__lod_bone_fail(kiln__lod *c, const kiln__lod_chunk *ch, uint32_t i, kiln_result r)
{
    if (c->err && r != KILN_ERR_OUT_OF_MEMORY) snprintf(c->err->path, sizeof c->err->path, "%s/bone[%u]", ch->path, i);
    return r;
}

/* First pass over the bones, in file order and without allocating: ids, parents and name
 * lengths (R7, R8, R13, R14). Only once it passes are arrays sized by BonesCnt allocated, since
 * the bones it walked prove the count is backed by bytes. */
static kiln_result kiln__lod_check_bones(kiln__lod *c, const kiln__lod_chunk *ch, kiln__lod_rd rd, uint32_t n)
{
    uint8_t seen[KILN__LOD_MAX_BONES / 8];
    memset(seen, 0, sizeof seen);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t start = rd.pos, at;
        int16_t id, parent;
        uint32_t len;
        kiln_result r = kiln__lod_i16(c, &rd, "BoneID", &id);
        if (r == KILN_OK) r = kiln__lod_i16(c, &rd, "BoneParentID", &parent);
        if (r != KILN_OK) return kiln__lod_bone_fail(c, ch, i, r);
        if (id < 0 || (uint32_t)id >= n)
            return kiln__lod_bone_fail(c, ch, i,
                                       kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_VALUE, "R13", ch->path, start,
                                                      "BoneID %d is outside 0..%u (BonesCnt - 1)", id, n ? n - 1 : 0));
        if (seen[id >> 3] & (1u << (id & 7)))
            return kiln__lod_bone_fail(c, ch, i,
                                       kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_VALUE, "R13", ch->path, start,
                                                      "BoneID %d is used twice (bone %u repeats an earlier one)", id, i));
        if (parent < -1 || (parent >= 0 && ((uint32_t)parent >= n || !(seen[parent >> 3] & (1u << (parent & 7))))))
            return kiln__lod_bone_fail(
                c, ch, i,
                kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_REFERENCE, "R14", ch->path, start + 2,
                               "BoneParentID %d of bone %d is not -1 nor the BoneID of a bone read earlier", parent, id));
        r = kiln__lod_count(c, &rd, "BoneNameLength", &len);
        if (r == KILN_OK) r = kiln__lod_span(c, &rd, "BoneName", len, 1, &at);
        if (r != KILN_OK) return kiln__lod_bone_fail(c, ch, i, r);
        seen[id >> 3] |= (uint8_t)(1u << (id & 7));
    }
    return KILN_OK;
}

kiln_result kiln__lod_read_skl1(kiln__lod *c, const kiln__lod_chunk *ch)
{
    kiln__lod_rd rd;
    kiln__lod_rd_init(&rd, c, ch->data, ch->end, ch->path);
    uint8_t type;
    kiln_result r = kiln__lod_u8(c, &rd, "SkelType", &type);
    if (r != KILN_OK) return r;
    if (type != 1)
        return kiln__lod_fail(c, KILN_ERR_IMPORT_UNSUPPORTED, "R12", ch->path, ch->data,
                              "SkelType %u is not 1", type);
    uint32_t n = (uint32_t)ch->count;
    if (n > KILN__LOD_MAX_BONES)
        return kiln__lod_fail(c, KILN_ERR_IMPORT_UNSUPPORTED, "R12", ch->path, ch->off + 8,
                              "BonesCnt %u is more than %u", n, KILN__LOD_MAX_BONES);
    r = kiln__lod_check_bones(c, ch, rd, n);
    if (r != KILN_OK) return r;
    kiln_source_skeleton *skel = kiln_source_alloc(c->scene, 1, sizeof *skel);
    uint32_t *id_to_index = kiln_source_alloc(c->scene, n, sizeof *id_to_index);
    uint32_t *index_to_id = kiln_source_alloc(c->scene, n, sizeof *index_to_id);
    uint8_t *dup = kiln_source_alloc(c->scene, n, 1);
    kiln__lod_named *named = kiln_source_alloc(c->scene, n, sizeof *named);
    if (!skel || (n && (!id_to_index || !index_to_id || !dup || !named))) return kiln__lod_oom(c, ch->path, ch->data);
    skel->bones = kiln_source_alloc(c->scene, n, sizeof *skel->bones);
    if (n && !skel->bones) return kiln__lod_oom(c, ch->path, ch->data);
    skel->loc.path = ch->path;
    skel->loc.offset = ch->off;
    skel->loc.size = (uint64_t)ch->size + 12;
    for (uint32_t i = 0; i < n; i++) id_to_index[i] = KILN_SOURCE_NONE;

    for (uint32_t i = 0; i < n; i++) {
        uint64_t start = rd.pos;
        const char *path = kiln__lod_path(c, ch->path, "bone", i);
        if (!path) return kiln__lod_oom(c, ch->path, start);
        rd.path = path;
        int16_t id, parent;
        const char *name;
        r = kiln__lod_i16(c, &rd, "BoneID", &id);
        if (r == KILN_OK) r = kiln__lod_i16(c, &rd, "BoneParentID", &parent);
        if (r != KILN_OK) return r;
        if (id < 0 || (uint32_t)id >= n)
            return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_VALUE, "R13", path, start,
                                  "BoneID %d is outside 0..%u (BonesCnt - 1)", id, n ? n - 1 : 0);
        if (id_to_index[id] != KILN_SOURCE_NONE)
            return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_VALUE, "R13", path, start,
                                  "BoneID %d is used twice (bones %u and %u)", id, id_to_index[id], i);
        if (parent < -1 || (parent >= 0 && ((uint32_t)parent >= n || id_to_index[parent] == KILN_SOURCE_NONE)))
            return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_REFERENCE, "R14", path, start + 2,
                                  "BoneParentID %d of bone %d is not -1 nor the BoneID of a bone read earlier", parent,
                                  id);
        r = kiln__lod_lstr(c, &rd, "BoneName", &name);
        if (r != KILN_OK) return r;
        id_to_index[id] = i;
        index_to_id[i] = (uint32_t)id;
        kiln_source_bone *b = &skel->bones[i];
        b->loc.path = path;
        b->loc.offset = start;
        b->loc.size = rd.pos - start;
        b->name = name;
        b->parent = parent < 0 ? -1 : (int32_t)id_to_index[parent];
        b->has_local_position = b->has_local_rotation = 1;
        b->local_rotation[3] = 1.0f;
        b->scale[0] = b->scale[1] = b->scale[2] = 1.0f;
        named[i].name = name;
        named[i].index = i;
    }
    skel->bone_count = n;
    if (kiln__lod_left(&rd))
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W3", ch->path, rd.pos, "%llu unread byte(s) at the end of SKL1",
                       (unsigned long long)kiln__lod_left(&rd));

    /* Duplicate names (W12): sorted by name, then file index, so the first of each run wins. */
    if (n > 1) qsort(named, n, sizeof *named, kiln__lod_cmp_named);
    for (uint32_t i = 1; i < n; i++) {
        if (strcmp(named[i].name, named[i - 1].name) != 0) continue;
        dup[named[i].index] = 1;
        const kiln_source_bone *b = &skel->bones[named[i].index];
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W12", b->loc.path, b->loc.offset,
                       "bone name '%s' is used more than once: animation binds to the first", b->name);
    }
    c->has_skeleton = 1;
    c->bones_cnt = n;
    c->id_to_index = id_to_index;
    c->index_to_id = index_to_id;
    c->bone_name_dup = dup;
    c->skeleton = skel;
    return KILN_OK;
}
