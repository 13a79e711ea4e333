"""torch.nn.functional's ops by their PyTorch names and arguments: `import tinygrad_like.functional as F`
(that module is this one's public address).

Thin wrappers over the Tensor methods where one exists (one implementation each): cross_entropy and
nll_loss take (N, C) or (N, C, d1, ...) inputs with (N) or (N, d1, ...) targets, as PyTorch does;
the other losses take `reduction` = "mean" (default), "sum" or "none". Binary cross-entropy is an op
of its own here, because PyTorch floors its logs at -100 and we match its numbers.
"""
from __future__ import annotations

import math

import numpy as np

from tinygrad_like.composites import reduced
from tinygrad_like.function import Function
from tinygrad_like.tensor import Tensor

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy", "gelu", "log_softmax",
           "logsumexp", "mse_loss", "nll_loss", "one_hot", "pad", "softmax", "softplus"]


def cross_entropy(input: Tensor, target, ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """torch.nn.functional.cross_entropy: Tensor.cross_entropy, with PyTorch's argument order."""
    return input.cross_entropy(target, reduction=reduction, label_smoothing=label_smoothing,
                               ignore_index=ignore_index)


def nll_loss(input: Tensor, target, ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """torch.nn.functional.nll_loss: Tensor.nll_loss, with PyTorch's argument order."""
    return input.nll_loss(target, ignore_index=ignore_index, reduction=reduction)


def log_softmax(input: Tensor, dim: int = -1) -> Tensor:
    return input.log_softmax(dim)


def softmax(input: Tensor, dim: int = -1) -> Tensor:
    return input.softmax(dim)


def logsumexp(input: Tensor, dim: int = -1, keepdim: bool = False) -> Tensor:
    return input.logsumexp(dim, keepdim)

_LOG_FLOOR = -100.0  # PyTorch clamps BCE's logs at -100, so a confident wrong answer costs 100, not inf


def _same_shape(input: Tensor, target, op: str) -> Tensor:
    target = input._lift(target)
    if target.shape != input.shape:  # PyTorch broadcasts with a warning; a silent wrong loss is worse
        raise ValueError(f"{op}: input {input.shape} and target {target.shape} must have the same shape")
    return target


def mse_loss(input: Tensor, target, reduction: str = "mean") -> Tensor:
    """(input - target)², reduced; input and target of the same shape."""
    diff = input - _same_shape(input, target, "mse_loss")
    return reduced(diff * diff, reduction, "mse_loss")


class BinaryCrossEntropy(Function):
    """-(y log p + (1 - y) log(1 - p)) elementwise, each log floored at -100 as PyTorch does.
    The floor makes p = 0 or 1 finite, where the plain composition's gradient would be 0·∞ = NaN;
    the backward is PyTorch's: (p - y) / max(p(1 - p), 1e-12) for p, log(1-p) - log(p) for y
    (floored too: finite where PyTorch's is ±inf, at p = 0 or 1)."""
    def forward(self, p, y):
        with np.errstate(divide="ignore"):                # log(0) = -inf, floored at -100 right below
            log_p, log_q = np.log(p), np.log(1 - p)
        return -(y * np.maximum(log_p, _LOG_FLOOR) + (1 - y) * np.maximum(log_q, _LOG_FLOOR))
    def backward(self, grad, out):
        p, y = self.parents
        gp = grad * (p - y) / (p * (1 - p)).maximum(1e-12) if p.requires_grad else None
        tiny = math.exp(_LOG_FLOOR)                         # log(max(p, e^-100)) is the floored log, no log(0)
        gy = grad * ((1 - p).maximum(tiny).log() - p.maximum(tiny).log()) if y.requires_grad else None
        return gp, gy


def binary_cross_entropy(input: Tensor, target, weight=None, reduction: str = "mean") -> Tensor:
    """Loss of probabilities `input` in [0, 1] against targets in [0, 1] (same shape); `weight`
    rescales each element's loss (broadcast). For raw scores use binary_cross_entropy_with_logits."""
    target = _same_shape(input, target, "binary_cross_entropy")
    if ((input._data < 0) | (input._data > 1)).any():
        raise ValueError(f"binary_cross_entropy: input (shape {input.shape}) must hold probabilities in [0, 1]; "
                         "for scores use binary_cross_entropy_with_logits")
    loss = BinaryCrossEntropy.apply(input, target)
    return reduced(loss if weight is None else loss * weight, reduction, "binary_cross_entropy")


def binary_cross_entropy_with_logits(input: Tensor, target, weight=None, reduction: str = "mean",
                                     pos_weight=None) -> Tensor:
    """BCE of σ(input) against target, without computing σ: (1 - y)·x + l·softplus(-x), with
    l = 1 + (pos_weight - 1)·y (l = 1 without pos_weight). softplus never overflows, so logits of
    ±1e4 give the exact loss (1e4 for a confident wrong answer) and a finite gradient."""
    y = _same_shape(input, target, "binary_cross_entropy_with_logits")
    log_one_plus = (-input).softplus(threshold=math.inf)                  # -log σ(x)
    scale = 1 if pos_weight is None else 1 + (input._lift(pos_weight) - 1) * y
    loss = (1 - y) * input + scale * log_one_plus
    return reduced(loss if weight is None else loss * weight, reduction, "binary_cross_entropy_with_logits")


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """GELU x·Φ(x). approximate="none" (PyTorch's default) is exact: 0.5·x·(1 + erf(x/√2));
    "tanh" is GPT-2's approximation, what Tensor.gelu() computes."""
    return input.gelu(approximate)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + e^(βx)) / β, stable at any x (see Tensor.softplus)."""
    return input.softplus(beta, threshold)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 (..., num_classes) from integer class indices (...) (see Tensor.one_hot)."""
    return tensor.one_hot(num_classes)


_NUMPY_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad(input: Tensor, pad: tuple, mode: str = "constant", value: float | None = None) -> Tensor:
    """Padding in pairs from the last dimension backwards (left, right, then top, bottom, ...). mode
    "constant" fills with `value` (0 when None; Tensor.pad, a negative amount crops); "reflect" mirrors the
    edge without repeating it (needs amounts < the dimension's size), "replicate" repeats the edge entry,
    "circular" wraps around (amounts <= the size). The last three read the input with one index array per
    padded dimension, so each padded entry's gradient goes back to the entry it copies."""
    if mode == "constant":
        return input.pad(pad, 0.0 if value is None else value)
    if mode not in _NUMPY_MODES:
        raise ValueError(f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got {mode!r}")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2 or len(pad) // 2 >= input.ndim:
        raise ValueError(f"pad: mode {mode!r} pads at most the last {input.ndim - 1} dimensions of shape {input.shape} "
                         f"(pairs (left, right) from the last), got {pad}")
    out = input
    for i in range(len(pad) // 2):
        dim, (before, after) = input.ndim - 1 - i, pad[2 * i:2 * i + 2]
        n = input.shape[dim]
        limit = n - 1 if mode == "reflect" else n if mode == "circular" else None
        if min(before, after) < 0 or (limit is not None and max(before, after) > limit):
            raise ValueError(f"pad: mode {mode!r} needs amounts in [0, {limit}] for dimension {dim} of size {n}, "
                             f"got ({before}, {after})")
        index = np.pad(np.arange(n), (before, after), mode=_NUMPY_MODES[mode])
        out = out[(slice(None),) * dim + (index,)]
    return out
