/* `kiln view`, run as a separate process: the page's data document read back and held against
 * `kiln pose --json` (the same runtime calls, another verb), against instance matrices built
 * here from the blob's records with kiln_transform_matrix, and against the caps it was given.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"
#include "json_read.h"
#include "kiln/bake/bake.h"
#include "kiln/blob.h"
#include "kiln/instance.h"
#include "test_util.h"

#define CHARACTER KILN_SOURCE_DIR "/samples/character.cast"
#define WALK KILN_SOURCE_DIR "/samples/character_walk.cast"
#define WORLD KILN_SOURCE_DIR "/samples/world.cast"

typedef struct page {
    char     *html;
    jr_value *doc;
} page;

static char *slurp_path(const char *path)
{
    file_bytes f;
    cr_assert(read_file(path, &f), "cannot read %s", path);
    char *s = malloc(f.size + 1);
    cr_assert_not_null(s);
    memcpy(s, f.data, f.size);
    s[f.size] = 0;
    file_bytes_free(&f);
    return s;
}

/* Runs kiln view with args (the output path is added), expects exit 0, reads the data back. */
static page view(const char *out, const char *const *args)
{
    const char *argv[32];
    int n = 0;
    argv[n++] = "view";
    for (; *args; args++) argv[n++] = *args;
    argv[n++] = "-o";
    argv[n++] = out;
    argv[n] = NULL;
    cli_result r = cli_run(argv);
    cr_assert_eq(r.status, 0, "kiln view exited %d: %s", r.status, r.err);
    cli_result_free(&r);
    page p;
    p.html = slurp_path(out);
    const char *open = "<script type=\"application/json\" id=\"kiln-data\">";
    char *start = strstr(p.html, open);
    cr_assert_not_null(start, "no data element in the page");
    start += strlen(open);
    char *end = strstr(start, "</script>");
    cr_assert_not_null(end);
    char err[160];
    p.doc = jr_parse(start, (size_t)(end - start), err, sizeof err);
    cr_assert_not_null(p.doc, "the data document does not parse: %s", err);
    return p;
}

static void page_free(page *p)
{
    jr_free(p->doc);
    free(p->html);
}

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Decodes a base64 string into malloc'd bytes (*size). */
static unsigned char *b64(const jr_value *v, size_t *size)
{
    const char *s = jr_str(v);
    cr_assert_not_null(s, "not a base64 string");
    size_t len = strlen(s);
    cr_assert_eq(len % 4, 0, "base64 length %zu", len);
    unsigned char *out = malloc(len / 4 * 3 + 1);
    size_t n = 0;
    for (size_t i = 0; i < len; i += 4) {
        int a = b64_value(s[i]), b = b64_value(s[i + 1]), c = s[i + 2] == '=' ? 0 : b64_value(s[i + 2]),
            d = s[i + 3] == '=' ? 0 : b64_value(s[i + 3]);
        cr_assert(a >= 0 && b >= 0 && c >= 0 && d >= 0, "bad base64 at %zu", i);
        uint32_t w = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
        out[n++] = (unsigned char)(w >> 16);
        if (s[i + 2] != '=') out[n++] = (unsigned char)(w >> 8);
        if (s[i + 3] != '=') out[n++] = (unsigned char)w;
    }
    *size = n;
    return out;
}

static float *floats(const jr_value *v, size_t *count)
{
    size_t size;
    unsigned char *b = b64(v, &size);
    cr_assert_eq(size % 4, 0);
    *count = size / 4;
    return (float *)(void *)b;
}

static jr_value *pose_json(const char *frames)
{
    const char *args[] = {"pose", CHARACTER, WALK, "--json", "--skin", "body", "-f", frames, NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.status, 0, "kiln pose exited %d: %s", r.status, r.err);
    char err[160];
    jr_value *doc = jr_parse(r.out, strlen(r.out), err, sizeof err);
    cr_assert_not_null(doc, "%s", err);
    cli_result_free(&r);
    return doc;
}

static const char *tmp_page(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/kiln_view_%ld_%s.html", KILN_BUILD_DIR, (long)getpid(), name);
    return buf;
}

Test(cli_view, character_frames_are_the_poses_of_kiln_pose)
{
    char out[512];
    const char *args[] = {CHARACTER, WALK, NULL};
    page p = view(tmp_page(out, sizeof out, "character"), args);
    const jr_value *model = jr_at(jr_get(p.doc, "models"), 0), *clip = jr_at(jr_get(p.doc, "clips"), 0);
    cr_assert_str_eq(jr_str(jr_get(model, "name")), "character");
    cr_assert_str_eq(jr_str(jr_get(clip, "name")), "walk");
    cr_assert_eq(jr_num(jr_get(clip, "frames")), 31);
    cr_assert_eq(jr_num(jr_get(clip, "shown")), 31);
    cr_assert_eq(jr_num(jr_get(clip, "step")), 1);
    const jr_value *bones = jr_get(model, "bones");
    size_t nb = jr_len(bones), nm, nv, np, nn;
    cr_assert_eq(nb, 8);
    float *mats = floats(jr_get(clip, "bones"), &nm), *vals = floats(jr_get(clip, "values"), &nv);
    cr_assert_eq(nm, 31 * nb * 16);
    const jr_value *skinned = jr_at(jr_get(clip, "skinned"), 0);
    float *pos = floats(jr_get(skinned, "positions"), &np);
    float *nrm = floats(jr_get(skinned, "normals"), &nn);
    size_t verts = (size_t)jr_num(jr_get(jr_at(jr_get(model, "meshes"), 0), "vertices"));
    cr_assert_eq(verts, 342);
    cr_assert_eq(np, 31 * verts * 3);
    cr_assert_eq(nn, np);
    const jr_value *scalars = jr_get(clip, "scalars");
    jr_value *ref = pose_json("0,5,17,30"); /* one run: each kiln process costs under valgrind */
    const jr_value *joints = jr_get(ref, "joints");
    cr_assert_eq(jr_len(jr_get(ref, "frames")), 4);
    for (size_t fi = 0; fi < 4; fi++) {
        const jr_value *rf = jr_at(jr_get(ref, "frames"), fi);
        int f = (int)jr_num(jr_get(rf, "frame"));
        /* bone matrices by name: the page lists the blob's order, pose the Cast file's */
        for (size_t b = 0; b < nb; b++) {
            const char *name = jr_str(jr_at(jr_at(bones, b), 0));
            size_t k = 0;
            while (k < jr_len(joints) && strcmp(jr_str(jr_at(joints, k)), name) != 0) k++;
            cr_assert_lt(k, jr_len(joints), "bone %s not in kiln pose's output", name);
            for (int c = 0; c < 16; c++) {
                double want = jr_num(jr_at(jr_at(jr_get(rf, "model"), k), (size_t)c));
                double got = mats[((size_t)f * nb + b) * 16 + (size_t)c];
                cr_expect(fabs(got - want) <= 1e-5, "frame %d bone %s [%d]: %.7g, kiln pose %.7g", f, name, c, got, want);
            }
        }
        /* the blend shape weight */
        for (size_t s = 0; s < jr_len(scalars); s++) {
            const jr_value *sc = jr_at(scalars, s);
            if (strcmp(jr_str(jr_at(sc, 1)), "blendshape") != 0) continue;
            double want = jr_num(jr_get(jr_get(rf, "shapes"), jr_str(jr_at(sc, 0))));
            cr_expect(fabs(vals[(size_t)f * jr_len(scalars) + s] - want) <= 1e-6, "frame %d weight %s", f, jr_str(jr_at(sc, 0)));
        }
        /* skinned vertices: pose keeps the file's vertex order and the page the baker's, so
         * compare what does not depend on the order: the centroid and the bounds */
        const jr_value *rv = jr_get(jr_get(rf, "mesh_vertices_model_space"), "body");
        cr_assert_eq(jr_len(rv), verts);
        double c0[3] = {0, 0, 0}, c1[3] = {0, 0, 0}, lo0[3], hi0[3], lo1[3], hi1[3];
        for (int c = 0; c < 3; c++) lo0[c] = lo1[c] = INFINITY, hi0[c] = hi1[c] = -INFINITY;
        for (size_t v = 0; v < verts; v++)
            for (int c = 0; c < 3; c++) {
                double a = pos[((size_t)f * verts + v) * 3 + (size_t)c], b = jr_num(jr_at(jr_at(rv, v), (size_t)c));
                c0[c] += a, c1[c] += b;
                lo0[c] = fmin(lo0[c], a), hi0[c] = fmax(hi0[c], a), lo1[c] = fmin(lo1[c], b), hi1[c] = fmax(hi1[c], b);
            }
        for (int c = 0; c < 3; c++) {
            cr_expect(fabs(c0[c] - c1[c]) / (double)verts <= 1e-5, "frame %d centroid[%d]", f, c);
            cr_expect(fabs(lo0[c] - lo1[c]) <= 1e-5 && fabs(hi0[c] - hi1[c]) <= 1e-5, "frame %d bounds[%d]", f, c);
        }
        /* normals come out of kiln_skin_mesh unit length */
        for (size_t v = 0; v < verts; v++) {
            const float *n = nrm + ((size_t)f * verts + v) * 3;
            double l = sqrt((double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2]);
            cr_expect(fabs(l - 1.0) < 1e-4, "frame %d normal %zu has length %g", f, v, l);
        }
    }
    jr_free(ref);
    /* the walk moves: frame 15 differs from frame 0 */
    double moved = 0;
    for (size_t i = 0; i < verts * 3; i++) moved = fmax(moved, fabs(pos[15 * verts * 3 + i] - pos[i]));
    cr_expect_gt(moved, 1e-3);
    free(mats), free(vals), free(pos), free(nrm);
    page_free(&p);
    unlink(out);
}

Test(cli_view, rest_geometry_and_triangles)
{
    char out[512];
    const char *args[] = {CHARACTER, NULL};
    page p = view(tmp_page(out, sizeof out, "rest"), args);
    const jr_value *mesh = jr_at(jr_get(jr_at(jr_get(p.doc, "models"), 0), "meshes"), 0);
    size_t np, ni;
    float *pos = floats(jr_get(mesh, "positions"), &np);
    unsigned char *idx = b64(jr_get(mesh, "indices"), &ni);
    cr_assert_eq(np, 342 * 3);
    cr_assert_eq(ni, (size_t)jr_num(jr_get(mesh, "triangles")) * 12);
    const jr_value *bounds = jr_get(mesh, "bounds");
    for (size_t v = 0; v < 342; v++)
        for (int c = 0; c < 3; c++) {
            cr_expect(pos[v * 3 + (size_t)c] >= jr_num(jr_at(bounds, (size_t)c)) - 1e-5);
            cr_expect(pos[v * 3 + (size_t)c] <= jr_num(jr_at(bounds, (size_t)c + 3)) + 1e-5);
        }
    for (size_t i = 0; i < ni / 4; i++) cr_expect_lt(((uint32_t *)(void *)idx)[i], 342u);
    cr_expect_eq(jr_len(jr_get(p.doc, "clips")), 0);
    cr_expect_eq(jr_len(jr_get(p.doc, "capped")), 0);
    cr_expect_str_eq(jr_str(jr_get(jr_at(jr_get(jr_at(jr_get(p.doc, "models"), 0), "materials"), 0), "name")), "body_mat");
    free(pos), free(idx);
    page_free(&p);
    unlink(out);
}

Test(cli_view, caps_cut_the_page_and_say_so)
{
    char out[512];
    const char *args[] = {CHARACTER, WALK, "--max-vertices", "100", "--max-frames", "10", "--max-skinned", "500", NULL};
    page p = view(tmp_page(out, sizeof out, "caps"), args);
    const jr_value *mesh = jr_at(jr_get(jr_at(jr_get(p.doc, "models"), 0), "meshes"), 0);
    cr_assert_eq(jr_num(jr_get(mesh, "shown")), 100);
    size_t np, ni;
    float *pos = floats(jr_get(mesh, "positions"), &np);
    unsigned char *idx = b64(jr_get(mesh, "indices"), &ni);
    cr_expect_eq(np, 300);
    cr_expect_eq(ni / 12, (size_t)jr_num(jr_get(mesh, "trianglesShown")));
    cr_expect_gt(ni, 0);
    for (size_t i = 0; i < ni / 4; i++) cr_expect_lt(((uint32_t *)(void *)idx)[i], 100u);
    const jr_value *clip = jr_at(jr_get(p.doc, "clips"), 0);
    cr_expect_eq(jr_num(jr_get(clip, "step")), 4);  /* ceil(31 / 10) */
    cr_expect_eq(jr_num(jr_get(clip, "shown")), 8); /* frames 0, 4, ..., 28 */
    cr_expect_eq(jr_len(jr_get(clip, "skinned")), 0); /* 100 vertices x 8 frames > 500 */
    const jr_value *capped = jr_get(p.doc, "capped");
    int vertices = 0, frames = 0, skinned = 0;
    for (size_t i = 0; i < jr_len(capped); i++) {
        const char *s = jr_str(jr_at(capped, i));
        vertices |= strstr(s, "100 of 342 vertices") && strstr(s, "vertex cap 100");
        frames |= strstr(s, "8 of 31 frames") && strstr(s, "frame cap 10");
        skinned |= strstr(s, "not skinned per frame") != NULL;
    }
    cr_expect(vertices && frames && skinned, "the caps are not all listed");
    free(pos), free(idx);
    page_free(&p);
    unlink(out);
}

/* world = T R S of each Instance record times the character's Model matrix (the identity) */
Test(cli_view, world_instances_at_their_world_matrices)
{
    char out[512];
    const char *args[] = {WORLD, NULL};
    page p = view(tmp_page(out, sizeof out, "world"), args);
    const jr_value *inst = jr_get(p.doc, "instances");
    cr_assert_eq(jr_num(jr_get(inst, "count")), 4);
    cr_assert_eq(jr_num(jr_get(inst, "shown")), 4);
    /* the referenced character.cast is not an input but lies beside world.cast: a box at its bounds */
    const jr_value *ref0 = jr_at(jr_get(inst, "refs"), 0);
    cr_expect_eq(jr_num(jr_get(ref0, "model")), -1);
    cr_expect_str_eq(jr_str(jr_get(ref0, "from")), "file");
    cr_expect(fabs(jr_num(jr_at(jr_get(ref0, "bounds"), 1)) - 0.85) < 1e-6, "the character's feet at 0.85 m");
    cr_expect(fabs(jr_num(jr_at(jr_get(ref0, "bounds"), 4)) - 1.8) < 1e-6, "the character's head at 1.8 m");
    size_t nm;
    float *mats = floats(jr_get(inst, "matrices"), &nm);
    cr_assert_eq(nm, 64);

    file_bytes f;
    cr_assert(read_file(WORLD, &f));
    kiln_bake_input in = {WORLD, f.data, f.size, NULL};
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    kiln_bake_result res;
    kiln_diag err;
    cr_assert_eq(kiln_bake(&in, 1, &o, &res, &err), KILN_OK, "%s", err.message);
    const kiln_blob *blob;
    cr_assert_eq(kiln_blob_load(res.blob, res.size, 0, &blob, &err), KILN_OK);
    uint32_t count;
    const kiln_blob_instance *rec = kiln_blob_instances(blob, &count);
    for (uint32_t i = 0; i < count; i++) {
        /* the page lists them by name: find this record's slot */
        const char *name = kiln_blob_string(blob, rec[i].name);
        size_t k = 0;
        while (k < 4 && strcmp(jr_str(jr_at(jr_get(inst, "names"), k)), name) != 0) k++;
        cr_assert_lt(k, 4, "instance %s not on the page", name);
        float want[16];
        kiln_transform_matrix(rec[i].position, rec[i].rotation, rec[i].scale, want);
        for (int c = 0; c < 16; c++) cr_expect(fabsf(mats[k * 16 + (size_t)c] - want[c]) <= 1e-6f, "%s [%d]", name, c);
    }
    kiln_bake_result_free(&res);
    file_bytes_free(&f);
    free(mats);
    page_free(&p);

    /* with the referenced character among the inputs, its meshes stand in for the boxes */
    const char *both[] = {WORLD, CHARACTER, NULL};
    p = view(out, both);
    cr_expect_eq(jr_num(jr_get(jr_at(jr_get(jr_get(p.doc, "instances"), "refs"), 0), "model")), 0);
    cr_expect_str_eq(jr_str(jr_get(jr_at(jr_get(p.doc, "models"), 0), "name")), "character");
    page_free(&p);
    unlink(out);
}

Test(cli_view, the_page_needs_no_network)
{
    char out[512];
    const char *args[] = {CHARACTER, WALK, NULL};
    page p = view(tmp_page(out, sizeof out, "offline"), args);
    size_t closers = 0;
    for (const char *s = p.html; (s = strstr(s, "</script>")); s++) closers++;
    cr_expect_eq(closers, 2, "the data and the renderer: two scripts");
    cr_expect_null(strstr(p.html, "<script src"));
    cr_expect_null(strstr(p.html, "<link"));
    cr_expect_null(strstr(p.html, "http://"));
    cr_expect_null(strstr(p.html, "https://"));
    cr_expect_not_null(strstr(p.html, "getContext('webgl2'"), "the renderer is inlined");
    page_free(&p);
    unlink(out);
}

Test(cli_view, bad_input_exits_2_and_writes_nothing)
{
    char out[512], junk[512];
    tmp_page(out, sizeof out, "bad");
    snprintf(junk, sizeof junk, "%s/kiln_view_%ld_junk.bin", KILN_BUILD_DIR, (long)getpid());
    FILE *f = fopen(junk, "wb");
    cr_assert_not_null(f);
    fputs("this is not a model", f);
    fclose(f);
    const char *missing[] = {"view", KILN_BUILD_DIR "/no_such_file.cast", "-o", out, NULL};
    const char *unknown[] = {"view", junk, "-o", out, NULL};
    const char *const *cases[] = {missing, unknown};
    for (size_t i = 0; i < 2; i++) {
        cli_result r = cli_run(cases[i]);
        cr_expect_eq(r.status, 2, "case %zu exited %d: %s", i, r.status, r.err);
        cr_expect_neq(r.err[0], 0, "case %zu: no message", i);
        cli_result_free(&r);
        struct stat st;
        cr_expect_neq(stat(out, &st), 0, "case %zu left a page behind", i);
    }
    unlink(junk);
}

Test(cli_view, usage_and_output_errors)
{
    const char *none[] = {"view", NULL};
    const char *no_out[] = {"view", CHARACTER, NULL};
    const char *zero[] = {"view", CHARACTER, "-o", "x.html", "--max-frames", "0", NULL};
    const char *word[] = {"view", CHARACTER, "-o", "x.html", "--max-vertices", "many", NULL};
    const char *const *usage[] = {none, no_out, zero, word};
    for (size_t i = 0; i < 4; i++) {
        cli_result r = cli_run(usage[i]);
        cr_expect_eq(r.status, 1, "usage case %zu exited %d", i, r.status);
        cli_result_free(&r);
    }
    const char *unwritable[] = {"view", CHARACTER, "-o", KILN_BUILD_DIR "/no_such_dir/page.html", NULL};
    cli_result r = cli_run(unwritable);
    cr_expect_eq(r.status, 4, "exited %d: %s", r.status, r.err);
    cli_result_free(&r);
    const char *help[] = {"view", "--help", NULL};
    r = cli_run(help);
    cr_expect_eq(r.status, 0);
    cr_expect_not_null(strstr(r.out, "self-contained"));
    cli_result_free(&r);
}

/* Two models share the vertex budget in input order; a clip's skinned frames hold exactly the
 * vertices its model's rest geometry shows (the page indexes frames by that count). */
Test(cli_view, skinned_frames_follow_the_shared_vertex_budget)
{
    char dir[512], tri[600], out[512];
    if (!corpus_dir(dir, sizeof dir)) cr_skip_test("corpus not found at %s: skipping", dir);
    snprintf(tri, sizeof tri, "%s/tri_mesh.cast", dir);
    const char *args[] = {tri, CHARACTER, WALK, "--max-vertices", "100", NULL};
    page p = view(tmp_page(out, sizeof out, "budget"), args);
    const jr_value *models = jr_get(p.doc, "models");
    cr_assert_eq(jr_len(models), 2);
    size_t first = (size_t)jr_num(jr_get(jr_at(jr_get(jr_at(models, 0), "meshes"), 0), "shown"));
    size_t second = (size_t)jr_num(jr_get(jr_at(jr_get(jr_at(models, 1), "meshes"), 0), "shown"));
    cr_assert_eq(first + second, 100, "%zu + %zu vertices shown", first, second);
    const jr_value *clip = jr_at(jr_get(p.doc, "clips"), 0);
    cr_assert_eq(jr_num(jr_get(clip, "model")), 1, "the walk plays on the character");
    size_t np;
    float *pos = floats(jr_get(jr_at(jr_get(clip, "skinned"), 0), "positions"), &np);
    cr_expect_eq(np, 31 * second * 3);
    free(pos);
    page_free(&p);
    unlink(out);
}
