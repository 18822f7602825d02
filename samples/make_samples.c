/* make_samples - writes the bundled sample assets (character, its walk cycle, a small world).
 *
 *   kiln_make_samples <dir>           writes character.cast, character_walk.cast, world.cast
 *   kiln_make_samples --check <dir>   exits 1 unless the files in <dir> match byte for byte
 *
 * Everything is computed from fixed parameters in double precision and rounded to float on
 * output, so every run produces the same bytes. The sine and cosine are local series rather
 * than libm's, whose last bits vary between C libraries; values that cancel to nearly zero are
 * snapped to zero (see to_float), so fused multiply-add or vectorised code does not change
 * the output either (checked with gcc and clang, -O0 to -O3, with and without FMA). Only the
 * public Cast writer API is used.
 */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/bake/cast_write.h"

/* ---- deterministic math ----------------------------------------------------------------- */

#define PI 3.14159265358979323846

static double sample_sin(double x)
{
    while (x > PI) x -= 2.0 * PI;
    while (x < -PI) x += 2.0 * PI;
    double term = x, sum = x;
    for (int k = 1; k < 16; k++) {
        term *= -x * x / ((2.0 * k) * (2.0 * k + 1.0));
        sum += term;
    }
    return sum;
}

static double sample_cos(double x)
{
    while (x > PI) x -= 2.0 * PI;
    while (x < -PI) x += 2.0 * PI;
    double term = 1.0, sum = 1.0;
    for (int k = 1; k < 16; k++) {
        term *= -x * x / ((2.0 * k - 1.0) * (2.0 * k));
        sum += term;
    }
    return sum;
}
static double deg(double d) { return d * PI / 180.0; }

typedef struct quat { double x, y, z, w; } quat;
typedef struct vec3 { double x, y, z; } vec3;

static quat quat_axis_angle(double ax, double ay, double az, double radians)
{
    double s = sample_sin(0.5 * radians);
    quat q = {ax * s + 0.0, ay * s + 0.0, az * s + 0.0, sample_cos(0.5 * radians)}; /* no -0.0 */
    return q;
}

/* Hamilton product a * b: apply b first, then a. */
static quat quat_mul(quat a, quat b)
{
    quat q = {
        a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
    };
    return q;
}

static vec3 quat_rotate(quat q, vec3 v)
{
    quat p = {v.x, v.y, v.z, 0.0};
    quat c = {-q.x, -q.y, -q.z, q.w};
    quat r = quat_mul(quat_mul(q, p), c);
    vec3 out = {r.x, r.y, r.z};
    return out;
}

/* Values that cancel to (nearly) zero are the ones whose last bits depend on how a compiler
 * schedules the arithmetic (vectorised code may fuse operations), so they are snapped to an
 * exact zero; elsewhere a last-bit difference in double disappears when rounding to float. */
static float to_float(double x)
{
    return (float)(x > -1e-9 && x < 1e-9 ? 0.0 : x);
}

static void put3(float *dst, double x, double y, double z)
{
    dst[0] = to_float(x);
    dst[1] = to_float(y);
    dst[2] = to_float(z);
}

static void put_quat(float *dst, quat q)
{
    dst[0] = to_float(q.x);
    dst[1] = to_float(q.y);
    dst[2] = to_float(q.z);
    dst[3] = to_float(q.w);
}

/* Node hashes count up from the value cast.py starts at, per file. */
typedef struct sample_file {
    kiln_cast_writer *w;
    uint64_t          next_hash;
} sample_file;

static void sample_begin(sample_file *f)
{
    f->w = kiln_cast_writer_create(NULL);
    f->next_hash = 0x534E495752545250ull;
}

static uint32_t sample_node(sample_file *f, uint32_t parent, uint32_t id, uint64_t *hash_out)
{
    uint64_t hash = f->next_hash++;
    if (hash_out) *hash_out = hash;
    return kiln_cast_writer_node(f->w, parent, id, hash);
}

static void vec3_prop(kiln_cast_writer *w, uint32_t node, const char *name, double x, double y, double z)
{
    float v[3];
    put3(v, x, y, z);
    kiln_cast_writer_floats(w, node, name, KILN_CAST_TYPE_VEC3, v, 1);
}

static void quat_prop(kiln_cast_writer *w, uint32_t node, const char *name, quat q)
{
    float v[4];
    put_quat(v, q);
    kiln_cast_writer_floats(w, node, name, KILN_CAST_TYPE_VEC4, v, 1);
}

static void float_prop(kiln_cast_writer *w, uint32_t node, const char *name, double value)
{
    float v = to_float(value);
    kiln_cast_writer_floats(w, node, name, KILN_CAST_TYPE_FLOAT, &v, 1);
}

/* ---- the character ---------------------------------------------------------------------- */

enum { BONE_ROOT, BONE_PELVIS, BONE_SPINE, BONE_CHEST, BONE_NECK, BONE_HEAD, BONE_IK_TARGET, BONE_HEAD_DRIVER,
       BONE_COUNT };

typedef struct bone_def {
    const char *name;
    int         parent;
    double      lp[3];
    double      tilt_deg; /* rest rotation about X: a slight S-curve along the spine */
} bone_def;

static const bone_def bones[BONE_COUNT] = {
    {"root",        -1, {0.0, 0.0, 0.0},    0.0},
    {"pelvis",       0, {0.0, 0.95, 0.0},  -3.0},
    {"spine",        1, {0.0, 0.12, 0.0},   5.0},
    {"chest",        2, {0.0, 0.20, 0.0},  -4.0},
    {"neck",         3, {0.0, 0.22, 0.0},   8.0},
    {"head",         4, {0.0, 0.10, 0.0},  -6.0},
    {"ik_target",    0, {0.0, 1.45, 0.08},  0.0},
    {"head_driver",  0, {0.0, 1.62, 0.60},  0.0},
};

static quat bone_rest_rotation(int b) { return quat_axis_angle(1, 0, 0, deg(bones[b].tilt_deg)); }

/* The capsule's surface: rings from the pelvis to the top of the head. */
#define RINGS    20
#define SEGMENTS 16
#define COLUMNS  (SEGMENTS + 1)           /* the seam column is duplicated for the UVs */
#define VERTS    (RINGS * COLUMNS + 2)    /* plus the two cap centres */
#define TRIS     ((RINGS - 1) * SEGMENTS * 2 + 2 * SEGMENTS)
#define MAX_INF  4
#define BODY_Y0  0.85
#define BODY_Y1  1.80

/* Radius along the body height (torso, neck, head), linearly interpolated. */
static double body_radius(double y)
{
    static const double profile[][2] = {
        {0.85, 0.03}, {0.90, 0.13}, {1.00, 0.16}, {1.20, 0.17}, {1.33, 0.15}, {1.42, 0.07},
        {1.52, 0.06}, {1.58, 0.10}, {1.68, 0.11}, {1.76, 0.08}, {1.80, 0.03},
    };
    const size_t n = sizeof profile / sizeof profile[0];
    if (y <= profile[0][0]) return profile[0][1];
    for (size_t i = 1; i < n; i++) {
        if (y <= profile[i][0]) {
            double t = (y - profile[i - 1][0]) / (profile[i][0] - profile[i - 1][0]);
            return profile[i - 1][1] + t * (profile[i][1] - profile[i - 1][1]);
        }
    }
    return profile[n - 1][1];
}

typedef struct body_mesh {
    float    vp[VERTS * 3], vn[VERTS * 3], vt[VERTS * 3], u0[VERTS * 2], u1[VERTS * 2];
    uint32_t c0[VERTS];
    uint32_t wb[VERTS * MAX_INF];
    float    wv[VERTS * MAX_INF];
    uint32_t f[TRIS * 3];
} body_mesh;

/* Up to MAX_INF bones of the spine chain, weighted by a tent falloff around each bone's
 * segment centre, normalised; unused slots are bone 0 with weight 0, as exporters pad them. */
static void body_weights(const double centre_y[BONE_COUNT], double y, uint32_t *wb, float *wv)
{
    double w[BONE_COUNT] = {0}, picked[MAX_INF] = {0};
    double sum = 0.0;
    for (int b = BONE_PELVIS; b <= BONE_HEAD; b++) {
        double d = y - centre_y[b];
        w[b] = 1.0 - (d < 0 ? -d : d) / 0.22;
        if (w[b] < 0) w[b] = 0;
    }
    for (int slot = 0; slot < MAX_INF; slot++) {
        int best = -1;
        for (int b = 0; b < BONE_COUNT; b++) if (w[b] > 0 && (best < 0 || w[b] > w[best])) best = b;
        wb[slot] = best < 0 ? 0 : (uint32_t)best;
        if (best >= 0) {
            picked[slot] = w[best];
            sum += w[best];
            w[best] = 0;
        }
    }
    for (int slot = 0; slot < MAX_INF; slot++) wv[slot] = sum > 0 ? to_float(picked[slot] / sum) : 0.0f;
}

static void body_vertex(body_mesh *m, int v, double x, double y, double z, vec3 n, vec3 t, double u, double vv)
{
    double h = (y - BODY_Y0) / (BODY_Y1 - BODY_Y0);
    put3(m->vp + 3 * v, x, y, z);
    put3(m->vn + 3 * v, n.x, n.y, n.z);
    put3(m->vt + 3 * v, t.x, t.y, t.z);
    m->u0[2 * v] = to_float(u);
    m->u0[2 * v + 1] = to_float(vv);
    m->u1[2 * v] = to_float(0.5 + x * 2.0);  /* front projection for a lightmap-style layer */
    m->u1[2 * v + 1] = to_float(1.0 - h);
    uint32_t r = (uint32_t)(255.0 * h + 0.5), g = 128u, b = 255u - r, a = 255u;
    m->c0[v] = r | g << 8 | b << 16 | a << 24; /* bytes R,G,B,A in the file */
}

static void body_build(body_mesh *m, const double centre_y[BONE_COUNT])
{
    for (int i = 0; i < RINGS; i++) {
        double y = BODY_Y0 + (BODY_Y1 - BODY_Y0) * (i + 0.5) / RINGS;
        double r = body_radius(y);
        double slope = (body_radius(y + 0.005) - body_radius(y - 0.005)) / 0.01;
        for (int j = 0; j < COLUMNS; j++) {
            double a = 2.0 * PI * j / SEGMENTS, c = sample_cos(a), s = sample_sin(a);
            double len = sqrt(1.0 + slope * slope);
            vec3 n = {c / len, -slope / len, s / len};
            vec3 t = {0.0 - s, 0.0, c};
            int v = i * COLUMNS + j;
            body_vertex(m, v, r * c, y, r * s, n, t, (double)j / SEGMENTS, 1.0 - (y - BODY_Y0) / (BODY_Y1 - BODY_Y0));
            body_weights(centre_y, y, m->wb + MAX_INF * v, m->wv + MAX_INF * v);
        }
    }
    const int bottom = RINGS * COLUMNS, top = bottom + 1;
    vec3 down = {0, -1, 0}, up = {0, 1, 0}, side = {1, 0, 0};
    body_vertex(m, bottom, 0.0, BODY_Y0, 0.0, down, side, 0.5, 1.0);
    body_vertex(m, top, 0.0, BODY_Y1, 0.0, up, side, 0.5, 0.0);
    body_weights(centre_y, BODY_Y0, m->wb + MAX_INF * bottom, m->wv + MAX_INF * bottom);
    body_weights(centre_y, BODY_Y1, m->wb + MAX_INF * top, m->wv + MAX_INF * top);

    /* Counter-clockwise seen from outside: the angle runs from +X towards +Z. */
    uint32_t *f = m->f;
    for (int i = 0; i + 1 < RINGS; i++) {
        for (int j = 0; j < SEGMENTS; j++) {
            uint32_t a = (uint32_t)(i * COLUMNS + j), b = a + 1, d = a + COLUMNS, c = d + 1;
            *f++ = a; *f++ = d; *f++ = c;
            *f++ = a; *f++ = c; *f++ = b;
        }
    }
    for (int j = 0; j < SEGMENTS; j++) {
        uint32_t lo = (uint32_t)j, hi = (uint32_t)((RINGS - 1) * COLUMNS + j);
        *f++ = (uint32_t)bottom; *f++ = lo; *f++ = lo + 1;
        *f++ = (uint32_t)top; *f++ = hi + 1; *f++ = hi;
    }
}

static void character_skeleton(sample_file *sf, uint32_t model, uint64_t hashes[BONE_COUNT], double centre_y[BONE_COUNT])
{
    kiln_cast_writer *w = sf->w;
    uint32_t skel = sample_node(sf, model, KILN_CAST_ID_SKELETON, NULL);
    quat wr[BONE_COUNT];
    vec3 wp[BONE_COUNT];
    for (int b = 0; b < BONE_COUNT; b++) {
        const bone_def *d = &bones[b];
        quat lr = bone_rest_rotation(b);
        vec3 lp = {d->lp[0], d->lp[1], d->lp[2]};
        if (d->parent < 0) {
            wr[b] = lr;
            wp[b] = lp;
        } else {
            vec3 off = quat_rotate(wr[d->parent], lp);
            wr[b] = quat_mul(wr[d->parent], lr);
            wp[b].x = wp[d->parent].x + off.x;
            wp[b].y = wp[d->parent].y + off.y;
            wp[b].z = wp[d->parent].z + off.z;
        }
        uint32_t bone = sample_node(sf, skel, KILN_CAST_ID_BONE, &hashes[b]);
        kiln_cast_writer_string(w, bone, "n", d->name);
        uint32_t parent = (uint32_t)(int32_t)d->parent; /* -1 is stored as 0xFFFFFFFF */
        kiln_cast_writer_prop(w, bone, "p", KILN_CAST_TYPE_INT, &parent, 1);
        kiln_cast_writer_byte(w, bone, "ssc", 1);
        vec3_prop(w, bone, "lp", lp.x, lp.y, lp.z);
        quat_prop(w, bone, "lr", lr);
        vec3_prop(w, bone, "wp", wp[b].x, wp[b].y, wp[b].z);
        quat_prop(w, bone, "wr", wr[b]);
        vec3_prop(w, bone, "s", 1.0, 1.0, 1.0);
    }
    /* Each spine bone owns the body from its joint to the next one; the head its top part. */
    for (int b = BONE_PELVIS; b < BONE_HEAD; b++) centre_y[b] = 0.5 * (wp[b].y + wp[b + 1].y);
    centre_y[BONE_HEAD] = wp[BONE_HEAD].y + 0.12;

    uint32_t ik = sample_node(sf, skel, KILN_CAST_ID_IKHANDLE, NULL);
    kiln_cast_writer_string(w, ik, "n", "spine_ik");
    kiln_cast_writer_u64(w, ik, "sb", hashes[BONE_SPINE]);
    kiln_cast_writer_u64(w, ik, "eb", hashes[BONE_NECK]);
    kiln_cast_writer_u64(w, ik, "tb", hashes[BONE_IK_TARGET]);
    vec3_prop(w, ik, "to", 0.0, 0.02, 0.0);
    kiln_cast_writer_byte(w, ik, "tr", 0);

    uint32_t cn = sample_node(sf, skel, KILN_CAST_ID_CONSTRAINT, NULL);
    kiln_cast_writer_string(w, cn, "n", "head_orient");
    kiln_cast_writer_string(w, cn, "ct", "or");
    kiln_cast_writer_u64(w, cn, "cb", hashes[BONE_HEAD]);
    kiln_cast_writer_u64(w, cn, "tb", hashes[BONE_HEAD_DRIVER]);
    kiln_cast_writer_byte(w, cn, "mo", 1);
    float_prop(w, cn, "wt", 0.5);
    kiln_cast_writer_byte(w, cn, "sz", 1);
}

static uint64_t character_material(sample_file *sf, uint32_t model)
{
    kiln_cast_writer *w = sf->w;
    uint64_t mat_hash, albedo_hash, normal_hash, spec_hash;
    uint32_t mat = sample_node(sf, model, KILN_CAST_ID_MATERIAL, &mat_hash);
    uint32_t albedo = sample_node(sf, mat, KILN_CAST_ID_FILE, &albedo_hash);
    uint32_t normal = sample_node(sf, mat, KILN_CAST_ID_FILE, &normal_hash);
    uint32_t spec = sample_node(sf, mat, KILN_CAST_ID_COLOR, &spec_hash);
    kiln_cast_writer_string(w, mat, "n", "body_mat");
    kiln_cast_writer_string(w, mat, "t", "pbr");
    kiln_cast_writer_u64(w, mat, "albedo", albedo_hash);
    kiln_cast_writer_u64(w, mat, "normal", normal_hash);
    kiln_cast_writer_u64(w, mat, "specular", spec_hash);
    kiln_cast_writer_string(w, albedo, "p", "textures/character_albedo.png");
    kiln_cast_writer_string(w, normal, "p", "textures/character_normal.png");
    kiln_cast_writer_string(w, spec, "n", "body_specular");
    kiln_cast_writer_string(w, spec, "cs", "linear");
    const float rgba[4] = {0.04f, 0.04f, 0.04f, 1.0f};
    kiln_cast_writer_floats(w, spec, "rgba", KILN_CAST_TYPE_VEC4, rgba, 1);
    return mat_hash;
}

static uint64_t character_mesh(sample_file *sf, uint32_t model, const body_mesh *m, uint64_t material)
{
    kiln_cast_writer *w = sf->w;
    uint64_t hash;
    uint32_t mesh = sample_node(sf, model, KILN_CAST_ID_MESH, &hash);
    const uint32_t one = 1, two = 2, mi = MAX_INF;
    kiln_cast_writer_string(w, mesh, "n", "body");
    kiln_cast_writer_floats(w, mesh, "vp", KILN_CAST_TYPE_VEC3, m->vp, VERTS);
    kiln_cast_writer_floats(w, mesh, "vn", KILN_CAST_TYPE_VEC3, m->vn, VERTS);
    kiln_cast_writer_floats(w, mesh, "vt", KILN_CAST_TYPE_VEC3, m->vt, VERTS);
    kiln_cast_writer_ints(w, mesh, "ul", &two, 1);
    kiln_cast_writer_floats(w, mesh, "u0", KILN_CAST_TYPE_VEC2, m->u0, VERTS);
    kiln_cast_writer_floats(w, mesh, "u1", KILN_CAST_TYPE_VEC2, m->u1, VERTS);
    kiln_cast_writer_ints(w, mesh, "cl", &one, 1);
    kiln_cast_writer_prop(w, mesh, "c0", KILN_CAST_TYPE_INT, m->c0, VERTS); /* packed RGBA stays i */
    kiln_cast_writer_ints(w, mesh, "mi", &mi, 1);
    kiln_cast_writer_ints(w, mesh, "wb", m->wb, VERTS * MAX_INF);
    kiln_cast_writer_floats(w, mesh, "wv", KILN_CAST_TYPE_FLOAT, m->wv, VERTS * MAX_INF);
    kiln_cast_writer_ints(w, mesh, "f", m->f, TRIS * 3);
    kiln_cast_writer_string(w, mesh, "sm", "linear");
    kiln_cast_writer_u64(w, mesh, "m", material);
    return hash;
}

/* Chest vertices pushed out a little: absolute target positions, as the format stores them. */
static void character_blendshape(sample_file *sf, uint32_t model, const body_mesh *m, uint64_t mesh)
{
    static uint32_t vi[VERTS];
    static float vp[VERTS * 3];
    uint32_t count = 0;
    for (uint32_t v = 0; v < RINGS * COLUMNS; v++) {
        double y = m->vp[3 * v + 1];
        if (y < 1.05 || y > 1.33) continue;
        vi[count] = v;
        put3(vp + 3 * count, m->vp[3 * v] * 1.06, y + 0.005, m->vp[3 * v + 2] * 1.08);
        count++;
    }
    uint32_t shape = sample_node(sf, model, KILN_CAST_ID_BLENDSHAPE, NULL);
    kiln_cast_writer_string(sf->w, shape, "n", "chest_breathe");
    kiln_cast_writer_u64(sf->w, shape, "b", mesh);
    kiln_cast_writer_ints(sf->w, shape, "vi", vi, count);
    kiln_cast_writer_floats(sf->w, shape, "vp", KILN_CAST_TYPE_VEC3, vp, count);
    float_prop(sf->w, shape, "ts", 1.0);
}

static void metadata(sample_file *sf, uint32_t root, const char *scene_root)
{
    uint32_t meta = sample_node(sf, root, KILN_CAST_ID_METADATA, NULL);
    kiln_cast_writer_string(sf->w, meta, "a", "Kiln samples");
    kiln_cast_writer_string(sf->w, meta, "s", "kiln samples");
    kiln_cast_writer_string(sf->w, meta, "up", "y");
    if (scene_root) kiln_cast_writer_string(sf->w, meta, "sr", scene_root);
}

static kiln_cast_writer *build_character(void)
{
    static body_mesh mesh; /* about 40 KB: kept off the stack */
    sample_file sf;
    sample_begin(&sf);
    if (!sf.w) return NULL;
    uint32_t root = sample_node(&sf, KILN_CAST_NONE, KILN_CAST_ID_ROOT, NULL);
    metadata(&sf, root, NULL);
    uint32_t model = sample_node(&sf, root, KILN_CAST_ID_MODEL, NULL);
    kiln_cast_writer_string(sf.w, model, "n", "character");
    vec3_prop(sf.w, model, "p", 0.0, 0.0, 0.0);
    quat identity = {0, 0, 0, 1};
    quat_prop(sf.w, model, "r", identity);
    vec3_prop(sf.w, model, "s", 1.0, 1.0, 1.0);

    uint64_t bone_hashes[BONE_COUNT];
    double centre_y[BONE_COUNT] = {0};
    character_skeleton(&sf, model, bone_hashes, centre_y);
    uint64_t material = character_material(&sf, model);
    memset(&mesh, 0, sizeof mesh);
    body_build(&mesh, centre_y);
    uint64_t mesh_hash = character_mesh(&sf, model, &mesh, material);
    character_blendshape(&sf, model, &mesh, mesh_hash);
    return sf.w;
}

/* ---- the walk cycle --------------------------------------------------------------------- */

#define WALK_FRAMES 30 /* one second at 30 fps; the last key repeats the first pose */
#define WALK_STEP   3
#define WALK_KEYS   (WALK_FRAMES / WALK_STEP + 1)

typedef double (*scalar_fn)(double phase);
typedef quat (*rotation_fn)(double phase);

static double walk_phase(int key) { return 2.0 * PI * key * WALK_STEP / WALK_FRAMES; }

static uint32_t walk_curve(sample_file *sf, uint32_t anim, const char *bone, const char *channel)
{
    uint32_t kb[WALK_KEYS];
    for (int k = 0; k < WALK_KEYS; k++) kb[k] = (uint32_t)(k * WALK_STEP);
    uint32_t curve = sample_node(sf, anim, KILN_CAST_ID_CURVE, NULL);
    kiln_cast_writer_string(sf->w, curve, "nn", bone);
    kiln_cast_writer_string(sf->w, curve, "kp", channel);
    kiln_cast_writer_ints(sf->w, curve, "kb", kb, WALK_KEYS);
    return curve;
}

static void walk_scalar(sample_file *sf, uint32_t anim, const char *bone, const char *channel, const char *mode,
                        scalar_fn fn)
{
    float kv[WALK_KEYS];
    for (int k = 0; k < WALK_KEYS; k++) kv[k] = to_float(fn(walk_phase(k)));
    uint32_t curve = walk_curve(sf, anim, bone, channel);
    kiln_cast_writer_floats(sf->w, curve, "kv", KILN_CAST_TYPE_FLOAT, kv, WALK_KEYS);
    kiln_cast_writer_string(sf->w, curve, "m", mode);
}

static void walk_rotation(sample_file *sf, uint32_t anim, const char *bone, const char *mode, rotation_fn fn,
                          double additive_weight)
{
    float kv[WALK_KEYS * 4];
    for (int k = 0; k < WALK_KEYS; k++) put_quat(kv + 4 * k, fn(walk_phase(k)));
    uint32_t curve = walk_curve(sf, anim, bone, "rq");
    kiln_cast_writer_floats(sf->w, curve, "kv", KILN_CAST_TYPE_VEC4, kv, WALK_KEYS);
    kiln_cast_writer_string(sf->w, curve, "m", mode);
    if (additive_weight > 0) float_prop(sf->w, curve, "ab", additive_weight);
}

/* Root sway and bob (absolute), in metres. */
static double root_tx(double ph) { return 0.02 * sample_sin(ph); }
static double root_ty(double ph) { (void)ph; return 0.0; }
static double root_tz(double ph) { return 0.015 * sample_sin(2.0 * ph); }
static double pelvis_ty(double ph) { return bones[BONE_PELVIS].lp[1] + 0.025 * sample_cos(2.0 * ph); }
/* Absolute rotation: the rest pose turned about Y. */
static quat pelvis_rq(double ph)
{
    return quat_mul(bone_rest_rotation(BONE_PELVIS), quat_axis_angle(0, 1, 0, deg(6.0) * sample_sin(ph)));
}
/* Relative rotations are deltas applied in the bone's rest frame. */
static quat spine_rq(double ph) { return quat_axis_angle(0, 1, 0, deg(-4.0) * sample_sin(ph)); }
static quat neck_rq(double ph) { return quat_axis_angle(0, 1, 0, deg(3.0) * sample_sin(ph)); }
static quat head_rq(double ph) { return quat_axis_angle(1, 0, 0, deg(2.0) * sample_sin(2.0 * ph)); }
/* Additive layer on the chest: a small nod and breathing scale factors (1 = unchanged). */
static quat chest_rq(double ph) { return quat_axis_angle(1, 0, 0, deg(2.0) * sample_sin(2.0 * ph)); }
static double breath(double ph) { return 0.5 - 0.5 * sample_cos(ph); }
static double chest_sxz(double ph) { return 1.0 + 0.02 * breath(ph); }
static double chest_sy(double ph) { return 1.0 + 0.005 * breath(ph); }
static double head_s(double ph) { (void)ph; return 1.0; }
static double head_sy(double ph) { return 1.0 + 0.01 * breath(2.0 * ph); }

static void walk_notification(sample_file *sf, uint32_t anim, const char *name, uint32_t frame)
{
    uint32_t track = sample_node(sf, anim, KILN_CAST_ID_NOTIFICATION_TRACK, NULL);
    kiln_cast_writer_string(sf->w, track, "n", name);
    kiln_cast_writer_ints(sf->w, track, "kb", &frame, 1);
}

static kiln_cast_writer *build_walk(void)
{
    sample_file sf;
    sample_begin(&sf);
    if (!sf.w) return NULL;
    kiln_cast_writer *w = sf.w;
    uint32_t root = sample_node(&sf, KILN_CAST_NONE, KILN_CAST_ID_ROOT, NULL);
    uint32_t anim = sample_node(&sf, root, KILN_CAST_ID_ANIMATION, NULL);
    kiln_cast_writer_string(w, anim, "n", "walk");
    float_prop(w, anim, "fr", 30.0);
    kiln_cast_writer_byte(w, anim, "lo", 1);

    walk_scalar(&sf, anim, "root", "tx", "absolute", root_tx);
    walk_scalar(&sf, anim, "root", "ty", "absolute", root_ty);
    walk_scalar(&sf, anim, "root", "tz", "absolute", root_tz);
    walk_scalar(&sf, anim, "pelvis", "ty", "absolute", pelvis_ty);
    walk_rotation(&sf, anim, "pelvis", "absolute", pelvis_rq, 0);
    walk_rotation(&sf, anim, "spine", "relative", spine_rq, 0);
    walk_rotation(&sf, anim, "chest", "additive", chest_rq, 0.5);
    walk_scalar(&sf, anim, "chest", "sx", "additive", chest_sxz);
    walk_scalar(&sf, anim, "chest", "sy", "additive", chest_sy);
    walk_scalar(&sf, anim, "chest", "sz", "additive", chest_sxz);
    walk_rotation(&sf, anim, "neck", "relative", neck_rq, 0);
    walk_rotation(&sf, anim, "head", "relative", head_rq, 0);
    walk_scalar(&sf, anim, "head", "sx", "absolute", head_s);
    walk_scalar(&sf, anim, "head", "sy", "absolute", head_sy);
    walk_scalar(&sf, anim, "head", "sz", "absolute", head_s);

    /* Rotation curves from the neck down are deltas. The neck and head curves already say
     * "relative", so readers that apply the override to the named bone and those that apply
     * it only below it agree. */
    uint32_t cmov = sample_node(&sf, anim, KILN_CAST_ID_CURVE_MODE_OVERRIDE, NULL);
    kiln_cast_writer_string(w, cmov, "nn", "neck");
    kiln_cast_writer_string(w, cmov, "m", "relative");
    kiln_cast_writer_byte(w, cmov, "ot", 0);
    kiln_cast_writer_byte(w, cmov, "or", 1);
    kiln_cast_writer_byte(w, cmov, "os", 0);

    walk_scalar(&sf, anim, "chest_breathe", "bs", "absolute", breath);
    const uint32_t vb_frames[2] = {0, WALK_FRAMES}, vb_values[2] = {1, 1};
    uint32_t vb = sample_node(&sf, anim, KILN_CAST_ID_CURVE, NULL);
    kiln_cast_writer_string(w, vb, "nn", "body");
    kiln_cast_writer_string(w, vb, "kp", "vb");
    kiln_cast_writer_ints(w, vb, "kb", vb_frames, 2);
    kiln_cast_writer_ints(w, vb, "kv", vb_values, 2);
    kiln_cast_writer_string(w, vb, "m", "absolute");

    walk_notification(&sf, anim, "footstep_left", 0);
    walk_notification(&sf, anim, "footstep_right", WALK_FRAMES / 2);
    return w;
}

/* ---- the world -------------------------------------------------------------------------- */

static kiln_cast_writer *build_world(void)
{
    static const struct { const char *name; double p[3]; double yaw_deg; double scale; } placements[] = {
        {"npc_0", {0.0, 0.0, 0.0}, 0.0, 1.0},
        {"npc_1", {2.0, 0.0, 1.0}, 90.0, 1.0},
        {"npc_2", {-1.5, 0.0, 3.0}, -160.0, 0.9},
        {"npc_3", {4.0, 0.5, -2.0}, -45.0, 1.1},
    };
    sample_file sf;
    sample_begin(&sf);
    if (!sf.w) return NULL;
    uint32_t root = sample_node(&sf, KILN_CAST_NONE, KILN_CAST_ID_ROOT, NULL);
    metadata(&sf, root, ".");
    for (size_t i = 0; i < sizeof placements / sizeof placements[0]; i++) {
        uint64_t file_hash;
        uint32_t inst = sample_node(&sf, root, KILN_CAST_ID_INSTANCE, NULL);
        uint32_t file = sample_node(&sf, inst, KILN_CAST_ID_FILE, &file_hash);
        kiln_cast_writer_string(sf.w, inst, "n", placements[i].name);
        kiln_cast_writer_u64(sf.w, inst, "rf", file_hash);
        vec3_prop(sf.w, inst, "p", placements[i].p[0], placements[i].p[1], placements[i].p[2]);
        quat_prop(sf.w, inst, "r", quat_axis_angle(0, 1, 0, deg(placements[i].yaw_deg)));
        double s = placements[i].scale;
        vec3_prop(sf.w, inst, "s", s, s, s);
        kiln_cast_writer_string(sf.w, file, "p", "character.cast");
    }
    return sf.w;
}

/* ---- driver ----------------------------------------------------------------------------- */

typedef struct sample_def {
    const char *file;
    kiln_cast_writer *(*build)(void);
} sample_def;

static const sample_def samples[] = {
    {"character.cast", build_character},
    {"character_walk.cast", build_walk},
    {"world.cast", build_world},
};

/* 1 when `path` holds exactly the writer's output. */
static int matches_file(const kiln_cast_writer *w, const char *path)
{
    uint64_t size = kiln_cast_writer_size(w);
    unsigned char *want = malloc(size ? (size_t)size : 1);
    unsigned char *have = malloc((size_t)size + 1);
    FILE *f = fopen(path, "rb");
    int same = want && have && f && kiln_cast_writer_write(w, want, size) == KILN_OK &&
               fread(have, 1, (size_t)size + 1, f) == size && memcmp(want, have, (size_t)size) == 0;
    if (f) fclose(f);
    free(want);
    free(have);
    return same;
}

int main(int argc, char **argv)
{
    int check = argc == 3 && strcmp(argv[1], "--check") == 0;
    if (argc != 2 && !check) {
        fprintf(stderr, "usage: %s <dir>\n       %s --check <dir>\n", argv[0], argv[0]);
        return 2;
    }
    const char *dir = argv[argc - 1];
    int failures = 0;
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, samples[i].file);
        kiln_cast_writer *w = samples[i].build();
        kiln_diag err;
        memset(&err, 0, sizeof err);
        if (!w) {
            fprintf(stderr, "%s: out of memory\n", path);
            failures++;
        } else if (check) {
            if (!matches_file(w, path)) {
                fprintf(stderr, "%s: differs from what make_samples generates\n", path);
                failures++;
            }
        } else if (kiln_cast_writer_save(w, path, &err) != KILN_OK) {
            fprintf(stderr, "%s: %s\n", path, err.message);
            failures++;
        } else {
            printf("%s: %llu bytes\n", path, (unsigned long long)kiln_cast_writer_size(w));
        }
        kiln_cast_writer_destroy(w);
    }
    return failures ? 1 : 0;
}
