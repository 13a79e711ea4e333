"""The exact GELU x·Φ(x) = ½x(1 + erf(x/√2)) (PyTorch's default): its fused op (fast/fused.py, GeluErf)
equals the composite (composites.gelu_erf) to 1e-12 in float64, values, gradients and second derivatives,
whole and in cache-sized pieces, and passes gradcheck and gradgradcheck; its float32 numpy body (Φ from
fast/normal_cdf.py) and its kernels (numba, C) are within float32 rounding of a float64 formula written
with math.erf; F.gelu and nn.GELU run it.

Kept apart from tests/test_fused.py and tests/test_kernels.py, whose module-level random streams the
tests there share: adding cases to their tables would hand every later test there other inputs.
"""
import math

import numpy as np
import pytest

import tinygrad_like.functional as F
from nn.activations import GELU
from test_fused import check_fused_equals_composed
from tinygrad_like import Tensor, composed, grad, gradcheck, gradgradcheck, no_grad
from tinygrad_like.fast.normal_cdf import CLAMP, COEFFICIENTS, fit, normal_cdf

rng = np.random.default_rng(28)
erf = np.vectorize(math.erf)                               # the C library's erf, one number at a time


def exact(x):
    return x.gelu(approximate="none")


def gelu_erf_float64(x):
    return 0.5 * x * (1 + erf(x / np.sqrt(2)))


def gelu_erf_slope_float64(x):                             # Φ(x) + x·φ(x)
    return 0.5 * (1 + erf(x / np.sqrt(2))) + x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi)


@pytest.mark.parametrize("shape", [(3, 7), (2, 3, 5)])
def test_fused_equals_composite(shape):
    check_fused_equals_composed(exact, [shape], name="exact gelu")


def test_fused_in_pieces_equals_composite(monkeypatch):
    from tinygrad_like.fast import fused
    monkeypatch.setattr(fused, "PIECE", 30)                # pieces of 30 elements, the last one short
    check_fused_equals_composed(exact, [(3, 5, 7)], name="exact gelu")


def test_gradcheck_and_gradgradcheck_float64():
    x = Tensor(rng.standard_normal((3, 5)) * 2, dtype=np.float64, requires_grad=True)
    assert gradcheck(exact, x)
    assert gradgradcheck(exact, x)
    with composed():
        assert gradcheck(exact, x)
    assert gradcheck(F.gelu, x)                            # the default of F.gelu, PyTorch's


def test_one_node_fused_many_composed():
    x = Tensor(rng.standard_normal((3, 4)), requires_grad=True)
    assert type(exact(x)._ctx).__name__ == "GeluErf"
    assert type(F.gelu(x)._ctx).__name__ == "GeluErf"
    assert type(GELU()(x)._ctx).__name__ == "GeluErf"
    assert type(F.gelu(x, approximate="tanh")._ctx).__name__ == "Gelu"
    with composed():
        assert type(exact(x)._ctx).__name__ != "GeluErf"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernels", ["off", "on"])
def test_values_and_gradient_against_math_erf(dtype, kernels, monkeypatch):
    """(64, 3, 700) entries (several pieces and a rest), x up to ±12 and the extremes: the forward and
    g·slope within rounding of the math.erf formula: 4 epsilons of the dtype times |x| (½x(1 + erf) loses
    the low bits of 1 + erf for negative x, in the formula as in ours) and times |g|·max(|x|, 1)."""
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", kernels)
    x64 = rng.standard_normal((64, 3, 700)) * 3
    x64[0, 0, :8] = [0.0, -0.0, 12.0, -12.0, 6.0, -6.0, 1e4, -1e4]
    x = Tensor(x64.astype(dtype), requires_grad=True)
    g = rng.standard_normal(x64.shape).astype(dtype)
    y = exact(x)
    y.backward(g)
    xd = x.numpy().astype(np.float64)
    want_y, want_dx = gelu_erf_float64(xd), g * gelu_erf_slope_float64(xd)
    assert y.dtype == dtype and x.grad.dtype == dtype
    eps = np.finfo(dtype).eps
    assert (np.abs(y.numpy() - want_y) <= 4 * eps * np.abs(xd)).all()
    assert (np.abs(x.grad.numpy() - want_dx) <= 4 * eps * np.abs(g) * np.maximum(np.abs(xd), 1)).all()


def test_float32_body_agrees_with_the_kernels(monkeypatch):
    pytest.importorskip("numba", reason="the kernels are the fast extra's (numba)")
    from tinygrad_like.fast.kernels import arrays as K
    from tinygrad_like.fast.kernels import c_build
    x = (rng.standard_normal(50_000) * 3).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    from tinygrad_like.fast.fused import gelu_erf_backward, gelu_erf_forward
    body = gelu_erf_forward(x), gelu_erf_backward(g, x)
    eps = np.finfo(np.float32).eps
    for variant in ("numba", "c") if c_build.library() is not None else ("numba",):
        y, dx = K.gelu_erf_forward(x, variant), K.gelu_erf_backward(g, x, variant)
        assert (np.abs(y - body[0]) <= 4 * eps * np.abs(x)).all(), variant
        assert (np.abs(dx - body[1]) <= 4 * eps * np.abs(g) * np.maximum(np.abs(x), 1)).all(), variant


@pytest.mark.parametrize("variant", ["numba", "c"])
def test_kernels_equal_the_composite_float64(variant, monkeypatch):
    pytest.importorskip("numba", reason="the kernels are the fast extra's (numba)")
    from tinygrad_like.fast.kernels import arrays as K
    from tinygrad_like.fast.kernels import c_build
    if variant == "c" and c_build.library() is None:
        pytest.skip(f"no C kernels here: {c_build.reason()}")
    x = rng.standard_normal((4, 6, 37)) * 3
    g = rng.standard_normal(x.shape)
    xt = Tensor(x, requires_grad=True)
    with composed():
        y = exact(xt)
        (dx,) = grad((y * Tensor(g)).sum(), [xt])
    np.testing.assert_allclose(K.gelu_erf_forward(x, variant), y.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(K.gelu_erf_backward(g, x, variant), dx.numpy(), rtol=0, atol=1e-12)


def test_the_fused_op_runs_its_kernels_or_keeps_the_slope(monkeypatch):
    """With the kernels on, forward and backward each call the kernel once and nothing is kept; with them
    off, the numpy body keeps the slope Φ(x) + x·φ(x) from forward (Φ the float32 Φ, φ written out here),
    and backward's result is, bit for bit, the one that makes the slope again from x; with gradients off,
    nothing is kept."""
    pytest.importorskip("numba", reason="the kernels are the fast extra's (numba)")
    from test_kernels import count_kernel_calls
    from tinygrad_like.fast.fused import gelu_erf_backward, gelu_erf_forward
    calls = count_kernel_calls(monkeypatch)
    x = Tensor(rng.standard_normal((8, 600)).astype(np.float32), requires_grad=True)
    g = rng.standard_normal((8, 600)).astype(np.float32)
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "on")
    y = exact(x)
    assert y._ctx.slope is None
    y.backward(g)
    assert calls == {"gelu_erf_forward": 1, "gelu_erf_backward": 1}
    calls.clear()
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "off")
    x.grad = None
    y = exact(x)
    xn = x.numpy()
    density = np.exp(xn * xn * np.float32(-0.5)) * xn * np.float32(1 / np.sqrt(2 * np.pi))
    np.testing.assert_allclose(y._ctx.slope, normal_cdf(xn) + density, rtol=0, atol=2e-7)   # kept
    y.backward(g)
    assert calls == {}
    np.testing.assert_array_equal(x.grad.numpy(), gelu_erf_backward(g, xn))
    assert x.grad.numpy().tobytes() == gelu_erf_backward(g, xn).tobytes()
    with no_grad():
        assert exact(x)._ctx is None or exact(x)._ctx.slope is None
    slope = np.empty_like(xn)
    gelu_erf_forward(xn, slope)
    for dtype in (np.float64, np.float32, np.float16):                           # g of another dtype, too
        g2 = rng.standard_normal((8, 600)).astype(dtype)
        assert gelu_erf_backward(g2, xn, slope).tobytes() == gelu_erf_backward(g2, xn).tobytes()



@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backward_writes_over_the_kept_slope_and_a_second_backward_makes_it_again(dtype, monkeypatch):
    """Kernels off: backward's g·slope goes into the slope kept by forward (no new array), which the node
    then no longer holds; a second backward (retain_graph) makes the slope again from x and gives the
    same bits, which are those of the plain backward that makes the slope from x."""
    from tinygrad_like.fast.fused import gelu_erf_backward, gelu_erf_forward
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "off")
    local = np.random.default_rng(2812)                     # its own stream: the module's feeds later tests
    xn = (local.standard_normal((8, 600)) * 3).astype(dtype)
    g = local.standard_normal((8, 600)).astype(dtype)
    slope = np.empty_like(xn)
    gelu_erf_forward(xn, slope)
    assert gelu_erf_backward(g, xn, slope, out=slope) is slope
    assert slope.tobytes() == gelu_erf_backward(g, xn).tobytes()
    x = Tensor(xn, requires_grad=True)
    y = exact(x)
    node = y._ctx
    assert node.slope is not None
    y.backward(Tensor(g), retain_graph=True)
    assert node.slope is None
    first = x.grad.numpy().copy()
    assert first.tobytes() == gelu_erf_backward(g, xn).tobytes()
    x.grad = None
    y.backward(Tensor(g))
    assert x.grad.numpy().tobytes() == first.tobytes()

# ---------------------------------------------------------------- Φ in float32 (fast/normal_cdf.py)

def test_fit_gives_the_coefficients_again():
    np.testing.assert_allclose(fit()[::-1], COEFFICIENTS, rtol=1e-6)


def test_normal_cdf_within_1e7_of_math_erfc_and_exact_past_six():
    """|Φ − ½erfc(−x/√2)| ≤ 1e-7 (under two float32 ulps of Φ where Φ > 1/2) over [−12, 12], ±inf,
    ±0, NaN and ±1e30, without a warning (the overflow past |x| ≈ 8.7e3 is expected and kept quiet) or
    an invalid operation on the way; 0 and 1 exactly beyond ±6."""
    x = np.concatenate([np.linspace(-12, 12, 1_000_001, dtype=np.float32),
                        np.float32([np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 3e38, -3e38])])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        phi = normal_cdf(x)
        assert np.isnan(normal_cdf(np.float32([np.nan]))).all()
    assert phi.dtype == np.float32
    want = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float64)])
    assert np.abs(phi - want).max() <= 1e-7
    beyond = np.abs(x) >= CLAMP
    assert (phi[beyond] == (x[beyond] > 0)).all()
    assert ((np.diff(phi[:1_000_001]) >= 0)).all()                     # never decreasing


def test_normal_cdf_is_0_or_1_over_every_binade_beyond_six():
    """Beyond ±6, up to the largest float32 and inf, Φ is exactly 1 (x > 0) or 0 (x < 0): a million float32
    numbers spread over every bit pattern from 6 up (a stride of 1049 patterns), each with both signs."""
    bits = np.arange(np.float32(CLAMP).view(np.int32), np.float32(np.inf).view(np.int32) + 1, 1049, dtype=np.int32)
    x = np.concatenate([bits, [np.float32(np.inf).view(np.int32)]]).astype(np.int32).view(np.float32)
    x = np.concatenate([x, -x])
    with np.errstate(all="raise"):
        phi = normal_cdf(x)
    np.testing.assert_array_equal(phi, (x > 0).astype(np.float32))
