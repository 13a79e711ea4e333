"""torch.utils.data.dataset: what a DataLoader reads. A map-style Dataset answers `dataset[i]` and `len(dataset)`;
an IterableDataset is iterated. TensorDataset, Subset, ConcatDataset and random_split build on them."""
from __future__ import annotations

import bisect
import math

import numpy as np

from tinygrad_like import Tensor
from tinygrad_like.torch._refuse import module_getattr
from tinygrad_like.torch._tensors import randperm

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "ChainDataset", "StackDataset",
           "random_split"]


class Dataset:
    """Subclass and define __getitem__(i) and __len__()."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Subclass and define __iter__(): a stream of examples (the DataLoader batches them as they come)."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


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
    """The examples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """The examples of several datasets one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: needs at least one dataset")
        self.cumulative_sizes = np.cumsum([len(d) for d in self.datasets]).tolist()

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"ConcatDataset: index {index} out of range for {len(self)} examples")
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class ChainDataset(IterableDataset):
    """Several IterableDatasets read one after the other, as one stream."""

    def __init__(self, datasets):
        self.datasets = list(datasets)

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset: only IterableDatasets can be chained, got {type(d).__name__}")
            yield from d

    def __len__(self):
        return sum(len(d) for d in self.datasets)


class StackDataset(Dataset):
    """Datasets of one length read side by side: StackDataset(a, b)[i] is (a[i], b[i]), StackDataset(x=a, y=b)[i]
    is {"x": a[i], "y": b[i]}."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("StackDataset: pass the datasets by position (tuples) or by name (dicts), not both")
        self.datasets = args or kwargs
        parts = list(args or kwargs.values())
        if not parts:
            raise ValueError("StackDataset: needs at least one dataset")
        lengths = {len(d) for d in parts}
        if len(lengths) != 1:
            raise ValueError(f"StackDataset: the datasets' lengths differ: {[len(d) for d in parts]}")
        self._length = lengths.pop()

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {name: d[index] for name, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


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


__getattr__ = module_getattr("torch.utils.data.dataset")
