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
    ChannelShuffle,
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    CosineEmbeddingLoss,
    CosineSimilarity,
    CrossEntropyLoss,
    CrossMapLRN2d,
    CTCLoss,
    Flatten,
    GaussianNLLLoss,
    Hardshrink,
    HingeEmbeddingLoss,
    HuberLoss,
    Identity,
    KLDivLoss,
    L1Loss,
    LocalResponseNorm,
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
    PixelShuffle,
    PixelUnshuffle,
    PoissonNLLLoss,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    RNNBase,
    RNNCellBase,
    Sequential,
    Sigmoid,
    SmoothL1Loss,
    SoftMarginLoss,
    Softmax,
    Softmax2d,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
    Unflatten,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from tinygrad_like import Tensor
from tinygrad_like import functional as F
from tinygrad_like import random as _random
from tinygrad_like.torch._refuse import check_device, module_getattr
from tinygrad_like.torch.nn import functional, init, parallel, utils
from tinygrad_like.torch.nn._layers import (
    GRU,
    LSTM,
    RNN,
    AdaptiveLogSoftmaxWithLoss,
    AlphaDropout,
    Bilinear,
    Buffer,
    Container,
    Dropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    Embedding,
    EmbeddingBag,
    FeatureAlphaDropout,
    GroupNorm,
    GRUCell,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LayerNorm,
    Linear,
    LinearCrossEntropyLoss,
    LinearCrossEntropyOptions,
    LSTMCell,
    RNNCell,
    _last_dim,
    factory_kwargs,
)
from tinygrad_like.torch.nn.parallel import DataParallel
from tinygrad_like.torch.nn.transformer import (
    MultiheadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

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
           "LinearCrossEntropyOptions", "CTCLoss", "MultiheadAttention", "Transformer", "TransformerDecoder",
           "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer", "AdaptiveLogSoftmaxWithLoss",
           "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "Softmax2d", "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d",
           "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "BatchNorm2d", "BatchNorm3d", "ChannelShuffle", "CrossMapLRN2d", "LocalResponseNorm", "PixelShuffle",
           "PixelUnshuffle", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNNCellBase"]


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


class BatchNorm2d(_nn.BatchNorm2d):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None):
        super().__init__(num_features, eps=eps, momentum=momentum, affine=affine,
                         track_running_stats=track_running_stats, dtype=_dtype(dtype, device, "BatchNorm2d"))


class BatchNorm3d(_nn.BatchNorm3d):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None):
        super().__init__(num_features, eps=eps, momentum=momentum, affine=affine,
                         track_running_stats=track_running_stats, dtype=_dtype(dtype, device, "BatchNorm3d"))


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


__getattr__ = module_getattr("torch.nn")
