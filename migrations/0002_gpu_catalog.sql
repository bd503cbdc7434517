-- 0002_gpu_catalog.sql - GPU catalog seed (datasheet facts + editable defaults).
--
-- Every number was checked against /work/shared/reference/gpu_specs.csv (the
-- "CSV") and its notes. docs/CATALOG.md has the table, conventions and caveats.
--
-- Conventions (the same in every row):
--   * Tensor columns are DENSE peaks (vendors' "with sparsity" figures / 2).
--   * fp16/bf16/fp8 are the rates with FP32 ACCUMULATION, which is what training
--     and cuBLASLt FP8 GEMMs get. GeForce cards run those at half the
--     FP16-accumulate rate (RTX 4090: 165.2, not 330.3). Data-center Ada (L40S,
--     L4) is not cut that way. See the L40S row for the evidence.
--   * fp64_tflops is the FP64 tensor-core rate where one exists (A100 19.5, H100
--     67), else the vector rate. int8_tops is dense TOPS.
--   * NULL means no source read here states it. It never means 0.
--   * memory_gib = the datasheet capacity. HBM "80GB" parts are 80 GiB.
--     nvidia-smi shows a little less on Hopper (H100 80GB: 81559 MiB ~ 79.6 GiB;
--     H200: 143771 MiB ~ 140.4 GiB), which the engine's memory-utilisation
--     factor has to absorb.
--   * memory_bandwidth_gbps, intra_node_gbps, inter_node_gbps in GB/s (1e9 B/s).
--   * intra_node_gbps is ONE direction per GPU: NVLink's bidirectional figure / 2
--     (H100 900 -> 450). For PCIe-only parts it is the x16 per-direction rate:
--     Gen4 32 GB/s, Gen5 64 GB/s, i.e. the datasheet's 64 / 128 GB/s
--     bidirectional halved (SIZING.md section 5 uses 32 for Gen4).
--   * PCIe cards with an optional 2- or 4-GPU NVLink bridge (A100/A800 PCIe,
--     H100 NVL, H200 NVL, RTX 3090) are 'pcie'. The bridge never spans the 8 GPUs
--     of a typical server, so TP or collectives across the node go over PCIe.
--   * max_gpus_per_node = the scale-up domain (HGX 8, GB200 NVL72 72) or the
--     typical PCIe server (8).
--   * inter_node_gbps = the usual scale-out network per node, one direction. It is
--     an EDITABLE DEFAULT. HGX A100/A800 8x200 Gb/s HDR = 200. HGX H100/H800/H200/
--     B200 and MI300X 8x400 Gb/s NDR = 400. Gen5 data-center PCIe boxes
--     2x200 Gb/s = 50. Gen4 data-center PCIe boxes 2x100 Gb/s = 25. L4 and
--     GeForce boxes 1x100 Gb/s = 12.5.
--   * price_per_gpu_hour = an EDITABLE DEFAULT in USD: a typical 2025-26
--     on-demand / neocloud list price. It is an assumption for users to
--     override, not a fact.
--   * power_w = the first number when the source gives a range.

SET lock_timeout = '5s';

INSERT INTO gpus (
    name, display_name, vendor, architecture, compute_capability,
    memory_gib, memory_type, memory_bandwidth_gbps,
    fp64_tflops, fp32_tflops, tf32_tflops, fp16_tflops, bf16_tflops,
    fp8_tflops, int8_tops,
    intra_node_link, intra_node_gbps, max_gpus_per_node, inter_node_gbps,
    pcie_gen, pcie_width, power_w, price_per_gpu_hour, source, notes
) VALUES

-- ======================================================================= Ampere
-- A100 rows: CSV "NVIDIA A100" rows, from the A100 datasheet (JUN21). Trust A.
-- Datasheet: TF32 156|312*, BF16/FP16 312|624*, INT8 624|1248* (* sparse), FP64
-- 9.7 vector / 19.5 tensor. GA100 reaches 312 with FP32 accumulate. No FP8
-- (Ampere), so fp8 is NULL.
-- A100 SXM4 40GB: 1555 GB/s HBM2, NVLink 600 bidir -> 300, HGX 8-GPU NVSwitch, 400 W.
('a100-sxm4-40gb', 'NVIDIA A100 SXM4 40GB', 'NVIDIA', 'Ampere', '8.0',
 40, 'HBM2', 1555,
 19.5, 19.5, 156, 312, 312,
 NULL, 624,
 'nvlink', 300, 8, 200,
 4, 16, 400, 1.30,
 'NVIDIA A100 Tensor Core GPU datasheet (JUN21, nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf), read via verbatim public transcriptions (gpu_specs.csv, trust A)',
 'Dense peaks (datasheet sparse / 2). fp64 = FP64 tensor core 19.5 (vector 9.7). No FP8 on Ampere. NVLink 3 600 GB/s bidirectional = 300 each way. 8-GPU HGX/DGX A100 with NVSwitch. inter_node default = DGX A100 8x200 Gb/s HDR. Price default assumes ~1.1-1.5 USD/GPU-h on-demand.'),

-- A100 SXM4 80GB: 2039 GB/s HBM2e. 400 W standard (HGX A100-80GB CTS SKU up to 500 W).
('a100-sxm4-80gb', 'NVIDIA A100 SXM4 80GB', 'NVIDIA', 'Ampere', '8.0',
 80, 'HBM2e', 2039,
 19.5, 19.5, 156, 312, 312,
 NULL, 624,
 'nvlink', 300, 8, 200,
 4, 16, 400, 1.60,
 'NVIDIA A100 Tensor Core GPU datasheet (JUN21), read via verbatim public transcriptions (gpu_specs.csv, trust A)',
 'Dense peaks. fp64 = FP64 tensor 19.5. No FP8. NVLink 600 bidir = 300 each way. TDP 400 W standard (HGX A100-80GB CTS SKU up to 500 W). The validation data (Narayanan 2021, Korthikanti 2022) ran on this GPU in DGX A100 / Selene nodes (8x200 Gb/s HDR per node = inter_node 200). Price default ~1.3-1.8 USD/GPU-h.'),

-- A100 PCIe 40GB: 1555 GB/s HBM2, 250 W, optional NVLink bridge for 2 GPUs only -> 'pcie', Gen4 32 each way.
('a100-pcie-40gb', 'NVIDIA A100 PCIe 40GB', 'NVIDIA', 'Ampere', '8.0',
 40, 'HBM2', 1555,
 19.5, 19.5, 156, 312, 312,
 NULL, 624,
 'pcie', 32, 8, 25,
 4, 16, 250, 1.10,
 'NVIDIA A100 Tensor Core GPU datasheet (JUN21), read via verbatim public transcriptions (gpu_specs.csv, trust A)',
 'Same tensor peaks as SXM (datasheet). The optional NVLink bridge joins only 2 GPUs (600 GB/s bidir within the pair), so the link is PCIe Gen4 x16 = 64 GB/s bidir, 32 each way. inter_node default 2x100 Gb/s = 25 GB/s. Sustained clocks under the 250 W cap are lower than SXM. Price default ~1.0-1.2 USD/GPU-h.'),

-- A100 PCIe 80GB: 1935 GB/s HBM2e, 300 W.
('a100-pcie-80gb', 'NVIDIA A100 PCIe 80GB', 'NVIDIA', 'Ampere', '8.0',
 80, 'HBM2e', 1935,
 19.5, 19.5, 156, 312, 312,
 NULL, 624,
 'pcie', 32, 8, 25,
 4, 16, 300, 1.40,
 'NVIDIA A100 Tensor Core GPU datasheet (JUN21), read via verbatim public transcriptions (gpu_specs.csv, trust A)',
 'Same tensor peaks as SXM. 1935 GB/s (vs 2039 on SXM). Optional 2-GPU NVLink bridge, so the link is PCIe Gen4 (32 GB/s each way). inter_node default 25 GB/s. Price default ~1.2-1.6 USD/GPU-h.'),

-- A800 rows: CSV "NVIDIA A800" rows, trust B. ctyun: "A800 = A100 with NVLink
-- reduced from 600 to 400 GB/s, other parameters basically identical". NVIDIA's
-- data-center A800 page is offline. China-market SKU, so no public Western list
-- price. The price is an assumption close to the A100.
('a800-sxm4-80gb', 'NVIDIA A800 SXM4 80GB', 'NVIDIA', 'Ampere', '8.0',
 80, 'HBM2e', 2039,
 19.5, 19.5, 156, 312, 312,
 NULL, 624,
 'nvlink', 200, 8, 200,
 4, 16, 400, 1.50,
 'NVIDIA A800 OEM spec table (China Telecom ctyun.cn article 437601152262213) + NVIDIA A800 40GB Active page + A100 datasheet, via a sourced public report (gpu_specs.csv, trust B)',
 'A100 SXM4 80GB with NVLink cut to 400 GB/s bidir = 200 each way (China export SKU). Other figures inherited from the A100 datasheet. HGX A800 8-GPU + NVSwitch. The source study (arXiv:2311.03687) trained Llama-2-7B on 8xA800 with near-linear scaling. inter_node default assumes DGX-A100-like 8x200 Gb/s. Price is an assumption (no public list price outside China).'),

('a800-pcie-80gb', 'NVIDIA A800 PCIe 80GB', 'NVIDIA', 'Ampere', '8.0',
 80, 'HBM2e', 1935,
 19.5, 19.5, 156, 312, 312,
 NULL, 624,
 'pcie', 32, 8, 25,
 4, 16, 300, 1.30,
 'NVIDIA A800 OEM spec table (ctyun.cn 437601152262213) + A100 datasheet, via a sourced public report (gpu_specs.csv, trust B)',
 'A100 PCIe 80GB equivalent. Its optional NVLink bridge (400 GB/s bidir) joins 2 GPUs only, so the link is PCIe Gen4 (32 GB/s each way). Price is an assumption (China-market SKU).'),

-- A800 PCIe 40GB: the CSV says HBM2e at 1555 GB/s. The A100 PCIe 40GB it mirrors
-- and NVIDIA's "A800 40GB Active" page both say HBM2 at 1555, so HBM2 is used.
('a800-pcie-40gb', 'NVIDIA A800 PCIe 40GB', 'NVIDIA', 'Ampere', '8.0',
 40, 'HBM2', 1555,
 19.5, 19.5, 156, 312, 312,
 NULL, 624,
 'pcie', 32, 8, 25,
 4, 16, 250, 1.00,
 'NVIDIA A800 OEM spec table (ctyun.cn 437601152262213) + NVIDIA A800 40GB Active page + A100 datasheet, via a sourced public report (gpu_specs.csv, trust B)',
 'A100 PCIe 40GB equivalent. The CSV lists HBM2e, but 1555 GB/s is the HBM2 40GB configuration (A100 PCIe 40GB; NVIDIA A800 40GB Active page: 40GB HBM2, 1,555.2 GB/s), so HBM2 is recorded. The workstation "A800 40GB Active" (240 W) is a different board. Price is an assumption.'),

-- GeForce RTX 3090: CSV row, GA102 whitepaper Appendix A Table 9 (trust B).
-- FP16/BF16 with FP32 accumulate 71 dense (FP16 accumulate 142). INT8 284 dense.
-- TF32 is not recorded in the CSV. The GA102 whitepaper value 35.6 dense is taken
-- from public transcriptions.
('rtx-3090-24gb', 'NVIDIA GeForce RTX 3090 24GB', 'NVIDIA', 'Ampere', '8.6',
 24, 'GDDR6X', 936,
 NULL, 35.6, 35.6, 71, 71,
 NULL, 284,
 'pcie', 32, 8, 12.5,
 4, 16, 350, 0.25,
 'NVIDIA Ampere GA102 GPU Architecture whitepaper, Appendix A Table 9 (RTX 3090), via public transcriptions (gpu_specs.csv, trust B); TDP 350 W from third-party tables',
 'FP32-ACCUMULATE rate: FP16/BF16 tensor 71 dense (142 with FP16 accumulate), the rate training gets. INT8 284 TOPS dense. No FP8 (Ampere). fp64 not recorded (GeForce FP64 is 1/64 rate). TF32 35.6 is the GA102 whitepaper figure, which is not in gpu_specs.csv (trust B-). The optional 2-GPU NVLink bridge (bandwidth not recorded; about +10 % on 8-GPU Llama-2-7B training per arXiv:2311.03687) is ignored, so the link is PCIe Gen4 (32 GB/s each way). GeForce P2P may be disabled. inter_node default 1x100 Gb/s. Price default ~0.2-0.3 USD/GPU-h (marketplaces).'),

-- ======================================================================= Hopper
-- H100 SXM5 80GB: CSV row, H100 datasheet + whitepaper v1.04 Table 3 (trust A).
-- Dense: TF32 494.7, BF16/FP16 989.4, FP8 1978.9, INT8 1978.9. FP64 34 / tensor 67.
('h100-sxm5-80gb', 'NVIDIA H100 SXM5 80GB', 'NVIDIA', 'Hopper', '9.0',
 80, 'HBM3', 3350,
 67, 67, 494.7, 989.4, 989.4,
 1978.9, 1978.9,
 'nvlink', 450, 8, 400,
 5, 16, 700, 2.75,
 'NVIDIA H100 datasheet/product page (sparse figures marked *) + H100 Tensor Core GPU Architecture whitepaper v1.04 Tables 1 and 3, via public transcriptions (gpu_specs.csv, trust A)',
 'Dense = datasheet sparse / 2 (BF16 1,979* -> 989.4; FP8 3,958* -> 1978.9). fp64 = FP64 tensor 67 (vector 34). NVLink 4 900 GB/s bidir = 450 each way (SIZING.md section 5: t_max ~ 11.2 for h = 8192). HGX/DGX H100 8-GPU NVSwitch. inter_node default = DGX H100 8x400 Gb/s NDR. TDP "up to 700 W (configurable)". 80 GB reads as 81559 MiB (~79.6 GiB) in nvidia-smi. Price default ~2.5-3.0 USD/GPU-h.'),

-- H100 PCIe 80GB: CSV row (trust B). BF16 756 and 350 W from whitepaper Table 3.
-- 2000 GB/s from product brief PB-11133. FP32 51 / TF32 378 / FP8 1513 from
-- third-party tables (lower confidence). The CSV did not record FP64 or INT8.
-- fp64 51 (tensor) is the datasheet value as transcribed in Lightning litgpt's
-- GPU_AVAILABLE_FLOPS table. int8 stays NULL.
('h100-pcie-80gb', 'NVIDIA H100 PCIe 80GB', 'NVIDIA', 'Hopper', '9.0',
 80, 'HBM2e', 2000,
 51, 51, 378, 756, 756,
 1513, NULL,
 'pcie', 64, 8, 50,
 5, 16, 350, 2.30,
 'NVIDIA H100 whitepaper v1.04 Table 3 (BF16 756, 350 W) + product brief PB-11133 Table 2 (2,000 GB/s); FP32/TF32/FP8 dense from third-party tables (gpu_specs.csv, trust B); FP64 tensor 51 from the datasheet as transcribed in Lightning-AI litgpt',
 'HBM2e 2,000 GB/s (the product brief''s own clock x bus width gives 2,039). FP32 51, TF32 378 and FP8 1513 dense come from third-party tables (lower confidence). fp64 51 = FP64 tensor per the datasheet as transcribed in litgpt (not in gpu_specs.csv, trust B-). int8 NULL because no source was read. The optional NVLink bridge (value not read) joins pairs only, so the link is PCIe Gen5 x16 = 128 bidir, 64 each way. inter_node default 2x200 Gb/s = 50. Price default ~2.0-2.5 USD/GPU-h.'),

-- H100 NVL 94GB: CSV row (trust A). Dense = sparse / 2: TF32 417.5, BF16 835.5,
-- FP8 1670.5, INT8 1670.5. FP64 30 / tensor 60. TDP 350-400 W -> 350.
-- NVLink bridge 600 GB/s bidir joins 2-4 GPUs only -> 'pcie'.
('h100-nvl-94gb', 'NVIDIA H100 NVL 94GB', 'NVIDIA', 'Hopper', '9.0',
 94, 'HBM3', 3900,
 60, 60, 417.5, 835.5, 835.5,
 1670.5, 1670.5,
 'pcie', 64, 8, 50,
 5, 16, 350, 2.50,
 'NVIDIA H100 product page/datasheet (NVL column; sparse figures marked *), via public transcriptions (gpu_specs.csv, trust A)',
 'Dense = datasheet sparse / 2 (TF32 835*, BF16 1,671*, FP8 3,341*). fp64 = FP64 tensor 60 (vector 30). Dual-slot PCIe card. Its NVLink bridge (600 GB/s bidir) links 2 cards, not the 8 of a server, so the link is PCIe Gen5 (64 GB/s each way); use a custom row for pair-only TP. TDP 350-400 W, first figure used. Price default ~2.5 USD/GPU-h (assumption, rarely rented).'),

-- H800 SXM5 80GB: CSV row (trust B). H800 datasheet (doc 2631447) + Lenovo LP1814:
-- same tensor rates, HBM and TDP as H100 SXM. NVLink 400 bidir (vs 900), FP64 1 TF.
('h800-sxm5-80gb', 'NVIDIA H800 SXM5 80GB', 'NVIDIA', 'Hopper', '9.0',
 80, 'HBM3', 3350,
 1, 67, 494.7, 989.4, 989.4,
 1978.9, 1978.9,
 'nvlink', 200, 8, 400,
 5, 16, 700, 2.50,
 'NVIDIA H800 GPU datasheet (doc 2631447, Feb 2023, no longer hosted) + Lenovo Press LP1814, quoted in public research notes; tensor rates inherited from the H100 SXM row (gpu_specs.csv, trust B)',
 'China export SKU: the H100 SXM with NVLink cut to 400 GB/s bidir (200 each way) and FP64 cut to 1 TFLOPS. The CSV gives 1 (vector). No separate FP64 tensor figure was read. Tensor, HBM and TDP are as H100 SXM. DeepSeek-V3 (arXiv:2412.19437 Sec 3.2.2) measured ~160 GB/s achievable NVLink and ~50 GB/s InfiniBand per GPU on H800 nodes. inter_node default 8x400 Gb/s (their 50 GB/s per GPU x 8). Price is an assumption (China-market).'),

-- H200 SXM 141GB: CSV row (trust A). Sparse TF32 989, BF16 1,979, FP8 3,958 ->
-- dense 494.5 / 989.5 / 1979. Same compute as H100 SXM. 4.8 TB/s HBM3e.
('h200-sxm-141gb', 'NVIDIA H200 SXM 141GB', 'NVIDIA', 'Hopper', '9.0',
 141, 'HBM3e', 4800,
 67, 67, 494.5, 989.5, 989.5,
 1979, 1979,
 'nvlink', 450, 8, 400,
 5, 16, 700, 3.50,
 'NVIDIA H200 datasheet / product page (nvidia.com/en-us/data-center/h200; sparse figures marked), via a public transcription (gpu_specs.csv, trust A)',
 'Dense = sparse / 2. Same compute as H100 SXM with 141 GB HBM3e at 4.8 TB/s. memory_gib keeps the datasheet 141 for consistency with the other rows. nvidia-smi shows 143771 MiB ~ 140.4 GiB usable, so fits within ~0.6 GiB of the top are optimistic. NVLink 900 bidir = 450 each way. HGX H200 8-GPU. inter_node default 8x400 Gb/s. Price default ~3.5 USD/GPU-h.'),

-- H200 NVL 141GB: CSV row (trust A). Sparse TF32 835, BF16 1,671, FP8 3,341 ->
-- dense 417.5 / 835.5 / 1670.5. "Up to 600 W". 2- or 4-way NVLink bridge -> 'pcie'.
('h200-nvl-141gb', 'NVIDIA H200 NVL 141GB', 'NVIDIA', 'Hopper', '9.0',
 141, 'HBM3e', 4800,
 60, 60, 417.5, 835.5, 835.5,
 1670.5, 1670.5,
 'pcie', 64, 8, 50,
 5, 16, 600, 3.20,
 'NVIDIA H200 datasheet / product page (NVL column; sparse figures marked), via a public transcription (gpu_specs.csv, trust A)',
 'Dense = sparse / 2. fp64 = FP64 tensor 60 (vector 30). Dual-slot PCIe card. Its NVLink bridge (900 GB/s bidir) joins 2 or 4 GPUs, not a whole 8-GPU server, so the link is PCIe Gen5 (64 GB/s each way). memory_gib 141 as on the datasheet (~140.4 GiB visible). TDP "up to 600 W". Price default ~3.0-3.5 USD/GPU-h (assumption).'),

-- ======================================================================= Blackwell
-- B200: CSV row (trust B, UNCERTAIN). Per-GPU values derived from DGX/HGX B200
-- 8-GPU totals: 1,440 GB (180 per GPU), 64 TB/s (8 TB/s per GPU). Dense BF16 2250
-- (36 PF sparse / 16), FP8 4500. FP32/TF32/FP64/INT8, PCIe and TDP not read -> NULL.
('b200-sxm-180gb', 'NVIDIA B200 (HGX/DGX B200) 180GB', 'NVIDIA', 'Blackwell', '10.0',
 180, 'HBM3e', 8000,
 NULL, NULL, NULL, 2250, 2250,
 4500, NULL,
 'nvlink', 900, 8, 400,
 NULL, NULL, NULL, 5.50,
 'NVIDIA DGX B200 / HGX B200 product pages (8-GPU totals; HGX lists FP8/BF16 with sparsity), per-GPU values derived (gpu_specs.csv, trust B); TensorRT-LLM v1.0 docs call it "B200 180GB"',
 'UNCERTAIN: launch material (GTC 2024) said 192 GB and 8 TB/s. Current DGX/HGX pages give 1,440 GB per 8 GPUs (180 GB) and 64 TB/s. One transcription of the HGX datasheet says 7.7 TB/s. Dense = system sparse / 16: BF16 2250, FP8 4500 (FP4 9000 dense, no column). FP64, FP32, TF32, INT8, PCIe generation and TDP were not read from an NVIDIA source, so they are NULL (DGX B200 system 14.3 kW; ~1000 W per GPU is commonly quoted). NVLink 5 1800 bidir = 900 each way. inter_node default DGX B200 8x400 Gb/s. Price default ~5-6 USD/GPU-h.'),

-- GB200 (per Blackwell GPU in a GB200 NVL72 rack): CSV row (trust B, PRELIMINARY).
-- Per GPU = rack total / 72, then / 2 for dense: TF32 1250, BF16 2500, FP8 5000,
-- INT8 5000. FP64 45 (3,240 TF / 72, FP64 is not sparse). 186 GB HBM3e, 8 TB/s.
-- The scale-up domain is the whole 72-GPU NVLink rack, so max_gpus_per_node = 72.
('gb200-nvl72-186gb', 'NVIDIA GB200 NVL72 (per B200-class GPU) 186GB', 'NVIDIA', 'Blackwell', '10.0',
 186, 'HBM3e', 8000,
 45, NULL, 1250, 2500, 2500,
 5000, 5000,
 'nvlink', 900, 72, 3600,
 NULL, NULL, NULL, 6.00,
 'NVIDIA GB200 NVL72 spec table (nvidia.com/en-us/data-center/gb200-nvl72; "preliminary specifications", Tensor Core figures with sparsity), via a public transcription (gpu_specs.csv, trust B)',
 'PRELIMINARY. Per GPU = rack total / 72, dense = sparse / 2 (FP16/BF16 360 PF*, FP8 720 PF*, TF32 180 PF*, INT8 720 POPS*; FP64 3,240 TF). Memory 13.5 TB / 72 = 187.5 GB "up to". Other NVIDIA material says 13.4 TB and 186 GB, and TensorRT-LLM v1.0 docs say "GB200 192GB". 186 used. "Node" here is the 72-GPU NVLink domain (NVLink 5 1800 bidir = 900 each way per GPU). inter_node default = 72 x 400 Gb/s = 3600 GB/s for the domain (50 GB/s per GPU, as DGX). Compute trays hold 4 GPUs. FP32, PCIe and TDP not read. Price is an assumption.'),

-- GeForce RTX 5090: CSV row, RTX Blackwell whitepaper Table 3 (trust B).
-- FP32-accumulate: BF16/FP16 209.5, FP8 419 (FP16 accumulate 838). FP32, TF32, INT8
-- not recorded -> NULL. PCIe Gen5 x16 "not read". 575 W from a third-party table.
('rtx-5090-32gb', 'NVIDIA GeForce RTX 5090 32GB', 'NVIDIA', 'Blackwell', '12.0',
 32, 'GDDR7', 1792,
 NULL, NULL, NULL, 209.5, 209.5,
 419, NULL,
 'pcie', 64, 8, 12.5,
 5, 16, 575, 0.70,
 'NVIDIA RTX Blackwell GPU Architecture whitepaper, Table 3, via public transcriptions (gpu_specs.csv, trust B); 575 W from a third-party table',
 'FP32-ACCUMULATE rates: BF16/FP16 209.5 dense (170 SMs x 512 FLOP/clk x 2.407 GHz), FP8 419 (838 with FP16 accumulate). Do not use "3352 AI TOPS" (FP4 sparse) as a BF16 peak. Public PyTorch BF16 GEMM results reach ~235-240 TFLOP/s because clocks run above the rated 2.407 GHz boost, so measured efficiency can exceed 100 %. FP32, TF32 and INT8 not recorded. PCIe Gen5 x16 (not read from NVIDIA) = 64 GB/s each way. GeForce P2P may be disabled. Price default ~0.6-0.9 USD/GPU-h (marketplaces, assumption).'),

-- ======================================================================= Ada Lovelace
-- L40S: CSV row (trust A). Datasheet: TF32 183|366*, BF16/FP16 362.05|733*,
-- FP8 733|1,466*, INT8 733|1,466*. The CSV caveat ("362.05 very likely the
-- FP16-accumulate rate, expect ~181 with FP32 accumulate") is NOT followed:
--   (1) validation/inference_runs.csv TRT05-TTFT-12 (trust A): Llama 2 7B FP8,
--       2048-token prefill on one L40S in 73 ms = 2*6.74e9*2048 / 0.073 =
--       378 TFLOP/s of GEMM work alone, above the 366.5 the caveat implies for
--       FP8, so FP8 GEMMs (FP32 accumulate in cuBLASLt) run at the 733 rate;
--   (2) public PyTorch GEMM results (zzc0721/torch-performance-test-data #43)
--       measure ~264-269 TFLOP/s for 16-bit GEMMs on an L40S. BF16 always
--       accumulates in FP32, and 264 cannot be reached at a 181 peak.
--   Data-center Ada (L4: 70.9 measured BF16 vs a 60.5 half rate; L20: 114 of
--   119.5) is likewise not cut to half rate. The half rate is a GeForce limit.
--   The datasheet figures are used as the FP32-accumulate peaks.
('l40s-48gb', 'NVIDIA L40S 48GB', 'NVIDIA', 'Ada Lovelace', '8.9',
 48, 'GDDR6', 864,
 NULL, 91.6, 183, 362.05, 362.05,
 733, 733,
 'pcie', 32, 8, 25,
 4, 16, 350, 1.00,
 'NVIDIA L40S datasheet (2841316, AUG23) + product page nvidia.com/en-us/data-center/l40s, via a sourced public report (gpu_specs.csv, trust A)',
 'Dense = datasheet sparse / 2 (BF16 362.05|733*, FP8 733|1,466*, TF32 183|366*, INT8 733|1,466*). DECISION: 362.05 is taken as the FP32-accumulate rate, against the CSV caveat that guessed ~181. The project''s own TensorRT-LLM data (Llama 2 7B FP8, 2048-token prefill in 73 ms, >= 378 TFLOP/s) and public PyTorch BF16/FP16 GEMMs at ~265 TFLOP/s both exceed what a half-rate part could do. If a probe measures otherwise, the measured curve wins. GDDR6 with ECC. No NVLink and no MIG, so the link is PCIe Gen4 (32 GB/s each way). OVX servers hold up to 8. fp64 not recorded. inter_node default 2x100 Gb/s = 25. Price default ~0.8-1.2 USD/GPU-h.'),

-- L4: CSV row (trust B). Datasheet sparse FP16/BF16 242*, FP8 485*, INT8 485*,
-- TF32 120* -> dense 121 / 242.5 / 242.5 / 60. FP32 30.3. 300 GB/s. 72 W from
-- third-party tables. Same decision as L40S: a forum measurement quoted in public
-- code gives FP16 with FP32 accumulate ~87 and FP8 ~188 TFLOP/s, both above the
-- half rates (60.5 / 121), so the datasheet rates are the FP32-accumulate peaks.
('l4-24gb', 'NVIDIA L4 24GB', 'NVIDIA', 'Ada Lovelace', '8.9',
 24, 'GDDR6', 300,
 NULL, 30.3, 60, 121, 121,
 242.5, 242.5,
 'pcie', 32, 8, 12.5,
 4, 16, 72, 0.50,
 'NVIDIA L4 datasheet (Cisco-hosted copy) + product page nvidia.com/en-us/data-center/l4, via public quotes (gpu_specs.csv, trust B); 72 W from third-party tables',
 'Dense = datasheet sparse / 2 ("one-half lower without sparsity"). FP32-accumulate = the datasheet rate: measured FP16 with FP32 accumulate ~87 and FP8 ~188 TFLOP/s (NVIDIA forum, quoted in public code) and public PyTorch BF16 ~71 all exceed the half rates. The 72 W cap makes sustained GEMM throughput well below peak (~55-60 % typical). Low-profile PCIe Gen4 x16 (32 GB/s each way). fp64 not recorded. TDP 72 W not read from an NVIDIA source. inter_node default 1x100 Gb/s. Price default ~0.4-0.7 USD/GPU-h.'),

-- GeForce RTX 4090: CSV row, Ada whitepaper v2.02/2.1 Appendix A Table 2 (trust A).
-- FP32-accumulate: BF16/FP16 165.2, FP8 330.3 (v2.02 corrected it from 660.6).
-- INT8 660.6. FP32 82.6. TF32 82.6 is in the whitepaper but not the CSV (public
-- transcriptions). 450 W board limit.
('rtx-4090-24gb', 'NVIDIA GeForce RTX 4090 24GB', 'NVIDIA', 'Ada Lovelace', '8.9',
 24, 'GDDR6X', 1008,
 NULL, 82.6, 82.6, 165.2, 165.2,
 330.3, 660.6,
 'pcie', 32, 8, 12.5,
 4, 16, 450, 0.40,
 'NVIDIA Ada GPU Architecture whitepaper (v2.02/2.1), Appendix A Table 2 (GeForce RTX 4090), via verbatim public transcriptions (gpu_specs.csv, trust A)',
 'FP32-ACCUMULATE rates, what training gets: BF16/FP16 165.2 dense (330.3 with FP16 accumulate, the figure SIZING.md section 7 uses as the source''s input), FP8 330.3 (660.6 with FP16 accumulate; whitepaper v2.02 corrected the FP32-accumulate FP8 figure). INT8 660.6 TOPS. TF32 82.6 is the whitepaper figure, not in gpu_specs.csv (trust B-). Public PyTorch BF16 GEMMs measure ~160-165 TFLOP/s, consistent with the half rate. PCIe Gen4 x16 = 32 GB/s each way. GeForce P2P is disabled (arXiv:2311.03687 used NCCL_P2P_DISABLE=1), so TP beyond 2 starves (t_max ~ 2.4 at 330, ~4.8 at 165 for h = 8192). 450 W board limit. inter_node default 1x100 Gb/s. Price default ~0.3-0.5 USD/GPU-h.'),

-- ======================================================================= AMD CDNA 3
-- MI300X: CSV row (trust A). AMD product page + footnotes MI300-17 (TFLOPS) and
-- MI300-05A (5.325 TB/s = 8192 bit x 5.2 Gbps / 8; the CSV rounds to 5300).
-- Dense: TF32 653.7, FP16/BF16 1307.4, FP8 2614.9, INT8 2614.9. FP64 81.7 vector /
-- 163.4 matrix. FP32 163.4. 750 W peak TBP.
('mi300x-192gb', 'AMD Instinct MI300X 192GB', 'AMD', 'CDNA 3', NULL,
 192, 'HBM3', 5300,
 163.4, 163.4, 653.7, 1307.4, 1307.4,
 2614.9, 2614.9,
 'infinity_fabric', 448, 8, 400,
 5, 16, 750, 2.50,
 'AMD Instinct MI300X product page (amd.com/en/products/accelerators/instinct/mi300/mi300x.html) incl. footnotes MI300-17 and MI300-05A, via a sourced public report (gpu_specs.csv, trust A)',
 'Dense (sparse: FP16/BF16 2614.9, FP8 5229.8). fp64 = FP64 matrix 163.4 (vector 81.7). fp32 = 163.4 as listed (matrix). Memory 5.3 TB/s (footnote: 5.325). Infinity Fabric: 8 links x 128 GB/s peak (bidirectional per link = 64 each way). In the 8-GPU platform each GPU reaches its 7 peers over 7 links: intra_node = 7 x 64 = 448 GB/s each way in aggregate (third parties quote 896 GB/s bidirectional). A single peer pair gets only 64 each way, so ring collectives that use one link per direction see far less than the aggregate. max 8 (AMD Instinct Platform, 1.5 TB HBM3). inter_node default 8x400 Gb/s. No compute capability (non-NVIDIA). Price default ~2.0-2.5 USD/GPU-h.');

-- Sanity: invariants every row must satisfy. Any violation aborts the migration.
DO $$
DECLARE
    r record;
    missing text;
    pcie_one_way double precision;
BEGIN
    FOR r IN SELECT * FROM gpus LOOP
        -- precision ladder (dense): fp64 <= fp32 <= tf32 <= bf16 <= fp8 where set
        IF r.fp64_tflops > r.fp32_tflops THEN
            RAISE EXCEPTION 'gpu %: fp64 % > fp32 %', r.name, r.fp64_tflops, r.fp32_tflops;
        END IF;
        IF r.fp32_tflops > r.bf16_tflops OR r.tf32_tflops > r.bf16_tflops THEN
            RAISE EXCEPTION 'gpu %: fp32/tf32 above bf16', r.name;
        END IF;
        IF r.tf32_tflops < r.fp32_tflops * 0.99 THEN
            RAISE EXCEPTION 'gpu %: tf32 % below fp32 %', r.name, r.tf32_tflops, r.fp32_tflops;
        END IF;
        IF r.bf16_tflops > r.fp8_tflops THEN
            RAISE EXCEPTION 'gpu %: bf16 % > fp8 %', r.name, r.bf16_tflops, r.fp8_tflops;
        END IF;
        IF r.bf16_tflops > r.int8_tops THEN
            RAISE EXCEPTION 'gpu %: bf16 % > int8 %', r.name, r.bf16_tflops, r.int8_tops;
        END IF;
        IF r.fp16_tflops IS DISTINCT FROM r.bf16_tflops THEN
            RAISE EXCEPTION 'gpu %: fp16 and bf16 tensor rates differ on every listed part', r.name;
        END IF;
        -- dense: FP8 is exactly 2x BF16 on every part listed (a 4x ratio means a
        -- sparse figure slipped in)
        IF r.fp8_tflops IS NOT NULL AND abs(r.fp8_tflops / r.bf16_tflops - 2) > 0.03 THEN
            RAISE EXCEPTION 'gpu %: fp8/bf16 = % (expected 2, dense)', r.name,
                r.fp8_tflops / r.bf16_tflops;
        END IF;
        -- no FP8 before Ada/Hopper (SIZING.md section 7.7)
        IF r.architecture = 'Ampere' AND r.fp8_tflops IS NOT NULL THEN
            RAISE EXCEPTION 'gpu %: Ampere has no FP8', r.name;
        END IF;
        IF r.compute_capability IN ('8.9', '9.0', '10.0', '12.0') AND r.fp8_tflops IS NULL THEN
            RAISE EXCEPTION 'gpu %: sm_% has FP8 but fp8_tflops is NULL', r.name,
                r.compute_capability;
        END IF;
        -- GeForce: FP32-accumulate half rate, so INT8 is 4x BF16 where both set
        IF r.display_name LIKE '%GeForce%' AND r.int8_tops IS NOT NULL
           AND abs(r.int8_tops / r.bf16_tflops - 4) > 0.05 THEN
            RAISE EXCEPTION 'gpu %: GeForce bf16 must be the FP32-accumulate rate', r.name;
        END IF;
        -- links: one direction, below HBM/GDDR bandwidth; scale-out per GPU below scale-up
        IF r.intra_node_gbps > r.memory_bandwidth_gbps THEN
            RAISE EXCEPTION 'gpu %: intra_node % > memory bandwidth %', r.name,
                r.intra_node_gbps, r.memory_bandwidth_gbps;
        END IF;
        IF r.inter_node_gbps / r.max_gpus_per_node > r.intra_node_gbps THEN
            RAISE EXCEPTION 'gpu %: per-GPU scale-out faster than scale-up', r.name;
        END IF;
        -- PCIe x16 one-way: Gen3 16, Gen4 32, Gen5 64, Gen6 128 GB/s
        pcie_one_way := 2 ^ (r.pcie_gen - 3) * 16 * r.pcie_width / 16.0;
        IF r.intra_node_link = 'pcie' AND r.intra_node_gbps IS DISTINCT FROM pcie_one_way THEN
            RAISE EXCEPTION 'gpu %: pcie intra_node % is not the Gen% x% one-way rate',
                r.name, r.intra_node_gbps, r.pcie_gen, r.pcie_width;
        END IF;
        IF r.intra_node_link = 'nvlink' AND r.intra_node_gbps < 100 THEN
            RAISE EXCEPTION 'gpu %: NVLink below 100 GB/s one way', r.name;
        END IF;
        -- capacity in GiB, bandwidth in GB/s: plausible ranges catch unit slips
        IF r.memory_gib NOT BETWEEN 8 AND 512
           OR r.memory_bandwidth_gbps NOT BETWEEN 100 AND 20000 THEN
            RAISE EXCEPTION 'gpu %: memory figures out of range (unit slip?)', r.name;
        END IF;
        IF r.bf16_tflops IS NULL OR r.bf16_tflops NOT BETWEEN 10 AND 20000 THEN
            RAISE EXCEPTION 'gpu %: bf16 missing or out of range (dense TFLOPS)', r.name;
        END IF;
        IF (r.vendor = 'NVIDIA') <> (r.compute_capability IS NOT NULL) THEN
            RAISE EXCEPTION 'gpu %: compute_capability is NVIDIA-only and required there', r.name;
        END IF;
        IF r.price_per_gpu_hour IS NULL OR r.price_per_gpu_hour <= 0
           OR r.price_per_gpu_hour > 50 THEN
            RAISE EXCEPTION 'gpu %: price default missing or implausible', r.name;
        END IF;
        IF length(r.source) < 20 OR length(r.notes) < 20 THEN
            RAISE EXCEPTION 'gpu %: source and notes must say where figures come from', r.name;
        END IF;
    END LOOP;

    SELECT string_agg(n, ', ') INTO missing
      FROM unnest(ARRAY['a100-sxm4-40gb', 'a100-sxm4-80gb', 'a100-pcie-40gb',
                        'a100-pcie-80gb', 'a800-sxm4-80gb', 'h100-sxm5-80gb',
                        'h100-pcie-80gb', 'h100-nvl-94gb', 'h800-sxm5-80gb',
                        'h200-sxm-141gb', 'h200-nvl-141gb', 'b200-sxm-180gb',
                        'l40s-48gb', 'l4-24gb', 'rtx-3090-24gb', 'rtx-4090-24gb',
                        'rtx-5090-32gb', 'mi300x-192gb']) AS n
     WHERE NOT EXISTS (SELECT 1 FROM gpus g WHERE g.name = n);
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'gpu catalog lacks: %', missing;
    END IF;

    -- worked numbers of SIZING.md section 5 depend on these exact values
    IF (SELECT intra_node_gbps FROM gpus WHERE name = 'h100-sxm5-80gb') <> 450
       OR (SELECT intra_node_gbps FROM gpus WHERE name = 'rtx-4090-24gb') <> 32
       OR (SELECT bf16_tflops FROM gpus WHERE name = 'rtx-4090-24gb') <> 165.2
       OR (SELECT bf16_tflops FROM gpus WHERE name = 'a100-sxm4-80gb') <> 312 THEN
        RAISE EXCEPTION 'catalog drifted from the SIZING.md worked numbers';
    END IF;
END
$$;
