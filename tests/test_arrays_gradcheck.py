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
