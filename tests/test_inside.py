"""Hooks on Module, GPT.run_with_cache / run_with_hooks (models/inside.py) and the logit lens."""
import numpy as np
import pytest

from models.gpt import GPT, GPTConfig
from models.lens import logit_lens
from nn import Linear, Module
from tinygrad_like import Tensor

SHAPES = {
    "gpt2": dict(),
    "llama": dict(pos="rope", norm="rmsnorm", mlp="swiglu", n_kv_head=2, bias=False, tie_weights=False),
    "mixtral": dict(pos="rope", norm="rmsnorm", mlp="swiglu", n_kv_head=1, bias=False, n_expert=4, top_k=2),
    "attn_only": dict(attn_only=True),
}


def make(shape="gpt2", dtype="float32", seed=0):
    Tensor.manual_seed(seed)
    return GPT(GPTConfig(vocab_size=40, block_size=16, n_layer=3, n_head=4, n_embd=32, dtype=dtype, **SHAPES[shape]))


IDX = np.random.default_rng(1).integers(0, 40, (2, 11))


# ---------------------------------------------------------------- Module hooks

class Double(Module):
    def forward(self, x, scale=1.0):
        return x * 2 * scale


def test_forward_hook_reads_replaces_and_is_removable():
    m, seen = Double(), []
    h1 = m.register_forward_hook(lambda mod, args, out: seen.append((mod, args[0].item(), out.item())))
    h2 = m.register_forward_hook(lambda mod, args, out: out + 1)
    assert m(Tensor(3.0)).item() == 7.0 and seen == [(m, 3.0, 6.0)]
    h2.remove()
    h2.remove()  # a second remove does nothing
    assert m(Tensor(3.0)).item() == 6.0
    h1.remove()
    assert m(Tensor(1.0)).item() == 2.0 and len(seen) == 2


def test_hooks_run_in_order_each_seeing_the_previous_output():
    m = Double()
    m.register_forward_hook(lambda mod, args, out: out * 10)
    m.register_forward_hook(lambda mod, args, out: out + 1)
    assert m(Tensor(1.0)).item() == 21.0


def test_pre_hook_replaces_args_tuple_or_single_and_keeps_kwargs():
    m = Double()
    with m.register_forward_pre_hook(lambda mod, args: Tensor(5.0)):
        assert m(Tensor(1.0), scale=0.5).item() == 5.0
    with m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,)):
        assert m(Tensor(1.0)).item() == 4.0
    assert m(Tensor(1.0)).item() == 2.0  # both removed on leaving the with blocks


def test_hooks_are_per_instance_and_not_parameters():
    a, b = Linear(2, 2), Linear(2, 2)
    a.register_forward_hook(lambda *_: None)
    assert not b._forward_hooks and len(a.parameters()) == 2 and set(a.state_dict()) == {"weight", "bias"}
    with pytest.raises(TypeError, match="function"):
        a.register_forward_hook(3)


# ---------------------------------------------------------------- the cache

@pytest.mark.parametrize("shape", list(SHAPES))
def test_caching_does_not_change_the_logits_bitwise(shape):
    model = make(shape)
    ref = model(IDX)[0].numpy()
    logits, cache = model.run_with_cache(IDX)
    assert np.array_equal(logits, ref)
    B, T, nh = 2, 11, 4
    assert cache["transformer.h.1.attn.pattern"].shape == (B, nh, T, T)
    assert cache["transformer.h.2.resid_post"].shape == (B, T, 32)
    assert cache["transformer.h.0.attn.z"].shape == (B, T, nh, 8)
    if shape == "mixtral":
        assert cache["transformer.h.1.mlp.probs"].shape == (B, T, 4)
        assert cache["transformer.h.1.mlp.experts"].shape == (B, T, 2)
        np.testing.assert_allclose(cache["transformer.h.1.mlp.weights"].sum(-1), 1, rtol=1e-6)
    elif shape == "attn_only":
        assert not [n for n in cache if ".mlp." in n]
    else:
        assert cache["transformer.h.1.mlp.hidden"].shape == (B, T, 128)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_cache_agrees_with_an_independent_computation(shape):
    """The stream adds up (resid_post = resid_pre + attn.out [+ mlp.out]), the pattern's rows sum to 1,
    are causal, and equal the engine's own weights (attention_maps, the return_weights path)."""
    model = make(shape, dtype="float64")
    _, cache = model.run_with_cache(IDX)
    for i in range(3):
        p = f"transformer.h.{i}."
        total = cache[p + "resid_pre"] + cache[p + "attn.out"] + cache.get(p + "mlp.out", 0)
        np.testing.assert_allclose(cache[p + "resid_post"], total, rtol=1e-12, atol=1e-12)
        pattern = cache[p + "attn.pattern"]
        np.testing.assert_allclose(pattern.sum(-1), 1, rtol=1e-12)
        assert np.all(np.triu(pattern, k=1) == 0)
        np.testing.assert_allclose(pattern, model.attention_maps(IDX)[i], rtol=1e-10, atol=1e-14)
    emb = model.transformer.wte.weight.numpy()[IDX]
    if model.config.pos == "learned":
        emb = emb + model.transformer.wpe.weight.numpy()[:11]
    np.testing.assert_array_equal(cache["transformer.h.0.resid_pre"], emb)


def test_router_cache_matches_the_layer():
    model = make("mixtral")
    _, cache = model.run_with_cache(IDX)
    moe = model.transformer.h[2].mlp
    counts = np.bincount(cache["transformer.h.2.mlp.experts"].reshape(-1), minlength=4)
    np.testing.assert_array_equal(counts, moe.expert_counts)  # the last forward's routing


# ---------------------------------------------------------------- patching

ACTIVATIONS = ["resid_pre", "attn.z", "attn.out", "mlp.hidden", "mlp.out", "resid_post"]
HAS_NO = {"attn_only": {"mlp.hidden", "mlp.out"}, "mixtral": {"mlp.hidden"}}   # no MLP; experts, no one hidden


@pytest.mark.parametrize("shape, name", [(s, n) for s in SHAPES for n in ACTIVATIONS if n not in HAS_NO.get(s, ())])
def test_patching_with_its_own_value_is_bit_identical(shape, name):
    model = make(shape)
    ref, cache = model.run_with_cache(IDX)
    full = f"transformer.h.1.{name}"
    assert full in cache, f"{shape} caches no {full}"
    patched = model.run_with_hooks(IDX, {full: lambda a: cache[full]})
    assert np.array_equal(patched, ref)


@pytest.mark.parametrize("dtype, rtol", [("float32", 1e-6), ("float64", 1e-12)])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_patching_the_pattern_with_itself(shape, dtype, rtol):
    """The pattern exists only on the written-out path, which equals the fused one to rounding."""
    model = make(shape, dtype)
    ref, cache = model.run_with_cache(IDX)
    hooks = {f"transformer.h.{i}.attn.pattern": (lambda a, i=i: cache[f"transformer.h.{i}.attn.pattern"])
             for i in range(3)}
    patched = model.run_with_hooks(IDX, hooks)
    assert np.abs(patched - ref).max() <= rtol * np.abs(ref).max()
    assert not any(b.attn.pattern.hooked for b in model.transformer.h)  # hooks are gone afterwards


def test_a_pattern_hook_sees_the_cached_pattern_and_a_uniform_one_changes_the_output():
    model = make("gpt2", "float64")
    ref, cache = model.run_with_cache(IDX)
    seen = []
    model.run_with_hooks(IDX, {"transformer.h.0.attn.pattern": seen.append})
    np.testing.assert_allclose(seen[0], cache["transformer.h.0.attn.pattern"], rtol=1e-12, atol=1e-15)
    uniform = np.tril(np.ones((11, 11))) / np.arange(1, 12)[:, None]
    out = model.run_with_hooks(IDX, {"transformer.h.0.attn.pattern": lambda a: np.broadcast_to(uniform, a.shape)})
    assert np.abs(out - ref).max() > 1e-5  # rounding in float64 is ~1e-16


def test_zeroing_a_head_changes_only_what_follows_it():
    model = make("gpt2", "float64")
    _, clean = model.run_with_cache(IDX)

    def zero_head_2(z):
        z[:, :, 2] = 0
        return z
    _, ablated = model.run_with_cache(IDX, hooks={"transformer.h.1.attn.z": zero_head_2})
    before = [n for n in clean if n.startswith(("transformer.h.0.", "transformer.h.1.resid_pre",
                                                "transformer.h.1.attn.pattern"))]
    after = [n for n in clean if n.startswith(("transformer.h.1.attn.out", "transformer.h.1.mlp",
                                               "transformer.h.1.resid_post", "transformer.h.2", "transformer.ln_f"))]
    assert len(before) == 9 and len(after) == 12
    for name in before:
        assert np.array_equal(clean[name], ablated[name]), name
    for name in after:
        assert not np.allclose(clean[name], ablated[name]), name
    z = ablated["transformer.h.1.attn.z"]
    assert np.all(z[:, :, 2] == 0) and np.array_equal(z[:, :, :2], clean["transformer.h.1.attn.z"][:, :, :2])


def test_module_names_work_as_hooks_and_bad_hooks_are_named():
    model = make()
    ref = model(IDX)[0].numpy()
    out = model.run_with_hooks(IDX, {"transformer.h.0.mlp.c_fc": lambda a: a * 0})
    assert not np.allclose(out, ref)
    with pytest.raises(KeyError, match="no activation named 'transformer.h.9.attn.out'"):
        model.run_with_hooks(IDX, {"transformer.h.9.attn.out": lambda a: None})
    with pytest.raises(ValueError, match="returned shape"):
        model.run_with_hooks(IDX, {"transformer.h.0.attn.out": lambda a: a[:, :3]})
    moe = make("mixtral")
    with pytest.raises(ValueError, match="read only"):
        moe.run_with_hooks(IDX, {"transformer.h.0.mlp.probs": lambda a: a})
    assert np.array_equal(model(IDX)[0].numpy(), ref)  # nothing left attached after the errors


def test_run_with_cache_keeps_training_mode_and_builds_no_graph():
    model = make()
    model.train()
    logits, cache = model.run_with_cache(IDX)
    assert model.training and isinstance(logits, np.ndarray)
    assert all(isinstance(v, np.ndarray) for v in cache.values())


# ---------------------------------------------------------------- the logit lens

@pytest.mark.parametrize("shape", list(SHAPES))
def test_logit_lens_last_layer_is_the_model_and_losses_are_cross_entropies(shape):
    model = make(shape)
    targets = np.roll(IDX, -1, axis=1)
    targets[:, -1] = -1
    lens = logit_lens(model, IDX, targets, k=3)
    logits, loss = model(IDX, targets)
    assert lens.names == ["embed", "h.0", "h.1", "h.2"] and lens.logits.shape == (4, 2, 11, 40)
    assert np.array_equal(lens.logits[-1], logits.numpy().astype(np.float64))
    ce = loss.item() - (model.aux_loss_coef * model.last_aux_loss if shape == "mixtral" else 0)
    np.testing.assert_allclose(lens.loss[-1], ce, rtol=1e-5)
    # top-k: the k largest logits in order, and their softmax probabilities
    row = lens.logits[1, 0, 4]
    p = np.exp(row - row.max()) / np.exp(row - row.max()).sum()
    np.testing.assert_array_equal(lens.top[1, 0, 4], np.argsort(-row)[:3])
    np.testing.assert_allclose(lens.probs[1, 0, 4], np.sort(p)[::-1][:3], rtol=1e-12)


def test_logit_lens_checks_targets():
    with pytest.raises(ValueError, match="targets of shape"):
        logit_lens(make(), IDX, IDX[:, :3])


def test_attn_only_config_counts_exports_and_old_configs():
    from models.arithmetic import count_params
    from models.hf_export import hf_family
    config = GPTConfig(vocab_size=40, block_size=16, n_layer=2, n_head=4, n_embd=32, attn_only=True)
    model = GPT(config)
    assert count_params(config) == model.num_params()
    assert not [n for n in model.state_dict() if ".mlp." in n or ".ln_2." in n]
    assert GPTConfig.from_dict(config.to_dict()) == config
    old = {k: v for k, v in config.to_dict().items() if k != "attn_only"}  # a checkpoint from before the field
    assert GPTConfig.from_dict(old).attn_only is False
    with pytest.raises(ValueError, match="attn_only"):
        hf_family(config)
    with pytest.raises(ValueError, match="attn_only=True has no MLP"):
        GPTConfig(vocab_size=40, block_size=16, n_layer=2, n_head=4, n_embd=32, attn_only=True, n_expert=2)


def test_hook_points_are_named_modules_but_not_shown_in_repr():
    model = make()
    assert "transformer.h.0.attn.pattern" in dict(model.named_modules())
    assert "pattern" not in repr(model) and "HookPoint" not in repr(model.transformer.h[0])
