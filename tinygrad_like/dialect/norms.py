"""torch.nn.functional's normalisations beyond layer_norm over one dimension: layer_norm and rms_norm over
the last k dimensions, group_norm, and batch_norm with running statistics, by PyTorch's names and
arguments, composed of engine ops (mean, variance, square root), so their gradients come for free.
"""
from __future__ import annotations

import numpy as np

from tinygrad_like.errors import ShapeError
from tinygrad_like.tensor import Tensor

__all__ = ["batch_norm", "group_norm", "instance_norm", "layer_norm", "local_response_norm", "rms_norm"]


def _last_dims(input: Tensor, normalized_shape, op: str) -> tuple:
    """The axes of input's last len(normalized_shape) dimensions, checked against normalized_shape."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape or input.shape[input.ndim - len(shape):] != shape or len(shape) > input.ndim:
        raise ShapeError(f"{op}: normalized_shape {shape} must be the last dimensions of input {input.shape}")
    return tuple(range(input.ndim - len(shape), input.ndim))


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """(x − mean) / √(var + eps) over the last len(normalized_shape) dimensions, then · weight + bias
    (both of normalized_shape). One dimension is the engine's fused Tensor.layernorm."""
    axes = _last_dims(input, normalized_shape, "layer_norm")
    if len(axes) == 1:
        return input.layernorm(-1, eps, weight, bias)
    centred = input - input.mean(axes, keepdim=True)
    y = centred / ((centred * centred).mean(axes, keepdim=True) + eps).sqrt()
    y = y if weight is None else y * weight
    return y if bias is None else y + bias


def rms_norm(input: Tensor, normalized_shape, weight=None, eps: float | None = None) -> Tensor:
    """x / √(mean(x²) + eps) over the last len(normalized_shape) dimensions, then · weight; eps None is the
    dtype's machine epsilon, as in PyTorch."""
    axes = _last_dims(input, normalized_shape, "rms_norm")
    eps = float(np.finfo(input.dtype if input.dtype.kind == "f" else np.float32).eps) if eps is None else eps
    if len(axes) == 1:
        return input.rmsnorm(-1, eps, weight)
    y = input / ((input * input).mean(axes, keepdim=True) + eps).sqrt()
    return y if weight is None else y * weight


def _per_channel(param: Tensor, input: Tensor) -> Tensor:
    """A (C,) parameter shaped (C, 1, ...) to broadcast along dimension 1 of input (N, C, ...)."""
    return param.reshape(-1, *([1] * (input.ndim - 2)))


def group_norm(input: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """input (N, C, ...) with its C channels in num_groups groups: each sample's group standardised over its
    channels and positions (Wu & He 2018), then · weight + bias per channel (C,)."""
    if input.ndim < 2 or num_groups < 1 or input.shape[1] % num_groups:
        raise ShapeError(f"group_norm: input {input.shape} must be (N, C, ...) with C divisible by "
                         f"num_groups={num_groups}")
    grouped = input.reshape(input.shape[0], num_groups, -1)
    centred = grouped - grouped.mean(-1, keepdim=True)
    y = (centred / ((centred * centred).mean(-1, keepdim=True) + eps).sqrt()).reshape(input.shape)
    y = y if weight is None else y * _per_channel(weight, input)
    return y if bias is None else y + _per_channel(bias, input)


def batch_norm(input: Tensor, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """input (N, C, ...) standardised per channel: training, with the batch's mean and (biased) variance over
    N and the positions, and running_mean / running_var (when given) moved in place towards them,
    r ← (1 − momentum)·r + momentum·stat, with the unbiased variance, as PyTorch does; otherwise with
    running_mean and running_var. Then · weight + bias per channel (C,)."""
    if input.ndim < 2:
        raise ShapeError(f"batch_norm: input {input.shape} must be (N, C, ...)")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise ShapeError(f"batch_norm: {name} {tuple(t.shape)} must have one entry per channel ({c},)")
    axes = (0, *range(2, input.ndim))
    if training:
        n = input.numel() // c
        if n < 2:
            raise ValueError(f"batch_norm: training needs more than 1 value per channel, got input {input.shape}")
        mean = input.mean(axes, keepdim=True)
        centred = input - mean
        var = (centred * centred).mean(axes, keepdim=True)
        unbiased = var._data.reshape(-1) * n / (n - 1)
        for running, stat in ((running_mean, mean._data.reshape(-1)), (running_var, unbiased)):
            if running is not None:                     # outside the graph, as PyTorch's in-place update
                running._data *= 1 - momentum
                running._data += momentum * stat.astype(running.dtype)
    else:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: evaluation (training=False) needs running_mean and running_var; pass "
                             "training=True to use the batch's statistics")
        mean, var = _per_channel(running_mean, input), _per_channel(running_var, input)
        centred = input - mean
    y = centred / (var + eps).sqrt()
    y = y if weight is None else y * _per_channel(weight, input)
    return y if bias is None else y + _per_channel(bias, input)


def instance_norm(input: Tensor, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """input (N, C, ...): each sample's channel standardised over its positions (Ulyanov et al. 2016), then
    · weight + bias per channel. With use_input_stats=False the running statistics are used instead; with
    them, running_mean / running_var (when given) move towards the average over the batch of each sample's
    statistics, as PyTorch's: batch_norm of the input seen as one sample with N·C channels."""
    if input.ndim < 3:
        raise ShapeError(f"instance_norm: input {input.shape} must be (N, C, positions...)")
    n, c = input.shape[:2]
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    stacked = [None if r is None else Tensor(np.tile(r._data, n)) for r in (running_mean, running_var)]
    y = batch_norm(input.reshape(1, n * c, *input.shape[2:]), *stacked, None, None, True, momentum, eps)
    for running, moved in zip((running_mean, running_var), stacked):
        if running is not None:
            running._data[...] = moved._data.reshape(n, c).mean(0)
    y = y.reshape(input.shape)
    y = y if weight is None else y * _per_channel(weight, input)
    return y if bias is None else y + _per_channel(bias, input)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """AlexNet's normalisation across channels (Krizhevsky et al. 2012): x_c / (k + α·mean(x²))^β, the mean
    over the `size` channels around c (size // 2 before, (size − 1) // 2 after, zeros past the edges counted).
    input (N, C, ...)."""
    if input.ndim < 3:
        raise ShapeError(f"local_response_norm: input {input.shape} must be (N, C, positions...)")
    if input.numel() == 0:
        return input
    c = input.shape[1]
    pad = [0, 0] * (input.ndim - 2) + [size // 2, (size - 1) // 2]           # F.pad's order: last dimension first
    squares = (input * input).pad(pad)
    window = squares[:, 0:c]
    for j in range(1, size):
        window = window + squares[:, j:j + c]
    return input / (window * (alpha / size) + k) ** beta
