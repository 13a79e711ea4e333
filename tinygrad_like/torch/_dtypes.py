"""torch's questions about dtypes and numbers: `torch.dtype` (what isinstance checks against), `finfo` and
`iinfo` (a dtype's limits), `promote_types`, `result_type` and `can_cast` (PyTorch's promotion, which the
engine follows: tinygrad_like/dtypes.py), and `typename`.

A dtype here is numpy's (`torch.float32 is np.dtype('float32')`), or, for float16 and bfloat16, which the
engine names but does not compute in, a RefusedDtype (_tensors.py); finfo answers for those too, since
their limits are facts of the formats (scripts read `torch.finfo(dtype).min` to build masks).
"""
from __future__ import annotations

import numpy as np

from tinygrad_like import Tensor
from tinygrad_like import dtypes as _engine_dtypes
from tinygrad_like.torch._tensors import RefusedDtype, float32

__all__ = ["dtype", "finfo", "iinfo", "promote_types", "result_type", "can_cast", "typename"]


class _DtypeType(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, (np.dtype, RefusedDtype))


class dtype(metaclass=_DtypeType):  # noqa: N801 (PyTorch's name)
    """torch.dtype: `isinstance(torch.float32, torch.dtype)` holds for every dtype the facade names (numpy's
    dtypes, and float16/bfloat16). Not made directly, as in PyTorch: use torch.float32, torch.int64, ..."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create torch.dtype instances; use torch.float32, torch.int64, ...")


# float16 and bfloat16 by their formats: (bits, eps = 2^-mantissa bits, max, smallest normal, resolution)
_HALF_FORMATS = {"float16": (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 0.001),
                 "bfloat16": (16, 2.0 ** -7, (2 - 2.0 ** -7) * 2.0 ** 127, 2.0 ** -126, 0.01)}


class finfo:  # noqa: N801 (PyTorch's name)
    """The limits of a floating point dtype (default: float32): bits, eps (the gap above 1), max, min = −max,
    tiny = smallest_normal (the smallest positive normal number), resolution (10^−decimal digits) and dtype
    (its name), as PyTorch's finfo."""

    def __init__(self, type=None):
        type = float32 if type is None else type
        if isinstance(type, RefusedDtype):
            self.bits, self.eps, self.max, self.smallest_normal, self.resolution = _HALF_FORMATS[type.name]
            self.dtype = type.name
        else:
            kind = np.dtype(type)
            if kind.kind != "f":
                raise TypeError(f"finfo: needs a floating point dtype, got {kind}; use torch.iinfo for integers")
            info = np.finfo(kind)
            self.bits, self.eps, self.max = info.bits, float(info.eps), float(info.max)
            self.smallest_normal, self.resolution, self.dtype = float(info.smallest_normal), float(info.resolution), \
                kind.name
        self.min, self.tiny = -self.max, self.smallest_normal

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801 (PyTorch's name)
    """The limits of an integer dtype: bits, min, max (Python ints) and dtype (its name), as PyTorch's iinfo."""

    def __init__(self, type):
        kind = np.dtype(type)
        if kind.kind not in "iu":
            raise TypeError(f"iinfo: needs an integer dtype, got {kind}; use torch.finfo for floating point")
        info = np.iinfo(kind)
        self.bits, self.min, self.max, self.dtype = info.bits, int(info.min), int(info.max), kind.name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def _computed(type, op: str) -> np.dtype:
    if isinstance(type, RefusedDtype):
        np.dtype(type)                      # raises the TypeError that says why the engine does not compute in it
    kind = np.dtype(type)
    _engine_dtypes.category(kind)           # a TypeError for a dtype the engine has no category for
    return kind


def promote_types(type1, type2) -> np.dtype:
    """The dtype a ⊗ b has for tensors of these dtypes: the higher category (bool < integer < floating), its
    operand's dtype; within one category the wider (int32, float32 -> float32; uint8, int8 -> int16)."""
    return _engine_dtypes.promote_types(_computed(type1, "promote_types"), _computed(type2, "promote_types"))


def result_type(tensor1, tensor2) -> np.dtype:
    """The dtype of an op of these two operands (tensors or numbers), by PyTorch's rules: tensors with
    dimensions decide first, then 0-d tensors, then numbers, each only raising the category."""
    def operand(x):
        return x._data if isinstance(x, Tensor) else x
    return _engine_dtypes.result_type(operand(tensor1), operand(tensor2))


def can_cast(from_, to) -> bool:
    """Whether PyTorch's in-place ops may write a result of dtype `from_` into a tensor of dtype `to`: when
    `to` is of the same category or higher (float64 -> float32 may, float32 -> int64 may not)."""
    return _engine_dtypes.category(_computed(from_, "can_cast")) <= _engine_dtypes.category(_computed(to, "can_cast"))


def typename(obj) -> str:
    """A tensor's PyTorch type name ('torch.FloatTensor'), else the object's class with its module
    ('torch.nn.modules.linear.Linear' there; here the facade's own module path), builtins by name alone."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = obj if isinstance(obj, type) else type(obj)
    module = cls.__module__
    return cls.__qualname__ if module in (None, "builtins") else f"{module}.{cls.__qualname__}"
