/* runtime/blob_verify_refs.h - verification of the 1.3 section that resolves references to
 * models (REFERENCE_MODELS, IRMD). Private; called by kiln_blob_load.
 */
#ifndef KILN_BLOB_VERIFY_REFS_H
#define KILN_BLOB_VERIFY_REFS_H

#include <stdint.h>

#include "kiln/blob.h"

/* Verifies the reference models of the `size`-byte blob at `base`. Precondition: the loader's
 * header, section-table and record checks passed. Checks: at most one IRMD section, layout
 * version 1, no unknown flags, stride and count; one record per REFERENCES record; each record
 * either (KILN_BLOB_NONE, 0) or a non-empty range inside MODELS. Returns KILN_OK when the blob
 * has no IRMD section. On failure `err` (optional) is filled as the loader fills it (code,
 * path such as "IRMD[1].first_model", byte offset, message). O(references); no allocation. */
kiln_result kiln__verify_reference_models(const void *base, uint64_t size, kiln_diag *err);

#endif /* KILN_BLOB_VERIFY_REFS_H */
