/* Clip records: the views of the 1.1 animation sections and the clip duration.
 *
 * The views go through kiln__records, which re-checks the section entry (version, stride,
 * bounds) on every call, as the other views do.
 */
#include <stddef.h>
#include <stdint.h>

#include "anim_internal.h"
#include "blob_internal.h"

KILN__RECORDS_VIEW(kiln_blob_animations, kiln_blob_animation, KILN_SECTION_ANIMATIONS)
KILN__RECORDS_VIEW(kiln_blob_anim_joints, kiln_blob_anim_joint, KILN_SECTION_ANIM_JOINTS)
KILN__RECORDS_VIEW(kiln_blob_anim_scalars, kiln_blob_anim_scalar, KILN_SECTION_ANIM_SCALARS)
KILN__RECORDS_VIEW(kiln_blob_anim_overrides, kiln_blob_anim_override, KILN_SECTION_ANIM_OVERRIDES)
KILN__RECORDS_VIEW(kiln_blob_anim_events, kiln_blob_anim_event, KILN_SECTION_ANIM_EVENTS)

double kiln_anim_duration(const kiln_blob *blob, uint32_t clip)
{
    uint32_t n;
    const kiln_blob_animation *a = kiln_blob_animations(blob, &n);
    if (!a || clip >= n || !(a[clip].framerate > 0.0f) || a[clip].framerate > 3.0e38f) return 0.0;
    /* the loop period of kiln_sample and kiln_anim_events: (last - first) frames */
    double frames = (double)a[clip].last_frame - (double)a[clip].first_frame;
    return frames > 0.0 ? frames / (double)a[clip].framerate : 0.0;
}

double kiln_anim_start_time(const kiln_blob *blob, uint32_t clip)
{
    uint32_t n;
    const kiln_blob_animation *a = kiln_blob_animations(blob, &n);
    if (!a || clip >= n || !(a[clip].framerate > 0.0f) || a[clip].framerate > 3.0e38f) return 0.0;
    return (double)a[clip].first_frame / (double)a[clip].framerate;
}
