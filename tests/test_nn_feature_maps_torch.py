"""The layers of torch.nn for feature maps (N, C, ...) added for issue 26: F.pad's reflect, replicate and
circular modes and the padding layers, channel dropout (Dropout1d/2d/3d, FeatureAlphaDropout, torch.feature_dropout),
Softmax2d, InstanceNorm1d/2d/3d and F.instance_norm: values and gradients against PyTorch in float64 (skipped
without it), the random ones by their laws, gradchecks, and the errors for bad arguments.
"""
import numpy as np
import pytest

import tinygrad_like.functional as F
import tinygrad_like.torch as tl
from tinygrad_like import Tensor, gradcheck

tF = tl.nn.functional
rng = np.random.default_rng(11)
X = rng.standard_normal((2, 3, 4, 5))


@pytest.mark.parametrize("mode, pad", [("reflect", (3, 1, 2, 0)), ("replicate", (2, 3, 1, 4)),
                                       ("circular", (5, 2, 0, 4)), ("constant", (1, 2, -1, 3))])
def test_pad_modes_match_pytorch(mode, pad):
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    theirs_x, ours_x = torch.tensor(X, requires_grad=True), tl.tensor(X, requires_grad=True)
    theirs = torch.nn.functional.pad(theirs_x, pad, mode=mode)
    ours = tF.pad(ours_x, pad, mode=mode)
    seed = np.linspace(-1, 1, theirs.numel()).reshape(tuple(theirs.shape))
    theirs.backward(torch.tensor(seed))
    ours.backward(tl.tensor(seed))
    np.testing.assert_array_equal(ours.numpy(), theirs.detach().numpy())
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-12)


def test_pad_modes_by_hand_and_gradcheck():
    row = Tensor(np.array([[1.0, 2.0, 3.0]]))
    assert F.pad(row, (2, 1), mode="reflect").tolist() == [[3, 2, 1, 2, 3, 2]]
    assert F.pad(row, (2, 1), mode="replicate").tolist() == [[1, 1, 1, 2, 3, 3]]
    assert F.pad(row, (2, 1), mode="circular").tolist() == [[2, 3, 1, 2, 3, 1]]
    assert F.pad(row, (1, 0), value=7.0).tolist() == [[7, 1, 2, 3]]
    x = Tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    for mode in ("reflect", "replicate", "circular"):
        assert gradcheck(lambda t, mode=mode: F.pad(t, (2, 1, 1, 2), mode=mode), x)
    with pytest.raises(ValueError, match="mode 'reflect' needs amounts in \\[0, 2\\] for dimension 1 of size 3"):
        F.pad(row, (3, 0), mode="reflect")
    with pytest.raises(ValueError, match="pad: mode must be 'constant', 'reflect', 'replicate' or 'circular'"):
        F.pad(row, (1, 1), mode="mirror")


def test_padding_layers_call_pad_with_their_padding():
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    x = X[0]
    for name, args in [("ZeroPad2d", (1,)), ("ConstantPad1d", ((2, 1), 3.5)), ("ConstantPad3d", (1, -2.0)),
                       ("ReflectionPad1d", (2,)), ("ReflectionPad2d", ((1, 2, 3, 0),)), ("ReplicationPad2d", (2,)),
                       ("ReplicationPad1d", ((0, 3),)), ("CircularPad1d", (4,)), ("CircularPad2d", ((1, 2, 3, 4),)),
                       ("ZeroPad1d", ((2, 0),)), ("ReplicationPad3d", (1,)), ("ReflectionPad3d", (1,)),
                       ("CircularPad3d", (1,)), ("ConstantPad2d", (2, 1.0)), ("ZeroPad3d", ((1, 0, 0, 1, 1, 0),))]:
        source = X if name.endswith("3d") else x
        theirs = getattr(torch.nn, name)(*args)(torch.tensor(source))
        ours = getattr(tl.nn, name)(*args)(tl.tensor(source))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=name)
    with pytest.raises(ValueError, match="ReflectionPad2d: padding must be an int or 4 ints"):
        tl.nn.ReflectionPad2d((1, 2))


def test_channel_dropout_drops_whole_channels_and_keeps_the_mean():
    tl.manual_seed(0)
    ones = tl.ones(400, 50, 2, 2)
    y = tF.dropout2d(ones, 0.3).numpy()
    per_channel = y.reshape(400, 50, 4)
    assert np.all(per_channel == per_channel[..., :1])                       # a channel is kept or dropped whole
    assert set(np.unique(y)) == {0.0, np.float32(1 / 0.7)}
    assert abs((y == 0).mean() - 0.3) < 0.01 and abs(y.mean() - 1) < 0.02
    assert tF.dropout1d(tl.ones(3, 4), 0.5).shape == (3, 4)                   # unbatched (C, L)
    assert tF.dropout3d(ones, 0.5, training=False) is ones                   # (C, D, H, W), not training
    layer = tl.nn.Dropout2d(0.5, inplace=True)
    assert layer.eval()(ones) is ones
    z = tF.feature_alpha_dropout(tl.randn(2000, 30, 5, dtype=tl.float64), 0.2, training=True).numpy()
    assert np.all(np.isclose(z.std(-1)[np.isclose(z[..., 0], z[..., 1])], 0))  # dropped channels are constant
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.03
    f = tl.feature_dropout(ones, 0.3, True).numpy().reshape(400, 50, 4)
    assert np.all(f == f[..., :1])
    with pytest.raises(ValueError, match="dropout2d: input \\(3, 4\\) must be \\(N, C, 2 positions\\)"):
        tF.dropout2d(tl.ones(3, 4), 0.5)


def test_softmax2d_is_softmax_over_channels():
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    np.testing.assert_allclose(tl.nn.Softmax2d()(tl.tensor(X)).numpy(),
                               torch.nn.Softmax2d()(torch.tensor(X)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(tl.nn.Softmax2d()(tl.tensor(X[0])).numpy().sum(0), 1, rtol=1e-12)


@pytest.mark.parametrize("affine, track", [(False, False), (True, True)])
def test_instance_norm_matches_pytorch_in_training_and_evaluation(affine, track):
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    theirs = torch.nn.InstanceNorm2d(3, affine=affine, track_running_stats=track, momentum=0.3).double()
    ours = tl.nn.InstanceNorm2d(3, affine=affine, track_running_stats=track, momentum=0.3, dtype=tl.float64)
    if affine:
        weights = {"weight": rng.standard_normal(3), "bias": rng.standard_normal(3)}
        theirs.load_state_dict({**theirs.state_dict(), **{k: torch.tensor(v) for k, v in weights.items()}})
        ours.load_state_dict({**ours.state_dict(), **weights})
    for mode in ("train", "eval"):
        getattr(theirs, mode)()
        getattr(ours, mode)()
        theirs_x, ours_x = torch.tensor(X, requires_grad=True), tl.tensor(X, requires_grad=True)
        t_out, o_out = theirs(theirs_x), ours(ours_x)
        seed = np.linspace(-1, 1, X.size).reshape(X.shape)
        t_out.backward(torch.tensor(seed))
        o_out.backward(tl.tensor(seed))
        np.testing.assert_allclose(o_out.numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-10, atol=1e-12)
        for key, value in theirs.state_dict().items():
            np.testing.assert_allclose(ours.state_dict()[key], value.numpy(), rtol=1e-12, err_msg=key)
    unbatched = tl.nn.InstanceNorm1d(3)(tl.tensor(X[0, :, 0]))
    assert unbatched.shape == (3, 5) and np.allclose(unbatched.numpy().mean(-1), 0)
    assert tl.instance_norm(tl.tensor(X), None, None, None, None, True, 0.1, 1e-5, False).allclose(
        tF.instance_norm(tl.tensor(X)))
    with pytest.raises(ValueError, match="InstanceNorm2d: input of shape \\(2, 3, 4, 5\\) has 3 channels, expected 4"):
        tl.nn.InstanceNorm2d(4)(tl.tensor(X))


def test_instance_norm_gradchecks():
    x = Tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    w, b = Tensor(rng.standard_normal(3), requires_grad=True), Tensor(rng.standard_normal(3), requires_grad=True)
    assert gradcheck(lambda t, w, b: F.instance_norm(t, weight=w, bias=b), x, w, b)


@pytest.mark.parametrize("layer, shape", [("BatchNorm2d", (4, 3, 2, 5)), ("BatchNorm3d", (3, 3, 2, 2, 2))])
def test_batchnorm_2d_and_3d_match_pytorch_with_running_statistics(layer, shape):
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    x = rng.standard_normal(shape)
    theirs, ours = getattr(torch.nn, layer)(3, momentum=None).double(), getattr(tl.nn, layer)(3, momentum=None,
                                                                                               dtype=tl.float64)
    for mode in ("train", "train", "eval"):
        getattr(theirs, mode)()
        getattr(ours, mode)()
        theirs_x, ours_x = torch.tensor(x, requires_grad=True), tl.tensor(x, requires_grad=True)
        t_out, o_out = theirs(theirs_x), ours(ours_x)
        (t_out * t_out).sum().backward()
        (o_out * o_out).sum().backward()
        np.testing.assert_allclose(o_out.numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-9, atol=1e-12)
        for key, value in theirs.state_dict().items():
            np.testing.assert_allclose(ours.state_dict()[key], value.numpy(), rtol=1e-12, err_msg=key)
    with pytest.raises(ValueError, match=f"{layer}: input of shape \\(4, 3\\) must be \\(N, 3, "):
        ours(tl.zeros(4, 3))


@pytest.mark.parametrize("name, call", [
    ("pixel_shuffle", lambda F, x: F.pixel_shuffle(x.reshape(2, 12, 5, 1), 2)),
    ("pixel_unshuffle", lambda F, x: F.pixel_unshuffle(x.reshape(1, 2, 6, 10), 2)),
    ("channel_shuffle", lambda F, x: F.channel_shuffle(x.reshape(2, 6, 10), 3)),
    ("local_response_norm 4d", lambda F, x: F.local_response_norm(x, 3, alpha=0.5, beta=0.6, k=2.0)),
    ("local_response_norm 3d even", lambda F, x: F.local_response_norm(x.reshape(2, 6, 10), 4, alpha=0.9)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_rearrangements_and_local_response_norm_match_pytorch(name, call):
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    x = rng.standard_normal((2, 3, 4, 5))
    theirs_x, ours_x = torch.tensor(x, requires_grad=True), tl.tensor(x, requires_grad=True)
    theirs, ours = call(torch.nn.functional, theirs_x), call(tF, ours_x)
    seed = np.linspace(-1, 1, theirs.numel()).reshape(tuple(theirs.shape))
    theirs.backward(torch.tensor(seed))
    ours.backward(tl.tensor(seed))
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_rearrangement_modules_by_hand_and_their_inverse():
    x = tl.arange(8.0).reshape(1, 4, 1, 2)                      # 4 channels = 1·2², one row of 2 pixels
    up = tl.nn.PixelShuffle(2)(x)
    assert up.shape == (1, 1, 2, 4) and up.tolist() == [[[[0, 2, 1, 3], [4, 6, 5, 7]]]]
    assert tl.nn.PixelUnshuffle(2)(up).tolist() == x.tolist()
    assert tl.nn.ChannelShuffle(2)(tl.arange(4.0).reshape(1, 4, 1)).reshape(-1).tolist() == [0, 2, 1, 3]
    ones = tl.ones(1, 3, 2)                                       # LRN by hand: size 3, the middle channel sees 3
    lrn = tl.nn.LocalResponseNorm(3, alpha=3.0, beta=1.0, k=1.0)(ones).numpy()
    np.testing.assert_allclose(lrn[0, :, 0], [1 / (1 + 2), 1 / (1 + 3), 1 / (1 + 2)])
    assert gradcheck(lambda t: F.local_response_norm(t, 3, alpha=0.3), Tensor(rng.standard_normal((2, 4, 3)),
                                                                              requires_grad=True))
    with pytest.raises(ValueError, match="pixel_shuffle: input \\(1, 3, 2, 2\\) must be \\(\\*, C·r², H, W\\)"):
        tF.pixel_shuffle(tl.zeros(1, 3, 2, 2), 2)
    with pytest.raises(ValueError, match="CrossMapLRN2d: input of shape \\(1, 3, 2\\) must be \\(N, C, H, W\\)"):
        tl.nn.CrossMapLRN2d(3)(ones)
    assert tl.pixel_shuffle(x, 2).tolist() == up.tolist() and tl.channel_shuffle(x, 2).shape == x.shape
