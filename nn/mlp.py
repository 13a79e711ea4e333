"""`MLP`: the feed-forward half of a transformer block, applied to each token on its own.

c_proj(act(c_fc(x))): up to `hidden` features, a nonlinearity, down again. Attention is where
tokens exchange information; the MLP then works on each token's vector by itself (the transformer
chapter's "The feed-forward network").
"""
from __future__ import annotations

from nn.linear import Linear
from nn.module import Module
from tinygrad_like import Tensor

ACTIVATIONS = ("gelu", "relu", "swiglu")


class MLP(Module):
    """x (..., dim) -> (..., dim), through `hidden` features. nanoGPT names: c_fc, c_proj.

    gelu / relu:  c_fc (dim -> hidden), y = c_proj(act(c_fc(x))).
    swiglu:       c_fc (dim -> 2·hidden); its first half is the gate g, its second half the up
                  projection u, and y = c_proj(silu(g) · u) (Shazeer 2020, https://arxiv.org/abs/2002.05202).
    """

    def __init__(self, dim: int, hidden: int, activation: str = "gelu", bias: bool = True, dtype="float32"):
        if activation not in ACTIVATIONS:
            raise ValueError(f"MLP: unknown activation {activation!r}, expected one of {ACTIVATIONS}")
        self.dim, self.hidden, self.activation = dim, hidden, activation
        width = 2 * hidden if activation == "swiglu" else hidden
        self.c_fc = Linear(dim, width, bias=bias, dtype=dtype)
        self.c_proj = Linear(hidden, dim, bias=bias, dtype=dtype)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim == 0 or x.shape[-1] != self.dim:
            raise ValueError(f"MLP: input of shape {x.shape} must end in dim {self.dim}")
        h = self.c_fc(x)  # (..., hidden) or (..., 2·hidden)
        if self.activation == "swiglu":
            h = h.swiglu()  # silu(gate)·up, gate = h[..., :hidden], up = h[..., hidden:]
        else:
            h = h.gelu() if self.activation == "gelu" else h.relu()
        return self.c_proj(h)  # (..., dim)

    def extra_repr(self) -> str:
        return f"{self.dim}, {self.hidden}, activation={self.activation!r}"
