/* character: what a game does each frame with a skinned character, through kiln/character.h.
 * Four instances of the sample character walk at their own pace and phase, each blending two
 * phases of the walk (a limp) and placed by its own world matrix; each frame evaluates them
 * in one call apiece (sample, blend, rig, skinning matrices, blend shapes, skinned vertices)
 * and collects the footsteps they take.
 *
 *   kiln bake samples/character.cast samples/character_walk.cast -o walker.kiln
 *   kiln_example_character walker.kiln
 */
#include <stdio.h>
#include <stdlib.h>

#include "kiln.h"

#define WALKERS 4
#define FRAMES  120 /* two seconds at 60 Hz */

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CHARACTER.kiln\n", argv[0]);
        return 1;
    }
    kiln_blob_file file;
    kiln_diag err;
    if (kiln_blob_open_file(argv[1], 0, NULL, &file, &err) != KILN_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], err.message);
        return 2;
    }
    uint32_t walk = kiln_blob_find(file.blob, KILN_SECTION_ANIMATIONS, "walk");
    if (walk == KILN_BLOB_NONE) walk = 0;

    /* once: one block per character, sized by the library */
    kiln_character_desc desc = {0};
    desc.blob = file.blob;
    desc.model = 0;
    desc.clips = &walk;
    desc.clip_count = 1;
    desc.max_layers = 2;
    desc.flags = KILN_CHARACTER_VERTICES;
    size_t size = kiln_character_size(&desc);
    kiln_character *walkers[WALKERS];
    void *memory[WALKERS];
    for (int i = 0; i < WALKERS; i++) {
        memory[i] = aligned_alloc(KILN_CHARACTER_ALIGN, size); /* size is a multiple of the alignment */
        if (!memory[i] || kiln_character_init(&desc, memory[i], size, &walkers[i]) != KILN_OK) {
            fprintf(stderr, "character: %s\n", kiln_error_detail()->message);
            return 2;
        }
    }

    /* every frame */
    unsigned footsteps = 0;
    kiln_character_event events[8];
    for (int frame = 0; frame <= FRAMES; frame++) {
        double t = frame / 60.0;
        for (int i = 0; i < WALKERS; i++) {
            double pace = 1.0 + 0.1 * i, phase = 0.25 * i;
            kiln_character_layer layers[2] = {
                {.clip = 0, .time_s = t * pace + phase, .weight = 0.8f},
                {.clip = 0, .time_s = t * pace + phase + 0.05, .weight = 0.2f}, /* a little behind: a limp */
            };
            float world[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 2.0f * (float)i, 0, 0, 1};
            kiln_character_events ev = {events, 8, 0};
            if (kiln_character_evaluate(walkers[i], layers, 2, world, &ev) != KILN_OK) {
                fprintf(stderr, "frame %d: %s: %s\n", frame, kiln_error_detail()->path, kiln_error_detail()->message);
                return 2;
            }
            for (uint32_t e = 0; e < ev.count && e < 8; e++)
                if (events[e].layer == 0) footsteps++; /* the second layer walks the same steps */
        }
    }

    /* what the renderer would draw: the skinned vertices of every mesh */
    for (int i = 0; i < WALKERS; i++) {
        kiln_character_mesh mesh;
        for (uint32_t m = 0; kiln_character_mesh_get(walkers[i], m, &mesh) == KILN_OK; m++) {
            float lo[3] = {1e30f, 1e30f, 1e30f}, hi[3] = {-1e30f, -1e30f, -1e30f};
            for (uint32_t v = 0; v < mesh.vertex_count; v++)
                for (int c = 0; c < 3; c++) {
                    float x = mesh.positions[3 * v + c];
                    lo[c] = x < lo[c] ? x : lo[c];
                    hi[c] = x > hi[c] ? x : hi[c];
                }
            printf("walker %d mesh '%s': %u vertices, %s, x %.3f..%.3f y %.3f..%.3f z %.3f..%.3f\n", i,
                   kiln_blob_string(file.blob, kiln_blob_meshes(file.blob, NULL)[mesh.mesh].name), mesh.vertex_count,
                   mesh.visible ? "visible" : "hidden", lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]);
        }
    }
    printf("%d walkers, %d frames, %u footsteps, %zu bytes per character\n", WALKERS, FRAMES + 1, footsteps, size);
    for (int i = 0; i < WALKERS; i++) free(memory[i]);
    kiln_blob_close_file(&file);
    return 0;
}
