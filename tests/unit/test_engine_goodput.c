/* test_engine_goodput.c - goodput of whole-run figures (engine/goodput.h),
 * the wall-clock limit of objective cost without a deadline, and the NIC
 * share of a data-parallel group (engine/collective.h); issue 13. Values
 * worked by hand in the comments; invariants over generated grids. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collective.h"
#include "engine_fixtures.h"
#include "goodput.h"
#include "testlib.h"
#include "training.h"

static unsigned long rng = 20261125;
static long pick(long n)
{
	rng = rng * 6364136223846793005UL + 1442695040888963407UL;
	return (long)((rng >> 33) % (unsigned long)n);
}

/* Llama 3: 466 interruptions / (54 d * 24 h * 16,384 GPUs) =
 * 466 / 21,233,664 = 2.1946e-5 per GPU-hour; the job at 16,384 GPUs then
 * sees one every 1 / (16,384 * 2.1946e-5) = 2.781 h. Storage: 2,000 GB/s /
 * 16,384 = 0.12207 GB/s per GPU. */
static void test_defaults(void)
{
	struct trn_request rq;

	CHECK_NEAR(GP_DEFAULT_FAILURES_PER_GPU_HOUR, 2.1946e-5, 1e-4);
	CHECK_NEAR(1.0 / (16384.0 * GP_DEFAULT_FAILURES_PER_GPU_HOUR), 2.7811,
		   1e-4);
	CHECK_NEAR(GP_DEFAULT_CHECKPOINT_GBPS_PER_GPU, 0.12207, 1e-4);
	trn_request_init(&rq);
	CHECK(rq.failures_per_gpu_hour == GP_DEFAULT_FAILURES_PER_GPU_HOUR);
	CHECK(rq.checkpoint_gbps_per_gpu == GP_DEFAULT_CHECKPOINT_GBPS_PER_GPU);
	CHECK(rq.restart_minutes == 10.0);
	CHECK(rq.max_days == 90.0);
}

/* Daly 2006 §5, Figs. 3-5 state the optimum his formula gives for
 * delta = 5 min: M = 24 h -> 117 min, M = 6 h -> 57 min, M = 15 min ->
 * 9.1 min. By hand for 24 h: sqrt(2*5*1440) = 120; x = 5/2880 = 0.001736;
 * 120 * (1 + sqrt(x)/3 + x/9) - 5 = 120 * 1.01408 - 5 = 116.69. */
static void test_daly_published(void)
{
	CHECK_NEAR(gp_daly_interval_s(300, 24 * 3600) / 60, 116.69, 1e-3);
	CHECK_NEAR(gp_daly_interval_s(300, 24 * 3600) / 60, 117, 5e-3);
	CHECK_NEAR(gp_daly_interval_s(300, 6 * 3600) / 60, 57, 1e-2);
	CHECK_NEAR(gp_daly_interval_s(300, 15 * 60) / 60, 9.1, 1e-2);
	/* delta >= 2M: checkpoint every M */
	CHECK(gp_daly_interval_s(1000, 400) == 400);
	/* delta << M: Young's sqrt(2 delta M) = sqrt(2e8) = 14,142 */
	CHECK_NEAR(gp_daly_interval_s(1, 1e8), 14142.1, 1e-4);
	CHECK(gp_daly_interval_s(0, 100) == 0);
}

/* 100 GPUs at 1e-3 per GPU-hour: M = 3600 / 0.1 = 36,000 s (10 h). A
 * 1.8e12 B checkpoint at 0.1 GB/s per GPU (10 GB/s in all): delta = 180
 * s. x = 180 / 72,000 = 0.0025, sqrt(2 * 180 * 36,000) = 3,600:
 * tau = 3,600 * (1 + 0.05/3 + 0.0025/9) - 180 = 3,481.0 s.
 * T_w / T_s = M e^(R/M) (e^((tau+delta)/M) - 1) / tau with R = 600 s:
 * e^(1/60) = 1.016806, e^(3,661/36,000) - 1 = e^0.101694 - 1 = 0.107045,
 * 36,000 * 0.107045 / 3,481 = 1.107046; * 1.016806 = 1.125651:
 * goodput 0.888375. Over 1,000 h of wall time: 100 GPUs * 1e-3 * 1,000 =
 * 100 interruptions. */
static void test_hand_case(void)
{
	struct gp_input in = {100, 1e-3, 1.8e12, 0.1, 600};
	struct gp_result r;

	CHECK(gp_compute(&in, &r) == 0);
	CHECK_NEAR(r.mtbi_s, 36000, 1e-12);
	CHECK_NEAR(r.checkpoint_write_s, 180, 1e-12);
	CHECK_NEAR(r.interval_s, 3481.0, 1e-5);
	CHECK_NEAR(r.wall_per_work, 1.125651, 1e-6);
	CHECK_NEAR(r.goodput_fraction, 0.888375, 1e-6);
	CHECK_NEAR(gp_expected_interruptions(100, 1e-3, 1000 * 3600.0), 100,
		   1e-12);

	/* Llama 3 scale: 16,384 GPUs at the default rate, M = 10,012 s; a
	 * 1e12 B checkpoint at the default 2,000 GB/s: delta = 0.5 s, tau =
	 * 99.73 s, goodput 0.9325 (the paper: "higher than 90 %" effective
	 * training time). */
	in = (struct gp_input){16384, GP_DEFAULT_FAILURES_PER_GPU_HOUR, 1e12,
			       GP_DEFAULT_CHECKPOINT_GBPS_PER_GPU, 600};
	CHECK(gp_compute(&in, &r) == 0);
	CHECK_NEAR(r.mtbi_s, 10012.0, 1e-4);
	CHECK_NEAR(r.checkpoint_write_s, 0.5, 1e-9);
	CHECK_NEAR(r.interval_s, 99.727, 1e-4);
	CHECK_NEAR(r.goodput_fraction, 0.93245, 1e-4);
}

static void test_edges(void)
{
	struct gp_input in = {100, 0, 1e12, 0.1, 600};
	struct gp_result r;

	/* no failures: no checkpoints, goodput 1 */
	CHECK(gp_compute(&in, &r) == 0);
	CHECK(r.goodput_fraction == 1.0 && r.interval_s == 0.0 &&
	      r.mtbi_s == 0.0);
	/* a free checkpoint: only restarts, e^(R/M) = e^(600/36,000) */
	in = (struct gp_input){100, 1e-3, 0, 0.1, 600};
	CHECK(gp_compute(&in, &r) == 0);
	CHECK_NEAR(r.wall_per_work, 1.016806, 1e-6);
	/* a job that never ends stays finite (days and cost are numbers) */
	in = (struct gp_input){1 << 20, 0.01, 1e15, 1e-3, 86400};
	CHECK(gp_compute(&in, &r) == 0);
	CHECK(isfinite(r.wall_per_work) && r.goodput_fraction > 0);
	/* bad inputs */
	in = (struct gp_input){100, -1e-3, 1e12, 0.1, 600};
	CHECK(gp_compute(&in, &r) == -1 && r.goodput_fraction == 1.0);
	in = (struct gp_input){100, 1e-3, 1e12, 0, 600};
	CHECK(gp_compute(&in, &r) == -1);
	in = (struct gp_input){100, 1e-3, NAN, 0.1, 600};
	CHECK(gp_compute(&in, &r) == -1);
}

/* Over a grid: goodput in (0, 1], never rising with the failure rate, the
 * checkpoint size or the restart time. */
static void test_grid_invariants(void)
{
	static const double gpus[] = {1, 8, 100, 1024, 16384, 1 << 20};
	static const double rates[] = {1e-7, 1e-5, 2.2e-5, 1e-3, 1e-2};
	static const double bytes[] = {0, 1e9, 1e12, 1e14};
	static const double gbps[] = {1e-3, 0.122, 10};
	static const double restart[] = {0, 60, 600, 86400};
	int bad = 0;

	for (size_t g = 0; g < 6; g++)
		for (size_t f = 0; f < 5; f++)
			for (size_t b = 0; b < 4; b++)
				for (size_t s = 0; s < 3; s++)
					for (size_t r = 0; r < 4; r++) {
						struct gp_input in = {
						    gpus[g], rates[f], bytes[b],
						    gbps[s], restart[r]};
						struct gp_result a, m;

						gp_compute(&in, &a);
						bad += !(
						    a.goodput_fraction > 0 &&
						    a.goodput_fraction <= 1.0 &&
						    a.wall_per_work >= 1.0);
						in.failures_per_gpu_hour *= 2;
						in.checkpoint_bytes *= 2;
						in.restart_s *= 2;
						gp_compute(&in, &m);
						bad += m.goodput_fraction >
						       a.goodput_fraction;
					}
	CHECK(bad == 0);
}

/* Whole-run figures of sized plans, generated jobs: goodput below 1
 * never shortens a run (days, gpu_hours, cost >= their steady state), and
 * without failures they are the steady state. */
static void test_plans_invariants(void)
{
	struct trn_result *res = calloc(1, sizeof(*res));
	int bad = 0, sized = 0;

	for (int i = 0; i < 40; i++) {
		struct trn_request rq;
		struct eng_error e;
		long m = pick(3);

		trn_request_init(&rq);
		rq.model = m == 0   ? fx_llama3_8b()
			   : m == 1 ? fx_llama3_70b()
				    : fx_mixtral_8x7b();
		rq.gpu = pick(2) ? fx_h100() : fx_a100();
		rq.seq_len = pick(2) ? 4096 : 8192;
		rq.train_tokens = 1e11 * (double)(1 + pick(100));
		rq.max_gpus = 8L << pick(9);
		rq.objective = (enum trn_objective)pick(3);
		if (pick(3) == 0)
			rq.failures_per_gpu_hour = 0;
		if (trn_size(&rq, res, &e))
			continue;
		sized++;
		for (int p = 0; p < res->n_plans; p++) {
			const struct trn_plan *q = &res->plans[p];
			bool none = rq.failures_per_gpu_hour == 0;

			bad += !(q->goodput.fraction > 0 &&
				 q->goodput.fraction <= 1);
			bad += q->days < q->steady_days ||
			       q->gpu_hours < q->steady_gpu_hours ||
			       q->cost < q->steady_cost;
			bad += none && (q->days != q->steady_days ||
					q->goodput.fraction != 1.0);
			bad += !none && !(q->goodput.fraction < 1.0);
		}
	}
	CHECK(sized >= 30);
	CHECK(bad == 0);
	free(res);
}

/* One checkpoint of Llama 3 8B (8.03e9 parameters) in bf16 with AdamW:
 * 2 B of weights + 12 B of fp32 master, m and v = 14 B per parameter;
 * the plan's days are its steady days over the goodput. */
static void test_plan_figures(void)
{
	struct trn_request rq;
	struct trn_result *res = calloc(1, sizeof(*res));
	struct eng_error e;
	const struct trn_plan *p;

	trn_request_init(&rq);
	rq.model = fx_llama3_8b();
	rq.gpu = fx_h100();
	rq.seq_len = 8192;
	rq.train_tokens = 1e12;
	rq.gpus = 64;
	CHECK(trn_size(&rq, res, &e) == 0);
	p = &res->plans[0];
	CHECK_NEAR(res->checkpoint_gib * 1073741824.0, res->params.total * 14.0,
		   1e-12);
	CHECK_NEAR(p->days, p->steady_days / p->goodput.fraction, 1e-9);
	CHECK_NEAR(p->gpu_hours, p->days * 24 * 64, 1e-9);
	CHECK_NEAR(p->cost, p->gpu_hours * 2.75, 1e-9);
	CHECK_NEAR(p->steady_days, 1e12 / p->tokens_per_s / 86400, 1e-9);
	/* 64 GPUs at 2.1946e-5: one interruption every 712 h */
	CHECK_NEAR(p->goodput.mtbi_hours,
		   1.0 / (64 * GP_DEFAULT_FAILURES_PER_GPU_HOUR), 1e-9);
	CHECK_NEAR(p->goodput.interruptions,
		   64 * GP_DEFAULT_FAILURES_PER_GPU_HOUR * p->days * 24, 1e-9);
	/* 1.12e11 B at 64 * 0.122 GB/s: ~14 s */
	CHECK_NEAR(p->goodput.checkpoint_write_s,
		   res->params.total * 14.0 /
		       (64 * GP_DEFAULT_CHECKPOINT_GBPS_PER_GPU * 1e9),
		   1e-9);
	CHECK(p->goodput.fraction < 1 && p->goodput.fraction > 0.97);

	/* More failures: a longer run, the same steady state. */
	{
		double steady = p->steady_days, days = p->days;
		rq.failures_per_gpu_hour = 1e-3;
		CHECK(trn_size(&rq, res, &e) == 0);
		CHECK(res->plans[0].steady_days == steady);
		CHECK(res->plans[0].days > days);
	}
	/* Out of range: the field is named. */
	rq.failures_per_gpu_hour = 0.5;
	CHECK(trn_size(&rq, res, &e) == ENG_EINVAL &&
	      strcmp(e.field, "failures_per_gpu_hour") == 0);
	rq.failures_per_gpu_hour = 1e-5;
	rq.checkpoint_gbps_per_gpu = 0;
	CHECK(trn_size(&rq, res, &e) == ENG_EINVAL &&
	      strcmp(e.field, "checkpoint_gbps_per_gpu") == 0);
	rq.checkpoint_gbps_per_gpu = 1;
	rq.restart_minutes = -1;
	CHECK(trn_size(&rq, res, &e) == ENG_EINVAL &&
	      strcmp(e.field, "restart_minutes") == 0);
	rq.restart_minutes = 5;
	rq.max_days = 1e9;
	CHECK(trn_size(&rq, res, &e) == ENG_EINVAL &&
	      strcmp(e.field, "max_days") == 0);
	free(res);
}

/* Issue 13: objective cost with no deadline picked 70B on 10 GPUs for
 * 4,840 days. Now no plan it ranks first runs past max_days while one
 * within it exists, and the answer says so. */
static void test_cost_max_days(void)
{
	struct trn_request rq;
	struct trn_result *res = calloc(1, sizeof(*res));
	struct eng_error e;
	bool said = false;

	trn_request_init(&rq);
	rq.model = fx_llama3_70b();
	rq.gpu = fx_h100();
	rq.seq_len = 4096;
	rq.train_tokens = 2e12;
	rq.max_gpus = 1024;
	rq.objective = TRN_OBJ_COST;
	CHECK(trn_size(&rq, res, &e) == 0);
	CHECK(res->max_days == 90.0);
	for (int i = 0; i < res->n_plans; i++)
		CHECK(res->plans[i].days <= 90.0 &&
		      res->plans[i].within_max_days);
	for (int i = 0; i < res->n_warnings; i++)
		said |= strstr(res->warnings[i], "max_days (90 days)") != NULL;
	CHECK(said);

	/* A tighter max_days: a faster plan on more GPUs. */
	rq.max_days = 30;
	CHECK(trn_size(&rq, res, &e) == 0);
	CHECK(res->plans[0].days <= 30.0 && res->plans[0].gpus >= 256);

	/* Nothing within it: the fastest plan, and a warning naming it. */
	rq.max_gpus = 16;
	said = false;
	CHECK(trn_size(&rq, res, &e) == 0);
	CHECK(!res->plans[0].within_max_days);
	for (int i = 0; i < res->n_warnings; i++)
		said |= strstr(res->warnings[i],
			       "no plan ends within max_days") != NULL;
	CHECK(said);
	for (int i = 1; i < res->n_plans; i++)
		CHECK(res->plans[i].days >= res->plans[0].days);

	/* A deadline replaces max_days; objective time has none. */
	rq.max_gpus = 1024;
	rq.deadline_days = 200;
	CHECK(trn_size(&rq, res, &e) == 0);
	CHECK(res->max_days == 0 && res->plans[0].days <= 200);
	rq.deadline_days = 0;
	rq.objective = TRN_OBJ_TIME;
	CHECK(trn_size(&rq, res, &e) == 0);
	CHECK(res->max_days == 0);
	free(res);
}

/* A data-parallel group leaving the node: its ranks on one node share
 * all the node's NICs. 8 GPUs per node, 25 GB/s of NIC per GPU (200 GB/s
 * per node): tp 1 -> 8 local ranks -> 200 GB/s; tp 2 -> 4 -> 100; tp 8
 * or 16 -> one rank per node -> 25; never above the intra-node link. */
static void test_dp_nic_share(void)
{
	CHECK_NEAR(coll_node_share_bw(25e9, 300e9, 8, 1), 200e9, 1e-12);
	CHECK_NEAR(coll_node_share_bw(25e9, 300e9, 8, 2), 100e9, 1e-12);
	CHECK_NEAR(coll_node_share_bw(25e9, 300e9, 8, 4), 50e9, 1e-12);
	CHECK(coll_node_share_bw(25e9, 300e9, 8, 8) == 25e9);
	CHECK(coll_node_share_bw(25e9, 300e9, 8, 16) == 25e9);
	CHECK(coll_node_share_bw(50e9, 300e9, 8, 1) == 300e9);
	CHECK_NEAR(coll_node_share_bw(25e9, 300e9, 8, 3), 50e9, 1e-12);
}

/* FSDP (tp 1, ZeRO-3) on 32 GPUs, 4 nodes: the exposed DP time is that of
 * a job whose node NICs are shared by its 8 local ranks. With the same
 * 50 GB/s per node, 8 GPUs per node (8 ranks at 6.25 GB/s each) and 4
 * GPUs per node (4 at 12.5 GB/s) then give the group the same 50 GB/s:
 * the DP time may differ only by latency (ring steps), not 2x as when
 * each rank had only its own 1/gpus_per_node of the NICs. */
static void test_fsdp_32(void)
{
	struct trn_request rq;
	struct trn_layout l;
	struct trn_plan a, b;
	struct eng_error e;

	trn_request_init(&rq);
	rq.model = fx_llama3_8b();
	rq.gpu = fx_h100();
	rq.gpu.intra_node_gbps = 900; /* not the bottleneck either way */
	rq.inter_node_gbps = 50;      /* per node: DP traffic exposed */
	rq.seq_len = 4096;
	rq.global_batch_size = 32;
	rq.gpus = 32;
	memset(&l, 0, sizeof(l));
	l.tp = l.pp = l.cp = l.ep = l.vp = 1;
	l.dp = 32;
	l.zero = 3;
	l.micro_batch = 1;
	l.flash_attention = true;
	l.recompute = ENG_RC_NONE;
	rq.gpus_per_node = 8;
	CHECK(trn_evaluate(&rq, &l, &a, &e) == 0);
	rq.gpus_per_node = 4;
	CHECK(trn_evaluate(&rq, &l, &b, &e) == 0);
	CHECK(a.time.dp_comm_exposed_s > 0);
	CHECK_NEAR(a.time.dp_comm_exposed_s, b.time.dp_comm_exposed_s, 0.05);
}

int main(void)
{
	RUN(test_defaults);
	RUN(test_daly_published);
	RUN(test_hand_case);
	RUN(test_edges);
	RUN(test_grid_invariants);
	RUN(test_plans_invariants);
	RUN(test_plan_figures);
	RUN(test_cost_max_days);
	RUN(test_dp_nic_share);
	RUN(test_fsdp_32);
	return testlib_finish();
}
