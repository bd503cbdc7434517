-- 0034_stack_pipeline_parallel.sql - a stack-profile field (review s14):
-- whether the stack runs a pipeline schedule, so the layout search offers
-- no pp > 1 on a stack that has none (engine/stack.c cites each value;
-- docs/MODEL.md §4a):
--  true: Megatron-LM and Megatron-Core (1F1B, interleaved), NeMo,
--   DeepSpeed (PipelineEngine), Megatron-DeepSpeed, torchtitan and FSDP2
--   trainers (torch.distributed.pipelining).
--  false: Hugging Face Transformers + PEFT: the Trainer and accelerate
--   train data-parallel (DDP, FSDP, DeepSpeed ZeRO), with no pipeline
--   schedule.
-- A pinned strategies.pp > 1 on a stack without it is sized as pinned,
-- with a warning. Every row of every stack, one row per line
-- (tests/unit/test_engine_stack.c parses them and checks them against
-- the engine's built-in table).
ALTER TABLE stacks
    ADD COLUMN pipeline_parallel boolean NOT NULL DEFAULT true;

UPDATE stacks AS s
SET pipeline_parallel = v.pipeline_parallel
FROM (VALUES
('megatron-lm-2021', true),
('megatron-core', true),
('nemo', true),
('pytorch-fsdp2-fa2', true),
('deepspeed-zero', true),
('megatron-deepspeed', true),
('torchtitan', true),
('hf-peft-bnb4', false)
) AS v (name, pipeline_parallel)
WHERE s.name = v.name;

UPDATE stacks
SET source = source || '; pipeline stages: none (the Trainer and accelerate have no pipeline schedule)'
WHERE name = 'hf-peft-bnb4';
