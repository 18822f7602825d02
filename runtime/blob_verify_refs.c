/* Verification of the 1.3 reference-model section: after kiln_blob_load, kiln_reference_get
 * hands out each reference's model range without a bounds check.
 *
 * IRMD is unknown to a 1.0-1.2 loader, which skips it by size; this verifier finds it itself.
 */
#include <stddef.h>

#include "blob_internal.h"
#include "blob_verify_refs.h"
#include "blob_verify_sections.h"

_Static_assert(sizeof(kiln_blob_reference_model) == 8, "reference model record");

kiln_result kiln__verify_reference_models(const void *base, uint64_t size, kiln_diag *err)
{
    const unsigned char *b = (const unsigned char *)base;
    uint32_t n, refs = 0, models = 0;
    const kiln_blob_section *t = kiln__verify_table(b, &n), *rm = NULL;
    int have_refs = 0, have_models = 0;
    for (uint32_t i = 0; i < n; i++) {
        const kiln_blob_section *s = &t[i];
        /* the loader has checked the known kinds: the first of each is the one it uses */
        if (s->kind == KILN_SECTION_REFERENCES && !have_refs) refs = s->count, have_refs = 1;
        if (s->kind == KILN_SECTION_MODELS && !have_models) models = s->count, have_models = 1;
        if (s->kind != KILN_SECTION_REFERENCE_MODELS) continue;
        KILN__VERIFY_TRY(kiln__verify_section(s, i, rm, sizeof(kiln_blob_reference_model), size, err));
        rm = s;
    }
    if (!rm) return KILN_OK;
    if (rm->count != refs)
        return kiln__verify_fail(err, KILN_ERR_BLOB_BAD_SECTION, rm->offset,
                                 "IRMD: %u records for %u references (one per reference)", rm->count, refs);
    const kiln_blob_reference_model *r = (const kiln_blob_reference_model *)(const void *)(b + rm->offset);
    for (uint32_t i = 0; i < rm->count; i++) {
        uint64_t at = rm->offset + (uint64_t)i * sizeof *r;
        if (r[i].first_model == KILN_BLOB_NONE) {
            if (r[i].model_count)
                return kiln__verify_fail(err, KILN_ERR_BLOB_BAD_RECORD, at + offsetof(kiln_blob_reference_model, model_count),
                                         "IRMD[%u].model_count: %u models with no first model", i, r[i].model_count);
            continue;
        }
        if (!r[i].model_count || r[i].first_model >= models || r[i].model_count > models - r[i].first_model)
            return kiln__verify_fail(err, KILN_ERR_BLOB_BAD_RECORD, at + offsetof(kiln_blob_reference_model, first_model),
                                     "IRMD[%u].first_model: models [%u, +%u) are not a non-empty range of MODL (%u records)",
                                     i, r[i].first_model, r[i].model_count, models);
    }
    return KILN_OK;
}
