-- 0040_stack_partial_recompute.sql - a stack-profile field (session 20):
-- whether the stack recomputes whole layers for some layers of each
-- pipeline chunk and none for the rest (recompute "partial"; engine/stack.c
-- cites each value; docs/MODEL.md §3):
--  true: the Megatron-LM family - --recompute-method block with
--   --recompute-num-layers (--activations-checkpoint-method before 2022),
--   Megatron-Core (per model chunk) and NeMo ("partial transformer layer
--   recomputation").
--  false: DeepSpeed and the BigScience Megatron-DeepSpeed fork
--   (--checkpoint-activations checkpoints every layer), PyTorch FSDP2
--   recipes and Hugging Face gradient checkpointing (every block), and
--   torchtitan, whose layer option checkpoints every n-th block, a set the
--   engine does not model.
-- The search offers partial only on a stack with it; a pinned partial on
-- another is sized with a warning.
-- Every row of every stack, one row per line (tests/unit/test_engine_stack.c
-- parses them and checks them against the engine's built-in table).
ALTER TABLE stacks
    ADD COLUMN partial_recompute boolean NOT NULL DEFAULT false;

UPDATE stacks AS s
SET partial_recompute = v.partial_recompute
FROM (VALUES
('megatron-lm-2021', true),
('megatron-core', true),
('nemo', true),
('pytorch-fsdp2-fa2', false),
('deepspeed-zero', false),
('megatron-deepspeed', false),
('torchtitan', false),
('hf-peft-bnb4', false)
) AS v (name, partial_recompute)
WHERE s.name = v.name;
