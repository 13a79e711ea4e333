"""The API learners reach for (issue 11): values against PyTorch's semantics.

Expected values are the ones PyTorch 2.13 printed for the same call (written in), or follow from the
definition by hand. Gradients of every differentiable op are gradchecked in tests/test_api_gradcheck.py;
here: values, conventions (ties, bounds, zeros, rounding), float32 staying float32, clear errors.
The last tests compare with a live PyTorch when it is installed.
"""
import math

import numpy as np
import pytest

import tinygrad_like.functional as F
from tinygrad_like import Tensor, gradcheck, gradgradcheck, no_grad


def grad_of(fn, values, dtype=np.float64):
    x = Tensor(np.array(values, dtype=dtype), requires_grad=True)
    fn(x).sum().backward()
    return x.grad.numpy()


# ---------------------------------------------------------------- creation

def test_like_creators_keep_shape_and_dtype_unless_told():
    x = Tensor(np.zeros((2, 3), dtype=np.float32))
    for t, value in [(x.zeros_like(), 0), (x.ones_like(), 1), (x.full_like(2.5), 2.5)]:
        assert t.shape == (2, 3) and t.dtype == np.float32 and (t.numpy() == value).all()
    assert x.zeros_like(dtype=np.int64).dtype == np.int64
    assert Tensor.zeros_like(x).shape == (2, 3)                   # tinygrad's spelling
    assert x.ones_like(requires_grad=True).requires_grad
    for t in (x.randn_like(), x.rand_like(), x.double().randn_like()):
        assert t.shape == (2, 3) and t.dtype == x.dtype or t.dtype == np.float64
    assert ((x.rand_like().numpy() >= 0) & (x.rand_like().numpy() < 1)).all()
    with pytest.raises(TypeError, match="randn_like"):
        Tensor([1, 2]).randn_like()


def test_empty_randint_linspace_eye():
    assert Tensor.empty(2, 3).shape == (2, 3) and Tensor.empty((4,), dtype=np.float64).dtype == np.float64
    Tensor.manual_seed(0)
    a = Tensor.randint(3, 7, (200,))
    Tensor.manual_seed(0)
    assert (Tensor.randint(3, 7, size=(200,)).numpy() == a.numpy()).all()  # the library's generator
    assert a.dtype == np.int64 and a.numpy().min() == 3 and a.numpy().max() == 6
    b = Tensor.randint(5, (3, 4))                                   # PyTorch's randint(high, size)
    assert b.shape == (3, 4) and ((b.numpy() >= 0) & (b.numpy() < 5)).all()
    with pytest.raises(ValueError, match="randint"):
        Tensor.randint(5, 5, (2,))
    # torch.linspace(-1, 1, 4): [-1.0, -0.3333333135, 0.3333333135, 1.0] (float32)
    lin = Tensor.linspace(-1, 1, 4)
    assert lin.dtype == np.float32
    np.testing.assert_array_equal(lin.numpy(), np.array([-1.0, -0.3333333135, 0.3333333135, 1.0], dtype=np.float32))
    np.testing.assert_array_equal(Tensor.linspace(0, 1, 5).numpy(), [0, 0.25, 0.5, 0.75, 1])
    np.testing.assert_array_equal(Tensor.eye(2, 3).numpy(), [[1, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(Tensor.eye(2).numpy(), [[1, 0], [0, 1]])


def test_tril_triu_values_and_masks_keep_minus_inf():
    x = Tensor(np.arange(1.0, 13.0).reshape(3, 4))
    np.testing.assert_array_equal(x.tril().numpy(), [[1, 0, 0, 0], [5, 6, 0, 0], [9, 10, 11, 0]])
    np.testing.assert_array_equal(x.triu(1).numpy(), [[0, 2, 3, 4], [0, 0, 7, 8], [0, 0, 0, 12]])
    np.testing.assert_array_equal(x.tril(-1).numpy(), [[0, 0, 0, 0], [5, 0, 0, 0], [9, 10, 0, 0]])
    causal = Tensor.full((3, 3), -math.inf).triu(1)              # the additive causal mask of tutorials
    np.testing.assert_array_equal(causal.numpy(), [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])
    np.testing.assert_array_equal(grad_of(lambda t: t.tril(), np.ones((2, 2))), [[1, 0], [1, 1]])
    with pytest.raises(ValueError, match=r"tril: .*\(3,\)"):
        Tensor([1.0, 2.0, 3.0]).tril()


def test_one_hot():
    t = Tensor(np.array([[0, 2], [1, 0]]))
    out = t.one_hot(3)
    assert out.dtype == np.int64 and out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out.numpy(), [[[1, 0, 0], [0, 0, 1]], [[0, 1, 0], [1, 0, 0]]])
    assert F.one_hot(Tensor([0, 3])).shape == (2, 4)              # num_classes=-1: max + 1
    with pytest.raises(ValueError, match=r"one_hot: class index 3 is outside \[0, 3\)"):
        Tensor([0, 3]).one_hot(3)
    with pytest.raises(TypeError, match="one_hot"):
        Tensor([0.0, 1.0]).one_hot(2)


# ---------------------------------------------------------------- elementwise math

def test_math_values():
    x = Tensor(np.array([0.5, 1.0, -2.0]))
    # torch.erf: [0.5204998778, 0.8427007929, -0.9953222650]
    np.testing.assert_allclose(x.erf().numpy(), [0.5204998778130465, 0.8427007929497149, -0.9953222650189527],
                               rtol=1e-14)
    np.testing.assert_allclose(Tensor([0.0, math.pi / 2]).sin().numpy(), [0, 1], atol=1e-7)
    np.testing.assert_allclose(Tensor([0.0, math.pi]).cos().numpy(), [1, -1], atol=1e-7)
    np.testing.assert_array_equal(Tensor([4.0, 0.25]).rsqrt().numpy(), [0.5, 2.0])
    np.testing.assert_allclose(Tensor([8.0, 0.5]).log2().numpy(), [3, -1], rtol=1e-7)
    np.testing.assert_allclose(Tensor([3.0, -1.0]).exp2().numpy(), [8, 0.5], rtol=1e-7)
    np.testing.assert_array_equal(Tensor([-3.0, 2.0]).square().numpy(), [9, 4])
    np.testing.assert_array_equal(Tensor([2.0, 3.0]).pow(3).numpy(), [8, 27])
    np.testing.assert_allclose(Tensor(np.array([1e-10])).log1p().numpy(), [1e-10 - 5e-21], rtol=1e-15)
    np.testing.assert_array_equal(Tensor([1.0, 2.0]).lerp(Tensor([3.0, 6.0]), 0.25).numpy(), [1.5, 3.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softplus_is_finite_and_exact_at_extremes(dtype):
    # torch: softplus([1e4, -1e4, 0, 20.5, -30]) = [1e4, 0, 0.6931471806, 20.5, 9.3576229688e-14],
    # gradient σ(x) = [1, 0, 0.5, 1, 9.3576229688e-14] (float32: 9.3576229122e-14)
    x = Tensor(np.array([1e4, -1e4, 0.0, 20.5, -30.0], dtype=dtype), requires_grad=True)
    y = x.softplus()
    assert y.dtype == dtype
    rtol = 1e-6 if dtype == np.float32 else 1e-12
    tiny = math.log1p(math.exp(-30))                             # 9.3576229688e-14, and σ(-30) agrees to 1e-27
    np.testing.assert_allclose(y.numpy(), [1e4, 0, math.log(2), 20.5, tiny], rtol=rtol)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 0, 0.5, 1, 1 / (1 + math.exp(30))], rtol=rtol)
    # beta and threshold as in PyTorch: softplus([1, 2], beta=2, threshold=1) = [1, 2] (βx > threshold: x)
    np.testing.assert_array_equal(Tensor([1.0, 2.0]).softplus(beta=2, threshold=1).numpy(), [1, 2])


def test_clamp_gradient_at_the_bounds_is_pytorchs():
    # torch: x = [-1, 0, 0.5, 1, 2], x.clamp(0, 1).sum().backward() gives [0, 1, 1, 1, 0]
    np.testing.assert_array_equal(grad_of(lambda x: x.clamp(0, 1), [-1, 0, 0.5, 1, 2]), [0, 1, 1, 1, 0])
    np.testing.assert_array_equal(grad_of(lambda x: x.clip(0, 1), [-1, 0, 0.5, 1, 2]), [0, 1, 1, 1, 0])
    np.testing.assert_array_equal(Tensor([-1.0, 0.0, 2.0]).clamp(min=1, max=0).numpy(), [0, 0, 0])  # min > max
    assert Tensor.clip is Tensor.clamp
    lo = Tensor([0.0, 0.0], requires_grad=True)
    x = Tensor([-1.0, 1.0], requires_grad=True)
    x.clamp(min=lo).sum().backward()
    np.testing.assert_array_equal(lo.grad.numpy(), [1, 0])      # the bound gets the gradient where it won
    np.testing.assert_array_equal(x.grad.numpy(), [0, 1])


def test_round_floor_ceil_are_pytorchs_and_constant():
    x = Tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5], requires_grad=True)
    np.testing.assert_array_equal(x.round().numpy(), [-2, -2, -0, 0, 2, 2])   # half to even, as torch.round
    np.testing.assert_array_equal(x.floor().numpy(), [-3, -2, -1, 0, 1, 2])
    np.testing.assert_array_equal(x.ceil().numpy(), [-2, -1, -0, 1, 2, 3])
    np.testing.assert_allclose(Tensor([1.2345]).round(2).numpy(), [1.23], rtol=1e-6)
    for out in (x.round(), x.floor(), x.ceil()):
        assert out.dtype == np.float32 and not out.requires_grad


def test_isclose_allclose():
    a = Tensor([1.0, 1e-9, math.inf, math.nan])
    b = Tensor([1.0 + 1e-6, 0.0, math.inf, math.nan])
    np.testing.assert_array_equal(a.isclose(b).numpy(), [True, True, True, False])  # torch.isclose printed this
    np.testing.assert_array_equal(a.isclose(b, equal_nan=True).numpy(), [True, True, True, True])
    assert Tensor([1.0, 2.0]).allclose(Tensor([1.0, 2.0 + 1e-6])) is True
    assert Tensor([1.0, 2.0]).allclose([1.0, 2.1]) is False


# ---------------------------------------------------------------- reductions

def test_argmax_argmin_keepdim_and_first_index_at_ties():
    x = Tensor(np.array([[1, 5, 5], [7, 0, 0]]))
    # torch: argmax(1, keepdim=True) [[1], [0]]; argmin(0, keepdim=True) [[0, 1, 1]]
    np.testing.assert_array_equal(x.argmax(1, keepdim=True).numpy(), [[1], [0]])
    np.testing.assert_array_equal(x.argmin(0, keepdim=True).numpy(), [[0, 1, 1]])
    assert x.argmax().item() == 3 and x.argmax(keepdim=True).shape == (1, 1)
    assert x.argmin(-1).tolist() == [0, 1]
    assert Tensor([[2.0, 1.0]]).min(1, keepdim=True).values.shape == (1, 1)
    with pytest.raises(ValueError, match=r"argmax: dim 2 .*\(2, 3\)"):
        x.argmax(2)


def test_all_any_with_axis():
    x = Tensor(np.array([[1.0, 3, 2], [4, 0, 5]]))
    assert x.any().item() is True and x.all().item() is False
    # torch: x.all(dim=1, keepdim=True) = [[True], [False]]
    np.testing.assert_array_equal(x.all(1, keepdim=True).numpy(), [[True], [False]])
    np.testing.assert_array_equal(x.any(axis=0).numpy(), [True, True, True])
    np.testing.assert_array_equal((x > 2).any(axis=(0, 1)).numpy(), True)


def test_cumsum_values_and_gradient():
    x = Tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    np.testing.assert_array_equal(x.cumsum(0).numpy(), [1, 3, 6, 10])
    (x.cumsum(0) * Tensor([1.0, 10, 100, 1000])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1111, 1110, 1100, 1000])  # torch printed this


def test_cumprod_gradient_is_right_with_zeros():
    # torch: [2, 0, 3, 0, 5].cumprod(0) = [2, 0, 0, 0, 0], gradient of the sum [1, 8, 0, 0, 0]
    x = Tensor(np.array([2.0, 0.0, 3.0, 0.0, 5.0]), requires_grad=True)
    np.testing.assert_array_equal(x.cumprod(0).numpy(), [2, 0, 0, 0, 0])
    x.cumprod(0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 8, 0, 0, 0])
    np.testing.assert_array_equal(grad_of(lambda t: t.cumprod(0), [0.0, 2.0, 0.0, 3.0]), [3, 0, 0, 0])
    one_zero = Tensor(np.array([[1.5, 0.0, -2.0], [0.5, 3.0, 0.0]]), requires_grad=True)
    assert gradcheck(lambda t: t.cumprod(1), one_zero) and gradgradcheck(lambda t: t.cumprod(1), one_zero)


def test_norm_values_and_zero_gradient_at_zero():
    # torch: [3, 4].norm() = 5; [[1, -2], [3, 4]].norm(p=1, dim=1) = [3, 7]; .norm(p=3) = 4.6415891647
    assert Tensor([3.0, 4.0]).norm().item() == 5.0
    m = Tensor([[1.0, -2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(m.norm(1, axis=1).numpy(), [3, 7])
    assert abs(m.norm(3).item() - 4.6415891647) < 1e-6
    assert m.norm(math.inf).item() == 4.0 and m.norm("fro").item() == pytest.approx(math.sqrt(30))
    np.testing.assert_array_equal(grad_of(lambda t: t.norm(), [0.0, 0.0, 0.0]), [0, 0, 0])  # as torch: not NaN
    with pytest.raises(ValueError, match="norm"):
        m.norm(-1)


def test_var_mean_std_mean_correction_and_unbiased():
    x = Tensor([[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]])
    # torch.var_mean(x, dim=1, unbiased=False) = ([0.6667, 4.6667], [2, 3])
    var, mean = x.var_mean(1, unbiased=False)
    np.testing.assert_allclose(var.numpy(), [2 / 3, 14 / 3], rtol=1e-6)
    np.testing.assert_array_equal(mean.numpy(), [2, 3])
    np.testing.assert_allclose(x.var_mean(1)[0].numpy(), [1, 7], rtol=1e-6)            # correction=1 default
    np.testing.assert_allclose(x.var_mean(1, correction=0)[0].numpy(), [2 / 3, 14 / 3], rtol=1e-6)
    std, mean = x.std_mean(axis=1, keepdim=True)
    assert std.shape == mean.shape == (2, 1)
    np.testing.assert_allclose(std.numpy(), [[1], [math.sqrt(7)]], rtol=1e-6)
    with pytest.raises(TypeError, match="var_mean: got correction and unbiased, .* not both"):
        x.var_mean(correction=1, unbiased=True)


# ---------------------------------------------------------------- movement

def test_split_chunk_unflatten_sizes():
    r = Tensor.arange(6)
    assert [p.tolist() for p in r.split(4)] == [[0, 1, 2, 3], [4, 5]]
    assert [p.tolist() for p in r.split([1, 5])] == [[0], [1, 2, 3, 4, 5]]
    assert [p.tolist() for p in r.chunk(4)] == [[0, 1], [2, 3], [4, 5]]     # torch: 3 chunks, not 4
    assert [p.tolist() for p in Tensor.arange(5).chunk(4)] == [[0, 1], [2, 3], [4]]
    assert Tensor.zeros(2, 12).unflatten(1, (3, 4)).shape == (2, 3, 4)
    assert Tensor.zeros(2, 12).unflatten(-1, (-1, 6)).shape == (2, 2, 6)
    assert Tensor.zeros(2, 3, 4, 5).flatten(1, 2).shape == (2, 12, 5)
    with pytest.raises(ValueError, match=r"split: sections \[1, 2\] do not add up to 6"):
        r.split([1, 2])
    with pytest.raises(ValueError, match=r"unflatten: sizes \(5, 2\) do not fit dim 1 of shape \(2, 12\)"):
        Tensor.zeros(2, 12).unflatten(1, (5, 2))


def test_repeat_repeat_interleave_flip_roll():
    a = Tensor(np.array([[1, 2], [3, 4]]))
    np.testing.assert_array_equal(a.repeat(2, 3).numpy(), [[1, 2, 1, 2, 1, 2], [3, 4, 3, 4, 3, 4],
                                                           [1, 2, 1, 2, 1, 2], [3, 4, 3, 4, 3, 4]])
    assert a.repeat(2, 1, 1).shape == (2, 2, 2)
    np.testing.assert_array_equal(a.repeat_interleave(Tensor([1, 2]), dim=0).numpy(), [[1, 2], [3, 4], [3, 4]])
    np.testing.assert_array_equal(a.repeat_interleave(2).numpy(), [1, 1, 2, 2, 3, 3, 4, 4])
    k = Tensor.randn(2, 2, 5, 3)                                   # (B, n_kv, T, hs) -> (B, n_head, T, hs)
    np.testing.assert_array_equal(k.repeat_interleave(3, dim=1).numpy(), np.repeat(k.numpy(), 3, axis=1))
    np.testing.assert_array_equal(a.flip(0).numpy(), [[3, 4], [1, 2]])
    six = Tensor.arange(6).reshape(2, 3)
    # torch.roll(six, shifts=(1, -1), dims=(0, 1)) = [[4, 5, 3], [1, 2, 0]]; torch.roll(six, 2) = [[4, 5, 0], [1, 2, 3]]
    np.testing.assert_array_equal(six.roll((1, -1), (0, 1)).numpy(), [[4, 5, 3], [1, 2, 0]])
    np.testing.assert_array_equal(six.roll(2).numpy(), [[4, 5, 0], [1, 2, 3]])
    with pytest.raises(ValueError, match=r"repeat: needs at least 2 sizes for shape \(2, 2\)"):
        a.repeat(2)


def test_pad_uses_pytorchs_order_from_the_last_dim():
    x = Tensor(np.arange(6.0).reshape(2, 3))
    # torch F.pad(x, (1, 0, 0, 1), value=-1): one column on the left, one row at the bottom
    np.testing.assert_array_equal(F.pad(x, (1, 0, 0, 1), value=-1).numpy(),
                                  [[-1, 0, 1, 2], [-1, 3, 4, 5], [-1, -1, -1, -1]])
    assert x.pad((1, 2)).shape == (2, 6) and x.float().pad((1, 1)).dtype == np.float32
    np.testing.assert_array_equal(x.pad((0, -1)).numpy(), [[0, 1], [3, 4]])
    with pytest.raises(ValueError, match=r"pad: needs pairs .*\(2, 3\)"):
        x.pad((1, 1, 1))
    np.testing.assert_array_equal(F.pad(x, (1, 1), mode="reflect").numpy(), [[1, 0, 1, 2, 1], [4, 3, 4, 5, 4]])
    with pytest.raises(ValueError, match="pad: mode must be 'constant', 'reflect', 'replicate' or 'circular'"):
        F.pad(x, (1, 1), mode="symmetric")


def test_clone_has_its_own_memory_and_passes_the_gradient():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = x.clone()
    y.data[0] = 9.0
    assert x.numpy()[0] == 1.0 and x.numel() == 2 and Tensor.zeros(3, 4).numel() == 12
    (x.clone() * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3, 3])


# ---------------------------------------------------------------- selection

def test_gather_scatter_scatter_add_as_in_pytorch_docs():
    # torch: [[1, 2], [3, 4]].gather(1, [[0, 0], [1, 0]]) = [[1, 1], [4, 3]]
    t = Tensor(np.array([[1, 2], [3, 4]]))
    np.testing.assert_array_equal(t.gather(1, Tensor(np.array([[0, 0], [1, 0]]))).numpy(), [[1, 1], [4, 3]])
    np.testing.assert_array_equal(t.gather(np.array([[0, 0], [1, 0]]), 1).numpy(), [[1, 1], [4, 3]])  # tinygrad order
    # torch: zeros(3, 5).scatter(0, [[0, 1, 2, 0]], arange(1, 11).reshape(2, 5))
    src = Tensor(np.arange(1.0, 11.0).reshape(2, 5))
    np.testing.assert_array_equal(Tensor.zeros(3, 5).scatter(0, np.array([[0, 1, 2, 0]]), src).numpy(),
                                  [[1, 0, 0, 4, 0], [0, 2, 0, 0, 0], [0, 0, 3, 0, 0]])
    # torch: ones(2, 4).scatter_add(1, [[0, 1, 1], [3, 3, 3]], [[1, 2, 3], [4, 5, 6]]) = [[2, 6, 1, 1], [1, 1, 1, 16]]
    out = Tensor.ones(2, 4).scatter_add(1, np.array([[0, 1, 1], [3, 3, 3]]), Tensor([[1.0, 2, 3], [4, 5, 6]]))
    np.testing.assert_array_equal(out.numpy(), [[2, 6, 1, 1], [1, 1, 1, 16]])
    np.testing.assert_array_equal(Tensor.zeros(2, 3).scatter(1, np.array([[2], [0]]), value=7.0).numpy(),
                                  [[0, 0, 7], [7, 0, 0]])
    with pytest.raises(IndexError, match=r"gather: index 2 is out of range for dim 1 of size 2 \(shape \(2, 2\)\)"):
        t.gather(1, np.array([[2, 0]]))
    with pytest.raises(ValueError, match=r"gather: index of shape \(2,\) needs as many dimensions"):
        t.gather(1, np.array([0, 1]))


def test_scatter_gradients():
    x = Tensor(np.zeros((2, 3)), requires_grad=True)
    s = Tensor(np.ones((1, 2)), requires_grad=True)
    g = Tensor(np.arange(6.0).reshape(2, 3))
    x.scatter(1, np.array([[2, 0]]), s).backward(g)
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1, 0], [3, 4, 5]])   # overwritten entries get none
    np.testing.assert_array_equal(s.grad.numpy(), [[2, 0]])                 # read back where written


def test_index_select_masked_select_nonzero():
    x = Tensor(np.arange(12.0).reshape(4, 3))
    np.testing.assert_array_equal(x.index_select(0, Tensor([3, 0, 3])).numpy(), [[9, 10, 11], [0, 1, 2], [9, 10, 11]])
    np.testing.assert_array_equal(x.masked_select(x > 8).numpy(), [9, 10, 11])
    np.testing.assert_array_equal(x.masked_select(np.array([True, False, True])).numpy(), [0, 2, 3, 5, 6, 8, 9, 11])
    # torch: [[0, 1.5], [2, 0]].nonzero() = [[0, 1], [1, 0]]
    nz = Tensor([[0.0, 1.5], [2.0, 0.0]]).nonzero()
    assert nz.dtype == np.int64
    np.testing.assert_array_equal(nz.numpy(), [[0, 1], [1, 0]])
    rows, cols = Tensor([[0.0, 1.5], [2.0, 0.0]]).nonzero(as_tuple=True)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]
    with pytest.raises(IndexError, match=r"index_select: index out of range \[0, 4\)"):
        x.index_select(0, [4])


def test_sort_and_topk_order_ties_as_pytorch_stable():
    v = Tensor([3.0, 1.0, 3.0, 2.0, 1.0])
    # torch sort(stable=True): values [1, 1, 2, 3, 3] indices [1, 4, 3, 0, 2];
    # descending: [3, 3, 2, 1, 1], [0, 2, 3, 1, 4]; topk(3): [3, 3, 2], [0, 2, 3]
    values, indices = v.sort()
    assert values.tolist() == [1, 1, 2, 3, 3] and indices.tolist() == [1, 4, 3, 0, 2]
    assert v.sort(descending=True).indices.tolist() == [0, 2, 3, 1, 4]
    top = v.topk(3)
    assert top.values.tolist() == [3, 3, 2] and top.indices.tolist() == [0, 2, 3]
    assert v.topk(2, largest=False).indices.tolist() == [1, 4]
    with pytest.raises(ValueError, match=r"topk: k=6 is outside \[0, 5\]"):
        v.topk(6)
    x = Tensor([3.0, 1.0, 2.0], requires_grad=True)
    (x.sort().values * Tensor([1.0, 10.0, 100.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [100, 1, 10])           # each value's gradient goes home



@pytest.mark.parametrize("dim, descending", [(0, False), (1, True), (-1, False), (2, True)])
def test_sort_and_topk_without_gradient_read_the_same_entries_as_gather(dim, descending):
    # values of a tensor needing no gradient are read straight from the array (selection._picked); with a
    # gradient they go through gather: the same entries, dtype and order either way, ties included
    data = np.random.default_rng(4).integers(0, 3, (4, 5, 6)).astype(np.float32)   # many ties
    plain, graded = Tensor(data), Tensor(data, requires_grad=True)
    fast, slow = plain.sort(dim, descending=descending), graded.sort(dim, descending=descending)
    assert fast.values.dtype == slow.values.dtype and not fast.values.requires_grad and slow.values.requires_grad
    np.testing.assert_array_equal(fast.values.numpy(), slow.values.numpy())
    np.testing.assert_array_equal(fast.indices.numpy(), slow.indices.numpy())
    np.testing.assert_array_equal(fast.values.numpy(), np.take_along_axis(data, slow.indices.numpy(), dim))
    top, top_graded = plain.topk(3, dim, largest=descending), graded.topk(3, dim, largest=descending)
    np.testing.assert_array_equal(top.values.numpy(), top_graded.values.numpy())
    with no_grad():
        under = graded.sort(dim, descending=descending).values
    assert not under.requires_grad
    np.testing.assert_array_equal(under.numpy(), slow.values.numpy())
    ints = Tensor(data.astype(np.int64)).sort(dim, descending=descending)          # sort_driver's case: int64
    assert ints.values.dtype == np.int64
    np.testing.assert_array_equal(ints.values.numpy(), slow.values.numpy().astype(np.int64))

def test_multinomial_draws_in_proportion_without_repeats_and_reproducibly():
    w = Tensor([0.0, 1.0, 3.0])
    Tensor.manual_seed(0)
    draws = w.multinomial(20000, replacement=True)
    assert draws.dtype == np.int64 and draws.shape == (20000,)
    freq = np.bincount(draws.numpy(), minlength=3) / 20000
    assert freq[0] == 0 and abs(freq[2] - 0.75) < 0.015                  # weight 0 never drawn
    Tensor.manual_seed(0)
    assert (w.multinomial(20000, replacement=True).numpy() == draws.numpy()).all()
    rows = Tensor([[1.0, 1.0, 1.0, 0.0], [5.0, 0.0, 1.0, 1.0]]).multinomial(3)
    assert rows.shape == (2, 3)
    for row, allowed in zip(rows.numpy(), ({0, 1, 2}, {0, 2, 3})):
        assert set(row.tolist()) == allowed                              # every nonzero index, once
    Tensor.manual_seed(1)   # without replacement, the first draw follows the weights too
    firsts = [Tensor([1.0, 3.0]).multinomial(1).item() for _ in range(4000)]
    assert abs(np.mean(firsts) - 0.75) < 0.03
    with pytest.raises(ValueError, match="cannot draw 3 samples without replacement from 2"):
        w.multinomial(3)
    with pytest.raises(ValueError, match="multinomial: weights"):
        Tensor([-1.0, 2.0]).multinomial(1)


# ---------------------------------------------------------------- functional nn

def test_mse_loss_reductions():
    a, b = Tensor([1.0, 2.0, 3.0]), Tensor([0.0, 2.0, 5.0])
    assert F.mse_loss(a, b).item() == pytest.approx(5 / 3)            # torch: 1.6666666269
    assert F.mse_loss(a, b, reduction="sum").item() == 5.0
    np.testing.assert_array_equal(F.mse_loss(a, b, reduction="none").numpy(), [1, 0, 4])
    with pytest.raises(ValueError, match="mse_loss: reduction must be"):
        F.mse_loss(a, b, reduction="avg")
    with pytest.raises(ValueError, match=r"mse_loss: input \(3,\) and target \(1, 3\)"):
        F.mse_loss(a, Tensor([[1.0, 2.0, 3.0]]))


def test_binary_cross_entropy_floors_logs_at_minus_100_like_pytorch():
    # torch: p = [0, 1, 0.3, 0, 1], y = [0, 1, 0.6, 1, 0]: loss [0, 0, 0.8651, 100, 100],
    # d/dp [0, 0, -1.4286, -1e12, 1e12]
    p = Tensor(np.array([0.0, 1.0, 0.3, 0.0, 1.0]), requires_grad=True)
    y = Tensor(np.array([0.0, 1.0, 0.6, 1.0, 0.0]))
    loss = F.binary_cross_entropy(p, y, reduction="none")
    expected_mid = -(0.6 * math.log(0.3) + 0.4 * math.log(0.7))
    np.testing.assert_allclose(loss.numpy(), [0, 0, expected_mid, 100, 100], rtol=1e-12)
    loss.sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), [0, 0, (0.3 - 0.6) / (0.3 * 0.7), -1e12, 1e12], rtol=1e-12)
    w = Tensor(np.array([1.0, 1.0, 2.0, 0.0, 0.0]))
    assert F.binary_cross_entropy(p, y, weight=w, reduction="sum").item() == pytest.approx(2 * expected_mid)
    with pytest.raises(ValueError, match="binary_cross_entropy: input .* probabilities"):
        F.binary_cross_entropy(Tensor([1.5]), Tensor([1.0]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_cross_entropy_with_logits_is_stable_at_1e4(dtype):
    # torch (float32): x = [1e4, -1e4, 0.5], y = [0, 1, 1]: loss [1e4, 1e4, 0.4740769863],
    # d/dx [1, -1, -0.3775406480]; by hand: log(1 + e^-0.5) and -σ(-0.5); pos_weight=3 triples the y=1 terms
    x = Tensor(np.array([1e4, -1e4, 0.5], dtype=dtype), requires_grad=True)
    y = Tensor(np.array([0.0, 1.0, 1.0], dtype=dtype))
    loss = F.binary_cross_entropy_with_logits(x, y, reduction="none")
    assert loss.dtype == dtype
    rtol = 1e-6 if dtype == np.float32 else 1e-10
    half = math.log1p(math.exp(-0.5))
    np.testing.assert_allclose(loss.numpy(), [1e4, 1e4, half], rtol=rtol)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, -1, -1 / (1 + math.exp(0.5))], rtol=rtol)
    weighted = F.binary_cross_entropy_with_logits(x, y, pos_weight=3.0, reduction="none")
    np.testing.assert_allclose(weighted.numpy(), [1e4, 3e4, 3 * half], rtol=rtol)


def test_gelu_exact_and_tanh():
    x = Tensor(np.array([1.0, -0.5]))
    # torch F.gelu: [0.8413447461, -0.1542687694]; approximate="tanh": [0.8411919906, -0.1542859902]
    np.testing.assert_allclose(F.gelu(x).numpy(), [0.8413447461, -0.1542687694], rtol=1e-9)
    np.testing.assert_allclose(F.gelu(x, approximate="tanh").numpy(), [0.8411919906, -0.1542859902], rtol=1e-9)
    with pytest.raises(ValueError, match="gelu: approximate must be"):
        F.gelu(x, approximate="erf")


# ---------------------------------------------------------------- float32 stays float32

FLOAT_OPS = [
    lambda x: x.sin(), lambda x: x.cos(), lambda x: x.erf(), lambda x: x.abs().rsqrt(), lambda x: x.abs().log2(),
    lambda x: x.exp2(), lambda x: x.softplus(), lambda x: x.square(), lambda x: x.pow(3), lambda x: x.clamp(-1, 1),
    lambda x: x.lerp(x * 2, 0.5), lambda x: x.tril(), lambda x: x.cumsum(0), lambda x: x.cumprod(1),
    lambda x: x.norm(), lambda x: x.var_mean(1)[0], lambda x: x.std_mean()[0], lambda x: x.split(1)[0],
    lambda x: x.repeat(2, 1), lambda x: x.repeat_interleave(2, 0), lambda x: x.flip(0), lambda x: x.roll(1, 1),
    lambda x: x.pad((1, 1)), lambda x: x.gather(1, np.array([[0], [1]])), lambda x: x.sort().values,
    lambda x: x.topk(1).values, lambda x: x.scatter_add(0, np.array([[1, 0, 1]]), x), lambda x: x.clone(),
    lambda x: x.masked_select(x > 0), lambda x: x.index_select(1, [0]), lambda x: F.gelu(x),
    lambda x: F.mse_loss(x, x * 0), lambda x: F.binary_cross_entropy(x.sigmoid(), x.sigmoid()),
    lambda x: F.binary_cross_entropy_with_logits(x, x.sigmoid()),
]


@pytest.mark.parametrize("i", range(len(FLOAT_OPS)))
def test_float32_in_float32_out_forward_and_backward(i):
    x = Tensor(np.array([[0.5, -1.2, 2.0], [1.5, 0.3, -0.7]], dtype=np.float32), requires_grad=True)
    out = FLOAT_OPS[i](x)
    assert out.dtype == np.float32
    out.sum().backward()
    assert x.grad.dtype == np.float32 and np.isfinite(x.grad.numpy()).all()


# ---------------------------------------------------------------- a live PyTorch, when installed

def test_matches_live_pytorch_forward_and_backward():
    torch = pytest.importorskip("torch")
    tF = torch.nn.functional
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    idx = rng.integers(0, 4, (3, 2))
    pairs = [
        (lambda x: x.erf(), lambda x: torch.erf(x)),
        (lambda x: x.softplus(beta=1.5), lambda x: tF.softplus(x, beta=1.5)),
        (lambda x: x.cumsum(1), lambda x: x.cumsum(1)),
        (lambda x: x.cumprod(0), lambda x: x.cumprod(0)),
        (lambda x: x.norm(axis=1), lambda x: x.norm(dim=1)),
        (lambda x: x.var_mean(0)[0], lambda x: torch.var_mean(x, 0)[0]),
        (lambda x: x.pad((1, 2, 0, 1), value=0.5), lambda x: tF.pad(x, (1, 2, 0, 1), value=0.5)),
        (lambda x: x.roll((1, -2), (0, 1)), lambda x: x.roll((1, -2), (0, 1))),
        (lambda x: x.repeat(2, 1, 2), lambda x: x.repeat(2, 1, 2)),
        (lambda x: x.gather(1, idx), lambda x: x.gather(1, torch.tensor(idx))),
        (lambda x: x.scatter_add(1, idx, x[:, :2]), lambda x: x.scatter_add(1, torch.tensor(idx), x[:, :2])),
        (lambda x: x.topk(2, dim=0).values, lambda x: x.topk(2, dim=0).values),
        (lambda x: x.sort(1, descending=True).values, lambda x: x.sort(1, descending=True).values),
        (lambda x: F.gelu(x), lambda x: tF.gelu(x)),
        (lambda x: F.binary_cross_entropy_with_logits(x, x.sigmoid().detach(), pos_weight=2.0),
         lambda x: tF.binary_cross_entropy_with_logits(x, x.sigmoid().detach(), pos_weight=torch.tensor(2.0,
                                                                                       dtype=torch.float64))),
    ]
    for ours, theirs in pairs:
        x, xt = Tensor(a.copy(), requires_grad=True), torch.tensor(a, requires_grad=True)
        y, yt = ours(x), theirs(xt)
        np.testing.assert_allclose(y.numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
        g = rng.standard_normal(yt.shape)
        y.backward(Tensor(g))
        yt.backward(torch.tensor(g))
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- errors name the op and the shapes

BAD_CALLS = [
    (lambda x: x.cumsum(2), ValueError, r"cumsum: dim 2 is out of range for a tensor of shape \(2, 3\)"),
    (lambda x: x.cumprod(-3), ValueError, r"cumprod: dim -3 .*\(2, 3\)"),
    (lambda x: x.split(0), ValueError, "split: split_size must be positive"),
    (lambda x: x.chunk(2, dim=5), ValueError, r"chunk: dim 5 .*\(2, 3\)"),
    (lambda x: x.roll((1, 2), 0), ValueError, "roll: 2 shifts for 1 dims"),
    (lambda x: x.pad((1, 1, 1, 1, 1, 1)), ValueError, r"pad: .*\(2, 3\)"),
    (lambda x: x.pad((-2, -2)), ValueError, r"pad: cropping .*\(2, 3\)"),
    (lambda x: x.flip(2), ValueError, r"flip: dim 2 .*\(2, 3\)"),
    (lambda x: x.repeat_interleave([1, 2], dim=1), ValueError, r"repeat_interleave: need 3 counts .*\(2, 3\)"),
    (lambda x: x.scatter_add(1, np.array([[0, 1]]), Tensor([[1.0]])), ValueError,
     r"scatter_add: src of shape \(1, 1\) does not cover index of shape \(1, 2\)"),
    (lambda x: x.gather(1, np.array([[0.5]])), TypeError, "gather: index must hold integers"),
    (lambda x: x.masked_select(np.array([True, False])), ValueError,
     r"masked_select: mask \(2,\) does not broadcast with tensor \(2, 3\)"),
    (lambda x: x.index_select(0, np.array([[0]])), ValueError, r"index_select: index must be 1-D, got shape \(1, 1\)"),
    (lambda x: x.reshape(1, 2, 3).multinomial(1), ValueError, r"multinomial: .*\(1, 2, 3\)"),
    (lambda x: x.sort(dim=2), ValueError, r"sort: dim 2 .*\(2, 3\)"),
    (lambda x: x.var_mean(axis=3), ValueError, r"axis 3 is out of range for a tensor of shape \(2, 3\)"),
    (lambda x: F.binary_cross_entropy_with_logits(x, x[0]), ValueError,
     r"binary_cross_entropy_with_logits: input \(2, 3\) and target \(3,\)"),
]


@pytest.mark.parametrize("i", range(len(BAD_CALLS)))
def test_bad_input_names_the_op_and_the_shapes(i):
    call, error, message = BAD_CALLS[i]
    with pytest.raises(error, match=message):
        call(Tensor(np.abs(np.arange(6.0).reshape(2, 3)) + 1))
