/* One-pass, zero-copy Cast parser. Nesting is walked with an explicit stack of frames, one per
 * node whose children are being read (plus one for the file's top level), so hostile nesting
 * costs heap, never C stack. Every size is compared against what is left before it is used. */
#include <stdio.h>
#include <string.h>

#include "cast_doc.h"
#include "diag.h"
#include "ds.h"

typedef struct kiln__frame {
    uint32_t node;           /* node whose children are read; KILN_CAST_NONE for the file */
    uint32_t children_left;
    uint32_t last_child;
    uint32_t ordinals_begin; /* this frame's (id, count) pairs start here in parser.ordinals */
    uint64_t end;            /* where the node (or the file) ends */
} kiln__frame;

typedef struct kiln__ordinal {
    uint32_t id;
    uint32_t count;
} kiln__ordinal;

typedef struct kiln__parser {
    kiln_cast_doc        *doc;
    const uint8_t        *bytes;
    uint64_t              size;
    uint64_t              pos;
    kiln__frame          *stack;    /* stb_ds */
    kiln__ordinal        *ordinals; /* stb_ds */
    const kiln_diag_sink *sink;
    kiln_diag            *err;
    uint32_t              max_depth;
} kiln__parser;

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32); }

static int kiln__id_known(uint32_t id)
{
    switch (id) {
    case KILN_CAST_ID_ROOT: case KILN_CAST_ID_MODEL: case KILN_CAST_ID_MESH: case KILN_CAST_ID_HAIR:
    case KILN_CAST_ID_BLENDSHAPE: case KILN_CAST_ID_SKELETON: case KILN_CAST_ID_BONE:
    case KILN_CAST_ID_IKHANDLE: case KILN_CAST_ID_CONSTRAINT: case KILN_CAST_ID_ANIMATION:
    case KILN_CAST_ID_CURVE: case KILN_CAST_ID_CURVE_MODE_OVERRIDE: case KILN_CAST_ID_NOTIFICATION_TRACK:
    case KILN_CAST_ID_MATERIAL: case KILN_CAST_ID_FILE: case KILN_CAST_ID_COLOR:
    case KILN_CAST_ID_INSTANCE: case KILN_CAST_ID_METADATA:
        return 1;
    default:
        return 0;
    }
}

static kiln_result kiln__fail(kiln__parser *ps, kiln_result code, uint32_t node, const char *prop,
                              uint64_t offset, const char *fmt, ...) KILN__PRINTF(6, 7);
static kiln_result kiln__fail(kiln__parser *ps, kiln_result code, uint32_t node, const char *prop,
                              uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kiln__diag_vfill(ps->err, code, KILN_SEVERITY_ERROR, ps->doc, node, prop, offset, fmt, ap);
    va_end(ap);
    return code;
}

/* Property names are not NUL-terminated; copy a printable, bounded form for messages. */
static const char *kiln__prop_label(char *buf, size_t cap, const uint8_t *name, uint32_t len, uint32_t k)
{
    if (len == 0 || len >= cap) {
        snprintf(buf, cap, "property#%u", k);
        return buf;
    }
    for (uint32_t i = 0; i < len; i++) buf[i] = (name[i] >= 0x20 && name[i] < 0x7F) ? (char)name[i] : '?';
    buf[len] = 0;
    return buf;
}

static uint32_t kiln__next_ordinal(kiln__parser *ps, uint32_t frame, uint32_t id)
{
    for (size_t i = ps->stack[frame].ordinals_begin; i < (size_t)stbds_arrlen(ps->ordinals); i++) {
        if (ps->ordinals[i].id == id) return ps->ordinals[i].count++;
    }
    kiln__ordinal o = {id, 1};
    stbds_arrput(ps->ordinals, o);
    return 0;
}

/* Appends the node header at ps->pos to the tables and links it under the current frame. */
static uint32_t kiln__add_node(kiln__parser *ps, uint32_t frame)
{
    kiln_cast_doc *doc = ps->doc;
    const uint8_t *h = ps->bytes + ps->pos;
    kiln__frame *f = &ps->stack[frame];
    kiln_cast_node n;
    n.id = rd32(h);
    n.flags = kiln__id_known(n.id) ? KILN_CAST_NODE_KNOWN : 0;
    n.hash = rd64(h + 8);
    n.offset = ps->pos;
    n.size = rd32(h + 4);
    n.parent = f->node;
    n.first_prop = (uint32_t)stbds_arrlen(doc->props);
    n.prop_count = 0;
    n.first_child = KILN_CAST_NONE;
    n.next_sibling = KILN_CAST_NONE;
    n.child_count = 0;
    n.ordinal = 0;
    n.depth = frame; /* frame 0 is the file, so a top-level node has depth 0 */
    uint32_t idx = (uint32_t)stbds_arrlen(doc->nodes);
    n.ordinal = kiln__next_ordinal(ps, frame, n.id);
    f = &ps->stack[frame];
    stbds_arrput(doc->nodes, n);
    if (f->node == KILN_CAST_NONE) {
        stbds_arrput(doc->roots, idx);
    } else {
        if (f->last_child == KILN_CAST_NONE) doc->nodes[f->node].first_child = idx;
        else doc->nodes[f->last_child].next_sibling = idx;
        doc->nodes[f->node].child_count++;
    }
    f->last_child = idx;
    return idx;
}

static void kiln__index_hash(kiln_cast_doc *doc, uint32_t idx)
{
    kiln__hash_key key;
    memset(&key, 0, sizeof key);
    key.hash = doc->nodes[idx].hash;
    key.scope = doc->nodes[idx].parent;
    ptrdiff_t at = stbds_hmgeti(doc->hash_index, key);
    if (at >= 0) {
        doc->hash_index[at].value.count++;
    } else {
        kiln__hash_val v = {idx, 1};
        stbds_hmput(doc->hash_index, key, v);
    }
}

/* Reads the properties of node idx, which span [ps->pos, end). Sets *skip when a property
 * cannot be sized, in which case the node is turned opaque and its properties discarded. */
static kiln_result kiln__read_props(kiln__parser *ps, uint32_t idx, uint32_t prop_count, uint64_t end, int *skip)
{
    kiln_cast_doc *doc = ps->doc;
    char label[64];
    uint64_t q = ps->pos;
    for (uint32_t k = 0; k < prop_count; k++) {
        if (end - q < KILN_CAST_PROP_HEADER_SIZE) {
            return kiln__fail(ps, KILN_ERR_CAST_ARRAY_OVERRUN, idx, NULL, q,
                              "header of property %u of %u at offset %llu runs past the node end at %llu",
                              k, prop_count, (unsigned long long)q, (unsigned long long)end);
        }
        const uint8_t *h = ps->bytes + q;
        uint16_t type = rd16(h);
        uint16_t name_len = rd16(h + 2);
        uint32_t count = rd32(h + 4);
        uint64_t name_at = q + KILN_CAST_PROP_HEADER_SIZE;
        if (name_len > end - name_at) {
            return kiln__fail(ps, KILN_ERR_CAST_NAME_OVERRUN, idx, kiln__prop_label(label, sizeof label, NULL, 0, k), q,
                              "name of %u bytes at offset %llu, but the node ends %llu bytes later",
                              name_len, (unsigned long long)name_at, (unsigned long long)(end - name_at));
        }
        const char *name = kiln__prop_label(label, sizeof label, h + 8, name_len, k);
        uint64_t data_at = name_at + name_len;
        uint64_t avail = end - data_at;
        uint64_t bytes;
        if (type == KILN_CAST_TYPE_STRING) {
            const uint8_t *nul = memchr(ps->bytes + data_at, 0, (size_t)avail);
            if (!nul) {
                return kiln__fail(ps, KILN_ERR_CAST_STRING_UNTERMINATED, idx, name, q,
                                  "string starting at offset %llu has no NUL before the node end at %llu",
                                  (unsigned long long)data_at, (unsigned long long)end);
            }
            bytes = (uint64_t)(nul - (ps->bytes + data_at)) + 1;
        } else {
            uint32_t esize = kiln_cast_type_size(type);
            if (esize == 0) {
                kiln__diag_report(ps->sink, KILN_ERR_CAST_UNKNOWN_PROPERTY_TYPE, KILN_SEVERITY_ERROR, doc, idx, name, q,
                                  "type id 0x%04X at offset %llu: the %s node (%u bytes) is skipped with its children",
                                  type, (unsigned long long)q, kiln_cast_id_name(doc->nodes[idx].id), doc->nodes[idx].size);
                stbds_arrsetlen(doc->props, doc->nodes[idx].first_prop);
                doc->nodes[idx].prop_count = 0;
                doc->nodes[idx].flags |= KILN_CAST_NODE_OPAQUE;
                *skip = 1;
                return KILN_OK;
            }
            bytes = (uint64_t)esize * count; /* at most 16 * (2^32 - 1): no overflow in 64 bits */
            if (bytes > avail) {
                return kiln__fail(ps, KILN_ERR_CAST_ARRAY_OVERRUN, idx, name, q,
                                  "%u elements of type '%s' need %llu bytes at offset %llu, but the node has %llu left%s",
                                  count, kiln_cast_type_name(type), (unsigned long long)bytes,
                                  (unsigned long long)data_at, (unsigned long long)avail,
                                  end == ps->size ? " (end of file)" : "");
            }
        }
        kiln_cast_prop p;
        p.name = (const char *)(h + 8);
        p.data = ps->bytes + data_at;
        p.offset = q;
        p.count = count;
        p.bytes = (uint32_t)bytes;
        p.type = type;
        p.name_len = name_len;
        p.node = idx;
        stbds_arrput(doc->props, p);
        doc->nodes[idx].prop_count++;
        q = data_at + bytes;
    }
    ps->pos = q;
    return KILN_OK;
}

/* Reads the node at ps->pos as a child of the top frame and either pushes a frame for its
 * children or leaves ps->pos at its end. */
static kiln_result kiln__read_node(kiln__parser *ps)
{
    kiln_cast_doc *doc = ps->doc;
    uint32_t frame = (uint32_t)stbds_arrlen(ps->stack) - 1;
    uint64_t limit = ps->stack[frame].end;
    uint32_t parent = ps->stack[frame].node;
    uint64_t start = ps->pos;

    if (limit - start < KILN_CAST_NODE_HEADER_SIZE) {
        if (parent == KILN_CAST_NONE && start == ps->size) {
            return kiln__fail(ps, KILN_ERR_CAST_ROOT_COUNT, KILN_CAST_NONE, NULL, 8,
                              "the header declares %u root nodes, the file ends after %u",
                              doc->declared_roots, (uint32_t)stbds_arrlen(doc->roots));
        }
        if (limit == ps->size) {
            return kiln__fail(ps, KILN_ERR_CAST_TRUNCATED, parent, NULL, start,
                              "a node header needs 24 bytes at offset %llu, the file has %llu",
                              (unsigned long long)start, (unsigned long long)(ps->size - start));
        }
        return kiln__fail(ps, KILN_ERR_CAST_NODE_SIZE_MISMATCH, parent, NULL, start,
                          "the node ends at offset %llu before all its %u children (no room for the next header)",
                          (unsigned long long)limit, doc->nodes[parent].child_count + ps->stack[frame].children_left + 1);
    }

    uint32_t idx = kiln__add_node(ps, frame);
    kiln_cast_node *n = &doc->nodes[idx];
    const uint8_t *h = ps->bytes + start;
    uint32_t prop_count = rd32(h + 16);
    uint32_t child_count = rd32(h + 20);

    if (n->size < KILN_CAST_NODE_HEADER_SIZE) {
        return kiln__fail(ps, KILN_ERR_CAST_NODE_TOO_SMALL, idx, NULL, start + 4,
                          "NodeSize %u at offset %llu (it includes the 24-byte header)", n->size,
                          (unsigned long long)(start + 4));
    }
    if (n->size > limit - start) {
        if (parent == KILN_CAST_NONE) {
            return kiln__fail(ps, KILN_ERR_CAST_TRUNCATED, idx, NULL, start + 4,
                              "the node at offset %llu declares %u bytes, the file ends %llu bytes after its start",
                              (unsigned long long)start, n->size, (unsigned long long)(limit - start));
        }
        return kiln__fail(ps, KILN_ERR_CAST_NODE_OVERRUN, idx, NULL, start + 4,
                          "the node at offset %llu declares %u bytes, its parent ends %llu bytes after its start",
                          (unsigned long long)start, n->size, (unsigned long long)(limit - start));
    }
    uint64_t end = start + n->size;

    if (!(n->flags & KILN_CAST_NODE_KNOWN) || (parent == KILN_CAST_NONE && n->id != KILN_CAST_ID_ROOT)) {
        char tag[5];
        for (int i = 0; i < 4; i++) {
            uint8_t c = (uint8_t)(n->id >> (8 * i));
            tag[i] = (c >= 0x20 && c < 0x7F) ? (char)c : '?';
        }
        tag[4] = 0;
        n->flags |= KILN_CAST_NODE_OPAQUE;
        if (n->flags & KILN_CAST_NODE_KNOWN) {
            kiln__diag_report(ps->sink, KILN_ERR_CAST_UNEXPECTED_PARENT, KILN_SEVERITY_WARNING, doc, idx, NULL, start,
                              "top-level %s node (%u bytes) is not a Root: skipped", kiln_cast_id_name(n->id), n->size);
        } else {
            kiln__diag_report(ps->sink, KILN_ERR_CAST_UNKNOWN_NODE, KILN_SEVERITY_WARNING, doc, idx, NULL, start,
                              "id 0x%08X ('%s'), %u bytes skipped", n->id, tag, n->size);
        }
        ps->pos = end;
        return KILN_OK;
    }
    if (frame >= ps->max_depth) {
        return kiln__fail(ps, KILN_ERR_LIMIT, idx, NULL, start, "nesting deeper than %u levels", ps->max_depth);
    }

    uint64_t body = end - start - KILN_CAST_NODE_HEADER_SIZE;
    if ((uint64_t)prop_count * KILN_CAST_PROP_HEADER_SIZE + (uint64_t)child_count * KILN_CAST_NODE_HEADER_SIZE > body) {
        return kiln__fail(ps, KILN_ERR_CAST_COUNT_IMPOSSIBLE, idx, NULL, start + 16,
                          "%u properties and %u children cannot fit in the %llu bytes after the node header",
                          prop_count, child_count, (unsigned long long)body);
    }

    ps->pos = start + KILN_CAST_NODE_HEADER_SIZE;
    int skip = 0;
    kiln_result r = kiln__read_props(ps, idx, prop_count, end, &skip);
    if (r != KILN_OK) return r;
    if (skip) {
        ps->pos = end;
        return KILN_OK;
    }
    kiln__index_hash(doc, idx);
    if (child_count > 0) {
        kiln__frame f = {idx, child_count, KILN_CAST_NONE, (uint32_t)stbds_arrlen(ps->ordinals), end};
        stbds_arrput(ps->stack, f);
        return KILN_OK;
    }
    if (ps->pos != end) {
        return kiln__fail(ps, KILN_ERR_CAST_NODE_SIZE_MISMATCH, idx, NULL, ps->pos,
                          "properties end at offset %llu but NodeSize %u ends the node at %llu",
                          (unsigned long long)ps->pos, doc->nodes[idx].size, (unsigned long long)end);
    }
    return KILN_OK;
}

static kiln_result kiln__parse_body(kiln__parser *ps)
{
    kiln__frame top = {KILN_CAST_NONE, ps->doc->declared_roots, KILN_CAST_NONE, 0, ps->size};
    stbds_arrput(ps->stack, top);
    ps->pos = KILN_CAST_HEADER_SIZE;
    while (stbds_arrlen(ps->stack) > 0) {
        kiln__frame *f = &stbds_arrlast(ps->stack);
        if (f->children_left == 0) {
            if (f->node != KILN_CAST_NONE && ps->pos != f->end) {
                return kiln__fail(ps, KILN_ERR_CAST_NODE_SIZE_MISMATCH, f->node, NULL, ps->pos,
                                  "children end at offset %llu but NodeSize %u ends the node at %llu",
                                  (unsigned long long)ps->pos, ps->doc->nodes[f->node].size,
                                  (unsigned long long)f->end);
            }
            stbds_arrsetlen(ps->ordinals, f->ordinals_begin);
            (void)stbds_arrpop(ps->stack);
            continue;
        }
        f->children_left--;
        kiln_result r = kiln__read_node(ps);
        if (r != KILN_OK) return r;
    }
    if (ps->pos < ps->size) {
        kiln__diag_report(ps->sink, KILN_ERR_CAST_TRAILING_BYTES, KILN_SEVERITY_WARNING, ps->doc, KILN_CAST_NONE, NULL,
                          ps->pos, "%llu bytes after the last root node (offset %llu) ignored",
                          (unsigned long long)(ps->size - ps->pos), (unsigned long long)ps->pos);
    }
    return KILN_OK;
}

static kiln_result kiln__parse_header(kiln__parser *ps)
{
    kiln_cast_doc *doc = ps->doc;
    if (ps->size < KILN_CAST_HEADER_SIZE) {
        return kiln__fail(ps, KILN_ERR_CAST_TRUNCATED_HEADER, KILN_CAST_NONE, NULL, 0,
                          "the file has %llu bytes", (unsigned long long)ps->size);
    }
    uint32_t magic = rd32(ps->bytes);
    if (magic != KILN_CAST_MAGIC) {
        return kiln__fail(ps, KILN_ERR_CAST_BAD_MAGIC, KILN_CAST_NONE, NULL, 0,
                          "found 0x%08X at offset 0, expected 0x%08X ('cast')", magic, KILN_CAST_MAGIC);
    }
    doc->version = rd32(ps->bytes + 4);
    doc->declared_roots = rd32(ps->bytes + 8);
    doc->flags = rd32(ps->bytes + 12);
    if (doc->version != 1 || doc->flags != 0) {
        kiln__diag_report(ps->sink, KILN_ERR_CAST_VERSION, KILN_SEVERITY_WARNING, doc, KILN_CAST_NONE, NULL, 4,
                          "version %u, flags 0x%08X (expected 1 and 0); reading on", doc->version, doc->flags);
    }
    return KILN_OK;
}

/* setjmp lives in its own frame so that the parser state, owned by the caller, is never a
 * local modified between setjmp and longjmp (which would make it indeterminate). */
static kiln_result kiln__parse_guarded(kiln__parser *ps, kiln__ds_ctx *ctx)
{
    if (setjmp(ctx->oom) != 0) {
        return kiln__fail(ps, KILN_ERR_OUT_OF_MEMORY, KILN_CAST_NONE, NULL, ps->pos,
                          "while reading the node tables (at offset %llu)", (unsigned long long)ps->pos);
    }
    kiln_result r = kiln__parse_header(ps);
    if (r == KILN_OK) r = kiln__parse_body(ps);
    return r;
}

static void kiln__doc_release(kiln_cast_doc *doc)
{
    stbds_arrfree(doc->nodes);
    stbds_arrfree(doc->props);
    stbds_arrfree(doc->roots);
    stbds_hmfree(doc->hash_index);
}

kiln_result kiln_cast_parse(const void *data, size_t size, const kiln_cast_parse_options *options,
                            kiln_cast_doc **out_doc, kiln_diag *err)
{
    static const kiln_diag_sink no_sink = {NULL, NULL};
    if (err) kiln__diag_fill(err, KILN_OK, KILN_SEVERITY_INFO, NULL, KILN_CAST_NONE, NULL, KILN_NO_OFFSET, "%s", "");
    if (!out_doc) return KILN_ERR_INVALID_ARGUMENT;
    *out_doc = NULL;
    if (!data && size) return KILN_ERR_INVALID_ARGUMENT;

    const kiln_allocator *alloc = options ? options->allocator : NULL;
    kiln_cast_doc *doc = kiln__realloc(alloc, NULL, sizeof *doc);
    if (!doc) {
        if (err) kiln__diag_fill(err, KILN_ERR_OUT_OF_MEMORY, KILN_SEVERITY_ERROR, NULL, KILN_CAST_NONE, NULL,
                                 KILN_NO_OFFSET, "document header");
        return KILN_ERR_OUT_OF_MEMORY;
    }
    memset(doc, 0, sizeof *doc);
    if (alloc) doc->alloc = *alloc;
    doc->data = data;
    doc->size = size;

    kiln__parser ps;
    memset(&ps, 0, sizeof ps);
    ps.doc = doc;
    ps.bytes = data;
    ps.size = size;
    ps.sink = options ? &options->diag : &no_sink;
    ps.err = err;
    ps.max_depth = options && options->max_depth ? options->max_depth : 256;

    kiln__ds_ctx ctx;
    kiln__ds_enter(&ctx, alloc);
    kiln_result r = kiln__parse_guarded(&ps, &ctx);
    stbds_arrfree(ps.stack);
    stbds_arrfree(ps.ordinals);
    if (r != KILN_OK) kiln__doc_release(doc);
    kiln__ds_leave(&ctx);

    if (r != KILN_OK) {
        kiln__free(alloc, doc);
        return r;
    }
    *out_doc = doc;
    return KILN_OK;
}

void kiln_cast_free(kiln_cast_doc *doc)
{
    if (!doc) return;
    kiln__ds_ctx ctx;
    kiln_allocator alloc = doc->alloc;
    kiln__ds_enter(&ctx, &alloc);
    kiln__doc_release(doc);
    kiln__ds_leave(&ctx);
    kiln__free(&alloc, doc);
}
