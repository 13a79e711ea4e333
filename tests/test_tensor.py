"""The Tensor itself: which dtype data becomes, its attributes, the creation methods, and seeding."""
import numpy as np
import pytest

from tinygrad_like import Tensor

# ---------------------------------------------------------------- construction and dtypes


@pytest.mark.parametrize("data, dtype", [
    (1.5, np.float32), ([1.0, 2.0], np.float32), ([[1, 2.5]], np.float32),        # Python floats -> float32
    (np.array([1.0, 2.0]), np.float64), (np.float64(2.0), np.float64),             # numpy keeps its float dtype
    (np.array([1.0], dtype=np.float32), np.float32), (np.array([1.0], dtype=np.float16), np.float16),
    (3, np.int64), ([1, 2, 3], np.int64), (np.array([1, 2], dtype=np.int32), np.int32),  # integers stay integers
    ([True, False], np.bool_),
])
def test_construction_dtype(data, dtype):
    assert Tensor(data).dtype == dtype


def test_explicit_dtype_and_copy_from_tensor():
    assert Tensor([1, 2], dtype=np.float64).dtype == np.float64
    assert Tensor(np.array([1.0, 2.0]), dtype="float32").dtype == np.float32
    t = Tensor([1.0, 2.0])
    assert Tensor(t).dtype == np.float32 and np.array_equal(Tensor(t).numpy(), [1.0, 2.0])


def test_integer_tensor_cannot_require_grad():
    with pytest.raises(TypeError, match=r"only floating point.*int64"):
        Tensor([1, 2, 3], requires_grad=True)
    with pytest.raises(TypeError, match="int32"):
        Tensor.zeros(2, dtype=np.int32, requires_grad=True)


FLOAT64_OPS = [
    lambda x, y: x + y, lambda x, y: x * 2.0, lambda x, y: 1.0 / (y + 3.0), lambda x, y: x ** 2,
    lambda x, y: 2.0 ** x, lambda x, y: x @ y.T, lambda x, y: x.exp().log(), lambda x, y: x.gelu(),
    lambda x, y: x.sigmoid().tanh(), lambda x, y: x.mean(0), lambda x, y: x.var(), lambda x, y: x.softmax(),
    lambda x, y: x.log_softmax(), lambda x, y: x.layernorm(), lambda x, y: x.maximum(0.1),
    lambda x, y: x.clip(-0.5, 0.5), lambda x, y: (x > 0).where(x, 0.0), lambda x, y: x.masked_fill(x > 0, -1.0),
    lambda x, y: x.sparse_categorical_crossentropy([0, 2]), lambda x, y: x.dropout(0.5),
    lambda x, y: x.scaled_dot_product_attention(y, y, is_causal=True), lambda x, y: Tensor.cat(x, y)[::2, [0, 0]],
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("i", range(len(FLOAT64_OPS)))
def test_ops_and_grads_keep_the_float_dtype(i, dtype):
    """float64 stays float64 end to end; float32 with Python scalars stays float32 (no silent upcast)."""
    rng = np.random.default_rng(i)
    x = Tensor(rng.standard_normal((2, 3)).astype(dtype), requires_grad=True)
    y = Tensor(rng.standard_normal((2, 3)).astype(dtype), requires_grad=True)
    out = FLOAT64_OPS[i](x, y)
    assert out.dtype == dtype
    out.sum().backward()
    for t in (x, y):
        assert t.grad is None or t.grad.dtype == dtype


def test_mixed_float_dtypes_promote_like_numpy_and_grads_keep_the_leaf_dtype():
    a = Tensor([1.0, 2.0], requires_grad=True)                  # float32
    b = Tensor(np.array([3.0, 4.0]), requires_grad=True)        # float64
    out = a * b
    assert out.dtype == np.float64
    out.sum().backward()
    assert a.grad.dtype == np.float32 and b.grad.dtype == np.float64
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 4.0])


def test_integer_tensors_index_and_compute_as_integers():
    idx = Tensor([2, 0])
    assert (idx + 1).dtype == np.int64
    np.testing.assert_array_equal(Tensor([10.0, 20.0, 30.0])[idx].numpy(), [30.0, 10.0])


# ---------------------------------------------------------------- attributes


def test_attributes():
    a = np.arange(6.0).reshape(2, 3)
    t = Tensor(a, requires_grad=True, name="w")
    assert t.numpy() is a                                     # no copy
    assert t.shape == (2, 3) and t.ndim == 2 and t.dtype == np.float64 and len(t) == 2 and t.name == "w"
    assert t.requires_grad and t.grad is None and t._ctx is None
    assert Tensor(3.5).item() == 3.5 and isinstance(Tensor(3.5).item(), float)
    assert Tensor([[7]]).item() == 7
    s = (t * 2).sum()
    assert isinstance(s.numpy(), np.ndarray) and s.shape == () and s.item() == 30.0
    with pytest.raises(TypeError, match="0-d"):
        len(Tensor(1.0))


def test_detach_shares_data_and_leaves_the_graph():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    d = y.detach()
    assert not d.requires_grad and d._ctx is None and d.numpy() is y.numpy()
    (d * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 6.0])  # nothing flowed through d


def test_grad_is_a_tensor_after_backward():
    x = Tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert isinstance(x.grad, Tensor) and not x.grad.requires_grad
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


def test_repr_is_readable():
    assert repr(Tensor([1.0, 2.0])) == "Tensor([1., 2.], dtype=float32)"
    assert (repr(Tensor([1.0], requires_grad=True, name="b"))
            == "Tensor([1.], dtype=float32, requires_grad=True, name='b')")
    r = repr(Tensor([1.0], requires_grad=True) * 2)
    assert r.startswith("Tensor([2.]") and "grad_fn=<Mul>" in r
    big = repr(Tensor.zeros(100, 100))
    assert "..." in big and len(big) < 400                      # summarised, not 10,000 numbers


def test_cast_float_double():
    x = Tensor([1.5, 2.5], requires_grad=True)
    assert x.double().dtype == np.float64 and x.double().float().dtype == np.float32
    assert x.float() is x
    (x.double() * Tensor(np.array([2.0, 3.0]))).sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 3.0])


# ---------------------------------------------------------------- creation


@pytest.mark.parametrize("make, expected", [
    (lambda **kw: Tensor.zeros(2, 3, **kw), np.zeros((2, 3))),
    (lambda **kw: Tensor.zeros((2, 3), **kw), np.zeros((2, 3))),
    (lambda **kw: Tensor.ones(4, **kw), np.ones(4)),
    (lambda **kw: Tensor.full((2, 2), 7.0, **kw), np.full((2, 2), 7.0)),
    (lambda **kw: Tensor.full(3, -1.0, **kw), np.full(3, -1.0)),
    (lambda **kw: Tensor.eye(3, **kw), np.eye(3)),
    (lambda **kw: Tensor.arange(0.0, 1.0, 0.25, **kw), np.array([0.0, 0.25, 0.5, 0.75])),
])
@pytest.mark.parametrize("dtype", [None, np.float64])
def test_deterministic_creation(make, expected, dtype):
    kw = {} if dtype is None else {"dtype": dtype}
    t = make(**kw)
    assert t.dtype == (dtype or np.float32) and not t.requires_grad
    np.testing.assert_array_equal(t.numpy(), expected)
    assert make(**kw, requires_grad=True).requires_grad


def test_arange_int_and_float():
    assert Tensor.arange(5).dtype == np.int64 and Tensor.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert Tensor.arange(2, 8, 3).tolist() == [2, 5]
    assert Tensor.arange(0, 1.5, 0.5).dtype == np.float32 and Tensor.arange(0, 1.5, 0.5).tolist() == [0.0, 0.5, 1.0]
    assert Tensor.arange(3, dtype=np.float64).dtype == np.float64


@pytest.mark.parametrize("make", [lambda **kw: Tensor.randn(3, 4, **kw), lambda **kw: Tensor.rand((3, 4), **kw),
                                  lambda **kw: Tensor.uniform(3, 4, low=-2.0, high=5.0, **kw)])
def test_random_creation_dtype_shape_requires_grad(make):
    assert make().shape == (3, 4) and make().dtype == np.float32
    assert make(dtype=np.float64).dtype == np.float64
    assert make(requires_grad=True).requires_grad


def test_random_distributions():
    Tensor.manual_seed(0)
    n = Tensor.randn(100_000).numpy()
    assert abs(n.mean()) < 0.02 and abs(n.std() - 1) < 0.02
    r = Tensor.rand(100_000).numpy()
    assert r.min() >= 0 and r.max() < 1 and abs(r.mean() - 0.5) < 0.01
    u = Tensor.uniform(100_000, low=-2.0, high=5.0).numpy()
    assert u.min() >= -2.0 and u.max() < 5.0 and abs(u.mean() - 1.5) < 0.05


def test_manual_seed_makes_every_random_op_reproducible():
    def draw():
        return [Tensor.randn(3).numpy(), Tensor.rand(3).numpy(), Tensor.uniform(3, low=1, high=2).numpy(),
                Tensor.ones(50).dropout(0.5).numpy()]

    Tensor.manual_seed(1234)
    first = draw()
    Tensor.manual_seed(1234)
    again = draw()
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    Tensor.manual_seed(4321)
    assert not np.array_equal(draw()[0], first[0])
