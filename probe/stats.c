#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double probe_quantile_sorted(const double *sorted, size_t n, double q)
{
	double h, frac;
	size_t lo;

	if (n == 0)
		return NAN;
	if (q <= 0.0)
		return sorted[0];
	if (q >= 1.0)
		return sorted[n - 1];
	h = (double)(n - 1) * q;
	lo = (size_t)floor(h);
	frac = h - (double)lo;
	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double probe_cv(const double *samples, size_t n)
{
	double sum = 0.0, mean, ss = 0.0;
	size_t i;

	if (n == 0)
		return NAN;
	if (n == 1)
		return 0.0;
	for (i = 0; i < n; i++)
		sum += samples[i];
	mean = sum / (double)n;
	if (mean == 0.0)
		return NAN;
	for (i = 0; i < n; i++)
		ss += (samples[i] - mean) * (samples[i] - mean);
	return sqrt(ss / (double)(n - 1)) / fabs(mean);
}

int probe_stats_compute(const double *samples, size_t n,
			struct probe_stats *out)
{
	double *s, sum = 0.0;
	size_t i;

	out->median = out->max = out->mean = NAN;
	out->p10 = out->p90 = out->cv = NAN;
	out->n = 0;
	if (n == 0 || samples == NULL)
		return -1;
	for (i = 0; i < n; i++)
		if (!isfinite(samples[i]))
			return -1;
	s = malloc(n * sizeof(*s));
	if (s == NULL)
		return -1;
	memcpy(s, samples, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	for (i = 0; i < n; i++)
		sum += s[i];
	out->mean = sum / (double)n;
	out->median = probe_quantile_sorted(s, n, 0.5);
	out->p10 = probe_quantile_sorted(s, n, 0.1);
	out->p90 = probe_quantile_sorted(s, n, 0.9);
	out->max = s[n - 1];
	out->cv = probe_cv(s, n);
	out->n = (int)n;
	free(s);
	return 0;
}

int probe_samples_enough(const double *samples, size_t n, size_t min_n,
			 size_t max_n, double cv_target)
{
	double cv;

	if (n < min_n)
		return 0;
	if (n >= max_n)
		return 1;
	cv = probe_cv(samples, n);
	return isfinite(cv) && cv < cv_target;
}
