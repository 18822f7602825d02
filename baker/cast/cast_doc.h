/* Private: the parsed Cast document. Tables are stb_ds arrays owned by the doc. */
#ifndef KILN_BAKER_CAST_DOC_H
#define KILN_BAKER_CAST_DOC_H

#include "kiln/bake/cast.h"

/* Key of the scoped hash index: (parent node, NodeHash). pad stays 0 because stb_ds hashes and
 * compares keys as raw bytes. */
typedef struct kiln__hash_key {
    uint64_t hash;
    uint32_t scope;
    uint32_t pad;
} kiln__hash_key;

typedef struct kiln__hash_val {
    uint32_t first;  /* first node with this (scope, hash) in file order */
    uint32_t count;
} kiln__hash_val;

typedef struct kiln__hash_entry {
    kiln__hash_key key;
    kiln__hash_val value;
} kiln__hash_entry;

struct kiln_cast_doc {
    kiln_allocator    alloc;       /* as given (may be zero: libc) */
    const uint8_t    *data;
    size_t            size;
    uint32_t          version;
    uint32_t          flags;
    uint32_t          declared_roots;
    kiln_cast_node   *nodes;       /* stb_ds array */
    kiln_cast_prop   *props;       /* stb_ds array */
    uint32_t         *roots;       /* stb_ds array: node indices of top-level nodes */
    kiln__hash_entry *hash_index;  /* stb_ds hash map */
};

#endif
