"""PyTorch's named products of matrices and vectors, each composed of the engine's matmul, sums and
reshapes, so its gradient is theirs (tests/test_arrays_gradcheck.py checks each):

- with a term added: `addmm` (β·input + α·mat1 @ mat2), `addmv`, `addr` (an outer product), `baddbmm`
  (batched), `addbmm` (batched, summed over the batch), and their in-place forms `addmm_`, ...;
- `inner`, `vdot`, `kron`, `cross`, `diagflat`, `dist` (adjoint, H and mH are in dialect/elementwise.py);
- `inverse`, `det`, `slogdet`, `logdet`, `matrix_power`, PyTorch's spellings of tinygrad_like/linalg.py.

torch-level products without a Tensor method (tensordot, chain_matmul, block_diag, cdist, ...) are in
tinygrad_like/torch/_array_functions.py. The dialect attaches these to Tensor.
"""
from __future__ import annotations

import math
from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like import linalg
from tinygrad_like.errors import ShapeError

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor


SignLogAbsDet = namedtuple("slogdet", ["sign", "logabsdet"])


def in_place_of(name: str):
    """`x.name_(*args)`: x.name(*args) written into x by inplace.py's rules; recorded when x or ANY tensor
    argument requires grad (so no gradient of a second or third operand is dropped)."""
    def method(self, *args, **kwargs):
        tensors = [a for a in (*args, *kwargs.values()) if hasattr(a, "_ctx")]
        other = next((t for t in tensors if t.requires_grad), tensors[0] if tensors else None)
        return self._update(f"{name}_", lambda t: getattr(t, name)(*args, **kwargs), other)
    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In place: x.{name}(...) written into x (dialect/inplace.py's rules)."
    return method


def _plus(self: Tensor, product: Tensor, beta, alpha, op: str) -> Tensor:
    """β·self + α·product, self broadcast to product's shape; β = 0 ignores self entirely (a NaN in it too),
    as PyTorch does."""
    try:
        fits = np.broadcast_shapes(self.shape, product.shape) == product.shape
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"{op}: input of shape {self.shape} does not broadcast to the product's shape "
                         f"{product.shape}")
    scaled = product if alpha == 1 else product * alpha
    if beta == 0:
        return scaled
    return scaled + (self if beta == 1 else self * beta)


class Products:
    """PyTorch's products by name."""

    def addmm(self, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
        """β·self + α·(mat1 @ mat2): (n, m) @ (m, p) plus self broadcast to (n, p)."""
        return _plus(self, mat1.mm(mat2), beta, alpha, "addmm")

    def addmv(self, mat, vec, *, beta=1, alpha=1) -> Tensor:
        """β·self + α·(mat @ vec): (n, m) @ (m,) plus self broadcast to (n,)."""
        return _plus(self, mat.mv(vec), beta, alpha, "addmv")

    def addr(self, vec1, vec2, *, beta=1, alpha=1) -> Tensor:
        """β·self + α·outer(vec1, vec2): (n,), (m,) plus self broadcast to (n, m)."""
        return _plus(self, vec1.outer(vec2), beta, alpha, "addr")

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
        """β·self + α·bmm(batch1, batch2): (b, n, m) @ (b, m, p) plus self broadcast to (b, n, p)."""
        return _plus(self, batch1.bmm(batch2), beta, alpha, "baddbmm")

    def addbmm(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
        """β·self + α·Σ_b batch1[b] @ batch2[b]: (b, n, m), (b, m, p) summed to (n, p), plus self."""
        return _plus(self, batch1.bmm(batch2).sum(0), beta, alpha, "addbmm")

    addmm_, addmv_, addr_, baddbmm_, addbmm_ = (in_place_of(n) for n in ("addmm", "addmv", "addr", "baddbmm",
                                                                         "addbmm"))

    def inner(self, other) -> Tensor:
        """Σ_k self[..., k] · other[..., k] over the last axes: (a..., k), (b..., k) -> (a..., b...);
        a number times a tensor when either is 0-d."""
        other = self._lift(other)
        if self.ndim == 0 or other.ndim == 0:
            return self * other
        if self.shape[-1] != other.shape[-1]:
            raise ShapeError(f"inner: the last dimensions differ, shapes {self.shape} and {other.shape}")
        a = self.reshape(-1, self.shape[-1])                       # (A, k)
        b = other.reshape(-1, other.shape[-1])                     # (B, k)
        return (a @ b.T).reshape(*self.shape[:-1], *other.shape[:-1])

    def vdot(self, other) -> Tensor:
        """Σ_i self[i] · other[i] of two vectors of one length (the conjugate of self is itself: real numbers)."""
        if self.ndim != 1 or other.ndim != 1 or self.shape != other.shape:
            raise ShapeError(f"vdot: needs two vectors of one length, got shapes {self.shape} and {other.shape}")
        return (self * other).sum()

    def kron(self, other) -> Tensor:
        """The Kronecker product: out[i·q + k, j·r + l] = self[i, j] · other[k, l] (any ranks; the smaller
        one is read with leading 1s). (p, s), (q, r) -> (p·q, s·r)."""
        other = self._lift(other)
        n = max(self.ndim, other.ndim)
        a = self.reshape((1,) * (n - self.ndim) + self.shape)
        b = other.reshape((1,) * (n - other.ndim) + other.shape)
        spread_a = a.reshape(*[s for m in a.shape for s in (m, 1)])   # (p, 1, s, 1)
        spread_b = b.reshape(*[s for m in b.shape for s in (1, m)])   # (1, q, 1, r)
        return (spread_a * spread_b).reshape(*[p * q for p, q in zip(a.shape, b.shape)])

    def cross(self, other, dim=None) -> Tensor:
        """The cross product of 3-vectors along `dim` (self and other broadcast): (a × b)_i = a_{i+1} b_{i+2}
        − a_{i+2} b_{i+1}. dim=None takes the first dimension of size 3 (PyTorch's deprecated default; pass
        dim, or use -1 as torch.linalg.cross)."""
        shape = np.broadcast_shapes(self.shape, other.shape)
        a, b = self.expand(shape), other.expand(shape)
        if dim is None:
            if 3 not in shape:
                raise ShapeError(f"cross: no dimension of size 3 in shapes {self.shape} and {other.shape}")
            dim = shape.index(3)
        d = a._dim(dim, "cross")
        if shape[d] != 3:
            raise ShapeError(f"cross: dim {dim} has size {shape[d]}, needs 3 (shapes {self.shape}, {other.shape})")
        a1, a2 = a.roll(-1, d), a.roll(-2, d)
        b1, b2 = b.roll(-1, d), b.roll(-2, d)
        return a1 * b2 - a2 * b1

    def diagflat(self, offset: int = 0) -> Tensor:
        """The entries of self, flattened, on the offset diagonal of a square matrix of zeros."""
        return self.reshape(-1).diag_embed(offset)

    def inverse(self) -> Tensor:
        """A⁻¹ of each square matrix (..., n, n) (tinygrad_like/linalg.py)."""
        return linalg.inverse(self)

    def det(self) -> Tensor:
        """The determinant of each square matrix: (..., n, n) -> (...)."""
        return linalg.det(self)

    def slogdet(self) -> tuple:
        """(sign, logabsdet) of each square matrix: det = sign · exp(logabsdet), without overflow."""
        return SignLogAbsDet(*linalg.slogdet(self))

    def logdet(self) -> Tensor:
        """log det of each square matrix (NaN where det < 0)."""
        return linalg.logdet(self)

    def matrix_power(self, n: int) -> Tensor:
        """Aⁿ of each square matrix (n < 0: of the inverse)."""
        return linalg.matrix_power(self, n)

    def dist(self, other, p=2) -> Tensor:
        """The p-norm of self − other (broadcast) over all entries: p = 2 Euclid's, 1, inf, -inf, 0 (how many
        entries differ) or any p > 0 (Σ|d|^p)^(1/p). Equal inputs have gradient 0, as in PyTorch."""
        return p_norm(self - self._lift(other), p, None, "dist")


def p_norm(d: Tensor, p, dim, op: str) -> Tensor:
    """(Σ|d|^p)^(1/p) over `dim` (None: everything), with gradient 0 where d is 0 for every p (PyTorch's
    convention: a plain |d|^p would give 0·∞ there for p < 1, and the root 0/0 for a zero sum)."""
    if p in (1, 2, math.inf, -math.inf):
        return d.norm(p, dim)
    if not isinstance(p, (int, float)) or p < 0:
        raise ValueError(f"{op}: p must be a number >= 0 or ±inf, got {p!r}")
    size = d.abs()
    if p == 0:                                                     # how many differ: a count, no gradient
        return d._result(np.asarray((d._data != 0).sum(axis=dim), dtype=d.dtype), None)
    nonzero = size > 0
    powers = nonzero.where(nonzero.where(size, 1) ** p, 0)
    total = powers.sum(dim)
    positive = total > 0
    return positive.where(positive.where(total, 1) ** (1 / p), 0)
