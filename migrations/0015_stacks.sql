-- 0015_stacks.sql - software-stack profiles (issue 13): what a training
-- job's step time depends on beyond the GPU and the layout. Editable like
-- the GPU catalog (PUT /v1/stacks/{name}); docs/MODEL.md §4a cites every
-- seeded value. The seed rows equal the engine's built-in table
-- (engine/stack.c); tests/unit/test_engine_stack.c parses the rows below
-- and checks them against it, so keep one row per line in this format.
CREATE TABLE stacks (
    name                     text PRIMARY KEY
                             CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
    display_name             text NOT NULL,
    attn_kernel              text NOT NULL
                             CHECK (attn_kernel IN ('sdpa-math', 'fa1',
                                    'triton-fa', 'fa2', 'fa3', 'cudnn')),
    -- fraction of the dense 16-bit peak at head dim 128; NULL: the
    -- kernel class's default (engine/attention.c)
    attn_fwd_efficiency      double precision
                             CHECK (attn_fwd_efficiency > 0
                                    AND attn_fwd_efficiency <= 1),
    attn_bwd_efficiency      double precision
                             CHECK (attn_bwd_efficiency > 0
                                    AND attn_bwd_efficiency <= 1),
    tp_comm_overlap          double precision NOT NULL
                             CHECK (tp_comm_overlap BETWEEN 0 AND 1),
    dp_overlap               double precision NOT NULL
                             CHECK (dp_overlap BETWEEN 0 AND 1),
    -- ZeRO-1/2: share of the post-step all-gather of the updated weights
    -- hidden behind the next forward (Megatron-Core overlap_param_gather)
    param_gather_overlap     double precision NOT NULL DEFAULT 0
                             CHECK (param_gather_overlap BETWEEN 0 AND 1),
    reduce_dtype             text NOT NULL
                             CHECK (reduce_dtype IN ('grad', 'bf16', 'fp32')),
    fp8_recipe               text NOT NULL
                             CHECK (fp8_recipe IN ('delayed', 'current',
                                                   'mxfp8')),
    fp8_weight_cache         boolean NOT NULL,
    gemm_clock_derate        double precision NOT NULL
                             CHECK (gemm_clock_derate >= 0.1
                                    AND gemm_clock_derate <= 1),
    kernel_launch_us         double precision NOT NULL
                             CHECK (kernel_launch_us BETWEEN 0 AND 1000),
    kernels_per_layer        double precision NOT NULL
                             CHECK (kernels_per_layer BETWEEN 0 AND 100000),
    elementwise_bytes_factor double precision NOT NULL
                             CHECK (elementwise_bytes_factor BETWEEN 1 AND 100),
    source                   text NOT NULL,
    notes                    text NOT NULL DEFAULT '',
    created_at               timestamptz NOT NULL DEFAULT now(),
    updated_at               timestamptz NOT NULL DEFAULT now()
);

INSERT INTO stacks (name, attn_kernel, attn_fwd_efficiency, attn_bwd_efficiency,
    tp_comm_overlap, dp_overlap, param_gather_overlap, reduce_dtype, fp8_recipe,
    fp8_weight_cache, gemm_clock_derate, kernel_launch_us, kernels_per_layer,
    elementwise_bytes_factor, display_name, source) VALUES
('megatron-lm-2021', 'fa2', NULL, NULL, 0, 0.8, 0, 'grad', 'delayed', true, 1, 0, 0, 1, 'Megatron-LM 2021-22 (the engine''s calibration runs; the default)', 'Narayanan et al. 2021; Korthikanti et al. 2022; docs/MODEL.md §4a'),
('megatron-core', 'cudnn', NULL, NULL, 0.75, 0.8, 1, 'grad', 'delayed', true, 1, 0, 0, 1, 'Megatron-Core + Transformer Engine, --tp-comm-overlap', 'Megatron-Core/Megatron-Bridge communication-overlap docs; NeMo userbuffers presets; docs/MODEL.md §4a'),
('nemo', 'cudnn', NULL, NULL, 0.75, 0.8, 1, 'grad', 'delayed', true, 1, 0, 0, 1, 'NVIDIA NeMo (Megatron-Core + TE recipes)', 'NeMo performance recipes (tp_comm_overlap, userbuffers presets); docs/MODEL.md §4a'),
('pytorch-fsdp2-fa2', 'fa2', NULL, NULL, 0, 0.8, 1, 'fp32', 'current', false, 1, 0, 0, 1, 'PyTorch FSDP2 + FlashAttention-2', 'PyTorch FSDP2 MixedPrecisionPolicy; FlashAttention-2 (Dao 2023); docs/MODEL.md §4a'),
('deepspeed-zero', 'fa2', NULL, NULL, 0, 0.8, 0, 'grad', 'delayed', false, 1, 0, 0, 1, 'DeepSpeed ZeRO + FlashAttention-2', 'DeepSpeed ZeRO (Rajbhandari et al. 2020); docs/MODEL.md §4a'),
('torchtitan', 'fa2', NULL, NULL, 0, 0.8, 1, 'fp32', 'current', false, 1, 0, 0, 1, 'torchtitan (FSDP2, SDPA flash backend, torchao float8)', 'torchtitan docs (fsdp.md, float8.md); docs/MODEL.md §4a'),
('hf-peft-bnb4', 'fa2', NULL, NULL, 0, 0.8, 0, 'grad', 'current', false, 1, 2, 320, 4.2, 'Hugging Face Transformers + PEFT + bitsandbytes 4-bit (QLoRA)', 'QLoRA (Dettmers et al. 2023) §3; transformers modeling_llama.py op count; docs/MODEL.md §4a');
