/* test_engine_validation.c - engine estimates beside published figures
 * (tests/fixtures/validation/ CSVs, copied from the project's validation
 * set with their source columns). Open loop: architecture, hardware and
 * layout in, step time / throughput / TTFT out. Prints one '#' line per
 * row; passes when the median |error| of each group is within 15 %.
 * Assumptions per group are in docs/VALIDATION.md. Run from the repo root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inference.h"
#include "engine_fixtures.h"
#include "testlib.h"
#include "training.h"

#define MAXF 64
#define MAXL 8192
#include "validation_csv.h"

struct table {
	char head[MAXL];
	char *cols[MAXF];
	int ncols;
};

static int col(const struct table *t, const char *name)
{
	for (int i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i], name) == 0)
			return i;
	return -1;
}

static double num(char **f, int i)
{
	return (i >= 0 && f[i][0]) ? atof(f[i]) : 0.0;
}

/* Opens tests/fixtures/validation/<name> and reads its header row into
 * *t; NULL when the file cannot be opened. */
static FILE *open_table(const char *name, struct table *t)
{
	char path[256];
	FILE *f;
	snprintf(path, sizeof(path), "tests/fixtures/validation/%s", name);
	f = fopen(path, "r");
	if (!f) {
		printf("# cannot open %s (run from the repository root)\n",
		       path);
		return NULL;
	}
	CHECK(fgets(t->head, sizeof(t->head), f) != NULL);
	t->ncols = split_csv(t->head, t->cols);
	return f;
}

static void test_training_rows(void)
{
	static char line[MAXL];
	struct table t;
	char *f[MAXF];
	double err[64];
	int n = 0;
	FILE *fp = open_table("training_runs.csv", &t);
	struct trn_result *res;

	CHECK(fp != NULL);
	if (!fp)
		return;
	res = calloc(1, sizeof(*res));
	while (fgets(line, sizeof(line), fp)) {
		struct trn_request rq;
		struct eng_error e;
		int nf = split_csv(line, f);
		const char *id = f[col(&t, "case_id")];
		const char *rcs = f[col(&t, "recompute")];
		double L = num(f, col(&t, "n_layers")),
		       tp = num(f, col(&t, "tp"));
		double pp = num(f, col(&t, "pp")), dp = num(f, col(&t, "dp"));
		double step = num(f, col(&t, "step_time_s"));
		double tfl = num(f, col(&t, "tflops_per_gpu"));
		double mb = num(f, col(&t, "micro_batch"));
		double vp = num(f, col(&t, "vp"));
		double got, want, e_rel;
		bool zero3 = strncmp(id, "NAR21-T2-0", 10) == 0 && tp == 1;

		if (nf < 40 || L <= 1 || tp <= 0 || (step <= 0 && tfl <= 0))
			continue; /* estimates, per-layer rows */
		trn_request_init(&rq);
		rq.model.layers = (long)L;
		rq.model.hidden_size = (long)num(f, col(&t, "hidden"));
		rq.model.heads = rq.model.kv_heads =
		    (long)num(f, col(&t, "n_heads"));
		rq.model.ffn_hidden_size = (long)num(f, col(&t, "ffn_hidden"));
		rq.model.vocab_size = (long)num(f, col(&t, "vocab"));
		rq.model.tied_embeddings = rq.model.learned_pos_emb = true;
		rq.model.linear_biases = true;
		rq.seq_len = rq.model.max_seq_len =
		    (long)num(f, col(&t, "seq_len"));
		rq.global_batch_size =
		    (long)num(f, col(&t, "global_batch_seqs"));
		rq.gpu = fx_a100();
		rq.gpus = (long)num(f, col(&t, "n_gpus"));
		rq.precision = ENG_FP16;
		/* Megatron keeps fp32 main grads; DeepSpeed ZeRO-3 reduces
		 * and shards gradients in the training dtype (fp16). */
		rq.gradient_precision = zero3 ? ENG_FP16 : ENG_FP32;
		rq.strategies.tp.n = rq.strategies.pp.n = rq.strategies.dp.n =
		    1;
		rq.strategies.tp.v[0] = (int)tp;
		rq.strategies.pp.v[0] = (int)pp;
		rq.strategies.dp.v[0] = (int)dp;
		rq.strategies.recompute.n = 1;
		rq.strategies.recompute.v[0] =
		    strstr(rcs, "selective") ? ENG_RC_SELECTIVE : ENG_RC_FULL;
		rq.strategies.sequence_parallel.n = 1;
		rq.strategies.sequence_parallel.v[0] =
		    strstr(rcs, "sequence parallelism") && !strstr(rcs, "no ");
		rq.strategies.flash_attention.n = 1; /* 2021-22: unfused */
		rq.strategies.flash_attention.v[0] = 0;
		rq.strategies.offload.n = 1;
		rq.strategies.zero.n = 1;
		rq.strategies.zero.v[0] = zero3 ? 3 : 0;
		if (mb > 0) {
			rq.strategies.micro_batch.n = 1;
			rq.strategies.micro_batch.v[0] = (int)mb;
		}
		if (vp > 0) {
			rq.strategies.vp.n = 1;
			rq.strategies.vp.v[0] = (int)vp;
		}
		if (trn_size(&rq, res, &e)) {
			printf("# %-20s engine error %s: %s\n", id, e.field,
			       e.message);
			CHECK(0);
			continue;
		}
		if (step > 0) {
			got = res->plans[0].time.step_s;
			want = step;
		} else { /* Narayanan's TFLOP/s count recompute: HFU-like */
			got = res->plans[0].hfu * 312;
			want = tfl;
		}
		e_rel = got / want - 1;
		err[n++] = e_rel < 0 ? -e_rel : e_rel;
		printf("# %-20s %-8s published %8.2f engine %8.2f  %+6.1f %%  "
		       "(%.1f GiB/GPU)\n",
		       id, step > 0 ? "step_s" : "tflops", want, got,
		       100 * e_rel, res->plans[0].memory.total_gib);
		CHECK(res->plans[0].memory.total_gib <= 80.0);
		if (n == 64)
			break;
	}
	fclose(fp);
	free(res);
	{
		double med = testlib_median(err, n);
		printf("# training: %d rows, median |error| %.1f %%\n", n,
		       100 * med);
		CHECK(n >= 25);
		CHECK(med <= 0.15);
	}
}

static bool arch_for(const char *model, struct model_arch *m)
{
	memset(m, 0, sizeof(*m));
	m->vocab_size = 32000;
	m->gated_mlp = true;
	if (strcmp(model, "Llama 2 7B") == 0) {
		m->layers = 32;
		m->hidden_size = 4096;
		m->heads = m->kv_heads = 32;
		m->ffn_hidden_size = 11008;
		return true;
	}
	if (strcmp(model, "Llama 2 70B") == 0) {
		m->layers = 80;
		m->hidden_size = 8192;
		m->heads = 64;
		m->kv_heads = 8;
		m->ffn_hidden_size = 28672;
		return true;
	}
	if (strcmp(model, "GPT-J 6B") == 0) { /* EleutherAI model card */
		m->layers = 28;
		m->hidden_size = 4096;
		m->heads = m->kv_heads = 16;
		m->ffn_hidden_size = 16384;
		m->vocab_size = 50400;
		m->gated_mlp = false;
		return true;
	}
	return false;
}

static void test_inference_rows(void)
{
	static char line[MAXL];
	struct table t;
	char *f[MAXF];
	double err_t[64], err_f[64];
	int nt = 0, nf_ = 0;
	FILE *fp = open_table("inference_runs.csv", &t);

	CHECK(fp != NULL);
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		struct inf_request rq;
		struct inf_plan p;
		struct eng_error e;
		int nf = split_csv(line, f);
		const char *id = f[col(&t, "case_id")];
		const char *gname = f[col(&t, "gpu")];
		const char *wp = f[col(&t, "weight_precision")];
		int tp = (int)num(f, col(&t, "tp"));
		long bs = (long)num(f, col(&t, "batch_size"));
		double tok_gpu = num(f, col(&t, "output_tok_per_s_per_gpu"));
		double tok_tot = num(f, col(&t, "output_tok_per_s_total"));
		double ttft = num(f, col(&t, "ttft_ms"));
		double got, want, er;
		bool is_ttft;

		if (nf < 30 || strncmp(id, "TRT", 3) != 0 || tp < 1)
			continue;
		inf_request_init(&rq);
		if (!arch_for(f[col(&t, "model")], &rq.model))
			continue; /* Falcon: architecture not in the fixture */
		if (strstr(gname, "H100"))
			rq.gpu = fx_h100();
		else if (strstr(gname, "L40S"))
			rq.gpu = fx_l40s();
		else
			rq.gpu = fx_a100(); /* variant not stated: 80 GB SXM */
		rq.weight_precision =
		    strcmp(wp, "FP8") == 0 ? ENG_FP8 : ENG_FP16;
		/* the rows are TensorRT-LLM's (v0.5 / v0.6.1), FP8 KV with
		 * FP8 weights as its checkpoints have it */
		rq.serving = INF_SERVING_TRTLLM;
		rq.prompt_tokens = (long)num(f, col(&t, "input_len"));
		rq.output_tokens = (long)num(f, col(&t, "output_len"));
		if (inf_evaluate(&rq, tp, 1, bs, &p, &e)) {
			printf("# %-20s engine error %s\n", id, e.message);
			CHECK(0);
			continue;
		}
		is_ttft = ttft > 0;
		if (is_ttft) {
			got = p.ttft_ms;
			want = ttft;
		} else {
			/* per GPU: the H100 table says so; the A100/L40S tables
			 * are read the same way (tp 1 rows are unambiguous) */
			want = tok_gpu > 0 ? tok_gpu : tok_tot;
			got = p.output_tokens_per_s / tp;
		}
		er = got / want - 1;
		if (is_ttft)
			err_f[nf_++] = er < 0 ? -er : er;
		else
			err_t[nt++] = er < 0 ? -er : er;
		printf("# %-14s %-12s %-5s tp%d b%-5ld %5ld/%-5ld %-7s "
		       "published %8.1f engine %8.1f %+6.1f %%\n",
		       id, f[col(&t, "model")], wp, tp, bs, rq.prompt_tokens,
		       rq.output_tokens, is_ttft ? "ttft_ms" : "tok/s/gpu",
		       want, got, 100 * er);
		if (nt == 64 || nf_ == 64)
			break;
	}
	fclose(fp);
	{
		double mt = testlib_median(err_t, nt),
		       mf = testlib_median(err_f, nf_);
		printf(
		    "# inference throughput: %d rows, median |error| %.1f %%\n",
		    nt, 100 * mt);
		printf("# inference ttft: %d rows, median |error| %.1f %%\n",
		       nf_, 100 * mf);
		CHECK(nt >= 20 && nf_ >= 10);
		CHECK(mt <= 0.15);
		CHECK(mf <= 0.25); /* ±30 % band of the README for TTFT */
	}
}

/* Architectures of the serving rows (HF config.json of each model). */
static bool serving_arch(const char *key, struct model_arch *m)
{
	static const struct {
		const char *key;
		long L, h, a, k, d, f, V;
	} t[] = {
	    {"llama-3-8b", 32, 4096, 32, 8, 128, 14336, 128256},
	    {"llama-3-70b", 80, 8192, 64, 8, 128, 28672, 128256},
	    {"llama-2-7b", 32, 4096, 32, 32, 128, 11008, 32000},
	    {"llama-2-13b", 40, 5120, 40, 40, 128, 13824, 32000},
	    {"llama-2-70b", 80, 8192, 64, 8, 128, 28672, 32000},
	    {"qwen3-8b", 36, 4096, 32, 8, 128, 12288, 151936},
	    {"qwen3-14b", 40, 5120, 40, 8, 128, 17408, 151936},
	    {"qwen3-32b", 64, 5120, 64, 8, 128, 25600, 151936},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (strcmp(key, t[i].key))
			continue;
		memset(m, 0, sizeof(*m));
		m->layers = t[i].L;
		m->hidden_size = t[i].h;
		m->heads = t[i].a;
		m->kv_heads = t[i].k;
		m->head_dim = t[i].d;
		m->ffn_hidden_size = t[i].f;
		m->vocab_size = t[i].V;
		m->gated_mlp = true;
		return true;
	}
	return false;
}

/* Out of sample (issue 12): serving measurements gathered for this change
 * (tests/fixtures/validation/serving_runs.csv, docs/VALIDATION.md), none
 * used to set a default. Poisson-rate and fixed-concurrency rows go
 * through inf_size at that load (tp pinned); static-batch rows through
 * inf_evaluate; max-throughput rows are capacity without targets. */
static void test_serving_rows(void)
{
	static char line[MAXL];
	static const char *const groups[] = {"tpot_ms", "ttft_ms", "tok_s_gpu"};
	struct table t;
	char *f[MAXF];
	double err[3][160];
	int n[3] = {0, 0, 0}, rows = 0;
	FILE *fp = open_table("serving_runs.csv", &t);
	struct inf_result *r = calloc(1, sizeof(*r));

	CHECK(fp != NULL && r != NULL);
	if (!fp || !r)
		goto out;
	while (fgets(line, sizeof(line), fp)) {
		struct inf_request rq;
		struct inf_plan p;
		struct eng_error e;
		const char *metric, *load, *gk, *wp;
		double want, got = 0, er;
		int pick = 0;
		int g = -1, rc;

		if (split_csv(line, f) < 15)
			continue;
		metric = f[col(&t, "metric")];
		load = f[col(&t, "load")];
		gk = f[col(&t, "gpu")];
		wp = f[col(&t, "weight_precision")];
		want = num(f, col(&t, "published"));
		for (int i = 0; i < 3; i++)
			if (strcmp(metric, groups[i]) == 0)
				g = i;
		inf_request_init(&rq);
		if (g < 0 || !serving_arch(f[col(&t, "model")], &rq.model))
			continue;
		rq.gpu = strcmp(gk, "h200") == 0   ? fx_h200()
			 : strcmp(gk, "h100") == 0 ? fx_h100()
						   : fx_a100();
		rq.weight_precision = strcmp(wp, "fp8") == 0	? ENG_FP8
				      : strcmp(wp, "fp16") == 0 ? ENG_FP16
								: ENG_BF16;
		inf_serving_parse(f[col(&t, "serving")], &rq.serving);
		rq.chunked_prefill = (int)num(f, col(&t, "chunked_prefill"));
		rq.max_batch = (long)num(f, col(&t, "max_batch"));
		rq.memory_utilization = num(f, col(&t, "memory_utilization"));
		rq.scheduler_steps = (int)num(f, col(&t, "scheduler_steps"));
		rq.prompt_tokens = (long)num(f, col(&t, "prompt_tokens"));
		rq.output_tokens = (long)num(f, col(&t, "output_tokens"));
		rq.tp = (int)num(f, col(&t, "tp"));
		if (strcmp(load, "static") == 0) {
			long b = (long)num(f, col(&t, "load_value"));
			rq.max_batch = 0;
			rc = inf_evaluate(&rq, rq.tp, 1, b, &p, &e);
			/* first token of a static batch: the whole batch's
			 * prefill, from the throughput identity */
			got =
			    g == 0
				? p.tpot_ms
				: (b * (double)rq.output_tokens /
				       p.output_tokens_per_s -
				   (double)rq.output_tokens * p.tpot_ms / 1e3) *
				      1e3;
		} else {
			if (strcmp(load, "rate") == 0)
				rq.load_kind = INF_LOAD_REQUESTS_PER_S;
			else if (strcmp(load, "concurrency") == 0)
				rq.load_kind = INF_LOAD_CONCURRENT_SEQUENCES;
			rq.load_value = num(f, col(&t, "load_value"));
			/* a measured deployment: one replica, whatever the
			 * utilisation */
			rq.max_utilization = 1.0;
			rq.top = INF_MAX_TOP;
			rc = inf_size(&rq, r, &e);
			/* the published layout: tp GPUs, no pipeline stages
			 * (the search also ranks stages narrower than a node,
			 * review s18b F4) */
			pick = 0;
			while (rc == 0 && pick < r->n_plans - 1 &&
			       r->plans[pick].pp > 1)
				pick++;
			if (rc == 0 && r->plans[pick].pp > 1) {
				printf("# %-34s %-9s no single-stage plan of "
				       "tp %d\n",
				       f[col(&t, "case_id")], metric, rq.tp);
				continue;
			}
			if (rc == 0 && r->plans[pick].replicas > 1) {
				/* the published deployment ran past one
				 * replica's capacity; the engine sizes more
				 * (reported, not scored: VALIDATION.md) */
				printf("# %-34s %-9s beyond capacity: the "
				       "engine adds replicas (%ld)\n",
				       f[col(&t, "case_id")], metric,
				       r->plans[pick].replicas);
				continue;
			}
			if (rc == 0) {
				const struct inf_plan *q = &r->plans[pick];
				got = g == 0 ? q->tpot_ms
				      : g == 1
					  ? q->ttft_ms
					  : q->capacity.output_tokens_per_s /
						rq.tp;
			}
		}
		if (rc != 0) {
			printf("# %-34s engine error %s: %s\n",
			       f[col(&t, "case_id")], e.field, e.message);
			/* a published deployment ran: the engine must size
			 * it (a day's refusal of TensorRT-LLM's long prompts
			 * dropped five rows unseen) */
			CHECK(rc == 0);
			continue;
		}
		rows++;
		er = got / want - 1;
		if (n[g] < 160)
			err[g][n[g]++] = fabs(er);
		printf("# %-34s %-9s %-11s published %9.1f engine %9.1f "
		       "%+6.1f %%\n",
		       f[col(&t, "case_id")], metric, load, want, got,
		       100 * er);
	}
	for (int i = 0; i < 3; i++)
		printf("# serving %s: %d rows, median |error| %.1f %%\n",
		       groups[i], n[i], 100 * testlib_median(err[i], n[i]));
	/* every row is evaluated; the accuracy is reported, not gated: the
	 * rows are out of sample (docs/VALIDATION.md explains the misses) */
	CHECK(rows >= 100);
out:
	if (fp)
		fclose(fp);
	free(r);
}

/* Exact: Databricks Table 3 KV-cache sizes (±1 %). */
static void test_kv_rows(void)
{
	struct model_arch m;
	arch_for("Llama 2 70B", &m);
	CHECK_NEAR(1 * 1024 * model_kv_bytes_per_token(&m, 2, 1) / 1073741824.0,
		   0.312, 0.01);
	CHECK_NEAR(16 * 1024 * model_kv_bytes_per_token(&m, 2, 1) /
		       1073741824.0,
		   5, 0.01);
	CHECK_NEAR(64 * 1024 * model_kv_bytes_per_token(&m, 1, 1) /
		       1073741824.0,
		   10, 0.01);
}

int main(void)
{
	RUN(test_training_rows);
	RUN(test_inference_rows);
	RUN(test_kv_rows);
	RUN(test_serving_rows);
	return testlib_finish();
}
