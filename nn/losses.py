"""Losses as modules, `criterion = CrossEntropyLoss(); loss = criterion(logits, targets)`, each one call
into tinygrad_like.functional (same arguments, same numbers). The margin and embedding losses are in
nn/margin_losses.py.

The constructors take PyTorch's arguments in PyTorch's order, its deprecated `size_average` and `reduce`
included (folded into `reduction` as PyTorch folds them), so a PyTorch script's criterion builds here.
"""
from __future__ import annotations

from nn.module import Module
from tinygrad_like import Tensor
from tinygrad_like import functional as F
from tinygrad_like.dialect.losses import legacy_reduction, weighted_cross_entropy, weighted_nll_loss


class _Loss(Module):
    """A loss with a `reduction` ("mean", "sum" or "none"), set from PyTorch's arguments."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        self.reduction = legacy_reduction(size_average, reduce, reduction)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}" if self.reduction != "mean" else ""


class CrossEntropyLoss(_Loss):
    """logits (N, C) or (N, C, d1, ...) and class indices (N) or (N, d1, ...) (or class probabilities of the
    logits' shape) -> the cross-entropy; `weight` (C,) weighs each class, as PyTorch does."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None, reduction: str = "mean",
                 label_smoothing: float = 0.0):
        super().__init__(size_average, reduce, reduction)
        self.weight, self.ignore_index, self.label_smoothing = weight, ignore_index, label_smoothing

    def forward(self, input: Tensor, target) -> Tensor:
        if self.weight is not None:
            return weighted_cross_entropy(input, target, self.weight, self.ignore_index, self.reduction,
                                          self.label_smoothing)
        return F.cross_entropy(input, target, ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class NLLLoss(_Loss):
    """log-probabilities (N, C) or (N, C, d1, ...) and class indices -> −logp[target], weighted by `weight`."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input: Tensor, target) -> Tensor:
        if self.weight is not None:
            return weighted_nll_loss(input, target, self.weight, self.ignore_index, self.reduction)
        return F.nll_loss(input, target, ignore_index=self.ignore_index, reduction=self.reduction)


NLLLoss2d = NLLLoss   # PyTorch's old name for NLLLoss on (N, C, H, W), which NLLLoss takes


class MSELoss(_Loss):
    """(input − target)², reduced by `reduction` ("mean", "sum" or "none")."""

    def forward(self, input: Tensor, target) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """|input − target|."""

    def forward(self, input: Tensor, target) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """0.5·d²/β where |d| < β, |d| − β/2 elsewhere."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """0.5·d² where |d| < δ, δ(|d| − δ/2) elsewhere."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    """KL(target ‖ e^input), input holding log-probabilities (and target too with log_target=True);
    reduction="batchmean" gives the KL divergence averaged over the batch."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class GaussianNLLLoss(_Loss):
    """−log N(target; input, var) up to a constant; called as loss(input, target, var)."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target, var) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """−log Poisson(target; λ), λ = e^input (log_input=True) or input."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None, eps: float = 1e-8, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, input: Tensor, target) -> Tensor:
        return F.poisson_nll_loss(input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class BCELoss(_Loss):
    """Binary cross-entropy of probabilities in [0, 1]; `weight` rescales each element (broadcast)."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.weight = weight

    def forward(self, input: Tensor, target) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of σ(input), computed from the logits without overflow; pos_weight (C,) weighs
    the positive term of each class."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean", pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def forward(self, input: Tensor, target) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class CTCLoss(_Loss):
    """The CTC loss of log-probabilities (T, N, C) against label sequences; called as
    loss(log_probs, targets, input_lengths, target_lengths)."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets, input_lengths, target_lengths) -> Tensor:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)
