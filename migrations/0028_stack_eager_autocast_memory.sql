-- 0028_stack_eager_autocast_memory.sql - two stack-profile fields for the
-- memory of eager PyTorch training loops (issue 13; docs/MODEL.md §3):
--  autocast_fp32_params: the parameters stay fp32 and the step runs under
--   torch.autocast with eager modules, as the Hugging Face Trainer's
--   bf16=True does. Full fine-tuning then saves 18h + 2f bytes per token per
--   layer beyond the fused count (fp32 residual and norm outputs, one
--   16-bit copy per consumer of each norm, the SwiGLU's silu output):
--   transformers modeling_llama.py, and measured with saved-tensor hooks on
--   our H200 (docs/BENCHMARKS.md, 2026-11-26).
--  grads_in_backward: gradients are allocated by the backward
--   (zero_grad(set_to_none=True), PyTorch's default since 2.0) as it frees
--   the activations, so the peak holds the larger of the two; false where a
--   gradient buffer is allocated up front (Megatron's contiguous buffer,
--   DDP's buckets, DeepSpeed's).
-- Every row of every stack, one row per line (tests/unit/test_engine_stack.c
-- parses them and checks them against the engine's built-in table,
-- engine/stack.c).
ALTER TABLE stacks
    ADD COLUMN autocast_fp32_params boolean NOT NULL DEFAULT false,
    ADD COLUMN grads_in_backward boolean NOT NULL DEFAULT false;

UPDATE stacks AS s
SET autocast_fp32_params = v.autocast_fp32_params,
    grads_in_backward = v.grads_in_backward
FROM (VALUES
('megatron-lm-2021', false, false),
('megatron-core', false, false),
('nemo', false, false),
('pytorch-fsdp2-fa2', false, false),
('deepspeed-zero', false, false),
('megatron-deepspeed', false, false),
('torchtitan', false, false),
('hf-peft-bnb4', true, true)
) AS v (name, autocast_fp32_params, grads_in_backward)
WHERE s.name = v.name;

UPDATE stacks
SET source = source || '; memory: transformers modeling_llama.py under torch.autocast, measured (docs/BENCHMARKS.md 2026-11-26)'
WHERE name = 'hf-peft-bnb4';
