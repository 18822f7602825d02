/* kiln/bake/cast_export.h - write source scenes (kiln/bake/source.h) as one Cast file.
 *
 *   kiln_source_scene *scenes[2] = {&hero, &walk};          // from kiln_source_import
 *   kiln_cast_export_result out;
 *   kiln_diag err;
 *   if (kiln_cast_export((const kiln_source_scene *const *)scenes, 2, NULL, &out, &err) == KILN_OK) {
 *       ... out.data, out.size ...
 *       kiln_cast_export_result_free(&out);
 *   }
 *   kiln_cast_export_save(scenes, 2, NULL, "hero.cast", &err);   // atomic
 *
 * Whatever an importer produced becomes Cast nodes that the official Blender and Maya plug-ins
 * (and kiln's own Cast importer) read. The conversion is lossless for everything the source
 * layer holds and Cast can say: importing the written file gives back the same values, bit for
 * bit (floats as stored, NaN payloads and negative zeros included).
 *
 * Layout:
 *   - one Root per scene, in the order given, so models from several inputs stay distinct
 *     (a Root is one scene in the Cast reference) and every scene keeps its own Metadata;
 *     clips of a scene that holds only animation (a `.anim`-like input) become Animation
 *     nodes under that scene's Root;
 *   - under each Root: Metadata (when the scene has any hint), then the Models, Instances and
 *     Animations in source order; under a Model: its Skeleton (Bones, then IK handles, then
 *     constraints), Materials (each with its File and Color slot children), Meshes, Hair,
 *     BlendShapes; under an Animation: Curves, CurveModeOverrides, NotificationTracks;
 *   - node hashes are 1, 2, 3, ... in the order the nodes are written, unique in the file
 *     (the format only asks for uniqueness within a Root), so the same scenes always give the
 *     same bytes; every reference (material `m`, blend shape base `b`, IK and constraint bones,
 *     material slots, instance `rf`) is the hash of its target.
 *
 * Values:
 *   - index arrays (faces, skin bone indices, blend shape vertex indices, hair segments, key
 *     frames) and counts take the smallest of b/h/i that holds their largest value, as the
 *     reference writer does; every Cast reader widens them back to u32. The bone parent `p` is
 *     always `i` (the format stores -1 as 0xFFFFFFFF) and packed RGBA8 colour layers are
 *     always `i`; float colour layers are v4;
 *   - a NULL name stays absent (the baker then names the item as it would have);
 *   - booleans are `b` (0 or 1); enumerations are the format's strings (`sm`, `cs`, `ct`,
 *     `kp`, `m`, `up`), written even where they equal the default, except `sm`, written for
 *     skinned meshes and for a non-linear method only;
 *   - visibility keys are b/h/i when every value is a whole number from 0 to 2^32-1 (the
 *     format's type for them), else `f`;
 *   - quaternions that Cast readers normalise on reading (bone lr/wr, Model and Instance r,
 *     orient constraint offsets) are written as a value whose normalisation is the source's
 *     value exactly: the value itself when normalising leaves it unchanged, else the nearest
 *     such value within one unit in the last place per component (one always exists for a
 *     quaternion that came out of that normalisation, as an imported one did);
 *   - tangent handedness, which Cast has no property for, is kept in a `vts` float array
 *     (one +1/-1 per vertex) that Cast readers without it ignore.
 *
 * Reported through options->diag (WARNING), the two things Cast cannot say as they are:
 *   - the scene's extras (lights, cameras, a format's details of an item such as a clip's play
 *     mode: what no bake stage reads) are not written: Cast has no place for them;
 *   - a material slot whose name a Cast reader could not tell apart (NULL, `n`, `t`, or a name
 *     used twice in one material) is written under the first free name "<name>_<k>" (k = 2,
 *     3, ...; a NULL name becomes "extra<k>"), so no slot is lost.
 *
 * Instance paths and Metadata `sr` are written as given: a Cast reader resolves them against
 * the written file's directory, so a caller writing to another directory than the input's
 * rebases `sr` first (`kiln convert` does). A Cast reader takes its hints (up axis, scene
 * root) from the first Metadata in the file only.
 *
 * The scenes are only read; they need not have been validated (an index out of range makes
 * the export fail with ERR_INVALID_ARGUMENT naming the item's source location) but a scene
 * that passes kiln_source_validate always exports.
 */
#ifndef KILN_BAKE_CAST_EXPORT_H
#define KILN_BAKE_CAST_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include "source.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_cast_export_options {
    const kiln_allocator *allocator;  /* NULL: libc. The writer's memory and the result's. */
    kiln_diag_sink        diag;       /* what is not written as it is (WARNING); fn NULL: discarded */
    /* Optional, one per scene: the input each scene was imported from. Diagnostic paths then
     * read "<input>:<loc.path>", as kiln_bake's do; without them, "scene[<i>]:<loc.path>". */
    const char *const    *input_paths;
} kiln_cast_export_options;

typedef struct kiln_cast_export_result {
    void          *data;              /* the Cast file, `size` bytes, from the allocator */
    size_t         size;
    kiln_allocator allocator;         /* to free `data` */
} kiln_cast_export_result;

/* Writes `scene_count` scenes (>= 1) into one Cast file in memory. `options` may be NULL. On
 * failure *out is zeroed and err (may be NULL) says why, naming the item's source location:
 * ERR_INVALID_ARGUMENT (NULL arguments, a NULL array with a non-zero count, an index or an
 * enumeration out of range), ERR_LIMIT (an array or a node over the format's 32-bit sizes, a
 * material with more than the 256 properties a Cast reader scans for slots), ERR_OUT_OF_MEMORY. */
KILN_API kiln_result kiln_cast_export(const kiln_source_scene *const *scenes, uint32_t scene_count,
                                      const kiln_cast_export_options *options, kiln_cast_export_result *out,
                                      kiln_diag *err);

/* The same, written to `path` atomically: a temporary file in the same directory, fsync,
 * rename; on any failure no file is created and an existing `path` is left untouched (ERR_IO
 * with the path and the system's reason). */
KILN_API kiln_result kiln_cast_export_save(const kiln_source_scene *const *scenes, uint32_t scene_count,
                                           const kiln_cast_export_options *options, const char *path,
                                           kiln_diag *err);

/* Releases out->data and zeroes *out. NULL and an already freed result are allowed. */
KILN_API void kiln_cast_export_result_free(kiln_cast_export_result *out);

#ifdef __cplusplus
}
#endif

#endif /* KILN_BAKE_CAST_EXPORT_H */
