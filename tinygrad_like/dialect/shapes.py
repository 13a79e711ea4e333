"""PyTorch's shape methods beyond the engine's reshape, permute, expand and split, each composed of those
(so its gradient is theirs): `broadcast_to`, `tensor_split` / `hsplit` / `vsplit` / `dsplit`,
`split_with_sizes` and the `unsafe_` spellings of the splits, `narrow_copy`, `rot90`, `unfold` (sliding
windows), `sum_to_size`, and the in-place shape changes `transpose_`, `t_`, `swapaxes_`, `swapdims_`,
`squeeze_`, `unsqueeze_`.

A shape change in place gives the tensor a new view of the same numpy array (no copy, as PyTorch changes
a view's strides); while a graph is recorded it is a node of its own, named after the method, with
inplace.py's rules (a leaf that requires grad is refused). torch-level shape functions without a Tensor
method (hstack, atleast_2d, meshgrid, ...) are in tinygrad_like/torch/_array_functions.py.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like.dialect.inplace import _node, leaf_error, recording
from tinygrad_like.errors import ShapeError
from tinygrad_like.function import no_grad

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor


def _reshaped_in_place(self: Tensor, op: str, compute) -> Tensor:
    """self becomes compute(self), a tensor of another shape over the same entries; returns self."""
    if recording(self):
        if self._ctx is None:
            raise leaf_error(op)
        old = self._result(self._data, self._ctx)
        old._tape_index, old.name, old.scope, old.requires_grad = self._tape_index, self.name, self.scope, True
        new = _node(op).apply(compute(old))
        self._data, self._ctx, self._tape_index = new._data, new._ctx, new._tape_index
        return self
    with no_grad():
        self._data = compute(self)._data
    return self


def _pieces(self: Tensor, d: int, bounds) -> tuple:
    """The slices [b_i, b_{i+1}) of axis d, for consecutive bounds (clamped to the axis, so possibly empty)."""
    n = self.shape[d]
    return tuple(self[(slice(None),) * d + (slice(min(a, n), min(max(a, b), n)),)] for a, b in zip(bounds, bounds[1:]))


def _split_evenly(self: Tensor, sections, dim: int, op: str) -> tuple:
    if isinstance(sections, (int, np.integer)) and (sections <= 0 or self.shape[dim] % sections):
        raise ValueError(f"{op}: dim {dim} of shape {self.shape} does not divide into {sections} equal parts")
    return self.tensor_split(sections, dim)


class Shapes:
    """PyTorch's shape methods, composed of the engine's."""

    def broadcast_to(self, *size) -> Tensor:
        """expand to `size` by numpy's broadcasting rules (-1 keeps a dimension)."""
        return self.expand(*size)

    def tensor_split(self, indices_or_sections, dim: int = 0) -> tuple:
        """Split axis `dim` into n pieces (an int: the first size % n one longer) or at the given indices
        (a list or an integer tensor: pieces [0, i0), [i0, i1), ..., [i_last, end), empty where they pass
        the end)."""
        d = self._dim(dim, "tensor_split")
        n = self.shape[d]
        cuts = indices_or_sections
        if hasattr(cuts, "_ctx"):
            cuts = cuts._data.tolist() if cuts.ndim else cuts._data.item()
        if isinstance(cuts, (int, np.integer)):
            if cuts <= 0:
                raise ValueError(f"tensor_split: the number of sections must be positive, got {cuts}")
            size, extra = divmod(n, int(cuts))
            sizes = [size + 1] * extra + [size] * (int(cuts) - extra)
            return _pieces(self, d, [0, *np.cumsum(sizes).tolist()])
        cuts = [c + n if c < 0 else c for c in cuts]
        return _pieces(self, d, [0, *cuts, n])

    def hsplit(self, sections) -> tuple:
        """tensor_split along dim 1 (dim 0 of a vector); an int must divide the axis evenly."""
        if self.ndim == 0:
            raise ShapeError("hsplit: needs at least 1 dimension, got a 0-d tensor")
        return _split_evenly(self, sections, 0 if self.ndim == 1 else 1, "hsplit")

    def vsplit(self, sections) -> tuple:
        """tensor_split along dim 0 of a tensor of at least 2 dimensions; an int must divide it evenly."""
        if self.ndim < 2:
            raise ShapeError(f"vsplit: needs at least 2 dimensions, got shape {self.shape}")
        return _split_evenly(self, sections, 0, "vsplit")

    def dsplit(self, sections) -> tuple:
        """tensor_split along dim 2 of a tensor of at least 3 dimensions; an int must divide it evenly."""
        if self.ndim < 3:
            raise ShapeError(f"dsplit: needs at least 3 dimensions, got shape {self.shape}")
        return _split_evenly(self, sections, 2, "dsplit")

    def split_with_sizes(self, split_sizes, dim: int = 0) -> tuple:
        """Pieces of the given sizes along `dim`; they must add up to its length."""
        d = self._dim(dim, "split_with_sizes")
        if sum(split_sizes) != self.shape[d] or any(s < 0 for s in split_sizes):
            raise ValueError(f"split_with_sizes: sizes {list(split_sizes)} do not add up to dim {dim}'s length "
                             f"{self.shape[d]} (shape {self.shape})")
        return _pieces(self, d, [0, *np.cumsum(split_sizes).tolist()])

    # PyTorch's unsafe_ forms skip its view bookkeeping; here every piece is already a tensor of its own
    def unsafe_split(self, split_size, dim: int = 0) -> tuple: return self.split(split_size, dim)
    def unsafe_chunk(self, chunks: int, dim: int = 0) -> tuple: return self.chunk(chunks, dim)
    def unsafe_split_with_sizes(self, split_sizes, dim: int = 0) -> tuple:
        return self.split_with_sizes(split_sizes, dim)

    def narrow_copy(self, dim: int, start: int, length: int) -> Tensor:
        """narrow(dim, start, length) in memory of its own."""
        return self.narrow(dim, start, length).clone()

    def rot90(self, k: int = 1, dims=(0, 1)) -> Tensor:
        """Rotated by k quarter turns in the plane of `dims`, from the first axis towards the second."""
        if len(dims) != 2:
            raise ValueError(f"rot90: dims must name two axes, got {dims}")
        a, b = (self._dim(d, "rot90") for d in dims)
        if a == b:
            raise ValueError(f"rot90: the two dims must differ, got {dims} for shape {self.shape}")
        k %= 4
        if k == 1:
            return self.flip(b).transpose(a, b)
        if k == 2:
            return self.flip((a, b))
        if k == 3:
            return self.flip(a).transpose(a, b)
        return self

    def unfold(self, dimension: int, size: int, step: int) -> Tensor:
        """Sliding windows: every `size` consecutive entries of axis `dimension`, starting each `step`,
        as a new last axis. (..., n, ...) -> (..., (n − size) // step + 1, ..., size). Read with one
        integer-array getitem, so an entry in several windows gets the sum of their gradients."""
        d = self._dim(dimension, "unfold") if self.ndim else 0
        n = self.shape[d] if self.ndim else 1
        if not 0 <= size <= n or step <= 0:
            raise ValueError(f"unfold: needs 0 <= size <= {n} (dim {dimension} of shape {self.shape}) and step > 0, "
                             f"got size {size}, step {step}")
        if self.ndim == 0:
            return self.reshape(size)
        starts = np.arange((n - size) // step + 1) * step
        windows = starts[:, None] + np.arange(size)                 # (count, size)
        return self[(slice(None),) * d + (windows,)].movedim(d + 1, -1)

    def sum_to_size(self, *size) -> Tensor:
        """Summed down to `size`, which must expand to self's shape: the adjoint of expand."""
        size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
        lead = self.ndim - len(size)
        if lead < 0 or any(s not in (1, n) for s, n in zip(size, self.shape[lead:])):
            raise ShapeError(f"sum_to_size: size {size} does not expand to the tensor's shape {self.shape}")
        axes = tuple(range(lead)) + tuple(lead + i for i, (s, n) in enumerate(zip(size, self.shape[lead:]))
                                          if s == 1 and n != 1)
        return (self.sum(axes, keepdim=True) if axes else self).reshape(size)

    # ---------------------------------------------------------------- in place: a new view of the same entries
    def transpose_(self, dim0: int, dim1: int) -> Tensor:
        return _reshaped_in_place(self, "transpose_", lambda t: t.transpose(dim0, dim1))

    def swapaxes_(self, axis0: int, axis1: int) -> Tensor:
        return _reshaped_in_place(self, "swapaxes_", lambda t: t.transpose(axis0, axis1))

    def swapdims_(self, dim0: int, dim1: int) -> Tensor:
        return _reshaped_in_place(self, "swapdims_", lambda t: t.transpose(dim0, dim1))

    def t_(self) -> Tensor:
        return _reshaped_in_place(self, "t_", lambda t: t.t())

    def squeeze_(self, dim=None) -> Tensor:
        return _reshaped_in_place(self, "squeeze_", lambda t: t.squeeze(dim))

    def unsqueeze_(self, dim: int) -> Tensor:
        return _reshaped_in_place(self, "unsqueeze_", lambda t: t.unsqueeze(dim))

