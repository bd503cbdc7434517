/* errors.c - the engine's error value (see errors.h). */
#include "errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int eng_fail(struct eng_error *e, int code, const char *field, const char *fmt,
	     ...)
{
	va_list ap;

	if (!e)
		return code;
	e->code = code;
	snprintf(e->field, sizeof(e->field), "%s", field ? field : "");
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return code;
}

void eng_error_clear(struct eng_error *e)
{
	if (!e)
		return;
	memset(e, 0, sizeof(*e));
}

void eng_warn(char *table, int *n, int n_max, int len, const char *fmt, ...)
{
	va_list ap;

	if (*n >= n_max)
		return;
	va_start(ap, fmt);
	vsnprintf(table + (size_t)*n * (size_t)len, (size_t)len, fmt, ap);
	va_end(ap);
	(*n)++;
}
