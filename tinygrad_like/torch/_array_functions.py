"""torch's functions of arrays: linear algebra, indexing, shapes and statistics (issue 26).

Most are `torch.X(input, ...) == input.X(...)`, the Tensor method of the dialect (ARRAY_METHOD_FUNCTIONS).
The rest have no Tensor method in PyTorch and are written here, composed of the engine's ops, so their
gradients are the engine's: tensordot, chain_matmul, block_diag, cdist, cartesian_prod, combinations,
vander, meshgrid, broadcast_tensors, atleast_1d/2d/3d, hstack/vstack/dstack/column_stack/row_stack,
tril_indices/triu_indices, and the `_copy` twins of the view functions (diagonal_copy, t_copy, ...).
"""
from __future__ import annotations

import collections
import functools
import itertools
import math

import numpy as np

from tinygrad_like import Tensor
from tinygrad_like.dialect.products import p_norm
from tinygrad_like.errors import ShapeError

_HistogramDD = collections.namedtuple("histogramdd", ["hist", "bin_edges"])

# torch.<name>(input, *args, **kwargs) is input.<name>(*args, **kwargs)
ARRAY_METHOD_FUNCTIONS = (
    # linear algebra
    "mm", "mv", "addmm", "addmv", "addmv_", "addr", "addbmm", "baddbmm", "inner", "vdot", "kron", "cross", "trace",
    "diag", "diagonal", "diagflat", "diag_embed", "dist",
    "inverse", "det", "slogdet", "logdet", "matrix_power",
    # indexing
    "index_add", "index_copy", "index_fill", "index_put", "index_put_", "index_reduce", "scatter_reduce", "take",
    "take_along_dim", "put", "masked_scatter", "select_scatter", "slice_scatter", "diagonal_scatter", "argwhere",
    "nonzero_static",
    # shapes
    "broadcast_to", "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes", "unsafe_split", "unsafe_chunk",
    "unsafe_split_with_sizes", "unbind", "movedim", "moveaxis", "swapaxes", "swapdims", "t", "narrow", "narrow_copy",
    "ravel", "rot90", "fliplr", "flipud", "tile", "select",
    # reductions and statistics
    "count_nonzero", "nanmean", "nansum", "argsort", "diff", "aminmax", "median", "nanmedian", "mode", "kthvalue",
    "quantile", "nanquantile", "cummax", "cummin", "logcumsumexp", "msort", "unique_consecutive", "histc",
    "histogram", "bincount", "cov", "corrcoef", "renorm",
)


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _sequence(tensors, op: str) -> list:
    """tensors given as f(a, b, c) or f([a, b, c]), as Tensors."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    return [_tensor(t) for t in tensors]


# ---------------------------------------------------------------- products

def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    """Σ over paired axes of a and b: dims=n pairs a's last n axes with b's first n; dims=([i...], [j...])
    pairs a's axis i with b's axis j. The rest of a's axes, then the rest of b's. One matmul of the
    two reshaped into matrices."""
    a, b = _tensor(a), _tensor(b)
    if hasattr(dims, "_ctx"):
        dims = dims._data.tolist()
    if isinstance(dims, (int, np.integer)):
        if not 0 <= dims <= min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: dims={dims} for shapes {a.shape} and {b.shape}")
        left, right = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        left, right = ([d] if isinstance(d, int) else list(d) for d in dims)
    left = [a._dim(d, "tensordot") for d in left]
    right = [b._dim(d, "tensordot") for d in right]
    if len(left) != len(right) or any(a.shape[i] != b.shape[j] for i, j in zip(left, right)):
        raise ShapeError(f"tensordot: axes {left} of {a.shape} and {right} of {b.shape} do not pair up")
    free_a = [d for d in range(a.ndim) if d not in left]
    free_b = [d for d in range(b.ndim) if d not in right]
    k = math.prod(a.shape[d] for d in left)
    matrix_a = a.permute(*free_a, *left).reshape(-1, k)           # (free a, paired)
    matrix_b = b.permute(*right, *free_b).reshape(k, -1)          # (paired, free b)
    return (matrix_a @ matrix_b).reshape(*[a.shape[d] for d in free_a], *[b.shape[d] for d in free_b])


def chain_matmul(*matrices) -> Tensor:
    """m1 @ m2 @ ... @ mn of matrices (PyTorch's deprecated spelling of torch.linalg.multi_dot)."""
    matrices = _sequence(matrices, "chain_matmul")
    if not matrices or any(m.ndim != 2 for m in matrices):
        raise ShapeError(f"chain_matmul: needs one or more matrices, got shapes {[m.shape for m in matrices]}")
    return functools.reduce(lambda x, y: x.mm(y), matrices)


def block_diag(*tensors) -> Tensor:
    """The tensors (0-d, 1-D as one row, or 2-D) along the diagonal of a matrix of zeros, in order."""
    blocks = []
    for t in _sequence(tensors, "block_diag"):
        if t.ndim > 2:
            raise ShapeError(f"block_diag: takes tensors of at most 2 dimensions, got shape {t.shape}")
        blocks.append(t.reshape(1, 1) if t.ndim == 0 else t.reshape(1, -1) if t.ndim == 1 else t)
    if not blocks:
        return Tensor(np.zeros((0, 0), dtype=np.float32))
    dtype = np.result_type(*[b.dtype for b in blocks])
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        rows.append(b.cast(dtype).pad((left, width - left - b.shape[1])))  # (rows of b, width)
        left += b.shape[1]
    return Tensor.cat(*rows, dim=0)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode=None) -> Tensor:
    """The p-norm distance of every row of x1 to every row of x2: (..., P, M), (..., R, M) -> (..., P, R),
    the batch axes broadcast. Computed from the differences directly (compute_mode is accepted; PyTorch
    may use a matmul for p = 2, which differs from this in the last bits). Gradient 0 at distance 0."""
    x1, x2 = _tensor(x1), _tensor(x2)
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"cdist: needs (..., P, M) and (..., R, M), got shapes {x1.shape} and {x2.shape}")
    differences = x1.unsqueeze(-2) - x2.unsqueeze(-3)             # (..., P, R, M)
    return p_norm(differences, p, -1, "cdist")


# ---------------------------------------------------------------- making arrays

def cartesian_prod(*tensors) -> Tensor:
    """Every combination of one entry of each 1-D tensor, as rows, the last tensor varying fastest:
    (n1,), (n2,) -> (n1·n2, 2). One tensor gives itself."""
    tensors = _sequence(tensors, "cartesian_prod")
    if any(t.ndim != 1 for t in tensors):
        raise ShapeError(f"cartesian_prod: needs 1-D tensors, got shapes {[t.shape for t in tensors]}")
    if len(tensors) == 1:
        return tensors[0]
    return Tensor.stack(*[g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], dim=1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The r-element combinations of a 1-D tensor's entries, in itertools' order, as rows: (k, r)."""
    if input.ndim != 1:
        raise ShapeError(f"combinations: needs a 1-D tensor, got shape {input.shape}")
    if r < 0:
        raise ValueError(f"combinations: r must be >= 0, got {r}")
    if r == 0:
        return input[np.zeros(0, dtype=np.int64)]
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return input[index]


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix: columns x^(N−1), ..., x, 1 (increasing: 1, x, ..., x^(N−1)); (n,) -> (n, N),
    N = n by default. Powers are repeated products, so x = 0 has finite gradients."""
    if x.ndim != 1:
        raise ShapeError(f"vander: needs a 1-D tensor, got shape {x.shape}")
    N = x.shape[0] if N is None else N
    if N < 0:
        raise ValueError(f"vander: N must be >= 0, got {N}")
    if N == 0:
        return x._result(np.zeros((x.shape[0], 0), dtype=x.dtype), None)
    columns = [x._result(np.ones(x.shape, dtype=x.dtype), None)]
    for _ in range(N - 1):
        columns.append(columns[-1] * x)
    out = Tensor.stack(*columns, dim=1)
    return out if increasing else out.flip(1)


def _triangle_indices(op: str, row: int, col: int, offset: int, dtype, fn) -> Tensor:
    if row < 0 or col < 0:
        raise ValueError(f"{op}: row and col must be >= 0, got {row} and {col}")
    rows, cols = fn(row, offset, col)
    return Tensor(np.stack([rows, cols]).astype(np.dtype(dtype) if dtype is not None else np.int64))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """(2, N) int64: the row and column indices of the lower triangle of a row × col matrix (on and below
    the offset diagonal), row by row."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, np.tril_indices)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """(2, N) int64: the indices of the upper triangle (on and above the offset diagonal), row by row."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, np.triu_indices)


def unravel_index(indices, shape) -> tuple:
    """The index, one int64 tensor per dimension of `shape`, of each flat row-major index (negative ones count
    from the end)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    flat = np.asarray(indices._data if hasattr(indices, "_ctx") else indices)
    if flat.dtype.kind not in "iu":
        raise TypeError(f"unravel_index: indices must be integers, got dtype {flat.dtype}")
    n = math.prod(shape)
    if flat.size and (flat.min() < -n or flat.max() >= n):
        raise IndexError(f"unravel_index: an index is out of range [-{n}, {n}) for shape {shape}")
    return tuple(Tensor(i.astype(np.int64)) for i in np.unravel_index(np.where(flat < 0, flat + n, flat), shape))


# ---------------------------------------------------------------- shapes

def broadcast_tensors(*tensors) -> tuple:
    """The tensors expanded to their common broadcast shape."""
    tensors = _sequence(tensors, "broadcast_tensors")
    try:
        shape = np.broadcast_shapes(*[t.shape for t in tensors])
    except ValueError:
        raise ShapeError(f"broadcast_tensors: shapes {[t.shape for t in tensors]} do not broadcast") from None
    return tuple(t.expand(shape) for t in tensors)


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids of 1-D tensors (n1,), (n2,), ...: indexing="ij" (the default) gives each the shape
    (n1, n2, ...), "xy" swaps the first two axes, (n2, n1, ...), as numpy's and matplotlib's."""
    tensors = _sequence(tensors, "meshgrid")
    if any(t.ndim > 1 for t in tensors):
        raise ShapeError(f"meshgrid: needs 0-D or 1-D tensors, got shapes {[t.shape for t in tensors]}")
    indexing = indexing or "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    tensors = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = tuple(t.shape[0] for t in tensors)
    grids = [t.reshape(*[-1 if a == i else 1 for a in range(len(tensors))]).expand(shape)
             for i, t in enumerate(tensors)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _at_least(op: str, shape_of, tensors):
    single = len(tensors) == 1 and not isinstance(tensors[0], (list, tuple))
    out = tuple(t.reshape(shape_of(t.shape)) for t in _sequence(tensors, op))
    return out[0] if single else out


def atleast_1d(*tensors):
    """A 0-d tensor as (1,); others as they are. One tensor in, one out; several (or a list), a tuple."""
    return _at_least("atleast_1d", lambda s: s or (1,), tensors)


def atleast_2d(*tensors):
    """0-d as (1, 1), (n,) as (1, n); others as they are."""
    return _at_least("atleast_2d", lambda s: (1,) * (2 - len(s)) + s if len(s) < 2 else s, tensors)


def atleast_3d(*tensors):
    """0-d as (1, 1, 1), (n,) as (1, n, 1), (m, n) as (m, n, 1); others as they are."""
    return _at_least("atleast_3d", lambda s: {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}.get(len(s), s), tensors)


def _joined(op: str, tensors, dim: int) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"{op}: needs at least one tensor")
    return Tensor.cat(*tensors, dim=dim)


def hstack(tensors) -> Tensor:
    """Joined along dim 1 (dim 0 when they are vectors)."""
    tensors = atleast_1d(*_sequence((tensors,), "hstack"))
    tensors = tensors if isinstance(tensors, tuple) else (tensors,)
    return _joined("hstack", tensors, 0 if all(t.ndim == 1 for t in tensors) else 1)


def vstack(tensors) -> Tensor:
    """Joined along dim 0, vectors as rows (1, n)."""
    tensors = atleast_2d(*_sequence((tensors,), "vstack"))
    return _joined("vstack", tensors if isinstance(tensors, tuple) else (tensors,), 0)


def dstack(tensors) -> Tensor:
    """Joined along dim 2, after atleast_3d."""
    tensors = atleast_3d(*_sequence((tensors,), "dstack"))
    return _joined("dstack", tensors if isinstance(tensors, tuple) else (tensors,), 2)


def column_stack(tensors) -> Tensor:
    """Joined along dim 1, vectors (and numbers) as columns (n, 1)."""
    tensors = [t.reshape(-1, 1) if t.ndim < 2 else t for t in _sequence((tensors,), "column_stack")]
    return _joined("column_stack", tensors, 1)


# ---------------------------------------------------------------- statistics and calculus on samples

def histogramdd(input: Tensor, bins=10, *, range=None, weight=None, density: bool = False) -> tuple:
    """(hist, bin_edges) of the rows of an (n, d) tensor (numpy's histogramdd): bins a count, one count per
    dimension, or one tensor of edges per dimension; range flat [min0, max0, min1, max1, ...]. No gradient."""
    x = _tensor(input)
    data = x._data.reshape(-1, x.shape[-1])
    if hasattr(bins, "_ctx") or (isinstance(bins, (list, tuple)) and any(hasattr(b, "_ctx") for b in bins)):
        bins = [b._data for b in bins] if isinstance(bins, (list, tuple)) else bins._data
    pairs = None if range is None else [tuple(range[i:i + 2]) for i in builtins_range(0, len(range), 2)]
    w = weight._data.reshape(-1) if hasattr(weight, "_ctx") else weight
    hist, edges = np.histogramdd(data, bins=bins, range=pairs, weights=w, density=density)
    return _HistogramDD(Tensor(hist.astype(x.dtype)), [Tensor(e.astype(x.dtype)) for e in edges])


builtins_range = range


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """For each entry, the index of the bucket of the sorted 1-D `boundaries` it falls in: boundaries[i−1] <
    x <= boundaries[i] (right: boundaries[i−1] <= x < boundaries[i]). No gradient."""
    boundaries = _tensor(boundaries)
    if boundaries.ndim != 1:
        raise ShapeError(f"bucketize: boundaries must be 1-D, got shape {boundaries.shape}")
    values = input._data if hasattr(input, "_ctx") else np.asarray(input)
    index = np.searchsorted(boundaries._data, values, side="right" if right else "left")
    return Tensor(np.asarray(index, dtype=np.int32 if out_int32 else np.int64))


def searchsorted(sorted_sequence: Tensor, values, *, out_int32: bool = False, right: bool = False, side=None,
                 sorter=None) -> Tensor:
    """Where each value would go in the sorted last axis of `sorted_sequence` to keep it sorted (the first
    such place; right or side="right": the last). A 1-D sequence serves every value; an N-d one pairs its
    rows with values' rows. No gradient."""
    sequence = _tensor(sorted_sequence)._data
    if sorter is not None:
        sequence = np.take_along_axis(sequence, _tensor(sorter)._data, axis=-1)
    if side is not None and side not in ("left", "right") or (side == "left" and right):
        raise ValueError(f"searchsorted: side must be 'left' or 'right' and agree with right={right}, got {side!r}")
    side = side or ("right" if right else "left")
    scalar = not hasattr(values, "_ctx") and np.ndim(values) == 0
    v = np.asarray(values._data if hasattr(values, "_ctx") else values)
    if sequence.ndim == 1:
        index = np.searchsorted(sequence, v, side=side)
    else:
        if v.shape[:-1] != sequence.shape[:-1]:
            raise ShapeError(f"searchsorted: values of shape {v.shape} need the sequence's leading dims "
                             f"{sequence.shape[:-1]}")
        rows = [np.searchsorted(s, r, side=side) for s, r in zip(sequence.reshape(-1, sequence.shape[-1]),
                                                                  v.reshape(-1, v.shape[-1]))]
        index = np.array(rows).reshape(v.shape)
    index = np.asarray(index, dtype=np.int32 if out_int32 else np.int64)
    return Tensor(index.reshape(()) if scalar else index)


def _spacings(spacing, dims: list, x: Tensor) -> list:
    """One spacing per dim: a number (the step) or a 1-D tensor (the coordinates along it)."""
    if isinstance(spacing, (int, float)) or (hasattr(spacing, "_ctx") and spacing.ndim == 0):
        return [spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) == 1 and len(dims) > 1:
        spacing = spacing * len(dims)
    if len(spacing) != len(dims):
        raise ValueError(f"gradient: {len(spacing)} spacings for {len(dims)} dims of shape {x.shape}")
    return spacing


def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:
    """The derivative of sampled values along each dim, by second-order central differences inside and
    one-sided differences of order edge_order (1 or 2) at the ends (numpy's gradient, the same formulas):
    spacing a step, one step per dim, or one tensor of coordinates per dim. A tuple, one tensor per dim."""
    x = _tensor(input)
    x = x if x.dtype.kind == "f" else x.cast(np.float32)
    dims = list(range(x.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [x._dim(d, "gradient") for d in dims]
    if edge_order not in (1, 2):
        raise ValueError(f"gradient: edge_order must be 1 or 2, got {edge_order}")
    out = []
    for d, h in zip(dims, _spacings(spacing, dims, x)):
        n = x.shape[d]
        if n < edge_order + 1:
            raise ValueError(f"gradient: dim {d} of shape {x.shape} needs at least {edge_order + 1} samples")
        coords = np.asarray(h._data if hasattr(h, "_ctx") else h, dtype=np.float64)
        steps = np.diff(coords) if coords.ndim else np.full(n - 1, float(coords))
        if len(steps) != n - 1:
            raise ValueError(f"gradient: {len(steps) + 1} coordinates for dim {d} of length {n}")
        out.append(_derivative(x, d, steps, edge_order))
    return tuple(out)


def _derivative(f: Tensor, d: int, h: np.ndarray, edge_order: int) -> Tensor:
    """numpy.gradient's formulas along axis d, with steps h[i] = x[i + 1] − x[i]."""
    def part(start, stop):
        return f.narrow(d, start, stop - start)

    def along(c):                                                        # coefficients as a column along d
        return f._result(np.asarray(c, dtype=f.dtype).reshape([-1 if a == d else 1 for a in range(f.ndim)]), None)

    n = f.shape[d]
    pieces = []
    if edge_order == 1:
        pieces.append((part(1, 2) - part(0, 1)) / float(h[0]))
    else:
        a, b = h[0], h[1]
        pieces.append(part(0, 1) * float(-(2 * a + b) / (a * (a + b))) + part(1, 2) * float((a + b) / (a * b))
                      - part(2, 3) * float(a / (b * (a + b))))
    if n > 2:
        hd, hs = h[:-1], h[1:]                                           # the step before and after each inner point
        pieces.append(part(2, n) * along(hd / (hs * (hd + hs))) + part(1, n - 1) * along((hs - hd) / (hs * hd))
                      - part(0, n - 2) * along(hs / (hd * (hd + hs))))
    if edge_order == 1:
        pieces.append((part(n - 1, n) - part(n - 2, n - 1)) / float(h[-1]))
    else:
        a, b = h[-2], h[-1]
        pieces.append(part(n - 3, n - 2) * float(b / (a * (a + b))) - part(n - 2, n - 1) * float((a + b) / (a * b))
                      + part(n - 1, n) * float((a + 2 * b) / (b * (a + b))))
    return Tensor.cat(*pieces, dim=d)


def _trapezoids(y: Tensor, x, dx, dim: int, op: str) -> Tensor:
    """The area of each trapezoid between consecutive samples along dim: (y[i] + y[i + 1]) / 2 · Δx[i]."""
    y = _tensor(y)
    d = y._dim(dim, op)
    n = y.shape[d]
    mean = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) * 0.5 if n else y
    if x is None:
        return mean * (1.0 if dx is None else dx)
    x = _tensor(x)
    if x.ndim == 1:
        if x.shape[0] != n:
            raise ShapeError(f"{op}: x of shape {x.shape} needs {n} samples, dim {dim} of y's shape {y.shape}")
        steps = x.diff().reshape([-1 if a == d else 1 for a in range(y.ndim)])
    else:
        steps = x.diff(dim=dim)
    return mean * steps


def trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """∫ y along dim by the trapezoid rule: at coordinates x (1-D, or y's shape), or equally spaced dx apart
    (1 by default)."""
    if x is not None and dx is not None:
        raise ValueError("trapezoid: pass x or dx, not both")
    return _trapezoids(y, x, dx, dim, "trapezoid").sum(dim)


def trapz(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """trapezoid (PyTorch's older name)."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoid-rule integral along dim, one shorter than y there."""
    if x is not None and dx is not None:
        raise ValueError("cumulative_trapezoid: pass x or dx, not both")
    return _trapezoids(y, x, dx, dim, "cumulative_trapezoid").cumsum(dim)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The pow-norm of each slice along dim over all other axes, shaped to broadcast against v (weight
    normalization's norm); dim=-1 gives the norm of everything."""
    v = _tensor(v)
    if dim == -1:
        return p_norm(v, pow, None, "norm_except_dim")
    d = v._dim(dim, "norm_except_dim")
    others = tuple(a for a in range(v.ndim) if a != d)
    out = p_norm(v, pow, others, "norm_except_dim") if others else v.abs()
    return out.reshape([v.shape[d] if a == d else 1 for a in range(v.ndim)])


def frobenius_norm(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """√Σx² over dim (all entries when dim is empty)."""
    x = _tensor(input)
    dims = None if dim in ((), [], None) else (dim if isinstance(dim, int) else tuple(dim))
    return x.norm(2, dims, keepdim=keepdim)


# ---------------------------------------------------------------- the `_copy` twins of PyTorch's view functions

def _slice(x: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    return x[(slice(None),) * x._dim(dim, "slice_copy") + (slice(start, end, step),)]


VIEWS = {  # name: the function whose result X_copy copies
    "alias": lambda x: x, "detach": Tensor.detach, "diagonal": Tensor.diagonal, "expand": Tensor.expand,
    "permute": Tensor.permute, "select": Tensor.select, "slice": _slice, "split": Tensor.split,
    "split_with_sizes": Tensor.split_with_sizes, "squeeze": Tensor.squeeze, "t": Tensor.t,
    "transpose": Tensor.transpose, "unbind": Tensor.unbind, "unfold": Tensor.unfold, "unsqueeze": Tensor.unsqueeze,
    "view": Tensor.view,
}


def _copy_function(name: str):
    def function(input, *args, **kwargs):
        kwargs.pop("implicit", None)                                   # expand_copy's flag for the tracer
        out = VIEWS[name](_tensor(input), *args, **kwargs)
        return tuple(t.clone() for t in out) if isinstance(out, tuple) else out.clone()
    function.__name__ = function.__qualname__ = f"{name}_copy"
    function.__doc__ = (f"torch.{name}_copy(input, ...): torch.{name}'s result in memory of its own (PyTorch's "
                        "functional twin of a view, for its compiler; here every result is its own tensor anyway).")
    return function


def _method_function(name: str):
    def function(input, *args, **kwargs):
        return getattr(_tensor(input), name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.{name}(input, ...) is input.{name}(...), the Tensor method."
    return function


ARRAY_FUNCTIONS = {name: _method_function(name) for name in ARRAY_METHOD_FUNCTIONS}
ARRAY_FUNCTIONS.update(
    tensordot=tensordot, chain_matmul=chain_matmul, block_diag=block_diag, cdist=cdist, cartesian_prod=cartesian_prod,
    combinations=combinations, vander=vander, unravel_index=unravel_index, tril_indices=tril_indices,
    triu_indices=triu_indices, broadcast_tensors=broadcast_tensors, meshgrid=meshgrid, atleast_1d=atleast_1d,
    atleast_2d=atleast_2d, atleast_3d=atleast_3d, hstack=hstack, vstack=vstack, row_stack=vstack, dstack=dstack,
    column_stack=column_stack, histogramdd=histogramdd, bucketize=bucketize, searchsorted=searchsorted,
    gradient=gradient, trapezoid=trapezoid, trapz=trapz, cumulative_trapezoid=cumulative_trapezoid,
    norm_except_dim=norm_except_dim, frobenius_norm=frobenius_norm,
)
ARRAY_FUNCTIONS.update({f"{name}_copy": _copy_function(name) for name in VIEWS})
