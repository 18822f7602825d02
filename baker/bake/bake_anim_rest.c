/* Where a clip meets the skeleton it is bound to: the rest it was authored against.
 *
 * Some formats store, with a clip, the skeleton it was authored against and let a channel hold
 * the rest pose until its first stored frame (a Unigine .anim's bind pose). The rest pose that
 * counts is the target skeleton's: the frames held at rest (kiln__anim_joint.rest_mask) take
 * its rest locals here. When the clip names the rule of its format for a mismatch, joints whose
 * bone the skeleton lacks (dropped from the clip) and authored rest transforms that differ from
 * the skeleton's are reported under it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bake_internal.h"
#include "bake_report.h"
#include "ds.h"
#include "rest.h"

#define KILN__REST_TOLERANCE 1e-4

static void kiln__rest_warn(const kiln_diag_sink *sink, const kiln__anim *an, kiln_result code, uint64_t offset,
                            const char *fmt, ...) KILN__REPORT_PRINTF(5, 6);

static void kiln__rest_warn(const kiln_diag_sink *sink, const kiln__anim *an, kiln_result code, uint64_t offset,
                            const char *fmt, ...)
{
    if (!sink || !sink->fn) return;
    kiln_diag d;
    va_list ap;
    va_start(ap, fmt);
    kiln__bake_report_vfill(&d, code, KILN_SEVERITY_WARNING, NULL, NULL, offset, fmt, ap);
    va_end(ap);
    snprintf(d.rule, sizeof d.rule, "%s", an->bind_rule);
    sink->fn(sink->user, &d);
}

static int kiln__bone_named(const kiln__skeleton *sk, const char *name)
{
    for (uint32_t i = 0; i < sk->bone_count; i++)
        if (strcmp(sk->names[i], name) == 0) return (int)i;
    return -1;
}

/* The bone's rest locals as the 10 clip components (t, r x y z w, s). */
static void kiln__skeleton_rest(const kiln__skeleton *sk, uint32_t b, float rest[KILN_ANIM_COMPONENTS])
{
    memcpy(rest, sk->local_t[b], 3 * sizeof(float));
    memcpy(rest + 3, sk->local_r[b], 4 * sizeof(float));
    memcpy(rest + 7, sk->local_s[b], 3 * sizeof(float));
}

/* Puts `rest` into the frames the mask marks; a rotation goes on the hemisphere of the sample it
 * replaces, so the segment to the next stored frame stays the short arc. */
static void kiln__fill_rest(const kiln__anim *an, kiln__anim_joint *jt, const float rest[KILN_ANIM_COMPONENTS])
{
    uint32_t n = an->frame_count;
    for (uint32_t r = 0; r < n; r++) {
        uint16_t m = jt->rest_mask[r];
        if (!m) continue;
        float *v = jt->values;
        for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) {
            if (c >= 3 && c < 7) continue;
            if (m & (1u << c)) v[(size_t)c * n + r] = rest[c];
        }
        if (m & (0xFu << 3)) {
            double dot = 0.0;
            for (unsigned c = 3; c < 7; c++) dot += (double)v[(size_t)c * n + r] * rest[c];
            float sign = dot < 0.0 ? -1.0f : 1.0f;
            for (unsigned c = 3; c < 7; c++) v[(size_t)c * n + r] = sign * rest[c];
        }
    }
}

void kiln__anim_bind_rest(const kiln_allocator *a, kiln__anim *an, const kiln__skeleton *sk,
                          const kiln_diag_sink *sink)
{
    if (!sk) return;
    uint32_t kept = 0;
    for (uint32_t j = 0; j < an->joint_count; j++) {
        kiln__anim_joint *jt = &an->joints[j];
        int b = jt->name ? kiln__bone_named(sk, jt->name) : -1;
        if (b < 0 && jt->name && an->bind_rule[0]) {
            /* Dropped here, so that no looser match of the runtime's binds it after all. */
            kiln__rest_warn(sink, an, KILN_ERR_IMPORT_BAD_REFERENCE,
                            jt->has_authored ? jt->authored_offset : KILN_NO_OFFSET,
                            "clip '%s' drives bone '%s', which the skeleton it is bound to does not have; "
                            "its curves are ignored",
                            an->name, jt->name);
            kiln__free(a, jt->name);
            kiln__free(a, jt->values);
            kiln__free(a, jt->rest_mask);
            continue;
        }
        an->joints[kept++] = *jt;
        jt = &an->joints[kept - 1];
        if (b < 0) continue;
        float rest[KILN_ANIM_COMPONENTS];
        kiln__skeleton_rest(sk, (uint32_t)b, rest);
        double diff = jt->has_authored ? kiln__rest_difference(jt->authored, rest) : 0.0;
        if (an->bind_rule[0] && diff > KILN__REST_TOLERANCE)
            kiln__rest_warn(sink, an, KILN_ERR_IMPORT_BAD_VALUE, jt->authored_offset,
                            "clip '%s', bone '%s': the rest transform the clip was authored against differs from "
                            "the skeleton's by %.6g (more than %g); the skeleton's is used",
                            an->name, jt->name, diff, KILN__REST_TOLERANCE);
        if (jt->rest_mask && jt->values) kiln__fill_rest(an, jt, rest);
    }
    an->joint_count = kept;
}
