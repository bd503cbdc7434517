-- 0023_stack_loss_logit_bytes.sql - a stack-profile field (issue 13):
-- loss_logit_bytes, the bytes per logit (token x vocabulary entry, / TP)
-- live at the loss's peak, which the memory model adds to the last
-- stage's activations (docs/MODEL.md §3, §4a):
--  4: Megatron's vocabulary-parallel cross-entropy upcasts the logits to
--   fp32, turns them into the softmax in place, saves it and writes the
--   gradient into it (Megatron-LM vocab_parallel_cross_entropy,
--   Megatron-Core fused_cross_entropy.py); Megatron-DeepSpeed calls it.
--  12: PyTorch's F.cross_entropy on fp32 logits, as torchtitan computes
--   its loss (components/loss.py: cross_entropy(pred.flatten(0, 1).float(),
--   ...)): log_softmax's saved fp32 output, nll_loss's dense fp32
--   gradient and log_softmax's input gradient are live together.
-- The seed values equal the engine's built-in table (engine/stack.c);
-- tests/unit/test_engine_stack.c parses the rows below and checks them
-- against it, so keep one row per line in this format.
ALTER TABLE stacks
    ADD COLUMN loss_logit_bytes double precision NOT NULL DEFAULT 4
        CHECK (loss_logit_bytes >= 2 AND loss_logit_bytes <= 32);

UPDATE stacks AS s
SET loss_logit_bytes = v.loss_logit_bytes
FROM (VALUES
('megatron-lm-2021', 4),
('megatron-core', 4),
('nemo', 4),
('pytorch-fsdp2-fa2', 12),
('deepspeed-zero', 4),
('torchtitan', 12),
('hf-peft-bnb4', 12)
) AS v (name, loss_logit_bytes)
WHERE s.name = v.name;

UPDATE stacks
SET source = source || '; loss: torchtitan components/loss.py (F.cross_entropy on fp32 logits)'
WHERE name IN ('torchtitan', 'pytorch-fsdp2-fa2', 'hf-peft-bnb4');
