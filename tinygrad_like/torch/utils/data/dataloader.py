"""torch.utils.data.dataloader: DataLoader, which reads a dataset in batches, and default_collate.

The order comes from a sampler (shuffle=True: a RandomSampler; else a SequentialSampler, or the
sampler= given), grouped by a BatchSampler (or the batch_sampler= given). Examples are batched by
`collate_fn` (default_collate stacks them with the engine's Tensor.stack). An IterableDataset is read
in its own order. Everything loads in the calling process: num_workers > 0 is accepted, and the first
such loader says once that it loads in the main process (the engine is one process; the examples these
programs load are a few index lookups, which a worker process would not speed up). pin_memory is a
no-op: there is no GPU to pin for.
"""
from __future__ import annotations

import sys

import numpy as np

from tinygrad_like import Tensor
from tinygrad_like.torch import _settings
from tinygrad_like.torch._refuse import module_getattr
from tinygrad_like.torch._tensors import _drawing
from tinygrad_like.torch.utils.data.dataset import IterableDataset
from tinygrad_like.torch.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    SequentialSampler,
    seed_from_library_stream,
)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

_said_main_process = False


def default_collate(batch: list):
    """A list of examples -> one batch: tensors and arrays stacked on a new first dimension, numbers made a
    tensor (ints int64, floats float64, as PyTorch does), tuples and dicts collated field by field."""
    first = batch[0]
    if isinstance(first, Tensor):
        if not any(t.requires_grad for t in batch):
            return _stacked(batch)
        return Tensor.stack(*batch)                   # examples that require grad: stacked in the graph
    if isinstance(first, np.ndarray):
        return Tensor(np.stack(batch))
    if isinstance(first, (bool, int, float, np.number)):
        return Tensor(np.array(batch, dtype=np.float64 if isinstance(first, float) else None))
    if isinstance(first, dict):
        return {key: default_collate([example[key] for example in batch]) for key in first}
    if isinstance(first, (tuple, list)):
        return [default_collate(list(field)) for field in zip(*batch)]
    return batch


def _stacked(batch: list) -> Tensor:
    """Tensor.stack of examples that need no gradient, done by numpy in one call: the same array (a copy of
    each example into its row), without a Reshape per example and a Cat; Tensor.stack's error when the
    shapes differ."""
    try:
        return Tensor._result(np.stack([t._data for t in batch]), None)
    except ValueError:
        return Tensor.stack(*batch)                   # raises, naming the shapes


def default_convert(data):
    """What a DataLoader with batch_size=None gives for each example: numpy arrays (and numbers of numpy's
    types) made tensors, through tuples, lists and dicts; anything else as it is (Python numbers included)."""
    if isinstance(data, np.ndarray) and data.dtype.kind in "biuf":
        return Tensor(data)
    if isinstance(data, np.generic) and data.dtype.kind in "biuf":
        return Tensor(np.asarray(data))
    if isinstance(data, dict):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):                    # a namedtuple keeps its type
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (tuple, list)):
        return type(data)(default_convert(d) for d in data)
    return data


def get_worker_info():
    """None: the code runs in the main process (as it always does here)."""
    return None


def _say_main_process(num_workers: int) -> None:
    global _said_main_process
    if num_workers > 0 and (not _said_main_process or _settings.SETTINGS["warn_always"]):
        _said_main_process = True
        print(f"tinygrad_like.torch: DataLoader(num_workers={num_workers}) loads in the main process "
              "(the engine runs in one process)", file=sys.stderr)


class DataLoader:
    """Batches of `batch_size` examples of `dataset` in the order of `sampler` (default: in order, or
    shuffle=True for a fresh random order each pass drawn from `generator`); or the index lists of
    `batch_sampler`; drop_last drops a last, smaller batch. batch_size=None yields the examples one by one."""

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None, sampler=None,
                 batch_sampler=None, num_workers: int = 0, collate_fn=None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn=None, multiprocessing_context=None,
                 generator=None, *, prefetch_factor=None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True):
        if num_workers < 0:
            raise ValueError(f"DataLoader: num_workers must be >= 0, got {num_workers}")
        iterable = isinstance(dataset, IterableDataset)
        if iterable and (shuffle or sampler is not None or batch_sampler is not None):
            raise ValueError("DataLoader: an IterableDataset has its own order; shuffle, sampler and batch_sampler "
                             "do not apply")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler and shuffle=True both choose the order; pass one of them")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError("DataLoader: batch_sampler gives the batches; batch_size, shuffle, sampler and "
                             "drop_last do not apply with it")
        _say_main_process(num_workers)
        self.dataset, self.num_workers, self.pin_memory, self.generator = dataset, num_workers, pin_memory, generator
        self.drop_last, self.timeout, self.worker_init_fn = drop_last, timeout, worker_init_fn
        self.collate_fn = collate_fn or default_collate
        self.batch_size = None if batch_sampler is not None else batch_size
        if iterable:
            self.sampler, self.batch_sampler = None, None
            return
        if sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_sampler is None and batch_size is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.sampler, self.batch_sampler = sampler, batch_sampler

    def __iter__(self):
        with _drawing(self.generator):               # PyTorch draws each pass's base seed for its workers
            seed_from_library_stream()
        if self.sampler is None:                     # an IterableDataset
            yield from self._iterable_batches()
        elif self.batch_sampler is None:             # batch_size=None: examples one by one
            yield from (self.dataset[i] for i in self.sampler)
        else:
            for indices in self.batch_sampler:
                yield self.collate_fn([self.dataset[i] for i in indices])

    def _iterable_batches(self):
        if self.batch_size is None:
            yield from self.dataset
            return
        batch = []
        for example in self.dataset:
            batch.append(example)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self.sampler is None:
            raise TypeError("DataLoader: an IterableDataset's loader has no len()")
        return len(self.batch_sampler) if self.batch_sampler is not None else len(self.sampler)


__getattr__ = module_getattr("torch.utils.data.dataloader")
