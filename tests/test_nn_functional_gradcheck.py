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
from tinygrad_like import Tensor, gradcheck, gradgradcheck
from tinygrad_like.dialect.losses import weighted_cross_entropy, weighted_nll_loss

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

# ---------------------------------------------------------------- losses (targets fixed arrays, inputs differentiable)
SIGNS = np.array([[1.0, -1, 1, 1], [-1, -1, 1, -1], [1, 1, -1, 1]])
LABELS = np.array([2, 0, 3])
MULTILABEL = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 0, 0, 0]])
W4 = np.array([0.5, 1.0, 2.0, 0.3])


def np_multi_margin(x, y, p, margin, w=None):
    total = np.zeros(len(y))
    for n, cls in enumerate(y):
        for i in range(x.shape[1]):
            if i != cls:
                total[n] += max(0.0, margin - x[n, cls] + x[n, i]) ** p * (1 if w is None else w[cls])
    return total / x.shape[1]


def np_multilabel_margin(x, y):
    total = np.zeros(len(y))
    for n, row in enumerate(y):
        targets = list(row[:list(row).index(-1)] if -1 in row else row)
        for j in targets:
            for i in range(x.shape[1]):
                if i not in targets:
                    total[n] += max(0.0, 1 - x[n, j] + x[n, i])
    return total / x.shape[1]


def np_log_softmax(x, axis):
    return x - np.log(np.exp(x).sum(axis, keepdims=True))


case("l1_loss", [(3, 4), (3, 4)], lambda x, y: F.l1_loss(x, y), lambda x, y: np.abs(x - y).mean(), kind="distinct")
case("l1_loss", [(3, 4), (3, 4)], lambda x, w: F.l1_loss(x, Tensor(SIGNS * 0.3), reduction="sum", weight=w),
     lambda x, w: (np.abs(x - SIGNS * 0.3) * w).sum(), kind="distinct", label="weight")
case("smooth_l1_loss", [(3, 4), (3, 4)], lambda x, y: F.smooth_l1_loss(x, y, beta=0.35, reduction="none"),
     lambda x, y: np.where(np.abs(x - y) < 0.35, 0.5 * (x - y) ** 2 / 0.35, np.abs(x - y) - 0.175), kind="distinct")
case("huber_loss", [(3, 4), (3, 4)], lambda x, y: F.huber_loss(x, y, delta=0.35),
     lambda x, y: np.where(np.abs(x - y) < 0.35, 0.5 * (x - y) ** 2, 0.35 * (np.abs(x - y) - 0.175)).mean(),
     kind="distinct")
case("kl_div", [(3, 4), (3, 4)], lambda x, t: F.kl_div(x.log_softmax(1), t.softmax(1), reduction="batchmean"),
     lambda x, t: (np.exp(np_log_softmax(t, 1)) * (np_log_softmax(t, 1) - np_log_softmax(x, 1))).sum() / 3)
case("kl_div", [(3, 4), (3, 4)], lambda x, t: F.kl_div(x, t, reduction="sum", log_target=True),
     lambda x, t: (np.exp(t) * (t - x)).sum(), label="log_target")
case("gaussian_nll_loss", [(3, 4), (3, 4), (3, 4)], lambda x, y, v: F.gaussian_nll_loss(x, y, v, full=True),
     lambda x, y, v: (0.5 * (np.log(v) + (x - y) ** 2 / v) + 0.5 * np.log(2 * np.pi)).mean(), kind="pos")
case("gaussian_nll_loss", [(3, 4), (3, 4), (3,)], lambda x, y, v: F.gaussian_nll_loss(x, y, v, reduction="sum"),
     lambda x, y, v: (0.5 * (np.log(v[:, None]) + (x - y) ** 2 / v[:, None])).sum(), kind="pos", label="row-var")
case("poisson_nll_loss", [(3, 4), (3, 4)], lambda x, t: F.poisson_nll_loss(x, t),
     lambda x, t: (np.exp(x) - t * x).mean())
case("poisson_nll_loss", [(3, 4), (3, 4)], lambda x, t: F.poisson_nll_loss(x, t * 2, log_input=False, full=True),
     lambda x, t: (x - 2 * t * np.log(x + 1e-8) + np.where(2 * t > 1, 2 * t * np.log(2 * t) - 2 * t
                                                             + 0.5 * np.log(2 * np.pi * 2 * t), 0)).mean(),
     kind="pos", label="rate-full")
case("margin_ranking_loss", [(4,), (4,)], lambda a, b: F.margin_ranking_loss(a, b, SIGNS[0], margin=0.02),
     lambda a, b: np.maximum(0, -SIGNS[0] * (a - b) + 0.02).mean(), kind="distinct")
case("hinge_embedding_loss", [(3, 4)], lambda x: F.hinge_embedding_loss(x * 3, SIGNS, margin=0.5, reduction="sum"),
     lambda x: np.where(SIGNS == 1, 3 * x, np.maximum(0, 0.5 - 3 * x)).sum(), kind="distinct")
def np_cos_eps(a, b):
    return (a * b).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12))


case("cosine_embedding_loss", [(3, 4), (3, 4)], lambda a, b: F.cosine_embedding_loss(a, b, SIGNS[:, 0], margin=-0.9),
     lambda a, b: np.where(SIGNS[:, 0] == 1, 1 - np_cos_eps(a, b), np.maximum(0, np_cos_eps(a, b) + 0.9)).mean())
case("soft_margin_loss", [(3, 4)], lambda x: F.soft_margin_loss(x, SIGNS),
     lambda x: np.log1p(np.exp(-SIGNS * x)).mean())
case("multilabel_soft_margin_loss", [(3, 4)], lambda x: F.multilabel_soft_margin_loss(x, (SIGNS + 1) / 2, weight=W4),
     lambda x: (-((SIGNS + 1) / 2 * np.log(np_sigmoid(x)) + (1 - SIGNS) / 2 * np.log(np_sigmoid(-x))) * W4)
     .sum(1).mean() / 4)
case("multi_margin_loss", [(3, 4)], lambda x: F.multi_margin_loss(x, LABELS, margin=0.25, reduction="none"),
     lambda x: np_multi_margin(x, LABELS, 1, 0.25), kind="distinct")
case("multi_margin_loss", [(3, 4)], lambda x: F.multi_margin_loss(x, LABELS, p=2, weight=W4),
     lambda x: np_multi_margin(x, LABELS, 2, 1.0, W4).mean(), kind="distinct", label="p2-weight")
case("multilabel_margin_loss", [(3, 4)], lambda x: F.multilabel_margin_loss(x * 0.3, MULTILABEL, reduction="none"),
     lambda x: np_multilabel_margin(x * 0.3, MULTILABEL), kind="distinct")
case("triplet_margin_loss", [(3, 4), (3, 4), (3, 4)], lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=3.0),
     lambda a, p, n: np.maximum(0, 3 + np.linalg.norm(a - p + 1e-6, axis=1) - np.linalg.norm(a - n + 1e-6, axis=1))
     .mean())
case("nll_loss", [(3, 4)], lambda x: weighted_nll_loss(x, LABELS, W4),
     lambda x: -(x[np.arange(3), LABELS] * W4[LABELS]).sum() / W4[LABELS].sum(), label="weight")
case("cross_entropy", [(3, 4)], lambda x: weighted_cross_entropy(x, LABELS, W4, label_smoothing=0.2, reduction="sum"),
     lambda x: (0.8 * -(np_log_softmax(x, 1)[np.arange(3), LABELS] * W4[LABELS])
                + 0.05 * -(np_log_softmax(x, 1) * W4).sum(1)).sum(), label="weight-smoothing")

# ---------------------------------------------------------------- distances
case("cosine_similarity", [(3, 4), (3, 4)], lambda a, b: F.cosine_similarity(a, b),
     lambda a, b: (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1))
case("pairwise_distance", [(3, 4), (3, 4)], lambda a, b: F.pairwise_distance(a, b, p=3),
     lambda a, b: (np.abs(a - b + 1e-6) ** 3).sum(1) ** (1 / 3))
case("pdist", [(4, 3)], lambda x: F.pdist(x),
     lambda x: np.array([np.linalg.norm(x[i] - x[j]) for i in range(4) for j in range(i + 1, 4)]))


# ---------------------------------------------------------------- layers
def np_standardise(x, axes, eps):
    centred = x - x.mean(axes, keepdims=True)
    return centred / np.sqrt((centred ** 2).mean(axes, keepdims=True) + eps)


BAG_IDS = np.array([1, 2, 4, 4, 3, 2])
BAG_STARTS = [0, 2, 2, 5]                                    # bags [1, 2], [], [4, 4, 3], [2]


def np_bags(w, reduce):
    bags = [BAG_IDS[a:b] for a, b in zip(BAG_STARTS, BAG_STARTS[1:] + [len(BAG_IDS)])]
    return np.stack([reduce(w[b]) if len(b) else np.zeros(w.shape[1]) for b in bags])


case("group_norm", [(2, 4, 3), (4,), (4,)], lambda x, w, b: F.group_norm(x, 2, w, b),
     lambda x, w, b: np_standardise(x.reshape(2, 2, 6), 2, 1e-5).reshape(2, 4, 3) * w[:, None] + b[:, None])
case("batch_norm", [(4, 3, 2), (3,), (3,)], lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     lambda x, w, b: np_standardise(x, (0, 2), 1e-5) * w[:, None] + b[:, None], label="training")
case("layer_norm", [(2, 3, 4), (3, 4), (3, 4)], lambda x, w, b: F.layer_norm(x, (3, 4), w, b),
     lambda x, w, b: np_standardise(x, (1, 2), 1e-5) * w + b, label="2-dims")
case("rms_norm", [(2, 3, 4), (3, 4)], lambda x, w: F.rms_norm(x, (3, 4), w, eps=1e-6),
     lambda x, w: x / np.sqrt((x ** 2).mean((1, 2), keepdims=True) + 1e-6) * w)
case("bilinear", [(2, 3), (2, 4), (5, 3, 4), (5,)], lambda a, b, w, c: F.bilinear(a, b, w, c),
     lambda a, b, w, c: np.einsum("ni,kij,nj->nk", a, w, b) + c)
case("embedding_bag", [(5, 3)], lambda w: F.embedding_bag(BAG_IDS, w, BAG_STARTS, mode="mean"),
     lambda w: np_bags(w, lambda r: r.mean(0)), label="mean")
case("embedding_bag", [(5, 3)], lambda w: F.embedding_bag(BAG_IDS, w, BAG_STARTS, mode="max"),
     lambda w: np_bags(w, lambda r: r.max(0)), kind="distinct", label="max")
# (embedding's padding_idx and scale_grad_by_freq change the gradient on purpose: checked against PyTorch instead)
case("linear_cross_entropy", [(3, 4), (5, 4), (5,)],
     lambda x, w, b: F.linear_cross_entropy(x, w, LABELS, linear_bias=b),
     lambda x, w, b: -np_log_softmax(x @ w.T + b, 1)[np.arange(3), LABELS].mean())


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
