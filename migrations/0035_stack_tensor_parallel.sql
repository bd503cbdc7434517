-- 0035_stack_tensor_parallel.sql - a stack-profile field (session 15):
-- whether the stack splits layers over a tensor-parallel group, so the
-- layout search offers no tp > 1 on a stack that does not (engine/stack.c
-- cites each value; docs/MODEL.md §4a):
--  true: Megatron-LM and Megatron-Core (column/row-parallel layers), NeMo,
--   DeepSpeed and Megatron-DeepSpeed (Megatron's layers), torchtitan and
--   FSDP2 trainers (DTensor parallelize_module).
--  false: Hugging Face Transformers + PEFT with bitsandbytes 4-bit weights:
--   the multi-GPU QLoRA recipes PEFT documents shard data-parallel
--   (FSDP-QLoRA, DeepSpeed ZeRO-3), Transformers documents tp_plan for
--   multi-GPU inference, and tp_plan on bitsandbytes 4-bit weights was
--   reported failing (huggingface/transformers issue 38122).
-- A pinned strategies.tp > 1 on a stack without it is sized as pinned,
-- with a warning. Every row of every stack, one row per line
-- (tests/unit/test_engine_stack.c parses them and checks them against
-- the engine's built-in table).
ALTER TABLE stacks
    ADD COLUMN tensor_parallel boolean NOT NULL DEFAULT true;

UPDATE stacks AS s
SET tensor_parallel = v.tensor_parallel
FROM (VALUES
('megatron-lm-2021', true),
('megatron-core', true),
('nemo', true),
('pytorch-fsdp2-fa2', true),
('deepspeed-zero', true),
('megatron-deepspeed', true),
('torchtitan', true),
('hf-peft-bnb4', false)
) AS v (name, tensor_parallel)
WHERE s.name = v.name;

UPDATE stacks
SET source = source || '; tensor parallelism: none (PEFT''s multi-GPU QLoRA shards data-parallel: FSDP-QLoRA, DeepSpeed ZeRO-3)'
WHERE name = 'hf-peft-bnb4';
