/* world_instances: what a game does with a baked world. It opens the world blob, lists the
 * assets it places and how often, and computes the world matrix of every instance:
 *
 *   world_i = T(p_i) · R(r_i) · S(s_i) · M(asset)
 *
 * where M is the asset's Model transform: from the world blob itself when the asset was baked
 * with the world (the reference then names its models, no string matching), else from the
 * asset's own blob given on the command line (as REFERENCE=ASSET.kiln, the reference named by
 * its path as written or resolved), else the identity. Prints the bounds of the instance
 * positions and of the placed asset origins.
 *
 *   kiln bake samples/world.cast -o world.kiln
 *   kiln bake samples/character.cast -o character.kiln
 *   kiln_example_world world.kiln character.cast=character.kiln
 *
 *   kiln bake samples/world.cast samples/character.cast -o level.kiln
 *   kiln_example_world level.kiln
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/blob.h"
#include "kiln/instance.h"

typedef struct bounds {
    float min[3], max[3];
} bounds;

static void bounds_add(bounds *b, const float p[3])
{
    for (int c = 0; c < 3; c++) {
        if (p[c] < b->min[c]) b->min[c] = p[c];
        if (p[c] > b->max[c]) b->max[c] = p[c];
    }
}

static void bounds_print(const char *what, const bounds *b)
{
    printf("%s: min (%g, %g, %g) max (%g, %g, %g)\n", what, b->min[0], b->min[1], b->min[2], b->max[0], b->max[1],
           b->max[2]);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s WORLD.kiln [REFERENCE=ASSET.kiln]...\n", argv[0]);
        return 1;
    }
    kiln_blob_file world;
    kiln_diag err;
    if (kiln_blob_open_file(argv[1], 0, NULL, &world, &err) != KILN_OK) {
        fprintf(stderr, "%s\n", err.message); /* names the file */
        return 2;
    }

    /* One model matrix per reference: the asset's own Model transform (C.9), or none. */
    uint32_t ref_count = kiln_reference_count(world.blob);
    float (*model)[16] = calloc(ref_count ? ref_count : 1, sizeof *model);
    const float **models = calloc(ref_count ? ref_count : 1, sizeof *models);
    int status = model && models ? 0 : 2;
    for (uint32_t r = 0; r < ref_count && status == 0; r++) {
        kiln_reference_info ref;
        if (kiln_reference_get(world.blob, r, &ref) == KILN_OK && ref.model_count &&
            kiln_model_transform(world.blob, ref.first_model, model[r]) == KILN_OK)
            models[r] = model[r]; /* baked with the world: its first model */
    }
    for (int a = 2; a < argc && status == 0; a++) {
        char *eq = strchr(argv[a], '=');
        if (!eq) {
            fprintf(stderr, "%s: expected REFERENCE=ASSET.kiln\n", argv[a]);
            status = 1;
            break;
        }
        *eq = '\0';
        uint32_t r = kiln_reference_find(world.blob, argv[a]);
        kiln_blob_file asset;
        if (r == KILN_BLOB_NONE) {
            fprintf(stderr, "%s: the world places no such file\n", argv[a]);
            status = 2;
        } else if (kiln_blob_open_file(eq + 1, 0, NULL, &asset, &err) != KILN_OK) {
            fprintf(stderr, "%s\n", err.message);
            status = 2;
        } else {
            if (kiln_model_transform(asset.blob, 0, model[r]) == KILN_OK) models[r] = model[r]; /* its first model */
            kiln_blob_close_file(&asset);
        }
    }

    uint32_t count;
    const kiln_blob_instance *instances = kiln_blob_instances(world.blob, &count);
    float *matrices = malloc((count ? (size_t)count : 1) * 16 * sizeof(float));
    if (status == 0 && (!matrices || kiln_instance_world_matrices_all(world.blob, NULL, models, KILN_INSTANCE_4X4,
                                                                      matrices, count) != KILN_OK))
        status = 2;

    if (status == 0) {
        printf("%u instance%s of %u asset%s\n", count, count == 1 ? "" : "s", ref_count, ref_count == 1 ? "" : "s");
        for (uint32_t r = 0; r < ref_count; r++) {
            kiln_reference_info ref;
            kiln_reference_get(world.blob, r, &ref);
            printf("  %s: %u instance%s (%s)%s\n", ref.path, ref.instance_count, ref.instance_count == 1 ? "" : "s",
                   ref.resolved_path, models[r] ? ", with its model transform" : "");
        }
        if (count) {
            bounds pos = {{FLT_MAX, FLT_MAX, FLT_MAX}, {-FLT_MAX, -FLT_MAX, -FLT_MAX}}, origin = pos;
            for (uint32_t i = 0; i < count; i++) {
                bounds_add(&pos, instances[i].position);
                bounds_add(&origin, &matrices[(size_t)i * 16 + 12]); /* column 3: where the asset's origin lands */
            }
            bounds_print("instance positions", &pos);
            bounds_print("asset origins in the world", &origin);
        }
    }
    free(matrices);
    free(models);
    free(model);
    kiln_blob_close_file(&world);
    return status;
}
