"""models/hf_layout.py: each family's table read both ways gives back the same arrays, and the rows
split and transpose as written by hand here (the comparison with transformers itself is in
tests/test_hf_export.py and tests/test_hf_import.py)."""
import numpy as np
import pytest

from models import hf_layout
from models.gpt import GPT, GPTConfig

BASE = dict(vocab_size=11, block_size=8, n_layer=2, n_head=4, n_embd=16)
FAMILIES = [
    ("gpt2", dict(tie_weights=False)),
    ("llama", dict(pos="rope", norm="rmsnorm", mlp="swiglu", n_kv_head=2, bias=True, mlp_hidden=24)),
    ("mixtral", dict(pos="rope", norm="rmsnorm", mlp="swiglu", n_kv_head=1, bias=False, n_expert=3, top_k=2)),
]


@pytest.mark.parametrize("family, overrides", FAMILIES)
def test_there_and_back_gives_the_same_arrays(family, overrides):
    model = GPT(GPTConfig(**BASE, **overrides))
    ours = model.state_dict()
    theirs = hf_layout.to_theirs(hf_layout.TABLES[family], ours, model.config)
    back, missing = hf_layout.to_ours(hf_layout.TABLES[family], dict(theirs), list(ours))
    assert missing == [] and back.keys() == ours.keys()
    for name in ours:
        np.testing.assert_array_equal(back[name], ours[name], err_msg=name)


def test_llama_rows_split_as_q_k_v_and_gate_up():
    c = GPTConfig(**BASE, **FAMILIES[1][1])                  # 4 query heads, 2 kv heads of 4 dims; hidden 24
    qkv = np.arange((4 + 2 + 2) * 4 * 16).reshape(32, 16)
    fc = np.arange(2 * 24 * 16).reshape(48, 16)
    theirs = hf_layout.to_theirs(hf_layout.LLAMA, {"transformer.h.1.attn.c_attn.weight": qkv,
                                                   "transformer.h.1.mlp.c_fc.weight": fc}, c)
    a, m = "model.layers.1.self_attn.", "model.layers.1.mlp."
    np.testing.assert_array_equal(theirs[a + "q_proj.weight"], qkv[:16])
    np.testing.assert_array_equal(theirs[a + "k_proj.weight"], qkv[16:24])
    np.testing.assert_array_equal(theirs[a + "v_proj.weight"], qkv[24:])
    np.testing.assert_array_equal(theirs[m + "gate_proj.weight"], fc[:24])
    np.testing.assert_array_equal(theirs[m + "up_proj.weight"], fc[24:])


def test_gpt2_transposes_the_four_conv1d_weights_only():
    c = GPTConfig(**BASE)
    w = np.arange(48 * 16).reshape(48, 16)
    theirs = hf_layout.to_theirs(hf_layout.GPT2, {"transformer.h.0.attn.c_attn.weight": w,
                                                  "transformer.h.0.attn.c_attn.bias": w[:, 0]}, c)
    np.testing.assert_array_equal(theirs["transformer.h.0.attn.c_attn.weight"], w.T)
    np.testing.assert_array_equal(theirs["transformer.h.0.attn.c_attn.bias"], w[:, 0])


def test_what_is_missing_is_named_and_what_is_left_stays():
    weights = {"model.layers.0.self_attn.q_proj.weight": np.ones(1), "model.extra": np.ones(1)}
    out, missing = hf_layout.to_ours(hf_layout.LLAMA, weights, ["transformer.h.0.attn.c_attn.weight"])
    assert out == {} and missing == ["model.layers.0.self_attn.k_proj.weight", "model.layers.0.self_attn.v_proj.weight"]
    assert sorted(weights) == ["model.extra", "model.layers.0.self_attn.q_proj.weight"]
    with pytest.raises(KeyError, match="transformer.h.0.attn.rope"):
        hf_layout.row_of(hf_layout.LLAMA, "transformer.h.0.attn.rope")
