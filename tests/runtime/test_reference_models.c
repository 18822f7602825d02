/* A world baked together with the files it places: each reference resolves to the models of
 * the input it names (blob format 1.3, REFERENCE_MODELS), through kiln_reference_get, and the
 * loader rejects an IRMD section that points outside MODELS. Built from the bundled samples:
 * world.cast places character.cast four times (Metadata sr "."). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "anim_fixture.h"
#include "kiln/bake/bake.h"
#include "kiln/blob.h"
#include "kiln/instance.h"
#include "test_util.h"

typedef struct level {
    file_bytes       world, character;
    kiln_bake_result res;
    const kiln_blob *blob;
} level;

static void level_read(level *l)
{
    char path[2048];
    memset(l, 0, sizeof *l);
    snprintf(path, sizeof path, "%s/samples/world.cast", KILN_SOURCE_DIR);
    cr_assert(read_file(path, &l->world), "cannot read %s", path);
    snprintf(path, sizeof path, "%s/samples/character.cast", KILN_SOURCE_DIR);
    cr_assert(read_file(path, &l->character), "cannot read %s", path);
}

/* Bakes `count` inputs: paths[i] with the world's bytes when world[i], else the character's. */
static kiln_result level_bake(level *l, const char *const *paths, const int *world, uint32_t count)
{
    kiln_bake_input in[4];
    for (uint32_t i = 0; i < count; i++) {
        const file_bytes *f = world[i] ? &l->world : &l->character;
        in[i].path = paths[i];
        in[i].data = f->data;
        in[i].size = f->size;
        in[i].format = NULL;
    }
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    kiln_diag err;
    kiln_result r = kiln_bake(in, count, &o, &l->res, &err);
    cr_assert_eq(r, KILN_OK, "%s", err.message);
    return kiln_blob_load(l->res.blob, l->res.size, 0, &l->blob, &err);
}

static void level_free(level *l)
{
    kiln_bake_result_free(&l->res);
    file_bytes_free(&l->world);
    file_bytes_free(&l->character);
}

Test(reference_models, a_reference_names_the_models_of_the_input_baked_with_it)
{
    level l;
    level_read(&l);
    /* the character's bytes twice: only the copy at the path the world names is its model */
    const char *paths[3] = {"props/other.cast", "levels/world.cast", "levels/character.cast"};
    const int world[3] = {0, 1, 0};
    cr_assert_eq(level_bake(&l, paths, world, 3), KILN_OK);
    uint32_t nm;
    const kiln_blob_model *models = kiln_blob_models(l.blob, &nm);
    cr_assert_eq(nm, 2);
    kiln_reference_info info;
    cr_assert_eq(kiln_reference_get(l.blob, kiln_reference_find(l.blob, "character.cast"), &info), KILN_OK);
    cr_expect_eq(info.first_model, 1);
    cr_expect_eq(info.model_count, 1);
    cr_expect_eq(models[info.first_model].source, 2, "the model of input 2, levels/character.cast");
    float m[16];
    cr_expect_eq(kiln_model_transform(l.blob, info.first_model, m), KILN_OK);
    cr_expect_eq(kiln_blob_header_of(l.blob)->version_minor, 3);
    cr_expect_not_null(kiln_blob_find_section(l.blob, KILN_SECTION_REFERENCE_MODELS));
    level_free(&l);
}

Test(reference_models, absolute_and_relative_spellings_of_one_file_match)
{
    level l;
    level_read(&l);
    char cwd[1024], abs_world[1200];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    snprintf(abs_world, sizeof abs_world, "%s/levels/./world.cast", cwd);
    const char *paths[2] = {"levels/character.cast", abs_world};
    const int world[2] = {0, 1};
    cr_assert_eq(level_bake(&l, paths, world, 2), KILN_OK);
    kiln_reference_info info;
    cr_assert_eq(kiln_reference_get(l.blob, 0, &info), KILN_OK);
    cr_expect_eq(info.first_model, 0);
    cr_expect_eq(info.model_count, 1);
    level_free(&l);
}

Test(reference_models, without_the_referenced_file_there_is_no_section_and_no_model)
{
    level l;
    level_read(&l);
    const char *paths[2] = {"levels/world.cast", "elsewhere/character.cast"};
    const int world[2] = {1, 0};
    cr_assert_eq(level_bake(&l, paths, world, 2), KILN_OK);
    kiln_reference_info info;
    cr_assert_eq(kiln_reference_get(l.blob, 0, &info), KILN_OK);
    cr_expect_eq(info.first_model, KILN_BLOB_NONE);
    cr_expect_eq(info.model_count, 0);
    cr_expect_null(kiln_blob_find_section(l.blob, KILN_SECTION_REFERENCE_MODELS));
    cr_expect_eq(kiln_blob_header_of(l.blob)->version_minor, 2, "the lowest minor that describes the blob");
    level_free(&l);
}

/* Rewrites reference 0's record, fixes the CRC and loads: the loader's verdict. */
static kiln_result load_patched(level *l, uint32_t first, uint32_t count, kiln_diag *err)
{
    const kiln_blob_section *s = kiln_blob_find_section(l->blob, KILN_SECTION_REFERENCE_MODELS);
    cr_assert_not_null(s);
    unsigned char *mem = l->res.blob;
    kiln_blob_reference_model rec = {first, count}, old;
    memcpy(&old, mem + s->offset, sizeof old);
    memcpy(mem + s->offset, &rec, sizeof rec);
    af_fix_crc(mem, l->res.size);
    const kiln_blob *b;
    kiln_result r = kiln_blob_load(mem, l->res.size, 0, &b, err);
    memcpy(mem + s->offset, &old, sizeof old);
    af_fix_crc(mem, l->res.size);
    return r;
}

Test(reference_models, the_loader_rejects_a_range_outside_the_models)
{
    level l;
    level_read(&l);
    const char *paths[2] = {"world.cast", "character.cast"};
    const int world[2] = {1, 0};
    cr_assert_eq(level_bake(&l, paths, world, 2), KILN_OK);
    kiln_diag err;
    cr_expect_eq(load_patched(&l, 0, 1, &err), KILN_OK, "%s", err.message); /* the baked record */
    cr_expect_eq(load_patched(&l, 1, 1, &err), KILN_ERR_BLOB_BAD_RECORD, "one model: index 1 is outside");
    cr_expect(strstr(err.message, "IRMD[0].first_model") != NULL, "%s", err.message);
    cr_expect_eq(load_patched(&l, 0, 2, &err), KILN_ERR_BLOB_BAD_RECORD, "two models from 0");
    cr_expect_eq(load_patched(&l, 0, 0, &err), KILN_ERR_BLOB_BAD_RECORD, "an empty range that is not NONE");
    cr_expect_eq(load_patched(&l, KILN_BLOB_NONE, 1, &err), KILN_ERR_BLOB_BAD_RECORD, "a count with no model");
    cr_expect(strstr(err.message, "IRMD[0].model_count") != NULL, "%s", err.message);
    cr_expect_eq(load_patched(&l, KILN_BLOB_NONE, 0, &err), KILN_OK, "%s", err.message);
    /* trusted loads skip verification; kiln_reference_get still never hands out a bad range */
    const kiln_blob_section *s = kiln_blob_find_section(l.blob, KILN_SECTION_REFERENCE_MODELS);
    kiln_blob_reference_model bad = {7, 3};
    memcpy((unsigned char *)l.res.blob + s->offset, &bad, sizeof bad);
    kiln_reference_info info;
    cr_assert_eq(kiln_reference_get(l.blob, 0, &info), KILN_OK);
    cr_expect_eq(info.first_model, KILN_BLOB_NONE);
    level_free(&l);
}
