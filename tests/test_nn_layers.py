"""The transformer layers of nn/ against plain-numpy references, finite differences and the seeds.

Every reference below is written independently of the code under test: loops over tokens, heads and
positions, one-hot matrices instead of gathers, np.var instead of the engine's composition. The
known numbers come from the seed chapters (the d = 2 MLP example, the d = 768 parameter counts).
"""

import numpy as np
import pytest

from nn import MLP, Dropout, Embedding, LayerNorm, Linear, Module, MoE, RMSNorm
from nn.attention import KVCache
from nn.block import Block
from nn.optim import AdamW
from tinygrad_like import Tensor, gradcheck

F64 = dict(dtype="float64")


def randn(*shape, seed=0, requires_grad=False):
    return Tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=requires_grad)


def randomize(layer: Module, seed=1, scale=0.5):
    """Give every parameter random values (norm scales and biases too), so no term hides behind a 1 or a 0."""
    rng = np.random.default_rng(seed)
    for _, p in layer.named_parameters():
        p.data[...] = rng.normal(0, scale, p.shape)
    return layer


def check_layer(layer: Module, x: Tensor, **kwargs):
    """gradcheck of the layer's output w.r.t. its input and every parameter (all float64)."""
    assert gradcheck(lambda x, *ps: layer(x, **kwargs), x, *layer.parameters())


# ---------------------------------------------------------------- numpy references

def np_layernorm(x, w, b, eps=1e-5):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(np.var(x, axis=-1, keepdims=True) + eps) * w + b


def np_rmsnorm(x, w, eps=1e-6):
    rms = np.linalg.norm(x, axis=-1, keepdims=True) / np.sqrt(x.shape[-1])
    return x / np.sqrt(rms ** 2 + eps) * w


def np_gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def np_mlp(x, sd, activation, prefix=""):
    def lin(name, v):
        b = sd.get(f"{prefix}{name}.bias")
        return v @ sd[f"{prefix}{name}.weight"].T + (0 if b is None else b)
    h = lin("c_fc", x)
    if activation == "swiglu":
        n = h.shape[-1] // 2
        gate, up = h[..., :n], h[..., n:]
        h = gate / (1 + np.exp(-gate)) * up
    elif activation == "relu":
        h = np.where(h > 0, h, 0.0)
    else:
        h = np_gelu(h)
    return lin("c_proj", h)


def np_softmax(s):
    e = np.exp(s - s.max())
    return e / e.sum()


def np_attention(x, sd, n_head, prefix="attn."):
    """Causal multi-head attention, one (batch, head, query position) at a time."""
    B, T, C = x.shape
    hs = C // n_head
    qkv = x @ sd[prefix + "c_attn.weight"].T + sd[prefix + "c_attn.bias"]
    q, k, v = qkv[..., :C], qkv[..., C:2 * C], qkv[..., 2 * C:]
    y = np.zeros_like(x)
    for b in range(B):
        for h in range(n_head):
            cols = slice(h * hs, (h + 1) * hs)
            for t in range(T):
                w = np_softmax(k[b, :t + 1, cols] @ q[b, t, cols] / np.sqrt(hs))
                y[b, t, cols] = w @ v[b, :t + 1, cols]
    return y @ sd[prefix + "c_proj.weight"].T + sd[prefix + "c_proj.bias"]


def np_moe(x, sd, n_expert, top_k, activation):
    """Route token by token: sort the experts by probability, keep the first top_k, renormalise."""
    tokens = x.reshape(-1, x.shape[-1])
    y = np.zeros_like(tokens)
    counts = np.zeros(n_expert, dtype=int)
    probs = np.zeros((len(tokens), n_expert))
    for n, tok in enumerate(tokens):
        p = np_softmax(sd["router.weight"] @ tok)
        probs[n] = p
        best = sorted(range(n_expert), key=lambda e: -p[e])[:top_k]
        for e in best:
            counts[e] += 1
            y[n] += p[e] / sum(p[j] for j in best) * np_mlp(tok, sd, activation, prefix=f"experts.{e}.")
    aux = n_expert * sum(counts[i] / len(tokens) * probs[:, i].mean() for i in range(n_expert))
    return y.reshape(x.shape), counts, aux


def numpy_state(layer: Module) -> dict:
    return {k: v.copy() for k, v in layer.state_dict().items()}


# ---------------------------------------------------------------- Embedding

def test_embedding_matches_one_hot_matmul():
    emb = Embedding(7, 3)
    ids = np.array([[0, 6, 2], [2, 2, 5]])
    one_hot = np.eye(7)[ids]                                       # (2, 3, 7)
    expected = one_hot @ emb.weight.numpy().astype(np.float64)        # (2, 3, 3)
    for given in (ids, ids.tolist(), Tensor(ids), ids.astype(np.uint8)):
        out = emb(given)
        assert out.shape == (2, 3, 3)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    assert emb(4).shape == (3,)


def test_embedding_init_is_standard_normal():
    w = Embedding(500, 40).weight.numpy()
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02


def test_embedding_repeated_ids_add_their_gradients():
    emb = Embedding(5, 2, **F64)
    ids = [[1, 1, 3], [1, 0, 3]]
    u = np.arange(12.0).reshape(2, 3, 2)
    (emb(ids) * Tensor(u)).sum().backward()
    expected = np.zeros((5, 2))
    for b in range(2):
        for t in range(3):
            expected[ids[b][t]] += u[b, t]
    np.testing.assert_allclose(emb.weight.grad.numpy(), expected)    # row 1: u[0,0] + u[0,1] + u[1,0]
    assert gradcheck(lambda w: emb(ids), emb.weight)


@pytest.mark.parametrize("ids, error, words", [
    ([0, 5], IndexError, ["id 5", "5 rows"]),
    ([[2, -1]], IndexError, ["id -1", "5 rows"]),
    (np.array([1.0, 2.0]), TypeError, ["integers", "float64"]),
    (Tensor([1.0]), TypeError, ["integers", "float32"]),
])
def test_embedding_bad_ids(ids, error, words):
    with pytest.raises(error) as info:
        Embedding(5, 2)(ids)
    for w in words:
        assert w in str(info.value)


# ---------------------------------------------------------------- norms

def test_layernorm_matches_numpy():
    ln = randomize(LayerNorm(6, **F64))
    x = randn(2, 3, 6)
    np.testing.assert_allclose(ln(x).numpy(), np_layernorm(x.numpy(), ln.weight.numpy(), ln.bias.numpy()), rtol=1e-10)
    fresh = LayerNorm(6)(x.float()).numpy()                             # ones and zeros: mean 0, std 1
    np.testing.assert_allclose(fresh.mean(-1), 0, atol=1e-6)
    np.testing.assert_allclose(fresh.std(-1), 1, atol=1e-3)
    assert LayerNorm(6, bias=False).bias is None


def test_rmsnorm_matches_numpy():
    rms = randomize(RMSNorm(6, **F64))
    x = randn(2, 3, 6)
    np.testing.assert_allclose(rms(x).numpy(), np_rmsnorm(x.numpy(), rms.weight.numpy()), rtol=1e-10)
    out = RMSNorm(4)(Tensor([[3.0, -3.0, 3.0, -3.0]])).numpy()        # rms is 3, so every entry becomes ±1
    np.testing.assert_allclose(out, [[1, -1, 1, -1]], rtol=1e-6)
    assert [n for n, _ in rms.named_parameters()] == ["weight"]


@pytest.mark.parametrize("make", [lambda: LayerNorm(5, **F64), lambda: LayerNorm(5, bias=False, **F64),
                                  lambda: RMSNorm(5, **F64)])
def test_norm_gradcheck(make):
    check_layer(randomize(make()), randn(2, 3, 5, requires_grad=True))


@pytest.mark.parametrize("make, name", [(lambda: LayerNorm(4), "LayerNorm"), (lambda: RMSNorm(4), "RMSNorm")])
def test_norm_wrong_last_dimension(make, name):
    with pytest.raises(ValueError, match=rf"{name}.*\(2, 5\).*4"):
        make()(Tensor.zeros(2, 5))


# ---------------------------------------------------------------- Dropout

def test_dropout_layer_follows_train_and_eval():
    drop = Dropout(0.5)
    x = Tensor.ones(1000)
    out = drop(x).numpy()
    assert set(np.unique(out)) == {0.0, 2.0}                      # kept entries scaled by 1/(1 - p)
    assert 300 < (out == 0).sum() < 700
    assert drop.eval()(x) is x
    with pytest.raises(ValueError, match="Dropout"):
        Dropout(1.0)


# ---------------------------------------------------------------- MLP

@pytest.mark.parametrize("activation", ["gelu", "relu", "swiglu"])
def test_mlp_matches_numpy(activation):
    mlp = randomize(MLP(4, 6, activation, **F64))
    x = randn(2, 3, 4)
    np.testing.assert_allclose(mlp(x).numpy(), np_mlp(x.numpy(), mlp.state_dict(), activation), rtol=1e-10)
    width = 12 if activation == "swiglu" else 6
    assert mlp.c_fc.weight.shape == (width, 4) and mlp.c_proj.weight.shape == (4, 6)


@pytest.mark.parametrize("activation", ["gelu", "relu", "swiglu"])
def test_mlp_gradcheck(activation):
    check_layer(randomize(MLP(3, 4, activation, **F64)), randn(2, 3, requires_grad=True))


def test_swiglu_gate_is_the_first_half():
    """gate = 2x from the first half, up = 1 from the second: silu(2)·1 = 2σ(2). Swapped halves give 2·silu(1)."""
    mlp = MLP(1, 1, "swiglu", **F64)
    mlp.load_state_dict({"c_fc.weight": [[2.0], [0.0]], "c_fc.bias": [0.0, 1.0],
                         "c_proj.weight": [[1.0]], "c_proj.bias": [0.0]})
    assert mlp(Tensor([[1.0]], **F64)).item() == pytest.approx(2 / (1 + np.exp(-2)))


@pytest.mark.parametrize("readout, expected", [
    ([[1, 0, 0, 0], [0, 1, 0, 0]], [0.860, 1.432]),   # hidden units 1 and 2
    ([[0, 0, 1, 0], [0, 0, 0, 1]], [0.0, 0.572]),     # unit 3 (-0.572) is zeroed by ReLU, unit 4 passes
])
def test_seed_mlp_example(readout, expected):
    """Chapter 18: x = (0.860, 1.432), first-matrix columns (1,0), (0,1), (1,-1), (-1,1): pre-activations
    0.860, 1.432, -0.572, 0.572, after ReLU (0.860, 1.432, 0, 0.572). c_proj reads two units at a time."""
    mlp = MLP(2, 4, "relu")
    mlp.load_state_dict({"c_fc.weight": np.array([[1, 0], [0, 1], [1, -1], [-1, 1]], np.float32),
                         "c_fc.bias": np.zeros(4, np.float32),
                         "c_proj.weight": np.array(readout, np.float32), "c_proj.bias": np.zeros(2, np.float32)})
    np.testing.assert_allclose(mlp(Tensor([0.860, 1.432])).numpy(), expected, atol=1e-6)


def test_mlp_bad_inputs():
    with pytest.raises(ValueError, match="unknown activation 'tanh'"):
        MLP(4, 8, "tanh")
    with pytest.raises(ValueError, match=r"MLP.*\(2, 5\).*4"):
        MLP(4, 8)(Tensor.zeros(2, 5))


# ---------------------------------------------------------------- MoE

@pytest.mark.parametrize("top_k, activation", [(1, "gelu"), (2, "relu"), (3, "swiglu")])
def test_moe_matches_numpy_routing(top_k, activation):
    moe = randomize(MoE(4, 5, n_expert=4, top_k=top_k, activation=activation, **F64), scale=1.0)
    x = randn(2, 5, 4)
    y, counts, aux = np_moe(x.numpy(), moe.state_dict(), 4, top_k, activation)
    np.testing.assert_allclose(moe(x).numpy(), y, rtol=1e-10)
    np.testing.assert_array_equal(moe.expert_counts, counts)
    assert moe.expert_counts.sum() == 10 * top_k
    assert moe.aux_loss.item() == pytest.approx(aux, rel=1e-10)


def test_moe_aux_loss_is_not_a_parameter():
    moe = MoE(4, 5, n_expert=3)
    names = [n for n, _ in moe.named_parameters()]
    moe(randn(3, 4).float())
    assert moe.aux_loss.requires_grad and [n for n, _ in moe.named_parameters()] == names
    assert "aux_loss" not in moe.state_dict()


def test_moe_with_all_experts_is_the_dense_softmax_mixture():
    moe = randomize(MoE(3, 4, n_expert=3, top_k=3, **F64), scale=1.0)
    sd = moe.state_dict()
    x = randn(6, 3).numpy()
    logits = x @ sd["router.weight"].T                                          # (N, E)
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    every = np.stack([np_mlp(x, sd, "gelu", prefix=f"experts.{e}.") for e in range(3)])  # (E, N, C)
    np.testing.assert_allclose(moe(Tensor(x)).numpy(), np.einsum("ne,enc->nc", probs, every), rtol=1e-10)


def test_moe_uniform_router_probabilities_give_aux_loss_top_k():
    """A zero router gives every expert probability P_i = 1/n, so aux = n · Σ f_i / n = Σ f_i = top_k,
    whatever the assignments f_i: the loss measures balance through its gradient on P, not its value."""
    for top_k in (1, 2, 3):
        moe = MoE(4, 4, n_expert=4, top_k=top_k, **F64)
        moe.router.weight.data[...] = 0
        moe(randn(8, 4))
        assert moe.aux_loss.item() == pytest.approx(top_k)


def test_moe_runs_only_the_chosen_experts():
    moe = MoE(3, 4, n_expert=4, top_k=2, **F64)
    moe.router.weight.data[...] = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [-9, -9, -9]]  # expert 3 always last
    rows_seen = {}
    for e, expert in enumerate(moe.experts):
        def counting(x, e=e, forward=expert.forward):
            rows_seen[e] = rows_seen.get(e, 0) + x.shape[0]
            return forward(x)
        expert.forward = counting
    x = Tensor(np.abs(randn(2, 5, 3).numpy()) + 0.1, **F64)                        # positive: expert 3 loses
    moe(x)
    assert 3 not in rows_seen                                                   # never called
    assert sum(rows_seen.values()) == 10 * 2                                    # each token runs k experts
    assert rows_seen == {e: int(n) for e, n in enumerate(moe.expert_counts) if n}


@pytest.mark.parametrize("top_k", [1, 2])
def test_moe_gradcheck(top_k):
    moe = randomize(MoE(3, 4, n_expert=3, top_k=top_k, **F64), scale=1.0)
    x = randn(5, 3, requires_grad=True)
    check_layer(moe, x)
    assert gradcheck(lambda x, *ps: (moe(x), moe.aux_loss)[1], x, *moe.parameters())   # P_i is differentiable


def test_moe_bad_inputs():
    with pytest.raises(ValueError, match="top_k"):
        MoE(4, 8, n_expert=2, top_k=3)
    with pytest.raises(ValueError, match=r"MoE.*\(3, 5\).*4"):
        MoE(4, 8, n_expert=2)(Tensor.zeros(3, 5))


# ---------------------------------------------------------------- Block

def np_block(x, sd, n_head, prenorm=True, norm="layernorm", activation="gelu"):
    def ln(name, v):
        if norm == "rmsnorm":
            return np_rmsnorm(v, sd[name + ".weight"])
        return np_layernorm(v, sd[name + ".weight"], sd[name + ".bias"])

    def mlp(v):
        return np_mlp(v, sd, activation, prefix="mlp.")
    if prenorm:
        x = x + np_attention(ln("ln_1", x), sd, n_head)
        return x + mlp(ln("ln_2", x))
    x = ln("ln_1", x + np_attention(x, sd, n_head))
    return ln("ln_2", x + mlp(x))


@pytest.mark.parametrize("kwargs", [dict(), dict(prenorm=False), dict(norm="rmsnorm"),
                                    dict(norm="rmsnorm", mlp="swiglu"), dict(prenorm=False, mlp="relu")])
def test_block_matches_numpy(kwargs):
    block = randomize(Block(8, 2, mlp_hidden=12, **kwargs, **F64))
    x = randn(2, 4, 8)
    expected = np_block(x.numpy(), block.state_dict(), 2, kwargs.get("prenorm", True), kwargs.get("norm", "layernorm"),
                        kwargs.get("mlp", "gelu"))
    np.testing.assert_allclose(block(x).numpy(), expected, rtol=1e-9, atol=1e-12)
    assert block.aux_loss is None


def test_pre_and_post_norm_differ():
    pre = randomize(Block(8, 2, **F64))
    post = Block(8, 2, prenorm=False, **F64)
    post.load_state_dict(pre.state_dict())
    x = randn(1, 3, 8)
    assert np.abs(pre(x).numpy() - post(x).numpy()).max() > 0.1
    z = (post(x).numpy() - post.ln_2.bias.numpy()) / post.ln_2.weight.numpy()  # post-norm ends in ln_2: standardised
    np.testing.assert_allclose(z.mean(-1), 0, atol=1e-9)
    np.testing.assert_allclose(z.std(-1), 1, rtol=1e-4)


@pytest.mark.parametrize("kwargs", [dict(), dict(prenorm=False), dict(norm="rmsnorm", mlp="swiglu"),
                                    dict(n_expert=3, top_k=2)])
def test_block_gradcheck(kwargs):
    check_layer(randomize(Block(4, 2, mlp_hidden=4, **kwargs, **F64)), randn(1, 3, 4, requires_grad=True))


def test_moe_block_matches_numpy_and_exposes_aux_loss():
    block = randomize(Block(4, 2, mlp_hidden=6, n_expert=3, top_k=2, **F64), scale=0.7)
    sd = block.state_dict()
    x = randn(2, 3, 4).numpy()
    h = x + np_attention(np_layernorm(x, sd["ln_1.weight"], sd["ln_1.bias"]), sd, 2)
    moe_sd = {k[len("mlp."):]: v for k, v in sd.items() if k.startswith("mlp.")}
    y, counts, aux = np_moe(np_layernorm(h, sd["ln_2.weight"], sd["ln_2.bias"]), moe_sd, 3, 2, "gelu")
    np.testing.assert_allclose(block(Tensor(x)).numpy(), h + y, rtol=1e-9)
    assert isinstance(block.mlp, MoE) and block.aux_loss.item() == pytest.approx(aux, rel=1e-9)
    np.testing.assert_array_equal(block.mlp.expert_counts, counts)


def test_block_parameter_counts_for_d768():
    """Chapter 18: attention 4·768² = 2,359,296 weights + 3,072 biases; MLP 2·768·3072 = 4,718,592 + 3,840."""
    block = Block(768, 12)
    count = {}
    for name, p in block.named_parameters():
        part, kind = name.split(".")[0], name.rsplit(".", 1)[1]
        count[part, kind] = count.get((part, kind), 0) + p.numel()
    assert count["attn", "weight"] == 2_359_296 and count["attn", "bias"] == 3_072
    assert count["mlp", "weight"] == 4_718_592 and count["mlp", "bias"] == 3_840
    assert count["ln_1", "weight"] == count["ln_2", "bias"] == 768


def test_block_passes_kv_cache_and_weights_through():
    block = randomize(Block(8, 2, rope=True, **F64), scale=0.3)
    x = randn(1, 5, 8)
    full, weights = block(x, return_weights=True)
    assert weights.shape == (1, 2, 5, 5)
    np.testing.assert_allclose(weights.numpy().sum(-1), 1, rtol=1e-12)
    assert np.all(np.triu(weights.numpy()[0, 0], k=1) == 0)                       # causal
    cache = KVCache()
    steps = [block(x[:, t:t + 1], kv_cache=cache) for t in range(5)]           # one token at a time
    np.testing.assert_allclose(np.concatenate([s.numpy() for s in steps], axis=1), full.numpy(), rtol=1e-9)


def test_block_residual_dropout_follows_train_and_eval():
    block = randomize(Block(8, 2, dropout=0.5, **F64))
    plain = Block(8, 2, **F64)
    plain.load_state_dict(block.state_dict())
    x = randn(2, 4, 8)
    np.testing.assert_allclose(block.eval()(x).numpy(), plain(x).numpy(), rtol=1e-12)
    block.train()
    assert np.abs(block(x).numpy() - plain(x).numpy()).max() > 1e-3


@pytest.mark.parametrize("make, error, pattern", [
    (lambda: Block(8, 2, norm="batchnorm"), ValueError, "unknown norm 'batchnorm'"),
    (lambda: Block(8, 2, mlp="tanh"), ValueError, "unknown activation 'tanh'"),
    (lambda: Block(8, 2)(Tensor.zeros(4, 8)), ValueError, r"Block.*\(4, 8\).*\(B, T, 8\)"),
    (lambda: Block(8, 2)(Tensor.zeros(1, 4, 6)), ValueError, r"Block.*\(1, 4, 6\)"),
])
def test_block_bad_inputs(make, error, pattern):
    with pytest.raises(error, match=pattern):
        make()


# ---------------------------------------------------------------- a 2-layer transformer learns to copy

class TinyTransformer(Module):
    """Embedding + learned positions + 2 pre-norm Blocks + LayerNorm + Linear head (nanoGPT's layout)."""

    def __init__(self, vocab, block_size, dim, n_head):
        self.wte, self.wpe = Embedding(vocab, dim), Embedding(block_size, dim)
        self.h = [Block(dim, n_head) for _ in range(2)]
        self.ln_f = LayerNorm(dim)
        self.lm_head = Linear(dim, vocab, bias=False)
        for _, p in self.named_parameters():
            if p.ndim == 2:
                p.data[...] *= 0.2 if p is self.wte.weight or p is self.wpe.weight else 1

    def forward(self, idx):
        B, T = np.shape(idx)
        x = self.wte(idx) + self.wpe(np.arange(T))    # (B, T, C)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))             # (B, T, vocab)


def test_two_layer_transformer_learns_the_copy_task():
    """Sequences a b c d e | a b c d e: the second half is predictable from the first, once attention
    learns to look back half a sequence. Loss is measured on those predictable positions only."""
    Tensor.manual_seed(0)
    rng = np.random.default_rng(0)
    vocab, half, B = 8, 5, 32
    model = TinyTransformer(vocab, 2 * half, dim=32, n_head=2)
    opt = AdamW(model.parameters(), lr=1e-2, weight_decay=0.0)
    for _ in range(300):
        first = rng.integers(0, vocab, size=(B, half))
        seq = np.concatenate([first, first], axis=1)           # (B, 2·half)
        targets = np.full((B, 2 * half - 1), -1)
        targets[:, half - 1:] = seq[:, half:]                  # predict only the copied half
        logits = model(seq[:, :-1])
        loss = logits.sparse_categorical_crossentropy(targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if loss.item() < 0.01:
            break
    assert loss.item() < 0.05, f"copy task loss still {loss.item():.3f} after 300 steps"
    first = rng.integers(0, vocab, size=(256, half))                 # unseen sequences, greedy predictions
    seq = np.concatenate([first, first], axis=1)
    predicted = model.eval()(seq[:, :-1]).numpy().argmax(-1)[:, half - 1:]
    assert (predicted == first).mean() > 0.99
