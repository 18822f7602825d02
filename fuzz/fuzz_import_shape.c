/* libFuzzer target for the *.Shape importer (baker/import/shape).
 *
 * Imports the input, then reads every array of the scene it produced, checking the importer's
 * own guarantees on the way (faces inside their vertices, skin bones inside the skeleton,
 * parents before children, materials in range, curve frames at most 2^20, NUL-terminated
 * diagnostics) and kiln_source_validate, so AddressSanitizer sees any view that reaches outside
 * its allocation and a scene the bake stages would refuse aborts. A second
 * import with an allocator that fails part-way checks that every out-of-memory path frees what
 * it took. The scene is freed each time; LeakSanitizer reports anything left.
 *
 * Built by fuzz/CMakeLists.txt (clang, -fsanitize=fuzzer) and, with fuzz/replay_main.c, by
 * tests/CMakeLists.txt as fuzz_import_shape_replay over the Shape corpus (good and bad files).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../baker/import/shape/shape.h"
#include "kiln/bake/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t fuzz_sink;

#define FUZZ_CHECK(cond) \
    do { \
        if (!(cond)) abort(); \
    } while (0)

static void check_text(const char *s, size_t cap) { FUZZ_CHECK(memchr(s, '\0', cap) != NULL); }

static void on_diag(void *user, const kiln_diag *d)
{
    (void)user;
    check_text(d->path, sizeof d->path);
    check_text(d->message, sizeof d->message);
    check_text(d->rule, sizeof d->rule);
}

static void read_str(const char *s)
{
    if (s) fuzz_sink += strlen(s);
}

static void read_floats(const float *v, uint64_t n)
{
    if (!n) return;
    FUZZ_CHECK(v != NULL);
    fuzz_sink += (uint64_t)(v[0] != v[0]) + (uint64_t)(v[n - 1] != v[n - 1]);
}

static void walk_model(const kiln_source_model *m)
{
    read_str(m->name);
    uint32_t bones = m->skeleton ? m->skeleton->bone_count : 0;
    for (uint32_t b = 0; b < bones; b++) {
        const kiln_source_bone *bone = &m->skeleton->bones[b];
        FUZZ_CHECK(bone->name != NULL);
        FUZZ_CHECK(bone->parent >= -1 && bone->parent < (int32_t)b);
        read_str(bone->name);
        read_str(bone->loc.path);
    }
    for (uint32_t i = 0; i < m->material_count; i++) {
        const kiln_source_material *mat = &m->materials[i];
        read_str(mat->name);
        read_str(mat->type);
        for (uint32_t s = 0; s < mat->slot_count; s++) {
            read_str(mat->slots[s].name);
            read_str(mat->slots[s].path);
        }
    }
    for (uint32_t i = 0; i < m->mesh_count; i++) {
        const kiln_source_mesh *mesh = &m->meshes[i];
        uint64_t vc = mesh->vertex_count;
        FUZZ_CHECK(vc > 0 && mesh->face_count > 0);
        read_str(mesh->name);
        read_floats(mesh->positions, vc * 3);
        if (mesh->normals) read_floats(mesh->normals, vc * 3);
        FUZZ_CHECK(mesh->uv_layer_count <= 2);
        for (uint32_t l = 0; l < mesh->uv_layer_count; l++) read_floats(mesh->uv[l], vc * 2);
        for (uint64_t k = 0; k < (uint64_t)mesh->face_count * 3; k++) FUZZ_CHECK(mesh->faces[k] < vc);
        FUZZ_CHECK(mesh->max_influence >= 1 && mesh->max_influence <= 4);
        for (uint64_t k = 0; k < vc * mesh->max_influence; k++) FUZZ_CHECK(mesh->weight_bones[k] < bones);
        if (mesh->weight_values) read_floats(mesh->weight_values, vc * mesh->max_influence);
        FUZZ_CHECK(mesh->material == KILN_SOURCE_NONE || mesh->material < m->material_count);
    }
}

static void walk_scene(const kiln_source_scene *sc)
{
    FUZZ_CHECK(sc->model_count == 1);
    walk_model(&sc->models[0]);
    for (uint32_t i = 0; i < sc->instance_count; i++) {
        read_str(sc->instances[i].name);
        read_str(sc->instances[i].path);
    }
    for (uint32_t i = 0; i < sc->animation_count; i++) {
        const kiln_source_animation *a = &sc->animations[i];
        read_str(a->name);
        FUZZ_CHECK(a->framerate > 0.0f);
        for (uint32_t c = 0; c < a->curve_count; c++) {
            const kiln_source_curve *cv = &a->curves[c];
            FUZZ_CHECK(cv->target != NULL && cv->key_count > 0);
            read_str(cv->target);
            for (uint32_t k = 0; k < cv->key_count; k++) {
                FUZZ_CHECK(cv->frames[k] <= (1u << 20));
                FUZZ_CHECK(k == 0 || cv->frames[k] > cv->frames[k - 1]);
            }
            read_floats(cv->values, (uint64_t)cv->key_count * (cv->channel == KILN_SOURCE_CHANNEL_ROTATION ? 4u : 1u));
        }
        for (uint32_t n = 0; n < a->notification_count; n++) {
            read_str(a->notifications[n].name);
            for (uint32_t k = 0; k < a->notifications[n].key_count; k++) fuzz_sink += a->notifications[n].frames[k];
        }
    }
    for (uint32_t i = 0; i < sc->extra_count; i++) {
        FUZZ_CHECK(sc->extras[i].kind != NULL);
        read_str(sc->extras[i].name);
        read_str(sc->extras[i].detail);
        read_str(sc->extras[i].loc.path);
    }
}

/* An allocator that fails from the Nth call on. */
typedef struct failing { uint32_t left; } failing;

static void *failing_realloc(void *user, void *ptr, size_t size)
{
    failing *f = user;
    if (!ptr) {
        if (!f->left) return NULL;
        f->left--;
    }
    return realloc(ptr, size);
}

static void failing_free(void *user, void *ptr)
{
    (void)user;
    free(ptr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kiln_import_options opt;
    memset(&opt, 0, sizeof opt);
    opt.diag.fn = on_diag;
    kiln_diag err;
    kiln_source_scene scene;

    fuzz_sink += (uint64_t)kiln__detect_shape(data, size);
    kiln_source_scene_init(&scene, NULL);
    kiln_result r = kiln__import_shape(data, size, "fuzz/input.Shape", &opt, &scene, &err);
    if (r == KILN_OK) {
        walk_scene(&scene);
        FUZZ_CHECK(kiln_source_validate(&scene, &err) == KILN_OK); /* the source layer's invariants */
    } else
        on_diag(NULL, &err);
    kiln_source_scene_free(&scene);

    failing f = {(uint32_t)(size > 0 ? data[size / 2] % 8u : 0u)};
    kiln_allocator a = {failing_realloc, failing_free, &f};
    opt.allocator = &a;
    kiln_source_scene_init(&scene, &a);
    r = kiln__import_shape(data, size, "fuzz/input.Shape", &opt, &scene, &err);
    if (r == KILN_OK) walk_scene(&scene);
    kiln_source_scene_free(&scene);
    return 0;
}
