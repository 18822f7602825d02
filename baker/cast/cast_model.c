/* Typed views of Model, Mesh, Hair and BlendShape nodes (Cast reference B, C.2-C.5, C.7, C.9). */
#include <stdio.h>
#include <string.h>

#include "cast_scene_util.h"

/* Faces are scanned in chunks of this many triangles through the bulk reader. */
#define KILN__FACE_CHUNK 1024u

static kiln_result kiln__read_model(const kiln__rd *rd, kiln_cast_model *m)
{
    static const uint32_t kinds[] = {KILN_CAST_ID_SKELETON, KILN_CAST_ID_MESH, KILN_CAST_ID_HAIR,
                                     KILN_CAST_ID_BLENDSHAPE, KILN_CAST_ID_MATERIAL};
    uint32_t counts[5];
    kiln__str(rd, "n", KILN__OPTIONAL, &m->name);
    kiln__transform(rd, m->position, m->rotation, m->scale);
    kiln__count_kinds(rd->doc, rd->node, kinds, counts, 5);
    m->skeleton = kiln_cast_child(rd->doc, rd->node, KILN_CAST_ID_SKELETON, 0);
    if (counts[0] > 1) {
        kiln__report(rd, NULL, NULL, KILN_ERR_CAST_DUPLICATE, KILN_SEVERITY_WARNING,
                     "%u skeletons; only the first is used", counts[0]);
    }
    m->mesh_count = counts[1];
    m->hair_count = counts[2];
    m->blend_shape_count = counts[3];
    m->material_count = counts[4];
    return KILN_OK;
}

kiln_result kiln_cast_get_model(const kiln_cast_doc *doc, uint32_t node, kiln_cast_model *out,
                                const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_MODEL, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_model(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}

/* Mesh and Hair `m`: a Material among the owning Model's children; not found means no
 * material (the default one), which is a repair, not a failure. */
static void kiln__material_ref(const kiln__rd *rd, uint64_t *hash, uint32_t *material)
{
    kiln__ref(rd, "m", KILN__OPTIONAL, rd->n->parent, KILN_CAST_ID_MATERIAL, 0, hash, material);
}

static void kiln__scan_faces(const kiln__rd *rd, kiln_cast_mesh *m)
{
    uint32_t idx[3 * KILN__FACE_CHUNK];
    uint32_t n = m->vertex_count, first_bad = UINT32_MAX;
    for (uint32_t f0 = 0; f0 < m->face_count; f0 += KILN__FACE_CHUNK) {
        uint32_t fn = m->face_count - f0 < KILN__FACE_CHUNK ? m->face_count - f0 : KILN__FACE_CHUNK;
        kiln_cast_array_read_u32(&m->faces, 3 * f0, 3 * fn, idx);
        for (uint32_t f = 0; f < fn; f++) {
            uint32_t a = idx[3 * f], b = idx[3 * f + 1], c = idx[3 * f + 2];
            if (a >= n || b >= n || c >= n) {
                if (first_bad == UINT32_MAX) first_bad = f0 + f;
                m->bad_index_face_count++;
            } else if (a == b || b == c || a == c) {
                m->degenerate_face_count++;
            }
        }
    }
    if (m->bad_index_face_count) {
        kiln__report(rd, "f", kiln_cast_find_prop(rd->doc, rd->node, "f", NULL), KILN_ERR_CAST_INDEX_RANGE,
                     KILN_SEVERITY_ERROR, "%u of %u faces index past the %u vertices (first: face %u); they are dropped",
                     m->bad_index_face_count, m->face_count, n, first_bad);
    }
    if (m->degenerate_face_count) {
        kiln__report(rd, "f", kiln_cast_find_prop(rd->doc, rd->node, "f", NULL), KILN_ERR_CAST_BAD_VALUE,
                     KILN_SEVERITY_WARNING, "%u of %u faces are degenerate (two equal indices); they are dropped",
                     m->degenerate_face_count, m->face_count);
    }
}

static void kiln__mesh_faces(const kiln__rd *rd, kiln_cast_mesh *m)
{
    uint32_t indices = m->faces.count;
    m->face_count = indices / 3;
    if (indices % 3) {
        kiln__report(rd, "f", kiln_cast_find_prop(rd->doc, rd->node, "f", NULL), KILN_ERR_CAST_LENGTH_MISMATCH,
                     KILN_SEVERITY_WARNING, "%u indices is not a multiple of 3; the trailing %u are ignored", indices,
                     indices % 3);
    }
    kiln__scan_faces(rd, m);
}

/* A layer count (ul, cl): more than KILN_CAST_MAX_LAYERS are not read. */
static uint32_t kiln__layer_count(const kiln__rd *rd, const char *name)
{
    uint32_t count = kiln__count_opt(rd, name, UINT32_MAX);
    if (count <= KILN_CAST_MAX_LAYERS) return count;
    kiln__report(rd, name, kiln_cast_find_prop(rd->doc, rd->node, name, NULL), KILN_ERR_LIMIT, KILN_SEVERITY_ERROR,
                 "%u layers; only the first %d are read", count, KILN_CAST_MAX_LAYERS);
    return KILN_CAST_MAX_LAYERS;
}

/* One per-vertex layer `name` (or `alt` when `name` is absent). A missing layer is skipped,
 * one of the wrong length dropped. */
static void kiln__mesh_layer(const kiln__rd *rd, const char *name, const char *alt, uint32_t types, uint32_t n,
                             kiln_cast_array *out)
{
    if (alt && !kiln_cast_find_prop(rd->doc, rd->node, name, NULL) && kiln_cast_find_prop(rd->doc, rd->node, alt, NULL)) {
        name = alt;
    }
    if (!kiln_cast_find_prop(rd->doc, rd->node, name, NULL)) {
        kiln__report(rd, name, NULL, KILN_ERR_CAST_MISSING_PROPERTY, KILN_SEVERITY_WARNING,
                     "layer '%s' is missing; it is skipped", name);
        return;
    }
    kiln__array(rd, name, types, KILN__OPTIONAL, out);
    kiln__expect_len(rd, name, out, n, "one per vertex");
}

static void kiln__mesh_uvs(const kiln__rd *rd, kiln_cast_mesh *m)
{
    char name[16];
    m->uv_layer_count = kiln__layer_count(rd, "ul");
    for (uint32_t k = 0; k < m->uv_layer_count; k++) {
        snprintf(name, sizeof name, "u%u", k);
        kiln__mesh_layer(rd, name, NULL, KILN__TV2, m->vertex_count, &m->uv[k]);
    }
    if (!kiln_cast_find_prop(rd->doc, rd->node, "ul", NULL) && kiln_cast_find_prop(rd->doc, rd->node, "u0", NULL)) {
        kiln__report(rd, "u0", kiln_cast_find_prop(rd->doc, rd->node, "u0", NULL), KILN_ERR_CAST_MISSING_PROPERTY,
                     KILN_SEVERITY_WARNING, "UV data without 'ul' (0 layers); ignored");
    }
}

/* Colour layers (reference C.4): `cl` layers c0..; without `cl`, the legacy `vc` is the only
 * layer. Like the reference reader, layer 0 falls back to `vc` when c0 is absent. */
static void kiln__mesh_colors(const kiln__rd *rd, kiln_cast_mesh *m)
{
    static const uint32_t types = KILN__TI | KILN__TV4;
    char name[16];
    if (!kiln_cast_find_prop(rd->doc, rd->node, "cl", NULL)) {
        if (!kiln_cast_find_prop(rd->doc, rd->node, "vc", NULL)) return;
        m->color_layer_count = 1;
        kiln__mesh_layer(rd, "vc", NULL, types, m->vertex_count, &m->color[0]);
        return;
    }
    m->color_layer_count = kiln__layer_count(rd, "cl");
    for (uint32_t k = 0; k < m->color_layer_count; k++) {
        snprintf(name, sizeof name, "c%u", k);
        kiln__mesh_layer(rd, name, k == 0 ? "vc" : NULL, types, m->vertex_count, &m->color[k]);
    }
}

/* Skin (reference C.3): mi slots per vertex in wb/wv. mi == 1 binds rigidly, so wv is
 * optional there. Any inconsistency drops the whole skin. */
static void kiln__mesh_skin(const kiln__rd *rd, kiln_cast_mesh *m)
{
    kiln_cast_array wb, wv;
    uint32_t mi = kiln__count_opt(rd, "mi", UINT32_MAX);
    uint64_t slots = (uint64_t)m->vertex_count * mi;
    kiln__array(rd, "wb", KILN__T_INT, KILN__OPTIONAL, &wb);
    kiln__array(rd, "wv", KILN__T_FLOAT, KILN__OPTIONAL, &wv);
    if (mi == 0) {
        if (wb.data || wv.data) {
            kiln__report(rd, "mi", NULL, KILN_ERR_CAST_MISSING_PROPERTY, KILN_SEVERITY_WARNING,
                         "weights without 'mi' (or mi = 0): the mesh is not skinned");
        }
        return;
    }
    if (!wb.data || (mi > 1 && !wv.data)) {
        kiln__report(rd, wb.data ? "wv" : "wb", NULL, KILN_ERR_CAST_MISSING_PROPERTY, KILN_SEVERITY_WARNING,
                     "mi = %u but '%s' is absent; the mesh is not skinned", mi, wb.data ? "wv" : "wb");
        return;
    }
    if (!kiln__expect_len(rd, "wb", &wb, slots, "vertex count x mi; the skin is dropped")) return;
    if (mi == 1 && wv.data && wv.count != m->vertex_count) {
        kiln__report(rd, "wv", kiln_cast_find_prop(rd->doc, rd->node, "wv", NULL), KILN_ERR_CAST_LENGTH_MISMATCH,
                     KILN_SEVERITY_WARNING, "%u weights for %u vertices; ignored (mi = 1 binds rigidly)", wv.count,
                     m->vertex_count);
        memset(&wv, 0, sizeof wv);
    } else if (!kiln__expect_len(rd, "wv", &wv, slots, "vertex count x mi; the skin is dropped")) {
        return;
    }
    m->max_influence = mi;
    m->weight_bones = wb;
    m->weight_values = wv;
}

static const char *const kiln__skinning_names[] = {"linear", "quaternion"};

static kiln_result kiln__read_mesh(const kiln__rd *rd, kiln_cast_mesh *m)
{
    kiln_result r = kiln__array(rd, "vp", KILN__TV3, KILN__REQUIRED, &m->positions);
    r = kiln__first(r, kiln__array(rd, "f", KILN__T_INT, KILN__REQUIRED, &m->faces));
    if (r != KILN_OK) return r;
    kiln__str(rd, "n", KILN__OPTIONAL, &m->name);
    m->vertex_count = m->positions.count;
    kiln__mesh_faces(rd, m);
    if (m->vertex_count == 0 || m->face_count == 0) {
        kiln__report(rd, NULL, NULL, KILN_ERR_CAST_EMPTY, KILN_SEVERITY_WARNING,
                     "empty mesh (%u vertices, %u faces): nothing to draw", m->vertex_count, m->face_count);
    }
    kiln__array(rd, "vn", KILN__TV3, KILN__OPTIONAL, &m->normals);
    kiln__expect_len(rd, "vn", &m->normals, m->vertex_count, "one per vertex");
    kiln__array(rd, "vt", KILN__TV3, KILN__OPTIONAL, &m->tangents);
    kiln__expect_len(rd, "vt", &m->tangents, m->vertex_count, "one per vertex");
    kiln__mesh_uvs(rd, m);
    kiln__mesh_colors(rd, m);
    kiln__mesh_skin(rd, m);
    int sm = KILN_CAST_SKIN_LINEAR;
    kiln__enum(rd, "sm", kiln__skinning_names, 2, KILN__OPTIONAL, KILN_CAST_SKIN_LINEAR, &sm);
    m->skinning = (kiln_cast_skinning)sm;
    kiln__material_ref(rd, &m->material_hash, &m->material);
    return KILN_OK;
}

kiln_result kiln_cast_get_mesh(const kiln_cast_doc *doc, uint32_t node, kiln_cast_mesh *out,
                               const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_MESH, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_mesh(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}

/* Σ(se[i] + 1), in 64 bits so that hostile counts cannot wrap into agreement. */
static uint64_t kiln__hair_particles(const kiln_cast_array *se)
{
    uint32_t buf[KILN__FACE_CHUNK];
    uint64_t sum = 0;
    for (uint32_t i0 = 0; i0 < se->count; i0 += KILN__FACE_CHUNK) {
        uint32_t n = se->count - i0 < KILN__FACE_CHUNK ? se->count - i0 : KILN__FACE_CHUNK;
        kiln_cast_array_read_u32(se, i0, n, buf);
        for (uint32_t i = 0; i < n; i++) sum += (uint64_t)buf[i] + 1;
    }
    return sum;
}

static kiln_result kiln__read_hair(const kiln__rd *rd, kiln_cast_hair *h)
{
    kiln_result r = kiln__array(rd, "se", KILN__T_INT, KILN__REQUIRED, &h->segments);
    r = kiln__first(r, kiln__array(rd, "pt", KILN__TV3, KILN__REQUIRED, &h->particles));
    if (r != KILN_OK) return r;
    uint64_t want = kiln__hair_particles(&h->segments);
    if (want != h->particles.count) {
        kiln__report(rd, "pt", kiln_cast_find_prop(rd->doc, rd->node, "pt", NULL), KILN_ERR_CAST_LENGTH_MISMATCH,
                     KILN_SEVERITY_ERROR, "%u particles, but the %u strands in 'se' need %llu; the hair is dropped",
                     h->particles.count, h->segments.count, (unsigned long long)want);
        return KILN_ERR_CAST_LENGTH_MISMATCH;
    }
    kiln__str(rd, "n", KILN__OPTIONAL, &h->name);
    h->strand_count = h->segments.count;
    h->particle_count = h->particles.count;
    kiln__material_ref(rd, &h->material_hash, &h->material);
    return KILN_OK;
}

kiln_result kiln_cast_get_hair(const kiln_cast_doc *doc, uint32_t node, kiln_cast_hair *out,
                               const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_HAIR, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_hair(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}

static kiln_result kiln__read_blend_shape(const kiln__rd *rd, kiln_cast_blend_shape *s)
{
    kiln_result r = kiln__str(rd, "n", KILN__REQUIRED, &s->name);
    r = kiln__first(r, kiln__ref(rd, "b", KILN__REQUIRED, rd->n->parent, KILN_CAST_ID_MESH, 0, &s->base_hash,
                                 &s->base_mesh));
    r = kiln__first(r, kiln__array(rd, "vi", KILN__T_INT, KILN__REQUIRED, &s->indices));
    r = kiln__first(r, kiln__array(rd, "vp", KILN__TV3, KILN__REQUIRED, &s->targets));
    if (r != KILN_OK) return r;
    s->pair_count = s->indices.count < s->targets.count ? s->indices.count : s->targets.count;
    if (s->indices.count != s->targets.count) {
        kiln__report(rd, "vp", kiln_cast_find_prop(rd->doc, rd->node, "vp", NULL), KILN_ERR_CAST_LENGTH_MISMATCH,
                     KILN_SEVERITY_ERROR, "'vi' has %u entries and 'vp' %u; the first %u pairs are used",
                     s->indices.count, s->targets.count, s->pair_count);
    }
    /* ts is a leftover array in the spec table: element 0 is read, and 0 means 1 like the
     * importers' `ts or 1.0`. */
    s->target_scale = kiln__positive(rd, "ts", 1.0f, 0);
    return KILN_OK;
}

kiln_result kiln_cast_get_blend_shape(const kiln_cast_doc *doc, uint32_t node, kiln_cast_blend_shape *out,
                                      const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_BLENDSHAPE, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_blend_shape(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}
