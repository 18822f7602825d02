/* Private: SHA-256 (FIPS 180-4), for the content-addressed bake cache (baker/cli/cli_cache.c).
 *
 *   kiln__sha256 h;
 *   kiln__sha256_init(&h);
 *   kiln__sha256_update(&h, bytes, size);   // any number of times
 *   kiln__sha256_final(&h, digest);         // 32 bytes
 */
#ifndef KILN_BAKER_SHA256_H
#define KILN_BAKER_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct kiln__sha256 {
    uint32_t      state[8];
    uint64_t      bytes;      /* hashed so far */
    unsigned char block[64];  /* the partial block: bytes % 64 of them */
} kiln__sha256;

void kiln__sha256_init(kiln__sha256 *h);
void kiln__sha256_update(kiln__sha256 *h, const void *data, size_t size);
void kiln__sha256_final(kiln__sha256 *h, unsigned char digest[32]);

/* The digest as 64 lowercase hex digits and a NUL. */
void kiln__sha256_hex(const unsigned char digest[32], char hex[65]);

#endif
