"""erf (tinygrad_like/erf.py, numpy's missing erf) against math.erf, which is the C library's, over the
whole line: 10^6 points, the tails, the pieces' ends, ±inf, NaN, −0.0, subnormals, float32 and float64.

The bounds, in units in the last place of math.erf's value (its spacing there):
  float64: at most 2 ulp on [0.5, 1) (1 − erfc, with erfc from Cody's rational and e^(−y²)), at most
           1 ulp everywhere else; against a 120-bit mpmath erf (when mpmath is there) at most 2.5 ulp on
           [0.5, 1), 1 below 0.5 and 1.5 above 1: the 2 against math.erf is ours, not the C library's.
  float32: computed in float64 and rounded once, so at most 1 ulp of float32 (the nearest float32 or
           its neighbour, when the float64 value sits right at a float32 halfway point).
"""
import math

import numpy as np
import pytest

from tinygrad_like import Tensor
from tinygrad_like.erf import erf

SPECIAL = [0.0, -0.0, np.inf, -np.inf, 5e-324, -5e-324, 2.2250738585072014e-308, -1e-310, 1e-300, 1e308, -1e308,
           0.5, np.nextafter(0.5, 0), 4.0, np.nextafter(4.0, 0), 6.0, -6.0, np.nextafter(6.0, 0), 26.0, -0.75]


def points(n: int = 1_000_000, seed: int = 0) -> np.ndarray:
    """n float64 points: uniform on [−7, 7] (the whole range where erf is not ±1), standard normal,
    magnitudes log-uniform from 1e-320 (subnormal) to 1e300 of either sign, and the special ones."""
    rng = np.random.default_rng(seed)
    k = (n - len(SPECIAL)) // 4
    magnitudes = 10.0 ** rng.uniform(-320, 300, n - len(SPECIAL) - 3 * k)
    return np.concatenate([rng.uniform(-7, 7, 2 * k), rng.standard_normal(k),
                           np.where(rng.random(magnitudes.size) < 0.5, -magnitudes, magnitudes), SPECIAL])


def ulps(ours: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|ours − ref| in units of the spacing of floats at ref (of ref's dtype)."""
    return np.abs(ours.astype(np.float64) - ref.astype(np.float64)) / np.spacing(np.abs(ref)).astype(np.float64)


X = points()
REF = np.array([math.erf(v) for v in X])


def test_a_million_points_of_float64_within_the_stated_ulps():
    assert X.size == 1_000_000
    ours = erf(X)
    assert ours.dtype == np.float64
    finite = ~np.isnan(REF)
    error = ulps(ours[finite], REF[finite])
    near_half = (np.abs(X[finite]) >= 0.5) & (np.abs(X[finite]) < 1)
    assert error[near_half].max() <= 2, X[finite][near_half][np.argmax(error[near_half])]
    assert error[~near_half].max() <= 1, X[finite][~near_half][np.argmax(error[~near_half])]
    assert (ours[finite] == REF[finite]).mean() > 0.9         # most points are math.erf's very bits


def test_float32_within_one_ulp_of_math_erf_rounded_to_float32():
    x32 = X[np.abs(X) < 3e38].astype(np.float32)
    ref = np.array([math.erf(v) for v in x32.astype(np.float64)]).astype(np.float32)
    ours = erf(x32)
    assert ours.dtype == np.float32
    assert ulps(ours, ref).max() <= 1


def test_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324, 1e308, -1e308])
    with np.errstate(over="raise", invalid="raise", divide="raise"):   # (a tiny x² may underflow to 0: harmless)
        y = erf(x)
    assert y[0] == 0 and not np.signbit(y[0]) and y[1] == 0 and np.signbit(y[1])
    assert list(y[2:4]) == [1.0, -1.0] and np.isnan(y[4:6]).all()
    assert list(y[6:8]) == [math.erf(5e-324), math.erf(-5e-324)] and list(y[8:]) == [1.0, -1.0]
    for dtype in (np.float32, np.float64):                   # erf(6) and beyond round to exactly 1
        assert erf(np.array([6.0, 7.5, 1e30], dtype)).tolist() == [1.0, 1.0, 1.0]


def test_odd_and_monotone():
    x = np.linspace(0, 7, 200_001)
    assert np.array_equal(erf(-x), -erf(x))
    assert (np.diff(erf(x)) >= 0).all()


def test_shapes_and_integer_input():
    assert erf(np.zeros((2, 0, 3))).shape == (2, 0, 3)
    y = erf(np.array([[0, 1], [-2, 3]]))
    assert y.dtype == np.float32 and y.shape == (2, 2)
    np.testing.assert_array_equal(y, np.array([[0, math.erf(1)], [math.erf(-2), math.erf(3)]], np.float32))


def test_against_mpmath_at_120_bits():
    mpmath = pytest.importorskip("mpmath", reason="mpmath gives erf to 120 bits; without it math.erf is the reference")
    mpmath.mp.prec = 120
    rng = np.random.default_rng(1)
    for lo, hi, bound in [(0, 0.5, 1), (0.5, 1, 2.5), (1, 6, 1.5), (1e-300, 1e-8, 1)]:
        x = rng.uniform(lo, hi, 2000)
        ref = [mpmath.erf(mpmath.mpf(v)) for v in x]
        error = [abs(mpmath.mpf(a) - r) / np.spacing(float(r)) for a, r in zip(erf(x), ref)]
        assert float(max(error)) <= bound, (lo, hi)


def test_tensor_erf_keeps_dtype_and_its_gradient_is_the_gaussian():
    x = Tensor(np.array([-3.0, -0.5, 0.0, 0.7, 2.0]), requires_grad=True)
    y = x.erf()
    np.testing.assert_array_equal(y.numpy(), erf(x.numpy()))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 / math.sqrt(math.pi) * np.exp(-x.numpy() ** 2), rtol=1e-15)
    assert Tensor(np.ones(3, np.float32)).erf().dtype == np.float32
