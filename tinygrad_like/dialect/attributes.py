"""PyTorch's Tensor attributes, so that a learner's PyTorch code reads our tensors: `data`, `size()`,
`dim()`, `ndimension()`, `nelement()`, `device`, `is_leaf`, `grad_fn`, `requires_grad_()`, `retain_grad()`
and `mT`.

The engine has one device, the CPU: `device` is always it, and naming CUDA or MPS says the engine runs
on the CPU. `size()` returns a `Size` (a tuple, as torch.Size is) and `size(d)` one length; numpy's
count of entries is `numel()`. A new PyTorch attribute of a Tensor goes here; a conversion (to(), type(),
long(), ...) goes to conversions.py.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like import scaffolding
from tinygrad_like.errors import ShapeError

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor


class Size(tuple):
    """A shape, as PyTorch's torch.Size: a tuple of ints that also counts its entries. It prints as
    `torch.Size([2, 3])` when printing as PyTorch (dialect/printing.py), else `Size([2, 3])`.
    No instance attributes (`__slots__ = ()`), so one Size per shape can be shared (`size_of_shape`)."""

    __slots__ = ()
    prefix = ""

    def numel(self) -> int:
        return math.prod(self)

    def __repr__(self):
        return f"{Size.prefix}Size({list(self)})"


_SIZES: dict = {}   # {shape tuple: its Size}: programs ask for .shape in loops, so each shape is made once
_SIZES_AT_MOST = 4096   # then the cache starts again: a program whose shapes keep changing does not grow it


def size_of_shape(shape: tuple) -> Size:
    """The Size of a numpy shape, made once per shape and shared (a Size is immutable, like the tuple);
    equal to `Size(shape)` (tests/test_facade_speed.py)."""
    size = _SIZES.get(shape)
    if size is None:
        if len(_SIZES) >= _SIZES_AT_MOST:
            _SIZES.clear()
        size = _SIZES[shape] = Size(shape)
    return size


class Device:
    """The device a tensor lives on: always the CPU. device("cpu") and device("cpu:0") are it;
    any other (cuda, mps, ...) is an error that says so, instead of a silent fallback."""

    __slots__ = ()
    type, index = "cpu", None

    def __new__(cls, spec="cpu", index=None):
        name = spec.type if isinstance(spec, Device) else str(spec)
        if name.split(":")[0] != "cpu":
            raise RuntimeError(f"device {name!r}: tinygrad_like runs on the CPU only (numpy); "
                               "use 'cpu', or leave the device out")
        return CPU

    def __repr__(self): return "device(type='cpu')"
    def __str__(self): return "cpu"
    def __eq__(self, other): return isinstance(other, Device) or (isinstance(other, str) and is_device(other))
    def __hash__(self): return hash("cpu")


CPU = object.__new__(Device)


def is_device(spec) -> bool:
    """Does `spec` name a device (rather than a dtype)? "cpu", "cuda:0", "mps", a Device."""
    return isinstance(spec, Device) or (isinstance(spec, str) and spec.split(":")[0] in
                                        ("cpu", "cuda", "mps", "xpu", "meta", "hip", "xla", "vulkan"))


class Attributes:
    """PyTorch's names for what a tensor is and where it lives."""

    def size(self, dim=None):
        """The shape as a `Size` (a tuple), or with `dim` the length of that one axis (negative counts
        from the end). numpy's `.size`, the count of entries, is `numel()`."""
        if dim is None:
            return size_of_shape(self._data.shape)
        return self.shape[self._dim(dim, "size")]

    def dim(self) -> int:
        """The number of axes (numpy's and tinygrad's `ndim`)."""
        return self._data.ndim

    ndimension = dim

    def nelement(self) -> int:
        """The count of entries, PyTorch's other name for numel()."""
        return self.numel()

    @property
    def data(self) -> Tensor:
        """PyTorch's `.data`: the same values in a new Tensor that shares this tensor's array and is outside
        the graph (no grad, no op), so `w.data.normal_(0, 0.02)`, `p.grad.data.zero_()` and
        `p.data.add_(g, alpha=-lr)` change w, p.grad and p without being recorded. The numpy array
        itself is `.numpy()`."""
        return self._result(self._data, None)

    @data.setter
    def data(self, value) -> None:
        """`p.data = t` gives p the array of t (a Tensor) or the array `value`, keeping p's place in the
        model and its requires_grad; so `p.data += -lr * p.grad` (written into p.data's shared array,
        then assigned back) updates p in place."""
        self._data = value._data if hasattr(value, "_ctx") else np.asarray(value)

    @property
    def device(self) -> Device:
        return CPU

    @property
    def is_leaf(self) -> bool:
        """True unless an op computed this tensor from tensors that require grad: the parameters and
        inputs of a graph, and every tensor made with no gradient wanted, as in PyTorch."""
        return self._ctx is None

    def is_inference(self) -> bool:
        """False: the engine's inference_mode is no_grad, and what it makes is an ordinary tensor."""
        return False

    @property
    def grad_fn(self):
        """The op (a Function) whose backward rule reaches this tensor's inputs; None on a leaf."""
        return self._ctx

    @property
    def mT(self) -> Tensor:
        """The last two axes swapped: (..., n, m) -> (..., m, n)."""
        if self.ndim < 2:
            raise ShapeError(f"mT: needs a tensor of at least 2 dimensions, got shape {self.shape}")
        return self.transpose(-2, -1)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Ask (or stop asking) for this leaf's gradient, in place; returns the tensor."""
        if not requires_grad and self._ctx is not None:
            raise RuntimeError("requires_grad_: this tensor is not a leaf (an op computed it from tensors that "
                               "require grad), so its flag cannot be switched off; use .detach() for a copy "
                               "outside the graph")
        if requires_grad and self.dtype.kind != "f":
            raise TypeError(f"requires_grad_: only floating point tensors can require grad, got dtype {self.dtype} "
                            "(convert with .float() first)")
        self.requires_grad = bool(requires_grad) or self._ctx is not None
        return self

    def retain_grad(self) -> None:
        """Keep this intermediate tensor's gradient in `.grad` after backward (a leaf keeps it anyway),
        accumulated over backward calls like a leaf's, so a hand-derived gradient can be compared with
        the engine's."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad: this tensor does not require grad, so it gets no gradient to keep")
        if self._ctx is not None:
            scaffolding.retain(self)
