"""PyTorch's dtype rules for binary ops (tinygrad_like/dtypes.py), table-driven.

The table is what PyTorch 2.13 printed for `x op y` with x, y tensors of the named dtypes or Python
numbers ("int" is 2, "float" is 0.5); "error" where PyTorch refuses (any - with a bool tensor, and a
power of two bools). numpy would differ in many cells: int32 ⊗ float32 and int64 ⊗ float32 give
float64 there, int32 / int32 float64, a float64 number widens nothing (NEP 50) but an int64 array does.
"""
import operator

import numpy as np
import pytest

from tinygrad_like import Tensor

OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "**": operator.pow}
VALUES = {"bool": [True, True], "int32": [3, 2], "int64": [3, 2], "float32": [1.5, 0.25], "float64": [1.5, 0.25]}
NUMBERS = {"int": 2, "float": 0.5}

#                       +          -          *          /          **
TABLE = {
    ("bool", "bool"):       ("bool", "error", "bool", "float32", "error"),
    ("bool", "int32"):      ("int32", "error", "int32", "float32", "int32"),
    ("bool", "int64"):      ("int64", "error", "int64", "float32", "int64"),
    ("bool", "float32"):    ("float32", "error", "float32", "float32", "float32"),
    ("bool", "float64"):    ("float64", "error", "float64", "float64", "float64"),
    ("bool", "int"):        ("int64", "error", "int64", "float32", "int64"),
    ("bool", "float"):      ("float32", "error", "float32", "float32", "float32"),
    ("int32", "bool"):      ("int32", "error", "int32", "float32", "int32"),
    ("int32", "int32"):     ("int32", "int32", "int32", "float32", "int32"),
    ("int32", "int64"):     ("int64", "int64", "int64", "float32", "int64"),
    ("int32", "float32"):   ("float32", "float32", "float32", "float32", "float32"),
    ("int32", "float64"):   ("float64", "float64", "float64", "float64", "float64"),
    ("int32", "int"):       ("int32", "int32", "int32", "float32", "int32"),
    ("int32", "float"):     ("float32", "float32", "float32", "float32", "float32"),
    ("int64", "bool"):      ("int64", "error", "int64", "float32", "int64"),
    ("int64", "int32"):     ("int64", "int64", "int64", "float32", "int64"),
    ("int64", "int64"):     ("int64", "int64", "int64", "float32", "int64"),
    ("int64", "float32"):   ("float32", "float32", "float32", "float32", "float32"),
    ("int64", "float64"):   ("float64", "float64", "float64", "float64", "float64"),
    ("int64", "int"):       ("int64", "int64", "int64", "float32", "int64"),
    ("int64", "float"):     ("float32", "float32", "float32", "float32", "float32"),
    ("float32", "bool"):    ("float32", "error", "float32", "float32", "float32"),
    ("float32", "int32"):   ("float32", "float32", "float32", "float32", "float32"),
    ("float32", "int64"):   ("float32", "float32", "float32", "float32", "float32"),
    ("float32", "float32"): ("float32", "float32", "float32", "float32", "float32"),
    ("float32", "float64"): ("float64", "float64", "float64", "float64", "float64"),
    ("float32", "int"):     ("float32", "float32", "float32", "float32", "float32"),
    ("float32", "float"):   ("float32", "float32", "float32", "float32", "float32"),
    ("float64", "bool"):    ("float64", "error", "float64", "float64", "float64"),
    ("float64", "int32"):   ("float64", "float64", "float64", "float64", "float64"),
    ("float64", "int64"):   ("float64", "float64", "float64", "float64", "float64"),
    ("float64", "float32"): ("float64", "float64", "float64", "float64", "float64"),
    ("float64", "float64"): ("float64", "float64", "float64", "float64", "float64"),
    ("float64", "int"):     ("float64", "float64", "float64", "float64", "float64"),
    ("float64", "float"):   ("float64", "float64", "float64", "float64", "float64"),
    ("int", "bool"):        ("int64", "error", "int64", "float32", "int64"),
    ("int", "int32"):       ("int32", "int32", "int32", "float32", "int32"),
    ("int", "int64"):       ("int64", "int64", "int64", "float32", "int64"),
    ("int", "float32"):     ("float32", "float32", "float32", "float32", "float32"),
    ("int", "float64"):     ("float64", "float64", "float64", "float64", "float64"),
    ("float", "bool"):      ("float32", "error", "float32", "float32", "float32"),
    ("float", "int32"):     ("float32", "float32", "float32", "float32", "float32"),
    ("float", "int64"):     ("float32", "float32", "float32", "float32", "float32"),
    ("float", "float32"):   ("float32", "float32", "float32", "float32", "float32"),
    ("float", "float64"):   ("float64", "float64", "float64", "float64", "float64"),
}
CASES = [(a, b, op, expected) for (a, b), row in TABLE.items() for op, expected in zip(OPS, row)]


def operand(name):
    """(our operand, the same values as a float64 numpy array for the reference)."""
    if name in NUMBERS:
        return NUMBERS[name], np.float64(NUMBERS[name])
    return Tensor(np.array(VALUES[name], dtype=name)), np.array(VALUES[name], dtype=np.float64)


@pytest.mark.parametrize("a, b, op, expected", CASES, ids=[f"{a}{op}{b}" for a, b, op, _ in CASES])
def test_binary_op_result_dtype_and_values(a, b, op, expected):
    (x, x_ref), (y, y_ref) = operand(a), operand(b)
    if expected == "error":
        with pytest.raises(TypeError):
            OPS[op](x, y)
        return
    out = OPS[op](x, y)
    assert out.dtype == np.dtype(expected)
    reference = OPS[op](x_ref, y_ref).astype(expected)   # the math in float64, then PyTorch's result dtype
    np.testing.assert_allclose(out.numpy().astype(np.float64), reference.astype(np.float64), rtol=1e-6)


COMPARISONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
               "==": operator.eq, "!=": operator.ne}
PAIRS = [pair for pair in TABLE]


@pytest.mark.parametrize("a, b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
@pytest.mark.parametrize("op", COMPARISONS)
def test_comparisons_give_bool_for_every_pair(a, b, op):
    (x, x_ref), (y, y_ref) = operand(a), operand(b)
    out = COMPARISONS[op](x, y)
    assert out.dtype == bool
    np.testing.assert_array_equal(out.numpy(), COMPARISONS[op](x_ref, y_ref))


def test_zero_dim_tensors_rank_below_dimensioned_ones():
    """PyTorch: a 0-d tensor only raises the category (float32 (n,) ⊗ float64 0-d is float32;
    int64 (n,) ⊗ float64 0-d is float64); two 0-d tensors promote as usual."""
    f32, i64 = Tensor(np.ones(3, np.float32)), Tensor(np.ones(3, np.int64))
    f64_0d = Tensor(np.float64(2.0))
    assert (f32 * f64_0d).dtype == np.float32
    assert (i64 * f64_0d).dtype == np.float64
    assert (Tensor(np.float32(1.0)) + f64_0d).dtype == np.float64
    assert (f32 + np.float64(2.0)).dtype == np.float32     # a numpy number counts as a Python number


def test_int_mask_times_float32_activations_stays_float32():
    """The issue's example: an int64 mask or index tensor must not double the memory of float32 activations."""
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    mask = Tensor(np.array([1, 0, 1]))
    y = x * mask
    assert y.dtype == np.float32
    y.sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.numpy(), [1, 0, 1])
    assert (Tensor(np.array([1, 2, 3])) + 0.5).dtype == np.float32


def test_float32_tensor_meeting_float64_tensor_gets_float64_gradient_back_in_float32():
    x = Tensor([1.0, 2.0], requires_grad=True)
    w = Tensor(np.array([3.0, 4.0]), requires_grad=True)  # float64
    y = (x * w).sum()
    assert y.dtype == np.float64
    y.backward()
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float64
    np.testing.assert_array_equal(x.grad.numpy(), [3, 4])


@pytest.mark.parametrize("method", ["sum", "mean"])
def test_sum_and_mean_accumulate_in_the_dtype_asked_for(method):
    x = Tensor(np.full(10, 0.1, np.float32), requires_grad=True)
    out = getattr(x, method)(dtype=np.float64)
    assert out.dtype == np.float64
    expected = float(np.float32(0.1)) * (10 if method == "sum" else 1)   # exact float32 0.1, summed in float64
    assert abs(out.item() - expected) < 1e-15
    out.backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), 1.0 if method == "sum" else 0.1, rtol=1e-7)
    assert Tensor(np.array([1, 2], np.int32)).sum(dtype=np.int64).dtype == np.int64


def test_matmul_promotes_like_multiplication():
    one_hot = Tensor(np.eye(3, dtype=np.int64))
    w = Tensor(np.arange(6, dtype=np.float32).reshape(3, 2), requires_grad=True)
    y = one_hot @ w
    assert y.dtype == np.float32 and y.tolist() == w.tolist()
    y.sum().backward()
    assert w.grad.dtype == np.float32 and w.grad.tolist() == [[1, 1]] * 3
