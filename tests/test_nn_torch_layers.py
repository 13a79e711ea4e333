"""The layers and Module methods nn/ gained for PyTorch code (issue 18): containers named by index,
activation modules, BatchNorm1d, losses, init schemes, schedulers and zero_grad(set_to_none=).

Float64 gradchecks for every new layer; BatchNorm's numbers against a numpy reference written here
and against PyTorch (skipped without it); schedulers against their closed forms.
"""
import math

import numpy as np
import pytest

import nn
from nn import init
from nn.lr_scheduler import CosineAnnealingLR, LambdaLR, StepLR
from nn.optim import SGD
from tinygrad_like import Tensor, gradcheck


def randn(*shape, seed=0, requires_grad=False):
    return Tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=requires_grad)


def randomize(layer, seed=1):
    rng = np.random.default_rng(seed)
    for _, p in layer.named_parameters():
        p.data[...] = rng.normal(0, 0.5, p.shape)
    return layer


# ---------------------------------------------------------------- containers

def test_sequential_names_children_by_index_and_runs_them_in_order():
    net = nn.Sequential(nn.Linear(3, 4, dtype="float64"), nn.Tanh(), nn.Linear(4, 2, dtype="float64"))
    assert [n for n, _ in net.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    x = randn(5, 3)
    (w0, b0), (w2, b2) = ((net[i].weight.numpy(), net[i].bias.numpy()) for i in (0, 2))
    expected = np.tanh(x.numpy() @ w0.T + b0) @ w2.T + b2
    np.testing.assert_allclose(net(x).numpy(), expected, rtol=1e-12)
    assert len(net) == 3 and isinstance(net[1], nn.Tanh) and len(net[:2]) == 2 and list(net)[2] is net[2]


def test_modulelist_and_moduledict_name_their_entries_like_pytorch():
    class Holder(nn.Module):
        def __init__(self):
            self.heads = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])
            self.parts = nn.ModuleDict({"a": nn.Linear(2, 1)})
            self.net = nn.Sequential(nn.ReLU(), nn.Linear(2, 3))
    names = [n for n, _ in Holder().named_parameters()]
    assert names == ["heads.0.weight", "heads.0.bias", "heads.1.weight", "heads.1.bias", "parts.a.weight",
                     "parts.a.bias", "net.1.weight", "net.1.bias"]
    d = nn.ModuleDict(a=nn.ReLU())
    d["b"] = nn.Tanh()
    assert d.keys() == ["a", "b"] and "b" in d and len(d) == 2 and isinstance(d["b"], nn.Tanh)
    with pytest.raises(KeyError, match="no layer named 'c'"):
        d["c"]
    with pytest.raises(TypeError, match="must be a Module"):
        nn.ModuleList([nn.ReLU(), 3])
    with pytest.raises(IndexError, match="out of range"):
        nn.ModuleList([nn.ReLU()])[1]


def test_containers_gradcheck():
    net = randomize(nn.Sequential(nn.Linear(3, 4, dtype="float64"), nn.GELU(), nn.Linear(4, 2, dtype="float64"),
                                  nn.SiLU(), nn.Flatten(0), nn.Identity()))
    assert gradcheck(lambda x, *ps: net(x), randn(2, 3, requires_grad=True), *net.parameters())


# ---------------------------------------------------------------- activations

@pytest.mark.parametrize("layer, reference", [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.GELU(), lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    (nn.GELU("tanh"), lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    (nn.Softmax(dim=0), lambda x: np.exp(x) / np.exp(x).sum(0)),
    (nn.LogSoftmax(dim=-1), lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
    (nn.Flatten(), lambda x: x.reshape(x.shape[0], -1)),
    (nn.Identity(7, foo=1), lambda x: x),
])
def test_activation_values_and_gradcheck(layer, reference):
    x = randn(3, 2, 2, seed=3, requires_grad=True)
    np.testing.assert_allclose(layer(x).numpy(), reference(x.numpy()), rtol=1e-12, atol=1e-14)
    assert gradcheck(lambda x: layer(x), x)


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        nn.GELU("fast")


# ---------------------------------------------------------------- BatchNorm1d

def np_batchnorm(x, w, b, axes, eps=1e-5):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    shape = (-1,) if x.ndim == 2 else (-1, 1)
    return (x - mean) / np.sqrt(var + eps) * w.reshape(shape) + b.reshape(shape)


@pytest.mark.parametrize("shape, axes", [((6, 4), (0,)), ((5, 4, 3), (0, 2))])
def test_batchnorm_train_values_running_stats_and_gradcheck(shape, axes):
    bn = randomize(nn.BatchNorm1d(4, dtype="float64"))
    x = randn(*shape, seed=2, requires_grad=True)
    expected = np_batchnorm(x.numpy(), bn.weight.numpy(), bn.bias.numpy(), axes)
    np.testing.assert_allclose(bn(x).numpy(), expected, rtol=1e-12)
    n = x.numel() // 4
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * x.numpy().mean(axis=axes), rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * x.numpy().var(axis=axes) * n / (n - 1), rtol=1e-12)
    assert int(bn.num_batches_tracked.numpy()) == 1
    assert gradcheck(lambda x, *ps: bn(x), x, *bn.parameters())


def test_batchnorm_eval_uses_running_stats_and_one_example_works():
    bn = nn.BatchNorm1d(3, dtype="float64")
    bn.running_mean.data[...] = [1.0, 2.0, 3.0]
    bn.running_var.data[...] = [4.0, 1.0, 0.25]
    bn.eval()
    x = randn(1, 3, requires_grad=True)
    expected = (x.numpy() - [1, 2, 3]) / np.sqrt(np.array([4, 1, 0.25]) + 1e-5)
    np.testing.assert_allclose(bn(x).numpy(), expected, rtol=1e-12)
    assert gradcheck(lambda x, *ps: bn(x), x, *bn.parameters())
    bn.train()
    with pytest.raises(ValueError, match="more than 1 value per feature"):
        bn(x)
    with pytest.raises(ValueError, match=r"must be \(N, 3\)"):
        bn(randn(2, 4))


def test_batchnorm_state_dict_holds_buffers_and_momentum_none_averages():
    bn = nn.BatchNorm1d(2, momentum=None, dtype="float64")
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    a, b = randn(4, 2, seed=5), randn(4, 2, seed=6)
    bn(a)
    bn(b)
    np.testing.assert_allclose(bn.running_mean.numpy(), (a.numpy().mean(0) + b.numpy().mean(0)) / 2, rtol=1e-12)


def test_batchnorm_matches_pytorch_forward_backward_and_running_stats():
    torch = pytest.importorskip("torch")
    ours, theirs = randomize(nn.BatchNorm1d(4, dtype="float64")), torch.nn.BatchNorm1d(4).double()
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((7, 4))
    xo, xt = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    for _ in range(2):
        yo, yt = ours(xo), theirs(xt)
    (yo * yo).sum().backward()
    (yt * yt).sum().backward()
    np.testing.assert_allclose(yo.numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key], value.numpy(), rtol=1e-12)


# ---------------------------------------------------------------- losses, Module methods

def test_loss_modules_equal_the_functions():
    from tinygrad_like import functional as F
    logits, y = randn(4, 5), np.array([0, 4, 2, 2])
    assert nn.CrossEntropyLoss(label_smoothing=0.1)(logits, y).item() == F.cross_entropy(logits, y,
                                                                                         label_smoothing=0.1).item()
    a, b = randn(3, 2, seed=1), randn(3, 2, seed=2)
    assert nn.MSELoss(reduction="sum")(a, b).item() == pytest.approx(((a.numpy() - b.numpy()) ** 2).sum(), rel=1e-12)


def test_register_buffer_apply_modules_children_to():
    class Net(nn.Module):
        def __init__(self):
            self.lin = nn.Linear(2, 2)
            self.register_buffer("mask", Tensor(np.tril(np.ones((2, 2), np.float32))))
            self.register_buffer("scratch", Tensor(np.zeros(2, np.float32)), persistent=False)
    net = Net()
    assert [n for n, _ in net.named_buffers()] == ["mask", "scratch"]
    assert list(net.state_dict()) == ["lin.weight", "lin.bias", "mask"]
    assert [type(m).__name__ for m in net.modules()] == ["Net", "Linear"] and list(net.children()) == [net.lin]
    assert [n for n, _ in net.named_children()] == ["lin"]
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "Net"]                    # children first, as in PyTorch
    weight = net.lin.weight
    net.to(np.float64)
    assert net.lin.weight is weight and weight.dtype == np.float64 and net.mask.dtype == np.float64
    net.to("cpu")
    with pytest.raises(RuntimeError, match="runs on the CPU"):
        net.to("cuda")
    with pytest.raises(KeyError, match="missing keys"):
        net.load_state_dict({"lin.weight": np.zeros((2, 2))})
    net.register_parameter("extra", Tensor(np.ones(2), requires_grad=True))
    assert "extra" in dict(net.named_parameters())
    with pytest.raises(TypeError, match="register_parameter"):
        net.register_parameter("bad", Tensor(np.ones(2)))


def test_zero_grad_set_to_none_false_keeps_zeros():
    lin = nn.Linear(2, 2)
    lin(Tensor(np.ones((1, 2), np.float32))).sum().backward()
    opt = SGD(lin.parameters(), lr=0.1)
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in lin.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in lin.parameters())
    lin(Tensor(np.ones((1, 2), np.float32))).sum().backward()
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad.numpy().shape == (2, 2) and not lin.weight.grad.numpy().any()


# ---------------------------------------------------------------- init and schedulers

def test_init_schemes_have_their_bounds_and_spreads():
    w = Tensor(np.zeros((400, 300)))
    bound = math.sqrt(6 / 700)
    init.xavier_uniform_(w)
    assert np.abs(w.numpy()).max() <= bound and np.abs(w.numpy()).max() > 0.99 * bound
    init.kaiming_normal_(w, nonlinearity="relu")
    assert w.numpy().std() == pytest.approx(math.sqrt(2 / 300), rel=0.02)
    init.trunc_normal_(w, std=1.0, a=-0.5, b=0.5)
    assert np.abs(w.numpy()).max() <= 0.5
    init.constant_(w, 3.0)
    assert (w.numpy() == 3).all()
    assert init.calculate_gain("tanh") == 5 / 3


def _lrs(make, steps=6):
    p = Tensor(np.zeros(1), requires_grad=True)
    opt = SGD([p], lr=0.5)
    sched = make(opt)
    out = [opt.param_groups[0]["lr"]]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr()[0])
    return out


def test_schedulers_follow_their_formulas():
    assert _lrs(lambda o: LambdaLR(o, lambda e: 1 / (e + 1))) == pytest.approx([0.5 / (e + 1) for e in range(7)])
    assert _lrs(lambda o: StepLR(o, step_size=2, gamma=0.5)) == pytest.approx([0.5, 0.5, 0.25, 0.25, .125, .125, .0625])
    expected = [0.1 + 0.2 * (1 + math.cos(math.pi * e / 4)) for e in range(7)]
    assert _lrs(lambda o: CosineAnnealingLR(o, T_max=4, eta_min=0.1)) == pytest.approx(expected)
