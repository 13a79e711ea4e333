"""torch.nn's layers added for issue 26 under PyTorch's constructor arguments (device=/dtype=, PyTorch's
option names): each subclass translates the arguments and nothing else; the layer and its forward are nn/'s.
Also PyTorch's small helpers around layers: nn.Buffer, nn.Container and nn.factory_kwargs.
"""
from __future__ import annotations

import math

import numpy as np

import nn as _nn
from nn import Module
from tinygrad_like import Tensor
from tinygrad_like import functional as F
from tinygrad_like import random as _random
from tinygrad_like.torch._refuse import check_device
from tinygrad_like.torch.nn import init


def _dtype(dtype, device, layer: str) -> str:
    check_device(device, layer)
    return "float32" if dtype is None else np.dtype(dtype).name


def _no_sparse(sparse: bool, layer: str) -> None:
    if sparse:
        raise NotImplementedError(f"nn.{layer}: sparse=True is not provided: the engine's gradients are dense numpy "
                                  "arrays (leave sparse=False; the gradient is the same, stored densely)")


class GroupNorm(_nn.GroupNorm):
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True):
        super().__init__(num_groups, num_channels, eps, affine, bias, dtype=_dtype(dtype, device, "GroupNorm"))


class Bilinear(_nn.Bilinear):
    """nn/'s Bilinear, initialised by PyTorch's reset_parameters: weight, then bias, uniform in ±1/√in1."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        with _random.drawing_from(np.random.default_rng(0)):      # nn/'s own init, into a throwaway stream
            super().__init__(in1_features, in2_features, out_features, bias, dtype=_dtype(dtype, device, "Bilinear"))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)


class Embedding(_nn.Embedding):
    """nn/'s Embedding with PyTorch's options: padding_idx (that row starts at zero and gets no gradient),
    max_norm/norm_type (rows looked up are renormed in place), scale_grad_by_freq, _weight (a given table)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx=None, max_norm=None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False, _weight=None, _freeze: bool = False,
                 device=None, dtype=None):
        _no_sparse(sparse, "Embedding")
        super().__init__(num_embeddings, embedding_dim, dtype=_dtype(dtype, device, "Embedding"))
        self.embedding_dim = embedding_dim
        if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
            raise ValueError(f"nn.Embedding: padding_idx {padding_idx} must be within the {num_embeddings} rows")
        self.padding_idx = None if padding_idx is None else padding_idx % num_embeddings
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        if _weight is not None:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"nn.Embedding: _weight {tuple(_weight.shape)} must be ({num_embeddings}, "
                                 f"{embedding_dim})")
            self.weight = Tensor(np.array(_weight._data if isinstance(_weight, Tensor) else _weight,
                                          dtype=self.weight.dtype), requires_grad=not _freeze)
        elif self.padding_idx is not None:
            self.weight._data[self.padding_idx] = 0

    def forward(self, ids) -> Tensor:
        if self.padding_idx is None and self.max_norm is None and not self.scale_grad_by_freq:
            return super().forward(ids)
        return F.embedding(ids, self.weight, self.padding_idx, self.max_norm, self.norm_type, self.scale_grad_by_freq)


class EmbeddingBag(_nn.EmbeddingBag):
    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm=None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False, _weight=None,
                 include_last_offset: bool = False, padding_idx=None, device=None, dtype=None):
        _no_sparse(sparse, "EmbeddingBag")
        super().__init__(num_embeddings, embedding_dim, max_norm, norm_type, scale_grad_by_freq, mode,
                         include_last_offset, padding_idx, dtype=_dtype(dtype, device, "EmbeddingBag"))
        if _weight is not None:
            self.weight._data[...] = np.asarray(_weight._data if isinstance(_weight, Tensor) else _weight)


class AlphaDropout(_nn.AlphaDropout):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__(p)
        self.inplace = inplace


class Container(Module):
    """PyTorch's long-deprecated Container(name=module, ...): a Module holding the modules given by name."""

    def __init__(self, **modules):
        for name, module in modules.items():
            setattr(self, name, module)


class Buffer(Tensor):
    """A tensor that is a buffer when assigned to a Module attribute (`self.mask = nn.Buffer(t)`), as if
    registered with register_buffer(name, t, persistent); it shares t's array."""

    __slots__ = ("persistent",)
    is_buffer = True

    def __init__(self, data=None, *, persistent: bool = True):
        data = np.zeros(0, dtype=np.float32) if data is None else data
        super().__init__(data._data if isinstance(data, Tensor) else data)
        self.persistent = persistent


def factory_kwargs(kwargs) -> dict:
    """The device=, dtype= and memory_format= among a layer's **kwargs, as one dict to pass to the tensor
    factories (PyTorch's helper for writing layers), merged with kwargs["factory_kwargs"]; any other key,
    or a key given both ways, is a TypeError."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    unexpected = set(kwargs) - simple - {"factory_kwargs"}
    if unexpected:
        raise TypeError(f"factory_kwargs: unexpected keys {sorted(unexpected)}; expected {sorted(simple)} or "
                        "factory_kwargs")
    merged = dict(kwargs.get("factory_kwargs", {}))
    for key in simple & set(kwargs):
        if key in merged:
            raise TypeError(f"factory_kwargs: {key} is given both in **kwargs and in factory_kwargs")
        merged[key] = kwargs[key]
    return merged
