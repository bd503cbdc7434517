/* engine_fixtures.h - models and GPUs for engine unit tests, with the
 * figures of the catalog (migrations/0002_gpu_catalog.sql) and the model
 * presets (migrations/0003_model_presets.sql). Header-only: each test
 * binary includes it once. */
#ifndef GPUSIZER_TESTS_ENGINE_FIXTURES_H
#define GPUSIZER_TESTS_ENGINE_FIXTURES_H

#include <string.h>

#include "formulas.h"
#include "hw.h"
#include "model.h"

/* The recompute modes of whole layers, none to full, for tests that pick
 * one at random (partial needs its recompute_layers). */
static const enum eng_recompute whole_modes[3] = {ENG_RC_NONE, ENG_RC_SELECTIVE,
						  ENG_RC_FULL};

/* A Llama-style decoder of the given shape: SwiGLU, RMSNorm, rotary,
 * untied, no biases; max_seq_len 0 (no limit). */
static inline struct model_arch fx_llama(long layers, long hidden, long heads,
					 long kv_heads, long ffn, long vocab)
{
	struct model_arch m;
	memset(&m, 0, sizeof(m));
	m.layers = layers;
	m.hidden_size = hidden;
	m.heads = heads;
	m.kv_heads = kv_heads;
	m.ffn_hidden_size = ffn;
	m.vocab_size = vocab;
	m.gated_mlp = true;
	return m;
}

/* A GPT-style decoder: 4h GeLU/ReLU MLP, LayerNorm, tied embeddings. */
static inline struct model_arch fx_gpt(long layers, long hidden, long heads,
				       long vocab)
{
	struct model_arch m =
	    fx_llama(layers, hidden, heads, heads, 4 * hidden, vocab);
	m.gated_mlp = false;
	m.tied_embeddings = true;
	return m;
}

/* Llama 2 (presets llama-2-7b, llama-2-70b) without their max_seq_len. */
static inline struct model_arch fx_llama2_70b(void)
{
	return fx_llama(80, 8192, 64, 8, 28672, 32000);
}

static inline struct model_arch fx_llama2_7b(void)
{
	return fx_llama(32, 4096, 32, 32, 11008, 32000);
}

static inline struct model_arch fx_llama3_8b(void)
{
	struct model_arch m = fx_llama(32, 4096, 32, 8, 14336, 128256);
	m.max_seq_len = 8192;
	return m;
}

static inline struct model_arch fx_llama3_70b(void)
{
	struct model_arch m = fx_llama3_8b();
	m.layers = 80;
	m.hidden_size = 8192;
	m.heads = 64;
	m.ffn_hidden_size = 28672;
	return m;
}

static inline struct model_arch fx_mixtral_8x7b(void)
{
	struct model_arch m = fx_llama3_8b();
	m.vocab_size = 32000;
	m.max_seq_len = 32768;
	m.moe.experts = 8;
	m.moe.top_k = 2;
	m.moe.expert_ffn_hidden_size = 14336;
	return m;
}

static inline struct hw_spec fx_h100(void)
{
	struct hw_spec g;
	memset(&g, 0, sizeof(g));
	strcpy(g.name, "h100-sxm5-80gb");
	g.memory_gib = 80;
	g.peak_tflops[ENG_FP32] = 67;
	g.peak_tflops[ENG_TF32] = 494.7;
	g.peak_tflops[ENG_FP16] = g.peak_tflops[ENG_BF16] = 989.4;
	g.peak_tflops[ENG_FP8] = g.peak_tflops[ENG_INT8] = 1978.9;
	g.memory_bandwidth_gbps = 3350;
	g.intra_node_link = HW_LINK_NVLINK;
	g.intra_node_gbps = 450;
	g.max_gpus_per_node = 8;
	g.inter_node_gbps = 400;
	g.price_per_gpu_hour = 2.75;
	g.cc_major = 9;
	return g;
}

/* H800 SXM5 (migrations/0002): the H100 SXM with NVLink cut to 200 GB/s
 * each way; best-shape GEMM fraction its sibling's (0009). */
static inline struct hw_spec fx_h800(void)
{
	struct hw_spec g = fx_h100();

	strcpy(g.name, "h800-sxm5-80gb");
	g.intra_node_gbps = 200;
	g.price_per_gpu_hour = 2.50;
	return g;
}

static inline struct hw_spec fx_h200(void)
{
	struct hw_spec g = fx_h100();
	strcpy(g.name, "h200-sxm-141gb");
	g.memory_gib = 141;
	g.memory_bandwidth_gbps = 4800;
	g.price_per_gpu_hour = 3.5;
	return g;
}

/* B200 and GB200 NVL72 (per GPU) as migrations/0002 seeds them (dense
 * BF16 2,250 / 2,500, FP8 4,500 / 5,000, 8 TB/s; a GB200 "node" is the
 * 72-GPU NVLink domain with 72 x 50 GB/s of NICs). */
static inline struct hw_spec fx_b200(void)
{
	struct hw_spec g = fx_h100();
	strcpy(g.name, "b200-sxm-180gb");
	g.memory_gib = 180;
	g.peak_tflops[ENG_FP32] = 0;
	g.peak_tflops[ENG_TF32] = 0;
	g.peak_tflops[ENG_FP16] = g.peak_tflops[ENG_BF16] = 2250;
	g.peak_tflops[ENG_FP8] = 4500;
	g.peak_tflops[ENG_INT8] = 0;
	g.memory_bandwidth_gbps = 8000;
	g.intra_node_gbps = 900;
	g.inter_node_gbps = 400;
	g.price_per_gpu_hour = 5.5;
	g.cc_major = 10;
	return g;
}

static inline struct hw_spec fx_gb200(void)
{
	struct hw_spec g = fx_b200();
	strcpy(g.name, "gb200-nvl72-186gb");
	g.memory_gib = 186;
	g.peak_tflops[ENG_TF32] = 1250;
	g.peak_tflops[ENG_FP16] = g.peak_tflops[ENG_BF16] = 2500;
	g.peak_tflops[ENG_FP8] = g.peak_tflops[ENG_INT8] = 5000;
	g.max_gpus_per_node = 72;
	g.inter_node_gbps = 3600;
	g.price_per_gpu_hour = 6.0;
	return g;
}

static inline struct hw_spec fx_a100(void)
{
	struct hw_spec g = fx_h100();
	strcpy(g.name, "a100-sxm4-80gb");
	g.peak_tflops[ENG_FP32] = 19.5;
	g.peak_tflops[ENG_TF32] = 156;
	g.peak_tflops[ENG_FP16] = g.peak_tflops[ENG_BF16] = 312;
	g.peak_tflops[ENG_FP8] = 0;
	g.peak_tflops[ENG_INT8] = 624;
	g.memory_bandwidth_gbps = 2039;
	g.intra_node_gbps = 300;
	g.inter_node_gbps = 200;
	g.price_per_gpu_hour = 1.6;
	g.cc_major = 8;
	return g;
}

static inline struct hw_spec fx_l40s(void)
{
	struct hw_spec g = fx_h100();
	strcpy(g.name, "l40s-48gb");
	g.memory_gib = 45; /* ECC on (migration 0030) */
	g.peak_tflops[ENG_FP32] = 91.6;
	g.peak_tflops[ENG_TF32] = 183;
	g.peak_tflops[ENG_FP16] = g.peak_tflops[ENG_BF16] = 362.05;
	g.peak_tflops[ENG_FP8] = g.peak_tflops[ENG_INT8] = 733;
	g.memory_bandwidth_gbps = 864;
	g.intra_node_link = HW_LINK_PCIE;
	g.intra_node_gbps = 32;
	g.inter_node_gbps = 25;
	g.price_per_gpu_hour = 1.0;
	g.cc_major = 8;
	g.cc_minor = 9;
	return g;
}

/* The catalog's rtx-4090-24gb. */
static inline struct hw_spec fx_rtx4090(void)
{
	struct hw_spec g = fx_l40s();
	strcpy(g.name, "rtx-4090-24gb");
	g.memory_gib = 24;
	g.peak_tflops[ENG_FP32] = g.peak_tflops[ENG_TF32] = 82.6;
	g.peak_tflops[ENG_FP16] = g.peak_tflops[ENG_BF16] = 165.2;
	g.peak_tflops[ENG_FP8] = 330.3;
	g.peak_tflops[ENG_INT8] = 660.6;
	g.memory_bandwidth_gbps = 1008;
	g.inter_node_gbps = 12.5;
	g.price_per_gpu_hour = 0.40;
	return g;
}

#endif
