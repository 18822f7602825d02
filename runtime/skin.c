/* Mesh skinning: the public entry points (argument checks, stream lookup, path selection) and
 * the conversion of skinning matrices into dual quaternions with a bind-space stretch.
 *
 * The kernels (skin_scalar.c, and skin_simd.h compiled per path) see only a kiln__skin_job:
 * stream pointers already offset to the range, decode constants, clamps. Everything that can
 * fail is checked here, once per call, so the kernels have no error paths.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "anim_internal.h"
#include "kiln/anim.h"
#include "simd_table.h"
#include "skin_internal.h"
#include "error_detail.h"

/* The kernels read a record as floats: real at 0, dual at 4, stretch columns at 8, 12, 16, and
 * find records by shifts (96 = 64 + 32). */
_Static_assert(sizeof(kiln_skin_dual_quat) == 96, "kiln_skin_dual_quat is 96 bytes");
_Static_assert(offsetof(kiln_skin_dual_quat, dual) == 16, "kiln_skin_dual_quat.dual");
_Static_assert(offsetof(kiln_skin_dual_quat, stretch) == 32, "kiln_skin_dual_quat.stretch");

/* ---- dual quaternions ------------------------------------------------------------------------ */

/* Below this difference from the identity in every element a stretch is float noise: a rigid
 * K = W · IB composed in float is orthonormal to a few ulp per level of the hierarchy. */
#define KILN__STRETCH_EPS 1e-5

static double kiln__det3(const double a[9])
{
    /* column-major: a[c * 3 + r] */
    return a[0] * (a[4] * a[8] - a[7] * a[5]) - a[3] * (a[1] * a[8] - a[7] * a[2]) + a[6] * (a[1] * a[5] - a[4] * a[2]);
}

/* Cofactor matrix: cof(A) = det(A) · A^-T. */
static void kiln__cof3(const double a[9], double c[9])
{
#define A_(r, col) a[(col) * 3 + (r)]
#define C_(r, col) c[(col) * 3 + (r)]
    C_(0, 0) = A_(1, 1) * A_(2, 2) - A_(1, 2) * A_(2, 1);
    C_(0, 1) = A_(1, 2) * A_(2, 0) - A_(1, 0) * A_(2, 2);
    C_(0, 2) = A_(1, 0) * A_(2, 1) - A_(1, 1) * A_(2, 0);
    C_(1, 0) = A_(0, 2) * A_(2, 1) - A_(0, 1) * A_(2, 2);
    C_(1, 1) = A_(0, 0) * A_(2, 2) - A_(0, 2) * A_(2, 0);
    C_(1, 2) = A_(0, 1) * A_(2, 0) - A_(0, 0) * A_(2, 1);
    C_(2, 0) = A_(0, 1) * A_(1, 2) - A_(0, 2) * A_(1, 1);
    C_(2, 1) = A_(0, 2) * A_(1, 0) - A_(0, 0) * A_(1, 2);
    C_(2, 2) = A_(0, 0) * A_(1, 1) - A_(0, 1) * A_(1, 0);
#undef A_
#undef C_
}

static double kiln__frob(const double a[9])
{
    double s = 0.0;
    for (int i = 0; i < 9; i++) s += a[i] * a[i];
    return sqrt(s);
}

/* A rotation from the columns of a (nearly) singular matrix: Gram-Schmidt on the longest
 * columns, completing the frame with a cross product or any perpendicular axis. */
static void kiln__frame_of(const double a[9], double r[9])
{
    double len[3];
    for (int c = 0; c < 3; c++) len[c] = sqrt(a[c * 3] * a[c * 3] + a[c * 3 + 1] * a[c * 3 + 1] + a[c * 3 + 2] * a[c * 3 + 2]);
    int i0 = len[0] >= len[1] && len[0] >= len[2] ? 0 : (len[1] >= len[2] ? 1 : 2);
    int i1 = (i0 + 1) % 3, i2 = (i0 + 2) % 3;
    if (len[i2] > len[i1]) {
        int t = i1;
        i1 = i2, i2 = t;
    }
    double u[3][3] = {{0}};
    /* u[0]: the longest column (x when every column vanishes) */
    if (len[i0] > 1e-300) {
        for (int k = 0; k < 3; k++) u[0][k] = a[i0 * 3 + k] / len[i0];
    } else {
        u[0][0] = 1.0;
    }
    /* u[1]: the next column minus its projection, else any perpendicular */
    double v[3], d = 0.0;
    for (int k = 0; k < 3; k++) d += a[i1 * 3 + k] * u[0][k];
    for (int k = 0; k < 3; k++) v[k] = a[i1 * 3 + k] - d * u[0][k];
    double lv = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (!(lv > 1e-12 * (len[i0] > 0 ? len[i0] : 1.0))) {
        int axis = fabs(u[0][0]) < 0.9 ? 0 : 1; /* an axis not parallel to u[0] */
        double e[3] = {axis == 0, axis == 1, 0};
        d = e[0] * u[0][0] + e[1] * u[0][1];
        for (int k = 0; k < 3; k++) v[k] = e[k] - d * u[0][k];
        lv = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    }
    for (int k = 0; k < 3; k++) u[1][k] = v[k] / lv;
    u[2][0] = u[0][1] * u[1][2] - u[0][2] * u[1][1];
    u[2][1] = u[0][2] * u[1][0] - u[0][0] * u[1][2];
    u[2][2] = u[0][0] * u[1][1] - u[0][1] * u[1][0];
    /* put the frame back in the columns' order, keeping det +1 (an odd permutation of the
     * columns flips the handedness of u[2]) */
    int idx[3] = {i0, i1, i2};
    int odd = (i1 != (i0 + 1) % 3);
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 3; j++) r[idx[k] * 3 + j] = (k == 2 && odd) ? -u[k][j] : u[k][j];
}

/* Polar decomposition A = R · S, R a rotation: Higham's scaled Newton iteration
 * X <- (γX + X^-T / γ) / 2, γ = sqrt(|X^-1|_F / |X|_F), which converges quadratically to the
 * orthogonal factor. A mirroring A (det < 0) is decomposed as -A, so that R stays a proper
 * rotation and the reflection ends up in S = R^T A. */
static void kiln__polar_rotation(const double a[9], double r[9])
{
    double x[9];
    double det = kiln__det3(a), norm = kiln__frob(a);
    double sign = det < 0.0 ? -1.0 : 1.0;
    /* relative determinant: 1/(3√3) for a rotation; tiny for a (nearly) singular matrix */
    if (!(norm > 0.0) || !(fabs(det) > 1e-9 * norm * norm * norm)) {
        for (int i = 0; i < 9; i++) x[i] = sign * a[i];
        kiln__frame_of(x, r);
        return;
    }
    for (int i = 0; i < 9; i++) x[i] = sign * a[i];
    for (int it = 0; it < 64; it++) {
        double c[9], xn[9];
        kiln__cof3(x, c);
        double d = kiln__det3(x);
        if (!(fabs(d) > 0.0)) break;
        /* X^-T = cof(X) / det(X) */
        for (int i = 0; i < 9; i++) c[i] /= d;
        double g = sqrt(kiln__frob(c) / kiln__frob(x));
        double diff = 0.0;
        for (int i = 0; i < 9; i++) {
            xn[i] = 0.5 * (g * x[i] + c[i] / g);
            diff += (xn[i] - x[i]) * (xn[i] - x[i]);
        }
        memcpy(x, xn, sizeof x);
        if (diff < 1e-28) break;
    }
    memcpy(r, x, sizeof x);
}

/* Unit quaternion (x, y, z, w), w >= 0, of a rotation matrix (column-major), Shepperd's
 * method: the largest of the four candidates' square roots keeps it accurate at any angle. */
static void kiln__quat_of(const double m[9], double q[4])
{
#define R_(r, c) m[(c) * 3 + (r)]
    double tr = R_(0, 0) + R_(1, 1) + R_(2, 2);
    if (tr > 0.0) {
        double s = sqrt(tr + 1.0) * 2.0;
        q[3] = 0.25 * s, q[0] = (R_(2, 1) - R_(1, 2)) / s, q[1] = (R_(0, 2) - R_(2, 0)) / s, q[2] = (R_(1, 0) - R_(0, 1)) / s;
    } else if (R_(0, 0) > R_(1, 1) && R_(0, 0) > R_(2, 2)) {
        double s = sqrt(1.0 + R_(0, 0) - R_(1, 1) - R_(2, 2)) * 2.0;
        q[3] = (R_(2, 1) - R_(1, 2)) / s, q[0] = 0.25 * s, q[1] = (R_(0, 1) + R_(1, 0)) / s, q[2] = (R_(0, 2) + R_(2, 0)) / s;
    } else if (R_(1, 1) > R_(2, 2)) {
        double s = sqrt(1.0 + R_(1, 1) - R_(0, 0) - R_(2, 2)) * 2.0;
        q[3] = (R_(0, 2) - R_(2, 0)) / s, q[0] = (R_(0, 1) + R_(1, 0)) / s, q[1] = 0.25 * s, q[2] = (R_(1, 2) + R_(2, 1)) / s;
    } else {
        double s = sqrt(1.0 + R_(2, 2) - R_(0, 0) - R_(1, 1)) * 2.0;
        q[3] = (R_(1, 0) - R_(0, 1)) / s, q[0] = (R_(0, 2) + R_(2, 0)) / s, q[1] = (R_(1, 2) + R_(2, 1)) / s, q[2] = 0.25 * s;
    }
#undef R_
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    double s = q[3] < 0.0 ? -1.0 / n : 1.0 / n;
    for (int i = 0; i < 4; i++) q[i] *= s;
}

static void kiln__dual_quat_of(const float *k, kiln_skin_dual_quat *out)
{
    double a[9], r[9], q[4], t[3] = {k[12], k[13], k[14]};
    for (int c = 0; c < 3; c++)
        for (int row = 0; row < 3; row++) a[c * 3 + row] = k[c * 4 + row];
    kiln__polar_rotation(a, r);
    kiln__quat_of(r, q);
    /* S = R^T A, in bind space */
    double s[9], dev = 0.0;
    for (int c = 0; c < 3; c++)
        for (int row = 0; row < 3; row++) {
            double v = r[row * 3 + 0] * a[c * 3 + 0] + r[row * 3 + 1] * a[c * 3 + 1] + r[row * 3 + 2] * a[c * 3 + 2];
            s[c * 3 + row] = v;
            double e = fabs(v - (c == row ? 1.0 : 0.0));
            dev = e > dev ? e : dev;
        }
    memset(out, 0, sizeof *out);
    for (int i = 0; i < 4; i++) out->real[i] = (float)q[i];
    /* dual = 0.5 · (t, 0) ⊗ q */
    out->dual[0] = (float)(0.5 * (t[0] * q[3] + t[1] * q[2] - t[2] * q[1]));
    out->dual[1] = (float)(0.5 * (t[1] * q[3] + t[2] * q[0] - t[0] * q[2]));
    out->dual[2] = (float)(0.5 * (t[2] * q[3] + t[0] * q[1] - t[1] * q[0]));
    out->dual[3] = (float)(-0.5 * (t[0] * q[0] + t[1] * q[1] + t[2] * q[2]));
    out->stretched = !(dev <= KILN__STRETCH_EPS); /* NaN counts as stretched: kept as computed */
    for (int c = 0; c < 3; c++)
        for (int row = 0; row < 3; row++)
            out->stretch[c * 4 + row] = out->stretched ? (float)s[c * 3 + row] : (c == row ? 1.0f : 0.0f);
}

kiln_result kiln_pose_skin_dual_quats(const float *skin, kiln_skin_dual_quat *out, uint32_t bone_count)
{
    if (bone_count && (!skin || !out))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_pose_skin_dual_quats: skin, out",
                          "skin or out is NULL with bone_count %u", bone_count);
    for (uint32_t i = 0; i < bone_count; i++) kiln__dual_quat_of(skin + (size_t)i * 16u, &out[i]);
    return KILN_OK;
}

/* ---- skinning --------------------------------------------------------------------------------- */

/* The mesh's stream of `semantic` (positions, normals or tangents), checked against the formats
 * the kernels read, into *in, offset to vertex `first`. */
static kiln_result kiln__skin_input(const kiln_blob *blob, const kiln_blob_mesh *m, uint32_t semantic, uint32_t first,
                                    kiln__skin_in *in)
{
    const kiln_blob_stream *s = kiln_blob_mesh_stream(blob, m, semantic, 0);
    if (!s) return KILN_ERR_NOT_FOUND;
    uint32_t need;
    switch (s->format) {
    case KILN_FORMAT_F32x3: need = 12; break;
    case KILN_FORMAT_F32x4: need = 16; break;
    case KILN_FORMAT_UNORM16x4: need = semantic == KILN_ATTR_POSITION ? 8 : 0; break;
    case KILN_FORMAT_OCT16x2: need = semantic == KILN_ATTR_POSITION ? 0 : 4; break;
    default: need = 0;
    }
    if (!need) return KILN_ERR_LIMIT;
    const unsigned char *data = kiln_blob_stream_data(blob, s);
    if (!data || s->count < m->vertex_count || s->stride < need || s->stride % 4u) return KILN_ERR_BLOB_BAD_RECORD;
    memset(in, 0, sizeof *in);
    in->data = data + (size_t)first * s->stride;
    in->stride = s->stride;
    in->format = s->format == KILN_FORMAT_F32x4 ? KILN_FORMAT_F32x3 : s->format;
    for (int c = 0; c < 3; c++) in->offset[c] = s->decode_offset[c], in->scale[c] = s->decode_scale[c] / 65535.0f;
    return KILN_OK;
}

/* Whether element ranges a and b (count elements of 12 bytes, stride apart) share a byte. */
static int kiln__skin_overlap(const void *a, uint32_t sa, const void *b, uint32_t sb, uint32_t count)
{
    if (!a || !b || !count) return 0;
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    uintptr_t a1 = a0 + (uintptr_t)(count - 1u) * sa + 12u, b1 = b0 + (uintptr_t)(count - 1u) * sb + 12u;
    return a0 < b1 && b0 < a1;
}

/* The caller's source positions (kiln_skin_desc.source_positions), read like an F32x3 stream;
 * refused where they overlap one of the job's (already checked) outputs. */
static kiln_result kiln__skin_source(const kiln_skin_desc *d, const kiln__skin_job *job, kiln__skin_in *in)
{
    uint32_t stride = d->source_position_stride_bytes ? d->source_position_stride_bytes : 12u;
    if (stride < 12u || stride % 4u)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_skin_mesh: desc->source_position_stride_bytes",
                          "source stride %u is below 12 or not a multiple of 4", stride);
    const kiln__skin_out *outs[3] = {&job->out_pos, &job->out_nrm, &job->out_tan};
    for (int k = 0; k < 3; k++)
        if (kiln__skin_overlap(d->source_positions, stride, outs[k]->data, outs[k]->stride, d->vertex_count))
            return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_skin_mesh: desc->source_positions",
                              "the source positions overlap the %s output", k == 0 ? "position" : k == 1 ? "normal" : "tangent");
    memset(in, 0, sizeof *in);
    in->data = (const unsigned char *)d->source_positions;
    in->stride = stride;
    in->format = KILN_FORMAT_F32x3;
    return KILN_OK;
}

static kiln_result kiln__skin_output(float *data, uint32_t stride, kiln__skin_out *out)
{
    if (data && stride && (stride < 12u || stride % 4u)) return KILN_ERR_INVALID_ARGUMENT;
    out->data = data;
    out->stride = stride ? stride : 12u;
    return KILN_OK;
}

/* The joints or weights stream: `components` = influences elements of `bytes` each. */
static kiln_result kiln__skin_weights(const kiln_blob *blob, const kiln_blob_mesh *m, uint32_t semantic, uint32_t format,
                                      uint32_t bytes, uint32_t first, const unsigned char **data, uint32_t *stride)
{
    const kiln_blob_stream *s = kiln_blob_mesh_stream(blob, m, semantic, 0);
    const unsigned char *p = s ? kiln_blob_stream_data(blob, s) : NULL;
    if (!p || s->format != format || s->components != m->influences || s->count < m->vertex_count ||
        s->stride < bytes * m->influences || s->stride % bytes)
        return KILN_ERR_BLOB_BAD_RECORD;
    *data = p + (size_t)first * s->stride;
    *stride = s->stride;
    return KILN_OK;
}

static kiln__skin_fn kiln__skin_kernel(int dual_quat)
{
    const kiln__simd_table *t = kiln__simd_get();
    return dual_quat ? t->skin_dqs : t->skin_lbs;
}

kiln_result kiln_skin_mesh(const kiln_skin_desc *d)
{
    const uint32_t force = KILN_SKIN_FORCE_LINEAR | KILN_SKIN_FORCE_DUAL_QUAT;
    if (!d || !d->blob) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_skin_mesh: desc", "desc or its blob is NULL");
    if ((d->flags & ~force) || (d->flags & force) == force)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_skin_mesh: desc->flags", "flags 0x%x: unknown bits or both FORCE flags",
                          d->flags);
    uint32_t nm;
    const kiln_blob_mesh *meshes = kiln_blob_meshes(d->blob, &nm);
    if (!meshes || d->mesh >= nm)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_skin_mesh: desc->mesh", "no mesh %u (the blob has %u)", d->mesh,
                          meshes ? nm : 0u);
    const kiln_blob_mesh *m = &meshes[d->mesh];
    if (d->first_vertex > m->vertex_count || d->vertex_count > m->vertex_count - d->first_vertex)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_skin_mesh: desc->first_vertex, vertex_count",
                          "vertices [%u, +%u) are outside the mesh's %u", d->first_vertex, d->vertex_count, m->vertex_count);

    kiln__skin_job job;
    memset(&job, 0, sizeof job);
    kiln_result r = kiln__skin_output(d->positions, d->position_stride_bytes, &job.out_pos);
    if (r == KILN_OK) r = kiln__skin_output(d->normals, d->normal_stride_bytes, &job.out_nrm);
    if (r == KILN_OK) r = kiln__skin_output(d->tangents, d->tangent_stride_bytes, &job.out_tan);
    if (r != KILN_OK)
        return kiln__fail(r, "kiln_skin_mesh: desc->*_stride_bytes", "an output stride is below 12 or not a multiple of 4");

    int dual_quat = (d->flags & KILN_SKIN_FORCE_DUAL_QUAT) ||
                    (!(d->flags & KILN_SKIN_FORCE_LINEAR) && m->skinning == KILN_SKIN_DUAL_QUAT);
    if (m->influences > KILN__SKIN_MAX_INFLUENCES) return KILN_ERR_LIMIT;
    job.influences = m->influences;
    if (m->influences) {
        uint32_t ns;
        const kiln_blob_skeleton *sk = kiln_blob_skeletons(d->blob, &ns);
        if (!sk || m->skeleton >= ns || sk[m->skeleton].bone_count == 0) return KILN_ERR_BLOB_BAD_RECORD;
        uint32_t bones = sk[m->skeleton].bone_count;
        if (d->bone_count < bones)
            return kiln__fail(KILN_ERR_BUFFER_TOO_SMALL, "kiln_skin_mesh: desc->bone_count",
                              "bone_count %u is below the skeleton's %u bones", d->bone_count, bones);
        if (dual_quat ? !d->dual_quats : !d->skin_matrices)
            return kiln__fail(KILN_ERR_INVALID_ARGUMENT,
                              dual_quat ? "kiln_skin_mesh: desc->dual_quats" : "kiln_skin_mesh: desc->skin_matrices",
                              "the mesh is skinned by %s and %s is NULL", dual_quat ? "dual quaternions" : "matrices",
                              dual_quat ? "dual_quats" : "skin_matrices");
        job.max_joint = bones - 1u;
        r = kiln__skin_weights(d->blob, m, KILN_ATTR_JOINTS, KILN_FORMAT_U16xN, 2, d->first_vertex, &job.joints,
                               &job.joint_stride);
        if (r == KILN_OK)
            r = kiln__skin_weights(d->blob, m, KILN_ATTR_WEIGHTS, KILN_FORMAT_F32xN, 4, d->first_vertex, &job.weights,
                                   &job.weight_stride);
        if (r != KILN_OK) return r;
    }
    if (job.out_pos.data)
        r = d->source_positions ? kiln__skin_source(d, &job, &job.pos)
                                : kiln__skin_input(d->blob, m, KILN_ATTR_POSITION, d->first_vertex, &job.pos);
    if (r == KILN_OK && job.out_nrm.data) r = kiln__skin_input(d->blob, m, KILN_ATTR_NORMAL, d->first_vertex, &job.nrm);
    if (r == KILN_OK && job.out_tan.data) r = kiln__skin_input(d->blob, m, KILN_ATTR_TANGENT, d->first_vertex, &job.tan);
    if (r != KILN_OK) return r;

    job.count = d->vertex_count;
    job.root = d->root ? d->root : kiln__identity16;
    kiln_skin_dual_quat root_dq;
    if (dual_quat) {
        kiln__dual_quat_of(job.root, &root_dq);
        job.root_dq = &root_dq;
        job.dual_quats = d->dual_quats;
        /* the stretch costs as much as the rest of the blend: only when some bone has one */
        job.stretched = root_dq.stretched;
        for (uint32_t i = 0; job.influences && !job.stretched && i <= job.max_joint; i++)
            job.stretched = d->dual_quats[i].stretched != 0;
    } else {
        job.matrices = d->skin_matrices;
    }
    if (!job.count || (!job.out_pos.data && !job.out_nrm.data && !job.out_tan.data)) return KILN_OK;
    kiln__skin_kernel(dual_quat)(&job);
    return KILN_OK;
}
