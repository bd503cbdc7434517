/* errors.h - the engine's error value.
 *
 * Every public engine function returns 0 on success or a negative code and
 * fills a struct eng_error. `field` is the JSON request field the problem is
 * about (e.g. "strategies.tp", "precision", "model.heads"), so handlers can
 * map it straight into an RFC 9457 `errors[]` entry:
 *   ENG_EINVAL       -> 400 (bad or inconsistent input)
 *   ENG_EINFEASIBLE  -> 422 (valid, but does not fit / cannot meet targets)
 *   ENG_EUNSUPPORTED -> 422 (valid, but the hardware cannot do it, e.g. FP8)
 *   ENG_EBUDGET      -> 422 (valid, but the search is larger than allowed;
 *                       field names the lists to narrow, see budget.h)
 *   ENG_ECANCELLED   -> the caller's stop() ended the work (budget.h)
 */
#ifndef GPUSIZER_ENGINE_ERRORS_H
#define GPUSIZER_ENGINE_ERRORS_H

enum eng_code {
	ENG_OK = 0,
	ENG_EINVAL = -1,
	ENG_EINFEASIBLE = -2,
	ENG_EUNSUPPORTED = -3,
	ENG_EBUDGET = -4,
	ENG_ECANCELLED = -5,
};

struct eng_error {
	int code;
	char field[64];
	char message[1024];
};

/* Fills *e (when non-NULL) and returns code. printf-style message. */
int eng_fail(struct eng_error *e, int code, const char *field, const char *fmt,
	     ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Appends a formatted warning to a fixed table of n_max lines of len
 * bytes, counting in *n; full tables drop further warnings.
 */
void eng_warn(char *table, int *n, int n_max, int len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Clears *e to ENG_OK with empty strings. */
void eng_error_clear(struct eng_error *e);

#endif
