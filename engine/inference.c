/* inference.c - serving sizing: the public entry points (inf_size,
 * inf_evaluate), request validation, the search over (tp, pp) and the
 * result (docs/MODEL.md §7). The parts it shares inference_int.h with:
 * inference_serving.c (dtypes, serving profiles, memory) and
 * inference_replica.c (step times, the operating point at a load). */
#include "inference_int.h"

#include "formulas.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Pipeline stages of one replica at most (tp filling a node): the search
 * tries 1, 2, 4, ... up to it, and no more than the layers. */
#define INF_MAX_STAGES 64

/* ---- validation, static evaluation, search ---------------------------- */

/* x rounded up to a tenth, as a bound the 422 quotes: to nearest, a best
 * TPOT of 3.24 ms was quoted as 3.2, a target the same answer refuses
 * (review s23a F3). */
static double up_tenth(double x)
{
	return ceil(x * 10.0 - 1e-9) / 10.0;
}

static int validate(const struct inf_request *rq, struct eng_error *err)
{
	char msg[256];

	if (model_validate(&rq->model, msg, sizeof(msg))) {
		char field[64];
		size_t n = strcspn(msg, ":");
		if (n >= sizeof(field))
			n = sizeof(field) - 1;
		memcpy(field, msg, n);
		field[n] = '\0';
		return eng_fail(err, ENG_EINVAL, field, "%s", msg);
	}
	if ((unsigned)rq->weight_precision >= ENG_DTYPE_COUNT ||
	    !inf_weight_table[rq->weight_precision].allowed)
		return eng_fail(err, ENG_EINVAL, "weight_precision",
				"must be fp32, bf16, fp16, fp8, int8 or int4");
	if (rq->kv_precision != ENG_DTYPE_COUNT &&
	    (rq->kv_precision != ENG_FP32 && rq->kv_precision != ENG_FP16 &&
	     rq->kv_precision != ENG_BF16 && rq->kv_precision != ENG_FP8 &&
	     rq->kv_precision != ENG_INT8))
		return eng_fail(err, ENG_EINVAL, "kv_cache_precision",
				"must be fp32, bf16, fp16, fp8 or int8");
	if (rq->prompt_tokens < 1 || rq->prompt_tokens > INF_MAX_TOKENS)
		return eng_fail(err, ENG_EINVAL, "prompt_tokens",
				"must be between 1 and %ld", INF_MAX_TOKENS);
	if (rq->output_tokens < 1 || rq->output_tokens > INF_MAX_TOKENS)
		return eng_fail(err, ENG_EINVAL, "output_tokens",
				"must be between 1 and %ld", INF_MAX_TOKENS);
	if (rq->model.learned_pos_emb &&
	    rq->prompt_tokens + rq->output_tokens > rq->model.max_seq_len)
		return eng_fail(err, ENG_EINVAL, "prompt_tokens",
				"prompt + output exceed model.max_seq_len");
	if (!(rq->memory_utilization >= 0.0 && rq->memory_utilization <= 1.0))
		return eng_fail(err, ENG_EINVAL, "memory_utilization",
				"must be in (0, 1]");
	if (!(rq->max_utilization >= 0.0 && rq->max_utilization <= 1.0))
		return eng_fail(err, ENG_EINVAL, "max_utilization",
				"must be in (0, 1]");
	if ((unsigned)rq->serving >= INF_SERVING_COUNT)
		return eng_fail(err, ENG_EINVAL, "serving",
				"must be vllm, tensorrt-llm, sglang or "
				"generic");
	if (rq->scheduler_steps < 0 ||
	    rq->scheduler_steps > INF_MAX_SCHED_STEPS)
		return eng_fail(err, ENG_EINVAL, "scheduler_steps",
				"must be between 1 and %d",
				INF_MAX_SCHED_STEPS);
	if (rq->chunked_prefill > 1 || rq->max_num_batched_tokens < 0)
		return eng_fail(err, ENG_EINVAL,
				rq->chunked_prefill > 1
				    ? "chunked_prefill"
				    : "max_num_batched_tokens",
				"out of range");
	if ((unsigned)rq->load_kind >= INF_LOAD_COUNT)
		return eng_fail(err, ENG_EINVAL, "load", "unknown load kind");
	if (rq->load_kind != INF_LOAD_NONE &&
	    !(isfinite(rq->load_value) && rq->load_value > 0.0))
		return eng_fail(err, ENG_EINVAL,
				inf_load_kind_name(rq->load_kind),
				"must be a positive finite number");
	if (!(isfinite(rq->ttft_ms) && rq->ttft_ms >= 0.0))
		return eng_fail(err, ENG_EINVAL, "ttft_ms",
				"must be a finite number >= 0");
	if (!(isfinite(rq->tpot_ms) && rq->tpot_ms >= 0.0))
		return eng_fail(err, ENG_EINVAL, "tpot_ms",
				"must be a finite number >= 0");
	if (rq->tp < 0 || (rq->tp > 0 && ((rq->tp & (rq->tp - 1)) ||
					  rq->model.heads % rq->tp)))
		return eng_fail(err, ENG_EINVAL, "tp",
				"must be a power of two dividing the %ld "
				"attention heads",
				rq->model.heads);
	if (rq->max_gpus < 0 || rq->max_batch < 0)
		return eng_fail(err, ENG_EINVAL,
				rq->max_gpus < 0 ? "max_gpus" : "max_batch",
				"must not be negative");
	if (!(isfinite(rq->price_per_gpu_hour) && rq->price_per_gpu_hour >= 0))
		return eng_fail(err, ENG_EINVAL, "price_per_gpu_hour",
				"must be a finite number >= 0");
	if (rq->top < 0 || rq->top > INF_MAX_TOP)
		return eng_fail(err, ENG_EINVAL, "top",
				"must be between 1 and %d", INF_MAX_TOP);
	if (!(rq->gpu.memory_gib > 0) || !(rq->gpu.memory_bandwidth_gbps > 0))
		return eng_fail(err, ENG_EINVAL, "gpu",
				"memory_gib and memory_bandwidth_gbps must be "
				"positive");
	/* int8 and int4 are weight-only: their GEMMs run at the 16-bit
	 * rate (inf_compute_dtype), so a part without an int8 tensor rate
	 * serves them (review s16a F4: int8 refused where int4 ran) */
	if ((rq->weight_precision != ENG_INT8 &&
	     !hw_supports(&rq->gpu, rq->weight_precision)) ||
	    hw_gemm_rate(&rq->gpu, inf_compute_dtype(rq)).value <= 0) {
		if (rq->weight_precision == ENG_FP8)
			return eng_fail(
			    err, ENG_EUNSUPPORTED, "weight_precision",
			    "fp8 needs FP8 tensor cores (Ada sm_89, Hopper "
			    "sm_90, Blackwell); %s (compute capability "
			    "%d.%d) has none - use %sfp16, int8 or int4",
			    rq->gpu.name, rq->gpu.cc_major, rq->gpu.cc_minor,
			    hw_supports(&rq->gpu, ENG_BF16) ? "bf16, " : "");
		if (rq->weight_precision == ENG_INT8 ||
		    rq->weight_precision == ENG_INT4)
			return eng_fail(
			    err, ENG_EUNSUPPORTED, "weight_precision",
			    "%s is weight-only: its GEMMs run at the 16-bit "
			    "rate, which %s lacks",
			    eng_dtype_name(rq->weight_precision), rq->gpu.name);
		return eng_fail(err, ENG_EUNSUPPORTED, "weight_precision",
				"%s has no %s rate", rq->gpu.name,
				eng_dtype_name(rq->weight_precision));
	}
	{
		/* Without chunking a prompt runs whole in one iteration, and
		 * an iteration holds the token budget: a budget given below
		 * the prompt cannot serve it (vLLM refuses to start so,
		 * TensorRT-LLM rejects the request); without one the budget
		 * covers the prompt (inf_serving_resolve) (review s16a F5:
		 * such plans were priced and marked as meeting their
		 * targets). */
		struct inf_serving sv;

		inf_serving_resolve(rq, 1, &sv);
		if (!sv.chunked_prefill && sv.max_num_batched_tokens > 0 &&
		    rq->prompt_tokens > sv.max_num_batched_tokens)
			return eng_fail(
			    err, ENG_EINFEASIBLE, "max_num_batched_tokens",
			    "a %ld-token prompt is above serving %s's "
			    "%ld-token budget per iteration with chunked "
			    "prefill off: it cannot be scheduled; turn "
			    "chunked_prefill on or raise "
			    "max_num_batched_tokens to the prompt",
			    rq->prompt_tokens, inf_serving_name(sv.engine),
			    sv.max_num_batched_tokens);
		/* vLLM's SchedulerConfig refuses to start with a budget below
		 * max_num_seqs ("max_num_batched_tokens must be greater than
		 * or equal to max_num_seqs"; review s17c F8: a budget of 1
		 * was priced) */
		if (sv.engine == INF_SERVING_VLLM &&
		    rq->max_num_batched_tokens > 0 && sv.max_num_seqs > 0 &&
		    rq->max_num_batched_tokens < sv.max_num_seqs)
			return eng_fail(
			    err, ENG_EINFEASIBLE, "max_num_batched_tokens",
			    "%ld is below vLLM's max_num_seqs (%ld here): vLLM "
			    "refuses to start so; raise it, or lower max_batch "
			    "to it",
			    rq->max_num_batched_tokens, sv.max_num_seqs);
	}
	return 0;
}

int inf_runs_on(const struct inf_request *rq, struct eng_error *err)
{
	eng_error_clear(err);
	if (rq->serving == INF_SERVING_TRTLLM && rq->gpu.cc_major == 0)
		return eng_fail(err, ENG_EUNSUPPORTED, "serving",
				"TensorRT-LLM runs on NVIDIA GPUs only, and "
				"%.40s has no CUDA compute capability",
				rq->gpu.name);
	return 0;
}

void inf_request_init(struct inf_request *rq)
{
	memset(rq, 0, sizeof(*rq));
	rq->weight_precision = ENG_BF16;
	rq->kv_precision = ENG_DTYPE_COUNT;
	rq->prompt_tokens = 512;
	rq->output_tokens = 256;
	rq->serving = INF_SERVING_VLLM;
	rq->chunked_prefill = -1;
	rq->top = 5;
}

int inf_evaluate(const struct inf_request *rq, int tp, int pp, long batch,
		 struct inf_plan *p, struct eng_error *err)
{
	struct ictx c;
	struct mem_plan m;
	double I, O, b = (double)batch, tm, tc, tpot, batch_pf;
	int rc;

	eng_error_clear(err);
	memset(p, 0, sizeof(*p));
	if ((rc = validate(rq, err)))
		return rc;
	if (tp < 1 || rq->model.heads % tp)
		return eng_fail(err, ENG_EINVAL, "tp",
				"model.heads (%ld) is not divisible by tp %d",
				rq->model.heads, tp);
	if (pp < 1 || pp > rq->model.layers || batch < 1)
		return eng_fail(err, ENG_EINVAL, pp < 1 ? "pp" : "batch",
				"must be positive");
	inf_ictx_init(&c, rq);
	I = (double)rq->prompt_tokens;
	O = (double)rq->output_tokens;
	inf_serving_resolve(rq, tp, &p->serving);
	inf_memory_of(&c, tp, pp, &p->serving, &m);
	tpot = inf_decode_s(&c, tp, pp, b, I + O / 2.0, &tm, &tc);
	batch_pf = inf_prefill_s(&c, tp, pp, b);
	p->tp = tp;
	p->pp = pp;
	p->batch = b;
	p->decode_batch = b;
	p->replicas = 1;
	p->gpus = (long)tp * pp;
	p->weights_gib = m.weights / GIB;
	p->workspace_gib = m.workspace / GIB;
	p->usable_gib = m.usable / GIB;
	p->max_batch_fit = m.fit;
	p->kv_cache_gib = b * m.kv_seq / GIB;
	p->total_gib = p->weights_gib + p->kv_cache_gib + p->workspace_gib;
	p->tpot_ms = tpot * 1e3;
	p->ttft_ms = inf_prefill_s(&c, tp, pp, 1.0) * 1e3;
	/* static batch: the batch prefills together, then decodes O steps */
	p->output_tokens_per_s = b * O / (batch_pf + O * tpot);
	p->total_output_tokens_per_s = p->output_tokens_per_s;
	p->requests_per_s = p->output_tokens_per_s / O;
	p->mbu = (inf_weights_read(&c, tp, b) +
		  b * (I + O / 2.0) *
		      model_kv_bytes_per_token(&rq->model, c.kvB, tp)) /
		 tpot / (rq->gpu.memory_bandwidth_gbps * 1e9);
	p->decode_bound = tm >= tc ? ENG_BIND_BANDWIDTH : ENG_BIND_COMPUTE;
	p->binding = batch >= m.fit ? ENG_BIND_MEMORY : ENG_BIND_LATENCY;
	p->cost_per_hour = (double)p->gpus * c.price;
	p->cost_per_million_output_tokens =
	    p->cost_per_hour / (p->output_tokens_per_s * 3600.0) * 1e6;
	p->meets_targets = (rq->tpot_ms <= 0 || p->tpot_ms <= rq->tpot_ms) &&
			   (rq->ttft_ms <= 0 || p->ttft_ms <= rq->ttft_ms);
	return 0;
}

/* Warnings go to the result's fixed table (engine/errors.h). */
#define iwarn(r, ...)                                                          \
	eng_warn(&(r)->warnings[0][0], &(r)->n_warnings, ENG_MAX_WARNINGS,     \
		 ENG_WARNING_LEN, __VA_ARGS__)

/* With a load: the fewest GPUs (the cost per hour of serving it), then
 * the lower TPOT at that load. Without one: the cost per million output
 * tokens at capacity. */
static bool plan_better(const struct inf_request *rq, const struct inf_plan *a,
			const struct inf_plan *b)
{
	if (rq->load_kind != INF_LOAD_NONE && a->gpus != b->gpus)
		return a->gpus < b->gpus;
	if (rq->load_kind == INF_LOAD_NONE &&
	    a->cost_per_million_output_tokens !=
		b->cost_per_million_output_tokens)
		return a->cost_per_million_output_tokens <
		       b->cost_per_million_output_tokens;
	return a->tpot_ms < b->tpot_ms;
}

static void insert_top(const struct inf_request *rq, struct inf_result *res,
		       int top, const struct inf_plan *p)
{
	int pos = res->n_plans < top ? res->n_plans++ : top;

	if (pos == top) {
		if (!plan_better(rq, p, &res->plans[top - 1]))
			return;
		pos = top - 1;
	}
	while (pos > 0 && plan_better(rq, p, &res->plans[pos - 1])) {
		res->plans[pos] = res->plans[pos - 1];
		pos--;
	}
	res->plans[pos] = *p;
}

/* A plan of a closed loop runs its replicas above the ceiling, as its
 * figures print (3 significant digits). */
static bool above_ceiling(const struct inf_plan *p,
			  const struct inf_result *res)
{
	return fx_round_sig(p->utilization, 3) >
	       fx_round_sig(res->max_utilization, 3);
}

static void add_warnings(const struct inf_request *rq, struct inf_result *res)
{
	const struct inf_plan *b = &res->plans[0];
	long seq = rq->prompt_tokens + rq->output_tokens;

	/* the closed loop's replicas stop at one a sequence
	 * (inference_replica.c inf_plan_of) */
	if (rq->load_kind == INF_LOAD_CONCURRENT_SEQUENCES &&
	    above_ceiling(b, res))
		iwarn(res,
		      "%.10g concurrent sequences keep each of the %ld "
		      "replicas at %.3g of its capacity, above max_utilization "
		      "%.3g: a closed loop has no idle time between requests, "
		      "so a replica that holds a sequence stays busy, and "
		      "replicas beyond one a sequence would stand idle",
		      rq->load_value, b->replicas, b->utilization,
		      res->max_utilization);
	/* and the other plans of the list, which can be above the ceiling
	 * where the first is not (review s24b F3: a plan 2 at 6.88 of its
	 * capacity, unsaid) */
	if (rq->load_kind == INF_LOAD_CONCURRENT_SEQUENCES) {
		char list[96] = "";
		size_t used = 0;
		int n = 0;

		for (int i = 1; i < res->n_plans; i++)
			if (above_ceiling(&res->plans[i], res) &&
			    used < sizeof(list))
				used += (size_t)snprintf(
				    list + used, sizeof(list) - used, "%s%d",
				    n++ ? ", " : "", i + 1);
		if (n)
			iwarn(res,
			      "plan%s %s of the list run%s each replica above "
			      "max_utilization %.3g (one replica a sequence: "
			      "a closed loop's replica stays busy); each "
			      "plan's utilization says by how much",
			      n > 1 ? "s" : "", list, n > 1 ? "" : "s",
			      res->max_utilization);
	}

	/* a node wider than the type's scale-up domain: sized as asked
	 * (review s19b F5) */
	if (rq->gpus_per_node > rq->gpu.max_gpus_per_node &&
	    rq->gpu.max_gpus_per_node > 0)
		iwarn(res,
		      "gpus_per_node %d is more than %s's %d, the catalog's "
		      "scale-up domain (max_gpus_per_node): sized as asked, "
		      "each GPU with that domain's share of the node network",
		      rq->gpus_per_node, rq->gpu.name,
		      rq->gpu.max_gpus_per_node);
	if (rq->model.max_seq_len > 0 && seq > rq->model.max_seq_len)
		iwarn(res,
		      "prompt + output (%ld tokens) exceed the model's context "
		      "of %ld tokens: sized as if the model served them (a "
		      "long-context variant or RoPE scaling is assumed); the "
		      "stock model truncates or refuses such requests",
		      seq, rq->model.max_seq_len);
	/* review s14: said, and sized as asked */
	if (inf_runs_on(rq, &(struct eng_error){0}) != 0)
		iwarn(
		    res,
		    "serving tensorrt-llm on %.40s, which has no CUDA compute "
		    "capability: TensorRT-LLM runs on NVIDIA GPUs only; "
		    "sized with its defaults as if it ran (vllm or sglang "
		    "serve this GPU)",
		    rq->gpu.name);
	if (b->serving.budget_is_prompt)
		iwarn(res,
		      "tensorrt-llm without chunked context: max_num_tokens "
		      "taken as the %ld-token prompt (an engine must be built "
		      "with max_num_tokens >= max_input_len so; trtllm-bench "
		      "does), and its activations sized for it",
		      rq->prompt_tokens);
	if (b->capacity_limit == INF_LIMIT_PREFILL)
		iwarn(res,
		      "capacity limited by prefill compute: prompts take %.0f "
		      "%% of the replica's time there; more KV memory or "
		      "sequences barely raise it, faster GEMMs or shorter "
		      "prompts do",
		      100.0 * b->capacity.prefill_share);
	/* without targets capacity is saturation: its latencies queue */
	if (rq->load_kind == INF_LOAD_NONE && !(rq->ttft_ms > 0) &&
	    !(rq->tpot_ms > 0)) {
		char tpot[48] = "", at[96] = "";

		/* the figures as the answer prints them (4 digits) */
		if (rq->output_tokens > 1)
			snprintf(tpot, sizeof(tpot), " and TPOT (%.10g ms)",
				 fx_round_sig(b->capacity.tpot_ms, 4));
		else
			snprintf(at, sizeof(at),
				 " (prefill %.1f %% busy, the saturation the "
				 "engine assumes with one output token)",
				 100.0 * INF_SATURATION_UTILISATION);
		iwarn(res,
		      "no latency targets: capacity is the saturation "
		      "throughput%s, and its TTFT (%.10g ms)%s include%s "
		      "queueing set by that saturation (latency_alone_ms "
		      "%.10g is one request on an idle replica); give ttft_ms "
		      "or tpot_ms to size for latency",
		      at, fx_round_sig(b->capacity.ttft_ms, 4), tpot,
		      tpot[0] ? "" : "s", fx_round_sig(b->latency_alone_ms, 4));
	}
	if (b->capacity_limit == INF_LIMIT_KV_CACHE) {
		/* the tokens a sequence holds as the fit counts them: an
		 * engine that allocates KV blocks on demand holds prompt +
		 * half the output on average (review s18b F8: it printed
		 * prompt + output beside a fit of the other) */
		bool full = b->serving.kv_full_output;
		double held = (double)rq->prompt_tokens +
			      (full ? 1.0 : 0.5) * (double)rq->output_tokens;
		iwarn(res,
		      "capacity limited by KV-cache memory: %ld sequences of "
		      "%s%.10g tokens (prompt + %s) fit; more GPUs per replica "
		      "or a smaller KV dtype raise it",
		      b->max_batch_fit, full ? "" : "on average ", held,
		      full ? "output, reserved at admission"
			   : "half the output, blocks on demand");
	}
	if (!(rq->price_per_gpu_hour > 0) && !(rq->gpu.price_per_gpu_hour > 0))
		iwarn(res, "no price for this GPU type: costs are 0, not free; "
			   "give price_per_gpu_hour for them");
	if (rq->weight_precision == ENG_INT4 ||
	    rq->weight_precision == ENG_INT8)
		iwarn(res,
		      "%s is weight-only quantisation: GEMMs run in 16-bit, "
		      "decode reads fewer bytes",
		      eng_dtype_name(rq->weight_precision));
	if (b->pp > 1)
		iwarn(res,
		      "pipeline across %d nodes: latency adds stage by stage "
		      "and stages are not overlapped (throughput is a lower "
		      "bound)",
		      b->pp);
	if (rq->max_gpus == 0 && b->gpus > INF_FLEET_WARN_GPUS)
		iwarn(res,
		      "the load needs %ld GPUs (%ld replicas), more than Llama "
		      "3 405B's whole 16,384-GPU training cluster: check the "
		      "load's value and unit, or cap the answer with max_gpus",
		      b->gpus, b->replicas);
	if (rq->load_kind == INF_LOAD_CONCURRENT_SEQUENCES)
		iwarn(res, "concurrent_sequences is read as a closed loop "
			   "with no think time: the arrival rate is the one "
			   "that keeps that many requests in flight");
}

/* Why no replica of any tried shape holds the weights, one sequence's KV
 * and the serving profile's workspace: the field to blame and the largest
 * replica tried (tp the node's widest power of two, or the pinned one, up
 * to INF_MAX_STAGES stages, within max_gpus gmax). Always returns
 * ENG_EINFEASIBLE. */
static int no_fit_error(const struct ictx *c, long gmax, struct eng_error *err)
{
	const struct inf_request *rq = c->rq;
	struct inf_serving sv;
	int pp_all = 1, tp_node = 1, tp_l, pp_l = 1;

	inf_serving_resolve(rq, 1, &sv);
	while (pp_all * 2 <= INF_MAX_STAGES && pp_all * 2 <= rq->model.layers)
		pp_all *= 2;
	while (tp_node * 2 <= c->gpn && (gmax <= 0 || tp_node * 2 <= gmax))
		tp_node *= 2;
	tp_l = rq->tp > 0 ? rq->tp : tp_node;
	bool by_max_gpus = gmax > 0 && gmax < (long)tp_l * pp_all;
	while (pp_l < pp_all && (gmax <= 0 || (long)tp_l * pp_l * 2 <= gmax))
		pp_l *= 2;
	long largest = (long)tp_l * pp_l;
	/* the runtime's workspace the request set can be what leaves no
	 * room (review s18d F7: 72 GiB on an 80 GiB part was blamed on the
	 * model) */
	if (rq->workspace_gib != 0.0) {
		struct inf_request rq2 = *rq;
		struct ictx c2;
		struct replica r2;

		rq2.workspace_gib = 0.0;
		inf_ictx_init(&c2, &rq2);
		inf_replica_init(&r2, &c2, tp_l, pp_l);
		if (r2.mem.fit >= 1)
			return eng_fail(
			    err, ENG_EINFEASIBLE, "workspace_gib",
			    "does not fit: %.4g GiB of runtime workspace per "
			    "GPU leave no room for the weights and one "
			    "sequence's KV cache on the largest replica (%ld "
			    "GPUs x %.1f GiB); the default %.2g GiB fits",
			    rq->workspace_gib, largest, rq->gpu.memory_gib,
			    INF_WORKSPACE_GIB);
	}
	/* a token budget the request set can be what leaves no room:
	 * its activation workspace, not the weights */
	if (rq->max_num_batched_tokens > 0) {
		struct inf_request rq2 = *rq;
		struct ictx c2;
		struct replica r2, r1;

		rq2.max_num_batched_tokens = 0;
		inf_ictx_init(&c2, &rq2);
		inf_replica_init(&r2, &c2, tp_l, pp_l);
		inf_replica_init(&r1, c, tp_l, pp_l);
		if (r2.mem.fit >= 1)
			return eng_fail(
			    err, ENG_EINFEASIBLE, "max_num_batched_tokens",
			    "does not fit: an iteration of %ld tokens "
			    "needs %.1f GiB of activation workspace "
			    "per GPU beside the weights, on the largest "
			    "replica (%ld GPUs); the profile's default "
			    "token budget fits",
			    rq->max_num_batched_tokens, r1.mem.workspace / GIB,
			    largest);
	}
	/* a tp pinned below the node's widest leaves the largest replica
	 * smaller than the search's: the pin is what does not fit */
	bool by_tp = !by_max_gpus && rq->tp > 0 && rq->tp < tp_node;
	return eng_fail(
	    err, ENG_EINFEASIBLE,
	    by_max_gpus ? "max_gpus"
	    : by_tp	? "tp"
			: "model",
	    "does not fit: weights need %.1f GiB plus KV "
	    "cache for one %ld-token sequence; a replica of %ld GPUs "
	    "(tp %d x pp %d) x %.1f GiB (%s %.2f under %s) is not enough "
	    "(%s)",
	    c->W / GIB, rq->prompt_tokens + rq->output_tokens, largest, tp_l,
	    pp_l, rq->gpu.memory_gib, inf_kv_reserve_name(sv.kv_reserve),
	    sv.memory_fraction, inf_serving_name(sv.engine),
	    by_max_gpus ? "max_gpus caps it"
	    : by_tp	? "the largest with the pinned tp, up to 64 pipeline "
			  "stages; leave tp out to let the search choose"
			: "the largest: tp fills a node, up to 64 pipeline "
			  "stages");
}

/* "tp 8" or "tp 8 x pp 8": a replica as the request's fields name it. */
static void replica_name(int tp, int pp, char *buf, size_t len)
{
	if (pp > 1)
		snprintf(buf, len, "tp %d x pp %d", tp, pp);
	else
		snprintf(buf, len, "tp %d", tp);
}

int inf_size(const struct inf_request *rq, struct inf_result *res,
	     struct eng_error *err)
{
	struct ictx c;
	int rc, top = rq->top > 0 ? rq->top : 5;
	bool any_fit = false;
	double best_tpot = INFINITY, best_ttft = INFINITY;
	double u_max = rq->max_utilization > 0 ? rq->max_utilization
					       : INF_DEFAULT_MAX_UTILIZATION;
	/* the replica of each best latency, named in the refusal */
	char tpot_at[32] = "", ttft_at[32] = "", over_at[32];
	long gmax = rq->max_gpus;
	struct inf_plan over = {0};
	bool have_over = false;

	eng_error_clear(err);
	memset(res, 0, sizeof(*res));
	if ((rc = validate(rq, err)))
		return rc;
	inf_ictx_init(&c, rq);
	res->params = c.P;
	res->weights_bytes = c.W;
	res->max_utilization = u_max;
	res->kv_bytes_per_token =
	    model_kv_bytes_per_token(&rq->model, c.kvB, 1);
	res->kv_bytes_per_sequence =
	    res->kv_bytes_per_token *
	    (double)(rq->prompt_tokens + rq->output_tokens);
	res->basis.gemm_tflops = hw_gemm_rate(&rq->gpu, inf_compute_dtype(rq));
	res->basis.gemm_efficiency_basis = rq->gpu.efficiency_basis;
	res->basis.power_cap =
	    hw_power_cap_basis(&rq->gpu, &res->basis.gemm_tflops);
	res->basis.hbm_gbps = hw_hbm_rate(&rq->gpu);
	res->basis.intra_node_gbps = hw_intra_rate(&rq->gpu);
	res->attn_tflops = c.R_attn / 1e12;
	{
		/* of the 16-bit peak attention runs at: bf16, or fp16 on a
		 * part without it (review s16c F9) */
		double p16 = rq->gpu.peak_tflops[ENG_BF16] > 0
				 ? rq->gpu.peak_tflops[ENG_BF16]
				 : rq->gpu.peak_tflops[ENG_FP16];
		res->attn_efficiency = p16 > 0 ? res->attn_tflops / p16 : 0.0;
	}

	/* tp inside one node (powers of two dividing heads); pp stages of
	 * tp GPUs each, tried even when one node holds the weights: a replica
	 * whose weights barely fit keeps room for few sequences, and a second
	 * stage can serve the load on far fewer GPUs (hostile review,
	 * 2026-11-26: DeepSeek-V3 on B200 sized at 24,024 GPUs, 2,448 with
	 * a stage more). Stages of every tp: with pp only once tp filled a
	 * node, declaring 16 GPUs a node instead of 8 cost 6.6 % more GPUs
	 * (review s18b F4), and a rule on the node's width made a wider node
	 * cost more (s18e F3: TP 2 x PP 4 of L40S on 2-GPU nodes, not on
	 * 8-GPU ones). Every fitting plan is ranked. */
	/* replicas by width, narrowest first: with a load the list fills
	 * with the fewest GPUs early, and wider ones it cannot take are
	 * skipped */
	for (long w = 1; w <= (long)c.gpn * INF_MAX_STAGES; w *= 2) {
		if (gmax > 0 && w > gmax)
			break;
		for (int tp = 1; tp <= c.gpn && tp <= w; tp *= 2) {
			struct replica r;
			struct inf_plan p;
			int pp = (int)(w / tp);

			if (pp > INF_MAX_STAGES || pp > rq->model.layers)
				continue;
			if (rq->model.heads % tp)
				continue;
			if (rq->tp > 0 && tp != rq->tp)
				continue;
			/* With a load plans rank by GPUs first: a replica
			 * wider than the last listed plan's whole deployment
			 * cannot enter the list (every plan is ranked, so
			 * this only skips work; the error paths never see a
			 * full list). */
			if (rq->load_kind != INF_LOAD_NONE &&
			    res->n_plans == top &&
			    (long)tp * pp > res->plans[top - 1].gpus)
				continue;
			inf_replica_init(&r, &c, tp, pp);
			if (r.mem.fit < 1)
				continue;
			any_fit = true;
			if (res->min_tp == 0)
				res->min_tp = tp * pp;
			if (!inf_plan_of(&c, &r, u_max, &p)) {
				if (p.capacity.tpot_ms < best_tpot) {
					best_tpot = p.capacity.tpot_ms;
					replica_name(tp, pp, tpot_at,
						     sizeof(tpot_at));
				}
				if (p.capacity.ttft_ms < best_ttft) {
					best_ttft = p.capacity.ttft_ms;
					replica_name(tp, pp, ttft_at,
						     sizeof(ttft_at));
				}
				continue;
			}
			if ((gmax > 0 && p.gpus > gmax) ||
			    p.replicas >= INF_MAX_REPLICAS) {
				if (!have_over || p.gpus < over.gpus)
					over = p;
				have_over = true;
				continue;
			}
			insert_top(rq, res, top, &p);
		}
	}

	if (!any_fit)
		return no_fit_error(&c, gmax, err);
	if (res->n_plans == 0 && !have_over) {
		bool tpot_bad = rq->tpot_ms > 0 && best_tpot > rq->tpot_ms;
		/* each best with the replica that reaches it (review s15: the
		 * TTFT was paired with the best TPOT's tp, and pipeline
		 * stages were counted into tp); one output token has no
		 * TPOT */
		if (rq->output_tokens <= 1)
			return eng_fail(
			    err, ENG_EINFEASIBLE, "ttft_ms",
			    "no load meets the latency targets: "
			    "the best achievable ttft is %.1f ms "
			    "(%s, one request; rounded up to 0.1 ms)",
			    up_tenth(best_ttft), ttft_at);
		return eng_fail(
		    err, ENG_EINFEASIBLE, tpot_bad ? "tpot_ms" : "ttft_ms",
		    "no load meets the latency targets: the best "
		    "achievable is tpot %.1f ms (%s, one "
		    "sequence) and ttft %.1f ms (%s), each its own "
		    "best, rounded up to 0.1 ms",
		    up_tenth(best_tpot), tpot_at, up_tenth(best_ttft), ttft_at);
	}
	if (have_over)
		replica_name(over.tp, over.pp, over_at, sizeof(over_at));
	if (res->n_plans == 0 && over.replicas >= INF_MAX_REPLICAS) {
		bool targets = rq->ttft_ms > 0 || rq->tpot_ms > 0;
		return eng_fail(err, ENG_EINFEASIBLE,
				inf_load_kind_name(rq->load_kind),
				"the load needs %ld or more replicas of %s "
				"(each sustains %.3g requests/s%s): split it%s",
				(long)INF_MAX_REPLICAS, over_at,
				over.capacity.requests_per_s,
				targets ? " within the targets" : "",
				targets ? " or relax the targets" : "");
	}
	if (res->n_plans == 0)
		return eng_fail(err, ENG_EINFEASIBLE, "max_gpus",
				"the load needs %ld GPUs (%ld replicas of %s "
				"at %.0f %% of their capacity) but "
				"max_gpus is %ld",
				over.gpus, over.replicas, over_at,
				100.0 * u_max, gmax);
	/* a listed replica of several stages sends its activations between
	 * nodes: the rate it used is stated (review s14) */
	for (int i = 0; i < res->n_plans; i++)
		if (res->plans[i].pp > 1)
			res->basis.inter_node_gbps =
			    hw_inter_rate(&rq->gpu, 0.0, c.gpn);
	add_warnings(rq, res);
	return 0;
}
