/* Private: `kiln inspect` on the imported source scene (inspect_source.c). */
#ifndef KILN_BAKER_INSPECT_SOURCE_H
#define KILN_BAKER_INSPECT_SOURCE_H

#include <stddef.h>

/* Imports `data` (format: an importer name, NULL = from the leading bytes) and prints the
 * source scene as text on stdout, or as one JSON document (kind "source"); the importer's
 * diagnostics go to stderr (only errors with `quiet`). Returns the exit status: 0, or 2 when
 * the input cannot be imported (an unrecognised input names the formats this build reads). */
int kiln__inspect_source(const char *path, const void *data, size_t size, const char *format, int json, int quiet);

#endif
