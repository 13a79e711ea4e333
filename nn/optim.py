"""Optimizers (SGD, Adam, AdamW), gradient clipping and the warmup + cosine learning-rate schedule.

An optimizer turns each parameter's gradient g = ∂loss/∂p into an update of p. The updates run on
the numpy arrays in place, outside the autograd graph, and in the parameter's own dtype: every scalar
is a Python float (numpy treats it as "weak", so float32 stays float32; an np.float64 scalar would
silently upcast). The formulas are PyTorch's (torch.optim), so results agree with it to float precision.

Parameter groups work as in PyTorch: `params` is a list of Tensors, or a list of dicts each holding
"params" and its own settings, e.g. no weight decay on biases and layer norms:

    opt = AdamW([{"params": matrices}, {"params": vectors, "weight_decay": 0.0}], lr=6e-4)
    for step in range(max_steps):
        for group in opt.param_groups:
            group["lr"] = cosine_schedule(step, 6e-4, warmup_steps=100, total_steps=max_steps)
        ...; loss.backward(); clip_grad_norm(model.parameters(), 1.0); opt.step(); opt.zero_grad()
"""
from __future__ import annotations

import math

import numpy as np

from tinygrad_like import Tensor, dispatch


class Optimizer:
    """Parameter groups, per-parameter state, zero_grad and state dicts; subclasses write `_update`.

    param_groups: list of dicts {"params": [Tensor, ...], <setting>: value, ...} with the defaults filled in.
    state: {id(param): {"step": int, <buffer name>: array shaped like the param}} (created on first update).
    """

    _buffers: tuple = ()  # names of the per-parameter arrays in `state`, e.g. ("exp_avg", "exp_avg_sq")
    _required: tuple = ("step",)  # entries every non-empty per-parameter state must have

    def __init__(self, params, defaults: dict):
        name = type(self).__name__
        if isinstance(params, Tensor):
            raise TypeError(f"{name}: params must be a list of Tensors or of dicts, got a single Tensor "
                            "(wrap it in a list)")
        params = list(params)
        if not params:
            raise ValueError(f"{name}: got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.defaults, self.param_groups, self.state = dict(defaults), [], {}
        seen = set()
        for i, group in enumerate(groups):
            if not isinstance(group, dict) or "params" not in group:
                raise TypeError(f"{name}: group {i} must be a dict with a 'params' entry (mixing Tensors and "
                                "dicts in one list is not allowed)")
            ps = [group["params"]] if isinstance(group["params"], Tensor) else list(group["params"])
            for p in ps:
                if not isinstance(p, Tensor):
                    raise TypeError(f"{name}: group {i} holds a {type(p).__name__}, not a Tensor")
                if id(p) in seen:
                    raise ValueError(f"{name}: a parameter of shape {p.shape} appears more than once")
                seen.add(id(p))
            unknown = [k for k in group if k != "params" and k not in defaults]
            if unknown:
                raise ValueError(f"{name}: group {i} has unknown settings {unknown}; known: {sorted(defaults)}")
            full = {**defaults, **group, "params": ps}
            self._check_group(f"{name}: group {i}" if len(groups) > 1 else name, full)
            self.param_groups.append(full)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients, ready for the next backward: set them to None (PyTorch's default), or
        with set_to_none=False fill each existing gradient with zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None if set_to_none or p.grad is None else Tensor(np.zeros_like(p._data))

    def step(self) -> None:
        """Update every parameter that has a gradient; parameters whose .grad is None are skipped."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = np.asarray(p.grad._data, dtype=p.dtype)  # may be a read-only view shared with others: never written
                if g.shape != p.shape:
                    raise ValueError(f"{type(self).__name__}.step: gradient of shape {g.shape} for a parameter "
                                     f"of shape {p.shape}")
                self._update(p._data, g, self.state.setdefault(id(p), {}), group)

    def _check_group(self, where: str, group: dict) -> None:
        """Raise a clear error for a bad setting (e.g. a negative lr); may normalise values in place."""

    def _update(self, p: np.ndarray, g: np.ndarray, state: dict, group: dict) -> None:
        """Update the array p in place from its gradient g (read-only), using and updating `state`."""
        raise NotImplementedError

    # ------------------------------------------------------------ state dicts
    def state_dict(self) -> dict:
        """{"state": {index: {"step": int, buffer: array copy}}, "param_groups": [{settings, "params": [index]}]}.

        Parameters are numbered in order across the groups, as in PyTorch, so the state dict does not
        depend on the Tensor objects and can be loaded into a fresh optimizer over a fresh model.
        """
        groups, state, index = [], {}, 0
        for group in self.param_groups:
            ids = list(range(index, index + len(group["params"])))
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
            for i, p in zip(ids, group["params"]):
                if id(p) in self.state:
                    state[i] = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in self.state[id(p)].items()}
            index += len(ids)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore moments, step counts and settings. Everything is checked first: a state dict that does not
        fit (other groups, sizes, shapes or buffers) raises and leaves the optimizer unchanged."""
        new_groups, new_state = self._check_state_dict(state_dict)
        for group, saved in zip(self.param_groups, new_groups):
            group.update(saved)
        self.state = new_state

    def _check_state_dict(self, state_dict: dict) -> tuple[list, dict]:
        """Validate a state dict against this optimizer; return (settings per group, state keyed by id)."""
        name = f"{type(self).__name__}.load_state_dict"
        if not isinstance(state_dict, dict) or set(state_dict) != {"state", "param_groups"}:
            raise ValueError(f"{name}: expected a dict with 'state' and 'param_groups'")
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"{name}: the state has {len(saved_groups)} parameter groups, "
                             f"the optimizer has {len(self.param_groups)}")
        params, new_groups = [], []
        for i, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(f"{name}: group {i} has {len(saved['params'])} parameters in the state, "
                                 f"{len(group['params'])} in the optimizer")
            missing = [k for k in self.defaults if k not in saved]
            if missing:
                raise ValueError(f"{name}: group {i} lacks settings {missing} (saved by another optimizer?)")
            settings = {k: (tuple(v) if isinstance(self.defaults[k], tuple) else v)
                        for k, v in saved.items() if k in self.defaults}
            self._check_group(f"{name}: group {i}", {**group, **settings})
            new_groups.append(settings)
            params += list(zip(saved["params"], group["params"]))
        by_index = dict(params)
        new_state = {}
        for index, s in state_dict["state"].items():
            if index not in by_index:
                raise ValueError(f"{name}: state for parameter {index}, but the groups only list {sorted(by_index)}")
            p = by_index[index]
            unknown = [k for k in s if k != "step" and k not in self._buffers]
            lacking = [k for k in self._required if s and k not in s]
            if lacking:
                raise ValueError(f"{name}: parameter {index} state lacks {lacking}")
            if unknown:
                raise ValueError(f"{name}: parameter {index} has unknown state {unknown}; "
                                 f"{type(self).__name__} keeps {list(self._buffers)}")
            for k in self._buffers:
                if k in s and tuple(np.shape(s[k])) != p.shape:
                    raise ValueError(f"{name}: parameter {index} '{k}' has shape {tuple(np.shape(s[k]))} in the "
                                     f"state but the parameter has shape {p.shape}")
            new_state[id(p)] = {k: (np.array(v, dtype=p.dtype) if k in self._buffers else int(v)) for k, v in s.items()}
        return new_groups, new_state


# ---------------------------------------------------------------- SGD

class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum (plain or Nesterov) and L2 weight decay.

        g ← g + wd·p                                  (weight decay, if wd > 0)
        b ← g on the first step, else μ·b + g         (momentum buffer, if μ > 0)
        g ← g + μ·b (nesterov)  or  g ← b             (if μ > 0)
        p ← p − lr·g
    """

    _buffers = ("momentum_buffer",)

    def __init__(self, params, lr: float, momentum: float = 0.0, nesterov: bool = False, weight_decay: float = 0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum, nesterov=nesterov, weight_decay=weight_decay))

    def _check_group(self, where, group):
        _check_hyper(where, group, "lr", "momentum", "weight_decay")
        if group["nesterov"] and group["momentum"] <= 0:
            raise ValueError(f"{where}: nesterov momentum needs momentum > 0")

    def _update(self, p, g, state, group):
        lr, mu, wd = float(group["lr"]), float(group["momentum"]), float(group["weight_decay"])
        state["step"] = state.get("step", 0) + 1
        if wd != 0:
            g = g + wd * p
        if mu != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = np.array(g, dtype=p.dtype)  # a copy of the first gradient
            else:
                buf *= mu
                buf += g
            g = g + mu * buf if group["nesterov"] else buf
        p -= lr * g


# ---------------------------------------------------------------- Adam, AdamW

class Adam(Optimizer):
    """Adam (Kingma & Ba 2014, https://arxiv.org/abs/1412.6980) with L2 weight decay added to the gradient.

        g ← g + wd·p                                  (Adam's weight decay: part of the gradient)
        m ← β₁·m + (1−β₁)·g                           (first moment, `exp_avg`)
        v ← β₂·v + (1−β₂)·g²                          (second moment, `exp_avg_sq`)
        p ← p − lr/(1−β₁ᵗ) · m / (√v/√(1−β₂ᵗ) + ε)    (bias-corrected, t = this parameter's step count)
    """

    _buffers = ("exp_avg", "exp_avg_sq")
    _required = ("step", "exp_avg", "exp_avg_sq")
    _decoupled = False

    def __init__(self, params, lr: float, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def step(self) -> None:
        """The parameters of a group that have gradients take their Adam step together (`adam_group`):
        the same arithmetic as `_update`, but one numpy call per operation for the whole group instead of
        one per parameter, which is most of the cost for a model of many small arrays. The moments live
        in a flat buffer per group, and each parameter's state holds views of it (so state_dict and
        checkpoints see them as usual). Parameters that differ in dtype or step count (e.g. some were
        skipped earlier) are updated one by one."""
        for i, group in enumerate(self.param_groups):
            params = [p for p in group["params"] if p.grad is not None]
            states = [self.state.setdefault(id(p), {}) for p in params]
            if len({p.dtype for p in params}) != 1 or len({s.get("step", 0) for s in states}) != 1:
                self._step_each(params, group)
                continue
            m, v = self._flat_moments(i, params, states)
            grads = [np.asarray(p.grad._data, dtype=p.dtype) for p in params]
            if any(g.shape != p.shape for g, p in zip(grads, params)):
                self._step_each(params, group)  # a gradient of the wrong shape: let the check name it
                continue
            t = states[0].get("step", 0) + 1
            dispatch.kernel("adam_group", adam_group)([p._data for p in params], grads, m, v, *self._hyper(group),
                                                       self._decoupled, t)    # p._data updated in place
            for s in states:
                s["step"] = t

    def _step_each(self, params, group) -> None:
        for p in params:
            g = np.asarray(p.grad._data, dtype=p.dtype)
            if g.shape != p.shape:
                raise ValueError(f"{type(self).__name__}.step: gradient of shape {g.shape} for a parameter "
                                 f"of shape {p.shape}")
            self._update(p._data, g, self.state.setdefault(id(p), {}), group)

    def _flat_moments(self, index: int, params, states) -> tuple[np.ndarray, np.ndarray]:
        """The group's flat (exp_avg, exp_avg_sq), rebuilt (from the per-parameter arrays, or zeros)
        whenever the states no longer view it: after load_state_dict, or when the set of params changes."""
        cache = getattr(self, "_flat", {}).get(index)
        if cache is not None and all(s.get("exp_avg") is not None and s["exp_avg"].base is cache[0]
                                     and s["exp_avg_sq"].base is cache[1] for s in states) \
                and sum(p.numel() for p in params) == cache[0].size:
            return cache
        flats = []
        for key in ("exp_avg", "exp_avg_sq"):
            flats.append(np.concatenate([np.asarray(s[key], dtype=p.dtype).reshape(-1) if key in s
                                         else np.zeros(p.numel(), dtype=p.dtype) for p, s in zip(params, states)]))
        start = 0
        for p, s in zip(params, states):
            s.setdefault("step", 0)
            s["exp_avg"] = flats[0][start:start + p.numel()].reshape(p.shape)
            s["exp_avg_sq"] = flats[1][start:start + p.numel()].reshape(p.shape)
            start += p.numel()
        self.__dict__.setdefault("_flat", {})[index] = tuple(flats)
        return tuple(flats)

    def _check_group(self, where, group):
        _check_hyper(where, group, "lr", "eps", "weight_decay")
        betas = tuple(group["betas"])
        if len(betas) != 2 or not all(0 <= b < 1 for b in betas):
            raise ValueError(f"{where}: betas must be two numbers in [0, 1), got {group['betas']}")
        group["betas"] = betas

    @staticmethod
    def _hyper(group) -> tuple:
        """(lr, beta1, beta2, eps, weight_decay) of a group, as floats."""
        beta1, beta2 = (float(b) for b in group["betas"])
        return float(group["lr"]), beta1, beta2, float(group["eps"]), float(group["weight_decay"])

    def _update(self, param, grad, state, group):
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(param), exp_avg_sq=np.zeros_like(param))
        state["step"] += 1
        arrays = (param, grad, state["exp_avg"], state["exp_avg_sq"])
        dispatch.kernel("adam_update", adam_update)(*arrays, *self._hyper(group), self._decoupled, state["step"])


def adam_update(param: np.ndarray, grad: np.ndarray, exp_avg: np.ndarray, exp_avg_sq: np.ndarray, lr: float,
                beta1: float, beta2: float, eps: float, wd: float, decoupled: bool, t: int) -> None:
    """Adam's step t (AdamW's when decoupled) on the arrays param, exp_avg and exp_avg_sq in place, given
    grad. The fast path runs the same arithmetic in cache-sized pieces, or a one-pass kernel with the `fast`
    extra (tinygrad_like/fast/adam.py, registered with dispatch as "adam_update")."""
    step_size, v_scale = lr / (1 - beta1 ** t), 1 / math.sqrt(1 - beta2 ** t)
    p, g, m, v = param, grad, exp_avg, exp_avg_sq
    if wd != 0 and decoupled:
        p *= 1 - lr * wd  # AdamW: shrink the weights directly, outside the adaptive scaling
    elif wd != 0:
        g = g + wd * p
    scratch = np.multiply(g, 1 - beta1)
    m *= beta1
    m += scratch                                  # m ← β₁m + (1−β₁)g
    np.multiply(g, g, out=scratch)
    scratch *= 1 - beta2
    v *= beta2
    v += scratch                                  # v ← β₂v + (1−β₂)g²
    np.sqrt(v, out=scratch)
    scratch *= v_scale
    scratch += eps                                # √v/√(1−β₂ᵗ) + ε
    np.divide(m, scratch, out=scratch)
    scratch *= step_size
    p -= scratch                                  # p ← p − lr/(1−β₁ᵗ) · m/(…)


def adam_group(params: list, grads: list, exp_avg: np.ndarray, exp_avg_sq: np.ndarray, lr: float, beta1: float,
               beta2: float, eps: float, wd: float, decoupled: bool, t: int) -> None:
    """adam_update on a group of parameters at once: params and grads are lists of arrays of the same
    shapes, exp_avg and exp_avg_sq flat arrays holding the parameters' moments end to end. The weights
    and the gradients are joined into one flat array each, so that each numpy step is one call for the
    group, and the weights are written back in place. The fast path registers its own with dispatch as
    "adam_group" (tinygrad_like/fast/adam.py: with the `fast` extra a kernel updates each parameter where it lies)."""
    w = np.concatenate([p.reshape(-1) for p in params])
    g = np.concatenate([g.reshape(-1) for g in grads])
    adam_update(w, g, exp_avg, exp_avg_sq, lr, beta1, beta2, eps, wd, decoupled, t)
    start = 0
    for p in params:
        p[...] = w[start:start + p.size].reshape(p.shape)
        start += p.size


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter 2017, https://arxiv.org/abs/1711.05101):

        p ← p − lr·wd·p, then the Adam step without weight decay in the gradient.

    Decay in the gradient (Adam) gets divided by √v, so weights with large gradients decay less; here
    every weight decays at the same rate lr·wd. The default wd=0.01 is PyTorch's.
    """

    _decoupled = True

    def __init__(self, params, lr: float, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.01):
        super().__init__(params, lr, betas=betas, eps=eps, weight_decay=weight_decay)


def _check_hyper(where: str, group: dict, *keys) -> None:
    for key in keys:
        if not group[key] >= 0:
            raise ValueError(f"{where}: {key} must be >= 0, got {group[key]}")


# ---------------------------------------------------------------- clipping and schedules

def clip_grad_norm(params, max_norm: float) -> float:
    """Scale all gradients by min(1, max_norm/(‖g‖ + 1e-6)), where ‖g‖ is the L2 norm of every gradient
    entry of every parameter taken together, and return ‖g‖ (before clipping), as torch.nn.utils.clip_grad_norm_.

    Clipping guards against one bad batch throwing the weights far away. Parameters without a gradient
    are ignored. Each clipped gradient is a new array: the engine may hand two parameters the same
    (read-only, broadcast) gradient array, which must not be scaled twice or written to.
    """
    params = [p for p in ([params] if isinstance(params, Tensor) else params) if p.grad is not None]
    if not params:
        return 0.0
    total = math.sqrt(sum(dispatch.kernel("squares_sums", squares_sums)([p.grad._data for p in params])))
    coef = float(max_norm) / (total + 1e-6)
    if coef < 1:
        for p in params:
            p.grad = Tensor(p.grad._data * coef)  # Python float: stays in the gradient's dtype
    return total


def squares_sums(arrays: list) -> list:
    """[Σ a² in float64, for a in arrays]: each gradient's squared norm, numpy's pairwise sum of its squares.
    With the fast path, tinygrad_like/fast/grad_norm.py takes the same squares in the same order in one pass."""
    return [float(np.sum(np.square(a, dtype=np.float64))) for a in arrays]


def cosine_schedule(step: int, max_lr: float, warmup_steps: int, total_steps: int, min_lr: float = 0.0) -> float:
    """The learning rate at `step` (counted from 0): linear warmup, then cosine decay, as in nanoGPT.

        step < warmup_steps:           max_lr · (step + 1) / warmup_steps
        warmup_steps ≤ step ≤ total:   min_lr + ½(1 + cos(π·r))·(max_lr − min_lr),  r = (step − warmup)/(total − warmup)
        step > total_steps:            min_lr

    Warmup lets Adam's second-moment estimates settle before large steps are taken; the cosine then
    lowers the rate smoothly so the weights settle into a minimum. The value is max_lr at
    step = warmup_steps, (max_lr + min_lr)/2 halfway through the decay and min_lr at total_steps.
    """
    if warmup_steps < 0 or total_steps <= warmup_steps:
        raise ValueError(f"cosine_schedule: need 0 <= warmup_steps < total_steps, got warmup_steps={warmup_steps}, "
                         f"total_steps={total_steps}")
    if step < 0:
        raise ValueError(f"cosine_schedule: step must be >= 0, got {step}")
    if step < warmup_steps:
        return float(max_lr) * (step + 1) / warmup_steps
    if step > total_steps:
        return float(min_lr)
    ratio = (step - warmup_steps) / (total_steps - warmup_steps)
    return float(min_lr) + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (float(max_lr) - float(min_lr))
