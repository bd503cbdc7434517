-- 0033_stack_expert_parallel.sql - a stack-profile field (issue 13):
-- whether the stack shards a mixture-of-experts model's experts over an
-- expert-parallel group, so the layout search offers no ep > 1 on a stack
-- that cannot run it (engine/stack.c cites each value; docs/MODEL.md §4a):
--  true: Megatron-Core and NeMo (--expert-model-parallel-size), DeepSpeed
--   and Megatron-DeepSpeed (DeepSpeed-MoE's ep_size), torchtitan
--   (expert_parallel_degree), FSDP2 trainers (NeMo Automodel's ep_size).
--  false: Megatron-LM 2021-23 (no MoE layers; they came with
--   Megatron-Core) and Hugging Face Transformers + PEFT, which runs every
--   expert of a block on each rank (modeling_mixtral.py).
-- A pinned strategies.ep > 1 on a stack without it is sized as pinned,
-- with a warning. Every row of every stack, one row per line
-- (tests/unit/test_engine_stack.c parses them and checks them against
-- the engine's built-in table).
ALTER TABLE stacks
    ADD COLUMN expert_parallel boolean NOT NULL DEFAULT true;

UPDATE stacks AS s
SET expert_parallel = v.expert_parallel
FROM (VALUES
('megatron-lm-2021', false),
('megatron-core', true),
('nemo', true),
('pytorch-fsdp2-fa2', true),
('deepspeed-zero', true),
('megatron-deepspeed', true),
('torchtitan', true),
('hf-peft-bnb4', false)
) AS v (name, expert_parallel)
WHERE s.name = v.name;

UPDATE stacks
SET source = source || '; expert parallelism: none (Megatron-LM 2021-23 has no MoE layers)'
WHERE name = 'megatron-lm-2021';

UPDATE stacks
SET source = source || '; expert parallelism: none (Transformers runs every expert on each rank)'
WHERE name = 'hf-peft-bnb4';
