-- 0029_stack_loss_pass_bytes.sql - a stack-profile field (issue 13):
-- loss_pass_bytes, the bytes per logit (token x vocabulary entry, / TP) the
-- loss moves in its forward and backward, for 16-bit logits; the time model
-- charges them at the HBM rate (docs/MODEL.md §4a, engine/stack.c):
--  16: a fused cross-entropy (Megatron's vocabulary-parallel one, which
--   Megatron-DeepSpeed also calls): the 16-bit logits read, the fp32
--   softmax written and read, the gradient written in place and read back
--   to 16 bits. This was the engine's figure for every stack before.
--  48: PyTorch's F.cross_entropy on upcast logits, as torchtitan
--   (components/loss.py) and Hugging Face transformers (ForCausalLMLoss)
--   call it: the upcast, log_softmax's three reads and a write over rows
--   too long for shared memory, nll_loss's dense fp32 gradient,
--   log_softmax's backward, the gradient's downcast. Measured on one H100
--   (2026-11-26, tools/gpu_terms.py loss): 48.4 B a logit at the engine's
--   HBM rate.
-- Every row of every stack, one row per line (tests/unit/test_engine_stack.c
-- parses them and checks them against the engine's built-in table).
ALTER TABLE stacks
    ADD COLUMN loss_pass_bytes double precision NOT NULL DEFAULT 16
        CHECK (loss_pass_bytes >= 8 AND loss_pass_bytes <= 128);

UPDATE stacks AS s
SET loss_pass_bytes = v.loss_pass_bytes
FROM (VALUES
('megatron-lm-2021', 16),
('megatron-core', 16),
('nemo', 16),
('pytorch-fsdp2-fa2', 48),
('deepspeed-zero', 16),
('megatron-deepspeed', 16),
('torchtitan', 48),
('hf-peft-bnb4', 48)
) AS v (name, loss_pass_bytes)
WHERE s.name = v.name;

UPDATE stacks
SET source = source || '; loss time: F.cross_entropy on upcast logits, 48 B a logit (measured, docs/BENCHMARKS.md 2026-11-26)'
WHERE name IN ('torchtitan', 'pytorch-fsdp2-fa2', 'hf-peft-bnb4');
