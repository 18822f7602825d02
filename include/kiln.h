/* kiln.h - the whole runtime in one include: load a blob in place, sample, blend and pose
 * animation, solve IK and constraints, blend shapes, skinning and instance matrices.
 *
 * The baker's API (kiln/bake/bake.h, kiln/bake/source.h and the Cast reader and writer) is
 * installed only with the baker and included on its own.
 */
#ifndef KILN_H
#define KILN_H

#include "kiln/version.h"
#include "kiln/result.h"
#include "kiln/alloc.h"
#include "kiln/blob_format.h"
#include "kiln/blob.h"
#include "kiln/anim.h"
#include "kiln/blend_shape.h"
#include "kiln/rig.h"
#include "kiln/skin.h"
#include "kiln/instance.h"
#include "kiln/character.h"

#endif /* KILN_H */
