"""torch.nn.functional's regression and likelihood losses by PyTorch's names and arguments: l1, smooth L1,
Huber, KL divergence, Gaussian and Poisson negative log-likelihoods, and the class weights of nll_loss and
cross_entropy. Each is the loss per element composed of engine ops (so its gradient comes for free), then
`reduced` by "mean", "sum" or "none". The margin losses are in margin_losses.py.

PyTorch's deprecated `size_average` and `reduce` are folded into `reduction` as PyTorch folds them
(`legacy_reduction`). Where a loss reads a logarithm that can be of 0 (kl_div's target, poisson's full
term), the log reads a safe value there and `where` puts the limit (0), so no numpy warning and no NaN.
"""
from __future__ import annotations

import math

import numpy as np

from tinygrad_like.composites import class_targets, reduced
from tinygrad_like.errors import ShapeError
from tinygrad_like.tensor import Tensor

__all__ = ["gaussian_nll_loss", "huber_loss", "kl_div", "l1_loss", "poisson_nll_loss", "smooth_l1_loss"]


def legacy_reduction(size_average, reduce, reduction: str) -> str:
    """PyTorch's deprecated pair as a `reduction`: reduce=False is "none", else size_average=False is "sum",
    else "mean" (either left None counts as True); both None leaves `reduction` as given."""
    if size_average is None and reduce is None:
        return reduction
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


def _target(input: Tensor, target, op: str) -> Tensor:
    target = input._lift(target)
    if target.shape != input.shape:   # PyTorch broadcasts with a warning; a silently wrong loss is worse
        raise ShapeError(f"{op}: input {input.shape} and target {target.shape} must have the same shape")
    return target


def weighted(loss: Tensor, weight, reduction: str, op: str, weighted_mean: bool = False) -> Tensor:
    """loss times `weight`, one weight per element (input's shape, as PyTorch requires), reduced; with
    weighted_mean, "mean" is Σ w·loss / Σ w (PyTorch's l1_loss and mse_loss; its huber_loss takes the plain mean)."""
    if weight is None:
        return reduced(loss, reduction, op)
    weight = loss._lift(weight)
    if weight.shape != loss.shape:
        raise ShapeError(f"{op}: weight {weight.shape} must have the input's shape {loss.shape}")
    if reduction == "mean" and weighted_mean:
        return (loss * weight).sum() / weight.sum()
    return reduced(loss * weight, reduction, op)


def l1_loss(input: Tensor, target, size_average=None, reduce=None, reduction: str = "mean", weight=None) -> Tensor:
    """|input − target|, times `weight` (input's shape) when given, reduced ("mean": Σ w·|d| / Σ w)."""
    diff = input - _target(input, target, "l1_loss")
    return weighted(diff.abs(), weight, legacy_reduction(size_average, reduce, reduction), "l1_loss", True)


def smooth_l1_loss(input: Tensor, target, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """0.5·d²/β where |d| < β, |d| − β/2 elsewhere (d = input − target): quadratic near 0, L1 beyond β
    (Fast R-CNN's box loss). β = 0 is the L1 loss."""
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be >= 0, got {beta}")
    d = (input - _target(input, target, "smooth_l1_loss")).abs()
    loss = d if beta == 0 else (d < beta).where(d * d * (0.5 / beta), d - 0.5 * beta)
    return reduced(loss, legacy_reduction(size_average, reduce, reduction), "smooth_l1_loss")


def huber_loss(input: Tensor, target, reduction: str = "mean", delta: float = 1.0, weight=None) -> Tensor:
    """0.5·d² where |d| < δ, δ(|d| − δ/2) elsewhere: smooth_l1_loss(β = δ) times δ."""
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be > 0, got {delta}")
    d = (input - _target(input, target, "huber_loss")).abs()
    loss = (d < delta).where(d * d * 0.5, (d - 0.5 * delta) * delta)
    return weighted(loss, weight, reduction, "huber_loss")


def kl_div(input: Tensor, target, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """KL(target ‖ exp(input)) per element, input holding log-probabilities: target·(log target − input),
    0 where target = 0; with log_target, target holds log-probabilities too: e^target·(target − input).
    reduction "batchmean" (the true KL divergence of each row, averaged over the batch) divides the sum
    by input.shape[0]; "mean" divides by the number of elements, as PyTorch does. Where target = 0 the
    target's gradient (log 0 = −∞) is 0 here; PyTorch's is NaN."""
    target = _target(input, target, "kl_div")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        loss = positive.where(target * (positive.where(target, 1.0).log() - input), 0.0)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return reduced(loss, reduction, "kl_div")


def gaussian_nll_loss(input: Tensor, target, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """−log N(target; input, var) up to a constant: 0.5·(log var + (input − target)²/var), plus 0.5·log 2π
    with full=True. var: input's shape, or one variance per row (input's shape with the last dimension 1 or
    left out; homoscedastic), or a number. var is floored at eps for the value only (its gradient passes
    as if unfloored, as in PyTorch)."""
    target = input._lift(target)
    var = input._lift(var)
    if var.ndim == input.ndim - 1 and var.shape == input.shape[:-1]:
        var = var.unsqueeze(-1)
    elif not (var.shape == input.shape or var.ndim == 0 or (var.shape[:-1] == input.shape[:-1] and var.shape[-1] == 1)):
        raise ShapeError(f"gaussian_nll_loss: var {var.shape} must have input's shape {input.shape}, or it with the "
                         "last dimension 1 or left out")
    if (var._data < 0).any():
        raise ValueError("gaussian_nll_loss: var has a negative entry; variances are >= 0")
    var = var + (var.clamp(min=eps) - var).detach()                 # the floor, without touching the gradient
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduced(loss, reduction, "gaussian_nll_loss")


def poisson_nll_loss(input: Tensor, target, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean") -> Tensor:
    """−log Poisson(target; λ) up to log(target!): λ − target·log λ, with λ = e^input (log_input=True:
    e^input − target·input) or λ = input (input − target·log(input + eps)). full=True adds Stirling's
    log(target!) ≈ target·log target − target + 0.5·log(2π·target), where target > 1 (0 elsewhere)."""
    target = _target(input, target, "poisson_nll_loss")
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        big = target > 1
        t = big.where(target, 2.0)                                        # a safe value where the term is 0
        loss = loss + big.where(t * t.log() - t + 0.5 * (2 * math.pi * t).log(), 0.0)
    return reduced(loss, legacy_reduction(size_average, reduce, reduction), "poisson_nll_loss")


def weighted_nll_loss(logp: Tensor, target, weight, ignore_index: int = -100, reduction: str = "mean",
                      op: str = "nll_loss") -> Tensor:
    """nll_loss with class weights w (C,): −w[y]·logp[y] per position, "mean" dividing by Σ w[y] over the
    positions kept (PyTorch's weighted mean). logp (N, C) or (N, C, d1, ...), classes on axis 1."""
    classes_last = logp if logp.ndim <= 2 else logp.permute(0, *range(2, logp.ndim), 1)
    weight = logp._lift(weight)
    n_class = classes_last.shape[-1]
    if weight.shape != (n_class,):
        raise ShapeError(f"{op}: weight {weight.shape} must hold one weight per class ({n_class},)")
    targets, flat, rows = class_targets(classes_last, target, ignore_index, reduction, op, "input", logp.shape)
    kept = flat[rows]
    picked = -classes_last.reshape(-1, n_class)[rows, kept] * weight[kept]     # (M,)
    if reduction == "none":                                                     # 0 at ignored positions
        every = logp._result(np.zeros(flat.shape, dtype=logp.dtype), None)
        return every.scatter_add(0, rows, picked).reshape(targets.shape)
    if reduction == "sum" or not len(rows):                                    # nothing kept: 0, as nll_loss
        return picked.sum()
    return picked.sum() / weight[kept].sum()


def weighted_cross_entropy(input: Tensor, target, weight, ignore_index: int = -100, reduction: str = "mean",
                           label_smoothing: float = 0.0) -> Tensor:
    """cross_entropy with class weights w (C,), as PyTorch weighs it. Class indices: the weighted nll_loss of
    log_softmax, and with smoothing ε, (1 − ε)·that + ε/C·Σ_c −w_c·logp_c per position ("mean" divides both
    by Σ w[y] over the positions kept). Class probabilities p: −Σ_c w_c·p_c·logp_c per position, averaged
    over the positions."""
    classes = 1 if input.ndim > 1 else 0
    logp = input.log_softmax(classes)
    w = input._lift(weight)
    n_class = input.shape[classes]
    if w.shape != (n_class,):
        raise ShapeError(f"cross_entropy: weight {w.shape} must hold one weight per class ({n_class},)")
    w_along = w.reshape(n_class, *([1] * (input.ndim - 2))) if classes else w       # broadcast on the class axis
    probs = np.asarray(target._data if isinstance(target, Tensor) else target)
    if probs.dtype.kind == "f" and probs.shape == input.shape:
        p = input._lift(target)
        if label_smoothing:
            p = (1 - label_smoothing) * p + label_smoothing / n_class
        return reduced(-(logp * p * w_along).sum(classes), reduction, "cross_entropy")
    nll = weighted_nll_loss(logp, target, w, ignore_index, reduction, "cross_entropy")
    if not label_smoothing:
        return nll
    keep = probs != ignore_index
    smooth = input._result(keep, None).where(-(logp * w_along).sum(classes), 0.0)     # (N, d1, ...)
    if reduction == "none":
        total = smooth
    elif reduction == "sum" or not keep.any():
        total = smooth.sum()
    else:
        total = smooth.sum() / w[probs[keep]].sum()
    return (1 - label_smoothing) * nll + (label_smoothing / n_class) * total
