/* IK handles and constraints: the solver against hand-computed poses (every IK configuration
 * and every constraint type and flag), the loader's checks of the CNST and IKHD sections, the
 * baker's records and resolved offsets, and the corpus rigs (IK against Blender's end effector;
 * constraints printed beside Blender's local-space evaluation, which is not our semantics).
 *
 * Rig blobs for the solver and loader tests come from tests/rig_fixture.h (independent of the
 * baker); the baker tests bake Cast files made with the writer. Measured errors are printed on
 * stderr so that they can be quoted. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "rig_fixture.h"
#include "test_util.h"
#include "kiln/bake/bake.h"
#include "kiln/bake/cast.h"
#include "kiln/bake/cast_write.h"

#define TOL_REACH 1e-4  /* end effector on a reachable goal (m) */
#define TOL_LEN 1e-5    /* bone lengths kept (m) */
#define TOL_FIXED 1e-6  /* the start joint never moves (m) */
#define TOL_POSE 1e-5   /* channels and positions against hand-computed values */
#define TOL_BLENDER 1e-2 /* end effector against Blender's iterative solver (expected/README.md) */

static const double DEG = 3.14159265358979323846 / 180.0;

/* ---- small helpers ----------------------------------------------------------------------------- */
static void qaxis(double ax, double ay, double az, double deg, double q[4])
{
    double n = sqrt(ax * ax + ay * ay + az * az), s = sin(deg * DEG / 2) / n;
    q[0] = ax * s, q[1] = ay * s, q[2] = az * s, q[3] = cos(deg * DEG / 2);
}

static void set_rot(af_bone *b, double ax, double ay, double az, double deg)
{
    double q[4];
    qaxis(ax, ay, az, deg, q);
    for (int k = 0; k < 4; k++) b->r[k] = (float)q[k];
}

/* 3x3 of a unit quaternion, column-major. */
static void qmat(const double q[4], double r[9])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    r[0] = 1 - 2 * (y * y + z * z), r[1] = 2 * (x * y + w * z), r[2] = 2 * (x * z - w * y);
    r[3] = 2 * (x * y - w * z), r[4] = 1 - 2 * (x * x + z * z), r[5] = 2 * (y * z + w * x);
    r[6] = 2 * (x * z + w * y), r[7] = 2 * (y * z - w * x), r[8] = 1 - 2 * (x * x + y * y);
}

/* The rotation of a model matrix: its columns normalised (the fixtures have no shear). */
static void mrot(const float m[16], double r[9])
{
    for (int c = 0; c < 3; c++) {
        double n = sqrt((double)m[c * 4] * m[c * 4] + (double)m[c * 4 + 1] * m[c * 4 + 1] + (double)m[c * 4 + 2] * m[c * 4 + 2]);
        for (int k = 0; k < 3; k++) r[c * 3 + k] = m[c * 4 + k] / n;
    }
}

static double mdiff(const double a[9], const double b[9])
{
    double d = 0;
    for (int i = 0; i < 9; i++) d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

/* Rotation difference of two quaternions through their matrices (sign-free). */
static double qdiff(const double a[4], const double b[4])
{
    double ra[9], rb[9], na = 0, nb = 0, ua[4], ub[4];
    for (int k = 0; k < 4; k++) na += a[k] * a[k], nb += b[k] * b[k];
    for (int k = 0; k < 4; k++) ua[k] = a[k] / sqrt(na), ub[k] = b[k] / sqrt(nb);
    qmat(ua, ra), qmat(ub, rb);
    return mdiff(ra, rb);
}

static void qconj(const double q[4], double r[4]) { r[0] = -q[0], r[1] = -q[1], r[2] = -q[2], r[3] = q[3]; }

static double vdiff(const double *a, const double *b)
{
    return fmax(fabs(a[0] - b[0]), fmax(fabs(a[1] - b[1]), fabs(a[2] - b[2])));
}

/* XYZ Euler (R = Rz(c) Ry(b) Rx(a)) of a rotation matrix, and back to a quaternion. */
static void euler_of(const double q[4], double e[3])
{
    double r[9];
    qmat(q, r); /* r[col * 3 + row] */
    double r00 = r[0], r10 = r[1], r20 = r[2], r21 = r[5], r22 = r[8];
    e[1] = asin(fmax(-1.0, fmin(1.0, -r20)));
    e[0] = atan2(r21, r22);
    e[2] = atan2(r10, r00);
}

static void from_euler(const double e[3], double q[4])
{
    double qx[4], qy[4], qz[4], t[4];
    qaxis(1, 0, 0, e[0] / DEG, qx), qaxis(0, 1, 0, e[1] / DEG, qy), qaxis(0, 0, 1, e[2] / DEG, qz);
    af_qmul(qz, qy, t);
    af_qmul(t, qx, q);
}

/* ---- rigs -------------------------------------------------------------------------------------- */
typedef struct rig {
    unsigned char *mem;
    const kiln_blob *blob;
    rf_pose pose;
} rig;

static void rig_make(rig *r, const af_bone *bones, uint32_t nb, const kiln_blob_constraint *cn, uint32_t ncn,
                     const kiln_blob_ik_handle *ik, uint32_t nik)
{
    size_t size;
    af_skel skel = {nb, bones};
    r->mem = rf_build(&skel, cn, ncn, ik, nik, &size);
    kiln_diag err;
    kiln_result res = kiln_blob_load(r->mem, size, 0, &r->blob, &err);
    cr_assert_eq(res, KILN_OK, "fixture blob does not load: %s: %s", err.path, err.message);
    rf_pose_init(&r->pose, r->blob, 0);
    cr_assert_eq(rf_forward(&r->pose), KILN_OK);
}

static void rig_free(rig *r)
{
    rf_pose_free(&r->pose);
    free(r->mem);
}

static void pos(const rig *r, uint32_t b, double p[3]) { rf_position(&r->pose, b, p); }

/* Every local and model float is finite, and the model matrices are what a full recomputation
 * of the local pose gives. */
static void check_consistent(rig *r, const char *what)
{
    rf_pose *p = &r->pose;
    const float *l = (const float *)(const void *)p->local;
    for (size_t i = 0; i < (size_t)p->soa_count * 80; i++) cr_assert(isfinite(l[i]), "%s: local float %zu is %g", what, i, l[i]);
    float *ref = malloc(sizeof(float) * 16 * p->bone_count);
    cr_assert_eq(kiln_pose_local_to_object(p->blob, 0, p->local, p->has_root ? p->root : NULL, ref, p->bone_count), KILN_OK);
    double worst = 0;
    for (size_t i = 0; i < (size_t)16 * p->bone_count; i++) {
        cr_assert(isfinite(p->model[i]), "%s: model float %zu is %g", what, i, p->model[i]);
        worst = fmax(worst, fabs(p->model[i] - ref[i]) / (1.0 + fabs(ref[i])));
    }
    free(ref);
    cr_assert(worst <= 1e-5, "%s: the updated model matrices are %.3g from a full recomputation", what, worst);
}

/* Joint positions of a chain. */
static void chain_pos(const rig *r, const uint32_t *chain, uint32_t n, double (*out)[3])
{
    for (uint32_t i = 0; i < n; i++) pos(r, chain[i], out[i]);
}

/* Largest change of a bone length between two sets of chain positions. */
static double length_change(const double (*a)[3], const double (*b)[3], uint32_t n)
{
    double worst = 0;
    for (uint32_t i = 0; i + 1 < n; i++) worst = fmax(worst, fabs(rf_dist(a[i], a[i + 1]) - rf_dist(b[i], b[i + 1])));
    return worst;
}

/* Solves and checks the invariants every IK result keeps: the start fixed, bone lengths kept,
 * the pose consistent. Returns the end's distance to `goal` (NULL: not measured). */
static double solve_chain(rig *r, const uint32_t *chain, uint32_t n, const double *goal, kiln_rig_report *rep,
                          const char *what)
{
    double before[16][3], after[16][3];
    chain_pos(r, chain, n, before);
    kiln_rig_report local;
    if (!rep) rep = &local;
    cr_assert_eq(rf_solve(&r->pose, rep), KILN_OK, "%s: kiln_rig_solve failed", what);
    chain_pos(r, chain, n, after);
    check_consistent(r, what);
    double moved = rf_dist(before[0], after[0]), dl = length_change(before, after, n);
    cr_assert(moved <= TOL_FIXED, "%s: the start joint moved by %.3g", what, moved);
    cr_assert(dl <= TOL_LEN, "%s: a bone length changed by %.3g", what, dl);
    double err = goal ? rf_dist(after[n - 1], goal) : 0.0;
    fprintf(stderr, "rig %-44s end error %.2e, bone length error %.2e, start moved %.2e\n", what, err, dl, moved);
    return err;
}

/* A leg: hip -> knee -> ankle hanging down the y axis from (0, 1, 0), 0.5 per bone, the knee
 * bent forward by `bend` degrees (the ankle behind, the knee in front: +z), a target, a pole
 * vector bone and a twist bone under the root. */
enum { L_ROOT, L_HIP, L_KNEE, L_ANKLE, L_TARGET, L_POLE, L_TWIST, L_COUNT };
static const uint32_t leg_chain[3] = {L_HIP, L_KNEE, L_ANKLE};

static void leg_bones(af_bone *b, double bend)
{
    b[L_ROOT] = af_bone_at("root", -1, 0, 0, 0);
    b[L_HIP] = af_bone_at("hip", L_ROOT, 0, 1, 0);
    b[L_KNEE] = af_bone_at("knee", L_HIP, 0, -0.5f, 0);
    b[L_ANKLE] = af_bone_at("ankle", L_KNEE, 0, -0.5f, 0);
    b[L_TARGET] = af_bone_at("target", L_ROOT, 0, 0.4f, 0);
    b[L_POLE] = af_bone_at("pole", L_ROOT, 0, 0.5f, 2);
    b[L_TWIST] = af_bone_at("twist", L_ROOT, 0, 0, 0);
    set_rot(&b[L_KNEE], 1, 0, 0, bend);
}

static kiln_blob_ik_handle leg_ik(void) { return rf_ik(0, L_HIP, L_ANKLE, 3, L_TARGET); }

/* ---- IK: two bones ------------------------------------------------------------------------------ */
Test(rig_ik, two_bone_pole_vector_places_knee_in_pole_plane)
{
    /* d = 0.6, l1 = l2 = 0.5: cos(angle at the hip) = 0.36 / 0.6 = 0.6, so the knee sits 0.3
     * down and 0.4 toward the pole: (0, 0.7, 0.4); the ankle on the goal (0, 0.4, 0). */
    af_bone b[L_COUNT];
    leg_bones(b, 20);
    kiln_blob_ik_handle h = leg_ik();
    h.pole_vector_bone = L_POLE;
    rig r;
    rig_make(&r, b, L_COUNT, NULL, 0, &h, 1);
    double goal[3] = {0, 0.4, 0}, knee[3], want[3] = {0, 0.7, 0.4};
    kiln_rig_report rep;
    double err = solve_chain(&r, leg_chain, 3, goal, &rep, "two-bone, pole vector in front");
    cr_assert(err <= TOL_REACH, "end error %.3g", err);
    pos(&r, L_KNEE, knee);
    cr_assert(vdiff(knee, want) <= TOL_POSE, "knee (%g, %g, %g), expected (0, 0.7, 0.4)", knee[0], knee[1], knee[2]);
    cr_assert_eq(rep.ik_solved, 1);
    cr_assert_eq(rep.ik_unreachable, 0);
    cr_assert(rep.ik_max_error_m <= TOL_REACH);
    rig_free(&r);

    /* the pole behind the leg wins over the FK bend: the knee flips to -z */
    b[L_POLE].t[2] = -2;
    rig_make(&r, b, L_COUNT, NULL, 0, &h, 1);
    err = solve_chain(&r, leg_chain, 3, goal, NULL, "two-bone, pole vector behind");
    pos(&r, L_KNEE, knee);
    want[2] = -0.4;
    cr_assert(err <= TOL_REACH && vdiff(knee, want) <= TOL_POSE, "knee (%g, %g, %g), expected (0, 0.7, -0.4)", knee[0],
              knee[1], knee[2]);
    rig_free(&r);
}

Test(rig_ik, two_bone_pole_bone_twists_the_plane)
{
    /* twist = the X Euler angle of the pole bone's local rotation: 90 degrees about the
     * hip -> goal axis (0, -1, 0) turns the pole direction +z into -x: knee (-0.4, 0.7, 0) */
    af_bone b[L_COUNT];
    leg_bones(b, 20);
    double q[4];
    from_euler((double[3]){90 * DEG, 5 * DEG, -7 * DEG}, q); /* Y and Z angles do not twist */
    for (int k = 0; k < 4; k++) b[L_TWIST].r[k] = (float)q[k];
    kiln_blob_ik_handle h = leg_ik();
    h.pole_vector_bone = L_POLE;
    h.pole_bone = L_TWIST;
    rig r;
    rig_make(&r, b, L_COUNT, NULL, 0, &h, 1);
    double goal[3] = {0, 0.4, 0}, knee[3], want[3] = {-0.4, 0.7, 0};
    double err = solve_chain(&r, leg_chain, 3, goal, NULL, "two-bone, pole vector + 90 deg twist");
    pos(&r, L_KNEE, knee);
    cr_assert(err <= TOL_REACH, "end error %.3g", err);
    cr_assert(vdiff(knee, want) <= TOL_POSE, "knee (%g, %g, %g), expected (-0.4, 0.7, 0)", knee[0], knee[1], knee[2]);
    rig_free(&r);

    /* without a pole vector the FK plane (knee forward) is the one twisted */
    h.pole_vector_bone = KILN_BLOB_NONE;
    rig_make(&r, b, L_COUNT, NULL, 0, &h, 1);
    err = solve_chain(&r, leg_chain, 3, goal, NULL, "two-bone, FK plane + 90 deg twist");
    pos(&r, L_KNEE, knee);
    cr_assert(err <= TOL_REACH && vdiff(knee, want) <= TOL_POSE, "knee (%g, %g, %g), expected (-0.4, 0.7, 0)", knee[0],
              knee[1], knee[2]);
    rig_free(&r);
}

Test(rig_ik, two_bone_without_pole_keeps_the_fk_plane)
{
    af_bone b[L_COUNT];
    leg_bones(b, 20);
    kiln_blob_ik_handle h = leg_ik();
    rig r;
    rig_make(&r, b, L_COUNT, NULL, 0, &h, 1);
    double goal[3] = {0, 0.4, 0}, knee[3], want[3] = {0, 0.7, 0.4};
    double err = solve_chain(&r, leg_chain, 3, goal, NULL, "two-bone, no pole");
    pos(&r, L_KNEE, knee);
    cr_assert(err <= TOL_REACH && vdiff(knee, want) <= TOL_POSE, "knee (%g, %g, %g)", knee[0], knee[1], knee[2]);
    rig_free(&r);
}

Test(rig_ik, two_bone_meets_the_float_accuracy_bounds)
{
    /* The two-bone solve runs in single precision: over goals in 14 directions at 0.15 to
     * 0.999 of the reach of an uneven leg (0.45 + 0.55 m, folded reach 0.1 m), the end lands
     * within 1e-5 m of the goal, each bone keeps its length within 1e-5 of it, and the knee sits
     * where the law of cosines puts it in the half-plane of the pole: a = (l1² - l2² + d²) / 2d
     * along the hip->goal axis u, h = sqrt(l1² - a²) toward the pole's part normal to u. */
    static const double fractions[5] = {0.15, 0.4, 0.7, 0.95, 0.999};
    const double l1 = 0.45, l2 = 0.55, hip[3] = {0, 1, 0}, pole[3] = {0.3, 0.5, 2};
    double worst_end = 0, worst_len = 0, worst_knee = 0;
    int checked = 0;
    for (int i = 0; i < 14; i++) {
        /* a spiral over the sphere */
        double z = 1.0 - (2.0 * i + 1.0) / 14.0, rr = sqrt(1.0 - z * z), phi = 2.399963229728653 * i;
        double dir[3] = {rr * cos(phi), z, rr * sin(phi)};
        for (int f = 0; f < 5; f++) {
            double d = fractions[f] * (l1 + l2), goal[3];
            for (int k = 0; k < 3; k++) goal[k] = hip[k] + d * dir[k];
            af_bone b[L_COUNT];
            leg_bones(b, 20);
            b[L_KNEE].t[1] = -(float)l1, b[L_ANKLE].t[1] = -(float)l2;
            for (int k = 0; k < 3; k++) b[L_TARGET].t[k] = (float)goal[k], b[L_POLE].t[k] = (float)pole[k];
            for (int k = 0; k < 3; k++) goal[k] = b[L_TARGET].t[k]; /* the goal as stored */
            kiln_blob_ik_handle h = leg_ik();
            h.pole_vector_bone = L_POLE;
            rig r;
            rig_make(&r, b, L_COUNT, NULL, 0, &h, 1);
            double before[3][3], after[3][3];
            chain_pos(&r, leg_chain, 3, before);
            cr_assert_eq(rf_solve(&r.pose, NULL), KILN_OK);
            check_consistent(&r, "two-bone accuracy");
            chain_pos(&r, leg_chain, 3, after);
            worst_end = fmax(worst_end, rf_dist(after[2], goal));
            for (int k = 0; k < 2; k++) {
                double lb = rf_dist(before[k], before[k + 1]);
                worst_len = fmax(worst_len, fabs(rf_dist(after[k], after[k + 1]) - lb) / lb);
            }
            double u[3], vp[3], dg = rf_dist(goal, hip), along = 0, lp = 0;
            for (int k = 0; k < 3; k++) u[k] = (goal[k] - hip[k]) / dg;
            for (int k = 0; k < 3; k++) along += (pole[k] - hip[k]) * u[k];
            for (int k = 0; k < 3; k++) vp[k] = pole[k] - hip[k] - along * u[k], lp += vp[k] * vp[k];
            lp = sqrt(lp);
            if (lp > 0.1) { /* a pole well off the axis: the knee is defined */
                double a = (l1 * l1 - l2 * l2 + dg * dg) / (2.0 * dg), hh = sqrt(fmax(0.0, l1 * l1 - a * a)), knee[3];
                for (int k = 0; k < 3; k++) knee[k] = hip[k] + a * u[k] + hh * vp[k] / lp;
                worst_knee = fmax(worst_knee, rf_dist(after[1], knee));
                checked++;
            }
            rig_free(&r);
        }
    }
    fprintf(stderr, "rig two-bone float accuracy: end %.2e m, length %.2e relative, knee %.2e m (%d knees)\n",
            worst_end, worst_len, worst_knee, checked);
    cr_assert(checked >= 50, "only %d goals had a pole off the axis", checked);
    cr_assert(worst_end <= 1e-5, "the end missed a reachable goal by %.3g m", worst_end);
    cr_assert(worst_len <= 1e-5, "a bone length changed by %.3g of itself", worst_len);
    cr_assert(worst_knee <= 1e-5, "the knee is %.3g m from where the law of cosines puts it", worst_knee);
}

Test(rig_ik, use_target_rotation_sets_the_end_rotation)
{
    af_bone b[L_COUNT];
    leg_bones(b, 20);
    double q1[4], q2[4], q[4];
    qaxis(0, 1, 0, 30, q1), qaxis(1, 0, 0, 10, q2), af_qmul(q1, q2, q);
    for (int k = 0; k < 4; k++) b[L_TARGET].r[k] = (float)q[k];
    b[L_TARGET].t[0] = 0.2f, b[L_TARGET].t[2] = 0.3f;
    kiln_blob_ik_handle h = leg_ik();
    h.pole_vector_bone = L_POLE;
    h.flags = KILN_IK_USE_TARGET_ROTATION;
    rig r;
    rig_make(&r, b, L_COUNT, NULL, 0, &h, 1);
    double goal[3] = {0.2, 0.4, 0.3};
    double err = solve_chain(&r, leg_chain, 3, goal, NULL, "two-bone, use target rotation");
    cr_assert(err <= TOL_REACH, "end error %.3g", err);
    double ra[9], rt[9];
    mrot(r.pose.model + 16 * L_ANKLE, ra);
    mrot(r.pose.model + 16 * L_TARGET, rt);
    cr_assert(mdiff(ra, rt) <= TOL_POSE, "ankle rotation %.3g from the target's", mdiff(ra, rt));
    fprintf(stderr, "rig %-44s end rotation error %.2e\n", "two-bone, use target rotation", mdiff(ra, rt));
    rig_free(&r);
}

Test(rig_ik, target_offset_is_in_target_space)
{
    /* goal = W(target) · to: rotated 90 degrees about X and scaled by 2, to = (0, 0.1, 0) gives
     * P(target) + (0, 0, 0.2) */
    af_bone b[L_COUNT];
    leg_bones(b, 20);
    b[L_TARGET].t[1] = 0.3f;
    set_rot(&b[L_TARGET], 1, 0, 0, 90);
    b[L_TARGET].s[0] = b[L_TARGET].s[1] = b[L_TARGET].s[2] = 2.0f;
    kiln_blob_ik_handle h = leg_ik();
    h.pole_vector_bone = L_POLE;
    h.target_offset[1] = 0.1f;
    rig r;
    rig_make(&r, b, L_COUNT, NULL, 0, &h, 1);
    double goal[3] = {0, 0.3, 0.2};
    double err = solve_chain(&r, leg_chain, 3, goal, NULL, "two-bone, target offset");
    cr_assert(err <= TOL_REACH, "end error %.3g from (0, 0.3, 0.2)", err);
    rig_free(&r);
}

Test(rig_ik, single_bone_chain_aims)
{
    af_bone b[L_COUNT];
    leg_bones(b, 20);
    b[L_TARGET].t[0] = 1.0f, b[L_TARGET].t[1] = 1.0f;
    kiln_blob_ik_handle h = rf_ik(0, L_HIP, L_KNEE, 2, L_TARGET);
    rig r;
    rig_make(&r, b, L_COUNT, NULL, 0, &h, 1);
    double want[3] = {0.5, 1, 0};
    solve_chain(&r, leg_chain, 2, NULL, NULL, "one bone aims");
    double knee[3];
    pos(&r, L_KNEE, knee);
    cr_assert(vdiff(knee, want) <= TOL_POSE, "knee (%g, %g, %g), expected (0.5, 1, 0)", knee[0], knee[1], knee[2]);
    rig_free(&r);
}

/* ---- IK: longer chains, reach, degenerate input -------------------------------------------------- */
/* root -> j1 .. j5 (5 joints, 4 bones of 0.3, 0.25, 0.2, 0.15, slightly bent), target, pole. */
enum { C_ROOT, C_J1, C_J2, C_J3, C_J4, C_J5, C_TARGET, C_POLE, C_COUNT };
static const uint32_t long_chain[5] = {C_J1, C_J2, C_J3, C_J4, C_J5};

static void long_bones(af_bone *b)
{
    b[C_ROOT] = af_bone_at("root", -1, 0, 0, 0);
    b[C_J1] = af_bone_at("j1", C_ROOT, 0, 1, 0);
    b[C_J2] = af_bone_at("j2", C_J1, 0, -0.3f, 0);
    b[C_J3] = af_bone_at("j3", C_J2, 0, -0.25f, 0);
    b[C_J4] = af_bone_at("j4", C_J3, 0, -0.2f, 0);
    b[C_J5] = af_bone_at("j5", C_J4, 0, -0.15f, 0);
    b[C_TARGET] = af_bone_at("target", C_ROOT, 0.3f, 0.5f, 0.3f);
    b[C_POLE] = af_bone_at("pole", C_ROOT, 0, 0.5f, 2);
    set_rot(&b[C_J2], 1, 0, 0, 10);
    set_rot(&b[C_J3], 1, 0, 0, 10);
    set_rot(&b[C_J4], 0, 0, 1, 5);
}

Test(rig_ik, long_chain_reaches_with_fabrik)
{
    af_bone b[C_COUNT];
    long_bones(b);
    kiln_blob_ik_handle h = rf_ik(0, C_J1, C_J5, 5, C_TARGET);
    rig r;
    rig_make(&r, b, C_COUNT, NULL, 0, &h, 1);
    double goal[3] = {0.3, 0.5, 0.3};
    kiln_rig_report rep;
    double err = solve_chain(&r, long_chain, 5, goal, &rep, "5 joints, FABRIK");
    cr_assert(err <= TOL_REACH, "end error %.3g", err);
    cr_assert_eq(rep.ik_unreachable, 0);
    rig_free(&r);

    /* with a pole vector: the farthest joint from the start->goal axis lies in its half-plane */
    h.pole_vector_bone = C_POLE;
    b[C_TARGET].t[0] = 0, b[C_TARGET].t[2] = 0;
    rig_make(&r, b, C_COUNT, NULL, 0, &h, 1);
    double goal2[3] = {0, 0.5, 0};
    err = solve_chain(&r, long_chain, 5, goal2, NULL, "5 joints, FABRIK + pole vector");
    cr_assert(err <= TOL_REACH, "end error %.3g", err);
    double far = 0, side = 0;
    for (int i = 1; i < 4; i++) {
        double p[3];
        pos(&r, long_chain[i], p);
        double d = sqrt(p[0] * p[0] + p[2] * p[2]); /* distance from the vertical axis x = z = 0 */
        if (d > far) far = d, side = p[2] / d;
    }
    cr_assert(far > 0.05 && side > 1.0 - 1e-6, "the chain bends away from the pole (side %g)", side);
    rig_free(&r);
}

Test(rig_ik, unreachable_goal_straightens_the_chain)
{
    af_bone b[L_COUNT];
    leg_bones(b, 20);
    b[L_TARGET].t[1] = -2.0f, b[L_TARGET].t[2] = 0.5f;
    kiln_blob_ik_handle h = leg_ik();
    h.pole_vector_bone = L_POLE;
    rig r;
    rig_make(&r, b, L_COUNT, NULL, 0, &h, 1);
    kiln_rig_report rep;
    solve_chain(&r, leg_chain, 3, NULL, &rep, "two-bone, goal out of reach");
    cr_assert_eq(rep.ik_unreachable, 1);
    double u[3] = {0, -3, 0.5}, n = sqrt(9.25), p[3];
    for (int k = 0; k < 3; k++) u[k] /= n;
    for (int i = 1; i < 3; i++) {
        pos(&r, leg_chain[i], p);
        double want[3] = {0.5 * i * u[0], 1 + 0.5 * i * u[1], 0.5 * i * u[2]};
        cr_assert(vdiff(p, want) <= TOL_POSE, "joint %d at (%g, %g, %g), expected (%g, %g, %g)", i, p[0], p[1], p[2],
                  want[0], want[1], want[2]);
    }
    rig_free(&r);

    af_bone c[C_COUNT];
    long_bones(c);
    c[C_TARGET].t[0] = 2.0f, c[C_TARGET].t[2] = 0.0f;
    h = rf_ik(0, C_J1, C_J5, 5, C_TARGET);
    rig_make(&r, c, C_COUNT, NULL, 0, &h, 1);
    solve_chain(&r, long_chain, 5, NULL, &rep, "5 joints, goal out of reach");
    cr_assert_eq(rep.ik_unreachable, 1);
    double v[3] = {2, -0.5, 0}, m = sqrt(4.25), along = 0;
    const double lens[4] = {0.3, 0.25, 0.2, 0.15};
    for (int i = 1; i < 5; i++) {
        along += lens[i - 1];
        pos(&r, long_chain[i], p);
        double want[3] = {along * v[0] / m, 1 + along * v[1] / m, 0};
        cr_assert(vdiff(p, want) <= TOL_POSE, "joint %d at (%g, %g, %g), expected (%g, %g, %g)", i, p[0], p[1], p[2],
                  want[0], want[1], want[2]);
    }
    rig_free(&r);
}

/* The hip's model rotation after solving toward a goal at distance `d` from the hip along
 * `dir` (a unit vector), with the pole vector bone at `pole`. */
static void hip_after(double d, const double dir[3], const float pole[3], double rot[9])
{
    af_bone b[L_COUNT];
    leg_bones(b, 20);
    for (int k = 0; k < 3; k++) b[L_TARGET].t[k] = (float)((k == 1 ? 1.0 : 0.0) + d * dir[k]);
    memcpy(b[L_POLE].t, pole, sizeof b[L_POLE].t);
    kiln_blob_ik_handle h = leg_ik();
    h.pole_vector_bone = L_POLE;
    rig r;
    rig_make(&r, b, L_COUNT, NULL, 0, &h, 1);
    kiln_rig_report rep;
    cr_assert_eq(rf_solve(&r.pose, &rep), KILN_OK);
    mrot(r.pose.model + 16u * L_HIP, rot);
    rig_free(&r);
}

Test(rig_ik, pole_vector_holds_across_the_reach_limit)
{
    /* Cast reference E.1: out of reach the chain stretches toward the goal in the plane of
     * start, goal and pole, so the pose is continuous across the limit (1 m for this leg). A
     * goal walked from 0.98 m to 1.02 m in 0.5 mm steps: the hip's rotation changes by at most
     * what the bend itself does near the limit (the knee angle goes like the square root of the
     * distance left: 0.03 rad for the last step inside), never by a jump of the roll. */
    const double dir[3] = {0, -0.98058068, 0.19611614}; /* (0, -1, 0.2) normalised */
    const float front[3] = {0, 0.5f, 2}, behind[3] = {0, 0.5f, -2}, side[3] = {2, 0.5f, 0};
    double prev[9], cur[9], worst = 0;
    hip_after(0.98, dir, side, prev); /* the pole off the FK bend plane (the knee bends to +z) */
    for (int i = 1; i <= 80; i++) {
        hip_after(0.98 + 0.0005 * i, dir, side, cur);
        worst = fmax(worst, mdiff(prev, cur));
        memcpy(prev, cur, sizeof prev);
    }
    cr_assert(worst <= 0.05, "the hip rotation jumps by %.3g in one 0.5 mm step across the reach limit", worst);

    /* Beyond the limit the pole still decides the roll: in front, behind and to the side give
     * three different hip frames, each the limit of the reachable solution with that pole. */
    double in_front[9], in_back[9], to_side[9], near[9];
    hip_after(1.01, dir, front, in_front);
    hip_after(1.01, dir, behind, in_back);
    hip_after(1.01, dir, side, to_side);
    cr_assert(mdiff(in_front, in_back) > 1.0, "moving the pole behind the leg changed the hip by %.3g only",
              mdiff(in_front, in_back));
    cr_assert(mdiff(in_front, to_side) > 0.5, "moving the pole to the side changed the hip by %.3g only",
              mdiff(in_front, to_side));
    hip_after(0.99999, dir, behind, near);
    cr_assert(mdiff(near, in_back) <= 0.02, "pole behind: the hip just inside the reach and beyond it differ by %.3g",
              mdiff(near, in_back));
}

Test(rig_ik, degenerate_inputs_never_give_nan)
{
    static const struct {
        const char *what;
        double bend;           /* knee bend (degrees) */
        float knee_len, goal[3], pole[3];
        int use_pole, reach;   /* reach: the goal is reachable and must be hit */
    } cases[] = {
        {"straight chain, no pole", 0, 0.5f, {0, 0.4f, 0.1f}, {0, 0, 0}, 0, 1},
        {"straight chain, pole in front", 0, 0.5f, {0, 0.4f, 0}, {0, 0.5f, 2}, 1, 1},
        {"goal on the start", 20, 0.5f, {0, 1, 0}, {0, 0.5f, 2}, 1, 1},
        {"goal on the start, straight", 0, 0.5f, {0, 1, 0}, {0, 0.5f, 2}, 1, 1},
        {"pole on the start->goal line", 20, 0.5f, {0, 0.4f, 0}, {0, -1, 0}, 1, 1},
        {"pole on the start", 20, 0.5f, {0, 0.4f, 0}, {0, 1, 0}, 1, 1},
        {"zero-length upper bone", 20, 0.0f, {0, 0.4f, 0.3f}, {0, 0.5f, 2}, 1, 0},
        {"goal closer than folded", 20, 0.2f, {0, 0.95f, 0}, {0, 0.5f, 2}, 1, 0},
        {"goal on the end already", 20, 0.5f, {0, 0, 0}, {0, 0.5f, 2}, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        af_bone b[L_COUNT];
        leg_bones(b, cases[i].bend);
        b[L_KNEE].t[1] = -cases[i].knee_len;
        memcpy(b[L_POLE].t, cases[i].pole, sizeof b[L_POLE].t);
        kiln_blob_ik_handle h = leg_ik();
        if (cases[i].use_pole) h.pole_vector_bone = L_POLE;
        rig r;
        double goal[3] = {cases[i].goal[0], cases[i].goal[1], cases[i].goal[2]};
        if (i == sizeof cases / sizeof cases[0] - 1) {
            /* the goal where FK already put the ankle: nothing moves */
            rig_make(&r, b, L_COUNT, NULL, 0, NULL, 0);
            pos(&r, L_ANKLE, goal);
            rig_free(&r);
            for (int k = 0; k < 3; k++) b[L_TARGET].t[k] = (float)goal[k];
        } else {
            memcpy(b[L_TARGET].t, cases[i].goal, sizeof b[L_TARGET].t);
        }
        rig_make(&r, b, L_COUNT, NULL, 0, &h, 1);
        kiln_soa_xform before = r.pose.local[0];
        char what[96];
        snprintf(what, sizeof what, "degenerate: %s", cases[i].what);
        double err = solve_chain(&r, leg_chain, 3, goal, NULL, what);
        if (cases[i].reach) cr_assert(err <= TOL_REACH, "%s: end error %.3g", what, err);
        if (i == sizeof cases / sizeof cases[0] - 1) {
            const float *x = (const float *)(const void *)&before, *y = (const float *)(const void *)&r.pose.local[0];
            for (int k = 0; k < 80; k++) cr_assert(fabsf(x[k] - y[k]) <= 1e-6f, "%s: local float %d changed", what, k);
        }
        rig_free(&r);
    }
}

/* ---- IK: scale, root matrix, weights, stages ---------------------------------------------------- */
Test(rig_ik, keeps_lengths_under_scale_and_root)
{
    /* uniform scale on the root (lengths double), non-uniform scale on the hip with segment
     * scale compensation below it, and a Model transform given as the root matrix */
    af_bone b[L_COUNT];
    leg_bones(b, 25);
    b[L_ROOT].s[0] = b[L_ROOT].s[1] = b[L_ROOT].s[2] = 2.0f;
    b[L_HIP].s[0] = 1.5f, b[L_HIP].s[1] = 0.7f, b[L_HIP].s[2] = 1.2f;
    b[L_TARGET].t[1] = 0.8f, b[L_TARGET].t[2] = 0.1f; /* SSC: the hip drops the root's scale, the knee the hip's */
    kiln_blob_ik_handle h = leg_ik();
    h.pole_vector_bone = L_POLE;
    rig r;
    rig_make(&r, b, L_COUNT, NULL, 0, &h, 1);
    double rt[3] = {0.5, -1, 2}, rq[4], rs[3] = {1.25, 1.25, 1.25}, rm[16];
    qaxis(0.3, 1, 0.2, 35, rq);
    af_trs(rt, rq, rs, rm);
    for (int k = 0; k < 16; k++) r.pose.root[k] = (float)rm[k];
    r.pose.has_root = 1;
    cr_assert_eq(rf_forward(&r.pose), KILN_OK);
    double goal[3];
    pos(&r, L_TARGET, goal);
    kiln_rig_report rep;
    double err = solve_chain(&r, leg_chain, 3, goal, &rep, "scaled root + hip, root matrix");
    cr_assert_eq(rep.ik_unreachable, 0);
    cr_assert(err <= TOL_REACH, "end error %.3g", err);
    rig_free(&r);
}

Test(rig_ik, weight_blends_from_fk_and_stages_select)
{
    af_bone b[L_COUNT];
    leg_bones(b, 20);
    kiln_blob_ik_handle h = leg_ik();
    h.pole_vector_bone = L_POLE;
    rig full, half;
    rig_make(&full, b, L_COUNT, NULL, 0, &h, 1);
    rig_make(&half, b, L_COUNT, NULL, 0, &h, 1);
    double fk[3][4], ik[3][4], got[4], want[4];
    for (int i = 0; i < 2; i++) rf_get(&full.pose, leg_chain[i], NULL, fk[i], NULL);
    cr_assert_eq(rf_solve(&full.pose, NULL), KILN_OK);
    for (int i = 0; i < 2; i++) rf_get(&full.pose, leg_chain[i], NULL, ik[i], NULL);
    float w = 0.5f;
    kiln_rig_report rep;
    cr_assert_eq(rf_solve_ex(&half.pose, 0, &w, 1, NULL, 0, &rep), KILN_OK);
    check_consistent(&half, "IK weight 0.5");
    for (int i = 0; i < 2; i++) {
        rf_get(&half.pose, leg_chain[i], NULL, got, NULL);
        af_slerp(fk[i], ik[i], 0.5, want);
        cr_assert(qdiff(got, want) <= TOL_POSE, "joint %d: %.3g from slerp(FK, IK, 0.5)", i, qdiff(got, want));
    }
    rig_free(&half);

    /* weight 0 and the constraints-only stage leave the pose alone */
    rig none;
    rig_make(&none, b, L_COUNT, NULL, 0, &h, 1);
    kiln_soa_xform before = none.pose.local[0];
    w = 0.0f;
    cr_assert_eq(rf_solve_ex(&none.pose, 0, &w, 1, NULL, 0, &rep), KILN_OK);
    cr_assert_eq(rep.ik_skipped, 1);
    cr_assert_eq(rf_solve_ex(&none.pose, KILN_RIG_CONSTRAINTS, NULL, 0, NULL, 0, &rep), KILN_OK);
    cr_assert_eq(rep.ik_solved, 0);
    cr_assert(memcmp(&before, &none.pose.local[0], sizeof before) == 0, "the pose changed");
    cr_assert_eq(rf_solve_ex(&none.pose, KILN_RIG_IK, NULL, 0, NULL, 0, &rep), KILN_OK);
    cr_assert_eq(rep.ik_solved, 1);
    rig_free(&none);
    rig_free(&full);
}

Test(rig_ik, inactive_handle_is_skipped)
{
    af_bone b[L_COUNT];
    leg_bones(b, 20);
    kiln_blob_ik_handle h = rf_ik(0, L_HIP, L_ANKLE, 3, KILN_BLOB_NONE);
    rig r;
    rig_make(&r, b, L_COUNT, NULL, 0, &h, 1);
    kiln_soa_xform before = r.pose.local[0];
    kiln_rig_report rep;
    cr_assert_eq(rf_solve(&r.pose, &rep), KILN_OK);
    cr_assert_eq(rep.ik_skipped, 1);
    cr_assert_eq(rep.ik_solved, 0);
    cr_assert(memcmp(&before, &r.pose.local[0], sizeof before) == 0);
    rig_free(&r);
}

/* ---- random rigs ------------------------------------------------------------------------------- */
/* Solves d twice from the pose (rest, rest_model) of n bones: each gives the bits (want,
 * want_model) and the counts of rep, the unprepared solve's (`what` names the solve). */
static void solve_twice_as(rig *r, kiln_rig_desc *d, const kiln_soa_xform *rest, const float *rest_model,
                           const kiln_soa_xform *want, const float *want_model, uint32_t n, const kiln_rig_report *rep,
                           const char *what, int rig_i)
{
    const size_t local_size = (n + 7) / 8 * sizeof *rest, model_size = (size_t)n * 16u * sizeof *rest_model;
    for (int again = 0; again < 2; again++) {
        kiln_rig_report got;
        d->report = &got;
        memcpy(r->pose.local, rest, local_size);
        memcpy(r->pose.model, rest_model, model_size);
        cr_assert_eq(kiln_rig_solve(d), KILN_OK);
        cr_assert(memcmp(want, r->pose.local, local_size) == 0 && memcmp(want_model, r->pose.model, model_size) == 0,
                  "rig %d: %s differs", rig_i, what);
        cr_assert(got.ik_solved == rep->ik_solved && got.constraints_applied == rep->constraints_applied &&
                  got.constraints_skipped == rep->constraints_skipped);
    }
    d->report = NULL;
}

/* Random trees of 40 bones (random rotations, uniform scales in [0.5, 2], SSC on or off), one
 * random handle at a time (chains of 2 to 7 joints, random target, pole vector, pole bone and
 * flags) solved alone through the weights: the start never moves, every parent-child distance
 * in the skeleton is kept (IK only rotates), the end reaches a reachable goal whose bone is not
 * moved by the chain, and nothing is NaN. Then random constraints too: finite and consistent. */
Test(rig_ik, random_rigs_keep_invariants)
{
    enum { N = 40, HANDLES = 12, CONSTRAINTS = 12, RIGS = 25 };
    uint32_t st = 2024, solved = 0, reached = 0;
    double worst_end = 0, worst_len = 0, worst_start = 0;
    for (int rig_i = 0; rig_i < RIGS; rig_i++) {
        af_bone b[N];
        static char names[N][8];
        uint32_t depth[N];
        for (uint32_t i = 0; i < N; i++) {
            snprintf(names[i], sizeof names[i], "b%u", i);
            int32_t parent = i == 0 ? -1 : (int32_t)(af_lcg(&st) % i);
            if (i > 1 && af_lcg(&st) % 3 == 0) parent = (int32_t)i - 1; /* some long chains */
            b[i] = af_bone_at(names[i], parent, af_rand(&st, -1, 1), af_rand(&st, -1, 1), af_rand(&st, -1, 1));
            af_axis_angle(af_rand(&st, -1, 1), af_rand(&st, -1, 1), af_rand(&st, -1, 1) + 0.01, af_rand(&st, -3, 3), b[i].r);
            b[i].s[0] = b[i].s[1] = b[i].s[2] = af_rand(&st, 0.5f, 2.0f);
            b[i].ssc = af_lcg(&st) % 2;
            depth[i] = parent < 0 ? 1 : depth[parent] + 1;
        }
        kiln_blob_ik_handle h[HANDLES];
        uint32_t nh = 0;
        while (nh < HANDLES) {
            uint32_t end = af_lcg(&st) % N;
            if (depth[end] < 2) continue;
            uint32_t len = 2 + af_lcg(&st) % (depth[end] - 1 < 6 ? depth[end] - 1 : 6), start = end;
            for (uint32_t k = 1; k < len; k++) start = (uint32_t)b[start].parent;
            h[nh] = rf_ik(0, start, end, len, af_lcg(&st) % N);
            h[nh].order = nh;
            if (af_lcg(&st) % 2) h[nh].pole_vector_bone = af_lcg(&st) % N;
            if (af_lcg(&st) % 3 == 0) h[nh].pole_bone = af_lcg(&st) % N;
            h[nh].flags = af_lcg(&st) % 2 ? KILN_IK_USE_TARGET_ROTATION : 0u;
            for (int k = 0; k < 3; k++) h[nh].target_offset[k] = af_rand(&st, -0.3f, 0.3f);
            nh++;
        }
        kiln_blob_constraint c[CONSTRAINTS];
        for (uint32_t k = 0; k < CONSTRAINTS; k++) {
            uint32_t o = 1 + af_lcg(&st) % (N - 1), t = af_lcg(&st) % N;
            if (t == o) t = (t + 1) % N;
            c[k] = rf_constraint(af_lcg(&st) % 3, 0, o, t);
            c[k].order = k, c[k].flags = af_lcg(&st) % 8, c[k].weight = af_rand(&st, 0, 1);
            if (c[k].type != KILN_CONSTRAINT_ORIENT)
                for (int a = 0; a < 3; a++) c[k].offset[a] = c[k].type == KILN_CONSTRAINT_SCALE ? af_rand(&st, 0.5f, 2) : af_rand(&st, -1, 1);
            else af_axis_angle(1, af_rand(&st, -1, 1), 0.5, af_rand(&st, -3, 3), c[k].offset);
        }
        rig r;
        rig_make(&r, b, N, c, CONSTRAINTS, h, HANDLES);
        kiln_soa_xform rest[(N + 7) / 8];
        float rest_model[N * 16];
        memcpy(rest, r.pose.local, sizeof rest);
        memcpy(rest_model, r.pose.model, sizeof rest_model);
        for (uint32_t k = 0; k < HANDLES; k++) {
            memcpy(r.pose.local, rest, sizeof rest);
            memcpy(r.pose.model, rest_model, sizeof rest_model);
            float w[HANDLES] = {0};
            w[k] = 1.0f;
            double before[N][3], after[N][3], goal[3];
            for (uint32_t i = 0; i < N; i++) pos(&r, i, before[i]);
            const float *tm = r.pose.model + 16 * h[k].target_bone;
            for (int a = 0; a < 3; a++)
                goal[a] = tm[a] * h[k].target_offset[0] + tm[4 + a] * h[k].target_offset[1] + tm[8 + a] * h[k].target_offset[2] + tm[12 + a];
            kiln_rig_report rep;
            cr_assert_eq(rf_solve_ex(&r.pose, KILN_RIG_IK, w, HANDLES, NULL, 0, &rep), KILN_OK);
            cr_assert_eq(rep.ik_solved, 1);
            check_consistent(&r, "random rig, one handle");
            for (uint32_t i = 0; i < N; i++) pos(&r, i, after[i]);
            for (uint32_t i = 1; i < N; i++) {
                uint32_t p = (uint32_t)b[i].parent;
                double d0 = rf_dist(before[i], before[p]), d1 = rf_dist(after[i], after[p]);
                worst_len = fmax(worst_len, fabs(d1 - d0) / fmax(1.0, d0));
            }
            worst_start = fmax(worst_start, rf_dist(before[h[k].start_bone], after[h[k].start_bone]));
            /* the target moves with the chain when it hangs below the start */
            int target_moves = 0;
            for (int32_t x = (int32_t)h[k].target_bone; x >= 0; x = b[x].parent) target_moves |= (uint32_t)x == h[k].start_bone;
            solved++;
            if (!rep.ik_unreachable && !target_moves) {
                double e = rf_dist(after[h[k].end_bone], goal);
                worst_end = fmax(worst_end, e / fmax(1.0, rf_dist(before[h[k].start_bone], goal)));
                reached++;
            }
        }
        memcpy(r.pose.local, rest, sizeof rest);
        memcpy(r.pose.model, rest_model, sizeof rest_model);
        kiln_rig_report rep;
        cr_assert_eq(rf_solve(&r.pose, &rep), KILN_OK);
        check_consistent(&r, "random rig, all handles and constraints");
        cr_assert_eq(rep.ik_solved, HANDLES);
        /* the same solve from a kiln_rig_prepare plan gives the same bits, twice (the plan
         * survives a solve) */
        kiln_soa_xform want[(N + 7) / 8];
        float want_model[N * 16];
        memcpy(want, r.pose.local, sizeof want);
        memcpy(want_model, r.pose.model, sizeof want_model);
        cr_assert_eq(kiln_rig_prepare(r.blob, 0, r.pose.scratch, r.pose.scratch_size), KILN_OK);
        kiln_rig_desc d;
        memset(&d, 0, sizeof d);
        d.blob = r.blob, d.local = r.pose.local, d.soa_count = r.pose.soa_count, d.object = r.pose.model;
        d.bone_count = N, d.scratch = r.pose.scratch, d.scratch_size = r.pose.scratch_size, d.prepared = 1;
        solve_twice_as(&r, &d, rest, rest_model, want, want_model, N, &rep, "a prepared solve", rig_i);
        /* a byte copy of the prepared scratch is a plan of its own: solving from the copy, with
         * the original overwritten, reads nothing of the original and gives the same bits */
        void *copy = malloc(r.pose.scratch_size);
        cr_assert_not_null(copy);
        memcpy(copy, r.pose.scratch, r.pose.scratch_size);
        memset(r.pose.scratch, 0xff, r.pose.scratch_size);
        d.scratch = copy;
        solve_twice_as(&r, &d, rest, rest_model, want, want_model, N, &rep, "a solve from a copied plan", rig_i);
        free(copy);
        rig_free(&r);
    }
    fprintf(stderr, "rig random rigs: %u handles solved alone (%u with reachable, unmoved goals): end error max %.2e "
                    "(relative to the start-goal distance, at least 1), parent-child distance change max %.2e, start "
                    "moved max %.2e\n",
            solved, reached, worst_end, worst_len, worst_start);
    cr_assert(worst_end <= TOL_REACH, "end error %.3g", worst_end);
    cr_assert(worst_len <= TOL_LEN, "a bone length changed by %.3g", worst_len);
    cr_assert(worst_start <= TOL_FIXED, "a start joint moved by %.3g", worst_start);
}

/* ---- constraints --------------------------------------------------------------------------------- */
/* root; parent at (1, 0, 0) turned 90 degrees about Z and scaled by 2; the owner below it at
 * (0, 1, 0) turned 30 degrees about Y; a child of the owner; the target under the root at
 * (3, 4, 5), turned and non-uniformly scaled. In the parent's space the target sits at
 * 0.5 · Rz(-90) · ((3, 4, 5) - (1, 0, 0)) = (2, -1, 2.5). */
enum { K_ROOT, K_PARENT, K_OWNER, K_TARGET, K_CHILD, K_COUNT };

static void cn_bones(af_bone *b)
{
    b[K_ROOT] = af_bone_at("root", -1, 0, 0, 0);
    b[K_PARENT] = af_bone_at("parent", K_ROOT, 1, 0, 0);
    set_rot(&b[K_PARENT], 0, 0, 1, 90);
    b[K_PARENT].s[0] = b[K_PARENT].s[1] = b[K_PARENT].s[2] = 2.0f;
    b[K_OWNER] = af_bone_at("owner", K_PARENT, 0, 1, 0);
    set_rot(&b[K_OWNER], 0, 1, 0, 30);
    b[K_TARGET] = af_bone_at("target", K_ROOT, 3, 4, 5);
    double q1[4], q2[4], q[4];
    qaxis(1, 0, 0, 40, q1), qaxis(0, 1, 0, 20, q2), af_qmul(q1, q2, q);
    for (int k = 0; k < 4; k++) b[K_TARGET].r[k] = (float)q[k];
    b[K_TARGET].s[0] = 1.5f, b[K_TARGET].s[1] = 2.0f, b[K_TARGET].s[2] = 0.5f;
    b[K_CHILD] = af_bone_at("child", K_OWNER, 0, 1, 0);
}

/* Applies one constraint to the fixture and returns the owner's local channels. */
static void apply_one(const kiln_blob_constraint *c, int with_root, double t[3], double q[4], double s[3],
                      const char *what)
{
    af_bone b[K_COUNT];
    cn_bones(b);
    rig r;
    rig_make(&r, b, K_COUNT, c, 1, NULL, 0);
    if (with_root) {
        double rt[3] = {-2, 0.5, 1}, rq[4], rs[3] = {0.8, 0.8, 0.8}, rm[16];
        qaxis(1, 1, 0, 50, rq);
        af_trs(rt, rq, rs, rm);
        for (int k = 0; k < 16; k++) r.pose.root[k] = (float)rm[k];
        r.pose.has_root = 1;
        cr_assert_eq(rf_forward(&r.pose), KILN_OK);
    }
    kiln_rig_report rep;
    cr_assert_eq(rf_solve(&r.pose, &rep), KILN_OK, "%s", what);
    check_consistent(&r, what);
    cr_assert_eq(rep.constraints_applied + rep.constraints_skipped, 1);
    rf_get(&r.pose, K_OWNER, t, q, s);
    rig_free(&r);
}

static void check_vec(const double *got, double x, double y, double z, const char *what)
{
    double want[3] = {x, y, z};
    fprintf(stderr, "rig %-44s error %.2e\n", what, vdiff(got, want));
    cr_assert(vdiff(got, want) <= TOL_POSE, "%s: (%.7g, %.7g, %.7g), expected (%g, %g, %g)", what, got[0], got[1], got[2],
              x, y, z);
}

Test(rig_constraint, point_every_flag)
{
    double t[3], q[4], s[3];
    kiln_blob_constraint c = rf_constraint(KILN_CONSTRAINT_POINT, 0, K_OWNER, K_TARGET);
    apply_one(&c, 0, t, q, s, "point");
    check_vec(t, 2, -1, 2.5, "point: t = inverse(W_parent) · P(target)");
    apply_one(&c, 1, t, q, s, "point, root matrix");
    check_vec(t, 2, -1, 2.5, "point under a root matrix");
    c.flags = KILN_CONSTRAINT_SKIP_Y;
    apply_one(&c, 0, t, q, s, "point skip y");
    check_vec(t, 2, 1, 2.5, "point skip y keeps FK y");
    c.flags = KILN_CONSTRAINT_SKIP_X | KILN_CONSTRAINT_SKIP_Z;
    apply_one(&c, 0, t, q, s, "point skip x z");
    check_vec(t, 0, -1, 0, "point skip x and z");
    c.flags = 0, c.weight = 0.5f;
    apply_one(&c, 0, t, q, s, "point weight 0.5");
    check_vec(t, 1, 0, 1.25, "point weight 0.5: lerp(FK, desired)");
    c.weight = 0.0f;
    apply_one(&c, 0, t, q, s, "point weight 0");
    check_vec(t, 0, 1, 0, "point weight 0: FK");
    c.weight = 1.0f, c.offset[0] = 0.1f, c.offset[1] = 0.2f, c.offset[2] = 0.3f;
    apply_one(&c, 0, t, q, s, "point offset");
    check_vec(t, 2.1, -0.8, 2.8, "point + offset (co or mo) in parent space");
}

Test(rig_constraint, point_moves_owner_onto_target_and_children_follow)
{
    af_bone b[K_COUNT];
    cn_bones(b);
    kiln_blob_constraint c = rf_constraint(KILN_CONSTRAINT_POINT, 0, K_OWNER, K_TARGET);
    rig r;
    rig_make(&r, b, K_COUNT, &c, 1, NULL, 0);
    cr_assert_eq(rf_solve(&r.pose, NULL), KILN_OK);
    double p[3], tp[3];
    pos(&r, K_OWNER, p);
    pos(&r, K_TARGET, tp);
    cr_assert(vdiff(p, tp) <= TOL_POSE, "owner at (%g, %g, %g)", p[0], p[1], p[2]);
    check_consistent(&r, "point: the owner's child follows");
    rig_free(&r);
}

Test(rig_constraint, orient_every_flag)
{
    af_bone b[K_COUNT];
    cn_bones(b);
    double rp[4], rt[4], fk[4], inv[4], want[4], t[3], q[4], s[3], off[4];
    for (int k = 0; k < 4; k++) rp[k] = b[K_PARENT].r[k], rt[k] = b[K_TARGET].r[k], fk[k] = b[K_OWNER].r[k];
    qconj(rp, inv);
    af_qmul(inv, rt, want); /* conj(R(parent)) ⊗ R(target): scale does not enter */
    kiln_blob_constraint c = rf_constraint(KILN_CONSTRAINT_ORIENT, 0, K_OWNER, K_TARGET);
    apply_one(&c, 0, t, q, s, "orient");
    fprintf(stderr, "rig %-44s error %.2e\n", "orient: conj(R_parent) R_target", qdiff(q, want));
    cr_assert(qdiff(q, want) <= TOL_POSE, "orient: %.3g", qdiff(q, want));
    apply_one(&c, 1, t, q, s, "orient, root matrix");
    cr_assert(qdiff(q, want) <= TOL_POSE, "orient under a root matrix: %.3g", qdiff(q, want));

    qaxis(1, 0, 0, 90, off);
    for (int k = 0; k < 4; k++) c.offset[k] = (float)off[k];
    double w2[4];
    af_qmul(want, off, w2);
    apply_one(&c, 0, t, q, s, "orient offset");
    cr_assert(qdiff(q, w2) <= TOL_POSE, "orient ⊗ offset: %.3g", qdiff(q, w2));

    c = rf_constraint(KILN_CONSTRAINT_ORIENT, 0, K_OWNER, K_TARGET);
    static const uint32_t skips[] = {KILN_CONSTRAINT_SKIP_X, KILN_CONSTRAINT_SKIP_Y, KILN_CONSTRAINT_SKIP_Z,
                                     KILN_CONSTRAINT_SKIP_X | KILN_CONSTRAINT_SKIP_Z};
    for (size_t i = 0; i < sizeof skips / sizeof skips[0]; i++) {
        c.flags = skips[i];
        double ef[3], ed[3], e[3], expect[4];
        euler_of(fk, ef), euler_of(want, ed);
        for (int k = 0; k < 3; k++) e[k] = (skips[i] >> k & 1) ? ef[k] : ed[k];
        from_euler(e, expect);
        apply_one(&c, 0, t, q, s, "orient skip");
        fprintf(stderr, "rig orient skip 0x%x (XYZ Euler, FK on skipped axes)      error %.2e\n", skips[i], qdiff(q, expect));
        cr_assert(qdiff(q, expect) <= TOL_POSE, "orient skip 0x%x: %.3g", skips[i], qdiff(q, expect));
    }
    c.flags = 0, c.weight = 0.5f;
    double half[4];
    af_slerp(fk, want, 0.5, half);
    apply_one(&c, 0, t, q, s, "orient weight 0.5");
    fprintf(stderr, "rig %-44s error %.2e\n", "orient weight 0.5: slerp(FK, desired)", qdiff(q, half));
    cr_assert(qdiff(q, half) <= TOL_POSE, "orient weight 0.5: %.3g", qdiff(q, half));
    c.weight = 0.0f;
    apply_one(&c, 0, t, q, s, "orient weight 0");
    cr_assert(qdiff(q, fk) <= 1e-7, "orient weight 0 changed the rotation");
}

Test(rig_constraint, scale_every_flag)
{
    double t[3], q[4], s[3];
    kiln_blob_constraint c = rf_constraint(KILN_CONSTRAINT_SCALE, 0, K_OWNER, K_TARGET);
    apply_one(&c, 0, t, q, s, "scale");
    check_vec(s, 1.5, 2, 0.5, "scale: s = s_local(target)");
    c.flags = KILN_CONSTRAINT_SKIP_Z;
    apply_one(&c, 0, t, q, s, "scale skip z");
    check_vec(s, 1.5, 2, 1, "scale skip z keeps FK z");
    c.flags = KILN_CONSTRAINT_SKIP_X | KILN_CONSTRAINT_SKIP_Y;
    apply_one(&c, 0, t, q, s, "scale skip x y");
    check_vec(s, 1, 1, 0.5, "scale skip x and y");
    c.flags = 0, c.weight = 0.5f;
    apply_one(&c, 0, t, q, s, "scale weight 0.5");
    check_vec(s, 1.25, 1.5, 0.75, "scale weight 0.5: lerp");
    c.weight = 1.0f, c.offset[0] = 2.0f, c.offset[1] = 2.0f, c.offset[2] = 0.5f;
    apply_one(&c, 0, t, q, s, "scale offset");
    check_vec(s, 3, 4, 0.25, "scale ∘ offset");
}

Test(rig_constraint, weights_multiply_and_order_is_ik_then_file_order)
{
    /* IK moves the ankle; a point constraint on the twist bone targets the ankle (it must see
     * the solved ankle), then an orient constraint on the pole targets the twist bone (it must
     * see the twist bone after the point constraint moved it... orientation unchanged, so the
     * test uses a second point constraint instead). */
    af_bone b[L_COUNT];
    leg_bones(b, 20);
    kiln_blob_ik_handle h = leg_ik();
    h.pole_vector_bone = L_POLE;
    kiln_blob_constraint c[2] = {rf_constraint(KILN_CONSTRAINT_POINT, 0, L_TWIST, L_ANKLE),
                                 rf_constraint(KILN_CONSTRAINT_POINT, 0, L_POLE, L_TWIST)};
    c[1].order = 1;
    rig r;
    rig_make(&r, b, L_COUNT, c, 2, &h, 1);
    cr_assert_eq(rf_solve(&r.pose, NULL), KILN_OK);
    check_consistent(&r, "IK then constraints");
    double a[3], tw[3], po[3], goal[3] = {0, 0.4, 0};
    pos(&r, L_ANKLE, a), pos(&r, L_TWIST, tw), pos(&r, L_POLE, po);
    cr_assert(rf_dist(a, goal) <= TOL_REACH && vdiff(tw, a) <= TOL_POSE && vdiff(po, a) <= TOL_POSE,
              "ankle (%g %g %g), twist (%g %g %g), pole (%g %g %g)", a[0], a[1], a[2], tw[0], tw[1], tw[2], po[0], po[1],
              po[2]);
    rig_free(&r);

    /* constraint weight 0.5 times the record's 0.5 */
    af_bone k[K_COUNT];
    cn_bones(k);
    kiln_blob_constraint one = rf_constraint(KILN_CONSTRAINT_POINT, 0, K_OWNER, K_TARGET);
    one.weight = 0.5f;
    rig_make(&r, k, K_COUNT, &one, 1, NULL, 0);
    float w = 0.5f;
    cr_assert_eq(rf_solve_ex(&r.pose, 0, NULL, 0, &w, 1, NULL), KILN_OK);
    double t[3];
    rf_get(&r.pose, K_OWNER, t, NULL, NULL);
    check_vec(t, 0.5, 0.5, 0.625, "point weight 0.5 x 0.5");
    rig_free(&r);
}

/* Constraints that share an owner's parent read its matrix (rotation, inverse) once while it
 * is unchanged; one that moves that parent must be seen by the next. Solving them in one call
 * must give, bit for bit, what solving them one call each (the others weighted 0) gives: every
 * step starts from the pose the previous one left, locals and model matrices alike. */
Test(rig_constraint, one_call_matches_one_constraint_per_call)
{
    enum { ROOT, TA, P, Q, R, TB, N };
    af_bone b[N];
    b[ROOT] = af_bone_at("root", -1, 0, 0, 0);
    b[TA] = af_bone_at("ta", ROOT, 0.4f, 1.1f, -0.3f);
    b[P] = af_bone_at("p", ROOT, -0.2f, 0.8f, 0.1f);
    b[Q] = af_bone_at("q", P, 0.3f, 0.2f, 0.0f);
    b[R] = af_bone_at("r", P, -0.1f, 0.5f, 0.2f);
    b[TB] = af_bone_at("tb", ROOT, 0.7f, -0.2f, 0.5f);
    b[R].s[1] = 1.5f;
    kiln_blob_constraint c[] = {
        rf_constraint(KILN_CONSTRAINT_ORIENT, 0, Q, TA), /* reads P's rotation */
        rf_constraint(KILN_CONSTRAINT_POINT, 0, R, TB),  /* reads P's inverse */
        rf_constraint(KILN_CONSTRAINT_ORIENT, 0, P, TA), /* turns P, Q and R follow */
        rf_constraint(KILN_CONSTRAINT_POINT, 0, Q, TB),  /* P's new inverse */
        rf_constraint(KILN_CONSTRAINT_ORIENT, 0, R, TB), /* P's new rotation */
        rf_constraint(KILN_CONSTRAINT_SCALE, 0, P, R),   /* scales P */
        rf_constraint(KILN_CONSTRAINT_POINT, 0, R, TA),  /* P's scaled inverse */
        rf_constraint(KILN_CONSTRAINT_ORIENT, 0, Q, TB),
    };
    const uint32_t n = sizeof c / sizeof c[0];
    c[5].offset[0] = 1.25f, c[5].offset[1] = 0.8f;
    for (uint32_t i = 0; i < n; i++) c[i].order = i;
    rig one, each;
    rig_make(&one, b, N, c, n, NULL, 0);
    rig_make(&each, b, N, c, n, NULL, 0);
    const float turn[2][4] = {{0.2f, -0.3f, 0.1f, 0.9274f}, {-0.4f, 0.1f, 0.3f, 0.8602f}};
    for (rig *r = &one; r; r = r == &one ? &each : NULL) {
        for (unsigned k = 0; k < 4; k++) *rf_lane(r->pose.local, TA, 3 + k) = turn[0][k];
        for (unsigned k = 0; k < 4; k++) *rf_lane(r->pose.local, TB, 3 + k) = turn[1][k];
        cr_assert_eq(rf_forward(&r->pose), KILN_OK);
    }
    kiln_rig_report rep;
    cr_assert_eq(rf_solve(&one.pose, &rep), KILN_OK);
    cr_assert_eq(rep.constraints_applied, n);
    for (uint32_t i = 0; i < n; i++) {
        float w[sizeof c / sizeof c[0]] = {0};
        w[i] = 1.0f;
        cr_assert_eq(rf_solve_ex(&each.pose, 0, NULL, 0, w, n, &rep), KILN_OK);
        cr_assert_eq(rep.constraints_applied, 1u);
    }
    check_consistent(&one, "constraints in one call");
    /* the steps did something: Q sits on TB, R is on TA */
    double q[3], r[3], ta[3], tb[3];
    pos(&one, Q, q), pos(&one, R, r), pos(&one, TA, ta), pos(&one, TB, tb);
    cr_assert(vdiff(r, ta) <= TOL_POSE, "R (%g %g %g) is not on TA (%g %g %g)", r[0], r[1], r[2], ta[0], ta[1], ta[2]);
    cr_assert(vdiff(q, tb) > 1e-3, "Q stayed on TB although P was scaled after it moved there");
    cr_assert_eq(memcmp(one.pose.local, each.pose.local, sizeof *one.pose.local * one.pose.soa_count), 0,
                 "the local pose differs from solving one constraint per call");
    cr_assert_eq(memcmp(one.pose.model, each.pose.model, sizeof(float) * 16 * N), 0,
                 "the model matrices differ from solving one constraint per call");
    rig_free(&one);
    rig_free(&each);
}

Test(rig_constraint, solve_arguments_are_checked)
{
    af_bone b[K_COUNT];
    cn_bones(b);
    kiln_blob_constraint c = rf_constraint(KILN_CONSTRAINT_POINT, 0, K_OWNER, K_TARGET);
    rig r;
    rig_make(&r, b, K_COUNT, &c, 1, NULL, 0);
    kiln_rig_desc d;
    memset(&d, 0, sizeof d);
    cr_assert_eq(kiln_rig_solve(NULL), KILN_ERR_INVALID_ARGUMENT);
    cr_assert_eq(kiln_rig_solve(&d), KILN_ERR_INVALID_ARGUMENT);
    d.blob = r.blob, d.local = r.pose.local, d.soa_count = r.pose.soa_count, d.object = r.pose.model;
    d.bone_count = r.pose.bone_count, d.scratch = r.pose.scratch, d.scratch_size = r.pose.scratch_size;
    cr_assert_eq(kiln_rig_solve(&d), KILN_OK);
    d.skeleton = 1;
    cr_assert_eq(kiln_rig_solve(&d), KILN_ERR_INVALID_ARGUMENT);
    d.skeleton = 0, d.stages = 4;
    cr_assert_eq(kiln_rig_solve(&d), KILN_ERR_INVALID_ARGUMENT);
    d.stages = 0, d.scratch_size = r.pose.scratch_size - 1;
    cr_assert_eq(kiln_rig_solve(&d), KILN_ERR_BUFFER_TOO_SMALL);
    d.scratch_size = r.pose.scratch_size, d.bone_count = K_COUNT - 1;
    cr_assert_eq(kiln_rig_solve(&d), KILN_ERR_BUFFER_TOO_SMALL);
    d.bone_count = K_COUNT, d.ik_weight_count = 1;
    cr_assert_eq(kiln_rig_solve(&d), KILN_ERR_INVALID_ARGUMENT);
    d.ik_weight_count = 0, d.scratch = (char *)r.pose.scratch + 4;
    cr_assert_eq(kiln_rig_solve(&d), KILN_ERR_BLOB_MISALIGNED); /* misaligned scratch */
    cr_assert_eq(kiln_rig_scratch_size(r.blob, 1), 0);
    cr_assert_eq(kiln_rig_scratch_size(NULL, 0), 0);
    rig_free(&r);
}

/* Records the load checks would reject reach the solver only from a trusted load: the plan marks
 * them, and each solve skips them (and the records of weight 0) while applying the others,
 * prepared or not. */
Test(rig_constraint, trusted_bad_records_are_skipped)
{
    af_bone b[K_COUNT];
    cn_bones(b);
    kiln_blob_constraint c[] = {
        rf_constraint(KILN_CONSTRAINT_ORIENT, 0, K_OWNER, K_OWNER),     /* the target is the owner */
        rf_constraint(7u, 0, K_OWNER, K_TARGET),                        /* unknown type */
        rf_constraint(KILN_CONSTRAINT_POINT, 0, K_COUNT + 3, K_TARGET), /* no such owner */
        rf_constraint(KILN_CONSTRAINT_SCALE, 0, K_OWNER, 999u),         /* no such target */
        rf_constraint(KILN_CONSTRAINT_ORIENT, 0, K_OWNER, K_TARGET),    /* weight 0 */
        rf_constraint(KILN_CONSTRAINT_POINT, 0, K_OWNER, K_TARGET),     /* the one applied */
    };
    const uint32_t n = sizeof c / sizeof c[0];
    c[4].weight = 0.0f;
    for (uint32_t i = 0; i < n; i++) c[i].order = i;
    size_t size;
    af_skel skel = {K_COUNT, b};
    unsigned char *mem = rf_build(&skel, c, n, NULL, 0, &size);
    const kiln_blob *blob = NULL;
    cr_assert_eq(kiln_blob_load(mem, size, 0, &blob, NULL), KILN_ERR_BLOB_BAD_RECORD, "the verified load accepts them");
    cr_assert_eq(kiln_blob_load(mem, size, KILN_BLOB_LOAD_TRUSTED, &blob, NULL), KILN_OK);
    rf_pose fk, pose[2];
    rf_pose_init(&fk, blob, 0);
    cr_assert_eq(rf_forward(&fk), KILN_OK);
    for (int prepared = 0; prepared < 2; prepared++) {
        rf_pose *p = &pose[prepared];
        rf_pose_init(p, blob, 0);
        cr_assert_eq(rf_forward(p), KILN_OK);
        kiln_rig_report rep;
        kiln_rig_desc d;
        memset(&d, 0, sizeof d);
        d.blob = blob, d.local = p->local, d.soa_count = p->soa_count, d.object = p->model;
        d.bone_count = p->bone_count, d.scratch = p->scratch, d.scratch_size = p->scratch_size, d.report = &rep;
        if (prepared) cr_assert_eq(kiln_rig_prepare(blob, 0, p->scratch, p->scratch_size), KILN_OK);
        d.prepared = prepared;
        cr_assert_eq(kiln_rig_solve(&d), KILN_OK);
        cr_assert_eq(rep.constraints_applied, 1u, "prepared %d", prepared);
        cr_assert_eq(rep.constraints_skipped, n - 1, "prepared %d", prepared);
        /* the owner sits on the target; its rotation and scale are FK's (no other record ran) */
        double o[3], t[3], q[4], qf[4], sc[3], sf[3], tt[3];
        rf_position(p, K_OWNER, o), rf_position(p, K_TARGET, t);
        cr_assert(rf_dist(o, t) <= 1e-5, "owner (%g %g %g), target (%g %g %g)", o[0], o[1], o[2], t[0], t[1], t[2]);
        rf_get(p, K_OWNER, tt, q, sc), rf_get(&fk, K_OWNER, tt, qf, sf);
        for (int k = 0; k < 4; k++) cr_assert_eq(q[k], qf[k], "rotation lane %d changed", k);
        for (int k = 0; k < 3; k++) cr_assert_eq(sc[k], sf[k], "scale lane %d changed", k);
    }
    cr_assert_eq(memcmp(pose[0].local, pose[1].local, sizeof *pose[0].local * pose[0].soa_count), 0);
    cr_assert_eq(memcmp(pose[0].model, pose[1].model, sizeof(float) * 16u * pose[0].bone_count), 0);
    rf_pose_free(&fk), rf_pose_free(&pose[0]), rf_pose_free(&pose[1]);
    free(mem);
}

/* ---- loading: the CNST and IKHD checks --------------------------------------------------------- */
/* Builds the leg with one constraint and one handle after `edit` changed them (and the blob,
 * through `patch`, after layout), and loads it: returns the code, err.path in `path`. */
static kiln_result load_edited(void (*edit)(kiln_blob_constraint *, kiln_blob_ik_handle *),
                               void (*patch)(unsigned char *, size_t), char *path, size_t cap)
{
    af_bone b[L_COUNT];
    leg_bones(b, 20);
    kiln_blob_constraint c[2] = {rf_constraint(KILN_CONSTRAINT_ORIENT, 0, L_TWIST, L_TARGET),
                                 rf_constraint(KILN_CONSTRAINT_POINT, 0, L_POLE, L_TARGET)};
    c[1].order = 1;
    kiln_blob_ik_handle h = leg_ik();
    if (edit) edit(c, &h);
    size_t size;
    af_skel skel = {L_COUNT, b};
    unsigned char *mem = rf_build(&skel, c, 2, &h, 1, &size);
    if (patch) {
        patch(mem, size);
        af_fix_crc(mem, size);
    }
    const kiln_blob *blob;
    kiln_diag err;
    memset(&err, 0, sizeof err);
    kiln_result r = kiln_blob_load(mem, size, 0, &blob, &err);
    snprintf(path, cap, "%s", err.path);
    if (r != KILN_OK) fprintf(stderr, "rig load: %s\n", err.message);
    free(mem);
    return r;
}

#define EDIT(name, body)                                                                  \
    static void name(kiln_blob_constraint *c, kiln_blob_ik_handle *h)                     \
    {                                                                                     \
        (void)c, (void)h;                                                                 \
        body;                                                                             \
    }
EDIT(e_bone_range, c[0].bone = L_COUNT)
EDIT(e_target_self, c[0].target = c[0].bone)
EDIT(e_type, c[0].type = 3)
EDIT(e_flags, c[0].flags = 8)
EDIT(e_weight, c[0].weight = 1.5f)
EDIT(e_weight_nan, c[0].weight = NAN)
EDIT(e_orient_len, c[0].offset[3] = 2.0f)
EDIT(e_point_w, c[1].offset[3] = 1.0f)
EDIT(e_reserved, c[1].reserved[2] = 1)
EDIT(e_skeleton, c[0].skeleton = 1)
EDIT(e_order, c[1].order = 0)
EDIT(e_offset_inf, c[1].offset[0] = INFINITY)
EDIT(e_chain_short, h->chain_length = 2)
EDIT(e_chain_one, h->chain_length = 1; h->end_bone = h->start_bone)
EDIT(e_chain_deep, h->chain_length = 9)
EDIT(e_not_descendant, h->end_bone = L_TARGET)
EDIT(e_pole_range, h->pole_vector_bone = 99)
EDIT(e_ik_flags, h->flags = 2)
EDIT(e_ik_offset, h->target_offset[2] = NAN)
EDIT(e_ik_reserved, h->reserved[0] = 7)
EDIT(e_ik_end, h->end_bone = 1000)
#undef EDIT

/* Section table entries (CNST is the second-to-last section, IKHD the last). */
static kiln_blob_section *section(unsigned char *mem, uint32_t kind)
{
    kiln_blob_header h;
    memcpy(&h, mem, sizeof h);
    for (uint32_t i = 0; i < h.section_count; i++) {
        kiln_blob_section *s = (kiln_blob_section *)(void *)(mem + 64 + 32 * i);
        if (s->kind == kind) return s;
    }
    return NULL;
}
static void p_version(unsigned char *m, size_t n) { (void)n, section(m, KILN_SECTION_IK_HANDLES)->version = 2; }
static void p_second(unsigned char *m, size_t n) { (void)n, section(m, KILN_SECTION_IK_HANDLES)->kind = KILN_SECTION_CONSTRAINTS; }
static void p_stride(unsigned char *m, size_t n)
{
    (void)n;
    kiln_blob_section *s = section(m, KILN_SECTION_CONSTRAINTS);
    s->stride = 32, s->count = 4;
}
static void p_flags(unsigned char *m, size_t n) { (void)n, section(m, KILN_SECTION_CONSTRAINTS)->flags = 2; }

Test(rig_load, rejects_bad_records_and_sections)
{
    static const struct {
        void (*edit)(kiln_blob_constraint *, kiln_blob_ik_handle *);
        void (*patch)(unsigned char *, size_t);
        kiln_result code;
        const char *path;
    } cases[] = {
        {e_bone_range, NULL, KILN_ERR_BLOB_BAD_RECORD, "CNST[0].bone"},
        {e_target_self, NULL, KILN_ERR_BLOB_BAD_RECORD, "CNST[0].target"},
        {e_type, NULL, KILN_ERR_BLOB_BAD_RECORD, "CNST[0].type"},
        {e_flags, NULL, KILN_ERR_BLOB_BAD_RECORD, "CNST[0].flags"},
        {e_weight, NULL, KILN_ERR_BLOB_BAD_RECORD, "CNST[0].weight"},
        {e_weight_nan, NULL, KILN_ERR_BLOB_NOT_FINITE, "CNST[0].weight"},
        {e_orient_len, NULL, KILN_ERR_BLOB_BAD_RECORD, "CNST[0].offset"},
        {e_point_w, NULL, KILN_ERR_BLOB_BAD_RECORD, "CNST[1].offset"},
        {e_reserved, NULL, KILN_ERR_BLOB_BAD_RECORD, "CNST[1].reserved"},
        {e_skeleton, NULL, KILN_ERR_BLOB_BAD_RECORD, "CNST[0].skeleton"},
        {e_order, NULL, KILN_ERR_BLOB_BAD_RECORD, "CNST[1].skeleton"},
        {e_offset_inf, NULL, KILN_ERR_BLOB_NOT_FINITE, "CNST[1].offset"},
        {e_chain_short, NULL, KILN_ERR_BLOB_BAD_RECORD, "IKHD[0].chain_length"},
        {e_chain_one, NULL, KILN_ERR_BLOB_BAD_RECORD, "IKHD[0].chain_length"},
        {e_chain_deep, NULL, KILN_ERR_BLOB_BAD_RECORD, "IKHD[0].chain_length"},
        {e_not_descendant, NULL, KILN_ERR_BLOB_BAD_RECORD, "IKHD[0].chain_length"},
        {e_pole_range, NULL, KILN_ERR_BLOB_BAD_RECORD, "IKHD[0].pole_vector_bone"},
        {e_ik_flags, NULL, KILN_ERR_BLOB_BAD_RECORD, "IKHD[0].flags"},
        {e_ik_offset, NULL, KILN_ERR_BLOB_NOT_FINITE, "IKHD[0].target_offset"},
        {e_ik_reserved, NULL, KILN_ERR_BLOB_BAD_RECORD, "IKHD[0].reserved"},
        {e_ik_end, NULL, KILN_ERR_BLOB_BAD_RECORD, "IKHD[0].end_bone"},
        {NULL, p_version, KILN_ERR_BLOB_BAD_VERSION, "section["},
        {NULL, p_second, KILN_ERR_BLOB_BAD_SECTION, "section["},
        {NULL, p_stride, KILN_ERR_BLOB_BAD_SECTION, "section["},
        {NULL, p_flags, KILN_ERR_BLOB_BAD_SECTION, "section["},
    };
    char path[256];
    cr_assert_eq(load_edited(NULL, NULL, path, sizeof path), KILN_OK, "the unedited blob does not load: %s", path);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kiln_result r = load_edited(cases[i].edit, cases[i].patch, path, sizeof path);
        cr_assert_eq(r, cases[i].code, "case %zu (%s): %s, expected %s", i, cases[i].path, kiln_result_name(r),
                     kiln_result_name(cases[i].code));
        cr_assert(strncmp(path, cases[i].path, strlen(cases[i].path)) == 0, "case %zu: path %s, expected %s", i, path,
                  cases[i].path);
    }
}

Test(rig_load, views_find_each_skeletons_records)
{
    af_bone b[L_COUNT];
    leg_bones(b, 20);
    kiln_blob_ik_handle h = leg_ik();
    kiln_blob_constraint c = rf_constraint(KILN_CONSTRAINT_POINT, 0, L_TWIST, L_TARGET);
    rig r;
    rig_make(&r, b, L_COUNT, &c, 1, &h, 1);
    uint32_t n = 9;
    cr_assert_not_null(kiln_blob_constraints(r.blob, &n));
    cr_assert_eq(n, 1);
    cr_assert_not_null(kiln_blob_ik_handles(r.blob, &n));
    cr_assert_eq(n, 1);
    cr_assert_eq(kiln_rig_ik_handles(r.blob, 0, &n)->end_bone, L_ANKLE);
    cr_assert_eq(n, 1);
    cr_assert_null(kiln_rig_constraints(r.blob, 1, &n));
    cr_assert_eq(n, 0);
    cr_assert_null(kiln_rig_ik_handles(r.blob, UINT32_MAX, &n));
    cr_assert_null(kiln_blob_constraints(NULL, &n));
    cr_assert_eq(n, 0);
    rig_free(&r);
    rig_make(&r, b, L_COUNT, NULL, 0, NULL, 0);
    cr_assert_null(kiln_blob_ik_handles(r.blob, &n));
    cr_assert_eq(n, 0);
    cr_assert_eq(rf_solve(&r.pose, NULL), KILN_OK, "a skeleton without a rig solves to nothing");
    rig_free(&r);
}

/* ---- baking --------------------------------------------------------------------------------------- */
typedef struct baked {
    kiln_bake_result res;
    const kiln_blob *blob;
    diag_log log;
} baked;

static void bake_bytes(const file_bytes *const *files, uint32_t n, baked *b)
{
    memset(b, 0, sizeof *b);
    kiln_bake_input in[4];
    for (uint32_t i = 0; i < n; i++) in[i] = (kiln_bake_input){"rig.cast", files[i]->data, files[i]->size, NULL};
    kiln_bake_options o;
    memset(&o, 0, sizeof o);
    o.diag.fn = diag_log_push, o.diag.user = &b->log;
    kiln_diag err;
    kiln_result r = kiln_bake(in, n, &o, &b->res, &err);
    cr_assert_eq(r, KILN_OK, "bake failed: %s: %s", err.path, err.message);
    r = kiln_blob_load(b->res.blob, b->res.size, 0, &b->blob, &err);
    cr_assert_eq(r, KILN_OK, "baked blob does not load: %s", err.message);
}

static int log_has(const diag_log *log, kiln_result code, kiln_severity sev, const char *text)
{
    for (int i = 0; i < log->count && i < 32; i++)
        if (log->items[i].code == code && log->items[i].severity == sev && (!text || strstr(log->items[i].message, text)))
            return 1;
    return 0;
}

static void w_vec(kiln_cast_writer *w, uint32_t node, const char *name, uint16_t type, float x, float y, float z, float q)
{
    float v[4] = {x, y, z, q};
    kiln_cast_writer_prop(w, node, name, type, v, 1);
}

typedef struct cast_bone {
    const char *name;
    int32_t parent;
    float lp[3], lr[4], s[3];
    int ssc;
} cast_bone;

/* A Model with a Skeleton of `bones`; returns the Skeleton node. Bone hashes are 100 + index. */
static uint32_t w_skeleton(kiln_cast_writer *w, uint32_t root, uint64_t model_hash, const cast_bone *bones, uint32_t n)
{
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, model_hash);
    uint32_t skel = kiln_cast_writer_node(w, model, KILN_CAST_ID_SKELETON, model_hash + 1);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t b = kiln_cast_writer_node(w, skel, KILN_CAST_ID_BONE, 100 + i);
        kiln_cast_writer_string(w, b, "n", bones[i].name);
        uint32_t p = (uint32_t)bones[i].parent;
        kiln_cast_writer_prop(w, b, "p", KILN_CAST_TYPE_INT, &p, 1);
        w_vec(w, b, "lp", KILN_CAST_TYPE_VEC3, bones[i].lp[0], bones[i].lp[1], bones[i].lp[2], 0);
        kiln_cast_writer_prop(w, b, "lr", KILN_CAST_TYPE_VEC4, bones[i].lr, 1);
        w_vec(w, b, "s", KILN_CAST_TYPE_VEC3, bones[i].s[0], bones[i].s[1], bones[i].s[2], 0);
        kiln_cast_writer_byte(w, b, "ssc", (uint8_t)bones[i].ssc);
    }
    return skel;
}

static uint32_t w_constraint(kiln_cast_writer *w, uint32_t skel, const char *name, const char *ct, uint64_t cb,
                             uint64_t tb)
{
    uint32_t c = kiln_cast_writer_node(w, skel, KILN_CAST_ID_CONSTRAINT, 0);
    if (name) kiln_cast_writer_string(w, c, "n", name);
    kiln_cast_writer_string(w, c, "ct", ct);
    kiln_cast_writer_u64(w, c, "cb", cb);
    kiln_cast_writer_u64(w, c, "tb", tb);
    return c;
}

/* Cast bones out of parent-first order: "child" (Cast 0) under "mid" (Cast 2), so the baker
 * sorts them root 0, mid 1, child 2, tgt 3. Rest rotations everywhere, a non-uniform scale on
 * mid (SSC on child), a scaled and turned target. */
enum { B_CHILD = 100, B_ROOT, B_MID, B_TGT };
static const cast_bone rig_cast_bones[4] = {
    {"child", 2, {0.1f, 0.8f, -0.2f}, {0.2588190f, 0, 0, 0.9659258f}, {1, 1, 1}, 1},
    {"root", -1, {0, 0, 0}, {0, 0, 0.1305262f, 0.9914449f}, {1, 1, 1}, 1},
    {"mid", 1, {0, 1, 0}, {0, 0.3826834f, 0, 0.9238795f}, {1.5f, 0.5f, 1.25f}, 1},
    {"tgt", 1, {2, 1.5f, -1}, {0.1464466f, 0.3535534f, 0.3535534f, 0.8535534f}, {0.5f, 2, 1.5f}, 1},
};

static file_bytes rig_cast(void)
{
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t skel = w_skeleton(w, root, 2, rig_cast_bones, 4);
    /* IK handles and constraints interleaved: each kind keeps its own file order */
    uint32_t ik = kiln_cast_writer_node(w, skel, KILN_CAST_ID_IKHANDLE, 0);
    kiln_cast_writer_string(w, ik, "n", "arm_ik");
    kiln_cast_writer_u64(w, ik, "sb", B_ROOT);
    kiln_cast_writer_u64(w, ik, "eb", B_CHILD);
    kiln_cast_writer_u64(w, ik, "tb", B_TGT);
    kiln_cast_writer_u64(w, ik, "pv", B_TGT);
    kiln_cast_writer_u64(w, ik, "pb", B_MID);
    w_vec(w, ik, "to", KILN_CAST_TYPE_VEC3, 0.1f, 0.2f, 0.3f, 0);
    kiln_cast_writer_byte(w, ik, "tr", 1);
    uint32_t c = w_constraint(w, skel, "c_pt_mo", "pt", B_CHILD, B_TGT);
    kiln_cast_writer_byte(w, c, "mo", 1);
    c = w_constraint(w, skel, "c_or_mo", "or", B_CHILD, B_TGT);
    kiln_cast_writer_byte(w, c, "mo", 1);
    c = w_constraint(w, skel, "c_sc_mo", "sc", B_CHILD, B_TGT);
    kiln_cast_writer_byte(w, c, "mo", 1);
    ik = kiln_cast_writer_node(w, skel, KILN_CAST_ID_IKHANDLE, 0); /* end above start: dropped */
    kiln_cast_writer_u64(w, ik, "sb", B_CHILD);
    kiln_cast_writer_u64(w, ik, "eb", B_ROOT);
    kiln_cast_writer_u64(w, ik, "tb", B_TGT);
    c = w_constraint(w, skel, "c_pt_co", "pt", B_MID, B_TGT);
    w_vec(w, c, "co", KILN_CAST_TYPE_VEC3, 1, 2, 3, 0);
    kiln_cast_writer_byte(w, c, "sy", 1);
    float wt = 0.25f;
    kiln_cast_writer_prop(w, c, "wt", KILN_CAST_TYPE_FLOAT, &wt, 1);
    c = w_constraint(w, skel, "c_or_co", "or", B_MID, B_TGT);
    w_vec(w, c, "co", KILN_CAST_TYPE_VEC4, 0, 0, 0.6f, 0.8f);
    c = w_constraint(w, skel, "c_sc", "sc", B_MID, B_TGT);
    kiln_cast_writer_byte(w, c, "sz", 1);
    ik = kiln_cast_writer_node(w, skel, KILN_CAST_ID_IKHANDLE, 0); /* no target: inactive */
    kiln_cast_writer_u64(w, ik, "sb", B_ROOT);
    kiln_cast_writer_u64(w, ik, "eb", B_CHILD);
    w_constraint(w, skel, "c_self", "pt", B_TGT, B_TGT);     /* cb == tb: dropped */
    w_constraint(w, skel, "c_unresolved", "pt", B_MID, 999); /* dropped */
    c = w_constraint(w, skel, "c_both", "pt", B_MID, B_TGT);
    kiln_cast_writer_byte(w, c, "mo", 1);
    w_vec(w, c, "co", KILN_CAST_TYPE_VEC3, 4, 5, 6, 0);
    ik = kiln_cast_writer_node(w, skel, KILN_CAST_ID_IKHANDLE, 0); /* start == end: dropped */
    kiln_cast_writer_u64(w, ik, "sb", B_MID);
    kiln_cast_writer_u64(w, ik, "eb", B_MID);
    kiln_cast_writer_u64(w, ik, "tb", B_TGT);
    return writer_bytes(w);
}

Test(rig_bake, records_in_sorted_bone_order_with_resolved_offsets)
{
    file_bytes f = rig_cast();
    const file_bytes *files[1] = {&f};
    baked b;
    bake_bytes(files, 1, &b);
    uint32_t n = 0, m = 0;
    const kiln_blob_constraint *c = kiln_blob_constraints(b.blob, &n);
    const kiln_blob_ik_handle *h = kiln_blob_ik_handles(b.blob, &m);
    cr_assert_eq(n, 7, "constraints baked: %u", n);
    cr_assert_eq(m, 2, "IK handles baked: %u", m);
    enum { ROOT = 0, MID = 1, CHILD = 2, TGT = 3 };
    /* order = position among the constraints the importer kept: c_self and c_unresolved
     * (bones that do not resolve to two distinct ones) are dropped by the Cast importer before
     * the bake, so c_both is the 7th (order 6), not the 9th; the relative order is the file's */
    static const uint32_t orders[7] = {0, 1, 2, 3, 4, 5, 6};
    static const uint32_t types[7] = {KILN_CONSTRAINT_POINT, KILN_CONSTRAINT_ORIENT, KILN_CONSTRAINT_SCALE,
                                      KILN_CONSTRAINT_POINT, KILN_CONSTRAINT_ORIENT, KILN_CONSTRAINT_SCALE,
                                      KILN_CONSTRAINT_POINT};
    static const char *const names[7] = {"c_pt_mo", "c_or_mo", "c_sc_mo", "c_pt_co", "c_or_co", "c_sc", "c_both"};
    for (uint32_t i = 0; i < n; i++) {
        cr_assert_eq(c[i].order, orders[i], "constraint %u order %u", i, c[i].order);
        cr_assert_eq(c[i].type, types[i]);
        cr_assert_eq(c[i].skeleton, 0);
        cr_assert_eq(c[i].bone, i < 3 ? (uint32_t)CHILD : (uint32_t)MID);
        cr_assert_eq(c[i].target, TGT);
        cr_assert_str_eq(kiln_blob_string(b.blob, c[i].name), names[i]);
        cr_assert_eq(kiln_blob_find(b.blob, KILN_SECTION_CONSTRAINTS, names[i]), i);
    }
    cr_assert_eq(c[3].flags, KILN_CONSTRAINT_SKIP_Y);
    cr_assert_float_eq(c[3].weight, 0.25f, 1e-7);
    cr_assert(c[3].offset[0] == 1 && c[3].offset[1] == 2 && c[3].offset[2] == 3 && c[3].offset[3] == 0);
    cr_assert(fabsf(c[4].offset[2] - 0.6f) < 1e-6f && fabsf(c[4].offset[3] - 0.8f) < 1e-6f, "or co");
    cr_assert(c[5].offset[0] == 1 && c[5].offset[1] == 1 && c[5].offset[2] == 1 && c[5].offset[3] == 1, "sc default");
    cr_assert_eq(c[5].flags, KILN_CONSTRAINT_SKIP_Z);
    cr_assert(c[6].offset[0] == 4 && c[6].offset[1] == 5 && c[6].offset[2] == 6, "co wins over mo");
    cr_assert_eq(c[0].offset[3], 0.0f);
    cr_assert_eq(c[2].offset[3], 1.0f);
    /* scale mo: s_rest(child) / s_rest(tgt) = (1, 1, 1) / (0.5, 2, 1.5) */
    cr_assert(fabsf(c[2].offset[0] - 2.0f) < 1e-6f && fabsf(c[2].offset[1] - 0.5f) < 1e-6f &&
              fabsf(c[2].offset[2] - 1.0f / 1.5f) < 1e-6f);

    cr_assert_eq(h[0].start_bone, ROOT);
    cr_assert_eq(h[0].end_bone, CHILD);
    cr_assert_eq(h[0].chain_length, 3);
    cr_assert_eq(h[0].target_bone, TGT);
    cr_assert_eq(h[0].pole_vector_bone, TGT);
    cr_assert_eq(h[0].pole_bone, MID);
    cr_assert_eq(h[0].flags, KILN_IK_USE_TARGET_ROTATION);
    cr_assert_eq(h[0].order, 0);
    cr_assert(h[0].target_offset[0] == 0.1f && h[0].target_offset[1] == 0.2f && h[0].target_offset[2] == 0.3f);
    cr_assert_str_eq(kiln_blob_string(b.blob, h[0].name), "arm_ik");
    cr_assert_eq(h[1].target_bone, KILN_BLOB_NONE);
    cr_assert_eq(h[1].pole_vector_bone, KILN_BLOB_NONE);
    cr_assert_eq(h[1].order, 2);

    /* what was dropped or repaired is reported; nothing is "skipped" any more */
    cr_assert(log_has(&b.log, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_ERROR, "not a descendant"), "eb above sb");
    cr_assert(log_has(&b.log, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_ERROR, "constrained to itself"), "cb == tb");
    cr_assert(log_has(&b.log, KILN_ERR_CAST_UNRESOLVED, KILN_SEVERITY_ERROR, NULL), "unresolved tb");
    cr_assert(log_has(&b.log, KILN_ERR_CAST_MISSING_PROPERTY, KILN_SEVERITY_WARNING, "inactive"), "no tb");
    cr_assert(log_has(&b.log, KILN_ERR_CAST_BAD_VALUE, KILN_SEVERITY_WARNING, "co is used"), "mo and co");
    cr_assert(!log_has(&b.log, KILN_ERR_LIMIT, KILN_SEVERITY_WARNING, "IK"), "IK handles are no longer skipped");
    for (int i = 0; i < b.log.count && i < 32; i++) fprintf(stderr, "rig bake diag: %s: %s\n", b.log.items[i].path, b.log.items[i].message);
    kiln_bake_result_free(&b.res);
    file_bytes_free(&f);
}

/* Solves only the constraints with a non-zero weight in `weights` on the rest pose and returns
 * the largest change of any local channel. */
static double rest_change(const kiln_blob *blob, uint32_t skeleton, const float *weights, uint32_t count)
{
    rf_pose p;
    rf_pose_init(&p, blob, skeleton);
    cr_assert_eq(rf_forward(&p), KILN_OK);
    kiln_soa_xform *rest = malloc(sizeof *rest * p.soa_count);
    memcpy(rest, p.local, sizeof *rest * p.soa_count);
    kiln_rig_report rep;
    cr_assert_eq(rf_solve_ex(&p, KILN_RIG_CONSTRAINTS, NULL, 0, weights, count, &rep), KILN_OK);
    double worst = 0;
    for (uint32_t b = 0; b < p.bone_count; b++) {
        double t0[3], q0[4], s0[3], t1[3], q1[4], s1[3];
        for (unsigned k = 0; k < 10; k++) {
            double v0 = *rf_lane(rest, b, k), v1 = *rf_lane(p.local, b, k);
            if (k < 3) t0[k] = v0, t1[k] = v1;
            else if (k < 7) q0[k - 3] = v0, q1[k - 3] = v1;
            else s0[k - 7] = v0, s1[k - 7] = v1;
        }
        worst = fmax(worst, fmax(vdiff(t0, t1), fmax(qdiff(q0, q1), vdiff(s0, s1))));
    }
    free(rest);
    rf_pose_free(&p);
    return worst;
}

Test(rig_bake, maintain_offset_keeps_the_rest_pose)
{
    file_bytes f = rig_cast();
    const file_bytes *files[1] = {&f};
    baked b;
    bake_bytes(files, 1, &b);
    /* the three mo constraints (point, orient, scale) on a bone under a non-uniformly scaled
     * parent, toward a turned and scaled target */
    const float weights[7] = {1, 1, 1, 0, 0, 0, 0};
    double change = rest_change(b.blob, 0, weights, 7);
    fprintf(stderr, "rig %-44s rest change %.2e\n", "mo offsets (writer rig): solve(rest)", change);
    cr_assert(change <= 1e-5, "solving the mo constraints on the rest pose changed it by %.3g", change);
    kiln_bake_result_free(&b.res);
    file_bytes_free(&f);

    /* the sample character: head_orient has mo (weight 0.5, skip z) */
    file_bytes ch;
    cr_assert(read_file(KILN_SOURCE_DIR "/samples/character.cast", &ch), "samples/character.cast not readable");
    files[0] = &ch;
    bake_bytes(files, 1, &b);
    change = rest_change(b.blob, 0, NULL, 0);
    fprintf(stderr, "rig %-44s rest change %.2e\n", "mo offsets (samples/character): solve(rest)", change);
    cr_assert(change <= 1e-5, "character: %.3g", change);
    kiln_bake_result_free(&b.res);
    file_bytes_free(&ch);
}

Test(rig_bake, records_grouped_by_skeleton)
{
    static const cast_bone bones[3] = {{"a", -1, {0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}, 1},
                                       {"b", 0, {0, 1, 0}, {0, 0, 0, 1}, {1, 1, 1}, 1},
                                       {"c", 1, {0, 1, 0}, {0, 0, 0, 1}, {1, 1, 1}, 1}};
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    for (int model = 0; model < 2; model++) {
        uint32_t skel = w_skeleton(w, root, 10 + 10 * (uint64_t)model, bones, 3);
        for (int k = 0; k <= model; k++) w_constraint(w, skel, NULL, "pt", 102, 100);
        uint32_t ik = kiln_cast_writer_node(w, skel, KILN_CAST_ID_IKHANDLE, 0);
        kiln_cast_writer_u64(w, ik, "sb", 100);
        kiln_cast_writer_u64(w, ik, "eb", 102);
        kiln_cast_writer_u64(w, ik, "tb", 101);
    }
    file_bytes f = writer_bytes(w);
    const file_bytes *files[2] = {&f, &f};
    baked b;
    bake_bytes(files, 2, &b); /* two inputs: four skeletons */
    uint32_t n;
    for (uint32_t s = 0; s < 4; s++) {
        const kiln_blob_constraint *c = kiln_rig_constraints(b.blob, s, &n);
        cr_assert_eq(n, 1 + s % 2, "skeleton %u: %u constraints", s, n);
        for (uint32_t i = 0; i < n; i++) cr_assert(c[i].skeleton == s && c[i].order == i);
        const kiln_blob_ik_handle *h = kiln_rig_ik_handles(b.blob, s, &n);
        cr_assert_eq(n, 1);
        cr_assert(h->skeleton == s && h->chain_length == 3);
    }
    cr_assert_null(kiln_rig_constraints(b.blob, 4, &n));
    kiln_bake_result_free(&b.res);
    file_bytes_free(&f);
}

/* ---- the corpus ---------------------------------------------------------------------------------- */
typedef struct corpus_rig {
    baked b;
    file_bytes model, anim;
    kiln_anim_binding *bind;
    rf_pose pose;
} corpus_rig;

/* Bakes corpus model + animation; 0 (test skipped by the caller) when the corpus is absent. */
static int corpus_rig_open(corpus_rig *c, const char *model, const char *anim, char *dir, size_t cap)
{
    memset(c, 0, sizeof *c);
    if (!corpus_dir(dir, cap)) return 0;
    if (!corpus_read(dir, model, &c->model) || !corpus_read(dir, anim, &c->anim)) {
        file_bytes_free(&c->model);
        return 0;
    }
    const file_bytes *files[2] = {&c->model, &c->anim};
    bake_bytes(files, 2, &c->b);
    c->bind = af_bind(c->b.blob, 0, c->b.blob, 0, NULL);
    cr_assert_not_null(c->bind);
    rf_pose_init(&c->pose, c->b.blob, 0);
    return 1;
}

static void corpus_rig_close(corpus_rig *c)
{
    rf_pose_free(&c->pose);
    free(c->bind);
    kiln_bake_result_free(&c->b.res);
    file_bytes_free(&c->model), file_bytes_free(&c->anim);
}

/* Samples frame `t` seconds, composes the model matrices and solves the rig. */
static void corpus_rig_eval(corpus_rig *c, double t, kiln_rig_report *rep)
{
    kiln_sample_desc d;
    memset(&d, 0, sizeof d);
    d.binding = c->bind, d.time_s = t, d.loop = KILN_LOOP_CLAMP, d.out = c->pose.local, d.out_count = c->pose.soa_count;
    cr_assert_eq(kiln_sample(&d), KILN_OK);
    cr_assert_eq(rf_forward(&c->pose), KILN_OK);
    cr_assert_eq(rf_solve(&c->pose, rep), KILN_OK);
}

static jr_value *expected_json(const char *dir, const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "expected/%s", name);
    return corpus_json(dir, path);
}

/* The translation of a row-major 4x4 JSON matrix. */
static int json_translation(const jr_value *m, double out[3])
{
    if (jr_len(m) != 4) return 0;
    for (int r = 0; r < 3; r++) {
        out[r] = jr_num(jr_at(jr_at(m, (size_t)r), 3));
        if (!isfinite(out[r])) return 0;
    }
    return 1;
}

static int json_rotation(const jr_value *m, double out[9])
{
    if (jr_len(m) != 4) return 0;
    for (int c = 0; c < 3; c++) {
        double n = 0;
        for (int r = 0; r < 3; r++) n += pow(jr_num(jr_at(jr_at(m, (size_t)r), (size_t)c)), 2);
        for (int r = 0; r < 3; r++) out[c * 3 + r] = jr_num(jr_at(jr_at(m, (size_t)r), (size_t)c)) / sqrt(n);
    }
    return 1;
}

Test(rig_corpus, ik_polevec_end_effector_matches_blender)
{
    char dir[1024];
    corpus_rig c;
    if (!corpus_rig_open(&c, "ik_polevec_model.cast", "anim_ik_polevec.cast", dir, sizeof dir))
        cr_skip_test("corpus (ik_polevec_model.cast, anim_ik_polevec.cast) not found at %s (set KILN_SHARED_DIR): skipping", dir);
    jr_value *exp = expected_json(dir, "anim_ik_polevec.json");
    if (!exp) cr_skip_test("%s/expected/anim_ik_polevec.json not found: skipping", dir);
    uint32_t foot = kiln_blob_find_bone(c.b.blob, 0, "foot"), target = kiln_blob_find_bone(c.b.blob, 0, "ik_target");
    cr_assert(foot != KILN_BLOB_NONE && target != KILN_BLOB_NONE);
    double fps = jr_num(jr_get(exp, "fps"));
    const jr_value *frames = jr_get(exp, "frames");
    cr_assert(jr_len(frames) > 0 && fps > 0);
    double worst = 0, worst_goal = 0, worst_rot = 0;
    int worst_frame = -1;
    fprintf(stderr, "rig corpus anim_ik_polevec: foot distance to Blender per frame (m):");
    for (size_t i = 0; i < jr_len(frames); i++) {
        const jr_value *fr = jr_at(frames, i);
        double frame = jr_num(jr_get(fr, "frame")), want[3], got[3], goal[3], rb[9], rk[9];
        kiln_rig_report rep;
        corpus_rig_eval(&c, frame / fps, &rep);
        cr_assert_eq(rep.ik_solved, 1, "frame %g: the handle was not solved", frame);
        const jr_value *m = jr_get(jr_get(jr_get(fr, "bones"), "foot"), "model");
        cr_assert(json_translation(m, want) && json_rotation(m, rb), "frame %g: no foot matrix", frame);
        rf_position(&c.pose, foot, got);
        rf_position(&c.pose, target, goal);
        mrot(c.pose.model + 16 * foot, rk);
        double d = rf_dist(got, want);
        fprintf(stderr, "%s %.4f", i % 10 ? "" : "\n ", d);
        if (d > worst) worst = d, worst_frame = (int)frame;
        worst_goal = fmax(worst_goal, rf_dist(got, goal));
        worst_rot = fmax(worst_rot, mdiff(rk, rb));
    }
    fprintf(stderr, "\nrig corpus anim_ik_polevec: %zu frames, foot vs Blender max %.4f m (frame %d), foot vs goal max "
                    "%.2e m, foot rotation vs Blender (tr) max %.2e\n",
            jr_len(frames), worst, worst_frame, worst_goal, worst_rot);
    cr_assert(worst <= TOL_BLENDER, "foot %.4f m from Blender's at frame %d", worst, worst_frame);
    cr_assert(worst_goal <= TOL_REACH, "foot %.3g from its goal", worst_goal);
    jr_free(exp);
    corpus_rig_close(&c);
}

Test(rig_corpus, constraints_printed_beside_blender)
{
    char dir[1024];
    corpus_rig c;
    if (!corpus_rig_open(&c, "constraints_model.cast", "anim_constraints.cast", dir, sizeof dir))
        cr_skip_test("corpus (constraints_model.cast, anim_constraints.cast) not found at %s (set KILN_SHARED_DIR): skipping",
                     dir);
    jr_value *exp = expected_json(dir, "anim_constraints.json");
    if (!exp) cr_skip_test("%s/expected/anim_constraints.json not found: skipping", dir);
    uint32_t n;
    const kiln_blob_constraint *cn = kiln_rig_constraints(c.b.blob, 0, &n);
    cr_assert_eq(n, 7, "constraints baked: %u", n);
    double fps = jr_num(jr_get(exp, "fps"));
    const jr_value *frames = jr_get(exp, "frames");
    double dpos[7] = {0}, drot[7] = {0}, own = 0;
    for (size_t i = 0; i < jr_len(frames); i++) {
        const jr_value *fr = jr_at(frames, i);
        kiln_rig_report rep;
        corpus_rig_eval(&c, jr_num(jr_get(fr, "frame")) / fps, &rep);
        cr_assert_eq(rep.constraints_applied, 7);
        for (uint32_t k = 0; k < n; k++) {
            const char *name = kiln_blob_string(c.b.blob, kiln_blob_bones(c.b.blob, NULL)[cn[k].bone].name);
            const jr_value *m = jr_get(jr_get(jr_get(fr, "bones"), name), "model");
            double want[3], got[3], rb[9], rk[9];
            if (!json_translation(m, want) || !json_rotation(m, rb)) continue;
            rf_position(&c.pose, cn[k].bone, got);
            mrot(c.pose.model + 16 * cn[k].bone, rk);
            dpos[k] = fmax(dpos[k], rf_dist(got, want));
            drot[k] = fmax(drot[k], mdiff(rk, rb));
        }
        /* our own semantics, which do hold: unweighted, unskipped, offset-free point and orient
         * constraints put the owner on the target */
        double a[3], t[3], ra[9], rt[9];
        rf_position(&c.pose, cn[0].bone, a), rf_position(&c.pose, cn[0].target, t);
        mrot(c.pose.model + 16 * cn[2].bone, ra), mrot(c.pose.model + 16 * cn[2].target, rt);
        own = fmax(own, fmax(rf_dist(a, t), mdiff(ra, rt)));
    }
    fprintf(stderr, "rig corpus anim_constraints (Maya-like model space vs Blender's LOCAL-space copy; not asserted):\n");
    for (uint32_t k = 0; k < n; k++)
        fprintf(stderr, "  %-16s %s  max position diff %.4f m, max rotation diff %.4f\n",
                kiln_blob_string(c.b.blob, cn[k].name),
                cn[k].type == KILN_CONSTRAINT_POINT ? "pt" : cn[k].type == KILN_CONSTRAINT_ORIENT ? "or" : "sc", dpos[k],
                drot[k]);
    fprintf(stderr, "  own semantics (pt_noofs on drv_a, or_noofs as drv_b): max %.2e\n", own);
    cr_assert(own <= TOL_POSE, "offset-free constraints miss their target by %.3g", own);
    jr_free(exp);
    corpus_rig_close(&c);
}

Test(rig_corpus, maintain_offset_and_pole_bone_rigs_on_rest)
{
    char dir[1024];
    if (!corpus_dir(dir, sizeof dir)) cr_skip_test("corpus not found at %s (set KILN_SHARED_DIR): skipping", dir);
    file_bytes f;
    if (!corpus_read(dir, "constraints_model.cast", &f)) cr_skip_test("%s/constraints_model.cast not found: skipping", dir);
    const file_bytes *files[1] = {&f};
    baked b;
    bake_bytes(files, 1, &b);
    /* c_pt_mo_skipy and c_or_mo alone: with mo the rest pose is a fixed point */
    uint32_t n;
    const kiln_blob_constraint *cn = kiln_rig_constraints(b.blob, 0, &n);
    float w[8] = {0};
    for (uint32_t k = 0; k < n && k < 8; k++) {
        const char *name = kiln_blob_string(b.blob, cn[k].name);
        w[k] = strcmp(name, "c_pt_mo_skipy") == 0 || strcmp(name, "c_or_mo") == 0;
    }
    double change = rest_change(b.blob, 0, w, n);
    fprintf(stderr, "rig %-44s rest change %.2e\n", "mo offsets (constraints_model): solve(rest)", change);
    cr_assert(change <= 1e-5, "%.3g", change);
    kiln_bake_result_free(&b.res);
    file_bytes_free(&f);

    /* the pole (twist) bone rig: the foot reaches the offset goal on the rest pose */
    if (!corpus_read(dir, "ik_polebone_model.cast", &f)) cr_skip_test("%s/ik_polebone_model.cast not found: skipping", dir);
    bake_bytes(files, 1, &b);
    rf_pose p;
    rf_pose_init(&p, b.blob, 0);
    cr_assert_eq(rf_forward(&p), KILN_OK);
    kiln_rig_report rep;
    cr_assert_eq(rf_solve(&p, &rep), KILN_OK);
    cr_assert_eq(rep.ik_solved, 1);
    fprintf(stderr, "rig %-44s end error %.2e\n", "ik_polebone_model on rest (to = 1 cm)", rep.ik_max_error_m);
    cr_assert(rep.ik_max_error_m <= TOL_REACH, "foot %.3g from the goal", rep.ik_max_error_m);
    rf_pose_free(&p);
    kiln_bake_result_free(&b.res);
    file_bytes_free(&f);
}
