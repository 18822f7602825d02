/* Private: the plumbing shared by the typed Cast accessors (cast_model.c, cast_material.c,
 * cast_skeleton.c, cast_anim.c, cast_world.c): node checks, typed property fetches that apply
 * the format's defaults and report every repair, and scoped hash references.
 *
 * Reporting policy, so that every kind behaves alike:
 *   - a failure (the caller drops the node) is reported with severity ERROR;
 *   - a repair that keeps the data (a default, a normalised quaternion, a duplicate) is a
 *     WARNING;
 *   - a repair that loses data (an attribute of the wrong length dropped) is an ERROR;
 *   - reports name the node path plus the property, and the property's byte offset (the
 *     node's when there is no property).
 */
#ifndef KILN_BAKER_CAST_SCENE_UTIL_H
#define KILN_BAKER_CAST_SCENE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "kiln/bake/cast_scene.h"

/* Accepted property types, one bit per type id. */
#define KILN__TB  0x001u
#define KILN__TH  0x002u
#define KILN__TI  0x004u
#define KILN__TL  0x008u
#define KILN__TF  0x010u
#define KILN__TD  0x020u
#define KILN__TS  0x040u
#define KILN__TV2 0x080u
#define KILN__TV3 0x100u
#define KILN__TV4 0x200u
/* The format's lenient sets (reference section F): any integer width for integer fields and
 * booleans, f or d for floats. */
#define KILN__T_INT   (KILN__TB | KILN__TH | KILN__TI | KILN__TL)
#define KILN__T_FLOAT (KILN__TF | KILN__TD)

typedef enum kiln__need { KILN__OPTIONAL = 0, KILN__REQUIRED = 1 } kiln__need;

/* The node being read and where its reports go. */
typedef struct kiln__rd {
    const kiln_cast_doc  *doc;
    const kiln_cast_node *n;
    uint32_t              node;
    const kiln_diag_sink *sink;
} kiln__rd;

uint32_t kiln__type_bit(uint16_t type);
/* Components per element: 2/3/4 for vectors, 1 otherwise. */
uint16_t kiln__type_comps(uint16_t type);

/* Starts an accessor: checks the arguments and that `node` is a node of kind `id` (else
 * ERR_INVALID_ARGUMENT), zeroes `out`, and warns when the node sits under a parent that cannot
 * hold it (the accessor still reads it). A node the parser skipped (opaque) fails without a
 * second report: the parser has already reported why. */
kiln_result kiln__begin(kiln__rd *rd, const kiln_cast_doc *doc, uint32_t node, uint32_t id,
                        const kiln_diag_sink *sink, void *out, size_t out_size);
/* Ends an accessor: zeroes `out` when r is a failure. Returns r. */
kiln_result kiln__finish(kiln_result r, void *out, size_t out_size);

/* Reports about the node being read. `prop` names the property (NULL: the node itself); `p`,
 * when not NULL, supplies the byte offset. */
void kiln__report(const kiln__rd *rd, const char *prop, const kiln_cast_prop *p, kiln_result code,
                  kiln_severity sev, const char *fmt, ...) KILN__PRINTF(6, 7);

/* Finds property `name` whose type is in `types`. Duplicate names warn (the last one wins).
 * Absent: *out = NULL, and a required property fails with ERR_CAST_MISSING_PROPERTY. Wrong
 * type: a required property fails with ERR_CAST_WRONG_TYPE, an optional one is reported and
 * treated as absent. */
kiln_result kiln__prop(const kiln__rd *rd, const char *name, uint32_t types, kiln__need need,
                       const kiln_cast_prop **out);
/* As kiln__prop for a single value: an empty array counts as absent (ERR_CAST_EMPTY when
 * required), more than one element warns and element 0 is used. Strings always hold one. */
kiln_result kiln__value(const kiln__rd *rd, const char *name, uint32_t types, kiln__need need,
                        const kiln_cast_prop **out);

/* Typed single values. The _opt forms leave *out unchanged (the caller's default) when the
 * property is absent and return whether a value was read. */
kiln_result kiln__str(const kiln__rd *rd, const char *name, kiln__need need, const char **out);
kiln_result kiln__uint(const kiln__rd *rd, const char *name, kiln__need need, uint64_t *out);
int         kiln__uint_opt(const kiln__rd *rd, const char *name, uint64_t *out);
/* A b/h/i/l count saturated to `max` (a larger value is reported as ERR_LIMIT). */
uint32_t    kiln__count_opt(const kiln__rd *rd, const char *name, uint32_t max);
uint32_t    kiln__flag(const kiln__rd *rd, const char *name, uint32_t def);
/* An f/d value; absent or not finite gives `def` (the latter reported). */
float       kiln__float(const kiln__rd *rd, const char *name, float def);
/* An f/d value that must be > 0 and finite, else `def` (reported; a missing value is
 * reported only when warn_missing). */
float       kiln__positive(const kiln__rd *rd, const char *name, float def, int warn_missing);

/* A vector of `comps` floats from a property of type `type_bit`. Absent or any component not
 * finite: `def` is copied (the latter reported). Returns 1 when the stored value was used. */
int kiln__vec(const kiln__rd *rd, const char *name, uint32_t type_bit, uint32_t comps, const float *def,
              float *out);
/* The normalisation kiln__quat applies: the length in double precision, each component
 * divided by it and rounded to float. Returns the length; `q` is left as it is when the
 * length is below 1e-8 or not finite. (The Cast exporter searches its preimages with it, so
 * that what it writes reads back bit for bit.) */
double kiln__quat_unit(float q[4]);
/* A v4 quaternion (x, y, z, w), normalised; identity when absent, not finite or of length
 * < 1e-8 (reported). Returns 1 when the stored value was used. */
int kiln__quat(const kiln__rd *rd, const char *name, float out[4]);
/* Model and Instance placement: p (0,0,0), r (0,0,0,1), s (1,1,1). */
void kiln__transform(const kiln__rd *rd, float position[3], float rotation[4], float scale[3]);

/* An array property as a zero-copy view (count 0 when absent or treated as absent). */
kiln_result kiln__array(const kiln__rd *rd, const char *name, uint32_t types, kiln__need need,
                        kiln_cast_array *out);
void kiln__array_of(const kiln_cast_prop *p, kiln_cast_array *out);
/* Drops a per-element array whose length is not `expected` (count 0, reported as ERROR since
 * its data is lost). Returns 1 when the array is kept (absent arrays are kept as absent). */
int kiln__expect_len(const kiln__rd *rd, const char *name, kiln_cast_array *a, uint64_t expected,
                     const char *what);

/* An enumerated string: index into names[0..count). Absent: *out unchanged (optional) or
 * ERR_CAST_MISSING_PROPERTY. Unknown: `fallback` with a warning when fallback >= 0, else
 * ERR_CAST_BAD_VALUE. */
kiln_result kiln__enum(const kiln__rd *rd, const char *name, const char *const *names, int count,
                       kiln__need need, int fallback, int *out);

/* A hash reference: reads property `name` (an integer) and resolves it among the children of
 * `scope` to a node of kind id_a or id_b (id_b 0: only id_a), first match wins; a hash shared
 * by several nodes in scope warns. *hash receives the value (0 when absent), *target the node
 * (KILN_CAST_NONE when absent or unresolved). Required references that are missing or do not
 * resolve fail (ERR_CAST_MISSING_PROPERTY, ERR_CAST_UNRESOLVED); optional ones that do not
 * resolve are reported and left unresolved. */
kiln_result kiln__ref(const kiln__rd *rd, const char *name, kiln__need need, uint32_t scope, uint32_t id_a,
                      uint32_t id_b, uint64_t *hash, uint32_t *target);
/* The resolution step of kiln__ref for a hash already read from property p (named `name` in
 * reports). */
kiln_result kiln__resolve(const kiln__rd *rd, const char *name, const kiln_cast_prop *p, uint64_t hash,
                          kiln__need need, uint32_t scope, uint32_t id_a, uint32_t id_b, uint32_t *target);

/* The first failure of a sequence of reads, so that one call reports every missing required
 * property instead of stopping at the first. */
static inline kiln_result kiln__first(kiln_result a, kiln_result b) { return a != KILN_OK ? a : b; }

/* Counts the children of `node` by kind in one pass. ids[k] receives its count in counts[k]. */
void kiln__count_kinds(const kiln_cast_doc *doc, uint32_t node, const uint32_t *ids, uint32_t *counts,
                       uint32_t kinds);

#endif
