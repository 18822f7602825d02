/* libFuzzer target: the Cast reader and every typed accessor on arbitrary bytes.
 *
 * Parses the input, then visits every node: its properties (first and last element of each
 * payload, name lookup), its path, hash lookups in its scope, and the kiln_cast_get_* accessor
 * that matches its id, including every array view the accessor returns. Anything the reader
 * hands out must be readable without going outside the input, so AddressSanitizer reports
 * any bounds mistake. Contract violations that would not crash (a path that is not
 * NUL-terminated, a hash lookup returning a node with another hash) abort explicitly.
 *
 * Built by fuzz/CMakeLists.txt (clang, -fsanitize=fuzzer) and, with a small main, by
 * tests/CMakeLists.txt as fuzz_cast_parse_replay to rerun the seeds in the normal test suite.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/bake/cast.h"
#include "kiln/bake/cast_scene.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t fuzz_sink; /* keeps the reads from being optimised away */

#define FUZZ_CHECK(cond) \
    do { \
        if (!(cond)) abort(); \
    } while (0)

static void check_text(const char *s, size_t cap)
{
    FUZZ_CHECK(memchr(s, '\0', cap) != NULL);
}

static void check_diag(const kiln_diag *d)
{
    check_text(d->path, sizeof d->path);
    check_text(d->message, sizeof d->message);
    FUZZ_CHECK(kiln_result_str(d->code) != NULL);
    FUZZ_CHECK(kiln_result_name(d->code) != NULL);
}

static void on_diag(void *user, const kiln_diag *d)
{
    (void)user;
    check_diag(d);
}

static void read_str(const char *s)
{
    if (s) fuzz_sink += strlen(s);
}

/* First and last element of an array view, one at a time and in bulk. */
static void read_array(const kiln_cast_array *a)
{
    if (!a->count) return;
    float f[4 * 2];
    uint32_t u[4 * 2];
    uint32_t last = a->count - 1;
    uint32_t n = a->count < 2 ? a->count : 2;
    FUZZ_CHECK(a->data != NULL && a->comps >= 1 && a->comps <= 4);
    int integer = a->type == KILN_CAST_TYPE_BYTE || a->type == KILN_CAST_TYPE_SHORT ||
                  a->type == KILN_CAST_TYPE_INT || a->type == KILN_CAST_TYPE_LONG;
    if (integer) {
        fuzz_sink += kiln_cast_array_u32(a, 0) + kiln_cast_array_u32(a, last);
        kiln_cast_array_read_u32(a, a->count - n, n, u);
        fuzz_sink += u[0];
    }
    f[0] = kiln_cast_array_f32(a, 0) + kiln_cast_array_f32(a, last);
    fuzz_sink += (uint64_t)(f[0] != f[0]);
    kiln_cast_array_read_f32(a, a->count - n, n, f);
    fuzz_sink += (uint64_t)(f[0] != f[0]);
}

/* Every property of a node: first and last element, and the name lookup. */
static void read_props(const kiln_cast_doc *doc, uint32_t n, const kiln_cast_node *node)
{
    for (uint32_t k = 0; k < node->prop_count; k++) {
        const kiln_cast_prop *p = kiln_cast_prop_at(doc, n, k);
        FUZZ_CHECK(p != NULL && p->node == n);
        read_str(kiln_cast_type_name(p->type));

        char name[256];
        size_t len = p->name_len < sizeof name - 1 ? p->name_len : sizeof name - 1;
        memcpy(name, p->name, len);
        name[len] = '\0';
        uint32_t dups = 0;
        const kiln_cast_prop *found = kiln_cast_find_prop(doc, n, name, &dups);
        if (len == p->name_len && memchr(name, '\0', len) == NULL) FUZZ_CHECK(found != NULL && dups >= 1);

        if (p->type == KILN_CAST_TYPE_STRING) {
            read_str(kiln_cast_prop_str(p));
            continue;
        }
        if (!p->count || !kiln_cast_type_size(p->type)) continue;
        uint32_t last = p->count - 1;
        float v[4];
        switch (p->type) {
        case KILN_CAST_TYPE_BYTE: case KILN_CAST_TYPE_SHORT: case KILN_CAST_TYPE_INT: case KILN_CAST_TYPE_LONG:
            fuzz_sink += kiln_cast_prop_u64(p, 0) + kiln_cast_prop_u64(p, last);
            fuzz_sink += (uint64_t)(kiln_cast_prop_f64(p, last) > 0.0);
            break;
        case KILN_CAST_TYPE_FLOAT: case KILN_CAST_TYPE_DOUBLE:
            fuzz_sink += (uint64_t)(kiln_cast_prop_f64(p, 0) + kiln_cast_prop_f64(p, last) > 0.0);
            kiln_cast_prop_vec(p, last, 1, v);
            break;
        case KILN_CAST_TYPE_VEC2: kiln_cast_prop_vec(p, last, 2, v); kiln_cast_prop_vec(p, 0, 2, v); break;
        case KILN_CAST_TYPE_VEC3: kiln_cast_prop_vec(p, last, 3, v); kiln_cast_prop_vec(p, 0, 3, v); break;
        case KILN_CAST_TYPE_VEC4: kiln_cast_prop_vec(p, last, 4, v); kiln_cast_prop_vec(p, 0, 4, v); break;
        default: break;
        }
    }
    FUZZ_CHECK(kiln_cast_prop_at(doc, n, node->prop_count) == NULL);
    (void)kiln_cast_find_prop(doc, n, "n", NULL);
}

static void read_skeleton(const kiln_cast_doc *doc, uint32_t n, const kiln_cast_skeleton *skel, const kiln_diag_sink *sink)
{
    if (skel->bone_count) {
        (void)kiln_cast_skeleton_bone(doc, n, 0);
        (void)kiln_cast_skeleton_bone(doc, n, skel->bone_count - 1);
    }
    (void)kiln_cast_skeleton_bone(doc, n, skel->bone_count);
    int32_t small[4];
    (void)kiln_cast_skeleton_parents(doc, n, small, 4, sink);
    if (skel->bone_count <= (1u << 20)) {
        int32_t *parents = malloc(((size_t)skel->bone_count + 1) * sizeof *parents);
        if (!parents) return;
        if (kiln_cast_skeleton_parents(doc, n, parents, skel->bone_count, sink) == KILN_OK)
            for (uint32_t b = 0; b < skel->bone_count; b++) FUZZ_CHECK(parents[b] >= -1 && parents[b] < (int32_t)skel->bone_count);
        free(parents);
    }
}

static void read_node(const kiln_cast_doc *doc, uint32_t n, const kiln_cast_node *node, const kiln_diag_sink *sink)
{
    union {
        kiln_cast_model model; kiln_cast_mesh mesh; kiln_cast_hair hair; kiln_cast_blend_shape shape;
        kiln_cast_skeleton skel; kiln_cast_bone bone; kiln_cast_ik_handle ik; kiln_cast_constraint cnst;
        kiln_cast_animation anim; kiln_cast_curve curve; kiln_cast_mode_override cmov;
        kiln_cast_notification note; kiln_cast_material mat; kiln_cast_material_slot slot;
        kiln_cast_file file; kiln_cast_color color; kiln_cast_instance inst; kiln_cast_metadata meta;
    } u;
    switch (node->id) {
    case KILN_CAST_ID_MODEL:
        if (kiln_cast_get_model(doc, n, &u.model, sink) == KILN_OK) read_str(u.model.name);
        break;
    case KILN_CAST_ID_MESH:
        if (kiln_cast_get_mesh(doc, n, &u.mesh, sink) == KILN_OK) {
            read_str(u.mesh.name);
            read_array(&u.mesh.positions);
            read_array(&u.mesh.normals);
            read_array(&u.mesh.tangents);
            FUZZ_CHECK(u.mesh.uv_layer_count <= KILN_CAST_MAX_LAYERS && u.mesh.color_layer_count <= KILN_CAST_MAX_LAYERS);
            for (uint32_t i = 0; i < u.mesh.uv_layer_count; i++) read_array(&u.mesh.uv[i]);
            for (uint32_t i = 0; i < u.mesh.color_layer_count; i++) read_array(&u.mesh.color[i]);
            read_array(&u.mesh.weight_bones);
            read_array(&u.mesh.weight_values);
            read_array(&u.mesh.faces);
            FUZZ_CHECK((uint64_t)u.mesh.face_count * 3 <= u.mesh.faces.count);
        }
        break;
    case KILN_CAST_ID_HAIR:
        if (kiln_cast_get_hair(doc, n, &u.hair, sink) == KILN_OK) {
            read_str(u.hair.name);
            read_array(&u.hair.segments);
            read_array(&u.hair.particles);
        }
        break;
    case KILN_CAST_ID_BLENDSHAPE:
        if (kiln_cast_get_blend_shape(doc, n, &u.shape, sink) == KILN_OK) {
            read_str(u.shape.name);
            read_array(&u.shape.indices);
            read_array(&u.shape.targets);
        }
        break;
    case KILN_CAST_ID_SKELETON:
        if (kiln_cast_get_skeleton(doc, n, &u.skel, sink) == KILN_OK) read_skeleton(doc, n, &u.skel, sink);
        break;
    case KILN_CAST_ID_BONE:
        if (kiln_cast_get_bone(doc, n, &u.bone, sink) == KILN_OK) read_str(u.bone.name);
        break;
    case KILN_CAST_ID_IKHANDLE:
        if (kiln_cast_get_ik_handle(doc, n, &u.ik, sink) == KILN_OK) read_str(u.ik.name);
        break;
    case KILN_CAST_ID_CONSTRAINT:
        if (kiln_cast_get_constraint(doc, n, &u.cnst, sink) == KILN_OK) read_str(u.cnst.name);
        break;
    case KILN_CAST_ID_ANIMATION:
        if (kiln_cast_get_animation(doc, n, &u.anim, sink) == KILN_OK) read_str(u.anim.name);
        break;
    case KILN_CAST_ID_CURVE:
        if (kiln_cast_get_curve(doc, n, &u.curve, sink) == KILN_OK) {
            read_str(u.curve.node_name);
            read_str(kiln_cast_curve_prop_name(u.curve.property));
            read_str(kiln_cast_mode_name(u.curve.mode));
            read_array(&u.curve.key_frames);
            read_array(&u.curve.key_values);
        }
        break;
    case KILN_CAST_ID_CURVE_MODE_OVERRIDE:
        if (kiln_cast_get_mode_override(doc, n, &u.cmov, sink) == KILN_OK) read_str(u.cmov.node_name);
        break;
    case KILN_CAST_ID_NOTIFICATION_TRACK:
        if (kiln_cast_get_notification(doc, n, &u.note, sink) == KILN_OK) {
            read_str(u.note.name);
            read_array(&u.note.key_frames);
        }
        break;
    case KILN_CAST_ID_MATERIAL:
        if (kiln_cast_get_material(doc, n, &u.mat, sink) == KILN_OK) {
            read_str(u.mat.name);
            read_str(u.mat.type);
            uint32_t slots = u.mat.slot_count;
            for (uint32_t k = 0; k < slots; k++)
                if (kiln_cast_get_material_slot(doc, n, k, &u.slot, sink) == KILN_OK && u.slot.name_len)
                    fuzz_sink += (unsigned char)u.slot.name[0] + (unsigned char)u.slot.name[u.slot.name_len - 1];
            (void)kiln_cast_get_material_slot(doc, n, slots, &u.slot, sink);
        }
        break;
    case KILN_CAST_ID_FILE:
        if (kiln_cast_get_file(doc, n, &u.file, sink) == KILN_OK) read_str(u.file.path);
        break;
    case KILN_CAST_ID_COLOR:
        if (kiln_cast_get_color(doc, n, &u.color, sink) == KILN_OK) read_str(u.color.name);
        break;
    case KILN_CAST_ID_INSTANCE:
        if (kiln_cast_get_instance(doc, n, &u.inst, sink) == KILN_OK) {
            read_str(u.inst.name);
            read_str(u.inst.path);
        }
        break;
    case KILN_CAST_ID_METADATA:
        if (kiln_cast_get_metadata(doc, n, &u.meta, sink) == KILN_OK) {
            read_str(u.meta.author);
            read_str(u.meta.software);
            read_str(u.meta.scene_root);
        }
        break;
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kiln_diag err;
    kiln_cast_doc *doc = NULL;
    kiln_cast_parse_options opt;
    memset(&opt, 0, sizeof opt);
    opt.diag.fn = on_diag;

    kiln_result r = kiln_cast_parse(data, size, &opt, &doc, &err);
    if (r != KILN_OK) {
        FUZZ_CHECK(doc == NULL);
        check_diag(&err);
        return 0;
    }
    FUZZ_CHECK(doc != NULL);

    kiln_diag_sink sink = {on_diag, NULL};
    uint32_t count = kiln_cast_node_count(doc);
    for (uint32_t k = 0; k < kiln_cast_root_count(doc); k++) FUZZ_CHECK(kiln_cast_root(doc, k) < count);
    (void)kiln_cast_find_metadata(doc);

    for (uint32_t n = 0; n < count; n++) {
        const kiln_cast_node *node = kiln_cast_node_at(doc, n);
        FUZZ_CHECK(node != NULL);
        FUZZ_CHECK(node->parent == KILN_CAST_NONE || node->parent < n); /* depth-first pre-order */

        char path[256], tiny[8];
        kiln_cast_node_path(doc, n, path, sizeof path);
        check_text(path, sizeof path);
        kiln_cast_node_path(doc, n, tiny, sizeof tiny);
        check_text(tiny, sizeof tiny);
        read_str(kiln_cast_id_name(node->id));

        if (node->parent != KILN_CAST_NONE) {
            uint32_t hit = kiln_cast_find_hash(doc, node->parent, node->hash);
            if (hit != KILN_CAST_NONE) FUZZ_CHECK(hit < count && kiln_cast_node_at(doc, hit)->hash == node->hash);
            fuzz_sink += kiln_cast_hash_count(doc, node->parent, node->hash);
        }
        fuzz_sink += kiln_cast_child_count(doc, n, 0) + kiln_cast_child(doc, n, 0, 0);

        read_props(doc, n, node);
        if (node->flags & KILN_CAST_NODE_KNOWN) read_node(doc, n, node, &sink);
    }
    FUZZ_CHECK(kiln_cast_node_at(doc, count) == NULL);

    kiln_cast_free(doc);
    return 0;
}
