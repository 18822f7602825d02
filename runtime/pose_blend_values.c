/* Blending the scalar values of layers (blend shape weights, visibility) with the rule of
 * kiln_pose_blend, and the skeleton's rest pose that blending falls back to.
 *
 * Scalar, in double: a handful of values per mesh, where the weight scaling of the pose kernels
 * (pose_blend.c) is not worth having; double sums keep any finite float weights finite.
 */
#include <float.h>
#include <math.h>

#include "anim_internal.h"
#include "blob_internal.h"
#include "error_detail.h"

kiln_result kiln_pose_blend_values(const kiln_value_layer *layers, uint32_t count, float rest_value, float threshold,
                                   float *out, uint32_t value_count)
{
    if (!out && value_count)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_pose_blend_values: out", "out is NULL with value_count %u",
                          value_count);
    if (!layers && count)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_pose_blend_values: layers", "layers is NULL with count %u", count);
    if (!(threshold > 0.0f) || !(threshold <= FLT_MAX))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_pose_blend_values: threshold",
                          "threshold %g is not a finite number > 0", (double)threshold);
    if (!isfinite(rest_value))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_pose_blend_values: rest_value",
                          "rest_value %g is not finite", (double)rest_value);
    for (uint32_t l = 0; l < count; l++)
        if (!layers[l].values && value_count)
            return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_pose_blend_values: layers[].values",
                              "layer %u has no values", l);
    double sum = 0.0;
    for (uint32_t l = 0; l < count; l++) {
        float w = layers[l].weight;
        if (w > 0.0f) sum += w < FLT_MAX ? (double)w : (double)FLT_MAX;
    }
    double fill = sum < (double)threshold ? (double)threshold - sum : 0.0, total = sum + fill;
    for (uint32_t i = 0; i < value_count; i++) {
        double acc = fill * (double)rest_value;
        for (uint32_t l = 0; l < count; l++) {
            float w = layers[l].weight;
            if (w > 0.0f) acc += (w < FLT_MAX ? (double)w : (double)FLT_MAX) * (double)layers[l].values[i];
        }
        out[i] = (float)(acc / total); /* after every layer's value i was read: out may be one */
    }
    return KILN_OK;
}

const kiln_soa_xform *kiln_skeleton_rest_pose(const kiln_blob *blob, uint32_t skeleton, uint32_t *soa_count)
{
    uint32_t ns, nr;
    const kiln_blob_skeleton *sk = blob ? kiln_blob_skeletons(blob, &ns) : NULL;
    const kiln_soa_xform *rest = blob ? kiln_blob_rest_pose(blob, &nr) : NULL;
    if (soa_count) *soa_count = 0;
    if (!sk || skeleton >= ns || !rest || sk[skeleton].first_soa > nr || sk[skeleton].soa_count > nr - sk[skeleton].first_soa)
        return NULL;
    if (soa_count) *soa_count = sk[skeleton].soa_count;
    return rest + sk[skeleton].first_soa;
}
