/* kiln_blob_open_file: map a blob file read-only (POSIX), or read it into 64-byte-aligned
 * memory from the caller's allocator, then verify it in place with kiln_blob_load. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1 /* MAP_POPULATE on glibc */
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/blob.h"

#if defined(__unix__) || defined(__APPLE__)
#define KILN__POSIX_FILE 1
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#else
#define KILN__POSIX_FILE 0
#endif

static kiln_result kiln__file_fail(kiln_diag *err, kiln_result code, const char *path, const char *what, int errnum)
{
    if (!err) return code;
    memset(err, 0, sizeof *err);
    err->code = code;
    err->severity = KILN_SEVERITY_ERROR;
    err->offset = KILN_NO_OFFSET;
    snprintf(err->path, sizeof err->path, "%s", path);
    if (errnum) snprintf(err->message, sizeof err->message, "%.200s: %s (%s)", path, what, strerror(errnum));
    else snprintf(err->message, sizeof err->message, "%.200s: %s", path, what);
    return code;
}

static void *kiln__file_alloc(const kiln_allocator *a, size_t size)
{
    return a->realloc_fn ? a->realloc_fn(a->user, NULL, size) : malloc(size);
}

static void kiln__file_free(const kiln_allocator *a, void *p)
{
    if (!p) return;
    if (a->realloc_fn) a->free_fn(a->user, p);
    else free(p);
}

/* Over-allocates by 63 bytes and aligns up: allocators only promise malloc alignment. */
static unsigned char *kiln__aligned(void *base)
{
    return (unsigned char *)base + ((KILN_BLOB_ALIGN - (uintptr_t)base % KILN_BLOB_ALIGN) % KILN_BLOB_ALIGN);
}

void kiln_blob_close_file(kiln_blob_file *file)
{
    if (!file) return;
    if (file->memory) {
#if KILN__POSIX_FILE
        if (file->mapped) munmap(file->memory, file->size);
        else
#endif
            kiln__file_free(&file->allocator, file->memory);
    }
    memset(file, 0, sizeof *file);
}

kiln_result kiln_blob_open_file(const char *path, uint32_t flags, const kiln_allocator *allocator, kiln_blob_file *out,
                                kiln_diag *err)
{
    if (out) memset(out, 0, sizeof *out);
    if (!path || !out) return kiln__file_fail(err, KILN_ERR_INVALID_ARGUMENT, path ? path : "", "path or out is NULL", 0);
    if (allocator && allocator->realloc_fn && allocator->free_fn) out->allocator = *allocator;
    const unsigned char *bytes = NULL;

#if KILN__POSIX_FILE
    int fd = open(path, O_RDONLY);
    if (fd < 0) return kiln__file_fail(err, KILN_ERR_IO, path, "cannot open", errno);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return kiln__file_fail(err, KILN_ERR_IO, path, "cannot stat", e);
    }
    if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX - KILN_BLOB_ALIGN) {
        close(fd);
        return kiln__file_fail(err, KILN_ERR_LIMIT, path, "file does not fit in the address space", 0);
    }
    size_t size = (size_t)st.st_size;
    if (size > 0) {
        int mflags = MAP_PRIVATE;
#ifdef MAP_POPULATE
        /* Full verification reads every page: fault them in up front, in one call, rather
         * than one fault per page during the scan. A trusted load touches only the header. */
        if (!(flags & KILN_BLOB_LOAD_TRUSTED)) mflags |= MAP_POPULATE;
#endif
        void *m = mmap(NULL, size, PROT_READ, mflags, fd, 0);
        if (m != MAP_FAILED) {
            out->memory = m;
            out->size = size;
            out->mapped = 1;
            bytes = m;
        }
    }
    if (!bytes) {
        void *base = kiln__file_alloc(&out->allocator, size + KILN_BLOB_ALIGN - 1);
        if (!base) {
            close(fd);
            return kiln__file_fail(err, KILN_ERR_OUT_OF_MEMORY, path, "cannot allocate memory for the blob", 0);
        }
        out->memory = base;
        out->size = size;
        unsigned char *dst = kiln__aligned(base);
        size_t done = 0;
        while (done < size) {
            ssize_t n = read(fd, dst + done, size - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                int e = n < 0 ? errno : 0;
                close(fd);
                kiln_blob_close_file(out);
                return kiln__file_fail(err, KILN_ERR_IO, path, n < 0 ? "read failed" : "file shrank while reading", e);
            }
            done += (size_t)n;
        }
        bytes = dst;
    }
    close(fd);
#else
    FILE *f = fopen(path, "rb");
    if (!f) return kiln__file_fail(err, KILN_ERR_IO, path, "cannot open", errno);
    long end = -1;
    if (fseek(f, 0, SEEK_END) == 0) end = ftell(f);
    if (end < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return kiln__file_fail(err, KILN_ERR_IO, path, "cannot find the file size", 0);
    }
    size_t size = (size_t)end;
    void *base = kiln__file_alloc(&out->allocator, size + KILN_BLOB_ALIGN - 1);
    if (!base) {
        fclose(f);
        return kiln__file_fail(err, KILN_ERR_OUT_OF_MEMORY, path, "cannot allocate memory for the blob", 0);
    }
    out->memory = base;
    out->size = size;
    unsigned char *dst = kiln__aligned(base);
    size_t got = fread(dst, 1, size, f);
    fclose(f);
    if (got != size) {
        kiln_blob_close_file(out);
        return kiln__file_fail(err, KILN_ERR_IO, path, "read failed", 0);
    }
    bytes = dst;
#endif

    kiln_result r = kiln_blob_load(bytes, out->size, flags, &out->blob, err);
    if (r != KILN_OK) kiln_blob_close_file(out);
    return r;
}
