"""Activations and other parameter-free layers as modules, for `nn.Sequential(Linear, ReLU(), ...)`.
(The piecewise-linear ones, hardtanh, relu6, the shrinks, PReLU and RReLU, are in nn/piecewise.py.)

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


class ELU(Module):
    """x for x > 0, α(eˣ − 1) elsewhere (Clevert et al. 2015)."""

    def __init__(self, alpha: float = 1.0):
        self.alpha = alpha

    def forward(self, x: Tensor) -> Tensor:
        return x.elu(self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


class CELU(ELU):
    """x for x > 0, α(e^(x/α) − 1) elsewhere: an ELU whose slope at 0 is 1 for every α."""

    def forward(self, x: Tensor) -> Tensor:
        return F.celu(x, self.alpha)


class SELU(Module):
    """scale·elu(x, α) with SELU's constants (self-normalising networks)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.selu(x)


class GLU(Module):
    """a·σ(b), a and b the halves of `dim`: (..., 2n) -> (..., n)."""

    def __init__(self, dim: int = -1):
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.glu(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSigmoid(Module):
    """log σ(x), without overflow at any x."""

    def forward(self, x: Tensor) -> Tensor:
        return F.logsigmoid(x)


class Mish(Module):
    """x·tanh(softplus(x))."""

    def forward(self, x: Tensor) -> Tensor:
        return F.mish(x)


class Softplus(Module):
    """log(1 + e^(βx))/β, and x where βx > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Tensor) -> Tensor:
        return x.softplus(self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.softsign(x)


class Tanhshrink(Module):
    """x − tanh(x)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.tanhshrink(x)


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


class Softmin(Softmax):
    """softmax(−x) along `dim`."""

    def forward(self, x: Tensor) -> Tensor:
        return (-x).softmax(self.dim)


class Softmax2d(Module):
    """softmax over the channels at each position: (N, C, H, W) or (C, H, W), along dimension −3."""

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: input of shape {x.shape} must be (N, C, H, W) or (C, H, W)")
        return x.softmax(-3)


class Flatten(Module):
    """(N, d1, d2, ...) -> (N, d1·d2·...): dimensions start_dim..end_dim joined into one (PyTorch's
    default keeps the batch dimension 0)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Flatten's inverse: dimension `dim` of size d1·d2·... becomes dimensions `unflattened_size` (d1, d2, ...)."""

    def __init__(self, dim: int, unflattened_size):
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x: Tensor) -> Tensor:
        return x.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Identity(Module):
    """x -> x: a placeholder where a layer is switched off (e.g. no norm)."""

    def __init__(self, *args, **kwargs):
        pass  # PyTorch's Identity ignores its arguments, so a config can pass the replaced layer's

    def forward(self, x: Tensor) -> Tensor:
        return x
