"""A Tensor as a Python value: len(t), iteration, float(t), int(t), t as an index, f"{t:.3f}",
np.asarray(t), truth value and repr. Tensor inherits these from `PythonProtocolsMixin`.
"""
from __future__ import annotations

import numpy as np


class PythonProtocolsMixin:
    """What Python and numpy ask of a value, answered for a Tensor."""

    __slots__ = ()

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        """Over the first axis, as PyTorch: a (3, 4) tensor yields three (4,) tensors."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def _one(self, what: str):
        if self._data.size != 1:
            raise TypeError(f"{what}: only one-element tensors can be converted to Python scalars, "
                            f"got shape {self.shape}")
        return self._data.item()

    def __float__(self): return float(self._one("float()"))
    def __int__(self): return int(self._one("int()"))

    def __index__(self):
        if self.dtype.kind not in "biu":
            raise TypeError(f"__index__: only integer tensors of a single element can be used as an index, "
                            f"got dtype {self.dtype}")
        return int(self._one("__index__"))

    def __format__(self, spec: str):
        """f"{loss:.3f}": a one-element tensor formats like its number; others only with an empty spec."""
        if self._data.size == 1:
            return format(self._data.item(), spec)
        return object.__format__(self, spec)

    def __array__(self, dtype=None, copy=None):
        """np.asarray(t) and np.array(t, dtype=...) give the numeric array (a copy only when needed
        or asked: copy=True)."""
        array = self._data if dtype is None else self._data.astype(dtype, copy=False)
        return array.copy() if copy and array is self._data else array

    def __bool__(self):
        if self._data.size != 1:
            raise ValueError(f"the truth value of a tensor of shape {self.shape} is ambiguous; use .any() or .all()")
        return bool(self._data)

    def __repr__(self):
        body = np.array2string(self._data, precision=4, separator=", ", threshold=20, edgeitems=2, prefix="Tensor(")
        extras = [f"dtype={self.dtype}"]
        if self._ctx is not None:
            extras.append(f"grad_fn=<{type(self._ctx).__name__}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        if self.name:
            extras.append(f"name={self.name!r}")
        return f"Tensor({body}, {', '.join(extras)})"
