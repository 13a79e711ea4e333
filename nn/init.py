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
    contiguous = t._data.flags.c_contiguous
    t._data[...] = _random.into(t._data, lambda shape: _random.normal(shape, t.dtype, mean, std, contiguous))
    return t


def zeros_(t: Tensor) -> Tensor:
    t._data[...] = 0
    return t


def ones_(t: Tensor) -> Tensor:
    t._data[...] = 1
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


# ---------------------------------------------------------------- PyTorch's schemes (torch.nn.init)

def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    t._data[...] = _random.into(t._data, lambda shape: _random.uniform(shape, t.dtype, a, b))
    return t


def constant_(t: Tensor, value: float) -> Tensor:
    t._data[...] = value
    return t


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor by which a nonlinearity shrinks the standard deviation, to undo in the init (PyTorch's table)."""
    if nonlinearity in ("linear", "identity", "sigmoid") or nonlinearity.startswith("conv"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unknown nonlinearity {nonlinearity!r}")


def _fans(t: Tensor, op: str) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight (out, in, *kernel): inputs and outputs feeding each unit."""
    if t.ndim < 2:
        raise ValueError(f"{op}: needs a weight of at least 2 dimensions, got shape {t.shape}")
    field = math.prod(t.shape[2:])
    return t.shape[1] * field, t.shape[0] * field


def xavier_uniform_(t: Tensor, gain: float = 1.0) -> Tensor:
    """Uniform in ±gain·√(6 / (fan_in + fan_out)) (Glorot & Bengio 2010): variance kept both ways."""
    fan_in, fan_out = _fans(t, "xavier_uniform_")
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -bound, bound)


def xavier_normal_(t: Tensor, gain: float = 1.0) -> Tensor:
    fan_in, fan_out = _fans(t, "xavier_normal_")
    return normal_(t, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def _kaiming_std(t, a, mode, nonlinearity, op) -> float:
    fan_in, fan_out = _fans(t, op)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{op}: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    return calculate_gain(nonlinearity, a) / math.sqrt(fan_in if mode == "fan_in" else fan_out)


def kaiming_uniform_(t: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    """Uniform with std gain/√fan (He et al. 2015), so ReLU layers keep the signal's size."""
    bound = math.sqrt(3.0) * _kaiming_std(t, a, mode, nonlinearity, "kaiming_uniform_")
    return uniform_(t, -bound, bound)


def kaiming_normal_(t: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    return normal_(t, _kaiming_std(t, a, mode, nonlinearity, "kaiming_normal_"))


def trunc_normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0) -> Tensor:
    """N(mean, std²) restricted to [a, b]: values outside are drawn again until all fall inside."""
    if not a < b:
        raise ValueError(f"trunc_normal_: need a < b, got a={a}, b={b}")
    values = _random.rng().normal(mean, std, t.shape)
    outside = (values < a) | (values > b)
    while outside.any():
        values[outside] = _random.rng().normal(mean, std, int(outside.sum()))
        outside = (values < a) | (values > b)
    t._data[...] = values
    return t
