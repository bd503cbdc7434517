-- 0041_stack_ep_overlap.sql - a stack-profile field (session 20): the share
-- of the expert all-to-all (MoE dispatch and combine) that hides behind
-- compute. The engine had exposed all of it on every stack, a fixed
-- assumption now shown in basis.stack and editable (docs/MODEL.md §4a,
-- engine/stack.c cites each value):
--  0 for every built-in profile: no stack of the catalog overlaps the
--   expert all-to-all by default. Megatron-Core's batch-level overlap is
--   opt-in (--overlap-moe-expert-parallel-comm with --delay-wgrad-compute,
--   Megatron-Core 0.14, megatron/core/transformer/moe/README.md), and
--   torchtitan's DeepEP dispatcher runs on the critical path.
--  A stack that hides it - DeepSeek-V3's DualPipe, "near-zero all-to-all
--   communication overhead" (arXiv 2412.19437 §3.2.1), or Megatron-Core
--   with the overlap on - sets up to 1.
-- Every row of every stack, one row per line (tests/unit/test_engine_stack.c
-- parses them and checks them against the engine's built-in table).
ALTER TABLE stacks
    ADD COLUMN ep_overlap double precision NOT NULL DEFAULT 0
        CHECK (ep_overlap >= 0 AND ep_overlap <= 1);

UPDATE stacks AS s
SET ep_overlap = v.ep_overlap
FROM (VALUES
('megatron-lm-2021', 0.0),
('megatron-core', 0.0),
('nemo', 0.0),
('pytorch-fsdp2-fa2', 0.0),
('deepspeed-zero', 0.0),
('megatron-deepspeed', 0.0),
('torchtitan', 0.0),
('hf-peft-bnb4', 0.0)
) AS v (name, ep_overlap)
WHERE s.name = v.name;
