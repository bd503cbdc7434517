/* goodput.h - the whole-run cost of failures: expected interruptions, the
 * checkpoint interval and the wall time they add to a job's steady-state
 * time (docs/MODEL.md §4 "Goodput").
 *
 * Failures arrive as a Poisson process at rate G * lambda (lambda per
 * GPU-hour, independent GPUs), so the job's mean time between
 * interruptions is M = 1 / (G * lambda). The job writes a checkpoint of
 * delta seconds every tau seconds of work; after a failure it restarts in
 * R seconds and redoes the work since the last checkpoint. Daly's complete
 * model (J. T. Daly, "A higher order estimate of the optimum checkpoint
 * interval for restart dumps", Future Generation Computer Systems 22
 * (2006) 303-312, doi:10.1016/j.future.2004.11.016) gives the expected
 * wall time of T_s seconds of work, failures during checkpoints and
 * restarts included:
 *
 *   T_w = M e^(R/M) (e^((tau + delta)/M) - 1) T_s / tau
 *
 * and the optimum interval to higher order:
 *
 *   tau = sqrt(2 delta M) [1 + sqrt(delta/(2M))/3 + delta/(18 M)] - delta
 *         for delta < 2M, else tau = M
 *
 * whose first term is Young's (J. W. Young, "A first order approximation
 * to the optimum checkpoint interval", CACM 17(9):530-531, 1974). Since
 * e^x - 1 >= x, T_w >= T_s (tau + delta)/tau >= T_s: goodput never
 * exceeds 1 and never shortens a run. T_w / T_s does not depend on T_s,
 * so a plan's goodput is a function of its GPU count, checkpoint size and
 * storage alone.
 *
 * Pure: no I/O, no globals.
 */
#ifndef GPUSIZER_ENGINE_GOODPUT_H
#define GPUSIZER_ENGINE_GOODPUT_H

/* Llama 3 (Dubey et al. 2024, arXiv 2407.21783, §3.3.4): 466 job
 * interruptions (47 planned, 419 unexpected) in a 54-day snapshot of
 * pre-training on 16,384 H100 GPUs: 466 / (54 * 24 * 16,384) =
 * 2.19e-5 interruptions per GPU-hour, one every 2.78 h for the job.
 * Planned ones count too: they also stop the job and cost a restart. */
#define GP_LLAMA3_INTERRUPTIONS 466.0
#define GP_LLAMA3_DAYS		54.0
#define GP_LLAMA3_GPUS		16384.0
#define GP_DEFAULT_FAILURES_PER_GPU_HOUR                                       \
	(GP_LLAMA3_INTERRUPTIONS / (GP_LLAMA3_DAYS * 24.0 * GP_LLAMA3_GPUS))

/* Checkpoint write bandwidth per GPU of the job: Llama 3's storage
 * (§3.1, Tectonic) sustains 2 TB/s for the 16,384 GPUs of the run,
 * 2,000 / 16,384 = 0.122 GB/s per GPU (about 1 GB/s per 8-GPU node, a
 * parallel file system's share; one NFS server is slower, a local NVMe
 * burst buffer faster). The job's aggregate is this times its GPUs: each
 * rank writes its own shard. */
#define GP_LLAMA3_STORAGE_GBPS 2000.0
#define GP_DEFAULT_CHECKPOINT_GBPS_PER_GPU                                     \
	(GP_LLAMA3_STORAGE_GBPS / GP_LLAMA3_GPUS)

/* Restart after an interruption: reschedule, start the processes,
 * initialise NCCL, read the checkpoint. 10 minutes, the restart time of
 * Daly's (2006) worked examples (§5, Figs. 3-5); published LLM runs do
 * not state theirs, and it is an input. */
#define GP_DEFAULT_RESTART_S 600.0

struct gp_input {
	double gpus;
	double failures_per_gpu_hour; /* 0: no interruptions */
	double checkpoint_bytes;      /* one full checkpoint of the job */
	double storage_gbps_per_gpu;  /* write rate per GPU, GB/s (1e9 B) */
	double restart_s;
};

struct gp_result {
	double mtbi_s;		   /* job's mean time between interruptions;
				      0 when there are none */
	double checkpoint_write_s; /* delta */
	double interval_s;	   /* tau: work between checkpoints; 0: none */
	double wall_per_work;	   /* T_w / T_s >= 1 */
	double goodput_fraction;   /* T_s / T_w, in (0, 1] */
};

/* Fills *r for *in. 0, or -1 when an input is negative or not a number
 * (r is then goodput 1). With no failures the job needs no checkpoints:
 * goodput 1. */
int gp_compute(const struct gp_input *in, struct gp_result *r);

/* Daly's optimum interval for write time delta_s and mean time between
 * interruptions m_s (both > 0). */
double gp_daly_interval_s(double delta_s, double m_s);

/* Expected interruptions over wall_s seconds of a job on `gpus` GPUs. */
double gp_expected_interruptions(double gpus, double failures_per_gpu_hour,
				 double wall_s);

#endif
