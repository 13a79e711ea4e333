"""torch.cuda.amp: PyTorch's older spelling of torch.amp's GradScaler and autocast for CUDA, which is never
available here, so both are the disabled no-ops PyTorch makes them without CUDA (see torch.amp)."""
from __future__ import annotations

from tinygrad_like.torch import amp as _amp
from tinygrad_like.torch._refuse import module_getattr

__all__ = ["GradScaler", "autocast"]


class GradScaler(_amp.GradScaler):
    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


class autocast(_amp.autocast):
    def __init__(self, enabled: bool = True, dtype=None, cache_enabled=None):
        super().__init__("cuda", dtype, enabled, cache_enabled)


__getattr__ = module_getattr("torch.cuda.amp")
