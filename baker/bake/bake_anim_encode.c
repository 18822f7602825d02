/* Clip sample data (blob_format.h, 1.1): slot order, the constant block, the track table and
 * the frame rows.
 *
 * A (block, component) pair whose 8 lanes do not change over the clip goes to the constant
 * block; the others become tracks, one 8-lane group per row. Lossless clips store tracks as
 * raw floats, so the runtime reads key values back bit for bit; lossy clips are quantised by
 * bake_anim_lossy.c against an error bound.
 */
#include <string.h>

#include "bake_anim.h"
#include "util.h"
#include "bake_report.h"
#include "ds.h"

/* ---- slot order ------------------------------------------------------------------------------ */

static uint32_t kiln__fnv(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

kiln_result kiln__anim_align(const kiln_allocator *a, kiln__anim *anim, const kiln__skeleton *sk)
{
    if (!sk || anim->joint_count == 0) return KILN_OK;
    uint32_t nb = sk->bone_count, nj = anim->joint_count;
    uint32_t *hash = kiln__realloc(a, NULL, (size_t)nb * sizeof *hash + 1);
    uint32_t *bone_of = kiln__realloc(a, NULL, (size_t)nj * sizeof *bone_of);
    uint32_t *joint_at = kiln__realloc(a, NULL, (size_t)nb * sizeof *joint_at + 1);
    kiln_result r = KILN_ERR_OUT_OF_MEMORY;
    kiln__anim_joint *joints = NULL;
    if (!hash || !bone_of || !joint_at) goto done;
    for (uint32_t i = 0; i < nb; i++) hash[i] = kiln__fnv(sk->names[i]), joint_at[i] = UINT32_MAX;

    /* Exact names only: the runtime's looser matches are for skeletons the baker never saw. */
    uint32_t matched = 0, last = 0;
    for (uint32_t j = 0; j < nj; j++) {
        bone_of[j] = UINT32_MAX;
        if (!anim->joints[j].name) continue;
        uint32_t h = kiln__fnv(anim->joints[j].name);
        for (uint32_t i = 0; i < nb; i++)
            if (hash[i] == h && joint_at[i] == UINT32_MAX && strcmp(sk->names[i], anim->joints[j].name) == 0) {
                bone_of[j] = i, joint_at[i] = j, matched++;
                if (i > last) last = i;
                break;
            }
    }
    /* Placeholders for the bones in between that the clip does not animate, unless they would
     * outnumber the animated ones (a clip of a few bones of a large skeleton): then the
     * runtime's scatter is cheaper than sampling the placeholders. */
    uint32_t padding = matched ? last + 1 - matched : 0;
    r = KILN_OK;
    if (matched == 0 || padding > matched + KILN_SOA_WIDTH) goto done;
    uint32_t total = last + 1 + (nj - matched);
    joints = kiln__realloc(a, NULL, (size_t)total * sizeof *joints);
    if (!joints) {
        r = KILN_ERR_OUT_OF_MEMORY;
        goto done;
    }
    memset(joints, 0, (size_t)total * sizeof *joints);
    for (uint32_t i = 0; i <= last; i++) {
        if (joint_at[i] != UINT32_MAX) joints[i] = anim->joints[joint_at[i]];
        else joints[i].ab[0] = joints[i].ab[1] = joints[i].ab[2] = 1.0f; /* placeholder: no name, no curves */
    }
    uint32_t k = last + 1;
    for (uint32_t j = 0; j < nj; j++)
        if (bone_of[j] == UINT32_MAX) joints[k++] = anim->joints[j];
    kiln__free(a, anim->joints);
    anim->joints = joints;
    anim->joint_count = total;
done:
    kiln__free(a, hash);
    kiln__free(a, bone_of);
    kiln__free(a, joint_at);
    return r;
}

/* ---- dense access ---------------------------------------------------------------------------- */

static const float kiln__identity_c[KILN_ANIM_COMPONENTS] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1};

float kiln__anim_identity(unsigned c) { return kiln__identity_c[c]; }

/* The 8 lanes of component c of block blk are the same at every frame (bit for bit). */
static int kiln__pair_constant(const kiln__anim *an, uint32_t blk, unsigned c)
{
    for (unsigned l = 0; l < KILN_SOA_WIDTH; l++) {
        const float *v = kiln__anim_track(an, blk * KILN_SOA_WIDTH + l, c);
        if (!v) continue;
        for (uint32_t r = 1; r < an->frame_count; r++)
            if (memcmp(&v[r], &v[0], sizeof(float)) != 0) return 0;
    }
    return 1;
}

/* ---- layout -------------------------------------------------------------------------------- */

kiln_result kiln__anim_layout(const kiln_allocator *a, kiln__anim *an, const kiln__anim_plan *plan, int lossy)
{
    uint32_t blocks = (an->joint_count + KILN_SOA_WIDTH - 1) / KILN_SOA_WIDTH;
    uint32_t tracks = 0, row = 0;
    for (uint32_t p = 0; p < blocks * KILN_ANIM_COMPONENTS; p++)
        if (plan[p].width) tracks++, row = kiln__clip_track_at(row, plan[p].width) + kiln__clip_track_bytes(plan[p].width);
    uint32_t stride = kiln__clip_row_stride(row);
    kiln__clip_layout lay;
    if (stride < row || !kiln__clip_layout_of(0, blocks, tracks, an->frame_count, stride, lossy, &lay) || lay.end > SIZE_MAX)
        return KILN_ERR_LIMIT;
    uint64_t size = lay.end, rows_at = lay.rows;
    unsigned char *data = kiln__realloc(a, NULL, size ? (size_t)size : 1);
    if (!data) return KILN_ERR_OUT_OF_MEMORY;
    memset(data, 0, (size_t)size);

    kiln_blob_anim_track *table = (kiln_blob_anim_track *)(void *)(data + lay.tracks);
    uint32_t t = 0, offset = 0;
    for (uint32_t blk = 0; blk < blocks; blk++) {
        kiln_soa_xform *cst = (kiln_soa_xform *)(void *)data + blk;
        for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) {
            const kiln__anim_plan *pl = &plan[blk * KILN_ANIM_COMPONENTS + c];
            float *lanes = (float *)(void *)((unsigned char *)cst + (size_t)c * KILN_SOA_WIDTH * sizeof(float));
            for (unsigned l = 0; l < KILN_SOA_WIDTH; l++) lanes[l] = pl->width ? kiln__identity_c[c] : pl->constant[l];
            if (!pl->width) continue;
            kiln_blob_anim_track *tr = &table[t++];
            tr->block = (uint16_t)blk;
            tr->component = (uint8_t)c;
            tr->width = (uint8_t)pl->width;
            offset = kiln__clip_track_at(offset, pl->width);
            tr->row_offset = offset;
            memcpy(tr->range_min, pl->range_min, sizeof tr->range_min);
            memcpy(tr->range_extent, pl->range_extent, sizeof tr->range_extent);
            kiln__anim_pack(an, blk, c, pl, data + rows_at + offset, stride);
            offset += kiln__clip_track_bytes(pl->width);
        }
    }
    kiln__free(a, an->data);
    an->data = data;
    an->data_size = size;
    an->row_stride = stride;
    an->animated_count = tracks;
    return KILN_OK;
}

/* Lane values of the rows of a track: raw floats (width 32) or quantised lanes packed as
 * kiln__clip_pack_lanes lays them out. The lanes' tracks and steps are resolved once. */
void kiln__anim_pack(const kiln__anim *an, uint32_t blk, unsigned c, const kiln__anim_plan *pl, unsigned char *dst,
                     uint32_t stride)
{
    const float *v[KILN_SOA_WIDTH];
    float step[KILN_SOA_WIDTH];
    uint32_t w = pl->width;
    for (unsigned l = 0; l < KILN_SOA_WIDTH; l++) {
        v[l] = kiln__anim_track(an, blk * KILN_SOA_WIDTH + l, c);
        step[l] = w == KILN__CLIP_RAW ? 0.0f : kiln__clip_step(pl->range_extent[l], w);
    }
    for (uint32_t r = 0; r < an->frame_count; r++, dst += stride) {
        uint32_t q[KILN_SOA_WIDTH];
        float x[KILN_SOA_WIDTH];
        for (unsigned l = 0; l < KILN_SOA_WIDTH; l++) x[l] = v[l] ? v[l][r] : kiln__identity_c[c];
        if (w == KILN__CLIP_RAW) {
            memcpy(dst, x, sizeof x);
            continue;
        }
        if (!kiln__anim_quantize8(x, pl->range_min, pl->range_extent, step, w, q))
            for (unsigned l = 0; l < KILN_SOA_WIDTH; l++)
                q[l] = kiln__anim_quantize_step(x[l], pl->range_min[l], pl->range_extent[l], w, step[l]);
        kiln__clip_pack_lanes(q, w, dst);
    }
}

/* ---- lossless ------------------------------------------------------------------------------ */

static kiln_result kiln__encode_lossless(const kiln_allocator *a, kiln__anim *an)
{
    uint32_t blocks = (an->joint_count + KILN_SOA_WIDTH - 1) / KILN_SOA_WIDTH;
    kiln__anim_plan *plan = kiln__realloc(a, NULL, (size_t)blocks * KILN_ANIM_COMPONENTS * sizeof *plan + 1);
    if (!plan) return KILN_ERR_OUT_OF_MEMORY;
    memset(plan, 0, (size_t)blocks * KILN_ANIM_COMPONENTS * sizeof *plan);
    for (uint32_t blk = 0; blk < blocks; blk++)
        for (unsigned c = 0; c < KILN_ANIM_COMPONENTS; c++) {
            kiln__anim_plan *pl = &plan[blk * KILN_ANIM_COMPONENTS + c];
            if (!kiln__pair_constant(an, blk, c)) {
                pl->width = KILN__CLIP_RAW;
                continue;
            }
            for (unsigned l = 0; l < KILN_SOA_WIDTH; l++) {
                const float *v = kiln__anim_track(an, blk * KILN_SOA_WIDTH + l, c);
                pl->constant[l] = v ? v[0] : kiln__identity_c[c];
            }
        }
    kiln_result r = kiln__anim_layout(a, an, plan, 0);
    kiln__free(a, plan);
    an->flags &= ~KILN_ANIM_LOSSY;
    an->error_bound_m = an->error_distance_m = an->max_error_m = 0.0f;
    return r;
}

kiln_result kiln__anim_encode(const kiln_allocator *a, const kiln_bake_options *o, const kiln_diag_sink *sink,
                              kiln__anim *an, const kiln__skeleton *skeleton)
{
    an->flags = an->looping ? KILN_ANIM_LOOPING : 0u;
    if (o->flags & KILN_BAKE_LOSSY_ANIMATION) {
        int met = 0;
        kiln_result r = kiln__encode_lossy(a, o, sink, an, skeleton, &met);
        if (r != KILN_OK || met) return r;
        /* the bound could not be met (reported): lossless keeps every value */
    }
    return kiln__encode_lossless(a, an);
}
