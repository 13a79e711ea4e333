"""torch.nn.functional.ctc_loss: the connectionist temporal classification loss (Graves et al. 2006,
https://www.cs.toronto.edu/~graves/icml_2006.pdf), −log of the total probability of every alignment of a
target sequence to the T steps of an output sequence, blanks between and around the labels.

One primitive, because the sum runs over exponentially many alignments: the forward variables α (the
log-probability of the prefixes of the blank-extended target ending at step t) and backward variables β
(of the suffixes) are computed by the usual recursions in log space, in numpy, and
∂(−log p)/∂logp[t, c] = −Σ_{s: l'_s = c} e^(α_t(s) + β_t(s) − logp[t, c]) / p. This is the gradient
with respect to log_probs as independent inputs (checked against finite differences); PyTorch's own backward
adds e^logp[t, c], which cancels through the log_softmax that always precedes it, so gradients with respect
to the logits are the same on both. No second derivative: the backward is numpy's, and asking for one
(create_graph=True) is an error rather than a silent zero.
"""
from __future__ import annotations

import numpy as np

from tinygrad_like.errors import ShapeError
from tinygrad_like.function import Function, state
from tinygrad_like.tensor import Tensor

__all__ = ["ctc_loss"]

_NEG = -np.inf


def _logsumexp(*terms: np.ndarray) -> np.ndarray:
    """log Σ e^terms elementwise, −inf where every term is −inf (no warning, no NaN)."""
    stacked = np.stack(terms)
    top = stacked.max(0)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):                      # log(0) = −inf is the answer where all terms are −inf
        return safe + np.log(np.exp(stacked - safe).sum(0))


def _alignments(lp: np.ndarray, label: np.ndarray, blank: int):
    """α and β (T, L) for one sample: lp (T, C) log-probabilities, label (S,), L = 2S + 1 extended positions."""
    ext = np.full(2 * len(label) + 1, blank)
    ext[1::2] = label
    steps, width = lp.shape[0], len(ext)
    skip = np.zeros(width, dtype=bool)                       # may s be reached from s − 2 (a label unlike the last)?
    skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
    emit = lp[:, ext]                                        # (T, L): log y_t(l'_s)
    alpha = np.full((steps, width), _NEG)
    alpha[0, :2] = emit[0, :2]
    for t in range(1, steps):
        prev = alpha[t - 1]
        one = np.concatenate(([_NEG], prev[:-1]))
        two = np.where(skip, np.concatenate(([_NEG, _NEG], prev[:-2])), _NEG)
        alpha[t] = emit[t] + _logsumexp(prev, one, two)
    beta = np.full((steps, width), _NEG)
    beta[-1, -2:] = emit[-1, -2:]
    skip_back = np.concatenate((skip[2:], [False, False]))    # may s reach s + 2?
    for t in range(steps - 2, -1, -1):
        nxt = beta[t + 1]
        one = np.concatenate((nxt[1:], [_NEG]))
        two = np.where(skip_back, np.concatenate((nxt[2:], [_NEG, _NEG])), _NEG)
        beta[t] = emit[t] + _logsumexp(nxt, one, two)
    return ext, alpha, beta


class CTCLoss(Function):
    """−log p(target | log_probs) per sample: log_probs (T, N, C) -> (N,). Options: the lengths and targets."""

    def forward(self, log_probs, targets=None, input_lengths=None, target_lengths=None, blank=0, zero_infinity=False):
        losses = np.zeros(log_probs.shape[1])
        self.grads = np.zeros(log_probs.shape, dtype=np.float64)
        for n, (labels, steps) in enumerate(zip(targets, input_lengths)):
            lp = log_probs[:steps, n].astype(np.float64)
            ext, alpha, beta = _alignments(lp, labels, blank)
            nll = -_logsumexp(alpha[-1, -1], alpha[-1, -2]) if len(ext) > 1 else -alpha[-1, -1]
            losses[n] = nll
            if not np.isfinite(nll):                              # no alignment fits: loss inf, gradient 0
                continue
            through = alpha + beta                                # log Σ over paths through (t, s), times y_t(l'_s)
            for c in np.unique(ext):
                at = _logsumexp(*through[:, ext == c].T) if (ext == c).sum() > 1 else through[:, ext == c][:, 0]
                self.grads[:steps, n, c] = -np.exp(at - lp[:, c] + nll)
        if zero_infinity:
            bad = ~np.isfinite(losses)
            losses[bad] = 0.0
            self.grads[:, bad] = 0.0
        return losses.astype(log_probs.dtype)

    def backward(self, grad, out):
        if state.grad_enabled:
            raise NotImplementedError("ctc_loss: no second derivative (its backward is computed in numpy); "
                                      "backward without create_graph=True")
        lp = self.parents[0]
        return grad.reshape(1, -1, 1) * lp._result(self.grads.astype(lp.dtype), None)


def _lengths(values, n: int, what: str) -> np.ndarray:
    lengths = np.asarray(values._data if isinstance(values, Tensor) else values, dtype=np.int64).reshape(-1)
    if lengths.shape != (n,):
        raise ShapeError(f"ctc_loss: {what} must hold one length per sample ({n},), got {lengths.shape}")
    return lengths


def ctc_loss(log_probs: Tensor, targets, input_lengths, target_lengths, blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> Tensor:
    """CTC loss of log_probs (T, N, C) (log_softmax over C; or (T, C) for one sample) against targets: padded
    (N, S) or concatenated (Σ target_lengths,), class indices without `blank`. input_lengths (N,) ≤ T and
    target_lengths (N,). reduction "mean": each loss divided by its target length, then the batch mean; "sum";
    "none" (N,). An impossible alignment (target too long for its input) is inf, or 0 with zero_infinity=True."""
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp.ndim != 3:
        raise ShapeError(f"ctc_loss: log_probs must be (T, N, C) or (T, C), got {log_probs.shape}")
    steps, n, classes = lp.shape
    if not 0 <= blank < classes:
        raise ValueError(f"ctc_loss: blank {blank} must be a class index in [0, {classes})")
    ins, outs = _lengths(input_lengths, n, "input_lengths"), _lengths(target_lengths, n, "target_lengths")
    if (ins > steps).any() or (ins < 1).any():
        raise ValueError(f"ctc_loss: input_lengths {ins.tolist()} must be in [1, {steps}] (T = {steps})")
    flat = np.asarray(targets._data if isinstance(targets, Tensor) else targets, dtype=np.int64)
    if unbatched or flat.ndim == 1:
        starts = np.concatenate(([0], np.cumsum(outs)[:-1]))
        if flat.ndim != 1 or flat.size < outs.sum():
            raise ShapeError(f"ctc_loss: concatenated targets {flat.shape} must hold Σ target_lengths = {outs.sum()}")
        labels = [flat[a:a + length] for a, length in zip(starts, outs)]
    else:
        if flat.shape[0] != n or (outs > flat.shape[1]).any():
            raise ShapeError(f"ctc_loss: padded targets {flat.shape} must be (N={n}, S >= max target length)")
        labels = [row[:length] for row, length in zip(flat, outs)]
    every = np.concatenate(labels) if labels else np.zeros(0, dtype=np.int64)
    if ((every < 0) | (every >= classes) | (every == blank)).any():
        raise ValueError(f"ctc_loss: target labels must be classes in [0, {classes}) other than blank {blank}")
    losses = CTCLoss.apply(lp, targets=labels, input_lengths=ins, target_lengths=outs, blank=blank,
                           zero_infinity=zero_infinity)
    if reduction == "none":
        return losses.reshape(()) if unbatched else losses
    if reduction == "sum":
        return losses.sum()
    if reduction == "mean":
        return (losses / lp._result(np.maximum(outs, 1).astype(lp.dtype), None)).mean()
    raise ValueError(f"ctc_loss: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
