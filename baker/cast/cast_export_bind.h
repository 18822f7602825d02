/* Private: a clip's rest keys meet the skeleton it binds to, for the Cast export.
 *
 * A clip may flag keys that stand for the rest value of the skeleton it is bound to
 * (kiln_source_curve.rest_keys: a Unigine .anim's channels held at the bind pose). A Cast file
 * has no such flag, so the export writes the value the bake would sample there: the rest local
 * of the skeleton the bake binds the clip to, chosen the bake's way among the exported scenes.
 */
#ifndef KILN_BAKER_CAST_EXPORT_BIND_H
#define KILN_BAKER_CAST_EXPORT_BIND_H

#include <stdint.h>
#include "kiln/bake/source.h"

/* Whether a curve drives a bone's transform (a target, a translation, rotation or scale channel). */
int kiln__export_is_transform(const kiln_source_curve *c);

/* The skeleton sharing the most bone names with the clip's transform curves: the clip's own
 * scene's first, then the other scenes in order (the first of equals wins). NULL when none
 * shares a name. */
const kiln_source_skeleton *kiln__export_clip_skeleton(const kiln_source_scene *const *scenes, uint32_t scene_count,
                                                       uint32_t own, const kiln_source_animation *a);

/* Index of the first bone named `name` (an unnamed bone is "bone<index>"), or -1. */
int32_t kiln__export_bone_named(const kiln_source_skeleton *sk, const char *name);

/* The rest local of bone `b` as the bake derives it, as 10 components (t, r x y z w, s): the
 * local transform where the bone has one, else from its world transform and its parents'
 * (scale-free chain); a scale with a zero component is (1, 1, 1). */
void kiln__export_rest_local(const kiln_source_skeleton *sk, uint32_t b, float rest[10]);

#endif
