"""erf on numpy arrays, vectorised, accurate to float64 rounding: numpy has no erf of its own.

W. J. Cody's rational Chebyshev approximations (Math. Comp. 23, 631-638, 1969), whose published
coefficients are below, in two pieces of y = |x|:

    y < 0.5           erf(y)  = y·A(y²)/B(y²)
    0.5 ≤ y ≤ 6       erfc(y) = e^(−y²)·C(y)/D(y)                      erf = 1 − erfc

and erf(−x) = −erf(x). Each rational is within a few parts in 10^18 of its function on its piece
(C/D is Cody's for y ≤ 4; carried on to 6 it stays within 10^-12 of erfc, which is below 10^-8 there:
a millionth of an ulp of erf. Cody's third piece, for erfc beyond 4, is not needed for erf). What costs
accuracy is e^(−y²) for y beyond 1, where rounding y² loses the low bits of the exponent: so y² is
cut into s² + (y − s)(y + s), s = y rounded down to sixteenths, whose square is exact, and e^(−y²)
taken as e^(−s²)·e^(−(y−s)(y+s)).

Past y = 6, erfc(y) < 2^-55 and erf rounds to exactly 1: y is clamped to 6, so that y² never
overflows. ±inf gives ±1, NaN stays NaN, −0.0 stays −0.0, a subnormal x gives its 2/√π·x.
float32 (and float16) input is computed in float64 and rounded once; integer input gives float32,
as in PyTorch. tests/test_erf.py holds it to math.erf over 10^6 points and states the bound.
"""
from __future__ import annotations

import numpy as np

# Cody (1969), from the highest power down, so that Horner's rule reads them in order.
A = (1.85777706184603153e-1, 3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
     3.20937758913846947e03)
B = (1.0, 2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03, 2.84423683343917062e03)
C = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
     2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03, 2.05107837782607147e03,
     1.23033935479799725e03)
D = (1.0, 1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02, 1.62138957456669019e03,
     3.29079923573345963e03, 4.36261909014324716e03, 3.43936767414372164e03, 1.23033935480374942e03)
SLOPE = A[-1] / B[-1]                          # A(0)/B(0) = 2/√π, erf's slope at 0
# A(t)/B(t) = 1 + (SLOPE − 1) + t·A1(t)/B(t): erf(y) = y + y·(a correction below 0.13), whose rounding
# errors shrink with it (the plain ratio's would land whole on the result)
A1 = tuple(a - SLOPE * b for a, b in zip(A[:-1], B[:-1]))
SMALL, ONE = 0.5, 6.0                          # where the pieces meet; past ONE, erf(x) rounds to ±1


def horner(coefficients, t: np.ndarray) -> np.ndarray:
    """The polynomial with these coefficients (highest power first) at t."""
    p = np.full_like(t, coefficients[0])
    for c in coefficients[1:]:
        p *= t
        p += c
    return p


def exp_minus_square(y: np.ndarray) -> np.ndarray:
    """e^(−y²) without the error of rounding y²: s = ⌊16y⌋/16 has an exact square, and y² = s² + (y−s)(y+s)."""
    s = np.floor(y * 16) / 16
    return np.exp(-s * s) * np.exp(-(y - s) * (y + s))


def erfc_rest(y: np.ndarray) -> np.ndarray:
    """erfc(y) for 0.5 ≤ y ≤ 6."""
    return exp_minus_square(y) * horner(C, y) / horner(D, y)


def erf(x) -> np.ndarray:
    """erf(x) = 2/√π ∫₀ˣ e^(-t²) dt, elementwise; float64 for float64 input, else float32 (see the module)."""
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)
    y = np.minimum(np.abs(x, dtype=np.float64), ONE)        # NaN stays NaN through minimum
    out = np.empty_like(y)
    small = y < SMALL
    rest = ~small                                           # and NaN, which its formula keeps NaN
    t = y[small]
    t2 = t * t
    out[small] = t + t * ((SLOPE - 1) + t2 * horner(A1, t2) / horner(B, t2))
    out[rest] = 1 - erfc_rest(y[rest])
    return np.copysign(out, x).astype(dtype, copy=False)
