"""What keeps the per-op cost low, checked as facts rather than timings (benchmarks/bench_ops.py times it):
a shared Size per shape for the facade's `.shape`, and no `__getattr__` on Tensor (CPython reads the
attributes of a class with one the slow way, on every op)."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_like  # noqa: F401  (attaches the dialect)
from tinygrad_like import Tensor
from tinygrad_like.dialect import attributes, missing
from tinygrad_like.dialect.attributes import Size, size_of_shape
from tinygrad_like.dialect.printing import pytorch_printing
from tinygrad_like.errors import NotInEngine


def test_size_of_shape_is_the_size_of_the_shape_made_once():
    for shape in [(), (3,), (2, 3), (1, 4, 1, 5)]:
        size = size_of_shape(shape)
        assert type(size) is Size and size == Size(shape) == shape and hash(size) == hash(shape)
        assert size_of_shape(tuple(shape)) is size           # shared: made once per shape
    with pytest.raises(AttributeError):
        size_of_shape((2, 3)).anything = 1                   # immutable, so sharing it is safe


def test_the_size_cache_stays_bounded(monkeypatch):
    monkeypatch.setattr(attributes, "_SIZES", {})
    monkeypatch.setattr(attributes, "_SIZES_AT_MOST", 8)
    for n in range(30):
        assert size_of_shape((n, 2)) == (n, 2)
        assert len(attributes._SIZES) <= 8


def test_facade_shape_and_size_give_the_shared_size():
    x = Tensor(np.zeros((2, 3), np.float32))
    with pytorch_printing():
        assert type(x.shape) is Size and x.shape == (2, 3) and x.shape is x.size() is size_of_shape((2, 3))
        assert repr(x.shape) == "torch.Size([2, 3])"
    with pytorch_printing(False):
        assert type(x.shape) is tuple and x.size() == (2, 3)


def test_tensor_has_no_getattr_and_missing_names_still_say_why():
    assert not any("__getattr__" in vars(c) for c in Tensor.__mro__)
    x = Tensor([1.0])
    with pytest.raises(NotInEngine, match=r"Tensor\.stft: .*no Fourier transforms"):
        x.stft()
    with pytest.raises(NotInEngine, match=r"Tensor\.svd: .*linear algebra"):
        Tensor.svd(x)                                         # on the class too
    assert not hasattr(x, "stft") and not hasattr(Tensor, "stft") and getattr(x, "stft", 7) == 7
    assert "stft" not in dir(x) and "sum" in dir(x)          # dir lists what a tensor has
    assert isinstance(vars(Tensor)["stft"], missing.NotInEngineName)
    assert "contiguous" not in vars(Tensor) or not isinstance(vars(Tensor)["contiguous"], missing.NotInEngineName)


def test_default_collate_stacks_examples_as_tensor_stack_does():
    from tinygrad_like.errors import ShapeError
    from tinygrad_like.torch.utils.data import default_collate
    rng = np.random.default_rng(0)
    rows = [Tensor(rng.integers(-5, 30, size=(16,))) for _ in range(32)]
    pairs = [(x, Tensor(rng.standard_normal((3, 2)).astype(np.float32))) for x in rows]
    xs, ys = default_collate(pairs)
    expected_x = Tensor.stack(*rows)
    assert xs.shape == expected_x.shape == (32, 16) and xs.dtype == expected_x.dtype == np.int64
    assert np.array_equal(xs.numpy(), expected_x.numpy()) and np.array_equal(xs.numpy()[7], rows[7].numpy())
    assert ys.shape == (32, 3, 2) and ys.dtype == np.float32 and xs._ctx is None and not xs.requires_grad
    assert np.array_equal(ys.numpy()[31], pairs[31][1].numpy())
    rows[0]._data[0] = 99                      # the batch is a copy, as Tensor.stack's is
    assert xs.numpy()[0, 0] != 99
    with pytest.raises(ShapeError, match=r"stack: shapes \S*\(\[?16,?\]?\) and \S*\(\[?15,?\]?\) differ"):
        default_collate([Tensor(np.zeros(16)), Tensor(np.zeros(15))])


def test_default_collate_keeps_the_graph_of_examples_that_require_grad():
    from tinygrad_like.torch.utils.data import default_collate
    w = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    batch = default_collate([w * 2, w * 3])
    assert batch.shape == (2, 2, 3) and batch.requires_grad
    batch.sum().backward()
    assert np.array_equal(w.grad.numpy(), np.full((2, 3), 5.0, np.float32))     # d(Σ 2w + 3w)/dw = 5
