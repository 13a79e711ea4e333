"""Function.apply for an op of one or two Tensors and no options, the call most ops of a step make.

Function.apply (function.py) takes any number of inputs and options: it collects the inputs' arrays in a
loop, calls forward(*arrays, **options) and keeps the options for draw_graph. On a small array that
generality costs more than numpy's own work (a 2x2 add: the list, the loop and the star-calls are about
half of numpy's add). `unary` and `binary` are the same steps written for exactly one or two inputs: the
same reads in the same order, the same output (the array forward gives, a numpy scalar made a 0-d array),
the same graph node (parents, scope, no options), the same grad mode, scope and anomaly checks, the same
errors. `install` makes them the `apply` of the primitives of ops.py whose forward takes one or two arrays
and no options (UNARY, BINARY); every other op keeps Function.apply. They make the very node and array
Function.apply makes, so they stay on inside `composed()` too. tests/test_fast_apply.py runs both ways on
every such op and compares them.

Those ops keep nothing else on their node (their forward and backward set no attribute), so fast/walk.py
frees a node whose options are NO_OPTIONS attribute by attribute, which costs less than replacing its dict
as scaffolding.free does.
"""
from __future__ import annotations

import numpy as np

from tinygrad_like import ops
from tinygrad_like.errors import ShapeError
from tinygrad_like.function import check_finite, state
from tinygrad_like.tensor import Tensor

make = Tensor._result


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
        if not isinstance(data, np.ndarray):
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
    return make(data, fn if requires_grad else None)


def binary(cls, x, y):
    """cls.apply(x, y): Function.apply with two inputs and no options."""
    a, requires_grad = x._data, x.requires_grad
    b, requires_grad = y._data, requires_grad or y.requires_grad
    fn = cls()
    try:
        data = fn.forward(a, b)
        if not isinstance(data, np.ndarray):
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
    return make(data, fn if requires_grad else None)


# The primitives whose forward takes one or two arrays and no options (the others are called with options:
# Cast, Reshape, Sum, ...; Where with three arrays, Cat with any number).
UNARY = (ops.Neg, ops.Exp, ops.Log, ops.Sqrt, ops.Tanh, ops.Sigmoid, ops.Relu, ops.Abs, ops.Sin, ops.Cos, ops.Log1p,
         ops.Erf, ops.Clone)
BINARY = (ops.Add, ops.Sub, ops.Mul, ops.Div, ops.Pow, ops.Maximum, ops.Minimum, ops.Mod, ops.Matmul)


def install() -> None:
    """Make `unary` and `binary` the apply of the ops of UNARY and BINARY (fast/__init__.py calls this)."""
    for op in UNARY:
        op.apply = classmethod(unary)
    for op in BINARY:
        op.apply = classmethod(binary)
