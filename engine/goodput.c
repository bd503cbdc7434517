/* goodput.c - expected wall time under failures and checkpoints (Young
 * 1974, Daly 2006; formulas and defaults in goodput.h and docs/MODEL.md
 * §4 "Goodput"). */
#include "goodput.h"

#include <math.h>

/* The largest wall-per-work ratio reported: e^40 ~ 2.4e17, a job that
 * never ends, kept finite so that days and cost stay numbers. */
#define GP_LOG_MAX_RATIO 40.0

double gp_daly_interval_s(double delta_s, double m_s)
{
	double x;

	if (!(delta_s > 0.0) || !(m_s > 0.0))
		return 0.0;
	if (delta_s >= 2.0 * m_s)
		return m_s;
	x = delta_s / (2.0 * m_s);
	return sqrt(2.0 * delta_s * m_s) * (1.0 + sqrt(x) / 3.0 + x / 9.0) -
	       delta_s;
}

double gp_expected_interruptions(double gpus, double failures_per_gpu_hour,
				 double wall_s)
{
	if (!(gpus > 0.0) || !(failures_per_gpu_hour > 0.0) || !(wall_s > 0.0))
		return 0.0;
	return gpus * failures_per_gpu_hour * wall_s / 3600.0;
}

int gp_compute(const struct gp_input *in, struct gp_result *r)
{
	double m, delta, tau, ratio, log_ratio;

	r->mtbi_s = 0.0;
	r->checkpoint_write_s = 0.0;
	r->interval_s = 0.0;
	r->wall_per_work = 1.0;
	r->goodput_fraction = 1.0;
	if (!(in->gpus >= 0.0) || !(in->failures_per_gpu_hour >= 0.0) ||
	    !(in->checkpoint_bytes >= 0.0) ||
	    !(in->storage_gbps_per_gpu >= 0.0) || !(in->restart_s >= 0.0))
		return -1;
	if (in->gpus <= 0.0 || in->failures_per_gpu_hour <= 0.0)
		return 0; /* no interruptions: no checkpoints needed */
	m = 3600.0 / (in->gpus * in->failures_per_gpu_hour);
	delta = 0.0;
	if (in->checkpoint_bytes > 0.0) {
		if (!(in->storage_gbps_per_gpu > 0.0))
			return -1;
		delta = in->checkpoint_bytes /
			(in->storage_gbps_per_gpu * 1e9 * in->gpus);
	}
	r->mtbi_s = m;
	r->checkpoint_write_s = delta;
	/* In logarithms, so that a job that would never finish (R or
	 * tau + delta many times M) gives a large finite ratio, not an
	 * overflow. A free checkpoint would be taken continuously: the limit
	 * tau -> 0 of Daly's T_w / T_s is e^(R/M), only the restarts. */
	if (delta <= 0.0) {
		log_ratio = in->restart_s / m;
	} else {
		double x;

		tau = gp_daly_interval_s(delta, m);
		x = (tau + delta) / m;
		r->interval_s = tau;
		log_ratio = in->restart_s / m + log(m / tau) +
			    (x > 30.0 ? x + log1p(-exp(-x)) : log(expm1(x)));
	}
	if (!(log_ratio > 0.0)) /* rounding at ratio ~ 1 */
		log_ratio = 0.0;
	ratio = log_ratio < GP_LOG_MAX_RATIO ? exp(log_ratio)
					     : exp(GP_LOG_MAX_RATIO);
	r->wall_per_work = ratio;
	r->goodput_fraction = 1.0 / ratio;
	return 0;
}
