/* Private to the lossy clip encoder: its state, shared by the bit allocation
 * (bake_anim_lossy.c) and the error measurement (bake_anim_lossy_measure.c). */
#ifndef KILN_BAKE_ANIM_LOSSY_H
#define KILN_BAKE_ANIM_LOSSY_H

#include <stdint.h>

#include "bake_anim.h"
#include "bake_anim_world.h"

#define KILN__STEPS 24
/* The widths a track may take, narrowest first: 0 (constant), 3 to 24 bits, 32 (raw). */
extern const uint32_t kiln__widths[KILN__STEPS];

/* Frames used for the sensitivity statistics (every frame is used for measuring). */
#define KILN__STAT_FRAMES 512u
/* The most nodes x frames the per-frame caches may hold; a longer clip is stored lossless, with
 * a warning. (2 GiB at the 960 bytes per node and frame the caches once took.) */
#define KILN__CACHE_LIMIT (((uint64_t)1 << 31) / 960u)
/* Failing frames remembered per block. */
#define KILN__HOT 8u

/* The parts of a local a candidate recomputes: all, the translation, the scaled rotation, or
 * the scaled rotation and the scale. */
enum { KILN__CAND_ALL, KILN__CAND_T, KILN__CAND_RS, KILN__CAND_RS_S };

typedef struct kiln__node {
    int32_t  parent;       /* node index (lower), -1 for roots */
    uint32_t ssc;
    uint32_t joint;        /* clip joint driving it, or UINT32_MAX */
    uint32_t depth, height;
    double   rest[KILN_ANIM_COMPONENTS];
} kiln__node;

/* A local transform ready to compose: the rotation's columns scaled by its scale (before any
 * segment scale compensation) and the translation; the scale itself apart (kiln__scl: only
 * segment scale compensation and a scale candidate read it). */
typedef struct kiln__loc {
    double rs[9];
    double t[3];
} kiln__loc;

typedef struct kiln__scl {
    double s[3];
} kiln__scl;

/* A measured node as a measurement visits it: where it reads and writes its transforms, at
 * frame 0 (frame r: + r x nodes; for pw and w, + (r x nodes & their `frames`), all ones for
 * the cache, 0 for the one-frame scratch; in the candidate's locals, + r x cand_lanes). */
typedef struct kiln__step {
    const kiln__loc *lc;          /* its local as cached */
    kiln__loc *out;               /* its local as measured (own only): the cache's, or the
                                   * candidate's (kiln__lossy.cand) */
    kiln__scl *out_s;             /* its scale as measured (own only), alike */
    const kiln__scl *sc;          /* its scale as cached */
    const kiln__scl *ps;          /* its parent's scale as read (NULL for roots): the cache's, or
                                   * the candidate's where it changes the parent's scale */
    const kiln__wxf *pw;          /* its parent's world as read (NULL for roots) */
    const kiln__wxf *raw;         /* its raw world */
    kiln__wxf *w;                 /* its world as measured */
    size_t pw_frames, w_frames;   /* the cache's (all ones) or the one-frame scratch (0) */
    double err2, limit2;          /* its largest squared error so far, and its allowance */
    uint32_t node;
    uint8_t  own, ssc, ps_cand;   /* ps_cand: ps is the candidate's */
    uint8_t  lanes_rot;           /* own: its scaled rotation is made for all lanes at once
                                   * (kiln__lossy.rot_lanes) before the frame's nodes */
} kiln__step;

typedef struct kiln__lossy {
    const kiln__anim *an;
    const kiln_allocator *a;
    uint32_t n, nj, blocks, nodes;
    kiln__node *node;
    uint32_t *joint_node;
    uint32_t *node_block;  /* per node: the block of its joint, UINT32_MAX for none */
    uint32_t *modes;       /* per joint, overrides resolved */
    kiln__anim_plan *plan; /* blocks x KILN_ANIM_COMPONENTS */
    uint8_t *step;         /* index into kiln__widths, per plan */
    float *range;          /* per plan and lane: the lowest and the highest value (2 floats) */
    float *dec;            /* decoded values, joint-major like the raw ones */
    float *backup;         /* one track's lanes: KILN_SOA_WIDTH x n */
    uint8_t *need, *measure;
    uint32_t *list, listed; /* the nodes flagged in measure, in order */
    kiln__step *steps;     /* per listed node, during a measurement */
    uint32_t steps_blk;    /* the block the steps' places were made for (UINT32_MAX: none) */
    double *node_err;      /* per node: largest error of the last measurement */
    double *limit2;        /* per node: the largest squared error within its allowance */
    double *limit_of;      /* per node: the allowance limit2 was made for */
    uint32_t *tried;       /* per frame: the measurement (`measured`) that visited it last */
    uint32_t measured;
    double target, distance;
    int avx2;              /* the AVX2 kernels of bake_anim_world.h run on this CPU */
    uint64_t cache_nodes;  /* nodes x frames the caches hold; above KILN__CACHE_LIMIT none are
                            * made (UINT64_MAX: no memory for them) */
    /* Per frame and node (frame-major): the raw world transforms, the decoded local transforms
     * of the encoding as it stands (the cache) and its decoded world transforms. A candidate
     * for one block recomputes the locals of that block's joints into `cand` (per frame, one
     * per lane: the parts it changes, cand_kind) and the worlds of their subtrees, frame by
     * frame into `scratch` (one world per listed node): it reads the cached locals of the other
     * joints and the cached worlds of the parents its subtrees hang from. A passing candidate's
     * parts are copied into the cache (kiln__lossy_keep). The cached worlds are made when so
     * needed (w_valid per node), from the cached locals; a passing candidate leaves its
     * subtrees' stale. Every one of them is the double the full evaluation computes. */
    kiln__wxf *raw_world, *world, *scratch;
    kiln__loc *local;
    kiln__scl *scale;          /* the cached locals' scales */
    void *blocks_of[4];        /* the allocations of raw_world, world, local and scale (at 64 bytes) */
    kiln__loc *cand;           /* per frame, cand_lanes (a lane's joint's index % KILN_SOA_WIDTH);
                                * at least nodes (one frame's locals for kiln__lossy_raw_worlds) */
    kiln__scl *cand_scale;     /* their scales, alike */
    uint32_t cand_lanes;       /* KILN_SOA_WIDTH, or fewer when there are fewer joints */
    unsigned cand_kind;        /* KILN__CAND_*: what the last candidate wrote into cand */
    /* A rotation candidate's lanes whose scaled rotations the AVX2 frame loop makes side by
     * side (a bit per lane: listed own nodes rotating by an absolute or relative mode): their
     * decoded qx (qy, qz, qw follow at n floats apart), nodes, relative ones and rest
     * rotations, and whether qw is rebuilt. */
    struct {
        uint32_t mask, relative, qw_rebuilt;
        const float *q[KILN_SOA_WIDTH];
        uint32_t node[KILN_SOA_WIDTH];
        double rest[4][KILN_SOA_WIDTH];
    } rot_lanes;
    uint8_t *w_valid;          /* per node */
    /* A full measurement recomputes the cached locals of the blocks whose plans were set since
     * the last one (kiln__lossy_apply), all of them before the first (locals_made). */
    uint8_t *block_stale;
    int locals_made;
    uint32_t *path;            /* per node: the nodes whose worlds are being made */
    uint32_t *hot;         /* per block: the KILN__HOT frames its candidates last failed at, the
                            * latest first (UINT32_MAX: none), tried first */
    uint32_t *order;       /* frames, every 4th first: a failing candidate fails early */
    uint32_t *block_order; /* per block (n frames each, UINT32_MAX first when unset): the frames
                            * by the margin its last passing candidate left, the tightest first */
    double *frame_err;     /* when set, per frame and node: the squared errors a full measurement
                            * (no allowances) finds, for the first block orders */
    double *score;         /* per frame: the tightest margin of the measurement under way */
    /* A candidate's track is decoded frame by frame as it is measured (a failing one is
     * usually rejected after a few frames): lazy_done flags the decoded frames. */
    int lazy;
    uint32_t lazy_blk;
    unsigned lazy_c;
    struct {                /* the candidate's lanes, resolved once (kiln__lazy_lanes) */
        const float *v;    /* the raw track, NULL for none */
        float *d;          /* its decoded values in L->dec */
        float lo, extent, step, constant;
    } lazy_lane[KILN_SOA_WIDTH];
    /* the same lanes' lo, extent and step side by side (0 past lazy_lanes), for the AVX2 decode */
    float lazy_lo[KILN_SOA_WIDTH], lazy_extent[KILN_SOA_WIDTH], lazy_step[KILN_SOA_WIDTH];
    unsigned lazy_lanes;
    /* For the AVX2 decode, all eight lanes: lane l's value at frame r is lazy_v[l][r &
     * lazy_vmask[l]] (lazy_lo[l] where the lane has no track or is past lazy_lanes), its decoded
     * value goes to lazy_d[l][r & lazy_dmask[l]] (lazy_sink[l] past lazy_lanes). */
    const float *lazy_v[KILN_SOA_WIDTH];
    float *lazy_d[KILN_SOA_WIDTH];
    uint32_t lazy_vmask[KILN_SOA_WIDTH], lazy_dmask[KILN_SOA_WIDTH];
    float lazy_sink[KILN_SOA_WIDTH];
    int lazy_full;         /* every lane has a track (its masks are all ones) */
    uint8_t *lazy_done;
    /* Per block and frame: the rotation matrices of its joints as the encoding stands (9
     * doubles per lane), for its scale candidates, which leave the rotations as they are; made
     * as first needed (rot_done: a bit per lane), forgotten when a rotation track narrows. */
    double *rot;
    uint8_t *rot_done;
} kiln__lossy;

static inline float *kiln__dec(kiln__lossy *L, uint32_t joint, unsigned c)
{
    return L->dec + ((size_t)joint * KILN_ANIM_COMPONENTS + c) * L->n;
}

/* ---- bake_anim_lossy_measure.c ---------------------------------------------------------- */

/* Sets the plan of (blk, c) to width index `step`: its width and per-lane ranges. */
void kiln__lossy_apply_plan(kiln__lossy *L, uint32_t blk, unsigned c, unsigned step);
/* Resolves the lanes of (blk, c) by its plan as it stands, for the frame-by-frame decode. */
void kiln__lossy_lazy_lanes(kiln__lossy *L, uint32_t blk, unsigned c);
/* The decoded values of eight lanes of width `width` (3 to 24 bits) by the AVX2 decode that
 * kiln__lossy_lazy_lanes' frame-by-frame decode uses on CPUs that have it, into out; returns 0
 * (out untouched) where it is not built or the CPU lacks AVX2. Its values are
 * kiln__clip_dequant(kiln__anim_quantize_step(...)) bit for bit. */
int kiln__lossy_decode_avx2(const float x[8], const float lo[8], const float extent[8], const float step[8],
                            uint32_t width, float out[8]);
/* Sets the plan of (blk, c) to width index `step` and decodes it into L->dec. */
void kiln__lossy_apply(kiln__lossy *L, uint32_t blk, unsigned c, unsigned step);
/* The raw world transforms of every node at every frame, into the cache. */
void kiln__lossy_raw_worlds(kiln__lossy *L);
/* Flags the nodes driven by block `blk` (every node when blk is UINT32_MAX), their
 * descendants (measured) and ancestors (evaluated). */
void kiln__lossy_select(kiln__lossy *L, uint32_t blk);
/* The largest error of the flagged nodes over every frame with block blk's plans as they
 * stand (INFINITY as soon as a node exceeds its allowance in `allowed`, when given); with
 * `commit`, the measured transforms become the cache's (without, blk is one block). */
double kiln__lossy_measure(kiln__lossy *L, uint32_t blk, const double *allowed, int commit);
/* Sorts frames by score (per frame), highest first (ties: lower frame first), in place. */
void kiln__lossy_sort_frames(uint32_t *f, uint32_t n, const double *score);
/* A measured candidate of block blk passed: the cache takes the parts of its locals it recomputed. */
void kiln__lossy_keep(kiln__lossy *L, uint32_t blk);

#endif /* KILN_BAKE_ANIM_LOSSY_H */
