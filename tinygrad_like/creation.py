"""Making tensors: `Tensor.zeros`, `ones`, `full`, `randn`, `rand`, `uniform`, `arange`, `empty`,
`randint`, `linspace`, `eye(n, m)`, the `_like` forms, `one_hot`, the triangle masks `tril`/`triu`, and
`manual_seed` for the random ones.

Tensor inherits these methods from `CreationMixin`; they make tensors of the class they are called on
(`type(self)`), so this module needs no import of tensor.py. New tensors are leaves: no gradient flows into them, except
`tril`/`triu`, which select entries of their input and pass the gradient through those.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like import random as _random

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor


def shape_args(shape) -> tuple:
    """Accept f(2, 3) and f((2, 3)) alike."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(map(int, shape))


def _triangle(self: Tensor, diagonal: int, lower: bool, op: str) -> Tensor:
    if self.ndim < 2:
        raise ValueError(f"{op}: needs a tensor of at least 2 dimensions, got shape {self.shape}")
    ones = np.ones(self.shape[-2:], dtype=bool)
    keep = np.tril(ones, diagonal) if lower else np.triu(ones, diagonal)
    return type(self)(keep).where(self, 0)       # where, not a product: keeps -inf and passes no NaN


class CreationMixin:
    """Tensor's methods that make new tensors: zeros, randn, arange, zeros_like, eye, tril, one_hot, ..."""

    __slots__ = ()

    @staticmethod
    def manual_seed(seed: int) -> None:
        """Seed the library's one random stream (randn, rand, uniform, dropout, sampling, init) and make it the
        engine's own, numpy's (tinygrad_like.torch.manual_seed makes it PyTorch's instead)."""
        _random.manual_seed(seed)

    @classmethod
    def zeros(cls, *shape, dtype=np.float32, requires_grad=False):
        return cls(np.zeros(shape_args(shape), dtype=dtype), requires_grad=requires_grad)

    @classmethod
    def ones(cls, *shape, dtype=np.float32, requires_grad=False):
        return cls(np.ones(shape_args(shape), dtype=dtype), requires_grad=requires_grad)

    @classmethod
    def full(cls, shape, value, dtype=np.float32, requires_grad=False):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return cls(np.full(shape, value, dtype=dtype), requires_grad=requires_grad)

    @classmethod
    def randn(cls, *shape, dtype=np.float32, requires_grad=False):
        return cls(_random.normal(shape_args(shape), dtype), requires_grad=requires_grad)

    @classmethod
    def rand(cls, *shape, dtype=np.float32, requires_grad=False):
        return cls(_random.uniform(shape_args(shape), dtype), requires_grad=requires_grad)

    @classmethod
    def uniform(cls, *shape, low=0.0, high=1.0, dtype=np.float32, requires_grad=False):
        return cls(_random.uniform(shape_args(shape), dtype, low, high), requires_grad=requires_grad)

    @classmethod
    def arange(cls, start, stop=None, step=1, dtype=None, requires_grad=False):
        """Like range(): integers when every argument is an int, float32 otherwise."""
        if stop is None:
            start, stop = 0, start
        if dtype is None:
            dtype = np.int64 if all(isinstance(v, (int, np.integer)) for v in (start, stop, step)) else np.float32
        return cls(np.arange(start, stop, step, dtype=dtype), requires_grad=requires_grad)

    def zeros_like(self, dtype=None, requires_grad=False) -> Tensor:
        """Zeros of self's shape, and of self's dtype unless `dtype` is given."""
        dtype = self.dtype if dtype is None else dtype
        return type(self)(np.zeros(self.shape, dtype=dtype), requires_grad=requires_grad)

    def ones_like(self, dtype=None, requires_grad=False) -> Tensor:
        """Ones of self's shape, and of self's dtype unless `dtype` is given."""
        dtype = self.dtype if dtype is None else dtype
        return type(self)(np.ones(self.shape, dtype=dtype), requires_grad=requires_grad)

    def full_like(self, fill_value, dtype=None, requires_grad=False) -> Tensor:
        """`fill_value` everywhere, in self's shape and dtype (unless `dtype` is given)."""
        dtype = self.dtype if dtype is None else dtype
        return type(self)(np.full(self.shape, fill_value, dtype=dtype), requires_grad=requires_grad)

    def randn_like(self, dtype=None, requires_grad=False) -> Tensor:
        """Standard normal samples in self's shape; self must be floating point unless `dtype` says otherwise."""
        dtype = np.dtype(self.dtype if dtype is None else dtype)
        if dtype.kind != "f":
            raise TypeError(f"randn_like: needs a floating point dtype, got {dtype} (pass dtype=np.float32)")
        return type(self)(_random.normal(self.shape, dtype), requires_grad=requires_grad)

    def rand_like(self, dtype=None, requires_grad=False) -> Tensor:
        """Uniform samples in [0, 1) in self's shape; self must be floating point unless `dtype` says otherwise."""
        dtype = np.dtype(self.dtype if dtype is None else dtype)
        if dtype.kind != "f":
            raise TypeError(f"rand_like: needs a floating point dtype, got {dtype} (pass dtype=np.float32)")
        return type(self)(_random.uniform(self.shape, dtype), requires_grad=requires_grad)

    @classmethod
    def empty(cls, *shape, dtype=np.float32, requires_grad=False) -> Tensor:
        """A tensor of `shape` whose values are whatever the memory held (fill it before reading it)."""
        return cls(np.empty(shape_args(shape), dtype=dtype), requires_grad=requires_grad)

    @classmethod
    def randint(cls, *args, size=None, dtype=np.int64) -> Tensor:
        """PyTorch's `randint(high, size)` or `randint(low, high, size)`: integers uniform in [low, high).

        >>> Tensor.randint(0, 10, (2, 3)).shape
        (2, 3)
        """
        if size is None:
            if not args:
                raise TypeError("randint: needs a size, as in randint(low, high, (2, 3))")
            *args, size = args
        if len(args) not in (1, 2):
            raise TypeError(f"randint: expected (high, size) or (low, high, size), got {len(args) + 1} arguments")
        low, high = (0, args[0]) if len(args) == 1 else args
        if high <= low:
            raise ValueError(f"randint: low ({low}) must be smaller than high ({high})")
        size = (size,) if isinstance(size, int) else tuple(size)
        return cls(_random.integers(low, high, size, dtype))

    @classmethod
    def linspace(cls, start, end, steps: int, dtype=np.float32, requires_grad=False) -> Tensor:
        """`steps` evenly spaced values from start to end, both included. Computed as PyTorch does, in
        the output dtype: the first half counts up from start, the second half down from end, so both
        ends are exact and float32 values match PyTorch's bit for bit."""
        if steps < 0:
            raise ValueError(f"linspace: steps must be >= 0, got {steps}")
        dtype = np.dtype(dtype)
        if dtype.kind != "f" or steps < 2:
            return cls(np.linspace(start, end, steps).astype(dtype), requires_grad=requires_grad)
        start, end = dtype.type(start), dtype.type(end)
        step, i = (end - start) / dtype.type(steps - 1), np.arange(steps, dtype=dtype)
        values = np.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i))
        return cls(values.astype(dtype), requires_grad=requires_grad)

    @classmethod
    def eye(cls, n: int, m: int | None = None, dtype=np.float32, requires_grad=False) -> Tensor:
        """(n, m) with ones on the main diagonal; m defaults to n."""
        return cls(np.eye(n, m, dtype=dtype), requires_grad=requires_grad)

    def tril(self, diagonal: int = 0) -> Tensor:
        """(..., n, m) -> (..., n, m): the entries on and below diagonal `diagonal` (0 is the main one,
        positive moves up), zero above. The gradient flows only into the kept entries."""
        return _triangle(self, diagonal, True, "tril")

    def triu(self, diagonal: int = 0) -> Tensor:
        """(..., n, m) -> (..., n, m): the entries on and above diagonal `diagonal`, zero below."""
        return _triangle(self, diagonal, False, "triu")

    def one_hot(self, num_classes: int = -1) -> Tensor:
        """Integer class indices (...) -> int64 (..., num_classes), a 1 at each index. num_classes=-1
        takes max + 1, as PyTorch does. (tinygrad spells it the same; PyTorch as F.one_hot(t, n).)"""
        if self.dtype.kind not in "iu":
            raise TypeError(f"one_hot: needs an integer tensor of class indices, got dtype {self.dtype}")
        if num_classes == -1:
            num_classes = int(self._data.max()) + 1 if self._data.size else 0
        bad = self._data[(self._data < 0) | (self._data >= num_classes)]
        if bad.size:
            raise ValueError(f"one_hot: class index {bad.flat[0]} is outside [0, {num_classes}) (shape {self.shape})")
        return type(self)((self._data[..., None] == np.arange(num_classes)).astype(np.int64))
