"""Normalisation layers: `LayerNorm` (GPT-2), `RMSNorm` (Llama and most recent models), `GroupNorm`
(channels in groups, for convolutional and small-batch models) and `InstanceNorm1d/2d/3d` (each sample's
channel on its own, for style transfer).

Both rescale each token's vector (the last axis) to a fixed size, then apply a learned per-feature
scale: a sub-layer's input keeps the same size however much the residual stream has grown.
"""
from __future__ import annotations

from nn.batchnorm import per_feature_state
from nn.module import Module
from tinygrad_like import Tensor
from tinygrad_like import functional as F


def _check_dim(layer: str, x: Tensor, dim: int) -> None:
    if x.ndim == 0 or x.shape[-1] != dim:
        raise ValueError(f"{layer}: input of shape {x.shape} must end in the normalised dimension {dim}")


class LayerNorm(Module):
    """y = (x - mean) / √(var + eps) · weight + bias over the last axis; x (..., dim) -> (..., dim).

    weight starts at ones and bias at zeros, so a fresh layer only standardises. bias=False drops the
    shift (nanoGPT's option).
    """

    def __init__(self, dim: int, eps: float = 1e-5, bias: bool = True, dtype="float32"):
        self.dim, self.eps = dim, eps
        self.weight = Tensor.ones(dim, dtype=dtype, requires_grad=True)
        self.bias = Tensor.zeros(dim, dtype=dtype, requires_grad=True) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        _check_dim("LayerNorm", x, self.dim)
        return x.layernorm(-1, self.eps, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"{self.dim}, eps={self.eps}, bias={self.bias is not None}"


class RMSNorm(Module):
    """y = x / √(mean(x²) + eps) · weight over the last axis; x (..., dim) -> (..., dim).

    No centring and no bias: only the root mean square is fixed to 1, which is cheaper than LayerNorm
    and works as well in practice (Zhang & Sennrich 2019, https://arxiv.org/abs/1910.07467).
    """

    def __init__(self, dim: int, eps: float = 1e-6, dtype="float32"):
        self.dim, self.eps = dim, eps
        self.weight = Tensor.ones(dim, dtype=dtype, requires_grad=True)

    def forward(self, x: Tensor) -> Tensor:
        _check_dim("RMSNorm", x, self.dim)
        return x.rmsnorm(-1, self.eps, self.weight)

    def extra_repr(self) -> str:
        return f"{self.dim}, eps={self.eps}"


class GroupNorm(Module):
    """x (N, C, ...) -> same shape: each sample's channels split into num_groups groups, each group standardised
    over its channels and positions, then · weight + bias per channel (ones and zeros at first; affine=False
    drops both). One group is LayerNorm over (C, ...); C groups is InstanceNorm (Wu & He 2018)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, bias: bool = True,
                 dtype="float32"):
        if num_groups < 1 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels {num_channels} must be divisible by num_groups {num_groups}")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.weight = Tensor.ones(num_channels, dtype=dtype, requires_grad=True) if affine else None
        self.bias = Tensor.zeros(num_channels, dtype=dtype, requires_grad=True) if affine and bias else None

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim < 2 or x.shape[1] != self.num_channels:
            raise ValueError(f"GroupNorm: input of shape {x.shape} must be (N, {self.num_channels}, ...)")
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class InstanceNorm1d(Module):
    """x (N, C, L) or unbatched (C, L) -> same shape: each sample's channel standardised over its positions,
    then · weight + bias (affine=True; ones and zeros at first). track_running_stats=True keeps running_mean
    and running_var (buffers, PyTorch's names; num_batches_tracked stays 0, as PyTorch's does here) and uses
    them after `eval()`."""

    spatial = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, dtype="float32"):
        per_feature_state(self, num_features, eps, momentum, affine, track_running_stats, dtype)

    def forward(self, x: Tensor) -> Tensor:
        name = type(self).__name__
        if x.ndim not in (self.spatial + 1, self.spatial + 2):
            raise ValueError(f"{name}: input of shape {x.shape} must be (N, C, {self.spatial} positions) or "
                             f"(C, {self.spatial} positions)")
        unbatched = x.ndim == self.spatial + 1
        x = x.unsqueeze(0) if unbatched else x
        if x.shape[1] != self.num_features:
            raise ValueError(f"{name}: input of shape {x.shape} has {x.shape[1]} channels, expected "
                             f"{self.num_features}")
        use_input_stats = self.training or not self.track_running_stats
        running = (self.running_mean, self.running_var) if self.track_running_stats else (None, None)
        y = F.instance_norm(x, *running, self.weight, self.bias, use_input_stats, self.momentum, self.eps)
        return y.squeeze(0) if unbatched else y

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm2d(InstanceNorm1d):
    """InstanceNorm over (N, C, H, W) or (C, H, W)."""

    spatial = 2


class InstanceNorm3d(InstanceNorm1d):
    """InstanceNorm over (N, C, D, H, W) or (C, D, H, W)."""

    spatial = 3


class LocalResponseNorm(Module):
    """x_c / (k + α·mean of x² over the `size` channels around c)^β, across the channels of (N, C, ...)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, x: Tensor) -> Tensor:
        return F.local_response_norm(x, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(LocalResponseNorm):
    """PyTorch's older LocalResponseNorm for (N, C, H, W) only."""

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: input of shape {x.shape} must be (N, C, H, W)")
        return super().forward(x)
