/* hw.h - one GPU type: datasheet numbers, optional measured numbers, and the
 * rates the engine actually uses (with their basis).
 *
 * Units: _tflops = 1e12 FLOP/s dense (no sparsity), _gbps = 1e9 B/s,
 * _gib = 2^30 B. Link bandwidths are ONE direction per GPU (docs/CATALOG.md):
 * H100 SXM NVLink 900 GB/s bidirectional -> intra_node_gbps = 450.
 * inter_node_gbps is per node, one direction (8 x 400 Gb/s NICs -> 400).
 */
#ifndef GPUSIZER_ENGINE_HW_H
#define GPUSIZER_ENGINE_HW_H

#include <stdbool.h>

enum eng_dtype {
	ENG_FP64,
	ENG_FP32,
	ENG_TF32,
	ENG_FP16,
	ENG_BF16,
	ENG_FP8,
	ENG_INT8,
	ENG_INT4,
	ENG_DTYPE_COUNT
};

/* Bytes per value (int4 = 0.5). */
double eng_dtype_bytes(enum eng_dtype t);
/* "fp32", "bf16", ... */
const char *eng_dtype_name(enum eng_dtype t);

enum hw_link { HW_LINK_NONE, HW_LINK_PCIE, HW_LINK_NVLINK, HW_LINK_XGMI };
const char *hw_link_name(enum hw_link l);

/* A measured value from the probe fleet: samples == 0 means "not measured". */
struct hw_measured {
	double value;
	int samples;
};

/* What a catalog entry's GEMM efficiency rests on (issue 16): a public
 * measurement of this part, one of a sibling of its architecture, a figure
 * only its vendor published, or nothing beyond the datasheet (the A100-
 * derived default applies). */
enum hw_eff_basis {
	HW_EFF_DATASHEET_ONLY,
	HW_EFF_MEASURED,
	HW_EFF_SIBLING,
	HW_EFF_VENDOR_CLAIM,
	HW_EFF_BASIS_COUNT
};
/* "datasheet_only", "measured", "sibling", "vendor_claim"; parse: 0/-1. */
const char *hw_eff_basis_name(enum hw_eff_basis b);
int hw_eff_basis_parse(const char *s, enum hw_eff_basis *out);

struct hw_spec {
	char name[64];
	double memory_gib;
	/* dense datasheet peak per dtype (FP32-accumulate rate for 16-bit on
	 * GeForce/Ada cards); 0 = not supported. int8/int4 in TOPS. */
	double peak_tflops[ENG_DTYPE_COUNT];
	double memory_bandwidth_gbps;
	enum hw_link intra_node_link;
	double intra_node_gbps; /* one direction per GPU */
	int max_gpus_per_node;
	double inter_node_gbps;	   /* per node, one direction; 0 = none */
	double host_link_gbps;	   /* GPU<->host, one direction; 0 = 25 */
	double price_per_gpu_hour; /* currency units; 0 = unknown */
	int cc_major, cc_minor;	   /* compute capability; 0.0 = not NVIDIA */
	/* Best-shape 16-bit GEMM as a fraction of the dense datasheet peak,
	 * measured on this part (mamf-finder; the catalog cites it), and
	 * what that figure rests on (issue 16). 0 / HW_EFF_DATASHEET_ONLY:
	 * none known, the efficiency of its generation or the default. */
	double gemm_peak_fraction;
	enum hw_eff_basis efficiency_basis;
	/* Board power (the catalog's power_w, W; 0 = unknown), the power
	 * limit the job runs under (0 = the board power: no cap) and the
	 * tensor-core throughput lost per unit of limit below the board
	 * power (0 = the default slope, hw.c). hw_power_cap_ratio. */
	double board_power_w;
	double power_limit_w;
	double power_cap_slope;
	/* A request's own efficiencies of HBM, the intra-node link and the
	 * network against their datasheet rates (0: the defaults,
	 * hw_default_*_efficiency): a cluster's measured figure, or 1 for
	 * a bandwidth the request states as already achieved. */
	double hbm_efficiency, intra_efficiency, inter_efficiency;

	/* Calibration seam: probe medians. When samples > 0 the engine uses
	 * them instead of datasheet x default efficiency. */
	struct hw_measured gemm_tflops[ENG_DTYPE_COUNT]; /* large GEMM */
	/* The probe's plan GEMMs (four shapes of a Llama-2-70B layer at
	 * TP 8), each run --sustain-s seconds on every GPU of the node: the
	 * median over GPUs and shapes. Used in place of gemm_tflops when
	 * measured (hw_gemm_rate). */
	struct hw_measured gemm_sustained_tflops[ENG_DTYPE_COUNT];
	struct hw_measured hbm_gbps;		  /* device copy */
	struct hw_measured intra_node_busbw_gbps; /* NCCL busbw */
	struct hw_measured inter_node_busbw_gbps; /* per node */
};

/* A rate the engine uses and where it came from. */
struct hw_rate {
	/* the efficiency is the request's (hbm_efficiency ...), not the
	 * default; the datasheet figure is the request's own bandwidth */
	bool efficiency_given, datasheet_given;
	double value;	   /* the rate used (tflops or gbps) */
	double datasheet;  /* the datasheet figure it derives from */
	double efficiency; /* value / datasheet */
	bool measured;	   /* true: probe median; false: datasheet x eff */
	int samples;
	/* measured only: the fleet median, and the in-step retention the
	 * value applies to it (1 where none applies: hbm, links) */
	double measured_median;
	double retention;
	/* measured GEMM rates only: the probe metric the median is of
	 * ("gemm_tflops" or "gemm_sustained_tflops"; NULL otherwise), and for
	 * the sustained one the median shape factor of the plan's GEMMs the
	 * value divides it by (hw_probe_plan_shape_factor; 0 otherwise):
	 * value = measured_median x retention / plan_shape_factor. */
	const char *measured_metric;
	double plan_shape_factor;
	/* datasheet path only: the power-cap ratio in value (1: none) */
	double power_cap_ratio;
	/* measured only: value was held at the datasheet figure, which the
	 * measured median (after its shape factor) exceeded (GEMM and HBM;
	 * hw_gemm_rate, hw_hbm_rate; review s17c F3, F9) */
	bool capped;
};

/* The four hardware numbers a sizing used, for the response's `basis`. */
struct hw_basis {
	struct hw_rate gemm_tflops;
	struct hw_rate hbm_gbps;
	struct hw_rate intra_node_gbps;
	struct hw_rate inter_node_gbps; /* per GPU share of the node's NICs */
	/* what the GEMM efficiency rests on when not measured by probes */
	enum hw_eff_basis gemm_efficiency_basis;
	/* The power limit the sizing assumed (hw_power_cap_basis). */
	struct hw_power_cap {
		double board_power_w; /* 0 = unknown */
		double limit_w;	      /* 0 = none asked: the board power */
		double slope;
		double ratio; /* applied to GEMM and attention */
		bool applied; /* false: no limit, or measured rates */
	} power_cap;
};

/* The power-limit part of a basis for g, whose GEMM rate for the sizing's
 * dtype is gemm: applied only on the datasheet path. */
struct hw_power_cap hw_power_cap_basis(const struct hw_spec *g,
				       const struct hw_rate *gemm);

/* True when the GPU has tensor-core support for t: datasheet peak > 0 and,
 * for FP8 on NVIDIA parts, compute capability >= 8.9 (docs/MODEL.md §5;
 * NVIDIA CUDA C++ Programming Guide: FP8 tensor cores from sm_89). */
bool hw_supports(const struct hw_spec *g, enum eng_dtype t);

/* GPU<->host bandwidth of a PCIe link, one direction, GB/s: gen's GT/s per
 * lane (Gen3 8, Gen4 16, Gen5 32, Gen6 64) x width lanes (0: x16) x the
 * encoding (128b/130b to Gen5, FLIT 242/256 for Gen6) / 8 bits (PCI-SIG
 * base specifications; docs/PROBE.md, "limit" of h2d_*). 0 for a
 * generation outside 3..6 (unknown: the engine's default applies). Gen3 x16
 * 15.75, Gen4 x16 31.51, Gen5 x16 63.02, Gen6 x16 121.0. */
double hw_pcie_gbps(int gen, int width);

/* Achieved large-GEMM rate for dtype t (before the shape factor); a
 * measured one is at most the datasheet peak (capped). */
struct hw_rate hw_gemm_rate(const struct hw_spec *g, enum eng_dtype t);
/* Achieved streaming HBM bandwidth; a measured one is at most the
 * datasheet bandwidth (capped). */
struct hw_rate hw_hbm_rate(const struct hw_spec *g);
/* Achieved collective bus bandwidth inside a node, one direction. */
struct hw_rate hw_intra_rate(const struct hw_spec *g);
/* Achieved inter-node bandwidth per GPU: node NICs / gpus_per_node.
 * override_gbps > 0 replaces the datasheet per-node figure. */
struct hw_rate hw_inter_rate(const struct hw_spec *g, double override_gbps,
			     int gpus_per_node);

/* In-step retention of a measured best-shape GEMM rate (probe
 * gemm_tflops: mamf-finder-style short runs on the best shape): the share
 * of it a training or serving step keeps (power-capped clocks with all
 * GPUs and NCCL busy, real shapes). The datasheet path's efficiencies
 * already contain it (16-bit 0.75 = 0.869 best shape x 0.863), so a
 * measured rate gets the same before it replaces datasheet x efficiency
 * (issue 14): 0.75/0.869 for every dtype (FP8/INT8: 0.612 = H100 mamf FP8
 * 1402.6/1979 x 0.863, issue 13). docs/MODEL.md §5. */
double hw_gemm_in_step_retention(enum eng_dtype t);

/* The median, over the probe's four sustained plan GEMMs (smallest
 * dimensions 1,280, 1,024, 4,096 and 3,584: QKV, attention output, MLP
 * gate+up and MLP down of a Llama-2-70B layer at TP 8 with 4,096 tokens;
 * docs/PROBE.md), of gemm_shape_factor for dtype t: what turns the median
 * of their sustained rates into the large-GEMM rate the engine scales by
 * each GEMM's own shape. 16-bit 0.937, FP8/INT8 0.883. */
double hw_probe_plan_shape_factor(enum eng_dtype t);

/* Tensor-core throughput at a power limit below the board power, as a
 * fraction of the board power's: 1 - slope x (1 - limit / board), 1 when
 * no limit or no board power is known. slope 0.546 (default): NVIDIA's
 * MLPerf Inference v4.0 DGX H100 runs, MaxQ (450 W per GPU) against MaxP
 * (700 W), same software, Llama-2-70B offline 17,561.6 / 21,805.8
 * tokens/s = 0.805 at 450/700 of the board power; the same submission's
 * GPT-J at 350 W (0.746, the slope gives 0.727) agrees, as do BERT-99 at
 * 400 W (0.766 and 0.766) and BERT-99.9 at 450 W (0.820 and 0.805), whose
 * caps come from another round's config.
 * Applies to GEMM and attention rates from the datasheet path (a probe's
 * measured rate already ran under its node's limit); HBM-bound work is
 * not scaled. docs/MODEL.md §5. */
double hw_power_cap_ratio(const struct hw_spec *g);
/* The steepest power_cap_slope a request may set: throughput under a cap
 * falls no faster than the power share (clocks and voltage scale down,
 * P ~ f V^2), so the ratio stays at least limit / board power. */
#define HW_POWER_CAP_SLOPE_MAX 1.0
/* The lowest limit the slope is evidenced for, as a fraction of the board
 * power (GPT-J at 350 of 700 W). */
double hw_power_cap_min_fraction(void);

/* Fraction of the large-GEMM rate a GEMM with smallest dimension
 * min_dim reaches: min_dim / (min_dim + 128) (tile/wave quantisation;
 * half rate at one 128-wide tile). See docs/MODEL.md. */
double hw_gemm_shape_factor(double min_dim);

/* Default efficiencies (datasheet -> achieved), documented in MODEL.md. */
double hw_default_gemm_efficiency(enum eng_dtype t);
/* The default for one GPU: tensor-core 16-bit/TF32 GEMMs by architecture
 * generation (A100-calibrated 0.75, transferred to Hopper and Blackwell by
 * the ratio of their measured best-shape GEMM efficiency, MODEL.md §5);
 * other dtypes as hw_default_gemm_efficiency. */
double hw_gemm_efficiency_for(const struct hw_spec *g, enum eng_dtype t);
/* Achieved fused-attention rate (TFLOP/s), forward or backward: the
 * default efficiency above (a burst kernel benchmark) x the in-step
 * retention of GEMMs (hw_gemm_in_step_retention) x datasheet, scaled by
 * measured / default when
 * the probe measured the 16-bit GEMM rate (so a slow or power-capped GPU
 * slows its attention too). */
double hw_attn_tflops(const struct hw_spec *g, bool backward);
double hw_default_hbm_efficiency(void);
double hw_default_link_efficiency(enum hw_link l);
double hw_default_inter_efficiency(void);

#endif
