"""torch.nn's layers added for issue 26 under PyTorch's constructor arguments (device=/dtype=, PyTorch's
option names): each subclass translates the arguments and nothing else; the layer and its forward are nn/'s.
Also PyTorch's small helpers around layers: nn.Buffer, nn.Container and nn.factory_kwargs, and the
LinearCrossEntropyLoss head. (Linear, LayerNorm and Dropout are here too, so that the layers built of them,
here and in transformer.py, need not import the package.)
"""
from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import dataclass

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


class Dropout(_nn.Dropout):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__(p)


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


class Dropout1d(_nn.Dropout1d):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__(p)
        self.inplace = inplace


class Dropout2d(_nn.Dropout2d):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__(p)
        self.inplace = inplace


class Dropout3d(_nn.Dropout3d):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__(p)
        self.inplace = inplace


class FeatureAlphaDropout(_nn.FeatureAlphaDropout):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__(p)
        self.inplace = inplace


class InstanceNorm1d(_nn.InstanceNorm1d):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         dtype=_dtype(dtype, device, type(self).__name__))


class InstanceNorm2d(InstanceNorm1d):
    spatial = 2


class InstanceNorm3d(InstanceNorm1d):
    spatial = 3


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


ASMOutput = namedtuple("ASMOutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """The adaptive softmax of Grave et al. 2016 (https://arxiv.org/abs/1609.04309) for many classes with a
    skewed frequency: the `cutoffs[0]` most frequent classes and one entry per cluster in the head
    Linear(in_features, cutoffs[0] + n_clusters); each cluster of rarer classes in its own tail, a projection to
    in_features / div_value^(i+1) then a Linear to the cluster's classes. log p(class) = the head's log-softmax of
    the class (shortlist) or of its cluster, plus the cluster's log-softmax of the class.
    Called as asm(input (N, in), target (N,)) -> (output: log p(target) (N,), loss: its negated mean)."""

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0, head_bias: bool = False,
                 device=None, dtype=None):
        cutoffs = list(cutoffs)
        if (not cutoffs or cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs must be a sorted list of unique positive integers, "
                             f"each less than n_classes - 1 = {n_classes - 1}, got {cutoffs}")
        self.in_features, self.n_classes, self.div_value, self.head_bias = in_features, n_classes, div_value, head_bias
        self.cutoffs = cutoffs + [n_classes]
        self.shortlist_size, self.n_clusters = self.cutoffs[0], len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = _nn.ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(_nn.Sequential(Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                                            Linear(hidden, size, bias=False, device=device, dtype=dtype)))


    def forward(self, input: Tensor, target):
        unbatched = input.ndim == 1
        x = input.unsqueeze(0) if unbatched else input
        targets = np.asarray(target._data if isinstance(target, Tensor) else target).reshape(-1)
        if x.ndim != 2 or x.shape[1] != self.in_features or targets.shape != (x.shape[0],):
            raise ValueError(f"AdaptiveLogSoftmaxWithLoss: input {input.shape} must be (N, {self.in_features}) or "
                             f"({self.in_features},), with one target per row, got {np.shape(target)}")
        if ((targets < 0) | (targets >= self.n_classes)).any():
            raise IndexError(f"AdaptiveLogSoftmaxWithLoss: targets must be in [0, {self.n_classes - 1}]")
        cluster = np.searchsorted(self.cutoffs, targets, side="right")       # 0: the shortlist, i: tail i − 1
        head_column = np.where(cluster == 0, targets, self.shortlist_size + cluster - 1)
        output = self.head(x).log_softmax(1)[np.arange(len(targets)), head_column]
        for i in range(1, self.n_clusters + 1):
            rows = np.nonzero(cluster == i)[0]
            if rows.size:
                logp = self.tail[i - 1](x[rows]).log_softmax(1)               # the cluster's classes
                within = logp[np.arange(rows.size), targets[rows] - self.cutoffs[i - 1]]
                output = output + x._result(np.zeros(len(targets), dtype=x.dtype), None).scatter_add(0, rows, within)
        loss = (-output).mean()
        return ASMOutput(output.squeeze(0) if unbatched else output, loss)

    def log_prob(self, input: Tensor) -> Tensor:
        """log p(class) of every class: (N, in) -> (N, n_classes)."""
        head = self.head(input).log_softmax(-1)
        parts = [head[..., :self.shortlist_size]]
        for i in range(self.n_clusters):
            column = head[..., self.shortlist_size + i:self.shortlist_size + i + 1]
            parts.append(self.tail[i](input).log_softmax(-1) + column)
        return Tensor.cat(*parts, dim=-1)

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row: (N, in) -> (N,)."""
        return self.log_prob(input).argmax(-1)


class RNN(_nn.RNN):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None):
        super().__init__(input_size, hidden_size, num_layers, nonlinearity, bias, batch_first, dropout, bidirectional,
                         dtype=_dtype(dtype, device, "RNN"))


class LSTM(_nn.LSTM):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None):
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, proj_size,
                         dtype=_dtype(dtype, device, "LSTM"))


class GRU(_nn.GRU):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         dtype=_dtype(dtype, device, "GRU"))


class RNNCell(_nn.RNNCell):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, nonlinearity, dtype=_dtype(dtype, device, "RNNCell"))


class LSTMCell(_nn.LSTMCell):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, dtype=_dtype(dtype, device, "LSTMCell"))


class GRUCell(_nn.GRUCell):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, dtype=_dtype(dtype, device, "GRUCell"))
