"""Weight initialisation, in place: normal, zeros, ones, and the GPT-2 scheme.

GPT-2 (and nanoGPT): every weight N(0, 0.02), biases 0, norm scales 1, and the residual projections
(`c_proj`, the layers that write into the residual stream) scaled by 1/√(2·n_layer), because each
block adds two such outputs to the stream and their variance would otherwise grow with depth.
"""
from __future__ import annotations

import math

from tinygrad_like import Tensor
from tinygrad_like import random as _random


def normal_(t: Tensor, std: float = 0.02, mean: float = 0.0) -> Tensor:
    t.data[...] = _random.rng().normal(mean, std, t.shape)
    return t


def zeros_(t: Tensor) -> Tensor:
    t.data[...] = 0
    return t


def ones_(t: Tensor) -> Tensor:
    t.data[...] = 1
    return t


def gpt2_init_(model, n_layer: int, std: float = 0.02) -> None:
    """Apply the GPT-2 scheme to every parameter of `model`, chosen by its nanoGPT name."""
    for name, p in model.named_parameters():
        if name.endswith("bias"):
            zeros_(p)
        elif p.ndim == 1:  # LayerNorm / RMSNorm scale
            ones_(p)
        elif name.endswith("c_proj.weight"):
            normal_(p, std / math.sqrt(2 * n_layer))
        else:
            normal_(p, std)
