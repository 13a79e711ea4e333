"""Normalisation layers: `LayerNorm` (GPT-2), `RMSNorm` (Llama and most recent models) and `GroupNorm`
(channels in groups, for convolutional and small-batch models).

Both rescale each token's vector (the last axis) to a fixed size, then apply a learned per-feature
scale: a sub-layer's input keeps the same size however much the residual stream has grown.
"""
from __future__ import annotations

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
