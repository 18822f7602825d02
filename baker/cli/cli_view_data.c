/* `kiln view`, the data document: one JSON object the page's renderer reads, with every bulk
 * array as base64 of its little-endian binary form (Float32Array, Uint32Array).
 *
 * Every number that moves comes from the runtime, through the calls `kiln pose` makes: the rest
 * geometry is kiln_skin_mesh at the rest pose; a clip's frames are kiln__pose_sample (bind,
 * sample, local to model, IK handles and constraints), then per mesh kiln_blend_shapes_apply at
 * the sampled weights and kiln_skin_mesh. Instances are placed with
 * kiln_instance_world_matrices_all. The page only draws what it is given.
 *
 * The caps (cli_view.h) bound the page: vertices drawn over all meshes (a mesh past the budget
 * keeps its first vertices, in the source's order (cli_view_load.c bakes without reordering),
 * and the triangles among them), frames per clip (a longer clip is sampled every
 * step-th frame over its whole length), skinned vertices over all embedded frames, instances.
 * Whatever a cap left out is listed in "capped", which the page shows.
 */

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli_view.h"
#include "kiln/anim.h"

/* ---- small writers ------------------------------------------------------------------------- */

/* A JSON string that is also safe inside <script>: '<', '>' and '&' are escaped too. */
void kiln__view_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
        if (*c == '"' || *c == '\\') fputc('\\', out), fputc(*c, out);
        else if (*c < 0x20 || *c == '<' || *c == '>' || *c == '&' || *c == 0x7f) fprintf(out, "\\u%04x", *c);
        else fputc(*c, out);
    }
    fputc('"', out);
}

void kiln__view_key(FILE *out, const char *key) { fprintf(out, "\"%s\":", key); }

void kiln__view_floats(FILE *out, const char *key, const float *v, size_t count)
{
    kiln__view_key(out, key);
    kiln__base64_write(out, v, count * sizeof *v);
}

void kiln__view_note(kiln__view_writer *w, const char *fmt, ...)
{
    char *s = malloc(KILN__VIEW_NOTE);
    if (!s || !kiln__cli_reserve((void **)&w->notes, &w->note_cap, w->note_count + 1, sizeof *w->notes)) {
        free(s);
        w->failed = 1;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s, KILN__VIEW_NOTE, fmt, ap);
    va_end(ap);
    w->notes[w->note_count++] = s;
}

int kiln__view_fail(kiln__view_writer *w, const char *what, kiln_result r)
{
    fprintf(stderr, KILN_CLI_NAME ": " KILN__VIEW_VERB ": %s: ", what);
    kiln__cli_put_result(stderr, r);
    fputc('\n', stderr);
    w->failed = 1;
    return 0;
}

void *kiln__view_oom(kiln__view_writer *w)
{
    fprintf(stderr, KILN_CLI_NAME ": " KILN__VIEW_VERB ": out of memory\n");
    w->failed = 1;
    return NULL;
}

void kiln__view_bounds(FILE *out, const float *mn, const float *mx)
{
    fprintf(out, "\"bounds\":[%.9g,%.9g,%.9g,%.9g,%.9g,%.9g]", mn[0], mn[1], mn[2], mx[0], mx[1], mx[2]);
}

/* ---- the document ------------------------------------------------------------------------- */

int kiln__view_write_data(kiln__view *v, FILE *out)
{
    kiln__view_writer w;
    memset(&w, 0, sizeof w);
    w.v = v;
    w.out = out;
    w.blob_count = kiln__view_blobs(v, w.blobs, KILN__VIEW_MAX_BLOBS);
    uint32_t models = 0;
    for (uint32_t b = 0; b < w.blob_count; b++) {
        uint32_t n = 0, meshes = 0;
        kiln_blob_models(w.blobs[b], &n);
        kiln_blob_meshes(w.blobs[b], &meshes);
        w.first_model[b] = models;
        models += n;
        w.shown[b] = calloc(meshes ? meshes : 1, sizeof *w.shown[b]);
        if (!w.shown[b]) kiln__view_oom(&w);
    }
    fputs("{\"title\":", out);
    kiln__view_str(out, v->args.title);
    fputs(",\"inputs\":[", out);
    for (uint32_t i = 0; i < v->args.input_count; i++) {
        if (i) fputc(',', out);
        kiln__view_str(out, v->in[i].path);
    }
    fprintf(out, "],\"caps\":{\"vertices\":%u,\"frames\":%u,\"instances\":%u,\"skinned\":%u},\"models\":[",
            v->args.max_vertices, v->args.max_frames, v->args.max_instances, v->args.max_skinned);
    for (uint32_t b = 0, k = 0; b < w.blob_count && !w.failed; b++) {
        uint32_t n = 0;
        kiln_blob_models(w.blobs[b], &n);
        for (uint32_t m = 0; m < n && !w.failed; m++, k++) {
            if (k) fputc(',', out);
            kiln__view_model(&w, b, m);
        }
    }
    if (v->vertices_shown < v->vertices_total) v->caps_hit |= 1u;
    fputs("],\"clips\":[", out);
    uint32_t skinned_left = v->args.max_skinned;
    int first = 1;
    for (uint32_t b = 0; b < w.blob_count && !w.failed; b++) {
        uint32_t n = 0;
        kiln_blob_animations(w.blobs[b], &n);
        for (uint32_t c = 0; c < n && !w.failed; c++) kiln__view_clip(&w, b, c, &skinned_left, &first);
    }
    v->skinned_used = v->args.max_skinned - skinned_left;
    fputs("],", out);
    if (!w.failed) kiln__view_instances(&w);
    fputs(",\"capped\":[", out);
    for (size_t i = 0; i < w.note_count; i++) {
        if (i) fputc(',', out);
        kiln__view_str(out, w.notes[i]);
        free(w.notes[i]);
    }
    free(w.notes);
    for (uint32_t b = 0; b < w.blob_count; b++) free(w.shown[b]);
    fputs("]}", out);
    return !w.failed;
}
