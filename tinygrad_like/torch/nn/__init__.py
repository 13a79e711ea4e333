"""torch.nn on the engine: nn/'s Module, layers and losses, under PyTorch's names and constructor
arguments. Where PyTorch's signature differs from ours (device=/dtype=None, Dropout's p=0.5, LayerNorm's
normalized_shape and elementwise_affine), a subclass here translates the arguments and nothing else:
the layer is nn/'s, its forward is nn/'s.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import nn as _nn
from nn import (
    GELU,
    GLU,
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CosineSimilarity,
    CrossEntropyLoss,
    CTCLoss,
    Flatten,
    GaussianNLLLoss,
    Hardshrink,
    HingeEmbeddingLoss,
    HuberLoss,
    Identity,
    KLDivLoss,
    L1Loss,
    LogSigmoid,
    LogSoftmax,
    MarginRankingLoss,
    Module,
    ModuleDict,
    ModuleList,
    MSELoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss,
    NLLLoss2d,
    PairwiseDistance,
    ParameterDict,
    ParameterList,
    PoissonNLLLoss,
    Sequential,
    Sigmoid,
    SmoothL1Loss,
    SoftMarginLoss,
    Softmax,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
    Unflatten,
)
from tinygrad_like import Tensor
from tinygrad_like import functional as F
from tinygrad_like import random as _random
from tinygrad_like.torch._refuse import check_device, module_getattr
from tinygrad_like.torch.nn import functional, init, parallel, utils
from tinygrad_like.torch.nn._layers import (
    AlphaDropout,
    Bilinear,
    Buffer,
    Container,
    Embedding,
    EmbeddingBag,
    GroupNorm,
    factory_kwargs,
)
from tinygrad_like.torch.nn.parallel import DataParallel

__all__ = ["Module", "Parameter", "Linear", "Embedding", "LayerNorm", "RMSNorm", "BatchNorm1d", "Dropout", "ReLU",
           "LeakyReLU", "GELU", "Tanh", "Sigmoid", "SiLU", "Softmax", "LogSoftmax", "Flatten", "Identity", "Sequential",
           "ModuleList", "ModuleDict", "CrossEntropyLoss", "MSELoss", "DataParallel", "functional", "init", "parallel",
           "utils", "ELU", "CELU", "SELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LogSigmoid",
           "Mish", "PReLU", "RReLU", "ReLU6", "Softmin", "Softplus", "Softshrink", "Softsign", "Tanhshrink",
           "Threshold", "Unflatten", "L1Loss", "NLLLoss", "NLLLoss2d", "BCELoss", "BCEWithLogitsLoss", "HuberLoss",
           "SmoothL1Loss", "KLDivLoss", "GaussianNLLLoss", "PoissonNLLLoss", "MarginRankingLoss", "HingeEmbeddingLoss",
           "CosineEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss",
           "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CosineSimilarity",
           "PairwiseDistance", "GroupNorm", "Bilinear", "EmbeddingBag", "AlphaDropout", "ParameterList",
           "ParameterDict", "Container", "Buffer", "factory_kwargs", "LinearCrossEntropyLoss",
           "LinearCrossEntropyOptions", "CTCLoss"]


def _dtype(dtype, device, layer: str) -> str:
    check_device(device, layer)
    return "float32" if dtype is None else np.dtype(dtype).name


class Parameter(Tensor):
    """A leaf tensor that requires grad and shares `data`'s memory; assigned to a Module, it is a parameter.
    (Every leaf that requires grad is one here; Parameter is the name PyTorch code writes.)"""

    __slots__ = ()

    def __init__(self, data=None, requires_grad: bool = True):
        data = np.zeros(0, dtype=np.float32) if data is None else data
        super().__init__(data._data if isinstance(data, Tensor) else data, requires_grad=requires_grad)


class Linear(_nn.Linear):
    """nn/'s Linear, initialised by PyTorch's reset_parameters (same draws, same order, same bounds), so under
    torch.manual_seed its weights are PyTorch's."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        with _random.drawing_from(np.random.default_rng(0)):      # nn/'s own init, into a throwaway stream
            super().__init__(in_features, out_features, bias=bias, dtype=_dtype(dtype, device, "Linear"))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """weight: kaiming_uniform_ with a=√5, i.e. uniform in ±√3·gain/√in_features with gain √(2/(1+5));
        bias: uniform in ±1/√in_features. PyTorch writes both so; the bounds are computed its way, to the bit."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)


def _last_dim(normalized_shape, layer: str) -> int:
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if len(shape) != 1:
        raise NotImplementedError(f"tinygrad_like.torch: nn.{layer} normalises the last dimension only, "
                                  f"got normalized_shape={normalized_shape}")
    return int(shape[0])


class LayerNorm(_nn.LayerNorm):
    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__(_last_dim(normalized_shape, "LayerNorm"), eps=eps, bias=bias and elementwise_affine,
                         dtype=_dtype(dtype, device, "LayerNorm"))
        if not elementwise_affine:
            self.weight = None


class RMSNorm(_nn.RMSNorm):
    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None,
                 dtype=None):
        dtype = _dtype(dtype, device, "RMSNorm")
        # PyTorch's eps=None is the dtype's machine epsilon
        super().__init__(_last_dim(normalized_shape, "RMSNorm"), eps=float(np.finfo(dtype).eps) if eps is None
                         else eps, dtype=dtype)
        if not elementwise_affine:
            self.weight = None


class BatchNorm1d(_nn.BatchNorm1d):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None):
        super().__init__(num_features, eps=eps, momentum=momentum, affine=affine,
                         track_running_stats=track_running_stats, dtype=_dtype(dtype, device, "BatchNorm1d"))


class Dropout(_nn.Dropout):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__(p)


# inplace=True is accepted and the layer returns a new tensor with PyTorch's values (see nn.functional's docstring).

class ReLU(_nn.ReLU):
    def __init__(self, inplace: bool = False):
        self.inplace = inplace


class SiLU(_nn.SiLU):
    def __init__(self, inplace: bool = False):
        self.inplace = inplace


class LeakyReLU(Module):
    """x where x > 0, negative_slope·x elsewhere (F.leaky_relu)."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, x: Tensor) -> Tensor:
        return functional.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class ELU(_nn.ELU):
    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__(alpha)
        self.inplace = inplace


class CELU(_nn.CELU):
    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__(alpha)
        self.inplace = inplace


class SELU(_nn.SELU):
    def __init__(self, inplace: bool = False):
        self.inplace = inplace


class Mish(_nn.Mish):
    def __init__(self, inplace: bool = False):
        self.inplace = inplace


class Hardsigmoid(_nn.Hardsigmoid):
    def __init__(self, inplace: bool = False):
        self.inplace = inplace


class Hardswish(_nn.Hardswish):
    def __init__(self, inplace: bool = False):
        self.inplace = inplace


class Hardtanh(_nn.Hardtanh):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False, min_value=None,
                 max_value=None):
        # min_value and max_value are PyTorch's deprecated spellings of min_val and max_val
        super().__init__(min_val if min_value is None else min_value, max_val if max_value is None else max_value)
        self.inplace = inplace


class ReLU6(_nn.ReLU6):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


class RReLU(_nn.RReLU):
    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__(lower, upper)
        self.inplace = inplace


class Threshold(_nn.Threshold):
    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__(threshold, value)
        self.inplace = inplace


class PReLU(_nn.PReLU):
    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__(num_parameters, init, dtype=_dtype(dtype, device, "PReLU"))


@dataclass
class LinearCrossEntropyOptions:
    """PyTorch's plan for computing linear_cross_entropy in chunks of the batch, so the (batch, classes) logits
    are never held whole. Accepted and kept; the engine computes the logits whole, which gives the same value."""
    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None


class LinearCrossEntropyLoss(Module):
    """A classifier head and its loss: cross_entropy(linear(input), target) with the Linear inside, named
    `linear` (weight (C·d1·…·dK, in)) as in PyTorch, so its state_dict loads either way."""

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple = (), bias: bool = False,
                 device=None, dtype=None, reduction: str = "mean", weight=None, ignore_index=None,
                 label_smoothing: float = 0.0, options: LinearCrossEntropyOptions | None = None):
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise ValueError(f"LinearCrossEntropyLoss: weight {tuple(weight.shape)} must be ({num_classes},)")
        if not 0 <= label_smoothing <= 1:
            raise ValueError(f"LinearCrossEntropyLoss: label_smoothing must be in [0, 1], got {label_smoothing}")
        self.num_classes, self.out_features = num_classes, tuple(out_features)
        self.reduction, self.weight, self.ignore_index = reduction, weight, ignore_index
        self.label_smoothing, self.options = label_smoothing, options
        self.linear = Linear(in_features, math.prod(self.out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype)

    def forward(self, input: Tensor, target) -> Tensor:
        shape = (self.num_classes, *self.out_features)
        bias = None if self.linear.bias is None else self.linear.bias.reshape(shape)
        return F.linear_cross_entropy(input, self.linear.weight.reshape(*shape, self.linear.in_features), target,
                                      linear_bias=bias, weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                      options=self.options)


__getattr__ = module_getattr("torch.nn")
