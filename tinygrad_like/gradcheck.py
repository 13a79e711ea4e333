"""Check analytic gradients against central finite differences, in float64.

How: the output y = fn(*inputs) may have any shape, so we fix one random direction u of the output's
shape and check the gradient of the scalar L = Σ u·y. For every input that requires grad and every
element x_i of it, the numeric derivative (L(x_i + eps) - L(x_i - eps)) / (2 eps) must match the
analytic one within atol + rtol·|numeric|. That checks the vector-Jacobian product uᵀJ, which is
what backward computes, element by element, so a mismatch names the exact input and index.
`gradgradcheck` applies the same check to the gradient itself (built with create_graph=True).
"""
from __future__ import annotations

import numpy as np

from tinygrad_like.autograd import grad
from tinygrad_like.tensor import Tensor


class GradcheckError(AssertionError):
    pass


def _float64_copies(inputs):
    """float32 inputs are copied to float64; float64 inputs are used as they are, so a layer built in
    float64 can pass its own parameters and have them checked (they are restored after each nudge)."""
    copies = []
    for t in inputs:
        if isinstance(t, Tensor) and t.dtype.kind == "f" and t.dtype != np.float64:
            copies.append(Tensor(t._data.astype(np.float64), requires_grad=t.requires_grad, name=t.name))
        else:
            copies.append(t)
    return copies


def _check(scalar_fn, inputs, eps, atol, rtol, what):
    wrt = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not wrt:
        raise ValueError(f"{what}: no input has requires_grad=True, so there is nothing to check")
    out = scalar_fn(*inputs)
    analytic = grad(out, [inputs[i] for i in wrt], allow_unused=True) if out.requires_grad else [None] * len(wrt)
    for i, g in zip(wrt, analytic):
        x = inputs[i]
        g = np.zeros_like(x._data) if g is None else g._data
        for index in np.ndindex(x.shape):  # nudge x._data in place (a reshaped copy of a strided array would not move)
            orig = x._data[index]
            x._data[index] = orig + eps
            plus = scalar_fn(*inputs).item()
            x._data[index] = orig - eps
            minus = scalar_fn(*inputs).item()
            x._data[index] = orig
            numeric = (plus - minus) / (2 * eps)
            exact = g[index]
            if not abs(exact - numeric) <= atol + rtol * abs(numeric):
                name = f" ({x.name})" if x.name else ""
                raise GradcheckError(f"{what}: input {i}{name} of shape {x.shape}, element {tuple(map(int, index))}: "
                                     f"analytic {exact:.10g} vs numeric {numeric:.10g} "
                                     f"(difference {abs(exact - numeric):.3g})")
    return True


def _projected(fn, seed):
    """L(inputs) = Σ u·fn(inputs) for one fixed random u (drawn on first use, from its own generator)."""
    cache = {}

    def scalar(*inputs):
        y = fn(*inputs)
        if "u" not in cache:
            cache["u"] = Tensor(np.random.default_rng(seed).standard_normal(y.shape), dtype=np.float64)
        return (y * cache["u"]).sum()
    return scalar


def gradcheck(fn, *inputs, eps=1e-6, atol=1e-5, rtol=1e-3, seed=0) -> bool:
    """True when d fn / d input matches finite differences for every input with requires_grad.

    Inputs are copied to float64 first; raises GradcheckError naming the input, element and both values.
    """
    return _check(_projected(fn, seed), _float64_copies(inputs), eps, atol, rtol, "gradcheck")


def gradgradcheck(fn, *inputs, eps=1e-6, atol=1e-5, rtol=1e-3, seed=0) -> bool:
    """Check second derivatives: gradcheck of G(inputs) = Σ_i v_i · ∂L/∂input_i, with L as in gradcheck."""
    inputs = _float64_copies(inputs)
    first = _projected(fn, seed)
    wrt = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    rng = np.random.default_rng(seed + 1)
    directions = [Tensor(rng.standard_normal(inputs[i].shape), dtype=np.float64) for i in wrt]

    def second(*xs):
        out = first(*xs)
        total = Tensor(np.float64(0.0))
        if not out.requires_grad:
            return total
        grads = grad(out, [xs[i] for i in wrt], create_graph=True, allow_unused=True)
        for g, v in zip(grads, directions):
            if g is not None:
                total = total + (g * v).sum()
        return total
    return _check(second, inputs, eps, atol, rtol, "gradgradcheck")
