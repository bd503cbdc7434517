/* csv.c - CSV cells and rows (see csv.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/csv.h"

void csv_init(struct csv *c, struct sbuf *b, unsigned flags)
{
	c->b = b;
	c->flags = flags;
	c->cells = 0;
}

static void sep(struct csv *c)
{
	if (c->cells++)
		sbuf_putn(c->b, ",", 1);
}

/* s quoted when needed, inner quotes doubled; defuse: an apostrophe first
 * (OWASP "CSV Injection": =, +, -, @, tab and CR start a formula).
 */
static void field(struct csv *c, const char *s, int defuse)
{
	int quote = (c->flags & CSV_QUOTE_ALL) || strpbrk(s, ",\"\r\n");

	defuse = defuse && *s && strchr("=+-@\t\r", *s);
	if (quote || defuse)
		sbuf_putn(c->b, "\"", 1);
	if (defuse)
		sbuf_putn(c->b, "'", 1);
	while (*s) {
		size_t run = strcspn(s, "\"");

		sbuf_putn(c->b, s, run);
		s += run;
		if (*s) {
			sbuf_putn(c->b, "\"\"", 2);
			s++;
		}
	}
	if (quote || defuse)
		sbuf_putn(c->b, "\"", 1);
}

void csv_cell(struct csv *c, const char *s)
{
	sep(c);
	field(c, s ? s : "", 1);
}

void csv_cellf(struct csv *c, const char *fmt, ...)
{
	struct sbuf t = {0};
	va_list ap;

	va_start(ap, fmt);
	sbuf_vprintf(&t, fmt, ap);
	va_end(ap);
	sep(c);
	if (t.oom)
		c->b->oom = 1;
	else
		field(c, t.p ? t.p : "", 0);
	sbuf_free(&t);
}

void csv_empty(struct csv *c)
{
	sep(c);
	if (c->flags & CSV_QUOTE_ALL)
		sbuf_putn(c->b, "\"\"", 2);
}

void csv_eol(struct csv *c)
{
	if (c->flags & CSV_LF)
		sbuf_putn(c->b, "\n", 1);
	else
		sbuf_putn(c->b, "\r\n", 2);
	c->cells = 0;
}

void csv_row(struct csv *c, const char *const *cells)
{
	for (; *cells; cells++)
		csv_cell(c, *cells);
	csv_eol(c);
}
