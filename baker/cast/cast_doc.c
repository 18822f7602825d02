/* Queries over a parsed Cast document: nodes, children, scoped hashes, properties, paths. */
#include <stdio.h>
#include <string.h>

#include "cast_doc.h"
#include "ds.h"

uint32_t kiln_cast_version(const kiln_cast_doc *doc) { return doc->version; }
uint32_t kiln_cast_root_count(const kiln_cast_doc *doc) { return (uint32_t)stbds_arrlen(doc->roots); }
const void *kiln_cast_data(const kiln_cast_doc *doc) { return doc->data; }
size_t kiln_cast_size(const kiln_cast_doc *doc) { return doc->size; }
uint32_t kiln_cast_node_count(const kiln_cast_doc *doc) { return (uint32_t)stbds_arrlen(doc->nodes); }

const kiln_cast_node *kiln_cast_node_at(const kiln_cast_doc *doc, uint32_t node)
{
    if (!doc || node >= (uint32_t)stbds_arrlen(doc->nodes)) return NULL;
    return &doc->nodes[node];
}

uint32_t kiln_cast_root(const kiln_cast_doc *doc, uint32_t k)
{
    if (k >= (uint32_t)stbds_arrlen(doc->roots)) return KILN_CAST_NONE;
    return doc->roots[k];
}

uint32_t kiln_cast_child(const kiln_cast_doc *doc, uint32_t node, uint32_t id, uint32_t k)
{
    const kiln_cast_node *n = kiln_cast_node_at(doc, node);
    if (!n) return KILN_CAST_NONE;
    for (uint32_t c = n->first_child; c != KILN_CAST_NONE; c = doc->nodes[c].next_sibling) {
        if ((id == 0 || doc->nodes[c].id == id) && k-- == 0) return c;
    }
    return KILN_CAST_NONE;
}

uint32_t kiln_cast_child_count(const kiln_cast_doc *doc, uint32_t node, uint32_t id)
{
    const kiln_cast_node *n = kiln_cast_node_at(doc, node);
    if (!n) return 0;
    if (id == 0) return n->child_count;
    uint32_t count = 0;
    for (uint32_t c = n->first_child; c != KILN_CAST_NONE; c = doc->nodes[c].next_sibling) {
        count += doc->nodes[c].id == id;
    }
    return count;
}

static const kiln__hash_val *kiln__hash_lookup(const kiln_cast_doc *doc, uint32_t scope, uint64_t hash)
{
    kiln__hash_key key;
    memset(&key, 0, sizeof key);
    key.hash = hash;
    key.scope = scope;
    kiln__hash_entry *index = doc->hash_index; /* stb_ds lookups take a non-const table */
    ptrdiff_t at = stbds_hmgeti(index, key);
    return at >= 0 ? &index[at].value : NULL;
}

uint32_t kiln_cast_find_hash(const kiln_cast_doc *doc, uint32_t scope, uint64_t hash)
{
    const kiln__hash_val *v = kiln__hash_lookup(doc, scope, hash);
    return v ? v->first : KILN_CAST_NONE;
}

uint32_t kiln_cast_hash_count(const kiln_cast_doc *doc, uint32_t scope, uint64_t hash)
{
    const kiln__hash_val *v = kiln__hash_lookup(doc, scope, hash);
    return v ? v->count : 0;
}

const kiln_cast_prop *kiln_cast_prop_at(const kiln_cast_doc *doc, uint32_t node, uint32_t k)
{
    const kiln_cast_node *n = kiln_cast_node_at(doc, node);
    if (!n || k >= n->prop_count) return NULL;
    return &doc->props[n->first_prop + k];
}

const kiln_cast_prop *kiln_cast_find_prop(const kiln_cast_doc *doc, uint32_t node, const char *name,
                                          uint32_t *dup_count)
{
    const kiln_cast_node *n = kiln_cast_node_at(doc, node);
    const kiln_cast_prop *found = NULL;
    uint32_t hits = 0;
    if (n && name && n->prop_count) {
        size_t len = strlen(name);
        const kiln_cast_prop *p = doc->props + n->first_prop;
        for (uint32_t k = 0; k < n->prop_count; k++, p++) {
            if (p->name_len == len && memcmp(p->name, name, len) == 0) {
                found = p; /* the last occurrence wins, as in the reference reader */
                hits++;
            }
        }
    }
    if (dup_count) *dup_count = hits;
    return found;
}

uint32_t kiln_cast_type_size(uint16_t type)
{
    switch (type) {
    case KILN_CAST_TYPE_BYTE: return 1;
    case KILN_CAST_TYPE_SHORT: return 2;
    case KILN_CAST_TYPE_INT: return 4;
    case KILN_CAST_TYPE_LONG: return 8;
    case KILN_CAST_TYPE_FLOAT: return 4;
    case KILN_CAST_TYPE_DOUBLE: return 8;
    case KILN_CAST_TYPE_VEC2: return 8;
    case KILN_CAST_TYPE_VEC3: return 12;
    case KILN_CAST_TYPE_VEC4: return 16;
    default: return 0;
    }
}

const char *kiln_cast_type_name(uint16_t type)
{
    switch (type) {
    case KILN_CAST_TYPE_BYTE: return "b";
    case KILN_CAST_TYPE_SHORT: return "h";
    case KILN_CAST_TYPE_INT: return "i";
    case KILN_CAST_TYPE_LONG: return "l";
    case KILN_CAST_TYPE_FLOAT: return "f";
    case KILN_CAST_TYPE_DOUBLE: return "d";
    case KILN_CAST_TYPE_STRING: return "s";
    case KILN_CAST_TYPE_VEC2: return "v2";
    case KILN_CAST_TYPE_VEC3: return "v3";
    case KILN_CAST_TYPE_VEC4: return "v4";
    default: return "?";
    }
}

const char *kiln_cast_id_name(uint32_t id)
{
    switch (id) {
    case KILN_CAST_ID_ROOT: return "Root";
    case KILN_CAST_ID_MODEL: return "Model";
    case KILN_CAST_ID_MESH: return "Mesh";
    case KILN_CAST_ID_HAIR: return "Hair";
    case KILN_CAST_ID_BLENDSHAPE: return "BlendShape";
    case KILN_CAST_ID_SKELETON: return "Skeleton";
    case KILN_CAST_ID_BONE: return "Bone";
    case KILN_CAST_ID_IKHANDLE: return "IKHandle";
    case KILN_CAST_ID_CONSTRAINT: return "Constraint";
    case KILN_CAST_ID_ANIMATION: return "Animation";
    case KILN_CAST_ID_CURVE: return "Curve";
    case KILN_CAST_ID_CURVE_MODE_OVERRIDE: return "CurveModeOverride";
    case KILN_CAST_ID_NOTIFICATION_TRACK: return "NotificationTrack";
    case KILN_CAST_ID_MATERIAL: return "Material";
    case KILN_CAST_ID_FILE: return "File";
    case KILN_CAST_ID_COLOR: return "Color";
    case KILN_CAST_ID_INSTANCE: return "Instance";
    case KILN_CAST_ID_METADATA: return "Metadata";
    default: return "Unknown";
    }
}

/* Unaligned little-endian loads; memcpy keeps them defined on any alignment and compiles to a
 * plain load on little-endian targets. */
static uint64_t kiln__le(const uint8_t *p, uint32_t size)
{
    uint64_t v = 0;
    for (uint32_t i = 0; i < size; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

uint64_t kiln_cast_prop_u64(const kiln_cast_prop *p, uint32_t i)
{
    uint32_t size = kiln_cast_type_size(p->type);
    if (i >= p->count || (uint64_t)(i + 1) * size > p->bytes) return 0;
    const uint8_t *at = (const uint8_t *)p->data + (size_t)i * size;
    switch (p->type) {
    case KILN_CAST_TYPE_BYTE: case KILN_CAST_TYPE_SHORT: case KILN_CAST_TYPE_INT: case KILN_CAST_TYPE_LONG:
        return kiln__le(at, size);
    case KILN_CAST_TYPE_FLOAT: case KILN_CAST_TYPE_DOUBLE: {
        double d = kiln_cast_prop_f64(p, i);
        return d > 0 && d < 18446744073709551616.0 ? (uint64_t)d : 0;
    }
    default:
        return 0;
    }
}

double kiln_cast_prop_f64(const kiln_cast_prop *p, uint32_t i)
{
    uint32_t size = kiln_cast_type_size(p->type);
    if (i >= p->count || (uint64_t)(i + 1) * size > p->bytes) return 0.0;
    const uint8_t *at = (const uint8_t *)p->data + (size_t)i * size;
    switch (p->type) {
    case KILN_CAST_TYPE_FLOAT: case KILN_CAST_TYPE_VEC2: case KILN_CAST_TYPE_VEC3: case KILN_CAST_TYPE_VEC4: {
        uint32_t bits = (uint32_t)kiln__le(at, 4);
        float f;
        memcpy(&f, &bits, sizeof f);
        return f;
    }
    case KILN_CAST_TYPE_DOUBLE: {
        uint64_t bits = kiln__le(at, 8);
        double d;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    case KILN_CAST_TYPE_BYTE: case KILN_CAST_TYPE_SHORT: case KILN_CAST_TYPE_INT: case KILN_CAST_TYPE_LONG:
        return (double)kiln__le(at, size);
    default:
        return 0.0;
    }
}

void kiln_cast_prop_vec(const kiln_cast_prop *p, uint32_t i, uint32_t comps, float *out)
{
    uint32_t have = p->type == KILN_CAST_TYPE_VEC2 ? 2 : p->type == KILN_CAST_TYPE_VEC3 ? 3
                  : p->type == KILN_CAST_TYPE_VEC4 ? 4 : 1;
    uint32_t size = kiln_cast_type_size(p->type);
    int ok = i < p->count && size && (uint64_t)(i + 1) * size <= p->bytes;
    for (uint32_t c = 0; c < comps; c++) {
        if (!ok || c >= have) {
            out[c] = 0.0f;
        } else if (have == 1) {
            out[c] = (float)kiln_cast_prop_f64(p, i);
        } else {
            const uint8_t *at = (const uint8_t *)p->data + (size_t)i * size + 4u * c;
            uint32_t bits = (uint32_t)kiln__le(at, 4);
            memcpy(&out[c], &bits, sizeof(float));
        }
    }
}

const char *kiln_cast_prop_str(const kiln_cast_prop *p)
{
    return p && p->type == KILN_CAST_TYPE_STRING ? (const char *)p->data : NULL;
}

char *kiln_cast_node_path(const kiln_cast_doc *doc, uint32_t node, char *buf, size_t cap)
{
    if (!cap) return buf;
    buf[0] = 0;
    uint32_t chain[64];
    uint32_t depth = 0, skipped = 0;
    for (uint32_t n = node; n != KILN_CAST_NONE && n < (uint32_t)stbds_arrlen(doc->nodes); n = doc->nodes[n].parent) {
        if (depth < 64) chain[depth++] = n;
        else skipped++;
    }
    size_t len = 0;
    if (skipped) len += (size_t)snprintf(buf, cap, ".../");
    while (depth-- > 0 && len < cap) {
        const kiln_cast_node *n = &doc->nodes[chain[depth]];
        int w;
        if (n->flags & KILN_CAST_NODE_KNOWN) {
            w = snprintf(buf + len, cap - len, "%s%s[%u]", len && buf[len - 1] != '/' ? "/" : "",
                         kiln_cast_id_name(n->id), n->ordinal);
        } else {
            w = snprintf(buf + len, cap - len, "%sUnknown(0x%08X)[%u]", len && buf[len - 1] != '/' ? "/" : "",
                         n->id, n->ordinal);
        }
        if (w < 0) break;
        len += (size_t)w;
    }
    return buf;
}
