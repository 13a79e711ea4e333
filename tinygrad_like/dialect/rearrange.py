"""torch.nn.functional's rearrangements of feature maps, each a reshape and a permute (so the gradient is the
inverse rearrangement): pixel_shuffle moves r² channels into an r×-larger picture (sub-pixel convolution,
Shi et al. 2016), pixel_unshuffle undoes it, channel_shuffle interleaves channel groups (ShuffleNet).
"""
from __future__ import annotations

from tinygrad_like.errors import ShapeError
from tinygrad_like.tensor import Tensor

__all__ = ["channel_shuffle", "pixel_shuffle", "pixel_unshuffle"]


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C·r², H, W) -> (*, C, H·r, W·r): out[c, h·r + i, w·r + j] = in[c·r² + i·r + j, h, w]."""
    r = upscale_factor
    if input.ndim < 3 or r < 1 or input.shape[-3] % (r * r):
        raise ShapeError(f"pixel_shuffle: input {input.shape} must be (*, C·r², H, W) with r = {r}")
    *batch, c, h, w = input.shape
    n = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)                  # (*, C, H, r, W, r)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H·r, W·r) -> (*, C·r², H, W): pixel_shuffle's inverse."""
    r = downscale_factor
    if input.ndim < 3 or r < 1 or input.shape[-2] % r or input.shape[-1] % r:
        raise ShapeError(f"pixel_unshuffle: input {input.shape} must be (*, C, H·r, W·r) with r = {r}")
    *batch, c, h, w = input.shape
    n = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)                  # (*, C, r, r, H, W)
    return x.reshape(*batch, c * r * r, h // r, w // r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, C, *) with C = g·m channels in g groups -> the same shape, channel i·g + j taken from group j's
    i-th channel (the groups interleaved)."""
    if input.ndim < 3 or groups < 1 or input.shape[1] % groups:
        raise ShapeError(f"channel_shuffle: input {input.shape} must be (N, C, ...) with C divisible by "
                         f"groups={groups}")
    n, c, *rest = input.shape
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(input.shape)
