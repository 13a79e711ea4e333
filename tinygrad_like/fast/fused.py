"""Fused ops: each replaces one composite op of the core (composites.py) by one graph node with a
closed-form backward.

The composites are the teaching versions: their graph shows how they work and their gradient comes
for free; each costs 5-10 ops and as many temporary arrays. A fused op does the forward in a few numpy
calls and writes its derivative by hand. Each class names the composite it replaces (`composite`),
builds itself from the composite's arguments (`from_composite`, with `accepts` saying which arguments
it handles) and maps its recorded parents and options back onto them (`as_composite`, which
draw_graph uses to open the node). tests/test_fused.py proves each equal to its composite to 1e-12 in
float64: values, gradients and second derivatives.

Backward rules stay Tensor ops, so create_graph still gives second derivatives. The arrays saved in
forward (probabilities, normalised inputs) enter the rule as constants, which is exact for a first
derivative; when the backward pass is itself recorded (create_graph=True) they are rebuilt from the
inputs with differentiable ops instead (`saved_or_rebuilt`).

The array work of each op sits in named functions of numpy arrays (`layernorm_forward`, ...), so that
a compiled kernel can take the place of one without touching the op around it (docs/engine.md): with
the `fast` extra, `compiled(body, *arrays)` hands back the kernel of fast/kernels/ standing in for the
body (tests/test_kernels.py proves kernel, body and composite equal), else the body. A recorded
(create_graph) backward never runs a kernel: it is Tensor ops.
"""
from __future__ import annotations

import math

import numpy as np

from tinygrad_like import random as _random
from tinygrad_like.composites import GELU_C, attention_softmax, causal_mask, join_heads, split_heads, swap_12
from tinygrad_like.erf import erf
from tinygrad_like.fast import flash, pool
from tinygrad_like.fast.arrays import array_max, array_sum, constant, keep_dot, keep_sum, rows_sum, swap_last
from tinygrad_like.fast.kernels import compiled
from tinygrad_like.fast.memory import pieces, row_pieces
from tinygrad_like.fast.normal_cdf import normal_cdf_steps
from tinygrad_like.function import Function, state
from tinygrad_like.ops import ScatterAdd, unbroadcast
from tinygrad_like.tensor import Tensor

PIECE = 1 << 16  # elements per cache-sized piece (256 KB of float32), for the elementwise chains below


def shared_piece(nbytes: int) -> int:
    """Elements per piece for a chain of numpy steps over nbytes shared out on the Python pool: PIECE on one
    thread; twice that when more threads share it, where the Python between two steps holds the GIL
    the other thread waits for, and steps on pieces of PIECE spend much of their time handing it over
    (benchmarks/bench_kernels.py, the numpy bodies at every core against 1 thread)."""
    return PIECE if pool.threads_for(nbytes) == 1 else 2 * PIECE


class Fused(Function):
    """A fused op: a Function that replaces the composite op named `composite` (composites.py).
    `from_composite` applies it to the composite's arguments, when `accepts` them (None: always);
    `as_composite(*parents, **options)` gives back the composite's (args, kwargs), by default the
    parents followed by the options in order."""
    composite: str
    accepts = None

    @staticmethod
    def as_composite(*parents, **options) -> tuple:
        return (*parents, *options.values()), {}


def saved_or_rebuilt(array: np.ndarray, rebuild):
    """The array saved in forward as a constant Tensor, or `rebuild()` when gradients of the gradient are wanted."""
    return rebuild() if state.grad_enabled else Tensor._result(array, None)


def by_formula(formula, *operands):
    """Evaluate a backward formula on the Tensors themselves when the backward pass is being recorded
    (create_graph), else on their numpy arrays: the same arithmetic, without a Tensor per step.
    The formulas below are written to run on either (`keep_sum`, `swap_last`, `.T`, `@`, `*`, ...)."""
    if state.grad_enabled:
        return formula(*operands)
    result = formula(*[o._data if isinstance(o, Tensor) else o for o in operands])
    wrap = lambda r: None if r is None else Tensor._result(np.asarray(r), None)
    return tuple(map(wrap, result)) if isinstance(result, tuple) else wrap(result)


class Linear(Fused):
    """y = x Wᵀ + b for x (..., in), W (out, in), b (out,): the projection inside nn.Linear.

    Backward, with the leading axes of x and g flattened into rows: dx = g W, dW = gᵀ x, db = Σ_rows g.
    """
    composite = "linear"

    @staticmethod
    def from_composite(x, weight, bias=None): return Linear.apply(x, weight, *(() if bias is None else (bias,)))

    def forward(self, x, w, b=None):
        y = pool.matmul(x.reshape(-1, x.shape[-1]), w.T, b)                   # (rows, out), b added per thread
        return y.reshape(*x.shape[:-1], w.shape[0])

    def backward(self, grad, out):
        need = [p.requires_grad for p in self.parents]
        grads = by_formula(_linear_grads, grad, *self.parents[:2], need)
        return grads if len(self.parents) == 3 else grads[:2]


def _linear_grads(g, x, w, need):
    """(dx, dW, db)[:len(need)], None where need says no. Of numpy arrays needing both dx and dW, the
    products run side by side, each whole on one thread (pool.products on the C threads, then db; else
    pool.each on the pool's threads, db on whichever is free first: one hand-over, where sharing out
    each product's rows would take two); else each product shares out its own rows (`product`)."""
    g, x2 = g.reshape(-1, g.shape[-1]), x.reshape(-1, x.shape[-1])           # (rows, out), (rows, in)
    side_by_side = isinstance(g, np.ndarray) and need[0] and need[1]
    both = pool.products([(g, w), (g.T, x2)], 4 * g.size * x2.shape[-1]) if side_by_side else None
    if both is not None:                                                      # dx and dW at once on C threads
        return (both[0].reshape(x.shape), both[1], rows_sum(g) if len(need) > 2 and need[2] else None)[:len(need)]
    mm = np.matmul if side_by_side else product
    jobs = [lambda: mm(g, w).reshape(x.shape),                                # dx = g W
            lambda: mm(g.T, x2),                                              # dW = gᵀ x
            lambda: rows_sum(g)]                                              # db = Σ_rows g
    jobs = [job if wanted else (lambda: None) for job, wanted in zip(jobs, need)]
    return tuple(pool.each(jobs, 4 * g.size * x2.shape[-1]) if side_by_side else [job() for job in jobs])


def product(a, b):
    """a @ b: of numpy arrays on the thread pool (pool.matmul), of Tensors as a recorded op."""
    return pool.matmul(a, b) if isinstance(a, np.ndarray) else a @ b


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - array_max(x, axis))
    e /= array_sum(e, axis)
    return e


# A row shifted by more than its own max loses that much absolute precision in x − shift: up to
# SHIFT_RANGE · 2^-24 ≈ 4.8e-7 in float32 at 8, which keeps float32 results within 1e-6 of the
# per-row shift (at 60 a row 50 below the piece's max drifted by 3e-6 in log_softmax).
SHIFT_RANGE = 8


def softmax_shift(x_rows: np.ndarray):
    """What softmax subtracts from rows (r, n) before exp, so that no exp overflows: each row's max
    (r, 1); or, when the whole piece spans at most SHIFT_RANGE, the piece's max, one number for
    every row. Softmax is the same under any shift of a row, and then every exp(x − shift) lies in
    [e^-8, 1], neither overflowing nor near underflow. Two whole-piece reductions and a subtraction of
    one number cost less than a max per short row and a subtraction broadcast over rows. A NaN or an
    infinity (a −inf mask) fails the test: rows it is."""
    if x_rows.size == 0:
        return array_max(x_rows, -1)
    hi, lo = x_rows.max(), x_rows.min()
    return hi if hi - lo <= SHIFT_RANGE else array_max(x_rows, -1)


def has_numbers(x, axis) -> bool:
    """Whether softmax's or log-softmax's fused op takes x: one with numbers in it. An empty one is the
    composite's (composites.nothing_to_normalise)."""
    return x.numel() > 0


class Softmax(Fused):
    """y = softmax(x) along axis. Backward: dx = y ⊙ (g − Σ g⊙y).

    Along the last axis both run on cache-sized pieces of whole rows (softmax_forward, softmax_backward)."""
    composite = "softmax"

    accepts = staticmethod(has_numbers)

    @staticmethod
    def from_composite(x, axis): return Softmax.apply(x, axis=axis)

    def forward(self, x, axis):
        self.axis = axis
        return compiled(softmax_forward, x)(x) if axis in (-1, x.ndim - 1) else _softmax(x, axis)

    def backward(self, grad, out):
        if state.grad_enabled or self.axis not in (-1, out.ndim - 1):
            return by_formula(lambda g, y: y * (g - keep_sum(g * y, self.axis)), grad, out)
        return Tensor._result(compiled(softmax_backward, grad._data, out._data)(grad._data, out._data), None)


def softmax_forward(x: np.ndarray) -> np.ndarray:
    """softmax along the last axis of x (..., n), on cache-sized pieces of whole rows written into the
    output, each piece shifted by `softmax_shift`."""
    y = np.empty(x.shape, x.dtype)
    for x_rows, y_rows in row_pieces(np.ascontiguousarray(x), y, size=PIECE):
        np.subtract(x_rows, softmax_shift(x_rows), out=y_rows)
        np.exp(y_rows, out=y_rows)
        y_rows /= array_sum(y_rows, -1)
    return y


def softmax_backward(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """dx = y ⊙ (g − Σ g⊙y) along the last axis, for y = softmax(x) (..., n), piece by piece."""
    dx = np.empty(y.shape, y.dtype)
    for g_rows, y_rows, d in row_pieces(np.ascontiguousarray(g), y, dx, size=PIECE):
        np.multiply(g_rows, y_rows, out=d)
        np.subtract(g_rows, array_sum(d, -1), out=d)
        d *= y_rows
    return dx


class LogSoftmax(Fused):
    """y = x − logΣexp(x) along axis. Backward: dx = g − softmax(x)·Σg.

    Along the last axis both run on cache-sized pieces of whole rows (log_softmax_forward, log_softmax_backward)."""
    composite = "log_softmax"

    accepts = staticmethod(has_numbers)

    @staticmethod
    def from_composite(x, axis): return LogSoftmax.apply(x, axis=axis)

    def forward(self, x, axis):
        self.axis = axis
        if axis in (-1, x.ndim - 1):
            return compiled(log_softmax_forward, x)(x)
        shifted = x - array_max(x, axis)
        return shifted - np.log(array_sum(np.exp(shifted), axis))

    def backward(self, grad, out):
        exp = lambda a: np.exp(a) if isinstance(a, np.ndarray) else a.exp()
        if state.grad_enabled or self.axis not in (-1, out.ndim - 1):
            return by_formula(lambda g, y: g - exp(y) * keep_sum(g, self.axis), grad, out)
        return Tensor._result(compiled(log_softmax_backward, grad._data, out._data)(grad._data, out._data), None)


def log_softmax_forward(x: np.ndarray) -> np.ndarray:
    """x − log Σ exp(x) along the last axis of x (..., n), on cache-sized pieces of whole rows written
    into the output, each piece shifted by `softmax_shift`."""
    y = np.empty(x.shape, x.dtype)
    e = np.empty(min(x.size, max(PIECE, x.shape[-1])), x.dtype)          # exp of one piece
    for x_rows, y_rows in row_pieces(np.ascontiguousarray(x), y, size=PIECE):
        np.subtract(x_rows, softmax_shift(x_rows), out=y_rows)
        e_rows = np.exp(y_rows, out=e[:y_rows.size].reshape(y_rows.shape))
        y_rows -= np.log(array_sum(e_rows, -1))
    return y


def log_softmax_backward(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """dx = g − exp(y)·Σg along the last axis, for y = log_softmax(x) (..., n), piece by piece."""
    dx = np.empty(y.shape, y.dtype)
    for g_rows, y_rows, d in row_pieces(np.ascontiguousarray(g), y, dx, size=PIECE):
        np.exp(y_rows, out=d)
        d *= array_sum(g_rows, -1)
        np.subtract(g_rows, d, out=d)
    return dx


class LayerNorm(Fused):
    """y = x̂·w + b, x̂ = (x − mean) / √(var + eps) along the last axis; w and b (n,) are optional
    (nn.LayerNorm passes its weight and bias, so the whole layer is one op).

    Backward, with ĝ = g·w: dx = (ĝ − mean(ĝ) − x̂·mean(ĝ⊙x̂)) / √(var + eps), dw = Σ_rows g⊙x̂, db = Σ_rows g.
    Both run on cache-sized pieces of whole rows (layernorm_forward, layernorm_backward); x̂ is kept for backward.
    """
    composite = "layernorm"

    @staticmethod
    def accepts(x, axis=-1, eps=1e-5, weight=None, bias=None) -> bool:
        """The last axis, not empty, and weight and bias (n,) or None (not a bias alone): other shapes
        broadcast, composed."""
        return (x._axes(axis) == (x.ndim - 1,) and x.numel() > 0 and (weight is not None or bias is None)
                and all(p.shape == x.shape[-1:] for p in (weight, bias) if p is not None))

    @staticmethod
    def from_composite(x, axis=-1, eps=1e-5, weight=None, bias=None):
        return LayerNorm.apply(x, *[p for p in (weight, bias) if p is not None], eps=eps)

    @staticmethod
    def as_composite(x, w=None, b=None, eps=1e-5): return (x, -1, eps, w, b), {}

    def forward(self, x, w=None, b=None, eps=1e-5):
        self.eps = eps
        y, xhat, self.rstd = compiled(layernorm_forward, x, w, b)(x, w, b, eps)
        if w is not None:
            self.xhat = xhat
        return y

    def backward(self, grad, out):
        x, *affine = self.parents
        need = [p.requires_grad for p in self.parents]
        if not state.grad_enabled:
            arrays = (grad._data, self.xhat if affine else out._data, self.rstd, affine[0]._data if affine else None)
            grads = compiled(layernorm_backward, *arrays)(*arrays, need)
            if not affine:
                return Tensor._result(grads, None)
            return tuple(None if a is None else Tensor._result(a, None) for a in grads)
        rstd = saved_or_rebuilt(self.rstd, lambda: 1 / (x.var(-1, keepdim=True, correction=0) + self.eps).sqrt())
        xhat = saved_or_rebuilt(self.xhat, lambda: x.layernorm(-1, self.eps)) if affine else out
        return by_formula(_layernorm_grads, grad, xhat, rstd, affine[0] if affine else None, need)


def _layernorm_grads(g, xhat, rstd, w, need):
    n = xhat.shape[-1]
    gw = g if w is None else g * w                                            # ĝ, the gradient at x̂
    dx = (gw - keep_sum(gw, -1) / n - xhat * keep_dot(gw, xhat) / n) * rstd if need[0] else None
    if len(need) == 1:
        return dx
    dw = rows_sum(g * xhat) if need[1] else None
    db = rows_sum(g) if len(need) == 3 and need[2] else None
    return (dx, dw, db)[:len(need)]


def layernorm_forward(x: np.ndarray, w: np.ndarray | None, b: np.ndarray | None, eps: float):
    """(y, x̂, rstd) for x (..., n), w and b (n,) or None: x̂ = (x − mean)·rstd, rstd = 1/√(var + eps) (..., 1),
    y = x̂·w + b (y is x̂ itself without w), on cache-sized pieces of whole rows."""
    inv_n, eps = x.dtype.type(1 / x.shape[-1]), x.dtype.type(eps)   # sums times 1/n: np.mean costs more
    xhat = np.empty(x.shape, x.dtype)
    rstd = np.empty((*x.shape[:-1], 1), x.dtype)
    y = xhat if w is None else np.empty(x.shape, np.result_type(x, w, *(() if b is None else (b,))))
    for x_rows, xhat_rows, rstd_rows, y_rows in row_pieces(np.ascontiguousarray(x), xhat, rstd, y, size=PIECE):
        np.subtract(x_rows, array_sum(x_rows, -1) * inv_n, out=xhat_rows)
        np.divide(1, np.sqrt(keep_dot(xhat_rows, xhat_rows) * inv_n + eps), out=rstd_rows)
        xhat_rows *= rstd_rows
        if w is not None:
            np.multiply(xhat_rows, w, out=y_rows)
            if b is not None:
                y_rows += b
    return y, xhat, rstd


def layernorm_backward(g, xhat, rstd, w, need):
    """_layernorm_grads on arrays, the same steps on cache-sized pieces of whole rows: dx written in
    place, dw and db summed piece by piece. need: which of (x, w, b) want a gradient (1 to 3 entries)."""
    n = xhat.dtype.type(xhat.shape[-1])
    g = np.ascontiguousarray(g, dtype=xhat.dtype)
    dx = np.empty(xhat.shape, xhat.dtype) if need[0] else None
    dw = np.zeros(xhat.shape[-1], xhat.dtype) if len(need) > 1 and need[1] else None
    db = np.zeros(xhat.shape[-1], xhat.dtype) if len(need) == 3 and need[2] else None
    work = np.empty(min(xhat.size, max(PIECE, xhat.shape[-1])), xhat.dtype)  # ĝ, then g⊙x̂, of one piece
    for g_rows, xhat_rows, rstd_rows, dx_rows in row_pieces(g, xhat, rstd, xhat if dx is None else dx, size=PIECE):
        gw = work[:g_rows.size].reshape(g_rows.shape)
        if need[0]:
            np.multiply(g_rows, w, out=gw) if w is not None else np.copyto(gw, g_rows)
            mean_gw, mean_gw_xhat = keep_sum(gw, -1) / n, keep_dot(gw, xhat_rows) / n
            gw -= mean_gw
            np.multiply(xhat_rows, mean_gw_xhat, out=dx_rows)
            np.subtract(gw, dx_rows, out=dx_rows)
            dx_rows *= rstd_rows                                               # (dx_rows is x̂ unless need[0])
        if dw is not None:
            dw += rows_sum(np.multiply(g_rows, xhat_rows, out=gw))
        if db is not None:
            db += rows_sum(g_rows)
    return dx if len(need) == 1 else (dx, dw, db)[:len(need)]


class RMSNorm(Fused):
    """y = x̂·w, x̂ = x·rstd, rstd = 1/√(mean(x²) + eps) along the last axis; w (n,) is optional
    (nn.RMSNorm passes its weight, so the whole layer is one op).

    Backward, with ĝ = g·w: dx = (ĝ − x̂·mean(ĝ⊙x̂))·rstd, dw = Σ_rows g⊙x̂. Both run on cache-sized
    pieces of whole rows (rmsnorm_forward, rmsnorm_backward); rstd is kept for backward, x̂ made again from x.
    """
    composite = "rmsnorm"

    @staticmethod
    def accepts(x, axis=-1, eps=1e-6, weight=None) -> bool:
        """The last axis, not empty, and weight (n,) or None: a weight of another shape broadcasts, composed."""
        return (x._axes(axis) == (x.ndim - 1,) and x.numel() > 0
                and (weight is None or weight.shape == x.shape[-1:]))

    @staticmethod
    def from_composite(x, axis=-1, eps=1e-6, weight=None):
        return RMSNorm.apply(x, *(() if weight is None else (weight,)), eps=eps)

    @staticmethod
    def as_composite(x, w=None, eps=1e-6): return (x, -1, eps, w), {}

    def forward(self, x, w=None, eps=1e-6):
        self.eps = eps
        y, self.rstd = compiled(rmsnorm_forward, x, w)(x, w, eps)
        return y

    def backward(self, grad, out):
        x, *weight = self.parents
        w = weight[0] if weight else None
        need = [p.requires_grad for p in self.parents]
        if not state.grad_enabled:
            arrays = (grad._data, x._data, self.rstd, None if w is None else w._data)
            dx, dw = compiled(rmsnorm_backward, *arrays)(*arrays)
            grads = [Tensor._result(a, None) if wanted else None for a, wanted in zip((dx, dw), need)]
            return grads[0] if w is None else tuple(grads)
        rstd = saved_or_rebuilt(self.rstd, lambda: 1 / ((x * x).mean(-1, keepdim=True) + self.eps).sqrt())
        return by_formula(_rmsnorm_grads, grad, x, rstd, w, need)


def _rmsnorm_grads(g, x, rstd, w, need):
    xhat = x * rstd
    gw = g if w is None else g * w                                            # ĝ, the gradient at x̂
    dx = (gw - xhat * (keep_dot(gw, xhat) / xhat.shape[-1])) * rstd if need[0] else None
    return dx if len(need) == 1 else (dx, rows_sum(g * xhat) if need[1] else None)


def rmsnorm_forward(x: np.ndarray, w: np.ndarray | None, eps: float):
    """(y, rstd) for x (..., n), w (n,) or None: rstd = 1/√(mean(x²) + eps) (..., 1), y = x·rstd·w, on
    cache-sized pieces of whole rows."""
    inv_n, eps = x.dtype.type(1 / x.shape[-1]), x.dtype.type(eps)
    rstd = np.empty((*x.shape[:-1], 1), x.dtype)
    y = np.empty(x.shape, x.dtype if w is None else np.result_type(x, w))
    for x_rows, rstd_rows, y_rows in row_pieces(np.ascontiguousarray(x), rstd, y, size=PIECE):
        np.divide(1, np.sqrt(keep_dot(x_rows, x_rows) * inv_n + eps), out=rstd_rows)
        np.multiply(x_rows, rstd_rows, out=y_rows)
        if w is not None:
            y_rows *= w
    return y, rstd


def rmsnorm_backward(g: np.ndarray, x: np.ndarray, rstd: np.ndarray, w: np.ndarray | None):
    """(dx, dw) of rmsnorm_forward given g, as _rmsnorm_grads computes them, on cache-sized pieces of whole
    rows: x̂ = x·rstd made again piece by piece, dx written in place, dw = Σ_rows g⊙x̂ summed piece by
    piece (the weight's gradient; without w, the one a weight of ones would get)."""
    inv_n = x.dtype.type(1 / x.shape[-1])
    g = np.ascontiguousarray(g, dtype=x.dtype)
    dx = np.empty(x.shape, x.dtype)
    dw = np.zeros(x.shape[-1], x.dtype)
    work = np.empty((2, min(x.size, max(PIECE, x.shape[-1]))), x.dtype)     # x̂, then g⊙x̂ and ĝ, of one piece
    for g_rows, x_rows, rstd_rows, dx_rows in row_pieces(g, np.ascontiguousarray(x), rstd, dx, size=PIECE):
        xhat, gw = (a[:x_rows.size].reshape(x_rows.shape) for a in work)
        np.multiply(x_rows, rstd_rows, out=xhat)
        dw += rows_sum(np.multiply(g_rows, xhat, out=gw))
        gw = g_rows if w is None else np.multiply(g_rows, w, out=gw)
        np.multiply(xhat, keep_dot(gw, xhat) * inv_n, out=dx_rows)
        np.subtract(gw, dx_rows, out=dx_rows)
        dx_rows *= rstd_rows
    return dx, dw


def _gelu_slope(x, t):
    """dy/dx of GELU given t = tanh u, on Tensors (for a recorded backward)."""
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * x * x)


def _tanh_u(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """tanh u, u = √(2/π)(x + 0.044715x³) = x·(√(2/π) + √(2/π)·0.044715x²), built in `out` (a new
    array if None) by in-place steps (which cost half of steps that each allocate a temporary)."""
    t = np.multiply(x, x, out=out)
    t *= GELU_C * 0.044715
    t += GELU_C
    t *= x
    return np.tanh(t, out=t)


class Gelu(Fused):
    """GELU, tanh approximation: y = ½x(1 + tanh u), u = √(2/π)(x + 0.044715x³).

    Backward: dy/dx = ½(1 + tanh u) + ½x(1 − tanh²u)·√(2/π)(1 + 3·0.044715x²), recomputed from x in
    backward rather than saved (one array less held per layer between forward and backward).
    Both run on cache-sized pieces (memory.pieces), written into the output; on the thread pool the
    pieces are cut into one run per thread (pool.run_in_runs; benchmarks/bench_threads.py).
    """
    composite = "gelu"

    @staticmethod
    def from_composite(x): return Gelu.apply(x)

    def forward(self, x):
        return compiled(gelu_forward, x)(x)

    def backward(self, grad, out):
        x = self.parents[0]
        if state.grad_enabled:  # create_graph: the slope must itself be differentiable
            return grad * _gelu_slope(x, (GELU_C * (x + 0.044715 * x * x * x)).tanh())
        return Tensor._result(compiled(gelu_backward, grad._data, x._data)(grad._data, x._data), None)


def gelu_forward(x: np.ndarray) -> np.ndarray:
    """GELU of x, on cache-sized pieces cut into one run per thread of the pool."""
    y = np.empty(x.shape, x.dtype)
    pool.run_in_runs(_gelu_run, pieces(y, np.ascontiguousarray(x), size=shared_piece(x.nbytes)), x.nbytes)
    return y


def gelu_backward(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """g · dGELU/dx, recomputed from x, on cache-sized pieces cut into one run per thread of the pool."""
    dx = np.empty(x.shape, x.dtype)
    pool.run_in_runs(_gelu_grads, pieces(dx, np.ascontiguousarray(g), np.ascontiguousarray(x),
                                         size=shared_piece(x.nbytes)), x.nbytes)
    return dx


def _gelu_run(run):
    """y = ½x(1 + tanh u) on each (y, x) piece of a run."""
    for y, x in run:
        _tanh_u(x, out=y)
        y += 1
        y *= x
        y *= 0.5


def _gelu_grads(run):
    """_gelu_grad on each (dx, g, x) piece of a run, with work space for one piece."""
    work = np.empty((2, max(x.size for _, _, x in run)), run[0][2].dtype)   # 1 + t and 1 − t of one piece
    for dx, g, x in run:
        _gelu_grad(g, x, dx, *(w[:x.size].reshape(x.shape) for w in work))


def _gelu_grad(g: np.ndarray, x: np.ndarray, out: np.ndarray, t: np.ndarray, one_minus_t: np.ndarray):
    """out = g · dy/dx on arrays of one piece, with the slope factored as
    dy/dx = (1 + t)(½ + ½x(1 − t)·√(2/π)(1 + 3·0.044715x²)), t = tanh u (1 − t² = (1 − t)(1 + t)),
    so that it takes few in-place steps, x² made once for u and the slope; t and one_minus_t are
    work space of x's shape."""
    x2 = np.multiply(x, x, out=out)
    u = np.multiply(x2, GELU_C * 0.044715, out=t)
    u += GELU_C
    u *= x
    np.tanh(u, out=t)
    np.subtract(1, t, out=one_minus_t)
    t += 1                                             # 1 + t
    slope = x2
    slope *= 1.5 * 0.044715 * GELU_C
    slope += 0.5 * GELU_C
    slope *= x                                         # ½x·√(2/π)(1 + 3·0.044715x²)
    slope *= one_minus_t
    slope += 0.5
    slope *= t
    slope *= g
    return slope


SQRT_HALF = 1 / math.sqrt(2)
INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


def _gelu_erf_slope(x):
    """dy/dx of the exact GELU on Tensors (for a recorded backward): Φ(x) + x·φ(x)."""
    return 0.5 * (1 + (x * SQRT_HALF).erf()) + x * (x * x * -0.5).exp() * INV_SQRT_2PI


class GeluErf(Fused):
    """The exact GELU: y = x·Φ(x) = ½x(1 + erf(x/√2)), Φ the Gaussian CDF (PyTorch's default GELU).

    Backward: dy/dx = Φ(x) + x·φ(x), φ(x) = e^(−x²/2)/√(2π) the Gaussian density. Both run on
    cache-sized pieces, one run per thread of the pool. numpy has no erf: Φ comes from erf.py's
    (float64), from normal_cdf.py's few steps (float32, to its rounding), or from the C library's vector
    erf in the `fast` extra's kernel. The kernels recompute Φ in backward, as Gelu does; the numpy body,
    for which Φ is most of the op's cost, makes the whole slope Φ(x) + x·φ(x) in forward instead, from
    the x² that Φ needs too, and keeps it (one array held per layer between forward and backward,
    `self.slope`; not made while gradients are off), so that backward is one product, written over the
    slope (no new array to fill; a second backward, retain_graph=True, makes the slope again from x).
    Either way the same numbers: the same steps on the same values.
    """
    composite = "gelu_erf"

    @staticmethod
    def from_composite(x): return GeluErf.apply(x)

    def forward(self, x):
        run = compiled(gelu_erf_forward, x)
        keep = run is gelu_erf_forward and state.grad_enabled
        self.slope = np.empty(x.shape, x.dtype) if keep else None
        return run(x) if self.slope is None else gelu_erf_forward(x, self.slope)

    def backward(self, grad, out):
        x = self.parents[0]
        if state.grad_enabled:  # create_graph: the slope must itself be differentiable
            return grad * _gelu_erf_slope(x)
        if self.slope is not None:
            slope, self.slope = self.slope, None                              # used up: dx is written over it
            return Tensor._result(gelu_erf_backward(grad._data, x._data, slope, out=slope), None)
        return Tensor._result(compiled(gelu_erf_backward, grad._data, x._data)(grad._data, x._data), None)


def gelu_erf_forward(x: np.ndarray, slope: np.ndarray | None = None) -> np.ndarray:
    """The exact GELU of x, on cache-sized pieces cut into one run per thread of the pool; the slope
    Φ(x) + x·φ(x) written into `slope` (x's shape and dtype, contiguous) when it is given."""
    y = np.empty(x.shape, x.dtype)
    arrays = (y, np.ascontiguousarray(x)) + (() if slope is None else (slope,))
    pool.run_in_runs(_gelu_erf_run, pieces(*arrays, size=shared_piece(x.nbytes)), x.nbytes)
    return y


def gelu_erf_backward(g: np.ndarray, x: np.ndarray, slope: np.ndarray | None = None,
                      out: np.ndarray | None = None) -> np.ndarray:
    """g · (Φ(x) + x·φ(x)), on cache-sized pieces cut into one run per thread of the pool: g times `slope`
    when it is given (gelu_erf_forward's), else with the slope made again from x; into `out` when it is
    given (x's shape and dtype, contiguous; it may be `slope` itself), else into a new array."""
    dx = np.empty(x.shape, x.dtype) if out is None else out
    if slope is not None:                     # one pass, bound by memory: one piece per thread, not cache-sized
        per_thread = -(-x.size // pool.threads_for(x.nbytes))
        pool.run_in_runs(_times_slope, pieces(dx, np.ascontiguousarray(g), slope, size=per_thread), x.nbytes)
        return dx
    pool.run_in_runs(_gelu_erf_grads, pieces(dx, np.ascontiguousarray(g), np.ascontiguousarray(x),
                                              size=shared_piece(x.nbytes)),
                     x.nbytes)
    return dx


def _gelu_erf_run(run):
    """y = x·Φ(x) on each (y, x) or (y, x, slope) piece of a run; into slope, Φ(x) + x·φ(x). Overflow
    reports are off for the whole run (see `_cdf`), not entered again for each piece."""
    kept = len(run[0]) == 3
    work = np.empty((2 if kept else 3, max(piece[1].size for piece in run)), run[0][1].dtype)
    with np.errstate(over="ignore"):
        for y, x, *slope in run:
            square, scratch, *cdf = (w[:x.size].reshape(x.shape) for w in work)
            cdf = slope[0] if kept else cdf[0]
            _cdf(x, np.multiply(x, x, out=square), cdf, scratch)
            np.multiply(cdf, x, out=y)
            if kept:
                _add_x_density(x, square, cdf, scratch)


def _gelu_erf_grads(run):
    """dx = g·(Φ(x) + x·φ(x)) on each (dx, g, x) piece of a run, the slope made from x (overflow reports
    off for the run, as in _gelu_erf_run)."""
    work = np.empty((2, max(piece[2].size for piece in run)), run[0][2].dtype)
    with np.errstate(over="ignore"):
        for dx, g, x in run:
            square, scratch = (w[:x.size].reshape(x.shape) for w in work)
            _cdf(x, np.multiply(x, x, out=square), dx, scratch)
            _add_x_density(x, square, dx, scratch)
            dx *= g


def _times_slope(run):
    """dx = g·slope on each (dx, g, slope) piece of a run."""
    for dx, g, slope in run:
        np.multiply(slope, g, out=dx)


def _cdf(x: np.ndarray, square: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Φ(x) = ½(1 + erf(x/√2)) into out, given x² (`square`), with scratch (an array of x's shape): for
    float32, normal_cdf.py's few steps, accurate to float32 rounding; otherwise with erf.py's erf,
    accurate to float64 rounding. Called with overflow reports off: past |x| ≈ 1.8e19 (float32) x² is inf,
    and past 8.7e3 Φ's polynomial, and both Φ and φ take that as they should (0 or 1, and 0); erf.py
    clamps its argument and does not overflow."""
    if x.dtype == np.float32:
        return normal_cdf_steps(x, square, out)
    out[...] = erf(np.multiply(x, SQRT_HALF, out=scratch))
    out += 1
    out *= 0.5
    return out


def _add_x_density(x: np.ndarray, square: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> None:
    """out += x·φ(x), φ(x) = e^(−x²/2)/√(2π), given x² (`square`), with scratch (x's shape)."""
    density = np.multiply(square, -0.5, out=scratch)
    np.exp(density, out=density)
    density *= x
    density *= INV_SQRT_2PI
    out += density


class Silu(Fused):
    """SiLU y = x·σ(x). Backward, by the product rule: dy/dx = σ + x·σ(1 − σ), with σ made again from x
    rather than saved (one array less held per layer between forward and backward).

    Both run on cache-sized pieces (memory.pieces) written into the output, one run of pieces per thread
    of the pool (silu_forward, silu_backward), taking the composite's steps in its order: its very bits."""
    composite = "silu"

    @staticmethod
    def from_composite(x): return Silu.apply(x)

    def forward(self, x):
        return compiled(silu_forward, x)(x)

    def backward(self, grad, out):
        x = self.parents[0]
        if state.grad_enabled:  # create_graph: σ must itself be differentiable
            return _silu_grad(grad, x, x.sigmoid())
        return Tensor._result(compiled(silu_backward, grad._data, x._data)(grad._data, x._data), None)


def _silu_grad(g, x, s):
    """g·d(x·σ(x))/dx = g·σ + g·x·σ(1 − σ) on Tensors, given s = σ(x) (for a recorded backward)."""
    return g * s + g * x * s * (1 - s)


def silu_forward(x: np.ndarray) -> np.ndarray:
    """x·σ(x), on cache-sized pieces cut into one run per thread of the pool."""
    y = np.empty(x.shape, x.dtype)
    pool.run_in_runs(_silu_run, pieces(y, np.ascontiguousarray(x), size=shared_piece(x.nbytes)), x.nbytes)
    return y


def silu_backward(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """g·(σ + x·σ(1 − σ)), σ = σ(x), on cache-sized pieces cut into one run per thread of the pool."""
    dx = np.empty(x.shape, x.dtype)
    pool.run_in_runs(_silu_grads, pieces(dx, np.ascontiguousarray(g, x.dtype), np.ascontiguousarray(x),
                                          size=shared_piece(x.nbytes)),
                     x.nbytes)
    return dx


def _silu_run(run):
    """y = x·σ(x) on each (y, x) piece of a run."""
    work = np.empty(max(x.size for _, x in run), run[0][1].dtype)
    for y, x in run:
        _sigmoid(x, y, work[:x.size].reshape(x.shape))
        y *= x


def _silu_grads(run):
    """dx = g·σ + ((g·x)·σ)·(1 − σ) on each (dx, g, x) piece of a run: the composite's products, in its order."""
    work = np.empty((2, max(x.size for _, _, x in run)), run[0][2].dtype)
    for dx, g, x in run:
        s, t = (w[:x.size].reshape(x.shape) for w in work)
        _sigmoid(x, s, t)
        np.multiply(g, x, out=t)
        t *= s
        np.multiply(g, s, out=dx)
        np.subtract(1, s, out=s)
        t *= s
        dx += t


def _sigmoid(x: np.ndarray, out: np.ndarray, work: np.ndarray) -> np.ndarray:
    """σ(x) written into out with ops.Sigmoid's numbers, in place: e = e^-|x| (never overflows), then 1
    where x ≥ 0 and e elsewhere, over 1 + e (in work, of x's shape). The numerator is max(e, x ≥ 0),
    exactly np.where(x >= 0, 1, e) (e ≤ 1 where x ≥ 0; a NaN stays NaN) at a tenth of its cost."""
    np.abs(x, out=out)
    np.negative(out, out=out)
    np.exp(out, out=out)
    np.add(out, 1, out=work)
    np.maximum(out, x >= 0, out=out)
    return np.divide(out, work, out=out)


class SwiGLU(Fused):
    """SwiGLU y = silu(a)·b of x = [a | b] (..., 2n): the gate a and the up projection b side by side on
    the last axis, as nn.MLP's c_fc makes them; y (..., n).

    Backward: da = (g·b)·(σ + a·σ(1 − σ)) (SiLU's slope), db = g·silu(a), with σ = σ(a) made again from
    a; da and db side by side are dx, written into its two halves. Both read the two halves of x where
    they are (views), on cache-sized pieces of whole rows, one run of pieces per thread of the pool
    (swiglu_forward, swiglu_backward); like SiLU's, they take the composite's steps in its order."""
    composite = "swiglu"

    @staticmethod
    def from_composite(x): return SwiGLU.apply(x)

    def forward(self, x):
        return compiled(swiglu_forward, x)(x)

    def backward(self, grad, out):
        x = self.parents[0]
        if state.grad_enabled:  # create_graph: Tensor ops, the halves' gradients joined by cat
            a, b = halves(x)
            s = a.sigmoid()
            return Tensor.cat(_silu_grad(grad * b, a, s), grad * (a * s), dim=-1)
        return Tensor._result(compiled(swiglu_backward, grad._data, x._data)(grad._data, x._data), None)


def halves(x):
    """The gate x[..., :n] and the up projection x[..., n:] of x (..., 2n), an array or a Tensor (views)."""
    n = x.shape[-1] // 2
    return x[..., :n], x[..., n:]


def swiglu_forward(x: np.ndarray) -> np.ndarray:
    """silu(a)·b (..., n) for x = [a | b] (..., 2n), on cache-sized pieces of whole rows cut into one run
    per thread of the pool; a and b are views of x's halves (each row a piece of a row of x), not copies."""
    a, b = halves(x)
    y = np.empty(a.shape, a.dtype)
    pool.run_in_runs(_swiglu_run, row_pieces(y, a, b, size=shared_piece(a.nbytes)), a.nbytes)
    return y


def swiglu_backward(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dx = [da | db] (..., 2n) of swiglu_forward given the upstream gradient g (..., n), piece by piece as
    swiglu_forward, da and db written into the halves of dx."""
    a, b = halves(x)
    dx = np.empty(x.shape, x.dtype)
    da, db = halves(dx)
    pool.run_in_runs(_swiglu_grads, row_pieces(da, db, np.ascontiguousarray(g, a.dtype), a, b,
                                              size=shared_piece(a.nbytes)),
                     a.nbytes)
    return dx


def _swiglu_run(run):
    """y = (a·σ(a))·b on each (y, a, b) piece of a run."""
    work = np.empty(max(a.size for _, a, _ in run), run[0][1].dtype)
    for y, a, b in run:
        _sigmoid(a, y, work[:a.size].reshape(a.shape))
        y *= a
        y *= b


def _swiglu_grads(run):
    """On each (da, db, g, a, b) piece of a run, the composite's products in its order: with gb = g·b,
    da = gb·σ + ((gb·a)·σ)·(1 − σ) (SiLU's backward of gb), db = g·(a·σ)."""
    work = np.empty((2, max(a.size for _, _, _, a, _ in run)), run[0][3].dtype)
    for da, db, g, a, b in run:
        s, t = (w[:a.size].reshape(a.shape) for w in work)
        _sigmoid(a, s, t)
        np.multiply(g, b, out=t)
        np.multiply(t, s, out=da)
        t *= a
        t *= s
        np.multiply(a, s, out=db)
        db *= g
        np.subtract(1, s, out=s)
        t *= s
        da += t


class CrossEntropy(Fused):
    """Cross-entropy of logits (N, C) at the chosen rows (M,) against their targets (M,), through
    log-sum-exp: loss_row = lse(x) − (1 − ε)·x[target] − ε·mean(x), lse(x) = m + log Σ exp(x − m),
    m the row max; ε = label_smoothing (the target distribution (1 − ε)·onehot + ε/C). Never the log
    of a probability, which underflows to 0 (and the loss to inf) once a logit leads by ~104 in float32.
    Rows not chosen (ignore_index) are never read, so whatever they hold cannot reach the result.
    reduction "mean" (over the chosen rows), "sum", or "none": (N,) with 0 at rows not chosen.

    Backward: d logits = (softmax(x) − (1 − ε)·onehot − ε/C) · g_row on the chosen rows, 0 elsewhere,
    with g_row = g / M, g, or g[row]. Both run on cache-sized pieces of whole rows; the target
    distribution is never built as an array, except for a recorded (create_graph) backward.
    """
    composite = "cross_entropy"

    @staticmethod
    def from_composite(logits, rows, targets, reduction="mean", label_smoothing=0.0):
        return CrossEntropy.apply(logits, rows=rows, targets=targets, reduction=reduction,
                                  label_smoothing=label_smoothing)


    def forward(self, logits, rows, targets, reduction="mean", label_smoothing=0.0):
        self.rows, self.targets, self.reduction, self.smoothing = rows, targets, reduction, label_smoothing
        self.every_row = len(rows) == logits.shape[0]
        x = np.ascontiguousarray(logits if self.every_row else logits[rows])  # (M, C)
        self.probs, losses = compiled(cross_entropy_forward, x)(x, targets, label_smoothing)
        self.count = max(len(rows), 1)
        if reduction == "none":
            out = np.zeros(logits.shape[0], dtype=logits.dtype)
            out[rows] = losses
            return out
        total = losses.sum()
        return np.asarray(total / self.count if reduction == "mean" else total, dtype=logits.dtype)

    def goal(self) -> np.ndarray:
        """The target distribution (M, C): (1 − ε)·onehot + ε/C."""
        goal = np.zeros(self.probs.shape, self.probs.dtype)
        goal[np.arange(len(self.rows)), self.targets] = 1
        if self.smoothing:
            goal *= 1 - self.smoothing
            goal += self.smoothing / goal.shape[-1]
        return goal

    def backward(self, grad, out):
        logits = self.parents[0]
        scale = {"mean": lambda g: g / self.count, "sum": lambda g: g,
                 "none": lambda g: g[self.rows].reshape(-1, 1)}[self.reduction]
        if state.grad_enabled:
            chosen = logits if self.every_row else logits[self.rows]
            probs = saved_or_rebuilt(self.probs, lambda: chosen.softmax(-1))
            d = by_formula(lambda p, g: (p - self.goal()) * scale(g), probs, grad)   # (M, C)
        else:
            args = (self.probs, self.targets, self.smoothing, scale(grad._data))
            d = Tensor._result(compiled(cross_entropy_backward, self.probs, args[-1])(*args), None)
        return d if self.every_row else ScatterAdd.apply(d, shape=logits.shape, index=self.rows)


def cross_entropy_forward(x: np.ndarray, targets: np.ndarray, smoothing: float):
    """(probs (M, C), losses (M,)) of logits x (M, C) against targets (M,): probs = softmax(x), loss =
    (1 − ε)(lse(x) − x[target]) + ε(lse(x) − mean(x)), lse(x) = m + log Σ exp(x − m), m each row's max;
    on cache-sized pieces of whole rows."""
    probs = np.empty(x.shape, x.dtype)
    shift, log_sums = np.empty((2, len(x), 1), x.dtype)                      # m, log Σ exp(x − m)
    mean_shifted = np.empty((len(x), 1), x.dtype) if smoothing else None
    for x_rows, p_rows, m, log_sum, *mean in row_pieces(x, probs, shift, log_sums,
                                                         *(() if mean_shifted is None else (mean_shifted,)),
                                                         size=PIECE):
        np.copyto(m, array_max(x_rows, -1))
        np.subtract(x_rows, m, out=p_rows)                                    # x − m ≤ 0
        if mean:
            np.multiply(array_sum(p_rows, -1), x.dtype.type(1 / x.shape[-1]), out=mean[0])
        np.exp(p_rows, out=p_rows)
        sums = array_sum(p_rows, -1)                                          # Σ exp(x − m) ≥ 1
        p_rows /= sums
        np.log(sums, out=log_sum)
    losses = log_sums[:, 0] - (x[np.arange(len(x)), targets] - shift[:, 0])  # lse(x) − x[target]
    if smoothing:
        losses = (1 - smoothing) * losses + smoothing * (log_sums - mean_shifted)[:, 0]
    return probs, losses


def cross_entropy_backward(p: np.ndarray, targets: np.ndarray, smoothing: float, scale) -> np.ndarray:
    """(p − goal)·scale for probs p (M, C), scale one number or (M, 1): the goal's (1 − ε)·onehot + ε/C
    applied where it is not 0 instead of being built: ε/C subtracted everywhere (when ε > 0), the
    one-hot part at each row's target."""
    eps, kind = smoothing, p.dtype.type
    at = np.arange(len(p))
    p_target = p[at, targets]
    d = np.empty(p.shape, p.dtype)
    scale = np.asarray(scale, p.dtype)
    for p_rows, d_rows, *s in row_pieces(p, d, *(() if scale.ndim == 0 else (scale,)), size=PIECE):
        if eps:
            np.subtract(p_rows, kind(eps / p.shape[-1]), out=d_rows)
            d_rows *= s[0] if s else scale
        else:
            np.multiply(p_rows, s[0] if s else scale, out=d_rows)
    goal_target = kind(1 - eps) + kind(eps / p.shape[-1]) if eps else kind(1)
    d[at, targets] = (p_target - goal_target) * (scale if scale.ndim == 0 else scale[:, 0])
    return d


class Attention(Fused):
    """(softmax(q kᵀ·scale + mask) ⊙ noise) v on (..., T, d) arrays; mask is additive (0 or −inf, or any
    float); noise, dropout's factors (0 or 1/(1 − p)) on the weights, or None. Computed in cache-sized tiles
    by flash.py, which keeps each row's log-sum-exp and kᵀ·scale for backward.

    Backward, with w the attention weights: dv = (w ⊙ noise)ᵀg, dw = g vᵀ ⊙ noise, ds = w ⊙ (dw − Σ dw⊙w),
    dq = ds k·scale, dk = dsᵀ q·scale (each summed back over broadcast batch axes). A query row whose
    keys are all masked gives 0, with zero gradients (PyTorch's choice).
    """
    composite = "attention"

    @staticmethod
    def accepts(q, k, v, mask=None, is_causal=False, return_weights=False, dropout_p=0.0, weights_hook=None) -> bool:
        """Not for the weights or a hook on them, nor for a mask that wants a gradient; with dropout, only
        where q, k, v (and a float mask) share one dtype, the one the composite draws the noise in."""
        plain = not return_weights and weights_hook is None and (mask is None or not mask.requires_grad)
        return plain and (not dropout_p or _one_dtype(q, k, v, mask))

    @staticmethod
    def from_composite(q, k, v, mask=None, is_causal=False, return_weights=False, dropout_p=0.0, weights_hook=None):
        noise = None
        if dropout_p:  # the composite's draw: the weights' shape, in their dtype, at the same place in the stream
            weights = np.broadcast_shapes(q.shape[:-2] + (q.shape[-2], k.shape[-2]), k.shape[:-2] + (1, 1),
                                          () if mask is None else mask.shape)
            noise = _random.dropout_noise(weights, dropout_p, q.dtype)
        return Attention.apply(q, k, v, mask=additive_mask(q, k, mask, is_causal), noise=noise)

    @staticmethod
    def as_composite(q, k, v, mask, noise=None):
        mask = None if mask is None else Tensor._result(mask, None)
        if noise is None:
            return (q, k, v, mask), {}
        return (q, k, v, mask), {"weights_hook": _times(noise)}   # dropout with the noise this op drew

    def forward(self, q, k, v, mask, noise=None):
        self.scale = q.dtype.type(1 / math.sqrt(q.shape[-1]))
        self.mask, self.noise = mask, noise
        shape = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2], () if mask is None else mask.shape[:-2])
        n = max(3, q.ndim, k.ndim, v.ndim, 0 if mask is None else mask.ndim)
        q, k, v = (a.reshape((1,) * (n - a.ndim) + a.shape) for a in (q, k, v))    # the same number of axes
        Tq, Tk = q.shape[-2], k.shape[-2]
        if mask is not None:
            mask = mask.reshape((1,) * (n - mask.ndim) + mask.shape)
            if mask.shape[-2:] != (Tq, Tk):                                         # a (Tk,) padding mask
                mask = np.broadcast_to(mask, mask.shape[:-2] + (Tq, Tk))
        if noise is not None:
            noise = noise.reshape((1,) * (n - noise.ndim) + noise.shape)
        batch = (1,) * (n - 2 - len(shape)) + shape                                  # the batch axes, padded
        out = np.empty(batch + (Tq, v.shape[-1]), np.result_type(q, k, v))
        self.lse = np.empty(batch + (Tq, 1), out.dtype)
        self.chunk, self.tiles = flash.tiling(mask, batch, Tq, Tk, out.dtype.itemsize)
        self.arrays = q, k, v, mask, noise
        self.kT = flash.forward(q, k, v, mask, self.scale, self.tiles, out, self.lse, self.chunk, noise)
        return out.reshape(shape + out.shape[-2:])

    def backward(self, grad, out):
        q, k, v = self.parents
        need = [p.requires_grad for p in self.parents]
        if state.grad_enabled:  # create_graph: the weights rebuilt from q and k with Tensor ops
            w = _attention_weights(q, k, self.mask, self.scale)
            noise = None if self.noise is None else Tensor._result(self.noise, None)
            return by_formula(_attention_grads, grad, q, k, v, w, float(self.scale), need, noise)
        qa, ka, va, mask, noise = self.arrays
        g = grad._data.reshape(self.lse.shape[:-2] + grad.shape[-2:])
        grads = [np.empty(self.lse.shape[:-2] + a.shape[-2:], a.dtype) for a in (qa, ka, va)]
        flash.backward(g, qa, ka, va, out._data.reshape(g.shape), self.lse, mask, self.scale, self.tiles, *grads,
                       self.chunk, self.kT, noise)
        return tuple(Tensor._result(d.reshape(p.shape) if d.size == p._data.size else unbroadcast(d, p.shape), None)
                     if wanted else None for d, p, wanted in zip(grads, self.parents, need))


def additive_mask(q: Tensor, k: Tensor, mask: Tensor | None, is_causal: bool) -> np.ndarray | None:
    """Causal and boolean masks as 0 / -inf to add to the scores (a float mask is added as it is)."""
    total = None
    if is_causal:
        total = np.where(causal_mask(q.shape[-2], k.shape[-2]), 0, -np.inf).astype(q.dtype)
    if mask is not None:
        m = np.where(mask._data, 0, -np.inf).astype(q.dtype) if mask.dtype == bool else mask._data.astype(q.dtype)
        total = m if total is None else total + m
    return total


def _one_dtype(*tensors) -> bool:
    """q, k, v and a mask (None, boolean, or float) all of one floating dtype."""
    kinds = {t.dtype for t in tensors if t is not None and t.dtype != bool}
    return len(kinds) == 1 and np.dtype(kinds.pop()).kind == "f"


def _times(noise: np.ndarray):
    """weights -> weights ⊙ noise, as Tensor ops: dropout with a noise already drawn (as_composite's hook)."""
    return lambda weights: weights * Tensor._result(noise.reshape(weights.shape), None)


def _attention_weights(q, k, mask, scale):
    """The weights of Attention rebuilt from the Tensors q and k, for a recorded (create_graph) backward.
    Rows whose keys are all masked get weights 0 (composites.attention_softmax, as in the composite)."""
    scores = q @ k.transpose(-2, -1) * float(scale)
    return attention_softmax(scores if mask is None else scores + Tensor._result(mask, None))


def _attention_grads(g, q, k, v, w, scale, need, noise=None):
    """(dq, dk, dv) of Σ g⊙out for out = (w ⊙ noise) v, w the weights (noise None: out = w v)."""
    dw = g @ swap_last(v)                                                     # (..., Tq, Tk)
    seen = w
    if noise is not None:                                                     # dropout between the weights and v
        dw, seen = dw * noise, w * noise
    ds = w * (dw - keep_dot(dw, w))                                           # through the softmax
    return (unbroadcast(ds @ k * scale, q.shape) if need[0] else None,
            unbroadcast(swap_last(ds) @ q * scale, k.shape) if need[1] else None,
            unbroadcast(swap_last(seen) @ g, v.shape) if need[2] else None)


class MultiHeadAttention(Fused):
    """Causal (or full) multi-head self-attention read straight from the packed projection: what
    nn.Attention computes between c_attn and c_proj, as one op. qkv (B, T, (nh + 2·nkv)·hs) holds
    each token's nh query heads, then nkv key heads, then nkv value heads; the output (B, T, nh·hs)
    holds the heads' results side by side. Query head h reads KV head h // (nh / nkv) (grouped-query
    attention; nkv = nh is plain multi-head).

    Computed in cache-sized tiles by flash.py, straight from views of qkv into the output's layout;
    causal tiles above the diagonal are skipped. Backward is the Attention backward, written into one
    (B, T, ·) array in the packed layout. Dropout on the weights as in Attention: noise (B, nkv, nh/nkv, T, T).
    """
    composite = "multihead_attention"

    @staticmethod
    def accepts(qkv, n_head, n_kv_head, is_causal=False, dropout_p=0.0, weights_hook=None, return_weights=False,
                prepare=None) -> bool:
        """Not for the weights or a hook on them, nor heads changed by `prepare` (RoPE, a KV cache)."""
        return not return_weights and weights_hook is None and prepare is None

    @staticmethod
    def from_composite(qkv, n_head, n_kv_head, is_causal=False, dropout_p=0.0, weights_hook=None,
                       return_weights=False, prepare=None):
        noise = None
        if dropout_p:  # the composite's draw: the weights (B, nkv, nh/nkv, T, T) in qkv's dtype
            B, T = qkv.shape[:2]
            noise = _random.dropout_noise((B, n_kv_head, n_head // n_kv_head, T, T), dropout_p, qkv.dtype)
        return MultiHeadAttention.apply(qkv, n_head=n_head, n_kv_head=n_kv_head, causal=is_causal, noise=noise)

    @staticmethod
    def as_composite(qkv, n_head, n_kv_head, causal, noise=None):
        return (qkv, n_head, n_kv_head, causal), {} if noise is None else {"weights_hook": _times(noise)}

    def forward(self, qkv, n_head, n_kv_head, causal, noise=None):
        self.heads, self.causal, self.noise = (n_head, n_kv_head), causal, noise
        q, k, v = split_heads(qkv, n_head, n_kv_head)          # (B, nkv, nh/nkv, T, hs), (B, nkv, 1, T, hs)
        B, n_kv, group, T, hs = q.shape
        self.scale = qkv.dtype.type(1 / math.sqrt(hs))
        self.chunk, tq, span = flash.plan(q.shape[:-2], T, T, qkv.dtype.itemsize)
        self.tiles = flash.causal_spans(T, tq, span, qkv.dtype) if causal else flash.key_spans(None, T, T, tq, span)
        out = np.empty((B, T, n_kv, group, hs), qkv.dtype)
        self.lse = np.empty(q.shape[:-1] + (1,), qkv.dtype)
        self.kT = flash.forward(q, k, v, self._mask(T, qkv.dtype), self.scale, self.tiles, by_heads(out), self.lse,
                                self.chunk, noise)
        return out.reshape(B, T, n_kv * group * hs)

    def _mask(self, T, dtype):
        return constant("causal", T, dtype).reshape(1, 1, 1, T, T) if self.causal else None

    def backward(self, grad, out):
        qkv, = self.parents
        B, T, _ = qkv.shape
        if state.grad_enabled:  # create_graph: the weights rebuilt from qkv with Tensor ops
            q, k, v = split_heads(qkv, *self.heads)
            w = _attention_weights(q, k, constant("causal", T, qkv.dtype) if self.causal else None, self.scale)
            g = swap_12(grad.reshape(B, T, self.heads[0], -1)).reshape(q.shape)     # like q: (B, nkv, nh/nkv, T, hs)
            noise = None if self.noise is None else Tensor._result(self.noise, None)
            return join_heads(*_attention_grads(g, q, k, v, w, float(self.scale), (True, True, True), noise))
        q, k, v = split_heads(qkv._data, *self.heads)
        dqkv = np.empty(qkv.shape, qkv.dtype)
        dq, dk, dv = split_heads(dqkv, *self.heads)                                # views: written in place
        g, o = (by_heads(a._data.reshape(q.shape[0], T, *q.shape[1:3], -1)) for a in (grad, out))
        flash.backward(g, q, k, v, o, self.lse, self._mask(T, qkv.dtype), self.scale, self.tiles, dq, dk, dv,
                       self.chunk, self.kT, self.noise)
        return Tensor._result(dqkv, None)


def by_heads(a: np.ndarray) -> np.ndarray:
    """(B, T, nkv, nh/nkv, hs) -> the view (B, nkv, nh/nkv, T, hs), the layout of split_heads' q."""
    return a.transpose(0, 2, 3, 1, 4)
