/* fuzz_engine.c - the engine entry points trn_size and inf_size on
 * request structs decoded from the fuzzer's bytes.
 *
 * Byte 0 picks the mode: bit 0 training/inference; bit 1 "raw" (every
 * number any bit pattern: NaN, infinities, negatives, huge; enums out of
 * range; the engine promises to validate, so it must refuse or answer,
 * never crash or hit undefined behaviour) versus "handler-valid" (every
 * field within the range the handlers' parsers enforce, the model
 * accepted by model_validate as arch_parse requires, the GPU a catalog
 * row loaded by sizing_load_gpu, optionally with fleet medians: exactly
 * what a request can reach).
 *
 * Properties: the return is 0 or an engine error code with a message and
 * a field; on 0, n_plans is within top, and each plan's headline numbers
 * are finite and positive, and its memory fits the GPU.
 */
#include <math.h>

#include "engine/inference.h"
#include "engine/training.h"
#include "handlers/sizing.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/stubs/catalog_rows.h"

struct rd {
	const uint8_t *p;
	size_t n;
};

static uint64_t u64(struct rd *r, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++) {
		v <<= 8;
		if (r->n) {
			v |= *r->p++;
			r->n--;
		}
	}
	return v;
}

/* An integer in [lo, hi], small values likelier (a byte picks the bit
 * width first), as a handler would have accepted it.
 */
static long pick(struct rd *r, long lo, long hi)
{
	unsigned w = (unsigned)u64(r, 1) % 40;
	uint64_t span = (uint64_t)(hi - lo) + 1;
	uint64_t v = u64(r, 5) & ((w >= 63 ? ~0ULL : (1ULL << w)) - 1);

	return lo + (long)(v % span);
}

static long pick0(struct rd *r, long lo, long hi) /* 0 = absent */
{
	return u64(r, 1) & 1 ? pick(r, lo, hi) : 0;
}

static double pickd(struct rd *r, double lo, double hi)
{
	double f = (double)u64(r, 4) / 4294967295.0;

	/* Log-uniform when the range spans decades and lo > 0. */
	if (lo > 0 && hi / lo > 100)
		return lo * pow(hi / lo, f);
	return lo + (hi - lo) * f;
}

static double rawd(struct rd *r)
{
	uint64_t b = u64(r, 8);
	double d;

	memcpy(&d, &b, sizeof(d));
	return d;
}

static long rawl(struct rd *r)
{
	return (long)u64(r, 8);
}

static void model_valid(struct rd *r, struct model_arch *m)
{
	memset(m, 0, sizeof(*m));
	m->layers = pick(r, 1, 4096);
	m->hidden_size = pick(r, 1, 1048576);
	m->heads = pick(r, 1, 65536);
	m->kv_heads = u64(r, 1) & 1 ? pick(r, 1, 65536) : m->heads;
	m->head_dim = pick0(r, 1, 65536);
	m->ffn_hidden_size = pick(r, 1, 1048576L * 8);
	m->vocab_size = pick(r, 1, 4194304);
	m->gated_mlp = u64(r, 1) & 1;
	m->tied_embeddings = u64(r, 1) & 1;
	m->learned_pos_emb = u64(r, 1) & 1;
	m->max_seq_len = pick0(r, 1, 1L << 24);
	if (u64(r, 1) & 1) {
		m->moe.experts = pick(r, 1, 65536);
		m->moe.top_k = pick(r, 1, 65536);
		m->moe.expert_ffn_hidden_size = pick(r, 1, 1048576L * 8);
		m->moe.shared_experts = pick(r, 0, 65536);
		m->moe.dense_layers = pick(r, 0, 4096);
		if (u64(r, 1) & 1) {
			m->moe.router_groups = pick(r, 1, 65536);
			m->moe.router_group_top_k = pick(r, 1, 65536);
		}
	}
	if (u64(r, 1) & 1) {
		m->mla.q_lora_rank = pick(r, 0, 1048576);
		m->mla.kv_lora_rank = pick(r, 1, 1048576);
		m->mla.qk_nope_head_dim = pick(r, 1, 65536);
		m->mla.qk_rope_head_dim = pick(r, 1, 65536);
		m->mla.v_head_dim = pick(r, 1, 65536);
	}
}

static void model_raw(struct rd *r, struct model_arch *m)
{
	long *f[] = {&m->layers,
		     &m->hidden_size,
		     &m->heads,
		     &m->kv_heads,
		     &m->head_dim,
		     &m->ffn_hidden_size,
		     &m->vocab_size,
		     &m->max_seq_len,
		     &m->moe.experts,
		     &m->moe.top_k,
		     &m->moe.expert_ffn_hidden_size,
		     &m->moe.shared_experts,
		     &m->moe.dense_layers,
		     &m->moe.router_groups,
		     &m->moe.router_group_top_k,
		     &m->mla.q_lora_rank,
		     &m->mla.kv_lora_rank,
		     &m->mla.qk_nope_head_dim,
		     &m->mla.qk_rope_head_dim,
		     &m->mla.v_head_dim};

	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		*f[i] = u64(r, 1) & 1 ? rawl(r) : pick(r, 0, 100000);
	m->gated_mlp = u64(r, 1) & 1;
	m->tied_embeddings = u64(r, 1) & 1;
	m->learned_pos_emb = u64(r, 1) & 1;
}

/* A catalog GPU as sizing_load_gpu loads it, maybe with fleet medians. */
static void gpu_valid(struct rd *r, struct hw_spec *hw)
{
	static struct app app;
	struct calib_info ci;
	struct response res = {0};
	struct store_gpu row; /* the typed catalog row (sizing.h) */
	json_t *name_row;
	size_t n = 0;
	const char *name;

	while (fuzz_gpu_rows[n])
		n++;
	name_row = json_loads(fuzz_gpu_rows[u64(r, 1) % n], 0, NULL);
	name = json_string_value(json_object_get(name_row, "name"));
	if (sizing_load_gpu(&app, name, "gpu", CALIB_DATASHEET, "calibration",
			    hw, &ci, &row, &res) != 0)
		FZ_FAIL("catalog GPU %s does not load", name);
	json_decref(name_row);
	res_release(&res);
	if (u64(r, 1) & 1) {
		for (int t = 0; t < ENG_DTYPE_COUNT; t++)
			if (u64(r, 1) & 1) {
				hw->gemm_tflops[t].value = pickd(r, 1e-6, 1e15);
				hw->gemm_tflops[t].samples =
				    (int)pick(r, 1, 1000);
			}
		if (u64(r, 1) & 1) {
			hw->hbm_gbps.value = pickd(r, 1e-6, 1e15);
			hw->hbm_gbps.samples = 1;
		}
		if (u64(r, 1) & 1) {
			hw->intra_node_busbw_gbps.value = pickd(r, 1e-6, 1e15);
			hw->intra_node_busbw_gbps.samples = 1;
		}
		if (u64(r, 1) & 1) {
			hw->inter_node_busbw_gbps.value = pickd(r, 1e-6, 1e15);
			hw->inter_node_busbw_gbps.samples = 1;
		}
	}
}

static void gpu_raw(struct rd *r, struct hw_spec *hw)
{
	memset(hw, 0, sizeof(*hw));
	snprintf(hw->name, sizeof(hw->name), "raw");
	hw->memory_gib = rawd(r);
	for (int t = 0; t < ENG_DTYPE_COUNT; t++)
		hw->peak_tflops[t] = rawd(r);
	hw->memory_bandwidth_gbps = rawd(r);
	hw->intra_node_link = (enum hw_link)(u64(r, 1) % 5);
	hw->intra_node_gbps = rawd(r);
	hw->max_gpus_per_node = (int)u64(r, 4);
	hw->inter_node_gbps = rawd(r);
	hw->host_link_gbps = rawd(r);
	hw->price_per_gpu_hour = rawd(r);
	hw->cc_major = (int)u64(r, 1) % 12;
	hw->cc_minor = (int)u64(r, 1) % 10;
	for (int t = 0; t < ENG_DTYPE_COUNT; t++) {
		hw->gemm_tflops[t].value = rawd(r);
		hw->gemm_tflops[t].samples = (int)u64(r, 1) % 3;
	}
	hw->hbm_gbps.value = rawd(r);
	hw->hbm_gbps.samples = (int)u64(r, 1) % 3;
}

static void choices(struct rd *r, struct trn_choices *c, long lo, long hi)
{
	c->n =
	    (int)(u64(r, 1) % 4 == 0 ? u64(r, 1) % (TRN_MAX_CHOICES + 1) : 0);
	for (int i = 0; i < c->n; i++)
		c->v[i] = (int)pick(r, lo, hi);
}

static void check_err(int rc, const struct eng_error *err)
{
	if (rc != ENG_EINVAL && rc != ENG_EINFEASIBLE && rc != ENG_EUNSUPPORTED)
		FZ_FAIL("engine returned %d", rc);
	if (err->code != rc || !err->message[0])
		FZ_FAIL("engine error %d without its message", rc);
}

static void finite_pos(double x, const char *what)
{
	if (!isfinite(x) || x < 0)
		FZ_FAIL("plan %s = %g", what, x);
}

static void training(struct rd *r, int raw)
{
	static struct trn_result res;
	struct trn_request rq;
	struct eng_error err;
	char msg[256];
	int rc;

	trn_request_init(&rq);
	if (raw) {
		model_raw(r, &rq.model);
		gpu_raw(r, &rq.gpu);
		rq.seq_len = rawl(r);
		rq.train_tokens = rawd(r);
		rq.global_batch_size = rawl(r);
		rq.global_batch_tokens = rawd(r);
		rq.precision = (enum eng_dtype)(u64(r, 1) % 10);
		rq.optimizer = (enum trn_optimizer)(u64(r, 1) % 6);
		rq.gradient_precision = (enum eng_dtype)(u64(r, 1) % 10);
		rq.method = (enum trn_method)(u64(r, 1) % 5);
		rq.lora_rank = rawl(r);
		rq.gpus_per_node = (int)u64(r, 4);
		rq.gpus = rawl(r);
		rq.max_gpus = rawl(r);
		rq.deadline_days = rawd(r);
		rq.price_per_gpu_hour = rawd(r);
		rq.inter_node_gbps = rawd(r);
		rq.top = (int)u64(r, 4);
		rq.objective = (enum trn_objective)(u64(r, 1) % 5);
	} else {
		model_valid(r, &rq.model);
		if (model_validate(&rq.model, msg, sizeof(msg)) != 0)
			return; /* arch_parse refuses it: a 400 */
		gpu_valid(r, &rq.gpu);
		rq.seq_len = pick(r, 1, 1L << 22);
		rq.train_tokens = u64(r, 1) & 1 ? pickd(r, 1, 1e18) : 0;
		if (u64(r, 1) & 1)
			rq.global_batch_size = pick0(r, 1, 1L << 26);
		else if (u64(r, 1) & 1)
			rq.global_batch_tokens = pickd(r, 1, 1e12);
		rq.precision =
		    (enum eng_dtype[]){ENG_FP32, ENG_TF32, ENG_FP16, ENG_BF16,
				       ENG_FP8}[u64(r, 1) % 5];
		rq.gradient_precision = u64(r, 1) & 1 ? ENG_FP32 : ENG_BF16;
		rq.optimizer = (enum trn_optimizer)(u64(r, 1) % 4);
		rq.method = (enum trn_method)(u64(r, 1) % 3);
		rq.lora_rank = pick(r, 1, 65536);
		rq.gpus_per_node = (int)pick0(r, 1, 1024);
		if (u64(r, 1) & 1)
			rq.gpus = pick(r, 1, 1L << 20);
		else
			rq.max_gpus =
			    u64(r, 1) & 1 ? pick(r, 1, 1L << 20) : 1024;
		rq.deadline_days = u64(r, 1) & 1 ? pickd(r, 1e-6, 1e6) : 0;
		rq.price_per_gpu_hour = u64(r, 1) & 1 ? pickd(r, 0, 1e4) : 0;
		rq.inter_node_gbps = u64(r, 1) & 1 ? pickd(r, 1e-3, 1e6) : 0;
		choices(r, &rq.strategies.tp, 1, 1024);
		choices(r, &rq.strategies.pp, 1, 1024);
		choices(r, &rq.strategies.dp, 1, 1 << 20);
		choices(r, &rq.strategies.ep, 1, 1024);
		choices(r, &rq.strategies.cp, 1, 1024);
		choices(r, &rq.strategies.vp, 1, 64);
		choices(r, &rq.strategies.zero, 0, 3);
		choices(r, &rq.strategies.micro_batch, 1, 65536);
		choices(r, &rq.strategies.recompute, 0, ENG_RC_COUNT - 1);
		choices(r, &rq.strategies.offload, 0, 2);
		choices(r, &rq.strategies.sequence_parallel, 0, 1);
		choices(r, &rq.strategies.flash_attention, 0, 1);
		rq.top = (int)pick(r, 1, TRN_MAX_TOP);
		rq.objective = (enum trn_objective)(u64(r, 1) % 3);
		/* the expert all-to-all's dispatcher and FP8 dispatch */
		rq.stack.ep_dispatcher =
		    (enum moe_dispatcher)(u64(r, 1) % MOE_DISPATCH_COUNT);
		rq.stack.ep_dispatch_fp8 = u64(r, 1) & 1;
	}
	rc = trn_size(&rq, &res, &err);
	if (rc != 0) {
		check_err(rc, &err);
		return;
	}
	if (res.n_plans < 0 || res.n_plans > TRN_MAX_TOP ||
	    res.n_plans > (rq.top > 0 ? rq.top : 5))
		FZ_FAIL("n_plans %d for top %d", res.n_plans, rq.top);
	for (int i = 0; i < res.n_plans; i++) {
		const struct trn_plan *p = &res.plans[i];
		if (p->gpus < 1 || p->layout.tp < 1 || p->layout.pp < 1 ||
		    p->layout.dp < 1)
			FZ_FAIL("plan %d: gpus %ld tp %d pp %d dp %d", i,
				p->gpus, p->layout.tp, p->layout.pp,
				p->layout.dp);
		finite_pos(p->time.step_s, "time.step_s");
		finite_pos(p->memory.total_gib, "memory.total_gib");
		finite_pos(p->tokens_per_s, "tokens_per_s");
		finite_pos(p->mfu, "mfu");
		if (!p->fits ||
		    p->memory.total_gib > p->memory.capacity_gib * (1 + 1e-9))
			FZ_FAIL("plan %d does not fit: %g of %g GiB", i,
				p->memory.total_gib, p->memory.capacity_gib);
	}
}

static void inference(struct rd *r, int raw)
{
	static struct inf_result res;
	struct inf_request rq;
	struct eng_error err;
	char msg[256];
	int rc;

	inf_request_init(&rq);
	if (raw) {
		model_raw(r, &rq.model);
		gpu_raw(r, &rq.gpu);
		rq.weight_precision = (enum eng_dtype)(u64(r, 1) % 10);
		rq.kv_precision = (enum eng_dtype)(u64(r, 1) % 10);
		rq.prompt_tokens = rawl(r);
		rq.output_tokens = rawl(r);
		rq.load_kind = (enum inf_load_kind)(u64(r, 1) % 6);
		rq.load_value = rawd(r);
		rq.ttft_ms = rawd(r);
		rq.tpot_ms = rawd(r);
		rq.memory_utilization = rawd(r);
		rq.gpus_per_node = (int)u64(r, 4);
		rq.max_gpus = rawl(r);
		rq.price_per_gpu_hour = rawd(r);
		rq.max_batch = rawl(r);
		rq.tp = (int)u64(r, 4);
		rq.top = (int)u64(r, 4);
		rq.serving = (enum inf_serving_engine)(u64(r, 1) % 6);
		rq.max_num_batched_tokens = rawl(r);
		rq.chunked_prefill = (int)(u64(r, 1) % 4) - 1;
		rq.max_utilization = rawd(r);
	} else {
		static const double load_max[] = {0, 1e7, 1e8, 1e10};
		model_valid(r, &rq.model);
		if (model_validate(&rq.model, msg, sizeof(msg)) != 0)
			return;
		gpu_valid(r, &rq.gpu);
		rq.weight_precision =
		    (enum eng_dtype[]){
			ENG_FP32, ENG_BF16, ENG_FP16,
			ENG_FP8,  ENG_INT8, ENG_INT4}[u64(r, 1) % 6];
		if (u64(r, 1) & 1)
			rq.kv_precision = (enum eng_dtype[]){
			    ENG_FP32, ENG_BF16, ENG_FP16, ENG_FP8,
			    ENG_INT8}[u64(r, 1) % 5];
		rq.prompt_tokens = pick(r, 1, 1L << 24);
		rq.output_tokens = pick(r, 1, 1L << 24);
		rq.load_kind = (enum inf_load_kind)(u64(r, 1) % 4);
		if (rq.load_kind != INF_LOAD_NONE)
			rq.load_value = pickd(r, 1e-9, load_max[rq.load_kind]);
		rq.ttft_ms = u64(r, 1) & 1 ? pickd(r, 1e-3, 1e7) : 0;
		rq.tpot_ms = u64(r, 1) & 1 ? pickd(r, 1e-3, 1e7) : 0;
		rq.gpus_per_node = (int)pick0(r, 1, 1024);
		rq.tp = (int)pick0(r, 1, 1024);
		rq.max_gpus = pick0(r, 1, 1L << 20);
		rq.price_per_gpu_hour = u64(r, 1) & 1 ? pickd(r, 0, 1e4) : 0;
		if (u64(r, 1) & 1)
			rq.memory_utilization = pickd(r, 0.05, 1);
		rq.max_batch = pick0(r, 1, 1L << 20);
		rq.top = (int)pick(r, 1, INF_MAX_TOP);
		rq.serving =
		    (enum inf_serving_engine)(u64(r, 1) % INF_SERVING_COUNT);
		rq.max_num_batched_tokens = pick0(r, 1, 1L << 24);
		rq.chunked_prefill = (int)(u64(r, 1) % 3) - 1;
		if (u64(r, 1) & 1)
			rq.max_utilization = pickd(r, 0.05, 1);
	}
	rc = inf_size(&rq, &res, &err);
	if (rc != 0) {
		check_err(rc, &err);
		return;
	}
	if (res.n_plans < 0 || res.n_plans > INF_MAX_TOP)
		FZ_FAIL("n_plans %d", res.n_plans);
	for (int i = 0; i < res.n_plans; i++) {
		const struct inf_plan *p = &res.plans[i];
		double req_s;
		if (p->tp < 1 || p->replicas < 1 || p->gpus < 1 ||
		    !(p->batch > 0) || !isfinite(p->batch))
			FZ_FAIL("plan %d: tp %d replicas %ld gpus %ld batch "
				"%g",
				i, p->tp, p->replicas, p->gpus, p->batch);
		/* Little's law and the utilisation ceiling hold for every
		 * answer (MODEL.md §7.3) */
		req_s =
		    (p->ttft_ms + (double)(rq.output_tokens - 1) * p->tpot_ms) /
		    1e3;
		if (fabs(p->batch - p->requests_per_s * req_s) >
		    0.02 * p->batch + 1e-9)
			FZ_FAIL("plan %d: in flight %g != %g x %g", i, p->batch,
				p->requests_per_s, req_s);
		/* the ceiling holds, but for a closed loop at one replica a
		 * sequence, where a replica holding one stays busy whatever
		 * the ceiling (inference_replica.c; the answer warns) */
		if (rq.load_kind != INF_LOAD_NONE &&
		    !(rq.load_kind == INF_LOAD_CONCURRENT_SEQUENCES &&
		      (double)p->replicas >=
			  fmax(1.0, ceil(rq.load_value - 1e-9))) &&
		    p->utilization > res.max_utilization * (1 + 1e-9))
			FZ_FAIL("plan %d: utilization %g above %g", i,
				p->utilization, res.max_utilization);
		finite_pos(p->tpot_ms, "tpot_ms");
		finite_pos(p->ttft_ms, "ttft_ms");
		finite_pos(p->total_gib, "total_gib");
		finite_pos(p->output_tokens_per_s, "output_tokens_per_s");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rd r = {data, size};
	unsigned mode;

	if (size < 1)
		return 0;
	mode = (unsigned)u64(&r, 1);
	if (mode & 1)
		inference(&r, (mode & 6) == 6);
	else
		training(&r, (mode & 6) == 6);
	return 0;
}
