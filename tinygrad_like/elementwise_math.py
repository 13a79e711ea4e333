"""Elementwise math beyond the core: sin/cos (positional encodings, RoPE), the inverse and hyperbolic
trigonometric functions (and their inverses), hypot, rsqrt, log2/log10/exp2/expm1, erf (exact GELU), a
softplus that is stable at ±1e4, square, pow, clamp/clip, fmod, round/floor/ceil/trunc, lerp, the
activations elu, leaky_relu, hardtanh and relu6, the tests isnan/isinf/isfinite, the comparisons (<, ==,
..., isclose/allclose) and logic (&, |, ^, ~), integer division (//, %), and the special functions erfc,
erfinv, lgamma, digamma, polygamma, mvlgamma, i0, logit and sinc (special.py computes those numpy lacks).

sin, cos, erf and log1p are primitives of tinygrad_like/ops.py; asin, acos, atan, asinh, acosh, atanh,
atan2, hypot, expm1, fmod, erfc, erfinv, lgamma, polygamma (digamma is its n = 0) and i0 are primitives
of this file (forward and backward side by side, below); the rest are composed from primitives, so their
gradients (and second derivatives) come for free. Every function keeps the input's shape and, for
float32 input, float32; integer and bool input gives float32, as in PyTorch. Tensor inherits them from
`ElementwiseMathMixin`.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like import dtypes, ops, special
from tinygrad_like.function import Function
from tinygrad_like.ops import unbroadcast

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor


def _constant(self: Tensor, array: np.ndarray) -> Tensor:
    return self._result(array, None)


# ---------------------------------------------------------------- this file's primitives

class Asin(Function):
    def forward(self, x): return np.arcsin(x)
    def backward(self, grad, out):                                        # d asin = 1/√(1 − x²)
        x = self.parents[0]
        return grad / (1 - x * x).sqrt()


class Acos(Function):
    def forward(self, x): return np.arccos(x)
    def backward(self, grad, out):                                        # d acos = −1/√(1 − x²)
        x = self.parents[0]
        return -grad / (1 - x * x).sqrt()


class Atan(Function):
    def forward(self, x): return np.arctan(x)
    def backward(self, grad, out):                                        # d atan = 1/(1 + x²)
        x = self.parents[0]
        return grad / (1 + x * x)


class Asinh(Function):
    def forward(self, x): return np.arcsinh(x)
    def backward(self, grad, out):                                        # d asinh = 1/√(x² + 1)
        x = self.parents[0]
        return grad / (x * x + 1).sqrt()


class Acosh(Function):
    def forward(self, x): return np.arccosh(x)
    def backward(self, grad, out):                                        # d acosh = 1/√(x² − 1)
        x = self.parents[0]
        return grad / ((x - 1).sqrt() * (x + 1).sqrt())                   # (x−1)(x+1): exact near x = 1


class Atanh(Function):
    def forward(self, x): return np.arctanh(x)
    def backward(self, grad, out):                                        # d atanh = 1/(1 − x²)
        x = self.parents[0]
        return grad / ((1 - x) * (1 + x))


class Expm1(Function):
    """e^x − 1, exact for tiny x, where exp(x) − 1 loses every digit."""
    def forward(self, x): return np.expm1(x)
    def backward(self, grad, out): return grad * self.parents[0].exp()   # d(e^x − 1) = e^x (not out + 1: 0 at x < −37)


class Atan2(Function):
    """The angle of the point (x, y): atan(y/x) in the right quadrant, in (−π, π]."""
    def forward(self, y, x): return np.arctan2(y, x)
    def backward(self, grad, out):                                        # d atan2 = (x dy − y dx) / (x² + y²)
        y, x = self.parents
        r2 = x * x + y * y
        return (unbroadcast(grad * x / r2, y.shape) if y.requires_grad else None,
                unbroadcast(-grad * y / r2, x.shape) if x.requires_grad else None)


class Hypot(Function):
    """√(x² + y²), without overflow or underflow in the squares (numpy's hypot): hypot(1e300, 1e300) is finite."""
    def forward(self, x, y): return np.hypot(x, y)
    def backward(self, grad, out):                                        # d hypot = (x dx + y dy) / hypot
        x, y = self.parents
        return (unbroadcast(grad * x / out, x.shape) if x.requires_grad else None,
                unbroadcast(grad * y / out, y.shape) if y.requires_grad else None)


class Fmod(Function):
    """x − trunc(x/y)·y: C's fmod, with the sign of x (Mod, Python's %, takes the sign of y)."""
    def forward(self, x, y): return np.fmod(x, y)
    def backward(self, grad, out):                                        # d fmod = dx − trunc(x/y) dy
        x, y = self.parents
        return (unbroadcast(grad, x.shape) if x.requires_grad else None,
                unbroadcast(-grad * (x / y).trunc(), y.shape) if y.requires_grad else None)


# ---------------------------------------------------------------- special functions (tinygrad_like/special.py)

class Erfc(Function):
    """1 − erf(x), exact where it is tiny."""
    def forward(self, x): return special.erfc(x)
    def backward(self, grad, out):                                        # d erfc = −2/√π e^(−x²)
        x = self.parents[0]
        return grad * (-x * x).exp() * (-2 / math.sqrt(math.pi))


class Erfinv(Function):
    """The x with erf(x) = y, for y in (−1, 1)."""
    def forward(self, y): return special.erfinv(y)
    def backward(self, grad, out):                                        # d erfinv = √π/2 e^(erfinv(y)²)
        return grad * (out * out).exp() * (math.sqrt(math.pi) / 2)


class Lgamma(Function):
    """ln|Γ(x)|."""
    def forward(self, x): return special.lgamma(x)
    def backward(self, grad, out): return grad * self.parents[0].digamma()  # d lgamma = ψ


class Polygamma(Function):
    """ψ⁽ⁿ⁾(x), the n-th derivative of digamma ψ = (ln Γ)′ (n = 0: digamma itself)."""
    def forward(self, x, n):
        self.n = n
        return special.polygamma(n, x)
    def backward(self, grad, out): return grad * self.parents[0].polygamma(self.n + 1)   # d ψ⁽ⁿ⁾ = ψ⁽ⁿ⁺¹⁾


class I0(Function):
    """I₀(x), the modified Bessel function of the first kind of order 0 (numpy's i0)."""
    def forward(self, x): return np.i0(x).astype(x.dtype, copy=False)
    def backward(self, grad, out): return grad * I1.apply(self.parents[0])  # d I₀ = I₁


class I1(Function):
    """I₁(x), the derivative of I₀ (the gradient of i0; special.py)."""
    def forward(self, x): return special.i1(x)
    def backward(self, grad, out):                                        # d I₁ = I₀ − I₁/x (1/2 at x = 0)
        x = self.parents[0]
        zero = x == 0
        safe = zero.where(1.0, x)
        return grad * zero.where(0.5, I0.apply(x) - out / safe)


class ElementwiseMathMixin:
    """Tensor's elementwise math beyond the core: sin, erf, clamp, round, lerp, isclose, ..."""

    __slots__ = ()

    def sin(self) -> Tensor: return ops.Sin.apply(self._floating())

    def cos(self) -> Tensor: return ops.Cos.apply(self._floating())

    def erf(self) -> Tensor:
        """erf(x) = 2/√π ∫₀ˣ e^(-t²) dt, the Gaussian CDF's core: Φ(x) = (1 + erf(x/√2)) / 2."""
        return ops.Erf.apply(self._floating())

    def log1p(self) -> Tensor: return ops.Log1p.apply(self._floating())

    def expm1(self) -> Tensor: return Expm1.apply(self._floating())

    def asin(self) -> Tensor: return Asin.apply(self._floating())

    def acos(self) -> Tensor: return Acos.apply(self._floating())

    def atan(self) -> Tensor: return Atan.apply(self._floating())

    def asinh(self) -> Tensor: return Asinh.apply(self._floating())

    def acosh(self) -> Tensor: return Acosh.apply(self._floating())

    def atanh(self) -> Tensor: return Atanh.apply(self._floating())

    def atan2(self, other) -> Tensor:
        """The angle of the point (x=other, y=self), in (−π, π]: atan2(0, −1) = π. Broadcasts."""
        y, x = self._floats(other)
        return Atan2.apply(y, x)

    def hypot(self, other) -> Tensor:
        """√(x² + y²), the length of (x, y), exact at every scale. Broadcasts."""
        return Hypot.apply(*self._floats(other))

    def sinh(self) -> Tensor:
        """(e^x − e^−x)/2, written with expm1 so that it stays exact near 0."""
        x = self._floating()
        return (x.expm1() - (-x).expm1()) * 0.5

    def cosh(self) -> Tensor:
        """(e^x + e^−x)/2."""
        x = self._floating()
        return (x.exp() + (-x).exp()) * 0.5

    def log10(self) -> Tensor:
        """log₁₀ x = ln x / ln 10."""
        return self.log() * (1 / math.log(10))

    def fmod(self, other) -> Tensor:
        """x − trunc(x/y)·y, the sign of x (C's fmod); `%` and remainder() take the sign of y."""
        a, b = self._pair(other)
        if a.dtype.kind != "f" and not b._data.all():
            raise ZeroDivisionError(f"fmod: integer division by zero (shapes {a.shape} and {b.shape})")
        return Fmod.apply(a, b)

    def remainder(self, other) -> Tensor:
        """self − ⌊self/other⌋·other, the sign of other: Python's and PyTorch's `%`."""
        return self % other

    def trunc(self) -> Tensor:
        """x rounded toward zero, in x's dtype. No gradient."""
        return _constant(self, np.trunc(self._data))

    fix = trunc

    # ---------------------------------------------------------------- special functions
    def erfc(self) -> Tensor:
        """1 − erf(x), without cancellation: erfc(10) = 2.09e−45 (special.py)."""
        return Erfc.apply(self._floating())

    def erfinv(self) -> Tensor:
        """The inverse of erf on (−1, 1) (±inf at ±1, NaN outside), to float64 rounding (special.py)."""
        return Erfinv.apply(self._floating())

    def lgamma(self) -> Tensor:
        """ln|Γ(x)|, +inf at 0, −1, −2, ... (the C library's, as PyTorch's)."""
        return Lgamma.apply(self._floating())

    def digamma(self) -> Tensor:
        """ψ(x) = Γ′(x)/Γ(x), the derivative of lgamma."""
        return Polygamma.apply(self._floating(), n=0)

    def polygamma(self, n: int) -> Tensor:
        """ψ⁽ⁿ⁾(x), the n-th derivative of digamma (n ≥ 0)."""
        if not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"polygamma: n must be a non-negative integer, got {n!r}")
        return Polygamma.apply(self._floating(), n=int(n))

    def mvlgamma(self, p: int) -> Tensor:
        """The multivariate log-gamma of dimension p: p(p−1)/4 · ln π + Σᵢ₌₀^(p−1) lgamma(x − i/2), defined for
        x > (p − 1)/2 (an error elsewhere, as in PyTorch)."""
        if not isinstance(p, (int, np.integer)) or p < 1:
            raise ValueError(f"mvlgamma: p must be an integer >= 1, got {p!r}")
        x = self._floating()
        if not (x._data > (p - 1) / 2).all():
            raise ValueError(f"mvlgamma: every entry must be > (p − 1)/2 = {(p - 1) / 2} for p = {p}")
        return sum((x - i / 2).lgamma() for i in range(p)) + p * (p - 1) / 4 * math.log(math.pi)

    def i0(self) -> Tensor:
        """I₀(x), the modified Bessel function of the first kind of order 0 (numpy's i0); its derivative is I₁."""
        return I0.apply(self._floating())

    def logit(self, eps: float | None = None) -> Tensor:
        """ln(p/(1 − p)), the inverse of sigmoid (the quotient is exact to rounding, so its ln is too); with eps,
        p is first clamped into [eps, 1 − eps] (PyTorch's option; the gradient is then 0 where p was clamped)."""
        p = self._floating()
        if eps is not None:
            p = p.clamp(eps, 1 - eps)
        return (p / (1 - p)).log()                                        # 1 − p is exact where p is near 1

    def sinc(self) -> Tensor:
        """sin(πx)/(πx), 1 at x = 0 (where its derivative is 0)."""
        x = self._floating()
        zero = x == 0
        pix = zero.where(1.0, x) * math.pi                                # not 0/0 in the gradient either
        return zero.where(1.0, pix.sin() / pix)

    # ---------------------------------------------------------------- activations
    def elu(self, alpha: float = 1.0) -> Tensor:
        """x for x > 0, α(e^x − 1) elsewhere; the derivative at 0 is α, as in PyTorch. The exponential reads
        min(x, 0), so a large x never overflows it (e^x = inf would make the unused branch's gradient 0·inf = NaN)."""
        return (self > 0).where(self, self.clamp(max=0).expm1() * alpha)

    def leaky_relu(self, negative_slope: float = 0.01) -> Tensor:
        """x for x > 0, negative_slope·x elsewhere; the derivative at 0 is negative_slope, as in PyTorch."""
        return (self > 0).where(self, self * negative_slope)

    def hardtanh(self, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
        """x clamped into [min_val, max_val]. Unlike clamp, the derivative is 0 at the bounds themselves, as
        PyTorch's hardtanh (and relu6) has it; NaN stays NaN."""
        inside = (self > min_val) & (self < max_val)
        return inside.where(self, self.clamp(min_val, max_val).detach())

    def relu6(self) -> Tensor:
        """min(max(x, 0), 6), MobileNet's activation: hardtanh(0, 6)."""
        return self.hardtanh(0.0, 6.0)

    # ---------------------------------------------------------------- tests, no gradient
    def isnan(self) -> Tensor: return _constant(self, np.isnan(self._data))
    def isinf(self) -> Tensor: return _constant(self, np.isinf(self._data))
    def isfinite(self) -> Tensor: return _constant(self, np.isfinite(self._data))

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
