"""models.gpt.GPT: every variant against numpy, the parameter arithmetic, gradients, sampling, checkpoints.

Known answers come from math (ln V at init, softmax frequencies, nucleus sets worked by hand), from
models.arithmetic (counts derived from the config alone, never from an instantiated model), or from
numpy written independently of the engine (cross-entropy, a greedy decoding loop over plain forwards).
"""
import math

import numpy as np
import pytest

from models.arithmetic import count_params, named_shapes
from models.gpt import GPT, GPTConfig, filter_logits, sample_logits
from tinygrad_like import Tensor, gradcheck

V = 37  # a vocabulary size no layer width shares, so a swapped axis cannot go unnoticed

VARIANTS = {
    "dense": {},
    "gqa": dict(n_kv_head=2),
    "mqa": dict(n_kv_head=1),
    "rope": dict(pos="rope"),
    "swiglu": dict(mlp="swiglu", mlp_hidden=48),
    "relu": dict(mlp="relu"),
    "rmsnorm": dict(norm="rmsnorm"),
    "moe": dict(n_expert=4, top_k=2),
    "untied": dict(tie_weights=False),
    "no_bias": dict(bias=False),
    "post_norm": dict(prenorm=False),
    "llama_like": dict(n_kv_head=2, pos="rope", mlp="swiglu", norm="rmsnorm", bias=False, tie_weights=False),
    "mixtral_like": dict(n_kv_head=2, pos="rope", mlp="swiglu", norm="rmsnorm", bias=False, tie_weights=False,
                         n_expert=4, top_k=2),
}


def config(**overrides):
    return GPTConfig(**{**dict(vocab_size=V, block_size=16, n_layer=2, n_head=4, n_embd=32), **overrides})


def model(seed=0, **overrides):
    Tensor.manual_seed(seed)
    return GPT(config(**overrides))


def ids(B, T, seed=0, high=V):
    return np.random.default_rng(seed).integers(0, high, (B, T))


def np_cross_entropy(logits, targets, ignore=-1):
    """Mean of logsumexp(row) - row[target] over kept positions, in float64."""
    z = logits.reshape(-1, logits.shape[-1]).astype(np.float64)
    t = targets.reshape(-1)
    keep = t != ignore
    m = z.max(-1, keepdims=True)
    lse = (m + np.log(np.exp(z - m).sum(-1, keepdims=True)))[:, 0]
    return float(np.mean(lse[keep] - z[keep, t[keep]]))


# ---------------------------------------------------------------- forward, loss, parameters

@pytest.mark.parametrize("name", VARIANTS)
def test_forward_shapes_and_loss_is_numpy_cross_entropy(name):
    m = model(**VARIANTS[name])
    idx, targets = ids(3, 7), ids(3, 7, seed=1)
    logits, loss = m(idx, targets)
    assert logits.shape == (3, 7, V) and logits.dtype == np.float32
    assert m(idx)[1] is None
    expected = np_cross_entropy(logits.numpy(), targets)
    if m.config.n_expert:  # plus the load-balancing term, reported separately
        assert isinstance(m.last_aux_loss, float)
        expected += GPT.aux_loss_coef * m.last_aux_loss
    assert np.isfinite(loss.item())
    assert loss.item() == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("name", VARIANTS)
def test_parameters_match_the_arithmetic(name):
    cfg = config(**VARIANTS[name])
    m = GPT(cfg)
    assert m.num_params() == count_params(cfg)
    assert {n: p.shape for n, p in m.named_parameters()} == dict(named_shapes(cfg))


@pytest.mark.parametrize("name", ["dense", "untied", "rope", "moe"])
def test_loss_at_init_is_ln_vocab(name):
    # GPT-2 init: logits ~ N(0, small), so the prediction is nearly uniform and the loss ln V
    # (MoE adds 0.01 * top_k for a balanced router, well inside the tolerance)
    m = model(vocab_size=64, block_size=32, **VARIANTS[name])
    _, loss = m(ids(4, 32, high=64), ids(4, 32, seed=1, high=64))
    assert abs(loss.item() - math.log(64)) < 0.1


def test_idx_and_targets_as_tensors():
    m = model()
    idx, targets = ids(2, 5), ids(2, 5, seed=1)
    logits, loss = m(Tensor(idx), Tensor(targets))
    np.testing.assert_array_equal(logits.numpy(), m(idx)[0].numpy())
    assert loss.item() == pytest.approx(m(idx, targets)[1].item())
    assert m.generate(Tensor(idx), 2, temperature=0).shape == (2, 7)


def test_ignored_targets():
    m = model()
    idx, targets = ids(2, 9), ids(2, 9, seed=1)
    targets[0, :4] = -1
    targets[1, 7:] = -1
    logits, loss = m(idx, targets)
    keep = targets != -1
    z = logits.numpy()[keep].astype(np.float64)                    # (kept, V), written without the helper
    by_hand = np.mean(np.log(np.exp(z).sum(-1)) - z[np.arange(len(z)), targets[keep]])
    assert loss.item() == pytest.approx(by_hand, rel=1e-5)


def test_moe_loss_adds_the_scaled_aux_term():
    m = model(**VARIANTS["moe"])
    idx, targets = ids(2, 8), ids(2, 8, seed=1)
    logits, loss = m(idx, targets)
    aux = np.mean([block.aux_loss.item() for block in m.transformer.h])     # read from the layers
    assert m.last_aux_loss == pytest.approx(aux, rel=1e-6)
    assert loss.item() - np_cross_entropy(logits.numpy(), targets) == pytest.approx(0.01 * aux, rel=1e-4)
    loss.backward()
    assert np.abs(m.transformer.h[0].mlp.router.weight.grad.numpy()).sum() > 0


def test_tied_embeddings_are_one_tensor():
    m = model()
    assert m.lm_head.weight is m.transformer.wte.weight
    assert "lm_head.weight" not in m.state_dict()
    both = m.state_dict(with_tied=True)
    assert both["lm_head.weight"] is both["transformer.wte.weight"]
    untied = model(tie_weights=False)
    assert untied.lm_head.weight is not untied.transformer.wte.weight


def test_no_wpe_with_rope_and_float64_everywhere():
    m = model(pos="rope", dtype="float64")
    assert not hasattr(m.transformer, "wpe")
    assert all(p.dtype == np.float64 for p in m.parameters())
    assert m(ids(1, 4))[0].dtype == np.float64


def test_gpt2_init():
    m = model(n_layer=4, n_embd=64, vocab_size=500, block_size=64)
    sd = m.state_dict()
    assert sd["transformer.wte.weight"].std() == pytest.approx(0.02, rel=0.05)
    assert sd["transformer.h.0.mlp.c_proj.weight"].std() == pytest.approx(0.02 / math.sqrt(8), rel=0.05)
    assert (sd["transformer.h.3.attn.c_attn.bias"] == 0).all() and (sd["transformer.ln_f.weight"] == 1).all()


@pytest.mark.parametrize("name", ["dense", "rope", "moe", "post_norm"])
def test_causal(name):
    m = model(**VARIANTS[name])
    a = ids(2, 10)
    b = a.copy()
    b[:, 6] = (b[:, 6] + 1) % V                      # change token 6 only
    la, lb = m(a)[0].numpy(), m(b)[0].numpy()
    # positions before 6 cannot see it (to rounding: MoE batches its experts' tokens differently)
    np.testing.assert_allclose(la[:, :6], lb[:, :6], rtol=0, atol=1e-6)
    assert (np.abs(la[:, 6:] - lb[:, 6:]).max(axis=-1) > 1e-4).all()


def test_non_causal_config_sees_the_future():
    m = model(causal=False)
    a = ids(1, 6)
    b = a.copy()
    b[0, -1] = (b[0, -1] + 1) % V
    assert np.abs(m(a)[0].numpy()[0, 0] - m(b)[0].numpy()[0, 0]).max() > 1e-6


@pytest.mark.parametrize("name, n_params", [("dense", 16), ("llama_like", 9)])
def test_gradcheck_tiny_gpt_float64(name, n_params):
    # dense: wte, wpe, 12 in the block, ln_f weight and bias; llama_like: wte, ln_1, c_attn, c_proj,
    # ln_2, c_fc, c_proj, ln_f, lm_head (no wpe, no biases)
    overrides = {**VARIANTS[name], "mlp_hidden": 12, "n_kv_head": 1 if "n_kv_head" in VARIANTS[name] else None}
    cfg = GPTConfig(vocab_size=11, block_size=5, n_layer=1, n_head=2, n_embd=8, dtype="float64", **overrides)
    Tensor.manual_seed(3)
    m = GPT(cfg)
    rng = np.random.default_rng(0)
    for p in m.parameters():  # larger than the 0.02 init so that every path carries signal
        p.data[...] = rng.normal(0, 0.5, p.shape)
    idx, targets = ids(2, 5, high=11), ids(2, 5, seed=1, high=11)
    targets[0, 0] = -1
    params = m.parameters()
    assert len(params) == n_params and params[0] is m.transformer.wte.weight
    assert gradcheck(lambda *ps: m(idx, targets)[1], *params)


def test_dropout_only_in_training():
    m = model(dropout=0.2)
    x = ids(2, 8)
    m.train()
    assert not np.array_equal(m(x)[0].numpy(), m(x)[0].numpy())
    m.eval()
    np.testing.assert_array_equal(m(x)[0].numpy(), m(x)[0].numpy())


# ---------------------------------------------------------------- attention maps

@pytest.mark.parametrize("name", ["dense", "gqa", "rope"])
def test_attention_maps(name):
    m = model(**VARIANTS[name])
    maps = m.attention_maps(ids(2, 6))
    assert len(maps) == 2
    for a in maps:
        assert isinstance(a, np.ndarray) and a.shape == (2, 4, 6, 6)
        np.testing.assert_allclose(a.sum(-1), 1, atol=1e-6)
        assert (a[..., np.triu_indices(6, 1)[0], np.triu_indices(6, 1)[1]] == 0).all()  # no future


# ---------------------------------------------------------------- generation

def greedy_by_hand(m, prompt, n):
    """The reference decoder: a full forward of the last block_size tokens per step, argmax in numpy."""
    out = prompt.copy()
    for _ in range(n):
        logits = m(out[:, -m.config.block_size:])[0].numpy()[:, -1]
        out = np.concatenate([out, logits.argmax(-1)[:, None]], axis=1)
    return out


@pytest.mark.parametrize("name", ["dense", "gqa", "rope", "moe", "llama_like"])
def test_kv_cache_greedy_equals_no_cache_and_crops(name):
    m = model(block_size=8, **VARIANTS[name])
    prompt = ids(2, 5)
    expected = greedy_by_hand(m, prompt, 9)               # runs past block_size 8: crops
    with_cache = m.generate(prompt, 9, temperature=0, use_cache=True)
    without = m.generate(prompt, 9, temperature=0, use_cache=False)
    assert with_cache.shape == (2, 14)
    np.testing.assert_array_equal(with_cache, expected)
    np.testing.assert_array_equal(without, expected)


def test_kv_cache_reads_the_prompt_once_then_one_token_per_step():
    m = model(block_size=8)
    seen = []
    trunk = m._trunk
    m._trunk = lambda idx, **kw: seen.append((idx.shape[1], kw.get("start", 0))) or trunk(idx, **kw)
    m.generate(ids(2, 6), 5, temperature=0)
    # prefill 6 tokens, then 1 token at positions 6 and 7; the cache is then full (8 = block_size),
    # so each further step re-reads the last 8 tokens from position 0, as the uncached path crops
    assert seen == [(6, 0), (1, 6), (1, 7), (8, 0), (8, 0)]
    seen.clear()
    m.generate(ids(2, 6), 3, temperature=0, use_cache=False)
    assert seen == [(6, 0), (7, 0), (8, 0)]


def test_non_causal_model_generates_without_a_cache():
    m = model(causal=False)
    prompt = ids(1, 4)
    np.testing.assert_array_equal(m.generate(prompt, 5, temperature=0), greedy_by_hand(m, prompt, 5))


def test_sampling_with_seed_same_with_and_without_cache():
    m = model(block_size=8)
    prompt = ids(3, 3)
    a = m.generate(prompt, 12, temperature=1.5, seed=7, use_cache=True)
    b = m.generate(prompt, 12, temperature=1.5, seed=7, use_cache=False)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a[:, :3], prompt)
    assert len(np.unique(a[:, 3:])) > 3                   # it samples, not argmax
    np.testing.assert_array_equal(m.generate(prompt, 12, temperature=1.5, seed=7), a)  # reproducible


def test_library_rng_makes_generate_reproducible():
    m = model()
    Tensor.manual_seed(11)
    a = m.generate(ids(1, 2), 6)
    Tensor.manual_seed(11)
    np.testing.assert_array_equal(m.generate(ids(1, 2), 6), a)


def test_top_k_1_is_greedy_and_tiny_top_p_is_greedy():
    m = model()
    prompt = ids(2, 4)
    greedy = m.generate(prompt, 6, temperature=0)
    np.testing.assert_array_equal(m.generate(prompt, 6, top_k=1, seed=0), greedy)
    np.testing.assert_array_equal(m.generate(prompt, 6, top_p=1e-9, seed=0), greedy)


def test_long_prompt_is_cropped():
    m = model(block_size=8)
    prompt = ids(1, 12)
    out = m.generate(prompt, 3, temperature=0)
    np.testing.assert_array_equal(out, greedy_by_hand(m, prompt, 3))
    assert out.shape == (1, 15)


def test_generate_restores_mode_and_builds_no_graph():
    m = model(dropout=0.3)
    m.train()
    a = m.generate(ids(1, 3), 4, temperature=0)
    assert m.training and all(mod.training for _, mod in m.named_modules())
    np.testing.assert_array_equal(m.generate(ids(1, 3), 4, temperature=0), a)   # no dropout inside
    m.eval()
    m.generate(ids(1, 3), 2)
    assert not m.training
    assert all(p.grad is None for p in m.parameters())


def test_filter_logits_by_hand():
    logits = np.log(np.array([[0.1, 0.4, 0.2, 0.3]]))
    # top_k=2 keeps 0.4 and 0.3
    np.testing.assert_array_equal(np.isfinite(filter_logits(logits, top_k=2)), [[False, True, False, True]])
    # nucleus: sorted 0.4, 0.3, 0.2, 0.1; mass before each 0, 0.4, 0.7, 0.9
    np.testing.assert_array_equal(np.isfinite(filter_logits(logits, top_p=0.4)), [[False, True, False, False]])
    np.testing.assert_array_equal(np.isfinite(filter_logits(logits, top_p=0.5)), [[False, True, False, True]])
    np.testing.assert_array_equal(np.isfinite(filter_logits(logits, top_p=0.75)), [[False, True, True, True]])
    np.testing.assert_array_equal(np.isfinite(filter_logits(logits, top_p=1.0)), [[True] * 4])


def test_sample_frequencies_follow_softmax():
    p = np.array([0.1, 0.4, 0.2, 0.3])
    rows = np.tile(np.log(p), (40_000, 1))
    rng = np.random.default_rng(0)
    freq = np.bincount(sample_logits(rows, rng=rng), minlength=4) / 40_000
    np.testing.assert_allclose(freq, p, atol=0.01)
    # temperature 2: p^(1/2) renormalised
    hot = np.sqrt(p) / np.sqrt(p).sum()
    freq = np.bincount(sample_logits(rows, temperature=2.0, rng=rng), minlength=4) / 40_000
    np.testing.assert_allclose(freq, hot, atol=0.01)
    # top_k=2: 0.4 and 0.3 renormalised to 4/7 and 3/7
    freq = np.bincount(sample_logits(rows, top_k=2, rng=rng), minlength=4) / 40_000
    np.testing.assert_allclose(freq, [0, 4 / 7, 0, 3 / 7], atol=0.01)


def test_generate_zero_tokens_returns_the_prompt():
    prompt = ids(2, 3)
    np.testing.assert_array_equal(model().generate(prompt, 0), prompt)


# ---------------------------------------------------------------- checkpoints

@pytest.mark.parametrize("name", ["dense", "untied", "llama_like"])
def test_checkpoint_round_trip(tmp_path, name):
    from nn import state
    a, b = model(seed=1, **VARIANTS[name]), model(seed=2, **VARIANTS[name])
    x = ids(2, 6)
    assert not np.array_equal(a(x)[0].numpy(), b(x)[0].numpy())
    state.save(tmp_path / "ckpt.safetensors", a, step=5)
    assert state.load(tmp_path / "ckpt.safetensors", b)["step"] == 5
    np.testing.assert_array_equal(a(x)[0].numpy(), b(x)[0].numpy())
    if VARIANTS[name].get("tie_weights", True):
        assert b.lm_head.weight is b.transformer.wte.weight      # still tied after loading


def test_moe_checkpoint_after_a_training_forward(tmp_path):
    from nn import state
    a, b = model(seed=1, **VARIANTS["moe"]), model(seed=2, **VARIANTS["moe"])
    a(ids(2, 6), ids(2, 6, seed=1))[1].backward()
    assert a.num_params() == count_params(a.config)
    state.save(tmp_path / "ckpt.safetensors", a)
    state.load(tmp_path / "ckpt.safetensors", b)
    np.testing.assert_array_equal(a(ids(2, 6))[0].numpy(), b(ids(2, 6))[0].numpy())


def test_load_nanogpt_style_state_dict_with_both_tied_keys():
    a, b = model(seed=1), model(seed=2)
    sd = {k: v.copy() for k, v in a.state_dict(with_tied=True).items()}
    assert set(sd) == {n for n, _ in named_shapes(a.config)} | {"lm_head.weight"}
    b.load_state_dict(sd)
    np.testing.assert_array_equal(a(ids(1, 5))[0].numpy(), b(ids(1, 5))[0].numpy())
    sd["lm_head.weight"] = sd["lm_head.weight"] + 1
    with pytest.raises(ValueError, match="lm_head.weight"):
        b.load_state_dict(sd)


# ---------------------------------------------------------------- bad inputs

@pytest.mark.parametrize("idx, error, match", [
    (np.zeros((1, 17), dtype=int), ValueError, "longer than block_size 16"),
    (np.array([[1, 2, V]]), IndexError, f"token id {V} is outside the vocabulary"),
    (np.array([[1, -1, 2]]), IndexError, "token id -1"),
    (np.array([[1.0, 2.0]]), TypeError, "integer token ids"),
    (np.array([1, 2, 3]), ValueError, r"\(B, T\)"),
    (np.zeros((2, 0), dtype=int), ValueError, r"\(B, T\)"),
])
def test_bad_idx(idx, error, match):
    m = model()
    with pytest.raises(error, match=match):
        m(idx)
    if error is not ValueError or "block_size" not in match:  # generate crops long prompts instead
        with pytest.raises(error, match=match):
            m.generate(idx, 1)


@pytest.mark.parametrize("kwargs, match", [
    (dict(temperature=-1.0), "temperature"),
    (dict(top_k=0), "top_k"),
    (dict(top_p=0.0), "top_p"),
    (dict(top_p=1.5), "top_p"),
    (dict(max_new_tokens=-1), "max_new_tokens"),
    (dict(max_new_tokens=2.5), "max_new_tokens"),
])
def test_bad_generate_arguments(kwargs, match):
    kwargs = {"max_new_tokens": 2, **kwargs}
    with pytest.raises(ValueError, match=match):
        model().generate(ids(1, 2), **kwargs)


def test_bad_targets_and_config():
    m = model()
    with pytest.raises(ValueError, match="targets"):
        m(ids(2, 4), ids(2, 5))
    with pytest.raises(IndexError, match="outside"):
        m(ids(1, 4), np.array([[1, 2, 3, V]]))
    with pytest.raises(TypeError, match="GPTConfig"):
        GPT(dict(vocab_size=3))
