/* sbuf.c - a growing byte string (see sbuf.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sbuf.h"

/* The first allocation; doubled from there, so appending n bytes costs
 * O(n) amortised.
 */
#define SBUF_FIRST_CAP 256

void sbuf_init(struct sbuf *b)
{
	memset(b, 0, sizeof(*b));
}

int sbuf_reserve(struct sbuf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->oom)
		return -1;
	if (n > (size_t)-1 / 2 - b->len - 1) {
		b->oom = 1;
		return -1;
	}
	if (b->len + n + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : SBUF_FIRST_CAP;
	while (cap < b->len + n + 1)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void sbuf_putn(struct sbuf *b, const void *s, size_t n)
{
	if (sbuf_reserve(b, n) != 0)
		return;
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void sbuf_put(struct sbuf *b, const char *s)
{
	sbuf_putn(b, s, strlen(s));
}

void sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		b->oom = 1;
		return;
	}
	if (sbuf_reserve(b, (size_t)n) != 0)
		return;
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbuf_vprintf(b, fmt, ap);
	va_end(ap);
}

char *sbuf_finish(struct sbuf *b)
{
	char *p;

	if (sbuf_reserve(b, 0) != 0) {
		sbuf_free(b);
		return NULL;
	}
	p = b->p;
	p[b->len] = '\0';
	sbuf_init(b);
	return p;
}

void sbuf_free(struct sbuf *b)
{
	free(b->p);
	sbuf_init(b);
}
