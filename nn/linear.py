"""`Linear`: y = x Wᵀ + b, the layer every projection in a transformer is made of; `Bilinear`: y = x1ᵀ A x2 + b."""
from __future__ import annotations

import math

from nn.module import Module
from tinygrad_like import Tensor
from tinygrad_like import functional as F


class Linear(Module):
    """x (..., in_features) -> (..., out_features). weight (out, in), bias (out,), as in PyTorch.

    Initialised like PyTorch: uniform in ±1/√in_features, so the output variance does not grow with width.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, dtype="float32"):
        bound = 1 / math.sqrt(in_features)
        self.in_features, self.out_features = in_features, out_features
        self.weight = Tensor.uniform(out_features, in_features, low=-bound, high=bound, dtype=dtype,
                                     requires_grad=True)
        self.bias = (Tensor.uniform(out_features, low=-bound, high=bound, dtype=dtype, requires_grad=True)
                     if bias else None)

    def forward(self, x: Tensor) -> Tensor:
        if x.shape[-1] != self.in_features:
            raise ValueError(f"Linear: input of shape {x.shape} has {x.shape[-1]} features, "
                             f"expected {self.in_features}")
        return x.linear(self.weight, self.bias)  # (..., out) = x Wᵀ + b

    def extra_repr(self) -> str:
        return f"{self.in_features}, {self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """x1 (..., in1), x2 (..., in2) -> (..., out): y_k = x1ᵀ A_k x2 + b_k, weight (out, in1, in2), bias (out,),
    both uniform in ±1/√in1 (PyTorch's init)."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, dtype="float32"):
        bound = 1 / math.sqrt(in1_features)
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Tensor.uniform(out_features, in1_features, in2_features, low=-bound, high=bound, dtype=dtype,
                                     requires_grad=True)
        self.bias = (Tensor.uniform(out_features, low=-bound, high=bound, dtype=dtype, requires_grad=True)
                     if bias else None)

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.bilinear(x1, x2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
