"""The primitive ops: each one a forward on numpy arrays and, right below it, its backward rule.

Every other op in the library is composed from these. Backward rules use Tensor ops (not numpy),
so that with `create_graph=True` the gradient is itself a differentiable graph.

Shapes: binary ops broadcast like numpy; `unbroadcast` is the one place that sums a gradient back
to the shape of the input that was broadcast.

Four forwards ask `dispatch.kernel` for their array function: Matmul ("matmul"), PowConst ("power"),
Where ("where") and the embedding gradient's ScatterAdd ("add_rows"). Here each is plain numpy; the
fast path (tinygrad_like/fast/) registers faster ones that give the same numbers.
"""
from __future__ import annotations

import math

import numpy as np

from tinygrad_like.dispatch import kernel
from tinygrad_like.erf import erf
from tinygrad_like.function import Function


def unbroadcast(grad, shape: tuple):
    """Adjoint of numpy broadcasting: sum `grad` over the axes that broadcasting added or stretched.
    (grad is a Tensor, or a numpy array when a fused op's backward formula runs on arrays.)"""
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(i + extra for i, n in enumerate(shape) if n == 1 and grad.shape[i + extra] != 1)
    if not axes:
        return grad.reshape(shape)
    summed = grad.sum(axis=axes, keepdims=True) if isinstance(grad, np.ndarray) else grad.sum(axis=axes, keepdim=True)
    return summed.reshape(shape)


# ---------------------------------------------------------------- unary ops

class Neg(Function):
    def forward(self, x): return -x
    def backward(self, grad, out): return -grad


class Exp(Function):
    def forward(self, x): return np.exp(x)
    def backward(self, grad, out): return grad * out                      # d e^x = e^x


class Log(Function):
    def forward(self, x): return np.log(x)
    def backward(self, grad, out): return grad / self.parents[0]           # d log x = 1/x


class Sqrt(Function):
    def forward(self, x): return np.sqrt(x)
    def backward(self, grad, out): return grad / (out * 2)                # d √x = 1/(2√x)


class Tanh(Function):
    def forward(self, x): return np.tanh(x)
    def backward(self, grad, out): return grad * (1 - out * out)          # d tanh = 1 - tanh²


class Sigmoid(Function):
    def forward(self, x):                                                 # e^-|x| never overflows:
        e = np.exp(-np.abs(x))                                            # σ(x) = 1/(1+e^-x) for x ≥ 0,
        return np.where(x >= 0, 1, e) / (1 + e)                           # e^x/(1+e^x) for x < 0
    def backward(self, grad, out): return grad * out * (1 - out)          # dσ = σ(1-σ)


class Relu(Function):
    def forward(self, x): return np.maximum(x, 0)
    def backward(self, grad, out): return grad * (self.parents[0] > 0)


class Abs(Function):
    def forward(self, x): return np.abs(x)
    def backward(self, grad, out): return grad * self.parents[0].sign()


class Sin(Function):
    def forward(self, x): return np.sin(x)
    def backward(self, grad, out): return grad * self.parents[0].cos()     # d sin = cos


class Cos(Function):
    def forward(self, x): return np.cos(x)
    def backward(self, grad, out): return -grad * self.parents[0].sin()    # d cos = -sin


class Log1p(Function):
    """log(1 + x), exact for tiny x where 1 + x would round to 1."""
    def forward(self, x): return np.log1p(x)
    def backward(self, grad, out): return grad / (self.parents[0] + 1)    # d log(1+x) = 1/(1+x)


class Erf(Function):
    def forward(self, x): return erf(x)                                  # numpy has none: erf.py's, vectorised
    def backward(self, grad, out):                                        # d erf = 2/√π e^(-x²)
        x = self.parents[0]
        return grad * (-(x * x)).exp() * (2 / math.sqrt(math.pi))


class Cast(Function):
    def forward(self, x, dtype): self.src = x.dtype; return x.astype(dtype)
    def backward(self, grad, out): return grad.cast(self.src)


# ---------------------------------------------------------------- binary ops (numpy broadcasting)

class Add(Function):
    def forward(self, x, y): return x + y
    def backward(self, grad, out):
        x, y = self.parents
        return (unbroadcast(grad, x.shape) if x.requires_grad else None,
                unbroadcast(grad, y.shape) if y.requires_grad else None)


class Sub(Function):
    def forward(self, x, y): return x - y
    def backward(self, grad, out):
        x, y = self.parents
        return (unbroadcast(grad, x.shape) if x.requires_grad else None,
                unbroadcast(-grad, y.shape) if y.requires_grad else None)


class Mul(Function):
    def forward(self, x, y): return x * y
    def backward(self, grad, out):
        x, y = self.parents
        return (unbroadcast(grad * y, x.shape) if x.requires_grad else None,
                unbroadcast(grad * x, y.shape) if y.requires_grad else None)


class Div(Function):
    def forward(self, x, y): return x / y
    def backward(self, grad, out):                                        # d(x/y) = dx/y - x dy/y²
        x, y = self.parents
        gx = grad / y
        return (unbroadcast(gx, x.shape) if x.requires_grad else None,
                unbroadcast(-gx * out, y.shape) if y.requires_grad else None)


class Pow(Function):
    """x ** y for tensors x, y (for a constant exponent, see PowConst). As in PyTorch, the x-gradient
    is 0 where y = 0 and the y-gradient is 0 where x = 0 and y >= 0, where the formulas would give
    0·∞ = NaN: there the exponent y − 1 is replaced by 1 (times y = 0 gives 0), and log x by log 1 = 0."""
    def forward(self, x, y): return x ** y
    def backward(self, grad, out):                                        # d x^y = y x^(y-1) dx + x^y log x dy
        x, y = self.parents
        return (unbroadcast(grad * y * x ** (y == 0).where(1, y - 1), x.shape) if x.requires_grad else None,
                unbroadcast(grad * out * ((x == 0) & (y >= 0)).where(1, x).log(), y.shape) if y.requires_grad
                else None)


def power(x: np.ndarray, c) -> np.ndarray:
    """x ** c for a constant c, in x's dtype when x is floating point."""
    return x ** x.dtype.type(c) if x.dtype.kind == "f" else x ** c


class PowConst(Function):
    def forward(self, x, c):
        self.c = c
        return kernel("power", power)(x, c)
    def backward(self, grad, out):                                        # d x^c = c x^(c-1)
        x, c = self.parents[0], self.c
        if c == 0:
            return grad.zeros_like()                                      # x^0 = 1 is constant (even at x = 0)
        return grad * c if c == 1 else grad * (x * c if c == 2 else x ** (c - 1) * c)


class Maximum(Function):
    """Elementwise max; at ties the gradient is split in half between both inputs (as in PyTorch)."""
    def forward(self, x, y): return np.maximum(x, y)
    def backward(self, grad, out):
        x, y = self.parents
        share_x = (x > y).cast(grad.dtype) + (x == y).cast(grad.dtype) * 0.5
        return (unbroadcast(grad * share_x, x.shape) if x.requires_grad else None,
                unbroadcast(grad * (1 - share_x), y.shape) if y.requires_grad else None)


class Minimum(Function):
    """Elementwise min; at ties the gradient is split in half, as for Maximum."""
    def forward(self, x, y): return np.minimum(x, y)
    def backward(self, grad, out):
        x, y = self.parents
        share_x = (x < y).cast(grad.dtype) + (x == y).cast(grad.dtype) * 0.5
        return (unbroadcast(grad * share_x, x.shape) if x.requires_grad else None,
                unbroadcast(grad * (1 - share_x), y.shape) if y.requires_grad else None)


class Mod(Function):
    """x mod y = x − ⌊x/y⌋·y, with the sign of y (Python's and PyTorch's %)."""
    def forward(self, x, y): return np.remainder(x, y)
    def backward(self, grad, out):                                        # d(x mod y) = dx − ⌊x/y⌋ dy
        x, y = self.parents
        return (unbroadcast(grad, x.shape) if x.requires_grad else None,
                unbroadcast(-grad * (x // y), y.shape) if y.requires_grad else None)


class Matmul(Function):
    """(..., n, k) @ (..., k, m) -> (..., n, m), with batch dimensions broadcast."""
    def forward(self, x, y):
        if x.ndim < 2 or y.ndim < 2 or x.shape[-1] != y.shape[-2]:
            raise ValueError(f"inner dimensions differ: {x.shape} @ {y.shape}")
        return kernel("matmul", np.matmul)(x, y)
    def backward(self, grad, out):                                        # dX = G Yᵀ, dY = Xᵀ G
        x, y = self.parents
        return (unbroadcast(grad @ y.transpose(-1, -2), x.shape) if x.requires_grad else None,
                unbroadcast(x.transpose(-1, -2) @ grad, y.shape) if y.requires_grad else None)


class Where(Function):
    """cond ? x : y elementwise. `cond` (boolean) carries no gradient."""
    def forward(self, cond, x, y): return kernel("where", np.where)(cond, x, y)
    def backward(self, grad, out):
        cond, x, y = self.parents
        zero = grad._lift(0.0)                                            # broadcast, never an array of zeros
        return (None,
                unbroadcast(cond.where(grad, zero), x.shape) if x.requires_grad else None,
                unbroadcast(cond.where(zero, grad), y.shape) if y.requires_grad else None)


# ---------------------------------------------------------------- reduce ops

class Sum(Function):
    def forward(self, x, axis, keepdim):
        self.axis, self.keepdim = axis, keepdim
        return np.sum(x, axis=axis, keepdims=keepdim)
    def backward(self, grad, out):                                        # every input got d(sum) = 1
        x = self.parents[0]
        if not self.keepdim:
            grad = grad.reshape(_keepdim_shape(x.shape, self.axis))
        return grad.expand(x.shape)


class Max(Function):
    """Max over axes; ties share the gradient equally."""
    reduce = staticmethod(np.max)

    def forward(self, x, axis, keepdim):
        self.axis, self.keepdim = axis, keepdim
        return self.reduce(x, axis=axis, keepdims=keepdim)
    def backward(self, grad, out):
        x = self.parents[0]
        kshape = _keepdim_shape(x.shape, self.axis)
        if not self.keepdim:
            grad, out = grad.reshape(kshape), out.reshape(kshape)
        hit = (x == out).cast(grad.dtype)
        return grad.expand(x.shape) * hit / hit.sum(axis=self.axis, keepdim=True)


class Min(Max):
    """Min over axes, its own reduction (not −max(−x), which overflows at the smallest integer)."""
    reduce = staticmethod(np.min)


def _keepdim_shape(shape: tuple, axis) -> tuple:
    if axis is None:
        return (1,) * len(shape)
    return tuple(1 if i in axis else n for i, n in enumerate(shape))


class Cumsum(Function):
    """Running sum along one axis: out[i] = x[0] + ... + x[i]."""
    def forward(self, x, axis): self.axis = axis; return np.cumsum(x, axis=axis)
    def backward(self, grad, out):                                        # x[i] reaches out[j] for all j >= i
        return grad.flip(self.axis).cumsum(self.axis).flip(self.axis)


# ---------------------------------------------------------------- movement ops

class Reshape(Function):
    def forward(self, x, shape): return x.reshape(shape)
    def backward(self, grad, out): return grad.reshape(self.parents[0].shape)


class Permute(Function):
    def forward(self, x, order): self.order = order; return np.transpose(x, order)
    def backward(self, grad, out): return grad.permute(*np.argsort(self.order).tolist())


class Expand(Function):
    def forward(self, x, shape): return np.broadcast_to(x, shape)
    def backward(self, grad, out): return unbroadcast(grad, self.parents[0].shape)


class Clone(Function):
    """A copy with its own memory; the gradient passes unchanged."""
    def forward(self, x): return x.copy()
    def backward(self, grad, out): return grad


class Getitem(Function):
    """x[index]: basic (ints, slices, None) and integer-array indexing, the gather an embedding needs."""
    def forward(self, x, index): self.index = index; return x[index]
    def backward(self, grad, out): return ScatterAdd.apply(grad, shape=self.parents[0].shape, index=self.index)


class ScatterAdd(Function):
    """Adjoint of Getitem: a zero array of `shape` with `grad` added at `index` (repeated indices add up)."""
    def forward(self, grad, shape, index):
        self.index = index
        out = np.zeros(shape, dtype=grad.dtype)
        if _is_basic(index):
            out[index] = grad
        elif isinstance(index, np.ndarray) and index.dtype.kind in "iu":   # rows of a table: an embedding
            kernel("add_rows", np.add.at)(out, index.reshape(-1), grad.reshape(-1, *shape[1:]))
        else:
            np.add.at(out, index, grad)
        return out
    def backward(self, grad, out): return grad[self.index]


def _is_basic(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (int, np.integer, slice)) for i in items)


class Cat(Function):
    def forward(self, *xs, axis):
        self.axis, self.sizes = axis, [x.shape[axis] for x in xs]
        return np.concatenate(xs, axis=axis)
    def backward(self, grad, out):                                        # each input gets its slice back
        grads, start = [], 0
        for p, n in zip(self.parents, self.sizes):
            index = (slice(None),) * (self.axis % grad.ndim) + (slice(start, start + n),)
            grads.append(grad[index] if p.requires_grad else None)
            start += n
        return tuple(grads)
