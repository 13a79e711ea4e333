"""The rest of PyTorch's elementwise Tensor methods, each a few lines over the engine's ops: the floating
point helpers (`copysign`, `nextafter`, `ldexp`, `frexp`, `nan_to_num`, `fmax`/`fmin`, `float_power`,
`heaviside`), `xlogy`, `logaddexp2`, `addcmul`/`addcdiv`, integer ops (`gcd`, `lcm`, the `bitwise_*`
ones with the shifts), `isreal`, the legacy `new`, `detach_`, the conjugate transposes of a real
matrix (`H`, `mH`, `adjoint`), what complex-aware code asks of a real tensor (`sgn`, `angle`, `conj`,
`real`, `is_complex`, ...; `imag` stays PyTorch's error), and the in-place `name_` form of each, and of
the comparisons and logic.

The differentiable ones are compositions of engine ops, so their gradients come from those (the table of
tests/test_api_gradcheck.py checks them); the integer, rounding and bit ops are constants, as their
derivative is 0 wherever it exists. The dialect attaches these to Tensor (dialect/__init__.py).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like.dialect.aliases import _array, _in_place
from tinygrad_like.errors import ShapeError

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor


def _integers(op: str, *tensors) -> None:
    for t in tensors:
        if t.dtype.kind not in "biu":
            raise TypeError(f"{op}: needs integer (or bool) tensors, got dtype {t.dtype}")


class Elementwise:
    """PyTorch's elementwise methods beyond the engine's own."""

    # ---------------------------------------------------------------- floating point helpers
    def copysign(self, other) -> Tensor:
        """|self| with the sign of `other` (−0.0 counts as negative); always floating. The gradient goes to
        self only (±1, and 0 at self = 0, as in PyTorch)."""
        x, y = self._floats(other)
        return y.signbit().where(-x.abs(), x.abs())

    def nextafter(self, other) -> Tensor:
        """The next floating point number after self towards other (of self's dtype). No gradient."""
        x, y = self._pair(other)
        if x.dtype.kind != "f":
            raise TypeError(f"nextafter: needs floating point tensors, got dtype {x.dtype}")
        return x._result(np.nextafter(x._data, y._data), None)

    def ldexp(self, other) -> Tensor:
        """self · 2^other (floating, as in PyTorch); 2^other is exact for integer exponents."""
        if hasattr(other, "_ctx"):
            x, exponent = self._floats(other)
            return x * 2.0 ** exponent
        return self._floating() * (math.ldexp(1.0, int(other)) if float(other).is_integer() else 2.0 ** other)

    def frexp(self) -> tuple:
        """(mantissa, exponent) with self = mantissa · 2^exponent, |mantissa| in [0.5, 1) (0 for 0); the
        exponent is int32. No gradient."""
        if self.dtype.kind != "f":
            raise TypeError(f"frexp: needs a floating point tensor, got dtype {self.dtype}")
        mantissa, exponent = np.frexp(self._data)
        return self._result(mantissa, None), self._result(exponent.astype(np.int32), None)

    def nan_to_num(self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
        """NaN, +inf and −inf replaced by `nan`, `posinf` and `neginf` (default: the dtype's largest and
        smallest finite numbers). The gradient passes where self is finite, 0 elsewhere."""
        if self.dtype.kind != "f":
            return self.clone()
        big = np.finfo(self.dtype).max
        out = self.isnan().where(nan, self)
        out = self.isposinf().where(big if posinf is None else posinf, out)
        return self.isneginf().where(-big if neginf is None else neginf, out)

    def fmax(self, other) -> Tensor:
        """The larger of the two, where a NaN loses to a number (numpy's fmax; NaN only where both are). A tie
        gives self, and self the gradient, as PyTorch's fmax."""
        x, y = self._pair(other)
        return (y.isnan() | (x >= y)).where(x, y)

    def fmin(self, other) -> Tensor:
        """The smaller of the two, where a NaN loses to a number (numpy's fmin; NaN only where both are). A tie
        gives self, and self the gradient, as PyTorch's fmin."""
        x, y = self._pair(other)
        return (y.isnan() | (x <= y)).where(x, y)

    def float_power(self, exponent) -> Tensor:
        """self ** exponent computed in float64, as PyTorch's float_power (the result is float64)."""
        base = self.cast(np.float64)
        return base ** (exponent.cast(np.float64) if hasattr(exponent, "_ctx") else exponent)

    def heaviside(self, values) -> Tensor:
        """The step function: 1 where self > 0, `values` where self = 0, 0 elsewhere (NaN included, as in
        PyTorch; numpy's heaviside keeps NaN). In the dtype both promote to; no gradient (PyTorch has none)."""
        if not hasattr(values, "_ctx"):
            raise TypeError("heaviside: values must be a tensor, as in PyTorch (torch.tensor([0.5]) for a number)")
        x, v = self._pair(values)
        step = np.where(x._data == 0, v._data, x._data > 0)
        return x._result(step.astype(x.dtype, copy=False), None)

    def xlogy(self, other) -> Tensor:
        """self · log(other), and 0 where self = 0 (even where other = 0), unless other is NaN. The zeros
        are exact in the gradient too: d/dself = log(other) elsewhere, d/dother = self/other."""
        x, y = self._floats(other)
        zero = (x == 0) & ~y.isnan()
        return zero.where(0.0, x * zero.where(1.0, y).log())

    def logaddexp2(self, other) -> Tensor:
        """log₂(2^x + 2^y), never overflowing: logaddexp in units of ln 2."""
        x, y = self._floats(other)
        return (x * math.log(2)).logaddexp(y * math.log(2)) * (1 / math.log(2))

    def addcmul(self, tensor1, tensor2, *, value=1) -> Tensor:
        """self + value · tensor1 · tensor2 (broadcast)."""
        return self + (tensor1 * tensor2 if value == 1 else tensor1 * tensor2 * value)

    def addcdiv(self, tensor1, tensor2, *, value=1) -> Tensor:
        """self + value · tensor1 / tensor2 (broadcast); integer tensor1 and tensor2 are refused, as in
        PyTorch (their quotient would be a float)."""
        if tensor1.dtype.kind != "f" and tensor2.dtype.kind != "f":
            raise TypeError("addcdiv: integer division of tensor1 by tensor2 is not supported (as in PyTorch); "
                            "cast one of them to a floating point dtype")
        return self + (tensor1 / tensor2 if value == 1 else tensor1 / tensor2 * value)

    def isreal(self) -> Tensor:
        """True everywhere: the engine's tensors are real (PyTorch's answer for a real dtype)."""
        return self._result(np.ones(self.shape, dtype=bool), None)

    # ---------------------------------------------------------------- real numbers as complex-aware code asks
    def sgn(self) -> Tensor:
        """z/|z| for complex numbers; for the engine's real numbers, sign(x)."""
        return self.sign()

    def angle(self) -> Tensor:
        """The argument of a number: for real x, π where x < 0, 0 elsewhere, NaN at NaN (floating). No gradient
        (PyTorch's is 0)."""
        x = self._floating()
        angle = np.where(x._data < 0, np.pi, 0.0).astype(x.dtype)
        return x._result(np.where(np.isnan(x._data), x._data, angle), None)

    def conj(self) -> Tensor:
        """The complex conjugate: a real tensor is its own (self, as in PyTorch)."""
        return self

    resolve_conj = resolve_neg = conj

    def conj_physical(self) -> Tensor:
        """The conjugate as a new tensor: a copy of a real tensor (a recorded identity, so gradients pass)."""
        return self.clone()

    def conj_physical_(self) -> Tensor:
        return self

    @property
    def real(self) -> Tensor:
        """The real part: a real tensor itself."""
        return self

    def is_complex(self) -> bool: return False
    def is_conj(self) -> bool: return False
    def is_neg(self) -> bool: return False

    # ---------------------------------------------------------------- integers and bits
    def gcd(self, other) -> Tensor:
        """The greatest common divisor (non-negative; gcd(0, 0) = 0). Integers only."""
        x, y = self._pair(other)
        _integers("gcd", x, y)
        return x._result(np.gcd(x._data, y._data), None)

    def lcm(self, other) -> Tensor:
        """The least common multiple (non-negative; 0 when either is 0). Integers only."""
        x, y = self._pair(other)
        _integers("lcm", x, y)
        return x._result(np.lcm(x._data, y._data), None)

    def bitwise_and(self, other) -> Tensor: return self & other
    def bitwise_or(self, other) -> Tensor: return self | other
    def bitwise_xor(self, other) -> Tensor: return self ^ other

    def bitwise_not(self) -> Tensor:
        _integers("bitwise_not", self)
        return ~self

    def bitwise_left_shift(self, other) -> Tensor:
        """self · 2^other on integers, bits shifted out of the dtype lost (two's complement)."""
        x, y = self._pair(other)
        _integers("bitwise_left_shift", x, y)
        return x._result(np.left_shift(x._data, y._data), None)

    def bitwise_right_shift(self, other) -> Tensor:
        """⌊self / 2^other⌋ on integers (an arithmetic shift: negative numbers stay negative)."""
        x, y = self._pair(other)
        _integers("bitwise_right_shift", x, y)
        return x._result(np.right_shift(x._data, y._data), None)

    # ---------------------------------------------------------------- the tensor itself
    def detach_(self) -> Tensor:
        """self cut from the graph that made it, in place: a leaf that does not require grad."""
        self._ctx, self.requires_grad = None, False
        return self

    def const_data_ptr(self) -> int:
        """The address of the first element (the same as data_ptr(): nothing here is read-only by type)."""
        return self.data_ptr()

    @property
    def H(self) -> Tensor:
        """The conjugate transpose of a matrix; the engine's numbers are real, so the transpose (2-D only,
        as in PyTorch; a 0-d tensor is itself)."""
        if self.ndim not in (0, 2):
            raise ShapeError(f"H: only for matrices (2-D tensors), got shape {self.shape}; for a batch use mH")
        return self if self.ndim == 0 else self.transpose(0, 1)

    @property
    def mH(self) -> Tensor:
        """The conjugate transpose of the last two dimensions (real numbers: mT)."""
        return self.adjoint()

    def adjoint(self) -> Tensor:
        """The conjugate transpose of the last two dimensions (real numbers: transpose(-2, -1))."""
        if self.ndim < 2:
            raise ShapeError(f"adjoint: needs at least 2 dimensions, got shape {self.shape}")
        return self.transpose(-2, -1)

    def new(self, *args, **kwargs) -> Tensor:
        """PyTorch's legacy constructor in self's dtype: new(2, 3) or new(torch.Size([2, 3])) an
        uninitialised (here: zero) tensor of that shape, new(data) a tensor of `data`, new() an empty one."""
        if kwargs:
            raise TypeError(f"new: takes sizes or data only, got {sorted(kwargs)}; use new_zeros or new_tensor")
        if len(args) == 1 and isinstance(args[0], tuple):          # a torch.Size or a tuple of sizes
            args = args[0]
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return type(self)(np.zeros(tuple(int(a) for a in args) or (0,), dtype=self.dtype))
        if len(args) == 1:
            return type(self)(np.asarray(_array(args[0]), dtype=self.dtype))
        raise TypeError(f"new: expected sizes or one sequence of data, got {args!r}")

    # ---------------------------------------------------------------- in place, by name

    def addcmul_(self, tensor1, tensor2, *, value=1) -> Tensor:
        return self._update("addcmul_", lambda t: t.addcmul(tensor1, tensor2, value=value), _either(tensor1, tensor2))

    def addcdiv_(self, tensor1, tensor2, *, value=1) -> Tensor:
        return self._update("addcdiv_", lambda t: t.addcdiv(tensor1, tensor2, value=value), _either(tensor1, tensor2))

    def float_power_(self, exponent) -> Tensor:
        """In place: only into a float64 tensor, as in PyTorch (the result is float64)."""
        if self.dtype != np.float64:
            raise TypeError(f"float_power_: the result is float64 and cannot be written into a {self.dtype} "
                            "tensor (as in PyTorch); use float_power, or a float64 tensor")
        return self._update("float_power_", lambda t: t.float_power(exponent), exponent)


def _either(a, b):
    """Whichever of two operands requires grad (what decides whether an in-place write is recorded)."""
    return a if getattr(a, "requires_grad", False) else b


# x.acosh_(), x.eq_(y), x.bitwise_and_(y), ...: the in-place form of each (PyTorch's rules: dialect/inplace.py)
for _name in ("acosh", "asinh", "atanh", "deg2rad", "rad2deg", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
              "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
              "bitwise_left_shift", "bitwise_right_shift", "copysign", "nextafter", "ldexp", "nan_to_num", "heaviside",
              "xlogy", "gcd", "lcm", "erfc", "erfinv", "lgamma", "digamma", "polygamma", "mvlgamma", "i0", "logit",
              "sinc", "sgn"):
    setattr(Elementwise, f"{_name}_", _in_place(_name))
for _alias, _name in (("arccosh", "acosh"), ("arcsinh", "asinh"), ("arctanh", "atanh"), ("greater", "gt"),
                      ("greater_equal", "ge"), ("less", "lt"), ("less_equal", "le"), ("not_equal", "ne")):
    setattr(Elementwise, f"{_alias}_", getattr(Elementwise, f"{_name}_"))
