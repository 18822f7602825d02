/* `kiln view`, instances: their world matrices (kiln_instance_world_matrices_all) within the
 * instance cap, and what each reference draws: a model of the inputs, else a box at the bounds
 * of the referenced file (baked here, quietly, when it can be read), else a unit box. */
#define _XOPEN_SOURCE 700 /* realpath */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_view.h"
#include "inspect_blob.h"
#include "kiln/instance.h"

/* ---- instances ------------------------------------------------------------------------------ */

/* The page model drawn for a reference: the first model of the input whose real path is the
 * reference's resolved path; KILN_BLOB_NONE when the asset is not among the inputs. */
static uint32_t kiln__view_ref_model(kiln__view_writer *w, const char *resolved, const kiln_blob **mblob,
                                     uint32_t *mindex)
{
    char *want = realpath(resolved, NULL);
    uint32_t found = KILN_BLOB_NONE;
    for (uint32_t i = 0; want && i < w->v->args.input_count && found == KILN_BLOB_NONE; i++) {
        const kiln__view_input *in = &w->v->in[i];
        char *have = realpath(in->path, NULL);
        if (have && strcmp(have, want) == 0) {
            uint32_t count = 0;
            const kiln_blob_model *models = kiln_blob_models(in->blob, &count);
            for (uint32_t m = 0; m < count; m++) {
                if (in->source != KILN_BLOB_NONE && models[m].source != in->source) continue;
                for (uint32_t b = 0; b < w->blob_count; b++)
                    if (w->blobs[b] == in->blob) found = w->first_model[b] + m;
                *mblob = in->blob;
                *mindex = m;
                break;
            }
        }
        free(have);
    }
    free(want);
    return found;
}

/* What a reference draws: a page model, else a box at bounds found in the referenced file
 * itself (read and baked here when it exists), else a unit box. */
typedef struct kiln__view_ref {
    uint32_t    page_model;      /* KILN_BLOB_NONE: a box */
    const char *from;            /* "input", "file" or "unknown" */
    float       mn[3], mx[3];
    float       model[16];       /* the asset's Model matrix */
    int         has_model;
} kiln__view_ref;

/* The union of the bounds of a model's meshes; 0 when it has none. */
static int kiln__view_model_bounds(const kiln_blob *blob, uint32_t mi, float mn[3], float mx[3])
{
    const kiln_blob_model *m = &kiln_blob_models(blob, NULL)[mi];
    const kiln_blob_mesh *meshes = kiln_blob_meshes(blob, NULL);
    for (int c = 0; c < 3; c++) mn[c] = 1e30f, mx[c] = -1e30f;
    for (uint32_t k = 0; k < m->mesh_count; k++)
        for (int c = 0; c < 3; c++) {
            if (meshes[m->first_mesh + k].bounds_min[c] < mn[c]) mn[c] = meshes[m->first_mesh + k].bounds_min[c];
            if (meshes[m->first_mesh + k].bounds_max[c] > mx[c]) mx[c] = meshes[m->first_mesh + k].bounds_max[c];
        }
    return m->mesh_count != 0;
}

/* Bakes a referenced file that is not an input, quietly, for its first model's bounds and
 * Model matrix. 0 when it cannot be read, baked or has no model with meshes. */
static int kiln__view_ref_file(const char *path, kiln__view_ref *r)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fclose(f);
    kiln__cli_file file;
    memset(&file, 0, sizeof file);
    int ok = 0;
    kiln_bake_result res;
    memset(&res, 0, sizeof res);
    void *mem = NULL;
    const kiln_blob *blob = NULL;
    kiln_diag err;
    memset(&err, 0, sizeof err);
    if (!kiln__cli_file_load(path, &file)) return 0;
    if (kiln__is_blob(file.data, file.size)) {
        if (posix_memalign(&mem, KILN_BLOB_ALIGN, file.size ? file.size : 1) == 0) {
            memcpy(mem, file.data, file.size);
            if (kiln_blob_load(mem, file.size, 0, &blob, &err) != KILN_OK) blob = NULL;
        } else mem = NULL;
    } else {
        kiln_bake_input in = {path, file.data, file.size, NULL};
        kiln_bake_options o;
        memset(&o, 0, sizeof o); /* no sink: the page names the file, the bake's reports are not ours */
        if (kiln_bake(&in, 1, &o, &res, &err) == KILN_OK && kiln_blob_load(res.blob, res.size, 0, &blob, &err) != KILN_OK)
            blob = NULL;
    }
    uint32_t models = 0;
    if (blob) kiln_blob_models(blob, &models);
    for (uint32_t m = 0; m < models && !ok; m++) {
        if (!kiln__view_model_bounds(blob, m, r->mn, r->mx)) continue;
        r->has_model = kiln_model_transform(blob, m, r->model) == KILN_OK;
        ok = 1;
    }
    if (res.blob) kiln_bake_result_free(&res);
    free(mem);
    kiln__cli_file_free(&file);
    return ok;
}

/* A reference's path on this machine: blobs store it relative to the scene root (the folder of
 * the input that placed it), so it is looked for beside each input of `blob`, the first that
 * exists winning (malloc'd; NULL when out of memory). */
static char *kiln__view_ref_path(const kiln__view_writer *w, const kiln_blob *blob, const char *resolved)
{
    if (resolved[0] == '/') return strdup(resolved);
    char *first = NULL;
    for (uint32_t i = 0; i < w->v->args.input_count; i++) {
        const kiln__view_input *in = &w->v->in[i];
        if (in->blob != blob) continue;
        const char *slash = strrchr(in->path, '/');
        int dir = slash ? (int)(slash - in->path) : 1;
        size_t n = (size_t)dir + strlen(resolved) + 2;
        char *path = malloc(n);
        if (!path) break;
        snprintf(path, n, "%.*s/%s", dir, slash ? in->path : ".", resolved);
        if (access(path, F_OK) == 0) {
            free(first);
            return path;
        }
        if (!first) first = path;
        else free(path);
    }
    return first ? first : strdup(resolved);
}

static void kiln__view_ref_info(kiln__view_writer *w, const char *resolved, kiln__view_ref *r)
{
    const kiln_blob *mb = NULL;
    uint32_t mi = 0;
    memset(r, 0, sizeof *r);
    r->page_model = kiln__view_ref_model(w, resolved, &mb, &mi);
    if (r->page_model != KILN_BLOB_NONE) {
        r->from = "input";
        if (!kiln__view_model_bounds(mb, mi, r->mn, r->mx))
            for (int c = 0; c < 3; c++) r->mn[c] = -0.5f, r->mx[c] = 0.5f;
        r->has_model = kiln_model_transform(mb, mi, r->model) == KILN_OK;
        return;
    }
    if (kiln__view_ref_file(resolved, r)) {
        r->from = "file";
        return;
    }
    r->from = "unknown";
    for (int c = 0; c < 3; c++) r->mn[c] = -0.5f, r->mx[c] = 0.5f;
}

void kiln__view_instances(kiln__view_writer *w)
{
    FILE *out = w->out;
    uint32_t total = 0, shown_total = 0, ref_total = 0;
    for (uint32_t b = 0; b < w->blob_count; b++) {
        uint32_t n = 0;
        kiln_blob_instances(w->blobs[b], &n);
        total += n;
        ref_total += kiln_reference_count(w->blobs[b]);
    }
    size_t cap = (size_t)(w->v->args.max_instances < total ? w->v->args.max_instances : total);
    kiln__view_ref *refs = calloc(ref_total ? ref_total : 1, sizeof *refs);
    float *mats = malloc((cap ? cap : 1) * 64u);
    uint32_t *ref_of = malloc((cap ? cap : 1) * 4u);
    if (!refs || !mats || !ref_of) {
        kiln__view_oom(w);
        goto done;
    }
    fprintf(out, "\"instances\":{\"count\":%u,\"refs\":[", total);
    for (uint32_t b = 0, k = 0; b < w->blob_count; b++) {
        uint32_t n = kiln_reference_count(w->blobs[b]);
        for (uint32_t r = 0; r < n; r++, k++) {
            kiln_reference_info info;
            memset(&info, 0, sizeof info);
            kiln_reference_get(w->blobs[b], r, &info);
            char *where = kiln__view_ref_path(w, w->blobs[b], info.resolved_path ? info.resolved_path : "");
            kiln__view_ref_info(w, where ? where : "", &refs[k]);
            free(where);
            fputs(k ? ",{\"path\":" : "{\"path\":", out);
            kiln__view_str(out, info.path);
            fprintf(out, ",\"model\":%d,\"from\":\"%s\",",
                    refs[k].page_model == KILN_BLOB_NONE ? -1 : (int)refs[k].page_model, refs[k].from);
            kiln__view_bounds(out, refs[k].mn, refs[k].mx);
            fputc('}', out);
        }
    }
    fputs("],\"names\":[", out);
    int first_item = 1;
    for (uint32_t b = 0, ref_base = 0; b < w->blob_count && !w->failed; b++) {
        const kiln_blob *blob = w->blobs[b];
        uint32_t n = 0, nrefs = kiln_reference_count(blob);
        const kiln_blob_instance *inst = kiln_blob_instances(blob, &n);
        float *all = malloc((size_t)(n ? n : 1) * 64u);
        const float **models = malloc((size_t)(nrefs ? nrefs : 1) * sizeof *models);
        if (!all || !models) {
            free(all), free(models);
            kiln__view_oom(w);
            break;
        }
        for (uint32_t r = 0; r < nrefs; r++) models[r] = refs[ref_base + r].has_model ? refs[ref_base + r].model : NULL;
        kiln_result res = n ? kiln_instance_world_matrices_all(blob, NULL, models, KILN_INSTANCE_4X4, all, n) : KILN_OK;
        if (res != KILN_OK) kiln__view_fail(w, "placing the instances", res);
        /* listed reference by reference, as the page groups them */
        for (uint32_t r = 0; r < nrefs && res == KILN_OK; r++) {
            kiln_reference_info info;
            if (kiln_reference_get(blob, r, &info) != KILN_OK) continue;
            for (uint32_t i = 0; i < info.instance_count && shown_total < cap; i++) {
                const kiln_blob_instance *in = &inst[info.first_instance + i];
                memcpy(mats + (size_t)shown_total * 16u, all + (size_t)(info.first_instance + i) * 16u, 64u);
                ref_of[shown_total++] = ref_base + r;
                fputs(first_item ? "" : ",", out);
                first_item = 0;
                kiln__view_str(out, kiln_blob_string(blob, in->name));
            }
        }
        ref_base += nrefs;
        free(all);
        free(models);
    }
    fputs("],", out);
    kiln__view_floats(out, "matrices", mats, (size_t)shown_total * 16u);
    fputs(",\"ref\":", out);
    kiln__base64_write(out, ref_of, (size_t)shown_total * 4u);
    fprintf(out, ",\"shown\":%u}", shown_total);
    if (shown_total < total) {
        w->v->caps_hit |= 4u;
        kiln__view_note(w, "%u of %u instances placed (instance cap %u)", shown_total, total, w->v->args.max_instances);
    }
done:
    free(refs);
    free(mats);
    free(ref_of);
}
