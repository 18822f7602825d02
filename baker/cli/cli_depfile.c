/* Make-style dependency files for `kiln bake --depfile`. The bake reads its inputs and nothing
 * else: an Instance's referenced file is recorded, never opened, so the inputs are the whole
 * list. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#include "cli_depfile.h"
#include "file_atomic.h"

typedef struct kiln__depfile {
    const char        *target;
    const char *const *inputs;
    uint32_t           count;
} kiln__depfile;

/* One path as GCC writes it in a -MD file, which Ninja and GNU Make both read back. */
static void kiln__dep_path(FILE *f, const char *s)
{
    for (size_t i = 0; s[i]; i++) {
        if (s[i] == ' ' || s[i] == '\t') {
            /* backslashes right before a space are doubled, then the space is escaped */
            for (size_t k = i; k > 0 && s[k - 1] == '\\'; k--) fputc('\\', f);
            fputc('\\', f);
        } else if (s[i] == '#') {
            fputc('\\', f);
        } else if (s[i] == '$') {
            fputc('$', f);
        }
        fputc(s[i], f);
    }
}

static int kiln__emit_depfile(void *user, FILE *f)
{
    const kiln__depfile *d = user;
    kiln__dep_path(f, d->target);
    fputc(':', f);
    for (uint32_t i = 0; i < d->count; i++) {
        fputs(" \\\n  ", f);
        kiln__dep_path(f, d->inputs[i]);
    }
    fputc('\n', f);
    if (ferror(f)) {
        if (!errno) errno = EIO;
        return 0;
    }
    return 1;
}

kiln_result kiln__depfile_write(const char *path, const char *target, const char *const *inputs, uint32_t count,
                                kiln_diag *err)
{
    kiln__depfile d = {target, inputs, count};
    return kiln__file_save_atomic(path, kiln__emit_depfile, &d, NULL, KILN_ERR_OUTPUT, err);
}
