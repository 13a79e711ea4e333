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


def test_copies_of_views_are_tensors_of_their_own_with_gradients():
    x = Tensor(A.copy(), requires_grad=True)
    out = T.t_copy(x)
    out.numpy()[0, 0] = 99.0
    assert x.numpy()[0, 0] == A[0, 0]
    (T.diagonal_copy(x) * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.eye(3, 4))


def test_refusals_say_why():
    with pytest.raises(NotInEngine, match="functionalization"):
        T.slice_inverse  # noqa: B018
    with pytest.raises(NotInEngine, match="functionalization"):
        T.ones(2).slice_inverse  # noqa: B018
    with pytest.raises(NotInEngine, match="first-class"):
        T.ones(2).index  # noqa: B018


@pytest.mark.parametrize("call, words", [
    (lambda: T.kthvalue(T.ones(2, 3), 4), ["kthvalue", "k=4", "(2, 3)"]),
    (lambda: T.median(T.ones(2, 0), 1), ["median", "(2, 0)", "empty"]),
    (lambda: T.quantile(T.ones(3), 1.5), ["quantile", "[0, 1]"]),
    (lambda: T.quantile(T.ones(3), 0.5, interpolation="cubic"), ["quantile", "cubic"]),
    (lambda: T.bincount(T.tensor([1, -1])), ["bincount", "non-negative"]),
    (lambda: T.bincount(T.ones(3)), ["bincount", "float32"]),
    (lambda: T.histc(T.ones(3), bins=4, min=2, max=1), ["histc", "min <= max"]),
    (lambda: T.cov(T.ones(2, 3, 4)), ["cov", "(2, 3, 4)"]),
    (lambda: T.cov(T.ones(2, 3), fweights=T.tensor([1, 2])), ["cov", "fweights", "3"]),
    (lambda: T.renorm(T.ones(2, 3), 0, 0, 1.0), ["renorm", "p must be > 0"]),
    (lambda: T.gradient(T.ones(1, 3)), ["gradient", "(1, 3)", "2 samples"]),
    (lambda: T.gradient(T.ones(3), spacing=(T.tensor([0.0, 1]),)), ["gradient", "2 coordinates", "length 3"]),
    (lambda: T.trapezoid(T.ones(2, 3), T.ones(2)), ["trapezoid", "(2,)", "(2, 3)"]),
    (lambda: T.searchsorted(T.ones(2, 3), T.ones(3, 1)), ["searchsorted", "(3, 1)", "(2,)"]),
    (lambda: T.index_add(T.ones(3, 4), 0, T.tensor([0, 1]), T.ones(2, 3)), ["index_add", "(2, 3)", "(2, 4)"]),
    (lambda: T.index_copy(T.ones(3, 4), 0, T.tensor([5]), T.ones(1, 4)), ["index_copy", "out of range", "(3, 4)"]),
    (lambda: T.put(T.ones(3), T.tensor([0, 1]), T.ones(3)), ["put", "3 entries", "2 indices"]),
    (lambda: T.take(T.ones(2, 2), T.tensor([4])), ["take", "out of range", "(2, 2)"]),
    (lambda: T.masked_scatter(T.ones(2, 2), T.ones(2, 2) > 0, T.ones(3)), ["masked_scatter", "4 entries", "(3,)"]),
    (lambda: T.slice_scatter(T.ones(3, 4), T.ones(2, 4), 0, 0, 1), ["slice_scatter", "(2, 4)", "(1, 4)"]),
    (lambda: T.scatter_reduce(T.ones(2, 2), 1, T.tensor([[0, 1]]), T.ones(1, 2), "max"), ["scatter_reduce", "'max'"]),
    (lambda: T.index_reduce(T.ones(2), 0, T.tensor([0]), T.ones(1), "sum"), ["index_reduce", "index_add"]),
    (lambda: T.ones(2, 3, 4).fill_diagonal_(1.0), ["fill_diagonal_", "(2, 3, 4)"]),
    (lambda: T.unravel_index(T.tensor([6]), (2, 3)), ["unravel_index", "(2, 3)"]),
])
def test_bad_statistics_and_indexing_input_names_the_op(call, words):
    with pytest.raises((ShapeError, ValueError, IndexError, TypeError)) as e:
        call()
    for word in words:
        assert word in str(e.value), (word, str(e.value))


def test_order_statistics_from_counting():
    x = T.tensor([[5.0, 1, 4, 1, 3]])
    assert T.median(x, 1).values.item() == 3 and T.kthvalue(x, 2).values.item() == 1
    assert T.mode(x).values.item() == 1 and T.mode(x).indices.item() == 3        # the last of the two 1s
    np.testing.assert_array_equal(T.cummax(x, 1).indices.numpy(), [[0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(T.cummin(x, 1).indices.numpy(), [[0, 1, 1, 3, 3]])  # a later equal entry takes over
    assert T.quantile(T.arange(5.0), 0.25).item() == 1 and T.quantile(T.arange(5.0), 0.3).item() == pytest.approx(1.2)
    np.testing.assert_array_equal(T.bincount(T.tensor([2, 2, 0])).numpy(), [1, 0, 2])
    np.testing.assert_array_equal(T.histc(T.tensor([0.0, 0.5, 1.0, 2.0]), bins=2, min=0, max=1).numpy(), [1, 2])
    assert T.trapezoid(T.tensor([0.0, 1, 2])).item() == 2                     # the area under y = x on [0, 2]
    np.testing.assert_allclose(T.gradient(T.tensor([0.0, 1, 4, 9]))[0].numpy(), [1, 2, 4, 5])  # numpy's formulas
    x = T.tensor([2.0, 1, 2, 1], requires_grad=True)
    T.median(x).backward()                                                   # shared by the tied 1s, as PyTorch
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0.5, 0, 0.5])


def test_writes_by_index_from_counting():
    x = T.zeros(2, 3)
    np.testing.assert_array_equal(x.index_add(1, T.tensor([0, 0]), T.ones(2, 2)).numpy(), [[2, 0, 0], [2, 0, 0]])
    np.testing.assert_array_equal(x.index_put((T.tensor([1]), T.tensor([2])), T.tensor(7.0)).numpy(),
                                  [[0, 0, 0], [0, 0, 7]])
    np.testing.assert_array_equal(x.masked_scatter(T.tensor([True, False, True]), T.arange(10.0)).numpy(),
                                  [[0, 0, 1], [2, 0, 3]])
    np.testing.assert_array_equal(x.scatter_reduce(1, T.tensor([[1, 1]]), T.tensor([[2.0, 3]]), "prod",
                                                   include_self=False).numpy(), [[0, 6, 0], [0, 0, 0]])
    y = T.zeros(3)
    array = y.numpy()
    assert y.index_fill_(0, T.tensor([1]), 5.0) is y and y.numpy() is array and y.tolist() == [0, 5, 0]


def test_every_array_function_is_checked_against_pytorch():
    """Each torch.X of torch/_array_functions.py is called in tests/test_arrays_torch.py's table."""
    from pathlib import Path

    from tinygrad_like.torch._array_functions import ARRAY_FUNCTIONS
    table = (Path(__file__).parent / "test_arrays_torch.py").read_text()
    assert [name for name in ARRAY_FUNCTIONS if f"T.{name}(" not in table] == []
