"""torch.nn.functional's activations, losses and layers added for issue 26, in one table like
tests/test_api_gradcheck.py: the forward value against an independent numpy reference in float64, then
gradcheck, gradgradcheck, and a finite gradient of each input's shape from `.sum().backward()`.

Rows are `case(op, shapes, fn, ref, kind)`; the machinery (input kinds, checks) is tests/test_ops_gradcheck.py's.
References use numpy and math only, never engine code. Inputs of kinked functions are "distinct" (away from
the kinks) or scaled so every branch is hit.
"""

import numpy as np
import pytest

import tinygrad_like.functional as F
from test_ops_gradcheck import (
    check_every_input_gets_a_finite_gradient_of_its_shape,
    check_forward_matches_numpy,
    inputs_for,
)
from tinygrad_like import gradcheck, gradgradcheck

CASES = []


def case(op, shapes, fn, ref, kind="normal", label=""):
    CASES.append(pytest.param(op, shapes, fn, ref, kind, id=f"{op}{':' + label if label else ''}{shapes}"))


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_softplus(x):
    return np.logaddexp(0.0, x)


SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

# ---------------------------------------------------------------- activations
case("celu", [(3, 4)], lambda x: F.celu(x * 3, 0.7), lambda x: np.where(x > 0, 3 * x, 0.7 * np.expm1(3 * x / 0.7)),
     kind="distinct")
case("selu", [(3, 4)], lambda x: F.selu(x * 3),
     lambda x: SELU_SCALE * np.where(x > 0, 3 * x, SELU_ALPHA * np.expm1(3 * x)), kind="distinct")
case("glu", [(3, 4)], lambda x: F.glu(x), lambda x: x[:, :2] * np_sigmoid(x[:, 2:]))
case("glu", [(4, 3)], lambda x: F.glu(x, dim=0), lambda x: x[:2] * np_sigmoid(x[2:]), label="dim0")
case("hardshrink", [(3, 4)], lambda x: F.hardshrink(x * 3, 0.5), lambda x: np.where(np.abs(3 * x) > 0.5, 3 * x, 0),
     kind="distinct")
case("softshrink", [(3, 4)], lambda x: F.softshrink(x * 3, 0.5),
     lambda x: np.sign(3 * x) * np.maximum(np.abs(3 * x) - 0.5, 0), kind="distinct")
case("hardsigmoid", [(3, 4)], lambda x: F.hardsigmoid(x * 8), lambda x: np.clip(8 * x / 6 + 0.5, 0, 1), kind="distinct")
case("hardswish", [(3, 4)], lambda x: F.hardswish(x * 8), lambda x: 8 * x * np.clip(8 * x + 3, 0, 6) / 6,
     kind="distinct")
case("hardtanh", [(3, 4)], lambda x: F.hardtanh(x * 3, -0.5, 0.7), lambda x: np.clip(3 * x, -0.5, 0.7), kind="distinct")
case("relu6", [(3, 4)], lambda x: F.relu6(x * 20), lambda x: np.clip(20 * x, 0, 6), kind="distinct")
case("logsigmoid", [(3, 4)], lambda x: F.logsigmoid(x * 5), lambda x: -np_softplus(-5 * x))
case("mish", [(3, 4)], lambda x: F.mish(x * 3), lambda x: 3 * x * np.tanh(np_softplus(3 * x)))
case("softsign", [(3, 4)], lambda x: F.softsign(x * 3), lambda x: 3 * x / (1 + np.abs(3 * x)), kind="distinct")
case("tanhshrink", [(3, 4)], lambda x: F.tanhshrink(x), lambda x: x - np.tanh(x))
case("threshold", [(3, 4)], lambda x: F.threshold(x, 0.2, -3.0), lambda x: np.where(x > 0.2, x, -3.0), kind="distinct")
case("softmin", [(3, 4)], lambda x: F.softmin(x, dim=1),
     lambda x: np.exp(-x) / np.exp(-x).sum(1, keepdims=True))
case("prelu", [(2, 3, 4), (3,)], lambda x, w: F.prelu(x, w), lambda x, w: np.where(x > 0, x, w[:, None] * x),
     kind="distinct")
case("prelu", [(2, 3), (1,)], lambda x, w: F.prelu(x, w), lambda x, w: np.where(x > 0, x, w * x), kind="distinct",
     label="one-slope")
case("rrelu", [(3, 4)], lambda x: F.rrelu(x, 0.1, 0.3), lambda x: np.where(x > 0, x, 0.2 * x), kind="distinct",
     label="eval")


@pytest.mark.parametrize("op, shapes, fn, ref, kind", CASES)
def test_forward_matches_numpy(op, shapes, fn, ref, kind):
    check_forward_matches_numpy(shapes, fn, ref, kind)


@pytest.mark.parametrize("op, shapes, fn, ref, kind", CASES)
def test_gradcheck(op, shapes, fn, ref, kind):
    _, tensors = inputs_for(shapes, kind)
    assert gradcheck(fn, *tensors)


@pytest.mark.parametrize("op, shapes, fn, ref, kind", CASES)
def test_gradgradcheck(op, shapes, fn, ref, kind):
    _, tensors = inputs_for(shapes, kind)
    assert gradgradcheck(fn, *tensors)


@pytest.mark.parametrize("op, shapes, fn, ref, kind", CASES)
def test_backward_gives_every_input_a_finite_gradient_of_its_shape(op, shapes, fn, ref, kind):
    check_every_input_gets_a_finite_gradient_of_its_shape(shapes, fn, kind)
