"""The Python protocols, in-place ops, integer ops and 0-d tensors a learner from PyTorch or micrograd
reaches for, with PyTorch's semantics (expected values from the math or from what PyTorch 2.13 printed)."""
import operator

import numpy as np
import pytest

from tinygrad_like import Tensor, gradcheck, no_grad


def Value(x):
    """micrograd's Value played by a 0-d float64 tensor."""
    return Tensor(np.float64(x), requires_grad=True)


# ---------------------------------------------------------------- micrograd's test sequence

def test_micrograd_sanity_check():
    """micrograd's first test, checked against values derived by hand.

    x = −4: z = 2x + 2 + x = 3x + 2 = −10; q = relu(z) + z·x = 0 + 40 = 40; h = relu(z²) = 100;
    y = h + q + q·x = 100 + 40 − 160 = −20.
    Near x = −4, z < 0 (relu(z) = 0) and z² > 0 (relu(z²) = z²), so y = z² + z·x + z·x², z' = 3:
    dy/dx = 2z·3 + (3x + z) + (3x² + 2xz) = −60 + (−12 − 10) + (48 + 80) = 46.
    """
    x = Value(-4.0)
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    assert y.dtype == np.float64 and y.ndim == 0
    assert y.item() == -20.0
    assert x.grad.item() == 46.0
    assert abs(y - (-20.0)) < 1e-12 and float(x.grad) == 46.0       # abs() and float() of a tensor


def test_micrograd_more_ops():
    """micrograd's second test, against the values its README prints for the same expression:
    g = 24.7041, dg/da = 138.8338, dg/db = 645.5773. `c += ...` on an intermediate result records a
    new node and rebinds c, which gives PyTorch's values and gradients."""
    a, b = Value(-4.0), Value(2.0)
    c = a + b
    d = a * b + b ** 3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e ** 2
    g = f / 2.0
    g += 10.0 / f
    g.backward()
    assert f"{g.item():.4f}" == "24.7041" and f"{g:.4f}" == "24.7041"
    assert f"{a.grad:.4f}" == "138.8338"
    assert f"{b.grad:.4f}" == "645.5773"
    # the forward pass by hand: c = −2, d = −8 + 8 = 0; c = −2 + (−2 + 1) = −3; c = −3 + (1 − 3 + 4) = −1;
    # d = 0 + (0 + relu(−2)) = 0; d = 0 + (0 + relu(6)) = 6; e = −7, f = 49, g = 49/2 + 10/49
    assert g.item() == pytest.approx(24.5 + 10 / 49, abs=1e-12)


# ---------------------------------------------------------------- number protocols

def test_one_element_tensors_act_as_python_numbers():
    t = Tensor([-2.5])
    assert abs(t).tolist() == [2.5] and (+t) is t
    assert float(t) == -2.5 and int(t) == -2
    assert f"{Tensor(3.14159):.3f}" == "3.142" and f"{t:+.1f}" == "-2.5"
    assert [10, 20, 30][Tensor(np.int64(1))] == 20 and list(range(Tensor(np.array([3]))) ) == [0, 1, 2]
    with pytest.raises(TypeError, match="only integer tensors"):
        [1, 2][Tensor(1.0)]
    with pytest.raises(TypeError, match="one-element"):
        float(Tensor([1.0, 2.0]))
    assert f"{Tensor([1.0, 2.0])}" == str(Tensor([1.0, 2.0]))       # no spec: falls back to str
    with pytest.raises(TypeError):
        f"{Tensor([1.0, 2.0]):.2f}"                                  # PyTorch refuses a spec too


def test_abs_has_the_gradient_of_abs():
    x = Tensor([-2.0, 3.0], requires_grad=True)
    abs(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [-1.0, 1.0])


def test_array_protocol_gives_the_numeric_array():
    t = Tensor([[1.0, 2.0], [3.0, 4.0]])
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.shape == (2, 2) and a is t.numpy()
    b = np.array(t, dtype=np.float64)
    assert b.dtype == np.float64 and b.tolist() == [[1, 2], [3, 4]]
    c = np.array(t)                                                   # np.array copies by default
    assert c is not t.numpy() and c.tolist() == t.tolist()
    assert np.asarray([Tensor(1.0), Tensor(2.0)]).dtype == np.float32  # a list of 0-d tensors: numbers


def test_iteration_goes_over_the_first_axis_and_refuses_0d():
    t = Tensor(np.arange(6.0).reshape(3, 2))
    rows = list(t)
    assert len(rows) == 3 and all(isinstance(r, Tensor) for r in rows) and rows[2].tolist() == [4.0, 5.0]
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        list(Tensor(3.0))


# ---------------------------------------------------------------- in-place ops

def test_sgd_idiom_updates_the_parameter_itself():
    w = Tensor([1.0, -2.0], requires_grad=True)
    params, array = [w], w.numpy()
    (w * w).sum().backward()                                          # grad = 2w = [2, -4]
    with no_grad():
        w -= 0.25 * w.grad
    assert w is params[0] and w.numpy() is array and w.requires_grad
    np.testing.assert_array_equal(w.numpy(), [0.5, -1.0])


def test_sgd_with_no_grad_trains_a_linear_fit():
    """y = 3x − 1 learnt by `with no_grad(): p -= lr * p.grad` on the very tensors in `params`."""
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((64, 1)))
    y = x * 3.0 - 1.0
    w, b = Tensor.zeros(1, requires_grad=True), Tensor.zeros(1, requires_grad=True)
    params = [w, b]
    for _ in range(200):
        loss = ((x * w + b - y) ** 2).mean()
        for p in params:
            p.grad = None
        loss.backward()
        with no_grad():
            for p in params:
                p -= 0.1 * p.grad
    np.testing.assert_allclose([w.item(), b.item()], [3.0, -1.0], atol=1e-4)


@pytest.mark.parametrize("op, expected", [(operator.iadd, [3.0, 4.0]), (operator.isub, [-1.0, 0.0]),
                                          (operator.imul, [2.0, 4.0]), (operator.itruediv, [0.5, 1.0])])
def test_inplace_ops_on_a_tensor_without_grad_keep_object_array_and_dtype(op, expected):
    t = Tensor([1.0, 2.0])
    same, array = t, t.numpy()
    t = op(t, Tensor(np.array([2.0, 2.0])))                          # t op= float64 operand: stays float32
    assert t is same and t.numpy() is array and t.dtype == np.float32
    np.testing.assert_array_equal(t.numpy(), expected)


def test_inplace_on_a_leaf_that_requires_grad_while_recording_is_an_error():
    w = Tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        w += 1


def test_inplace_on_an_intermediate_records_a_new_node():
    x = Tensor([2.0], requires_grad=True)
    c = x * x
    first = c
    c += c + 1                                                        # c = 2x² + 1, dc/dx = 4x = 8
    assert c is not first
    c.backward()
    assert c.item() == 9.0 and x.grad.item() == 8.0


def test_inplace_true_division_of_an_int_tensor_is_an_error():
    t = Tensor(np.array([1, 2]))
    with pytest.raises(TypeError, match="cannot be written into a int64"):
        t /= 2
    t += 1
    assert t.tolist() == [2, 3]


# ---------------------------------------------------------------- integer ops

@pytest.mark.parametrize("dtype, values", [(np.int8, [-128, 5, 127]), (np.uint8, [0, 255, 7]),
                                           (np.int64, [np.iinfo(np.int64).min, 0, 1])])
def test_min_is_right_at_the_smallest_integer(dtype, values):
    t = Tensor(np.array(values, dtype=dtype))
    assert t.min().item() == min(values) and t.max().item() == max(values)
    assert t.min().dtype == dtype
    assert t.minimum(Tensor(np.array([0, 0, 0], dtype=dtype))).tolist() == [min(v, 0) for v in values]


def test_min_gradient_splits_ties_like_max():
    x = Tensor([3.0, 1.0, 1.0, 2.0], requires_grad=True)
    x.min().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0.5, 0.5, 0])
    assert gradcheck(lambda a, b: a.minimum(b), Tensor(np.array([1.0, -2.0, 3.0]), requires_grad=True),
                     Tensor(np.array([0.5, -1.0, 4.0]), requires_grad=True))
    assert gradcheck(lambda a: a.min(axis=1), Tensor(np.array([[1.0, -2.0, 3.0], [0.5, 2.0, 1.0]]), requires_grad=True))


def test_bitwise_ops_on_integers_and_logical_on_bools():
    a, b = Tensor(np.array([5, 12, -1])), Tensor(np.array([3, 10, 6]))
    assert (a | b).tolist() == [7, 14, -1]
    assert (a & b).tolist() == [1, 8, 6]
    assert (a ^ b).tolist() == [6, 6, -7]
    assert (a | 16).tolist() == [21, 28, -1]
    p, q = Tensor(np.array([True, True, False])), Tensor(np.array([True, False, False]))
    assert (p | q).tolist() == [True, True, False] and (p & q).tolist() == [True, False, False]
    assert (p ^ q).tolist() == [False, True, False] and (p | q).dtype == bool
    with pytest.raises(TypeError, match=r"\|: needs bool or integer tensors"):
        Tensor([1.0]) | Tensor([2.0])


def test_floor_division_and_remainder_follow_the_sign_of_the_divisor():
    """PyTorch 2.13 printed: tensor([-7, 7]) // 2 = [-4, 3]; tensor([-7, 7]) % -2 = [-1, -1];
    tensor([-7.5]) // 2 = [-4.]; tensor([-7.5]) % 2 = [0.5]."""
    i = Tensor(np.array([-7, 7]))
    assert (i // 2).tolist() == [-4, 3] and (i % -2).tolist() == [-1, -1] and (i // 2).dtype == np.int64
    assert (i % 2).tolist() == [1, 1] and (7 // Tensor(np.array([-2]))).tolist() == [-4]
    f = Tensor([-7.5])
    assert (f // 2).tolist() == [-4.0] and (f % 2).tolist() == [0.5] and (f % 2).dtype == np.float32
    assert (17 % Tensor([5.0])).tolist() == [2.0]
    with pytest.raises(ZeroDivisionError):
        i // 0


def test_remainder_gradient():
    """d(x mod y)/dx = 1, d/dy = −⌊x/y⌋ (away from the jumps)."""
    x = Tensor(np.array([5.3, -7.2, 2.5]), requires_grad=True)
    y = Tensor(np.array([2.0, 3.0, -1.5]), requires_grad=True)
    assert gradcheck(lambda a, b: a % b, x, y)
    (x % y).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), -np.floor(x.numpy() / y.numpy()))


# ---------------------------------------------------------------- 0-d tensors

def test_0d_tensors_accept_dim_0_and_minus_1_like_pytorch():
    """PyTorch 2.13: tensor(3.).sum(0) = 3, .softmax(0) = 1, .log_softmax(-1) = 0."""
    x = Tensor(np.float64(3.0), requires_grad=True)
    assert x.sum(0).item() == 3.0 and x.sum(-1).shape == () and x.max(0).values.item() == 3.0
    assert x.mean(-1).item() == 3.0 and x.min(0).values.item() == 3.0 and x.min(0).indices.item() == 0
    assert x.softmax(0).item() == 1.0 and x.log_softmax(-1).item() == 0.0
    assert x.logsumexp(0).item() == 3.0
    x.sum(0).backward()
    assert x.grad.item() == 1.0
    with pytest.raises(ValueError, match="out of range"):
        x.sum(1)
