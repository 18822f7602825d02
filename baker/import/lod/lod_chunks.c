/* The chunk tree (spec A): signature, LOD1, containers and their tiling, singletons, order,
 * what follows the first model; plus the importer's entry points. */
#include <string.h>

#include "lod_internal.h"
#include "lod_import.h"

#define KILN__LOD_SIGNATURE "LODka3D1"

/* LOD1 children read at most once (A.3 "Singletons"), one bit each. */
static const char *const kiln__lod_singletons[] = {
    "INF1", "MAL1", "TXTL", "SHDL", "SKL1", "MSL1", "ANS1", "MAN1", "MMD1", "PHS1", "LGS1", "PXL1", "CLL1", "IMG1",
};

static int kiln__lod_singleton_bit(const char *id)
{
    for (int i = 0; i < (int)(sizeof kiln__lod_singletons / sizeof kiln__lod_singletons[0]); i++)
        if (memcmp(id, kiln__lod_singletons[i], 4) == 0) return i;
    return -1;
}

static void kiln__lod_header(const kiln__lod *c, uint64_t off, kiln__lod_chunk *ch)
{
    memset(ch, 0, sizeof *ch);
    memcpy(ch->id, c->data + off, 4);
    for (int i = 0; i < 4; i++)
        if ((unsigned char)ch->id[i] < 0x20 || (unsigned char)ch->id[i] > 0x7E) ch->id[i] = '?';
    ch->size = (int32_t)kiln__lod_ld_u32(c, off + 4);
    ch->count = (int32_t)kiln__lod_ld_u32(c, off + 8);
    ch->off = off;
    ch->data = off + 12;
    ch->end = ch->data + (ch->size > 0 ? (uint64_t)ch->size : 0);
}

static int kiln__lod_is(const kiln__lod_chunk *ch, const char *id)
{
    return memcmp(ch->id, id, 4) == 0;
}

/* Visits the children of a container in order, checking the tiling rules (R4, R5, R6) before
 * and after each; `fn` handles one child. */
typedef kiln_result (*kiln__lod_child_fn)(kiln__lod *c, const kiln__lod_chunk *parent, const kiln__lod_chunk *child,
                                          void *user);

static kiln_result kiln__lod_walk(kiln__lod *c, const kiln__lod_chunk *parent, kiln__lod_child_fn fn, void *user)
{
    uint64_t pos = parent->data;
    uint32_t n = 0;
    while (pos < parent->end) {
        if (parent->end - pos < 12)
            return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_COUNT, "R6", parent->path, pos,
                                  "%llu byte(s) left at the end of %s, too few for a chunk header (children must "
                                  "exactly fill their container)",
                                  (unsigned long long)(parent->end - pos), parent->id);
        kiln__lod_chunk ch;
        kiln__lod_header(c, pos, &ch);
        ch.path = kiln__lod_path(c, parent->path, ch.id, n);
        if (!ch.path) return kiln__lod_oom(c, parent->path, pos);
        if (ch.size < 0 || ch.count < 0)
            return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_COUNT, "R4", ch.path, pos + (ch.size < 0 ? 4 : 8),
                                  "chunk %s has a negative %s (%d)", ch.id, ch.size < 0 ? "Size" : "Count",
                                  ch.size < 0 ? ch.size : ch.count);
        if (ch.end > parent->end)
            return kiln__lod_fail(c, KILN_ERR_IMPORT_TRUNCATED, "R5", ch.path, pos + 4,
                                  "chunk %s (Size %d) ends at byte %llu, past the end of its container %s (byte %llu)",
                                  ch.id, ch.size, (unsigned long long)ch.end, parent->id,
                                  (unsigned long long)parent->end);
        kiln_result r = fn(c, parent, &ch, user);
        if (r != KILN_OK) return r;
        n++;
        pos = ch.end;
    }
    if (n != (uint32_t)parent->count)
        return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_COUNT, "R6", parent->path, parent->off + 8,
                              "container %s declares %d children (Count) but holds %u", parent->id, parent->count, n);
    return KILN_OK;
}

static void kiln__lod_unknown(kiln__lod *c, const kiln__lod_chunk *parent, const kiln__lod_chunk *ch)
{
    kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W1", ch->path, ch->off,
                   "unknown chunk '%s' in %s (%d bytes): skipped", ch->id, parent ? parent->id : "the file", ch->size);
}

/* ---- libraries: the first MAT1 / TXTR / SHDR of its list is used (W14 for more) ---------- */

typedef struct kiln__lod_list {
    const char *child_id;
    kiln_result (*read)(kiln__lod *c, const kiln__lod_chunk *ch);
    int seen;
} kiln__lod_list;

static kiln_result kiln__lod_list_child(kiln__lod *c, const kiln__lod_chunk *parent, const kiln__lod_chunk *ch,
                                        void *user)
{
    kiln__lod_list *list = user;
    if (!kiln__lod_is(ch, list->child_id)) {
        kiln__lod_unknown(c, parent, ch);
        return KILN_OK;
    }
    if (list->seen++) {
        kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W14", ch->path, ch->off,
                       "a further %s in %s: only the first is used, this one is ignored", ch->id, parent->id);
        return KILN_OK;
    }
    return list->read(c, ch);
}

/* ---- lists of leaves: MSL1, ANS1, PXL1, CLL1 ------------------------------------------------ */

static kiln_result kiln__lod_leaf_child(kiln__lod *c, const kiln__lod_chunk *parent, const kiln__lod_chunk *ch,
                                        void *user)
{
    kiln__lod_list *list = user;
    if (!kiln__lod_is(ch, list->child_id)) {
        kiln__lod_unknown(c, parent, ch);
        return KILN_OK;
    }
    return list->read(c, ch);
}

/* ---- LGS1: light schemes, all or none (W13 when a LIG1 is malformed) ----------------------- */

typedef struct kiln__lod_light {
    const char *name, *path;
    uint64_t    off, size;
} kiln__lod_light;

typedef struct kiln__lod_lights {
    kiln__lod_light *items;
    uint32_t count, cap;
    int bad;
} kiln__lod_lights;

static kiln_result kiln__lod_light_child(kiln__lod *c, const kiln__lod_chunk *parent, const kiln__lod_chunk *ch,
                                         void *user)
{
    kiln__lod_lights *l = user;
    if (!kiln__lod_is(ch, "LIG1")) {
        kiln__lod_unknown(c, parent, ch);
        return KILN_OK;
    }
    if (l->bad) return KILN_OK;
    const char *name = NULL;
    kiln_result r = kiln__lod_read_lig1(c, ch, &name);
    if (r != KILN_OK) return r;
    if (!name) {
        l->bad = 1;
        return KILN_OK;
    }
    kiln__lod_light *item;
    KILN__LOD_PUSH(c, l->items, l->count, l->cap, item);
    if (!item) return kiln__lod_oom(c, ch->path, ch->off);
    item->name = name;
    item->path = ch->path;
    item->off = ch->off;
    item->size = (uint64_t)ch->size + 12;
    return KILN_OK;
}

static kiln_result kiln__lod_read_lgs1(kiln__lod *c, const kiln__lod_chunk *ch)
{
    kiln__lod_lights l;
    memset(&l, 0, sizeof l);
    kiln_result r = kiln__lod_walk(c, ch, kiln__lod_light_child, &l);
    if (r != KILN_OK || l.bad) return r;
    for (uint32_t i = 0; i < l.count; i++) {
        r = kiln__lod_extra(c, "light_scheme", l.items[i].name, l.items[i].path, l.items[i].off, l.items[i].size,
                            "8 lights");
        if (r != KILN_OK) return r;
    }
    return KILN_OK;
}

/* ---- LOD1 ------------------------------------------------------------------------------------ */

static kiln_result kiln__lod_model_child(kiln__lod *c, const kiln__lod_chunk *parent, const kiln__lod_chunk *ch,
                                         void *user)
{
    (void)user;
    int bit = kiln__lod_singleton_bit(ch->id);
    if (bit < 0) {
        kiln__lod_unknown(c, parent, ch);
        return KILN_OK;
    }
    if (c->singletons & (1u << bit)) {
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W2", ch->path, ch->off,
                       "a second %s chunk in LOD1: the first one wins, this one is ignored", ch->id);
        return KILN_OK;
    }
    c->singletons |= 1u << bit;

    kiln__lod_list list;
    memset(&list, 0, sizeof list);
    if (kiln__lod_is(ch, "INF1")) return kiln__lod_read_inf1(c, ch);
    if (kiln__lod_is(ch, "MAL1")) {
        list.child_id = "MAT1";
        list.read = kiln__lod_read_mat1;
        return kiln__lod_walk(c, ch, kiln__lod_list_child, &list);
    }
    if (kiln__lod_is(ch, "TXTL")) {
        list.child_id = "TXTR";
        list.read = kiln__lod_read_txtr;
        return kiln__lod_walk(c, ch, kiln__lod_list_child, &list);
    }
    if (kiln__lod_is(ch, "SHDL")) {
        list.child_id = "SHDR";
        list.read = kiln__lod_read_shdr;
        return kiln__lod_walk(c, ch, kiln__lod_list_child, &list);
    }
    if (kiln__lod_is(ch, "SKL1")) {
        if (c->msl_seen) {
            kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W4", ch->path, ch->off,
                           "SKL1 follows MSL1 (mesh skins depend on the bone count): the skeleton is ignored");
            return KILN_OK;
        }
        return kiln__lod_read_skl1(c, ch);
    }
    if (kiln__lod_is(ch, "MSL1")) {
        c->msl_seen = 1;
        list.child_id = "MSH1";
        list.read = kiln__lod_read_msh1;
        return kiln__lod_walk(c, ch, kiln__lod_leaf_child, &list);
    }
    if (kiln__lod_is(ch, "ANS1") || kiln__lod_is(ch, "CLL1")) {
        if (!c->has_skeleton) {
            kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W4", ch->path, ch->off,
                           "%s without a preceding SKL1: ignored", ch->id);
            return KILN_OK;
        }
        int anim = kiln__lod_is(ch, "ANS1");
        list.child_id = anim ? "ANM1" : "COL1";
        list.read = anim ? kiln__lod_read_anm1 : kiln__lod_read_col1;
        return kiln__lod_walk(c, ch, kiln__lod_leaf_child, &list);
    }
    if (kiln__lod_is(ch, "PXL1")) {
        list.child_id = "PXI1";
        list.read = kiln__lod_read_pxi1;
        return kiln__lod_walk(c, ch, kiln__lod_leaf_child, &list);
    }
    if (kiln__lod_is(ch, "LGS1")) return kiln__lod_read_lgs1(c, ch);
    if (kiln__lod_is(ch, "PHS1")) return kiln__lod_read_phs1(c, ch);
    if (kiln__lod_is(ch, "IMG1")) return kiln__lod_read_img1(c, ch);
    return kiln__lod_read_morph(c, ch); /* MAN1, MMD1 */
}

/* After the first LOD1 (A.1): further complete chunks are ignored (W2 for a model, W1 for
 * anything else); bytes that do not form a complete chunk give W3. */
static void kiln__lod_after_model(kiln__lod *c, uint64_t pos)
{
    while (c->size - pos >= 12) {
        kiln__lod_chunk ch;
        kiln__lod_header(c, pos, &ch);
        if (ch.size < 0 || ch.count < 0 || ch.end > c->size) break;
        ch.path = ch.id;
        if (kiln__lod_is(&ch, "LOD1"))
            kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W2", "LOD1", pos,
                           "a further LOD1 model after the first: only the first model is imported");
        else
            kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W1", ch.id, pos,
                           "unknown chunk '%s' after the model (%d bytes): skipped", ch.id, ch.size);
        pos = ch.end;
    }
    if (pos < c->size)
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W3", "(end of file)", pos,
                       "%llu byte(s) after the last complete chunk of the file: ignored",
                       (unsigned long long)(c->size - pos));
}

int kiln__detect_lod(const void *data, size_t size)
{
    return data && size >= 8 && memcmp(data, KILN__LOD_SIGNATURE, 8) == 0;
}

kiln_result kiln__import_lod(const void *data, size_t size, const char *path, const kiln_import_options *opt,
                             kiln_source_scene *scene, kiln_diag *err)
{
    if (err) memset(err, 0, sizeof *err);
    kiln__lod ctx, *c = &ctx;
    memset(c, 0, sizeof *c);
    c->data = data;
    c->size = size;
    c->input_path = path;
    c->scene = scene;
    c->err = err;
    if (opt) c->sink = opt->diag;
    if (!scene || (!data && size))
        return kiln__lod_fail(c, KILN_ERR_INVALID_ARGUMENT, "", "", KILN_NO_OFFSET, "no scene or no data");
    scene->format = "lod";

    if (size < 8 || memcmp(data, KILN__LOD_SIGNATURE, 8) != 0)
        return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_HEADER, "R1", "signature", 0,
                              size < 8 ? "the file has %llu byte(s), fewer than the 8-byte signature 'LODka3D1'"
                                       : "the signature is not 'LODka3D1' (%llu bytes)",
                              (unsigned long long)size);
    if (size - 8 < 12)
        return kiln__lod_fail(c, KILN_ERR_IMPORT_TRUNCATED, "R2", "LOD1", 8,
                              "only %llu byte(s) after the signature, fewer than a 12-byte LOD1 header",
                              (unsigned long long)(size - 8));
    kiln__lod_chunk lod1;
    kiln__lod_header(c, 8, &lod1);
    lod1.path = "LOD1";
    if (!kiln__lod_is(&lod1, "LOD1"))
        return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_HEADER, "R3", lod1.id, 8, "the first chunk is '%s', not LOD1", lod1.id);
    if (lod1.size < 0 || lod1.count < 0)
        return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_COUNT, "R4", "LOD1", lod1.size < 0 ? 12 : 16,
                              "LOD1 has a negative %s (%d)", lod1.size < 0 ? "Size" : "Count",
                              lod1.size < 0 ? lod1.size : lod1.count);
    if (lod1.end > size)
        return kiln__lod_fail(c, KILN_ERR_IMPORT_TRUNCATED, "R5", "LOD1", 12,
                              "LOD1 (Size %d) ends at byte %llu, past the end of the file (%llu bytes)", lod1.size,
                              (unsigned long long)lod1.end, (unsigned long long)size);
    kiln_result r = kiln__lod_walk(c, &lod1, kiln__lod_model_child, NULL);
    if (r != KILN_OK) return r;
    kiln__lod_after_model(c, lod1.end);
    return kiln__lod_finish(c, &lod1);
}

const kiln_importer kiln__importer_lod = {
    "lod",
    "LODka3D *.lod models (meshes, skeleton, skinning, materials, Euler animation)",
    kiln__detect_lod,
    kiln__import_lod,
};
