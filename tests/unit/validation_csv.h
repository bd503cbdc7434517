/* validation_csv.h - one line of a tests/fixtures/validation/ table split
 * into its fields, for the validation tests (test_engine_validation.c,
 * test_engine_stacks_validation.c). Header-only; the includer defines MAXF,
 * the most fields a line holds, first. */
#ifndef GPUSIZER_TESTS_VALIDATION_CSV_H
#define GPUSIZER_TESTS_VALIDATION_CSV_H

#ifndef MAXF
#error "define MAXF before including validation_csv.h"
#endif

/* Splits one CSV line (RFC 4180 quotes) into fields, in place. */
static int split_csv(char *line, char **f)
{
	int n = 0;
	char *p = line, *w;

	while (n < MAXF) {
		f[n++] = w = p;
		if (*p == '"') {
			p++;
			for (;;) {
				if (*p == '"' && p[1] == '"') {
					*w++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else if (!*p) {
					break;
				} else {
					*w++ = *p++;
				}
			}
			while (*p && *p != ',')
				p++;
		} else {
			while (*p && *p != ',' && *p != '\n' && *p != '\r')
				*w++ = *p++;
		}
		if (*p != ',') {
			*w = '\0';
			break;
		}
		*w = '\0';
		p++;
	}
	return n;
}

#endif
