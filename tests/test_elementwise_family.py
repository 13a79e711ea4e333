"""The elementwise family learners use (issue 26: tinygrad's operator tests), and argsort, unique, diag,
diagonal and div(rounding_mode=): values against math and PyTorch, extreme inputs, dtypes. Gradients are
checked in the table of tests/test_api_gradcheck.py."""
import math

import numpy as np
import pytest

from tinygrad_like import Tensor

EXTREMES = np.array([-np.inf, -1e4, -30.0, -1.0, -1e-10, -0.0, 0.0, 1e-10, 0.5, 1.0, 30.0, 1e4, np.inf, np.nan])
UNIT = np.array([-1.0, -0.999, -0.5, -1e-10, 0.0, 1e-10, 0.5, 0.999, 1.0, np.nan])


@pytest.mark.parametrize("op, inputs", [("asin", UNIT), ("acos", UNIT), ("atan", EXTREMES), ("sinh", EXTREMES),
                                        ("cosh", EXTREMES), ("expm1", EXTREMES), ("isnan", EXTREMES),
                                        ("isinf", EXTREMES), ("isfinite", EXTREMES), ("trunc", EXTREMES)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_ops_match_numpy_at_extreme_inputs(op, inputs, dtype):
    x = inputs.astype(dtype)
    reference = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
                 "expm1": np.expm1, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
                 "trunc": np.trunc}[op]
    with np.errstate(over="ignore"):                         # numpy's own sinh/cosh overflow to inf, as ours do
        want = reference(x)
        got = getattr(Tensor(x), op)()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-7 if dtype == np.float32 else 1e-15, atol=0)


def test_sinh_and_expm1_keep_tiny_inputs_exact():
    for dtype in (np.float32, np.float64):
        tiny = Tensor(np.array([1e-10, -3e-8], dtype=dtype))
        np.testing.assert_allclose(tiny.sinh().numpy(), [1e-10, -3e-8], rtol=1e-6)   # not 0, not 1.19e-7
        np.testing.assert_allclose(tiny.expm1().numpy(), [1e-10, -3e-8], rtol=1e-6)


def test_log10_and_integer_inputs_give_float32():
    np.testing.assert_allclose(Tensor([1.0, 10.0, 1e6]).log10().numpy(), [0.0, 1.0, 6.0], atol=1e-6)
    for op in ("asin", "acos", "atan", "sinh", "cosh", "expm1", "log10"):
        assert getattr(Tensor([1, 0]) if op != "log10" else Tensor([1, 2]), op)().dtype == np.float32, op


def test_atan2_quadrants_and_signed_zeros():
    y = Tensor([1.0, 1.0, -1.0, -1.0, 0.0, 0.0, -0.0, 0.0])
    x = Tensor([1.0, -1.0, -1.0, 1.0, 0.0, -1.0, -1.0, 1.0])
    want = [math.atan2(a, b) for a, b in zip(y.tolist(), x.tolist())]   # Python's math, an independent answer
    np.testing.assert_allclose(y.atan2(x).numpy(), want, rtol=1e-7)
    assert y.atan2(x).tolist()[5] == pytest.approx(math.pi) and y.atan2(x).tolist()[6] == pytest.approx(-math.pi)
    assert Tensor([[1.0], [2.0]]).atan2(Tensor([1.0, 2.0, 3.0])).shape == (2, 3)          # broadcasts


def test_fmod_takes_the_sign_of_the_dividend_and_remainder_of_the_divisor():
    a, b = Tensor([-7.0, 7.0, -7.5, 7.5]), Tensor([3.0, -3.0, 2.0, -2.0])
    assert a.fmod(b).tolist() == [math.fmod(x, y) for x, y in zip(a.tolist(), b.tolist())] == [-1, 1, -1.5, 1.5]
    assert a.remainder(b).tolist() == [x % y for x, y in zip(a.tolist(), b.tolist())] == [2, -2, 0.5, -0.5]
    assert Tensor([-7, 7]).fmod(3).tolist() == [-1, 1] and Tensor([-7, 7]).fmod(3).dtype == np.int64
    with pytest.raises(ZeroDivisionError, match=r"fmod: integer division by zero"):
        Tensor([1, 2]).fmod(Tensor([1, 0]))


def test_activations_at_infinities_nan_and_their_kinks():
    x = Tensor([-np.inf, -2.0, 0.0, 3.0, 7.0, np.inf, np.nan], dtype=np.float64)
    np.testing.assert_array_equal(x.elu(0.5).numpy(), [-0.5, 0.5 * math.expm1(-2.0), 0, 3, 7, np.inf, np.nan])
    np.testing.assert_array_equal(x.leaky_relu(0.1).numpy(), [-np.inf, -0.2, 0, 3, 7, np.inf, np.nan])
    np.testing.assert_array_equal(x.hardtanh().numpy(), [-1, -1, 0, 1, 1, 1, np.nan])
    np.testing.assert_array_equal(x.relu6().numpy(), [0, 0, 0, 3, 6, 6, np.nan])
    k = Tensor([-1.0, 0.0, 1.0, 6.0], requires_grad=True)     # derivatives at the kinks, as PyTorch has them
    k.hardtanh().sum().backward()
    assert k.grad.tolist() == [0.0, 1.0, 0.0, 0.0]
    k.grad = None
    k.relu6().sum().backward()
    assert k.grad.tolist() == [0.0, 0.0, 1.0, 0.0]
    k.grad = None
    k.leaky_relu(0.25).sum().backward()
    assert k.grad.tolist() == [0.25, 0.25, 1.0, 1.0]
    k.grad = None
    k.elu(2.0).sum().backward()
    assert k.grad.tolist() == pytest.approx([2 * math.exp(-1), 2.0, 1.0, 1.0])


def test_argsort_is_sorts_indices_and_stable():
    x = Tensor([[3.0, 1.0, 3.0, 2.0], [0.0, -1.0, 0.0, 5.0]])
    np.testing.assert_array_equal(x.argsort().numpy(), [[1, 3, 0, 2], [1, 0, 2, 3]])
    np.testing.assert_array_equal(x.argsort(dim=1, descending=True).numpy(), [[0, 2, 3, 1], [3, 0, 2, 1]])
    np.testing.assert_array_equal(x.argsort(0).numpy(), x.sort(0).indices.numpy())
    assert x.argsort().dtype == np.int64


def test_unique_sorted_with_inverse_and_counts():
    x = Tensor([[2, 7, 2], [1, 7, 7]])
    values, inverse, counts = x.unique(return_inverse=True, return_counts=True)
    assert values.tolist() == [1, 2, 7] and counts.tolist() == [1, 2, 3]
    assert inverse.tolist() == [[1, 2, 1], [0, 2, 2]] and inverse.dtype == np.int64
    np.testing.assert_array_equal(values.numpy()[inverse.numpy()], x.numpy())     # the inverse rebuilds x
    assert x.unique().tolist() == [1, 2, 7] and x.unique(sorted=False).tolist() == [1, 2, 7]
    rows, where = Tensor([[1, 2], [0, 5], [1, 2]]).unique(dim=0, return_inverse=True)
    assert rows.tolist() == [[0, 5], [1, 2]] and where.tolist() == [1, 0, 1]
    chars = Tensor(np.array([ord(c) for c in "hello"])).unique()                  # minGPT: the vocabulary
    assert [chr(c) for c in chars.tolist()] == ["e", "h", "l", "o"]


def test_diagonal_diag_and_diag_embed():
    m = Tensor(np.arange(12.0).reshape(3, 4))
    assert m.diagonal().tolist() == [0.0, 5.0, 10.0] and m.diag(1).tolist() == [1.0, 6.0, 11.0]
    assert m.diagonal(-2).tolist() == [8.0] and m.diagonal(9).shape == (0,)
    assert Tensor([1.0, 2.0]).diag().tolist() == [[1, 0], [0, 2]]
    assert Tensor([1.0, 2.0]).diag(-1).tolist() == [[0, 0, 0], [1, 0, 0], [0, 2, 0]]
    inf = Tensor([np.inf, 1.0]).diag()                        # no product: no inf·0 = NaN off the diagonal
    assert inf.tolist() == [[np.inf, 0.0], [0.0, 1.0]]
    with pytest.raises(ValueError, match="diag: needs a vector or a matrix"):
        Tensor.zeros(2, 2, 2).diag()
    with pytest.raises(ValueError, match="diagonal: dim1 and dim2 are the same axis"):
        m.diagonal(0, 1, -1)


def test_div_rounding_modes():
    a, b = Tensor([-7.0, 7.0, -7.5, 7.5]), Tensor([2.0, -2.0, 2.0, 2.0])
    assert a.div(b, rounding_mode="floor").tolist() == [x // y for x, y in zip(a.tolist(), b.tolist())]
    assert a.div(b, rounding_mode="trunc").tolist() == [math.trunc(x / y) for x, y in zip(a.tolist(), b.tolist())]
    ints = Tensor([-7, 7, -8, 2 ** 62 + 1])
    assert ints.div(2, rounding_mode="trunc").tolist() == [-3, 3, -4, 2 ** 61]     # exact beyond 2**53
    assert ints.div(2, rounding_mode="floor").tolist() == [-4, 3, -4, 2 ** 61]
    assert ints.div(2, rounding_mode="trunc").dtype == np.int64 and ints.div(2).dtype == np.float32
    with pytest.raises(ValueError, match="rounding_mode must be"):
        a.div(b, rounding_mode="round")
    x = Tensor([7.0, -7.0])
    assert x.div_(2, rounding_mode="trunc") is x and x.tolist() == [3.0, -3.0]


def test_against_pytorch():
    torch = pytest.importorskip("torch", reason="compares values with PyTorch's")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)) * 3
    u = np.tanh(x) * 0.9
    for ours, theirs in [(Tensor(u).asin(), torch.tensor(u).asin()), (Tensor(u).acos(), torch.tensor(u).acos()),
                         (Tensor(x).atan(), torch.tensor(x).atan()), (Tensor(x).sinh(), torch.tensor(x).sinh()),
                         (Tensor(x).cosh(), torch.tensor(x).cosh()), (Tensor(x).expm1(), torch.tensor(x).expm1()),
                         (Tensor(np.abs(x)).log10(), torch.tensor(np.abs(x)).log10()),
                         (Tensor(x).atan2(Tensor(u)), torch.tensor(x).atan2(torch.tensor(u))),
                         (Tensor(x).fmod(1.5), torch.tensor(x).fmod(1.5)),
                         (Tensor(x).remainder(-1.5), torch.tensor(x).remainder(-1.5)),
                         (Tensor(x).elu(0.3), torch.nn.functional.elu(torch.tensor(x), 0.3)),
                         (Tensor(x).leaky_relu(0.1), torch.nn.functional.leaky_relu(torch.tensor(x), 0.1)),
                         (Tensor(x).hardtanh(-2, 2), torch.nn.functional.hardtanh(torch.tensor(x), -2, 2)),
                         (Tensor(x).relu6(), torch.nn.functional.relu6(torch.tensor(x))),
                         (Tensor(x).argsort(0), torch.tensor(x).argsort(0)),
                         (Tensor(x).diagonal(1), torch.tensor(x).diagonal(1)),
                         (Tensor(x[0]).diag(-1), torch.tensor(x[0]).diag(-1)),
                         (Tensor(x).diag_embed(1), torch.diag_embed(torch.tensor(x), 1)),
                         (Tensor(x).div(0.7, rounding_mode="floor"), torch.tensor(x).div(0.7, rounding_mode="floor")),
                         (Tensor(x).div(0.7, rounding_mode="trunc"), torch.tensor(x).div(0.7, rounding_mode="trunc"))]:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-15)
    ids = rng.integers(0, 5, (4, 6))
    for ours, theirs in zip(Tensor(ids).unique(return_inverse=True, return_counts=True),
                            torch.tensor(ids).unique(return_inverse=True, return_counts=True)):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
