/* Private: what `kiln inspect` knows about one Cast file, and how it learns it.
 *
 * The walk (inspect_walk.c) visits every node once, in file order, and reads it with its typed
 * accessor so that the diagnostics are exactly those a bake would see. It keeps only small
 * records (counts, and names pointing into the file buffer), never per-vertex data: the
 * accessors already scan what needs scanning (faces, hair segments), and the walk adds only the
 * key frames of curves and notification tracks, which it needs for the frame range.
 *
 * Records of a Model's parts and of an Animation's tracks are chained to their owner as they are
 * met; owners always come first because storage is depth-first pre-order. Parts found under an
 * unexpected parent (reported by the accessor) are chained to an "unattached" owner (node
 * KILN_CAST_NONE) instead of being lost from the summary; that holder is the last record.
 *
 * The printers (inspect_text.c, inspect_json.c) read only this summary, and the document only to
 * spell node paths (kiln_cast_node_path).
 */
#ifndef KILN_BAKER_INSPECT_SUMMARY_H
#define KILN_BAKER_INSPECT_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/bake/cast.h"
#include "kiln/bake/cast_scene.h"

/* Diagnostics kept for printing; more are counted, not stored (a hostile file can raise one
 * per node). */
#define KILN__INSPECT_MAX_DIAGS 10000u

/* Node kinds in the order they are listed; one more slot counts every unknown id. */
#define KILN__INSP_KINDS 18u

enum { KILN__INSP_MESH, KILN__INSP_HAIR, KILN__INSP_BLEND, KILN__INSP_SKELETON, KILN__INSP_MATERIAL,
       KILN__INSP_PART_KINDS };

enum { KILN__INSP_COLOR_MISSING, KILN__INSP_COLOR_PACKED, KILN__INSP_COLOR_FLOAT };

/* A material reference of a mesh or hair: no reference when the hash is 0; unresolved when the
 * node is KILN_CAST_NONE. */
typedef struct kiln__insp_material_ref {
    uint64_t    hash;
    uint32_t    node;
    const char *name;                               /* of the node, or NULL */
} kiln__insp_material_ref;

typedef struct kiln__insp_mesh_rec {
    const char *name;
    uint32_t    vertices, faces, uv_layers, color_layers, max_influence;
    uint32_t    bad_index_faces, degenerate_faces;
    uint8_t     uv_present[KILN_CAST_MAX_LAYERS];
    uint8_t     color_type[KILN_CAST_MAX_LAYERS];   /* KILN__INSP_COLOR_* */
    uint8_t     normals, tangents, dual_quat;
    kiln__insp_material_ref material;
} kiln__insp_mesh_rec;

typedef struct kiln__insp_hair_rec {
    const char *name;
    uint32_t    strands, particles;
    kiln__insp_material_ref material;
} kiln__insp_hair_rec;

typedef struct kiln__insp_blend_rec {
    const char *name;
    const char *base_mesh;                          /* its name, or NULL */
    uint32_t    pairs;
    float       target_scale;
} kiln__insp_blend_rec;

typedef struct kiln__insp_material_rec {
    const char *name, *type;
    uint32_t    first_slot, slot_count;
} kiln__insp_material_rec;

/* A part of a Model. `ok` is 0 when the accessor rejected the node (it is then dropped by the
 * baker; the summary still lists it so that the count matches the node table). */
typedef struct kiln__insp_part {
    uint32_t node, next, kind, ok;
    union {
        kiln__insp_mesh_rec     mesh;
        kiln__insp_hair_rec     hair;
        kiln__insp_blend_rec    blend;
        kiln_cast_skeleton      skeleton;
        kiln__insp_material_rec material;
    } u;
} kiln__insp_part;

/* A material slot: `id` is KILN_CAST_ID_FILE (path), KILN_CAST_ID_COLOR (rgba, linear) or 0 when
 * unresolved (hash). The name is not NUL-terminated. */
typedef struct kiln__insp_slot {
    const char *name;
    uint32_t    name_len, id, node;
    uint64_t    hash;
    const char *path;
    float       rgba[4];
    uint32_t    linear;
} kiln__insp_slot;

typedef struct kiln__insp_model {
    uint32_t        node;             /* KILN_CAST_NONE: holder of parts found outside any Model */
    uint32_t        ok;
    kiln_cast_model m;
    uint32_t        first[KILN__INSP_PART_KINDS], last[KILN__INSP_PART_KINDS];
} kiln__insp_model;

typedef struct kiln__insp_track {
    const char *name;
    uint32_t    keys, next;
} kiln__insp_track;

typedef struct kiln__insp_anim {
    uint32_t            node;         /* KILN_CAST_NONE: holder of tracks outside any Animation */
    uint32_t            ok;
    kiln_cast_animation a;
    uint32_t            has_keys, min_frame, max_frame;
    uint32_t            curves, curves_dropped, overrides, skeletons;
    uint32_t            by_prop[KILN_CAST_CURVE_PROP_COUNT_];
    uint32_t            by_mode[3];
    uint32_t            first_track, last_track;
} kiln__insp_anim;

typedef struct kiln__insp_summary {
    const char          *path;
    size_t               file_size;
    const kiln_cast_doc *doc;         /* NULL when the file did not parse */
    uint32_t             version, roots;
    kiln_diag_sink       sink;        /* collects into diags / by_severity */

    kiln_diag *diags;
    size_t     diag_count, diag_cap;
    uint64_t   by_severity[3];        /* every diagnostic received, stored or not */

    uint64_t kind_count[KILN__INSP_KINDS + 1];
    uint32_t opaque;                  /* known-kind nodes the parser skipped */

    kiln__insp_model *models;   size_t model_count, model_cap;    /* file order, holder last */
    kiln__insp_part  *parts;    size_t part_count, part_cap;
    kiln__insp_slot  *slots;    size_t slot_count, slot_cap;
    kiln__insp_anim  *anims;    size_t anim_count, anim_cap;      /* file order, holder last */
    kiln__insp_track *tracks;   size_t track_count, track_cap;
    const char      **instances; size_t instance_count, instance_cap;  /* paths, sorted */
    uint32_t          instances_dropped;
    uint32_t          meta_node;      /* KILN_CAST_NONE when there is no readable Metadata */
    kiln_cast_metadata meta;
    int               oom;

    /* Used only during the walk. */
    uint32_t *owner;                  /* per node: its model or animation record */
    uint32_t  loose_model, loose_anim;
} kiln__insp_summary;

/* ---- inspect_walk.c ------------------------------------------------------------------------- */

/* Zeroes `s` and points its sink at it. */
void kiln__insp_init(kiln__insp_summary *s, const char *path, size_t file_size);
void kiln__insp_free(kiln__insp_summary *s);

/* Adds one diagnostic (the sink's function). */
void kiln__insp_add_diag(kiln__insp_summary *s, const kiln_diag *d);

/* Reads every node of `doc` into `s`. Returns 0 when out of memory (`s->oom`); the summary is
 * then incomplete and must not be printed. */
int kiln__insp_walk(kiln__insp_summary *s, const kiln_cast_doc *doc);

/* MANIFEST.md's name of kind slot `k` of kind_count (kiln_cast_id_name), "Unknown" for the
 * last slot. */
const char *kiln__insp_kind_name(size_t k);

/* ---- inspect_summary.c: what both printers derive from the records ---------------------------- */

/* True when the transform is the identity. */
int kiln__insp_default_transform(const kiln_cast_model *m);

/* "x", "y", "z", or NULL. */
const char *kiln__insp_up_name(kiln_cast_up_axis up);

/* "absolute", "relative", "additive". */
extern const char *const kiln__insp_mode_names[3];

/* "dropped", "packed", "float" for KILN__INSP_COLOR_*. */
extern const char *const kiln__insp_color_names[3];

/* The playback range of reference D.1: [min kb, max kb] over curves and notification tracks,
 * [0, 1] without keys; duration = max frame / fps (the clip starts at frame 0). */
void kiln__insp_range(const kiln__insp_anim *a, uint32_t *lo, uint32_t *hi, double *duration_s);

/* The end of the run of equal instance paths starting at `i` (the paths are sorted). */
size_t kiln__insp_instance_run(const kiln__insp_summary *s, size_t i);

/* Total diagnostics received, stored or not. */
uint64_t kiln__insp_diag_total(const kiln__insp_summary *s);

/* ---- the printers (stdout) ---------------------------------------------------------------------- */

void kiln__insp_print_text(const kiln__insp_summary *s);                  /* inspect_text.c */
void kiln__insp_print_json(const kiln__insp_summary *s, int exit_status); /* inspect_json.c */
/* The document of a file that did not parse: its path and size, the fault, the diagnostics. */
void kiln__insp_print_json_failure(const kiln__insp_summary *s, const kiln_diag *fault, int exit_status);

#endif
