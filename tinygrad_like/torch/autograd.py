"""torch.autograd: `grad` (the engine's tinygrad_like.grad), `backward`, `gradcheck` / `gradgradcheck`
(the engine's, against central differences in float64), with PyTorch's argument forms, and
`detect_anomaly` / `set_detect_anomaly` (the engine's anomaly mode: each op's output and gradient checked for
NaN and Inf, the op that made one named)."""
from __future__ import annotations

import functools

from tinygrad_like import Tensor
from tinygrad_like import gradcheck as _gradcheck
from tinygrad_like import gradgradcheck as _gradgradcheck
from tinygrad_like.autograd import grad
from tinygrad_like.function import state
from tinygrad_like.torch._refuse import module_getattr

__all__ = ["grad", "backward", "gradcheck", "gradgradcheck", "detect_anomaly", "set_detect_anomaly"]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False) -> None:
    """Accumulate the gradients of `tensors` (one or a sequence) into the leaves' .grad."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    grads = [None] * len(tensors) if grad_tensors is None else (
        [grad_tensors] if isinstance(grad_tensors, Tensor) else list(grad_tensors))
    for i, (t, g) in enumerate(zip(tensors, grads)):
        last = i == len(tensors) - 1
        t.backward(g, retain_graph=bool(retain_graph) or not last, create_graph=create_graph)


def _inputs(inputs) -> tuple:
    return (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)


def gradcheck(func, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3, **kwargs) -> bool:
    """True when func's gradients match finite differences (raises GradcheckError naming the entry if not)."""
    return _gradcheck(func, *_inputs(inputs), eps=eps, atol=atol, rtol=rtol)


def gradgradcheck(func, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3, **kwargs) -> bool:
    return _gradgradcheck(func, *_inputs(inputs), eps=eps, atol=atol, rtol=rtol)


def _check_nan(check_nan: bool) -> None:
    if not check_nan:
        raise NotImplementedError("anomaly detection with check_nan=False: the engine's anomaly mode always checks "
                                  "for NaN and Inf; leave check_nan=True")


class detect_anomaly:  # noqa: N801 (PyTorch's name)
    """`with torch.autograd.detect_anomaly():` or as a decorator: the engine's anomaly mode inside."""

    def __init__(self, check_nan: bool = True):
        _check_nan(check_nan)

    def __enter__(self):
        self._prev, state.detect_anomaly = state.detect_anomaly, True

    def __exit__(self, *exc):
        state.detect_anomaly = self._prev

    def __call__(self, func):
        @functools.wraps(func)
        def run(*args, **kwargs):
            with detect_anomaly():
                return func(*args, **kwargs)
        return run


class set_detect_anomaly:  # noqa: N801 (PyTorch's name)
    """set_detect_anomaly(mode) switches the anomaly mode now, and restores it when used in a `with`."""

    def __init__(self, mode: bool, check_nan: bool = True):
        _check_nan(check_nan)
        self._prev, state.detect_anomaly = state.detect_anomaly, bool(mode)
        self._mode = bool(mode)

    def __enter__(self):
        state.detect_anomaly = self._mode

    def __exit__(self, *exc):
        state.detect_anomaly = self._prev


__getattr__ = module_getattr("torch.autograd")
