"""Rearrangements of feature maps as modules: PixelShuffle, PixelUnshuffle and ChannelShuffle (F's)."""
from __future__ import annotations

from nn.module import Module
from tinygrad_like import Tensor
from tinygrad_like import functional as F


class PixelShuffle(Module):
    """(*, C·r², H, W) -> (*, C, H·r, W·r)."""

    def __init__(self, upscale_factor: int):
        self.upscale_factor = upscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return F.pixel_shuffle(x, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H·r, W·r) -> (*, C·r², H, W)."""

    def __init__(self, downscale_factor: int):
        self.downscale_factor = downscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return F.pixel_unshuffle(x, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """The channels of (N, C, ...) in `groups` groups, interleaved."""

    def __init__(self, groups: int):
        self.groups = groups

    def forward(self, x: Tensor) -> Tensor:
        return F.channel_shuffle(x, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
