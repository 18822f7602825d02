/* libFuzzer target: the Unigine .mesh/.anim importer on arbitrary bytes.
 *
 * Imports the input into a source scene (through a diagnostic sink that checks every message
 * is NUL-terminated and names a rule), then walks everything the importer handed out: every
 * face index inside its mesh, every per-vertex array and skin slot readable, every curve's keys
 * and every name a terminated string. Any read outside what was allocated shows up under
 * AddressSanitizer or valgrind; a broken invariant aborts explicitly. On failure the error
 * must carry a code, a rule and a message. The scene is freed every time (LeakSanitizer).
 *
 * The importer is reached through the public importer table (kiln_importer_find), so the
 * target builds with the public headers only.
 *
 * Seeds: the Unigine corpus (good files and bad/), see fuzz/run.sh and tests/CMakeLists.txt.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/bake/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t fuzz_sink;
static volatile double fuzz_sink_f; /* float reads, summed (no conversion to integers) */

#define FUZZ_CHECK(cond) \
    do { \
        if (!(cond)) abort(); \
    } while (0)

static void on_diag(void *user, const kiln_diag *d)
{
    (void)user;
    FUZZ_CHECK(memchr(d->path, '\0', sizeof d->path) && memchr(d->message, '\0', sizeof d->message));
    FUZZ_CHECK(d->rule[0] == 'V' && d->message[0]);
}

static void read_str(const char *s)
{
    if (s) fuzz_sink += strlen(s);
}

static void walk_model(const kiln_source_model *m)
{
    uint32_t bones = m->skeleton ? m->skeleton->bone_count : 0;
    for (uint32_t b = 0; b < bones; b++) {
        const kiln_source_bone *bn = &m->skeleton->bones[b];
        read_str(bn->name);
        FUZZ_CHECK(bn->parent >= -1 && bn->parent < (int32_t)bones);
    }
    for (uint32_t i = 0; i < m->mesh_count; i++) {
        const kiln_source_mesh *me = &m->meshes[i];
        read_str(me->name);
        read_str(me->loc.path);
        FUZZ_CHECK(me->material < m->material_count);
        for (uint64_t k = 0; k < (uint64_t)me->face_count * 3u; k++) FUZZ_CHECK(me->faces[k] < me->vertex_count);
        for (uint32_t v = 0; v < me->vertex_count; v++) {
            fuzz_sink_f += me->positions[v * 3u + 2u];
            if (me->normals) fuzz_sink_f += me->normals[v * 3u + 2u] + me->tangent_signs[v];
            for (uint32_t l = 0; l < me->uv_layer_count; l++)
                if (me->uv[l]) fuzz_sink_f += me->uv[l][v * 2u + 1u];
            if (me->color_layer_count) fuzz_sink += me->color[0].rgba8[v];
            for (uint32_t s = 0; s < me->max_influence; s++) {
                FUZZ_CHECK(me->weight_bones[(uint64_t)v * me->max_influence + s] < (bones ? bones : 1));
                fuzz_sink_f += me->weight_values[(uint64_t)v * me->max_influence + s];
            }
        }
    }
    for (uint32_t i = 0; i < m->material_count; i++) read_str(m->materials[i].name);
    for (uint32_t i = 0; i < m->blend_shape_count; i++) {
        const kiln_source_blend_shape *bs = &m->blend_shapes[i];
        FUZZ_CHECK(bs->mesh < m->mesh_count);
        read_str(bs->name);
        for (uint32_t p = 0; p < bs->pair_count; p++) {
            FUZZ_CHECK(bs->indices[p] < m->meshes[bs->mesh].vertex_count);
            fuzz_sink_f += bs->targets[p * 3u + 2u];
        }
    }
}

static void walk_scene(const kiln_source_scene *sc)
{
    for (uint32_t i = 0; i < sc->model_count; i++) walk_model(&sc->models[i]);
    for (uint32_t a = 0; a < sc->animation_count; a++) {
        const kiln_source_animation *an = &sc->animations[a];
        read_str(an->name);
        FUZZ_CHECK(an->framerate > 0.0f);
        for (uint32_t c = 0; c < an->curve_count; c++) {
            const kiln_source_curve *cv = &an->curves[c];
            read_str(cv->target);
            unsigned comps = cv->channel == KILN_SOURCE_CHANNEL_ROTATION ? 4u : 1u;
            FUZZ_CHECK(cv->key_count >= 2);
            for (uint32_t k = 0; k < cv->key_count; k++) {
                FUZZ_CHECK(k == 0 || cv->frames[k] > cv->frames[k - 1]);
                fuzz_sink_f += cv->values[(uint64_t)k * comps + comps - 1u];
            }
        }
    }
    for (uint32_t i = 0; i < sc->extra_count; i++) {
        read_str(sc->extras[i].kind);
        read_str(sc->extras[i].name);
        read_str(sc->extras[i].detail);
        read_str(sc->extras[i].loc.path);
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
    memset(&err, 0, sizeof err);
    /* Through the importer table (public API): both entries share one reader, which decides
     * by the identifier; the anim entry is asked too so its detection runs. */
    const kiln_importer *mesh = kiln_importer_find("unigine-mesh"), *anim = kiln_importer_find("unigine-anim");
    FUZZ_CHECK(mesh && anim);
    fuzz_sink += (uint64_t)mesh->detect(data, size) + (uint64_t)anim->detect(data, size);
    kiln_result r = mesh->import(data, size, "fuzz", &opt, &scene, &err);
    if (r == KILN_OK) {
        walk_scene(&scene);
    } else {
        FUZZ_CHECK(err.code == r && err.severity == KILN_SEVERITY_ERROR && err.message[0]);
        FUZZ_CHECK(memchr(err.message, '\0', sizeof err.message) && memchr(err.path, '\0', sizeof err.path));
        FUZZ_CHECK(r == KILN_ERR_OUT_OF_MEMORY || err.rule[0] == 'V');
    }
    kiln_source_scene_free(&scene);
    return 0;
}
