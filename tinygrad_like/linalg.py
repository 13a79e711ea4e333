"""The inverse and the determinant of square matrices (..., n, n): numpy's LAPACK computes the forward, and
the derivative is written with the engine's ops, so second derivatives work too.

    d(A⁻¹) = −A⁻¹ dA A⁻¹         so  ∂L/∂A = −A⁻ᵀ G A⁻ᵀ          (G = ∂L/∂A⁻¹)
    d det A = det A · tr(A⁻¹ dA)  so  ∂L/∂A = g · det A · A⁻ᵀ     (Jacobi's formula)
    d log|det A| = tr(A⁻¹ dA)     so  ∂L/∂A = g · A⁻ᵀ

A singular matrix has no inverse and log|det| = −∞ there: asking for either is an error that says so.
det itself is smooth everywhere; at a singular matrix its gradient is the cofactor matrix, computed from the
SVD (A = U S Vᵀ: cof A = det U det V · U diag(Π_{j≠i} s_j) Vᵀ), as a constant: no second derivative for a
batch that holds a singular matrix.
The PyTorch names (Tensor.inverse, torch.det, slogdet, ...) are attached by tinygrad_like/dialect/products.py.
"""
from __future__ import annotations

import numpy as np

from tinygrad_like.errors import ShapeError
from tinygrad_like.function import Function
from tinygrad_like.tensor import Tensor


def _square(a: Tensor, op: str) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{op}: needs square matrices (..., n, n), got shape {a.shape}")
    if a.dtype.kind != "f":
        raise TypeError(f"{op}: needs a float tensor, got dtype {a.dtype}")


def _invertible(a: np.ndarray) -> bool:
    """LAPACK's answer: does every matrix of the batch have an inverse (no zero pivot)?"""
    try:
        np.linalg.inv(a)
    except np.linalg.LinAlgError:
        return False
    return True


def _transposed(t: Tensor) -> Tensor:
    return t.transpose(-2, -1)


def _as_matrix(g: Tensor) -> Tensor:
    """A number per matrix, shaped to broadcast against the matrices: (...) -> (..., 1, 1)."""
    return g.reshape(*g.shape, 1, 1)


class Inverse(Function):
    def forward(self, a): return np.linalg.inv(a)
    def backward(self, grad, out):                                         # −A⁻ᵀ G A⁻ᵀ
        return -(_transposed(out) @ grad @ _transposed(out))


class Det(Function):
    def forward(self, a): return np.linalg.det(a)
    def backward(self, grad, out):                                         # g · det A · A⁻ᵀ, the cofactors
        a = self.parents[0]
        if not _invertible(a._data):
            return _as_matrix(grad) * Tensor._result(_cofactors(a._data), None)
        return _as_matrix(grad * out) * _transposed(inverse(a))


class LogAbsDet(Function):
    def forward(self, a): return np.linalg.slogdet(a)[1]
    def backward(self, grad, out):                                         # g · A⁻ᵀ
        return _as_matrix(grad) * _transposed(inverse(self.parents[0]))


def _cofactors(a: np.ndarray) -> np.ndarray:
    """cof A = det U · det V · U diag(Π_{j≠i} s_j) Vᵀ, from A = U S Vᵀ: defined for singular A too."""
    u, s, vt = np.linalg.svd(a)
    n = s.shape[-1]
    others = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(n)], axis=-1)
    sign = np.linalg.det(u) * np.linalg.det(vt)
    return sign[..., None, None] * (u * others[..., None, :]) @ vt


def inverse(a: Tensor) -> Tensor:
    """A⁻¹ of each square matrix (..., n, n); a singular one is an error."""
    _square(a, "inverse")
    if not _invertible(a._data):
        raise np.linalg.LinAlgError(f"inverse: a matrix of the batch (shape {a.shape}) is singular: it has no "
                                    "inverse (for a least-squares answer the engine has no pinverse)")
    return Inverse.apply(a)


def det(a: Tensor) -> Tensor:
    """The determinant of each square matrix: (..., n, n) -> (...)."""
    _square(a, "det")
    return Det.apply(a)


def slogdet(a: Tensor) -> tuple:
    """(sign, log|det|) of each square matrix, the log without overflow: det = sign · exp(logabsdet). The sign
    carries no gradient; a singular matrix has sign 0 and logabsdet −∞ (and no gradient)."""
    _square(a, "slogdet")
    sign = Tensor._result(np.linalg.slogdet(a._data)[0].astype(a.dtype), None)
    return sign, LogAbsDet.apply(a)


def logdet(a: Tensor) -> Tensor:
    """log det of each square matrix: NaN where det < 0, −∞ where it is 0."""
    sign, logabsdet = slogdet(a)
    negative = sign._data < 0
    return Tensor._result(negative, None).where(np.nan, logabsdet) if negative.any() else logabsdet


def matrix_power(a: Tensor, n: int) -> Tensor:
    """Aⁿ by repeated squaring (n = 0: the identity; n < 0: (A⁻¹)^|n|)."""
    _square(a, "matrix_power")
    if n < 0:
        return matrix_power(inverse(a), -n)
    result, power = None, a
    while n:
        if n & 1:
            result = power if result is None else result @ power
        n >>= 1
        if n:
            power = power @ power
    if result is None:
        return Tensor._result(np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape).copy(), None)
    return result
