"""Array helpers the fast path shares: row reductions as BLAS products, cached constants, and the faster
array functions of four primitive ops (registered with dispatch by fast/__init__.py).

Each takes and returns numpy arrays (the `keep_*`, `rows_sum` and `swap_last` helpers also Tensors, so
that a fused op's backward formula runs on either; see fused.by_formula). Each equals its plain numpy
version, which tests/test_fused.py and tests/test_ops_gradcheck.py check.
"""
from __future__ import annotations

import functools

import numpy as np

from tinygrad_like import ops
from tinygrad_like.composites import causal_mask
from tinygrad_like.fast import elementwise


def keep_sum(a, axis):
    """Σ over `axis`, kept as a size-1 axis, of a numpy array or a Tensor."""
    return array_sum(a, axis) if isinstance(a, np.ndarray) else a.sum(axis, keepdim=True)


@functools.lru_cache(maxsize=64)
def constant(kind: str, n: int, dtype: np.dtype) -> np.ndarray:
    """Read-only arrays the fused ops need again every step, made once: "ones" (n,), and "causal" (n, n),
    the additive causal mask (0 where query i may see key j <= i, −inf above the diagonal)."""
    if kind == "ones":
        array = np.ones(n, dtype)
    else:
        array = np.where(causal_mask(n, n), 0, -np.inf).astype(dtype)
    array.flags.writeable = False
    return array


def keep_dot(a, b):
    """Σ a⊙b over the last axis, kept as a size-1 axis, of numpy arrays (np.vecdot, without the
    product's temporary) or Tensors."""
    return np.vecdot(a, b)[..., None] if isinstance(a, np.ndarray) else (a * b).sum(-1, keepdim=True)


def rows_sum(a):
    """Σ over every axis but the last, (..., n) -> (n,): a bias gradient. For arrays a product with
    ones, which BLAS does faster than numpy's sum over axis 0 (benchmarks/bench_ops.py)."""
    if isinstance(a, np.ndarray):
        return constant("ones", a.size // a.shape[-1], a.dtype) @ a.reshape(-1, a.shape[-1])
    return a.reshape(-1, a.shape[-1]).sum(0)


def array_sum(a: np.ndarray, axis: int) -> np.ndarray:
    """a.sum(axis, keepdims=True). Along the last axis as a product with a vector of ones: BLAS does
    it faster than numpy's reduction over short rows (benchmarks/bench_ops.py)."""
    if axis in (-1, a.ndim - 1) and a.ndim:
        return a @ constant("ones", a.shape[-1], a.dtype)[:, None]
    return a.sum(axis, keepdims=True)


def array_max(a: np.ndarray, axis: int) -> np.ndarray:
    """a.max(axis, keepdims=True), read out at the argmax: numpy's argmax is faster than its max
    over short rows (benchmarks/bench_ops.py). A NaN is found by both alike. Along the
    last axis of a contiguous array, the argmax of each row is turned into a flat index by hand,
    which costs less than take_along_axis."""
    if axis not in (-1, a.ndim - 1) or not a.flags.c_contiguous or a.size == 0:
        return np.take_along_axis(a, np.expand_dims(a.argmax(axis), axis), axis)
    n = a.shape[-1]
    at = a.reshape(-1, n).argmax(1)
    at += np.arange(0, a.size, n)                                             # row start + column
    return a.reshape(-1).take(at).reshape(*a.shape[:-1], 1)


def swap_last(a):
    """Swap the last two axes (a batched transpose) of a numpy array or a Tensor."""
    return a.swapaxes(-1, -2) if isinstance(a, np.ndarray) else a.transpose(-1, -2)


def add_rows(out: np.ndarray, rows: np.ndarray, values: np.ndarray) -> None:
    """out[rows] += values, repeated rows adding up: sort the rows, sum each run of equal rows with
    np.add.reduceat, write each row once.
    The sums of np.add.at (ops.ScatterAdd's plain kernel) in one pass per distinct row, to rounding:
    reduceat adds a run of 8 or more in numpy's pairwise order, np.add.at one by one
    (tests/test_add_rows.py)."""
    if rows.size == 0:
        return
    if rows.min() < 0:
        rows = np.where(rows < 0, rows + out.shape[0], rows)
    if (rows[1:] > rows[:-1]).all():           # already sorted and distinct, like positions 0..T-1
        out[rows] += values
        return
    order = np.argsort(rows, kind="stable")
    rows = rows[order]
    first = np.empty(rows.size, dtype=bool)    # where each run of equal rows starts
    first[0] = True
    np.not_equal(rows[1:], rows[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    out[rows[starts]] += np.add.reduceat(values[order], starts, axis=0)


def power(x: np.ndarray, c) -> np.ndarray:
    """x ** c, as products for c = 2 and 3 (np.power costs many times more), large ones in pieces on the
    thread pool (elementwise.share); ops.power otherwise."""
    if c == 2:
        return elementwise.mul(x, x)
    if c == 3:
        return elementwise.share(_cube, x.shape, x.dtype, x) if x.dtype.kind == "f" else x * x * x
    return ops.power(x, c)


def _cube(outs, ins):
    """x * x * x, (x * x) first, into outs[0]."""
    np.multiply(ins[0], ins[0], out=outs[0])
    np.multiply(outs[0], ins[0], out=outs[0])


FILL_FROM = 1 << 16  # elements: below this, np.where itself (the checks below would cost more than they save)


def where(cond: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """np.where(cond, x, y), the same bits, C-contiguous. For one large array and a single value (a 0-d x
    or y) under a boolean cond that broadcasts to the array's shape, such as masked_fill and its gradient:
    the array copied, then the value written where it goes (np.copyto with where=), which takes fewer
    passes than np.where's walk over three broadcast operands. Anything else: np.where."""
    if getattr(y, "size", 0) >= FILL_FROM and np.ndim(x) == 0 and _fits(cond, y):   # sizes first: a small op
        return _filled(y, x, cond, np.result_type(x, y))                           # pays for two tests only
    if getattr(x, "size", 0) >= FILL_FROM and np.ndim(y) == 0 and _fits(cond, x):
        return _filled(x, y, ~cond, np.result_type(x, y))
    return np.where(cond, x, y)


def _fits(cond, array) -> bool:
    """A boolean cond of the array's shape, or one that broadcasts to it."""
    return (isinstance(array, np.ndarray) and cond.dtype == np.bool_ and cond.ndim <= array.ndim
            and np.broadcast_shapes(cond.shape, array.shape) == array.shape)


def _filled(array, value, at, dtype) -> np.ndarray:
    """A C-contiguous copy of `array` in `dtype`, with `value` where the boolean `at` (broadcast) holds;
    large ones in cache-sized pieces on the thread pool (elementwise.share)."""
    def fill(outs, ins):
        np.copyto(outs[0], ins[0], casting="unsafe")               # as np.where casts to its result type
        np.copyto(outs[0], value, casting="unsafe", where=ins[1])
    return elementwise.share(fill, array.shape, dtype, array, at, piece=FILL_PIECE)


FILL_PIECE = 1 << 16  # elements: the copy is still in the cache when the value is written over it
