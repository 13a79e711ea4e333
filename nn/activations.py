"""Activations and other parameter-free layers as modules, for `nn.Sequential(Linear, ReLU(), ...)`.

Each is one call into a Tensor op (or tinygrad_like.functional), so its gradient and its drawing are
the op's own; as layers they get a box in `draw_graph`, named like PyTorch's (`net.1`).
"""
from __future__ import annotations

from nn.module import Module
from tinygrad_like import Tensor
from tinygrad_like import functional as F


class ReLU(Module):
    """max(x, 0), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return x.relu()


class Tanh(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.tanh()


class Sigmoid(Module):
    """1 / (1 + e^-x), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return x.sigmoid()


class SiLU(Module):
    """x·σ(x) (also called swish), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return x.silu()


class GELU(Module):
    """x·Φ(x). approximate="none" (PyTorch's default) is exact, 0.5·x·(1 + erf(x/√2)); "tanh" is the
    approximation GPT-2 trained with (Tensor.gelu)."""

    def __init__(self, approximate: str = "none"):
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softmax(Module):
    """e^x / Σ e^x along `dim`: (..., n) -> (..., n), each slice along dim summing to 1."""

    def __init__(self, dim: int = -1):
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return x.softmax(self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """x − logsumexp(x) along `dim`, the log of Softmax computed without overflow."""

    def forward(self, x: Tensor) -> Tensor:
        return x.log_softmax(self.dim)


class Flatten(Module):
    """(N, d1, d2, ...) -> (N, d1·d2·...): dimensions start_dim..end_dim joined into one (PyTorch's
    default keeps the batch dimension 0)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Identity(Module):
    """x -> x: a placeholder where a layer is switched off (e.g. no norm)."""

    def __init__(self, *args, **kwargs):
        pass  # PyTorch's Identity ignores its arguments, so a config can pass the replaced layer's

    def forward(self, x: Tensor) -> Tensor:
        return x
