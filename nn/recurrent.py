"""Recurrent layers: the Elman RNN, the LSTM (Hochreiter & Schmidhuber 1997) and the GRU (Cho et al. 2014),
one step each written as its equations, and the layers that run the steps over a sequence, stacked and in
both directions, with PyTorch's parameter names and layout (`weight_ih_l0`, `weight_hh_l0_reverse`, ...;
the gates stacked in PyTorch's order), so a PyTorch state_dict loads as it is.

    RNN:  h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)                    (or relu)
    LSTM: i, f, g, o = σ, σ, tanh, σ of the four quarters of x W_ihᵀ + b_ih + h W_hhᵀ + b_hh
          c' = f·c + i·g;  h' = o·tanh(c')                               (then h' W_hrᵀ with proj_size)
    GRU:  r, z = σ of the first two thirds of (x W_ihᵀ + b_ih) + (h W_hhᵀ + b_hh)
          n = tanh(x-third + r·h-third);  h' = (1 − z)·n + z·h

Every weight starts uniform in ±1/√hidden_size, drawn in the parameters' order, as PyTorch's reset_parameters.
"""
from __future__ import annotations

import math

import numpy as np

from nn.module import Module
from tinygrad_like import Tensor


def rnn_step(x, h, w_ih, w_hh, b_ih, b_hh, nonlinearity: str = "tanh"):
    pre = x.linear(w_ih, b_ih) + h.linear(w_hh, b_hh)
    return pre.tanh() if nonlinearity == "tanh" else pre.relu()


def lstm_step(x, state, w_ih, w_hh, b_ih, b_hh, w_hr=None):
    h, c = state
    i, f, g, o = (x.linear(w_ih, b_ih) + h.linear(w_hh, b_hh)).chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    return (h if w_hr is None else h.linear(w_hr)), c


def gru_step(x, h, w_ih, w_hh, b_ih, b_hh):
    x_r, x_z, x_n = x.linear(w_ih, b_ih).chunk(3, -1)
    h_r, h_z, h_n = h.linear(w_hh, b_hh).chunk(3, -1)
    r, z = (x_r + h_r).sigmoid(), (x_z + h_z).sigmoid()
    n = (x_n + r * h_n).tanh()
    return (1 - z) * n + z * h


_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _uniform(shape, bound: float, dtype) -> Tensor:
    return Tensor.uniform(*shape, low=-bound, high=bound, dtype=dtype, requires_grad=True)


class RNNBase(Module):
    """The recurrent layers' common part: the parameters of num_layers layers in one or two directions, and
    the loop over time. mode: "RNN_TANH", "RNN_RELU", "LSTM" or "GRU". input (L, N, input_size), or (N, L, ·)
    with batch_first, or unbatched (L, input_size); output (L, N, D·H) with D = 2 when bidirectional, and the
    last state of every layer and direction (D·num_layers, N, H) (for the LSTM, (h, c))."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 dtype="float32"):
        if mode not in _GATES:
            raise ValueError(f"RNNBase: mode must be one of {sorted(_GATES)}, got {mode!r}")
        if not 0 <= dropout <= 1:
            raise ValueError(f"{mode}: dropout must be in [0, 1], got {dropout}")
        if proj_size and (mode != "LSTM" or not 0 < proj_size < hidden_size):
            raise ValueError(f"{mode}: proj_size is for an LSTM, between 0 and hidden_size ({hidden_size}), "
                             f"got {proj_size}")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout, self.bidirectional = bias, batch_first, dropout, bidirectional
        self.proj_size = proj_size
        bound, gates = 1 / math.sqrt(hidden_size), _GATES[mode] * hidden_size
        out = proj_size or hidden_size
        for layer in range(num_layers):
            for suffix in ("", "_reverse")[:2 if bidirectional else 1]:
                width = input_size if layer == 0 else out * (2 if bidirectional else 1)
                name = f"l{layer}{suffix}"
                setattr(self, f"weight_ih_{name}", _uniform((gates, width), bound, dtype))
                setattr(self, f"weight_hh_{name}", _uniform((gates, out), bound, dtype))
                if bias:
                    setattr(self, f"bias_ih_{name}", _uniform((gates,), bound, dtype))
                    setattr(self, f"bias_hh_{name}", _uniform((gates,), bound, dtype))
                if proj_size:
                    setattr(self, f"weight_hr_{name}", _uniform((proj_size, hidden_size), bound, dtype))

    def _weights(self, name: str) -> tuple:
        w = [getattr(self, f"{kind}_{name}", None) for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        return (*w, getattr(self, f"weight_hr_{name}", None)) if self.mode == "LSTM" else tuple(w)

    def _step(self, x, state, weights):
        if self.mode == "LSTM":
            return lstm_step(x, state, *weights)
        if self.mode == "GRU":
            return gru_step(x, state, *weights)
        return rnn_step(x, state, *weights, nonlinearity="tanh" if self.mode == "RNN_TANH" else "relu")

    def forward(self, input: Tensor, hx=None):
        if not isinstance(input, Tensor):
            raise TypeError(f"{self.mode}: input must be a Tensor (L, N, {self.input_size}); packed sequences "
                            "(torch.nn.utils.rnn) are not provided: pad the batch and pass the lengths yourself")
        unbatched = input.ndim == 2
        if input.ndim not in (2, 3) or input.shape[-1] != self.input_size:
            raise ValueError(f"{self.mode}: input of shape {input.shape} must be (L, N, {self.input_size}) "
                             f"(batch_first: (N, L, {self.input_size})) or (L, {self.input_size})")
        x = input.unsqueeze(1) if unbatched else input.transpose(0, 1) if self.batch_first else input
        steps, batch = x.shape[:2]
        directions = 2 if self.bidirectional else 1
        states = self._initial_states(hx, batch, directions, unbatched, x)
        last_h, last_c = [], []
        for layer in range(self.num_layers):
            outputs = []
            for d in range(directions):
                index = layer * directions + d
                state = (states[0][index], states[1][index]) if self.mode == "LSTM" else states[index]
                weights = self._weights(f"l{layer}" + ("_reverse" if d else ""))
                seq = []
                for t in (range(steps) if d == 0 else range(steps - 1, -1, -1)):
                    state = self._step(x[t], state, weights)
                    seq.append(state[0] if self.mode == "LSTM" else state)
                outputs.append(Tensor.stack(*(seq if d == 0 else seq[::-1]), dim=0))      # (L, N, H)
                last_h.append(state[0] if self.mode == "LSTM" else state)
                if self.mode == "LSTM":
                    last_c.append(state[1])
            x = outputs[0] if directions == 1 else Tensor.cat(*outputs, dim=-1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = x.dropout(self.dropout)
        h_n = Tensor.stack(*last_h, dim=0)
        out = x.squeeze(1) if unbatched else x.transpose(0, 1) if self.batch_first else x
        if unbatched:
            h_n = h_n.squeeze(1)
        if self.mode == "LSTM":
            c_n = Tensor.stack(*last_c, dim=0)
            return out, (h_n, c_n.squeeze(1) if unbatched else c_n)
        return out, h_n

    def _initial_states(self, hx, batch: int, directions: int, unbatched: bool, like: Tensor):
        """h0 (and c0) of every layer and direction, (D·num_layers, N, H); zeros when hx is None."""
        layers = directions * self.num_layers
        out = self.proj_size or self.hidden_size

        def zeros(size):
            return like._result(np.zeros((layers, batch, size), dtype=like.dtype), None)

        def given(t, size, what):
            t = t.unsqueeze(1) if unbatched else t
            if t.shape != (layers, batch, size):
                raise ValueError(f"{self.mode}: {what} of shape {t.shape} must be ({layers}, {batch}, {size}) "
                                 "(num_layers·directions, N, hidden)")
            return t

        if self.mode == "LSTM":
            if hx is None:
                return zeros(out), zeros(self.hidden_size)
            return given(hx[0], out, "h0"), given(hx[1], self.hidden_size, "c0")
        return zeros(out) if hx is None else given(hx, out, "h0")

    def extra_repr(self) -> str:
        options = dict(num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False, proj_size=0)
        changed = [f"{k}={getattr(self, k)}" for k, default in options.items() if getattr(self, k) != default]
        return ", ".join([f"{self.input_size}, {self.hidden_size}", *changed])


class RNN(RNNBase):
    """The Elman RNN, tanh (or nonlinearity="relu")."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 dtype="float32"):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """The LSTM; forward(input, (h0, c0)) -> (output, (h_n, c_n))."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 dtype="float32"):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, dtype=dtype)


class GRU(RNNBase):
    """The GRU."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, dtype="float32"):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         dtype=dtype)


class RNNCellBase(Module):
    """One step as a layer: weight_ih (gates·H, input_size), weight_hh (gates·H, H), bias_ih, bias_hh."""

    gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, dtype="float32"):
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        bound, size = 1 / math.sqrt(hidden_size), self.gates * hidden_size
        self.weight_ih = _uniform((size, input_size), bound, dtype)
        self.weight_hh = _uniform((size, hidden_size), bound, dtype)
        self.bias_ih = _uniform((size,), bound, dtype) if bias else None
        self.bias_hh = _uniform((size,), bound, dtype) if bias else None

    def _prepare(self, input: Tensor, hx):
        """input (N, input_size) or (input_size,), and the state(s) with a batch dimension (zeros when None)."""
        if input.ndim not in (1, 2) or input.shape[-1] != self.input_size:
            raise ValueError(f"{type(self).__name__}: input of shape {input.shape} must be (N, {self.input_size}) "
                             f"or ({self.input_size},)")
        x = input.unsqueeze(0) if input.ndim == 1 else input
        if hx is None:
            return x, x._result(np.zeros((x.shape[0], self.hidden_size), dtype=x.dtype), None)
        return x, hx.unsqueeze(0) if input.ndim == 1 else hx

    def _weights(self) -> tuple:
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh) (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 dtype="float32"):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__(input_size, hidden_size, bias, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx=None) -> Tensor:
        x, h = self._prepare(input, hx)
        h = rnn_step(x, h, *self._weights(), nonlinearity=self.nonlinearity)
        return h.squeeze(0) if input.ndim == 1 else h


class LSTMCell(RNNCellBase):
    """One LSTM step: forward(input, (h, c)) -> (h', c')."""

    gates = 4

    def forward(self, input: Tensor, hx=None):
        x, h = self._prepare(input, None if hx is None else hx[0])
        c = h * 0 if hx is None else (hx[1].unsqueeze(0) if input.ndim == 1 else hx[1])
        h, c = lstm_step(x, (h, c), *self._weights())
        return (h.squeeze(0), c.squeeze(0)) if input.ndim == 1 else (h, c)


class GRUCell(RNNCellBase):
    """One GRU step."""

    gates = 3

    def forward(self, input: Tensor, hx=None) -> Tensor:
        x, h = self._prepare(input, hx)
        h = gru_step(x, h, *self._weights())
        return h.squeeze(0) if input.ndim == 1 else h
