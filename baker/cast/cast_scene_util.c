/* Shared plumbing of the typed Cast accessors: see cast_scene_util.h for the policy. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cast_scene_util.h"

uint32_t kiln__type_bit(uint16_t type)
{
    switch (type) {
    case KILN_CAST_TYPE_BYTE: return KILN__TB;
    case KILN_CAST_TYPE_SHORT: return KILN__TH;
    case KILN_CAST_TYPE_INT: return KILN__TI;
    case KILN_CAST_TYPE_LONG: return KILN__TL;
    case KILN_CAST_TYPE_FLOAT: return KILN__TF;
    case KILN_CAST_TYPE_DOUBLE: return KILN__TD;
    case KILN_CAST_TYPE_STRING: return KILN__TS;
    case KILN_CAST_TYPE_VEC2: return KILN__TV2;
    case KILN_CAST_TYPE_VEC3: return KILN__TV3;
    case KILN_CAST_TYPE_VEC4: return KILN__TV4;
    default: return 0;
    }
}

uint16_t kiln__type_comps(uint16_t type)
{
    switch (type) {
    case KILN_CAST_TYPE_VEC2: return 2;
    case KILN_CAST_TYPE_VEC3: return 3;
    case KILN_CAST_TYPE_VEC4: return 4;
    default: return 1;
    }
}

/* "b/h/i/l" style list of the types in a set, for messages. */
static const char *kiln__type_set_name(uint32_t types, char *buf, size_t cap)
{
    static const uint16_t all[] = {KILN_CAST_TYPE_BYTE, KILN_CAST_TYPE_SHORT, KILN_CAST_TYPE_INT,
                                   KILN_CAST_TYPE_LONG, KILN_CAST_TYPE_FLOAT, KILN_CAST_TYPE_DOUBLE,
                                   KILN_CAST_TYPE_STRING, KILN_CAST_TYPE_VEC2, KILN_CAST_TYPE_VEC3,
                                   KILN_CAST_TYPE_VEC4};
    size_t len = 0;
    buf[0] = 0;
    for (size_t k = 0; k < sizeof all / sizeof all[0] && len < cap; k++) {
        if (!(types & kiln__type_bit(all[k]))) continue;
        int w = snprintf(buf + len, cap - len, "%s%s", len ? "/" : "", kiln_cast_type_name(all[k]));
        if (w < 0) break;
        len += (size_t)w;
    }
    return buf;
}

/* The parents the format allows for each kind (reference section B). */
static int kiln__parent_allowed(uint32_t id, uint32_t parent)
{
    switch (id) {
    case KILN_CAST_ID_MODEL: case KILN_CAST_ID_ANIMATION: case KILN_CAST_ID_INSTANCE: case KILN_CAST_ID_METADATA:
        return parent == KILN_CAST_ID_ROOT;
    case KILN_CAST_ID_MESH: case KILN_CAST_ID_HAIR: case KILN_CAST_ID_BLENDSHAPE: case KILN_CAST_ID_MATERIAL:
        return parent == KILN_CAST_ID_MODEL;
    case KILN_CAST_ID_SKELETON:
        return parent == KILN_CAST_ID_MODEL || parent == KILN_CAST_ID_ANIMATION;
    case KILN_CAST_ID_BONE: case KILN_CAST_ID_IKHANDLE: case KILN_CAST_ID_CONSTRAINT:
        return parent == KILN_CAST_ID_SKELETON;
    case KILN_CAST_ID_CURVE: case KILN_CAST_ID_CURVE_MODE_OVERRIDE: case KILN_CAST_ID_NOTIFICATION_TRACK:
        return parent == KILN_CAST_ID_ANIMATION;
    case KILN_CAST_ID_FILE:
        return parent == KILN_CAST_ID_MATERIAL || parent == KILN_CAST_ID_INSTANCE;
    case KILN_CAST_ID_COLOR:
        return parent == KILN_CAST_ID_MATERIAL;
    default:
        return 1;
    }
}

kiln_result kiln__begin(kiln__rd *rd, const kiln_cast_doc *doc, uint32_t node, uint32_t id,
                        const kiln_diag_sink *sink, void *out, size_t out_size)
{
    memset(rd, 0, sizeof *rd);
    if (!out) return KILN_ERR_INVALID_ARGUMENT;
    memset(out, 0, out_size);
    const kiln_cast_node *n = doc ? kiln_cast_node_at(doc, node) : NULL;
    if (!n || n->id != id) return KILN_ERR_INVALID_ARGUMENT;
    rd->doc = doc;
    rd->n = n;
    rd->node = node;
    rd->sink = sink;
    if (n->flags & KILN_CAST_NODE_OPAQUE) {
        return n->parent == KILN_CAST_NONE ? KILN_ERR_CAST_UNEXPECTED_PARENT : KILN_ERR_CAST_UNKNOWN_PROPERTY_TYPE;
    }
    const kiln_cast_node *parent = kiln_cast_node_at(doc, n->parent);
    if (parent && !kiln__parent_allowed(id, parent->id)) {
        kiln__report(rd, NULL, NULL, KILN_ERR_CAST_UNEXPECTED_PARENT, KILN_SEVERITY_WARNING,
                     "a %s does not belong under a %s; read anyway", kiln_cast_id_name(id),
                     kiln_cast_id_name(parent->id));
    }
    return KILN_OK;
}

kiln_result kiln__finish(kiln_result r, void *out, size_t out_size)
{
    if (r != KILN_OK && out) memset(out, 0, out_size);
    return r;
}

void kiln__report(const kiln__rd *rd, const char *prop, const kiln_cast_prop *p, kiln_result code,
                  kiln_severity sev, const char *fmt, ...)
{
    if (!rd->sink || !rd->sink->fn) return;
    kiln_diag d;
    va_list ap;
    va_start(ap, fmt);
    kiln__diag_vfill(&d, code, sev, rd->doc, rd->node, prop, p ? p->offset : rd->n->offset, fmt, ap);
    va_end(ap);
    rd->sink->fn(rd->sink->user, &d);
}

kiln_result kiln__prop(const kiln__rd *rd, const char *name, uint32_t types, kiln__need need,
                       const kiln_cast_prop **out)
{
    uint32_t dups = 0;
    const kiln_cast_prop *p = kiln_cast_find_prop(rd->doc, rd->node, name, &dups);
    *out = NULL;
    if (!p) {
        if (need == KILN__OPTIONAL) return KILN_OK;
        kiln__report(rd, name, NULL, KILN_ERR_CAST_MISSING_PROPERTY, KILN_SEVERITY_ERROR,
                     "the %s has no '%s'; it is dropped", kiln_cast_id_name(rd->n->id), name);
        return KILN_ERR_CAST_MISSING_PROPERTY;
    }
    if (dups > 1) {
        kiln__report(rd, name, p, KILN_ERR_CAST_DUPLICATE, KILN_SEVERITY_WARNING,
                     "'%s' appears %u times; the last one is used", name, dups);
    }
    if (!(kiln__type_bit(p->type) & types)) {
        char want[48];
        kiln__type_set_name(types, want, sizeof want);
        if (need == KILN__OPTIONAL) {
            kiln__report(rd, name, p, KILN_ERR_CAST_WRONG_TYPE, KILN_SEVERITY_WARNING,
                         "stored as '%s', expected %s; ignored", kiln_cast_type_name(p->type), want);
            return KILN_OK;
        }
        kiln__report(rd, name, p, KILN_ERR_CAST_WRONG_TYPE, KILN_SEVERITY_ERROR,
                     "stored as '%s', expected %s; the %s is dropped", kiln_cast_type_name(p->type), want,
                     kiln_cast_id_name(rd->n->id));
        return KILN_ERR_CAST_WRONG_TYPE;
    }
    *out = p;
    return KILN_OK;
}

kiln_result kiln__value(const kiln__rd *rd, const char *name, uint32_t types, kiln__need need,
                        const kiln_cast_prop **out)
{
    kiln_result r = kiln__prop(rd, name, types, need, out);
    const kiln_cast_prop *p = *out;
    if (r != KILN_OK || !p) return r;
    if (p->type == KILN_CAST_TYPE_STRING) {
        /* Readers take exactly one NUL-terminated string whatever ArrayLength says. */
        if (p->count != 1) {
            kiln__report(rd, name, p, KILN_ERR_CAST_LENGTH_MISMATCH, KILN_SEVERITY_WARNING,
                         "string with ArrayLength %u; one string read", p->count);
        }
        return KILN_OK;
    }
    if (p->count == 0) {
        *out = NULL;
        if (need == KILN__REQUIRED) {
            kiln__report(rd, name, p, KILN_ERR_CAST_EMPTY, KILN_SEVERITY_ERROR, "no value; the %s is dropped",
                         kiln_cast_id_name(rd->n->id));
            return KILN_ERR_CAST_EMPTY;
        }
        kiln__report(rd, name, p, KILN_ERR_CAST_EMPTY, KILN_SEVERITY_WARNING, "no value; the default is used");
        return KILN_OK;
    }
    if (p->count > 1) {
        kiln__report(rd, name, p, KILN_ERR_CAST_LENGTH_MISMATCH, KILN_SEVERITY_WARNING,
                     "single value stored with %u elements; element 0 used", p->count);
    }
    return KILN_OK;
}

kiln_result kiln__str(const kiln__rd *rd, const char *name, kiln__need need, const char **out)
{
    const kiln_cast_prop *p;
    kiln_result r = kiln__value(rd, name, KILN__TS, need, &p);
    if (p) *out = kiln_cast_prop_str(p);
    return r;
}

kiln_result kiln__uint(const kiln__rd *rd, const char *name, kiln__need need, uint64_t *out)
{
    const kiln_cast_prop *p;
    kiln_result r = kiln__value(rd, name, KILN__T_INT, need, &p);
    if (p) *out = kiln_cast_prop_u64(p, 0);
    return r;
}

int kiln__uint_opt(const kiln__rd *rd, const char *name, uint64_t *out)
{
    const kiln_cast_prop *p;
    kiln__value(rd, name, KILN__T_INT, KILN__OPTIONAL, &p);
    if (p) *out = kiln_cast_prop_u64(p, 0);
    return p != NULL;
}

uint32_t kiln__count_opt(const kiln__rd *rd, const char *name, uint32_t max)
{
    uint64_t v = 0;
    if (!kiln__uint_opt(rd, name, &v) || v <= max) return (uint32_t)v;
    kiln__report(rd, name, kiln_cast_find_prop(rd->doc, rd->node, name, NULL), KILN_ERR_LIMIT,
                 KILN_SEVERITY_ERROR, "%llu exceeds the limit of %u; %u used", (unsigned long long)v, max, max);
    return max;
}

uint32_t kiln__flag(const kiln__rd *rd, const char *name, uint32_t def)
{
    uint64_t v = def;
    kiln__uint_opt(rd, name, &v);
    return v != 0;
}

/* Reads an optional f/d value as float; NULL *p when absent. */
static double kiln__real(const kiln__rd *rd, const char *name, const kiln_cast_prop **p)
{
    kiln__value(rd, name, KILN__T_FLOAT, KILN__OPTIONAL, p);
    return *p ? (double)(float)kiln_cast_prop_f64(*p, 0) : 0.0;
}

float kiln__float(const kiln__rd *rd, const char *name, float def)
{
    const kiln_cast_prop *p;
    double v = kiln__real(rd, name, &p);
    if (!p) return def;
    if (!isfinite(v)) {
        kiln__report(rd, name, p, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING, "%g is not finite; %g used", v,
                     (double)def);
        return def;
    }
    return (float)v;
}

float kiln__positive(const kiln__rd *rd, const char *name, float def, int warn_missing)
{
    const kiln_cast_prop *p;
    double v = kiln__real(rd, name, &p);
    if (!p) {
        if (warn_missing) {
            kiln__report(rd, name, NULL, KILN_ERR_CAST_MISSING_PROPERTY, KILN_SEVERITY_WARNING, "absent; %g used",
                         (double)def);
        }
        return def;
    }
    if (!isfinite(v) || v <= 0.0) {
        kiln__report(rd, name, p, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING,
                     "%g is not a positive finite number; %g used", v, (double)def);
        return def;
    }
    return (float)v;
}

int kiln__vec(const kiln__rd *rd, const char *name, uint32_t type_bit, uint32_t comps, const float *def,
              float *out)
{
    const kiln_cast_prop *p;
    float v[4];
    kiln__value(rd, name, type_bit, KILN__OPTIONAL, &p);
    memcpy(out, def, comps * sizeof *out);
    if (!p) return 0;
    kiln_cast_prop_vec(p, 0, comps, v);
    for (uint32_t c = 0; c < comps; c++) {
        if (!isfinite(v[c])) {
            kiln__report(rd, name, p, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING,
                         "component %u is %g; the default is used", c, (double)v[c]);
            return 0;
        }
    }
    memcpy(out, v, comps * sizeof *out);
    return 1;
}

double kiln__quat_unit(float q[4])
{
    double len = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2] + (double)q[3] * q[3]);
    if (!(len >= 1e-8) || !isfinite(len)) return len;
    for (int c = 0; c < 4; c++) q[c] = (float)(q[c] / len);
    return len;
}

int kiln__quat(const kiln__rd *rd, const char *name, float out[4])
{
    static const float identity[4] = {0, 0, 0, 1};
    if (!kiln__vec(rd, name, KILN__TV4, 4, identity, out)) return 0;
    double len = kiln__quat_unit(out);
    if (!(len >= 1e-8) || !isfinite(len)) {
        kiln__report(rd, name, kiln_cast_find_prop(rd->doc, rd->node, name, NULL), KILN_ERR_CAST_BAD_VALUE,
                     KILN_SEVERITY_WARNING, "quaternion of length %g; identity used", len);
        memcpy(out, identity, sizeof identity);
        return 0;
    }
    /* Float32 storage leaves unit quaternions a few ulps off: normalise always, but only tell
     * about values that were clearly not meant to be unit. */
    if (fabs(len - 1.0) > 1e-3) {
        kiln__report(rd, name, kiln_cast_find_prop(rd->doc, rd->node, name, NULL), KILN_ERR_CAST_BAD_VALUE,
                     KILN_SEVERITY_WARNING, "quaternion of length %g; normalised", len);
    }
    return 1;
}

void kiln__transform(const kiln__rd *rd, float position[3], float rotation[4], float scale[3])
{
    static const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    kiln__vec(rd, "p", KILN__TV3, 3, zero, position);
    kiln__quat(rd, "r", rotation);
    kiln__vec(rd, "s", KILN__TV3, 3, one, scale);
}

void kiln__array_of(const kiln_cast_prop *p, kiln_cast_array *out)
{
    out->data = p->data;
    out->count = p->count;
    out->type = p->type;
    out->comps = kiln__type_comps(p->type);
}

kiln_result kiln__array(const kiln__rd *rd, const char *name, uint32_t types, kiln__need need,
                        kiln_cast_array *out)
{
    const kiln_cast_prop *p;
    kiln_result r = kiln__prop(rd, name, types, need, &p);
    memset(out, 0, sizeof *out);
    if (p) kiln__array_of(p, out);
    return r;
}

int kiln__expect_len(const kiln__rd *rd, const char *name, kiln_cast_array *a, uint64_t expected,
                     const char *what)
{
    /* data is set for every stored property, empty ones included, so NULL means absent. */
    if (!a->data || a->count == expected) return 1;
    kiln__report(rd, name, kiln_cast_find_prop(rd->doc, rd->node, name, NULL), KILN_ERR_CAST_LENGTH_MISMATCH,
                 KILN_SEVERITY_ERROR, "%u elements, expected %llu (%s); dropped", a->count,
                 (unsigned long long)expected, what);
    memset(a, 0, sizeof *a);
    return 0;
}

kiln_result kiln__enum(const kiln__rd *rd, const char *name, const char *const *names, int count,
                       kiln__need need, int fallback, int *out)
{
    const kiln_cast_prop *p;
    kiln_result r = kiln__value(rd, name, KILN__TS, need, &p);
    if (r != KILN_OK || !p) return r;
    const char *s = kiln_cast_prop_str(p);
    for (int k = 0; k < count; k++) {
        if (strcmp(s, names[k]) == 0) {
            *out = k;
            return KILN_OK;
        }
    }
    if (fallback >= 0) {
        kiln__report(rd, name, p, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING, "unknown value '%.64s'; '%s' used",
                     s, names[fallback]);
        *out = fallback;
        return KILN_OK;
    }
    kiln__report(rd, name, p, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_ERROR, "unknown value '%.64s'; the %s is dropped",
                 s, kiln_cast_id_name(rd->n->id));
    return KILN_ERR_CAST_BAD_VALUE;
}

kiln_result kiln__resolve(const kiln__rd *rd, const char *name, const kiln_cast_prop *p, uint64_t hash,
                          kiln__need need, uint32_t scope, uint32_t id_a, uint32_t id_b, uint32_t *target)
{
    uint32_t found = scope != KILN_CAST_NONE ? kiln_cast_find_hash(rd->doc, scope, hash) : KILN_CAST_NONE;
    const kiln_cast_node *t = kiln_cast_node_at(rd->doc, found);
    const kiln_cast_node *s = kiln_cast_node_at(rd->doc, scope);
    const char *scope_name = s ? kiln_cast_id_name(s->id) : "(none)";
    *target = KILN_CAST_NONE;
    if (!t || (t->id != id_a && (id_b == 0 || t->id != id_b))) {
        kiln_severity sev = need == KILN__REQUIRED ? KILN_SEVERITY_ERROR : KILN_SEVERITY_WARNING;
        if (t) {
            kiln__report(rd, name, p, KILN_ERR_CAST_UNRESOLVED, sev, "hash 0x%llx names a %s in the %s, not a %s%s%s",
                         (unsigned long long)hash, kiln_cast_id_name(t->id), scope_name, kiln_cast_id_name(id_a),
                         id_b ? " or " : "", id_b ? kiln_cast_id_name(id_b) : "");
        } else {
            kiln__report(rd, name, p, KILN_ERR_CAST_UNRESOLVED, sev, "no child of the %s has hash 0x%llx", scope_name,
                         (unsigned long long)hash);
        }
        return need == KILN__REQUIRED ? KILN_ERR_CAST_UNRESOLVED : KILN_OK;
    }
    uint32_t shared = kiln_cast_hash_count(rd->doc, scope, hash);
    if (shared > 1) {
        kiln__report(rd, name, p, KILN_ERR_CAST_DUPLICATE, KILN_SEVERITY_WARNING,
                     "hash 0x%llx is shared by %u children of the %s; the first one is used", (unsigned long long)hash,
                     shared, scope_name);
    }
    *target = found;
    return KILN_OK;
}

kiln_result kiln__ref(const kiln__rd *rd, const char *name, kiln__need need, uint32_t scope, uint32_t id_a,
                      uint32_t id_b, uint64_t *hash, uint32_t *target)
{
    const kiln_cast_prop *p;
    *hash = 0;
    *target = KILN_CAST_NONE;
    kiln_result r = kiln__value(rd, name, KILN__T_INT, need, &p);
    if (r != KILN_OK || !p) return r;
    *hash = kiln_cast_prop_u64(p, 0);
    return kiln__resolve(rd, name, p, *hash, need, scope, id_a, id_b, target);
}

void kiln__count_kinds(const kiln_cast_doc *doc, uint32_t node, const uint32_t *ids, uint32_t *counts,
                       uint32_t kinds)
{
    memset(counts, 0, kinds * sizeof *counts);
    const kiln_cast_node *n = kiln_cast_node_at(doc, node);
    for (uint32_t c = n ? n->first_child : KILN_CAST_NONE; c != KILN_CAST_NONE;) {
        const kiln_cast_node *child = kiln_cast_node_at(doc, c);
        for (uint32_t k = 0; k < kinds; k++) counts[k] += child->id == ids[k];
        c = child->next_sibling;
    }
}
