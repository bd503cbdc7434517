-- 0003_model_presets.sql - model presets served by GET /v1/models.
--
-- Each arch object is exactly the ModelArchitecture a sizing request may send
-- inline (engine/model.h, struct model_arch), with these keys only:
--   layers, hidden_size, heads, kv_heads, head_dim (only when it differs from
--   hidden_size/heads), ffn_hidden_size, vocab_size, gated_mlp,
--   tied_embeddings, learned_pos_emb (only written for GPT-style models, where
--   it is true; absent means false), max_seq_len,
--   moe {experts, top_k, expert_ffn_hidden_size, shared_experts, dense_layers}
--   (dense_layers = leading layers whose FFN is a dense one of
--   ffn_hidden_size), and
--   mla {q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
--   v_head_dim} (DeepSeek multi-head latent attention).
--
-- Values come from each model's published config.json (Hugging Face repo named in
-- `source`) or from the paper's architecture table. Biases and norm types can't
-- be written in arch. They change parameter counts by less than 0.01 %, and
-- `notes` names them. docs/CATALOG.md gives the parameter count that each row
-- implies (SIZING.md section 1) and compares it with the published count.

SET lock_timeout = '5s';

INSERT INTO models (name, display_name, family, arch, source, notes) VALUES

-- ---------------------------------------------------------------- Llama 2
-- Touvron et al. 2023 (arXiv:2307.09288) Table 1; HF meta-llama/Llama-2-*-hf config.json.
-- SwiGLU, RMSNorm, RoPE, untied output head, no biases.
('llama-2-7b', 'Llama 2 7B', 'llama2',
 '{"layers": 32, "hidden_size": 4096, "heads": 32, "kv_heads": 32,
   "ffn_hidden_size": 11008, "vocab_size": 32000, "gated_mlp": true,
   "tied_embeddings": false, "max_seq_len": 4096}',
 'HF meta-llama/Llama-2-7b-hf config.json; Touvron et al. 2023 (arXiv:2307.09288) Table 1',
 'MHA (kv_heads = heads). RMSNorm, RoPE, no biases. 6,738,417,664 params (HF safetensors total).'),

('llama-2-13b', 'Llama 2 13B', 'llama2',
 '{"layers": 40, "hidden_size": 5120, "heads": 40, "kv_heads": 40,
   "ffn_hidden_size": 13824, "vocab_size": 32000, "gated_mlp": true,
   "tied_embeddings": false, "max_seq_len": 4096}',
 'HF meta-llama/Llama-2-13b-hf config.json; Touvron et al. 2023 (arXiv:2307.09288) Table 1',
 'MHA. RMSNorm, RoPE, no biases. 13,015,866,880 params (HF safetensors total).'),

('llama-2-70b', 'Llama 2 70B', 'llama2',
 '{"layers": 80, "hidden_size": 8192, "heads": 64, "kv_heads": 8,
   "ffn_hidden_size": 28672, "vocab_size": 32000, "gated_mlp": true,
   "tied_embeddings": false, "max_seq_len": 4096}',
 'HF meta-llama/Llama-2-70b-hf config.json; Touvron et al. 2023 (arXiv:2307.09288) Table 1 (GQA for 34B/70B)',
 'GQA with 8 KV heads (KV cache 2*80*8*128*2 B = 327,680 B/token in fp16). 68,976,653,312 params (HF safetensors total).'),

-- ---------------------------------------------------------------- Llama 3 / 3.1
-- Llama Team 2024 "The Llama 3 Herd of Models" (arXiv:2407.21783) Table 3;
-- HF meta-llama/Meta-Llama-3-* and meta-llama/Llama-3.1-* config.json.
-- 3 and 3.1 share the shapes. 3.1 extends the context to 128K (rope scaling).
('llama-3-8b', 'Llama 3 8B', 'llama3',
 '{"layers": 32, "hidden_size": 4096, "heads": 32, "kv_heads": 8,
   "ffn_hidden_size": 14336, "vocab_size": 128256, "gated_mlp": true,
   "tied_embeddings": false, "max_seq_len": 8192}',
 'HF meta-llama/Meta-Llama-3-8B config.json; arXiv:2407.21783 Table 3',
 'GQA 8 KV heads, RoPE theta 500000, RMSNorm, no biases. Same shapes as Llama 3.1 8B: 8,030,261,248 params.'),

('llama-3-70b', 'Llama 3 70B', 'llama3',
 '{"layers": 80, "hidden_size": 8192, "heads": 64, "kv_heads": 8,
   "ffn_hidden_size": 28672, "vocab_size": 128256, "gated_mlp": true,
   "tied_embeddings": false, "max_seq_len": 8192}',
 'HF meta-llama/Meta-Llama-3-70B config.json; arXiv:2407.21783 Table 3',
 'GQA 8 KV heads. Same shapes as Llama 3.1 70B: 70,553,706,496 params.'),

('llama-3.1-8b', 'Llama 3.1 8B', 'llama3',
 '{"layers": 32, "hidden_size": 4096, "heads": 32, "kv_heads": 8,
   "ffn_hidden_size": 14336, "vocab_size": 128256, "gated_mlp": true,
   "tied_embeddings": false, "max_seq_len": 131072}',
 'HF meta-llama/Llama-3.1-8B config.json; arXiv:2407.21783 Table 3',
 '128K context via llama3 rope scaling. 8,030,261,248 params (HF safetensors total).'),

('llama-3.1-70b', 'Llama 3.1 70B', 'llama3',
 '{"layers": 80, "hidden_size": 8192, "heads": 64, "kv_heads": 8,
   "ffn_hidden_size": 28672, "vocab_size": 128256, "gated_mlp": true,
   "tied_embeddings": false, "max_seq_len": 131072}',
 'HF meta-llama/Llama-3.1-70B config.json; arXiv:2407.21783 Table 3',
 '128K context. 70,553,706,496 params (HF safetensors total).'),

('llama-3.1-405b', 'Llama 3.1 405B', 'llama3',
 '{"layers": 126, "hidden_size": 16384, "heads": 128, "kv_heads": 8,
   "ffn_hidden_size": 53248, "vocab_size": 128256, "gated_mlp": true,
   "tied_embeddings": false, "max_seq_len": 131072}',
 'HF meta-llama/Llama-3.1-405B config.json; arXiv:2407.21783 Table 3',
 '128K context. Trained in BF16 on up to 16K H100 (paper Sec 3.3). 405,853,388,800 params (HF safetensors total).'),

-- ---------------------------------------------------------------- Mistral / Mixtral
('mistral-7b', 'Mistral 7B (v0.1)', 'mistral',
 '{"layers": 32, "hidden_size": 4096, "heads": 32, "kv_heads": 8,
   "ffn_hidden_size": 14336, "vocab_size": 32000, "gated_mlp": true,
   "tied_embeddings": false, "max_seq_len": 32768}',
 'HF mistralai/Mistral-7B-v0.1 config.json; Jiang et al. 2023 (arXiv:2310.06825) Table 1',
 'Sliding-window attention (window 4096) in v0.1, so its KV cache is capped at 4096 tokens per layer. The engine sizes a full cache, which is conservative. v0.3 has vocab 32768. About 7.24e9 params.'),

('mixtral-8x7b', 'Mixtral 8x7B', 'mixtral',
 '{"layers": 32, "hidden_size": 4096, "heads": 32, "kv_heads": 8,
   "ffn_hidden_size": 14336, "vocab_size": 32000, "gated_mlp": true,
   "tied_embeddings": false, "max_seq_len": 32768,
   "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden_size": 14336,
           "shared_experts": 0, "dense_layers": 0}}',
 'HF mistralai/Mixtral-8x7B-v0.1 config.json; Jiang et al. 2024 (arXiv:2401.04088) Table 1',
 'Every layer is MoE (8 SwiGLU experts, top-2, router h*8). Paper: 47B total / 13B active. Count here: 46.70e9 / 12.88e9.'),

('mixtral-8x22b', 'Mixtral 8x22B', 'mixtral',
 '{"layers": 56, "hidden_size": 6144, "heads": 48, "kv_heads": 8,
   "ffn_hidden_size": 16384, "vocab_size": 32000, "gated_mlp": true,
   "tied_embeddings": false, "max_seq_len": 65536,
   "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden_size": 16384,
           "shared_experts": 0, "dense_layers": 0}}',
 'HF mistralai/Mixtral-8x22B-v0.1 config.json; Mistral AI release notes (141B total, 39B active)',
 'Every layer is MoE, top-2 of 8. The base v0.1 config has vocab 32000. The Instruct/v0.3 tokenizer has 32768, which adds 0.01e9 params. Count here: 140.6e9 / 39.15e9.'),

-- ---------------------------------------------------------------- DeepSeek-V3
('deepseek-v3', 'DeepSeek-V3 (671B MoE)', 'deepseek',
 '{"layers": 61, "hidden_size": 7168, "heads": 128, "kv_heads": 128,
   "head_dim": 128, "ffn_hidden_size": 18432, "vocab_size": 129280,
   "gated_mlp": true, "tied_embeddings": false, "max_seq_len": 163840,
   "moe": {"experts": 256, "top_k": 8, "expert_ffn_hidden_size": 2048,
           "shared_experts": 1, "dense_layers": 3},
   "mla": {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
           "qk_rope_head_dim": 64, "v_head_dim": 128}}',
 'HF deepseek-ai/DeepSeek-V3 config.json; DeepSeek-AI 2024 (arXiv:2412.19437) Sec 2 and 4.2',
 'MLA: the KV cache holds kv_lora_rank + qk_rope_head_dim = 576 values per token per layer, not 2*k*d. head_dim 128 is the value/no-rope head width. Query/key heads are 192 wide (128 + 64 rope). First 3 layers dense (FFN 18432), then 58 MoE layers: 256 routed experts of 2048, top-8, plus 1 shared, sigmoid router. 671e9 total / 37e9 active per the paper. The HF checkpoint (685e9) adds a 14e9 multi-token-prediction module that is left out here. Trained in FP8 on 2048 H800.'),

-- ---------------------------------------------------------------- Qwen2.5
('qwen2.5-7b', 'Qwen2.5 7B', 'qwen2.5',
 '{"layers": 28, "hidden_size": 3584, "heads": 28, "kv_heads": 4,
   "ffn_hidden_size": 18944, "vocab_size": 152064, "gated_mlp": true,
   "tied_embeddings": false, "max_seq_len": 131072}',
 'HF Qwen/Qwen2.5-7B config.json; Qwen Team 2024 (arXiv:2412.15115) Table 1',
 'GQA 28 Q / 4 KV heads, head 128. Bias on the Q, K and V projections (+4608 params per layer). Untied at 7B (0.5B-3B are tied). Native context 32K, 128K with YaRN. About 7.62e9 params.'),

('qwen2.5-72b', 'Qwen2.5 72B', 'qwen2.5',
 '{"layers": 80, "hidden_size": 8192, "heads": 64, "kv_heads": 8,
   "ffn_hidden_size": 29568, "vocab_size": 152064, "gated_mlp": true,
   "tied_embeddings": false, "max_seq_len": 131072}',
 'HF Qwen/Qwen2.5-72B config.json; Qwen Team 2024 (arXiv:2412.15115) Table 1',
 'GQA 64 Q / 8 KV heads. QKV bias. Native context 32K, 128K with YaRN. About 72.7e9 params.'),

-- ---------------------------------------------------------------- older open models in the validation data
('gpt-j-6b', 'GPT-J 6B', 'gpt-j',
 '{"layers": 28, "hidden_size": 4096, "heads": 16, "kv_heads": 16,
   "ffn_hidden_size": 16384, "vocab_size": 50400, "gated_mlp": false,
   "tied_embeddings": false, "max_seq_len": 2048}',
 'HF EleutherAI/gpt-j-6b config.json (n_embd 4096, n_layer 28, n_head 16, n_positions 2048, vocab 50400); Wang & Komatsuzaki 2021 (mesh-transformer-jax)',
 'Head dim 256. Rotary on 64 of each head''s dims, so no learned positions. Attention and MLP run in parallel off one LayerNorm. 4h GELU MLP with biases, no QKV/out biases, untied LM head with bias. About 6.05e9 params. TensorRT-LLM benchmarks use it (validation/inference_runs.csv).'),

('mpt-7b', 'MPT-7B', 'mpt',
 '{"layers": 32, "hidden_size": 4096, "heads": 32, "kv_heads": 32,
   "ffn_hidden_size": 16384, "vocab_size": 50432, "gated_mlp": false,
   "tied_embeddings": true, "max_seq_len": 2048}',
 'HF mosaicml/mpt-7b config.json (d_model 4096, n_layers 32, n_heads 32, expansion_ratio 4, vocab 50432); llm-foundry mpt-7b.yaml',
 'ALiBi (no position parameters), no biases, LayerNorm without bias, tied embeddings. The llm-foundry yaml that validation/inference_runs.csv quotes has vocab 50368, 0.26e6 fewer params. About 6.65e9 params. Databricks inference blog cases (validation data).'),

('falcon-180b', 'Falcon 180B', 'falcon',
 '{"layers": 80, "hidden_size": 14848, "heads": 232, "kv_heads": 8,
   "ffn_hidden_size": 59392, "vocab_size": 65024, "gated_mlp": false,
   "tied_embeddings": false, "max_seq_len": 2048}',
 'HF tiiuae/falcon-180B config.json, as restated in NVIDIA/TensorRT-LLM docs/source/performance.md benchmark config (80 layers, 232 heads, 8 KV heads, hidden 14848, vocab 65024, max_position 2048, bias false, parallel_attention, new_decoder_architecture, share_embedding_table false); Almazrouei et al. 2023 (arXiv:2311.16867)',
 'Head dim 64, GQA 8 KV groups, RoPE. Parallel attention+MLP with two LayerNorms (weight+bias) per layer. 4h GELU MLP, no linear biases, untied LM head. The count 179,522,565,120 matches the HF safetensors total exactly.'),

-- ---------------------------------------------------------------- GPT-3 and Megatron GPT configurations
('gpt-3-175b', 'GPT-3 175B', 'gpt3',
 '{"layers": 96, "hidden_size": 12288, "heads": 96, "kv_heads": 96,
   "ffn_hidden_size": 49152, "vocab_size": 50257, "gated_mlp": false,
   "tied_embeddings": true, "learned_pos_emb": true, "max_seq_len": 2048}',
 'Brown et al. 2020 (arXiv:2005.14165) Table 2.1 (n_layers 96, d_model 12288, n_heads 96, d_head 128, n_ctx 2048); GPT-2 BPE vocab 50257',
 'GPT-2 style: learned positions, tied embeddings, 4h GELU MLP, LayerNorm and biases everywhere (13h per layer, as in Narayanan Eq. 2). GPT-3 alternates dense and locally banded sparse attention, which is ignored here. About 174.6e9 params. The Megatron runs use vocab 51200 (preset gpt-175b).'),

-- Narayanan et al. 2021 (SC'21, arXiv:2104.04473) Table 1 and Korthikanti et al. 2022
-- (arXiv:2205.05198) Table 3: Megatron-LM GPT with 4h MLP, learned positions,
-- tied embeddings, vocab 51200, sequence 2048 (validation/training_runs.csv).
-- Parameter counts follow Eq. 2: P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)).
('gpt-1.7b', 'Megatron GPT 1.7B', 'megatron-gpt',
 '{"layers": 24, "hidden_size": 2304, "heads": 24, "kv_heads": 24,
   "ffn_hidden_size": 9216, "vocab_size": 51200, "gated_mlp": false,
   "tied_embeddings": true, "learned_pos_emb": true, "max_seq_len": 2048}',
 'Narayanan et al. 2021 (arXiv:2104.04473) Table 1 row 1',
 'Table 1: 1.7B, 32 A100 (t1 p1), 137 TFLOP/s per GPU (44 % of 312, recompute counted). Eq. 2 gives 1.65e9.'),

('gpt-3.6b', 'Megatron GPT 3.6B', 'megatron-gpt',
 '{"layers": 30, "hidden_size": 3072, "heads": 32, "kv_heads": 32,
   "ffn_hidden_size": 12288, "vocab_size": 51200, "gated_mlp": false,
   "tied_embeddings": true, "learned_pos_emb": true, "max_seq_len": 2048}',
 'Narayanan et al. 2021 (arXiv:2104.04473) Table 1 row 2',
 'Table 1: 64 A100 (t2 p1), 138 TFLOP/s per GPU. Eq. 2 gives 3.56e9.'),

('gpt-7.5b', 'Megatron GPT 7.5B', 'megatron-gpt',
 '{"layers": 36, "hidden_size": 4096, "heads": 32, "kv_heads": 32,
   "ffn_hidden_size": 16384, "vocab_size": 51200, "gated_mlp": false,
   "tied_embeddings": true, "learned_pos_emb": true, "max_seq_len": 2048}',
 'Narayanan et al. 2021 (arXiv:2104.04473) Table 1 row 3',
 'Table 1: 128 A100 (t4 p1), 142 TFLOP/s per GPU. Eq. 2 gives 7.47e9.'),

('gpt-18.4b', 'Megatron GPT 18.4B', 'megatron-gpt',
 '{"layers": 40, "hidden_size": 6144, "heads": 48, "kv_heads": 48,
   "ffn_hidden_size": 24576, "vocab_size": 51200, "gated_mlp": false,
   "tied_embeddings": true, "learned_pos_emb": true, "max_seq_len": 2048}',
 'Narayanan et al. 2021 (arXiv:2104.04473) Table 1 row 4',
 'Table 1: 256 A100 (t8 p1), 135 TFLOP/s per GPU. Eq. 2 gives 18.45e9.'),

('gpt-22b', 'Megatron GPT 22B', 'megatron-gpt',
 '{"layers": 48, "hidden_size": 6144, "heads": 64, "kv_heads": 64,
   "ffn_hidden_size": 24576, "vocab_size": 51200, "gated_mlp": false,
   "tied_embeddings": true, "learned_pos_emb": true, "max_seq_len": 2048}',
 'Korthikanti et al. 2022 (arXiv:2205.05198) Table 3',
 'Head dim 96. Korthikanti Table 3/5 on A100-80GB, t8 p1 (selective recompute + sequence parallel). Eq. 2 gives 22.1e9.'),

('gpt-39.1b', 'Megatron GPT 39.1B', 'megatron-gpt',
 '{"layers": 48, "hidden_size": 8192, "heads": 64, "kv_heads": 64,
   "ffn_hidden_size": 32768, "vocab_size": 51200, "gated_mlp": false,
   "tied_embeddings": true, "learned_pos_emb": true, "max_seq_len": 2048}',
 'Narayanan et al. 2021 (arXiv:2104.04473) Table 1 row 5',
 'Table 1: 512 A100 (t8 p2), 138 TFLOP/s per GPU. Eq. 2 gives 39.1e9.'),

('gpt-76.1b', 'Megatron GPT 76.1B', 'megatron-gpt',
 '{"layers": 60, "hidden_size": 10240, "heads": 80, "kv_heads": 80,
   "ffn_hidden_size": 40960, "vocab_size": 51200, "gated_mlp": false,
   "tied_embeddings": true, "learned_pos_emb": true, "max_seq_len": 2048}',
 'Narayanan et al. 2021 (arXiv:2104.04473) Table 1 row 6',
 'Table 1: 1024 A100 (t8 p4), 140 TFLOP/s per GPU. Eq. 2 gives 76.05e9.'),

('gpt-145.6b', 'Megatron GPT 145.6B', 'megatron-gpt',
 '{"layers": 80, "hidden_size": 12288, "heads": 96, "kv_heads": 96,
   "ffn_hidden_size": 49152, "vocab_size": 51200, "gated_mlp": false,
   "tied_embeddings": true, "learned_pos_emb": true, "max_seq_len": 2048}',
 'Narayanan et al. 2021 (arXiv:2104.04473) Table 1 row 7',
 'Table 1: 1536 A100 (t8 p8), 148 TFLOP/s per GPU. Eq. 2 gives 145.6e9.'),

('gpt-175b', 'Megatron GPT 175B (174.6B)', 'megatron-gpt',
 '{"layers": 96, "hidden_size": 12288, "heads": 96, "kv_heads": 96,
   "ffn_hidden_size": 49152, "vocab_size": 51200, "gated_mlp": false,
   "tied_embeddings": true, "learned_pos_emb": true, "max_seq_len": 2048}',
 'Narayanan et al. 2021 (arXiv:2104.04473) Table 2 (GPT-3 174.6B) and Sec 5.1; Korthikanti et al. 2022 (arXiv:2205.05198) Table 3 (175B)',
 'The GPT-3 shape with Megatron''s padded vocab 51200 (validation runs). Eq. 2 gives 174.6e9. gpt-3-175b has vocab 50257.'),

('gpt-310.1b', 'Megatron GPT 310.1B', 'megatron-gpt',
 '{"layers": 96, "hidden_size": 16384, "heads": 128, "kv_heads": 128,
   "ffn_hidden_size": 65536, "vocab_size": 51200, "gated_mlp": false,
   "tied_embeddings": true, "learned_pos_emb": true, "max_seq_len": 2048}',
 'Narayanan et al. 2021 (arXiv:2104.04473) Table 1 row 8',
 'Table 1: 1920 A100 (t8 p16), 155 TFLOP/s per GPU. Eq. 2 gives 310.1e9.'),

('gpt-529.6b', 'Megatron GPT 529.6B (MT-NLG 530B shape)', 'megatron-gpt',
 '{"layers": 105, "hidden_size": 20480, "heads": 128, "kv_heads": 128,
   "ffn_hidden_size": 81920, "vocab_size": 51200, "gated_mlp": false,
   "tied_embeddings": true, "learned_pos_emb": true, "max_seq_len": 2048}',
 'Narayanan et al. 2021 (arXiv:2104.04473) Table 1 row 9 and Table 2; Korthikanti et al. 2022 (arXiv:2205.05198) Table 3 (530B)',
 'Head dim 160. Same shape as the Korthikanti 530B / MT-NLG rows. Table 1: 2520 A100 (t8 p35), 163 TFLOP/s per GPU. Eq. 2 gives 529.6e9.'),

('gpt-1t', 'Megatron GPT 1T (1008B)', 'megatron-gpt',
 '{"layers": 128, "hidden_size": 25600, "heads": 160, "kv_heads": 160,
   "ffn_hidden_size": 102400, "vocab_size": 51200, "gated_mlp": false,
   "tied_embeddings": true, "learned_pos_emb": true, "max_seq_len": 2048}',
 'Narayanan et al. 2021 (arXiv:2104.04473) Table 1 row 10; Korthikanti et al. 2022 (arXiv:2205.05198) Table 3 (1T)',
 'Head dim 160. Same shape as the Korthikanti 1T rows. Table 1: 3072 A100 (t8 p64), 163 TFLOP/s per GPU, 52 % of peak. Eq. 2 gives 1008e9.');

-- Sanity: every preset has the keys the parser needs, integers where integers go,
-- and nothing outside the documented key set.
DO $$
DECLARE
    r record;
    k text;
    allowed text[] := ARRAY['layers', 'hidden_size', 'heads', 'kv_heads', 'head_dim',
                            'ffn_hidden_size', 'vocab_size', 'gated_mlp',
                            'tied_embeddings', 'learned_pos_emb', 'max_seq_len',
                            'moe', 'mla'];
    required text[] := ARRAY['layers', 'hidden_size', 'heads', 'kv_heads',
                             'ffn_hidden_size', 'vocab_size', 'gated_mlp',
                             'tied_embeddings', 'max_seq_len'];
BEGIN
    FOR r IN SELECT name, arch FROM models LOOP
        FOR k IN SELECT jsonb_object_keys(r.arch) LOOP
            IF NOT k = ANY (allowed) THEN
                RAISE EXCEPTION 'model %: unknown arch key %', r.name, k;
            END IF;
        END LOOP;
        FOREACH k IN ARRAY required LOOP
            IF NOT r.arch ? k THEN
                RAISE EXCEPTION 'model %: arch lacks %', r.name, k;
            END IF;
        END LOOP;
        IF jsonb_typeof(r.arch->'gated_mlp') <> 'boolean'
           OR jsonb_typeof(r.arch->'tied_embeddings') <> 'boolean'
           OR (r.arch ? 'learned_pos_emb'
               AND jsonb_typeof(r.arch->'learned_pos_emb') <> 'boolean') THEN
            RAISE EXCEPTION 'model %: boolean arch field is not a boolean', r.name;
        END IF;
        IF (r.arch->>'layers')::bigint < 1 OR (r.arch->>'hidden_size')::bigint < 1
           OR (r.arch->>'heads')::bigint < 1 OR (r.arch->>'kv_heads')::bigint < 1
           OR (r.arch->>'ffn_hidden_size')::bigint < 1
           OR (r.arch->>'vocab_size')::bigint < 1
           OR (r.arch->>'max_seq_len')::bigint < 1 THEN
            RAISE EXCEPTION 'model %: a size is not positive', r.name;
        END IF;
        -- GQA: query heads are a whole multiple of KV heads.
        IF (r.arch->>'heads')::bigint % (r.arch->>'kv_heads')::bigint <> 0 THEN
            RAISE EXCEPTION 'model %: heads not a multiple of kv_heads', r.name;
        END IF;
        -- head_dim only when it differs from hidden/heads; otherwise heads divide h.
        IF r.arch ? 'head_dim' THEN
            IF (r.arch->>'head_dim')::bigint * (r.arch->>'heads')::bigint
               = (r.arch->>'hidden_size')::bigint THEN
                RAISE EXCEPTION 'model %: head_dim given but equals hidden/heads', r.name;
            END IF;
        ELSIF (r.arch->>'hidden_size')::bigint % (r.arch->>'heads')::bigint <> 0 THEN
            RAISE EXCEPTION 'model %: heads do not divide hidden_size', r.name;
        END IF;
        IF r.arch ? 'moe' THEN
            IF (r.arch#>>'{moe,top_k}')::bigint < 1
               OR (r.arch#>>'{moe,top_k}')::bigint > (r.arch#>>'{moe,experts}')::bigint
               OR (r.arch#>>'{moe,expert_ffn_hidden_size}')::bigint < 1
               OR (r.arch#>>'{moe,shared_experts}')::bigint < 0
               OR (r.arch#>>'{moe,dense_layers}')::bigint < 0
               OR (r.arch#>>'{moe,dense_layers}')::bigint >= (r.arch->>'layers')::bigint THEN
                RAISE EXCEPTION 'model %: inconsistent moe block', r.name;
            END IF;
        END IF;
        IF r.arch ? 'mla' THEN
            IF (r.arch#>>'{mla,kv_lora_rank}')::bigint < 1
               OR (r.arch#>>'{mla,qk_nope_head_dim}')::bigint < 1
               OR (r.arch#>>'{mla,qk_rope_head_dim}')::bigint < 1
               OR (r.arch#>>'{mla,v_head_dim}')::bigint < 1
               OR (r.arch#>>'{mla,q_lora_rank}')::bigint < 0 THEN
                RAISE EXCEPTION 'model %: inconsistent mla block', r.name;
            END IF;
        END IF;
        -- learned_pos_emb is written only for GPT-style models, and only as true.
        IF r.arch ? 'learned_pos_emb' AND NOT (r.arch->>'learned_pos_emb')::boolean THEN
            RAISE EXCEPTION 'model %: write learned_pos_emb only when true', r.name;
        END IF;
    END LOOP;
    IF (SELECT count(*) FROM models) < 30 THEN
        RAISE EXCEPTION 'expected at least 30 model presets, found %',
            (SELECT count(*) FROM models);
    END IF;
END
$$;
