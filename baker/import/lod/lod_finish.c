/* After the whole file is read: material names of face groups (C.2, W7), bump shaders, the
 * Kiln materials with their slots, the model, and the extras describing what the scene's
 * structs cannot hold (visibility, second material, fixed-function material parameters). */
#include <string.h>

#include "lod_internal.h"

static const char *const kiln__lod_blend_names[6] = {
    "opaque", "transparency", "additive", "alpha_test_50", "alpha_test_100", "modulate",
};

static uint32_t kiln__lod_find_material(const kiln__lod *c, const char *name)
{
    for (uint32_t i = 0; i < c->material_count; i++)
        if (strcmp(c->materials[i].name, name) == 0) return i;
    return KILN_SOURCE_NONE;
}

static void kiln__lod_apply_shaders(kiln__lod *c)
{
    for (uint32_t s = 0; s < c->shader_count; s++) {
        const kiln__lod_shader *sh = &c->shaders[s];
        uint32_t t = kiln__lod_find_material(c, sh->target);
        if (t == KILN_SOURCE_NONE || c->materials[t].has_bump) continue; /* the first shader per BumpName wins */
        kiln__lod_material *m = &c->materials[t];
        uint32_t nm = kiln__lod_find_material(c, sh->normal), sp = kiln__lod_find_material(c, sh->specular);
        m->has_bump = 1;
        m->normal_map = nm != KILN_SOURCE_NONE ? c->materials[nm].textures[0] : NULL;
        m->specular_map = sp != KILN_SOURCE_NONE ? c->materials[sp].textures[0] : NULL;
        m->bump_light_power = sh->light_power;
        m->bump_specular_power = sh->specular_power;
    }
}

static void kiln__lod_file_slot(kiln_source_material_slot *s, const kiln__lod_material *m, const char *name,
                                const char *path)
{
    s->loc = m->loc;
    s->name = name;
    s->kind = KILN_SOURCE_SLOT_FILE;
    s->path = path;
}

static void kiln__lod_color_slot(kiln_source_material_slot *s, const kiln__lod_material *m, const char *name,
                                 const float *rgba)
{
    s->loc = m->loc;
    s->name = name;
    s->kind = KILN_SOURCE_SLOT_COLOR;
    memcpy(s->rgba, rgba, sizeof s->rgba);
    s->color_space = KILN_SOURCE_COLOR_LINEAR; /* OpenGL material colours, no transfer function (B.2) */
}

/* Slots: diffuse (texture 0, else the diffuse colour), extra0 (texture 1), normal and specular
 * (bump shader), and the five material colours as *_color slots. */
static kiln_result kiln__lod_material_out(kiln__lod *c, const kiln__lod_material *m, kiln_source_material *out)
{
    kiln_source_material_slot *slots = kiln_source_alloc(c->scene, 9, sizeof *slots);
    if (!slots) return kiln__lod_oom(c, m->loc.path, m->loc.offset);
    uint32_t n = 0;
    if (m->textures[0]) kiln__lod_file_slot(&slots[n++], m, "diffuse", m->textures[0]);
    else kiln__lod_color_slot(&slots[n++], m, "diffuse", m->diffuse);
    if (m->textures[1]) kiln__lod_file_slot(&slots[n++], m, "extra0", m->textures[1]);
    if (m->normal_map) kiln__lod_file_slot(&slots[n++], m, "normal", m->normal_map);
    if (m->specular_map) kiln__lod_file_slot(&slots[n++], m, "specular", m->specular_map);
    kiln__lod_color_slot(&slots[n++], m, "ambient_color", m->ambient);
    kiln__lod_color_slot(&slots[n++], m, "diffuse_color", m->diffuse);
    kiln__lod_color_slot(&slots[n++], m, "emission_color", m->emission);
    kiln__lod_color_slot(&slots[n++], m, "specular_color", m->specular);
    kiln__lod_color_slot(&slots[n++], m, "env_color", m->env);
    out->loc = m->loc;
    out->name = m->name;
    out->type = "lod";
    out->slots = slots;
    out->slot_count = n;

    /* Out-of-range enumeration bytes are shown raw (B.2). */
    const char *blend = m->blending < 6 ? kiln__lod_blend_names[m->blending] : "out of range";
    const char *bump = m->has_bump ? kiln_source_strfmt(c->scene, ", bump shader (light power %g, specular power %g)",
                                                        (double)m->bump_light_power, (double)m->bump_specular_power)
                                   : "";
    if (!bump) return kiln__lod_oom(c, m->loc.path, m->loc.offset);
    const char *detail = kiln_source_strfmt(
        c->scene,
        "shininess %u, blending %s (%u), texture enabled %s, enabled %s, image alpha %u, texture mode %u, "
        "texture wrap %u, texture format %u, mapping %u, image brightness %g, image gamma %g, normal map scale %g%s%s",
        m->shininess, blend, m->blending, m->texture_enabled ? "yes" : "no", m->enabled ? "yes" : "no", m->image_alpha,
        m->texture_mode, m->texture_wrap, m->texture_format, m->mapping, (double)m->brightness, (double)m->gamma,
        (double)m->normal_map_scale, bump,
        m->nonfinite ? ", a non-finite colour component was replaced by its default" : "");
    if (!detail) return kiln__lod_oom(c, m->loc.path, m->loc.offset);
    return kiln__lod_extra(c, "material", m->name, m->loc.path, m->loc.offset, m->loc.size, detail);
}

static const char *kiln__lod_stem(kiln__lod *c, const char *path)
{
    if (!path || !*path) return NULL;
    const char *base = path;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\') base = p + 1;
    const char *dot = strrchr(base, '.');
    size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    return len ? kiln_source_strndup(c->scene, base, len) : NULL;
}

kiln_result kiln__lod_finish(kiln__lod *c, const kiln__lod_chunk *lod1)
{
    kiln_source_scene *scene = c->scene;
    kiln__lod_apply_shaders(c);

    kiln_source_model *model = kiln_source_alloc(scene, 1, sizeof *model);
    if (!model) return kiln__lod_oom(c, lod1->path, lod1->off);
    model->loc.path = lod1->path;
    model->loc.offset = lod1->off;
    model->loc.size = (uint64_t)lod1->size + 12;
    model->name = kiln__lod_stem(c, c->input_path);
    model->rotation[3] = 1.0f;
    model->scale[0] = model->scale[1] = model->scale[2] = 1.0f;
    model->skeleton = c->skeleton;

    /* The extras list is appended to below, so take the counts first. */
    uint32_t materials = c->material_count, meshes = c->mesh_count;
    model->materials = kiln_source_alloc(scene, materials, sizeof *model->materials);
    model->meshes = kiln_source_alloc(scene, meshes, sizeof *model->meshes);
    if ((materials && !model->materials) || (meshes && !model->meshes)) return kiln__lod_oom(c, lod1->path, lod1->off);
    model->material_count = materials;
    model->mesh_count = meshes;
    for (uint32_t i = 0; i < materials; i++) {
        kiln_result r = kiln__lod_material_out(c, &c->materials[i], &model->materials[i]);
        if (r != KILN_OK) return r;
    }
    for (uint32_t i = 0; i < meshes; i++) {
        kiln__lod_mesh *m = &c->meshes[i];
        const char *mat = m->material_name;
        m->mesh.material = mat && *mat ? kiln__lod_find_material(c, mat) : KILN_SOURCE_NONE;
        if (mat && *mat && m->mesh.material == KILN_SOURCE_NONE)
            kiln__lod_warn(c, KILN_SEVERITY_WARNING, "W7", m->mesh.loc.path, m->mesh.loc.offset,
                           "face group '%s' names material '%s', which MAT1 does not have: no material",
                           m->mesh.name, mat);
        model->meshes[i] = m->mesh;
        const char *detail = kiln_source_strfmt(scene, "visible %s, second material %s, layout %s",
                                                m->visible ? "yes" : "no",
                                                m->second_material_name ? m->second_material_name : "(none)",
                                                m->layout);
        if (!detail) return kiln__lod_oom(c, m->mesh.loc.path, m->mesh.loc.offset);
        kiln_result r = kiln__lod_extra(c, "mesh", m->mesh.name, m->mesh.loc.path, m->mesh.loc.offset,
                                        m->mesh.loc.size, detail);
        if (r != KILN_OK) return r;
    }
    scene->models = model;
    scene->model_count = 1;
    scene->animations = c->anims;
    scene->animation_count = c->anim_count;
    scene->extras = c->extras;
    scene->extra_count = c->extra_count;
    scene->metadata.loc.path = lod1->path;
    scene->metadata.loc.offset = lod1->off;
    scene->metadata.software = "LODka3D";
    return KILN_OK;
}
