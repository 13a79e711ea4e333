"""Learning-rate schedulers as PyTorch has them: `LambdaLR`, `StepLR`, `CosineAnnealingLR`.

A scheduler sets every parameter group's "lr" from the group's starting rate (`initial_lr`) and a
count of `step()` calls (`last_epoch`, 0 right after construction, which already sets the rate for
step 0). Call `scheduler.step()` after `optimizer.step()`, once per epoch or per batch.
"""
from __future__ import annotations

import math


class LRScheduler:
    """Sets each group's lr to `_rate(initial_lr, last_epoch)`; subclasses write `_rate`."""

    def __init__(self, optimizer, last_epoch: int = -1):
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def _rate(self, base_lr: float, index: int) -> float:
        raise NotImplementedError

    def step(self) -> None:
        self.last_epoch += 1
        for i, (group, base) in enumerate(zip(self.optimizer.param_groups, self.base_lrs)):
            group["lr"] = self._rate(base, i)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        """The rate of each group set by the last step()."""
        return list(self._last_lr)

    def state_dict(self) -> dict:
        return {k: v for k, v in vars(self).items() if k != "optimizer" and not callable(v)}

    def load_state_dict(self, state: dict) -> None:
        vars(self).update(state)


class LambdaLR(LRScheduler):
    """lr = initial_lr · lr_lambda(last_epoch); lr_lambda may be one function or one per group."""

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        n = len(optimizer.param_groups)
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * n
        if len(self.lr_lambdas) != n:
            raise ValueError(f"LambdaLR: {len(self.lr_lambdas)} functions for {n} parameter groups")
        super().__init__(optimizer, last_epoch)

    def _rate(self, base_lr, index):
        return base_lr * self.lr_lambdas[index](self.last_epoch)


class StepLR(LRScheduler):
    """lr = initial_lr · gamma^(last_epoch // step_size): divided by 1/gamma every step_size steps."""

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        if step_size < 1:
            raise ValueError(f"StepLR: step_size must be >= 1, got {step_size}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def _rate(self, base_lr, index):
        return base_lr * self.gamma ** (self.last_epoch // self.step_size)


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + ½(initial_lr − eta_min)(1 + cos(π·last_epoch / T_max)): from initial_lr down to
    eta_min in T_max steps along half a cosine (Loshchilov & Hutter 2016, https://arxiv.org/abs/1608.03983,
    without restarts; past T_max it rises again, as PyTorch's does)."""

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):
        if T_max < 1:
            raise ValueError(f"CosineAnnealingLR: T_max must be >= 1, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def _rate(self, base_lr, index):
        return self.eta_min + 0.5 * (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max))
