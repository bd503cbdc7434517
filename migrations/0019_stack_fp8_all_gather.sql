-- 0019_stack_fp8_all_gather.sql - the stack profile's fp8_param_all_gather
-- (issue 13): under FSDP (ZeRO-3) the FP8 GEMMs' weights are cast to FP8
-- on each rank's shard and all-gathered at 1 B per parameter instead of 2
-- (torchao enable_fsdp_float8_all_gather; torchtitan docs/float8.md;
-- docs/MODEL.md §4a). The seed values equal the engine's built-in table
-- (engine/stack.c); tests/unit/test_engine_stack.c parses the rows below
-- and checks them against it, so keep one row per line in this format.
ALTER TABLE stacks
    ADD COLUMN fp8_param_all_gather boolean NOT NULL DEFAULT false;

UPDATE stacks AS s SET fp8_param_all_gather = v.fp8_param_all_gather
FROM (VALUES
('megatron-lm-2021', false),
('megatron-core', false),
('nemo', false),
('pytorch-fsdp2-fa2', false),
('deepspeed-zero', false),
('torchtitan', true),
('hf-peft-bnb4', false)
) AS v (name, fp8_param_all_gather)
WHERE s.name = v.name;

UPDATE stacks
SET source = source || '; torchtitan docs/float8.md (enable_fsdp_float8_all_gather)'
WHERE name = 'torchtitan';
