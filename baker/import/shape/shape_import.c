/* The *.Shape importer (shared/spec/shape-format.md): the 17-byte header, the RAW or ZLIB
 * stream (sections 1, 1.1) and the top-level order of the stream (4.1), filling one model with
 * its skeleton, meshes and materials, the clips, the instances and the extras. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "shape.h"
#include "shape_internal.h"

#define TRY(x) do { kiln_result r_ = (x); if (r_ != KILN_OK) return r_; } while (0)

static const uint8_t kiln__shape_magic[6] = {5, 'S', 'H', 'A', 'P', 'E'};

int kiln__detect_shape(const void *data, size_t size)
{
    return data && size >= sizeof kiln__shape_magic && memcmp(data, kiln__shape_magic, sizeof kiln__shape_magic) == 0;
}

/* Inflates exactly `decoded` bytes (V6 otherwise); the output stops one byte past them. */
static kiln_result kiln__inflate(kiln__shape *ctx, const uint8_t *in, uint32_t in_size, uint32_t decoded, uint8_t **out)
{
    uint8_t *buf = malloc((size_t)decoded + 1u);
    if (!buf) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, KILN_NO_OFFSET, "Stream",
                                      "%u bytes for the decoded stream", decoded);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK) {
        free(buf);
        return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, KILN_NO_OFFSET, "Stream", "zlib could not start");
    }
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = in_size;
    z.next_out = buf;
    z.avail_out = decoded + 1u;
    int zr = inflate(&z, Z_FINISH);
    uint64_t produced = z.total_out;
    uint64_t consumed = z.total_in;
    inflateEnd(&z);
    const char *why = NULL;
    if (zr != Z_STREAM_END)
        why = zr == Z_DATA_ERROR ? "the data is not a valid zlib stream" :
              (produced > decoded ? "it inflates to more than DecodedSize" : "the zlib stream is incomplete");
    else if (produced != decoded)
        why = "it inflates to a size other than DecodedSize";
    else if (consumed != in_size)
        why = "the zlib stream ends before StoredSize";
    if (why) {
        free(buf);
        return kiln__shape_fail(ctx, KILN_ERR_IMPORT_DECOMPRESS, "V6", 17, "Stream",
                                "encoding 1 (zlib): %s (DecodedSize %u, %llu bytes inflated)", why, decoded,
                                (unsigned long long)produced);
    }
    *out = buf;
    return KILN_OK;
}

/* Section 4.1, items 1-19. */
static kiln_result kiln__read_stream(kiln__shape *ctx)
{
    uint8_t flag, allow_edit;
    const char *author, *website;
    kiln__shape_where(ctx, "%s", "");
    TRY(kiln__shape_u8(ctx, "HasUnicodeStrings", &flag));
    if (flag > 1)
        return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_VALUE, "V8", 0, "HasUnicodeStrings",
                                "value %u is not 0 (ASCII) or 1 (UTF-16); the stream may not be RAW/ZLIB as declared",
                                flag);
    ctx->unicode = flag;
    TRY(kiln__shape_string(ctx, "Author", &author));
    TRY(kiln__shape_string(ctx, "Website", &website));
    TRY(kiln__shape_bool(ctx, "AllowEdit", &allow_edit));
    uint64_t at = ctx->pos;
    float volume[10];
    TRY(kiln__shape_floats(ctx, 10, "Volume", NULL, volume));
    kiln_source_scene *sc = ctx->scene;
    sc->metadata.author = author[0] ? author : NULL;
    sc->metadata.software = "Shape 0.1";
    sc->metadata.loc = kiln__shape_loc(ctx, 1, at - 1, "Author");
    if (website[0] || allow_edit)
        TRY(kiln__shape_extra(ctx, "file_info", website, sc->metadata.loc, "website \"%s\", allow edit %u", website,
                              allow_edit));
    TRY(kiln__shape_extra(ctx, "bounds", NULL, kiln__shape_loc(ctx, at, 40, "Volume"),
                          "AABB (%g, %g, %g)-(%g, %g, %g), sphere (%g, %g, %g) r %g", (double)volume[0],
                          (double)volume[1], (double)volume[2], (double)volume[3], (double)volume[4], (double)volume[5],
                          (double)volume[6], (double)volume[7], (double)volume[8], (double)volume[9]));

    TRY(kiln__shape_read_properties(ctx));
    TRY(kiln__shape_read_materials(ctx));
    TRY(kiln__shape_read_lights_to_sounds(ctx));
    TRY(kiln__shape_read_geometries(ctx));
    TRY(kiln__shape_read_nodes(ctx));
    TRY(kiln__shape_build_skeleton(ctx));
    TRY(kiln__shape_read_animations(ctx));
    if (ctx->pos < ctx->size) {
        kiln__shape_where(ctx, "%s", "");
        kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W1", ctx->pos, NULL,
                         "%llu bytes after the last animation layer ignored",
                         (unsigned long long)(ctx->size - ctx->pos));
    }
    return kiln__shape_build_meshes(ctx);
}

/* The model's name: the file's base name without its extension. */
static const char *kiln__model_name(kiln_source_scene *sc, const char *path)
{
    if (!path) return NULL;
    const char *b = path;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\') b = p + 1;
    const char *dot = strrchr(b, '.');
    return kiln_source_strndup(sc, b, dot && dot != b ? (size_t)(dot - b) : strlen(b));
}

/* The header (section 1); on success *stream and *stream_size describe the decoded stream and
 * *owned is the buffer to free (ZLIB), or NULL. */
static kiln_result kiln__header(kiln__shape *ctx, const uint8_t *p, size_t size, const uint8_t **stream,
                                size_t *stream_size, uint8_t **owned)
{
    *owned = NULL;
    if (size < KILN__SHAPE_HEADER_SIZE)
        return kiln__shape_fail(ctx, KILN_ERR_IMPORT_TRUNCATED, "V1", 0, "Header",
                                "the file has %zu bytes, the header alone takes 17", size);
    if (memcmp(p, kiln__shape_magic, sizeof kiln__shape_magic) != 0)
        return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_HEADER, "V2", 0, "Identifier", "%s",
                                memcmp(p, "SHAPE", 5) == 0 ? "identifier \"SHAPE\" is missing its ui8 length prefix (5)"
                                                           : "bytes 0-5 are not 05 'SHAPE'");
    uint16_t version = kiln__shape_rd_u16(p + 6);
    if (version != 0x0001)
        return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_HEADER, "V3", 6, "Version",
                                "version %u.%u (0x%04x) is not 0.1", version >> 8, version & 0xFFu, version);
    uint8_t encoding = p[8];
    if (encoding > 1)
        return kiln__shape_fail(ctx, KILN_ERR_IMPORT_UNSUPPORTED, "V4", 8, "Encoding",
                                "unknown encoding %u (0 RAW and 1 ZLIB are defined)", encoding);
    uint32_t decoded = kiln__shape_rd_u32(p + 9), stored = kiln__shape_rd_u32(p + 13);
    if (decoded > KILN__SHAPE_MAX_DECODED)
        return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V5", 9, "DecodedSize",
                                "DecodedSize %u exceeds 2^30", decoded);
    if ((uint64_t)KILN__SHAPE_HEADER_SIZE + stored > size)
        return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V5", 13, "StoredSize",
                                "StoredSize %u reaches past the end of the file (%zu stream bytes present)", stored,
                                size - KILN__SHAPE_HEADER_SIZE);
    if (encoding == 0 && stored != decoded)
        return kiln__shape_fail(ctx, KILN_ERR_IMPORT_BAD_COUNT, "V5", 9, "DecodedSize",
                                "RAW stream with StoredSize %u and DecodedSize %u", stored, decoded);
    if ((uint64_t)KILN__SHAPE_HEADER_SIZE + stored < size)
        kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W1", KILN__SHAPE_HEADER_SIZE + (uint64_t)stored, NULL,
                         "%llu bytes after the stream ignored",
                         (unsigned long long)(size - KILN__SHAPE_HEADER_SIZE - stored));
    if (encoding == 0) {
        *stream = p + KILN__SHAPE_HEADER_SIZE;
        *stream_size = decoded;
        return KILN_OK;
    }
    TRY(kiln__inflate(ctx, p + KILN__SHAPE_HEADER_SIZE, stored, decoded, owned));
    *stream = *owned;
    *stream_size = decoded;
    return KILN_OK;
}

kiln_result kiln__import_shape(const void *data, size_t size, const char *path, const kiln_import_options *opt,
                               kiln_source_scene *scene, kiln_diag *err)
{
    kiln__shape ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.scene = scene;
    ctx.opt = opt;
    ctx.err = err;
    if (err) memset(err, 0, sizeof *err);
    if (!scene || (!data && size))
        return kiln__shape_fail(&ctx, KILN_ERR_INVALID_ARGUMENT, NULL, KILN_NO_OFFSET, NULL, "no scene or no data");
    scene->format = "shape";

    const uint8_t *stream = NULL;
    size_t stream_size = 0;
    uint8_t *owned = NULL;
    kiln_result r = kiln__header(&ctx, data, size, &stream, &stream_size, &owned);
    if (r != KILN_OK) return r;
    ctx.s = stream;
    ctx.size = stream_size;
    ctx.base = owned ? 0 : KILN__SHAPE_HEADER_SIZE;

    ctx.model = kiln_source_alloc(scene, 1, sizeof *ctx.model);
    if (!ctx.model) {
        free(owned);
        return kiln__shape_fail(&ctx, KILN_ERR_OUT_OF_MEMORY, NULL, KILN_NO_OFFSET, NULL, "model");
    }
    ctx.model->name = kiln__model_name(scene, path);
    ctx.model->rotation[3] = 1.0f;
    for (int k = 0; k < 3; k++) ctx.model->scale[k] = 1.0f;
    ctx.model->loc.offset = 0;
    scene->models = ctx.model;
    scene->model_count = 1;

    r = kiln__read_stream(&ctx);
    free(owned);
    return r;
}

const kiln_importer kiln__importer_shape = {
    "shape", "*.Shape objects (node tree, geometry, materials, sub shapes, animation layers; RAW and zlib streams)",
    kiln__detect_shape, kiln__import_shape};
