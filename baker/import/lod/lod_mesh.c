/* MSH1: one LOD mesh (B.6) becomes one Kiln mesh per face group (C.3). Positions, normals and
 * each texture layer are indexed separately per corner; every distinct tuple of indices
 * becomes one vertex. */
#include <string.h>

#include "lod_internal.h"

/* An index array of a face group, bounds-checked against the array it indexes. */
typedef struct kiln__lod_ixs {
    uint64_t off;
    uint32_t width, count; /* count 0: absent */
} kiln__lod_ixs;

typedef struct kiln__lod_msh {
    const kiln__lod_chunk *ch;
    const char *name;
    uint8_t     mode, visible;
    uint32_t    n, m, t, k[2];
    uint64_t    pos, nrm, uv[2];
    kiln__lod_skin skin;
} kiln__lod_msh;

/* Index width for an array of `n` elements (B.6 table): FaceType 2 and legacy FaceType 1. */
static uint32_t kiln__lod_width(uint32_t n, int32_t face_type)
{
    uint32_t lim = face_type == 2 ? 256u : 255u;
    if (n <= lim) return 1;
    if (n <= lim * 256u + (face_type == 2 ? 0u : 255u)) return 2;
    return 4;
}

static kiln_result kiln__lod_indices(kiln__lod *c, kiln__lod_rd *rd, const char *what, uint32_t count, uint32_t limit,
                                     int32_t face_type, kiln__lod_ixs *out)
{
    out->width = kiln__lod_width(limit, face_type);
    out->count = count;
    kiln_result r = kiln__lod_span(c, rd, what, count, out->width, &out->off);
    if (r != KILN_OK) return r;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t o = out->off + (uint64_t)i * out->width;
        uint32_t ix = kiln__lod_ld_index(c, o, out->width);
        if (ix >= limit)
            return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_REFERENCE, "R10", rd->path, o,
                                  "%s %u is %u, not below the array size %u", what, i, ix, limit);
    }
    return KILN_OK;
}

/* An index count that must be 0 or the corner count (R11). */
static kiln_result kiln__lod_corner_count(kiln__lod *c, kiln__lod_rd *rd, const char *what, uint32_t corners,
                                          uint32_t *out)
{
    uint64_t at = rd->pos;
    kiln_result r = kiln__lod_count(c, rd, what, out);
    if (r == KILN_OK && *out != 0 && *out != corners)
        return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_COUNT, "R11", rd->path, at,
                              "%s %u is neither 0 nor VertexIndCnt %u", what, *out, corners);
    return r;
}

/* Parts 1 and 2: name, flags, positions, normals, texture coordinates. */
static kiln_result kiln__lod_msh_arrays(kiln__lod *c, kiln__lod_rd *rd, kiln__lod_msh *s)
{
    const char *path = rd->path;
    uint8_t skel_hint;
    kiln_result r = kiln__lod_lstr(c, rd, "MeshName", &s->name);
    if (r == KILN_OK) r = kiln__lod_u8(c, rd, "isSkeletonExists", &skel_hint);
    uint64_t mode_at = rd->pos;
    if (r == KILN_OK) r = kiln__lod_u8(c, rd, "MeshMode", &s->mode);
    if (r != KILN_OK) return r;
    if (s->mode != 2 && s->mode != 3)
        return kiln__lod_fail(c, KILN_ERR_IMPORT_UNSUPPORTED, "R18", path, mode_at, "MeshMode %u is not 2 or 3",
                              s->mode);
    if (s->mode == 2)
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W5", path, mode_at,
                       "mesh '%s' uses the legacy MeshMode 2: read as such", s->name);
    r = kiln__lod_u8(c, rd, "isMeshVisible", &s->visible);
    if (r == KILN_OK) r = kiln__lod_count(c, rd, "MeshVertexCnt", &s->n);
    if (r == KILN_OK) r = kiln__lod_span(c, rd, "MeshPointsPos", s->n, 12, &s->pos);
    if (r == KILN_OK) r = kiln__lod_finite(c, path, s->pos, (uint64_t)s->n * 3, "MeshPointsPos");
    if (r == KILN_OK) r = kiln__lod_count(c, rd, "MeshNormalsCnt", &s->m);
    if (r == KILN_OK) r = kiln__lod_span(c, rd, "MeshNormals", s->m, 12, &s->nrm);
    if (r == KILN_OK) r = kiln__lod_finite(c, path, s->nrm, (uint64_t)s->m * 3, "MeshNormals");
    if (r != KILN_OK) return r;
    s->t = 1;
    if (s->mode == 3) {
        uint64_t at = rd->pos;
        uint8_t t;
        r = kiln__lod_u8(c, rd, "MeshTextureNumber", &t);
        if (r != KILN_OK) return r;
        if (t != 1 && t != 2)
            return kiln__lod_fail(c, KILN_ERR_IMPORT_UNSUPPORTED, "R18", path, at, "MeshTextureNumber %u is not 1 or 2",
                                  t);
        s->t = t;
    }
    for (uint32_t i = 0; i < s->t; i++) {
        r = kiln__lod_count(c, rd, "TxCrdsCnt", &s->k[i]);
        if (r != KILN_OK) return r;
    }
    for (uint32_t i = 0; i < s->t; i++) {
        r = kiln__lod_span(c, rd, "TxCrds", s->k[i], 8, &s->uv[i]);
        if (r == KILN_OK) r = kiln__lod_finite(c, path, s->uv[i], (uint64_t)s->k[i] * 2, "TxCrds");
        if (r != KILN_OK) return r;
    }
    return KILN_OK;
}

/* De-indexes one face group into a Kiln mesh. */
static kiln_result kiln__lod_build(kiln__lod *c, const kiln__lod_msh *s, kiln__lod_mesh *out, uint32_t corners,
                                   const kiln__lod_ixs *vi, const kiln__lod_ixs *ni, const kiln__lod_ixs *ti)
{
    kiln_source_mesh *m = &out->mesh;
    const kiln_allocator *a = &c->scene->allocator;
    uint64_t cap = 16;
    while (cap < (uint64_t)corners * 2) cap *= 2;
    uint32_t *table = a->realloc_fn(a->user, NULL, (size_t)cap * sizeof *table);
    uint32_t *keys = a->realloc_fn(a->user, NULL, (size_t)corners * 4 * sizeof *keys);
    uint32_t *faces = kiln_source_alloc(c->scene, corners, sizeof *faces);
    if (!table || !keys || !faces) {
        if (table) a->free_fn(a->user, table);
        if (keys) a->free_fn(a->user, keys);
        return kiln__lod_oom(c, m->loc.path, m->loc.offset);
    }
    memset(table, 0xFF, (size_t)cap * sizeof *table);
    uint32_t verts = 0;
    for (uint32_t k = 0; k < corners; k++) {
        uint32_t key[4];
        key[0] = kiln__lod_ld_index(c, vi->off + (uint64_t)k * vi->width, vi->width);
        key[1] = ni->count ? kiln__lod_ld_index(c, ni->off + (uint64_t)k * ni->width, ni->width) : KILN_SOURCE_NONE;
        for (int t = 0; t < 2; t++)
            key[2 + t] = ti[t].count ? kiln__lod_ld_index(c, ti[t].off + (uint64_t)k * ti[t].width, ti[t].width)
                                     : KILN_SOURCE_NONE;
        uint32_t h = (key[0] * 0x9E3779B1u) ^ (key[1] * 0x85EBCA77u) ^ (key[2] * 0xC2B2AE3Du) ^ (key[3] * 0x27D4EB2Fu);
        h ^= h >> 15;
        uint64_t slot = h & (cap - 1);
        for (;;) {
            uint32_t e = table[slot];
            if (e == KILN_SOURCE_NONE) {
                table[slot] = verts;
                memcpy(keys + (size_t)verts * 4, key, sizeof key);
                faces[k] = verts++;
                break;
            }
            if (memcmp(keys + (size_t)e * 4, key, sizeof key) == 0) {
                faces[k] = e;
                break;
            }
            slot = (slot + 1) & (cap - 1);
        }
    }
    a->free_fn(a->user, table);

    kiln_result r = KILN_OK;
    float *pos = kiln_source_alloc(c->scene, verts, 3 * sizeof(float));
    float *nrm = ni->count ? kiln_source_alloc(c->scene, verts, 3 * sizeof(float)) : NULL;
    float *uv[2] = {NULL, NULL};
    for (int t = 0; t < 2; t++)
        if (ti[t].count) uv[t] = kiln_source_alloc(c->scene, verts, 2 * sizeof(float));
    int skinned = s->skin.count != NULL;
    uint32_t mi = 0;
    if (skinned) {
        int unweighted = 0;
        for (uint32_t v = 0; v < verts; v++) {
            uint32_t n = s->skin.count[keys[(size_t)v * 4]];
            if (n > mi) mi = n;
            if (!n) unweighted = 1;
        }
        /* One influence means rigid to the bake (weight 1 whatever the value), so a mesh
         * with unweighted vertices keeps two slots to carry their zero weights. */
        if (mi < 1) mi = 1;
        if (mi == 1 && unweighted) mi = 2;
    }
    uint32_t *wb = skinned ? kiln_source_alloc(c->scene, (uint64_t)verts * mi, sizeof *wb) : NULL;
    float *wv = skinned ? kiln_source_alloc(c->scene, (uint64_t)verts * mi, sizeof *wv) : NULL;
    if (!pos || (ni->count && !nrm) || (ti[0].count && !uv[0]) || (ti[1].count && !uv[1]) ||
        (skinned && (!wb || !wv))) {
        r = kiln__lod_oom(c, m->loc.path, m->loc.offset);
    } else {
        for (uint32_t v = 0; v < verts; v++) {
            const uint32_t *key = keys + (size_t)v * 4;
            for (int j = 0; j < 3; j++) {
                pos[v * 3 + j] = kiln__lod_ld_f32(c, s->pos + (uint64_t)key[0] * 12 + 4 * j);
                if (nrm) nrm[v * 3 + j] = kiln__lod_ld_f32(c, s->nrm + (uint64_t)key[1] * 12 + 4 * j);
            }
            for (int t = 0; t < 2; t++) {
                if (!uv[t]) continue;
                uv[t][v * 2] = kiln__lod_ld_f32(c, s->uv[t] + (uint64_t)key[2 + t] * 8);
                /* OpenGL's bottom-left origin to Kiln's top-left (C.4). */
                uv[t][v * 2 + 1] = 1.0f - kiln__lod_ld_f32(c, s->uv[t] + (uint64_t)key[2 + t] * 8 + 4);
            }
            if (skinned) {
                uint32_t n = s->skin.count[key[0]];
                for (uint32_t j = 0; j < mi; j++) {
                    wb[(size_t)v * mi + j] = j < n ? s->skin.bones[(size_t)key[0] * 8 + j] : 0;
                    wv[(size_t)v * mi + j] = j < n ? s->skin.weights[(size_t)key[0] * 8 + j] : 0.0f;
                }
            }
        }
        m->vertex_count = verts;
        m->face_count = corners / 3;
        m->positions = pos;
        m->normals = nrm;
        m->uv_layer_count = ti[1].count ? 2 : ti[0].count ? 1 : 0;
        m->uv[0] = uv[0];
        m->uv[1] = uv[1];
        m->faces = faces;
        m->max_influence = skinned ? mi : 0;
        m->weight_bones = wb;
        m->weight_values = wv;
        m->material = KILN_SOURCE_NONE;
        out->layout = kiln_source_strfmt(c->scene, "position%s%s%s", nrm ? " normal" : "", uv[0] ? " uv0" : "",
                                         uv[1] ? " uv1" : "");
        if (!out->layout) r = kiln__lod_oom(c, m->loc.path, m->loc.offset);
    }
    a->free_fn(a->user, keys);
    return r;
}

/* Part 4: one face group. */
static kiln_result kiln__lod_face_group(kiln__lod *c, kiln__lod_rd *rd, const kiln__lod_msh *s, uint32_t g)
{
    uint64_t start = rd->pos;
    const char *path = kiln__lod_path(c, s->ch->path, "facegroup", g);
    if (!path) return kiln__lod_oom(c, s->ch->path, start);
    rd->path = path;
    int32_t face_type;
    uint8_t face_mode, visible;
    const char *face_name, *mat[2] = {NULL, NULL};
    kiln_result r = kiln__lod_i32(c, rd, "FaceType", &face_type);
    if (r != KILN_OK) return r;
    if (face_type != 1 && face_type != 2)
        return kiln__lod_fail(c, KILN_ERR_IMPORT_UNSUPPORTED, "R18", path, start, "FaceType %d is not 1 or 2",
                              face_type);
    if (face_type == 1)
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W5", path, start,
                       "face group %u uses the legacy FaceType 1 (older index widths, no smoothing data)", g);
    uint64_t mode_at = rd->pos;
    r = kiln__lod_u8(c, rd, "FaceMode", &face_mode);
    if (r == KILN_OK) r = kiln__lod_lstr(c, rd, "FaceName", &face_name);
    if (r == KILN_OK) r = kiln__lod_u8(c, rd, "isFaceVisible", &visible);
    if (r != KILN_OK) return r;
    if (s->mode == 3) {
        uint32_t len[2];
        for (uint32_t t = 0; t < s->t && r == KILN_OK; t++) r = kiln__lod_count(c, rd, "FaceMatNameLen", &len[t]);
        for (uint32_t t = 0; t < s->t && r == KILN_OK; t++) {
            uint64_t at;
            r = kiln__lod_span(c, rd, "FaceMatName", len[t], 1, &at);
            if (r == KILN_OK) mat[t] = kiln__lod_decode(c, at, len[t], path, "FaceMatName");
            if (r == KILN_OK && !mat[t]) r = kiln__lod_oom(c, path, at);
        }
    } else {
        r = kiln__lod_lstr(c, rd, "FaceMatName", &mat[0]);
    }
    if (r != KILN_OK) return r;

    uint64_t at = rd->pos;
    uint32_t corners, smooth, normals, tex[2] = {0, 0};
    r = kiln__lod_count(c, rd, "VertexIndCnt", &corners);
    if (r != KILN_OK) return r;
    if (corners % 3)
        return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_COUNT, "R11", path, at,
                              "VertexIndCnt %u is not a multiple of 3", corners);
    kiln__lod_ixs vi, ni, ti[2];
    memset(&ni, 0, sizeof ni);
    memset(ti, 0, sizeof ti);
    r = kiln__lod_indices(c, rd, "VertexIndex", corners, s->n, face_type, &vi);
    if (r != KILN_OK) return r;
    if (face_type == 2) {
        at = rd->pos;
        uint64_t skip;
        r = kiln__lod_count(c, rd, "SmoothDataCnt", &smooth);
        if (r == KILN_OK) r = kiln__lod_span(c, rd, "SmoothData", smooth, 4, &skip);
        if (r != KILN_OK) return r;
        if (smooth != 0 && smooth != corners / 3)
            kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W11", path, at,
                           "SmoothDataCnt %u is neither 0 nor the triangle count %u: smoothing data ignored", smooth,
                           corners / 3);
    }
    r = kiln__lod_corner_count(c, rd, "NormalsIndCnt", corners, &normals);
    if (r == KILN_OK) r = kiln__lod_indices(c, rd, "NormalIndex", normals, s->m, face_type, &ni);
    for (uint32_t t = 0; t < s->t && r == KILN_OK; t++) r = kiln__lod_corner_count(c, rd, "TxCrdsIndCnt", corners, &tex[t]);
    for (uint32_t t = 0; t < s->t && r == KILN_OK; t++)
        r = kiln__lod_indices(c, rd, "TxCrdsInd", tex[t], s->k[t], face_type, &ti[t]);
    if (r != KILN_OK) return r;

    if (face_mode != 0) {
        kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W6", path, mode_at,
                       "face group %u has FaceMode %u (not a triangle list): dropped", g, face_mode);
        return KILN_OK;
    }
    if (corners == 0) return KILN_OK;

    kiln__lod_mesh *out;
    KILN__LOD_PUSH(c, c->meshes, c->mesh_count, c->mesh_cap, out);
    if (!out) return kiln__lod_oom(c, path, start);
    out->mesh.loc.path = path;
    out->mesh.loc.offset = start;
    out->mesh.loc.size = rd->pos - start;
    out->mesh.name = *face_name ? kiln_source_strfmt(c->scene, "%s/%s", s->name, face_name)
                                : kiln_source_strfmt(c->scene, "%s/fg%u", s->name, g);
    if (!out->mesh.name) return kiln__lod_oom(c, path, start);
    out->material_name = mat[0];
    out->second_material_name = mat[1] && *mat[1] ? mat[1] : NULL;
    out->visible = s->visible && visible;
    return kiln__lod_build(c, s, out, corners, &vi, &ni, ti);
}

kiln_result kiln__lod_read_msh1(kiln__lod *c, const kiln__lod_chunk *ch)
{
    kiln__lod_rd rd;
    kiln__lod_rd_init(&rd, c, ch->data, ch->end, ch->path);
    kiln__lod_msh s;
    memset(&s, 0, sizeof s);
    s.ch = ch;
    kiln_result r = kiln__lod_msh_arrays(c, &rd, &s);
    if (r == KILN_OK) r = kiln__lod_read_skin(c, &rd, s.n, &s.skin);
    uint32_t groups;
    if (r == KILN_OK) r = kiln__lod_count(c, &rd, "FaceGroupsCnt", &groups);
    if (r != KILN_OK) return r;
    for (uint32_t g = 0; g < groups; g++) {
        r = kiln__lod_face_group(c, &rd, &s, g);
        if (r != KILN_OK) return r;
    }
    if (kiln__lod_left(&rd))
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W3", ch->path, rd.pos, "%llu unread byte(s) at the end of MSH1",
                       (unsigned long long)kiln__lod_left(&rd));
    return KILN_OK;
}
