"""PyTorch's other names for what the engine already does, and the short compositions PyTorch programs
call by name: comparisons by name (`eq`, `gt`, ...), `neg`, `mm`/`mv`/`bmm`/`outer`, `t`, `view_as`,
`expand_as`, `swapaxes`, `movedim`, `narrow`, `select`, `unbind`, `tile`, `ravel`, the logical ops,
`reciprocal`, `tan`, `logaddexp`, `frac`, `trace`, `diff`, `nansum`, ..., and the in-place
form `name_` of each elementwise op (`relu_`, `exp_`, `pow_`, ...), which follow the rules of
inplace.py (written into the array, or recorded on an intermediate of a graph).

Each is one line or a few, composed of engine ops, so its gradient comes from theirs (the table of
tests/test_api_gradcheck.py checks the ones that compute). The dialect attaches them to Tensor.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like.errors import ShapeError

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor


def _in_place(name: str):
    """`x.name_(*args)`: x.name(*args) written into x, by inplace.py's rules."""
    def method(self, *args, **kwargs):
        other = args[0] if args else None
        return self._update(f"{name}_", lambda t: getattr(t, name)(*args, **kwargs), other)
    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In place: x.{name}(...) written into x (dialect/inplace.py's rules)."
    return method


class Aliases:
    """PyTorch's names for the engine's ops, and short compositions of them."""

    # ---------------------------------------------------------------- comparisons and arithmetic by name
    def eq(self, other) -> Tensor: return self == other
    def ne(self, other) -> Tensor: return self != other
    def lt(self, other) -> Tensor: return self < other
    def le(self, other) -> Tensor: return self <= other
    def gt(self, other) -> Tensor: return self > other
    def ge(self, other) -> Tensor: return self >= other
    greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne

    def equal(self, other) -> bool:
        """True when the shapes and every entry agree (a Python bool, as in PyTorch)."""
        return self.shape == other.shape and bool((self._data == other._data).all())

    def neg(self) -> Tensor: return -self
    negative = neg

    def positive(self) -> Tensor: return self
    def absolute(self) -> Tensor: return self.abs()
    def multiply(self, other) -> Tensor: return self * other
    def subtract(self, other, alpha=1) -> Tensor: return self.sub(other, alpha)
    def arccos(self) -> Tensor: return self.acos()
    def arcsin(self) -> Tensor: return self.asin()
    def arctan(self) -> Tensor: return self.atan()
    def arctan2(self, other) -> Tensor: return self.atan2(other)
    def arccosh(self) -> Tensor: return self.acosh()
    def arcsinh(self) -> Tensor: return self.asinh()
    def arctanh(self) -> Tensor: return self.atanh()
    def clip_(self, min=None, max=None) -> Tensor: return self.clamp_(min, max)

    def reciprocal(self) -> Tensor: return 1 / self
    def floor_divide(self, other) -> Tensor: return self // other

    def clamp_min(self, min) -> Tensor: return self.clamp(min=min)
    def clamp_max(self, max) -> Tensor: return self.clamp(max=max)

    def tan(self) -> Tensor:
        """sin x / cos x (its derivative, 1 + tan² x, comes from the quotient's)."""
        return self.sin() / self.cos()

    def logaddexp(self, other) -> Tensor:
        """log(e^x + e^y) = max(x, y) + log1p(e^−|x − y|): never overflows (x = y = ±inf gives ±inf)."""
        gap = (self == other).where(0.0, -(self - other).abs())
        return self.maximum(other) + gap.exp().log1p()

    def frac(self) -> Tensor:
        """x − trunc(x): the fractional part, with x's sign; derivative 1."""
        return self - self.trunc()

    def rad2deg(self) -> Tensor: return self * (180 / math.pi)
    def deg2rad(self) -> Tensor: return self * (math.pi / 180)

    def signbit(self) -> Tensor: return self._result(np.signbit(self._data), None)
    def isposinf(self) -> Tensor: return self._result(np.isposinf(self._data), None)
    def isneginf(self) -> Tensor: return self._result(np.isneginf(self._data), None)

    def logical_not(self) -> Tensor: return self._result(np.logical_not(self._data), None)
    def logical_and(self, other) -> Tensor: return self._result(np.logical_and(self._data, _array(other)), None)
    def logical_or(self, other) -> Tensor: return self._result(np.logical_or(self._data, _array(other)), None)
    def logical_xor(self, other) -> Tensor: return self._result(np.logical_xor(self._data, _array(other)), None)

    def count_nonzero(self, dim=None) -> Tensor:
        return self._result(np.asarray(np.count_nonzero(self._data, axis=dim), dtype=np.int64), None)

    def nansum(self, dim=None, keepdim=False) -> Tensor:
        """Σ over `dim` with NaNs counted as 0 (their gradient is 0)."""
        return self.isnan().where(0.0, self).sum(dim, keepdim=keepdim)

    def nanmean(self, dim=None, keepdim=False) -> Tensor:
        """The mean of the entries that are not NaN."""
        counted = (~self.isnan()).sum(dim, keepdim=keepdim)
        return self.nansum(dim, keepdim) / counted

    # ---------------------------------------------------------------- products
    def mm(self, mat2) -> Tensor:
        """(n, m) @ (m, p): matmul restricted to two matrices, as PyTorch's mm."""
        if self.ndim != 2 or mat2.ndim != 2:
            raise ShapeError(f"mm: needs two matrices, got shapes {self.shape} and {mat2.shape}")
        return self @ mat2

    def mv(self, vec) -> Tensor:
        """(n, m) @ (m,) -> (n,)."""
        if self.ndim != 2 or vec.ndim != 1:
            raise ShapeError(f"mv: needs a matrix and a vector, got shapes {self.shape} and {vec.shape}")
        return self @ vec

    def bmm(self, mat2) -> Tensor:
        """Batched matrix product: (b, n, m) @ (b, m, p) -> (b, n, p), batch sizes equal (no broadcasting,
        as in PyTorch)."""
        if self.ndim != 3 or mat2.ndim != 3 or self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
            raise ShapeError(f"bmm: expected (b, n, m) and (b, m, p), got {self.shape} and {mat2.shape}")
        return self @ mat2

    def outer(self, vec2) -> Tensor:
        """The outer product of two vectors: (n,), (m,) -> (n, m), out[i, j] = self[i] · vec2[j]."""
        if self.ndim != 1 or vec2.ndim != 1:
            raise ShapeError(f"outer: expected two vectors, got shapes {self.shape} and {vec2.shape}")
        return self.reshape(-1, 1) * vec2.reshape(1, -1)

    ger = outer

    def trace(self) -> Tensor:
        """The sum of a matrix's diagonal."""
        if self.ndim != 2:
            raise ShapeError(f"trace: needs a matrix, got shape {self.shape}")
        return self.diagonal().sum()

    # ---------------------------------------------------------------- shapes
    def t(self) -> Tensor:
        """A matrix transposed (a vector or a number: itself), as PyTorch's t()."""
        if self.ndim > 2:
            raise ShapeError(f"t: expects a tensor of at most 2 dimensions, got shape {self.shape}; use transpose")
        return self.T

    def swapaxes(self, axis0: int, axis1: int) -> Tensor: return self.transpose(axis0, axis1)
    swapdims = swapaxes

    def movedim(self, source, destination) -> Tensor:
        """Axes `source` moved to positions `destination` (ints or sequences), the others in order."""
        src = [self._dim(d, "movedim") for d in np.atleast_1d(source)]
        dst = [self._dim(d, "movedim") for d in np.atleast_1d(destination)]
        order = [a for a in range(self.ndim) if a not in src]
        for d, s in sorted(zip(dst, src)):
            order.insert(d, s)
        return self.permute(*order)

    moveaxis = movedim

    def view_as(self, other) -> Tensor: return self.reshape(other.shape)
    def reshape_as(self, other) -> Tensor: return self.reshape(other.shape)
    def expand_as(self, other) -> Tensor: return self.expand(other.shape)
    def ravel(self) -> Tensor: return self.reshape(-1)

    def tile(self, *dims) -> Tensor:
        """repeat, with dims padded by leading 1s to the tensor's rank (numpy's and PyTorch's tile)."""
        dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
        return self.repeat(*((1,) * (self.ndim - len(dims)) + tuple(dims)))

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        d = self._dim(dim, "narrow")
        return self[(slice(None),) * d + (slice(start, start + length),)]

    def select(self, dim: int, index: int) -> Tensor:
        d = self._dim(dim, "select")
        return self[(slice(None),) * d + (index,)]

    def unbind(self, dim: int = 0) -> tuple:
        """The slices along `dim`, as a tuple of tensors one dimension smaller."""
        return tuple(self.select(dim, i) for i in range(self.shape[self._dim(dim, "unbind")]))

    def fliplr(self) -> Tensor: return self.flip(1)
    def flipud(self) -> Tensor: return self.flip(0)

    def diff(self, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
        """x[i + 1] − x[i] along `dim`, n times, after joining `prepend` before and `append` after x
        along `dim` (tensors of x's shape outside dim)."""
        out = self
        if prepend is not None or append is not None:
            out = type(self).cat(*[t for t in (prepend, self, append) if t is not None], dim=dim)
        for _ in range(n):
            out = out.narrow(dim, 1, out.shape[out._dim(dim, "diff")] - 1) - out.narrow(
                dim, 0, out.shape[out._dim(dim, "diff")] - 1)
        return out

    # ---------------------------------------------------------------- what a tensor is
    def is_floating_point(self) -> bool: return self.dtype.kind == "f"
    def is_signed(self) -> bool: return self.dtype.kind in "fi"
    def is_nonzero(self) -> bool: return bool(self._one("is_nonzero"))
    def is_same_size(self, other) -> bool: return self.shape == other.shape

    @property
    def itemsize(self) -> int: return self._data.itemsize

    @property
    def nbytes(self) -> int: return self._data.nbytes

    # ---------------------------------------------------------------- the activations PyTorch's Tensor has as methods
    def hardshrink(self, lambd: float = 0.5) -> Tensor:
        """x where |x| > λ, 0 elsewhere (F.hardshrink)."""
        return ((self > lambd) | (self < -lambd)).where(self, 0.0)

    def prelu(self, weight) -> Tensor:
        """x for x > 0, a·x elsewhere, the slopes a learned (F.prelu, nn.PReLU): `weight` holds one slope,
        or one per channel (dimension 1 of self (N, C, ...); a tensor of fewer dimensions has one channel)."""
        slopes, channels = weight.numel(), self.shape[1] if self.ndim > 1 else 1
        if weight.ndim > 1 or slopes not in (1, channels):
            raise ShapeError(f"prelu: weight {weight.shape} must hold 1 slope or one per channel (dimension 1, "
                             f"{channels} here) of input {self.shape}")
        a = weight.reshape(()) if slopes == 1 else weight.reshape(slopes, *([1] * (self.ndim - 2)))
        return (self > 0).where(self, self * a)

    # ---------------------------------------------------------------- in place, by name (and the loop below)
    absolute_ = _in_place("abs")
    arccos_, arcsin_, arctan_, arctan2_ = (_in_place(n) for n in ("acos", "asin", "atan", "atan2"))

    def multiply_(self, other) -> Tensor: return self.mul_(other)
    def subtract_(self, other, alpha=1) -> Tensor: return self.sub_(other, alpha)
    def divide_(self, other, *, rounding_mode=None) -> Tensor: return self.div_(other, rounding_mode=rounding_mode)
    true_divide_ = divide_


# x.relu_(), x.exp_(), x.pow_(2), ...: each elementwise op's in-place form
for _name in ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "exp", "expm1", "exp2", "erf", "floor", "fix",
              "frac", "log", "log10", "log1p", "log2", "neg", "negative", "reciprocal", "relu", "round", "rsqrt",
              "sigmoid", "sign", "sin", "sinh", "sqrt", "square", "tan", "tanh", "trunc", "pow", "fmod", "remainder",
              "atan2", "lerp", "hypot", "clamp_min", "clamp_max", "floor_divide", "tril", "triu"):
    setattr(Aliases, f"{_name}_", _in_place(_name))


def _array(value):
    return value._data if hasattr(value, "_ctx") else value
