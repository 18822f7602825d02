/* Private to the *.Shape importer's animation files (shape_anim.c, shape_curve.c,
 * shape_events.c): a layer's tracks as read, and the layer's frame grid. */
#ifndef KILN_IMPORT_SHAPE_ANIM_H
#define KILN_IMPORT_SHAPE_ANIM_H

#include "shape_internal.h"

enum { KILN__CH_T, KILN__CH_S, KILN__CH_R, KILN__CH_COUNT };

typedef struct kiln__track {
    const char    *node_name;
    uint64_t       offset;
    int32_t        node;
    uint16_t       counts[4];  /* position, scale, rotation, event keys */
    const uint8_t *keys[3];    /* position, scale, rotation key records */
    uint64_t       keys_at[3];
    double        *event_times;
    const char   **event_names;
} kiln__track;

typedef struct kiln__layer {
    uint32_t index;
    double   kft;       /* ms per frame */
    double   duration;
    uint32_t last;      /* F */
    uint32_t warned;    /* W14 reasons already reported (bits) */
} kiln__layer;

/* Little-endian double at p. */
double kiln__shape_rd_f64(const uint8_t *p);
/* A W14 reason (bit) reported once per layer. */
void kiln__shape_w14(kiln__shape *ctx, kiln__layer *ly, unsigned bit, uint64_t at, const char *field, const char *what);
/* The curves of channel `ch` of a track (three for T and S, one for R), sampled at integer frames. */
kiln_result kiln__shape_emit_channel(kiln__shape *ctx, kiln__layer *ly, const kiln__track *tr, int ch,
                                     kiln_source_animation *anim, uint32_t track_index);
/* The event keys of every track as the clip's notifications. */
kiln_result kiln__shape_notifications(kiln__shape *ctx, kiln__layer *ly, kiln__track *tracks, uint32_t track_count,
                                      kiln_source_animation *anim);

#endif /* KILN_IMPORT_SHAPE_ANIM_H */
