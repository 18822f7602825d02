/* Cast writer: an in-memory node tree serialised as a Cast file.
 *
 * Nodes live in one array and are only ever appended, each after its parent, so a parent's
 * index is always smaller than its children's. Children are kept as first/last child plus
 * next sibling, properties as first/last property plus next, which keeps every insertion O(1)
 * and lets the output walk the tree in pre-order with no stack at all (descend to the first
 * child, else move to the next sibling, else climb). NodeSize values are maintained as
 * properties and nodes are added (walking up the parent chain), so an oversized node is
 * reported by the call that makes it too big, and writing needs no size pass.
 *
 * Copied payloads and names go into one byte arena, addressed by offset because the arena
 * moves when it grows. Copied payloads are stored little-endian; referenced payloads are
 * either file bytes (add_doc, raw: already little-endian) or host values (prop_ref), which
 * are converted while writing on a big-endian host.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kiln/bake/cast_write.h"
#include "diag.h"
#include "ds.h"
#include "file_atomic.h"

#define KILN__SIZE_MAX32 0xFFFFFFFFull

/* Property storage flags. */
#define KILN__NAME_OWNED 0x1u /* name is at name_off in the arena */
#define KILN__DATA_OWNED 0x2u /* payload is at data_off in the arena (little-endian) */
#define KILN__DATA_HOST  0x4u /* referenced payload in host byte order */
#define KILN__DATA_PLACED 0x8u /* input only: payload already written to the arena at placed_off */

typedef struct kiln__wprop {
    const void *name_ref;  /* when the name is not owned */
    const void *data_ref;  /* when the payload is not owned */
    uint64_t    name_off;
    uint64_t    data_off;
    uint32_t    bytes;     /* payload size on disk */
    uint32_t    count;     /* ArrayLength as written */
    uint32_t    next;      /* next property of the same node */
    uint16_t    type;
    uint16_t    name_len;
    uint32_t    flags;
} kiln__wprop;

typedef struct kiln__wnode {
    uint64_t       hash;
    uint64_t       size;        /* NodeSize so far: header + properties + children, or raw size */
    const uint8_t *raw;         /* verbatim node bytes, NULL for built nodes */
    uint32_t       id;
    uint32_t       parent;
    uint32_t       first_child, last_child, next_sibling, child_count;
    uint32_t       first_prop, last_prop, prop_count;
} kiln__wnode;

struct kiln_cast_writer {
    kiln_allocator alloc;       /* resolved: both functions set, or both NULL for libc */
    kiln_result    error;       /* sticky: the first failure */
    kiln__wnode   *nodes;
    size_t         node_count, node_cap;
    kiln__wprop   *props;
    size_t         prop_count, prop_cap;
    uint8_t       *arena;
    size_t         arena_len, arena_cap;
    uint32_t       first_top, last_top, top_count;
    uint64_t       file_size;   /* header + every top-level NodeSize */
};

/* ---- allocation ------------------------------------------------------------------------- */

static kiln_result kiln__fail(kiln_cast_writer *w, kiln_result r)
{
    if (w->error == KILN_OK) w->error = r;
    return w->error;
}

/* Grows *arr (elements of `elem` bytes, capacity *cap) to hold at least `need` elements. */
static int kiln__reserve(kiln_cast_writer *w, void **arr, size_t *cap, size_t elem, size_t need)
{
    if (need <= *cap) return 1;
    size_t new_cap = *cap ? *cap : 16;
    while (new_cap < need) {
        if (new_cap > SIZE_MAX / 2) { new_cap = need; break; }
        new_cap *= 2;
    }
    if (new_cap > SIZE_MAX / elem) return 0;
    void *p = kiln__realloc(&w->alloc, *arr, new_cap * elem);
    if (!p) return 0;
    *arr = p;
    *cap = new_cap;
    return 1;
}

/* ---- byte order ------------------------------------------------------------------------- */

static int kiln__host_is_le(void)
{
    const uint16_t probe = 1;
    uint8_t first;
    memcpy(&first, &probe, 1);
    return first == 1;
}

/* Bytes per scalar inside an element: vectors are f32 components, strings are bytes. */
static uint32_t kiln__scalar_size(uint16_t type)
{
    switch (type) {
    case KILN_CAST_TYPE_VEC2: case KILN_CAST_TYPE_VEC3: case KILN_CAST_TYPE_VEC4: return 4;
    case KILN_CAST_TYPE_STRING: return 1;
    default: return kiln_cast_type_size(type);
    }
}

/* Host-order scalars to little-endian. The byte loop is the definition; the compiler turns
 * it into a copy on little-endian targets, where the caller skips it anyway. */
static void kiln__to_le(uint8_t *dst, const uint8_t *src, size_t bytes, uint32_t scalar)
{
    if (scalar <= 1 || kiln__host_is_le()) {
        memcpy(dst, src, bytes);
        return;
    }
    for (size_t i = 0; i + scalar <= bytes; i += scalar) {
        for (uint32_t b = 0; b < scalar; b++) dst[i + b] = src[i + scalar - 1 - b];
    }
}

/* Reserves `bytes` bytes at the end of the arena; the pointer is valid until the next growth. */
static uint8_t *kiln__arena_alloc(kiln_cast_writer *w, size_t bytes, uint64_t *off)
{
    if (bytes > SIZE_MAX - w->arena_len) return NULL;
    if (!kiln__reserve(w, (void **)&w->arena, &w->arena_cap, 1, w->arena_len + bytes)) return NULL;
    *off = w->arena_len;
    w->arena_len += bytes;
    return w->arena + *off;
}

static int kiln__arena_put(kiln_cast_writer *w, const void *src, size_t bytes, uint32_t scalar, uint64_t *off)
{
    uint8_t *dst = kiln__arena_alloc(w, bytes, off);
    if (!dst) return 0;
    if (bytes) kiln__to_le(dst, src, bytes, scalar);
    return 1;
}

/* ---- tree building ---------------------------------------------------------------------- */

/* Adds `delta` bytes to node n and every ancestor (and to the file). Fails with ERR_LIMIT when
 * a NodeSize would pass 4 GiB; the writer is then unusable, so nothing is rolled back. */
static kiln_result kiln__grow_sizes(kiln_cast_writer *w, uint32_t n, uint64_t delta)
{
    for (; n != KILN_CAST_NONE; n = w->nodes[n].parent) {
        w->nodes[n].size += delta;
        if (w->nodes[n].size > KILN__SIZE_MAX32) return kiln__fail(w, KILN_ERR_LIMIT);
    }
    w->file_size += delta;
    return KILN_OK;
}

static int kiln__valid_parent(const kiln_cast_writer *w, uint32_t parent)
{
    return parent == KILN_CAST_NONE || (parent < w->node_count && !w->nodes[parent].raw);
}

/* Appends a node (raw when `raw` is not NULL) under `parent`; sizes are not touched. */
static uint32_t kiln__append_node(kiln_cast_writer *w, uint32_t parent, uint32_t id, uint64_t hash,
                                  const uint8_t *raw, uint64_t size)
{
    if (w->node_count >= KILN_CAST_NONE - 1) {
        kiln__fail(w, KILN_ERR_LIMIT);
        return KILN_CAST_NONE;
    }
    if (!kiln__reserve(w, (void **)&w->nodes, &w->node_cap, sizeof *w->nodes, w->node_count + 1)) {
        kiln__fail(w, KILN_ERR_OUT_OF_MEMORY);
        return KILN_CAST_NONE;
    }
    uint32_t idx = (uint32_t)w->node_count++;
    kiln__wnode *n = &w->nodes[idx];
    memset(n, 0, sizeof *n);
    n->hash = hash;
    n->id = id;
    n->raw = raw;
    n->size = size;
    n->parent = parent;
    n->first_child = n->last_child = n->next_sibling = KILN_CAST_NONE;
    n->first_prop = n->last_prop = KILN_CAST_NONE;

    uint32_t *first = parent == KILN_CAST_NONE ? &w->first_top : &w->nodes[parent].first_child;
    uint32_t *last = parent == KILN_CAST_NONE ? &w->last_top : &w->nodes[parent].last_child;
    if (*last == KILN_CAST_NONE) *first = idx;
    else w->nodes[*last].next_sibling = idx;
    *last = idx;
    if (parent == KILN_CAST_NONE) w->top_count++;
    else w->nodes[parent].child_count++;

    /* The new node's own bytes count towards its ancestors (and itself, already set). */
    if (parent != KILN_CAST_NONE) {
        if (kiln__grow_sizes(w, parent, size) != KILN_OK) return KILN_CAST_NONE;
    } else {
        w->file_size += size;
    }
    return idx;
}

typedef struct kiln__prop_in {
    const char *name;
    size_t      name_len;
    uint16_t    type;
    const void *data;
    uint64_t    bytes;
    uint32_t    count;
    uint32_t    flags;   /* KILN__NAME_OWNED / KILN__DATA_OWNED / KILN__DATA_HOST / KILN__DATA_PLACED */
    uint64_t    placed_off;
} kiln__prop_in;

static kiln_result kiln__add_prop(kiln_cast_writer *w, uint32_t node, const kiln__prop_in *in)
{
    if (w->error != KILN_OK) return w->error;
    int placed = (in->flags & KILN__DATA_PLACED) != 0;
    if (node >= w->node_count || w->nodes[node].raw || !in->name || (in->bytes && !in->data && !placed)) {
        return kiln__fail(w, KILN_ERR_INVALID_ARGUMENT);
    }
    if (in->name_len > 0xFFFF || in->bytes > KILN__SIZE_MAX32) return kiln__fail(w, KILN_ERR_LIMIT);
    if (w->prop_count >= KILN_CAST_NONE - 1) return kiln__fail(w, KILN_ERR_LIMIT);
    if (!kiln__reserve(w, (void **)&w->props, &w->prop_cap, sizeof *w->props, w->prop_count + 1)) {
        return kiln__fail(w, KILN_ERR_OUT_OF_MEMORY);
    }
    kiln__wprop p;
    memset(&p, 0, sizeof p);
    p.type = in->type;
    p.name_len = (uint16_t)in->name_len;
    p.count = in->count;
    p.bytes = (uint32_t)in->bytes;
    p.next = KILN_CAST_NONE;
    p.flags = in->flags;
    p.name_ref = in->name;
    p.data_ref = in->data;
    if ((p.flags & KILN__NAME_OWNED) && !kiln__arena_put(w, in->name, in->name_len, 1, &p.name_off)) {
        return kiln__fail(w, KILN_ERR_OUT_OF_MEMORY);
    }
    if ((p.flags & KILN__DATA_OWNED) &&
        !kiln__arena_put(w, in->data, (size_t)in->bytes, kiln__scalar_size(in->type), &p.data_off)) {
        return kiln__fail(w, KILN_ERR_OUT_OF_MEMORY);
    }
    if (placed) {
        p.data_off = in->placed_off;
        p.flags = (p.flags & ~KILN__DATA_PLACED) | KILN__DATA_OWNED;
    }
    if (p.flags & KILN__DATA_OWNED) p.flags &= ~KILN__DATA_HOST; /* converted on copy */

    uint32_t idx = (uint32_t)w->prop_count++;
    w->props[idx] = p;
    kiln__wnode *n = &w->nodes[node];
    if (n->last_prop == KILN_CAST_NONE) n->first_prop = idx;
    else w->props[n->last_prop].next = idx;
    n->last_prop = idx;
    n->prop_count++;
    return kiln__grow_sizes(w, node, KILN_CAST_PROP_HEADER_SIZE + in->name_len + in->bytes);
}

/* Payload bytes for `count` elements of `type` from caller memory: strings are measured, other
 * types must have a known element size. Returns 0 and sets *bytes on success. */
static kiln_result kiln__payload_bytes(uint16_t type, const void *data, uint32_t count, uint64_t *bytes)
{
    if (type == KILN_CAST_TYPE_STRING) {
        if (!data) return KILN_ERR_INVALID_ARGUMENT;
        *bytes = (uint64_t)strlen((const char *)data) + 1;
        return KILN_OK;
    }
    uint32_t esize = kiln_cast_type_size(type);
    if (esize == 0) return KILN_ERR_INVALID_ARGUMENT;
    *bytes = (uint64_t)esize * count;
    return KILN_OK;
}

static kiln_result kiln__prop_common(kiln_cast_writer *w, uint32_t node, const char *name, uint16_t type,
                                     const void *data, uint32_t count, uint32_t flags)
{
    if (!w) return KILN_ERR_INVALID_ARGUMENT;
    if (w->error != KILN_OK) return w->error;
    if (!name) return kiln__fail(w, KILN_ERR_INVALID_ARGUMENT);
    kiln__prop_in in;
    memset(&in, 0, sizeof in);
    in.name = name;
    in.name_len = strlen(name);
    in.type = type;
    in.data = data;
    in.count = count;
    in.flags = flags;
    kiln_result r = kiln__payload_bytes(type, data, count, &in.bytes);
    if (r != KILN_OK) return kiln__fail(w, r);
    return kiln__add_prop(w, node, &in);
}

/* ---- public: building ------------------------------------------------------------------- */

kiln_cast_writer *kiln_cast_writer_create(const kiln_allocator *allocator)
{
    kiln_allocator a;
    memset(&a, 0, sizeof a);
    if (allocator && allocator->realloc_fn && allocator->free_fn) a = *allocator;
    kiln_cast_writer *w = kiln__realloc(&a, NULL, sizeof *w);
    if (!w) return NULL;
    memset(w, 0, sizeof *w);
    w->alloc = a;
    w->first_top = w->last_top = KILN_CAST_NONE;
    w->file_size = KILN_CAST_HEADER_SIZE;
    return w;
}

void kiln_cast_writer_destroy(kiln_cast_writer *w)
{
    if (!w) return;
    kiln_allocator a = w->alloc;
    kiln__free(&a, w->nodes);
    kiln__free(&a, w->props);
    kiln__free(&a, w->arena);
    kiln__free(&a, w);
}

uint32_t kiln_cast_writer_node(kiln_cast_writer *w, uint32_t parent, uint32_t id, uint64_t hash)
{
    if (!w || w->error != KILN_OK) return KILN_CAST_NONE;
    if (!kiln__valid_parent(w, parent)) {
        kiln__fail(w, KILN_ERR_INVALID_ARGUMENT);
        return KILN_CAST_NONE;
    }
    return kiln__append_node(w, parent, id, hash, NULL, KILN_CAST_NODE_HEADER_SIZE);
}

kiln_result kiln_cast_writer_prop(kiln_cast_writer *w, uint32_t node, const char *name, uint16_t type,
                                  const void *data, uint32_t count)
{
    return kiln__prop_common(w, node, name, type, data, count, KILN__NAME_OWNED | KILN__DATA_OWNED);
}

kiln_result kiln_cast_writer_prop_ref(kiln_cast_writer *w, uint32_t node, const char *name, uint16_t type,
                                      const void *data, uint32_t count)
{
    return kiln__prop_common(w, node, name, type, data, count, KILN__NAME_OWNED | KILN__DATA_HOST);
}

kiln_result kiln_cast_writer_string(kiln_cast_writer *w, uint32_t node, const char *name, const char *value)
{
    return kiln_cast_writer_prop(w, node, name, KILN_CAST_TYPE_STRING, value, 1);
}

/* Narrows to the smallest type holding the largest value, as cast.py does for indices. The
 * narrowed payload is written straight into the arena, little-endian. */
kiln_result kiln_cast_writer_ints(kiln_cast_writer *w, uint32_t node, const char *name, const uint32_t *values,
                                  uint32_t count)
{
    if (!w) return KILN_ERR_INVALID_ARGUMENT;
    if (w->error != KILN_OK) return w->error;
    if (!name || (count && !values)) return kiln__fail(w, KILN_ERR_INVALID_ARGUMENT);
    uint32_t max = 0;
    for (uint32_t i = 0; i < count; i++) max = values[i] > max ? values[i] : max;
    uint16_t type = max <= 0xFFu ? KILN_CAST_TYPE_BYTE : max <= 0xFFFFu ? KILN_CAST_TYPE_SHORT : KILN_CAST_TYPE_INT;
    uint32_t esize = kiln_cast_type_size(type);

    kiln__prop_in in;
    memset(&in, 0, sizeof in);
    in.name = name;
    in.name_len = strlen(name);
    in.type = type;
    in.bytes = (uint64_t)esize * count;
    in.count = count;
    in.flags = KILN__NAME_OWNED | KILN__DATA_PLACED;
    if (in.bytes > KILN__SIZE_MAX32) return kiln__fail(w, KILN_ERR_LIMIT);
    uint8_t *dst = kiln__arena_alloc(w, (size_t)in.bytes, &in.placed_off);
    if (!dst) return kiln__fail(w, KILN_ERR_OUT_OF_MEMORY);
    for (uint32_t i = 0; i < count; i++) {
        for (uint32_t b = 0; b < esize; b++) dst[(size_t)i * esize + b] = (uint8_t)(values[i] >> (8 * b));
    }
    return kiln__add_prop(w, node, &in);
}

kiln_result kiln_cast_writer_floats(kiln_cast_writer *w, uint32_t node, const char *name, uint16_t type,
                                    const float *values, uint32_t count)
{
    if (!w) return KILN_ERR_INVALID_ARGUMENT;
    if (type != KILN_CAST_TYPE_FLOAT && type != KILN_CAST_TYPE_VEC2 && type != KILN_CAST_TYPE_VEC3 &&
        type != KILN_CAST_TYPE_VEC4) {
        return kiln__fail(w, KILN_ERR_INVALID_ARGUMENT);
    }
    return kiln_cast_writer_prop(w, node, name, type, values, count);
}

kiln_result kiln_cast_writer_u64(kiln_cast_writer *w, uint32_t node, const char *name, uint64_t value)
{
    return kiln_cast_writer_prop(w, node, name, KILN_CAST_TYPE_LONG, &value, 1);
}

kiln_result kiln_cast_writer_byte(kiln_cast_writer *w, uint32_t node, const char *name, uint8_t value)
{
    return kiln_cast_writer_prop(w, node, name, KILN_CAST_TYPE_BYTE, &value, 1);
}

static uint32_t kiln__rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

kiln_result kiln_cast_writer_raw(kiln_cast_writer *w, uint32_t parent, const void *bytes, uint32_t size)
{
    if (!w) return KILN_ERR_INVALID_ARGUMENT;
    if (w->error != KILN_OK) return w->error;
    const uint8_t *b = bytes;
    if (!b || size < KILN_CAST_NODE_HEADER_SIZE || kiln__rd32(b + 4) != size || !kiln__valid_parent(w, parent)) {
        return kiln__fail(w, KILN_ERR_INVALID_ARGUMENT);
    }
    kiln__append_node(w, parent, kiln__rd32(b), 0, b, size);
    return w->error;
}

/* The document's node table is pre-order with parents first, and every document node becomes
 * exactly one writer node appended in the same order, so document node i is writer node
 * base + i and parents can be mapped without a table. */
kiln_result kiln_cast_writer_add_doc(kiln_cast_writer *w, const kiln_cast_doc *doc)
{
    if (!w) return KILN_ERR_INVALID_ARGUMENT;
    if (w->error != KILN_OK) return w->error;
    if (!doc) return kiln__fail(w, KILN_ERR_INVALID_ARGUMENT);
    const uint8_t *data = kiln_cast_data(doc);
    uint32_t count = kiln_cast_node_count(doc);
    uint64_t base = w->node_count;
    for (uint32_t i = 0; i < count && w->error == KILN_OK; i++) {
        const kiln_cast_node *n = kiln_cast_node_at(doc, i);
        uint32_t parent = n->parent == KILN_CAST_NONE ? KILN_CAST_NONE : (uint32_t)(base + n->parent);
        if (n->flags & KILN_CAST_NODE_OPAQUE) {
            kiln_cast_writer_raw(w, parent, data + n->offset, n->size);
            continue;
        }
        uint32_t idx = kiln_cast_writer_node(w, parent, n->id, n->hash);
        for (uint32_t k = 0; k < n->prop_count && idx != KILN_CAST_NONE; k++) {
            const kiln_cast_prop *p = kiln_cast_prop_at(doc, i, k);
            kiln__prop_in in;
            memset(&in, 0, sizeof in);
            in.name = p->name;
            in.name_len = p->name_len;
            in.type = p->type;
            in.data = p->data;
            in.bytes = p->bytes;
            in.count = p->count;
            in.flags = 0; /* name and payload referenced, both already in file byte order */
            if (kiln__add_prop(w, idx, &in) != KILN_OK) break;
        }
    }
    return w->error;
}

/* ---- output ----------------------------------------------------------------------------- */

/* Where the bytes go: a memory block or a stdio stream. Stream failures are latched. */
typedef struct kiln__out {
    uint8_t *dst;
    uint64_t pos;
    FILE    *file;
    int      failed;
} kiln__out;

static void kiln__put(kiln__out *o, const void *src, size_t n)
{
    if (!n) return;
    if (o->file) {
        if (!o->failed && fwrite(src, 1, n, o->file) != n) o->failed = 1;
    } else {
        memcpy(o->dst + o->pos, src, n);
    }
    o->pos += n;
}

static void kiln__put_le(kiln__out *o, uint64_t v, uint32_t bytes)
{
    uint8_t b[8];
    for (uint32_t i = 0; i < bytes; i++) b[i] = (uint8_t)(v >> (8 * i));
    kiln__put(o, b, bytes);
}

/* Host-order payloads are converted through a small buffer so no copy of the whole array is
 * needed; on little-endian hosts they go out as they are. */
static void kiln__put_host(kiln__out *o, const uint8_t *src, size_t n, uint32_t scalar)
{
    if (scalar <= 1 || kiln__host_is_le()) {
        kiln__put(o, src, n);
        return;
    }
    uint8_t chunk[4096];
    while (n) {
        size_t step = n < sizeof chunk ? n : sizeof chunk; /* 4096 is a multiple of every scalar */
        kiln__to_le(chunk, src, step, scalar);
        kiln__put(o, chunk, step);
        src += step;
        n -= step;
    }
}

static void kiln__emit_prop(const kiln_cast_writer *w, const kiln__wprop *p, kiln__out *o)
{
    kiln__put_le(o, p->type, 2);
    kiln__put_le(o, p->name_len, 2);
    kiln__put_le(o, p->count, 4);
    kiln__put(o, (p->flags & KILN__NAME_OWNED) ? w->arena + p->name_off : p->name_ref, p->name_len);
    if (p->flags & KILN__DATA_OWNED) kiln__put(o, w->arena + p->data_off, p->bytes);
    else if (p->flags & KILN__DATA_HOST) kiln__put_host(o, p->data_ref, p->bytes, kiln__scalar_size(p->type));
    else kiln__put(o, p->data_ref, p->bytes);
}

static void kiln__emit_node(const kiln_cast_writer *w, const kiln__wnode *n, kiln__out *o)
{
    if (n->raw) {
        kiln__put(o, n->raw, (size_t)n->size);
        return;
    }
    kiln__put_le(o, n->id, 4);
    kiln__put_le(o, n->size, 4);
    kiln__put_le(o, n->hash, 8);
    kiln__put_le(o, n->prop_count, 4);
    kiln__put_le(o, n->child_count, 4);
    for (uint32_t p = n->first_prop; p != KILN_CAST_NONE; p = w->props[p].next) kiln__emit_prop(w, &w->props[p], o);
}

static void kiln__emit(const kiln_cast_writer *w, kiln__out *o)
{
    kiln__put_le(o, KILN_CAST_MAGIC, 4);
    kiln__put_le(o, 1, 4);
    kiln__put_le(o, w->top_count, 4);
    kiln__put_le(o, 0, 4);
    uint32_t n = w->first_top;
    while (n != KILN_CAST_NONE) {
        kiln__emit_node(w, &w->nodes[n], o);
        if (w->nodes[n].first_child != KILN_CAST_NONE) {
            n = w->nodes[n].first_child;
            continue;
        }
        while (n != KILN_CAST_NONE && w->nodes[n].next_sibling == KILN_CAST_NONE) n = w->nodes[n].parent;
        if (n != KILN_CAST_NONE) n = w->nodes[n].next_sibling;
    }
}

uint64_t kiln_cast_writer_size(const kiln_cast_writer *w)
{
    return w && w->error == KILN_OK ? w->file_size : 0;
}

kiln_result kiln_cast_writer_write(const kiln_cast_writer *w, void *dst, uint64_t cap)
{
    if (!w) return KILN_ERR_INVALID_ARGUMENT;
    if (w->error != KILN_OK) return w->error;
    if (!dst) return KILN_ERR_INVALID_ARGUMENT;
    if (cap < w->file_size) return KILN_ERR_BUFFER_TOO_SMALL;
    kiln__out o;
    memset(&o, 0, sizeof o);
    o.dst = dst;
    kiln__emit(w, &o);
    return KILN_OK;
}

/* ---- atomic save ------------------------------------------------------------------------ */

/* kiln__file_emit_fn: streams the whole file into the temporary file. */
static int kiln__save_stream(void *user, FILE *f)
{
    kiln__out o;
    memset(&o, 0, sizeof o);
    o.file = f;
    kiln__emit(user, &o);
    return !o.failed;
}

kiln_result kiln_cast_writer_save(const kiln_cast_writer *w, const char *path, kiln_diag *err)
{
    if (!w || !path || !path[0]) {
        kiln__diag_fill(err, KILN_ERR_INVALID_ARGUMENT, KILN_SEVERITY_ERROR, NULL, KILN_CAST_NONE, NULL,
                        KILN_NO_OFFSET, "no writer or no path");
        return KILN_ERR_INVALID_ARGUMENT;
    }
    if (w->error != KILN_OK) {
        kiln__diag_fill(err, w->error, KILN_SEVERITY_ERROR, NULL, KILN_CAST_NONE, NULL, KILN_NO_OFFSET,
                        "'%s' not written: the writer failed earlier", path);
        return w->error;
    }
    return kiln__file_save_atomic(path, kiln__save_stream, (void *)w, &w->alloc, KILN_ERR_IO, err);
}
