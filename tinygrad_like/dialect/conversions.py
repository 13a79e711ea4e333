"""PyTorch's conversions of a Tensor: `to(...)`, `cpu()`, `cuda()`, `type(...)`, `type_as(...)`,
`long()`, `int()`, `bool()` (and `short()`, `char()`, `byte()`), `contiguous()`, and the `new_*`
constructors that take the tensor's dtype.

`to("cpu")` and `cpu()` return the tensor itself (the engine has one device and one memory), `to(dtype)`
casts (a differentiable Cast, as in PyTorch), and any device but the CPU (`cuda()`, `to("cuda")`) is an
error that says so. `contiguous()` returns the tensor itself: every op hands its result to numpy, which
reads any layout, so no Tensor ever needs a contiguous copy (PyTorch's `view` after `transpose` does;
ours reshapes whatever it is given). `half()` and `bfloat16()` are refused (dialect/missing.py): the
engine computes in float32 and float64. A new conversion goes here.
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


def _shape(size) -> tuple:
    """new_zeros(2, 3), new_zeros((2, 3)) and new_zeros([2, 3]) all mean the shape (2, 3)."""
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)


class Conversions:
    """PyTorch's names for turning a tensor into another dtype or device."""

    def cpu(self) -> Tensor:
        return self

    def cuda(self, device=None, non_blocking: bool = False, memory_format=None) -> Tensor:
        """Always the error `to("cuda")` gives: the engine runs on the CPU."""
        Device("cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device)

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_cpu(self) -> bool:
        return True

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether the array lies in memory in row-major order (a transpose's does not)."""
        return bool(self._data.flags.c_contiguous)

    def short(self, memory_format=None) -> Tensor: return self.cast(np.int16)
    def char(self, memory_format=None) -> Tensor: return self.cast(np.int8)
    def byte(self, memory_format=None) -> Tensor: return self.cast(np.uint8)

    def type_as(self, other) -> Tensor:
        """This tensor in other's dtype (a differentiable cast)."""
        return self.cast(other.dtype)

    def element_size(self) -> int:
        """Bytes per entry: 4 for float32, 8 for float64 and int64, 1 for bool."""
        return self._data.itemsize

    def data_ptr(self) -> int:
        """The address of the first entry: equal for two tensors that share it (x and x.data)."""
        return self._data.ctypes.data

    # ---------------------------------------------------------------- new tensors like this one
    def _new(self, array: np.ndarray, dtype, requires_grad: bool, device) -> Tensor:
        if device is not None:
            Device(device)
        return type(self)(array.astype(self.dtype if dtype is None else _as_dtype(dtype), copy=False),
                          requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False) -> Tensor:
        """Zeros of `size`, in this tensor's dtype unless `dtype` is given (PyTorch's new_zeros)."""
        return self._new(np.zeros(_shape(size)), dtype, requires_grad, device)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False) -> Tensor:
        return self._new(np.ones(_shape(size)), dtype, requires_grad, device)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False) -> Tensor:
        """Zeros: an 'uninitialised' tensor here is zeros, so nothing depends on leftover memory."""
        return self._new(np.zeros(_shape(size)), dtype, requires_grad, device)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False, layout=None,
                 pin_memory=False) -> Tensor:
        return self._new(np.full(_shape((size,)), fill_value), dtype, requires_grad, device)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False) -> Tensor:
        """A copy of `data` (a number, lists, an array or a tensor) in this tensor's dtype unless `dtype`."""
        array = np.array(data._data if hasattr(data, "_ctx") else data, copy=True)
        return self._new(array, dtype, requires_grad, device)

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
