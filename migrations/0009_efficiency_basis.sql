-- 0009_efficiency_basis.sql - what each GPU's GEMM efficiency rests on.
--
-- The engine's 16-bit GEMM efficiency is 0.75 of the datasheet peak on
-- A100 (docs/MODEL.md §5), whose best-shape GEMM reaches 86.9 % of its
-- peak. Other parts keep the same share of their own best-shape figure.
-- Until now that figure came from the compute capability alone, so the
-- MI300X (no NVIDIA capability) kept A100's 0.75 although its own measured
-- best shape reaches only 51.4 % of its peak, and compare called it
-- cheapest without a caveat (issue 16). Each entry now carries:
--   gemm_peak_fraction  best-shape BF16 GEMM / dense datasheet peak,
--                       measured on this part (NULL: none known)
--   efficiency_basis    measured      - this part was measured
--                       sibling       - a part of the same architecture
--                                       and memory system was measured
--                       vendor_claim  - only the vendor published a figure
--                       datasheet_only - nothing beyond the datasheet: the
--                                       generation's or the default
--                                       efficiency applies
--   efficiency_source   where the figure is published
--
-- Figures: the "Maximum Achievable Matmul FLOPS" (MAMF) table of Stas
-- Bekman's Machine Learning Engineering book (compute/accelerator/
-- README.md, BF16, mean of 100 iterations after 50 warm-up, mamf-finder.py):
-- A100 SXM 271.2/312 = 0.869, A100 PCIe 252.9/312 = 0.811, H100 SXM
-- 794.5/989 = 0.803 ("H200 is the same"), B200 SXM 1745/2250 = 0.776,
-- GB200 1822/2500 = 0.729, MI300X 668.4/1300 = 0.514 (ROCm 6.3, TunableOp;
-- an earlier ROCm 6.2 run gave 0.601, which the source replaced).
ALTER TABLE gpus
    ADD COLUMN gemm_peak_fraction double precision
        CHECK (gemm_peak_fraction IS NULL
               OR (gemm_peak_fraction > 0 AND gemm_peak_fraction <= 1)),
    ADD COLUMN efficiency_basis text NOT NULL DEFAULT 'datasheet_only'
        CHECK (efficiency_basis IN ('measured', 'sibling', 'vendor_claim',
                                    'datasheet_only')),
    ADD COLUMN efficiency_source text NOT NULL DEFAULT '';

UPDATE gpus AS g SET gemm_peak_fraction = v.f, efficiency_basis = v.b,
                     efficiency_source = v.s
FROM (VALUES
    ('a100-sxm4-80gb', 0.869, 'measured',
     'MAMF table, ML Engineering book: A100 SXM 271.2 of 312 TFLOP/s BF16'),
    ('a100-sxm4-40gb', 0.869, 'sibling',
     'MAMF table, ML Engineering book: A100 SXM (80 GB) 271.2 of 312'),
    ('a800-sxm4-80gb', 0.869, 'sibling',
     'MAMF table, ML Engineering book: A100 SXM 271.2 of 312 (A800: A100 with slower NVLink)'),
    ('a100-pcie-80gb', 0.811, 'measured',
     'MAMF table, ML Engineering book: A100 PCIe 252.9 of 312 TFLOP/s BF16'),
    ('a100-pcie-40gb', 0.811, 'sibling',
     'MAMF table, ML Engineering book: A100 PCIe 252.9 of 312'),
    ('a800-pcie-80gb', 0.811, 'sibling',
     'MAMF table, ML Engineering book: A100 PCIe 252.9 of 312'),
    ('a800-pcie-40gb', 0.811, 'sibling',
     'MAMF table, ML Engineering book: A100 PCIe 252.9 of 312'),
    ('h100-sxm5-80gb', 0.803, 'measured',
     'MAMF table, ML Engineering book: H100 SXM 794.5 of 989 TFLOP/s BF16'),
    ('h200-sxm-141gb', 0.803, 'measured',
     'MAMF table, ML Engineering book: H100 SXM 794.5 of 989, "H200 is the same"'),
    ('h800-sxm5-80gb', 0.803, 'sibling',
     'MAMF table, ML Engineering book: H100 SXM 794.5 of 989 (H800: H100 with slower NVLink)'),
    ('b200-sxm-180gb', 0.776, 'measured',
     'MAMF table, ML Engineering book: B200 SXM 1745 of 2250 TFLOP/s BF16'),
    ('gb200-nvl72-186gb', 0.729, 'measured',
     'MAMF table, ML Engineering book: GB200 1822 of 2500 TFLOP/s BF16'),
    ('mi300x-192gb', 0.514, 'measured',
     'MAMF table, ML Engineering book: MI300X 668.4 of 1300 TFLOP/s BF16 (ROCm 6.3, PYTORCH_TUNABLEOP_ENABLED=1)')
) AS v(name, f, b, s)
WHERE g.name = v.name;

-- The rest (H100 PCIe/NVL, H200 NVL: lower power limits than the measured
-- SXM parts, so no sibling figure is carried over; L4, L40S and the
-- GeForce cards: no published best-shape figure) stay datasheet_only.
UPDATE gpus SET efficiency_source =
    'no published best-shape GEMM figure for this part: the default efficiency of its generation applies'
WHERE efficiency_basis = 'datasheet_only';
