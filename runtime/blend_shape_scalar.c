/* Blend-shape kernels, scalar reference: plain C on the output chunk (blend_shape_internal.h),
 * with cglm's vec3 routines (math_cglm.h). The SSE2 path performs the same float operations in
 * the same order; the AVX2 path fuses the multiply-adds. */
#include "math_cglm.h"

#include <string.h>

#include "blend_shape_internal.h"

void kiln__bs_base_scalar(const kiln__bs_job *job, uint32_t c0, uint32_t m)
{
    for (uint32_t i = 0; i < m; i++) {
        size_t v = (size_t)c0 + i;
        float *o = (float *)(void *)(job->out + v * job->stride);
        if (job->quantized) {
            const uint16_t *q = (const uint16_t *)job->base + 4 * v;
            float qf[3] = {(float)q[0], (float)q[1], (float)q[2]};
            glm_vec3_mul(KILN__GLM(job->dq_scale), qf, o); /* offset + scale · q */
            glm_vec3_add(KILN__GLM(job->dq_offset), o, o);
        } else {
            memcpy(o, (const float *)job->base + 3 * v, 3 * sizeof(float));
        }
    }
}

void kiln__bs_add_scalar(const kiln__bs_job *job, const uint32_t *idx, const float *d, uint32_t count, uint32_t c0,
                         uint32_t m, float w, int tail)
{
    (void)tail; /* no wide loads here */
    for (uint32_t j = 0; j < count; j++) {
        uint32_t v = idx[j];
        if (KILN__UNLIKELY(v - c0 >= m)) continue;
        float *o = (float *)(void *)(job->out + (size_t)v * job->stride);
        glm_vec3_muladds(KILN__GLM(d + 3 * (size_t)j), w, o);
    }
}
