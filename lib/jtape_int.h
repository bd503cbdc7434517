/* jtape_int.h - what lib/jtape.c (the parser) and lib/jtape_read.c (the
 * decoding and getters) share; not for other users.
 */
#ifndef GPUSIZER_LIB_JTAPE_INT_H
#define GPUSIZER_LIB_JTAPE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/jtape.h"

/* Four hex digits at p as a value, or -1 when one is not a hex digit. */
int32_t jt_hex4(const unsigned char *p);
/* Decodes raw (validated) string contents s[0..n) into out (room for n
 * bytes: decoding never lengthens); the decoded length.
 */
size_t jt_decode(const unsigned char *s, size_t n, unsigned char *out);
/* 1 when string tokens a and b decode to the same bytes. */
int jt_tok_streq(const struct jtape *t, uint32_t a, uint32_t b);

#endif
