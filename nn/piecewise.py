"""Piecewise-linear activations as modules: Hardtanh and ReLU6 (clamps), Hardsigmoid and Hardswish
(MobileNetV3's cheap sigmoid and swish), Hardshrink and Softshrink (zero a band around 0), Threshold,
and the leaky ReLUs whose negative slope is learned (PReLU) or random while training (RReLU).

Each is one call of tinygrad_like.functional, so its gradient (PyTorch's at each kink) is the function's.
"""
from __future__ import annotations

from nn.module import Module
from tinygrad_like import Tensor
from tinygrad_like import functional as F


class Hardtanh(Module):
    """x clamped into [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0):
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val {min_val} must not exceed max_val {max_val}")
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x: Tensor) -> Tensor:
        return x.hardtanh(self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)."""

    def __init__(self):
        super().__init__(0.0, 6.0)


class Hardsigmoid(Module):
    """relu6(x + 3) / 6."""

    def forward(self, x: Tensor) -> Tensor:
        return F.hardsigmoid(x)


class Hardswish(Module):
    """x·relu6(x + 3) / 6."""

    def forward(self, x: Tensor) -> Tensor:
        return F.hardswish(x)


class Hardshrink(Module):
    """x where |x| > λ, 0 elsewhere."""

    def __init__(self, lambd: float = 0.5):
        self.lambd = lambd

    def forward(self, x: Tensor) -> Tensor:
        return x.hardshrink(self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """x moved towards 0 by λ, and 0 within λ of 0."""

    def forward(self, x: Tensor) -> Tensor:
        return F.softshrink(x, self.lambd)


class Threshold(Module):
    """x where x > threshold, `value` elsewhere."""

    def __init__(self, threshold: float, value: float):
        self.threshold, self.value = threshold, value

    def forward(self, x: Tensor) -> Tensor:
        return F.threshold(x, self.threshold, self.value)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}"


class PReLU(Module):
    """x for x > 0, a·x elsewhere, with `num_parameters` learned slopes a (1, or one per channel, the
    input's dimension 1), each starting at `init`."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, dtype="float32"):
        self.num_parameters = num_parameters
        self.weight = Tensor.full((num_parameters,), init, dtype=dtype, requires_grad=True)

    def forward(self, x: Tensor) -> Tensor:
        return x.prelu(self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU: while training, each negative entry's slope drawn uniform in [lower, upper);
    after `eval()`, the slope (lower + upper) / 2."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3):
        if not lower <= upper:
            raise ValueError(f"RReLU: lower {lower} must not exceed upper {upper}")
        self.lower, self.upper = lower, upper

    def forward(self, x: Tensor) -> Tensor:
        return F.rrelu(x, self.lower, self.upper, training=self.training)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}"
