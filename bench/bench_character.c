/* bench_character: one character per frame through kiln/character.h against the same stages
 * called one by one, on the n80 performance anchor (corpus/bench/anchor_n80_*.cast, baked
 * lossless) with a 1000-vertex mesh of 4 influences (tests/skin_fixture.h, on a copy of the
 * anchor's skeleton) and two layers of the clip half a clip apart, played forward at 60 Hz.
 * Each frame: 2 samples (own contexts), blend with the rest pose, local to model, skinning
 * matrices, skinned positions and normals; the staged loop also blends the visibility the
 * character blends. Each repetition plays 600 frames with both, alternating every 20 frames,
 * timed in thread CPU time; figures are medians of the per-frame times over the repetitions,
 * and the overhead is the median of the per-repetition ratios.
 * `--only staged|character` runs one of them (for callgrind instruction counts).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "kiln.h"
#include "kiln/bake/bake.h"
#include "skin_fixture.h"

#define FRAMES 600
#define BATCH  20
#define TARGET_OVERHEAD 0.05

static volatile float bench_sink;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct staged {
    const kiln_blob *blob, *anim;
    uint32_t skel, bones, soa, mesh, verts, vis_track;
    const kiln_soa_xform *rest;
    kiln_anim_binding *bind;
    void *ctx[2];
    kiln_soa_xform *layer[2], *pose;
    float *model, *skin, *pos, *nrm, vis[2], visible;
} staged;

static void *alloc64(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);
    if (!p) exit(1);
    memset(p, 0, (n + 63) & ~(size_t)63);
    return p;
}

static void staged_init(staged *s, const kiln_blob *blob, const kiln_blob *anim)
{
    memset(s, 0, sizeof *s);
    s->blob = blob, s->anim = anim;
    s->bones = kiln_blob_skeletons(blob, NULL)->bone_count;
    s->rest = kiln_skeleton_rest_pose(blob, 0, &s->soa);
    s->verts = kiln_blob_meshes(blob, NULL)->vertex_count;
    size_t bs = kiln_anim_binding_size(anim, 0, blob, 0);
    if (kiln_anim_bind(anim, 0, blob, 0, alloc64(bs), bs, &s->bind, NULL) != KILN_OK) exit(1);
    kiln_visibility_bind_clip(anim, 0, blob, &s->mesh, 1, &s->vis_track);
    for (int l = 0; l < 2; l++) {
        size_t cs = kiln_sample_context_size(s->bind);
        s->ctx[l] = alloc64(cs);
        kiln_sample_context_init(s->ctx[l], cs, s->bind);
        s->layer[l] = alloc64(sizeof(kiln_soa_xform) * s->soa);
    }
    s->pose = alloc64(sizeof(kiln_soa_xform) * s->soa);
    s->model = alloc64(64u * s->bones), s->skin = alloc64(64u * s->bones);
    s->pos = alloc64(12u * s->verts), s->nrm = alloc64(12u * s->verts);
}

__attribute__((noinline)) static void staged_frame(staged *s, const kiln_character_layer ly[2], const float *root)
{
    float scalars[2][4];
    for (int l = 0; l < 2; l++) {
        kiln_sample_desc d;
        memset(&d, 0, sizeof d);
        d.binding = s->bind, d.time_s = ly[l].time_s, d.loop = ly[l].loop, d.out = s->layer[l];
        d.out_count = s->soa, d.context = s->ctx[l], d.scalars = scalars[l], d.scalar_count = 4;
        kiln_sample(&d);
        kiln_visibility_values(&s->vis_track, 1, scalars[l], 0, &s->vis[l]);
    }
    kiln_blend_layer bl[2] = {{s->layer[0], ly[0].weight, NULL}, {s->layer[1], ly[1].weight, NULL}};
    kiln_pose_blend(bl, 2, s->rest, KILN_BLEND_THRESHOLD, s->pose, s->soa);
    kiln_value_layer vl[2] = {{&s->vis[0], ly[0].weight}, {&s->vis[1], ly[1].weight}};
    kiln_pose_blend_values(vl, 2, 1.0f, KILN_BLEND_THRESHOLD, &s->visible, 1);
    kiln_pose_local_to_object(s->blob, 0, s->pose, root, s->model, s->bones);
    kiln_pose_skin_matrices(s->blob, 0, s->model, s->skin, s->bones);
    if (s->visible >= 0.5f) {
        kiln_skin_desc k;
        memset(&k, 0, sizeof k);
        k.blob = s->blob, k.mesh = 0, k.skin_matrices = s->skin, k.bone_count = s->bones, k.root = root;
        k.vertex_count = s->verts, k.positions = s->pos, k.normals = s->nrm;
        kiln_skin_mesh(&k);
    }
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    int quick = bench_quick(argc, argv), reps = quick ? 5 : 31, only = 0; /* 1 staged, 2 character */
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--only") == 0) only = strcmp(argv[i + 1], "staged") == 0 ? 1 : 2;
    char dir[512], mpath[700], apath[700];
    const char *corpus = bench_corpus_dir(dir, sizeof dir);
    snprintf(mpath, sizeof mpath, "%s/bench/anchor_n80_model.cast", corpus ? corpus : dir);
    snprintf(apath, sizeof apath, "%s/bench/anchor_n80_anim.cast", corpus ? corpus : dir);
    size_t msize = 0, asize = 0;
    void *mfile = corpus ? bench_load(mpath, &msize) : NULL, *afile = corpus ? bench_load(apath, &asize) : NULL;
    if (!mfile || !afile) {
        fprintf(stderr, "kiln_bench_character: no anchor_n80 in %s/bench (KILN_SHARED_DIR): skipped\n", dir);
        return 0;
    }
    kiln_bake_input in[2] = {{"anchor_n80_model.cast", mfile, msize, NULL}, {"anchor_n80_anim.cast", afile, asize, NULL}};
    kiln_bake_options opt;
    memset(&opt, 0, sizeof opt);
    kiln_bake_result res;
    kiln_diag err;
    const kiln_blob *anim;
    if (kiln_bake(in, 2, &opt, &res, &err) != KILN_OK || kiln_blob_load(res.blob, res.size, 0, &anim, &err) != KILN_OK) {
        fprintf(stderr, "kiln_bench_character: bake: %s\n", err.message);
        return 1;
    }
    sf_mesh_opts mo = sf_defaults(1000, 4);
    mo.bones = kiln_blob_skeletons(anim, NULL)->bone_count;
    mo.skeleton_from = anim;
    size_t size;
    unsigned char *mesh_mem = sf_build(&mo, &size);
    const kiln_blob *blob = sf_load(mesh_mem, size);

    const uint32_t clip = 0;
    kiln_character_desc d;
    memset(&d, 0, sizeof d);
    d.blob = blob, d.anim_blob = anim, d.clips = &clip, d.clip_count = 1, d.max_layers = 2;
    d.flags = KILN_CHARACTER_VERTICES | KILN_CHARACTER_NORMALS;
    size_t csize = kiln_character_size(&d);
    void *cmem = alloc64(csize);
    kiln_character *ch;
    if (kiln_character_init(&d, cmem, csize, &ch) != KILN_OK) {
        fprintf(stderr, "kiln_bench_character: %s\n", kiln_error_detail()->message);
        return 1;
    }
    staged s;
    staged_init(&s, blob, anim);

    const float root[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 3, 0, -2, 1};
    double dur = kiln_anim_duration(anim, 0), *t_st = calloc((size_t)reps, sizeof(double));
    double *t_ch = calloc((size_t)reps, sizeof(double)), *ratio = calloc((size_t)reps, sizeof(double));
    if (!t_st || !t_ch || !ratio) return 1;
    /* Thread CPU time, so that time slices lost to other processes on a shared machine do not
     * count, and the two paths alternate every BATCH frames, so that drifting clock speeds and
     * cache pressure from neighbours fall on both alike. */
    for (int r = 0; r < reps; r++) {
        double acc[2] = {0.0, 0.0};
        for (int f0 = 0; f0 < FRAMES; f0 += BATCH)
            for (int which = 0; which < 2; which++) {
                int mode = ((f0 / BATCH + r) % 2) ? 1 - which : which; /* alternate who goes first */
                if (only && only != mode + 1) continue;
                double t0 = cpu_now();
                for (int f = f0; f < f0 + BATCH; f++) {
                    double t = f / 60.0;
                    kiln_character_layer ly[2] = {{0, t, 0.7f, KILN_LOOP_WRAP, NULL, 0},
                                                  {0, t + 0.5 * dur, 0.3f, KILN_LOOP_WRAP, NULL, 0}};
                    if (mode == 0) staged_frame(&s, ly, root);
                    else kiln_character_evaluate(ch, ly, 2, root, NULL);
                }
                acc[mode] += cpu_now() - t0;
            }
        t_st[r] = acc[0] / FRAMES * 1e9;
        t_ch[r] = acc[1] / FRAMES * 1e9;
        ratio[r] = t_st[r] > 0.0 ? t_ch[r] / t_st[r] : 0.0;
    }
    kiln_character_mesh m;
    kiln_character_mesh_get(ch, 0, &m);
    int same = only || (memcmp(m.positions, s.pos, 12u * s.verts) == 0 &&
                        memcmp(kiln_character_skin_matrices(ch), s.skin, 64u * s.bones) == 0);
    bench_sink = m.positions[0] + s.pos[0];
    double st = median(t_st, reps), cm = median(t_ch, reps), over = median(ratio, reps) - 1.0;
    printf("{\"bench\":\"character\",\"clip\":\"anchor_n80\",\"joints\":%u,\"vertices\":%u,\"layers\":2,"
           "\"simd\":\"%s\",\"frames\":%d,\"reps\":%d,\"bytes\":%zu,\"staged_ns_per_frame\":%.1f,"
           "\"character_ns_per_frame\":%.1f,\"overhead\":%.4f,\"target_overhead\":%.2f,\"identical\":%s}\n",
           s.bones, s.verts, kiln_simd_name(kiln_simd_active()), FRAMES, reps, csize, st, cm, over, TARGET_OVERHEAD,
           same ? "true" : "false");
    fprintf(stderr,
            "kiln_bench_character: n80, 1000 vertices, 2 layers (%s): staged %.0f ns/frame, one call %.0f ns/frame, "
            "overhead %+.1f%% (median of %d alternating repetitions; target <= %.0f%%: %s), %zu bytes per character, "
            "outputs %s\n",
            kiln_simd_name(kiln_simd_active()), st, cm, over * 100.0, reps, TARGET_OVERHEAD * 100.0,
            over <= TARGET_OVERHEAD ? "met" : "missed", csize, same ? "bit-identical" : "DIFFER");
    free(t_st), free(t_ch), free(ratio), free(cmem), free(mesh_mem), free(mfile), free(afile);
    kiln_bake_result_free(&res);
    return same ? 0 : 1;
}
