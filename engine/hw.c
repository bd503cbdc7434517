/* hw.c - dtype tables, rates with their basis (see hw.h, docs/MODEL.md). */
#include "hw.h"

#include "gemm.h"

#include <math.h>
#include <string.h>

static const struct {
	const char *name;
	double bytes;
} dtype_table[ENG_DTYPE_COUNT] = {
    [ENG_FP64] = {"fp64", 8.0}, [ENG_FP32] = {"fp32", 4.0},
    [ENG_TF32] = {"tf32", 4.0}, [ENG_FP16] = {"fp16", 2.0},
    [ENG_BF16] = {"bf16", 2.0}, [ENG_FP8] = {"fp8", 1.0},
    [ENG_INT8] = {"int8", 1.0}, [ENG_INT4] = {"int4", 0.5},
};

/* mamf-finder best-shape BF16 efficiency (ml-engineering
 * compute/accelerator/README.md): A100 SXM 271.2/312 = 86.9 %, H100 SXM
 * 794.5/989 = 80.3 %, B200 1745/2250 = 77.6 %. */
#define MAMF_AMPERE    0.869
#define MAMF_HOPPER    0.803
#define MAMF_BLACKWELL 0.776
/* mamf-finder best-shape FP8 (e4m3) on H100 SXM: 1402.6/1979 (same
 * README). */
#define MAMF_HOPPER_FP8 0.709
/* Share of a best-shape burst rate a training or serving step keeps
 * (power-capped clocks with all GPUs and NCCL busy, real shapes): the
 * 16-bit default 0.75 over A100's mamf 0.869 = 0.863 (MODEL.md §5). The
 * same share for every dtype: FP8 tensor cores draw more power per FLOP,
 * not less. */
#define IN_STEP_RETENTION (0.75 / MAMF_AMPERE)

/* Achieved fraction of the dense datasheet peak for large GEMMs inside a
 * training or serving step (MODEL.md §5).
 * 16-bit/TF32: 0.75 on A100. mamf-finder (ml-engineering, best shape, mean
 * of 100 after warm-up) reaches 86.9 % on A100 SXM; a training step keeps
 * ~86 % of that (power-capped clocks with all GPUs and NCCL busy, real
 * shapes): 0.75 reproduces Korthikanti 2022 step times and MosaicML's
 * measured A100 MFU with activation checkpointing within ±5 %. Other
 * generations keep the same fraction of their own mamf maximum
 * (hw_gemm_efficiency_for). FP8/INT8: H100's mamf FP8 best shape (70.9 %
 * of 1979) x the same in-step share = 0.612. It was 0.65 (a cuBLASLt
 * burst figure, ~92 % of mamf's, kept whole): FP8 then gained 1.88x over
 * BF16 at large shapes against mamf's measured 1402.6/794.5 = 1.77x, and
 * a Float8 linear at M,K,N = 4096,8192,16384 came out 1.49x faster against
 * torchao's measured 1.39x (issue 13, MODEL.md §4a). */
static const double gemm_eff_table[ENG_DTYPE_COUNT] = {
    [ENG_FP64] = 0.80,
    [ENG_FP32] = 0.80,
    [ENG_TF32] = 0.75,
    [ENG_FP16] = 0.75,
    [ENG_BF16] = 0.75,
    [ENG_FP8] = MAMF_HOPPER_FP8 * IN_STEP_RETENTION,
    [ENG_INT8] = MAMF_HOPPER_FP8 * IN_STEP_RETENTION,
    [ENG_INT4] = 0.60,
};

/* NCCL all-reduce bus bandwidth vs one-direction link rate: DGX A100
 * ~230/300, DGX H100 ~360/450 (nccl-tests); PCIe P2P ~25/32; xGMI mesh
 * reaches less of its per-link peak. */
static const double link_eff_table[] = {
    [HW_LINK_NONE] = 0.50,
    [HW_LINK_PCIE] = 0.75,
    [HW_LINK_NVLINK] = 0.80,
    [HW_LINK_XGMI] = 0.70,
};

static const char *const link_names[] = {
    [HW_LINK_NONE] = "none",
    [HW_LINK_PCIE] = "pcie",
    [HW_LINK_NVLINK] = "nvlink",
    [HW_LINK_XGMI] = "xgmi",
};

double eng_dtype_bytes(enum eng_dtype t)
{
	if ((unsigned)t >= ENG_DTYPE_COUNT)
		return 0.0;
	return dtype_table[t].bytes;
}

const char *eng_dtype_name(enum eng_dtype t)
{
	if ((unsigned)t >= ENG_DTYPE_COUNT)
		return "?";
	return dtype_table[t].name;
}

const char *hw_link_name(enum hw_link l)
{
	if ((unsigned)l > HW_LINK_XGMI)
		return "?";
	return link_names[l];
}

bool hw_supports(const struct hw_spec *g, enum eng_dtype t)
{
	if ((unsigned)t >= ENG_DTYPE_COUNT)
		return false;
	if (t == ENG_INT4)
		return true; /* weight-only: computed in 16-bit */
	if (g->peak_tflops[t] <= 0.0)
		return false;
	/* FP8 tensor cores: Ada sm_89, Hopper sm_90, Blackwell. A nonzero
	 * cc below 8.9 overrides a (wrong) nonzero peak. cc 0.0 = non-NVIDIA
	 * part (MI300X): trust its datasheet peak. */
	if (t == ENG_FP8 && g->cc_major > 0 &&
	    g->cc_major * 10 + g->cc_minor < 89)
		return false;
	return true;
}

double hw_default_gemm_efficiency(enum eng_dtype t)
{
	if ((unsigned)t >= ENG_DTYPE_COUNT)
		return 0.0;
	return gemm_eff_table[t];
}

static const char *const eff_basis_names[HW_EFF_BASIS_COUNT] = {
    [HW_EFF_DATASHEET_ONLY] = "datasheet_only",
    [HW_EFF_MEASURED] = "measured",
    [HW_EFF_SIBLING] = "sibling",
    [HW_EFF_VENDOR_CLAIM] = "vendor_claim",
};

const char *hw_eff_basis_name(enum hw_eff_basis b)
{
	return (unsigned)b < HW_EFF_BASIS_COUNT ? eff_basis_names[b] : "?";
}

int hw_eff_basis_parse(const char *s, enum hw_eff_basis *out)
{
	for (int i = 0; s && i < HW_EFF_BASIS_COUNT; i++)
		if (!strcmp(s, eff_basis_names[i])) {
			*out = (enum hw_eff_basis)i;
			return 0;
		}
	return -1;
}

double hw_gemm_efficiency_for(const struct hw_spec *g, enum eng_dtype t)
{
	double e = hw_default_gemm_efficiency(t);

	if (t != ENG_TF32 && t != ENG_FP16 && t != ENG_BF16)
		return e;
	/* The part's own best-shape fraction, as a share of A100's (the
	 * anchor of the 0.75 default): MI300X 0.514 -> 0.44, A100 PCIe
	 * 0.811 -> 0.70, H100 SXM 0.803 -> 0.69 (the catalog cites each). */
	if (g->gemm_peak_fraction > 0.0 && g->gemm_peak_fraction <= 1.0)
		return e * g->gemm_peak_fraction / MAMF_AMPERE;
	/* No figure for the part: Hopper 0.75 x 0.803/0.869 = 0.69;
	 * Blackwell 0.67; Ampere, Ada and unmeasured non-NVIDIA parts keep
	 * the default 0.75 (their basis says datasheet only). */
	if (g->cc_major == 9)
		return e * MAMF_HOPPER / MAMF_AMPERE;
	if (g->cc_major >= 10)
		return e * MAMF_BLACKWELL / MAMF_AMPERE;
	return e;
}

/* FlashAttention-2-class fused attention, fraction of the dense 16-bit
 * datasheet peak (forward, backward) in the kernel benchmarks of the
 * FlashAttention papers (burst, boost clock; hw_attn_tflops applies the
 * in-step retention). The backward pass is counted as 2.5x the forward
 * FLOPs (it recomputes QK^T), as the FlashAttention benchmarks count it.
 *  - Ampere/Ada (cc < 9): FlashAttention-2 (Dao 2023, arXiv:2307.08691)
 *    reaches up to 73 % of A100 peak forward and 63 % backward at long
 *    sequences, a few points less at 2K-8K causal: 0.65 / 0.55.
 *  - Hopper (cc 9.x): FlashAttention-2 does not use wgmma/TMA (below);
 *    FA3 and cuDNN are speed-ups over it (attention.c).
 *  - Blackwell (cc >= 10) and non-NVIDIA parts (cc 0.0): no FA2-class
 *    figure in our sources; the Hopper figures are used (conservative). */
static const double attn_eff_ampere[2] = {0.65, 0.55};
/* Hopper: FlashAttention-2 at head dimension 128 on an H100 SXM5 with
 * 8K tokens, as the FlashAttention-3 paper measured it (Shah et al. 2024,
 * arXiv:2407.08608, figures 5 and 6, the values labelled on the bars):
 * forward with the causal mask 333 TFLOP/s, backward 318 (the paper
 * shows backward without the mask only), of 989.4: 0.337 / 0.321. It was
 * 0.40 / 0.35, above the "35 % utilization" the same paper gives for FA2
 * (issue 13). */
static const double attn_eff_hopper[2] = {0.337, 0.321};

/* Fused (FlashAttention-2-class) attention kernel: achieved fraction of the
 * dense 16-bit datasheet peak, forward or backward pass, by architecture
 * generation (compute capability; 0.0 = not NVIDIA). MODEL.md §5. */
static double hw_default_attn_efficiency(const struct hw_spec *g, bool backward)
{
	int i = backward ? 1 : 0;

	if (g->cc_major > 0 && g->cc_major < 9)
		return attn_eff_ampere[i];
	return attn_eff_hopper[i];
}

double hw_attn_tflops(const struct hw_spec *g, bool backward)
{
	enum eng_dtype t = g->peak_tflops[ENG_BF16] > 0.0 ? ENG_BF16 : ENG_FP16;
	double peak = g->peak_tflops[t];
	/* The efficiencies are burst kernel benchmarks at boost clock (the
	 * FlashAttention papers' harness), like mamf's GEMM maximum; a step
	 * runs the same tensor cores at the power-limited clock, so the
	 * attention kernel keeps the GEMM's in-step share. Our H200 probe
	 * (BENCHMARKS.md): BF16 8192^3 at 799-805 TFLOP/s burst, 701-715
	 * after 20 s at the 700 W limit (0.88). MODEL.md §5. */
	double eff = hw_default_attn_efficiency(g, backward) *
		     hw_gemm_in_step_retention(t);
	struct hw_rate gemm = hw_gemm_rate(g, t);

	/* The measured in-step GEMM rate (hw_gemm_rate) over the default
	 * in-step efficiency: a power-capped GPU slows both. Never beyond
	 * the kernel's own burst figure, which it reached at the boost clock
	 * with nothing else running: a measured GEMM rate near the peak made
	 * attention 0.49-0.505 of the peak, 1.7x the FA2 figure the engine
	 * models (review s17c F3). */
	if (gemm.measured && peak > 0.0)
		eff = fmin(eff * (gemm.value / peak) /
			       hw_gemm_efficiency_for(g, t),
			   hw_default_attn_efficiency(g, backward));
	else
		eff *= gemm.power_cap_ratio;
	return peak * eff;
}

/* STREAM-like copy reaches ~85-90 % of HBM peak (H100 ~2.9/3.35 TB/s). */
double hw_default_hbm_efficiency(void)
{
	return 0.85;
}

double hw_default_link_efficiency(enum hw_link l)
{
	if ((unsigned)l > HW_LINK_XGMI)
		l = HW_LINK_NONE;
	return link_eff_table[l];
}

/* Ring collectives over InfiniBand/RoCE reach ~75 % of NIC line rate once
 * several nodes share the fabric. */
double hw_default_inter_efficiency(void)
{
	return 0.75;
}

double hw_gemm_shape_factor(double min_dim)
{
	return gemm_shape_factor(min_dim, ENG_BF16);
}

double hw_gemm_in_step_retention(enum eng_dtype t)
{
	(void)t;
	return IN_STEP_RETENTION;
}

/* Smallest dimensions of the probe's sustained plan GEMMs, in ascending
 * order (probe/m_gemm_sustained.c, docs/PROBE.md "Sustained GEMM"). */
static const double probe_plan_min_dims[] = {1024, 1280, 3584, 4096};

double hw_probe_plan_shape_factor(enum eng_dtype t)
{
	/* The median of four: the mean of the middle two (the factor rises
	 * with the dimension, so their order is the dimensions'). */
	return 0.5 * (gemm_shape_factor(probe_plan_min_dims[1], t) +
		      gemm_shape_factor(probe_plan_min_dims[2], t));
}

/* A measured rate the engine uses is at most its datasheet figure
 * (datasheet > 0): the dense tensor peak is the part's rate at the boost
 * clock with every tensor core busy, and a sustained plan GEMM, divided by
 * its shape factor (0.937, FP8 0.883), could come out above it (B200 bf16
 * 2614 of 2250, review s17c F3); HBM bandwidth is the memory's pin rate
 * times its bus width, which no SM clock raises (a 1.097x H100 NVL median
 * was used as is, review s17c F9). Calibration's band (handlers/calib.h)
 * leaves 1.1x to the tensor peak for the maximum clock; what is used is
 * held here, and r->capped says so. */
static void cap_at_datasheet(struct hw_rate *r)
{
	if (!r->measured || !(r->datasheet > 0.0) || r->value <= r->datasheet)
		return;
	r->value = r->datasheet;
	r->efficiency = 1.0;
	r->capped = true;
}

/* retention: the share of a measured median the engine uses (1: all). */
static struct hw_rate rate_from(double datasheet, double eff,
				const struct hw_measured *m, double retention)
{
	struct hw_rate r = {0};

	r.datasheet = datasheet;
	r.retention = 1.0;
	r.power_cap_ratio = 1.0;
	if (m && m->samples > 0 && m->value > 0.0) {
		r.value = m->value * retention;
		r.measured = true;
		r.samples = m->samples;
		r.measured_median = m->value;
		r.retention = retention;
		r.efficiency = datasheet > 0.0 ? r.value / datasheet : 0.0;
	} else {
		r.value = datasheet * eff;
		r.efficiency = eff;
	}
	return r;
}

struct hw_rate hw_gemm_rate(const struct hw_spec *g, enum eng_dtype t)
{
	enum eng_dtype c = t;
	const struct hw_measured *sus;
	struct hw_rate r;

	/* int4 weights are dequantised and multiplied in 16-bit. */
	if (t == ENG_INT4)
		c = g->peak_tflops[ENG_FP16] > 0.0 ? ENG_FP16 : ENG_BF16;
	sus = &g->gemm_sustained_tflops[c];
	if (sus->samples > 0 && sus->value > 0.0) {
		/* The sustained plan GEMMs are the in-step rate itself (every
		 * GPU busy at its power limit, a plan's shapes): no retention,
		 * only their shapes taken out. What they lack is NCCL running
		 * beside them, which the engine does not charge (MODEL.md §5).
		 */
		r = rate_from(g->peak_tflops[c], 0.0, sus, 1.0);
		r.plan_shape_factor = hw_probe_plan_shape_factor(c);
		r.value /= r.plan_shape_factor;
		r.efficiency = r.datasheet > 0.0 ? r.value / r.datasheet : 0.0;
		r.measured_metric = "gemm_sustained_tflops";
		cap_at_datasheet(&r);
		return r;
	}
	r = rate_from(g->peak_tflops[c], hw_gemm_efficiency_for(g, c),
		      &g->gemm_tflops[c], hw_gemm_in_step_retention(c));
	if (r.measured) {
		r.measured_metric = "gemm_tflops";
		cap_at_datasheet(&r);
		return r;
	}
	/* The datasheet path's efficiency is of a GPU at its board power. */
	r.power_cap_ratio = hw_power_cap_ratio(g);
	r.value *= r.power_cap_ratio;
	r.efficiency *= r.power_cap_ratio;
	return r;
}

/* The throughput lost per unit of power limit below the board power:
 * MLPerf Inference v4.0 DGX H100, Llama-2-70B offline at MaxQ (450 W a
 * GPU) against MaxP (700 W), 17,561.6 / 21,805.8 tokens/s = 0.805, and
 * (1 - 0.805) / (1 - 450 / 700) = 0.546 (hw.h, MODEL.md §5). */
#define POWER_CAP_SLOPE_DEFAULT 0.546

static double hw_default_power_cap_slope(void)
{
	return POWER_CAP_SLOPE_DEFAULT;
}

double hw_power_cap_min_fraction(void)
{
	return 0.5;
}

static double power_cap_slope(const struct hw_spec *g)
{
	return g->power_cap_slope > 0.0 ? g->power_cap_slope
					: hw_default_power_cap_slope();
}

struct hw_power_cap hw_power_cap_basis(const struct hw_spec *g,
				       const struct hw_rate *gemm)
{
	struct hw_power_cap p = {0};

	p.board_power_w = g->board_power_w;
	p.limit_w = g->power_limit_w;
	p.slope = power_cap_slope(g);
	p.ratio = gemm->power_cap_ratio; /* 1 on a measured rate */
	p.applied = p.ratio < 1.0;
	return p;
}

double hw_power_cap_ratio(const struct hw_spec *g)
{
	double f;

	if (!(g->board_power_w > 0.0) || !(g->power_limit_w > 0.0) ||
	    g->power_limit_w >= g->board_power_w)
		return 1.0;
	f = g->power_limit_w / g->board_power_w;
	return fmax(0.0, 1.0 - power_cap_slope(g) * (1.0 - f));
}

double hw_pcie_gbps(int gen, int width)
{
	static const double gt_per_s[] = {
	    [3] = 8, [4] = 16, [5] = 32, [6] = 64};

	if (gen < 3 || gen > 6 || width < 0)
		return 0.0;
	return gt_per_s[gen] * (width ? width : 16) * 128.0 / 130.0 / 8.0;
}

/* The request's efficiency when it gave one, else the default. */
static double eff_or(double given, double dflt)
{
	return given > 0.0 ? given : dflt;
}

/* The fleet's measurement, unless the request gave its own efficiency:
 * a request's figure is the user's statement about the rate and wins over
 * calibration, as it wins over the default (review s18b F5: under
 * "auto" it was dropped without a word on measured types only, and a
 * compare slowed the unmeasured rows alone). */
static const struct hw_measured *measured_unless(double given,
						 const struct hw_measured *m)
{
	return given > 0.0 ? NULL : m;
}

struct hw_rate hw_hbm_rate(const struct hw_spec *g)
{
	struct hw_rate r =
	    rate_from(g->memory_bandwidth_gbps,
		      eff_or(g->hbm_efficiency, hw_default_hbm_efficiency()),
		      measured_unless(g->hbm_efficiency, &g->hbm_gbps), 1.0);
	r.efficiency_given = g->hbm_efficiency > 0.0;
	cap_at_datasheet(&r);
	return r;
}

struct hw_rate hw_intra_rate(const struct hw_spec *g)
{
	struct hw_rate r = rate_from(
	    g->intra_node_gbps,
	    eff_or(g->intra_efficiency,
		   hw_default_link_efficiency(g->intra_node_link)),
	    measured_unless(g->intra_efficiency, &g->intra_node_busbw_gbps),
	    1.0);
	r.efficiency_given = g->intra_efficiency > 0.0;
	return r;
}

struct hw_rate hw_inter_rate(const struct hw_spec *g, double override_gbps,
			     int gpus_per_node)
{
	struct hw_rate r;
	double node = override_gbps > 0.0 ? override_gbps : g->inter_node_gbps;
	int n = gpus_per_node > 0 ? gpus_per_node : 1;
	/* The catalog's (and the probes') figure is a node of the type's
	 * max_gpus_per_node GPUs: each GPU has that node's share of it,
	 * whatever the request's node width (review s19b F5: a 1-GPU "node"
	 * got 300 GB/s of an 8-GPU node's network, a 72-GPU one 4.2 GB/s a
	 * GPU, and 2 GPUs a node came out faster than 8). A request's own
	 * inter_node_gbps is its node's. */
	int share = override_gbps > 0.0 || g->max_gpus_per_node <= 0
			? n
			: g->max_gpus_per_node;
	const struct hw_measured *m =
	    override_gbps > 0.0 ? NULL
				: measured_unless(g->inter_efficiency,
						  &g->inter_node_busbw_gbps);

	r = rate_from(
	    node, eff_or(g->inter_efficiency, hw_default_inter_efficiency()), m,
	    1.0);
	r.value /= share;
	r.datasheet /= share;
	r.efficiency_given = g->inter_efficiency > 0.0;
	/* a request's inter_node_gbps is its own figure, not a datasheet's
	 * (review s17a F8: labelled datasheet); its efficiency still
	 * applies unless the request sets inter_node_efficiency (1: the
	 * figure is already achieved) */
	r.datasheet_given = override_gbps > 0.0;
	return r;
}
