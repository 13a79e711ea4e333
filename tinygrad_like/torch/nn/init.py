"""torch.nn.init: nn/init.py's in-place initialisers under PyTorch's names and argument order (PyTorch's
normal_ takes (tensor, mean, std); ours (tensor, std, mean)), each taking PyTorch's `generator=`."""
from __future__ import annotations

import functools
import math

from nn import init as _init
from nn.init import calculate_gain
from tinygrad_like.torch._refuse import module_getattr
from tinygrad_like.torch._tensors import _drawing

__all__ = ["normal_", "zeros_", "ones_", "uniform_", "constant_", "xavier_uniform_", "xavier_normal_",
           "kaiming_uniform_", "kaiming_normal_", "trunc_normal_", "calculate_gain"]


def _with_generator(init):
    @functools.wraps(init)
    def initialise(tensor, *args, generator=None, **kwargs):
        with _drawing(generator):
            return init(tensor, *args, **kwargs)
    return initialise


def _normal(tensor, mean: float = 0.0, std: float = 1.0):
    """Fill `tensor` in place with N(mean, std²) samples."""
    return _init.normal_(tensor, std=std, mean=mean)


def _xavier_uniform(tensor, gain: float = 1.0):
    """Uniform in ±√3·gain·√(2/(fan_in + fan_out)): nn/init's bound, computed in PyTorch's order so that the
    float32 bounds, and so the draws, are PyTorch's."""
    fan_in, fan_out = _init._fans(tensor, "xavier_uniform_")
    bound = math.sqrt(3.0) * (gain * math.sqrt(2.0 / float(fan_in + fan_out)))
    return _init.uniform_(tensor, -bound, bound)


normal_ = _with_generator(_normal)
normal_.__name__ = normal_.__qualname__ = "normal_"
xavier_uniform_ = _with_generator(_xavier_uniform)
xavier_uniform_.__name__ = xavier_uniform_.__qualname__ = "xavier_uniform_"
uniform_, xavier_normal_, kaiming_uniform_, kaiming_normal_, trunc_normal_ = (
    _with_generator(f) for f in (_init.uniform_, _init.xavier_normal_, _init.kaiming_uniform_,
                                 _init.kaiming_normal_, _init.trunc_normal_))
zeros_, ones_, constant_ = _init.zeros_, _init.ones_, _init.constant_

__getattr__ = module_getattr("torch.nn.init")
