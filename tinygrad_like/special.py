"""Special functions numpy lacks, on numpy arrays, accurate to about float64 rounding: erfc, erfinv, lgamma,
digamma and polygamma. Tensor ops with gradients built on them are in elementwise_math.py.

- erfc(x) = 1 − erf(x) without the cancellation: Cody's erfc piece of erf.py for 0.5 ≤ |x| ≤ 4, and past 4
  the continued fraction erfc(y) = e^(−y²)/√π · 1/(y + (1/2)/(y + 1/(y + (3/2)/(y + ...)))), evaluated from
  its 60th level up (plenty where y ≥ 4), so erfc(10) = 2.09e−45 rather than 1 − 1 = 0.
- erfinv(y): the x with erf(x) = y, by Newton's method on erf (on erfc for |y| > 0.5, where erf(x) − y would
  cancel) from Winitzki's approximation, to float64 rounding in a few steps.
- lgamma(x) = ln|Γ(x)|: the C library's lgamma (the one PyTorch calls), through Python's math.lgamma, entry by
  entry; ±inf at the poles 0, −1, −2, ...
- digamma(x) = ψ(x) = Γ′(x)/Γ(x): the recurrence ψ(x) = ψ(x + 1) − 1/x up to x ≥ 10, then the asymptotic
  series ln x − 1/(2x) − Σ B₂ₖ/(2k x²ᵏ) (Bernoulli numbers B₂ … B₁₄); x < 0 by reflection,
  ψ(x) = ψ(1 − x) − π/tan(πx), with tan(πx) taken of x's fractional part (exact), not of a rounded πx.
- i1(x), the modified Bessel function of the first kind of order 1 (i0's derivative; numpy has i0): its power
  series Σ (x/2)^(2k+1)/(k!(k+1)!) for |x| ≤ 30 (positive terms: no cancellation), past 30 the asymptotic
  series e^x/√(2πx) · Σ (−1)ᵏ Πⱼ₌₁ᵏ (4 − (2j−1)²) / (k! (8x)ᵏ).
- polygamma(n, x) = ψ⁽ⁿ⁾(x) = (−1)ⁿ⁺¹ n! ζ(n + 1, x) for n ≥ 1: the Hurwitz zeta's sum Σ (x + k)^−s over
  the first terms, until x + k ≥ 20 + 2n, then its Euler–Maclaurin tail. ±inf at the poles.
float32 input is computed in float64 and rounded once.
"""
from __future__ import annotations

import math

import numpy as np

from tinygrad_like.erf import erf, erfc_rest, exp_minus_square

# B₂ₖ for k = 1..7 (B₂ = 1/6, B₄ = −1/30, B₆ = 1/42, B₈ = −1/30, B₁₀ = 5/66, B₁₂ = −691/2730, B₁₄ = 7/6)
BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def _float64(x) -> tuple[np.ndarray, np.dtype]:
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)
    return x.astype(np.float64), dtype


def _erfc_positive(y: np.ndarray) -> np.ndarray:
    """erfc(y) for y ≥ 0 (NaN stays NaN)."""
    out = np.empty_like(y)
    small, middle = y < 0.5, (y >= 0.5) & (y <= 4)
    large = ~(small | middle)                                    # and NaN
    out[small] = 1 - erf(y[small])
    out[middle] = erfc_rest(y[middle])
    t = np.minimum(y[large], 30.0)                               # past 27.3 erfc underflows to 0 anyway
    fraction = t.copy()
    for level in range(60, 0, -1):                               # y + (level/2) / (y + ...), from the bottom up
        fraction = t + (level / 2) / fraction
    out[large] = np.where(np.isnan(t), t, exp_minus_square(t) / (np.sqrt(np.pi) * fraction))
    return out


def erfc(x) -> np.ndarray:
    """1 − erf(x), accurate where it is tiny (x large) and where it is near 2 (x very negative)."""
    x, dtype = _float64(x)
    y = _erfc_positive(np.abs(x))
    return np.where(x < 0, 2 - y, y).astype(dtype, copy=False)


def erfinv(y) -> np.ndarray:
    """The inverse of erf on (−1, 1): ±inf at ±1, NaN outside [−1, 1]."""
    y, dtype = _float64(y)
    a = 0.147                                                    # Winitzki's constant: a start within 2e−3
    with np.errstate(divide="ignore", invalid="ignore"):
        log = np.log1p(-y * y)
        b = 2 / (np.pi * a) + log / 2
        x = np.copysign(np.sqrt(np.sqrt(b * b - log / a) - b), y)
        tail = np.abs(y) > 0.5                                   # residual from erfc: 1 − |y| is exact there
        for _ in range(4):
            residual = np.where(tail, (1 - np.abs(y)) - erfc(np.abs(x)), (erf(np.abs(x)) - np.abs(y)))
            x = x - np.sign(y) * residual / (2 / np.sqrt(np.pi) * np.exp(-x * x))
    x = np.where(np.abs(y) == 1, np.copysign(np.inf, y), x)
    x = np.where((np.abs(y) > 1) | np.isnan(y), np.nan, np.where(y == 0, y, x))
    return x.astype(dtype, copy=False)


def i1(x) -> np.ndarray:
    """I₁(x), odd: I₁(−x) = −I₁(x); ±inf past |x| ≈ 713, where it exceeds float64."""
    x, dtype = _float64(x)
    y = np.abs(x)
    small = np.minimum(y, 30.0)
    term = small / 2
    total = term.copy()
    for k in range(1, 120):                                      # (x/2)^(2k+1)/(k!(k+1)!), by the ratio of terms
        term = term * (small / 2) ** 2 / (k * (k + 1))
        total = total + term
    big = np.minimum(np.maximum(y, 30.0), 1000.0)                 # past 1000 (and at inf) e^x is inf anyway
    series, term = np.ones_like(big), np.ones_like(big)
    for k in range(1, 20):                                       # (−1)ᵏ Πⱼ (4 − (2j−1)²) / (k! (8x)ᵏ), by ratios
        term = term * -(4 - (2 * k - 1) ** 2) / (k * 8 * big)
        series = series + term
    with np.errstate(over="ignore"):                              # past |x| ≈ 713 I₁ itself exceeds float64: inf
        asymptotic = np.exp(big) / np.sqrt(2 * np.pi * big) * series
    out = np.where(y <= 30, total, asymptotic)
    return np.copysign(out, x).astype(dtype, copy=False)


_lgamma_entry = np.frompyfunc(lambda v: math.inf if v <= 0 and math.isfinite(v) and v == math.floor(v)
                              else math.lgamma(v), 1, 1)


def lgamma(x) -> np.ndarray:
    """ln|Γ(x)|: +inf at 0, −1, −2, ... and at ±inf; NaN stays NaN."""
    x, dtype = _float64(x)
    out = np.asarray(_lgamma_entry(x), dtype=np.float64)
    return out.astype(dtype, copy=False)


def _digamma_positive(x: np.ndarray) -> np.ndarray:
    shift = np.zeros_like(x)
    for _ in range(10):                                          # ψ(x) = ψ(x + 1) − 1/x, until x ≥ 10
        below = x < 10
        shift = np.where(below, shift - 1 / np.where(below, x, 1), shift)
        x = np.where(below, x + 1, x)
    inv2 = (1 / x) ** 2
    series = np.zeros_like(x)
    for k in range(len(BERNOULLI), 0, -1):                       # Σ B₂ₖ/(2k) x^−2k, by Horner's rule in x^−2
        series = (series + BERNOULLI[k - 1] / (2 * k)) * inv2
    return shift + np.log(x) - 0.5 / x - series


def digamma(x) -> np.ndarray:
    """ψ(x) = d ln Γ(x)/dx: −inf at 0 (+inf at −0, PyTorch's sign), NaN at the negative integers and −inf."""
    x, dtype = _float64(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        positive = _digamma_positive(np.where(x > 0, x, 1 - x))  # 1 − x > 0 for the reflection
        reflected = positive - np.pi / np.tan(np.pi * (x - np.trunc(x)))   # the fractional part: π·x would round
        out = np.where(x > 0, positive, reflected)
        out = np.where(x == 0, np.copysign(np.inf, -x), out)
        out = np.where((x < 0) & (x == np.floor(x)), np.nan, out)
    return out.astype(dtype, copy=False)


def polygamma(n: int, x) -> np.ndarray:
    """ψ⁽ⁿ⁾(x), n ≥ 0 (n = 0 is digamma): (−1)ⁿ⁺¹ n! Σₖ (x + k)^−(n+1). ±inf at 0, −1, −2, ... (the sign of
    (−1)ⁿ⁺¹), 0 at +inf, NaN at −inf."""
    if n == 0:
        return digamma(x)
    if n < 0 or n != int(n):
        raise ValueError(f"polygamma: n must be a non-negative integer, got {n}")
    x, dtype = _float64(x)
    s, top, sign = n + 1, 20.0 + 2 * n, (-1.0 if n % 2 == 0 else 1.0)      # sign: (−1)ⁿ⁺¹
    pole = (x <= 0) & (x == np.floor(x)) & np.isfinite(x)
    y = np.where(np.isfinite(x) & ~pole, x, top)
    steps = int(np.ceil(top - y.min())) if y.size else 0
    if steps > 10 ** 6:
        raise ValueError(f"polygamma: x = {y.min()} would need {steps} terms of the series; the engine sums "
                         "up to a million (x >= -999,000)")
    total = np.zeros_like(y)
    with np.errstate(over="ignore"):           # only where ψ⁽ⁿ⁾ itself is beyond float64 (x near a pole): ±inf
        for _ in range(steps):                 # the first terms of Σ (y + k)^−s, until y ≥ top
            below = y < top
            total = np.where(below, total + np.where(below, y, 1.0) ** -s, total)
            y = np.where(below, y + 1, y)
        # Euler–Maclaurin: ζ(s, y) ≈ y^(1−s)/(s−1) + y^−s/2 + Σⱼ B₂ⱼ/(2j)! · s(s+1)…(s+2j−2) · y^(−s−2j+1)
        tail = y ** (1 - s) / (s - 1) + 0.5 * y ** -s
        rising, power = float(s), y ** (-s - 1)
        for j, b in enumerate(BERNOULLI, start=1):
            tail = tail + b / math.factorial(2 * j) * rising * power
            rising *= (s + 2 * j - 1) * (s + 2 * j)
            power = power * (1 / y) ** 2
        out = sign * math.factorial(n) * (total + tail)
    out = np.where(np.isposinf(x), sign * 0.0, out)
    out = np.where(np.isneginf(x) | np.isnan(x), np.nan, out)
    out = np.where(pole, sign * np.inf, out)
    return out.astype(dtype, copy=False)
