/* Walks every accessor of a loaded blob the way an engine would use it, and checks that each
 * pointer it is given lies inside the blob memory before reading through it.
 *
 * For blobs that kiln_blob_load accepted with full verification or KILN_BLOB_LOAD_NO_CRC: the
 * walk follows every view, every string field, every stream's whole payload, and the records'
 * links as consumers follow them (index -> vertex of every attribute stream, joint -> bone and
 * inverse bind, parent -> bone, strand -> particles, ranges -> records, name -> lookup), so a
 * verification gap shows up as a failed walk here, or as a read the sanitizers report.
 * Shared by the tests (every single-bit flip of a blob) and the fuzz target. Header-only.
 *
 *   blob_walk w;
 *   if (!blob_walk_run(blob, mem, size, &w)) printf("%s\n", w.why);
 */
#ifndef KILN_TEST_BLOB_WALK_H
#define KILN_TEST_BLOB_WALK_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kiln/blob.h"
#include "kiln/instance.h"

typedef struct blob_walk {
    uintptr_t lo, hi;     /* [mem, mem + size) */
    uint64_t  sum;        /* of every byte read, so that no read is optimised away */
    uint64_t  reads;      /* accessor results checked */
    int       failed;
    char      why[256];   /* the first failure */
} blob_walk;

static inline int bw_fail(blob_walk *w, const char *fmt, ...)
{
    if (!w->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->why, sizeof w->why, fmt, ap);
        va_end(ap);
    }
    w->failed = 1;
    return 0;
}

/* [p, p + n) inside the blob; then every byte is read. */
static inline int bw_read(blob_walk *w, const void *p, uint64_t n, const char *what)
{
    uintptr_t a = (uintptr_t)p;
    w->reads++;
    if (n == 0) return 1;
    if (!p || a < w->lo || a > w->hi || n > w->hi - a)
        return bw_fail(w, "%s: [%p, +%llu) is outside the blob [%p, %p)", what, p, (unsigned long long)n,
                       (void *)w->lo, (void *)w->hi);
    const unsigned char *b = (const unsigned char *)p;
    for (uint64_t i = 0; i < n; i++) w->sum += b[i];
    return 1;
}

/* A string: inside the blob and terminated there, or an empty string from elsewhere. */
static inline const char *bw_str(blob_walk *w, const kiln_blob *blob, uint32_t offset, const char *what)
{
    const char *s = kiln_blob_string(blob, offset);
    uintptr_t a = (uintptr_t)s;
    w->reads++;
    if (!s) {
        bw_fail(w, "%s: kiln_blob_string returned NULL", what);
        return "";
    }
    if (a < w->lo || a >= w->hi) {
        if (s[0] != '\0') bw_fail(w, "%s: non-empty string outside the blob", what);
        return s;
    }
    const void *nul = memchr(s, 0, w->hi - a);
    if (!nul) {
        bw_fail(w, "%s: string at offset %u runs past the blob end", what, offset);
        return "";
    }
    bw_read(w, s, (uint64_t)((const char *)nul - s) + 1, what);
    return s;
}

/* Element `i` of a stream, checked against the stream and the blob. */
static inline const unsigned char *bw_elem(blob_walk *w, const kiln_blob *blob, const kiln_blob_stream *s, uint64_t i,
                                           const char *what)
{
    const unsigned char *d = (const unsigned char *)kiln_blob_stream_data(blob, s);
    if (!d) {
        bw_fail(w, "%s: stream has no data", what);
        return NULL;
    }
    if (i >= s->count) {
        bw_fail(w, "%s: element %llu of a %u-element stream", what, (unsigned long long)i, s->count);
        return NULL;
    }
    uintptr_t a = (uintptr_t)d + i * s->stride;
    if (!bw_read(w, (const void *)a, s->stride, what)) return NULL;
    return (const unsigned char *)a;
}

static inline uint32_t bw_u32(const unsigned char *p, uint32_t bytes)
{
    if (bytes == 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

#define BW_VIEW(w, ptr, count, what) bw_read((w), (ptr), (uint64_t)(count) * sizeof *(ptr), (what))
/* Records [first, first + count) of a view (which is NULL when empty). */
#define BW_SUB(w, ptr, first, count, what) \
    ((count) ? BW_VIEW((w), (ptr) + (first), (count), (what)) : 1)
#define BW_RANGE_OK(first, cnt, total) ((uint64_t)(first) + (cnt) <= (uint64_t)(total))

/* Returns 1 when every access stayed inside [mem, mem + size); else 0 and w->why. */
static inline int blob_walk_run(const kiln_blob *blob, const void *mem, size_t size, blob_walk *w)
{
    memset(w, 0, sizeof *w);
    w->lo = (uintptr_t)mem;
    w->hi = (uintptr_t)mem + size;
    if (!blob) return bw_fail(w, "blob is NULL");

    const kiln_blob_header *h = kiln_blob_header_of(blob);
    bw_read(w, h, sizeof *h, "header");
    uint32_t nsec;
    const kiln_blob_section *sec = kiln_blob_sections(blob, &nsec);
    BW_VIEW(w, sec, nsec, "section table");
    for (uint32_t i = 0; i < nsec && !w->failed; i++) {
        char name[5];
        kiln_blob_kind_name(sec[i].kind, name);
        const kiln_blob_section *f = kiln_blob_find_section(blob, sec[i].kind);
        if (!f) bw_fail(w, "section %u (%s) not found by kind", i, name);
        else bw_read(w, f, sizeof *f, "kiln_blob_find_section");
    }

    uint32_t nmod, nskel, nbone, nrest, nibnd, nmesh, nhair, nstrm, nmat, nslot, ninst, nref, nname;
    const kiln_blob_metadata *meta = kiln_blob_metadata_of(blob);
    const kiln_blob_model *mod = kiln_blob_models(blob, &nmod);
    const kiln_blob_skeleton *skel = kiln_blob_skeletons(blob, &nskel);
    const kiln_blob_bone *bone = kiln_blob_bones(blob, &nbone);
    const kiln_soa_xform *rest = kiln_blob_rest_pose(blob, &nrest);
    const float *ibnd = kiln_blob_inverse_binds(blob, &nibnd);
    const kiln_blob_mesh *mesh = kiln_blob_meshes(blob, &nmesh);
    const kiln_blob_hair *hair = kiln_blob_hairs(blob, &nhair);
    const kiln_blob_stream *strm = kiln_blob_streams(blob, &nstrm);
    const kiln_blob_material *mat = kiln_blob_materials(blob, &nmat);
    const kiln_blob_material_slot *slot = kiln_blob_material_slots(blob, &nslot);
    const kiln_blob_instance *inst = kiln_blob_instances(blob, &ninst);
    const kiln_blob_reference *ref = kiln_blob_references(blob, &nref);
    const kiln_blob_name_entry *name = kiln_blob_name_index(blob, &nname);
    if (meta) bw_read(w, meta, sizeof *meta, "metadata");
    BW_VIEW(w, mod, nmod, "models");
    BW_VIEW(w, skel, nskel, "skeletons");
    BW_VIEW(w, bone, nbone, "bones");
    BW_VIEW(w, rest, nrest, "rest pose");
    bw_read(w, ibnd, (uint64_t)nibnd * 16 * sizeof(float), "inverse binds");
    BW_VIEW(w, mesh, nmesh, "meshes");
    BW_VIEW(w, hair, nhair, "hairs");
    BW_VIEW(w, strm, nstrm, "streams");
    BW_VIEW(w, mat, nmat, "materials");
    BW_VIEW(w, slot, nslot, "material slots");
    BW_VIEW(w, inst, ninst, "instances");
    BW_VIEW(w, ref, nref, "references");
    BW_VIEW(w, name, nname, "name index");
    if (w->failed) return 0;

    /* strings */
    if (meta) {
        bw_str(w, blob, meta->author, "metadata.author");
        bw_str(w, blob, meta->software, "metadata.software");
        bw_str(w, blob, meta->scene_root, "metadata.scene_root");
    }
    for (uint32_t i = 0; i < nmod; i++) bw_str(w, blob, mod[i].name, "model.name");
    for (uint32_t i = 0; i < nbone; i++) bw_str(w, blob, bone[i].name, "bone.name");
    for (uint32_t i = 0; i < nmesh; i++) bw_str(w, blob, mesh[i].name, "mesh.name");
    for (uint32_t i = 0; i < nhair; i++) bw_str(w, blob, hair[i].name, "hair.name");
    for (uint32_t i = 0; i < nmat; i++) {
        bw_str(w, blob, mat[i].name, "material.name");
        bw_str(w, blob, mat[i].type, "material.type");
    }
    for (uint32_t i = 0; i < nslot; i++) {
        bw_str(w, blob, slot[i].name, "slot.name");
        bw_str(w, blob, slot[i].path, "slot.path");
    }
    for (uint32_t i = 0; i < ninst; i++) bw_str(w, blob, inst[i].name, "instance.name");
    for (uint32_t i = 0; i < nref; i++) {
        bw_str(w, blob, ref[i].path, "reference.path");
        bw_str(w, blob, ref[i].resolved_path, "reference.resolved_path");
        /* 1.3: the models a reference resolves to lie inside MODELS */
        kiln_reference_info info;
        if (kiln_reference_get(blob, i, &info) != KILN_OK) bw_fail(w, "reference %u: kiln_reference_get failed", i);
        else if (info.model_count ? info.first_model >= nmod || info.model_count > nmod - info.first_model
                                  : info.first_model != KILN_BLOB_NONE)
            bw_fail(w, "reference %u: models [%u, +%u) outside %u", i, info.first_model, info.model_count, nmod);
    }
    for (uint32_t i = 0; i < nname; i++) bw_str(w, blob, name[i].name, "name_entry.name");

    /* every stream payload, whole */
    for (uint32_t i = 0; i < nstrm && !w->failed; i++) {
        if (strm[i].count && !strm[i].stride) return bw_fail(w, "stream %u: zero stride", i); /* bounds the loops below */
        const void *d = kiln_blob_stream_data(blob, &strm[i]);
        if (!d) bw_fail(w, "stream %u: kiln_blob_stream_data returned NULL", i);
        else bw_read(w, d, (uint64_t)strm[i].count * strm[i].stride, "stream data");
    }
    if (w->failed) return 0;

    /* models: their ranges */
    for (uint32_t i = 0; i < nmod; i++) {
        const kiln_blob_model *m = &mod[i];
        if (m->skeleton != KILN_BLOB_NONE && m->skeleton >= nskel) return bw_fail(w, "model %u: skeleton %u", i, m->skeleton);
        if (!BW_RANGE_OK(m->first_mesh, m->mesh_count, nmesh) || !BW_RANGE_OK(m->first_hair, m->hair_count, nhair) ||
            !BW_RANGE_OK(m->first_material, m->material_count, nmat))
            return bw_fail(w, "model %u: a range is outside its table", i);
        BW_SUB(w, mesh, m->first_mesh, m->mesh_count, "model meshes");
        BW_SUB(w, hair, m->first_hair, m->hair_count, "model hairs");
        BW_SUB(w, mat, m->first_material, m->material_count, "model materials");
    }

    /* skeletons: bones in parent-first order, rest blocks, inverse binds, bone lookups */
    for (uint32_t i = 0; i < nskel; i++) {
        const kiln_blob_skeleton *s = &skel[i];
        if (s->model >= nmod) return bw_fail(w, "skeleton %u: model %u", i, s->model);
        if (!BW_RANGE_OK(s->first_bone, s->bone_count, nbone) || !BW_RANGE_OK(s->first_bone, s->bone_count, nibnd) ||
            !BW_RANGE_OK(s->first_soa, s->soa_count, nrest) || (uint64_t)s->soa_count * KILN_SOA_WIDTH < s->bone_count)
            return bw_fail(w, "skeleton %u: a range is outside its table", i);
        BW_SUB(w, rest, s->first_soa, s->soa_count, "skeleton rest pose");
        for (uint32_t b = 0; b < s->bone_count; b++) {
            const kiln_blob_bone *bb = &bone[s->first_bone + b];
            if (bb->parent < -1 || bb->parent >= (int64_t)b) return bw_fail(w, "skeleton %u bone %u: parent %d", i, b, bb->parent);
            if (bb->parent >= 0) bw_read(w, &bone[s->first_bone + (uint32_t)bb->parent], sizeof *bb, "parent bone");
            bw_read(w, ibnd + 16 * ((uint64_t)s->first_bone + b), 16 * sizeof(float), "inverse bind");
            const char *bn = bw_str(w, blob, bb->name, "bone.name");
            /* Not every bone need be named in the index; a hit must lie in the skeleton. */
            uint32_t found = kiln_blob_find_bone(blob, i, bn);
            if (found != KILN_BLOB_NONE && found >= s->bone_count) return bw_fail(w, "find_bone: %u", found);
        }
    }

    /* meshes: what a renderer and a skinner read */
    for (uint32_t i = 0; i < nmesh && !w->failed; i++) {
        const kiln_blob_mesh *m = &mesh[i];
        if (m->model >= nmod || (m->material != KILN_BLOB_NONE && m->material >= nmat) ||
            (m->skeleton != KILN_BLOB_NONE && m->skeleton >= nskel) || !BW_RANGE_OK(m->first_stream, m->stream_count, nstrm))
            return bw_fail(w, "mesh %u: an index or range is outside its table", i);
        if (m->material != KILN_BLOB_NONE) bw_read(w, &mat[m->material], sizeof *mat, "mesh material");
        const kiln_blob_stream *attr[8];
        int nattr = 0;
        for (uint32_t sem = KILN_ATTR_POSITION; sem <= KILN_ATTR_WEIGHTS; sem++)
            for (uint32_t set = 0; set < 4; set++) {
                const kiln_blob_stream *s = kiln_blob_mesh_stream(blob, m, sem, set);
                if (!s) continue;
                bw_read(w, s, sizeof *s, "mesh stream");
                if (s->count != m->vertex_count) return bw_fail(w, "mesh %u: attribute %u has %u of %u", i, sem, s->count, m->vertex_count);
                if (nattr < 8) attr[nattr++] = s;
            }
        const kiln_blob_stream *ix = kiln_blob_mesh_stream(blob, m, KILN_ATTR_INDICES, 0);
        if (ix) {
            if (ix->count != m->index_count) return bw_fail(w, "mesh %u: %u indices of %u", i, ix->count, m->index_count);
            uint32_t bytes = ix->format == KILN_FORMAT_U16x1 ? 2 : 4;
            for (uint32_t k = 0; k < ix->count && !w->failed; k++) {
                const unsigned char *e = bw_elem(w, blob, ix, k, "index");
                if (!e) break;
                uint32_t v = bw_u32(e, bytes);
                if (v >= m->vertex_count) return bw_fail(w, "mesh %u: index %u >= %u vertices", i, v, m->vertex_count);
                for (int a = 0; a < nattr; a++) bw_elem(w, blob, attr[a], v, "indexed vertex");
            }
        }
        const kiln_blob_stream *jt = kiln_blob_mesh_stream(blob, m, KILN_ATTR_JOINTS, 0);
        if (jt) {
            if (m->skeleton == KILN_BLOB_NONE) return bw_fail(w, "mesh %u: joints without a skeleton", i);
            const kiln_blob_skeleton *s = &skel[m->skeleton];
            if ((uint64_t)jt->components * 2 > jt->stride) return bw_fail(w, "mesh %u: joint stride", i);
            for (uint32_t k = 0; k < jt->count && !w->failed; k++) {
                const unsigned char *e = bw_elem(w, blob, jt, k, "joints");
                for (uint32_t c = 0; e && c < jt->components; c++) {
                    uint32_t j = bw_u32(e + 2 * c, 2);
                    if (j >= s->bone_count) return bw_fail(w, "mesh %u: joint %u >= %u bones", i, j, s->bone_count);
                    bw_read(w, &bone[s->first_bone + j], sizeof *bone, "joint bone");
                    bw_read(w, ibnd + 16 * ((uint64_t)s->first_bone + j), 16 * sizeof(float), "joint inverse bind");
                }
            }
        }
    }

    /* hair: strands index particles */
    for (uint32_t i = 0; i < nhair && !w->failed; i++) {
        const kiln_blob_hair *hr = &hair[i];
        if (hr->strands_stream >= nstrm || hr->particles_stream >= nstrm) return bw_fail(w, "hair %u: stream index", i);
        const kiln_blob_stream *st = &strm[hr->strands_stream], *pt = &strm[hr->particles_stream];
        if (st->count != (uint64_t)hr->strand_count + 1 || pt->count != hr->particle_count)
            return bw_fail(w, "hair %u: stream sizes", i);
        for (uint32_t k = 0; k < hr->strand_count && !w->failed; k++) {
            const unsigned char *a = bw_elem(w, blob, st, k, "strand"), *b = bw_elem(w, blob, st, k + 1, "strand end");
            if (!a || !b) break;
            uint32_t from = bw_u32(a, 4), to = bw_u32(b, 4);
            if (from > to || to > hr->particle_count) return bw_fail(w, "hair %u strand %u: [%u, %u)", i, k, from, to);
            for (uint32_t p = from; p < to; p++) bw_elem(w, blob, pt, p, "particle");
        }
    }

    /* materials, instances, references */
    for (uint32_t i = 0; i < nmat; i++) {
        if (!BW_RANGE_OK(mat[i].first_slot, mat[i].slot_count, nslot)) return bw_fail(w, "material %u: slots", i);
        BW_SUB(w, slot, mat[i].first_slot, mat[i].slot_count, "material slots");
    }
    for (uint32_t i = 0; i < ninst; i++) {
        if (inst[i].reference >= nref) return bw_fail(w, "instance %u: reference %u", i, inst[i].reference);
        bw_read(w, &ref[inst[i].reference], sizeof *ref, "instance reference");
    }
    for (uint32_t i = 0; i < nref; i++) {
        if (!BW_RANGE_OK(ref[i].first_instance, ref[i].instance_count, ninst)) return bw_fail(w, "reference %u: instances", i);
        BW_SUB(w, inst, ref[i].first_instance, ref[i].instance_count, "reference instances");
    }

    /* every name resolves */
    for (uint32_t i = 0; i < nname && !w->failed; i++) {
        const char *n = bw_str(w, blob, name[i].name, "name");
        uint32_t found = kiln_blob_find(blob, name[i].kind, n);
        if (found == KILN_BLOB_NONE) return bw_fail(w, "name entry %u (\"%s\") does not resolve", i, n);
        const kiln_blob_section *s = kiln_blob_find_section(blob, name[i].kind);
        if (s && s->stride && found >= s->count) return bw_fail(w, "name entry %u resolves to %u of %u", i, found, s->count);
    }
    kiln_blob_find(blob, KILN_SECTION_MODELS, "no such name");
    kiln_blob_find_bone(blob, 0, "no such bone");
    return !w->failed;
}

#endif /* KILN_TEST_BLOB_WALK_H */
