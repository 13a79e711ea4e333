"""Moving entries around without changing them: split/chunk, unflatten, repeat, repeat_interleave,
flip, roll, pad, diagonal/diag/diag_embed, clone, numel.

All are composed from the movement primitives (reshape, expand, getitem, cat), so their gradients
route each output entry's gradient back to the entry it came from. Movement ops take `dim` as
PyTorch does, and numpy's `axis=` too (the PyTorch dialect's spelling.py). Tensor inherits them from `MovementMixin`.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like import ops
from tinygrad_like.errors import ShapeError

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor


def _slice(self: Tensor, dim: int, start: int, stop: int, step: int = 1) -> Tensor:
    return self[(slice(None),) * dim + (slice(start, stop, step),)]


class MovementMixin:
    """Tensor's movement methods beyond the core: split, chunk, repeat, flip, roll, pad, ..."""

    __slots__ = ()

    def split(self, split_size_or_sections, dim: int = 0) -> tuple:
        """Cut along `dim` into pieces of `split_size` entries (the last may be smaller), or into pieces
        of the given sizes (a list that must add up to shape[dim]). (6, 4).split(4) -> (4, 4), (2, 4)."""
        d = self._dim(dim, "split")
        n = self.shape[d]
        if isinstance(split_size_or_sections, (int, np.integer)):
            size = int(split_size_or_sections)
            if size <= 0:
                raise ValueError(f"split: split_size must be positive, got {size}")
            sizes = [min(size, n - start) for start in range(0, n, size)] or [0]
        else:
            sizes = [int(s) for s in split_size_or_sections]
            if sum(sizes) != n or any(s < 0 for s in sizes):
                raise ShapeError(f"split: sections {sizes} do not add up to {n}, dim {dim} of shape {self.shape}")
        starts = np.cumsum([0] + sizes).tolist()
        return tuple(_slice(self, d, a, b) for a, b in zip(starts, starts[1:]))

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        """Cut along `dim` into `chunks` pieces of ceil(n / chunks) entries; as in PyTorch, fewer
        pieces come back when the sizes do not allow that many ((5,).chunk(4) gives sizes 2, 2, 1)."""
        if chunks <= 0:
            raise ValueError(f"chunk: chunks must be positive, got {chunks}")
        n = self.shape[self._dim(dim, "chunk")]
        return self.split(max(math.ceil(n / chunks), 1), dim)

    def unflatten(self, dim: int, sizes) -> Tensor:
        """Undo flatten for one axis: (B, 12).unflatten(1, (3, 4)) is (B, 3, 4); one size may be -1."""
        d = self._dim(dim, "unflatten")
        sizes = tuple(int(s) for s in sizes)
        known = math.prod(s for s in sizes if s != -1)
        if sizes.count(-1) > 1 or (-1 not in sizes and known != self.shape[d]) or \
                (-1 in sizes and (known == 0 or self.shape[d] % known)):
            raise ShapeError(f"unflatten: sizes {sizes} do not fit dim {dim} of shape {self.shape}")
        sizes = tuple(self.shape[d] // known if s == -1 else s for s in sizes)
        return self.reshape(self.shape[:d] + sizes + self.shape[d + 1:])

    def repeat(self, *sizes) -> Tensor:
        """Tile the whole tensor: (2, 3).repeat(2, 1) is (4, 3), rows 0 1 0 1 (numpy's tile). More
        sizes than dimensions add leading axes. Built as reshape -> expand -> reshape."""
        sizes = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
        if len(sizes) < self.ndim:
            raise ShapeError(f"repeat: needs at least {self.ndim} sizes for shape {self.shape}, got {sizes}")
        shape = (1,) * (len(sizes) - self.ndim) + self.shape
        interleaved = tuple(v for n in shape for v in (1, n))                 # (1, a, 1, b)
        tiled = tuple(v for r, n in zip(sizes, shape) for v in (r, n))         # (r1, a, r2, b)
        return self.reshape(interleaved).expand(tiled).reshape(tuple(r * n for r, n in zip(sizes, shape)))

    def repeat_interleave(self, repeats, dim: int | None = None) -> Tensor:
        """Repeat each entry along `dim` in place: [a, b].repeat_interleave(2) is [a, a, b, b]. With
        dim=None the tensor is flattened first. `repeats` an int, or one count per entry (list/tensor).
        GQA as tutorials write it: k (B, n_kv, T, hs).repeat_interleave(n_head // n_kv, dim=1)."""
        x, d = (self.flatten(), 0) if dim is None else (self, self._dim(dim, "repeat_interleave"))
        if isinstance(repeats, (int, np.integer)):
            if repeats < 0:
                raise ValueError(f"repeat_interleave: repeats must be >= 0, got {repeats}")
            expanded = x.unsqueeze(d + 1).expand(x.shape[:d + 1] + (int(repeats),) + x.shape[d + 1:])
            return expanded.flatten(d, d + 1)
        counts = np.asarray(repeats._data if isinstance(repeats, type(self)) else repeats).reshape(-1)
        if counts.shape != (x.shape[d],) or (counts < 0).any():
            raise ShapeError(f"repeat_interleave: need {x.shape[d]} counts >= 0 for dim {d} of shape {x.shape}, "
                             f"got {counts.tolist()}")
        return x.index_select(d, np.repeat(np.arange(x.shape[d]), counts))

    def flip(self, dims) -> Tensor:
        """Reverse the order along each of `dims` (an int or a tuple)."""
        dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
        index = [slice(None)] * self.ndim
        for d in dims:
            index[self._dim(d, "flip")] = slice(None, None, -1)
        return self[tuple(index)]

    def roll(self, shifts, dims=None) -> Tensor:
        """Shift entries along `dims` by `shifts`, wrapping around: [1, 2, 3].roll(1) is [3, 1, 2].
        dims=None rolls the flattened tensor and restores the shape."""
        if dims is None:
            return self.flatten().roll(shifts, 0).reshape(self.shape)
        shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
        dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
        if len(shifts) != len(dims):
            raise ValueError(f"roll: {len(shifts)} shifts for {len(dims)} dims")
        out = self
        for s, dim in zip(shifts, dims):
            d = self._dim(dim, "roll")
            n = self.shape[d]
            if n and s % n:
                cut = n - s % n
                out = self.cat(_slice(out, d, cut, n), _slice(out, d, 0, cut), dim=d)
        return out

    def pad(self, pad, value=0.0) -> Tensor:
        """Constant padding in PyTorch's order: pairs from the LAST dimension backwards,
        (left, right) for the last dim, then (top, bottom) for the one before, and so on.
        (2, 3).pad((1, 2)) is (2, 6); (2, 3).pad((0, 0, 1, 0)) is (3, 3). A negative amount crops.
        The padding carries no gradient; the input's entries get theirs back."""
        pad = tuple(int(p) for p in pad)
        if len(pad) % 2 or len(pad) // 2 > self.ndim:
            raise ValueError(f"pad: needs pairs (left, right) for at most {self.ndim} dims of shape {self.shape}, "
                             f"got {pad}")
        out = self
        for i in range(len(pad) // 2):
            d, (before, after) = self.ndim - 1 - i, pad[2 * i: 2 * i + 2]
            n = out.shape[d]
            if n + min(before, 0) + min(after, 0) < 0:
                raise ValueError(f"pad: cropping {pad} removes more than dim {d} of shape {self.shape} holds")
            out = _slice(out, d, max(-before, 0), n - max(-after, 0))
            pieces = []
            for amount in (max(before, 0), max(after, 0)):
                shape = out.shape[:d] + (amount,) + out.shape[d + 1:]
                pieces.append(self._result(np.full(shape, value, dtype=self.dtype), None) if amount else None)
            out = self.cat([p for p in (pieces[0], out, pieces[1]) if p is not None], dim=d)
        return out

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        """The entries x[i, i + offset] of the matrices spanned by dim1 and dim2, as a last axis (PyTorch's
        layout): (2, 3, 4).diagonal(0, 0, 2) is (3, 2). Read with one integer-array getitem, so the
        gradient goes back to the diagonal and nowhere else."""
        d1, d2 = self._dim(dim1, "diagonal"), self._dim(dim2, "diagonal")
        if d1 == d2:
            raise ValueError(f"diagonal: dim1 and dim2 are the same axis ({dim1}, {dim2}) of shape {self.shape}")
        x = self.permute(*[a for a in range(self.ndim) if a not in (d1, d2)], d1, d2)
        rows, cols = x.shape[-2:]
        n = max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))
        i = np.arange(n)
        start_row, start_col = max(-offset, 0), max(offset, 0)
        return x[..., i + start_row, i + start_col]

    def diag_embed(self, offset: int = 0) -> Tensor:
        """(..., n) -> (..., m, m), m = n + |offset|: each last-axis vector laid on the offset diagonal of a
        matrix of zeros (diagonal's inverse). Composed by padding each entry with n zeros and reading the
        flat result as n rows of n: entry i lands at i·(n + 1), the diagonal; no product, so an inf stays
        on the diagonal and leaves no NaN beside it."""
        n = self.shape[-1]
        flat = self.unsqueeze(-1).pad((0, n)).reshape(*self.shape[:-1], n * (n + 1))
        square = flat[..., :n * n].reshape(*self.shape[:-1], n, n)
        k = abs(offset)
        return square.pad((k, 0, 0, k) if offset > 0 else (0, k, k, 0)) if k else square

    def diag(self, diagonal: int = 0) -> Tensor:
        """PyTorch's two-way diag: a vector (n,) gives the matrix with it on the `diagonal`-th diagonal,
        a matrix gives that diagonal as a vector."""
        if self.ndim == 1:
            return self.diag_embed(diagonal)
        if self.ndim == 2:
            return self.diagonal(diagonal)
        raise ShapeError(f"diag: needs a vector or a matrix, got shape {self.shape} (use diagonal() or diag_embed())")

    def clone(self) -> Tensor:
        """A copy with its own memory (writing into it leaves self alone); the gradient passes through."""
        return ops.Clone.apply(self)

    def numel(self) -> int:
        """The number of entries (numpy's .size; PyTorch's size() is the shape)."""
        return self._data.size

    def view(self, *shape): return self.reshape(*shape)

    def transpose(self, dim0=-2, dim1=-1):
        dim0, dim1 = self._dim(dim0, "transpose"), self._dim(dim1, "transpose")
        order = list(range(self.ndim))
        order[dim0], order[dim1] = order[dim1], order[dim0]
        return ops.Permute.apply(self, order=tuple(order))   # a permutation by construction: permute's checks pass

    def flatten(self, start_dim=0, end_dim=-1):
        """Axes start_dim..end_dim (both included) merged into one: (2, 3, 4).flatten(1) is (2, 12)."""
        if self.ndim == 0:
            return self.reshape(1)
        start, end = self._dim(start_dim, "flatten"), self._dim(end_dim, "flatten")
        return self.reshape(self.shape[:start] + (math.prod(self.shape[start:end + 1]),) + self.shape[end + 1:])

    def unsqueeze(self, dim):
        dim = self._dim(dim, "unsqueeze", extra=1)
        return self.reshape(self.shape[:dim] + (1,) + self.shape[dim:])

    def squeeze(self, dim=None):
        if dim is None:
            return self.reshape(tuple(n for n in self.shape if n != 1))
        dim = self._dim(dim, "squeeze")
        if self.shape[dim] != 1:
            return self
        return self.reshape(self.shape[:dim] + self.shape[dim + 1:])

    @staticmethod
    def stack(*tensors, dim=0):
        """Join same-shaped tensors along a new axis: stack of three (2,3) is (3,2,3)."""
        tensors = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
        first = tensors[0]
        first._dim(dim, "stack", extra=1)
        for t in tensors[1:]:
            if t.shape != first.shape:
                raise ShapeError(f"stack: shapes {first.shape} and {t.shape} differ")
        return type(first).cat(*[t.unsqueeze(dim) for t in tensors], dim=dim)

