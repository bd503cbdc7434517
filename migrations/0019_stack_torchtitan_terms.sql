-- 0019_stack_torchtitan_terms.sql - two stack-profile fields (issue 13),
-- both set for torchtitan (docs/MODEL.md §4a):
--  fp8_param_all_gather: under FSDP (ZeRO-3) the FP8 GEMMs' weights are
--   cast to FP8 on each rank's shard and all-gathered at 1 B per parameter
--   instead of 2 (torchao enable_fsdp_float8_all_gather; torchtitan
--   docs/float8.md);
--  selective_recompute: what recompute "selective" recomputes: 'attention'
--   (Megatron, Korthikanti et al. 2022) or 'op' (torchtitan's per-op
--   selective activation checkpointing: every op but attention and every
--   second matmul).
-- The seed values equal the engine's built-in table (engine/stack.c);
-- tests/unit/test_engine_stack.c parses the rows below and checks them
-- against it, so keep one row per line in this format.
ALTER TABLE stacks
    ADD COLUMN fp8_param_all_gather boolean NOT NULL DEFAULT false,
    ADD COLUMN selective_recompute text NOT NULL DEFAULT 'attention'
        CHECK (selective_recompute IN ('attention', 'op'));

UPDATE stacks AS s
SET fp8_param_all_gather = v.fp8_param_all_gather,
    selective_recompute = v.selective_recompute
FROM (VALUES
('megatron-lm-2021', false, 'attention'),
('megatron-core', false, 'attention'),
('nemo', false, 'attention'),
('pytorch-fsdp2-fa2', false, 'attention'),
('deepspeed-zero', false, 'attention'),
('torchtitan', true, 'op'),
('hf-peft-bnb4', false, 'attention')
) AS v (name, fp8_param_all_gather, selective_recompute)
WHERE s.name = v.name;

UPDATE stacks
SET source = source || '; torchtitan docs/float8.md (enable_fsdp_float8_all_gather), parallelize_llama.py (per-op SAC)'
WHERE name = 'torchtitan';
