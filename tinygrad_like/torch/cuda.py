"""torch.cuda on an engine without a GPU: is_available() is False, seeding is a no-op (as PyTorch's
is without CUDA), and anything else says the engine runs on the CPU."""
from tinygrad_like.torch._refuse import NotInEngine

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "synchronize"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed) -> None:
    """Nothing to seed: there is no GPU stream (torch.manual_seed seeds the engine's)."""


manual_seed_all = manual_seed


def synchronize(device=None) -> None:
    """Nothing to wait for: every op has finished when it returns."""


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotInEngine(f"tinygrad_like.torch has no torch.cuda.{name}: the engine runs on the CPU (numpy), "
                      "and torch.cuda.is_available() is False")
