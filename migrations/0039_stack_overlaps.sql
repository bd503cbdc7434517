-- 0039_stack_overlaps.sql - two stack-profile fields for shares the time
-- model had fixed at 0.8 (review s19b F4; docs/MODEL.md §4a, engine/stack.c
-- cites each value):
--  cp_overlap: the share of the attention time that hides context
--   parallelism's ring sends of K and V. 0.8 for every profile: the
--   engine's overlap assumption (NCCL kernels take SMs and HBM bandwidth),
--   now shown in basis.stack and editable.
--  offload_overlap: the share of a micro-batch's time that hides the
--   weight transfers of offload optimizer+weights. 0.8 where the stack
--   prefetches them (DeepSpeed ZeRO-3 offload_param, FSDP's CPU offload);
--   0 for hf-peft-bnb4, whose Accelerate hooks copy each module's weights
--   when it runs (accelerate/hooks.py AlignDevicesHook.pre_forward).
-- Every row of every stack, one row per line (tests/unit/test_engine_stack.c
-- parses them and checks them against the engine's built-in table).
ALTER TABLE stacks
    ADD COLUMN cp_overlap double precision NOT NULL DEFAULT 0.8
        CHECK (cp_overlap >= 0 AND cp_overlap <= 1),
    ADD COLUMN offload_overlap double precision NOT NULL DEFAULT 0.8
        CHECK (offload_overlap >= 0 AND offload_overlap <= 1);

UPDATE stacks AS s
SET cp_overlap = v.cp_overlap,
    offload_overlap = v.offload_overlap
FROM (VALUES
('megatron-lm-2021', 0.8, 0.8),
('megatron-core', 0.8, 0.8),
('nemo', 0.8, 0.8),
('pytorch-fsdp2-fa2', 0.8, 0.8),
('deepspeed-zero', 0.8, 0.8),
('megatron-deepspeed', 0.8, 0.8),
('torchtitan', 0.8, 0.8),
('hf-peft-bnb4', 0.8, 0.0)
) AS v (name, cp_overlap, offload_overlap)
WHERE s.name = v.name;

UPDATE stacks
SET source = source || '; weight offload: Accelerate hooks, no prefetch (accelerate/hooks.py AlignDevicesHook.pre_forward)'
WHERE name = 'hf-peft-bnb4';
