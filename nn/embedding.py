"""`Embedding`: a lookup table from token ids to vectors, the first layer of every language model."""
from __future__ import annotations

import numpy as np

from nn.module import Module
from tinygrad_like import Tensor


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
