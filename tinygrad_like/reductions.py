"""Reductions and scans beyond sum/max/mean: argmax/argmin/all/any with keepdim, prod, cumsum, cumprod,
norm, var_mean/std_mean.

Reductions take `axis` (an int, a tuple or None for all axes) as sum/max/mean do; PyTorch's `dim=` and
`keepdim=` (and numpy's `keepdims=`) are accepted too (the PyTorch dialect's spelling.py). cumsum is a primitive
(ops.Cumsum); the rest is composed.
Tensor inherits them from `ReductionMixin`.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like import ops
from tinygrad_like.errors import ShapeError
from tinygrad_like.selection import ValuesIndices

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor


def _index_reduce(self: Tensor, fn, axis, keepdim: bool, op: str) -> Tensor:
    if self._data.size == 0:
        raise ValueError(f"{op}: an empty tensor (shape {self.shape}) has no {op[3:]}")
    axis = None if axis is None else self._dim(axis, op)
    return self._result(np.asarray(fn(self._data, axis=axis, keepdims=keepdim)), None)


def correction_of(correction, unbiased, ddof, op: str):
    """The N − c divisor's c from its three spellings: PyTorch's correction=c or older unbiased=True/False,
    numpy's ddof=c. None of them: 1, the unbiased estimate (PyTorch's and tinygrad's default)."""
    given = [name for name, v in (("correction", correction), ("unbiased", unbiased), ("ddof", ddof)) if v is not None]
    if len(given) > 1:
        raise TypeError(f"{op}: got {' and '.join(given)}, which say the same thing; pass one, not both")
    if unbiased is not None:
        return 1 if unbiased else 0
    return correction if correction is not None else ddof if ddof is not None else 1


class ReductionMixin:
    """Tensor's reductions beyond the core: argmax, all, any, cumsum, norm, var_mean, ..."""

    __slots__ = ()

    def argmax(self, axis=None, keepdim: bool = False) -> Tensor:
        """int64 index of the largest entry along `axis` (of the flattened tensor when None; with
        keepdim every axis is kept as size 1). The first one at ties. No gradient."""
        return _index_reduce(self, np.argmax, axis, keepdim, "argmax")

    def argmin(self, axis=None, keepdim: bool = False) -> Tensor:
        """int64 index of the smallest entry along `axis`, like argmax."""
        return _index_reduce(self, np.argmin, axis, keepdim, "argmin")

    def all(self, axis=None, keepdim: bool = False) -> Tensor:
        """Boolean: is every entry nonzero (over `axis`, an int, a tuple or None for all)? No gradient."""
        return self._result(np.asarray(np.all(self._data, axis=self._axes(axis), keepdims=keepdim)), None)

    def any(self, axis=None, keepdim: bool = False) -> Tensor:
        """Boolean: is some entry nonzero (over `axis`)? No gradient."""
        return self._result(np.asarray(np.any(self._data, axis=self._axes(axis), keepdims=keepdim)), None)

    def prod(self, axis=None, keepdim: bool = False, dtype=None) -> Tensor:
        """Π of the entries along `axis` (one axis, as in PyTorch; all entries when None). dtype: cast first.

        Built as a tree of products (each level multiplies the entries in pairs), so the gradient is the
        product rule's and stays right when entries are 0 (the shortcut prod/x divides by zero there),
        with log2(n) Muls instead of n.
        """
        x = self if dtype is None else self.cast(dtype)
        if axis is None:
            out = x.reshape(-1).prod(0)
            return out.reshape((1,) * self.ndim) if keepdim else out
        if x.ndim == 0:
            x._axes(axis)
            return x
        d = x._dim(axis, "prod")
        if x.shape[d] == 0:
            return x._result(np.ones(_kept(x.shape, d), dtype=x.dtype), None) if keepdim else \
                x._result(np.ones(x.shape[:d] + x.shape[d + 1:], dtype=x.dtype), None)
        before = (slice(None),) * d
        while x.shape[d] > 1:
            n = x.shape[d]
            pairs = x[before + (slice(0, n - 1, 2),)] * x[before + (slice(1, n, 2),)]   # x0·x1, x2·x3, ...
            x = pairs if n % 2 == 0 else x.cat([pairs, x[before + (slice(n - 1, n),)]], dim=d)
        return x if keepdim else x.squeeze(d)

    def cumsum(self, axis: int) -> Tensor:
        """Running sum along `axis`: out[..., i, ...] = Σ_{j<=i} x[..., j, ...]. Same shape as self."""
        return ops.Cumsum.apply(self, axis=self._dim(axis, "cumsum"))

    def cumprod(self, axis: int) -> Tensor:
        """Running product along `axis`: out[i] = x[0]·x[1]···x[i]. Same shape as self.

        Built as a chain of products out[i] = out[i-1]·x[i], so the gradient is the product rule's and
        stays right when x holds zeros (the shortcut out/x divides by zero there). One Mul per step:
        fine for the lengths of a sequence axis, slow for a huge one.
        """
        d = self._dim(axis, "cumprod")
        if self.shape[d] == 0:
            return self.clone()
        before = (slice(None),) * d
        running = self[before + (slice(0, 1),)]
        parts = [running]
        for i in range(1, self.shape[d]):
            running = running * self[before + (slice(i, i + 1),)]
            parts.append(running)
        return self.cat(parts, dim=d)

    def norm(self, p=2, axis=None, keepdim: bool = False) -> Tensor:
        """The p-norm over `axis` (all entries when None): p = 2 or "fro" √Σx², p = 1 Σ|x|,
        p = inf max |x|, p = -inf min |x|, other p > 0 (Σ|x|^p)^(1/p).

        The 2-norm of a zero vector has gradient 0, as in PyTorch (a plain √ would give 0/0 = NaN):
        the square root only sees the positive sums, `where` passes 0 for the rest.
        """
        if p in (2, "fro"):
            squares = (self * self).sum(axis, keepdim)
            positive = squares > 0
            return positive.where(positive.where(squares, 1).sqrt(), 0)
        if p == 1:
            return self.abs().sum(axis, keepdim)
        if p == math.inf:
            return self.abs().amax(axis, keepdim)
        if p == -math.inf:
            return self.abs().amin(axis, keepdim)
        if isinstance(p, (int, float)) and p > 0:
            return (self.abs() ** p).sum(axis, keepdim) ** (1 / p)
        raise ValueError(f"norm: p must be 'fro', inf, -inf or a number > 0, got {p!r}")

    def var_mean(self, axis=None, unbiased=None, keepdim: bool = False, *, correction=None, ddof=None) -> tuple:
        """(variance, mean) over `axis`, variance Σ(x - mean)² / (N - correction), with var's spellings
        and default: correction=1 (unbiased=True), the unbiased estimate; 0 (unbiased=False, ddof=0) the
        population's. PyTorch's positional order (axis, unbiased, keepdim)."""
        c = correction_of(correction, unbiased, ddof, "var_mean")
        return self.var(axis, keepdim=keepdim, correction=c), self.mean(axis, keepdim)

    def std_mean(self, axis=None, unbiased=None, keepdim: bool = False, *, correction=None, ddof=None) -> tuple:
        """(standard deviation, mean) over `axis`, with var_mean's correction."""
        c = correction_of(correction, unbiased, ddof, "std_mean")
        var, mean = self.var_mean(axis, keepdim=keepdim, correction=c)
        return var.sqrt(), mean

    def max(self, dim=None, keepdim=False, *, axis=None):
        """Three habits, one name. x.max(): the largest entry. x.max(axis=...) (numpy's, tinygrad's):
        the values, as amax. x.max(d) or x.max(dim=d) (PyTorch's): the pair (values, indices) along
        dim d, the index of the first largest entry, which gets the whole gradient (as in PyTorch).
        x.max(other_tensor) is PyTorch's elementwise maximum."""
        if isinstance(dim, ReductionMixin):                       # another tensor (every Tensor is a ReductionMixin)
            return self.maximum(dim)
        if dim is None:
            return self.amax(axis, keepdim)
        return self._extreme(dim, keepdim, np.argmax, "max")

    def min(self, dim=None, keepdim=False, *, axis=None):
        """Like max: x.min(), x.min(axis=...) the values (amin), x.min(d) the pair (values, indices),
        x.min(other_tensor) the elementwise minimum."""
        if isinstance(dim, ReductionMixin):                       # another tensor (every Tensor is a ReductionMixin)
            return self.minimum(dim)
        if dim is None:
            return self.amin(axis, keepdim)
        return self._extreme(dim, keepdim, np.argmin, "min")

    def _extreme(self, dim: int, keepdim: bool, arg, op: str) -> ValuesIndices:
        """PyTorch's max(dim) / min(dim): values read at the arg index, so the gradient goes to that entry."""
        if self.ndim == 0:                                        # dim 0 or -1 of a 0-d tensor: itself, index 0
            self._axes(dim)
            return ValuesIndices(self, self._result(np.zeros((), dtype=np.int64), None))
        d = self._dim(dim, op)
        if self.shape[d] == 0:
            raise ShapeError(f"{op}: dim {dim} of shape {self.shape} is empty, so it has no {op}imum")
        index = arg(self._data, axis=d, keepdims=True)
        values = self.gather(d, index)
        if not keepdim:
            values, index = values.squeeze(d), index.squeeze(d)
        return ValuesIndices(values, self._result(index, None))

    def logsumexp(self, axis=-1, keepdim=False):
        """log Σ exp(x) over `axis`, computed as m + log Σ exp(x − m) with m the (constant) max, so exp
        never overflows. The gradient is softmax(x). An infinite max (a row of −inf, or +inf) is not
        subtracted: the row's result is then −inf (or +inf), as in PyTorch."""
        m = self.amax(axis, keepdim=True).detach()
        m = self._result(np.where(np.isfinite(m._data), m._data, 0).astype(self.dtype), None)
        out = (self - m).exp().sum(axis, keepdim=True).log() + m
        return out if keepdim else out.reshape(_reduced_shape(self.shape, self._axes(axis)))

    def _count(self, axis) -> int:
        axes = self._axes(axis)
        return self._data.size if axes is None else math.prod((self.shape[a] for a in axes), start=1)

    def mean(self, axis=None, keepdim=False, dtype=None):
        x = self if dtype is None else self.cast(dtype)
        return x.sum(axis, keepdim) / x._count(axis)

    def var(self, axis=None, unbiased=None, keepdim=False, *, correction=None, ddof=None):
        """Σ(x - mean)² / (N - correction) over `axis`. The default is the unbiased estimate, correction=1,
        for every spelling (PyTorch's and tinygrad's default; numpy's var defaults to ddof=0). correction=0,
        unbiased=False or ddof=0 give the population variance; pass one of the three. The positional order
        is PyTorch's: x.var(0, False) is unbiased=False, as in PyTorch (keepdim comes third)."""
        c = correction_of(correction, unbiased, ddof, "var")
        centered = self - self.mean(axis, keepdim=True)
        return (centered * centered).sum(axis, keepdim) / max(self._count(axis) - c, 0)

    def std(self, axis=None, unbiased=None, keepdim=False, *, correction=None, ddof=None):
        """√var, with var's correction (unbiased by default)."""
        return self.var(axis, keepdim=keepdim, correction=correction_of(correction, unbiased, ddof, "std")).sqrt()



def _reduced_shape(shape: tuple, axes) -> tuple:
    """`shape` without `axes` (all of them when None): the shape of a reduction without keepdim."""
    return () if axes is None else tuple(n for i, n in enumerate(shape) if i not in axes)


def _kept(shape: tuple, d: int) -> tuple:
    return shape[:d] + (1,) + shape[d + 1:]
