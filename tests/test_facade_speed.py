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


CATS = [([(6,), (6,)], 0), ([(2, 3), (4, 3)], 0), ([(2, 3), (2, 1), (2, 0)], -1), ([(1, 2, 3), (1, 2, 3)], 1),
        ([(3,)], 0)]


@pytest.mark.parametrize("shapes, dim", CATS)
@pytest.mark.parametrize("dtypes", [("int64",), ("float32",), ("float32", "int64"), ("bool", "int32")])
def test_torch_cat_without_a_graph_is_tensor_cats_array(shapes, dim, dtypes):
    """torch.cat of tensors needing no gradient joins the arrays in one numpy call (_joined): the same
    values, dtype and shape as Tensor.cat, a new array, no graph node."""
    import tinygrad_like.torch as torch
    from tinygrad_like import no_grad
    from tinygrad_like.torch import _functions
    rng = np.random.default_rng(1)
    parts = [Tensor(rng.integers(-3, 9, size=s).astype(dtypes[i % len(dtypes)])) for i, s in enumerate(shapes)]
    assert _functions._joined(parts, dim) is not None            # the fast path is taken
    for out in (torch.cat(parts, dim), torch.cat(tuple(parts), dim=dim)):
        plain = Tensor.cat(*parts, dim=dim)
        assert out.dtype == plain.dtype and out.shape == plain.shape and np.array_equal(out.numpy(), plain.numpy())
        assert out._ctx is None and not out.requires_grad and not np.shares_memory(out.numpy(), parts[0].numpy())
    w = Tensor(rng.standard_normal(shapes[0]).astype(np.float32), requires_grad=True)
    assert torch.cat([w] + parts[1:], dim).requires_grad              # a gradient wanted: Tensor.cat's graph
    with no_grad():
        assert _functions._joined([w] + parts[1:], dim) is not None


STACKS = [([(6,)] * 12, 0), ([(6,)] * 3, -1), ([(2, 3)] * 2, 1), ([(2, 3)] * 3, -1), ([(2, 3)] * 2, -3), ([()] * 4, 0),
          ([(1, 0, 3)] * 2, 2)]


@pytest.mark.parametrize("shapes, dim", STACKS)
@pytest.mark.parametrize("dtypes", [("int64",), ("float32",), ("float32", "int64"), ("bool", "int32"), ("uint16",)])
def test_torch_stack_without_a_graph_is_tensor_stacks_array(shapes, dim, dtypes):
    """torch.stack of tensors needing no gradient stacks the arrays in one numpy call (_stacked): the same
    values, dtype and shape as Tensor.stack (a Reshape per tensor, then Cat), a new array, no graph node."""
    import tinygrad_like.torch as torch
    from tinygrad_like import no_grad
    from tinygrad_like.torch import _functions
    rng = np.random.default_rng(3)
    parts = [Tensor(rng.integers(0, 9, size=s).astype(dtypes[i % len(dtypes)])) for i, s in enumerate(shapes)]
    assert _functions._stacked(parts, dim) is not None            # the fast path is taken
    for out in (torch.stack(parts, dim), torch.stack(tuple(parts), dim=dim)):
        plain = Tensor.stack(*parts, dim=dim)
        assert out.dtype == plain.dtype and out.shape == plain.shape and np.array_equal(out.numpy(), plain.numpy())
        assert out._ctx is None and not out.requires_grad and not np.shares_memory(out.numpy(), parts[0].numpy())
    w = Tensor(rng.standard_normal(shapes[0]).astype(np.float32), requires_grad=True)
    assert torch.stack([w] + parts[1:], dim).requires_grad            # a gradient wanted: Tensor.stack's graph
    with no_grad():
        assert _functions._stacked([w] + parts[1:], dim) is not None


def test_torch_stack_refuses_what_tensor_stack_refuses_with_its_errors():
    import tinygrad_like.torch as torch
    from tinygrad_like.errors import DimError, ShapeError
    a = Tensor(np.zeros((2, 3)))
    with pytest.raises(ShapeError, match=r"stack: shapes .* and .* differ"):
        torch.stack([a, Tensor(np.zeros((2, 4)))])
    with pytest.raises(ShapeError, match=r"stack: shapes"):
        torch.stack([a, Tensor(np.zeros((3, 2)))], dim=1)
    with pytest.raises(DimError, match="stack: dim 3 is out of range"):
        torch.stack([a, a], dim=3)
    with pytest.raises(DimError, match="stack: dim -4 is out of range"):
        torch.stack([a, a], dim=-4)
    with pytest.raises(TypeError, match="stack: expected a non-empty sequence of Tensors"):
        torch.stack([])


def test_torch_cat_refuses_what_tensor_cat_refuses_with_its_errors():
    import tinygrad_like.torch as torch
    from tinygrad_like.errors import DimError, ShapeError
    a, b = Tensor(np.zeros((2, 3))), Tensor(np.zeros((2, 4)))
    with pytest.raises(ShapeError, match="cat: shapes .* differ outside dim 0"):
        torch.cat([a, b])
    with pytest.raises(ShapeError, match="cat: shapes"):
        torch.cat([a, Tensor(np.zeros(3))], dim=-1)
    with pytest.raises(DimError, match="cat: dim 2 is out of range"):
        torch.cat([a, a], dim=2)
    with pytest.raises((DimError, IndexError)):
        torch.cat([Tensor(np.float32(1)), Tensor(np.float32(2))])
    with pytest.raises(TypeError, match="cat: expected a non-empty sequence of Tensors"):
        torch.cat([])


@pytest.mark.parametrize("descending", [False, True])
def test_sort_of_one_row_reads_the_values_as_take_along_axis_does(descending):
    rng = np.random.default_rng(2)
    for data in (rng.integers(0, 3, 6), rng.standard_normal(9).astype(np.float32),
                 np.array([2.0, np.nan, -0.0, 0.0, -np.inf, 1.0]), np.zeros(0, np.int64)):
        values, indices = Tensor(data).sort(descending=descending)
        expected = np.take_along_axis(data, indices.numpy(), 0)
        assert values.dtype == data.dtype and values.numpy().tobytes() == expected.tobytes()
        if not np.isnan(data).any():
            assert np.array_equal(values.numpy(), np.sort(data)[::-1] if descending else np.sort(data))


def test_transpose_is_permute_of_the_swapped_axes_and_split_cuts_where_it_did():
    """transpose applies Permute itself (its order is a permutation by construction); split's starts are
    running sums of the sizes. Both against the spelled-out answers, gradients included."""
    from tinygrad_like.errors import DimError
    x = Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4), requires_grad=True)
    for d0 in range(-3, 3):
        for d1 in range(-3, 3):
            t = x.transpose(d0, d1)
            assert np.array_equal(t.numpy(), np.swapaxes(x.numpy(), d0, d1)) and type(t._ctx).__name__ == "Permute"
    (x.transpose(0, 2) * Tensor(np.arange(24, dtype=np.float32).reshape(4, 3, 2))).sum().backward()
    assert np.array_equal(x.grad.numpy(), np.arange(24, dtype=np.float32).reshape(4, 3, 2).transpose(2, 1, 0))
    with pytest.raises(DimError, match="transpose: dim 3 is out of range"):
        x.transpose(0, 3)
    for sizes, dim in [(2, -1), ([1, 3], 2), ([0, 2, 1], 1), (5, 0)]:
        parts = x.split(sizes, dim)
        cuts = np.cumsum([p.shape[dim] for p in parts])[:-1]
        assert all(np.array_equal(p.numpy(), q) for p, q in zip(parts, np.split(x.numpy(), cuts, axis=dim)))
