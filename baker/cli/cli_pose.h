/* baker/cli_pose.h - `kiln pose`: the state its stages share. Private to the tool.
 *
 *   cli_pose.c         the verb: options, and the order of the stages
 *   cli_pose_input.c   read, bake and load the inputs; find the skeleton, clip and scalars;
 *                      bind; sample a frame (then hand it to the deform stage)
 *   cli_pose_deform.c  after local to model: IK handles and constraints (kiln_rig_solve), and
 *                      the skinned vertices of --skin (blend shapes, then kiln_skin_mesh)
 *   cli_pose_print.c   text and JSON output
 */
#ifndef KILN_CLI_POSE_H
#define KILN_CLI_POSE_H

#include <stdint.h>

#include "cli.h"
#include "kiln/anim.h"
#include "kiln/bake/bake.h"
#include "kiln/bake/source.h"
#include "kiln/blob.h"
#include "kiln/rig.h"
#include "kiln/skin.h"

#define KILN__POSE_VERB "pose"

/* The verb the shared pose stages report under: "pose", or "view" and "plot", which set it
 * before they use them. */
extern const char *kiln__pose_verb;

/* Prints "kiln: VERB: " and the formatted message to stderr (no newline added). */
void kiln__pose_err(const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* More frames than anyone reads, few enough that a typo cannot fill the disk for an hour. */
#define KILN__POSE_MAX_FRAMES 1000000u

typedef struct kiln__pose_args {
    const char *model_path, *anim_path; /* anim_path NULL: the clip comes from MODEL */
    const char *clip;                   /* --clip, or NULL */
    double     *frames;                 /* parsed --frames, frame_count values */
    uint32_t    frame_count;
    int         json, lossy, simd_set;
    kiln_loop   loop;
    kiln_simd   simd;
    float       anim_error_m, anim_distance_m; /* 0: the baker's defaults */
    int         no_rig;                 /* --no-rig: FK only */
    const char *skin_mesh;              /* --skin MESH, or NULL */
} kiln__pose_args;

/* A blob the pose reads: baked here from Cast inputs, or loaded from a file. */
typedef struct kiln__pose_blob {
    const kiln_blob  *blob;
    void             *mem;        /* aligned copy of a file (NULL for a bake) */
    kiln_bake_result  baked;      /* blob == NULL when not baked */
} kiln__pose_blob;

/* One input: its bytes, and where its records ended up. */
typedef struct kiln__pose_input {
    const char     *path;
    kiln__cli_file  file;
    int             is_blob;
    kiln__pose_blob *where;       /* the blob holding its records */
    uint32_t        source;       /* its input index in that bake; KILN_BLOB_NONE: all records */
} kiln__pose_input;

typedef struct kiln__pose_bs {
    const char *name;             /* points into shape_scene (or a blob's strings) */
    float       ts;
} kiln__pose_bs;

typedef struct kiln__pose {
    kiln__pose_args   args;
    kiln__pose_input  in[2];      /* MODEL, ANIM */
    uint32_t          input_count;
    kiln__pose_blob   baked, loaded[2];
    /* the skeleton */
    const kiln_blob  *skel_blob;
    uint32_t          model, skeleton, bone_count;
    const kiln_blob_bone *bones;  /* the skeleton's, parent-first */
    uint32_t         *order;      /* order[k]: skeleton bone printed k-th (Cast order) */
    int32_t          *cast_parent;/* Cast parent index of the k-th printed bone, -1 for roots */
    /* the clip */
    const kiln_blob  *anim_blob;
    uint32_t          clip;
    const kiln_blob_animation *anim;
    const kiln_blob_anim_scalar *scalars;
    float            *ts;         /* per scalar: blend shape clamp, or < 0 for none */
    uint8_t          *shown;      /* per scalar: 0 when a later track of the same kind and name wins */
    kiln__pose_bs    *shapes;     /* BlendShapes of MODEL's model (its imported scene, or a blob's records) */
    uint32_t          shape_count;
    kiln_source_scene shape_scene; /* MODEL imported again for its shapes (blocks NULL: none) */
    /* runtime memory */
    void             *binding_mem, *context_mem;
    kiln_anim_binding *binding;
    kiln_soa_xform   *pose;
    float            *matrices, *values;
    uint64_t          non_finite; /* values printed as null / "-" */
    /* IK handles and constraints (cli_pose_deform.c); rig_scratch NULL: none, or --no-rig */
    uint32_t          ik_count, constraint_count;
    void             *rig_scratch;
    size_t            rig_scratch_size;
    kiln_rig_report   rig_report;  /* of the last frame */
    /* --skin (cli_pose_deform.c) */
    uint32_t          skin_mesh;   /* KILN_BLOB_NONE: not asked */
    const kiln_blob_mesh *mesh;
    float            *skinned;     /* 3 floats per vertex */
    float            *shaped;      /* the blend-shaped bind positions, NULL without shapes */
    float            *skin_matrices;
    kiln_skin_dual_quat *dual_quats;
    uint32_t         *mesh_shapes, *shape_tracks; /* the mesh's shapes, the clip track of each */
    float            *shape_weights;
    uint32_t          mesh_shape_count;
} kiln__pose;

/* cli_pose.c: releases everything the stages allocated (also those of kiln view and kiln plot) */
void kiln__pose_free(kiln__pose *p);

/* cli_pose_input.c; each returns a KILN_EXIT_* status and prints its own errors */
int kiln__pose_load(kiln__pose *p);
int kiln__pose_find_skeleton(kiln__pose *p);
int kiln__pose_find_clip(kiln__pose *p);
int kiln__pose_collect_shapes(kiln__pose *p);
int kiln__pose_prepare_scalars(kiln__pose *p);
int kiln__pose_bind(kiln__pose *p);
/* Samples frame `frame` into pose, matrices and values, then runs the deform stage. */
int kiln__pose_sample(kiln__pose *p, double frame);
const char *kiln__pose_clip_name(const kiln_blob *blob, const kiln_blob_animation *a);
/* A whole-string unsigned decimal (at most 9 digits) into *out; 0 when s is not one. */
int kiln__pose_parse_index(const char *s, uint32_t *out);
/* Zeroed memory aligned to 64 bytes (free with free()), NULL when out of memory. */
void *kiln__pose_aligned(size_t size);
void kiln__pose_out_of_memory(void);

/* cli_pose_deform.c */
int kiln__pose_deform_prepare(kiln__pose *p);
int kiln__pose_deform(kiln__pose *p, double frame);
void kiln__pose_deform_free(kiln__pose *p);

/* cli_pose_print.c */
int kiln__pose_run_json(kiln__pose *p);
int kiln__pose_run_text(kiln__pose *p);

#endif /* KILN_CLI_POSE_H */
