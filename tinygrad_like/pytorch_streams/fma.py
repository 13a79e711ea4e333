"""Fused multiply-add in numpy: a·b + c rounded once, as the FMA instruction computes it.

Why: PyTorch's compiled CPU kernels compute `x·(to − from) + from` and `z·std + mean` with one FMA
instruction (one rounding), and numpy has no fma; two roundings differ from one in the last bit for about
half of all inputs, so reproducing PyTorch's draws needs the single rounding.

float32: the product of two float32 numbers is exact in float64, so only the final sum needs care, and only
where it lands on a tie.
float64: Dekker's exact product and Knuth's exact sum give a·b + c as a rounded sum plus small exact
remainders; where those remainders leave the rounding in doubt (within 2^-20 of a tie, or a large
cancellation, or a value too large to split), the element is computed exactly with Python's Fraction,
whose conversion to float rounds correctly. All functions broadcast a, b, c like numpy.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np


def _two_sum(x, y):
    """s, e with s = fl(x + y) and s + e = x + y exactly (Knuth)."""
    s = x + y
    yy = s - x
    return s, (x - (s - yy)) + (y - yy)


def _split(x):
    """hi, lo with hi + lo = x exactly and each holding at most 26 significant bits (Veltkamp)."""
    t = x * 134217729.0                                          # 2^27 + 1
    hi = t - (t - x)
    return hi, x - hi


def _two_product(x, y):
    """p, e with p = fl(x·y) and p + e = x·y exactly (Dekker; needs |x|, |y| below about 2^995)."""
    p = x * y
    xh, xl = _split(x)
    yh, yl = _split(y)
    return p, ((xh * yh - p) + xh * yl + xl * yh) + xl * yl


_LOW29, _HALF29 = np.int64(2 ** 29 - 1), np.int64(2 ** 28)     # float64's 29 bits below float32's last


def fma32(a, b, c) -> np.ndarray:
    """a·b + c for float32 a, b, c, rounded once to float32. The product of two float32 numbers is exact in
    float64, so the float64 sum rounds once, and rounding that to float32 is the answer, except where the
    float64 sum lands exactly halfway between two float32 numbers (its 29 bits below float32's last read
    1000...0) or below float32's normal range: those few are redone by _fma32_exact."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v, np.float32) for v in (a, b, c)))
    shape = a.shape
    a, b, c = a.reshape(-1), b.reshape(-1), c.reshape(-1)
    s = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)
    out = s.astype(np.float32)
    doubtful = ((s.view(np.int64) & _LOW29) == _HALF29) | (np.abs(s) < 2.0 ** -126)
    if doubtful.any():
        out[doubtful] = _fma32_exact(a[doubtful], b[doubtful], c[doubtful])
    return out.reshape(shape)


def _fma32_exact(a, b, c) -> np.ndarray:
    """fma32 where the float64 sum may have rounded onto a float32 tie: the sum's own rounding error (Knuth's
    two-sum) says which way the exact sum lies, and so which neighbour is right."""
    p = a.astype(np.float64) * b.astype(np.float64)
    s, err = _two_sum(p, c.astype(np.float64))
    r = s.astype(np.float32)
    back = r.astype(np.float64)
    other = np.nextafter(r, np.where(s > back, np.float32(np.inf), np.float32(-np.inf)))
    halfway = (s != back) & (s - back == (other.astype(np.float64) - back) / 2)
    wrong_way = halfway & (err != 0) & ((err > 0) == (s > back))
    return np.where(wrong_way, other, r).astype(np.float32)


def fma64(a, b, c) -> np.ndarray:
    """a·b + c for float64 a, b, c, rounded once (see the module's docstring for how)."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, c)))
    shape = a.shape
    a, b, c = a.reshape(-1), b.reshape(-1), c.reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):           # the doubtful elements are redone exactly
        p, p_err = _two_product(a, b)
        s, s_err = _two_sum(p, c)
        t = p_err + s_err
        r, r_err = _two_sum(s, t)                                # a·b + c = r + r_err + (tiny: t's rounding)
        gap = np.abs(r) - np.nextafter(np.abs(r), 0)             # the spacing just below |r| (the smaller one)
        doubtful = ~np.isfinite(r) | (np.abs(r_err) >= 0.5 * gap * (1 - 2.0 ** -20)) \
            | (np.abs(r) < 2.0 ** -20 * np.maximum(np.abs(p), np.abs(c))) \
            | (np.maximum(np.abs(a), np.abs(b)) > 2.0 ** 995)
    out = np.array(r, dtype=np.float64)
    for i in np.flatnonzero(doubtful):
        out[i] = _exact(float(a[i]), float(b[i]), float(c[i]))
    return out.reshape(shape)


def _exact(a: float, b: float, c: float) -> float:
    """a·b + c rounded once, in exact rational arithmetic (inf and nan as IEEE says: a finite a·b never
    overflows inside an fma, so it cannot cancel an infinite c)."""
    if not np.isfinite(a) or not np.isfinite(b):
        return a * b + c
    if not np.isfinite(c):
        return c
    try:
        return float(Fraction(a) * Fraction(b) + Fraction(c))
    except OverflowError:
        return float(np.copysign(np.inf, a * b + c))
