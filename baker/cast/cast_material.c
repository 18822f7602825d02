/* Typed views of Material, File and Color nodes (Cast reference B, C.6). */
#include <string.h>

#include "cast_scene_util.h"

/* Slots are found by scanning the material's properties for later ones of the same name
 * (quadratic), so only this many properties are considered. Real materials have a dozen. */
#define KILN__MAX_SLOT_PROPS 256u

static int kiln__name_is(const kiln_cast_prop *p, const char *name)
{
    size_t len = strlen(name);
    return p->name_len == len && memcmp(p->name, name, len) == 0;
}

static int kiln__same_name(const kiln_cast_prop *a, const kiln_cast_prop *b)
{
    return a->name_len == b->name_len && memcmp(a->name, b->name, a->name_len) == 0;
}

static uint32_t kiln__slot_limit(const kiln_cast_node *n)
{
    return n->prop_count < KILN__MAX_SLOT_PROPS ? n->prop_count : KILN__MAX_SLOT_PROPS;
}

/* Property k is a slot unless it is `n` or `t`, or a later property has its name (the last
 * one wins, as in the reference reader's dict). *shadowed tells the latter case apart. */
static int kiln__is_slot(const kiln__rd *rd, uint32_t k, int *shadowed)
{
    const kiln_cast_prop *p = kiln_cast_prop_at(rd->doc, rd->node, k);
    *shadowed = 0;
    if (kiln__name_is(p, "n") || kiln__name_is(p, "t")) return 0;
    for (uint32_t j = k + 1; j < kiln__slot_limit(rd->n); j++) {
        if (kiln__same_name(p, kiln_cast_prop_at(rd->doc, rd->node, j))) {
            *shadowed = 1;
            return 0;
        }
    }
    return 1;
}

/* A printable, NUL-terminated copy of a slot name for reports. */
static const char *kiln__slot_label(const kiln_cast_prop *p, char *buf, size_t cap)
{
    size_t len = p->name_len < cap - 1 ? p->name_len : cap - 1;
    for (size_t i = 0; i < len; i++) buf[i] = (p->name[i] >= 0x20 && p->name[i] < 0x7F) ? p->name[i] : '?';
    buf[len] = 0;
    return buf;
}

static uint32_t kiln__count_slots(const kiln__rd *rd)
{
    uint32_t count = 0;
    int shadowed;
    char label[64];
    for (uint32_t k = 0; k < kiln__slot_limit(rd->n); k++) {
        count += (uint32_t)kiln__is_slot(rd, k, &shadowed);
        if (shadowed) {
            const kiln_cast_prop *p = kiln_cast_prop_at(rd->doc, rd->node, k);
            kiln__report(rd, kiln__slot_label(p, label, sizeof label), p, KILN_ERR_CAST_DUPLICATE,
                         KILN_SEVERITY_WARNING, "slot '%s' appears again later; the last one is used", label);
        }
    }
    if (rd->n->prop_count > KILN__MAX_SLOT_PROPS) {
        kiln__report(rd, NULL, NULL, KILN_ERR_LIMIT, KILN_SEVERITY_ERROR,
                     "%u properties; only the first %u are read as slots", rd->n->prop_count, KILN__MAX_SLOT_PROPS);
    }
    return count;
}

static kiln_result kiln__read_material(const kiln__rd *rd, kiln_cast_material *m)
{
    kiln__str(rd, "n", KILN__OPTIONAL, &m->name);
    if (!m->name) {
        kiln__report(rd, "n", NULL, KILN_ERR_CAST_MISSING_PROPERTY, KILN_SEVERITY_WARNING,
                     "material without a name; it is called material%u", rd->n->ordinal);
    }
    kiln__str(rd, "t", KILN__OPTIONAL, &m->type);
    if (!m->type) {
        kiln__report(rd, "t", NULL, KILN_ERR_CAST_MISSING_PROPERTY, KILN_SEVERITY_WARNING,
                     "material without a type; it is read as a basic material");
    }
    m->slot_count = kiln__count_slots(rd);
    return KILN_OK;
}

kiln_result kiln_cast_get_material(const kiln_cast_doc *doc, uint32_t node, kiln_cast_material *out,
                                   const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_MATERIAL, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_material(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}

static kiln_result kiln__read_slot(const kiln__rd *rd, uint32_t k, kiln_cast_material_slot *s)
{
    uint32_t j, limit = kiln__slot_limit(rd->n);
    int shadowed;
    char label[64];
    for (j = 0; j < limit; j++) {
        if (kiln__is_slot(rd, j, &shadowed) && k-- == 0) break;
    }
    if (j == limit) return KILN_ERR_NOT_FOUND;
    const kiln_cast_prop *p = kiln_cast_prop_at(rd->doc, rd->node, j);
    kiln__slot_label(p, label, sizeof label);
    if (!(kiln__type_bit(p->type) & KILN__T_INT) || p->count == 0) {
        kiln_result code = p->count == 0 ? KILN_ERR_CAST_EMPTY : KILN_ERR_CAST_WRONG_TYPE;
        kiln__report(rd, label, p, code, KILN_SEVERITY_ERROR, "slot stored as '%s' with %u elements, expected one "
                     "integer hash; the slot is dropped", kiln_cast_type_name(p->type), p->count);
        return code;
    }
    if (p->count > 1) {
        kiln__report(rd, label, p, KILN_ERR_CAST_LENGTH_MISMATCH, KILN_SEVERITY_WARNING,
                     "single value stored with %u elements; element 0 used", p->count);
    }
    s->name = p->name;
    s->name_len = p->name_len;
    s->hash = kiln_cast_prop_u64(p, 0);
    kiln__resolve(rd, label, p, s->hash, KILN__OPTIONAL, rd->node, KILN_CAST_ID_FILE, KILN_CAST_ID_COLOR, &s->node);
    s->id = s->node != KILN_CAST_NONE ? kiln_cast_node_at(rd->doc, s->node)->id : 0;
    return KILN_OK;
}

kiln_result kiln_cast_get_material_slot(const kiln_cast_doc *doc, uint32_t material, uint32_t k,
                                        kiln_cast_material_slot *out, const kiln_diag_sink *sink)
{
    if (!out) return KILN_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->node = KILN_CAST_NONE;
    const kiln_cast_node *n = doc ? kiln_cast_node_at(doc, material) : NULL;
    if (!n || n->id != KILN_CAST_ID_MATERIAL) return kiln__finish(KILN_ERR_INVALID_ARGUMENT, out, sizeof *out);
    if (n->flags & KILN_CAST_NODE_OPAQUE) return kiln__finish(KILN_ERR_CAST_UNKNOWN_PROPERTY_TYPE, out, sizeof *out);
    /* No kiln__begin: the material's own checks were reported by kiln_cast_get_material. */
    kiln__rd rd = {doc, n, material, sink};
    return kiln__finish(kiln__read_slot(&rd, k, out), out, sizeof *out);
}

kiln_result kiln_cast_get_file(const kiln_cast_doc *doc, uint32_t node, kiln_cast_file *out,
                               const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_FILE, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__str(&rd, "p", KILN__REQUIRED, &out->path);
    return kiln__finish(r, out, sizeof *out);
}

static const char *const kiln__color_space_names[] = {"srgb", "linear"};

static kiln_result kiln__read_color(const kiln__rd *rd, kiln_cast_color *c)
{
    const kiln_cast_prop *rgba;
    kiln_result r = kiln__value(rd, "rgba", KILN__TV4, KILN__REQUIRED, &rgba);
    if (r != KILN_OK) return r;
    kiln_cast_prop_vec(rgba, 0, 4, c->rgba);
    kiln__str(rd, "n", KILN__OPTIONAL, &c->name);
    int space = KILN_CAST_COLOR_SRGB;
    kiln__enum(rd, "cs", kiln__color_space_names, 2, KILN__OPTIONAL, KILN_CAST_COLOR_SRGB, &space);
    c->color_space = (kiln_cast_color_space)space;
    return KILN_OK;
}

kiln_result kiln_cast_get_color(const kiln_cast_doc *doc, uint32_t node, kiln_cast_color *out,
                                const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_COLOR, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_color(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}
