/* runtime/blob_verify_anim.h - verification of the 1.1 animation sections (ANIM, AJNT, ASCL,
 * AOVR, AEVT) and of every clip's sample data. Private; called by kiln_blob_load.
 */
#ifndef KILN_BLOB_VERIFY_ANIM_H
#define KILN_BLOB_VERIFY_ANIM_H

#include <stdint.h>

#include "kiln/blob.h"

/* Verifies the animation sections of the `size`-byte blob at `base`. Precondition: the
 * loader's header and section-table checks passed (every section inside the blob, 64-byte
 * aligned, not overlapping; STRS starts and ends with NUL). Checks, for each section kind: at
 * most one section, layout version 1, record stride and count; for every record: strings
 * inside STRS, ranges inside their tables, enum values, reserved fields zero, floats finite;
 * for every clip: frame range and counts consistent, its sample data inside DATA and 16-byte
 * aligned, the track table sorted with valid widths and row offsets, constants and raw rows
 * finite, quantisation ranges finite; scalar track data inside DATA and finite; events sorted
 * and inside the clip's frame range. Returns KILN_OK when the blob has no animation sections.
 * On failure `err` (optional) is filled as the loader fills it (code, path such as
 * "ANIM[0].row_stride", byte offset, message). O(size of the animation data); no allocation. */
kiln_result kiln__verify_animation(const void *base, uint64_t size, kiln_diag *err);

#endif /* KILN_BLOB_VERIFY_ANIM_H */
