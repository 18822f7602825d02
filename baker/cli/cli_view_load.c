/* `kiln view`, its inputs: read every file, bake the source ones together (so that a clip file
 * binds to the skeleton of a model file, as in `kiln pose`), load the blobs with full
 * verification.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "cli_view.h"
#include "inspect_blob.h"

/* Bake diagnostics carry "path:node" in their path; print them file first, as `kiln bake` does. */
static void kiln__view_sink(void *user, const kiln_diag *d)
{
    const kiln__view *v = user;
    for (uint32_t i = 0; i < v->args.input_count; i++)
        if (kiln__cli_print_input_diag(stderr, v->in[i].path, d)) return;
    kiln__cli_print_diag(stderr, NULL, d);
}

int kiln__view_load(kiln__view *v)
{
    kiln_bake_input bake_in[KILN__VIEW_MAX_INPUTS];
    uint32_t bake_count = 0;
    for (uint32_t i = 0; i < v->args.input_count; i++) {
        kiln__view_input *in = &v->in[i];
        in->path = v->args.inputs[i];
        in->source = KILN_BLOB_NONE;
        if (!kiln__cli_file_load(in->path, &in->file)) return KILN_EXIT_INPUT;
        in->is_blob = kiln__is_blob(in->file.data, in->file.size);
        if (!in->is_blob) {
            in->source = bake_count;
            bake_in[bake_count].path = in->path;
            bake_in[bake_count].data = in->file.data;
            bake_in[bake_count].size = in->file.size;
            bake_in[bake_count].format = NULL;
            bake_count++;
            continue;
        }
        /* The loader reads in place and needs KILN_BLOB_ALIGN; the CLI's buffers are malloc'd. */
        if (posix_memalign(&in->mem, KILN_BLOB_ALIGN, in->file.size ? in->file.size : 1) != 0) {
            in->mem = NULL;
            fprintf(stderr, KILN_CLI_NAME ": " KILN__VIEW_VERB ": out of memory\n");
            return KILN_EXIT_INPUT;
        }
        memcpy(in->mem, in->file.data, in->file.size);
        kiln_diag err;
        memset(&err, 0, sizeof err);
        if (kiln_blob_load(in->mem, in->file.size, 0, &in->blob, &err) != KILN_OK) {
            kiln__cli_print_blob_diag(stderr, in->path, &err);
            return KILN_EXIT_INPUT;
        }
        kiln__cli_file_free(&in->file);
    }
    if (!bake_count) return KILN_EXIT_OK;
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.diag.fn = kiln__view_sink;
    o.diag.user = v;
    /* Vertices in the source's order, as `kiln pose --skin` keeps them: a vertex cap then keeps
     * the first vertices as the file lists them, and the meshoptimizer passes (the longest part
     * of a big bake) are skipped; drawing does not need their cache order. */
    o.flags |= KILN_BAKE_NO_OPTIMIZE;
    kiln_diag err;
    memset(&err, 0, sizeof err);
    if (kiln_bake(bake_in, bake_count, &o, &v->baked, &err) != KILN_OK) {
        kiln__view_sink(v, &err);
        fprintf(stderr, KILN_CLI_NAME ": " KILN__VIEW_VERB ": the bake failed\n");
        return KILN_EXIT_INPUT;
    }
    memset(&err, 0, sizeof err);
    if (kiln_blob_load(v->baked.blob, v->baked.size, 0, &v->baked_blob, &err) != KILN_OK) {
        kiln__cli_print_blob_diag(stderr, NULL, &err);
        return KILN_EXIT_INPUT;
    }
    for (uint32_t i = 0; i < v->args.input_count; i++) {
        if (v->in[i].is_blob) continue;
        v->in[i].blob = v->baked_blob;
        kiln__cli_file_free(&v->in[i].file); /* the blob holds all the view reads */
    }
    return KILN_EXIT_OK;
}

uint32_t kiln__view_blobs(const kiln__view *v, const kiln_blob **out, uint32_t cap)
{
    uint32_t n = 0;
    if (v->baked_blob && n < cap) out[n++] = v->baked_blob;
    for (uint32_t i = 0; i < v->args.input_count && n < cap; i++)
        if (v->in[i].is_blob && v->in[i].blob) out[n++] = v->in[i].blob;
    return n;
}

void kiln__view_free(kiln__view *v)
{
    for (uint32_t i = 0; i < KILN__VIEW_MAX_INPUTS; i++) {
        kiln__cli_file_free(&v->in[i].file);
        free(v->in[i].mem);
    }
    if (v->baked.blob) kiln_bake_result_free(&v->baked);
}
