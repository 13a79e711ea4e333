"""Each fused op (tinygrad_like/fast/fused.py) equals its composite (tinygrad_like/dispatch.py: composite_of) to 1e-12
in float64, in value, gradient and second derivative, and passes gradcheck and gradgradcheck on its own."""
import math
import warnings

import numpy as np
import pytest

from tinygrad_like import Tensor, composed, dispatch, grad, gradcheck, gradgradcheck

rng = np.random.default_rng(0)


def t(*shape, scale=1.0):
    return Tensor(rng.standard_normal(shape) * scale, dtype=np.float64, requires_grad=True)


def seeded(fn, seed=5):
    """fn with the stream seeded first: the same dropout mask at every call (gradcheck makes many)."""
    def call(*xs):
        Tensor.manual_seed(seed)
        return fn(*xs)
    return call


CAUSAL_BOOL = np.tril(np.ones((5, 5), dtype=bool))
TARGETS = np.array([[1, -1, 3, 0, 2], [4, 4, -1, 1, 0]])
PADDING = CAUSAL_BOOL & np.array([True, True, True, False, False])[:, None]   # queries 3 and 4 are padding

CASES = {  # name: (function of the inputs, input shapes)
    "linear": (lambda x, w, b: x.linear(w, b), [(2, 3, 4), (5, 4), (5,)]),
    "linear without bias": (lambda x, w: x.linear(w), [(3, 4), (5, 4)]),
    "softmax last axis": (lambda x: x.softmax(-1), [(3, 4, 5)]),
    "softmax axis 1": (lambda x: x.softmax(1), [(3, 4, 5)]),
    "log_softmax": (lambda x: x.log_softmax(-1), [(3, 4, 5)]),
    "log_softmax axis 0": (lambda x: x.log_softmax(0), [(3, 4)]),
    "layernorm": (lambda x: x.layernorm(-1), [(2, 3, 6)]),
    "layernorm eps": (lambda x: x.layernorm(-1, eps=0.1), [(4, 6)]),
    "layernorm with weight and bias": (lambda x, w, b: x.layernorm(-1, 1e-5, w, b), [(2, 3, 6), (6,), (6,)]),
    "layernorm with weight only": (lambda x, w: x.layernorm(-1, 1e-5, w), [(4, 6), (6,)]),
    "layernorm with a broadcast weight": (lambda x, w, b: x.layernorm(-1, 1e-5, w, b), [(4, 6), (1,), (4, 1)]),
    "rmsnorm": (lambda x: x.rmsnorm(-1), [(2, 3, 6)]),
    "rmsnorm eps": (lambda x: x.rmsnorm(-1, eps=0.1), [(4, 6)]),
    "rmsnorm with weight": (lambda x, w: x.rmsnorm(-1, 1e-6, w), [(2, 3, 6), (6,)]),
    "rmsnorm with a broadcast weight": (lambda x, w: x.rmsnorm(-1, 1e-6, w), [(4, 6), (1,)]),
    "gelu": (lambda x: x.gelu(), [(3, 7)]),
    "silu": (lambda x: x.silu(), [(3, 7)]),
    "swiglu": (lambda x: x.swiglu(), [(2, 3, 8)]),
    "cross-entropy with ignore": (lambda x: x.sparse_categorical_crossentropy(TARGETS), [(2, 5, 6)]),
    "cross-entropy, label smoothing, sum": (lambda x: x.sparse_categorical_crossentropy(
        TARGETS, label_smoothing=0.2, reduction="sum"), [(2, 5, 6)]),
    "cross-entropy, reduction none": (lambda x: x.sparse_categorical_crossentropy(  # (10,): the fused op's own output
        TARGETS.reshape(-1), label_smoothing=0.1, reduction="none"), [(10, 6)]),
    "cross-entropy, every row": (lambda x: x.sparse_categorical_crossentropy(np.array([1, 0, 3])), [(3, 4)]),
    "attention padding mask (a row sees no key)": (lambda q, k, v: q.scaled_dot_product_attention(
        k, v, attn_mask=PADDING), [(2, 5, 4), (2, 5, 4), (2, 5, 3)]),
    "attention": (lambda q, k, v: q.scaled_dot_product_attention(k, v), [(2, 3, 5, 4), (2, 3, 5, 4), (2, 3, 5, 4)]),
    "attention causal": (lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True),
                         [(2, 5, 4), (2, 5, 4), (2, 5, 3)]),
    "attention causal, fewer queries": (lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True),
                                        [(2, 2, 4), (2, 5, 4), (2, 5, 3)]),
    "attention bool mask": (lambda q, k, v: q.scaled_dot_product_attention(k, v, attn_mask=CAUSAL_BOOL),
                            [(5, 4), (5, 4), (5, 4)]),
    "attention float mask": (lambda q, k, v: q.scaled_dot_product_attention(
                                 k, v, attn_mask=np.linspace(-1, 1, 25).reshape(5, 5)),
                             [(5, 4), (5, 4), (5, 4)]),
    "multi-head attention, causal": (lambda x: x.multihead_attention(2, is_causal=True), [(2, 5, 12)]),
    "multi-head attention, full": (lambda x: x.multihead_attention(3), [(2, 4, 18)]),
    "grouped-query attention": (lambda x: x.multihead_attention(4, 2, is_causal=True), [(2, 5, 16)]),
    "multi-query attention": (lambda x: x.multihead_attention(3, 1, is_causal=True), [(1, 4, 10)]),
    "attention broadcast batch": (lambda q, k, v: q.scaled_dot_product_attention(k, v),
                                  [(2, 3, 5, 4), (1, 3, 5, 4), (3, 5, 4)]),
    # dropout on the weights: the fused ops draw the composite's noise and use it between softmax and v
    "attention causal, dropout": (seeded(lambda q, k, v: q.scaled_dot_product_attention(
        k, v, is_causal=True, dropout_p=0.3)), [(2, 3, 5, 4), (2, 3, 5, 4), (2, 3, 5, 4)]),
    "attention padding mask, dropout, broadcast batch": (seeded(lambda q, k, v: q.scaled_dot_product_attention(
        k, v, attn_mask=PADDING, dropout_p=0.5)), [(2, 3, 5, 4), (1, 3, 5, 4), (3, 5, 4)]),
    "attention dropout, v with more batch entries": (seeded(lambda q, k, v: q.scaled_dot_product_attention(
        k, v, dropout_p=0.4)), [(3, 5, 4), (3, 5, 4), (2, 3, 5, 2)]),
    "multi-head attention, causal, dropout": (seeded(lambda x: x.multihead_attention(2, is_causal=True, dropout_p=0.3)),
                                              [(2, 5, 12)]),
    "grouped-query attention, dropout": (seeded(lambda x: x.multihead_attention(4, 2, is_causal=True, dropout_p=0.3)),
                                         [(2, 5, 16)]),
}


def value_and_grads(fn, inputs, u):
    """Value, first derivatives as backward computes them (on arrays), and as create_graph records them
    (on Tensors), and second derivatives."""
    out = fn(*inputs)
    plain = grad((out * u).sum(), inputs)
    out = fn(*inputs)
    grads = grad((out * u).sum(), inputs, create_graph=True)
    for a, b in zip(plain, grads):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=0, atol=1e-12)
    second = grad(sum(((g * g).sum() for g in grads), Tensor(np.float64(0))), inputs, allow_unused=True)
    return out.numpy(), [g.numpy() for g in grads], [None if g is None else g.numpy() for g in second]


@pytest.mark.parametrize("name", list(CASES))
def test_fused_equals_composed(name):
    check_fused_equals_composed(*CASES[name], name=name)


NOT_FUSED = {"layernorm with a broadcast weight",   # weight (1,), bias (4, 1): tensor.py takes the composed path
             "rmsnorm with a broadcast weight"}


def check_fused_equals_composed(fn, shapes, name=""):
    """The fused op that makes fn's result equals its composite (tinygrad_like/dispatch.py: composite_of, the
    function draw_graph draws inside the op's box) built on the same parents; and the twin equals
    what fn computes inside `composed()`."""
    inputs = [t(*s) for s in shapes]
    out = fn(*inputs)
    if name in NOT_FUSED:
        assert not dispatch.is_fused(out._ctx)
    else:
        assert dispatch.is_fused(out._ctx), f"{name}: made by {type(out._ctx).__name__}, not a fused op"
    u = Tensor(rng.standard_normal(out.shape), dtype=np.float64)
    fused_result = value_and_grads(fn, inputs, u)
    twin = fn if name in NOT_FUSED else (lambda *xs: dispatch.composite_of(fn(*xs)))
    twin_result = value_and_grads(twin, inputs, u)
    assert_same(fused_result, twin_result)
    with composed():
        composed_result = value_and_grads(fn, inputs, u)
    assert_same(twin_result, composed_result)


def assert_same(result, expected):
    np.testing.assert_allclose(result[0], expected[0], rtol=0, atol=1e-12)
    for a, b in zip(result[1], expected[1]):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    for a, b in zip(result[2], expected[2]):
        if a is None or b is None:
            assert a is None and b is None or np.allclose(a if a is not None else b, 0, atol=1e-12)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", list(CASES))
def test_fused_gradcheck(name):
    fn, shapes = CASES[name]
    inputs = [t(*s) for s in shapes]
    assert gradcheck(fn, *inputs)
    assert gradgradcheck(fn, *inputs)


@pytest.mark.parametrize("name, op", [("softmax", "Softmax"), ("log_softmax", "LogSoftmax"), ("gelu", "Gelu"),
                                      ("layernorm", "LayerNorm"), ("rmsnorm", "RMSNorm"), ("silu", "Silu"),
                                      ("swiglu", "SwiGLU")])
def test_one_node_fused_many_composed(name, op):
    x = t(3, 4)
    y = getattr(x, name)()
    assert type(y._ctx).__name__ == op
    with composed():
        y = getattr(x, name)()
    assert type(y._ctx).__name__ != op


def test_fused_softmax_is_stable_for_large_inputs():
    x = Tensor([[1e4, 1e4 - 1.0, -1e4]], dtype=np.float32)
    shifted = np.array([0.0, -1.0, -2e4])                  # x - max, by hand
    log_z = np.log(1 + np.exp(-1.0))                       # log Σ exp(shifted); e^-20000 is 0
    np.testing.assert_allclose(x.softmax(-1).numpy(), [np.exp(shifted - log_z)], rtol=1e-6)
    np.testing.assert_allclose(x.log_softmax(-1).numpy(), [shifted - log_z], rtol=1e-6)


def test_fused_ops_keep_float32():
    x = Tensor(rng.standard_normal((2, 3, 4)).astype(np.float32), requires_grad=True)
    w, b = (Tensor(rng.standard_normal(4).astype(np.float32), requires_grad=True) for _ in range(2))
    for y in (x.softmax(), x.log_softmax(), x.layernorm(), x.layernorm(-1, 1e-5, w, b), x.gelu(), x.rmsnorm(),
              x.rmsnorm(-1, 1e-6, w), x.silu(), x.swiglu(),
              x.scaled_dot_product_attention(x, x, is_causal=True), x.linear(Tensor(np.ones((5, 4), np.float32))),
              x.sparse_categorical_crossentropy(np.zeros((2, 3), dtype=np.int64))):
        assert y.dtype == np.float32
        y.sum().backward()
        assert x.grad.dtype == np.float32
        x.grad = None
    qkv = Tensor(rng.standard_normal((2, 300, 12)).astype(np.float32), requires_grad=True)  # several tiles
    y = qkv.multihead_attention(2, 1, is_causal=True)
    assert y.dtype == np.float32
    y.sum().backward()
    assert qkv.grad.dtype == w.grad.dtype == b.grad.dtype == np.float32


def fused_and_composed(fn, arrays, u):
    """fn's value and gradients with the fast path on, and composed: [y, *grads] twice."""
    results = []
    for fast in (True, False):
        inputs = [Tensor(a, requires_grad=True) for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("error")                      # no overflow, no 0/0 on the way
            if fast:
                y = fn(*inputs)
                assert dispatch.is_fused(y._ctx)
                results.append([y.numpy(), *[d.numpy() for d in grad((y * Tensor(u)).sum(), inputs)]])
            else:
                with composed():
                    y = fn(*inputs)
                    results.append([y.numpy(), *[d.numpy() for d in grad((y * Tensor(u)).sum(), inputs)]])
    return results


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_silu_and_swiglu_far_out(dtype):
    """At ±80 and ±1e4 (e^1e4 overflows any float) SiLU is x·σ(x) and its slope σ + x·σ(1 − σ), as
    math.exp in float64 gives them, with no warning; the fused op gives the composite's very bits."""
    x = np.array([-1e4, -80.0, -1.0, 0.0, 1.0, 80.0, 1e4], dtype)
    sigma = np.array([1 / (1 + math.exp(-v)) if v >= 0 else math.exp(v) / (1 + math.exp(v)) for v in x.tolist()])
    want_y, want_slope = x * sigma, sigma + x * sigma * (1 - sigma)
    u = np.linspace(0.5, 2, 7).astype(dtype)
    fused, plain = fused_and_composed(lambda a: a.silu(), [x], u)
    for a, b in zip(fused, plain):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(fused[0], want_y, rtol=1e-6, atol=0)
    np.testing.assert_allclose(fused[1], u * want_slope, rtol=1e-6, atol=0)
    up = np.linspace(-2, 2, 7).astype(dtype)
    fused, plain = fused_and_composed(lambda h: h.swiglu(), [np.concatenate([x, up])], u)
    for a, b in zip(fused, plain):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(fused[0], want_y * up, rtol=1e-6, atol=0)
    np.testing.assert_allclose(fused[1], np.concatenate([u * up * want_slope, u * want_y]), rtol=1e-6, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_silu_and_swiglu_numpy_bodies_give_the_composites_bits(dtype, monkeypatch):
    """In several cache-sized pieces (3 x 70 x 700 elements), the numpy bodies of the fused SiLU and SwiGLU
    give the composite's value and gradient bit for bit: the same steps in the same order."""
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "off")
    for fn, x in ((lambda a: a.silu(), rng.standard_normal((3, 70, 700)) * 4),
                  (lambda h: h.swiglu(), rng.standard_normal((3, 70, 1400)) * 4)):
        x = x.astype(dtype)
        u = rng.standard_normal(fn(Tensor(x)).shape).astype(dtype)
        fused, plain = fused_and_composed(fn, [x], u)
        for a, b in zip(fused, plain):
            np.testing.assert_array_equal(a, b)


def test_rmsnorm_of_a_row_of_zeros():
    """A row of zeros: rstd = 1/√eps, so y = 0 and dx = g·w/√eps there, dw gets nothing from it, and no
    0/0; the other rows as the composite has them."""
    x = rng.standard_normal((3, 6))
    x[1] = 0
    w, u = rng.standard_normal(6), rng.standard_normal((3, 6))
    fused, plain = fused_and_composed(lambda a, b: a.rmsnorm(-1, 1e-6, b), [x, w], u)
    for a, b in zip(fused, plain):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    assert (fused[0][1] == 0).all()
    np.testing.assert_allclose(fused[1][1], u[1] * w / math.sqrt(1e-6), rtol=1e-12)
    others = x[[0, 2]] / np.sqrt((x[[0, 2]] ** 2).mean(-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(fused[2], (u[[0, 2]] * others).sum(0), rtol=1e-12)


def test_row_reductions_equal_numpys():
    from tinygrad_like.fast.fused import array_max, array_sum
    x = rng.standard_normal((3, 4, 7))
    x[0, 0, :3] = -np.inf                                   # a masked row start
    x[1, 2, 4] = np.nan
    for axis in (-1, 1, 0):
        np.testing.assert_array_equal(array_max(x, axis), np.max(x, axis, keepdims=True))
        np.testing.assert_array_equal(array_max(x.transpose(1, 0, 2), axis),
                                      np.max(x.transpose(1, 0, 2), axis, keepdims=True))
        np.testing.assert_allclose(array_sum(x, axis), np.sum(x, axis, keepdims=True), rtol=1e-14)
    assert array_sum(np.ones((2, 0)), -1).tolist() == [[0.0], [0.0]]


def test_gelu_backward_in_cache_sized_pieces_equals_whole():
    """Past 65,536 elements GELU's backward runs piece by piece (memory.pieces); same numbers."""
    x = t(300, 257)
    (plain,) = grad(x.gelu().sum(), [x])
    (recorded,) = grad(x.gelu().sum(), [x], create_graph=True)   # Tensor ops, whole array
    np.testing.assert_allclose(plain.numpy(), recorded.numpy(), rtol=0, atol=1e-12)


PIECED_TARGETS = np.array([[0, -1, 6, 3, 1], [2, 2, -1, 5, 4], [6, 0, 1, -1, 3]])  # (3, 5), -1 ignored
FAR_ROW = Tensor(np.where(np.arange(105).reshape(3, 5, 7) < 7, 100.0, 0.0))  # row 0 is 100 above the rest

PIECED = {  # ops that run on cache-sized pieces (fused.PIECE): shapes whose rows do not split evenly
    "softmax": (lambda x: x.softmax(-1), [(3, 5, 7)]),
    "log_softmax": (lambda x: x.log_softmax(-1), [(3, 5, 7)]),
    "layernorm": (lambda x: x.layernorm(-1), [(3, 5, 7)]),
    "layernorm with weight and bias": (lambda x, w, b: x.layernorm(-1, 1e-5, w, b), [(3, 5, 7), (7,), (7,)]),
    "layernorm with weight only": (lambda x, w: x.layernorm(-1, 1e-5, w), [(3, 5, 7), (7,)]),
    "layernorm, one row per piece": (lambda x, w, b: x.layernorm(-1, 1e-5, w, b), [(2, 40), (40,), (40,)]),
    "gelu": (lambda x: x.gelu(), [(3, 5, 7)]),
    "rmsnorm": (lambda x: x.rmsnorm(-1), [(3, 5, 7)]),
    "rmsnorm with weight": (lambda x, w: x.rmsnorm(-1, 1e-6, w), [(3, 5, 7), (7,)]),
    "silu": (lambda x: x.silu(), [(3, 5, 7)]),
    "swiglu": (lambda x: x.swiglu(), [(3, 5, 14)]),
    "rmsnorm, one row per piece": (lambda x, w: x.rmsnorm(-1, 1e-6, w), [(2, 40), (40,)]),
    "softmax, rows spanning more than SHIFT_RANGE": (lambda x: (x + FAR_ROW).softmax(-1), [(3, 5, 7)]),
    "log_softmax, rows spanning more than SHIFT_RANGE": (lambda x: (x + FAR_ROW).log_softmax(-1), [(3, 5, 7)]),
    "cross-entropy, every row": (lambda x: x.sparse_categorical_crossentropy(PIECED_TARGETS % 7), [(3, 5, 7)]),
    "cross-entropy, ignore, label smoothing, none": (lambda x: (x + FAR_ROW.reshape(15, 7))
                                                     .sparse_categorical_crossentropy(PIECED_TARGETS.reshape(-1),
                                                                                      label_smoothing=0.1,
                                                                                      reduction="none"), [(15, 7)]),
    "cross-entropy, ignore, label smoothing, sum": (lambda x: x.sparse_categorical_crossentropy(
        PIECED_TARGETS, label_smoothing=0.3, reduction="sum"), [(3, 5, 7)]),
}


@pytest.mark.parametrize("name", list(PIECED))
def test_fused_in_pieces_equals_composed(monkeypatch, name):
    """With pieces of 30 elements (4 rows of 7 and a rest; a 40-wide row alone) the pieced loops
    give the composed values, gradients and second derivatives."""
    from tinygrad_like.fast import fused
    monkeypatch.setattr(fused, "PIECE", 30)
    check_fused_equals_composed(*PIECED[name])


def test_layernorm_gradient_of_weight_only(monkeypatch):
    """x a constant: only dw and db are asked for, and come out as Σ_rows g⊙x̂ and Σ_rows g."""
    from tinygrad_like.fast import fused
    monkeypatch.setattr(fused, "PIECE", 30)
    x = rng.standard_normal((4, 9, 7))
    w, b = t(7), t(7)
    u = rng.standard_normal((4, 9, 7))
    dw, db = grad((Tensor(x).layernorm(-1, 1e-5, w, b) * Tensor(u)).sum(), [w, b])
    xhat = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(dw.numpy(), (u * xhat).sum((0, 1)), rtol=1e-12)
    np.testing.assert_allclose(db.numpy(), u.sum((0, 1)), rtol=1e-12)


def float64_formulas():
    """Straightforward numpy float64 formulas of each pieced op: (forward, backward given x and g)."""
    c = np.sqrt(2 / np.pi)

    def softmax(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    def layernorm(x, w, b):
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-5) * w + b

    def layernorm_grads(x, w, b, g):
        n = x.shape[-1]
        rstd = 1 / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
        xhat = (x - x.mean(-1, keepdims=True)) * rstd
        gw = g * w
        dx = rstd / n * (n * gw - gw.sum(-1, keepdims=True) - xhat * (gw * xhat).sum(-1, keepdims=True))
        return dx, (g * xhat).sum((0, 1)), g.sum((0, 1))

    def rmsnorm(x, w):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w

    def rmsnorm_grads(x, w, g):   # y = x·w/r, r = √(mean(x²) + eps): dx = w·g/r − x·Σ(g·w·x)/(n·r³)
        r = np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6)
        dx = g * w / r - x * (g * w * x).sum(-1, keepdims=True) / (x.shape[-1] * r**3)
        return dx, (g * x / r).sum((0, 1))

    def gelu_grad(x, g):
        u = c * (x + 0.044715 * x**3)
        return g * (0.5 * (1 + np.tanh(u)) + 0.5 * x * (1 - np.tanh(u) ** 2) * c * (1 + 3 * 0.044715 * x**2))

    return {
        "softmax": (softmax, lambda x, g: [softmax(x) * (g - (g * softmax(x)).sum(-1, keepdims=True))]),
        "log_softmax": (lambda x: np.log(softmax(x)), lambda x, g: [g - softmax(x) * g.sum(-1, keepdims=True)]),
        "gelu": (lambda x: 0.5 * x * (1 + np.tanh(c * (x + 0.044715 * x**3))), lambda x, g: [gelu_grad(x, g)]),
        "layernorm": (layernorm, layernorm_grads),
        "rmsnorm": (rmsnorm, rmsnorm_grads),
    }


AFFINE = {"layernorm": 2, "rmsnorm": 1}   # the pieced ops with a weight (and bias) (700,)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "gelu", "layernorm", "rmsnorm"])
def test_pieced_float32_ops_match_a_float64_formula(name):
    """float32 values and gradients of the pieced ops, at a size of several pieces (64 x 2000 = 2
    pieces of 65,536 elements and a rest), within 1e-6 of a float64 formula written independently
    (relative to the largest entry: float32 rounding of sums over 2000 terms stays below that)."""
    forward, backward = float64_formulas()[name]
    x64 = rng.standard_normal((64, 3, 700)) * 3
    g64 = rng.standard_normal(x64.shape)
    x = Tensor(x64.astype(np.float32), requires_grad=True)
    params = [Tensor(rng.standard_normal(700).astype(np.float32), requires_grad=True)
              for _ in range(AFFINE.get(name, 0))]
    y = {"layernorm": lambda: x.layernorm(-1, 1e-5, *params),
         "rmsnorm": lambda: x.rmsnorm(-1, 1e-6, *params)}.get(name, getattr(x, name))()
    x64_in, params64 = x.numpy().astype(np.float64), [p.numpy().astype(np.float64) for p in params]
    want_y = forward(x64_in, *params64)
    g = g64.astype(np.float32)
    y.backward(g)
    want_grads = backward(x64_in, *params64, g.astype(np.float64))
    got = [y.numpy(), x.grad.numpy()] + [p.grad.numpy() for p in params]
    # A gradient holds a row's sum of 700 products with g (softmax's Σ g·y, whose weights y sum to 1): float32
    # pairwise rounding of such a sum is within ceil(log2 700) = 10 roundings of ε32 times Σ|terms| <= max|g|,
    # which can exceed 1e-6 of the largest entry, so the gradients get that bound on top.
    summed = np.ceil(np.log2(700)) * np.finfo(np.float32).eps * np.abs(g64).max()
    for i, (a, b) in enumerate(zip(got, [want_y, *want_grads])):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6 * np.abs(b).max() + (summed if i else 0))


def test_softmax_shift_one_number_or_each_rows_max():
    """A piece spanning at most SHIFT_RANGE is shifted by its max; otherwise (a wider span, a −inf mask,
    a NaN) by each row's max. Both give softmax to float32 rounding, masked entries exactly 0."""
    from tinygrad_like.fast.fused import SHIFT_RANGE, softmax_shift
    narrow = rng.standard_normal((4, 6)).astype(np.float32)
    narrow = narrow / (narrow.max() - narrow.min()) * (SHIFT_RANGE - 1)  # the piece spans less than SHIFT_RANGE
    narrow[2] -= 1                                              # a row below the others, still in range
    assert np.ndim(softmax_shift(narrow)) == 0 and softmax_shift(narrow) == narrow.max()
    masked = narrow.copy()
    masked[1, 3:] = -np.inf
    wide = narrow.copy()
    wide[0, 0] = narrow.min() + SHIFT_RANGE + 1
    with_nan = narrow.copy()
    with_nan[3, 2] = np.nan
    for x in (masked, wide, with_nan):
        np.testing.assert_array_equal(softmax_shift(x), x.max(-1, keepdims=True))
    for x in (narrow, masked, wide):
        x64 = x.astype(np.float64)
        e = np.exp(x64 - x64.max(-1, keepdims=True))
        want = e / e.sum(-1, keepdims=True)
        got = Tensor(x).softmax(-1).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
        with np.errstate(divide="ignore"):                     # log 0 = −inf where the mask is
            want_log = np.log(want)
        np.testing.assert_allclose(Tensor(x).log_softmax(-1).numpy(), want_log, rtol=1e-6, atol=1e-6)
    assert (Tensor(masked).softmax(-1).numpy()[1, 3:] == 0).all()
    assert np.isnan(Tensor(with_nan).softmax(-1).numpy()[3]).all()


def test_shared_pieces_are_twice_as_big_on_more_than_one_thread():
    """shared_piece: PIECE elements with one thread (the cache), twice that when the pool shares a chain
    among threads (the GIL's hand-overs), PIECE again for a job too small to share."""
    import tinygrad_like
    from tinygrad_like.fast import fused, pool
    try:
        tinygrad_like.set_num_threads(1)
        assert fused.shared_piece(1 << 30) == fused.PIECE
        tinygrad_like.set_num_threads(2)
        assert fused.shared_piece(1 << 30) == 2 * fused.PIECE
        assert fused.shared_piece(pool.MIN_BYTES - 1) == fused.PIECE
    finally:
        tinygrad_like.set_num_threads(1)


@pytest.mark.parametrize("op", ["gelu", "gelu_erf", "silu", "swiglu"])
def test_numpy_bodies_give_the_same_bits_on_one_and_two_threads(op, monkeypatch):
    """Kernels off: the chains cut into pieces of PIECE on one thread and of 2·PIECE on two give the same
    bits, forward and backward, on a shape whose pieces do not come out even."""
    import tinygrad_like
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "off")
    local = np.random.default_rng(77)
    shape = (3, 7, 65_539) if op != "swiglu" else (3, 7, 2 * 32_771)
    xn = (local.standard_normal(shape) * 3).astype(np.float32)
    gn = local.standard_normal(shape[:-1] + (shape[-1] // 2 if op == "swiglu" else shape[-1],)).astype(np.float32)
    run = {"gelu": lambda x: x.gelu(), "gelu_erf": lambda x: x.gelu(approximate="none"), "silu": lambda x: x.silu(),
           "swiglu": lambda x: x.swiglu()}[op]
    results = []
    try:
        for threads in (1, 2):
            tinygrad_like.set_num_threads(threads)
            x = Tensor(xn, requires_grad=True)
            y = run(x)
            y.backward(gn)
            results.append((y.numpy().tobytes(), x.grad.numpy().tobytes()))
    finally:
        tinygrad_like.set_num_threads(1)
    assert results[0] == results[1]
