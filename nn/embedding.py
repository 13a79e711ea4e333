"""`Embedding`: a lookup table from token ids to vectors, the first layer of every language model;
`EmbeddingBag`: the sum, mean or max of bags of its rows, without the (bags, length, dim) tensor between."""
from __future__ import annotations

import numpy as np

from nn.module import Module
from tinygrad_like import Tensor
from tinygrad_like import functional as F


class Embedding(Module):
    """ids (...) integers -> (..., dim): row `id` of `weight` (num_embeddings, dim) for every id.

    The lookup is getitem with an integer array (a gather), so its backward is a scatter-add: a row
    used twice in a batch receives the sum of both gradients. Initialised N(0, 1), as in PyTorch.
    """

    def __init__(self, num_embeddings: int, dim: int, dtype="float32"):
        self.num_embeddings, self.dim = num_embeddings, dim
        self.weight = Tensor.randn(num_embeddings, dim, dtype=dtype, requires_grad=True)

    def forward(self, ids) -> Tensor:
        ids = np.asarray(ids._data if isinstance(ids, Tensor) else ids)
        if ids.size == 0 and ids.dtype.kind == "f":
            ids = ids.astype(np.int64)  # np.asarray([]) is float64; an empty list is still valid ids
        if ids.dtype.kind not in "iu":
            raise TypeError(f"Embedding: ids must be integers, got dtype {ids.dtype} "
                            "(token ids index rows of the table; round or cast them to int first)")
        bad = ids[(ids < 0) | (ids >= self.num_embeddings)]
        if bad.size:
            raise IndexError(f"Embedding: id {bad.flat[0]} is outside the table of {self.num_embeddings} rows "
                             f"(valid ids are 0..{self.num_embeddings - 1})")
        return self.weight[ids]  # (..., dim)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.dim}"


class EmbeddingBag(Module):
    """Bags of ids -> (B, dim): the sum, mean or max of each bag's rows of weight (num_embeddings, dim),
    initialised N(0, 1) (the padding_idx row zero). Called as bag(input, offsets=None, per_sample_weights=None),
    input (B, L) or (n,) cut at offsets (F.embedding_bag)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm=None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, mode: str = "mean", include_last_offset: bool = False,
                 padding_idx=None, dtype="float32"):
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
        self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.include_last_offset = include_last_offset
        self.padding_idx = None if padding_idx is None else padding_idx % num_embeddings
        self.weight = Tensor.randn(num_embeddings, embedding_dim, dtype=dtype, requires_grad=True)
        if self.padding_idx is not None:
            self.weight._data[self.padding_idx] = 0

    def forward(self, input, offsets=None, per_sample_weights=None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, False, per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"
