"""Losses as modules, `criterion = CrossEntropyLoss(); loss = criterion(logits, targets)`, each one call
into tinygrad_like.functional (same arguments, same numbers)."""
from __future__ import annotations

from nn.module import Module
from tinygrad_like import Tensor
from tinygrad_like import functional as F


class CrossEntropyLoss(Module):
    """logits (N, C) or (N, C, d1, ...) and class indices (N) or (N, d1, ...) -> the cross-entropy."""

    def __init__(self, ignore_index: int = -100, reduction: str = "mean", label_smoothing: float = 0.0):
        self.ignore_index, self.reduction, self.label_smoothing = ignore_index, reduction, label_smoothing

    def forward(self, input: Tensor, target) -> Tensor:
        return F.cross_entropy(input, target, ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class MSELoss(Module):
    """(input − target)², reduced by `reduction` ("mean", "sum" or "none")."""

    def __init__(self, reduction: str = "mean"):
        self.reduction = reduction

    def forward(self, input: Tensor, target) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)
