"""torch.nn.functional's margin and embedding losses by PyTorch's names and arguments: a hinge max(0, ·)
on a score difference, per pair (margin_ranking), per embedding pair (hinge_embedding, cosine_embedding),
per class (multi_margin, multilabel_margin), per triplet (triplet_margin), or its smooth form
log(1 + e^·) (soft_margin, multilabel_soft_margin). Composed of engine ops; `reduced` as "mean", "sum"
or "none"; PyTorch's deprecated size_average/reduce folded in (losses.legacy_reduction).

Each hinge is written as PyTorch writes it: clamp(min=0) (gradient 1 at the kink) where PyTorch calls
clamp_min, relu (gradient 0 there) where its kernel adds only positive terms.
"""
from __future__ import annotations

import numpy as np

from tinygrad_like.composites import reduced
from tinygrad_like.dialect.distances import pairwise_distance
from tinygrad_like.dialect.losses import legacy_reduction
from tinygrad_like.errors import ShapeError
from tinygrad_like.tensor import Tensor

__all__ = ["cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "multi_margin_loss",
           "multilabel_margin_loss", "multilabel_soft_margin_loss", "soft_margin_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss"]


def margin_ranking_loss(input1: Tensor, input2: Tensor, target, margin: float = 0, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """max(0, −y·(x1 − x2) + margin): target y = 1 says x1 should rank higher than x2, y = −1 lower."""
    if not input1.shape == input2.shape == np.shape(_data(target)):
        raise ShapeError(f"margin_ranking_loss: input1 {input1.shape}, input2 {input2.shape} and target "
                         f"{np.shape(_data(target))} must have the same shape")
    loss = (-input1._lift(target) * (input1 - input2) + margin).clamp(min=0)
    return reduced(loss, legacy_reduction(size_average, reduce, reduction), "margin_ranking_loss")


def hinge_embedding_loss(input: Tensor, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """input (a distance) where target = 1, max(0, margin − input) where target = −1."""
    y = _labels(input, target, "hinge_embedding_loss")
    loss = (y != 1).where((margin - input).clamp(min=0), 0.0) + (y != -1).where(input, 0.0)
    return reduced(loss, legacy_reduction(size_average, reduce, reduction), "hinge_embedding_loss")


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target, margin: float = 0, size_average=None,
                          reduce=None, reduction: str = "mean") -> Tensor:
    """1 − cos(x1, x2) where target = 1, max(0, cos(x1, x2) − margin) where target = −1; x1, x2 (N, D) or
    (D,), target (N,) or (). The cosine is PyTorch's: x1·x2 / √((‖x1‖² + 1e-12)(‖x2‖² + 1e-12))."""
    if input1.shape != input2.shape or input1.ndim not in (1, 2):
        raise ShapeError(f"cosine_embedding_loss: input1 {input1.shape} and input2 {input2.shape} must both be "
                         "(N, D) or (D,)")
    y = input1._lift(target)
    if y.shape != input1.shape[:-1]:
        raise ShapeError(f"cosine_embedding_loss: target {y.shape} must have shape {input1.shape[:-1]}")
    tiny = 1e-12
    cos = (input1 * input2).sum(-1) / (((input1 * input1).sum(-1) + tiny) * ((input2 * input2).sum(-1) + tiny)).sqrt()
    loss = (y == 1).where(1 - cos, 0.0) + (y == -1).where((cos - margin).clamp(min=0), 0.0)
    return reduced(loss, legacy_reduction(size_average, reduce, reduction), "cosine_embedding_loss")


def soft_margin_loss(input: Tensor, target, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """log(1 + e^(−y·x)), the logistic loss of labels y = ±1 (stable at any x)."""
    y = _labels(input, target, "soft_margin_loss")
    loss = (-y * input).softplus(threshold=float("inf"))
    return reduced(loss, legacy_reduction(size_average, reduce, reduction), "soft_margin_loss")


def multilabel_soft_margin_loss(input: Tensor, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of σ(x) against 0/1 labels, per class, averaged over the classes: input and
    target (N, C) or (C,); `weight` (C,) rescales each class."""
    y = _labels(input, target, "multilabel_soft_margin_loss")
    logsig = (-(-input).softplus(threshold=float("inf")), -input.softplus(threshold=float("inf")))  # log σ(±x)
    loss = -(y * logsig[0] + (1 - y) * logsig[1])
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) / input.shape[-1]
    return reduced(loss, legacy_reduction(size_average, reduce, reduction), "multilabel_soft_margin_loss")


def multi_margin_loss(input: Tensor, target, p: int = 1, margin: float = 1.0, weight=None, size_average=None,
                      reduce=None, reduction: str = "mean") -> Tensor:
    """The multi-class hinge: Σ_{i ≠ y} max(0, margin − x[y] + x[i])^p / C per row, input (N, C) or (C,),
    target class indices (N,) or (); `weight` (C,) rescales each row's loss by weight[y]. p is 1 or 2."""
    if p not in (1, 2):
        raise ValueError(f"multi_margin_loss: p must be 1 or 2, got {p}")
    scores = input if input.ndim == 2 else input.reshape(1, -1)
    y = np.asarray(_data(target)).reshape(-1)
    n, c = scores.shape
    if input.ndim not in (1, 2) or y.shape != (n,):
        raise ShapeError(f"multi_margin_loss: input {input.shape} (N, C) or (C,) needs target (N,) or (); got "
                         f"{np.shape(_data(target))}")
    if ((y < 0) | (y >= c)).any():
        raise IndexError(f"multi_margin_loss: target {y[(y < 0) | (y >= c)][0]} is outside [0, {c})")
    rows = np.arange(n)
    z = (margin - scores[rows, y].unsqueeze(1) + scores).relu()                  # (N, C)
    others = np.ones((n, c), dtype=bool)
    others[rows, y] = False
    h = z if p == 1 else z * z
    h = scores._result(others, None).where(h, 0.0)
    if weight is not None:
        h = h * input._lift(weight)[y].unsqueeze(1)
    loss = h.sum(1) / c
    loss = loss if input.ndim == 2 else loss.reshape(())
    return reduced(loss, legacy_reduction(size_average, reduce, reduction), "multi_margin_loss")


def multilabel_margin_loss(input: Tensor, target, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """The multi-label hinge: Σ_j Σ_{i not a target} max(0, 1 − (x[y_j] − x[i])) / C per row. target
    (N, C) or (C,) integers: each row's target classes y_j first, ended by −1 (or by the row's end)."""
    scores = input if input.ndim == 2 else input.reshape(1, -1)
    y = np.asarray(_data(target)).reshape(scores.shape) if np.shape(_data(target)) == input.shape else None
    if input.ndim not in (1, 2) or y is None:
        raise ShapeError(f"multilabel_margin_loss: input {input.shape} (N, C) or (C,) needs target of the same "
                         f"shape, got {np.shape(_data(target))}")
    n, c = scores.shape
    counts = np.zeros((n, c))                        # how often each class is listed before the row's −1
    for row in range(n):
        for cls in y[row]:
            if cls < 0:
                break
            if cls >= c:
                raise IndexError(f"multilabel_margin_loss: target {cls} is outside [0, {c})")
            counts[row, cls] += 1
    pairs = counts[:, :, None] * (counts == 0)[:, None, :]           # (N, j target, i not a target)
    z = (1 - scores.unsqueeze(2) + scores.unsqueeze(1)).relu()       # 1 − x[j] + x[i]
    loss = (z * scores._result(pairs.astype(scores.dtype), None)).sum((1, 2)) / c
    loss = loss if input.ndim == 2 else loss.reshape(())
    return reduced(loss, legacy_reduction(size_average, reduce, reduction), "multilabel_margin_loss")


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """max(0, d(a, p) − d(a, n) + margin), d the pairwise p-distance: the anchor nearer its positive than its
    negative by the margin. swap=True uses min(d(a, n), d(p, n)) (Balntas et al. 2016). (N, D) or (D,)."""
    def distance(x1, x2):
        return pairwise_distance(x1, x2, p, eps)
    return _triplet(anchor, positive, negative, distance, margin, swap,
                    legacy_reduction(size_average, reduce, reduction), "triplet_margin_loss")


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *, distance_function=None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """triplet_margin_loss with any distance_function(x1, x2) -> (N,) (pairwise_distance when None)."""
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: margin must be > 0, got {margin}")
    return _triplet(anchor, positive, negative, distance_function or pairwise_distance, margin, swap, reduction,
                    "triplet_margin_with_distance_loss")


def _triplet(anchor, positive, negative, distance, margin, swap, reduction, op):
    if not anchor.shape == positive.shape == negative.shape or anchor.ndim not in (1, 2):
        raise ShapeError(f"{op}: anchor {anchor.shape}, positive {positive.shape} and negative {negative.shape} "
                         "must have the same shape, (N, D) or (D,)")
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance(positive, negative))
    return reduced((margin + d_pos - d_neg).clamp(min=0), reduction, op)


def _data(target):
    return target._data if isinstance(target, Tensor) else target


def _labels(input: Tensor, target, op: str) -> Tensor:
    y = input._lift(target)
    if y.shape != input.shape:
        raise ShapeError(f"{op}: input {input.shape} and target {y.shape} must have the same shape")
    return y
