"""The Gaussian CDF Φ(x) = ½(1 + erf(x/√2)) of float32 arrays in a few numpy steps, for the exact GELU
x·Φ(x) without the `fast` extra's kernels (fast/fused.py, GeluErf).

numpy has no erf, and erf.py's, accurate to float64 rounding, takes three rationals' worth of steps and
sorts the elements into pieces. In float32, Φ to float32 rounding is cheaper: write it as

    Φ(x) = ½(1 + tanh(x·P(x²)))

which is GPT-2's tanh GELU when P(s) = √(2/π)(1 + 0.044715s), and exact when x·P(x²) = atanh(erf(x/√2)).
The degree-6 P below is fitted to that (`fit`, weighted least squares on the error of Φ itself, iterated
towards the smallest largest error: within 3e-8 of Φ on [-6, 6]; within 1e-7 with float32 arithmetic).
Beyond |x| = 6, Φ is 0 or 1 in float32 (Φ(−6) = 1e-9), and so is the formula, without clamping x: P has
no real root and a positive leading coefficient, so P > 0 everywhere and x·P(x²) grows past ±11.8 from
|x| = 6 on, where tanh is ±1 in float32. Past |x| ≈ 8.7e3 the powers of x² overflow to inf, whose tanh
is ±1 all the same (x·P(x²) is ±inf, never NaN: P's value at overflow is dominated by its positive
leading term); the overflow is expected there and not reported (np.errstate). Not clamping saves a pass.
tests/test_normal_cdf.py checks the fit reproduces these numbers and holds Φ to math.erfc's.
"""
from __future__ import annotations

import math

import numpy as np

from tinygrad_like.erf import erf

# P's coefficients, highest power of s = x² first (`fit()` gives them again)
COEFFICIENTS = (1.756182949892815e-09, -1.322637412540454e-07, 3.9647489987472436e-06, -5.530621614769606e-05,
                -3.259492824899797e-05, 0.03633308453655243, 0.7978849414676151)
CLAMP = 6.0                                         # Φ is 0 or 1 beyond ±CLAMP, and `fit` stops there
_F32 = tuple(np.float32(c) for c in COEFFICIENTS)   # rounded once, not at every use


def normal_cdf(x: np.ndarray, out: np.ndarray | None = None, work: np.ndarray | None = None) -> np.ndarray:
    """Φ(x) of a float32 array, into `out` (x's shape; a new array if None), with `work` (an array of x's
    shape, or more arrays stacked, of which the first is used; a new one if None) as scratch space:
    ½(1 + tanh(x·P(x²))), exactly 0 or 1 beyond |x| = 6 (see the module)."""
    square = np.empty_like(x) if work is None else work.reshape(-1, *x.shape)[0]
    with np.errstate(over="ignore"):                 # x² past |x| > 1.8e19, P(x²) past 8.7e3: inf (see the module)
        return normal_cdf_steps(x, np.multiply(x, x, out=square), np.empty_like(x) if out is None else out)


def normal_cdf_steps(x: np.ndarray, square: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Φ(x) as `normal_cdf`, into `out`, given x² (`square`, x's shape, left as it is) by a caller that uses
    x² too (the exact GELU's slope, fast/fused.py) and has turned overflow reports off (np.errstate), once
    around many pieces: entering it costs as much as a step on a small piece."""
    p = np.multiply(square, _F32[0], out=out)       # Horner's rule on x²
    for coefficient in _F32[1:-1]:
        p += coefficient
        p *= square
    p += _F32[-1]
    p *= x
    np.tanh(p, out=p)
    p += 1
    p *= 0.5
    return p


def fit(degree: int = 6, steps: int = 100) -> np.ndarray:
    """P's coefficients (lowest power first) fitted so that ½(1 + tanh(x·P(x²))) is Φ(x) on [0, 6]: least
    squares on the error of Φ (the error of tanh's argument weighted by dΦ/d(argument) = ½(1 − erf²)),
    reweighted `steps` times by the size of each point's error (Lawson), which drives the fit towards
    the smallest largest error."""
    x = np.linspace(0, CLAMP, 6001)[1:]
    e = erf(x / math.sqrt(2))
    target = np.arctanh(np.minimum(e, 1 - 2.0**-53))
    slope = 0.5 * (1 - e * e)
    s = x * x
    weight = np.ones_like(x)
    for _ in range(steps):
        rows = np.vander(s, degree + 1, increasing=True) * (slope * x * weight)[:, None]
        c = np.linalg.lstsq(rows, target * slope * weight, rcond=None)[0]
        error = (x * np.polynomial.polynomial.polyval(s, c) - target) * slope
        weight *= np.sqrt(np.abs(error)) + 1e-300
        weight /= weight.max()
    return c
