"""torch.cuda on an engine without a GPU: is_available() is False, seeding is a no-op (as PyTorch's
is without CUDA), and anything else says the engine runs on the CPU."""
from tinygrad_like.torch._refuse import NotInEngine

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "synchronize", "is_bf16_supported",
           "empty_cache", "amp"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed) -> None:
    """Nothing to seed: there is no GPU stream (torch.manual_seed seeds the engine's)."""


manual_seed_all = manual_seed


def synchronize(device=None) -> None:
    """Nothing to wait for: every op has finished when it returns."""


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: no CUDA device (nanoGPT asks before choosing its dtype)."""
    return False


def empty_cache() -> None:
    """Nothing cached: there is no GPU memory."""


from tinygrad_like.torch.cuda import amp  # noqa: E402 (after the names it may need)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotInEngine(f"tinygrad_like.torch has no torch.cuda.{name}: the engine runs on the CPU (numpy), "
                      "and torch.cuda.is_available() is False")
