"""PyTorch's other names for the engine's ops (dialect/aliases.py): each against PyTorch itself, the in-place
`name_` forms, and the shape rules of mm/mv/bmm/outer/t. Gradients: tests/test_api_gradcheck.py."""
import numpy as np
import pytest

from tinygrad_like import Tensor
from tinygrad_like.errors import ShapeError

torch = pytest.importorskip("torch", reason="compares each name with PyTorch's own")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
Y = RNG.standard_normal((3, 4))
SQUARE = RNG.standard_normal((4, 4))

SAME = [  # (what, our call, PyTorch's call), each on float64 copies of X, Y, SQUARE
    ("eq", lambda t, x, y: t(x).eq(t(x)), None), ("gt", lambda t, x, y: t(x).gt(t(y)), None),
    ("le", lambda t, x, y: t(x).le(0.5), None), ("ne", lambda t, x, y: t(x).ne(t(y)), None),
    ("greater_equal", lambda t, x, y: t(x).greater_equal(t(y)), None),
    ("less", lambda t, x, y: t(x).less(t(y)), None), ("neg", lambda t, x, y: t(x).neg(), None),
    ("negative", lambda t, x, y: t(x).negative(), None), ("absolute", lambda t, x, y: t(x).absolute(), None),
    ("multiply", lambda t, x, y: t(x).multiply(t(y)), None), ("subtract", lambda t, x, y: t(x).subtract(t(y)), None),
    ("reciprocal", lambda t, x, y: t(x).reciprocal(), None), ("tan", lambda t, x, y: t(x).tan(), None),
    ("hypot", lambda t, x, y: t(x).hypot(t(y)), None), ("logaddexp", lambda t, x, y: t(x).logaddexp(t(y)), None),
    ("frac", lambda t, x, y: (t(x) * 3).frac(), None), ("floor_divide", lambda t, x, y: t(x).floor_divide(0.3), None),
    ("clamp_min", lambda t, x, y: t(x).clamp_min(0.1), None), ("clamp_max", lambda t, x, y: t(x).clamp_max(0.1), None),
    ("rad2deg", lambda t, x, y: t(x).rad2deg(), None), ("deg2rad", lambda t, x, y: t(x).deg2rad(), None),
    ("signbit", lambda t, x, y: t(x).signbit(), None),
    ("logical_and", lambda t, x, y: t(x).gt(0).logical_and(t(y).gt(0)), None),
    ("logical_or", lambda t, x, y: t(x).gt(0).logical_or(t(y).gt(0)), None),
    ("logical_xor", lambda t, x, y: t(x).gt(0).logical_xor(t(y).gt(0)), None),
    ("logical_not", lambda t, x, y: t(x).gt(0).logical_not(), None),
    ("count_nonzero", lambda t, x, y: t(x).gt(0).count_nonzero(), None),
    ("arccos", lambda t, x, y: t(x).tanh().arccos(), None), ("arctan2", lambda t, x, y: t(x).arctan2(t(y)), None),
    ("mm", lambda t, x, y: t(x).mm(t(y).T), None), ("mv", lambda t, x, y: t(x).mv(t(y)[0]), None),
    ("outer", lambda t, x, y: t(x)[0].outer(t(y)[1]), None), ("ger", lambda t, x, y: t(x)[0].ger(t(y)[1]), None),
    ("trace", lambda t, x, y: t(x).trace(), None), ("t", lambda t, x, y: t(x).t(), None),
    ("swapaxes", lambda t, x, y: t(x).swapaxes(0, 1), None),
    ("movedim", lambda t, x, y: t(x).reshape(3, 2, 2).movedim((0, 2), (2, 0)), None),
    ("view_as", lambda t, x, y: t(x).view_as(t(y).reshape(4, 3)), None),
    ("expand_as", lambda t, x, y: t(x)[:1].expand_as(t(y)), None), ("ravel", lambda t, x, y: t(x).ravel(), None),
    ("tile", lambda t, x, y: t(x).tile((2,)), None), ("narrow", lambda t, x, y: t(x).narrow(1, 1, 2), None),
    ("select", lambda t, x, y: t(x).select(1, -1), None), ("fliplr", lambda t, x, y: t(x).fliplr(), None),
    ("flipud", lambda t, x, y: t(x).flipud(), None), ("diff", lambda t, x, y: t(x).diff(dim=0), None),
    ("nansum", lambda t, x, y: t(x).log().nansum(), None), ("nanmean", lambda t, x, y: t(x).log().nanmean(1), None),
]


@pytest.mark.parametrize("what, call, _", SAME, ids=[s[0] for s in SAME])
def test_each_name_gives_pytorchs_answer(what, call, _):
    with np.errstate(invalid="ignore"):                     # log of negatives: NaN on both sides, for nansum
        ours = call(lambda a: Tensor(a.copy()), X, Y)
    theirs = call(lambda a: torch.tensor(a.copy()), X, Y)
    theirs = theirs if isinstance(theirs, torch.Tensor) else torch.tensor(theirs)
    np.testing.assert_allclose(np.asarray(ours.numpy()), theirs.numpy(), rtol=1e-12, atol=1e-15)


def test_unbind_bmm_equal_and_the_predicates():
    a, b = Tensor(X), torch.tensor(X)
    for ours, theirs in zip(a.unbind(1), b.unbind(1)):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    p, q = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 5))
    np.testing.assert_allclose(Tensor(p).bmm(Tensor(q)).numpy(), torch.tensor(p).bmm(torch.tensor(q)).numpy(),
                               rtol=1e-12)
    assert Tensor(X).equal(Tensor(X.copy())) and not Tensor(X).equal(Tensor(Y)) and not Tensor(X).equal(Tensor(X[:1]))
    assert Tensor(X).is_floating_point() and not Tensor([1]).is_floating_point() and Tensor([1]).is_signed()
    assert not Tensor([True]).is_signed() and Tensor(X).is_same_size(Tensor(Y)) and Tensor([2.0]).is_nonzero()
    assert Tensor(X).itemsize == 8 and Tensor(X).nbytes == X.nbytes == torch.tensor(X).nbytes


@pytest.mark.parametrize("name", ["relu", "exp", "sigmoid", "tanh", "neg", "abs", "sqrt", "floor", "sin", "square",
                                  "reciprocal", "log1p", "trunc", "frac"])
def test_in_place_forms_write_into_the_same_array(name):
    data = np.abs(X) + 0.5
    x = Tensor(data.copy())
    array = x.numpy()
    assert getattr(x, f"{name}_")() is x and x.numpy() is array
    np.testing.assert_allclose(x.numpy(), getattr(torch.tensor(data), name)().numpy(), rtol=1e-12)


def test_in_place_forms_with_arguments_and_on_an_intermediate():
    x = Tensor([1.0, 2.0, 3.0])
    x.pow_(2).clamp_max_(5.0).multiply_(2).subtract_(Tensor([1.0, 1.0, 1.0]), alpha=3)
    assert x.tolist() == [-1.0, 5.0, 7.0]
    w = Tensor([0.5, -0.5], requires_grad=True)
    h = w * 2
    h.exp_()                                                # recorded: d e^(2w) = 2 e^(2w)
    h.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.exp([1.0, -1.0]), rtol=1e-6)


def test_shape_rules_name_the_op():
    with pytest.raises(ShapeError, match=r"mm: needs two matrices"):
        Tensor(X).mm(Tensor(X[0]))
    with pytest.raises(ShapeError, match=r"bmm: expected \(b, n, m\) and \(b, m, p\)"):
        Tensor(X).bmm(Tensor(X))
    with pytest.raises(ShapeError, match=r"outer: expected two vectors"):
        Tensor(X).outer(Tensor(X))
    with pytest.raises(ShapeError, match=r"t: expects a tensor of at most 2 dimensions"):
        Tensor.zeros(2, 2, 2).t()
