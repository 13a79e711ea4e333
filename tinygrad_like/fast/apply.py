"""Function.apply for an op of one or two Tensors and no options, the call most ops of a step make.

Function.apply (function.py) takes any number of inputs and options: it collects the inputs' arrays in a
loop, calls forward(*arrays, **options) and keeps the options for draw_graph. On a small array that
generality costs more than numpy's own work (a 2x2 add: the list, the loop and the star-calls are about
half of numpy's add). `unary` and `binary` are the same steps written for exactly one or two inputs: the
same reads in the same order, the same output (the array forward gives, a numpy scalar made a 0-d array),
the same graph node (parents, scope, no options), the same grad mode, scope and anomaly checks, the same
errors. `install` makes them the `apply` of the primitives of ops.py whose forward takes one or two arrays
and no options (UNARY, BINARY); every other op keeps Function.apply. They make the very node and array
Function.apply makes, so they stay on inside `composed()` too. Each writes Tensor._result out rather than
calling it, as fast/walk.py does for the leaves' gradients.

Tensor's + - * / (tensor.py: `ops.Add.apply(*self._pair(other))`) first work out a promotion, which two
Tensors of one dtype don't need: `operator` makes each of them, for that case, `binary(op, x, y)` at once,
and sends every other operand to tensor.py's method (kept as the new method's `plain`); `install` puts them
on Tensor (OPERATORS). tests/test_fast_apply.py runs both ways on every such op and operator and compares
them.

Those ops keep nothing else on their node (their forward and backward set no attribute), so fast/walk.py
frees a node whose options are NO_OPTIONS attribute by attribute, which costs less than replacing its dict
as scaffolding.free does.
"""
from __future__ import annotations

import numpy as np

from tinygrad_like import ops
from tinygrad_like.errors import ShapeError
from tinygrad_like.function import check_finite, state
from tinygrad_like.tensor import Tensor, tape

new, ndarray = object.__new__, np.ndarray


class NoOptions(dict):
    """The options of a node made here: an empty dict that refuses writes, so one serves every node (copy and
    deepcopy give a new one, as they would a plain dict)."""

    def _read_only(self, *args, **kwargs):
        raise TypeError("the options of an op made by fast/apply.py are empty and read-only")

    __setitem__ = __delitem__ = __ior__ = update = setdefault = pop = popitem = clear = _read_only


NO_OPTIONS = NoOptions()


def unary(cls, x):
    """cls.apply(x): Function.apply with one input and no options."""
    array, requires_grad = x._data, x.requires_grad
    fn = cls()
    try:
        data = fn.forward(array)
        if type(data) is not ndarray and not isinstance(data, ndarray):   # the type test first: it costs less
            data = np.asarray(data)
    except ValueError as e:
        raise ShapeError(f"{cls.__name__.lower()}: {e} (input shapes {x.shape})") from None
    mode = state.__dict__             # grad mode, scope, anomaly mode: one thread-local look-up
    requires_grad = requires_grad and mode["grad_enabled"]
    if requires_grad:
        fn.parents, fn.scope, fn.options = (x,), mode["scope"], NO_OPTIONS
    if mode["detect_anomaly"]:
        fn.scope = mode["scope"]
        check_finite(fn, data, "forward output")
    ctx = fn if requires_grad else None
    out = new(Tensor)                  # Tensor._result(data, ctx) written out: here the call would cost more
    out._data = data                   # (one store a line: a tuple assignment of them costs more)
    out.grad = None
    out.requires_grad = ctx is not None
    out._ctx = ctx
    out.name = None
    out.scope = ctx.scope if ctx is not None else ""
    out._last_grad = None
    out._tape_index = next(tape)
    return out


def binary(cls, x, y):
    """cls.apply(x, y): Function.apply with two inputs and no options."""
    a, requires_grad = x._data, x.requires_grad
    b, requires_grad = y._data, requires_grad or y.requires_grad
    fn = cls()
    try:
        data = fn.forward(a, b)
        if type(data) is not ndarray and not isinstance(data, ndarray):   # the type test first: it costs less
            data = np.asarray(data)
    except ValueError as e:
        raise ShapeError(f"{cls.__name__.lower()}: {e} (input shapes {x.shape} and {y.shape})") from None
    mode = state.__dict__             # grad mode, scope, anomaly mode: one thread-local look-up
    requires_grad = requires_grad and mode["grad_enabled"]
    if requires_grad:
        fn.parents, fn.scope, fn.options = (x, y), mode["scope"], NO_OPTIONS
    if mode["detect_anomaly"]:
        fn.scope = mode["scope"]
        check_finite(fn, data, "forward output")
    ctx = fn if requires_grad else None
    out = new(Tensor)                  # Tensor._result(data, ctx) written out: here the call would cost more
    out._data = data                   # (one store a line: a tuple assignment of them costs more)
    out.grad = None
    out.requires_grad = ctx is not None
    out._ctx = ctx
    out.name = None
    out.scope = ctx.scope if ctx is not None else ""
    out._last_grad = None
    out._tape_index = next(tape)
    return out


# The primitives whose forward takes one or two arrays and no options (the others are called with options:
# Cast, Reshape, Sum, ...; Where with three arrays, Cat with any number).
UNARY = (ops.Neg, ops.Exp, ops.Log, ops.Sqrt, ops.Tanh, ops.Sigmoid, ops.Relu, ops.Abs, ops.Sin, ops.Cos, ops.Log1p,
         ops.Erf, ops.Clone)
BINARY = (ops.Add, ops.Sub, ops.Mul, ops.Div, ops.Pow, ops.Maximum, ops.Minimum, ops.Mod, ops.Matmul)


def operator(name: str, op, floats_only: bool = False):
    """Tensor's `name` (tensor.py: `__add__` is `ops.Add.apply(*self._pair(other))`) when the other operand is
    a Tensor of this one's dtype, where _pair (_floats for /: a floating dtype) has no promotion to work out
    and returns the two as they are: `binary(op, x, y)` at once. Anything else goes to tensor.py's method."""
    plain = getattr(Tensor, name)

    def method(x, y):
        if type(y) is Tensor and (dtype := x._data.dtype) is y._data.dtype and (not floats_only or dtype.kind == "f"):
            return binary(op, x, y)
        return plain(x, y)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Tensor.{name} (tensor.py), with fast/apply.py's short way for two Tensors of one dtype."
    method.plain = plain
    return method


# Tensor's binary operators given that short way (the reflected ones meet a Tensor on the left only when the
# other operand is not one).
OPERATORS = {"__add__": (ops.Add, False), "__sub__": (ops.Sub, False), "__mul__": (ops.Mul, False),
             "__truediv__": (ops.Div, True)}


def install() -> None:
    """Make `unary` and `binary` the apply of the ops of UNARY and BINARY, and `operator`'s methods Tensor's
    operators of OPERATORS (fast/__init__.py calls this)."""
    for op in UNARY:
        op.apply = classmethod(unary)
    for op in BINARY:
        op.apply = classmethod(binary)
    for name, (op, floats_only) in OPERATORS.items():
        setattr(Tensor, name, operator(name, op, floats_only))
