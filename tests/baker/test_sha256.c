/* SHA-256, the bake cache's key: the FIPS 180-4 example vectors, and the same digest whatever
 * the update sizes. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"

static void hex_of(const void *data, size_t size, char hex[65])
{
    kiln__sha256 h;
    unsigned char d[32];
    kiln__sha256_init(&h);
    kiln__sha256_update(&h, data, size);
    kiln__sha256_final(&h, d);
    kiln__sha256_hex(d, hex);
}

Test(sha256, fips_180_4_examples)
{
    char hex[65];
    hex_of("", 0, hex);
    cr_expect_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hex_of("abc", 3, hex);
    cr_expect_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 56 bytes: padding spills */
    hex_of(two, strlen(two), hex);
    cr_expect_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char *million = malloc(1000000);
    memset(million, 'a', 1000000);
    hex_of(million, 1000000, hex);
    cr_expect_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(million);
}

Test(sha256, split_updates_give_the_same_digest)
{
    unsigned char buf[300];
    for (unsigned i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 7 + 3);
    char whole[65];
    hex_of(buf, sizeof buf, whole);
    static const size_t steps[] = {1, 3, 63, 64, 65, 127};
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        kiln__sha256 h;
        unsigned char d[32];
        char hex[65];
        kiln__sha256_init(&h);
        for (size_t at = 0; at < sizeof buf; at += steps[s])
            kiln__sha256_update(&h, buf + at, sizeof buf - at < steps[s] ? sizeof buf - at : steps[s]);
        kiln__sha256_final(&h, d);
        kiln__sha256_hex(d, hex);
        cr_expect_str_eq(hex, whole, "updates of %zu bytes", steps[s]);
    }
}
