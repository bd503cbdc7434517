/* csv.h - CSV cells and rows into an sbuf.
 *
 * Quoting per RFC 4180: a cell is quoted when it holds a comma, a double
 * quote or a line break (or always, with CSV_QUOTE_ALL), inner quotes
 * doubled. Text cells that a spreadsheet would run as a formula (first
 * character =, +, -, @, tab or CR: OWASP "CSV Injection") get a leading
 * apostrophe inside quotes; cells the caller formats itself (csv_cellf:
 * numbers) are written as given. Rows end in CRLF as RFC 4180 says, or LF
 * with CSV_LF.
 */
#ifndef GPUSIZER_LIB_CSV_H
#define GPUSIZER_LIB_CSV_H

#include "lib/sbuf.h"

enum {
	CSV_QUOTE_ALL = 1 << 0, /* quote every cell, needed or not */
	CSV_LF = 1 << 1,	/* rows end in "\n" rather than "\r\n" */
};

struct csv {
	struct sbuf *b;
	unsigned flags;
	int cells; /* cells written on the current row */
};

/* A writer appending to b with the CSV_* flags. */
void csv_init(struct csv *c, struct sbuf *b, unsigned flags);
/* One text cell (NULL: empty), quoted and defused as above. */
void csv_cell(struct csv *c, const char *s);
/* One cell of the caller's own formatting (a number), never defused. */
void csv_cellf(struct csv *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* One empty cell. */
void csv_empty(struct csv *c);
/* Ends the current row. */
void csv_eol(struct csv *c);
/* A whole row of text cells from a NULL-terminated array, then csv_eol. */
void csv_row(struct csv *c, const char *const *cells);

#endif
