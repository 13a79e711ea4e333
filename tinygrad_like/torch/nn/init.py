"""torch.nn.init: nn/init.py's in-place initialisers under PyTorch's names and argument order
(PyTorch's normal_ takes (tensor, mean, std); ours (tensor, std, mean))."""
from __future__ import annotations

from nn import init as _init
from nn.init import (  # noqa: F401 (re-exported)
    calculate_gain,
    constant_,
    kaiming_normal_,
    kaiming_uniform_,
    ones_,
    trunc_normal_,
    uniform_,
    xavier_normal_,
    xavier_uniform_,
    zeros_,
)
from tinygrad_like.torch._refuse import module_getattr
from tinygrad_like.torch._tensors import _drawing

__all__ = ["normal_", "zeros_", "ones_", "uniform_", "constant_", "xavier_uniform_", "xavier_normal_",
           "kaiming_uniform_", "kaiming_normal_", "trunc_normal_", "calculate_gain"]


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    """Fill `tensor` in place with N(mean, std²) samples."""
    with _drawing(generator):
        return _init.normal_(tensor, std=std, mean=mean)


__getattr__ = module_getattr("torch.nn.init")
