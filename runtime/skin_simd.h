/* runtime/skin_simd.h - the skinning kernels, written once in the simd_ops.h vocabulary and
 * compiled per path (skin_sse2.c, skin_avx2.c, skin_avx512.c). Private template: include after
 * simd_ops.h and after the path's primitives, which work on a batch of KV_W vertices:
 *
 *   kiln__skin_ld3(p, &x, &y, &z)          KV_W packed float3 -> SoA
 *   kiln__skin_ld_unorm(p, q[3])           KV_W UNORM16x4 -> the integers as floats, SoA
 *   kiln__skin_ld_oct(p, &x, &y)           KV_W OCT16x2 -> the snorm integers as floats, SoA
 *   kiln__skin_st3(p, x, y, z)             SoA -> KV_W packed float3
 *   kiln__fast_batch(job, v0, n, N, size, off)
 *                                          1 when the batch can be read in place (whole, the
 *                                          baker's strides, joints in range), with the joints
 *                                          turned into record offsets off[l * JS(N) + i]
 *   kiln__lbs_gather(job, w, N, off, m)    blend each vertex's influences (AoS, per vertex) and
 *                                          transpose: 12 SoA rows of the 3x4 M, m[c * 3 + r]
 *   kiln__dqs_gather(job, w, N, S, off, q, s)
 *                                          the same for dual quaternions: 8 rows (real xyzw,
 *                                          dual xyzw, normalised by the real part's length)
 *                                          and, when S, the 9 rows of the stretch
 *
 * The work goes in blocks of KILN__SKIN_BLOCK batches: the blend of each batch, then each wanted
 * output over the block (inputs read in place, or staged for the last partial batch and for
 * other strides than the packed ones; transformed in SoA; stored). The reference semantics are
 * the scalar kernels in skin_scalar.c.
 *
 * Own layout, not cglm's: after the gather a register holds one matrix element (or one dual
 * quaternion component) of KV_W vertices, 4, 8 or 16 of them, so a vertex transform is a
 * dozen lane-wise multiply-adds with no shuffles, and positions and normals are read and
 * written as packed float3 streams. cglm works on one vec3/vec4/mat4 per call, AVX-512 not at
 * all; the scalar reference in skin_scalar.c uses it one vertex at a time.
 */

#if defined(__GNUC__) || defined(__clang__)
#define KILN__NOINLINE __attribute__((noinline))
#else
#define KILN__NOINLINE
#endif

/* Every influence count the kernels specialise for (0 to KILN__SKIN_MAX_INFLUENCES), as an
 * X-macro: one out-of-line function per count, and the table that dispatches to them. */
#define KILN__SKIN_COUNTS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8)

#define KILN__SKIN_BLOCK 4u /* batches per block (kiln__lbs_outputs explains why) */
/* Buffers of SoA rows and staged lanes are cache-line aligned: a 16-lane row is a whole line,
 * and one that straddled two would make every store and reload of it a split access. */

/* Packed bytes per element of each input format (F32x4 reads as F32x3). */
static inline uint32_t kiln__skin_elem(uint32_t format)
{
    return format == KILN_FORMAT_UNORM16x4 ? 8u : format == KILN_FORMAT_OCT16x2 ? 4u : 12u;
}

/* Vertices [v0, v0 + n) of an input, packed: in place when they already are, else copied into
 * `stage` (KV_W elements; lanes past n repeat the last vertex, so every lane stays finite). */
KILN__FN const unsigned char *KILN__SFX(kiln__skin_src)(const kiln__skin_in *in, uint32_t v0, uint32_t n,
                                                       unsigned char *stage)
{
    uint32_t e = kiln__skin_elem(in->format);
    const unsigned char *src = in->data + (size_t)v0 * in->stride;
    if (n == KV_W && in->stride == e) return src;
    for (uint32_t l = 0; l < KV_W; l++) memcpy(stage + l * e, src + (size_t)(l < n ? l : n - 1u) * in->stride, e);
    return stage;
}

/* Whole batches of packed float3, tested first: the common case costs a compare or two. */
KILN__FN int kiln__skin_packed3(const kiln__skin_in *in, uint32_t n)
{
    return n == KV_W && in->format == KILN_FORMAT_F32x3 && in->stride == 12u;
}

KILN__FN void KILN__SFX(kiln__skin_position)(const kiln__skin_in *in, uint32_t v0, uint32_t n, kv *x, kv *y, kv *z)
{
    if (kiln__skin_packed3(in, n)) {
        kiln__skin_ld3((const float *)(const void *)(in->data + (size_t)v0 * 12u), x, y, z);
        return;
    }
    _Alignas(64) unsigned char stage[KV_W * 12];
    const unsigned char *p = KILN__SFX(kiln__skin_src)(in, v0, n, stage);
    if (in->format == KILN_FORMAT_UNORM16x4) {
        kv q[3];
        kiln__skin_ld_unorm(p, q);
        *x = kv_fma(q[0], kv_set1(in->scale[0]), kv_set1(in->offset[0]));
        *y = kv_fma(q[1], kv_set1(in->scale[1]), kv_set1(in->offset[1]));
        *z = kv_fma(q[2], kv_set1(in->scale[2]), kv_set1(in->offset[2]));
    } else {
        kiln__skin_ld3((const float *)(const void *)p, x, y, z);
    }
}

/* A direction, unnormalised (octahedral: skin_internal.h). */
KILN__FN void KILN__SFX(kiln__skin_direction)(const kiln__skin_in *in, uint32_t v0, uint32_t n, kv *x, kv *y, kv *z)
{
    if (kiln__skin_packed3(in, n)) {
        kiln__skin_ld3((const float *)(const void *)(in->data + (size_t)v0 * 12u), x, y, z);
        return;
    }
    _Alignas(64) unsigned char stage[KV_W * 12];
    const unsigned char *p = KILN__SFX(kiln__skin_src)(in, v0, n, stage);
    if (in->format == KILN_FORMAT_OCT16x2) {
        kv ox, oy;
        kiln__skin_ld_oct(p, &ox, &oy);
        ox = kv_max(kv_mul(ox, kv_set1(KILN__OCT_INV)), kv_set1(-1.0f));
        oy = kv_max(kv_mul(oy, kv_set1(KILN__OCT_INV)), kv_set1(-1.0f));
        kv oz = kv_sub(kv_sub(kv_set1(1.0f), kv_abs(ox)), kv_abs(oy));
        kv t = kv_max(kv_sub(kv_zero(), oz), kv_zero());
        *x = kv_sub(ox, kv_or(t, kv_neg_mask(ox))); /* x - copysign(t, x) */
        *y = kv_sub(oy, kv_or(t, kv_neg_mask(oy)));
        *z = oz;
    } else {
        kiln__skin_ld3((const float *)(const void *)p, x, y, z);
    }
}

KILN__FN void KILN__SFX(kiln__skin_put)(const kiln__skin_out *o, uint32_t v0, uint32_t n, kv x, kv y, kv z)
{
    if (n == KV_W && o->stride == 12u) {
        kiln__skin_st3(o->data + (size_t)v0 * 3u, x, y, z);
        return;
    }
    unsigned char *dst = (unsigned char *)o->data + (size_t)v0 * o->stride;
    _Alignas(64) float tmp[KV_W * 3];
    kiln__skin_st3(tmp, x, y, z);
    for (uint32_t l = 0; l < n; l++) memcpy(dst + (size_t)l * o->stride, tmp + 3 * l, 3 * sizeof(float));
}

/* v / |v| (a zero vector stays zero), times -1 where `sign` has the sign bit. */
KILN__FN void KILN__SFX(kiln__skin_normalise)(kv *x, kv *y, kv *z, kv sign)
{
    kv len2 = kv_fma(*x, *x, kv_fma(*y, *y, kv_mul(*z, *z)));
    kv s = kv_xor(kv_rsqrt(kv_max(len2, kv_set1(1e-30f))), kv_neg_mask(sign));
    *x = kv_mul(*x, s), *y = kv_mul(*y, s), *z = kv_mul(*z, s);
}

/* Row i of a column-major 3x3 (or 3x4) of SoA rows in memory: element (i % 3, i / 3). */
#define A_(i) kv_ld(a + (i) * KV_W)

/* r = A v, A a column-major 3x3 of SoA rows (a[c * 3 + r]) */
KILN__FN void KILN__SFX(kiln__skin_mul3)(const float *a, kv vx, kv vy, kv vz, kv *rx, kv *ry, kv *rz)
{
    *rx = kv_fma(A_(0), vx, kv_fma(A_(3), vy, kv_mul(A_(6), vz)));
    *ry = kv_fma(A_(1), vx, kv_fma(A_(4), vy, kv_mul(A_(7), vz)));
    *rz = kv_fma(A_(2), vx, kv_fma(A_(5), vy, kv_mul(A_(8), vz)));
}

/* n' = cof(A) n, the inverse transpose up to det(A), whose sign is returned in *det. */
KILN__FN void KILN__SFX(kiln__skin_cofactor_mul)(const float *a, kv nx, kv ny, kv nz, kv *rx, kv *ry, kv *rz, kv *det)
{
    kv a0 = A_(0), a1 = A_(1), a2 = A_(2), a3 = A_(3), a4 = A_(4), a5 = A_(5), a6 = A_(6), a7 = A_(7), a8 = A_(8);
    kv c00 = kv_fnma(a7, a5, kv_mul(a4, a8)); /* a11 a22 - a12 a21 */
    kv c01 = kv_fnma(a1, a8, kv_mul(a7, a2)); /* a12 a20 - a10 a22 */
    kv c02 = kv_fnma(a4, a2, kv_mul(a1, a5)); /* a10 a21 - a11 a20 */
    kv c10 = kv_fnma(a3, a8, kv_mul(a6, a5)); /* a02 a21 - a01 a22 */
    kv c11 = kv_fnma(a6, a2, kv_mul(a0, a8)); /* a00 a22 - a02 a20 */
    kv c12 = kv_fnma(a0, a5, kv_mul(a3, a2)); /* a01 a20 - a00 a21 */
    kv c20 = kv_fnma(a6, a4, kv_mul(a3, a7)); /* a01 a12 - a02 a11 */
    kv c21 = kv_fnma(a0, a7, kv_mul(a6, a1)); /* a02 a10 - a00 a12 */
    kv c22 = kv_fnma(a3, a1, kv_mul(a0, a4)); /* a00 a11 - a01 a10 */
    *det = kv_fma(a0, c00, kv_fma(a3, c01, kv_mul(a6, c02)));
    *rx = kv_fma(c00, nx, kv_fma(c01, ny, kv_mul(c02, nz)));
    *ry = kv_fma(c10, nx, kv_fma(c11, ny, kv_mul(c12, nz)));
    *rz = kv_fma(c20, nx, kv_fma(c21, ny, kv_mul(c22, nz)));
}

/* ---- linear blend ------------------------------------------------------------------------------ */

#define M_(i) kv_ld(m + (i) * KV_W)
#define Q_(i) kv_ld(q + (i) * KV_W)

/* The batches that cannot be read in place (kiln__fast_batch: the last partial one, a joint past
 * the skeleton, strides other than the baker's) are staged in the fast path's layout: record
 * offsets of the clamped joints at off[l * JS(N) + i], weights packed N per lane; lanes past n
 * repeat the last vertex. Then the same specialised gather runs on them. */
static void KILN__SFX(kiln__stage_batch)(const kiln__skin_job *job, uint32_t v0, uint32_t n, uint32_t size, uint32_t *off,
                                          float *w)
{
    const uint32_t N = job->influences, js = KILN__SKIN_JS(N);
    if (!N) return; /* no skin: nothing to stage (and no streams to read) */
    for (uint32_t l = 0; l < KV_W; l++) {
        uint32_t v = v0 + (l < n ? l : n - 1u);
        const unsigned char *jp = job->joints + (size_t)v * job->joint_stride;
        for (uint32_t i = 0; i < N; i++) {
            uint16_t j;
            memcpy(&j, jp + 2 * i, sizeof j);
            off[l * js + i] = (j <= job->max_joint ? j : job->max_joint) * size;
        }
        memcpy(w + l * N, job->weights + (size_t)v * job->weight_stride, N * sizeof(float));
    }
}

/* The gather of a staged batch, out of line and dispatched on the influence count, so that it
 * runs the very code of the fast path (its results are bit-identical to it, whatever batch
 * a vertex falls in when a mesh is split into ranges). One function per count, as below. */
#define KILN__STAGED_N(n)                                                                                  \
    static KILN__KERNEL KILN__NOINLINE void KILN__SFX(kiln__lbs_staged_n##n)(const kiln__skin_job *job, float *m, \
                                                                            const uint32_t *off, const float *w) \
    {                                                                                                  \
        kiln__lbs_gather(job, w, n, off, m);                                                           \
    }
KILN__SKIN_COUNTS(KILN__STAGED_N)
#undef KILN__STAGED_N

static KILN__KERNEL void KILN__SFX(kiln__lbs_gather_staged)(const kiln__skin_job *job, uint32_t v0, uint32_t n, float *m)
{
    typedef void (*gather_fn)(const kiln__skin_job *, float *, const uint32_t *, const float *);
#define KILN__STAGED_ENTRY(n) KILN__SFX(kiln__lbs_staged_n##n),
    static const gather_fn by_count[] = {KILN__SKIN_COUNTS(KILN__STAGED_ENTRY)};
#undef KILN__STAGED_ENTRY
    _Alignas(64) uint32_t off[KV_W * KILN__SKIN_MAX_INFLUENCES];
    _Alignas(64) float w[KV_W * KILN__SKIN_MAX_INFLUENCES];
    KILN__SFX(kiln__stage_batch)(job, v0, n, 64u, off, w);
    by_count[job->influences < 8u ? job->influences : 8u](job, m, off, w);
}

/* The weights of the batch at v0 in place, at the baker's stride (NULL without a skin). */
KILN__FN const float *KILN__SFX(kiln__batch_weights)(const kiln__skin_job *job, uint32_t v0, const uint32_t N)
{
    return N ? (const float *)(const void *)(job->weights + (size_t)v0 * 4u * N) : NULL;
}

/* Vertices in batch k of the block at b0. */
static inline uint32_t kiln__batch_size(uint32_t count, uint32_t v0) { return count - v0 < KV_W ? count - v0 : KV_W; }

/* The outputs of a block of nb batches from b0, whose blended matrices are mb[k] (12 SoA rows
 * each), one output at a time: the batches of a phase are independent, and a phase is short
 * enough that the core overlaps several, where one long batch after another would leave it
 * waiting on each batch's dependency chain. Shared by every influence count (out of line). */
static KILN__KERNEL void KILN__SFX(kiln__lbs_outputs)(const kiln__skin_job *job, uint32_t b0, uint32_t nb,
                                                       const float (*mb)[12 * KV_W])
{
    const uint32_t count = job->count;
    /* local copies: the output stores may alias the job as far as the compiler knows, and would
     * have it reload and re-derive the stream parameters every batch */
    const kiln__skin_in pos = job->pos, nrm = job->nrm, tan = job->tan;
    const kiln__skin_out out_pos = job->out_pos, out_nrm = job->out_nrm, out_tan = job->out_tan;
    if (out_pos.data)
        for (uint32_t k = 0; k < nb; k++) {
            uint32_t v0 = b0 + k * KV_W, n = kiln__batch_size(count, v0);
            const float *m = mb[k];
            kv x, y, z;
            KILN__SFX(kiln__skin_position)(&pos, v0, n, &x, &y, &z);
            kv ox = kv_fma(M_(0), x, kv_fma(M_(3), y, kv_fma(M_(6), z, M_(9))));
            kv oy = kv_fma(M_(1), x, kv_fma(M_(4), y, kv_fma(M_(7), z, M_(10))));
            kv oz = kv_fma(M_(2), x, kv_fma(M_(5), y, kv_fma(M_(8), z, M_(11))));
            KILN__SFX(kiln__skin_put)(&out_pos, v0, n, ox, oy, oz);
        }
    if (out_nrm.data)
        for (uint32_t k = 0; k < nb; k++) {
            uint32_t v0 = b0 + k * KV_W, n = kiln__batch_size(count, v0);
            kv x, y, z, ox, oy, oz, det;
            KILN__SFX(kiln__skin_direction)(&nrm, v0, n, &x, &y, &z);
            KILN__SFX(kiln__skin_cofactor_mul)(mb[k], x, y, z, &ox, &oy, &oz, &det);
            KILN__SFX(kiln__skin_normalise)(&ox, &oy, &oz, det);
            KILN__SFX(kiln__skin_put)(&out_nrm, v0, n, ox, oy, oz);
        }
    if (out_tan.data)
        for (uint32_t k = 0; k < nb; k++) {
            uint32_t v0 = b0 + k * KV_W, n = kiln__batch_size(count, v0);
            kv x, y, z, ox, oy, oz;
            KILN__SFX(kiln__skin_direction)(&tan, v0, n, &x, &y, &z);
            KILN__SFX(kiln__skin_mul3)(mb[k], x, y, z, &ox, &oy, &oz);
            KILN__SFX(kiln__skin_normalise)(&ox, &oy, &oz, kv_zero());
            KILN__SFX(kiln__skin_put)(&out_tan, v0, n, ox, oy, oz);
        }
}

/* Every block of the job with N influences: the blend is specialised per count (N is a
 * constant where this is inlined, so the per-vertex loops unroll), the outputs are not. */
KILN__FN void KILN__SFX(kiln__lbs_batches)(const kiln__skin_job *job, const uint32_t N)
{
    const uint32_t count = job->count;
    for (uint32_t b0 = 0; b0 < count; b0 += KV_W * KILN__SKIN_BLOCK) {
        uint32_t nb = (count - b0 + KV_W - 1u) / KV_W;
        nb = nb < KILN__SKIN_BLOCK ? nb : KILN__SKIN_BLOCK;
        /* the rows stay in memory (L1) and are loaded where used */
        _Alignas(64) float mb[KILN__SKIN_BLOCK][12 * KV_W];
        for (uint32_t k = 0; k < nb; k++) {
            uint32_t v0 = b0 + k * KV_W, n = kiln__batch_size(count, v0);
            _Alignas(64) uint32_t off[KV_W * KILN__SKIN_MAX_INFLUENCES];
            if (kiln__fast_batch(job, v0, n, N, 64u, off))
                kiln__lbs_gather(job, KILN__SFX(kiln__batch_weights)(job, v0, N), N, off, mb[k]);
            else
                KILN__SFX(kiln__lbs_gather_staged)(job, v0, n, mb[k]);
        }
        KILN__SFX(kiln__lbs_outputs)(job, b0, nb, (const float(*)[12 * KV_W])mb);
    }
}

/* One function per influence count, kept out of line: one body holding all nine would be a
 * single huge function, which compilers optimise (and sanitizers instrument) in superlinear
 * time. The call per job costs nothing measurable. */
#define KILN__LBS_N(n)                                                                                  \
    static KILN__KERNEL KILN__NOINLINE void KILN__SFX(kiln__lbs_n##n)(const kiln__skin_job *job)          \
    {                                                                                                  \
        KILN__SFX(kiln__lbs_batches)(job, n);                                                          \
    }
KILN__SKIN_COUNTS(KILN__LBS_N)
#undef KILN__LBS_N

KILN__KERNEL void KILN__SFX(kiln__skin_lbs)(const kiln__skin_job *job)
{
#define KILN__LBS_ENTRY(n) KILN__SFX(kiln__lbs_n##n),
    static const kiln__skin_fn by_count[] = {KILN__SKIN_COUNTS(KILN__LBS_ENTRY)};
#undef KILN__LBS_ENTRY
    by_count[job->influences < 8u ? job->influences : 8u](job);
}

/* ---- dual quaternion blend ------------------------------------------------------------------- */

/* v rotated by unit quaternions r (SoA rows): v + 2 r.xyz × (r.xyz × v + r.w v). */
KILN__FN void KILN__SFX(kiln__skin_rotate)(const float *q, kv *x, kv *y, kv *z)
{
    kv r0 = kv_ld(q), r1 = kv_ld(q + KV_W), r2 = kv_ld(q + 2 * KV_W), r3 = kv_ld(q + 3 * KV_W);
    kv cx = kv_fma(r3, *x, kv_fnma(r2, *y, kv_mul(r1, *z)));
    kv cy = kv_fma(r3, *y, kv_fnma(r0, *z, kv_mul(r2, *x)));
    kv cz = kv_fma(r3, *z, kv_fnma(r1, *x, kv_mul(r0, *y)));
    kv two = kv_set1(2.0f);
    *x = kv_fma(two, kv_fnma(r2, cy, kv_mul(r1, cz)), *x);
    *y = kv_fma(two, kv_fnma(r0, cz, kv_mul(r2, cx)), *y);
    *z = kv_fma(two, kv_fnma(r1, cx, kv_mul(r0, cy)), *z);
}

/* The outputs of a block (kiln__lbs_outputs): qb[k] the blended dual quaternions (8 rows,
 * normalised by the gather), sb[k] the blended stretches (9 rows, when stretched). */
static KILN__KERNEL void KILN__SFX(kiln__dqs_outputs)(const kiln__skin_job *job, uint32_t b0, uint32_t nb,
                                                       const float (*qb)[8 * KV_W], const float (*sb)[9 * KV_W])
{
    const uint32_t count = job->count;
    /* local copies: the output stores may alias the job as far as the compiler knows, and would
     * have it reload and re-derive the stream parameters every batch */
    const kiln__skin_in pos = job->pos, nrm = job->nrm, tan = job->tan;
    const kiln__skin_out out_pos = job->out_pos, out_nrm = job->out_nrm, out_tan = job->out_tan;
    const int stretched = job->stretched != 0;
    if (out_pos.data)
        for (uint32_t k = 0; k < nb; k++) {
            uint32_t v0 = b0 + k * KV_W, n = kiln__batch_size(count, v0);
            const float *q = qb[k];
            kv x, y, z;
            KILN__SFX(kiln__skin_position)(&pos, v0, n, &x, &y, &z);
            if (stretched) {
                kv sx, sy, sz;
                KILN__SFX(kiln__skin_mul3)(sb[k], x, y, z, &sx, &sy, &sz);
                x = sx, y = sy, z = sz;
            }
            KILN__SFX(kiln__skin_rotate)(q, &x, &y, &z);
            /* translation 2 (r.w d.xyz - d.w r.xyz + r.xyz × d.xyz), r = q[0..3], d = q[4..7] */
            kv two = kv_set1(2.0f);
            kv tx = kv_fma(Q_(3), Q_(4), kv_fnma(Q_(7), Q_(0), kv_fnma(Q_(2), Q_(5), kv_mul(Q_(1), Q_(6)))));
            kv ty = kv_fma(Q_(3), Q_(5), kv_fnma(Q_(7), Q_(1), kv_fnma(Q_(0), Q_(6), kv_mul(Q_(2), Q_(4)))));
            kv tz = kv_fma(Q_(3), Q_(6), kv_fnma(Q_(7), Q_(2), kv_fnma(Q_(1), Q_(4), kv_mul(Q_(0), Q_(5)))));
            KILN__SFX(kiln__skin_put)(&out_pos, v0, n, kv_fma(two, tx, x), kv_fma(two, ty, y), kv_fma(two, tz, z));
        }
    if (out_nrm.data)
        for (uint32_t k = 0; k < nb; k++) {
            uint32_t v0 = b0 + k * KV_W, n = kiln__batch_size(count, v0);
            kv x, y, z, sign = kv_zero();
            KILN__SFX(kiln__skin_direction)(&nrm, v0, n, &x, &y, &z);
            if (stretched) {
                kv sx, sy, sz;
                KILN__SFX(kiln__skin_cofactor_mul)(sb[k], x, y, z, &sx, &sy, &sz, &sign);
                x = sx, y = sy, z = sz;
            }
            KILN__SFX(kiln__skin_rotate)(qb[k], &x, &y, &z);
            KILN__SFX(kiln__skin_normalise)(&x, &y, &z, sign);
            KILN__SFX(kiln__skin_put)(&out_nrm, v0, n, x, y, z);
        }
    if (out_tan.data)
        for (uint32_t k = 0; k < nb; k++) {
            uint32_t v0 = b0 + k * KV_W, n = kiln__batch_size(count, v0);
            kv x, y, z;
            KILN__SFX(kiln__skin_direction)(&tan, v0, n, &x, &y, &z);
            if (stretched) {
                kv sx, sy, sz;
                KILN__SFX(kiln__skin_mul3)(sb[k], x, y, z, &sx, &sy, &sz);
                x = sx, y = sy, z = sz;
            }
            KILN__SFX(kiln__skin_rotate)(qb[k], &x, &y, &z);
            KILN__SFX(kiln__skin_normalise)(&x, &y, &z, kv_zero());
            KILN__SFX(kiln__skin_put)(&out_tan, v0, n, x, y, z);
        }
}

/* Every block of a dual quaternion job. */
KILN__FN void KILN__SFX(kiln__dqs_batches)(const kiln__skin_job *job, const uint32_t N)
{
    const int stretched = job->stretched != 0;
    const uint32_t count = job->count;
    for (uint32_t b0 = 0; b0 < count; b0 += KV_W * KILN__SKIN_BLOCK) {
        uint32_t nb = (count - b0 + KV_W - 1u) / KV_W;
        nb = nb < KILN__SKIN_BLOCK ? nb : KILN__SKIN_BLOCK;
        _Alignas(64) float qb[KILN__SKIN_BLOCK][8 * KV_W], sb[KILN__SKIN_BLOCK][9 * KV_W];
        for (uint32_t k = 0; k < nb; k++) {
            uint32_t v0 = b0 + k * KV_W, n = kiln__batch_size(count, v0);
            _Alignas(64) uint32_t off[KV_W * KILN__SKIN_MAX_INFLUENCES];
            _Alignas(64) float stage[KV_W * KILN__SKIN_MAX_INFLUENCES];
            const float *w = KILN__SFX(kiln__batch_weights)(job, v0, N);
            if (!kiln__fast_batch(job, v0, n, N, 96u, off)) {
                KILN__SFX(kiln__stage_batch)(job, v0, n, 96u, off, stage);
                w = stage;
            }
            kiln__dqs_gather(job, w, N, stretched, off, qb[k], sb[k]);
        }
        KILN__SFX(kiln__dqs_outputs)(job, b0, nb, (const float(*)[8 * KV_W])qb, (const float(*)[9 * KV_W])sb);
    }
}

/* Specialised per influence count, as the linear blend: with N a constant the gather's loops
 * unroll and its record offsets are constant displacements. */
#define KILN__DQS_N(n)                                                                                  \
    static KILN__KERNEL KILN__NOINLINE void KILN__SFX(kiln__dqs_n##n)(const kiln__skin_job *job)          \
    {                                                                                                  \
        KILN__SFX(kiln__dqs_batches)(job, n);                                                          \
    }
KILN__SKIN_COUNTS(KILN__DQS_N)
#undef KILN__DQS_N

KILN__KERNEL void KILN__SFX(kiln__skin_dqs)(const kiln__skin_job *job)
{
#define KILN__DQS_ENTRY(n) KILN__SFX(kiln__dqs_n##n),
    static const kiln__skin_fn by_count[] = {KILN__SKIN_COUNTS(KILN__DQS_ENTRY)};
#undef KILN__DQS_ENTRY
    by_count[job->influences < 8u ? job->influences : 8u](job);
}

#undef A_
#undef M_
#undef Q_
