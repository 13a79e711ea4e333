"""Padding layers: ConstantPad, ZeroPad, ReflectionPad, ReplicationPad and CircularPad over the last 1, 2 or 3
dimensions, each one call of F.pad (tinygrad_like/dialect/functional.py) with PyTorch's `padding`: one int for
every side, or (left, right[, top, bottom[, front, back]]).
"""
from __future__ import annotations

from nn.module import Module
from tinygrad_like import Tensor
from tinygrad_like import functional as F


class _Pad(Module):
    mode, dims = "constant", 1

    def __init__(self, padding, value: float = 0.0):
        sides = (padding,) * 2 * self.dims if isinstance(padding, int) else tuple(padding)
        if len(sides) != 2 * self.dims:
            raise ValueError(f"{type(self).__name__}: padding must be an int or {2 * self.dims} ints, got {padding}")
        self.padding, self.value = sides, value

    def forward(self, x: Tensor) -> Tensor:
        return F.pad(x, self.padding, self.mode, self.value if self.mode == "constant" else None)

    def extra_repr(self) -> str:
        return f"{self.padding}" + (f", value={self.value}" if self.mode == "constant" else "")


class ConstantPad1d(_Pad):
    """Pad the last dimension with `value`."""

    def __init__(self, padding, value: float):
        super().__init__(padding, value)


class ConstantPad2d(ConstantPad1d):
    dims = 2


class ConstantPad3d(ConstantPad1d):
    dims = 3


class ZeroPad1d(_Pad):
    """Pad the last dimension with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)


class ZeroPad2d(ZeroPad1d):
    dims = 2


class ZeroPad3d(ZeroPad1d):
    dims = 3


class ReflectionPad1d(_Pad):
    """Mirror the last dimension at its edges, without repeating the edge entry."""

    mode = "reflect"

    def __init__(self, padding):
        super().__init__(padding)


class ReflectionPad2d(ReflectionPad1d):
    dims = 2


class ReflectionPad3d(ReflectionPad1d):
    dims = 3


class ReplicationPad1d(ReflectionPad1d):
    """Repeat the edge entry of the last dimension."""

    mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    dims = 2


class ReplicationPad3d(ReplicationPad1d):
    dims = 3


class CircularPad1d(ReflectionPad1d):
    """Wrap the last dimension around (periodic)."""

    mode = "circular"


class CircularPad2d(CircularPad1d):
    dims = 2


class CircularPad3d(CircularPad1d):
    dims = 3
