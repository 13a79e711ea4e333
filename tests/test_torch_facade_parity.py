"""tinygrad_like.torch against real PyTorch, name by name: forward values, gradients, the dim= and in-place
forms, layers, optimizers, schedulers and the data loader; and three whole models (makemore's MLP with
BatchNorm, the course's GPT, micrograd's MLP) whose loss and every gradient must equal PyTorch's from the
same weights (1e-6 relative in float32, 1e-12 in float64), plus 200 AdamW steps in float64 (1e-9)."""
import math
import pathlib
import sys

import numpy as np
import pytest

real = pytest.importorskip("torch")
real.set_num_threads(1)  # these models are tiny: PyTorch's threads only fight the other tests for the cores

import tinygrad_like.torch as torch  # noqa: E402
from tinygrad_like.torch import _functions  # noqa: E402
from tinygrad_like.torch._array_functions import ARRAY_FUNCTIONS  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import torch_parity  # noqa: E402
from torch_parity import rel  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.uniform(0.5, 2.0, (3, 4))            # positive: log, sqrt, rsqrt, pow stay defined
Y = RNG.standard_normal((3, 4))
MASK = (RNG.uniform(size=(5, 5)) > 0.5) | np.eye(5, dtype=bool)  # every query sees at least itself
IDX = np.array([[0, 2, 1, 3], [3, 3, 0, 1], [1, 0, 2, 2]])


def both(value):
    """(ours, theirs) of an argument: numpy arrays become tensors of each framework."""
    if isinstance(value, np.ndarray):
        return torch.tensor(value), real.tensor(value)
    return value, value


def leaves(fw_ours, fw_theirs):
    xo = torch.tensor(X, requires_grad=True)
    xt = real.tensor(X, requires_grad=True)
    return xo, xt


def flat(out):
    """A result as a list of numpy arrays (tuples and named pairs opened)."""
    if isinstance(out, (tuple, list)):
        return [a for o in out for a in flat(o)]
    if hasattr(out, "detach"):
        out = out.detach()
    return [np.asarray(out.numpy() if hasattr(out, "numpy") else out)]


def differentiable(out):
    return [o for o in (out if isinstance(out, (tuple, list)) else [out])
            if getattr(o, "requires_grad", False) and o.dtype in (real.float64, np.float64)]


# name, args, kwargs (X is the first argument)
FUNCTION_CASES = [
    ("abs", (), {}), ("exp", (), {}), ("exp2", (), {}), ("log", (), {}), ("log1p", (), {}), ("log2", (), {}),
    ("sqrt", (), {}), ("rsqrt", (), {}), ("square", (), {}), ("sin", (), {}), ("cos", (), {}), ("tanh", (), {}),
    ("sigmoid", (), {}), ("relu", (), {}), ("erf", (), {}), ("sign", (), {}), ("floor", (), {}), ("ceil", (), {}),
    ("round", (), {}), ("clamp", (0.7, 1.5), {}), ("clip", (), {"min": 0.8}), ("pow", (2.5,), {}),
    ("maximum", (Y,), {}), ("minimum", (Y,), {}), ("lerp", (Y, 0.3), {}),
    ("sum", (), {}), ("sum", (), {"dim": 1}), ("sum", (), {"dim": 0, "keepdim": True}), ("mean", (), {"dim": -1}),
    ("prod", (), {"dim": 1}), ("std", (), {"dim": 0}), ("var", (), {"dim": 1, "keepdim": True}),
    ("std_mean", (), {"dim": 1}), ("var_mean", (), {"dim": 0}), ("max", (), {}), ("max", (), {"dim": 1}),
    ("min", (1,), {}), ("max", (Y,), {}), ("amax", (), {"dim": 0}), ("amin", (), {"dim": 1}),
    ("argmax", (), {"dim": 1}), ("argmin", (), {}), ("logsumexp", (), {"dim": 1}), ("cumsum", (), {"dim": 1}),
    ("cumprod", (), {"dim": 0}), ("norm", (), {}), ("norm", (), {"dim": 1}), ("all", (), {}), ("any", (), {}),
    ("softmax", (), {"dim": -1}), ("log_softmax", (), {"dim": 0}), ("matmul", (Y.T,), {}),
    ("dot", (), {}), ("reshape", ((4, 3),), {}), ("flatten", (), {}), ("unflatten", (1, (2, 2)), {}),
    ("transpose", (0, 1), {}), ("permute", ((1, 0),), {}), ("squeeze", (), {}), ("unsqueeze", (1,), {}),
    ("flip", ((0,),), {}), ("roll", (1, 1), {}), ("chunk", (2,), {"dim": 1}), ("split", (2,), {"dim": 1}),
    ("gather", (1, IDX), {}), ("scatter", (1, IDX[:, :2], Y[:, :2]), {}), ("scatter_add", (1, IDX, Y), {}),
    ("index_select", (1, np.array([0, 2])), {}), ("masked_select", (Y > 0,), {}),
    ("masked_fill", (Y > 0, -1.0), {}), ("sort", (), {"dim": 1}), ("topk", (2,), {"dim": 1}),
    ("nonzero", (), {}), ("isclose", (X + 1e-9,), {}), ("allclose", (X + 1e-9,), {}), ("clone", (), {}),
    ("detach", (), {}), ("repeat_interleave", (2,), {"dim": 0}), ("cat", (), {"dim": 1}), ("concat", (), {}),
    ("concatenate", (), {"dim": 0}), ("stack", (), {"dim": 1}), ("where", (X, Y), {}), ("tril", (), {}),
    ("triu", (1,), {}), ("bmm", (Y.T.reshape(1, 4, 3),), {}), ("outer", (Y[1],), {}), ("ger", (Y[2],), {}),
]
SPECIAL_INPUT = {"dot": lambda x: x[0], "one_hot": None, "squeeze": lambda x: x.reshape(1, 3, 4),
                 "cat": lambda x: [x, x * 2], "concat": lambda x: [x, x], "concatenate": lambda x: [x, x],
                 "stack": lambda x: [x, x + 1], "where": lambda x: x > 1, "bmm": lambda x: x.reshape(1, 3, 4),
                 "outer": lambda x: x[0], "ger": lambda x: x[1]}


def test_every_function_of_the_facade_has_a_case():
    # one_hot below; einsum and the thread and print settings in tests/test_torch_programs.py
    covered = {name for name, _, _ in FUNCTION_CASES} | {"one_hot", "einsum", "set_num_threads", "get_num_threads",
                                                         "set_printoptions"}
    covered |= set(_functions.ELEMENTWISE_FUNCTIONS)      # each called in tests/test_torch_elementwise_surface.py
    covered |= set(ARRAY_FUNCTIONS)                       # each called in tests/test_arrays_torch.py
    assert set(_functions.FUNCTIONS) - covered == set()


@pytest.mark.parametrize("name, args, kwargs", FUNCTION_CASES,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(FUNCTION_CASES)])
def test_function_forward_and_gradient_match_pytorch(name, args, kwargs):
    results, grads = [], []
    for fw, index in ((torch, 0), (real, 1)):
        x = fw.tensor(X, requires_grad=True)
        first = SPECIAL_INPUT.get(name, lambda v: v)(x)
        if name == "dot":
            call_args = (first, fw.tensor(Y[0]))
        else:
            call_args = (first, *(both(a)[index] for a in args))
        out = getattr(fw, name)(*call_args, **kwargs)
        results.append(flat(out))
        outs = differentiable(out)
        if outs:
            total = sum((o * fw.tensor(np.cos(np.arange(o.numel()).reshape(tuple(o.shape))))).sum() for o in outs)
            total.backward()
            grads.append(x.grad.numpy() if x.grad is not None else None)
    assert len(results[0]) == len(results[1])
    for ours, theirs in zip(*results):
        assert ours.shape == theirs.shape and ours.dtype.kind == theirs.dtype.kind, (ours, theirs)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
    if len(grads) == 2:
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-13)


def test_one_hot_and_creation_functions_match_pytorch():
    np.testing.assert_array_equal(torch.nn.functional.one_hot(torch.tensor([0, 2]), 3).numpy(),
                                  real.nn.functional.one_hot(real.tensor([0, 2]), 3).numpy())
    for name, args, kwargs in [("zeros", (2, 3), {}), ("ones", ((2,),), {"dtype": "float64"}), ("full", ((2,), 7), {}),
                               ("arange", (1, 7, 2), {}), ("arange", (0.0, 1.0, 0.25), {}),
                               ("linspace", (0, 1, 5), {}), ("eye", (3, 2), {}), ("tensor", ([[1, 2]],), {}),
                               ("as_tensor", ([1.5],), {}), ("empty", (2,), {})]:
        theirs_kwargs = {k: getattr(real, v) if k == "dtype" else v for k, v in kwargs.items()}
        ours, theirs = getattr(torch, name)(*args, **kwargs), getattr(real, name)(*args, **theirs_kwargs)
        assert tuple(ours.shape) == tuple(theirs.shape) and ours.numpy().dtype == theirs.numpy().dtype, name
        if name != "empty":
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    x = torch.tensor(X)
    for name in ("zeros_like", "ones_like", "randn_like", "rand_like", "empty_like"):
        assert getattr(torch, name)(x).shape == tuple(getattr(real, name)(real.tensor(X)).shape)
    assert torch.full_like(x, 2).numpy().tolist() == real.full_like(real.tensor(X), 2).numpy().tolist()
    for name, args in [("randn", (2, 3)), ("rand", (2, 3)), ("randint", (5, (2, 3))), ("randperm", (4,))]:
        ours, theirs = getattr(torch, name)(*args), getattr(real, name)(*args)
        assert tuple(ours.shape) == tuple(theirs.shape) and ours.numpy().dtype == theirs.numpy().dtype, name
    assert tuple(torch.randint_like(x, 3).shape) == (3, 4) and torch.normal(0.0, 1.0, (2,)).shape == (2,)
    assert [torch.float, torch.double, torch.long, torch.int, torch.bool, torch.uint8] == \
        [np.dtype(str(d).replace("torch.", "")) for d in (real.float, real.double, real.long, real.int, real.bool,
                                                           real.uint8)]


# ---------------------------------------------------------------- the dim= and in-place forms on the Tensor

def test_dim_and_keepdim_forms_match_pytorch():
    xo, xt = torch.tensor(X), real.tensor(X)
    pairs = [(lambda x: x.sum(dim=1, keepdim=True)), (lambda x: x.mean(dim=-1)), (lambda x: x.softmax(dim=-1)),
             (lambda x: x.max(dim=1).values), (lambda x: x.max(dim=1).indices), (lambda x: x.std(dim=0)),
             (lambda x: x.argmax(dim=1)), (lambda x: x.cumsum(dim=0)), (lambda x: x.norm(dim=1)),
             (lambda x: x.min(1)[0]), (lambda x: x.size(1)), (lambda x: x.dim())]
    for f in pairs:
        np.testing.assert_allclose(np.asarray(flat(f(xo))[0]), np.asarray(flat(f(xt))[0]), rtol=1e-12)


def test_in_place_methods_match_pytorch():
    for f in (lambda x: x.zero_(), lambda x: x.fill_(3.0), lambda x: x.add_(2.0), lambda x: x.mul_(3.0),
              lambda x: x.sub_(1.0), lambda x: x.div_(4.0), lambda x: x.clamp_(0.8, 1.2)):
        xo, xt = torch.tensor(X), real.tensor(X)
        f(xo)
        f(xt)
        np.testing.assert_allclose(xo.numpy(), xt.numpy(), rtol=1e-12)


# ---------------------------------------------------------------- layers

LAYERS = [
    ("Linear", (4, 3), {}), ("LayerNorm", (4,), {}), ("RMSNorm", (4,), {"eps": 1e-6}), ("BatchNorm1d", (4,), {}),
    ("Dropout", (0.3,), {}), ("ReLU", (), {}), ("GELU", (), {}), ("GELU", (), {"approximate": "tanh"}),
    ("Tanh", (), {}), ("Sigmoid", (), {}), ("SiLU", (), {}), ("Softmax", (), {"dim": -1}),
    ("LogSoftmax", (), {"dim": 0}), ("Flatten", (0,), {}), ("Identity", (), {}),
]


def _with_params(layer, seed=1):
    rng = np.random.default_rng(seed)
    return {k: rng.normal(0, 0.5, tuple(v.shape)) if np.asarray(v).dtype.kind == "f" else np.asarray(v)
            for k, v in layer.state_dict().items()}


@pytest.mark.parametrize("name, args, kwargs", LAYERS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(LAYERS)])
def test_layer_forward_and_gradients_match_pytorch(name, args, kwargs):
    theirs = getattr(real.nn, name)(*args, **kwargs).double()
    ours = getattr(torch.nn, name)(*args, **kwargs).double()
    state = _with_params(theirs)
    theirs.load_state_dict({k: real.tensor(v) for k, v in state.items()})
    ours.load_state_dict(state)
    if name == "Dropout":
        theirs.eval()
        ours.eval()
    xo, xt = torch.tensor(Y, requires_grad=True), real.tensor(Y, requires_grad=True)
    yo, yt = ours(xo), theirs(xt)
    np.testing.assert_allclose(yo.numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-14)
    w = np.cos(np.arange(yt.numel())).reshape(tuple(yt.shape))
    (yo * torch.tensor(w)).sum().backward()
    (yt * real.tensor(w)).sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-13)
    for (key, po), (_, pt) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(po.grad.numpy(), pt.grad.numpy(), rtol=1e-10, atol=1e-13, err_msg=key)
    for key, value in theirs.state_dict().items():       # BatchNorm's running statistics too
        np.testing.assert_allclose(ours.state_dict()[key], value.numpy(), rtol=1e-12)


def test_embedding_containers_and_losses_match_pytorch():
    for fw in (torch, real):
        fw.manual_seed(0)
    theirs = real.nn.Sequential(real.nn.Embedding(5, 3), real.nn.Flatten(), real.nn.Linear(6, 4)).double()
    ours = torch.nn.Sequential(torch.nn.Embedding(5, 3), torch.nn.Flatten(), torch.nn.Linear(6, 4)).double()
    ours.load_state_dict(theirs.state_dict())
    ids, target = np.array([[0, 4], [2, 2], [1, 3]]), np.array([1, 0, 3])
    losses = []
    for fw, model in ((torch, ours), (real, theirs)):
        logits = model(fw.tensor(ids))
        loss = fw.nn.CrossEntropyLoss(label_smoothing=0.1)(logits, fw.tensor(target)) + \
            fw.nn.MSELoss()(logits, fw.zeros(3, 4, dtype=fw.float64))
        loss.backward()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(losses[1], rel=1e-12)
    for (k, po), (_, pt) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(po.grad.numpy(), pt.grad.numpy(), rtol=1e-10, atol=1e-14, err_msg=k)
    names = lambda m: [n for n, _ in m.named_parameters()]  # noqa: E731
    for fw in (torch, real):
        holder = fw.nn.ModuleDict({"a": fw.nn.ModuleList([fw.nn.Linear(2, 2), fw.nn.Linear(2, 1)])})
        names_here = names(holder)
        assert names_here == ["a.0.weight", "a.0.bias", "a.1.weight", "a.1.bias"]


def test_functional_matches_pytorch():
    F, G = torch.nn.functional, real.nn.functional
    q, k, v = (RNG.standard_normal((2, 3, 5, 4)) for _ in range(3))
    w, b = RNG.standard_normal((3, 4)), RNG.standard_normal(3)
    cases = [
        (lambda f, t: f.relu(t(Y))), (lambda f, t: f.tanh(t(Y))), (lambda f, t: f.sigmoid(t(Y))),
        (lambda f, t: f.silu(t(Y))), (lambda f, t: f.gelu(t(Y))), (lambda f, t: f.gelu(t(Y), approximate="tanh")),
        (lambda f, t: f.softmax(t(Y), dim=-1)), (lambda f, t: f.log_softmax(t(Y), dim=0)),
        (lambda f, t: f.dropout(t(Y), 0.5, training=False)), (lambda f, t: f.embedding(t(IDX), t(Y.T))),
        (lambda f, t: f.linear(t(Y), t(w), t(b))), (lambda f, t: f.layer_norm(t(Y), (4,), t(Y[0]), t(Y[1]))),
        (lambda f, t: f.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=True)),
        (lambda f, t: f.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(MASK), scale=0.3)),
        (lambda f, t: f.cross_entropy(t(Y), t(IDX[:, 0]))), (lambda f, t: f.nll_loss(t(Y), t(IDX[:, 1]))),
        (lambda f, t: f.mse_loss(t(Y), t(X))), (lambda f, t: f.binary_cross_entropy(f.sigmoid(t(Y)), t(X / 2))),
        (lambda f, t: f.binary_cross_entropy_with_logits(t(Y), t(X / 2))), (lambda f, t: f.softplus(t(Y))),
        (lambda f, t: f.pad(t(Y), (1, 2))), (lambda f, t: f.logsumexp(t(Y), 1) if f is F else real.logsumexp(t(Y), 1)),
    ]
    for case in cases:
        ours = case(F, lambda a: torch.tensor(a))
        theirs = case(G, lambda a: real.tensor(a))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-13)


# ---------------------------------------------------------------- optimizers, schedulers, clipping, init, data

@pytest.mark.parametrize("name, kwargs", [
    ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1}), ("AdamW", {"lr": 0.05}), ("AdamW", {"lr": 0.05, "betas": (0.8, 0.9)}),
])
def test_optimizers_match_pytorch(name, kwargs):
    params = []
    for fw in (torch, real):
        p = fw.tensor(X.copy(), requires_grad=True)
        opt = getattr(fw.optim, name)([p], **kwargs)
        for _ in range(5):
            opt.zero_grad(set_to_none=False) if p.grad is not None else None
            ((p * p).sum() + (p ** 3).mean()).backward()
            opt.step()
        params.append(p.detach().numpy().copy())
        assert opt.param_groups[0]["lr"] == kwargs["lr"] and opt.state_dict()["param_groups"][0]["params"] == [0]
    np.testing.assert_allclose(params[0], params[1], rtol=1e-12)


@pytest.mark.parametrize("make", [
    lambda lr, o: lr.LambdaLR(o, lambda e: 0.9 ** e), lambda lr, o: lr.StepLR(o, step_size=3, gamma=0.5),
    lambda lr, o: lr.CosineAnnealingLR(o, T_max=5, eta_min=0.01),
])
def test_schedulers_match_pytorch(make):
    curves = []
    for fw in (torch, real):
        opt = fw.optim.SGD([fw.zeros(1, requires_grad=True)], lr=0.3)
        sched, curve = make(fw.optim.lr_scheduler, opt), []
        for _ in range(12):
            opt.step()
            sched.step()
            curve.append(sched.get_last_lr()[0])
        curves.append(curve)
    np.testing.assert_allclose(curves[0], curves[1], rtol=1e-12)


def test_clip_grad_norm_and_init_gain_match_pytorch():
    out = []
    for fw in (torch, real):
        ps = [fw.tensor(X.copy(), requires_grad=True), fw.tensor(Y.copy(), requires_grad=True)]
        ((ps[0] * ps[1]).sum() * 3).backward()
        total = fw.nn.utils.clip_grad_norm_(ps, 1.0)
        out.append((float(total), ps[0].grad.numpy().copy(), ps[1].grad.numpy().copy()))
    assert out[0][0] == pytest.approx(out[1][0], rel=1e-6)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-6)
    for gain in ("tanh", "relu", "linear"):
        assert torch.nn.init.calculate_gain(gain) == pytest.approx(real.nn.init.calculate_gain(gain))
    for name in ("xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "trunc_normal_",
                 "uniform_", "normal_", "zeros_", "ones_"):
        ours, theirs = getattr(torch.nn.init, name)(torch.empty(300, 200)), getattr(real.nn.init, name)(
            real.empty(300, 200))
        assert ours.numpy().std() == pytest.approx(theirs.numpy().std(), rel=0.05, abs=1e-9), name
    assert torch.nn.init.constant_(torch.empty(2), 0.5).tolist() == [0.5, 0.5]


def test_dataloader_batches_match_pytorch():
    batches = []
    for fw in (torch, real):
        ds = fw.utils.data.TensorDataset(fw.arange(10), fw.arange(10) * 1.5)
        batches.append([[b.numpy().tolist() for b in batch] for batch in
                        fw.utils.data.DataLoader(ds, batch_size=3, drop_last=True)])
    assert batches[0] == batches[1]


def test_save_and_load_state_dicts_go_between_the_frameworks(tmp_path):
    from safetensors.torch import load_file, save_file
    theirs = real.nn.Linear(3, 2)
    save_file(theirs.state_dict(), tmp_path / "theirs.safetensors")
    ours = torch.nn.Linear(3, 2)
    ours.load_state_dict(torch.load(tmp_path / "theirs.safetensors"))
    torch.save(ours.state_dict(), tmp_path / "ours.safetensors")
    for key, value in load_file(tmp_path / "ours.safetensors").items():
        np.testing.assert_array_equal(value.numpy(), theirs.state_dict()[key].numpy())
    real.save(theirs.state_dict(), tmp_path / "pickled.pt")             # PyTorch's own format reads too
    for key, value in torch.load(tmp_path / "pickled.pt").items():
        np.testing.assert_array_equal(value.numpy(), theirs.state_dict()[key].numpy())


# ---------------------------------------------------------------- whole models

TOLERANCE = {"float32": 1e-6, "float64": 1e-12}  # of rel: ‖ours − theirs‖ / ‖theirs‖ (torch_parity.py)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("model", ["makemore_mlp", "micrograd_mlp", "gpt"])
def test_model_loss_and_every_gradient_equal_pytorchs(model, dtype):
    diffs = torch_parity.gradient_differences(model, dtype, real)
    worst = max(diffs, key=diffs.get)
    assert diffs[worst] <= TOLERANCE[dtype], f"{model} {dtype}: {worst} differs by {diffs[worst]:.2e}"


@pytest.mark.parametrize("model", ["makemore_mlp", "micrograd_mlp", "gpt_small"])
def test_200_adamw_steps_in_float64_follow_pytorchs_losses(model):
    theirs, ours = torch_parity.adamw_losses(model, 200, real)
    worst = max(rel(o, t) for o, t in zip(ours, theirs))
    assert worst <= 1e-9 and math.isfinite(ours[-1]) and ours[-1] < ours[0]


def test_bench_facade_times_both_frameworks_alternated(tmp_path):
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))
    import bench_facade
    summary = bench_facade.main(["--rounds", "2", "--steps", "1", "--threads", "1"])
    assert len(summary["torch_ms"]) == 2 and len(summary["engine_ms"]) == 2 and summary["ratio"] > 0
    assert summary["fastest_engine_ms"] <= summary["median_engine_ms"]
