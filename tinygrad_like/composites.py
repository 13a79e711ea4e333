"""The composite ops of neural networks, each written once from primitive ops: GELU, SiLU, SwiGLU, linear,
softmax, log_softmax, layernorm, RMSNorm, cross-entropy, attention and multi-head attention.

Each composite is a plain function of Tensors (registered by name with `dispatch.composite`): its graph
shows how it works, and its gradient comes from the primitives' rules. `CompositeMixin` gives Tensor
the methods (x.softmax(), x.layernorm(), ...): each checks its arguments and calls `dispatch.run`,
which runs the composite, or the fast path's fused op registered for it (tinygrad_like/fast/) while
the fast path is on. tests/test_fused.py proves each fused op equal to the composite below.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from tinygrad_like import ops
from tinygrad_like import random as _random
from tinygrad_like.dispatch import composite, run
from tinygrad_like.errors import ShapeError

if TYPE_CHECKING:
    from tinygrad_like.tensor import Tensor

GELU_C = math.sqrt(2 / math.pi)

# ---------------------------------------------------------------- the composites

@composite("gelu")
def gelu(x: Tensor) -> Tensor:
    """½x(1 + tanh(√(2/π)(x + 0.044715x³)))."""
    return 0.5 * x * (1 + (GELU_C * (x + 0.044715 * x ** 3)).tanh())


@composite("gelu_erf")
def gelu_erf(x: Tensor) -> Tensor:
    """x·Φ(x) = ½x(1 + erf(x/√2)), the exact GELU (PyTorch's default)."""
    return 0.5 * x * (1 + (x * (1 / math.sqrt(2))).erf())


@composite("silu")
def silu(x: Tensor) -> Tensor:
    """x·σ(x), the SiLU (swish)."""
    return x * x.sigmoid()


@composite("swiglu")
def swiglu(x: Tensor) -> Tensor:
    """silu(gate)·up, the gate and the up projection side by side in x (..., 2n): (..., n)."""
    n = x.shape[-1] // 2
    gate, up = x[..., :n], x[..., n:]                                         # (..., n) each
    return gate.silu() * up


@composite("linear")
def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x (..., in) @ Wᵀ (in, out) + b (out,)."""
    y = x @ weight.T
    return y if bias is None else y + bias


def nothing_to_normalise(x: Tensor) -> Tensor:
    """softmax, log_softmax, layernorm or rmsnorm of an x with no numbers (an axis of length 0): empty,
    shaped like x, as in PyTorch, where the formulas would take the max of no numbers (an error) or their
    mean (0/0). Its gradient is empty too."""
    return x * 1


@composite("softmax")
def softmax(x: Tensor, axis: int) -> Tensor:
    """exp(x − max) / Σ exp(x − max) along axis: subtracting the (constant) max keeps exp from overflowing."""
    if x.numel() == 0:
        return nothing_to_normalise(x)
    e = (x - x.amax(axis, keepdim=True).detach()).exp()
    return e / e.sum(axis, keepdim=True)


@composite("log_softmax")
def log_softmax(x: Tensor, axis: int) -> Tensor:
    """x − max − log Σ exp(x − max) along axis: the log of softmax without ever taking log(0)."""
    if x.numel() == 0:
        return nothing_to_normalise(x)
    shifted = x - x.amax(axis, keepdim=True).detach()
    return shifted - shifted.exp().sum(axis, keepdim=True).log()


@composite("layernorm")
def layernorm(x: Tensor, axis=-1, eps: float = 1e-5, weight: Tensor | None = None,
              bias: Tensor | None = None) -> Tensor:
    """(x − mean) / √(var + eps) over axis, times weight, plus bias."""
    if x.numel() == 0:
        y = nothing_to_normalise(x)
    else:
        centered = x - x.mean(axis, keepdim=True)
        y = centered / ((centered * centered).mean(axis, keepdim=True) + eps).sqrt()
    y = y if weight is None else y * weight
    return y if bias is None else y + bias


@composite("rmsnorm")
def rmsnorm(x: Tensor, axis=-1, eps: float = 1e-6, weight: Tensor | None = None) -> Tensor:
    """x / √(mean(x²) + eps) over axis, times weight."""
    if x.numel() == 0:
        y = nothing_to_normalise(x)
    else:
        rms = ((x * x).mean(axis, keepdim=True) + eps).sqrt()
        y = x / rms
    return y if weight is None else y * weight


def class_targets(scores: Tensor, target, ignore_index: int, reduction: str, op: str, what: str, shape) -> tuple:
    """Class-index targets for scores (..., C), checked once for every loss that reads them: the shape
    (scores' without the class axis), the reduction, each index not ignored in [0, C). Returns the targets
    as an array, flattened, and the flat positions kept (M,). what, shape: how the error names the input."""
    targets = np.asarray(target._data if isinstance(target, type(scores)) else target)
    if targets.shape != scores.shape[:-1]:
        raise ShapeError(f"{op}: {what} {shape} need targets of shape {scores.shape[:-1]}, got {targets.shape}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    flat = targets.reshape(-1)
    rows = np.nonzero(flat != ignore_index)[0]
    bad = flat[rows][(flat[rows] < 0) | (flat[rows] >= scores.shape[-1])]
    if bad.size:
        raise IndexError(f"{op}: target {bad[0]} is outside [0, {scores.shape[-1]})")
    return targets, flat, rows


@composite("cross_entropy")
def cross_entropy(logits: Tensor, rows: np.ndarray, targets: np.ndarray, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """logits (N, C): logsumexp(x) − x[target] at the chosen rows (M,) against targets (M,), smoothed by ε
    towards the row mean, reduced by "mean" over the chosen rows, "sum", or "none" ((N,), 0 at rows not chosen)."""
    logp = logits[rows].log_softmax(-1)                                       # x − logsumexp(x), (M, C)
    losses = -logp[np.arange(len(rows)), targets]
    if label_smoothing:
        losses = (1 - label_smoothing) * losses - label_smoothing * logp.mean(-1)
    if reduction == "none":
        return ops.ScatterAdd.apply(losses, shape=(logits.shape[0],), index=rows)
    return losses.sum() if reduction == "sum" else losses.sum() / max(len(rows), 1)


@composite("attention")
def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, is_causal: bool = False,
              return_weights: bool = False, dropout_p: float = 0.0, weights_hook=None):
    """softmax(Q Kᵀ / √d + mask) V on (..., T, d); mask boolean (True: may attend) or added to the scores.
    weights_hook(weights) may read or replace the weights before dropout (p = dropout_p) and @ V;
    the weights returned are the hook's, before dropout."""
    scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(q.shape[-1]))  # (..., Tq, Tk)
    if is_causal:
        scores = scores.masked_fill(type(q)(~causal_mask(q.shape[-2], k.shape[-2])), -math.inf)
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf) if mask.dtype == bool else scores + mask
    weights = attention_softmax(scores)
    if weights_hook is not None:
        weights = weights_hook(weights)
    out = (weights.dropout(dropout_p) if dropout_p else weights) @ v
    return (out, weights) if return_weights else out


@composite("multihead_attention")
def multihead_attention(qkv: Tensor, n_head: int, n_kv_head: int, is_causal: bool = False, dropout_p: float = 0.0,
                        weights_hook=None, return_weights: bool = False, prepare=None):
    """qkv (B, T, (nh + 2·nkv)·hs) split into heads, each attended, joined back: (B, T, nh·hs); with
    return_weights also the weights (B, nh, T, T_k). prepare(q, k, v) -> (q, k, v) may change the split
    heads first (RoPE, a KV cache); weights_hook sees and returns the weights as (B, nh, T, T_k)."""
    q, k, v = split_heads(qkv, n_head, n_kv_head)          # (B, nkv, nh/nkv, T, hs), (B, nkv, 1, T, hs)
    if prepare is not None:
        q, k, v = prepare(q, k, v)                          # (B, nkv, nh/nkv, T, hs), (B, nkv, 1, T_k, hs)
    B, T, Tk = qkv.shape[0], q.shape[-2], k.shape[-2]
    hook = None if weights_hook is None else lambda w: weights_hook(w.reshape(B, n_head, T, Tk)).reshape(w.shape)
    out = q.scaled_dot_product_attention(k, v, is_causal=is_causal, return_weights=return_weights,
                                         dropout_p=dropout_p, weights_hook=hook)
    if not return_weights:
        return join_heads(out)
    return join_heads(out[0]), out[1].reshape(B, n_head, T, Tk)


def attention_softmax(scores: Tensor) -> Tensor:
    """softmax over the last axis, except that a row of scores that are all −inf (a query whose every
    key is masked: a padded position) gets weights 0, hence output 0 and gradient 0, as PyTorch's
    scaled_dot_product_attention gives, instead of 0/0 = NaN. (A plain softmax of such a row is NaN,
    in PyTorch too.) The dead rows' scores are replaced by 0 before the softmax, so that no NaN
    reaches the backward pass either."""
    dead = np.isneginf(scores._data).all(-1, keepdims=True)
    if not dead.any():
        return scores.softmax(-1)
    dead = scores._result(dead, None)
    return dead.where(0.0, dead.where(0.0, scores).softmax(-1))


def causal_mask(tq: int, tk: int) -> np.ndarray:
    """(tq, tk) booleans, True where query i may see key j: the lower triangle, aligned to the end."""
    return np.tril(np.ones((tq, tk), dtype=bool), k=tk - tq)


def split_heads(qkv, n_head: int, n_kv_head: int):
    """qkv (B, T, (nh + 2·nkv)·hs) -> q (B, nkv, nh/nkv, T, hs), k and v (B, nkv, 1, T, hs): query heads
    grouped by the KV head they read, so that broadcasting pairs them (no copies of k and v).
    Works on Tensors and on numpy arrays (views of qkv where numpy can)."""
    B, T, width = qkv.shape
    hs = width // (n_head + 2 * n_kv_head)
    heads = swap_12(qkv.reshape(B, T, n_head + 2 * n_kv_head, hs))          # (B, nh + 2·nkv, T, hs)
    group = n_head // max(n_kv_head, 1)
    q = heads[:, :n_head].reshape(B, n_head // group, group, T, hs)
    k = heads[:, n_head:n_head + n_kv_head].reshape(B, n_kv_head, 1, T, hs)
    v = heads[:, n_head + n_kv_head:].reshape(B, n_kv_head, 1, T, hs)
    return q, k, v


def join_heads(*parts: Tensor) -> Tensor:
    """The inverse of split_heads: (B, n, group, T, hs) parts -> (B, T, Σ n·group·hs), heads side by side."""
    B, T, hs = parts[0].shape[0], parts[0].shape[-2], parts[0].shape[-1]
    heads = parts[0].cat(*[p.reshape(B, p.shape[1] * p.shape[2], T, hs) for p in parts], dim=1)
    return swap_12(heads).reshape(B, T, -1)


def swap_12(a):
    """Swap axes 1 and 2: (B, T, heads, hs) <-> (B, heads, T, hs), of a numpy array or a Tensor."""
    return a.swapaxes(1, 2) if isinstance(a, np.ndarray) else a.transpose(1, 2)


# ---------------------------------------------------------------- the Tensor methods

class CompositeMixin:
    """Tensor's methods for the composite ops: argument checks, then `dispatch.run`."""

    __slots__ = ()

    def gelu(self, approximate: str = "tanh"):
        """GELU x·Φ(x). approximate="tanh" (the default here, as in tinygrad and GPT-2):
        0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))); approximate="none": the exact 0.5·x·(1 + erf(x/√2)),
        PyTorch's default for F.gelu and nn.GELU (tinygrad_like.functional.gelu defaults to it)."""
        if approximate == "tanh":
            return run("gelu", self._floating())
        if approximate == "none":
            return run("gelu_erf", self._floating())
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")

    def silu(self):
        """x·σ(x), the SiLU (swish) used by SwiGLU."""
        return run("silu", self._floating())

    def swiglu(self):
        """silu(gate)·up for self (..., 2n) holding the gate (..., :n) and the up projection (..., n:) side
        by side, as nn.MLP's c_fc makes them for its SwiGLU: (..., n) (Shazeer 2020,
        https://arxiv.org/abs/2002.05202)."""
        if self.ndim == 0 or self.shape[-1] % 2:
            raise ShapeError(f"swiglu: input {self.shape} must end in an even axis, the gate and the up "
                             "projection side by side (..., 2n); concatenate them on the last axis first")
        return run("swiglu", self._floating())

    def linear(self, weight, bias=None):
        """x Wᵀ + b, x (..., in), weight (out, in), bias (out,) or None: what nn.Linear computes."""
        if self.shape[-1:] != weight.shape[-1:] or weight.ndim != 2:
            raise ShapeError(f"linear: input {self.shape} does not fit weight {weight.shape} "
                             "(need (..., in) and (out, in))")
        if bias is not None and bias.shape != weight.shape[:1]:
            raise ShapeError(f"linear: bias {bias.shape} does not fit weight {weight.shape} "
                             f"(need ({weight.shape[0]},))")
        return run("linear", self, weight, bias)

    def softmax(self, axis=-1, dtype=None):
        """exp(x - max) / Σ exp(x - max) along `axis` (PyTorch's dim): subtracting the (constant) max keeps
        exp from overflowing. Integers give float32; dtype: cast to it first (PyTorch's dtype=)."""
        self = self._floating() if dtype is None else self.cast(dtype)
        if self.ndim == 0:                                      # dim 0 / -1 of a 0-d tensor: softmax is 1
            self._axes(axis)
            return self.reshape(1).softmax(0).reshape(())
        return run("softmax", self, self._axes(axis)[0])

    def log_softmax(self, axis=-1, dtype=None):
        """x - max - log Σ exp(x - max) along `axis`: the log of softmax without ever taking log(0)."""
        self = self._floating() if dtype is None else self.cast(dtype)
        if self.ndim == 0:
            self._axes(axis)
            return self.reshape(1).log_softmax(0).reshape(())
        return run("log_softmax", self, self._axes(axis)[0])

    def layernorm(self, axis=-1, eps=1e-5, weight=None, bias=None):
        """(x - mean) / √(var + eps) over `axis`, each vector given mean 0 and standard deviation 1,
        then times `weight` and plus `bias` when given (both shaped like the normalised axis)."""
        return run("layernorm", self, axis, eps, weight, bias)

    def rmsnorm(self, axis=-1, eps=1e-6, weight=None):
        """x / √(mean(x²) + eps) over `axis`, each vector given root mean square 1 (no centring, unlike
        layernorm), then times `weight` when given (shaped like the normalised axis)."""
        return run("rmsnorm", self._floating(), axis, eps, weight)

    def sparse_categorical_crossentropy(self, targets, ignore_index=-1, reduction="mean", label_smoothing=0.0):
        """−log softmax(logits)[target] per position whose target is not `ignore_index`, computed as
        logsumexp(logits) − logits[target] (no log of an underflowed probability).

        self: logits (..., C); targets: integer (...). label_smoothing ε: the target is (1 − ε)·onehot
        + ε/C, adding ε·(logsumexp − mean(logits)) per position. reduction: "mean" over the positions
        kept (0 when none is left; PyTorch gives NaN there), "sum", or "none" (shape (...), 0 at
        ignored positions). PyTorch's `F.cross_entropy` with its own default ignore_index = −100 is
        tinygrad_like.functional.cross_entropy.
        """
        op = "sparse_categorical_crossentropy"
        if not 0 <= label_smoothing <= 1:
            raise ValueError(f"{op}: label_smoothing must be in [0, 1], got {label_smoothing}")
        targets, flat, rows = class_targets(self, targets, ignore_index, reduction, op, "logits", self.shape)
        n_class = self.shape[-1]
        loss = run("cross_entropy", self.reshape(-1, n_class), rows, flat[rows], reduction, float(label_smoothing))
        return loss.reshape(targets.shape) if reduction == "none" and loss.shape != targets.shape else loss

    def cross_entropy(self, target, reduction="mean", label_smoothing=0.0, ignore_index=-100):
        """PyTorch's F.cross_entropy (and tinygrad's Tensor.cross_entropy): logsumexp(x) − x[target] per
        position, with label smoothing ε mixing in ε·(logsumexp(x) − mean(x)). self holds logits with the
        classes on axis 1: (C,), (N, C) or (N, C, d1, ...); target holds class indices, () / (N) /
        (N, d1, ...), or class probabilities p of self's shape (floating point): −Σ_c p_c log softmax(x)_c
        per position, p smoothed to (1 − ε)p + ε/C. reduction "mean" | "sum" | "none"."""
        probs = target if isinstance(target, type(self)) else np.asarray(target)
        if probs.dtype.kind == "f" and probs.shape == self.shape:
            classes = 1 if self.ndim > 1 else 0
            p = self._lift(probs) if isinstance(probs, np.ndarray) else probs
            if label_smoothing:
                p = (1 - label_smoothing) * p + label_smoothing / self.shape[classes]
            return reduced(-(p * self.log_softmax(dim=classes)).sum(classes), reduction, "cross_entropy")
        return self._classes_last().sparse_categorical_crossentropy(
            target, ignore_index=ignore_index, reduction=reduction, label_smoothing=label_smoothing)

    def nll_loss(self, target, weight=None, ignore_index=None, reduction="mean"):
        """PyTorch's F.nll_loss (and tinygrad's Tensor.nll_loss): −self[target] per position, self
        log-probabilities (e.g. x.log_softmax(dim=1)) of shape (N, C) or (N, C, d1, ...); target (N) or
        (N, d1, ...) integers. ignore_index None ignores nothing."""
        if weight is not None:
            raise NotImplementedError("nll_loss: class weights are not supported")
        ignore_index = -100 if ignore_index is None else ignore_index
        logp = self._classes_last()
        targets, flat, rows = class_targets(logp, target, ignore_index, reduction, "nll_loss", "input", self.shape)
        n_class = logp.shape[-1]
        if reduction == "none":                                                   # 0 at ignored positions
            keep = type(self)._result(flat != ignore_index, None)
            every = -logp.reshape(-1, n_class)[np.arange(len(flat)), np.where(keep._data, flat, 0)]
            return keep.where(every, 0.0).reshape(targets.shape)
        picked = -logp.reshape(-1, n_class)[rows, flat[rows]]                      # (M,)
        return picked.sum() if reduction == "sum" else picked.sum() / max(len(rows), 1)

    def _classes_last(self):
        """(N, C, d1, ...) -> (N, d1, ..., C): PyTorch keeps classes on axis 1, our losses on the last axis."""
        return self if self.ndim <= 2 else self.permute(0, *range(2, self.ndim), 1)

    def dropout(self, p=0.5, training=True):
        """Zero each entry with probability p and scale the rest by 1/(1-p), so the mean is unchanged."""
        if not training or p == 0:
            return self
        if not 0 <= p < 1:
            raise ValueError(f"dropout: p must be in [0, 1), got {p}")
        return self * self._result(_random.dropout_noise(self.shape, p, self.dtype), None)

    def scaled_dot_product_attention(self, key, value, attn_mask=None, is_causal=False, return_weights=False,
                                     enable_gqa=False, dropout_p=0.0, weights_hook=None):
        """softmax(Q Kᵀ / √d + mask) V on (..., T, d) tensors; self is the query. A query that the mask
        lets see no key at all (a padded position) gets output 0 and gradient 0, as in PyTorch.

        attn_mask: boolean (True where attending is allowed, as in PyTorch) or a float mask added to
        the scores. is_causal: token i sees tokens j <= i only (the lower triangle, aligned to the end
        when keys outnumber queries, as in KV-cache decoding). Returns out (..., Tq, dv), and the
        weights (..., Tq, Tk) too with return_weights=True. enable_gqa: query (..., Hq, Tq, d) may have
        more heads than key and value (..., Hkv, Tk, d), Hq a multiple of Hkv; query head h reads key/value
        head h // (Hq / Hkv), as PyTorch's (each key/value head repeated, repeat_interleave).
        dropout_p: each weight zeroed with that probability, the rest scaled by 1/(1 - p), whatever the
        mode (pass 0 when not training). weights_hook(weights) -> weights: reads or replaces the weights
        before dropout and @ V. A hook or the weights asked for run the composite; dropout runs in the
        fused op too, which draws the composite's noise.
        """
        if not 0 <= dropout_p < 1:
            raise ValueError(f"scaled_dot_product_attention: dropout_p must be in [0, 1), got {dropout_p}")
        q, k, v = self, key, value
        if enable_gqa and q.ndim >= 3 and k.ndim >= 3 and k.shape[-3] != q.shape[-3]:
            if k.shape[-3] != v.shape[-3] or q.shape[-3] % k.shape[-3]:
                raise ShapeError(f"scaled_dot_product_attention: with enable_gqa, the query's {q.shape[-3]} heads "
                                 f"must be a multiple of the key's and value's (shapes {q.shape}, {k.shape}, "
                                 f"{v.shape})")
            groups = q.shape[-3] // k.shape[-3]
            k, v = k.repeat_interleave(groups, dim=-3), v.repeat_interleave(groups, dim=-3)
        if q.ndim >= 4 and k.ndim >= 4 and q.shape[-3] != k.shape[-3] and 1 not in (q.shape[-3], k.shape[-3]):
            raise ShapeError(f"scaled_dot_product_attention: query {q.shape} has {q.shape[-3]} heads and key "
                             f"{k.shape} {k.shape[-3]}; pass enable_gqa=True for grouped-query attention")
        if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
            raise ShapeError(f"scaled_dot_product_attention: query {q.shape}, key {k.shape} and value {v.shape} "
                             "do not fit (need (..., Tq, d), (..., Tk, d), (..., Tk, dv))")
        mask = None if attn_mask is None else attn_mask if isinstance(attn_mask, type(self)) else type(self)(attn_mask)
        return run("attention", q, k, v, mask, is_causal, return_weights, dropout_p, weights_hook)

    def multihead_attention(self, n_head: int, n_kv_head: int | None = None, is_causal: bool = False,
                            dropout_p: float = 0.0, weights_hook=None, return_weights: bool = False, prepare=None):
        """Self-attention with n_head query heads and n_kv_head key/value heads (None: n_head) read from
        the packed projection self = (B, T, (nh + 2·nkv)·hs): each token's query heads, then its key
        heads, then its value heads. Returns (B, T, nh·hs), the heads' outputs side by side, and with
        return_weights the weights (B, nh, T, T_k) too. Query head h reads KV head h // (nh / nkv).
        prepare(q, k, v) -> (q, k, v) changes the split heads (q (B, nkv, nh/nkv, T, hs), k and v
        (B, nkv, 1, T, hs)) before attention: RoPE, a KV cache. dropout_p and weights_hook (seeing the
        weights (B, nh, T, T_k)) as in scaled_dot_product_attention. Composed: split, sdpa, join; on the
        fast path one fused op (dropout included), unless prepare, a hook or the weights ask for the composite."""
        n_kv_head = n_head if n_kv_head is None else n_kv_head
        n_packed = n_head + 2 * n_kv_head
        if self.ndim != 3 or n_head < 1 or n_kv_head < 1 or n_head % n_kv_head or self.shape[-1] % n_packed:
            raise ValueError(f"multihead_attention: input {self.shape} with n_head={n_head}, n_kv_head={n_kv_head} "
                             f"(need (B, T, (n_head + 2·n_kv_head)·hs) with n_head divisible by n_kv_head)")
        return run("multihead_attention", self, n_head, n_kv_head, is_causal, dropout_p, weights_hook, return_weights,
                   prepare)


def reduced(loss, reduction: str, op: str):
    """loss per position, reduced as PyTorch's `reduction` says: "mean", "sum" or "none"."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
