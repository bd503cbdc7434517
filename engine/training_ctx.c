/* training_ctx.c - the request context of the training engine: what one
 * request fixes before any layout is tried (model shapes, bytes per
 * parameter, achieved rates, elementwise traffic). MODEL.md §2-4. The
 * parts of engine/training.c share it through training_int.h.
 */
#include "training_int.h"

#include <math.h>
#include <string.h>

/* LoRA adapters' memory-bound kernels (MODEL.md §4a "LoRA adapters").
 * Every implementation that does not fuse them into the base GEMM (PEFT,
 * Megatron-Core's adapters) scales the adapter's output and adds it to
 * the base output, forward: read 2 + write 2, then read 4 + write 2 per
 * output value (16-bit); backward: the scale's gradient, read 2 + write
 * 2, and the sum of the two input gradients (base and adapter), read 4
 * + write 2 per input value. PEFT keeps the adapters in fp32 under
 * autocast (get_peft_model's autocast_adapter_dtype=True) and casts the
 * input to them (LoraLayer._cast_input_dtype: x.to(fp32)), which
 * autocast casts back to 16-bit for the GEMM: read 2 + write 4, read 4
 * + write 2 per input value forward, the same two casts of the gradient
 * backward, and the 16-bit copy is saved for lora_A's weight gradient
 * (2 B per input value; otherwise the input is the base layer's, saved
 * once). 16-bit compute only: fp32 runs cast nothing. */
#define ADAPTER_OUT_FWD_B 10.0
#define ADAPTER_OUT_BWD_B 4.0
#define ADAPTER_IN_BWD_B  6.0
#define ADAPTER_CAST_B	  12.0
#define ADAPTER_SAVED_B	  2.0
/* autocast's weight cast: read the fp32 parameter, write its 16-bit copy */
#define AMP_WEIGHT_CAST_B 6.0

void trn_adapter_bytes_of(const struct trn_request *rq,
			  struct trn_adapter_bytes *out)
{
	bool b16 = rq->precision != ENG_FP32 && rq->precision != ENG_TF32;
	double scale = b16 ? 1.0 : 2.0; /* fp32 values: twice the bytes */

	memset(out, 0, sizeof(*out));
	if (rq->method == TRN_FULL)
		return;
	out->fp32_cast =
	    rq->stack.lora_fp32_adapters && b16 && rq->method == TRN_LORA;
	out->out_fwd = ADAPTER_OUT_FWD_B * scale;
	out->out_bwd = ADAPTER_OUT_BWD_B * scale;
	out->in_bwd = ADAPTER_IN_BWD_B * scale;
	if (out->fp32_cast) {
		out->in_fwd = ADAPTER_CAST_B;
		out->in_bwd += ADAPTER_CAST_B;
		out->in_saved = ADAPTER_SAVED_B;
	}
}

/* Per token per layer (t = 1), widths as Transformers' Llama modules: q,
 * k, v, o, gate, up and down each with its own adapter. */
static void adapter_kernels(struct ctx *c, const struct model_arch *m, double f)
{
	double in =
	    3.0 * c->h + c->a * c->dv + (m->gated_mlp ? 2.0 : 1.0) * c->h + f;
	double out = c->a * c->dqk + 2.0 * c->k * c->dv + c->h +
		     (m->gated_mlp ? 2.0 : 1.0) * f + c->h;
	struct trn_adapter_bytes b;

	trn_adapter_bytes_of(c->rq, &b);
	c->adapter_ew_fwd = b.out_fwd * out + b.in_fwd * in;
	c->adapter_ew_bwd = b.out_bwd * out + b.in_bwd * in;
	c->adapter_saved = b.in_saved * in;
}

/* What eager modules under autocast with fp32 parameters save beyond the
 * fused count of training_memory.c (Korthikanti's, MODEL.md §3), per token
 * per layer, read from transformers' modeling_llama.py and measured on our
 * H200 with saved-tensor hooks (BENCHMARKS.md: 63.07h for Llama 3.2 1B,
 * 18h + 2f over the fused 37h; 3B 18h + 2f likewise):
 *  - the residual stream is fp32 (the fp32 embedding's output plus the
 *    blocks' outputs), so each RMSNorm keeps its fp32 input (pow) and its
 *    fp32 normalized value (the fp32 weight's product): 8h against a
 *    fused norm's 2h input;
 *  - the norm's fp32 output is cast to 16-bit by autocast once per
 *    consumer, and each linear keeps its own copy: q, k and v three, gate
 *    and up two (one without a gated MLP), 2h each, against one shared
 *    2h input;
 *  - the SwiGLU's silu output is kept by the product (2f).
 * Attention inputs and output and the MLP's other tensors are as fused.
 * Under full recompute the stored layer input is the fp32 residual: 4h
 * against 2h. Full fine-tuning in a 16-bit precision (or FP8, whose
 * non-GEMM modules are the same) only: a frozen 16-bit
 * base (LoRA, QLoRA) saves no weight product, and its residual is 16-bit
 * (measured: the fused count plus the adapters' copies). */
void trn_amp_extra_of(const struct trn_request *rq, struct trn_amp_extra *out)
{
	const struct model_arch *m = &rq->model;
	double h = (double)m->hidden_size;
	double norm_attn = 8.0 + 3.0 * 2.0 - 4.0;
	double norm_mlp = 8.0 + (m->gated_mlp ? 2.0 : 1.0) * 2.0 - 4.0;

	memset(out, 0, sizeof(*out));
	/* FP8 too: only its GEMMs change dtype, the eager norms and SwiGLU
	 * still run under 16-bit autocast, and FP8 memory is counted as
	 * BF16's (MODEL.md §3; review s17a F4: 25 % less than BF16) */
	if (!rq->stack.autocast_fp32_params || rq->method != TRN_FULL ||
	    (rq->precision != ENG_BF16 && rq->precision != ENG_FP16 &&
	     rq->precision != ENG_FP8))
		return;
	/* PyTorch autocast casts each fp32 weight to 16-bit once per
	 * forward (its cast cache lives for the autocast region; a
	 * checkpointed layer's recompute casts again). A LoRA base is
	 * already 16-bit; FP8 GEMMs cast their own (fp8_wcast_b). Review
	 * s17a F3: LoRA's fp32 adapter casts were charged and full
	 * fine-tuning's were not, so LoRA came out slower than full
	 * fine-tuning. */
	if (rq->precision != ENG_FP8)
		out->weight_cast_bytes = AMP_WEIGHT_CAST_B;
	out->h_bytes = (norm_attn + norm_mlp) * h;
	out->f_bytes = m->gated_mlp ? 2.0 * (double)m->ffn_hidden_size : 0.0;
	out->input_bytes = 2.0 * h;
}

/* Frozen base weight bytes per parameter for LoRA (16-bit) and QLoRA (NF4
 * 0.5 B + double-quantised scales ~0.127 bit/param, Dettmers et al. 2023). */
static const double lora_base_bytes[TRN_METHOD_COUNT] = {
    [TRN_FULL] = 0.0, [TRN_LORA] = 2.0, [TRN_QLORA] = 0.5 + 0.127 / 8.0};

/* Bytes moved by the memory-bound kernels of one layer, per token, forward
 * and backward (MODEL.md §4 derives each term). ab = bytes per activation
 * value (2, or 4 for fp32 training); masks are 1 byte.
 *  h-wide, replicated unless SP: 2 norms (fwd read x + write y = 2h values,
 *  bwd read dy, x + write dx = 3h), 2 residual adds (fwd read 2 + write 1 =
 *  3h, bwd the gradient sum 3h), bias-dropout-add masks (1 B, written
 *  fwd, read bwd) when the job trains with dropout (c->dropout).
 *  split over TP: rotary on Q and K (read + write, fwd and bwd) unless the
 *  model has learned positions; SwiGLU fwd read gate, up + write = 3f, bwd
 *  read dy, gate, up + write 2 = 5f; GeLU fwd 2f, bwd 3f; MoE: per routed
 *  expert plus the dispatch and combine permutes (read + write h, each,
 *  fwd and bwd).
 *  unfused attention, per score element: softmax fwd read + write, bwd read
 *  dy, y + write; attention dropout fwd read + write + mask, bwd the same.
 *  loss: fp32 cross-entropy over V (read logits, write fp32 probabilities,
 *  one reduction pass, backward read + write the logit gradient). */
static void ew_bytes_init(struct ctx *c)
{
	const struct model_arch *m = &c->rq->model;
	double ab = c->act_b, h = c->h;
	bool dropout = c->dropout;
	double rope_cols, mlp_f, mlp_b, moe_f, moe_b, fe;

	c->ew_repl_fwd = 2.0 * 2.0 * h * ab + 2.0 * 3.0 * h * ab;
	c->ew_repl_bwd = 2.0 * 3.0 * h * ab + 2.0 * 3.0 * h * ab;
	if (dropout) {
		c->ew_repl_fwd += 2.0 * h;
		c->ew_repl_bwd += 2.0 * h;
	}
	if (m->learned_pos_emb)
		rope_cols = 0.0;
	else if (c->mla)
		rope_cols = (c->a + 1.0) * (double)m->mla.qk_rope_head_dim;
	else
		rope_cols = (c->a + c->k) * c->d;
	c->ew_par_fwd = 2.0 * rope_cols * ab;
	c->ew_par_bwd = 2.0 * rope_cols * ab;

	/* MLP activation, per unit of FFN width */
	mlp_f = (m->gated_mlp ? 3.0 : 2.0) * ab;
	mlp_b = (m->gated_mlp ? 5.0 : 3.0) * ab;
	fe = (double)m->moe.expert_ffn_hidden_size;
	moe_f = (double)m->moe.top_k * (mlp_f * fe + 2.0 * 2.0 * h * ab) +
		(double)m->moe.shared_experts * mlp_f * fe;
	moe_b = (double)m->moe.top_k * (mlp_b * fe + 2.0 * 2.0 * h * ab) +
		(double)m->moe.shared_experts * mlp_b * fe;
	c->ew_par_fwd +=
	    (1.0 - c->moe_frac) * mlp_f * (double)m->ffn_hidden_size +
	    c->moe_frac * moe_f;
	c->ew_par_bwd +=
	    (1.0 - c->moe_frac) * mlp_b * (double)m->ffn_hidden_size +
	    c->moe_frac * moe_b;

	c->ew_score_fwd = 2.0 * ab + (dropout ? 2.0 * ab + 1.0 : 0.0);
	c->ew_score_bwd = 3.0 * ab + (dropout ? 2.0 * ab + 1.0 : 0.0);
	/* the profile's bytes per logit for 16-bit logits; the logits' read
	 * and their gradient's write follow the activation width */
	c->loss_token =
	    (c->rq->stack.loss_pass_bytes + 2.0 * (ab - 2.0)) * c->V;
}

/* The stack profile's terms that do not depend on the layout (MODEL.md
 * §4a). Needs the GEMM families and bytes per value. */
static void stack_terms_init(struct ctx *c)
{
	const struct trn_request *rq = c->rq;
	const struct eng_stack *st = &rq->stack;
	double f = st->elementwise_bytes_factor;

	/* Eager frameworks move more bytes in norms, rotary and activations
	 * than the fused kernels of ew_bytes_init. */
	c->ew_repl_fwd *= f;
	c->ew_repl_bwd *= f;
	c->ew_par_fwd *= f;
	c->ew_par_bwd *= f;
	c->tp_overlap = st->tp_comm_overlap;
	c->dp_overlap = st->dp_overlap;
	c->pg_overlap = st->param_gather_overlap;
	c->red_b = st->reduce_dtype == STACK_REDUCE_FP32   ? 4.0
		   : st->reduce_dtype == STACK_REDUCE_BF16 ? 2.0
							   : c->gb;
	c->launch_layer = st->kernel_launch_us * 1e-6 * st->kernels_per_layer;
	/* QLoRA (bitsandbytes Linear4bit): every GEMM pass dequantises the
	 * NF4 weight to 16-bit first (QLoRA paper §3: "we dequantize the
	 * storage data type to the computation data type to perform the
	 * forward and backward pass"): read the 4-bit weight and its
	 * scales, write 2 B per parameter. */
	c->dequant_layer = (c->w_qkv + c->w_o + c->w_up + c->w_down) *
			   trn_dequant_bytes_per_param(rq->method);
	if (st->selective_recompute == STACK_SAC_OP) {
		/* torchtitan's block order (stack.c); MLA and MoE blocks
		 * call other matmuls (latent projections, grouped GEMMs), so
		 * there every second matmul is taken as half the FLOPs */
		if (c->mla || c->moe_frac > 0.0)
			c->sac_mm = 0.5;
		else
			c->sac_mm = stack_sac_op_mm_share(
			    c->h * c->a * c->d, c->h * c->k * c->d,
			    c->h * c->k * c->d, c->w_o, c->w_up, c->w_down,
			    rq->model.gated_mlp);
	}
	if (rq->precision == ENG_FP8) {
		/* per family: input elements per token = W / out-dim, output
		 * elements = W / in-dim (MODEL.md §4a) */
		c->fp8_in_col = c->w_qkv / c->n_qkv + c->w_up / c->n_up;
		c->fp8_out_col = c->w_qkv / c->h + c->w_up / c->h;
		c->fp8_in_row = c->w_o / c->h + c->w_down / c->h;
		c->fp8_out_row = c->w_o / c->n_o + c->w_down / c->n_down;
		c->fp8_cast_b = stack_fp8_cast_bytes(st->fp8_recipe);
		c->fp8_wcast_b = stack_fp8_weight_cast_bytes(st->fp8_recipe);
		/* torchao casts only nn.Linear weights (not the LM head,
		 * norms or embedding) before the FSDP2 all-gather; its MoE
		 * grouped GEMMs take another path, not modelled: dense
		 * models only (MODEL.md §4a). */
		if (st->fp8_param_all_gather && !c->lora && c->moe_frac == 0.0)
			c->fp8_ag_layer =
			    c->w_qkv + c->w_o + c->w_up + c->w_down;
	}
}

double trn_dequant_bytes_per_param(enum trn_method m)
{
	return m == TRN_QLORA ? lora_base_bytes[m] + 2.0 : 0.0;
}

int trn_ctx_init(struct ctx *c, const struct trn_request *rq)
{
	const struct model_arch *m = &rq->model;
	struct hw_rate r;
	double moe_layers;

	memset(c, 0, sizeof(*c));
	c->rq = rq;
	c->a2a_memo = &c->a2a_memo_store;
	model_count_params(m, &c->P);
	c->gpn = rq->gpus_per_node > 0 ? rq->gpus_per_node
				       : rq->gpu.max_gpus_per_node;
	if (c->gpn <= 0)
		c->gpn = 1;
	c->s = (double)rq->seq_len;
	c->h = (double)m->hidden_size;
	c->a = (double)m->heads;
	c->d = (double)model_head_dim(m);
	c->k = (double)model_kv_heads(m);
	c->V = (double)m->vocab_size;
	c->L = (double)m->layers;
	c->mla = m->mla.kv_lora_rank > 0;
	c->dqk =
	    c->mla ? (double)(m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim)
		   : c->d;
	c->dv = c->mla ? (double)m->mla.v_head_dim : c->d;
	c->kv_lora_cols =
	    (double)(m->mla.kv_lora_rank + m->mla.qk_rope_head_dim);

	/* bytes per parameter (MODEL.md §3): FP8 training keeps 16-bit
	 * weights (Transformer Engine casts per GEMM). */
	c->wb = eng_dtype_bytes(rq->precision);
	if (rq->precision == ENG_FP8)
		c->wb = 2.0;
	c->act_b = c->wb >= 4.0 ? 4.0 : 2.0;
	c->gb = fmax(eng_dtype_bytes(rq->gradient_precision), c->wb);
	c->ob = trn_optimizer_bytes_per_param(rq->optimizer, c->wb, c->h);
	c->lora = rq->method != TRN_FULL;
	/* Dropout: the request's, else on for GPT-style models with linear
	 * biases (GPT-3, BLOOM, OPT and the Megatron papers' runs used 0.1)
	 * and off for Llama-style ones (Llama, Mistral, Qwen configs:
	 * attention_dropout 0, no hidden dropout). MODEL.md §3. */
	c->dropout = rq->dropout >= 0 ? rq->dropout > 0 : m->linear_biases;
	c->base_b = lora_base_bytes[rq->method];

	moe_layers =
	    m->moe.experts > 0 ? c->L - (double)m->moe.dense_layers : 0;
	c->moe_frac = moe_layers / c->L;
	c->exp_layer = c->P.routed_expert / c->L;
	c->nonexp_layer = (c->P.layers - c->P.routed_expert) / c->L;
	c->active_layer = c->P.layers_active / c->L;
	c->emb = c->P.embedding;
	c->head = c->V * c->h;

	/* Per-token MLP activation bytes (Korthikanti's 19 generalised):
	 * input 2h and mask h are in the replicated 10h; here GeLU in/out
	 * 4f, or SwiGLU gate, up and product 6f. MoE: per routed expert plus
	 * the permuted token copy 2h. */
	{
		double per_f = m->gated_mlp ? 6.0 : 4.0;
		double dense = per_f * (double)m->ffn_hidden_size;
		double fe = (double)m->moe.expert_ffn_hidden_size;
		double moe = (double)m->moe.top_k * (per_f * fe + 2.0 * c->h) +
			     (double)m->moe.shared_experts * per_f * fe;
		c->mlp_act = (1.0 - c->moe_frac) * dense + c->moe_frac * moe;
		c->routing = (struct moe_routing){
		    .experts = (double)m->moe.experts,
		    .top_k = (double)m->moe.top_k,
		    .groups = (double)m->moe.router_groups,
		    .group_top_k = (double)m->moe.router_group_top_k};
		c->a2a_copy_bytes =
		    c->h *
		    ((c->rq->stack.ep_dispatch_fp8
			  ? fmin(c->act_b, MOE_FP8_DISPATCH_BYTES)
			  : c->act_b) +
		     c->act_b) /
		    2.0;
	}

	/* GEMM families of one layer, active weights and split dims. */
	{
		double up_mult = m->gated_mlp ? 2.0 : 1.0;
		double f = (double)m->ffn_hidden_size;
		double act_ffn = 0.0;

		if (m->moe.experts > 0) {
			double fe = (double)m->moe.expert_ffn_hidden_size;
			double ne =
			    (double)(m->moe.top_k + m->moe.shared_experts);
			act_ffn =
			    c->moe_frac * ne * fe + (1.0 - c->moe_frac) * f;
			c->ffn_width = fe;
		} else {
			act_ffn = f;
			c->ffn_width = f;
		}
		if (c->mla) {
			c->w_qkv = c->P.attn_layer - c->a * c->dv * c->h;
			c->n_qkv = fmax((double)m->mla.kv_lora_rank * 4.0,
					c->a * c->dqk);
		} else {
			c->w_qkv = c->h * (c->a + 2.0 * c->k) * c->d;
			c->n_qkv = (c->a + 2.0 * c->k) * c->d;
		}
		c->w_o = c->a * c->dv * c->h;
		c->n_o = c->a * c->dv;
		c->w_up = up_mult * c->h * act_ffn;
		c->n_up = up_mult * c->ffn_width;
		c->w_down = c->h * act_ffn;
		c->n_down = c->ffn_width;
		if (m->moe.experts > 0) {
			double routed = c->moe_frac * (double)m->moe.top_k *
					(double)m->moe.expert_ffn_hidden_size;
			c->w_up_routed = up_mult * c->h * routed;
			c->w_down_routed = c->h * routed;
			c->routed_rows =
			    (double)m->moe.top_k / (double)m->moe.experts;
		}
	}

	c->attn_fwd_layer_token =
	    model_attn_fwd_flops_per_token(m, c->s) / c->L;

	/* The stack's sustained-clock derate applies to power-limited parts
	 * (compute capability >= 9.0; MODEL.md §4a). */
	{
		double derate =
		    rq->gpu.cc_major >= 9 ? rq->stack.gemm_clock_derate : 1.0;
		r = hw_gemm_rate(&rq->gpu, rq->precision);
		c->r_lin = r.value * 1e12 * derate;
		if (rq->precision == ENG_FP8) {
			enum eng_dtype t16 = rq->gpu.peak_tflops[ENG_BF16] > 0.0
						 ? ENG_BF16
						 : ENG_FP16;
			c->r_lin16 =
			    hw_gemm_rate(&rq->gpu, t16).value * 1e12 * derate;
		}
	}
	/* Attention scores run in 16-bit even in FP8 recipes (TE). */
	{
		enum eng_dtype at =
		    rq->precision == ENG_FP8 ? ENG_BF16 : rq->precision;
		c->r_attn = hw_gemm_rate(&rq->gpu, at).value * 1e12;
	}
	/* Fused attention runs at its own efficiency (hw.c); the FP32/TF32
	 * recipes scale it by their peak relative to 16-bit. */
	{
		const struct hw_spec *g = &rq->gpu;
		double p16 = g->peak_tflops[ENG_BF16] > 0.0
				 ? g->peak_tflops[ENG_BF16]
				 : g->peak_tflops[ENG_FP16];
		double scale = 1.0;
		if ((rq->precision == ENG_FP32 || rq->precision == ENG_TF32) &&
		    p16 > 0.0)
			scale = g->peak_tflops[rq->precision] / p16;
		const struct eng_stack *st = &rq->stack;
		c->r_fa_fwd =
		    attn_fused_tflops(g, st->attn_kernel, c->dqk, false,
				      st->attn_fwd_efficiency) *
		    scale * 1e12;
		c->r_fa_bwd = attn_fused_tflops(g, st->attn_kernel, c->dqk,
						true, st->attn_bwd_efficiency) *
			      scale * 1e12;
		/* The kernel's rate at this sequence length (stack.h;
		 * MODEL.md §5). The whole sequence: context parallel's
		 * shorter chunks are not modelled. */
		c->r_fa_fwd *= stack_attn_seq_factor(st, g, c->s, false);
		c->r_fa_bwd *= stack_attn_seq_factor(st, g, c->s, true);
	}
	ew_bytes_init(c);
	stack_terms_init(c);
	c->hbm = hw_hbm_rate(&rq->gpu).value * 1e9;
	c->intra = hw_intra_rate(&rq->gpu).value * 1e9;
	c->inter =
	    hw_inter_rate(&rq->gpu, rq->inter_node_gbps, c->gpn).value * 1e9;
	c->host = trn_host_link_gbps(rq) * trn_host_link_efficiency(rq) * 1e9;
	c->peak = rq->gpu.peak_tflops[rq->precision] * 1e12;
	c->gpu_bytes = rq->gpu.memory_gib * GIB;
	c->capacity = c->gpu_bytes * (1.0 - rq->memory_headroom_fraction);
	c->price = rq->price_per_gpu_hour > 0 ? rq->price_per_gpu_hour
					      : rq->gpu.price_per_gpu_hour;

	/* LoRA adapters on every linear layer: r*(d_in + d_out) each. */
	if (c->lora) {
		double rk = (double)rq->lora_rank;
		double f = m->moe.experts > 0
			       ? (double)m->moe.expert_ffn_hidden_size
			       : (double)m->ffn_hidden_size;
		double qkv = c->h + (c->a + 2.0 * c->k) * c->d;
		double o = c->a * c->dv + c->h;
		double mlp = (m->gated_mlp ? 3.0 : 2.0) * (c->h + f);
		c->adapter_layer = rk * (qkv + o + mlp);
		adapter_kernels(c, m, f);
	}
	trn_amp_extra_of(rq, &c->amp);
	c->amp_wcast_layer = (c->w_qkv + c->w_o + c->w_up + c->w_down) *
			     c->amp.weight_cast_bytes;
	/* Model FLOPs per token (MODEL.md §2). LoRA skips weight gradients
	 * of the frozen base: 4N instead of 6N (MODEL.md §2). */
	c->model_flops_token = (c->lora ? 4.0 : 6.0) * c->P.matmul_active +
			       3.0 * model_attn_fwd_flops_per_token(m, c->s);
	if (c->lora)
		c->model_flops_token += 6.0 * c->adapter_layer * c->L;

	/* A checkpoint holds what a restart needs: the weights and the
	 * optimizer state (fp32 master weights included, c->ob), not the
	 * gradients. A LoRA run saves only its adapters and their state
	 * (the frozen base is read from where it came). */
	c->ckpt_bytes = c->lora ? c->adapter_layer * c->L * (2.0 + c->ob)
				: c->P.total * (c->wb + c->ob);
	c->limit_days = rq->deadline_days;
	if (c->limit_days <= 0 && rq->objective != TRN_OBJ_TIME &&
	    rq->train_tokens > 0)
		c->limit_days =
		    rq->max_days > 0 ? rq->max_days : TRN_DEFAULT_MAX_DAYS;
	return 0;
}

void trn_goodput_of(const struct ctx *c, long gpus, struct gp_result *g)
{
	const struct trn_request *rq = c->rq;
	struct gp_input in = {
	    .gpus = (double)gpus,
	    .failures_per_gpu_hour = rq->failures_per_gpu_hour,
	    .checkpoint_bytes = c->ckpt_bytes,
	    .storage_gbps_per_gpu = rq->checkpoint_gbps_per_gpu,
	    .restart_s = rq->restart_minutes * 60.0,
	};

	/* trn_validate keeps every input in range: gp_compute cannot fail
	 * (it leaves goodput 1 if it did). */
	(void)gp_compute(&in, g);
}

void trn_run_figures(const struct ctx *c, struct trn_plan *p)
{
	struct gp_result g;
	double G = (double)p->gpus, steady_s, wall_s;

	trn_goodput_of(c, p->gpus, &g);
	memset(&p->goodput, 0, sizeof(p->goodput));
	p->goodput.fraction = g.goodput_fraction;
	p->goodput.mtbi_hours = g.mtbi_s / 3600.0;
	p->goodput.checkpoint_write_s = g.checkpoint_write_s;
	p->goodput.checkpoint_interval_s = g.interval_s;
	p->within_max_days = true;
	if (c->rq->train_tokens <= 0 || !(p->tokens_per_s > 0))
		return;
	steady_s = c->rq->train_tokens / p->tokens_per_s;
	wall_s = steady_s * g.wall_per_work;
	p->steady_days = steady_s / 86400.0;
	p->steady_gpu_hours = steady_s / 3600.0 * G;
	p->steady_cost = p->steady_gpu_hours * c->price;
	p->days = wall_s / 86400.0;
	p->gpu_hours = wall_s / 3600.0 * G;
	p->cost = p->gpu_hours * c->price;
	p->goodput.interruptions =
	    gp_expected_interruptions(G, c->rq->failures_per_gpu_hour, wall_s);
	/* judged on days as printed, as the deadline (trn_meets_deadline) */
	p->within_max_days =
	    c->limit_days <= 0 || fx_round_sig(p->days, 4) <= c->limit_days;
}
