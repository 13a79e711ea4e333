"""torch.nn.functional's distances between vectors: cosine_similarity, pairwise_distance (a row of x1 to
the same row of x2) and pdist (every pair of rows of one matrix), composed of engine ops.
"""
from __future__ import annotations

import numpy as np

from tinygrad_like.errors import ShapeError
from tinygrad_like.tensor import Tensor

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1·x2 / (‖x1‖·‖x2‖) along `dim` (x1 and x2 broadcast): each vector scaled to unit length first, its
    norm floored at eps, as PyTorch computes it, so a zero vector has similarity 0 and gradient 0."""
    x1, x2 = (x if isinstance(x, Tensor) else Tensor(x) for x in (x1, x2))
    try:
        shape = np.broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        raise ShapeError(f"cosine_similarity: x1 {x1.shape} and x2 {x2.shape} do not broadcast") from None
    if not -len(shape) <= dim < max(len(shape), 1):
        raise ShapeError(f"cosine_similarity: dim {dim} is out of range for shape {shape}")
    unit1 = x1 / x1.norm(2, dim, keepdim=True).clamp(min=eps)
    unit2 = x2 / x2.norm(2, dim, keepdim=True).clamp(min=eps)
    return (unit1 * unit2).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """‖x1 − x2 + eps‖_p along the last dimension: (N, D), (N, D) -> (N,) (x1 and x2 broadcast). eps keeps
    the norm away from its kink at 0, as in PyTorch."""
    x1, x2 = (x if isinstance(x, Tensor) else Tensor(x) for x in (x1, x2))
    if x1.ndim == 0 or x2.ndim == 0:
        raise ShapeError(f"pairwise_distance: x1 {x1.shape} and x2 {x2.shape} need a last dimension to measure along")
    return (x1 - x2 + eps).norm(p, -1, keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """‖x_i − x_j‖_p for every pair of rows i < j of input (N, M), in the order (0,1), (0,2), ..., (1,2), ...:
    N(N−1)/2 distances (the condensed form of torch.cdist(x, x) and scipy's pdist)."""
    if input.ndim != 2:
        raise ShapeError(f"pdist: input must be a matrix (N, M), got shape {input.shape}")
    if p < 0:
        raise ValueError(f"pdist: p must be >= 0, got {p}")
    i, j = np.triu_indices(input.shape[0], k=1)
    diff = input[i] - input[j]
    if p == 0:                                      # the number of entries that differ: a count, no gradient
        return diff._result((diff._data != 0).sum(-1).astype(diff.dtype), None)
    return diff.norm(p, -1)
