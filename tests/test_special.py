"""tinygrad_like/special.py against Python's math module and against independent sums (no PyTorch needed): erfc,
erfinv, lgamma, digamma, polygamma and i1 over wide ranges and at their edges. Gradients: the gradcheck table of
tests/test_api_gradcheck.py; PyTorch's answers: tests/test_torch_elementwise_surface.py."""
import math

import numpy as np
import pytest

from tinygrad_like import special

RNG = np.random.default_rng(0)
WIDE = np.concatenate([RNG.uniform(-30, 30, 5000), RNG.uniform(-3, 3, 5000), [0.0, -0.0, 0.5, -0.5, 4.0, 27.0]])


def test_erfc_equals_maths_down_to_the_smallest_normal_number():
    got, want = special.erfc(WIDE), np.array([math.erfc(v) for v in WIDE])
    normal = want > np.finfo(np.float64).tiny
    np.testing.assert_allclose(got[normal], want[normal], rtol=2e-14, atol=0)
    assert special.erfc(np.array([np.inf, -np.inf])).tolist() == [0.0, 2.0] and np.isnan(special.erfc([np.nan]))
    assert special.erfc(np.array([1.0], np.float32)).dtype == np.float32


def test_erfinv_inverts_maths_erf_and_its_edges():
    y = np.concatenate([RNG.uniform(-1, 1, 5000), 1 - 10.0 ** -RNG.uniform(1, 15, 500), [0.0, -0.0, 1e-300]])
    x = special.erfinv(y)
    np.testing.assert_allclose([math.erf(v) for v in x], y, rtol=0, atol=3e-16)
    assert special.erfinv(np.array([1.0, -1.0])).tolist() == [math.inf, -math.inf]
    assert np.isnan(special.erfinv(np.array([1.5, -2.0, np.nan]))).all()
    assert math.copysign(1, special.erfinv(np.array([-0.0]))[0]) == -1


def test_lgamma_is_maths_with_poles():
    finite = WIDE[~((WIDE <= 0) & (WIDE == np.floor(WIDE)))]
    assert special.lgamma(finite).tolist() == [math.lgamma(v) for v in finite]
    assert special.lgamma(np.array([0.0, -0.0, -3.0, np.inf, -np.inf])).tolist() == [math.inf] * 5


def test_digamma_against_its_series_and_at_its_poles():
    x = np.array([0.01, 0.5, 1.0, 2.5, 9.9, 10.1, 123.4, -0.5, -2.75, -17.3])
    k = np.arange(10 ** 6)
    series = [-np.euler_gamma + (1 / (k + 1) - 1 / (v + k)).sum() + math.log((v + 1e6) / (1e6 + 1))
              + (1 / (1e6 + 1) - 1 / (v + 1e6)) / 2 for v in x]
    np.testing.assert_allclose(special.digamma(x), series, rtol=1e-12)
    assert abs(special.digamma(np.array([1.0]))[0] + np.euler_gamma) < 1e-15
    edges = special.digamma(np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan]))
    assert edges[0] == -math.inf and edges[1] == math.inf and np.isnan(edges[2]) and edges[3] == math.inf
    assert np.isnan(edges[4:]).all()


def test_polygamma_against_its_series():
    x = np.array([0.3, 1.0, 2.0, 7.5, 40.0, -0.5, -3.2])
    k = np.arange(10 ** 6)
    for n in (1, 2, 5):
        series = [(-1) ** (n + 1) * math.factorial(n) * (((v + k) ** -(n + 1.0)).sum() + (v + 1e6) ** -float(n) / n
                                                          + (v + 1e6) ** -(n + 1.0) / 2) for v in x]
        np.testing.assert_allclose(special.polygamma(n, x), series, rtol=1e-11)
    assert special.polygamma(1, np.array([1.0]))[0] == math.pi ** 2 / 6                  # ζ(2)


def test_i1_against_its_power_series_in_exact_fractions():
    from fractions import Fraction
    for v in (0.5, 3.0, 17.25, 29.0, 31.0, 60.0, -4.5):
        exact = sum(Fraction(v / 2) ** (2 * m + 1) / (math.factorial(m) * math.factorial(m + 1)) for m in range(200))
        assert special.i1(np.array([v]))[0] == pytest.approx(float(exact), rel=3e-15)
    assert special.i1(np.array([0.0, 800.0])).tolist() == [0.0, math.inf]
