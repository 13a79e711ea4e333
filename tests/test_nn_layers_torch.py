"""The layers, containers and helpers of torch.nn / torch.nn.functional added for issue 26, through the
facade: group_norm, batch_norm, layer_norm and rms_norm over several dimensions, bilinear, embedding's
options, embedding_bag, alpha_dropout and linear_cross_entropy against PyTorch in float64, values and
gradients (skipped without PyTorch); initialisation under manual_seed equal to PyTorch's; ParameterList,
ParameterDict, Buffer, Container and factory_kwargs by their names and state dicts; errors for bad input.
"""
import numpy as np
import pytest

import tinygrad_like.torch as tl

tF = tl.nn.functional
rng = np.random.default_rng(3)
X4 = rng.standard_normal((3, 6, 2, 2))
W6, B6 = rng.standard_normal(6), rng.standard_normal(6)


class Const(np.ndarray):
    """An input array that gets no gradient (running statistics, class weights)."""


def const(a):
    return np.asarray(a).view(Const)


def both(torch, arrays):
    """The same float64 arrays as PyTorch tensors and facade tensors, floating ones requiring grad unless Const."""
    grad = [a.dtype.kind == "f" and not isinstance(a, Const) for a in arrays]
    theirs = [torch.tensor(np.asarray(a), requires_grad=g) for a, g in zip(arrays, grad)]
    ours = [tl.tensor(np.asarray(a), requires_grad=g) for a, g in zip(arrays, grad)]
    return theirs, ours


def compare(torch, call, *arrays, rtol=1e-10):
    """call(F, *tensors) on both sides: the outputs and every floating input's gradient equal."""
    theirs_in, ours_in = both(torch, arrays)
    theirs, ours = call(torch.nn.functional, *theirs_in), call(tF, *ours_in)
    seed = np.linspace(-1, 2, theirs.numel()).reshape(tuple(theirs.shape))
    theirs.backward(torch.tensor(seed))
    ours.backward(tl.tensor(seed))
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=rtol, atol=1e-12)
    for t, o in zip(theirs_in, ours_in):
        if t.requires_grad:
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=1e-12)


CALLS = [
    ("group_norm", lambda F, x, w, b: F.group_norm(x, 3, w, b, eps=1e-3), (X4, W6, B6)),
    ("group_norm plain", lambda F, x: F.group_norm(x, 2), (X4,)),
    ("layer_norm 2 dims", lambda F, x, w, b: F.layer_norm(x, (2, 2), w, b),
     (X4, W6[:4].reshape(2, 2), B6[:4].reshape(2, 2))),
    ("rms_norm 2 dims", lambda F, x, w: F.rms_norm(x, [2, 2], w), (X4, W6[:4].reshape(2, 2))),
    ("rms_norm eps None", lambda F, x: F.rms_norm(x, (2,)), (X4,)),
    ("batch_norm training", lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True), (X4, W6, B6)),
    ("batch_norm eval", lambda F, x, m, v, w: F.batch_norm(x, m, v, w, None, eps=0.1),
     (X4, const(B6), const(np.abs(W6)), W6)),
    ("bilinear", lambda F, a, b, w, c: F.bilinear(a, b, w, c),
     (rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 5)), rng.standard_normal((6, 4, 5)), B6)),
    ("embedding padding_idx freq", lambda F, w: F.embedding(
        torch_or_numpy_ids(F, [[1, 2, 1], [0, 1, 3]]), w, padding_idx=2, scale_grad_by_freq=True),
     (rng.standard_normal((4, 3)),)),
    ("embedding_bag mean offsets", lambda F, w: F.embedding_bag(
        torch_or_numpy_ids(F, [1, 2, 4, 4, 3, 2]), w, torch_or_numpy_ids(F, [0, 2, 2, 5])),
     (rng.standard_normal((5, 3)),)),
    ("embedding_bag sum weights last", lambda F, w, s: F.embedding_bag(
        torch_or_numpy_ids(F, [1, 2, 4, 4, 3, 2]), w, torch_or_numpy_ids(F, [0, 3, 6]), mode="sum",
        per_sample_weights=s, include_last_offset=True), (rng.standard_normal((5, 3)), rng.standard_normal(6))),
    ("embedding_bag max 2d padding", lambda F, w: F.embedding_bag(
        torch_or_numpy_ids(F, [[1, 2, 0], [0, 0, 0], [3, 4, 4]]), w, mode="max", padding_idx=0),
     (rng.standard_normal((5, 3)),)),
    ("embedding_bag mean 2d padding", lambda F, w: F.embedding_bag(
        torch_or_numpy_ids(F, [[1, 2, 0], [0, 0, 0], [3, 4, 4]]), w, padding_idx=0),
     (rng.standard_normal((5, 3)),)),
    ("linear_cross_entropy", lambda F, x, w, b, cw: F.linear_cross_entropy(
        x, w, torch_or_numpy_ids(F, [[0, 2], [1, -100], [2, 2], [1, 0]]), linear_bias=b, weight=cw,
        label_smoothing=0.1),
     (rng.standard_normal((4, 6)), rng.standard_normal((3, 2, 6)), rng.standard_normal((3, 2)), const([1.0, 2, 0.5]))),
]


def torch_or_numpy_ids(F, ids):
    """Integer indices as the side's own tensor (PyTorch needs its tensors; the facade takes its own)."""
    if F is tF:
        return tl.tensor(ids)
    import torch
    return torch.tensor(ids)


@pytest.mark.parametrize("name, call, arrays", CALLS, ids=[c[0] for c in CALLS])
def test_layer_functions_match_pytorch(name, call, arrays):
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    compare(torch, call, *arrays)


def test_batch_norm_moves_the_running_statistics_as_pytorch_does():
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    theirs = [torch.zeros(6, dtype=torch.float64), torch.ones(6, dtype=torch.float64)]
    ours = [tl.zeros(6, dtype=tl.float64), tl.ones(6, dtype=tl.float64)]
    for _ in range(2):
        torch.nn.functional.batch_norm(torch.tensor(X4), *theirs, training=True, momentum=0.3)
        tF.batch_norm(tl.tensor(X4), *ours, training=True, momentum=0.3)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-12)


def test_embedding_max_norm_renorms_the_rows_looked_up_in_place_as_pytorch():
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    table = rng.standard_normal((5, 3)) * 3
    theirs, ours = torch.tensor(table), tl.tensor(table)
    out_t = torch.nn.functional.embedding(torch.tensor([0, 2, 2]), theirs, max_norm=1.5, norm_type=1.0)
    out_o = tF.embedding(tl.tensor([0, 2, 2]), ours, max_norm=1.5, norm_type=1.0)
    np.testing.assert_allclose(out_o.numpy(), out_t.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)           # rows 0 and 2 renormed, others not
    assert np.all(ours.numpy()[[1, 3, 4]] == table[[1, 3, 4]])


def test_layers_initialise_as_pytorch_under_the_same_seed_and_load_its_state_dicts():
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    pairs = [(lambda nn: nn.Bilinear(3, 4, 5)), (lambda nn: nn.EmbeddingBag(6, 3, padding_idx=1, mode="sum")),
             (lambda nn: nn.Embedding(6, 3, padding_idx=-1)), (lambda nn: nn.GroupNorm(2, 4)),
             (lambda nn: nn.LinearCrossEntropyLoss(6, 3, out_features=(2,), bias=True)), (lambda nn: nn.PReLU(4))]
    for make in pairs:
        torch.manual_seed(0)
        theirs = make(torch.nn)
        tl.manual_seed(0)
        ours = make(tl.nn)
        theirs_sd = theirs.state_dict()
        assert list(ours.state_dict()) == list(theirs_sd), type(ours).__name__
        for key, value in ours.state_dict().items():
            np.testing.assert_array_equal(value, theirs_sd[key].numpy(), err_msg=f"{type(ours).__name__}.{key}")


def test_modules_compute_their_functions():
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    x1, x2 = rng.standard_normal((4, 3)), rng.standard_normal((4, 5))
    theirs, ours = torch.nn.Bilinear(3, 5, 2).double(), tl.nn.Bilinear(3, 5, 2, dtype=tl.float64)
    ours.load_state_dict(theirs.state_dict())
    np.testing.assert_allclose(ours(tl.tensor(x1), tl.tensor(x2)).numpy(),
                               theirs(torch.tensor(x1), torch.tensor(x2)).detach().numpy(), rtol=1e-12)
    theirs, ours = torch.nn.LinearCrossEntropyLoss(3, 4, bias=True).double(), tl.nn.LinearCrossEntropyLoss(
        3, 4, bias=True, dtype=tl.float64, options=tl.nn.LinearCrossEntropyOptions(batch_chunk_size=2))
    ours.load_state_dict(theirs.state_dict())
    labels = [0, 3, 1, 1]
    assert ours(tl.tensor(x1), tl.tensor(labels)).item() == pytest.approx(
        theirs(torch.tensor(x1), torch.tensor(labels)).item(), rel=1e-12)
    bag = tl.nn.EmbeddingBag(5, 2, mode="max")
    ids = tl.tensor([[0, 4], [2, 2]])
    np.testing.assert_array_equal(bag(ids).numpy(), tF.embedding_bag(ids, bag.weight, mode="max").numpy())
    g = tl.nn.GroupNorm(3, 6, affine=False)
    assert g.weight is None and np.allclose(g(tl.tensor(X4)).numpy(), tF.group_norm(tl.tensor(X4), 3).numpy())


def test_alpha_dropout_keeps_a_standard_input_standard_and_is_the_identity_in_eval():
    tl.manual_seed(0)
    x = tl.randn(200000, dtype=tl.float64)
    y = tF.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.01 and abs(y.std() - 1) < 0.01
    floor = -1.0507009873554805 * 1.6732632423543772
    a = (0.8 * (1 + 0.2 * floor ** 2)) ** -0.5
    dropped = np.isclose(y, a * floor - a * floor * 0.2)                # every dropped entry lands on one value
    assert abs(dropped.mean() - 0.2) < 0.005
    assert tF.alpha_dropout(x, 0.2) is x and tl.nn.AlphaDropout(0.2).eval()(x) is x
    assert np.all(tF.alpha_dropout(x[:3], 1.0, training=True).numpy() == 0)   # PyTorch's answer for p = 1


def test_parameter_containers_name_their_entries_like_pytorch():
    class Net(tl.nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = tl.nn.ParameterList([tl.nn.Parameter(tl.ones(2)), tl.zeros(3)])
            self.named = tl.nn.ParameterDict({"alpha": tl.nn.Parameter(tl.ones(1))})
            self.mask = tl.nn.Buffer(tl.ones(2, 2))
            self.scratch = tl.nn.Buffer(tl.zeros(1), persistent=False)
    net = Net()
    net.ws.append(tl.ones(4))
    net.named["beta"] = tl.zeros(2)
    assert [n for n, _ in net.named_parameters()] == ["ws.0", "ws.1", "ws.2", "named.alpha", "named.beta"]
    assert all(p.requires_grad for p in net.parameters()) and len(net.ws) == 3 and net.ws[-1].shape == (4,)
    assert list(net.state_dict()) == ["ws.0", "ws.1", "ws.2", "named.alpha", "named.beta", "mask"]
    assert [n for n, _ in net.named_buffers()] == ["mask", "scratch"]
    assert net.named.keys() == ["alpha", "beta"] and "beta" in net.named and len(net.named) == 2
    with pytest.raises(KeyError, match="no parameter named 'gamma'"):
        net.named["gamma"]
    with pytest.raises(IndexError, match="out of range for 3 parameters"):
        net.ws[3]
    holder = tl.nn.Container(lin=tl.nn.Linear(2, 3))
    assert [n for n, _ in holder.named_parameters()] == ["lin.weight", "lin.bias"]


def test_factory_kwargs_and_assert_int_or_pair_behave_as_pytorchs():
    assert tl.nn.factory_kwargs({"device": "cpu", "dtype": tl.float64}) == {"device": "cpu", "dtype": tl.float64}
    assert tl.nn.factory_kwargs({"factory_kwargs": {"dtype": tl.float32}, "device": "cpu"}) == {
        "dtype": tl.float32, "device": "cpu"}
    assert tl.nn.factory_kwargs(None) == {}
    with pytest.raises(TypeError, match="unexpected keys \\['bias'\\]"):
        tl.nn.factory_kwargs({"bias": True})
    with pytest.raises(TypeError, match="dtype is given both"):
        tl.nn.factory_kwargs({"dtype": tl.float32, "factory_kwargs": {"dtype": tl.float64}})
    tF.assert_int_or_pair(3, "kernel_size", "{} must be an int or a pair")
    tF.assert_int_or_pair((3, 4), "kernel_size", "{} must be an int or a pair")
    with pytest.raises(AssertionError, match="kernel_size must be an int or a pair"):
        tF.assert_int_or_pair((3, 4, 5), "kernel_size", "{} must be an int or a pair")


def test_layer_errors_name_the_op_and_what_to_do():
    with pytest.raises(ValueError, match="group_norm: input \\(3, 6, 2, 2\\) must be \\(N, C, ...\\) with C divisible"):
        tF.group_norm(tl.tensor(X4), 4)
    with pytest.raises(ValueError, match="GroupNorm: num_channels 6 must be divisible by num_groups 4"):
        tl.nn.GroupNorm(4, 6)
    with pytest.raises(ValueError, match="batch_norm: evaluation \\(training=False\\) needs running_mean"):
        tF.batch_norm(tl.tensor(X4), None, None)
    with pytest.raises(ValueError, match="batch_norm: weight \\(3,\\) must have one entry per channel \\(6,\\)"):
        tF.batch_norm(tl.tensor(X4), None, None, tl.ones(3), training=True)
    with pytest.raises(ValueError, match="layer_norm: normalized_shape \\(3, 2\\) must be the last dimensions"):
        tF.layer_norm(tl.tensor(X4), (3, 2))
    with pytest.raises(ValueError, match="bilinear: input1 \\(2, 3\\) and input2 \\(2, 4\\)"):
        tF.bilinear(tl.zeros(2, 3), tl.zeros(2, 4), tl.zeros(5, 3, 3))
    with pytest.raises(ValueError, match="embedding_bag: offsets must be None when input is 2-D"):
        tF.embedding_bag(tl.tensor([[0, 1]]), tl.zeros(3, 2), tl.tensor([0]))
    with pytest.raises(NotImplementedError, match="per_sample_weights are only for mode='sum'"):
        tF.embedding_bag(tl.tensor([[0, 1]]), tl.zeros(3, 2), per_sample_weights=tl.ones(1, 2))
    with pytest.raises(NotImplementedError, match="sparse=True is not provided: the engine's gradients are dense"):
        tl.nn.Embedding(3, 2, sparse=True)
    with pytest.raises(IndexError, match="embedding: index 5 is outside the table of 3 rows"):
        tF.embedding(tl.tensor([5]), tl.zeros(3, 2))


def test_torch_level_forms_take_the_operators_argument_order_and_match_pytorch():
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    a, b, c = (rng.standard_normal((4, 5)) for _ in range(3))
    signs, labels = np.array([1.0, -1, -1, 1]), (rng.uniform(size=(4, 5)) > 0.5) * 1.0
    table, ids = rng.standard_normal((6, 3)), np.array([[0, 5], [2, 2]])
    calls = [
        lambda t, x, y, z: t.layer_norm(x, (5,), None, None, 1e-3),
        lambda t, x, y, z: t.group_norm(x.reshape(4, 5, 1), 5),
        lambda t, x, y, z: t.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False),
        lambda t, x, y, z: t.rms_norm(x, [5], None, 1e-6),
        lambda t, x, y, z: t.bilinear(x, y, z.reshape(4, 5, 1).expand(4, 5, 5)[:2], None),
        lambda t, x, y, z: t.binary_cross_entropy_with_logits(x, t.sigmoid(y), None, None, 2),
        lambda t, x, y, z: t.cosine_embedding_loss(x, y, t.tensor(signs), 0.1, 0),
        lambda t, x, y, z: t.hinge_embedding_loss(x, t.tensor(labels * 2 - 1), 0.5, 2),
        lambda t, x, y, z: t.margin_ranking_loss(x[:, 0], y[:, 0], t.tensor(signs), 0.2, 1),
        lambda t, x, y, z: t.triplet_margin_loss(x, y, z, 1.0, 2.0, 1e-6, True, 1),
        lambda t, x, y, z: t.kl_div(x, y, 2, log_target=True),
        lambda t, x, y, z: t.poisson_nll_loss(x, t.tensor(labels * 3), True, False, 1e-8, 1),
        lambda t, x, y, z: t.cosine_similarity(x, y, 0, 1e-8),
        lambda t, x, y, z: t.pairwise_distance(x, y, 1.0, 1e-6, True),
        lambda t, x, y, z: t.pdist(x, 2.0),
        lambda t, x, y, z: t.embedding(t.tensor(table), t.tensor(ids), 2, False, False) * x[0, 0],
        lambda t, x, y, z: t.celu(x, 0.5) + t.selu(y) + t.threshold(z, 0.1, 2.0)
        + t.prelu(x, t.tensor([0.3], dtype=t.float64)),
        lambda t, x, y, z: t.alpha_dropout(x, 0.3, False) + t.dropout(y, 0.3, False) + t.hardshrink(z, 0.2),
    ]
    for i, call in enumerate(calls):
        theirs_in = [torch.tensor(v, requires_grad=True) for v in (a, b, c)]
        ours_in = [tl.tensor(v, requires_grad=True) for v in (a, b, c)]
        theirs, ours = call(torch, *theirs_in), call(tl, *ours_in)
        theirs.sum().backward()
        ours.sum().backward()
        np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=str(i))
        for o, t in zip(ours_in, theirs_in):
            expected = np.zeros_like(a) if t.grad is None else t.grad.numpy()
            got = np.zeros_like(a) if o.grad is None else o.grad.numpy()
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12, err_msg=str(i))
    x = tl.tensor([-1.0, 2.0])
    assert tl.alpha_dropout_(x, 0.5, False) is x and tl.dropout_(x, 0.5, False) is x
    weight = tl.tensor([[3.0, 4.0], [0.3, 0.4]])
    assert tl.embedding_renorm_(weight, tl.tensor([0, 1]), 1.0, 2.0) is weight
    np.testing.assert_allclose(weight.numpy(), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    with pytest.raises(AttributeError, match="internal operator behind a layer"):
        tl.batch_norm_stats  # noqa: B018 (asking for the name is what raises)


def test_adaptive_log_softmax_matches_pytorch():
    torch = pytest.importorskip("torch", reason="compares against PyTorch")

    def make(nn):
        return nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True)
    torch.manual_seed(0)
    theirs = make(torch.nn).double()
    tl.manual_seed(0)
    ours = make(tl.nn).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())          # head.weight, head.bias, tail.0.0.weight, ...
    for key, value in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[key], value.numpy(), err_msg=key)
    x, target = rng.standard_normal((5, 8)), np.array([0, 4, 9, 2, 7])   # the shortlist and both clusters
    theirs_x, ours_x = torch.tensor(x, requires_grad=True), tl.tensor(x, requires_grad=True)
    t_out, o_out = theirs(theirs_x, torch.tensor(target)), ours(ours_x, tl.tensor(target))
    t_out.loss.backward()
    o_out.loss.backward()
    np.testing.assert_allclose(o_out.output.numpy(), t_out.output.detach().numpy(), rtol=1e-12)
    assert o_out.loss.item() == pytest.approx(t_out.loss.item(), rel=1e-12)
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-10, atol=1e-15)
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(dict(ours.named_parameters())[name].grad.numpy(), p.grad.numpy(), rtol=1e-10,
                                   atol=1e-15, err_msg=name)
    log_prob = ours.log_prob(tl.tensor(x))
    np.testing.assert_allclose(np.exp(log_prob.numpy()).sum(1), 1, rtol=1e-12)          # a distribution per row
    np.testing.assert_allclose(log_prob.numpy(), theirs.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    assert ours.predict(tl.tensor(x)).tolist() == theirs.predict(torch.tensor(x)).tolist()
    with pytest.raises(ValueError, match="cutoffs must be a sorted list of unique positive integers"):
        tl.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])
    with pytest.raises(IndexError, match="targets must be in \\[0, 9\\]"):
        ours(tl.tensor(x), tl.tensor([0, 1, 2, 3, 10]))
