"""Issue 26's differentiable linear algebra, indexing, shapes and statistics, in one table like
tests/test_api_gradcheck.py: the forward value against an independent numpy reference in float64, then
gradcheck, gradgradcheck, and a finite gradient of each input's shape. References use numpy only."""
import itertools

import numpy as np
import pytest

import tinygrad_like.torch as T
from test_ops_gradcheck import (
    check_every_input_gets_a_finite_gradient_of_its_shape,
    check_forward_matches_numpy,
    inputs_for,
)
from tinygrad_like import gradcheck, gradgradcheck
from tinygrad_like.dialect import statistics

CASES = []


def case(op, shapes, fn, ref, kind="normal", label=""):
    CASES.append(pytest.param(op, shapes, fn, ref, kind, id=f"{op}{':' + label if label else ''}{shapes}"))


def np_kron(a, b):
    return np.kron(a, b)


def np_pdist(x, y, p):
    d = np.abs(x[:, None, :] - y[None, :, :])
    return (d ** p).sum(-1) ** (1 / p)


def np_unfold(x, size, step):            # the last axis, windows written out one by one
    starts = range(0, x.shape[-1] - size + 1, step)
    return np.stack([x[..., s:s + size] for s in starts], axis=-2)


# products
case("addmm", [(3, 5), (3, 4), (4, 5)], lambda i, a, b: T.addmm(i, a, b, beta=0.5, alpha=2),
     lambda i, a, b: 0.5 * i + 2 * a @ b)
case("addmv", [(3,), (3, 4), (4,)], lambda i, a, v: T.addmv(i, a, v, beta=-1), lambda i, a, v: -i + a @ v)
case("addr", [(3, 4), (3,), (4,)], lambda i, u, v: T.addr(i, u, v, alpha=3), lambda i, u, v: i + 3 * np.outer(u, v))
case("baddbmm", [(1, 5), (2, 3, 4), (2, 4, 5)], lambda i, a, b: T.baddbmm(i, a, b), lambda i, a, b: i + a @ b)
case("addbmm", [(3, 5), (2, 3, 4), (2, 4, 5)], lambda i, a, b: T.addbmm(i, a, b), lambda i, a, b: i + (a @ b).sum(0))
case("addmm_", [(3, 5), (3, 4), (4, 5)], lambda i, a, b: (i * 1).addmm_(a, b, alpha=0.5),
     lambda i, a, b: i + 0.5 * a @ b, label="recorded-in-place")
case("inner", [(2, 3, 4), (5, 4)], lambda a, b: T.inner(a, b), lambda a, b: np.inner(a, b))
case("vdot", [(4,), (4,)], lambda a, b: T.vdot(a, b), np.vdot)
case("kron", [(2, 3), (3, 2)], lambda a, b: T.kron(a, b), np_kron)
case("kron", [(2, 2, 3), (3,)], lambda a, b: T.kron(a, b), np_kron, label="ranks")
case("cross", [(4, 3), (4, 3)], lambda a, b: T.cross(a, b, dim=1), lambda a, b: np.cross(a, b))
case("tensordot", [(2, 3, 4), (4, 3, 5)], lambda a, b: T.tensordot(a, b, ([1, 2], [1, 0])),
     lambda a, b: np.tensordot(a, b, ([1, 2], [1, 0])))
case("chain_matmul", [(2, 3), (3, 4), (4, 2)], lambda a, b, c: T.chain_matmul(a, b, c), lambda a, b, c: a @ b @ c)
case("block_diag", [(2, 2), (3,)], lambda a, b: T.block_diag(a, b),
     lambda a, b: np.block([[a, np.zeros((2, 3))], [np.zeros((1, 2)), b[None]]]))
case("diagflat", [(2, 2)], lambda x: T.diagflat(x, -1), lambda x: np.diagflat(x, -1))
case("adjoint", [(2, 3, 4)], lambda x: T.adjoint(x), lambda x: np.swapaxes(x, -1, -2))
case("cdist", [(3, 4), (5, 4)], lambda a, b: T.cdist(a, b), lambda a, b: np_pdist(a, b, 2))
case("cdist", [(3, 4), (5, 4)], lambda a, b: T.cdist(a, b, p=1.5), lambda a, b: np_pdist(a, b, 1.5), label="p1.5")
case("cdist", [(3, 4)], lambda a: T.cdist(a, a, p=0.5) + T.cdist(a, a),
     lambda a: np_pdist(a, a, 0.5) + np_pdist(a, a, 2), label="zero-distances")
case("dist", [(3, 4), (4,)], lambda a, b: T.dist(a, b, 3), lambda a, b: (np.abs(a - b) ** 3).sum() ** (1 / 3))
case("vander", [(4,)], lambda x: T.vander(x, 3), lambda x: np.vander(x, 3))
case("vander", [(3,)], lambda x: T.vander(x * T.tensor([0.0, 1, 1], dtype=T.float64), increasing=True),
     lambda x: np.vander(x * [0, 1, 1], increasing=True), label="at-zero")
case("cartesian_prod", [(2,), (3,)], lambda a, b: T.cartesian_prod(a, b),
     lambda a, b: np.array(list(itertools.product(a, b))))
case("combinations", [(4,)], lambda x: T.combinations(x, 2), lambda x: np.array(list(itertools.combinations(x, 2))))
# indexing (each against the same write done by numpy's own indexing)
IDX = np.array([[0, 2, 2], [3, 3, 1]])
ROWS = np.array([2, 0, 2])


def np_written(x, index, values, add=False):
    out = x.copy()
    if add:
        np.add.at(out, index, values)
    else:
        out[index] = values
    return out


def np_scatter_reduce(x, index, src, fn, include_self):     # along dim 1, one entry at a time
    out = x.copy()
    for i in range(x.shape[0]):
        for j in set(index[i]):
            got = [src[i, k] for k in range(index.shape[1]) if index[i, k] == j] + ([x[i, j]] if include_self else [])
            out[i, j] = fn(got)
    return out


case("index_add", [(3, 4), (3, 3)], lambda x, s: x.index_add(0, ROWS, s[:, :1].expand(3, 4), alpha=2),
     lambda x, s: np_written(x, ROWS, 2 * np.repeat(s[:, :1], 4, 1), add=True))
case("index_copy", [(3, 4), (2, 4)], lambda x, s: x.index_copy(0, np.array([2, 0]), s),
     lambda x, s: np_written(x, [2, 0], s))
case("index_fill", [(3, 4), ()], lambda x, v: x.index_fill(1, np.array([3, 0]), v),
     lambda x, v: np_written(x, (slice(None), [3, 0]), v))
case("index_put", [(3, 4), (2,)], lambda x, v: x.index_put((np.array([0, 2]), np.array([1, 1])), v, True),
     lambda x, v: np_written(x, ([0, 2], [1, 1]), v, add=True))
case("index_put_", [(3, 4), (4,)], lambda x, v: (x * 1).index_put_((np.array([1]),), v),
     lambda x, v: np_written(x, [1], v), label="recorded-in-place")
case("index_reduce", [(3, 4), (3, 4)], lambda x, s: x.index_reduce(0, ROWS, s, "prod"),
     lambda x, s: np_written(np_written(x, 0, x[0] * s[1]), 2, x[2] * s[0] * s[2]))
case("scatter_reduce", [(2, 4), (2, 3)], lambda x, s: x.scatter_reduce(1, IDX, s, "prod"),
     lambda x, s: np_scatter_reduce(x, IDX, s, np.prod, True))
case("scatter_reduce", [(2, 4), (2, 3)], lambda x, s: x.scatter_reduce(1, IDX, s, "mean", include_self=False),
     lambda x, s: np_scatter_reduce(x, IDX, s, np.mean, False), label="mean")
case("scatter_reduce", [(2, 4), (2, 3)], lambda x, s: x.scatter_reduce(1, IDX, s, "amax"),
     lambda x, s: np_scatter_reduce(x, IDX, s, max, True), kind="distinct", label="amax")
case("scatter_reduce", [(2, 4), (2, 3)], lambda x, s: x.scatter_reduce(1, IDX, s, "amin", include_self=False),
     lambda x, s: np_scatter_reduce(x, IDX, s, min, False), kind="distinct", label="amin")
case("take", [(3, 4)], lambda x: x.take(np.array([[0, -1], [5, 5]])), lambda x: np.take(x, [[0, -1], [5, 5]]))
case("take_along_dim", [(3, 4)], lambda x: x.take_along_dim(np.array([[2], [0], [3]]), 1),
     lambda x: np.take_along_axis(x, np.array([[2], [0], [3]]), 1))
case("put", [(3, 4), (3,)], lambda x, s: x.put(np.array([0, 11, 0]), s, accumulate=True),
     lambda x, s: np_written(x.reshape(-1), [0, 11, 0], s, add=True).reshape(3, 4))
case("masked_scatter", [(3, 4), (12,)], lambda x, s: x.masked_scatter(T.tensor(np.eye(3, 4) > 0), s),
     lambda x, s: np_written(x, np.eye(3, 4) > 0, s[:3]))
case("select_scatter", [(3, 4), (3,)], lambda x, s: x.select_scatter(s, 1, -1),
     lambda x, s: np_written(x, (slice(None), -1), s))
case("slice_scatter", [(3, 4), (3, 2)], lambda x, s: x.slice_scatter(s, 1, 1, None, 2),
     lambda x, s: np_written(x, (slice(None), slice(1, None, 2)), s))
case("diagonal_scatter", [(3, 4), (3,)], lambda x, s: x.diagonal_scatter(s, 1),
     lambda x, s: np_written(x, ([0, 1, 2], [1, 2, 3]), s))
case("fill_diagonal_", [(3, 4), ()], lambda x, v: (x * 1).fill_diagonal_(v),
     lambda x, v: np_written(x, ([0, 1, 2], [0, 1, 2]), v), label="recorded-in-place")
# order statistics, running reductions, sample statistics (inputs distinct, so no ties)
def np_lower_median(x, axis):
    return np.sort(x, axis).take((x.shape[axis] - 1) // 2, axis)


def np_cumulative(fn, x):
    return fn.accumulate(x, axis=1)


case("median", [(3, 4)], lambda x: x.median(1).values, lambda x: np_lower_median(x, 1), kind="distinct")
case("median", [(3, 5)], lambda x: x.median(), lambda x: np.median(x), kind="distinct", label="all")
case("nanmedian", [(3, 4)], lambda x: x.nanmedian(0, keepdim=True).values,
     lambda x: np_lower_median(x, 0)[None], kind="distinct")
case("kthvalue", [(3, 4)], lambda x: x.kthvalue(3).values, lambda x: np.sort(x, 1)[:, 2], kind="distinct")
case("mode", [(3, 4)], lambda x: x.mode(0).values, lambda x: x.min(0), kind="distinct")
case("aminmax", [(3, 4)], lambda x: x.aminmax(dim=1)[0] * x.aminmax(dim=1)[1], lambda x: x.min(1) * x.max(1),
     kind="distinct")
case("msort", [(3, 4)], lambda x: x.msort(), lambda x: np.sort(x, 0), kind="distinct")
for how in ("linear", "lower", "higher", "midpoint", "nearest"):
    case("quantile", [(3, 5)], lambda x, how=how: x.quantile(T.tensor([0.2, 0.55, 1.0], dtype=T.float64), 1,
                                                             interpolation=how),
         lambda x, how=how: np.quantile(x, [0.2, 0.55, 1.0], 1, method=how), kind="distinct", label=how)
case("nanquantile", [(4, 3)], lambda x: x.nanquantile(0.3), lambda x: np.nanquantile(x, 0.3), kind="distinct")
case("cummax", [(3, 5)], lambda x: x.cummax(1).values, lambda x: np_cumulative(np.maximum, x), kind="distinct")
case("cummin", [(3, 5)], lambda x: x.cummin(1).values, lambda x: np_cumulative(np.minimum, x), kind="distinct")
case("logcumsumexp", [(3, 5)], lambda x: x.logcumsumexp(1), lambda x: np_cumulative(np.logaddexp, x))


def _in_blocks_of_2(fn):
    def blocked(x):
        saved, statistics.LOGCUMSUMEXP_BLOCK = statistics.LOGCUMSUMEXP_BLOCK, 2
        try:
            return fn(x)
        finally:
            statistics.LOGCUMSUMEXP_BLOCK = saved
    return blocked


case("logcumsumexp", [(3, 5)], _in_blocks_of_2(lambda x: (x * 3).logcumsumexp(1)),
     lambda x: np_cumulative(np.logaddexp, x * 3), label="blocks")
case("logcumsumexp", [(4, 2)], _in_blocks_of_2(lambda x: x.logcumsumexp(0)),
     lambda x: np.logaddexp.accumulate(x, axis=0), label="blocks-dim0")
case("cov", [(3, 5)], lambda x: x.cov(), np.cov)
case("cov", [(3, 5)], lambda x: x.cov(correction=0, fweights=T.tensor([1, 2, 1, 1, 3]),
                                      aweights=T.tensor([0.5, 1.0, 2.0, 0.1, 1.0], dtype=T.float64)),
     lambda x: np.cov(x, ddof=0, fweights=[1, 2, 1, 1, 3], aweights=[0.5, 1.0, 2.0, 0.1, 1.0]), label="weights")
case("corrcoef", [(3, 5)], lambda x: x.corrcoef(), np.corrcoef)
case("renorm", [(3, 4)], lambda x: x.renorm(2, 0, 1.2),
     lambda x: x * np.where(np.linalg.norm(x, axis=1, keepdims=True) > 1.2,
                            1.2 / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-7), 1))
case("gradient", [(4, 5)], lambda x: T.gradient(x, spacing=0.5, edge_order=2)[1] * T.gradient(x)[0],
     lambda x: np.gradient(x, 0.5, axis=1, edge_order=2) * np.gradient(x, axis=0))
case("gradient", [(6,)], lambda x: T.gradient(x, spacing=(T.tensor([0.0, 1, 1.5, 3, 4, 7], dtype=T.float64),),
                                              edge_order=2)[0],
     lambda x: np.gradient(x, [0.0, 1, 1.5, 3, 4, 7], edge_order=2), label="coordinates")
case("trapezoid", [(3, 4), (4,)], lambda y, x: T.trapezoid(y, x.cumsum(0)), lambda y, x: np.trapezoid(y, x.cumsum()))
case("cumulative_trapezoid", [(3, 4)], lambda y: T.cumulative_trapezoid(y, dx=0.5, dim=0),
     lambda y: np.cumsum((y[1:] + y[:-1]) / 2 * 0.5, 0))
case("norm_except_dim", [(3, 4)], lambda x: T.norm_except_dim(x, 2, 1),
     lambda x: np.linalg.norm(x, axis=0, keepdims=True))
case("frobenius_norm", [(2, 3, 4)], lambda x: T.frobenius_norm(x, (0, 2)), lambda x: np.sqrt((x ** 2).sum((0, 2))))
# shapes
case("meshgrid", [(3,), (2,)], lambda a, b: T.meshgrid(a, b, indexing="xy")[0] * T.meshgrid(a, b)[1].T,
     lambda a, b: np.meshgrid(a, b)[0] * np.meshgrid(a, b, indexing="ij")[1].T)
case("hstack", [(3, 2), (3, 1)], lambda a, b: T.hstack([a, b]), lambda a, b: np.hstack([a, b]))
case("vstack", [(2,), (3, 2)], lambda a, b: T.vstack([a, b]), lambda a, b: np.vstack([a, b]))
case("dstack", [(3, 2), (3, 2)], lambda a, b: T.dstack([a, b]), lambda a, b: np.dstack([a, b]))
case("column_stack", [(3,), (3, 2)], lambda a, b: T.column_stack([a, b]), lambda a, b: np.column_stack([a, b]))
case("tensor_split", [(7, 2)], lambda x: T.tensor_split(x, 3)[0][:2] * T.tensor_split(x, 3)[2],
     lambda x: np.array_split(x, 3)[0][:2] * np.array_split(x, 3)[2])
case("rot90", [(2, 3)], lambda x: T.rot90(x), lambda x: np.rot90(x))
case("rot90", [(2, 3, 4)], lambda x: T.rot90(x, 3, (2, 0)), lambda x: np.rot90(x, 3, (2, 0)), label="k3")
case("unfold", [(2, 7)], lambda x: x.unfold(1, 3, 2), lambda x: np_unfold(x, 3, 2))
case("unfold", [(6,)], lambda x: x.unfold(0, 4, 1) ** 2, lambda x: np_unfold(x, 4, 1) ** 2, label="overlapping")
case("sum_to_size", [(2, 3, 4)], lambda x: x.sum_to_size(3, 1) ** 2, lambda x: x.sum((0, 2))[:, None] ** 2)
case("transpose_", [(2, 3)], lambda x: (x * 1).transpose_(0, 1) ** 2, lambda x: x.T ** 2, label="recorded-in-place")
case("unsqueeze_", [(2, 3)], lambda x: (x * 1).unsqueeze_(0) ** 2, lambda x: x[None] ** 2, label="recorded-in-place")
case("diff", [(2, 5), (2, 1)], lambda x, p: T.diff(x, 2, 1, prepend=p), lambda x, p: np.diff(x, 2, 1, prepend=p))

OPS_COVERED = {c.values[0] for c in CASES}


@pytest.mark.parametrize("op, shapes, fn, ref, kind", CASES)
def test_forward_matches_numpy(op, shapes, fn, ref, kind):
    check_forward_matches_numpy(shapes, fn, ref, kind)


@pytest.mark.parametrize("op, shapes, fn, ref, kind", CASES)
def test_gradcheck(op, shapes, fn, ref, kind):
    _, tensors = inputs_for(shapes, kind)
    assert gradcheck(fn, *tensors)


@pytest.mark.parametrize("op, shapes, fn, ref, kind", CASES)
def test_gradgradcheck(op, shapes, fn, ref, kind):
    _, tensors = inputs_for(shapes, kind)
    assert gradgradcheck(fn, *tensors)


@pytest.mark.parametrize("op, shapes, fn, ref, kind", CASES)
def test_backward_gives_every_input_a_finite_gradient_of_its_shape(op, shapes, fn, ref, kind):
    check_every_input_gets_a_finite_gradient_of_its_shape(shapes, fn, kind)
