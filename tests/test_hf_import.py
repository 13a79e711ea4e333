"""GPT-2 weights in the Hugging Face layout: from_hf_gpt2, to_hf_gpt2_state_dict, from_pretrained.

The reference is a GPT-2 forward written here in plain numpy straight from the HF layout (Conv1D:
y = x W + b with W stored (in, out)), the way transformers' GPT2Model computes it, so a missing or
extra transpose in the import shows up as wrong logits, not just a shape error. No network: the
"pretrained" directories are written by the tests from small random models.
"""
import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from models.gpt import GPT, GPTConfig
from tinygrad_like import Tensor

CFG = dict(vocab_size=29, block_size=12, n_layer=2, n_head=2, n_embd=16)


def hf_weights(seed=0, n_layer=2, C=16, V=29, P=12, hidden=None, lm_head=False):
    """A random GPT-2 state dict in the hub's layout: no prefix, Conv1D (in, out) weights, mask buffers."""
    rng = np.random.default_rng(seed)
    H = hidden or 4 * C
    r = lambda *shape: rng.normal(0, 0.3, shape).astype(np.float32)
    sd = {"wte.weight": r(V, C), "wpe.weight": r(P, C), "ln_f.weight": 1 + r(C), "ln_f.bias": r(C)}
    for i in range(n_layer):
        p = f"h.{i}."
        sd.update({p + "ln_1.weight": 1 + r(C), p + "ln_1.bias": r(C),
                   p + "attn.c_attn.weight": r(C, 3 * C), p + "attn.c_attn.bias": r(3 * C),
                   p + "attn.c_proj.weight": r(C, C), p + "attn.c_proj.bias": r(C),
                   p + "ln_2.weight": 1 + r(C), p + "ln_2.bias": r(C),
                   p + "mlp.c_fc.weight": r(C, H), p + "mlp.c_fc.bias": r(H),
                   p + "mlp.c_proj.weight": r(H, C), p + "mlp.c_proj.bias": r(C),
                   p + "attn.bias": np.tril(np.ones((P, P), np.float32))[None, None],   # the causal-mask buffer
                   p + "attn.masked_bias": np.array(-1e4, np.float32)})
    if lm_head:
        sd["lm_head.weight"] = r(V, C)
    return sd


def numpy_gpt2(sd, idx, n_head):
    """GPT-2's forward from the HF state dict, in float64 numpy, one sequence at a time."""
    g = lambda k: sd[k].astype(np.float64)

    def ln(x, p):
        xhat = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
        return xhat * g(p + ".weight") + g(p + ".bias")

    def conv1d(x, p):
        return x @ g(p + ".weight") + g(p + ".bias")

    def gelu_new(x):
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))

    n_layer = len({k.split(".")[1] for k in sd if k.startswith("h.")})
    out = []
    for seq in idx:
        T = len(seq)
        x = g("wte.weight")[seq] + g("wpe.weight")[:T]                  # (T, C)
        C = x.shape[1]
        hs = C // n_head
        for i in range(n_layer):
            p = f"h.{i}."
            q, k, v = np.split(conv1d(ln(x, p + "ln_1"), p + "attn.c_attn"), 3, axis=-1)
            heads = []
            for h in range(n_head):
                s = slice(h * hs, (h + 1) * hs)
                scores = q[:, s] @ k[:, s].T / np.sqrt(hs)
                scores[np.triu_indices(T, 1)] = -np.inf
                w = np.exp(scores - scores.max(-1, keepdims=True))
                heads.append((w / w.sum(-1, keepdims=True)) @ v[:, s])
            x = x + conv1d(np.concatenate(heads, -1), p + "attn.c_proj")
            x = x + conv1d(gelu_new(conv1d(ln(x, p + "ln_2"), p + "mlp.c_fc")), p + "mlp.c_proj")
        head = g("lm_head.weight") if "lm_head.weight" in sd else g("wte.weight")
        out.append(ln(x, "ln_f") @ head.T)
    return np.stack(out)


IDX = np.random.default_rng(5).integers(0, 29, (2, 9))


@pytest.mark.parametrize("prefix", ["", "transformer."])
def test_from_hf_matches_numpy_gpt2(prefix):
    sd = hf_weights()
    m = GPT.from_hf_gpt2({prefix + k: v for k, v in sd.items()}, GPTConfig(**CFG))
    np.testing.assert_allclose(m(IDX)[0].numpy(), numpy_gpt2(sd, IDX, n_head=2), rtol=1e-4, atol=1e-4)
    # the four Conv1D weights arrive transposed, everything else as it is
    np.testing.assert_array_equal(m.transformer.h[1].attn.c_attn.weight.numpy(), sd["h.1.attn.c_attn.weight"].T)
    np.testing.assert_array_equal(m.transformer.h[0].mlp.c_fc.weight.numpy(), sd["h.0.mlp.c_fc.weight"].T)
    np.testing.assert_array_equal(m.transformer.wpe.weight.numpy(), sd["wpe.weight"])


def test_untied_head_and_custom_hidden():
    sd = hf_weights(hidden=24, lm_head=True)
    m = GPT.from_hf_gpt2(sd, GPTConfig(**CFG, mlp_hidden=24, tie_weights=False))
    np.testing.assert_allclose(m(IDX)[0].numpy(), numpy_gpt2(sd, IDX, n_head=2), rtol=1e-4, atol=1e-4)


def test_tied_lm_head_key_is_accepted():
    sd = hf_weights()
    sd["lm_head.weight"] = sd["wte.weight"].copy()     # GPT2LMHeadModel.state_dict() lists it
    m = GPT.from_hf_gpt2(sd, GPTConfig(**CFG))
    assert m.lm_head.weight is m.transformer.wte.weight


@pytest.mark.parametrize("overrides", [{}, dict(tie_weights=False), dict(dtype="float64")])
def test_round_trip_gives_identical_logits(overrides):
    Tensor.manual_seed(0)
    a = GPT(GPTConfig(**CFG, **overrides))
    hf = a.to_hf_gpt2_state_dict()
    assert hf["transformer.h.0.attn.c_attn.weight"].shape == (16, 48)             # Conv1D (in, out)
    assert all(v.flags.c_contiguous for v in hf.values())
    assert "lm_head.weight" in hf and "transformer.wte.weight" in hf
    b = GPT.from_hf_gpt2(hf, GPTConfig(**CFG, **overrides))
    np.testing.assert_array_equal(a(IDX)[0].numpy(), b(IDX)[0].numpy())
    # and the HF layout is GPT-2's: the numpy reference reads it directly
    plain = {k.removeprefix("transformer."): v for k, v in hf.items()}
    np.testing.assert_allclose(a(IDX)[0].numpy(), numpy_gpt2(plain, IDX, n_head=2), rtol=1e-4, atol=1e-4)


def write_pretrained(path, sd, **config):
    hf_config = {"model_type": "gpt2", "n_layer": 2, "n_head": 2, "n_embd": 16, "vocab_size": 29,
                 "n_positions": 12, "n_ctx": 12, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
                 "n_inner": None, **config}
    (path / "config.json").write_text(json.dumps(hf_config))
    save_file(sd, str(path / "model.safetensors"))


def test_from_pretrained_directory(tmp_path):
    Tensor.manual_seed(1)
    a = GPT(GPTConfig(**CFG))
    hub = {k.removeprefix("transformer."): v for k, v in a.to_hf_gpt2_state_dict().items() if k != "lm_head.weight"}
    hub.update({f"h.{i}.attn.bias": np.tril(np.ones((12, 12), np.float32))[None, None] for i in range(2)})
    write_pretrained(tmp_path, hub)
    b = GPT.from_pretrained(tmp_path)
    assert b.config == GPTConfig(**CFG)
    np.testing.assert_array_equal(a(IDX)[0].numpy(), b(IDX)[0].numpy())
    assert GPT.from_pretrained(tmp_path, dtype="float64").transformer.wte.weight.dtype == np.float64


def test_from_pretrained_reads_n_inner_and_untied(tmp_path):
    sd = hf_weights(hidden=24, lm_head=True)
    write_pretrained(tmp_path, sd, n_inner=24, tie_word_embeddings=False)
    m = GPT.from_pretrained(tmp_path)
    assert m.config.mlp_hidden == 24 and not m.config.tie_weights
    np.testing.assert_allclose(m(IDX)[0].numpy(), numpy_gpt2(sd, IDX, n_head=2), rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- errors

def test_wrong_shape_names_the_key():
    sd = hf_weights()
    sd["h.1.attn.c_proj.weight"] = sd["h.1.attn.c_proj.weight"][:, :8]
    with pytest.raises(ValueError, match=r"'h.1.attn.c_proj.weight' has shape \(16, 8\)"):
        GPT.from_hf_gpt2(sd, GPTConfig(**CFG))


def test_untransposed_weight_is_caught():
    sd = hf_weights()
    sd["h.0.attn.c_attn.weight"] = np.ascontiguousarray(sd["h.0.attn.c_attn.weight"].T)  # a Linear layout by mistake
    with pytest.raises(ValueError, match="h.0.attn.c_attn.weight.*Conv1D transpose"):
        GPT.from_hf_gpt2(sd, GPTConfig(**CFG))


def test_unknown_and_missing_keys():
    sd = hf_weights()
    with pytest.raises(KeyError, match="h.2.ln_1.weight"):
        GPT.from_hf_gpt2({**sd, "h.2.ln_1.weight": sd["h.0.ln_1.weight"]}, GPTConfig(**CFG))
    del sd["ln_f.bias"]
    with pytest.raises(KeyError, match="lacks.*ln_f.bias"):
        GPT.from_hf_gpt2(sd, GPTConfig(**CFG))
    with pytest.raises(KeyError, match="lm_head.weight"):
        GPT.from_hf_gpt2(hf_weights(), GPTConfig(**CFG, tie_weights=False))


def test_from_pretrained_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="config.json"):
        GPT.from_pretrained(tmp_path)
    write_pretrained(tmp_path, hf_weights())
    cfg = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({k: v for k, v in cfg.items() if k != "n_positions"}))
    with pytest.raises(ValueError, match="n_positions"):
        GPT.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({**cfg, "activation_function": "silu"}))
    with pytest.raises(ValueError, match="activation_function 'silu'"):
        GPT.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({**cfg, "n_embd": 32}))
    with pytest.raises(ValueError, match=r"has shape .* but the model's 'transformer\.(h|wte|wpe|ln_f)"):
        GPT.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    data = (tmp_path / "model.safetensors").read_bytes()
    (tmp_path / "model.safetensors").write_bytes(data[: len(data) // 2])            # truncated download
    with pytest.raises(ValueError, match="cannot read"):
        GPT.from_pretrained(tmp_path)
