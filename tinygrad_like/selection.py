"""Picking entries by index: gather, scatter/scatter_add, index_select, masked_select, sort, argsort,
topk, unique, nonzero, and sampling with multinomial.

gather, index_select, masked_select, sort and topk read entries with one integer-array `getitem`, so
the gradient is getitem's: each picked entry's gradient added back where it was read (ScatterAdd).
scatter_add writes with ScatterAdd itself, whose gradient reads back with getitem: the two are each
other's adjoint, which is what makes second derivatives work too. Indices carry no gradient.
Tensor inherits them from `SelectionMixin`.
"""
from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like import ops
from tinygrad_like import random as _random
from tinygrad_like.errors import ShapeError
from tinygrad_like.function import state

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor

# what sort and topk return, as in PyTorch: unpack it (values, indices = x.sort()) or use the names
ValuesIndices = namedtuple("ValuesIndices", ["values", "indices"])


def _indices(self: Tensor, index, op: str) -> np.ndarray:
    array = np.asarray(index._data if isinstance(index, type(self)) else index)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{op}: index must hold integers, got dtype {array.dtype}")
    return array


def _along(self: Tensor, dim: int, index: np.ndarray, op: str) -> tuple:
    """The numpy index that reads self[..., index[i, j, k], ...] at every position (i, j, k) of
    `index`, with `index` standing in for axis `dim`: an arange for each other axis, broadcast."""
    if index.ndim != self.ndim:
        raise ShapeError(f"{op}: index of shape {index.shape} needs as many dimensions as the tensor {self.shape}")
    if any(i > n for a, (i, n) in enumerate(zip(index.shape, self.shape)) if a != dim):
        raise ShapeError(f"{op}: index of shape {index.shape} is larger than tensor {self.shape} outside dim {dim}")
    n = self.shape[dim]
    if index.size and (index.min() < -n or index.max() >= n):
        raise IndexError(f"{op}: index {index.max() if index.max() >= n else index.min()} is out of range "
                         f"for dim {dim} of size {n} (shape {self.shape})")
    index = np.where(index < 0, index + n, index)
    grids = np.ix_(*[np.arange(s) for s in index.shape]) if index.ndim else ()
    return tuple(index if a == dim else g for a, g in enumerate(grids))


def _source(src: Tensor, index: np.ndarray, op: str) -> Tensor:
    """The part of src that index covers (PyTorch reads src[:i, :j, :k] for an (i, j, k) index)."""
    if src.ndim != index.ndim or any(i > s for i, s in zip(index.shape, src.shape)):
        raise ShapeError(f"{op}: src of shape {src.shape} does not cover index of shape {index.shape}")
    return src if src.shape == index.shape else src[tuple(slice(0, n) for n in index.shape)]


def _picked(self: Tensor, dim: int, order: np.ndarray) -> Tensor:
    """self's entries at `order` along `dim`, for sort and topk, whose `order` comes from an argsort and so is
    always in range: gather when a gradient will flow back (it sends each entry's gradient to where the entry
    came from), else the same entries read straight from the array, without gather's checks and graph node."""
    if self.requires_grad and state.grad_enabled:
        return self.gather(dim, order)
    if order.ndim == 1:                                     # one row: plain indexing is take_along_axis, cheaper
        return self._result(self._data[order], None)
    return self._result(np.take_along_axis(self._data, order, dim), None)


def _argsort(data: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable order along axis; descending keeps equal entries in their original order too
    (sort the reversed array ascending, then reverse the result and map the positions back)."""
    if not descending:
        return np.argsort(data, axis=axis, kind="stable")
    n = data.shape[axis]
    return n - 1 - np.flip(np.argsort(np.flip(data, axis), axis=axis, kind="stable"), axis)


class SelectionMixin:
    """Tensor's selection methods: gather, scatter, index_select, sort, topk, nonzero, multinomial, ..."""

    __slots__ = ()

    def gather(self, dim: int, index) -> Tensor:
        """out[i][j][k] = self[index[i][j][k]][j][k] for dim 0 (likewise for other dims): out has the
        shape of `index`. (tinygrad's older order gather(index, dim) is accepted too.)"""
        if isinstance(dim, (type(self), np.ndarray, list)):
            dim, index = index, dim
        d = self._dim(dim, "gather")
        return self[_along(self, d, _indices(self, index, "gather"), "gather")]

    def scatter_add(self, dim: int, index, src) -> Tensor:
        """self with src[i][j][k] added at [index[i][j][k]][j][k] (dim 0; likewise others); repeated
        indices all add up. The gradient: self gets it unchanged, src gets it read back at index."""
        d, index = self._dim(dim, "scatter_add"), _indices(self, index, "scatter_add")
        where = _along(self, d, index, "scatter_add")
        src = _source(self._lift(src), index, "scatter_add")
        return self + ops.ScatterAdd.apply(src, shape=self.shape, index=where)

    def scatter(self, dim: int, index, src=None, value=None) -> Tensor:
        """self with src[i][j][k] written at [index[i][j][k]][j][k] (dim 0; likewise others), or the
        number `value` (PyTorch's scatter(dim, index, value=...)). Overwritten entries of self get no
        gradient. Where index repeats a position, the last writer wins (PyTorch leaves that undefined)."""
        d, index = self._dim(dim, "scatter"), _indices(self, index, "scatter")
        where = _along(self, d, index, "scatter")
        written = np.zeros(self.shape, dtype=bool)
        written[where] = True
        if (src is None) == (value is None):
            raise TypeError("scatter: pass exactly one of src (a tensor) and value (a number)")
        if value is not None or np.ndim(src._data if isinstance(src, type(self)) else src) == 0:
            return type(self)(written).where(self._lift(value if value is not None else src), self)
        src = _source(src if isinstance(src, type(self)) else type(self)(src, dtype=self.dtype), index, "scatter")
        targets = np.ravel_multi_index(np.broadcast_arrays(*where), self.shape).reshape(-1)
        last = len(targets) - 1 - np.unique(targets[::-1], return_index=True)[1]
        is_last = np.zeros(targets.size, dtype=bool)
        is_last[last] = True
        src = type(self)(is_last.reshape(index.shape)).where(src, 0)
        return type(self)(written).where(ops.ScatterAdd.apply(src, shape=self.shape, index=where), self)

    def index_select(self, dim: int, index) -> Tensor:
        """The slices at the 1-D `index` along `dim`, in that order (repeats allowed): (5, 3) with
        index [4, 0, 4] along dim 0 is (3, 3)."""
        d, index = self._dim(dim, "index_select"), _indices(self, index, "index_select")
        if index.ndim > 1:
            raise ValueError(f"index_select: index must be 1-D, got shape {index.shape}")
        n = self.shape[d]
        if index.size and (index.min() < 0 or index.max() >= n):
            raise IndexError(f"index_select: index out of range [0, {n}) for dim {dim} of shape {self.shape}")
        return self[(slice(None),) * d + (index.reshape(-1),)]

    def masked_select(self, mask) -> Tensor:
        """A 1-D tensor of the entries where `mask` is true, in row-major order (mask and self broadcast)."""
        mask = np.asarray(mask._data if isinstance(mask, type(self)) else mask)
        if mask.dtype != bool:
            raise TypeError(f"masked_select: mask must be boolean, got dtype {mask.dtype}")
        try:
            shape = np.broadcast_shapes(self.shape, mask.shape)
        except ValueError:
            raise ShapeError(f"masked_select: mask {mask.shape} does not broadcast with tensor {self.shape}") from None
        return self.expand(shape)[np.nonzero(np.broadcast_to(mask, shape))]

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> ValuesIndices:
        """(values, indices) along `dim`: values[i] = self[indices[i]], ascending unless `descending`.
        Always stable (equal entries keep their order), so `stable` is accepted and needs nothing.
        The gradient of values goes back to the entry each came from."""
        d = self._dim(dim, "sort")
        order = _argsort(self._data, d, descending)
        return ValuesIndices(_picked(self, d, order), self._result(order, None))

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
        """int64 indices that sort `dim` (sort()'s indices); equal entries keep their order. No gradient."""
        return self._result(_argsort(self._data, self._dim(dim, "argsort"), descending), None)

    def unique(self, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
               dim: int | None = None):
        """The distinct entries, ascending (1-D; with `dim`, the distinct slices along dim), as PyTorch's
        unique; `sorted=False` is accepted and gives them sorted too. return_inverse adds, for each entry
        (or slice), the index of its value in the result (shaped like the input); return_counts adds how
        often each value occurs. NaNs stay apart, one per NaN, as in PyTorch. No gradient."""
        if dim is None:
            values, inverse, counts = np.unique(self._data, return_inverse=True, return_counts=True, equal_nan=False)
            inverse = inverse.reshape(self.shape)
        else:
            values, inverse, counts = np.unique(self._data, return_inverse=True, return_counts=True,
                                                axis=self._dim(dim, "unique"))
            inverse = inverse.reshape(-1)
        out = [self._result(values, None)]
        if return_inverse:
            out.append(self._result(inverse.astype(np.int64), None))
        if return_counts:
            out.append(self._result(counts.astype(np.int64), None))
        return out[0] if len(out) == 1 else tuple(out)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> ValuesIndices:
        """The k largest (or smallest) entries along `dim` and their indices, largest first; ties keep
        the earlier index first. (..., n) -> (..., k). `sorted=False` is accepted; they come sorted anyway."""
        d = self._dim(dim, "topk")
        if not 0 <= k <= self.shape[d]:
            raise ValueError(f"topk: k={k} is outside [0, {self.shape[d]}] for dim {dim} of shape {self.shape}")
        order = np.take(_argsort(self._data, d, descending=largest), np.arange(k), axis=d)
        return ValuesIndices(_picked(self, d, order), self._result(order, None))

    def nonzero(self, as_tuple: bool = False):
        """int64 (count, ndim): the index of every nonzero entry, one row each, in row-major order;
        as_tuple=True gives numpy's form, one 1-D tensor per dimension."""
        where = np.nonzero(self._data)
        if as_tuple:
            return tuple(self._result(w.astype(np.int64), None) for w in where)
        return self._result(np.stack(where, axis=-1).astype(np.int64).reshape(-1, self.ndim), None)

    def multinomial(self, num_samples: int = 1, replacement: bool = False) -> Tensor:
        """Sample category indices with probabilities proportional to the weights in self, (n,) or
        (rows, n) -> int64 (num_samples,) or (rows, num_samples). The weights need not sum to 1.
        Without replacement an index appears at most once per row (sampled as the num_samples largest
        keys u^(1/w), u uniform: the same distribution as drawing one at a time and removing it).
        Uses the library's generator, so Tensor.manual_seed makes it repeatable."""
        if self.ndim not in (1, 2) or self.shape[-1] == 0:
            raise ValueError(f"multinomial: needs weights of shape (n,) or (rows, n), got {self.shape}")
        w = self._data.reshape(-1, self.shape[-1]).astype(np.float64)
        if not np.isfinite(w).all() or (w < 0).any() or (w.sum(-1) <= 0).any():
            raise ValueError("multinomial: weights must be finite, >= 0, and not all zero in a row")
        if not replacement and num_samples > (w > 0).sum(-1).min():
            raise ValueError(f"multinomial: cannot draw {num_samples} samples without replacement from "
                             f"{(w > 0).sum(-1).min()} categories of nonzero weight")
        if _random.drawing_pytorchs():                                 # PyTorch's numbers (pytorch_streams/)
            weights = self._data.reshape(w.shape).astype(np.float64 if self.dtype == np.float64 else np.float32)
            out = _random.current().multinomial(weights, num_samples, replacement)
            return type(self)(out.reshape(self.shape[:-1] + (num_samples,)))
        rng = _random.rng()
        if replacement:
            cdf = np.cumsum(w, axis=-1)
            u = rng.random((len(w), num_samples)) * cdf[:, -1:]
            out = np.stack([np.searchsorted(c, row, side="right") for c, row in zip(cdf, u)])
            out = np.minimum(out, w.shape[-1] - 1)
        else:
            u = 1.0 - rng.random(w.shape)                              # in (0, 1], so log(u) is finite
            keys = np.where(w > 0, np.log(u) / np.where(w > 0, w, 1.0), -np.inf)
            out = np.argsort(-keys, axis=-1, kind="stable")[:, :num_samples]
        return type(self)(out.astype(np.int64).reshape(self.shape[:-1] + (num_samples,)))

