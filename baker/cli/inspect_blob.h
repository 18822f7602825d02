/* Private: `kiln inspect` for baked blobs (the Cast summary lives in inspect_summary.h). */
#ifndef KILN_BAKER_INSPECT_BLOB_H
#define KILN_BAKER_INSPECT_BLOB_H

#include <stddef.h>

/* True when `data` starts with the blob magic. */
int kiln__is_blob(const void *data, size_t size);

/* Verifies the blob in `data` (copied to aligned memory first; any alignment accepted) and
 * prints the same layout as for Cast files, as text or JSON on stdout: metadata, models with
 * their skeletons, meshes, hair and materials, instances grouped by reference, and the
 * section table, then every animation clip (rate, range, encoding, tracks, scalars, overrides,
 * events). Returns a KILN_EXIT_* status (2 when the blob does not verify). */
int kiln__inspect_blob(const char *path, const void *data, size_t size, int json);

#endif
