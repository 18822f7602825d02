/* Double-precision references for pose tests: lane access into SoA poses and the blend of one
 * joint (test_pose.c, test_blend_uniform.c). */
#ifndef KILN_TESTS_POSE_REF_H
#define KILN_TESTS_POSE_REF_H

#include <math.h>

#include "kiln/anim.h"

/* Component c (tx ty tz qx qy qz qw sx sy sz) of joint `bone`. */
static inline float lane(const kiln_soa_xform *pose, uint32_t bone, unsigned c)
{
    return ((const float *)(const void *)&pose[bone / 8])[c * 8 + bone % 8];
}

static inline void set_lane(kiln_soa_xform *pose, uint32_t bone, unsigned c, float v)
{
    ((float *)(void *)&pose[bone / 8])[c * 8 + bone % 8] = v;
}

/* Joint b of the blend in double: the n layers in order with weights w (negatives count 0),
 * each rotation brought onto the hemisphere of the sum so far, the rest pose (the identity when
 * NULL) filling up to the threshold, T and S divided by the summed weight, R normalised. */
static inline void blend_ref(const kiln_soa_xform *const *poses, const double *w, int n, const kiln_soa_xform *rest,
                             double threshold, uint32_t b, double out[10])
{
    kiln_soa_xform id[1];
    kiln_pose_identity(id, 1);
    double acc[10] = {0}, sum = 0;
    for (int i = 0; i <= n; i++) {
        const kiln_soa_xform *x = i < n ? poses[i] : rest;
        uint32_t jb = b;
        if (!x) x = id, jb = b % 8; /* the identity, lane for lane */
        double wi = i < n ? (w[i] > 0 ? w[i] : 0) : fmax(threshold - sum, 0);
        double d = 0;
        for (unsigned c = 3; c < 7; c++) d += acc[c] * lane(x, jb, c);
        for (unsigned c = 0; c < 10; c++) acc[c] += (c >= 3 && c < 7 && d < 0 ? -wi : wi) * lane(x, jb, c);
        sum += wi;
    }
    double qn = sqrt(acc[3] * acc[3] + acc[4] * acc[4] + acc[5] * acc[5] + acc[6] * acc[6]);
    for (unsigned c = 0; c < 10; c++) out[c] = c >= 3 && c < 7 ? acc[c] / qn : acc[c] / sum;
}

#endif /* KILN_TESTS_POSE_REF_H */
