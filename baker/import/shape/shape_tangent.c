/* Tangents for *.Shape meshes (spec 6.4: not stored, computed on load when normals and UV0
 * exist): per-face tangents and bitangents from the UV gradients, summed per vertex,
 * Gram-Schmidt against the normal; the sign says whether the bitangent is cross(n, t) (+1) or
 * its opposite (-1). A vertex without a usable UV gradient gets any unit vector perpendicular
 * to its normal, sign +1. */
#include <math.h>
#include <string.h>

#include "shape_internal.h"

static void kiln__perpendicular(const float *n, double *t)
{
    /* cross(n, axis) with the axis least aligned with n */
    double ax = fabs(n[0]), ay = fabs(n[1]), az = fabs(n[2]);
    double a[3] = {0, 0, 0};
    a[ax <= ay && ax <= az ? 0 : (ay <= az ? 1 : 2)] = 1.0;
    t[0] = n[1] * a[2] - n[2] * a[1];
    t[1] = n[2] * a[0] - n[0] * a[2];
    t[2] = n[0] * a[1] - n[1] * a[0];
}

kiln_result kiln__shape_tangents(kiln__shape *ctx, kiln_source_mesh *m)
{
    if (!m->normals || m->uv_layer_count == 0 || !m->uv[0]) return KILN_OK;
    uint32_t vc = m->vertex_count;
    double *acc = kiln_source_alloc(ctx->scene, (uint64_t)vc * 6u, sizeof *acc); /* t xyz, b xyz */
    float *tan = kiln_source_alloc(ctx->scene, (uint64_t)vc * 3u, sizeof *tan);
    float *sign = kiln_source_alloc(ctx->scene, vc, sizeof *sign);
    if (!acc || !tan || !sign) return kiln__shape_fail(ctx, KILN_ERR_OUT_OF_MEMORY, NULL, m->loc.offset, NULL, "tangents");
    const float *p = m->positions, *uv = m->uv[0];
    for (uint32_t f = 0; f < m->face_count; f++) {
        const uint32_t *i = m->faces + 3u * f;
        double e1[3], e2[3];
        for (int k = 0; k < 3; k++) {
            e1[k] = (double)p[3u * i[1] + (uint32_t)k] - p[3u * i[0] + (uint32_t)k];
            e2[k] = (double)p[3u * i[2] + (uint32_t)k] - p[3u * i[0] + (uint32_t)k];
        }
        double du1 = (double)uv[2u * i[1]] - uv[2u * i[0]], dv1 = (double)uv[2u * i[1] + 1] - uv[2u * i[0] + 1];
        double du2 = (double)uv[2u * i[2]] - uv[2u * i[0]], dv2 = (double)uv[2u * i[2] + 1] - uv[2u * i[0] + 1];
        double det = du1 * dv2 - du2 * dv1;
        if (!(fabs(det) > 1e-20)) continue;
        double r = 1.0 / det, t[3], b[3];
        for (int k = 0; k < 3; k++) {
            t[k] = (e1[k] * dv2 - e2[k] * dv1) * r;
            b[k] = (e2[k] * du1 - e1[k] * du2) * r;
        }
        for (int c = 0; c < 3; c++)
            for (int k = 0; k < 3; k++) {
                acc[6u * i[c] + (uint32_t)k] += t[k];
                acc[6u * i[c] + 3u + (uint32_t)k] += b[k];
            }
    }
    for (uint32_t v = 0; v < vc; v++) {
        const float *n = m->normals + 3u * v;
        double *t = acc + 6u * v, *b = t + 3;
        double d = t[0] * n[0] + t[1] * n[1] + t[2] * n[2];
        double o[3] = {t[0] - n[0] * d, t[1] - n[1] * d, t[2] - n[2] * d};
        double len = sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2]);
        double s = 1.0;
        if (!(len > 1e-12) || !isfinite(len)) {
            kiln__perpendicular(n, o);
            len = sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2]);
            if (!(len > 1e-12)) { o[0] = 1; o[1] = o[2] = 0; len = 1; }
        } else {
            double c[3] = {n[1] * o[2] - n[2] * o[1], n[2] * o[0] - n[0] * o[2], n[0] * o[1] - n[1] * o[0]};
            s = c[0] * b[0] + c[1] * b[1] + c[2] * b[2] < 0.0 ? -1.0 : 1.0;
        }
        for (int k = 0; k < 3; k++) tan[3u * v + (uint32_t)k] = (float)(o[k] / len);
        sign[v] = (float)s;
    }
    m->tangents = tan;
    m->tangent_signs = sign;
    return KILN_OK;
}
