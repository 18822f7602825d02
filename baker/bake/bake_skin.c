/* Skin weights (Cast reference C.3): gather, validate, merge, prune, normalise. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bake_geom.h"
#include "ds.h"

typedef struct influence {
    uint32_t bone;   /* skeleton sorted order */
    uint32_t slot;   /* position among the vertex's mi slots: fixes the order of equal keys */
    double   weight; /* double so merged and summed weights neither overflow nor depend on order */
} influence;

typedef int (*influence_cmp)(const influence *, const influence *);

static int by_bone_then_slot(const influence *a, const influence *b)
{
    if (a->bone != b->bone) return a->bone < b->bone ? -1 : 1;
    return a->slot < b->slot ? -1 : a->slot > b->slot;
}

static int by_weight_desc_then_bone(const influence *a, const influence *b)
{
    if (a->weight != b->weight) return a->weight > b->weight ? -1 : 1;
    return a->bone < b->bone ? -1 : a->bone > b->bone;
}

static int cmp_bone_slot(const void *a, const void *b) { return by_bone_then_slot(a, b); }
static int cmp_weight_bone(const void *a, const void *b) { return by_weight_desc_then_bone(a, b); }

/* Both orders are total (no two influences compare equal), so any correct sort gives the same
 * result: insertion sort for the usual handful of slots, qsort for pathological mi. */
static void sort_influences(influence *v, uint32_t n, influence_cmp cmp)
{
    if (n > 32) {
        qsort(v, n, sizeof *v, cmp == by_bone_then_slot ? cmp_bone_slot : cmp_weight_bone);
        return;
    }
    for (uint32_t i = 1; i < n; i++) {
        influence x = v[i];
        uint32_t j = i;
        for (; j > 0 && cmp(&x, &v[j - 1]) < 0; j--) v[j] = v[j - 1];
        v[j] = x;
    }
}

/* Scratch for one vertex's mi slots, allocated once per mesh. */
typedef struct skin_scratch {
    uint32_t  *bones;
    float     *weights;
    influence *inf;
} skin_scratch;

/* Collects the usable slots of vertex v into s->inf (bones remapped to sorted order) and
 * returns how many there are. */
static uint32_t gather(const kiln_source_mesh *m, const kiln__skeleton *skel, uint32_t v, skin_scratch *s,
                       kiln__skin_counts *counts)
{
    uint32_t mi = m->max_influence;
    uint32_t first = v * mi;
    memcpy(s->bones, m->weight_bones + first, (size_t)mi * sizeof *s->bones);
    /* mi == 1 is rigid: weight 1.0 whatever the weights say (reference C.3, as Blender does). */
    if (mi > 1) memcpy(s->weights, m->weight_values + first, (size_t)mi * sizeof *s->weights);
    else s->weights[0] = 1.0f;

    uint32_t n = 0;
    for (uint32_t j = 0; j < mi; j++) {
        float w = s->weights[j];
        if (w == 0.0f) continue; /* padding slots (bone 0, weight 0) are the exporters' norm */
        if (!isfinite(w) || w < 0.0f) { counts->bad_weight++; continue; }
        if (s->bones[j] >= skel->bone_count) { counts->bad_bone++; continue; }
        s->inf[n].bone = skel->sorted_index[s->bones[j]];
        s->inf[n].slot = j;
        s->inf[n].weight = w;
        n++;
    }
    return n;
}

/* Merges duplicate bones (weights add) in a list sorted by bone; returns the new length. */
static uint32_t merge_duplicates(influence *v, uint32_t n)
{
    uint32_t out = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (out && v[out - 1].bone == v[i].bone) v[out - 1].weight += v[i].weight;
        else v[out++] = v[i];
    }
    return out;
}

/* Reduces vertex v to at most k influences, writes them heaviest first into joints/weights
 * (k slots; unused ones stay 0) and returns how many were written. */
static uint32_t bake_vertex(const kiln_source_mesh *m, const kiln__skeleton *skel, uint32_t v, uint32_t k,
                            skin_scratch *s, uint16_t *joints, float *weights, kiln__skin_counts *counts)
{
    uint32_t n = gather(m, skel, v, s, counts);
    sort_influences(s->inf, n, by_bone_then_slot);
    n = merge_duplicates(s->inf, n);
    sort_influences(s->inf, n, by_weight_desc_then_bone);
    uint32_t kept = n < k ? n : k;
    counts->pruned += n - kept;

    double sum = 0.0;
    for (uint32_t i = 0; i < kept; i++) sum += s->inf[i].weight;
    if (!(sum > 1e-6)) {
        counts->pruned += kept; /* too light to normalise: the vertex follows the model only */
        return 0;
    }
    for (uint32_t i = 0; i < kept; i++) {
        joints[i] = (uint16_t)s->inf[i].bone;
        weights[i] = (float)(s->inf[i].weight / sum);
    }
    return kept;
}

static uint32_t joint_stride(uint32_t k)
{
    return (2 * k + 3) & ~3u;
}

/* Narrows streams written with k slots per vertex to `used` slots, in place (forward copy:
 * the destination never passes the source). */
static void narrow(const kiln_allocator *a, kiln__stream *joints, kiln__stream *weights, uint32_t k, uint32_t used)
{
    uint32_t n = joints->desc.count;
    uint32_t js_old = joint_stride(k), js_new = joint_stride(used);
    uint8_t *jb = joints->data;
    float *wb = weights->data;
    for (uint32_t v = 0; v < n; v++) {
        memmove(jb + (size_t)v * js_new, jb + (size_t)v * js_old, js_new);
        memmove(wb + (size_t)v * used, wb + (size_t)v * k, used * sizeof(float));
    }
    joints->desc.components = weights->desc.components = used;
    joints->desc.stride = js_new;
    weights->desc.stride = used * (uint32_t)sizeof(float);
    /* Shrinking is only an economy: when the allocator refuses, the larger block still works. */
    void *p = kiln__realloc(a, joints->data, (size_t)n * js_new);
    if (p) joints->data = p;
    p = kiln__realloc(a, weights->data, (size_t)n * used * sizeof(float));
    if (p) weights->data = p;
}

kiln_result kiln__bake_skin(const kiln_allocator *a, const kiln_source_mesh *mesh, const kiln__skeleton *skeleton,
                            uint32_t max_influences, kiln__stream *joints, kiln__stream *weights,
                            uint32_t *influences, kiln__skin_counts *counts)
{
    memset(joints, 0, sizeof *joints);
    memset(weights, 0, sizeof *weights);
    *influences = 0;
    /* Joints are u16: sorted indices below the bone count must fit. */
    if (skeleton->bone_count > 65536u) return KILN_ERR_LIMIT;
    uint32_t k = max_influences; /* normalised by kiln_bake: 1..KILN_BAKE_MAX_INFLUENCES */
    uint32_t n = mesh->vertex_count, mi = mesh->max_influence;
    /* The accessor only keeps a skin whose arrays hold n * mi slots; without that, no skin. */
    uint64_t slots = (uint64_t)n * mi;
    (void)slots;
    if (!mi || !mesh->weight_bones || (mi > 1 && !mesh->weight_values)) return KILN_OK;

    skin_scratch s;
    s.bones = kiln__realloc(a, NULL, (size_t)mi * sizeof *s.bones);
    s.weights = kiln__realloc(a, NULL, (size_t)mi * sizeof *s.weights);
    s.inf = kiln__realloc(a, NULL, (size_t)mi * sizeof *s.inf);
    kiln_result r = s.bones && s.weights && s.inf ? KILN_OK : KILN_ERR_OUT_OF_MEMORY;
    if (r == KILN_OK) r = kiln__stream_alloc(a, joints, KILN_ATTR_JOINTS, KILN_FORMAT_U16xN, 0, k, n, joint_stride(k));
    if (r == KILN_OK)
        r = kiln__stream_alloc(a, weights, KILN_ATTR_WEIGHTS, KILN_FORMAT_F32xN, 0, k, n, k * (uint32_t)sizeof(float));

    uint32_t used = 0;
    for (uint32_t v = 0; r == KILN_OK && v < n; v++) {
        uint16_t *j = (uint16_t *)((uint8_t *)joints->data + (size_t)v * joint_stride(k));
        float *w = (float *)weights->data + (size_t)v * k;
        uint32_t got = bake_vertex(mesh, skeleton, v, k, &s, j, w, counts);
        if (got > used) used = got;
    }
    kiln__free(a, s.bones);
    kiln__free(a, s.weights);
    kiln__free(a, s.inf);

    if (r != KILN_OK || used == 0) {
        kiln__stream_free(a, joints);
        kiln__stream_free(a, weights);
        return r;
    }
    if (used < k) narrow(a, joints, weights, k, used);
    *influences = used;
    return KILN_OK;
}
