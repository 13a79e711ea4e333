"""Elementwise math beyond the core: sin/cos (positional encodings, RoPE), rsqrt, log2/exp2, erf
(exact GELU), a softplus that is stable at ±1e4, square, pow, clamp/clip, round/floor/ceil, lerp,
the comparisons (<, ==, ..., isclose/allclose) and logic (&, |, ^, ~), and integer division (//, %).

sin, cos, erf and log1p are primitives (tinygrad_like/ops.py); the rest are composed from primitives,
so their gradients (and second derivatives) come for free. Every function keeps the input's shape
and, for float32 input, float32; integer and bool input gives float32, as in PyTorch. Tensor inherits
them from `ElementwiseMathMixin`.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like import dtypes, ops

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor


def _constant(self: Tensor, array: np.ndarray) -> Tensor:
    return self._result(array, None)


class ElementwiseMathMixin:
    """Tensor's elementwise math beyond the core: sin, erf, clamp, round, lerp, isclose, ..."""

    __slots__ = ()

    def sin(self) -> Tensor: return ops.Sin.apply(self._floating())

    def cos(self) -> Tensor: return ops.Cos.apply(self._floating())

    def erf(self) -> Tensor:
        """erf(x) = 2/√π ∫₀ˣ e^(-t²) dt, the Gaussian CDF's core: Φ(x) = (1 + erf(x/√2)) / 2."""
        return ops.Erf.apply(self._floating())

    def log1p(self) -> Tensor: return ops.Log1p.apply(self._floating())

    def rsqrt(self) -> Tensor:
        """1/√x (RMSNorm's scale)."""
        return 1 / self.sqrt()

    def log2(self) -> Tensor:
        """log₂ x = ln x / ln 2."""
        return self.log() * (1 / math.log(2))

    def exp2(self) -> Tensor:
        """2ˣ = e^(x ln 2)."""
        return (self * math.log(2)).exp()

    def square(self) -> Tensor:
        return self * self

    def pow(self, exponent) -> Tensor:
        """self ** exponent, as a method (PyTorch's x.pow(2)); exponent a number or a Tensor."""
        return self ** exponent

    def __pow__(self, other):
        if not isinstance(other, (int, float, np.number)):                # a Tensor, an array, a list
            return ops.Pow.apply(*_no_bool_pow(*self._pair(other)))
        if self.dtype.kind == "f":
            return ops.PowConst.apply(self, c=float(other))
        if isinstance(other, (float, np.floating)):                 # int ** 0.5: float32, as in PyTorch
            return ops.PowConst.apply(self.cast(dtypes.DEFAULT_FLOAT), c=float(other))
        base = self if self.dtype != bool else self.cast(dtypes.INT64)   # bool ** 2 is int64
        return ops.PowConst.apply(base, c=int(other))

    def __rpow__(self, other): return ops.Pow.apply(*_no_bool_pow(*self._pair(other)[::-1]))

    def softplus(self, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
        """log(1 + e^(βx)) / β, a smooth relu; PyTorch's `threshold`: where βx > threshold it is x.

        Written as max(x, 0) + log1p(e^(-|x|)), so e^x never overflows (x = 1e4 gives 1e4) and
        x = -1e4 gives 0 without a log(1 + 0) losing the tiny value. The two branches pick x or -x with
        `where` (not relu/abs), so the derivative at 0 is σ(0) = 1/2, as it should be.
        """
        y = self * beta if beta != 1 else self
        positive = y > 0
        out = positive.where(y, 0) + positive.where(-y, y).exp().log1p()
        out = out / beta if beta != 1 else out
        return (y > threshold).where(self, out)

    def clamp(self, min=None, max=None) -> Tensor:
        """Clamp into [min, max] (numbers or tensors). The gradient is 1 where min <= x <= max, bounds
        included, and 0 where clamped, as in PyTorch; a tensor bound gets the gradient where it won.
        With min > max every entry is max, as in PyTorch. `clip` is the same op (numpy's, tinygrad's name)."""
        out = self
        if min is not None:
            out = (out < min).where(self._lift(min), out)
        if max is not None:
            out = (out > max).where(self._lift(max), out)
        return out

    def round(self, decimals: int = 0) -> Tensor:
        """Round half to even (0.5 -> 0, 1.5 -> 2), as PyTorch and numpy do. No gradient: a step function."""
        return _constant(self, np.round(self._data, decimals))

    def floor(self) -> Tensor:
        """Largest integer <= x, in x's dtype. No gradient."""
        return _constant(self, np.floor(self._data))

    def ceil(self) -> Tensor:
        """Smallest integer >= x, in x's dtype. No gradient."""
        return _constant(self, np.ceil(self._data))

    def lerp(self, end, weight) -> Tensor:
        """self + weight·(end - self): weight 0 gives self, 1 gives end (weight a number or a tensor)."""
        return self + weight * (self._lift(end) - self)

    def isclose(self, other, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Tensor:
        """Boolean tensor: |self - other| <= atol + rtol·|other| (infinities close to themselves).
        PyTorch's defaults; broadcasts like any binary op. No gradient."""
        other = other._data if isinstance(other, type(self)) else other
        return self._result(np.isclose(self._data, other, rtol=rtol, atol=atol, equal_nan=equal_nan), None)

    def allclose(self, other, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> bool:
        """True when every entry is `isclose` (a Python bool, as in PyTorch)."""
        return bool(self.isclose(other, rtol, atol, equal_nan)._data.all())

    clip = clamp

    # ---------------------------------------------------------------- integer division, comparisons, logic
    def __floordiv__(self, other):
        """⌊self / other⌋ (PyTorch's and Python's floor division, also for negative numbers). No gradient:
        the derivative is 0 wherever it exists."""
        a, b = self._pair(other)
        if a.dtype.kind != "f" and not b._data.all():
            raise ZeroDivisionError(f"floor_divide: integer division by zero (shapes {a.shape} and {b.shape})")
        return self._result(np.floor_divide(a._data, b._data), None)

    def __rfloordiv__(self, other): return self._pair(other)[1] // self

    def __mod__(self, other):
        """self − ⌊self / other⌋·other: the remainder takes the sign of the divisor, as in Python and PyTorch."""
        a, b = self._pair(other)
        if a.dtype.kind != "f" and not b._data.all():
            raise ZeroDivisionError(f"remainder: integer division by zero (shapes {a.shape} and {b.shape})")
        return ops.Mod.apply(a, b)

    def __rmod__(self, other): return self._pair(other)[1] % self

    # comparisons give boolean tensors that carry no gradient
    def _compare(self, other, fn):
        other = other._data if isinstance(other, type(self)) else other
        return self._result(fn(self._data, other), None)

    def __lt__(self, other): return self._compare(other, np.less)
    def __le__(self, other): return self._compare(other, np.less_equal)
    def __gt__(self, other): return self._compare(other, np.greater)
    def __ge__(self, other): return self._compare(other, np.greater_equal)
    def __eq__(self, other): return self._compare(other, np.equal)
    def __ne__(self, other): return self._compare(other, np.not_equal)
    __hash__ = object.__hash__  # by identity (defining __eq__ would remove it): tensors key the dicts of backward
    def __invert__(self): return self._result(~self._data, None)

    def _bitwise(self, other, fn, name: str):
        """Bitwise on integers, logical on bools (the same thing for one bit), as in PyTorch and numpy."""
        a, b = self._pair(other)
        if a.dtype.kind == "f":
            raise TypeError(f"{name}: needs bool or integer tensors, got {self.dtype} and "
                            f"{other.dtype if isinstance(other, type(self)) else type(other).__name__}")
        return self._result(fn(a._data, b._data), None)

    def __and__(self, other): return self._bitwise(other, np.bitwise_and, "&")
    def __or__(self, other): return self._bitwise(other, np.bitwise_or, "|")
    def __xor__(self, other): return self._bitwise(other, np.bitwise_xor, "^")
    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__


def _no_bool_pow(x: Tensor, y: Tensor) -> tuple:
    if x.dtype == bool:     # numpy would answer in int8; PyTorch refuses
        raise TypeError("**: a power of two bool tensors is not supported (as in PyTorch); cast one to int or float")
    return x, y
