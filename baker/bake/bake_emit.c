/* Stage 2: finished units -> builder tables, in input order.
 *
 * Unit-local indices become global by adding the table lengths at the start of the unit.
 * Within a unit the bakers appended meshes, hair and materials model by model, so each
 * model's parts are already one contiguous range.
 *
 * Instances are grouped by the file they reference (its resolved path), references in order
 * of first appearance across all inputs, each reference's instances in input then file order.
 */
#include <string.h>

#include "bake_stage.h"
#include "ds.h"
#include "kiln/blob.h"

/* Everything the guarded region touches lives here, outside the frame that calls setjmp,
 * so its values are well defined after a longjmp. */
typedef struct kiln__emit_state {
    kiln__ds_ctx        ds;
    kiln__blob_builder *b;
    const kiln__job    *jobs;
    uint32_t            count;
    struct kiln__ref_slot { char *key; uint32_t value; } *refs; /* resolved path -> reference */
    uint32_t           *ref_of;  /* reference of every instance, in emission order */
} kiln__emit_state;

static void kiln__emit_skeleton(kiln__blob_builder *b, const kiln__skeleton *sk, uint32_t model)
{
    kiln_blob_skeleton rec;
    memset(&rec, 0, sizeof rec);
    rec.model = model;
    rec.bone_count = sk->bone_count;
    rec.first_bone = (uint32_t)stbds_arrlenu(b->bones);
    rec.first_soa = (uint32_t)stbds_arrlenu(b->rest);
    rec.soa_count = (sk->bone_count + KILN_SOA_WIDTH - 1) / KILN_SOA_WIDTH;
    rec.depth = sk->depth;
    stbds_arrput(b->skeletons, rec);

    for (uint32_t i = 0; i < sk->bone_count; i++) {
        kiln_blob_bone bone;
        memset(&bone, 0, sizeof bone);
        bone.name = kiln__builder_name(b, KILN_SECTION_BONES, rec.first_bone + i, sk->names[i]);
        bone.name_hash = kiln_name_hash(sk->names[i]);
        bone.parent = sk->parents[i];
        bone.source_index = sk->source_index[i];
        bone.flags = sk->flags[i];
        stbds_arrput(b->bones, bone);
        kiln__mat16 ib;
        memcpy(ib.m, sk->inverse_bind[i], sizeof ib.m);
        stbds_arrput(b->inverse_binds, ib);
    }
    for (uint32_t k = 0; k < rec.soa_count; k++) {
        kiln_soa_xform x;
        memset(&x, 0, sizeof x);
        for (uint32_t lane = 0; lane < KILN_SOA_WIDTH; lane++) {
            uint32_t i = k * KILN_SOA_WIDTH + lane;
            int used = i < sk->bone_count;
            x.tx[lane] = used ? sk->local_t[i][0] : 0.0f;
            x.ty[lane] = used ? sk->local_t[i][1] : 0.0f;
            x.tz[lane] = used ? sk->local_t[i][2] : 0.0f;
            x.qx[lane] = used ? sk->local_r[i][0] : 0.0f;
            x.qy[lane] = used ? sk->local_r[i][1] : 0.0f;
            x.qz[lane] = used ? sk->local_r[i][2] : 0.0f;
            x.qw[lane] = used ? sk->local_r[i][3] : 1.0f;
            x.sx[lane] = used ? sk->local_s[i][0] : 1.0f;
            x.sy[lane] = used ? sk->local_s[i][1] : 1.0f;
            x.sz[lane] = used ? sk->local_s[i][2] : 1.0f;
        }
        stbds_arrput(b->rest, x);
    }
}

static void kiln__emit_material(kiln__blob_builder *b, const kiln__material *m, uint32_t model)
{
    kiln_blob_material rec;
    memset(&rec, 0, sizeof rec);
    rec.name = kiln__builder_name(b, KILN_SECTION_MATERIALS, (uint32_t)stbds_arrlenu(b->materials), m->name);
    rec.type = kiln__builder_string(b, m->type);
    rec.model = model;
    rec.first_slot = (uint32_t)stbds_arrlenu(b->slots);
    rec.slot_count = m->slot_count;
    stbds_arrput(b->materials, rec);
    for (uint32_t i = 0; i < m->slot_count; i++) {
        kiln_blob_material_slot s = m->slots[i].rec;
        s.name = kiln__builder_string(b, m->slots[i].name);
        s.path = kiln__builder_string(b, m->slots[i].path);
        stbds_arrput(b->slots, s);
    }
}

/* One clip: its records, its sample data and scalar tracks as DATA chunks (referenced, not
 * copied: the unit outlives the builder). */
static void kiln__emit_anim(kiln__blob_builder *b, const kiln__anim *an, uint32_t source)
{
    kiln_blob_animation rec;
    memset(&rec, 0, sizeof rec);
    uint32_t index = (uint32_t)stbds_arrlenu(b->animations);
    rec.name = kiln__builder_name(b, KILN_SECTION_ANIMATIONS, index, an->name);
    rec.source = source;
    rec.framerate = an->framerate;
    rec.flags = an->flags;
    rec.first_frame = an->first_frame;
    rec.last_frame = an->last_frame;
    rec.frame_count = an->frame_count;
    rec.joint_count = an->joint_count;
    rec.block_count = (an->joint_count + KILN_SOA_WIDTH - 1) / KILN_SOA_WIDTH;
    rec.first_joint = (uint32_t)stbds_arrlenu(b->anim_joints);
    rec.first_scalar = (uint32_t)stbds_arrlenu(b->anim_scalars);
    rec.scalar_count = an->scalar_count;
    rec.first_override = (uint32_t)stbds_arrlenu(b->anim_overrides);
    rec.override_count = an->override_count;
    rec.first_event = (uint32_t)stbds_arrlenu(b->anim_events);
    rec.event_count = an->event_count;
    rec.data_offset = kiln__builder_data(b, an->data, an->data_size);
    rec.data_size = an->data_size;
    rec.row_stride = an->row_stride;
    rec.animated_count = an->animated_count;
    rec.error_bound_m = an->error_bound_m;
    rec.error_distance_m = an->error_distance_m;
    stbds_arrput(b->animations, rec);

    for (uint32_t i = 0; i < an->joint_count; i++) {
        const kiln__anim_joint *j = &an->joints[i];
        kiln_blob_anim_joint jr;
        memset(&jr, 0, sizeof jr);
        jr.name = kiln__builder_string(b, j->name);
        jr.name_hash = j->name ? kiln_name_hash(j->name) : 0;
        jr.modes = j->modes;
        memcpy(jr.additive_weight, j->ab, sizeof j->ab);
        stbds_arrput(b->anim_joints, jr);
    }
    for (uint32_t i = 0; i < an->scalar_count; i++) {
        const kiln__anim_scalar *sc = &an->scalars[i];
        kiln_blob_anim_scalar sr;
        memset(&sr, 0, sizeof sr);
        sr.name = kiln__builder_string(b, sc->name);
        sr.name_hash = kiln_name_hash(sc->name);
        sr.kind = sc->kind;
        sr.data_offset = kiln__builder_data(b, sc->values, (uint64_t)an->frame_count * sizeof(float));
        stbds_arrput(b->anim_scalars, sr);
    }
    for (uint32_t i = 0; i < an->override_count; i++) {
        kiln_blob_anim_override o;
        memset(&o, 0, sizeof o);
        o.name = kiln__builder_string(b, an->overrides[i].name);
        o.mode = an->overrides[i].mode;
        o.channels = an->overrides[i].channels;
        o.order = an->overrides[i].order;
        stbds_arrput(b->anim_overrides, o);
    }
    for (uint32_t i = 0; i < an->event_count; i++) {
        kiln_blob_anim_event e;
        memset(&e, 0, sizeof e);
        e.name = kiln__builder_string(b, an->events[i].name);
        e.frame = an->events[i].frame;
        stbds_arrput(b->anim_events, e);
    }
    kiln__builder_count_input(b, KILN_SECTION_ANIMATIONS, an->input_bytes);
}

static uint32_t kiln__global(uint32_t local, uint32_t base)
{
    return local == KILN_BLOB_NONE ? KILN_BLOB_NONE : base + local;
}

static void kiln__emit_unit(kiln__blob_builder *b, const kiln__job *job)
{
    const kiln__bake_unit *u = &job->unit;
    uint32_t base_model = (uint32_t)stbds_arrlenu(b->models);
    uint32_t base_skeleton = (uint32_t)stbds_arrlenu(b->skeletons);
    uint32_t base_mesh = (uint32_t)stbds_arrlenu(b->meshes);
    uint32_t base_hair = (uint32_t)stbds_arrlenu(b->hairs);
    uint32_t base_material = (uint32_t)stbds_arrlenu(b->materials);

    uint32_t mesh = 0, hair = 0, material = 0;
    for (uint32_t i = 0; i < u->model_count; i++) {
        const kiln__model *m = &u->models[i];
        kiln_blob_model rec;
        memset(&rec, 0, sizeof rec);
        rec.name = kiln__builder_name(b, KILN_SECTION_MODELS, base_model + i, m->name);
        rec.skeleton = m->skeleton >= 0 ? base_skeleton + (uint32_t)m->skeleton : KILN_BLOB_NONE;
        rec.first_mesh = base_mesh + mesh;
        while (mesh < u->mesh_count && u->meshes[mesh].model == i) mesh++;
        rec.mesh_count = base_mesh + mesh - rec.first_mesh;
        rec.first_hair = base_hair + hair;
        while (hair < u->hair_count && u->hairs[hair].model == i) hair++;
        rec.hair_count = base_hair + hair - rec.first_hair;
        rec.first_material = base_material + material;
        while (material < u->material_count && u->materials[material].model == i) material++;
        rec.material_count = base_material + material - rec.first_material;
        memcpy(rec.position, m->position, sizeof rec.position);
        memcpy(rec.rotation, m->rotation, sizeof rec.rotation);
        memcpy(rec.scale, m->scale, sizeof rec.scale);
        rec.source = u->source;
        stbds_arrput(b->models, rec);
        if (m->skeleton >= 0) kiln__emit_skeleton(b, &u->skeletons[m->skeleton], base_model + i);
    }

    for (uint32_t i = 0; i < u->material_count; i++)
        kiln__emit_material(b, &u->materials[i], base_model + u->materials[i].model);

    for (uint32_t i = 0; i < u->mesh_count; i++) {
        const kiln__mesh *m = &u->meshes[i];
        int32_t skel = u->models[m->model].skeleton;
        kiln_blob_mesh rec = m->rec;
        rec.name = kiln__builder_name(b, KILN_SECTION_MESHES, base_mesh + i, m->name);
        rec.model = base_model + m->model;
        rec.material = kiln__global(m->material, base_material);
        rec.skeleton = m->skinned && skel >= 0 ? base_skeleton + (uint32_t)skel : KILN_BLOB_NONE;
        rec.first_stream = (uint32_t)stbds_arrlenu(b->streams);
        rec.stream_count = m->stream_count;
        for (uint32_t s = 0; s < m->stream_count; s++) kiln__builder_stream(b, &m->streams[s].desc, m->streams[s].data);
        stbds_arrput(b->meshes, rec);
    }

    for (uint32_t i = 0; i < u->hair_count; i++) {
        const kiln__hair *h = &u->hairs[i];
        kiln_blob_hair rec;
        memset(&rec, 0, sizeof rec);
        rec.name = kiln__builder_name(b, KILN_SECTION_HAIRS, base_hair + i, h->name);
        rec.model = base_model + h->model;
        rec.material = kiln__global(h->material, base_material);
        rec.strand_count = h->strand_count;
        rec.particle_count = h->particle_count;
        rec.strands_stream = kiln__builder_stream(b, &h->strands.desc, h->strands.data);
        rec.particles_stream = kiln__builder_stream(b, &h->particles.desc, h->particles.data);
        stbds_arrput(b->hairs, rec);
    }

    for (uint32_t i = 0; i < u->anim_count; i++) kiln__emit_anim(b, &u->anims[i], u->source);

    for (uint32_t i = 0; i < u->blend_shape_count; i++) {
        const kiln__blend_shape *bs = &u->blend_shapes[i];
        kiln_blob_blend_shape rec;
        memset(&rec, 0, sizeof rec);
        rec.name = kiln__builder_name(b, KILN_SECTION_BLEND_SHAPES, (uint32_t)stbds_arrlenu(b->blend_shapes), bs->name);
        rec.mesh = base_mesh + bs->mesh;
        rec.target_scale = bs->target_scale;
        rec.delta_count = bs->delta_count;
        rec.indices_offset = kiln__builder_data(b, bs->indices, (uint64_t)bs->delta_count * sizeof(uint32_t));
        rec.deltas_offset = kiln__builder_data(b, bs->deltas, (uint64_t)bs->delta_count * 3u * sizeof(float));
        stbds_arrput(b->blend_shapes, rec);
    }
    for (uint32_t i = 0; i < u->constraint_count; i++) {
        kiln_blob_constraint rec = u->constraints[i].rec;
        rec.name = kiln__builder_name(b, KILN_SECTION_CONSTRAINTS, (uint32_t)stbds_arrlenu(b->constraints),
                                      u->constraints[i].name);
        rec.skeleton += base_skeleton;
        stbds_arrput(b->constraints, rec);
    }
    for (uint32_t i = 0; i < u->ik_handle_count; i++) {
        kiln_blob_ik_handle rec = u->ik_handles[i].rec;
        rec.name = kiln__builder_name(b, KILN_SECTION_IK_HANDLES, (uint32_t)stbds_arrlenu(b->ik_handles),
                                      u->ik_handles[i].name);
        rec.skeleton += base_skeleton;
        stbds_arrput(b->ik_handles, rec);
    }

    kiln__builder_count_input(b, KILN_SECTION_BONES, job->bone_bytes);
    kiln__builder_count_input(b, KILN_SECTION_DATA, job->geometry_bytes);
    kiln__builder_count_input(b, KILN_SECTION_MATERIALS, job->material_bytes);
    kiln__builder_count_input(b, KILN_SECTION_INSTANCES, job->instance_bytes);
}

/* REFERENCE_MODELS: reference r's models are those of the input whose absolute path is the
 * reference's resolved path, the first such input with models. Written only when some
 * reference finds one (blob_format.h). */
static void kiln__emit_reference_models(kiln__emit_state *st)
{
    kiln__blob_builder *b = st->b;
    size_t nr = stbds_arrlenu(b->references);
    int found = 0;
    kiln_blob_reference_model *rm = nr ? stbds_arraddnptr(b->reference_models, nr) : NULL;
    for (size_t r = 0; r < nr; r++) {
        rm[r].first_model = KILN_BLOB_NONE;
        rm[r].model_count = 0;
    }
    for (size_t k = 0; k < stbds_shlenu(st->refs); k++) {
        const char *key = st->refs[k].key;
        uint32_t r = st->refs[k].value, first = 0;
        for (uint32_t j = 0; j < st->count; j++) {
            const kiln__bake_unit *u = &st->jobs[j].unit;
            if (u->model_count && u->input_key && strcmp(u->input_key, key) == 0) {
                rm[r].first_model = first;
                rm[r].model_count = u->model_count;
                found = 1;
                break;
            }
            first += u->model_count;
        }
    }
    if (!found) stbds_arrsetlen(b->reference_models, 0);
}

static void kiln__emit_instances(kiln__emit_state *st)
{
    kiln__blob_builder *b = st->b;
    stbds_sh_new_arena(st->refs);
    /* Pass 1: one reference per resolved path, counting its instances. */
    for (uint32_t j = 0; j < st->count; j++) {
        const kiln__bake_unit *u = &st->jobs[j].unit;
        for (uint32_t i = 0; i < u->instance_count; i++) {
            const kiln__instance *inst = &u->instances[i];
            ptrdiff_t at = stbds_shgeti(st->refs, inst->resolved_path);
            uint32_t ref;
            if (at < 0) {
                ref = (uint32_t)stbds_arrlenu(b->references);
                kiln_blob_reference rec;
                memset(&rec, 0, sizeof rec);
                rec.path = kiln__builder_name(b, KILN_SECTION_REFERENCES, ref, inst->path);
                rec.resolved_path = kiln__builder_string(b, inst->root_path);
                stbds_arrput(b->references, rec);
                stbds_shput(st->refs, inst->resolved_path, ref);
            } else {
                ref = st->refs[at].value;
            }
            b->references[ref].instance_count++;
            stbds_arrput(st->ref_of, ref);
        }
    }
    kiln__emit_reference_models(st);
    uint32_t total = 0;
    for (size_t r = 0; r < stbds_arrlenu(b->references); r++) {
        b->references[r].first_instance = total;
        total += b->references[r].instance_count;
        b->references[r].instance_count = 0; /* refilled as a cursor below */
    }
    if (total == 0) return;
    /* Pass 2: place every instance in its reference's range, keeping the input order. */
    kiln_blob_instance *placed = stbds_arraddnptr(b->instances, total);
    memset(placed, 0, (size_t)total * sizeof *placed);
    uint32_t k = 0;
    for (uint32_t j = 0; j < st->count; j++) {
        const kiln__bake_unit *u = &st->jobs[j].unit;
        for (uint32_t i = 0; i < u->instance_count; i++, k++) {
            const kiln__instance *inst = &u->instances[i];
            kiln_blob_reference *ref = &b->references[st->ref_of[k]];
            kiln_blob_instance *rec = &placed[ref->first_instance + ref->instance_count++];
            rec->name = kiln__builder_string(b, inst->name);
            rec->reference = st->ref_of[k];
            rec->source_index = inst->source_index;
            rec->source = u->source;
            memcpy(rec->position, inst->position, sizeof rec->position);
            memcpy(rec->rotation, inst->rotation, sizeof rec->rotation);
            memcpy(rec->scale, inst->scale, sizeof rec->scale);
        }
    }
}

/* The first input that has any hint supplies author, software and up axis; the first with a
 * scene root supplies it (a blob has one metadata record). */
static void kiln__emit_metadata(kiln__emit_state *st)
{
    kiln_blob_metadata *md = &st->b->metadata;
    memset(md, 0, sizeof *md);
    md->source_count = st->count;
    int hints = 0, root = 0;
    for (uint32_t j = 0; j < st->count; j++) {
        const kiln__bake_unit *u = &st->jobs[j].unit;
        if (!hints && (u->author || u->software || u->up_axis != KILN_UP_NONE)) {
            md->author = kiln__builder_string(st->b, u->author);
            md->software = kiln__builder_string(st->b, u->software);
            md->up_axis = u->up_axis;
            hints = 1;
        }
        if (!root && u->scene_root_rel) {
            md->scene_root = kiln__builder_string(st->b, u->scene_root_rel);
            root = 1;
        }
    }
}

static kiln_result kiln__emit_guarded(kiln__emit_state *st)
{
    if (setjmp(st->ds.oom)) return KILN_ERR_OUT_OF_MEMORY;
    kiln__builder_init(st->b);
    for (uint32_t j = 0; j < st->count; j++) kiln__emit_unit(st->b, &st->jobs[j]);
    kiln__emit_instances(st);
    kiln__emit_metadata(st);
    return KILN_OK;
}

kiln_result kiln__emit(kiln__blob_builder *b, const kiln__job *jobs, uint32_t count, const kiln_allocator *a)
{
    kiln__emit_state st;
    memset(&st, 0, sizeof st);
    st.b = b;
    st.jobs = jobs;
    st.count = count;
    memset(b, 0, sizeof *b);
    kiln__ds_enter(&st.ds, a);
    kiln_result r = kiln__emit_guarded(&st);
    stbds_shfree(st.refs);
    stbds_arrfree(st.ref_of);
    kiln__ds_leave(&st.ds);
    return r;
}
