"""Issue 26's linear algebra, indexing, shapes and statistics without PyTorch: values from math or numpy,
bad input as errors that name the op and the shapes, and in-place rules. PyTorch's own answers:
tests/test_arrays_torch.py; gradients: tests/test_arrays_gradcheck.py."""
import numpy as np
import pytest

import tinygrad_like.torch as T
from tinygrad_like import Tensor
from tinygrad_like.errors import NotInEngine, ShapeError

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))


@pytest.mark.parametrize("call, words", [
    (lambda: T.addmm(T.ones(2, 2), T.ones(3, 4), T.ones(4, 5)), ["addmm", "(2, 2)", "(3, 5)"]),
    (lambda: T.mm(T.ones(3), T.ones(3, 2)), ["mm", "(3,)", "(3, 2)"]),
    (lambda: T.vdot(T.ones(3), T.ones(4)), ["vdot", "(3,)", "(4,)"]),
    (lambda: T.inner(T.ones(2, 3), T.ones(4)), ["inner", "(2, 3)", "(4,)"]),
    (lambda: T.cross(T.ones(2, 4), T.ones(2, 4)), ["cross", "size 3", "(2, 4)"]),
    (lambda: T.cross(T.ones(3, 4), T.ones(3, 4), dim=1), ["cross", "size 4", "(3, 4)"]),
    (lambda: T.tensordot(T.ones(2, 3), T.ones(2, 3), dims=1), ["tensordot", "(2, 3)"]),
    (lambda: T.chain_matmul(T.ones(2, 3), T.ones(3)), ["chain_matmul", "(3,)"]),
    (lambda: T.block_diag(T.ones(2, 2, 2)), ["block_diag", "(2, 2, 2)"]),
    (lambda: T.cdist(T.ones(3, 4), T.ones(3, 5)), ["cdist", "(3, 4)", "(3, 5)"]),
    (lambda: T.vander(T.ones(2, 2)), ["vander", "(2, 2)"]),
    (lambda: T.combinations(T.ones(2, 2)), ["combinations", "(2, 2)"]),
    (lambda: T.broadcast_tensors(T.ones(2), T.ones(3)), ["broadcast_tensors", "(2,)", "(3,)"]),
    (lambda: T.hsplit(T.ones(2, 5), 2), ["hsplit", "(2, 5)", "2 equal parts"]),
    (lambda: T.vsplit(T.ones(4), 2), ["vsplit", "(4,)"]),
    (lambda: T.dsplit(T.ones(4, 2), 2), ["dsplit", "(4, 2)"]),
    (lambda: T.split_with_sizes(T.ones(4, 2), [1, 2]), ["split_with_sizes", "[1, 2]", "(4, 2)"]),
    (lambda: T.ones(2, 3).unfold(1, 4, 1), ["unfold", "(2, 3)", "size 4"]),
    (lambda: T.ones(2, 3).sum_to_size(2, 2), ["sum_to_size", "(2, 2)", "(2, 3)"]),
    (lambda: T.rot90(T.ones(2, 3), 1, (1, 1)), ["rot90", "(2, 3)"]),
    (lambda: T.ones(2, 3, 4).H, ["H", "(2, 3, 4)", "mH"]),
    (lambda: T.ones(3).adjoint(), ["adjoint", "(3,)"]),
])
def test_bad_input_names_the_op_and_the_shapes(call, words):
    with pytest.raises((ShapeError, ValueError)) as e:
        call()
    for word in words:
        assert word in str(e.value), (word, str(e.value))


def test_values_from_math():
    e1, e2, e3 = np.eye(3)
    np.testing.assert_array_equal(T.cross(T.tensor(e1), T.tensor(e2), dim=0).numpy(), e3)       # x × y = z
    np.testing.assert_array_equal(T.kron(T.eye(2), T.tensor([[1.0, 2], [3, 4]])).numpy()[2:, 2:], [[1, 2], [3, 4]])
    assert T.vdot(T.tensor([1.0, 2, 3]), T.tensor([4.0, 5, 6])).item() == 32
    assert T.dist(T.tensor([0.0, 0]), T.tensor([3.0, 4])).item() == 5
    assert T.dist(T.tensor([0.0, 0, 1]), T.tensor([3.0, 0, 1]), 0).item() == 1                     # entries that differ
    np.testing.assert_array_equal(T.tril_indices(3, 3).numpy(), [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]])
    np.testing.assert_array_equal(T.vander(T.tensor([2.0, 3])).numpy(), [[2, 1], [3, 1]])
    assert [t.shape for t in T.tensor_split(T.ones(5, 2), [2, 9])] == [(2, 2), (3, 2), (0, 2)]
    np.testing.assert_array_equal(T.arange(6).unfold(0, 2, 2).numpy(), [[0, 1], [2, 3], [4, 5]])
    np.testing.assert_array_equal(T.rot90(T.tensor([[1, 2], [3, 4]])).numpy(), [[2, 4], [1, 3]])
    assert T.addmm(T.full((1, 1), float("nan")), T.ones(1, 2), T.ones(2, 1), beta=0).item() == 2   # β = 0 ignores NaN


def test_distance_of_equal_points_has_zero_gradient():
    x = Tensor(A.copy(), requires_grad=True)
    for p in (2, 0.5, 3, 1):
        x.grad = None
        T.cdist(x, x.detach(), p=p).sum().backward()
        assert np.isfinite(x.grad.numpy()).all()
        np.testing.assert_array_equal(T.cdist(x, x.detach(), p=p).diagonal().numpy(), 0)


def test_in_place_products_record_every_operand():
    """addmm_ on an intermediate whose second matrix requires grad: recorded, so that matrix gets its gradient."""
    b = Tensor(A.T.copy(), requires_grad=True)
    out = Tensor(np.zeros((3, 3))).addmm_(Tensor(A), b)
    out.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), A.T @ np.ones((3, 3)))


def test_shape_changes_in_place_refuse_a_parameter_while_recording():
    w = Tensor(A.copy(), requires_grad=True)
    with pytest.raises(RuntimeError, match="t_"):
        w.t_()
    y = w * 2
    assert y.t_() is y and y.shape == (4, 3)
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.full((3, 4), 2.0))


def test_refusals_say_why():
    with pytest.raises(NotInEngine, match="functionalization"):
        T.slice_inverse  # noqa: B018
    with pytest.raises(NotInEngine, match="functionalization"):
        T.ones(2).slice_inverse  # noqa: B018
    with pytest.raises(NotInEngine, match="first-class"):
        T.ones(2).index  # noqa: B018
