/* attention.c - attention cost by kernel class (see attention.h). */
#include "attention.h"

#include <string.h>

const char *const attn_kernel_names[ATTN_KERNEL_COUNT + 1] = {
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
 * FlashAttention-3 (Shah et al. 2024, arXiv:2407.08608): "1.5-2.0x faster
 * than FlashAttention-2" forward, 1.5-1.75x backward, H100 only: 1.5.
 * cuDNN fused attention (PyTorch 2.5 SDPA cuDNN backend, "up to 75 %
 * speed-up over FlashAttention-2" on H100; the FA3 paper's figures put
 * it beside FA3): 1.5, the lower end taken for FA3 too. */
#define FA1_SLOWDOWN	2.35
#define TRITON_SLOWDOWN 1.9
#define HOPPER_SPEEDUP	1.5

double attn_kernel_speedup(enum attn_kernel k, const struct hw_spec *g,
			   bool backward)
{
	bool hopper = g->cc_major >= 9;

	(void)backward; /* the same figure both ways in our sources */
	switch (k) {
	case ATTN_SDPA_MATH:
		return 0.0;
	case ATTN_FA1:
		return 1.0 / FA1_SLOWDOWN;
	case ATTN_TRITON_FA:
		return 1.0 / TRITON_SLOWDOWN;
	case ATTN_FA3:
	case ATTN_CUDNN:
		return hopper ? HOPPER_SPEEDUP : 1.0;
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

double attn_fused_tflops(const struct hw_spec *g, enum attn_kernel k,
			 double head_dim, bool backward, double eff_override)
{
	double base;

	if (eff_override > 0.0) {
		double p = g->peak_tflops[ENG_BF16] > 0.0
			       ? g->peak_tflops[ENG_BF16]
			       : g->peak_tflops[ENG_FP16];
		base = p * eff_override;
	} else {
		double sp = attn_kernel_speedup(k, g, backward);
		base = hw_attn_tflops(g, backward) * (sp > 0.0 ? sp : 1.0);
	}
	return base * attn_head_dim_factor(head_dim);
}
