/* `kiln plot`, run as a separate process: the SVG read back and held against the source keys
 * (the Cast file imported here), the lossy clip's track table (a lossy bake made here) and the
 * bound the command line asked for.
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
#include "kiln/anim.h"
#include "kiln/bake/bake.h"
#include "kiln/bake/source.h"
#include "kiln/blob.h"
#include "test_util.h"

#define CHARACTER KILN_SOURCE_DIR "/samples/character.cast"
#define WALK KILN_SOURCE_DIR "/samples/character_walk.cast"

static char *plot(const char *out, const char *const *extra)
{
    const char *argv[32];
    int n = 0;
    argv[n++] = "plot";
    argv[n++] = WALK;
    argv[n++] = "--model";
    argv[n++] = CHARACTER;
    for (; extra && *extra; extra++) argv[n++] = *extra;
    argv[n++] = "-o";
    argv[n++] = out;
    argv[n] = NULL;
    cli_result r = cli_run(argv);
    cr_assert_eq(r.status, 0, "kiln plot exited %d: %s", r.status, r.err);
    cli_result_free(&r);
    file_bytes f;
    cr_assert(read_file(out, &f));
    char *s = malloc(f.size + 1);
    memcpy(s, f.data, f.size);
    s[f.size] = 0;
    file_bytes_free(&f);
    return s;
}

/* The text of the series group with data-series=kind and data-label=label (NULL: any). */
static char *series(const char *svg, const char *kind, const char *label)
{
    char want[256];
    if (label) snprintf(want, sizeof want, "data-series=\"%s\" data-label=\"%s\"", kind, label);
    else snprintf(want, sizeof want, "data-series=\"%s\"", kind);
    const char *s = strstr(svg, want);
    if (!s) return NULL;
    const char *e = strstr(s, "</g>");
    cr_assert_not_null(e);
    char *out = malloc((size_t)(e - s) + 1);
    memcpy(out, s, (size_t)(e - s));
    out[e - s] = 0;
    return out;
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (; (s = strstr(s, what)); s++) n++;
    return n;
}

static const char *tmp_svg(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/kiln_plot_%ld_%s.svg", KILN_BUILD_DIR, (long)getpid(), name);
    return buf;
}

Test(cli_plot, source_keys_are_the_files_keys)
{
    char out[512];
    char *svg = plot(tmp_svg(out, sizeof out, "keys"), NULL);
    cr_assert_eq(strncmp(svg, "<?xml", 5), 0);
    cr_assert_not_null(strstr(svg, "</svg>"));
    /* the walk's curves, imported independently */
    file_bytes f;
    cr_assert(read_file(WALK, &f));
    kiln_source_scene scene;
    cr_assert_eq(kiln_source_import(f.data, f.size, WALK, NULL, NULL, &scene, NULL), KILN_OK);
    const kiln_source_animation *a = &scene.animations[0];
    int checked = 0;
    for (uint32_t i = 0; i < a->curve_count; i++) {
        const kiln_source_curve *c = &a->curves[i];
        if (c->channel != KILN_SOURCE_CHANNEL_TX || strcmp(c->target, "root") != 0) continue;
        char *g = series(svg, "channel:source", "root tx");
        cr_assert_not_null(g, "no source series for root tx");
        cr_expect_eq(count(g, "<circle"), c->key_count, "root tx: %zu dots, %u keys", count(g, "<circle"), c->key_count);
        free(g);
        checked = 1;
    }
    cr_expect(checked, "the walk has no root tx curve");
    for (const char *const *k = (const char *const[]){"channel:lossless", "channel:lossy", NULL}; *k; k++) {
        char *g = series(svg, *k, "root tx");
        cr_assert_not_null(g, "no %s series for root tx", *k);
        cr_expect_eq(count(g, "<polyline"), 1);
        cr_expect_eq(count(g, ","), 31, "%s: one point per frame", *k); /* "x,y " per point */
        free(g);
    }
    kiln_source_scene_free(&scene);
    file_bytes_free(&f);
    free(svg);
    unlink(out);
}

Test(cli_plot, error_per_joint_and_bits_per_track)
{
    char out[512];
    const char *extra[] = {"--anim-error", "0.001", NULL};
    char *svg = plot(tmp_svg(out, sizeof out, "bits"), extra);
    /* one error series per bone, and the bound the command line asked for (1 mm) */
    cr_expect_eq(count(svg, "data-series=\"error:joint\""), 8);
    cr_expect_not_null(strstr(svg, "bound 1 mm at 0.1 m"), "the bound is not stated");
    /* the largest error stated is within the bound */
    const char *l = strstr(svg, "largest ");
    cr_assert_not_null(l);
    double largest = strtod(l + 8, NULL);
    cr_expect(largest >= 0 && largest <= 1.0, "largest error %g mm", largest);
    /* bits: one bar per stored track of the same lossy bake, with its width */
    file_bytes m, w;
    cr_assert(read_file(CHARACTER, &m));
    cr_assert(read_file(WALK, &w));
    kiln_bake_input in[2] = {{CHARACTER, m.data, m.size, NULL}, {WALK, w.data, w.size, NULL}};
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.flags = KILN_BAKE_LOSSY_ANIMATION;
    o.anim_error_m = 0.001f;
    kiln_bake_result res;
    kiln_diag err;
    cr_assert_eq(kiln_bake(in, 2, &o, &res, &err), KILN_OK, "%s", err.message);
    const kiln_blob *blob;
    cr_assert_eq(kiln_blob_load(res.blob, res.size, 0, &blob, &err), KILN_OK);
    const kiln_blob_animation *a = kiln_blob_animations(blob, NULL);
    cr_assert(a->flags & KILN_ANIM_LOSSY);
    const kiln_blob_anim_track *t =
        (const kiln_blob_anim_track *)(const void *)((const unsigned char *)kiln_blob_header_of(blob) + a->data_offset +
                                                     (uint64_t)a->block_count * sizeof(kiln_soa_xform));
    char *g = series(svg, "bits", NULL);
    cr_assert_not_null(g);
    cr_expect_eq(count(g, "<rect"), a->animated_count);
    const char *s = g;
    for (uint32_t k = 0; k < a->animated_count; k++) {
        s = strstr(s, "data-bits=\"");
        cr_assert_not_null(s);
        s += 11;
        cr_expect_eq((uint32_t)atoi(s), t[k].width, "track %u", k);
    }
    free(g);
    kiln_bake_result_free(&res);
    file_bytes_free(&m);
    file_bytes_free(&w);
    free(svg);
    unlink(out);
}

Test(cli_plot, joints_by_name)
{
    char out[512];
    const char *extra[] = {"--joint", "head", NULL};
    char *svg = plot(tmp_svg(out, sizeof out, "joint"), extra);
    char *head = series(svg, "channel:lossless", "head qw"), *root = series(svg, "channel:lossless", "root tx");
    cr_expect_not_null(head);
    cr_expect_null(root, "only the joint asked for");
    free(head);
    free(root);
    free(svg);
    unlink(out);
}

Test(cli_plot, errors)
{
    char out[512];
    tmp_svg(out, sizeof out, "err");
    const char *none[] = {"plot", NULL};
    const char *no_out[] = {"plot", WALK, NULL};
    const char *bad_error[] = {"plot", WALK, "-o", out, "--anim-error", "-1", NULL};
    const char *const *usage[] = {none, no_out, bad_error};
    for (size_t i = 0; i < 3; i++) {
        cli_result r = cli_run(usage[i]);
        cr_expect_eq(r.status, 1, "usage case %zu exited %d", i, r.status);
        cli_result_free(&r);
    }
    const char *no_joint[] = {"plot", WALK, "--model", CHARACTER, "--joint", "tail", "-o", out, NULL};
    const char *no_skeleton[] = {"plot", WALK, "-o", out, NULL};
    const char *missing[] = {"plot", KILN_BUILD_DIR "/no_such.cast", "-o", out, NULL};
    const char *const *input[] = {no_joint, no_skeleton, missing};
    for (size_t i = 0; i < 3; i++) {
        cli_result r = cli_run(input[i]);
        cr_expect_eq(r.status, 2, "input case %zu exited %d: %s", i, r.status, r.err);
        cr_expect_neq(r.err[0], 0);
        /* the shared pose stages report under the verb that ran them (case 2 fails in the file reader) */
        cr_expect(i == 2 || (strstr(r.err, "kiln: plot: ") != NULL && strstr(r.err, "kiln: pose: ") == NULL),
                  "input case %zu: %s", i, r.err);
        cli_result_free(&r);
        struct stat st;
        cr_expect_neq(stat(out, &st), 0, "input case %zu left a plot behind", i);
    }
}
