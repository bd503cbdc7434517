/* sha256.h - SHA-256 (FIPS 180-4), for migration checksums and token hashes.
 *
 * Kept rather than taken from libcrypto (whose headers libssl-dev would
 * add): the digests are stored state (schema_migrations.sha256 and
 * api_tokens.token_sha256), so swapping the implementation buys nothing
 * and risks both; the libFuzzer build links this file without libpq's
 * dependencies; tests/api/t_migrations.sh checks it against sha256sum(1).
 * 100 lines of arithmetic, no secret-dependent branches or lookups.
 */
#ifndef GPUSIZER_LIB_SHA256_H
#define GPUSIZER_LIB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_BYTES 32

/* Writes the 32-byte digest of data[0..len) to out. */
void sha256(const void *data, size_t len, uint8_t out[SHA256_BYTES]);
/* Writes the digest as 64 lowercase hex digits plus NUL to hex. */
void sha256_hex(const void *data, size_t len, char hex[2 * SHA256_BYTES + 1]);
/* Constant-time comparison of two digests: 1 when equal. */
int sha256_equal(const uint8_t a[SHA256_BYTES], const uint8_t b[SHA256_BYTES]);

#endif
