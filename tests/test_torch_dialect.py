"""The Tensor speaks PyTorch and keeps its own names (issue 18): every form checked against PyTorch itself.

Each row of the tables is `case(label, shapes, ours, theirs, kind)`: `ours` takes float64 Tensors,
`theirs` the same values as float64 torch tensors, both written the way a learner would write them.
For every row we check that the outputs (a tensor, or a tuple / named pair of them) agree in shape,
dtype kind and value, and that the gradients of Σ u·output (u fixed and random) agree for every input.
The other tests check the attributes, the in-place rules, the exception types and the defaults.
"""
import math

import numpy as np
import pytest

from tinygrad_like import Tensor, gradcheck, gradgradcheck, no_grad

torch = pytest.importorskip("torch")

CASES = []


def case(label, shapes, ours, theirs, kind="normal"):
    CASES.append(pytest.param(shapes, ours, theirs, kind, id=f"{label}{shapes}"))


def arrays_for(shapes, kind, seed=0):
    """float64 arrays: "normal", or "distinct" (all values different: no ties for max/sort/topk)."""
    rng = np.random.default_rng(seed)
    if kind == "distinct":
        sizes = [math.prod(s) for s in shapes]
        values = (rng.permutation(sum(sizes)) - sum(sizes) // 2) * 0.1 + 0.05
        return [p.reshape(s) for p, s in zip(np.split(values, np.cumsum(sizes)[:-1]), shapes)]
    return [rng.standard_normal(s) for s in shapes]


def as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


IDX = np.array([[0, 2, 2], [1, 0, 0]])

# reductions: PyTorch's dim=/keepdim=, numpy's axis=/keepdims=, positional, mixed
case("sum", [(2, 3, 4)], lambda x: x.sum(dim=1), lambda x: x.sum(dim=1))
case("sum", [(2, 3, 4)], lambda x: x.sum(1, keepdim=True), lambda x: x.sum(1, keepdim=True))
case("sum", [(2, 3, 4)], lambda x: x.sum(1, keepdims=True), lambda x: x.sum(1, keepdim=True))
case("sum", [(2, 3, 4)], lambda x: x.sum(axis=-1, keepdims=True), lambda x: x.sum(-1, keepdim=True))
case("sum", [(2, 3, 4)], lambda x: x.sum(dim=(0, 2)), lambda x: x.sum(dim=(0, 2)))
case("sum", [(2, 3, 4)], lambda x: x.sum(dim=-1, keepdims=True), lambda x: x.sum(dim=-1, keepdim=True))
case("mean", [(2, 3, 4)], lambda x: x.mean(dim=-1, keepdim=True), lambda x: x.mean(dim=-1, keepdim=True))
case("mean", [(2, 3, 4)], lambda x: x.mean(axis=(0, 1), keepdims=True), lambda x: x.mean((0, 1), keepdim=True))
case("prod", [(2, 3, 4)], lambda x: x.prod(dim=1), lambda x: x.prod(dim=1))
case("prod", [(2, 5)], lambda x: x.prod(1, keepdim=True), lambda x: x.prod(1, keepdim=True))
case("prod", [(2, 3)], lambda x: x.prod(), lambda x: x.prod())
case("prod", [(3, 4)], lambda x: x.prod(axis=0, keepdims=True), lambda x: x.prod(0, keepdim=True))
case("var", [(4, 3)], lambda x: x.var(dim=0), lambda x: x.var(dim=0))
case("var", [(4, 3)], lambda x: x.var(axis=0), lambda x: x.var(dim=0))
case("var", [(4, 3)], lambda x: x.var(), lambda x: x.var())
case("var", [(4, 3)], lambda x: x.var(dim=1, unbiased=False), lambda x: x.var(dim=1, unbiased=False))
case("var", [(4, 3)], lambda x: x.var(dim=1, correction=0, keepdim=True),
     lambda x: x.var(dim=1, correction=0, keepdim=True))
case("var", [(4, 3)], lambda x: x.var(axis=1, ddof=0), lambda x: x.var(dim=1, correction=0))
case("std", [(4, 3)], lambda x: x.std(dim=1, keepdim=True), lambda x: x.std(dim=1, keepdim=True))
case("std", [(4, 3)], lambda x: x.std(0, unbiased=True), lambda x: x.std(0, unbiased=True))
case("std", [(4, 3)], lambda x: x.std(axis=0, keepdims=True, correction=0),
     lambda x: x.std(0, keepdim=True, correction=0))
case("var_mean", [(4, 3)], lambda x: x.var_mean(dim=0), lambda x: torch.var_mean(x, dim=0))
case("std_mean", [(4, 3)], lambda x: x.std_mean(dim=1, keepdim=True, correction=0),
     lambda x: torch.std_mean(x, dim=1, keepdim=True, correction=0))
case("logsumexp", [(2, 3, 4)], lambda x: x.logsumexp(dim=-1), lambda x: x.logsumexp(dim=-1))
case("logsumexp", [(2, 3, 4)], lambda x: x.logsumexp(1, keepdim=True), lambda x: x.logsumexp(1, keepdim=True))
case("logsumexp", [(2, 3, 4)], lambda x: x.logsumexp(axis=0, keepdims=True), lambda x: x.logsumexp(0, keepdim=True))
case("amax", [(2, 3, 4)], lambda x: x.amax(dim=1), lambda x: x.amax(dim=1), kind="distinct")
case("amax", [(2, 3, 4)], lambda x: x.amax(axis=(0, 2), keepdims=True), lambda x: x.amax((0, 2), keepdim=True),
     kind="distinct")
case("amin", [(2, 3, 4)], lambda x: x.amin(-1, keepdim=True), lambda x: x.amin(-1, keepdim=True), kind="distinct")
case("max", [(2, 3, 4)], lambda x: x.max(dim=1), lambda x: x.max(dim=1), kind="distinct")
case("max", [(2, 3, 4)], lambda x: x.max(1), lambda x: x.max(1), kind="distinct")
case("max", [(2, 3, 4)], lambda x: x.max(-1, keepdim=True), lambda x: x.max(-1, keepdim=True), kind="distinct")
case("max", [(2, 3, 4)], lambda x: x.max(dim=0, keepdims=True), lambda x: x.max(0, keepdim=True), kind="distinct")
case("max", [(2, 3, 4)], lambda x: x.max(axis=1), lambda x: x.amax(1), kind="distinct")
case("max", [(2, 3, 4)], lambda x: x.max(axis=1, keepdims=True), lambda x: x.amax(1, keepdim=True), kind="distinct")
case("max", [(2, 3, 4)], lambda x: x.max(), lambda x: x.max(), kind="distinct")
case("min", [(2, 3, 4)], lambda x: x.min(dim=2), lambda x: x.min(dim=2), kind="distinct")
case("min", [(2, 3, 4)], lambda x: x.min(0), lambda x: x.min(0), kind="distinct")
case("max", [(2, 3), (2, 3)], lambda a, b: a.max(b), lambda a, b: a.max(b), kind="distinct")
case("min", [(2, 3), (3,)], lambda a, b: a.min(b), lambda a, b: a.min(b), kind="distinct")
case("min", [(2, 3, 4)], lambda x: x.min(axis=-1, keepdim=True), lambda x: x.amin(-1, keepdim=True), kind="distinct")
case("argmax", [(3, 4)], lambda x: x.argmax(dim=1), lambda x: x.argmax(dim=1), kind="distinct")
case("argmax", [(3, 4)], lambda x: x.argmax(axis=0, keepdims=True), lambda x: x.argmax(0, keepdim=True),
     kind="distinct")
case("argmin", [(3, 4)], lambda x: x.argmin(dim=-1, keepdim=True), lambda x: x.argmin(-1, keepdim=True),
     kind="distinct")
case("any", [(3, 4)], lambda x: (x > 0.5).any(dim=1), lambda x: (x > 0.5).any(dim=1))
case("all", [(3, 4)], lambda x: (x > -1).all(dim=0, keepdim=True), lambda x: (x > -1).all(dim=0, keepdim=True))
case("all", [(3, 4)], lambda x: (x > -1).all(axis=1, keepdims=True), lambda x: (x > -1).all(1, keepdim=True))
case("cumsum", [(3, 4)], lambda x: x.cumsum(dim=0), lambda x: x.cumsum(dim=0))
case("cumsum", [(3, 4)], lambda x: x.cumsum(axis=1), lambda x: x.cumsum(1))
case("cumprod", [(3, 4)], lambda x: x.cumprod(dim=1), lambda x: x.cumprod(dim=1))
case("cumprod", [(3, 4)], lambda x: x.cumprod(axis=0), lambda x: x.cumprod(0))
case("norm", [(3, 4)], lambda x: x.norm(dim=1), lambda x: x.norm(dim=1))
case("norm", [(3, 4)], lambda x: x.norm(p=1, dim=0, keepdim=True), lambda x: x.norm(p=1, dim=0, keepdim=True))
case("norm", [(3, 4)], lambda x: x.norm(axis=1, keepdims=True), lambda x: x.norm(dim=1, keepdim=True))
case("norm", [(3, 4)], lambda x: x.norm(math.inf, dim=1), lambda x: x.norm(math.inf, dim=1), kind="distinct")
# softmax and friends
case("softmax", [(2, 3, 4)], lambda x: x.softmax(dim=-1), lambda x: x.softmax(dim=-1))
case("softmax", [(2, 3, 4)], lambda x: x.softmax(1), lambda x: x.softmax(1))
case("softmax", [(2, 3, 4)], lambda x: x.softmax(axis=0), lambda x: x.softmax(0))
case("log_softmax", [(2, 3, 4)], lambda x: x.log_softmax(dim=1), lambda x: x.log_softmax(dim=1))
case("log_softmax", [(2, 3, 4)], lambda x: x.log_softmax(axis=-1), lambda x: x.log_softmax(-1))
# joining and cutting
case("cat", [(2, 3), (2, 4)], lambda a, b: Tensor.cat([a, b], dim=1), lambda a, b: torch.cat([a, b], dim=1))
case("cat", [(2, 3), (2, 4)], lambda a, b: Tensor.cat([a, b], axis=-1), lambda a, b: torch.cat([a, b], -1))
case("stack", [(2, 3), (2, 3)], lambda a, b: Tensor.stack([a, b], dim=1), lambda a, b: torch.stack([a, b], dim=1))
case("stack", [(2, 3), (2, 3)], lambda a, b: Tensor.stack([a, b], axis=-1), lambda a, b: torch.stack([a, b], -1))
case("split", [(2, 5)], lambda x: x.split(2, dim=1), lambda x: x.split(2, dim=1))
case("split", [(2, 5)], lambda x: x.split([1, 4], axis=-1), lambda x: x.split([1, 4], -1))
case("chunk", [(4, 3)], lambda x: x.chunk(2, dim=0), lambda x: x.chunk(2, dim=0))
case("chunk", [(4, 3)], lambda x: x.chunk(3, axis=1), lambda x: x.chunk(3, 1))
# shapes
case("squeeze", [(2, 1, 3)], lambda x: x.squeeze(dim=1), lambda x: x.squeeze(dim=1))
case("squeeze", [(2, 1, 3)], lambda x: x.squeeze(axis=-2), lambda x: x.squeeze(-2))
case("unsqueeze", [(2, 3)], lambda x: x.unsqueeze(dim=-1), lambda x: x.unsqueeze(dim=-1))
case("unsqueeze", [(2, 3)], lambda x: x.unsqueeze(axis=0), lambda x: x.unsqueeze(0))
case("flatten", [(2, 3, 4)], lambda x: x.flatten(start_dim=1), lambda x: x.flatten(start_dim=1))
case("flatten", [(2, 3, 4)], lambda x: x.flatten(start_dim=0, end_dim=1), lambda x: x.flatten(0, 1))
case("transpose", [(2, 3, 4)], lambda x: x.transpose(dim0=0, dim1=2), lambda x: x.transpose(dim0=0, dim1=2))
case("T", [(2, 3)], lambda x: x.T, lambda x: x.T)
case("mT", [(2, 3, 4)], lambda x: x.mT, lambda x: x.mT)
# selection
case("gather", [(2, 3)], lambda x: x.gather(dim=1, index=Tensor(IDX)), lambda x: x.gather(1, torch.tensor(IDX)))
case("gather", [(2, 3)], lambda x: x.gather(1, IDX), lambda x: x.gather(dim=1, index=torch.tensor(IDX)))
case("gather", [(3, 3)], lambda x: x.gather(axis=0, index=IDX), lambda x: x.gather(0, torch.tensor(IDX)))
case("scatter", [(2, 4), (2, 1)], lambda x, s: x.scatter(dim=1, index=Tensor(IDX[:, :1]), src=s),
     lambda x, s: x.scatter(1, torch.tensor(IDX[:, :1]), s))
case("scatter_add", [(2, 4), (2, 3)], lambda x, s: x.scatter_add(axis=1, index=IDX, src=s),
     lambda x, s: x.scatter_add(1, torch.tensor(IDX), s))
case("index_select", [(3, 4)], lambda x: x.index_select(dim=1, index=Tensor([3, 0, 3])),
     lambda x: x.index_select(1, torch.tensor([3, 0, 3])))
case("sort", [(3, 4)], lambda x: x.sort(dim=0), lambda x: x.sort(dim=0), kind="distinct")
case("sort", [(3, 4)], lambda x: x.sort(axis=-1, descending=True), lambda x: x.sort(-1, descending=True),
     kind="distinct")
case("topk", [(3, 4)], lambda x: x.topk(2, dim=0), lambda x: x.topk(2, dim=0), kind="distinct")
case("topk", [(3, 4)], lambda x: x.topk(3, axis=1, largest=False), lambda x: x.topk(3, 1, largest=False),
     kind="distinct")
case("repeat_interleave", [(2, 3)], lambda x: x.repeat_interleave(2, axis=1), lambda x: x.repeat_interleave(2, 1))
case("roll", [(2, 3)], lambda x: x.roll(1, dims=1), lambda x: x.roll(1, dims=1))
case("unflatten", [(2, 6)], lambda x: x.unflatten(dim=1, sizes=(2, 3)), lambda x: x.unflatten(1, (2, 3)))


@pytest.mark.parametrize("shapes, ours, theirs, kind", CASES)
def test_every_spelling_matches_pytorch_values_and_gradients(shapes, ours, theirs, kind):
    arrays = arrays_for(shapes, kind)
    xs = [Tensor(a.copy(), requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    got, want = as_list(ours(*xs)), as_list(theirs(*ts))
    assert len(got) == len(want)
    rng = np.random.default_rng(1)
    loss_ours, loss_theirs = 0, 0
    for g, w in zip(got, want):
        assert isinstance(g, Tensor)
        assert g.shape == tuple(w.shape)
        assert g.dtype.kind == {True: "f", False: "b" if w.dtype == torch.bool else "i"}[w.dtype.is_floating_point]
        np.testing.assert_allclose(g.numpy(), w.detach().numpy(), rtol=1e-12, atol=1e-14)
        if w.requires_grad:
            u = rng.standard_normal(g.shape)
            loss_ours = loss_ours + (g * Tensor(u)).sum()
            loss_theirs = loss_theirs + (w * torch.tensor(u)).sum()
    if isinstance(loss_theirs, int):
        return                                           # integer and boolean outputs carry no gradient
    loss_ours.backward()
    loss_theirs.backward()
    for x, t in zip(xs, ts):
        want_grad = np.zeros(x.shape) if t.grad is None else t.grad.numpy()
        got_grad = np.zeros(x.shape) if x.grad is None else x.grad.numpy()
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- one argument, two spellings: never both

BOTH = [
    ("sum", lambda x: x.sum(dim=1, axis=1)),
    ("sum-positional", lambda x: x.sum(1, dim=1)),
    ("sum-keepdim", lambda x: x.sum(1, keepdim=True, keepdims=True)),
    ("mean", lambda x: x.mean(axis=0, dim=0)),
    ("max", lambda x: x.max(1, axis=1)),
    ("max-keywords", lambda x: x.max(dim=1, axis=1)),
    ("min-keepdim", lambda x: x.min(dim=1, keepdim=True, keepdims=True)),
    ("softmax", lambda x: x.softmax(-1, axis=-1)),
    ("cat", lambda x: Tensor.cat([x, x], dim=0, axis=0)),
    ("stack", lambda x: Tensor.stack([x, x], dim=0, axis=0)),
    ("split", lambda x: x.split(1, dim=0, axis=0)),
    ("argmax", lambda x: x.argmax(dim=0, axis=0)),
    ("cumsum", lambda x: x.cumsum(0, dim=0)),
    ("var", lambda x: x.var(dim=0, axis=0)),
    ("var-correction", lambda x: x.var(0, correction=0, unbiased=True)),
    ("var-ddof", lambda x: x.var(0, correction=0, ddof=0)),
    ("squeeze", lambda x: x.squeeze(dim=0, axis=0)),
    ("gather", lambda x: x.gather(0, IDX[:1, :2], axis=0)),
    ("sort", lambda x: x.sort(dim=0, axis=0)),
]


@pytest.mark.parametrize("what, call", BOTH, ids=[b[0] for b in BOTH])
def test_both_spellings_at_once_is_a_clear_type_error(what, call):
    with pytest.raises(TypeError, match=r"not both"):
        call(Tensor.ones(2, 3))


# ---------------------------------------------------------------- max and min: a named pair with a dim

def test_max_min_with_a_dim_give_the_named_pair():
    x = Tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    values, indices = x.max(1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0] and indices.dtype == np.int64
    pair = x.min(dim=0)
    assert pair.values.tolist() == [1.0, 0.0, 2.0] and pair.indices.tolist() == [0, 1, 0]
    assert type(pair).__name__ == "max" or hasattr(pair, "_fields")
    assert isinstance(x.max(axis=1), Tensor) and x.max(axis=1).tolist() == [5.0, 7.0]
    assert isinstance(x.max(), Tensor) and x.max().item() == 7.0
    assert x.amax(1).tolist() == [5.0, 7.0] and x.amin(dim=1).tolist() == [1.0, 0.0]
    assert x.amax().item() == 7.0


def test_max_of_a_0d_tensor_with_dim_0_is_a_pair_as_in_pytorch():
    got, want = Tensor(3.0).max(0), torch.tensor(3.0).max(0)
    assert got.values.item() == want.values.item() and got.indices.item() == want.indices.item() == 0


def test_max_with_a_dim_first_index_at_ties_and_gradient_to_that_entry():
    """PyTorch's max(dim) picks the first of tied entries and routes the whole gradient there
    (amax and max(axis=) share it between the ties, as before)."""
    data = np.array([[2.0, 2.0, 1.0], [0.0, 3.0, 3.0]])
    x, t = Tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    x.max(1).values.sum().backward()
    t.max(1).values.sum().backward()
    assert x.max(1).indices.tolist() == t.max(1).indices.tolist()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
    x.grad, t.grad = None, None
    x.amax(1).sum().backward()
    t.amax(1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


# ---------------------------------------------------------------- PyTorch's attributes and methods

def test_size_dim_numel_ndimension():
    x = Tensor.zeros(2, 3, 4)
    assert x.size() == (2, 3, 4) and x.size() == torch.zeros(2, 3, 4).size()
    assert isinstance(x.size(), tuple) and x.size().numel() == 24 and x.numel() == 24
    assert x.size(1) == 3 and x.size(-1) == 4 and x.size(dim=0) == 2
    assert x.dim() == 3 and x.ndimension() == 3 and x.ndim == 3
    assert repr(x.size()) == "Size([2, 3, 4])"
    assert Tensor(1.0).size() == () and Tensor(1.0).numel() == 1
    with pytest.raises(IndexError, match=r"size: dim 3 is out of range.*\(2, 3, 4\)"):
        x.size(3)


def test_device_is_the_cpu():
    x = Tensor([1.0])
    assert str(x.device) == "cpu" and repr(x.device) == "device(type='cpu')"
    assert x.device == "cpu" and x.device.type == "cpu" and x.device == Tensor([2]).device
    assert x.cpu() is x and x.to("cpu") is x and x.to(x.device) is x


def test_to_and_type():
    x = Tensor([1.5, -2.5])
    assert x.to(np.float64).dtype == np.float64 and x.to(dtype=np.float64).dtype == np.float64
    assert x.to("cpu", np.float64).dtype == np.float64
    assert x.to(Tensor([1], dtype=np.int64)).dtype == np.int64
    assert x.to(np.float32) is x
    assert x.type() == "torch.FloatTensor" and x.double().type() == "torch.DoubleTensor"
    assert Tensor([1]).type() == "torch.LongTensor"
    assert x.type(np.float64).dtype == np.float64 and x.type("torch.DoubleTensor").dtype == np.float64
    for device in ("cuda", "cuda:0", "mps"):
        with pytest.raises(RuntimeError, match=r"runs on the CPU"):
            x.to(device)
    w = Tensor([1.0, 2.0], requires_grad=True)
    y = w.to(np.float64)
    y.sum().backward()
    assert w.grad.dtype == np.float32 and w.grad.tolist() == [1.0, 1.0]


def test_leaves_grad_fn_requires_grad_():
    w = Tensor([1.0, 2.0])
    assert w.is_leaf and w.grad_fn is None and not w.requires_grad
    assert w.requires_grad_() is w and w.requires_grad and w.is_leaf
    y = w * 2
    assert not y.is_leaf and y.grad_fn is not None and "Mul" in type(y.grad_fn).__name__
    with no_grad():
        assert (w * 2).is_leaf and (w * 2).grad_fn is None
    w.requires_grad_(False)
    assert not w.requires_grad
    with pytest.raises(RuntimeError, match=r"requires_grad_: .*not a leaf"):
        y.requires_grad_(False)
    with pytest.raises(TypeError, match="floating point"):
        Tensor([1, 2]).requires_grad_()


def test_retain_grad_keeps_the_gradient_of_an_intermediate():
    data = np.array([0.5, -1.0, 2.0])
    w, tw = Tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    h, th = w.tanh(), tw.tanh()
    assert h.retain_grad() is None
    th.retain_grad()
    (h * h * 3).sum().backward()
    (th * th * 3).sum().backward()
    np.testing.assert_allclose(h.grad.numpy(), th.grad.numpy(), rtol=1e-13)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-13)
    h2 = w.tanh()
    (h2 * 2).sum().backward()
    assert h2.grad is None                                   # only when asked for
    w.retain_grad()                                          # a leaf keeps its gradient anyway
    k = w * 1.0
    k.retain_grad()
    (k * 2).sum().backward(retain_graph=True)
    (k * 2).sum().backward()
    assert k.grad.tolist() == [4.0, 4.0, 4.0]                # accumulates, like a leaf's


def test_item_tolist_numpy_T_mT():
    x = Tensor(np.arange(6.0).reshape(2, 3))
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]] and x.sum().item() == 15.0
    assert isinstance(x.numpy(), np.ndarray)
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2) and Tensor.zeros(4, 2, 3).mT.shape == (4, 3, 2)
    with pytest.raises(ValueError, match=r"mT: .*at least 2"):
        _ = Tensor.zeros(3).mT


def test_data_is_a_tensor_sharing_the_array_outside_the_graph():
    p = Tensor([1.0, 2.0], requires_grad=True)
    d = p.data
    assert isinstance(d, Tensor) and d.numpy() is p.numpy()         # shares memory ...
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf  # ... and is detached
    assert d.dtype == p.dtype and d.shape == p.shape
    y = p * 2                                                       # an intermediate's .data too
    assert y.data.numpy() is y.numpy() and not y.data.requires_grad


def test_data_sgd_lines_update_the_parameter_in_place():
    p = Tensor([1.0, 2.0], requires_grad=True)
    array = p.numpy()
    (p * p).sum().backward()                                  # grad 2p = [2, 4]
    p.data += -0.1 * p.grad                                   # the course's SGD line
    np.testing.assert_allclose(p.numpy(), [0.8, 1.6], rtol=1e-6)
    assert p.numpy() is array and p.dtype == np.float32 and p.requires_grad
    p.data -= 0.5 * p.grad.data                               # the README's
    np.testing.assert_allclose(p.numpy(), [-0.2, -0.4], rtol=1e-6)
    p.data.add_(p.grad, alpha=-0.25)                          # PyTorch's SGD: p -= 0.25 g
    np.testing.assert_allclose(p.numpy(), [-0.7, -1.4], rtol=1e-6)
    assert p.numpy() is array


def test_data_init_and_zero_lines_of_pytorch_programs():
    Tensor.manual_seed(0)
    w = Tensor.zeros(200, 100, requires_grad=True)
    w.data.normal_(0, 0.02)                                   # GPT-2's init, written into w
    assert abs(float(w.numpy().std()) - 0.02) < 0.001 and abs(float(w.numpy().mean())) < 0.001
    (w * w).sum().backward()
    assert np.abs(w.grad.numpy()).max() > 0
    w.grad.data.zero_()                                       # the old optimizers' zero_grad
    assert not w.grad.numpy().any()
    w.data.copy_(Tensor.ones(200, 100))
    w.data.fill_(3.0)
    assert (w.numpy() == 3).all() and w.requires_grad


def test_data_assignment_takes_a_tensors_or_an_arrays_values():
    p = Tensor([1.0, 2.0], requires_grad=True)
    p.data = Tensor([5.0, 6.0])                               # a Tensor's array is taken
    assert isinstance(p.numpy(), np.ndarray) and p.tolist() == [5.0, 6.0] and p.requires_grad
    p.data = np.array([7.0, 8.0], dtype=np.float32)
    assert p.tolist() == [7.0, 8.0] and p.is_leaf


def test_data_writes_are_not_recorded_and_the_gradient_stays_right():
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x                                                 # saves x for backward
    x.data.mul_(2.0)                                          # PyTorch's escape hatch: not recorded, not counted
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0, 12.0])  # 2x read after the write, as PyTorch gives


# ---------------------------------------------------------------- in-place methods, with PyTorch's rules

INPLACE = [
    ("zero_", lambda x: x.zero_()),
    ("fill_", lambda x: x.fill_(2.5)),
    ("fill_-tensor", lambda x: x.fill_(torch.tensor(1.5) if isinstance(x, torch.Tensor) else Tensor(1.5))),
    ("copy_", lambda x: x.copy_(torch.ones(3) * 4 if isinstance(x, torch.Tensor) else Tensor.ones(3) * 4)),
    ("add_", lambda x: x.add_(2.0)),
    ("add_-alpha", lambda x: x.add_(x * 1, alpha=0.5)),
    ("sub_", lambda x: x.sub_(1.5)),
    ("sub_-alpha", lambda x: x.sub_(2.0, alpha=3)),
    ("mul_", lambda x: x.mul_(-2.0)),
    ("div_", lambda x: x.div_(4.0)),
    ("clamp_", lambda x: x.clamp_(-0.5, 0.5)),
    ("clamp_-min", lambda x: x.clamp_(min=0.0)),
    ("masked_fill_", lambda x: x.masked_fill_((torch.tensor if isinstance(x, torch.Tensor) else Tensor)(
        [[True, False, True], [False, False, True]]), -1.5)),
]


@pytest.mark.parametrize("what, call", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_methods_match_pytorch_and_keep_the_same_tensor(what, call):
    data = np.array([[1.0, -2.0, 0.25], [0.75, 3.0, -1.0]], dtype=np.float32)
    x, t = Tensor(data.copy()), torch.tensor(data.copy())
    array = x.numpy()
    assert call(x) is x and x.numpy() is array                   # no grad needed: written in place
    call(t)
    np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1e-7)
    w, tw = Tensor(data.copy(), requires_grad=True), torch.tensor(data.copy(), requires_grad=True)
    with no_grad():
        assert call(w) is w and w.requires_grad
    with torch.no_grad():
        call(tw)
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-7)


@pytest.mark.parametrize("what, call", INPLACE + [("normal_", lambda x: x.normal_()),
                                                  ("uniform_", lambda x: x.uniform_())], ids=lambda c: str(c)[:12])
def test_inplace_on_a_leaf_that_requires_grad_is_pytorchs_runtime_error(what, call):
    w = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"a leaf tensor that requires grad .* in place.*no_grad"):
        call(w)
    with pytest.raises(RuntimeError, match=r"leaf Variable that requires grad"):
        call(torch.tensor([1.0, 2.0, 3.0], requires_grad=True))
    assert w.tolist() == [1.0, 2.0, 3.0]


def test_inplace_on_a_recorded_intermediate_is_recorded_as_pytorch_does():
    w = Tensor([1.0, 2.0], requires_grad=True)
    h = w * 2
    assert h.add_(1.0) is h and h.tolist() == [3.0, 5.0] and type(h.grad_fn).__name__ == "add_"
    b = Tensor.zeros(2)
    b.copy_(w)                                                # a constant receiving w: now part of the graph
    assert b.requires_grad and b.tolist() == [1.0, 2.0]
    (h * b).sum().backward()                                  # d/dw (2w + 1)·w = 4w + 1
    np.testing.assert_allclose(w.grad.numpy(), [5.0, 9.0])
    c = Tensor.zeros(2)
    with no_grad():
        c.copy_(w)
    assert c.tolist() == [1.0, 2.0] and not c.requires_grad


def test_inplace_shape_and_dtype_rules():
    x = Tensor.zeros(2, 3)
    x.copy_(Tensor([1.0, 2.0, 3.0]))                          # src broadcasts, as in PyTorch
    assert x.tolist() == [[1, 2, 3], [1, 2, 3]]
    with pytest.raises(RuntimeError, match=r"copy_: .*\(4,\).*\(2, 3\)"):
        x.copy_(Tensor.ones(4))
    i = Tensor([1, 2, 3])
    i.copy_(Tensor([1.7, -2.7, 3.2]))                         # copy_ converts, truncating toward 0 like PyTorch
    assert i.tolist() == torch.tensor([1, 2, 3]).copy_(torch.tensor([1.7, -2.7, 3.2])).tolist()
    i.fill_(7)
    assert i.tolist() == [7, 7, 7] and i.dtype == np.int64


def test_random_inplace_methods_draw_from_the_library_generator_or_the_one_given():
    Tensor.manual_seed(0)
    a = Tensor.zeros(1000).normal_(2.0, 0.5)
    Tensor.manual_seed(0)
    b = Tensor.zeros(1000).normal_(mean=2.0, std=0.5)
    assert a.tolist() == b.tolist()
    assert abs(a.numpy().mean() - 2.0) < 0.1 and abs(a.numpy().std() - 0.5) < 0.05 and a.dtype == np.float32
    u = Tensor.zeros(1000, dtype=np.float64).uniform_(-3, -1)
    assert u.dtype == np.float64 and -3 <= u.numpy().min() and u.numpy().max() < -1
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    Tensor.manual_seed(1)
    c = Tensor.zeros(4).uniform_(generator=g1)
    Tensor.manual_seed(2)
    d = Tensor.zeros(4).uniform_(generator=g2)
    assert c.tolist() == d.tolist()                            # the generator decides, not the global seed
    with no_grad():
        w = Tensor.zeros(3, requires_grad=True).normal_()
    assert w.requires_grad and np.isfinite(w.numpy()).all()


# ---------------------------------------------------------------- PyTorch's exception types

DIM_ERRORS = [
    ("sum", lambda: Tensor.zeros(2, 3).sum(dim=2)),
    ("sum-axis", lambda: Tensor.zeros(2, 3).sum(axis=-3)),
    ("max", lambda: Tensor.zeros(2, 3).max(dim=2)),
    ("softmax", lambda: Tensor.zeros(2, 3).softmax(dim=2)),
    ("argmax", lambda: Tensor.zeros(2, 3).argmax(dim=5)),
    ("cumsum", lambda: Tensor.zeros(2, 3).cumsum(dim=2)),
    ("squeeze", lambda: Tensor.zeros(2, 1).squeeze(-3)),
    ("unsqueeze", lambda: Tensor.zeros(2, 3).unsqueeze(3)),
    ("flatten", lambda: Tensor.zeros(2, 3).flatten(2)),
    ("transpose", lambda: Tensor.zeros(2, 3).transpose(0, 2)),
    ("cat", lambda: Tensor.cat([Tensor.zeros(2, 3)] * 2, dim=2)),
    ("gather", lambda: Tensor.zeros(2, 3).gather(2, IDX)),
    ("sort", lambda: Tensor.zeros(2, 3).sort(dim=-3)),
    ("size", lambda: Tensor.zeros(2, 3).size(2)),
]


@pytest.mark.parametrize("what, call", DIM_ERRORS, ids=[e[0] for e in DIM_ERRORS])
def test_a_dim_out_of_range_is_an_index_error_and_still_a_value_error(what, call):
    with pytest.raises(IndexError, match=r"out of range.*\(2, [13]\)") as info:
        call()
    assert isinstance(info.value, ValueError)                  # today's `except ValueError` keeps working


SHAPE_ERRORS = [
    ("add", lambda: Tensor.zeros(2, 3) + Tensor.zeros(4)),
    ("matmul", lambda: Tensor.zeros(2, 3) @ Tensor.zeros(2, 3)),
    ("cat", lambda: Tensor.cat([Tensor.zeros(2, 3), Tensor.zeros(3, 3)], dim=1)),
    ("stack", lambda: Tensor.stack([Tensor.zeros(2, 3), Tensor.zeros(3, 2)])),
    ("reshape", lambda: Tensor.zeros(2, 3).view(5)),
    ("expand", lambda: Tensor.zeros(2, 3).expand(4, 3)),
    ("where", lambda: Tensor([True, False]).where(Tensor.zeros(3), 0.0)),
    ("linear", lambda: Tensor.zeros(2, 3).linear(Tensor.zeros(4, 5))),
    ("attention", lambda: Tensor.zeros(4, 8).scaled_dot_product_attention(Tensor.zeros(4, 6), Tensor.zeros(4, 8))),
]


@pytest.mark.parametrize("what, call", SHAPE_ERRORS, ids=[e[0] for e in SHAPE_ERRORS])
def test_a_shape_mismatch_is_a_runtime_error_and_still_a_value_error(what, call):
    with pytest.raises(RuntimeError, match=what) as info:
        call()
    assert isinstance(info.value, ValueError)


def test_pytorch_raises_the_same_types_for_the_same_mistakes():
    """The mapping above is PyTorch's: checked on PyTorch itself, so it cannot drift."""
    with pytest.raises(IndexError):
        torch.zeros(2, 3).sum(dim=2)
    with pytest.raises(RuntimeError):
        torch.zeros(2, 3) + torch.zeros(4)
    with pytest.raises(RuntimeError):
        torch.zeros(2, 3).view(5)


# ---------------------------------------------------------------- gelu, attention with GQA, tinygrad's losses

def test_gelu_both_forms_match_pytorch_and_the_default_stays_tanh():
    data = np.linspace(-4, 4, 41)
    for approximate in ("none", "tanh"):
        x, t = Tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        x.gelu(approximate=approximate).sum().backward()
        torch.nn.functional.gelu(t, approximate=approximate).sum().backward()
        np.testing.assert_allclose(x.gelu(approximate=approximate).numpy(),
                                   torch.nn.functional.gelu(t, approximate=approximate).detach().numpy(),
                                   rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-15)
    x = Tensor(data)
    np.testing.assert_array_equal(x.gelu().numpy(), x.gelu(approximate="tanh").numpy())
    with pytest.raises(ValueError, match=r"gelu: approximate must be 'none' or 'tanh', got 'erf'"):
        x.gelu(approximate="erf")


def test_erf_and_exact_gelu_pass_gradcheck_in_float64():
    x = Tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda a: a.erf(), x) and gradgradcheck(lambda a: a.erf(), x)
    assert gradcheck(lambda a: a.gelu(approximate="none"), x)
    assert gradgradcheck(lambda a: a.gelu(approximate="none"), x)


@pytest.mark.parametrize("is_causal", [False, True])
def test_attention_with_grouped_query_heads_matches_pytorch(is_causal):
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((2, 4, 5, 3)), rng.standard_normal((2, 2, 5, 3)), rng.standard_normal((2, 2, 5, 3))
    ours = [Tensor(a, requires_grad=True) for a in (q, k, v)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    out = ours[0].scaled_dot_product_attention(ours[1], ours[2], is_causal=is_causal, enable_gqa=True)
    want = torch.nn.functional.scaled_dot_product_attention(*theirs, is_causal=is_causal, enable_gqa=True)
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-14)
    out.sum().backward()
    want.sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-11, atol=1e-13)
    with pytest.raises(RuntimeError, match=r"scaled_dot_product_attention: .*enable_gqa"):
        Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v))


@pytest.mark.parametrize("shape, target_shape", [((4, 5), (4,)), ((2, 5, 3), (2, 3))])
def test_tinygrads_cross_entropy_and_nll_loss_on_the_tensor(shape, target_shape):
    rng = np.random.default_rng(0)
    logits, target = rng.standard_normal(shape), rng.integers(0, shape[1], target_shape)
    x, t = Tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    F = torch.nn.functional
    for reduction in ("mean", "sum", "none"):
        np.testing.assert_allclose(x.cross_entropy(target, reduction=reduction).numpy(),
                                   F.cross_entropy(t, torch.tensor(target), reduction=reduction).detach().numpy(),
                                   rtol=1e-12)
    np.testing.assert_allclose(x.cross_entropy(Tensor(target), label_smoothing=0.1).numpy(),
                               F.cross_entropy(t, torch.tensor(target), label_smoothing=0.1).detach().numpy(),
                               rtol=1e-12)
    x.log_softmax(dim=1).nll_loss(target).backward()
    F.nll_loss(t.log_softmax(dim=1), torch.tensor(target)).backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-15)
    probs = rng.dirichlet(np.ones(shape[1]), size=shape[:1] + shape[2:])       # class probabilities
    probs = np.moveaxis(probs, -1, 1)
    np.testing.assert_allclose(Tensor(logits).cross_entropy(Tensor(probs)).numpy(),
                               F.cross_entropy(torch.tensor(logits), torch.tensor(probs)).numpy(), rtol=1e-12)


# ---------------------------------------------------------------- dtypes and the gradients of powers at 0

FLOAT_OPS = ["exp", "log", "sqrt", "cos", "sin", "tanh", "sigmoid", "erf", "log1p", "rsqrt", "log2", "exp2"]


@pytest.mark.parametrize("op", FLOAT_OPS)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, bool])
def test_float_ops_of_an_integer_tensor_give_float32(op, dtype):
    data = np.array([1, 2, 3, 0]).astype(dtype)
    with np.errstate(divide="ignore"):                     # log 0 = -inf and 1/√0 = inf, in PyTorch too
        got = getattr(Tensor(data), op)()
    want = getattr(torch.tensor(data), op)()
    assert got.dtype == np.float32 and want.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_gelu_softmax_of_integers_are_float32_too():
    x = Tensor([1, 2, 3])
    assert x.gelu().dtype == np.float32 and x.silu().dtype == np.float32
    assert x.softmax(dim=0).dtype == np.float32 and x.log_softmax(0).dtype == np.float32


# ---------------------------------------------------------------- the new ops, gradchecked in float64

NEW_OPS = [
    ("prod", lambda a: a.prod(dim=1)),
    ("prod-all", lambda a: a.prod()),
    ("prod-keepdim", lambda a: a.prod(0, keepdim=True)),
    ("max-pair", lambda a: a.max(dim=1).values),
    ("min-pair", lambda a: a.min(0, keepdim=True).values),
    ("amax", lambda a: a.amax(dim=(0, 1))),
    ("gelu-exact", lambda a: a.gelu(approximate="none")),
]


@pytest.mark.parametrize("what, fn", NEW_OPS, ids=[c[0] for c in NEW_OPS])
def test_new_ops_pass_gradcheck_and_gradgradcheck(what, fn):
    data = arrays_for([(3, 5)], "distinct")[0]
    data[1, 2] = 0.0                                          # prod's gradient must stay right at a zero
    x = Tensor(data, requires_grad=True)
    assert gradcheck(fn, x) and gradgradcheck(fn, x)


def test_prod_with_two_zeros_and_an_empty_axis_match_pytorch():
    data = np.array([[0.0, 2.0, 0.0, 3.0], [1.5, -2.0, 0.5, 4.0]])
    x, t = Tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    x.prod(1).sum().backward()
    t.prod(1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
    assert Tensor.zeros(2, 0).prod(dim=1).tolist() == torch.zeros(2, 0).prod(dim=1).tolist() == [1.0, 1.0]


# x[index] = value: PyTorch's `losses[k] = loss.item()`, with the in-place rules
SETITEM_CASES = [
    ("int then slice then tensor index", lambda lib, x: (x.__setitem__(2, 3.5), x.__setitem__(slice(0, 2), 1.25),
                                                         x.__setitem__(lib.tensor([4]), 7.0))),
    ("row of a matrix from a tensor", lambda lib, x: x.reshape(5, 1).__setitem__((slice(None), 0), x * 0 + 2)),
    ("boolean mask", lambda lib, x: x.__setitem__(x > 0.5, -1.0)),
]


@pytest.mark.parametrize("name, write", SETITEM_CASES, ids=[c[0] for c in SETITEM_CASES])
def test_setitem_writes_what_pytorch_writes(name, write):
    torch = pytest.importorskip("torch")
    import tinygrad_like.torch as tt
    start = np.array([0.1, 0.9, 0.3, 0.7, 0.6])
    results = []
    for lib in (torch, tt):
        x = lib.tensor(start.copy())
        with lib.no_grad():
            write(lib, x)
        results.append(np.asarray(x.tolist()))
    np.testing.assert_array_equal(results[1], results[0])


def test_setitem_converts_to_the_tensors_dtype_and_keeps_the_in_place_rules():
    ids = Tensor(np.zeros(3, np.int64))
    ids[1] = 2.7                                       # truncated toward 0, as PyTorch does
    assert ids.numpy().tolist() == [0, 2, 0] and ids.dtype == np.int64
    w = Tensor(np.ones(3), requires_grad=True)
    with pytest.raises(RuntimeError, match="setitem: a leaf tensor that requires grad"):
        w[0] = 5.0
    with no_grad():
        w[0] = 5.0
    assert w.numpy().tolist() == [5.0, 1.0, 1.0]
    with pytest.raises(ValueError, match=r"value of shape \(4,\) does not fit x\[index\] of shape \(3,\)"):
        Tensor(np.zeros((2, 3)))[0] = np.ones(4)
    with pytest.raises(IndexError, match=r"setitem: index 5 is out of bounds.*tensor shape \(2, 3\)"):
        Tensor(np.zeros((2, 3)))[5] = 1.0
