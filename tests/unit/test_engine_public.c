/* test_engine_public.c - out-of-sample check of the training-time model
 * against published throughput that no engine default was set from
 * (docs/VALIDATION.md, "Out of sample"). Open loop: architecture, GPU
 * (catalog figures), cluster size, batch and, where the source states it,
 * the layout go in; the engine's best plan comes out. Prints one '#' line
 * per row (published, engine, ratio, band, layout) and fails when a row
 * leaves its band.
 *
 * Bands (stated in VALIDATION.md, the same for every row of a class):
 *  STEADY  a measured steady-state rate (tokens/s or TFLOP/s of a running
 *          job): engine / published within 0.75 .. 1.25.
 *  BOUNDED a figure that includes what the engine does not model - whole-
 *          run GPU-hours or wall-clock days (failures, restarts,
 *          checkpoints, evaluation) or a 2023 H100 software stack: the
 *          engine may be optimistic, by at most 1.5x, and not more than
 *          10 % slower (0.9 .. 1.5).
 * A row outside its band for a stated, known reason (docs/VALIDATION.md,
 * "Outside their band, known") is reported, not failed, as long as its
 * ratio stays within KNOWN_DRIFT of the value recorded here: any change to
 * the engine that moves it further fails again, so that the row is looked
 * at (and either explained anew or brought back into its band).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixtures.h"
#include "testlib.h"
#include "training.h"

/* The catalog's A100 (engine_fixtures.h) as 80 or 40 GB. */
static struct hw_spec a100(int gib)
{
	struct hw_spec g = fx_a100();
	g.memory_gib = gib;
	g.memory_bandwidth_gbps = gib == 80 ? 2039 : 1555;
	return g;
}

static void pin(struct trn_choices *c, int v)
{
	c->n = 1;
	c->v[0] = v;
}

enum metric {
	TOK_S_GPU,    /* tokens/s per GPU */
	MFU,	      /* model FLOPs utilisation */
	MODEL_TFLOPS, /* MFU x dense peak: 6N + 12Lhs FLOPs per token */
	HW_TFLOPS,    /* HFU x dense peak: with recompute (Megatron Eq. 3) */
	RUN_TOK_S_GPU /* train_tokens / GPU-seconds of the whole run, goodput
			 included (MODEL.md §4): what GPU-hours and days of a
			 finished run measure */
};

enum band { STEADY, BOUNDED };

/* A known out-of-band row: why, and the ratio recorded when it was. */
struct known {
	const char *reason;
	double ratio;
};

/* How far a known row's ratio may move from its recorded value. */
#define KNOWN_DRIFT 0.10

static int n_rows, n_out, n_known;

static void row_known(const char *id, const char *source,
		      struct trn_request *rq, enum metric mt, double published,
		      enum band b, const struct known *k)
{
	static struct trn_result res;
	struct eng_error e;
	const struct trn_plan *p;
	double got = 0.0, ratio, lo = b == STEADY ? 0.75 : 0.9,
	       hi = b == STEADY ? 1.25 : 1.5;
	const char *mname[] = {"tok/s/GPU", "MFU", "TFLOP/s", "HW TFLOP/s",
			       "run tok/s/GPU"};

	n_rows++;
	if (trn_size(rq, &res, &e)) {
		printf("# %-16s engine error %s: %s\n", id, e.field, e.message);
		CHECK(0);
		return;
	}
	p = &res.plans[0];
	switch (mt) {
	case TOK_S_GPU:
		got = p->tokens_per_s_per_gpu;
		break;
	case MFU:
		got = p->mfu;
		break;
	case MODEL_TFLOPS:
		got = p->mfu * rq->gpu.peak_tflops[rq->precision];
		break;
	case HW_TFLOPS:
		got = p->hfu * rq->gpu.peak_tflops[rq->precision];
		break;
	case RUN_TOK_S_GPU:
		got = rq->train_tokens / (p->gpu_hours * 3600.0);
		break;
	}
	ratio = got / published;
	printf(
	    "# %-16s %-10s published %8.3f engine %8.3f  x%.2f "
	    "[%.2f..%.2f] %s | %ld GPUs tp%d pp%d vp%d cp%d dp%d z%d %s mb%d "
	    "| MFU %.3f | %s\n",
	    id, mname[mt], published, got, ratio, lo, hi,
	    ratio >= lo && ratio <= hi ? "ok" : "OUT", p->gpus, p->layout.tp,
	    p->layout.pp, p->layout.vp, p->layout.cp, p->layout.dp,
	    p->layout.zero, eng_recompute_name(p->layout.recompute),
	    p->layout.micro_batch, p->mfu, source);
	if (ratio >= lo && ratio <= hi) {
		if (k) /* the cause went away: drop the known entry */
			printf("# %s is back in its band: remove its known "
			       "entry\n",
			       id);
		return;
	}
	n_out++;
	if (!k) {
		CHECK(ratio >= lo && ratio <= hi);
		return;
	}
	n_known++;
	printf("# OUT OF BAND (known: %s); recorded x%.2f, allowed x%.2f.."
	       "x%.2f\n",
	       k->reason, k->ratio, k->ratio * (1.0 - KNOWN_DRIFT),
	       k->ratio * (1.0 + KNOWN_DRIFT));
	CHECK(fabs(ratio / k->ratio - 1.0) <= KNOWN_DRIFT);
}

static void row(const char *id, const char *source, struct trn_request *rq,
		enum metric mt, double published, enum band b)
{
	row_known(id, source, rq, mt, published, b, NULL);
}

/* Whole-run figures (GPU-hours, wall-clock days). */
static void test_whole_run(void)
{
	struct trn_request rq;

	/* Llama 2 paper (arXiv:2307.09288) Table 2: 7B 184,320 GPU-hours
	 * for 2.0T tokens -> 3014 tok/s/GPU; s 4096, 4M-token batch. GPU
	 * count not stated (1024 assumed); layout not stated: engine's. */
	trn_request_init(&rq);
	rq.model = fx_llama(32, 4096, 32, 32, 11008, 32000);
	rq.seq_len = 4096;
	rq.global_batch_tokens = 4194304;
	rq.train_tokens = 2e12;
	rq.gpu = a100(80);
	rq.gpus = 1024;
	/* Was a known entry (x1.52: tp 2 x dp 512, ZeRO-3, MFU 0.68 on
	 * compute) until the search kept to the stages the default stack
	 * runs (stack.h max_zero_stage: Megatron-LM shards up to its
	 * distributed optimizer, ZeRO-1). */
	row("Llama-2-7B", "Llama 2 Table 2 GPU-hours", &rq, RUN_TOK_S_GPU,
	    2e12 / (184320.0 * 3600.0), BOUNDED);

	/* 70B: 1,720,320 GPU-hours for 2.0T -> 323 tok/s/GPU (2048 GPUs
	 * assumed). */
	rq.model = fx_llama(80, 8192, 64, 8, 28672, 32000);
	rq.gpus = 2048;
	row("Llama-2-70B", "Llama 2 Table 2 GPU-hours", &rq, RUN_TOK_S_GPU,
	    2e12 / (1720320.0 * 3600.0), BOUNDED);

	/* MPT-7B (MosaicML model card / blog): 1T tokens on 440
	 * A100-40GB in ~9.5 days, FSDP (full shard), s 2048; llm-foundry
	 * mpt-7b.yaml: activation checkpointing. ALiBi, vocab 50432, no
	 * biases. Batch 1760 sequences (4 per GPU) assumed. */
	trn_request_init(&rq);
	rq.model = fx_gpt(32, 4096, 32, 50432);
	rq.seq_len = 2048;
	rq.global_batch_size = 1760;
	rq.train_tokens = 1e12;
	rq.gpu = a100(40);
	rq.gpus = 440;
	pin(&rq.strategies.tp, 1);
	pin(&rq.strategies.pp, 1);
	pin(&rq.strategies.zero, 3);
	pin(&rq.strategies.recompute, ENG_RC_FULL);
	row("MPT-7B 440 GPUs", "MosaicML: 9.5 days, FSDP + AC", &rq,
	    RUN_TOK_S_GPU, 1e12 / (9.5 * 86400.0 * 440.0), BOUNDED);
}

/* Measured steady-state rates on A100. */
static void test_steady_a100(void)
{
	struct trn_request rq;

	/* OPT-175B (Zhang et al. 2022, arXiv:2205.01068 §2.4): 992 A100
	 * 80GB, FSDP with Megatron TP 8, "up to 147 TFLOP/s per GPU";
	 * activation checkpointing (OPT logbook); 2M-token batch (992
	 * sequences of 2048 so that dp 124 divides it). */
	trn_request_init(&rq);
	rq.model = fx_gpt(96, 12288, 96, 50272);
	rq.model.learned_pos_emb = true;
	rq.model.max_seq_len = 2048;
	rq.model.linear_biases = true;
	rq.seq_len = 2048;
	rq.global_batch_size = 992;
	rq.gpu = a100(80);
	rq.gpus = 992;
	pin(&rq.strategies.tp, 8);
	pin(&rq.strategies.pp, 1);
	pin(&rq.strategies.zero, 3);
	pin(&rq.strategies.recompute, ENG_RC_FULL);
	row("OPT-175B", "OPT §2.4: 147 TFLOP/s", &rq, MODEL_TFLOPS, 147,
	    STEADY);

	/* BLOOM-176B (BigScience 2022, arXiv:2211.05100 §3.4-3.5): 384
	 * A100 80GB, TP 4 PP 12 DP 8, ZeRO-1, micro-batch 2, batch 2048 x
	 * 2048, activation checkpointing, ~150 TFLOP/s counted with the
	 * recompute factor (Megatron-DeepSpeed Eq. 3); 4 x 100 Gb/s
	 * Omni-Path per node. ALiBi, tied, biases. */
	trn_request_init(&rq);
	rq.model = fx_gpt(70, 14336, 112, 250880);
	rq.model.linear_biases = true;
	rq.seq_len = 2048;
	rq.global_batch_size = 2048;
	rq.gpu = a100(80);
	rq.gpu.inter_node_gbps = 50;
	rq.gpus = 384;
	pin(&rq.strategies.tp, 4);
	pin(&rq.strategies.pp, 12);
	pin(&rq.strategies.dp, 8);
	pin(&rq.strategies.zero, 1);
	pin(&rq.strategies.micro_batch, 2);
	pin(&rq.strategies.recompute, ENG_RC_FULL);
	row("BLOOM-176B", "BLOOM §3.5: 150 TFLOP/s", &rq, HW_TFLOPS, 150,
	    STEADY);

	/* LLaMA-65B (Touvron et al. 2023, arXiv:2302.13971 §2.4): "around
	 * 380 tokens/sec/GPU on 2048 A100 GPU with 80GB", s 2048, 4M-token
	 * batch. Layout not stated: engine's. */
	trn_request_init(&rq);
	rq.model = fx_llama(80, 8192, 64, 64, 22016, 32000);
	rq.seq_len = 2048;
	rq.global_batch_tokens = 4194304;
	rq.gpu = a100(80);
	rq.gpus = 2048;
	/* In band since the ZeRO-2 weight all-gather is exposed after the
	 * step on the default stack (was x1.36, a known entry, with it
	 * hidden at tp 4 x dp 512 ZeRO-2). */
	row("LLaMA-65B", "LLaMA §2.4: 380 tok/s/GPU", &rq, TOK_S_GPU, 380,
	    STEADY);

	/* MPT-7B on 8 x A100 80GB (llm-foundry scripts/train/benchmarking
	 * README, A100 80GB table): FSDP full shard, amp_bf16. s 4096, AC,
	 * micro-batch 16, batch 256: MFU 0.5484; s 2048, no AC,
	 * micro-batch 6, batch 96: MFU 0.6423. Vocab 50368. */
	trn_request_init(&rq);
	rq.model = fx_gpt(32, 4096, 32, 50368);
	rq.seq_len = 4096;
	rq.global_batch_size = 256;
	rq.gpu = a100(80);
	rq.gpus = 8;
	pin(&rq.strategies.tp, 1);
	pin(&rq.strategies.pp, 1);
	pin(&rq.strategies.zero, 3);
	pin(&rq.strategies.micro_batch, 16);
	pin(&rq.strategies.recompute, ENG_RC_FULL);
	row("MPT-7B 8x s4k", "llm-foundry A100-80 table", &rq, MFU, 0.5484,
	    STEADY);
	rq.seq_len = 2048;
	rq.global_batch_size = 96;
	pin(&rq.strategies.micro_batch, 6);
	pin(&rq.strategies.recompute, ENG_RC_NONE);
	row("MPT-7B 8x s2k", "llm-foundry A100-80 table", &rq, MFU, 0.6423,
	    STEADY);
}

/* H100. */
static void test_h100(void)
{
	struct trn_request rq;

	/* Llama 3 (arXiv:2407.21783) Table 4: 405B, s 8192, 16M-token
	 * batch, TP 8 CP 1 PP 16: 16,384 GPUs DP 128 -> 400 TFLOP/s/GPU
	 * (BF16 MFU 41 %); 8,192 GPUs DP 64 -> 430 (43 %). 126 layers on
	 * 16 stages (uneven; interleaving chosen by the engine).
	 * §3.3.2: optimizer state and gradients sharded over the data-
	 * parallel ranks, the weights kept after the forward: ZeRO-2,
	 * pinned (Meta's own stack; the default profile's terms, which
	 * shard no further than ZeRO-1, say so in a warning). */
	trn_request_init(&rq);
	rq.model = fx_llama(126, 16384, 128, 8, 53248, 128256);
	rq.seq_len = 8192;
	rq.global_batch_size = 2048;
	rq.gpu = fx_h100();
	rq.gpus = 16384;
	pin(&rq.strategies.tp, 8);
	pin(&rq.strategies.pp, 16);
	pin(&rq.strategies.cp, 1);
	pin(&rq.strategies.zero, 2);
	row("Llama-3-405B 16K", "Llama 3 Table 4", &rq, MODEL_TFLOPS, 400,
	    STEADY);
	rq.gpus = 8192;
	row("Llama-3-405B 8K", "Llama 3 Table 4", &rq, MODEL_TFLOPS, 430,
	    STEADY);

	/* Llama-3-8B on 512 H100, s 8192, 4M-token batch: no single
	 * published figure; the typical well-tuned BF16 range is MFU
	 * 0.38-0.45 (llm-foundry H100 tables, Llama 3 at scale). Compared
	 * with the middle of the range; 2023-stack class. */
	trn_request_init(&rq);
	rq.model = fx_llama(32, 4096, 32, 8, 14336, 128256);
	rq.seq_len = 8192;
	rq.global_batch_tokens = 4194304;
	rq.gpu = fx_h100();
	rq.gpus = 512;
	row("Llama-3-8B 512", "typical H100 range 0.38-0.45", &rq, MFU, 0.415,
	    BOUNDED);

	/* MPT-7B on 8 x H100 (llm-foundry H100 80GB BF16 table, 2023
	 * stack): s 8192, AC, micro-batch 8, batch 128: MFU 0.3714. */
	trn_request_init(&rq);
	rq.model = fx_gpt(32, 4096, 32, 50368);
	rq.seq_len = 8192;
	rq.global_batch_size = 128;
	rq.gpu = fx_h100();
	rq.gpus = 8;
	pin(&rq.strategies.tp, 1);
	pin(&rq.strategies.pp, 1);
	pin(&rq.strategies.zero, 3);
	pin(&rq.strategies.micro_batch, 8);
	pin(&rq.strategies.recompute, ENG_RC_FULL);
	row("MPT-7B 8xH100 s8k", "llm-foundry H100 table", &rq, MFU, 0.3714,
	    BOUNDED);
}

int main(void)
{
	RUN(test_whole_run);
	RUN(test_steady_a100);
	RUN(test_h100);
	printf("# public: %d rows, %d outside their band (%d known)\n", n_rows,
	       n_out, n_known);
	return testlib_finish();
}
