-- 0027_stack_lora_fp32_adapters.sql - a stack-profile field (issue 13):
-- lora_fp32_adapters, whether a LoRA run keeps its adapters in fp32 under
-- autocast and casts each adapter's 16-bit input to them. PEFT does by
-- default: get_peft_model(..., autocast_adapter_dtype=True) upcasts bf16 /
-- fp16 adapter weights to fp32, and LoraLayer._cast_input_dtype casts the
-- input to the adapter's dtype before lora_A, which autocast casts back to
-- 16-bit for the GEMM and saves (peft src/peft/tuners/lora/layer.py,
-- tuners_utils.py). The engine charges the casts' bytes and the saved copy
-- (docs/MODEL.md §4a "LoRA adapters"). Every row of every stack, one
-- row per line (tests/unit/test_engine_stack.c parses them and checks them
-- against the engine's built-in table, engine/stack.c).
ALTER TABLE stacks
    ADD COLUMN lora_fp32_adapters boolean NOT NULL DEFAULT false;

UPDATE stacks AS s
SET lora_fp32_adapters = v.lora_fp32_adapters
FROM (VALUES
('megatron-lm-2021', false),
('megatron-core', false),
('nemo', false),
('pytorch-fsdp2-fa2', false),
('deepspeed-zero', false),
('megatron-deepspeed', false),
('torchtitan', false),
('hf-peft-bnb4', true)
) AS v (name, lora_fp32_adapters)
WHERE s.name = v.name;

UPDATE stacks
SET source = source || '; LoRA adapters: peft tuners/lora/layer.py (fp32 adapters, input cast)'
WHERE name = 'hf-peft-bnb4';
