"""PyTorch's arithmetic by name: out of place (`add`, `sub`, `mul`, `div`, each with PyTorch's `alpha`
where it has one) and in place (`add_`, `sub_`, `mul_`, `div_`, `clamp_`, `masked_fill_`, `zero_`,
`fill_`, `copy_`, `normal_`, `uniform_`, `x[index] = value`, and `t += x`, `-=`, `*=`, `/=`), with
PyTorch's rules for writing into a tensor.

An in-place method writes into the tensor's own array and returns the tensor itself, when no graph
is being recorded: under `no_grad()` (an optimizer step, an init), or when neither the tensor nor the
value written requires grad. While a graph is recorded:
- a leaf that requires grad (a parameter) is PyTorch's RuntimeError: update it under no_grad();
- any other tensor (an intermediate result, or a constant receiving a value that requires grad) is a
  RuntimeError too, saying to write it out of place. PyTorch records such writes and counts versions
  to catch a value that backward still needs; our graph holds tensors by identity, so rewriting one
  would silently change what backward reads. (`h += 1` still works on an intermediate: Python binds
  the name h to the new result, see InPlace._inplace.)
The random ones draw from the library's generator (tinygrad_like/random.py), or from `generator=`.
The dialect attaches these to Tensor (dialect/__init__.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like import random as _random
from tinygrad_like.errors import ShapeError
from tinygrad_like.function import no_grad, state

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor


def leaf_error(op: str) -> RuntimeError:
    return RuntimeError(f"{op}: a leaf tensor that requires grad cannot be changed in place while a graph is "
                        "recorded; update it under `with no_grad():`")


def check_inplace(t: Tensor, op: str, value=None) -> None:
    """PyTorch's rule for writing into `t` (see the module's docstring); an error when it may not be."""
    if not state.grad_enabled or not (t.requires_grad or getattr(value, "requires_grad", False)):
        return
    if t.requires_grad and t._ctx is None:
        raise leaf_error(op)
    name = op.rstrip("_")
    hint = f"h = h.{name}(...)" if name in ("add", "sub", "mul", "div", "clamp") else "a new tensor"
    raise RuntimeError(f"{op}: this tensor is part of a recorded graph (it, or the value written into it, requires "
                       f"grad), and changing it in place would change what backward reads; write {hint} out of "
                       "place, or do it under `with no_grad():`")


def write(t: Tensor, values, op: str, casting: str = "same_kind") -> Tensor:
    """Write `values` (an array or a number, broadcast to t's shape) into t's own array; returns t."""
    values = np.asarray(values)
    try:
        fits = np.broadcast_shapes(values.shape, t.shape) == t.shape
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"{op}: a value of shape {values.shape} does not fit the tensor's shape {t.shape}")
    if not np.can_cast(values.dtype, t.dtype, casting):
        raise TypeError(f"{op}: the result's dtype {values.dtype} cannot be written into a {t.dtype} tensor")
    if not t._data.flags.writeable:
        raise ValueError(f"{op}: this tensor's array is read-only (a broadcast view?); make a copy first")
    np.copyto(t._data, values, casting=casting)
    return t


def _numpy_generator(generator) -> np.random.Generator:
    """The library's generator, or the one passed: a numpy Generator, or an object holding one as `.generator`
    (tinygrad_like.torch's Generator)."""
    if generator is None:
        return _random.rng()
    found = generator if isinstance(generator, np.random.Generator) else getattr(generator, "generator", None)
    if not isinstance(found, np.random.Generator):
        raise TypeError(f"generator must be a numpy Generator or hold one as .generator, "
                        f"got {type(generator).__name__}")
    return found


class InPlace:
    """PyTorch's arithmetic methods, and the in-place ones learners write."""

    # ---------------------------------------------------------------- out of place, by name
    def add(self, other, alpha=1) -> Tensor:
        """self + alpha·other."""
        return self + (other if alpha == 1 else other * alpha)

    def sub(self, other, alpha=1) -> Tensor:
        """self − alpha·other."""
        return self - (other if alpha == 1 else other * alpha)

    def mul(self, other) -> Tensor:
        return self * other

    def div(self, other) -> Tensor:
        """True division: integers give float32, as in PyTorch."""
        return self / other

    # ---------------------------------------------------------------- in place
    def _update(self, op: str, compute, other=None) -> Tensor:
        """Write compute() (an out-of-place op of self and other) into self, by the rules above."""
        check_inplace(self, op, other)
        with no_grad():
            result = compute()
        if result.shape != self.shape:
            raise ShapeError(f"{op}: the result's shape {result.shape} is not the tensor's shape {self.shape} "
                             "(the other operand must broadcast to it)")
        return write(self, result._data, op)

    def add_(self, other, alpha=1) -> Tensor: return self._update("add_", lambda: self.add(other, alpha), other)
    def sub_(self, other, alpha=1) -> Tensor: return self._update("sub_", lambda: self.sub(other, alpha), other)
    def mul_(self, other) -> Tensor: return self._update("mul_", lambda: self * other, other)
    def div_(self, other) -> Tensor: return self._update("div_", lambda: self / other, other)

    def clamp_(self, min=None, max=None) -> Tensor:
        return self._update("clamp_", lambda: self.clamp(min, max))

    def masked_fill_(self, mask, value) -> Tensor:
        return self._update("masked_fill_", lambda: self.masked_fill(mask, value), value)

    def zero_(self) -> Tensor:
        check_inplace(self, "zero_")
        return write(self, 0, "zero_", casting="unsafe")

    def fill_(self, value) -> Tensor:
        """Every entry set to `value` (a number, or a one-element tensor), converted to self's dtype."""
        check_inplace(self, "fill_", value)
        if hasattr(value, "_ctx"):
            if value._data.ndim:
                raise ShapeError(f"fill_: the value must be a number or a 0-d tensor, got shape {value.shape}")
            value = value._data
        return write(self, value, "fill_", casting="unsafe")

    def __setitem__(self, index, value) -> None:
        """x[index] = value, written into x's own array (PyTorch's `losses[k] = loss.item()`), with the
        rules of the other in-place methods; value (a number, an array or a tensor) is broadcast to the
        shape of x[index] and converted to x's dtype. Indexes as __getitem__ does (ints, slices, masks,
        integer arrays or tensors)."""
        check_inplace(self, "setitem", value)
        if isinstance(index, tuple):
            index = tuple(i._data if hasattr(i, "_ctx") else i for i in index)
        elif hasattr(index, "_ctx"):
            index = index._data
        values = value._data if hasattr(value, "_ctx") else value
        if not self._data.flags.writeable:
            raise ValueError("setitem: this tensor's array is read-only (a broadcast view?); make a copy first")
        try:
            part = self._data[index]
        except IndexError as e:
            raise IndexError(f"setitem: {e} (tensor shape {self.shape})") from None
        try:
            self._data[index] = values
        except ValueError:
            raise ShapeError(f"setitem: a value of shape {np.shape(values)} does not fit x[index] of shape "
                             f"{np.shape(part)} (tensor shape {self.shape})") from None

    def copy_(self, src, non_blocking: bool = False) -> Tensor:
        """src's values (broadcast to self's shape) written into self, converted to self's dtype
        (floats into integers truncate toward 0, as in PyTorch)."""
        check_inplace(self, "copy_", src)
        return write(self, src._data if hasattr(src, "_ctx") else src, "copy_", casting="unsafe")

    def _draw(self, op: str, draws) -> Tensor:
        check_inplace(self, op)
        if self.dtype.kind != "f":
            raise TypeError(f"{op}: needs a floating point tensor, got dtype {self.dtype}")
        return write(self, draws, op, casting="unsafe")

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
        """Fill with samples of N(mean, std²)."""
        return self._draw("normal_", _numpy_generator(generator).normal(mean, std, self.shape))

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
        """Fill with samples uniform in [a, b) (PyTorch names them from and to)."""
        return self._draw("uniform_", _numpy_generator(generator).uniform(a, b, self.shape))

    # ---------------------------------------------------------------- t op= other
    def _inplace(self, other, op, name: str):
        """`t op= other`. With no graph being recorded (under no_grad(), or nothing requires grad) the
        result is written into t's own array: the same Tensor, the same array, as in PyTorch, so that
        `with no_grad(): w -= lr * w.grad` trains w. While recording, a leaf that requires grad is an
        error (PyTorch's too); an intermediate result becomes a new node that Python binds to the name
        (unlike the named in-place methods, whose result a caller may drop: see above)."""
        recording = state.grad_enabled and (self.requires_grad or getattr(other, "requires_grad", False))
        if not recording:
            return self._update(name, lambda: op(self, other), other)
        if self.requires_grad and self._ctx is None:
            raise leaf_error(name)
        return op(self, other)

    def __iadd__(self, other): return self._inplace(other, type(self).__add__, "+=")
    def __isub__(self, other): return self._inplace(other, type(self).__sub__, "-=")
    def __imul__(self, other): return self._inplace(other, type(self).__mul__, "*=")
    def __itruediv__(self, other): return self._inplace(other, type(self).__truediv__, "/=")
