-- 0042_moe_dispatch.sql - what the expert all-to-all moves (session 22,
-- docs/MODEL.md §4 "Expert all-to-all"; engine/moe_dispatch.h):
--  stacks.ep_dispatcher: 'alltoall', a copy of a token per routed expert
--   (Megatron-Core's MoEAlltoAllTokenDispatcher, the recipes' default), or
--   'deepep', one per destination rank and, across nodes, one per
--   destination node over the NICs forwarded over NVLink
--   (deepseek-ai/DeepEP; DeepSeek-V3 report arXiv 2412.19437 §3.2.2).
--  stacks.ep_dispatch_fp8: tokens dispatched in FP8 with 1x128 scales, the
--   combine in 16 bits (DeepSeek-V3 report §3.3).
--  'alltoall' and false on every built-in profile (engine/stack.c cites
--  each); a run on DeepEP sets them in a PUT or per request.
--  The deepseek-v3 preset gains its router's group limit (HF
--  deepseek-ai/DeepSeek-V3 config.json: n_group 8, topk_group 4; the
--  report's node-limited routing, each token sent to at most 4 nodes),
--  which matters to DeepEP's per-node copies only.
-- Every row of every stack, one row per line (tests/unit/test_engine_stack.c
-- parses them and checks them against the engine's built-in table).
ALTER TABLE stacks
    ADD COLUMN ep_dispatcher text NOT NULL DEFAULT 'alltoall'
        CHECK (ep_dispatcher IN ('alltoall', 'deepep')),
    ADD COLUMN ep_dispatch_fp8 boolean NOT NULL DEFAULT false;

UPDATE stacks AS s
SET ep_dispatcher = v.ep_dispatcher, ep_dispatch_fp8 = v.ep_dispatch_fp8
FROM (VALUES
('megatron-lm-2021', 'alltoall', false),
('megatron-core', 'alltoall', false),
('nemo', 'alltoall', false),
('pytorch-fsdp2-fa2', 'alltoall', false),
('deepspeed-zero', 'alltoall', false),
('megatron-deepspeed', 'alltoall', false),
('torchtitan', 'alltoall', false),
('hf-peft-bnb4', 'alltoall', false)
) AS v (name, ep_dispatcher, ep_dispatch_fp8)
WHERE s.name = v.name;

UPDATE models
SET arch = jsonb_set(jsonb_set(arch, '{moe,router_groups}', '8'),
                     '{moe,router_group_top_k}', '4')
WHERE name = 'deepseek-v3' AND arch ? 'moe';
