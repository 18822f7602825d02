/* runtime/anim_internal.h - the binding layout, the kernel jobs and the per-path kernel table
 * shared by the animation runtime files. Private; nothing here is part of the ABI.
 */
#ifndef KILN_ANIM_INTERNAL_H
#define KILN_ANIM_INTERNAL_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "clip_codec.h"
#include "kiln/anim.h"
#include "simd.h"

#ifndef KILN__NOINLINE /* (as skin_simd.h spells it) */
#if defined(__GNUC__) || defined(__clang__)
#define KILN__NOINLINE __attribute__((noinline))
#else
#define KILN__NOINLINE
#endif
#endif

#define KILN__LANES KILN_SOA_WIDTH
#define KILN__SOA_BYTES ((uint32_t)sizeof(kiln_soa_xform)) /* 320: 10 components x 8 lanes */
#define KILN__SLERP_DEG 6 /* degree in x of the nlerp correction (kiln__slerp_fit) */

/* Components of kiln_soa_xform, in memory order. */
enum { KILN__TX, KILN__TY, KILN__TZ, KILN__QX, KILN__QY, KILN__QZ, KILN__QW, KILN__SX, KILN__SY, KILN__SZ };

/* ---- clip data layout -------------------------------------------------------------------
 * The layout, the widths, the slack and the dequantisation are the baker's and the runtime's
 * contract (contract/clip_codec.h). At kiln_blob_animation.data_offset: constants
 * (block_count x kiln_soa_xform), then the track table (animated_count x kiln_blob_anim_track,
 * 72 bytes each), then the rows, which start at the next 16-byte boundary after the table,
 * then the slack of a lossy clip. */
static inline int kiln__clip_layout_of_anim(const kiln_blob_animation *a, kiln__clip_layout *l)
{
    return kiln__clip_layout_of(a->data_offset, a->block_count, a->animated_count, a->frame_count, a->row_stride,
                                (a->flags & KILN_ANIM_LOSSY) != 0, l);
}

/* ---- the binding ------------------------------------------------------------------------- */

/* Where a (block, component) pair's 8 lanes come from in each frame row. */
#define KILN__SRC_CONST   0u /* the clip's constant block (same value every row) */
#define KILN__SRC_RAW     1u /* 8 floats in the row itself, at the track's row_offset */
#define KILN__SRC_DECODED 2u /* a quantised track (or the rebuilt qw), decoded per row */

/* Block flags */
#define KILN__BLK_ABSOLUTE 0x01u /* every lane's result is the key itself: out = k */
#define KILN__BLK_DENSE    0x02u /* all 10 components raw and consecutive: the row holds a kiln_soa_xform */
#define KILN__BLK_DECODE   0x04u /* has quantised tracks (or a rebuilt qw) to decode per row */
#define KILN__BLK_QW       0x08u /* lossy: qw = sqrt(max(0, 1 - qx^2 - qy^2 - qz^2)) per row */
#define KILN__BLK_FRAC     0x10u /* some lane: additive rotation weight in (0, 1): SIMD slerp(I, k, a) */
#define KILN__BLK_EXACT    0x20u /* some lane: additive rotation weight outside [0, 1]: scalar fix-up */
#define KILN__BLK_UNIFORM  0x40u /* lossy, every component but qw quantised at one width, in
                                    component order at consecutive row offsets (fast decode) */
#define KILN__BLK_CACHE    0x80u /* DECODE blocks whose decoded rows the sampling context keeps
                                    (every DECODE block; anim_bind.c) */

#define KILN__BLK_PACKED   0x100u /* lossy, the 9 stored components (all but qw) quantised at any
                                     widths, their tracks consecutive and their lanes packed back to
                                     back in component order from offset[0] (dispatch-free decode) */

#define KILN__BLK_NARROW   0x200u /* PACKED, every width at most 16 bits (one 16-byte read per
                                     track on the AVX2 path) */

typedef struct kiln__clip_block {
    uint8_t  kind[KILN_ANIM_COMPONENTS];    /* KILN__SRC_* */
    uint8_t  width[KILN_ANIM_COMPONENTS];   /* DECODED: bits per lane; 0 for the rebuilt qw */
    uint16_t flags;                         /* KILN__BLK_* */
    uint32_t track[KILN_ANIM_COMPONENTS];   /* DECODED: index in the clip's track table */
    uint32_t offset[KILN_ANIM_COMPONENTS];  /* RAW and DECODED: byte offset in the row */
    uint32_t uniform_width;                 /* UNIFORM: the width; tracks track[0].. and offsets
                                               offset[0] + k * width for the k-th stored component */
    uint8_t  packed_width[KILN_ANIM_COMPONENTS - 1]; /* PACKED: widths of tx ty tz qx qy qz sx sy sz */
} kiln__clip_block;

/* Per-lane mode coefficients of one clip block, so that composing against the rest pose
 * (T0, R0, S0) and the pose underneath (Tc, Rc, Sc) is branch-free:
 *   T = ta·T0 + tb·Tc + tc·k
 *   S = (sa·S0 + sb·Sc + sz) · (sc·k + sd)
 *   R = (ra·R0 + rb·Rc + rz·I) ⊗ k',  k' = rk·k + (1 - rk)·I, or slerp(I, k, a) on FRAC lanes
 * Every coefficient is 0 or 1 except tc (the additive weight), sc and sd (a, 1 - a).
 *   absolute: T = k,          R = k,            S = k
 *   relative: T = T0 + k,     R = R0 ⊗ k,       S = S0 · k
 *   additive: T = Tc + a·k,   R = Rc ⊗ k^a,     S = Sc · (a·k + 1 - a)
 *   no curve: T = Tc,         R = Rc,           S = Sc
 * Lanes of slots that drive no bone are "no curve" (and ignored when scattered). */
typedef struct kiln__modes {
    float ta[3][KILN__LANES], tb[3][KILN__LANES], tc[3][KILN__LANES];
    float sa[3][KILN__LANES], sb[3][KILN__LANES], sz[3][KILN__LANES], sc[3][KILN__LANES], sd[3][KILN__LANES];
    float ra[KILN__LANES], rb[KILN__LANES], rz[KILN__LANES], rk[KILN__LANES];
    float frac_a[KILN__LANES];      /* FRAC lanes: a; others 1 */
    uint32_t frac_mask[KILN__LANES]; /* ~0 on FRAC lanes */
    float exact_a[KILN__LANES];     /* EXACT lanes: a (applied by the scalar fix-up); others 1 */
    uint32_t exact_mask[KILN__LANES];
} kiln__modes;

#define KILN__BINDING_MAGIC 0x444E424Bu /* "KBND" */

/* Binding flags */
#define KILN__BIND_IDENTITY 0x1u /* clip slot j drives skeleton bone j (or nothing) for every j */
#define KILN__BIND_LOSSY    0x2u
#define KILN__BIND_CACHE    0x4u /* some block has KILN__BLK_CACHE: contexts hold decoded rows */
#define KILN__BIND_FILL     0x8u /* IDENTITY and every clip block sampled (block_count <= soa_count):
                                    a context's new row i+1 may be left to the kernel (fill1) */

struct kiln_anim_binding {
    uint32_t magic;
    uint32_t flags;                    /* KILN__BIND_* */
    const kiln_blob *anim_blob;
    const kiln_blob *skel_blob;
    const kiln_blob_animation *clip;
    uint32_t clip_index, skeleton;
    /* clip */
    double   framerate;
    int64_t  first_frame, last_frame;
    uint32_t frame_count, row_stride;
    uint32_t joint_count, block_count;
    uint32_t scalar_count;
    uint32_t clip_flags;
    const unsigned char *constants;    /* block_count kiln_soa_xform */
    const kiln_blob_anim_track *tracks;
    const unsigned char *rows;
    const kiln_blob_anim_scalar *scalars;
    /* skeleton */
    uint32_t bone_count, soa_count;
    const kiln_soa_xform *rest;        /* soa_count blocks */
    uint32_t sampled;                  /* IDENTITY: the blocks kiln_sample samples in place,
                                          min(block_count, soa_count) */
    double   period;                   /* frame_count - 1: frames from the first row to the last */
    /* derived, in the same caller memory */
    kiln__clip_block *blocks;          /* block_count */
    kiln__modes *modes;                /* block_count */
    uint32_t *slot_bone;               /* joint_count: skeleton bone, or KILN_BLOB_NONE */
    float    *packed_scale;            /* lossy: per block, 9 components x 8 lanes of
                                          range_extent / (2^w - 1) (PACKED blocks only) */
};

/* ---- sampling jobs ---------------------------------------------------------------------- */
typedef struct kiln__sample_job {
    const kiln_anim_binding *binding;
    const unsigned char *row0, *row1;     /* raw rows i and i+1 */
    const kiln_soa_xform *dec0, *dec1;    /* decoded rows (context cache), or NULL: decode per block
                                             (only blocks with KILN__BLK_CACHE are read there) */
    kiln_soa_xform *fill1;                /* NULL, or dec1 not yet decoded: the kernel decodes row1
                                             into it block by block (every CACHE block it samples) */
    float u;                              /* in [0, 1] */
    float slerp_q[KILN__SLERP_DEG];       /* nlerp correction polynomial for this u (kiln__slerp_coeffs) */
    int   u_zero;                         /* u == 0: rotations are row i's keys as stored */
} kiln__sample_job;

/* The nlerp parameter correction. Between unit quaternions a, b (b on a's hemisphere, d = a·b,
 * x = 1 - d), nlerp(a, b, t') equals slerp(a, b, t) for
 *     t' = t + x · g · Σ_{i<6} x^i Σ_{j<4} C[i][j] y^j,   g = t(t - ½)(t - 1), y = (t - ½)²
 * (least-squares fit of the exact t' = sin tθ / (sin tθ + sin (1-t)θ), weighted toward small
 * angles). Largest rotation-angle error against exact slerp, evaluated in float: 2.4e-8 rad
 * for keys up to 20° of rotation apart, 7e-8 up to 60°, 1e-7 up to 90°, 3.3e-6 up to 180°.
 * Plain nlerp: 9e-5 at 20°, 4e-2 at 120°. */
extern const float kiln__slerp_fit[KILN__SLERP_DEG][4];
/* The polynomial coefficients in x for a given t: t' = t + x·(q0 + x·(q1 + ...)). */
void kiln__slerp_coeffs(float t, float q[KILN__SLERP_DEG]);
/* t + x·(q0 + x·(q1 + ...)): the corrected nlerp parameter, x clamped to [0, 1] as in
 * kv_slerp_t (x = 1 - |dot| <= 1; keys far from unit length would put it far below 0, where the
 * polynomial overflows; NaN maps to 0 too). */
static inline float kiln__corrected(float t, float x, const float q[KILN__SLERP_DEG])
{
    x = x > 0.0f ? x : 0.0f;
    float p = q[KILN__SLERP_DEG - 1];
    for (int i = KILN__SLERP_DEG - 2; i >= 0; i--) p = p * x + q[i];
    return t + x * p;
}

/* Exact slerp(I, k, a) for one quaternion (double precision), shortest arc; any real a. */
void kiln__slerp_identity_exact(const float k[4], float a, float out[4]);

/* Applies the EXACT lanes' fix-up to an interpolated key block (rotation only). */
void kiln__fix_exact(const kiln__modes *m, kiln_soa_xform *k);

/* ---- pose jobs -------------------------------------------------------------------------- */
/* The most layers the uniform-weight blend takes (one more slot for the rest pose). */
#define KILN__BLEND_FLAT_MAX 8

/* A blend call, with what kiln_pose_blend works out once for every kernel (pose_blend.c
 * explains the scale): */
typedef struct kiln__blend_job {
    const kiln_blend_layer *layers;
    uint32_t layer_count;
    const kiln_soa_xform *rest;   /* NULL: identity */
    float threshold;
    kiln_soa_xform *out;
    uint32_t soa_count;
    double scale;                 /* the weight scale s (1 in the common case) */
    float thr, cap;               /* the scaled threshold, floored, and the masked-weight bound */
    /* When s = 1 and no layer masks its bones (every joint then has the same weights): the
     * `flat` poses with a weight (at most KILN__BLEND_FLAT_MAX layers, then the rest pose where
     * they fall short of the threshold) and their weights divided by their sum, which the SIMD
     * kernels blend directly (kiln__blend_flat_run and kiln__blend_flat2 in pose_simd.h); 0 for
     * the general loop. */
    unsigned flat;
    const kiln_soa_xform *flat_pose[KILN__BLEND_FLAT_MAX + 1];
    float flat_w[KILN__BLEND_FLAT_MAX + 1];
} kiln__blend_job;

typedef struct kiln__model_job {
    const kiln_blob_bone *bones;  /* bone_count, parent-first */
    uint32_t bone_count;
    const kiln_soa_xform *local;
    const float *root;            /* 16 floats, column-major; identity when the caller gave none */
    float *model;                 /* bone_count x 16 */
} kiln__model_job;

/* The model matrix of bone i, 16 floats at `out`, from its local in `local` (SoA blocks) and
 * the model matrix `p` of its parent (the root matrix for a root, or for a parent not below i):
 * the scalar reference of local_to_model (pose_model.c), one bone at a time. The rig's
 * per-bone updates call it too, so that an updated bone matches a full recomputation. */
void kiln__bone_to_model(const kiln_soa_xform *local, const kiln_blob_bone *bones, uint32_t i, const float *p,
                         float out[16]);
/* The same leaving the position (out[12..14]) as it is: the rig's update of a bone whose
 * translation and parent matrix did not change, which keeps its position bit for bit. */
void kiln__bone_to_model_linear(const kiln_soa_xform *local, const kiln_blob_bone *bones, uint32_t i, const float *p,
                                float out[16]);

/* ---- the animation columns of the kernel table (simd_table.h, simd_dispatch.c) -------------- */
typedef struct kiln__kernels {
    kiln_simd path;
    /* Fills every component of block `block` of row0 into d0 (and of row1 into d1 unless
     * d1 is NULL): constants copied, raw lanes copied, quantised tracks decoded, qw rebuilt. */
    void (*decode_block)(const kiln_anim_binding *b, uint32_t block, const unsigned char *row0,
                         const unsigned char *row1, kiln_soa_xform *d0, kiln_soa_xform *d1);
    /* Interpolates and composes clip blocks [b0, b1): rest/base/out point at block b0's. */
    void (*sample_blocks)(const kiln__sample_job *job, uint32_t b0, uint32_t b1, const kiln_soa_xform *rest,
                          const kiln_soa_xform *base, kiln_soa_xform *out);
    void (*blend)(const kiln__blend_job *job);
    /* The flat blend of two poses, out = wa·a + wb·b with wa + wb = 1 (job->flat == 2 of `blend`,
     * which kiln_pose_blend calls directly without a job); NULL on the scalar path. */
    void (*blend2)(kiln_soa_xform *out, uint32_t n, const kiln_soa_xform *a, const kiln_soa_xform *b, float wa,
                   float wb);
    void (*add)(kiln_soa_xform *pose, const kiln_soa_xform *delta, float weight, const float *joint_weights,
                uint32_t soa_count);
    void (*local_to_model)(const kiln__model_job *job);
    void (*skin)(const float *model, const float *inverse_binds, float *skin, uint32_t count);
} kiln__kernels;

/* The table in use is kiln__kernels_get() (simd_table.h): the animation columns of the row in
 * use, chosen once, on first use; kiln_simd_force changes it. */
/* The table of one path, or NULL when it is not built or the CPU lacks it. */
const kiln__kernels *kiln__kernels_for(kiln_simd path);

#define KILN__DECLARE_KERNELS(sfx)                                                                        \
    void kiln__decode_block_##sfx(const kiln_anim_binding *b, uint32_t block, const unsigned char *row0,   \
                                  const unsigned char *row1, kiln_soa_xform *d0, kiln_soa_xform *d1);     \
    void kiln__sample_blocks_##sfx(const kiln__sample_job *job, uint32_t b0, uint32_t b1,                 \
                                   const kiln_soa_xform *rest, const kiln_soa_xform *base, kiln_soa_xform *out); \
    void kiln__blend_##sfx(const kiln__blend_job *job);                                                   \
    void kiln__add_##sfx(kiln_soa_xform *pose, const kiln_soa_xform *delta, float weight,                 \
                         const float *joint_weights, uint32_t soa_count);                                 \
    void kiln__local_to_model_##sfx(const kiln__model_job *job);                                          \
    void kiln__skin_##sfx(const float *model, const float *inverse_binds, float *skin, uint32_t count);

#define KILN__DECLARE_BLEND2(sfx)                                                                         \
    void kiln__blend_flat2_##sfx(kiln_soa_xform *out, uint32_t n, const kiln_soa_xform *a,                \
                                 const kiln_soa_xform *b, float wa, float wb);

KILN__DECLARE_KERNELS(scalar)
#if KILN__SIMD_SSE2
KILN__DECLARE_KERNELS(sse2)
KILN__DECLARE_BLEND2(sse2)
#endif
#if KILN__SIMD_AVX2
KILN__DECLARE_KERNELS(avx2)
KILN__DECLARE_BLEND2(avx2)
#endif

/* ---- small shared helpers --------------------------------------------------------------- */
/* Component c of a block (byte arithmetic: the components are consecutive float[8] members
 * without padding, and indexing past tx[] would leave that member's bounds). */
static inline const float *kiln__soa_comp(const kiln_soa_xform *x, unsigned c)
{
    return (const float *)(const void *)((const unsigned char *)x + (size_t)c * KILN__LANES * sizeof(float));
}
static inline float *kiln__soa_comp_mut(kiln_soa_xform *x, unsigned c)
{
    return (float *)(void *)((unsigned char *)x + (size_t)c * KILN__LANES * sizeof(float));
}

/* The 8 lanes of each component in rows i and i+1 of clip block `blk` (a block without
 * quantised tracks): the constant block or the raw row in place. */
static inline void kiln__block_sources(const kiln_anim_binding *b, uint32_t blk, const unsigned char *row0,
                                       const unsigned char *row1, const float *p0[KILN_ANIM_COMPONENTS],
                                       const float *p1[KILN_ANIM_COMPONENTS])
{
    const kiln__clip_block *cb = &b->blocks[blk];
    const kiln_soa_xform *cst = (const kiln_soa_xform *)(const void *)b->constants + blk;
    for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) {
        if (cb->kind[c] == KILN__SRC_RAW) {
            p0[c] = (const float *)(const void *)(row0 + cb->offset[c]);
            p1[c] = (const float *)(const void *)(row1 + cb->offset[c]);
        } else {
            p0[c] = p1[c] = kiln__soa_comp(cst, c);
        }
    }
}

/* r / |r| in place, as kv_qnormalize (the scalar samplers and blend share it): a zero
 * quaternion (or one whose squared length is denormal) stays zero, and a squared length that
 * overflows (|r| above ~1.8e19, non-unit data only) is taken after dividing by the largest
 * component. */
static inline void kiln__qnormalize(float r[4])
{
    float len2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3];
    if (KILN__UNLIKELY(len2 > FLT_MAX)) {
        float m = fmaxf(fmaxf(fabsf(r[0]), fabsf(r[1])), fmaxf(fabsf(r[2]), fabsf(r[3])));
        for (int i = 0; i < 4; i++) r[i] /= m;
        len2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3];
    }
    float inv = 1.0f / sqrtf(len2 > FLT_MIN ? len2 : FLT_MIN);
    for (int i = 0; i < 4; i++) r[i] *= inv;
}

/* Identity transform in every lane. */
void kiln__soa_identity(kiln_soa_xform *x);
extern const kiln_soa_xform kiln__soa_identity_block;
/* The skeleton record and its bone range, checked (the loader verifies it; trusted loads may
 * not have): ERR_INVALID_ARGUMENT (no such skeleton), ERR_BUFFER_TOO_SMALL (capacity below its
 * bone count; UINT32_MAX: no check), ERR_BLOB_BAD_RECORD (bones outside the section).
 * pose_model.c. */
kiln_result kiln__skeleton_bones(const kiln_blob *blob, uint32_t skeleton, uint32_t capacity,
                                 const kiln_blob_skeleton **out_sk, const kiln_blob_bone **out_bones);
/* The 4x4 identity, column-major (a NULL root or parent matrix stands for it). */
extern const float kiln__identity16[16];

#endif /* KILN_ANIM_INTERNAL_H */
