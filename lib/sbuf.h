/* sbuf.h - a growing byte string.
 *
 * Appends never fail in the caller's face: the first allocation failure
 * sets oom, frees nothing and drops every later append, so a writer
 * appends freely and checks once at the end (sbuf_finish returns NULL).
 * The bytes are always NUL-terminated once anything was appended; binary
 * data (embedded NULs) is fine, len counts it. A zeroed struct is an empty
 * buffer: struct sbuf b = {0}.
 */
#ifndef GPUSIZER_LIB_SBUF_H
#define GPUSIZER_LIB_SBUF_H

#include <stdarg.h>
#include <stddef.h>

struct sbuf {
	char *p;    /* NULL until the first append */
	size_t len; /* bytes written, not counting the NUL */
	size_t cap; /* bytes allocated */
	int oom;    /* an allocation failed: the contents are incomplete */
};

/* An empty buffer (the same as = {0}). */
void sbuf_init(struct sbuf *b);
/* Room for n more bytes plus the NUL: 0, or -1 (and oom) when it cannot. */
int sbuf_reserve(struct sbuf *b, size_t n);
/* Appends n bytes of s. */
void sbuf_putn(struct sbuf *b, const void *s, size_t n);
/* Appends the C string s. */
void sbuf_put(struct sbuf *b, const char *s);
/* Appends printf-formatted text. */
void sbuf_printf(struct sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* The string, handed to the caller (who frees it; "" when nothing was
 * appended); NULL after an allocation failure, the buffer freed then.
 * The buffer is empty afterwards either way.
 */
char *sbuf_finish(struct sbuf *b);
/* Frees the bytes; the buffer is empty afterwards. */
void sbuf_free(struct sbuf *b);

#endif
