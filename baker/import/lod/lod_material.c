/* The libraries: MAT1 materials (B.2), TXTR embedded textures (B.3), SHDR bump shaders (B.4). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lod_internal.h"

static void kiln__lod_rgba(float *out, float r, float g, float b, float a)
{
    out[0] = r;
    out[1] = g;
    out[2] = b;
    out[3] = a;
}

/* Defaults of a type 0/1 material (B.2). */
static void kiln__lod_material_defaults(kiln__lod_material *m)
{
    kiln__lod_rgba(m->ambient, 0.2f, 0.2f, 0.2f, 1.0f);
    kiln__lod_rgba(m->diffuse, 0.8f, 0.8f, 0.8f, 1.0f);
    kiln__lod_rgba(m->emission, 0.0f, 0.0f, 0.0f, 1.0f);
    kiln__lod_rgba(m->specular, 0.0f, 0.0f, 0.0f, 1.0f);
    kiln__lod_rgba(m->env, 0.0f, 0.0f, 0.0f, 0.0f);
    m->brightness = 1.0f;
    m->gamma = 1.0f;
    m->normal_map_scale = 0.125f;
    m->texture_enabled = 1;
    m->enabled = 1;
}

/* TextrName: one file, or `first:second` split at the first colon that is not a drive-letter
 * colon (C.2 Rec.). */
static kiln_result kiln__lod_split_textures(kiln__lod *c, kiln__lod_material *m, const char *s, const char *path,
                                            uint64_t off)
{
    size_t n = strlen(s);
    size_t colon = n;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != ':') continue;
        int letter = (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z');
        if (i == 1 && letter && (s[2] == '\\' || s[2] == '/')) continue;
        colon = i;
        break;
    }
    if (colon > 0) {
        m->textures[0] = kiln_source_strndup(c->scene, s, colon);
        if (!m->textures[0]) return kiln__lod_oom(c, path, off);
    }
    if (colon < n && colon + 1 < n) {
        m->textures[1] = kiln_source_strdup(c->scene, s + colon + 1);
        if (!m->textures[1]) return kiln__lod_oom(c, path, off);
    }
    return KILN_OK;
}

/* A colour; a component that is not finite keeps its default (the one already in `out`): no
 * rule covers material colours, and the source layer needs finite ones. */
static void kiln__lod_read_color(kiln__lod *c, uint64_t off, float *out, int *replaced)
{
    for (int i = 0; i < 4; i++) {
        float v = kiln__lod_ld_f32(c, off + 4 * (uint64_t)i);
        if (isfinite(v)) out[i] = v;
        else *replaced = 1;
    }
}

/* The 100 or 101 bytes of MaterialOptions at `off` (bounds checked by the caller). */
static void kiln__lod_read_options(kiln__lod *c, kiln__lod_material *m, uint64_t off, int has_mapping)
{
    kiln__lod_read_color(c, off + 0, m->ambient, &m->nonfinite);
    kiln__lod_read_color(c, off + 16, m->diffuse, &m->nonfinite);
    kiln__lod_read_color(c, off + 32, m->emission, &m->nonfinite);
    kiln__lod_read_color(c, off + 48, m->specular, &m->nonfinite);
    kiln__lod_read_color(c, off + 64, m->env, &m->nonfinite);
    m->shininess = c->data[off + 80];
    m->brightness = kiln__lod_ld_f32(c, off + 81);
    m->gamma = kiln__lod_ld_f32(c, off + 85);
    m->normal_map_scale = kiln__lod_ld_f32(c, off + 89);
    m->blending = c->data[off + 93];
    m->image_alpha = c->data[off + 94];
    m->texture_mode = c->data[off + 95];
    m->texture_wrap = c->data[off + 96];
    m->texture_format = c->data[off + 97];
    m->texture_enabled = c->data[off + 98] != 0;
    m->enabled = c->data[off + 99] != 0;
    m->mapping = has_mapping ? c->data[off + 100] : 0;
}

kiln_result kiln__lod_read_mat1(kiln__lod *c, const kiln__lod_chunk *ch)
{
    kiln__lod_rd rd;
    kiln__lod_rd_init(&rd, c, ch->data, ch->end, ch->path);
    uint8_t type;
    kiln_result r = kiln__lod_u8(c, &rd, "MaterialsType", &type);
    if (r != KILN_OK) return r;
    if (type > 3) {
        kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W14", ch->path, ch->data,
                       "MaterialsType %u is not 0-3: the material library is skipped", type);
        return KILN_OK;
    }
    if (type == 1 || type == 2)
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W5", ch->path, ch->data,
                       "MaterialsType %u is a legacy layout (%s): read as such", type,
                       type == 1 ? "names only" : "100-byte options without MappingMode");
    if (type == 0) {
        if (kiln__lod_left(&rd))
            kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W3", ch->path, rd.pos, "%llu unread byte(s) at the end of MAT1",
                           (unsigned long long)kiln__lod_left(&rd));
        return KILN_OK;
    }
    uint64_t count_at = rd.pos;
    uint32_t count;
    r = kiln__lod_count(c, &rd, "MaterialsCount", &count);
    if (r != KILN_OK) return r;
    if (count != (uint32_t)ch->count)
        return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_COUNT, "R17", ch->path, count_at,
                              "MaterialsCount %u differs from the MAT1 chunk Count %d", count, ch->count);
    uint64_t opt_size = type == 3 ? 101 : type == 2 ? 100 : 0;
    /* Materials are appended as they are read (no allocation from the count), so the first
     * field that does not fit is the one reported. */
    for (uint32_t i = 0; i < count; i++) {
        kiln__lod_material *m;
        KILN__LOD_PUSH(c, c->materials, c->material_count, c->material_cap, m);
        if (!m) return kiln__lod_oom(c, ch->path, rd.pos);
        uint64_t start = rd.pos;
        kiln__lod_material_defaults(m);
        m->loc.path = kiln__lod_path(c, ch->path, "material", i);
        if (!m->loc.path) return kiln__lod_oom(c, ch->path, start);
        rd.path = m->loc.path;
        const char *tex;
        r = kiln__lod_lstr(c, &rd, "MatName", &m->name);
        if (r == KILN_OK) r = kiln__lod_lstr(c, &rd, "TextrName", &tex);
        uint64_t opt_at = 0;
        if (r == KILN_OK) r = kiln__lod_span(c, &rd, "MaterialOptions", opt_size, 1, &opt_at);
        if (r != KILN_OK) return r;
        if (opt_size) kiln__lod_read_options(c, m, opt_at, type == 3);
        r = kiln__lod_split_textures(c, m, tex, m->loc.path, start);
        if (r != KILN_OK) return r;
        m->loc.offset = start;
        m->loc.size = rd.pos - start;
    }
    if (kiln__lod_left(&rd))
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W3", ch->path, rd.pos, "%llu unread byte(s) at the end of MAT1",
                       (unsigned long long)kiln__lod_left(&rd));
    return KILN_OK;
}

kiln_result kiln__lod_read_txtr(kiln__lod *c, const kiln__lod_chunk *ch)
{
    kiln__lod_rd rd;
    kiln__lod_rd_init(&rd, c, ch->data, ch->end, ch->path);
    uint8_t type;
    kiln_result r = kiln__lod_u8(c, &rd, "TexturesType", &type);
    if (r != KILN_OK) return r;
    if (type != 0) {
        kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W14", ch->path, ch->data,
                       "TexturesType %u is not 0: the embedded textures are skipped", type);
        return KILN_OK;
    }
    for (uint32_t i = 0; i < (uint32_t)ch->count; i++) {
        uint64_t start = rd.pos;
        const char *path = kiln__lod_path(c, ch->path, "texture", i);
        if (!path) return kiln__lod_oom(c, ch->path, start);
        rd.path = path;
        uint32_t opt_size, data_size;
        int32_t opt_type;
        const char *mat, *name;
        r = kiln__lod_count(c, &rd, "TextureOptionSize", &opt_size);
        if (r == KILN_OK) r = kiln__lod_count(c, &rd, "TextureDataSize", &data_size);
        if (r == KILN_OK) r = kiln__lod_i32(c, &rd, "TextureOptionType", &opt_type);
        if (r == KILN_OK) r = kiln__lod_lstr(c, &rd, "TextureMaterialName", &mat);
        if (r == KILN_OK) r = kiln__lod_lstr(c, &rd, "TextureName", &name);
        if (r != KILN_OK) return r;
        if ((uint64_t)opt_size < rd.pos - start)
            return kiln__lod_fail(c, KILN_ERR_IMPORT_BAD_COUNT, "R17", path, start,
                                  "TextureOptionSize %u is smaller than the %llu bytes of its own fields", opt_size,
                                  (unsigned long long)(rd.pos - start));
        rd.pos = start;
        uint64_t at;
        r = kiln__lod_span(c, &rd, "texture record (options and image data)", (uint64_t)opt_size + data_size, 1, &at);
        if (r != KILN_OK) return r;
        const char *detail = kiln_source_strfmt(c->scene, "material %s, %u bytes", mat, data_size);
        if (!detail) return kiln__lod_oom(c, path, start);
        r = kiln__lod_extra(c, "embedded_texture", name, path, start, rd.pos - start, detail);
        if (r != KILN_OK) return r;
    }
    if (kiln__lod_left(&rd))
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W3", ch->path, rd.pos, "%llu unread byte(s) at the end of TXTR",
                       (unsigned long long)kiln__lod_left(&rd));
    return KILN_OK;
}

kiln_result kiln__lod_read_shdr(kiln__lod *c, const kiln__lod_chunk *ch)
{
    kiln__lod_rd rd;
    kiln__lod_rd_init(&rd, c, ch->data, ch->end, ch->path);
    uint8_t type;
    kiln_result r = kiln__lod_u8(c, &rd, "ShaderLibType", &type);
    if (r != KILN_OK) return r;
    if (type != 1) {
        kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W14", ch->path, ch->data,
                       "ShaderLibType %u is not 1: the shader library is skipped", type);
        return KILN_OK;
    }
    for (uint32_t i = 0; i < (uint32_t)ch->count; i++) {
        uint64_t start = rd.pos;
        const char *path = kiln__lod_path(c, ch->path, "shader", i);
        if (!path) return kiln__lod_oom(c, ch->path, start);
        rd.path = path;
        uint32_t size;
        uint64_t body;
        r = kiln__lod_count(c, &rd, "ShaderSize", &size);
        if (r == KILN_OK) r = kiln__lod_span(c, &rd, "shader record (ShaderSize)", size, 1, &body);
        if (r != KILN_OK) return r;
        kiln__lod_rd sh;
        kiln__lod_rd_init(&sh, c, body, body + size, path);
        sh.overrun_rule = "R17";
        uint8_t shader_type;
        r = kiln__lod_u8(c, &sh, "ShaderType", &shader_type);
        if (r != KILN_OK) return r;
        if (shader_type != 1) {
            kiln__lod_warn(c, KILN_SEVERITY_ERROR, "W15", path, body,
                           "ShaderType %u is not a bump shader (1): skipped by its ShaderSize (%u bytes)",
                           shader_type, size);
            continue;
        }
        kiln__lod_shader *s;
        const char *target, *normal, *specular;
        float light, spec;
        r = kiln__lod_lstr(c, &sh, "BumpName", &target);
        if (r == KILN_OK) r = kiln__lod_lstr(c, &sh, "BumpNormalName", &normal);
        if (r == KILN_OK) r = kiln__lod_lstr(c, &sh, "BumpSpecularName", &specular);
        if (r == KILN_OK) r = kiln__lod_f32(c, &sh, "BumpLightPower", &light);
        if (r == KILN_OK) r = kiln__lod_f32(c, &sh, "BumpSpecularPower", &spec);
        if (r != KILN_OK) return r;
        KILN__LOD_PUSH(c, c->shaders, c->shader_count, c->shader_cap, s);
        if (!s) return kiln__lod_oom(c, path, start);
        s->loc.path = path;
        s->loc.offset = start;
        s->loc.size = 4 + (uint64_t)size;
        s->target = target;
        s->normal = normal;
        s->specular = specular;
        s->light_power = light;
        s->specular_power = spec;
    }
    if (kiln__lod_left(&rd))
        kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W3", ch->path, rd.pos, "%llu unread byte(s) at the end of SHDR",
                       (unsigned long long)kiln__lod_left(&rd));
    return KILN_OK;
}
