"""GPTConfig and models/arithmetic.py against the textbook's figures.

Every expected number is either quoted from the seed chapters (chapter 18,
"The transformer block", and "Inside the transformer") or written out as
arithmetic here, never produced by the code under test.
"""
import json

import pytest

from models.arithmetic import (
    breakdown,
    count_active_params,
    count_params,
    flops_per_token,
    kv_cache_bytes,
    named_shapes,
)
from models.config import GPTConfig

D = 768  # GPT-2 small's width


def small(**overrides):
    """A tiny config for the cases that are not about a real model's size."""
    return GPTConfig(**{**dict(vocab_size=100, block_size=16, n_layer=2, n_head=4, n_embd=32), **overrides})


# ---------------------------------------------------------------- GPT-2 small

def test_gpt2_small_total():
    per_block = (4 * D * D + 4 * D) + (2 * D * 4 * D + 4 * D + D) + 2 * (2 * D)  # attn, mlp, ln_1 + ln_2
    by_hand = 50257 * D + 1024 * D + 12 * per_block + 2 * D
    assert by_hand == 124_439_808
    assert count_params(GPTConfig.gpt2_small()) == 124_439_808


@pytest.mark.parametrize("key, expected", [
    ("attn_weights", 4 * 768 * 768),     # chapter 18: "4 x 768^2 = 2,359,296 weights per block"
    ("attn_biases", 3_072),              # "plus 3,072 biases"
    ("mlp_weights", 2 * 768 * 3_072),    # "2 x 2,359,296 = 4,718,592"
    ("mlp_biases", 3_840),               # "plus 3,840 biases"
    ("norm", 2 * 2 * 768),               # ln_1 and ln_2, weight and bias each
])
def test_gpt2_small_per_block(key, expected):
    assert breakdown(GPTConfig.gpt2_small())["per_block"][key] == expected


def test_seed_per_block_figures_are_the_arithmetic():
    assert 4 * 768 ** 2 == 2_359_296 and 2 * 2_359_296 == 4_718_592
    assert 4 * 768 == 3_072 and 3_072 + 768 == 3_840


def test_biases_by_counting_two_configs():
    # dropping bias removes, per block, 3,072 + 3,840 Linear biases and two LayerNorm biases, plus ln_f's
    with_bias, without = count_params(GPTConfig.gpt2_small()), count_params(GPTConfig.gpt2_small(bias=False))
    assert with_bias - without == 12 * (3_072 + 3_840 + 2 * D) + D


def test_mlp_is_two_thirds_of_a_block():
    b = breakdown(GPTConfig.gpt2_small())["per_block"]
    assert b["mlp_weights"] / (b["mlp_weights"] + b["attn_weights"]) == pytest.approx(2 / 3)


def test_twelve_n_d_squared_shortcut():
    # chapter 18: "each block has about 12 d^2 weights, so a model has roughly 12 N d^2 plus its embedding table"
    non_embedding = count_params(GPTConfig.gpt2_small()) - 50257 * D - 1024 * D
    assert breakdown(GPTConfig.gpt2_small())["non_embedding"] == non_embedding
    assert abs(12 * 12 * D * D - non_embedding) / non_embedding < 0.02


def test_nanogpt_names_and_shapes():
    shapes = dict(named_shapes(GPTConfig.gpt2_small()))
    assert shapes["transformer.wte.weight"] == (50257, D)
    assert shapes["transformer.wpe.weight"] == (1024, D)
    assert shapes["transformer.h.11.attn.c_attn.weight"] == (3 * D, D)
    assert shapes["transformer.h.0.mlp.c_fc.weight"] == (4 * D, D)
    assert shapes["transformer.h.0.mlp.c_proj.weight"] == (D, 4 * D)
    assert shapes["transformer.ln_f.bias"] == (D,)
    assert "lm_head.weight" not in shapes  # tied to wte
    assert len(shapes) == 2 + 12 * 12 + 2  # 12 tensors per block


# ---------------------------------------------------------------- bge-small

def test_bge_small_about_33_million():
    d, h = 384, 1536
    per_block = (4 * d * d + 4 * d) + (2 * d * h + h + d) + 2 * (2 * d)
    by_hand = 30522 * d + 512 * d + 12 * per_block + 2 * d
    n = count_params(GPTConfig.bge_small())
    assert n == by_hand
    # The real BAAI/bge-small-en-v1.5 (a BERT) also has token-type embeddings (2 x 384),
    # a LayerNorm on the embeddings (2 x 384, in place of our ln_f, which BERT lacks) and a
    # pooler (384 x 384 + 384): by the same counting, 33,211,392 + 768 + 147,840 = 33,360,000.
    assert 32_500_000 < n < 34_000_000


def test_bge_small_shape():
    c = GPTConfig.bge_small()
    assert (c.head_dim, c.hidden, c.prenorm, c.causal) == (32, 4 * 384, False, False)


# ---------------------------------------------------------------- KV cache

def test_kv_cache_chapter_18():
    c = GPTConfig(vocab_size=32000, block_size=8192, n_layer=32, n_head=32, n_embd=4096)
    assert 2 * 32 * 8192 * 4096 * 2 == 4_294_967_296  # "about 4.3 GB, for one conversation"
    assert kv_cache_bytes(c, 8192) == 4_294_967_296
    assert kv_cache_bytes(c, 8192, bytes_per_number=4, batch=3) == 4_294_967_296 * 2 * 3


def test_kv_cache_grouped_query_attention():
    gqa = GPTConfig(vocab_size=32000, block_size=8192, n_layer=32, n_head=32, n_embd=4096, n_kv_head=8)
    assert kv_cache_bytes(gqa, 8192) == 4_294_967_296 // 4  # 32 query heads share 8 KV heads


def test_kv_cache_rejects_nonsense():
    with pytest.raises(ValueError, match="n_tokens"):
        kv_cache_bytes(small(), 0)


# ---------------------------------------------------------------- Mixtral

def test_mixtral_totals():
    d, h, L, v = 4096, 14336, 32, 32000
    attn = (32 + 2 * 8) * 128 * d + d * d   # q, k, v with 8 KV heads of 128, and c_proj
    expert = 2 * h * d + h * d              # SwiGLU: gate and up, then down
    shared = attn + 8 * d + 2 * d           # attention, router, two RMSNorms
    outside = 2 * v * d + d                 # wte, untied lm_head, ln_f
    assert L * (shared + 8 * expert) + outside == 46_702_792_704
    assert L * (shared + 2 * expert) + outside == 12_879_925_248
    m = GPTConfig.mixtral_8x7b()
    assert count_params(m) == 46_702_792_704
    assert count_active_params(m) == 12_879_925_248


def test_mixtral_matches_the_chapter():
    # "the model holds 47 billion parameters while using about 13 billion on any given token"
    m = GPTConfig.mixtral_8x7b()
    assert round(count_params(m) / 1e9) == 47 and round(count_active_params(m) / 1e9) == 13
    assert 8 * 7 != 47  # "the arithmetic in the name does not work"


def test_mixtral_layout():
    shapes = dict(named_shapes(GPTConfig.mixtral_8x7b()))
    assert shapes["transformer.h.0.attn.c_attn.weight"] == ((32 + 2 * 8) * 128, 4096)
    assert shapes["transformer.h.0.mlp.router.weight"] == (8, 4096)
    assert shapes["transformer.h.31.mlp.experts.7.c_fc.weight"] == (2 * 14336, 4096)
    assert shapes["lm_head.weight"] == (32000, 4096)
    assert "transformer.wpe.weight" not in shapes and "transformer.ln_f.bias" not in shapes


@pytest.mark.parametrize("config", [
    GPTConfig.gpt2_small(), GPTConfig.bge_small(), small(), small(norm="rmsnorm", mlp="swiglu", pos="rope"),
    small(n_kv_head=2, bias=False, tie_weights=False),
], ids=["gpt2", "bge", "small", "small-llama-ish", "small-gqa"])
def test_active_equals_total_for_dense_models(config):
    assert count_active_params(config) == count_params(config)


def test_moe_with_all_experts_active_is_total():
    c = small(n_expert=4, top_k=4)
    assert count_active_params(c) == count_params(c)


# ---------------------------------------------------------------- FLOPs

def test_flops_gpt2_small():
    n = 12 * (4 * D * D + 4 * D + 2 * D * 4 * D + 4 * D + D + 4 * D) + 2 * D  # blocks + ln_f
    expected = 6 * n + 6 * 12 * 1024 * D
    assert flops_per_token(GPTConfig.gpt2_small(), n_ctx=1024) == expected
    assert flops_per_token(GPTConfig.gpt2_small()) == expected  # n_ctx defaults to block_size = 1024


def test_flops_mixtral_counts_only_active_params():
    n = 12_879_925_248 - 2 * 32000 * 4096  # active minus wte and the untied lm_head
    assert flops_per_token(GPTConfig.mixtral_8x7b(), n_ctx=4096) == 6 * n + 6 * 32 * 4096 * 4096


def test_flops_attention_term_grows_with_context():
    c = GPTConfig.gpt2_small()
    assert flops_per_token(c, 2048) - flops_per_token(c, 1024) == 6 * 12 * 1024 * D


# ---------------------------------------------------------------- config

def test_derived_sizes():
    assert (small().head_dim, small().kv_heads, small().hidden) == (8, 4, 128)
    assert (small(n_kv_head=2).kv_heads, small(mlp_hidden=50).hidden) == (2, 50)


def test_size_fields_are_required():
    with pytest.raises(TypeError):
        GPTConfig()


@pytest.mark.parametrize("overrides, message", [
    (dict(n_embd=30), "n_embd=30 is not divisible by n_head=4"),
    (dict(n_kv_head=3), "n_head=4 is not divisible by n_kv_head=3"),
    (dict(n_expert=2, top_k=3), "top_k=3 is larger than n_expert=2"),
    (dict(norm="batchnorm"), "norm must be one of .* got 'batchnorm'"),
    (dict(mlp="tanh"), "mlp must be one of .* got 'tanh'"),
    (dict(pos="alibi"), "pos must be one of .* got 'alibi'"),
    (dict(dtype="float16"), "dtype must be one of .* got 'float16'"),
    (dict(vocab_size=0), "vocab_size must be an integer >= 1, got 0"),
    (dict(n_layer=-1), "n_layer must be an integer >= 1, got -1"),
    (dict(n_head=2.0), "n_head must be an integer >= 1, got 2.0"),
    (dict(mlp_hidden=0), "mlp_hidden must be an integer >= 1, got 0"),
    (dict(n_expert=-1), "n_expert must be an integer >= 0, got -1"),
    (dict(dropout=1.0), r"dropout must be a number in \[0, 1\), got 1.0"),
    (dict(bias="yes"), "bias must be True or False, got 'yes'"),
    (dict(n_embd=36, n_head=12, pos="rope"), "head_dim must be even, got head_dim=3"),
])
def test_validation(overrides, message):
    with pytest.raises(ValueError, match=message):
        small(**overrides)


@pytest.mark.parametrize("config", [GPTConfig.gpt2_small(), GPTConfig.bge_small(), GPTConfig.mixtral_8x7b()],
                         ids=["gpt2", "bge", "mixtral"])
def test_dict_round_trip_through_json(config):
    assert GPTConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config


def test_from_dict_rejects_unknown_and_missing_keys():
    with pytest.raises(ValueError, match=r"unknown GPTConfig field\(s\) \['n_heads'\]"):
        GPTConfig.from_dict({**small().to_dict(), "n_heads": 4})
    d = small().to_dict()
    del d["n_embd"]
    with pytest.raises(ValueError, match=r"missing required field\(s\) \['n_embd'\]"):
        GPTConfig.from_dict(d)


def test_presets_take_overrides():
    assert GPTConfig.gpt2_small(dropout=0.1).dropout == 0.1
    assert GPTConfig.gpt2_small(block_size=256).block_size == 256
