"""Array helpers the fast path shares: row reductions as BLAS products, cached constants, and the faster
array functions of three primitive ops (registered with dispatch by fast/__init__.py).

Each takes and returns numpy arrays (the `keep_*`, `rows_sum` and `swap_last` helpers also Tensors, so
that a fused op's backward formula runs on either; see fused.by_formula). Each equals its plain numpy
version, which tests/test_fused.py and tests/test_ops_gradcheck.py check.
"""
from __future__ import annotations

import functools

import numpy as np

from tinygrad_like import ops
from tinygrad_like.composites import causal_mask


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
    """x ** c, as products for c = 2 and 3 (np.power costs many times more); ops.power otherwise."""
    if c == 2:
        return x * x
    if c == 3:
        return x * x * x
    return ops.power(x, c)
