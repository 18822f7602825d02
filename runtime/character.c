/* A character: the staged runtime calls over one caller block (kiln/character.h).
 *
 * The block is carved by one function run twice, once to measure and once to place, so the
 * size query and init cannot disagree. Every buffer starts on a 64-byte boundary. Evaluation
 * calls only the public stage functions, in the order the header gives, so its outputs are
 * those of the staged calls by construction.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "error_detail.h"
#include "kiln/blend_shape.h"
#include "kiln/character.h"
#include "kiln/skin.h"

#define KILN__CHAR_MAGIC 0x52484B43u /* "CKHR" */
#define KILN__CHAR_FLAGS (KILN_CHARACTER_VERTICES | KILN_CHARACTER_NORMALS | KILN_CHARACTER_NO_RIG)
#define KILN__CHAR_FN_INIT "kiln_character_init: "
#define KILN__CHAR_FN_EVAL "kiln_character_evaluate: "

typedef struct kiln__char_mesh {
    uint32_t mesh, vertex_count, first_shape, shape_count, has_normals;
    float   *positions, *normals;
} kiln__char_mesh;

/* One layer position: its sampling context, pose and scalars, and what it played last time. */
typedef struct kiln__char_slot {
    void           *context;
    kiln_soa_xform *pose;
    float          *scalars;      /* max_scalars */
    float          *shape_w;      /* shape_total */
    float          *vis;          /* mesh_count */
    double          prev_time;
    uint32_t        prev_clip, has_prev;
} kiln__char_slot;

struct kiln_character {
    uint32_t magic, flags;
    const kiln_blob *blob, *anim_blob;
    uint32_t model, skeleton, bone_count, soa_count;
    uint32_t clip_count, max_layers, mesh_count, shape_total, max_scalars;
    uint32_t rig, dual_quats;        /* 1: the skeleton has IK or constraints / a mesh uses DQS */
    float threshold;
    const kiln_soa_xform *rest;
    size_t context_size, rig_scratch_size;
    uint32_t *clips;                 /* clip_count clip indices in anim_blob */
    kiln_anim_binding **bindings;    /* clip_count */
    uint32_t *shape_tracks;          /* clip_count × shape_total */
    uint32_t *vis_tracks;            /* clip_count × mesh_count */
    uint32_t *shapes;                /* shape_total: every mesh's shapes, mesh by mesh */
    kiln__char_mesh *meshes;         /* mesh_count */
    kiln__char_slot *slots;          /* max_layers */
    kiln_blend_layer *blend;         /* max_layers */
    kiln_value_layer *values;        /* max_layers */
    kiln_soa_xform *pose;            /* soa_count */
    float *object_m, *skin_m;         /* bone_count × 16 */
    kiln_skin_dual_quat *dq;         /* bone_count, when dual_quats */
    void *rig_scratch;
    float *shape_weights;            /* shape_total, blended */
    float *visibility;               /* mesh_count, blended */
    float *shaped;                   /* largest shaped mesh × 3 */
    kiln_anim_event *event_buf;      /* max_events */
    uint32_t max_events;             /* largest event count over the clips */
    kiln_rig_report report;
};

/* What a description asks for, checked. */
typedef struct kiln__char_plan {
    const kiln_blob *anim;
    const kiln_blob_model *model;
    const kiln_blob_mesh *meshes;    /* the model's first mesh */
    uint32_t skeleton, bone_count, soa_count, shape_total, max_scalars, dual_quats, rig, max_shaped, max_events;
    size_t context_size, rig_scratch_size;
} kiln__char_plan;

static kiln_result kiln__char_plan_of(const kiln_character_desc *d, kiln__char_plan *p)
{
    memset(p, 0, sizeof *p);
    if (!d) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_INIT "desc", "desc is NULL");
    if (!d->blob) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_INIT "desc->blob", "blob is NULL");
    if (!d->clips && d->clip_count)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_INIT "desc->clips",
                          "clips is NULL with clip_count %u",
                          d->clip_count);
    if (!d->max_layers) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_INIT "desc->max_layers",
                                          "max_layers is 0");
    if (d->max_layers > 1024u)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_INIT "desc->max_layers",
                          "max_layers %u is above 1024",
                          d->max_layers);
    if (d->flags & ~KILN__CHAR_FLAGS)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_INIT "desc->flags", "unknown flags 0x%x",
                          d->flags & ~KILN__CHAR_FLAGS);
    if (!(d->threshold >= 0.0f) || !(d->threshold <= FLT_MAX))
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_INIT "desc->threshold",
                          "threshold %g is not 0 or a finite number > 0", (double)d->threshold);
    uint32_t nmodels, nskel, nmesh, nclips;
    const kiln_blob_model *models = kiln_blob_models(d->blob, &nmodels);
    const kiln_blob_skeleton *skels = kiln_blob_skeletons(d->blob, &nskel);
    const kiln_blob_mesh *meshes = kiln_blob_meshes(d->blob, &nmesh);
    if (d->model >= nmodels)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_INIT "desc->model",
                          "model %u is out of range (the blob has %u)",
                          d->model, nmodels);
    p->model = &models[d->model];
    p->skeleton = p->model->skeleton;
    if (p->skeleton >= nskel)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_INIT "desc->model",
                          "model %u has no skeleton", d->model);
    if (p->model->mesh_count && (p->model->first_mesh > nmesh || p->model->mesh_count > nmesh - p->model->first_mesh))
        return kiln__fail(KILN_ERR_BLOB_BAD_RECORD, KILN__CHAR_FN_INIT "desc->model",
                          "model %u's meshes lie outside MESHES", d->model);
    p->bone_count = skels[p->skeleton].bone_count;
    p->soa_count = skels[p->skeleton].soa_count;
    p->anim = d->anim_blob ? d->anim_blob : d->blob;
    const kiln_blob_animation *clips = kiln_blob_animations(p->anim, &nclips);
    p->context_size = 64;
    for (uint32_t i = 0; i < d->clip_count; i++) {
        if (d->clips[i] >= nclips)
            return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_INIT "desc->clips",
                              "clip %u (entry %u) is out of range (the blob has %u)", d->clips[i], i, nclips);
        const kiln_blob_animation *a = &clips[d->clips[i]];
        if (a->scalar_count > p->max_scalars) p->max_scalars = a->scalar_count;
        if (a->event_count > p->max_events) p->max_events = a->event_count;
        size_t ctx = (a->flags & KILN_ANIM_LOSSY) ? 64u + 2u * (size_t)a->block_count * sizeof(kiln_soa_xform) : 64u;
        if (ctx > p->context_size) p->context_size = ctx;
    }
    p->meshes = p->model->mesh_count ? &meshes[p->model->first_mesh] : NULL;
    for (uint32_t m = 0; m < p->model->mesh_count; m++) {
        const kiln_blob_mesh *me = &p->meshes[m];
        if (me->influences && me->skeleton != p->skeleton)
            return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_INIT "desc->model",
                              "mesh %u is skinned to skeleton %u, not the model's (%u)", p->model->first_mesh + m,
                              me->skeleton, p->skeleton);
        uint32_t shapes = kiln_blob_mesh_blend_shapes(d->blob, p->model->first_mesh + m, NULL, 0);
        p->shape_total += shapes;
        if (shapes && me->vertex_count > p->max_shaped) p->max_shaped = me->vertex_count;
        if (me->influences && me->skinning == KILN_SKIN_DUAL_QUAT) p->dual_quats = 1;
    }
    uint32_t nik, ncon;
    kiln_rig_ik_handles(d->blob, p->skeleton, &nik);
    kiln_rig_constraints(d->blob, p->skeleton, &ncon);
    p->rig = (nik || ncon) && !(d->flags & KILN_CHARACTER_NO_RIG);
    p->rig_scratch_size = p->rig ? kiln_rig_scratch_size(d->blob, p->skeleton) : 0;
    return KILN_OK;
}

/* ---- the block ---------------------------------------------------------------------------- */
typedef struct kiln__carve {
    unsigned char *base; /* NULL: measure only */
    size_t off;
} kiln__carve;

static void *kiln__take(kiln__carve *c, size_t bytes)
{
    size_t at = (c->off + 63u) & ~(size_t)63u;
    c->off = at + bytes;
    return c->base && bytes ? c->base + at : NULL;
}

#define KILN__TAKE(c, ptr, n) ((ptr) = kiln__take((c), sizeof *(ptr) * (size_t)(n)))

/* Lays out the block for `d` (checked into `p`); places the pointers when c->base is set. */
static void kiln__char_layout(const kiln_character_desc *d, const kiln__char_plan *p, kiln_character *ch, kiln__carve *c)
{
    kiln_character scratch;
    if (!ch) ch = &scratch;
    uint32_t nm = p->model->mesh_count, L = d->max_layers;
    (void)kiln__take(c, sizeof *ch);
    KILN__TAKE(c, ch->clips, d->clip_count);
    KILN__TAKE(c, ch->bindings, d->clip_count);
    for (uint32_t i = 0; i < d->clip_count; i++) {
        size_t bs = kiln_anim_binding_size(p->anim, d->clips[i], d->blob, p->skeleton);
        void *mem = kiln__take(c, bs);
        if (c->base) ch->bindings[i] = (kiln_anim_binding *)mem; /* placed by kiln_anim_bind */
    }
    KILN__TAKE(c, ch->shape_tracks, (size_t)d->clip_count * p->shape_total);
    KILN__TAKE(c, ch->vis_tracks, (size_t)d->clip_count * nm);
    KILN__TAKE(c, ch->shapes, p->shape_total);
    KILN__TAKE(c, ch->meshes, nm);
    KILN__TAKE(c, ch->slots, L);
    KILN__TAKE(c, ch->blend, L);
    KILN__TAKE(c, ch->values, L);
    for (uint32_t l = 0; l < L; l++) {
        kiln__char_slot s;
        s.context = kiln__take(c, p->context_size);
        KILN__TAKE(c, s.pose, p->soa_count);
        KILN__TAKE(c, s.scalars, p->max_scalars);
        KILN__TAKE(c, s.shape_w, p->shape_total);
        KILN__TAKE(c, s.vis, nm);
        if (c->base) ch->slots[l] = s;
    }
    KILN__TAKE(c, ch->pose, p->soa_count);
    KILN__TAKE(c, ch->object_m, (size_t)p->bone_count * 16u);
    KILN__TAKE(c, ch->skin_m, (size_t)p->bone_count * 16u);
    KILN__TAKE(c, ch->dq, p->dual_quats ? p->bone_count : 0u);
    ch->rig_scratch = kiln__take(c, p->rig_scratch_size);
    KILN__TAKE(c, ch->shape_weights, p->shape_total);
    KILN__TAKE(c, ch->visibility, nm);
    KILN__TAKE(c, ch->event_buf, p->max_events);
    int vertices = (d->flags & KILN_CHARACTER_VERTICES) != 0;
    KILN__TAKE(c, ch->shaped, vertices ? (size_t)p->max_shaped * 3u : 0u);
    for (uint32_t m = 0; m < nm; m++) {
        const kiln_blob_mesh *me = &p->meshes[m];
        int normals = vertices && (d->flags & KILN_CHARACTER_NORMALS) &&
                      kiln_blob_mesh_stream(d->blob, me, KILN_ATTR_NORMAL, 0) != NULL;
        float *pos, *nrm;
        KILN__TAKE(c, pos, vertices ? (size_t)me->vertex_count * 3u : 0u);
        KILN__TAKE(c, nrm, normals ? (size_t)me->vertex_count * 3u : 0u);
        if (c->base) {
            ch->meshes[m].positions = vertices ? pos : NULL;
            ch->meshes[m].normals = normals ? nrm : NULL;
            ch->meshes[m].has_normals = (uint32_t)normals;
        }
    }
    c->off = (c->off + 63u) & ~(size_t)63u;
}

size_t kiln_character_size(const kiln_character_desc *desc)
{
    kiln__char_plan p;
    if (kiln__char_plan_of(desc, &p) != KILN_OK) return 0;
    kiln__carve c = {NULL, 0};
    kiln__char_layout(desc, &p, NULL, &c);
    return c.off;
}

kiln_result kiln_character_init(const kiln_character_desc *desc, void *mem, size_t size, kiln_character **out)
{
    if (out) *out = NULL;
    if (!out) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_INIT "out", "out is NULL");
    if (!mem) return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_INIT "mem", "mem is NULL");
    if ((uintptr_t)mem % KILN_CHARACTER_ALIGN)
        return kiln__fail(KILN_ERR_BLOB_MISALIGNED, KILN__CHAR_FN_INIT "mem", "mem %p is not %u-byte aligned", mem,
                          KILN_CHARACTER_ALIGN);
    kiln__char_plan p;
    kiln_result r = kiln__char_plan_of(desc, &p);
    if (r != KILN_OK) return r;
    kiln__carve c = {NULL, 0};
    kiln__char_layout(desc, &p, NULL, &c);
    if (size < c.off)
        return kiln__fail(KILN_ERR_BUFFER_TOO_SMALL, KILN__CHAR_FN_INIT "size",
                          "size %zu is below kiln_character_size() = %zu", size, c.off);
    kiln_character *ch = (kiln_character *)mem;
    memset(mem, 0, c.off); /* outputs read before the first evaluation are zeros */
    c.base = (unsigned char *)mem, c.off = 0;
    kiln__char_layout(desc, &p, ch, &c);
    ch->flags = desc->flags;
    ch->blob = desc->blob, ch->anim_blob = p.anim;
    ch->model = desc->model, ch->skeleton = p.skeleton;
    ch->bone_count = p.bone_count, ch->soa_count = p.soa_count;
    ch->clip_count = desc->clip_count, ch->max_layers = desc->max_layers;
    ch->mesh_count = p.model->mesh_count, ch->shape_total = p.shape_total, ch->max_scalars = p.max_scalars;
    ch->rig = (uint32_t)p.rig, ch->dual_quats = p.dual_quats;
    ch->threshold = desc->threshold > 0.0f ? desc->threshold : KILN_BLEND_THRESHOLD;
    ch->rest = kiln_skeleton_rest_pose(desc->blob, p.skeleton, NULL);
    ch->context_size = p.context_size, ch->rig_scratch_size = p.rig_scratch_size;
    ch->max_events = p.max_events;

    uint32_t first_shape = 0;
    for (uint32_t m = 0; m < ch->mesh_count; m++) {
        kiln__char_mesh *cm = &ch->meshes[m];
        cm->mesh = p.model->first_mesh + m;
        cm->vertex_count = p.meshes[m].vertex_count;
        cm->first_shape = first_shape;
        cm->shape_count = kiln_blob_mesh_blend_shapes(desc->blob, cm->mesh, ch->shapes + first_shape,
                                                      p.shape_total - first_shape);
        first_shape += cm->shape_count;
    }
    for (uint32_t i = 0; i < ch->clip_count; i++) {
        ch->clips[i] = desc->clips[i];
        size_t bs = kiln_anim_binding_size(p.anim, desc->clips[i], desc->blob, p.skeleton);
        kiln_anim_binding *b = NULL;
        r = kiln_anim_bind(p.anim, desc->clips[i], desc->blob, p.skeleton, ch->bindings[i], bs, &b, NULL);
        if (r != KILN_OK)
            return kiln__fail(r, KILN__CHAR_FN_INIT "desc->clips",
                              "binding clip %u to skeleton %u failed: %s", desc->clips[i],
                              p.skeleton, kiln_result_str(r));
        ch->bindings[i] = b;
        if (kiln_sample_context_size(b) > ch->context_size)
            return kiln__fail(KILN_ERR_BUFFER_TOO_SMALL, KILN__CHAR_FN_INIT "desc->clips",
                              "clip %u needs a %zu-byte sampling context", desc->clips[i], kiln_sample_context_size(b));
        r = kiln_blend_shape_bind_clip(p.anim, desc->clips[i], desc->blob, ch->shapes, ch->shape_total,
                                       ch->shape_tracks + (size_t)i * ch->shape_total);
        if (r == KILN_OK) {
            uint32_t *vt = ch->vis_tracks + (size_t)i * ch->mesh_count;
            for (uint32_t m = 0; m < ch->mesh_count && r == KILN_OK; m++)
                r = kiln_visibility_bind_clip(p.anim, desc->clips[i], desc->blob, &ch->meshes[m].mesh, 1, vt + m);
        }
        if (r != KILN_OK) return r;
    }
    if (ch->rig) {
        /* the rig's plan (records, subtree ends, two-bone batches) once, in the block: every
         * evaluation solves with it (desc.prepared), as a game calling kiln_rig_prepare per
         * character does */
        r = kiln_rig_prepare(desc->blob, p.skeleton, ch->rig_scratch, ch->rig_scratch_size);
        if (r != KILN_OK) return r;
    }
    for (uint32_t l = 0; l < ch->max_layers; l++) {
        /* bound to the first clip; kiln_sample refills a context used with another binding */
        if (ch->clip_count) {
            r = kiln_sample_context_init(ch->slots[l].context, ch->context_size, ch->bindings[0]);
            if (r != KILN_OK) return r;
        }
        kiln_pose_identity(ch->slots[l].pose, ch->soa_count);
    }
    if (ch->rest) memcpy(ch->pose, ch->rest, sizeof *ch->pose * (size_t)ch->soa_count);
    else kiln_pose_identity(ch->pose, ch->soa_count);
    for (uint32_t m = 0; m < ch->mesh_count; m++) ch->visibility[m] = 1.0f;
    ch->magic = KILN__CHAR_MAGIC;
    *out = ch;
    return KILN_OK;
}

/* ---- evaluation --------------------------------------------------------------------------- */
/* The serial of this thread's error detail when the evaluation began. */
static _Thread_local unsigned kiln__char_serial;

static kiln_result kiln__char_stage(kiln_result r, const char *stage)
{
    if (r == KILN_OK) return r;
    /* keep the stage's own detail when it recorded one, else say which stage failed */
    if (kiln__fail_serial() != kiln__char_serial) return r;
    return kiln__fail(r, KILN__CHAR_FN_EVAL "stage", "%s failed: %s", stage, kiln_result_str(r));
}

/* Samples layer l into its slot and reports its events. */
static kiln_result kiln__char_sample(kiln_character *ch, const kiln_character_layer *ly, uint32_t l,
                                     kiln_character_events *ev)
{
    kiln__char_slot *s = &ch->slots[l];
    const kiln_anim_binding *b = ch->bindings[ly->clip];
    uint32_t clip = ch->clips[ly->clip];
    kiln_sample_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.binding = b;
    sd.time_s = ly->time_s;
    sd.loop = ly->loop;
    if (ly->additive) {
        kiln_pose_identity(s->pose, ch->soa_count);
        sd.base = s->pose;
    }
    sd.out = s->pose;
    sd.out_count = ch->soa_count;
    sd.context = s->context;
    sd.scalars = s->scalars;
    sd.scalar_count = ch->max_scalars;
    kiln_result r = kiln_sample(&sd);
    if (r != KILN_OK) return kiln__char_stage(r, "kiln_sample");
    uint32_t scalars = kiln_blob_animations(ch->anim_blob, NULL)[clip].scalar_count;
    kiln_blend_shape_weights(ch->shape_tracks + (size_t)ly->clip * ch->shape_total, ch->shape_total, s->scalars, scalars,
                             s->shape_w);
    kiln_visibility_values(ch->vis_tracks + (size_t)ly->clip * ch->mesh_count, ch->mesh_count, s->scalars, scalars, s->vis);
    if (ev && s->has_prev && s->prev_clip == ly->clip) {
        /* at most the clip's event count (an interval of a period or more reports each once) */
        uint32_t n = kiln_anim_events(ch->anim_blob, clip, s->prev_time, ly->time_s, ly->loop, ch->event_buf,
                                      ch->max_events);
        for (uint32_t k = 0; k < n && k < ch->max_events; k++, ev->count++)
            if (ev->count < ev->capacity) ev->out[ev->count].layer = l, ev->out[ev->count].event = ch->event_buf[k];
    }
    return KILN_OK;
}

kiln_result kiln_character_evaluate(kiln_character *ch, const kiln_character_layer *layers, uint32_t layer_count,
                                    const float *root, kiln_character_events *events)
{
    if (!ch || ch->magic != KILN__CHAR_MAGIC)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_EVAL "character",
                          "not a character from kiln_character_init");
    if (!layers && layer_count)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_EVAL "layers",
                          "layers is NULL with layer_count %u", layer_count);
    if (layer_count > ch->max_layers)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_EVAL "layer_count",
                          "layer_count %u is above max_layers %u",
                          layer_count, ch->max_layers);
    for (uint32_t l = 0; l < layer_count; l++)
        if (layers[l].clip >= ch->clip_count)
            return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_EVAL "layers[].clip",
                              "layer %u plays clip slot %u; the character has %u", l, layers[l].clip, ch->clip_count);
    if (events && !events->out && events->capacity)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, KILN__CHAR_FN_EVAL "events->out",
                          "events->out is NULL with capacity %u",
                          events->capacity);
    if (events) events->count = 0;
    kiln__char_serial = kiln__fail_serial();

    kiln_result r = KILN_OK;
    uint32_t nb = 0;
    for (uint32_t l = 0; l < layer_count && r == KILN_OK; l++) {
        r = kiln__char_sample(ch, &layers[l], l, events);
        if (!layers[l].additive) {
            ch->blend[nb].pose = ch->slots[l].pose;
            ch->blend[nb].weight = layers[l].weight;
            ch->blend[nb].joint_weights = layers[l].joint_weights;
            ch->values[nb].values = ch->slots[l].shape_w;
            ch->values[nb].weight = layers[l].weight;
            nb++;
        }
    }
    if (r != KILN_OK) return r;

    /* pose: blend, then additive layers in order */
    r = kiln__char_stage(kiln_pose_blend(ch->blend, nb, ch->rest, ch->threshold, ch->pose, ch->soa_count), "kiln_pose_blend");
    for (uint32_t l = 0; l < layer_count && r == KILN_OK; l++)
        if (layers[l].additive)
            r = kiln__char_stage(kiln_pose_add(ch->pose, ch->slots[l].pose, layers[l].weight, layers[l].joint_weights,
                                               ch->soa_count),
                                 "kiln_pose_add");
    if (r != KILN_OK) return r;

    /* blend shape weights and visibility, with the pose's weights */
    if (ch->shape_total) {
        r = kiln_pose_blend_values(ch->values, nb, 0.0f, ch->threshold, ch->shape_weights, ch->shape_total);
        for (uint32_t l = 0; l < layer_count && r == KILN_OK; l++) {
            float w = layers[l].weight;
            if (!layers[l].additive || !(w > 0.0f)) continue;
            w = w < 1.0f ? w : 1.0f;
            for (uint32_t i = 0; i < ch->shape_total; i++) ch->shape_weights[i] += w * ch->slots[l].shape_w[i];
        }
    }
    if (ch->mesh_count && r == KILN_OK) {
        nb = 0;
        for (uint32_t l = 0; l < layer_count; l++)
            if (!layers[l].additive) ch->values[nb++].values = ch->slots[l].vis;
        r = kiln_pose_blend_values(ch->values, nb, 1.0f, ch->threshold, ch->visibility, ch->mesh_count);
    }
    if (r != KILN_OK) return kiln__char_stage(r, "kiln_pose_blend_values");

    /* matrices */
    r = kiln__char_stage(kiln_pose_local_to_object(ch->blob, ch->skeleton, ch->pose, root, ch->object_m, ch->bone_count),
                         "kiln_pose_local_to_object");
    memset(&ch->report, 0, sizeof ch->report);
    if (r == KILN_OK && ch->rig) {
        kiln_rig_desc rd;
        memset(&rd, 0, sizeof rd);
        rd.blob = ch->blob;
        rd.skeleton = ch->skeleton;
        rd.local = ch->pose;
        rd.soa_count = ch->soa_count;
        rd.object = ch->object_m;
        rd.bone_count = ch->bone_count;
        rd.root = root;
        rd.scratch = ch->rig_scratch;
        rd.scratch_size = ch->rig_scratch_size;
        rd.prepared = 1; /* kiln_character_init wrote the plan */
        rd.report = &ch->report;
        r = kiln__char_stage(kiln_rig_solve(&rd), "kiln_rig_solve");
    }
    if (r == KILN_OK)
        r = kiln__char_stage(kiln_pose_skin_matrices(ch->blob, ch->skeleton, ch->object_m, ch->skin_m, ch->bone_count),
                             "kiln_pose_skin_matrices");
    if (r == KILN_OK && ch->dual_quats)
        r = kiln__char_stage(kiln_pose_skin_dual_quats(ch->skin_m, ch->dq, ch->bone_count), "kiln_pose_skin_dual_quats");

    /* vertices */
    for (uint32_t m = 0; m < ch->mesh_count && r == KILN_OK && (ch->flags & KILN_CHARACTER_VERTICES); m++) {
        const kiln__char_mesh *cm = &ch->meshes[m];
        if (!(ch->visibility[m] >= 0.5f)) continue;
        if (cm->shape_count) {
            kiln_blend_shapes_desc bd;
            memset(&bd, 0, sizeof bd);
            bd.blob = ch->blob;
            bd.mesh = cm->mesh;
            bd.shapes = ch->shapes + cm->first_shape;
            bd.weights = ch->shape_weights + cm->first_shape;
            bd.shape_count = cm->shape_count;
            bd.out = ch->shaped;
            bd.out_count = cm->vertex_count;
            r = kiln__char_stage(kiln_blend_shapes_apply(&bd), "kiln_blend_shapes_apply");
            if (r != KILN_OK) break;
        }
        kiln_skin_desc sd;
        memset(&sd, 0, sizeof sd);
        sd.blob = ch->blob;
        sd.mesh = cm->mesh;
        sd.skin_matrices = ch->skin_m;
        sd.dual_quats = ch->dq;
        sd.bone_count = ch->bone_count;
        sd.root = root;
        sd.vertex_count = cm->vertex_count;
        sd.positions = cm->positions;
        sd.normals = cm->normals;
        sd.source_positions = cm->shape_count ? ch->shaped : NULL;
        r = kiln__char_stage(kiln_skin_mesh(&sd), "kiln_skin_mesh");
    }
    if (r != KILN_OK) return r;

    /* the event cursors move only after a successful evaluation */
    for (uint32_t l = 0; l < ch->max_layers; l++) {
        kiln__char_slot *s = &ch->slots[l];
        s->has_prev = l < layer_count;
        if (l < layer_count) s->prev_time = layers[l].time_s, s->prev_clip = layers[l].clip;
    }
    return KILN_OK;
}

/* ---- outputs ------------------------------------------------------------------------------ */
static int kiln__char_ok(const kiln_character *ch) { return ch && ch->magic == KILN__CHAR_MAGIC; }

uint32_t kiln_character_skeleton(const kiln_character *ch) { return kiln__char_ok(ch) ? ch->skeleton : 0; }
uint32_t kiln_character_bone_count(const kiln_character *ch) { return kiln__char_ok(ch) ? ch->bone_count : 0; }
uint32_t kiln_character_soa_count(const kiln_character *ch) { return kiln__char_ok(ch) ? ch->soa_count : 0; }
uint32_t kiln_character_mesh_count(const kiln_character *ch) { return kiln__char_ok(ch) ? ch->mesh_count : 0; }
const kiln_soa_xform *kiln_character_pose(const kiln_character *ch) { return kiln__char_ok(ch) ? ch->pose : NULL; }
const float *kiln_character_object_matrices(const kiln_character *ch) { return kiln__char_ok(ch) ? ch->object_m : NULL; }
const float *kiln_character_skin_matrices(const kiln_character *ch) { return kiln__char_ok(ch) ? ch->skin_m : NULL; }
const kiln_rig_report *kiln_character_rig_report(const kiln_character *ch) { return kiln__char_ok(ch) ? &ch->report : NULL; }

kiln_result kiln_character_mesh_get(const kiln_character *ch, uint32_t index, kiln_character_mesh *out)
{
    if (!kiln__char_ok(ch) || !out)
        return kiln__fail(KILN_ERR_INVALID_ARGUMENT, "kiln_character_mesh_get: character", "NULL character or out");
    if (index >= ch->mesh_count)
        return kiln__fail(KILN_ERR_NOT_FOUND, "kiln_character_mesh_get: index", "mesh %u of a model with %u", index,
                          ch->mesh_count);
    const kiln__char_mesh *cm = &ch->meshes[index];
    out->mesh = cm->mesh;
    out->vertex_count = cm->vertex_count;
    out->visible = ch->visibility[index] >= 0.5f;
    out->shape_count = cm->shape_count;
    out->shapes = cm->shape_count ? ch->shapes + cm->first_shape : NULL;
    out->shape_weights = cm->shape_count ? ch->shape_weights + cm->first_shape : NULL;
    out->positions = cm->positions;
    out->normals = cm->normals;
    return KILN_OK;
}
