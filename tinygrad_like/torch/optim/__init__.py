"""torch.optim on the engine: nn/optim.py's SGD, Adam and AdamW with PyTorch's defaults (lr=1e-3,
AdamW's weight_decay=0.01). Options the engine lacks (amsgrad, maximize, dampening, ...) raise
NotImplementedError when set; the ones that only choose PyTorch's kernels (foreach, fused) are ignored."""
from __future__ import annotations

import nn.optim as _optim
from nn.optim import Optimizer
from tinygrad_like.torch._refuse import module_getattr
from tinygrad_like.torch.optim import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler"]


def _unsupported(name: str, options: dict) -> None:
    given = [k for k, v in options.items() if v]
    if given:
        raise NotImplementedError(f"tinygrad_like.torch: optim.{name} does not provide {', '.join(given)}")

# PyTorch's keyword-only options that choose its kernels (foreach, fused) or its graph capture (capturable,
# differentiable) are in each signature, accepted and ignored: the engine has one update per optimizer.
# nanoGPT reads `'fused' in inspect.signature(torch.optim.AdamW).parameters`.


class SGD(_optim.SGD):
    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False, foreach=None,
                 differentiable: bool = False, fused=None):
        _unsupported("SGD", {"dampening": dampening, "maximize": maximize})
        super().__init__(params, lr, momentum=momentum, nesterov=nesterov, weight_decay=weight_decay)


class Adam(_optim.Adam):
    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.0,
                 amsgrad: bool = False, *, foreach=None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused=None, decoupled_weight_decay: bool = False):
        _unsupported("Adam", {"amsgrad": amsgrad, "maximize": maximize,
                              "decoupled_weight_decay (use AdamW)": decoupled_weight_decay})
        super().__init__(params, lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)


class AdamW(_optim.AdamW):
    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.01,
                 amsgrad: bool = False, *, maximize: bool = False, foreach=None, capturable: bool = False,
                 differentiable: bool = False, fused=None):
        _unsupported("AdamW", {"amsgrad": amsgrad, "maximize": maximize})
        super().__init__(params, lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)


__getattr__ = module_getattr("torch.optim")
