"""torch.amp (and torch.cuda.amp, torch.autocast): mixed precision, which the engine does not do (it
computes in float32 or float64), present as the no-ops PyTorch makes them where they change nothing.

- GradScaler(enabled=False), or enabled for CUDA, which is never available here (PyTorch warns and
  disables itself then too): scale() returns its input, step(opt) is opt.step(), unscale_ and update
  do nothing, get_scale() is 1.0. Enabled for the CPU, it would scale float16 gradients the engine
  never computes: refused.
- autocast(..., enabled=False), or for CUDA (warned and disabled, as PyTorch does without CUDA): a
  context manager and decorator that changes nothing. Enabled for the CPU, it would compute in
  bfloat16 or float16: refused with the reason.
"""
from __future__ import annotations

import functools
import warnings

from tinygrad_like.torch._refuse import module_getattr

__all__ = ["GradScaler", "autocast", "is_autocast_available"]

_WHY = "the engine computes in float32 or float64 only (no float16/bfloat16)"


def _device_kind(device) -> str:
    return str(getattr(device, "type", device)).split(":")[0]


def is_autocast_available(device_type: str) -> bool:
    """False: the engine has no mixed precision on any device."""
    return False


class GradScaler:
    """Loss scaling for float16 training: here always the disabled scaler (see the module docstring)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        if enabled and _device_kind(device) == "cpu":
            raise NotImplementedError(f"tinygrad_like.torch: GradScaler(device='cpu', enabled=True): {_WHY}, so "
                                      "there are no float16 gradients to scale; pass enabled=False")
        if enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available (tinygrad_like runs on "
                          "the CPU). Disabling.", stacklevel=2)
        self._enabled = False

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer) -> None:
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None) -> None:
        pass

    def get_scale(self) -> float:
        return 1.0

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        pass


class autocast:
    """`with torch.autocast(device_type, dtype, enabled=False):` or as a decorator: changes nothing."""

    def __init__(self, device_type: str = "cuda", dtype=None, enabled: bool = True, cache_enabled=None):
        kind = _device_kind(device_type)
        if enabled and kind == "cuda":
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available (tinygrad_like runs on "
                          "the CPU). Disabling autocast.", stacklevel=2)
        elif enabled:
            raise NotImplementedError(f"tinygrad_like.torch: autocast(device_type={device_type!r}, enabled=True): "
                                      f"{_WHY}; pass enabled=False or leave autocast out")
        self.device_type, self.fast_dtype, self._enabled = kind, dtype, False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def run(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return run


__getattr__ = module_getattr("torch.amp")
