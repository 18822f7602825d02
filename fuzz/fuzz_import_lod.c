/* libFuzzer target: the LODka3D *.lod importer on arbitrary bytes.
 *
 * Imports the input, validates the scene (kiln_source_validate must accept whatever the importer
 * accepted), then walks everything the scene hands out: every name and path, every
 * mesh array over its full length (faces index their vertices, skin bones index the skeleton),
 * bone parents (earlier bones only), curve keys and values, material slots and extras. Reads
 * out of bounds are ASan's to find; contract violations that would not crash abort here.
 * A reject must fill err with a rule and a message; the scene is freed either way (leaks are
 * LeakSanitizer's and valgrind's to find).
 *
 * Seeds: shared/corpus/lod and shared/corpus/lod/bad (fuzz/run.sh and the replay test in
 * tests/CMakeLists.txt pass them).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../baker/import/lod/lod_import.h"
#include "kiln/bake/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t fuzz_sink;

#define FUZZ_CHECK(cond) \
    do { \
        if (!(cond)) abort(); \
    } while (0)

static void read_str(const char *s)
{
    if (s) fuzz_sink += strlen(s);
}

static void on_diag(void *user, const kiln_diag *d)
{
    (void)user;
    FUZZ_CHECK(memchr(d->message, 0, sizeof d->message) && memchr(d->path, 0, sizeof d->path));
    FUZZ_CHECK(d->rule[0] == 'W');
}

static void read_floats(const float *v, uint64_t n)
{
    if (!n) return;
    FUZZ_CHECK(v != NULL);
    fuzz_sink += (uint64_t)(v[0] != v[0]) + (uint64_t)(v[n - 1] != v[n - 1]);
}

static void check_mesh(const kiln_source_mesh *m, uint32_t bones)
{
    read_str(m->name);
    read_str(m->loc.path);
    for (uint64_t i = 0; i < (uint64_t)m->vertex_count * 3; i++) FUZZ_CHECK(isfinite(m->positions[i]));
    if (m->normals) read_floats(m->normals, (uint64_t)m->vertex_count * 3);
    FUZZ_CHECK(m->uv_layer_count <= 2);
    for (uint32_t l = 0; l < m->uv_layer_count; l++)
        if (m->uv[l]) read_floats(m->uv[l], (uint64_t)m->vertex_count * 2);
    for (uint64_t i = 0; i < (uint64_t)m->face_count * 3; i++) FUZZ_CHECK(m->faces[i] < m->vertex_count);
    FUZZ_CHECK(m->max_influence <= 8);
    for (uint64_t i = 0; i < (uint64_t)m->vertex_count * m->max_influence; i++) {
        FUZZ_CHECK(m->weight_bones[i] < bones);
        FUZZ_CHECK(m->weight_values[i] >= 0.0f && m->weight_values[i] <= 1.0f + 1e-5f);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kiln_source_scene scene;
    kiln_source_scene_init(&scene, NULL);
    kiln_import_options opt;
    memset(&opt, 0, sizeof opt);
    opt.diag.fn = on_diag;
    kiln_diag err;
    kiln_result r = kiln__import_lod(data, size, "fuzz.lod", &opt, &scene, &err);
    FUZZ_CHECK((kiln__detect_lod(data, size) != 0) == (size >= 8 && memcmp(data, "LODka3D1", 8) == 0));
    if (r != KILN_OK) {
        FUZZ_CHECK(memchr(err.message, 0, sizeof err.message) && err.message[0]);
        FUZZ_CHECK(err.severity == KILN_SEVERITY_ERROR);
        FUZZ_CHECK(r == KILN_ERR_OUT_OF_MEMORY || err.rule[0] == 'R');
        kiln_source_scene_free(&scene);
        return 0;
    }
    FUZZ_CHECK(scene.model_count == 1);
    /* What the importer hands on must meet every invariant the bake relies on. */
    FUZZ_CHECK(kiln_source_validate(&scene, &err) == KILN_OK);
    const kiln_source_model *model = &scene.models[0];
    const kiln_source_skeleton *sk = model->skeleton;
    uint32_t bones = sk ? sk->bone_count : 0;
    for (uint32_t b = 0; b < bones; b++) {
        FUZZ_CHECK(sk->bones[b].parent >= -1 && sk->bones[b].parent < (int32_t)b);
        read_str(sk->bones[b].name);
        FUZZ_CHECK(isfinite(sk->bones[b].local_position[0]) && isfinite(sk->bones[b].local_rotation[3]));
    }
    for (uint32_t i = 0; i < model->mesh_count; i++) {
        check_mesh(&model->meshes[i], bones);
        FUZZ_CHECK(model->meshes[i].material == KILN_SOURCE_NONE || model->meshes[i].material < model->material_count);
    }
    for (uint32_t i = 0; i < model->material_count; i++) {
        const kiln_source_material *m = &model->materials[i];
        read_str(m->name);
        for (uint32_t s = 0; s < m->slot_count; s++) {
            read_str(m->slots[s].name);
            if (m->slots[s].kind == KILN_SOURCE_SLOT_FILE) read_str(m->slots[s].path);
        }
    }
    for (uint32_t a = 0; a < scene.animation_count; a++) {
        const kiln_source_animation *anim = &scene.animations[a];
        read_str(anim->name);
        FUZZ_CHECK(anim->framerate > 0.0f && isfinite(anim->framerate));
        for (uint32_t c = 0; c < anim->curve_count; c++) {
            const kiln_source_curve *cv = &anim->curves[c];
            read_str(cv->target);
            FUZZ_CHECK(cv->key_count > 0);
            uint32_t comps = cv->channel == KILN_SOURCE_CHANNEL_ROTATION ? 4 : 1;
            for (uint64_t k = 0; k < (uint64_t)cv->key_count * comps; k++) FUZZ_CHECK(isfinite(cv->values[k]));
            fuzz_sink += cv->frames[cv->key_count - 1];
        }
    }
    for (uint32_t e = 0; e < scene.extra_count; e++) {
        read_str(scene.extras[e].kind);
        read_str(scene.extras[e].name);
        read_str(scene.extras[e].detail);
        read_str(scene.extras[e].loc.path);
    }
    kiln_source_scene_free(&scene);
    return 0;
}
