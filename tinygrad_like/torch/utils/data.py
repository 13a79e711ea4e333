"""torch.utils.data: Dataset, TensorDataset, Subset, random_split and a single-process DataLoader.

The DataLoader batches examples by stacking them with the engine's Tensor.stack (`default_collate`);
with shuffle=True each pass draws a new order from `generator` (or from the engine's stream, which
torch.manual_seed seeds), so a seeded script sees the same batches every run.
"""
from __future__ import annotations

import math

import numpy as np

from tinygrad_like import Tensor
from tinygrad_like.torch._refuse import module_getattr
from tinygrad_like.torch._tensors import randperm

__all__ = ["Dataset", "TensorDataset", "Subset", "random_split", "DataLoader", "default_collate"]


class Dataset:
    """Subclass and define __getitem__(i) and __len__()."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")


class TensorDataset(Dataset):
    """Example i is (t[i] for t in tensors); all tensors share their first dimension."""

    def __init__(self, *tensors: Tensor):
        if not tensors or len({t.shape[0] for t in tensors}) != 1:
            raise ValueError(f"TensorDataset: tensors must share the first dimension, got shapes "
                             f"{[t.shape for t in tensors]}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None) -> list[Subset]:
    """Split into non-overlapping random subsets of the given lengths (or fractions summing to 1)."""
    n = len(dataset)
    if all(0 <= f <= 1 for f in lengths) and math.isclose(sum(lengths), 1) and sum(lengths) != n:
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError(f"random_split: lengths {list(lengths)} do not add up to the dataset's {n} examples")
    order = randperm(n, generator=generator).tolist()
    starts = np.cumsum([0, *lengths])
    return [Subset(dataset, order[a:b]) for a, b in zip(starts[:-1], starts[1:])]


def default_collate(batch: list):
    """A list of examples -> one batch: tensors and arrays stacked on a new first dimension, numbers made a
    tensor (ints int64, floats float64, as PyTorch does), tuples and dicts collated field by field."""
    first = batch[0]
    if isinstance(first, Tensor):
        return Tensor.stack(*batch)
    if isinstance(first, np.ndarray):
        return Tensor(np.stack(batch))
    if isinstance(first, (bool, int, float, np.number)):
        return Tensor(np.array(batch, dtype=np.float64 if isinstance(first, float) else None))
    if isinstance(first, dict):
        return {key: default_collate([example[key] for example in batch]) for key in first}
    if isinstance(first, (tuple, list)):
        return [default_collate(list(field)) for field in zip(*batch)]
    return batch


class DataLoader:
    """Batches of `batch_size` examples of `dataset`, in order or (shuffle=True) in a fresh random order
    each pass; drop_last drops a last, smaller batch. One process: num_workers is accepted and ignored."""

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool = False, sampler=None, batch_sampler=None,
                 num_workers: int = 0, collate_fn=None, pin_memory: bool = False, drop_last: bool = False,
                 generator=None, **kwargs):
        if sampler is not None or batch_sampler is not None:
            raise NotImplementedError("tinygrad_like.torch: DataLoader does not provide sampler/batch_sampler; "
                                      "use shuffle= and generator=")
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, shuffle, drop_last
        self.collate_fn = collate_fn or default_collate
        self.generator = generator

    def _order(self) -> list[int]:
        n = len(self.dataset)
        return randperm(n, generator=self.generator).tolist() if self.shuffle else list(range(n))

    def __iter__(self):
        order = self._order()
        if self.batch_size is None:  # PyTorch's "no batching": examples one by one
            yield from (self.dataset[i] for i in order)
            return
        for start in range(0, len(order), self.batch_size):
            indices = order[start:start + self.batch_size]
            if len(indices) < self.batch_size and self.drop_last:
                return
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self) -> int:
        n = len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


__getattr__ = module_getattr("torch.utils.data")
