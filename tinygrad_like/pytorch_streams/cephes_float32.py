"""log and sin/cos in float32 the way PyTorch's CPU `normal_` computes them for float32 tensors of 16 or
more numbers, so our draws equal PyTorch's bit for bit.

Why its own file: PyTorch's blocked normal fill (its AVX2 kernel, which also runs on AVX-512 machines)
does not call the C library's logf/sinf/cosf; it evaluates Cephes' single-precision polynomials
(S. L. Moshier's Cephes library, as vectorised by J. Pommier's sse_mathfun) one float32 operation at a
time. numpy's float32 arithmetic rounds each operation the same way (IEEE 754 round to nearest), so
repeating the same operations in the same order gives the same bits. One more fact, found by experiment
against PyTorch 2.13: its compiler fuses each multiplication that feeds an addition into one fused
multiply-add (one rounding instead of two), so we do too (fma.py). The constants are Cephes'
published coefficients. Each function takes and returns float32 arrays of any shape.
"""
from __future__ import annotations

import numpy as np

from tinygrad_like.pytorch_streams.fma import fma32 as fma

f32 = np.float32

# log(x) = e·ln2 + log(m), m in [√½, √2): a degree-8 polynomial in m-1, ln2 split in two parts
_SQRT_HALF = f32(0.707106781186547524)
_LOG_POLY = tuple(f32(c) for c in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                                   1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                                   3.3333331174e-1))
_LN2_LOW, _LN2_HIGH = f32(-2.12194440e-4), f32(0.693359375)

# sin/cos: reduce by multiples of π/4 (π/4 split in three parts), then one of two polynomials
_FOUR_OVER_PI = f32(1.27323954473516)
_PI4_PARTS = (f32(-0.78515625), f32(-2.4187564849853515625e-4), f32(-3.77489497744594108e-8))
_SIN_POLY = (f32(-1.9515295891e-4), f32(8.3321608736e-3), f32(-1.6666654611e-1))
_COS_POLY = (f32(2.443315711809948e-005), f32(-1.388731625493765e-003), f32(4.166664568298827e-002))


def log(x: np.ndarray) -> np.ndarray:
    """Natural log of positive float32 x (x <= 0 gives nan), as Cephes' logf computes it in float32."""
    x = np.asarray(x, dtype=np.float32)
    invalid = x <= 0
    x = np.maximum(x, np.finfo(np.float32).smallest_normal)      # subnormals are read as the smallest normal
    bits = x.view(np.int32)
    e = ((bits >> 23) - 127).astype(np.float32) + f32(1)          # exponent of x as a float32
    m = ((bits & ~0x7F800000) | 0x3F000000).view(np.float32)      # mantissa in [0.5, 1)
    small = m < _SQRT_HALF                                        # m < √½: use 2m and one less in the exponent
    m_small = np.where(small, m, f32(0))
    m = m - f32(1)
    e = e - np.where(small, f32(1), f32(0))
    m = m + m_small
    z = m * m
    y = _LOG_POLY[0]
    for c in _LOG_POLY[1:]:
        y = fma(y, m, c)
    y = y * m
    y = fma(y, z, e * _LN2_LOW)
    y = fma(-z, f32(0.5), y)
    out = m + y
    out = fma(e, _LN2_HIGH, out)
    return np.where(invalid, f32(np.nan), out).astype(np.float32)


def sincos(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sin x, cos x) of float32 x, as Cephes' sinf/cosf compute them in float32 (accurate for |x| < 8192)."""
    x = np.asarray(x, dtype=np.float32)
    sign_sin = np.signbit(x)
    x = np.abs(x)
    j = (x * _FOUR_OVER_PI).astype(np.int32)                      # truncation toward zero
    j = (j + 1) & ~1                                              # an even octant count
    y = j.astype(np.float32)
    sign_sin = sign_sin ^ ((j & 4) != 0)
    sign_cos = ((j - 2) & 4) == 0
    use_sin_poly = (j & 2) == 0                                   # which polynomial gives sin; cos takes the other
    for part in _PI4_PARTS:                                       # x - y·π/4 in extended precision
        x = fma(y, part, x)
    z = x * x
    cos_poly = _COS_POLY[0]
    for c in _COS_POLY[1:]:
        cos_poly = fma(cos_poly, z, c)
    cos_poly = fma(cos_poly * z, z, -(z * f32(0.5)))
    cos_poly = cos_poly + f32(1)
    sin_poly = _SIN_POLY[0]
    for c in _SIN_POLY[1:]:
        sin_poly = fma(sin_poly, z, c)
    sin_poly = fma(sin_poly * z, x, x)
    sin = np.where(use_sin_poly, sin_poly, cos_poly)
    cos = np.where(use_sin_poly, cos_poly, sin_poly)
    return (np.where(sign_sin, -sin, sin).astype(np.float32),
            np.where(sign_cos, -cos, cos).astype(np.float32))
