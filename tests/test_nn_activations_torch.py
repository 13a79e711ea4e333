"""The activations of torch.nn and torch.nn.functional added for issue 26, through the facade: values and
gradients against PyTorch on the same float64 inputs (kinks and extremes included; skipped without PyTorch),
the modules' constructor arguments, the in-place and torch.* forms, the random ones (rrelu, gumbel_softmax)
by their laws, extreme inputs without a numpy warning, and the errors for bad arguments.
"""
import warnings

import numpy as np
import pytest

import tinygrad_like.torch as tl
from tinygrad_like import Tensor

tF = tl.nn.functional
X = np.array([-1e4, -40.0, -3.0, -1.0, -0.5, -0.2, 0.0, 0.2, 0.5, 1.0, 3.0, 40.0, 1e4])   # kinks and extremes

# (name, our call, PyTorch's call): each takes (F, x) and the same arguments on both sides
CALLS = [
    ("elu", lambda F, x: F.elu(x, 0.7)),
    ("celu", lambda F, x: F.celu(x, 0.7)),
    ("selu", lambda F, x: F.selu(x)),
    ("glu", lambda F, x: F.glu(x.reshape(13, 1).expand(13, 2) * 1.0, dim=1)),
    ("hardshrink", lambda F, x: F.hardshrink(x, 0.5)),
    ("softshrink", lambda F, x: F.softshrink(x, 0.5)),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x)),
    ("hardswish", lambda F, x: F.hardswish(x)),
    ("hardtanh", lambda F, x: F.hardtanh(x, -0.5, 1.0)),
    ("relu6", lambda F, x: F.relu6(x)),
    ("logsigmoid", lambda F, x: F.logsigmoid(x)),
    ("mish", lambda F, x: F.mish(x)),
    ("softplus", lambda F, x: F.softplus(x, beta=2.0, threshold=10.0)),
    ("softsign", lambda F, x: F.softsign(x)),
    ("tanhshrink", lambda F, x: F.tanhshrink(x)),
    ("threshold", lambda F, x: F.threshold(x, 0.2, -7.0)),
    ("softmin", lambda F, x: F.softmin(x.reshape(1, 13) / 1e4, dim=1)),
    ("rrelu eval", lambda F, x: F.rrelu(x, 0.1, 0.3, training=False)),
    ("leaky_relu", lambda F, x: F.leaky_relu(x, 0.1)),
]


@pytest.mark.parametrize("name, call", CALLS, ids=[c[0] for c in CALLS])
def test_activation_values_and_gradients_match_pytorch(name, call):
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    theirs_x = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    theirs = call(torch.nn.functional, theirs_x)
    theirs.backward(torch.linspace(0.5, 1.5, theirs.numel(), dtype=torch.float64).reshape(theirs.shape))
    ours_x = tl.tensor(X, dtype=tl.float64, requires_grad=True)
    with warnings.catch_warnings(), np.errstate(over="raise", divide="raise", invalid="raise"):
        warnings.simplefilter("error")                                   # no overflow, no 0·inf, no log(0)
        ours = call(tF, ours_x)
        ours.backward(tl.linspace(0.5, 1.5, ours.numel(), dtype=tl.float64).reshape(ours.shape))
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-300)
    # PyTorch's celu and hardsigmoid backward use 1/α and 1/6 rounded to float32 (ours are exact: the table of
    # tests/test_nn_functional_gradcheck.py checks them against finite differences)
    rtol = 1e-5 if name in ("celu", "hardsigmoid") else 1e-12
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=rtol, atol=1e-300)


def test_prelu_per_channel_and_its_module_match_pytorch():
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    w = np.array([0.1, -0.2, 0.3])
    theirs_x, theirs_w = (torch.tensor(a, requires_grad=True) for a in (x, w))
    theirs = torch.nn.functional.prelu(theirs_x, theirs_w)
    theirs.pow(2).sum().backward()
    ours_x, ours_w = (tl.tensor(a, requires_grad=True) for a in (x, w))
    ours = tF.prelu(ours_x, ours_w)
    ours.pow(2).sum().backward()
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours_w.grad.numpy(), theirs_w.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(Tensor(x).prelu(Tensor(w)).numpy(), theirs.detach().numpy(), rtol=1e-12)
    layer = tl.nn.PReLU(3, init=0.1)
    assert [n for n, _ in layer.named_parameters()] == ["weight"] and np.all(layer.weight.numpy() == np.float32(0.1))
    assert tl.nn.PReLU().weight.shape == (1,) and tl.nn.PReLU().weight.numpy()[0] == np.float32(0.25)


def test_activation_modules_take_pytorchs_arguments_and_compute_their_functions():
    x = tl.tensor(X, dtype=tl.float64)
    nn = tl.nn
    pairs = [
        (nn.ELU(0.5, True), tF.elu(x, 0.5)), (nn.CELU(alpha=2.0), tF.celu(x, 2.0)), (nn.SELU(True), tF.selu(x)),
        (nn.Hardshrink(0.3), tF.hardshrink(x, 0.3)), (nn.Softshrink(lambd=0.3), tF.softshrink(x, 0.3)),
        (nn.Hardsigmoid(True), tF.hardsigmoid(x)), (nn.Hardswish(), tF.hardswish(x)),
        (nn.Hardtanh(-2.0, 2.0, True), tF.hardtanh(x, -2.0, 2.0)), (nn.Hardtanh(min_value=-0.1), x.clamp(-0.1, 1)),
        (nn.ReLU6(True), x.clamp(0, 6)), (nn.LogSigmoid(), tF.logsigmoid(x)), (nn.Mish(), tF.mish(x)),
        (nn.Softplus(2.0, 5.0), tF.softplus(x, 2.0, 5.0)), (nn.Softsign(), tF.softsign(x)),
        (nn.Tanhshrink(), tF.tanhshrink(x)), (nn.Threshold(0.1, 20.0, True), tF.threshold(x, 0.1, 20.0)),
        (nn.Softmin(dim=0), tF.softmin(x, dim=0)), (nn.RReLU(0.1, 0.3).eval(), x.leaky_relu(0.2)),
    ]
    for layer, expected in pairs:
        np.testing.assert_array_equal(layer(x).numpy(), expected.numpy(), err_msg=repr(layer))
    glu = nn.GLU()(tl.tensor([[1.0, 2.0, 0.0, 1e4]], dtype=tl.float64))
    np.testing.assert_allclose(glu.numpy(), [[0.5, 2.0]], rtol=1e-15)
    assert nn.Unflatten(1, (2, 3))(tl.zeros(4, 6)).shape == (4, 2, 3)
    assert repr(nn.Hardtanh(-2.0, 2.0)) == "Hardtanh(min_val=-2.0, max_val=2.0)"


def test_in_place_forms_write_into_the_input_and_torch_forms_call_the_same_functions():
    for name in ("elu_", "celu_", "selu_", "hardtanh_", "leaky_relu_", "relu_", "threshold_", "rrelu_"):
        x = tl.tensor(X, dtype=tl.float64)
        args = (0.1, -2.0) if name == "threshold_" else ()
        out = getattr(tF, name)(x, *args)
        expected = getattr(tF, name.rstrip("_") if name not in ("leaky_relu_", "relu_") else name[:-1])(
            tl.tensor(X, dtype=tl.float64), *args)
        assert out is x, name
        np.testing.assert_array_equal(x.numpy(), expected.numpy(), err_msg=name)
    x = tl.tensor([-2.0, 0.5, 3.0])
    assert tl.selu(x).allclose(tF.selu(x)) and tl.celu(x, 2.0).allclose(tF.celu(x, 2.0))
    assert tl.threshold(x, 1.0, 9.0).tolist() == [9.0, 9.0, 3.0] and tl.hardshrink(x, 1.0).tolist() == [-2.0, 0, 3.0]
    assert x.hardshrink(1.0).tolist() == [-2.0, 0, 3.0] and tl.prelu(x, tl.tensor([0.5])).tolist() == [-1.0, 0.5, 3.0]
    assert tl.dropout(x, 0.5, False) is x and tl.rrelu(x).tolist() == pytest.approx([-2 * (1 / 8 + 1 / 3) / 2, 0.5, 3])
    y = tl.tensor([-1.0, 2.0])
    assert tl.relu_(y) is y and y.tolist() == [0.0, 2.0]
    assert tl.selu_(y) is y and y.tolist() == pytest.approx([0.0, 2 * 1.0507009873554805])


def test_in_place_activation_on_an_intermediate_is_recorded_and_its_gradient_is_the_out_of_place_one():
    x = Tensor(X[2:-2].copy(), requires_grad=True)
    h = x * 2
    tF.elu_(h, 0.5)
    h.sum().backward()
    expected = Tensor(X[2:-2].copy(), requires_grad=True)
    tF.elu(expected * 2, 0.5).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected.grad.numpy())
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        tF.relu_(Tensor([1.0, -1.0], requires_grad=True))


def test_rrelu_training_draws_each_negative_slope_uniformly_in_its_range():
    tl.manual_seed(0)
    x = tl.full((20000,), -1.0)
    slopes = -tF.rrelu(x, 0.1, 0.3, training=True).numpy()
    assert slopes.min() >= 0.1 and slopes.max() < 0.3
    assert abs(slopes.mean() - 0.2) < 0.002 and abs(slopes.var() - 0.2 ** 2 / 12) < 2e-4   # U(a, b): (b - a)²/12
    assert len(np.unique(slopes)) > 19000
    layer = tl.nn.RReLU(0.1, 0.3)
    assert not np.all(layer(x).numpy() == layer(x).numpy())                 # fresh slopes each call while training
    assert tF.rrelu(tl.tensor([2.0, 0.0]), training=True).tolist() == [2.0, 0.0]


def test_gumbel_softmax_samples_the_categorical_distribution():
    tl.manual_seed(1)
    logits = tl.tensor(np.log([[0.1, 0.2, 0.7]]).repeat(20000, 0), requires_grad=True)
    soft = tF.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.numpy().sum(1), 1, rtol=1e-6)
    hard = tF.gumbel_softmax(logits, hard=True)
    assert set(np.unique(hard.numpy())) == {0.0, 1.0} and np.all(hard.numpy().sum(1) == 1)
    np.testing.assert_allclose(hard.numpy().mean(0), [0.1, 0.2, 0.7], atol=0.01)    # the argmax of logits + Gumbel
    hard.sum(0)[2].backward()                                   # straight through: the soft sample's gradient
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0


def test_activation_errors_name_the_op_and_what_to_do():
    with pytest.raises(ValueError, match="glu: dimension -1 of input \\(2, 3\\) must have an even size"):
        tF.glu(tl.zeros(2, 3))
    with pytest.raises(ValueError, match="prelu: weight \\(2,\\) must hold 1 slope or one per channel"):
        tF.prelu(tl.zeros(4, 3), tl.zeros(2))
    with pytest.raises(ValueError, match="softshrink: lambd must be >= 0"):
        tF.softshrink(tl.zeros(2), -1.0)
    with pytest.raises(ValueError, match="rrelu: lower 0.5 must not exceed upper 0.1"):
        tF.rrelu(tl.zeros(2), 0.5, 0.1)
    with pytest.raises(ValueError, match="Hardtanh: min_val 2 must not exceed max_val 1"):
        tl.nn.Hardtanh(2, 1)
    with pytest.raises(TypeError, match="softmin: pass dim="):
        tF.softmin(tl.zeros(2))
    with pytest.raises(ValueError, match="gumbel_softmax: tau must be > 0"):
        tF.gumbel_softmax(tl.zeros(2), tau=0)
