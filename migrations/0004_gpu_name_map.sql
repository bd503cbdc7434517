-- 0004_gpu_name_map.sql - NVML device names -> catalog GPU types.
--
-- The probe reports what NVML calls a GPU (nvmlDeviceGetName); fleet
-- medians and calibration group by catalog type. Names as printed by
-- nvidia-smi for each SKU; a report may also name the type itself
-- (gpus[].gpu_type), which wins.
CREATE TABLE gpu_name_map (
    nvml_name text PRIMARY KEY,
    gpu       text NOT NULL REFERENCES gpus (name) ON UPDATE CASCADE
);

INSERT INTO gpu_name_map (nvml_name, gpu) VALUES
    ('NVIDIA A100-SXM4-40GB',   'a100-sxm4-40gb'),
    ('NVIDIA A100-SXM4-80GB',   'a100-sxm4-80gb'),
    ('NVIDIA A100-PCIE-40GB',   'a100-pcie-40gb'),
    ('NVIDIA A100 80GB PCIe',   'a100-pcie-80gb'),
    ('NVIDIA A800-SXM4-80GB',   'a800-sxm4-80gb'),
    ('NVIDIA A800 80GB PCIe',   'a800-pcie-80gb'),
    ('NVIDIA A800-PCIE-40GB',   'a800-pcie-40gb'),
    ('NVIDIA H100 80GB HBM3',   'h100-sxm5-80gb'),
    ('NVIDIA H100 PCIe',        'h100-pcie-80gb'),
    ('NVIDIA H100 NVL',         'h100-nvl-94gb'),
    ('NVIDIA H800',             'h800-sxm5-80gb'),
    ('NVIDIA H800 80GB HBM3',   'h800-sxm5-80gb'),
    ('NVIDIA H200',             'h200-sxm-141gb'),
    ('NVIDIA H200 NVL',         'h200-nvl-141gb'),
    ('NVIDIA B200',             'b200-sxm-180gb'),
    ('NVIDIA L40S',             'l40s-48gb'),
    ('NVIDIA L4',               'l4-24gb'),
    ('NVIDIA GeForce RTX 3090', 'rtx-3090-24gb'),
    ('NVIDIA GeForce RTX 4090', 'rtx-4090-24gb'),
    ('NVIDIA GeForce RTX 5090', 'rtx-5090-32gb');
