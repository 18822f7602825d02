/* runtime/instance_simd.h - the instance world-matrix kernel, written once in the simd_ops.h
 * vocabulary and compiled per path (instance_sse2.c, instance_avx2.c).
 *
 * Private template: include after simd_ops.h and after defining, for the path,
 *   kv   kiln__unpacklo(kv, kv), kiln__unpackhi(kv, kv)    per 128-bit lane, as _mm_unpack*_ps
 *   kv   kiln__lohalves(kv, kv), kiln__hihalves(kv, kv)    per 128-bit lane, as _mm_movelh_ps /
 *                                                          _mm_shuffle_ps(a, b, 3,2,3,2)
 *   kv   kiln__ld_group(const float *rec, unsigned g, unsigned off)
 *   void kiln__st_group(float *out, uint32_t stride, unsigned g, unsigned off, kv v)
 * A group is what one vector's 128-bit lanes hold: record g (SSE2), or records g and g + 4
 * (AVX2). ld_group loads floats [off, off + 4) of the group's records, one record per 128-bit
 * lane; st_group stores each 128-bit lane to floats [off, off + 4) of its record's matrix.
 *
 * The records are AoS (64 bytes, the transform in floats 4 to 13). A block of KV_W instances
 * is loaded as three 4x4 transposes per 128-bit lane (floats 4-7, 8-11, 12-13), which gives
 * every component as one SoA vector; the matrix is computed in SoA, exactly as
 * instance_internal.h spells it, and written back with one 4x4 transpose per output column
 * (4x4 layout) or row (3x4 layout). A tail shorter than a block runs through the same code on
 * a padded copy, so each instance's matrix never depends on where it sits in the range.
 *
 * Own layout, not cglm's: transposed to SoA, one register holds one element of the matrices of
 * KV_W instances, so the quaternion -> matrix and the two products are lane-wise multiply-adds
 * over 4 or 8 instances at once. cglm's glm_quat_mat4 and glm_mat4_mul build one instance's
 * matrix per call, with broadcasts and shuffles; the scalar reference (instance.c) uses them
 * row by row, in this expression's order.
 */

/* Four SoA vectors: a row or a column of KV_W matrices, or four groups' lanes before a transpose.
 * Named fields rather than an array keep them in registers. */
typedef struct kiln__kv4 {
    kv x, y, z, w;
} kiln__kv4;

/* 4x4 transpose inside each 128-bit lane: element e of group g <-> element g of group e. */
KILN__FN kiln__kv4 KILN__SFX(kiln__transpose4)(kiln__kv4 in)
{
    kv t0 = kiln__unpacklo(in.x, in.y), t1 = kiln__unpacklo(in.z, in.w);
    kv t2 = kiln__unpackhi(in.x, in.y), t3 = kiln__unpackhi(in.z, in.w);
    kiln__kv4 out = {kiln__lohalves(t0, t1), kiln__hihalves(t0, t1), kiln__lohalves(t2, t3), kiln__hihalves(t2, t3)};
    return out;
}

/* Floats [off, off + 4) of every record of the block, one group per vector, transposed. */
KILN__FN kiln__kv4 KILN__SFX(kiln__load4)(const float *rec, unsigned off)
{
    kiln__kv4 g = {kiln__ld_group(rec, 0, off), kiln__ld_group(rec, 1, off), kiln__ld_group(rec, 2, off),
                   kiln__ld_group(rec, 3, off)};
    return KILN__SFX(kiln__transpose4)(g);
}

/* Transposes four SoA vectors back to one float4 per instance, at float `off` of each matrix. */
KILN__FN void KILN__SFX(kiln__store4)(float *out, uint32_t stride, unsigned off, kiln__kv4 v)
{
    kiln__kv4 g = KILN__SFX(kiln__transpose4)(v);
    kiln__st_group(out, stride, 0, off, g.x), kiln__st_group(out, stride, 1, off, g.y);
    kiln__st_group(out, stride, 2, off, g.z), kiln__st_group(out, stride, 3, off, g.w);
}

/* One row of A (a.x, a.y, a.z the 3x3 part, a.w the translation) times M: the row of L. */
KILN__FN kiln__kv4 KILN__SFX(kiln__times_model)(kiln__kv4 a, const float *M)
{
#define KILN__L(j)                                                                                        \
    kv_fma(a.z, kv_set1(M[KILN__CM(2, j)]),                                                               \
           kv_fma(a.y, kv_set1(M[KILN__CM(1, j)]), kv_fma(a.x, kv_set1(M[KILN__CM(0, j)]), kv_mul(a.w, kv_set1(M[KILN__CM(3, j)])))))
    kiln__kv4 l = {KILN__L(0), KILN__L(1), KILN__L(2), KILN__L(3)};
#undef KILN__L
    return l;
}

/* The same for an affine M (last row 0 0 0 1, every asset's Model transform): p·0 and p·1 are
 * exact, so leaving them out changes no result (at most the sign of a zero) and saves a quarter
 * of the products. */
KILN__FN kiln__kv4 KILN__SFX(kiln__times_affine)(kiln__kv4 a, const float *M)
{
#define KILN__L(j, first)                                                                                \
    kv_fma(a.z, kv_set1(M[KILN__CM(2, j)]), kv_fma(a.y, kv_set1(M[KILN__CM(1, j)]), first))
    kiln__kv4 l = {KILN__L(0, kv_mul(a.x, kv_set1(M[KILN__CM(0, 0)]))),
                   KILN__L(1, kv_mul(a.x, kv_set1(M[KILN__CM(0, 1)]))),
                   KILN__L(2, kv_mul(a.x, kv_set1(M[KILN__CM(0, 2)]))),
                   KILN__L(3, kv_fma(a.x, kv_set1(M[KILN__CM(0, 3)]), a.w))};
#undef KILN__L
    return l;
}

/* Element (r, j) of P·L from column j of L's top rows (l0, l1, l2) and c[r][j]. */
KILN__FN kv KILN__SFX(kiln__parent_elem)(const kiln__instance_job *job, unsigned r, unsigned j, kv l0, kv l1, kv l2)
{
    const float *P = job->parent;
    kv s = kv_fma(kv_set1(P[KILN__CM(r, 0)]), l0, kv_set1(job->c[r][j]));
    s = kv_fma(kv_set1(P[KILN__CM(r, 1)]), l1, s);
    return kv_fma(kv_set1(P[KILN__CM(r, 2)]), l2, s);
}

/* Column j of W (4x4 layout) from column j of L's top rows. */
KILN__FN kiln__kv4 KILN__SFX(kiln__column)(const kiln__instance_job *job, unsigned j, kv l0, kv l1, kv l2)
{
    kiln__kv4 c;
    if (job->flags & KILN__INST_PARENT) {
        c.x = KILN__SFX(kiln__parent_elem)(job, 0, j, l0, l1, l2);
        c.y = KILN__SFX(kiln__parent_elem)(job, 1, j, l0, l1, l2);
        c.z = KILN__SFX(kiln__parent_elem)(job, 2, j, l0, l1, l2);
    } else {
        c.x = l0, c.y = l1, c.z = l2;
    }
    c.w = (job->flags & KILN__INST_PROJECTIVE) ? KILN__SFX(kiln__parent_elem)(job, 3, j, l0, l1, l2)
                                               : kv_set1(job->c[3][j]);
    return c;
}

/* Row r < 3 of W (3x4 layout) from L's top rows. */
KILN__FN kiln__kv4 KILN__SFX(kiln__row)(const kiln__instance_job *job, unsigned r, kiln__kv4 l0, kiln__kv4 l1,
                                        kiln__kv4 l2, kiln__kv4 own)
{
    if (!(job->flags & KILN__INST_PARENT)) return own;
    kiln__kv4 w = {KILN__SFX(kiln__parent_elem)(job, r, 0, l0.x, l1.x, l2.x),
                   KILN__SFX(kiln__parent_elem)(job, r, 1, l0.y, l1.y, l2.y),
                   KILN__SFX(kiln__parent_elem)(job, r, 2, l0.z, l1.z, l2.z),
                   KILN__SFX(kiln__parent_elem)(job, r, 3, l0.w, l1.w, l2.w)};
    return w;
}

/* One block of KV_W records at `rec` (floats) into KV_W matrices at `out`. */
KILN__FN void KILN__SFX(kiln__instance_block)(const kiln__instance_job *job, const float *rec, float *out)
{
    kiln__kv4 t = KILN__SFX(kiln__load4)(rec, KILN__INST_FIRST);     /* px py pz qx */
    kiln__kv4 u = KILN__SFX(kiln__load4)(rec, KILN__INST_FIRST + 4); /* qy qz qw sx */
    kv v0 = kiln__ld_group(rec, 0, KILN__INST_FIRST + 8), v1 = kiln__ld_group(rec, 1, KILN__INST_FIRST + 8);
    kv v2 = kiln__ld_group(rec, 2, KILN__INST_FIRST + 8), v3 = kiln__ld_group(rec, 3, KILN__INST_FIRST + 8);
    kv h0 = kiln__unpacklo(v0, v1), h1 = kiln__unpacklo(v2, v3);      /* sy sz, half transposed */
    kv sx = u.w, sy = kiln__lohalves(h0, h1), sz = kiln__hihalves(h0, h1);

    kv qx = t.w, qy = u.x, qz = u.y, qw = u.z, one = kv_set1(1.0f);
    kv x2 = kv_add(qx, qx), y2 = kv_add(qy, qy), z2 = kv_add(qz, qz);
    kv xx = kv_mul(qx, x2), yy = kv_mul(qy, y2), zz = kv_mul(qz, z2);
    kv xy = kv_mul(qx, y2), xz = kv_mul(qx, z2), yz = kv_mul(qy, z2);
    kv wx = kv_mul(qw, x2), wy = kv_mul(qw, y2), wz = kv_mul(qw, z2);
    kiln__kv4 l0 = {kv_mul(kv_sub(one, kv_add(yy, zz)), sx), kv_mul(kv_sub(xy, wz), sy), kv_mul(kv_add(xz, wy), sz), t.x};
    kiln__kv4 l1 = {kv_mul(kv_add(xy, wz), sx), kv_mul(kv_sub(one, kv_add(xx, zz)), sy), kv_mul(kv_sub(yz, wx), sz), t.y};
    kiln__kv4 l2 = {kv_mul(kv_sub(xz, wy), sx), kv_mul(kv_add(yz, wx), sy), kv_mul(kv_sub(one, kv_add(xx, yy)), sz), t.z};
    if (job->flags & KILN__INST_MODEL_GENERAL) {
        l0 = KILN__SFX(kiln__times_model)(l0, job->model);
        l1 = KILN__SFX(kiln__times_model)(l1, job->model);
        l2 = KILN__SFX(kiln__times_model)(l2, job->model);
    } else if (job->flags & KILN__INST_MODEL) {
        l0 = KILN__SFX(kiln__times_affine)(l0, job->model);
        l1 = KILN__SFX(kiln__times_affine)(l1, job->model);
        l2 = KILN__SFX(kiln__times_affine)(l2, job->model);
    }

    const uint32_t stride = job->stride;
    if (job->layout == KILN_INSTANCE_3X4) {
        KILN__SFX(kiln__store4)(out, stride, 0, KILN__SFX(kiln__row)(job, 0, l0, l1, l2, l0));
        KILN__SFX(kiln__store4)(out, stride, 4, KILN__SFX(kiln__row)(job, 1, l0, l1, l2, l1));
        KILN__SFX(kiln__store4)(out, stride, 8, KILN__SFX(kiln__row)(job, 2, l0, l1, l2, l2));
    } else {
        KILN__SFX(kiln__store4)(out, stride, 0, KILN__SFX(kiln__column)(job, 0, l0.x, l1.x, l2.x));
        KILN__SFX(kiln__store4)(out, stride, 4, KILN__SFX(kiln__column)(job, 1, l0.y, l1.y, l2.y));
        KILN__SFX(kiln__store4)(out, stride, 8, KILN__SFX(kiln__column)(job, 2, l0.z, l1.z, l2.z));
        KILN__SFX(kiln__store4)(out, stride, 12, KILN__SFX(kiln__column)(job, 3, l0.w, l1.w, l2.w));
    }
}

KILN__KERNEL void KILN__SFX(kiln__instance_world)(const kiln__instance_job *job)
{
    const uint32_t n = job->count, stride = job->stride;
    const float *rec = (const float *)(const void *)job->inst;
    uint32_t i = 0;
    for (; n - i >= KV_W; i += KV_W)
        KILN__SFX(kiln__instance_block)(job, rec + (size_t)i * KILN__INST_FLOATS, job->out + (size_t)i * stride);
    if (i < n) {
        /* the tail, padded with copies of the last record (finite, like every record) */
        kiln_blob_instance pad[KV_W];
        float tmp[KV_W * 16];
        uint32_t left = n - i;
        memcpy(pad, job->inst + i, left * sizeof *pad);
        for (uint32_t k = left; k < KV_W; k++) pad[k] = job->inst[n - 1];
        KILN__SFX(kiln__instance_block)(job, (const float *)(const void *)pad, tmp);
        memcpy(job->out + (size_t)i * stride, tmp, (size_t)left * stride * sizeof(float));
    }
}
