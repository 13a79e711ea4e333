"""PyTorch's conversions of a Tensor: `to(...)`, `cpu()`, `type(...)`, `long()`, `int()`, `bool()`, `contiguous()`.

`to("cpu")` and `cpu()` return the tensor itself (the engine has one device and one memory), `to(dtype)`
casts (a differentiable Cast, as in PyTorch), and any device but the CPU is an error that says so.
`long()`, `int()` and `bool()` cast to int64, int32 and bool. `contiguous()` returns the tensor itself:
every op hands its result to numpy, which reads any layout, so no Tensor ever needs a contiguous copy
(PyTorch's `view` after `transpose` does; ours reshapes whatever it is given). A new conversion goes here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like.dialect.attributes import Device, is_device

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor

# PyTorch's legacy tensor type names, for `type()`
_TYPE_NAMES = {np.dtype(np.float32): "Float", np.dtype(np.float64): "Double", np.dtype(np.float16): "Half",
               np.dtype(np.int64): "Long", np.dtype(np.int32): "Int", np.dtype(np.int16): "Short",
               np.dtype(np.int8): "Char", np.dtype(np.uint8): "Byte", np.dtype(bool): "Bool"}


def _as_dtype(spec) -> np.dtype:
    if isinstance(spec, str) and spec.startswith("torch.") and spec.endswith("Tensor"):
        names = {v: k for k, v in _TYPE_NAMES.items()}
        if spec[6:-6] in names:
            return names[spec[6:-6]]
    try:
        return np.dtype(spec)
    except TypeError:
        raise TypeError(f"{spec!r} is not a dtype the engine knows (bool, integers, float32, float64)") from None


class Conversions:
    """PyTorch's names for turning a tensor into another dtype or device."""

    def cpu(self) -> Tensor:
        return self

    def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None) -> Tensor:
        """PyTorch's conversions: to(dtype), to("cpu"), to(device, dtype), to(other) (other's dtype),
        to(dtype=..., device=...). The same tensor when nothing changes (unless copy=True); a cast is
        differentiable. Any device but the CPU is an error."""
        for a in args:
            if is_device(a):
                device = a
            elif isinstance(a, type(self)):                      # another Tensor: its dtype (and device)
                dtype = a.dtype
            elif dtype is None:
                dtype = a
            else:
                raise TypeError(f"to: unexpected argument {a!r} (pass a dtype, a device or a tensor)")
        if device is not None:
            Device(device)                                       # the CPU, or an error that says so
        out = self if dtype is None else self.cast(_as_dtype(dtype))
        return out.clone() if copy and out is self else out

    def long(self, memory_format=None) -> Tensor:
        return self.cast(np.int64)

    def int(self, memory_format=None) -> Tensor:
        return self.cast(np.int32)

    def bool(self, memory_format=None) -> Tensor:
        return self.cast(np.bool_)

    def contiguous(self, memory_format=None) -> Tensor:
        """The tensor itself (see the module docstring)."""
        return self

    def type(self, dtype=None):
        """Without an argument, PyTorch's type name ('torch.FloatTensor'); with a dtype (or a name
        like 'torch.DoubleTensor'), this tensor cast to it."""
        if dtype is None:
            return f"torch.{_TYPE_NAMES.get(self.dtype, str(self.dtype))}Tensor"
        return self.cast(_as_dtype(dtype))
