"""torch.autograd: `grad` (the engine's tinygrad_like.grad), `backward`, and `gradcheck` / `gradgradcheck`
(the engine's, against central differences in float64), with PyTorch's argument forms."""
from __future__ import annotations

from tinygrad_like import Tensor
from tinygrad_like import gradcheck as _gradcheck
from tinygrad_like import gradgradcheck as _gradgradcheck
from tinygrad_like.autograd import grad
from tinygrad_like.torch._refuse import module_getattr

__all__ = ["grad", "backward", "gradcheck", "gradgradcheck"]


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


__getattr__ = module_getattr("torch.autograd")
