/* baker/cli_view.h - `kiln view`: the state its stages share. Private to the tool.
 *
 *   cli_view.c        the verb: options, the order of the stages
 *   cli_view_load.c   read the inputs, bake the source ones together, load the blobs
 *   cli_view_page.c   the page: HTML around the data document and the renderer (web/view.js)
 *   cli_view_data.c   the data document and its small writers (kiln__view_writer below)
 *   cli_view_model.c  models: materials, skeleton at rest, meshes skinned at the rest pose
 *   cli_view_clip.c   clips sampled by the runtime frame by frame (bones, weights, vertices)
 *   cli_view_instances.c  instances at their world matrices, and what each reference draws
 *   cli_base64.c      base64 of typed arrays, streamed to a FILE
 */
#ifndef KILN_CLI_VIEW_H
#define KILN_CLI_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "kiln/bake/bake.h"
#include "kiln/blob.h"
#include "kiln/skin.h"

#define KILN__VIEW_VERB "view"

/* Default caps: what a browser draws smoothly and a page of tens of MB holds. */
#define KILN__VIEW_MAX_VERTICES   200000u /* drawn vertices over all meshes */
#define KILN__VIEW_MAX_FRAMES     120u    /* frames sampled per clip */
#define KILN__VIEW_MAX_INSTANCES  10000u  /* instances placed */
#define KILN__VIEW_MAX_SKINNED    1000000u/* skinned vertices over all frames of all clips */
#define KILN__VIEW_MAX_INPUTS     64u

typedef struct kiln__view_args {
    const char *inputs[KILN__VIEW_MAX_INPUTS];
    uint32_t    input_count;
    const char *out_path;
    const char *title;
    uint32_t    max_vertices, max_frames, max_instances, max_skinned;
} kiln__view_args;

/* One input file and the blob its records live in. */
typedef struct kiln__view_input {
    const char     *path;
    kiln__cli_file  file;
    int             is_blob;
    const kiln_blob *blob;
    void           *mem;          /* aligned copy of a blob file */
    uint32_t        source;       /* its input index in the shared bake; KILN_BLOB_NONE: a blob */
} kiln__view_input;

typedef struct kiln__view {
    kiln__view_args   args;
    kiln__view_input  in[KILN__VIEW_MAX_INPUTS];
    kiln_bake_result  baked;       /* every source input, in one bake */
    const kiln_blob  *baked_blob;  /* NULL without source inputs */
    /* what the caps left out, counted while writing the data document */
    uint64_t          vertices_total, vertices_shown;
    uint64_t          skinned_used;
    uint32_t          caps_hit;    /* bit per cap: 1 vertices, 2 frames, 4 instances, 8 skinned */
    int               data_failed; /* the data document failed (not the file) */
} kiln__view;

/* cli_view_load.c: returns a KILN_EXIT_* status, errors printed */
int kiln__view_load(kiln__view *v);
void kiln__view_free(kiln__view *v);
/* The blobs to show, without duplicates: the shared bake first, then each blob input. */
uint32_t kiln__view_blobs(const kiln__view *v, const kiln_blob **out, uint32_t cap);

/* cli_view_data.c: writes the data document (one JSON object) to `out`. 0 on failure (out of
 * memory or a runtime error, printed). */
int kiln__view_write_data(kiln__view *v, FILE *out);

/* ---- the data document's writer (cli_view_data.c and the parts it calls) -------------------- */

#define KILN__VIEW_MAX_BLOBS (KILN__VIEW_MAX_INPUTS + 1u)
#define KILN__VIEW_NOTE 512

typedef struct kiln__view_writer {
    kiln__view *v;
    FILE       *out;
    const kiln_blob *blobs[KILN__VIEW_MAX_BLOBS];
    uint32_t    blob_count;
    uint32_t    first_model[KILN__VIEW_MAX_BLOBS]; /* page index of each blob's model 0 */
    uint32_t   *shown[KILN__VIEW_MAX_BLOBS];        /* per blob and mesh: vertices drawn */
    char      **notes;                              /* what the caps left out (malloc'd strings) */
    size_t      note_count, note_cap;
    int         failed;
} kiln__view_writer;

/* A JSON string that is also safe inside <script> ('<', '>' and '&' escaped). */
void kiln__view_str(FILE *out, const char *s);
void kiln__view_key(FILE *out, const char *key);
/* "key":"<base64 of count floats>" */
void kiln__view_floats(FILE *out, const char *key, const float *v, size_t count);
/* "bounds":[min x y z, max x y z] */
void kiln__view_bounds(FILE *out, const float *mn, const float *mx);
/* Adds a line to "capped" (what a cap or a limit left out). */
void kiln__view_note(kiln__view_writer *w, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Print the failure and mark the document failed; return 0 / NULL. */
int kiln__view_fail(kiln__view_writer *w, const char *what, kiln_result r);
void *kiln__view_oom(kiln__view_writer *w);

/* cli_view_model.c: model mi of blob b, as one JSON object. */
void kiln__view_model(kiln__view_writer *w, uint32_t b, uint32_t mi);
/* Vertices [0, shown) of `mesh` skinned with `skin` (NULL: unskinned) into pos and nrm (optional). */
kiln_result kiln__view_skin(const kiln_blob *blob, uint32_t mesh, uint32_t shown, const float *skin,
                            const kiln_skin_dual_quat *dq, uint32_t bone_count, const float *shaped, float *pos,
                            float *nrm);
/* cli_view_clip.c: clip `clip` of blob b, as one JSON object (preceded by a comma unless *first). */
void kiln__view_clip(kiln__view_writer *w, uint32_t b, uint32_t clip, uint32_t *skinned_left, int *first);
/* cli_view_instances.c: the "instances" member. */
void kiln__view_instances(kiln__view_writer *w);

/* cli_view_page.c: writes the whole page. 0 on failure with errno set. */
int kiln__view_write_page(void *view, FILE *out);

/* The renderer (web/view.js), embedded at build time. */
extern const char kiln__view_js[];

/* cli_base64.c: `size` bytes as base64, in one JSON string. */
void kiln__base64_write(FILE *out, const void *data, size_t size);

#endif /* KILN_CLI_VIEW_H */
