/* Skeleton baking (Cast reference C.1): parent-first order, rest locals, inverse binds.
 *
 * The order is a stable topological sort: Kahn's algorithm that always emits the lowest Cast
 * index whose parent is already placed. A Cast order that is already parent-first therefore
 * comes out unchanged, and otherwise every bone moves only as far as its parent forces it.
 *
 * Rest locals: lp/lr/s where present ("local wins"). A bone with neither lp nor lr but with
 * wp/wr gets its local from its parent's world rest, which is the parent chain composed from
 * the locals without scale (world values carry no scale). Because local wins everywhere, the
 * chain is always the computed one, never an authored wp/wr of the parent.
 *
 * World rest: W = W_parent * T(t) * S(s_parent)^-1 * R(r) * S(s) with segment scale
 * compensation (the default), W_parent * T * R * S without. Inverse binds are inverse(W); the
 * Model transform is not part of them (C.9).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "bake_internal.h"
#include "util.h"
#include "bake_report.h"
#include "ds.h"

/* Per-bone working data, Cast order unless noted. */
typedef struct kiln__skel_work {
    const kiln_source_bone *bones; /* the source's, source order */
    int32_t        *parents;    /* source parents */
    uint32_t       *child_first;/* CSR child lists: children of c are child_list[child_first[c] .. child_first[c+1]) */
    uint32_t       *child_list;
    uint32_t       *heap;       /* min-heap of ready Cast indices */
    uint32_t       *depth;      /* sorted order */
    float         (*chain_t)[3];/* world rest without scale, sorted order */
    float         (*chain_r)[4];
    float         (*world)[16]; /* world rest with scale and SSC, sorted order */
} kiln__skel_work;

static void kiln__work_free(const kiln_allocator *a, kiln__skel_work *w)
{
    kiln__free(a, w->parents);
    kiln__free(a, w->child_first);
    kiln__free(a, w->child_list);
    kiln__free(a, w->heap);
    kiln__free(a, w->depth);
    kiln__free(a, w->chain_t);
    kiln__free(a, w->chain_r);
    kiln__free(a, w->world);
}

void kiln__skeleton_free(const kiln_allocator *a, kiln__skeleton *s)
{
    if (!s) return;
    if (s->names)
        for (uint32_t i = 0; i < s->bone_count; i++) kiln__free(a, s->names[i]);
    kiln__free(a, s->names);
    kiln__free(a, s->parents);
    kiln__free(a, s->source_index);
    kiln__free(a, s->sorted_index);
    kiln__free(a, s->flags);
    kiln__free(a, s->local_t);
    kiln__free(a, s->local_r);
    kiln__free(a, s->local_s);
    kiln__free(a, s->inverse_bind);
    memset(s, 0, sizeof *s);
}

/* Zeroed array of n elements of `size` bytes; *ok cleared on failure (n > 0 here). */
static void *kiln__calloc(const kiln_allocator *a, size_t n, size_t size, int *ok)
{
    void *p = kiln__realloc(a, NULL, n * size);
    if (!p) *ok = 0;
    else memset(p, 0, n * size);
    return p;
}

/* ---- parent-first order -------------------------------------------------------------------- */

static void kiln__heap_push(uint32_t *heap, uint32_t *n, uint32_t v)
{
    uint32_t i = (*n)++;
    while (i > 0 && heap[(i - 1) / 2] > v) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = v;
}

static uint32_t kiln__heap_pop(uint32_t *heap, uint32_t *n)
{
    uint32_t top = heap[0], v = heap[--*n], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && heap[c + 1] < heap[c]) c++;
        if (heap[c] >= v) break;
        heap[i] = heap[c];
        i = c;
    }
    if (*n) heap[i] = v;
    return top;
}

/* Fills out->source_index (sorted -> Cast) and sorted_index. Returns 0 if some bone is never
 * reached, which only a cycle can cause (the accessor rejects cycles first). */
static int kiln__sort_parent_first(uint32_t n, kiln__skel_work *w, kiln__skeleton *out)
{
    for (uint32_t c = 0; c <= n; c++) w->child_first[c] = 0;
    for (uint32_t c = 0; c < n; c++)
        if (w->parents[c] >= 0) w->child_first[w->parents[c] + 1]++;
    for (uint32_t c = 0; c < n; c++) w->child_first[c + 1] += w->child_first[c];
    /* Filling in Cast order keeps every child list ascending. depth doubles as a cursor. */
    for (uint32_t c = 0; c < n; c++) w->depth[c] = w->child_first[c];
    for (uint32_t c = 0; c < n; c++)
        if (w->parents[c] >= 0) w->child_list[w->depth[w->parents[c]]++] = c;

    uint32_t ready = 0, placed = 0;
    for (uint32_t c = 0; c < n; c++)
        if (w->parents[c] < 0) kiln__heap_push(w->heap, &ready, c);
    while (ready) {
        uint32_t c = kiln__heap_pop(w->heap, &ready);
        out->source_index[placed] = c;
        out->sorted_index[c] = placed++;
        for (uint32_t k = w->child_first[c]; k < w->child_first[c + 1]; k++)
            kiln__heap_push(w->heap, &ready, w->child_list[k]);
    }
    return placed == n;
}

/* ---- names ----------------------------------------------------------------------------------- */

typedef struct kiln__name_ref {
    const char *name;
    uint32_t    cast;
} kiln__name_ref;

static int kiln__cmp_name_ref(const void *pa, const void *pb)
{
    const kiln__name_ref *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    if (c) return c;
    return a->cast < b->cast ? -1 : a->cast > b->cast;
}

/* Curves bind to the first bone with a name (Cast reference F), so duplicates are legal but
 * worth a warning: the later bones cannot be animated by name. */
static kiln_result kiln__warn_duplicate_names(const kiln__bake_ctx *ctx, const kiln__skel_work *w,
                                              const kiln__skeleton *out)
{
    uint32_t n = out->bone_count;
    kiln__name_ref *refs = kiln__realloc(ctx->allocator, NULL, n * sizeof *refs);
    if (!refs) return KILN_ERR_OUT_OF_MEMORY;
    for (uint32_t c = 0; c < n; c++) {
        refs[c].name = out->names[out->sorted_index[c]];
        refs[c].cast = c;
    }
    qsort(refs, n, sizeof *refs, kiln__cmp_name_ref);
    for (uint32_t i = 1, first = 0; i < n; i++) {
        if (strcmp(refs[i].name, refs[first].name) != 0) {
            first = i;
            continue;
        }
        kiln__bake_report(&ctx->sink, KILN_ERR_CAST_DUPLICATE, KILN_SEVERITY_WARNING, &w->bones[refs[i].cast].loc,
                          "n", KILN_NO_OFFSET, "bone %u has the same name '%s' as bone %u; curves bind to bone %u",
                          refs[i].cast, refs[i].name, refs[first].cast, refs[first].cast);
    }
    kiln__free(ctx->allocator, refs);
    return KILN_OK;
}

/* ---- rest pose -------------------------------------------------------------------------------- */

/* A zero scale component makes the world rest singular (no inverse bind, and segment scale
 * compensation divides by it), so such a bone is treated like one with a non-finite scale:
 * the default (1, 1, 1) and a warning. */
static void kiln__sanitise_scale(const kiln__bake_ctx *ctx, const kiln_source_loc *loc, float s[3])
{
    if (fabsf(s[0]) > 1e-12f && fabsf(s[1]) > 1e-12f && fabsf(s[2]) > 1e-12f) return;
    kiln__bake_report(&ctx->sink, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING, loc, "s", KILN_NO_OFFSET,
                      "scale (%g, %g, %g) has a zero component and cannot be inverted; (1, 1, 1) used",
                      (double)s[0], (double)s[1], (double)s[2]);
    s[0] = s[1] = s[2] = 1.0f;
}

/* cglm's SSE paths use aligned loads, so values from packed structs (kiln_source_bone) and
 * from the output arrays are copied into properly aligned locals before any glm_ call. */

/* Rest local of the bone at sorted position `s` (its parent is already done). */
static void kiln__rest_local(const kiln__bake_ctx *ctx, kiln__skel_work *w, kiln__skeleton *out, uint32_t s)
{
    uint32_t c = out->source_index[s];
    const kiln_source_bone *b = &w->bones[c];
    int32_t p = out->parents[s];
    vec3 t = {0.0f, 0.0f, 0.0f}, sc = {1.0f, 1.0f, 1.0f};
    versor r = {0.0f, 0.0f, 0.0f, 1.0f};
    if (b->has_local_position) memcpy(t, b->local_position, sizeof t);
    if (b->has_local_rotation) memcpy(r, b->local_rotation, sizeof r);
    if (b->has_scale) memcpy(sc, b->scale, sizeof sc);

    vec3 parent_t = {0.0f, 0.0f, 0.0f};
    versor parent_r = {0.0f, 0.0f, 0.0f, 1.0f};
    if (p >= 0) {
        memcpy(parent_t, w->chain_t[p], sizeof parent_t);
        memcpy(parent_r, w->chain_r[p], sizeof parent_r);
    }

    if (!b->has_local_position && !b->has_local_rotation && (b->has_world_position || b->has_world_rotation)) {
        versor inv;
        glm_quat_conjugate(parent_r, inv);
        if (b->has_world_rotation) {
            versor wr;
            memcpy(wr, b->world_rotation, sizeof wr);
            glm_quat_mul(inv, wr, r); /* conj(wr_parent) * wr */
            glm_quat_normalize(r);
        }
        if (b->has_world_position) {
            vec3 wp, d;
            memcpy(wp, b->world_position, sizeof wp);
            glm_vec3_sub(wp, parent_t, d);
            glm_quat_rotatev(inv, d, t); /* rot(conj(wr_parent), wp - wp_parent) */
        }
    }
    kiln__sanitise_scale(ctx, &b->loc, sc);
    memcpy(out->local_t[s], t, sizeof t);
    memcpy(out->local_r[s], r, sizeof r);
    memcpy(out->local_s[s], sc, sizeof sc);

    /* The scale-free chain the next generation derives from. */
    vec3 moved, chain_t;
    versor chain_r;
    glm_quat_rotatev(parent_r, t, moved);
    glm_vec3_add(parent_t, moved, chain_t);
    glm_quat_mul(parent_r, r, chain_r);
    glm_quat_normalize(chain_r);
    memcpy(w->chain_t[s], chain_t, sizeof chain_t);
    memcpy(w->chain_r[s], chain_r, sizeof chain_r);
}

/* World rest and inverse bind of the bone at sorted position `s`. */
static void kiln__world_rest(const kiln__bake_ctx *ctx, kiln__skel_work *w, kiln__skeleton *out, uint32_t s)
{
    int32_t p = out->parents[s];
    vec3 t, sc;
    versor r;
    memcpy(t, out->local_t[s], sizeof t);
    memcpy(r, out->local_r[s], sizeof r);
    memcpy(sc, out->local_s[s], sizeof sc);

    mat4 m, step;
    glm_translate_make(m, t);
    if (p >= 0 && (out->flags[s] & KILN_BONE_SEGMENT_SCALE_COMPENSATE)) {
        const float *ps = out->local_s[p];
        vec3 inv = {1.0f / ps[0], 1.0f / ps[1], 1.0f / ps[2]};
        glm_scale_make(step, inv);
        glm_mat4_mul(m, step, m);
    }
    glm_quat_mat4(r, step);
    glm_mat4_mul(m, step, m);
    glm_scale_make(step, sc);
    glm_mat4_mul(m, step, m);
    if (p >= 0) {
        mat4 parent;
        memcpy(parent, w->world[p], sizeof parent);
        glm_mat4_mul(parent, m, m);
    }
    memcpy(w->world[s], m, sizeof m);

    mat4 ib;
    glm_mat4_inv(m, ib);
    int finite = 1;
    for (int i = 0; i < 16; i++) finite &= isfinite(ib[i / 4][i % 4]) != 0;
    if (!finite) {
        /* Only reachable with extreme values (e.g. scales near FLT_MIN along a chain). */
        kiln__bake_report(&ctx->sink, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING,
                          &w->bones[out->source_index[s]].loc, NULL, KILN_NO_OFFSET,
                          "the world rest transform cannot be inverted; the inverse bind is the identity");
        glm_mat4_identity(ib);
    }
    memcpy(out->inverse_bind[s], ib, sizeof ib);
}

/* ---- entry point ------------------------------------------------------------------------------ */

static kiln_result kiln__alloc_all(const kiln_allocator *a, uint32_t n, kiln__skel_work *w, kiln__skeleton *out)
{
    int ok = 1;
    w->parents = kiln__calloc(a, n, sizeof *w->parents, &ok);
    w->child_first = kiln__calloc(a, (size_t)n + 1, sizeof *w->child_first, &ok);
    w->child_list = kiln__calloc(a, n, sizeof *w->child_list, &ok);
    w->heap = kiln__calloc(a, n, sizeof *w->heap, &ok);
    w->depth = kiln__calloc(a, n, sizeof *w->depth, &ok);
    w->chain_t = kiln__calloc(a, n, sizeof *w->chain_t, &ok);
    w->chain_r = kiln__calloc(a, n, sizeof *w->chain_r, &ok);
    w->world = kiln__calloc(a, n, sizeof *w->world, &ok);
    out->names = kiln__calloc(a, n, sizeof *out->names, &ok);
    out->parents = kiln__calloc(a, n, sizeof *out->parents, &ok);
    out->source_index = kiln__calloc(a, n, sizeof *out->source_index, &ok);
    out->sorted_index = kiln__calloc(a, n, sizeof *out->sorted_index, &ok);
    out->flags = kiln__calloc(a, n, sizeof *out->flags, &ok);
    out->local_t = kiln__calloc(a, n, sizeof *out->local_t, &ok);
    out->local_r = kiln__calloc(a, n, sizeof *out->local_r, &ok);
    out->local_s = kiln__calloc(a, n, sizeof *out->local_s, &ok);
    out->inverse_bind = kiln__calloc(a, n, sizeof *out->inverse_bind, &ok);
    return ok ? KILN_OK : KILN_ERR_OUT_OF_MEMORY;
}

/* Names and flags of every bone; missing names become "bone<index>" (the source index). */
static kiln_result kiln__read_bones(const kiln__bake_ctx *ctx, kiln__skel_work *w, kiln__skeleton *out)
{
    for (uint32_t c = 0; c < out->bone_count; c++) {
        const kiln_source_bone *b = &w->bones[c];
        uint32_t s = out->sorted_index[c];
        out->names[s] = b->name ? kiln__strdup(ctx->allocator, b->name) : kiln__strfmt(ctx->allocator, "bone%u", c);
        if (!out->names[s]) return KILN_ERR_OUT_OF_MEMORY;
        out->flags[s] = b->segment_scale_compensate ? KILN_BONE_SEGMENT_SCALE_COMPENSATE : 0;
    }
    return KILN_OK;
}

kiln_result kiln__bake_skeleton(const kiln__bake_ctx *ctx, const kiln_source_skeleton *skel, kiln__skeleton *out)
{
    memset(out, 0, sizeof *out);
    const kiln_allocator *a = ctx->allocator;
    uint32_t n = skel->bone_count;
    if (n == 0) return KILN_OK;

    kiln__skel_work w;
    memset(&w, 0, sizeof w);
    out->bone_count = n;
    w.bones = skel->bones;
    kiln_result r = kiln__alloc_all(a, n, &w, out);
    for (uint32_t c = 0; r == KILN_OK && c < n; c++) w.parents[c] = skel->bones[c].parent;
    if (r == KILN_OK && !kiln__sort_parent_first(n, &w, out)) r = KILN_ERR_CAST_BONE_CYCLE;
    if (r == KILN_OK) r = kiln__read_bones(ctx, &w, out);
    if (r == KILN_OK) r = kiln__warn_duplicate_names(ctx, &w, out);
    if (r != KILN_OK) {
        kiln__work_free(a, &w);
        kiln__skeleton_free(a, out);
        return r;
    }

    for (uint32_t s = 0; s < n; s++) {
        int32_t pc = w.parents[out->source_index[s]];
        out->parents[s] = pc >= 0 ? (int32_t)out->sorted_index[pc] : -1;
        w.depth[s] = pc >= 0 ? w.depth[out->parents[s]] + 1 : 1;
        if (w.depth[s] > out->depth) out->depth = w.depth[s];
        kiln__rest_local(ctx, &w, out, s);
        kiln__world_rest(ctx, &w, out, s);
    }
    kiln__work_free(a, &w);
    return KILN_OK;
}
