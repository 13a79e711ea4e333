"""torch.utils.data.sampler: the order in which a DataLoader reads a map-style dataset's examples.

A sampler is an iterable of indices with a length; a batch sampler is an iterable of lists of indices.
Random samplers draw from their `generator` (a torch.Generator) or, without one, from the library's stream,
which torch.manual_seed seeds, making the same draws in the same order as PyTorch's samplers, so a seeded
program reads PyTorch's batches. A sampler with replacement yields its indices as it draws them, so
`RandomSampler(data, replacement=True, num_samples=int(1e10))` (minGPT's and makemore's endless stream)
costs nothing up front.
"""
from __future__ import annotations

import numpy as np

from tinygrad_like import random as _random
from tinygrad_like.torch._refuse import module_getattr
from tinygrad_like.torch._tensors import Generator, float64, multinomial, randint, randperm, tensor

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]

_CHUNK = 32  # indices drawn with replacement per call of the random stream


class Sampler:
    """Subclass and define __iter__ (indices) and, when known, __len__."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


def seed_from_library_stream() -> int:
    """A 64-bit seed drawn from the library's stream, as PyTorch's `torch.empty((), dtype=torch.int64).random_()`
    draws it (a DataLoader pass's base seed, a RandomSampler's fresh Generator)."""
    return int(_random.random_bits((), np.int64))


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices into data_source: a fresh permutation each pass (replacement=False; num_samples
    larger than the dataset takes several permutations one after the other), or num_samples independent
    uniform draws (replacement=True)."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement must be a bool, got {replacement!r}")
        if num_samples is not None and (not isinstance(num_samples, int) or num_samples <= 0):
            raise ValueError(f"RandomSampler: num_samples must be a positive int, got {num_samples!r}")
        self.data_source, self.replacement, self._num_samples = data_source, replacement, num_samples
        self.generator = generator

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        """PyTorch's draws: without a generator, a fresh Generator seeded from the library's stream; then 32
        indices at a time (replacement), or whole permutations and a last one cut short (which is drawn even
        when nothing of it is taken)."""
        n = len(self.data_source)
        if n == 0:
            raise ValueError("RandomSampler: the dataset is empty")
        generator = self.generator
        if generator is None:
            generator = Generator().manual_seed(seed_from_library_stream())
        if self.replacement:
            for _ in range(self.num_samples // _CHUNK):
                yield from randint(0, n, (_CHUNK,), generator=generator).tolist()
            yield from randint(0, n, (self.num_samples % _CHUNK,), generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a fresh random order each pass."""

    def __init__(self, indices, generator=None):
        self.indices, self.generator = list(indices), generator

    def __iter__(self):
        order = randperm(len(self.indices), generator=self.generator).tolist()
        return iter([self.indices[i] for i in order])

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """num_samples indices in range(len(weights)), index i drawn with probability weights[i] / sum(weights)."""

    def __init__(self, weights, num_samples: int, replacement: bool = True, generator=None):
        self.weights = np.asarray(weights.tolist() if hasattr(weights, "tolist") else weights, dtype=np.float64)
        if self.weights.ndim != 1 or (self.weights < 0).any() or not np.isfinite(self.weights).all() \
                or self.weights.sum() <= 0:
            raise ValueError("WeightedRandomSampler: weights must be a 1-d sequence of finite non-negative numbers "
                             "with a positive sum")
        if not replacement and num_samples > (self.weights > 0).sum():
            raise ValueError(f"WeightedRandomSampler: cannot draw {num_samples} distinct indices from "
                             f"{(self.weights > 0).sum()} with positive weight")
        self.num_samples, self.replacement, self.generator = int(num_samples), replacement, generator

    def __iter__(self):
        """torch.multinomial of the weights in float64, as PyTorch's sampler draws them."""
        drawn = multinomial(tensor(self.weights, dtype=float64), self.num_samples, self.replacement,
                            generator=self.generator)
        return iter(drawn.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of batch_size indices from `sampler`, in its order; drop_last drops a last, shorter list."""

    def __init__(self, sampler, batch_size: int, drop_last: bool):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"BatchSampler: batch_size must be a positive int, got {batch_size!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


__getattr__ = module_getattr("torch.utils.data.sampler")
