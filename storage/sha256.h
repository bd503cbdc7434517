/* sha256.h - SHA-256 (FIPS 180-4), for migration checksums and token hashes.
 *
 * Kept in storage/ because both things it hashes are stored secrets or
 * stored checksums; no OpenSSL dependency for 100 lines of arithmetic.
 */
#ifndef GPUSIZER_STORAGE_SHA256_H
#define GPUSIZER_STORAGE_SHA256_H

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
