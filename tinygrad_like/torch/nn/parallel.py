"""torch.nn.parallel: DistributedDataParallel and DataParallel import (scripts import them unconditionally)
and raise on use: the engine runs as one process on one CPU, so there is nothing to replicate a model over."""
from __future__ import annotations

from tinygrad_like.torch._refuse import module_getattr

__all__ = ["DistributedDataParallel", "DataParallel"]


class DistributedDataParallel:
    """Raises when made: one process on one CPU (use the model itself)."""

    def __init__(self, module=None, *args, **kwargs):
        raise RuntimeError("tinygrad_like.torch: nn.parallel.DistributedDataParallel: the engine runs as one process "
                           "on one CPU; use the model itself (nanoGPT does when it is not started by torchrun)")


class DataParallel(DistributedDataParallel):
    """Raises when made: one CPU, no devices to split a batch over."""

    def __init__(self, module=None, *args, **kwargs):
        raise RuntimeError("tinygrad_like.torch: nn.DataParallel: the engine runs on one CPU; use the model itself")


__getattr__ = module_getattr("torch.nn.parallel")
