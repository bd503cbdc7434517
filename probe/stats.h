/* Sample statistics for probe measurements (plain C, no GPU).
 *
 * Definitions (docs/PROBE.md "Statistics"): median/p10/p90 use linear
 * interpolation between closest ranks (numpy's default); cv is the sample
 * standard deviation (n - 1) divided by the mean, 0 when n == 1.
 */
#ifndef GPUSIZER_PROBE_STATS_H
#define GPUSIZER_PROBE_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct probe_stats {
	double median;
	double max;
	double mean;
	double p10;
	double p90;
	double cv;
	int n;
};

/* Fills *out from n samples (not modified). Returns 0, or -1 when n == 0
 * or a sample is not finite (then *out is all-NaN with n = 0). */
int probe_stats_compute(const double *samples, size_t n,
			struct probe_stats *out);

/* Quantile q in [0,1] of sorted[0..n-1] by linear interpolation. */
double probe_quantile_sorted(const double *sorted, size_t n, double q);

/* Coefficient of variation of n samples (sample stddev / mean). */
double probe_cv(const double *samples, size_t n);

/* Stopping rule of PROBE.md 8.1.4: enough once n >= min_n and
 * (cv < cv_target or n >= max_n). Returns 1 when enough. */
int probe_samples_enough(const double *samples, size_t n, size_t min_n,
			 size_t max_n, double cv_target);

#ifdef __cplusplus
}
#endif

#endif
