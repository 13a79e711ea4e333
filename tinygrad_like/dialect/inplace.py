"""PyTorch's arithmetic by name: out of place (`add`, `sub`, `mul`, `div`, each with PyTorch's `alpha`
where it has one) and in place (`add_`, `sub_`, `mul_`, `div_`, `clamp_`, `masked_fill_`, `zero_`,
`fill_`, `copy_`, `normal_`, `uniform_`, `cauchy_`, ..., `x[index] = value`, and `t += x`, `-=`, `*=`,
`/=`), with PyTorch's rules for writing into a tensor; and `bernoulli`, a new tensor drawn as bernoulli_ fills.

An in-place method writes into the tensor's own array and returns the tensor itself, when no graph
is being recorded: under `no_grad()` (an optimizer step, an init), or when neither the tensor nor the
value written requires grad. While a graph is recorded:
- a leaf that requires grad (a parameter) is PyTorch's RuntimeError: update it under no_grad();
- any other tensor (an intermediate result, as `scores.masked_fill_(mask, -inf)` in attention written
  the textbook way, or a constant receiving a value that requires grad) is recorded, as PyTorch does:
  the tensor keeps its identity and becomes the output of a node named after the method (a
  `masked_fill_` node, drawn by draw_graph), whose input is its old value. Its new value is a new
  array, so the old one stays whatever backward needs. An op that had already read the tensor would
  send its gradient to the wrong value: backward refuses that, naming both ops (scaffolding.py; PyTorch
  catches it with a version counter, we with the order tensors are made in, Tensor._tape_index). Writing
  with `x[index] = v`, `normal_` or `uniform_` while recording is still refused: write those out of place.
  (`h += 1` on an intermediate makes a new node that Python binds to the name h, see InPlace._inplace.)
The random ones draw from the library's generator (tinygrad_like/random.py), or from `generator=`.
The dialect attaches these to Tensor (dialect/__init__.py).
"""
from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like import random as _random
from tinygrad_like.errors import ShapeError
from tinygrad_like.function import Function, no_grad, state
from tinygrad_like.pytorch_streams.generator import TorchGenerator

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor


def leaf_error(op: str) -> RuntimeError:
    return RuntimeError(f"{op}: a leaf tensor that requires grad cannot be changed in place while a graph is "
                        "recorded; update it under `with no_grad():`")


def recording(t: Tensor, value=None) -> bool:
    """Is writing `value` into `t` part of a graph being recorded?"""
    return state.grad_enabled and (t.requires_grad or getattr(value, "requires_grad", False))


def check_inplace(t: Tensor, op: str, value=None) -> None:
    """For the writes that are never recorded (x[i] = v, normal_, uniform_): an error while recording."""
    if not recording(t, value):
        return
    if t.requires_grad and t._ctx is None:
        raise leaf_error(op)
    raise RuntimeError(f"{op}: this tensor is part of a recorded graph (it, or the value written into it, requires "
                       "grad), and this write is not recorded; make a new tensor out of place (torch.where, "
                       "masked_fill, cat), or do it under `with no_grad():`")


class InPlaceOp(Function):
    """The node an in-place method adds to a recorded graph: its input is the method's out-of-place result,
    its output the tensor written into (the same array). Forward and backward are the identity; what it
    adds is the method's name, its subclass's name (`masked_fill_`), for draw_graph and for errors."""

    def forward(self, x): return x
    def backward(self, grad, out): return grad


_NODES: dict = {}


def _node(op: str) -> type:
    """The InPlaceOp subclass named `op` (one per method name)."""
    if op not in _NODES:
        _NODES[op] = type(op, (InPlaceOp,), {"__doc__": f"{op}, recorded in place (dialect/inplace.py)"})
    return _NODES[op]


def record(t: Tensor, op: str, compute, casting: str = "same_kind") -> Tensor:
    """Write compute(old) into t as a recorded op, old being t's value before: t keeps its identity and
    becomes the output of an `op` node whose input is compute(old). See the module's docstring."""
    if t.requires_grad and t._ctx is None:
        raise leaf_error(op)
    old = t._result(t._data, t._ctx)                      # t as it was, a tensor of its own
    old._tape_index, old.name, old.scope, old.requires_grad = t._tape_index, t.name, t.scope, t.requires_grad
    result = compute(old)
    if result.shape != t.shape:
        raise ShapeError(f"{op}: the result's shape {result.shape} is not the tensor's shape {t.shape} "
                         "(the other operand must broadcast to it)")
    if result.dtype != t.dtype:
        if not np.can_cast(result.dtype, t.dtype, casting):
            raise TypeError(f"{op}: the result's dtype {result.dtype} cannot be written into a {t.dtype} tensor")
        result = result.cast(t.dtype)
    new = _node(op).apply(result)
    t._data, t._ctx, t._tape_index, t.requires_grad = new._data, new._ctx, new._tape_index, new.requires_grad
    return t


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


def _everywhere(t: Tensor, value) -> Tensor:
    """`value` (a number or a tensor) broadcast to t's shape, as a recorded op of t and value: t's gradient
    is zero, value's the sum of the gradient over where it was broadcast."""
    return t._result(np.asarray(True), None).where(value if hasattr(value, "_ctx") else t._lift(value), t)


def drawing_from(generator):
    """A context inside which draws come from `generator`: None (the library's stream), a numpy Generator, a
    TorchGenerator, or an object holding one of those as `.generator` (tinygrad_like.torch's Generator)."""
    if generator is None:
        return contextlib.nullcontext()
    found = getattr(generator, "generator", generator)
    if not isinstance(found, (np.random.Generator, TorchGenerator)):
        raise TypeError(f"generator must be a numpy Generator or a TorchGenerator, or hold one as .generator, "
                        f"got {type(generator).__name__}")
    return _random.drawing_from(found)


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

    def div(self, other, *, rounding_mode: str | None = None) -> Tensor:
        """True division (integers give float32, as in PyTorch); rounding_mode="floor" rounds the quotient
        down (Python's //), "trunc" toward zero (C's /), both in the operands' dtype and without a
        gradient (its derivative is 0 wherever it exists)."""
        if rounding_mode is None:
            return self / other
        if rounding_mode == "floor":
            return self // other
        if rounding_mode != "trunc":
            raise ValueError(f"div: rounding_mode must be None, 'floor' or 'trunc', got {rounding_mode!r}")
        a, b = self._pair(other)
        if a.dtype.kind == "f":
            return a._result(np.trunc(a._data / b._data), None)
        q = a // b                                            # floor, then one up where it rounded a negative down
        return q._result(q._data + ((q._data < 0) & (q._data * b._data != a._data)), None)

    divide = true_divide = div

    # ---------------------------------------------------------------- in place
    def _update(self, op: str, compute, other=None, casting: str = "same_kind") -> Tensor:
        """Write compute(self) (an out-of-place op of self and other) into self, by the rules above."""
        if recording(self, other):
            return record(self, op, compute, casting)
        with no_grad():
            result = compute(self)
        if result.shape != self.shape:
            raise ShapeError(f"{op}: the result's shape {result.shape} is not the tensor's shape {self.shape} "
                             "(the other operand must broadcast to it)")
        return write(self, result._data, op, casting)

    def add_(self, other, alpha=1) -> Tensor: return self._update("add_", lambda t: t.add(other, alpha), other)
    def sub_(self, other, alpha=1) -> Tensor: return self._update("sub_", lambda t: t.sub(other, alpha), other)
    def mul_(self, other) -> Tensor: return self._update("mul_", lambda t: t * other, other)
    def div_(self, other, *, rounding_mode: str | None = None) -> Tensor:
        return self._update("div_", lambda t: t.div(other, rounding_mode=rounding_mode), other)

    def clamp_(self, min=None, max=None) -> Tensor:
        return self._update("clamp_", lambda t: t.clamp(min, max))

    def masked_fill_(self, mask, value) -> Tensor:
        return self._update("masked_fill_", lambda t: t.masked_fill(mask, value), value)

    def zero_(self) -> Tensor:
        if recording(self):
            return record(self, "zero_", lambda t: _everywhere(t, 0), "unsafe")
        return write(self, 0, "zero_", casting="unsafe")

    def fill_(self, value) -> Tensor:
        """Every entry set to `value` (a number, or a one-element tensor), converted to self's dtype."""
        if hasattr(value, "_ctx") and value._data.ndim:
            raise ShapeError(f"fill_: the value must be a number or a 0-d tensor, got shape {value.shape}")
        if recording(self, value):
            return record(self, "fill_", lambda t: _everywhere(t, value), "unsafe")
        return write(self, value._data if hasattr(value, "_ctx") else value, "fill_", casting="unsafe")

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
            self._data[index] = values
        except IndexError as e:
            raise IndexError(f"setitem: {e} (tensor shape {self.shape})") from None
        except ValueError:
            raise ShapeError(f"setitem: a value of shape {np.shape(values)} does not fit x[index] of shape "
                             f"{np.shape(self._data[index])} (tensor shape {self.shape})") from None

    def copy_(self, src, non_blocking: bool = False) -> Tensor:
        """src's values (broadcast to self's shape) written into self, converted to self's dtype
        (floats into integers truncate toward 0, as in PyTorch)."""
        if recording(self, src):
            return record(self, "copy_", lambda t: _everywhere(t, src), "unsafe")
        return write(self, src._data if hasattr(src, "_ctx") else src, "copy_", casting="unsafe")

    def _draw(self, op: str, draw, generator, floats_only: bool = True) -> Tensor:
        """Fill self with draw(shape) (an array of that shape), drawn from `generator` (None: the library's
        stream) in the order PyTorch fills a strided tensor (random.into)."""
        check_inplace(self, op)
        if floats_only and self.dtype.kind != "f":
            raise TypeError(f"{op}: needs a floating point tensor, got dtype {self.dtype}")
        with drawing_from(generator):
            values = _random.into(self._data, draw)
        return write(self, values, op, casting="unsafe")

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
        """Fill with samples of N(mean, std²)."""
        contiguous = self._data.flags.c_contiguous
        return self._draw("normal_", lambda shape: _random.normal(shape, self.dtype, mean, std, contiguous), generator)

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
        """Fill with samples uniform in [a, b) (PyTorch names them from and to)."""
        return self._draw("uniform_", lambda shape: _random.uniform(shape, self.dtype, a, b), generator)

    def exponential_(self, lambd: float = 1.0, *, generator=None) -> Tensor:
        """Fill with samples of the exponential distribution of rate `lambd` (mean 1/lambd)."""
        if not lambd > 0:
            raise ValueError(f"exponential_: the rate lambd must be > 0, got {lambd}")
        return self._draw("exponential_", lambda shape: _random.exponential(shape, self.dtype, lambd), generator)

    def bernoulli_(self, p: float = 0.5, *, generator=None) -> Tensor:
        """Fill with 1 (probability p) or 0, in self's dtype (any dtype)."""
        if not 0 <= p <= 1:
            raise ValueError(f"bernoulli_: p must be in [0, 1], got {p}")
        return self._draw("bernoulli_", lambda shape: _random.bernoulli(p, shape), generator, floats_only=False)

    def bernoulli(self, p: float | None = None, *, generator=None) -> Tensor:
        """A new tensor of 1s (with probability self[i], or p when given) and 0s, in self's dtype."""
        with drawing_from(generator):
            drawn = _random.bernoulli(self._data if p is None else p, self.shape)
        return type(self)(drawn.astype(self.dtype))

    def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
        """Fill with samples of the Cauchy distribution, median + sigma·tan(π(u − ½)) (numpy's stream only)."""
        return self._draw("cauchy_", lambda shape: median + sigma * _random.numpy_stream("cauchy_").standard_cauchy(
            shape), generator)

    def log_normal_(self, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
        """Fill with e^N(mean, std²) samples (numpy's stream only)."""
        return self._draw("log_normal_", lambda shape: _random.numpy_stream("log_normal_").lognormal(mean, std, shape),
                          generator)

    def geometric_(self, p: float, *, generator=None) -> Tensor:
        """Fill with the number of Bernoulli(p) trials up to the first success, 1, 2, ... (numpy's stream only);
        any dtype, as in PyTorch."""
        if not 0 < p <= 1:
            raise ValueError(f"geometric_: p must be in (0, 1], got {p}")
        return self._draw("geometric_", lambda shape: _random.numpy_stream("geometric_").geometric(p, shape),
                          generator, floats_only=False)

    def random_(self, low: int | None = None, high: int | None = None, *, generator=None) -> Tensor:
        """Fill with integers uniform in [low, high); random_(high) is [0, high); random_() is [0, 2^mantissa
        bits] for floats (every value exact) and [0, max] for integers, as in PyTorch."""
        if low is not None and high is None:
            low, high = 0, low
        if low is None:
            return self._draw("random_", lambda shape: _random.random_bits(shape, self.dtype), generator, False)
        return self._draw("random_", lambda shape: _random.integers(low, high, shape, self.dtype), generator, False)

    # ---------------------------------------------------------------- t op= other
    def _inplace(self, other, op, name: str):
        """`t op= other`. With no graph being recorded (under no_grad(), or nothing requires grad) the
        result is written into t's own array: the same Tensor, the same array, as in PyTorch, so that
        `with no_grad(): w -= lr * w.grad` trains w. While recording, a leaf that requires grad is an
        error (PyTorch's too); an intermediate result becomes a new node that Python binds to the name
        (unlike the named in-place methods, whose result a caller may drop: see above)."""
        if not recording(self, other):
            return self._update(name, lambda t: op(t, other), other)
        if self.requires_grad and self._ctx is None:
            raise leaf_error(name)
        return op(self, other)

    def __iadd__(self, other): return self._inplace(other, type(self).__add__, "+=")
    def __isub__(self, other): return self._inplace(other, type(self).__sub__, "-=")
    def __imul__(self, other): return self._inplace(other, type(self).__mul__, "*=")
    def __itruediv__(self, other): return self._inplace(other, type(self).__truediv__, "/=")
