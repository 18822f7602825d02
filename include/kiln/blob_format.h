/* kiln/blob_format.h - the on-disk layout of a Kiln blob (format 1.x).
 *
 * A blob is one little-endian file that the runtime uses in place: load (one read or mmap),
 * verify, then read records through offsets. docs/blob-format.md is the prose reference; this
 * header is the normative layout. Every struct here is plain data with fixed-width fields, no
 * enums, no bitfields, no pointers, and explicit padding, so its size is the same on every
 * compiler (checked by static assertions in the runtime).
 *
 * Thread safety: these are plain data definitions; a verified blob is read-only (kiln/blob.h),
 * so its records may be read from any number of threads.
 *
 *   offset 0            kiln_blob_header (64 bytes)
 *   offset 64           kiln_blob_section[section_count] (32 bytes each)
 *   64-byte aligned     sections, in ascending offset order, zero padding between them
 *
 * Offsets are from the start of the blob. Strings are u32 offsets into the STRINGS section
 * (offset 0 is the empty string). Record indices are u32; KILN_BLOB_NONE means "none".
 * Evolution: a new minor version only adds section kinds or uses reserved fields that were
 * zero; readers skip section kinds they do not know (unless the section is flagged
 * REQUIRED), so v1.0 readers keep working on v1.x blobs. A layout change bumps the section's
 * own version; a reader rejects a known section whose version it does not support.
 */
#ifndef KILN_BLOB_FORMAT_H
#define KILN_BLOB_FORMAT_H

#include <stdint.h>

#define KILN_BLOB_MAGIC         0x4E4C494Bu /* "KILN" */
#define KILN_BLOB_VERSION_MAJOR 1
#define KILN_BLOB_VERSION_MINOR 3
#define KILN_BLOB_ALIGN         64u         /* alignment of the blob base and of every section */
#define KILN_BLOB_DATA_ALIGN    16u         /* alignment of every stream inside a DATA section */
#define KILN_BLOB_NONE          0xFFFFFFFFu
#define KILN_SOA_WIDTH          8u          /* joints per kiln_soa_xform block */

/* Header flags. Unknown bits are rejected by readers. */
#define KILN_BLOB_FLAG_QUANTIZED 0x1u /* at least one stream uses a lossy format */

typedef struct kiln_blob_header {
    uint32_t magic;                /* KILN_BLOB_MAGIC */
    uint16_t version_major;        /* KILN_BLOB_VERSION_MAJOR; other majors are rejected */
    uint16_t version_minor;        /* any minor is accepted */
    uint32_t flags;                /* KILN_BLOB_FLAG_* */
    uint32_t header_size;          /* 64 */
    uint64_t total_size;           /* bytes in the blob, header included; a multiple of 64 */
    uint32_t section_count;
    uint32_t section_table_offset; /* 64 */
    uint32_t crc32c;               /* CRC-32C (Castagnoli) of bytes [0, total_size), this field
                                    * read as zero: the header is covered too (version_minor and
                                    * the flags have no other check) */
    uint8_t  reserved[28];         /* zero */
} kiln_blob_header;

/* Section kinds: FourCC codes, stored little-endian ("STRS" reads as 'S','T','R','S'). */
#define KILN_FOURCC(a, b, c, d) ((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) | ((uint32_t)(d) << 24))
#define KILN_SECTION_STRINGS       KILN_FOURCC('S', 'T', 'R', 'S') /* bytes: NUL-terminated UTF-8 */
#define KILN_SECTION_METADATA      KILN_FOURCC('M', 'E', 'T', 'A') /* kiln_blob_metadata[1] */
#define KILN_SECTION_NAME_INDEX    KILN_FOURCC('N', 'I', 'D', 'X') /* kiln_blob_name_entry[], sorted */
#define KILN_SECTION_MODELS        KILN_FOURCC('M', 'O', 'D', 'L') /* kiln_blob_model[] */
#define KILN_SECTION_SKELETONS     KILN_FOURCC('S', 'K', 'E', 'L') /* kiln_blob_skeleton[] */
#define KILN_SECTION_BONES         KILN_FOURCC('B', 'O', 'N', 'E') /* kiln_blob_bone[] */
#define KILN_SECTION_REST_POSE     KILN_FOURCC('R', 'E', 'S', 'T') /* kiln_soa_xform[] */
#define KILN_SECTION_INVERSE_BIND  KILN_FOURCC('I', 'B', 'N', 'D') /* float[16][] column-major */
#define KILN_SECTION_MESHES        KILN_FOURCC('M', 'E', 'S', 'H') /* kiln_blob_mesh[] */
#define KILN_SECTION_HAIRS         KILN_FOURCC('H', 'A', 'I', 'R') /* kiln_blob_hair[] */
#define KILN_SECTION_STREAMS       KILN_FOURCC('S', 'T', 'R', 'M') /* kiln_blob_stream[] */
#define KILN_SECTION_DATA          KILN_FOURCC('D', 'A', 'T', 'A') /* bytes: stream payloads */
#define KILN_SECTION_MATERIALS     KILN_FOURCC('M', 'A', 'T', 'L') /* kiln_blob_material[] */
#define KILN_SECTION_MATERIAL_SLOTS KILN_FOURCC('M', 'S', 'L', 'T') /* kiln_blob_material_slot[] */
#define KILN_SECTION_INSTANCES     KILN_FOURCC('I', 'N', 'S', 'T') /* kiln_blob_instance[] */
#define KILN_SECTION_REFERENCES    KILN_FOURCC('I', 'R', 'E', 'F') /* kiln_blob_reference[] */
/* 1.1: animation */
#define KILN_SECTION_ANIMATIONS    KILN_FOURCC('A', 'N', 'I', 'M') /* kiln_blob_animation[] */
#define KILN_SECTION_ANIM_JOINTS   KILN_FOURCC('A', 'J', 'N', 'T') /* kiln_blob_anim_joint[] */
#define KILN_SECTION_ANIM_SCALARS  KILN_FOURCC('A', 'S', 'C', 'L') /* kiln_blob_anim_scalar[] */
#define KILN_SECTION_ANIM_OVERRIDES KILN_FOURCC('A', 'O', 'V', 'R') /* kiln_blob_anim_override[] */
#define KILN_SECTION_ANIM_EVENTS   KILN_FOURCC('A', 'E', 'V', 'T') /* kiln_blob_anim_event[] */
/* 1.2: rigging */
#define KILN_SECTION_BLEND_SHAPES  KILN_FOURCC('B', 'S', 'H', 'P') /* kiln_blob_blend_shape[] */
#define KILN_SECTION_CONSTRAINTS   KILN_FOURCC('C', 'N', 'S', 'T') /* kiln_blob_constraint[] */
#define KILN_SECTION_IK_HANDLES    KILN_FOURCC('I', 'K', 'H', 'D') /* kiln_blob_ik_handle[] */
/* 1.3: references resolved to the models baked into the same blob */
#define KILN_SECTION_REFERENCE_MODELS KILN_FOURCC('I', 'R', 'M', 'D') /* kiln_blob_reference_model[] */

/* Section flags. */
#define KILN_SECTION_FLAG_REQUIRED 0x1u /* a reader that does not know this kind must reject the blob */

typedef struct kiln_blob_section {
    uint32_t kind;      /* KILN_SECTION_* */
    uint16_t version;   /* layout version of this kind (1 for every v1.0 kind) */
    uint16_t flags;     /* KILN_SECTION_FLAG_* */
    uint64_t offset;    /* from the blob start; a multiple of 64 */
    uint64_t size;      /* bytes; count * stride for record sections */
    uint32_t count;     /* records (byte sections: 0) */
    uint32_t stride;    /* record size in bytes (byte sections: 0) */
} kiln_blob_section;

/* ---- records -------------------------------------------------------------------------- */

/* up_axis values */
#define KILN_UP_NONE 0u
#define KILN_UP_X    1u
#define KILN_UP_Y    2u
#define KILN_UP_Z    3u

typedef struct kiln_blob_metadata {
    uint32_t author;      /* string */
    uint32_t software;    /* string */
    uint32_t scene_root;  /* string: "." when instance paths were resolved against a scene root (the
                           * references' resolved paths are relative to it; never a path of the
                           * baking machine), else none */
    uint32_t up_axis;     /* KILN_UP_* (a hint; data is never rotated) */
    uint32_t source_count;/* Cast files baked into this blob */
    uint32_t reserved[3];
} kiln_blob_metadata;

/* Name lookups: one table for every named record kind, sorted by (kind, hash, index).
 * hash = FNV-1a 32 of the UTF-8 name (kiln_name_hash). Equal hashes are resolved by comparing
 * the string. */
typedef struct kiln_blob_name_entry {
    uint32_t kind;   /* the section kind of the record: MODELS, MESHES, MATERIALS, BONES, REFERENCES, ... */
    uint32_t hash;
    uint32_t index;  /* record index in that section (bones: global index into BONES) */
    uint32_t name;   /* string */
} kiln_blob_name_entry;

typedef struct kiln_blob_model {
    uint32_t name;
    uint32_t skeleton;                   /* index into SKELETONS or NONE */
    uint32_t first_mesh, mesh_count;     /* range in MESHES */
    uint32_t first_hair, hair_count;     /* range in HAIRS */
    uint32_t first_material, material_count; /* range in MATERIALS */
    float    position[3];
    float    rotation[4];                /* x, y, z, w; unit length */
    float    scale[3];
    uint32_t source;                     /* index of the input file (0-based, bake order) */
    uint32_t reserved;
} kiln_blob_model;

typedef struct kiln_blob_skeleton {
    uint32_t model;
    uint32_t bone_count;
    uint32_t first_bone;   /* range in BONES and INVERSE_BIND (bone_count entries) */
    uint32_t first_soa;    /* range in REST_POSE */
    uint32_t soa_count;    /* ceil(bone_count / KILN_SOA_WIDTH) */
    uint32_t depth;        /* levels of the deepest chain */
    uint32_t reserved[2];
} kiln_blob_skeleton;

/* Bone flags */
#define KILN_BONE_SEGMENT_SCALE_COMPENSATE 0x1u

/* Bones are stored parent-first: parent < own index within the skeleton. */
typedef struct kiln_blob_bone {
    uint32_t name;         /* string */
    uint32_t name_hash;    /* kiln_name_hash(name) */
    int32_t  parent;       /* index within the skeleton, -1 for roots */
    uint32_t source_index; /* the bone's index in the Cast file (the remap, for joints and curves) */
    uint32_t flags;        /* KILN_BONE_* */
    uint32_t reserved[3];
} kiln_blob_bone;

/* Local transforms of KILN_SOA_WIDTH joints, structure of arrays. Lanes past the bone count
 * hold the identity. Rotations are x, y, z, w quaternions of unit length. */
typedef struct kiln_soa_xform {
    float tx[KILN_SOA_WIDTH], ty[KILN_SOA_WIDTH], tz[KILN_SOA_WIDTH];
    float qx[KILN_SOA_WIDTH], qy[KILN_SOA_WIDTH], qz[KILN_SOA_WIDTH], qw[KILN_SOA_WIDTH];
    float sx[KILN_SOA_WIDTH], sy[KILN_SOA_WIDTH], sz[KILN_SOA_WIDTH];
} kiln_soa_xform;

/* Stream semantics */
#define KILN_ATTR_POSITION      1u
#define KILN_ATTR_NORMAL        2u
#define KILN_ATTR_TANGENT       3u
#define KILN_ATTR_TEXCOORD      4u  /* set = UV layer */
#define KILN_ATTR_COLOR         5u  /* set = color layer */
#define KILN_ATTR_JOINTS        6u  /* influences per vertex, skeleton bone indices, heaviest first */
#define KILN_ATTR_WEIGHTS       7u  /* influences per vertex, sum 1, descending */
#define KILN_ATTR_INDICES       8u  /* triangle list */
#define KILN_ATTR_HAIR_STRANDS  9u  /* u32 first particle of each strand, plus a final end entry */
#define KILN_ATTR_HAIR_PARTICLES 10u

/* Stream formats: element layout. "decode" means value = decode_offset + decode_scale * q,
 * with q the normalised integer (UNORM: [0,1], SNORM: [-1,1]). */
#define KILN_FORMAT_F32x1   1u
#define KILN_FORMAT_F32x2   2u
#define KILN_FORMAT_F32x3   3u
#define KILN_FORMAT_F32x4   4u
#define KILN_FORMAT_U8x4_UNORM  5u  /* packed colour, bytes R, G, B, A */
#define KILN_FORMAT_U16x1   6u      /* indices */
#define KILN_FORMAT_U32x1   7u      /* indices, strand offsets */
#define KILN_FORMAT_U16xN   8u      /* joints: `components` u16 per vertex */
#define KILN_FORMAT_F32xN   9u      /* weights: `components` floats per vertex */
#define KILN_FORMAT_UNORM16x4 10u   /* quantised positions (x,y,z,0) with decode */
#define KILN_FORMAT_OCT16x2   11u   /* octahedral unit vectors, snorm16 */
#define KILN_FORMAT_UNORM16x2 12u   /* quantised UVs with decode */

typedef struct kiln_blob_stream {
    uint32_t semantic;      /* KILN_ATTR_* */
    uint32_t format;        /* KILN_FORMAT_* */
    uint32_t set;           /* layer index (UV, colour), else 0 */
    uint32_t components;    /* values per element (joints/weights: influences) */
    uint32_t count;         /* elements */
    uint32_t stride;        /* bytes per element */
    uint64_t offset;        /* from the blob start, 16-byte aligned, inside a DATA section */
    float    decode_offset[4];
    float    decode_scale[4];
    uint32_t reserved[2];
} kiln_blob_stream;

/* Skinning methods */
#define KILN_SKIN_LINEAR    0u
#define KILN_SKIN_DUAL_QUAT 1u

typedef struct kiln_blob_mesh {
    uint32_t name;
    uint32_t model;
    uint32_t material;         /* index into MATERIALS or NONE */
    uint32_t skeleton;         /* index into SKELETONS or NONE (unskinned) */
    uint32_t vertex_count;
    uint32_t index_count;      /* 3 * triangles */
    uint32_t first_stream;     /* range in STREAMS */
    uint32_t stream_count;
    uint32_t influences;       /* joints/weights per vertex, 0 = unskinned */
    uint32_t skinning;         /* KILN_SKIN_* */
    uint32_t uv_layers, color_layers;
    float    bounds_min[3];    /* model-space bounds of the positions */
    float    bounds_max[3];
} kiln_blob_mesh;

typedef struct kiln_blob_hair {
    uint32_t name;
    uint32_t model;
    uint32_t material;        /* index or NONE */
    uint32_t strand_count;
    uint32_t particle_count;
    uint32_t strands_stream;  /* stream index: KILN_ATTR_HAIR_STRANDS, strand_count + 1 entries */
    uint32_t particles_stream;/* stream index: KILN_ATTR_HAIR_PARTICLES, F32x3 */
    uint32_t reserved;
} kiln_blob_hair;

typedef struct kiln_blob_material {
    uint32_t name;
    uint32_t type;            /* string, e.g. "pbr" */
    uint32_t model;
    uint32_t first_slot, slot_count;  /* range in MATERIAL_SLOTS */
    uint32_t reserved[3];
} kiln_blob_material;

/* Slot kinds */
#define KILN_SLOT_FILE  1u
#define KILN_SLOT_COLOR 2u

typedef struct kiln_blob_material_slot {
    uint32_t name;          /* "albedo", "normal", "extra0", ... */
    uint32_t kind;          /* KILN_SLOT_* */
    uint32_t path;          /* string: file path as written in the Cast file (KILN_SLOT_FILE) */
    uint32_t color_space;   /* 0 sRGB, 1 linear: how `rgba` was authored */
    float    rgba[4];       /* colour as authored (KILN_SLOT_COLOR) */
    float    rgba_linear[4];/* the same colour decoded to linear (alpha unchanged) */
} kiln_blob_material_slot;

typedef struct kiln_blob_instance {
    uint32_t name;          /* string */
    uint32_t reference;     /* index into REFERENCES */
    uint32_t source_index;  /* position among the input's imported Instances (file order) */
    uint32_t source;        /* input file index */
    float    position[3];
    float    rotation[4];   /* unit quaternion */
    float    scale[3];
    uint32_t reserved[2];
} kiln_blob_instance;

/* One referenced asset. Instances are grouped by reference: the instances of reference r are
 * INSTANCES[first_instance .. first_instance + instance_count). */
typedef struct kiln_blob_reference {
    uint32_t path;           /* string: the File path as written */
    uint32_t resolved_path;  /* string: normalised, relative to the scene root (absolute only when
                              * written so): never a path of the baking machine */
    uint32_t first_instance;
    uint32_t instance_count;
} kiln_blob_reference;

/* ---- 1.1: animation ---------------------------------------------------------------------
 *
 * A clip stores uniform samples at its own frame rate for every integer frame in
 * [first_frame, last_frame]; frame f is at time f / framerate. Bone channels are grouped by
 * "joint slot" (one per animated bone name, clip order) into SoA blocks of KILN_SOA_WIDTH
 * slots. Each block has KILN_ANIM_COMPONENTS components (tx ty tz qx qy qz qw sx sy sz); a
 * (block, component) pair whose 8 lanes are constant over the clip is stored once in the
 * clip's constant block and left out of the per-frame rows. The sample data of a clip lives in
 * DATA at `data_offset`; docs/blob-format.md describes the row encoding for lossless (float)
 * and lossy (range-reduced integer) clips. Modes (absolute, relative, additive with its
 * weight) are per component, after CurveModeOverride resolution; the runtime applies them
 * against the bound skeleton's rest pose (absolute/relative) or the pose underneath
 * (additive). */

#define KILN_ANIM_COMPONENTS 10u

/* Animation flags */
#define KILN_ANIM_LOOPING 0x1u /* `lo` was set: playback wraps by default */
#define KILN_ANIM_LOSSY   0x2u /* rows are quantised (see docs/blob-format.md) */

typedef struct kiln_blob_animation {
    uint32_t name;
    uint32_t source;            /* input file index */
    float    framerate;         /* frames per second, > 0 */
    uint32_t flags;             /* KILN_ANIM_* */
    int64_t  first_frame;       /* min key frame over curves and notification tracks (0 if none) */
    int64_t  last_frame;        /* max key frame (1 if none) */
    uint32_t frame_count;       /* samples stored per row set: last - first + 1 */
    uint32_t joint_count;       /* joint slots */
    uint32_t block_count;       /* ceil(joint_count / KILN_SOA_WIDTH) */
    uint32_t first_joint;       /* range in ANIM_JOINTS */
    uint32_t first_scalar, scalar_count;     /* range in ANIM_SCALARS (bs, vb) */
    uint32_t first_override, override_count; /* range in ANIM_OVERRIDES */
    uint32_t first_event, event_count;       /* range in ANIM_EVENTS, sorted by frame */
    uint64_t data_offset;       /* sample data in DATA (16-aligned) */
    uint64_t data_size;
    uint32_t row_stride;        /* bytes per frame row */
    uint32_t animated_count;    /* (block, component) pairs stored per row */
    float    error_bound_m;     /* lossy: max error at error_distance_m, else 0 */
    float    error_distance_m;
    uint32_t reserved[4];
} kiln_blob_animation;

/* Component modes, 2 bits each in kiln_blob_anim_joint.modes (bit 2*c). */
#define KILN_MODE_NONE     0u /* no curve: the base value (rest, or the pose underneath for additive clips) */
#define KILN_MODE_ABSOLUTE 1u
#define KILN_MODE_RELATIVE 2u
#define KILN_MODE_ADDITIVE 3u

typedef struct kiln_blob_anim_joint {
    uint32_t name;               /* bone name the curves target; 0 (""): a placeholder slot without
                                    curves, which keeps the following slots in a skeleton's bone
                                    order (binding skips it; it is not reported missing) */
    uint32_t name_hash;
    uint32_t modes;              /* 2 bits per component c in [0, 10): KILN_MODE_*; qx..qw share one mode */
    uint32_t reserved;
    float    additive_weight[4]; /* ab per channel group: translation, rotation, scale, unused */
} kiln_blob_anim_joint;

/* Scalar track kinds */
#define KILN_SCALAR_BLEND_SHAPE 1u /* bs: weight, linear */
#define KILN_SCALAR_VISIBILITY  2u /* vb: step, 0 hidden, nonzero visible */

typedef struct kiln_blob_anim_scalar {
    uint32_t name;          /* blend shape name (bs) or node name (vb) */
    uint32_t name_hash;
    uint32_t kind;          /* KILN_SCALAR_* */
    uint32_t reserved;
    uint64_t data_offset;   /* frame_count floats in DATA (16-aligned) */
} kiln_blob_anim_scalar;

/* CurveModeOverride, kept for bind-time resolution against the target skeleton. */
typedef struct kiln_blob_anim_override {
    uint32_t name;          /* bone name (nn) */
    uint32_t mode;          /* KILN_MODE_ABSOLUTE / RELATIVE / ADDITIVE */
    uint32_t channels;      /* bit 0 translation (ot), bit 1 rotation (or), bit 2 scale (os) */
    uint32_t order;         /* file order, for ties */
} kiln_blob_anim_override;

/* Clip sample data at kiln_blob_animation.data_offset (in DATA, 16-aligned), in this order:
 *
 *   constants  block_count x kiln_soa_xform: for every (block, component) pair that is not
 *              stored per frame, its value (constant over the clip); lanes of unused slots
 *              and components whose mode is NONE hold the identity value.
 *   tracks     animated_count x kiln_blob_anim_track, sorted by (block, component): the
 *              (block, component) pairs stored per frame and how.
 *   rows       frame_count rows of row_stride bytes (row_stride a multiple of 16), starting at
 *              the first 16-byte boundary after the track table; row r holds frame
 *              first_frame + r. Inside a row, track k's 8 lanes start at its
 *              row_offset. A track of width 32 stores 8 raw floats. A track of width w in
 *              [1, 24] stores 8 unsigned w-bit integers q packed little-endian (lane i in
 *              bits [i*w, (i+1)*w) of its w bytes), decoded as
 *              value = range_min[i] + range_extent[i] * q / (2^w - 1).
 *   slack      lossy clips only: 16 zero bytes after the last row, inside data_size, so that
 *              decoders may load 16 bytes from any track of any row.
 *   scalars    per kiln_blob_anim_scalar: frame_count floats at its own data_offset.
 *
 * Lossless clips use width 32 for every track, so sampled values at integer frames are the
 * Cast key values bit for bit. Lossy clips never store qw (component 6): it is rebuilt as
 * sqrt(max(0, 1 - qx² - qy² - qz²)) (the baker makes every stored rotation have qw >= 0). */
typedef struct kiln_blob_anim_track {
    uint16_t block;          /* SoA block of joint slots */
    uint8_t  component;      /* 0..9: tx ty tz qx qy qz qw sx sy sz */
    uint8_t  width;          /* bits per lane: 1 to 24 (quantised), or 32 (raw float) */
    uint32_t row_offset;     /* byte offset of this track's lanes inside a row */
    float    range_min[KILN_SOA_WIDTH];
    float    range_extent[KILN_SOA_WIDTH];
} kiln_blob_anim_track;

typedef struct kiln_blob_anim_event {
    uint32_t name;          /* notification track name */
    uint32_t reserved;
    int64_t  frame;
} kiln_blob_anim_event;

/* ---- 1.2: rigging -----------------------------------------------------------------------
 *
 * Blend shapes are sparse position deltas on a baked mesh; constraints and IK handles name
 * bones of one skeleton by their (parent-first) index within it. Bone indices here are local
 * to the skeleton (0 .. bone_count), like kiln_blob_bone.parent. */

/* One BlendShape: `delta_count` vertices of mesh `mesh` move by `delta` (target − base, in the
 * mesh's model/bind space) per unit of effective weight, w_eff = clamp(w, 0, target_scale)
 * (Cast reference C.5). Data in DATA, each array 16-byte aligned: vertex indices (u32,
 * ascending, distinct, < the mesh's vertex_count, in the baked vertex order) at
 * indices_offset, and float[3] deltas at deltas_offset. */
typedef struct kiln_blob_blend_shape {
    uint32_t name;
    uint32_t mesh;              /* index into MESHES */
    float    target_scale;      /* ts > 0 (1 when absent or not positive) */
    uint32_t delta_count;
    uint64_t indices_offset;    /* from the blob start, in DATA */
    uint64_t deltas_offset;
    uint32_t reserved[2];
} kiln_blob_blend_shape;

/* Constraint types */
#define KILN_CONSTRAINT_POINT  0u
#define KILN_CONSTRAINT_ORIENT 1u
#define KILN_CONSTRAINT_SCALE  2u
/* Constraint flags */
#define KILN_CONSTRAINT_SKIP_X 0x1u
#define KILN_CONSTRAINT_SKIP_Y 0x2u
#define KILN_CONSTRAINT_SKIP_Z 0x4u

/* One Constraint (Cast reference E.2, evaluated as the spec doc recommends: Maya semantics in
 * model space, after FK and IK, in file order). `offset` is resolved at bake time: the
 * custom offset, or the one that keeps the rest pose unchanged when `mo` was set (computed
 * from the rest pose), or the type's default: translation (x, y, z, 0) for POINT, quaternion
 * (x, y, z, w) for ORIENT, scale (x, y, z, 1) for SCALE. */
typedef struct kiln_blob_constraint {
    uint32_t name;
    uint32_t type;              /* KILN_CONSTRAINT_* */
    uint32_t skeleton;          /* index into SKELETONS */
    uint32_t bone;              /* constrained bone, index within the skeleton */
    uint32_t target;            /* target bone, index within the skeleton (!= bone) */
    uint32_t flags;             /* KILN_CONSTRAINT_SKIP_* */
    float    weight;            /* [0, 1] */
    uint32_t order;             /* position among the skeleton's imported constraints (file order) */
    float    offset[4];
    uint32_t reserved[4];
} kiln_blob_constraint;

/* IK handle flags */
#define KILN_IK_USE_TARGET_ROTATION 0x1u

/* One IKHandle (Cast reference E.1): the chain from start_bone down to end_bone (a
 * descendant), chain_length bones inclusive, solved toward goal = W(target_bone) ·
 * target_offset; a pole vector bone's model-space position (minus the start's) gives the
 * bend plane; a pole bone's local X twist rotates that plane about the start→goal axis. */
typedef struct kiln_blob_ik_handle {
    uint32_t name;
    uint32_t skeleton;          /* index into SKELETONS */
    uint32_t start_bone, end_bone;
    uint32_t target_bone;       /* KILN_BLOB_NONE: inactive (kept for tools, never solved) */
    uint32_t pole_vector_bone;  /* or KILN_BLOB_NONE */
    uint32_t pole_bone;         /* or KILN_BLOB_NONE */
    uint32_t flags;             /* KILN_IK_* */
    uint32_t chain_length;      /* bones from start to end inclusive (>= 2) */
    uint32_t order;             /* position among the skeleton's imported IK handles (file order) */
    float    target_offset[3];
    uint32_t reserved[3];
} kiln_blob_ik_handle;

/* ---- 1.3: references resolved to models ----------------------------------------------
 *
 * When a world and the files it places are baked into one blob, reference r's models are
 * REFERENCE_MODELS[r]: the models of the input whose path is the reference's resolved path,
 * so a game places them with no string matching. One record per REFERENCES record, in the
 * same order; the section is written only when at least one reference names an input of the
 * bake (absent: no reference does). A blob holding it says version_minor 3; a blob without
 * it says 2 (the lowest minor that describes it, so its bytes do not change with this
 * addition). */
typedef struct kiln_blob_reference_model {
    uint32_t first_model;  /* index into MODELS, or KILN_BLOB_NONE (the file is not in this blob) */
    uint32_t model_count;  /* MODELS[first_model .. first_model + model_count); 0 with NONE */
} kiln_blob_reference_model;

#endif /* KILN_BLOB_FORMAT_H */
