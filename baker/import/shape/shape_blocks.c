/* The *.Shape blocks the runtime does not use (spec 4.2, 4.4-4.10, section 8): properties,
 * lights, lens flares, cameras, anchors, scripts and sounds are parsed to keep the stream in
 * sync and listed as scene extras; sub shapes become instances (4.8). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "shape_internal.h"

/* Extras are collected in a growing array in the arena (the old copy stays until the end). */
kiln_result kiln__shape_extra(kiln__shape *ctx, const char *kind, const char *name, kiln_source_loc loc,
                              const char *fmt, ...)
{
    kiln_source_scene *sc = ctx->scene;
    uint32_t n = sc->extra_count;
    if ((n & (n - 1)) == 0) { /* 0, 1, 2, 4, ...: grow to the next power of two */
        uint64_t cap = n ? (uint64_t)n * 2u : 8u;
        kiln_source_extra *grown = kiln_source_alloc(sc, cap, sizeof *grown);
        if (!grown) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, KILN_NO_OFFSET, NULL, "extras");
        if (n) memcpy(grown, sc->extras, (size_t)n * sizeof *grown);
        sc->extras = grown;
    }
    kiln_source_extra *e = &sc->extras[n];
    memset(e, 0, sizeof *e);
    e->loc = loc;
    e->kind = kind;
    e->name = name;
    if (fmt) {
        char detail[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
        e->detail = kiln_source_strdup(sc, detail);
    }
    sc->extra_count = n + 1;
    return KILN_OK;
}

#define TRY(x) do { kiln_result r_ = (x); if (r_ != KILN_OK) return r_; } while (0)

kiln_result kiln__shape_read_properties(kiln__shape *ctx)
{
    uint16_t count;
    kiln__shape_where(ctx, "%s", "");
    TRY(kiln__shape_u16(ctx, "NumProperties", &count));
    TRY(kiln__shape_check_count(ctx, count, 2, "Properties"));
    for (uint32_t i = 0; i < count; i++) {
        uint64_t at = ctx->pos;
        const char *name, *value;
        kiln__shape_where(ctx, "Property[%u]", i);
        TRY(kiln__shape_string(ctx, "Name", &name));
        TRY(kiln__shape_string(ctx, "Value", &value));
        TRY(kiln__shape_extra(ctx, "property", name, kiln__shape_loc(ctx, at, ctx->pos - at, NULL), "%s", value));
    }
    return KILN_OK;
}

static const char *kiln__light_type(uint8_t t)
{
    static const char *names[] = {"point", "diffuse", "spot", "line", "circle", "area"};
    return t < 6 ? names[t] : "unknown";
}

static kiln_result kiln__read_lights(kiln__shape *ctx, uint16_t **flare_refs, uint64_t **flare_at, uint16_t *count_out)
{
    uint16_t count;
    kiln__shape_where(ctx, "%s", "");
    TRY(kiln__shape_u16(ctx, "NumLights", &count));
    TRY(kiln__shape_check_count(ctx, count, 81, "Lights"));
    *count_out = count;
    *flare_refs = kiln_source_alloc(ctx->scene, count, sizeof **flare_refs);
    *flare_at = kiln_source_alloc(ctx->scene, count, sizeof **flare_at);
    if (!*flare_refs || !*flare_at) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, ctx->pos, "Lights", "lights");
    for (uint32_t i = 0; i < count; i++) {
        uint64_t at = ctx->pos;
        const char *name, *map;
        uint8_t type;
        float f[19];
        kiln__shape_where(ctx, "Light[%u]", i);
        TRY(kiln__shape_string(ctx, "Name", &name));
        TRY(kiln__shape_string(ctx, "ProjectionMap", &map));
        uint64_t type_at = ctx->pos;
        TRY(kiln__shape_u8(ctx, "Type", &type));
        TRY(kiln__shape_floats(ctx, 19, "Values", NULL, f));
        (*flare_at)[i] = ctx->pos;
        TRY(kiln__shape_u16(ctx, "LensFlareIndex", &(*flare_refs)[i]));
        if (type > 5)
            kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W18", type_at, "Type", "light type %u is not 0-5", type);
        TRY(kiln__shape_extra(ctx, "light", name, kiln__shape_loc(ctx, at, ctx->pos - at, NULL),
                              "type %s (%u), position (%g, %g, %g), colour (%g, %g, %g), %g W, radius %g m%s%s",
                              kiln__light_type(type), type, (double)f[0], (double)f[1], (double)f[2], (double)f[3],
                              (double)f[4], (double)f[5], (double)f[10], (double)f[9], map[0] ? ", projection map " : "",
                              map));
    }
    return KILN_OK;
}

static kiln_result kiln__read_lens_flares(kiln__shape *ctx)
{
    uint16_t count;
    kiln__shape_where(ctx, "%s", "");
    TRY(kiln__shape_u16(ctx, "NumLensFlares", &count));
    TRY(kiln__shape_check_count(ctx, count, 26, "LensFlares"));
    ctx->lens_flare_count = count;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t at = ctx->pos;
        const char *name, *type;
        float f[6];
        kiln__shape_where(ctx, "LensFlare[%u]", i);
        TRY(kiln__shape_string(ctx, "Name", &name));
        TRY(kiln__shape_string(ctx, "TypeName", &type));
        TRY(kiln__shape_floats(ctx, 6, "Values", NULL, f));
        TRY(kiln__shape_extra(ctx, "lens_flare", name, kiln__shape_loc(ctx, at, ctx->pos - at, NULL),
                              "type %s, scale %g, max distance %g m", type, (double)f[4], (double)f[5]));
    }
    return KILN_OK;
}

static kiln_result kiln__read_cameras(kiln__shape *ctx)
{
    uint8_t count;
    kiln__shape_where(ctx, "%s", "");
    TRY(kiln__shape_u8(ctx, "NumCameras", &count));
    TRY(kiln__shape_check_count(ctx, count, 33, "Cameras"));
    for (uint32_t i = 0; i < count; i++) {
        uint64_t at = ctx->pos;
        const char *name;
        float f[8];
        kiln__shape_where(ctx, "Camera[%u]", i);
        TRY(kiln__shape_string(ctx, "Name", &name));
        TRY(kiln__shape_floats(ctx, 8, "Values", NULL, f));
        TRY(kiln__shape_extra(ctx, "camera", name, kiln__shape_loc(ctx, at, ctx->pos - at, NULL),
                              "position (%g, %g, %g), fov %g rad", (double)f[0], (double)f[1], (double)f[2],
                              (double)f[7]));
    }
    return KILN_OK;
}

static kiln_result kiln__read_anchors(kiln__shape *ctx)
{
    uint8_t count;
    kiln__shape_where(ctx, "%s", "");
    TRY(kiln__shape_u8(ctx, "NumAnchors", &count));
    TRY(kiln__shape_check_count(ctx, count, 25, "Anchors"));
    for (uint32_t i = 0; i < count; i++) {
        uint64_t at = ctx->pos;
        const char *name;
        float f[6];
        kiln__shape_where(ctx, "Anchor[%u]", i);
        TRY(kiln__shape_string(ctx, "Name", &name));
        TRY(kiln__shape_floats(ctx, 6, "Values", NULL, f));
        TRY(kiln__shape_extra(ctx, "anchor", name, kiln__shape_loc(ctx, at, ctx->pos - at, NULL),
                              "position (%g, %g, %g), direction (%g, %g, %g)", (double)f[0], (double)f[1],
                              (double)f[2], (double)f[3], (double)f[4], (double)f[5]));
    }
    return KILN_OK;
}

/* "dir/antenna.Shape" -> "antenna" (both separators; the last dot of the file name). */
static const char *kiln__file_stem(kiln_source_scene *sc, const char *file)
{
    const char *b = file;
    for (const char *p = file; *p; p++)
        if (*p == '/' || *p == '\\') b = p + 1;
    const char *dot = strrchr(b, '.');
    return kiln_source_strndup(sc, b, dot && dot != b ? (size_t)(dot - b) : strlen(b));
}

static kiln_result kiln__read_sub_shapes(kiln__shape *ctx)
{
    uint8_t count;
    kiln__shape_where(ctx, "%s", "");
    TRY(kiln__shape_u8(ctx, "NumSubShapes", &count));
    TRY(kiln__shape_check_count(ctx, count, 38, "SubShapes"));
    kiln_source_scene *sc = ctx->scene;
    sc->instances = kiln_source_alloc(sc, count, sizeof *sc->instances);
    if (!sc->instances) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, ctx->pos, "SubShapes", "instances");
    for (uint32_t i = 0; i < count; i++) {
        uint64_t at = ctx->pos;
        const char *name, *file;
        float f[9];
        kiln__shape_where(ctx, "SubShape[%u]", i);
        TRY(kiln__shape_string(ctx, "Name", &name));
        uint64_t file_at = ctx->pos;
        TRY(kiln__shape_string(ctx, "File", &file));
        uint64_t transform_at = ctx->pos;
        TRY(kiln__shape_floats(ctx, 9, "Transform", NULL, f));
        int finite = 1;
        for (int k = 0; k < 9; k++) finite &= isfinite(kiln__shape_rd_f32(ctx->s + transform_at + 4u * (unsigned)k)) != 0;
        if (!finite) { /* V14 does not list sub shapes: the floats() call reported W18; no instance */
            TRY(kiln__shape_extra(ctx, "sub_shape", name, kiln__shape_loc(ctx, at, ctx->pos - at, NULL),
                                  "file \"%s\": transform not finite, not placed", file));
            continue;
        }
        kiln_source_instance *in = &sc->instances[sc->instance_count];
        in->loc = kiln__shape_loc(ctx, at, ctx->pos - at, NULL);
        in->name = name[0] ? name : kiln__file_stem(sc, file);
        in->path = file;
        in->path_loc = kiln__shape_loc(ctx, file_at, transform_at - file_at, "File");
        double q[4];
        kiln__shape_quat_from_ypr(f[3], f[4], f[5], q);
        for (int k = 0; k < 3; k++) {
            in->position[k] = f[k];
            in->scale[k] = f[6 + k];
        }
        for (int k = 0; k < 4; k++) in->rotation[k] = (float)q[k];
        sc->instance_count++;
    }
    /* Sub shape files are relative to the .Shape file's directory (4.8). */
    if (sc->instance_count) sc->metadata.scene_root = ".";
    return KILN_OK;
}

static kiln_result kiln__read_scripts(kiln__shape *ctx)
{
    uint8_t count;
    kiln__shape_where(ctx, "%s", "");
    TRY(kiln__shape_u8(ctx, "NumScripts", &count));
    TRY(kiln__shape_check_count(ctx, count, 4, "Scripts"));
    for (uint32_t i = 0; i < count; i++) {
        uint64_t at = ctx->pos;
        const char *file, *commands;
        uint16_t args;
        kiln__shape_where(ctx, "Script[%u]", i);
        TRY(kiln__shape_string(ctx, "File", &file));
        TRY(kiln__shape_string(ctx, "Commands", &commands));
        TRY(kiln__shape_u16(ctx, "NumArguments", &args));
        TRY(kiln__shape_check_count(ctx, args, 2, "Arguments"));
        char list[256] = "";
        size_t used = 0;
        for (uint32_t a = 0; a < args; a++) {
            const char *name, *value;
            kiln__shape_where(ctx, "Script[%u].Argument[%u]", i, a);
            TRY(kiln__shape_string(ctx, "Name", &name));
            TRY(kiln__shape_string(ctx, "Value", &value));
            if (used < sizeof list - 1) {
                int w = snprintf(list + used, sizeof list - used, "%s%s=%s", a ? ", " : "", name, value);
                used = w < 0 ? sizeof list - 1 : used + (size_t)w;
                if (used > sizeof list - 1) used = sizeof list - 1;
            }
        }
        kiln__shape_where(ctx, "Script[%u]", i);
        TRY(kiln__shape_extra(ctx, "script", file, kiln__shape_loc(ctx, at, ctx->pos - at, NULL),
                              "%u argument(s)%s%s; commands \"%s\"", args, args ? ": " : "", list, commands));
    }
    return KILN_OK;
}

static kiln_result kiln__read_sounds(kiln__shape *ctx)
{
    uint8_t count;
    kiln__shape_where(ctx, "%s", "");
    TRY(kiln__shape_u8(ctx, "NumSounds", &count));
    TRY(kiln__shape_check_count(ctx, count, 50, "Sounds"));
    for (uint32_t i = 0; i < count; i++) {
        uint64_t at = ctx->pos;
        const char *name, *bank, *event;
        float f[7], g[4];
        uint8_t allow;
        uint16_t props;
        kiln__shape_where(ctx, "Sound[%u]", i);
        TRY(kiln__shape_string(ctx, "Name", &name));
        TRY(kiln__shape_string(ctx, "Bank", &bank));
        TRY(kiln__shape_string(ctx, "Event", &event));
        TRY(kiln__shape_floats(ctx, 7, "Values", NULL, f));
        TRY(kiln__shape_bool(ctx, "AllowShapeChange", &allow));
        TRY(kiln__shape_floats(ctx, 4, "ShapeChange", NULL, g));
        TRY(kiln__shape_u16(ctx, "NumSoundProperties", &props));
        TRY(kiln__shape_check_count(ctx, props, 5, "SoundProperties"));
        for (uint32_t p = 0; p < props; p++) {
            const char *pname;
            kiln__shape_where(ctx, "Sound[%u].Property[%u]", i, p);
            TRY(kiln__shape_string(ctx, "Name", &pname));
            TRY(kiln__shape_floats(ctx, 1, "Value", NULL, NULL));
        }
        kiln__shape_where(ctx, "Sound[%u]", i);
        TRY(kiln__shape_extra(ctx, "sound", name, kiln__shape_loc(ctx, at, ctx->pos - at, NULL),
                              "bank \"%s\", event \"%s\", position (%g, %g, %g), %u propert%s", bank, event,
                              (double)f[0], (double)f[1], (double)f[2], props, props == 1 ? "y" : "ies"));
    }
    return KILN_OK;
}

kiln_result kiln__shape_read_lights_to_sounds(kiln__shape *ctx)
{
    uint16_t *flare_refs, light_count;
    uint64_t *flare_at;
    TRY(kiln__read_lights(ctx, &flare_refs, &flare_at, &light_count));
    TRY(kiln__read_lens_flares(ctx));
    for (uint32_t i = 0; i < light_count; i++)
        if (flare_refs[i] != 0xFFFFu && flare_refs[i] >= ctx->lens_flare_count) {
            kiln__shape_where(ctx, "Light[%u]", i);
            kiln__shape_warn(ctx, KILN_SEVERITY_WARNING, "W18", flare_at[i], "LensFlareIndex",
                             "lens flare %u does not exist (%u lens flares)", flare_refs[i], ctx->lens_flare_count);
        }
    TRY(kiln__read_cameras(ctx));
    TRY(kiln__read_anchors(ctx));
    TRY(kiln__read_sub_shapes(ctx));
    TRY(kiln__read_scripts(ctx));
    TRY(kiln__read_sounds(ctx));
    return KILN_OK;
}
