/* Cast parse throughput: the largest corpus file and a ~100 MB file made with the writer.
 *
 * Cases (one JSON line each):
 *   parse        kiln_cast_parse alone (node and property tables, hash index)
 *   parse_scene  parse plus every typed accessor over every node (what the baker and
 *                `kiln inspect` do before baking: defaults, references, face index checks)
 * Throughput is input bytes / best wall time over the iterations, in GB/s (1e9 bytes).
 */
#include <stdint.h>

#include "bench_util.h"
#include "kiln/bake/cast.h"
#include "kiln/bake/cast_scene.h"
#include "kiln/bake/cast_write.h"

static volatile uint64_t bench_sink;

static void walk_scene(const kiln_cast_doc *doc)
{
    uint64_t acc = 0;
    for (uint32_t n = 0; n < kiln_cast_node_count(doc); n++) {
        const kiln_cast_node *node = kiln_cast_node_at(doc, n);
        if (node->flags & KILN_CAST_NODE_OPAQUE) continue;
        union {
            kiln_cast_model model; kiln_cast_mesh mesh; kiln_cast_hair hair; kiln_cast_blend_shape shape;
            kiln_cast_skeleton skel; kiln_cast_bone bone; kiln_cast_ik_handle ik; kiln_cast_constraint cnst;
            kiln_cast_animation anim; kiln_cast_curve curve; kiln_cast_mode_override cmov;
            kiln_cast_notification note; kiln_cast_material mat; kiln_cast_file file; kiln_cast_color color;
            kiln_cast_instance inst; kiln_cast_metadata meta;
        } u;
        kiln_result r = KILN_OK;
        switch (node->id) {
        case KILN_CAST_ID_MODEL: r = kiln_cast_get_model(doc, n, &u.model, NULL); break;
        case KILN_CAST_ID_MESH: r = kiln_cast_get_mesh(doc, n, &u.mesh, NULL); acc += u.mesh.face_count; break;
        case KILN_CAST_ID_HAIR: r = kiln_cast_get_hair(doc, n, &u.hair, NULL); break;
        case KILN_CAST_ID_BLENDSHAPE: r = kiln_cast_get_blend_shape(doc, n, &u.shape, NULL); break;
        case KILN_CAST_ID_SKELETON: r = kiln_cast_get_skeleton(doc, n, &u.skel, NULL); break;
        case KILN_CAST_ID_BONE: r = kiln_cast_get_bone(doc, n, &u.bone, NULL); break;
        case KILN_CAST_ID_IKHANDLE: r = kiln_cast_get_ik_handle(doc, n, &u.ik, NULL); break;
        case KILN_CAST_ID_CONSTRAINT: r = kiln_cast_get_constraint(doc, n, &u.cnst, NULL); break;
        case KILN_CAST_ID_ANIMATION: r = kiln_cast_get_animation(doc, n, &u.anim, NULL); break;
        case KILN_CAST_ID_CURVE: r = kiln_cast_get_curve(doc, n, &u.curve, NULL); acc += u.curve.key_count; break;
        case KILN_CAST_ID_CURVE_MODE_OVERRIDE: r = kiln_cast_get_mode_override(doc, n, &u.cmov, NULL); break;
        case KILN_CAST_ID_NOTIFICATION_TRACK: r = kiln_cast_get_notification(doc, n, &u.note, NULL); break;
        case KILN_CAST_ID_MATERIAL: r = kiln_cast_get_material(doc, n, &u.mat, NULL); break;
        case KILN_CAST_ID_FILE: r = kiln_cast_get_file(doc, n, &u.file, NULL); break;
        case KILN_CAST_ID_COLOR: r = kiln_cast_get_color(doc, n, &u.color, NULL); break;
        case KILN_CAST_ID_INSTANCE: r = kiln_cast_get_instance(doc, n, &u.inst, NULL); break;
        case KILN_CAST_ID_METADATA: r = kiln_cast_get_metadata(doc, n, &u.meta, NULL); break;
        default: break;
        }
        acc += (uint64_t)r;
    }
    bench_sink += acc;
}

static int run_case(const char *name, const void *data, size_t size, int iters, int scene)
{
    double best = 1e30;
    for (int i = 0; i < iters; i++) {
        kiln_cast_doc *doc;
        kiln_diag err;
        double t0 = bench_now();
        kiln_result r = kiln_cast_parse(data, size, NULL, &doc, &err);
        if (r != KILN_OK) {
            fprintf(stderr, "%s: %s (%s)\n", name, err.message, err.path);
            return 1;
        }
        if (scene) walk_scene(doc);
        double t = bench_now() - t0;
        bench_sink += kiln_cast_node_count(doc);
        kiln_cast_free(doc);
        if (t < best) best = t;
    }
    printf("{\"bench\":\"cast_parse\",\"case\":\"%s\",\"input\":\"%s\",\"bytes\":%zu,\"iters\":%d,"
           "\"best_s\":%.6f,\"gb_per_s\":%.2f}\n",
           scene ? "parse_scene" : "parse", name, size, iters, best, (double)size / best / 1e9);
    fprintf(stderr, "%-12s %-28s %8.1f MB  %8.3f ms  %8.2f GB/s\n", scene ? "parse_scene" : "parse", name,
            (double)size / 1e6, best * 1e3, (double)size / best / 1e9);
    return 0;
}

/* A ~100 MB file shaped like real content: a 200-bone skeleton, 4 skinned meshes of 250k
 * vertices (vp vn vt u0 c0 wb wv, mi 4), and a 10 s animation on every bone channel. */
static void *make_large(size_t *size)
{
    enum { BONES = 200, MESHES = 4, VERTS = 250000, TRIS = 500000, KEYS = 301 };
    kiln_cast_writer *w = kiln_cast_writer_create(NULL);
    uint32_t root = kiln_cast_writer_node(w, KILN_CAST_NONE, KILN_CAST_ID_ROOT, 1);
    uint32_t model = kiln_cast_writer_node(w, root, KILN_CAST_ID_MODEL, 2);
    kiln_cast_writer_string(w, model, "n", "bench_model");
    uint32_t skel = kiln_cast_writer_node(w, model, KILN_CAST_ID_SKELETON, 3);
    char name[32];
    for (uint32_t b = 0; b < BONES; b++) {
        uint32_t bone = kiln_cast_writer_node(w, skel, KILN_CAST_ID_BONE, 100 + b);
        snprintf(name, sizeof name, "bone_%u", b);
        kiln_cast_writer_string(w, bone, "n", name);
        uint32_t parent = b ? (b - 1) / 2 : 0xFFFFFFFFu;
        kiln_cast_writer_prop(w, bone, "p", KILN_CAST_TYPE_INT, &parent, 1);
        float lp[3] = {0.0f, 0.1f, 0.0f}, lr[4] = {0, 0, 0, 1};
        kiln_cast_writer_prop(w, bone, "lp", KILN_CAST_TYPE_VEC3, lp, 1);
        kiln_cast_writer_prop(w, bone, "lr", KILN_CAST_TYPE_VEC4, lr, 1);
    }
    float *pos = malloc(sizeof(float) * 3 * VERTS);
    float *uv = malloc(sizeof(float) * 2 * VERTS);
    uint32_t *col = malloc(sizeof(uint32_t) * VERTS);
    uint32_t *wb = malloc(sizeof(uint32_t) * 4 * VERTS);
    float *wv = malloc(sizeof(float) * 4 * VERTS);
    uint32_t *faces = malloc(sizeof(uint32_t) * 3 * TRIS);
    for (uint32_t v = 0; v < VERTS; v++) {
        pos[3 * v] = (float)(v % 500) * 0.01f;
        pos[3 * v + 1] = (float)(v / 500) * 0.01f;
        pos[3 * v + 2] = 0.0f;
        uv[2 * v] = pos[3 * v];
        uv[2 * v + 1] = pos[3 * v + 1];
        col[v] = 0xFF000000u | v;
        for (uint32_t k = 0; k < 4; k++) {
            wb[4 * v + k] = (v / 500 + k) % BONES;
            wv[4 * v + k] = 0.25f;
        }
    }
    for (uint32_t t = 0; t < TRIS; t++) {
        uint32_t q = t / 2, x = q % 499, y = (q / 499) % 499, base = y * 500 + x;
        uint32_t a = base, b = base + 1, c = base + 500, d = base + 501;
        faces[3 * t] = a;
        faces[3 * t + 1] = t & 1 ? d : b;
        faces[3 * t + 2] = t & 1 ? c : d;
    }
    for (uint32_t m = 0; m < MESHES; m++) {
        uint32_t mesh = kiln_cast_writer_node(w, model, KILN_CAST_ID_MESH, 1000 + m);
        kiln_cast_writer_prop_ref(w, mesh, "vp", KILN_CAST_TYPE_VEC3, pos, VERTS);
        kiln_cast_writer_prop_ref(w, mesh, "vn", KILN_CAST_TYPE_VEC3, pos, VERTS);
        kiln_cast_writer_prop_ref(w, mesh, "vt", KILN_CAST_TYPE_VEC3, pos, VERTS);
        kiln_cast_writer_prop_ref(w, mesh, "u0", KILN_CAST_TYPE_VEC2, uv, VERTS);
        kiln_cast_writer_prop_ref(w, mesh, "c0", KILN_CAST_TYPE_INT, col, VERTS);
        uint32_t one = 1, four = 4;
        kiln_cast_writer_prop(w, mesh, "ul", KILN_CAST_TYPE_BYTE, &(uint8_t){1}, 1);
        kiln_cast_writer_ints(w, mesh, "cl", &one, 1);
        kiln_cast_writer_ints(w, mesh, "mi", &four, 1);
        kiln_cast_writer_ints(w, mesh, "wb", wb, 4 * VERTS);
        kiln_cast_writer_prop_ref(w, mesh, "wv", KILN_CAST_TYPE_FLOAT, wv, 4 * VERTS);
        kiln_cast_writer_ints(w, mesh, "f", faces, 3 * TRIS);
    }
    uint32_t anim = kiln_cast_writer_node(w, root, KILN_CAST_ID_ANIMATION, 5);
    float fr = 30.0f;
    kiln_cast_writer_prop(w, anim, "fr", KILN_CAST_TYPE_FLOAT, &fr, 1);
    static const char *const props[] = {"tx", "ty", "tz", "sx", "sy", "sz"};
    uint32_t frames[KEYS];
    float values[KEYS * 4];
    for (uint32_t k = 0; k < KEYS; k++) frames[k] = k;
    for (uint32_t k = 0; k < KEYS * 4; k++) values[k] = (k % 4 == 3) ? 1.0f : 0.0f;
    uint64_t hash = 10000;
    for (uint32_t b = 0; b < BONES; b++) {
        snprintf(name, sizeof name, "bone_%u", b);
        for (uint32_t c = 0; c < 7; c++) {
            uint32_t curve = kiln_cast_writer_node(w, anim, KILN_CAST_ID_CURVE, hash++);
            kiln_cast_writer_string(w, curve, "nn", name);
            kiln_cast_writer_string(w, curve, "kp", c == 6 ? "rq" : props[c]);
            kiln_cast_writer_ints(w, curve, "kb", frames, KEYS);
            kiln_cast_writer_prop(w, curve, "kv", c == 6 ? KILN_CAST_TYPE_VEC4 : KILN_CAST_TYPE_FLOAT, values, KEYS);
            kiln_cast_writer_string(w, curve, "m", "absolute");
        }
    }
    *size = (size_t)kiln_cast_writer_size(w);
    void *out = NULL;
    if (*size == 0 || posix_memalign(&out, 64, *size) != 0 || kiln_cast_writer_write(w, out, *size) != KILN_OK) {
        free(out);
        out = NULL;
    }
    kiln_cast_writer_destroy(w);
    free(pos); free(uv); free(col); free(wb); free(wv); free(faces);
    return out;
}

int main(int argc, char **argv)
{
    int quick = bench_quick(argc, argv);
    int iters = quick ? 3 : 20;
    int failed = 0;
    fprintf(stderr, "%s\n", kiln_build_info());

    char dir[1024];
    if (bench_corpus_dir(dir, sizeof dir)) {
        char path[1200];
        snprintf(path, sizeof path, "%s/large_500k.cast", dir);
        size_t size = 0;
        void *data = bench_load(path, &size);
        if (data) {
            failed |= run_case("large_500k.cast", data, size, iters, 0);
            failed |= run_case("large_500k.cast", data, size, iters, 1);
            free(data);
        } else {
            fprintf(stderr, "cannot read %s\n", path);
            failed = 1;
        }
    } else {
        fprintf(stderr, "corpus not found: skipping the corpus case\n");
    }

    size_t size = 0;
    void *data = make_large(&size);
    if (!data) {
        fprintf(stderr, "could not build the ~100 MB input\n");
        return 1;
    }
    failed |= run_case("writer_100mb", data, size, iters, 0);
    failed |= run_case("writer_100mb", data, size, iters, 1);
    free(data);
    return failed;
}
