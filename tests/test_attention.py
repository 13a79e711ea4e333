"""Attention, RoPE and the KV cache against the seed's worked numbers and plain-numpy references.

The references below are written independently of nn/attention.py and nn/rope.py: attention as
explicit loops over batch and head, RoPE with complex numbers, GQA by repeating weight blocks.
"""
import math

import numpy as np
import pytest

from nn.attention import Attention, KVCache
from nn.rope import RoPE, apply_rope
from tinygrad_like import Tensor, composed, gradcheck, no_grad
from tinygrad_like.scaffolding import toposort

# ---------------------------------------------------------------- independent numpy references

def ref_rope(x, positions, base=10000.0):
    """Rotate-half RoPE with complex numbers: pair (x_i, x_{i+d/2}) is z_i = x_i + i·x_{i+d/2},
    multiplied by e^{i·pos·θ_i} with θ_i = base^(-2i/d)."""
    d = x.shape[-1]
    theta = base ** (-2.0 * np.arange(d // 2) / d)
    z = x[..., :d // 2] + 1j * x[..., d // 2:]
    z = z * np.exp(1j * np.outer(positions, theta))
    return np.concatenate([z.real, z.imag], axis=-1)


def ref_attention(x, w_attn, b_attn, w_proj, b_proj, n_head, n_kv_head, causal, rope=False):
    """Multi-head (grouped-query) attention, one head and one batch row at a time.
    Returns y (B, T, C) and weights (B, n_head, T, T)."""
    B, T, C = x.shape
    hs, group = C // n_head, n_head // n_kv_head
    qkv = x @ w_attn.T + (0 if b_attn is None else b_attn)
    q, k, v = qkv[..., :C], qkv[..., C:C + n_kv_head * hs], qkv[..., C + n_kv_head * hs:]
    heads = np.zeros((B, T, C))
    weights = np.zeros((B, n_head, T, T))
    for b in range(B):
        for h in range(n_head):
            g = h // group
            qh, kh, vh = q[b, :, h * hs:(h + 1) * hs], k[b, :, g * hs:(g + 1) * hs], v[b, :, g * hs:(g + 1) * hs]
            if rope:
                qh, kh = ref_rope(qh, np.arange(T)), ref_rope(kh, np.arange(T))
            for i in range(T):
                seen = i + 1 if causal else T
                s = np.array([qh[i] @ kh[j] for j in range(seen)]) / math.sqrt(hs)
                p = np.exp(s - s.max())
                p /= p.sum()
                weights[b, h, i, :seen] = p
                heads[b, i, h * hs:(h + 1) * hs] = p @ vh[:seen]
    return heads @ w_proj.T + (0 if b_proj is None else b_proj), weights


def params(attn):
    a, p = attn.c_attn, attn.c_proj
    return (a.weight.numpy(), None if a.bias is None else a.bias.numpy(),
            p.weight.numpy(), None if p.bias is None else p.bias.numpy())


def randomize(attn, seed=0, scale=0.5):
    """Weights of size ~1 so that softmax rows are far from uniform (a sharper test than the init)."""
    rng = np.random.default_rng(seed)
    for p in attn.parameters():
        p.data[...] = rng.standard_normal(p.shape) * scale
    return attn


def tol(dtype):
    return 1e-10 if dtype == "float64" else 1e-5


# ---------------------------------------------------------------- the seed's worked example (chapter 18)

X3 = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
W_Q, W_K, W_V = np.array([[1.0, 0.0], [1.0, 1.0]]), np.eye(2), np.array([[1.0, 0.0], [0.0, 2.0]])


def seed_attention(causal):
    attn = Attention(2, 1, bias=False, causal=causal)
    attn.c_attn.weight.data[...] = np.concatenate([W_Q.T, W_K.T, W_V.T], axis=0)  # Linear computes x Wᵀ
    attn.c_proj.weight.data[...] = np.eye(2)
    return attn


def test_seed_worked_example_token_3():
    y, w = seed_attention(causal=False)(Tensor(X3[None]), return_weights=True)
    np.testing.assert_allclose(w.numpy()[0, 0, 2], [0.284, 0.140, 0.576], atol=1e-3)
    np.testing.assert_allclose(y.numpy()[0, 2], [0.860, 1.432], atol=1e-3)


def test_seed_worked_example_causal_mask():
    y, w = seed_attention(causal=True)(Tensor(X3[None]), return_weights=True)
    np.testing.assert_allclose(w.numpy()[0, 0, 0], [1.0, 0.0, 0.0], atol=1e-6)  # token 1 sees itself only
    np.testing.assert_allclose(y.numpy()[0, 0], [1.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(w.numpy()[0, 0, 1], [0.5, 0.5, 0.0], atol=1e-6)  # scores 1 and 1
    np.testing.assert_allclose(y.numpy()[0, 1], [0.5, 1.0], atol=1e-6)
    np.testing.assert_allclose(y.numpy()[0, 2], [0.860, 1.432], atol=1e-3)      # token 3 sees all three


# ---------------------------------------------------------------- full forward vs the numpy reference

FORWARD_CASES = [  # dim, n_head, n_kv_head, causal, bias, rope
    (8, 2, None, True, True, False),
    (8, 2, None, False, True, False),
    (8, 2, None, True, False, False),
    (12, 3, None, False, False, False),
    (8, 4, 2, True, True, False),     # GQA
    (8, 4, 1, False, True, False),    # multi-query
    (8, 2, None, True, True, True),   # RoPE
    (16, 4, 2, False, False, True),   # GQA + RoPE, non-causal
]


@pytest.mark.parametrize("dim, n_head, n_kv_head, causal, bias, rope", FORWARD_CASES)
def test_forward_matches_numpy(dim, n_head, n_kv_head, causal, bias, rope):
    attn = randomize(Attention(dim, n_head, n_kv_head, causal=causal, bias=bias, rope=rope, dtype="float64"))
    x = np.random.default_rng(1).standard_normal((2, 5, dim))
    y, w = attn(Tensor(x), return_weights=True)
    y_ref, w_ref = ref_attention(x, *params(attn), n_head, n_kv_head or n_head, causal, rope)
    np.testing.assert_allclose(y.numpy(), y_ref, atol=1e-12)
    np.testing.assert_allclose(w.numpy(), w_ref, atol=1e-12)
    # without weights to return (and no RoPE) the engine runs one MultiHeadAttention op instead
    np.testing.assert_allclose(attn(Tensor(x)).numpy(), y_ref, atol=1e-12)


def test_float32_forward_stays_float32():
    attn = Attention(8, 2, rope=True)
    x = Tensor.randn(2, 4, 8)
    y, w = attn(x, return_weights=True)
    assert y.dtype == np.float32 and w.dtype == np.float32
    y_ref, _ = ref_attention(x.numpy().astype(np.float64), *[p.astype(np.float64) for p in params(attn)],
                             2, 2, True, True)
    np.testing.assert_allclose(y.numpy(), y_ref, atol=1e-5)


def test_shapes_and_parameter_layout():
    attn = Attention(16, 4, 2)
    assert attn.c_attn.weight.shape == ((4 + 2 * 2) * 4, 16) and attn.c_proj.weight.shape == (16, 16)
    assert [n for n, _ in attn.named_parameters()] == ["c_attn.weight", "c_attn.bias", "c_proj.weight", "c_proj.bias"]
    assert Attention(16, 4, rope=True).num_params() == Attention(16, 4).num_params()  # RoPE adds no parameters


# ---------------------------------------------------------------- gradients

GRAD_CASES = [  # n_head, n_kv_head, causal, rope
    (2, None, True, False),   # MHA
    (2, None, False, False),  # MHA, non-causal
    (4, 2, True, False),      # GQA
    (4, 1, True, False),      # multi-query
    (2, None, True, True),    # RoPE
    (4, 2, False, True),      # GQA + RoPE, non-causal
]


@pytest.mark.parametrize("n_head, n_kv_head, causal, rope", GRAD_CASES)
def test_gradcheck(n_head, n_kv_head, causal, rope):
    Tensor.manual_seed(0)
    attn = randomize(Attention(8, n_head, n_kv_head, causal=causal, rope=rope, dtype="float64"), seed=3)
    x = Tensor(np.random.default_rng(2).standard_normal((2, 3, 8)), requires_grad=True)
    assert gradcheck(lambda x, *ps: attn(x), x, *attn.parameters())


def test_gradcheck_attention_dropout_path():
    """The composed path used in training with dropout > 0, with a fixed mask per evaluation."""
    attn = randomize(Attention(8, 2, dropout=0.3, dtype="float64"), seed=4)
    x = Tensor(np.random.default_rng(5).standard_normal((1, 3, 8)), requires_grad=True)

    def fn(x, *ps):
        Tensor.manual_seed(7)  # the same dropout mask on every call
        return attn(x)
    assert gradcheck(fn, x, *attn.parameters())


# ---------------------------------------------------------------- grouped-query attention

def test_gqa_with_all_kv_heads_is_mha():
    mha = randomize(Attention(8, 4, dtype="float64"))
    gqa = Attention(8, 4, n_kv_head=4, dtype="float64")
    gqa.load_state_dict(mha.state_dict())
    x = Tensor(np.random.default_rng(0).standard_normal((2, 5, 8)))
    np.testing.assert_allclose(gqa(x).numpy(), mha(x).numpy(), atol=1e-14)


@pytest.mark.parametrize("n_head, n_kv_head", [(4, 2), (4, 1), (6, 3)])
def test_gqa_equals_mha_with_repeated_kv_weights(n_head, n_kv_head):
    """An MHA whose key/value heads are copies (KV head g used for query heads g·r .. g·r + r - 1)."""
    dim, hs, r = 2 * n_head, 2, n_head // n_kv_head
    gqa = randomize(Attention(dim, n_head, n_kv_head, dtype="float64"))
    w, b = gqa.c_attn.weight.numpy(), gqa.c_attn.bias.numpy()
    wk = w[dim:dim + n_kv_head * hs].reshape(n_kv_head, hs, dim)
    wv = w[dim + n_kv_head * hs:].reshape(n_kv_head, hs, dim)
    bk, bv = b[dim:dim + n_kv_head * hs].reshape(n_kv_head, hs), b[dim + n_kv_head * hs:].reshape(n_kv_head, hs)
    mha = Attention(dim, n_head, dtype="float64")
    mha.c_attn.weight.data[...] = np.concatenate([w[:dim], np.repeat(wk, r, axis=0).reshape(dim, dim),
                                                  np.repeat(wv, r, axis=0).reshape(dim, dim)])
    mha.c_attn.bias.data[...] = np.concatenate([b[:dim], np.repeat(bk, r, axis=0).ravel(),
                                                np.repeat(bv, r, axis=0).ravel()])
    mha.c_proj.load_state_dict(gqa.c_proj.state_dict())
    x = Tensor(np.random.default_rng(1).standard_normal((2, 4, dim)))
    np.testing.assert_allclose(gqa(x).numpy(), mha(x).numpy(), atol=1e-12)


@pytest.mark.parametrize("n_kv_head", [4, 2, 1])
def test_kv_cache_bytes_shrink_with_groups(n_kv_head):
    B, T, dim, n_head = 2, 6, 16, 4
    attn = Attention(dim, n_head, n_kv_head)
    cache = KVCache()
    with no_grad():
        attn(Tensor.randn(B, T, dim), kv_cache=cache)
    hs = dim // n_head
    assert cache.k.shape == cache.v.shape == (B, n_kv_head, T, hs)
    assert cache.nbytes == 2 * B * n_kv_head * T * hs * 4           # keys and values, float32
    assert cache.nbytes * (n_head // n_kv_head) == 2 * B * T * dim * 4  # the MHA cache / (n_head / n_kv_head)


# ---------------------------------------------------------------- RoPE

@pytest.mark.parametrize("d, positions", [(2, [0, 1, 2]), (8, [0, 3, 7, 100]), (16, [5, 4096, 9])])
def test_apply_rope_matches_complex_reference(d, positions):
    x = np.random.default_rng(0).standard_normal((2, 3, len(positions), d))
    np.testing.assert_allclose(apply_rope(Tensor(x), positions).numpy(), ref_rope(x, positions), atol=1e-10)


def test_rope_explicit_2x2_rotation():
    """d = 4: pairs (0, 2) and (1, 3), angles pos·1 and pos·base^(-1/2)."""
    x = np.array([[1.0, 2.0, 3.0, 4.0]])
    pos, out = 3, apply_rope(Tensor(x, dtype="float64"), [3], base=100.0).numpy()[0]
    for i, theta in ((0, 1.0), (1, 100.0 ** -0.5)):
        c, s = math.cos(pos * theta), math.sin(pos * theta)
        a, b = x[0, i], x[0, i + 2]
        np.testing.assert_allclose([out[i], out[i + 2]], [a * c - b * s, a * s + b * c], atol=1e-12)


def test_rope_class_offset_and_table_growth():
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 8))
    rope = RoPE(8, max_seq_len=4)
    for start in (0, 1, 10):  # 10 + 3 is past the 4-row table
        np.testing.assert_allclose(rope(Tensor(x), start).numpy(), ref_rope(x, np.arange(start, start + 3)), atol=1e-10)


def test_rope_depends_on_relative_position_only():
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal(16), rng.standard_normal(16)

    def score(m, n):
        return float(apply_rope(Tensor(q[None]), [m]).numpy()[0] @ apply_rope(Tensor(k[None]), [n]).numpy()[0])
    for m, n in [(5, 2), (2, 5), (7, 7), (0, 30)]:
        for shift in (1, 13, 500):
            assert score(m + shift, n + shift) == pytest.approx(score(m, n), abs=1e-9)
    assert abs(score(5, 2) - score(5, 3)) > 1e-3  # and it does depend on m - n


def test_rope_keeps_norms_and_position_zero_is_identity():
    x = np.random.default_rng(0).standard_normal((4, 8))
    out = apply_rope(Tensor(x), [0, 1, 50, 999]).numpy()
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1), atol=1e-10)
    np.testing.assert_allclose(out[0], x[0], atol=1e-15)


def test_rope_gradcheck():
    x = Tensor(np.random.default_rng(0).standard_normal((2, 3, 4)), requires_grad=True)
    assert gradcheck(lambda x: apply_rope(x, [1, 4, 9]), x)


def test_rope_bad_input():
    with pytest.raises(ValueError, match="head_dim must be even"):
        RoPE(5)
    with pytest.raises(ValueError, match="head_dim must be even"):
        Attention(6, 2, rope=True)  # head_dim 3
    with pytest.raises(ValueError, match="positions"):
        apply_rope(Tensor.zeros(3, 4), [0, 1])


# ---------------------------------------------------------------- KV cache

CACHE_CASES = [  # n_head, n_kv_head, rope, dtype
    (2, None, False, "float32"),
    (2, None, False, "float64"),
    (4, 2, False, "float64"),
    (4, 1, False, "float32"),
    (2, None, True, "float64"),
    (4, 2, True, "float32"),
    (4, 2, True, "float64"),
]


@pytest.mark.parametrize("n_head, n_kv_head, rope, dtype", CACHE_CASES)
@pytest.mark.parametrize("chunks", [[1] * 7, [3, 1, 1, 1, 1], [4, 2, 1]])  # token by token; prefill + decode
def test_kv_cache_decoding_equals_full_forward(n_head, n_kv_head, rope, dtype, chunks):
    attn = randomize(Attention(8, n_head, n_kv_head, rope=rope, dtype=dtype), scale=0.3)
    x = Tensor(np.random.default_rng(1).standard_normal((2, 7, 8)), dtype=dtype)
    full, w_full = attn(x, return_weights=True)
    cache, outs, t = KVCache(capacity=2), [], 0  # capacity 2 forces the buffers to grow twice
    with no_grad():
        for n in chunks:
            y, w = attn(x[:, t:t + n], kv_cache=cache, return_weights=True)
            assert w.shape == (2, n_head, n, t + n)
            np.testing.assert_allclose(w.numpy(), w_full.numpy()[:, :, t:t + n, :t + n], atol=tol(dtype))
            outs.append(y.numpy())
            t += n
    assert cache.length == 7 and cache.k.dtype == np.dtype(dtype)
    np.testing.assert_allclose(np.concatenate(outs, axis=1), full.numpy(), atol=tol(dtype))


def test_kv_cache_non_causal_prefill_equals_full():
    attn = randomize(Attention(8, 2, causal=False, dtype="float64"))
    x = Tensor(np.random.default_rng(0).standard_normal((1, 5, 8)))
    with no_grad():
        y = attn(x, kv_cache=KVCache())
    np.testing.assert_allclose(y.numpy(), attn(x).numpy(), atol=1e-12)


def test_kv_cache_keeps_the_new_token_differentiable():
    """With grad on, the newest token's gradient through the cached step equals the full forward's:
    the last output depends on the last input only through its own q, k, v."""
    attn = randomize(Attention(8, 4, 2, rope=True, dtype="float64"))
    x = np.random.default_rng(0).standard_normal((1, 4, 8))
    u = np.random.default_rng(1).standard_normal((1, 1, 8))
    xf = Tensor(x, requires_grad=True)
    (attn(xf)[:, 3:] * Tensor(u)).sum().backward()
    cache = KVCache()
    with no_grad():
        attn(Tensor(x[:, :3]), kv_cache=cache)
    xl = Tensor(x[:, 3:], requires_grad=True)
    (attn(xl, kv_cache=cache) * Tensor(u)).sum().backward()
    np.testing.assert_allclose(xl.grad.numpy(), xf.grad.numpy()[:, 3:], atol=1e-12)


def test_kv_cache_bad_append():
    attn = Attention(8, 2)
    cache = KVCache()
    with no_grad():
        attn(Tensor.randn(2, 3, 8), kv_cache=cache)
        with pytest.raises(ValueError, match="KVCache"):
            attn(Tensor.randn(1, 1, 8), kv_cache=cache)  # a different batch size
    cache.reset()
    assert cache.length == 0 and cache.nbytes == 0


# ---------------------------------------------------------------- weights, dropout, bad input

@pytest.mark.parametrize("causal", [True, False])
def test_return_weights(causal):
    attn = randomize(Attention(8, 2, causal=causal))
    y, w = attn(Tensor.randn(3, 6, 8), return_weights=True)
    w = w.numpy()
    assert w.shape == (3, 2, 6, 6)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-6)
    above = np.triu(np.ones((6, 6), dtype=bool), k=1)
    if causal:
        assert np.all(w[..., above] == 0)
    else:
        assert np.all(w > 0)


def test_dropout_only_in_training_and_unbiased():
    attn = randomize(Attention(4, 1, dropout=0.5, dtype="float64"))
    x = Tensor(np.random.default_rng(0).standard_normal((1, 3, 4)))
    y_eval = attn.eval()(x).numpy()
    np.testing.assert_allclose(attn(x).numpy(), y_eval, atol=0)  # eval: deterministic, no dropout
    attn.train()
    Tensor.manual_seed(0)
    draws = np.stack([attn(x).numpy() for _ in range(2000)])
    assert not np.allclose(draws[0], y_eval)
    stderr = draws.std(0).max() / math.sqrt(len(draws))
    np.testing.assert_allclose(draws.mean(0), y_eval, atol=5 * stderr)  # E[mask/(1-p)] = 1
    assert 5 * stderr < 0.2 * np.abs(y_eval).max()  # tight enough to catch a missing 1/(1-p)
    _, w = attn(x, return_weights=True)  # the weights reported are the softmax before dropout
    np.testing.assert_allclose(w.numpy().sum(-1), 1.0, atol=1e-12)


def test_dropout_path_stays_causal():
    attn = randomize(Attention(8, 2, dropout=0.5, dtype="float64"))
    x = np.random.default_rng(0).standard_normal((1, 4, 8))
    x2 = x.copy()
    x2[:, 3] += 1.0  # change only the last token
    Tensor.manual_seed(1)
    y1 = attn(Tensor(x)).numpy()
    Tensor.manual_seed(1)
    y2 = attn(Tensor(x2)).numpy()
    np.testing.assert_allclose(y1[:, :3], y2[:, :3], atol=1e-14)
    assert not np.allclose(y1[:, 3], y2[:, 3])


@pytest.mark.parametrize("build, x_shape, match", [
    (lambda: Attention(8, 2), (2, 3, 6), r"Attention: input of shape \(2, 3, 6\), expected \(B, T, 8\)"),
    (lambda: Attention(8, 2), (3, 8), r"Attention: input of shape \(3, 8\)"),
    (lambda: Attention(10, 4), None, "dim=10 is not divisible by n_head=4"),
    (lambda: Attention(12, 6, 4), None, "n_head=6 is not divisible by n_kv_head=4"),
    (lambda: Attention(8, 2, dropout=1.0), None, "dropout"),
])
def test_bad_input(build, x_shape, match):
    with pytest.raises(ValueError, match=match):
        attn = build()
        attn(Tensor.zeros(*x_shape))


def test_common_case_is_one_engine_op_and_composed_shows_the_parts():
    attn = Attention(8, 2)
    x = Tensor.randn(2, 3, 8, requires_grad=True)
    op_names = lambda y: {type(t._ctx).__name__ for t in toposort([y]) if t._ctx is not None}
    assert op_names(attn(x)) == {"Linear", "MultiHeadAttention"}
    with composed():
        assert {"Softmax", "MultiHeadAttention", "Linear"}.isdisjoint(op_names(attn(x)))


def test_engine_attention_weights_hook_and_weights_asked_for():
    """The engine's attention options that nn.Attention's one call uses: a weights_hook that replaces the
    weights by the uniform causal ones makes each output row the mean of the values so far (numpy's
    cumulative mean); multihead_attention's weights are the softmax written out in numpy, and its output
    with them asked for equals the fused output without."""
    rng = np.random.default_rng(0)
    q, k, v = (Tensor(rng.standard_normal((2, 3, 5, 4))) for _ in range(3))
    seen = []

    def uniform(w):
        seen.append(w.numpy())
        return Tensor(np.tril(np.ones((5, 5))) / np.arange(1, 6)[:, None])
    out = q.scaled_dot_product_attention(k, v, is_causal=True, weights_hook=uniform).numpy()
    np.testing.assert_allclose(out, np.cumsum(v.numpy(), -2) / np.arange(1, 6)[:, None], rtol=1e-12)
    np.testing.assert_allclose(seen[0].sum(-1), 1, rtol=1e-12)

    qkv = Tensor(rng.standard_normal((2, 5, (4 + 2 * 2) * 3)))
    y, w = qkv.multihead_attention(4, 2, is_causal=True, return_weights=True)
    a = qkv.numpy().reshape(2, 5, 8, 3).transpose(0, 2, 1, 3)                  # (B, heads, T, hs)
    scores = a[:, :4] @ np.repeat(a[:, 4:6], 2, axis=1).transpose(0, 1, 3, 2) / np.sqrt(3)
    scores = np.where(np.tril(np.ones((5, 5), bool)), scores, -np.inf)
    expected = np.exp(scores - scores.max(-1, keepdims=True))
    np.testing.assert_allclose(w.numpy(), expected / expected.sum(-1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(y.numpy(), qkv.multihead_attention(4, 2, is_causal=True).numpy(), rtol=1e-10)
