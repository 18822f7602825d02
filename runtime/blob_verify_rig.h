/* runtime/blob_verify_rig.h - verification of the 1.2 rigging sections CONSTRAINTS (CNST) and
 * IK_HANDLES (IKHD). Private; called by kiln_blob_load.
 */
#ifndef KILN_BLOB_VERIFY_RIG_H
#define KILN_BLOB_VERIFY_RIG_H

#include <stdint.h>

#include "kiln/blob.h"

/* Verifies the constraint and IK handle sections of the `size`-byte blob at `base`.
 * Precondition: the loader's header, section-table, skeleton and bone checks passed (sections
 * inside the blob and not overlapping, every skeleton's bone range inside BONE, parents below
 * their bone). Checks, for each kind: at most one section, layout version 1, no flag but
 * REQUIRED, record stride and count; records grouped by skeleton in ascending order and, within
 * a skeleton, in ascending `order` (what kiln_rig_* rely on to find a skeleton's records).
 * Constraints: name inside STRS, type known, skeleton < SKEL count, bone and target below its
 * bone count and different, only SKIP_* flags, weight in [0, 1], offset finite with w = 0 for
 * POINT, w = 1 for SCALE and a quaternion of length 1 within 1e-3 for ORIENT, reserved zero.
 * IK handles: name, skeleton, start and end below the bone count, target, pole vector and pole
 * bones below it or NONE, only known flags, target offset finite, reserved zero, and the chain
 * consistent: chain_length >= 2, at most the skeleton's depth, and end's (chain_length - 1)-th
 * ancestor is start. Name index entries of both kinds index a record. Returns KILN_OK when the
 * blob has neither section. On failure `err` (optional) is filled as the loader fills it (code,
 * path such as "IKHD[0].chain_length", byte offset, message). O(records × chain length + name
 * entries); no allocation. */
kiln_result kiln__verify_rig(const void *base, uint64_t size, kiln_diag *err);

#endif /* KILN_BLOB_VERIFY_RIG_H */
