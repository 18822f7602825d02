/* Private: the Cast importer's walk, shared by its files (cast_import.c: models and the scene;
 * cast_import_anim.c: animations). */
#ifndef KILN_BAKER_CAST_IMPORT_H
#define KILN_BAKER_CAST_IMPORT_H

#include "kiln/bake/source.h"
#include "kiln/bake/cast.h"
#include "kiln/bake/cast_scene.h"

typedef struct kiln__cast_import {
    const kiln_cast_doc *doc;
    kiln_source_scene   *scene;
    const kiln_diag_sink *sink;           /* the import options' sink (accessor reports) */
} kiln__cast_import;

/* loc of `node`: its node path (as kiln_cast_node_path writes it for diagnostics), offset and
 * size. ERR_OUT_OF_MEMORY when the path cannot be copied. */
kiln_result kiln__cast_loc(kiln__cast_import *im, uint32_t node, kiln_source_loc *loc);

/* Per-node steps of the walk (also used by the bake's Cast walk while it moves onto the source
 * layer): KILN_OK, ERR_OUT_OF_MEMORY, or the accessor's error (reported; the node is dropped). */
kiln_result kiln__cast_import_instance(kiln__cast_import *im, uint32_t node, kiln_source_instance *out);
kiln_result kiln__cast_import_material(kiln__cast_import *im, uint32_t node, kiln_source_material *out);
/* The material index is left KILN_SOURCE_NONE (the model's walk links it). */
kiln_result kiln__cast_import_hair(kiln__cast_import *im, uint32_t node, kiln_source_hair *out);
/* Material index NONE; loc.size = the payload bytes of its arrays; "mesh<ordinal>" when nameless. */
kiln_result kiln__cast_import_mesh(kiln__cast_import *im, uint32_t node, kiln_source_mesh *out);
/* Mesh index NONE: *base_node receives the Mesh node it names (the caller resolves it). A
 * shape without a resolvable base is dropped, reported "BlendShape dropped" when the accessor
 * said nothing. */
kiln_result kiln__cast_import_blend_shape(kiln__cast_import *im, uint32_t node, kiln_source_blend_shape *out,
                                          uint32_t *base_node);
/* The Skeleton's bones (parents sanitised, unreadable bones kept at the identity and reported);
 * its IK handles and constraints are left to the two calls below. A parent cycle fails
 * (ERR_CAST_BONE_CYCLE, reported). */
kiln_result kiln__cast_import_skeleton(kiln__cast_import *im, uint32_t skel, kiln_source_skeleton *out);
/* One IKHandle / Constraint of a skeleton of `bone_count` bones; dropped (reported) when its
 * required bones do not resolve (constraint: to two distinct bones). */
kiln_result kiln__cast_import_ik_handle(kiln__cast_import *im, uint32_t node, uint32_t bone_count,
                                        kiln_source_ik_handle *out);
kiln_result kiln__cast_import_constraint(kiln__cast_import *im, uint32_t node, uint32_t bone_count,
                                         kiln_source_constraint *out);
/* The file's Metadata (kiln_cast_find_metadata) into im->scene->metadata; absent or unreadable
 * leaves it empty. */
kiln_result kiln__cast_import_metadata(kiln__cast_import *im);

/* Fills `out` from Animation node (its accessor and those of its Curves, CurveModeOverrides and
 * NotificationTracks report in file order; a child that fails is left out) `node`. KILN_OK, ERR_OUT_OF_MEMORY, or the accessor's error
 * (reported; the caller drops the clip). */
kiln_result kiln__cast_import_animation(kiln__cast_import *im, uint32_t node, kiln_source_animation *out);

#endif
