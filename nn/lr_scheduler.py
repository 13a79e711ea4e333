"""Learning-rate schedulers as PyTorch has them: `LambdaLR`, `StepLR`, `CosineAnnealingLR`, `OneCycleLR`.

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


class OneCycleLR(LRScheduler):
    """The one-cycle policy (Smith & Topin 2017, https://arxiv.org/abs/1708.07120), as PyTorch's: the rate
    rises from max_lr/div_factor to max_lr over the first pct_start of total_steps, then falls to
    max_lr/(div_factor·final_div_factor), each phase along half a cosine ("cos") or a line ("linear");
    three_phase=True comes back down to the start before the final fall. With cycle_momentum, the momentum
    (SGD's momentum, Adam's first beta) moves the other way, max_momentum → base_momentum → max_momentum.
    Stepping past total_steps raises, as PyTorch does."""

    def __init__(self, optimizer, max_lr, total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False, last_epoch: int = -1):
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("OneCycleLR: pass total_steps, or epochs and steps_per_epoch")
            total_steps = epochs * steps_per_epoch
        if total_steps < 1 or not 0 <= pct_start <= 1 or anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: need total_steps >= 1, pct_start in [0, 1] and anneal_strategy 'cos' or "
                             f"'linear', got {total_steps}, {pct_start}, {anneal_strategy!r}")
        self.total_steps, self.anneal_strategy, self.cycle_momentum = total_steps, anneal_strategy, cycle_momentum
        groups = optimizer.param_groups
        per_group = (lambda v: list(v) if isinstance(v, (list, tuple)) else [v] * len(groups))
        for group, top, low, high in zip(groups, per_group(max_lr), per_group(base_momentum), per_group(max_momentum)):
            if last_epoch == -1:
                group["initial_lr"] = top / div_factor
            group["max_lr"], group["min_lr"] = top, group["initial_lr"] / final_div_factor
            if cycle_momentum:
                if "momentum" not in group and "betas" not in group:
                    raise ValueError("OneCycleLR: cycle_momentum needs an optimizer with momentum or betas "
                                     "(pass cycle_momentum=False)")
                group["base_momentum"], group["max_momentum"] = low, high
                self._set_momentum(group, high)
        first = float(pct_start * total_steps) - 1
        # (end step, start key, end key) of each phase; the lr keys, and the momentum keys in the same order
        if three_phase:
            self.phases = [(first, "initial_lr", "max_lr"), (2 * first, "max_lr", "initial_lr"),
                           (total_steps - 1, "initial_lr", "min_lr")]
            self.momenta = [("max_momentum", "base_momentum"), ("base_momentum", "max_momentum"),
                            ("max_momentum", "max_momentum")]
        else:
            self.phases = [(first, "initial_lr", "max_lr"), (total_steps - 1, "max_lr", "min_lr")]
            self.momenta = [("max_momentum", "base_momentum"), ("base_momentum", "max_momentum")]
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _set_momentum(group: dict, value: float) -> None:
        if "betas" in group:
            group["betas"] = (value, *tuple(group["betas"])[1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def _phase(self) -> tuple[int, float]:
        """The phase the current step is in, and how far through it (0 to 1)."""
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: stepped {step} times, past total_steps={self.total_steps}")
        start = 0.0
        for i, (end, _, _) in enumerate(self.phases):
            if step <= end or i == len(self.phases) - 1:
                return i, (step - start) / (end - start)
            start = end
        raise AssertionError("unreachable")

    def _rate(self, base_lr, index):
        group = self.optimizer.param_groups[index]
        i, pct = self._phase()
        _, low, high = self.phases[i]
        if self.cycle_momentum:
            a, b = self.momenta[i]
            self._set_momentum(group, self._anneal(group[a], group[b], pct))
        return self._anneal(group[low], group[high], pct)
