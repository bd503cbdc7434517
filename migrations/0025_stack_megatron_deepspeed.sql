-- 0025_stack_megatron_deepspeed.sql - a built-in stack profile (issue 13):
-- megatron-deepspeed, Megatron-LM's model code trained through DeepSpeed's
-- pipeline engine with ZeRO-1 (Megatron-DeepSpeed: MT-NLG, BLOOM and the
-- BigScience runs). It differs from deepspeed-zero in one value that the
-- engine's code path fixes, not a tuning:
--  dp_overlap 0: the pipeline's TrainSchedule issues ReduceGrads after the
--   last micro-batch and _exec_reduce_grads all-reduces the buffers then
--   (deepspeed/runtime/pipe/schedule.py, engine.py), whatever
--   zero_optimization.overlap_comm says (DeepSpeed warns: "Pipeline
--   parallelism does not support overlapped communication").
-- The rest is deepspeed-zero's: the ZeRO-1 all-gather after the step
-- (param_gather_overlap 0), Megatron's vocabulary-parallel cross-entropy
-- (4 B per logit), no TP overlap. docs/MODEL.md §4a.
-- The row equals the engine's built-in table (engine/stack.c);
-- tests/unit/test_engine_stack.c parses it and checks it against that
-- table, so keep it on one line in this column order. A catalog that
-- already holds a profile of this name keeps its own.
INSERT INTO stacks (name, attn_kernel, attn_fwd_efficiency, attn_bwd_efficiency,
    tp_comm_overlap, dp_overlap, param_gather_overlap, reduce_dtype, fp8_recipe,
    fp8_weight_cache, gemm_clock_derate, kernel_launch_us, kernels_per_layer,
    elementwise_bytes_factor, fp8_param_all_gather, selective_recompute,
    loss_logit_bytes, display_name, source) VALUES
('megatron-deepspeed', 'fa2', NULL, NULL, 0, 0, 0, 'grad', 'delayed', false, 1, 0, 0, 1, false, 'attention', 4, 'Megatron-DeepSpeed (DeepSpeed pipeline engine + ZeRO-1 + Megatron TP)', 'DeepSpeed runtime/pipe schedule.py and engine.py (gradients reduced after the last micro-batch); Smith et al. 2022 (MT-NLG); docs/MODEL.md §4a')
ON CONFLICT (name) DO NOTHING;
