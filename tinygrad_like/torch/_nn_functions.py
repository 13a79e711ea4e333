"""The torch.* forms of torch.nn.functional's ops (`torch.selu(x)`, `torch.dropout(x, p, train)`, ...),
with the argument order of PyTorch's own operators (which is not always F's: torch.dropout's third
argument is `train`), each one call of F's function: one implementation per op.
"""
from __future__ import annotations

from tinygrad_like.dialect import activations as A
from tinygrad_like.dialect.inplace import drawing_from


def dropout(input, p: float, train: bool):
    """torch.dropout(input, p, train): F.dropout."""
    return input.dropout(p, training=train)


def dropout_(input, p: float, train: bool):
    """torch.dropout_(input, p, train): F.dropout written into input."""
    return input._update("dropout_", lambda t: t.dropout(p, training=train))


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, generator=None):
    """torch.rrelu: F.rrelu (the slopes from `generator` when given)."""
    with drawing_from(generator):
        return A.rrelu(input, lower, upper, training)


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, generator=None):
    with drawing_from(generator):
        return A.rrelu_(input, lower, upper, training)


NN_FUNCTIONS = {
    "selu": A.selu, "selu_": A.selu_, "celu": A.celu, "celu_": A.celu_, "threshold": A.threshold,
    "threshold_": A.threshold_, "prelu": A.prelu, "hardshrink": A.hardshrink, "relu_": A.relu_,
    "rrelu": rrelu, "rrelu_": rrelu_, "dropout": dropout, "dropout_": dropout_,
}
