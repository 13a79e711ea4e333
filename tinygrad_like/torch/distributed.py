"""torch.distributed on an engine that runs in one process on one CPU: scripts that import it unconditionally
(nanoGPT's `from torch.distributed import init_process_group, destroy_process_group`) import it, and
is_available() / is_initialized() answer False, so a script checks and runs alone. Starting a process
group, or anything else here, raises RuntimeError saying the engine is one process on one CPU."""
from __future__ import annotations

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size", "barrier", "all_reduce"]

_ONE = "the engine runs as one process on one CPU; there is no process group"


def is_available() -> bool:
    """False: no distributed backend here."""
    return False


def is_initialized() -> bool:
    return False


def _refused(name: str):
    def refused(*args, **kwargs):
        raise RuntimeError(f"tinygrad_like.torch: torch.distributed.{name}: {_ONE}. Run the script without "
                           "torchrun (one process), as nanoGPT does when RANK is not set.")
    refused.__name__ = refused.__qualname__ = name
    refused.__doc__ = f"Raises: {_ONE}."
    return refused


init_process_group, destroy_process_group, get_rank, get_world_size, barrier, all_reduce = (
    _refused(n) for n in ("init_process_group", "destroy_process_group", "get_rank", "get_world_size", "barrier",
                          "all_reduce"))


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return _refused(name)
