/* `kiln inspect`: the text form of a Cast file's summary (inspect_summary.h), on stdout. */
#include <string.h>

#include "cli.h"
#include "inspect_summary.h"

#define NONE KILN_CAST_NONE

static const char *kiln__txt_plural(uint64_t n) { return n == 1 ? "" : "s"; }

static void kiln__txt_name(const char *name)
{
    if (!name) {
        fputs("(unnamed)", stdout);
        return;
    }
    fputc('\'', stdout);
    kiln__cli_put_text(stdout, name, "");
    fputc('\'', stdout);
}

static void kiln__txt_vec(const float *v, int n)
{
    fputc('(', stdout);
    for (int i = 0; i < n; i++) printf("%s%g", i ? ", " : "", (double)v[i]);
    fputc(')', stdout);
}

static void kiln__txt_path(const kiln_cast_doc *doc, uint32_t node)
{
    char path[192];
    if (node == NONE) return;
    fputs(" [", stdout);
    kiln__cli_put_text(stdout, kiln_cast_node_path(doc, node, path, sizeof path), "");
    fputc(']', stdout);
}

static void kiln__txt_dropped(void) { fputs(": dropped (see diagnostics)\n", stdout); }

/* "  <label> 'name'", and the whole line when the part was dropped. Returns the part's `ok`. */
static int kiln__txt_part_head(const char *label, const char *name, const kiln__insp_part *p)
{
    printf("  %s ", label);
    kiln__txt_name(name);
    if (!p->ok) kiln__txt_dropped();
    return (int)p->ok;
}

/* "unresolved (hash 0x...)" or the material's name. */
static void kiln__txt_material_ref(const kiln__insp_material_ref *ref)
{
    if (ref->node == NONE) printf("unresolved (hash 0x%llx)", (unsigned long long)ref->hash);
    else kiln__txt_name(ref->name);
}

static void kiln__txt_mesh(const kiln__insp_part *p)
{
    const kiln__insp_mesh_rec *m = &p->u.mesh;
    if (!kiln__txt_part_head("mesh", m->name, p)) return;
    printf(": %u vertices, %u face%s\n", m->vertices, m->faces, kiln__txt_plural(m->faces));
    printf("    attributes: normals %s, tangents %s, %u UV layer%s", m->normals ? "yes" : "no",
           m->tangents ? "yes" : "no", m->uv_layers, kiln__txt_plural(m->uv_layers));
    printf(", %u color layer%s", m->color_layers, kiln__txt_plural(m->color_layers));
    if (m->color_layers) {
        fputs(" (", stdout);
        for (uint32_t k = 0; k < m->color_layers && k < KILN_CAST_MAX_LAYERS; k++)
            printf("%s%s", k ? ", " : "", kiln__insp_color_names[m->color_type[k]]);
        fputc(')', stdout);
    }
    fputc('\n', stdout);
    if (m->max_influence) printf("    skin: max influence %u, %s\n", m->max_influence, m->dual_quat ? "quaternion" : "linear");
    else fputs("    skin: none\n", stdout);
    if (m->material.hash) {
        fputs("    material: ", stdout);
        kiln__txt_material_ref(&m->material);
        fputc('\n', stdout);
    }
    if (m->bad_index_faces || m->degenerate_faces)
        printf("    faces dropped: %u with a bad index, %u degenerate\n", m->bad_index_faces, m->degenerate_faces);
}

static void kiln__txt_hair(const kiln__insp_part *p)
{
    const kiln__insp_hair_rec *h = &p->u.hair;
    if (!kiln__txt_part_head("hair", h->name, p)) return;
    printf(": %u strand%s, %u particles", h->strands, kiln__txt_plural(h->strands), h->particles);
    if (h->material.hash) {
        fputs(", material ", stdout);
        kiln__txt_material_ref(&h->material);
    }
    fputc('\n', stdout);
}

static void kiln__txt_blend(const kiln__insp_part *p)
{
    const kiln__insp_blend_rec *b = &p->u.blend;
    if (!kiln__txt_part_head("blend shape", b->name, p)) return;
    fputs(": base mesh ", stdout);
    kiln__txt_name(b->base_mesh);
    printf(", %u pair%s, target scale %g\n", b->pairs, kiln__txt_plural(b->pairs), (double)b->target_scale);
}

static void kiln__txt_slot(const kiln__insp_slot *sl)
{
    char name[64];
    size_t len = sl->name_len < sizeof name - 1 ? sl->name_len : sizeof name - 1;
    memcpy(name, sl->name, len);
    name[len] = 0;
    fputs("    ", stdout);
    kiln__cli_put_text(stdout, name, "");
    for (size_t pad = len; pad < 12; pad++) fputc(' ', stdout);
    if (sl->id == KILN_CAST_ID_FILE) {
        fputs(" file ", stdout);
        kiln__txt_name(sl->path);
    } else if (sl->id == KILN_CAST_ID_COLOR) {
        fputs(" color ", stdout);
        kiln__txt_vec(sl->rgba, 4);
        fputs(sl->linear ? " linear" : " srgb", stdout);
    } else {
        printf(" unresolved (hash 0x%llx)", (unsigned long long)sl->hash);
    }
    fputc('\n', stdout);
}

static void kiln__txt_material(const kiln__insp_summary *s, const kiln__insp_part *p)
{
    const kiln__insp_material_rec *m = &p->u.material;
    if (!kiln__txt_part_head("material", m->name, p)) return;
    fputs(" (type ", stdout);
    kiln__cli_put_text(stdout, m->type, "none");
    printf("), %u slot%s\n", m->slot_count, kiln__txt_plural(m->slot_count));
    for (uint32_t k = 0; k < m->slot_count; k++) kiln__txt_slot(&s->slots[m->first_slot + k]);
}

static void kiln__txt_skeleton(const kiln__insp_part *p)
{
    const kiln_cast_skeleton *k = &p->u.skeleton;
    printf("  skeleton: %u bone%s", k->bone_count, kiln__txt_plural(k->bone_count));
    if (p->ok) printf(", depth %u, %u root%s", k->depth, k->root_count, kiln__txt_plural(k->root_count));
    else fputs(" (hierarchy rejected, see diagnostics)", stdout);
    printf(", %u IK handle%s, %u constraint%s\n", k->ik_count, kiln__txt_plural(k->ik_count), k->constraint_count,
           kiln__txt_plural(k->constraint_count));
}

/* Starts a model or animation entry: "<label> 'name' [node path]", or the whole line `holder`
 * for the holder of misplaced nodes (node NONE), then returns 0. */
static int kiln__txt_owner_head(const kiln__insp_summary *s, const char *label, const char *name, uint32_t node,
                                const char *holder)
{
    if (node == NONE) {
        fputs(holder, stdout);
        return 0;
    }
    printf("%s ", label);
    kiln__txt_name(name);
    kiln__txt_path(s->doc, node);
    return 1;
}

static void kiln__txt_model(const kiln__insp_summary *s, const kiln__insp_model *mo)
{
    if (kiln__txt_owner_head(s, "model", mo->m.name, mo->node, "nodes outside any Model\n")) {
        if (mo->ok) fputc('\n', stdout);
        else kiln__txt_dropped();
        if (mo->ok && !kiln__insp_default_transform(&mo->m)) {
            fputs("  transform: position ", stdout);
            kiln__txt_vec(mo->m.position, 3);
            fputs(", rotation xyzw ", stdout);
            kiln__txt_vec(mo->m.rotation, 4);
            fputs(", scale ", stdout);
            kiln__txt_vec(mo->m.scale, 3);
            fputc('\n', stdout);
        }
    }
    const kiln__insp_part *parts = s->parts;
    for (uint32_t i = mo->first[KILN__INSP_SKELETON]; i != NONE; i = parts[i].next) kiln__txt_skeleton(&parts[i]);
    for (uint32_t i = mo->first[KILN__INSP_MESH]; i != NONE; i = parts[i].next) kiln__txt_mesh(&parts[i]);
    for (uint32_t i = mo->first[KILN__INSP_HAIR]; i != NONE; i = parts[i].next) kiln__txt_hair(&parts[i]);
    for (uint32_t i = mo->first[KILN__INSP_BLEND]; i != NONE; i = parts[i].next) kiln__txt_blend(&parts[i]);
    for (uint32_t i = mo->first[KILN__INSP_MATERIAL]; i != NONE; i = parts[i].next) kiln__txt_material(s, &parts[i]);
}

/* "  curves: N (D dropped); by property: ...; by mode: ..." and its newline. */
static void kiln__txt_curves(const kiln__insp_anim *a)
{
    printf("  curves: %u", a->curves);
    if (a->curves_dropped) printf(" (%u dropped)", a->curves_dropped);
    const char *sep = "; by property: ";
    for (int k = 0; k < KILN_CAST_CURVE_PROP_COUNT_; k++) {
        if (!a->by_prop[k]) continue;
        printf("%s%s %u", sep, kiln_cast_curve_prop_name((kiln_cast_curve_prop)k), a->by_prop[k]);
        sep = ", ";
    }
    sep = "; by mode: ";
    for (int k = 0; k < 3; k++) {
        if (!a->by_mode[k]) continue;
        printf("%s%s %u", sep, kiln__insp_mode_names[k], a->by_mode[k]);
        sep = ", ";
    }
    fputc('\n', stdout);
}

static void kiln__txt_anim(const kiln__insp_summary *s, const kiln__insp_anim *a)
{
    if (kiln__txt_owner_head(s, "animation", a->a.name, a->node, "tracks outside any Animation\n")) {
        if (!a->ok) {
            kiln__txt_dropped();
        } else {
            uint32_t lo, hi;
            double duration;
            kiln__insp_range(a, &lo, &hi, &duration);
            printf(": %g fps, %s, frames [%u, %u]%s, duration %g s\n", (double)a->a.framerate,
                   a->a.looping ? "looping" : "not looping", lo, hi, a->has_keys ? "" : " (no keys)", duration);
        }
    }
    kiln__txt_curves(a);
    printf("  mode overrides: %u\n", a->overrides);
    if (a->skeletons) printf("  skeletons: %u (ignored by importers)\n", a->skeletons);
    for (uint32_t t = a->first_track; t != NONE; t = s->tracks[t].next) {
        fputs("  notification track ", stdout);
        kiln__txt_name(s->tracks[t].name);
        printf(": %u key%s\n", s->tracks[t].keys, kiln__txt_plural(s->tracks[t].keys));
    }
}

static void kiln__txt_instances(const kiln__insp_summary *s)
{
    if (!s->instance_count && !s->instances_dropped) return;
    printf("instances: %zu", s->instance_count);
    if (s->instances_dropped) printf(" (%u more dropped)", s->instances_dropped);
    fputc('\n', stdout);
    for (size_t i = 0, e; i < s->instance_count; i = e) {
        e = kiln__insp_instance_run(s, i);
        printf("  %6zu  ", e - i);
        kiln__txt_name(s->instances[i]);
        fputc('\n', stdout);
    }
}

static void kiln__txt_meta_field(const char **sep, const char *label, const char *value, int quoted)
{
    if (!value) return;
    printf("%s%s ", *sep, label);
    if (quoted) kiln__txt_name(value);
    else kiln__cli_put_text(stdout, value, "");
    *sep = ", ";
}

static void kiln__txt_metadata(const kiln__insp_summary *s)
{
    if (s->meta_node == NONE) return;
    const char *sep = " ";
    fputs("metadata:", stdout);
    kiln__txt_meta_field(&sep, "author", s->meta.author, 1);
    kiln__txt_meta_field(&sep, "software", s->meta.software, 1);
    kiln__txt_meta_field(&sep, "up", kiln__insp_up_name(s->meta.up_axis), 0);
    kiln__txt_meta_field(&sep, "scene root", s->meta.scene_root, 1);
    if (sep[0] == ' ') fputs(" (empty)", stdout);
    fputc('\n', stdout);
}

/* "nodes: Root 1, Model 2, ... (N total, M skipped)" */
static void kiln__txt_nodes(const kiln__insp_summary *s)
{
    uint64_t total = 0;
    fputs("nodes:", stdout);
    const char *sep = " ";
    for (size_t k = 0; k <= KILN__INSP_KINDS; k++) {
        if (!s->kind_count[k]) continue;
        printf("%s%s %llu", sep, kiln__insp_kind_name(k), (unsigned long long)s->kind_count[k]);
        sep = ", ";
        total += s->kind_count[k];
    }
    printf(" (%llu total", (unsigned long long)total);
    if (s->opaque) printf(", %u skipped", s->opaque);
    fputs(")\n", stdout);
}

void kiln__insp_print_text(const kiln__insp_summary *s)
{
    kiln__cli_put_text(stdout, s->path, "");
    printf(": %zu bytes, Cast version %u, %u root%s\n", s->file_size, s->version, s->roots, kiln__txt_plural(s->roots));
    kiln__txt_nodes(s);
    kiln__txt_metadata(s);
    for (size_t i = 0; i < s->model_count; i++) kiln__txt_model(s, &s->models[i]);
    for (size_t i = 0; i < s->anim_count; i++) kiln__txt_anim(s, &s->anims[i]);
    kiln__txt_instances(s);
    uint64_t errors = s->by_severity[KILN_SEVERITY_ERROR], warnings = s->by_severity[KILN_SEVERITY_WARNING];
    printf("diagnostics: %llu error%s, %llu warning%s\n", (unsigned long long)errors, kiln__txt_plural(errors),
           (unsigned long long)warnings, kiln__txt_plural(warnings));
}
