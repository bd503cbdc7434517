-- 0036_stack_nf4_base_weights.sql - a stack-profile field (session 15):
-- whether the stack quantizes QLoRA's frozen base weights to 4-bit NF4, so
-- a QLoRA request on a stack that does not is warned about (engine/stack.c
-- cites each value; docs/MODEL.md §4a):
--  true: Hugging Face Transformers + PEFT (bitsandbytes Linear4bit), NeMo
--   (24.x NF4 wrappers of Megatron-Core's linear layers; without tensor
--   parallelism), FSDP2 trainers (torchtune's distributed QLoRA with
--   torchao's NF4Tensor), DeepSpeed (PEFT's QLoRA with ZeRO-3).
--  false: Megatron-LM, Megatron-Core, Megatron-DeepSpeed (no 4-bit base
--   layers), torchtitan (trains no adapters).
-- Every row of every stack, one row per line (tests/unit/test_engine_stack.c
-- parses them and checks them against the engine's built-in table).
ALTER TABLE stacks
    ADD COLUMN nf4_base_weights boolean NOT NULL DEFAULT false;

UPDATE stacks AS s
SET nf4_base_weights = v.nf4_base_weights
FROM (VALUES
('megatron-lm-2021', false),
('megatron-core', false),
('nemo', true),
('pytorch-fsdp2-fa2', true),
('deepspeed-zero', true),
('megatron-deepspeed', false),
('torchtitan', false),
('hf-peft-bnb4', true)
) AS v (name, nf4_base_weights)
WHERE s.name = v.name;

UPDATE stacks
SET source = source || '; QLoRA base weights: NF4 (nlp/modules/common/megatron/adapters/qlora.py, without tensor parallelism)'
WHERE name = 'nemo';
