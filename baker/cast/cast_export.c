/* Source scenes -> one Cast file (kiln/bake/cast_export.h): one walk over the source structs
 * that adds nodes to a kiln_cast_writer in the documented order. Large arrays are referenced,
 * not copied (the scenes outlive the writer); index arrays are copied by kiln_cast_writer_ints,
 * which narrows them. The first failure is kept in the walk's state and ends the walk.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kiln/bake/cast_export.h"
#include "kiln/bake/cast_write.h"
#include "cast_export_bind.h"
#include "cast_scene_util.h"
#include "ds.h"
#include "rest.h"

typedef struct kiln__exp {
    kiln_cast_writer              *w;
    const kiln_cast_export_options *o;
    const kiln_source_scene *const *scenes;   /* all of them: a clip binds to a skeleton of any */
    uint32_t                       scene_count;
    kiln_diag                     *err;
    kiln_result                    r;          /* first failure */
    uint64_t                       next_hash;
    uint32_t                       scene;
    uint64_t                      *hashes;     /* scratch: hashes of one model's materials, meshes or bones */
    size_t                         hash_cap;
} kiln__exp;

/* ---- diagnostics ------------------------------------------------------------------------------ */

static void kiln__where(const kiln__exp *x, const kiln_source_loc *loc, kiln_diag *d)
{
    const char *input = x->o && x->o->input_paths ? x->o->input_paths[x->scene] : NULL;
    const char *inner = loc && loc->path ? loc->path : "";
    if (input)
        snprintf(d->path, sizeof d->path, "%s%s%s", input, inner[0] ? ":" : "", inner);
    else
        snprintf(d->path, sizeof d->path, "scene[%u]%s%s", x->scene, inner[0] ? ":" : "", inner);
    d->offset = loc ? loc->offset : KILN_NO_OFFSET;
}

static void kiln__vdiag(const kiln__exp *x, kiln_diag *d, kiln_result code, kiln_severity sev,
                        const kiln_source_loc *loc, const char *fmt, va_list ap)
{
    memset(d, 0, sizeof *d);
    d->code = code;
    d->severity = sev;
    kiln__where(x, loc, d);
    vsnprintf(d->message, sizeof d->message, fmt, ap);
}

/* Records the first failure (the walk stops at the next check). */
static kiln_result kiln__fail(kiln__exp *x, kiln_result code, const kiln_source_loc *loc, const char *fmt, ...)
    KILN__PRINTF(4, 5);
static kiln_result kiln__fail(kiln__exp *x, kiln_result code, const kiln_source_loc *loc, const char *fmt, ...)
{
    if (x->r != KILN_OK) return x->r;
    x->r = code;
    if (x->err) {
        va_list ap;
        va_start(ap, fmt);
        kiln__vdiag(x, x->err, code, KILN_SEVERITY_ERROR, loc, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* A warning; `rule` names the rule of the item's format it falls under (NULL: none). */
static void kiln__warn_rule(const kiln__exp *x, const char *rule, kiln_result code, const kiln_source_loc *loc,
                            const char *fmt, ...) KILN__PRINTF(5, 6);
static void kiln__warn_rule(const kiln__exp *x, const char *rule, kiln_result code, const kiln_source_loc *loc,
                            const char *fmt, ...)
{
    if (!x->o || !x->o->diag.fn) return;
    kiln_diag d;
    va_list ap;
    va_start(ap, fmt);
    kiln__vdiag(x, &d, code, KILN_SEVERITY_WARNING, loc, fmt, ap);
    va_end(ap);
    if (rule) snprintf(d.rule, sizeof d.rule, "%s", rule);
    x->o->diag.fn(x->o->diag.user, &d);
}
#define kiln__warn(x, ...) kiln__warn_rule((x), NULL, __VA_ARGS__)

/* A failed writer call: the writer's own errors carry no location. */
static void kiln__wrote(kiln__exp *x, kiln_result r, const kiln_source_loc *loc, const char *what)
{
    if (r != KILN_OK && x->r == KILN_OK)
        kiln__fail(x, r, loc, "cannot write %s: %s", what, kiln_result_str(r));
}

/* A non-zero count needs its array (and its count times `per` must fit Cast's u32 lengths). */
static int kiln__have(kiln__exp *x, const void *p, uint64_t count, uint64_t per, const kiln_source_loc *loc,
                      const char *what)
{
    if (x->r != KILN_OK) return 0;
    if (count && !p) {
        kiln__fail(x, KILN_ERR_INVALID_ARGUMENT, loc, "%s: NULL array for %llu elements", what,
                   (unsigned long long)count);
        return 0;
    }
    if (count * per > 0xFFFFFFFFull) {
        kiln__fail(x, KILN_ERR_LIMIT, loc, "%s: %llu values do not fit a Cast array (at most 2^32-1)", what,
                   (unsigned long long)(count * per));
        return 0;
    }
    return 1;
}

/* ---- writing ---------------------------------------------------------------------------------- */

static uint32_t kiln__node(kiln__exp *x, uint32_t parent, uint32_t id, const kiln_source_loc *loc)
{
    if (x->r != KILN_OK) return KILN_CAST_NONE;
    uint32_t n = kiln_cast_writer_node(x->w, parent, id, x->next_hash++);
    if (n == KILN_CAST_NONE) {
        /* The writer keeps the cause; writing nothing returns it. */
        kiln_result r = kiln_cast_writer_write(x->w, NULL, 0);
        kiln__wrote(x, r == KILN_OK ? KILN_ERR_OUT_OF_MEMORY : r, loc, kiln_cast_id_name(id));
    }
    return n;
}

static uint64_t kiln__hash_of(const kiln__exp *x)
{
    return x->next_hash - 1; /* of the node just added */
}

static void kiln__put_str(kiln__exp *x, uint32_t node, const char *name, const char *value, const kiln_source_loc *loc)
{
    if (x->r != KILN_OK || !value) return;
    kiln__wrote(x, kiln_cast_writer_string(x->w, node, name, value), loc, name);
}

static void kiln__put_ref(kiln__exp *x, uint32_t node, const char *name, uint16_t type, const void *data, uint32_t count,
                      const kiln_source_loc *loc)
{
    if (x->r != KILN_OK) return;
    kiln__wrote(x, kiln_cast_writer_prop_ref(x->w, node, name, type, data, count), loc, name);
}

static void kiln__put_copy(kiln__exp *x, uint32_t node, const char *name, uint16_t type, const void *data,
                       uint32_t count, const kiln_source_loc *loc)
{
    if (x->r != KILN_OK) return;
    kiln__wrote(x, kiln_cast_writer_prop(x->w, node, name, type, data, count), loc, name);
}

static void kiln__put_ints(kiln__exp *x, uint32_t node, const char *name, const uint32_t *v, uint32_t count,
                       const kiln_source_loc *loc)
{
    if (x->r != KILN_OK) return;
    kiln__wrote(x, kiln_cast_writer_ints(x->w, node, name, v, count), loc, name);
}

static void kiln__put_u32(kiln__exp *x, uint32_t node, const char *name, uint32_t v, const kiln_source_loc *loc)
{
    kiln__put_ints(x, node, name, &v, 1, loc);
}

static void kiln__put_bool(kiln__exp *x, uint32_t node, const char *name, uint32_t v, const kiln_source_loc *loc)
{
    if (x->r != KILN_OK) return;
    kiln__wrote(x, kiln_cast_writer_byte(x->w, node, name, v ? 1 : 0), loc, name);
}

static void kiln__put_float(kiln__exp *x, uint32_t node, const char *name, float v, const kiln_source_loc *loc)
{
    kiln__put_copy(x, node, name, KILN_CAST_TYPE_FLOAT, &v, 1, loc);
}

static void kiln__put_hash(kiln__exp *x, uint32_t node, const char *name, uint64_t hash, const kiln_source_loc *loc)
{
    if (x->r != KILN_OK) return;
    kiln__wrote(x, kiln_cast_writer_u64(x->w, node, name, hash), loc, name);
}

/* A quaternion that Cast readers normalise: a stored value whose normalisation (the reader's,
 * kiln__quat_unit) is `q` bit for bit. `q` itself in almost every case; for the rest, the
 * first of its neighbours within one ulp per component that works, in a fixed order. */
static void kiln__quat_preimage(const float q[4], float out[4])
{
    memcpy(out, q, 4 * sizeof *q);
    float t[4];
    memcpy(t, q, sizeof t);
    double len = kiln__quat_unit(t);
    if (!(len >= 1e-8) || !isfinite(len) || memcmp(t, q, sizeof t) == 0) return;
    for (int k = 1; k < 81; k++) {
        float p[4];
        for (int c = 0, m = k; c < 4; c++, m /= 3) {
            int d = m % 3;
            p[c] = d == 0 ? q[c] : nextafterf(q[c], d == 1 ? INFINITY : -INFINITY);
        }
        memcpy(t, p, sizeof t);
        kiln__quat_unit(t);
        if (memcmp(t, q, sizeof t) == 0) {
            memcpy(out, p, sizeof p);
            return;
        }
    }
}

static void kiln__put_quat(kiln__exp *x, uint32_t node, const char *name, const float q[4], const kiln_source_loc *loc)
{
    float v[4];
    kiln__quat_preimage(q, v);
    kiln__put_copy(x, node, name, KILN_CAST_TYPE_VEC4, v, 1, loc);
}

static void kiln__put_transform(kiln__exp *x, uint32_t node, const float p[3], const float r[4], const float s[3],
                            const kiln_source_loc *loc)
{
    kiln__put_copy(x, node, "p", KILN_CAST_TYPE_VEC3, p, 1, loc);
    kiln__put_quat(x, node, "r", r, loc);
    kiln__put_copy(x, node, "s", KILN_CAST_TYPE_VEC3, s, 1, loc);
}

/* Room for `n` hashes in the scratch table. */
static uint64_t *kiln__hash_table(kiln__exp *x, size_t n)
{
    if (x->r != KILN_OK) return NULL;
    if (n <= x->hash_cap) return x->hashes;
    if (n > SIZE_MAX / sizeof *x->hashes) {
        kiln__fail(x, KILN_ERR_OUT_OF_MEMORY, NULL, "out of memory");
        return NULL;
    }
    uint64_t *grown = kiln__realloc(x->o ? x->o->allocator : NULL, x->hashes, n * sizeof *grown);
    if (!grown) {
        kiln__fail(x, KILN_ERR_OUT_OF_MEMORY, NULL, "out of memory");
        return NULL;
    }
    x->hashes = grown;
    x->hash_cap = n;
    return grown;
}

/* An index into an array of `count` (KILN_SOURCE_NONE allowed when `optional`). */
static int kiln__index_ok(kiln__exp *x, uint32_t index, uint32_t count, int optional, const kiln_source_loc *loc,
                          const char *what)
{
    if (x->r != KILN_OK) return 0;
    if (index < count || (optional && index == KILN_SOURCE_NONE)) return 1;
    kiln__fail(x, KILN_ERR_INVALID_ARGUMENT, loc, "%s %u is out of range (%u)", what, index, count);
    return 0;
}

/* ---- skeletons -------------------------------------------------------------------------------- */

static void kiln__bone(kiln__exp *x, uint32_t skel, const kiln_source_bone *b)
{
    uint32_t n = kiln__node(x, skel, KILN_CAST_ID_BONE, &b->loc);
    kiln__put_str(x, n, "n", b->name, &b->loc);
    uint32_t parent = (uint32_t)b->parent; /* -1 is 0xFFFFFFFF on disk */
    kiln__put_copy(x, n, "p", KILN_CAST_TYPE_INT, &parent, 1, &b->loc);
    kiln__put_bool(x, n, "ssc", b->segment_scale_compensate, &b->loc);
    if (b->has_local_position) kiln__put_copy(x, n, "lp", KILN_CAST_TYPE_VEC3, b->local_position, 1, &b->loc);
    if (b->has_local_rotation) kiln__put_quat(x, n, "lr", b->local_rotation, &b->loc);
    if (b->has_world_position) kiln__put_copy(x, n, "wp", KILN_CAST_TYPE_VEC3, b->world_position, 1, &b->loc);
    if (b->has_world_rotation) kiln__put_quat(x, n, "wr", b->world_rotation, &b->loc);
    if (b->has_scale) kiln__put_copy(x, n, "s", KILN_CAST_TYPE_VEC3, b->scale, 1, &b->loc);
}

/* A bone reference: -1 (optional only) leaves the property out. */
static void kiln__bone_ref(kiln__exp *x, uint32_t node, const char *name, int32_t bone, uint32_t bone_count,
                           int optional, const uint64_t *hashes, const kiln_source_loc *loc)
{
    if (x->r != KILN_OK || (optional && bone == -1)) return;
    if (bone < 0 || (uint32_t)bone >= bone_count) {
        kiln__fail(x, KILN_ERR_INVALID_ARGUMENT, loc, "%s: bone %d is out of range (%u bones)", name, bone,
                   bone_count);
        return;
    }
    kiln__put_hash(x, node, name, hashes[bone], loc);
}

static int kiln__bits_zero(const float *v, size_t n)
{
    static const float zero[4] = {0, 0, 0, 0};
    return memcmp(v, zero, n * sizeof *v) == 0;
}

static void kiln__skeleton(kiln__exp *x, uint32_t model, const kiln_source_skeleton *sk)
{
    if (!kiln__have(x, sk->bones, sk->bone_count, 1, &sk->loc, "bones") ||
        !kiln__have(x, sk->ik_handles, sk->ik_handle_count, 1, &sk->loc, "IK handles") ||
        !kiln__have(x, sk->constraints, sk->constraint_count, 1, &sk->loc, "constraints"))
        return;
    uint32_t skel = kiln__node(x, model, KILN_CAST_ID_SKELETON, &sk->loc);
    uint64_t *hashes = kiln__hash_table(x, sk->bone_count);
    for (uint32_t i = 0; i < sk->bone_count && x->r == KILN_OK; i++) {
        kiln__bone(x, skel, &sk->bones[i]);
        hashes[i] = kiln__hash_of(x);
    }
    for (uint32_t i = 0; i < sk->ik_handle_count && x->r == KILN_OK; i++) {
        const kiln_source_ik_handle *ik = &sk->ik_handles[i];
        uint32_t n = kiln__node(x, skel, KILN_CAST_ID_IKHANDLE, &ik->loc);
        kiln__put_str(x, n, "n", ik->name, &ik->loc);
        kiln__bone_ref(x, n, "sb", ik->start_bone, sk->bone_count, 0, hashes, &ik->loc);
        kiln__bone_ref(x, n, "eb", ik->end_bone, sk->bone_count, 0, hashes, &ik->loc);
        kiln__bone_ref(x, n, "tb", ik->target_bone, sk->bone_count, 1, hashes, &ik->loc);
        kiln__bone_ref(x, n, "pv", ik->pole_vector_bone, sk->bone_count, 1, hashes, &ik->loc);
        kiln__bone_ref(x, n, "pb", ik->pole_bone, sk->bone_count, 1, hashes, &ik->loc);
        /* Blender's importer warns about any `to`: leave the default (0,0,0) out. */
        if (!kiln__bits_zero(ik->target_offset, 3))
            kiln__put_copy(x, n, "to", KILN_CAST_TYPE_VEC3, ik->target_offset, 1, &ik->loc);
        kiln__put_bool(x, n, "tr", ik->use_target_rotation, &ik->loc);
    }
    static const char *const types[] = {"pt", "or", "sc"};
    for (uint32_t i = 0; i < sk->constraint_count && x->r == KILN_OK; i++) {
        const kiln_source_constraint *c = &sk->constraints[i];
        if ((unsigned)c->type > KILN_SOURCE_CONSTRAINT_SCALE) {
            kiln__fail(x, KILN_ERR_INVALID_ARGUMENT, &c->loc, "unknown constraint type %d", (int)c->type);
            return;
        }
        uint32_t n = kiln__node(x, skel, KILN_CAST_ID_CONSTRAINT, &c->loc);
        kiln__put_str(x, n, "n", c->name, &c->loc);
        kiln__put_str(x, n, "ct", types[c->type], &c->loc);
        kiln__bone_ref(x, n, "cb", c->constrained_bone, sk->bone_count, 0, hashes, &c->loc);
        kiln__bone_ref(x, n, "tb", c->target_bone, sk->bone_count, 0, hashes, &c->loc);
        kiln__put_bool(x, n, "mo", c->maintain_offset, &c->loc);
        if (c->has_custom_offset) {
            if (c->type == KILN_SOURCE_CONSTRAINT_ORIENT) kiln__put_quat(x, n, "co", c->custom_offset, &c->loc);
            else kiln__put_copy(x, n, "co", KILN_CAST_TYPE_VEC3, c->custom_offset, 1, &c->loc);
        }
        kiln__put_float(x, n, "wt", c->weight, &c->loc);
        kiln__put_bool(x, n, "sx", c->skip[0], &c->loc);
        kiln__put_bool(x, n, "sy", c->skip[1], &c->loc);
        kiln__put_bool(x, n, "sz", c->skip[2], &c->loc);
    }
}

/* ---- materials -------------------------------------------------------------------------------- */

/* Whether a Cast reader would read `name` as another slot of material `m` (or as n/t) than
 * slot `k`: an earlier slot already written under it, or a later slot named so. */
static int kiln__slot_taken(const kiln_source_material *m, uint32_t k, const char *name, char (*written)[128])
{
    if (strcmp(name, "n") == 0 || strcmp(name, "t") == 0) return 1;
    for (uint32_t j = 0; j < k; j++)
        if (strcmp(written[j], name) == 0) return 1;
    for (uint32_t j = k + 1; j < m->slot_count; j++)
        if (m->slots[j].name && strcmp(m->slots[j].name, name) == 0) return 1;
    return 0;
}

/* The slot names as written: the source's, or "<name>_<k>" / "extra<k>" where a Cast reader
 * could not tell the slot apart (reported). */
static void kiln__slot_names(kiln__exp *x, const kiln_source_material *m, char (*written)[128])
{
    for (uint32_t k = 0; k < m->slot_count; k++) {
        const kiln_source_material_slot *s = &m->slots[k];
        if (s->name && strlen(s->name) < sizeof written[k] && !kiln__slot_taken(m, k, s->name, written)) {
            memcpy(written[k], s->name, strlen(s->name) + 1);
            continue;
        }
        for (uint32_t j = s->name ? 2 : 0;; j++) {
            if (s->name) snprintf(written[k], sizeof written[k], "%.100s_%u", s->name, j);
            else snprintf(written[k], sizeof written[k], "extra%u", j);
            if (!kiln__slot_taken(m, k, written[k], written)) break;
        }
        kiln__warn(x, KILN_ERR_CAST_DUPLICATE, &s->loc, "material slot '%.100s' cannot be told apart in Cast; written as '%s'",
                   s->name ? s->name : "(no name)", written[k]);
    }
}

/* Returns the Material node's hash (0 after a failure). */
static uint64_t kiln__material(kiln__exp *x, uint32_t model, const kiln_source_material *m)
{
    if (!kiln__have(x, m->slots, m->slot_count, 1, &m->loc, "slots")) return 0;
    uint64_t props = (uint64_t)m->slot_count + (m->name != NULL) + (m->type != NULL);
    if (props > 256) {
        /* Cast readers read slots among the first 256 properties of a Material (n and t too). */
        kiln__fail(x, KILN_ERR_LIMIT, &m->loc, "%u slots: a Cast reader reads a material's first 256 properties only",
                   m->slot_count);
        return 0;
    }
    for (uint32_t k = 0; k < m->slot_count; k++) {
        const kiln_source_material_slot *s = &m->slots[k];
        if ((unsigned)s->kind > KILN_SOURCE_SLOT_COLOR || (unsigned)s->color_space > KILN_SOURCE_COLOR_LINEAR) {
            kiln__fail(x, KILN_ERR_INVALID_ARGUMENT, &s->loc, "slot %u: unknown kind %d or colour space %d", k,
                       (int)s->kind, (int)s->color_space);
            return 0;
        }
    }
    const kiln_allocator *a = x->o ? x->o->allocator : NULL;
    char (*written)[128] = NULL;
    if (m->slot_count && !(written = kiln__realloc(a, NULL, m->slot_count * sizeof *written))) {
        kiln__fail(x, KILN_ERR_OUT_OF_MEMORY, &m->loc, "out of memory");
        return 0;
    }
    kiln__slot_names(x, m, written);
    uint32_t n = kiln__node(x, model, KILN_CAST_ID_MATERIAL, &m->loc);
    uint64_t hash = kiln__hash_of(x);
    kiln__put_str(x, n, "n", m->name, &m->loc);
    kiln__put_str(x, n, "t", m->type, &m->loc);
    for (uint32_t k = 0; k < m->slot_count && x->r == KILN_OK; k++) {
        const kiln_source_material_slot *s = &m->slots[k];
        uint32_t child;
        if (s->kind == KILN_SOURCE_SLOT_FILE) {
            child = kiln__node(x, n, KILN_CAST_ID_FILE, &s->loc);
            kiln__put_str(x, child, "p", s->path, &s->loc);
        } else {
            child = kiln__node(x, n, KILN_CAST_ID_COLOR, &s->loc);
            kiln__put_str(x, child, "cs", s->color_space == KILN_SOURCE_COLOR_LINEAR ? "linear" : "srgb", &s->loc);
            kiln__put_copy(x, child, "rgba", KILN_CAST_TYPE_VEC4, s->rgba, 1, &s->loc);
        }
        kiln__put_hash(x, n, written[k], kiln__hash_of(x), &s->loc);
    }
    kiln__free(a, written);
    return x->r == KILN_OK ? hash : 0;
}

/* ---- meshes, hair, blend shapes --------------------------------------------------------------- */

static void kiln__mesh(kiln__exp *x, uint32_t model, const kiln_source_mesh *m, const uint64_t *materials,
                       uint32_t material_count)
{
    const kiln_source_loc *loc = &m->loc;
    uint32_t nv = m->vertex_count;
    uint64_t weights = (uint64_t)nv * m->max_influence;
    if (!kiln__have(x, m->positions, nv, 1, loc, "vp") || !kiln__have(x, m->faces, m->face_count, 3, loc, "f") ||
        !kiln__have(x, m->weight_bones, weights, 1, loc, "wb") ||
        (m->weight_values && !kiln__have(x, m->weight_values, weights, 1, loc, "wv")) ||
        !kiln__index_ok(x, m->material, material_count, 1, loc, "material"))
        return;
    if (m->uv_layer_count > KILN_SOURCE_MAX_LAYERS || m->color_layer_count > KILN_SOURCE_MAX_LAYERS ||
        (unsigned)m->skinning > KILN_SOURCE_SKIN_DUAL_QUAT) {
        kiln__fail(x, KILN_ERR_INVALID_ARGUMENT, loc, "%u UV layers, %u colour layers, skinning %d", m->uv_layer_count,
                   m->color_layer_count, (int)m->skinning);
        return;
    }
    uint32_t n = kiln__node(x, model, KILN_CAST_ID_MESH, loc);
    kiln__put_str(x, n, "n", m->name, loc);
    kiln__put_ref(x, n, "vp", KILN_CAST_TYPE_VEC3, m->positions, nv, loc);
    if (m->normals) kiln__put_ref(x, n, "vn", KILN_CAST_TYPE_VEC3, m->normals, nv, loc);
    if (m->tangents) kiln__put_ref(x, n, "vt", KILN_CAST_TYPE_VEC3, m->tangents, nv, loc);
    if (m->tangent_signs) kiln__put_ref(x, n, "vts", KILN_CAST_TYPE_FLOAT, m->tangent_signs, nv, loc);
    char name[16];
    if (m->uv_layer_count) kiln__put_u32(x, n, "ul", m->uv_layer_count, loc);
    for (uint32_t i = 0; i < m->uv_layer_count; i++) {
        if (!m->uv[i]) continue; /* a missing u<i> below ul reads as a dropped layer */
        snprintf(name, sizeof name, "u%u", i);
        kiln__put_ref(x, n, name, KILN_CAST_TYPE_VEC2, m->uv[i], nv, loc);
    }
    if (m->color_layer_count) kiln__put_u32(x, n, "cl", m->color_layer_count, loc);
    for (uint32_t i = 0; i < m->color_layer_count && x->r == KILN_OK; i++) {
        const kiln_source_color_layer *c = &m->color[i];
        if (c->rgba8 && c->rgba) {
            kiln__fail(x, KILN_ERR_INVALID_ARGUMENT, loc, "colour layer %u has both packed and float values", i);
            return;
        }
        snprintf(name, sizeof name, "c%u", i);
        if (c->rgba8) kiln__put_ref(x, n, name, KILN_CAST_TYPE_INT, c->rgba8, nv, loc);
        else if (c->rgba) kiln__put_ref(x, n, name, KILN_CAST_TYPE_VEC4, c->rgba, nv, loc);
    }
    if (m->max_influence) {
        kiln__put_u32(x, n, "mi", m->max_influence, loc);
        kiln__put_ints(x, n, "wb", m->weight_bones, (uint32_t)weights, loc);
        if (m->weight_values) kiln__put_ref(x, n, "wv", KILN_CAST_TYPE_FLOAT, m->weight_values, (uint32_t)weights, loc);
    }
    if (m->max_influence || m->skinning != KILN_SOURCE_SKIN_LINEAR)
        kiln__put_str(x, n, "sm", m->skinning == KILN_SOURCE_SKIN_DUAL_QUAT ? "quaternion" : "linear", loc);
    kiln__put_ints(x, n, "f", m->faces, m->face_count * 3u, loc);
    if (m->material != KILN_SOURCE_NONE) kiln__put_hash(x, n, "m", materials[m->material], loc);
}

static void kiln__hair(kiln__exp *x, uint32_t model, const kiln_source_hair *h, const uint64_t *materials,
                       uint32_t material_count)
{
    if (!kiln__have(x, h->segments, h->strand_count, 1, &h->loc, "se") ||
        !kiln__have(x, h->particles, h->particle_count, 1, &h->loc, "pt") ||
        !kiln__index_ok(x, h->material, material_count, 1, &h->loc, "material"))
        return;
    uint32_t n = kiln__node(x, model, KILN_CAST_ID_HAIR, &h->loc);
    kiln__put_str(x, n, "n", h->name, &h->loc);
    kiln__put_ints(x, n, "se", h->segments, h->strand_count, &h->loc);
    kiln__put_ref(x, n, "pt", KILN_CAST_TYPE_VEC3, h->particles, h->particle_count, &h->loc);
    if (h->material != KILN_SOURCE_NONE) kiln__put_hash(x, n, "m", materials[h->material], &h->loc);
}

static void kiln__blend_shape(kiln__exp *x, uint32_t model, const kiln_source_blend_shape *s, const uint64_t *meshes,
                              uint32_t mesh_count)
{
    if (!kiln__have(x, s->indices, s->pair_count, 1, &s->loc, "vi") ||
        !kiln__have(x, s->targets, s->pair_count, 1, &s->loc, "vp") ||
        !kiln__index_ok(x, s->mesh, mesh_count, 0, &s->loc, "base mesh"))
        return;
    uint32_t n = kiln__node(x, model, KILN_CAST_ID_BLENDSHAPE, &s->loc);
    kiln__put_str(x, n, "n", s->name, &s->loc);
    kiln__put_hash(x, n, "b", meshes[s->mesh], &s->loc);
    kiln__put_ints(x, n, "vi", s->indices, s->pair_count, &s->loc);
    kiln__put_ref(x, n, "vp", KILN_CAST_TYPE_VEC3, s->targets, s->pair_count, &s->loc);
    kiln__put_float(x, n, "ts", s->target_scale, &s->loc);
}

static void kiln__model(kiln__exp *x, uint32_t root, const kiln_source_model *m)
{
    if (!kiln__have(x, m->materials, m->material_count, 1, &m->loc, "materials") ||
        !kiln__have(x, m->meshes, m->mesh_count, 1, &m->loc, "meshes") ||
        !kiln__have(x, m->hairs, m->hair_count, 1, &m->loc, "hair") ||
        !kiln__have(x, m->blend_shapes, m->blend_shape_count, 1, &m->loc, "blend shapes"))
        return;
    uint32_t n = kiln__node(x, root, KILN_CAST_ID_MODEL, &m->loc);
    kiln__put_str(x, n, "n", m->name, &m->loc);
    kiln__put_transform(x, n, m->position, m->rotation, m->scale, &m->loc);
    if (m->skeleton) kiln__skeleton(x, n, m->skeleton);

    /* Materials, then meshes and hair (which refer to them), then blend shapes (which refer to
     * the meshes): one scratch table serves each step in turn. */
    uint32_t material_count = m->material_count;
    uint64_t *materials = kiln__hash_table(x, (size_t)material_count + m->mesh_count);
    for (uint32_t i = 0; i < material_count && x->r == KILN_OK; i++) materials[i] = kiln__material(x, n, &m->materials[i]);
    uint64_t *meshes = materials ? materials + material_count : NULL;
    for (uint32_t i = 0; i < m->mesh_count && x->r == KILN_OK; i++) {
        kiln__mesh(x, n, &m->meshes[i], materials, material_count);
        meshes[i] = kiln__hash_of(x);
    }
    for (uint32_t i = 0; i < m->hair_count && x->r == KILN_OK; i++)
        kiln__hair(x, n, &m->hairs[i], materials, material_count);
    for (uint32_t i = 0; i < m->blend_shape_count && x->r == KILN_OK; i++)
        kiln__blend_shape(x, n, &m->blend_shapes[i], meshes, m->mesh_count);
}

/* ---- instances, metadata ---------------------------------------------------------------------- */

static void kiln__instance(kiln__exp *x, uint32_t root, const kiln_source_instance *in)
{
    uint32_t n = kiln__node(x, root, KILN_CAST_ID_INSTANCE, &in->loc);
    uint64_t file_hash = x->next_hash; /* the File child comes next */
    kiln__put_str(x, n, "n", in->name, &in->loc);
    kiln__put_hash(x, n, "rf", file_hash, &in->loc);
    kiln__put_transform(x, n, in->position, in->rotation, in->scale, &in->loc);
    uint32_t file = kiln__node(x, n, KILN_CAST_ID_FILE, &in->loc);
    kiln__put_str(x, file, "p", in->path, &in->loc);
}

static void kiln__metadata(kiln__exp *x, uint32_t root, const kiln_source_metadata *md)
{
    if (!md->author && !md->software && !md->scene_root && md->up_axis == KILN_SOURCE_UP_NONE) return;
    if ((unsigned)md->up_axis > KILN_SOURCE_UP_Z) {
        kiln__fail(x, KILN_ERR_INVALID_ARGUMENT, &md->loc, "unknown up axis %d", (int)md->up_axis);
        return;
    }
    static const char *const up[] = {NULL, "x", "y", "z"};
    uint32_t n = kiln__node(x, root, KILN_CAST_ID_METADATA, &md->loc);
    kiln__put_str(x, n, "a", md->author, &md->loc);
    kiln__put_str(x, n, "s", md->software, &md->loc);
    kiln__put_str(x, n, "up", up[md->up_axis], &md->loc);
    kiln__put_str(x, n, "sr", md->scene_root, &md->loc);
}

/* ---- animation -------------------------------------------------------------------------------- */

static const char *const kiln__mode_names[] = {"absolute", "relative", "additive"};

/* Visibility keys are integers in Cast; values that are not whole numbers stay floats. */
static int kiln__whole_u32(const float *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!(v[i] >= 0.0f && v[i] <= 4294967040.0f) || v[i] != floorf(v[i]) || signbit(v[i])) return 0;
    return 1;
}

/* Where a curve's rest keys take the bound skeleton's rest (cast_export_bind.h): a copy of the
 * values with those keys replaced, a rotation on the hemisphere of the value it replaces so the
 * arc to the next key stays the short one. NULL and no failure when nothing is replaced. */
static float *kiln__rest_values(kiln__exp *x, const kiln_source_curve *c, uint32_t comps, const float rest[10])
{
    static const unsigned first[] = {3, 0, 1, 2, 7, 8, 9};
    if (!rest || !c->rest_keys || c->channel > KILN_SOURCE_CHANNEL_SZ) return NULL;
    const float *from = rest + first[c->channel];
    float *v = kiln__realloc(x->o ? x->o->allocator : NULL, NULL, (size_t)c->key_count * comps * sizeof *v);
    if (!v) {
        kiln__fail(x, KILN_ERR_OUT_OF_MEMORY, &c->loc, "out of memory");
        return NULL;
    }
    memcpy(v, c->values, (size_t)c->key_count * comps * sizeof *v);
    for (uint32_t k = 0; k < c->key_count; k++) {
        if (!c->rest_keys[k]) continue;
        float *key = v + (size_t)k * comps;
        double dot = 0.0;
        for (uint32_t i = 0; i < comps; i++) dot += (double)key[i] * from[i];
        float sign = comps == 4 && dot < 0.0 ? -1.0f : 1.0f;
        for (uint32_t i = 0; i < comps; i++) key[i] = sign * from[i];
    }
    return v;
}

static void kiln__curve(kiln__exp *x, uint32_t anim, const kiln_source_curve *c, const float *rest)
{
    static const char *const props[] = {"rq", "tx", "ty", "tz", "sx", "sy", "sz", "bs", "vb"};
    const kiln_source_loc *loc = &c->loc;
    if ((unsigned)c->channel >= KILN_SOURCE_CHANNEL_COUNT_ || (unsigned)c->mode > KILN_SOURCE_ADDITIVE) {
        kiln__fail(x, KILN_ERR_INVALID_ARGUMENT, loc, "unknown channel %d or mode %d", (int)c->channel, (int)c->mode);
        return;
    }
    uint32_t comps = c->channel == KILN_SOURCE_CHANNEL_ROTATION ? 4 : 1;
    if (!kiln__have(x, c->frames, c->key_count, 1, loc, "kb") ||
        !kiln__have(x, c->values, c->key_count, comps, loc, "kv"))
        return;
    uint32_t n = kiln__node(x, anim, KILN_CAST_ID_CURVE, loc);
    kiln__put_str(x, n, "nn", c->target, loc);
    kiln__put_str(x, n, "kp", props[c->channel], loc);
    kiln__put_ints(x, n, "kb", c->frames, c->key_count, loc);
    float *bound = kiln__rest_values(x, c, comps, rest);
    if (x->r != KILN_OK) return;
    if (bound) {
        kiln__put_copy(x, n, "kv", comps == 4 ? KILN_CAST_TYPE_VEC4 : KILN_CAST_TYPE_FLOAT, bound, c->key_count, loc);
        kiln__free(x->o ? x->o->allocator : NULL, bound);
    } else if (comps == 4) {
        kiln__put_ref(x, n, "kv", KILN_CAST_TYPE_VEC4, c->values, c->key_count, loc);
    } else if (c->channel == KILN_SOURCE_CHANNEL_VISIBILITY && kiln__whole_u32(c->values, c->key_count)) {
        uint32_t small[64], *v = c->key_count <= 64 ? small : NULL;
        if (!v && !(v = kiln__realloc(x->o ? x->o->allocator : NULL, NULL, (size_t)c->key_count * sizeof *v))) {
            kiln__fail(x, KILN_ERR_OUT_OF_MEMORY, loc, "out of memory");
            return;
        }
        for (uint32_t i = 0; i < c->key_count; i++) v[i] = (uint32_t)c->values[i];
        kiln__put_ints(x, n, "kv", v, c->key_count, loc);
        if (v != small) kiln__free(x->o ? x->o->allocator : NULL, v);
    } else {
        kiln__put_ref(x, n, "kv", KILN_CAST_TYPE_FLOAT, c->values, c->key_count, loc);
    }
    kiln__put_str(x, n, "m", kiln__mode_names[c->mode], loc);
    static const float one = 1.0f;
    if (c->mode == KILN_SOURCE_ADDITIVE || memcmp(&c->additive_weight, &one, sizeof one) != 0)
        kiln__put_float(x, n, "ab", c->additive_weight, loc);
}

/* Whether curve i is the first transform curve of its target. */
static int kiln__first_curve_of(const kiln_source_animation *a, uint32_t i)
{
    for (uint32_t k = 0; k < i; k++)
        if (kiln__export_is_transform(&a->curves[k]) && strcmp(a->curves[k].target, a->curves[i].target) == 0)
            return 0;
    return 1;
}

/* What the bake reports binding the clip, once per driven bone: a bone the skeleton lacks (its
 * curves are not written) and an authored rest that differs from the skeleton's. */
static void kiln__bind_report(const kiln__exp *x, const kiln_source_animation *a, const kiln_source_curve *c,
                              const float *rest)
{
    const kiln_source_rest_bone *authored = NULL;
    for (uint32_t i = 0; a->authored_rest && i < a->authored_rest_count && !authored; i++)
        if (a->authored_rest[i].name && strcmp(a->authored_rest[i].name, c->target) == 0) authored = &a->authored_rest[i];
    const char *clip = a->name ? a->name : "(unnamed)";
    if (!rest) {
        kiln__warn_rule(x, a->bind_rule, KILN_ERR_IMPORT_BAD_REFERENCE, authored ? &authored->loc : &c->loc,
                        "clip '%.100s' drives bone '%.100s', which the skeleton it is bound to does not have; "
                        "its curves are not written",
                        clip, c->target);
        return;
    }
    if (!authored) return;
    float own[10];
    memcpy(own, authored->position, 3 * sizeof(float));
    memcpy(own + 3, authored->rotation, 4 * sizeof(float));
    memcpy(own + 7, authored->scale, 3 * sizeof(float));
    double diff = kiln__rest_difference(own, rest);
    if (diff > 1e-4)
        kiln__warn_rule(x, a->bind_rule, KILN_ERR_IMPORT_BAD_VALUE, &authored->loc,
                        "clip '%.100s', bone '%.100s': the rest transform the clip was authored against differs "
                        "from the skeleton's by %.6g (more than 0.0001); the skeleton's is written",
                        clip, c->target, diff);
}

static void kiln__animation(kiln__exp *x, uint32_t root, const kiln_source_animation *a)
{
    if (!kiln__have(x, a->curves, a->curve_count, 1, &a->loc, "curves") ||
        !kiln__have(x, a->overrides, a->override_count, 1, &a->loc, "overrides") ||
        !kiln__have(x, a->notifications, a->notification_count, 1, &a->loc, "notifications"))
        return;
    uint32_t n = kiln__node(x, root, KILN_CAST_ID_ANIMATION, &a->loc);
    kiln__put_str(x, n, "n", a->name, &a->loc);
    kiln__put_float(x, n, "fr", a->framerate, &a->loc);
    kiln__put_bool(x, n, "lo", a->looping, &a->loc);
    /* Only a clip that names a binding rule or flags rest keys needs the skeleton it binds to. */
    int binds = a->bind_rule != NULL;
    for (uint32_t i = 0; i < a->curve_count && !binds; i++) binds = a->curves[i].rest_keys != NULL;
    const kiln_source_skeleton *sk = binds ? kiln__export_clip_skeleton(x->scenes, x->scene_count, x->scene, a) : NULL;
    for (uint32_t i = 0; i < a->curve_count && x->r == KILN_OK; i++) {
        const kiln_source_curve *c = &a->curves[i];
        int32_t b = sk && kiln__export_is_transform(c) ? kiln__export_bone_named(sk, c->target) : -2;
        int report = b != -2 && a->bind_rule && kiln__first_curve_of(a, i);
        float rest[10];
        if (b >= 0 && (report || c->rest_keys)) kiln__export_rest_local(sk, (uint32_t)b, rest);
        if (report) kiln__bind_report(x, a, c, b >= 0 ? rest : NULL);
        if (b == -1 && a->bind_rule) continue;
        kiln__curve(x, n, c, b >= 0 && c->rest_keys ? rest : NULL);
    }
    for (uint32_t i = 0; i < a->override_count && x->r == KILN_OK; i++) {
        const kiln_source_mode_override *o = &a->overrides[i];
        if ((unsigned)o->mode > KILN_SOURCE_ADDITIVE) {
            kiln__fail(x, KILN_ERR_INVALID_ARGUMENT, &o->loc, "unknown mode %d", (int)o->mode);
            return;
        }
        uint32_t c = kiln__node(x, n, KILN_CAST_ID_CURVE_MODE_OVERRIDE, &o->loc);
        kiln__put_str(x, c, "nn", o->target, &o->loc);
        kiln__put_str(x, c, "m", kiln__mode_names[o->mode], &o->loc);
        kiln__put_bool(x, c, "ot", o->translation, &o->loc);
        kiln__put_bool(x, c, "or", o->rotation, &o->loc);
        kiln__put_bool(x, c, "os", o->scale, &o->loc);
    }
    for (uint32_t i = 0; i < a->notification_count && x->r == KILN_OK; i++) {
        const kiln_source_notification *t = &a->notifications[i];
        if (!kiln__have(x, t->frames, t->key_count, 1, &t->loc, "kb")) return;
        uint32_t c = kiln__node(x, n, KILN_CAST_ID_NOTIFICATION_TRACK, &t->loc);
        kiln__put_str(x, c, "n", t->name, &t->loc);
        kiln__put_ints(x, c, "kb", t->frames, t->key_count, &t->loc);
    }
}

/* ---- scenes ----------------------------------------------------------------------------------- */

static void kiln__scene(kiln__exp *x, const kiln_source_scene *s)
{
    kiln_source_loc whole = {NULL, KILN_NO_OFFSET, 0};
    if (!kiln__have(x, s->models, s->model_count, 1, &whole, "models") ||
        !kiln__have(x, s->instances, s->instance_count, 1, &whole, "instances") ||
        !kiln__have(x, s->animations, s->animation_count, 1, &whole, "animations") ||
        !kiln__have(x, s->extras, s->extra_count, 1, &whole, "extras"))
        return;
    uint32_t root = kiln__node(x, KILN_CAST_NONE, KILN_CAST_ID_ROOT, &whole);
    kiln__metadata(x, root, &s->metadata);
    for (uint32_t i = 0; i < s->model_count && x->r == KILN_OK; i++) kiln__model(x, root, &s->models[i]);
    for (uint32_t i = 0; i < s->instance_count && x->r == KILN_OK; i++) kiln__instance(x, root, &s->instances[i]);
    for (uint32_t i = 0; i < s->animation_count && x->r == KILN_OK; i++) kiln__animation(x, root, &s->animations[i]);
    for (uint32_t i = 0; i < s->extra_count && x->r == KILN_OK; i++) {
        const kiln_source_extra *e = &s->extras[i];
        /* An extra is what the runtime does not use: a thing of its own (a light) or details of
         * an item that is written (a clip's play mode). Named as `kiln inspect` lists it. */
        kiln__warn(x, KILN_ERR_IMPORT_UNSUPPORTED, &e->loc, "extra %s%s%s%s is not written: Cast has no place for it",
                   e->kind ? e->kind : "item", e->name ? " '" : "", e->name ? e->name : "", e->name ? "'" : "");
    }
}

/* Builds the writer for every scene. On failure returns the error with err set, writer freed. */
static kiln_result kiln__build(const kiln_source_scene *const *scenes, uint32_t scene_count,
                               const kiln_cast_export_options *options, kiln_cast_writer **out, kiln_diag *err)
{
    *out = NULL;
    kiln__exp x;
    memset(&x, 0, sizeof x);
    x.o = options;
    x.scenes = scenes;
    x.scene_count = scene_count;
    x.err = err;
    x.next_hash = 1;
    if (!scenes || scene_count == 0) {
        return kiln__fail(&x, KILN_ERR_INVALID_ARGUMENT, NULL, "no scenes to write");
    }
    for (uint32_t i = 0; i < scene_count; i++)
        if (!scenes[i]) {
            x.scene = i;
            return kiln__fail(&x, KILN_ERR_INVALID_ARGUMENT, NULL, "scene %u is NULL", i);
        }
    x.w = kiln_cast_writer_create(options ? options->allocator : NULL);
    if (!x.w) return kiln__fail(&x, KILN_ERR_OUT_OF_MEMORY, NULL, "out of memory");
    for (uint32_t i = 0; i < scene_count && x.r == KILN_OK; i++) {
        x.scene = i;
        kiln__scene(&x, scenes[i]);
    }
    kiln__free(options ? options->allocator : NULL, x.hashes);
    if (x.r != KILN_OK) {
        kiln_cast_writer_destroy(x.w);
        return x.r;
    }
    *out = x.w;
    return KILN_OK;
}

kiln_result kiln_cast_export(const kiln_source_scene *const *scenes, uint32_t scene_count,
                             const kiln_cast_export_options *options, kiln_cast_export_result *out, kiln_diag *err)
{
    if (err) memset(err, 0, sizeof *err);
    if (!out) return KILN_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    kiln_cast_writer *w;
    kiln_result r = kiln__build(scenes, scene_count, options, &w, err);
    if (r != KILN_OK) return r;
    const kiln_allocator *a = options ? options->allocator : NULL;
    uint64_t size = kiln_cast_writer_size(w);
    void *data = size <= SIZE_MAX ? kiln__realloc(a, NULL, (size_t)size) : NULL;
    r = data ? kiln_cast_writer_write(w, data, size) : KILN_ERR_OUT_OF_MEMORY;
    kiln_cast_writer_destroy(w);
    if (r != KILN_OK) {
        kiln__free(a, data);
        if (err) {
            err->code = r;
            err->severity = KILN_SEVERITY_ERROR;
            err->offset = KILN_NO_OFFSET;
            snprintf(err->message, sizeof err->message, "cannot hold the %llu-byte Cast file: %s",
                     (unsigned long long)size, kiln_result_str(r));
        }
        return r;
    }
    out->data = data;
    out->size = (size_t)size;
    if (a) out->allocator = *a;
    return KILN_OK;
}

kiln_result kiln_cast_export_save(const kiln_source_scene *const *scenes, uint32_t scene_count,
                                  const kiln_cast_export_options *options, const char *path, kiln_diag *err)
{
    if (err) memset(err, 0, sizeof *err);
    if (!path) return KILN_ERR_INVALID_ARGUMENT;
    kiln_cast_writer *w;
    kiln_result r = kiln__build(scenes, scene_count, options, &w, err);
    if (r != KILN_OK) return r;
    r = kiln_cast_writer_save(w, path, err);
    kiln_cast_writer_destroy(w);
    return r;
}

void kiln_cast_export_result_free(kiln_cast_export_result *out)
{
    if (!out) return;
    kiln__free(&out->allocator, out->data);
    memset(out, 0, sizeof *out);
}
