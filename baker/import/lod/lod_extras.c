/* Chunks the runtime does not use (B.1, B.8-B.13): parsed, checked, and listed as extras for
 * `kiln inspect`. A malformed one is skipped with W13; only the container walk can reject. */
#include <string.h>

#include "lod_internal.h"

static kiln_result kiln__lod_soft_fail(kiln__lod *c, const kiln__lod_chunk *ch, const kiln__lod_rd *rd)
{
    kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W13", ch->path, rd->pos,
                   "malformed %s chunk (%s does not fit or is negative): skipped", ch->id,
                   rd->failed_field ? rd->failed_field : "a field");
    return KILN_OK;
}

static void kiln__lod_soft_rd(kiln__lod_rd *rd, const kiln__lod *c, const kiln__lod_chunk *ch)
{
    kiln__lod_rd_init(rd, c, ch->data, ch->end, ch->path);
    rd->soft = 1;
}

static void kiln__lod_leftover(kiln__lod *c, const kiln__lod_chunk *ch, const kiln__lod_rd *rd)
{
    if (kiln__lod_left(rd))
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W3", ch->path, rd->pos, "%llu unread byte(s) at the end of %s",
                       (unsigned long long)kiln__lod_left(rd), ch->id);
}

kiln_result kiln__lod_read_inf1(kiln__lod *c, const kiln__lod_chunk *ch)
{
    if (ch->count != 1) {
        kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W13", ch->path, ch->off + 8, "INF1 Count is %d, not 1: skipped",
                       ch->count);
        return KILN_OK;
    }
    const char *text = kiln__lod_decode(c, ch->data, (uint64_t)ch->size, ch->path, "INF1 text");
    if (!text) return kiln__lod_oom(c, ch->path, ch->data);
    return kiln__lod_extra(c, "info", "INF1", ch->path, ch->off, (uint64_t)ch->size + 12, text);
}

kiln_result kiln__lod_read_phs1(kiln__lod *c, const kiln__lod_chunk *ch)
{
    if (ch->count != 2) {
        kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W13", ch->path, ch->off + 8,
                       "PHS1 Count (block version) is %d, not 2: skipped", ch->count);
        return KILN_OK;
    }
    kiln__lod_rd rd;
    kiln__lod_soft_rd(&rd, c, ch);
    uint8_t type;
    uint32_t n[6];
    static const char *const names[6] = {"BodyNameLength", "GeomsNameLength", "MeshLinksCount",
                                         "BodyCount",      "GeomsCount",      "JointsCount"};
    static const uint64_t sizes[6] = {1, 1, 4, 78, 70, 101};
    uint64_t at[6];
    if (kiln__lod_u8(c, &rd, "PhysType", &type) != KILN_OK) return kiln__lod_soft_fail(c, ch, &rd);
    for (int i = 0; i < 6; i++)
        if (kiln__lod_count(c, &rd, names[i], &n[i]) != KILN_OK) return kiln__lod_soft_fail(c, ch, &rd);
    for (int i = 0; i < 6; i++)
        if (kiln__lod_span(c, &rd, names[i], n[i], sizes[i], &at[i]) != KILN_OK) return kiln__lod_soft_fail(c, ch, &rd);
    kiln__lod_leftover(c, ch, &rd);
    const char *bodies = kiln__lod_decode(c, at[0], n[0], ch->path, "PHS1 body names");
    const char *geoms = kiln__lod_decode(c, at[1], n[1], ch->path, "PHS1 geom names");
    const char *detail = bodies && geoms
                             ? kiln_source_strfmt(c->scene, "bodies %u, geoms %u, joints %u, mesh links %u", n[3], n[4],
                                                  n[5], n[2])
                             : NULL;
    if (!detail) return kiln__lod_oom(c, ch->path, ch->data);
    return kiln__lod_extra(c, "physics", "PHS1", ch->path, ch->off, (uint64_t)ch->size + 12, detail);
}

kiln_result kiln__lod_read_lig1(kiln__lod *c, const kiln__lod_chunk *ch, const char **name)
{
    *name = NULL;
    if (ch->count != 8) {
        kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W13", ch->path, ch->off + 8,
                       "LIG1 Count is %d, not 8: the light schemes (LGS1) are skipped", ch->count);
        return KILN_OK;
    }
    kiln__lod_rd rd;
    kiln__lod_soft_rd(&rd, c, ch);
    uint64_t at;
    const char *s;
    if (kiln__lod_lstr(c, &rd, "scheme name", &s) != KILN_OK || kiln__lod_span(c, &rd, "lights", 8, 94, &at) != KILN_OK)
        return kiln__lod_soft_fail(c, ch, &rd);
    kiln__lod_leftover(c, ch, &rd);
    *name = s;
    return KILN_OK;
}

/* `count` names stored as a length array then the concatenated bytes (PXI1, COL1). */
static int kiln__lod_name_list(kiln__lod *c, kiln__lod_rd *rd, uint32_t count)
{
    uint64_t lens, total = 0, at;
    if (kiln__lod_span(c, rd, "name lengths", count, 4, &lens) != KILN_OK) return 0;
    for (uint32_t i = 0; i < count; i++) {
        int32_t l = (int32_t)kiln__lod_ld_u32(c, lens + 4 * (uint64_t)i);
        if (l < 0) {
            rd->failed_field = "name length";
            return 0;
        }
        total += (uint64_t)l;
    }
    return kiln__lod_span(c, rd, "names", total, 1, &at) == KILN_OK;
}

kiln_result kiln__lod_read_pxi1(kiln__lod *c, const kiln__lod_chunk *ch)
{
    kiln__lod_rd rd;
    kiln__lod_soft_rd(&rd, c, ch);
    uint32_t items;
    if (kiln__lod_count(c, &rd, "ProxyItemsCount", &items) != KILN_OK || !kiln__lod_name_list(c, &rd, items))
        return kiln__lod_soft_fail(c, ch, &rd);
    uint64_t left = kiln__lod_left(&rd), rec = items ? left / items : 0;
    if (items ? (left % items != 0 || (rec != 54 && rec != 56)) : left != 0) {
        kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W13", ch->path, rd.pos,
                       "PXI1: %llu bytes for %u proxy items is not 54 or 56 bytes per item: skipped",
                       (unsigned long long)left, items);
        return KILN_OK;
    }
    const char *detail = kiln_source_strfmt(c->scene, "replaces mesh %d, %u items, %llu-byte records", ch->count, items,
                                            (unsigned long long)rec);
    if (!detail) return kiln__lod_oom(c, ch->path, ch->off);
    return kiln__lod_extra(c, "proxy", "PXI1", ch->path, ch->off, (uint64_t)ch->size + 12, detail);
}

kiln_result kiln__lod_read_col1(kiln__lod *c, const kiln__lod_chunk *ch)
{
    kiln__lod_rd rd;
    kiln__lod_soft_rd(&rd, c, ch);
    const char *name;
    uint64_t at;
    uint32_t n = (uint32_t)ch->count;
    if (kiln__lod_lstr(c, &rd, "ColListName", &name) != KILN_OK || !kiln__lod_name_list(c, &rd, n) ||
        kiln__lod_span(c, &rd, "colliders", n, 124, &at) != KILN_OK)
        return kiln__lod_soft_fail(c, ch, &rd);
    kiln__lod_leftover(c, ch, &rd);
    const char *detail = kiln_source_strfmt(c->scene, "colliders %u", n);
    if (!detail) return kiln__lod_oom(c, ch->path, ch->off);
    return kiln__lod_extra(c, "collider_set", name, ch->path, ch->off, (uint64_t)ch->size + 12, detail);
}

kiln_result kiln__lod_read_img1(kiln__lod *c, const kiln__lod_chunk *ch)
{
    kiln__lod_rd rd;
    kiln__lod_soft_rd(&rd, c, ch);
    int32_t type;
    const char *name;
    uint32_t len;
    uint64_t at;
    if (kiln__lod_i32(c, &rd, "ScreenshotType", &type) != KILN_OK || kiln__lod_lstr(c, &rd, "name", &name) != KILN_OK ||
        kiln__lod_count(c, &rd, "ScreenshotDataLen", &len) != KILN_OK ||
        kiln__lod_span(c, &rd, "screenshot data", len, 1, &at) != KILN_OK)
        return kiln__lod_soft_fail(c, ch, &rd);
    kiln__lod_leftover(c, ch, &rd);
    const char *detail = kiln_source_strfmt(c->scene, "%u bytes", len);
    if (!detail) return kiln__lod_oom(c, ch->path, ch->off);
    return kiln__lod_extra(c, "screenshot", name, ch->path, ch->off, (uint64_t)ch->size + 12, detail);
}

kiln_result kiln__lod_read_morph(kiln__lod *c, const kiln__lod_chunk *ch)
{
    /* MAN1 / MMD1: the seed's layout contradicts itself (B.8); kept opaque. */
    const char *detail = kiln_source_strfmt(c->scene, "Count %d, Size %d (not read)", ch->count, ch->size);
    if (!detail) return kiln__lod_oom(c, ch->path, ch->off);
    return kiln__lod_extra(c, "morph", ch->id[0] == 'M' && ch->id[1] == 'A' ? "MAN1" : "MMD1", ch->path, ch->off,
                           (uint64_t)ch->size + 12, detail);
}
