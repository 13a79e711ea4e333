"""torch.nn.utils: clip_grad_norm_ (nn/optim.py's clip_grad_norm, returning the norm as a tensor) and
clip_grad_value_ (each gradient entry clamped to [-clip_value, clip_value])."""
from __future__ import annotations

import numpy as np

from nn.optim import clip_grad_norm
from tinygrad_like import Tensor
from tinygrad_like.torch._refuse import module_getattr

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None) -> Tensor:
    """Scale all gradients together so their joint L2 norm is at most max_norm; returns the norm before."""
    if norm_type != 2.0:
        raise NotImplementedError(f"tinygrad_like.torch: clip_grad_norm_ uses the L2 norm only, got {norm_type=}")
    parameters = list(parameters) if not isinstance(parameters, Tensor) else [parameters]
    total = clip_grad_norm(parameters, max_norm)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total gradient norm is {total}")
    return Tensor(np.float32(total))


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient entry to [-clip_value, clip_value] (parameters without a gradient are skipped).
    Each clamped gradient is a new array, as in clip_grad_norm_ (the engine may share gradient arrays)."""
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    clip_value = float(clip_value)
    for p in parameters:
        if p.grad is not None:
            p.grad = Tensor(np.clip(p.grad.numpy(), -clip_value, clip_value))


__getattr__ = module_getattr("torch.nn.utils")
