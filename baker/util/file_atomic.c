/* Atomic whole-file saves: temporary file, fsync, rename, directory fsync. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "diag.h"
#include "ds.h"
#include "file_atomic.h"

static kiln_result kiln__save_error(kiln_diag *err, kiln_result code, const char *what, const char *path, int errnum)
{
    char text[128];
    if (strerror_r(errnum, text, sizeof text) != 0) snprintf(text, sizeof text, "errno %d", errnum);
    kiln__diag_fill(err, code, KILN_SEVERITY_ERROR, NULL, KILN_CAST_NONE, NULL, KILN_NO_OFFSET, "%s '%s': %s", what,
                    path, text);
    return code;
}

/* mkstemp creates 0600 files. A replaced file keeps its permissions; a new one gets 0644
 * (reading the umask would mean changing it, which is process-wide and racy). */
static void kiln__set_mode(int fd, const char *path)
{
    struct stat st;
    mode_t mode = 0644;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) mode = st.st_mode & 07777;
    (void)fchmod(fd, mode);
}

/* Makes the rename durable. Best effort: the data is already safe, and some file systems
 * refuse fsync on directories. A stack buffer keeps this step from allocating, so a failed
 * allocation can never be hidden behind a best-effort step; paths too long for it skip it. */
static void kiln__sync_dir(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    size_t len = slash ? (size_t)(slash - path) : 0;
    if (len >= sizeof dir) return;
    if (slash == path) len = 1; /* "/file": the root directory */
    memcpy(dir, slash ? path : ".", slash ? len : 1);
    dir[slash ? len : 1] = 0;
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

kiln_result kiln__file_save_atomic(const char *path, kiln__file_emit_fn emit, void *user, const kiln_allocator *a,
                                   kiln_result fail_code, kiln_diag *err)
{
    if (!path || !path[0]) {
        kiln__diag_fill(err, KILN_ERR_INVALID_ARGUMENT, KILN_SEVERITY_ERROR, NULL, KILN_CAST_NONE, NULL,
                        KILN_NO_OFFSET, "no output path");
        return KILN_ERR_INVALID_ARGUMENT;
    }
    /* Extending the target's own name keeps the temporary file in the target's directory. */
    char *tmp = kiln__strfmt(a, "%s.tmp-XXXXXX", path);
    if (!tmp) {
        kiln__diag_fill(err, KILN_ERR_OUT_OF_MEMORY, KILN_SEVERITY_ERROR, NULL, KILN_CAST_NONE, NULL, KILN_NO_OFFSET,
                        "saving '%s'", path);
        return KILN_ERR_OUT_OF_MEMORY;
    }
    kiln_result r = KILN_OK;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        r = kiln__save_error(err, fail_code, "cannot create a temporary file next to", path, errno);
        kiln__free(a, tmp);
        return r;
    }
    kiln__set_mode(fd, path);
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        r = kiln__save_error(err, fail_code, "cannot open a stream for", path, errno);
        close(fd);
    } else {
        errno = 0;
        int ok = emit(user, f) && fflush(f) == 0 && fsync(fileno(f)) == 0;
        int saved = errno ? errno : EIO;
        if (fclose(f) != 0 && ok) {
            ok = 0;
            saved = errno;
        }
        if (!ok) r = kiln__save_error(err, fail_code, "cannot write", path, saved);
        else if (rename(tmp, path) != 0) r = kiln__save_error(err, fail_code, "cannot rename the temporary file to", path, errno);
    }
    if (r != KILN_OK) unlink(tmp);
    else kiln__sync_dir(path);
    kiln__free(a, tmp);
    return r;
}

typedef struct kiln__bytes {
    const void *data;
    size_t      size;
} kiln__bytes;

static int kiln__emit_bytes(void *user, FILE *f)
{
    const kiln__bytes *b = user;
    return b->size == 0 || fwrite(b->data, 1, b->size, f) == b->size;
}

kiln_result kiln__file_save_bytes(const char *path, const void *data, size_t size, const kiln_allocator *a,
                                  kiln_result fail_code, kiln_diag *err)
{
    kiln__bytes b = {data, size};
    return kiln__file_save_atomic(path, kiln__emit_bytes, &b, a, fail_code, err);
}
