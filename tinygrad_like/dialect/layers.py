"""torch.nn.functional's layers with weights passed in: bilinear, embedding (with padding_idx, max_norm and
scale_grad_by_freq), embedding_bag (sums, means or maxima of bags of rows), alpha_dropout, and
linear_cross_entropy, by PyTorch's names and arguments, composed of engine ops.

`sparse=True` (sparse gradients for the table) is refused: the engine's gradients are dense arrays.
"""
from __future__ import annotations

import math

import numpy as np

from tinygrad_like import random as _random
from tinygrad_like.dialect.losses import weighted_cross_entropy
from tinygrad_like.errors import ShapeError
from tinygrad_like.tensor import Tensor

__all__ = ["alpha_dropout", "bilinear", "dropout1d", "dropout2d", "dropout3d", "embedding", "embedding_bag",
           "embedding_renorm_", "feature_alpha_dropout", "linear_cross_entropy"]


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias=None) -> Tensor:
    """y_k = x1ᵀ A_k x2 + b_k: input1 (..., in1), input2 (..., in2), weight (out, in1, in2), bias (out,)
    -> (..., out). Written as x1 times A laid out (in1, out·in2), then summed against x2."""
    out, in1, in2 = weight.shape if weight.ndim == 3 else (None, None, None)
    fits = input1.shape[-1:] == (in1,) and input2.shape[-1:] == (in2,) and input1.shape[:-1] == input2.shape[:-1]
    if out is None or not fits:
        raise ShapeError(f"bilinear: input1 {input1.shape} and input2 {input2.shape} must be (..., in1) and "
                         f"(..., in2) with the same leading dimensions, weight {weight.shape} (out, in1, in2)")
    t = (input1 @ weight.permute(1, 0, 2).reshape(in1, out * in2)).reshape(*input1.shape[:-1], out, in2)
    y = (t * input2.unsqueeze(-2)).sum(-1)                                          # (..., out)
    return y if bias is None else y + bias


def _ids(input, weight: Tensor, op: str) -> np.ndarray:
    ids = np.asarray(input._data if isinstance(input, Tensor) else input)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got dtype {ids.dtype}")
    bad = ids[(ids < 0) | (ids >= weight.shape[0])]
    if bad.size:
        raise IndexError(f"{op}: index {bad.flat[0]} is outside the table of {weight.shape[0]} rows")
    return ids


def _no_sparse(sparse: bool, op: str) -> None:
    if sparse:
        raise NotImplementedError(f"{op}: sparse=True is not provided: the engine's gradients are dense numpy arrays "
                                  "(leave sparse=False; the gradient is the same, stored densely)")


def embedding_renorm_(weight: Tensor, indices, max_norm: float, norm_type: float = 2.0) -> Tensor:
    """Rows `indices` of weight whose norm_type-norm exceeds max_norm scaled, in place and outside the graph,
    to norm max_norm (by max_norm / (norm + 1e-7), as PyTorch). Returns weight."""
    rows = np.unique(_ids(indices, weight, "embedding_renorm_"))
    norms = np.linalg.norm(weight._data[rows].astype(np.float64), ord=norm_type, axis=-1)
    big = norms > max_norm
    weight._data[rows[big]] *= (max_norm / (norms[big] + 1e-7))[:, None].astype(weight.dtype)
    return weight


def _rows(ids: np.ndarray, weight: Tensor, padding_idx, max_norm, norm_type: float, scale_grad_by_freq: bool):
    """weight[ids] with embedding's options: rows renormed first (max_norm), no gradient to the padding row,
    each row's gradient divided by how often its id occurs in ids (scale_grad_by_freq)."""
    if max_norm is not None:
        embedding_renorm_(weight, ids, max_norm, norm_type)
    rows = weight[ids]
    if scale_grad_by_freq and ids.size:
        _, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
        share = rows._result((1.0 / counts[inverse]).reshape(*ids.shape, 1).astype(weight.dtype), None)
        rows = rows * share + (rows * (1 - share)).detach()          # the same value, the gradient divided
    if padding_idx is not None:
        rows = rows._result((ids == padding_idx)[..., None], None).where(rows.detach(), rows)
    return rows


def _padding(padding_idx, weight: Tensor, op: str):
    if padding_idx is None:
        return None
    if not -weight.shape[0] <= padding_idx < weight.shape[0]:
        raise ValueError(f"{op}: padding_idx {padding_idx} must be within the table of {weight.shape[0]} rows")
    return padding_idx % weight.shape[0]


def embedding(input, weight: Tensor, padding_idx=None, max_norm=None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows `input` (integer indices (...)) of weight (num_embeddings, dim): (..., dim). padding_idx: that
    row gets no gradient; max_norm: the rows looked up are first renormed in place to at most that norm;
    scale_grad_by_freq: each row's gradient divided by its id's count in input."""
    _no_sparse(sparse, "embedding")
    ids = _ids(input, weight, "embedding")
    return _rows(ids, weight, _padding(padding_idx, weight, "embedding"), max_norm, norm_type, scale_grad_by_freq)


def embedding_bag(input, weight: Tensor, offsets=None, max_norm=None, norm_type: float = 2, scale_grad_by_freq=False,
                  mode: str = "mean", sparse: bool = False, per_sample_weights=None, include_last_offset: bool = False,
                  padding_idx=None) -> Tensor:
    """The sum, mean or max of each bag of rows of weight (num_embeddings, dim): (B, dim). Bags: the rows of
    input (B, L), or input (n,) cut at offsets (B,) (the starts; with include_last_offset, B + 1 entries,
    the last being n). per_sample_weights (input's shape) scale each row (mode "sum" only); rows of
    padding_idx are left out (and not counted by "mean"); an empty bag gives zeros."""
    _no_sparse(sparse, "embedding_bag")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    ids = _ids(input, weight, "embedding_bag")
    if ids.ndim == 2:
        if offsets is not None:
            raise ValueError(f"embedding_bag: offsets must be None when input is 2-D {ids.shape} (each row is a bag)")
        starts = np.arange(ids.shape[0]) * ids.shape[1]
    elif ids.ndim == 1 and offsets is not None:
        starts = np.asarray(offsets._data if isinstance(offsets, Tensor) else offsets).reshape(-1)
        if include_last_offset:
            starts = starts[:-1]
        if starts.size and (starts[0] != 0 or np.any(np.diff(starts) < 0) or starts[-1] > ids.size):
            raise ValueError(f"embedding_bag: offsets {starts.tolist()} must start at 0 and not decrease, within "
                             f"the {ids.size} indices")
    else:
        raise ShapeError(f"embedding_bag: input {ids.shape} must be 2-D (B, L), or 1-D with offsets")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights are only for mode='sum' (as in PyTorch), got "
                                  f"mode={mode!r}")
    flat = ids.reshape(-1)
    bag = np.searchsorted(starts, np.arange(flat.size), side="right") - 1          # each index's bag
    keep = np.ones(flat.size, dtype=bool) if padding_idx is None else flat != _padding(padding_idx, weight,
                                                                                        "embedding_bag")
    rows = _rows(flat, weight, None, max_norm, norm_type, scale_grad_by_freq)       # (n, dim)
    n_bags = len(starts)
    if mode == "max":
        out = [rows[np.nonzero((bag == b) & keep)[0]].max(0).values if ((bag == b) & keep).any()
               else rows._result(np.zeros(weight.shape[1], dtype=weight.dtype), None) for b in range(n_bags)]
        return Tensor.stack(*out) if out else rows._result(np.zeros((0, weight.shape[1]), weight.dtype), None)
    member = (bag[None, :] == np.arange(n_bags)[:, None]) & keep[None, :]          # (B, n)
    if mode == "mean":
        member = member / np.maximum(member.sum(1, keepdims=True), 1)
    mix = rows._result(member.astype(weight.dtype), None)
    if per_sample_weights is not None:
        psw = per_sample_weights if isinstance(per_sample_weights, Tensor) else Tensor(per_sample_weights)
        if psw.shape != ids.shape:
            raise ShapeError(f"embedding_bag: per_sample_weights {psw.shape} must have input's shape {ids.shape}")
        mix = mix * psw.reshape(1, -1)
    return mix @ rows                                                                 # (B, dim)


# SELU's saturation value −scale·α: where alpha dropout sends a dropped unit
_SELU_FLOOR = -1.0507009873554804934193349852946 * 1.6732632423543772848170429916717


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout for SELU networks (Klambauer et al. 2017): while training, each entry is set with probability p
    to SELU's floor −λα, then all are scaled and shifted (a·x + b) so that a zero-mean unit-variance input
    keeps its mean and variance. The identity when not training."""
    if not 0 <= p <= 1:
        raise ValueError(f"alpha_dropout: p must be in [0, 1], got {p}")
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0.0
    keep = input._result(_random.bernoulli(1 - p, input.shape).astype(input.dtype), None)
    a = 1 / math.sqrt((1 - p) * (1 + p * _SELU_FLOOR ** 2))
    b = -a * _SELU_FLOOR * p
    return (input * keep + _SELU_FLOOR * (1 - keep)) * a + b


def _channel_mask(input: Tensor, p: float, op: str) -> np.ndarray:
    """1 (kept, probability 1 − p) or 0 per channel: shape (N, C, 1, ...), broadcast over each channel's entries."""
    if not 0 <= p <= 1:
        raise ValueError(f"{op}: p must be in [0, 1], got {p}")
    if input.ndim < 2:
        raise ShapeError(f"{op}: input {input.shape} must be (N, C, ...) or (C, ...), channels before positions")
    shape = input.shape[:2] + (1,) * (input.ndim - 2)
    return _random.bernoulli(1 - p, shape).astype(input.dtype)


def _feature_dropout(input: Tensor, p: float, training: bool, op: str) -> Tensor:
    """Whole channels zeroed with probability p, the rest scaled by 1/(1 − p) (Tompson et al. 2015): for
    feature maps whose neighbouring entries are correlated, where dropping entries one by one does little."""
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0.0
    return input * input._result(_channel_mask(input, p, op) / (1 - p), None)


def _dropout_nd(input: Tensor, p: float, training: bool, spatial: int, op: str) -> Tensor:
    """dropout1d/2d/3d: input (N, C, *spatial) or, unbatched, (C, *spatial)."""
    if input.ndim not in (spatial + 1, spatial + 2):
        raise ShapeError(f"{op}: input {input.shape} must be (N, C, {spatial} positions) or (C, {spatial} positions)")
    if not training or p == 0:
        return input
    if input.ndim == spatial + 1:                                # unbatched: its channels are dimension 0
        return _feature_dropout(input.unsqueeze(0), p, training, op).squeeze(0)
    return _feature_dropout(input, p, training, op)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout of (N, C, L) or (C, L)."""
    return _dropout_nd(input, p, training, 1, "dropout1d")


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout of (N, C, H, W) or (C, H, W)."""
    return _dropout_nd(input, p, training, 2, "dropout2d")


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout of (N, C, D, H, W) or (C, D, H, W)."""
    return _dropout_nd(input, p, training, 3, "dropout3d")


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """alpha_dropout by whole channels: a dropped channel is set to SELU's floor, then all are scaled and
    shifted to keep mean and variance."""
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0.0
    keep = input._result(_channel_mask(input, p, "feature_alpha_dropout"), None)
    a = 1 / math.sqrt((1 - p) * (1 + p * _SELU_FLOOR ** 2))
    return (input * keep + _SELU_FLOOR * (1 - keep)) * a - a * _SELU_FLOOR * p


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target, *, linear_bias=None, weight=None,
                         reduction: str = "mean", ignore_index=None, label_smoothing: float = 0.0,
                         options=None) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...): the logits of a classifier head
    and their loss in one call. linear_weight (C, in), or (C, d1, ..., dK, in) for logits (N, C, d1, ..., dK);
    linear_bias (C,) or (C, d1, ..., dK). PyTorch's `options` choose a chunked computation that never holds all
    the logits (for large vocabularies); the engine computes the logits whole, with the same value."""
    classes = linear_weight.shape[:-1]
    flat_bias = None if linear_bias is None else linear_bias.reshape(-1)
    logits = input.linear(linear_weight.reshape(-1, linear_weight.shape[-1]), flat_bias)
    logits = logits.reshape(*input.shape[:-1], *classes) if len(classes) > 1 else logits
    ignore_index = -100 if ignore_index is None else ignore_index
    if weight is not None:
        return weighted_cross_entropy(logits, target, weight, ignore_index, reduction, label_smoothing)
    return logits.cross_entropy(target, reduction=reduction, label_smoothing=label_smoothing, ignore_index=ignore_index)
