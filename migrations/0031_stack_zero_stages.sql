-- 0031_stack_zero_stages.sql - two stack-profile fields (issue 13): the
-- ZeRO stages a stack can run, so the layout search offers no plan its
-- stack cannot run (engine/stack.c cites each value; docs/MODEL.md §4a):
--  max_zero_stage: the highest stage it shards to (0 replicated DDP,
--   1 optimizer state, 2 and gradients, 3 and weights).
--  max_zero_stage_pp: the highest it combines with pipeline stages (the
--   engine never pairs ZeRO-3 with PP, so at most 2).
-- Megatron-LM 2021-23: DDP or its distributed optimizer (ZeRO-1), with or
-- without PP. Megatron-Core and NeMo: Megatron FSDP up to ZeRO-3, the
-- distributed optimizer under PP. DeepSpeed: every stage, ZeRO-1 at most
-- under its pipeline engine (runtime/pipe/engine.py refuses ZeRO-2/3).
-- PyTorch FSDP2 and torchtitan: ZeRO-3, ZeRO-2 under PP (weights kept
-- after the forward). Hugging Face + PEFT: every stage through accelerate.
-- A pinned strategies.zero above them is sized as pinned, with a warning.
-- Every row of every stack, one row per line (tests/unit/test_engine_stack.c
-- parses them and checks them against the engine's built-in table).
ALTER TABLE stacks
    ADD COLUMN max_zero_stage smallint NOT NULL DEFAULT 3
        CHECK (max_zero_stage BETWEEN 0 AND 3),
    ADD COLUMN max_zero_stage_pp smallint NOT NULL DEFAULT 2
        CHECK (max_zero_stage_pp BETWEEN 0 AND 2);

UPDATE stacks AS s
SET max_zero_stage = v.max_zero_stage, max_zero_stage_pp = v.max_zero_stage_pp
FROM (VALUES
('megatron-lm-2021', 1, 1),
('megatron-core', 3, 1),
('nemo', 3, 1),
('pytorch-fsdp2-fa2', 3, 2),
('deepspeed-zero', 3, 1),
('megatron-deepspeed', 3, 1),
('torchtitan', 3, 2),
('hf-peft-bnb4', 3, 2)
) AS v (name, max_zero_stage, max_zero_stage_pp)
WHERE s.name = v.name;

UPDATE stacks
SET source = source || '; ZeRO stages: Megatron-LM shards up to its distributed optimizer (ZeRO-1)'
WHERE name = 'megatron-lm-2021';
UPDATE stacks
SET source = source || '; ZeRO stages: ZeRO-2/3 refused under the pipeline engine (runtime/pipe/engine.py)'
WHERE name IN ('deepspeed-zero', 'megatron-deepspeed');
