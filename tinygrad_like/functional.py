"""PyTorch's functional losses by their PyTorch names and arguments: `import tinygrad_like.functional as F`.

Thin wrappers over the Tensor methods (one implementation each): cross_entropy and nll_loss take
(N, C) or (N, C, d1, ...) inputs with (N) or (N, d1, ...) targets, as torch.nn.functional does.
"""
from __future__ import annotations

import numpy as np

from tinygrad_like.tensor import Tensor

__all__ = ["cross_entropy", "log_softmax", "logsumexp", "nll_loss", "softmax"]


def _class_last(x: Tensor) -> Tensor:
    """(N, C, d1, ...) -> (N, d1, ..., C): PyTorch keeps classes on axis 1, our losses on the last axis."""
    return x if x.ndim <= 2 else x.permute(0, *range(2, x.ndim), 1)


def cross_entropy(input: Tensor, target, ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """torch.nn.functional.cross_entropy for class-index targets: logsumexp(x) − x[target] per position,
    with label smoothing ε mixing in ε·(logsumexp(x) − mean(x)). input (C,), (N, C) or (N, C, d1, ...)
    logits; target () / (N) / (N, d1, ...) integers. reduction "mean" | "sum" | "none". (Class
    weights, and probability targets, are not supported.)"""
    return _class_last(input).sparse_categorical_crossentropy(
        target, ignore_index=ignore_index, reduction=reduction, label_smoothing=label_smoothing)


def nll_loss(input: Tensor, target, ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """torch.nn.functional.nll_loss: −input[target] per position, for input already log-probabilities
    (e.g. from log_softmax). input (N, C) or (N, C, d1, ...); target (N) or (N, d1, ...) integers."""
    logp = _class_last(input)
    targets = np.asarray(target.data if isinstance(target, Tensor) else target)
    n_class = logp.shape[-1]
    if targets.shape != logp.shape[:-1]:
        raise ValueError(f"nll_loss: input {input.shape} needs target of shape {logp.shape[:-1]}, got {targets.shape}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"nll_loss: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    flat = targets.reshape(-1)
    rows = np.nonzero(flat != ignore_index)[0]
    bad = flat[rows][(flat[rows] < 0) | (flat[rows] >= n_class)]
    if bad.size:
        raise IndexError(f"nll_loss: target {bad[0]} is outside [0, {n_class})")
    if reduction == "none":                                                   # 0 at ignored positions
        keep = Tensor._make(flat != ignore_index, None)
        every = -logp.reshape(-1, n_class)[np.arange(len(flat)), np.where(keep.data, flat, 0)]
        return keep.where(every, 0.0).reshape(targets.shape)
    picked = -logp.reshape(-1, n_class)[rows, flat[rows]]                      # (M,)
    return picked.sum() if reduction == "sum" else picked.sum() / max(len(rows), 1)


def log_softmax(input: Tensor, dim: int = -1) -> Tensor:
    return input.log_softmax(dim)


def softmax(input: Tensor, dim: int = -1) -> Tensor:
    return input.softmax(dim)


def logsumexp(input: Tensor, dim: int = -1, keepdim: bool = False) -> Tensor:
    return input.logsumexp(dim, keepdim)
