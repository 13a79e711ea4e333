"""nn.Module's bookkeeping on a real stack of layers: names, state dicts, modes, gradients, repr, scopes.

The model is nanoGPT's layout at toy size, so the dotted names checked here are the ones GPT-2
checkpoints use (`h.0.attn.c_attn.weight`).
"""
import numpy as np
import pytest

from nn import Block, Dropout, Embedding, LayerNorm, Linear, Module
from tinygrad_like import Tensor, draw_graph

V, T, C, NH = 11, 6, 8, 2


class Tiny(Module):
    def __init__(self, dropout=0.0, seed=0):
        Tensor.manual_seed(seed)
        self.wte, self.wpe = Embedding(V, C), Embedding(T, C)
        self.drop = Dropout(dropout)
        self.h = [Block(C, NH, mlp_hidden=2 * C, dropout=dropout) for _ in range(2)]
        self.ln_f = LayerNorm(C)
        self.lm_head = Linear(C, V, bias=False)

    def forward(self, idx):
        x = self.drop(self.wte(idx) + self.wpe(np.arange(np.shape(idx)[1])))  # (B, T, C)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))                                     # (B, T, V)


IDX = np.array([[1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1]])
BLOCK_NAMES = ["ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
               "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
               "mlp.c_proj.weight", "mlp.c_proj.bias"]


def snapshot(model):
    return {k: v.copy() for k, v in model.state_dict().items()}


def test_named_parameters_are_dotted_paths():
    names = [n for n, _ in Tiny().named_parameters()]
    expected = (["wte.weight", "wpe.weight"] + [f"h.{i}.{n}" for i in range(2) for n in BLOCK_NAMES]
                + ["ln_f.weight", "ln_f.bias", "lm_head.weight"])
    assert names == expected


def test_num_params_by_hand():
    per_block = (2 * C + 3 * C * C + 3 * C + C * C + C + 2 * C   # ln_1, c_attn, c_proj, ln_2
                 + C * 2 * C + 2 * C + 2 * C * C + C)            # c_fc, c_proj
    assert Tiny().num_params() == V * C + T * C + 2 * per_block + 2 * C + C * V


def test_state_dict_round_trip():
    a, b = Tiny(seed=0), Tiny(seed=1)
    assert not np.allclose(a(IDX).numpy(), b(IDX).numpy())
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(a(IDX).numpy(), b(IDX).numpy())
    a.h[0].attn.c_attn.weight.data[...] = 0                          # loading copied, it did not alias
    assert np.abs(b.h[0].attn.c_attn.weight.numpy()).max() > 0
    assert set(a.state_dict()) == {n for n, _ in a.named_parameters()}


@pytest.mark.parametrize("edit, error, words", [
    (lambda sd: sd.pop("h.1.mlp.c_fc.bias"), KeyError, ["missing", "h.1.mlp.c_fc.bias"]),
    (lambda sd: sd.update({"h.2.ln_1.weight": np.ones(C)}), KeyError, ["unexpected", "h.2.ln_1.weight"]),
    (lambda sd: sd.update({"h.0.attn.c_proj.weight": np.ones((C, C + 1))}), ValueError,
     ["h.0.attn.c_proj.weight", "(8, 9)", "(8, 8)"]),
])
def test_strict_load_errors_leave_the_model_unchanged(edit, error, words):
    model, other = Tiny(seed=0), Tiny(seed=1)
    before = snapshot(model)
    state = snapshot(other)
    edit(state)
    with pytest.raises(error) as info:
        model.load_state_dict(state)
    for w in words:
        assert w in str(info.value)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v, before[k], err_msg=k)


def test_non_strict_load_takes_what_matches():
    model, other = Tiny(seed=0), Tiny(seed=1)
    state = {"ln_f.bias": other.ln_f.bias.numpy() + 1, "not.a.param": np.zeros(3)}
    model.load_state_dict(state, strict=False)
    np.testing.assert_array_equal(model.ln_f.bias.numpy(), other.ln_f.bias.numpy() + 1)
    np.testing.assert_array_equal(model.lm_head.weight.numpy(), Tiny(seed=0).lm_head.weight.numpy())


def test_train_and_eval_switch_dropout_everywhere():
    model = Tiny(dropout=0.5)
    plain = Tiny(dropout=0.0)
    plain.load_state_dict(model.state_dict())
    model.eval()
    assert all(not m.training for _, m in model.named_modules())
    np.testing.assert_array_equal(model(IDX).numpy(), model(IDX).numpy())          # eval: deterministic ...
    np.testing.assert_allclose(model(IDX).numpy(), plain(IDX).numpy(), rtol=1e-6)  # ... and dropout is the identity
    model.train()
    assert all(m.training for _, m in model.named_modules())
    assert not np.allclose(model(IDX).numpy(), plain(IDX).numpy())
    x = Tensor.ones(2, 500)
    zeroed = model.drop(x).numpy()
    assert 0 < (zeroed == 0).mean() < 1 and set(np.unique(zeroed)) == {0.0, 2.0}


def test_zero_grad_clears_every_gradient():
    model = Tiny()
    model(IDX).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_repr_is_the_module_tree():
    text = repr(Tiny())
    assert text.startswith("Tiny(\n  (wte): Embedding(11, 8)\n  (wpe): Embedding(6, 8)\n  (drop): Dropout(p=0.0)\n")
    assert "\n  (h.0): Block(8, prenorm=True\n    (ln_1): LayerNorm(8, eps=1e-05, bias=True)\n" in text
    assert "\n      (c_fc): Linear(8, 16, bias=True)\n" in text                # mlp's child, three levels deep
    assert text.endswith("  (lm_head): Linear(8, 11, bias=False)\n)")


def _scopes(out: Tensor) -> set:
    seen, stack, scopes = set(), [out], set()
    while stack:
        t = stack.pop()
        if t._ctx is None or id(t) in seen:
            continue
        seen.add(id(t))
        scopes.add(t._ctx.scope)
        stack.extend(t._ctx.parents)
    return scopes


def test_ops_carry_the_scope_of_their_sub_layer():
    model = Tiny()
    out = model(IDX)
    assert out._ctx.scope == "lm_head"                                     # the last op is the head's matmul
    scopes = _scopes(out)
    for s in ["wte", "h.0.ln_1", "h.0.attn.c_attn", "h.0.attn", "h.1.mlp.c_fc", "h.1.mlp.c_proj", "ln_f"]:
        assert s in scopes, s
    assert model.h[1].mlp.c_fc.weight.name == "h.1.mlp.c_fc.weight"
    source = draw_graph(out, max_nodes=2000).source
    assert "cluster_h.0" in source and "cluster_h.1.mlp.c_fc" in source and "h.0.attn.c_attn.weight" in source


def test_a_layer_called_alone_scopes_from_itself():
    block = Block(C, NH)
    out = block(Tensor.randn(1, 3, C))
    assert {"attn.c_attn", "ln_2", "mlp.c_proj"} <= _scopes(out)
    assert block.attn.c_proj.bias.name == "attn.c_proj.bias"


def test_calling_a_module_sets_no_class_attribute():
    """Module calls keep their nesting depth off the classes: setting a class attribute invalidates
    Python's attribute caches for the class and every subclass, at every call. A hook deep inside a call
    sees the class dictionaries exactly as they are outside it."""
    model = Tiny()
    classes = [Module, Tiny, Block, Linear, LayerNorm, Embedding]
    outside = [dict(vars(cls)) for cls in classes]
    inside = []
    model.h[1].mlp.register_forward_hook(lambda module, args, out: inside.append([dict(vars(cls)) for cls in classes]))
    model(np.zeros((1, T), dtype=np.int64))
    assert len(inside) == 1
    for cls, before, during, after in zip(classes, outside, inside[0], [dict(vars(c)) for c in classes]):
        assert during == before == after, cls.__name__
