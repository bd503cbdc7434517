/* attention.c - attention cost by kernel class (see attention.h). */
#include "attention.h"

#include <math.h>
#include <string.h>

/* JSON names ("sdpa-math", "fa1", "triton-fa", "fa2", "fa3", "cudnn"),
 * NULL-terminated; "xformers" parses as fa1. */
static const char *const attn_kernel_names[ATTN_KERNEL_COUNT + 1] = {
    [ATTN_SDPA_MATH] = "sdpa-math",
    [ATTN_FA1] = "fa1",
    [ATTN_TRITON_FA] = "triton-fa",
    [ATTN_FA2] = "fa2",
    [ATTN_FA3] = "fa3",
    [ATTN_CUDNN] = "cudnn",
    [ATTN_KERNEL_COUNT] = NULL,
};

const char *attn_kernel_name(enum attn_kernel k)
{
	if ((unsigned)k >= ATTN_KERNEL_COUNT)
		return "?";
	return attn_kernel_names[k];
}

int attn_kernel_parse(const char *name, enum attn_kernel *out)
{
	if (!name)
		return -1;
	if (!strcmp(name, "xformers")) {
		*out = ATTN_FA1;
		return 0;
	}
	for (int i = 0; i < ATTN_KERNEL_COUNT; i++)
		if (!strcmp(name, attn_kernel_names[i])) {
			*out = (enum attn_kernel)i;
			return 0;
		}
	return -1;
}

bool attn_kernel_fused(enum attn_kernel k)
{
	return k != ATTN_SDPA_MATH;
}

/* FlashAttention-2 (Dao 2023, arXiv:2307.08691, abstract and §4.1):
 * "1.7-3.0x faster than FlashAttention", "1.3-2.5x faster than
 * FlashAttention in Triton" (A100, fwd + bwd): midpoints 2.35 and 1.9.
 * FlashAttention-3 and cuDNN on Hopper, against FA2 on the same bars of
 * the FA3 paper (Shah et al. 2024, arXiv:2407.08608, figures 5 and 6: H100
 * SXM5, head dimension 128, 8K tokens; forward with the causal mask,
 * backward without, the only one shown), where hw.c's FA2 efficiencies
 * come from: FA3 602/333 = 1.81 forward, 559/318 = 1.76 backward (the
 * abstract: 1.5-2.0x, 1.5-1.75x); cuDNN 529/333 = 1.59 forward, 518/318 =
 * 1.63 backward (PyTorch 2.5's SDPA cuDNN backend: "up to 75 %" over FA2).
 * They were 1.5 both, the lower end of the abstract's range (issue 13). */
#define FA1_SLOWDOWN	2.35
#define TRITON_SLOWDOWN 1.9
static const double hopper_speedup[][2] = {
    /* forward, backward */
    [ATTN_FA3] = {602.0 / 333.0, 559.0 / 318.0},
    [ATTN_CUDNN] = {529.0 / 333.0, 518.0 / 318.0},
};

enum attn_kernel attn_kernel_on(enum attn_kernel k, const struct hw_spec *g)
{
	return k == ATTN_FA3 && g && g->cc_major > 0 && g->cc_major < 9
		   ? ATTN_FA2
		   : k;
}

double attn_kernel_speedup(enum attn_kernel k, const struct hw_spec *g,
			   bool backward)
{
	bool hopper = g->cc_major >= 9;

	switch (k) {
	case ATTN_SDPA_MATH:
		return 0.0;
	case ATTN_FA1:
		return 1.0 / FA1_SLOWDOWN;
	case ATTN_TRITON_FA:
		return 1.0 / TRITON_SLOWDOWN;
	case ATTN_FA3:
	case ATTN_CUDNN:
		return hopper ? hopper_speedup[k][backward ? 1 : 0] : 1.0;
	case ATTN_FA2:
	case ATTN_KERNEL_COUNT:
		break;
	}
	return 1.0;
}

/* 5 non-matmul FLOPs per score at 1/16 of the tensor-core rate = 20/4
 * matmul FLOPs per unit of d (see attention.h). */
#define HEAD_DIM_NONMATMUL 20.0
#define HEAD_DIM_REF	   128.0

double attn_head_dim_factor(double head_dim)
{
	double ref = HEAD_DIM_REF / (HEAD_DIM_REF + HEAD_DIM_NONMATMUL);

	if (!(head_dim > 0.0))
		return 1.0;
	return head_dim / (head_dim + HEAD_DIM_NONMATMUL) / ref;
}

/* Sequence-length factors, relative to 8,192 tokens, at 512, 1K, 2K, 4K, 8K
 * and 16K tokens (16K tokens a batch, head dim 128, causal).
 * Forward: the FlashAttention-3 paper's bars (figure 5(d), TFLOP/s, values
 * from the PDF's text layer), whose 8K figures the rates rest on; our
 * H100 and H200 measurements of PyTorch's FA2 and cuDNN kernels agree
 * with them within 0.03 and 0.06 (docs/VALIDATION.md).
 * Backward: the paper's backward bars (figure 6(b)) are without the mask,
 * and a decoder trains with it. Causal backward loses more at short
 * lengths: the same 512..16K sweep on one H100 and one H200 (2026-11-26,
 * tools/gpu_terms.py attn, tests/fixtures/validation/h100_terms2_... and
 * h200_terms_...) gives the factors below, the mean of the two cards
 * (they differ by at most 0.06). FA2 and cuDNN are measured; Triton and
 * FA1 take FA2's; FA3, which we could not run, takes its own unmasked bars
 * (316 / 424 / 501 / 542 / 559 / 561) times cuDNN's measured causal over
 * unmasked ratio (0.677 / 0.818 / 0.901 / 0.956 / 1 / 1.091), cuDNN being
 * the other Hopper-native kernel. */
#define SEQ_POINTS 6
static const double seq_tokens[SEQ_POINTS] = {512,  1024, 2048,
					      4096, 8192, 16384};
static const struct {
	double fwd_bars[SEQ_POINTS], bwd_factor[SEQ_POINTS];
} seq_table[ATTN_KERNEL_COUNT] = {
    [ATTN_FA2] = {{191, 260, 298, 319, 333, 335},
		  {0.403, 0.590, 0.762, 0.900, 1.0, 1.106}},
    [ATTN_TRITON_FA] = {{146, 273, 323, 353, 369, 378},
			{0.403, 0.590, 0.762, 0.900, 1.0, 1.106}},
    [ATTN_FA3] = {{292, 423, 521, 579, 602, 616},
		  {0.383, 0.620, 0.807, 0.927, 1.0, 1.095}},
    [ATTN_CUDNN] = {{315, 410, 484, 518, 529, 539},
		    {0.398, 0.615, 0.789, 0.911, 1.0, 1.103}},
};
#define SEQ_REF 4 /* 8,192 tokens */

/* Point i of kernel k's factor curve. */
static double seq_point(enum attn_kernel k, bool backward, int i)
{
	return backward
		   ? seq_table[k].bwd_factor[i]
		   : seq_table[k].fwd_bars[i] / seq_table[k].fwd_bars[SEQ_REF];
}

double attn_seq_factor(enum attn_kernel k, double seq_len, bool backward)
{
	double x, lo, hi;
	int i;

	if (!attn_kernel_fused(k) || (unsigned)k >= ATTN_KERNEL_COUNT)
		return 1.0;
	if (k == ATTN_FA1)
		k = ATTN_FA2;
	if (!(seq_len > seq_tokens[0]))
		return seq_point(k, backward, 0);
	if (seq_len >= seq_tokens[SEQ_POINTS - 1])
		return seq_point(k, backward, SEQ_POINTS - 1);
	for (i = 1; seq_len > seq_tokens[i]; i++)
		;
	x = log2(seq_len / seq_tokens[i - 1]); /* the points double */
	lo = seq_point(k, backward, i - 1);
	hi = seq_point(k, backward, i);
	return lo + x * (hi - lo);
}

double attn_fused_tflops(const struct hw_spec *g, enum attn_kernel k,
			 double head_dim, bool backward, double eff_override)
{
	double base;

	if (eff_override > 0.0) {
		enum eng_dtype t =
		    g->peak_tflops[ENG_BF16] > 0.0 ? ENG_BF16 : ENG_FP16;
		/* a profile's in-step efficiency is of a GPU at its board
		 * power, as the default's (the ratio is 1 where the GEMM
		 * rate was measured under the node's own limit) */
		base = g->peak_tflops[t] * eff_override *
		       hw_gemm_rate(g, t).power_cap_ratio;
	} else {
		double sp = attn_kernel_speedup(k, g, backward);
		base = hw_attn_tflops(g, backward) * (sp > 0.0 ? sp : 1.0);
	}
	return base * attn_head_dim_factor(head_dim);
}
