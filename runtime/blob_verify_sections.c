/* The failure report and section-entry check shared by the verifiers of the 1.1 and 1.2
 * sections (see blob_verify_sections.h). One copy, so that every verifier words its section
 * errors, paths and offsets alike, as tests and tools match on them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "blob_verify_sections.h"

kiln_result kiln__verify_fail(kiln_diag *err, kiln_result code, uint64_t offset, const char *fmt, ...)
{
    if (!err) return code;
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    /* the path is the text up to the first ':' ("IKHD[2].chain_length") */
    size_t n = strcspn(text, ":");
    snprintf(err->path, sizeof err->path, "%.*s", (int)(n < 190 ? n : 190), text);
    err->code = code;
    err->severity = KILN_SEVERITY_ERROR;
    err->offset = offset;
    snprintf(err->message, sizeof err->message, "%.250s (byte offset %llu)", text, (unsigned long long)offset);
    return code;
}

const kiln_blob_section *kiln__verify_table(const unsigned char *base, uint32_t *count)
{
    const kiln_blob_header *h = (const kiln_blob_header *)(const void *)base;
    *count = h->section_count;
    return (const kiln_blob_section *)(const void *)(base + sizeof *h);
}

void kiln__verify_strings_data(const unsigned char *base, uint64_t *strings_size, uint64_t *data_begin,
                               uint64_t *data_end)
{
    uint32_t n;
    const kiln_blob_section *t = kiln__verify_table(base, &n);
    uint64_t strs = 0, begin = 0, end = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (t[i].kind == KILN_SECTION_STRINGS && !strs) strs = t[i].size;
        if (t[i].kind == KILN_SECTION_DATA && end == 0) begin = t[i].offset, end = t[i].offset + t[i].size;
    }
    *strings_size = strs;
    if (data_begin) *data_begin = begin, *data_end = end;
}

kiln_result kiln__verify_section(const kiln_blob_section *s, uint32_t i, const kiln_blob_section *seen,
                                 uint32_t stride, uint64_t size, kiln_diag *err)
{
    uint64_t entry = sizeof(kiln_blob_header) + (uint64_t)i * sizeof *s;
    char k[5];
    kiln_blob_kind_name(s->kind, k);
    if (seen) return kiln__verify_fail(err, KILN_ERR_BLOB_BAD_SECTION, entry, "section[%u].kind: second %s section", i, k);
    if (s->version != 1)
        return kiln__verify_fail(err, KILN_ERR_BLOB_BAD_VERSION, entry + offsetof(kiln_blob_section, version),
                                 "section[%u].version: %s layout version %u, this runtime reads 1", i, k, s->version);
    if (s->flags & ~KILN_SECTION_FLAG_REQUIRED)
        return kiln__verify_fail(err, KILN_ERR_BLOB_BAD_SECTION, entry + offsetof(kiln_blob_section, flags),
                                 "section[%u].flags: unknown bits 0x%X", i, s->flags & ~KILN_SECTION_FLAG_REQUIRED);
    if (s->stride != stride || (uint64_t)s->count * s->stride != s->size)
        return kiln__verify_fail(err, KILN_ERR_BLOB_BAD_SECTION, entry + offsetof(kiln_blob_section, stride),
                                 "section[%u].stride: %s needs stride %u and count x stride = size (%u x %u, %llu)", i,
                                 k, stride, s->count, s->stride, (unsigned long long)s->size);
    if (s->offset % KILN_BLOB_ALIGN || s->offset > size || s->size > size - s->offset)
        return kiln__verify_fail(err, KILN_ERR_BLOB_BAD_SECTION, entry + offsetof(kiln_blob_section, offset),
                                 "section[%u].offset: %s is misaligned or outside the blob", i, k);
    return KILN_OK;
}
