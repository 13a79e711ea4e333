"""torch.nn.functional's activations beyond relu, gelu and silu, by PyTorch's names and arguments, each a
few engine ops composed (so the gradient, the second derivative and the drawing come for free).

At a kink the derivative is PyTorch's: each function picks its branches with `where` so that the branch
PyTorch differentiates at the boundary is the one taken. The `name_` forms write the result into the
input by the rules of dialect/inplace.py (into the array, or recorded on an intermediate of a graph).
Every function keeps the input's shape and dtype.
"""
from __future__ import annotations

import math

import numpy as np

from tinygrad_like import random as _random
from tinygrad_like.errors import ShapeError
from tinygrad_like.tensor import Tensor

__all__ = ["celu", "celu_", "elu", "elu_", "glu", "gumbel_softmax", "hardshrink", "hardsigmoid", "hardswish",
           "hardtanh", "hardtanh_", "leaky_relu_", "logsigmoid", "mish", "prelu", "relu6", "relu_", "rrelu",
           "rrelu_", "selu", "selu_", "softmin", "softshrink", "softsign", "tanhshrink", "threshold", "threshold_"]

# SELU's constants (Klambauer et al. 2017, https://arxiv.org/abs/1706.02515): the fixed point of mean 0, variance 1
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, α(eˣ − 1) elsewhere (Tensor.elu)."""
    return input.elu(alpha)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, α(e^(x/α) − 1) elsewhere: ELU whose slope at 0 is 1 for every α (Barron 2017)."""
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0 (it divides x)")
    return (input > 0).where(input, (input.clamp(max=0) / alpha).expm1() * alpha)   # min(x, 0): e^x never overflows


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale·elu(x, α) with SELU's constants, so activations keep mean 0 and variance 1 through the layers."""
    return input.elu(SELU_ALPHA) * SELU_SCALE


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a·σ(b), a and b the two halves of `dim`: (..., 2n, ...) -> (..., n, ...) (Dauphin et al. 2017)."""
    if input.ndim == 0 or input.shape[dim] % 2:
        raise ShapeError(f"glu: dimension {dim} of input {input.shape} must have an even size, to halve it")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > λ, 0 elsewhere (Tensor.hardshrink)."""
    return input.hardshrink(lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x − λ above λ, x + λ below −λ, 0 between: x moved towards 0 by λ (the proximal step of λ|x|)."""
    if lambd < 0:
        raise ValueError(f"softshrink: lambd must be >= 0, got {lambd}")
    return (input > lambd).where(input - lambd, (input < -lambd).where(input + lambd, 0.0))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6: 0 below −3, 1 above 3, linear between (MobileNetV3's cheap sigmoid)."""
    return (input + 3).relu6() / 6


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x·relu6(x + 3)/6 (MobileNetV3): 0 up to −3, x from 3, x(x + 3)/6 between. Written by branches, the
    outer ones holding the ends, so the derivative at −3 and 3 is PyTorch's (0 and 1)."""
    middle = input * (input + 3) / 6
    return (input <= -3).where(0.0, (input < 3).where(middle, input))


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """x clamped into [min_val, max_val] (Tensor.hardtanh)."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val {min_val} must not exceed max_val {max_val}")
    return input.hardtanh(min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6) (Tensor.relu6)."""
    return input.relu6()


def logsigmoid(input: Tensor) -> Tensor:
    """log σ(x) = −softplus(−x), written without the overflowing e^(−x): x = −1e4 gives −1e4."""
    return -(-input).softplus(threshold=math.inf)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x·tanh(softplus(x)) (Misra 2019), softplus in its stable form."""
    return input * input.softplus(threshold=math.inf).tanh()


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """x − tanh(x)."""
    return input - input.tanh()


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, `value` elsewhere."""
    return (input > threshold).where(input, float(value))


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(−x) along `dim`: the smallest entries get the most weight."""
    if dim is None:
        raise TypeError("softmin: pass dim= (e.g. F.softmin(x, dim=-1))")
    return (-(input if dtype is None else input.cast(dtype))).softmax(dim)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x for x > 0, a·x elsewhere, one learned slope or one per channel (Tensor.prelu)."""
    return input.prelu(weight)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU (Xu et al. 2015): x for x > 0, a·x elsewhere. Training: a drawn uniform in
    [lower, upper) for each negative entry, from the library's current stream; evaluation: a = (lower + upper)/2."""
    if not lower <= upper:
        raise ValueError(f"rrelu: lower {lower} must not exceed upper {upper}")
    if not training:
        return input.leaky_relu((lower + upper) / 2)
    slopes = input._result(_random.uniform(input.shape, input.dtype, lower, upper), None)
    return (input > 0).where(input, input * slopes)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """A differentiable sample from the categorical distribution softmax(logits) (Jang et al. 2016):
    softmax((logits + g)/τ) with g = −log(E), E exponential(1), drawn from the library's stream. hard=True:
    the one-hot of the sample's argmax, with the soft sample's gradient (straight-through)."""
    if tau <= 0:
        raise ValueError(f"gumbel_softmax: tau must be > 0, got {tau}")
    gumbels = -np.log(_random.exponential(logits.shape, logits.dtype))
    soft = ((logits + logits._result(gumbels.astype(logits.dtype), None)) / tau).softmax(dim)
    if not hard:
        return soft
    index = np.expand_dims(soft._data.argmax(dim), dim)
    one_hot = np.zeros(soft.shape, dtype=soft.dtype)
    np.put_along_axis(one_hot, index, 1.0, axis=dim)
    return soft._result(one_hot, None) - soft.detach() + soft


# ---------------------------------------------------------------- in place: the result written into the input

def _written(name: str, function):
    def in_place(input: Tensor, *args, **kwargs) -> Tensor:
        return input._update(name, lambda t: function(t, *args, **kwargs), None)
    in_place.__name__ = in_place.__qualname__ = name
    in_place.__doc__ = f"In place: {function.__name__}(input, ...) written into input (dialect/inplace.py's rules)."
    return in_place


elu_, celu_, selu_, hardtanh_, rrelu_, threshold_ = (
    _written(f.__name__ + "_", f) for f in (elu, celu, selu, hardtanh, rrelu, threshold))
leaky_relu_ = _written("leaky_relu_", Tensor.leaky_relu)
relu_ = _written("relu_", Tensor.relu)
