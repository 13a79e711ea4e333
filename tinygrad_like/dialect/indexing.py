"""PyTorch's ways of writing into a tensor by index, out of place and in place: `index_add`, `index_copy`,
`index_fill`, `index_put`, `index_reduce`, `scatter_` / `scatter_add_`, `scatter_reduce`, `put`, `take`,
`take_along_dim`, `masked_scatter`, `select_scatter` / `slice_scatter` / `diagonal_scatter`, `argwhere`,
`nonzero_static` and `fill_diagonal_`.

One idea does them all. Number the entries of self 0, 1, 2, ... in row-major order (`_positions`); the
same indexing PyTorch applies to self, applied to those numbers, says WHICH entries are written. Then the
values are written into self flattened, at those positions, by the engine's scatter (overwrite) or
scatter_add (accumulate), so their gradients are those ops' (self's written entries get none; each value
its entry's). A reduction (`scatter_reduce`, `index_reduce`: prod, mean, amax, amin) first lays each
written entry's contributors out as one row of a padded matrix (`_grouped`) and reduces the rows with the
engine's prod, sum, amax or amin. Indices never carry a gradient.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like.dialect.products import in_place_of
from tinygrad_like.errors import ShapeError

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _positions(self: Tensor) -> np.ndarray:
    """Each entry's row-major number, in self's shape."""
    return np.arange(self._data.size).reshape(self.shape)


def _integers(self: Tensor, index, op: str) -> np.ndarray:
    array = np.asarray(index._data if hasattr(index, "_ctx") else index)
    if array.dtype.kind not in "iu" and not (array.dtype == bool and op in ("index_put", "index_put_")):
        raise TypeError(f"{op}: indices must be integers, got dtype {array.dtype}")
    return array


def _values(self: Tensor, values, shape: tuple, op: str) -> Tensor:
    """values (a tensor or a number) broadcast to `shape`, in self's dtype when it is a number or a constant."""
    values = values if hasattr(values, "_ctx") else self._lift(values)
    try:
        return values.expand(shape)
    except Exception:
        raise ShapeError(f"{op}: values of shape {values.shape} do not fit the {shape} entries they are written "
                         f"into (tensor shape {self.shape})") from None


def _write(self: Tensor, where: np.ndarray, values: Tensor, accumulate: bool = False) -> Tensor:
    """self with `values` (shaped like `where`) written (or added) at the row-major positions `where`."""
    flat, where = self.reshape(-1), where.reshape(-1)
    values = values.reshape(-1)
    if values.dtype != self.dtype:
        values = values.cast(self.dtype)
    out = flat.scatter_add(0, where, values) if accumulate else flat.scatter(0, where, values)
    return out.reshape(self.shape)


def _along(self: Tensor, dim: int, index, source_shape, op: str) -> np.ndarray:
    """The positions of self[..., index[k], ...] (index standing in for axis dim), shaped as a source."""
    d = self._dim(dim, op) if self.ndim else 0
    index = _integers(self, index, op).reshape(-1)
    n = self.shape[d] if self.ndim else 1
    if index.size and (index.min() < -n or index.max() >= n):
        raise IndexError(f"{op}: index out of range [-{n}, {n}) for dim {dim} of shape {self.shape}")
    where = np.take(_positions(self).reshape(self.shape or (1,)), index, axis=d)
    if source_shape is not None and tuple(source_shape) != where.shape and \
            not (self.ndim == 0 and np.prod(source_shape, dtype=int) == where.size):
        raise ShapeError(f"{op}: source of shape {tuple(source_shape)} should be {where.shape} (the tensor's shape "
                         f"{self.shape} with dim {dim} of index's length {index.size})")
    return where


def _grouped(self: Tensor, where: np.ndarray, source: Tensor, reduce: str, include_self: bool, op: str) -> Tensor:
    """self with each entry named in `where` replaced by the `reduce` of its contributors: the source values
    written to it (and its own value, when include_self). Entries nobody writes keep their value."""
    if reduce not in REDUCTIONS:
        raise ValueError(f"{op}: reduce must be one of {REDUCTIONS}, got {reduce!r}")
    flat, where, source = self.reshape(-1), where.reshape(-1), source.reshape(-1)
    if source.dtype != self.dtype:
        source = source.cast(self.dtype)
    if where.size == 0:
        return self
    targets, row = np.unique(where, return_inverse=True)            # each written entry, and each value's
    order = np.argsort(row, kind="stable")
    starts = np.searchsorted(row[order], np.arange(len(targets)))
    column = np.empty_like(row)
    column[order] = np.arange(len(row)) - starts[row[order]]         # rank of each value within its entry's row
    counts = np.bincount(row, minlength=len(targets))
    own = 1 if include_self else 0
    pad = {"sum": 0, "mean": 0, "prod": 1,
           "amax": -np.inf if self.dtype.kind == "f" else np.iinfo(self.dtype).min,
           "amin": np.inf if self.dtype.kind == "f" else np.iinfo(self.dtype).max}[reduce]
    padding = self._result(np.full(1, pad, dtype=self.dtype), None)
    pool = type(self).cat(source, flat[targets], padding) if include_self else type(self).cat(source, padding)
    grid = np.full((len(targets), counts.max() + own), len(pool._data) - 1)       # (written entries, contributors)
    grid[row, column + own] = np.arange(len(row))
    if include_self:
        grid[:, 0] = len(row) + np.arange(len(targets))
    rows = pool[grid]
    if reduce in ("sum", "mean"):
        reduced = rows.sum(1)
        if reduce == "mean":
            n = self._result((counts + own).astype(self.dtype), None)
            reduced = reduced / n if self.dtype.kind == "f" else reduced // n
    else:
        reduced = getattr(rows, reduce)(1)
    return flat.scatter(0, targets, reduced.cast(self.dtype)).reshape(self.shape)


class Indexing:
    """Writing into a tensor by index, PyTorch's names."""

    def index_add(self, dim: int, index, source, *, alpha=1) -> Tensor:
        """self with alpha·source[..., k, ...] added to self[..., index[k], ...] along dim (repeats add up)."""
        where = _along(self, dim, index, source.shape, "index_add")
        return _write(self, where, source if alpha == 1 else source * alpha, accumulate=True)

    def index_copy(self, dim: int, index, source) -> Tensor:
        """self with source[..., k, ...] written to self[..., index[k], ...] along dim."""
        return _write(self, _along(self, dim, index, source.shape, "index_copy"), source)

    def index_fill(self, dim: int, index, value) -> Tensor:
        """self with the slices at `index` along dim set to `value` (a number or a 0-d tensor)."""
        mask = np.zeros(self._data.size, dtype=bool)
        mask[_along(self, dim, index, None, "index_fill").reshape(-1)] = True
        return self.masked_fill(type(self)(mask.reshape(self.shape)), value)

    def index_put(self, indices, values, accumulate: bool = False) -> Tensor:
        """self[indices] = values (added when accumulate), out of place: `indices` a tuple of integer or
        boolean tensors, one per leading dimension, as in x[i, j]; values broadcast to x[indices]."""
        if not isinstance(indices, (tuple, list)):
            raise TypeError(f"index_put: indices must be a tuple of tensors, got {type(indices).__name__}")
        index = tuple(_integers(self, i, "index_put") for i in indices)
        try:
            where = _positions(self)[index]
        except IndexError as e:
            raise IndexError(f"index_put: {e} (tensor shape {self.shape})") from None
        return _write(self, where, _values(self, values, where.shape, "index_put"), accumulate)

    def index_reduce(self, dim: int, index, source, reduce: str, *, include_self: bool = True) -> Tensor:
        """self with each slice at index[k] along dim reduced ('prod', 'mean', 'amax', 'amin') with
        source[..., k, ...] (and with itself, when include_self)."""
        if reduce == "sum":
            raise ValueError("index_reduce: reduce must be 'prod', 'mean', 'amax' or 'amin' (use index_add for sums)")
        where = _along(self, dim, index, source.shape, "index_reduce")
        return _grouped(self, where, source, reduce, include_self, "index_reduce")

    def scatter_reduce(self, dim: int, index, src, reduce: str, *, include_self: bool = True) -> Tensor:
        """self with src[i][j][k] reduced into self[index[i][j][k]][j][k] (dim 0; likewise others) by 'sum',
        'prod', 'mean', 'amax' or 'amin', with self's own value too when include_self."""
        d = self._dim(dim, "scatter_reduce")
        index = _integers(self, index, "scatter_reduce")
        where = _positions(self).reshape(self.shape)
        where = type(self)(where).gather(d, index)._data               # the position each src entry goes to
        src = src[tuple(slice(0, n) for n in index.shape)] if src.shape != index.shape else src
        return _grouped(self, where, src, reduce, include_self, "scatter_reduce")

    def take(self, index) -> Tensor:
        """The entries of self flattened at `index` (negative counts from the end), in index's shape."""
        index = _integers(self, index, "take")
        n = self._data.size
        if index.size and (index.min() < -n or index.max() >= n):
            raise IndexError(f"take: index out of range [-{n}, {n}) for a tensor of {n} entries (shape {self.shape})")
        return self.reshape(-1)[index]

    def take_along_dim(self, indices, dim: int | None = None) -> Tensor:
        """gather along dim with self and indices broadcast outside it; dim=None takes from self flattened."""
        indices = _integers(self, indices, "take_along_dim")
        if dim is None:
            return self.take(indices.reshape(-1))
        d = self._dim(dim, "take_along_dim")
        if indices.ndim != self.ndim:
            raise ShapeError(f"take_along_dim: indices of shape {indices.shape} need the tensor's {self.ndim} dims "
                             f"(shape {self.shape})")
        outside = np.broadcast_shapes(*[tuple(1 if a == d else n for a, n in enumerate(s))
                                        for s in (self.shape, indices.shape)])
        x = self.expand(*[self.shape[a] if a == d else n for a, n in enumerate(outside)])
        return x.gather(d, np.broadcast_to(indices, tuple(indices.shape[a] if a == d else n
                                                         for a, n in enumerate(outside))))

    def put(self, index, source, accumulate: bool = False) -> Tensor:
        """self flattened with source's entries written (or added) at `index`, out of place."""
        index = _integers(self, index, "put")
        if source._data.size != index.size:
            raise ShapeError(f"put: source has {source._data.size} entries for {index.size} indices")
        n = self._data.size
        if index.size and (index.min() < -n or index.max() >= n):
            raise IndexError(f"put: index out of range [-{n}, {n}) (tensor shape {self.shape})")
        return _write(self, _positions(self).reshape(-1)[index], source, accumulate)

    def masked_scatter(self, mask, source) -> Tensor:
        """self with the entries where mask is true (broadcast) replaced, in row-major order, by source's
        first entries."""
        mask = np.asarray(mask._data if hasattr(mask, "_ctx") else mask)
        if mask.dtype != bool:
            raise TypeError(f"masked_scatter: mask must be boolean, got dtype {mask.dtype}")
        try:
            mask = np.broadcast_to(mask, self.shape)
        except ValueError:
            raise ShapeError(f"masked_scatter: mask {mask.shape} does not broadcast to the tensor's shape "
                             f"{self.shape}") from None
        where = _positions(self)[mask]
        if source._data.size < where.size:
            raise ShapeError(f"masked_scatter: mask selects {where.size} entries, source has only "
                             f"{source._data.size} (shape {source.shape})")
        return _write(self, where, source.reshape(-1)[:where.size])

    def select_scatter(self, src, dim: int, index: int) -> Tensor:
        """self with src written into the slice self.select(dim, index)."""
        where = np.take(_positions(self), index, axis=self._dim(dim, "select_scatter"))
        return _write(self, where, _exactly(src, where.shape, "select_scatter", self))

    def slice_scatter(self, src, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
        """self with src written into the slice start:end:step of dim."""
        d = self._dim(dim, "slice_scatter")
        where = _positions(self)[(slice(None),) * d + (slice(start, end, step),)]
        return _write(self, where, _exactly(src, where.shape, "slice_scatter", self))

    def diagonal_scatter(self, src, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        """self with src written onto diagonal(offset, dim1, dim2) (laid out as diagonal gives it)."""
        d1, d2 = self._dim(dim1, "diagonal_scatter"), self._dim(dim2, "diagonal_scatter")
        where = np.diagonal(_positions(self), offset, d1, d2)
        return _write(self, where, _exactly(src, where.shape, "diagonal_scatter", self))

    def argwhere(self) -> Tensor:
        """int64 (count, ndim): the index of every nonzero entry (nonzero())."""
        return self.nonzero()

    def nonzero_static(self, *, size: int, fill_value: int = -1) -> Tensor:
        """nonzero() with exactly `size` rows: cut after `size`, or padded with rows of fill_value."""
        found = self.nonzero()._data[:size]
        padding = np.full((size - len(found), self.ndim), fill_value, dtype=np.int64)
        return self._result(np.concatenate([found, padding]), None)

    def fill_diagonal_(self, fill_value, wrap: bool = False) -> Tensor:
        """In place: the main diagonal (all dims of one length; a tall matrix's continues after a gap row when
        wrap) set to fill_value."""
        if self.ndim < 2 or (self.ndim > 2 and len(set(self.shape)) > 1):
            raise ShapeError(f"fill_diagonal_: needs a matrix, or all dimensions of one length, got {self.shape}")
        mask = np.zeros(self.shape, dtype=bool)
        np.fill_diagonal(mask, True, wrap=wrap)
        return self._update("fill_diagonal_", lambda t: t.masked_fill(type(self)(mask), fill_value), fill_value)

    def scatter_(self, dim: int, index, src=None, value=None, *, reduce: str | None = None) -> Tensor:
        """In place: scatter (reduce='add' adds, 'multiply' multiplies, PyTorch's older spellings)."""
        if src is None and value is None:
            raise TypeError("scatter_: pass src (a tensor or a number) or value")
        given = src if src is not None else value
        if reduce is None:
            if hasattr(given, "_ctx") and given.ndim:
                return self._update("scatter_", lambda t: t.scatter(dim, index, given), given)
            return self._update("scatter_", lambda t: t.scatter(dim, index, value=given), given)
        kinds = {"add": "sum", "multiply": "prod"}
        if reduce not in kinds:
            raise ValueError(f"scatter_: reduce must be 'add' or 'multiply', got {reduce!r}")
        given = given if hasattr(given, "_ctx") and given.ndim else self._lift(given).expand(np.shape(index))
        return self._update("scatter_", lambda t: t.scatter_reduce(dim, index, given, kinds[reduce]), given)

    index_add_, index_copy_, index_fill_, index_put_, index_reduce_, scatter_add_, scatter_reduce_, put_, \
        masked_scatter_ = (in_place_of(n) for n in ("index_add", "index_copy", "index_fill", "index_put",
                                                    "index_reduce", "scatter_add", "scatter_reduce", "put",
                                                    "masked_scatter"))


def _exactly(src: Tensor, shape: tuple, op: str, self: Tensor) -> Tensor:
    if tuple(src.shape) != tuple(shape):
        raise ShapeError(f"{op}: src of shape {src.shape} should be {tuple(shape)}, the part of the tensor "
                         f"(shape {self.shape}) it is written into")
    return src
