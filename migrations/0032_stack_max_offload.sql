-- 0032_stack_max_offload.sql - a stack-profile field (issue 13): what the
-- stack moves to host memory, so the layout search offers no offload its
-- stack cannot run (engine/stack.c cites each value; docs/MODEL.md §4a):
--  none: Megatron-LM 2021-23 has no offload option.
--  optimizer: Megatron-Core and NeMo (--optimizer-cpu-offload).
--  optimizer+weights: DeepSpeed (ZeRO-Offload; offload_param at ZeRO-3),
--   PyTorch FSDP2 and torchtitan (CPUOffloadPolicy), Hugging Face through
--   accelerate. The weights only under ZeRO-3 (engine/training_search.c).
-- A pinned strategies.offload beyond it is sized as pinned, with a warning.
-- Every row of every stack, one row per line (tests/unit/test_engine_stack.c
-- parses them and checks them against the engine's built-in table).
ALTER TABLE stacks
    ADD COLUMN max_offload text NOT NULL DEFAULT 'optimizer+weights'
        CHECK (max_offload IN ('none', 'optimizer', 'optimizer+weights'));

UPDATE stacks AS s
SET max_offload = v.max_offload
FROM (VALUES
('megatron-lm-2021', 'none'),
('megatron-core', 'optimizer'),
('nemo', 'optimizer'),
('pytorch-fsdp2-fa2', 'optimizer+weights'),
('deepspeed-zero', 'optimizer+weights'),
('megatron-deepspeed', 'optimizer+weights'),
('torchtitan', 'optimizer+weights'),
('hf-peft-bnb4', 'optimizer+weights')
) AS v (name, max_offload)
WHERE s.name = v.name;

UPDATE stacks
SET source = source || '; offload: none (Megatron-LM 2021-23 has no offload option)'
WHERE name = 'megatron-lm-2021';
