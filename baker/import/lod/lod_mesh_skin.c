/* MSH1 part 3: rigid (PntBnAssoc) and weighted (5- or 6-byte records) skinning (B.6, C.5). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lod_internal.h"

#define KILN__LOD_KEEP 8u /* influences kept per vertex (C.5) */

typedef struct kiln__lod_infl {
    uint32_t id;     /* BoneID */
    double   weight;
} kiln__lod_infl;

static int kiln__lod_by_id(const void *a, const void *b)
{
    const kiln__lod_infl *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int kiln__lod_by_weight(const void *a, const void *b)
{
    const kiln__lod_infl *x = a, *y = b;
    if (x->weight != y->weight) return x->weight > y->weight ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The influences of one vertex from its `n` records at `off`: duplicates add up, sums <= 0
 * are dropped, a remaining total <= 1e-6 leaves the vertex unweighted, the rest is sorted
 * heaviest first (ties: lower BoneID) and normalised over the kept ones. */
static void kiln__lod_vertex_weights(kiln__lod *c, uint64_t off, uint32_t n, uint32_t rec, uint32_t id_mask,
                                     kiln__lod_infl *tmp, kiln__lod_skin *skin, uint32_t v)
{
    for (uint32_t k = 0; k < n; k++) {
        uint64_t r = off + (uint64_t)k * rec;
        tmp[k].id = (rec == 5 ? c->data[r] : kiln__lod_ld_u16(c, r)) & id_mask;
        tmp[k].weight = kiln__lod_ld_f32(c, r + rec - 4);
    }
    qsort(tmp, n, sizeof *tmp, kiln__lod_by_id);
    uint32_t m = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (m && tmp[m - 1].id == tmp[k].id) tmp[m - 1].weight += tmp[k].weight;
        else tmp[m++] = tmp[k];
    }
    uint32_t kept = 0;
    double total = 0.0;
    for (uint32_t k = 0; k < m; k++) {
        if (!(tmp[k].weight > 0.0)) continue;
        total += tmp[k].weight;
        tmp[kept++] = tmp[k];
    }
    if (total <= 1e-6) kept = 0;
    qsort(tmp, kept, sizeof *tmp, kiln__lod_by_weight);
    if (kept > KILN__LOD_KEEP) kept = KILN__LOD_KEEP;
    double sum = 0.0;
    for (uint32_t k = 0; k < kept; k++) sum += tmp[k].weight;
    skin->count[v] = (uint8_t)kept;
    if (!kept) skin->unweighted = 1;
    for (uint32_t k = 0; k < kept; k++) {
        skin->bones[(uint64_t)v * KILN__LOD_KEEP + k] = c->id_to_index[tmp[k].id];
        skin->weights[(uint64_t)v * KILN__LOD_KEEP + k] = (float)(tmp[k].weight / sum);
    }
}

static kiln_result kiln__lod_alloc_skin(kiln__lod *c, const kiln__lod_rd *rd, uint32_t n, kiln__lod_skin *skin)
{
    skin->vertex_count = n;
    skin->count = kiln_source_alloc(c->scene, n, 1);
    skin->bones = kiln_source_alloc(c->scene, (uint64_t)n * KILN__LOD_KEEP, sizeof *skin->bones);
    skin->weights = kiln_source_alloc(c->scene, (uint64_t)n * KILN__LOD_KEEP, sizeof *skin->weights);
    if (n && (!skin->count || !skin->bones || !skin->weights)) return kiln__lod_oom(c, rd->path, rd->pos);
    return KILN_OK;
}

kiln_result kiln__lod_read_skin(kiln__lod *c, kiln__lod_rd *rd, uint32_t n, kiln__lod_skin *skin)
{
    memset(skin, 0, sizeof *skin);
    uint32_t bones = c->has_skeleton ? c->bones_cnt : 0;
    uint64_t at = rd->pos;
    uint32_t assoc_cnt;
    kiln_result r = kiln__lod_count(c, rd, "PntBnAssocCnt", &assoc_cnt);
    if (r != KILN_OK) return r;
    if (assoc_cnt != 0 && assoc_cnt != n)
        return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_VALUE, "R15", rd->path, at,
                              "PntBnAssocCnt %u is neither 0 nor the vertex count %u", assoc_cnt, n);
    uint32_t aw = bones < 255 ? 1 : 2;
    uint64_t assoc;
    r = kiln__lod_span(c, rd, "PntBnAssoc", assoc_cnt, aw, &assoc);
    if (r != KILN_OK) return r;
    if (c->has_skeleton)
        for (uint32_t v = 0; v < assoc_cnt; v++) {
            uint32_t id = kiln__lod_ld_index(c, assoc + (uint64_t)v * aw, aw);
            if (id >= bones)
                return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_VALUE, "R15", rd->path, assoc + (uint64_t)v * aw,
                                      "PntBnAssoc entry %u names BoneID %u, but the skeleton has %u bones", v, id,
                                      bones);
        }
    at = rd->pos;
    int32_t wtype;
    r = kiln__lod_i32(c, rd, "PntBnWeightType", &wtype);
    if (r != KILN_OK) return r;
    if (wtype != 0 && wtype != 1)
        return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_VALUE, "R15", rd->path, at, "PntBnWeightType %d is not 0 or 1",
                              wtype);
    uint32_t per_vertex = 0, rec_count = 0, rec = bones <= 127 ? 5 : 6;
    uint64_t recs = 0;
    if (wtype == 1) {
        if (assoc_cnt)
            return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_VALUE, "R15", rd->path, at,
                                  "the mesh has both rigid (PntBnAssoc) and weighted skin data");
        at = rd->pos;
        int32_t b;
        r = kiln__lod_i32(c, rd, "BonesPerVertix", &b);
        if (r != KILN_OK) return r;
        if (b < 1)
            return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_VALUE, "R15", rd->path, at, "BonesPerVertix %d is below 1", b);
        per_vertex = (uint32_t)b;
        r = kiln__lod_count(c, rd, "BonesWeigthArLen", &rec_count);
        if (r == KILN_OK) r = kiln__lod_span(c, rd, "BonesWeigthArray", rec_count, rec, &recs);
        if (r != KILN_OK) return r;
    }

    /* Decode the record stream (B.6): a record goes to the current vertex; the end bit or a
     * full vertex moves to the next one. */
    uint32_t *first = NULL, *cnt = NULL;
    uint32_t id_mask = rec == 5 ? 0x7Fu : 0x7FFFu, end_bit = rec == 5 ? 0x80u : 0x8000u;
    uint32_t v = 0, slot = 0, most = 0;
    if (rec_count) {
        first = kiln_source_alloc(c->scene, n, sizeof *first);
        cnt = kiln_source_alloc(c->scene, n, sizeof *cnt);
        if (n && (!first || !cnt)) return kiln__lod_oom(c, rd->path, recs);
    }
    for (uint32_t k = 0; k < rec_count; k++) {
        uint64_t o = recs + (uint64_t)k * rec;
        uint32_t raw = rec == 5 ? c->data[o] : kiln__lod_ld_u16(c, o);
        float w = kiln__lod_ld_f32(c, o + rec - 4);
        if (v >= n)
            return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_VALUE, "R15", rd->path, o,
                                  "weight record %u belongs to vertex %u, but the mesh has %u vertices", k, v, n);
        if (!isfinite(w))
            return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_VALUE, "R9", rd->path, o + rec - 4,
                                  "weight of record %u is not finite (%g)", k, (double)w);
        if (c->has_skeleton && (raw & id_mask) >= bones)
            return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_VALUE, "R15", rd->path, o,
                                  "weight record %u names BoneID %u, but the skeleton has %u bones", k, raw & id_mask,
                                  bones);
        if (slot == 0) first[v] = k;
        cnt[v]++;
        slot++;
        if (cnt[v] > most) most = cnt[v];
        if ((raw & end_bit) || slot == per_vertex) {
            v++;
            slot = 0;
        }
    }
    uint32_t covered = v + (slot ? 1u : 0u);
    if (wtype == 1 && covered < n)
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W10", rd->path, recs,
                       "the weight records cover %u of %u vertices: the others are unweighted", covered, n);
    if (!assoc_cnt && wtype == 0) return KILN_OK;
    if (!c->has_skeleton) {
        kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W4", rd->path, assoc_cnt ? assoc : recs,
                       "skin data without a skeleton: the skin is dropped");
        return KILN_OK;
    }
    r = kiln__lod_alloc_skin(c, rd, n, skin);
    if (r != KILN_OK) return r;
    if (assoc_cnt) {
        for (uint32_t i = 0; i < n; i++) {
            skin->count[i] = 1;
            skin->bones[(uint64_t)i * KILN__LOD_KEEP] = c->id_to_index[kiln__lod_ld_index(c, assoc + (uint64_t)i * aw, aw)];
            skin->weights[(uint64_t)i * KILN__LOD_KEEP] = 1.0f;
        }
        return KILN_OK;
    }
    kiln__lod_infl *tmp = kiln_source_alloc(c->scene, most, sizeof *tmp);
    if (most && !tmp) return kiln__lod_oom(c, rd->path, recs);
    for (uint32_t i = 0; i < n; i++) {
        if (i < covered && cnt[i])
            kiln__lod_vertex_weights(c, recs + (uint64_t)first[i] * rec, cnt[i], rec, id_mask, tmp, skin, i);
        else
            skin->unweighted = 1;
    }
    return KILN_OK;
}
