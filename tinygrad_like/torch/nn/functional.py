"""torch.nn.functional on the engine: everything tinygrad_like.functional has (activations, losses,
distances, normalisations, embedding and embedding_bag, bilinear, ...: tinygrad_like/dialect/), plus relu,
dropout, linear, normalize and scaled_dot_product_attention, each one call of an engine op (or a few,
composed) with PyTorch's argument names and order, and the losses' class weights and PyTorch's deprecated
size_average/reduce. Options the engine lacks raise an error naming them rather than being ignored.

`inplace=True` is accepted wherever PyTorch has it: the engine records every op out of place, so the
result is a new tensor with the values PyTorch returns, and the input keeps its values (code that uses
the returned tensor, as every nn.Sequential does, computes what it computes on PyTorch).
"""
from __future__ import annotations

import math

from tinygrad_like import Tensor
from tinygrad_like import functional as _F
from tinygrad_like.dialect.activations import *  # noqa: F401,F403 (re-exported: elu, selu, glu, hardswish, ...)
from tinygrad_like.dialect.ctc import ctc_loss  # noqa: F401
from tinygrad_like.dialect.distances import *  # noqa: F401,F403 (cosine_similarity, pairwise_distance, pdist)
from tinygrad_like.dialect.layers import *  # noqa: F401,F403 (bilinear, embedding, embedding_bag, alpha_dropout, ...)
from tinygrad_like.dialect.losses import *  # noqa: F401,F403 (l1_loss, huber_loss, kl_div, ...)
from tinygrad_like.dialect.losses import legacy_reduction, weighted, weighted_cross_entropy, weighted_nll_loss
from tinygrad_like.dialect.margin_losses import *  # noqa: F401,F403 (margin_ranking_loss, triplet_margin_loss, ...)
from tinygrad_like.dialect.multi_head_attention import multi_head_attention_forward  # noqa: F401
from tinygrad_like.dialect.norms import *  # noqa: F401,F403 (layer_norm, rms_norm, group_norm, batch_norm)
from tinygrad_like.dialect.rearrange import *  # noqa: F401,F403 (pixel_shuffle, pixel_unshuffle, channel_shuffle)
from tinygrad_like.functional import (  # noqa: F401 (re-exported)
    gelu,
    logsumexp,
    one_hot,
    pad,
    softplus,
)
from tinygrad_like.torch._refuse import module_getattr

__all__ = [*_F.__all__, "relu", "tanh", "sigmoid", "silu", "leaky_relu", "dropout", "linear", "normalize",
           "scaled_dot_product_attention", "assert_int_or_pair"]


def assert_int_or_pair(arg, arg_name: str, message: str) -> None:
    """PyTorch's argument check for a size given as one int or a pair: AssertionError(message.format(arg_name))
    otherwise."""
    assert isinstance(arg, int) or len(arg) == 2, message.format(arg_name)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.silu()


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, negative_slope·x elsewhere (the slope at 0 is negative_slope's, as PyTorch's)."""
    return input.leaky_relu(negative_slope)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:
    """input / max(‖input‖_p, eps) along `dim`: each slice along dim scaled to unit p-norm (a zero slice stays 0)."""
    if out is not None:
        raise NotImplementedError("tinygrad_like.torch: F.normalize does not provide out=")
    return input / input.norm(p, dim, keepdim=True).clamp(min=eps)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """e^x / Σ e^x along `dim` (required here: PyTorch's implicit dim is deprecated)."""
    if dim is None:
        raise TypeError("softmax: pass dim= (e.g. F.softmax(x, dim=-1))")
    return (input if dtype is None else input.cast(dtype)).softmax(dim)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    if dim is None:
        raise TypeError("log_softmax: pass dim= (e.g. F.log_softmax(x, dim=-1))")
    return (input if dtype is None else input.cast(dtype)).log_softmax(dim)


def cross_entropy(input: Tensor, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy of logits (N, C) or (N, C, d1, ...) against class indices (see tinygrad_like.functional),
    or against class probabilities of the logits' shape; `weight` (C,) weighs each class as PyTorch does."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        return weighted_cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)
    return _F.cross_entropy(input, target, ignore_index=ignore_index, reduction=reduction,
                            label_smoothing=label_smoothing)


def nll_loss(input: Tensor, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean") -> Tensor:
    """−input[target] per position, input holding log-probabilities (N, C) or (N, C, d1, ...); `weight` (C,)
    weighs each class ("mean" then divides by the weights of the targets kept)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        return weighted_nll_loss(input, target, weight, ignore_index, reduction)
    return _F.nll_loss(input, target, ignore_index=ignore_index, reduction=reduction)


def mse_loss(input: Tensor, target, size_average=None, reduce=None, reduction: str = "mean", weight=None) -> Tensor:
    """(input − target)², times `weight` (input's shape) when given, reduced ("mean": Σ w·d² / Σ w)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if weight is None:
        return _F.mse_loss(input, target, reduction=reduction)
    return weighted(_F.mse_loss(input, target, reduction="none"), weight, reduction, "mse_loss", weighted_mean=True)


def binary_cross_entropy(input: Tensor, target, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of probabilities `input` in [0, 1] (see tinygrad_like.functional)."""
    return _F.binary_cross_entropy(input, target, weight, legacy_reduction(size_average, reduce, reduction))


def binary_cross_entropy_with_logits(input: Tensor, target, weight=None, size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None) -> Tensor:
    """Binary cross-entropy of σ(input), from the logits, stable at any logit (see tinygrad_like.functional)."""
    return _F.binary_cross_entropy_with_logits(input, target, weight, legacy_reduction(size_average, reduce, reduction),
                                               pos_weight)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each entry with probability p and scale the rest by 1/(1-p) (only when training)."""
    return input.dropout(p, training=training)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input Wᵀ + b: (..., in) with W (out, in) -> (..., out)."""
    return input.linear(weight, bias)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(Q Kᵀ·scale + mask) V, scale = 1/√d unless given; a bool mask is True where attending is allowed.

    dropout_p > 0 drops attention weights as PyTorch does (each weight zeroed with probability dropout_p,
    the rest scaled by 1/(1 - dropout_p)), whatever the module's mode: callers pass
    `dropout_p=self.dropout if self.training else 0`, as nanoGPT does. The engine's attention drops them
    (its composite; without dropout, its fused path runs).
    """
    if scale is not None:  # the engine scales by 1/√d; fold the requested scale into the query
        query = query * (scale * math.sqrt(query.shape[-1]))
    return query.scaled_dot_product_attention(key, value, attn_mask=attn_mask, is_causal=is_causal,
                                              dropout_p=dropout_p, enable_gqa=enable_gqa)


__getattr__ = module_getattr("torch.nn.functional")
