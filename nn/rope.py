"""Rotary position embeddings (RoPE), rotate-half convention as in GPT-NeoX and Llama.

Instead of adding a position vector to the token, RoPE rotates each query and key by an angle that
grows with the token's position. For head_dim d, dimension i (i < d/2) is paired with i + d/2 and
the pair is turned by the angle pos·θ_i, with θ_i = base^(-2i/d) (fast turns in the first pairs,
slow ones in the last). Written with the duplicated tables cos = cat([cos(pos·θ), cos(pos·θ)]):

    rotate_half(x) = cat([-x2, x1])          x1, x2: the first and second halves of x
    rope(x, pos)   = x·cos + rotate_half(x)·sin

Why it works: a rotation by angle a applied to q and by b applied to k leaves the dot product
depending on b - a only, so the score q_m·k_n sees the relative position m - n, and values are
left alone (only q and k are rotated). RoPE has no parameters: the cos/sin tables are numpy
constants and the rotation is made of Tensor ops (slices, cat, *, +), so gradients flow to x.

Reference: Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding",
https://arxiv.org/abs/2104.09864.
"""
from __future__ import annotations

import numpy as np

from nn.module import Module
from tinygrad_like import Tensor


def rope_cos_sin(positions, head_dim: int, base: float = 10000.0) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin tables, float64 numpy arrays of shape (len(positions), head_dim).

    inv_freq_i = base^(-2i/d) for i < d/2; angles = pos · inv_freq (T, d/2), duplicated to width d.
    """
    if head_dim % 2:
        raise ValueError(f"RoPE: rotates pairs of dimensions, so head_dim must be even, got {head_dim}")
    inv_freq = base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)   # (d/2,)
    angles = np.outer(np.asarray(positions, dtype=np.float64), inv_freq)             # (T, d/2)
    angles = np.concatenate([angles, angles], axis=-1)                               # (T, d)
    return np.cos(angles), np.sin(angles)


def rotate_half(x: Tensor) -> Tensor:
    """cat([-x2, x1]) over the last axis: turns each pair (x_i, x_{i+d/2}) by 90 degrees."""
    half = x.shape[-1] // 2
    return Tensor.cat(-x[..., half:], x[..., :half], dim=-1)


def _rotate(x: Tensor, cos: np.ndarray, sin: np.ndarray) -> Tensor:
    """x·cos + rotate_half(x)·sin, with (T, d) tables broadcast over x's (..., T, d)."""
    cos = Tensor(cos.astype(x.dtype, copy=False))
    sin = Tensor(sin.astype(x.dtype, copy=False))
    return x * cos + rotate_half(x) * sin


def apply_rope(x: Tensor, positions, base: float = 10000.0) -> Tensor:
    """Rotate x (..., T, d) whose rows sit at integer `positions` (T,); the functional form of `RoPE`.

    >>> x = Tensor([[1.0, 0.0]])              # d = 2: one pair, θ_0 = 1, so position 1 turns by 1 rad
    >>> apply_rope(x, [1]).numpy().round(4)   # (cos 1, sin 1)
    array([[0.5403, 0.8415]], dtype=float32)
    """
    positions = np.asarray(positions)
    if positions.shape != (x.shape[-2],):
        raise ValueError(f"apply_rope: x of shape {x.shape} has {x.shape[-2]} positions along axis -2, "
                         f"but positions has shape {positions.shape}")
    cos, sin = rope_cos_sin(positions, x.shape[-1], base)
    return _rotate(x, cos, sin)


class RoPE(Module):
    """Rotary embedding with tables precomputed for positions 0 .. max_seq_len - 1.

    `rope(x, start)` rotates x (B, nh, T, hs) as if its rows sat at positions start .. start + T - 1;
    `start` is the number of tokens already in the KV cache when decoding. Positions past the table
    are still exact: the table is rebuilt twice as long when one is asked for.
    """

    def __init__(self, head_dim: int, max_seq_len: int = 4096, base: float = 10000.0):
        if head_dim % 2:
            raise ValueError(f"RoPE: rotates pairs of dimensions, so head_dim must be even, got {head_dim}")
        self.head_dim, self.base = head_dim, base
        self.cos, self.sin = rope_cos_sin(np.arange(max_seq_len), head_dim, base)   # (max_seq_len, hs) each

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        T = x.shape[-2]
        if x.shape[-1] != self.head_dim:
            raise ValueError(f"RoPE: input of shape {x.shape} has last axis {x.shape[-1]}, expected head_dim "
                             f"{self.head_dim}")
        if start + T > len(self.cos):
            self.cos, self.sin = rope_cos_sin(np.arange(2 * (start + T)), self.head_dim, self.base)
        return _rotate(x, self.cos[start:start + T], self.sin[start:start + T])

    def extra_repr(self) -> str:
        return f"head_dim={self.head_dim}, base={self.base}"
