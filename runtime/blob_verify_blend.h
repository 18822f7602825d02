/* runtime/blob_verify_blend.h - verification of the 1.2 blend shape section (BSHP) and of the
 * sparse delta arrays it points at. Private; called by kiln_blob_load.
 */
#ifndef KILN_BLOB_VERIFY_BLEND_H
#define KILN_BLOB_VERIFY_BLEND_H

#include <stdint.h>

#include "kiln/blob.h"

/* Verifies the blend shapes of the `size`-byte blob at `base`. Precondition: the loader's
 * header, section-table and record checks passed (every section inside the blob, 64-byte
 * aligned, not overlapping; STRS ends with NUL; MESH records valid). Checks: at most one BSHP
 * section, layout version 1, no unknown flags, stride and count; for every record: the name
 * inside STRS, the mesh index below the mesh count, target_scale finite and > 0, reserved
 * fields zero, the index and delta arrays 16-byte aligned and inside DATA, the indices
 * strictly ascending and below the mesh's vertex_count, every delta finite; name-index entries
 * of kind BSHP name an existing record. Returns KILN_OK when the blob has no BSHP section. On
 * failure `err` (optional) is filled as the loader fills it (code, path such as
 * "BSHP[2].indices", byte offset, message). O(records + deltas); no allocation. */
kiln_result kiln__verify_blend_shapes(const void *base, uint64_t size, kiln_diag *err);

#endif /* KILN_BLOB_VERIFY_BLEND_H */
