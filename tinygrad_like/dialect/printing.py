"""Printing as PyTorch prints, for programs run through the facade (`tinygrad_like.torch`).

The engine prints its own way: `Tensor([1., 2.], dtype=float32)`, and a shape is a plain tuple `(1, 4)`.
A PyTorch program's output reads `tensor([1., 2.], requires_grad=True)` and `torch.Size([1, 4])`;
`import tinygrad_like.torch` calls `use_pytorch_printing()`, so a script run through the facade prints
what it prints on PyTorch, and error messages show shapes as PyTorch's do. `use_pytorch_printing(False)`
gives the engine's printing back; `pytorch_printing()` is the same switch as a `with` block.

What changes: Tensor's repr (PyTorch's layout: dtype shown unless float32, int64 or bool, as PyTorch
leaves out its defaults; `grad_fn=<MulBackward0>` or `requires_grad=True`; four decimals, all entries
printed up to 1,000, then three at each end), and `.shape`, which gives a `Size` (a tuple, equal to the
tuple, hashing alike) whose repr is `torch.Size([1, 4])`.
"""
from __future__ import annotations

import contextlib

import numpy as np

from tinygrad_like.dialect.attributes import Size, size_of_shape
from tinygrad_like.tensor import Tensor

_ENGINE = {"__repr__": Tensor.__repr__, "shape": Tensor.shape}
_SHOWN_BY_DEFAULT = (np.dtype(np.float32), np.dtype(np.int64), np.dtype(np.bool_))


def _summarized(array: np.ndarray) -> np.ndarray:
    """The entries that get printed: all up to 1,000, else the first and last three along every axis."""
    if array.size <= 1000:
        return array
    for axis, n in enumerate(array.shape):
        if n > 6:
            array = np.take(array, [*range(3), *range(n - 3, n)], axis=axis)
    return array


def _number_format(array: np.ndarray):
    """PyTorch's choice for a float tensor's entries, made from the entries printed: whole numbers as `2.`,
    others with four decimals, scientific (`1.0000e-05`) when the nonzero magnitudes are more than 1000
    apart, above 1e8 or (not whole) below 1e-4; right-aligned to the width of the nonzero finite ones."""
    shown = _summarized(array).astype(np.float64)
    finite = np.abs(shown[np.isfinite(shown)])
    nonzero = finite[finite != 0]
    whole = bool((finite == np.round(finite)).all())
    big, small = (nonzero.max(), nonzero.min()) if nonzero.size else (0.0, 0.0)
    science = bool(nonzero.size) and (big / small > 1000 or big > 1e8 or (not whole and small < 1e-4))

    def text(v) -> str:
        if not np.isfinite(v):
            return str(float(v))
        return f"{v:.4e}" if science else f"{v:.0f}." if whole else f"{v:.4f}"

    width = max((len(text(v)) for v in shown.flat if np.isfinite(v) and v != 0), default=0)
    return lambda v: text(v).rjust(width)


def _pytorch_repr(self: Tensor) -> str:
    array = self._data
    formatter = {"float_kind": _number_format(array)} if array.dtype.kind == "f" else None
    body = np.array2string(array, separator=", ", prefix="tensor(", threshold=1000, edgeitems=3,
                           formatter=formatter, max_line_width=80)
    extras = [f"size={array.shape}"] if array.size == 0 and array.ndim != 1 else []
    if array.dtype not in _SHOWN_BY_DEFAULT:
        extras.append(f"dtype=torch.{array.dtype}")
    if self._ctx is not None:
        extras.append(f"grad_fn=<{type(self._ctx).__name__}Backward0>")
    elif self.requires_grad:
        extras.append("requires_grad=True")
    return f"tensor({body}{''.join(', ' + e for e in extras)})"


def _size_of(self: Tensor) -> Size:
    return size_of_shape(self._data.shape)


def use_pytorch_printing(on: bool = True) -> None:
    """Print tensors and shapes as PyTorch does (on), or as the engine does (off), in this process.
    Off puts back exactly what the engine defines: its repr (from a mixin, so nothing on Tensor itself)
    and its shape property."""
    if on:
        Tensor.__repr__ = _pytorch_repr
    elif "__repr__" in vars(Tensor) and Tensor.__repr__ is not _ENGINE["__repr__"]:
        del Tensor.__repr__
    Tensor.shape = property(_size_of) if on else _ENGINE["shape"]
    Size.prefix = "torch." if on else ""


def is_pytorch_printing() -> bool:
    return Tensor.__repr__ is _pytorch_repr


@contextlib.contextmanager
def pytorch_printing(on: bool = True):
    """`with pytorch_printing():` prints as PyTorch inside the block, then as before."""
    before = is_pytorch_printing()
    use_pytorch_printing(on)
    try:
        yield
    finally:
        use_pytorch_printing(before)
