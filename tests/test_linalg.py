"""tinygrad_like/linalg.py: inverse, det, slogdet, logdet, matrix_power. Values from numpy (LAPACK) and from
math, gradients by float64 gradcheck and gradgradcheck, and against PyTorch where it is installed (det's
gradient at a singular matrix included)."""
import numpy as np
import pytest

import tinygrad_like.torch as T
from tinygrad_like import Tensor, gradcheck, gradgradcheck
from tinygrad_like.errors import NotInEngine, ShapeError

RNG = np.random.default_rng(7)
BATCH = RNG.standard_normal((2, 3, 3)) + 2 * np.eye(3)      # well conditioned
SINGULAR = np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])      # row 2 = 2 · row 1

CALLS = {  # name: (ours, numpy's)
    "inverse": (lambda x: x.inverse(), np.linalg.inv),
    "det": (lambda x: x.det(), np.linalg.det),
    "logabsdet": (lambda x: x.slogdet()[1], lambda a: np.linalg.slogdet(a)[1]),
    "logdet": (lambda x: (x @ x.mT).logdet(), lambda a: np.log(np.linalg.det(a @ np.swapaxes(a, -1, -2)))),
    "matrix_power_3": (lambda x: x.matrix_power(3), lambda a: np.linalg.matrix_power(a, 3)),
    "matrix_power_-2": (lambda x: T.matrix_power(x, -2), lambda a: np.linalg.matrix_power(a, -2)),
}


@pytest.mark.parametrize("name", CALLS)
def test_values_and_gradients(name):
    ours, theirs = CALLS[name]
    np.testing.assert_allclose(ours(Tensor(BATCH)).numpy(), theirs(BATCH), rtol=1e-10, atol=1e-12)
    assert gradcheck(ours, Tensor(BATCH.copy(), requires_grad=True))
    assert gradgradcheck(ours, Tensor(BATCH.copy(), requires_grad=True))


def test_from_math():
    a = T.tensor([[2.0, 1], [1, 1]])
    np.testing.assert_allclose(T.inverse(a).numpy(), [[1, -1], [-1, 2]], atol=1e-6)
    assert T.det(a).item() == pytest.approx(1) and T.det(T.tensor(SINGULAR)).item() == pytest.approx(0, abs=1e-12)
    sign, logabsdet = T.slogdet(T.tensor([[-2.0, 0], [0, 3]]))
    assert sign.item() == -1 and logabsdet.item() == pytest.approx(np.log(6))
    assert np.isnan(T.logdet(T.tensor([[-2.0, 0], [0, 3]])).item())
    np.testing.assert_array_equal(T.matrix_power(a, 0).numpy(), np.eye(2))


def test_the_determinants_gradient_at_a_singular_matrix_is_the_cofactor_matrix():
    x = Tensor(SINGULAR.copy(), requires_grad=True)
    x.det().backward()
    cofactors = [[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(SINGULAR, i, 0), j, 1)) for j in range(3)]
                 for i in range(3)]
    np.testing.assert_allclose(x.grad.numpy(), cofactors, atol=1e-12)


def test_errors_name_the_op_and_the_shape():
    with pytest.raises(ShapeError, match=r"inverse.*\(2, 3\)"):
        T.ones(2, 3).inverse()
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        T.tensor(SINGULAR).inverse()
    with pytest.raises(TypeError, match="det.*int64"):
        T.tensor([[1, 2], [3, 4]]).det()
    with pytest.raises(NotInEngine, match="decompositions"):
        T.svd  # noqa: B018


@pytest.mark.parametrize("name", ["det", "logdet", "inverse"])
def test_same_gradient_as_pytorch(name):
    torch = pytest.importorskip("torch", reason="compares gradients with PyTorch's")
    data = SINGULAR if name == "det" else BATCH[0]
    grads = []
    for module in (T, torch):
        x = module.tensor(data.copy(), requires_grad=True)
        out = getattr(module, name)(x @ x.T if name == "logdet" else x)
        (out * module.tensor(np.arange(out.numel(), dtype=np.float64)).reshape(out.shape)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-9, atol=1e-9)
