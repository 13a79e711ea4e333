"""PyTorch's order statistics, running reductions, counts and sample statistics, with PyTorch's rules for ties
and NaN (each checked against PyTorch in tests/test_arrays_torch.py):

- order statistics, (values, indices) along a dim: `median`, `nanmedian`, `kthvalue`, `mode`; `quantile`,
  `nanquantile` (linear, lower, higher, midpoint, nearest); `aminmax`, `msort`;
- running: `cummax`, `cummin`, `logcumsumexp`, and `cumsum_` / `cumprod_` in place;
- counts: `histc`, `histogram`, `bincount`, `unique_consecutive` (no gradient: they count);
- sample statistics: `cov`, `corrcoef`, `renorm`.

Values are read from self with the engine's gather (or sort), so a value's gradient goes to the entry it
was read from, as PyTorch's does; the indices carry none. torch-level ones without a Tensor method
(histogramdd, bucketize, searchsorted, gradient, trapezoid, ...) are in tinygrad_like/torch/_array_functions.py.
"""
from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like.dialect.products import in_place_of
from tinygrad_like.errors import ShapeError
from tinygrad_like.selection import ValuesIndices

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor

MinMax = namedtuple("MinMax", ["min", "max"])
LOGCUMSUMEXP_BLOCK = 128   # logcumsumexp's block: memory (block, block) per slice, one logaddexp per block
INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _along(self: Tensor, dim, op: str) -> tuple:
    """(self, d): self flattened when dim is None (d = 0), and the axis as an index >= 0; a 0-d tensor is one entry."""
    if dim is None or self.ndim == 0:
        if dim is not None:
            self._dim(dim, op, extra=1)
        return self.reshape(-1), 0
    return self, self._dim(dim, op)


def _picked(self: Tensor, d: int, index: np.ndarray, keepdim: bool, squeeze: bool = True) -> ValuesIndices:
    """(self's entries at `index` (keepdims-shaped along d), index), with d kept or dropped."""
    values = self.gather(d, index)
    if not keepdim and squeeze:
        values, index = values.squeeze(d), index.squeeze(d)
    return ValuesIndices(values, self._result(index.astype(np.int64), None))


def _nonempty(self: Tensor, d: int, op: str) -> None:
    if self.shape[d] == 0:
        raise ShapeError(f"{op}: dim {d} of shape {self.shape} is empty")


def _order_statistic(self: Tensor, dim, keepdim: bool, position, op: str) -> ValuesIndices:
    """The entry at sorted `position` (an array of positions, one per slice, keepdims-shaped) along dim, NaNs
    sorted last and equal entries in their order (a stable sort)."""
    x, d = _along(self, dim, op)
    _nonempty(x, d, op)
    order = np.argsort(x._data, axis=d, kind="stable")
    index = np.take_along_axis(order, position, axis=d)
    out = _picked(x, d, index, keepdim, squeeze=dim is not None)
    if dim is None:
        return ValuesIndices(out.values.reshape(()), out.indices.reshape(()))
    return out


def _nan_count(x: Tensor, d: int) -> np.ndarray:
    return np.isnan(x._data).sum(axis=d, keepdims=True) if x.dtype.kind == "f" else np.zeros(
        tuple(1 if a == d else n for a, n in enumerate(x.shape)), dtype=int)


def _even_split(self: Tensor, value: Tensor) -> Tensor:
    """value (a number of self's) with its gradient shared evenly by all of self's entries equal to it, as
    PyTorch's median() and nanmedian() over all entries do: value + Σ (t − t) / count over the tied entries t."""
    ties = np.flatnonzero(self._data.reshape(-1) == value._data)
    if not ties.size:
        return value
    tied = self.reshape(-1)[ties]
    return value.detach() + (tied - tied.detach()).sum() * (1.0 / ties.size)


class Statistics:
    """PyTorch's order statistics, running reductions, counts and sample statistics."""

    def aminmax(self, *, dim=None, keepdim: bool = False) -> MinMax:
        """(min, max) over dim (all entries when None): amin and amax."""
        return MinMax(self.amin(dim, keepdim), self.amax(dim, keepdim))

    def median(self, dim=None, keepdim: bool = False):
        """The lower median ((n − 1) // 2-th smallest) over dim, as (values, indices); over all entries (dim
        None) the value alone, whose gradient is shared by the entries equal to it. A NaN in a slice makes its
        median NaN (the first NaN's index)."""
        x, d = _along(self, dim, "median")
        _nonempty(x, d, "median")
        nans = _nan_count(x, d)
        position = np.where(nans > 0, x.shape[d] - nans, (x.shape[d] - 1) // 2)
        out = _order_statistic(self, dim, keepdim, position, "median")
        return _even_split(x, out.values) if dim is None else out

    def nanmedian(self, dim=None, keepdim: bool = False):
        """median ignoring NaNs (NaN only where a slice is all NaN; PyTorch's index there is any of them)."""
        x, d = _along(self, dim, "nanmedian")
        _nonempty(x, d, "nanmedian")
        valid = x.shape[d] - _nan_count(x, d)
        position = np.where(valid > 0, (valid - 1) // 2, (x.shape[d] - 1) // 2)
        out = _order_statistic(self, dim, keepdim, position, "nanmedian")
        return _even_split(x, out.values) if dim is None else out

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
        """The k-th smallest entry (k from 1) along dim and its index (NaNs count as the largest). Among equal
        entries the index is the first in order; PyTorch's depends on its selection algorithm."""
        x, d = _along(self, dim, "kthvalue")
        if not 1 <= k <= x.shape[d]:
            raise ValueError(f"kthvalue: k={k} is outside [1, {x.shape[d]}] for dim {dim} of shape {self.shape}")
        position = np.full(tuple(1 if a == d else n for a, n in enumerate(x.shape)), k - 1)
        return _order_statistic(self, dim, keepdim, position, "kthvalue")

    def mode(self, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
        """The most frequent entry along dim (the smallest of several; each NaN counts once) and the index of
        its last occurrence (PyTorch's, except that with NaNs in the slice its sort may pick another)."""
        x, d = _along(self, dim, "mode")
        _nonempty(x, d, "mode")
        data = np.moveaxis(x._data, d, -1)
        index = np.empty(data.shape[:-1], dtype=np.int64)
        for pos in np.ndindex(data.shape[:-1]):
            row = data[pos]
            values, counts = np.unique(row, return_counts=True, equal_nan=False)
            best = values[np.argmax(counts)]                    # unique is ascending: the smallest of the most frequent
            index[pos] = np.flatnonzero(row == best)[-1] if best == best else np.flatnonzero(np.isnan(row))[-1]
        return _picked(x, d, np.expand_dims(index, d), keepdim)

    def quantile(self, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
        """The q-th quantiles (q a number or 1-D tensor in [0, 1]) along dim (all entries when None), by
        interpolating between the sorted entries at q·(n − 1): `linear`, `lower`, `higher`, `midpoint`,
        `nearest` (rounding half to even). A NaN in a slice makes its quantiles NaN. q's axis comes first."""
        return _quantile(self, q, dim, keepdim, interpolation, "quantile", ignore_nan=False)

    def nanquantile(self, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
        """quantile ignoring NaNs (NaN where a slice is all NaN)."""
        return _quantile(self, q, dim, keepdim, interpolation, "nanquantile", ignore_nan=True)

    def msort(self) -> Tensor:
        """The values sorted along dim 0."""
        return self.sort(0).values

    def cummax(self, dim: int) -> ValuesIndices:
        """Running maximum along dim and where it was found (a later equal entry takes over; a NaN stays)."""
        return _running(self, dim, np.greater_equal, "cummax")

    def cummin(self, dim: int) -> ValuesIndices:
        """Running minimum along dim and where it was found (a later equal entry takes over; a NaN stays)."""
        return _running(self, dim, np.less_equal, "cummin")

    def logcumsumexp(self, dim: int) -> Tensor:
        """log Σ_{j<=i} exp(x_j) along dim: exact and stable for any range. In blocks of LOGCUMSUMEXP_BLOCK
        entries: inside a block each prefix is one logsumexp of the block's entries up to it (the others masked
        to −inf, a (block, block) array), and logaddexp adds the total of the blocks before."""
        d = self._dim(dim, "logcumsumexp") if self.ndim else 0
        x = (self.reshape(1) if self.ndim == 0 else self).movedim(d, -1)             # (..., n)
        n, pieces, before = x.shape[-1], [], None
        for start in range(0, n, LOGCUMSUMEXP_BLOCK):
            block = x[..., start:start + LOGCUMSUMEXP_BLOCK]                        # (..., b)
            b = block.shape[-1]
            later = type(self)(np.triu(np.ones((b, b), dtype=bool), k=1))           # [i, j]: j after i
            prefixes = block.unsqueeze(-2).expand(*block.shape[:-1], b, b).masked_fill(later, -np.inf).logsumexp(-1)
            if before is not None:
                prefixes = prefixes.logaddexp(before.unsqueeze(-1))
            before = prefixes[..., -1]
            pieces.append(prefixes)
        out = (type(self).cat(*pieces, dim=-1) if len(pieces) > 1 else pieces[0]) if pieces else x
        out = out.movedim(-1, d)
        return out.reshape(()) if self.ndim == 0 else out

    cumsum_, cumprod_ = in_place_of("cumsum"), in_place_of("cumprod")

    def histc(self, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
        """Counts in `bins` equal bins over [min, max] (the data's own range when both are 0), entries outside
        (and NaNs) left out; self's dtype. No gradient."""
        if self.dtype.kind != "f":
            raise TypeError(f"histc: needs a float tensor, got dtype {self.dtype}")
        data = self._data[~np.isnan(self._data)]
        lo, hi = float(min), float(max)
        if lo == hi == 0 and data.size:
            lo, hi = float(data.min()), float(data.max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if lo > hi or bins <= 0:
            raise ValueError(f"histc: needs bins > 0 and min <= max, got bins={bins}, min={min}, max={max}")
        counts, _ = np.histogram(data, bins=bins, range=(lo, hi))
        return self._result(counts.astype(self.dtype), None)

    def histogram(self, bins=100, *, range=None, weight=None, density: bool = False) -> tuple:
        """(hist, bin_edges), numpy's histogram: `bins` a count (over `range`, default the data's) or a 1-D
        tensor of edges; optional weights, density. No gradient."""
        edges = bins._data if hasattr(bins, "_ctx") else bins
        w = weight._data if hasattr(weight, "_ctx") else weight
        hist, edges = np.histogram(self._data, bins=edges, range=range, weights=w, density=density)
        return _HistogramOut(self._result(hist.astype(self.dtype), None), self._result(edges.astype(self.dtype), None))

    def bincount(self, weights=None, minlength: int = 0) -> Tensor:
        """How often each value 0, 1, ... occurs in a 1-D tensor of non-negative integers (the sum of the
        weights at its occurrences, with weights). No gradient."""
        if self.ndim != 1 or self.dtype.kind not in "iu" or (self._data.size and self._data.min() < 0):
            raise ValueError(f"bincount: needs a 1-D tensor of non-negative integers, got shape {self.shape}, "
                             f"dtype {self.dtype}")
        w = weights._data if hasattr(weights, "_ctx") else weights
        counts = np.bincount(self._data, weights=w, minlength=minlength)
        dtype = np.int64 if w is None else (np.asarray(w).dtype if np.asarray(w).dtype.kind == "f" else np.float64)
        return self._result(counts.astype(dtype), None)

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False, dim=None):
        """Each run of equal consecutive entries (slices along dim) once; inverse maps each entry to its run,
        counts gives each run's length. No gradient."""
        data = self._data.reshape(-1) if dim is None else np.moveaxis(self._data, self._dim(dim, "unique"), 0)
        if data.shape[0] == 0:
            starts = np.zeros(0, dtype=bool)
        else:
            rest = tuple(range(1, data.ndim))
            changed = (data[1:] != data[:-1]).any(axis=rest) if rest else data[1:] != data[:-1]
            starts = np.concatenate([[True], changed])
        values = data[starts]
        values = values if dim is None else np.moveaxis(values, 0, self._dim(dim, "unique"))
        out = [self._result(np.ascontiguousarray(values), None)]
        if return_inverse:
            inverse = np.cumsum(starts) - 1
            out.append(self._result(inverse.reshape(self.shape if dim is None else -1).astype(np.int64), None))
        if return_counts:
            out.append(self._result(np.diff(np.append(np.flatnonzero(starts), len(starts))).astype(np.int64), None))
        return out[0] if len(out) == 1 else tuple(out)

    def cov(self, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
        """The covariance matrix of the variables in the rows (observations in the columns): (v, n) -> (v, v),
        (n,) -> a number; with integer frequency weights and real observation weights, numpy's formula."""
        if self.ndim > 2:
            raise ShapeError(f"cov: needs a vector or a matrix of (variables, observations), got {self.shape}")
        x = self.reshape(1, -1) if self.ndim < 2 else self
        if x.dtype.kind != "f":
            x = x.cast(np.float32)
        n = x.shape[1]
        w = np.ones(n)
        for given, name in ((fweights, "fweights"), (aweights, "aweights")):
            if given is not None:
                g = np.asarray(given._data if hasattr(given, "_ctx") else given, dtype=np.float64)
                if g.shape != (n,) or (g < 0).any():
                    raise ValueError(f"cov: {name} must be {n} non-negative numbers, got shape {g.shape}")
                w = w * g
        total = w.sum()
        a = np.ones(n) if aweights is None else np.asarray(aweights._data if hasattr(aweights, "_ctx") else aweights)
        norm = total - correction * ((w * a).sum() / total if aweights is not None else 1)
        weights = x._result(w.astype(x.dtype), None)
        mean = (x * weights).sum(1, keepdim=True) / float(total)
        centred = x - mean
        out = (centred * weights) @ centred.T / float(np.maximum(norm, 0))
        return out.reshape(()) if self.ndim < 2 else out

    def corrcoef(self) -> Tensor:
        """Pearson's correlation matrix of the rows' variables, cov / √(var_i var_j), clipped to [−1, 1]."""
        c = self.cov()
        if c.ndim == 0:
            return c / c
        sd = c.diagonal().sqrt()
        return (c / sd.unsqueeze(1) / sd.unsqueeze(0)).clamp(-1, 1)

    def renorm(self, p, dim: int, maxnorm) -> Tensor:
        """Each slice along dim whose p-norm (over all the other axes) exceeds maxnorm scaled down to norm
        maxnorm (by maxnorm / (norm + 1e-7), PyTorch's factor); the others as they are."""
        d = self._dim(dim, "renorm")
        if not p > 0:
            raise ValueError(f"renorm: p must be > 0, got {p}")
        others = tuple(a for a in range(self.ndim) if a != d)
        norms = self.norm(p, others, keepdim=True) if others else self.abs()
        factor = (norms > maxnorm).where(maxnorm / (norms + 1e-7), 1.0)
        return self * factor

    renorm_ = in_place_of("renorm")


_HistogramOut = namedtuple("histogram", ["hist", "bin_edges"])


def _quantile(self: Tensor, q, dim, keepdim: bool, interpolation: str, op: str, ignore_nan: bool) -> Tensor:
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"{op}: interpolation must be one of {INTERPOLATIONS}, got {interpolation!r}")
    qs = np.asarray(q._data if hasattr(q, "_ctx") else q, dtype=np.float64)
    if qs.ndim > 1 or ((qs < 0) | (qs > 1) | np.isnan(qs)).any():
        raise ValueError(f"{op}: q must be a number or a 1-D tensor of numbers in [0, 1], got {q}")
    if self.dtype.kind != "f":
        raise TypeError(f"{op}: needs a float tensor, got dtype {self.dtype}")
    x, d = _along(self, dim, op)
    _nonempty(x, d, op)
    values = x.sort(d).values                                          # NaNs last
    nans = _nan_count(x, d)
    n = x.shape[d] - nans if ignore_nan else np.full_like(nans, x.shape[d])
    outs = []
    for one in qs.reshape(-1):
        rank = one * np.maximum(n - 1, 0)
        if interpolation == "nearest":
            rank = np.round(rank)
        below, above = np.floor(rank).astype(np.int64), np.ceil(rank).astype(np.int64)
        low, high = values.gather(d, below), values.gather(d, above)
        if interpolation in ("lower", "nearest"):
            out = low
        elif interpolation == "higher":
            out = high
        elif interpolation == "midpoint":
            out = low + (high - low) * 0.5
        else:
            out = low + (high - low) * x._result((rank - below).astype(x.dtype), None)
        undefined = (nans > 0) if not ignore_nan else (n == 0)
        if undefined.any():
            out = type(self)(undefined).where(np.nan, out)
        outs.append(out if keepdim and dim is not None else out.squeeze(d))
    if dim is None and keepdim:
        outs = [o.reshape((1,) * self.ndim) for o in outs]
    out = type(self).stack(*outs, dim=0) if qs.ndim == 1 else outs[0]
    return out.reshape(()) if qs.ndim == 0 and dim is None and not keepdim else out


def _running(self: Tensor, dim: int, takes_over, op: str) -> ValuesIndices:
    """(running extreme, its index) along dim: entry i takes over when takes_over(x_i, current) or x_i is NaN
    (after a NaN only another NaN does, since comparisons with NaN are false), as PyTorch's."""
    if self.ndim == 0:
        self._dim(dim, op, extra=1)
        return ValuesIndices(self, self._result(np.zeros((), dtype=np.int64), None))
    d = self._dim(dim, op)
    data = np.moveaxis(self._data, d, 0)
    index = np.zeros(data.shape, dtype=np.int64)
    best, where = (data[0], np.zeros(data.shape[1:], dtype=np.int64)) if len(data) else (None, None)
    for i in range(1, len(data)):
        new = data[i]
        take = (new != new) | takes_over(new, best)                            # x != x: NaN, which always takes over
        best, where = np.where(take, new, best), np.where(take, i, where)
        index[i] = where
    index = np.moveaxis(index, 0, d)
    return ValuesIndices(self.gather(d, index), self._result(index, None))
