/* Private: `kiln bake --depfile FILE`, a Make-style dependency file naming every file the bake
 * read, so Ninja (`deps = gcc`) and Make (`-include`) rebake exactly when one changes.
 */
#ifndef KILN_BAKER_CLI_DEPFILE_H
#define KILN_BAKER_CLI_DEPFILE_H

#include <stdint.h>

#include "kiln/result.h"

/* Writes "<target>: <inputs...>" to `path` atomically (no partial file), one input per
 * continued line, with spaces, '#' and '\' escaped as GCC's -MD does and '$' doubled. Paths
 * are written as given. Returns KILN_OK, or ERR_OUTPUT with `err` saying why. */
kiln_result kiln__depfile_write(const char *path, const char *target, const char *const *inputs, uint32_t count,
                                kiln_diag *err);

#endif
