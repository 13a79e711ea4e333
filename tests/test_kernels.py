"""The compiled kernels of the `fast` extra (tinygrad_like/fast/kernels/) equal the composed ops of the
core: to 1e-12 in float64, values and gradients, and within float32 rounding in float32 (FLOAT32_ULPS
below), in both variants (numba, and C where rows.c has the op and a compiler is found)."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")

from tinygrad_like import Tensor, composed, grad  # noqa: E402
from tinygrad_like.fast import fused, kernels, pool  # noqa: E402
from tinygrad_like.fast.kernels import arrays as K  # noqa: E402
from tinygrad_like.fast.kernels import c_build, ready  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
rng = np.random.default_rng(0)
TARGETS = rng.integers(0, 9, 24)


@pytest.fixture(autouse=True)
def kernels_as_installed(monkeypatch):
    """These tests test the kernels: a TINYGRAD_LIKE_KERNELS=off in the caller's environment (a run of the
    suite with the kernels off) must not turn them into tests of numpy against itself, or fail them.
    Tests that set the variable themselves do so after this."""
    monkeypatch.delenv("TINYGRAD_LIKE_KERNELS", raising=False)


def layernorm_kernels(variant, x, w, b, g):
    y, xhat, rstd = K.layernorm_forward(x, w, b, 1e-5, variant)
    return y, K.layernorm_backward(g, xhat, rstd, w, (True, True, True), variant)


def rmsnorm_kernels(variant, x, w, g):
    y, rstd = K.rmsnorm_forward(x, w, 1e-6, variant)
    return y, K.rmsnorm_backward(g, x, rstd, w, variant)


def row_kernels(op):
    def run(variant, x, g):
        y = getattr(K, f"{op}_forward")(x, variant)
        return y, (getattr(K, f"{op}_backward")(g, y if op in ("softmax", "log_softmax") else x, variant),)
    return run


def swiglu_kernels(variant, x, g):
    return K.swiglu_forward(x, variant), (K.swiglu_backward(g, x, variant),)


def cross_entropy_kernels(smoothing):
    def run(variant, x, g):
        probs, losses = K.cross_entropy_forward(x, TARGETS, smoothing, variant)
        return losses, (K.cross_entropy_backward(probs, TARGETS, smoothing, g, variant),)
    return run


CASES = {  # op: (kernels of (variant, *inputs, upstream gradient) -> (value, grads), composition, input shapes)
    "layernorm": (layernorm_kernels, lambda x, w, b: x.layernorm(-1, 1e-5, w, b), [(4, 6, 37), (37,), (37,)]),
    "rmsnorm": (rmsnorm_kernels, lambda x, w: x.rmsnorm(-1, 1e-6, w), [(4, 6, 37), (37,)]),
    "softmax": (row_kernels("softmax"), lambda x: x.softmax(-1), [(4, 6, 37)]),
    "softmax, short rows": (row_kernels("softmax"), lambda x: x.softmax(-1), [(4, 6, 11)]),   # softmax_short_rows
    "log_softmax": (row_kernels("log_softmax"), lambda x: x.log_softmax(-1), [(4, 6, 37)]),
    "gelu": (row_kernels("gelu"), lambda x: x.gelu(), [(4, 6, 37)]),
    "silu": (row_kernels("silu"), lambda x: x.silu(), [(4, 6, 37)]),
    "swiglu": (swiglu_kernels, lambda x: x.swiglu(), [(4, 6, 2 * 37)]),
    "cross_entropy": (cross_entropy_kernels(0.0), lambda x: x.sparse_categorical_crossentropy(
        TARGETS, reduction="none"), [(24, 9)]),
    "cross_entropy, label smoothing": (cross_entropy_kernels(0.2), lambda x: x.sparse_categorical_crossentropy(
        TARGETS, reduction="none", label_smoothing=0.2), [(24, 9)]),
}
VARIANTS = [(op, v) for op in CASES for v in ("numba", "c") if v == "numba" or op.split(",")[0] in K.C_OPS]


def need(variant):
    if variant == "c" and c_build.library() is None:
        pytest.skip(f"no C kernels here: {c_build.reason()}")


def composite(fn, arrays, g):
    """Value and gradients of the core's composed op (inside `composed()`), in float64."""
    inputs = [Tensor(a.astype(np.float64), requires_grad=True) for a in arrays]
    with composed():
        y = fn(*inputs)
        grads = grad((y * Tensor(g.astype(np.float64))).sum(), inputs)
    return y.numpy(), [d.numpy() for d in grads]


def inputs_of(shapes, dtype, scale=3.0):
    arrays = [(rng.standard_normal(s) * scale).astype(dtype) for s in shapes]
    out_shape = (shapes[0][0],) if len(shapes[0]) == 2 and shapes[0][1] == 9 else shapes[0]   # cross-entropy: (M,)
    if shapes == CASES["swiglu"][2]:
        out_shape = shapes[0][:-1] + (shapes[0][-1] // 2,)                                     # swiglu: half as wide
    return arrays, rng.standard_normal(out_shape).astype(dtype)


def run_case(op, variant, dtype):
    """(the kernels' value and gradients, the float64 composition's, the inputs, the upstream gradient)."""
    kernels, fn, shapes = CASES[op]
    arrays, g = inputs_of(shapes, dtype)
    y, grads = kernels(variant, *arrays, g)
    want_y, want_grads = composite(fn, arrays, g)
    return [y, *grads], [want_y, *want_grads], arrays, g


@pytest.mark.parametrize("op, variant", VARIANTS)
def test_kernel_equals_composite_float64(op, variant):
    need(variant)
    got, want, _, _ = run_case(op, variant, np.float64)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.dtype == np.float64 and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


# float32: every value within FLOAT32_ULPS·√n float32 epsilons of the largest entry of its row, every
# gradient within as many of the largest entry of its row plus the largest of the upstream gradient's row
# (a gradient is a difference of terms of the upstream gradient's size: softmax's (g − Σg⊙y)⊙y), n the
# number of terms a sum adds (the row's length, or the rows for a weight's gradient; 1 for the elementwise
# ops), against the float64 composition of the same float32 inputs. The composition itself run in float32
# stays within the same bound (checked below), so the bound is what float32 rounding costs, not slack.
FLOAT32_ULPS = 4


def float32_bound(want: np.ndarray, n: int, g=None) -> np.ndarray:
    row_max = lambda a: np.abs(a).max(-1, keepdims=True) if a.ndim > 1 else np.abs(a).max()
    scale = row_max(want) + (0 if g is None else row_max(g.reshape(want.shape) if g.size == want.size else g))
    return FLOAT32_ULPS * np.sqrt(n) * np.finfo(np.float32).eps * np.maximum(scale, np.finfo(np.float32).tiny)


def check_float32(op, got, want, x, g):
    for i, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == np.float32
        err = np.abs(a.astype(np.float64) - b)
        n = 1 if op in ("gelu", "gelu_erf", "silu", "swiglu") else max(x.shape[-1], x.size // b.size)
        upstream = None if i == 0 else (g if g.ndim == b.ndim else g[:, None])
        assert (err <= float32_bound(b, n, upstream)).all(), f"{op}: {err.max()} off"


@pytest.mark.parametrize("op, variant", VARIANTS)
def test_kernel_float32_within_rounding(op, variant):
    need(variant)
    got, want, arrays, g = run_case(op, variant, np.float32)
    check_float32(op, got, want, arrays[0], g)


@pytest.mark.parametrize("op", list(CASES))
def test_float32_bound_holds_for_the_composition(op):
    """The bound is float32 rounding: the core's own composition in float32 meets it too."""
    _, fn, shapes = CASES[op]
    arrays, g = inputs_of(shapes, np.float32)
    inputs = [Tensor(a, requires_grad=True) for a in arrays]
    with composed():
        y = fn(*inputs)
        grads = grad((y * Tensor(g)).sum(), inputs)
    want_y, want_grads = composite(fn, arrays, g)
    check_float32(op, [y.numpy(), *[d.numpy() for d in grads]], [want_y, *want_grads], arrays[0], g)


@pytest.mark.parametrize("variant", ["numba", "c"])
def test_softmax_kernels_masked_large_and_nan_rows(variant):
    """A −inf entry gets probability 0 exactly, logits of 1e4 do not overflow, a NaN spreads over its
    row only, a row masked whole gives NaN: as numpy's body does."""
    need(variant)
    x = rng.standard_normal((4, 8))
    x[0, 3:] = -np.inf
    x[1] += 1e4
    x[2, 5] = np.nan
    x[3] = -np.inf
    with np.errstate(invalid="ignore"):
        want = np.exp(x - x.max(-1, keepdims=True))
        want /= want.sum(-1, keepdims=True)
    got = K.softmax_forward(x, variant)
    np.testing.assert_array_equal(got[0, 3:], 0)
    np.testing.assert_allclose(got[:2], want[:2], rtol=0, atol=1e-15)
    assert np.isnan(got[2]).all() and np.isnan(got[3]).all()
    probs, losses = K.cross_entropy_forward(x[:2], np.array([0, 1]), 0.0, variant)
    np.testing.assert_allclose(probs, want[:2], rtol=0, atol=1e-15)
    assert np.isfinite(losses).all()


FAR_OUT = [-1e4, -80.0, -1.0, 0.0, 1.0, 80.0, 1e4, np.nan]  # e^1e4 overflows every float


@pytest.mark.parametrize("variant", ["numba", "c"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_silu_and_swiglu_kernels_far_out_and_at_nan(variant, dtype):
    """At ±80 and ±1e4 the kernels give what the numpy bodies and the composite give (x·σ(x) is x or 0
    far out, the slope 1 or 0), and a NaN stays a NaN in its own place: to 1e-12 in float64, 1e-6 (a few
    float32 roundings) relative in float32."""
    need(variant)
    rtol = 1e-12 if dtype == np.float64 else 1e-6
    x = np.array(FAR_OUT, dtype)
    up, g = np.linspace(-2, 2, len(x)).astype(dtype), np.linspace(0.5, 2, len(x)).astype(dtype)
    packed = np.concatenate([x, up])                                                 # [gate | up]
    got = [K.silu_forward(x, variant), K.silu_backward(g, x, variant), K.swiglu_forward(packed, variant),
           K.swiglu_backward(g, packed, variant)]
    body = [fused.silu_forward(x), fused.silu_backward(g, x), fused.swiglu_forward(packed),
            fused.swiglu_backward(g, packed)]
    silu_y, (silu_dx,) = composite(lambda a: a.silu(), [x], g)
    swiglu_y, (swiglu_dx,) = composite(lambda h: h.swiglu(), [packed], g)
    want = [silu_y, silu_dx, swiglu_y, swiglu_dx]
    for a, b, c in zip(got, body, want):
        assert a.dtype == dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=0)
        np.testing.assert_allclose(a, c, rtol=rtol, atol=0)
    assert np.isnan(got[0]).tolist() == np.isnan(x).tolist()
    np.testing.assert_array_equal(got[0][[0, -2]], [0, 1e4])
    np.testing.assert_array_equal(got[1][[0, -2]], [0, g[-2]])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rmsnorm_kernels_zero_and_nan_rows(dtype):
    """A row of zeros gives y = 0 and dx = g·w/√eps (eps keeps it from 0/0); a NaN makes its own row NaN
    (and dw, a sum over rows); other rows as the numpy body and the composite have them."""
    x = rng.standard_normal((3, 37)).astype(dtype)
    x[0], x[2, 5] = 0, np.nan
    w, g = (rng.standard_normal(s).astype(dtype) for s in ((37,), (3, 37)))
    y, rstd = K.rmsnorm_forward(x, w, 1e-6, "numba")
    got = [y, *K.rmsnorm_backward(g, x, rstd, w, "numba")]
    y, rstd = fused.rmsnorm_forward(x, w, 1e-6)
    body = [y, *fused.rmsnorm_backward(g, x, rstd, w)]
    want_y, want_grads = composite(lambda a, b: a.rmsnorm(-1, 1e-6, b), [x, w], g)
    tol = 1e-12 if dtype == np.float64 else FLOAT32_ULPS * np.sqrt(37) * np.finfo(np.float32).eps  # of a row's max
    for a, b, c in zip(got[:2], body[:2], [want_y, want_grads[0]]):                       # y and dx
        assert a.dtype == dtype
        for row in (0, 1):
            np.testing.assert_allclose(a[row], b[row], rtol=0, atol=tol * np.abs(c[row]).max())
            np.testing.assert_allclose(a[row], c[row], rtol=0, atol=tol * np.abs(c[row]).max())
        assert np.isnan(a[2]).all() and np.isnan(b[2]).all() and np.isnan(c[2]).all()
    assert (got[0][0] == 0).all()
    np.testing.assert_allclose(got[1][0], g[0] * w / np.sqrt(dtype(1e-6)), rtol=tol)
    assert np.isnan(got[2]).all() and np.isnan(body[2]).all() and np.isnan(want_grads[1]).all()  # dw


@pytest.mark.parametrize("threads", [1, 2])
def test_kernels_on_the_pool_equal_one_thread(threads, monkeypatch):
    """Rows shared out on the pool's threads give the bits of one thread (the sums over rows of dw, db
    per run, added after: to float32 rounding)."""
    x = rng.standard_normal((512, 300)).astype(np.float32)
    w, b, g = (rng.standard_normal(300).astype(np.float32) for _ in range(3))
    g = rng.standard_normal(x.shape).astype(np.float32)
    one = layernorm_kernels("numba", x, w, b, g)
    monkeypatch.setattr(pool, "MIN_BYTES", 1)
    previous = pool.get_num_threads()
    pool.set_num_threads(threads)
    try:
        shared = layernorm_kernels("numba", x, w, b, g)
        softmax = [K.softmax_forward(x, "numba"), K.gelu_forward(x, "numba")]
    finally:
        pool.set_num_threads(previous)
    np.testing.assert_array_equal(shared[0], one[0])
    np.testing.assert_array_equal(shared[1][0], one[1][0])
    for a, b in zip(shared[1][1:], one[1][1:]):                   # sums over 512 rows, in another order
        np.testing.assert_allclose(a, b, rtol=0, atol=float(float32_bound(b, 512).max()))
    np.testing.assert_array_equal(softmax[0], K.softmax_forward(x, "numba"))
    np.testing.assert_array_equal(softmax[1], K.gelu_forward(x, "numba"))


def adam_steps(decoupled, weight_decay, shapes, grads):
    """(weights, exp_avg, exp_avg_sq) of each parameter after nn.optim's Adam / AdamW took len(grads) steps."""
    from nn.optim import Adam, AdamW
    params = [Tensor(np.linspace(-1, 1, int(np.prod(s))).reshape(s), requires_grad=True) for s in shapes]
    opt = (AdamW if decoupled else Adam)(params, lr=0.01, weight_decay=weight_decay)
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = Tensor(g)
        opt.step()
    return [(p.numpy(), opt.state[id(p)]["exp_avg"], opt.state[id(p)]["exp_avg_sq"]) for p in params]


@pytest.mark.parametrize("decoupled, weight_decay", [(True, 0.01), (False, 0.1), (True, 0.0)])
def test_adam_kernel_equals_the_optimizers_numpy_body(decoupled, weight_decay, monkeypatch):
    """Three steps of the kernel, called alone, and of the optimizer with the kernels on (adam_group: each
    parameter in place), equal three of nn.optim's Adam / AdamW with its numpy body (kernels off: the
    group joined into flat arrays) to 1e-12, weights and moments."""
    shapes = [(5, 10), (7,)]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(3)]
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "off")
    want = adam_steps(decoupled, weight_decay, shapes, grads)
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "numba")
    assert ready(np.float64)                                     # compiled first (that runs each kernel once)
    monkeypatch.setattr(kernels, "MIN_SIZE", 0)
    monkeypatch.setattr(kernels, "_chosen", {})
    calls = []
    monkeypatch.setattr(K, "adam_group", lambda *a, f=K.adam_group, **k: calls.append(1) or f(*a, **k))
    with_kernel = adam_steps(decoupled, weight_decay, shapes, grads)
    assert len(calls) == 3                                       # one per step: the whole group
    alone = []
    for i, s in enumerate(shapes):
        p, m, v = np.linspace(-1, 1, int(np.prod(s))).reshape(s), np.zeros(s), np.zeros(s)
        for step, gs in enumerate(grads, 1):
            K.adam_update(p, gs[i], m, v, 0.01, 0.9, 0.999, 1e-8, weight_decay, decoupled, step, "numba")
        alone.append((p, m, v))
    for got in (with_kernel, alone):
        for arrays, expected in zip(got, want):
            for a, b in zip(arrays, expected):
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("threads", [1, 2])
def test_adam_group_kernel_equals_its_body_across_runs(threads):
    """adam_group's kernel, its runs cutting through parameters and holding several (a big one, small ones,
    an empty one, a strided one that takes the copy path), equals nn.optim.adam_group, the flat numpy body,
    to 1e-12 in float64 after three steps, on one thread and two."""
    from nn.optim import adam_group
    from tinygrad_like import get_num_threads, set_num_threads
    before = get_num_threads()
    set_num_threads(threads)
    try:
        shapes = [(300, 400), (7,), (0,), (33, 5), (64, 64)]
        def start():
            params = [np.linspace(-1, 1, int(np.prod(s))).reshape(s) for s in shapes]
            params[3] = np.asfortranarray(params[3])                     # not C-contiguous
            size = sum(p.size for p in params)
            return params, np.zeros(size), np.zeros(size)
        grads = [[rng.standard_normal(s) for s in shapes] for _ in range(3)]
        (want, wm, wv), (got, gm, gv) = start(), start()
        assert len(K.runs(gm.size, gm.nbytes)) - 1 == (1 if threads == 1 else 2 * K.RUNS_PER_THREAD)
        for t, gs in enumerate(grads, 1):
            adam_group(want, gs, wm, wv, 0.01, 0.9, 0.999, 1e-8, 0.01, True, t)
            K.adam_group(got, gs, gm, gv, 0.01, 0.9, 0.999, 1e-8, 0.01, True, t, "numba")
        for a, b in zip([*got, gm, gv], [*want, wm, wv]):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
        assert not np.array_equal(got[0], np.linspace(-1, 1, 120000).reshape(300, 400))   # it moved
    finally:
        set_num_threads(before)


def test_adam_kernel_on_a_strided_parameter():
    """A parameter that is a strided view is updated in place through a contiguous copy."""
    p = np.zeros((4, 6))[:, ::2]
    m, v = np.zeros((4, 3)), np.zeros((4, 3))
    K.adam_update(p, np.ones((4, 3)), m, v, 0.1, 0.9, 0.999, 1e-8, 0.0, True, 1, "numba")
    np.testing.assert_allclose(p, -0.1, rtol=1e-6)
    np.testing.assert_allclose(m, 0.1, rtol=1e-12)


def test_adam_kernel_keeps_an_infinite_weight_without_decay():
    """Without weight decay the kernel never multiplies a weight by 0 (0·inf would be NaN)."""
    p = np.array([np.inf, 1.0])
    K.adam_update(p, np.ones(2), np.zeros(2), np.zeros(2), 0.01, 0.9, 0.999, 1e-8, 0.0, False, 1, "numba")
    assert p[0] == np.inf and np.isfinite(p[1])


def test_second_run_compiles_nothing(tmp_path):
    """A first process compiles the kernels into empty caches and prints one line saying so, although its
    first use is attention on two threads, whose chunks ask for the kernels at once; a second loads them:
    no line, and numba's index files are there."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), TINYGRAD_LIKE_CACHE_DIR=str(tmp_path / "c"),
               PYTHONPATH=str(ROOT))
    env.pop("TINYGRAD_LIKE_KERNELS", None)
    code = ("import numpy as np; from tinygrad_like import Tensor, set_num_threads; set_num_threads(2); "
            "Tensor(np.ones((16, 128, 384), np.float32)).multihead_attention(4, is_causal=True); "
            "from tinygrad_like.fast.kernels import ready; assert ready(np.float32)")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
            for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr + runs[1].stderr
    first = [ln for ln in runs[0].stderr.splitlines() if "compiled" in ln]
    assert len(first) == 1 and "float32" in first[0], runs[0].stderr
    assert runs[1].stderr == "", runs[1].stderr
    assert list((tmp_path / "numba").rglob("*.nbi"))
    seconds = float(first[0].split(" in ")[1].split(" s")[0])   # how long it took is bench_kernels' to say
    assert seconds > 0, first[0]


# ---------------------------------------------------------------- wired into the fused ops (fast/fused.py)

CE_TARGETS = np.array([[1, -1, 3, 0, 2], [4, 4, -1, 1, 0]])
FUSED_CASES = {  # name: (function of the inputs, input shapes, the kernels' op)
    "softmax": (lambda x: x.softmax(-1), [(3, 4, 7)], "softmax"),
    "log_softmax": (lambda x: x.log_softmax(-1), [(3, 4, 7)], "log_softmax"),
    "layernorm": (lambda x: x.layernorm(-1), [(2, 3, 6)], "layernorm"),
    "layernorm with weight and bias": (lambda x, w, b: x.layernorm(-1, 1e-5, w, b), [(2, 3, 6), (6,), (6,)],
                                       "layernorm"),
    "layernorm with weight only": (lambda x, w: x.layernorm(-1, 1e-5, w), [(4, 6), (6,)], "layernorm"),
    "rmsnorm": (lambda x: x.rmsnorm(-1), [(2, 3, 6)], "rmsnorm"),
    "rmsnorm with weight": (lambda x, w: x.rmsnorm(-1, 1e-6, w), [(2, 3, 6), (6,)], "rmsnorm"),
    "gelu": (lambda x: x.gelu(), [(3, 7)], "gelu"),
    "silu": (lambda x: x.silu(), [(3, 7)], "silu"),
    "swiglu": (lambda x: x.swiglu(), [(3, 2, 8)], "swiglu"),
    "cross-entropy with ignore": (lambda x: x.sparse_categorical_crossentropy(CE_TARGETS), [(2, 5, 6)],
                                  "cross_entropy"),
    "cross-entropy, label smoothing, sum": (lambda x: x.sparse_categorical_crossentropy(
        CE_TARGETS, label_smoothing=0.2, reduction="sum"), [(2, 5, 6)], "cross_entropy"),
    "cross-entropy, reduction none": (lambda x: x.sparse_categorical_crossentropy(
        CE_TARGETS.reshape(-1), label_smoothing=0.1, reduction="none"), [(10, 6)], "cross_entropy"),
}


def fused_result(fn, arrays, u, create_graph=False):
    inputs = [Tensor(a, requires_grad=True) for a in arrays]
    y = fn(*inputs)
    grads = grad((y * Tensor(u)).sum(), inputs, create_graph=create_graph)
    return [y.numpy(), *[d.numpy() for d in grads]]


def count_kernel_calls(monkeypatch):
    """Count the calls of every array function of kernels/arrays.py, by name (after compiling them,
    which runs each once)."""
    assert ready(np.float64) and ready(np.float32)
    monkeypatch.setattr(kernels, "MIN_SIZE", 0)                 # the tests' arrays are small
    monkeypatch.setattr(kernels, "_chosen", {})                 # choose again: the spies below
    calls = {}
    for name in ("softmax", "log_softmax", "layernorm", "rmsnorm", "gelu", "gelu_erf", "silu", "swiglu",
                 "cross_entropy"):
        for way in ("forward", "backward"):
            fn = getattr(K, f"{name}_{way}")
            def spy(*args, fn=fn, key=f"{name}_{way}", **kwargs):
                calls[key] = calls.get(key, 0) + 1
                return fn(*args, **kwargs)
            monkeypatch.setattr(K, f"{name}_{way}", spy)
    return calls


@pytest.mark.parametrize("name", list(FUSED_CASES))
def test_fused_op_kernel_equals_numpy_body_equals_composite(name, monkeypatch):
    """The fused op with its kernels (each variant), with its numpy body (kernels off) and the composite
    agree to 1e-12 in float64, values and gradients; the kernels did run, forward and backward."""
    fn, shapes, op = FUSED_CASES[name]
    arrays = [rng.standard_normal(s) * 2 for s in shapes]
    u = rng.standard_normal(fn(*[Tensor(a) for a in arrays]).shape)
    calls = count_kernel_calls(monkeypatch)
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "off")
    body = fused_result(fn, arrays, u)
    with composed():
        want = fused_result(fn, arrays, u)
    assert calls == {}
    results = {"numpy body": body}
    for variant in ("numba", "c") if op in K.C_OPS and c_build.library() is not None else ("numba",):
        monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", variant)
        calls.clear()
        results[variant] = fused_result(fn, arrays, u)
        assert calls == {f"{op}_forward": 1, f"{op}_backward": 1}, (variant, calls)
    for label, got in results.items():
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12, err_msg=label)


@pytest.mark.parametrize("name", list(FUSED_CASES))
def test_recorded_backward_runs_no_kernel(name, monkeypatch):
    """create_graph=True: the backward is recorded as Tensor ops, no kernel runs in it, and the gradient of
    that gradient (whose own, unrecorded, backward may use kernels again) equals the composite's."""
    fn, shapes, op = FUSED_CASES[name]
    arrays = [rng.standard_normal(s) for s in shapes]
    u = rng.standard_normal(fn(*[Tensor(a) for a in arrays]).shape)
    calls = count_kernel_calls(monkeypatch)

    def second(inputs):
        calls.clear()
        y = fn(*inputs)
        grads = grad((y * Tensor(u)).sum(), inputs, create_graph=True)
        assert f"{op}_backward" not in calls, calls
        return grad(sum((g * g).sum() for g in grads), inputs, allow_unused=True)

    inputs = [Tensor(a, requires_grad=True) for a in arrays]
    got = second(inputs)
    assert calls.get(f"{op}_forward", 0) >= 1                   # (a recorded backward may rebuild x̂ with one)
    with composed():
        want = second(inputs)
    for a, b in zip(got, want):
        if a is not None and b is not None:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-10)


def test_mixed_dtypes_small_and_empty_arrays_run_the_numpy_body(monkeypatch):
    """A float64 weight on float32 input (numpy promotes), an empty input, and an input below MIN_SIZE
    take the numpy body; an input of MIN_SIZE takes the kernel."""
    calls = count_kernel_calls(monkeypatch)
    x = Tensor(rng.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
    w = Tensor(rng.standard_normal(4), requires_grad=True)
    assert x.layernorm(-1, 1e-5, w).dtype == np.float64
    assert x.rmsnorm(-1, 1e-6, w).dtype == np.float64
    Tensor(np.zeros((0, 4), np.float32), requires_grad=True).softmax(-1)
    assert calls == {}
    monkeypatch.setattr(kernels, "MIN_SIZE", 4096)
    Tensor(np.ones((4095, 1), np.float32)).softmax(-1)
    assert calls == {}
    Tensor(np.ones((4096, 1), np.float32)).softmax(-1)
    assert calls == {"softmax_forward": 1}


def test_the_environment_variable_turns_kernels_on_and_off(monkeypatch):
    for value, want in (("off", "off"), ("0", "off"), ("on", ""), ("", ""), ("numba", "numba"), ("C", "c")):
        monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", value)
        assert kernels.choice() == want
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "fortran")
    with pytest.raises(ValueError, match="TINYGRAD_LIKE_KERNELS must be on, off, numba or c, got 'fortran'"):
        kernels.choice()
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "off")
    assert not ready(np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("runs,count,n", [(1, 1, 3), (8, 2, 128), (5, 2, 33), (3, 1, 1000)])
def test_partial_sums_keep_runs_on_lines_of_their_own(runs, count, n, dtype):
    """Each run's block of partial sums starts on a 64-byte line, and no line holds two runs' numbers: threads
    adding into neighbouring runs never write one line (false sharing made LayerNorm's backward on two
    threads slower than on one)."""
    parts = K.partial_sums(runs, count, n, dtype)
    assert parts.shape == (runs, count, n) and parts.dtype == dtype and not parts.any()
    size = np.dtype(dtype).itemsize
    lines = []
    for block in parts:
        assert block.flags.c_contiguous and block.ctypes.data % K.CACHE_LINE == 0
        first, last = block.ctypes.data // K.CACHE_LINE, (block.ctypes.data + block.size * size - 1) // K.CACHE_LINE
        lines.append((first, last))
    assert all(a_last < b_first for (_, a_last), (b_first, _) in zip(lines, lines[1:]))


def test_layernorm_backward_sums_the_same_on_one_thread_and_two():
    """dw and db summed from per-run partial sums (two threads: eight runs) equal one run's sums to float64
    rounding, and dx is the same array of numbers."""
    x = rng.standard_normal((2048, 128))
    w, g = rng.standard_normal(128), rng.standard_normal((2048, 128))
    results = {}
    for threads in (1, 2):
        pool.set_num_threads(threads)
        try:
            _, xhat, rstd = K.layernorm_forward(x, w, w, 1e-5)
            results[threads] = K.layernorm_backward(g, xhat, rstd, w, (True, True, True))
        finally:
            pool.set_num_threads(1)
    for one, two in zip(results[1], results[2]):
        np.testing.assert_allclose(two, one, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[2][2], g.sum(0), rtol=1e-12)                     # db = Σ_rows g
