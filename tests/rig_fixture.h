/* Test-side rig blobs: a skeleton laid out by anim_fixture.h's af_build plus CONSTRAINTS and
 * IK_HANDLES sections written from records given as they are, independently of the baker, and
 * a small harness that poses a skeleton and runs kiln_rig_solve on it. Header-only (static
 * inline).
 *
 *   af_bone bones[4] = {...};
 *   kiln_blob_ik_handle ik = rf_ik(0, 1, 3, 3, 4);       // skeleton, start, end, length, target
 *   size_t size;
 *   unsigned char *mem = rf_build(&(af_skel){4, bones}, NULL, 0, &ik, 1, &size);   // free() it
 *
 * Records keep their name 0 (no strings); sections are appended after af_build's, in the
 * order CNST then IKHD, each 64-byte aligned, and the checksum is fixed.
 */
#ifndef KILN_TEST_RIG_FIXTURE_H
#define KILN_TEST_RIG_FIXTURE_H

#include "anim_fixture.h"
#include "kiln/rig.h"

static inline kiln_blob_ik_handle rf_ik(uint32_t skeleton, uint32_t start, uint32_t end, uint32_t chain_length,
                                        uint32_t target)
{
    kiln_blob_ik_handle h;
    memset(&h, 0, sizeof h);
    h.skeleton = skeleton, h.start_bone = start, h.end_bone = end, h.chain_length = chain_length;
    h.target_bone = target, h.pole_vector_bone = KILN_BLOB_NONE, h.pole_bone = KILN_BLOB_NONE;
    return h;
}

/* A constraint with the type's default offset, weight 1. */
static inline kiln_blob_constraint rf_constraint(uint32_t type, uint32_t skeleton, uint32_t bone, uint32_t target)
{
    kiln_blob_constraint c;
    memset(&c, 0, sizeof c);
    c.type = type, c.skeleton = skeleton, c.bone = bone, c.target = target, c.weight = 1.0f;
    float d = type == KILN_CONSTRAINT_SCALE ? 1.0f : 0.0f;
    c.offset[0] = c.offset[1] = c.offset[2] = d;
    c.offset[3] = type == KILN_CONSTRAINT_POINT ? 0.0f : 1.0f;
    return c;
}

/* af_build's blob plus the two sections (either count may be 0: the section is left out). */
static inline unsigned char *rf_build(const af_skel *skel, const kiln_blob_constraint *cn, uint32_t ncn,
                                      const kiln_blob_ik_handle *ik, uint32_t nik, size_t *size)
{
    size_t base_size;
    unsigned char *base = af_build(skel, NULL, 0, &base_size);
    kiln_blob_header h;
    memcpy(&h, base, sizeof h);
    uint32_t old = h.section_count, add = (ncn ? 1u : 0u) + (nik ? 1u : 0u), n = old + add;
    kiln_blob_section *t = (kiln_blob_section *)calloc(n, sizeof *t);
    if (!t) abort();
    memcpy(t, base + 64, (size_t)old * sizeof *t);
    const void *src[64];
    for (uint32_t i = 0; i < old; i++) src[i] = base + t[i].offset;
    if (ncn) {
        t[old].kind = KILN_SECTION_CONSTRAINTS, t[old].version = 1, t[old].count = ncn;
        t[old].stride = sizeof *cn, t[old].size = (uint64_t)ncn * sizeof *cn;
        src[old] = cn;
    }
    if (nik) {
        uint32_t k = old + (ncn ? 1u : 0u);
        t[k].kind = KILN_SECTION_IK_HANDLES, t[k].version = 1, t[k].count = nik;
        t[k].stride = sizeof *ik, t[k].size = (uint64_t)nik * sizeof *ik;
        src[k] = ik;
    }
    uint64_t pos = 64 + (uint64_t)n * 32;
    for (uint32_t i = 0; i < n; i++) {
        pos = (pos + 63) & ~(uint64_t)63;
        t[i].offset = pos;
        pos += t[i].size;
    }
    uint64_t total = (pos + 63) & ~(uint64_t)63;
    unsigned char *blob = (unsigned char *)aligned_alloc(64, (size_t)total);
    if (!blob) abort();
    memset(blob, 0, (size_t)total);
    h.total_size = total, h.section_count = n, h.version_minor = 2;
    memcpy(blob, &h, sizeof h);
    memcpy(blob + 64, t, (size_t)n * sizeof *t);
    for (uint32_t i = 0; i < n; i++)
        if (t[i].size) memcpy(blob + t[i].offset, src[i], (size_t)t[i].size);
    af_fix_crc(blob, (size_t)total);
    free(t);
    free(base);
    *size = (size_t)total;
    return blob;
}

/* ---- posing and solving ----------------------------------------------------------------------- */
typedef struct rf_pose {
    const kiln_blob *blob;
    uint32_t skeleton, bone_count, soa_count;
    kiln_soa_xform *local;
    float *model;
    void *scratch;
    size_t scratch_size;
    float root[16];
    int has_root;
} rf_pose;

/* The skeleton's rest pose, its model matrices, and scratch for the solver. */
static inline void rf_pose_init(rf_pose *p, const kiln_blob *blob, uint32_t skeleton)
{
    memset(p, 0, sizeof *p);
    uint32_t ns = 0;
    const kiln_blob_skeleton *sk = kiln_blob_skeletons(blob, &ns);
    if (!sk || skeleton >= ns) abort();
    p->blob = blob, p->skeleton = skeleton;
    p->bone_count = sk[skeleton].bone_count, p->soa_count = sk[skeleton].soa_count;
    p->local = (kiln_soa_xform *)aligned_alloc(64, sizeof *p->local * (p->soa_count ? p->soa_count : 1));
    p->model = (float *)aligned_alloc(64, (sizeof(float) * 16 * (p->bone_count ? p->bone_count : 1) + 63) & ~(size_t)63);
    p->scratch_size = kiln_rig_scratch_size(blob, skeleton);
    p->scratch = aligned_alloc(64, p->scratch_size ? p->scratch_size : 64);
    if (!p->local || !p->model || !p->scratch) abort();
    memcpy(p->local, kiln_blob_rest_pose(blob, NULL) + sk[skeleton].first_soa, sizeof *p->local * p->soa_count);
}

static inline void rf_pose_free(rf_pose *p)
{
    free(p->local), free(p->model), free(p->scratch);
    memset(p, 0, sizeof *p);
}

static inline float *rf_lane(kiln_soa_xform *x, uint32_t bone, unsigned c)
{
    return &((float *)(void *)&x[bone / KILN_SOA_WIDTH])[c * KILN_SOA_WIDTH + bone % KILN_SOA_WIDTH];
}

static inline void rf_get(rf_pose *p, uint32_t bone, double t[3], double q[4], double s[3])
{
    for (unsigned k = 0; k < 3; k++) {
        if (t) t[k] = *rf_lane(p->local, bone, k);
        if (s) s[k] = *rf_lane(p->local, bone, 7 + k);
    }
    for (unsigned k = 0; q && k < 4; k++) q[k] = *rf_lane(p->local, bone, 3 + k);
}

/* Recomputes every model matrix from the local pose (root applied when set). */
static inline kiln_result rf_forward(rf_pose *p)
{
    return kiln_pose_local_to_object(p->blob, p->skeleton, p->local, p->has_root ? p->root : NULL, p->model,
                                    p->bone_count);
}

/* A desc of p's blob, skeleton, pose, matrices and root, the rest zero. */
static inline kiln_rig_desc rf_desc(const rf_pose *p)
{
    kiln_rig_desc d;
    memset(&d, 0, sizeof d);
    d.blob = p->blob, d.skeleton = p->skeleton, d.local = p->local, d.soa_count = p->soa_count;
    d.object = p->model, d.bone_count = p->bone_count, d.root = p->has_root ? p->root : NULL;
    return d;
}

/* kiln_rig_solve on the pose: the desc is filled from p, `stages` and the optional weights. */
static inline kiln_result rf_solve_ex(rf_pose *p, uint32_t stages, const float *ik_w, uint32_t nik_w,
                                      const float *cn_w, uint32_t ncn_w, kiln_rig_report *report)
{
    kiln_rig_desc d = rf_desc(p);
    d.stages = stages, d.ik_weights = ik_w, d.ik_weight_count = nik_w;
    d.constraint_weights = cn_w, d.constraint_weight_count = ncn_w;
    d.scratch = p->scratch, d.scratch_size = p->scratch_size, d.report = report;
    return kiln_rig_solve(&d);
}

static inline kiln_result rf_solve(rf_pose *p, kiln_rig_report *report)
{
    return rf_solve_ex(p, 0, NULL, 0, NULL, 0, report);
}

/* rf_solve with the kiln_rig_prepare plan in `prepared` (p->scratch_size bytes), or without a
 * plan (p's own scratch) when `prepared` is NULL. */
static inline kiln_result rf_solve_plan(rf_pose *p, void *prepared, kiln_rig_report *report)
{
    if (!prepared) return rf_solve(p, report);
    kiln_rig_desc d = rf_desc(p);
    d.scratch = prepared, d.scratch_size = p->scratch_size, d.prepared = 1, d.report = report;
    return kiln_rig_solve(&d);
}

static inline void rf_position(const rf_pose *p, uint32_t bone, double out[3])
{
    const float *m = p->model + (size_t)bone * 16;
    out[0] = m[12], out[1] = m[13], out[2] = m[14];
}

static inline double rf_dist(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

#endif /* KILN_TEST_RIG_FIXTURE_H */
