"""Every fused op and composed nn op at extreme inputs, forward and gradient, float32 and float64,
on the fused path and inside `composed()`: one table.

Each row: an op, the input rows, and an independent float64 reference for the output and for the
vector-Jacobian product uᵀJ (the gradient of Σ u·y, u a fixed random direction). References are
written apart from the code under test: log-sum-exp by np.logaddexp.reduce, the logistic by its two
one-sided forms, normalisations in two passes; where the reference is NaN, PyTorch gives NaN too
(a softmax row that is all −inf), and we assert NaN. Values PyTorch 2.13 printed are in the tests below
the table. Inputs: ±1e4 and ±1e30 (float64 only: 1e30 overflows float32's square), rows of equal
values, rows masked (−inf) but one, zero-variance rows, a target whose logit is very negative.
"""
import contextlib
import math

import numpy as np
import pytest

from nn.norm import RMSNorm
from tinygrad_like import Tensor, composed, gradcheck
from tinygrad_like.functional import cross_entropy

INF = np.inf
BIG = {np.float32: 1e4, np.float64: 1e30}   # the largest scale each dtype is audited at (and 1e4 for both)


# ---------------------------------------------------------------- independent float64 references

def lse(x):
    return np.logaddexp.reduce(x, axis=-1, keepdims=True)


def log_softmax_pairwise(x):
    """log softmax(x)_i = −log Σ_j exp(x_j − x_i), from the differences themselves (so no large number
    is ever added to a small one: at 1e30, lse(x) − x_i would lose the log 4 of four equal entries)."""
    masked = np.isneginf(x)
    with np.errstate(invalid="ignore"):   # −inf − (−inf) = NaN only where np.where puts −inf instead
        d = np.where(masked[..., None, :], -INF, x[..., None, :] - x[..., :, None])   # d[i, j] = x_j − x_i
    out = -np.logaddexp.reduce(d, axis=-1)
    return np.where(masked.all(-1, keepdims=True), np.nan, out)   # all −inf: NaN, as PyTorch gives


def expit(x):
    """σ(x) from its two one-sided forms, each free of overflow."""
    e = np.exp(-np.abs(x))                                              # ≤ 1: cannot overflow
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def ref_softmax(x, u):
    y = np.exp(log_softmax_pairwise(x))
    return y, y * (u - (u * y).sum(-1, keepdims=True))


def ref_log_softmax(x, u):
    y = log_softmax_pairwise(x)
    return y, u - np.exp(y) * u.sum(-1, keepdims=True)


def ref_logsumexp(x, u):
    return lse(x)[..., 0], u[..., None] * np.exp(log_softmax_pairwise(x))


def ref_layernorm(x, u, eps=1e-5):
    mean = x.sum(-1, keepdims=True) / x.shape[-1]
    var = ((x - mean) ** 2).sum(-1, keepdims=True) / x.shape[-1]
    xhat = (x - mean) / np.sqrt(var + eps)
    dx = (u - u.mean(-1, keepdims=True) - xhat * (u * xhat).mean(-1, keepdims=True)) / np.sqrt(var + eps)
    return xhat, dx


def ref_rmsnorm(x, u, eps=1e-6):
    r = 1 / np.sqrt((x / 1e10) ** 2 @ np.full((x.shape[-1], 1), 1e20 / x.shape[-1]) + eps)  # mean x², scaled
    return x * r, r * u - x * r ** 3 * (u * x).mean(-1, keepdims=True)


C_GELU = math.sqrt(2 / math.pi)


def ref_gelu(x, u):
    xs = np.clip(x, -1e20, 1e20)                # tanh is ±1 long before; keeps x³ finite
    t = np.tanh(C_GELU * (xs + 0.044715 * xs ** 3))
    slope = 0.5 * (1 + t) + 0.5 * xs * (1 - t * t) * C_GELU * (1 + 3 * 0.044715 * xs ** 2)
    return 0.5 * x * (1 + t), u * slope


def ref_sigmoid(x, u):
    s = expit(x)
    return s, u * s * (1 - s)


def ref_silu(x, u):
    s = expit(x)
    return x * s, u * s * (1 + x * (1 - s))


def ref_swiglu(x, u):
    n = x.shape[-1] // 2
    a, b = x[..., :n], x[..., n:]
    y, ga = ref_silu(a, u * b)
    return y * b, np.concatenate([ga, u * a * expit(a)], -1)


def ref_cross_entropy(targets, ignore_index=-100, label_smoothing=0.0):
    def ref(x, u):
        rows = np.nonzero(targets != ignore_index)[0]
        logp = log_softmax_pairwise(x[rows])
        goal = np.full(logp.shape, label_smoothing / logp.shape[-1])        # the smoothed target distribution
        goal[np.arange(len(rows)), targets[rows]] += 1 - label_smoothing
        per_row = -(goal * logp).sum(-1)
        grad = np.zeros_like(x)
        grad[rows] = (np.exp(logp) - goal) * u / len(rows)
        return per_row.mean(), grad
    return ref


# ---------------------------------------------------------------- the table

def rows(*r):
    return np.array(r, dtype=np.float64)


def ce(targets, **kw):
    t = np.array(targets)
    return (lambda x: cross_entropy(x, Tensor(t), **kw)), ref_cross_entropy(t, **kw)


CASES = {
    # op: (ours, reference, input rows as a function of the scale s)
    "softmax": (lambda x: x.softmax(-1), ref_softmax,
                lambda s: rows([s, -s, 0, 1], [s, s, s, s], [-s, -s, -s, -s], [-INF, -INF, 3, -INF], [0, 0, 0, 0])),
    "log_softmax": (lambda x: x.log_softmax(-1), ref_log_softmax,
                    lambda s: rows([s, -s, 0, 1], [s, s, s, s], [-s, -s, -s, s], [-INF, 2, -INF, -INF])),
    "logsumexp": (lambda x: x.logsumexp(-1), ref_logsumexp,
                  lambda s: rows([s, -s, 0, 1], [s, s, s, s], [-s, -s, -s, -s], [-INF, -INF, 1, -INF])),
    "cross_entropy": (*ce([2, 0, 1, 3]),
                      lambda s: rows([s, -s, 0, 1], [-s, 0, 0, 0], [s, s, s, s], [0.5, -s, s, -s])),
    "cross_entropy target very negative": (*ce([0, 0, 0]),
                                           lambda s: rows([-s, 0, 0, 0], [-s, s, 0, 0], [-s, -s, -s, -s])),
    "cross_entropy ignore_index": (*ce([1, -100, 3], ignore_index=-100),
                                   # the ignored row holds ±inf: it must not reach the loss or the other rows'
                                   # gradients (PyTorch gives that row a NaN gradient; ours is 0, its true value)
                                   lambda s: rows([s, -s, 0, 1], [INF, -INF, 0, 0], [-s, s, 0, 0])),
    "cross_entropy label_smoothing": (*ce([1, 0, 3], label_smoothing=0.1),
                                      lambda s: rows([s, -s, 0, 1], [-s, s, 0, 0], [s, s, s, s])),
    "layernorm": (lambda x: x.layernorm(-1), ref_layernorm,
                  lambda s: rows([s, -s, s, -s], [7, 7, 7, 7], [s, s, s, s], [0, 0, 0, 1e-3], [s, 0, 0, 0])),
    "rmsnorm": (lambda x: RMSNorm(4, dtype=x.dtype)(x), ref_rmsnorm,
                lambda s: rows([s, -s, s, -s], [7, 7, 7, 7], [0, 0, 0, 0], [s, 0, 0, 1])),
    "gelu": (lambda x: x.gelu(), ref_gelu, lambda s: rows([s, -s, 0, 1], [-3, 3, -10, 10])),
    "sigmoid": (lambda x: x.sigmoid(), ref_sigmoid, lambda s: rows([s, -s, 0, 1], [-100, 100, -40, 40])),
    "silu": (lambda x: x.silu(), ref_silu, lambda s: rows([s, -s, 0, 1], [-100, 100, -40, 40])),
    "swiglu": (lambda x: x[:, :2].silu() * x[:, 2:], ref_swiglu, lambda s: rows([s, -s, 2, 3], [-s, 1, 1, s])),
}
PARAMS = [(op, dtype, scale, path) for op in CASES for dtype in (np.float32, np.float64)
          for scale in sorted({1e4, BIG[dtype]}) for path in ("fused", "composed")]


@pytest.mark.parametrize("op, dtype, scale, path", PARAMS,
                         ids=[f"{o}-{d.__name__}-{s:g}-{p}" for o, d, s, p in PARAMS])
def test_extreme_inputs_forward_and_gradient(op, dtype, scale, path):
    ours, reference, make = CASES[op]
    x64 = make(scale)
    x = Tensor(x64.astype(dtype), requires_grad=True)
    with composed() if path == "composed" else contextlib.nullcontext():
        y = ours(x)
    u64 = np.random.default_rng(0).uniform(0.5, 1.5, y.shape)      # a direction with no zero entries
    (y * Tensor(u64.astype(dtype))).sum().backward()
    y_ref, g_ref = reference(x64.astype(dtype).astype(np.float64), u64.astype(dtype).astype(np.float64))
    assert y.dtype == dtype and x.grad.dtype == dtype
    # float32: relative to float32's epsilon, absolute relative to the scale of the inputs' entries
    rtol, atol = (1e-5, 1e-5) if dtype == np.float32 else (1e-12, 1e-12)
    np.testing.assert_allclose(y.numpy(), y_ref, rtol=rtol, atol=atol, err_msg=f"{op} forward")
    np.testing.assert_allclose(x.grad.numpy(), g_ref, rtol=rtol, atol=atol, err_msg=f"{op} gradient")


# ---------------------------------------------------------------- what PyTorch 2.13 printed

ISSUE_LOGITS = np.array([[1257.30221093, -1321.04863291, 6404.22650443, 1049.00117153, -5356.69373161],
                         [3615.95054909, 13040.0004513, 9470.80963129, -7037.35235807, -12654.21471046],
                         [-6232.74462537, 413.25979347, -23250.30774639, -2187.91663933, -12459.10947253],
                         [-7322.67354703, -5442.58982857, -3163.00156369, 4116.30536374, 10425.13369443]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("path", ["fused", "composed"])
def test_cross_entropy_at_logit_scale_1e4_matches_pytorch(dtype, path):
    """default_rng(0).standard_normal((4, 5)) * 1e4 with targets [0, 1, 2, 3] (the issue's case; it
    gave inf before). PyTorch: 8779.830041011279 (float64), 8779.830078125 (float32), the gradient
    ±0.25 at (row, argmax) and (row, target) and 0 elsewhere; with targets [0, −100, 2, 3] and
    label_smoothing=0.1: 11397.689095950627 (float64), 11397.6884765625 (float32)."""
    ctx = (lambda: composed()) if path == "composed" else contextlib.nullcontext
    x = Tensor(ISSUE_LOGITS.astype(dtype), requires_grad=True)
    with ctx():
        loss = x.sparse_categorical_crossentropy(np.array([0, 1, 2, 3]))
    loss.backward()
    expected = 8779.830041011279 if dtype == np.float64 else 8779.830078125
    assert loss.dtype == dtype and loss.item() == pytest.approx(expected, rel=1e-7)
    grad = np.zeros((4, 5))
    grad[[0, 0, 2, 2, 3, 3], [0, 2, 2, 1, 3, 4]] = [-0.25, 0.25, -0.25, 0.25, -0.25, 0.25]
    np.testing.assert_allclose(x.grad.numpy(), grad, atol=1e-7)
    with ctx():
        smoothed = cross_entropy(Tensor(ISSUE_LOGITS.astype(dtype)), np.array([0, -100, 2, 3]), label_smoothing=0.1)
    expected = 11397.689095950627 if dtype == np.float64 else 11397.6884765625
    assert smoothed.item() == pytest.approx(expected, rel=1e-7)


def test_a_softmax_row_that_is_all_minus_inf_is_nan_as_in_pytorch():
    """torch.tensor([-inf, -inf]).softmax(0) is tensor([nan, nan]): a plain softmax has no answer there
    (attention does: see test_attention_fully_masked_row_gives_zero)."""
    for path in (contextlib.nullcontext(), composed()):
        with path, np.errstate(invalid="ignore"):   # the NaN asserted below is the expected answer
            assert np.isnan(Tensor([-INF, -INF]).softmax(-1).numpy()).all()


# ---------------------------------------------------------------- attention with masks

def ref_attention(q, k, v, allowed):
    """softmax over the allowed keys only, each row by itself; a row with none allowed is 0 (PyTorch)."""
    out = np.zeros(q.shape[:-1] + v.shape[-1:])
    for index in np.ndindex(*q.shape[:-1]):
        keys = np.nonzero(allowed[index[-1]])[0]
        if len(keys):
            s = np.array([q[index] @ k[index[:-1]][j] for j in keys]) / math.sqrt(q.shape[-1])
            w = np.exp(s - np.logaddexp.reduce(s))
            out[index] = w @ v[index[:-1]][keys]
    return out


MASKS = {
    "one row fully masked": np.array([[1, 1, 0], [0, 0, 0], [1, 0, 0]], bool),
    "fully masked but one": np.array([[0, 0, 1], [0, 1, 0], [1, 0, 0]], bool),
    "all rows fully masked": np.zeros((3, 3), bool),
}


@pytest.mark.parametrize("mask_name", MASKS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("path", ["fused", "composed"])
@pytest.mark.parametrize("as_float_mask", [False, True])
def test_attention_fully_masked_row_gives_zero(mask_name, dtype, path, as_float_mask):
    """PyTorch 2.13's scaled_dot_product_attention gives 0 for a query that sees no key (boolean mask
    all False, or a float mask all −inf), and gradients 0 through it; no NaN anywhere."""
    allowed = MASKS[mask_name]
    rng = np.random.default_rng(1)
    q64, k64, v64 = (rng.standard_normal((2, 3, 4)) for _ in range(3))
    q, k, v = (Tensor(a.astype(dtype), requires_grad=True) for a in (q64, k64, v64))
    mask = np.where(allowed, 0.0, -INF).astype(dtype) if as_float_mask else allowed
    with composed() if path == "composed" else contextlib.nullcontext():
        out = q.scaled_dot_product_attention(k, v, attn_mask=Tensor(mask))
    (out * out).sum().backward()
    np.testing.assert_allclose(out.numpy(), ref_attention(q64, k64, v64, allowed),
                               rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6 if dtype == np.float32 else 1e-12)
    for g in (q.grad, k.grad, v.grad):
        assert np.isfinite(g.numpy()).all()
    dead = ~allowed.any(-1)
    assert (q.grad.numpy()[:, dead] == 0).all()
    if dtype == np.float64:
        with composed() if path == "composed" else contextlib.nullcontext():
            assert gradcheck(lambda a, b, c: a.scaled_dot_product_attention(b, c, attn_mask=Tensor(mask)),
                             Tensor(q64, requires_grad=True), Tensor(k64, requires_grad=True),
                             Tensor(v64, requires_grad=True))


@pytest.mark.parametrize("path", ["fused", "composed"])
def test_attention_at_score_scale_1e4_in_float32(path):
    """Scores of ±1e4 (q·k/√d with entries ~ 200): the softmax picks the top key, as a float64 reference does."""
    rng = np.random.default_rng(2)
    q64, k64 = rng.standard_normal((1, 3, 4)) * 100, rng.standard_normal((1, 3, 4)) * 100
    v64 = rng.standard_normal((1, 3, 4))
    q, k, v = (Tensor(a.astype(np.float32), requires_grad=True) for a in (q64, k64, v64))
    with composed() if path == "composed" else contextlib.nullcontext():
        out = q.scaled_dot_product_attention(k, v, is_causal=True)
    out.sum().backward()
    causal = np.tril(np.ones((3, 3), bool))
    np.testing.assert_allclose(out.numpy(), ref_attention(q.numpy().astype(np.float64), k.numpy().astype(np.float64),
                                                          v.numpy().astype(np.float64), causal), atol=1e-5)
    assert all(np.isfinite(t.grad.numpy()).all() for t in (q, k, v))


# ---------------------------------------------------------------- gradchecks of the new ops, float64

@pytest.mark.parametrize("path", ["fused", "composed"])
@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.2}, {"reduction": "sum"}, {"reduction": "none"},
                                {"ignore_index": 1, "label_smoothing": 0.1, "reduction": "none"}])
def test_cross_entropy_gradcheck(path, kw):
    rng = np.random.default_rng(3)
    x = Tensor(rng.standard_normal((2, 3, 5)) * 3, requires_grad=True)
    targets = np.array([[0, 1, 4], [1, 2, 3]])
    with composed() if path == "composed" else contextlib.nullcontext():
        assert gradcheck(lambda a: a.sparse_categorical_crossentropy(targets, **kw), x)


@pytest.mark.parametrize("axis, keepdim", [(-1, False), (0, True), ((0, 2), False)])
def test_logsumexp_gradcheck_and_value(axis, keepdim):
    rng = np.random.default_rng(4)
    x64 = rng.standard_normal((2, 3, 4)) * 10
    x = Tensor(x64, requires_grad=True)
    assert gradcheck(lambda a: a.logsumexp(axis, keepdim), x)
    expected = np.log(np.exp(x64).sum(axis=axis, keepdims=keepdim))   # safe at this scale
    np.testing.assert_allclose(x.logsumexp(axis, keepdim).numpy(), expected, rtol=1e-13)


# ---------------------------------------------------------------- no numbers to normalise

EMPTY_NORMALISATIONS = {
    "softmax": lambda x, w: x.softmax(-1),
    "log_softmax": lambda x, w: x.log_softmax(-1),
    "layernorm": lambda x, w: x.layernorm(-1, weight=w, bias=w),
    "rmsnorm": lambda x, w: x.rmsnorm(-1, weight=w),
}


@pytest.mark.parametrize("shape", [(3, 0), (0, 4), (2, 0, 3)])
@pytest.mark.parametrize("op", EMPTY_NORMALISATIONS)
@pytest.mark.parametrize("path", ["fused", "composed"])
def test_normalising_an_empty_tensor_gives_empty_results_as_in_pytorch(shape, op, path):
    """torch.nn.functional.layer_norm(torch.zeros(3, 0), (0,)) (and rms_norm, softmax, log_softmax) gives a
    (3, 0) tensor, and backward gives x.grad (3, 0) and weight.grad (0,), without a warning. Before: the
    fused LayerNorm raised ZeroDivisionError, softmax a ShapeError about argmax, the composites warned 0/0."""
    import warnings
    x = Tensor(np.zeros(shape, np.float32), requires_grad=True)
    w = Tensor(np.ones(shape[-1:], np.float32), requires_grad=True)
    with composed() if path == "composed" else contextlib.nullcontext(), warnings.catch_warnings():
        warnings.simplefilter("error")                          # any numpy warning fails the test
        y = EMPTY_NORMALISATIONS[op](x, w)
        y.sum().backward()
    assert y.shape == shape and y.dtype == np.float32
    assert x.grad.shape == shape
    if op in ("layernorm", "rmsnorm"):
        assert w.grad.shape == shape[-1:] and not w.grad.numpy().any()
