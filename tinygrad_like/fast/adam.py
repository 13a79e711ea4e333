"""Adam's (and AdamW's) update on the fast path, registered with dispatch as "adam_update" and "adam_group":
nn/optim.py calls `dispatch.kernel(...)` and gets these while the fast path is on, its own plain numpy
otherwise. Each runs the `fast` extra's one-pass kernel when it is ready for the arrays (kernels/arrays.py:
adam_update, adam_group), else the numpy body below: nn.optim's arithmetic in cache-sized pieces, equal
to it element for element (tests/test_optim.py).
"""
from __future__ import annotations

import math

import numpy as np

from tinygrad_like.fast.kernels import compiled
from tinygrad_like.fast.memory import pieces


def run_update(param, grad, exp_avg, exp_avg_sq, *hyper) -> None:
    """Adam's step on one parameter: the kernel when ready for these arrays, else adam_update."""
    compiled(adam_update, param, grad, exp_avg, exp_avg_sq)(param, grad, exp_avg, exp_avg_sq, *hyper)


def run_group(params: list, grads: list, exp_avg, exp_avg_sq, *hyper) -> None:
    """Adam's step on a group of parameters: the kernel when ready for the moments, else adam_group."""
    compiled(adam_group, exp_avg, exp_avg_sq)(params, grads, exp_avg, exp_avg_sq, *hyper)


def adam_update(param: np.ndarray, grad: np.ndarray, exp_avg: np.ndarray, exp_avg_sq: np.ndarray, lr: float,
                beta1: float, beta2: float, eps: float, wd: float, decoupled: bool, t: int) -> None:
    """Adam's step t (AdamW's when decoupled) on the arrays param, exp_avg and exp_avg_sq in place, given
    grad, in cache-sized pieces (memory.py): nn.optim.adam_update's arithmetic, element for element, with
    the dozen steps on each piece while it is in the CPU cache."""
    step_size, v_scale = lr / (1 - beta1 ** t), 1 / math.sqrt(1 - beta2 ** t)
    for p, g, m, v in pieces(param, grad, exp_avg, exp_avg_sq):
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
    """nn.optim.adam_group with this module's adam_update (in cache-sized pieces)."""
    w = np.concatenate([p.reshape(-1) for p in params])
    g = np.concatenate([g.reshape(-1) for g in grads])
    adam_update(w, g, exp_avg, exp_avg_sq, lr, beta1, beta2, eps, wd, decoupled, t)
    start = 0
    for p in params:
        p[...] = w[start:start + p.size].reshape(p.shape)
        start += p.size
