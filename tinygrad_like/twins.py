"""The composed twin of every fused op: the same result built from primitive ops.

A twin is a function of the fused op's parent Tensors and of the keyword options its `apply` got
(each recorded node keeps them in `ctx.options`). It is two things at once: what
`tests/test_fused.py` proves the fused op equal to (float64, 1e-12, values, gradients and second
derivatives), and what `draw_graph(..., expand=...)` draws inside a fused op's box. So the box shows
the very computation the proof covers.

Each twin calls the public Tensor method inside `composed()`, so the composition itself is written
once, in tensor.py. Twins are looked up by the fused op's class (`TWINS`): a faster rewrite of a
fused op keeps its twin as long as its parents and options mean the same.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tinygrad_like import fused
from tinygrad_like.function import composed, enable_grad, state
from tinygrad_like.tensor import Tensor

TWINS: dict[type, Callable[..., Tensor]] = {}


def twin_of(op: type):
    """Register the decorated function as the composed twin of the fused op class `op`."""
    def register(fn):
        TWINS[op] = fn
        return fn
    return register


@twin_of(fused.Linear)
def linear(x, w, b=None):
    """x (..., in) @ wᵀ (in, out) + b (out,)."""
    return x.linear(w, b)


@twin_of(fused.Softmax)
def softmax(x, axis):
    """exp(x − max) / Σ exp(x − max) along axis."""
    return x.softmax(axis)


@twin_of(fused.LogSoftmax)
def log_softmax(x, axis):
    """x − max − log Σ exp(x − max) along axis."""
    return x.log_softmax(axis)


@twin_of(fused.LayerNorm)
def layernorm(x, w=None, b=None, eps=1e-5):
    """(x − mean) / √(var + eps) over the last axis, times w, plus b."""
    return x.layernorm(-1, eps, w, b)


@twin_of(fused.Gelu)
def gelu(x):
    """½x(1 + tanh(√(2/π)(x + 0.044715x³)))."""
    return x.gelu()


@twin_of(fused.CrossEntropy)
def cross_entropy(logits, rows, targets, reduction="mean", label_smoothing=0.0):
    """logits (N, C): logsumexp(x) − x[target] (smoothed by ε towards the row mean) at the chosen rows,
    reduced by "mean" over them, "sum", or "none" ((N,), 0 at rows not chosen)."""
    every = np.full(logits.shape[0], -1)
    every[rows] = targets                                    # the rows not chosen are ignored
    return logits.sparse_categorical_crossentropy(every, ignore_index=-1, reduction=reduction,
                                                  label_smoothing=label_smoothing)


@twin_of(fused.Attention)
def attention(q, k, v, mask):
    """softmax(q kᵀ / √d + mask) v; the mask is additive (0 where allowed, −inf where not) or None."""
    return q.scaled_dot_product_attention(k, v, attn_mask=None if mask is None else Tensor._make(mask, None))


@twin_of(fused.MultiHeadAttention)
def multihead_attention(qkv, n_head, n_kv_head, causal):
    """qkv (B, T, (nh + 2·nkv)·hs) split into heads, each attended, joined back: (B, T, nh·hs)."""
    return qkv.multihead_attention(n_head, n_kv_head, is_causal=causal)


def has_twin(ctx) -> bool:
    return type(ctx) in TWINS


def can_rebuild(ctx) -> bool:
    """A twin can be built while the node still holds its parents and options (not freed by backward)."""
    return has_twin(ctx) and not ctx.freed


def rebuild(ctx, parents=None) -> Tensor:
    """The twin of the fused node `ctx` applied to `parents` (default: its own) with its recorded
    options, recorded as a graph (even under no_grad), its ops in the scope the fused op ran in."""
    if not has_twin(ctx):
        raise ValueError(f"rebuild: {type(ctx).__name__} is not a fused op with a composed twin "
                         f"(those are {', '.join(sorted(op.__name__ for op in TWINS))})")
    if ctx.freed:
        raise ValueError(f"rebuild: the inputs of {type(ctx).__name__} were freed by backward(); "
                         "pass retain_graph=True to backward() to keep them")
    prev, state.scope = state.scope, ctx.scope
    try:
        with composed(), enable_grad():
            return TWINS[type(ctx)](*(ctx.parents if parents is None else parents), **ctx.options)
    finally:
        state.scope = prev


def composed_twin(out: Tensor) -> Tensor:
    """`out`, made by a fused op, made again by that op's composed twin from the same parents:
    gradients of the result flow into the same Tensors the fused op read."""
    if out._ctx is None:
        raise ValueError("composed_twin: this tensor was not made by a recorded op (a leaf, or made under no_grad)")
    return rebuild(out._ctx)
