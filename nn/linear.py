"""`Linear`: y = x Wᵀ + b, the layer every projection in a transformer is made of."""
from __future__ import annotations

import math

from nn.module import Module
from tinygrad_like import Tensor


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
