"""nn.RNN, nn.LSTM, nn.GRU and their cells (nn/recurrent.py) against PyTorch: the same weights (PyTorch's
state_dict loaded as it is), the same float64 inputs and initial states: outputs, last states and every gradient
equal (skipped without PyTorch); initial weights equal under the same seed; one step checked against its
equations in numpy; gradchecks; dropout between layers only while training; bad shapes refused.
"""
import numpy as np
import pytest

import nn as engine_nn
import tinygrad_like.torch as tl
from tinygrad_like import Tensor, gradcheck

rng = np.random.default_rng(7)
L, N, D_IN, H = 5, 2, 3, 4


def run(module, x, hx, to):
    xs = to(x, requires_grad=True)
    if hx is None:
        state = None
    elif isinstance(hx, tuple):
        state = tuple(to(h, requires_grad=True) for h in hx)
    else:
        state = to(hx, requires_grad=True)
    out, last = module(xs, state)
    lasts = last if isinstance(last, tuple) else (last,)
    loss = (out * to(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))).sum()
    for i, h in enumerate(lasts):
        loss = loss + (h * (i + 2)).sum()
    loss.backward()
    grads = [xs.grad.numpy()] + ([] if state is None else [s.grad.numpy() for s in (state if isinstance(state, tuple)
                                                                                  else (state,))])
    return [out.detach().numpy()] + [h.detach().numpy() for h in lasts], grads, {
        n: p.grad.numpy() for n, p in module.named_parameters()}


CASES = [
    ("RNN", dict(), (L, N, D_IN), (1, N, H)),
    ("RNN", dict(nonlinearity="relu", num_layers=2, bias=False), (L, N, D_IN), None),
    ("LSTM", dict(num_layers=2, bidirectional=True), (L, N, D_IN), ((4, N, H), (4, N, H))),
    ("LSTM", dict(proj_size=2, batch_first=True), (N, L, D_IN), ((1, N, 2), (1, N, H))),
    ("LSTM", dict(), (L, D_IN), None),
    ("GRU", dict(bidirectional=True, batch_first=True), (N, L, D_IN), (2, N, H)),
    ("GRU", dict(num_layers=3), (L, D_IN), (3, H)),
]


@pytest.mark.parametrize("mode, options, shape, state", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_recurrent_layers_match_pytorch(mode, options, shape, state):
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    torch.manual_seed(0)
    theirs = getattr(torch.nn, mode)(D_IN, H, **options).double()
    ours = getattr(tl.nn, mode)(D_IN, H, **options, dtype=tl.float64)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict(theirs.state_dict())
    x = rng.standard_normal(shape)
    hx = None if state is None else tuple(rng.standard_normal(s) for s in state) if mode == "LSTM" else \
        rng.standard_normal(state)
    t_vals, t_grads, t_params = run(theirs, x, hx, torch.tensor)
    o_vals, o_grads, o_params = run(ours, x, hx, tl.tensor)
    for o, t in zip(o_vals + o_grads, t_vals + t_grads):
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-13)
    for name, grad in t_params.items():
        np.testing.assert_allclose(o_params[name], grad, rtol=1e-10, atol=1e-13, err_msg=name)


@pytest.mark.parametrize("cell, state", [("RNNCell", (N, H)), ("LSTMCell", ((N, H), (N, H))), ("GRUCell", (N, H)),
                                         ("GRUCell", None), ("LSTMCell", None)])
def test_cells_match_pytorch(cell, state):
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    torch.manual_seed(0)
    theirs = getattr(torch.nn, cell)(D_IN, H)
    tl.manual_seed(0)
    ours = getattr(tl.nn, cell)(D_IN, H)
    for key, value in theirs.state_dict().items():                  # the same initial weights under the same seed
        np.testing.assert_array_equal(ours.state_dict()[key], value.numpy(), err_msg=key)
    theirs, ours = theirs.double(), ours.double()
    x = rng.standard_normal((N, D_IN))
    hx = None if state is None else tuple(rng.standard_normal(s) for s in state) if cell == "LSTMCell" else \
        rng.standard_normal(state)
    for to, module in ((torch.tensor, theirs), (tl.tensor, ours)):
        args = [to(x)] + ([] if hx is None else [tuple(to(h) for h in hx) if cell == "LSTMCell" else to(hx)])
        out = module(*args)
        out = out if isinstance(out, tuple) else (out,)
        if module is theirs:
            expected = [o.detach().numpy() for o in out]
        else:
            for o, e in zip(out, expected):
                np.testing.assert_allclose(o.numpy(), e, rtol=1e-12)
    unbatched = ours(tl.tensor(x[0]))
    assert (unbatched[0] if cell == "LSTMCell" else unbatched).shape == (H,)


def test_initial_weights_equal_pytorchs_under_the_same_seed():
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    torch.manual_seed(3)
    theirs = torch.nn.LSTM(D_IN, H, num_layers=2, bidirectional=True).state_dict()
    tl.manual_seed(3)
    ours = tl.nn.LSTM(D_IN, H, num_layers=2, bidirectional=True).state_dict()
    for key, value in theirs.items():
        np.testing.assert_array_equal(ours[key], value.numpy(), err_msg=key)


def test_one_lstm_step_is_its_equations():
    cell = engine_nn.LSTMCell(D_IN, H, dtype="float64")
    x, h, c = rng.standard_normal((N, D_IN)), rng.standard_normal((N, H)), rng.standard_normal((N, H))
    w_ih, w_hh, b_ih, b_hh = (p.numpy() for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh))
    gates = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh
    i, f, g, o = np.split(gates, 4, axis=1)
    sig = 1 / (1 + np.exp(-np.stack([i, f, o])))
    c_new = sig[1] * c + sig[0] * np.tanh(g)
    h_new, c_out = cell(Tensor(x), (Tensor(h), Tensor(c)))
    np.testing.assert_allclose(c_out.numpy(), c_new, rtol=1e-12)
    np.testing.assert_allclose(h_new.numpy(), sig[2] * np.tanh(c_new), rtol=1e-12)


def test_recurrent_layers_gradcheck():
    gru = engine_nn.GRU(2, 3, bidirectional=True, dtype="float64")
    x = Tensor(rng.standard_normal((3, 1, 2)), requires_grad=True)
    assert gradcheck(lambda t, *ps: gru(t)[0], x, *gru.parameters())
    lstm = engine_nn.LSTM(2, 3, proj_size=1, dtype="float64")
    assert gradcheck(lambda t, *ps: lstm(t)[1][1], x, *lstm.parameters())


def test_dropout_between_layers_only_while_training_and_errors():
    layer = tl.nn.GRU(D_IN, H, num_layers=2, dropout=0.5)
    x = tl.randn(L, N, D_IN)
    assert not np.allclose(layer(x)[0].numpy(), layer(x)[0].numpy())
    layer.eval()
    assert np.array_equal(layer(x)[0].numpy(), layer(x)[0].numpy())
    with pytest.raises(ValueError, match="LSTM: input of shape \\(5, 2, 7\\) must be \\(L, N, 3\\)"):
        tl.nn.LSTM(D_IN, H)(tl.zeros(L, N, 7))
    with pytest.raises(ValueError, match="GRU: h0 of shape \\(2, 2, 4\\) must be \\(1, 2, 4\\)"):
        tl.nn.GRU(D_IN, H)(tl.zeros(L, N, D_IN), tl.zeros(2, N, H))
    with pytest.raises(ValueError, match="proj_size is for an LSTM"):
        engine_nn.RNNBase("GRU", D_IN, H, proj_size=2)
    with pytest.raises(TypeError, match="packed sequences \\(torch.nn.utils.rnn\\) are not provided"):
        tl.nn.LSTM(D_IN, H)([1, 2])
    assert repr(tl.nn.LSTM(D_IN, H, num_layers=2, batch_first=True)) == "LSTM(3, 4, num_layers=2, batch_first=True)"
