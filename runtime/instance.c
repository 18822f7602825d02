/* Instances: reference lookups and ranges, the public world-matrix entry points, and the scalar
 * reference kernel (instance_internal.h has the expression every path evaluates).
 *
 * The entry points validate, fold the caller's P and M into one job (identity tests and the
 * constant last-row products done once per call, not per instance) and hand it to the kernel
 * table's instance kernel (simd_table.h), so kiln_simd_force() steers these kernels exactly as
 * it steers the animation ones.
 */
#include "math_cglm.h"

#include <stddef.h>
#include <string.h>

#include "anim_internal.h"
#include "blob_internal.h"
#include "instance_internal.h"
#include "kiln/anim.h"
#include "error_detail.h"
#include "simd_table.h"

/* The SIMD loaders read the transform as 10 consecutive floats of a 16-float record. */
_Static_assert(sizeof(kiln_blob_instance) == KILN__INST_FLOATS * sizeof(float), "instance record size");
_Static_assert(offsetof(kiln_blob_instance, position) == KILN__INST_FIRST * sizeof(float), "instance position");
_Static_assert(offsetof(kiln_blob_instance, rotation) == (KILN__INST_FIRST + 3) * sizeof(float), "instance rotation");
_Static_assert(offsetof(kiln_blob_instance, scale) == (KILN__INST_FIRST + 7) * sizeof(float), "instance scale");


/* ---- references ------------------------------------------------------------------------------ */

uint32_t kiln_reference_count(const kiln_blob *blob)
{
    uint32_t n = 0;
    if (blob) kiln_blob_references(blob, &n);
    return n;
}

uint32_t kiln_reference_find(const kiln_blob *blob, const char *path)
{
    if (!blob || !path) return KILN_BLOB_NONE;
    /* The written path is in the name index; the resolved one is not, and a level has few
     * references, so a scan finds it (and the written one in blobs without a name index). */
    uint32_t r = kiln_blob_find(blob, KILN_SECTION_REFERENCES, path);
    if (r != KILN_BLOB_NONE) return r;
    uint32_t n;
    const kiln_blob_reference *refs = kiln_blob_references(blob, &n);
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(kiln_blob_string(blob, refs[i].resolved_path), path) == 0 ||
            strcmp(kiln_blob_string(blob, refs[i].path), path) == 0)
            return i;
    return KILN_BLOB_NONE;
}

kiln_result kiln_reference_get(const kiln_blob *blob, uint32_t reference, kiln_reference_info *out)
{
    if (!blob || !out)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, !blob ? "kiln_reference_get: blob" : "kiln_reference_get: out",
                          "%s is NULL", !blob ? "blob" : "out");
    uint32_t nr, ni;
    const kiln_blob_reference *refs = kiln_blob_references(blob, &nr);
    if (reference >= nr) return KILN_ERR_NOT_FOUND;
    const kiln_blob_reference *ref = &refs[reference];
    kiln_blob_instances(blob, &ni);
    /* verified blobs partition INSTANCES; trusted loads may not have been checked */
    if (ref->first_instance > ni || ref->instance_count > ni - ref->first_instance) return KILN_ERR_BLOB_BAD_RECORD;
    out->index = reference;
    out->first_instance = ref->first_instance;
    out->instance_count = ref->instance_count;
    out->path = kiln_blob_string(blob, ref->path);
    out->resolved_path = kiln_blob_string(blob, ref->resolved_path);
    /* one record per reference in verified blobs; trusted loads get the range checked here */
    uint32_t nrm, nm;
    const kiln_blob_reference_model *rm = (const kiln_blob_reference_model *)kiln__records(
        blob, KILN_SECTION_REFERENCE_MODELS, sizeof(kiln_blob_reference_model), &nrm, NULL);
    kiln_blob_models(blob, &nm);
    out->first_model = KILN_BLOB_NONE;
    out->model_count = 0;
    if (rm && reference < nrm && rm[reference].first_model < nm && rm[reference].model_count &&
        rm[reference].model_count <= nm - rm[reference].first_model) {
        out->first_model = rm[reference].first_model;
        out->model_count = rm[reference].model_count;
    }
    return KILN_OK;
}

/* ---- transforms ------------------------------------------------------------------------------ */

/* [R·S | p] as 3 rows of 4 (row r: a[r][0..2] the 3x3, a[r][3] the translation), spelled as
 * instance_internal.h fixes it for every path (glm_quat_mat4 scales by 2 / |q| and sums in
 * another order). */
static void kiln__affine(const float p[3], const float q[4], const float s[3], float a[3][4])
{
    float x2 = q[0] + q[0], y2 = q[1] + q[1], z2 = q[2] + q[2];
    float xx = q[0] * x2, yy = q[1] * y2, zz = q[2] * z2, xy = q[0] * y2, xz = q[0] * z2, yz = q[1] * z2;
    float wx = q[3] * x2, wy = q[3] * y2, wz = q[3] * z2;
    a[0][0] = (1.0f - (yy + zz)) * s[0], a[1][0] = (xy + wz) * s[0], a[2][0] = (xz - wy) * s[0];
    a[0][1] = (xy - wz) * s[1], a[1][1] = (1.0f - (xx + zz)) * s[1], a[2][1] = (yz + wx) * s[1];
    a[0][2] = (xz + wy) * s[2], a[1][2] = (yz - wx) * s[2], a[2][2] = (1.0f - (xx + yy)) * s[2];
    a[0][3] = p[0], a[1][3] = p[1], a[2][3] = p[2];
}

void kiln_transform_matrix(const float position[3], const float rotation[4], const float scale[3], float out[16])
{
    mat4 a; /* rows */
    kiln__affine(position, rotation, scale, a);
    glm_vec4_copy((vec4){0.0f, 0.0f, 0.0f, 1.0f}, a[3]);
    glm_mat4_transpose_to(a, (vec4 *)out);
}

kiln_result kiln_model_transform(const kiln_blob *blob, uint32_t model, float out[16])
{
    if (!blob || !out)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, !blob ? "kiln_model_transform: blob" : "kiln_model_transform: out",
                          "%s is NULL", !blob ? "blob" : "out");
    uint32_t n;
    const kiln_blob_model *m = kiln_blob_models(blob, &n);
    if (model >= n) return KILN_ERR_NOT_FOUND;
    kiln_transform_matrix(m[model].position, m[model].rotation, m[model].scale, out);
    return KILN_OK;
}

/* ---- scalar kernel ------------------------------------------------------------------------- */

void kiln__instance_world_scalar(const kiln__instance_job *job)
{
    const float *P = job->parent;
    mat4 mrow; /* M's rows: L's rows are sums of them */
    glm_mat4_transpose_to((vec4 *)KILN__GLM(job->model), mrow);
    const int model = (job->flags & KILN__INST_MODEL) != 0, parent = (job->flags & KILN__INST_PARENT) != 0;
    const unsigned rows = (job->flags & KILN__INST_PROJECTIVE) ? 4u : 3u; /* rows of W that depend on L */
    for (uint32_t i = 0; i < job->count; i++) {
        const kiln_blob_instance *in = &job->inst[i];
        float a[3][4], l[3][4], w[4][4];
        kiln__affine(in->position, in->rotation, in->scale, a);
        if (model) {
            for (unsigned r = 0; r < 3; r++) { /* row r of A · M, in instance_internal.h's order */
                glm_vec4_scale(mrow[3], a[r][3], l[r]);
                glm_vec4_muladds(mrow[0], a[r][0], l[r]);
                glm_vec4_muladds(mrow[1], a[r][1], l[r]);
                glm_vec4_muladds(mrow[2], a[r][2], l[r]);
            }
        } else {
            memcpy(l, a, sizeof l);
        }
        if (parent) {
            for (unsigned r = 0; r < rows; r++) { /* row r of P · L */
                glm_vec4_copy(KILN__GLM(job->c[r]), w[r]);
                glm_vec4_muladds(l[0], P[KILN__CM(r, 0)], w[r]);
                glm_vec4_muladds(l[1], P[KILN__CM(r, 1)], w[r]);
                glm_vec4_muladds(l[2], P[KILN__CM(r, 2)], w[r]);
            }
        } else {
            memcpy(w, l, sizeof l);
        }
        if (rows == 3) glm_vec4_copy(KILN__GLM(job->c[3]), w[3]);
        float *o = job->out + (size_t)i * job->stride;
        if (job->layout == KILN_INSTANCE_3X4) memcpy(o, w, 12 * sizeof(float)); /* rows 0-2, row-major */
        else glm_mat4_transpose_to(w, (vec4 *)o);
    }
}

/* ---- entry points ---------------------------------------------------------------------------- */

static int kiln__is_identity(const float *m)
{
    for (unsigned k = 0; k < 16; k++)
        if (!(m[k] == kiln__identity16[k])) return 0; /* NaN counts as not the identity */
    return 1;
}

static void kiln__job_init(kiln__instance_job *job, const float *parent, const float *model, uint32_t layout)
{
    memset(job, 0, sizeof *job);
    memcpy(job->model, model ? model : kiln__identity16, sizeof job->model);
    memcpy(job->parent, parent ? parent : kiln__identity16, sizeof job->parent);
    if (!kiln__is_identity(job->model)) job->flags |= KILN__INST_MODEL;
    const float *m = job->model;
    if (!(m[KILN__CM(3, 0)] == 0.0f && m[KILN__CM(3, 1)] == 0.0f && m[KILN__CM(3, 2)] == 0.0f && m[KILN__CM(3, 3)] == 1.0f))
        job->flags |= KILN__INST_MODEL_GENERAL | KILN__INST_MODEL;
    if (!kiln__is_identity(job->parent)) job->flags |= KILN__INST_PARENT;
    const float *P = job->parent, *M = job->model;
    if (!(P[KILN__CM(3, 0)] == 0.0f && P[KILN__CM(3, 1)] == 0.0f && P[KILN__CM(3, 2)] == 0.0f))
        job->flags |= KILN__INST_PROJECTIVE | KILN__INST_PARENT;
    for (unsigned r = 0; r < 4; r++)
        for (unsigned j = 0; j < 4; j++) job->c[r][j] = P[KILN__CM(r, 3)] * M[KILN__CM(3, j)];
    job->layout = layout;
    job->stride = KILN_INSTANCE_FLOATS(layout);
}

static void kiln__job_run(const kiln__instance_job *job)
{
    if (job->count) kiln__simd_get()->instance_world(job);
}

static int kiln__layout_ok(uint32_t layout) { return layout == KILN_INSTANCE_4X4 || layout == KILN_INSTANCE_3X4; }

kiln_result kiln_instance_matrices(const kiln_blob_instance *instances, uint32_t count, const float *parent,
                                   const float *asset_transform, uint32_t layout, float *out)
{
    if (!kiln__layout_ok(layout))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_instance_matrices: layout", "unknown layout %u", layout);
    if (count && (!instances || !out))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_instance_matrices: instances, out",
                          "instances or out is NULL with count %u", count);
    kiln__instance_job job;
    kiln__job_init(&job, parent, asset_transform, layout);
    job.inst = instances;
    job.count = count;
    job.out = out;
    kiln__job_run(&job);
    return KILN_OK;
}

kiln_result kiln_instance_world_matrices(const kiln_blob *blob, uint32_t first, uint32_t count, const float *parent,
                                         const float *asset_transform, uint32_t layout, float *out)
{
    if (!blob) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_instance_world_matrices: blob", "blob is NULL");
    uint32_t n;
    const kiln_blob_instance *inst = kiln_blob_instances(blob, &n);
    if (first > n || count > n - first)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_instance_world_matrices: first, count",
                          "instances [%u, +%u) are past the blob's %u", first, count, n);
    return kiln_instance_matrices(count ? inst + first : NULL, count, parent, asset_transform, layout, out);
}

kiln_result kiln_reference_world_matrices(const kiln_blob *blob, uint32_t reference, const float *parent,
                                          const float *asset_transform, uint32_t layout, float *out, uint32_t capacity)
{
    kiln_reference_info info;
    kiln_result r = kiln_reference_get(blob, reference, &info);
    if (r != KILN_OK) return r;
    if (!kiln__layout_ok(layout))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_reference_world_matrices: layout", "unknown layout %u", layout);
    if (info.instance_count && !out)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_reference_world_matrices: out", "out is NULL");
    if (capacity < info.instance_count)
        return kiln__fail(KILN_ERR_BUFFER_TOO_SMALL, "kiln_reference_world_matrices: capacity",
                          "capacity %u is below the reference's %u instances", capacity, info.instance_count);
    return kiln_instance_world_matrices(blob, info.first_instance, info.instance_count, parent, asset_transform, layout, out);
}

kiln_result kiln_instance_world_matrices_all(const kiln_blob *blob, const float *parent,
                                             const float *const *asset_transforms, uint32_t layout, float *out,
                                             uint32_t capacity)
{
    if (!blob) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_instance_world_matrices_all: blob", "blob is NULL");
    if (!kiln__layout_ok(layout))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_instance_world_matrices_all: layout", "unknown layout %u", layout);
    uint32_t n, nr = kiln_reference_count(blob);
    const kiln_blob_instance *inst = kiln_blob_instances(blob, &n);
    if (n && !out) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_instance_world_matrices_all: out", "out is NULL");
    if (capacity < n)
        return kiln__fail(KILN_ERR_BUFFER_TOO_SMALL, "kiln_instance_world_matrices_all: capacity",
                          "capacity %u is below the blob's %u instances", capacity, n);
    for (uint32_t ref = 0; ref < nr; ref++) {
        kiln_reference_info info;
        kiln_result r = kiln_reference_get(blob, ref, &info);
        if (r != KILN_OK) return r;
        if (!info.instance_count) continue;
        kiln__instance_job job;
        kiln__job_init(&job, parent, asset_transforms ? asset_transforms[ref] : NULL, layout);
        job.inst = inst + info.first_instance;
        job.count = info.instance_count;
        job.out = out + (size_t)info.first_instance * job.stride;
        kiln__job_run(&job);
    }
    return KILN_OK;
}
