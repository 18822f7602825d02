/* Typed views of Instance and Metadata nodes (Cast reference B, C.8, C.10). */
#include "cast_scene_util.h"

static kiln_result kiln__read_instance(const kiln__rd *rd, kiln_cast_instance *inst)
{
    /* rf names a File among the Instance's own children, not anywhere in the scene. */
    kiln_result r = kiln__ref(rd, "rf", KILN__REQUIRED, rd->node, KILN_CAST_ID_FILE, 0, &inst->reference_hash,
                              &inst->file);
    if (r != KILN_OK) return r;
    kiln_cast_file file;
    r = kiln_cast_get_file(rd->doc, inst->file, &file, rd->sink);
    if (r != KILN_OK) {
        kiln__report(rd, "rf", kiln_cast_find_prop(rd->doc, rd->node, "rf", NULL), r, KILN_SEVERITY_ERROR,
                     "the referenced File has no usable path; the instance is dropped");
        return r;
    }
    inst->path = file.path;
    kiln__str(rd, "n", KILN__OPTIONAL, &inst->name);
    kiln__transform(rd, inst->position, inst->rotation, inst->scale);
    return KILN_OK;
}

kiln_result kiln_cast_get_instance(const kiln_cast_doc *doc, uint32_t node, kiln_cast_instance *out,
                                   const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_INSTANCE, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_instance(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}

/* Index = kiln_cast_up_axis value; "none" is not a format value but maps to the same thing. */
static const char *const kiln__up_names[] = {"none", "x", "y", "z"};

static kiln_result kiln__read_metadata(const kiln__rd *rd, kiln_cast_metadata *m)
{
    int up = KILN_CAST_UP_NONE;
    kiln__str(rd, "a", KILN__OPTIONAL, &m->author);
    kiln__str(rd, "s", KILN__OPTIONAL, &m->software);
    kiln__str(rd, "sr", KILN__OPTIONAL, &m->scene_root);
    kiln__enum(rd, "up", kiln__up_names, 4, KILN__OPTIONAL, KILN_CAST_UP_NONE, &up);
    m->up_axis = (kiln_cast_up_axis)up;
    return KILN_OK;
}

kiln_result kiln_cast_get_metadata(const kiln_cast_doc *doc, uint32_t node, kiln_cast_metadata *out,
                                   const kiln_diag_sink *sink)
{
    kiln__rd rd;
    kiln_result r = kiln__begin(&rd, doc, node, KILN_CAST_ID_METADATA, sink, out, sizeof *out);
    if (r == KILN_OK) r = kiln__read_metadata(&rd, out);
    return kiln__finish(r, out, sizeof *out);
}

uint32_t kiln_cast_find_metadata(const kiln_cast_doc *doc)
{
    if (!doc) return KILN_CAST_NONE;
    for (uint32_t k = 0; k < kiln_cast_root_count(doc); k++) {
        const kiln_cast_node *root = kiln_cast_node_at(doc, kiln_cast_root(doc, k));
        if (!root || root->id != KILN_CAST_ID_ROOT || (root->flags & KILN_CAST_NODE_OPAQUE)) continue;
        for (uint32_t c = root->first_child; c != KILN_CAST_NONE;) {
            const kiln_cast_node *n = kiln_cast_node_at(doc, c);
            if (n->id == KILN_CAST_ID_METADATA && !(n->flags & KILN_CAST_NODE_OPAQUE)) return c;
            c = n->next_sibling;
        }
    }
    return KILN_CAST_NONE;
}
